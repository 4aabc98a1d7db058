#!/usr/bin/python3
# The pristine checkpoint, the state reset goes back to, is taken once a
# fresh worker is up and nothing waits for it.  A cell sent before that
# runs at once, without waiting for a fork: then there is none, and reset,
# rollback to 0 or a crash start a new interpreter (which imports
# --preload again) and takes its pristine checkpoint once it is quiet.
# Listing the namespace first does not cost it; a completion (which may
# import) does.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, check_exit, workdir, cleanup)

wd = workdir()
# A worker that takes a third of a second to start: the first request is
# certainly waiting when it says hello.
with open(os.path.join(wd, "slowstart.py"), "w") as f:
    f.write("import time\ntime.sleep(0.3)\nSTARTS = 1\n")


def pristine(c):
    r = c.call({"op": "snapshots"})
    return [x for x in r["checkpoints"] if x["kind"] == "pristine"]


def started(c):
    """How many times slowstart was imported in this interpreter's life:
    1 in each new one."""
    r = c.call({"code": "import slowstart as _s; _s.STARTS"})
    return r.get("result")


# A cell waiting at hello: it runs, and no pristine checkpoint is taken.
with unsandboxed("--preload", "slowstart", workdir=wd) as c:
    r = c.call({"code": "v = 1"})
    check(r["status"] == "ok" and r["cell"] == 1, "the first cell ran", r)
    check(pristine(c) == [], "no pristine checkpoint: a cell came first")
    r = c.call({"op": "reset"})
    check(r["status"] == "ok" and r.get("from") == "new interpreter",
          "reset without one starts a new interpreter", r)
    r = c.call({"code": "'v' in dir()"})
    check(r.get("result") == "False", "the namespace is fresh", r)
    check(started(c) == "1", "--preload ran again in the new interpreter")
    # The new worker was quiet after the reset's answer: it kept itself.
    p = pristine(c)
    check(len(p) == 1 and p[0]["cell"] == 0,
          "the new interpreter took its pristine checkpoint", p)
    c.call({"code": "w = 2"})
    r = c.call({"op": "reset"})
    check(r["status"] == "ok" and r.get("from") == "pristine checkpoint",
          "the next reset goes back to it", r)
    r = c.call({"code": "'w' in dir()"})
    check(r.get("result") == "False", "the namespace is fresh again", r)
    check_exit(c, "coil exits 0 (a cell first)")

# Rollback to cell 0 without one: a new interpreter too, and the
# answer lists what it undid, as a rollback's does.
with unsandboxed("--preload", "slowstart", workdir=wd) as c:
    c.call({"code": "a = 1"})
    c.call({"code": "b = 2"})
    check(pristine(c) == [], "no pristine checkpoint: a cell came first")
    r = c.call({"op": "rollback", "to": 0})
    check(r["status"] == "ok" and r["cell"] == 0 and
          r.get("from") == "new interpreter" and
          r.get("rolled_back") == [1, 2],
          "rollback to 0 starts a new interpreter, undoing cells 1, 2", r)
    r = c.call({"code": "'a' in dir() or 'b' in dir()"})
    check(r.get("result") == "False", "the namespace is the start's", r)
    check(started(c) == "1", "--preload ran again in the new interpreter")
    check_exit(c, "coil exits 0 (rollback to 0)")

# Asked for the namespace first: the checkpoint comes before cell 1.
with unsandboxed("--preload", "slowstart", workdir=wd) as c:
    r = c.call({"op": "vars"})
    check(r["status"] == "ok", "vars answered by the new worker", r)
    p = pristine(c)
    check(len(p) == 1 and p[0]["cell"] == 0,
          "listing the namespace first leaves the pristine checkpoint", p)
    c.call({"code": "v = 1"})
    r = c.call({"op": "reset"})
    check(r["status"] == "ok" and r.get("from") == "pristine checkpoint",
          "reset goes back to it", r)
    check_exit(c, "coil exits 0 (vars first)")

# A rollback queued behind a reset to a new interpreter runs before that
# interpreter is quiet: the state it resumes is cell 1's, which must not
# become the pristine checkpoint (a review found it did).
with unsandboxed("--checkpoint-policy", "every", workdir=wd) as c:
    c.call({"code": "x = 1"})
    reset = c.send({"op": "reset"})
    back = c.send({"op": "rollback", "to": 1})
    r1, r2 = c.response(reset), c.response(back)
    check(r1["status"] == "ok" and r2["status"] == "ok" and r2["cell"] == 1,
          "reset, then a rollback to cell 1", (r1, r2))
    check(pristine(c) == [], "no pristine checkpoint of cell 1's state")
    r = c.call({"op": "reset"})
    r = c.call({"code": "'x' in dir()"})
    check(r.get("result") == "False", "reset is still a fresh namespace",
          r)
    check_exit(c, "coil exits 0 (a rollback behind a reset)")

# A completion first may import: no pristine checkpoint after it.
with unsandboxed("--preload", "slowstart", workdir=wd) as c:
    r = c.call({"op": "complete", "code": "import o"})
    check(r["status"] == "ok", "the completion was answered", r)
    check(pristine(c) == [], "none after a completion")
    check_exit(c, "coil exits 0 (a completion first)")

# The first cell crashes: a new interpreter, nothing claimed restored.
with unsandboxed("--preload", "slowstart", workdir=wd) as c:
    r = c.call({"code": "x = 1\nimport os\nos._exit(1)"})
    check(r["status"] == "crashed" and r["restored"]["cell"] is None,
          "a crash in cell 1 comes back to a fresh start", r)
    r = c.call({"code": "'x' in dir()"})
    check(r.get("result") == "False", "x is gone", r)
    check(started(c) == "1", "--preload ran in the new interpreter")
    p = pristine(c)
    check(len(p) == 1, "which took its pristine checkpoint", p)
    check_exit(c, "coil exits 0 (a crash first)")

cleanup(wd)
done()
