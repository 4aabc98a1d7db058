"""uilib - the curses UI's tests drive the real binary in tmux.

Each Screen is its own tmux server (-L NAME, a private TMUX_TMPDIR),
killed at the end by that name alone, with one window of COLSxROWS
running a command.  keys() is tmux send-keys; text() the screen as
capture-pane prints it; wait() polls until a regex shows (or a timeout,
when it returns False, so the check fails and the test goes on).
masked() hides what changes from run to run (times, memory, addresses)
so a screen can be compared with an expected file under tests/ui/.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import coiltest
from coiltest import check

HERE = os.path.dirname(os.path.abspath(__file__))


def rss_kb(pid):
    """A process's resident memory in KiB, or None."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def socket_call(path, req, events=None):
    """One request through the attach socket at path, as another tool
    would: its answer, or None if the socket closed first.  The event
    lines before it go to the list events, when one is given."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(60)
        s.connect(path)
        s.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                return None
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                msg = json.loads(line)
                if "event" not in msg and msg.get("id") == req["id"]:
                    return msg
                if events is not None:
                    events.append(msg)


def have_tmux():
    return shutil.which("tmux") is not None


class Screen:
    def __init__(self, cmd, cols=80, rows=24, env=None, cwd=None):
        self.dir = tempfile.mkdtemp(prefix="coil-ui.", dir="/tmp")
        self.name = "coil-ui-%d" % os.getpid()
        self.env = dict(os.environ, TMUX_TMPDIR=self.dir, SHELL="/bin/sh",
                        TERM="xterm-256color", **(env or {}))
        self.env.pop("TMUX", None)
        # a sanitizer's report would go to the UI's own terminal, where
        # no test reads it: to files of the screen's, read at close
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if coiltest.ASAN and var in self.env:
                self.env[var] += ":log_path=%s/san" % self.dir
        if "NO_COLOR" not in (env or {}):
            self.env.pop("NO_COLOR", None)
        self.cwd = cwd or os.environ.get("TEST_WORKDIR") or self.dir
        # the window's shell: coil, then its exit status, then a pause
        # so the last screen stays to be read; the modes are saved
        # before EXITED shows, which the tests wait for to read them
        shell = ("%s; rc=$?; stty -g > %s/stty.after; echo EXITED $rc; "
                 "sleep 120") % (cmd, self.dir)
        self.tmux("new-session", "-d", "-x", str(cols), "-y", str(rows),
                  "stty -g > %s/stty.before; %s" % (self.dir, shell))

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.name, "-f", "/dev/null",
                               *args], env=self.env, cwd=self.cwd,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL,
                              close_fds=True).stdout.decode("utf-8",
                                                             "replace")

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def type(self, text):
        """Literal text, then Enter."""
        self.tmux("send-keys", "-l", text)
        self.tmux("send-keys", "Enter")

    def text(self, escapes=False):
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []))

    def wait(self, regex, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            if re.search(regex, self.text(), re.M):
                return True
            time.sleep(0.1)
        return False

    def wait_joined(self, regex, timeout=15):
        """Like wait, in the output pane's text with its wrapped lines
        joined (a long path wraps anywhere)."""
        end = time.time() + timeout
        while time.time() < end:
            right = [ln.split("\u2502", 1)[1].strip()
                     for ln in self.text().split("\n") if "\u2502" in ln]
            if re.search(regex, "".join(right)):
                return True
            time.sleep(0.1)
        return False

    def wait_gone(self, regex, timeout=15):
        end = time.time() + timeout
        while time.time() < end:
            if not re.search(regex, self.text(), re.M):
                return True
            time.sleep(0.1)
        return False

    def pane_pid(self):
        out = self.tmux("list-panes", "-F", "#{pane_pid}").split()
        return int(out[0]) if out else None

    def signal_coil(self, sig):
        """Send sig to the pane's coil (the shell's child), by its pid."""
        pid = self.pane_pid()
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(k) for k in f.read().split()]
        for k in kids:
            os.kill(k, sig)
        return kids

    def coil_pid(self):
        pid = self.pane_pid()
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None

    def resize(self, cols, rows):
        self.tmux("resize-window", "-x", str(cols), "-y", str(rows))

    def stty(self, which):
        try:
            with open(os.path.join(self.dir, "stty." + which)) as f:
                return f.read().strip()
        except OSError:
            return None

    def close(self):
        try:
            pid = self.coil_pid()
        except (OSError, TypeError, ValueError):
            pid = None
        self.tmux("kill-server")
        if coiltest.ASAN:
            self.sanitized(pid)
        shutil.rmtree(self.dir, ignore_errors=True)

    def sanitized(self, pid):
        """Once the UI has exited (its leak check runs then), what the
        sanitizers said, as a failed check: nothing is a pass."""
        end = time.time() + 60
        while pid is not None and os.path.exists("/proc/%d" % pid) and \
                time.time() < end:
            time.sleep(0.05)
        said = ""
        for name in sorted(os.listdir(self.dir)):
            if name.startswith("san."):
                with open(os.path.join(self.dir, name), errors="replace") \
                        as f:
                    said += "%s:\n%s\n" % (name, f.read())
        if said:
            coiltest.check(False, "the UI's sanitizers reported nothing",
                           said[:8000])


def masked(text):
    """The screen without what differs between runs."""
    text = re.sub(r"0x[0-9a-f]+", "0x#", text)
    # the idle checkpoint comes when the session is quiet: when, varies
    text = re.sub(r"ckpt \d+|no ckpt", "ckpt #", text)
    text = re.sub(r"\d+(\.\d+)?( ?)(ms|s|M)\b", r"#\2\3", text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def check_screen(scr, name, what):
    """Compare the masked screen with tests/ui/NAME.screen."""
    got = masked(scr.text())
    path = os.path.join(HERE, name + ".screen")
    try:
        with open(path, encoding="utf-8") as f:
            want = f.read().rstrip("\n")
    except OSError:
        want = None
    if os.environ.get("COIL_UI_REGEN"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(got + "\n")
        want = got
    return check(got == want, what, "got:\n%s\nwant:\n%s" % (got, want))


def coil_cmd(*args):
    """The shell command of a UI: the binary under test, no history
    beyond the test's own directory."""
    return " ".join([coiltest.COIL, *args])
