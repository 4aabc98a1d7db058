#!/usr/bin/python3
"""strict: the checkpoint gate's one fork is the checkpoint's.

Under --sandbox strict every fork of the worker waits for the
supervisor, which lets one through per checkpoint it ordered.  A cell's
os.register_at_fork hooks used to run inside that window (PyOS_BeforeFork)
and could take the pass for a process of their own.  Here a cell registers
before, after_in_parent and after_in_child hooks that each try to fork
(libc's fork through ctypes, then os.posix_spawn) and have any child write
a marker in the work dir.  Checked: snapshots and automatic checkpoints
are taken and run none of the hooks in the worker, no marker ever appears,
rollback resumes the snapshot (the copy runs its after_in_child hooks
only then, when the gate refuses every fork), and ping's report is clean.

Then the pass is taken on purpose by what the worker still runs while it
waits (a cell's Python signal handler, which blocks until the order is on
the worker's socket and then forks): the snapshot fails, the answer says
the gate was spent by the cell's code, ping's sandbox report says so, the
stray process is killed, and the next snapshot works.

Last, the pass is sought through what the worker does before the fork
itself: a cell's object with a forking __del__ put in _coil._ckpt (which
the worker used to overwrite before the fork) and a key in sys.modules
with random's hash and a forking __eq__ (which its lookup of "random"
used to compare).  Both snapshots are taken, nothing gets out, and ping's
report is clean.
"""
import errno
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, cleanup, descendants, done,  # noqa: E402
                      skip_all, wait_for, workdir, workers)

HOOKS = r'''
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_fired, _forks = [], []
def _try(where):
    _fired.append(where)
    pid = _libc.fork()
    if pid == 0:
        open("escaped-%s-%d" % (where, os.getpid()), "w").close()
        os._exit(0)
    _forks.append((where, pid, ctypes.get_errno()))
    try:
        os.posix_spawn("/bin/true", ["true"], {})
        _forks.append((where, "spawned"))
    except OSError as e:
        _forks.append((where, type(e).__name__))
os.register_at_fork(before=lambda: _try("before"),
                    after_in_parent=lambda: _try("parent"),
                    after_in_child=lambda: _try("child"))
x = 1
'''

THIEF = r'''
import ctypes, os, select, signal, threading, time
_libc = ctypes.CDLL(None, use_errno=True)
_hold = threading.Event()
threading.Thread(target=_hold.wait, daemon=True).start()
_stolen = []
def _socks():
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                out.append(int(fd))
        except OSError:
            pass
    return out
def _thief(sig, frame):
    if _stolen:
        return
    _stolen.append(None)
    open("waiting", "w").close()
    select.select(_socks(), [], [], 30)     # the order is on its way
    pid = _libc.fork()
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    _stolen[0] = pid
signal.signal(signal.SIGALRM, _thief)
signal.setitimer(signal.ITIMER_REAL, 0.05)
'''


def markers(d, prefix):
    return sorted(f for f in os.listdir(d) if f.startswith(prefix))


def gate(c):
    r = c.call({"op": "ping"})
    return ((r.get("sandbox") or {}).get("mechanisms") or {}).get(
        "checkpoint gate") or {}


d = workdir()
with Coil("--sandbox", "strict", "--workdir", d, "--no-record",
          "--checkpoint-policy", "every") as c:
    c.run("1")
    g = gate(c)
    if g.get("state") != "on":
        c.close()
        cleanup(d)
        skip_all("strict has no checkpoint gate here (ping's sandbox "
                 "report: %s)" % (g,))
    r = c.run(HOOKS)
    check(r.get("status") == "ok", "a cell registers at-fork hooks", r)
    r = c.call({"op": "snapshot", "name": "s"})
    check(r.get("status") == "ok", "the snapshot is taken", r)
    c.run("x = 2")
    r = c.run("(_fired, _forks)")
    check(r.get("result") == "([], [])", "no at-fork hook ran in the "
          "worker for the snapshot or the automatic checkpoints", r)
    r = c.call({"op": "snapshots"})
    check("s" in [k.get("name") for k in r.get("checkpoints", [])],
          "snapshots lists it", r)
    r = c.call({"op": "rollback", "to": "s"})
    check(r.get("status") == "ok" and r.get("cell") == 2,
          "rollback resumes it", r)
    r = c.run("x, _fired, [f[:3] for f in _forks]")
    res = r.get("result") or ""
    check(res.startswith("(1, "), "the namespace is the snapshot's", r)
    # resumed as the worker it is a forked child: its after_in_child
    # hook runs, and its fork is refused (no checkpoint is owed)
    check("'child'" in res and "'before'" not in res and
          "'parent'" not in res and "'spawned'" not in res,
          "only after_in_child ran, at the resume, and it started nothing",
          r)
    check(markers(d, "escaped-") == [], "no hook's fork got a process "
          "out", markers(d, "escaped-"))
    g = gate(c)
    check(g.get("state") == "on" and "spent_by_cells" not in g,
          "ping: the gate is on, never spent by a cell", g)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

d2 = workdir()
# --checkpoints 0: no automatic checkpoint of the state is there already,
# so the snapshot orders a fork of its own
with Coil("--sandbox", "strict", "--workdir", d2, "--no-record",
          "--checkpoints", "0") as c:
    r = c.run(THIEF)
    check(r.get("status") == "ok", "a cell sets a handler to steal the "
          "pass", r)
    wait_for(lambda: os.path.exists(os.path.join(d2, "waiting")), 30)
    check(os.path.exists(os.path.join(d2, "waiting")), "the handler waits "
          "in the worker's idle time")
    r = c.call({"op": "snapshot", "name": "t"})
    warns = " ".join(r.get("warnings") or [])
    check(r.get("status") == "error", "the snapshot is not taken", r)
    check("checkpoint gate was spent by a fork of the cell's code" in
          warns, "the answer says the gate was spent by the cell's code", r)
    check(wait_for(lambda: len(workers(c.pid)) == 1, 30),
          "the stray is killed: one worker process is left",
          descendants(c.pid))
    g = gate(c)
    check(g.get("spent_by_cells") == 1 and "cell 1" in g.get("last", ""),
          "ping's sandbox report says the gate was spent, and where", g)
    r = c.run("_stolen[0] > 0")
    check(r.get("result") == "True", "the session goes on, and the "
          "handler's fork had got through (control)", r)
    r = c.call({"op": "snapshot", "name": "u"})
    check(r.get("status") == "ok", "the next snapshot is taken", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

# Nor may code of a cell's run from what worker-fork.c does before the
# fork: a value it replaced in _coil._ckpt (a cell's object there, whose
# __del__ forks) or a key it looked up (a cell's key in sys.modules with
# random's hash, whose __eq__ forks).  Either would take the pass for a
# process of its own; now the __del__ runs after the fork, when the gate
# refuses it, and the __eq__ never runs.
FORKER = r'''
import ctypes, os, sys
_libc = ctypes.CDLL(None, use_errno=True)
_tries = []
def _fork(where):
    pid = _libc.fork()
    if pid == 0:
        open("escaped-%s-%d" % (where, os.getpid()), "w").close()
        os._exit(0)
    _tries.append((where, pid, ctypes.get_errno()))
class Dying:
    def __del__(self):
        _fork("del")
class Key(str):
    def __hash__(self):
        return hash("random")
    def __eq__(self, other):
        _fork("eq")
        return False
'''

d3 = workdir()
with Coil("--sandbox", "strict", "--workdir", d3, "--no-record",
          "--checkpoints", "0") as c:
    r = c.run(FORKER)
    check(r.get("status") == "ok", "a cell defines a forking __del__ and "
          "__eq__", r)
    r = c.run("sys.modules['_coil']._ckpt['threads'] = Dying()")
    check(r.get("status") == "ok", "a cell plants its object in "
          "_coil._ckpt", r)
    r = c.call({"op": "snapshot", "name": "del"})
    check(r.get("status") == "ok", "the snapshot is taken", r)
    r = c.run("[t[0] for t in _tries], [t[1:] for t in _tries], "
              "sys.modules['_coil']._ckpt['threads']")
    check(r.get("result") == "(['del'], [(-1, %d)], 0)" % errno.EPERM,
          "the __del__ ran after the fork (its own fork was refused), "
          "and _ckpt holds the count", r)
    r = c.run("sys.modules.pop('random', None); "
              "sys.modules[Key('x')] = None")
    check(r.get("status") == "ok", "a cell plants a key with random's hash "
          "in sys.modules", r)
    r = c.call({"op": "snapshot", "name": "eq"})
    check(r.get("status") == "ok", "the snapshot is taken", r)
    r = c.run("for k in [k for k in sys.modules if type(k) is Key]:\n"
              "    del sys.modules[k]\n"
              "[t[0] for t in _tries]")
    check(r.get("result") == "['del']", "the key's __eq__ never ran "
          "for it", r)
    check(markers(d3, "escaped-") == [], "no process of the cell's got "
          "out", markers(d3, "escaped-"))
    g = gate(c)
    check(g.get("state") == "on" and "spent_by_cells" not in g,
          "ping: the gate is on, never spent by a cell", g)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

cleanup(d)
cleanup(d2)
cleanup(d3)
done()
