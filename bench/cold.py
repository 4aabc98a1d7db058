#!/usr/bin/python3
"""bench/cold.py - cold start to the first answer, by what coil sets up.

Spawn coil --agent, send {"code": "1+1"}, time until the answer; with and
without the sandbox and checkpoints, against python3 -c 1+1.  Medians of
12 runs after 3 warm-ups.

    COIL=build/src/coil /usr/bin/python3 bench/cold.py
"""
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from coiltest import Coil  # noqa: E402


def first_answer(args, n=15):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        c = Coil(*args)
        c.send_raw(b'{"code":"1+1"}\n')
        c.raw_line(None)
        ts.append((time.perf_counter() - t) * 1000)
        c.close()
    return statistics.median(ts[3:])


def python_c(n=15):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(["/usr/bin/python3", "-c", "1+1"], check=True)
        ts.append((time.perf_counter() - t) * 1000)
    return statistics.median(ts[3:])


def main():
    base = python_c()
    print("| coil options | first answer | vs python3 -c (%.1f ms) |" % base)
    print("| --- | ---: | ---: |")
    for args in (["--sandbox", "none", "--checkpoints", "0"],
                 ["--sandbox", "none"],
                 ["--sandbox", "standard", "--checkpoints", "0"],
                 ["--sandbox", "standard"], ["--sandbox", "strict"]):
        ms = first_answer(args)
        print("| `%s` | %.1f ms | %.2f× |" % (" ".join(args), ms, ms / base))


if __name__ == "__main__":
    main()
