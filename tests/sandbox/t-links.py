#!/usr/bin/python3
"""A symlink or a hard link to a secret: making a symlink in the work dir
is harmless, reading through it is checked where it lands (Landlock, file
permissions); a hard link across the binds is refused (EXDEV: another
mount, and Landlock's REFER rule).  Under none both reach the secret."""
import os
import sbxlib

# outside every bind, on the same filesystem as the work dir (so that
# under none a hard link works)
out = sbxlib.tmpdir("sbx-secret-", "/srv" if os.path.isdir("/srv") else "/var")
secret = os.path.join(out, "secret")
with open(secret, "w") as f:
    f.write("TOP SECRET\n")
os.chmod(secret, 0o600)

CELL = r'''
t("symlink-shadow", lambda: (os.symlink("/etc/shadow", "sl-shadow"), open("sl-shadow").read())[1][:3])
t("symlink-secret", lambda: (os.symlink(%(s)r, "sl-secret"), open("sl-secret").read())[1])
t("hardlink-secret", lambda: os.link(%(s)r, "hl-secret"))
k("hardlink-secret-kernel", lambda c: c.link(%(sb)r, b"hl-secret2"))
k("hardlink-shadow-kernel", lambda c: c.link(b"/etc/shadow", b"hl-shadow"))
''' % {"s": secret, "sb": secret.encode()}

tap = sbxlib.begin("a symlink or hard link to a secret")
wd = sbxlib.tmpdir("sbx-wd-")
try:
    for p in sbxlib.PROFILES:
        r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
        if p == "none":
            tap.allowed(r, "symlink-secret")
            tap.allowed(r, "hardlink-secret")
        else:
            tap.denied(r, "symlink-shadow")
            tap.denied(r, "symlink-secret")
            tap.denied(r, "hardlink-secret")
            tap.denied(r, "hardlink-secret-kernel", words=False, kernel=True)
            tap.denied(r, "hardlink-shadow-kernel", words=False, kernel=True)
            for n in ("hl-secret", "hl-secret2", "hl-shadow"):
                tap.ok(not os.path.exists(os.path.join(wd, n)),
                       "%s: no %s in the work dir" % (p, n))
        for n in os.listdir(wd):
            os.remove(os.path.join(wd, n))
        tap.session(r)
finally:
    os.remove(secret)
    os.rmdir(out)
tap.done()
