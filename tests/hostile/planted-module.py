#!/usr/bin/python3
"""coil's own Python imports the standard library, never a cell's file.

The work directory is first on sys.path, as the script's directory is
for python3.  A cell of an earlier session (and the test itself) plants
traceback.py, inspect.py, linecache.py, codeop.py, tokenize.py,
difflib.py, pkgutil.py, dis.py, token.py and textwrap.py there: each
writes a marker when it runs and has none of the real module's
functions.  In the next session, under standard and strict, every kind
of answer that runs coil's own Python (an error and its traceback, a
syntax error, an incomplete cell, a name and an import not found,
inspect, complete, vars) is right and runs none of the planted files.  A
cell still imports its own module from the work dir, and its own
`import traceback` gets the planted file, as python3 would give it;
coil's answers stay right after that too.

Then pdb, as %debug and breakpoint() make it (driven here by a cell that
fakes a terminal on sys.stdin): a planted readline.py, which pdb.Pdb()
imports by name, does not run, nor does a planted ./.pdbrc.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, cleanup, done, workdir  # noqa: E402

PLANT = '''open(__file__ + ".ran", "a").write("ran\\n")
PLANTED = True
'''
BY_CELL = ("traceback", "inspect", "linecache", "codeop", "tokenize")
BY_TEST = ("difflib", "pkgutil", "dis", "token", "textwrap")


def ran(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".ran"))


def session(profile, d):
    with Coil("--sandbox", profile, "--workdir", d, "--no-record") as c:
        def run(code, what, want="error", etype=None):
            r = c.run(code)
            err = r.get("error") or {}
            ok = r.get("status") == want and (etype is None or
                                               err.get("type") == etype)
            ok = ok and "coil's own code" not in str(err)
            check(ok, "%s: %s" % (profile, what), r)
            return r

        r = run("1/0", "an error answer is right", etype="ZeroDivisionError")
        tb = (r.get("error") or {}).get("traceback") or ""
        check("<cell" in tb and "1/0" in tb, "%s: its traceback shows the "
              "cell's line (linecache)" % profile, tb)
        run("def f(:\n  pass", "a syntax error", etype="SyntaxError")
        run("for i in range(3):", "an incomplete cell (codeop)",
            want="incomplete")
        r = run("prnt(1)", "a name not found", etype="NameError")
        check("print" in str(r.get("error")), "%s: with its suggestion "
              "(difflib)" % profile, r)
        run("import no_such_module_here", "an import not found (pkgutil)",
            etype="ModuleNotFoundError")
        r = c.call({"op": "inspect", "name": "len"})
        check(r.get("status") == "ok" and r.get("signature") == "(obj, /)"
              and "number of items" in (r.get("doc") or ""), "%s: inspect is right"
              % profile, r)
        r = c.call({"op": "complete", "code": "import jso", "cursor": 10})
        check("json" in (r.get("matches") or []), "%s: complete is right"
              % profile, r)
        run("def g(a, b=2): pass\nbig = list(range(5000))",
            "cells run", want="ok")
        r = c.call({"op": "vars"})
        sig = [v.get("signature") for v in r.get("vars", [])
               if v.get("name") == "g"]
        check(r.get("status") == "ok" and sig == ["(a, b=2)"],
              "%s: vars is right (inspect, reprlib)" % profile, r)
        check(ran(d) == [], "%s: no planted module ran in coil's code"
              % profile, ran(d))
        r = run("import mymod\nmymod.VALUE", "a cell imports its own module "
                "from the work dir", want="ok")
        check(r.get("result") == "42", "%s: ... and gets it" % profile, r)
        r = run("import traceback, linecache\n"
                "(traceback.PLANTED, linecache.PLANTED)",
                "a cell imports the planted traceback", want="ok")
        check(r.get("result") == "(True, True)", "%s: ... and gets the work "
              "dir's file, as python3 would" % profile, r)
        r = run("x = 1\n1/0", "an error after that is still right",
                etype="ZeroDivisionError")
        tb = (r.get("error") or {}).get("traceback") or ""
        check("1/0" in tb, "%s: with its line" % profile, tb)
        r = c.call({"op": "inspect", "name": "len"})
        check(r.get("status") == "ok" and r.get("signature") == "(obj, /)",
              "%s: inspect still right" % profile, r)
        check(ran(d) == ["linecache.py.ran", "traceback.py.ran"],
              "%s: only the modules the cell imported ran" % profile, ran(d))
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())


# A cell stands in for the person at a terminal: sys.stdin says it is a
# tty (for %debug) or is a _TermStdin (for breakpoint()), and answers
# pdb's prompt with a command that ends it.
FAKE_TTY = r'''
import sys
class _Tty:
    def __init__(self, cmd):
        self.cmd = cmd
    def isatty(self):
        return True
    def readline(self, *a):
        return self.cmd
class _Term(sys.modules["_coil"]._TermStdin):
    def readline(self, *a):
        return "c\n"
'''


def pdb_case(profile, d):
    """pdb.Pdb(), as %debug and breakpoint() made it, imported readline
    by name (the work dir's readline.py ran) and read ./.pdbrc, whose
    lines it ran as pdb commands.  Both are planted with a marker."""
    with open(os.path.join(d, "readline.py"), "w") as f:
        f.write(PLANT)
    with open(os.path.join(d, ".pdbrc"), "w") as f:
        f.write("!open(%r, 'w').close()\n"
                % os.path.join(d, "pdbrc.ran"))
    with Coil("--sandbox", profile, "--workdir", d, "--no-record") as c:
        r = c.run(FAKE_TTY)
        check(r.get("status") == "ok", "%s: a cell fakes a terminal"
              % profile, r)
        c.run("def f():\n    return 1/0\nf()")
        r = c.run("sys.stdin = _Tty('q\\n')\n%debug\n"
                  "sys.stdin = sys.__stdin__")
        check(r.get("status") == "ok" and "(Pdb)" in r.get("output", ""),
              "%s: %%debug opens pdb at the error" % profile, r)
        r = c.run("def g():\n    breakpoint()\n    return 2\n"
                  "sys.stdin = _Term()\nv = g()\n"
                  "sys.stdin = sys.__stdin__\nv")
        check(r.get("status") == "ok" and r.get("result") == "2" and
              "(Pdb)" in r.get("output", ""),
              "%s: breakpoint() opens pdb, and c goes on" % profile, r)
        check(ran(d) == [], "%s: pdb ran neither the planted readline.py "
              "nor ./.pdbrc" % profile, ran(d))
        r = c.run("import readline\nreadline.PLANTED")
        check(r.get("result") == "True", "%s: a cell's own import of "
              "readline still gets the work dir's file" % profile, r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())


# The guard remembers which standard modules it found genuine: a stand-in
# put in place of one of them after that, or under a new name, is still
# set aside inside the guard and put back after it.
GUARD = r'''
import json, sys, types
g = sys.modules["_coil"]._std_guard
with g():
    pass
real = sys.modules["json"]
fake = types.ModuleType("json")
sys.modules["json"] = fake
sys.modules["email.fake"] = fake
with g():
    inside = (sys.modules.get("json") is real or
              sys.modules.get("json") is None,
              "email.fake" in sys.modules)
after = (sys.modules["json"] is fake, sys.modules["email.fake"] is fake)
sys.modules["json"] = real
del sys.modules["email.fake"]
inside, after
'''


def guard_case(profile):
    with Coil("--sandbox", profile, "--no-record") as c:
        r = c.run(GUARD)
        check(r.get("result") == "((True, False), (True, True))",
              "%s: the guard sets aside a stand-in for a module it found "
              "genuine before, and a new one, and puts them back"
              % profile, r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())


for profile in ("standard", "strict"):
    guard_case(profile)
    d = workdir()
    with open(os.path.join(d, "mymod.py"), "w") as f:
        f.write("VALUE = 42\n")
    for name in BY_TEST:
        with open(os.path.join(d, name + ".py"), "w") as f:
            f.write(PLANT)
    # an earlier session's cell plants the rest
    with Coil("--sandbox", profile, "--workdir", d, "--no-record") as c:
        code = "".join("open(%r, 'w').write(%r)\n" % (n + ".py", PLANT)
                       for n in BY_CELL)
        r = c.run(code)
        check(r.get("status") == "ok", "%s: a cell plants %s"
              % (profile, ", ".join(BY_CELL)), r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())
    session(profile, d)
    cleanup(d)
    # a work dir of its own: bdb imports linecache by name as pdb runs,
    # and would run the planted one above (not guarded yet)
    d = workdir()
    pdb_case(profile, d)
    cleanup(d)
done()
