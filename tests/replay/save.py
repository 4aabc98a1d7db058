#!/usr/bin/python3
"""save.py - %save FILE.ipynb from inside a session (TAP).

The notebook of the session so far, built by the supervisor and written
by the worker under the sandbox's rights: it passes nbformat.validate
and holds each cell's outputs (stream, execute_result, error), the
streams in the order they came; an
existing file is kept unless -f; a path the sandbox forbids is a clear
PermissionError and no file; %save FILE.py keeps IPython's meaning; a
cell that asks for the notebook twice in a row gets it twice.
"""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, check_exit, check_notebook,  # noqa
                      done, skip)

WORK = tempfile.mkdtemp(prefix="save-", dir=os.environ.get("TEST_WORKDIR"))
# outside the work dir, in a temp dir of the test's own that the worker
# may read (so it sees it) but not write
OUT = tempfile.mkdtemp(prefix="coil-save-out-", dir="/tmp")
NB = os.path.join(WORK, "s.ipynb")

c = Coil("--no-record", "--allow-read", OUT, cwd=WORK)
c.run("print('hello')\n6 * 7")
c.run("import sys; print('warn', file=sys.stderr)")
c.run("def g():\n    raise ValueError('bad')\ng()")
r = c.run("%save s.ipynb")
check(r.get("status") == "ok" and "3 cells written to the notebook "
      "`s.ipynb`" in r.get("output", ""),
      "%save FILE.ipynb says how many cells it wrote", r)
try:
    with open(NB, encoding="utf-8") as f:
        nb = json.load(f)
except (OSError, ValueError) as e:
    nb = {"error": str(e)}
cells = nb.get("cells", [])
outs = [x.get("outputs", []) for x in cells] + [[]] * 3
check(nb.get("nbformat") == 4 and nb.get("nbformat_minor") == 5 and
      len(cells) == 3, "the notebook is nbformat 4.5, the cells so far "
      "(not the %save cell itself)", json.dumps(nb)[:500])
check([o["output_type"] for o in outs[0]] == ["stream", "execute_result"]
      and outs[0][0]["text"] == "hello\n" and
      outs[0][1]["data"]["text/plain"] == "42",
      "stream output and the result", outs[0])
check(outs[1] and outs[1][0].get("name") == "stderr", "stderr", outs[1])
err = [o for o in outs[2] if o["output_type"] == "error"]
check(err and err[0]["ename"] == "ValueError" and err[0]["evalue"] == "bad"
      and any("raise ValueError" in t for t in err[0]["traceback"]),
      "the error with its traceback", outs[2])
check_notebook(NB, "the saved notebook passes nbformat.validate")

r = c.run("%save s.ipynb")
check("exists. Use `%save -f" in r.get("output", ""),
      "an existing notebook is kept without -f", r)
r = c.run("%save -f s.ipynb")
with open(NB, encoding="utf-8") as f:
    n = len(json.load(f)["cells"])
check("5 cells written" in r.get("output", "") and n == 5,
      "-f overwrites it with the session so far (%d cells)" % n, r)

# twice in one cell: each question answered, the link stays in step
r = c.run("_coil = __import__('sys').modules['_coil']\n"
          "a, n = _coil._notebook()\nb, m = _coil._notebook()\n"
          "(n, m, a == b)")
check(r.get("result") == "(6, 6, True)",
      "two questions in one cell, two answers", r)

bad = os.path.join(OUT, "x.ipynb")
r = c.run("%%save %s" % bad)
msg = (r.get("error") or {}).get("message", "")
if r.get("status") == "ok" and os.path.exists(bad):
    skip("a path the sandbox forbids", "this machine's sandbox lets the "
         "worker write outside the work dir: %s" % r.get("output"))
else:
    # a read-only bind says EROFS, Landlock EACCES: words either way
    check(r.get("status") == "error" and
          (r.get("error") or {}).get("type") in ("PermissionError",
                                                 "OSError") and
          "cannot write the notebook '%s'" % bad in msg and
          "--allow-write" in msg and not os.path.exists(bad),
          "a path the sandbox forbids: a clear error naming "
          "--allow-write, no file", r)
r = c.run("%save -f code.py 1")
with open(os.path.join(WORK, "code.py"), encoding="utf-8") as f:
    py = f.read()
check(py == "# coding: utf-8\nprint('hello')\n6 * 7\n",
      "%save FILE.py keeps IPython's meaning: the cells' source", py)
fig = c.run("import matplotlib\nmatplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]); None")
if fig.get("display"):
    r = c.run("%save fig.ipynb")
    with open(os.path.join(WORK, "fig.ipynb"), encoding="utf-8") as f:
        last = json.load(f)["cells"][-1]
    png = [o for o in last["outputs"] if o["output_type"] == "display_data"]
    check(png and png[0]["data"]["image/png"].startswith("iVBOR"),
          "a figure is display_data with its PNG", last)
else:
    skip("a figure in the saved notebook", "matplotlib made no figure "
         "here: %s" % fig.get("error"))
r = c.run("%save -a s.ipynb")
check((r.get("error") or {}).get("type") == "UsageError",
      "-a makes no sense for a notebook: a UsageError", r)
check_exit(c)

# stdout and stderr in the order they came, as the streams took turns
# (each write is let be read before the next: the order is that of
# arrival, as in Jupyter); a character split across turns stays whole;
# a cell whose output was cut has one stream of each
c = Coil("--no-record", cwd=WORK)
turns = ("import sys, time\n"
         "for i, s in enumerate([sys.stdout, sys.stderr] * 2):\n"
         "    print(i, 'to', 'err' if s is sys.stderr else 'out', file=s,"
         " flush=True)\n"
         "    time.sleep(0.2)\n")
c.run(turns)
c.run("import sys, time\n"
      "sys.stdout.buffer.write(b'\\xc3'); sys.stdout.flush(); "
      "time.sleep(0.2)\n"
      "print('e', file=sys.stderr, flush=True); time.sleep(0.2)\n"
      "sys.stdout.buffer.write(b'\\xa9!\\n'); sys.stdout.flush()")
c.run(turns, max_output=12)
r = c.run("%save order.ipynb")
with open(os.path.join(WORK, "order.ipynb"), encoding="utf-8") as f:
    outs = [[(o.get("name"), o.get("text")) for o in cell["outputs"]]
            for cell in json.load(f)["cells"]] + [[]] * 3
check(outs[0] == [("stdout", "0 to out\n"), ("stderr", "1 to err\n"),
                  ("stdout", "2 to out\n"), ("stderr", "3 to err\n")],
      "the streams in the order they came", outs[0])
check(outs[1] == [("stderr", "e\n"), ("stdout", "\u00e9!\n")],
      "a character split across the turns is not split in the notebook",
      outs[1])
check([n for n, _ in outs[2]] == ["stdout", "stderr"] and
      "bytes cut" in outs[2][0][1],
      "a cut output: one stream of each", outs[2])
check_notebook(os.path.join(WORK, "order.ipynb"),
               "that notebook passes nbformat.validate too")
check_exit(c)

# over what the supervisor hands over (16 MiB): refused, said, no file;
# and the same under the strict profile for a small one
c = Coil("--no-record", "--max-output", "8M", cwd=WORK)
for _ in range(3):
    c.run("print('x' * (7 << 20))")
r = c.run("%save big.ipynb")
check(r.get("status") == "error" and "too big to hand over" in
      (r.get("error") or {}).get("message", "") and
      not os.path.exists(os.path.join(WORK, "big.ipynb")),
      "a notebook over 16 MiB is refused with a reason", r.get("error"))
check_exit(c)
c = Coil("--no-record", "--sandbox", "strict", cwd=WORK)
c.run("6 * 7")
r = c.run("%save strict.ipynb")
with open(os.path.join(WORK, "strict.ipynb"), encoding="utf-8") as f:
    nb = json.load(f)
check(r.get("status") == "ok" and nb["cells"][0]["outputs"][0]["data"]
      == {"text/plain": "42"}, "under --sandbox strict too", r)
check_exit(c)
shutil.rmtree(WORK, ignore_errors=True)
shutil.rmtree(OUT, ignore_errors=True)
done()
