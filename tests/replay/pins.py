#!/usr/bin/python3
"""A recorded rollback to a cell number replays as it ran.  The cell's
checkpoint was the session's, taken at a pause; the replay's cells run
back to back and get none there, so the replay pins the cell's state
once it has run and the rollback goes back to the pin.  And after a
second session --record appended to the file, cell 1 is that session's
cell 1, not the first session's.  A pin never takes the name of a
snapshot of the session's own, and a rollback recorded as failed does
not succeed on the pin."""
import os
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, cleanup, done, workdir  # noqa: E402

d = workdir()
T = os.path.join(d, "t.jsonl")


def session(name):
    """x = 1, a pause (the idle policy keeps cell 1 then), x = 2, back
    to cell 1: x is 1 again."""
    with Coil("--workdir", d, "--record", T, "--sandbox", "none") as c:
        c.run("%s = 1" % name)
        time.sleep(1.5)
        c.run("%s = 2" % name)
        r = c.call({"op": "rollback", "to": 1})
        check(r.get("status") == "ok" and r.get("cell") == 1,
              "%s: the session rolls back to cell 1" % name, r)
        r = c.run(name)
        check(r.get("result") == "1", "%s: is 1 again" % name, r)
        check(c.close() == 0, "%s: coil exits 0" % name, c.stderr_text())


def replay():
    return subprocess.run([COIL, "--replay", T, "--check", "--sandbox",
                           "none", "--workdir", workdir()],
                          capture_output=True, text=True, timeout=120)


session("x")
p = replay()
check(p.returncode == 0 and " 0 differ" in p.stdout,
      "the rollback to cell 1 replays: nothing differs", p.stdout + p.stderr)
session("y")
p = replay()
check(p.returncode == 0 and " 0 differ" in p.stdout and
      p.stdout.count("[rollback: ok]") == 2,
      "two sessions in one file: each rollback goes back to its own "
      "session's cell 1", p.stdout + p.stderr)

# A snapshot of the session's own named as a pin would be, and a
# rollback to cell 1 that failed (no checkpoint of it yet) before one
# that worked.
T = os.path.join(d, "t2.jsonl")
with Coil("--workdir", d, "--record", T, "--sandbox", "none") as c:
    c.run("z = 1")
    r = c.call({"op": "rollback", "to": 1})
    check(r.get("status") == "invalid", "a rollback to cell 1 at once: "
          "no checkpoint of it yet", r)
    r = c.call({"op": "snapshot", "name": "replay-0-1"})
    check(r.get("status") == "ok", "a snapshot named replay-0-1", r)
    time.sleep(1.5)
    c.run("z = 2")
    r = c.call({"op": "rollback", "to": 1})
    check(r.get("status") == "ok", "after a pause, it works", r)
    c.run("z = 3")
    r = c.call({"op": "rollback", "to": "replay-0-1"})
    check(c.run("z").get("result") == "1", "z is 1 by the snapshot too")
    check(c.close() == 0, "the session ends", c.stderr_text())
p = replay()
check(p.returncode == 0 and " 0 differ" in p.stdout and
      "[rollback: invalid]" not in p.stdout,
      "replayed: nothing differs, and the failed rollback does not "
      "succeed on the pin", p.stdout + p.stderr)
cleanup(d)
done()
