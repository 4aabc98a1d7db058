"""attacks - the sandbox attacks as one table, and the one runner.

A row is an attack: the cells (each attempt prints one RESULT line, see
sbxlib.PRELUDE), what each profile must give (expect), the decoys it aims
at (setup, fmt), and how coil runs (kw: options, the harness cgroup,
mechanisms that must be on).  The runner runs every row under none,
standard and strict, each in a session of its own under the harness's
containment (sbxlib.run), and checks:

- none: the attack works, against decoys the row made (a file standing
  for /etc/passwd, a decoy home, a listener on 127.0.0.1): the row is
  known to exercise something;
- standard and strict: denied, with words from the audit hook and by the
  kernel (through libc, past the hook), the host unchanged, the session
  usable afterwards, nothing left running.

Attacks aimed at the real system (/etc, /usr/local, /usr/lib, ~/.ssh,
/etc/passwd) run only under the sandboxed profiles and only inside the
harness's proven overlays; bombs only in a proven cgroup of the harness.

Rows are grouped, a group per test file (t-files.py, t-net.py,
t-procs.py, t-limits.py), so that make -j runs groups side by side.
`t-GROUP.py ROW...` runs only the rows named.
"""
import os
import socket
import stat
import sys
import threading
import time

import sbxlib

NONE = ("none",)
SBX = sbxlib.SANDBOXED
ALL = sbxlib.PROFILES
STD = ("standard",)
STRICT = ("strict",)


class Row:
    def __init__(self, name, group, doc, cells, expect=(), setup=None,
                 fmt=None, before=None, check=None, extra=None, kw=None,
                 session=True, workdir=None):
        self.name, self.group, self.doc = name, group, doc
        self.cells = cells          # templates (% fmt), or f(ctx, p)
        self.expect = expect        # (profiles, kind, names)
        self.setup = setup          # f(ctx): decoys, listeners
        self.fmt = fmt              # f(ctx, p): the cells' % values
        self.before = before        # f(ctx, p): reset before each profile
        self.check = check          # f(tap, r, ctx, p): host-side checks
        self.extra = extra          # f(tap, ctx): further runs
        self.kw = kw or {}          # sbxlib.run options, or f(p)
        self.session = session      # tap.session after each profile
        self.workdir = workdir      # ctx key of the work dir to use


def expect_one(tap, r, kind, name):
    """One expectation of the table on one RESULT line."""
    v, text = r.get(name)
    if kind == "allowed":
        return tap.allowed(r, name)
    if kind == "denied":
        return tap.denied(r, name)
    if kind == "kernel":
        return tap.denied(r, name, words=False, kernel=True)
    what, arg = kind
    if what == "errno":
        return tap.ok(v == "DENIED" and arg in text, "%s: %s is refused "
                      "with %s (%s)" % (r.profile, name, arg, text[:120]), r)
    if what == "eq":
        return tap.ok((v, text) == ("ALLOWED", arg), "%s: %s gives %s (%s)"
                      % (r.profile, name, arg, text[:120] or v), r)
    if what == "words":
        import re
        return tap.ok(v == "DENIED" and re.search(arg, text), "%s: %s is "
                      "denied saying '%s' (%s)" % (r.profile, name, arg,
                                                   text[:160]), r)
    raise ValueError(kind)


def run_row(tap, row):
    ctx = {"wd": sbxlib.tmpdir("sbx-wd-")}
    tap.prefix = ""
    tap.diag("%s: %s" % (row.name, row.doc))
    tap.prefix = row.name + ": "
    if row.setup:
        row.setup(ctx)
    wd = ctx[row.workdir] if row.workdir else ctx["wd"]
    for p in sbxlib.PROFILES:
        if row.before:
            row.before(ctx, p)
        if callable(row.cells):
            cells = row.cells(ctx, p)
        else:
            f = row.fmt(ctx, p) if row.fmt else None
            cells = [c % f if f is not None and isinstance(c, str) else c
                     for c in row.cells]
        kw = row.kw(p) if callable(row.kw) else dict(row.kw)
        r = sbxlib.run(p, cells + [sbxlib.SESSION_OK], wd, **kw)
        if r.skipped:
            tap.skip("%s" % p, r.skip_reason)
            continue
        for profiles, kind, names in row.expect:
            if p in profiles:
                for n in names:
                    expect_one(tap, r, kind, n)
        if row.check:
            row.check(tap, r, ctx, p)
        if row.session:
            tap.session(r)
    if row.extra:
        row.extra(tap, ctx)
    tap.prefix = ""


def main(group):
    rows = [r for r in ROWS if r.group == group]
    only = sys.argv[1:]
    if only:
        rows = [r for r in rows if r.name in only]
    tap = sbxlib.begin("sandbox attacks, %s: %s" % (
        group, " ".join(r.name for r in rows)))
    passwd = os.stat("/etc/passwd")
    for row in rows:
        run_row(tap, row)
    now = os.stat("/etc/passwd")
    tap.ok((now.st_mode, now.st_uid) == (passwd.st_mode, passwd.st_uid),
           "the host's /etc/passwd is unchanged")
    tap.done()


def listener(kind):
    """A listener of the test's on 127.0.0.1 (or a unix socket in dir):
    (socket, hits list)."""
    hits = []
    if kind == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)

    def serve():
        while True:
            try:
                if kind == "udp":
                    hits.append(s.recv(100))
                else:
                    c, _ = s.accept()
                    hits.append(1)
                    c.close()
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    return s, hits


def outside_dir(prefix):
    """A temp dir of the test's outside every bind of the worker's root
    (on the work dir's filesystem, so that under none a hard link works)."""
    return sbxlib.tmpdir(prefix, "/srv" if os.path.isdir("/srv") else "/var")


ROWS = []
add = ROWS.append

# ------------------------------------------------------------- files

def shadow_setup(ctx):
    ctx["shadow"] = sbxlib.decoy("/etc/shadow", "root:$6$decoy:19000::::::\n")


add(Row(
    "read-shadow", "files",
    "reading /etc/shadow: root inside is an unused uid outside, so the "
    "file's permissions refuse it (and Landlock); strict cannot read /etc",
    [r'''
t("hook", lambda: len(open(%(s)r).read()))
k("kernel", lambda c: c.open(%(sb)r, 0))
t("passwd", lambda: len(open("/etc/passwd").read()) > 0)
'''],
    expect=[(NONE, "allowed", ["hook"]), (SBX, "denied", ["hook"]),
            (SBX, "kernel", ["kernel"]),
            (("none", "standard"), "allowed", ["passwd"])],
    setup=shadow_setup,
    fmt=lambda ctx, p: (lambda s: {"s": s, "sb": s.encode()})(
        ctx["shadow"] if p == "none" else "/etc/shadow")))


def ssh_setup(ctx):
    home = sbxlib.tmpdir("sbx-home-", "/home" if os.path.isdir("/home")
                         else "/var")
    ctx["ssh"] = os.path.join(home, ".ssh")
    os.mkdir(ctx["ssh"], 0o700)
    ctx["key"] = os.path.join(ctx["ssh"], "coil-sandbox-test-key")
    with open(ctx["key"], "w") as f:
        f.write("SECRET KEY\n")
    os.chmod(ctx["key"], 0o600)
    # the real ~/.ssh, as the harness's overlay shows it: planted there
    ctx["real"] = os.path.join(sbxlib.HOME, ".ssh", "coil-sandbox-plant-key")


def ssh_fmt(ctx, p):
    return {"key": ctx["key"], "keyb": ctx["key"].encode(),
            "ssh": ctx["ssh"], "real": ctx["real"],
            "realb": ctx["real"].encode()}


def ssh_check(tap, r, ctx, p):
    tap.ok(not os.path.exists(ctx["real"]), "%s: the key planted in the "
           "harness's ~/.ssh is not on the host" % p)


def ssh_extra(tap, ctx):
    r = sbxlib.run("standard", [SSH_CELL % ssh_fmt(ctx, "standard")],
                   ctx["wd"], args=("--allow-read", ctx["ssh"]))
    tap.ok(r.get("hook") == ("ALLOWED", "'SECRET KEY'"), "standard "
           "--allow-read ~/.ssh: readable (%s)" % (r.get("hook"),), r)


SSH_CELL = r'''
t("hook", lambda: open(%(key)r).read().strip())
k("kernel", lambda c: c.open(%(keyb)r, 0))
t("listdir", lambda: os.listdir(%(ssh)r))
t("real-hook", lambda: open(%(real)r).read().strip())
k("real-kernel", lambda c: c.open(%(realb)r, 0))
'''
add(Row(
    "read-ssh", "files",
    "reading ~/.ssh (a decoy home, and the real ~/.ssh path with a key "
    "planted in the harness's overlay): no home is in the worker's root; "
    "--allow-read lifts it",
    [SSH_CELL],
    expect=[(NONE, "allowed", ["hook", "real-hook"]),
            (SBX, "denied", ["hook", "listdir", "real-hook"]),
            (SBX, "kernel", ["kernel", "real-kernel"])],
    setup=ssh_setup, fmt=ssh_fmt, check=ssh_check, extra=ssh_extra,
    kw=lambda p: {"plant": {os.path.join(sbxlib.HOME, ".ssh",
                                         "coil-sandbox-plant-key"):
                            "PLANTED KEY\n"}}))


def home_setup(ctx):
    fake = ctx["home"] = sbxlib.tmpdir("sbx-home-")
    os.makedirs(os.path.join(fake, ".ssh"), mode=0o700)
    for f, text in ((".ssh/id_rsa", "HOME KEY\n"),
                    (".netrc", "machine x password hunter2\n"),
                    ("notes.txt", "fine\n")):
        with open(os.path.join(fake, f), "w") as fh:
            fh.write(text)


def home_check(tap, r, ctx, p):
    ak = os.path.join(ctx["home"], ".ssh", "authorized_keys")
    if p == "none":
        if tap.ok(os.path.exists(ak), "none: authorized_keys was written"):
            os.remove(ak)
    else:
        tap.ok(not os.path.exists(ak), "%s: nothing was added to .ssh" % p)


def home_extra(tap, ctx):
    r = sbxlib.run("standard", [HOME_CELL], ctx["home"], args=(
        "--allow-read", os.path.join(ctx["home"], ".ssh")))
    tap.ok(r.get("home-key") == ("ALLOWED", "'HOME KEY'"), "standard "
           "--allow-read HOME/.ssh: readable again (%s)"
           % (r.get("home-key"),), r)


HOME_CELL = r'''
t("home-key", lambda: open(".ssh/id_rsa").read().strip())
k("home-key-kernel", lambda c: c.open(b".ssh/id_rsa", 0))
t("home-netrc", lambda: open(".netrc").read().strip())
k("home-netrc-kernel", lambda c: c.open(b".netrc", 0))
t("home-write", lambda: open(".ssh/authorized_keys", "a").write("ssh-rsa evil"))
t("home-notes", lambda: open("notes.txt").read().strip())
'''
add(Row(
    "home-creds", "files",
    "the work dir is a home: its credentials (.ssh, .netrc) are covered "
    "all the same; the rest of it is readable",
    [HOME_CELL],
    expect=[(NONE, "allowed", ["home-key", "home-write"]),
            (SBX, "denied", ["home-key", "home-netrc", "home-write"]),
            (SBX, "kernel", ["home-key-kernel", "home-netrc-kernel"]),
            (ALL, "allowed", ["home-notes"])],
    setup=home_setup, check=home_check, extra=home_extra, workdir="home"))


def write_targets(ctx, p):
    if p == "none":
        return ctx["decoys"]
    return {"usr": "/usr/local/coil-sandbox-test",
            "etc": "/etc/coil-sandbox-test",
            "usr-lib": "/usr/lib/coil-test",
            "outside": ctx["decoys"]["outside"]}


def write_setup(ctx):
    ctx["out"] = outside_dir("sbx-out-")
    ctx["decoys"] = {
        "usr": os.path.join(sbxlib.tmpdir("sbx-usrlocal-"),
                            "coil-sandbox-test"),
        "etc": os.path.join(sbxlib.tmpdir("sbx-etc-"), "coil-sandbox-test"),
        "usr-lib": os.path.join(sbxlib.tmpdir("sbx-usrlib-"), "coil-test"),
        "outside": os.path.join(ctx["out"], "f")}


def write_cells(ctx, p):
    cell = "".join(r'''
t(%r, lambda: open(%r, "w").write("x"))
k(%r, lambda c: c.open(%r, 0o101, 0o644))
''' % (n, path, n + "-kernel", path.encode())
        for n, path in write_targets(ctx, p).items())
    return [cell + r'''
t("workdir", lambda: open("in-workdir", "w").write("x"))
t("tmpdir", lambda: open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "sbx-t"), "w").write("x"))
''']


def write_check(tap, r, ctx, p):
    for n, path in write_targets(ctx, p).items():
        if p == "none":
            tap.ok(os.path.exists(path), "none: the write landed at the "
                   "decoy %s" % path)
        else:
            tap.ok(not os.path.exists(path), "%s: nothing appeared on the "
                   "host at %s" % (p, path))
        if path in ctx["decoys"].values() and os.path.exists(path):
            os.remove(path)
    f = os.path.join(ctx["wd"], "in-workdir")
    if tap.ok(os.path.exists(f), "%s: the file in the work dir is there"
              % p):
        st = os.stat(f)
        tap.ok((st.st_uid, st.st_gid) == (os.getuid(), os.getgid()),
               "%s: the file is owned on disk by the work dir's owner "
               "(%d:%d)" % (p, st.st_uid, st.st_gid))
        os.remove(f)


def write_extra(tap, ctx):
    r = sbxlib.run("standard", write_cells(ctx, "standard"), ctx["wd"],
                   args=("--allow-write", ctx["out"]))
    tap.allowed(r, "outside", "--allow-write lifts it")
    for n in ("f", "in-workdir"):
        for d in (ctx["out"], ctx["wd"]):
            if os.path.exists(os.path.join(d, n)):
                os.remove(os.path.join(d, n))


add(Row(
    "write-outside", "files",
    "writing outside the work directory (/etc, /usr/local, /usr/lib, a dir "
    "outside the root): system dirs are read-only binds outside Landlock's "
    "write rules; the work dir, the private tmp and --allow-write DIR are "
    "writable",
    write_cells,
    expect=[(NONE, "allowed", ["usr", "etc", "usr-lib", "outside"]),
            (SBX, "denied", ["usr", "etc", "usr-lib", "outside"]),
            (SBX, ("words", "writing outside the work directory"),
             ["usr-lib"]),
            (SBX, "kernel", ["usr-kernel", "etc-kernel", "usr-lib-kernel",
                             "outside-kernel"]),
            (ALL, "allowed", ["workdir", "tmpdir"])],
    setup=write_setup, check=write_check, extra=write_extra))


def chmod_setup(ctx):
    ctx["victim"] = sbxlib.decoy("victim", parent="/opt")  # read-only bind
    ctx["hidden"] = os.path.join(outside_dir("sbx-out-"), "victim")
    with open(ctx["hidden"], "w") as f:
        f.write("x")
    with open("/etc/passwd") as f:
        ctx["passwd"] = sbxlib.decoy("/etc/passwd", f.read(), 0o644)
    st = os.stat("/etc/passwd")
    ctx["host_passwd"] = (st.st_mode, st.st_uid, st.st_gid)


def chmod_before(ctx, p):
    for f in (ctx["victim"], ctx["hidden"]):
        os.chmod(f, 0o600)
        os.chown(f, 0, 0)
    os.chmod(ctx["passwd"], 0o644)
    foreign = os.path.join(ctx["wd"], "foreign")
    with open(foreign, "w") as f:
        f.write("x")
    os.chmod(foreign, 0o600)
    os.chown(foreign, 1000, 1000)


def chmod_fmt(ctx, p):
    pw = ctx["passwd"] if p == "none" else "/etc/passwd"
    return {"v": ctx["victim"], "vb": ctx["victim"].encode(),
            "hb": ctx["hidden"].encode(), "pw": pw, "pwb": pw.encode()}


def chmod_check(tap, r, ctx, p):
    st, hst = os.stat(ctx["victim"]), os.stat(ctx["hidden"])
    foreign = os.path.join(ctx["wd"], "foreign")
    fst = os.stat(foreign)
    os.remove(foreign)
    if p == "none":
        tap.ok(stat.S_IMODE(st.st_mode) == 0o777 and st.st_uid == 1000,
               "none: the decoy outside was changed")
        tap.ok(stat.S_IMODE(os.stat(ctx["passwd"]).st_mode) == 0o777,
               "none: the decoy /etc/passwd was made 0777")
    else:
        tap.ok(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0 and
               stat.S_IMODE(hst.st_mode) == 0o600,
               "%s: the files outside are unchanged" % p)
        tap.ok(stat.S_IMODE(fst.st_mode) == 0o600, "%s: another user's "
               "file in the work dir is unchanged" % p)
    mine = os.path.join(ctx["wd"], "mine")
    tap.ok(os.path.exists(mine) and stat.S_IMODE(os.stat(mine).st_mode) ==
           0o640, "%s: chmod in the work dir took effect" % p)
    if os.path.exists(mine):
        os.remove(mine)
    st = os.stat("/etc/passwd")
    tap.ok((st.st_mode, st.st_uid, st.st_gid) == ctx["host_passwd"],
           "%s: the host's /etc/passwd is unchanged (%o)" % (p, st.st_mode))


add(Row(
    "chmod-chown", "files",
    "chmod and chown outside the work directory: the worker's uid owns "
    "nothing outside its binds (EPERM), system dirs are read-only binds "
    "(EROFS), the rest is not in its root (ENOENT); inside the work dir "
    "they work, on the worker's own files only",
    [r'''
t("chmod", lambda: os.chmod(%(v)r, 0o777))
t("chown", lambda: os.chown(%(v)r, 1000, 1000))
t("chmod-passwd", lambda: os.chmod(%(pw)r, 0o777))
k("chmod-kernel", lambda c: c.chmod(%(vb)r, 0o777))
k("chown-kernel", lambda c: c.chown(%(vb)r, 1000, 1000))
k("chmod-passwd-kernel", lambda c: c.chmod(%(pwb)r, 0o777))
k("chmod-hidden-kernel", lambda c: c.chmod(%(hb)r, 0o777))
open("mine", "w").write("x")
t("chmod-workdir", lambda: os.chmod("mine", 0o640))
# root is not special: a file of someone else's, even in the work dir
k("chmod-foreign-kernel", lambda c: c.chmod(b"foreign", 0o666))
k("chown-giveaway-kernel", lambda c: c.chown(b"mine", 1000, 1000))
'''],
    expect=[(NONE, "allowed", ["chmod", "chmod-passwd",
                               "chmod-foreign-kernel",
                               "chown-giveaway-kernel"]),
            (SBX, "denied", ["chmod", "chown", "chmod-passwd"]),
            (SBX, ("words", "changing files outside the work directory"),
             ["chmod-passwd"]),
            (SBX, "kernel", ["chmod-kernel", "chown-kernel",
                             "chmod-passwd-kernel", "chmod-hidden-kernel",
                             "chmod-foreign-kernel",
                             "chown-giveaway-kernel"]),
            (ALL, "allowed", ["chmod-workdir"])],
    setup=chmod_setup, before=chmod_before, fmt=chmod_fmt,
    check=chmod_check))


# Every file the setid row's cells make, and whether the attempt that made
# or changed it means a set-id bit (under none it lands: the row is known
# to exercise each call).
SETID_FILES = {"plain": False, "f": True, "g": True, "fd": True, "o": True,
               "n": True, "k": True, "k2": True, "c": True, "at2": True,
               "o2": True, "tf": True}


def setid_clean(wd):
    """Strip every set-id bit and remove every file in the work dir: a
    set-uid file of the test's must not outlive it, however it ends."""
    for n in os.listdir(wd):
        f = os.path.join(wd, n)
        try:
            st = os.lstat(f)
            if stat.S_ISREG(st.st_mode):
                os.chmod(f, 0o600)
            if stat.S_ISDIR(st.st_mode):
                import shutil
                shutil.rmtree(f, ignore_errors=True)
            else:
                os.remove(f)
        except OSError:
            pass


def setid_setup(ctx):
    import atexit
    atexit.register(setid_clean, ctx["wd"])   # runs before sbxlib's rmtree


def setid_check(tap, r, ctx, p):
    wd = ctx["wd"]
    try:
        made = {}
        for n in SETID_FILES:
            f = os.path.join(wd, n)
            if os.path.lexists(f):
                made[n] = os.lstat(f).st_mode
        setid = sorted(n for n, m in made.items()
                       if m & (stat.S_ISUID | stat.S_ISGID))
        if p == "none":
            want = sorted(n for n, s in SETID_FILES.items() if s)
            tap.ok(setid == want, "none: every call made its file set-id "
                   "(%s)" % " ".join(setid), r)
        else:
            tap.ok(not setid, "%s: no file on the host is set-uid or "
                   "set-gid (%s)" % (p, " ".join("%s %o" % (n, m) for n, m
                                                 in sorted(made.items()))), r)
        tap.ok(stat.S_IMODE(made.get("plain", 0)) == 0o755,
               "%s: a plain chmod 0755 took effect (%o)"
               % (p, made.get("plain", 0)))
    finally:
        setid_clean(wd)
    tap.ok(not os.listdir(wd), "%s: the test's files are gone" % p)


add(Row(
    "setid", "files",
    "set-uid and set-gid bits: the work dir is an id-mapped bind, so a "
    "file a cell makes there belongs on the host to whoever started coil "
    "(root here), on a mount that is not nosuid; every call that sets a "
    "mode refuses a set-id bit (EPERM), openat2 is ENOSYS; a plain chmod "
    "still works",
    [r'''
import ctypes, shutil, stat
with open("plain", "w") as _f:
    _f.write("#!/bin/sh\necho a harmless file of the test's\n")
for _n in ("f", "g", "fd", "k", "k2", "at2"):
    shutil.copyfile("plain", _n)
t("chmod-suid", lambda: os.chmod("f", 0o4755))
t("chmod-sgid", lambda: os.chmod("g", 0o2755))
def _fchmod():
    fd = os.open("fd", os.O_RDONLY)
    try:
        os.fchmod(fd, 0o4755)
    finally:
        os.close(fd)
t("fchmod", _fchmod)
t("open-creat", lambda: os.close(os.open("o", os.O_CREAT | os.O_WRONLY,
                                         0o4755)))
t("mknod", lambda: os.mknod("n", stat.S_IFREG | 0o4755))
def _closed(fd):
    if fd >= 0:
        os.close(fd)
    return fd
k("chmod-kernel", lambda c: c.chmod(b"k", 0o4755))
k("chmod-sgid-kernel", lambda c: c.chmod(b"k2", 0o2755))
k("creat-kernel", lambda c: _closed(c.creat(b"c", 0o6755)))
k("fchmodat2-kernel", lambda c: c.syscall(452, -100, b"at2", 0o4755, 0))
_how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
k("openat2-kernel", lambda c: _closed(c.syscall(437, -100, b"o2",
                                                ctypes.byref(_how), 24)))
def _tmpfile(c):
    fd = c.open(b".", os.O_TMPFILE | os.O_WRONLY, 0o4755)
    if fd >= 0 and c.linkat(fd, b"", -100, b"tf", 0x1000) < 0:  # AT_EMPTY_PATH
        print("linkat: %s" % os.strerror(ctypes.get_errno()), flush=True)
    return _closed(fd)
k("tmpfile-kernel", _tmpfile)
t("chmod-plain", lambda: os.chmod("plain", 0o755))
'''],
    expect=[(NONE, "allowed", ["chmod-suid", "chmod-sgid", "fchmod",
                               "open-creat", "mknod", "chmod-kernel",
                               "chmod-sgid-kernel", "creat-kernel",
                               "fchmodat2-kernel", "openat2-kernel",
                               "tmpfile-kernel"]),
            (SBX, "denied", ["chmod-suid", "chmod-sgid", "fchmod"]),
            (SBX, ("words", "not the cells' to set.*no option lifts it"),
             ["chmod-suid", "chmod-sgid", "fchmod"]),
            (SBX, ("words", r"Errno 1\] Operation not permitted"),
             ["open-creat", "mknod"]),
            (SBX, ("errno", "EPERM"), ["chmod-kernel", "chmod-sgid-kernel",
                                       "creat-kernel", "fchmodat2-kernel",
                                       "tmpfile-kernel"]),
            (SBX, ("errno", "ENOSYS"), ["openat2-kernel"]),
            (ALL, "allowed", ["chmod-plain"])],
    setup=setid_setup, before=lambda ctx, p: setid_clean(ctx["wd"]),
    check=setid_check))


def links_setup(ctx):
    ctx["secret"] = os.path.join(outside_dir("sbx-secret-"), "secret")
    with open(ctx["secret"], "w") as f:
        f.write("TOP SECRET\n")
    os.chmod(ctx["secret"], 0o600)
    # under none: decoys beside the work dir (same filesystem)
    ctx["dsecret"] = sbxlib.decoy("secret", "TOP SECRET\n")
    ctx["dshadow"] = sbxlib.decoy("/etc/shadow", "root:$6$decoy:::\n")


def links_fmt(ctx, p):
    s = ctx["dsecret"] if p == "none" else ctx["secret"]
    sh = ctx["dshadow"] if p == "none" else "/etc/shadow"
    return {"s": s, "sb": s.encode(), "sh": sh, "shb": sh.encode()}


def links_check(tap, r, ctx, p):
    if p != "none":
        for n in ("hl-secret", "hl-secret2", "hl-shadow"):
            tap.ok(not os.path.exists(os.path.join(ctx["wd"], n)),
                   "%s: no %s in the work dir" % (p, n))
    for n in os.listdir(ctx["wd"]):
        os.remove(os.path.join(ctx["wd"], n))


add(Row(
    "links", "files",
    "a symlink or hard link to a secret: reading through a symlink is "
    "checked where it lands; a hard link across the binds is refused "
    "(EXDEV, Landlock's REFER rule)",
    [r'''
t("symlink-shadow", lambda: (os.symlink(%(sh)r, "sl-shadow"), open("sl-shadow").read())[1][:3])
t("symlink-secret", lambda: (os.symlink(%(s)r, "sl-secret"), open("sl-secret").read())[1])
t("hardlink-secret", lambda: os.link(%(s)r, "hl-secret"))
k("hardlink-secret-kernel", lambda c: c.link(%(sb)r, b"hl-secret2"))
k("hardlink-shadow-kernel", lambda c: c.link(%(shb)r, b"hl-shadow"))
'''],
    expect=[(NONE, "allowed", ["symlink-secret", "hardlink-secret"]),
            (SBX, "denied", ["symlink-shadow", "symlink-secret",
                             "hardlink-secret"]),
            (SBX, "kernel", ["hardlink-secret-kernel",
                             "hardlink-shadow-kernel"])],
    setup=links_setup, fmt=links_fmt, check=links_check))


def proc1_check(tap, r, ctx, p):
    if p != "none":
        tap.ok("hunter2-sbx" not in r.out, "%s: the secret does not come "
               "out" % p, r)


add(Row(
    "proc1-environ", "files",
    "/proc/1/environ: PID 1 of the session is coil's init, not dumpable "
    "and out of the worker's Landlock domain; under none coil's init (the "
    "worker's parent) shows the supervisor's secret",
    [r'''
t("hook", lambda: open("/proc/1/environ", "rb").read()[:40])
k("kernel", lambda c: c.open(b"/proc/1/environ", 0))
k("mem-kernel", lambda c: c.open(b"/proc/1/mem", 0))
t("parent", lambda: b"hunter2-sbx" in open("/proc/%d/environ" % os.getppid(), "rb").read())
t("self", lambda: set(open("/proc/self/environ", "rb").read()) <= {0})
'''],
    expect=[(NONE, ("eq", "True"), ["parent"]),
            (SBX, "denied", ["parent", "hook"]),
            (SBX, "kernel", ["kernel", "mem-kernel"]),
            (SBX, ("eq", "True"), ["self"])],
    check=proc1_check,
    kw={"env": {"PATH": "/usr/bin:/bin", "COIL_TEST_SECRET": "hunter2-sbx"}}))

# --------------------------------------------------------------- net

def tcp_setup(ctx):
    ctx["srv"], ctx["hits"] = listener("tcp")


def tcp_fmt(ctx, p):
    return {"port": ctx["srv"].getsockname()[1],
            "host": "localhost" if p == "none" else "example.com"}


TCP_CELL = r'''
import socket
t("connect", lambda: socket.create_connection(("127.0.0.1", %(port)d), timeout=3).close())
t("bind", lambda: socket.socket().bind(("127.0.0.1", 0)))
t("dns", lambda: socket.getaddrinfo(%(host)r, 80))
k("socket-kernel", lambda c: c.socket(2, 1, 0))
'''


def tcp_check(tap, r, ctx, p):
    if p == "none":
        tap.ok(coiltest_wait(lambda: len(ctx["hits"]) == 1), "none: the "
               "test's listener was reached")
    else:
        tap.ok(not ctx["hits"], "%s: nothing reached the test's listener" % p)
    del ctx["hits"][:]


def tcp_extra(tap, ctx):
    cell = TCP_CELL % tcp_fmt(ctx, "standard")
    r = sbxlib.run("standard", [cell], ctx["wd"], args=("--allow-net",))
    tap.allowed(r, "connect", "--allow-net lifts it")
    tap.ok(coiltest_wait(lambda: len(ctx["hits"]) == 1), "standard "
           "--allow-net: the listener was reached")
    r = sbxlib.run("strict", [cell], ctx["wd"], args=("--allow-net",))
    tap.denied(r, "connect")


def coiltest_wait(pred):
    return sbxlib.coiltest.wait_for(pred, timeout=3)


add(Row(
    "tcp", "net",
    "TCP to 127.0.0.1: a network namespace of its own, Landlock's TCP "
    "rules, seccomp's inet sockets; --allow-net lifts it under standard",
    [TCP_CELL],
    expect=[(NONE, "allowed", ["connect", "bind"]),
            (SBX, "denied", ["connect", "bind", "dns"]),
            (SBX, "kernel", ["socket-kernel"])],
    setup=tcp_setup, fmt=tcp_fmt, check=tcp_check, extra=tcp_extra))


def udp_setup(ctx):
    ctx["srv"], ctx["hits"] = listener("udp")


def udp_check(tap, r, ctx, p):
    if p == "none":
        tap.ok(coiltest_wait(lambda: ctx["hits"] == [b"exfil"] * 2),
               "none: the datagrams reached the test's listener (%s)"
               % ctx["hits"])
    else:
        time.sleep(0.2)
        tap.ok(not ctx["hits"], "%s: nothing reached the host" % p)
    del ctx["hits"][:]


add(Row(
    "udp", "net",
    "UDP to 127.0.0.1:53 (DNS exfiltration, which Landlock's TCP rules do "
    "not cover): no inet socket, no interface; under none the datagrams go "
    "to the test's listener only",
    [r'''
import socket
def send(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"exfil", ("127.0.0.1", port))
t("udp53", lambda: send(%(p53)d))
t("udp", lambda: send(%(port)d))
k("socket-kernel", lambda c: c.socket(2, 2, 0))
'''],
    expect=[(NONE, "allowed", ["udp53", "udp"]),
            (SBX, "denied", ["udp53", "udp"]),
            (SBX, "kernel", ["socket-kernel"])],
    setup=udp_setup, check=udp_check,
    fmt=lambda ctx, p: {"port": ctx["srv"].getsockname()[1],
                        "p53": ctx["srv"].getsockname()[1] if p == "none"
                        else 53}))


def unix_setup(ctx):
    d = sbxlib.tmpdir("sbx-sock-", "/run" if os.path.isdir("/run")
                      else "/tmp")
    ctx["path"] = os.path.join(d, "s")
    s = socket.socket(socket.AF_UNIX)
    s.bind(ctx["path"])
    os.chmod(ctx["path"], 0o777)
    s.listen(8)
    ctx["srv"], ctx["hits"] = s, []

    def serve():
        while True:
            try:
                c, _ = s.accept()
            except OSError:
                return
            ctx["hits"].append(1)
            c.close()
    threading.Thread(target=serve, daemon=True).start()


add(Row(
    "unix-socket", "net",
    "a pathname unix socket outside the work dir (docker.sock, dbus, X11): "
    "not in the worker's root; sockets in the work dir work (not strict)",
    [r'''
import socket
t("connect", lambda: socket.socket(socket.AF_UNIX).connect(%(p)r))
def inside():
    s = socket.socket(socket.AF_UNIX); s.bind("mine.sock"); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect("mine.sock"); c.close()
    os.remove("mine.sock")
    return "ok"
t("workdir", inside)
'''],
    expect=[(NONE, "allowed", ["connect"]), (SBX, "denied", ["connect"]),
            (STRICT, "denied", ["workdir"]),
            (("none", "standard"), "allowed", ["workdir"])],
    setup=unix_setup, fmt=lambda ctx, p: {"p": ctx["path"]},
    check=tcp_check))


def netlink_check(tap, r, ctx, p):
    if p == "none":
        v, text = r.get("vsock")
        tap.ok(v == "ALLOWED" or "Address family not supported" in text,
               "none: vsock opens where the machine has it (%s)" % text, r)


add(Row(
    "netlink-vsock", "net",
    "netlink, vsock, packet and raw sockets: seccomp refuses the families",
    [r'''
import socket
t("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close())
t("vsock", lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close())
t("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close())
t("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1).close())
k("netlink-kernel", lambda c: c.socket(16, 3, 0))
k("vsock-kernel", lambda c: c.socket(40, 1, 0))
k("packet-kernel", lambda c: c.socket(17, 3, 0))
k("raw-kernel", lambda c: c.socket(2, 3, 1))
'''],
    expect=[(NONE, "allowed", ["netlink", "packet"]),
            (SBX, "denied", ["netlink", "vsock", "packet", "raw"]),
            (SBX, ("errno", "EACCES"), ["netlink-kernel", "vsock-kernel",
                                        "packet-kernel", "raw-kernel"])],
    check=netlink_check))

# ------------------------------------------------------------- procs

DAEMON = r'''
def start():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 3)
            os.execv("/bin/sleep", ["sleep", "987"])
        os._exit(0)
    os.waitpid(pid, 0)
    return "started"
t("daemon", start)
'''


def host_sleepers():
    return [p for p in sbxlib.coiltest.procs()
            if sbxlib.coiltest.cmdline(p).strip() == "sleep 987"]


def daemon_check(tap, r, ctx, p):
    daemons = [c for _, c in r.leftovers if "sleep 987" in c]
    if p == "none":
        tap.ok(daemons, "none: the daemon outlives the session (%s)"
               % daemons, r)
    # and when coil is killed outright, with the daemon running
    r2 = sbxlib.run(p, [DAEMON + 'import time; time.sleep(60)'], ctx["wd"],
                    kill_after=3, kill_when=lambda: bool(host_sleepers()))
    daemons = [c for _, c in r2.leftovers if "sleep 987" in c]
    if r2.skipped:
        tap.skip("%s: a killed coil" % p, r2.skip_reason)
    elif p == "none":
        tap.ok(daemons, "none: the daemon outlives a killed coil", r2)
    else:
        tap.ok(not r2.leftovers, "%s: nothing outlives a killed coil%s" % (
            p, "" if not r2.leftovers else ": %s" % r2.leftovers), r2)
    tap.ok(not host_sleepers(), "%s: no 'sleep 987' is left on the host "
           "(the harness's PID namespace took it)" % p)


add(Row(
    "daemon", "procs",
    "a setsid'ed, double-forked daemon is gone when the session ends, even "
    "when coil is killed (the session's PID namespace); strict refuses "
    "the fork; under none it outlives coil, until the harness's PID "
    "namespace ends",
    [DAEMON],
    expect=[(STRICT, "denied", ["daemon"]),
            (("none", "standard"), "allowed", ["daemon"])],
    check=daemon_check))

KILL = r'''
ns = os.readlink("/proc/self/ns/pid")
if ns == %(ns)r:
    print("RESULT contained DENIED same pid namespace as the harness", flush=True)
    raise SystemExit(0)
print("RESULT contained ALLOWED %%s" %% ns, flush=True)
t("hook", lambda: os.kill(-1, 9))
k("kernel", lambda c: c.kill(-1, 9))
import time; time.sleep(0.3)
print("RESULT alive ALLOWED", flush=True)
'''
# The containment check goes first as a cell of its own, so that it is
# seen even when the kill takes coil with it (under none); there the kill
# cell also copies its lines to a file in the work dir, and clears the
# signal the worker gets when init dies, to live a moment longer.
TEE = r'''
class _Tee:
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


def kill_cells(ctx, p):
    kill = KILL % {"ns": sbxlib.pid_ns()}
    contained = kill[:kill.index('t("hook"')]
    return [contained, (TEE if p == "none" else "") + kill]


def kill_check(tap, r, ctx, p):
    out = os.path.join(ctx["wd"], "kill-all.out")
    if os.path.exists(out):
        with open(out) as f:
            r.add_output(f.read())
        os.remove(out)
    if not tap.ok(r.get("contained")[0] == "ALLOWED", "%s: the cell is in a "
                  "PID namespace other than the harness's" % p, r):
        return
    if p == "none":
        tap.allowed(r, "hook")
        tap.ok(not r.supervisor_ok, "none: every process of the harness's "
               "namespace, supervisor included, is killed", r)
        return
    tap.denied(r, "hook")
    tap.ok(r.get("alive")[0] == "ALLOWED", "%s: through libc the worker "
           "survives its own kill(-1, 9)" % p, r)
    tap.session(r)


add(Row(
    "kill-all", "procs",
    "os.kill(-1, 9) as root: the hook denies it, the kernel limits it to the "
    "session; only in a proven PID namespace (coil's, and the harness's "
    "around it: under none it kills the harness's namespace only)",
    kill_cells, check=kill_check, session=False,
    kw=lambda p: {"need": () if p == "none" else ("pid namespace",)}))

add(Row(
    "kill-parent", "procs",
    "os.kill(os.getppid(), 9): the worker's parent is init, out of its "
    "reach (Landlock's signal scope, PID 1 of the namespace); under none "
    "init dies, the supervisor starts another and the session goes on",
    [r'''
ctypes.CDLL(None).prctl(1, 0)
ppid = os.getppid()
t("hook", lambda: os.kill(ppid, 9))
k("kernel", lambda c: c.kill(ppid, 9))
import time; time.sleep(0.2)
print("RESULT alive ALLOWED parent %d" % os.getppid(), flush=True)
'''],
    # under none the worker dies with init, often before t() can print
    # that the kill went through: the warning is the control's proof
    expect=[(SBX, "denied", ["hook"]), (SBX, "kernel", ["kernel"])],
    check=lambda tap, r, ctx, p: p != "none" or tap.ok(
        any("init process was killed" in w for x in r.responses if x
            for w in x.get("warnings", ())),
        "none: a response says init was killed", r)))


def unshare_check(tap, r, ctx, p):
    if p != "none":
        tap.ok(r.cells.get(1) == ("signal", "31"), "%s: an x32 syscall "
               "kills the worker with SIGSYS (%s)" % (p, r.cells.get(1)), r)


add(Row(
    "unshare", "procs",
    "unshare(2) and clone(2) with namespace flags through ctypes: seccomp "
    "refuses them (EPERM); the x32 syscall table kills (SIGSYS)",
    [r'''
CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWNET = 0x10000000, 0x20000, 0x40000000
k("unshare-user", lambda c: c.unshare(CLONE_NEWUSER))
k("unshare-mount", lambda c: c.unshare(CLONE_NEWNS))
k("unshare-net", lambda c: c.unshare(CLONE_NEWNET))
k("clone-newuser", lambda c: c.syscall(56, CLONE_NEWUSER | 17, 0, 0, 0, 0))
k("setns", lambda c: c.setns(os.open("/proc/self/ns/net", os.O_RDONLY), 0))
''', r'''
print("RESULT x32 ALLOWED returned %d" % _libc.syscall(0x40000000 | 272, 0), flush=True)
'''],
    expect=[(NONE, "allowed", ["unshare-user"]),
            (SBX, ("errno", "EPERM"), ["unshare-user", "unshare-mount",
                                       "unshare-net", "clone-newuser",
                                       "setns"])],
    check=unshare_check))


def io_uring_disabled():
    try:
        with open("/proc/sys/kernel/io_uring_disabled") as f:
            return int(f.read())
    except OSError:
        return 0


def io_uring_check(tap, r, ctx, p):
    if p == "none":
        if io_uring_disabled():
            tap.skip("none: io_uring works", "io_uring is disabled on this "
                     "machine (kernel.io_uring_disabled=%d)"
                     % io_uring_disabled())
        else:
            tap.allowed(r, "io_uring")


add(Row(
    "io-uring", "procs",
    "io_uring through ctypes: seccomp refuses io_uring_setup (its "
    "operations bypass seccomp filtering)",
    [r'''
params = ctypes.create_string_buffer(120)
k("io_uring", lambda c: c.syscall(425, 8, params))
'''],
    expect=[(SBX, ("errno", "EPERM"), ["io_uring"])],
    check=io_uring_check))

# ------------------------------------------------------------ limits

FORK_BOMB = r'''
import time
me = os.getpid(); t0 = time.time(); err = None; n = 0
while time.time() - t0 < 150:   # a bound, not a budget: see bomb_kw
    try:
        if os.fork() == 0:
            continue            # every child forks on
        n += 1
    except OSError as e:
        err = e
        break
if os.getpid() != me:
    time.sleep(1)
    os._exit(0)
print("RESULT bomb %s %s: %s" % ("DENIED" if err else "ALLOWED",
      type(err).__name__, err), flush=True)
'''


def bomb_check(tap, r, ctx, p):
    v, text = r.get("bomb")
    if p == "strict":
        tap.denied(r, "bomb")
    else:
        tap.ok(v == "DENIED" and "Resource temporarily unavailable" in text,
               "%s: the bomb is stopped by %s (%s)" % (
                   p, "the harness's own pids.max" if p == "none" else
                   "the session's pids.max", text), r)


def bomb_kw(p):
    # The bombs run until a limit stops them, in well under a second on
    # an idle machine; on a loaded one (ASan, a busy CI) the 512 forks to
    # the harness's limit once took over 20 s, so the cells may take long.
    return {"cgroup": (512, 3 << 30), "timeout": 400,
            "args": ("--max-procs", "128"),
            "need": () if p == "none" else ("cgroup pids",)}


add(Row(
    "fork-bomb", "limits",
    "a fork bomb is stopped by the session's pids cgroup (root ignores "
    "RLIMIT_NPROC); only in the harness's proven cgroup",
    [FORK_BOMB], check=bomb_check, kw=bomb_kw))


def threads_check(tap, r, ctx, p):
    v, text = r.get("threads")
    n = int(text.split()[0]) if text[:1].isdigit() else -1
    if p == "none":
        tap.ok(v == "DENIED" and n > 300, "none: threads run until the "
               "harness's own limit (%d threads)" % n, r)
    else:
        tap.ok(v == "DENIED" and 0 < n < 128 and "can't start new thread"
               in text, "%s: stopped at the session's limit of 128 tasks "
               "(%d threads: %s)" % (p, n, text[:80]), r)


add(Row(
    "thread-bomb", "limits",
    "a thread bomb is stopped by the process limit (threads are tasks); "
    "only in the harness's proven cgroup",
    [r'''
import threading
ev = threading.Event(); n = 0; err = None
try:
    while n < 20000:
        threading.Thread(target=ev.wait, daemon=True).start()
        n += 1
except (RuntimeError, OSError) as e:
    err = e
ev.set()
print("RESULT threads %s %d %s: %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__, err), flush=True)
'''], check=threads_check, kw=bomb_kw))

MEM_ONE = r'''
chunks = []; err = None
try:
    while len(chunks) < 6 * 64:                  # up to 6 GiB
        chunks.append(b"\1" * (16 << 20))        # touched, so charged
except MemoryError as e:
    err = e
n = len(chunks) * 16
del chunks
print("RESULT one %s %d MiB %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__), flush=True)
'''
# four processes of 150 MiB: 600 MiB fit in the harness's 1 GiB, not in
# the session's 256M
MEM_MANY = r'''
kids = []
def hog():
    try:
        x = b"\1" * (150 << 20)
        import time; time.sleep(2)
        os._exit(0)
    except MemoryError:
        os._exit(3)
for i in range(4):
    try:
        pid = os.fork()
    except OSError as e:
        print("RESULT many DENIED %s: %s" % (type(e).__name__, e), flush=True)
        break
    if pid == 0:
        hog()
    kids.append(pid)
else:
    killed = 0
    for pid in kids:
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == 9:
            killed += 1
    print("RESULT many %s %d of 4 killed" % ("DENIED" if killed else
          "ALLOWED", killed), flush=True)
'''


def mem_check(tap, r, ctx, p):
    if p == "none":
        tap.ok(r.cells.get(0) == ("signal", "9"), "none: one process grows "
               "until the harness's memory cgroup kills it (%s)"
               % (r.cells.get(0),), r)
        tap.ok(r.get("many") == ("ALLOWED", "0 of 4 killed"), "none: four "
               "150 MiB processes fit in the harness's 1 GiB (%s)"
               % (r.get("many"),), r)
        return
    v, text = r.get("one")
    rl = r.report["mechanisms"]["rlimits"]["detail"] if r.report else ""
    if "DATA=unset" in rl:
        # a sanitizer build sets no RLIMIT_DATA: the cgroup stops it
        tap.ok(r.cells.get(0) == ("signal", "9"), "%s: one process is "
               "killed by the session's memory cgroup (%s)" % (p, rl), r)
    else:
        tap.ok(v == "DENIED" and "MemoryError" in text, "%s: one process "
               "gets MemoryError at --memory 256M (%s)" % (p, text), r)
    if p == "strict":
        tap.denied(r, "many")
    else:
        v, text = r.get("many")
        tap.ok(v == "DENIED" and text.split()[:1] in (["1"], ["2"], ["3"],
                                                     ["4"]), "standard: the "
               "processes together are held to 256M by the memory cgroup "
               "(%s)" % text, r)


add(Row(
    "memory-bomb", "limits",
    "a memory bomb: in one process RLIMIT_DATA (MemoryError), across "
    "processes the session's memory cgroup; only in the harness's proven "
    "cgroup (1 GiB)",
    [MEM_ONE, MEM_MANY], check=mem_check,
    kw=lambda p: {"cgroup": (768, 1 << 30), "args": ("--memory", "256M"),
                  "need": () if p == "none" else ("cgroup memory",)}))


def fill_check(tap, r, ctx, p):
    v, text = r.get("fill")
    size = int(text.split()[0]) if text[:1].isdigit() else -1
    if p == "none":
        tap.ok(v == "DENIED" and size == 256, "none: writes until the "
               "harness's own 256 MiB limit (%s)" % text, r)
    else:
        tap.ok(v == "DENIED" and size == 64 and "File too large" in text,
               "%s: stopped at 64 MiB with EFBIG (%s)" % (p, text), r)
    tap.ok(not os.path.exists(os.path.join(ctx["wd"], "fill.bin")),
           "%s: the file was removed" % p)


add(Row(
    "disk-fill", "limits",
    "a disk-filling loop stops at --max-file-size with EFBIG (not a "
    "SIGXFSZ death); under none the harness's RLIMIT_FSIZE stops it",
    [r'''
n = 0; err = None
with open("fill.bin", "wb") as f:
    try:
        while n < (8 << 30):
            f.write(b"\0" * (1 << 20)); f.flush(); n += 1 << 20
    except OSError as e:
        err = e
print("RESULT fill %s %d MiB %s: %s" % ("DENIED" if err else "ALLOWED",
      n >> 20, type(err).__name__, err), flush=True)
os.remove("fill.bin")
'''], check=fill_check,
    kw={"fsize": 256 << 20, "args": ("--max-file-size", "64M")}))


def files_check(tap, r, ctx, p):
    v, text = r.get("files")
    if p == "none":
        tap.allowed(r, "files", "no limit of coil's")
    else:
        tap.ok(v == "DENIED" and "Too many open files" in text,
               "%s: stopped at the open-files limit (%s)" % (p, text), r)


add(Row(
    "open-files", "limits",
    "ten thousand open files: EMFILE at the open-files limit; under none "
    "(the harness raises the soft limit) they all open",
    [r'''
fs = []; err = None
try:
    for i in range(10000):
        fs.append(open("/dev/null"))
except OSError as e:
    err = e
n = len(fs)
for f in fs:
    f.close()
print("RESULT files %s %d %s: %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__, err), flush=True)
'''], check=files_check))
