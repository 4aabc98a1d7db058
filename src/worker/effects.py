# module: _coil_audit
"""What a cell did outside itself, for its answer: coil's effects recorder.

The worker runs this file right after Py_Initialize, in the namespace of
the audit hook ("_coil_audit"), just before audit.py, whose install()
binds the recorder and whose hook calls it: the two files are one module.
Names are looked up when called, so this file uses audit.py's helpers
(_fspath, _dir_fd, _O_WRITE, _AF_NAMES, _peer), defined after it runs.

- Effects: files created, written, deleted or renamed, processes
  started, connections tried, denied ones marked; worker.py takes the
  list after each cell.  Recorded under every profile, --sandbox none
  too.
- RECORDERS: audit event name -> recorder(event args, effects, denied),
  which picks the event's arguments apart as audit.py's HANDLERS do.

Its frames are compiled with the file name "<coil>", as audit.py's, so
the worker cuts them from the tracebacks users see.
"""

import os as _os


class Effects:
    """What the running cell touched, in the order it came, each thing
    once: {"kind": "create" | "write" | "delete" | "rename", "path"
    [, "to"]}, {"kind": "process", "cmd"}, {"kind": "connect", "to"},
    with "denied": true when the sandbox refused it.  The first LIMIT are
    listed, the rest only counted.  A file the cell created and deleted
    again (a lock, a temporary) is listed both times, as it happened:
    the cell touched the file system, and a crash between the two would
    have left it.  One it created and renamed is the file it ended as.
    Paths are resolved against the cwd
    (symlinks not followed) and shown relative to the work directory
    when they are under it, else absolute.  Recorded as the call is
    made: a call that then fails for another reason still shows."""

    LIMIT = 20
    TEXT = 200          # characters kept of a command or an address
    SEEN = 4096         # distinct things remembered for the count

    def __init__(self, workdir, host):
        self.host = host
        self.workdir = (workdir or host.cwd()).rstrip("/") or "/"
        self.begin()

    def begin(self):
        """A cell starts: forget the last one's (and the background's)."""
        self.listed = []
        self.seen = set()
        self.more = 0

    def take(self):
        """The cell's effects and how many more there were; begins anew."""
        listed, more = self.listed, self.more
        self.begin()
        return listed, more

    def add(self, kind, denied, **what):
        key = (kind, denied) + tuple(what.values())
        if key in self.seen:
            return
        if len(self.seen) < self.SEEN:
            self.seen.add(key)
        if len(self.listed) >= self.LIMIT:
            self.more += 1
            return
        e = {"kind": kind}
        e.update(what)
        if denied:
            e["denied"] = True
        self.listed.append(e)

    def created(self, path):
        """Forget a file this cell created, with its writes, as it is
        renamed: True when it was listed as created (and allowed) here."""
        made = {"kind": "create", "path": path}
        if made not in self.listed:
            return False
        self.listed = [e for e in self.listed
                       if e.get("path") != path or "denied" in e or
                       e["kind"] not in ("create", "write")]
        self.seen -= {("create", False, path), ("write", False, path)}
        return True

    def path(self, p, dir_fd=None):
        """p as the answer shows it, or None for a descriptor."""
        p = _fspath(p)
        if p is None:
            return None
        base = self.host.cwd()
        if dir_fd is not None and not p.startswith("/"):
            try:
                base = _os.readlink("/proc/self/fd/%d" % dir_fd)
            except OSError:
                return p
        p = _os.path.normpath(_os.path.join(base, p))
        if p.startswith(self.workdir + "/"):
            return p[len(self.workdir) + 1:]
        return "." if p == self.workdir else p

    def text(self, t):
        if isinstance(t, bytes):
            t = _os.fsdecode(t)
        elif not isinstance(t, str):
            try:
                t = " ".join(_os.fsdecode(a) if isinstance(a, bytes)
                             else str(a) for a in t)
            except TypeError:
                t = str(t)
        return t if len(t) <= self.TEXT else t[:self.TEXT - 1] + "\u2026"


def _rec_open(args, fx, denied):
    path, mode, flags = args
    if isinstance(mode, str):
        if not any(c in mode for c in "wax+"):
            return
    elif not (flags or 0) & _O_WRITE:
        return
    p = _fspath(path)
    # A directory cannot be opened to write: io.open with an opener
    # (tempfile's) names one for show and opens what the opener makes,
    # whose own os.open is seen; O_TMPFILE's file has no name.
    if p is not None and fx.host.isdir(p):
        return
    shown = fx.path(path)
    # /dev/null is where subprocess sends what nobody wants: no effect
    if shown is not None and shown != "/dev/null":
        fx.add("write" if fx.host.lexists(_fspath(path)) else "create",
               denied, path=shown)


def _rec_path(kind, has_dir_fd=True):
    """os.remove, os.rmdir, os.mkdir, os.truncate: path [, ...] [, dir_fd]."""
    def record(args, fx, denied):
        shown = fx.path(args[0], _dir_fd(args[-1]) if has_dir_fd else None)
        if shown is not None:
            fx.add(kind, denied, path=shown)
    return record


def _rec_rename(args, fx, denied):
    src = fx.path(args[0], _dir_fd(args[2]))
    dst = fx.path(args[1], _dir_fd(args[3]))
    if not denied and src is not None and fx.created(src):
        # written under a temporary name, then put in place
        fx.add("write" if fx.host.lexists(_fspath(args[1])) else "create",
               False, path=dst)
        return
    fx.add("rename", denied, path=src, to=dst)


def _rec_link(args, fx, denied):
    """os.link, os.symlink: what they create is dst."""
    fd = args[2] if len(args) == 3 else args[3]
    fx.add("create", denied, path=fx.path(args[1], _dir_fd(fd)))


def _rec_process(pick):
    def record(args, fx, denied):
        fx.add("process", denied, cmd=fx.text(pick(args)))
    return record


def _popen_cmd(args):
    executable, argv = args[0], args[1]
    if argv is None or isinstance(argv, (list, tuple)) and not argv:
        return executable
    return argv


def _address(a):
    if isinstance(a, tuple) and len(a) >= 2:
        return "%s:%s" % (a[0], a[1])
    return _fspath(a) or str(a)


def _rec_connect(args, fx, denied):
    fx.add("connect", denied, to=fx.text(_address(args[1])))


def _rec_lookup(args, fx, denied):
    """Only a refused lookup: an allowed one is followed by its connect."""
    if denied:
        host = args[0].decode("ascii", "replace") \
            if isinstance(args[0], bytes) else str(args[0])
        fx.add("connect", denied, to=fx.text("%s:%s" % (host, args[1])))


def _rec_socket(args, fx, denied):
    """Only a refused socket: what it was for (the caller's address)."""
    if denied:
        fx.add("connect", denied, to=fx.text(
            _peer() or "socket(%s)" % _AF_NAMES.get(args[1], args[1])))


RECORDERS = {
    "open": _rec_open,
    "os.remove": _rec_path("delete"),
    "os.rmdir": _rec_path("delete"),
    "os.mkdir": _rec_path("create"),
    "os.truncate": _rec_path("write", has_dir_fd=False),
    "os.rename": _rec_rename,
    "os.link": _rec_link,
    "os.symlink": _rec_link,
    "subprocess.Popen": _rec_process(_popen_cmd),
    "os.system": _rec_process(lambda a: a[0]),
    "os.exec": _rec_process(lambda a: a[1] or a[0]),
    "os.posix_spawn": _rec_process(lambda a: a[1] or a[0]),
    "os.spawn": _rec_process(lambda a: a[2] or a[1]),
    "os.fork": _rec_process(lambda a: "os.fork()"),
    "os.forkpty": _rec_process(lambda a: "os.forkpty()"),
    "socket.connect": _rec_connect,
    "socket.sendto": _rec_connect,
    "socket.getaddrinfo": _rec_lookup,
    "socket.__new__": _rec_socket,
}
