# module: _coil
# errors.py - how coil tells an error to the model: the first of the
# worker's two Python files, run once at start-up in the "_coil" module's
# namespace, before worker.py, which calls what it defines: _classify
# (compile a cell, or say it is still incomplete), _incomplete, and
# _error (an exception as the answer's "error": the traceback folded for
# a model, library frames counted, "Did you mean", a hint for a missing
# module or key).
#
# The two files are one module: names are looked up when called, so
# this file uses worker.py's _conf, ns, _register_lines and _cut, which
# are defined after it runs.  Frames of both are named "<coil>" (the
# file name src/pyembed and worker_code compile them with), which is how
# _user_tb cuts coil's frames from every traceback a user sees.

import sys
import builtins
import _ast

_ONLY_AST = 0x400      # ast.PyCF_ONLY_AST, without importing ast
_AWAIT = 0x2000        # ast.PyCF_ALLOW_TOP_LEVEL_AWAIT: IPython's autoawait
_COMPOUND = (_ast.If, _ast.For, _ast.While, _ast.With, _ast.Try,
             _ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef,
             _ast.AsyncFor, _ast.AsyncWith, _ast.Match)
if hasattr(_ast, "TryStar"):
    _COMPOUND += (_ast.TryStar,)


def _classify(code, fname, repl):
    """Compile the cell: returns (tree, None), (None, why) where why is
    the SyntaxError that says what is still open, or raises SyntaxError.
    Incomplete is what codeop decides, and also what it calls "incomplete
    input" (a backslash continuation followed by a newline): the same
    source must not be incomplete as one line and a SyntaxError with a
    newline after it.  In repl mode a compound statement also waits for
    a blank line, as the REPL does."""
    try:
        tree = compile(code, fname, "exec", _ONLY_AST | _AWAIT)
    except (SyntaxError, ValueError) as e:
        codeop = _std("codeop")
        try:
            if codeop.compile_command(code, fname, "exec") is None and \
                    isinstance(e, SyntaxError):
                return None, e
        except SyntaxError as ce:
            if ce.msg == "incomplete input" and isinstance(e, SyntaxError):
                return None, e
        except (ValueError, OverflowError):
            pass
        if isinstance(e, ValueError):
            raise SyntaxError(str(e), (fname, 1, 1, code.split("\n")[0]))
        raise
    if repl and tree.body and isinstance(tree.body[-1], _COMPOUND) and \
            code.split("\n")[-1].strip():
        # A finished body still waits for the blank line that tells the
        # REPL the block is over.
        last = tree.body[-1]
        kw = _KEYWORDS.get(type(last).__name__, "compound")
        lines = code.split("\n")
        return None, SyntaxError(
            "the '%s' statement on line %d goes on until a blank line"
            % (kw, last.lineno),
            (fname, len(lines), len(lines[-1]) + 1, lines[-1], None, None))
    return tree, None


_KEYWORDS = {"If": "if", "For": "for", "While": "while", "With": "with",
             "Try": "try", "TryStar": "try", "FunctionDef": "def",
             "AsyncFunctionDef": "async def", "ClassDef": "class",
             "AsyncFor": "async for", "AsyncWith": "async with",
             "Match": "match"}


def _incomplete(why):
    """The error of an incomplete answer: what is still open, where."""
    traceback = _std("traceback")
    text = "".join(traceback.format_exception_only(type(why), why))
    return {"type": type(why).__name__, "message": why.msg,
            "traceback": text, "line": why.lineno, "column": why.offset}


def _user_tb(tb):
    """The frames a user should see: none of coil's, at the start (the
    exec that ran the cell) or at the end (the audit hook that words a
    sandbox denial, the signal handler an interrupt landed in)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == "<coil>":
        tb = tb.tb_next
    t = tb
    while t is not None and t.tb_next is not None:
        if t.tb_next.tb_frame.f_code.co_filename == "<coil>":
            t.tb_next = None
            break
        t = t.tb_next
    return tb


# How an answer tells an error (op_exec's, and handle's for an interrupt
# that came between cells).  The traceback is sized for a model's context
# window: the user's frames (cells, code exec'd in the namespace, files of
# the work directory) whole; a run of library frames one line naming the
# packages and the count, except the frame that raised; chained
# exceptions kept, each told the same way.  Python 3.11's own words are
# kept where it has them: carets, "Did you mean", the chain's joints.

_CAUSE = ("\nThe above exception was the direct cause of the following "
          "exception:\n\n")
_CONTEXT = ("\nDuring handling of the above exception, another exception "
            "occurred:\n\n")
_REPEATS = 3            # traceback's _RECURSIVE_CUTOFF


def _chain(e):
    """[(exception, joint)] oldest first, as Python prints a chain, the
    joint being the words between it and the next; coil's frames are cut
    from every traceback in it (a denial in library code is the context
    of the library's own error)."""
    out, seen, joint = [], set(), ""
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = _user_tb(e.__traceback__)
        out.append((e, joint))      # joint: the words after e
        if e.__cause__ is not None:
            e, joint = e.__cause__, _CAUSE
        elif e.__context__ is not None and not e.__suppress_context__:
            e, joint = e.__context__, _CONTEXT
        else:
            e = None
    out.reverse()
    return out


def _is_user(fs, frame):
    if fs.filename.startswith("<cell ") or frame.f_globals is ns:
        return True
    wd = (_conf.get("workdir") or "").rstrip("/")
    return bool(wd) and fs.filename.startswith(wd + "/") and \
        "-packages/" not in fs.filename


def _package(fs, frame):
    name = frame.f_globals.get("__name__")
    if isinstance(name, str) and name:
        return name.split(".")[0]
    base = fs.filename.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] or base


def _frame_rows(stack, frames, final):
    """The stack's lines: runs of library frames folded, the last frame
    whole if the exception is the one the cell ended with (an earlier
    one of its chain is told in brief), a recursion's repeats counted
    as traceback counts them."""
    rows, i, n = [], 0, len(stack)
    keep = 1 if final else 0
    last, count = None, 0

    def repeated():
        if count > _REPEATS:
            k = count - _REPEATS
            rows.append("  [Previous line repeated %d more time%s]\n"
                        % (k, "s" if k > 1 else ""))
    while i < n:
        if i < n - keep and not _is_user(stack[i], frames[i]):
            j, pkgs = i, []
            while j < n - keep and not _is_user(stack[j], frames[j]):
                p = _package(stack[j], frames[j])
                if p not in pkgs:
                    pkgs.append(p)
                j += 1
            repeated()
            last, count = None, 0
            rows.append("  ... %d frame%s in %s ...\n"
                        % (j - i, "s" if j - i > 1 else "", ", ".join(pkgs)))
            i = j
            continue
        fs = stack[i]
        key = (fs.filename, fs.lineno, fs.name)
        if key != last:
            repeated()
            last, count = key, 0
        count += 1
        if count <= _REPEATS:
            rows.append(stack.format_frame_summary(fs))
        i += 1
    repeated()
    return rows


def _suggestion(e):
    """" Did you mean: 'x'?" as python3.11 words it for e, or "".  3.11
    computes it only where its excepthook prints (C, not the traceback
    module), so ask the excepthook, into a buffer."""
    if isinstance(e, ImportError) and not isinstance(e, ModuleNotFoundError):
        # "cannot import name 'pathx' from 'os'": what a later Python
        # suggests, asked as the attribute it is
        mod = sys.modules.get(e.name or "")
        msg = str(e)
        if mod is None or not msg.startswith("cannot import name '"):
            return ""
        e = AttributeError(msg, name=msg.split("'")[1], obj=mod)
    elif not isinstance(e, (NameError, AttributeError)):
        return ""
    io = _std("io")
    buf = io.StringIO()
    saved = (sys.stderr, e.__cause__, e.__context__, e.__suppress_context__)
    try:
        sys.stderr = buf
        e.__cause__ = e.__context__ = None
        sys.__excepthook__(type(e), e, e.__traceback__)
    except BaseException:
        return ""
    finally:
        sys.stderr = saved[0]
        e.__cause__, e.__context__, e.__suppress_context__ = saved[1:]
    text = buf.getvalue()
    i = text.rfind(". Did you mean: '")
    if i < 0 or text.find(". Did you mean: '") < 0 or "Did you mean" in \
            str(e):
        return ""
    return text[i:].split("\n", 1)[0]


def _exc_lines(te, suggestion):
    lines = list(te.format_exception_only())
    if suggestion and lines and not issubclass(te.exc_type, SyntaxError):
        lines[0] = lines[0][:-1] + suggestion + "\n"
    return lines


def _block(x, limit, suggestion, final):
    """One exception of a chain, told: its traceback and its last line."""
    traceback = _std("traceback")
    frames = [f for f, _ in traceback.walk_tb(x.__traceback__)]
    te = traceback.TracebackException(type(x), x, x.__traceback__,
                                      limit=-min(len(frames), limit) or None,
                                      compact=True)
    stack = te.stack
    hidden = len(frames) - len(stack)
    frames = frames[hidden:]
    out = []
    if stack:
        if hidden > 0:
            out.append("Traceback (most recent call last, %d earlier "
                       "frames not shown):\n" % hidden)
        else:
            out.append("Traceback (most recent call last):\n")
        out += _frame_rows(stack, frames, final)
    return out + _exc_lines(te, suggestion)


def _tell(e, limit):
    """The traceback text of e and its chain, and e's suggestion."""
    traceback = _std("traceback")
    chain = _chain(e)
    if any(isinstance(x, BaseExceptionGroup) for x, _ in chain):
        # groups keep traceback's nested drawing
        return "".join(traceback.format_exception(
            type(e), e, e.__traceback__, limit=-limit)), ""
    text, mine = [], ""
    for x, joint in chain:
        s = _suggestion(x)
        if x is e:
            mine = s
        text += _block(x, limit, s, x is e)
        text.append(joint)
    return "".join(text), mine


def _error(e, fname, cap=None):
    traceback = _std("traceback")
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
        text, suggestion = _tell(e, _conf.get("traceback_frames", 20))
        err["message"] += suggestion
        if isinstance(e, UsageError):
            # a magic used wrongly: its line says it, as IPython's does;
            # the frames would only show the magic's own line again
            text = "UsageError: %s\n" % err["message"]
        hint = _hint(e)
        if hint:
            err["hint"] = hint
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
    if cut:
        err["traceback_cut"] = cut
    # A message can be as long as the exception made it: cut it as well,
    # so that the answer still fits in a frame.
    err["message"], cut = _cut(err["message"], cap)
    if cut:
        err["message_cut"] = cut
    return err


# ---- hints: the model's predictable next move, said before it is made

# Import names whose Debian package is not python3-<name>.
_DEBIAN_NAMES = {"sklearn": "python3-sklearn", "cv2": "python3-opencv",
                 "PIL": "python3-pil", "yaml": "python3-yaml",
                 "bs4": "python3-bs4", "skimage": "python3-skimage",
                 "dateutil": "python3-dateutil", "serial": "python3-serial",
                 "Crypto": "python3-pycryptodome", "Bio": "python3-biopython"}


def _hint(e):
    try:
        if isinstance(e, ModuleNotFoundError):
            return _module_hint(e)
        if isinstance(e, KeyError) and len(e.args) == 1:
            return _key_hint(e)
    except Exception:           # a hint is a courtesy: never the error
        pass
    return None


def _module_hint(e):
    """What a missing module means here: which Python coil embeds, that a
    cell cannot install anything, the module meant if it was misspelt,
    and the Debian package that would bring it."""
    find_spec = _std("importlib.util").find_spec
    os = _std("os")
    top = (e.name or "").split(".")[0]
    if not top or find_spec(top) is not None:
        return None
    difflib = _std("difflib")
    pkgutil = _std("pkgutil")
    names = set(sys.builtin_module_names)
    names.update(m.name for m in pkgutil.iter_modules())
    near = difflib.get_close_matches(top, sorted(names), n=3, cutoff=0.8)
    words = []
    if near:
        words.append("did you mean %s? " % " or ".join(
            repr(n) for n in near))
    v = sys.version_info
    words.append("coil runs Python %d.%d.%d (%s)"
                 % (v[0], v[1], v[2], sys.executable or sys.prefix))
    if _conf.get("venv"):
        words.append(" in the venv %s; install it there with %%pip install "
                     "%s%s" % (_conf["venv"], top, "" if _conf.get(
                         "allow_net") else " --find-links DIR (a directory "
                         "of wheels: the sandbox has no network)"))
        return "".join(words)
    if _conf.get("sandbox", "none") != "none":
        words.append("; nothing can be installed from inside the sandbox")
    if any(p.endswith("/dist-packages") for p in sys.path):
        pkg = _DEBIAN_NAMES.get(top, "python3-" + top.lower().replace(
            "_", "-"))
        if os.path.isdir("/usr/share/doc/" + pkg):
            words.append("; the Debian package %s is installed but gives "
                         "this Python no '%s'" % (pkg, top))
        else:
            words.append("; %s is not installed (if Debian has it: apt "
                         "install %s outside coil, then restart coil)"
                         % (pkg, pkg))
    return "".join(words)


def _container(tb):
    """The dict, frame or index a KeyError was raised looking into:
    the `self` of the innermost library frames (pandas raises deep in its
    indexes), else the name subscripted on the failing line of the
    user's frame, looked up without running anything."""
    ast = _std("ast")
    linecache = _std("linecache")
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    user = [i for i, t in enumerate(entries)
            if t.tb_frame.f_code.co_filename.startswith("<cell ") or
            t.tb_frame.f_globals is ns]
    if not user:
        return None
    # the outermost library call first: df[...] rather than its columns
    for t in entries[user[-1] + 1:]:
        obj = t.tb_frame.f_locals.get("self")
        if obj is not None and _keys(obj) is not None:
            return obj
    t = entries[user[-1]]
    f = t.tb_frame
    if t.tb_lasti < 0:
        return None
    pos = list(f.f_code.co_positions())[t.tb_lasti // 2]
    line = linecache.getline(f.f_code.co_filename, t.tb_lineno)
    if pos[0] != pos[1] or pos[2] is None or not line:
        return None
    seg = line.encode()[pos[2]:pos[3]].decode(errors="replace")
    node = ast.parse(seg.strip(), mode="eval").body
    if isinstance(node, ast.Call):
        node = getattr(node.func, "value", None)
    elif isinstance(node, ast.Subscript):
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    for space in (f.f_locals, f.f_globals, vars(builtins)):
        if node.id in space:
            return space[node.id]
    return None


def _keys(obj):
    """(what a key is called, of what, the keys) or None."""
    itertools = _std("itertools")
    t = type(obj)
    if t.__module__.startswith("pandas"):
        if hasattr(obj, "columns"):
            return "column", "DataFrame", list(obj.columns[:10000])
        if hasattr(obj, "get_loc"):
            return "label", t.__name__, list(obj[:10000])
        if hasattr(obj, "index"):
            return "label", t.__name__, list(obj.index[:10000])
        return None
    if isinstance(obj, dict) or hasattr(obj, "keys") and \
            hasattr(obj, "__getitem__"):
        return "key", t.__name__, list(itertools.islice(obj.keys(), 10000))
    return None


def _key_hint(e):
    """The closest keys the container has, for a misspelt one."""
    difflib = _std("difflib")
    obj = _container(e.__traceback__)
    if obj is None:
        return None
    word, what, keys = _keys(obj)
    key = e.args[0]
    if key in keys:
        return None
    shown = {repr(k): k for k in keys}
    near = difflib.get_close_matches(repr(key), list(shown), n=3, cutoff=0.6)
    out = []
    if near:
        out.append("did you mean %s? " % " or ".join(near))
    if not keys:
        return "the %s is empty" % what
    many = len(keys) > 20
    listed = difflib.get_close_matches(repr(key), list(shown), n=20,
                                       cutoff=0) if many else list(shown)
    out.append("the %s has %d %s%s%s: %s" % (
        what, len(keys), word, "s" if len(keys) > 1 else "",
        ", the 20 closest" if many else "", ", ".join(listed)))
    return "".join(out)
