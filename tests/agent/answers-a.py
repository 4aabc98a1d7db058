#!/usr/bin/python3
# Answers a model can trust (issue 9, first part): numpy and pandas
# results, non-ASCII names, sys.executable, output a thread prints
# between cells, and the session's first warning.  Each in a fresh
# session, after reset and after a restore, under the sandboxes and
# front ends where the bug showed.
import os
import re
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    COIL, Coil, check, check_exit, cleanup, done, skip, wait_for, workdir)

wd = workdir()
env = dict(os.environ, XDG_STATE_HOME=os.path.join(wd, "state"))


def session(*args):
    return Coil("--workdir", wd, "--timeout", "60", *args, env=env, cwd=wd)


def plain(code, *args):
    """coil --plain with code on stdin: (stdout, stderr)."""
    p = subprocess.run([COIL, "--plain", "--workdir", wd, *args],
                       input=code.encode(), capture_output=True, env=env,
                       cwd=wd, timeout=120)
    return p.stdout.decode(errors="replace"), p.stderr.decode(
        errors="replace")


def has(*mods):
    """True when Debian's python3, the one coil embeds, imports mods."""
    return subprocess.run([sys.executable, "-c", "import " + ", ".join(mods)],
                          capture_output=True).returncode == 0


def result(c, code):
    r = c.run(code)
    return r.get("result") if r.get("status") == "ok" else r


ARRAY = "import numpy as np\nnp.arange(3)"
DTYPE = "np.dtype('f8')"
SANDBOXES = (("default sandbox", ()), ("--sandbox none", ("--sandbox", "none")))

# ---- 1. numpy and pandas results ----------------------------------------

if not has("numpy"):
    skip("numpy results", "numpy is not importable by %s (apt-get install "
         "python3-numpy)" % sys.executable)
else:
    configs = SANDBOXES + (("--checkpoints 0", ("--checkpoints", "0")),
                           ("--preload numpy", ("--preload", "numpy")))
    for label, args in configs:
        with session(*args) as c:
            r = result(c, ARRAY)
            check(r == "array([0, 1, 2])", "%s: a fresh session shows an "
                  "array" % label, r)
            r = result(c, DTYPE)
            check(r == "dtype('float64')", "%s: and a dtype" % label, r)
            check_exit(c, "%s: coil exits 0" % label)

    with session() as c:
        c.run("import numpy as np\na = np.arange(6).reshape(2, 3)")
        r = c.call({"op": "vars"})
        a = [v for v in r.get("vars", []) if v["name"] == "a"]
        check(a and a[0]["repr"].startswith("array([[0, 1, 2],") and
              a[0].get("shape") == [2, 3] and a[0].get("dtype") == "int64",
              "vars shows an array's repr, shape and dtype", r)
        c.run("def f(a, b=2, *rest): pass\n"
              "class K:\n    def __init__(self, q): pass\n"
              "k = K(1); g = len; n = 5")
        got = {v["name"]: v for v in c.call({"op": "vars"}).get("vars", [])}
        check(got.get("f", {}).get("signature") == "(a, b=2, *rest)" and
              got.get("K", {}).get("signature") == "(q)" and
              got.get("g", {}).get("signature") == "(obj, /)",
              "vars gives the signature of a function, a class, a builtin",
              got)
        check("signature" not in got.get("k", {"signature": 1}) and
              "dtype" not in got.get("n", {"dtype": 1}),
              "and none for an instance or an int", got)
        c.run("big = [str(i) for i in range(200000)]\nlong = 'y' * 10**7")
        got = {v["name"]: v for v in c.call({"op": "vars"}).get("vars", [])}
        b, s = got.get("big", {}).get("repr", ""), got.get("long", {})
        check(b.startswith("['0', '1', '2',") and len(b) <= 200 and
              s.get("repr", "").startswith("'yyy") and
              len(s.get("repr", "")) <= 200,
              "a big list's or string's repr in vars is cut as it is made "
              "(its head, at most 200 characters)", [b, s.get("repr")])
        r = c.call({"op": "inspect", "name": "a"})
        check(r.get("status") == "ok" and
              r.get("repr", "").startswith("array([[0, 1, 2]"),
              "inspect shows an array's repr", r)
        r = c.call({"op": "inspect", "name": "a.dtype"})
        check(r.get("repr") == "dtype('int64')", "inspect shows a dtype", r)

        r = c.call({"op": "reset"})
        check(r.get("status") == "ok", "reset", r)
        r = result(c, ARRAY)
        check(r == "array([0, 1, 2])", "after reset: an array", r)
        r = result(c, DTYPE)
        check(r == "dtype('float64')", "after reset: a dtype", r)

        # The default policy keeps the state once the session is quiet:
        # wait for that, so the crash lands on numpy imported.
        # A loaded machine (a sanitizer build at load 25) takes seconds.
        check(wait_for(lambda: c.call({"op": "snapshots"}).get("unkept")
                       == [], 120), "the quiet session's state is kept")
        r = c.run("import os; os._exit(3)")
        check(r.get("status") == "crashed" and
              (r.get("restored") or {}).get("cell") is not None,
              "a crash restores a checkpoint", r)
        r = result(c, "np.arange(3), np.dtype('f8')")
        check(r == "(array([0, 1, 2]), dtype('float64'))",
              "after a crash restore: an array and a dtype", r)
        r = c.call({"op": "snapshot", "name": "arr"})
        c.run("b = np.ones(2)")
        r = c.call({"op": "rollback", "to": "arr"})
        check(r.get("status") == "ok", "rollback to a snapshot", r)
        r = result(c, "np.arange(3) * 2")
        check(r == "array([0, 2, 4])", "after a rollback: an array", r)
        check_exit(c, "numpy after reset and restore: coil exits 0")

    with session("--checkpoints", "0") as c:
        c.run("import numpy as np")
        r = c.run("import os; os._exit(3)")
        check(r.get("status") == "crashed", "--checkpoints 0: crashed", r)
        r = result(c, ARRAY)
        check(r == "array([0, 1, 2])", "--checkpoints 0: a fresh "
              "interpreter after the crash shows an array", r)
        check_exit(c, "--checkpoints 0 numpy: coil exits 0")

    for label, args in SANDBOXES:
        out, err = plain(ARRAY + "\n" + DTYPE + "\n", *args)
        check("array([0, 1, 2])" in out and "dtype('float64')" in out and
              "repr failed" not in out + err,
              "plain mode, %s: an array and a dtype" % label, (out, err))

if not has("pandas"):
    skip("pandas results", "pandas is not importable by %s (apt-get install "
         "python3-pandas)" % sys.executable)
else:
    frame = ("import pandas as pd\n"
             "df = pd.DataFrame({'x': [1, 2], 'y': [3.5, 4.5]})\n"
             "s = df['x']\n")
    for label, args in SANDBOXES:
        with session(*args) as c:
            r = result(c, frame + "s")
            check(isinstance(r, str) and re.search(r"0 +1\n1 +2\nName: x, "
                                                    "dtype: int64", r),
                  "%s: a Series" % label, r)
            r = result(c, "df")
            check(isinstance(r, str) and re.search(r"x +y\n0 +1 +3\.5\n1 +2 "
                                                    "+4\.5", r),
                  "%s: a DataFrame" % label, r)
            r = c.call({"op": "vars"})
            got = {v["name"]: v for v in r.get("vars", [])}
            check("df" in got and "x    y" in got["df"]["repr"] and
                  got["df"].get("shape") == [2, 2] and "s" in got and
                  "Name: x" in got["s"]["repr"] and
                  got["df"].get("dtype") == "int64, float64" and
                  got["s"].get("dtype") == "int64",
                  "%s: vars shows the frame and the series, with their "
                  "dtypes" % label, r)
            r = c.call({"op": "inspect", "name": "df"})
            check(r.get("status") == "ok" and "x    y" in r.get("repr", "")
                  and r.get("type") == "pandas.core.frame.DataFrame",
                  "%s: inspect shows the frame" % label, r)
            c.call({"op": "reset"})
            r = result(c, frame + "df.describe().loc['mean', 'y']")
            check(r == "4.0", "%s: pandas after reset" % label, r)
            check_exit(c, "%s pandas: coil exits 0" % label)

# ---- 2. non-ASCII identifiers -------------------------------------------

for label, args in SANDBOXES:
    with session(*args) as c:
        r = c.run("é = 1\n变量 = 2\ndef f(ß):\n    return ß + é\nf(变量)")
        check(r.get("status") == "ok" and r.get("result") == "3",
              "%s: non-ASCII names work" % label, r)
        r = c.call({"op": "vars"})
        names = {v["name"] for v in r.get("vars", [])}
        check({"é", "变量"} <= names, "%s: vars lists them" % label, r)
        r = c.run("undefined_ñ")
        err = r.get("error") or {}
        check(err.get("type") == "NameError" and
              "<coil>" not in err.get("traceback", ""),
              "%s: a NameError on one is the user's, no coil frames"
              % label, r)
        check_exit(c, "%s non-ASCII: coil exits 0" % label)
out, err = plain("变量 = 20\n变量 + 1\n")
check(out.strip() == "21", "plain mode: non-ASCII names work", (out, err))

# ---- 3. sys.executable ------------------------------------------------------

SUBPROC = ("import sys, subprocess\n"
           "p = subprocess.run([sys.executable, '-c', "
           "'import sys; print(sys.version)'], capture_output=True, "
           "text=True)\n"
           "p.stdout.strip() == sys.version, p.returncode")
SPAWN = ("import multiprocessing as mp\n"
         "ctx = mp.get_context('spawn')\n"
         "with ctx.Pool(2) as pool:\n"
         "    r = pool.map(abs, [-1, -2, -3])\n"
         "r")
for label, args in SANDBOXES:
    with session(*args) as c:
        r = c.run("import sys, os\n(sys.executable, sys.version_info[:2], "
                  "os.access(sys.executable, os.X_OK))")
        try:
            exe, ver, ok = eval(r.get("result") or "None")
        except TypeError:
            exe, ver, ok = "", (0, 0), False
        check(os.path.isabs(exe) and ok and
              os.path.basename(exe) == "python%d.%d" % ver,
              "%s: sys.executable is the embedded python3.X" % label, r)
        r = result(c, SUBPROC)
        check(r == "(True, 0)", "%s: subprocess runs sys.executable"
              % label, r)
        r = result(c, SPAWN)
        check(r == "[1, 2, 3]", "%s: multiprocessing's spawn works"
              % label, r)
        r = c.run("q = ctx.Queue()\npr = ctx.Process(target=q.put, "
                  "args=(42,))\npr.start()\nv = q.get(timeout=30)\n"
                  "pr.join()\n(v, pr.exitcode)")
        check(r.get("result") == "(42, 0)", "%s: a spawned Process runs"
              % label, r)
        check_exit(c, "%s sys.executable: coil exits 0" % label)
with session("--sandbox", "strict") as c:
    r = c.run(SUBPROC)
    err = r.get("error") or {}
    check(r.get("status") == "error" and err.get("type") ==
          "PermissionError" and "strict" in err.get("message", "") and
          "''" not in err.get("message", ""),
          "strict: running sys.executable is a clear denial", r)
    check_exit(c, "strict sys.executable: coil exits 0")

# ---- 8. output a thread prints between cells ------------------------------

THREAD = ("import sys, threading, time\n"
          "def late():\n"
          "    time.sleep(0.3)\n"
          "    print('from the thread')\n"
          "    sys.stderr.write('half a line')\n"
          "    time.sleep(%s)\n"
          "threading.Thread(target=late, daemon=True).start()")
for what, linger in (("an ended thread", 0), ("a live thread", 30)):
    for label, args in SANDBOXES:
        with session(*args) as c:
            r = c.run(THREAD % linger)
            check(r.get("status") == "ok" and r.get("output") == "",
                  "%s, %s: the cell itself prints nothing" % (what, label),
                  r)
            time.sleep(1.5)
            r = c.run("print('mine')")
            bg = r.get("background") or {}
            check(r.get("output") == "mine\n" and r.get("stderr") == "",
                  "%s, %s: the next cell's output is its own"
                  % (what, label), r)
            check(bg.get("output") == "from the thread\n" and
                  bg.get("stderr") == "half a line",
                  "%s, %s: the unflushed lines are background"
                  % (what, label), r)
            check_exit(c, "%s, %s: coil exits 0" % (what, label))

# ---- 11. the session's first warning ---------------------------------------

WARN = "import warnings\nwarnings.warn('careful')"
for label, args in SANDBOXES:
    with session(*args) as c:
        r = c.run(WARN)
        check("<cell 1>:2: UserWarning: careful\n"
              "  warnings.warn('careful')\n" == r.get("stderr"),
              "%s: the first warning shows its source line" % label, r)
        r = c.run("warnings.warn('again')")
        check("  warnings.warn('again')\n" in r.get("stderr", ""),
              "%s: and the next one" % label, r)
        check_exit(c, "%s warnings: coil exits 0" % label)
with session() as c:
    r = c.run("import traceback\ntraceback.print_stack()")
    check("    traceback.print_stack()\n" in r.get("stderr", ""),
          "the first traceback.print_stack shows the cell's line", r)
    check_exit(c, "print_stack: coil exits 0")
out, err = plain(WARN + "\n")
check("  warnings.warn('careful')\n" in err,
      "plain mode: the first warning shows its source line", (out, err))

cleanup(wd)
done()
