#!/usr/bin/env python3
"""Figures in a real kitty terminal: kitty on a private Xvfb display
(OpenGL from Mesa's software renderer, llvmpipe) runs the curses UI.
The UI asks the terminal at start, and kitty answers the graphics
query, so a figure with a solid red axes background goes out with the
kitty graphics protocol (APC G, raw RGB, no sixel, no half blocks),
and a screenshot of the display has a red region right of the
namespace pane where the figure goes; before the figure there is none.
Output that pushes it off the screen leaves no red (the UI deletes its
pictures and puts them where they go now), and PgUp brings it back.

Keys reach coil through a pass-through pty between kitty and coil
(pixlib.py); kitty gets a config dir and caches of its own in the
test's work dir, and it and Xvfb are killed however the test ends.
Skipped when kitty, Xvfb or the X tools are missing, or when kitty
cannot start on the display (no OpenGL 3.3 there)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coiltest import (COIL, check, cleanup, done, skip_all,  # noqa: E402
                      workdir)
from pixlib import (RED_FIG, open_keys, proxy_argv,  # noqa: E402
                    red_box, require, screenshot, start_xvfb, stop,
                    wait_log, wait_shot)

require(("kitty", "Xvfb", "xwd", "xwdtopnm"),
        "kitty, xvfb, x11-apps, netpbm")


def kitty(wd, display, fifo, log):
    """kitty running coil behind the proxy, 100x40 cells, with no
    config or cache of the user's."""
    env = dict(os.environ, DISPLAY=display, MPLBACKEND="Agg",
               LIBGL_ALWAYS_SOFTWARE="1",
               XAUTHORITY=os.path.join(wd, "Xauthority"),
               KITTY_CONFIG_DIRECTORY=os.path.join(wd, "kitty-config"),
               XDG_CONFIG_HOME=os.path.join(wd, "config"),
               XDG_CACHE_HOME=os.path.join(wd, "cache"))
    env.pop("NO_COLOR", None)
    env.pop("KITTY_WINDOW_ID", None)
    env.pop("KITTY_PID", None)
    return subprocess.Popen(
        ["kitty", "--config", "NONE", "-o", "font_size=8",
         "-o", "initial_window_width=100c", "-o",
         "initial_window_height=40c", "-o", "remember_window_size=no",
         "-o", "allow_remote_control=no", "-o", "update_check_interval=0",
         "-o", "background=#ffffff", "-o", "foreground=#000000",
         "-o", "window_padding_width=0", "-o", "placement_strategy=top-left",
         *proxy_argv(fifo, log, [COIL, "--history", ""])],
        env=env, cwd=wd, stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(wd, "kitty.err"), "wb"))


def main(wd):
    procs = []
    try:
        display = start_xvfb(procs, "1024x768x24")
        check(display is not None, "Xvfb started on a free display")
        if display is None:
            return
        fifo = os.path.join(wd, "keys")
        log = os.path.join(wd, "coil.out")
        os.mkfifo(fifo, 0o600)
        open(log, "wb").close()
        term = kitty(wd, display, fifo, log)
        procs.append(term)
        keys = open_keys(fifo, term)
        if keys is None:
            with open(os.path.join(wd, "kitty.err"), "rb") as f:
                err = f.read().decode("utf-8", "replace").strip()
            stop(procs)
            skip_all("kitty did not start on Xvfb (it needs OpenGL 3.3: "
                     "Mesa's llvmpipe): %s" % err[-300:])
        check(wait_log(log, b">>>"), "the UI is up in kitty", log)
        box, n = red_box(screenshot(display))
        check(box is None, "no red on the screen before the figure",
              "%r (%d pixels)" % (box, n))
        os.write(keys, RED_FIG.encode())
        check(wait_log(log, b"\x1b_Ga=T,f=24,"),
              "the figure went out with the kitty graphics protocol", log)
        box, n = wait_shot(display, lambda b, n: b is not None and n > 500)
        w = screenshot(display)[0]
        check(box is not None and n > 500,
              "the screenshot shows the red axes", "%r (%d)" % (box, n))
        if box is not None:
            check(box[0] > 0.25 * w and box[2] - box[0] > 100 and
                  box[3] - box[1] > 40,
                  "a red region right of the namespace pane, as big as "
                  "an axes", "%r on a screen %d wide" % (box, w))
        with open(log, "rb") as f:
            out = f.read()
        check("\u2580".encode() not in out and b"\x1bP0;1;0q" not in out,
              "no half blocks, no sixel: the terminal said it has the "
              "kitty protocol", "")
        # 40 lines: more than the pane's rows, less than two pages
        os.write(keys, b"print('\\n'.join('line %d' % i for i in "
                 b"range(40)))\r")
        check(wait_log(log, b"line 39"), "40 lines of output", log)
        box, n = wait_shot(display, lambda b, n: b is None)
        check(box is None, "the figure scrolled away leaves no red",
              "%r (%d pixels)" % (box, n))
        os.write(keys, b"\x1b[5~")
        box, n = wait_shot(display, lambda b, n: b is not None and n > 200)
        check(box is not None and n > 200, "PgUp brings it back",
              "%r (%d)" % (box, n))
        os.write(keys, b"\x04")
        os.close(keys)
    finally:
        stop(procs)


WD = workdir("ui-kitty.")
try:
    main(WD)
finally:
    cleanup(WD)
done()
