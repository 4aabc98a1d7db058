"""What the MCP tests share: coil --mcp as a client on the wire sees it
(JSON-RPC 2.0, one message a line), the text of a tool's result, and
the official SDK clients installed for the scripts that drive coil with
them (sdk.py, branches.py)."""
import fcntl
import json
import os
import subprocess
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


HERE = os.path.dirname(os.path.abspath(__file__))


def node_major():
    """Node.js's major version, or None without a node."""
    try:
        out = subprocess.run(["node", "--version"], capture_output=True,
                             text=True, timeout=30).stdout
        return int(out.strip().lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def install(src=HERE, into="mcp-node"):
    """The build tree's copy of the SDKs (npm ci from src's
    package-lock.json, tests/mcp's by default, once for all the scripts,
    under a lock, into the build tree's tests/INTO) with src's .mjs
    clients beside them; None and why, if npm failed."""
    tests = os.path.dirname(os.path.dirname(os.environ.get(
        "TEST_WORKDIR", os.path.join(HERE, "..", "work", "x"))))
    d = os.path.join(tests, into)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, ".lock"), "w") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        want = open(os.path.join(src, "package-lock.json")).read()
        have = os.path.join(d, "package-lock.json")
        stamp = os.path.join(d, "node_modules", ".coil-installed")
        if not (os.path.exists(stamp) and os.path.exists(have) and
                open(have).read() == want):
            for f in ("package.json", "package-lock.json"):
                _copy(f, d, src)
            r = subprocess.run(["npm", "ci", "--no-audit", "--no-fund",
                                "--loglevel=error"], cwd=d,
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                return None, "npm ci failed: " + r.stderr[-2000:]
            open(stamp, "w").close()
        for f in os.listdir(src):
            if f.endswith(".mjs"):
                _copy(f, d, src)
    return d, None


def _copy(name, d, src=HERE):
    """src's file name into d, as its own writable file: the source tree
    may be read-only (make distcheck), and a copy that kept its mode
    could not be written again by the next script that installs."""
    with open(os.path.join(src, name), "rb") as f:
        data = f.read()
    dst = os.path.join(d, name)
    try:
        with open(dst, "rb") as f:
            if f.read() == data:
                return
    except OSError:
        pass
    tmp = dst + ".%d.tmp" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, dst)
