"""coil benchmarks: one measurement a function, one JSON line a run.

    /usr/bin/python3 bench/bench.py KEY          run one measurement
    /usr/bin/python3 bench/bench.py table FILE   Markdown table of the results

Environment: COIL (the coil binary, as for the tests), PINGPONG (the
built bench/pingpong), BENCH_QUICK=1 (few iterations, for CI smoke runs).
bench/run drives this.  Line peers are driven by the tests' client,
tests/lib/coiltest.py.
"""
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
from coiltest import COIL, Coil, vm_kb  # noqa: E402

PY = "/usr/bin/python3"
# The coil peers' work dirs, each a directory in this one, which goes at
# exit: thousands of peers left thousands of directories in /tmp.
WORK = tempfile.mkdtemp(prefix="coil-bench-")
atexit.register(shutil.rmtree, WORK, True)
QUICK = os.environ.get("BENCH_QUICK", "0") not in ("", "0")
PINGPONG = os.environ.get("PINGPONG", os.path.join(HERE, "pingpong"))

# Iterations: (default, quick).
N = {
    "coil": (10000, 1000), "think": (1000, 100), "jupyter": (300, 50),
    "pyc": (100, 20), "seed": (10000, 1000), "exec": (10000, 2000),
    "pingpong": (100000, 20000), "cold": (30, 8), "cold_jupyter": (5, 1),
    "tput": (3, 1),
}


def n(kind):
    return N[kind][1 if QUICK else 0]


class NA(Exception):
    """The measurement cannot be made; the message says why."""


def median_us(ns_list):
    return statistics.median(ns_list) / 1000.0


# ---------------------------------------------------------------- line peers

def line_peer(argv=None, *args, cwd=None):
    """A process speaking the agent line protocol: coil --agent with args,
    or the command argv (the seed)."""
    name = os.path.basename((argv or [COIL])[0])
    try:
        peer = Coil(*args, argv=argv, cwd=cwd)
    except OSError as e:
        raise NA(f"cannot start {name}: {e.strerror}")
    peer.name = name
    return peer


def stderr_tail(peer, first=False):
    text = peer.stderr_text().strip()
    if not text:
        return "no message"
    return text.splitlines()[0 if first else -1][:120]


def recv(peer):
    """The next line, bytes; the time from send to this is what is
    measured, so it waits without a deadline (and without select)."""
    try:
        return peer.raw_line(None)
    except EOFError:
        raise NA(f"{peer.name} exited (rc {peer.proc.wait()}): "
                 f"{stderr_tail(peer)}")


def ask(peer, code, **fields):
    """Run code (fields go in the request too); the response."""
    try:
        return peer.call(dict(fields, code=code), None)
    except EOFError:
        raise NA(f"{peer.name} exited (rc {peer.proc.wait()}): "
                 f"{stderr_tail(peer)}")


def coil_peer(*args, coil=None):
    """coil --agent with args, in a fresh directory; coil: another binary
    than $COIL (bench/versus.py's baseline)."""
    coil = coil or COIL
    if not os.access(coil, os.X_OK):
        raise NA(f"no coil at {coil}")
    return line_peer([coil, "--agent", *args], cwd=tempfile.mkdtemp(dir=WORK))


def check_two(reply):
    if reply.get("status") != "ok" or reply.get("result") != "2":
        raise NA(f"unexpected reply {json.dumps(reply)[:100]}")


def timed_round_trips(peer, count, think_s=0.0, warm=100):
    """Nanoseconds from request write to response line read, count times,
    after min(warm, count) checked warm-up cells.  The peer stays open."""
    for _ in range(min(warm, count)):
        check_two(ask(peer, "1+1"))
    times = []
    for _ in range(count):
        if think_s:
            time.sleep(think_s)
        t0 = time.perf_counter_ns()
        peer.send({"code": "1+1"})
        line = recv(peer)
        times.append(time.perf_counter_ns() - t0)
    check_two(json.loads(line))
    return times


def line_round_trips(peer, count, think_s=0.0):
    """Median microseconds from request write to response line read."""
    times = timed_round_trips(peer, count, think_s)
    peer.close()
    return median_us(times), count


def rt_coil():
    return line_round_trips(coil_peer(), n("coil"))


def rt_coil_nockpt():
    peer = coil_peer("--checkpoints", "0")
    try:
        ask(peer, "1+1")
    except (NA, OSError):
        raise NA(stderr_tail(peer, first=True))
    return line_round_trips(peer, n("coil"))


def rt_coil_think():
    return line_round_trips(coil_peer(), n("think"), think_s=0.005)


def rt_coil_pinned():
    os.sched_setaffinity(0, {0})                # inherited: coil and worker
    return line_round_trips(coil_peer(), n("coil"))


def seed_peer():
    return line_peer([PY, os.path.join(HERE, "seed_worker.py")])


def rt_seed():
    return line_round_trips(seed_peer(), n("seed"))


def rt_seed_think():
    return line_round_trips(seed_peer(), n("think"), think_s=0.005)


def rt_pyc():
    count = n("pyc")
    times = []
    for _ in range(count + 3):
        t0 = time.perf_counter_ns()
        subprocess.run([PY, "-c", "1+1"], check=True)
        times.append(time.perf_counter_ns() - t0)
    return median_us(times[3:]), count


# ------------------------------------------------------------------- jupyter

def jupyter_start():
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    try:
        from jupyter_client import KernelManager
    except ImportError as e:
        raise NA(f"jupyter_client missing: {e}")
    km = KernelManager(kernel_name="python3")
    try:
        km.start_kernel(stderr=subprocess.DEVNULL)
    except Exception as e:  # noqa: BLE001 - NoSuchKernel, OSError, ...
        raise NA(f"no python3 kernel: {type(e).__name__}: {e}")
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=120)
    return km, kc


def jupyter_stop(km, kc):
    kc.stop_channels()
    km.shutdown_kernel(now=False)


def drain_iopub(kc):
    while True:
        try:
            kc.get_iopub_msg(timeout=0)
        except Exception:  # noqa: BLE001 - queue.Empty
            return


def rt_jupyter():
    km, kc = jupyter_start()
    count = n("jupyter")
    for _ in range(20):
        kc.execute("1+1", reply=True, timeout=60)
    drain_iopub(kc)
    times = []
    for i in range(count):
        t0 = time.perf_counter_ns()
        reply = kc.execute("1+1", reply=True, timeout=60)
        times.append(time.perf_counter_ns() - t0)
        if reply["content"]["status"] != "ok":
            raise NA(f"kernel replied {reply['content']['status']}")
        if i % 50 == 0:
            drain_iopub(kc)
    jupyter_stop(km, kc)
    return median_us(times), count


# --------------------------------------------------------------------- floor

def floor_exec():
    """The seed's exec of `1+1` into a dict, in-process, no pipes."""
    sys.path.insert(0, HERE)
    from seed_worker import run_cell
    ns = {"__name__": "__main__"}
    count = n("exec")
    for _ in range(1000):
        run_cell(ns, "1+1")
    times = []
    for _ in range(count):
        t0 = time.perf_counter_ns()
        run_cell(ns, "1+1")
        times.append(time.perf_counter_ns() - t0)
    return median_us(times), count


def pingpong(cpu_parent, cpu_child):
    if cpu_child >= os.cpu_count():
        raise NA(f"only {os.cpu_count()} CPU")
    if not os.access(PINGPONG, os.X_OK):
        raise NA("pingpong not built (no cc?)")
    count = n("pingpong")
    out = subprocess.run([PINGPONG, str(count), str(cpu_parent),
                          str(cpu_child)], check=True, capture_output=True,
                         text=True).stdout.split()
    return int(out[0]) / 1000.0, count


def pp_same():
    return pingpong(0, 0)


def pp_diff():
    return pingpong(0, 1)


# ---------------------------------------------------------------- cold start

def cold(argv, stdin_bytes, check):
    """Median milliseconds from spawn to exit, after 3 warm-up runs."""
    count = n("cold")
    times = []
    for _ in range(count + 3):
        t0 = time.perf_counter_ns()
        try:
            p = subprocess.run(argv, input=stdin_bytes, capture_output=True,
                               cwd=tempfile.gettempdir())
        except OSError as e:
            raise NA(f"cannot start {argv[0]}: {e.strerror}")
        times.append(time.perf_counter_ns() - t0)
        check(p)
    return statistics.median(times[3:]) / 1e6, count


def cold_coil():
    """Median milliseconds from spawn to the first answer's line, its
    stdin holding the cell (a model's first tool call waits for no more);
    its exit, after stdin's end, is cold_coil_exit."""
    if not os.access(COIL, os.X_OK):
        raise NA(f"no coil at {COIL}")
    count = n("cold")
    times = []
    for _ in range(count + 3):
        t0 = time.perf_counter_ns()
        try:
            p = subprocess.Popen([COIL, "--agent"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE,
                                 cwd=tempfile.gettempdir())
        except OSError as e:
            raise NA(f"cannot start {COIL}: {e.strerror}")
        p.stdin.write(b'{"code":"1+1"}\n')
        p.stdin.close()
        line = p.stdout.readline()
        times.append(time.perf_counter_ns() - t0)
        p.stdout.read()
        err = p.stderr.read()
        if p.wait() != 0 or not line:
            raise NA(f"rc {p.returncode}: {err.decode()[-100:]}")
        check_two(json.loads(line))
    return statistics.median(times[3:]) / 1e6, count


def cold_coil_exit():
    if not os.access(COIL, os.X_OK):
        raise NA(f"no coil at {COIL}")

    def check(p):
        lines = p.stdout.splitlines()
        if p.returncode != 0 or not lines:
            raise NA(f"rc {p.returncode}: {p.stderr.decode()[-100:]}")
        check_two(json.loads(lines[0]))
    return cold([COIL, "--agent"], b'{"code":"1+1"}\n', check)


def cold_pyc():
    def check(p):
        if p.returncode != 0:
            raise NA(f"rc {p.returncode}")
    return cold([PY, "-c", "1+1"], None, check)


def cold_jupyter():
    count = n("cold_jupyter")
    times = []
    for _ in range(count + 1):
        t0 = time.perf_counter_ns()
        km, kc = jupyter_start()
        reply = kc.execute("1+1", reply=True, timeout=60)
        jupyter_stop(km, kc)
        times.append(time.perf_counter_ns() - t0)
        if reply["content"]["status"] != "ok":
            raise NA(f"kernel replied {reply['content']['status']}")
    return statistics.median(times[1:]) / 1e6, count


# ---------------------------------------------------------------- throughput

CELLS = {
    10: 'for i in range(100000): print("x"*99)',
    100: 'import sys\nfor i in range(1000000): sys.stdout.write("y"*99+"\\n")',
}


def vm_hwm_mb(pid):
    kb = vm_kb(pid, "VmHWM")
    if not kb:
        raise NA("no VmHWM")
    return kb / 1024.0


def tput_cell(peer, mb):
    """MB/s of one cell printing mb MB on a coil peer."""
    t0 = time.perf_counter_ns()
    reply = ask(peer, CELLS[mb], timeout=600)
    dt = (time.perf_counter_ns() - t0) / 1e9
    if reply.get("status") != "ok":
        raise NA(f"status {reply.get('status')}: {reply.get('error')}")
    if not reply.get("truncated"):
        raise NA("output not truncated")
    return mb / dt


def tput_coil(mb):
    """MB/s of a cell printing mb MB; also the supervisor's peak RSS (MB)."""
    peer = coil_peer()
    check_two(ask(peer, "1+1"))
    rates = [tput_cell(peer, mb) for _ in range(n("tput"))]
    rss = vm_hwm_mb(peer.pid)         # the supervisor only, before it exits
    peer.close()
    return statistics.median(rates), n("tput"), {"rss_mb": rss}


def tput_jupyter(mb):
    km, kc = jupyter_start()
    rates = []
    for _ in range(n("tput")):
        drain_iopub(kc)
        t0 = time.perf_counter_ns()
        msg_id = kc.execute(CELLS[mb])
        got = 0
        while True:
            msg = kc.get_iopub_msg(timeout=600)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                got += len(msg["content"]["text"])
            elif (msg["msg_type"] == "status"
                  and msg["content"]["execution_state"] == "idle"):
                break
        dt = (time.perf_counter_ns() - t0) / 1e9
        if got != mb * 1000000:
            raise NA(f"got {got} bytes of output, not {mb} MB")
        rates.append(mb / dt)
    jupyter_stop(km, kc)
    return statistics.median(rates), n("tput")


# ---------------------------------------------------------------- the table

MEASURES = {
    "rt_coil": rt_coil, "rt_coil_nockpt": rt_coil_nockpt,
    "rt_coil_think": rt_coil_think, "rt_coil_pinned": rt_coil_pinned,
    "rt_jupyter": rt_jupyter, "rt_pyc": rt_pyc, "rt_seed": rt_seed,
    "rt_seed_think": rt_seed_think,
    "floor_exec": floor_exec, "pp_same": pp_same, "pp_diff": pp_diff,
    "cold_coil": cold_coil, "cold_coil_exit": cold_coil_exit,
    "cold_pyc": cold_pyc,
    "cold_jupyter": cold_jupyter,
    "tput_coil_10": lambda: tput_coil(10),
    "tput_coil_100": lambda: tput_coil(100),
    "tput_jupyter_10": lambda: tput_jupyter(10),
    "tput_jupyter_100": lambda: tput_jupyter(100),
}


def measure(key):
    try:
        value, count, *extra = MEASURES[key]()
        rec = {"key": key, "value": value, "n": count}
        if extra:
            rec.update(extra[0])
    except NA as e:
        rec = {"key": key, "na": str(e)}
    except Exception as e:  # noqa: BLE001 - report, never crash the suite
        rec = {"key": key, "na": f"{type(e).__name__}: {e}"[:160]}
    print(json.dumps(rec), flush=True)


def fmt(v, unit):
    if v is None:
        return "n/a"
    digits = 0 if v >= 100 else 1 if v >= 10 else 2
    return f"{v:,.{digits}f} {unit}"


# One row: label, coil-side key, peer key (None: no peer), ratio (which over
# which: "p/c" or "c/p", and its name), unit, command.
C = "`coil --agent`"
ROWS = [
    ("`1+1` round trip vs Jupyter kernel", "rt_coil", "rt_jupyter",
     ("p/c", "jupyter/coil"), "µs",
     C + " vs ipykernel `BlockingKernelClient.execute(reply=True)`"),
    ("`1+1` round trip vs `python3 -c` per cell", "rt_coil", "rt_pyc",
     ("p/c", "python-c/coil"), "µs", C + " vs `/usr/bin/python3 -c 1+1`"),
    ("`1+1` round trip vs seed worker on a pipe", "rt_coil", "rt_seed",
     ("p/c", "seed/coil"), "µs", C + " vs `python3 bench/seed_worker.py`"),
    ("`1+1` round trip vs floor, same CPU", "rt_coil", "floor_same",
     ("c/p", "coil/floor"), "µs", "floor: in-process exec + 2 × `bench/pingpong` "
     "(100-byte pipe round trip), both on CPU 0"),
    ("`1+1` round trip vs floor, two CPUs", "rt_coil", "floor_diff",
     ("c/p", "coil/floor"), "µs", "floor: in-process exec + 2 × `bench/pingpong`, "
     "CPUs 0 and 1"),
    ("`1+1` round trip, `--checkpoints 0` vs default", "rt_coil_nockpt",
     "rt_coil", ("p/c", "default/no-ckpt"), "µs",
     "`coil --agent --checkpoints 0`"),
    ("`1+1` latency with 5 ms think time vs back to back", "rt_coil_think",
     "rt_coil", ("p/c", "back-to-back/think"), "µs",
     C + ", client sleeps 5 ms before each request"),
    ("`1+1` latency with 5 ms think time vs seed worker", "rt_coil_think",
     "rt_seed_think", ("p/c", "seed/coil"), "µs",
     "both clients sleep 5 ms before each request"),
    ("`1+1` round trip, all on CPU 0 vs unpinned", "rt_coil_pinned",
     "rt_coil", ("p/c", "unpinned/pinned"), "µs",
     "client, coil and worker `taskset -c 0` (sched_setaffinity)"),
    ("cold start to first answer vs `python3 -c`", "cold_coil", "cold_pyc",
     ("c/p", "coil/python-c"), "ms",
     "`echo '{\"code\":\"1+1\"}' | coil --agent`: spawn to the answer's "
     "line, vs `python3 -c 1+1` to its exit"),
    ("cold start to exit vs `python3 -c`", "cold_coil_exit", "cold_pyc",
     ("c/p", "coil/python-c"), "ms",
     "the same, to coil's exit after stdin's end (the session torn down)"),
    ("cold start to exit vs Jupyter kernel", "cold_coil_exit",
     "cold_jupyter", ("p/c", "jupyter/coil"), "ms",
     "KernelManager start + wait_for_ready + execute + shutdown"),
    ("10 MB output (100k `print`) vs Jupyter", "tput_coil_10",
     "tput_jupyter_10", ("c/p", "coil/jupyter"), "MB/s",
     "`for i in range(100000): print(\"x\"*99)`; coil keeps 64 KiB"),
    ("100 MB output (1M `write`) vs Jupyter", "tput_coil_100",
     "tput_jupyter_100", ("c/p", "coil/jupyter"), "MB/s",
     "`for i in range(1000000): sys.stdout.write(\"y\"*99+\"\\n\")`"),
    ("peak RSS of the coil supervisor, 100 MB cell", "rss", None,
     None, "MB", "VmHWM of the coil process (its worker not counted)"),
]


def derive(res):
    """Add the floors and the RSS to the results."""
    for which in ("same", "diff"):
        ex, pp = res.get("floor_exec"), res.get("pp_" + which)
        if "value" in ex and "value" in pp:
            res["floor_" + which] = {"value": ex["value"] + 2 * pp["value"]}
        else:
            res["floor_" + which] = {"na": ex.get("na") or pp.get("na")}
    tp = res.get("tput_coil_100", {})
    res["rss"] = ({"value": tp["rss_mb"]} if "rss_mb" in tp
                  else {"na": tp.get("na", "not measured")})


def cell(rec, unit):
    if rec is None:
        return "—"
    if "value" in rec:
        return fmt(rec["value"], unit)
    return f"n/a ({rec.get('na', 'not run')})"


def load_results(path):
    """The measurements in path, one JSON record a line, by key."""
    res = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            res[rec["key"]] = rec
    return res


def table(path):
    res = load_results(path)
    for key in MEASURES:
        res.setdefault(key, {"na": "not run"})
    derive(res)
    print("| benchmark | coil | peer | ratio | command |")
    print("| --- | ---: | ---: | ---: | --- |")
    for label, ck, pk, how, unit, cmd in ROWS:
        c, p = res[ck], (res[pk] if pk else None)
        ratio = "—"
        if how and "value" in c and p and "value" in p:
            a, b = ((p, c) if how[0] == "p/c" else (c, p))
            r = a["value"] / b["value"]
            digits = 0 if r >= 100 else 1 if r >= 10 else 2
            ratio = f"{r:,.{digits}f}× ({how[1]})"
        elif how:
            ratio = "n/a"
        row = [label, cell(c, unit), cell(p, unit), ratio, cmd]
        print("| " + " | ".join(x.replace("|", "\\|") for x in row) + " |")
    print()
    counts = ", ".join(f"{k} {res[k]['n']}" for k in MEASURES
                       if "n" in res[k])
    print(f"Medians. Iterations: {counts}.")
    fp = [f"exec {res['floor_exec'].get('value', 0):.1f} µs"] + [
        f"pipe round trip {w} {res['pp_' + w]['value']:.1f} µs"
        for w in ("same", "diff") if "value" in res["pp_" + w]]
    print(f"Floor parts: {', '.join(fp)}.")


def cli(table, measure, measures, doc):
    """The command line of bench.py and versus.py: "table FILE" prints
    the table of the results in FILE, "KEY" runs one measurement."""
    if len(sys.argv) == 3 and sys.argv[1] == "table":
        table(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] in measures:
        measure(sys.argv[1])
    else:
        sys.exit(doc + "\nKEY: " + " ".join(measures))


if __name__ == "__main__":
    cli(table, measure, MEASURES, __doc__)
