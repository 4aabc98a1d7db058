"""sbxlib - the sandbox tests' runner: cells in a real `coil --agent
--sandbox PROFILE` session, contained by the harness, and the checks on
what came out.  TAP is tests/lib/coiltest.py's; the client is its Coil.

Containment (nothing a test does may reach the host, even under none or
with a sandbox layer missing): every coil runs under contain.py, in a
mount namespace where /etc, /usr/local, /usr/lib, /root and $HOME are
overlays on a tmpfs, and in a PID namespace whose PID 1 reports what is
left when coil exits and then takes it down.  run() checks, after coil's
first answer and before any cell, that contain.py's probe files did not
reach the host and that coil's PID namespace is not the harness's; else
the run is skipped, saying why.  Bombs also run in a cgroup of the
harness's own (Cgroup: v1 or v2, limits read back, membership checked in
/proc/PID/cgroup) and are skipped unless it is proven.
"""
import atexit
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import coiltest  # noqa: E402

COIL = coiltest.COIL
# coil built with the test hooks (COIL_TEST_SKIP, COIL_TEST_NO_GATE)
HOOKED = os.environ.get("COIL_HOOKED") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(COIL))), "tests",
    "coil-hooked")
CONTAIN = os.path.join(HERE, "contain.py")
PROFILES = ("none", "standard", "strict")
SANDBOXED = ("standard", "strict")
HOME = os.path.realpath(os.path.expanduser("~"))
# what contain.py overlays: a failed layer writes into the harness's tmpfs
OVERLAID = tuple(dict.fromkeys(
    d for d in ("/etc", "/usr/local", "/usr/lib", "/root", HOME)
    if os.path.isdir(d)))

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


def tmpdir(prefix, parent=None):
    """A temporary dir of the test's, removed when it exits; by default
    under $TEST_WORKDIR (make check gives each test one) or /tmp."""
    parent = parent or os.environ.get("TEST_WORKDIR") or "/tmp"
    d = os.path.realpath(tempfile.mkdtemp(prefix=prefix, dir=parent))
    os.chmod(d, 0o755)
    _made.append(d)
    return d


@atexit.register
def _cleanup():
    for d in reversed(_made):
        shutil.rmtree(d, ignore_errors=True)


def decoy(path, text="x", mode=0o600, parent=None):
    """A decoy file of the test's standing for path (e.g. /etc/passwd):
    the same base name in a temp dir of its own."""
    d = tmpdir("sbx-decoy-", parent)
    f = os.path.join(d, os.path.basename(path))
    with open(f, "w") as fh:
        fh.write(text)
    os.chmod(f, mode)
    return f


class Cgroup:
    """A cgroup of the harness's own with pids and memory limits, on
    cgroup v1 (a hierarchy per controller) or v2 (one hierarchy: the
    controllers are enabled in the parent's cgroup.subtree_control).
    mountinfo, cgroup_file (this process's /proc/self/cgroup) and proc
    are parameters so that the logic can be checked on a fake tree.
    proven is true only once every limit was read back and a process
    moved in shows the cgroup in /proc/PID/cgroup (prove()); why says
    what failed."""

    def __init__(self, pids=None, memory=None,
                 mountinfo="/proc/self/mountinfo",
                 cgroup_file="/proc/self/cgroup", proc="/proc", name=None):
        self.want = {c: v for c, v in (("pids", pids), ("memory", memory))
                     if v is not None}
        self.name = name or "sbxtest.%d.%s" % (os.getpid(),
                                              uuid.uuid4().hex[:8])
        self.proc = proc
        self.dirs = {}          # controller -> cgroup dir
        self.paths = {}         # controller -> (version, path in hierarchy)
        self.proven = False
        self.why = None
        self.v1, self.v2 = {}, None
        with open(mountinfo) as f:
            for line in f:
                pre, _, post = line.partition(" - ")
                mnt, opts = pre.split()[4], post.split()
                if opts[0] == "cgroup":
                    for c in opts[2].split(","):
                        self.v1[c] = mnt
                elif opts[0] == "cgroup2":
                    self.v2 = mnt
        self.own_v1, self.own_v2 = {}, None
        with open(cgroup_file) as f:
            for line in f:
                hid, ctrls, path = line.rstrip("\n").split(":", 2)
                if hid == "0" and ctrls == "":
                    self.own_v2 = path
                for c in ctrls.split(","):
                    self.own_v1[c] = path

    @staticmethod
    def _write(path, text):
        with open(path, "w") as f:
            f.write(text)

    @staticmethod
    def _read(path):
        with open(path) as f:
            return f.read().strip()

    def _fail(self, why):
        self.why = why
        return False

    def create(self):
        """Make the cgroup and set the limits; False (why) if a limit
        cannot be set or does not read back."""
        for ctrl, limit in self.want.items():
            try:
                if ctrl in self.v1 and ctrl in self.own_v1:
                    rel = self.own_v1[ctrl].rstrip("/") + "/" + self.name
                    d = self.v1[ctrl] + rel
                    os.mkdir(d)
                    files = {"pids": ["pids.max"],
                             "memory": ["memory.limit_in_bytes",
                                        "memory.memsw.limit_in_bytes"]}[ctrl]
                    self.paths[ctrl] = (1, rel)
                elif self.v2 is not None and self.own_v2 is not None:
                    parent = self.v2 + self.own_v2.rstrip("/")
                    have = self._read(os.path.join(
                        parent, "cgroup.controllers")).split()
                    if ctrl not in have:
                        return self._fail("cgroup v2 at '%s' offers no %s "
                                          "controller" % (parent, ctrl))
                    sub = os.path.join(parent, "cgroup.subtree_control")
                    if ctrl not in self._read(sub).split():
                        self._write(sub, "+" + ctrl)
                        if ctrl not in self._read(sub).split():
                            return self._fail("'+%s' did not take in '%s'"
                                              % (ctrl, sub))
                    rel = self.own_v2.rstrip("/") + "/" + self.name
                    d = self.v2 + rel
                    os.makedirs(d, exist_ok=True)
                    files = {"pids": ["pids.max"],
                             "memory": ["memory.max"]}[ctrl]
                    self.paths[ctrl] = (2, rel)
                else:
                    return self._fail("no cgroup hierarchy with the %s "
                                      "controller" % ctrl)
                self.dirs[ctrl] = d
                for i, fn in enumerate(files):
                    p = os.path.join(d, fn)
                    if i > 0 and not os.path.exists(p):
                        continue        # memsw: only with swap accounting
                    self._write(p, str(limit))
                    got = self._read(p)
                    if not got.isdigit() or int(got) != limit:
                        return self._fail("'%s' reads back %r, not %d"
                                          % (p, got, limit))
            except OSError as e:
                return self._fail("%s cgroup: %s" % (ctrl, e))
        return True

    def join(self, pid):
        for d in dict.fromkeys(self.dirs.values()):
            self._write(os.path.join(d, "cgroup.procs"), str(pid))

    def member(self, pid):
        """Whether /proc/PID/cgroup puts pid in this cgroup for every
        controller."""
        try:
            with open(os.path.join(self.proc, str(pid), "cgroup")) as f:
                lines = [l.rstrip("\n").split(":", 2) for l in f]
        except OSError:
            return False
        for ctrl, (ver, rel) in self.paths.items():
            if not any(path == rel and (
                    (ver == 2 and hid == "0" and ctrls == "") or
                    (ver == 1 and ctrl in ctrls.split(",")))
                    for hid, ctrls, path in lines):
                return False
        return bool(self.paths)

    def prove(self):
        """create(), then move a process in and see it there."""
        if not self.create():
            return False
        p = subprocess.Popen(["/bin/sleep", "30"])
        try:
            self.join(p.pid)
            ok = self.member(p.pid)
        except OSError as e:
            ok = False
            self.why = "joining: %s" % e
        finally:
            p.kill()
            p.wait()
        if not ok:
            return self._fail(self.why or "a process moved in does not "
                              "show the cgroup in /proc/PID/cgroup")
        self.proven = True
        return True

    def procs(self):
        out = set()
        for d in self.dirs.values():
            try:
                out |= {int(x) for x in self._read(
                    os.path.join(d, "cgroup.procs")).split()}
            except OSError:
                pass
        return sorted(out)

    def remove(self):
        for _ in range(200):
            ps = self.procs()
            if not ps:
                break
            for p in ps:
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)
        for d in dict.fromkeys(self.dirs.values()):
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



# Without the audit hook, so that only the kernel answers.  A cell cannot
# remove an audit hook, but it can make src/worker/audit.py's a no-op, as its
# docstring says user code can: the hook looks its handlers up in a dict
# (`get = handlers.get`), found here in the frame of the hook that refuses
# something (reading /etc/shadow, or, where Landlock is off and the hook
# leaves reads to the kernel, a connection), and emptied.
AUDIT_OFF = r"""
def _off():
    import socket
    def shadow():
        open("/etc/shadow", "rb").close()
    def net():
        socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    def hook_frame(e):
        tb = e.__traceback__
        while tb is not None:
            f = tb.tb_frame
            if f.f_code.co_name == "hook" and "get" in f.f_locals:
                return f
            tb = tb.tb_next
        return None
    found = None
    for trigger in (shadow, net):
        try:
            trigger()
        except PermissionError as e:
            found = found or hook_frame(e)
        except OSError:
            pass
    if found is None:
        raise RuntimeError("sbx: no audit hook answered")
    found.f_locals["get"].__self__.clear()
    for trigger in (shadow, net):
        try:
            trigger()
        except PermissionError as e:
            if hook_frame(e) is not None:
                raise RuntimeError("sbx: the audit hook still answers: %r" % e)
        except OSError:
            pass
_off()
del _off
"""


def _ns(pid):
    try:
        return os.readlink("/proc/%d/ns/pid" % pid) if pid else None
    except OSError:
        return None


def _coil_pid(wrapper):
    """coil's pid (outside its namespace): contain.py -> PID 1 -> coil."""
    table = coiltest.procs()
    pid1 = [p.pid for p in table.values() if p.ppid == wrapper]
    kids = [p.pid for p in table.values() if pid1 and p.ppid == pid1[0]]
    return kids[0] if kids else None


def run(profile, cells, workdir, args=(), need=(), timeout=120,
        fsize=256 << 20, cgroup=None, env=None, prelude=True,
        kill_after=None, audit=True, coil=None, plant=None,
        kill_when=None):
    """Run cells in one `coil --agent --sandbox PROFILE` session, under
    contain.py.  A cell is a source string (an exec request) or a dict
    (any other request, e.g. {"op": "snapshot"}); cells run in order in
    the same session, after the prelude that defines t() and k().
    need: sandbox mechanisms (ping's report) that must be on, or the run
    is skipped.  cgroup=(pids, memory): run in a proven cgroup of the
    harness's, else skip.  kill_after: SIGKILL coil (only coil) so many
    seconds after its first cell past the set-up was sent, as a crash
    would, or as soon as kill_when() is true then (the set-up's time,
    which load stretches, never counts).  audit=False: the audit hook is made a
    no-op first, so that only the kernel answers.  coil: the binary
    (default COIL).  plant: {path: text} written inside the overlays.
    Returns a Result; leftovers are what contain.py's PID 1 found."""
    cg = None
    if cgroup is not None:
        cg = Cgroup(*cgroup)
        if not cg.prove():
            cg.remove()
            return Result(profile, None, "", "", [], 0.0, skip_reason=(
                "the harness's own cgroup is not proven: %s" % cg.why))
    probe = uuid.uuid4().hex
    env = dict(os.environ if env is None else env)
    if cg is not None and "ASAN_OPTIONS" in env:
        # A bomb fills the harness's pids.max, and LeakSanitizer's check
        # at exit, which needs a thread of its own, then fails (exit 1).
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    # coil's private temp dir goes under this one, so that it goes even
    # when coil is killed
    env["TMPDIR"] = tmpdir("sbx-tmp-")
    env.update(SBX_COMMAND=coil or COIL, SBX_SCRATCH=tmpdir("sbx-scr-"),
               SBX_PROBE=probe, SBX_OVERLAY=":".join(OVERLAID),
               SBX_PLANT=json.dumps(plant or {}),
               # the test's dirs, and their parents: one mount for all
               SBX_PASS=":".join(set(_made) | {workdir} | {
                   os.path.dirname(d) for d in _made + [workdir]}))
    cell_timeout = max(1, timeout // 2)

    def pre():
        if cg is not None:
            cg.join(os.getpid())
            if not cg.member(os.getpid()):
                raise RuntimeError("not in the harness's cgroup")
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 1 << 20), hard))
        os.setsid()
    t0 = time.time()
    deadline = t0 + timeout
    kill_at = None          # set when the cells past the set-up start
    c = coiltest.Coil("--sandbox", profile, "--workdir", workdir, *args,
                      env=env, preexec_fn=pre, argv0=CONTAIN)
    notes = []
    state = {"eof": False, "killed": False}

    def kill_coil():
        state["killed"] = True
        pid = _coil_pid(c.pid)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass

    def ask(req):
        """Send one request, return its response (None if coil is gone)."""
        if state["eof"]:
            return None
        try:
            rid = c.send(dict(req))
        except OSError:
            return None
        while True:
            now = time.time()
            if kill_at is not None and not state["killed"] and \
                    (now >= kill_at or (kill_when is not None and
                                        kill_when())):
                kill_coil()
            if now >= deadline:
                notes.append("sbx-test: TIMEOUT")
                state["killed"] = True
                c.kill()
                state["eof"] = True
                return None
            try:
                msg = c.line(timeout=max(0.05, min(deadline - now, 0.5)))
            except TimeoutError:
                continue
            except EOFError:
                state["eof"] = True
                return None
            except ValueError as e:
                notes.append("sbx-test: not JSON: %s" % e)
                continue
            if msg.get("id") == rid and "event" not in msg:
                return msg
            notes.append("sbx-test: unexpected: %s" % json.dumps(msg)[:200])

    def execute(code):
        return ask({"code": code, "timeout": cell_timeout})

    responses, report, skip_reason, breach = [], None, None, []
    # the report: ping has it once the first worker is up
    while True:
        r = ask({"op": "ping"})
        if r is None:
            break
        if "mechanisms" in (r.get("sandbox") or {}) or profile == "none":
            report = r.get("sandbox") if profile != "none" else {
                "mechanisms": {}, "rules": []}
            break
        time.sleep(0.02)
    # containment: before any cell
    for t in OVERLAID:
        p = os.path.join(t, ".sbx-probe-" + probe)
        if os.path.exists(p):
            breach.append(p)
            os.remove(p)
    pid = _coil_pid(c.pid)
    # no cell runs then; a breach, or a coil that does not answer, fails
    # the test (no RESULT, the supervisor not ok, tap.session)
    refuse = report is None or breach
    if breach:
        notes.append("sbx-test: the harness's overlay leaked to the host: "
                     "%s" % breach)
    elif not refuse and _ns(pid) in (None, pid_ns()):
        skip_reason = "coil is not in a PID namespace of the harness's"
    for n in need:
        if skip_reason is None and not refuse and \
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
        for s in setup:
            r = execute(s)
            if r is None or r.get("status") != "ok":
                notes.append("sbx-test: a set-up cell failed: %s" % (r,))
                return None
        return r["cell"] if r is not None else 0

    base = set_up() if skip_reason is None and not refuse else None
    if base is not None and kill_after is not None:
        kill_at = time.time() + kill_after
    if base is not None:
        for cell in cells:
            resp = ask(cell) if isinstance(cell, dict) else execute(cell)
            responses.append(resp)
            if resp is None:
                break
            # back to a fresh interpreter, or to before the set-up: again
            back = resp.get("restored")
            if (isinstance(back, dict) and (back.get("cell") is None or
                                            back["cell"] < base)) or \
                    (isinstance(cell, dict) and cell.get("op") == "reset"):
                base = set_up()
                if base is None:
                    break
    responses += [None] * (len(cells) - len(responses))
    answered = report is not None and (skip_reason is not None or all(
        r is not None for r in responses))
    # end of input: coil finishes and exits 0
    try:
        c.proc.stdin.close()
    except OSError:
        pass
    while not state["eof"]:
        left = deadline + 10 - time.time()
        if left <= 0:
            notes.append("sbx-test: TIMEOUT at the end")
            state["killed"] = True
            c.kill()
            break
        try:
            msg = c.line(timeout=left)
        except (EOFError, TimeoutError):
            break
        except ValueError:
            continue
        notes.append("sbx-test: unexpected: %s" % json.dumps(msg)[:200])
    rc = c.close(timeout=max(1, deadline + 10 - time.time()))
    err = c.stderr_text()
    elapsed = time.time() - t0
    left = []
    for line in err.splitlines():
        m = re.match(r"contain: left (\d+) (.*)", line)
        if m:
            left.append((int(m.group(1)), m.group(2)))
    if cg is not None:
        left += [(q, coiltest.cmdline(q)) for q in cg.procs()]
        cg.remove()
    if rc == 97 and report is None and "contain:" in err:
        skip_reason = "the harness could not contain coil: %s" % "; ".join(
            l for l in err.splitlines() if l.startswith("contain:"))
    out = "".join((r.get("output") or "") for r in responses
                  if r is not None)
    ok = answered and rc == 0 and not state["killed"]
    res = Result(profile, rc, out, err + "".join(n + "\n" for n in notes),
                 left, elapsed, responses, report, ok, skip_reason)
    res.breach = breach
    return res


class TAP(coiltest.TAP):
    """coiltest's TAP, plus the sandbox tests' common checks.  prefix
    (e.g. the table row's name) goes before every description."""
    prefix = ""

    def ok(self, cond, desc, res=None):
        good = self.check(cond, self.prefix + desc)
        if not good and res is not None:
            res.dump()
        return good

    def session(self, r, expect_ok=True):
        """The supervisor survived, the session still runs cells, nothing
        is left running, and the harness held."""
        p = r.profile
        self.ok(not getattr(r, "breach", None), "%s: the harness's "
                "containment held" % p, r)
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
            p, name, " with words" if words else " by the kernel" if kernel
            else "", text[:160] or v), r)

    def allowed(self, r, name, why="none lets it through"):
        v, text = r.get(name)
        return self.ok(v == "ALLOWED", "%s: %s is allowed: %s (%s)" % (
            r.profile, name, why, text[:100] or v), r)


    def skip(self, what, why):
        coiltest.TAP.skip(self, self.prefix + what, why)


def begin(name):
    tap = TAP(name)
    if not os.access(COIL, os.X_OK):
        tap.skip_all("%s is not built: set COIL to the binary" % COIL)
    if os.geteuid() != 0:
        tap.skip_all("the harness needs root: mount and PID namespaces, "
                     "overlays, cgroups")
    return tap


def pid_ns():
    return os.readlink("/proc/self/ns/pid")
