# module: _coil
# worker.py - the Python half of coil's worker, run once at start-up in a
# module of its own ("_coil").  The C half (worker.c) reads requests from
# the supervisor, calls handle(req) and sends back the dict it returns.
#
# Everything user code sees lives in __main__; nothing here is imported
# by name into it.  The module's other files run before this one in the
# same namespace (Makefile.am's PYEMBED_PY): errors.py, how an error is
# told (_classify, _incomplete, _error); magics.py and magictab.py, the
# IPython syntax; display.py, rich display; complete.py, Tab;
# streams.py, the cell's stdin, stdout and stderr; introspect.py, the
# vars and inspect ops.  This file runs the cells (op_exec), keeps the
# checkpoint hooks and serves the ops (handle).  Frames of all are named
# "<coil>" and are cut from every traceback a user sees.

import sys
import builtins
import gc
import _ast
import _random
import _warnings
import time as _time

_main = sys.modules["__main__"]
ns = _main.__dict__
_conf = {}
_sources = {}          # "<cell N>" -> source, handed to linecache lazily
_In = [""]             # IPython's In and Out: each cell's code, by its
_Out = {}              # number, and the value it showed
_unders = ["", "", ""]  # the last three values shown: _, __, ___
_OUT_MAX = 1000        # IPython's cache_size: then the oldest go
_registered = set()
_effects = None        # effects.py's Effects: what a cell touched (worker.c)


# Checkpoints (worker.c forks them; see ckpt.h).  What the copy needs to
# know about itself lives here: worker-fork.c keeps it in C across the
# fork and stores it here after (in the copy before ckpt_resumed), as
# storing may run a cell's __del__ (the threads the copy lacks, random's
# state and gauss_next, the heap's size when it was first frozen, gen0's
# collections at the fork).
_ckpt = {"threads": 0, "random": None, "frozen": False, "blocks": 0,
         "gen0": -1}
_orphans = []          # streams a lost thread may have held locked


def ckpt_resumed():
    """Called in a checkpoint that has just become the worker, after
    PyOS_AfterFork_Child (whose hooks reseeded random)."""
    st = _ckpt["random"]
    inst = getattr(sys.modules.get("random"), "_inst", None)
    if st is not None and isinstance(inst, _random.Random):
        try:
            _random.Random.setstate(inst, st[0])
            inst.gauss_next = st[1]
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
    as any full collection would.

    sys.getallocatedblocks reads a header in every pool of the heap: in
    a copy just forked (a branch, a rollback) each of those pages is a
    fault on a VM, 3 to 12 ms for a pandas session, more than the cell.
    Garbage in cycles needs new containers, and gen0 is collected each
    time they outnumber the dead by its threshold: so the heap is only
    weighed when gen0 has been collected since it last was, or since the
    freezing (_ckpt["gen0"], set at each checkpoint's fork)."""
    if not _ckpt["frozen"]:
        return
    n = gc.get_stats()[0]["collections"]
    if n == _ckpt["gen0"]:
        return
    _ckpt["gen0"] = n
    if sys.getallocatedblocks() > _ckpt["blocks"] * 3 // 2 + 50000:
        gc.unfreeze()
        _ckpt["frozen"] = False
        gc.collect()


def setup(conf):
    """Called once by worker.c after the interpreter is up."""
    _conf.update(conf)
    sys.stdin = sys.__stdin__ = _NoStdin()
    sys.stdout = sys.__stdout__ = _new_stream(1)
    _own[2] = sys.__stderr__
    _repair_streams()
    _flush_before_others()
    if conf.get("venv"):
        _venv_site(conf["venv"], conf.get("venv_system_site"))
    wd = conf.get("workdir")
    if wd and wd not in sys.path:
        sys.path.insert(0, wd)
    sys.argv[:] = [""]
    ns.setdefault("__builtins__", builtins)
    _install_door()
    _ckpt_magics(conf.get("ckpt_magics") or ())
    builtins.display = display
    _ipython_hook()
    sys.breakpointhook = _breakpoint
    if conf.get("allow_import"):
        _guard_imports(conf["allow_import"])
    for mod in conf.get("preload") or ():
        __import__(mod)


def _venv_site(venv, system_site):
    """site's work for the venv (--venv, $VIRTUAL_ENV), as the venv's own
    python does it (site.venv, then site.main): its site-packages after
    the standard library, their .pth files processed, then the system's
    site-packages only when its pyvenv.cfg says
    include-system-site-packages = true (the supervisor read it at
    start: worker.c left site out of Py_Initialize for this), no user
    site.  Here, in the sandboxed worker, so that a .pth file's import
    line runs with a cell's rights, never with coil's."""
    site = _std("site")
    base = (sys.base_prefix, sys.base_exec_prefix)
    sys.prefix = sys.exec_prefix = venv
    sys.executable = venv + "/bin/python"
    site.ENABLE_USER_SITE = False
    site.PREFIXES[:] = [venv] + (list(base) if system_site else [])
    known = site.removeduppaths()
    site.addsitepackages(known, site.PREFIXES)
    site.setquit()
    site.setcopyright()
    site.sethelper()
    site.execsitecustomize()


def _breakpoint(*args, **kws):
    """breakpoint(): pdb at a terminal, stopping in the cells' frames and
    never in coil's own (the exec that runs a cell, the audit hook).
    Without a terminal there is no one to type pdb's commands: the cell
    goes on, as with PYTHONBREAKPOINT=0, and says so on stderr."""
    if not isinstance(sys.stdin, _TermStdin):
        sys.stderr.write("coil: breakpoint() skipped: there is no terminal "
                         "to debug at (coil --plain on one has pdb)\n")
        return
    _new_pdb(skip=["_coil*"]).set_trace(sys._getframe(1))


def _guard_imports(names):
    """--allow-import: a cell may import only these packages (and their
    submodules; "stdlib" stands for the standard library).  What those
    import in turn is theirs to import, so only imports made by a cell's
    own code are checked: import statements (builtins.__import__, even
    of a module already loaded) and importlib's calls (a finder first
    on sys.meta_path, when the first frame outside importlib is a
    cell's).
    A guard rail that keeps a model on task, not security: a cell can
    undo it, and the kernel's sandbox is the boundary."""
    allowed = set(names)
    if "stdlib" in allowed:
        allowed |= sys.stdlib_module_names
    words = ",".join(names)
    real = builtins.__import__

    def cells(f):
        return f is not None and f.f_code.co_filename.startswith("<cell ")

    def refuse(name):
        return ImportError("import of '%s' refused: coil was started with "
                           "--allow-import %s, and cells may import only "
                           "those" % (name, words), name=name)

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name.partition(".")[0] not in allowed and \
                cells(sys._getframe(1)):
            raise refuse(name)
        return real(name, globals, locals, fromlist, level)
    __import__.__doc__ = real.__doc__
    builtins.__import__ = __import__

    class _Guard:
        """First on sys.meta_path: asked about every module not loaded
        yet, whoever imports it; refuses when the importer, the first
        frame outside importlib, is a cell's (importlib.import_module)."""
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.partition(".")[0] in allowed:
                return None
            f = sys._getframe(1)
            while f is not None and (
                    f.f_code.co_filename.startswith("<frozen importlib") or
                    f.f_code.co_filename.endswith("/importlib/__init__.py")):
                f = f.f_back
            if cells(f):
                raise refuse(name)
            return None
    sys.meta_path.insert(0, _Guard)


def _register_lines(names=None):
    """Hand cell sources to linecache so tracebacks, inspect and pdb show
    them.  Only once linecache is loaded: importing it costs start-up.
    Every line ends in a newline, as linecache reads files: traceback
    counts the newline when it places its carets, so a last line without
    one would get them a column to the right."""
    lc = _std_bound.get("linecache")
    if lc is None:
        # loaded by a cell's import, not through _std: coil's only once
        # it is the standard one
        lc = sys.modules.get("linecache")
        if lc is None or not _std_genuine(lc):
            return
        lc = _std("linecache")
    for fname in (names or list(_sources)):
        if fname not in _registered or fname not in lc.cache:
            src = _sources[fname]
            lines = src.splitlines(True)
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"
            lc.cache[fname] = (len(src), None, lines, fname)
            _registered.add(fname)


def _cut(text, cap):
    """Pre-cut a huge text to head+tail so it does not cross the socket
    whole; the supervisor caps it exactly, in the middle, where this cut
    is.  The cut is by UTF-8 bytes, as the supervisor counts and keeps
    them (cap / 2 at each end, outbuf.c's utf8_cap): a few bytes more
    than those at each end, so that its cut, and the marker counting
    this one, still happen.  So a text crosses as about cap bytes
    whatever its characters, and at the largest --max-output a result, a
    message and a traceback stay within the limits of the worker's
    frames (chan.h's CHAN_PEER_FRAME and CHAN_PEER_STRING).  Returns
    (text, None) or (text, [bytes, newlines] cut), counted as the
    supervisor gets the text: UTF-8, backslashreplace."""
    # str's own methods: a cell's repr may return a str subclass
    n = str.__len__(text)
    if cap <= 0 or 6 * n <= cap:    # 6: the longest a character encodes
        return text, None
    data = str.encode(text, "utf-8", "backslashreplace")
    head_max = cap // 2 + _CUT_PAD
    tail_max = cap - cap // 2 + _CUT_PAD
    if len(data) <= head_max + tail_max:
        return text, None
    # a character the byte count splits is left out whole
    head = data[:head_max].decode("utf-8", "ignore")
    tail = data[-tail_max:].decode("utf-8", "ignore")
    gone = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
    lines = data.count(b"\n") - head.count("\n") - tail.count("\n")
    return head + tail, [gone, lines]


# Bytes _cut keeps at each end over what the supervisor keeps: more than
# the 3 bytes of a character it may split, so that the text it sends is
# always over the supervisor's cap.
_CUT_PAD = 16


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
        os = _std("os")
        d = _conf.get("figure_dir") or "."
        try:
            os.makedirs(d, exist_ok=True)
        except OSError as e:
            return [], ["figures not saved: cannot create %r: %s"
                        % (d, e.strerror)]
        for i, num in enumerate(nums, 1):
            path = os.path.join(d, "cell-%d-%d.png" % (cell, i))
            try:
                note = _fig_save(plt.figure(num), path)
                with open(path, "rb") as f:
                    w, h = _png_size(f.read(24))
                shown.append({"type": "image/png", "path": path,
                              "width": w, "height": h,
                              "bytes": os.path.getsize(path)})
                if note:
                    shown[-1]["note"] = note
            except BaseException as e:
                warns.append("figure %d not saved: %s: %s"
                             % (num, type(e).__name__, e))
        try:
            plt.close("all")
        except BaseException:
            pass
    return shown, warns


_CO_COROUTINE = 0x80
_aloop = []             # the session's event loop, once asyncio is used


def _session_loop():
    """The session's one event loop: the one a cell already made current
    (asyncio.get_event_loop() makes one), else a new one, made current
    so that the cells' own get_event_loop() calls find it.  Its selector
    is poll, which holds no kernel object that a checkpoint's fork would
    share with the worker, as epoll would."""
    asyncio = _std("asyncio")
    pol = asyncio.get_event_loop_policy()
    cur = getattr(getattr(pol, "_local", None), "_loop", None)
    if cur is not None and not cur.is_closed():
        _aloop[:] = [cur]
    elif not _aloop or _aloop[0].is_closed():
        selectors = _std("selectors")
        _aloop[:] = [asyncio.SelectorEventLoop(selectors.PollSelector())]
    if cur is not _aloop[0]:
        asyncio.set_event_loop(_aloop[0])  # asyncio.run() unsets it
    return _aloop[0]


def _quiet(code, node):
    """IPython's rule: a cell whose last expression is followed by a
    semicolon (a comment may come after it) shows no result."""
    lines = code.splitlines()
    if not node.end_lineno or node.end_lineno > len(lines):
        return False
    # the offset counts UTF-8 bytes
    rest = lines[node.end_lineno - 1].encode()[node.end_col_offset:]
    return rest.lstrip().startswith(b";")


def _run_code(code, mode):
    """exec or eval a cell's code.  Top-level await (IPython's autoawait)
    makes the code a coroutine (eval returns it, whatever the mode),
    run to its end on the session's loop: a task one cell starts goes
    on in the next cell's awaits."""
    if not code.co_flags & _CO_COROUTINE:
        return (exec if mode == "exec" else eval)(code, ns)
    return _session_loop().run_until_complete(eval(code, ns))


def _cell_source(code, fname, repl):
    """(tree, None), (None, why) or a SyntaxError raised, as _classify,
    after magics.py's rewriting: a cell magic is incomplete while its
    body is, and at a terminal until a blank line ends it."""
    text = "%%" in code and _text_body(code)
    typed = code
    code, body = _transform(code)
    if body is not None:
        _, why = (None, None) if text else \
            _classify("\n" + body, fname, repl)
        if why is not None:
            return None, why
        # the cell's last line, the header when it is alone: a blank
        # line after it ends the cell (%%writefile f then Enter must not
        # empty f)
        last = typed.split("\n")[-1]
        if repl and last.strip():
            return None, SyntaxError(
                "a cell magic goes on until a blank line",
                (fname, typed.count("\n") + 1, len(last) + 1, last, None,
                 None))
    return _classify(code, fname, repl)


def _history_in(cell, code):
    """In, _i, _ii, _iii (the three cells before) and _iN, as IPython
    sets them before a cell runs.  In and Out are bound once; a name the
    user rebinds is theirs."""
    ns.setdefault("In", _In)
    ns.setdefault("Out", _Out)
    prev = [c for c in _In[-3:]]
    del _In[cell:]
    _In.extend([""] * (cell - len(_In)))
    _In.append(code)
    ns["_i"], ns["_ii"], ns["_iii"] = (([""] * 3 + prev)[::-1])[:3]
    ns["_i%d" % cell] = code


def _history_out(cell, value):
    """_, __ and ___ (the last three values shown), _N and Out[N], as
    IPython's displayhook keeps them: once the user binds one of _, __
    and ___, those three are left alone; past _OUT_MAX values the oldest
    200 are let go, with a word on stderr."""
    mine = all(ns[k] is v for k, v in zip(("_", "__", "___"), _unders)
               if k in ns)
    _unders[:] = [value] + _unders[:2]
    if mine:
        ns["_"], ns["__"], ns["___"] = _unders
    if len(_Out) >= _OUT_MAX:
        print("Output cache limit (currently %d entries) hit.\nFlushing "
              "oldest 200 entries." % _OUT_MAX, file=sys.stderr)
        for k in sorted(_Out)[:200]:
            del _Out[k]
            ns.pop("_%d" % k, None)
    ns["_%d" % cell] = _Out[cell] = value


def _ns_hidden(name):
    """What IPython leaves out of %who and the namespace: its own In and
    Out (a user's variable of that name is shown)."""
    return (name == "In" and ns.get(name) is _In) or \
        (name == "Out" and ns.get(name) is _Out)


def op_exec(req):
    cell = req["cell"]
    code = req["code"]
    fname = "<cell %d>" % cell
    repl = req.get("repl", False)
    _line_mode(repl)
    _use_stdin("term" if req.get("input") else "notebook"
               if req.get("stdin") == "notebook" else "none")
    if req.get("columns"):
        # the terminal's size, for shutil.get_terminal_size (pandas)
        os = _std("os")
        os.environ["COLUMNS"] = str(req["columns"])
        os.environ["LINES"] = str(req["lines"])
    cap = req.get("max_output") or _conf.get("max_output", 65536)
    reply = {"status": "ok", "result": None, "error": None}
    try:
        tree, why = _cell_source(code, fname, repl)
    except SyntaxError as e:
        _sources[fname] = code
        reply["status"] = "error"
        with _std_guard():      # the error's words: coil's code
            reply["error"] = _error(e, fname, cap)
        return reply
    if why is not None:
        with _std_guard():
            return {"status": "incomplete", "error": _incomplete(why)}
    reply["ran"] = True
    _gc_thaw()
    _sources[fname] = code
    _history_in(cell, code)
    _register_lines((fname,))
    _current[:] = [fname]
    _shown.clear()
    _shown_cell[:] = [cell, cap, req.get("display") or ()]
    _run_cell(reply, tree, code, fname, cell, cap)
    _after_cell(reply, req, cell)
    return reply


def _run_cell(reply, tree, code, fname, cell, cap):
    """Run a cell's tree, its last expression's value shown as IPython
    shows it; the error, if any, is the answer's."""
    body = tree.body
    last = None
    if body and type(body[-1]) is _ast.Expr:
        last = body.pop()
    if _effects is not None:
        _effects.begin()
    # Each answer is read alone, so a warning the cell earned is in it
    # although an earlier cell showed the same from the same line: the
    # "default" action's once per place is once per place and cell, and
    # "once" once per cell.  A new filters version empties every
    # registry of them, in O(1), as warnings.filterwarnings would.
    _warnings._filters_mutated()
    # an interrupt that came before this was dropped with those meant
    # for earlier cells (worker.c's worker_clear_signals)
    reply["started_ns"] = _time.monotonic_ns()
    try:
        if body:
            _run_code(compile(tree, fname, "exec", _AWAIT), "exec")
        if last is not None:
            value = _run_code(compile(_ast.Expression(last.value), fname,
                                      "eval", _AWAIT), "eval")
            if value is not None and not _quiet(code, last):
                _history_out(cell, value)
                reply["result"], cut = _safe_repr(value, cap)
                if cut:
                    reply["result_cut"] = cut
                _display_result(value, reply["result"])
    except BaseException as e:
        reply["status"] = "error"
        with _std_guard():
            reply["error"] = _error(e, fname, cap)
        # as python's REPL leaves them, for pdb.pm() and %debug
        sys.last_type, sys.last_value = type(e), e
        sys.last_traceback = e.__traceback__
        e = None
    # an interrupt sent after this found the cell's code done
    # (session-reply.c's session_stop_reached)
    reply["ended_ns"] = _time.monotonic_ns()


def _after_cell(reply, req, cell):
    """What follows every cell that ran: the debugger and the event loop
    put in their place, the streams flushed and repaired, and the
    cell's effects, figures, display and warnings put in its answer."""
    _use_stdin("none")      # a thread may not ask between cells
    bdb = sys.modules.get("bdb")
    if bdb is not None and isinstance(getattr(sys.gettrace(), "__self__",
                                              None), bdb.Bdb):
        sys.settrace(None)  # pdb stepped past the cell: it ends there
    if not _aloop and "asyncio" in sys.modules:
        _session_loop()     # before a cell's get_event_loop() makes one
    lost = _flush()
    if _effects is not None:
        # before the figures: coil's own files are in display
        fx, more = _effects.take()
        if fx:
            reply["effects"] = fx
        if more:
            reply["effects_more"] = more
    display, warns = _figures(cell)
    warns = lost + _display_warns + warns
    _cap_list(reply, "display", _shown + display)
    _shown.clear()
    _display_warns.clear()
    fixed = _repair_streams()
    for name in fixed:
        warns.append("sys.%s was closed or None after the cell; coil "
                     "reopened it" % name)
    if warns:
        _cap_list(reply, "warnings", warns)
    if req.get("summary"):
        # For the observers' namespace pane: what vars would say now.
        v = op_vars({})
        reply["namespace"] = v["vars"]
        if "vars_more" in v:
            reply["namespace_more"] = v["vars_more"]


def op_reset(req):
    keep = {k: ns[k] for k in ("__name__", "__builtins__", "__doc__",
                               "__spec__", "__loader__", "__package__")
            if k in ns}
    ns.clear()
    ns.update(keep)
    del _In[1:]
    _Out.clear()
    _unders[:] = ["", "", ""]
    return {"status": "ok"}


_OPS = {"exec": op_exec, "vars": op_vars, "inspect": op_inspect,
        "complete": op_complete, "reset": op_reset}


def handle(req):
    try:
        op = _OPS[req["op"]]
        if req["op"] == "exec":
            return op(req)
        # the other ops run coil's code only (the cells' objects aside)
        with _std_guard():
            return op(req)
    except KeyboardInterrupt as e:
        # A deadline's interrupt that landed in coil's own code, after
        # the cell or before it: told as the cell's, without coil's
        # frames.  Any other error here is coil's bug, frames and all.
        with _std_guard():
            return {"status": "error", "error": _error(e, None)}
    except BaseException as e:
        traceback = _std("traceback")
        return {"status": "error", "error": {
            "type": type(e).__name__, "message": str(e),
            "traceback": "".join(traceback.format_exception(e)),
            "line": None}}
