#!/usr/bin/env python3
"""A cell does not drive the person's terminal (issue 22, point 8).

coil --plain on a real pseudo-terminal: what a cell writes to stdout and
stderr, a result's repr, a traceback and an input() prompt reach the
terminal with SGR colours kept and every other control shown escaped
(OSC 52 clipboard, OSC 0/2 title, the CSI 21t report that would make the
terminal type into coil's input, a C1 control), an SGR sequence written
in two parts included.  An SGR a cell leaves set (conceal, black on
black) is reset before coil's own words: the prompt, a traceback, an
input() prompt and the person's echo stay visible.  coil --replay
prints a file's code and the new output the same way, and coil's own
messages, which may name what a file or a cell chose.  Through a pipe
the bytes are left exactly as the cell wrote them: scripts depend on
that.

The terminal here is the pty's master, read byte for byte: what coil
wrote, before any terminal could act on it.
"""
import os
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import coiltest
from coiltest import COIL, check, done

# Typed at the prompt: the escapes are Python's, so the echo of the line
# holds none of the bytes the cell writes.
CELLS = [
    r'import sys, os, time',
    r'sys.stdout.write("A\x1b]52;c;aGk=\x07B\x1b]0;title\x07C\x1b[21tD'
    r'\x1b[31mred\x1b[0mE\x9bF\n")',
    r'sys.stderr.write("G\x1b]2;err\x07H\n")',
    # The cell pauses between the halves, so that they most likely
    # reach coil in two reads; tests/unit/termsafe-test.c cuts every
    # sequence at every point, which this cannot promise.
    r'os.write(1, b"\x1b[3"); time.sleep(0.3); '
    r'os.write(1, b"2mgreen\x1b[0m\n")',
    r'type("R", (), {"__repr__": lambda s: "I\x1b]0;res\x07J"})()',
    r'raise ValueError("K\x1b]0;tb\x07L")',
]
# What each cell's bytes look like on the terminal.
SHOWN = [
    b"A^[]52;c;aGk=^GB^[]0;title^GC^[[21tD\x1b[31mred\x1b[0mE<U+009B>F",
    b"G^[]2;err^GH",
    b"\x1b[32mgreen\x1b[0m",
    b"I^[]0;res^GJ",
    b"K^[]0;tb^GL",
]
# Nothing of these may reach a terminal.
RAW = [b"\x1b]", b"\x1b[21t", b"\x07", b"\xc2\x9b"]


class Pty:
    """coil on a pty; .out is every byte it wrote there."""

    def __init__(self, args, cwd):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [COIL, *args], stdin=slave, stdout=slave, stderr=slave,
            cwd=cwd, start_new_session=True,
            env=dict(os.environ, TERM="xterm", PAGER="cat"))
        os.close(slave)
        self.out = b""
        self.pos = 0

    def expect(self, want, timeout=60):
        """Read until want shows after the last match; whether it did
        (the timeout only ends a run that went wrong)."""
        end = time.time() + timeout
        while want not in self.out[self.pos:] and time.time() < end:
            r, _, _ = select.select([self.master], [], [], 0.5)
            if r:
                try:
                    data = os.read(self.master, 65536)
                except OSError:         # EIO: the other end closed
                    break
                if not data:
                    break
                self.out += data
        at = self.out.find(want, self.pos)
        if at < 0:
            return False
        self.pos = at + len(want)
        return True

    def type(self, line):
        os.write(self.master, line.encode() + b"\r")

    def close(self):
        """Read to the end and reap coil."""
        while self.expect(b"\0never\0", timeout=30):
            pass
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            rc = self.proc.wait()
        os.close(self.master)
        return rc


def raw_left(out):
    return [r for r in RAW if r in out]


def plain_on_a_terminal(wd):
    t = Pty(["--plain"], wd)
    ok = t.expect(b">>> ")
    shown = []
    for cell in CELLS:
        t.type(cell)
        ok = t.expect(b">>> ") and ok
    for want in SHOWN:
        shown.append(want in t.out)
    t.type(r'x = input("M\x1b]0;ask\x07> ")')
    asked = t.expect(b"M^[]0;ask^G> ")
    t.type("yes")
    t.expect(b">>> ")
    t.type("x")
    answered = t.expect(b"'yes'")
    t.type(r'help(type("N", (), {"__doc__": "N\x1b]0;page\x07O"}))')
    paged = t.expect(b"N^[]0;page^GO")
    t.expect(b">>> ")
    os.write(t.master, b"\x04")
    rc = t.close()
    check(ok and all(shown),
          "output, stderr, a split SGR, a result and a traceback reach a "
          "terminal escaped, colours kept",
          "not shown: %r\nthe terminal got:\n%r" % (
              [w for w, s in zip(SHOWN, shown) if not s], t.out[-3000:]))
    check(asked and answered, "an input() prompt is shown escaped and the "
          "line typed answers it", repr(t.out[-2000:]))
    check(paged, "help's text for the pager is made safe",
          repr(t.out[-2000:]))
    check(raw_left(t.out) == [], "no OSC, CSI 21t, BEL or C1 control "
          "reached the terminal", "found %r in:\n%r" % (
              raw_left(t.out), t.out[-3000:]))
    check(rc == 0, "the session went on to a clean end (exit status %s)"
          % rc)


def reset_before(out, sgr, word):
    """Whether, after the cell's sgr, a reset comes before coil's word."""
    at = out.find(sgr)
    end = out.find(word, at + len(sgr)) if at >= 0 else -1
    return end >= 0 and b"\x1b[m" in out[at + len(sgr):end]


def plain_sgr_left_set(wd):
    t = Pty(["--plain"], wd)
    ok = t.expect(b">>> ")
    t.type(r'print("\x1b[8m", end="")')
    ok = t.expect(b"\x1b[8m") and t.expect(b">>> ") and ok
    t.type("6 * 7")
    ok = t.expect(b"42") and t.expect(b">>> ") and ok
    t.type(r'print("\x1b[30;40m", end=""); raise ValueError("vv")')
    ok = t.expect(b"ValueError: vv") and t.expect(b">>> ") and ok
    t.type(r'print("\x1b[0;8m", end=""); x = input("ask> ")')
    # the echo of the line holds "ask> " too: the prompt is after it
    ok = t.expect(b'input("ask> ")') and t.expect(b"ask> ") and ok
    t.type("typed")
    ok = t.expect(b">>> ") and ok
    t.type(r'print("\x1b[1mbold\x1b[0m"); x')
    ok = t.expect(b"'typed'") and t.expect(b">>> ") and ok
    os.write(t.master, b"\x04")
    rc = t.close()
    out = t.out
    check(ok and reset_before(out, b"\x1b[8m", b">>> ") and
          reset_before(out, b"\x1b[8m", b"42"),
          "conceal left set by a cell is reset before the next prompt and "
          "the next answer", repr(out))
    check(reset_before(out, b"\x1b[30;40m", b"Traceback") and
          reset_before(out, b"\x1b[30;40m", b">>> "),
          "black on black left set is reset before the traceback and the "
          "prompt", repr(out))
    check(reset_before(out, b"\x1b[0;8m", b"ask> ") and
          reset_before(out, b"\x1b[0;8m", b"typed"),
          "an SGR set before input() is reset before its prompt and the "
          "echo of the line typed", repr(out))
    check(b"\x1b[1mbold\x1b[0m\r\n'typed'" in out,
          "a cell that resets what it set gets no reset added", repr(out))
    check(rc == 0, "the session went on to a clean end (exit status %s)"
          % rc)


def plain_through_a_pipe(wd):
    script = "\n".join(CELLS[:5]) + "\n"
    r = subprocess.run([COIL, "--plain"], input=script.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       cwd=wd, timeout=120)
    want = (b"A\x1b]52;c;aGk=\x07B\x1b]0;title\x07C\x1b[21tD"
            b"\x1b[31mred\x1b[0mE\xc2\x9bF\n")
    check(want in r.stdout and b"\x1b[32mgreen\x1b[0m\n" in r.stdout and
          b"I\x1b]0;res\x07J\n" in r.stdout,
          "through a pipe stdout holds the cells' bytes unchanged",
          repr(r.stdout))
    check(b"G\x1b]2;err\x07H\n" in r.stderr,
          "through a pipe stderr holds the cell's bytes unchanged",
          repr(r.stderr))


def replay(wd):
    # A file's code is untrusted too: a raw ESC and BEL in a comment.
    path = os.path.join(wd, "cells.py")
    with open(path, "wb") as f:
        f.write(b"# %%\nprint('P\\x1b]52;c;cmVw\\x07Q')  "
                b"# \x1b]0;code\x07\n")
    t = Pty(["--replay", path, "--plain"], wd)
    code = t.expect(b"# ^[]0;code^G")
    out = t.expect(b"P^[]52;c;cmVw^GQ")
    rc = t.close()
    check(code and out and raw_left(t.out) == [],
          "--replay shows a file's code and the new output escaped on a "
          "terminal", repr(t.out))
    check(rc == 0, "the replay ends well (exit status %s)" % rc)
    # An SGR a cell leaves set ends with that cell's output.
    sgr = os.path.join(wd, "sgr.py")
    with open(sgr, "wb") as f:
        f.write(b"# %%\nprint('\\x1b[8m', end='')\n# %%\nprint('S')\n")
    t = Pty(["--replay", sgr, "--plain"], wd)
    seen = t.expect(b"\x1b[8m") and t.expect(b"In [2]")
    rc = t.close()
    check(seen and reset_before(t.out, b"\x1b[8m", b"In [2]") and rc == 0,
          "--replay resets an SGR a cell left set before the next cell "
          "(exit status %s)" % rc, repr(t.out))
    r = subprocess.run([COIL, "--replay", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, cwd=wd, timeout=120)
    check(b"# \x1b]0;code\x07\n" in r.stdout and
          b"P\x1b]52;c;cmVw\x07Q\n" in r.stdout,
          "--replay through a pipe prints the bytes unchanged",
          repr(r.stdout))
    # coil's own messages name what a file chose: made safe too.
    odd = os.path.join(wd, "no\x1b]0;name\x07.py").encode()
    t = Pty(["--replay", odd, "--plain"], wd)
    said = t.expect(b"no^[]0;name^G.py")
    rc = t.close()
    check(said and raw_left(t.out) == [] and rc == 2,
          "--replay's error names a file escaped on a terminal (exit "
          "status %s)" % rc, repr(t.out))
    r = subprocess.run([COIL, "--replay", odd], stderr=subprocess.PIPE,
                       cwd=wd, timeout=120)
    check(b"no\x1b]0;name\x07.py" in r.stderr,
          "and through a pipe as it is", repr(r.stderr))
    t = Pty(["--plain", "--workdir", odd], wd)
    said = t.expect(b"no^[]0;name^G.py")
    rc = t.close()
    check(said and raw_left(t.out) == [] and rc == 2,
          "so is a command line's error (exit status %s)" % rc, repr(t.out))


def main():
    wd = coiltest.workdir()
    try:
        plain_on_a_terminal(wd)
        plain_sgr_left_set(wd)
        plain_through_a_pipe(wd)
        replay(wd)
    finally:
        coiltest.cleanup(wd)
    done()


main()
