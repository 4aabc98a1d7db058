#!/usr/bin/python3
"""chmod and chown of files outside the work directory.  Landlock does not
cover them, so root-is-not-special does: the worker's uid owns nothing
outside its binds (EPERM), system dirs are read-only binds (EROFS), and the
rest of the machine is not in its root (ENOENT).  Inside the work dir they
work.  Under none root changes anything."""
import os
import stat
import sbxlib

out = sbxlib.tmpdir("sbx-out-", "/opt")       # under /opt: a read-only bind
victim = os.path.join(out, "victim")
with open(victim, "w") as f:
    f.write("x")
os.chmod(victim, 0o600)
hidden = sbxlib.tmpdir("sbx-out-", "/srv" if os.path.isdir("/srv") else "/var")
hvictim = os.path.join(hidden, "victim")
with open(hvictim, "w") as f:
    f.write("x")
os.chmod(hvictim, 0o600)

CELL = r'''
t("chmod", lambda: os.chmod(%(v)r, 0o777))
t("chown", lambda: os.chown(%(v)r, 1000, 1000))
k("chmod-kernel", lambda c: c.chmod(%(vb)r, 0o777))
k("chown-kernel", lambda c: c.chown(%(vb)r, 1000, 1000))
k("chmod-passwd-kernel", lambda c: c.chmod(b"/etc/passwd", 0o777))
k("chmod-hidden-kernel", lambda c: c.chmod(%(hb)r, 0o777))
open("mine", "w").write("x")
t("chmod-workdir", lambda: os.chmod("mine", 0o640))
# root is not special: a file of someone else's, even in the work dir
k("chmod-foreign-kernel", lambda c: c.chmod(b"foreign", 0o666))
k("chown-giveaway-kernel", lambda c: c.chown(b"mine", 1000, 1000))
''' % {"v": victim, "vb": victim.encode(), "hb": hvictim.encode()}

tap = sbxlib.begin("chmod and chown outside the work directory")
wd = sbxlib.tmpdir("sbx-wd-")
passwd = os.stat("/etc/passwd")
try:
    for p in sbxlib.PROFILES:
        os.chmod(victim, 0o600)
        os.chown(victim, 0, 0)
        os.chmod(hvictim, 0o600)
        foreign = os.path.join(wd, "foreign")
        with open(foreign, "w") as f:
            f.write("x")
        os.chmod(foreign, 0o600)
        os.chown(foreign, 1000, 1000)
        r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
        fst = os.stat(foreign)
        os.remove(foreign)
        st = os.stat(victim)
        hst = os.stat(hvictim)
        if p == "none":
            tap.allowed(r, "chmod")
            tap.ok(stat.S_IMODE(st.st_mode) == 0o777 and st.st_uid == 1000,
                   "none: the file outside was changed")
        else:
            tap.denied(r, "chmod")
            tap.denied(r, "chown")
            for n in ("chmod-kernel", "chown-kernel", "chmod-passwd-kernel",
                      "chmod-hidden-kernel"):
                tap.denied(r, n, words=False, kernel=True)
            tap.ok(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0 and
                   stat.S_IMODE(hst.st_mode) == 0o600,
                   "%s: the files outside are unchanged" % p)
            for n in ("chmod-foreign-kernel", "chown-giveaway-kernel"):
                tap.denied(r, n, words=False, kernel=True)
            tap.ok(stat.S_IMODE(fst.st_mode) == 0o600, "%s: another user's "
                   "file in the work dir is unchanged" % p)
        tap.allowed(r, "chmod-workdir", "the work dir is the worker's")
        tap.ok(os.stat(os.path.join(wd, "mine")).st_mode & 0o777 == 0o640,
               "%s: chmod in the work dir took effect" % p)
        if p == "none":
            tap.allowed(r, "chmod-foreign-kernel")
            tap.allowed(r, "chown-giveaway-kernel")
        os.remove(os.path.join(wd, "mine"))
        tap.session(r)
    now = os.stat("/etc/passwd")
    tap.ok((now.st_mode, now.st_uid) == (passwd.st_mode, passwd.st_uid),
           "/etc/passwd is unchanged")
finally:
    os.remove(victim)
    os.rmdir(out)
    os.remove(hvictim)
    os.rmdir(hidden)
tap.done()
