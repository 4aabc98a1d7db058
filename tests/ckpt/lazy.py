#!/usr/bin/python3
"""--checkpoint-policy lazy: cheap cells that may be run again get no
checkpoint, however long the pause after them (a fleet's sessions all
pause between cells, and a fork after each costs more than the cells);
a crash runs them again instead.  A cell that did something outside the
namespace is kept once the session is quiet, as under idle.  With
--redo none it is refused: nothing would give those cells back.
"""
import os
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, check, check_exit, cleanup, done,  # noqa: E402
                      skip, unsandboxed, wait_for, workdir)

CRASH = "import os; os.kill(os.getpid(), 9)"

p = subprocess.run([COIL, "--agent", "--checkpoint-policy", "lazy",
                    "--redo", "none"], stdin=subprocess.DEVNULL,
                   capture_output=True, text=True, timeout=30)
check(p.returncode == 2 and "--redo none" in p.stderr,
      "lazy with --redo none is refused, saying why", (p.returncode,
                                                       p.stderr))

wd = workdir()
try:
    with unsandboxed("--checkpoint-policy", "lazy", workdir=wd) as c:
        c.run("w = 0")                  # the first cell's cold start
        r = c.run("open('f.txt', 'w').write('x')")
        check(r.get("effects"), "a cell writes a file", r)
        snaps = wait_for(lambda: (lambda s: s if s["unkept"] == [] else
                                  None)(c.call({"op": "snapshots"})), 10)
        check(snaps and snaps.get("policy") == "lazy" and
              r["cell"] in [x["cell"] for x in snaps["checkpoints"]],
              "a cell that may not be run again is kept", snaps)
        cost = (snaps or {}).get("cost_ms") or 2
        cheap = [c.run(code) for code in ("a = 1", "b = a + 1", "c = b * 2")]
        # past the pause (a second) that idle would checkpoint at
        time.sleep(1.5)
        snaps = c.call({"op": "snapshots"})
        work = sum(x.get("duration_ms", 0) for x in cheap)
        if work < 10 * cost / 2:
            check(snaps["unkept"] == [x["cell"] for x in cheap],
                  "cheap cells: no checkpoint after the pause", snaps)
        else:
            skip("cheap cells: no checkpoint after the pause",
                 "they took %.1f ms, near 10 forks (%.1f ms): kept as "
                 "long work" % (work, 10 * cost))
        base = max(x["cell"] for x in snaps["checkpoints"])
        crash = c.run(CRASH)
        restored = crash.get("restored") or {}
        check(crash["status"] == "crashed" and
              restored.get("cell") == base and
              restored.get("redone") == [x["cell"] for x in cheap
                                         if x["cell"] > base] and
              not restored.get("lost"),
              "a crash goes back to the last checkpoint and runs the "
              "cheap cells after it again", crash)
        r = c.run("(w, a, b, c)")
        check(r.get("result") == "(0, 1, 2, 4)", "the state is back", r)
        with open(os.path.join(wd, "f.txt")) as f:
            check(f.read() == "x", "the file was written once")
        check_exit(c, "coil (lazy) exits 0")
finally:
    cleanup(wd)
done()
