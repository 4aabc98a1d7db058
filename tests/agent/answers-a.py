#!/usr/bin/python3
# Answers a model can trust (issue 9, first part), the cases that are
# more than a session's requests and responses: a crash restore and a
# rollback of numpy's state once the session is quiet; plain mode's
# answers (numpy, non-ASCII names, the first warning); output a thread
# prints between cells, a moment after the cell that started it.  The
# sessions are data: numpy.test, pandas.test, names.test,
# executable.test, executable-strict.test, warnings.test, print-stack.test.
import os
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
    with session() as c:
        c.run(ARRAY)
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
        check_exit(c, "numpy after a restore: coil exits 0")

    for label, args in SANDBOXES:
        out, err = plain(ARRAY + "\n" + DTYPE + "\n", *args)
        check("array([0, 1, 2])" in out and "dtype('float64')" in out and
              "repr failed" not in out + err,
              "plain mode, %s: an array and a dtype" % label, (out, err))

out, err = plain("变量 = 20\n变量 + 1\n")
check(out.strip() == "21", "plain mode: non-ASCII names work", (out, err))

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
out, err = plain(WARN + "\n")
check("  warnings.warn('careful')\n" in err,
      "plain mode: the first warning shows its source line", (out, err))

cleanup(wd)
done()
