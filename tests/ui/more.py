#!/usr/bin/env python3
"""More of the curses UI in tmux: wide characters (CJK, emoji) never
push a pane out of line; NO_COLOR draws no colour and keeps the
markers; the namespace filter and delete; a rollback from the cell list
and a :snapshot; the history shared with the plain REPL; 30 MB of output held in a
bounded scrollback, and no CPU once quiet; the cell list's whole answers
bounded by --scrollback too; vi keys from an inputrc;
SIGHUP and a crash of coil itself (SIGSEGV) leave the terminal as it
was."""
import json
import os
import re
import signal
import sys
import time
import unicodedata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import ASAN, check, done, skip, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux, rss_kb  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

STATE = os.path.join(os.environ.get("TEST_WORKDIR") or "/tmp",
                     "ui-more-state")


def width(s):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in s)


def rule_at(line):
    """The column of the namespace pane's rule on a screen line."""
    col = 0
    for c in line:
        if c == "│":
            return col
        col += width(c)
    return None


def wide(scr):
    scr.type("print('漢字かな' * 12); print('🎉🐍' * 25); s = '漢字🎉'")
    check(scr.wait(r"漢字かな") and scr.wait(r"^s +str"),
          "wide characters printed", scr.text())
    lines = scr.text().splitlines()[:20]
    bad = [ln for ln in lines if width(ln) > 80 or rule_at(ln) != 26]
    check(not bad, "every row keeps the namespace rule at column 26 and "
          "fits 80 columns", "\n".join(bad))


def names(scr):
    scr.type("words = ['a']; width = 3; other = 1")
    check(scr.wait(r"^other"), "three more names", scr.text())
    scr.keys("F2", "/")
    scr.keys("-l", "wo")
    scr.keys("Enter")
    check(scr.wait(r"/wo") and scr.wait_gone(r"^other") and
          scr.wait(r"^words"), "/ filters the namespace pane", scr.text())
    scr.keys("/", "Escape")
    check(scr.wait(r"^other"), "Esc drops the filter", scr.text())
    scr.keys("Up", "Up", "Up", "Up", "Up", "Up")
    scr.keys("d")
    check(scr.wait(r"delete 'other' from the namespace\? \(y/n\)"),
          "d asks before deleting", scr.text())
    scr.keys("y")
    check(scr.wait_gone(r"^other "), "y deletes the name", scr.text())
    scr.keys("Escape")


def rollback(scr):
    # the idle policy checkpoints a quiet session: let cell 3 have one
    check(scr.wait(r"ckpt 3", timeout=30), "cell 3 checkpointed",
          scr.text())
    scr.type("late = 1")
    check(scr.wait(r"^late") and scr.wait(r"ckpt 4", timeout=30),
          "a fourth cell, checkpointed", scr.text())
    scr.keys("F3")
    check(scr.wait(r"\[4\] person ok .*late = 1"), "the cell list",
          scr.text())
    scr.keys("r")
    check(scr.wait(r"roll the session back to before cell 4\? \(y/n\)"),
          "r asks before rolling back", scr.text())
    scr.keys("y")
    check(scr.wait(r"the namespace is at cell 3") and
          scr.wait_gone(r"^late"), "the session is back before cell 4",
          scr.text())
    check(scr.wait(r"namespace, cell 3\b"), "the namespace pane says it "
          "is as of cell 3 again", scr.text())
    scr.keys("q")
    check(scr.wait_gone(r"\[4\] person ok"), "q leaves the cell list, as "
          "Esc does", scr.text())
    scr.type(":snapshot keep")
    check(scr.wait(r"snapshot keep"), ":snapshot pins the state",
          scr.text())


def nocolor():
    scr = Screen(coil_cmd("--history", os.path.join(STATE, "h2")), 80, 24,
                 env={"NO_COLOR": "1"})
    try:
        scr.type("import sys; print('out'); print('err', file=sys.stderr)")
        check(scr.wait(r"^ +│! err") and scr.wait(r"^ +│  out"),
              "NO_COLOR: stderr still marked '!'", scr.text())
        esc = scr.text(escapes=True)
        check(not re.search(r"\x1b\[[0-9;]*3[1-7]m|38;5;", esc),
              "NO_COLOR: no colour on screen", repr(esc[:400]))
        scr.signal_coil(signal.SIGHUP)
        check(scr.wait(r"^EXITED 129"), "SIGHUP ends the UI, status 129",
              scr.text())
        check(scr.stty("before") == scr.stty("after") and scr.stty("after"),
              "and the terminal is restored")
    finally:
        scr.close()


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def bounded():
    """30 MB of output with --scrollback 1000: the UI's memory stays
    bounded, and once quiet it uses no CPU."""
    scr = Screen(coil_cmd("--history", "''", "--scrollback", "1000"), 80,
                 24)
    try:
        check(scr.wait(r"^>>> ?$"), "a UI with --scrollback 1000",
              scr.text())
        pid = scr.coil_pid()
        scr.type("for i in range(300000): print('%06d' % i + 'x' * 94)")
        scr.keys("Enter")
        check(scr.wait(r"^ +│  299999x+", timeout=120),
              "30 MB of output shown to its end", scr.text())
        rss = rss_kb(pid)
        if ASAN:
            skip("the UI's memory (%s KiB)" % rss,
                 "a sanitizer build's memory figures mean nothing")
        else:
            check(rss is not None and rss < 80 * 1024,
                  "the UI's memory stays bounded (%s KiB)" % rss)
        scr.keys("PPage", "PPage", "PPage")
        check(scr.wait(r"scrolled"), "scrolling back works", scr.text())
        t0 = cpu_ticks(pid)
        time.sleep(2)
        used = cpu_ticks(pid) - t0
        check(used <= 5, "idle, the UI uses no CPU (%d ticks in 2 s)" % used)
    finally:
        scr.close()


def kept_answers():
    """--scrollback bounds the whole answers the cell list keeps too
    (1 KiB a line): with --scrollback 100, three answers of 40 KB are
    more than 100 KiB, and the oldest keeps its status and times only;
    the newer two stay whole."""
    scr = Screen(coil_cmd("--history", "''", "--scrollback", "100"), 80,
                 24)
    try:
        check(scr.wait(r"^>>> ?$"), "a UI with --scrollback 100", scr.text())
        for n, ch in enumerate("ABC", 1):
            scr.type("print('%s' * 40000)" % ch)
            check(scr.wait(r"cell %d ok" % n, timeout=30),
                  "cell %d printed 40 KB" % n, scr.text())
        scr.keys("F3")
        check(scr.wait(r"\[3\] person ok"), "the cell list", scr.text())
        scr.keys("Enter")
        check(scr.wait(r"CCCCCCCC") and not scr.wait(
              r"no longer kept", timeout=1),
              "the newest cell's answer is whole", scr.text())
        scr.keys("Escape", "Up", "Enter")
        check(scr.wait(r"BBBBBBBB") and not scr.wait(
              r"no longer kept", timeout=1),
              "so is the one before (80 KB kept in all)", scr.text())
        scr.keys("Escape", "Up", "Enter")
        check(scr.wait(r"cell 1, by the person: ok") and
              scr.wait(r"no longer kept") and
              not scr.wait(r"AAAAAAAA", timeout=1),
              "the oldest keeps its status and says its output is gone",
              scr.text())
        scr.keys("Escape", "Escape")
        scr.keys("C-d")
        check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves", scr.text())
    finally:
        scr.close()


def vi():
    """~/.inputrc's editing mode reaches readline in the input window."""
    rc = os.path.join(STATE, "inputrc")
    with open(rc, "w") as f:
        f.write("set editing-mode vi\n")
    scr = Screen(coil_cmd("--history", "''"), 80, 24, env={"INPUTRC": rc})
    try:
        check(scr.wait(r"^>>> ?$"), "a UI in vi mode", scr.text())
        scr.keys("-l", "zab = 5")
        scr.keys("Escape", "0", "x", "A")
        scr.keys("-l", "; ab")
        scr.keys("Enter")
        check(scr.wait(r"^ab +int +5"), "Esc 0 x A: vi keys edited the line",
              scr.text())
    finally:
        scr.close()


def crash():
    scr = Screen(coil_cmd("--history", "''"), 80, 24)
    try:
        check(scr.wait(r"^>>> ?$"), "a UI to crash", scr.text())
        scr.signal_coil(signal.SIGSEGV)
        check(scr.wait(r"^EXITED 139"), "a crash (SIGSEGV) ends it",
              scr.text())
        check(scr.stty("before") == scr.stty("after") and scr.stty("after"),
              "and the terminal is restored")
    finally:
        scr.close()


os.makedirs(STATE, exist_ok=True)
hist = os.path.join(STATE, "history")
rec = os.path.join(STATE, "ui.jsonl")
scr = Screen(coil_cmd("--history", hist, "--record", rec), 80, 24)
try:
    check(scr.wait(r"^>>> ?$"), "the UI is up", scr.text())
    wide(scr)
    names(scr)
    rollback(scr)
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves", scr.text())
finally:
    scr.close()
with open(hist, encoding="utf-8") as f:
    check("late = 1" in f.read(), "the UI's cells are in the history file")
with open(rec, encoding="utf-8") as f:
    head = json.loads(f.readline())
check(head.get("mode") == "ui", "its transcript's header says the UI ran "
      "it", head)
plain = Screen(coil_cmd("--plain", "--history", hist), 80, 24)
try:
    check(plain.wait(r"^>>> ?$"), "the plain REPL on the same history",
          plain.text())
    plain.keys("C-r")
    plain.keys("-l", "late")
    check(plain.wait(r"late = 1"), "--plain's Ctrl-R finds the UI's cell",
          plain.text())
    plain.keys("C-c", "C-d")
finally:
    plain.close()
nocolor()
bounded()
kept_answers()
vi()
crash()
done()
