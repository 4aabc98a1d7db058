"""What checkpoints cost a session: issue 10's "What must hold" 1-4,
side by side with `--checkpoints 0` in one run.

    /usr/bin/python3 bench/ckcost.py KEY          run one measurement
    /usr/bin/python3 bench/ckcost.py table FILE   Markdown table of the results

FILE holds bench.py's results too: the table takes the back-to-back round
trips, the Jupyter kernel's and the cold starts from there.  Environment
as for bench.py (COIL, BENCH_QUICK=1).  bench/run drives this.

  data_*     a data session: numpy and pandas imported, 100 MB of frames,
             `x += 1` with 20 ms between cells.  CPU per cell of the whole
             process tree (coil, its janitor, init, the worker, the
             checkpoints: each task's sum_exec_runtime from
             /proc/PID/task/TID/schedstat, plus what the processes that
             ended meanwhile left in their parents' cutime and cstime) and
             the latency's median, from request written to answer read.
  conc       100 concurrent default sessions, one client sending `1+1`
             to each in turn: the latency's median and 99th percentile.
  idle_mem   an idle default session after 20 cells: the private memory
             (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) of
             all its processes, checkpoints included, less that of
             `python3 -c 'import time; time.sleep(60)'` measured the same
             way.
  *_every    the same as default with `--checkpoint-policy every`, when
             the binary has that option.
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import COIL, NA, ask, check_two, coil_peer, recv  # noqa: E402
from coiltest import descendants  # noqa: E402

QUICK = bench.QUICK
TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")

# Iterations: (default, quick).
N = {"data": (300, 40), "conc_sessions": (100, 20), "conc_rounds": (5, 3),
     "rt_every": (10000, 1000)}


def n(kind):
    return N[kind][1 if QUICK else 0]


def policy_every():
    """The arguments for `--checkpoint-policy every`; NA when this coil
    has no such option."""
    out = subprocess.run([COIL, "--help"], capture_output=True,
                         text=True).stdout
    if "--checkpoint-policy" not in out:
        raise NA("no --checkpoint-policy in this coil")
    return ("--checkpoint-policy", "every")


def started(*args):
    """A coil --agent with args past its first checked `1+1`."""
    peer = coil_peer(*args)
    try:
        check_two(ask(peer, "1+1"))
    except (NA, OSError):
        raise NA(bench.stderr_tail(peer, first=True))
    return peer


# ------------------------------------------------------- process tree CPU

def task_ns(pid):
    """(own, reaped): CPU nanoseconds of a process's live threads, and of
    its reaped children (which the kernel keeps in ns but shows in clock
    ticks).  (0, 0) when it is gone."""
    own = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    own += int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                pass
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return own, 0
    fields = st[st.rindex(")") + 2:].split()
    # Fields 16 and 17 (cutime, cstime), counted from 1 with pid first.
    return own, (int(fields[13]) + int(fields[14])) * TICK_NS


ROLES = {"coil": "supervisor", "coil-init": "init", "coil-worker": "worker",
         "coil-ckpt": "checkpoints"}


def tree_parts(root):
    """CPU nanoseconds of root and every process below it, by role: the
    supervisor (and its janitor), init, the worker, the live checkpoints,
    and "dropped": the checkpoints that ended, which the worker reaped.
    The difference of two readings is what the tree spent in between: a
    process that ended meanwhile left its whole time in its parent's
    cutime, and it counted only its time before the first reading."""
    parts = dict.fromkeys(list(ROLES.values()) + ["dropped", "other"], 0)
    for p in [root] + [p.pid for p in descendants(root)]:
        own, reaped = task_ns(p)
        try:
            with open(f"/proc/{p}/comm") as f:
                role = ROLES.get(f.read().strip(), "other")
        except OSError:
            continue
        parts[role] += own
        parts["dropped" if role == "worker" else role] += reaped
    return parts


def tree_ns(root):
    return sum(tree_parts(root).values())


def minflt(pid):
    """Minor faults of a process so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return 0
    return int(st[st.rindex(")") + 2:].split()[7])


# ------------------------------------------------------------ data session

DATA_SETUP = (
    "import numpy as np, pandas as pd\n"
    "rng = np.random.default_rng(1)\n"
    "frames = [pd.DataFrame(rng.random((125000, 10)),\n"
    "                       columns=list('abcdefghij')) for _ in range(10)]\n"
    "x = 0\n"
    "int(sum(f.memory_usage(deep=True).sum() for f in frames) // 2**20)")


def data_session(*args):
    """(CPU ms per cell, count) of `x += 1` every 20 ms in a session
    holding 100 MB of pandas frames; extra: the p50 latency, the CPU by
    role (ms a cell), the worker's minor faults a cell and the median
    time its checkpoint forks took."""
    peer = started("--timeout", "600", *args)
    r = ask(peer, DATA_SETUP, timeout=600)
    if r.get("status") != "ok":
        raise NA(f"setup failed: {json.dumps(r)[:120]}")
    for _ in range(20):
        time.sleep(0.02)
        ask(peer, "x += 1")
    worker = [p.pid for p in descendants(peer.pid)
              if p.comm == "coil-worker"][:1] or [0]
    count = n("data")
    times = []
    cpu0, flt0 = tree_parts(peer.pid), minflt(worker[0])
    for _ in range(count):
        time.sleep(0.02)
        t0 = time.perf_counter_ns()
        peer.send({"code": "x += 1"})
        line = recv(peer)
        times.append(time.perf_counter_ns() - t0)
        if b'"status":"ok"' not in line.replace(b" ", b""):
            raise NA(f"cell failed: {line[:120]!r}")
    time.sleep(0.02)           # the last cell's idle time is its cost too
    cpu1, flt1 = tree_parts(peer.pid), minflt(worker[0])
    parts = {k: (cpu1[k] - cpu0[k]) / count / 1e6 for k in cpu0}
    forks = [c.get("fork_ms") for c in
             peer.call({"op": "snapshots"}, None).get("checkpoints", [])
             if c.get("kind") == "auto" and c.get("fork_ms")]
    peer.close()
    return sum(parts.values()), count, {
        "p50_ms": statistics.median(times) / 1e6, "parts_ms": parts,
        "worker_faults": (flt1 - flt0) / count,
        "fork_ms": statistics.median(forks) if forks else None,
        "mb": int(r.get("result") or 0)}


# ------------------------------------------------- 100 concurrent sessions

def conc(*args):
    """p50 (and p99 in extra) ms of `1+1` sent to each of 100 sessions in
    turn, one client."""
    peers = []
    try:
        for _ in range(n("conc_sessions")):
            peers.append(started(*args))
        for p in peers:                       # a first round, not timed
            check_two(ask(p, "1+1"))
        times = []
        for _ in range(n("conc_rounds")):
            for p in peers:
                t0 = time.perf_counter_ns()
                p.send({"code": "1+1"})
                line = recv(p)
                times.append(time.perf_counter_ns() - t0)
        check_two(json.loads(line))
    finally:
        for p in peers:
            p.close()
    q = statistics.quantiles(times, n=100, method="inclusive")
    return q[49] / 1e6, len(times), {"p99_ms": q[98] / 1e6,
                                     "sessions": len(peers)}


# ------------------------------------------------------------- idle memory

def private_kb(pid, fields=("Private_Clean:", "Private_Dirty:")):
    """The sum of fields of /proc/PID/smaps_rollup, in kB (0: gone)."""
    kb = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(fields):
                    kb += int(line.split()[1])
    except OSError:
        pass
    return kb


def python_private_kb():
    """(private, private dirty) kB of a python3 asleep."""
    p = subprocess.Popen([bench.PY, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)
        return private_kb(p.pid), private_kb(p.pid, ("Private_Dirty:",))
    finally:
        p.kill()
        p.wait()


def idle_mem():
    """MB of private memory an idle default session holds beyond
    python3's own; extra: the processes counted, their total, and the
    same for Private_Dirty alone.  Private_Clean counts the file pages
    no other process maps: libpython's, for instance, when no other coil
    runs (python3 has it built in), so the dirty figure is the steadier
    one.  The session is asked for its namespace first, as a client that
    waits for the worker would be: its pristine checkpoint is taken then
    (a cell sent at once gets none), and counted."""
    peer = coil_peer()
    peer.call({"op": "vars"}, None)
    for i in range(20):
        check_two(ask(peer, "1+1"))
    # idle: past the pause the policy waits for after cheap cells
    # (session-ckpt.c, CKPT_PAUSE_MS), so its checkpoint is in
    time.sleep(2.0)
    procs = [peer.pid] + [p.pid for p in descendants(peer.pid)
                          if not p.zombie]
    total = sum(private_kb(p) for p in procs)
    dirty = sum(private_kb(p, ("Private_Dirty:",)) for p in procs)
    peer.close()
    py, py_dirty = python_private_kb()
    return (total - py) / 1024, 1, {"procs": len(procs),
                                    "total_mb": total / 1024,
                                    "python_mb": py / 1024,
                                    "dirty_mb": (dirty - py_dirty) / 1024}


def rt_every():
    peer = started(*policy_every())
    return bench.line_round_trips(peer, n("rt_every"))


MEASURES = {
    "data_default": data_session,
    "data_nockpt": lambda: data_session("--checkpoints", "0"),
    "data_every": lambda: data_session(*policy_every()),
    "conc_default": conc,
    "conc_nockpt": lambda: conc("--checkpoints", "0"),
    "conc_every": lambda: conc(*policy_every()),
    "idle_mem": idle_mem,
    "rt_every": rt_every,
}


def measure(key):
    bench.MEASURES.update(MEASURES)
    bench.measure(key)


# ---------------------------------------------------------------- the table

def val(res, key, field="value"):
    rec = res.get(key) or {}
    return rec.get(field) if "na" not in rec else None


def why(res, key):
    rec = res.get(key) or {"na": "not run"}
    return rec.get("na", "")


def fig(v, unit, na=""):
    return bench.fmt(v, unit) if v is not None else f"n/a ({na or '?'})"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "n/a"
    r = a / b
    return f"{r:,.{0 if r >= 100 else 1 if r >= 10 else 2}f}×"


def verdict(ok):
    return "n/a" if ok is None else ("yes" if ok else "**no**")


def rows(res):
    """(what, default, no-ckpt, every, ratio, target, holds)."""
    rt, rt0, rte = (val(res, k) for k in ("rt_coil", "rt_coil_nockpt",
                                          "rt_every"))
    dc, dc0, dce = (val(res, k) for k in ("data_default", "data_nockpt",
                                          "data_every"))
    dl, dl0, dle = (val(res, k, "p50_ms") for k in (
        "data_default", "data_nockpt", "data_every"))
    c50, c99 = val(res, "conc_default"), val(res, "conc_default", "p99_ms")
    e50, e99 = val(res, "conc_every"), val(res, "conc_every", "p99_ms")

    def pair(p50, p99, key):
        if p50 is None:
            return f"n/a ({why(res, key)})"
        return f"{fig(p50, 'ms')} / {fig(p99, 'ms')}"
    mem = val(res, "idle_mem")
    jup, cold, pyc = (val(res, k) for k in ("rt_jupyter", "cold_coil",
                                            "cold_pyc"))
    cold_exit = val(res, "cold_coil_exit")

    def le(a, b, k):
        return None if a is None or b is None else a <= k * b

    na_e = why(res, "rt_every")
    return [
        ("1. `1+1` back to back, median round trip", fig(rt, "µs"),
         fig(rt0, "µs"), fig(rte, "µs", na_e), ratio(rt, rt0),
         "≤ 1.2× no-ckpt", verdict(le(rt, rt0, 1.2))),
        ("2. data session, CPU per `x += 1` (whole tree, 20 ms apart)",
         fig(dc, "ms", why(res, "data_default")),
         fig(dc0, "ms", why(res, "data_nockpt")),
         fig(dce, "ms", why(res, "data_every")), ratio(dc, dc0),
         "≤ 1.5× no-ckpt", verdict(le(dc, dc0, 1.5))),
        ("2. the same, latency p50", fig(dl, "ms"), fig(dl0, "ms"),
         fig(dle, "ms", why(res, "data_every")), ratio(dl, dl0),
         "≤ 1.2× no-ckpt", verdict(le(dl, dl0, 1.2))),
        ("3. 100 concurrent sessions, `1+1` in turn: p50 / p99",
         pair(c50, c99, "conc_default"), "—",
         pair(e50, e99, "conc_every"), "—", "p99 < 5 ms",
         verdict(None if c99 is None else c99 < 5)),
        ("3. idle session's private memory beyond python3's",
         fig(mem, "MB", why(res, "idle_mem")), "—", "—", "—", "< 15 MB",
         verdict(None if mem is None else mem < 15)),
        ("4. `1+1` round trip vs Jupyter kernel", fig(rt, "µs"),
         "—", "—", f"{ratio(jup, rt)} (Jupyter {fig(jup, 'µs')})",
         "≥ 50×", verdict(None if rt is None or jup is None
                          else jup / rt >= 50)),
        ("4. cold start to first answer vs `python3 -c`", fig(cold, "ms"),
         "—", "—", f"{ratio(cold, pyc)} (python3 {fig(pyc, 'ms')})",
         "≤ 1.5×", verdict(le(cold, pyc, 1.5))),
        ("4. the same, to coil's exit (the session torn down)",
         fig(cold_exit, "ms", why(res, "cold_coil_exit")), "—", "—",
         f"{ratio(cold_exit, pyc)} (python3 {fig(pyc, 'ms')})", "—", "—"),
    ]


def table(path):
    res = bench.load_results(path)
    print("| checkpoint cost (issue 10) | default | `--checkpoints 0` "
          "| `--checkpoint-policy every` | default/other | target | holds |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- |")
    for r in rows(res):
        print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    print()
    dd, im = res.get("data_default", {}), res.get("idle_mem", {})
    notes = []
    if "mb" in dd:
        notes.append(f"data session: {dd['mb']} MB of frames, {dd['n']} "
                     "cells after 20 warm-up ones")
    if "n" in res.get("conc_default", {}):
        c = res["conc_default"]
        notes.append(f"concurrency: {c['sessions']} sessions, {c['n']} "
                     "cells")
    if "procs" in im:
        notes.append(f"idle memory: {im['procs']} processes holding "
                     f"{im['total_mb']:.1f} MB, python3 -c sleep "
                     f"{im['python_mb']:.1f} MB; Private_Dirty alone "
                     f"{im.get('dirty_mb', 0):.1f} MB beyond python3's")
    print("Medians unless named. " + "; ".join(notes) + ".")
    for key in ("data_default", "data_every", "data_nockpt"):
        if "parts_ms" in res.get(key, {}):
            print()
            print(where(key, res[key]))


def where(key, rec):
    """A sentence: where a data-session cell's CPU went."""
    p = rec["parts_ms"]
    fork = (f"; a checkpoint's fork took {rec['fork_ms']:.2f} ms there"
            if rec.get("fork_ms") else "")
    return (f"{key}: a cell's CPU went to the worker "
            f"{p['worker']:.2f} ms ({rec['worker_faults']:.0f} minor faults"
            f"{fork}), the exits of dropped checkpoints {p['dropped']:.2f}"
            f" ms, the supervisor {p['supervisor']:.2f} ms, the live "
            f"checkpoints {p['checkpoints']:.2f} ms.")


if __name__ == "__main__":
    bench.cli(table, measure, MEASURES, __doc__)
