#!/usr/bin/python3
"""What a cell cost, what it touched, and the import allow-list (issue 9,
items 6, 7 and 8), each through the real binary: what is more than a
session of requests and answers matched (effects.test, effects-none.test
and allow-import*.test are those).

- cpu_ms and memory_peak in every exec answer, measured by the
  supervisor: a busy cell, a sleeping one, a child process's CPU, a peak
  that is the cell's own (reset before each), under the default sandbox
  and --sandbox none; ping's and vars' totals; a cell that replaces
  coil's own exec handler to lie about the numbers and the effects
  spoils nothing but its own answer's garbage, which the supervisor
  drops.
  Numbers in ranges and compared across answers: not data.
- --allow-import: bad values refused at start (an exit status), and
  --help lists it.
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


def allow_import():
    for bad, words in (("a b", "not a module name"),
                       ("", "at least one module")):
        p = subprocess.run([COIL, "--agent", "--allow-import", bad],
                           input=b"", capture_output=True, timeout=30)
        check(p.returncode != 0 and words in p.stderr.decode(),
              "allow-import %r is refused at start" % bad, p.stderr)
    p = subprocess.run([COIL, "--help"], capture_output=True, timeout=30)
    check(b"--allow-import MODS" in p.stdout,
          "--help lists --allow-import", p.stdout[-400:])


for prof in ("standard", "none"):
    cost(prof)
hostile()
allow_import()
done()
