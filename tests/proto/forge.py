#!/usr/bin/python3
"""A cell that forges control frames spoils its own answer, nothing else.

The worker's control socket is a descriptor of the process that runs the
cells, so a cell can always write to it.  For each frame the worker, a
checkpoint or init could send (and for bytes that are not a frame), a
cell writes one to every socket it holds, found through /proc/self/fd.
The supervisor must answer that cell "crashed" with a ProtocolError
that says the worker broke protocol, put the namespace back at the cell
before (a value the forging cell set is gone, one set before is there),
and answer what follows exactly as a clean session would: ids in order,
no answer shifted.  Under --sandbox strict no fork passes the gate
afterwards.  Run under none, standard and strict.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, done, workdir, cleanup,  # noqa
                      descendants, wait_for)

# Defined in the session's first cell: forge(frame, fds, raw) writes one
# frame (or raw bytes) to every socket of the process.  fds: how many
# descriptors to pass along (a socketpair's end and a pidfd of itself).
HELPER = r'''
import os, socket, stat, struct, json
def forge(frame=None, fds=0, raw=None):
    data = raw if raw is not None else json.dumps(frame).encode()
    n = 0
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        if raw is not None or not fds:
            if raw is None:
                data = struct.pack("II", len(data), 0) + data
            os.write(fd, data)
            n += 1
            continue
        try:
            s = socket.socket(fileno=os.dup(fd))
        except PermissionError:
            # strict: no socket objects; the same frame, without the
            # descriptors, through a plain write
            os.write(fd, struct.pack("II", len(data), 0) + data)
            n += 1
            continue
        a, b = socket.socketpair()
        pass_fds = [a.fileno()]
        if fds > 1:
            pass_fds.append(os.pidfd_open(os.getpid()))
        try:
            head = struct.pack("II", len(data), len(pass_fds))
            socket.send_fds(s, [head + data], pass_fds)
            n += 1
        finally:
            s.close()
            a.close()
            b.close()
    return n
'''

PID = "os.getpid()"
# (what, forge call): every frame the supervisor reads from a worker or
# a checkpoint or init, and bytes that are not one.
FORGERIES = [
    ("hello", 'forge({"t": "hello", "pid": %s, "python": "3"})' % PID),
    ("hello with gate",
     'forge({"t": "hello", "pid": %s, "gate": True}, fds=1)' % PID),
    ("reply", 'forge({"t": "reply", "status": "ok"})'),
    ("reply with a guessed seq",
     'forge({"t": "reply", "status": "ok", "seq": 1})'),
    ("reply with ckpt_next",
     'forge({"t": "reply", "status": "ok", "ckpt_next": True, '
     '"ran": True})'),
    ("ckpt", 'forge({"t": "ckpt", "kind": "auto", "cell": 1, "pid": %s, '
     '"threads": 0, "fork_ms": 0.1}, fds=2)' % PID),
    ("pristine ckpt", 'forge({"t": "ckpt", "kind": "pristine", "cell": 0, '
     '"pid": %s, "threads": 0, "fork_ms": 0.1}, fds=1)' % PID),
    ("ckpt_failed", 'forge({"t": "ckpt_failed", "kind": "auto", "cell": 1, '
     '"error": "forged"})'),
    ("rearm ckpt_failed", 'forge({"t": "ckpt_failed", "kind": "rearm", '
     '"cell": 1, "error": "forged"})'),
    ("gate", 'forge({"t": "gate"}, fds=1)'),
    ("input asked in an agent's cell",
     'forge({"t": "input", "prompt": "? ", "seq": 1})'),
    ("resume", 'forge({"t": "resume", "cell": 0, "rearm": True})'),
    ("init's spawned", 'forge({"t": "spawned", "pid": 1, "errno": 0})'),
    ("init's exit", 'forge({"t": "exit", "pid": %s, "status": 0})' % PID),
    ("init's fatal", 'forge({"t": "fatal", "error": "forged"})'),
    ("a message without a type", 'forge([1, 2, 3])'),
    ("garbage", 'forge(raw=b"\\xff" * 64)'),
    ("a header without descriptors",
     'forge(raw=struct.pack("II", 2, 3) + b"{}")'),
    ("a body that is not JSON", 'forge(raw=struct.pack("II", 3, 0) + b"{{{")'),
]


def session(profile):
    wd = workdir()
    # "every": a forged frame must land the namespace on the cell just
    # before it, one checkpoint per cell.
    c = Coil("--sandbox", profile, "--timeout", "20", "--workdir", wd,
             "--checkpoint-policy", "every")
    try:
        r = c.run(HELPER + "keep = 0")
        if not check(r.get("status") == "ok",
                     "%s: the helper cell runs" % profile, r):
            return
        for i, (what, call) in enumerate(FORGERIES, 1):
            tag = "%s, %s" % (profile, what)
            r = c.run("keep = %d" % i)
            before = r.get("cell")
            # snapshots answers once no checkpoint is owed: the forgery
            # below then meets a worker that owes nothing but its reply.
            # Its unkept says whether the state after `before` was kept:
            # on a loaded machine its checkpoint may have failed (that
            # cell's answer warns), and the newest is older.
            snap = c.call({"op": "snapshots"})
            kept = before not in (snap.get("unkept") or [])
            r = c.run("spoiled = %d\nn = %s\nimport time; time.sleep(0.3)\nn"
                      % (i, call))
            err = r.get("error") or {}
            check(r.get("status") == "crashed" and
                  err.get("type") == "ProtocolError" and
                  "broke protocol" in err.get("message", ""),
                  "%s: the forging cell is answered as a protocol violation"
                  % tag, r)
            back = r.get("restored") or {}
            if kept:
                check(back.get("cell") == before,
                      "%s: the namespace is back at cell %s" % (tag, before),
                      (back, snap))
            else:
                check(back.get("cell") is not None and
                      back["cell"] < before and before in back.get("lost", []),
                      "%s: the namespace is back at the newest checkpoint, "
                      "before cell %s, which had none, and says so"
                      % (tag, before), (back, snap))
            # Several requests at once: each answer to its own id, in order.
            ids = [c.send({"code": "(keep, 'spoiled' in globals())"}),
                   c.send({"op": "vars"}),
                   c.send({"code": "'after %d'" % i})]
            got = [c.line() for _ in ids]
            check([g.get("id") for g in got] == ids,
                  "%s: the next answers come in order" % tag, got)
            check(got[0].get("result") == "(%d, False)" % i if kept else
                  str(got[0].get("result")).endswith(", False)"),
                  "%s: the cell before's value is there, the forger's gone"
                  % tag, got[0])
            check(got[1].get("status") == "ok" and
                  "vars" in got[1] and got[2].get("result") ==
                  "'after %d'" % i,
                  "%s: no answer is shifted" % tag, got[1:])
        # Between cells: a thread of an earlier cell forges a frame while
        # nothing is owed.  That worker goes, the next answer says why,
        # and the namespace is the one the last cell left (its checkpoint
        # arrived before the forgery).
        r = c.run("import threading, time\nkeep = 'threaded'\n"
                  "threading.Thread(target=lambda: (time.sleep(0.5), "
                  "forge(raw=b'\\0' * 8))).start()")
        check(r.get("status") == "ok", "%s: a cell starts a forging thread"
              % profile, r)
        time.sleep(1.5)
        r = c.run("keep")
        warns = " ".join(r.get("warnings") or [])
        check(r.get("result") == "'threaded'" and
              "died between requests" in warns and
              "broke protocol" in warns,
              "%s: a forgery between cells: the next answer says the "
              "worker broke protocol, the last cell's state is kept"
              % profile, r)
        # A header that promises a long body swallows the real reply:
        # nothing says that cell is over, so its deadline ends it, and
        # the namespace is back where it was before it all the same.
        r = c.run("keep = 'long'")
        before = r.get("cell")
        r = c.call({"code": "spoiled = 1\n"
                    "forge(raw=struct.pack('II', 1 << 20, 0))",
                    "timeout": 1})
        check(r.get("status") in ("timeout", "crashed") and
              (r.get("restored") or {}).get("cell") == before,
              "%s, a header promising a long body: the cell is stopped "
              "at its deadline, the namespace back at cell %s"
              % (profile, before), r)
        r = c.run("(keep, 'spoiled' in globals())")
        check(r.get("result") == "('long', False)",
              "%s, a header promising a long body: the session goes on"
              % profile, r)
        if profile == "strict":
            r = c.run("import os\ntry:\n    pid = os.fork()\n"
                      "except OSError as e:\n    r = 'denied'\nelse:\n"
                      "    if pid == 0:\n        os._exit(0)\n"
                      "    os.waitpid(pid, 0)\n    r = 'forked'\nr")
            check(r.get("result") == "'denied'",
                  "strict: a fork is still denied after the forgeries", r)
            # Cell code on the worker's main thread when a checkpoint is
            # forked (an at-fork hook calling libc's fork) can spend the
            # gate's one pass: that process is killed at once.
            r = c.run("import os, ctypes\nlibc = ctypes.CDLL(None)\n"
                      "stolen = []\nsteal = True\ndef hook():\n"
                      "    if not steal:\n        return\n"
                      "    pid = libc.fork()\n"
                      "    if pid == 0:\n        libc.sleep(30)\n"
                      "        libc._exit(0)\n    stolen.append(pid)\n"
                      "os.register_at_fork(before=hook)")
            c.run("z = 1")
            r = c.run("steal = False\nstolen")
            live = wait_for(lambda: [
                p for p in descendants(c.pid) if p.comm == "coil-worker"
                and not p.zombie] if len([
                    p for p in descendants(c.pid) if p.comm == "coil-worker"
                    and not p.zombie]) == 1 else None, timeout=5)
            check(live, "strict: a fork stolen at a checkpoint does not "
                  "live on (%s stolen)" % r.get("result"),
                  [p for p in descendants(c.pid)])
            # The gate still lets the supervisor's own checkpoints through.
            r = c.call({"op": "snapshot", "name": "after"})
            check(r.get("status") == "ok",
                  "strict: a snapshot still passes the gate", r)
        r = c.call({"op": "snapshots"})
        check(r.get("status") == "ok" and r.get("count", 0) >= 1,
              "%s: checkpoints are still taken" % profile, r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())
    except Exception as e:      # a hang or a dead coil: say so, go on
        check(False, "%s: the session went on" % profile,
              "%r\n%s" % (e, c.stderr_text()))
        c.kill()
    finally:
        cleanup(wd)


def strict_quiet():
    """The strict gate's sweep kills only strays: checkpoints coil drops
    (--checkpoints 1 drops one at each cell) are not reported as forks
    of the cell's."""
    wd = workdir()
    c = Coil("--sandbox", "strict", "--checkpoints", "1", "--workdir", wd,
             "--checkpoint-policy", "every")
    try:
        warned = []
        for i in range(6):
            r = c.run("v = %d" % i)
            warned += [w for w in r.get("warnings") or []
                       if "forked by the cell" in w]
        check(not warned, "strict, --checkpoints 1: dropped checkpoints "
              "are not taken for strays", warned)
        # snapshots answers once the last cell's checkpoint has come:
        # the worker then dies with it kept, however loaded the machine.
        c.call({"op": "snapshots"})
        r = c.run("import os; os._exit(3)")
        check((r.get("restored") or {}).get("cell") == 6,
              "strict, --checkpoints 1: the newest checkpoint resumes", r)
        c.close()
    except Exception as e:
        check(False, "strict, --checkpoints 1: the session went on",
              "%r\n%s" % (e, c.stderr_text()))
        c.kill()
    finally:
        cleanup(wd)


for p in ("none", "standard", "strict"):
    session(p)
strict_quiet()
done()
