"""What the MCP tests share: coil --mcp as a client on the wire sees it
(JSON-RPC 2.0, one message a line), and the text of a tool's result."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil  # noqa: E402


class Mcp(Coil):
    def __init__(self, *args, **kw):
        super().__init__(argv=[COIL, "--mcp", *args], **kw)

    def send_msg(self, msg):
        """Write one message, "jsonrpc" added."""
        self.send_raw(json.dumps(dict(msg, jsonrpc="2.0")).encode() + b"\n")

    def rpc(self, method, params=None, rid=None, timeout=60):
        """A request, and its response (other lines go to .events)."""
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        msg = {"id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_msg(msg)
        return self.response(rid, timeout)

    def note(self, method, params=None):
        msg = {"method": method}
        if params is not None:
            msg["params"] = params
        self.send_msg(msg)

    def tool(self, name, args=None, meta=None, rid=None):
        p = {"name": name, "arguments": args or {}}
        if meta:
            p["_meta"] = meta
        return self.rpc("tools/call", p, rid)

    def call(self, rid, code, progress=None):
        """run_python with code, sent without waiting for its answer."""
        params = {"name": "run_python", "arguments": {"code": code}}
        if progress is not None:
            params["_meta"] = {"progressToken": progress}
        self.send_msg({"id": rid, "method": "tools/call", "params": params})

    def until(self, pred):
        """Lines up to the first pred holds for; the others in .events."""
        while True:
            msg = self.line()
            if pred(msg):
                return msg
            self.events.append(msg)


def text(r):
    """The text of a tool's result."""
    return "".join(c.get("text", "") for c in
                   (r.get("result") or {}).get("content", [])
                   if c.get("type") == "text")
