#!/usr/bin/env python3
"""Colour in the curses UI, read back with tmux capture-pane -e: a
cell's SGR sequences (the 16 colours, 256-colour, truecolour, bold) show
as colour, wrap on what is seen with the colour carried to the next
row, and end with their line; every other escape stays sanitised
(shown as text, never obeyed: the pane's title stays).  Code is
coloured as Python in the output pane (a triple-quoted string across a
cell's lines too) and in the input line.  NO_COLOR and --no-color turn
all of it off, and the text shows plain with no residue."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

SGR = (r"print('\x1b[31mred\x1b[0m plain \x1b[1;38;5;208morange\x1b[0m "
       r"\x1b[38;2;0;0;255mblue\x1b[0m \x1b[2Jx \x1b]2;evil\x07y')")
# between an attribute's change and the text: any number of sequences
ANY = r"(?:\x1b\[[0-9;]*m)*"


def line_of(text, needle):
    """The output pane's part of the last row holding needle there."""
    found = ""
    for ln in text.split("\n"):
        right = ln.split("\u2502", 1)[-1]
        if needle in right:
            found = right
    return found


def sgr(scr):
    scr.type(SGR)
    check(scr.wait(r"│  red plain orange blue \S\[2Jx \S\]2;evil\Sy"),
          "the SGR sequences take no room; the others show as text",
          scr.text())
    esc = scr.text(escapes=True)
    out = line_of(esc, " plain ")
    check(re.search(r"\x1b\[31m" + ANY + "red", out) and
          re.search(r"38;5;208m" + ANY + "orange", out) and
          re.search(r"\x1b\[1m" + ANY + "orange", out) and
          re.search(r"38;5;21m" + ANY + "blue", out) and
          not re.search(r"3[0-8]m" + ANY + " plain", out),
          "red, bold orange (256 colours), truecolour blue; reset between",
          repr(out))
    title = scr.tmux("display-message", "-p", "#{pane_title}")
    check("evil" not in title, "an OSC in the output sets no title", title)
    scr.type(r"print('\x1b[32m' + 'g' * 150 + '\x1b[0m'); print('after')")
    check(scr.wait(r"^ *│  after"), "a long green line", scr.text())
    esc = scr.text(escapes=True)
    rows = [ln for ln in esc.split("\n") if "ggg" in ln]
    plain = scr.text()
    count = sum(ln.count("g") for ln in plain.split("\n")
                if re.search(r"│. g+ *$", ln))
    check(len(rows) >= 2 and all(re.search(r"32m" + ANY + "g", r)
                                 for r in rows) and count == 150,
          "it wraps on what is seen (150 g in all), green on every row",
          "%d g\n%s" % (count, "\n".join(map(repr, rows))))
    # the namespace pane hidden, nothing but the output is between the
    # lines: capture-pane carries attributes from one line to the next
    scr.type(":ns")
    scr.type(r"print('\x1b[35mopen'); print('next')")
    check(scr.wait(r"^  next"), "a line leaves a colour set", scr.text())
    esc = scr.text(escapes=True)
    last = re.findall(r"\x1b\[([0-9;]*)m", esc[:esc.rfind("next")])
    check(re.search(r"\x1b\[35mopen", esc) and last and
          "35" not in last[-1].split(";"),
          "the next line starts from the default colours", repr(last[-3:]))
    scr.type(":ns")


def long_lines(scr):
    """A line past 4 KiB is kept as its head, a marker and its tail, and
    its colours are drawn to the tail's last byte (the drawing's arrays
    hold UI_LINE_MAX bytes: a cut line never outgrows them)."""
    scr.type(r"print('\x1b[31m' + 'r' * 9000 + 'REDEND\x1b[0m')")
    check(scr.wait(r"REDEND"), "a red line of 9 KB: its tail shows",
          scr.text())
    tail = line_of(scr.text(escapes=True), "REDEND")
    check(re.search(r"31m" + ANY + "r*REDEND", tail),
          "red to its tail's end", repr(tail))
    scr.type("s = '" + "c" * 9000 + "CODEEND'; len(s)")
    check(scr.wait(r"Out\[\d+\]: 9007"), "a code line of 9 KB runs",
          scr.text())
    check(scr.wait(r"CODEEND'; len\(s\)"), "its tail shows",
          scr.text())
    tail = line_of(scr.text(escapes=True), "CODEEND")
    check(re.search(r"33m" + ANY + "c*CODEEND'", tail) and
          re.search(r"36m" + ANY + "len", tail),
          "its tail in syntax colour: the string's, then the builtin",
          repr(tail))


def syntax(scr):
    scr.type("n = len('s') + 1  # note")
    esc = scr.text(escapes=True)
    check(scr.wait(r"│> n = len\('s'\) \+ 1  # note"), "the code is shown",
          scr.text())
    esc = scr.text(escapes=True)
    code = line_of(esc, "# note")
    check(re.search(r"36m" + ANY + "len", code) and
          re.search(r"33m" + ANY + "'s'", code) and
          re.search(r"32m" + ANY + "1", code) and
          re.search(r"\x1b\[2m" + ANY + "# note", code),
          "builtin, string, number and comment each in their colour",
          repr(code))
    scr.type('s = """one')
    scr.type("def not_kw")
    scr.type('two"""')
    check(scr.wait(r"│> def not_kw"), "a three-line cell ran", scr.text())
    code = line_of(scr.text(escapes=True), "def not_kw")
    check(re.search(r"33m" + ANY + "def not_kw", code) and
          "35m" not in code,
          "a triple-quoted string goes on across the cell's lines",
          repr(code))
    scr.keys("-l", "for k in range(3):  # typed")
    check(scr.wait(r"^>>> for k in range"), "typed, not entered",
          scr.text())
    inp = line_of(scr.text(escapes=True), "# typed")
    check(re.search(r"35m" + ANY + "for", inp) and
          re.search(r"36m" + ANY + "range", inp),
          "the input line is coloured as Python", repr(inp))
    scr.keys("C-c")
    scr.keys("F3")
    check(scr.wait(r"def not_kw"), "F3 lists the cells", scr.text())
    for _ in range(8):              # up the list to the "# note" cell
        scr.keys("Enter")
        scr.wait(r"^ *code:$")
        if scr.wait(r"^ *n = len\('s'\) \+ 1  # note$", timeout=1):
            break
        scr.keys("Escape", "Up")
    check(scr.wait(r"^ *code:$") and
          scr.wait(r"^ *n = len\('s'\) \+ 1  # note$"),
          "Enter shows the cell whole", scr.text())
    code = ""
    for ln in scr.text(escapes=True).split("\n"):
        if "# note" in ln:
            code = ln
    check(re.search(r"36m" + ANY + "len", code) and
          re.search(r"33m" + ANY + "'s'", code) and
          re.search(r"\x1b\[2m" + ANY + "# note", code),
          "its code is in syntax colour there too", repr(code))
    scr.keys("Escape", "Escape")


def plain(scr, how):
    scr.type(SGR)
    check(scr.wait(r"│  red plain orange blue \S\[2Jx"),
          "%s: the text shows plain" % how, scr.text())
    scr.type("n = len('s')")
    check(scr.wait(r"│> n = len"), "%s: code shows" % how, scr.text())
    esc = scr.text(escapes=True)
    out = line_of(esc, " plain ")
    bad = re.findall(r"\x1b\[[0-9;]*(?:3[0-8]|38;5;\d+)m", esc)
    shown = line_of(scr.text(), " plain ")
    check(not bad and shown.startswith("  red plain orange blue "),
          "%s: no colour at all, no residue of a sequence" % how,
          repr(bad) + "\n" + repr(out))


scr = Screen(coil_cmd(), 100, 30)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    sgr(scr)
    long_lines(scr)
    syntax(scr)
finally:
    scr.close()
for how, env, args in (("NO_COLOR", {"NO_COLOR": "1"}, ()),
                       ("--no-color", None, ("--no-color",))):
    scr = Screen(coil_cmd(*args), 100, 30, env=env)
    try:
        check(scr.wait(r"^>>> ?$"), "%s: the UI is up" % how, scr.text())
        plain(scr, how)
    finally:
        scr.close()
done()
