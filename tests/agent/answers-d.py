#!/usr/bin/python3
# What a capped answer says it cut is what it cut (issue 9, bug 7 and
# item 5).  Each field that is too long (output, stderr, result, the
# error's message and traceback) keeps its head and tail around one
# marker "[... coil: L lines, B bytes cut ...]"; B and L are exactly the
# bytes and newlines between head and tail of the full text (computed
# here from the text the cell made), `cut` has each field's {lines,
# bytes} and `truncated` their sum.  Cuts fall after a newline when one
# is near, never inside a UTF-8 character; a smaller max_output in a
# request is the cap of its cell.  max-output.test has what needs no
# arithmetic: a larger max_output, a bad one, a small answer uncut.
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, check_exit, done, unsandboxed  # noqa: E402

MARKER = re.compile(r"\n\[\.\.\. coil: (\d+) lines?, (\d+) bytes? cut "
                    r"\.\.\.\]\n")
SESSION_CAP = 1000              # --max-output of the session below


def split(text):
    """(head, lines, bytes, tail) of a capped text, or None when it has
    not exactly one marker."""
    marks = list(MARKER.finditer(text))
    if len(marks) != 1:
        return None
    m = marks[0]
    return text[:m.start()], int(m.group(1)), int(m.group(2)), \
        text[m.end():]


def exact(full, shown, cap):
    """Why shown is not full capped at cap with exact counts, or ""."""
    parts = split(shown)
    if parts is None:
        return "not one marker in %r" % shown[:200]
    head, lines, nbytes, tail = parts
    fb, hb, tb = full.encode(), head.encode(), tail.encode()
    if not fb.startswith(hb) or not fb.endswith(tb):
        return "head or tail is not the full text's"
    if len(hb) + len(tb) > cap:
        return "kept %d bytes, over the cap %d" % (len(hb) + len(tb), cap)
    gone = fb[len(hb):len(fb) - len(tb)]
    if nbytes != len(gone) or lines != gone.count(b"\n"):
        return "marker says %d lines, %d bytes; %d lines, %d bytes gone" % (
            lines, nbytes, gone.count(b"\n"), len(gone))
    return ""


def counted(r, field, shown):
    """The response's cut[field] and truncated agree with the marker."""
    parts = split(shown)
    cut = (r.get("cut") or {}).get(field)
    return parts is not None and cut == {"lines": parts[1],
                                         "bytes": parts[2]}


def total(r):
    """truncated is the sum of the fields' cuts."""
    return r.get("truncated") == sum(c["bytes"] for c in
                                     (r.get("cut") or {}).values())


def lines_text(n, fmt="line %05d\n"):
    return "".join(fmt % i for i in range(n))


with unsandboxed() as c:
    # Bug 7: the worker pre-cuts a huge repr; the marker counted only
    # the supervisor's part of the cut.
    r = c.run("'y' * 1000000")
    full = repr("y" * 1000000)
    why = exact(full, r.get("result") or "", 64 << 10)
    check(r.get("status") == "ok" and not why,
          "bug 7: a huge result's marker counts every byte cut", why)
    check(counted(r, "result", r.get("result") or "") and
          r.get("truncated") == len(full) - (64 << 10),
          "bug 7: the marker, cut.result and truncated agree",
          (r.get("cut"), r.get("truncated")))

    # A repr of many lines, pre-cut by the worker too: lines exact.
    code = ("class R:\n    def __repr__(self):\n"
            "        return ''.join('row %06d\\n' % i "
            "for i in range(100000))\nR()")
    r = c.run(code)
    full = lines_text(100000, "row %06d\n")
    res = r.get("result") or ""
    why = exact(full, res, 64 << 10)
    check(not why, "a pre-cut repr of 100000 lines: lines and bytes exact",
          why)
    parts = split(res)
    check(parts is not None and parts[0].endswith("\n") and
          parts[3].startswith("row "),
          "a pre-cut repr is cut on line boundaries",
          parts and (parts[0][-20:], parts[3][:20]))
    check(counted(r, "result", res) and total(r),
          "a pre-cut repr: cut.result and truncated agree", r.get("cut"))

with unsandboxed("--max-output", str(SESSION_CAP)) as c:
    # Output of whole lines: head and tail end on line boundaries.
    r = c.run("for i in range(5000): print('line %05d' % i)")
    out = r.get("output", "")
    full = lines_text(5000)
    why = exact(full, out, SESSION_CAP)
    check(not why, "output: marker counts equal the bytes and lines gone",
          why)
    parts = split(out)
    check(parts is not None and parts[0].endswith("\n") and
          parts[3].startswith("line ") and parts[1] == 5000 - (
              len(parts[0]) + len(parts[3])) // 11,
          "output: the cut falls on line boundaries, whole lines counted",
          parts and (parts[0][-15:], parts[1], parts[3][:15]))
    check(counted(r, "output", out) and total(r),
          "output: cut.output and truncated agree with the marker",
          (r.get("cut"), r.get("truncated")))

    # Lines too long for a boundary to be near: a plain byte cut.
    r = c.run("print('a' * 3000)")
    out = r.get("output", "")
    why = exact("a" * 3000 + "\n", out, SESSION_CAP)
    parts = split(out)
    check(not why and parts[1] == 0 and len(parts[0]) == SESSION_CAP // 2,
          "a long line: cut at the cap, 0 lines counted", why or parts[:3])

    # UTF-8: odd caps over 2-, 3- and 4-byte characters never split one.
    bad = []
    for ch in ("é", "€", "😀"):
        for cap in (101, 102, 103):
            r = c.run("print(%r * 500, end='')" % ch, max_output=cap)
            out = r.get("output", "")
            why = exact(ch * 500, out, cap)
            parts = split(out)
            if why or "\\x" in out or not parts or \
                    len(parts[0].encode()) < cap // 2 - 3:
                bad.append((ch, cap, why, out[:40]))
    check(not bad, "UTF-8: cuts fall between characters, counts exact", bad)

    # A boundary near the cut wins, and never inside a character.
    r = c.run("for i in range(300): print('é' * (i % 7) + '€')")
    out = r.get("output", "")
    full = "".join("é" * (i % 7) + "€\n" for i in range(300))
    why = exact(full, out, SESSION_CAP)
    parts = split(out)
    check(not why and parts[0].endswith("\n") and
          (parts[3].startswith("é") or parts[3].startswith("€")),
          "UTF-8 lines: cut after a newline, counts exact", why)

    # stderr obeys the budget, as its own field.
    r = c.run("import sys\nfor i in range(400): "
              "sys.stderr.write('err %04d\\n' % i)")
    err = r.get("stderr", "")
    why = exact(lines_text(400, "err %04d\n"), err, SESSION_CAP)
    check(not why and counted(r, "stderr", err) and total(r),
          "stderr: capped with exact counts, cut.stderr agrees", why)

    # Both streams at once: one marker each, truncated is their sum,
    # and the two share one budget (max_output is the whole answer's):
    # each has a quarter of it, the rest goes to output, first in order.
    r = c.run("import sys\nprint('o' * 2000)\nsys.stderr.write('e' * 3000)"
              "\nNone")
    check(counted(r, "output", r.get("output", "")) and
          counted(r, "stderr", r.get("stderr", "")) and total(r) and
          r.get("truncated") == 2001 + 3000 - SESSION_CAP and
          r["cut"]["output"]["bytes"] == 2001 - SESSION_CAP * 3 // 4,
          "output and stderr: each counted, truncated is the sum, "
          "one budget shared", (r.get("cut"), r.get("truncated")))

    # The error's message and traceback: capped with their markers.
    r = c.run("raise ValueError('v' * 5000)")
    e = r.get("error") or {}
    why = exact("v" * 5000, e.get("message", ""), SESSION_CAP)
    check(r.get("status") == "error" and not why and
          counted(r, "message", e.get("message", "")),
          "error message: capped, counts exact, cut.message agrees", why)
    tb = e.get("traceback") or ""
    check(split(tb) is not None and tb.startswith("Traceback") and
          tb.rstrip("\n").endswith("v" * 10) and
          counted(r, "traceback", tb) and total(r),
          "error traceback: head and tail kept, cut.traceback agrees",
          (tb[:80], r.get("cut"), r.get("truncated")))

    # max_output smaller than --max-output for one cell.
    r = c.run("print('s' * 400)", max_output=100)
    out = r.get("output", "")
    why = exact("s" * 400 + "\n", out, 100)
    check(not why and len(out.encode()) < 100 + 64,
          "max_output smaller than --max-output: this cell's cap", why)
    check_exit(c)
done()
