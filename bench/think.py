#!/usr/bin/python3
"""bench/think.py - what checkpoints cost as an agent sees it.

A model thinks between cells; coil forks its checkpoint after each reply,
in that pause.  This measures the latency of a trivial cell (1+1) after
pauses of 0, 5, 20 and 100 ms, with checkpoints (the default) and
without (--checkpoints 0).  Medians of 60 cells each.

    COIL=build/src/coil /usr/bin/python3 bench/think.py
"""
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from coiltest import Coil  # noqa: E402


def latencies(args, thinks, n=60):
    c = Coil(*args)

    def call(code):
        t = time.perf_counter()
        c.call({"code": code}, None)
        return (time.perf_counter() - t) * 1e6
    call("x = 1")
    out = {}
    for think in thinks:
        ts = []
        for _ in range(n):
            time.sleep(think)
            ts.append(call("1+1"))
        out[think] = statistics.median(ts)
    c.close()
    return out


def main():
    thinks = (0, 0.005, 0.02, 0.1)
    on = latencies([], thinks)
    off = latencies(["--checkpoints", "0"], thinks)
    print("| pause before the cell | checkpoints on | --checkpoints 0 |")
    print("| ---: | ---: | ---: |")
    for t in thinks:
        print("| %d ms | %.0f µs | %.0f µs |" % (t * 1000, on[t], off[t]))


if __name__ == "__main__":
    main()
