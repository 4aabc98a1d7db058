#!/usr/bin/python3
"""os.kill(-1, 9) as root: dangerous if the sandbox failed (it would kill
every process of the machine), so the cell first proves that it is in a PID
namespace of its own and refuses to go on otherwise.  The hook denies it
with words; through libc the kernel limits it to the session (Landlock's
signal scope and the PID namespace): the worker, init and the supervisor
survive.  Under none the harness runs coil in a PID namespace of its
own (unshare), so the kill ends that namespace's processes, supervisor
included: the test shows it exercises something without harming the
machine."""
import os
import shutil
import sbxlib

HOST_NS = sbxlib.pid_ns()

KILL = r'''
ns = os.readlink("/proc/self/ns/pid")
if ns == %r:
    print("RESULT contained DENIED same pid namespace as the harness", flush=True)
    raise SystemExit(0)
print("RESULT contained ALLOWED %%s" %% ns, flush=True)
t("hook", lambda: os.kill(-1, 9))
k("kernel", lambda c: c.kill(-1, 9))
import time; time.sleep(0.3)
print("RESULT alive ALLOWED", flush=True)
''' % HOST_NS

# A cell's output comes back in coil's answer: the containment check goes
# first as a cell of its own, so that it is seen even when the kill below
# takes coil with it (under none), and there the kill cell also copies its
# lines to a file in the work dir, and clears the signal coil's worker gets
# when init dies, to live until sh, PID 1 of the namespace, is gone.
CONTAINED = KILL[:KILL.index("t(\"hook\"")]
TEE = r'''
class _Tee:
    # the file first: the pipe to a killed coil raises
    def __init__(self, *fs): self.fs = fs
    def write(self, x):
        for f in self.fs:
            try: f.write(x); f.flush()
            except OSError: pass
        return len(x)
    def flush(self): pass
sys.stdout = _Tee(open("kill-all.out", "w"), sys.stdout)
_libc.prctl(1, 0, 0, 0, 0)     # PR_SET_PDEATHSIG: outlive init a moment
'''
tap = sbxlib.begin("os.kill(-1, 9) as root")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    if p == "none":
        unshare = shutil.which("unshare")
        if unshare is None:
            tap.skip("none: kill(-1, 9)", "no unshare(1) to contain it")
            continue
        # sh is PID 1 of the harness's namespace, coil its child
        # the sleep keeps the namespace, and the worker in it, a moment
        # after coil is gone, for the worker to write its lines
        r = sbxlib.run(p, [CONTAINED, TEE + KILL, sbxlib.SESSION_OK], wd,
                       wrap=(unshare, "--pid", "--fork", "--mount-proc", "--",
                             "/bin/sh", "-c", '"$@"; echo "harness: exit $?" '
                             '>&2; sleep 1', "sh"))
        if os.path.exists(os.path.join(wd, "kill-all.out")):
            with open(os.path.join(wd, "kill-all.out")) as f:
                r.add_output(f.read())
        if r.get("contained")[0] != "ALLOWED":
            tap.skip("none: kill(-1, 9)", "the harness's PID namespace "
                     "did not hold: %s" % r.get("contained")[1])
            continue
        tap.allowed(r, "hook")
        tap.ok(not r.supervisor_ok, "none: every process of the namespace, "
               "supervisor included, is killed", r)
        continue
    r = sbxlib.run(p, [CONTAINED, KILL, sbxlib.SESSION_OK], wd,
                   need=("pid namespace",))
    if r.skipped:
        tap.skip("%s: kill(-1, 9)" % p, r.skip_reason)
        continue
    if not tap.ok(r.get("contained")[0] == "ALLOWED",
                  "%s: the cell is in a PID namespace of its own" % p, r):
        continue
    tap.denied(r, "hook")
    tap.ok(r.get("alive")[0] == "ALLOWED", "%s: through libc the worker "
           "survives its own kill(-1, 9)" % p, r)
    tap.session(r)
tap.done()
