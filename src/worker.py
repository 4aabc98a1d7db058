# worker.py - the Python half of coil's worker, run once at start-up in a
# module of its own ("_coil").  The C half (worker.c) reads requests from
# the supervisor, calls handle(req) and sends back the dict it returns.
#
# Everything user code sees lives in __main__; nothing here is imported
# by name into it.  Frames of this file are named "<coil>" and are cut
# from every traceback a user sees.

import sys
import builtins
import _ast

_main = sys.modules["__main__"]
ns = _main.__dict__
_conf = {}
_sources = {}          # "<cell N>" -> source, handed to linecache lazily
_registered = set()
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


def setup(conf):
    """Called once by worker.c after the interpreter is up."""
    _conf.update(conf)
    sys.stdin = sys.__stdin__ = _NoStdin()
    _repair_streams()
    wd = conf.get("workdir")
    if wd and wd not in sys.path:
        sys.path.insert(0, wd)
    sys.argv[:] = [""]
    ns.setdefault("__builtins__", builtins)
    for mod in conf.get("preload") or ():
        __import__(mod)


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
            new = io.TextIOWrapper(io.FileIO(fd, "w", closefd=False),
                                   encoding="utf-8",
                                   errors="backslashreplace",
                                   line_buffering=True)
            if s is not None and not getattr(s, "closed", False) and \
                    s is not getattr(sys, "__%s__" % name):
                setattr(sys, "__%s__" % name, new)
            else:
                setattr(sys, name, new)
                setattr(sys, "__%s__" % name, new)
            fixed.append(name)
        elif not getattr(s, "line_buffering", True) and \
                s is getattr(sys, "__%s__" % name):
            s.reconfigure(line_buffering=True)
    return fixed


def _flush():
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            s.flush()
        except BaseException:
            pass


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
    while tb is not None and tb.tb_frame.f_code.co_filename == "<coil>":
        tb = tb.tb_next
    return tb


def _error(e, fname):
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
    if mod not in ("builtins", "__main__"):
        err["type"] = "%s.%s" % (mod, type(e).__qualname__)
    err["traceback"], cut = _cut(text, _conf.get("max_output", 65536))
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
    cap = _conf.get("max_output", 65536)
    reply = {"status": "ok", "result": None, "error": None}
    try:
        tree, why = _classify(code, fname, repl)
    except SyntaxError as e:
        _sources[fname] = code
        reply["status"] = "error"
        reply["error"] = _error(e, fname)
        return reply
    if why:
        return {"status": why}
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
        reply["error"] = _error(e, fname)
        e = None
    _flush()
    display, warns = _figures(cell)
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
        return {"status": "error", "error": {
            "type": type(e).__name__, "message": str(e),
            "traceback": None, "line": None}}
