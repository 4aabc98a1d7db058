#!/usr/bin/env python3
"""The curses UI's panes on a real terminal (tmux): the namespace, the
output with each cell's header and stderr marked, the result, an error
with its traceback, at 80x24 and 120x40 (compared with the expected
screens beside this file, times and addresses masked), the too-small
message at 40x12, a resize back, and the namespace still there after a
cell prints 300 lines."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, check_screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

scr = Screen(coil_cmd(), 80, 24)
try:
    check(scr.wait(r"^>>> ?$") and scr.wait(r"standard|none|strict"),
          "coil on a terminal opens the UI", scr.text())
    scr.type("x = 6 * 7; words = ['a', 'b', 'c']")
    scr.type("print('to stdout'); import sys; "
             "print('to stderr', file=sys.stderr); x")
    check(scr.wait(r"result of cell 2 \(person\): ok"), "two cells answered",
          scr.text())
    check_screen(scr, "panes-80x24", "80x24: namespace, output with "
                 "headers and the stderr marker, result, status")
    scr.type("1/0")
    check(scr.wait(r"result of cell 3 \(person\): error") and
          scr.wait(r"ZeroDivisionError: division by zero"),
          "an error: its line in the output, its traceback in the result",
          scr.text())
    check_screen(scr, "error-80x24", "80x24: the error screen")
    scr.resize(120, 40)
    check(scr.wait(r"result of cell 3") and scr.wait(r"^words +list"),
          "resized to 120x40", scr.text())
    check_screen(scr, "error-120x40", "120x40: the same session, redrawn")
    scr.resize(40, 12)
    check(scr.wait(r"terminal too small \(40x12\)") and
          scr.wait(r"coil needs 60x16"),
          "40x12 says the terminal is too small", scr.text())
    scr.resize(80, 24)
    check(scr.wait(r"result of cell 3"), "and back to 80x24 draws again",
          scr.text())
    scr.type("for i in range(300): print('line', i)")
    scr.keys("Enter")
    check(scr.wait(r"line 299") and scr.wait(r"^words +list +len 3"),
          "the namespace pane stays after a cell prints 300 lines",
          scr.text())
    scr.keys("PPage")
    check(scr.wait(r"scrolled") and scr.wait_gone(r"line 299"),
          "PgUp scrolls the output back", scr.text())
    scr.keys("NPage")
    check(scr.wait(r"line 299"), "PgDn returns to the end", scr.text())
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves, status 0", scr.text())
    check(scr.stty("before") == scr.stty("after") and scr.stty("after"),
          "the terminal's modes are as they were",
          "%s\n%s" % (scr.stty("before"), scr.stty("after")))
finally:
    scr.close()
done()
