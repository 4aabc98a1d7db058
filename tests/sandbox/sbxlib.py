"""Helpers for the sandbox tests: run cells in a real `coil --agent
--sandbox PROFILE` session, inside outer limits of the harness's own, and
check what came out.

Each test file runs the same scenario under none, standard and strict and
prints TAP.  Exit status: 0 all passed, 1 something failed, 77 skipped (the
machine lacks what the test needs, and the reason is printed).

Outer limits: every coil runs in a cgroup of the harness (pids.max and a
memory limit, v1 or v2, whichever is there), under a timeout, with
RLIMIT_FSIZE and RLIMIT_CORE set, so that a test that escapes the sandbox
(or runs under `none`) still cannot take the machine down.  After it exits,
whatever is left in that cgroup was left running by the session: the tests
check that nothing is, and kill it.
"""

import atexit
import errno
import json
import queue
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# the coil under test: `make check` says which
COIL = os.environ.get("COIL") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "src", "coil"))
PROFILES = ("none", "standard", "strict")
SANDBOXED = ("standard", "strict")

# Put at the top of every cell: tiny helpers that print one RESULT line per
# attempt.  `t` runs Python (the audit hook may answer); `k` calls libc
# through ctypes, bypassing the hook, to show what the kernel says.
PRELUDE = r'''
import os, sys, ctypes, errno as _errno
_libc = ctypes.CDLL(None, use_errno=True)
def t(name, f):
    try:
        r = f()
    except BaseException as e:
        print("RESULT %s DENIED %s: %s" % (name, type(e).__name__, e), flush=True)
        return None
    print("RESULT %s ALLOWED %r" % (name, r), flush=True)
    return r
def k(name, f):
    ctypes.set_errno(0)
    r = f(_libc)
    if r == -1:
        e = ctypes.get_errno()
        print("RESULT %s DENIED kernel: %s (%s)" % (name, _errno.errorcode.get(e, e), os.strerror(e)), flush=True)
    else:
        print("RESULT %s ALLOWED %r" % (name, r), flush=True)
    return r
'''

SESSION_OK = 'print("SESSION OK", flush=True)'


_made = []


def tmpdir(prefix, parent="/tmp"):
    """A temporary dir, removed when the test exits."""
    d = tempfile.mkdtemp(prefix=prefix, dir=parent)
    os.chmod(d, 0o755)
    _made.append(d)
    return d


@atexit.register
def _cleanup():
    for d in reversed(_made):
        shutil.rmtree(d, ignore_errors=True)


class Outer:
    """A cgroup of the harness's own around one run."""

    def __init__(self, pids=768, memory=3 << 30):
        self.dirs = []
        tag = "sbxtest.%d.%d" % (os.getpid(), int(time.time() * 1e6) % 10**9)
        for ctrl, files in (("pids", {"pids.max": str(pids)}),
                            ("memory", {"memory.limit_in_bytes": str(memory)})):
            base = self._base(ctrl)
            if base is None:
                continue
            d = os.path.join(base, tag)
            try:
                os.mkdir(d)
                for f, v in files.items():
                    with open(os.path.join(d, f), "w") as fh:
                        fh.write(v)
                if ctrl == "memory" and os.path.exists(
                        os.path.join(d, "memory.memsw.limit_in_bytes")):
                    with open(os.path.join(d, "memory.memsw.limit_in_bytes"),
                              "w") as fh:
                        fh.write(str(memory))
            except OSError:
                try:
                    os.rmdir(d)
                except OSError:
                    pass
                continue
            self.dirs.append((ctrl, d))

    @staticmethod
    def _base(ctrl):
        mnt = None
        with open("/proc/self/mountinfo") as f:
            for line in f:
                pre, _, post = line.partition(" - ")
                fields, opts = pre.split(), post.split()
                if opts[0] == "cgroup" and ctrl in opts[2].split(","):
                    mnt = fields[4]
        if mnt is None:
            return None
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                if ctrl in ctrls.split(","):
                    return mnt + (path if path != "/" else "")
        return None

    @property
    def proven(self):
        return any(c == "pids" for c, _ in self.dirs) and \
            any(c == "memory" for c, _ in self.dirs)

    def join(self):
        for _, d in self.dirs:
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))

    def procs(self):
        out = set()
        for _, d in self.dirs:
            try:
                with open(os.path.join(d, "cgroup.procs")) as f:
                    out |= {int(x) for x in f.read().split()}
            except OSError:
                pass
        return sorted(out)

    def cmdline(self, pid):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                return f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return "?"

    def kill_all(self):
        for _ in range(200):
            ps = self.procs()
            if not ps:
                return
            for p in ps:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def remove(self):
        self.kill_all()
        for _, d in self.dirs:
            # a session cgroup a killed coil left inside goes first
            for sub, _, _ in sorted(os.walk(d), key=lambda w: -len(w[0])):
                for _ in range(100):
                    try:
                        os.rmdir(sub)
                        break
                    except OSError:
                        time.sleep(0.02)


class Result:
    """What one coil session gave: the RESULT lines of every cell's output,
    how each cell ended, the sandbox report of ping, and whether coil
    itself (the supervisor) came through."""

    def __init__(self, profile, rc, out, err, leftovers, elapsed,
                 responses=(), report=None, supervisor_ok=False,
                 skip_reason=None):
        self.profile = profile
        self.rc = rc
        self.out = out
        self.err = err
        self.leftovers = leftovers
        self.elapsed = elapsed
        # one per cell given to run() (the prelude is not counted): the
        # response, or None when coil never answered
        self.responses = list(responses)
        self.results = {}
        for line in out.splitlines():
            m = re.match(r"RESULT (\S+) (ALLOWED|DENIED) ?(.*)", line)
            if m:
                self.results[m.group(1)] = (m.group(2), m.group(3))
        # how each cell's worker ended: ("exit", "0")
        # when it ran (to the end or to an exception) and the worker lived
        # on, ("signal", N) / ("exit", N) when it died, ("lost", "") when
        # coil gave no answer
        self.cells = {i: _how(resp) for i, resp in enumerate(self.responses)}
        self.report = report
        self.supervisor_ok = supervisor_ok
        self.skipped = skip_reason is not None
        self.skip_reason = skip_reason

    def add_output(self, text):
        """RESULT lines that came by another way than coil's answers."""
        self.out += text
        for line in text.splitlines():
            m = re.match(r"RESULT (\S+) (ALLOWED|DENIED) ?(.*)", line)
            if m:
                self.results[m.group(1)] = (m.group(2), m.group(3))

    def get(self, name):
        return self.results.get(name, ("MISSING", ""))

    def response(self, i):
        return self.responses[i] if i < len(self.responses) else None

    def mech(self, name):
        if not self.report:
            return None
        return self.report["mechanisms"].get(name, {}).get("state")

    def session_ok(self):
        return "SESSION OK" in self.out

    def dump(self):
        sys.stdout.write("# --- %s rc=%s supervisor_ok=%s ---\n" % (
            self.profile, self.rc, self.supervisor_ok))
        for i, resp in enumerate(self.responses):
            if resp is None:
                sys.stdout.write("#   cell %d: no answer\n" % i)
                continue
            short = {k: v for k, v in resp.items()
                     if k not in ("output", "stderr")}
            sys.stdout.write("#   cell %d: %s\n" % (
                i, json.dumps(short)[:400]))
            for k in ("output", "stderr"):
                for line in (resp.get(k) or "").splitlines():
                    sys.stdout.write("#     %s| %s\n" % (k[:3], line))
        for line in self.err.splitlines():
            sys.stdout.write("#   coil: %s\n" % line)


def _how(resp):
    if resp is None:
        return ("lost", "")
    st = resp.get("status")
    if st in ("crashed", "timeout", "interrupted") and resp.get("restored"):
        msg = (resp.get("error") or {}).get("message") or ""
        m = re.search(r"the worker died \((exit status|signal) (\d+)", msg)
        if m:
            return ("exit" if m.group(1) == "exit status" else "signal",
                    m.group(2))
        if "worker was killed" in msg:
            return ("signal", "9")      # coil killed it at the deadline
        return ("lost", "")
    return ("exit", "0")


# coil has no switch for these: a run() that asks for one is skipped
UNSUPPORTED = {
    "--skip": "coil has no option to switch one sandbox mechanism off "
              "(sandbox_conf.skip is set by no option of main.c)",
    "--no-gate": "coil has no option to turn the strict checkpoint gate "
                 "off (sandbox_conf.ckpt_gate is always true in main.c)",
}
RENAMED = {"--require": "--sandbox-require"}

# Without the audit hook, so that only the kernel answers.  A cell cannot
# remove an audit hook, but it can make src/audit.py's a no-op, as its
# docstring says user code can: the hook looks its handlers up in a dict
# (`get = handlers.get`), found here in the frame of the hook that refuses
# to read /etc/shadow, and emptied.
AUDIT_OFF = r"""
def _off():
    try:
        open("/etc/shadow", "rb").close()
    except PermissionError as e:
        tb = e.__traceback__
        while tb is not None:
            f = tb.tb_frame
            if f.f_code.co_name == "hook" and "get" in f.f_locals:
                f.f_locals["get"].__self__.clear()
                break
            tb = tb.tb_next
        else:
            raise RuntimeError("sbx: no audit hook in %r" % e)
    else:
        raise RuntimeError("sbx: /etc/shadow is readable: no hook to test")
    try:
        open("/etc/shadow", "rb").close()
    except PermissionError as e:
        if type(e) is not PermissionError:
            raise RuntimeError("sbx: the audit hook still answers: %r" % e)
_off()
del _off
"""


def _reader(f, sink):
    for line in iter(f.readline, b""):
        sink.put(line)
    sink.put(None)


def run(profile, cells, workdir, args=(), need=(), timeout=120,
        fsize=256 << 20, outer_pids=768, outer_memory=3 << 30, wrap=(),
        env=None, prelude=True, kill_after=None, audit=True):
    """Run cells in one `coil --agent` session in its own outer cgroup.
    A cell is a source string (an exec request) or a dict (any other
    request, e.g. {"op": "snapshot"}); cells run in order in the same
    session, after the prelude that defines t() and k().  need: sandbox
    mechanisms (ping's report) that must be on, or the run is skipped.
    Returns a Result; leftovers are killed after being noted.
    kill_after: SIGKILL coil after so many seconds, as a crash would.
    audit=False: the audit hook is made a no-op first, so that only the
    kernel answers."""
    cmd = [COIL, "--agent", "--sandbox", profile, "--workdir", workdir]
    it = iter(args)
    for a in it:
        if a in UNSUPPORTED:
            return Result(profile, None, "", "", [], 0.0,
                          skip_reason=UNSUPPORTED[a])
        cmd.append(RENAMED.get(a, a))
    cmd = list(wrap) + cmd
    outer = Outer(outer_pids, outer_memory)
    env = dict(os.environ if env is None else env)
    # coil's private temp dir goes under this one, so that it goes even
    # when coil is killed
    env["TMPDIR"] = tmpdir("sbx-tmp-")
    cell_timeout = max(1, timeout // 2)

    def pre():
        outer.join()
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1 << 20), hard))
        os.setsid()
    t0 = time.time()
    deadline = t0 + timeout
    kill_at = t0 + kill_after if kill_after is not None else None
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=pre, env=env)
    lines, errq = queue.Queue(), queue.Queue()
    for f, q in ((p.stdout, lines), (p.stderr, errq)):
        threading.Thread(target=_reader, args=(f, q), daemon=True).start()
    notes = []
    state = {"eof": False, "killed": False, "n": 0}

    def kill():
        if not state["killed"]:
            state["killed"] = True
            p.kill()

    def overdue():
        """Kill coil at kill_after or at the deadline; True past the
        deadline."""
        now = time.time()
        if kill_at is not None and now >= kill_at:
            kill()
        if now >= deadline:
            notes.append("sbx-test: TIMEOUT")
            outer.kill_all()
            kill()
            return True
        return False

    def ask(req):
        """Send one request, return its response (None if coil is gone)."""
        state["n"] += 1
        req = dict(req, id=state["n"])
        try:
            p.stdin.write((json.dumps(req) + "\n").encode())
            p.stdin.flush()
        except OSError:
            return None
        while not state["eof"]:
            if overdue():
                return None
            lim = min(deadline, kill_at or deadline) - time.time()
            try:
                line = lines.get(timeout=max(0.01, min(lim, 0.5)))
            except queue.Empty:
                continue
            if line is None:
                state["eof"] = True
                break
            try:
                resp = json.loads(line)
            except ValueError:
                notes.append("sbx-test: not JSON: %r" % line[:200])
                continue
            if resp.get("id") == req["id"]:
                return resp
            notes.append("sbx-test: unexpected: %s" % line[:200].decode(
                errors="replace").rstrip())
        return None

    def execute(code):
        return ask({"code": code, "timeout": cell_timeout})

    responses, report, skip_reason = [], None, None
    # the report: ping has it once the first worker is up
    while True:
        r = ask({"op": "ping"})
        if r is None:
            break
        if "mechanisms" in (r.get("sandbox") or {}):
            report = r["sandbox"]
            break
        time.sleep(0.02)
    for n in need:
        if report is not None and \
                report["mechanisms"].get(n, {}).get("state") != "on":
            skip_reason = ("'%s' is not in force: the test's containment "
                           "is not proven" % n)
    setup = []
    if prelude:
        setup.append(PRELUDE)
    if not audit:
        setup.append(AUDIT_OFF)
    def set_up():
        """Run the set-up cells; the cell they leave the namespace at, or
        None when one failed (noted: the test then fails)."""
        r = None
        for c in setup:
            r = execute(c)
            if r is None or r.get("status") != "ok":
                notes.append("sbx-test: a set-up cell failed: %s" % (r,))
                return None
        return r["cell"] if r is not None else 0

    base = set_up() if report is not None and skip_reason is None else None
    if base is not None:
        for c in cells:
            resp = ask(c) if isinstance(c, dict) else execute(c)
            responses.append(resp)
            if resp is None:
                break
            # back to a fresh interpreter, or to before the set-up: again
            back = resp.get("restored")
            if (isinstance(back, dict) and (back.get("cell") is None or
                                            back["cell"] < base)) or \
                    (isinstance(c, dict) and c.get("op") == "reset"):
                base = set_up()
                if base is None:
                    break
    responses += [None] * (len(cells) - len(responses))
    answered = report is not None and (skip_reason is not None or all(
        r is not None for r in responses))
    # end of input: coil finishes and exits 0
    try:
        p.stdin.close()
    except OSError:
        pass
    while p.poll() is None:
        overdue()
        time.sleep(0.02)
    while not state["eof"]:
        line = lines.get()
        if line is None:
            break
        notes.append("sbx-test: unexpected: %s" % line[:200].decode(
            errors="replace").rstrip())
    err = []
    while True:
        line = errq.get()
        if line is None:
            break
        err.append(line.decode(errors="replace"))
    elapsed = time.time() - t0
    # the kernel takes a moment to tear a PID namespace down
    for _ in range(50):
        if not outer.procs():
            break
        time.sleep(0.02)
    left = [(q, outer.cmdline(q)) for q in outer.procs()]
    outer.remove()
    out = "".join((r.get("output") or "") for r in responses
                  if r is not None)
    ok = answered and p.returncode == 0 and not state["killed"]
    return Result(profile, p.returncode, out, "".join(err) + "".join(
        n + "\n" for n in notes), left, elapsed, responses, report, ok,
        skip_reason)


class TAP:
    def __init__(self, name):
        self.name = name
        self.n = 0
        self.failed = 0
        self.skips = []
        print("# %s" % name)

    def ok(self, cond, desc, res=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc))
        if not cond:
            self.failed += 1
            if res is not None:
                res.dump()
        return cond

    def skip(self, desc, reason):
        self.n += 1
        self.skips.append(reason)
        print("ok %d - %s # SKIP %s" % (self.n, desc, reason))

    def done(self):
        print("1..%d" % self.n)
        if self.failed:
            sys.exit(1)
        if self.skips and self.n == len(self.skips):
            sys.exit(77)
        sys.exit(0)

    # -- common checks ----------------------------------------------------
    def session(self, r, expect_ok=True):
        """The supervisor survived, the session still runs cells, and
        nothing is left running."""
        p = r.profile
        self.ok(r.supervisor_ok, "%s: the supervisor is unharmed" % p, r)
        if expect_ok:
            self.ok(r.session_ok(), "%s: the session is usable afterwards" % p,
                    r)
        if p in SANDBOXED:
            self.ok(not r.leftovers, "%s: nothing is left running%s" % (
                p, "" if not r.leftovers else ": %s" % r.leftovers), r)

    def denied(self, r, name, words=True, kernel=False):
        v, text = r.get(name)
        p = r.profile
        good = v == "DENIED"
        if good and words:
            good = ("off in the %s sandbox" % p) in text
        if good and kernel:
            good = "kernel:" in text
        return self.ok(good, "%s: %s is denied%s (%s)" % (
            p, name, " with words" if words else "", text[:160] or v), r)

    def allowed(self, r, name, why="none lets it through"):
        v, text = r.get(name)
        return self.ok(v == "ALLOWED", "%s: %s is allowed: %s (%s)" % (
            r.profile, name, why, text[:100] or v), r)


def need_root(tap):
    if os.geteuid() != 0:
        tap.skip("all", "these tests create cgroups and namespaces: run "
                 "them as root")
        tap.done()


def need_coil(tap):
    if not os.access(COIL, os.X_OK):
        tap.skip("all", "%s is not built: set COIL to the binary" % COIL)
        tap.done()


def begin(name):
    tap = TAP(name)
    need_coil(tap)
    need_root(tap)
    return tap


def pid_ns():
    return os.readlink("/proc/self/ns/pid")
