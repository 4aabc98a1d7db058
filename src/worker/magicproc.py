# module: _coil
# magicproc.py - the magics of the process the cells run in: %pwd, %cd,
# %env, %matplotlib, %pip (the venv's own pip, under the sandbox's
# rules) and the installers and checkpoint magics a cell is refused.
# Run once at start-up in the "_coil" module's namespace, after
# magictab.py (whose _magic() enters each in magics.py's table).


@_magic("pwd", _LINE, "%pwd", "The current working directory.")
def _m_pwd(arg, **_):
    os = _std("os")
    return os.getcwd()


_dirs = []


@_magic("cd", _LINE, "%cd [DIR | -]",
        "Change the working directory (home without DIR, the previous one "
        "with -) and print it.")
def _m_cd(arg, **_):
    os = _std("os")
    opts, rest = _opts(arg, "q", "cd")
    target = rest.strip()
    if len(target) >= 2 and target[0] == target[-1] and target[0] in "'\"":
        target = target[1:-1]       # %cd "a dir", as IPython takes it
    if not target:
        target = os.path.expanduser("~")
    elif target == "-":
        if not _dirs:
            raise UsageError("%cd -: no previous directory")
        target = _dirs[-1]
    before = os.getcwd()
    try:
        os.chdir(os.path.expanduser(target))
    except OSError as e:
        raise UsageError("%%cd: %s: %s" % (target, e.strerror)) from None
    _dirs.append(before)
    if "q" not in opts:
        print(os.getcwd())


@_magic("env", _LINE, "%env [VAR | VAR=VALUE | VAR VALUE]",
        "The environment as a dict, one variable's value, or set one.")
def _m_env(arg, **_):
    os = _std("os")
    arg = arg.strip()
    if not arg:
        return dict(os.environ)
    if "=" in arg or " " in arg:
        sep = "=" if "=" in arg and (" " not in arg or
                                     arg.index("=") < arg.index(" ")) else " "
        k, _, v = arg.partition(sep)
        k, v = k.strip(), v.strip()
        os.environ[k] = v
        print("env: %s=%s" % (k, v))
        return None
    try:
        return os.environ[arg]
    except KeyError:
        raise UsageError("Environment does not have key: %s" % arg) \
            from None


@_magic("matplotlib", _LINE, "%matplotlib [inline]",
        "Accepted for notebooks' sake: coil already saves every open "
        "figure as a PNG at the end of the cell (listed in display).")
def _m_matplotlib(arg, **_):
    gui = arg.strip() or "inline"
    if gui not in ("inline", "agg", "notebook", "widget", "ipympl"):
        print("coil shows figures as PNG files: the %r backend has no window "
              "here, figures stay inline" % gui)
    if "matplotlib.pyplot" not in sys.modules:
        try:
            import matplotlib
            matplotlib.use("Agg")
        except ImportError:
            raise UsageError("%matplotlib: matplotlib is not installed") \
                from None


def _no_installer(tool):
    def refuse(arg, **_):
        raise UsageError(
            "%%%s cannot install from a cell: coil's worker runs Python "
            "%d.%d (%s) in a sandbox that lets it write only the work "
            "directory, and a package installed mid-session would not be "
            "seen by modules already imported; install outside coil (apt "
            "install python3-NAME, or %s -m pip install --user NAME), then "
            "restart coil" % (tool, sys.version_info[0], sys.version_info[1],
                              sys.executable, sys.executable))
    return refuse


# pip's commands that write the venv, and those that fetch packages
# pip's general options that take a value: before the command
# (%pip -q --log x install NAME), they and their values are skipped
_PIP_VALUED = frozenset(("--log", "--log-file", "--local-log", "--proxy",
                         "--retries", "--timeout", "--exists-action",
                         "--trusted-host", "--cert", "--client-cert",
                         "--cache-dir", "--python", "--use-feature",
                         "--use-deprecated", "--keyring-provider"))


def _pip_command_at(args):
    """The index of pip's command in args: the first word that is not a
    general option or an option's value (len(args): none)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _PIP_VALUED else 1
    return i


def _pip_base_ok(how, venv):
    """The venv's python runs here, or a UsageError that says why: a
    venv made by a Python outside what the sandbox shows (pyenv's, in a
    home) has a bin/python that leads nowhere in the sandbox."""
    os = _std("os")
    python = venv + "/bin/python"
    if os.path.exists(python):
        return
    home = "?"
    try:
        with open(venv + "/pyvenv.cfg", encoding="utf-8") as f:
            for line in f:
                key, eq, val = line.partition("=")
                if eq and key.strip().lower() == "home":
                    home = val.strip()
    except OSError:
        pass
    raise UsageError(
        "%s: the venv's python '%s' leads to the Python in '%s', which "
        "cells cannot reach here; make the venv with the system's "
        "Python ('/usr/bin/python3 -m venv DIR'), or start coil with "
        "--sandbox none" % (how, python, home))


_PIP_WRITES = frozenset(("install", "uninstall"))
_PIP_FETCHES = frozenset(("install", "download", "wheel"))


def _pip_find_links(args):
    """Whether pip's args, or the environment, name a --find-links."""
    os = _std("os")
    for a in args:
        if a in ("-f", "--find-links") or a.startswith("--find-links=") \
                or (a.startswith("-f") and not a.startswith("--")):
            return True
    return bool(os.environ.get("PIP_FIND_LINKS"))


def _pip(arg, how, capture=False):
    """%pip ARGS, and !pip, !pip3, !python -m pip: the venv's own pip
    (VENV/bin/python -m pip) in a process of the cell's, its output
    streamed as the cell's; then the import system looks again, so a
    package just installed imports on the next line.  Without the
    network (--allow-net) pip looks only where --find-links points
    (--no-index: it would otherwise retry the index for minutes).
    capture (x = !pip ...): pip's output comes back as an SList."""
    os = _std("os")
    shlex = _std("shlex")
    subprocess = _std("subprocess")
    venv = _conf.get("venv")
    if not venv:
        raise UsageError(
            "%s installs into a virtualenv, and coil runs without one: "
            "its worker runs the system's Python %d.%d, which a cell "
            "cannot change; start coil with --venv DIR (make one with "
            "'python%d.%d -m venv DIR'), or in an activated venv, and "
            "%s again" % (how, sys.version_info[0], sys.version_info[1],
                          sys.version_info[0], sys.version_info[1], how))
    try:
        args = shlex.split(arg)
    except ValueError as e:
        raise UsageError("%s: %s" % (how, e)) from None
    if not args:
        raise UsageError("usage: %s install NAME... (or any pip command: "
                         "list, show, uninstall, ...)" % how)
    at = _pip_command_at(args)
    cmd = args[at] if at < len(args) else ""
    if cmd in _PIP_WRITES and not _conf.get("venv_writable"):
        raise UsageError(
            "%s %s: the sandbox lets cells read the venv '%s' but not "
            "write it; start coil with --allow-write %s" % (
                how, cmd, venv, venv))
    if cmd in _PIP_FETCHES and not _conf.get("allow_net"):
        if not _pip_find_links(args[1:]):
            raise UsageError(
                "%s %s: the sandbox has no network, so pip can install "
                "only from a directory of wheels: pass --find-links DIR "
                "(%s %s --find-links DIR NAME, DIR in the work dir or an "
                "--allow-read dir) or set PIP_FIND_LINKS=DIR (%%env, or "
                "in coil's environment), or start coil with --allow-net"
                % (how, cmd, how, cmd))
        if "--no-index" not in args:
            args.insert(at + 1, "--no-index")
    _shell_ok(how)
    _pip_base_ok(how, venv)
    env = dict(os.environ)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env["PIP_NO_INPUT"] = "1"
    env["PIP_NO_CACHE_DIR"] = "1"      # the private tmp goes anyway
    _flush()
    pipe = subprocess.PIPE if capture else None
    r = subprocess.run([venv + "/bin/python", "-m", "pip"] + args, env=env,
                       stdout=pipe, stderr=subprocess.STDOUT if capture
                       else None)
    ns["_exit_code"] = r.returncode
    _std("importlib").invalidate_caches()
    if cmd in _PIP_WRITES:
        # a .pth file the install added, as the next python would see it
        site = _std("site")
        for d in site.getsitepackages([venv]):
            if os.path.isdir(d):
                site.addsitedir(d)
    if capture:
        return SList(r.stdout.decode("utf-8", "replace").splitlines())
    if r.returncode != 0:
        raise UsageError("%s %s: pip exited with status %d (its messages "
                         "are above)" % (how, cmd, r.returncode))


@_magic("pip", _LINE, "%pip ARGS",
        "Run the venv's own pip (--venv, $VIRTUAL_ENV) on it: %pip install "
        "NAME, list, show, uninstall; its output is the cell's, and what "
        "it installs imports on the next line.  Without --allow-net it "
        "installs from --find-links DIR (or PIP_FIND_LINKS) only.  !pip, "
        "!pip3 and !python -m pip do the same.")
def _m_pip(arg, **_):
    _pip(arg, "%pip")


_magic("conda", _LINE, "%conda ...", "Refused, with what to do instead: a "
       "cell cannot install packages.")(_no_installer("conda"))


def _supervisor_only(name):
    def refuse(arg, **_):
        raise UsageError("%%%s is done by coil's supervisor, not in a cell's "
                         "code: send %s as a cell of its own (one line, "
                         "nothing else)" % (name, _MAGICS[name][1]))
    return refuse


def _ckpt_magics(entries):
    """The checkpoint magics, as the supervisor's table (src/lib/magic.c)
    names them: setup's conf "ckpt_magics", [[name, usage, help]...]."""
    for name, usage, text in entries:
        _magic(name, _LINE, usage, text)(_supervisor_only(name))
