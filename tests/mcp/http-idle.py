#!/usr/bin/python3
"""--http-idle: an MCP session over HTTP with no request, no stream read
and no call owed for --http-idle seconds ends; its id then gets 404 (the
client initializes anew).  A session whose call runs longer than that,
its stream read, is not ended.  When every slot is taken (256), a new
session gets 503 and a JSON-RPC error naming the limit; DELETE frees
one (the table is filled under a long --http-idle, so that none ends
while it fills, however slow the machine).  --http-idle 0 keeps sessions for ever, and says so
in the 503.

The only wait is the expiry itself: it starts when the client has a
plain answer (the server's clock started before it sent it), so the
session has been idle that long when the next request comes, whatever
the load.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, cleanup, done, workdir  # noqa: E402
from mcphttp import start, text  # noqa: E402

IDLE = 3
SLOTS = 256


def init(c):
    """A new session's (status, id, body) through c's raw client; c's own
    session is left as it was."""
    st, r, body = c.rpc("initialize", {
        "protocolVersion": c.version, "capabilities": {},
        "clientInfo": {"name": "coil-tests", "version": "1"}},
        headers=c.headers(sid=False))
    return st, r.getheader("Mcp-Session-Id"), body


def call(c, code):
    st, r, sse = c.rpc("tools/call", {"name": "run_python",
                                      "arguments": {"code": code}})
    if st != 200 or not hasattr(sse, "until_answer"):
        return st, sse
    _, answer, _ = sse.until_answer()
    sse.drop()
    return st, answer


def test_long_cell(c):
    """Were the session ended while its cell ran, its stream would end
    with it, and no answer would come."""
    c.initialize()
    st, a = call(c, "import time\ntime.sleep(%d)\n'long done'" %
                 (2 * IDLE + 1))
    check(st == 200 and "long done" in text(a), "a call that runs past "
          "--http-idle, its stream read, is answered: its session was "
          "not ended", (st, a))


def test_expiry(c):
    c.initialize()
    st, a = call(c, "kept = 1\nkept")
    check(st == 200 and "Out[" in text(a), "a session runs a cell", a)
    # A plain answer last: the session's idle time started before it
    # came (a stream's reader ends after its last event is read).
    st, _, body = c.rpc("ping")
    check(st == 200, "and answers ping", (st, body))
    time.sleep(IDLE)
    st, a = call(c, "kept")
    body = json.loads(a) if isinstance(a, bytes) else {}
    check(st == 404 and "initialize anew" in body.get("error", {}).get(
        "message", ""), "idle for --http-idle, it is ended: its id gets "
          "404", (st, a))
    st, r, _ = c.post({"jsonrpc": "2.0", "method": "notifications/x"})
    check(st == 404, "any request with that id", st)
    st, _ = c.initialize()
    check(st == 200, "the client initializes anew", st)


def fill(c, n):
    ids = []
    for _ in range(n):
        st, sid, body = init(c)
        if st != 200:
            return ids, (st, body)
        ids.append(sid)
    return ids, None


def test_full(c, idle):
    """A coil of --http-idle idle (long enough that none of the sessions
    made here ends meanwhile, or 0) filled up."""
    ids, bad = fill(c, SLOTS)
    check(bad is None, "%d sessions at once" % SLOTS, bad)
    st, sid, body = init(c)
    msg = json.loads(body).get("error", {}).get("message", "")
    check(st == 503 and sid is None and "all %d MCP sessions" % SLOTS in
          msg and "--http-idle" in msg, "one more gets 503 naming the "
          "limit (--http-idle %d)" % idle, (st, body))
    if not idle:
        check("--http-idle 0 keeps them" in msg, "and says --http-idle 0 "
              "keeps them", msg)
        return
    d = c.conn()
    d.request("DELETE", "/mcp", headers={"Mcp-Session-Id": ids[0]})
    check(d.getresponse().status == 200, "DELETE ends one")
    d.close()
    st, sid, body = init(c)
    check(st == 200, "and its slot takes a new session", (st, body))
    st, sid, body = init(c)
    check(st == 503, "and then the table is full again", (st, body))


def main():
    w = workdir()
    c = start("--http-idle", str(IDLE), "--workdir", w)
    try:
        test_long_cell(c)
        test_expiry(c)
    finally:
        c.close()
    check(c.stderr_rest() == "", "coil said nothing else on stderr",
          c.stderr_rest()[-3000:])
    for idle in (3600, 0):
        c = start("--http-idle", str(idle), "--workdir", w)
        try:
            test_full(c, idle)
        finally:
            c.close()
    cleanup(w)
    done()


main()
