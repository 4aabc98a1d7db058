#!/usr/bin/python3
# The host guard catches what a test does to the host, by name, and is
# quiet when nothing changed: record a decoy host (etc, usr/local, a
# root's and a user's ~/.ssh in a temp dir), run broken-test.sh on it,
# compare, and expect each of its changes to fail a check of its own.
# Also: what this user cannot read is recorded by stat and still guarded,
# a missing record fails, and new session leftovers are reported.
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True          # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from coiltest import check, done, skip, workdir, cleanup  # noqa: E402

GUARD = os.path.join(HERE, "hostguard.py")
BROKEN = os.path.join(HERE, "broken-test.sh")
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def make_decoy(d):
    """A small host: the files the guard is for, a symlink, a fifo, a
    file over the hash limit, a root's ~/.ssh; a user's ~/.ssh absent."""
    write(d + "/.hostguard-decoy", "")
    write(d + "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n")
    write(d + "/etc/shadow", "root:*:19000:0:99999:7:::\n", 0o640)
    write(d + "/etc/group", "root:x:0:\n")
    write(d + "/etc/sudoers", "root ALL=(ALL:ALL) ALL\n", 0o440)
    write(d + "/etc/hosts", "127.0.0.1 localhost\n")
    write(d + "/etc/ssh/sshd_config", "PermitRootLogin no\n")
    os.symlink("/proc/mounts", d + "/etc/mtab")
    os.mkfifo(d + "/etc/initctl", 0o600)
    write(d + "/usr/local/bin/tool", "#!/bin/sh\n", 0o755)
    write(d + "/usr/local/lib/libbig.so", "\0" * (3 << 19))   # 1.5 MiB
    write(d + "/root/.ssh/authorized_keys", "ssh-ed25519 AAAA me\n", 0o600)
    os.chmod(d + "/root/.ssh", 0o700)
    os.makedirs(d + "/home/user")
    os.makedirs(d + "/outside")
    return [d + "/etc", d + "/usr/local", d + "/root/.ssh",
            d + "/home/user/.ssh"]


def guard(*args, env=None, preexec_fn=None, script=GUARD):
    p = subprocess.run([sys.executable, script, *args], env=env,
                       preexec_fn=preexec_fn, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    return p.returncode, p.stdout


def failures(out):
    """The names of the compare's failed checks."""
    return [m.group(1) for m in re.finditer(r"^not ok \d+ - (.*)$", out,
                                            re.M)]


wd = workdir("guard-")
d = os.path.join(wd, "host")
roots = make_decoy(d)
rec = os.path.join(wd, "host-guard.record")

# A clean run passes and says how much it looked at.
rc, out = guard("record", rec, *roots)
check(rc == 0 and os.path.exists(rec), "the decoy is recorded", out)
with open(rec) as f:
    text = f.read()
check(re.search(r"^%s/etc/passwd file mode=0644 owner=\d+:\d+ links=1 "
                r"size=32 sha256=[0-9a-f]{64} ctime=\d+$" % re.escape(d),
                text, re.M),
      "the record is one readable line an entry", text[:2000])
check(re.search(r"/etc/mtab link owner=\S+ links=1 ctime=\d+ -> "
                r"/proc/mounts$",
                text, re.M) and
      re.search(r"/etc/initctl fifo mode=0600 ", text) and
      re.search(r"/libbig.so file .* size=1572864 ino=\d+ mtime=\d+ "
                r"ctime=\d+$", text, re.M),
      "symlinks by target, a fifo unopened, a big file by inode and times",
      text[:3000])
rc, out = guard("compare", rec)
check(rc == 0 and not failures(out), "a clean run passes", out)
check(re.search(r"^ok \d+ - host unchanged: 10 entries under %s/etc$"
                % re.escape(d), out, re.M) and
      re.search(r"^ok \d+ - host unchanged: 0 entries under %s/home/user/"
                r"\.ssh \(absent\)$" % re.escape(d), out, re.M),
      "it says what it found unchanged", out)

# The broken test passes, as a broken test does; the guard does not.
# dpkg, meanwhile, installs something: the guard says so, as a hint.
dpkg_log = os.path.join(wd, "dpkg.log")
write(dpkg_log, "2026-11-30 19:00:00 status installed old:amd64 1\n")
genv = dict(os.environ, HOST_GUARD_DPKG_LOG=dpkg_log)
rc, out = guard("record", rec, *roots, env=genv)
with open(dpkg_log, "a") as f:
    f.write("2026-11-30 19:30:16 install tmux:amd64 <none> 3.3a-3\n")
env = dict(os.environ, srcdir=SRCDIR)
b = subprocess.run(["/bin/sh", BROKEN, d], env=env, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True, timeout=60)
check(b.returncode == 0, "the broken test itself passes", b.stdout)
rc, out = guard("compare", rec, env=genv)
got = failures(out)
root = os.getuid() == 0
want = {
    "etc/passwd": r"^host changed \S+/etc/passwd: mode 0644 -> 0600$",
    "etc/shadow": r"^host changed \S+/etc/shadow: links 1 -> 2; "
                  r"sha256 \w+\.\. -> \w+\.\.$",
    "etc/group": r"^host changed \S+/etc/group: size 10 -> 20; sha256 ",
    "etc/sudoers.d": r"^host added \S+/etc/sudoers.d: dir mode=0755 "
                     r"\S+ \(and 1 entry inside\)$",
    "etc/ssh/sshd_config": r"^host removed \S+/etc/ssh/sshd_config: was "
                           r"file mode=0644 .* size=19 sha256=\w{16}\.\.$",
    "etc/mtab": r"^host changed \S+/etc/mtab: target /proc/mounts -> "
                r"/tmp/evil-mounts$",
    "etc/hosts": r"^host changed \S+/etc/hosts: file -> link \(was file "
                 r".*; now link .* -> /tmp/evil-hosts\)$",
    "libbig.so": r"^host touched \S+/libbig.so: ctime 20\S+Z -> 20\S+Z, "
                 r"all else as before: rewritten in place",
    "etc/sudoers": r"^host touched \S+/etc/sudoers: ctime \S+ -> \S+, all "
                   r"else as before: a chmod, chown or link undone$",
    "usr/local/bin": r"^host touched \S+/usr/local/bin: ctime \S+ -> \S+, "
                     r"all else as before: an entry made and removed",
    "usr/local/lib/evil": r"^host added \S+/usr/local/lib/evil: dir "
                          r".*\(and 2 entries inside\)$",
    "usr/local/bin/tool": (r"^host changed \S+/usr/local/bin/tool: mode "
                           r"0755 -> 4755; owner 0:0 -> 65534:65534$" if root
                           else r"^host changed \S+/usr/local/bin/tool: "
                           r"mode 0755 -> 4755$"),
    "root/.ssh": r"^host removed \S+/root/.ssh: was dir mode=0700 .*"
                 r"\(and 1 entry inside\)$",
    "home/user/.ssh": r"^host added \S+/home/user/.ssh: dir .*\(and 1 "
                      r"entry inside\)$",
}
check(rc == 1, "the guard fails after the broken test", out)
for what, pattern in want.items():
    hits = [g for g in got if re.search(pattern, g)]
    check(len(hits) == 1, "the guard names the change to %s" % what,
          "no failed check matches /%s/ in:\n%s" % (pattern, out))
check(len(got) == len(want), "nothing else is reported (%d failures, "
      "%d changes)" % (len(got), len(want)), out)
check(re.search(r"^# before: file mode=0644 .*\n# after:  file mode=0600 "
                r".*\n# to put it back: chmod 0644 \S+/etc/passwd$",
                out, re.M),
      "a failure shows before and after, and how to put a mode back", out)
check(re.search(r"^# dpkg ran during the suite.*\n# 2026-11-30 19:30:16 "
                r"install tmux:amd64 <none> 3.3a-3$", out, re.M) and
      "status installed old" not in out,
      "what dpkg did since the record is shown, as a hint", out)

# A new record of the broken host compares clean: the walk is stable.
rc, out = guard("record", rec, *roots)
rc, out = guard("compare", rec)
check(rc == 0 and not failures(out), "a new record compares clean", out)

# No record, no pass.
rc, out = guard("compare", os.path.join(wd, "no-such.record"))
check(rc == 1 and "a host record to compare with" in out,
      "a missing record fails", out)

# What this user cannot read is recorded by lstat and still guarded.
# Root reads everything, so as root the guard runs as nobody, from a
# world-readable copy in /tmp (nobody may not search the build tree, nor
# $TMPDIR), on a decoy there.
nd = tempfile.mkdtemp(prefix="guard-", dir="/tmp")
try:
    os.chmod(nd, 0o755)
    for f, sub in ((GUARD, "guard"),
                   (os.path.join(HERE, "..", "lib", "coiltest.py"), "lib")):
        os.makedirs(os.path.join(nd, sub), exist_ok=True)
        shutil.copy(f, os.path.join(nd, sub))
    script = os.path.join(nd, "guard", "hostguard.py")
    write(nd + "/etc/public", "hello\n")
    write(nd + "/etc/secret", "key\n", 0o600)
    write(nd + "/etc/private/inner", "x\n", 0o600)
    os.chmod(nd + "/etc/private", 0o700)
    os.makedirs(nd + "/out", 0o777)
    os.chmod(nd + "/out", 0o777)
    nrec = os.path.join(nd, "out", "record")
    drop = None
    if root:
        def drop():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
    else:
        os.chmod(nd + "/etc/secret", 0o000)
        os.chmod(nd + "/etc/private", 0o000)
    try:
        rc, out = guard("record", nrec, nd + "/etc", preexec_fn=drop,
                        script=script)
    except subprocess.SubprocessError as e:     # root without CAP_SETUID
        rc, out = None, "cannot become nobody: %s" % e
    if rc is None:
        for what in ("records", "recorded by stat", "a chmod caught",
                     "a rewrite caught"):
            skip("unreadable files: " + what, out)
    else:
        check(rc == 0, "the guard records as a user who cannot read all",
              out)
        with open(nrec) as f:
            ntext = f.read()
        check(re.search(r"/etc/secret file mode=0[60]00 \S+ links=1 size=4 "
                        r"unreadable ctime=\d+$", ntext, re.M) and
              re.search(r"/etc/private dir mode=0[70]00 \S+ ctime=\d+ "
                        r"unlisted$", ntext, re.M) and
              re.search(r"/etc/public file .* sha256=", ntext),
              "an unreadable file and dir are recorded by stat, and said so",
              ntext)
        os.chmod(nd + "/etc/secret", 0o644 if root else 0o004)
        rc, out = guard("compare", nrec, preexec_fn=drop, script=script)
        check(rc == 1 and any(re.search(r"/etc/secret: mode 0[60]00 -> "
                                        r"0(644|004)(; sha256 \(unreadable"
                                        r"\) -> \w+\.\.)?$", g)
                              for g in failures(out)),
              "a change to an unreadable file's mode is still caught", out)
        # Rewritten, same size, same mode: ctime alone tells.
        os.chmod(nd + "/etc/secret", 0o600 if root else 0o000)
        guard("record", nrec, nd + "/etc", preexec_fn=drop, script=script)
        if not root:
            os.chmod(nd + "/etc/secret", 0o600)
        with open(nd + "/etc/secret", "r+") as f:
            f.write("KEY\n")
        if not root:
            os.chmod(nd + "/etc/secret", 0o000)
        rc, out = guard("compare", nrec, preexec_fn=drop, script=script)
        check(rc == 1 and any(re.search(r"/etc/secret: ctime \S+ -> \S+, "
                                        r"all else as before: rewritten in "
                                        r"place", g) for g in failures(out)),
              "an unreadable file rewritten is caught by its ctime", out)
finally:
    os.chmod(nd + "/etc/private", 0o700)        # else rmtree cannot
    shutil.rmtree(nd, ignore_errors=True)

# Leftovers of a dead session: reported; a failure only when asked.
tmp = os.path.join(wd, "tmp")
os.makedirs(tmp)
lenv = dict(os.environ, TMPDIR=tmp)
lenv.pop("HOST_GUARD_LEFTOVERS", None)
rc, out = guard("record", rec, d + "/etc", env=lenv)
dead = subprocess.Popen(["true"])
dead.wait()
os.makedirs(os.path.join(tmp, "coil-%d-AbCdEf" % dead.pid))
os.makedirs(os.path.join(tmp, "coil-%d-live" % os.getpid()))
rc, out = guard("compare", rec, env=lenv)
check(rc == 0 and re.search(r"^# coil leftovers new since the record: "
                            r"1 temp dir, \d+ cgroups? \(not a failure",
                            out, re.M) and
      "coil-%d-AbCdEf" % dead.pid in out,
      "a dead session's new temp dir is reported, a live one's is not",
      out)
lenv["HOST_GUARD_LEFTOVERS"] = "fail"
rc, out = guard("compare", rec, env=lenv)
check(rc == 1 and any(re.search(r"coil leftovers new since the record: "
                                r"1 temp dir,", g) for g in failures(out)),
      "with HOST_GUARD_LEFTOVERS=fail it fails the run", out)

cleanup(wd)
done()
