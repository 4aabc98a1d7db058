#!/usr/bin/python3
"""coil --mcp --http on 127.0.0.1, as a client on the wire sees it: the
session's life (initialize gives Mcp-Session-Id, required after; DELETE
ends it), answers as JSON or, for a call, as an SSE stream with a
priming event and the call's progress, a call cancelled, a connection
dropped while its cell runs and resumed with Last-Event-ID (the answer
kept for it), a broken Last-Event-ID, two sessions sharing the one
namespace, a 2026-07-28 request without a session, and the guards,
with curl: a body over --max-request (413), headers over the bound
(431), a wrong Content-Type (415) or Accept (406), bad JSON (a parse
error), a wrong Origin or Host (403), a missing or wrong token (401),
and a token file others may read or a bind off loopback without a
token refused.
"""
import json
import os
import shutil
import stat
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, skip, workdir  # noqa: E402
from mcphttp import ACCEPT, HttpCoil, start, text  # noqa: E402

TOKEN = "coil-test-token-0123456789abcdef"


def curl(c, *args):
    """curl's status and body for a request to c's /mcp."""
    r = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                        *args, "http://127.0.0.1:%d/mcp" % c.port],
                       capture_output=True, timeout=60)
    body, _, code = r.stdout.rpartition(b"\n")
    return int(code or 0), body


def lifecycle(c):
    st, init = c.initialize()
    check(st == 200 and init.get("result", {}).get("protocolVersion") ==
          "2025-11-25", "initialize is answered as JSON", init)
    check(c.sid is not None and len(c.sid) == 32 and
          all(ch in "0123456789abcdef" for ch in c.sid),
          "initialize's answer names a session (128 random bits)", c.sid)
    st, _, body = c.rpc("tools/list")
    names = [t["name"] for t in json.loads(body)["result"]["tools"]]
    check(st == 200 and "run_python" in names, "tools/list answers as "
          "JSON in the session", names)
    st, _, body = c.rpc("tools/list", headers=c.headers(sid=False))
    check(st == 400 and b"Mcp-Session-Id" in body, "a request without a "
          "session id is refused 400", (st, body))
    st, _, body = c.rpc("tools/list", headers=c.headers(
        {"Mcp-Session-Id": "0" * 32}))
    check(st == 404, "an unknown session id is 404", (st, body))
    st, _, body = c.rpc("tools/list", headers=c.headers(
        {"MCP-Protocol-Version": "1999-01-01"}))
    check(st == 400 and b"MCP-Protocol-Version" in body, "an unknown "
          "MCP-Protocol-Version is 400", (st, body))


def calls(c):
    st, r, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "print('hi')\n6 * 7"}, "_meta": {"progressToken": "p1"}})
    check(st == 200 and r.getheader("Content-Type") == "text/event-stream",
          "a call is answered as an event stream", r.getheaders())
    eid, first = sse.next()
    check(eid is not None and eid.endswith(".0") and first is None,
          "the stream opens with a priming event (an id, no data)",
          (eid, first))
    eid, ans, seen = sse.until_answer()
    check(any(d.get("method") == "notifications/progress" and
              d["params"].get("message") == "hi\n" for _, d in seen),
          "the cell's output came as progress before the answer", seen)
    check("Out[1]: 42" in text(ans) and ans["id"] == c.next_id,
          "the answer is the call's result", ans)
    st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "7"}}, headers=c.headers({"MCP-Protocol-Version":
                                          "2025-06-18"}))
    eid, first = sse.next()
    check(eid.endswith(".1") and "result" in first, "a client of an "
          "earlier revision gets no priming event", (eid, first))
    st, _, sse = c.rpc("tools/call", {"name": "run_python",
                                      "arguments": {"code": "1/0"}})
    _, ans, _ = sse.until_answer()
    check(ans["result"].get("isError") is True and "ZeroDivisionError" in
          text(ans), "a cell that raises is a result with isError", ans)


def cancel(c, w):
    st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "import os, time\nprint('waiting', flush=True)\n"
        "while not os.path.exists('never'):\n    time.sleep(0.01)\n"
        "cancelled_flag = 1"}, "_meta": {"progressToken": 7}})
    rid = c.next_id
    sse.next()
    sse.next()          # its first line: the cell runs
    st, _, body = c.post({"jsonrpc": "2.0", "method":
                          "notifications/cancelled",
                          "params": {"requestId": rid}})
    check(st == 202, "notifications/cancelled is accepted (202)",
          (st, body))
    try:
        sse.until_answer()
        ended = False
    except EOFError:
        ended = True
    check(ended, "the cancelled call's stream ends without an answer")
    st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "'cancelled_flag' in globals()"}})
    _, ans, _ = sse.until_answer()
    check("False" in text(ans), "the cancelled cell was interrupted, and "
          "the session goes on", ans)


def resume(c, w):
    """A client drops a call's connection while the cell runs; the cell
    finishes meanwhile (the next call's answer, queued behind it, says
    so); GET with the last event id it saw gives the rest."""
    st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "import os, time\nprint('started', flush=True)\n"
        "while not os.path.exists('go'):\n    time.sleep(0.01)\n"
        "print('finished')\n'kept'"}, "_meta": {"progressToken": 9}})
    rid = c.next_id
    sse.next()
    eid, prog = sse.next()
    check(prog.get("method") == "notifications/progress",
          "the cell's first line came", prog)
    sse.drop()
    open(os.path.join(w, "go"), "w").close()
    st, _, sse2 = c.rpc("tools/call", {"name": "list_variables",
                                       "arguments": {}})
    _, after, _ = sse2.until_answer()
    check("result" in after, "a call queued behind it is answered once "
          "the dropped call's cell finished", after)
    st, r, sse3 = c.get(c.headers({"Accept": "text/event-stream",
                                   "Last-Event-ID": eid}))
    check(st == 200, "GET with Last-Event-ID resumes the stream", st)
    if st != 200:
        return
    _, ans, seen = sse3.until_answer()
    check(ans.get("id") == rid and "'kept'" in text(ans) and
          "finished" in text(ans), "the answer kept for the dropped "
          "connection comes on the resumed stream", (ans, seen))
    st, _, body = c.get(c.headers({"Accept": "text/event-stream",
                                   "Last-Event-ID": "not-an-id"}))
    check(st == 400 and b"Last-Event-ID" in body, "a broken Last-Event-ID "
          "is 400", (st, body))
    st, _, body = c.get(c.headers({"Accept": "text/event-stream",
                                   "Last-Event-ID": "999.3"}))
    check(st == 400, "a Last-Event-ID of no stream kept is 400", (st, body))
    st, _, body = c.get({"Accept": "text/event-stream"})
    check(st == 400, "GET without a session id is 400", (st, body))


def shared(c):
    """A second MCP session is a second client of the same hub: it sees
    what the first one's cells defined."""
    other = HttpCoil.__new__(HttpCoil)
    other.__dict__.update(c.__dict__)
    other.sid, other.next_id = None, 0
    st, init = other.initialize()
    check(st == 200 and other.sid not in (None, c.sid), "a second "
          "initialize makes a second session", (st, other.sid))
    st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments": {
        "code": "shared_value = 'from the first'"}})
    sse.until_answer()
    st, _, sse = other.rpc("tools/call", {"name": "run_python",
                                          "arguments": {"code":
                                                        "shared_value"}})
    _, ans, _ = sse.until_answer()
    check("from the first" in text(ans), "both sessions share the one "
          "Python namespace", ans)


def stateless(c, w):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    st, r, body = c.rpc("tools/list", {"_meta": meta}, headers={
        "Content-Type": "application/json", "Accept": ACCEPT,
        "MCP-Protocol-Version": "2026-07-28"})
    check(st == 200 and "tools" in json.loads(body).get("result", {}) and
          r.getheader("Mcp-Session-Id") is None, "a 2026-07-28 request "
          "needs no session", (st, body))
    h = {"Content-Type": "application/json", "Accept": ACCEPT,
         "MCP-Protocol-Version": "2026-07-28"}

    def call(code, rid):
        return c.post({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": "run_python", "arguments":
                                  {"code": code}, "_meta": meta}}, h)
    # Two clients that share nothing may use the same id at once.
    st1, _, a = call("import os, time\nwhile not os.path.exists('go2'):\n"
                     "    time.sleep(0.01)\n'first'", 1)
    st2, _, b = call("'second'", 1)
    check(st1 == 200 and st2 == 200 and not isinstance(b, bytes),
          "two 2026-07-28 calls of one id run side by side", (st2, b))
    open(os.path.join(w, "go2"), "w").close()
    _, ra, _ = a.until_answer()
    _, rb, _ = b.until_answer()
    check("'first'" in text(ra) and "'second'" in text(rb),
          "each gets its own answer", (ra, rb))
    st, _, sse = call("import os, time\nprint('w', flush=True)\n"
                      "while not os.path.exists('never'):\n"
                      "    time.sleep(0.01)", 77)
    sse.next()
    st, _, body = c.post({"jsonrpc": "2.0", "method":
                          "notifications/cancelled", "params":
                          {"requestId": 77, "_meta": meta}}, h)
    try:
        sse.until_answer()
        ended = False
    except EOFError:
        ended = True
    check(st == 202 and ended, "a 2026-07-28 call is cancelled by its id",
          (st, body))


def end(c):
    c.next_id += 1
    conn = c.conn()
    conn.request("DELETE", "/mcp", headers=c.headers())
    st = conn.getresponse().status
    check(st == 200, "DELETE ends the session", st)
    st, _, _ = c.rpc("tools/list")
    check(st == 404, "the ended session's id is 404 after", st)


def guards(c):
    if shutil.which("curl") is None:
        skip("the bad requests with curl", "curl is not installed "
             "(setup.sh installs it)")
        return
    h = ["-H", "Content-Type: application/json", "-H", "Accept: " + ACCEPT]
    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
    st, body = curl(c, *h, "--data-binary", "x" * 5000)
    check(st == 413, "a body over --max-request is 413", (st, body))
    st, body = curl(c, *h, "-H", "Transfer-Encoding: chunked",
                    "--data-binary", "x" * 5000)
    check(st == 413, "a chunked body over --max-request is 413 too",
          (st, body))
    st, body = curl(c, *h, "-H", "X-Big: " + "a" * 100000,
                    "--data-binary", ping)
    check(st == 431, "headers over the bound are 431", st)
    st, body = curl(c, *h, "--data-binary", "[" + ping + "]")
    check(st == 400 and b"batches" in body, "a batch is refused with a "
          "JSON-RPC error (400)", (st, body))
    st, body = curl(c, "-H", "Content-Type: text/plain", "-H",
                    "Accept: " + ACCEPT, "--data-binary", ping)
    check(st == 415, "a body that is not application/json is 415", st)
    st, body = curl(c, "-H", "Content-Type: application/json", "-H",
                    "Accept: application/json", "--data-binary", ping)
    check(st == 406, "an Accept without text/event-stream is 406", st)
    st, body = curl(c, *h, "--data-binary", '{"jsonrpc": "2.0", "id": 3,')
    err = json.loads(body or b"{}").get("error", {})
    check(st == 400 and err.get("code") == -32700, "bad JSON is a "
          "JSON-RPC parse error", (st, body))
    st, body = curl(c, *h, "-H", "Origin: http://evil.example",
                    "--data-binary", ping)
    check(st == 403, "a foreign Origin is 403", (st, body))
    st, body = curl(c, *h, "-H", "Host: evil.example:80",
                    "--data-binary", ping)
    check(st == 403, "a Host not of this loopback server is 403 (DNS "
          "rebinding)", (st, body))
    # a name that only starts like a loopback address can be rebound
    for name in ("127.attacker.example", "127.0.0.1.nip.io"):
        st, body = curl(c, *h, "-H", "Host: %s:80" % name, "-H",
                        "Origin: http://%s:80" % name, "--data-binary", ping)
        check(st == 403, "Host and Origin %s are 403, not loopback "
              "(DNS rebinding)" % name, (st, body))
    st, body = curl(c, *h, "-H", "Origin: http://localhost:3000",
                    "--data-binary", ping)
    check(st != 403, "a loopback Origin is let in", (st, body))
    st, body = curl(c, "-X", "PUT", *h)
    check(st == 405, "PUT is 405", st)


def tokens(w):
    env = dict(os.environ, COIL_HTTP_TOKEN=TOKEN)
    c = start("--workdir", w, "--max-request", "4000", env=env)
    try:
        auth = {"Authorization": "Bearer " + TOKEN}
        st, r, body = c.rpc("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}},
            headers=c.headers(sid=False))
        check(st == 401 and "Bearer" in (r.getheader("WWW-Authenticate")
                                        or ""),
              "no token when one is set: 401 with WWW-Authenticate",
              (st, body))
        st, r, body = c.rpc("initialize", {}, headers=c.headers(
            {"Authorization": "Bearer " + TOKEN[:-1] + "x"}, sid=False))
        check(st == 401 and "invalid_token" in
              (r.getheader("WWW-Authenticate") or ""),
              "a wrong token: 401, invalid_token", (st, body))
        if shutil.which("curl") is not None:
            st, _ = curl(c, "-H", "Content-Type: application/json", "-H",
                         "Accept: " + ACCEPT, "-H", "Authorization: Bearer "
                         "nope", "--data-binary", '{"jsonrpc":"2.0",'
                         '"id":1,"method":"ping"}')
            check(st == 401, "curl with a wrong token: 401", st)
        st, r, body = c.rpc("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}},
            headers=c.headers(auth, sid=False))
        check(st == 200, "the right token is let in", (st, body))
        c.sid = r.getheader("Mcp-Session-Id")
        st, _, sse = c.rpc("tools/call", {"name": "run_python", "arguments":
                           {"code": "import os\n"
                            "os.environ.get('COIL_HTTP_TOKEN')"}},
                           headers=c.headers(auth))
        _, ans, _ = sse.until_answer()
        check("Out[" not in text(ans) and TOKEN not in json.dumps(ans),
              "cells do not inherit the token", ans)
    finally:
        c.close()


def refused(w):
    tf = os.path.join(w, "token")
    with open(tf, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tf, 0o644)
    env = dict(os.environ)
    env.pop("COIL_HTTP_TOKEN", None)
    r = subprocess.run([COIL, "--mcp", "--http", "127.0.0.1:0",
                        "--http-token-file", tf, "--no-record"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, env=env)
    check(r.returncode != 0 and "chmod 600" in r.stderr, "a token file "
          "others may read is refused", r.stderr)
    fifo = os.path.join(w, "token-fifo")
    os.mkfifo(fifo, 0o600)
    r = subprocess.run([COIL, "--mcp", "--http", "127.0.0.1:0",
                        "--http-token-file", fifo, "--no-record"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, env=env)
    check(r.returncode != 0 and "not a file" in r.stderr, "a FIFO as the "
          "token file is refused, not waited on", r.stderr)
    r = subprocess.run([COIL, "--mcp", "--http", "0.0.0.0:0",
                        "--no-record"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60, env=env)
    check(r.returncode != 0 and "token" in r.stderr, "a bind off loopback "
          "without a token is refused", r.stderr)
    r = subprocess.run([COIL, "--agent", "--http", "127.0.0.1:0"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, env=env)
    check(r.returncode == 2 and "--mcp" in r.stderr, "--http without "
          "--mcp is a usage error", r.stderr)


def main():
    w = workdir()
    c = start("--workdir", w, "--max-request", "4000", "--timeout", "60")
    try:
        lifecycle(c)
        calls(c)
        cancel(c, w)
        resume(c, w)
        shared(c)
        stateless(c, w)
        guards(c)
        end(c)
    finally:
        rc = c.close()
    check(rc in (0, 128 + 15, -15), "coil ends on SIGTERM", (rc,
          c.stderr_text()[-2000:]))
    check(c.stderr_rest() == "", "coil said nothing else on stderr",
          c.stderr_rest()[-4000:])
    tokens(w)
    refused(w)
    os.chmod(os.path.join(w, "token"), stat.S_IRUSR | stat.S_IWUSR)
    cleanup(w)
    done()


main()
