#!/usr/bin/python3
"""unshare(2) through ctypes, and clone(2) with namespace flags: seccomp
refuses them (EPERM), so user code cannot make a user namespace of its own
and gain capabilities in it.  The same call through the x32 syscall table
(a classic filter bypass) kills the process: the filter admits the native
architecture only.  Under none root unshares freely."""
import sbxlib

CELL = r'''
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x20000, 0x40000000
k("unshare-user", lambda c: c.unshare(CLONE_NEWUSER))
k("unshare-mount", lambda c: c.unshare(CLONE_NEWNS))
k("unshare-net", lambda c: c.unshare(CLONE_NEWNET))
k("clone-newuser", lambda c: c.syscall(56, CLONE_NEWUSER | 17, 0, 0, 0, 0))
k("setns", lambda c: c.setns(os.open("/proc/self/ns/net", os.O_RDONLY), 0))
'''
X32 = r'''
print("RESULT x32 ALLOWED returned %d" % _libc.syscall(0x40000000 | 272, 0), flush=True)
'''

tap = sbxlib.begin("unshare through ctypes")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, X32, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "unshare-user")
    else:
        for n in ("unshare-user", "unshare-mount", "unshare-net",
                  "clone-newuser", "setns"):
            v, text = r.get(n)
            tap.ok(v == "DENIED" and "EPERM" in text, "%s: %s is refused "
                   "(%s)" % (p, n, text), r)
        tap.ok(r.cells.get(1) == ("signal", "31"), "%s: an x32 syscall "
               "kills the worker with SIGSYS (%s)" % (p, r.cells.get(1)), r)
    tap.session(r)
tap.done()
