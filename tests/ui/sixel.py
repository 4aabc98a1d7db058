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
(this file, run with --proxy): it copies both ways, so the terminal's
answers reach coil untouched, logs what coil writes, and adds the
bytes the test puts in a FIFO.  Xvfb picks a free display itself
(-displayfd, which also says when it is ready), listens on no TCP
port, and it and xterm are killed however the test ends."""
import os
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))

RED_FIG = ("import matplotlib; matplotlib.use('Agg'); "
           "import matplotlib.pyplot as plt; "
           "fig = plt.figure(figsize=(6, 3)); ax = fig.add_subplot(); "
           "ax.set_facecolor('red'); plt.show()\r")


def proxy(fifo, log, argv):
    """xterm's side is our stdin/stdout; coil's is a new pty."""
    import fcntl
    import pty
    import termios
    import tty
    ws = fcntl.ioctl(0, termios.TIOCGWINSZ, b"\0" * 8)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, ws)
    tty.setraw(0)
    inj = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    with open(log, "ab", buffering=0) as out:
        while True:
            r, _, _ = select.select([0, fd, inj], [], [])
            try:
                if fd in r:
                    data = os.read(fd, 65536)
                    if not data:
                        break
                    os.write(1, data)
                    out.write(data)
                if 0 in r:
                    os.write(fd, os.read(0, 4096))
                if inj in r:
                    data = os.read(inj, 4096)
                    if data:
                        os.write(fd, data)
            except OSError:
                break
    os._exit(0)


if len(sys.argv) > 1 and sys.argv[1] == "--proxy":
    proxy(sys.argv[2], sys.argv[3], sys.argv[4:])

from coiltest import (COIL, check, cleanup, done, skip_all,  # noqa: E402
                      workdir)

for tool in ("Xvfb", "xterm", "xwd", "xwdtopnm"):
    if shutil.which(tool) is None:
        skip_all("%s is not installed (xvfb, xterm, x11-apps, netpbm)" %
                 tool)
try:
    import matplotlib  # noqa: F401
except ImportError:
    skip_all("matplotlib is not installed (python3-matplotlib)")


def screenshot(display):
    """The root window as (width, height, RGB bytes)."""
    xwd = subprocess.run(["xwd", "-root", "-silent", "-display", display],
                         stdout=subprocess.PIPE, check=True).stdout
    ppm = subprocess.run(["xwdtopnm"], input=xwd, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, check=True).stdout
    parts = ppm.split(maxsplit=4)
    if parts[0] != b"P6":
        raise ValueError("xwdtopnm gave no P6 image")
    w, h, top = int(parts[1]), int(parts[2]), int(parts[3])
    data = parts[4]
    if top > 255:   # two bytes a sample: keep the high one
        data = data[::2]
    return w, h, data


def save(shot, name):
    """A screenshot kept as a PPM when SIXEL_SHOTS names a directory."""
    d = os.environ.get("SIXEL_SHOTS")
    if d:
        w, h, px = shot
        with open(os.path.join(d, name + ".ppm"), "wb") as f:
            f.write(b"P6 %d %d 255\n" % (w, h) + px)


def red_box(shot):
    """The bounding box and count of pure red pixels."""
    w, h, px = shot
    xs, ys = [], []
    for y in range(0, h, 2):
        row = px[y * w * 3:(y + 1) * w * 3]
        for x in range(0, w, 2):
            r, g, b = row[3 * x], row[3 * x + 1], row[3 * x + 2]
            if r > 200 and g < 60 and b < 60:
                xs.append(x)
                ys.append(y)
    if not xs:
        return None, 0
    return (min(xs), min(ys), max(xs), max(ys)), len(xs)


def wait_log(log, needle, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with open(log, "rb") as f:
            if needle in f.read():
                return True
        time.sleep(0.1)
    return False


def wait_shot(display, pred, timeout=30):
    """The red box and count once pred holds of them (or the last)."""
    end = time.time() + timeout
    while True:
        shot = screenshot(display)
        box, n = red_box(shot)
        if pred(box, n) or time.time() > end:
            save(shot, "shot-%d" % time.time())
            return box, n
        time.sleep(0.2)


def scroll(display, keys, log, box, start):
    """Lines printed one by one move the figure up a row at a time, then
    off the screen: each step erases only the rows it left, no full
    repaint (clear screen: ED 2), and what scrolled away leaves no red.
    PgUp brings it back."""
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
    if os.environ.get("SIXEL_SHOTS"):
        shutil.copy(log, os.environ["SIXEL_SHOTS"])


def main(wd):
    procs = []
    try:
        rfd, wfd = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-nolisten",
                                 "tcp", "-screen", "0", "800x600x24"],
                                pass_fds=[wfd], stderr=subprocess.DEVNULL)
        procs.append(xvfb)
        os.close(wfd)
        num = b""
        while not num.endswith(b"\n"):
            r, _, _ = select.select([rfd], [], [], 30)
            chunk = os.read(rfd, 64) if r else b""
            if not chunk:
                break
            num += chunk
        os.close(rfd)
        check(num.strip().isdigit(), "Xvfb started on a free display",
              repr(num))
        if not num.strip().isdigit():
            return
        display = ":" + num.decode().strip()
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
             sys.executable, os.path.abspath(__file__), "--proxy", fifo,
             log, COIL, "--history", ""],
            env=env, cwd=wd, stderr=subprocess.DEVNULL)
        procs.append(xterm)
        keys = None
        end = time.time() + 30
        while keys is None and time.time() < end and xterm.poll() is None:
            try:    # the proxy in xterm opens its end when it runs
                keys = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.1)
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
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


WD = workdir("ui-sixel.")
try:
    main(WD)
finally:
    cleanup(WD)
done()
