#!/usr/bin/env python3
"""coil --resume FILE on a terminal: the curses UI (tmux) opens on the
rebuilt session, its output pane says how faithful the rebuild is (a
cell that wrote a file, not run again, with why), the namespace pane
holds the state the transcript left, and a cell typed there goes on
with the transcript's numbers and is appended to FILE."""
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, check_exit, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

WORK = tempfile.mkdtemp(prefix="ui-resume-",
                        dir=os.environ.get("TEST_WORKDIR"))
T = os.path.join(WORK, "t.jsonl")
try:
    c = Coil("--record", T, cwd=WORK)
    c.run("x = 41")
    c.run("open('out.txt', 'w').write('hi')")
    c.run("x += 1")
    check_exit(c, "the session to resume is recorded")

    scr = Screen(coil_cmd("--resume", "t.jsonl"), 100, 30, cwd=WORK)
    try:
        check(scr.wait_joined(r"resumed from '.*t\.jsonl': 3 cells; 2 ran "
                              r"again as recorded") and
              scr.wait_joined(r"cell 2 not run again: it wrote "
                              r"'out\.txt'"),
              "the output pane says how faithful the rebuild is",
              scr.text())
        check(scr.wait(r"^x +int +42"), "the namespace pane holds the "
              "transcript's state", scr.text())
        scr.type("y = x * 2")
        check(scr.wait(r"^y +int +84") and scr.wait(r"\[4\] person"),
              "a cell typed goes on from cell 3, as cell 4", scr.text())
        scr.keys("C-d")
    finally:
        scr.close()
    with open(T) as f:
        rows = [json.loads(ln) for ln in f if ln.strip()]
    check(any("resumed" in r for r in rows) and
          any(r.get("event") == "response" and
              r["response"].get("cell") == 4 for r in rows),
          "the typed cell is appended to the transcript after the mark")
finally:
    shutil.rmtree(WORK, ignore_errors=True)
done()
