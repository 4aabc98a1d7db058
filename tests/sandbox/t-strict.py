#!/usr/bin/python3
"""strict: no new processes or programs, no sockets but socketpair, reads
limited to Python's own files; threads work; and the worker may still fork
its own checkpoints, through the supervisor's gate (seccomp user
notification): the fork is let through only when the supervisor expects it,
from the worker's main thread, once."""
import os
import sbxlib

CELL = r'''
import socket, subprocess, threading
t("fork", lambda: os.fork())
t("exec", lambda: os.execv("/bin/true", ["true"]))
t("subprocess", lambda: subprocess.run(["true"]))
t("system", lambda: os.system("true"))
k("fork-kernel", lambda c: c.fork())
k("vfork-kernel", lambda c: c.syscall(58))
k("execve-kernel", lambda c: c.execv(b"/bin/true", None))
t("unix-socket", lambda: socket.socket(socket.AF_UNIX))
k("unix-socket-kernel", lambda c: c.socket(1, 1, 0))
t("socketpair", lambda: [s.close() for s in socket.socketpair()] and "ok")
def threads():
    out = []
    ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]
    [x.start() for x in ts]; [x.join() for x in ts]
    return len(out)
t("threads", threads)
t("read-bin", lambda: open("/usr/bin/env", "rb").read(4))
t("read-etc", lambda: open("/etc/hostname").read())
t("read-stdlib", lambda: len(open(os.__file__).read()) > 0)
marker = "before"
'''
# the checkpoint: coil's snapshot op, between the cells
SNAP = {"op": "snapshot", "name": "gate"}
AFTER = r'''
marker = "after"
t("fork-after", lambda: os.fork())
def thread_fork():
    box = []
    def run():
        ctypes.set_errno(0)
        box.append((_libc.fork(), ctypes.get_errno()))
    th = threading.Thread(target=run); th.start(); th.join()
    return box[0]
t("thread-fork", thread_fork)
'''

tap = sbxlib.begin("strict")
wd = sbxlib.tmpdir("sbx-wd-")
BACK = 'print("RESULT marker ALLOWED %s" % marker, flush=True)'
ROLLBACK = {"op": "rollback", "to": "gate"}
r = sbxlib.run("strict", [CELL, SNAP, AFTER, ROLLBACK, BACK,
                          sbxlib.SESSION_OK], wd)
for n in ("fork", "exec", "subprocess", "system", "unix-socket",
          "read-bin", "read-etc", "fork-after"):
    tap.denied(r, n)
for n in ("fork-kernel", "vfork-kernel", "execve-kernel",
          "unix-socket-kernel"):
    tap.denied(r, n, words=False, kernel=True)
tap.allowed(r, "socketpair", "socketpair is allowed")
tap.ok(r.get("threads") == ("ALLOWED", "8"), "strict: threads work", r)
tap.allowed(r, "read-stdlib", "Python's own files are readable")
snap, back = r.response(1), r.response(3)
tap.ok(snap is not None and snap.get("status") == "ok", "strict: the "
       "worker's checkpoint fork goes through the gate (snapshot: %s)"
       % (snap,), r)
tap.ok(back is not None and back.get("status") == "ok" and
       r.get("marker") == ("ALLOWED", "before"), "strict: the checkpoint "
       "is a live copy: rollback resumes it (%s, marker %s)"
       % (back, r.get("marker")), r)
tap.ok(r.get("thread-fork") == ("ALLOWED", "(-1, 1)"), "strict: a fork "
       "from a thread is refused by the gate (%s)" % (r.get("thread-fork"),),
       r)
# sbx-run logged each gate decision and checked that exactly one fork went
# through; coil logs none, and its automatic checkpoints use the gate too.
tap.session(r)
# the gate off: coil-hooked with COIL_TEST_NO_GATE=1 (sandbox.c's test
# hook; the installed coil has no such switch)
if not os.access(sbxlib.HOOKED, os.X_OK):
    tap.skip("strict without the gate", "%s is not built (make check "
             "builds it)" % sbxlib.HOOKED)
else:
    r = sbxlib.run("strict", [CELL, SNAP, sbxlib.SESSION_OK], wd,
                   coil=sbxlib.HOOKED, env=dict(os.environ,
                                                COIL_TEST_NO_GATE="1"))
    if r.skipped:
        tap.skip("strict without the gate", r.skip_reason)
    else:
        tap.ok(r.mech("checkpoint gate") == "off", "strict without the "
               "gate: the report says the gate is off (%s)"
               % r.mech("checkpoint gate"), r)
        tap.denied(r, "fork")
        tap.denied(r, "fork-kernel", words=False, kernel=True)
        snap = r.response(1)
        tap.ok(snap is not None and snap.get("status") != "ok", "strict "
               "without the gate: no fork at all, checkpoints included "
               "(%s)" % (snap,), r)
        tap.session(r)
STANDARD = r"""
import subprocess
t("subprocess", lambda: subprocess.run(["true"]).returncode)
"""
r = sbxlib.run("standard", [STANDARD, SNAP, sbxlib.SESSION_OK], wd)
tap.allowed(r, "subprocess", "standard runs programs")
snap = r.response(1)
tap.ok(snap is not None and snap.get("status") == "ok", "standard: "
       "checkpoints fork freely (%s)" % (snap,), r)
tap.session(r)
tap.done()
