#!/usr/bin/python3
"""An interrupt is sent by init, which the supervisor asks through a
socket.  When init is slow to send it, the cell it was meant for may
end first; the next cell must not get it.  The supervisor holds the
worker's next request until init says the signal is out, and the
worker drops a signal that lands between requests.

The hooked build (tests/coil-hooked) makes init wait 600 ms before each
interrupt.  Cell A sleeps 0.3 s and is interrupted at once, so it ends
on its own before the signal goes; cell B, queued behind it, runs a
second and must finish.  Without the hold B got the KeyboardInterrupt.
The same run through the MCP server: notifications/cancelled.
"""
import json
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, hooked  # noqa: E402

HOOKED = hooked()
env = dict(os.environ, COIL_TEST_LATE_INTERRUPT_MS="600")

with Coil("--no-record", argv0=HOOKED, env=env) as c:
    c.run("warm = 1")
    a = c.send({"code": "import time\ntime.sleep(0.3)\n'A ended'"})
    b = c.send({"code": "import time\ntime.sleep(1)\n'B ended'"})
    time.sleep(0.05)
    i = c.call({"op": "interrupt"})
    ra, rb = c.response(a), c.response(b)
    check(i.get("status") == "ok" and ra.get("status") in ("ok",
                                                          "interrupted"),
          "the interrupt is taken while A runs", (i, ra))
    check(rb.get("status") == "ok" and rb.get("result") == "'B ended'",
          "B, queued behind A, is not hit by A's late interrupt", rb)
    r = c.run("'after'")
    check(r.get("result") == "'after'", "the session goes on", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

with Coil(argv=[HOOKED, "--mcp", "--no-record"], env=env) as m:
    def call(rid, code):
        m.send_raw(json.dumps({"jsonrpc": "2.0", "id": rid, "method":
                               "tools/call", "params": {
                                   "name": "run_python",
                                   "arguments": {"code": code}}}).encode()
                   + b"\n")
    call("warm", "warm = 1")
    m.response("warm")
    call("a", "import time\ntime.sleep(0.3)\n'A ended'")
    call("b", "import time\ntime.sleep(1)\n'B ended'")
    time.sleep(0.05)
    m.send_raw(b'{"jsonrpc": "2.0", "method": "notifications/cancelled", '
               b'"params": {"requestId": "a"}}\n')
    r = m.response("b")
    sc = (r.get("result") or {}).get("structuredContent") or {}
    check(sc.get("result") == "'B ended'",
          "MCP: a call cancelled as it ends does not stop the next", r)
    check(not any(e.get("id") == "a" for e in m.events),
          "and the cancelled call is not answered", m.events)
    check(m.close() == 0, "coil --mcp exits 0", m.stderr_text())
done()
