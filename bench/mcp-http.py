#!/usr/bin/python3
"""bench/mcp-http.py - a trivial cell's round trip (`x = 1`) over MCP's
Streamable HTTP against stdio MCP and against a Jupyter kernel reached
over jupyter_server's own HTTP and WebSocket API; issue 28's first
"What must hold": HTTP within 2x of stdio, and at least 10x faster
than Jupyter.

    COIL=build/src/coil /usr/bin/python3 bench/mcp-http.py   all, a table
    /usr/bin/python3 bench/mcp-http.py http_rt          one JSON line
    /usr/bin/python3 bench/mcp-http.py table FILE       Markdown table
    BENCH_QUICK=1 ...   (fewer cells)

bench/run drives the last two.  Each side is one persistent connection
from a client written with the standard library, timed from the
request's first byte sent to its answer's last byte read:

  HTTP     coil --mcp --http 127.0.0.1:0, one keep-alive http.client
           connection: POST tools/call, the answer read from the call's
           event stream (the response ends with it).
  stdio    coil --mcp on pipes: the tools/call line to its answer line.
  Jupyter  jupyter_server (Debian's python3-jupyter-server) on
           127.0.0.1 with a token, its kernel made by POST /api/kernels
           over http.client, then /api/kernels/ID/channels over a
           WebSocket (the small RFC 6455 client below, on a plain
           socket: the standard library has none, and tornado's client
           would put an event loop on the client's side only):
           execute_request to its execute_reply and the kernel's idle
           status, as JupyterLab waits for them.
  Jupyter, acked at once
           the same, the client's socket set to TCP_QUICKACK before it
           reads.  jupyter_server 1.x does not set TCP_NODELAY on its
           WebSockets (tornado's set_nodelay is not called), so a
           message that follows another unacknowledged one waits for
           the client's delayed ACK (40 ms on Linux): what any client
           sees, but not the kernel's own speed.  This row takes the
           wait out, so the 10x target is judged on both.

All are warmed up, then measured in 100 interleaved rounds (10 with
BENCH_QUICK), each a few cells of each side, the first side turning
from round to round, so a load on the machine falls on each alike.  jupyter_server's config,
data, runtime and root directories, and HOME, are in a temporary
directory removed at exit: nothing is written to ~.
"""
import atexit
import base64
import hashlib
import http.client
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mcp"))
import bench  # noqa: E402
from bench import NA  # noqa: E402
from mcphttp import HttpCoil  # noqa: E402
from mcplib import Mcp  # noqa: E402

PY = "/usr/bin/python3"
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
N = 200 if QUICK else 2000          # coil cells, each transport
NJ = 100 if QUICK else 500          # Jupyter cells
ROUNDS = 10 if QUICK else 100    # interleaved finely: the load moves
WORK = tempfile.mkdtemp(prefix="bench-http-")
atexit.register(shutil.rmtree, WORK, True)
CODE = "x = 1"
CALL = {"name": "run_python", "arguments": {"code": CODE}}


class Http:
    def __init__(self):
        self.c = HttpCoil("--workdir", WORK)
        if self.c.port is None:
            rc = self.c.close()
            raise NA("coil --http did not start: " + (
                self.c.stderr_text().strip()[-120:] or f"exit {rc}"))
        self.c.initialize()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.c.port)
        self.id = 100

    def cell(self):
        self.id += 1
        self.conn.request("POST", "/mcp", body=json.dumps(
            {"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
             "params": CALL}), headers=self.c.headers())
        body = self.conn.getresponse().read()   # ends with its answer
        if b'"result"' not in body:
            raise RuntimeError("no answer: %r" % body[-300:])

    def close(self):
        self.conn.close()
        self.c.close()


class HttpRaw:
    """The same session on a second keep-alive connection, read by a
    plain-socket HTTP/1.1 client (as the WebSocket one below): what
    http.client's own cost is in the row above."""

    def __init__(self, h):
        self.sock = socket.create_connection(("127.0.0.1", h.c.port), 60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.f = self.sock.makefile("rb")
        self.head = "".join(f"{k}: {v}\r\n" for k, v in
                            h.c.headers().items()).encode()
        self.id = 10 ** 9

    def cell(self):
        self.id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.id,
                           "method": "tools/call", "params": CALL}).encode()
        self.sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          + self.head + b"Content-Length: %d\r\n\r\n"
                          % len(body) + body)
        status = self.f.readline()
        chunked = False
        while True:
            line = self.f.readline().lower()
            if line in (b"\r\n", b""):
                break
            chunked |= line.startswith(b"transfer-encoding: chunked")
        if b" 200 " not in status or not chunked:
            raise RuntimeError(f"not a stream: {status!r}")
        got = []
        while True:                     # the chunks, to the last (0)
            size = int(self.f.readline().split(b";")[0], 16)
            got.append(self.f.read(size + 2)[:size])
            if size == 0:
                break
        if b'"result"' not in got[-2]:
            raise RuntimeError("no answer: %r" % got[-2][-300:])

    def close(self):
        self.sock.close()


class Stdio:
    def __init__(self):
        self.m = Mcp("--workdir", WORK, "--no-record")
        self.m.rpc("initialize", {"protocolVersion": "2025-11-25",
                                  "capabilities": {}, "clientInfo":
                                  {"name": "bench", "version": "1"}})

    def cell(self):
        self.m.tool("run_python", CALL["arguments"])

    def close(self):
        self.m.close()


# ------------------------------------------------------------- Jupyter

class WebSocket:
    """The client side of RFC 6455, as much as a kernel's channels need:
    one connection, text frames out (masked, as a client's must be),
    data frames in (a ping answered, fragments joined)."""
    GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    quickack = False        # ACK what comes at once (see the top)

    def __init__(self, port, path, headers):
        self.sock = socket.create_connection(("127.0.0.1", port), 60)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16))
        req = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}",
               "Upgrade: websocket", "Connection: Upgrade",
               "Sec-WebSocket-Key: " + key.decode(),
               "Sec-WebSocket-Version: 13"]
        req += [f"{k}: {v}" for k, v in headers.items()]
        self.sock.sendall(("\r\n".join(req) + "\r\n\r\n").encode())
        self.f = self.sock.makefile("rb")
        status = self.f.readline()
        got = {}
        while True:
            line = self.f.readline().rstrip(b"\r\n")
            if not line:
                break
            k, _, v = line.partition(b":")
            got[k.strip().lower()] = v.strip()
        want = base64.b64encode(hashlib.sha1(key + self.GUID).digest())
        if b" 101 " not in status or got.get(b"sec-websocket-accept") != want:
            raise NA(f"the WebSocket handshake failed: {status!r}")

    def _frame(self, op, data):
        n, mask = len(data), os.urandom(4)
        head = bytes([0x80 | op])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
        else:
            head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
        keys = (mask * (n // 4 + 1))[:n]
        body = (int.from_bytes(data, "big") ^ int.from_bytes(keys, "big")
                ).to_bytes(n, "big")
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._frame(0x1, text.encode())

    def recv(self):
        """The next message's payload (bytes)."""
        parts = []
        while True:
            if self.quickack:       # Linux clears it: set each time
                self.sock.setsockopt(socket.IPPROTO_TCP,
                                     socket.TCP_QUICKACK, 1)
            b0, b1 = self._read(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            mask = self._read(4) if b1 & 0x80 else None
            data = self._read(n)
            if mask:
                keys = (mask * (n // 4 + 1))[:n]
                data = (int.from_bytes(data, "big") ^
                        int.from_bytes(keys, "big")).to_bytes(n, "big")
            if op == 0x8:
                raise EOFError("the server closed the WebSocket")
            if op == 0x9:
                self._frame(0xA, data)
                continue
            if op == 0xA:
                continue
            parts.append(data)
            if b0 & 0x80:
                return b"".join(parts)

    def _read(self, n):
        data = self.f.read(n)
        if len(data) != n:
            raise EOFError("the WebSocket connection ended")
        return data

    def close(self):
        try:
            self._frame(0x8, b"\x03\xe8")
        except OSError:
            pass
        self.sock.close()


def listen_port(pid, deadline):
    """The TCP port pid listens on, from /proc: jupyter_server 1.x takes
    port 0 from the kernel but says it serves on port 0."""
    while time.time() < deadline:
        inodes = set()
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
            with open(f"/proc/{pid}/net/tcp") as f:
                rows = [ln.split() for ln in f.readlines()[1:]]
        except OSError:
            rows = []
        for r in rows:
            if r[3] == "0A" and r[9] in inodes:     # LISTEN, ours
                return int(r[1].split(":")[1], 16)
        time.sleep(0.1)
    return None


class Jupyter:
    def __init__(self):
        try:
            import jupyter_server  # noqa: F401
        except ImportError:
            raise NA("no jupyter_server: apt-get install "
                     "python3-jupyter-server") from None
        top = tempfile.mkdtemp(prefix="jupyter-", dir=WORK)
        env = dict(os.environ, HOME=top)
        for var, sub in (("JUPYTER_CONFIG_DIR", "config"),
                         ("JUPYTER_DATA_DIR", "data"),
                         ("JUPYTER_RUNTIME_DIR", "runtime"),
                         ("IPYTHONDIR", "ipython"),
                         ("MPLCONFIGDIR", "mpl"), ("", "root")):
            os.mkdir(os.path.join(top, sub))
            if var:
                env[var] = os.path.join(top, sub)
        self.token = env["JUPYTER_TOKEN"] = secrets.token_hex(16)
        argv = [PY, "-m", "jupyter_server", "--no-browser",
                "--ServerApp.ip=127.0.0.1", "--ServerApp.port=0",
                "--ServerApp.port_retries=0",
                "--ServerApp.root_dir=" + os.path.join(top, "root")]
        if os.geteuid() == 0:
            argv.append("--allow-root")
        self.log = open(os.path.join(top, "server.log"), "wb")
        self.proc = subprocess.Popen(argv, cwd=top, env=env,
                                     stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        self.ws = self.kid = None
        try:
            self._connect(time.time() + 120)
        except BaseException:
            self.close()
            raise

    def _connect(self, deadline):
        self.port = listen_port(self.proc.pid, deadline)
        if self.port is None:
            raise NA("jupyter_server did not listen: " + self._log_tail())
        self.rest = http.client.HTTPConnection("127.0.0.1", self.port, 60)
        auth = {"Authorization": "token " + self.token}
        while True:          # listening comes before serving kernels
            self.rest.request("POST", "/api/kernels", body="{}",
                              headers=dict(auth, **{
                                  "Content-Type": "application/json"}))
            r = self.rest.getresponse()
            body = r.read()
            if r.status == 201:
                break
            if time.time() > deadline:
                raise NA(f"POST /api/kernels: {r.status} {body[:100]!r}")
            time.sleep(0.2)
        self.kid = json.loads(body)["id"]
        self.session = uuid.uuid4().hex
        self.ws = WebSocket(self.port, f"/api/kernels/{self.kid}/channels"
                            f"?session_id={self.session}", auth)
        while True:          # the kernel answers once it has started
            m = self.request("kernel_info_request", {}, timeout=5)
            if m is not None:
                break
            if time.time() > deadline:
                raise NA("the kernel never answered kernel_info_request")

    def _log_tail(self):
        self.log.flush()
        with open(self.log.name, "rb") as f:
            return f.read()[-200:].decode(errors="replace").strip()

    def request(self, msg_type, content, timeout=None):
        """Send a shell request; its reply once it came and the kernel
        said it is idle again (None when timeout seconds passed)."""
        mid = uuid.uuid4().hex
        self.ws.send(json.dumps({
            "header": {"msg_id": mid, "msg_type": msg_type,
                       "username": "bench", "session": self.session,
                       "date": "", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "content": content,
            "channel": "shell", "buffers": []}))
        self.ws.sock.settimeout(timeout)
        reply = idle = None
        try:
            while reply is None or not idle:
                m = json.loads(self.ws.recv())
                if m.get("parent_header", {}).get("msg_id") != mid:
                    continue
                t = m["header"]["msg_type"]
                if t == msg_type.replace("_request", "_reply"):
                    reply = m
                elif t == "status":
                    idle = m["content"]["execution_state"] == "idle"
        except socket.timeout:
            return None
        finally:
            self.ws.sock.settimeout(None)
        return reply

    def cell(self):
        r = self.request("execute_request", {
            "code": CODE, "silent": False, "store_history": True,
            "user_expressions": {}, "allow_stdin": False,
            "stop_on_error": True}, timeout=60)
        if r is None:
            raise RuntimeError("the kernel did not answer in 60 s")
        if r["content"].get("status") != "ok":
            raise RuntimeError("the cell failed: %r" % r["content"])

    def close(self):
        if self.ws is not None:
            self.ws.close()
        if self.kid is not None:
            try:
                self.rest.request("DELETE", "/api/kernels/" + self.kid,
                                  headers={"Authorization":
                                           "token " + self.token})
                self.rest.getresponse().read()
            except (OSError, http.client.HTTPException):
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)  # its own session
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


class JupyterAck:
    """The same kernel and connection, its client acking at once."""

    def __init__(self, j):
        self.j = j

    def cell(self):
        self.j.ws.quickack = True
        try:
            self.j.cell()
        finally:
            self.j.ws.quickack = False

    def close(self):
        pass


# ----------------------------------------------------------- measuring

def times(side, n):
    out = []
    for _ in range(n):
        t = time.perf_counter_ns()
        side.cell()
        out.append((time.perf_counter_ns() - t) / 1e6)
    return out


def stats(ms):
    return {"median_ms": statistics.median(ms),
            "p99_ms": statistics.quantiles(ms, n=100)[98], "n": len(ms)}


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def http_rt():
    sides, jna, load = {}, None, loadavg()
    try:
        sides["http"] = Http()
        sides["http_raw"] = HttpRaw(sides["http"])
        sides["stdio"] = Stdio()
        try:
            sides["jupyter"] = Jupyter()
            sides["jupyter_ack"] = JupyterAck(sides["jupyter"])
        except NA as e:
            jna = str(e)
        count = {"http": N, "http_raw": N, "stdio": N, "jupyter": NJ,
                 "jupyter_ack": NJ}
        got = {k: [] for k in sides}
        for k, s in sides.items():                      # warm
            times(s, 50 if not k.startswith("jupyter") else 20)
        order = list(sides.items())
        for i in range(ROUNDS):     # each side a few cells, in turn
            for k, s in order[i % len(order):] + order[:i % len(order)]:
                got[k] += times(s, count[k] // ROUNDS)
    finally:
        for s in sides.values():
            s.close()
    rec = {k: stats(v) for k, v in got.items()}
    if jna:
        rec["jupyter"] = rec["jupyter_ack"] = {"na": jna}
    rec["loadavg"] = [load, loadavg()]
    return rec["http"]["median_ms"], rec["http"]["n"], rec


MEASURES = {"http_rt": http_rt}


def measure(key):
    bench.MEASURES.update(MEASURES)
    bench.measure(key)


def fig(v):
    return "n/a" if v is None else f"{v:.3f} ms"


def table(path):
    rec = bench.load_results(path).get("http_rt", {"na": "not run"})
    print("| `x = 1` round trip (issue 28) | median | p99 | cells "
          "| ratio | target | holds |")
    print("| --- | ---: | ---: | ---: | --- | --- | --- |")
    if "na" in rec:
        print(f"| MCP over HTTP | n/a ({rec['na']}) | | | | | |")
        return
    med = {k: r["median_ms"] for k, r in rec.items()
           if isinstance(r, dict) and "median_ms" in r}
    h = med["http"]
    for k, what, rel, target, ok in (
            ("http", "MCP over Streamable HTTP (`--mcp --http`), "
             "http.client", None, "—", None),
            ("http_raw", "the same session, a plain-socket HTTP client",
             lambda v: f"{v / med['stdio']:.2f}× stdio", "—", None),
            ("stdio", "MCP over stdio (`--mcp`)",
             lambda v: f"HTTP {h / v:.2f}× stdio", "HTTP ≤ 2× stdio",
             lambda v: h <= 2 * v),
            ("jupyter", "Jupyter kernel over jupyter_server's REST and "
             "WebSocket API", lambda v: f"{v / h:.1f}× HTTP",
             "HTTP ≥ 10× faster", lambda v: v >= 10 * h),
            ("jupyter_ack", "the same, the client acking at once "
             "(`TCP_QUICKACK`)", lambda v: f"{v / h:.1f}× HTTP",
             "HTTP ≥ 10× faster", lambda v: v >= 10 * h)):
        r = rec.get(k, {"na": "not run"})
        if "na" in r:
            print(f"| {what} | n/a ({r['na'][:100]}) | | | | {target} "
                  "| n/a |")
            continue
        v = r["median_ms"]
        held = "—" if ok is None else ("yes" if ok(v) else "**no**")
        print(f"| {what} | {fig(v)} | {fig(r['p99_ms'])} | {r['n']} "
              f"| {'—' if rel is None else rel(v)} | {target} | {held} |")
    print()
    print("Each a persistent connection of a standard-library client "
          "(http.client keep-alive or a plain socket; pipes; http.client "
          "for the kernel's creation, then a plain-socket WebSocket), "
          "warmed, then measured in interleaved rounds; load average "
          f"(1, 5, 15 min) {rec['loadavg'][0]} before, "
          f"{rec['loadavg'][1]} after.")


def main():
    # bench/run's deadline ends this with SIGTERM: the finally blocks
    # still stop the coils and jupyter_server with its kernel.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if len(sys.argv) == 1:
        path = os.path.join(WORK, "results.jsonl")
        with open(path, "w") as f:
            sys.stdout, out = f, sys.stdout
            try:
                measure("http_rt")
            finally:
                sys.stdout = out
        table(path)
    else:
        bench.cli(table, measure, MEASURES, __doc__)


if __name__ == "__main__":
    main()
