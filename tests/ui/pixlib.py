"""What the tests of real pixel terminals share (sixel.py, kitty.py): a
private Xvfb display, a pass-through pty between the terminal and coil,
screenshots read as PPM, and the red of a figure's axes found in them.

The terminal runs this file with --proxy FIFO LOG ARGV...: it copies
both ways, so the terminal's answers reach coil untouched, logs what
coil writes, and adds the bytes the test puts in the FIFO.  Xvfb picks
a free display itself (-displayfd, which also says when it is ready)
and listens on no TCP port."""
import os
import select
import subprocess
import sys
import time



# A figure whose axes are one solid red, found again in a screenshot.
RED_FIG = ("import matplotlib; matplotlib.use('Agg'); "
           "import matplotlib.pyplot as plt; "
           "fig = plt.figure(figsize=(6, 3)); ax = fig.add_subplot(); "
           "ax.set_facecolor('red'); plt.show()\r")


def require(tools, packages):
    """Skip the test, saying what to install, unless each of tools is on
    PATH and matplotlib imports."""
    import shutil
    from coiltest import skip_all
    for tool in tools:
        if shutil.which(tool) is None:
            skip_all("%s is not installed (%s)" % (tool, packages))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        skip_all("matplotlib is not installed (python3-matplotlib)")


def proxy(fifo, log, argv):
    """The terminal's side is our stdin/stdout; coil's is a new pty."""
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


def proxy_argv(fifo, log, argv):
    """The command a terminal runs: coil (argv) behind the proxy."""
    return [sys.executable, os.path.abspath(__file__), "--proxy", fifo,
            log, *argv]


def start_xvfb(procs, size="800x600x24"):
    """A new Xvfb on a free display, added to procs: its name, or None."""
    rfd, wfd = os.pipe()
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-nolisten",
                             "tcp", "-screen", "0", size],
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
    return ":" + num.decode().strip() if num.strip().isdigit() else None


def open_keys(fifo, term, timeout=30):
    """The FIFO's writing end once the proxy in term opened it."""
    end = time.time() + timeout
    while time.time() < end and term.poll() is None:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            time.sleep(0.1)
    return None


def stop(procs):
    for p in reversed(procs):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


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
    """A screenshot kept as a PPM when PIX_SHOTS names a directory."""
    d = os.environ.get("PIX_SHOTS")
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


def wait_log(log, needle, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        with open(log, "rb") as f:
            if needle in f.read():
                return True
        time.sleep(0.1)
    return False


if __name__ == "__main__" and len(sys.argv) > 4 and \
        sys.argv[1] == "--proxy":
    proxy(sys.argv[2], sys.argv[3], sys.argv[4:])
