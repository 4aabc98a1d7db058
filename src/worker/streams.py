# module: _coil
# streams.py - a cell's stdin, stdout and stderr: run once at start-up
# in the "_coil" module's namespace, before worker.py, whose setup makes
# the streams (_new_stream, _flush_before_others) and whose op_exec
# chooses the stdin (_use_stdin), flushes after the cell (_flush) and
# repairs what the cell broke (_repair_streams).  worker.c calls idle
# between cells; _ask, which asks the person at a terminal for a line,
# is its too.

import sys
import builtins

_lost = []             # streams whose output could not be written


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


class _TermStdin(_NoStdin):
    """sys.stdin of a cell at a terminal: each line is asked of the
    person there, through the supervisor (worker.c's _ask)."""

    def readline(self, size=-1):
        _flush()
        line = _ask("")
        return "" if line is None else line + "\n"

    def read(self, size=-1):
        return self.readline()

    def readlines(self, hint=-1):
        return list(iter(self.readline, ""))

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def isatty(self):
        return True


def _term_pager(text):
    """pydoc's pager at a terminal: the front end pages help's text."""
    _flush()
    _ask("", text)


def _term_help(*args, **kwds):
    """help() at a terminal: as python's, paged by the front end."""
    pydoc = _std("pydoc")
    saved, pydoc.pager = pydoc.pager, _term_pager
    try:
        return _stdin_kinds["help"](*args, **kwds)
    finally:
        pydoc.pager = saved


def _term_input(prompt=""):
    """input() at a terminal: the prompt goes with the question, so the
    person's line editor shows it (pdb's "(Pdb) " too)."""
    _flush()
    line = _ask(str(prompt))
    if line is None:
        raise EOFError
    return line


class _NotebookStdin(_NoStdin):
    """sys.stdin of a notebook's cell replayed: a kernel's, which
    nbclient starts with nothing to read (its end, no error)."""

    def read(self, *args):
        return ""
    readline = read

    def readlines(self, *args):
        return []

    def __next__(self):
        raise StopIteration


# What Jupyter raises where a notebook is run without stdin (nbclient's
# allow_stdin=False): IPython's own class when a cell imported it (to
# catch it), else one of the same name, bases and module.
_IPythonCoreError = type("IPythonCoreError", (Exception,),
                         {"__module__": "IPython.core.error"})
_StdinNotImplementedError = type(
    "StdinNotImplementedError", (_IPythonCoreError, NotImplementedError),
    {"__module__": "IPython.core.error",
     "__doc__": "raw_input was called, but the frontend cannot answer"})


def _no_frontend(what):
    cls = getattr(sys.modules.get("IPython.core.error"),
                  "StdinNotImplementedError", _StdinNotImplementedError)
    return cls("%s was called, but this frontend does not support input "
               "requests." % what)


def _notebook_input(prompt=""):
    """input() as ipykernel's, asked of a frontend that cannot answer:
    no prompt shown."""
    raise _no_frontend("raw_input")


def _notebook_getpass(prompt="Password: ", stream=None):
    raise _no_frontend("getpass")


_stdin_kinds = {}       # "none"/"term"/"notebook" -> the stdin object


def _use_stdin(kind):
    """A cell's stdin and input(): asking the terminal ("term"),
    refusing as coil does ("none") or as Jupyter does ("notebook": a
    notebook replayed, as nbclient runs one, getpass too)."""
    k = _stdin_kinds
    if not k:
        k.update(none=sys.stdin, term=_TermStdin(),
                 notebook=_NotebookStdin(), input=builtins.input,
                 help=builtins.help, getpass=None)
    inputs = {"none": k["input"], "term": _term_input,
              "notebook": _notebook_input}
    if builtins.help in (k["help"], _term_help):
        builtins.help = _term_help if kind == "term" else k["help"]
    if sys.stdin in (k["none"], k["term"], k["notebook"]):
        sys.stdin = sys.__stdin__ = k[kind]
    if builtins.input in inputs.values():
        builtins.input = inputs[kind]
    gp = sys.modules.get("getpass")
    if gp is None and kind == "notebook":
        gp = _std("getpass")
    if gp is None:
        return
    if k["getpass"] is None and gp.getpass is not _notebook_getpass:
        k["getpass"] = gp.getpass
    if gp.getpass in (k["getpass"], _notebook_getpass):  # not a cell's
        gp.getpass = _notebook_getpass if kind == "notebook" else \
            k["getpass"]


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


_own = {}              # fd -> the stream coil made for it last


def _new_stream(fd):
    io = _std("io")
    raw = io.FileIO(fd, "w", closefd=False)
    _own[fd] = io.TextIOWrapper(io.BufferedWriter(raw, 65536),
                                encoding="utf-8", errors="backslashreplace",
                                line_buffering=(fd == 2))
    return _own[fd]


def _interrupt_in(e):
    """The KeyboardInterrupt exception e is or carries, else None.  An
    interrupt is the cell's wherever it lands, in coil's code too; and
    CPython's BufferedWriter.flush, when a signal handler raises in its
    write, can return with the KeyboardInterrupt still set, which the
    call then reports as a SystemError caused by it."""
    for _ in range(8):
        if e is None or isinstance(e, KeyboardInterrupt):
            return e
        e = e.__cause__ or e.__context__
    return None


def _flush_tick(signum, frame):
    try:
        sys.__stdout__.flush()
    except BaseException as e:
        ki = _interrupt_in(e)
        if ki is not None:
            raise ki from None      # the tick ran when it came


def _audit_flush(event, args):
    if event in _FLUSH_EVENTS:
        _flush(interruptible=True)
    elif event == "import" and args[0] == "linecache" and not _lc_loading:
        _load_linecache()


_lc_loading = []


def _load_linecache():
    """Someone is importing linecache for the first time: the warnings
    module to show the session's first warning, traceback, inspect.  It
    will look the cells' lines up at once, so load it one step early
    and hand it the sources before it is asked (_register_lines)."""
    _lc_loading.append(True)
    try:
        _std("linecache")
        _register_lines()
    except KeyboardInterrupt:
        raise               # meant for the cell that imports
    except BaseException:
        pass                # the import that follows says what is wrong
    finally:
        _lc_loading.clear()


def _flush_before_others():
    os = _std("os")
    signal = _std("_signal")    # not signal, which imports enum
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


def idle():
    """Called by worker.c while it waits for a request: what threads of
    earlier cells wrote goes out now, as background, not in the next
    cell's output.  Only the streams coil made: one a cell put in
    sys.stdout or sys.__stdout__ is its code, not to be run while no
    cell runs (under strict a checkpoint's order may be on its way, and
    the gate lets the first fork of this thread through).  worker.c
    counts the threads itself: with none, no one can write and it need
    not call again."""
    for s in list(_own.values()):
        try:
            s.flush()
        except BaseException:
            pass            # the next cell's _flush says what was lost


def _line_mode(on):
    s = sys.__stdout__
    if getattr(s, "line_buffering", on) != on:
        try:
            s.reconfigure(line_buffering=on)
        except BaseException:
            pass


def _closed(s):
    """Is stream s gone: None, closed, or a cell's object whose "closed"
    raises?  One without the attribute is taken as open, as print
    takes it."""
    if s is None:
        return True
    try:
        return bool(getattr(s, "closed", False))
    except BaseException:
        return True


def _repair_streams():
    """Give the cell working stdout and stderr again: a cell may have set
    sys.stdout to None or closed it; fd 1 and 2 themselves are repaired
    in C before this runs."""
    fixed = []
    for name, fd in (("stdout", 1), ("stderr", 2)):
        s = getattr(sys, name, None)
        dunder = getattr(sys, "__%s__" % name, None)
        if _closed(s) or _closed(dunder):
            new = _new_stream(fd)
            if not _closed(s) and s is not dunder:
                setattr(sys, "__%s__" % name, new)
            else:
                setattr(sys, name, new)
                setattr(sys, "__%s__" % name, new)
            fixed.append(name)
    return fixed


def _fix_fd(fd):
    """Put the supervisor's pipe back on fd if the cell closed or
    replaced it (worker.c keeps a copy, and checks again after the cell)."""
    os = _std("os")
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


def _flush(interruptible=False):
    """Flush the cell's streams.  Returns warnings: a cell that closed
    fd 1 or 2 gets the supervisor's pipe back (and its output with it);
    output that still cannot be written is dropped, and said so.
    interruptible: called while the cell runs (an audit hook), where an
    interrupt that lands in a slow flush is the cell's to get."""
    warns = []
    for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if _closed(s):
            continue
        try:
            s.flush()
            continue
        except BaseException as e:
            ki = _interrupt_in(e) if interruptible else None
            if ki is not None:
                raise ki from None
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
