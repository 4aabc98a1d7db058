#!/usr/bin/python3
"""A checkpoint's frame is checked against the worker as its parent,
which only a live worker can be.  A cell sent while a checkpoint was on
its way used to reach the worker before the supervisor had read that
frame: when the cell killed the worker first, the frame came "late",
the checkpoint was dropped, and the crash went back a cell further than
it had to (seen once in CI as random's state differing after a restore,
and under load as two threads lost that were never counted).  Now a
request for the worker waits till the checkpoint on its way is read.

The hooked build (tests/coil-hooked) makes the supervisor wait 300 ms
before it checks a checkpoint's frame, the worst a loaded machine does:
without the wait for the frame, every crash here went back to cell 1.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, hooked  # noqa: E402

HOOKED = hooked()
env = dict(os.environ, COIL_TEST_SLOW_CKPT_MS="300")
CRASH = "import os\nos._exit(1)"

for sandbox in ("none", "standard"):
    with Coil("--no-record", "--sandbox", sandbox, "--checkpoint-policy",
              "every", argv0=HOOKED, env=env) as c:
        c.run("x = 1")
        r = c.run("x = 2")
        check(r.get("cell") == 2, "%s: two cells ran" % sandbox, r)
        # one after the other, each sent when the answer before came
        r = c.run(CRASH)
        check(r.get("status") == "crashed" and
              (r.get("restored") or {}).get("cell") == 2 and
              r["restored"].get("lost") == [],
              "%s: a crash right after a cell goes back to that cell"
              % sandbox, r)
        check(not r.get("warnings"), "%s: and warns of nothing" % sandbox,
              r)
        r = c.run("x")
        check(r.get("result") == "2", "%s: x is the cell's" % sandbox, r)
        # pipelined: the cell and the crash sent together
        a = c.send({"code": "x = 3"})
        b = c.send({"code": CRASH})
        ra, rb = c.response(a), c.response(b)
        check(ra.get("status") == "ok" and rb.get("status") == "crashed" and
              (rb.get("restored") or {}).get("cell") == ra.get("cell"),
              "%s: pipelined, the crash goes back to the cell before it"
              % sandbox, (ra, rb))
        r = c.run("x")
        check(r.get("result") == "3", "%s: x is 3" % sandbox, r)
done()
