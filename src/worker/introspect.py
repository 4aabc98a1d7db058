# module: _coil
# introspect.py - the vars and inspect ops: what the namespace holds,
# summed up for a model and the observers' pane, and what one name is.
# Run once at start-up in the "_coil" module's namespace, before
# worker.py, whose _OPS table names op_vars and op_inspect and whose
# op_exec sums the namespace up after a cell for the observers
# ("summary") and shows a result with _safe_repr.

import sys
import builtins
import types


# The most entries of each list a reply carries: the supervisor weighs
# every frame before parsing it (chan.h's chan_peer_limits, 131072
# values) and caps these lists again (session-answer.c); what is left out
# is counted in "<list>_more", never dropped silently.
_LIST_MAX = {"vars": 1000, "display": 1000, "matches": 1000,
             "warnings": 100}
_SHAPE_MAX = 32     # numbers of a shape listed (NumPy allows 32 or 64)


def _cap_list(reply, key, items):
    """reply[key] = items, at most _LIST_MAX[key] of them, and the count
    of the rest in reply[key + "_more"]."""
    n = _LIST_MAX[key]
    reply[key] = items[:n]
    if len(items) > n:
        reply[key + "_more"] = len(items) - n


def _safe_repr(v, cap):
    try:
        r = repr(v)
    except BaseException as e:
        r = "<repr failed: %s: %s>" % (type(e).__name__, e)
    if not isinstance(r, str):
        r = "<repr returned %s, not str>" % type(r).__name__
    return _cut(r, cap)


_BIG = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_brief = []


def _vars_repr(v, cap):
    """_safe_repr for the namespace's list: a big builtin container or
    string is cut as its repr is made (reprlib), not made whole and then
    cut, which for a list of millions took a second of every cell an
    observer watched (their namespace is summed up after each)."""
    try:
        big = type(v) in _BIG and len(v) > 1000
    except BaseException:
        big = False
    if not big:
        return _safe_repr(v, cap)
    if not _brief:
        reprlib = _std("reprlib")
        r = reprlib.Repr()
        r.maxlist = r.maxtuple = r.maxset = r.maxfrozenset = 40
        r.maxdict = 20
        r.maxstring = r.maxother = r.maxlong = 4 * cap
        r.maxlevel = 3
        _brief.append(r)
    try:
        return _cut(_brief[0].repr(v), cap)
    except BaseException:
        return _safe_repr(v, cap)


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
    more = 0
    mtype = type(sys)
    for name, v in list(ns.items()):
        if name == "__builtins__" or (name.startswith("_") and not show_all):
            continue
        if _ns_hidden(name) and not show_all:
            continue
        if isinstance(v, mtype) and not show_all:
            continue
        if len(out) >= _LIST_MAX["vars"]:
            more += 1       # counted, not summed up
            continue
        e = {"name": name, "type": _typename(v)}
        e["repr"], _ = _vars_repr(v, 100)
        if len(e["repr"]) > 200:
            e["repr"] = e["repr"][:199] + "\u2026"
        # nbytes and shape as an array has them: counts, never a bool or
        # below zero (the answer's schema says so, and clients check it),
        # and not a class's attributes of those names
        array = not isinstance(v, type)
        try:
            nb = getattr(v, "nbytes", None) if array else None
            e["size"] = nb if type(nb) is int and nb >= 0 else \
                sys.getsizeof(v)
        except BaseException:
            pass
        try:
            shape = getattr(v, "shape", None) if array else None
            if isinstance(shape, tuple) and \
                    len(shape) <= _SHAPE_MAX and \
                    all(type(x) is int and x >= 0 for x in shape):
                e["shape"] = list(shape)
        except BaseException:
            pass
        if "shape" in e:
            dtype = _dtype_summary(v)
            if dtype:
                e["dtype"] = dtype
        if not isinstance(v, type) and hasattr(type(v), "__len__"):
            try:
                e["len"] = len(v)
            except BaseException:
                pass
        if isinstance(v, _SIGNED):
            sig = _signature_summary(v)
            if sig is not None:
                e["signature"] = sig
        out.append(e)
    reply = {"status": "ok", "vars": out}
    if more:
        reply["vars_more"] = more
    return reply


# The callables vars gives a signature: functions, methods and classes;
# not any object with __call__, whose signature may run user code.
_SIGNED = (types.FunctionType, types.MethodType, types.BuiltinFunctionType,
           type)


def _dtype_summary(v):
    """An array's dtype, or a frame's column dtypes, distinct, in order
    ("int64, object"); None when there is none.  Only attributes: a
    frame of many columns is looked at for its first few hundred."""
    try:
        dt = getattr(v, "dtype", None)
        # a column named "dtype" is no dtype: it has dimensions
        if dt is not None and not callable(dt) and \
                not getattr(dt, "ndim", 0):
            s = str(dt)
            return s[:40] if s else None
        dts = getattr(v, "dtypes", None)
        if dts is None or callable(dts):
            return None
        seen = []
        for i, d in enumerate(dts):
            if i >= 256 or len(seen) > 3:
                break
            s = str(d)
            if s not in seen:
                seen.append(s)
        if len(seen) > 3:
            seen[3:] = ["\u2026"]
        return ", ".join(seen)[:60] or None
    except BaseException:
        return None


def _signature_summary(v):
    try:
        inspect = _std("inspect")
        s = str(inspect.signature(v))
    except BaseException:
        return None
    return s if len(s) <= 100 else s[:99] + "\u2026"


def op_inspect(req):
    name = req["name"]
    try:
        obj = _resolve(name)
    except BaseException as e:
        return {"status": "error", "error": {
            "type": type(e).__name__, "message": str(e),
            "traceback": None, "line": None}}
    inspect = _std("inspect")
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
