#!/usr/bin/env python3
"""The curses UI's keys in tmux: a multi-line cell, tab completion shown
as a list, Ctrl-C during `while True: pass` and during a flood (keys
still echo while it floods), F1's help from the key table, F2 and Enter
inspecting a name, F3's cell list (a cell in full, its code loaded
again), :-commands, and SIGTERM leaving the terminal as it was."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")


def multiline(scr):
    scr.type("def add(a, b=2):")
    check(scr.wait(r"^\.\.\. ?$"), "an open block asks for more",
          scr.text())
    scr.type('"Add two numbers."')  # auto-indented
    scr.type("return a + b")
    check(scr.wait(r"^>>> def add\(a, b=2\):$") and
          scr.wait(r"^\.\.\.     return a \+ b$"),
          "the input area grows with the cell's lines", scr.text())
    scr.keys("Enter")
    scr.type("add(40)")
    check(scr.wait(r"result of cell 3 \(person\): ok") and
          scr.wait(r"^ *│ 42 *$"), "the block ran; add(40) is 42",
          scr.text())


def completion(scr):
    scr.type("import collections")
    # the UI completes nothing while a cell runs: the import's answer
    # first (a checkpoint may hold it up)
    scr.wait(r"result of cell 4 \(person\)")
    scr.keys("collections.Ord", "Tab")
    check(scr.wait(r"^>>> collections\.OrderedDict$"),
          "Tab completes a unique name", scr.text())
    scr.keys("C-u", "collections.de", "Tab")
    check(scr.wait(r"completions") and scr.wait(r"collections\.defaultdict")
          and scr.wait(r"collections\.deque"),
          "an ambiguous Tab lists the choices", scr.text())
    scr.keys("C-u")
    check(scr.wait_gone(r"completions"), "the next key closes the list",
          scr.text())
    # where the worker's match starts before or after readline's word
    scr.keys("%who_", "Tab")
    check(scr.wait(r"^>>> %who_ls$"), "Tab completes a magic's name",
          scr.text())
    scr.keys("C-u", "import collections.ab", "Tab")
    check(scr.wait(r"^>>> import collections\.abc$"),
          "Tab completes a submodule after its package", scr.text())
    scr.keys("C-u")


def interrupts(scr):
    scr.type("while True: pass")
    scr.keys("Enter")
    check(scr.wait(r"running \d+\.\ds"), "the status line ticks while a "
          "cell runs", scr.text())
    scr.keys("C-c")
    check(scr.wait(r"interrupted") and scr.wait(r"KeyboardInterrupt"),
          "Ctrl-C interrupts while True: pass", scr.text())
    scr.type("while True: print('flood' * 20)")
    scr.keys("Enter")
    check(scr.wait(r"floodflood"), "a flood streams in", scr.text())
    t0 = time.time()
    scr.keys("-l", "typed")
    echoed = scr.wait(r"^\(running\) typed$", timeout=5)
    took = time.time() - t0
    check(echoed and took < 2, "keys echo during the flood (%.2fs)" % took,
          scr.text())
    scr.keys("C-c")
    check(scr.wait(r"cell \d+ interrupted", timeout=20),
          "Ctrl-C stops the flood", scr.text())
    scr.keys("C-u")


def panes(scr):
    scr.keys("F1")
    check(scr.wait(r"keys and commands") and scr.wait(r"F2 +focus the "
          "namespace") and scr.wait(r"Ctrl-C +interrupt"),
          "F1 lists the keys from the binding table", scr.text())
    scr.keys("Escape")
    check(scr.wait_gone(r"keys and commands"), "Esc closes the help",
          scr.text())
    scr.keys("F2")
    scr.keys("Enter")
    check(scr.wait(r"^ inspect: add") and scr.wait(r"signature: add\(a, b=2\)") and
          scr.wait(r"Add two numbers\."),
          "F2, Enter: the name's type, signature and doc", scr.text())
    scr.keys("Escape", "Escape")
    scr.keys("F3")
    check(scr.wait(r"cells: Enter shows one") and
          scr.wait(r"\[2\] person ok .*def add"), "F3 lists the cells",
          scr.text())
    scr.keys("Up", "Up", "Up")
    scr.keys("Enter")
    check(scr.wait(r"cell 3, by the person: ok") and
          scr.wait(r"^ add\(40\)$"), "Enter shows a cell in full",
          scr.text())
    scr.keys("Escape", "e")
    check(scr.wait(r"^>>> add\(40\)$"), "e loads its code into the input",
          scr.text())
    scr.keys("C-u")
    scr.type(":ns")
    check(scr.wait_gone(r"^ namespace"), ":ns hides the namespace pane",
          scr.text())
    scr.type(":ns")
    check(scr.wait(r"^ namespace"), "and shows it again", scr.text())
    scr.type(":nonsense")
    check(scr.wait(r"unknown command ':nonsense'"),
          "an unknown command is named", scr.text())


scr = Screen(coil_cmd(), 80, 24)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    scr.type("import sys")
    multiline(scr)
    completion(scr)
    interrupts(scr)
    panes(scr)
    # the shell's child is coil: end it as a session manager would
    check(scr.signal_coil(signal.SIGTERM), "coil runs under the pane")
    check(scr.wait(r"^EXITED 143"), "SIGTERM ends the UI, status 143",
          scr.text())
    check(scr.stty("before") == scr.stty("after") and scr.stty("after"),
          "the terminal's modes are restored after SIGTERM",
          "%s\n%s" % (scr.stty("before"), scr.stty("after")))
finally:
    scr.close()
done()
