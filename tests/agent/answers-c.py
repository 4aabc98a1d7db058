#!/usr/bin/python3
"""What a cell cost, what it touched, and the import allow-list (issue 9,
items 6, 7 and 8), each through the real binary.

- cpu_ms and memory_peak in every exec answer, measured by the
  supervisor: a busy cell, a sleeping one, a child process's CPU, a peak
  that is the cell's own (reset before each), under the default sandbox
  and --sandbox none; ping's and vars' totals; a cell that replaces
  coil's own exec handler to lie about the numbers and the effects
  spoils nothing but its own answer's garbage, which the supervisor
  drops.
- effects: files created, written, deleted and renamed (paths relative
  to the work dir, absolute outside it), processes, connections, denied
  ones marked, each thing once, capped at 20 with effects_more, absent
  for a cell that touched nothing.
- --allow-import: allowed packages and what they import work; anything
  else a cell imports (a statement, a module already loaded, importlib)
  is an ImportError naming the option; "stdlib"; bad values refused.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, ASAN, Coil, check, skip, done, workdir,  # noqa
                      cleanup, check_exit)

MB = 1 << 20
BUSY = "t = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
CHILD = ("import subprocess\nsubprocess.run(['sh', '-c', "
         "'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'])")


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def cost(profile):
    """The cost fields under one sandbox profile."""
    wd = workdir()
    with Coil("--sandbox", profile, "--workdir", wd) as c:
        peaks = []          # every cell's, for the totals

        def run(code):
            r = c.run(code)
            peaks.append(r.get("memory_peak") or 0)
            return r
        r = run("import time")
        check(number(r.get("cpu_ms")) and r["cpu_ms"] >= 0 and
              isinstance(r.get("memory_peak"), int) and
              r["memory_peak"] > MB, "%s: an exec answer has cpu_ms and "
              "memory_peak (bytes)" % profile, r)
        r = run(BUSY)
        check(number(r.get("cpu_ms")) and 250 <= r["cpu_ms"] <= 5000,
              "%s: cpu_ms of a cell busy for 0.3 s of CPU" % profile, r)
        r = run("time.sleep(0.4)")
        check(r.get("duration_ms", 0) >= 400 and
              number(r.get("cpu_ms")) and r["cpu_ms"] < 100,
              "%s: a sleeping cell takes time but little CPU" % profile, r)
        r = run(CHILD)
        check(r.get("status") == "ok" and number(r.get("cpu_ms")) and
              r["cpu_ms"] >= 50,
              "%s: cpu_ms counts a child process the cell waited for"
              % profile, r)
        # The children's total is read only when it changed (usage.h):
        # the next cell must not count that child again.
        r2 = run("sum(range(1000))")
        check(number(r2.get("cpu_ms")) and number(r.get("cpu_ms")) and
              r2["cpu_ms"] < r["cpu_ms"] / 2,
              "%s: the next cell counts none of that child's CPU"
              % profile, (r, r2))
        big = run("b = bytearray(150 << 20)\nb[::4096] = b'x' * "
                    "len(b[::4096])\ndel b")
        small = run("1 + 1")
        if ASAN:
            skip("%s: memory_peak is the cell's own peak" % profile,
                 "a sanitizer build's allocator")
        else:
            check(big.get("memory_peak", 0) >= 150 * MB and
                  0 < small.get("memory_peak", 0) <
                  big["memory_peak"] - 100 * MB,
                  "%s: memory_peak is the cell's own peak: reset before "
                  "the next cell" % profile, (big, small))
        p = c.call({"op": "ping"})
        t = p.get("totals") or {}
        check(t.get("cells") == 7 and number(t.get("cpu_ms")) and
              t["cpu_ms"] >= 300 and t.get("memory_peak") == max(peaks)
              and t.get("duration_ms", 0) >= 400,
              "%s: ping's totals: cells, CPU summed, the highest peak"
              % profile, p)
        v = c.call({"op": "vars"})
        check(v.get("totals", {}).get("cells") == 7 and
              v["totals"].get("cpu_ms") == t.get("cpu_ms"),
              "%s: vars answers the same totals" % profile, v)
        check_exit(c, "%s: coil exits 0" % profile)
    cleanup(wd)


# A cell that makes coil's own exec handler lie from the next cell on:
# numbers of its own, and effects no audit hook would make.
LIAR = r'''
import sys
_coil = sys.modules["_coil"]
real = _coil._OPS["exec"]
def liar(req):
    r = real(req)
    r.update(cpu_ms=1e9, memory_peak=-7, totals={"cpu_ms": -1},
             effects_more=-5,
             effects=[{"kind": "write", "path": "ok.txt"},
                      {"kind": "format-disk", "path": "/"},
                      {"kind": "write", "path": 7},
                      {"kind": "write", "path": "x", "evil": "field"},
                      {"kind": "write", "path": "y", "denied": "yes"},
                      "not an object",
                      {"kind": "delete", "path": "p" * 5000}]
                     + [{"kind": "create", "path": "f%d" % i}
                        for i in range(40)])
    return r
_coil._OPS["exec"] = liar
def vliar(req):
    return {"status": "ok", "vars": [], "totals": {"cpu_ms": -1}}
_coil._OPS["vars"] = vliar
'''


def hostile():
    wd = workdir()
    with Coil("--workdir", wd) as c:
        r = c.run(LIAR)
        check(r.get("status") == "ok", "hostile: the lying handler is in",
              r)
        r = c.run("1 + 1")
        check(r.get("status") == "ok" and r.get("result") == "2" and
              number(r.get("cpu_ms")) and 0 <= r["cpu_ms"] < 1e6 and
              isinstance(r.get("memory_peak"), int) and
              r["memory_peak"] > 0 and "totals" not in r,
              "hostile: cpu_ms and memory_peak are the supervisor's, not "
              "the worker's", r)
        fx = r.get("effects") or []
        check(len(fx) == 20 and fx[0] == {"kind": "write",
                                          "path": "ok.txt"} and
              all(e.get("kind") in ("write", "create") and
                  isinstance(e.get("path"), str) and
                  set(e) <= {"kind", "path"} for e in fx),
              "hostile: only well-formed effects are listed, at most 20",
              fx)
        check(r.get("effects_more") == 47 - 20,
              "hostile: the dropped and the unlisted are counted, a "
              "negative count ignored", r.get("effects_more"))
        v = c.call({"op": "vars"})
        check(v.get("totals", {}).get("cells") == 2 and
              v["totals"].get("cpu_ms", -1) >= 0,
              "hostile: vars' totals are the supervisor's", v)
        check_exit(c, "hostile: coil exits 0")
    cleanup(wd)


def effects(profile):
    wd = workdir()
    outside = workdir("coil-outside-")
    with Coil("--sandbox", profile, "--workdir", wd,
              "--allow-write", outside) as c:
        c.run("import os\nopen('old.csv', 'w').close()\nos.mkdir('d')")
        r = c.run("open('out.csv', 'w').write('a')\n"
                  "open('out.csv', 'a').write('b')\n"
                  "os.rename('old.csv', 'kept.csv')\n"
                  "os.rmdir('d')\nopen('kept.csv').read()")
        check(r.get("effects") == [
            {"kind": "create", "path": "out.csv"},
            {"kind": "write", "path": "out.csv"},
            {"kind": "rename", "path": "old.csv", "to": "kept.csv"},
            {"kind": "delete", "path": "d"}] and "effects_more" not in r,
            "%s: files created, written, renamed, deleted, relative to "
            "the work dir; reads not listed" % profile, r.get("effects"))
        r = c.run("open('x.lock', 'w').close()\nos.remove('x.lock')\n"
                  "open('t.tmp', 'w').write('x')\n"
                  "os.rename('t.tmp', 'final.txt')\n"
                  "open('t2.tmp', 'w').close()\n"
                  "os.replace('t2.tmp', 'kept.csv')")
        check(r.get("effects") == [
            {"kind": "create", "path": "x.lock"},
            {"kind": "delete", "path": "x.lock"},
            {"kind": "create", "path": "final.txt"},
            {"kind": "write", "path": "kept.csv"}],
            "%s: a file made and removed in the cell is listed both "
            "times; one written under a temporary name is the file it "
            "ends as" % profile, r.get("effects"))
        r = c.run("for i in range(5): open('same.txt', 'a').write('x')")
        check(r.get("effects") == [{"kind": "create", "path":
                                    "same.txt"},
                                   {"kind": "write", "path": "same.txt"}],
              "%s: each thing once" % profile, r.get("effects"))
        r = c.run("open(%r, 'w').close()" % os.path.join(outside, "o.txt"))
        check(r.get("effects") == [{"kind": "create", "path":
                                    os.path.join(outside, "o.txt")}],
              "%s: a path outside the work dir is absolute" % profile,
              r.get("effects"))
        r = c.run("os.chdir('/')\nopen(%r, 'w').close()\nos.chdir(%r)"
                  % (os.path.join(wd, "sub.txt"), wd))
        check(r.get("effects") == [{"kind": "create", "path": "sub.txt"}],
              "%s: resolved against the cwd at the call" % profile,
              r.get("effects"))
        r = c.run("import subprocess\nsubprocess.run(['true'], "
                  "stdout=subprocess.DEVNULL)\nos.system('exit 0')")
        check(r.get("effects") == [{"kind": "process", "cmd": "true"},
                                   {"kind": "process", "cmd": "exit 0"}],
              "%s: processes started (and no write to /dev/null)"
              % profile, r.get("effects"))
        r = c.run("import socket\ntry:\n"
                  "    socket.create_connection(('127.0.0.1', 9), 2)\n"
                  "except OSError as e:\n    err = e")
        want = {"kind": "connect", "to": "127.0.0.1:9"}
        if profile != "none":
            want["denied"] = True
        check(r.get("effects") == [want],
              "%s: a connection tried%s" % (
                  profile, ", denied" if profile != "none" else ""),
              r.get("effects"))
        if profile != "none":
            r = c.run("try:\n    open('/etc/hostname', 'a')\n"
                      "except PermissionError:\n    pass")
            check(r.get("effects") == [{"kind": "write", "path":
                                        "/etc/hostname",
                                        "denied": True}],
                  "%s: a refused write shows as denied" % profile,
                  r.get("effects"))
        r = c.run("for i in range(60): open('f%d' % i, 'w').close()")
        fx = r.get("effects") or []
        check(len(fx) == 20 and fx[0] == {"kind": "create", "path": "f0"}
              and r.get("effects_more") == 40,
              "%s: 20 listed, the other 40 counted" % profile, r)
        r = c.run("x = [i * i for i in range(1000)]\nlen(x)")
        check(r.get("status") == "ok" and "effects" not in r and
              "effects_more" not in r,
              "%s: a cell that touches nothing has no effects" % profile,
              r)
        check_exit(c, "%s: coil exits 0 (effects)" % profile)
    cleanup(wd)
    cleanup(outside)


def error_of(r):
    return r.get("error") or {}


def allow_import():
    wd = workdir()
    with Coil("--allow-import", "json,importlib", "--workdir", wd) as c:
        r = c.run("import json\nimport json.decoder\njson.dumps([1])")
        check(r.get("status") == "ok" and r.get("result") == "'[1]'",
              "allow-import: an allowed package, its submodules and what "
              "it imports itself (re, ...) work", r)
        r = c.run("import csv")
        e = error_of(r)
        check(r.get("status") == "error" and e.get("type") ==
              "ImportError" and "--allow-import json,importlib" in
              e.get("message", "") and "'csv'" in e.get("message", ""),
              "allow-import: another import is an ImportError naming the "
              "option", r)
        check("<coil>" not in (e.get("traceback") or "x<coil>"),
              "allow-import: no coil frame in its traceback",
              e.get("traceback"))
        r = c.run("import os")
        check(error_of(r).get("type") == "ImportError",
              "allow-import: a module already loaded is refused too", r)
        r = c.run("from email import message")
        check(error_of(r).get("type") == "ImportError",
              "allow-import: from-imports are checked", r)
        r = c.run("import importlib\nimportlib.import_module('csv')")
        check(error_of(r).get("type") == "ImportError" and
              "--allow-import" in error_of(r).get("message", ""),
              "allow-import: importlib.import_module from a cell is "
              "refused", r)
        r = c.run("__import__('csv')")
        check(error_of(r).get("type") == "ImportError",
              "allow-import: __import__ from a cell is refused", r)
        check_exit(c, "allow-import: coil exits 0")
    with Coil("--allow-import", "stdlib", "--workdir", wd) as c:
        r = c.run("import csv, os, email.message")
        check(r.get("status") == "ok", "allow-import stdlib: the standard "
              "library may be imported", r)
        r = c.run("import coil_no_such_package")
        check(error_of(r).get("type") == "ImportError" and
              "--allow-import stdlib" in error_of(r).get("message", ""),
              "allow-import stdlib: others are not", r)
        check_exit(c, "allow-import stdlib: coil exits 0")
    try:
        import numpy    # noqa: F401  (only whether the machine has it)
        have_numpy = True
    except ImportError:
        have_numpy = False
    if have_numpy:
        with Coil("--allow-import", "numpy", "--workdir", wd) as c:
            r = c.run("import numpy as np\nint(np.arange(4).sum())")
            check(r.get("status") == "ok" and r.get("result") == "6",
                  "allow-import numpy: numpy's own stdlib imports work", r)
            check_exit(c, "allow-import numpy: coil exits 0")
    else:
        skip("allow-import numpy: numpy's own stdlib imports work",
             "numpy is not installed")
    for bad, words in (("a b", "not a module name"),
                       ("", "at least one module")):
        p = subprocess.run([COIL, "--agent", "--allow-import", bad],
                           input=b"", capture_output=True, timeout=30)
        check(p.returncode != 0 and words in p.stderr.decode(),
              "allow-import %r is refused at start" % bad, p.stderr)
    p = subprocess.run([COIL, "--help"], capture_output=True, timeout=30)
    check(b"--allow-import MODS" in p.stdout,
          "--help lists --allow-import", p.stdout[-400:])
    cleanup(wd)


for prof in ("standard", "none"):
    cost(prof)
hostile()
for prof in ("standard", "none"):
    effects(prof)
allow_import()
done()
