# module: _coil
# magics.py - IPython's syntax in coil's cells: line and cell magics
# (%timeit, %%time), shell escapes (!ls, x = !ls, !!ls) and help (obj?,
# obj??).  Run once at start-up in the "_coil" module's namespace, after
# errors.py and before worker.py, whose op_exec calls _transform on every
# cell before _classify sees it (DESIGN.md, "One cell": magics first).
#
# The rewriting is line for line: a magic's line becomes one call to
# __coil__ (a builtin, the one door from a cell into this file) on the
# same line, so tracebacks, linecache and the cell's line numbers stay
# the user's.  A cell magic's body is handed over as a string and
# compiled with the cell's own file name, its lines where they were.
#
# One table, _MAGICS, holds every magic: its name, whether it is a line
# or cell magic or both, its usage and its help.  Dispatch, %lsmagic,
# `%name?` and the man page's list (coil.1) are all read from it.  The
# entries themselves are magictab.py's and magicproc.py's, the files run
# after this one.
#
# Checkpoints are the supervisor's (a worker may only affect its own
# cell): %snapshot, %rollback and %snapshots are rewritten into requests
# by the front end (request_magic in request.c) when they are a cell of
# their own; here they are only named, and said so if they come inside
# a larger cell.

import sys
import builtins


class UsageError(Exception):
    """A magic used wrongly.  Named as IPython names it, "UsageError",
    in the answer's type and the traceback's last line alike (errors.py
    shows a builtins class by its bare name)."""
    __module__ = "builtins"


# ---- the rewriting --------------------------------------------------

_NAME = r"[A-Za-z_]\w*"
_HELP_OBJ = r"%{0,2}" + _NAME + r"(?:\." + _NAME + r"|\[-?\d+\])*"
_rx = {}


def _regexes():
    """Compiled on the first cell that may need them: most cells do not
    (no %, ! or ? at all), and re costs start-up."""
    if not _rx:
        re = _std("re")
        _rx["magic"] = re.compile(r"^(\s*)%(" + _NAME + r")(.*)$")
        # a target, or several to unpack (a, b = !cmd)
        one = r"[A-Za-z_][\w.]*(?:\[[^=\]]*\])?"
        _rx["assign"] = re.compile(
            r"^(\s*)(" + one + r"(?:\s*,\s*" + one + r")*\s*,?)\s*=\s*"
            r"(!!?|%(?!%))(.*)$")
        _rx["bang"] = re.compile(r"^(\s*)(!!?)(.*)$")
        # !pip ARGS, !pip3, !python -m pip, !python3.11 -m pip: %pip's
        _rx["pip"] = re.compile(r"^\s*(pip3?|python(?:3(?:\.\d+)?)?\s+-m"
                                r"\s+pip)(?:\s+|$)")
        _rx["help_end"] = re.compile(r"^(\s*)(" + _HELP_OBJ + r")(\?\??)\s*$")
        _rx["help_start"] = re.compile(r"^(\s*)(\?\??)(" + _HELP_OBJ +
                                       r")\s*$")
        _rx["dollar"] = re.compile(r"(.*?)\$(\$?[\w\.]+)(?=([^']*'[^']*')*"
                                   r"[^']*$)")
    return _rx


def _pip_alone(cmd):
    """The !pip match of cmd when pip is the whole command line; None
    when cmd is something else, or a pipeline, a redirection or a list
    (!pip freeze > req.txt, !pip list | grep x): those are the shell's,
    as in IPython, with the venv's bin/ first on PATH."""
    m = _regexes()["pip"].match(cmd)
    if m is None or any(c in cmd for c in "|&;<>`$()\n"):
        return None
    return m


def _starts(lines):
    """The 0-based indexes of the lines that begin a logical line: only
    there is `%` a magic and `!` an escape (not inside a string or an
    open bracket).  Tokenizing stops at the first error, which leaves
    the lines after it as they were."""
    io = _std("io")
    tokenize = _std("tokenize")
    starts, depth, at_start = set(), 0, True
    src = "".join(line + "\n" for line in lines)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(src).readline):
            if tok.type == tokenize.NEWLINE or \
                    (tok.type == tokenize.NL and depth == 0):
                at_start = True
                continue
            if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT,
                            tokenize.DEDENT, tokenize.ENDMARKER):
                continue
            if at_start:
                starts.add(tok.start[0] - 1)
                at_start = False
            if tok.type == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                elif tok.string in ")]}":
                    depth = max(depth - 1, 0)
    except (tokenize.TokenError, SyntaxError):
        pass
    return starts


def _rewrite(line):
    """The Python for one line of IPython syntax, or None when the line
    is plain Python."""
    rx = _regexes()
    m = rx["help_end"].match(line) or rx["help_start"].match(line)
    if m:
        ind, a, b = m.groups()
        obj, q = (a, b) if m.re is rx["help_end"] else (b, a)
        return "%s__coil__.help(%r, %d)" % (ind, obj, len(q) - 1)
    m = rx["assign"].match(line)
    if m:
        ind, target, kind, rest = m.groups()
        if kind.startswith("!"):
            return "%s%s = __coil__.getoutput(%r)" % (ind, target, rest)
        name, _, arg = rest.partition(" ")
        return "%s%s = __coil__.line(%r, %r)" % (ind, target, name, arg)
    m = rx["bang"].match(line)
    if m:
        ind, kind, rest = m.groups()
        fn = "getoutput" if kind == "!!" else "system"
        return "%s__coil__.%s(%r)" % (ind, fn, rest)
    m = rx["magic"].match(line)
    if m:
        ind, name, arg = m.groups()
        return "%s__coil__.line(%r, %r)" % (ind, name, arg.strip())
    return None


def _transform(code):
    """Rewrite a cell's IPython syntax into Python.  Returns (source,
    body): body is a cell magic's body, for _classify to judge whether
    the cell is still incomplete (None when there is no cell magic)."""
    if "%" not in code and "!" not in code and "?" not in code:
        return code, None
    lines = code.split("\n")
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    head = lines[first].strip()[2:] if first < len(lines) and \
        lines[first].lstrip().startswith("%%") else None
    if head is not None and not head.endswith("?"):   # %%time? is help
        name, _, arg = head.partition(" ")
        body = "\n".join(lines[first + 1:])
        call = "__coil__.cell(%r, %r, %r, %d)" % (name, arg.strip(), body,
                                                 first + 1)
        return "\n" * first + call + "\n" * (len(lines) - first - 1), body
    done = set()
    while True:
        starts = _starts(lines)
        for i in sorted(starts - done):
            done.add(i)
            new = _rewrite(lines[i])
            if new is not None:
                lines[i] = new
                break       # the lines after it tokenize anew
        else:
            return "\n".join(lines), None


# ---- the door from a cell: __coil__ ---------------------------------

def _caller_ns(frame):
    """The namespace a magic's code runs in: the cell's, or a function's
    locals over the globals when the magic line is inside a function."""
    if frame.f_locals is frame.f_globals:
        return frame.f_globals
    merged = dict(frame.f_globals)
    merged.update(frame.f_locals)
    return merged


def _expand(text, frame):
    """$name, ${expr}-free IPython expansion: $name and {expr} evaluated
    in the caller's namespace, $$ a literal $; anything that does not
    evaluate leaves the text as it was, as IPython's var_expand does
    (so awk '{print $1}' passes through)."""
    string = _std("string")
    space = _caller_ns(frame)
    dollar = _regexes()["dollar"]
    fmt = string.Formatter()
    out = []
    try:
        for lit, field, spec, conv in fmt.parse(text):
            pos = 0
            for m in dollar.finditer(lit):
                pre, name = m.group(1, 2)
                out.append(pre)
                out.append(name if name.startswith("$") else
                           str(eval(name, space)))
                pos = m.end()
            out.append(lit[pos:])
            if field is not None:
                v = fmt.convert_field(eval(field, space), conv)
                out.append(fmt.format_field(v, spec or ""))
    except Exception:
        return text
    return "".join(out)


class SList(list):
    """What `x = !cmd` gives: the output's lines, a list, with IPython's
    SList views (.s, .n, .p, .l) and grep/fields."""

    @property
    def l(self):
        return list(self)

    @property
    def s(self):
        return " ".join(self)

    @property
    def n(self):
        return "\n".join(self)

    @property
    def p(self):
        os = _std("os")
        pathlib = _std("pathlib")
        return [pathlib.Path(x) for x in self if os.path.exists(x)]

    def grep(self, pattern, prune=False, field=None):
        re = _std("re")
        pred = pattern if callable(pattern) else \
            (lambda s: re.search(pattern, s, re.IGNORECASE))

        def key(s):
            if field is None:
                return s
            parts = s.split()
            return parts[field] if len(parts) > field else ""
        return SList(x for x in self if bool(pred(key(x))) != prune)

    def fields(self, *idx):
        out = SList()
        for line in self:
            parts = line.split()
            if not idx:
                out.append(parts)
            else:
                out.append(" ".join(parts[i] for i in idx
                                    if -len(parts) <= i < len(parts)))
        return out


def _shell_ok(what):
    if _conf.get("sandbox") == "strict":
        raise PermissionError(
            "%s starts a process, and --sandbox strict allows no new "
            "processes; start coil with --sandbox standard to run shell "
            "commands" % what)


class _Door:
    """__coil__, a builtin: what the rewritten lines call."""

    def line(self, name, arg, lineno=0):
        return _run_magic(name, "line", arg, None, lineno,
                          sys._getframe(1))

    def cell(self, name, arg, body, lineno=0):
        return _run_magic(name, "cell", arg, body, lineno,
                          sys._getframe(1))

    def system(self, cmd):
        """!cmd: its output goes out with the cell's, in order.  !pip
        is %pip (magicproc.py's _pip): the venv's pip, offline rules
        and all."""
        subprocess = _std("subprocess")
        cmd = _expand(cmd, sys._getframe(1))
        m = _pip_alone(cmd)
        if m:
            return _pip(cmd[m.end():], "!" + m.group(1).strip())
        _shell_ok("!" + cmd.split(" ")[0] if cmd.strip() else "!")
        _flush()
        r = subprocess.run(cmd, shell=True)
        ns["_exit_code"] = r.returncode

    def getoutput(self, cmd):
        """x = !cmd and !!cmd: stdout and stderr, as lines (!pip's
        too, through %pip's handler)."""
        subprocess = _std("subprocess")
        cmd = _expand(cmd, sys._getframe(1))
        m = _pip_alone(cmd)
        if m:
            return _pip(cmd[m.end():], "!" + m.group(1).strip(),
                        capture=True)
        _shell_ok("!" + cmd.split(" ")[0] if cmd.strip() else "!")
        _flush()
        r = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        ns["_exit_code"] = r.returncode
        return SList(r.stdout.decode("utf-8", "replace").splitlines())

    def help(self, expr, detail):
        _pinfo(expr, detail, sys._getframe(1))


def _install_door():
    builtins.__coil__ = _Door()


# ---- the table ------------------------------------------------------

_LINE, _CELL, _BOTH = 1, 2, 3
_TEXT = 4               # a cell magic whose body is not Python
_MAGICS = {}            # name -> (kinds, usage, help, fn)


def _magic(name, kinds, usage, text):
    def put(fn):
        _MAGICS[name] = (kinds, usage, text, fn)
        return fn
    return put


def _find(name, kind):
    m = _MAGICS.get(name)
    if m is None or not m[0] & (_CELL if kind == "cell" else _LINE):
        known = _names(_CELL if kind == "cell" else _LINE)
        pre = "%%" if kind == "cell" else "%"
        raise UsageError("%s magic function `%s%s` not found; coil knows: %s"
                         % ("Cell" if kind == "cell" else "Line", pre, name,
                            " ".join(pre + n for n in known)))
    return m


def _text_body(code):
    """True when code is a cell magic whose body is text for a file or
    another program (%%writefile, %%bash): no Python rules apply to it."""
    head = code.lstrip().split("\n", 1)[0]
    m = _MAGICS.get(head[2:].split(" ", 1)[0]) if head.startswith("%%") \
        else None
    return m is not None and bool(m[0] & _TEXT)


def _names(kind):
    return sorted(n for n, m in _MAGICS.items() if m[0] & kind)


# Whose line is not expanded, as in IPython: a statement to time, profile
# or debug is Python, where $ and {} are its own.
_NO_EXPAND = frozenset(("time", "timeit", "prun", "debug"))


def _run_magic(name, kind, arg, body, lineno, frame):
    m = _find(name, kind)
    if name not in _NO_EXPAND and ("$" in arg or "{" in arg):
        arg = _expand(arg, frame)       # $name and {expr}, as IPython
    return m[3](arg=arg, body=body, lineno=lineno, frame=frame,
                kind=kind)


def _opts(arg, spec, name):
    """A magic's leading options, getopt's spec ("n:r:qo": a colon after
    a letter that takes a value).  Returns ({letter: value}, the rest of
    arg untouched): a statement keeps its quotes and spacing, as
    IPython's parse_options(posix=False) keeps them."""
    opts, s = {}, arg.lstrip()
    while len(s) > 1 and s[0] == "-" and s[1] in spec and s[1] != ":":
        letter, s = s[1], s[2:]
        if spec[spec.index(letter) + 1:][:1] == ":":
            s = s.lstrip()
            value = s.split(None, 1)
            if not value:
                raise UsageError("%%%s: option -%s needs a value (usage: %s)"
                                 % (name, letter, _MAGICS[name][1]))
            opts[letter] = value[0]
            s = value[1] if len(value) > 1 else ""
        else:
            opts[letter] = ""
            if s[:1] not in ("", " ", "\t"):
                s = "-" + s         # -qo: q, then o
        s = s.lstrip()
    return opts, s


def _words(text):
    shlex = _std("shlex")
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _stmt(arg, body, lineno):
    """The Python a timing magic times, placed on its lines of the cell:
    a line magic's argument on its line, a cell magic's body from the
    line after the %% line."""
    if body is None:
        return "\n" * max(lineno - 1, 0) + arg
    return "\n" * lineno + body


# ---- help: obj?, obj?? -----------------------------------------------

def _pinfo(expr, detail, frame):
    """IPython's object help, without colour: Signature, Docstring (and
    Source for ??), File, Type; String form and Length for data."""
    inspect = _std("inspect")
    if expr.startswith("%"):
        _magic_help(expr)
        return
    try:
        obj = eval(expr, _caller_ns(frame))
    except Exception:
        print("Object `%s` not found." % expr)
        return
    fields = []

    def add(title, fn):
        try:
            v = fn()
        except Exception:
            v = None
        if v:
            fields.append((title, str(v)))
    isclass = inspect.isclass(obj)
    if isclass or inspect.isroutine(obj):
        if isclass:
            add("Init signature", lambda: expr + str(inspect.signature(obj)))
        else:
            add("Signature", lambda: expr + str(inspect.signature(obj)))
        add("Docstring", lambda: inspect.getdoc(obj) or "<no docstring>")
        if detail:
            add("Source", lambda: inspect.getsource(obj).rstrip("\n"))
        elif isclass and obj.__init__ is not object.__init__:
            add("Init docstring", lambda: inspect.getdoc(obj.__init__))
        add("File", lambda: inspect.getsourcefile(obj) or
            inspect.getfile(obj))
        add("Type", lambda: type(obj).__name__)
        if isclass:
            add("Subclasses", lambda: ", ".join(
                c.__name__ for c in type.__subclasses__(obj)))
    else:
        add("Type", lambda: type(obj).__name__)
        add("String form", lambda: _string_form(obj))
        add("Length", lambda: str(len(obj)))
        add("File", lambda: _source_file(obj))
        if detail:
            add("Source", lambda: inspect.getsource(obj).rstrip("\n"))
        if not detail or not fields[-1][0] == "Source":
            add("Docstring", lambda: inspect.getdoc(obj))
    width = max(len(t) for t, _ in fields)
    for title, body in fields:
        body = body.strip("\n")
        print(title + ":" + " " * (width - len(title)) +
              ("\n" if "\n" in body else " ") + body)


def _source_file(obj):
    """The file an object comes from: its own (a module's), else its
    class's, as IPython finds it; None for builtins."""
    inspect = _std("inspect")
    for o in (obj, type(obj)):
        try:
            return inspect.getsourcefile(o)
        except TypeError:
            continue
    return None


def _string_form(obj):
    s = str(obj)
    return s if len(s) <= 200 else s[:100] + " <...> " + s[-100:]


def _cell_name():
    return _current[0] if _current else "<coil>"


_current = []           # the running cell's file name, set by op_exec
