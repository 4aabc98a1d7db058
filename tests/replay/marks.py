#!/usr/bin/python3
"""A rollback or a reset changes the namespace the cells above it built,
which a notebook run from the top would not do: a notebook of the
session (--export, %save FILE.ipynb) says so in a markdown cell where it
happened, naming the cell the namespace went back to, the snapshot and
the cells undone.  A rollback that failed leaves no mark.  coil --replay
of the notebook does them again where they are marked, so --check finds
the cells after them as they were (a rollback's cell is pinned once it
has run: the replay's cells, back to back, get no checkpoint of their
own), by its execution count or, where outputs were cleared, its place.
"""
import json
import os
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, check_notebook, cleanup,  # noqa
                      done, workdir)

d = workdir()
exported = os.path.join(d, "exported.ipynb")
with Coil("--workdir", d, "--no-record", "--export", exported) as c:
    c.run("x = 1")
    c.call({"op": "snapshot", "name": "a"})
    c.run("x = 2")
    c.run("x = 3")
    r = c.call({"op": "rollback", "to": "a"})
    check(r.get("status") == "ok", "the rollback works", r)
    r = c.call({"op": "rollback", "to": "nope"})
    check(r.get("status") == "invalid", "a rollback to nothing fails", r)
    check(c.run("x").get("result") == "1", "x is back at 1")
    c.call({"op": "reset"})
    r = c.run("%save saved.ipynb")
    check(r.get("status") == "ok", "%save writes the notebook", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

ROLLED = ('*coil: the namespace was rolled back to the state after cell 1 '
          '(snapshot "a"); what cells 2 and 3 did to it is undone.*')
RESET = ("*coil: the namespace was reset; what the cells above defined is "
         "gone.*")
for name, path in (("--export", exported),
                   ("%save", os.path.join(d, "saved.ipynb"))):
    check_notebook(path, name + ": a valid notebook")
    with open(path) as f:
        cells = json.load(f)["cells"]
    seq = [("md:" if c["cell_type"] == "markdown" else "") +
           "".join(c["source"]) for c in cells]
    want = ["x = 1", "x = 2", "x = 3", "md:" + ROLLED, "x", "md:" + RESET]
    check(seq[:6] == want,
          name + ": the rollback and the reset are marked where they "
          "happened, the failed rollback not at all", seq)
    check(len({c["id"] for c in cells}) == len(cells),
          name + ": every cell has its own id", [c["id"] for c in cells])


def replay(path, *args):
    """coil --replay path in a work dir of its own (the session's %save
    wrote saved.ipynb in d)."""
    return subprocess.run([COIL, "--replay", path, "--sandbox", "none",
                           "--workdir", workdir(), *args],
                          capture_output=True, text=True, timeout=120)


# A session with a rollback to a cell only a pause kept (1.5 s without a
# request: the idle policy's checkpoint), a reset and a rollback to the
# start.
paused = os.path.join(d, "paused.ipynb")
with Coil("--workdir", d, "--no-record", "--export", paused) as c:
    c.run("x = 1")
    time.sleep(1.5)
    c.run("x = 2")
    r = c.call({"op": "rollback", "to": 1})
    check(r.get("status") == "ok", "a rollback to cell 1's checkpoint", r)
    check(c.run("x").get("result") == "1", "x is back at 1")
    c.call({"op": "reset"})
    c.run("y = 5")
    c.call({"op": "rollback", "to": 0})
    check(c.run("'y' in dir()").get("result") == "False",
          "a rollback to 0 leaves nothing")
    check(c.close() == 0, "coil exits 0", c.stderr_text())

for name, path in (("--export", exported), ("a pause's checkpoint", paused)):
    p = replay(path, "--check")
    check(p.returncode == 0 and " 0 differ" in p.stdout,
          name + ": the notebook replays with its marks, nothing differs",
          p.stdout[-1500:] + p.stderr)
    check("[rollback: ok]" in p.stdout and "[reset: ok]" in p.stdout,
          name + ": the marks' rollback and reset run", p.stdout[-1500:])

# Outputs cleared (Jupyter's Clear All Outputs, nbstripout): no counts,
# and the cell a mark names is found by its place.
with open(paused) as f:
    nb = json.load(f)
for c in nb["cells"]:
    if c["cell_type"] == "code":
        c["execution_count"] = None
        c["outputs"] = []
cleared = os.path.join(d, "cleared.ipynb")
with open(cleared, "w") as f:
    json.dump(nb, f)
p = replay(cleared)
check(p.returncode == 0 and "[rollback: ok]" in p.stdout and
      "In [3]: x\nOut[3]: 1" in p.stdout,
      "outputs cleared: the mark still goes back to cell 1's state",
      (p.returncode, p.stdout[-800:], p.stderr))
cleanup(d)
done()
