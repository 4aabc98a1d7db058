"""Branching a live session: issue 26's "What must hold", side by side
with the only way a Jupyter kernel or a plain Python worker gets there.

    /usr/bin/python3 bench/branches.py KEY          run one measurement
    /usr/bin/python3 bench/branches.py table FILE   Markdown table

FILE holds ckcost.py's results too: the table puts issue 10's 100
concurrent sessions beside the branches'.  Environment as for bench.py
(COIL, BENCH_QUICK=1).  bench/run drives this.

Every session holds the data session of ckcost.py: numpy and pandas
imported and 10 frames of 125,000 × 10 floats (about 100 MB).

  br_coil     fork 8 branches of it and get `1+1` answered by each: one
              {"op":"fork","n":8}, then 8 execs, one with "session" for
              each branch, all sent before the first answer is read.
              From the fork's write to the eighth answer read, the median
              over the rounds (the branches are closed between rounds,
              not timed).  Extra: the private memory of the processes
              the fork made (Private_Clean + Private_Dirty of
              /proc/PID/smaps_rollup), a branch, right after the fork and
              after its `1+1`; and what the sessions op says they own.
  br_bare     the same from a bare interpreter: what the fork costs
              beyond the state's size.
  br_forks    8 bare fork()s of a plain Python process holding the same
              state, each child exiting at once, reaped: the floor under
              br_coil on this machine (not in the table).
  br_jupyter  the same state in 8 new Jupyter kernels (jupyter_client's
              KernelManager, ipykernel): start 8, wait for them, run the
              cell that built the state in each, then `1+1` in each; all
              8 at once at every step.  Spawn to the eighth `1+1` reply.
  br_python   the same with 8 plain Python workers on pipes (the seed
              worker, bench/seed_worker.py): spawn to the eighth answer.
  br_hold     100 branches of one data session (two forks of 50: a fork
              makes 64 at most): the forks' time, the time to `1+1`
              answered in all, asked at once (and how many answers were
              not `2`: a branch that crashed starts afresh), the memory the
              session's cgroup was charged for them (and MemAvailable's
              drop, and their private memory); then issue 10's benchmark
              on them: one client sends `1+1` to each branch in turn, p50
              and p99.
  br_load     one branch under load from the others: 8 branches, 7 of
              them sent `1+1` back to back (one cell in flight each, the
              next sent when its answer is read), and `1+1` sent to the
              eighth every 2 ms: its p50 and p99.
  br_load_sessions  the same load on 8 coil processes, each holding the
              data session: the load without a shared supervisor.
"""
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import ckcost  # noqa: E402
from bench import NA, ask, check_two, coil_peer, recv  # noqa: E402
from ckcost import DATA_SETUP, private_kb  # noqa: E402
from coiltest import descendants  # noqa: E402

QUICK = bench.QUICK
BRANCHES = 8
HOLD = 100
FORK_MAX = 50
# Iterations: (default, quick).
N = {"rounds": (10, 3), "peer_rounds": (3, 1), "load": (2000, 300),
     "hold_rounds": (5, 2)}
# Enough sessions and processes for 100 branches (a worker each, and
# their checkpoints); the memory limit stays coil's default.
HOLD_ARGS = ("--max-sessions", str(HOLD + 8), "--max-procs", "4096")


def n(kind):
    return N[kind][1 if QUICK else 0]


def ms(ns):
    return ns / 1e6


# ------------------------------------------------------------------ coil

def data_coil(*args, data=True):
    """A coil --agent holding the data session (data False: a bare
    interpreter), idle, and the MB of its frames."""
    if not os.access(bench.COIL, os.X_OK):
        raise NA(f"no coil at {bench.COIL}")
    out = subprocess.run([bench.COIL, "--help"], capture_output=True,
                         text=True).stdout
    if "--max-sessions" not in out:
        raise NA("this coil has no branches (no --max-sessions)")
    peer = coil_peer("--timeout", "600", *args)
    try:
        check_two(ask(peer, "1+1"))
    except (NA, OSError):
        raise NA(bench.stderr_tail(peer, first=True))
    r = ask(peer, DATA_SETUP if data else "0", timeout=600)
    if r.get("status") != "ok":
        raise NA(f"setup failed: {json.dumps(r)[:120]}")
    # Past the pause after which the idle policy checkpoints: the fork
    # then meets a quiet session, as a model's fork after it looked at
    # its results would.
    time.sleep(1.5)
    return peer, int(r.get("result") or 0)


def live(pid):
    return {p.pid for p in descendants(pid) if not p.zombie}


def fork(peer, count, timeout=120):
    """Fork count branches; (answer, ns from request to answer)."""
    t0 = time.perf_counter_ns()
    rid = peer.send({"op": "fork", "n": count})
    r = peer.response(rid, timeout)
    dt = time.perf_counter_ns() - t0
    if r.get("status") != "ok" or len(r.get("sessions") or ()) != count:
        raise NA(f"fork refused: {json.dumps(r)[:140]}")
    return r, dt


def each_two(peer, names, timeout=120):
    """`1+1` sent to every session in names at once, then every answer
    read and checked."""
    ids = {peer.send({"code": "1+1", "session": s}): s for s in names}
    out = answers(peer, ids, timeout)
    for r in out:
        check_two(r)
        if r.get("session") != ids[r["id"]]:
            raise NA(f"answer from {r.get('session')!r}, "
                     f"not {ids[r['id']]!r}")
    return out


def answers(peer, ids, timeout):
    """The answers to the requests ids, in the order they come (each
    branch answers when it is done); event lines go to peer.events."""
    left, out = set(ids), []
    while left:
        msg = peer.line(timeout)
        if "event" not in msg and msg.get("id") in left:
            left.discard(msg["id"])
            out.append(msg)
        else:
            peer.events.append(msg)
    return out


def close_all(peer, names):
    for s in names:
        r = peer.call({"op": "close", "session": s}, 120)
        if r.get("status") != "ok":
            raise NA(f"close {s} failed: {json.dumps(r)[:120]}")


def private_mb(pids):
    return sum(private_kb(p) for p in pids) / 1024


def session_private_mb(peer, names):
    """What the sessions op says the sessions in names own, MB each."""
    r = peer.call({"op": "sessions"}, 60)
    own = [s.get("memory", {}).get("private") for s in r.get("sessions", ())
           if s.get("name") in names]
    own = [v for v in own if isinstance(v, (int, float))]
    return [v / 2**20 for v in own]


def br_coil(data=True):
    """ms from the fork's request to the eighth `1+1` answered; data
    False: of a bare interpreter (where the fork's own cost shows)."""
    peer, mb = data_coil(data=data)
    before = live(peer.pid)
    times, forks, coil_fork, cells = [], [], [], []
    extra = {"mb": mb}
    for i in range(n("rounds")):
        t0 = time.perf_counter_ns()
        r, dt = fork(peer, BRANCHES)
        names = r["sessions"]
        paused = 0
        if i == 0:
            # Right after the fork, before any branch ran a cell: the
            # processes it made, and what they own (the reading's time
            # is not counted).
            tm = time.perf_counter_ns()
            made = live(peer.pid) - before
            extra["procs_per_branch"] = len(made) / BRANCHES
            extra["fresh_mb"] = private_mb(made) / BRANCHES
            paused = time.perf_counter_ns() - tm
        cells += each_two(peer, names)
        times.append(time.perf_counter_ns() - t0 - paused)
        forks.append(dt)
        if isinstance(r.get("fork_ms"), (int, float)):
            coil_fork.append(r["fork_ms"])
        if i == 0:
            made = live(peer.pid) - before
            extra["after_mb"] = private_mb(made) / BRANCHES
            own = session_private_mb(peer, names)
            if own:
                extra["sessions_op_mb"] = statistics.median(own)
        close_all(peer, names)
        time.sleep(0.2)
    peer.close()
    extra.update(fork_ms=ms(statistics.median(forks)),
                 max_ms=ms(max(times)),
                 coil_fork_ms=(statistics.median(coil_fork)
                               if coil_fork else None),
                 cell_ms=statistics.median(c["duration_ms"] for c in cells),
                 cell_cpu_ms=statistics.median(c["cpu_ms"] for c in cells))
    return ms(statistics.median(times)), len(times), extra


def br_hold():
    """ms to fork 100 branches of the data session; extra: the time to
    `1+1` in all, the memory, and 1+1 in turn to each (p50, p99)."""
    peer, mb = data_coil(*HOLD_ARGS)
    avail0 = mem_available_mb()
    cg0 = cgroup_mb(worker_of(peer))
    before = live(peer.pid)
    names, dt = [], 0
    for k in range(0, HOLD, FORK_MAX):       # a fork op makes 64 at most
        r, t = fork(peer, min(FORK_MAX, HOLD - k), timeout=600)
        names += r["sessions"]
        dt += t
    # Each branch's first cell, all 100 asked at once as soon as the
    # fork answers (a pause here, such as reading 200 processes' smaps,
    # hid the crashes this counts): the answers that are not `2` are
    # counted, not fatal (a crashed branch starts afresh and answers the
    # cells in turn below).
    ids = {peer.send({"code": "1+1", "session": s}): s for s in names}
    t0 = time.perf_counter_ns()
    out = answers(peer, ids, 600)
    all_two = time.perf_counter_ns() - t0
    failed = sorted({r.get("status") for r in out
                     if r.get("result") != "2"})
    failed_n = sum(r.get("result") != "2" for r in out)
    made = live(peer.pid) - before
    after = private_mb(made)
    avail1 = mem_available_mb()
    cg1 = cgroup_mb(worker_of(peer))
    times = []
    for _ in range(n("hold_rounds")):
        for s in names:
            t0 = time.perf_counter_ns()
            peer.send({"code": "1+1", "session": s})
            line = recv(peer)
            times.append(time.perf_counter_ns() - t0)
    check_two(json.loads(line))
    own = session_private_mb(peer, names)
    peer.close()
    q = statistics.quantiles(times, n=100, method="inclusive")
    return ms(dt), HOLD, {
        "mb": mb, "all_two_ms": ms(all_two),
        "failed_sessions": [r.get("session") for r in out
                            if r.get("result") != "2"][:20],
        "after_mb": after / HOLD, "procs": len(made),
        "machine_mb": avail0 - avail1,
        "cgroup_mb": (cg1 - cg0 if cg0 is not None and cg1 is not None
                      else None), "cgroup_before_mb": cg0,
        "sessions_op_mb": statistics.median(own) if own else None,
        "turn_p50_ms": ms(q[49]), "turn_p99_ms": ms(q[98]),
        "turn_n": len(times), "failed": failed_n, "failed_status": failed}


def cgroup_mb(pid):
    """MB the memory cgroup of pid is charged (v1 usage_in_bytes or v2
    memory.current): what the session's processes take together, pages
    they share counted once.  None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            lines = [ln.rstrip("\n").split(":", 2) for ln in f]
    except OSError:
        return None
    for _, ctrl, path in lines:
        for base, name in (("memory", "memory.usage_in_bytes"),
                           ("", "memory.current")):
            if ("memory" in ctrl.split(",")) != bool(base):
                continue
            try:
                with open(os.path.join("/sys/fs/cgroup", base,
                                       path.lstrip("/"), name)) as f:
                    return int(f.read()) / 2**20
            except OSError:
                pass
    return None


def worker_of(peer):
    return next((p.pid for p in descendants(peer.pid)
                 if p.comm == "coil-worker" and not p.zombie), None)


def mem_available_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    raise NA("no MemAvailable in /proc/meminfo")


def br_load():
    """p50 ms (p99 in extra) of `1+1` on one branch every 2 ms while 7
    other branches of the data session run `1+1` back to back."""
    peer, _ = data_coil()
    r, _ = fork(peer, BRANCHES)
    each_two(peer, r["sessions"])
    return under_load([(peer, s) for s in r["sessions"]], [peer])


def br_load_sessions():
    """The same with 8 coil processes, each its own data session: what
    the load costs the probe when no supervisor is shared."""
    peers = []
    try:
        for _ in range(BRANCHES):
            peers.append(data_coil()[0])
        return under_load([(p, None) for p in peers], peers)
    finally:
        for p in peers:
            p.close()


def under_load(targets, peers):
    """`1+1` on targets[0] every 2 ms while every other target (a peer
    and its session, None for its own) runs `1+1` back to back, the next
    sent when its answer is read: (p50 ms, probes, {p99_ms, load_cells}).
    A thread a peer reads its lines."""
    probe, loaded = targets[0], targets[1:]
    locks = {id(p): threading.Lock() for p in peers}
    got = threading.Event()
    state = {"probe": None, "t": 0, "load": 0, "stop": False, "err": None}

    def send(peer, session):
        req = {"code": "1+1"}
        if session is not None:
            req["session"] = session
        with locks[id(peer)]:
            rid = peer.send(req)
            if (peer, session) == probe:
                state["probe"] = rid
            return rid

    def reader(peer):
        """Every line of peer: the probe's answer timed, a loaded
        target's answer answered with its next cell."""
        try:
            while True:
                line = peer.raw_line(None)
                t = time.perf_counter_ns()
                msg = json.loads(line)
                if "event" in msg:
                    continue
                if peer is probe[0] and msg.get("id") == state["probe"]:
                    state["t"] = t
                    state["reply"] = msg
                    got.set()
                    continue
                if msg.get("status") != "ok":
                    raise NA(f"load cell: {line[:120]!r}")
                state["load"] += 1
                if not state["stop"]:
                    send(peer, msg.get("session"))
        except EOFError:
            return
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            if not state["stop"]:
                state["err"] = e
                got.set()

    for p in peers:
        threading.Thread(target=reader, args=(p,), daemon=True).start()
    for peer, session in loaded:
        send(peer, session)
    times = []
    warm = 50
    for i in range(n("load") + warm):
        time.sleep(0.002)
        got.clear()
        t0 = time.perf_counter_ns()
        send(*probe)
        if not got.wait(60) or state["err"]:
            raise NA(f"probe: {state['err'] or 'no answer in 60 s'}")
        check_two(state["reply"])
        if i >= warm:
            times.append(state["t"] - t0)
    state["stop"] = True
    load = state["load"]
    for p in peers:
        p.close()
    q = statistics.quantiles(times, n=100, method="inclusive")
    return ms(q[49]), len(times), {"p99_ms": ms(q[98]),
                                   "load_cells": load}


# ----------------------------------------------------------------- peers

def br_jupyter():
    """ms from spawning 8 kernels to the eighth `1+1` reply, the state
    rebuilt in each."""
    times = []
    for _ in range(n("peer_rounds")):
        kernels = []
        t0 = time.perf_counter_ns()
        try:
            for _ in range(BRANCHES):
                kernels.append(jupyter_spawn())
            clients = []
            for km in kernels:
                kc = km.client()
                kc.start_channels()
                clients.append(kc)
            for kc in clients:
                kc.wait_for_ready(timeout=300)
            jupyter_all(clients, DATA_SETUP)
            jupyter_all(clients, "1+1")
            times.append(time.perf_counter_ns() - t0)
        finally:
            for km in kernels:
                try:
                    km.shutdown_kernel(now=True)
                except Exception:  # noqa: BLE001 - best effort teardown
                    pass
    return ms(statistics.median(times)), len(times)


def jupyter_spawn():
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    try:
        from jupyter_client import KernelManager
    except ImportError as e:
        raise NA(f"python3-jupyter-client missing: {e}")
    km = KernelManager(kernel_name="python3")
    try:
        km.start_kernel(stderr=subprocess.DEVNULL)
    except Exception as e:  # noqa: BLE001 - NoSuchKernel, OSError, ...
        raise NA(f"no python3 kernel (python3-ipykernel?): "
                 f"{type(e).__name__}: {e}")
    return km


def jupyter_all(clients, code):
    """code executed in every kernel at once; the replies, checked."""
    ids = [kc.execute(code) for kc in clients]
    replies = []
    for kc, mid in zip(clients, ids):
        while True:
            reply = kc.get_shell_msg(timeout=600)
            if reply["parent_header"].get("msg_id") == mid:
                break
        if reply["content"]["status"] != "ok":
            raise NA(f"kernel replied {reply['content']['status']}: "
                     f"{reply['content'].get('evalue', '')[:80]}")
        replies.append(reply)
    return replies


def br_python():
    """ms from spawning 8 seed workers to the eighth `1+1` answer, the
    state rebuilt in each."""
    times = []
    for _ in range(n("peer_rounds")):
        peers = []
        t0 = time.perf_counter_ns()
        try:
            for _ in range(BRANCHES):
                peers.append(bench.seed_peer())
            for cell in (DATA_SETUP, "1+1"):
                ids = [p.send({"code": cell}) for p in peers]
                for p, rid in zip(peers, ids):
                    r = p.response(rid, 600)
                    if r.get("status") != "ok":
                        raise NA(f"seed worker: {json.dumps(r)[:120]}")
            check_two(r)
            times.append(time.perf_counter_ns() - t0)
        finally:
            for p in peers:
                p.close()
    return ms(statistics.median(times)), len(times)


FORKS = """
import os, sys, time
exec(sys.argv[1])
times = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter_ns()
    pids = []
    for _ in range(int(sys.argv[3])):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    times.append(time.perf_counter_ns() - t0)
print(" ".join(str(t) for t in times))
"""


def br_forks():
    """ms for 8 bare fork()s of a plain Python process holding the data
    session, each child exiting at once, reaped: the floor under br_coil
    on this machine, whatever coil does around its forks."""
    setup = DATA_SETUP.rsplit("\n", 1)[0]
    out = subprocess.run([sys.executable, "-c", FORKS, setup,
                          str(n("rounds")), str(BRANCHES)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise NA(f"forks: {out.stderr.strip()[-120:]}")
    times = [int(t) for t in out.stdout.split()]
    return ms(statistics.median(times)), len(times), {
        "max_ms": ms(max(times))}


MEASURES = {
    "br_coil": br_coil, "br_forks": br_forks, "br_bare": lambda: br_coil(data=False),
    "br_jupyter": br_jupyter, "br_python": br_python,
    "br_hold": br_hold, "br_load": br_load,
    "br_load_sessions": br_load_sessions,
}


def measure(key):
    bench.MEASURES.update(MEASURES)
    bench.measure(key)


# ---------------------------------------------------------------- the table

val, why, fig, ratio, verdict = (ckcost.val, ckcost.why, ckcost.fig,
                                 ckcost.ratio, ckcost.verdict)


def rows(res):
    """(what, coil, peer, peer/coil, target, holds)."""
    c, j, p = (val(res, k) for k in ("br_coil", "br_jupyter", "br_python"))
    peers = [x for x in (j, p) if x is not None]
    best = min(peers) if peers else None
    fast = None if c is None else c < 50 and (best is None or best / c >= 100)
    cx = res.get("br_coil", {})
    h = res.get("br_hold", {}) if "na" not in res.get("br_hold", {}) else {}
    cna, hna = why(res, "br_coil"), why(res, "br_hold")

    def mem(rec, field, na):
        v = rec.get(field)
        return fig(v, "MB", na) if "na" not in rec else f"n/a ({na})"

    def pair(a, b, na):
        return (f"{fig(a, 'ms')} / {fig(b, 'ms')}" if a is not None
                else f"n/a ({na})")
    fresh = cx.get("fresh_mb") if "na" not in cx else None
    peer = "; ".join([f"Jupyter {fig(j, 'ms', why(res, 'br_jupyter'))}",
                      f"Python workers {fig(p, 'ms', why(res, 'br_python'))}"])
    l50, l99 = val(res, "br_load"), val(res, "br_load", "p99_ms")
    s50, s99 = (val(res, "br_load_sessions"),
                val(res, "br_load_sessions", "p99_ms"))
    c50, c99 = val(res, "conc_default"), val(res, "conc_default", "p99_ms")
    t50, t99 = h.get("turn_p50_ms"), h.get("turn_p99_ms")
    cg = h.get("cgroup_mb")
    hold = (f"forked in {fig(h['value'], 'ms')}; `1+1` in all "
            f"{fig(h['all_two_ms'], 'ms')}; memory charged "
            f"{fig(cg, 'MB', 'no cgroup')}" if h else f"n/a ({hna})")
    burst = (f"{h['failed']} of {h['n']} "
             f"({', '.join(h['failed_status']) or 'none'})"
             if h else f"n/a ({hna})")
    return [
        ("1. fork 8 branches of a 100 MB pandas session, `1+1` in each",
         fig(c, "ms", cna), peer,
         f"{ratio(best, c)}" if best and c else "n/a",
         "< 50 ms, ≥ 100×", verdict(fast)),
        ("1. the same from a bare interpreter",
         fig(val(res, "br_bare"), "ms", why(res, "br_bare")), "—", "—",
         "—", "—"),
        ("2. a branch's private memory, forked, before any cell",
         mem(cx, "fresh_mb", cna), "—", "—", "< 5 MB",
         verdict(None if fresh is None else fresh < 5)),
        ("2. the same after its `1+1`", mem(cx, "after_mb", cna),
         "—", "—", "—", "—"),
        ("2. the same as the sessions op says, after `1+1`",
         mem(cx, "sessions_op_mb", cna), "—", "—", "—", "—"),
        ("2. 100 branches held", hold, "—", "—", "held",
         verdict(True if h else None)),
        ("2. the same, memory charged a branch",
         fig(cg / h["n"], "MB") if cg is not None else f"n/a ({hna})",
         "—", "—", "< 5 MB", verdict(None if cg is None
                                     else cg / h["n"] < 5)),
        ("2. of the 100 asked `1+1` at once, answers not `2`", burst,
         "—", "—", "none", verdict(None if not h else h["failed"] == 0)),
        ("3. `1+1` on one branch every 2 ms, 7 others running `1+1` back "
         "to back: p50 / p99", pair(l50, l99, why(res, "br_load")),
         "8 coil processes: " + pair(s50, s99, why(res, "br_load_sessions")),
         ratio(s99, l99) if l99 and s99 else "n/a", "p99 < 5 ms",
         verdict(None if l99 is None else l99 < 5)),
        ("3. 100 branches, `1+1` to each in turn: p50 / p99",
         pair(t50, t99, hna), "100 coil processes (issue 10): "
         + pair(c50, c99, why(res, "conc_default")),
         ratio(c99, t99) if t99 and c99 else "n/a", "p99 < 5 ms",
         verdict(None if t99 is None else t99 < 5)),
    ]


def table(path):
    res = bench.load_results(path)
    print("| branching (issue 26) | coil | peer | peer/coil | target "
          "| holds |")
    print("| --- | ---: | --- | ---: | --- | --- |")
    for r in rows(res):
        print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    print()
    notes = []
    for key, what in (("br_coil", "fork and `1+1`"),
                      ("br_bare", "from a bare interpreter")):
        cx = res.get(key, {})
        if "n" not in cx:
            continue
        cf = (f" ({cx['coil_fork_ms']:.1f} ms by coil's clock)"
              if cx.get("coil_fork_ms") else "")
        notes.append(f"{what}: median of {cx['n']} rounds on "
                     f"{cx['mb']} MB of frames (slowest "
                     f"{cx['max_ms']:.1f} ms), of which the fork's answer "
                     f"{cx['fork_ms']:.1f} ms{cf}; a branch's first `1+1` "
                     f"took {cx['cell_ms']:.1f} ms "
                     f"({cx['cell_cpu_ms']:.1f} ms CPU); "
                     f"{cx['procs_per_branch']:g} new processes a branch")
    peers = [f"{name} {res[k]['n']}" for k, name in (
        ("br_jupyter", "Jupyter"), ("br_python", "Python workers"))
        if "n" in res.get(k, {})]
    if peers:
        notes.append("the peers' rounds: " + ", ".join(peers))
    h = res.get("br_hold", {})
    if "n" in h:
        notes.append(f"100 branches: {h['procs']} processes, "
                     f"{h['after_mb'] * h['n']:.0f} MB private in all "
                     f"(smaps_rollup), MemAvailable down "
                     f"{h['machine_mb']:.0f} MB; the session was charged "
                     f"{h.get('cgroup_before_mb') or 0:.0f} MB before the "
                     f"fork; {h['turn_n']} cells in turn")
    for key, what in (("br_load", "branches"),
                      ("br_load_sessions", "8 processes")):
        ld = res.get(key, {})
        if "n" in ld:
            notes.append(f"under load ({what}): {ld['n']} probes, the 7 "
                         f"others ran {ld['load_cells']} cells meanwhile")
    print("Medians unless named; " + "; ".join(notes) + ".")


if __name__ == "__main__":
    bench.cli(table, measure, MEASURES, __doc__)
