#!/usr/bin/python3
"""stdin.py - a notebook whose cells read input() replays as Jupyter ran
it (TAP).

nbconvert and nbclient run a notebook with allow_stdin=False: ipykernel
then raises StdinNotImplementedError ("raw_input was called, but this
frontend does not support input requests.") from input(), and its
getpass() likewise, without showing the prompt; sys.stdin reads its
end.  A notebook of such cells is executed here by the real ipykernel
(`jupyter nbconvert --execute --allow-errors`, as sympy.py does), then
`coil --replay --check` must find every cell the same (issue 24).  An
agent's cell, which no notebook ran, keeps coil's EOFError (coil(1)).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, check_exit, done, skip_all  # noqa

NBCONVERT = shutil.which("jupyter-nbconvert")
if NBCONVERT is None:
    skip_all("jupyter-nbconvert is not installed (setup.sh installs it)")
try:
    import ipykernel  # noqa: F401
    import nbformat
except ImportError:
    skip_all("python3-ipykernel or python3-nbformat is not installed "
             "(setup.sh installs them)")

WORK = tempfile.mkdtemp(prefix="stdin-", dir=os.environ.get("TEST_WORKDIR"))
ENV = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1")

CELLS = [
    "x = 1",
    "name = input('your name? ')\nprint('hi', name)",
    "try:\n    input()\nexcept Exception as e:\n"
    "    print(type(e).__name__, [c.__name__ for c in type(e).__mro__], e)",
    "try:\n    input('again? ')\nexcept NotImplementedError:\n"
    "    print('not implemented')",
    "def ask():\n    return input()\nprint('before')\nask()",
    "import getpass\ngetpass.getpass('pw: ')",
    "import sys\nprint(repr(sys.stdin.readline()), list(sys.stdin))",
    "x + 1",
]

src = os.path.join(WORK, "asks.ipynb")
nb = nbformat.v4.new_notebook()
nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
nbformat.write(nb, src)
run = subprocess.run([NBCONVERT, "--to", "notebook", "--execute",
                      "--allow-errors", "--output-dir", WORK, "--output",
                      "asks.jupyter.ipynb",
                      "--ExecutePreprocessor.kernel_name=python3",
                      "--ExecutePreprocessor.timeout=120", src],
                     capture_output=True, text=True, timeout=600, env=ENV)
executed = os.path.join(WORK, "asks.jupyter.ipynb")
if run.returncode != 0 or not os.path.exists(executed):
    check(False, "jupyter nbconvert executes the notebook",
          run.stderr[-2000:])
    done()

with open(executed, encoding="utf-8") as f:
    ran = [c for c in json.load(f)["cells"] if c["cell_type"] == "code"]
errors = [o for o in ran[1]["outputs"] if o["output_type"] == "error"]
check(len(ran[1]["outputs"]) == 1 and errors and errors[0]["ename"] ==
      "StdinNotImplementedError" and errors[0]["evalue"] ==
      "raw_input was called, but this frontend does not support input "
      "requests.", "Jupyter: input() is StdinNotImplementedError, no "
      "prompt shown", ran[1]["outputs"])

p = subprocess.run([COIL, "--replay", executed, "--check", "--no-record"],
                   cwd=WORK, capture_output=True, text=True, timeout=300)
check(p.returncode == 0 and "%d cells replayed" % len(CELLS) in p.stdout
      and ", 0 differ," in p.stdout, "coil --replay --check: every cell "
      "as Jupyter gave it (input, getpass, sys.stdin)",
      p.stdout[-4000:] + p.stderr[-2000:])

with Coil("--no-record", cwd=WORK) as c:
    r = c.run("input('name? ')")
    err = r.get("error") or {}
    check(r.get("status") == "error" and err.get("type") == "EOFError" and
          "stdin is not available" in err.get("message", ""),
          "an agent's input() is still coil's EOFError", r)
    check_exit(c)
shutil.rmtree(WORK, ignore_errors=True)
done()
