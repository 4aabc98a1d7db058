#!/usr/bin/env python3
"""The curses UI in tmux, continued: a cell's input() asks in the input
area with the cell's prompt and gets the line typed (or one typed ahead
while the cell ran), Ctrl-D is the end of input and Ctrl-C interrupts
the cell while it waits, help() opens in a window; the namespace pane
sums a value up (shape and dtype of arrays and frames, the signature of
functions and classes, the value of scalars and strings, len of
containers); the mouse wheel scrolls the output pane, in the encoding
the UI asked the terminal for (X10, or SGR under an xterm terminfo).
Ctrl-D at a ... line drops the half-typed cell, not the session; a
multi-line cell is one history entry, shared with --plain."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")


def reads(scr):
    scr.type("name = input('Name? ')")
    check(scr.wait(r"^Name\? ?$") and scr.wait(r"cell 1 reads a line"),
          "input() asks in the input area with the cell's prompt",
          scr.text())
    scr.type("Ada")
    check(scr.wait(r"^name +str +'Ada'") and scr.wait(r"│  Name\? Ada$"),
          "the typed line is input()'s, echoed after the prompt",
          scr.text())
    scr.type("import time; time.sleep(1.5); early = input('e? ')")
    scr.type("typed ahead")
    check(scr.wait(r"^early +str +'typed ahead'"),
          "a line typed while the cell ran answers its input()",
          scr.text())
    scr.type("x = input()")
    check(scr.wait(r"cell 3 reads a line"), "input() without a prompt",
          scr.text())
    scr.keys("C-d")
    check(scr.wait(r"result of cell 3 \(person\): error") and
          scr.wait(r"EOFError"), "Ctrl-D: input() raises EOFError",
          scr.text())
    scr.type("y = input('again: ')")
    check(scr.wait(r"^again: ?$"), "another input()", scr.text())
    scr.keys("-l", "half a line")
    scr.keys("C-c")
    check(scr.wait(r"result of cell 4 \(person\): interrupted") and
          scr.wait(r"KeyboardInterrupt") and scr.wait(r"^>>> ?$"),
          "Ctrl-C interrupts the cell waiting for its line, and the "
          "input is the UI's again", scr.text())
    scr.type("6 * 7")
    check(scr.wait(r"result of cell 5 \(person\): ok") and
          scr.wait(r"│ 42 *$"), "cells run as before", scr.text())
    scr.type("help(len)")
    check(scr.wait(r"Help on built-in function len") and
          scr.wait(r"^ len\(obj, /\)"),
          "help() opens in a window, pydoc's bold struck out", scr.text())
    scr.keys("Escape")
    check(scr.wait_gone(r"Help on built-in"), "Esc closes it", scr.text())


def summary(scr):
    scr.type("import numpy as np, pandas as pd")
    scr.type("arr = np.zeros((2, 3)); "
             "df = pd.DataFrame({'i': [1], 's': ['x']}); "
             "ratio = 0.5; nums = [1, 2]")
    scr.type("def add(a, b=2): return a + b")
    scr.keys("Enter")
    check(scr.wait(r"^arr +ndarray +\(2, 3\) float64 *│") and
          scr.wait(r"^df +DataFrame +\(1, 2\) int64, object *│") and
          scr.wait(r"^add +function +\(a, b=2\) *│") and
          scr.wait(r"^ratio +float +0\.5 *│") and
          scr.wait(r"^nums +list +len 2 *│"),
          "the namespace pane: shape and dtype, signature, value, len",
          scr.text())


def wheel_seq(scr, up):
    """A wheel notch at the output pane, as a terminal would send it in
    the mode the UI asked for (tmux knows which)."""
    sgr = scr.tmux("display", "-p", "#{mouse_sgr_flag}").strip() == "1"
    b = 64 if up else 65
    if sgr:
        return "\033[<%d;50;10M" % b
    return "\033[M" + chr(32 + b) + chr(32 + 50) + chr(32 + 10)


def wheel(scr, what):
    check(scr.tmux("display", "-p", "#{mouse_standard_flag}").strip() ==
          "1", "%s: the UI asks the terminal for mouse buttons" % what)
    scr.type("for i in range(200): print('row', i)")
    scr.keys("Enter")
    check(scr.wait(r"row 199$"), "%s: 200 rows printed" % what, scr.text())
    scr.keys("-l", wheel_seq(scr, True))
    scr.keys("-l", wheel_seq(scr, True))
    check(scr.wait(r"scrolled") and scr.wait_gone(r"row 199$") and
          scr.wait(r"row 19[0-3]$"),
          "%s: the wheel scrolls the output up" % what, scr.text())
    scr.keys("-l", wheel_seq(scr, False))
    scr.keys("-l", wheel_seq(scr, False))
    check(scr.wait(r"row 199$") and scr.wait_gone(r"scrolled"),
          "%s: and back down" % what, scr.text())
    check(scr.wait(r"^>>> ?$"), "%s: nothing of it leaks into the input"
          % what, scr.text())


scr = Screen(coil_cmd("--history", "''"), 120, 40)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    reads(scr)
    summary(scr)
    wheel(scr, "TERM=screen")
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves", scr.text())
finally:
    scr.close()

# Ctrl-D at ... drops the cell; a multi-line cell is one history entry,
# recalled whole here and in --plain
hist = os.path.join(tempfile.mkdtemp(prefix="coil-hist-",
                                     dir=os.environ.get("TEST_WORKDIR")),
                    "history")
scr = Screen(coil_cmd("--history", hist), 80, 24)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    scr.type("kept = 5")
    check(scr.wait(r"cell 1 ok"), "a cell runs", scr.text())
    scr.type("for i in range(2):")
    check(scr.wait(r"^\.\.\. ?$"), "a block waits at ...", scr.text())
    scr.keys("C-d")
    check(scr.wait(r"unfinished cell was dropped") and
          scr.wait(r"^>>> ?$"), "Ctrl-D at ... drops the cell, and the UI "
          "stays", scr.text())
    scr.type("def twice(x):")
    scr.type("return 2 * x")  # auto-indented
    scr.type("")
    scr.type("twice(kept)")
    check(scr.wait(r"│ 10$"), "the session lives on: its names are there",
          scr.text())
    scr.keys("Up", "Up")
    check(scr.wait(r"^>>> def twice\(x\):") and
          scr.wait(r"return 2 \* x"), "Up recalls the multi-line cell "
          "whole", scr.text())
    scr.keys("C-c")
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D at >>> leaves", scr.text())
finally:
    scr.close()
plain = Screen(coil_cmd("--plain", "--history", hist), 80, 24)
try:
    check(plain.wait(r"^>>> ?$"), "--plain on the same history",
          plain.text())
    plain.keys("Up", "Up")
    check(plain.wait(r"^>>> def twice\(x\):") and
          plain.wait(r"return 2 \* x"), "--plain recalls the UI's "
          "multi-line cell whole", plain.text())
    plain.keys("C-c", "C-d")
finally:
    plain.close()

# an xterm terminfo: ncurses asks for SGR mouse reports
scr = Screen("TERM=xterm-256color " + coil_cmd("--history", "''"), 80, 24)
try:
    check(scr.wait(r"^>>> ?$"), "the UI under TERM=xterm-256color",
          scr.text())
    wheel(scr, "TERM=xterm-256color")
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves", scr.text())
finally:
    scr.close()
done()
