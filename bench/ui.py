"""The curses UI's speed (issue 11): keystroke-to-screen latency idle and
during a flood, and the UI's memory after the flood, side by side with
IPython's terminal in the same tmux setup.

    /usr/bin/python3 bench/ui.py KEY          run one measurement
    /usr/bin/python3 bench/ui.py table FILE   Markdown table of the results

Environment as for bench.py (COIL, BENCH_QUICK=1), and BENCH_UI_MB, the
flood's size in MB (500; 50 with BENCH_QUICK=1).  bench/run drives this.

Each side runs in its own tmux server, 80x24, as the UI tests do
(tests/ui/uilib.py).  A control-mode client of that server (tmux -C)
sends the keys and reads what the pane writes, as `%output` lines,
the moment tmux reads it from the pane: no capture-pane polling and no
process spawned per sample.  One sample: the input emptied (Ctrl-U),
a pause of 10-30 ms (not in step with the UI's frames), then a key
sent (`z` and `q` in turn); the latency is from the `send-keys` command
written to the first `%output` holding that key.  A key that shows no
echo within 5 s is counted as lost.

The flood is one cell printing MB megabytes in 100-byte lines, 1000 to
a print(), each line numbered by its print (FLOOD below), so that one
screen of it differs from the one before; the same cell on both sides.

  ui_coil        coil's UI, default --scrollback: idle samples; then the
                 flood: QUIET_S seconds with no keys, for the terminal
                 output a second (bytes, and bursts: writes with no gap
                 over 8 ms between them, the screen's updates), then
                 samples until it ends; the UI process's VmRSS before,
                 its VmHWM, and its VmRSS a second after the flood.
  ui_coil_1000   the same flood with --scrollback 1000, no idle samples.
  ui_ipython     `/usr/bin/python3 -m IPython` (Debian's python3-ipython):
                 idle samples, then the same flood, sampled for its first
                 FLOOD_MAX_S seconds at most (the terminal takes all of
                 it: tmux draws 500 MB far slower than coil's UI reads
                 it), then Ctrl-C.  IPython echoes at its prompt; during
                 the cell the terminal's line discipline echoes.
"""
import json
import os
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "ui"))
import bench  # noqa: E402
from bench import COIL, NA, PY  # noqa: E402
from coiltest import vm_kb  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

QUICK = bench.QUICK
MB = int(os.environ.get("BENCH_UI_MB") or (50 if QUICK else 500))
FLOOD = ("for b in range(%d): print((f'{b:09} ' + 'x'*89 + '\\n') * 1000, "
         "end='')" % (MB * 10))
FLOOD_MAX_S = 10 if QUICK else 30       # of sampling during one flood
# The keys typed, in turn: in no screen of either side, and never the
# same twice running, so that Ctrl-U and the next key handled in one
# turn still change the screen
KEYS = (b"z", b"q")
# Samples: (default, quick).
N = {"idle": (300, 60), "flood": (300, 30)}
FLOODS = 4                              # at most, for those samples
BURST_GAP_NS = 8e6
QUIET_S = 1 if QUICK else 2   # of the flood with no keys


def n(kind):
    return N[kind][1 if QUICK else 0]


class Control:
    """A tmux control-mode client of scr's server: cmd() writes a
    command, pump() reads the pane's output as it comes, keeping the
    arrival time and size of each `%output` line in .out."""

    def __init__(self, scr):
        self.proc = subprocess.Popen(
            ["tmux", "-L", scr.name, "-f", "/dev/null", "-C", "attach"],
            env=scr.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0)
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.rest = b""
        self.out = []           # (ns, bytes) of each %output line
        self.turn = 0           # samples taken

    def cmd(self, line):
        self.proc.stdin.write(line.encode() + b"\n")

    def pump(self, timeout):
        """Read for at most timeout seconds (0: what is there); the
        %output data that came, with the time each came."""
        got = []
        end = time.perf_counter() + timeout
        while True:
            left = max(0.0, end - time.perf_counter())
            if not select.select([self.fd], [], [], left)[0]:
                return got
            data = os.read(self.fd, 1 << 20)
            if not data:
                raise NA("the tmux control client ended")
            now = time.perf_counter_ns()
            lines = (self.rest + data).split(b"\n")
            self.rest = lines.pop()
            for line in lines:
                if line.startswith(b"%output "):
                    body = line.split(b" ", 2)[2]
                    # control mode writes a byte below ' ' or '\' as \ooo
                    size = len(body) - 3 * body.count(b"\\")
                    self.out.append((now, size))
                    got.append((now, body))
            if got or timeout == 0:
                return got

    def close(self):
        self.proc.kill()
        self.proc.wait()


def sample(ctl, timeout=5.0):
    """One keystroke's latency in ns, or None when it did not echo."""
    ctl.turn += 1
    key = KEYS[ctl.turn % len(KEYS)]
    ctl.cmd("send-keys C-u")
    end = time.perf_counter() + random.uniform(0.010, 0.030)
    while time.perf_counter() < end:
        ctl.pump(max(0.0, end - time.perf_counter()))
    ctl.pump(0)
    t0 = time.perf_counter_ns()
    ctl.cmd("send-keys -l " + key.decode())
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        for t, body in ctl.pump(end - time.perf_counter()):
            if key in body:
                return t - t0
    return None


def stats(times):
    """Median and 99th percentile in ms, count and misses."""
    ok = sorted(t for t in times if t is not None)
    if not ok:
        raise NA("no key echoed")
    p99 = ok[min(len(ok) - 1, int(round(0.99 * (len(ok) - 1))))]
    return {"p50": statistics.median(ok) / 1e6, "p99": p99 / 1e6,
            "n": len(ok), "lost": len(times) - len(ok)}


def redraws(out, t0, t1):
    """Bursts (no gap over BURST_GAP_NS) a second and MB a second of what
    the pane wrote in [t0, t1]."""
    bursts, last, total = 0, None, 0
    for t, k in out:
        if t0 <= t <= t1:
            total += k
            bursts += last is None or t - last > BURST_GAP_NS
            last = t
    secs = max((t1 - t0) / 1e9, 1e-9)
    return bursts / secs, total / 1e6 / secs


def flood(scr, ctl, running, quiet=QUIET_S):
    """One flood: quiet seconds untouched for the terminal's output
    rates, then samples while it runs (running(text) says it does), for
    FLOOD_MAX_S at most.  The samples (.times), the rates, the seconds
    sampled and whether the flood ended by itself."""
    scr.keys("C-u")
    scr.type(FLOOD)
    scr.keys("Enter")                   # a compound statement: it ends
    if not scr.wait(r"\d{9} x{20}", timeout=30):
        raise NA("the flood did not show: " + scr.text()[-200:])
    t0 = time.perf_counter_ns()
    while time.perf_counter_ns() - t0 < quiet * 1e9:
        ctl.pump(quiet - (time.perf_counter_ns() - t0) / 1e9)
    t1 = time.perf_counter_ns()
    rec = {}
    if quiet:
        rec["bursts"], rec["term_mbs"] = redraws(ctl.out, t0, t1)
    times, ended, checked = [], False, time.perf_counter()
    while time.perf_counter_ns() - t1 < FLOOD_MAX_S * 1e9:
        times.append(sample(ctl))
        if time.perf_counter() - checked > 0.3:
            if not running(scr.text()):
                ended = True
                break
            checked = time.perf_counter()
    return dict(rec, times=times, secs=(time.perf_counter_ns() - t1) / 1e9,
                ended=ended)


def idle(ctl):
    for _ in range(10):                         # warm up
        sample(ctl)
    return stats([sample(ctl) for _ in range(n("idle"))])


def home_env(d):
    """Both sides keep history and settings in d, not in $HOME."""
    return {"HOME": d, "XDG_STATE_HOME": d, "XDG_CONFIG_HOME": d,
            "XDG_CACHE_HOME": d, "XDG_DATA_HOME": d, "IPYTHONDIR": d,
            "INPUTRC": "/dev/null"}


def started(cmd, ready):
    """A Screen running cmd once regex ready shows, and its control
    client."""
    d = tempfile.mkdtemp(prefix="coil-bench-ui.")
    scr = Screen(cmd, env=home_env(d), cwd=d)
    scr.home = d
    if not scr.wait(ready, timeout=60):
        text = scr.text()
        stop(scr, None)
        raise NA("did not start: " + " ".join(text.split())[-150:])
    return scr, Control(scr)


def stop(scr, ctl):
    """The control client, the tmux server and the home directory
    gone."""
    if ctl is not None:
        ctl.close()
    scr.close()
    shutil.rmtree(scr.home, ignore_errors=True)


def coil_running(text):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return bool(lines) and "running" in lines[-1]


def coil_flood(scr, ctl):
    """The first flood, then the memory; more floods for more samples,
    then the peak again."""
    pid = scr.coil_pid()
    rec = {"rss_before_mb": vm_kb(pid, "VmRSS") / 1024}
    first = flood(scr, ctl, coil_running)
    if not first["ended"] and not wait_done(scr):
        raise NA("the flood did not end")
    time.sleep(1)
    rec["hwm_mb"] = vm_kb(pid, "VmHWM") / 1024
    rec["rss_after_mb"] = vm_kb(pid, "VmRSS") / 1024
    times, secs, k = first.pop("times"), first["secs"], 1
    while len(times) < n("flood") and k < FLOODS:
        more = flood(scr, ctl, coil_running, quiet=0)
        if not more["ended"] and not wait_done(scr):
            raise NA("a flood did not end")
        times += more["times"]
        secs += more["secs"]
        k += 1
    rec["hwm_end_mb"] = vm_kb(pid, "VmHWM") / 1024
    if not re.search(r"│  \d{9} x{20}", scr.text()):
        raise NA("no flood on screen at the end")
    rec["flood"] = dict(first, **stats(times), secs=secs, floods=k)
    return rec


def ui_coil(*args, with_idle=True):
    if not have_tmux():
        raise NA("no tmux")
    if not os.access(COIL, os.X_OK):
        raise NA(f"no coil at {COIL}")
    scr, ctl = started(coil_cmd(*args), r"^>>>")
    try:
        rec = {"idle": idle(ctl)} if with_idle else {}
        rec.update(coil_flood(scr, ctl))
    finally:
        stop(scr, ctl)
    return rec


def wait_done(scr, timeout=300):
    end = time.time() + timeout
    while time.time() < end:
        if not coil_running(scr.text()):
            return True
        time.sleep(0.2)
    return False


def ipython_running(text):
    return not re.search(r"^In \[2\]", text, re.M)


def ui_ipython():
    if not have_tmux():
        raise NA("no tmux")
    if subprocess.run([PY, "-c", "import IPython"],
                      capture_output=True).returncode != 0:
        raise NA("no IPython for /usr/bin/python3 (python3-ipython)")
    scr, ctl = started(PY + " -m IPython --no-banner", r"^In \[1\]:")
    try:
        rec = {"idle": idle(ctl)}
        f = flood(scr, ctl, ipython_running)
        times = f.pop("times")
        rec["flood"] = dict(f, **stats(times), floods=1)
        scr.keys("C-c")
    finally:
        stop(scr, ctl)
    return rec


MEASURES = {
    "ui_coil": ui_coil,
    "ui_coil_1000": lambda: ui_coil("--scrollback", "1000",
                                    with_idle=False),
    "ui_ipython": ui_ipython,
}


def measure(key):
    try:
        rec = dict(MEASURES[key](), key=key, mb=MB)
    except NA as e:
        rec = {"key": key, "na": str(e)}
    except Exception as e:  # noqa: BLE001 - report, never crash the suite
        rec = {"key": key, "na": f"{type(e).__name__}: {e}"[:160]}
    print(json.dumps(rec), flush=True)


# ---------------------------------------------------------------- the table

def pair(rec, field, unit="ms"):
    """"p50 / p99 unit" of rec[field], or n/a with the reason."""
    if rec is None or "na" in rec:
        return "n/a (%s)" % (rec or {}).get("na", "not run")
    x = rec[field]
    return "%s / %s %s" % (num(x["p50"]), num(x["p99"]), unit)


def num(v):
    return f"{v:,.{0 if v >= 100 else 1 if v >= 10 else 2}f}"


def ratios(c, p, field):
    """IPython/coil of the median and the p99."""
    if not c or not p or "na" in c or "na" in p:
        return "n/a"
    a, b = p[field], c[field]
    return "%s× / %s× (IPython/coil)" % (num(a["p50"] / b["p50"]),
                                          num(a["p99"] / b["p99"]))


def mem(rec):
    if rec is None or "na" in rec:
        return "n/a (%s)" % (rec or {}).get("na", "not run")
    return "%s / %s / %s MB" % (num(rec["rss_before_mb"]),
                                num(rec["hwm_mb"]), num(rec["rss_after_mb"]))


def flood_rate(rec, field, unit, scale=1):
    if rec is None or "na" in rec:
        return "n/a"
    return "%s %s" % (num(rec["flood"][field] * scale), unit)


def table(path):
    res = bench.load_results(path)
    c, c1, p = (res.get(k) for k in ("ui_coil", "ui_coil_1000",
                                       "ui_ipython"))
    mb = next((r["mb"] for r in (c, c1, p) if r and "mb" in r), MB)
    print("| curses UI (issue 11) | coil | IPython | ratio |")
    print("| --- | ---: | ---: | ---: |")
    rows = [
        ("keystroke to screen, idle: median / p99", pair(c, "idle"),
         pair(p, "idle"), ratios(c, p, "idle")),
        (f"keystroke to screen during a {mb} MB flood: median / p99",
         pair(c, "flood"), pair(p, "flood"), ratios(c, p, "flood")),
        ("terminal output during the flood (bursts of it a second)",
         flood_rate(c, "term_mbs", "KB/s", 1000) + " (%s)" % flood_rate(
             c, "bursts", "/s"),
         flood_rate(p, "term_mbs", "KB/s", 1000), "—"),
        (f"UI RSS before / peak / after {mb} MB, default --scrollback",
         mem(c), "—", "—"),
        (f"UI RSS before / peak / after {mb} MB, --scrollback 1000",
         mem(c1), "—", "—"),
    ]
    for r in rows:
        print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    print()
    print(notes(c, c1, p))


def notes(c, c1, p):
    """What the samples were: how many, over how long, lost keys."""
    parts = []
    for name, rec in (("coil", c), ("coil --scrollback 1000", c1),
                      ("IPython", p)):
        if not rec or "na" in rec:
            continue
        f = rec["flood"]
        idle = ("%d idle samples, " % rec["idle"]["n"]
                if "idle" in rec else "")
        parts.append("%s: %s%d during %.1f s of %s%s%s" % (
            name, idle, f["n"], f["secs"], "the flood" if f["floods"] == 1
            else "%d floods in turn" % f["floods"],
            "" if f["ended"] else " (it was still running)",
            ", %d keys lost" % f["lost"] if f["lost"] else ""))
    peak = "; ".join("%s's peak after %d floods %s MB" % (
        name, r["flood"]["floods"], num(r["hwm_end_mb"]))
        for name, r in (("coil", c), ("coil --scrollback 1000", c1))
        if r and "hwm_end_mb" in r and r["flood"]["floods"] > 1)
    if peak:
        parts.append(peak)
    return ("In tmux 80x24, typed through tmux's control mode. "
            + "; ".join(parts) + ". The flood: `" + FLOOD.replace(
                "%d" % (MB * 10), "N") + "`.")


if __name__ == "__main__":
    # bench/run's deadline is a SIGTERM: through the finally clauses,
    # so no tmux server is left behind with its UI running
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    bench.cli(table, measure, MEASURES, __doc__)
