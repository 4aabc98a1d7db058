#!/usr/bin/python3
"""bench/mcp-http.py - a trivial cell's round trip over MCP's Streamable
HTTP (coil --mcp --http on 127.0.0.1, one keep-alive connection, the
answer read from the call's event stream) against the same cell over
stdio MCP (coil --mcp), interleaved rounds on a quiet machine.
Target (issue 28): HTTP within 2x of stdio.

Not measured here yet: the Jupyter comparison over its HTTP and
WebSocket API (jupyter_server) and 1,000 concurrent sessions.

    COIL=build/src/coil /usr/bin/python3 bench/mcp-http.py
    BENCH_QUICK=1 ...   (fewer cells)
"""
import http.client
import json
import os
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mcp"))
from mcphttp import ACCEPT, start  # noqa: E402
from mcplib import Mcp  # noqa: E402

QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
N = 200 if QUICK else 1000
ROUNDS = 3 if QUICK else 5
WORK = tempfile.mkdtemp(prefix="bench-http-")
CALL = {"name": "run_python", "arguments": {"code": "x = 1"}}


class Http:
    def __init__(self):
        self.c = start("--workdir", WORK)
        self.c.initialize()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.c.port)
        self.id = 100

    def cell(self):
        self.id += 1
        self.conn.request("POST", "/mcp", body=json.dumps(
            {"jsonrpc": "2.0", "id": self.id, "method": "tools/call",
             "params": CALL}), headers=self.c.headers())
        r = r0 = self.conn.getresponse()
        body = r.read()         # the stream ends with its answer
        if b'"result"' not in body:
            raise RuntimeError("no answer: %r" % body[-300:])
        return r0

    def close(self):
        self.conn.close()
        self.c.close()


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


def times(s, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        s.cell()
        out.append((time.perf_counter() - t) * 1000)
    return out


def main():
    h, s = Http(), Stdio()
    try:
        times(h, 20), times(s, 20)               # warm
        th, ts = [], []
        for _ in range(ROUNDS):
            th += times(h, N // ROUNDS)
            ts += times(s, N // ROUNDS)
    finally:
        h.close()
        s.close()
    q = statistics.quantiles
    mh, ms = statistics.median(th), statistics.median(ts)
    print("trivial cell round trip, %d cells each (ms):" % len(th))
    print("  stdio MCP       median %.3f  p99 %.3f" % (ms, q(ts, n=100)[98]))
    print("  HTTP MCP (SSE)  median %.3f  p99 %.3f" % (mh, q(th, n=100)[98]))
    print("  HTTP / stdio    %.2fx (target: within 2x) %s" % (
        mh / ms, "ok" if mh <= 2 * ms else "MISSED"))


main()
