#!/usr/bin/env python3
"""coil --replay FILE on a terminal steps through the curses UI (tmux):
n runs the next recorded cell, a to the end, g N goes back by the
checkpoint of cell N (or, with no checkpoints, runs again from the
start), a cell whose outcome differs is shown old and new side by side
(one above the other on a narrow terminal, the same comparison as
--check), the status line says "replay: cell i of n", F1 lists the
replay's keys; :save FILE.ipynb writes the session as a notebook; a big
transcript's cells are not held in memory.  Not on a terminal, the
replay prints lines as before."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (ASAN, COIL, Coil, check, check_exit, done,  # noqa
                      skip, skip_all)
from uilib import Screen, coil_cmd, have_tmux, rss_kb  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

WORK = tempfile.mkdtemp(prefix="ui-replay-",
                        dir=os.environ.get("TEST_WORKDIR"))
T = os.path.join(WORK, "t.jsonl")
with open(os.path.join(WORK, "data.txt"), "w") as f:
    f.write("one\n")
c = Coil("--record", T, cwd=WORK)
c.run("x = 1")
c.run("print(open('data.txt').read().strip())")
c.run("x += 1\nx")
c.run("1/0")
check_exit(c, "the session to replay is recorded")
# what the second cell reads is not what it read then
with open(os.path.join(WORK, "data.txt"), "w") as f:
    f.write("two\n")


def steps(scr):
    check(scr.wait(r"^ replay: cell 0 of 4 \|") and
          scr.wait_joined(r"\(transcript\): 4 cells"),
          "the UI opens on a fresh session, at cell 0 of 4", scr.text())
    scr.keys("n")
    check(scr.wait(r"^ replay: cell 1 of 4 \|") and
          scr.wait(r"\[1\] replay") and scr.wait(r"^x +int +1"),
          "n runs the first cell, origin replay", scr.text())
    # a cheap cell is kept at a pause (--checkpoint-policy idle): the
    # status line says when, and g 1 below goes back by it
    check(scr.wait(r"\| ckpt 1 \|"), "cell 1's checkpoint is taken at the "
          "pause after it", scr.text())
    scr.keys("a")
    check(scr.wait(r"^ replay: cell 4 of 4 \|"), "a runs to the end",
          scr.text())
    check(scr.wait(r"replay: 1 cell differs from the recording") and
          scr.wait(r"cell 2 of 4 \(line \d+ of the file\) differs") and
          scr.wait(r"^ +recorded +replayed$") and
          scr.wait(r"^ ! +one +\| +two$") and
          scr.wait(r"^ +status: ok +\| status: ok$"),
          "the cell that differs: recorded and replayed side by side, "
          "the differing row marked", scr.text())
    check(scr.wait(r"^ *code:$") and
          scr.wait(r"^ *print\(open\('data\.txt'\)\.read\(\)\.strip\(\)\)$"),
          "the comparison shows the differing cell's code", scr.text())
    check(not any("cell 3 of 4" in line or "cell 4 of 4 (line" in line
                  for line in scr.text().splitlines()),
          "the cells that match are not shown", scr.text())
    scr.keys("Escape")
    check(scr.wait_gone(r"^ replay: 1 cell differs from the recording"),
          "Esc closes the comparison", scr.text())
    scr.keys("g", "1")
    check(scr.wait(r"replay: go to cell: 1_"), "g asks for the cell",
          scr.text())
    scr.keys("Enter")
    check(scr.wait(r"^ replay: cell 1 of 4 \|") and
          scr.wait(r"done|after cell 1") and scr.wait(r"^x +int +1 "),
          "g 1 goes back: x is 1 again", scr.text())
    check("no checkpoint after cell 1" not in scr.text(),
          "by cell 1's checkpoint, not by running again", scr.text())
    scr.keys("n")
    check(scr.wait(r"^ replay: cell 2 of 4 \|") and
          scr.wait(r"^ ! +one +\| +two$"), "n runs cell 2 again: it differs "
          "again", scr.text())
    scr.keys("n")
    check(scr.wait(r"^ replay: cell 3 of 4 \|") and scr.wait(r"^x +int +2 "),
          "n over the comparison closes it and runs cell 3: x is 2 again",
          scr.text())
    scr.keys("d")
    check(scr.wait(r"^ ! +one +\| +two$"),
          "d shows the differing cells again", scr.text())
    scr.keys("Escape", "F1")
    scr.wait(r"keys and commands")
    scr.keys("NPage")
    check(scr.wait(r"replay \(F4") and
          scr.wait(r"^ +n +run the next recorded cell") and
          scr.wait(r"^ +g N Enter +go to cell N"),
          "F1 lists the replay's keys from the key table", scr.text())
    scr.keys("Escape")


scr = Screen(coil_cmd("--replay", "t.jsonl"), 100, 40, cwd=WORK)
try:
    steps(scr)
    scr.keys("F4")
    scr.type(":save s.ipynb")
    check(scr.wait(r"cells written to the notebook"),
          ":save FILE.ipynb runs %save in the session", scr.text())
    scr.type(":save my nb's.ipynb")
    check(scr.wait(r"to the notebook `my nb's\.ipynb`"),
          "a name with a blank and a quote is quoted for %save",
          scr.text())
    scr.keys("C-d")
    check(scr.wait(r"^EXITED 0"), "Ctrl-D leaves", scr.text())
finally:
    scr.close()
nb = os.path.join(WORK, "s.ipynb")
try:
    r = subprocess.run(["/usr/bin/python3", "-c",
                        "import nbformat, sys\n"
                        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                        "nbformat.validate(nb)\n"
                        "print(len(nb.cells))", nb],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    out = r.stdout.decode()
except OSError as e:
    out = str(e)
if "No module named 'nbformat'" in out:
    check(os.path.exists(nb), "the notebook :save wrote is there")
else:
    check(os.path.exists(os.path.join(WORK, "my nb's.ipynb")) and
      out.strip().isdigit() and int(out) >= 4, "the notebook :save "
          "wrote passes nbformat.validate and holds the replayed cells",
          out)

# narrow: one above the other; no checkpoints: g goes back by running
scr = Screen(coil_cmd("--replay", "t.jsonl", "--checkpoints", "0"), 60, 30,
             cwd=WORK)
try:
    check(scr.wait(r"^ replay: cell 0 of 4 \|"), "a narrow UI is up",
          scr.text())
    scr.keys("a")
    check(scr.wait(r"^ recorded:$") and scr.wait(r"^ replayed:$") and
          scr.wait(r"^ +one$") and scr.wait(r"^ +two$"),
          "a narrow terminal shows recorded above replayed", scr.text())
    scr.keys("Escape", "g", "2", "Enter")
    scr.wait(r"^ replay: cell 2 of 4 \|")
    scr.keys("Escape")
    check(scr.wait(r"no checkpoint after cell 2") and
          scr.wait(r"^ replay: cell 2 of 4 \|"),
          "without its checkpoint, g 2 runs cells 1 and 2 again",
          scr.text())
    scr.keys("g", "3", "Enter")
    # (no namespace pane under 80 columns: the result pane says it)
    check(scr.wait(r"^ replay: cell 3 of 4 \|") and
          scr.wait(r"result of cell 7 \(replay\): ok") and
          scr.wait(r"^ 2 *$"), "g 3 from cell 2 runs forward to it",
          scr.text())
    scr.keys("C-d")
finally:
    scr.close()

# a notebook of a session with a rollback: the mark is replayed, to the
# state after cell 1, pinned once cell 1 has run (back to back, the
# replay's cells get no checkpoint of their own)
c = Coil("--export", "marks.ipynb", "--no-record", cwd=WORK)
c.run("x = 1")
time.sleep(1.5)                     # the idle policy's pause: cell 1 kept
c.run("x = 2")
r = c.call({"op": "rollback", "to": 1})
check(r.get("status") == "ok", "the session to export rolls back", r)
c.run("x")
check_exit(c, "the session is exported with its rollback marked")
scr = Screen(coil_cmd("--replay", "marks.ipynb"), 100, 30, cwd=WORK)
try:
    check(scr.wait(r"^ replay: cell 0 of 4 \|"), "the notebook in the UI: "
          "3 code cells and the rollback's mark", scr.text())
    scr.keys("a")
    check(scr.wait(r"^ replay: cell 4 of 4 \|") and
          scr.wait(r"^x +int +1 ") and
          scr.wait(r"replay: at the end of") and
          "differs from the recording" not in scr.text(),
          "a runs them all: the rollback takes x back to 1, as it did, "
          "and nothing differs", scr.text())
    scr.keys("C-d")
finally:
    scr.close()

# a "# %%" file whose second cell hangs: Ctrl-C stops the run there
with open(os.path.join(WORK, "hang.py"), "w") as f:
    f.write("# %%\nx = 5\n# %%\nimport time\nwhile True:\n"
            "    time.sleep(0.05)\n# %%\ny = 1\n")
scr = Screen(coil_cmd("--replay", "hang.py"), 100, 30, cwd=WORK)
try:
    check(scr.wait(r"^ replay: cell 0 of 3 \|"), "a # %% file in the UI",
          scr.text())
    scr.keys("a")
    check(scr.wait(r"^ replay: cell 1 of 3, running"),
          "a runs into the cell that hangs", scr.text())
    scr.keys("C-c")
    check(scr.wait(r"^ replay: cell 2 of 3 \|") and
          scr.wait(r"KeyboardInterrupt"),
          "Ctrl-C interrupts it and the run stops after it", scr.text())
    check(not scr.wait(r"^y +int", timeout=2),
          "the cell after it did not run", scr.text())
    scr.keys("C-d")
finally:
    scr.close()

# a big transcript: its cells wait in a temp file, not in memory
B = os.path.join(WORK, "big.jsonl")
c = Coil("--record", B, "--max-output", "16M", "--sandbox", "none",
         "--checkpoints", "0", cwd=WORK)
for i in range(8):
    c.run("print('%d' * (8 << 20))" % i)
check_exit(c, "a transcript of 8 cells of 8 MB each is recorded")
scr = Screen(coil_cmd("--replay", "big.jsonl"), 100, 30, cwd=WORK)
try:
    check(scr.wait(r"^ replay: cell 0 of 8 \|", timeout=60),
          "it opens in the UI", scr.text())
    rss = rss_kb(scr.coil_pid())
    if ASAN:
        skip("the UI's memory with it open (%s KiB)" % rss,
             "a sanitizer build's memory figures mean nothing")
    else:
        check(rss is not None and rss < 40 * 1024,
              "its 64 MB of answers are not held in memory (%s KiB)" % rss)
    scr.keys("n")
    check(scr.wait(r"^ replay: cell 1 of 8 \|", timeout=60) and
          not scr.wait(r"differs", timeout=1),
          "its first cell runs and matches the recording", scr.text())
    scr.keys("g", "8", "Enter")
    check(scr.wait(r"^ replay: cell 8 of 8 \|", timeout=120) and
          not scr.wait(r"differs", timeout=1),
          "so do the rest, each read back as it runs", scr.text())
    scr.keys("C-d")
finally:
    scr.close()

# a notebook's cell that differs is named by its cell in the file, and
# a cell the person interrupts is not a difference of the file's
with open(os.path.join(WORK, "data.txt"), "w") as f:
    f.write("three\n")
c = Coil("--export", "differs.ipynb", "--no-record", cwd=WORK)
c.run("print(open('data.txt').read().strip())")
c.run("import os, time\nwhile os.path.exists('hold'):\n"
      "    time.sleep(0.05)\n'free'")
check_exit(c, "a notebook of a cell that reads a file and one that waits")
with open(os.path.join(WORK, "data.txt"), "w") as f:
    f.write("four\n")
open(os.path.join(WORK, "hold"), "w").close()
scr = Screen(coil_cmd("--replay", "differs.ipynb"), 100, 30, cwd=WORK)
try:
    check(scr.wait(r"^ replay: cell 0 of 2 \|"), "the notebook opens",
          scr.text())
    scr.keys("a")
    check(scr.wait(r"^ replay: cell 1 of 2, running"),
          "a runs into the cell that waits", scr.text())
    scr.keys("C-c")
    check(scr.wait(r"cell 2 interrupted") and
          scr.wait(r"replay: 1 cell differs from the recording") and
          scr.wait(r"cell 1 of 2 \(cell \d+ of the file\) differs") and
          scr.wait(r"^ ! +three +\| +four$") and
          not scr.wait(r"cell 2 of 2 \(", timeout=1),
          "the notebook's differing cell is named by its cell in the "
          "file, and the interrupted one is not listed", scr.text())
    scr.keys("Escape")
    check(scr.wait_joined(r"replay: cell 2 of 2 was interrupted by you: "
                          r"not compared"),
          "the record says the cell the person stopped was not compared",
          scr.text())
    scr.keys("C-d")
finally:
    scr.close()
    os.unlink(os.path.join(WORK, "hold"))

# --plain on a terminal: the lines of before
scr = Screen(coil_cmd("--replay", "t.jsonl", "--plain"), 80, 30, cwd=WORK)
try:
    check(scr.wait(r"^Out\[3\]: 2$") and scr.wait(r"^EXITED 0"),
          "--plain on a terminal prints the replay as lines", scr.text())
finally:
    scr.close()

# not a terminal: the lines of before
r = subprocess.run([COIL, "--replay", T], cwd=WORK, stdin=subprocess.DEVNULL,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   timeout=120)
check(r.returncode == 0 and b"In [2]: print(open('data.txt')" in r.stdout
      and b"Out[3]: 2" in r.stdout, "without a terminal, lines as before",
      r.stdout.decode(errors="replace"))
shutil.rmtree(WORK, ignore_errors=True)
done()
