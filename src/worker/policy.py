# module: _coil_audit
"""The sandbox's rules, as the audit hook asks them: Policy and Host.

Run at start-up in the audit hook's namespace ("_coil_audit"), after
effects.py and before audit.py, whose handlers pick each audit event's
arguments apart and ask a Policy; see audit.py for the whole.  Nothing
here is installed or asks the machine anything: a Policy is built from
the conf dict and answers each question with None or the SandboxError
that says what is off and which option lifts it; the facts it needs
come from a Host, which tests/unit/audit-test.py replaces with tables.
"""

import errno as _errno
import os as _os
import sys as _sys

_AF_NAMES = {1: "AF_UNIX", 2: "AF_INET", 10: "AF_INET6", 16: "AF_NETLINK",
             17: "AF_PACKET", 40: "AF_VSOCK", 3: "AF_AX25", 4: "AF_IPX",
             5: "AppleTalk", 9: "AF_X25", 38: "AF_ALG", 44: "AF_XDP",
             31: "AF_BLUETOOTH", 30: "AF_TIPC", 15: "AF_KEY"}
_TYPE_NAMES = {1: "SOCK_STREAM", 2: "SOCK_DGRAM", 3: "SOCK_RAW",
               5: "SOCK_SEQPACKET", 10: "SOCK_PACKET"}
_RLIMIT_OPTIONS = {"RLIMIT_DATA": "--memory SIZE", "RLIMIT_AS": "--memory SIZE",
                   "RLIMIT_NPROC": "--max-procs N",
                   "RLIMIT_FSIZE": "--max-file-size SIZE"}
# Frames of socket.py that wrap an existing descriptor rather than make one.
_SOCKET_WRAPPERS = {"socketpair", "fromfd", "accept", "dup", "fromshare",
                    "_fallback_socketpair"}
# /proc/<pid>/ entries that would give away another process's secrets.
_PROC_PRIVATE = ("environ", "mem", "auxv", "maps", "smaps", "pagemap",
                 "stack", "syscall", "cwd", "root", "fd")
_LOCALHOST = ("localhost", "localhost.localdomain", "ip6-localhost")
_O_WRITE = _os.O_WRONLY | _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC | _os.O_APPEND
_O_PATH = getattr(_os, "O_PATH", 0)


class SandboxError(PermissionError):
    """A denial of coil's sandbox, in words; errno is EACCES.  `lift` is
    the option that would allow what was refused."""

    lift = None


# A traceback's last line names it as the builtin a user catches.
SandboxError.__module__ = "builtins"
SandboxError.__name__ = SandboxError.__qualname__ = "PermissionError"

_net_error_cls = []


def _net_error():
    """A SandboxError that is also a socket.gaierror, for name lookups:
    code that catches gaierror for "no network" still does."""
    if not _net_error_cls:
        sock = _sys.modules.get("socket")
        if sock is None:
            return SandboxError
        cls = type("PermissionError", (SandboxError, sock.gaierror),
                   {"__module__": "builtins"})
        _net_error_cls.append(cls)
    return _net_error_cls[0]


def _fspath(p):
    """p as a str path, or None for a descriptor or anything else."""
    if isinstance(p, int) or p is None:
        return None
    try:
        return _os.fsdecode(_os.fspath(p))
    except (TypeError, ValueError):
        return None


def _under(path, root):
    return path == root or path.startswith(root + "/") or root == "/"


class Host:
    """Everything the policy asks the machine, in one place: the unit test
    answers the same questions from tables."""

    cwd = staticmethod(_os.getcwd)
    realpath = staticmethod(_os.path.realpath)
    lexists = staticmethod(_os.path.lexists)
    islink = staticmethod(_os.path.islink)
    isdir = staticmethod(_os.path.isdir)
    pid = staticmethod(_os.getpid)
    ppid = staticmethod(_os.getppid)

    @staticmethod
    def readable(path):
        return _os.access(path, _os.R_OK)

    @staticmethod
    def which(name):
        # only for a bare program name: it pulls in fnmatch
        shutil = _std("shutil")
        return shutil.which(name)

    @staticmethod
    def getrlimit(res):
        resource = _std("resource")
        return resource.getrlimit(res)


class Policy:
    """The rules of one sandbox (conf: what sandbox_audit_conf() gives),
    and the questions asked of them.  Each *_denial method returns None
    when the sandbox allows the thing, else the SandboxError to raise."""

    def __init__(self, conf, host=None):
        self.host = host if host is not None else Host()
        self.profile = conf.get("profile", "none")
        self.workdir = conf.get("workdir", "")
        self.tmpdir = conf.get("tmpdir", "")
        self.files = bool(conf.get("landlock_fs"))
        self.mount_root = bool(conf.get("mount_root"))
        self.idmap = bool(conf.get("idmap"))
        # path -> the access letters its rule grants; a path's access is
        # the union over itself and its parents, as Landlock has it
        self.rules = {}
        for p, a in conf.get("rules", []):
            p = p.rstrip("/") or "/"
            self.rules[p] = self.rules.get(p, frozenset()) | frozenset(a)
        self.hidden = [h.rstrip("/") for h in conf.get("hidden", [])]
        # of those, the credentials covered in a bound home (sbx-root.c);
        # the rest are the secrets of /etc Landlock leaves out
        self.masked = [h.rstrip("/") for h in conf.get("masked", [])]
        # coil runs as root: the worker's binds are id-mapped to their
        # owners, so a root-owned file in a bind is the worker's to read
        self.root = bool(conf.get("root"))
        self.net_off = not conf.get("allow_net") and \
            bool(conf.get("net_enforced"))
        self.may_exec = bool(conf.get("exec", True))
        self.may_fork = bool(conf.get("fork", True))
        self.may_socket = bool(conf.get("socket", True))
        # seccomp refuses set-uid and set-gid modes (sbx-seccomp.c)
        self.may_setid = bool(conf.get("setid", True))
        self.scoped = bool(conf.get("signals_scoped"))
        # what every profile lets cells read, in the words of a denial
        self.system_files = ("Python's own files" if self.profile == "strict"
                             else "the system's files")

    @property
    def on(self):
        """Whether there is a sandbox to explain at all."""
        return self.profile != "none"

    def deny(self, what, detail, lift, cls=SandboxError, are=False,
             how=None):
        """The words for a denial: what is off, the call that asked for it,
        the option that lifts it; or, where none lifts it or the option is
        not the whole story, `how` says what will (or that nothing will)
        and `lift` is the option named there, or None."""
        if how is None:
            how = "start coil with %s to allow %s" % (
                lift, "them" if are else "it")
        e = cls(_errno.EACCES, "%s %s off in the %s sandbox (%s); %s"
                % (what, "are" if are else "is", self.profile, detail, how))
        e.lift = lift
        return e

    # -- paths ----------------------------------------------------------------
    def access(self, path):
        """The letters (r, w, x) the rules grant path."""
        got = set()
        p = path
        while True:
            a = self.rules.get(p)
            if a:
                got |= a
            if p == "/" or not p:
                return got
            p = p.rsplit("/", 1)[0] or "/"

    def secret(self, path):
        """The credential path (a hidden dir or file) path lies in, or
        None."""
        for h in self.hidden:
            if _under(path, h):
                return h
        return None

    def resolve(self, p, dir_fd=None):
        """The path the kernel will check, or None when unknowable."""
        p = _fspath(p)
        if p is None or dir_fd is not None and not p.startswith("/"):
            return None
        return self.host.realpath(_os.path.join(self.host.cwd(), p))

    def quick(self, p, need):
        """True when the path as written is plainly allowed: most opens
        (imports, the work dir) stop here, at the cost of a few string
        operations.  A symlink can still lead elsewhere, but then the
        kernel answers, without words."""
        if not p.startswith("/"):
            p = _os.path.join(self.host.cwd(), p)
        p = _os.path.normpath(p)
        if p.startswith(("/etc/", "/proc/")):
            return False        # secrets and coil's own processes
        if self.hidden and self.secret(p):
            return False        # credentials the new root covers
        got = self.access(p)
        # where user code can plant a symlink, look at the last step
        # (one lstat): a link to a secret then gets its words
        if "w" in got and self.host.islink(p):
            return False
        return need <= got

    def hidden_by_root(self, path):
        """Under the new root, what the sandbox did not bring in (/root,
        /home, /run's and /var's contents) does not exist for the worker:
        there the kernel answers ENOENT, and words say why."""
        if not self.mount_root or self.access(path):
            return False
        parts = path.split("/")
        if len(parts) < 2:
            return False
        # /root or /home holding the work dir are in the root only as
        # the bind's parents: the rest of them is missing all the same
        return parts[1] in ("run", "var") or \
            not self.host.lexists("/" + parts[1]) or \
            (parts[1] in ("root", "home") and not self.host.lexists(path))

    def coil_proc(self, path):
        """/proc/<coil's own process>/<something private>?"""
        parts = path.split("/")
        return len(parts) > 3 and parts[1] == "proc" and \
            parts[2] in ("1", str(self.host.ppid())) and \
            parts[2] != str(self.host.pid()) and parts[3] in _PROC_PRIVATE

    # -- files ----------------------------------------------------------------
    #
    # Each class of path the sandbox denies, and what lifts the denial:
    #
    #   /etc's secrets    --allow-read of the dir holding them, when coil
    #                     runs as root (the bind is id-mapped: root's files
    #                     become the worker's) or the user who started
    #                     coil may read them; else nothing does
    #   credentials       --allow-read of the dir itself (.ssh): naming it
    #   in a bound home   uncovers it; a file (.netrc) cannot be named, as
    #                     --allow-read and --allow-write take directories
    #   /proc             the kernel's process files: never writable in a
    #                     sandbox; a cell's own descriptor is written
    #                     through the descriptor, not /proc/self/fd
    #   cgroup files      the session's limits: coil sets them from
    #                     --memory and --max-procs
    #   /sys, /dev        the kernel's settings and the machine's devices:
    #                     only --sandbox none (binds are nodev)
    #   anything else     --allow-read DIR, --allow-write DIR
    def _dir_of(self, path, s):
        """The directory an --allow-* option would name to reach path
        under the secret s: s itself when it is a directory."""
        if path != s or self.host.isdir(s):
            return s
        return _os.path.dirname(s) or "/"

    def secret_denial(self, path, s, verb, detail, write=False):
        """The words for path, which lies in the secret s."""
        opt = "--allow-write" if write else "--allow-read"
        what = "%s '%s', which holds secrets," % (verb, s)
        if s in self.masked:
            if path != s or self.host.isdir(s):
                return self.deny(what, detail, "%s %s" % (opt, s))
            return self.deny(what, detail, "--sandbox none", how=(
                "coil covers it in every sandbox and %s takes only "
                "directories: start coil with --sandbox none to allow it"
                % opt))
        d = self._dir_of(path, s)
        if self.root or not write and self.host.readable(path):
            return self.deny(what, detail, "%s %s" % (opt, d), how=(
                "start coil with %s %s to allow it (all of '%s')"
                % (opt, d, d)))
        return self.deny(what, detail, None, how=(
            "no option lifts it: the user who started coil may not %s "
            "'%s'" % ("write" if write else "read", path)))

    def kernel_denial(self, path, verb, detail):
        """/proc, /sys and /dev, which no --allow-* option opens up; None
        for any other path, and for one the rules allow (a --allow-write
        that names /proc: the kernel answers)."""
        parts = path.split("/")
        top = parts[1] if len(parts) > 1 else ""
        write = verb != "reading" and verb != "listing"
        if write and top in ("proc", "sys") and "w" in self.access(path):
            return None
        if top == "proc" and write:
            # a pipe's or a socket's: the kernel checks the link's path
            if len(parts) > 4 and parts[3] == "fd":
                return self.deny("reopening a descriptor through /proc "
                                 "for writing", detail, None, how=(
                                     "write through the descriptor itself "
                                     "(os.fdopen(fd, 'w'), os.dup(fd))"))
            return self.deny("%s the kernel's files in /proc" % verb,
                             detail, "--sandbox none", how="no --allow-write "
                             "lifts it: start coil with --sandbox none to "
                             "allow it")
        if top == "sys" and write and path.startswith("/sys/fs/cgroup/"):
            return self.deny("%s cgroup files (the session's limits among "
                             "them)" % verb, detail, "--memory SIZE",
                             how="coil sets the session's limits: start "
                             "coil with --memory SIZE or --max-procs N to "
                             "change them")
        if top == "sys" and write:
            return self.deny("%s the kernel's settings in /sys" % verb,
                             detail, "--sandbox none", how="no --allow-write "
                             "lifts it: start coil with --sandbox none to "
                             "allow it")
        if top == "dev" and self.mount_root and len(parts) > 2 and \
                parts[2] not in ("shm", "fd", "stdin", "stdout", "stderr",
                                 "pts") and not self.access(path):
            return self.deny("the machine's devices", detail,
                             "--sandbox none", are=True, how=(
                                 "the sandbox's /dev holds only %s: start "
                                 "coil with --sandbox none to allow them"
                                 % ", ".join(self._devices())))
        return None

    def _devices(self):
        return sorted(p[5:] for p in self.rules if p.startswith("/dev/")
                      and "/" not in p[5:] and p != "/dev/shm") or \
            ["null"]

    def read_denial(self, path, shown, verb="reading"):
        """May path (resolved; `shown` as the user wrote it) be read?"""
        detail = shown if shown.startswith("os.") else "open '%s'" % shown
        if self.scoped and self.coil_proc(path):
            return self.deny("%s coil's own processes" % verb, detail,
                             "--sandbox none")
        s = self.secret(path)
        if s is not None:
            if shown != path and not shown.startswith("os."):
                detail = "open '%s', which is '%s'" % (shown, path)
            return self.secret_denial(path, s, verb, detail)
        e = self.kernel_denial(path, verb, detail)
        if e is not None:
            return e
        exists = self.host.lexists(path)
        if not exists and not self.hidden_by_root(path):
            return None     # the kernel answers: no such file
        if "r" not in self.access(path):
            return self.deny("%s beyond %s and the work directory '%s'"
                             % (verb, self.system_files, self.workdir),
                             detail, "--allow-read DIR")
        # Allowed by Landlock; as an unmapped uid the worker is "others"
        # to every file outside its binds, so a file that is not
        # world-readable (/etc/shadow) is refused by its permissions.
        # --allow-read takes a directory: the one holding the file, whose
        # bind is id-mapped to its owner.
        if self.idmap and exists and not self.host.readable(path):
            d = _os.path.dirname(path) or "/"
            return self.deny("%s '%s', which is not world-readable,"
                             % (verb, path), detail, "--allow-read %s" % d,
                             how="start coil with --allow-read %s to allow "
                             "it (all of '%s')" % (d, d))
        return None

    def write_denial(self, path, shown, what="writing", creates=True):
        """May path (resolved) be written, or created when `creates`?"""
        s = self.secret(path)
        if s is not None:
            return self.secret_denial(path, s, what, shown, write=True)
        e = self.kernel_denial(path, "writing" if what == "writing" else
                               "changing", shown)
        if e is not None:
            return e
        target = path
        if creates and not self.host.lexists(path):
            target = _os.path.dirname(path)
            if not self.host.lexists(target) and \
                    not self.hidden_by_root(target):
                return None
        if "w" not in self.access(target):
            return self.deny("%s outside the work directory '%s' and the "
                             "private temp dir" % (what, self.workdir), shown,
                             "--allow-write DIR")
        return None

    def mode_denial(self, path, shown):
        """May path's mode or owner change?  Landlock does not cover chmod
        and chown: the kernel refuses them outside the work dir only
        through the new root (read-only binds, files owned by no one the
        worker is)."""
        if not (self.files and self.mount_root) or path is None:
            return None
        if self.host.lexists(path) and "w" not in self.access(path):
            return self.deny("changing files outside the work directory '%s'"
                             % self.workdir, shown, "--allow-write DIR")
        return None

    def setid_denial(self, path, mode, what):
        """May a file's mode become `mode`?  Not with a set-uid or set-gid
        bit: the binds are id-mapped, so the file is the host's, owned by
        the user who started coil, and the host's mount of it is not
        nosuid.  Only os.chmod (and os.fchmod) show their mode to the
        hook; os.open and os.mknod get the kernel's plain EPERM."""
        if self.may_setid or not isinstance(mode, int) or \
                not mode & 0o6000:
            return None
        p = _fspath(path)
        shown = "%s '%s'" % (what, p) if p is not None else \
            "%s of descriptor %s" % (what, path)
        return self.deny("set-uid and set-gid bits", "%s to %s"
                         % (shown, oct(mode)), None, are=True, how=(
                             "they are not the cells' to set: files in the "
                             "work directory are the host's, owned by the "
                             "user who started coil, and a set-uid one "
                             "would run as that user for anyone who can "
                             "reach it; no option lifts it in a sandbox"))

    # -- processes ------------------------------------------------------------
    def process_denial(self, what):
        """May a process be started?"""
        if not self.may_fork:
            return self.deny("starting processes", what, "--sandbox standard")
        return None

    def program_denial(self, path, what):
        """May the program at path (as given: a bare name is looked up in
        PATH) be run?"""
        if not self.may_exec:
            return self.deny("running programs", what, "--sandbox standard")
        p = _fspath(path) if self.files else None
        if p is None:
            return None
        if "/" not in p:
            p = self.host.which(p)
            if p is None:
                return None
        real = self.resolve(p)
        if real is not None and self.host.lexists(real) and \
                "x" not in self.access(real):
            return self.deny("running programs outside the system's "
                             "directories and the work directory",
                             "%s '%s'" % (what, p), "--allow-read DIR")
        return None

    def signal_denial(self, what, pid, sig):
        """May signal sig go to pid (os.kill's or os.killpg's)?"""
        if not self.scoped:
            return None
        if pid == -1:
            return self.deny("signalling every process",
                             "%s(-1, %s)" % (what, sig), "--sandbox none")
        if pid in (1, self.host.ppid()) and pid != self.host.pid():
            return self.deny("signalling coil's own processes",
                             "%s(%s, %s)" % (what, pid, sig), "--sandbox none")
        return None

    # -- sockets --------------------------------------------------------------
    def socket_denial(self, family, type_, wraps_fd, peer):
        """May a socket of family and type_ be made?  wraps_fd() tells
        whether socket.py wraps an existing descriptor (socketpair, accept),
        peer() the address the caller means to reach, if known: both look
        at the caller's frames, so they are asked only when needed."""
        fam = _AF_NAMES.get(family, str(family))
        kind = "socket.socket(%s, %s)" % (fam, _TYPE_NAMES.get(
            type_ & 0xf, str(type_)) if type_ >= 0 else "")
        if not self.may_socket:
            if family == 1 and wraps_fd():
                return None
            return self.deny("sockets other than socket.socketpair()", kind,
                             "--sandbox standard", are=True)
        if family not in (1, 2, 10) and family > 0:
            return self.deny("%s sockets" % fam, kind, "--sandbox none",
                             are=True)
        if family in (2, 10) and type_ >= 0 and type_ & 0xf in (3, 10):
            return self.deny("raw sockets", kind, "--sandbox none", are=True)
        if family in (2, 10) and self.net_off and not wraps_fd():
            to = peer()
            return self.deny("network access", "socket.connect to %s" % to
                             if to else kind, "--allow-net")
        return None

    def lookup_denial(self, host):
        """May host's name be looked up?  Addresses and localhost need no
        network."""
        if not self.net_off or host is None:
            return None
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        host = str(host)
        if host in _LOCALHOST or host.replace(".", "").isdigit() or \
                ":" in host:
            return None
        return self.deny("network access", "name lookup of %r" % host,
                         "--allow-net", _net_error())

    def unix_connect_denial(self, address, what):
        """May a unix socket reach address?  Outside the binds, the
        machine's sockets are not there to be named."""
        p = _fspath(address)
        if not self.mount_root or p is None or p.startswith("\0") or not p:
            return None
        real = self.resolve(p)
        if real is not None and not self.host.lexists(real) and \
                self.hidden_by_root(real):
            return self.deny("unix sockets outside the work directory",
                             "%s to '%s'" % (what, p), "--allow-write DIR",
                             are=True)
        return None

    # -- limits and namespaces ------------------------------------------------
    def rlimit_denial(self, res, limits):
        """May resource res's limits become `limits` (soft, hard)?  Only
        lowering is allowed."""
        resource = _std("resource")
        try:
            soft, hard = limits
            cur_soft, cur_hard = self.host.getrlimit(res)
        except (TypeError, ValueError, OSError):
            return None
        inf = resource.RLIM_INFINITY

        def above(a, b):
            return b != inf and (a == inf or a > b)
        if not (above(hard, cur_hard) or above(soft, cur_hard)):
            return None
        name = next((n for n in dir(resource) if n.startswith("RLIMIT_")
                     and getattr(resource, n) == res), str(res))
        return self.deny("raising %s" % name, "resource.setrlimit(%s, %r)"
                         % (name, limits),
                         _RLIMIT_OPTIONS.get(name, "--sandbox none"))

    def namespace_denial(self, what):
        return self.deny("namespaces", what, "--sandbox none", are=True)
