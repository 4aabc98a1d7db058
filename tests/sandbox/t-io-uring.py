#!/usr/bin/python3
"""io_uring through ctypes: seccomp refuses io_uring_setup (io_uring's
operations bypass seccomp filtering of the syscalls they stand for).
Under none root sets one up, where the kernel allows io_uring."""
import sbxlib

CELL = r'''
params = ctypes.create_string_buffer(120)
k("io_uring", lambda c: c.syscall(425, 8, params))
'''

tap = sbxlib.begin("io_uring through ctypes")
wd = sbxlib.tmpdir("sbx-wd-")
try:
    with open("/proc/sys/kernel/io_uring_disabled") as f:
        disabled = int(f.read())
except OSError:
    disabled = 0
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
    if p == "none":
        if disabled:
            tap.skip("none: io_uring works", "io_uring is disabled on this "
                     "machine (kernel.io_uring_disabled=%d)" % disabled)
        else:
            tap.allowed(r, "io_uring")
    else:
        v, text = r.get("io_uring")
        tap.ok(v == "DENIED" and "EPERM" in text, "%s: io_uring_setup is "
               "refused (%s)" % (p, text), r)
    tap.session(r)
tap.done()
