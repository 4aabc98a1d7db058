#!/usr/bin/env python3
"""The record's keys in tmux (F5): / searches the output pane and n N
go on, [ ] go from cell to cell, o opens a field whole in the pager,
which stops at its ends; a long result is capped with a marker and its
last line; a 1 MB line shows its head, a marker saying how much it left
out, and its tail, and the pager shows it whole; F1 lists q once an
area; / still filters the namespace when that pane has focus."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")


def picked(scr):
    """The output pane's row drawn reversed (the picked line)."""
    for ln in scr.text(escapes=True).split("\n")[1:]:
        right = ln.split("\u2502", 1)[-1]
        if "\u2502" in ln and re.search(
                r"\x1b\[(?:[0-9;]*;)?7(?:;[0-9;]*)?m", right) and not re.match(
                r"^(\x1b\[[0-9;]*m)* (result|output)", right):
            return re.sub(r"\x1b\[[0-9;]*m", "", ln).split("\u2502", 1)[1]
    return ""


def wait_picked(scr, text, timeout=15):
    """Wait until the picked line holds text (a regex)."""
    end = time.time() + timeout
    while time.time() < end:
        if re.search(text, picked(scr)):
            return True
        time.sleep(0.1)
    return False


scr = Screen(coil_cmd(), 100, 30)
try:
    check(scr.wait(r"F1 help"), "the UI starts", scr.text())
    scr.type("needle = 'alpha'")
    scr.type("print('first needle here')")
    scr.type("type('R', (), {'__repr__': lambda s: '\\n'.join(str(i) "
             "for i in range(100))})()")
    check(scr.wait(r"\u2026 81 more lines \(F5, o shows them whole\)") and
          scr.wait(r"^│?\s*99\s*$|│\s+99\s*$"),
          "a 100-line result: its head, a marker, and its last line",
          scr.text())
    check(scr.wait(r"\u2026 \d+ more lines \(F5, o opens it whole\)"),
          "the result pane marks its cut too", scr.text())
    scr.type("print('x' * 1000000 + 'THE END')")
    check(scr.wait(r"THE END"), "a 1 MB line: its tail shows",
          scr.text())
    saved = os.path.join(scr.dir, "pane.txt")
    scr.type(":save " + saved)
    check(scr.wait(r"saved \d+ lines"), ":save writes the pane",
          scr.text())
    with open(saved, encoding="utf-8") as f:
        long = [ln for ln in f if ln.startswith("  xxx")]
    check(len(long) == 1 and re.search(
        r"^  x{3000,} \u2026\[9\d\d\.\d KiB left out: F5, o shows it "
        r"whole\]\u2026 x{900,}THE END$", long[0]),
        "the line keeps its head, a marker saying how much it left out, "
        "and its tail", long[0][:80] + " ... " + long[0][-80:]
        if long else long)
    scr.type("print('second needle here')")
    check(scr.wait(r"second needle here"), "one more cell", scr.text())

    scr.keys("F5")
    check(scr.wait(r"output \(F5: record\)"), "F5 focuses the record",
          scr.text())
    scr.keys("/")
    scr.tmux("send-keys", "-l", "needle")
    check(scr.wait(r"/needle"), "the search is typed where it shows",
          scr.text())
    scr.keys("Enter")
    check(scr.wait(r"/needle: line \d+ of \d+"),
          "Enter finds the nearest match above", scr.text())
    check(wait_picked(scr, "second needle here"), "and picks it",
          picked(scr))
    scr.keys("n")
    check(wait_picked(scr, re.escape("print('second needle here')")),
          "n goes on upward: the cell's code", picked(scr))
    scr.keys("n")
    check(wait_picked(scr, "first needle here"),
          "n again: the cell before", picked(scr))
    scr.keys("N")
    check(wait_picked(scr, re.escape("print('second needle here')")),
          "N goes back down", picked(scr))
    scr.keys("[")
    check(wait_picked(scr, r"\[5\] person"),
          "[ goes to the header of the cell", picked(scr))
    scr.keys("[")
    check(wait_picked(scr, r"\[4\] person"),
          "[ again: the cell above", picked(scr))
    scr.keys("]")
    check(wait_picked(scr, r"\[5\] person"),
          "] goes to the header of the next", picked(scr))
    # to the 1 MB line: its output, opened whole
    scr.keys("/")
    scr.tmux("send-keys", "-l", "xTHE END")
    scr.keys("Enter")
    check(wait_picked(scr, "left out"),
          "the long line found", picked(scr))
    scr.keys("o")
    check(scr.wait(r"cell 4: output, whole") and
          scr.wait(r"top: Down/PgDn scroll"),
          "o opens the cell's output whole in the pager", scr.text())
    for _ in range(300):
        scr.keys("NPage")
    check(scr.wait(r"end: Up/PgUp scroll") and scr.wait(r"THE END"),
          "the pager stops at its end, the line's tail on its last row",
          scr.text())
    body = [ln for ln in scr.text().split("\n")[1:20]]
    check(sum(1 for ln in body if ln.strip()) >= 15,
          "no blank page past the end", scr.text())
    scr.keys("PPage")
    check(scr.wait(r"Up/Down/PgUp/PgDn scroll"), "PgUp scrolls back",
          scr.text())
    scr.keys("Escape")
    check(scr.wait(r"output \(F5: record\)"),
          "Esc closes the pager, back in the record", scr.text())
    scr.keys("Escape")
    check(scr.wait(r"│ output  \(scrolled: PgDn returns, F5 searches\)"),
          "Esc leaves the record, the view where it was", scr.text())

    scr.keys("F1")
    check(scr.wait(r"keys and commands"), "F1's help", scr.text())
    for _ in range(200):
        scr.keys("NPage")
    scr.wait(r"end: Up/PgUp")
    for _ in range(200):
        scr.keys("PPage")
    scr.wait(r"top: Down/PgDn")
    scr.keys("q")
    scr.keys("F2")
    scr.keys("/")
    scr.tmux("send-keys", "-l", "need")
    check(scr.wait(r"namespace.*/need_"), "/ filters the namespace in F2",
          scr.text())
    scr.keys("Escape", "Escape")
finally:
    scr.close()

# the help's text, whole: q once an area
scr = Screen(coil_cmd(), 100, 200)
try:
    check(scr.wait(r"F1 help"), "a tall UI starts", scr.text())
    scr.keys("F1")
    check(scr.wait(r"record \(F5\)"), "F1 lists the record's keys",
          scr.text())
    areas, cur = {}, None
    for ln in scr.text().split("\n"):
        if re.match(r"^ [a-z]", ln):
            cur = ln.split()[0]
        m = re.match(r"^   (\S+)", ln)
        if m and cur is not None:
            areas.setdefault(cur, []).append(m.group(1))
    check(areas and all(v.count("q") <= 1 for v in areas.values()),
          "no area lists q twice", areas)
    check("/" in areas.get("record", []) and "o" in areas.get("record", []),
          "the record's / and o are in F1", areas)
finally:
    scr.close()
done()
