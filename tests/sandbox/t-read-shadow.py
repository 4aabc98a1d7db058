#!/usr/bin/python3
"""Reading /etc/shadow: root inside the sandbox is an unused uid outside,
so the file's permissions refuse it (and Landlock, wherever the worker
could still read it); under strict /etc is not readable at all.  Under
none root reads it."""
import sbxlib

READ = r'''
t("hook", lambda: len(open("/etc/shadow").read()))
k("kernel", lambda c: c.open(b"/etc/shadow", 0))
t("passwd", lambda: len(open("/etc/passwd").read()) > 0)
'''

tap = sbxlib.begin("reading /etc/shadow")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [READ, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "hook")
    else:
        tap.denied(r, "hook")
        tap.denied(r, "kernel", words=False, kernel=True)
    if p != "strict":
        tap.allowed(r, "passwd", "/etc is the system's shared files")
    tap.session(r)
tap.done()
