"""%timeit in coil and in IPython: the same statements, the same options,
side by side.  Both run the statement in the same CPython 3.11 with the
same timer, so the figures must be of one order of magnitude; a ratio
far from 1 means coil's %timeit measures something else (its own call
overhead, a namespace that is not the cell's).

    /usr/bin/python3 bench/timeit-magic.py

Environment: COIL (the coil binary, as for the tests).  Prints a Markdown
table on stdout; exits 1 if a ratio is outside [0.1, 10].  IPython is
Debian's python3-ipython (setup.sh installs it); without it the table
says n/a and the exit status is 0.

Not named timeit.py: bench/ is first on the path of every bench/ script,
and that name shadowed the standard module, which IPython imports (as
jupyter_client does in bench.py), running this table instead.
"""
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from coiltest import Coil  # noqa: E402

PY = "/usr/bin/python3"
SETUP = "import math\ndata = list(range(1000))\nd = {i: i for i in range(100)}"
STATEMENTS = [
    "pass",
    "sum(data)",
    "sorted(data, reverse=True)",
    "[x * x for x in data]",
    "math.sqrt(2.0)",
    "d.get(50)",
    "'-'.join(map(str, data[:100]))",
]
OPTS = "-r 7"

IPYTHON = r"""
import io, sys, json, contextlib
from IPython.core.interactiveshell import InteractiveShell
sh = InteractiveShell.instance()
req = json.load(sys.stdin)
sh.run_cell(req["setup"])
out = []
for stmt in req["stmts"]:
    raw = io.BytesIO()
    buf = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(buf):
        sh.run_cell("%%timeit %s %s" % (req["opts"], stmt))
    out.append(raw.getvalue().decode())
json.dump(out, sys.stdout)
"""

SCALE = {"s": 1.0, "ms": 1e-3, "\u00b5s": 1e-6, "us": 1e-6, "ns": 1e-9}


def seconds(line):
    """The mean of a %timeit line, in seconds, or None."""
    m = re.search(r"([\d.]+) (s|ms|\u00b5s|us|ns) (\u00b1|\+-)", line)
    return float(m.group(1)) * SCALE[m.group(2)] if m else None


def in_coil():
    with Coil("--sandbox", "none", "--timeout", "600") as c:
        c.call({"code": SETUP})
        return [c.call({"code": "%%timeit %s %s" % (OPTS, s)})["output"]
                for s in STATEMENTS]


def in_ipython():
    p = subprocess.run([PY, "-c", IPYTHON], capture_output=True, text=True,
                       input=json.dumps({"setup": SETUP, "opts": OPTS,
                                         "stmts": STATEMENTS}))
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)


def main():
    coil = in_coil()
    ipy = in_ipython()
    bad = False
    print("| statement | coil %timeit | IPython %timeit | coil/IPython |")
    print("| --- | --- | --- | --- |")
    for i, stmt in enumerate(STATEMENTS):
        a = coil[i].strip().split("\n")[-1]
        b = ipy[i].strip().split("\n")[-1] if ipy else "n/a (no IPython)"
        ta, tb = seconds(a), seconds(b) if ipy else None
        ratio = "%.2f" % (ta / tb) if ta and tb else "n/a"
        if ta and tb and not 0.1 <= ta / tb <= 10:
            bad = True
        print("| `%s` | %s | %s | %s |" % (stmt, a, b, ratio))
    sys.exit(1 if bad else 0)


main()
