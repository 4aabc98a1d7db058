#!/usr/bin/python3
"""bench/ckpt.py - what checkpoints cost, side by side with pickle and
deepcopy of the same namespace.

    COIL=build/src/coil /usr/bin/python3 bench/ckpt.py
    COIL_BENCH_BIG=1 ...      also the 1 GB cases (a few minutes, ~5 GB RAM)
    BENCH_QUICK=1 ...         1 MB only, a smoke run (or COIL_BENCH_QUICK=1)

For each namespace size (1 MB, 100 MB, 1 GB) and shape ("big": a numpy
array and a bytearray; "small": a list of ints and a dict of small lists)
it measures, in one coil --agent session:

  checkpoint  the snapshot op, end to end (gc.freeze + fork + the message
              to the supervisor), and the fork alone as the worker timed it
  pickle      pickle.dumps + pickle.loads of the namespace, in the worker
  deepcopy    copy.deepcopy of the namespace, in the worker
  rollback    the rollback op, end to end, right after a cell: the wait for
              that cell's checkpoint, the worker killed
              (not waited for), the checkpoint resumed, its hello
  touch       a cell that writes (big) or reads (small: reading changes
              reference counts) the whole namespace: its first pass right
              after a checkpoint pays the copy-on-write faults, the second
              pass in the same cell does not; and the memory the
              checkpoint then holds on its own

then the per-cell cost of automatic checkpoints on a trivial cell, back to
back and with 20 ms of think time between requests, and transparent huge
pages for the big shape (numpy's madvise plus glibc.malloc.hugetlb=1,
against 4 KiB pages).  Prints a Markdown table on stdout, progress on
stderr.
"""
import json
import os
import statistics
import sys
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "lib"))
from coiltest import COIL, unsandboxed  # noqa: E402

BIG = os.environ.get("COIL_BENCH_BIG", "0") not in ("", "0")
QUICK = any(os.environ.get(v, "0") not in ("", "0")
            for v in ("BENCH_QUICK", "COIL_BENCH_QUICK"))
MB = 1 << 20


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def session(*args, env=None):
    """coil --agent without a sandbox and with an hour for each cell: the
    1 GB cases take their time."""
    e = dict(os.environ)
    e.update(env or {})
    return unsandboxed("--timeout", "3600", *args, env=e)


def call(s, req):
    """The response to req, however long it takes."""
    return s.call(req, None)


def timed(s, req):
    """(milliseconds, response) of req, end to end."""
    t0 = time.perf_counter()
    r = call(s, req)
    return (time.perf_counter() - t0) * 1000, r


def value(s, code):
    r = call(s, {"code": code})
    if r["status"] != "ok":
        raise RuntimeError("cell failed: %s" % json.dumps(r)[:2000])
    return eval(r["result"]) if r["result"] is not None else None


def build_code(shape, size):
    if shape == "big":
        return ("import numpy as np\n"
                "arr = np.ones(%d // 16)\n"
                "ba = bytearray(b'x' * (%d // 2))\n"
                "NS = {'arr': arr, 'ba': ba}" % (size, size))
    # About 36 bytes an int in a list, and 200 bytes a dict entry holding
    # a list of three ints.
    return ("l = list(range(10**9, 10**9 + %d // 2 // 36))\n"
            "d = {i: [i, i + 1, i + 2] for i in range(%d // 2 // 200)}\n"
            "NS = {'l': l, 'd': d}" % (size, size))


TOUCH = {
    "big": ("import time\n"
            "def _touch():\n"
            "    t = time.perf_counter()\n"
            "    arr[:] += 1\n"
            "    np.frombuffer(ba, dtype=np.uint8)[:] += 1\n"
            "    return (time.perf_counter() - t) * 1000\n"
            "_a = _touch(); _b = _touch()\n"
            "(_a, _b)"),
    "small": ("import time\n"
              "def _touch():\n"
              "    t = time.perf_counter()\n"
              "    s = 0\n"
              "    for x in l:\n"
              "        s += x\n"
              "    for v in d.values():\n"
              "        s += v[0]\n"
              "    return (time.perf_counter() - t) * 1000\n"
              "_a = _touch(); _b = _touch()\n"
              "(_a, _b)"),
}

PICKLE = ("import pickle, time\n"
          "_t = time.perf_counter()\n"
          "_o = pickle.loads(pickle.dumps(NS, protocol=5))\n"
          "_t = (time.perf_counter() - _t) * 1000\n"
          "del _o\n"
          "_t")
DEEPCOPY = ("import copy, time\n"
            "_t = time.perf_counter()\n"
            "_o = copy.deepcopy(NS)\n"
            "_t = (time.perf_counter() - _t) * 1000\n"
            "del _o\n"
            "_t")


def rss_mb(s):
    return value(s, "int(open('/proc/self/statm').read().split()[1]) * "
                   "4096 / 2**20")


def case(shape, size, env=None, label=""):
    log("case %s %s %s" % (shape, human(size), label))
    s = session(env=env)
    value(s, "pass")
    base = rss_mb(s)
    value(s, build_code(shape, size) + "\nNone")
    ns_mb = rss_mb(s) - base
    out = {"shape": shape, "size": size, "ns_mb": ns_mb, "label": label}
    snaps, forks = [], []
    for i in range(3):
        call(s, {"op": "snapshots"})
        ms, r = timed(s, {"op": "snapshot", "name": "b%d" % i})
        assert r["status"] == "ok", r
        snaps.append(ms)
    lst = call(s, {"op": "snapshots"})["checkpoints"]
    forks = [x["fork_ms"] for x in lst if (x["name"] or "").startswith("b")]
    out["ckpt_ms"] = statistics.median(snaps)
    out["fork_ms"] = statistics.median(forks)
    if not label:
        out["pickle_ms"] = value(s, PICKLE)
        out["deepcopy_ms"] = value(s, DEEPCOPY)
    rbs = []
    for i in range(3):
        value(s, "pass")
        call(s, {"op": "snapshots"})     # the re-arm of the last one is in
        ms, r = timed(s, {"op": "rollback", "to": "b%d" % i})
        assert r["status"] == "ok", r
        rbs.append(ms)
    out["rollback_ms"] = statistics.median(rbs)
    # touch: the checkpoint forked after the previous cell shares every
    # page; the first pass copies them.
    value(s, "pass")
    before = call(s, {"op": "snapshots"})["memory"] or 0
    first, second = value(s, TOUCH[shape])
    out["touch_first_ms"], out["touch_again_ms"] = first, second
    # The old pages are the checkpoints' now (several may share them, so
    # no one of them holds them privately): the total says what it cost.
    after = call(s, {"op": "snapshots"})["memory"] or 0
    out["touch_private_mb"] = (after - before) / MB
    s.close()
    return out


def per_cell(n, think_ms):
    res = {}
    for k in ("8", "0"):
        s = session("--checkpoints", k)
        value(s, "pass")
        times = []
        for i in range(n):
            if think_ms:
                time.sleep(think_ms / 1000)
            ms, r = timed(s, {"code": "x = %d" % i})
            times.append(ms)
        s.close()
        res[k] = statistics.median(times)
    return res


def human(n):
    return "%d GB" % (n >> 30) if n >= 1 << 30 else "%d MB" % (n >> 20)


def x(a, b):
    return "%.0fx" % (a / b) if b > 0 else "-"


def main():
    if not os.access(COIL, os.X_OK):
        sys.exit("bench/ckpt.py: no coil at %s (set COIL)" % COIL)
    sizes = [1 * MB] if QUICK else [1 * MB, 100 * MB]
    if BIG:
        sizes.append(1 << 30)
    rows = []
    for size in sizes:
        for shape in ("big", "small"):
            rows.append(case(shape, size))
    thp = []
    for size in sizes[1:] or sizes:
        thp.append(case("big", size, env={"NUMPY_MADVISE_HUGEPAGE": "0"},
                        label="4 KiB pages"))
        thp.append(case("big", size, env={
            "NUMPY_MADVISE_HUGEPAGE": "1",
            "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}, label="THP"))
    log("per-cell overhead")
    b2b = per_cell(50 if QUICK else 300, 0)
    think = per_cell(20 if QUICK else 100, 20)

    try:
        mode = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
        mode = mode[mode.index("[") + 1:mode.index("]")]
    except (OSError, ValueError):
        mode = "unknown"
    print("### Checkpoints against pickle and deepcopy\n")
    print("`%s` on %d CPUs, Python in coil's worker; THP mode `%s`; "
          "times in ms, medians of 3 where repeated.\n"
          % ("COIL_BENCH_BIG=%d bench/ckpt.py" % BIG, os.cpu_count(), mode))
    print("| namespace | RSS | checkpoint (fork) | pickle+loads | deepcopy "
          "| vs pickle | vs deepcopy | rollback |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %s %s | %.0f MB | %.2f (%.2f) | %.1f | %.1f | %s | %s | "
              "%.2f |" % (human(r["size"]), r["shape"], r["ns_mb"],
                          r["ckpt_ms"], r["fork_ms"], r["pickle_ms"],
                          r["deepcopy_ms"], x(r["pickle_ms"], r["ckpt_ms"]),
                          x(r["deepcopy_ms"], r["ckpt_ms"]),
                          r["rollback_ms"]))
    print("\n### A cell that touches the whole namespace after a checkpoint"
          "\n")
    print("| namespace | pages | first pass | second pass | extra | "
          "checkpoint memory grew by |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows + thp:
        print("| %s %s | %s | %.1f | %.1f | %.1f | %.0f MB |"
              % (human(r["size"]), r["shape"], r["label"] or "default",
                 r["touch_first_ms"], r["touch_again_ms"],
                 r["touch_first_ms"] - r["touch_again_ms"],
                 r["touch_private_mb"]))
    print("\n### Huge pages (big objects)\n")
    print("| namespace | pages | checkpoint (fork) | rollback |")
    print("|---|---|---:|---:|")
    for r in thp:
        print("| %s %s | %s | %.2f (%.2f) | %.2f |"
              % (human(r["size"]), r["shape"], r["label"], r["ckpt_ms"],
                 r["fork_ms"], r["rollback_ms"]))
    print("\n### Per-cell cost of automatic checkpoints (trivial cell)\n")
    print("| requests | --checkpoints 8 | --checkpoints 0 |")
    print("|---|---:|---:|")
    print("| back to back | %.2f ms | %.2f ms |" % (b2b["8"], b2b["0"]))
    print("| 20 ms think time between | %.2f ms | %.2f ms |"
          % (think["8"], think["0"]))


if __name__ == "__main__":
    main()
