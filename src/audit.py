"""coil's audit hook: puts the sandbox's denials into words.

The worker runs this file right after Py_Initialize and before any user
code, in a module namespace of its own, with ``conf`` bound to the JSON text
(or dict) that sandbox_audit_conf() returns.  It installs one audit hook.

The hook explains; it does not protect.  The kernel enforces every rule
(namespaces, Landlock, seccomp, rlimits), and the hook raises only where the
kernel is about to refuse anyway: the file rules it checks are the Landlock
rules actually in force, as sandbox.c reports them.  So it never denies what
the sandbox allows, a denial it did not foresee still comes through as the
kernel's plain OSError, and user code that disables it (ctypes can) gains
nothing but terser errors.

Why a Python hook installed after initialisation rather than a C hook given
to PySys_AddAuditHook before it: the hook must know the paths, the options
and the words, which are much clearer in Python; events during
initialisation (importing site, encodings) come from coil, not from user
code; and installed before the first cell, it sees every event user code
can raise.  Neither kind of hook can be trusted to stay, which is why
nothing relies on it.
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
_O_WRITE = _os.O_WRONLY | _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC | _os.O_APPEND
_O_PATH = getattr(_os, "O_PATH", 0)


class SandboxError(PermissionError):
    """A denial of coil's sandbox, in words; errno is EACCES."""


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


def install(conf):
    """Install the hook for `conf` (a dict, or its JSON text)."""
    if isinstance(conf, (str, bytes)):
        import json     # only when given text: json pulls in re
        conf = json.loads(conf)
    profile = conf.get("profile", "none")
    if profile == "none":
        return
    workdir = conf.get("workdir", "")
    tmpdir = conf.get("tmpdir", "")
    files = bool(conf.get("landlock_fs"))
    mount_root = bool(conf.get("mount_root"))
    idmap = bool(conf.get("idmap"))
    # path -> the access letters its rule grants; a path's access is the
    # union over itself and its parents, as Landlock has it
    rules = {}
    for p, a in conf.get("rules", []):
        p = p.rstrip("/") or "/"
        rules[p] = rules.get(p, frozenset()) | frozenset(a)
    hidden = [h.rstrip("/") for h in conf.get("hidden", [])]
    masked = bool(hidden)
    net_off = not conf.get("allow_net") and bool(conf.get("net_enforced"))
    may_exec = bool(conf.get("exec", True))
    may_fork = bool(conf.get("fork", True))
    may_socket = bool(conf.get("socket", True))
    scoped = bool(conf.get("signals_scoped"))
    in_sandbox = "in the %s sandbox" % profile
    readable = ("Python's own files" if profile == "strict"
                else "the system's files")

    def deny(what, detail, lift, cls=SandboxError, are=False):
        raise cls(_errno.EACCES, "%s %s off %s (%s); start coil with %s to "
                  "allow %s" % (what, "are" if are else "is", in_sandbox,
                                detail, lift, "them" if are else "it"))

    def under(path, root):
        return path == root or path.startswith(root + "/") or root == "/"

    def access(path):
        got = set()
        p = path
        while True:
            a = rules.get(p)
            if a:
                got |= a
            if p == "/" or not p:
                return got
            p = p.rsplit("/", 1)[0] or "/"

    def quick(p, need):
        """True when the path as written is plainly allowed: most opens
        (imports, the work dir) stop here, at the cost of a few string
        operations.  A symlink can still lead elsewhere, but then the
        kernel answers, without words."""
        if not p.startswith("/"):
            p = _os.path.join(_os.getcwd(), p)
        p = _os.path.normpath(p)
        if p.startswith(("/etc/", "/proc/")):
            return False        # secrets and coil's own processes
        if masked and secret(p):
            return False        # credentials the new root covers
        got = access(p)
        # where user code can plant a symlink, look at the last step
        # (one lstat): a link to a secret then gets its words
        if "w" in got and _os.path.islink(p):
            return False
        return need <= got

    def secret(path):
        for h in hidden:
            if under(path, h):
                return h
        return None

    def fspath(p):
        if isinstance(p, int) or p is None:
            return None
        try:
            p = _os.fsdecode(_os.fspath(p))
        except (TypeError, ValueError):
            return None
        return p

    def resolve(p, dir_fd=None):
        """The path the kernel will check, or None when unknowable."""
        p = fspath(p)
        if p is None or dir_fd is not None and not p.startswith("/"):
            return None
        return _os.path.realpath(_os.path.join(_os.getcwd(), p))

    def hidden_by_root(path):
        # Under the new root, what the sandbox did not bring in (/root,
        # /home, /run's and /var's contents) does not exist for the
        # worker: there the kernel answers ENOENT, and words say why.
        if not mount_root or access(path):
            return False
        parts = path.split("/")
        return len(parts) > 1 and (parts[1] in ("run", "var") or
                                   not _os.path.lexists("/" + parts[1]))

    def coil_proc(path):
        """/proc/<coil's own process>/<something private>?"""
        parts = path.split("/")
        return len(parts) > 3 and parts[1] == "proc" and \
            parts[2] in ("1", str(_os.getppid())) and \
            parts[2] != str(_os.getpid()) and \
            parts[3] in ("environ", "mem", "auxv", "maps", "smaps",
                         "pagemap", "stack", "syscall", "cwd", "root", "fd")

    def check_read(path, shown, verb="reading"):
        detail = shown if shown.startswith("os.") else "open '%s'" % shown
        if scoped and coil_proc(path):
            deny("%s coil's own processes" % verb, detail, "--sandbox none")
        s = secret(path)
        if s is not None:
            if shown != path and not shown.startswith("os."):
                detail = "open '%s', which is '%s'" % (shown, path)
            deny("%s '%s', which holds secrets," % (verb, s), detail,
                 "--allow-read %s" % s)
        exists = _os.path.lexists(path)
        if not exists and not hidden_by_root(path):
            return      # the kernel answers: no such file
        if "r" not in access(path):
            deny("%s beyond %s and the work directory '%s'"
                 % (verb, readable, workdir), detail, "--allow-read DIR")
        # Allowed by Landlock; as an unmapped uid the worker is "others"
        # to every file outside its binds, so a file that is not
        # world-readable (/etc/shadow) is refused by its permissions.
        if idmap and exists and not _os.access(path, _os.R_OK):
            deny("%s '%s', which is not world-readable," % (verb, path),
                 detail, "--allow-read %s" % path)

    def check_write(path, shown, what="writing", creates=True):
        s = secret(path)
        if s is not None:
            deny("%s '%s', which holds secrets," % (what, s), shown,
                 "--allow-write %s" % s)
        target = path
        if creates and not _os.path.lexists(path):
            target = _os.path.dirname(path)
            if not _os.path.lexists(target) and not hidden_by_root(target):
                return
        if "w" not in access(target):
            deny("%s outside the work directory '%s' and the private "
                 "temp dir" % (what, workdir), shown, "--allow-write DIR")

    # -- files ---------------------------------------------------------
    def on_open(args):
        path, mode, flags = args
        if not files:
            return
        if flags and flags & _O_PATH:
            return
        shown = fspath(path)
        if shown is None:
            return
        if isinstance(mode, str):
            write = any(c in mode for c in "wax+")
        else:
            write = bool((flags or 0) & _O_WRITE)
        read = not write or (isinstance(mode, str) and "+" in mode) or \
            bool((flags or 0) & _os.O_RDWR)
        if quick(shown, ({"w"} if write else set()) | ({"r"} if read
                                                       else set())):
            return
        real = resolve(path)
        if real is None:
            return
        if write:
            check_write(real, "open '%s' for writing" % shown)
        if read:
            check_read(real, shown)

    def on_listdir(args):
        if not files:
            return
        real = resolve(args[0] if args and args[0] is not None else ".")
        if real is not None:
            check_read(real, "os.listdir '%s'" % real, "listing")

    def on_change(what, creates):
        def handler(args):
            if not files:
                return
            dir_fd = args[-1] if len(args) > 2 else None
            real = resolve(args[0], dir_fd if isinstance(dir_fd, int) else None)
            if real is not None:
                check_write(real, "%s '%s'" % (what, fspath(args[0])),
                            "changing files", creates)
        return handler

    def on_two(what):
        def handler(args):
            if not files:
                return
            src, dst = args[0], args[1]
            rs, rd = resolve(src), resolve(dst)
            if rd is not None:
                check_write(rd, "%s to '%s'" % (what, fspath(dst)),
                            "changing files")
            if rs is not None and what != "os.symlink":
                check_write(rs, "%s from '%s'" % (what, fspath(src)),
                            "hard-linking or moving files from",
                            creates=False)
        return handler

    def on_chmod(what):
        def handler(args):
            # Landlock does not cover chmod and chown: the kernel refuses
            # them outside the work dir only through the new root (read-only
            # binds, files owned by no one the worker is).
            if not (files and mount_root):
                return
            dir_fd = args[-1] if len(args) > 2 else None
            real = resolve(args[0], dir_fd if isinstance(dir_fd, int) else None)
            if real is not None and _os.path.lexists(real) and \
                    "w" not in access(real):
                deny("changing files outside the work directory '%s'"
                     % workdir, "%s '%s'" % (what, fspath(args[0])),
                     "--allow-write DIR")
        return handler

    # -- processes -------------------------------------------------------
    def no_process(what):
        if not may_fork:
            deny("starting processes", what, "--sandbox standard")

    def no_program(path, what):
        if not may_exec:
            deny("running programs", what, "--sandbox standard")
        if not files or path is None:
            return
        p = fspath(path)
        if p is None:
            return
        if "/" not in p:
            import shutil
            found = shutil.which(p)
            if found is None:
                return
            p = found
        real = resolve(p)
        if real is not None and _os.path.lexists(real) and \
                "x" not in access(real):
            deny("running programs outside the system's directories and the "
                 "work directory", "%s '%s'" % (what, p), "--allow-read DIR")

    def on_popen(args):
        executable, argv = args[0], args[1]
        if executable is None and argv:
            if isinstance(argv, (str, bytes, _os.PathLike)):
                executable = argv
            else:
                executable = list(argv)[0]
        no_process("subprocess.Popen")
        no_program(executable, "subprocess.Popen")

    def on_exec(args):
        no_program(args[0], "os.exec")

    def on_spawn(args):
        no_process("os.posix_spawn")
        no_program(args[0], "os.posix_spawn")

    def on_system(args):
        cmd = args[0]
        if isinstance(cmd, bytes):
            cmd = _os.fsdecode(cmd)
        no_process("os.system %r" % (cmd,))

    def on_fork(args):
        no_process("os.fork")

    def on_kill(what):
        def handler(args):
            pid, sig = args[0], args[1]
            if not scoped:
                return
            if pid == -1:
                deny("signalling every process", "%s(-1, %s)" % (what, sig),
                     "--sandbox none")
            if pid in (1, _os.getppid()) and pid != _os.getpid():
                deny("signalling coil's own processes",
                     "%s(%s, %s)" % (what, pid, sig), "--sandbox none")
        return handler

    # -- sockets -----------------------------------------------------------
    def peer():
        """The address the caller is about to use, if a frame shows it."""
        f = _sys._getframe(2)
        for _ in range(10):
            if f is None:
                break
            loc = f.f_locals
            for name in ("address", "sa", "addr"):
                a = loc.get(name)
                if isinstance(a, tuple) and len(a) >= 2:
                    return "%s:%s" % (a[0], a[1])
            if "host" in loc and "port" in loc:
                return "%s:%s" % (loc["host"], loc["port"])
            f = f.f_back
        return None

    def wraps_fd():
        f = _sys._getframe(2)
        for _ in range(3):
            if f is None:
                return False
            if f.f_code.co_name in _SOCKET_WRAPPERS and \
                    f.f_code.co_filename.endswith("socket.py"):
                return True
            f = f.f_back
        return False

    def on_socket(args):
        _, family, type_, _proto = args
        fam = _AF_NAMES.get(family, str(family))
        kind = "socket.socket(%s, %s)" % (
            fam, _TYPE_NAMES.get(type_ & 0xf, str(type_)) if type_ >= 0 else "")
        if not may_socket:
            if family == 1 and wraps_fd():
                return
            deny("sockets other than socket.socketpair()", kind,
                 "--sandbox standard", are=True)
        if family not in (1, 2, 10) and family > 0:
            deny("%s sockets" % fam, kind, "--sandbox none", are=True)
        if family in (2, 10) and type_ >= 0 and type_ & 0xf in (3, 10):
            deny("raw sockets", kind, "--sandbox none", are=True)
        if family in (2, 10) and net_off and not wraps_fd():
            to = peer()
            deny("network access", "socket.connect to %s" % to if to else
                 kind, "--allow-net")

    def on_getaddrinfo(args):
        host = args[0]
        if not net_off or host is None:
            return
        if isinstance(host, bytes):
            host = host.decode("ascii", "replace")
        host = str(host)
        if host in ("localhost", "localhost.localdomain", "ip6-localhost") or \
                host.replace(".", "").isdigit() or ":" in host:
            return
        deny("network access", "name lookup of %r" % host, "--allow-net",
             _net_error())

    def on_connect(what):
        def handler(args):
            sock, address = args[0], args[1]
            if getattr(sock, "family", None) != 1 or not mount_root:
                return
            p = fspath(address)
            if p is None or p.startswith("\0") or not p:
                return
            real = resolve(p)
            if real is not None and not _os.path.lexists(real) and \
                    hidden_by_root(real):
                deny("unix sockets outside the work directory",
                     "%s to '%s'" % (what, p), "--allow-write DIR", are=True)
        return handler

    # -- limits and namespaces ---------------------------------------------
    def on_setrlimit(args):
        import resource
        res, limits = args
        try:
            soft, hard = limits
            cur_soft, cur_hard = resource.getrlimit(res)
        except (TypeError, ValueError, OSError):
            return
        inf = resource.RLIM_INFINITY

        def above(a, b):
            return b != inf and (a == inf or a > b)
        if above(hard, cur_hard) or above(soft, cur_hard):
            name = next((n for n in dir(resource) if n.startswith("RLIMIT_")
                         and getattr(resource, n) == res), str(res))
            deny("raising %s" % name, "resource.setrlimit(%s, %r)"
                 % (name, limits), _RLIMIT_OPTIONS.get(name, "--sandbox none"))

    def on_namespace(what):
        def handler(args):
            deny("namespaces", what, "--sandbox none", are=True)
        return handler

    handlers = {
        "open": on_open,
        "os.listdir": on_listdir,
        "os.scandir": on_listdir,
        "os.remove": on_change("os.remove", False),
        "os.rmdir": on_change("os.rmdir", False),
        "os.mkdir": on_change("os.mkdir", True),
        "os.truncate": on_change("os.truncate", False),
        "os.rename": on_two("os.rename"),
        "os.link": on_two("os.link"),
        "os.symlink": on_two("os.symlink"),
        "os.chmod": on_chmod("os.chmod"),
        "os.chown": on_chmod("os.chown"),
        "subprocess.Popen": on_popen,
        "os.exec": on_exec,
        "os.posix_spawn": on_spawn,
        "os.spawn": lambda a: (no_process("os.spawn"),
                               no_program(a[1], "os.spawn")),
        "os.system": on_system,
        "os.fork": on_fork,
        "os.forkpty": on_fork,
        "os.kill": on_kill("os.kill"),
        "os.killpg": on_kill("os.killpg"),
        "socket.__new__": on_socket,
        "socket.getaddrinfo": on_getaddrinfo,
        "socket.connect": on_connect("socket.connect"),
        "socket.sendto": on_connect("socket.sendto"),
        "resource.setrlimit": on_setrlimit,
        "os.unshare": on_namespace("os.unshare"),
        "os.setns": on_namespace("os.setns"),
    }
    get = handlers.get

    def hook(event, args):
        h = get(event)
        if h is None:
            return
        try:
            h(args)
        except SandboxError:
            raise
        except Exception:       # a bug here must not break user code
            return

    _sys.addaudithook(hook)


if "conf" in globals():
    install(conf)      # noqa: F821 (bound by the worker)
    del conf           # noqa: F821
