#!/usr/bin/python3
"""bench/replay.py - what transcripts cost, and how fast a replay runs.

1. Replay: a transcript of 10,000 trivial cells (recorded by coil
   itself) replayed by `coil --replay` (and with --check), in cells a
   second and the supervisor's peak memory; against a Jupyter kernel
   (ipykernel, through jupyter_client) executing the same cells one
   after another.  Target: 20 times Jupyter's rate.
2. Recording: the median round trip of a trivial cell in an agent
   session with --record against --no-record, interleaved rounds
   (measured first, on a quiet machine).
   Target: under 5 %.

3. Resume (key "resume", run alone): `coil --resume FILE --agent` of a
   1,000-cell transcript of trivial cells, until the rebuilt session is
   served (it ends at once: stdin is empty), beside `coil --replay
   FILE` and `--replay --check` of the same file (resume compares
   every cell as --check does), rounds interleaved, medians.  Target:
   resume at replay's speed (thousands of cells a second).

    COIL=build/src/coil /usr/bin/python3 bench/replay.py
    COIL=build/src/coil /usr/bin/python3 bench/replay.py resume
    BENCH_QUICK=1 ...   (1,000 cells, fewer rounds)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
# COIL=build/src/coil works too: the runs are made in a temp dir
if os.sep in os.environ.get("COIL", ""):
    os.environ["COIL"] = os.path.abspath(os.environ["COIL"])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from coiltest import COIL, Coil  # noqa: E402

QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
N = 1000 if QUICK else 10000
WORK = tempfile.mkdtemp(prefix="bench-replay-")


def cells(n):
    return ["x = %d" % i if i % 2 == 0 else "x + 1" for i in range(n)]


def record(path, n):
    """A transcript of n trivial cells, sent as a model would (one after
    the other)."""
    with Coil("--record", path, cwd=WORK) as c:
        for code in cells(n):
            c.run(code)


def replay(path, *args, how="--replay"):
    """(seconds, peak RSS in MB of coil itself) of one replay (how
    "--resume": one resume, served to an agent that has nothing to
    ask)."""
    t = time.perf_counter()
    p = subprocess.Popen([COIL, how, path, "--no-record", *args],
                         cwd=WORK, stdout=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, ru = os.wait4(p.pid, 0)[1:]
    took = time.perf_counter() - t
    p.returncode = 0
    p.stderr.close()
    return took, ru.ru_maxrss / 1024


def jupyter(n):
    """Seconds for a python3 kernel to execute n cells through
    jupyter_client, waiting for each cell's idle status; None without
    jupyter_client."""
    try:
        from jupyter_client.manager import start_new_kernel
    except ImportError:
        return None
    os.environ["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        t = time.perf_counter()
        for code in cells(n):
            # as a notebook client does: the reply, and every output
            # until the kernel is idle again
            mid = kc.execute(code)
            kc.get_shell_msg(timeout=60)
            while True:
                m = kc.get_iopub_msg(timeout=60)
                if m["parent_header"].get("msg_id") == mid and \
                        m["msg_type"] == "status" and \
                        m["content"]["execution_state"] == "idle":
                    break
        return time.perf_counter() - t
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def roundtrips(args, n):
    with Coil(*args, cwd=WORK) as c:
        c.run("x = 0")
        ts = []
        for _ in range(n):
            t = time.perf_counter()
            c.run("x + 1", None)
            ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e6


def recording():
    """Medians of round trips without and with --record, in rounds that
    alternate which goes first, before anything else has run (a Jupyter
    kernel's processes linger a while after it is shut down)."""
    rounds, n = (3, 200) if QUICK else (9, 1000)
    on, off = [], []
    rec = ["--record", os.path.join(WORK, "r.jsonl")]
    for i in range(rounds):
        for args in ((["--no-record"], rec) if i % 2 == 0 else
                     (rec, ["--no-record"])):
            (off if args[0] == "--no-record" else on).append(
                roundtrips(args, n))
    return statistics.median(off), statistics.median(on), rounds, n


def main():
    recording_figures = recording()
    path = os.path.join(WORK, "t.jsonl")
    record(path, N)
    size = os.path.getsize(path)
    took, rss = replay(path)
    ctook, crss = replay(path, "--check")
    jt = jupyter(N)
    print("| %d trivial cells (%.1f MB transcript) | seconds | cells/s | "
          "peak RSS of coil |" % (N, size / 1e6))
    print("| --- | ---: | ---: | ---: |")
    print("| coil --replay | %.2f | %.0f | %.0f MB |" % (took, N / took, rss))
    print("| coil --replay --check | %.2f | %.0f | %.0f MB |"
          % (ctook, N / ctook, crss))
    if jt is None:
        print("| Jupyter kernel (jupyter_client) | - | not installed | |")
    else:
        print("| Jupyter kernel (jupyter_client) | %.2f | %.0f | |"
              % (jt, N / jt))
        print("\nreplay / Jupyter: %.1fx (target 20x)" % (jt / took))
    a, b, rounds, n = recording_figures

    print("\n| agent cell round trip, median of %d rounds of %d | µs |"
          % (rounds, n))
    print("| --- | ---: |")
    print("| --no-record | %.0f |" % a)
    print("| --record | %.0f |" % b)
    print("\nrecording costs %+.1f%% a cell (target under 5%%)"
          % ((b - a) / a * 100))


def resume():
    """--resume against --replay and --replay --check, side by side."""
    n, rounds = 1000, 3 if QUICK else 7
    path = os.path.join(WORK, "t.jsonl")
    record(path, n)
    kinds = (("coil --replay", ()), ("coil --replay --check", ("--check",)),
             ("coil --resume --agent", ("--agent",)))
    took = {k: [] for k, _ in kinds}
    rss = {k: [] for k, _ in kinds}
    for i in range(rounds):
        order = kinds if i % 2 == 0 else tuple(reversed(kinds))
        for k, args in order:
            t, r = replay(path, *args, how="--resume" if "--agent" in args
                          else "--replay")
            took[k].append(t)
            rss[k].append(r)
    with open("/proc/loadavg") as f:
        load = f.read().split()[:3]
    print("| %d trivial cells, median of %d rounds (load %s) | seconds | "
          "cells/s | peak RSS of coil |" % (n, rounds, " ".join(load)))
    print("| --- | ---: | ---: | ---: |")
    for k, _ in kinds:
        t = statistics.median(took[k])
        print("| %s | %.2f | %.0f | %.0f MB |" % (k, t, n / t,
                                                 statistics.median(rss[k])))
    a = statistics.median(took["coil --replay --check"])
    b = statistics.median(took["coil --resume --agent"])
    print("\nresume / replay --check: %.2fx the time (target: about 1x)"
          % (b / a))


if __name__ == "__main__":
    try:
        if sys.argv[1:] == ["resume"]:
            resume()
        else:
            main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
