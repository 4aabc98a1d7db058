# worker.py - the Python half of coil's worker, run once at start-up in a
# module of its own ("_coil").  The C half (worker.c) reads requests from
# the supervisor, calls handle(req) and sends back the dict it returns.
#
# Everything user code sees lives in __main__; nothing here is imported
# by name into it.  Frames of this file are named "<coil>" and are cut
# from every traceback a user sees.

import sys
import builtins
import gc
import _ast

_main = sys.modules["__main__"]
ns = _main.__dict__
_conf = {}
_sources = {}          # "<cell N>" -> source, handed to linecache lazily
_registered = set()
_lost = []             # streams whose output could not be written
_ONLY_AST = 0x400      # ast.PyCF_ONLY_AST, without importing ast
_COMPOUND = (_ast.If, _ast.For, _ast.While, _ast.With, _ast.Try,
             _ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef,
             _ast.AsyncFor, _ast.AsyncWith, _ast.Match)
if hasattr(_ast, "TryStar"):
    _COMPOUND += (_ast.TryStar,)


class _NoStdin:
    """sys.stdin of a cell: nothing to read, and it says why."""
    encoding = "utf-8"
    errors = "strict"
    closed = False

    def _eof(self, *args):
        raise EOFError("stdin is not available in coil: there is no "
                       "terminal to read from; pass data in the cell or "
                       "read it from a file")
    read = readline = readlines = __next__ = _eof

    def __iter__(self):
        return self

    def isatty(self):
        return False

    def fileno(self):
        return 0

    def close(self):
        pass


# Checkpoints (worker.c forks them; see ckpt.h).  What the copy needs to
# know about itself lives here, in memory the fork copies.
_ckpt = {"threads": 0, "random": None, "frozen": False, "blocks": 0}
_orphans = []          # streams a lost thread may have held locked


def ckpt_prepare():
    """Called by worker.c right before it forks a checkpoint.  Returns how
    many threads the copy will lack: fork copies only the calling one."""
    threads = 0
    th = sys.modules.get("threading")
    if th is not None:
        try:
            main = th.main_thread()
            threads = sum(1 for t in th.enumerate() if t is not main)
        except BaseException:
            pass
    _ckpt["threads"] = threads
    # random reseeds itself in a forked child; a resumed checkpoint must
    # go on with the same sequence the state had.
    rnd = sys.modules.get("random")
    _ckpt["random"] = None
    if rnd is not None:
        try:
            _ckpt["random"] = rnd.getstate()
        except BaseException:
            pass
    # Frozen objects are left alone by the collector, so a later
    # collection does not write to (and un-share) every page of the
    # namespace that the checkpoint shares with the worker.
    if not _ckpt["frozen"]:
        _ckpt["blocks"] = sys.getallocatedblocks()
    gc.freeze()
    _ckpt["frozen"] = True
    return threads


def ckpt_resumed():
    """Called in a checkpoint that has just become the worker, after
    PyOS_AfterFork_Child."""
    st = _ckpt["random"]
    rnd = sys.modules.get("random")
    if st is not None and rnd is not None:
        try:
            rnd.setstate(st)
        except BaseException:
            pass
    if _ckpt["threads"]:
        # A thread that was lost may have held a stream's lock at the
        # fork: write through new stream objects, and keep the old ones
        # referenced so that no finaliser ever waits on that lock.
        for name, fd in (("stdout", 1), ("stderr", 2)):
            old = getattr(sys, name, None)
            new = _new_stream(fd)
            _orphans.append(old)
            _orphans.append(getattr(sys, "__%s__" % name, None))
            if old is getattr(sys, "__%s__" % name, None):
                setattr(sys, name, new)
            setattr(sys, "__%s__" % name, new)
    _ckpt["threads"] = 0


def _gc_thaw():
    """Frozen garbage is never collected.  Once the heap has grown by half
    since the freezing began, let the collector see everything again
    (once: the next checkpoint freezes anew).  It runs in a cell's time,
    as any full collection would."""
    if _ckpt["frozen"] and \
            sys.getallocatedblocks() > _ckpt["blocks"] * 3 // 2 + 50000:
        gc.unfreeze()
        _ckpt["frozen"] = False
        gc.collect()


def setup(conf):
    """Called once by worker.c after the interpreter is up."""
    _conf.update(conf)
    sys.stdin = sys.__stdin__ = _NoStdin()
    sys.stdout = sys.__stdout__ = _new_stream(1)
    _repair_streams()
    _flush_before_others()
    wd = conf.get("workdir")
    if wd and wd not in sys.path:
        sys.path.insert(0, wd)
    sys.argv[:] = [""]
    ns.setdefault("__builtins__", builtins)
    for mod in conf.get("preload") or ():
        __import__(mod)


# Output is written in 64 KiB blocks, not a syscall a line: a tenfold
# difference for print-heavy cells.  Nothing is held long or out of
# order: worker.c arms a timer whose signal flushes every 20 ms while a
# cell runs, the audit hook flushes before anything else can write to
# the same pipe (a child process, a fork, a kill), and the cell's end
# flushes the rest.  A person at a terminal gets line buffering, so
# stdout and stderr interleave as they do in python's REPL.
_FLUSH_EVENTS = frozenset(("os.system", "subprocess.Popen", "os.exec",
                           "os.posix_spawn", "os.spawn", "os.fork",
                           "os.forkpty", "os.kill", "os.killpg",
                           "signal.pthread_kill", "pty.spawn",
                           "ctypes.dlsym"))


def _new_stream(fd):
    import io
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(io.BufferedWriter(raw, 65536), encoding="utf-8",
                            errors="backslashreplace",
                            line_buffering=(fd == 2))


def _flush_tick(signum, frame):
    try:
        sys.__stdout__.flush()
    except BaseException:
        pass


def _audit_flush(event, args):
    if event in _FLUSH_EVENTS:
        _flush()


def _flush_before_others():
    import os
    import _signal as signal    # not signal, which imports enum
    sig = _conf.get("flush_signal")
    if sig:
        signal.signal(sig, _flush_tick)
        signal.siginterrupt(sig, False)
    sys.addaudithook(_audit_flush)
    real_exit, real_abort = os._exit, os.abort

    def _exit(status):
        _flush()
        real_exit(status)

    def abort():
        _flush()
        real_abort()
    _exit.__doc__, abort.__doc__ = real_exit.__doc__, real_abort.__doc__
    os._exit, os.abort = _exit, abort


def _line_mode(on):
    s = sys.__stdout__
    if getattr(s, "line_buffering", on) != on:
        try:
            s.reconfigure(line_buffering=on)
        except BaseException:
            pass


def _repair_streams():
    """Give the cell working stdout and stderr again: a cell may have set
    sys.stdout to None or closed it; fd 1 and 2 themselves are repaired
    in C before this runs."""
    import io
    fixed = []
    for name, fd in (("stdout", 1), ("stderr", 2)):
        s = getattr(sys, name, None)
        if s is None or getattr(s, "closed", False) or \
                getattr(sys, "__%s__" % name) is None or \
                getattr(sys, "__%s__" % name).closed:
            new = _new_stream(fd)
            if s is not None and not getattr(s, "closed", False) and \
                    s is not getattr(sys, "__%s__" % name):
                setattr(sys, "__%s__" % name, new)
            else:
                setattr(sys, name, new)
                setattr(sys, "__%s__" % name, new)
            fixed.append(name)
    return fixed


def _fix_fd(fd):
    """Put the supervisor's pipe back on fd if the cell closed or
    replaced it (worker.c keeps a copy, and checks again after the cell)."""
    import os
    saved = (_conf.get("saved_fds") or [None, None, None])[fd]
    if saved is None:
        return False
    try:
        a, b = os.fstat(fd), os.fstat(saved)
        if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
            return False
    except OSError:
        pass
    os.dup2(saved, fd, inheritable=True)
    return True


def _flush():
    """Flush the cell's streams.  Returns warnings: a cell that closed
    fd 1 or 2 gets the supervisor's pipe back (and its output with it);
    output that still cannot be written is dropped, and said so."""
    warns = []
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if s is None or getattr(s, "closed", False):
            continue
        try:
            s.flush()
            continue
        except BaseException as e:
            err = e
        for name, fd in (("stdout", 1), ("stderr", 2)):
            if s is not getattr(sys, "__%s__" % name):
                continue
            if _fix_fd(fd):
                warns.append("fd %d was closed or replaced by the cell; "
                             "coil put its output pipe back" % fd)
                try:
                    s.flush()
                    break
                except BaseException as e:
                    err = e
            _lost.append(s)     # never flushed again, even by the GC
            setattr(sys, "__%s__" % name, _new_stream(fd))
            if getattr(sys, name) is s:
                setattr(sys, name, getattr(sys, "__%s__" % name))
            warns.append("output the cell wrote to %s was lost: %s"
                         % (name, err))
    return warns


def _register_lines(names=None):
    """Hand cell sources to linecache so tracebacks, inspect and pdb show
    them.  Only once linecache is loaded: importing it costs start-up."""
    lc = sys.modules.get("linecache")
    if lc is None:
        return
    for fname in (names or list(_sources)):
        if fname not in _registered or fname not in lc.cache:
            src = _sources[fname]
            lc.cache[fname] = (len(src), None, src.splitlines(True), fname)
            _registered.add(fname)


def _classify(code, fname, repl):
    """Compile the cell: returns (tree, None), (None, "incomplete") or
    raises SyntaxError.  Incomplete is what codeop decides; in repl mode a
    compound statement also waits for a blank line, as the REPL does."""
    try:
        tree = compile(code, fname, "exec", _ONLY_AST)
    except (SyntaxError, ValueError) as e:
        import codeop
        try:
            if codeop.compile_command(code, fname, "exec") is None:
                return None, "incomplete"
        except (SyntaxError, ValueError, OverflowError):
            pass
        if isinstance(e, ValueError):
            raise SyntaxError(str(e), (fname, 1, 1, code.split("\n")[0]))
        raise
    if repl and tree.body and isinstance(tree.body[-1], _COMPOUND) and \
            code.split("\n")[-1].strip():
        # A finished body still waits for the blank line that tells the
        # REPL the block is over.
        return None, "incomplete"
    return tree, None


def _cut(text, cap):
    """Pre-cut a huge text to head+tail so it does not cross the socket
    whole; the supervisor caps it exactly.  Returns (text, bytes cut)."""
    if cap <= 0 or len(text) <= 4 * cap:
        return text, 0
    mid = text[2 * cap:-2 * cap]
    cut = len(mid.encode("utf-8", "backslashreplace"))
    return text[:2 * cap] + text[-2 * cap:], cut


def _safe_repr(v, cap):
    try:
        r = repr(v)
    except BaseException as e:
        r = "<repr failed: %s: %s>" % (type(e).__name__, e)
    if not isinstance(r, str):
        r = "<repr returned %s, not str>" % type(r).__name__
    return _cut(r, cap)


def _user_tb(tb):
    """The frames a user should see: none of coil's, at the start (the
    exec that ran the cell) or at the end (the audit hook that words a
    sandbox denial)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == "<coil>":
        tb = tb.tb_next
    t = tb
    while t is not None and t.tb_next is not None:
        if t.tb_next.tb_frame.f_code.co_filename == "<coil>":
            t.tb_next = None
            break
        t = t.tb_next
    return tb


def _error(e, fname, cap=None):
    import traceback
    _register_lines()
    tb = _user_tb(e.__traceback__)
    e.__traceback__ = tb
    err = {"type": type(e).__name__, "message": str(e), "line": None}
    if isinstance(e, SyntaxError) and not tb:
        err["line"] = e.lineno
        err["column"] = e.offset
        lines = traceback.format_exception_only(type(e), e)
        text = "".join(lines)
        err["message"] = e.msg
    else:
        line = None
        t = tb
        while t is not None:
            if t.tb_frame.f_code.co_filename == fname:
                line = t.tb_lineno
            t = t.tb_next
        err["line"] = line
        limit = _conf.get("traceback_frames", 20)
        frames = 0
        t = tb
        while t is not None:
            frames += 1
            t = t.tb_next
        text = "".join(traceback.format_exception(type(e), e, tb,
                                                  limit=-limit))
        if frames > limit:
            text = text.replace("Traceback (most recent call last):\n",
                                "Traceback (most recent call last, %d "
                                "earlier frames not shown):\n"
                                % (frames - limit), 1)
    mod = type(e).__module__
    if mod.startswith("_coil"):
        # coil's own errors (the sandbox's words) show as the builtin
        # they subclass: PermissionError, not an internal name.
        err["type"] = next(c.__name__ for c in type(e).__mro__
                           if c.__module__ == "builtins")
    elif mod not in ("builtins", "__main__"):
        err["type"] = "%s.%s" % (mod, type(e).__qualname__)
    if cap is None:
        cap = _conf.get("max_output", 65536)
    err["traceback"], cut = _cut(text, cap)
    # A message can be as long as the exception made it: cut it as well,
    # so that the answer still fits in a frame.
    err["message"], cut = _cut(err["message"], cap)
    return err


def _figures(cell):
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return [], []
    shown, warns = [], []
    try:
        nums = plt.get_fignums()
    except BaseException:
        return [], []
    if nums:
        import os
        d = _conf.get("figure_dir") or "."
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as e:
            return [], ["figures not saved: cannot create %r: %s"
                        % (d, e.strerror)]
        for i, num in enumerate(nums, 1):
            path = os.path.join(d, "cell-%d-%d.png" % (cell, i))
            try:
                fig = plt.figure(num)
                fig.savefig(path, format="png")
                w, h = fig.canvas.get_width_height()
                shown.append({"type": "image/png", "path": path,
                              "width": w, "height": h})
            except BaseException as e:
                warns.append("figure %d not saved: %s: %s"
                             % (num, type(e).__name__, e))
        try:
            plt.close("all")
        except BaseException:
            pass
    return shown, warns


def op_exec(req):
    cell = req["cell"]
    code = req["code"]
    fname = "<cell %d>" % cell
    repl = req.get("repl", False)
    _line_mode(repl)
    cap = req.get("max_output") or _conf.get("max_output", 65536)
    reply = {"status": "ok", "result": None, "error": None}
    try:
        tree, why = _classify(code, fname, repl)
    except SyntaxError as e:
        _sources[fname] = code
        reply["status"] = "error"
        reply["error"] = _error(e, fname, cap)
        return reply
    if why:
        return {"status": why}
    reply["ran"] = True
    _gc_thaw()
    _sources[fname] = code
    _register_lines((fname,))
    body = tree.body
    last = None
    if body and type(body[-1]) is _ast.Expr:
        last = body.pop()
    try:
        if body:
            exec(compile(tree, fname, "exec"), ns)
        if last is not None:
            value = eval(compile(_ast.Expression(last.value), fname, "eval"),
                         ns)
            if value is not None:
                ns["_"] = value
                reply["result"], cut = _safe_repr(value, cap)
                if cut:
                    reply["result_cut"] = cut
    except BaseException as e:
        reply["status"] = "error"
        reply["error"] = _error(e, fname, cap)
        e = None
    lost = _flush()
    display, warns = _figures(cell)
    warns = lost + warns
    reply["display"] = display
    fixed = _repair_streams()
    for name in fixed:
        warns.append("sys.%s was closed or None after the cell; coil "
                     "reopened it" % name)
    if warns:
        reply["warnings"] = warns
    return reply


def _resolve(name):
    parts = name.strip().split(".")
    if not parts or not all(p.isidentifier() for p in parts):
        raise NameError("%r is not a name or a dotted name" % name)
    if parts[0] in ns:
        obj = ns[parts[0]]
    elif hasattr(builtins, parts[0]):
        obj = getattr(builtins, parts[0])
    else:
        raise NameError("name %r is not defined" % parts[0])
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def _typename(v):
    t = type(v)
    if t.__module__ in ("builtins", "__main__"):
        return t.__qualname__
    return "%s.%s" % (t.__module__, t.__qualname__)


def op_vars(req):
    show_all = req.get("all", False)
    out = []
    mtype = type(sys)
    for name, v in list(ns.items()):
        if name == "__builtins__" or (name.startswith("_") and not show_all):
            continue
        if isinstance(v, mtype) and not show_all:
            continue
        e = {"name": name, "type": _typename(v)}
        e["repr"], _ = _safe_repr(v, 100)
        if len(e["repr"]) > 200:
            e["repr"] = e["repr"][:199] + "\u2026"
        try:
            nb = getattr(v, "nbytes", None)
            e["size"] = nb if isinstance(nb, int) else sys.getsizeof(v)
        except BaseException:
            pass
        try:
            shape = getattr(v, "shape", None)
            if isinstance(shape, tuple) and \
                    all(isinstance(x, int) for x in shape):
                e["shape"] = list(shape)
        except BaseException:
            pass
        if not isinstance(v, type) and hasattr(type(v), "__len__"):
            try:
                e["len"] = len(v)
            except BaseException:
                pass
        out.append(e)
    return {"status": "ok", "vars": out}


def op_inspect(req):
    name = req["name"]
    try:
        obj = _resolve(name)
    except BaseException as e:
        return {"status": "error", "error": {
            "type": type(e).__name__, "message": str(e),
            "traceback": None, "line": None}}
    import inspect
    reply = {"status": "ok", "name": name, "type": _typename(obj)}
    reply["repr"], _ = _safe_repr(obj, _conf.get("max_output", 65536))
    try:
        reply["doc"] = inspect.getdoc(obj)
    except BaseException:
        reply["doc"] = None
    try:
        reply["signature"] = str(inspect.signature(obj)) \
            if callable(obj) else None
    except (TypeError, ValueError):
        reply["signature"] = None
    try:
        reply["file"] = inspect.getsourcefile(obj)
    except BaseException:
        pass
    return reply


def _token_start(text):
    i = len(text)
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_."):
        i -= 1
    return i


def op_complete(req):
    code = req["code"]
    cursor = req.get("cursor")
    if cursor is None or cursor > len(code):
        cursor = len(code)
    text = code[:cursor]
    start = _token_start(text)
    token = text[start:]
    matches = []
    if "." in token:
        expr, _, attr = token.rpartition(".")
        try:
            obj = _resolve(expr)
            names = dir(obj)
        except BaseException:
            names = []
        for a in names:
            if a.startswith(attr) and (attr.startswith("_") or
                                       not a.startswith("_")):
                matches.append(expr + "." + a)
    else:
        import keyword
        seen = set()
        for n in list(ns) + dir(builtins) + keyword.kwlist:
            if n.startswith(token) and n not in seen and \
                    (token.startswith("_") or not n.startswith("_")):
                seen.add(n)
                matches.append(n)
    matches.sort()
    return {"status": "ok", "matches": matches, "start": start,
            "end": cursor}


def op_reset(req):
    keep = {k: ns[k] for k in ("__name__", "__builtins__", "__doc__",
                               "__spec__", "__loader__", "__package__")
            if k in ns}
    ns.clear()
    ns.update(keep)
    return {"status": "ok"}


_OPS = {"exec": op_exec, "vars": op_vars, "inspect": op_inspect,
        "complete": op_complete, "reset": op_reset}


def handle(req):
    try:
        return _OPS[req["op"]](req)
    except BaseException as e:
        import traceback
        return {"status": "error", "error": {
            "type": type(e).__name__, "message": str(e),
            "traceback": "".join(traceback.format_exception(e)),
            "line": None}}
