#!/usr/bin/env python3
"""Figures on the curses UI's screen, in tmux (which shows no sixel or
kitty pictures, so the UI draws half blocks): a matplotlib cell's
figure is drawn under its display line as rows of upper half blocks in
256 colours (its red axes red), as wide as the output pane; a resize
draws it again to the new width; output after it scrolls it away and
PgUp brings it back.  Hostile PNGs (truncated, a header claiming
100000x100000 pixels, garbage after the signature) each show one line
saying why, and the UI goes on.  NO_COLOR draws a box with the
figure's size.  Esc v with a viewer that fails says so in the note."""
import os
import re
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, cleanup, done, skip_all, workdir  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")
try:
    import matplotlib  # noqa: F401
except ImportError:
    skip_all("matplotlib is not installed (python3-matplotlib)")

RED_FIG = ("import matplotlib; matplotlib.use('Agg'); "
           "import matplotlib.pyplot as plt; "
           "fig = plt.figure(figsize=(8, 2)); ax = fig.add_subplot(); "
           "ax.set_facecolor('red'); plt.plot([1, 2, 3]); plt.show()")
SGR_COLOUR = re.compile(r"\x1b\[[34]8;5;(\d+)m")
SGR_ANY = re.compile(r"\x1b\[[0-9;]*m")


def chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def hostile_pngs(d):
    """Three files a cell could have made: each a PNG that lies."""
    sig = b"\x89PNG\r\n\x1a\n"
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 100000, 100000, 8, 2, 0,
                                      0, 0))
    huge = sig + ihdr + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + \
        chunk(b"IEND", b"")
    small = chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0))
    row = b"\0" + b"\x80" * 64 * 3
    whole = sig + small + chunk(b"IDAT", zlib.compress(row * 64)) + \
        chunk(b"IEND", b"")
    files = {"trunc.png": whole[:60], "huge.png": huge,
             "junk.png": sig + bytes(range(256)) * 8}
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    return sorted(files)


def block_rows(scr):
    """The screen's rows of half blocks: (row, widest run, colours)."""
    return block_rows_of(scr.text(escapes=True))


def block_rows_of(snap):
    """block_rows of one screen captured with its escapes."""
    out = []
    for i, line in enumerate(snap.split("\n")):
        colours = {int(c) for c in SGR_COLOUR.findall(line)}
        if "\u2580" in line and colours:
            out.append((i, line.count("\u2580"), colours))
    return out


def display_end(snap):
    """The row where the display line of cell-1-1.png ends, in one
    screen captured with its escapes: the path wraps wherever the work
    directory's length puts it, the file's name included."""
    lines = [SGR_ANY.sub("", ln) for ln in snap.split("\n")]
    for i, line in enumerate(lines):
        if "# display: image/png" not in line:
            continue
        joined, j = "", i
        while j < len(lines) and "\u2580" not in lines[j]:
            joined += lines[j].split("\u2502", 1)[-1].strip()
            if joined.endswith("cell-1-1.png"):
                return j
            j += 1
    return None


def wait_blocks(scr, pred, timeout=20):
    import time
    end = time.time() + timeout
    rows = []
    while time.time() < end:
        rows = block_rows(scr)
        if pred(rows):
            return rows
        time.sleep(0.1)
    return rows


def wait_file(path, timeout=20):
    import time
    end = time.time() + timeout
    while time.time() < end:
        try:
            with open(path) as f:
                if f.read().endswith("\n"):
                    return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def zombies(pid):
    """The children of pid that are zombies."""
    out = []
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return out
    for k in kids:
        try:
            with open("/proc/%d/stat" % k) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    out.append(k)
        except OSError:
            pass
    return out


def wait_no_zombies(pid, timeout=20):
    import time
    end = time.time() + timeout
    left = zombies(pid)
    while left and time.time() < end:
        time.sleep(0.1)
        left = zombies(pid)
    return left


def main(wd):
    names = hostile_pngs(wd)
    env = {"MPLBACKEND": "Agg",
           "COIL_VIEWER": "/nonexistent/viewer"}
    scr = Screen(coil_cmd(), cols=100, rows=40, env=env, cwd=wd)
    try:
        check(scr.wait(r"^>>>"), "the UI started", scr.text())
        scr.type(RED_FIG)
        check(scr.wait_joined(r"display: image/png, [\d.]+ (bytes|KiB), "
                                   r"\d+x\d+, \S*cell-1-1\.png"),
              "the display line names the figure", scr.text())
        rows = wait_blocks(scr, lambda r: len(r) >= 5)
        snap = scr.text(escapes=True)
        rows = block_rows_of(snap)
        disp = display_end(snap)
        check(len(rows) >= 5 and disp is not None and
              rows[0][0] == disp + 1,
              "half-block rows right under the display line",
              "display ends at %r, rows %r\n%s" % (disp, rows[:3], snap))
        colours = set().union(*[r[2] for r in rows]) if rows else set()
        check(196 in colours or 160 in colours,
              "the red axes are drawn red (xterm colour 196 or 160)",
              repr(colours))
        wide = max((r[1] for r in rows), default=0)
        check(60 <= wide <= 98, "the picture as wide as the output pane",
              "width %d" % wide)

        # 60 columns: no namespace pane beside the output (80 needs
        # one), so the pane is narrower than at 100 with one
        scr.resize(60, 40)
        rows = wait_blocks(scr, lambda r: r and max(x[1] for x in r) < wide)
        narrow = max((r[1] for r in rows), default=0)
        check(0 < narrow <= 60 and narrow < wide,
              "a resize draws it again to the new width",
              "width %d then %d" % (wide, narrow))

        scr.type("print('\\n'.join('line %d' % i for i in range(60)))")
        check(scr.wait(r"line 59"), "output after the figure", scr.text())
        rows = wait_blocks(scr, lambda r: not r)
        check(not rows, "the figure scrolled away", scr.text())
        scr.keys("PPage")
        scr.keys("PPage")
        rows = wait_blocks(scr, lambda r: len(r) >= 3)
        check(len(rows) >= 3, "PgUp brings the figure back, clipped at "
              "the pane's top", scr.text())
        scr.keys("NPage")
        scr.keys("NPage")
        scr.keys("NPage")

        scr.type("import sys; [sys.modules['_coil']._shown.append("
                 "{'type': 'image/png', 'path': p}) for p in %r]" % names)
        ok = scr.wait(r"\[figure: too big \(100000x100000 pixels\)\]")
        screen = scr.text()
        check(ok, "a header claiming 100000x100000 pixels says so",
              screen)
        check(len(re.findall(r"\[figure: ", screen)) == 3,
              "each hostile PNG shows one line saying why", screen)
        scr.type("6 * 7")
        check(scr.wait(r"^.*42"), "the UI goes on after them", scr.text())

        scr.keys("Escape", "v")
        check(scr.wait(r"cannot run '/nonexistent/viewer'"),
              "Esc v says the viewer could not run, and where the "
              "figure is", scr.text())
    finally:
        scr.close()

    viewer = os.path.join(wd, "viewer.sh")
    opened = os.path.join(wd, "opened")
    with open(viewer, "w") as f:
        # as xdg-open does: a child started in the background, then exit
        f.write("#!/bin/sh\n(cp \"$1\" %s.png; echo \"$1\" > %s) &\n"
                "exit 0\n" % (opened, opened))
    os.chmod(viewer, 0o700)
    scr = Screen(coil_cmd(), cols=80, rows=30,
                 env=dict(env, NO_COLOR="1", COIL_VIEWER=viewer), cwd=wd)
    try:
        check(scr.wait(r"^>>>"), "the UI started without colours",
              scr.text())
        scr.type(RED_FIG)
        check(scr.wait(r"figure 800x200 px: Esc v opens it"),
              "NO_COLOR: a box with the figure's size", scr.text())
        check("\u2580" not in scr.text(), "and no half blocks",
              scr.text())
        scr.keys("Escape", "v")
        check(scr.wait(r"─'/\S+ /"), "Esc v opens the "
              "figure with $COIL_VIEWER", scr.text())
        check(wait_file(opened), "the viewer's child ran", opened)
        with open(opened + ".png", "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n",
                  "it was given a copy of the figure's PNG")
        pid = scr.coil_pid()
        left = wait_no_zombies(pid)
        check(pid is not None and left == [],
              "the viewer and what it left behind are reaped: no zombie "
              "child of coil's", repr(left))
    finally:
        scr.close()


WD = workdir("ui-figure.")
try:
    main(WD)
finally:
    cleanup(WD)
done()
