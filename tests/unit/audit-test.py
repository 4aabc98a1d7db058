"""src/worker/audit.py without root, a sandbox or coil: Policy objects built from
conf dicts like sandbox_audit_conf()'s (none, standard, strict, with
--allow-read, --allow-write, --allow-net), over a machine made of tables
(FakeHost), asked through the handler table with each event's arguments as
CPython passes them; every denial's words compared whole.  The hook itself
is installed only in child processes (the last part).

    /usr/bin/python3 tests/unit/audit-test.py
"""
import importlib.util
import json
import os
import posixpath
import resource
import socket
import subprocess
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", "lib"))
import coiltest                                         # noqa: E402
from coiltest import check, diag, done                  # noqa: E402

AUDIT_PY = os.path.join(coiltest.TOP, "src", "worker", "audit.py")
# src/worker/stdimp.py and src/worker/policy.py run first in audit.py's namespace, as
# pycode.c runs them (Makefile.am's PYEMBED_PY).  policy.py's frames get
# audit.py's file name, as src/pyembed gives all of them one ("<coil>"):
# audit.py's _callers tells the hook's own frames by it.
STDIMP_PY = os.path.join(coiltest.TOP, "src", "worker", "stdimp.py")
POLICY_PY = os.path.join(coiltest.TOP, "src", "worker", "policy.py")
spec = importlib.util.spec_from_file_location("audit", AUDIT_PY)
audit = importlib.util.module_from_spec(spec)
for first, name in ((STDIMP_PY, STDIMP_PY), (POLICY_PY, AUDIT_PY)):
    with open(first) as f:
        exec(compile(f.read(), name, "exec"), audit.__dict__)
spec.loader.exec_module(audit)       # no `conf` given: installs nothing

WD = "/home/ann"                     # a work dir that is a home
TMP = "/tmp/coil-100-Ab3dEf"         # the private temp dir
PID, PPID = 2, 1                     # the worker and init, in its pid ns
INF = resource.RLIM_INFINITY
CREDS = [WD + "/.ssh", WD + "/.netrc"]   # what mask_credentials covered

# --------------------------------------------------------------- the confs

DEV = [(d, "rw") for d in ("/dev/null", "/dev/zero", "/dev/full",
                           "/dev/random", "/dev/urandom")]
SYS = [("/proc", "r"), ("/sys/devices/system/cpu", "r"),
       ("/sys/devices/system/node", "r")]
STANDARD_RULES = [(d, "rx") for d in ("/usr", "/usr/bin", "/usr/sbin",
                                      "/usr/lib", "/usr/lib32", "/usr/lib64",
                                      "/opt")] + \
    [("/etc", "r")] + SYS + DEV + \
    [("/tmp", "rwx"), ("/dev/shm", "rwx"), (TMP, "rwx"), (WD, "rwx")]
STRICT_RULES = [(d, "r") for d in (
    "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib", "/usr/share",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
    "/etc/timezone", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    "/etc/python3", "/etc/python3.11", "/etc/fonts")] + SYS + DEV + \
    [("/tmp", "rw"), ("/dev/shm", "rw"), (TMP, "rw"), (WD, "rw")]


def conf(profile="standard", allow_read=(), allow_write=(), allow_net=False,
         hidden=CREDS, etc_hidden=(), **over):
    """What sandbox_audit_conf() gives on a machine where every mechanism
    is on, for these options."""
    strict = profile == "strict"
    rules = list(STRICT_RULES if strict else STANDARD_RULES)
    rules += [(d, "r" if strict else "rx") for d in allow_read]
    rules += [(d, "rw" if strict else "rwx") for d in allow_write]
    c = {"profile": profile, "workdir": WD, "tmpdir": TMP,
         "allow_net": allow_net and not strict, "net_enforced": True,
         "landlock_fs": True, "mount_root": True, "idmap": True,
         "signals_scoped": True, "exec": not strict, "fork": not strict,
         "socket": not strict, "setid": False,
         "rules": [list(r) for r in rules],
         "hidden": list(hidden) + list(etc_hidden), "masked": list(hidden),
         "root": True, "memory": 4 << 30, "max_procs": 256,
         "max_file_size": 1 << 30, "max_files": 1024}
    c.update(over)
    return c


class FakeHost:
    """The machine, as tables: files that exist (their parents too),
    symlinks, files that are not world-readable, PATH, rlimits."""

    def __init__(self):
        self.files = set()
        for f in ("/etc/passwd", "/etc/shadow", "/etc/hostname",
                  "/usr/bin/true", "/usr/bin/python3",
                  "/usr/lib/python3.11/os.py", WD + "/data.csv",
                  WD + "/run.sh", WD + "/.ssh/id_rsa", WD + "/.netrc",
                  WD + "/.sshx", TMP + "/scratch", "/srv/data/x.csv",
                  "/srv/data/tool", "/srv/out/old", "/proc/1/environ",
                  "/proc/2/environ", "/proc/1/status", "/tmp/t",
                  "/proc/1/mem", "/proc/2/mem", "/proc/sys/kernel/hostname",
                  "/sys/fs/cgroup/pids/coil.9/pids.max",
                  "/sys/kernel/uevent_helper", "/etc/ssh/ssh_host_rsa_key",
                  "/etc/gshadow"):
            while f != "/":
                self.files.add(f)
                f = posixpath.dirname(f)
        self.links = {WD + "/lnk": "/etc/shadow", WD + "/key": ".ssh/id_rsa",
                      WD + "/lib": "/usr/lib", WD + "/escape": "/usr/lib/e"}
        self.unreadable = {"/etc/shadow", "/etc/gshadow",
                           "/etc/ssh/ssh_host_rsa_key"}
        self.path = {"true": "/usr/bin/true", "python3": "/usr/bin/python3"}
        self.limits = {resource.RLIMIT_NOFILE: (1024, 1024),
                       resource.RLIMIT_AS: (4 << 30, 4 << 30),
                       resource.RLIMIT_NPROC: (256, 256),
                       resource.RLIMIT_FSIZE: (1 << 30, 1 << 30),
                       resource.RLIMIT_CORE: (0, INF)}

    def cwd(self):
        return WD

    def realpath(self, p):
        p = posixpath.normpath(p)
        for _ in range(40):
            parts = p.split("/")
            for i in range(2, len(parts) + 1):
                pre = "/".join(parts[:i])
                if pre in self.links:
                    t = posixpath.join(posixpath.dirname(pre), self.links[pre])
                    p = posixpath.normpath("/".join([t] + parts[i:]))
                    break
            else:
                return p
        return p

    def lexists(self, p):
        return p in self.files or p in self.links

    def islink(self, p):
        return p in self.links

    def isdir(self, p):
        return any(f.startswith(p + "/") for f in self.files)

    def readable(self, p):
        return p not in self.unreadable

    def which(self, name):
        return self.path.get(name)

    def pid(self):
        return PID

    def ppid(self):
        return PPID

    def getrlimit(self, res):
        return self.limits[res]


HOST = FakeHost()
P = {
    "std": audit.Policy(conf(), HOST),
    "net": audit.Policy(conf(allow_net=True), HOST),
    "rw": audit.Policy(conf(allow_read=["/srv/data"],
                            allow_write=["/srv/out"]), HOST),
    "ssh": audit.Policy(conf(allow_read=[WD + "/.ssh"],
                             hidden=[WD + "/.netrc"]), HOST),
    "strict": audit.Policy(conf("strict"), HOST),
    "strict-net": audit.Policy(conf("strict", allow_net=True), HOST),
    "no-landlock": audit.Policy(conf(landlock_fs=False), HOST),
    "no-idmap": audit.Policy(conf(idmap=False), HOST),
    "no-pidns": audit.Policy(conf(signals_scoped=False), HOST),
    "no-root": audit.Policy(conf(mount_root=False), HOST),
    # seccomp off (skipped, or no CONFIG_SECCOMP_FILTER): the kernel
    # lets set-id modes through, so the hook says nothing of them
    "no-seccomp": audit.Policy(conf(setid=True), HOST),
    # Landlock left /etc's secrets out (the worker is uid 0 outside, or
    # the user has groups): as root, and as a user who may not read them
    "etc": audit.Policy(conf(etc_hidden=["/etc/gshadow", "/etc/ssh/"
                                         "ssh_host_rsa_key"],
                             idmap=False), HOST),
    "etc-user": audit.Policy(conf(etc_hidden=["/etc/gshadow"], idmap=False,
                                  root=False), HOST),
    # an --allow-write that names /proc (refused since at start): the
    # kernel answers, the hook does not speak for it
    "rw-proc": audit.Policy(conf(allow_write=["/proc"]), HOST),
}

# ------------------------------------------------------- the words, whole

OFF = "%s %s off in the %s sandbox (%s); start coil with %s to allow %s"


def off(what, detail, lift, profile="standard", are=False):
    return OFF % (what, "are" if are else "is", profile, detail, lift,
                  "them" if are else "it")


def reading_beyond(detail, verb="reading", profile="standard"):
    files = "Python's own files" if profile == "strict" else \
        "the system's files"
    return off("%s beyond %s and the work directory '%s'" % (verb, files, WD),
               detail, "--allow-read DIR", profile)


def writing_outside(detail, what="writing", profile="standard"):
    return off("%s outside the work directory '%s' and the private temp dir"
               % (what, WD), detail, "--allow-write DIR", profile)


def secret(verb, path, detail, lift, profile="standard"):
    return off("%s '%s', which holds secrets," % (verb, path), detail,
               "%s %s" % (lift, path), profile)


def net(detail, profile="standard"):
    return off("network access", detail, "--allow-net", profile)


def starting(detail):
    return off("starting processes", detail, "--sandbox standard", "strict")


# Literal sentences, as the old audit.py worded them through the real coil
# (the rest are built by off() above, from the same parts).
SHADOW = ("reading '/etc/shadow', which is not world-readable, is off in the "
          "standard sandbox (open '/etc/shadow'); start coil with "
          "--allow-read /etc to allow it (all of '/etc')")
NETRC = ("reading '/home/ann/.netrc', which holds secrets, is off in the "
         "standard sandbox (open '.netrc', which is '/home/ann/.netrc'); "
         "coil covers it in every sandbox and --allow-read takes only "
         "directories: start coil with --sandbox none to allow it")
PROC_MEM = ("writing the kernel's files in /proc is off in the standard "
            "sandbox (open '/proc/1/mem' for writing); no --allow-write "
            "lifts it: start coil with --sandbox none to allow it")
CGROUP = ("writing cgroup files (the session's limits among them) is off in "
          "the standard sandbox (open '/sys/fs/cgroup/pids/coil.9/pids.max' "
          "for writing); coil sets the session's limits: start coil with "
          "--memory SIZE or --max-procs N to change them")
GSHADOW = ("reading '/etc/gshadow', which holds secrets, is off in the "
           "standard sandbox (open '/etc/gshadow'); start coil with "
           "--allow-read /etc to allow it (all of '/etc')")
SSH = ("reading '/home/ann/.ssh', which holds secrets, is off in the "
       "standard sandbox (open '.ssh/id_rsa', which is "
       "'/home/ann/.ssh/id_rsa'); start coil with --allow-read "
       "/home/ann/.ssh to allow it")
CONNECT = ("network access is off in the standard sandbox (socket.connect "
           "to 127.0.0.1:9); start coil with --allow-net to allow it")
CHMOD = ("changing files outside the work directory '/home/ann' is off in "
         "the standard sandbox (os.chmod '/usr/bin'); start coil with "
         "--allow-write DIR to allow it")
SETID = ("set-uid and set-gid bits are off in the %s sandbox (%s); they are "
         "not the cells' to set: files in the work directory are the "
         "host's, owned by the user who started coil, and a set-uid one "
         "would run as that user for anyone who can reach it; no option "
         "lifts it in a sandbox")
SYSTEM = ("starting processes is off in the strict sandbox (os.system "
          "'true'); start coil with --sandbox standard to allow it")

S = types.SimpleNamespace
UNIX, INET = S(family=1), S(family=2)
SOCK = object()          # socket.__new__'s first argument: not looked at
RD = os.O_RDONLY | os.O_CLOEXEC
WR = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
# open()'s flags for mode "w": what CPython passes in the "open" event
W = 524865

# (policy, event, args, the words or None when allowed)
CASES = [
    # reading
    ("std", "open", ("/etc/passwd", "r", RD), None),
    ("std", "open", ("/etc/shadow", "r", RD), SHADOW),
    ("std", "open", ("/etc/shadow", None, os.O_PATH | os.O_CLOEXEC), None),
    ("std", "open", (3, "r", RD), None),
    ("std", "open", ("data.csv", "r", RD), None),
    ("std", "open", (WD + "/data.csv", "rb", RD), None),
    ("std", "open", (TMP + "/scratch", "r", RD), None),
    ("std", "open", ("/usr/lib/python3.11/os.py", "r", RD), None),
    ("std", "open", ("/usr/lib/python3.11/missing.py", "r", RD), None),
    ("std", "open", (b"/etc/shadow", "rb", RD), SHADOW),
    ("std", "open", ("/root/.bashrc", "r", RD),
     reading_beyond("open '/root/.bashrc'")),
    ("std", "open", ("/srv/data/x.csv", "r", RD),
     reading_beyond("open '/srv/data/x.csv'")),
    ("rw", "open", ("/srv/data/x.csv", "r", RD), None),
    ("std", "open", ("/proc/1/environ", "r", RD),
     off("reading coil's own processes", "open '/proc/1/environ'",
         "--sandbox none")),
    ("std", "open", ("/proc/2/environ", "r", RD), None),
    ("std", "open", ("/proc/1/status", "r", RD), None),
    ("no-pidns", "open", ("/proc/1/environ", "r", RD), None),
    ("no-idmap", "open", ("/etc/shadow", "r", RD), None),
    ("no-landlock", "open", ("/etc/shadow", "r", RD), None),
    ("strict", "open", ("/etc/passwd", "r", RD), None),
    ("strict", "open", ("/usr/lib/python3.11/os.py", "r", RD), None),
    ("strict", "open", ("/etc/shadow", "r", RD),
     reading_beyond("open '/etc/shadow'", profile="strict")),
    ("strict", "open", ("/usr/bin/true", "rb", RD),
     reading_beyond("open '/usr/bin/true'", profile="strict")),
    # credentials in a work dir that is a home
    ("std", "open", (".ssh/id_rsa", "r", RD), SSH),
    ("std", "open", (WD + "/.ssh/id_rsa", "r", RD),
     secret("reading", WD + "/.ssh", "open '%s/.ssh/id_rsa'" % WD,
            "--allow-read")),
    ("std", "open", ("key", "r", RD),
     secret("reading", WD + "/.ssh", "open 'key', which is '%s/.ssh/id_rsa'"
            % WD, "--allow-read")),
    ("std", "open", (".netrc", "r", RD), NETRC),
    ("std", "open", (WD + "/.netrc", "a", W),
     NETRC.replace("reading", "writing").replace(
         "open '.netrc', which is '%s/.netrc'" % WD,
         "open '%s/.netrc' for writing" % WD).replace(
         "--allow-read", "--allow-write")),
    ("std", "open", (WD + "/.netrc", None, os.O_WRONLY),
     NETRC.replace("reading", "writing").replace(
         "open '.netrc', which is '%s/.netrc'" % WD,
         "open '%s/.netrc' for writing" % WD).replace(
         "--allow-read", "--allow-write")),
    ("std", "open", (".sshx", "r", RD), None),
    ("ssh", "open", (".ssh/id_rsa", "r", RD), None),
    ("ssh", "open", (".netrc", "r", RD), NETRC),
    # /etc's secrets: --allow-read takes the dir that holds one; as a
    # user who may not read it, nothing lifts it
    ("etc", "open", ("/etc/gshadow", "r", RD), GSHADOW),
    ("etc", "open", ("/etc/ssh/ssh_host_rsa_key", "r", RD),
     GSHADOW.replace("/etc/gshadow", "/etc/ssh/ssh_host_rsa_key").replace(
         "/etc to", "/etc/ssh to").replace("'/etc'", "'/etc/ssh'")),
    ("etc-user", "open", ("/etc/gshadow", "r", RD),
     "reading '/etc/gshadow', which holds secrets, is off in the standard "
     "sandbox (open '/etc/gshadow'); no option lifts it: the user who "
     "started coil may not read '/etc/gshadow'"),
    ("etc", "open", ("/etc/gshadow", "w", W),
     "writing '/etc/gshadow', which holds secrets, is off in the standard "
     "sandbox (open '/etc/gshadow' for writing); start coil with "
     "--allow-write /etc to allow it (all of '/etc')"),
    ("etc-user", "open", ("/etc/gshadow", "w", W),
     "writing '/etc/gshadow', which holds secrets, is off in the standard "
     "sandbox (open '/etc/gshadow' for writing); no option lifts it: the "
     "user who started coil may not write '/etc/gshadow'"),
    # the kernel's files: no --allow-* reaches them
    ("std", "open", ("/proc/1/mem", "r+b", os.O_RDWR), PROC_MEM),
    ("strict", "open", ("/proc/1/mem", "r+b", os.O_RDWR),
     PROC_MEM.replace("standard", "strict")),
    ("std", "open", ("/proc/2/mem", "r+b", os.O_RDWR),
     PROC_MEM.replace("/proc/1/mem", "/proc/2/mem")),
    ("std", "open", ("/proc/sys/kernel/hostname", "w", W),
     PROC_MEM.replace("/proc/1/mem", "/proc/sys/kernel/hostname")),
    ("rw-proc", "open", ("/proc/2/mem", "r+b", os.O_RDWR), None),
    ("std", "open", ("/proc/2/fd/pipe:[77]", "w", W),
     "reopening a descriptor through /proc for writing is off in the "
     "standard sandbox (open '/proc/2/fd/pipe:[77]' for writing); write "
     "through the descriptor itself (os.fdopen(fd, 'w'), os.dup(fd))"),
    ("std", "open", ("/sys/fs/cgroup/pids/coil.9/pids.max", "w", W), CGROUP),
    ("strict", "open", ("/sys/fs/cgroup/pids/coil.9/pids.max", "w", W),
     CGROUP.replace("standard", "strict")),
    ("std", "os.remove", ("/sys/fs/cgroup/pids/coil.9", -1),
     CGROUP.replace("writing", "changing", 1).replace(
         "open '/sys/fs/cgroup/pids/coil.9/pids.max' for writing",
         "os.remove '/sys/fs/cgroup/pids/coil.9'")),
    ("std", "open", ("/sys/kernel/uevent_helper", "w", W),
     "writing the kernel's settings in /sys is off in the standard sandbox "
     "(open '/sys/kernel/uevent_helper' for writing); no --allow-write "
     "lifts it: start coil with --sandbox none to allow it"),
    ("std", "open", ("/sys/kernel/uevent_helper", "r", RD),
     reading_beyond("open '/sys/kernel/uevent_helper'")),
    ("std", "open", ("/dev/sda", "rb", RD),
     "the machine's devices are off in the standard sandbox (open "
     "'/dev/sda'); the sandbox's /dev holds only full, null, random, "
     "urandom, zero: start coil with --sandbox none to allow them"),
    ("std", "open", ("/dev/null", "w", W), None),
    ("no-root", "open", ("/dev/sda", "rb", RD), None),
    ("strict", "open", (".ssh/id_rsa", "r", RD),
     secret("reading", WD + "/.ssh", "open '.ssh/id_rsa', which is "
            "'%s/.ssh/id_rsa'" % WD, "--allow-read", "strict")),
    ("std", "os.listdir", (".ssh",),
     secret("listing", WD + "/.ssh", "os.listdir '%s/.ssh'" % WD,
            "--allow-read")),
    ("std", "open", ("lnk", "r", RD),
     SHADOW.replace("(open '/etc/shadow')", "(open 'lnk')")),
    # writing
    ("std", "open", ("out.txt", "w", W), None),
    ("std", "open", (TMP + "/new", "w", W), None),
    ("std", "open", ("/tmp/t", "a", W), None),
    ("std", "open", ("data.csv", "r+", os.O_RDWR), None),
    ("std", "open", ("/usr/lib/x", "w", W),
     writing_outside("open '/usr/lib/x' for writing")),
    ("std", "open", ("/usr/lib/x", None, WR),
     writing_outside("open '/usr/lib/x' for writing")),
    # a symlinked parent: the kernel answers, without words (quick)
    ("std", "open", ("lib/x", "w", W), None),
    # the last step a symlink: looked at, and worded
    ("std", "open", ("escape", "w", W),
     writing_outside("open 'escape' for writing")),
    ("std", "open", ("/etc/passwd", "r+", os.O_RDWR),
     writing_outside("open '/etc/passwd' for writing")),
    # a dir the new root does not have, and without one
    ("std", "open", ("/nowhere/x", "w", W),
     writing_outside("open '/nowhere/x' for writing")),
    ("no-root", "open", ("/nowhere/x", "w", W), None),
    ("std", "open", ("/srv/out/new", "w", W),
     writing_outside("open '/srv/out/new' for writing")),
    ("rw", "open", ("/srv/out/new", "w", W), None),
    ("rw", "open", ("/srv/data/y", "w", W),
     writing_outside("open '/srv/data/y' for writing")),
    ("strict", "open", ("out.txt", "w", W), None),
    # listing, changing files
    ("std", "os.listdir", ("/root",),
     reading_beyond("os.listdir '/root'", "listing")),
    ("std", "os.scandir", ("/srv",),
     reading_beyond("os.listdir '/srv'", "listing")),
    ("std", "os.listdir", ("/etc",), None),
    ("std", "os.scandir", (None,), None),
    ("strict", "os.listdir", ("/etc",),
     reading_beyond("os.listdir '/etc'", "listing", "strict")),
    ("std", "os.remove", ("/usr/lib/missing", -1),
     writing_outside("os.remove '/usr/lib/missing'", "changing files")),
    ("std", "os.remove", ("data.csv", -1), None),
    ("std", "os.rmdir", ("/usr/lib", -1),
     writing_outside("os.rmdir '/usr/lib'", "changing files")),
    ("std", "os.mkdir", ("/usr/lib/newdir", 511, -1),
     writing_outside("os.mkdir '/usr/lib/newdir'", "changing files")),
    ("std", "os.mkdir", (WD + "/sub", 511, -1), None),
    ("std", "os.truncate", ("/etc/passwd", 0),
     writing_outside("os.truncate '/etc/passwd'", "changing files")),
    ("std", "os.truncate", (3, 0), None),
    ("std", "os.rename", ("data.csv", "/usr/lib/x", -1, -1),
     writing_outside("os.rename to '/usr/lib/x'", "changing files")),
    ("std", "os.rename", ("/etc/hostname", "hn", -1, -1),
     writing_outside("os.rename from '/etc/hostname'",
                     "hard-linking or moving files from")),
    ("std", "os.link", ("/etc/hostname", "hn", -1, -1),
     writing_outside("os.link from '/etc/hostname'",
                     "hard-linking or moving files from")),
    ("std", "os.rename", ("data.csv", "d2.csv", -1, -1), None),
    ("std", "os.symlink", ("/etc/shadow", "lnk2", -1), None),
    ("std", "os.symlink", ("x", "/usr/lib/lnk", -1),
     writing_outside("os.symlink to '/usr/lib/lnk'", "changing files")),
    ("std", "os.chmod", ("/usr/bin", 0o755, -1), CHMOD),
    ("std", "os.chmod", ("/usr/lib/missing", 0o755, -1), None),
    ("std", "os.chown", ("/etc/passwd", 0, 0, -1),
     off("changing files outside the work directory '%s'" % WD,
         "os.chown '/etc/passwd'", "--allow-write DIR")),
    ("std", "os.chmod", (WD + "/data.csv", 0o600, -1), None),
    ("no-root", "os.chmod", ("/usr/bin", 0o755, -1), None),
    # set-uid and set-gid bits: the work dir's files are the host's
    ("std", "os.chmod", ("data.csv", 0o4755, -1),
     SETID % ("standard", "os.chmod 'data.csv' to 0o4755")),
    ("strict", "os.chmod", (WD + "/data.csv", 0o2750, -1),
     SETID % ("strict", "os.chmod '/home/ann/data.csv' to 0o2750")),
    ("std", "os.chmod", (3, 0o6755, -1),
     SETID % ("standard", "os.chmod of descriptor 3 to 0o6755")),
    ("std", "os.chmod", ("/usr/bin", 0o4755, -1),
     SETID % ("standard", "os.chmod '/usr/bin' to 0o4755")),
    ("no-landlock", "os.chmod", ("data.csv", 0o4755, -1),
     SETID % ("standard", "os.chmod 'data.csv' to 0o4755")),
    ("std", "os.chmod", ("data.csv", 0o1777, -1), None),
    ("std", "os.chmod", (3, 0o755, -1), None),
    ("no-seccomp", "os.chmod", ("data.csv", 0o4755, -1), None),
    # relative paths: dir_fd -1 is none, a real one makes them unknowable
    ("std", "os.mkdir", ("../x", 511, -1),
     writing_outside("os.mkdir '../x'", "changing files")),
    ("std", "os.mkdir", ("x", 511, 5), None),
    ("std", "os.remove", ("../../etc/passwd", -1),
     writing_outside("os.remove '../../etc/passwd'", "changing files")),
    ("std", "os.remove", ("passwd", 5), None),
    ("std", "os.chmod", ("../../usr/bin", 0o755, -1),
     off("changing files outside the work directory '%s'" % WD,
         "os.chmod '../../usr/bin'", "--allow-write DIR")),
    ("std", "os.chown", ("data.csv", 0, 0, -1), None),
    ("std", "os.chown", ("bin", 0, 0, 5), None),
    ("std", "os.rename", ("x", "../y", 5, -1),
     writing_outside("os.rename to '../y'", "changing files")),
    ("std", "os.rename", ("../../etc/hostname", "y", -1, 5),
     writing_outside("os.rename from '../../etc/hostname'",
                     "hard-linking or moving files from")),
    ("std", "os.link", ("../../etc/hostname", "y", 5, 5), None),
    ("std", "os.symlink", ("x", "../l", -1),
     writing_outside("os.symlink to '../l'", "changing files")),
    ("std", "os.symlink", ("x", "l", 5), None),
    # processes and programs
    ("std", "subprocess.Popen", ("true", ["true"], None, None), None),
    ("std", "subprocess.Popen", (None, "ls -l", None, None), None),
    ("std", "subprocess.Popen", ("/srv/data/tool", ["tool"], None, None),
     off("running programs outside the system's directories and the work "
         "directory", "subprocess.Popen '/srv/data/tool'",
         "--allow-read DIR")),
    ("rw", "subprocess.Popen", (None, ["/srv/data/tool"], None, None), None),
    ("std", "os.exec", (WD + "/run.sh", ["run.sh"], None), None),
    ("std", "os.exec", ("/srv/data/tool", ["tool"], None),
     off("running programs outside the system's directories and the work "
         "directory", "os.exec '/srv/data/tool'", "--allow-read DIR")),
    ("std", "os.system", (b"true",), None),
    ("std", "os.fork", (), None),
    ("strict", "os.system", (b"true",), SYSTEM),
    ("strict", "subprocess.Popen", ("true", ["true"], None, None),
     starting("subprocess.Popen")),
    ("strict", "os.posix_spawn", ("/usr/bin/true", ["true"], {}),
     starting("os.posix_spawn")),
    ("strict", "os.spawn", (os.P_WAIT, "/usr/bin/true", ["true"], None),
     starting("os.spawn")),
    ("strict", "os.fork", (), starting("os.fork")),
    ("strict", "os.forkpty", (), starting("os.fork")),
    ("strict", "os.exec", ("/usr/bin/true", ["true"], None),
     off("running programs", "os.exec", "--sandbox standard", "strict")),
    # signals
    ("std", "os.kill", (PPID, 9),
     off("signalling coil's own processes", "os.kill(1, 9)",
         "--sandbox none")),
    ("std", "os.kill", (-1, 15),
     off("signalling every process", "os.kill(-1, 15)", "--sandbox none")),
    ("std", "os.killpg", (1, 0),
     off("signalling coil's own processes", "os.killpg(1, 0)",
         "--sandbox none")),
    ("std", "os.kill", (PID, 0), None),
    ("std", "os.kill", (345, 9), None),
    ("no-pidns", "os.kill", (-1, 9), None),
    # sockets: family, type
    ("std", "socket.__new__", (SOCK, 2, 1, 0),
     net("socket.socket(AF_INET, SOCK_STREAM)")),
    ("std", "socket.__new__", (SOCK, 10, 2, 0),
     net("socket.socket(AF_INET6, SOCK_DGRAM)")),
    ("std", "socket.__new__", (SOCK, 2, 1 | socket.SOCK_CLOEXEC, 0),
     net("socket.socket(AF_INET, SOCK_STREAM)")),
    ("std", "socket.__new__", (SOCK, 1, 1, 0), None),
    ("std", "socket.__new__", (SOCK, 17, 3, 0),
     off("AF_PACKET sockets", "socket.socket(AF_PACKET, SOCK_RAW)",
         "--sandbox none", are=True)),
    ("std", "socket.__new__", (SOCK, 16, 3, 0),
     off("AF_NETLINK sockets", "socket.socket(AF_NETLINK, SOCK_RAW)",
         "--sandbox none", are=True)),
    ("std", "socket.__new__", (SOCK, 40, 1, 0),
     off("AF_VSOCK sockets", "socket.socket(AF_VSOCK, SOCK_STREAM)",
         "--sandbox none", are=True)),
    ("std", "socket.__new__", (SOCK, 99, 1, 0),
     off("99 sockets", "socket.socket(99, SOCK_STREAM)", "--sandbox none",
         are=True)),
    ("std", "socket.__new__", (SOCK, 2, 3, 1),
     off("raw sockets", "socket.socket(AF_INET, SOCK_RAW)", "--sandbox none",
         are=True)),
    ("net", "socket.__new__", (SOCK, 2, 1, 0), None),
    ("net", "socket.__new__", (SOCK, 10, 2, 0), None),
    ("net", "socket.__new__", (SOCK, 2, 3, 1),
     off("raw sockets", "socket.socket(AF_INET, SOCK_RAW)", "--sandbox none",
         are=True)),
    ("strict", "socket.__new__", (SOCK, 2, 1, 0),
     off("sockets other than socket.socketpair()",
         "socket.socket(AF_INET, SOCK_STREAM)", "--sandbox standard",
         "strict", are=True)),
    ("strict", "socket.__new__", (SOCK, 1, 1, 0),
     off("sockets other than socket.socketpair()",
         "socket.socket(AF_UNIX, SOCK_STREAM)", "--sandbox standard",
         "strict", are=True)),
    ("no-landlock", "socket.__new__", (SOCK, 2, 1, 0),
     net("socket.socket(AF_INET, SOCK_STREAM)")),
    # name lookups, unix socket addresses
    ("std", "socket.getaddrinfo", ("example.com", 80, 0, 0, 0),
     net("name lookup of 'example.com'")),
    ("std", "socket.getaddrinfo", (b"example.org", 443, 0, 0, 0),
     net("name lookup of 'example.org'")),
    ("std", "socket.getaddrinfo", ("localhost", 80, 0, 0, 0), None),
    ("std", "socket.getaddrinfo", ("127.0.0.1", 80, 0, 0, 0), None),
    ("std", "socket.getaddrinfo", ("::1", 80, 0, 0, 0), None),
    ("std", "socket.getaddrinfo", (None, 80, 0, 0, 0), None),
    ("net", "socket.getaddrinfo", ("example.com", 80, 0, 0, 0), None),
    ("strict-net", "socket.getaddrinfo", ("example.com", 80, 0, 0, 0),
     net("name lookup of 'example.com'", "strict")),
    ("std", "socket.connect", (UNIX, "/run/dbus/system_bus_socket"),
     off("unix sockets outside the work directory",
         "socket.connect to '/run/dbus/system_bus_socket'",
         "--allow-write DIR", are=True)),
    ("std", "socket.sendto", (UNIX, "/var/run/x.sock"),
     off("unix sockets outside the work directory",
         "socket.sendto to '/var/run/x.sock'", "--allow-write DIR",
         are=True)),
    ("std", "socket.connect", (UNIX, "\0abstract"), None),
    ("std", "socket.connect", (UNIX, WD + "/app.sock"), None),
    ("std", "socket.connect", (INET, ("10.0.0.1", 80)), None),
    ("no-root", "socket.connect", (UNIX, "/run/dbus/system_bus_socket"),
     None),
    # limits and namespaces
    ("std", "resource.setrlimit", (resource.RLIMIT_NOFILE, (2048, 2048)),
     off("raising RLIMIT_NOFILE",
         "resource.setrlimit(RLIMIT_NOFILE, (2048, 2048))", "--sandbox none")),
    ("std", "resource.setrlimit", (resource.RLIMIT_NOFILE, (2048, 1024)),
     off("raising RLIMIT_NOFILE",
         "resource.setrlimit(RLIMIT_NOFILE, (2048, 1024))", "--sandbox none")),
    ("std", "resource.setrlimit", (resource.RLIMIT_NOFILE, (512, 1024)),
     None),
    ("std", "resource.setrlimit", (resource.RLIMIT_AS, (INF, INF)),
     off("raising RLIMIT_AS", "resource.setrlimit(RLIMIT_AS, (%r, %r))"
         % (INF, INF), "--memory SIZE")),
    ("std", "resource.setrlimit", (resource.RLIMIT_NPROC, (300, 300)),
     off("raising RLIMIT_NPROC", "resource.setrlimit(RLIMIT_NPROC, "
         "(300, 300))", "--max-procs N")),
    ("std", "resource.setrlimit", (resource.RLIMIT_FSIZE, (INF, INF)),
     off("raising RLIMIT_FSIZE", "resource.setrlimit(RLIMIT_FSIZE, (%r, %r))"
         % (INF, INF), "--max-file-size SIZE")),
    ("std", "resource.setrlimit", (resource.RLIMIT_CORE, (INF, INF)), None),
    ("std", "resource.setrlimit", (resource.RLIMIT_CORE, "bad"), None),
    ("std", "os.unshare", (0x10000000,),
     off("namespaces", "os.unshare", "--sandbox none", are=True)),
    ("std", "os.setns", (5, 0),
     off("namespaces", "os.setns", "--sandbox none", are=True)),
]


def fire(policy, event, args):
    """The handler's answer to the event, as the hook would get it."""
    return audit.HANDLERS[event](args, policy)


def words(e):
    return e.args[1] if isinstance(e, PermissionError) else e


def run_cases():
    for name, event, args, want in CASES:
        got = fire(P[name], event, args)
        what = "%s: %s%r %s" % (name, event, args,
                                "allowed" if want is None else "denied")
        if want is None:
            check(got is None, what, "denied: %s" % words(got))
            continue
        ok = isinstance(got, audit.SandboxError) and got.errno == 13 and \
            words(got) == want
        check(ok, what, "want: %s\ngot:  %r" % (want, words(got)))


# ------------------------------------------------- the policy's questions

def check_policy():
    std, strict = P["std"], P["strict"]
    check(std.access("/usr/lib/python3.11") == {"r", "x"},
          "access: /usr/lib/python3.11 is r, x under standard",
          std.access("/usr/lib/python3.11"))
    check(std.access(WD + "/sub/f") == {"r", "w", "x"},
          "access: the work dir is r, w, x", std.access(WD + "/sub/f"))
    check(strict.access(WD + "/f") == {"r", "w"},
          "access: the work dir is r, w under strict", strict.access(WD))
    check(std.access("/srv/data") == set(), "access: /srv is nothing",
          std.access("/srv/data"))
    check(std.secret(WD + "/.ssh/id_rsa") == WD + "/.ssh",
          "secret: ~/.ssh/id_rsa lies in ~/.ssh")
    check(std.secret(WD + "/.netrc") == WD + "/.netrc",
          "secret: ~/.netrc is one")
    check(std.secret(WD + "/.sshx") is None, "secret: ~/.sshx is none")
    # the work dir's home brings /home into the root, not the rest of it
    check(std.hidden_by_root("/home/bob/.ssh/id_rsa"),
          "hidden: another home beside a work dir in /home is not in the root")
    check(not std.hidden_by_root(WD + "/notes.txt"),
          "hidden: the work dir's own files are")
    check(std.quick("data.csv", {"r"}),
          "quick: a work dir file is plainly readable")
    check(not std.quick("/etc/passwd", {"r"}),
          "quick: /etc always takes the long way (secrets)")
    check(not std.quick("lnk", {"r"}),
          "quick: a symlink in a writable dir takes the long way")
    check(not std.quick(".netrc", {"r"}),
          "quick: a credential takes the long way")
    check(std.resolve("key") == WD + "/.ssh/id_rsa",
          "resolve: through the host's symlinks", std.resolve("key"))
    check(std.resolve("x", dir_fd=4) is None,
          "resolve: relative to a dir_fd is unknowable")
    e = fire(std, "open", ("/etc/shadow", "r", RD))
    check(e is not None and e.lift == "--allow-read /etc",
          "lift: /etc/shadow's option is its directory's", e and e.lift)
    e = fire(P["etc-user"], "open", ("/etc/gshadow", "r", RD))
    check(e is not None and e.lift is None,
          "lift: none for a secret the user may not read", e and e.lift)
    e = fire(std, "open", ("/proc/1/mem", "r+b", os.O_RDWR))
    check(e is not None and e.lift == "--sandbox none",
          "lift: /proc's files only without a sandbox", e and e.lift)
    e = fire(P["strict"], "os.system", (b"true",))
    check(e is not None and e.lift == "--sandbox standard",
          "lift: strict's processes", e and e.lift)
    e = fire(std, "os.chmod", ("data.csv", 0o4755, -1))
    check(e is not None and e.lift is None,
          "lift: none for a set-uid bit", e and e.lift)
    check(str(fire(std, "os.chmod", ("/usr/bin", 0o755, -1)))
          == "[Errno 13] " + CHMOD, "str(): errno 13 and the words")
    check(audit.SandboxError.__name__ == "PermissionError" and
          audit.SandboxError.__module__ == "builtins" and
          issubclass(audit.SandboxError, PermissionError),
          "SandboxError shows as the builtin PermissionError")
    e = fire(std, "socket.getaddrinfo", ("example.com", 80, 0, 0, 0))
    check(isinstance(e, socket.gaierror) and isinstance(e, PermissionError),
          "a name lookup's denial is also a socket.gaierror", type(e).__mro__)
    none = audit.Policy(conf("none"), HOST)
    check(not none.on and audit.install(conf("none")) is None,
          "none: nothing to explain, no hook installed")
    check(audit.Policy(json.loads(json.dumps(conf())), HOST).rules ==
          std.rules, "a conf through JSON makes the same rules")


# The caller's frames: the address create_connection() is about to reach,
# and socket.py's wrappers of a descriptor it already has.
def connect_from(policy, address):
    return fire(policy, "socket.__new__", (SOCK, 2, 1, 0))


WRAPPER = compile("def socketpair(policy):\n"
                  "    return fire(policy, 'socket.__new__', (None, 1, 1, 0))"
                  "\n", "/usr/lib/python3.11/socket.py", "exec")


def check_frames():
    e = connect_from(P["std"], ("127.0.0.1", 9))
    check(words(e) == CONNECT, "socket: the peer from the caller's frame",
          words(e))
    ns = {"fire": fire}
    exec(WRAPPER, ns)
    check(ns["socketpair"](P["strict"]) is None,
          "strict: socket.socketpair() wraps, so is allowed")


# ------------------------------------ the hook, in child processes only

CHILD = r"""
import json, socket, sys
# src/worker/stdimp.py and src/worker/policy.py first, as pycode.c runs them (one
# text: line numbers shift, names of frames do not)
src = "\n".join(open(f).read() for f in (sys.argv[3], sys.argv[4],
                                         sys.argv[1]))
conf = json.loads(sys.argv[2])
g = {"__name__": "_coil_audit", "conf": conf}
exec(compile(src, "<coil>", "exec"), g)     # as src/pyembed compiles it
out = {}

def where(e):
    tb, names = e.__traceback__, []
    while tb is not None:
        names.append((tb.tb_frame.f_code.co_filename,
                      tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    return names

try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
except PermissionError as e:
    out["connect"] = e.args[1]
    out["frames"] = where(e)
    out["type"] = type(e).__name__
try:
    socket.getaddrinfo("example.com", 80)
except socket.gaierror as e:
    out["lookup"] = e.args[1]
try:
    a, b = socket.socketpair()
    a.close(); b.close()
    out["pair"] = "ok"
except PermissionError as e:
    out["pair"] = e.args[1]
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
    out["udp"] = "ok"
except PermissionError as e:
    out["udp"] = e.args[1]
    # tests/sandbox/sbxlib.py's AUDIT_OFF, as it stands
    tb = e.__traceback__
    while tb is not None:
        f = tb.tb_frame
        if f.f_code.co_name == "hook" and "get" in f.f_locals:
            f.f_locals["get"].__self__.clear()
            break
        tb = tb.tb_next
    try:
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
        out["after_off"] = "ok"
    except PermissionError as e:
        out["after_off"] = e.args[1]
print(json.dumps(out))
"""


def child(c):
    """Run CHILD with the hook of conf c; its findings."""
    p = subprocess.run([coiltest.SYSPYTHON, "-I", "-c", CHILD, AUDIT_PY,
                        json.dumps(c), STDIMP_PY, POLICY_PY],
                       capture_output=True,
                       text=True,
                       timeout=60)
    try:
        return json.loads(p.stdout)
    except ValueError:
        diag("child: status %s\n%s%s" % (p.returncode, p.stdout, p.stderr))
        return {}


def check_hook():
    # Files are left out (landlock_fs off): the child runs on the real
    # machine, where the rules would not be the kernel's.
    std = child(conf(landlock_fs=False, mount_root=False))
    check(std.get("connect") == CONNECT,
          "hook: create_connection is denied with the peer's address",
          std.get("connect"))
    check(std.get("type") == "PermissionError",
          "hook: the error's type is named PermissionError", std.get("type"))
    frames = std.get("frames") or [("?", "?")]
    first = next((i for i, f in enumerate(frames) if f[0] == "<coil>"),
                 len(frames))
    check(first < len(frames) and frames[first][1] == "hook" and
          all(f[0] == "<coil>" for f in frames[first:]) and
          frames[first - 1][0].endswith("socket.py"),
          "hook: its frames are last and all <coil>, so the worker cuts "
          "them", frames)
    check(std.get("lookup") == net("name lookup of 'example.com'"),
          "hook: a name lookup is denied as a gaierror", std.get("lookup"))
    check(std.get("pair") == "ok", "hook: socketpair() under standard",
          std.get("pair"))
    check(std.get("udp") == net("socket.socket(AF_INET, SOCK_DGRAM)"),
          "hook: a UDP socket is denied", std.get("udp"))
    check(std.get("after_off") == "ok",
          "hook: AUDIT_OFF (clearing get's dict) turns it off",
          std.get("after_off"))
    strict = child(conf("strict", landlock_fs=False, mount_root=False))
    check(strict.get("pair") == "ok",
          "hook: socketpair() under strict, through socket.py's frames",
          strict.get("pair"))
    check(strict.get("connect") == off(
        "sockets other than socket.socketpair()",
        "socket.socket(AF_INET, SOCK_STREAM)", "--sandbox standard",
        "strict", are=True), "hook: strict refuses a TCP socket",
          strict.get("connect"))


run_cases()
check_policy()
check_frames()
check_hook()
done()
