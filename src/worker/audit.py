# module: _coil_audit
"""coil's audit hook: puts the sandbox's denials into words.

The worker runs this file right after Py_Initialize and before any user
code, in a module namespace of its own, with ``conf`` bound to the JSON text
(or dict) that sandbox_audit_conf() returns.  It installs one audit hook.

The hook explains; it does not protect.  The kernel enforces every rule
(namespaces, Landlock, seccomp, rlimits), and the hook raises only where the
kernel is about to refuse anyway: the file rules it checks are the Landlock
rules actually in force, as sbx-landlock.c reports them.  So it never denies what
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

The hook is three files of one module ("_coil_audit"), run in this
order in its namespace: effects.py, the recorder; policy.py, the rules;
and this file, which installs the hook.

- Policy (policy.py): the rules of one sandbox, built from the conf dict,
  and the questions asked of them (may this path be read, written, run;
  is it a credential; may this socket be made), each answered with None
  or the SandboxError that says what is off and which option lifts it.
  It asks the machine nothing itself: the few facts it needs (the cwd,
  symlinks, whether a path exists, pids, rlimits) come from a Host,
  which the unit test (tests/unit/audit-test.py) replaces with tables,
  so the whole policy runs there without root, a sandbox or coil.
- HANDLERS: audit event name -> handler(event args, policy), which picks
  the event's arguments apart and asks the policy.
- install(): the hook, which looks the event up in one table of both
  HANDLERS and effects.py's RECORDERS (what the running cell did outside
  itself, for its answer: recorded under --sandbox none too, where there
  is nothing to explain), and raises what the handler returns.  Every
  frame of the three files is compiled with the file name "<coil>"
  (src/pyembed), which is how the worker cuts the hook's frames from the
  tracebacks users see (errors.py's _user_tb).
"""

import os as _os
import sys as _sys


# ---- the handlers: (event args, policy) -> None or the SandboxError ------

def _on_open(args, policy):
    path, mode, flags = args
    if not policy.files or flags and flags & _O_PATH:
        return None
    shown = _fspath(path)
    if shown is None:
        return None
    if isinstance(mode, str):
        write = any(c in mode for c in "wax+")
    else:
        write = bool((flags or 0) & _O_WRITE)
    read = not write or (isinstance(mode, str) and "+" in mode) or \
        bool((flags or 0) & _os.O_RDWR)
    if policy.quick(shown, ({"w"} if write else set()) |
                    ({"r"} if read else set())):
        return None
    real = policy.resolve(path)
    if real is None:
        return None
    e = policy.write_denial(real, "open '%s' for writing" % shown) \
        if write else None
    if e is None and read:
        e = policy.read_denial(real, shown)
    return e


def _on_listdir(args, policy):
    if not policy.files:
        return None
    real = policy.resolve(args[0] if args and args[0] is not None else ".")
    if real is None:
        return None
    return policy.read_denial(real, "os.listdir '%s'" % real, "listing")


def _dir_fd(fd):
    """An event's dir_fd argument: None when there is none (CPython passes
    -1 then)."""
    return fd if isinstance(fd, int) and fd != -1 else None


def _changing(what, creates, has_dir_fd=True):
    """os.remove, os.mkdir and the like: path [, ...] [, dir_fd]."""
    def handler(args, policy):
        if not policy.files:
            return None
        real = policy.resolve(args[0],
                              _dir_fd(args[-1]) if has_dir_fd else None)
        if real is None:
            return None
        return policy.write_denial(real, "%s '%s'" % (what, _fspath(args[0])),
                                   "changing files", creates)
    return handler


def _two_paths(what):
    """os.rename, os.link: src, dst, src_dir_fd, dst_dir_fd; os.symlink:
    src, dst, dir_fd (for dst)."""
    def handler(args, policy):
        if not policy.files:
            return None
        src, dst = args[0], args[1]
        if what == "os.symlink":
            src_fd, dst_fd = None, _dir_fd(args[2])
        else:
            src_fd, dst_fd = _dir_fd(args[2]), _dir_fd(args[3])
        rs, rd = policy.resolve(src, src_fd), policy.resolve(dst, dst_fd)
        e = None
        if rd is not None:
            e = policy.write_denial(rd, "%s to '%s'" % (what, _fspath(dst)),
                                    "changing files")
        if e is None and rs is not None and what != "os.symlink":
            e = policy.write_denial(rs, "%s from '%s'" % (what, _fspath(src)),
                                    "hard-linking or moving files from",
                                    creates=False)
        return e
    return handler


def _mode(what):
    """os.chmod, os.chown: path, ..., dir_fd (os.chmod: path, mode,
    dir_fd; os.fchmod raises it with the descriptor as path)."""
    def handler(args, policy):
        if what == "os.chmod":
            e = policy.setid_denial(args[0], args[1], what)
            if e is not None:
                return e
        if not (policy.files and policy.mount_root):
            return None
        return policy.mode_denial(policy.resolve(args[0],
                                                 _dir_fd(args[-1])),
                                  "%s '%s'" % (what, _fspath(args[0])))
    return handler


def _on_popen(args, policy):
    executable, argv = args[0], args[1]
    if executable is None and argv:
        if isinstance(argv, (str, bytes, _os.PathLike)):
            executable = argv
        else:
            executable = list(argv)[0]
    return policy.process_denial("subprocess.Popen") or \
        policy.program_denial(executable, "subprocess.Popen")


def _on_exec(args, policy):
    return policy.program_denial(args[0], "os.exec")


def _on_posix_spawn(args, policy):
    return policy.process_denial("os.posix_spawn") or \
        policy.program_denial(args[0], "os.posix_spawn")


def _on_spawn(args, policy):
    return policy.process_denial("os.spawn") or \
        policy.program_denial(args[1], "os.spawn")


def _on_system(args, policy):
    cmd = args[0]
    if isinstance(cmd, bytes):
        cmd = _os.fsdecode(cmd)
    return policy.process_denial("os.system %r" % (cmd,))


def _on_fork(args, policy):
    return policy.process_denial("os.fork")


def _signal(what):
    """os.kill, os.killpg: pid, sig."""
    def handler(args, policy):
        return policy.signal_denial(what, args[0], args[1])
    return handler


def _callers(n):
    """Up to n frames, innermost first, from the first one outside the
    hook's files (policy.py's and this one's share the file name
    "<coil>"): where the event came from."""
    f = _sys._getframe(1)
    while f is not None and f.f_code.co_filename == _HERE:
        f = f.f_back
    while f is not None and n > 0:
        yield f
        f = f.f_back
        n -= 1


def _peer():
    """The address the caller is about to use, if a frame shows it."""
    for f in _callers(9):
        loc = f.f_locals
        for name in ("address", "sa", "addr"):
            a = loc.get(name)
            if isinstance(a, tuple) and len(a) >= 2:
                return "%s:%s" % (a[0], a[1])
        if "host" in loc and "port" in loc:
            return "%s:%s" % (loc["host"], loc["port"])
    return None


def _wraps_fd():
    """Is socket.py wrapping a descriptor it already has?"""
    return any(f.f_code.co_name in _SOCKET_WRAPPERS and
               f.f_code.co_filename.endswith("socket.py")
               for f in _callers(2))


def _on_socket(args, policy):
    _, family, type_, _proto = args
    return policy.socket_denial(family, type_, _wraps_fd, _peer)


def _on_getaddrinfo(args, policy):
    return policy.lookup_denial(args[0])


def _unix_connect(what):
    """socket.connect, socket.sendto: socket, address."""
    def handler(args, policy):
        if getattr(args[0], "family", None) != 1:
            return None
        return policy.unix_connect_denial(args[1], what)
    return handler


def _on_setrlimit(args, policy):
    return policy.rlimit_denial(args[0], args[1])


def _namespace(what):
    def handler(args, policy):
        return policy.namespace_denial(what)
    return handler


_HERE = _on_open.__code__.co_filename

HANDLERS = {
    "open": _on_open,
    "os.listdir": _on_listdir,
    "os.scandir": _on_listdir,
    "os.remove": _changing("os.remove", False),
    "os.rmdir": _changing("os.rmdir", False),
    "os.mkdir": _changing("os.mkdir", True),
    "os.truncate": _changing("os.truncate", False, has_dir_fd=False),
    "os.rename": _two_paths("os.rename"),
    "os.link": _two_paths("os.link"),
    "os.symlink": _two_paths("os.symlink"),
    "os.chmod": _mode("os.chmod"),
    "os.chown": _mode("os.chown"),
    "subprocess.Popen": _on_popen,
    "os.exec": _on_exec,
    "os.posix_spawn": _on_posix_spawn,
    "os.spawn": _on_spawn,
    "os.system": _on_system,
    "os.fork": _on_fork,
    "os.forkpty": _on_fork,
    "os.kill": _signal("os.kill"),
    "os.killpg": _signal("os.killpg"),
    "socket.__new__": _on_socket,
    "socket.getaddrinfo": _on_getaddrinfo,
    "socket.connect": _unix_connect("socket.connect"),
    "socket.sendto": _unix_connect("socket.sendto"),
    "resource.setrlimit": _on_setrlimit,
    "os.unshare": _namespace("os.unshare"),
    "os.setns": _namespace("os.setns"),
}


def install(conf, host=None):
    """Install the hook for `conf` (a dict, or its JSON text); returns it,
    or None when there is nothing to explain and conf does not ask for
    effects ("effects": true, which also binds the global `effects`)."""
    global effects
    if isinstance(conf, (str, bytes)):
        json = _std("json")     # only when given text: json pulls in re
        conf = json.loads(conf)
    policy = Policy(conf, host)
    fx = None
    if conf.get("effects"):
        fx = effects = Effects(conf.get("workdir"), policy.host)
    elif not policy.on:
        return None
    checks = HANDLERS if policy.on else {}
    recorders = RECORDERS if fx is not None else {}
    # One lookup an event, for both: most events are neither.  `get`
    # keeps its name: tests/sandbox/sbxlib.py's AUDIT_OFF finds it in the
    # hook's frame and clears the table, as user code could.
    get = {ev: (checks.get(ev), recorders.get(ev))
           for ev in set(checks) | set(recorders)}.get

    def hook(event, args):
        h = get(event)
        if h is None:
            return
        check, record = h
        e = None
        if check is not None:
            try:
                e = check(args, policy)
            except Exception:   # a bug here must not break user code
                e = None
        if record is not None:
            try:
                record(args, fx, e is not None)
            except Exception:
                pass
        if e is not None:
            raise e

    _sys.addaudithook(hook)
    return hook


if "conf" in globals():
    install(conf)      # noqa: F821 (bound by the worker)
    del conf           # noqa: F821
