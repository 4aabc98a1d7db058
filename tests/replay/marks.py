#!/usr/bin/python3
"""A rollback or a reset changes the namespace the cells above it built,
which a notebook run from the top would not do: a notebook of the
session (--export, %save FILE.ipynb) says so in a markdown cell where it
happened, naming the cell the namespace went back to, the snapshot and
the cells undone.  A rollback that failed leaves no mark.
"""
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, check_notebook, cleanup, done, workdir  # noqa

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
cleanup(d)
done()
