#!/usr/bin/python3
# How an error is told to the model (issue 9, bugs 4-6 and items 1-3),
# through the real binary, with Debian's python3 (the Python coil embeds)
# as the oracle for Python's own words:
#   bug 4   carets under the column python3 puts them
#   bug 5   "Did you mean" for names and attributes
#   bug 6   no coil frame in a chained denial or an interrupt's traceback
#   item 1  plain mode says what the input left open
#   item 2  library frames folded: a pandas KeyError in about 600 chars
#   item 3  error.hint for a missing module: python3's version
# What a session alone can say is data: errors-told.test (the
# from-import's suggestion, a timeout's traceback, the hints of a
# misspelt key), incomplete.test (item 1), pandas.test (a column's hint).
import json
import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, SYSPYTHON, Coil, check, check_exit,  # noqa: E402
                      done, skip)

COIL_FRAMES = ('"<coil>"', " in hook\n", " in deny\n", "audit.py",
               "effects.py", "errors.py", "worker.py", "streams.py",
               "introspect.py", "policy.py")


def oracle(src):
    """python3's traceback text for src run as a file."""
    with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
        f.write(src)
        f.flush()
        out = subprocess.run([SYSPYTHON, f.name], capture_output=True,
                             text=True, timeout=60)
    return out.stderr


def tail(tb, n):
    """The last n lines of a traceback: the source line, the carets and
    the exception's own line."""
    return tb.rstrip("\n").split("\n")[-n:]


def has_module(name):
    return subprocess.run([SYSPYTHON, "-c", "import " + name],
                          capture_output=True, timeout=60).returncode == 0


def no_coil(tb):
    return not any(w in (tb or "") for w in COIL_FRAMES)


# A long grace: under load the interrupt must still win over the kill,
# or the interrupt's check below has no traceback to look at.
c = Coil("--timeout", "20", "--grace", "30")

# ---- bug 4: carets -------------------------------------------------------
for src in ("x = 0\n1 / x", "x = 0\nx / 0", "d = {}\nd['key']",
            "import time; 1 / 0", "def f(a):\n    return a / 0\nf(1)",
            "l = []\nl[3]"):
    r = c.run(src)
    want = tail(oracle(src), 3)
    got = tail(r["error"]["traceback"], 3)
    check(got == want, "bug 4: carets where python3 puts them: %r" % src,
          "coil:\n%s\npython3:\n%s" % ("\n".join(got), "\n".join(want)))

# ---- bug 5: Did you mean -------------------------------------------------
for src in ("prnt(1)", "import os\nos.pathx",
            "def f():\n    valu = 1\n    return vale\nf()",
            "class A:\n    speed = 1\nA().sped"):
    r = c.run(src)
    want = tail(oracle(src), 1)[0]
    e = r["error"]
    check(tail(e["traceback"], 1)[0] == want and "Did you mean" in want,
          "bug 5: python3's suggestion in the traceback: %r" % src,
          "coil: %r\npython3: %r" % (tail(e["traceback"], 1)[0], want))
    check(want.endswith(e["message"]),
          "bug 5: and in the message: %r" % src, e["message"])
# ---- bug 6: coil's frames ------------------------------------------------
r = c.run("import urllib.request\n"
          "urllib.request.urlopen('http://example.com', timeout=5)")
tb = r["error"]["traceback"] if r["error"] else ""
if "network access is off" in tb:
    check(no_coil(tb), "bug 6: a denial inside urllib shows no coil frame",
          tb)
    check("During handling" in tb and "PermissionError" in tb,
          "bug 6: the denial is still there, as the chain's context", tb)
else:
    skip("bug 6: a denial inside urllib shows no coil frame",
         "the network is not off in this sandbox")
    skip("bug 6: the denial is still there", "no denial")
c.send({"id": "slow", "code": "import time\nfor i in range(400):\n"
        "    print(i, flush=True); time.sleep(0.005)"})
c.call({"op": "interrupt"})
r = c.response("slow")
tb = (r.get("error") or {}).get("traceback") or ""
check(r["status"] in ("interrupted", "ok") and no_coil(tb),
      "bug 6: an interrupt's traceback shows no coil frame", r.get("error"))

# ---- item 1: plain mode says what is open -------------------------------
out = subprocess.run([COIL, "--plain"], input=b"x = {'a': 1,\n",
                     capture_output=True, timeout=60)
check(out.returncode == 1 and b"'{' was never closed (line 1, column 5)"
      in out.stderr, "item 1: plain mode says what the input left open",
      out.stderr)

# ---- item 2: sized tracebacks -------------------------------------------
r = c.run("import json\njson.loads('{')")
tb = r["error"]["traceback"]
check("frames in json ..." in tb and 'File "<cell' in tb and
      "in raw_decode\n" in tb,
      "item 2: library frames folded, the cell and the raising frame whole",
      tb)
r = c.run("def g(n):\n    return json.loads('[' * n)\ng(1)")
tb = r["error"]["traceback"]
check(tb.count('File "<cell') == 2,
      "item 2: every frame of the user's code is shown", tb)
r = c.run("def r(n): return r(n + 1)\nr(0)")
tb = r["error"]["traceback"]
check("earlier frames not shown" in tb and "[Previous line repeated" in tb
      and len(tb) < 1500, "item 2: a recursion stays short", len(tb))
if has_module("pandas"):
    c.run("import pandas as pd\ndf = pd.DataFrame({'price': [1.0, 2.5], "
          "'qty': [3, 4], 'region': ['n', 's']})")
    r = c.run("df['prcie']")
    e = r["error"]
    tb = e["traceback"]
    check(len(tb) <= 600 and "frames in pandas ..." in tb and
          "direct cause" in tb and "raise KeyError(key) from err" in tb,
          "item 2: a pandas KeyError on a misspelt column in <= 600 chars",
          "%d chars:\n%s" % (len(tb), tb))
    check(len(json.dumps(e)) <= 700,
          "item 2: its whole error object, hint included, in <= 700 chars",
          len(json.dumps(e)))
else:
    skip("item 2: a pandas KeyError in <= 600 chars", "no pandas")
    skip("item 2: its whole error object in <= 700 chars", "no pandas")

# ---- item 3: hints -------------------------------------------------------
v = subprocess.run([SYSPYTHON, "-c", "import sys; print('%d.%d.%d' % "
                    "sys.version_info[:3])"], capture_output=True,
                   text=True, timeout=60).stdout.strip()
r = c.run("import nump")
h = r["error"].get("hint") or ""
check(("Python %s" % v) in h and "sandbox" in h and "python3-nump" in h,
      "item 3: a missing module's hint: the Python, the sandbox, the "
      "Debian package", h)
if has_module("numpy"):
    check("did you mean 'numpy'" in h,
          "item 3: a misspelt module's hint names the one meant", h)
else:
    skip("item 3: a misspelt module's hint names the one meant", "no numpy")
c.close()
check_exit(c)
done()
