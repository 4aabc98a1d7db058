#!/usr/bin/python3
# The complete op as IPython completes: magics' names after % and %%,
# dict keys and DataFrame columns
# inside d["..., module names after import and from X import, a module's
# names after from X import, file names inside a string left open, and
# the names and attributes it always gave.  Each match replaces
# code[start:end].
import os
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

CASES = [
    # (what, code, start, matches: exactly, or a list that must be in)
    ("a dict's keys inside d[\"", 'd["al', 3, ["alpha"]),
    ("with a single quote, all str keys", "d['", 3, ["alpha", "beta"]),
    ("a DataFrame's columns", 'df["p', 4, ["price"]),
    ("module names after import", "import jso", 7, ["json"], "in"),
    ("a package's modules after a dot", "import email.mi", 13, ["mime"]),
    ("a module that is an attribute", "import os.pa", 10, ["path"]),
    ("after a comma", "import os, coll", 11, ["collections"]),
    ("a module's names after from X import", "from os import pa", 15,
     ["path", "pathsep"], "in"),
    ("file names inside an open string", 'open("da', 6,
     ["dat2.txt", "data.csv"]),
    ("a directory ends in /", 'open("su', 6, ["sub/"]),
    ("inside a directory", "open('sub/", 10, ["inner.py"]),
    ("hidden files only when asked", "open('.", 6, [".hidden"]),
    ("names, as before", "ite", 0, ["iter"]),
    ("attributes, as before", "d.ke", 0, ["d.keys"]),
    ("no string, no files", "dat", 0, []),
    ("a line magic's name", "%ti", 0, ["%time", "%timeit"]),
    ("a cell magic's name", "%%ti", 0, ["%%time", "%%timeit"]),
    ("a line magic on a later line", "x = 1\n%who", 6,
     ["%who", "%who_ls", "%whos"]),
    ("a line magic after =", "names = %who_", 8, ["%who_ls"]),
    ("a cell magic only at the cell's start", "x = 1\n%%ti", 8, []),
    ("% between values is Python's", "a %ra", 3, ["raise", "range"]),
    ("no magics inside a string", 'print("x=%de', 7, []),
]


def main():
    with tempfile.TemporaryDirectory(prefix="coil-complete-") as wd:
        for name in ("data.csv", "dat2.txt", ".hidden", "sub/inner.py"):
            os.makedirs(os.path.dirname(os.path.join(wd, name)),
                        exist_ok=True)
            open(os.path.join(wd, name), "w").close()
        with Coil(cwd=wd) as c:
            r = c.call({"code": "d = {'alpha': 1, 'beta': 2, 3: 4}\n"
                        "import pandas as pd\n"
                        "df = pd.DataFrame({'price': [1], 'qty': [2]})"})
            check(r["status"] == "ok", "the namespace", r)
            for what, code, start, want, *how in CASES:
                r = c.call({"op": "complete", "code": code})
                got = r.get("matches")
                ok = r.get("start") == start and r.get("end") == len(code) \
                    and (set(want) <= set(got or ()) if how else got == want)
                check(ok, what, "start %r matches %r" % (r.get("start"), got))
    done()


main()
