# module: _coil
# magictab.py - the magics themselves: each a function under _magic(),
# which enters it in magics.py's table with its usage and help.  Run
# once at start-up in the "_coil" module's namespace, after magics.py
# (the table, the options reader, the door that calls these) and before
# display.py.  Output formats are IPython 8's, word for word, as
# tests/agent/magics.py checks against IPython itself.

import sys
import builtins


# ---- timing: %time, %timeit, %prun ----------------------------------

def _format_time(t, precision=3):
    """IPython's _format_time: 1.23 ms, 4.5 µs, 2min 3s."""
    math = _std("math")
    if t >= 60.0:
        out, left = [], t
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60),
                               ("s", 1)):
            v = int(left / length)
            if v > 0:
                left = left % length
                out.append("%d%s" % (v, suffix))
            if left < 1:
                break
        return " ".join(out)
    units = ("s", "ms", "\u00b5s", "ns")
    order = min(-int(math.floor(math.log10(t)) // 3), 3) if t > 0 else 3
    return "%.*g %s" % (precision, t * (1, 1e3, 1e6, 1e9)[order],
                        units[order])


def _split_last(src, fname):
    """(code of all but a last expression, code of that expression or
    None), as the cell itself is run."""
    ast = _std("ast")
    tree = compile(src, fname, "exec", ast.PyCF_ONLY_AST)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    return compile(tree, fname, "exec"), \
        compile(last, fname, "eval") if last is not None else None


@_magic("time", _BOTH, "%time STATEMENT  /  %%time",
        "Time one run of a statement or of the cell: CPU times (user, "
        "sys) and wall time, as IPython prints them; the value of a last "
        "expression is the result.")
def _m_time(arg, body, lineno, frame, **_):
    resource = _std("resource")
    time = _std("time")
    space = _caller_ns(frame)
    code, last = _split_last(_stmt(arg, body, lineno), _cell_name())
    r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    exec(code, space)
    out = eval(last, space) if last is not None else None
    w1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
    user, syst = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    print("CPU times: user %s, sys: %s, total: %s" % (
        _format_time(user), _format_time(syst), _format_time(user + syst)))
    print("Wall time: %s" % _format_time(w1 - w0))
    return out


class TimeitResult:
    """What %timeit -o returns, printed as IPython prints it."""

    def __init__(self, loops, repeat, all_runs, precision):
        self.loops, self.repeat, self.all_runs = loops, repeat, all_runs
        self.timings = [t / loops for t in all_runs]
        self.best, self.worst = min(self.timings), max(self.timings)
        self.average = sum(self.timings) / len(self.timings)
        self.stdev = (sum((t - self.average) ** 2 for t in self.timings) /
                      len(self.timings)) ** 0.5
        self._precision = precision

    def __str__(self):
        return ("%s \u00b1 %s per loop (mean \u00b1 std. dev. of %d run%s, "
                "{:,} loop%s each)".format(self.loops)) % (
            _format_time(self.average, self._precision),
            _format_time(self.stdev, self._precision), self.repeat,
            "" if self.repeat == 1 else "s",
            "" if self.loops == 1 else "s")

    def __repr__(self):
        return "<TimeitResult : " + str(self) + ">"


@_magic("timeit", _BOTH, "%timeit [-n N] [-r R] [-q] [-o] [-p P] STATEMENT  "
        "/  %%timeit [options] [SETUP]",
        "Time a statement (or the cell; %%timeit's own line is setup, not "
        "timed) over R runs of N loops each: N grows by tens until a run "
        "takes 0.2 s unless -n; R is 7 unless -r.  -q prints nothing, -o "
        "returns the TimeitResult, -p sets the digits shown (3).")
def _m_timeit(arg, body, lineno, frame, **_):
    timeit = _std("timeit")
    opts, rest = _opts(arg, "n:r:qop:", "timeit")
    stmt = rest if body is None else body
    setup = "pass" if body is None else (rest or "pass")
    if not stmt.strip():
        raise UsageError("%%timeit: nothing to time (usage: %s)"
                         % _MAGICS["timeit"][1])
    try:
        number = int(opts.get("n", 0))
        repeat = int(opts.get("r", max(timeit.default_repeat, 7)))
        precision = int(opts.get("p", 3))
    except ValueError as e:
        raise UsageError("%%timeit: %s" % e) from None
    if repeat < 1 or number < 0:
        raise UsageError("%timeit: -n and -r must be positive")
    t = timeit.Timer(stmt, setup, timer=timeit.default_timer,
                     globals=_caller_ns(frame))
    if number == 0:
        for i in range(10):
            number = 10 ** i
            if t.timeit(number) >= 0.2:
                break
    res = TimeitResult(number, repeat, t.repeat(repeat, number), precision)
    if res.worst > 4 * res.best and res.best > 0 and res.worst > 1e-6:
        print("The slowest run took %0.2f times longer than the fastest. "
              "This could mean that an intermediate result is being "
              "cached." % (res.worst / res.best))
    if "q" not in opts:
        print(res)
    return res if "o" in opts else None


@_magic("prun", _BOTH, "%prun [-s KEY] [-l LIMIT] [-q] STATEMENT  /  %%prun",
        "Run a statement (or the cell) under cProfile and print the "
        "functions by cumulative time, the top 20 unless -l (a count, a "
        "fraction or a regular expression); -s sorts by another pstats key "
        "(tottime, ncalls, ...), -q prints nothing.")
def _m_prun(arg, body, lineno, frame, **_):
    cProfile = _std("cProfile")
    io = _std("io")
    pstats = _std("pstats")
    opts, rest = _opts(arg, "s:l:q", "prun")
    src = _stmt(rest, body, lineno)
    space = _caller_ns(frame)
    prof = cProfile.Profile()
    prof.runctx(compile(src, _cell_name(), "exec"), space, space)
    lim = opts.get("l", "20")
    try:
        lim = int(lim)
    except ValueError:
        try:
            lim = float(lim)
        except ValueError:
            pass
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs()
    try:
        stats.sort_stats(opts.get("s", "cumulative"))
    except KeyError as e:
        raise UsageError("%%prun: unknown sort key %s" % e) from None
    stats.print_stats(lim)
    if "q" not in opts:
        print(buf.getvalue().rstrip())


# ---- the namespace: %who, %whos, %reset ------------------------------

def _who_names(arg):
    types = set(arg.split())
    out = [n for n in ns if not n.startswith("_") and not _ns_hidden(n)
           and (not types or type(ns[n]).__name__ in types)]
    return sorted(out)


@_magic("who", _LINE, "%who [TYPE ...]",
        "The names the cells defined, of the given types if any.")
def _m_who(arg, **_):
    names = _who_names(arg)
    if not names:
        print("No variables match your requested type." if arg.strip()
              else "Interactive namespace is empty.")
        return
    for i, n in enumerate(names, 1):
        print(n + "\t", end=" ")
        if i % 9 == 0:
            print()
    print()


@_magic("who_ls", _LINE, "%who_ls [TYPE ...]",
        "The names %who prints, as a sorted list: the cell's value.")
def _m_who_ls(arg, **_):
    return _who_names(arg)


@_magic("xdel", _LINE, "%xdel NAME",
        "Delete a variable, and the references to its object that coil's "
        "history holds (Out, _, __, ___).")
def _m_xdel(arg, **_):
    name = arg.strip()
    if name not in ns or _ns_hidden(name):
        print("NameError: name %r is not defined" % name)
        return
    obj = ns.pop(name)
    for k in [k for k, v in _Out.items() if v is obj]:
        del _Out[k]
        ns.pop("_%d" % k, None)
    for k in ("_", "__", "___"):
        if ns.get(k) is obj:
            ns[k] = ""


@_magic("tb", _LINE, "%tb",
        "The traceback of the last error again.")
def _m_tb(arg, **_):
    e = getattr(sys, "last_value", None)
    if e is None:
        print("No traceback available to show.")
        return
    print(_tell(e, _conf.get("traceback_frames", 20))[0], end="")


@_magic("whos", _LINE, "%whos [TYPE ...]",
        "The names the cells defined, as a table: name, type and value "
        "(a length, a shape and size for arrays).")
def _m_whos(arg, **_):
    names = _who_names(arg)
    if not names:
        print("No variables match your requested type." if arg.strip()
              else "Interactive namespace is empty.")
        return
    vals = [ns[n] for n in names]
    types = [type(v).__name__ for v in vals]
    vw = max(max(map(len, names)), len("Variable")) + 3
    tw = max(max(map(len, types)), len("Type")) + 3
    print("Variable".ljust(vw) + "Type".ljust(tw) + " Data/Info\n" +
          "-" * (vw + tw + len("Data/Info") + 1))
    for n, v, t in zip(names, vals, types):
        print(n.ljust(vw) + t.ljust(tw), end=" ")
        if t in ("dict", "list", "tuple"):
            print("n=%d" % len(v))
        elif t == "ndarray":
            shape = str(v.shape).replace(",", "").replace(" ", "x")[1:-1]
            print("%s: %s elems, type `%s`, %s bytes"
                  % (shape, v.size, v.dtype, v.size * v.itemsize))
        else:
            try:
                s = str(v)
            except KeyboardInterrupt:
                raise
            except BaseException:
                s = "<object with id %d (str() failed)>" % id(v)
            s = s.replace("\n", "\\n")
            print(s if len(s) < 50 else s[:25] + "<...>" + s[-25:])


@_magic("reset", _LINE, "%reset -f",
        "Delete every name the cells defined (as the reset request does). "
        "-f is needed: there is no one to ask for confirmation.")
def _m_reset(arg, **_):
    opts, _ = _opts(arg, "fs", "reset")
    if "f" not in opts:
        raise UsageError("%reset deletes every variable and coil cannot ask "
                         "for confirmation: write %reset -f")
    op_reset({})


# ---- history and files: %history, %save, %load, %run ----------------

def _cells():
    """[(cell number, source)] of the cells run so far, in order."""
    out = []
    for k, src in _sources.items():
        if k.startswith("<cell ") and k[6:-1].isdigit():
            out.append((int(k[6:-1]), src))
    out.sort()
    return out


def _ranges(words):
    """Cell numbers from IPython's range syntax: 3 4-6 8."""
    picked = set()
    for w in words:
        a, dash, b = w.partition("-")
        try:
            lo = int(a)
            hi = int(b) if dash else lo
        except ValueError:
            raise UsageError("not a cell range: %r (write 3, 4-6)" % w) \
                from None
        picked.update(range(lo, hi + 1))
    return picked


@_magic("history", _LINE, "%history [-n] [-l N] [RANGE ...]",
        "The cells run so far (this one included); -n numbers them, -l N "
        "shows the last N, RANGE picks cells (3 4-6).")
def _m_history(arg, **_):
    opts, rest = _opts(arg, "nl:", "history")
    cells = _cells()
    if rest:
        pick = _ranges(rest.split())
        cells = [c for c in cells if c[0] in pick]
    if "l" in opts:
        cells = cells[-int(opts["l"]):] if int(opts["l"]) > 0 else []
    for n, src in cells:
        src = src.expandtabs(4).rstrip()
        if "n" in opts:
            print("%s:%s" % (str(n).rjust(4), "\n" if "\n" in src else " "),
                  end="")
        print(src)


def _save_notebook(fname, opts, rest):
    """%save FILE.ipynb: the session so far as a notebook.  The
    supervisor builds it; it is written here, so the cell's own rights
    (the sandbox's) decide where it may go."""
    os = _std("os")
    if rest[1:] or "a" in opts:
        raise UsageError("%save FILE.ipynb writes the whole session so "
                         "far: no RANGE, no -a")
    fname = os.path.expanduser(fname)
    if os.path.exists(fname) and "f" not in opts:
        print("File `%s` exists. Use `%%save -f %s` to force overwrite"
              % (fname, fname))
        return
    data, n = _notebook()
    try:
        with open(fname, "wb") as f:
            f.write(data)
    except OSError as e:
        errno = _std("errno")
        why = e.strerror or str(e)
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS) and \
                "--allow-write" not in why:
            why += (" (a cell may write under the work directory, its "
                    "temp dir and --allow-write DIRs)")
        raise type(e)(e.errno, "cannot write the notebook '%s': %s"
                      % (fname, why)) from None
    print("%d cell%s written to the notebook `%s`"
          % (n, "" if n == 1 else "s", fname))


@_magic("save", _LINE, "%save [-f] [-a] FILE [RANGE ...]",
        "Write cells (all run so far unless RANGE) to FILE (.py added), "
        "-a appending; an existing file is kept unless -f.  FILE.ipynb: "
        "the session so far as a notebook, with its outputs.")
def _m_save(arg, **_):
    os = _std("os")
    opts, rest = _opts(arg, "fra", "save")
    rest = _words(rest)
    if not rest:
        raise UsageError("Missing filename.")
    if rest[0].endswith(".ipynb"):
        return _save_notebook(rest[0], opts, rest)
    fname = rest[0] if rest[0].endswith((".py", ".ipy")) else rest[0] + ".py"
    fname = os.path.expanduser(fname)
    cells = _cells()
    me = _cell_name()
    if rest[1:]:
        pick = _ranges(rest[1:])
        cells = [c for c in cells if c[0] in pick]
    else:
        cells = [c for c in cells if "<cell %d>" % c[0] != me]
    exists = os.path.isfile(fname)
    if exists and "f" not in opts and "a" not in opts:
        print("File `%s` exists. Use `%%save -f %s` to force overwrite"
              % (fname, arg))
        return
    cmds = "\n".join(src for _, src in cells)
    with open(fname, "a" if "a" in opts else "w", encoding="utf-8") as f:
        if not exists or "a" not in opts:
            f.write("# coding: utf-8\n")
        f.write(cmds if cmds.endswith("\n") else cmds + "\n")
    print("The following commands were written to file `%s`:" % fname)
    print(cmds)


@_magic("load", _LINE, "%load FILE",
        "Show FILE's source as IPython would put it in the next cell; coil "
        "has no next cell to fill, so run it with %run -i FILE or paste "
        "it.")
def _m_load(arg, **_):
    os = _std("os")
    path = os.path.expanduser(arg.strip())
    if not path:
        raise UsageError("Missing filename. (usage: %load FILE)")
    try:
        with open(path, encoding="utf-8") as f:
            src = f.read()
    except OSError as e:
        raise UsageError("%%load: cannot read %r: %s" % (path, e.strerror)) \
            from None
    print("# %load " + arg.strip())
    print(src, end="" if src.endswith("\n") else "\n")


@_magic("run", _LINE, "%run [-i] FILE [ARGS ...]",
        "Run a Python file as __main__ with sys.argv = [FILE, ARGS...]; "
        "its names then join the session's.  -i runs it in the session's "
        "namespace itself, so it sees the names the cells defined.")
def _m_run(arg, **_):
    os = _std("os")
    opts, rest = _opts(arg, "i", "run")
    rest = _words(rest)
    if not rest:
        raise UsageError("%run: missing file name (usage: %s)"
                         % _MAGICS["run"][1])
    path = os.path.expanduser(rest[0])
    if not os.path.exists(path) and os.path.exists(path + ".py"):
        path += ".py"
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError as e:
        raise UsageError("%%run: cannot read %r: %s" % (path, e.strerror)) \
            from None
    path = os.path.abspath(path)
    code = compile(src, path, "exec")
    saved = sys.argv[:]
    sys.argv[:] = [rest[0]] + rest[1:]
    if "i" in opts:
        space = ns
    else:
        space = {"__name__": "__main__", "__file__": path,
                 "__builtins__": builtins}
    try:
        exec(code, space)
    except SystemExit as e:
        # a script's own way to end: as IPython, quiet for success,
        # a line (no traceback) for a failure's status
        if e.code not in (None, 0):
            print("An exception has occurred: SystemExit: %s" % (e.code,),
                  file=sys.stderr)
    finally:
        sys.argv[:] = saved
        if space is not ns:
            ns.update({k: v for k, v in space.items()
                       if k not in ("__name__", "__builtins__", "__file__")})


# ---- cells that are not Python: %%writefile, %%script, %%capture ---

def _ipython_body(body):
    """The body as IPython hands it to a cell magic: ending in a
    newline (its input transformer adds one to every cell)."""
    return body if body.endswith("\n") or not body else body + "\n"


@_magic("writefile", _CELL | _TEXT, "%%writefile [-a] FILE",
        "Write the cell's body to FILE (-a: append to it), saying Writing, "
        "Overwriting or Appending to; $name and {expr} in FILE are "
        "expanded.")
def _m_writefile(arg, body, **_):
    os = _std("os")
    opts, rest = _opts(arg.replace("--append", "-a"), "a", "writefile")
    rest = rest.strip()            # expanded already (_run_magic)
    if not rest:
        raise UsageError("the following arguments are required: filename "
                         "(usage: %s)" % _MAGICS["writefile"][1])
    if len(rest) > 1 and rest[0] == rest[-1] and rest[0] in "'\"":
        rest = rest[1:-1]
    path = os.path.expanduser(rest)
    if os.path.exists(path):
        print(("Appending to %s" if "a" in opts else "Overwriting %s") % path)
    else:
        print("Writing %s" % path)
    with open(path, "a" if "a" in opts else "w", encoding="utf-8") as f:
        f.write(_ipython_body(body))


def _script_args(arg, name):
    """(options, the command's words) of a %%script line: --out VAR,
    --err VAR and --no-raise-error as IPython reads them; --bg and --proc
    (background scripts) are IPython's only, and refused with why."""
    words, opts, i = _words(arg), {"raise": True}, 0
    while i < len(words) and words[i].startswith("--"):
        w = words[i]
        if w in ("--out", "--err"):
            if i + 1 >= len(words):
                raise UsageError("%%%%%s: %s needs a variable name"
                                 % (name, w))
            opts[w[2:]] = words[i + 1]
            i += 2
            continue
        if w in ("--no-raise-error", "--raise-error"):
            opts["raise"] = w == "--raise-error"
        elif w in ("--bg", "--proc"):
            raise UsageError(
                "%%%%%s %s: coil runs a script in the cell, not in the "
                "background (a cell's processes end with it); run it in the "
                "foreground, or start it with subprocess.Popen" % (name, w))
        else:
            raise UsageError("%%%%%s: unknown option %s (usage: %s)"
                             % (name, w, _MAGICS[name][1]))
        i += 1
    return opts, words[i:]


def _script_stop(p):
    """Ctrl-C while a script runs: as IPython, ask it, then tell it,
    then make it stop, saying which worked."""
    signal = _std("signal")
    subprocess = _std("subprocess")
    for how, said in ((lambda: p.send_signal(signal.SIGINT), "interrupted"),
                      (p.terminate, "terminated"), (p.kill, "killed")):
        how()
        try:
            p.wait(0.1 if said != "killed" else None)
        except subprocess.TimeoutExpired:
            continue
        print("Process is %s." % said)
        return


def _run_script(name, cmd, opts, body):
    """Run cmd with the body on its stdin.  Its output goes straight to
    the cell's (in order with what the cell printed) unless --out or
    --err keeps it in a variable."""
    subprocess = _std("subprocess")
    _shell_ok("%%" + name)
    _flush()
    pipe = subprocess.PIPE
    try:
        p = subprocess.Popen(cmd, stdin=pipe, stdout=pipe if "out" in opts
                             else None, stderr=pipe if "err" in opts
                             else None)
    except FileNotFoundError:
        print("Couldn't find program: %r" % cmd[0])
        return
    try:
        out, err = p.communicate(_ipython_body(body).encode("utf-8",
                                                            "replace"))
    except KeyboardInterrupt:
        _script_stop(p)
        return
    for key, data in (("out", out), ("err", err)):
        if key in opts:
            ns[opts[key]] = data.decode("utf-8", "replace")
    if opts["raise"] and p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, body)


def _script_magic(prog):
    def run(arg, body, **_):
        opts, cmd = _script_args(arg, prog)
        _run_script(prog, [prog] + cmd, opts, body)
    return run


@_magic("script", _CELL | _TEXT, "%%script [--out VAR] [--err VAR] "
        "[--no-raise-error] COMMAND [ARGS ...]",
        "Run the cell's body with COMMAND (bash, perl, ...), as a #! line "
        "would: its output is the cell's, or kept in VAR; a failing exit "
        "status raises CalledProcessError unless --no-raise-error.")
def _m_script(arg, body, **_):
    opts, cmd = _script_args(arg, "script")
    if not cmd:
        raise UsageError("%%script: which program? (usage: %s)"
                         % _MAGICS["script"][1])
    _run_script("script", cmd, opts, body)


for _prog in ("sh", "bash", "perl", "ruby", "python", "python2", "python3",
              "pypy"):
    _magic(_prog, _CELL | _TEXT, "%%%%%s [--out VAR] [--err VAR] "
           "[--no-raise-error]" % _prog, "%%%%script %s: run the cell's "
           "body with %s." % (_prog, _prog))(_script_magic(_prog))
del _prog


class CapturedIO:
    """What %%capture keeps: the text printed to stdout and stderr and
    the displayed objects; show() (or calling it) prints them again."""

    def __init__(self, stdout, stderr, outputs):
        self._stdout, self._stderr, self.outputs = stdout, stderr, outputs

    stdout = property(lambda self: self._stdout)
    stderr = property(lambda self: self._stderr)

    def __str__(self):
        return self._stdout

    def show(self):
        sys.stdout.write(self._stdout)
        sys.stderr.write(self._stderr)
        # display() printed each object's text: stdout holds it
        _shown.extend(self.outputs)

    __call__ = show


@_magic("capture", _CELL, "%%capture [--no-stdout] [--no-stderr] "
        "[--no-display] [VAR]",
        "Run the cell keeping what it prints and displays out of the "
        "answer; VAR, if given, holds it (a CapturedIO: .stdout, .stderr, "
        ".outputs, .show()).")
def _m_capture(arg, body, lineno, frame, **_):
    io = _std("io")
    words = _words(arg)
    keep = {w for w in words if w.startswith("--")}
    bad = keep - {"--no-stdout", "--no-stderr", "--no-display"}
    names = [w for w in words if not w.startswith("--")]
    if bad or len(names) > 1:
        raise UsageError("%%%%capture: unrecognized arguments: %s (usage: %s)"
                         % (" ".join(sorted(bad) + names[1:]),
                            _MAGICS["capture"][1]))
    space = _caller_ns(frame)
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr, len(_shown)
    _flush()
    if "--no-stdout" not in keep:
        sys.stdout = out
    if "--no-stderr" not in keep:
        sys.stderr = err
    try:
        code, last = _split_last(_stmt("", body, lineno), _cell_name())
        exec(code, space)
        if last is not None:
            eval(last, space)
    finally:
        sys.stdout, sys.stderr = saved[0], saved[1]
        shown = []
        if "--no-display" not in keep:
            shown = _shown[saved[2]:]
            del _shown[saved[2]:]
        # bound whatever the body did: what it printed before it
        # raised is there to look at, as in IPython
        if names:
            space[names[0]] = CapturedIO(out.getvalue(), err.getvalue(),
                                         shown)


@_magic("debug", _LINE, "%debug",
        "Enter the debugger (pdb) at the frame where the last error was "
        "raised, as pdb.pm() does.  At a terminal only: an agent's cell has "
        "no one to type pdb's commands, and its pdb ends at once.")
def _m_debug(arg, **_):
    if not sys.stdin.isatty():
        raise UsageError("%debug needs a terminal to type pdb's commands at "
                         "(coil --plain on one); here, print or inspect the "
                         "names instead")
    if getattr(sys, "last_traceback", None) is None:
        raise UsageError("No traceback has been produced, nothing to debug.")
    p = _new_pdb()
    p.reset()
    p.interaction(None, sys.last_traceback)


def _new_pdb(skip=None):
    """The pdb.Pdb of %debug and breakpoint().  pdb.Pdb() imports readline
    by name, which would run a readline.py of the work dir's: it is made
    under _std_guard, which resolves that import to the standard
    library's.  Without ./.pdbrc (readrc=False): a file a cell may have
    written, whose lines pdb would run as the person's commands (and
    ~/.pdbrc goes with it, pdb reads both or neither).  Without
    completion (completekey=None): cmd would import readline by name
    again at each prompt, and the worker's stdin is no terminal readline
    can edit; the person's line editor is the supervisor's."""
    pdb = _std("pdb")
    with _std_guard():
        return pdb.Pdb(completekey=None, skip=skip, readrc=False)


@_magic("lsmagic", _LINE, "%lsmagic", "List the magics coil knows.")
def _m_lsmagic(arg, **_):
    print("Available line magics:\n%s\n\nAvailable cell magics:\n%s\n\n"
          "Type %%NAME? for a magic's usage."
          % ("  ".join("%" + n for n in _names(_LINE)),
             "  ".join("%%" + n for n in _names(_CELL))))


def _magic_help(name):
    kind = _CELL if name.startswith("%%") else _LINE
    bare = name.lstrip("%")
    _find(bare, "cell" if kind == _CELL else "line")
    kinds, usage, text, _ = _MAGICS[bare]
    textwrap = _std("textwrap")
    print("Usage: %s\n\n%s" % (usage, textwrap.fill(text, 72)))
