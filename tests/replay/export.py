#!/usr/bin/python3
"""export.py - --export FILE.ipynb (TAP).

An agent session exported as nbformat 4.5: streams, execute_result, the
error with its traceback, a figure as display_data with its PNG; it
passes nbformat.validate, nbconvert executes it again, and coil replays
it with --check against the outputs it wrote.  A cell showing 20
images: the first 16 are embedded, the answer warns the other 4 stay
paths.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, check_exit, check_notebook,  # noqa
                      done, skip)

WORK = tempfile.mkdtemp(prefix="exp-", dir=os.environ.get("TEST_WORKDIR"))
NB = os.path.join(WORK, "s.ipynb")

c = Coil("--export", NB, "--no-record", cwd=WORK)
c.run("print('hello')\n6 * 7")
c.run("import sys; print('warn', file=sys.stderr)")
fig = c.run("import matplotlib\nmatplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]); None")
c.run("def g():\n    raise ValueError('bad')\ng()")
c.run("for i in range(3):")
check(not os.path.exists(NB), "nothing is written before the session ends")
check_exit(c)
try:
    with open(NB, encoding="utf-8") as f:
        nb = json.load(f)
except (OSError, ValueError) as e:
    nb = {"error": str(e)}
cells = nb.get("cells", [])
check(nb.get("nbformat") == 4 and nb.get("nbformat_minor") == 5 and
      len(cells) == 5 and all(x.get("id") for x in cells),
      "the session is a notebook of nbformat 4.5, a cell each, with ids",
      json.dumps(nb)[:500])
outs = [x.get("outputs", []) for x in cells] + [[]] * 5
check([(o["output_type"], o.get("name")) for o in outs[0]] ==
      [("stream", "stdout"), ("execute_result", None)] and
      outs[0][0]["text"] == "hello\n" and
      outs[0][1]["data"]["text/plain"] == "42" and
      outs[0][1]["execution_count"] == 1,
      "stream output, then the result with its execution count", outs[0])
check(outs[1] and outs[1][0].get("name") == "stderr",
      "stderr is a stream of its own", outs[1])
png = [o for o in outs[2] if o["output_type"] == "display_data"]
if fig.get("display"):
    raw = base64.b64decode(png[0]["data"]["image/png"]) if png else b""
    check(raw.startswith(b"\x89PNG") and
          png[0]["metadata"]["image/png"].get("width"),
          "a figure is display_data with its PNG and size", outs[2])
else:
    skip("a figure is display_data", "matplotlib made no figure here: %s"
         % fig.get("error"))
err = [o for o in outs[3] if o["output_type"] == "error"]
check(err and err[0]["ename"] == "ValueError" and
      err[0]["evalue"] == "bad" and any("raise ValueError" in l for l in
                                        err[0]["traceback"]),
      "an error: ename, evalue and the traceback", outs[3])
check(cells[4]["execution_count"] is None if len(cells) > 4 else False,
      "a cell that never ran has no execution count")

check_notebook(NB, "the notebook passes nbformat.validate")

# coil replays its own notebook and finds the same outputs
p = subprocess.run([COIL, "--replay", NB, "--check", "--no-record"],
                   cwd=WORK, capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "0 differ" in p.stdout,
      "coil --replay --check of the exported notebook matches",
      p.stdout[-2000:] + p.stderr)

nbconvert = shutil.which("jupyter-nbconvert")
if nbconvert is None:
    skip("nbconvert executes the notebook", "jupyter-nbconvert is not "
         "installed (setup.sh installs it)")
else:
    p = subprocess.run([nbconvert, "--to", "notebook", "--execute",
                        "--allow-errors", "--output", "again.ipynb",
                        "--ExecutePreprocessor.kernel_name=python3", NB],
                       cwd=WORK, capture_output=True, text=True,
                       timeout=300,
                       env=dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1",
                                MPLBACKEND="Agg"))
    check(p.returncode == 0 and
          os.path.exists(os.path.join(WORK, "again.ipynb")),
          "jupyter nbconvert executes the exported notebook again",
          p.stderr[-2000:])

# A cell showing 20 images: an answer carries at most 16 image files
# (chan.h's CHAN_FIGURES_MAX), so 16 are embedded in order, the other 4
# stay paths, and the answer's warning says so.
NB20 = os.path.join(WORK, "twenty.ipynb")
c = Coil("--export", NB20, "--no-record", cwd=WORK)
r = c.run("class P:\n"
          "    def __init__(self, i):\n"
          "        self.i = i\n"
          "    def _repr_png_(self):\n"
          "        return b'\\x89PNG\\r\\n\\x1a\\nIMG%02d' % self.i\n"
          "for i in range(20):\n"
          "    display(P(i))")
warned = [w for w in r.get("warnings", []) if "left as paths" in w]
check(r.get("status") == "ok" and len(warned) == 1 and
      warned[0].startswith("4 images after the cell's first 16 "),
      "20 images in a cell: the answer warns that 4 were left as paths",
      {k: r.get(k) for k in ("status", "error", "warnings")})
check_exit(c)
try:
    with open(NB20, encoding="utf-8") as f:
        outs = json.load(f)["cells"][0]["outputs"]
except (OSError, ValueError, LookupError) as e:
    outs = [{"error": str(e)}]
pngs = [base64.b64decode(o["data"]["image/png"])[8:] for o in outs
        if "image/png" in o.get("data", {})]
paths = [o["data"]["text/plain"] for o in outs
         if o.get("output_type") == "display_data" and
         "image/png" not in o.get("data", {})]
check(pngs == [b"IMG%02d" % i for i in range(16)] and
      [os.path.basename(p) for p in paths] ==
      ["cell-1-display-%d.png" % i for i in range(17, 21)],
      "the notebook embeds the first 16 and names the other 4",
      {"pngs": pngs, "paths": paths})
done()
