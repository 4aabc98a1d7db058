#!/usr/bin/python3
"""/proc/1/environ: in the session's PID namespace, PID 1 is coil's init,
a copy of the supervisor and its environment; it is not dumpable and out
of the worker's Landlock domain, so the kernel refuses.  Under none PID 1
is the machine's init (which this machine may protect on its own), so the
test also reads the worker's parent, coil's init: under none the
supervisor's secret is right there."""
import sbxlib

CELL = r'''
t("hook", lambda: open("/proc/1/environ", "rb").read()[:40])
k("kernel", lambda c: c.open(b"/proc/1/environ", 0))
k("mem-kernel", lambda c: c.open(b"/proc/1/mem", 0))
t("parent", lambda: b"hunter2-sbx" in open("/proc/%d/environ" % os.getppid(), "rb").read())
t("self", lambda: set(open("/proc/self/environ", "rb").read()) <= {0})
'''

tap = sbxlib.begin("/proc/1/environ")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd, env={
        "PATH": "/usr/bin:/bin", "COIL_TEST_SECRET": "hunter2-sbx"})
    if p == "none":
        tap.ok(r.get("parent") == ("ALLOWED", "True"), "none: coil's init "
               "shows the supervisor's secret (%s)" % (r.get("parent"),), r)
    else:
        tap.denied(r, "parent")
        tap.denied(r, "hook")
        tap.denied(r, "kernel", words=False, kernel=True)
        tap.denied(r, "mem-kernel", words=False, kernel=True)
        tap.ok(r.get("self") == ("ALLOWED", "True"), "%s: the worker's own "
               "/proc/self/environ is erased (%s)" % (p, r.get("self")), r)
    if p != "none":
        tap.ok("hunter2-sbx" not in r.out, "%s: the secret does not come "
               "out" % p, r)
    tap.session(r)
tap.done()
