"""What the tests of MCP over HTTP share (http-wire.py, http-sdk.py): coil
--mcp --http on 127.0.0.1 at a port it picks itself (it says which on
stderr, so no test races another for a port), and a small raw client:
one http.client connection a request, server-sent events read as they
come."""
import http.client
import json
import os
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, skip_all  # noqa: E402

ACCEPT = "application/json, text/event-stream"


class HttpCoil:
    """coil --mcp --http 127.0.0.1:0 with args; .port once it serves."""

    def __init__(self, *args, env=None, addr="127.0.0.1:0", cwd=None):
        self.proc = subprocess.Popen(
            [COIL, "--mcp", "--http", addr, "--no-record", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.err = b""
        self.port = None
        end = time.time() + 60
        while self.port is None and time.time() < end:
            r, _, _ = select.select([self.proc.stderr], [], [], 1)
            if not r:
                continue
            chunk = os.read(self.proc.stderr.fileno(), 4096)
            if not chunk:
                break
            self.err += chunk
            for line in self.err.decode(errors="replace").splitlines():
                if "serving MCP on http://" in line:
                    self.port = int(line.rsplit(":", 1)[1].split("/")[0])
        self.sid = None
        self.version = "2025-11-25"
        self.next_id = 0

    def stderr_text(self):
        return self.err.decode(errors="replace")

    def stderr_rest(self):
        """What coil said on stderr but where it serves (after close)."""
        return "\n".join(x for x in self.stderr_text().splitlines()
                         if "serving MCP on http://" not in x)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        rest = self.proc.stderr.read()
        self.err += rest or b""
        return self.proc.returncode

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port,
                                          timeout=120)

    def headers(self, extra=None, sid=True):
        h = {"Content-Type": "application/json", "Accept": ACCEPT}
        if sid and self.sid is not None:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = self.version
        h.update(extra or {})
        return h

    def post(self, msg, headers=None, raw=None):
        """POST one message: (status, headers, body bytes) for an answer
        that is not a stream; a stream's response is returned unread
        as the body (an http.client response)."""
        c = self.conn()
        body = raw if raw is not None else json.dumps(msg).encode()
        c.request("POST", "/mcp", body=body,
                  headers=headers if headers is not None else self.headers())
        r = c.getresponse()
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            return r.status, r, SSE(r, c)
        data = r.read()
        c.close()
        return r.status, r, data

    def rpc(self, method, params=None, headers=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.post(msg, headers)

    def initialize(self):
        st, r, body = self.rpc("initialize", {
            "protocolVersion": self.version, "capabilities": {},
            "clientInfo": {"name": "coil-tests", "version": "1"}},
            headers=self.headers(sid=False))
        self.sid = r.getheader("Mcp-Session-Id")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return st, json.loads(body)

    def get(self, headers):
        c = self.conn()
        c.request("GET", "/mcp", headers=headers)
        r = c.getresponse()
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            return r.status, r, SSE(r, c)
        data = r.read()
        c.close()
        return r.status, r, data


class SSE:
    """Server-sent events as they come: next() is (id, data) of the next
    event, data parsed as JSON when there is any."""

    def __init__(self, resp, conn):
        self.resp = resp
        self.conn = conn

    def next(self):
        eid, data = None, []
        while True:
            line = self.resp.readline()
            if not line:
                raise EOFError("the stream ended")
            line = line.rstrip(b"\r\n").decode()
            if line == "":
                if eid is not None or data:
                    d = "\n".join(data)
                    return eid, json.loads(d) if d else None
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "id":
                eid = value
            elif field == "data":
                data.append(value)

    def until_answer(self):
        """Events up to the answer (a message with a result or error):
        (answer, [(id, data) before it])."""
        seen = []
        while True:
            eid, d = self.next()
            if isinstance(d, dict) and ("result" in d or "error" in d):
                return eid, d, seen
            seen.append((eid, d))

    def drop(self):
        """Close the connection as a client that went away does."""
        try:
            self.conn.sock.shutdown(2)
        except OSError:
            pass
        self.conn.close()


def start(*args, **kw):
    """A served coil, or the whole script skipped when this coil was
    built without libmicrohttpd."""
    c = HttpCoil(*args, **kw)
    if c.port is None:
        c.close()
        if "without libmicrohttpd" in c.stderr_text():
            skip_all("coil was built without libmicrohttpd (--http): "
                     "apt-get install libmicrohttpd-dev and rebuild")
        raise RuntimeError("coil --http did not start: " + c.stderr_text())
    return c


def text(answer):
    return "".join(c.get("text", "") for c in
                   (answer.get("result") or {}).get("content", [])
                   if c.get("type") == "text")
