#!/usr/bin/env python3
"""Figures in a real sixel terminal: xterm as a VT340 with 256 colour
registers, on a private Xvfb display, runs the curses UI.  The UI asks
the terminal at start (not $TERM) and xterm's DA answer lists sixel,
so a figure with a solid red axes background is sent as a sixel image
(the UI's output holds a DCS ... q, no half blocks), and a screenshot
of the display (xwd, read here as a PPM) has a red region right of the
namespace pane where the figure goes; before the figure there is none.
Output printed line by line moves it up a row a step, drawn again each
time without a full repaint (no ED 2, which flickered); when output
pushes it off the screen no red is left, and PgUp brings it back.

Keys reach coil through a pass-through pty between xterm and coil
(pixlib.py); Xvfb and xterm are killed however the test ends."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coiltest import (COIL, check, cleanup, done,  # noqa: E402
                      workdir)
from pixlib import (RED_FIG, open_keys, proxy_argv,  # noqa: E402
                    red_box, require, screenshot, start_xvfb, stop,
                    wait_log, wait_shot)

require(("Xvfb", "xterm", "xwd", "xwdtopnm"),
        "xvfb, xterm, x11-apps, netpbm")


def scroll(display, keys, log, box, start):
    """Lines printed one by one move the figure up a row at a time, then
    off the screen: each step draws it again with no full repaint
    (clear screen: ED 2), and what scrolled away leaves no red.  PgUp
    brings it back."""
    top = box[1]
    os.write(keys, b"import time; [print('step', i) or time.sleep(0.15) "
             b"for i in range(8)]\r")
    check(wait_log(log, b"step 7"), "output after the figure, line by "
          "line", log)
    box2, n = wait_shot(display, lambda b, n: b is not None and
                        b[1] < top)
    check(box2 is not None and box2[1] < top and n > 200,
          "the figure moved up with the output",
          "%r then %r (%d)" % (box, box2, n))
    with open(log, "rb") as f:
        out = f.read()[start:]
    check(out.count(b"\x1bP0;1;0q") >= 2 and b"\x1b[2J" not in out,
          "drawn again at each step without a full repaint",
          "%d pictures, %d clears" % (out.count(b"\x1bP0;1;0q"),
                                      out.count(b"\x1b[2J")))
    # 30 lines: the figure's and more (the pane has 26 rows), not much
    # more than a page (24 lines), so that one PgUp shows it again
    os.write(keys, b"print('\\n'.join('line %d' % i for i in "
             b"range(30)))\r")
    check(wait_log(log, b"line 29"), "30 lines of output", log)
    box3, n = wait_shot(display, lambda b, n: b is None)
    check(box3 is None, "the figure scrolled away leaves no red",
          "%r (%d pixels)" % (box3, n))
    os.write(keys, b"\x1b[5~")
    box4, n = wait_shot(display, lambda b, n: b is not None and n > 200)
    check(box4 is not None and n > 200, "PgUp brings it back",
          "%r (%d)" % (box4, n))
    if os.environ.get("PIX_SHOTS"):
        shutil.copy(log, os.environ["PIX_SHOTS"])


def main(wd):
    procs = []
    try:
        display = start_xvfb(procs)
        check(display is not None, "Xvfb started on a free display")
        if display is None:
            return
        fifo = os.path.join(wd, "keys")
        log = os.path.join(wd, "coil.out")
        os.mkfifo(fifo, 0o600)
        open(log, "wb").close()
        env = dict(os.environ, DISPLAY=display, MPLBACKEND="Agg",
                   XAUTHORITY=os.path.join(wd, "Xauthority"))
        env.pop("NO_COLOR", None)
        xterm = subprocess.Popen(
            ["xterm", "-ti", "vt340", "-xrm", "XTerm*decTerminalID: vt340",
             "-xrm", "XTerm*numColorRegisters: 256", "-geometry",
             "100x40+0+0", "-bg", "white", "-fg", "black", "-e",
             *proxy_argv(fifo, log, [COIL, "--history", ""])],
            env=env, cwd=wd, stderr=subprocess.DEVNULL)
        procs.append(xterm)
        keys = open_keys(fifo, xterm)
        check(keys is not None, "xterm runs the UI", "")
        if keys is None:
            return
        check(wait_log(log, b">>>"), "the UI is up in xterm", log)
        shot = screenshot(display)
        box, n = red_box(shot)
        check(box is None, "no red on the screen before the figure",
              "%r (%d pixels)" % (box, n))
        os.write(keys, RED_FIG.encode())
        check(wait_log(log, b"\x1bP0;1;0q"),
              "the figure went out as a sixel image", log)
        end = time.time() + 30
        while time.time() < end:
            box, n = red_box(screenshot(display))
            if box is not None and n > 500:
                break
            time.sleep(0.2)
        w = shot[0]
        check(box is not None and n > 500,
              "the screenshot shows the red axes", "%r (%d)" % (box, n))
        if box is not None:
            check(box[0] > 0.3 * w and box[2] - box[0] > 100 and
                  box[3] - box[1] > 40,
                  "a red region right of the namespace pane, as big as "
                  "an axes", "%r on a screen %d wide" % (box, w))
        with open(log, "rb") as f:
            out = f.read()
        check("\u2580".encode() not in out,
              "no half blocks: the terminal said it has sixel", "")
        scroll(display, keys, log, box, len(out))
        os.write(keys, b"\x04")
        os.close(keys)
    finally:
        stop(procs)


WD = workdir("ui-sixel.")
try:
    main(WD)
finally:
    cleanup(WD)
done()
