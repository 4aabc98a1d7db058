#!/usr/bin/env python3
""":save FILE in the curses UI writes the output pane to FILE; coil (not
the sandboxed worker) writes it, with the user's rights, while cells run
beside it.  So it follows no link a cell planted in the work dir: a link
at FILE's name, or on the way to it, is refused with the path and why,
and what the link points at (a decoy of the test's, in a directory
cells cannot write) stays as it was.  A hard link a cell made at FILE's
name is replaced by a new file, never written through.  Under standard
and strict; the control writes a plain FILE."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, cleanup, done, skip_all, workdir  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

DECOY = b"DECOY-UNTOUCHED\n"

for prof in ("standard", "strict"):
    W = workdir()
    D = workdir("coil-decoy-")
    target = os.path.join(D, "target")
    with open(target, "wb") as f:
        f.write(DECOY)
    scr = Screen(coil_cmd("--sandbox", prof, "--workdir", W, "--history",
                          "''"), 100, 30, cwd=W)
    try:
        check(scr.wait(r"^>>> *$"), prof + ": the UI is up", scr.text())
        scr.type("print('the line to keep')")
        check(scr.wait(r"│  the line to keep *$"), prof + ": a cell printed",
              scr.text())
        scr.type(":save out.txt")
        check(scr.wait(r"saved \d+ lines to 'out.txt'"), prof + ": :save "
              "writes the output pane", scr.text())
        # the cell plants: a link at one name, a link on the way to
        # another, a hard link to a file of its own at a third
        scr.type("import os; os.symlink(%r, 'ln.txt'); "
                 "os.symlink(%r, 'dir'); open('mine', 'w').write('x'); "
                 "os.link('mine', 'hard.txt'); print('planted')"
                 % (target, D))
        check(scr.wait(r"│  planted *$"), prof + ": the cell planted its "
              "links", scr.text())
        scr.type(":save ln.txt")
        check(scr.wait(r"cannot write 'ln\.txt': a symbolic link where"),
              prof + ": :save to a planted link is refused, saying why",
              scr.text())
        scr.type(":save dir/target")
        check(scr.wait(r"cannot write 'dir/target': a symbolic link on"),
              prof + ": :save through a planted link is refused",
              scr.text())
        scr.type(":save hard.txt")
        check(scr.wait(r"saved \d+ lines to 'hard.txt'"), prof + ": :save "
              "over a hard link writes a new file", scr.text())
        scr.type("1 + 41")
        check(scr.wait(r"^ *│ 42 *$"), prof + ": the session goes on",
              scr.text())
        scr.keys("C-d")
        check(scr.wait(r"^EXITED 0"), prof + ": Ctrl-D leaves", scr.text())
    finally:
        scr.close()
    with open(os.path.join(W, "out.txt")) as f:
        check("the line to keep" in f.read(), prof + ": out.txt holds the "
              "pane")
    with open(os.path.join(W, "mine")) as f:
        check(f.read() == "x" and os.stat(os.path.join(W, "hard.txt"))
              .st_nlink == 1, prof + ": the hard link was replaced, not "
              "written through")
    with open(target, "rb") as f:
        check(f.read() == DECOY and sorted(os.listdir(D)) == ["target"],
              prof + ": the decoy is untouched")
    cleanup(W)
    cleanup(D)
done()
