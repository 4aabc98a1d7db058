"""coiltest - the one Python library of coil's tests and benchmarks.

It holds the four things every test script needs, once:

- COIL, the binary under test: $COIL (make check sets it), else the
  build tree's src/coil.
- Coil, the one client of `coil --agent`: numbered requests, responses
  matched by id, every other line (events) kept in .events; raw_line()
  for the bytes as they come.  unsandboxed() is one without a sandbox,
  check_exit() the check that it exits 0.

      with Coil("--timeout", "5") as c:
          r = c.call({"code": "1+1"})

- TAP output for automake's tap-driver: check() prints "ok N - what" or
  "not ok N - what" with the detail as "# " comments, skip() a skipped
  check with its reason, done() the plan and the exit status, skip_all()
  a plan of none with the reason.  A file that prints no plan, or fewer
  checks than it planned, is an error to the driver; a script that dies
  after its first check reports the exception as a failed check.
- A /proc walker: procs() reads every live process once; descendants(),
  in_dir(), tree() and session_processes() answer from that; proc(),
  dead(), cmdline(), vm_kb() and pss_kb() look at one process.

Scripts run with Debian's /usr/bin/python3 (make check's SYSPYTHON) and
put this directory on sys.path themselves:

    sys.path.insert(0, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "lib"))
"""
import atexit
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import weakref

sys.dont_write_bytecode = True          # no __pycache__ in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
COIL = os.environ.get("COIL") or os.path.join(TOP, "build", "src", "coil")
SYSPYTHON = "/usr/bin/python3"
# A sanitizer build (setup.sh check-asan): its allocator makes memory
# figures mean nothing, so checks of them are skipped there.
ASAN = "ASAN_OPTIONS" in os.environ


# ------------------------------------------------------------------- TAP

def _description(what):
    """One line (TAP is line based), a "#" escaped: unescaped, the rest
    would be read as a directive (SKIP, TODO) or a comment."""
    return " ".join(str(what).split()).replace("#", "\\#")


class TAP:
    """One TAP stream.  The module-level check/skip/done/skip_all use a
    default instance; a script may make its own."""

    def __init__(self, name=None):
        self.n = 0
        self.failed = 0
        self.skipped = 0
        if name:
            print("# %s" % name)

    def check(self, cond, what, detail=None):
        """One check; detail (any object, its str) is printed under a
        failure.  Returns bool(cond)."""
        self.n += 1
        what = _description(what)
        if cond:
            print("ok %d - %s" % (self.n, what))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, what))
            if detail is not None:
                self.diag(detail)
        sys.stdout.flush()
        return bool(cond)

    ok = check

    def skip(self, what, why):
        self.n += 1
        self.skipped += 1
        print("ok %d - %s # SKIP %s" % (self.n, _description(what),
                                         " ".join(str(why).split())))
        sys.stdout.flush()

    def diag(self, text, limit=4000):
        for line in str(text)[:limit].splitlines():
            print("# " + line)
        sys.stdout.flush()

    def done(self):
        """Print the plan and exit: 1 if a check failed, else 0."""
        if self.n == 0:
            self.skip_all("the script ran no check")
        print("1..%d" % self.n)
        sys.stdout.flush()
        sys.exit(1 if self.failed else 0)

    def skip_all(self, why):
        """Nothing can be checked on this machine: say why, and stop.
        Only for a machine that truly lacks something."""
        if self.n:
            # checks already printed: the rest are skipped as one
            self.skip("the rest of this file", why)
            self.done()
        print("1..0 # SKIP %s" % " ".join(str(why).split()))
        sys.stdout.flush()
        sys.exit(0)


_tap = TAP()
check = _tap.check
skip = _tap.skip
diag = _tap.diag
done = _tap.done
skip_all = _tap.skip_all


def tap():
    """The default TAP stream."""
    return _tap


def _excepthook(kind, value, tb):
    """A script that dies after its first check (coil gone, a response
    without the key a check reads) still reports: the checks so far, the
    exception as one more failed check, and the plan.  Before any check
    the default hook runs: no plan is an error to the driver."""
    said = ""
    for c in _sessions:         # often the cause: coil died; say how
        said += "coil (pid %d) exit status %s, its stderr:\n%s\n" % (
            c.pid, c.proc.poll(), c.stderr_text()[-2000:])
    # The exception last: bench/run reports a measurement's last line.
    said += "".join(traceback.format_exception(kind, value, tb))
    if _tap.n == 0 or kind is KeyboardInterrupt:
        sys.stderr.write(said)
        return
    _tap.check(False, "the script runs to its end (stopped by %s)"
               % kind.__name__, said)
    print("1..%d" % _tap.n)
    sys.stdout.flush()


sys.excepthook = _excepthook


# ---------------------------------------------------------------- client

# Agent sessions are recorded by default under $XDG_STATE_HOME (or
# ~/.local/state): a test never writes the real home.  make check gives
# each test its own XDG_STATE_HOME; a script run by hand gets a temp one,
# removed at its end, and so does an environment a test builds itself.
_state_home = None


def state_home():
    """The XDG_STATE_HOME coil runs get: make check's, else a temp dir."""
    global _state_home
    if os.environ.get("XDG_STATE_HOME", "").startswith("/"):
        return os.environ["XDG_STATE_HOME"]
    if _state_home is None:
        _state_home = tempfile.mkdtemp(prefix="coil-state-")
        atexit.register(shutil.rmtree, _state_home, True)
    return _state_home


os.environ["XDG_STATE_HOME"] = state_home()

# The attach socket's key (coil --listen, peer.h) is made in
# $XDG_RUNTIME_DIR/coil: every script gets a temp one of its own (mode
# 0700), removed at its end, never the person's.
_runtime_dir = tempfile.mkdtemp(prefix="coil-run-")
atexit.register(shutil.rmtree, _runtime_dir, True)
os.environ["XDG_RUNTIME_DIR"] = _runtime_dir


_sessions = weakref.WeakSet()   # every Coil still about, for _excepthook


class Coil:
    """A real `coil --agent` with args; stdin and stdout are pipes, stderr
    is kept (read it with .stderr_text() after close).  argv, if given,
    is the whole command instead: another program that speaks the same
    lines (the benchmarks' peers)."""

    def __init__(self, *args, stdin=subprocess.PIPE, env=None, cwd=None,
                 preexec_fn=None, argv0=None, argv=None):
        self.err = tempfile.TemporaryFile()
        if env is not None and "XDG_STATE_HOME" not in env:
            env = dict(env, XDG_STATE_HOME=state_home())
        if env is not None and "XDG_RUNTIME_DIR" not in env:
            env = dict(env, XDG_RUNTIME_DIR=_runtime_dir)
        cmd = argv or [argv0 or COIL, "--agent", *args]
        self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=self.err, env=env, cwd=cwd,
                                     preexec_fn=preexec_fn)
        self.next_id = 0
        self.events = []
        self.buf = b""
        _sessions.add(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def pid(self):
        return self.proc.pid

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, req):
        """Send one request (a dict; an id is added when it has none).
        Returns its id."""
        if "id" not in req:
            self.next_id += 1
            req = dict(req, id=self.next_id)
        self.send_raw(json.dumps(req).encode() + b"\n")
        return req["id"]

    def raw_line(self, timeout=60):
        """The next line coil writes, as bytes without its newline.  An
        unfinished last line comes back as it is; after it, EOFError.
        timeout None waits as long as it takes, without select: the
        benchmarks time this call (and a read of 64 KiB, not more: a
        bigger one costs a fresh mapping of that size each time)."""
        deadline = None if timeout is None else time.time() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            if deadline is not None:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError("no response from coil in %ss"
                                       % timeout)
                r, _, _ = select.select([fd], [], [], left)
                if not r:
                    continue
            chunk = os.read(fd, 65536)
            if not chunk:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                raise EOFError("coil closed its stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def line(self, timeout=60):
        """The next line coil writes, parsed."""
        return json.loads(self.raw_line(timeout).decode("utf-8"))

    def response(self, rid, timeout=60):
        """The response to request rid; other lines go to .events."""
        while True:
            msg = self.line(timeout)
            if msg.get("id") == rid and "event" not in msg:
                return msg
            self.events.append(msg)

    def call(self, req, timeout=60):
        return self.response(self.send(req), timeout)

    def run(self, code, timeout=60, **fields):
        """An exec request for code; its response."""
        return self.call(dict(fields, code=code), timeout)

    def close(self, timeout=30):
        """End of input: coil finishes and exits.  Returns its status."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def stderr_text(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")


def check_exit(c, what="coil exits 0"):
    """A check that c, closed now, exits 0; its stderr if not.  Under the
    sanitizers this is where a leak or an error in coil shows."""
    status = c.close()
    return check(status == 0, what,
                 "exit status %s\n%s" % (status, c.stderr_text()[-4000:]))


# --------------------------------------------------------------- /proc

class Proc:
    __slots__ = ("pid", "comm", "state", "ppid")

    def __init__(self, pid, comm, state, ppid):
        self.pid, self.comm, self.state, self.ppid = pid, comm, state, ppid

    @property
    def zombie(self):
        return self.state == "Z"

    def __repr__(self):
        return "%d(%s,%s)" % (self.pid, self.comm, self.state)


def proc(pid):
    """A Proc for one pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return None
    comm = st[st.index("(") + 1:st.rindex(")")]
    rest = st[st.rindex(")") + 2:].split()
    return Proc(pid, comm, rest[0], int(rest[1]))


def procs():
    """{pid: Proc} of every process now."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            p = proc(int(d))
            if p is not None:
                out[p.pid] = p
    return out


def descendants(pid, table=None):
    """Procs below pid (any depth), zombies included."""
    table = procs() if table is None else table
    kids = {}
    for p in table.values():
        kids.setdefault(p.ppid, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), ()):
            out.append(c)
            todo.append(c.pid)
    return out


def dead(pid):
    """True once pid has exited: gone, or a zombie not yet reaped.  A
    SIGKILL takes effect a moment after kill() returns."""
    p = proc(pid)
    return p is None or p.zombie


def tree(pid):
    """({comm: count} of the live processes below pid, zombie count)."""
    counts, zombies = {}, 0
    for p in descendants(pid):
        if p.zombie:
            zombies += 1
        else:
            counts[p.comm] = counts.get(p.comm, 0) + 1
    return counts, zombies


def in_dir(d):
    """[(pid, comm)] of the live processes whose cwd is d.  A session's
    processes all have its work dir as their cwd, which is how a test
    finds them even after coil is gone."""
    found = []
    for p in procs().values():
        try:
            if os.readlink("/proc/%d/cwd" % p.pid) != d:
                continue
        except OSError:
            continue
        if not p.zombie:
            found.append((p.pid, p.comm))
    return found


def workers(pid):
    """pids of the live workers below pid (checkpoints have names of
    their own)."""
    return [p.pid for p in descendants(pid)
            if p.comm == "coil-worker" and not p.zombie]


def session_processes():
    """pids of processes named like coil's own (init, worker) anywhere."""
    return [p.pid for p in procs().values()
            if p.comm in ("coil-init", "coil-worker") and not p.zombie]


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"


def vm_kb(pid, field):
    """A /proc/PID/status figure in kB (VmHWM, VmRSS, ...), or 0."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def unsandboxed(*args, workdir=None, **kw):
    """A Coil without a sandbox, its session run in workdir if given.

    For the tests that reach into a session from outside: they kill a
    checkpoint by the pid a cell reports, count processes by their
    working directory, starve fork of memory, and the sandbox's PID
    namespace and limits would change what they measure.  The sandbox's
    own tests cover checkpoints under it."""
    if workdir is not None:
        args = ("--workdir", workdir) + args
    return Coil("--sandbox", "none", *args, **kw)


# ---------------------------------------------------------------- misc

def workdir(prefix="coil-test-"):
    """A private directory under $TEST_WORKDIR (make check makes one per
    test), its real path.  Remove it with cleanup()."""
    d = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TEST_WORKDIR"))
    return os.path.realpath(d)


def cleanup(d):
    shutil.rmtree(d, ignore_errors=True)


def hooked():
    """The hooked build's path (tests/coil-hooked: coil with the test
    hooks, COIL_TEST_* in the environment slowing one step down); the
    whole script is skipped when it is not built."""
    path = os.environ.get("COIL_HOOKED")
    if not path or not os.access(path, os.X_OK):
        skip_all("the hooked build (tests/coil-hooked) is not built")
    return path


def wait_for(pred, timeout=10, step=0.05):
    """pred()'s first true value within timeout, else its last value."""
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def check_notebook(path, what):
    """Check that the notebook at path passes nbformat.validate (skipped
    without python3-nbformat)."""
    try:
        import nbformat
    except ImportError:
        skip("nbformat.validate", "python3-nbformat is not installed")
        return
    try:
        nbformat.validate(nbformat.read(path, as_version=4))
        ok, why = True, None
    except Exception as e:          # noqa: BLE001 - its message is the detail
        ok, why = False, e
    check(ok, what, why)
