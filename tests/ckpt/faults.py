#!/usr/bin/python3
# Checkpoint processes killed or stopped from outside: the next restore
# falls back to the one before and says so; a rollback to a dead snapshot
# is invalid and changes nothing; a stopped one is given up on in time.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, wait_for, dead, check_exit)


def ckpts(c):
    return c.call({"op": "snapshots"})["checkpoints"]


def kill(pid, sig=signal.SIGKILL):
    os.kill(pid, sig)
    if sig == signal.SIGKILL:
        wait_for(lambda: dead(pid))


# --redo none: what a restore itself gives back (tests/ckpt/redo.py runs
# the lost cells again).
# "every": this pins one checkpoint per cell (policy.py tests the default).
with unsandboxed("--redo", "none", "--checkpoint-policy", "every") as c:
    for i in range(1, 5):
        c.call({"code": "v = %d" % i})
    # The newest checkpoint (cell 4) dies; a crash in cell 5 goes back to
    # cell 3 and says why.
    newest = [x for x in ckpts(c) if x["cell"] == 4][0]
    kill(newest["pid"])
    r = c.call({"code": "v = 5\nimport os\nos._exit(1)"})
    check(r["status"] == "crashed" and r["restored"]["cell"] == 3,
          "newest checkpoint killed: restored to cell 3", r)
    w = " ".join(r.get("warnings", []))
    check("cell 4" in w and "killed from outside" in w,
          "a warning names the lost checkpoint", r)
    r = c.call({"code": "v"})
    check(r.get("result") == "3", "the namespace is at cell 3", r)

    # Every checkpoint of the line killed: a fresh namespace, said so.
    for x in ckpts(c):
        if x["kind"] != "pristine":
            kill(x["pid"])
    r = c.call({"code": "import os; os._exit(2)"})
    check(r["status"] == "crashed" and r["restored"]["cell"] is None,
          "all killed but the pristine one: fresh namespace", r)
    check("nothing could be restored" in r["error"]["message"],
          "the message says nothing could be restored", r)
    r = c.call({"code": "'v' in dir()"})
    check(r.get("result") == "False", "v is gone", r)

    # The pristine one killed as well: a new interpreter still comes up.
    c.call({"code": "u = 1"})
    for x in ckpts(c):
        kill(x["pid"])
    r = c.call({"code": "import os; os._exit(3)"})
    check(r["status"] == "crashed" and r["restored"]["cell"] is None,
          "no checkpoint at all: fresh start", r)
    r = c.call({"code": "1 + 1"})
    check(r.get("result") == "2", "the session goes on", r)

    # A snapshot killed from outside: rollback is invalid, nothing changes.
    c.call({"code": "s = 'before'"})
    r = c.call({"op": "snapshot", "name": "victim"})
    pid = [x for x in ckpts(c) if x["name"] == "victim"][0]["pid"]
    c.call({"code": "s = 'after'"})
    kill(pid)
    r = c.call({"op": "rollback", "to": "victim"})
    check(r["status"] == "invalid" and "killed from outside" in
          r["error"]["message"], "rollback to a killed snapshot: invalid",
          r)
    r = c.call({"code": "s"})
    check(r.get("result") == "'after'", "... and nothing changed", r)

    # The pristine one killed from outside: rollback to 0 is still the
    # start, a new interpreter.
    p = [x for x in ckpts(c) if x["kind"] == "pristine"]
    check(len(p) == 1, "the new interpreter took a pristine checkpoint", p)
    if p:
        kill(p[0]["pid"])
    r = c.call({"op": "rollback", "to": 0})
    check(r["status"] == "ok" and r["cell"] == 0 and
          r.get("from") == "new interpreter",
          "rollback to 0, its pristine checkpoint killed: a new "
          "interpreter", r)
    r = c.call({"code": "'s' in dir()"})
    check(r.get("result") == "False", "... with nothing in it", r)
    r = c.call({"op": "snapshots"})
    check(not any(x["name"] == "victim" for x in r["checkpoints"]),
          "the dead one is no longer listed", r)

    # A stopped checkpoint never answers the resume: it is killed after
    # a while and the one before it is used.  The worker's death may
    # orphan the stopped checkpoint's process group, and the kernel then
    # sends it SIGHUP (and SIGCONT), which ends it: whichever comes first,
    # coil must give up on it and say so.
    c.call({"code": "t = 1"})
    c.call({"code": "t = 2"})
    newest = [x for x in ckpts(c) if x["current"]][0]
    os.kill(newest["pid"], signal.SIGSTOP)
    t0 = time.time()
    r = c.call({"code": "import os; os._exit(4)"}, timeout=30)
    dt = time.time() - t0
    check(r["status"] == "crashed" and r["restored"]["cell"] ==
          newest["cell"] - 1, "stopped checkpoint: the one before is used "
          "(after %.1f s)" % dt, r)
    check(any("died as it was resumed" in w or "killed from outside" in w
              for w in r.get("warnings", [])),
          "stopped checkpoint: said so", r)
    check(wait_for(lambda: dead(newest["pid"]), 5),
          "the stopped one was killed", newest)
    check_exit(c, "coil exits 0")
done()
