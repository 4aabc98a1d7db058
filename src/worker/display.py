# module: _coil
# display.py - rich display in coil's cells: the display() builtin (with
# IPython's signature) and the _repr_*_ protocol.  Run once at start-up
# in the "_coil" module's namespace, after magics.py and before
# worker.py, whose op_exec hands the cell's number to _shown_cell before
# the cell runs and puts _shown at the head of the answer's "display"
# after it.
#
# What an object shows: its text/plain (repr, or what _repr_pretty_-free
# IPython would print) and, where it has them, image/png, image/svg+xml,
# text/html, text/markdown and application/json.  Images are files under
# the figure dir (a model reads a path, not megabytes of base64), listed
# with path, width, height and bytes; text kinds are kept inline, each
# pre-cut to the cell's max_output with what was cut said ("text_cut",
# as a result's "result_cut"): the supervisor shares max_output among
# all of an answer's texts and marks every cut (session-answer.c).
# text/html is left out where the object's text/plain is its own (a
# DataFrame's table says what its HTML says, at a fraction of the
# bytes), unless the request's "display" or display()'s include asks
# for it; a placeholder such as "<IPython.core.display.HTML object>" is
# no text of its own.  display() also prints the text/plain, as
# IPython's terminal does, so a person at the REPL sees it in place.
#
# IPython's own display() (IPython.display.display, imported by cells
# as often as the builtin is used) prints only a placeholder outside an
# IPython shell: when its module is imported, its code is made to call
# this display() instead (_ipython_hook), so display(Markdown(...))
# shows the Markdown however the cell came by the function.

import sys

_shown = []             # this cell's display entries, in order
_shown_cell = [0, 65536, ()]  # the running cell's number, output cap
                             # and the MIME types its request asked for
_display_warns = []     # images that could not be written
# The longest side of an image a model takes whole; one larger is shrunk
# to it (a figure drawn again at a lower dpi, a PNG resampled by PIL
# when it is installed), and its entry's "note" says so.
_EDGE = 1500
_TEXT_KINDS = (("_repr_html_", "text/html"),
               ("_repr_markdown_", "text/markdown"),
               ("_repr_json_", "application/json"),
               ("_repr_latex_", "text/latex"))


def _png_size(data):
    """(width, height) from a PNG's IHDR chunk, or (None, None)."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return (int.from_bytes(data[16:20], "big"),
                int.from_bytes(data[20:24], "big"))
    return None, None


def _svg_size(text):
    re = _std("re")
    out = []
    for attr in ("width", "height"):
        m = re.search(r'<svg[^>]*\s%s="([\d.]+)(?:pt|px)?"' % attr, text)
        out.append(round(float(m.group(1))) if m else None)
    return tuple(out)


def _shrink_png(data):
    """(PNG bytes within _EDGE a side, note or None): the bytes as they
    are when they fit, resampled by PIL when it is there, else as they
    are with a note saying why."""
    w, h = _png_size(data)
    if w is None or max(w, h) <= _EDGE:
        return data, None
    try:
        Image = __import__("PIL.Image").Image
    except Exception:
        return data, ("%dx%d px, not shrunk to %d px a side: PIL is not "
                      "installed (pip install pillow)" % (w, h, _EDGE))
    io = _std("io")
    try:
        im = Image.open(io.BytesIO(data))
        im.thumbnail((_EDGE, _EDGE))
        buf = io.BytesIO()
        im.save(buf, format="PNG")
    except Exception as e:
        return data, ("%dx%d px, not shrunk: %s: %s"
                      % (w, h, type(e).__name__, e))
    nw, nh = _png_size(buf.getvalue())
    return buf.getvalue(), _shrunk_note(w, h, nw, nh)


def _shrunk_note(w, h, nw, nh):
    return ("shrunk from %dx%d to %dx%d px, the most a model takes is "
            "%d a side" % (w, h, nw, nh, _EDGE))


def _save_image(kind, data):
    """Write one image under the figure dir; its display entry, or None
    with a warning."""
    os = _std("os")
    cell = _shown_cell[0]
    d = _conf.get("figure_dir") or "."
    ext = "png" if kind == "image/png" else "svg"
    n = sum(1 for e in _shown if "path" in e) + 1
    path = os.path.join(d, "cell-%d-display-%d.%s" % (cell, n, ext))
    note = None
    if isinstance(data, str):
        if kind == "image/png":
            base64 = _std("base64")
            data = base64.b64decode(data)
        else:
            data = data.encode("utf-8")
    if kind == "image/png":
        data, note = _shrink_png(data)
    try:
        os.makedirs(d, exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        _display_warns.append("image not saved: %s: %s" % (path, e.strerror))
        return None
    w, h = _png_size(data) if kind == "image/png" else \
        _svg_size(data.decode("utf-8", "replace"))
    entry = {"type": kind, "path": path, "bytes": len(data)}
    if w is not None:
        entry["width"], entry["height"] = w, h
    if note:
        entry["note"] = note
    return entry


def _fig_save(fig, dest):
    """Save a matplotlib figure as PNG into dest (a path or a file), drawn
    again at a lower dpi when it is over _EDGE a side; the note saying
    so, or None."""
    fig.savefig(dest, format="png")
    head = _png_head(dest)
    w, h = _png_size(head)
    if w is None or max(w, h) <= _EDGE:
        return None
    # the dpi the file was drawn at, whatever savefig.dpi said
    dpi = w / fig.get_size_inches()[0] * _EDGE / max(w, h)
    if hasattr(dest, "seek"):
        dest.seek(0)
        dest.truncate()
    fig.savefig(dest, format="png", dpi=dpi)
    nw, nh = _png_size(_png_head(dest))
    return _shrunk_note(w, h, nw, nh) + "; savefig() writes it full size"


def _png_head(dest):
    """The first 24 bytes of a PNG just written to dest."""
    if hasattr(dest, "getvalue"):
        return dest.getvalue()[:24]
    with open(dest, "rb") as f:
        return f.read(24)


def _call_repr(obj, meth):
    """obj's _repr_x_(), or None when it has none or it fails (IPython
    skips a failing formatter too).  A (data, metadata) pair is data."""
    fn = getattr(type(obj), meth, None)
    if fn is None or isinstance(obj, type):
        return None
    try:
        v = fn(obj)
    except Exception:
        return None
    if isinstance(v, tuple) and len(v) == 2:
        v = v[0]
    return v


def _figure_png(obj):
    """A matplotlib Figure as PNG bytes, or None if obj is not one."""
    t = type(obj)
    if not t.__module__.startswith("matplotlib.") or \
            not any(c.__name__ == "Figure" for c in t.__mro__):
        return None
    io = _std("io")
    buf = io.BytesIO()
    try:
        _fig_save(obj, buf)
    except Exception as e:
        _display_warns.append("figure not saved: %s: %s"
                              % (type(e).__name__, e))
        return None
    return buf.getvalue()


def _text_entry(kind, text, cap):
    """A text kind's display entry, pre-cut to cap (worker.py's _cut)."""
    text, cut = _cut(text, cap)
    entry = {"type": kind, "text": text}
    if cut:
        entry["text_cut"] = cut
    return entry


def _own_plain(plain):
    """Whether a text/plain says something of its own: not object's
    repr, nor the placeholder of IPython's display classes."""
    if plain is None:
        return False
    # every cell's result passes here: most are no placeholder at all
    return not plain.startswith("<") or _std("re").fullmatch(
        r"<[\w.]+ object(?: at 0x[0-9a-fA-F]+)?>", plain) is None


def _bundle(obj, plain, want=(), own=None):
    """The display entries of one object, in the order above; want: MIME
    types asked for besides the usual ones; own: whether its text/plain
    is its own (by default, from plain)."""
    entries = []
    cap = _shown_cell[1]
    own = _own_plain(plain) if own is None else own
    want = tuple(want) + tuple(_shown_cell[2])
    if plain is not None:
        entries.append(_text_entry("text/plain", plain, cap))
    png = _figure_png(obj)
    if png is None:
        png = _call_repr(obj, "_repr_png_")
    if png:
        entries.append(_save_image("image/png", png))
    svg = _call_repr(obj, "_repr_svg_")
    if svg:
        entries.append(_save_image("image/svg+xml", svg))
    for meth, kind in _TEXT_KINDS:
        if kind == "text/html" and own and kind not in want:
            continue
        v = _call_repr(obj, meth)
        if v is None:
            continue
        if not isinstance(v, str):
            json = _std("json")
            try:
                v = json.dumps(v)
            except (TypeError, ValueError):
                continue
        entries.append(_text_entry(kind, v, cap))
    _bundle_mime(obj, entries, own, want)
    entries = [e for e in entries if e]
    if len(entries) > 1 and not own and plain is not None:
        del entries[0]      # a placeholder beside what it stands for
    return entries


def _bundle_mime(obj, entries, own, want):
    """What obj's _repr_mimebundle_ adds to entries."""
    mb = _call_repr(obj, "_repr_mimebundle_")
    if not isinstance(mb, dict):
        return
    have = {e["type"] for e in entries if e}
    for kind, v in mb.items():
        if kind in have or (kind == "text/html" and own and
                            kind not in want):
            continue
        if kind in ("image/png", "image/svg+xml"):
            entries.append(_save_image(kind, v))
        elif isinstance(v, str):
            entries.append(_text_entry(kind, v, _shown_cell[1]))


def _display_result(value, text):
    """A cell's result: its rich kinds join display (its text, the repr
    text, is the answer's result already).  A figure still open in
    pyplot is left to _figures, which saves every open one."""
    plt = sys.modules.get("matplotlib.pyplot")
    try:
        if plt is not None and getattr(value, "number", None) in \
                plt.get_fignums() and plt.figure(value.number) is value:
            return
    except Exception:
        pass
    _shown.extend(_bundle(value, None, own=_own_plain(text)))


def display(*objs, include=None, exclude=None, metadata=None,
            transient=None, display_id=None, raw=False, clear=False,
            **kwargs):
    """Display objects: each one's text is printed, and its text/plain
    and rich representations (image/png, image/svg+xml, text/html,
    text/markdown, application/json) are listed in the answer's
    "display"; images are saved under the figure dir.  With raw=True
    each object is a dict of MIME type to data.  IPython's signature;
    include and exclude pick MIME types."""
    for obj in objs:
        if not raw and _ipython_display(obj):
            continue
        if raw and isinstance(obj, dict):
            entries = []
            for kind, v in obj.items():
                if kind.startswith("image/"):
                    entries.append(_save_image(kind, v))
                else:
                    entries.append(_text_entry(kind, str(v),
                                               _shown_cell[1]))
            entries = [e for e in entries if e]
            plain = obj.get("text/plain")
        else:
            plain, _ = _safe_repr(obj, 0)
            entries = _bundle(obj, plain, include or ())
        if include:
            entries = [e for e in entries if e["type"] in include]
        if exclude:
            entries = [e for e in entries if e["type"] not in exclude]
        if plain is not None and (not include or "text/plain" in include) \
                and "text/plain" not in (exclude or ()):
            print(plain)
        _shown.extend(entries)


def _ipython_display(obj):
    """IPython's _ipython_display_ protocol: an object that shows itself
    (by calling display() in turn) is left to do so."""
    fn = getattr(type(obj), "_ipython_display_", None)
    if fn is None or isinstance(obj, type):
        return False
    fn(obj)
    return True


# The modules whose display() is IPython's: IPython 8's, and 7's.
_IPY_DISPLAY = ("IPython.core.display_functions", "IPython.core.display")


def _ipython_shim(*objs, **kws):
    return _coil_display(*objs, **kws)  # noqa: F821 (IPython's globals)


def _ipython_patch(mod):
    """mod's own display() made to call coil's: its code replaced, so
    every name already bound to the function (IPython.display.display,
    a cell's `from IPython.display import display`) calls coil's."""
    fn = mod.__dict__.get("display")
    if getattr(fn, "__module__", None) != mod.__name__ or \
            getattr(fn, "__code__", None) is None:
        return
    mod.__dict__["_coil_display"] = display
    try:
        fn.__code__ = _ipython_shim.__code__
    except (TypeError, ValueError):
        pass


class _IPyFinder:
    """First on sys.meta_path: IPython's display modules patched as they
    are loaded, before a cell can take their display()."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in _IPY_DISPLAY:
            return None
        for f in sys.meta_path:
            fs = getattr(f, "find_spec", None)
            if f is cls or fs is None:
                continue
            spec = fs(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = getattr(spec.loader, "exec_module", None)
        if run is not None:
            def exec_module(module):
                run(module)
                _ipython_patch(module)
            spec.loader.exec_module = exec_module
        return spec


def _ipython_hook():
    """Called once at start-up (worker.py's setup)."""
    for name in _IPY_DISPLAY:
        if name in sys.modules:
            _ipython_patch(sys.modules[name])
    sys.meta_path.insert(0, _IPyFinder)
