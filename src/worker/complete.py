# module: _coil
# complete.py - the complete op: what Tab offers, as IPython offers it.
# Run once at start-up in the "_coil" module's namespace, after
# display.py and before worker.py, whose _OPS table names op_complete.
#
# The answer is {"matches", "start", "end"}: each match replaces
# code[start:end].  Where the cursor is decides what is offered, the
# first rule that fits winning:
#   %ti|  %%ti|  magic names: a line magic at a line's start or after
#                =, a cell magic at the cell's
#   d["ke|       the keys of d (a dict's str keys, a DataFrame's columns)
#   import nu|   module names (submodules after a dot), and after
#   from x import |  the names x has (its submodules if not imported)
#   open("da|    file names, in any string left open
#   np.ar|       attributes;  na|  names of the namespace, builtins,
#                keywords
# start never goes back past a '/' or a quote, so the front ends' word
# (readline breaks words there) and the match agree.

import sys
import builtins


def _token_start(text):
    i = len(text)
    while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_."):
        i -= 1
    return i


def _complete_magic(text):
    """%na| (a line magic, where IPython takes one: at the start of a line
    or after =) or %%na| (a cell magic, at the start of the cell): the
    magics' names with their % signs, or None.  The table, _MAGICS, is
    magics.py's, in this namespace."""
    re = _std("re")
    m = re.search(r"(?:^|\n|=)[ \t]*(%%?)(\w*)$", text)
    if m is None or _open_string(text) is not None:
        return None
    sign, word = m.groups()
    cell = sign == "%%"
    if cell and text[:m.start(1)].strip():
        return None
    kind = _CELL if cell else _LINE
    return m.start(1), sorted(sign + n for n in _names(kind)
                              if n.startswith(word))


def _keys_of(obj):
    """The str keys Tab offers inside obj[": a DataFrame's columns, a
    mapping's keys; at most 1000."""
    itertools = _std("itertools")
    t = type(obj)
    try:
        if t.__module__.startswith("pandas") and hasattr(obj, "columns"):
            keys = obj.columns
        elif hasattr(obj, "keys") and hasattr(obj, "__getitem__"):
            keys = obj.keys()
        else:
            return []
        return [k for k in itertools.islice(keys, 1000) if isinstance(k, str)]
    except Exception:
        return []


def _complete_key(text):
    """d["ke| or d['ke|: (start, matches) or None."""
    re = _std("re")
    m = re.search(r"([A-Za-z_][\w.]*)\[\s*([\"'])([^\"'\]]*)$", text)
    if m is None:
        return None
    try:
        obj = _resolve(m.group(1))
    except BaseException:
        return None
    prefix = m.group(3)
    return m.start(3), sorted(k for k in _keys_of(obj)
                              if k.startswith(prefix))


def _modules(parent):
    """Names of the modules under parent ("" for the top level), without
    importing any: the finders' view of sys.path or of the package's
    directories."""
    pkgutil = _std("pkgutil")
    if not parent:
        names = set(sys.builtin_module_names)
        names.update(m.name for m in pkgutil.iter_modules())
        return names
    find_spec = _std("importlib.util").find_spec
    try:
        spec = find_spec(parent)
    except (ImportError, ValueError):
        return set()
    names = set()
    loaded = sys.modules.get(parent)
    if loaded is not None:      # os.path: a module that is an attribute
        names.update(n for n, v in vars(loaded).items()
                     if type(v) is type(sys))
    paths = getattr(spec, "submodule_search_locations", None)
    if paths:
        names.update(m.name for m in pkgutil.iter_modules(list(paths)))
    return names


def _complete_import(text):
    """After import or from X import: (start, matches) or None."""
    re = _std("re")
    line = text.split("\n")[-1]
    m = re.match(r"\s*from\s+([\w.]+)\s+import\s+(?:.*,\s*)?(\w*)$", line)
    if m:
        mod, word = m.groups()
        names = set(_modules(mod))
        loaded = sys.modules.get(mod)
        if loaded is not None:
            names.update(n for n in dir(loaded) if not n.startswith("_"))
        return len(text) - len(word), sorted(
            n for n in names if n.startswith(word))
    m = re.match(r"\s*(?:import|from)\s+(?:.*,\s*)?([\w.]*)$", line)
    if m is None:
        return None
    dotted = m.group(1)
    parent, _, word = dotted.rpartition(".")
    start = len(text) - len(word)
    return start, sorted(n for n in _modules(parent) if n.startswith(word)
                         and (word.startswith("_") or not n.startswith("_")))


def _open_string(text):
    """The text of a string left open at the end of text's last line,
    or None: only a string can hold a file name being typed."""
    io = _std("io")
    tokenize = _std("tokenize")
    line = text.split("\n")[-1]
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line).readline):
            if tok.type == tokenize.ERRORTOKEN and tok.string in "\"'":
                return line[tok.end[1]:]
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _complete_path(text):
    """Inside an open string: the files and directories its text begins
    (a directory with its '/'), hidden ones only when asked for."""
    os = _std("os")
    typed = _open_string(text)
    if typed is None:
        return None
    head, _, word = typed.rpartition("/")
    d = os.path.expanduser(head + "/" if head or typed.startswith("/")
                           else ".")
    try:
        names = os.listdir(d or "/")
    except OSError:
        return len(text) - len(word), []
    out = []
    for n in names:
        if n.startswith(word) and (word.startswith(".") or
                                   not n.startswith(".")):
            out.append(n + "/" if os.path.isdir(os.path.join(d, n)) else n)
    return len(text) - len(word), sorted(out)


def _complete_name(text):
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
        keyword = _std("keyword")
        seen = set()
        for n in list(ns) + dir(builtins) + keyword.kwlist:
            if n.startswith(token) and n not in seen and \
                    (token.startswith("_") or not n.startswith("_")):
                seen.add(n)
                matches.append(n)
    return start, sorted(matches)


def op_complete(req):
    code = req["code"]
    cursor = req.get("cursor")
    if cursor is None or cursor > len(code):
        cursor = len(code)
    text = code[:cursor]
    for rule in (_complete_magic, _complete_key, _complete_import,
                 _complete_path, _complete_name):
        got = rule(text)
        if got is not None:
            start, matches = got
            break
    reply = {"status": "ok", "start": start, "end": cursor}
    _cap_list(reply, "matches", matches)
    return reply
