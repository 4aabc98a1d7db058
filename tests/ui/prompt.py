#!/usr/bin/env python3
"""The curses UI's prompt, as IPython's: Tab completes without adding a
space (ar -> arr, then .sh -> arr.shape), several matches show in an
aligned menu that counts what does not fit; Ctrl-R's search prompt
shows in the input, and after Up then Ctrl-C the next search starts at
the newest entry; the line after a colon is indented 4 more, after
return 4 fewer; lines typed while a cell runs show as queued, Ctrl-C
discards them (saying how many), a :quit typed then is refused, never
run later; the running cell's prompt is no "..."."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")


def completion(scr):
    scr.type("import types; arr = types.SimpleNamespace(shape=(2, 3)); "
             "arrow = 1")
    check(scr.wait(r"^arrow +int"), "names to complete", scr.text())
    scr.keys("-l", "ar")
    scr.keys("Tab")
    check(scr.wait(r"^>>> arr$"), "ar Tab: arr, no space after it",
          scr.text())
    scr.keys("-l", ".sh")
    scr.keys("Tab")
    check(scr.wait(r"^>>> arr\.shape$"), ".sh Tab: arr.shape", scr.text())
    scr.keys("Enter")
    check(scr.wait(r"│ \(2, 3\)"), "and it runs", scr.text())
    scr.keys("-l", "whi")
    scr.keys("Tab")
    check(scr.wait(r"^>>> while$"), "a keyword: no space either",
          scr.text())
    scr.keys("C-c")


def menu(scr):
    names = ["m_a", "m_bbbbbbbbbbbb", "m_cc", "m_ddddd", "m_e", "m_ffffff",
             "m_g", "m_hhhhhhhhh", "m_i"]
    scr.type("; ".join("%s = 0" % n for n in names))
    check(scr.wait(r"^m_i +int"), "nine names", scr.text())
    scr.keys("-l", "m_")
    scr.keys("Tab")
    check(scr.wait(r"completions: 9"), "Tab lists the nine", scr.text())
    rows = [ln.split("\u2502", 1)[1] for ln in scr.text().split("\n")
            if "\u2502" in ln]
    top = [i for i, r in enumerate(rows) if "completions: 9" in r][0]
    body = [r for r in rows[top + 1:] if r.strip()]
    starts = set()
    seen = []
    for r in body:
        for m in re.finditer(r"\S+", r):
            starts.add(m.start())
            seen.append(m.group())
    width = max(map(len, names)) + 2
    check(sorted(seen) == names and
          all((s - min(starts)) % width == 0 for s in starts) and
          len(starts) > 1,
          "in columns as wide as the longest name, each name whole",
          "\n".join(body))
    scr.keys("Escape", "C-u")
    scr.type("for i in range(300): globals()['many_%03d' % i] = i")
    scr.keys("Enter")
    check(scr.wait(r"^i +int +299"), "300 names", scr.text())
    scr.keys("-l", "many_")
    scr.keys("Tab")
    check(scr.wait(r"completions: 300"), "Tab lists 300", scr.text())
    text = scr.text()
    m = re.search(r"\u2026 (\d+) more", text)
    right = "\n".join(ln.split("\u2502", 1)[1] for ln in text.split("\n")
                      if "\u2502" in ln)
    listed = len(re.findall(r"many_\d{3}", right.split("completions")[1]))
    check(m and listed + int(m.group(1)) == 300,
          "too many: those left out are counted", text)
    scr.keys("Escape", "C-u")


def search(scr):
    scr.type("alpha = 1")
    scr.type("beta = 2")
    check(scr.wait(r"^beta +int"), "two cells in the history", scr.text())
    scr.keys("C-r")
    scr.keys("-l", "al")
    check(scr.wait(r"^\(reverse-i-search\)`al': alpha = 1"),
          "Ctrl-R shows its search prompt in the input", scr.text())
    scr.keys("C-c")
    check(scr.wait(r"^>>> ?$"), "Ctrl-C ends the search", scr.text())
    scr.keys("Up", "Up")
    check(scr.wait(r"^>>> alpha = 1$"), "Up Up: the older entry",
          scr.text())
    scr.keys("C-c")
    check(scr.wait(r"^>>> ?$"), "Ctrl-C clears it", scr.text())
    scr.keys("C-r")
    scr.keys("-l", "bet")
    check(scr.wait(r"^\(reverse-i-search\)`bet': beta = 2"),
          "the next search starts at the newest entry again", scr.text())
    scr.keys("C-c")


def indent(scr):
    scr.type("def f(x):")
    scr.type("if x:  # one")
    scr.type("return 1")
    scr.type("return 2")
    check(scr.wait(r"^\.\.\.     if x:  # one$") and
          scr.wait(r"^\.\.\.         return 1$") and
          scr.wait(r"^\.\.\.     return 2$"),
          "a colon indents 4 more, return 4 fewer", scr.text())
    scr.keys("Enter")
    scr.type("f(0), f(1)")
    check(scr.wait(r"│ \(2, 1\)"), "and the function is what was meant",
          scr.text())


def type_ahead(scr):
    scr.type("import time; time.sleep(60)")
    check(scr.wait(r"running \d"), "a long cell runs", scr.text())
    scr.type("ahead1 = 1")
    scr.type("ahead2 = 2")
    scr.type(":quit")
    check(scr.wait(r"^queued: ahead1 = 1$") and
          scr.wait(r"^queued: ahead2 = 2$"),
          "lines typed meanwhile show as queued", scr.text())
    check(scr.wait(r'":quit" was not run: wait for the cell or press '
                   r'Ctrl-C'), "a :quit typed meanwhile is refused",
          scr.text())
    text = scr.text()
    check(re.search(r"^\(running\)", text, re.M) and
          not re.search(r"^\.\.\.", text, re.M),
          "the prompt says the cell runs, not ...", text)
    scr.keys("C-c")
    check(scr.wait(r"2 typed-ahead lines discarded"),
          "Ctrl-C discards them, and says how many", scr.text())
    check(scr.wait(r"result of cell \d+ \(person\): interrupted"),
          "the cell is interrupted", scr.text())
    scr.type("'ahead1' in globals(), 'ahead2' in globals()")
    check(scr.wait(r"│ \(False, False\)"), "neither queued line ran, and "
          "the UI did not quit", scr.text())


hist = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_WORKDIR")),
                    "history")
scr = Screen(coil_cmd("--history", hist), 100, 30)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    completion(scr)
    menu(scr)
    search(scr)
    indent(scr)
    type_ahead(scr)
    check(not scr.wait(r"^EXITED", timeout=0.5), "the UI is still up",
          scr.text())
finally:
    scr.close()
done()
