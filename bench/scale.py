#!/usr/bin/python3
"""bench/scale.py - what one session costs, and many at once, over MCP's
Streamable HTTP: `coil --mcp --http 127.0.0.1:0` processes (coil is one
session a process), the default sandbox, reached by a lean asyncio client
of the standard library (one keep-alive connection a session).

    COIL=build/src/coil /usr/bin/python3 bench/scale.py costs
    COIL=build/src/coil /usr/bin/python3 bench/scale.py hold [N]
    COIL=build/src/coil /usr/bin/python3 bench/scale.py       (both)

costs: K sessions one after another: start (spawn to the first cell's
answer), idle memory (PSS, private and RSS summed over every process of
the session: supervisor, init, worker, checkpoints), memory after 200
cells, CPU per trivial cell (the session's processes, from /proc), and
the sessions this machine's memory would hold at that price.

hold: N sessions (default 1000) started in batches and initialized, then
a trivial cell (`x = 1`) to each: in turn (one at a time), at a steady
rate (SCALE_RATE cells a second, open loop, timed from when each was
due), and all at once (a burst, reported apart).  Target (issue 28): p99
under 20 ms.  It stops starting sessions while MemAvailable is under
SCALE_RESERVE_MB (4096) and says how many it held.

Knobs: SCALE_K (10), SCALE_BATCH (25 started at once), SCALE_RATE (50),
SCALE_RESERVE_MB (4096), SCALE_ARGS (more options for every coil, for a
comparison: SCALE_ARGS="--checkpoints 0").

Every coil started here dies with this script (PR_SET_PDEATHSIG, and
SIGTERM then SIGKILL at its end however it ends).  /proc/loadavg is
printed beside each figure: the machine may be shared.
"""
import asyncio
import ctypes
import gc
import json
import os
import resource
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
COIL = os.environ.get("COIL", "build/src/coil")
K = int(os.environ.get("SCALE_K", "10"))
BATCH = int(os.environ.get("SCALE_BATCH", "25"))
RATE = float(os.environ.get("SCALE_RATE", "50"))
RESERVE_MB = int(os.environ.get("SCALE_RESERVE_MB", "4096"))
# More options for every coil (a comparison: SCALE_ARGS="--checkpoints 0").
ARGS = os.environ.get("SCALE_ARGS", "").split()
CELL = {"name": "run_python", "arguments": {"code": "x = 1"}}
VERSION = "2025-11-25"
PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")
LIBC = ctypes.CDLL(None, use_errno=True)
PROCS = []                                      # every coil started
WORK = tempfile.mkdtemp(prefix="coil-scale-")


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) // 1024   # MiB
    return 0


def die_with_parent():
    LIBC.prctl(1, signal.SIGTERM)               # PR_SET_PDEATHSIG


# ---- the processes of a session ------------------------------------------

def tree(pid):
    """pid and all its descendants (through /proc/PID/task/*/children)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def memory(pids):
    """(PSS, private, RSS) in KiB summed over pids."""
    pss = priv = rss = 0
    for p in pids:
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if k == "Pss":
                        pss += int(v.split()[0])
                    elif k in ("Private_Clean", "Private_Dirty"):
                        priv += int(v.split()[0])
                    elif k == "Rss":
                        rss += int(v.split()[0])
        except OSError:
            pass
    return pss, priv, rss


def cpu_ms(pids):
    """CPU of pids and of the children they reaped, in ms."""
    t = 0
    for p in pids:
        try:
            with open("/proc/%d/stat" % p) as f:
                f = f.read().rsplit(")", 1)[1].split()
            t += sum(int(x) for x in f[11:15])  # utime stime cutime cstime
        except OSError:
            pass
    return t * 1000.0 / TICK


# ---- a session: one coil, one connection --------------------------------

class Closed(Exception):
    """The connection ended before an answer began."""


class Session:
    async def start(self):
        self.t0 = time.perf_counter()
        self.proc = await asyncio.create_subprocess_exec(
            COIL, "--mcp", "--http", "127.0.0.1:0", "--no-record",
            "--workdir", WORK, *ARGS, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE, preexec_fn=die_with_parent,
            start_new_session=True)
        PROCS.append(self.proc)
        self.port = None
        while self.port is None:
            line = await asyncio.wait_for(self.proc.stderr.readline(), 120)
            if not line:
                raise RuntimeError("coil ended before it served")
            s = line.decode(errors="replace")
            if "serving MCP on http://" in s:
                self.port = int(s.rsplit(":", 1)[1].split("/")[0])
        # Read the rest of its stderr as it comes: a pipe nobody reads
        # would stop it.
        self.drain = asyncio.ensure_future(self.proc.stderr.read())
        self.t_serve = time.perf_counter()
        self.w = None
        await self.ready()
        self.sid, self.id = None, 0
        st, hdr, body = await self.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": VERSION, "capabilities": {},
                "clientInfo": {"name": "scale", "version": "1"}}})
        if st != 200 or b'"result"' not in body:
            raise RuntimeError("initialize: %d %r" % (st, body[:200]))
        self.sid = hdr["mcp-session-id"]
        st, _, _ = await self.post({"jsonrpc": "2.0",
                                    "method": "notifications/initialized"})
        if st != 202:
            raise RuntimeError("notifications/initialized: %d" % st)
        self.t_init = time.perf_counter()

    async def ready(self):
        """A connection to coil: the one kept, unless coil closed it
        (libmicrohttpd ends one idle for HTTP_IDLE_S, 120 s), as any
        keep-alive client finds and opens it again."""
        if self.w is not None and not self.r.at_eof():
            return
        if self.w is not None:
            self.w.close()
            self.reconnects += 1
        self.r, self.w = await asyncio.open_connection("127.0.0.1",
                                                       self.port)

    reconnects = 0

    async def post(self, msg, retry=True):
        body = json.dumps(msg).encode()
        head = ("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                "Content-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\n"
                "Content-Length: %d\r\n" % (self.port, len(body)))
        if self.sid is not None:
            head += ("Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n"
                     % (self.sid, VERSION))
        self.w.write(head.encode() + b"\r\n" + body)
        try:
            return await self.response()
        except (Closed, ConnectionResetError):
            if not retry:
                raise
        # coil closed the idle connection as the request went out
        # (unread: libmicrohttpd ends a connection only between
        # requests): once more on a new one, as HTTP clients do.
        self.w.close()
        self.w = None
        self.reconnects += 1
        await self.ready()
        return await self.post(msg, False)

    async def response(self):
        line = await self.r.readline()
        if not line:
            raise Closed("coil on port %d closed the connection"
                         % self.port)
        status = int(line.split()[1])
        hdr = {}
        while True:
            line = (await self.r.readline()).decode().rstrip("\r\n")
            if not line:
                break
            k, _, v = line.partition(":")
            hdr[k.strip().lower()] = v.strip()
        if hdr.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                n = int((await self.r.readline()).split(b";")[0], 16)
                if n == 0:
                    while (await self.r.readline()).strip():
                        pass                    # trailers
                    break
                parts.append(await self.r.readexactly(n))
                await self.r.readexactly(2)
            return status, hdr, b"".join(parts)
        n = int(hdr.get("content-length", "0"))
        return status, hdr, await self.r.readexactly(n)

    async def cell(self):
        """One trivial cell; its round trip in ms."""
        self.id += 1
        await self.ready()
        t = time.perf_counter()
        st, _, body = await self.post({"jsonrpc": "2.0", "id": self.id,
                                       "method": "tools/call",
                                       "params": CELL})
        ms = (time.perf_counter() - t) * 1000
        if st != 200 or b'"result"' not in body or \
                b'"isError":true' in body.replace(b" ", b""):
            raise RuntimeError("cell: %d %r" % (st, body[-300:]))
        return ms

    def pids(self):
        return tree(self.proc.pid)

    async def settle(self):
        """Wait until the session's processes stop changing (the idle
        checkpoint is taken after the answer is written)."""
        last, same, end = None, 0, time.perf_counter() + 5
        while same < 5 and time.perf_counter() < end:
            now = sorted(self.pids())
            same = same + 1 if now == last else 0
            last = now
            await asyncio.sleep(0.05)

    async def close(self):
        if self.w is not None:
            self.w.close()
        if self.proc.returncode is None:
            self.proc.terminate()
        try:
            await asyncio.wait_for(self.proc.wait(), 30)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def lat(name, xs):
    print("  %-22s n %4d  p50 %6.2f  p99 %6.2f  max %7.2f ms   load %s"
          % (name, len(xs), q(xs, 50), q(xs, 99), max(xs), loadavg()),
          flush=True)
    return q(xs, 99)


# ---- costs ---------------------------------------------------------------

async def costs():
    print("per-session costs, %d sessions one after another (load %s):"
          % (K, loadavg()), flush=True)
    start, serve, idle, loaded, cpu, nproc, paced = [], [], [], [], [], \
        [], []
    for _ in range(K):
        s = Session()
        try:
            await s.start()
            await s.cell()
            start.append((time.perf_counter() - s.t0) * 1000)
            serve.append((s.t_serve - s.t0) * 1000)
            await s.settle()
            pids = s.pids()
            idle.append(memory(pids))
            nproc.append(len(pids))
            c0 = cpu_ms(pids)
            for _ in range(200):
                await s.cell()
            await s.settle()
            pids = s.pids()
            cpu.append((cpu_ms(pids) - c0) / 200)
            loaded.append(memory(pids))
            # With time to think between cells, as a model takes: each
            # answer is followed by its idle checkpoint (a fork).
            c0 = cpu_ms(pids)
            for _ in range(20):
                await s.cell()
                await asyncio.sleep(0.15)
            await s.settle()
            paced.append((cpu_ms(s.pids()) - c0) / 20)
        finally:
            await s.close()
    med = statistics.median
    print("  start to listening        median %6.1f ms" % med(serve))
    print("  start to first answer     median %6.1f ms (initialize and "
          "one cell)" % med(start))
    for name, m in (("idle (after 1 cell)", idle),
                    ("after 200 cells", loaded)):
        print("  memory %-19s PSS %5.1f MiB  private %5.1f MiB  RSS "
              "%5.1f MiB" % (name, med([x[0] for x in m]) / 1024,
                             med([x[1] for x in m]) / 1024,
                             med([x[2] for x in m]) / 1024))
    print("  processes a session       median %d (idle)" % med(nproc))
    print("  CPU per trivial cell      median %.3f ms back to back, %.3f "
          "ms 150 ms apart (with its checkpoint; the session's processes)"
          % (med(cpu), med(paced)))
    total = meminfo("MemTotal")
    for name, m in (("idle", idle), ("after 200 cells", loaded)):
        per = med([x[0] for x in m]) / 1024
        print("  sessions in %d MiB at %s PSS: %d (all of memory; %d "
              "leaving %d MiB)" % (total, name, total / per,
                                   (total - RESERVE_MB) / per, RESERVE_MB))
    print("  load %s" % loadavg(), flush=True)


# ---- hold N at once ------------------------------------------------------

async def hold(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 4 * n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8 * n + 200),
                                                    hard))
    avail0 = meminfo("MemAvailable")
    print("holding %d sessions, started %d at a time (MemAvailable %d "
          "MiB, load %s):" % (n, BATCH, avail0, loadavg()), flush=True)
    ss, t0 = [], time.perf_counter()
    try:
        while len(ss) < n:
            if meminfo("MemAvailable") < RESERVE_MB:
                print("  stopped starting: MemAvailable under %d MiB"
                      % RESERVE_MB)
                break
            batch = [Session() for _ in range(min(BATCH, n - len(ss)))]
            ss += batch
            await asyncio.gather(*(s.start() for s in batch))
        took = time.perf_counter() - t0
        print("  %d sessions up and initialized in %.1f s (%.1f ms each), "
              "load %s" % (len(ss), took, took * 1000 / len(ss), loadavg()),
              flush=True)
        # The client's own collector out of the figures: a full
        # collection over 1,000 sessions' streams and buffers is a pause
        # of this process, not of coil's.
        gc.collect()
        gc.freeze()
        gc.disable()
        for s in ss:                            # the first cell of each
            await s.cell()
        await asyncio.gather(*(s.settle() for s in ss[:50]))
        allpids = [p for s in ss for p in s.pids()]
        pss, priv, rss = memory(allpids)
        avail = meminfo("MemAvailable")
        print("  %d processes; PSS %.0f MiB (%.1f each), private %.0f MiB;"
              " MemAvailable down %d MiB (%.1f each)" % (
                  len(allpids), pss / 1024, pss / 1024 / len(ss),
                  priv / 1024, avail0 - avail, (avail0 - avail) / len(ss)),
              flush=True)
        c0, t = cpu_ms(allpids), time.perf_counter()
        await asyncio.sleep(10)
        print("  idle: the %d sessions' processes used %.1f ms of CPU a "
              "second in all" % (len(ss), (cpu_ms(allpids) - c0) /
                                  (time.perf_counter() - t)), flush=True)
        p99 = []
        for rnd in range(2):
            c0, u0 = fleet_cpu(ss), os.times()
            xs = [await s.cell() for s in ss]
            p99.append(lat("in turn, round %d" % (rnd + 1), xs))
            u1 = os.times()
            await asyncio.gather(*(s.settle() for s in ss[-20:]))
            print("    CPU a cell: sessions %.2f ms, this client %.2f ms"
                  % ((fleet_cpu(ss) - c0) / len(ss),
                     (u1.user + u1.system - u0.user - u0.system) * 1000 /
                     len(ss)), flush=True)
        p99.append(lat("steady %g/s" % RATE, await steady(ss)))
        for rnd in range(2):
            xs = await asyncio.gather(*(s.cell() for s in ss))
            lat("burst of %d, %d" % (len(ss), rnd + 1), xs)
        print("  target: p99 under 20 ms (in turn, steady): %s"
              % ("ok" if max(p99) < 20 else "MISSED"), flush=True)
        print("  connections opened again (coil closes one idle for "
              "120 s): %d" % sum(s.reconnects for s in ss))
    finally:
        t = time.perf_counter()
        await asyncio.gather(*(s.close() for s in ss
                               if hasattr(s, "proc")),
                             return_exceptions=True)
        print("  %d sessions ended in %.1f s" % (len(ss),
                                                 time.perf_counter() - t))


def fleet_cpu(ss):
    return cpu_ms([p for s in ss for p in s.pids()])


async def steady(ss):
    """Each session one cell, a new one due every 1/RATE s (open loop:
    a cell is timed from when it was due, so a stall counts)."""
    out, t0 = [], time.perf_counter()

    async def one(i, s):
        due = t0 + i / RATE
        await asyncio.sleep(max(0, due - time.perf_counter()))
        await s.cell()
        out.append((time.perf_counter() - due) * 1000)
    await asyncio.gather(*(one(i, s) for i, s in enumerate(ss)))
    return out


def cleanup():
    for p in PROCS:
        if p.returncode is None:
            try:
                p.kill()
            except ProcessLookupError:
                pass
    shutil.rmtree(WORK, True)


async def main(argv):
    what = argv[1] if len(argv) > 1 else "all"
    n = int(argv[2]) if len(argv) > 2 else 1000
    loop = asyncio.get_running_loop()
    # A pidfd a child, not a thread a child (3.11's default watcher).
    watcher = asyncio.PidfdChildWatcher()
    watcher.attach_loop(loop)
    asyncio.set_child_watcher(watcher)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, lambda: sys.exit(130))
    print("coil %s%s, %d CPUs, %d MiB (load %s)" % (
        COIL, "".join(" " + a for a in ARGS), os.cpu_count(),
        meminfo("MemTotal"), loadavg()), flush=True)
    if what in ("costs", "all"):
        await costs()
    if what in ("hold", "all"):
        await hold(n)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv))
    finally:
        cleanup()
