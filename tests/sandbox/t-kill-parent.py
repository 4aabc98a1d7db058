#!/usr/bin/python3
"""os.kill(os.getppid(), 9) from a cell: the worker's parent is init, which
the kernel keeps out of the worker's reach (Landlock's signal scope; in a
PID namespace SIGKILL from inside does not reach PID 1 anyway).  Denied,
the session goes on.  Under none it kills init: the cell is answered
"crashed", the supervisor starts a new init and the session goes on."""
import sbxlib

# Under none the kill lands, and init's death would take the worker with
# it (PR_SET_PDEATHSIG) before it reports what happened: the cell clears
# that first, so its lines get out; coil kills the worker itself.
KILL = r'''
ctypes.CDLL(None).prctl(1, 0)
ppid = os.getppid()
t("hook", lambda: os.kill(ppid, 9))
k("kernel", lambda c: c.kill(ppid, 9))
import time; time.sleep(0.2)
print("RESULT alive ALLOWED parent %d" % os.getppid(), flush=True)
'''

tap = sbxlib.begin("os.kill(os.getppid(), 9)")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [KILL, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "hook")
        tap.ok(any("init process was killed" in w for x in r.responses
                   for w in x.get("warnings", ())),
               "none: a response says init was killed", r)
        tap.session(r)
        continue
    tap.denied(r, "hook")
    tap.denied(r, "kernel", words=False, kernel=True)
    tap.session(r)
tap.done()
