# module: *
# stdimp.py - how coil's own Python imports the standard library: run
# first in each of coil's modules ("_coil_audit", "_coil"; pycode.c), so
# that every file after it imports through _std().
#
# The work directory is first on sys.path, as the script's directory is
# for python3, so a cell may write traceback.py or inspect.py there and
# import it: that is the user's choice.  But coil's own code (the error
# path, inspect, completion, the audit hook) must not run a cell's file
# in its stead, nor a module a cell put in sys.modules.  _std(name) gives
# the standard library's module:
#
#  - the one in sys.modules when it came from the interpreter (built in,
#    frozen, or a file under the stdlib directory), else one loaded from
#    sys.path as it was before the work directory was added (_std_path,
#    taken when this file runs, before any cell), with every standard
#    module it imports in
#    turn resolved the same way and modules of a cell's set aside
#    meanwhile;
#  - bound once: never looked up again by name;
#  - registered in sys.modules only where a cell's import of that name
#    would find that same file; where the work directory (or any entry a
#    cell put on sys.path) shadows it, the cell's import still finds its
#    own file, as in python3.
#
# Modules every answer needs (sys, builtins, _ast, types, time, os, io)
# are built in or frozen: no file on sys.path can stand in for them.  A
# standard module that imports another only when one of its functions
# runs (pydoc, pdb) resolves that one as any import does.

import sys as _sys
import builtins as _builtins
from _thread import get_ident as _std_ident

# sys.path now, before setup put the work dir on it (the interpreter is
# isolated: neither the current directory nor PYTHONPATH is on it)
_std_path = list(_sys.path)
_std_bound = {}         # name -> the module coil's code uses
_std_names = getattr(_sys, "stdlib_module_names", ())
_std_dir = (getattr(_sys, "_stdlib_dir", None) or "/nonexistent") + "/"
# bound now, before any cell: the import machinery's own
_std_import = _builtins.__import__
_std_finder = _sys.modules["_frozen_importlib_external"].PathFinder


def _std_genuine(m):
    """Did module m come from the interpreter itself?"""
    spec = getattr(m, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if origin in ("built-in", "frozen"):
        return True
    return isinstance(origin, str) and origin.startswith(_std_dir)


class _StdFinder:
    """First on sys.meta_path while _std loads: a top-level standard
    module is looked for on _std_path only."""
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None or name not in _std_names:
            return None
        return _std_finder.find_spec(name, _std_path)


def _std_shadowed(name):
    """Would a cell's import of top-level name find another file?"""
    try:
        spec = _std_finder.find_spec(name, _sys.path)
    except KeyboardInterrupt:
        raise               # the importing cell's
    except BaseException:
        return True
    origin = getattr(spec, "origin", None)
    return isinstance(origin, str) and not origin.startswith(_std_dir)


def _std_top(k):
    """Is sys.modules key k a standard module or one of its submodules?"""
    return isinstance(k, str) and k.partition(".")[0] in _std_names


def _std_scan(mods, keys):
    """(aside, genuine) of the standard modules among keys: the cells'
    stand-ins, and the interpreter's own."""
    aside, genuine = {}, {}
    for k in keys:
        if _std_top(k):
            v = mods.get(k)
            (genuine if _std_genuine(v) else aside)[k] = v
    return aside, genuine


class _std_guard:
    """While coil's own code runs (a with block; nested ones in a thread
    are part of its outermost): standard modules resolve from _std_path
    only, the cells' stand-ins for them are set aside from sys.modules,
    and on the way out every standard module loaded meanwhile that a
    cell's import would not find is taken out of sys.modules again
    (coil's alone), the stand-ins put back.  A standard module that
    imports another only when one of its functions runs (pkgutil,
    inspect) needs its calls made in one.

    Every error answer enters one, so it does not look at every module
    each time (with numpy and a few hundred modules that was most of an
    error answer's time): the standard modules found to be the
    interpreter's own are remembered (name and object), and while
    sys.modules still holds each of them (a comparison made in C) only
    the keys added since the last look, and the stand-ins found then,
    are looked at again; else everything is."""
    # per thread (_thread.get_ident()): [depth, aside, before]
    state = {}
    seen = set()        # sys.modules' keys at the last look
    genuine = {}        # name -> the interpreter's module found then
    fakes = {}          # name -> a cell's stand-in found then

    def __enter__(self):
        g = _std_guard
        me = g.state.setdefault(_std_ident(), [0, None, None])
        me[0] += 1
        if me[0] > 1:
            return self
        mods = _sys.modules
        keys = set(mods)
        if g.genuine.items() <= mods.items():
            aside, genuine = _std_scan(mods, (keys - g.seen) |
                                       (g.fakes.keys() & keys))
            g.genuine.update(genuine)
        else:
            aside, g.genuine = _std_scan(mods, keys)
        g.seen, g.fakes = keys, aside
        for k in aside:
            del mods[k]
        me[1], me[2] = aside, keys - aside.keys()
        _sys.meta_path.insert(0, _StdFinder)
        return self

    def __exit__(self, *exc):
        g = _std_guard
        ident = _std_ident()
        me = g.state[ident]
        me[0] -= 1
        if me[0] > 0:
            return
        del g.state[ident]
        aside, before = me[1], me[2]
        mods = _sys.modules
        try:
            _sys.meta_path.remove(_StdFinder)
        except ValueError:
            pass
        new = [k for k in set(mods) - before if _std_top(k)]
        private = {k.partition(".")[0] for k in aside}
        for k in new:
            top = k.partition(".")[0]
            if top not in private and _std_shadowed(top):
                private.add(top)
        for k in new:
            if k.partition(".")[0] in private:
                del mods[k]
        mods.update(aside)


def _std_load(name):
    have = _sys.modules.get(name)
    if have is not None and _std_genuine(have):
        return have
    with _std_guard():
        _std_import(name)
        return _sys.modules[name]


def _std(name):
    """The standard library's module name (dotted names too), as coil's
    own code must use it; see above."""
    m = _std_bound.get(name)
    if m is None:
        m = _std_bound[name] = _std_load(name)
    return m
