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
# with path, width, height and bytes; text kinds are kept inline, capped
# as the cell's output is.  display() also prints the text/plain, as
# IPython's terminal does, so a person at the REPL sees it in place.

import sys

_shown = []             # this cell's display entries, in order
_shown_cell = [0, 65536]  # the running cell's number and output cap
_display_warns = []     # images that could not be written
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


def _save_image(kind, data):
    """Write one image under the figure dir; its display entry, or None
    with a warning."""
    os = _std("os")
    cell = _shown_cell[0]
    d = _conf.get("figure_dir") or "."
    ext = "png" if kind == "image/png" else "svg"
    n = sum(1 for e in _shown if "path" in e) + 1
    path = os.path.join(d, "cell-%d-display-%d.%s" % (cell, n, ext))
    if isinstance(data, str):
        if kind == "image/png":
            base64 = _std("base64")
            data = base64.b64decode(data)
        else:
            data = data.encode("utf-8")
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
    return entry


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
        obj.savefig(buf, format="png")
    except Exception as e:
        _display_warns.append("figure not saved: %s: %s"
                              % (type(e).__name__, e))
        return None
    return buf.getvalue()


def _bundle(obj, plain):
    """The display entries of one object, in the order above."""
    entries = []
    cap = _shown_cell[1]
    if plain is not None:
        entries.append({"type": "text/plain", "text": _cut(plain, cap)[0]})
    png = _figure_png(obj)
    if png is None:
        png = _call_repr(obj, "_repr_png_")
    if png:
        entries.append(_save_image("image/png", png))
    svg = _call_repr(obj, "_repr_svg_")
    if svg:
        entries.append(_save_image("image/svg+xml", svg))
    for meth, kind in _TEXT_KINDS:
        v = _call_repr(obj, meth)
        if v is None:
            continue
        if not isinstance(v, str):
            json = _std("json")
            try:
                v = json.dumps(v)
            except (TypeError, ValueError):
                continue
        entries.append({"type": kind, "text": _cut(v, cap)[0]})
    mb = _call_repr(obj, "_repr_mimebundle_")
    if isinstance(mb, dict):
        have = {e["type"] for e in entries if e}
        for kind, v in mb.items():
            if kind in have:
                continue
            if kind in ("image/png", "image/svg+xml"):
                entries.append(_save_image(kind, v))
            elif isinstance(v, str):
                entries.append({"type": kind, "text": _cut(v, cap)[0]})
    return [e for e in entries if e]


def _display_result(value):
    """A cell's result: its rich kinds join display (the text is the
    answer's result already).  A figure still open in pyplot is left to
    _figures, which saves every open one."""
    plt = sys.modules.get("matplotlib.pyplot")
    try:
        if plt is not None and getattr(value, "number", None) in \
                plt.get_fignums() and plt.figure(value.number) is value:
            return
    except Exception:
        pass
    _shown.extend(_bundle(value, None))


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
        if raw and isinstance(obj, dict):
            entries = []
            for kind, v in obj.items():
                if kind.startswith("image/"):
                    entries.append(_save_image(kind, v))
                else:
                    entries.append({"type": kind, "text": str(v)})
            entries = [e for e in entries if e]
        else:
            plain, _ = _safe_repr(obj, _shown_cell[1])
            entries = _bundle(obj, plain)
        if include:
            entries = [e for e in entries if e["type"] in include]
        if exclude:
            entries = [e for e in entries if e["type"] not in exclude]
        for e in entries:
            if e["type"] == "text/plain":
                print(e["text"])
        _shown.extend(entries)
