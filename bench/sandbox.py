#!/usr/bin/python3
"""What the sandbox costs, in one run, against none: start-up to the first
answer (`coil --agent --sandbox PROFILE` starting a session and running
`pass`: spawn, sandbox steps, Python's start) and, inside a running
worker (the next cell), a trivial cell's worth of work: syscalls (seccomp runs on each), file opens (Landlock and the
audit hook run on each) and imports.  Profiles are interleaved so that the
machine's noise falls on all alike; medians of N runs.

    bench/sandbox.py [N]

It talks to coil through tests/lib/coiltest.py's client, like the tests.
"""
import os
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from coiltest import Coil  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 else 15

CELL = r'''
import os, time
t = time.perf_counter()
for _ in range(20000):
    os.getppid()
sc = (time.perf_counter() - t) / 20000 * 1e6
open("f", "w").close()
t = time.perf_counter()
for _ in range(2000):
    open("f").close()
op = (time.perf_counter() - t) / 2000 * 1e6
t = time.perf_counter()
compile("x = [i * i for i in range(100)]\nx[-1]", "<cell>", "exec")
exec("x = [i * i for i in range(100)]\nx[-1]")
cell = (time.perf_counter() - t) * 1e6
print("BENCH %.3f %.3f %.1f" % (sc, op, cell), flush=True)
'''

wd = tempfile.mkdtemp(prefix="sbx-bench-")
data = {p: {"first": [], "sys": [], "open": [], "cell": []}
        for p in ("none", "standard", "strict")}


def session(p):
    """The first answer's time in ms, and the bench cell's output."""
    t0 = time.perf_counter()
    c = Coil("--sandbox", p, "--workdir", wd)
    try:
        first = c.run("pass")
        t1 = time.perf_counter()
        second = c.run(CELL)
    except (EOFError, TimeoutError, ValueError) as e:
        c.kill()
        return 0.0, "", "%s: %s" % (type(e).__name__, c.stderr_text())
    c.close()
    return (t1 - t0) * 1e3, second.get("output") or "", "%s\n%s\n%s" % (
        first, second, c.stderr_text())


for i in range(N):
    for p in data:
        first, out, raw = session(p)
        b = re.search(r"BENCH ([\d.]+) ([\d.]+) ([\d.]+)", out)
        if not b:
            sys.exit("bench: %s failed:\n%s" % (p, raw))
        data[p]["first"].append(first)
        data[p]["sys"].append(float(b.group(1)))
        data[p]["open"].append(float(b.group(2)))
        data[p]["cell"].append(float(b.group(3)))
os.remove(os.path.join(wd, "f"))
os.rmdir(wd)

med = {p: {k: statistics.median(v) for k, v in d.items()}
       for p, d in data.items()}
print("median of %d runs        none   standard     strict" % N)
rows = (("first answer, ms", "first", "%.1f"),
        ("getppid(), us", "sys", "%.3f"),
        ("open+close, us", "open", "%.2f"),
        ("trivial cell, us", "cell", "%.1f"))
for label, k, fmt in rows:
    cells = [fmt % med[p][k] for p in data]
    print("%-20s %10s %10s %10s" % (label, *cells))
for p in ("standard", "strict"):
    print("%s adds %.1f ms to start-up" % (
        p, med[p]["first"] - med["none"]["first"]))
