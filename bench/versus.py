"""coil against a baseline build of itself: the same measurements on both
binaries, interleaved, for a change that must not make coil slower.

    /usr/bin/python3 bench/versus.py KEY          one measurement, both sides
    /usr/bin/python3 bench/versus.py table FILE   Markdown table of the results

Environment: COIL (the current binary), BASE_COIL (the baseline, built by
bench/build-base; when empty, BASE_NA says why), BENCH_QUICK=1.
bench/run drives this when BENCH_BASE is set.

A measurement runs in rounds.  Each round starts a fresh coil of each
side, warms both up, then alternates between them in slices (a few round
trips, or one output cell, on one side then on the other, which side goes
first alternating too), so that a change in the machine's load (2 CPUs,
shared) hits both sides alike.  A round's sample of a side is the median
of its slices' values; the ratio of a round's two samples cancels most of
what is left.  The table gives the median over rounds and the first and
third quartiles of each side and of those paired ratios.
"""
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
from bench import NA, ask, check_two, coil_peer  # noqa: E402

QUICK = bench.QUICK
ROUNDS = 5 if QUICK else 15

# A round on each side: warm-up cells, slices, values a slice; (full, quick).
# A checkpointed `1+1` costs about 8 ms back to back, one without 0.1 ms,
# a 100 MB cell about 0.2 s.
ROUND = {
    "rt": ((20, 10, 10), (10, 3, 10)),
    "rt_nockpt": ((100, 10, 200), (50, 5, 60)),
    "rt_fig": ((10, 10, 10), (5, 3, 10)),
    "tput_10": ((1, 5, 1), (1, 3, 1)),
    "tput_100": ((1, 3, 1), (1, 2, 1)),
    "cold": ((0, 10, 2), (0, 4, 2)),
}


def plan(key):
    return ROUND[key][1 if QUICK else 0]


def start(coil, args, warm):
    """A fresh coil --agent with args, past warm checked `1+1` cells."""
    peer = coil_peer(*args, coil=coil)
    try:
        ask(peer, "1+1")
    except (NA, OSError):
        raise NA(f"{os.path.basename(coil)} {' '.join(args)}: "
                 f"{bench.stderr_tail(peer, first=True)}")
    for _ in range(warm):
        check_two(ask(peer, "1+1"))
    return peer


def rt_slice(peer, count):
    """Microseconds of count back-to-back `1+1` round trips."""
    return [t / 1000.0 for t in bench.timed_round_trips(peer, count, warm=0)]


# A cell that shows one 20 kB PNG (its figure's bytes cross as a
# descriptor, figure.h), the file written once.
FIG_CELL = (
    "import os, sys\n"
    "p = os.path.abspath('.coil/figures/bench.png')\n"
    "if not os.path.exists(p):\n"
    "    os.makedirs(os.path.dirname(p), exist_ok=True)\n"
    "    open(p, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(20000))\n"
    "sys.modules['_coil']._shown.append({'type': 'image/png', 'path': p})")


def fig_slice(peer, count):
    """Microseconds of count back-to-back cells showing one figure."""
    out = []
    for _ in range(count):
        t0 = bench.time.perf_counter_ns()
        r = ask(peer, FIG_CELL)
        out.append((bench.time.perf_counter_ns() - t0) / 1000.0)
        if r.get("status") != "ok" or len(r.get("display") or []) != 1:
            raise NA(f"unexpected reply {json.dumps(r)[:100]}")
    return out


def cold_slice(coil, count):
    """Milliseconds from spawn to the first answer's line, count fresh
    coils, each with its cell waiting on stdin (bench.py's cold_coil)."""
    out = []
    for _ in range(count):
        t0 = bench.time.perf_counter_ns()
        p = bench.subprocess.Popen([coil, "--agent", "--no-record"],
                                   stdin=bench.subprocess.PIPE,
                                   stdout=bench.subprocess.PIPE,
                                   stderr=bench.subprocess.DEVNULL,
                                   cwd=bench.tempfile.gettempdir())
        p.stdin.write(b'{"code":"1+1"}\n')
        p.stdin.close()
        line = p.stdout.readline()
        out.append((bench.time.perf_counter_ns() - t0) / 1e6)
        p.stdout.read()
        if p.wait() != 0 or not line:
            raise NA(f"{os.path.basename(coil)}: rc {p.returncode}")
        check_two(json.loads(line))
    return out


cold_slice.spawns = True        # takes the binary, not a running coil


def tput_slice(mb):
    return lambda peer, count: [bench.tput_cell(peer, mb)
                                for _ in range(count)]


# key: (label, unit, better, coil's arguments, slice(peer, count), command)
MEASURES = {
    "rt": ("`1+1` round trip, default (checkpoints)", "µs", "lower", (),
           rt_slice, "`coil --agent`"),
    "rt_nockpt": ("`1+1` round trip, `--checkpoints 0`", "µs", "lower",
                  ("--checkpoints", "0"), rt_slice,
                  "`coil --agent --checkpoints 0`"),
    "rt_fig": ("a cell showing one 20 kB PNG, `--checkpoints 0`", "µs",
               "lower", ("--checkpoints", "0"), fig_slice,
               "`coil --agent --checkpoints 0`, a cell naming a PNG"),
    "tput_10": ("10 MB output (100k `print`)", "MB/s", "higher", (),
                tput_slice(10), "`for i in range(100000): print(\"x\"*99)`"),
    "tput_100": ("100 MB output (1M `write`)", "MB/s", "higher", (),
                 tput_slice(100), "`for i in range(1000000): "
                 "sys.stdout.write(\"y\"*99+\"\\n\")`"),
    "cold": ("cold start to the first answer", "ms", "lower", (),
             cold_slice, "`coil --agent --no-record`, `1+1` on stdin"),
}


def one_round(key, sides, order):
    """One round of key on both sides: {side: the median of its values}."""
    _, _, _, args, take, _ = MEASURES[key]
    warm, slices, count = plan(key)
    peers = {}
    spawns = getattr(take, "spawns", False)
    try:
        for side in order:
            peers[side] = (sides[side] if spawns else
                           start(sides[side], args, warm))
        values = {side: [] for side in order}
        for i in range(slices):
            for side in (order if i % 2 == 0 else order[::-1]):
                values[side] += take(peers[side], count)
    finally:
        for peer in peers.values():
            if not spawns:
                peer.close()
    return {side: statistics.median(v) for side, v in values.items()}


def measure(key):
    """Both sides, ROUNDS rounds, interleaved; one JSON line."""
    sides = {"base": os.environ.get("BASE_COIL", ""), "current": bench.COIL}
    _, slices, count = plan(key)
    rec = {"key": key, "rounds": ROUNDS, "per_round": slices * count,
           "base": [], "current": []}
    try:
        if not sides["base"]:
            raise NA(os.environ.get("BASE_NA") or "no BASE_COIL")
        for r in range(ROUNDS):
            order = ["base", "current"][::1 if r % 2 == 0 else -1]
            for side, value in one_round(key, sides, order).items():
                rec[side].append(value)
    except NA as e:
        rec = {"key": key, "na": str(e)}
    except Exception as e:  # noqa: BLE001 - report, never crash the suite
        rec = {"key": key, "na": f"{type(e).__name__}: {e}"[:160]}
    print(json.dumps(rec), flush=True)


# ---------------------------------------------------------------- the table

def spread(xs):
    """Median and interquartile range (first and third quartiles)."""
    if len(xs) < 2:
        return xs[0], xs[0], xs[0]
    q1, q2, q3 = statistics.quantiles(xs, n=4, method="inclusive")
    return q2, q1, q3


def num(v, digits=None):
    if digits is None:
        digits = 0 if v >= 100 else 1 if v >= 10 else 2
    return f"{v:,.{digits}f}"


def figure(xs, unit):
    m, lo, hi = spread(xs)
    return f"{num(m)} {unit} ({num(lo)}–{num(hi)})"


def row(rec, label, unit, better, cmd):
    if "na" in rec:
        na = f"n/a ({rec['na']})"
        return [label, na, na, "n/a", "—", cmd]
    ratios = [c / b for b, c in zip(rec["base"], rec["current"])]
    m, lo, hi = spread(ratios)
    ratio = f"{num(m, 2)}× ({num(lo, 2)}–{num(hi, 2)})"
    samples = f"{rec['rounds']} × {rec['per_round']}"
    return [f"{label}, {unit}, {better} is better", figure(rec["base"], unit),
            figure(rec["current"], unit), ratio, samples, cmd]


def table(path):
    res = bench.load_results(path)
    print("| benchmark | base | current | current/base | samples | command |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for key, (label, unit, better, _, _, cmd) in MEASURES.items():
        rec = res.get(key, {"na": "not run"})
        cells = row(rec, label, unit, better, cmd)
        print("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    print()
    print("Each figure: the median over rounds (first–third quartile).  A "
          "round starts a fresh coil of each side and alternates between "
          "them in slices; its sample of a side is the median of its values "
          "(samples: rounds × round trips or output cells a side and "
          "round).  The ratio is over each round's pair: below 1 is faster "
          "for a time, above 1 for a rate.")


if __name__ == "__main__":
    bench.cli(table, measure, MEASURES, __doc__)
