#!/usr/bin/python3
# "atomic": true - a cell that raises leaves no trace; one that succeeds
# keeps its changes.  With checkpoints on, off, after a syntax error, and
# when the checkpoint of the state before it was killed.
import os
import signal
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, wait_for, dead, check_exit)


def session(c, label):
    c.call({"code": "data = [1, 2]\nn = 0"})
    r = c.call({"code": "data.append(3)\nn += 1\nprint('partial')\n"
                "raise ValueError('boom')", "atomic": True})
    check(r["status"] == "error" and r["error"]["type"] == "ValueError",
          "%s: the error is reported" % label, r)
    check(r["output"] == "partial\n", "%s: the output too" % label, r)
    check(isinstance(r.get("restored"), dict) and
          r["restored"]["cell"] == r["cell"] - 1,
          "%s: restored says the cell before" % label, r)
    r = c.call({"code": "data, n"})
    check(r.get("result") == "([1, 2], 0)", "%s: no trace left" % label, r)

    r = c.call({"code": "data.append(9)", "atomic": True})
    check(r["status"] == "ok" and "restored" not in r,
          "%s: a cell that succeeds is not undone" % label, r)
    r = c.call({"code": "data"})
    check(r.get("result") == "[1, 2, 9]", "%s: its change stays" % label, r)

    # After a syntax error (no checkpoint for that cell) and a vars op.
    c.call({"code": "def ("})
    c.call({"op": "vars"})
    r = c.call({"code": "data.clear()\n1/0", "atomic": True})
    check(r["status"] == "error" and r.get("restored") is not None,
          "%s: after a syntax error: rolled back" % label, r)
    r = c.call({"code": "data"})
    check(r.get("result") == "[1, 2, 9]",
          "%s: after a syntax error: state kept" % label, r)

    # Two atomic failures in a row.
    for i in range(2):
        r = c.call({"code": "data.pop()\nraise KeyError(%d)" % i,
                    "atomic": True})
    r = c.call({"code": "len(data)"})
    check(r.get("result") == "3", "%s: twice in a row" % label, r)

    # A timeout in an atomic cell (interrupted, not killed) is undone too.
    r = c.call({"code": "data.append('t')\nimport time\ntime.sleep(10)",
                "atomic": True, "timeout": 0.3})
    check(r["status"] == "timeout" and r.get("restored") is not None,
          "%s: a timed-out atomic cell is undone" % label, r)
    r = c.call({"code": "len(data)"})
    check(r.get("result") == "3", "%s: ... and leaves no trace" % label, r)


# "every": this pins one checkpoint per cell (policy.py tests the default).
with unsandboxed("--checkpoint-policy", "every") as c:
    session(c, "checkpoints on")
    r = c.call({"op": "snapshots"})
    kinds = [x["kind"] for x in r["checkpoints"]]
    check("atomic" not in kinds, "no temporary checkpoint left", kinds)

    # The checkpoint of the state before the cell, killed from outside:
    # the worker takes another before it runs the atomic cell.
    c.call({"code": "q = 'kept'"})
    r = c.call({"op": "snapshots"})
    cur = [x for x in r["checkpoints"] if x["current"]]
    check(len(cur) == 1, "the current state has a checkpoint", r)
    os.kill(cur[0]["pid"], signal.SIGKILL)
    # Wait for the exit itself: a kill takes effect a moment later.
    wait_for(lambda: dead(cur[0]["pid"]))
    r = c.call({"code": "q = 'changed'\nraise RuntimeError",
                "atomic": True})
    check(r["status"] == "error" and r.get("restored") is not None,
          "current checkpoint killed: still rolled back", r)
    r = c.call({"code": "q"})
    check(r.get("result") == "'kept'",
          "current checkpoint killed: no trace", r)
    check_exit(c, "coil exits 0")

with unsandboxed("--checkpoints", "0") as c:
    session(c, "--checkpoints 0")
    r = c.call({"op": "snapshots"})
    check(r["count"] == 0, "--checkpoints 0: none left afterwards", r)
    check_exit(c, "coil --checkpoints 0 exits 0")
done()
