#!/usr/bin/env python3
"""Branches at the plain REPL, on a real pseudo-terminal (issue 26):
%fork makes branches from the state at the prompt and says how to go
there; %sessions is a table (the prompt's own session starred); %switch
goes to a branch and the prompt names it ("[b1] >>> ", "[b1] ... "),
while on main it is python's own; each branch keeps its own namespace.
%close of another branch, of the prompt's own (the prompt says so until
%switch), and the refusals: an unknown session, the last session, a bad
%fork argument, each said with the session going on.
"""
import os
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, workdir  # noqa: E402


class Pty:
    """coil on a pty; .out is every byte it wrote there."""

    def __init__(self, args, cwd, env):
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(
            [COIL, *args], stdin=slave, stdout=slave, stderr=slave,
            cwd=cwd, start_new_session=True, env=env)
        os.close(slave)
        self.out = b""
        self.pos = 0
        self.seen = b""

    def expect(self, want, timeout=60):
        """Read until want shows after the last match; whether it did
        (the timeout only ends a run that went wrong).  .seen is what
        came between the last match and this one."""
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
            self.seen = self.out[self.pos:]
            return False
        self.seen = self.out[self.pos:at]
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


def tail(t):
    return repr(t.out[-3000:])


wd = workdir()
state = workdir("coil-state-")
t = Pty(["--plain"], wd, dict(os.environ, TERM="xterm", PAGER="cat",
                              XDG_STATE_HOME=state))
ok = t.expect(b">>> ")
t.type("x = 7")
ok = t.expect(b">>> ") and ok
check(ok, "the REPL starts on main with python's prompt", tail(t))

t.type("%fork -n 2")
check(t.expect(b"forked 'b1', 'b2' from 'main' at cell 1 (") and
      t.expect(b" ms): %switch b1 to go there") and t.expect(b">>> "),
      "%fork -n 2 names the branches, whence, and how to go there",
      tail(t))
check(b"coil: note: " in t.seen or b"coil: note: " in t.out,
      "and says once what the branches share", tail(t))

t.type("%sessions")
ok = t.expect(b"  name ") and t.expect(b" parent ") and \
    t.expect(b" cell ") and t.expect(b" state ")
ok = t.expect(b"\r\n* main ") and ok
ok = t.expect(b"\r\n  b1 ") and t.expect(b" main ") and ok
ok = t.expect(b"\r\n  b2 ") and ok
ok = t.expect(b"3 sessions of at most ") and t.expect(b", sharing ") and ok
check(ok and t.expect(b">>> "),
      "%sessions is a table: main starred as the prompt's, the branches "
      "with their parent", tail(t))

t.type("%switch b1")
check(t.expect(b"now on 'b1' (was 'main')") and t.expect(b"[b1] >>> "),
      "%switch b1 says so, and the prompt names b1", tail(t))
t.type("x = 10")
t.expect(b"[b1] >>> ")
t.type("(x, 'in b1')")
check(t.expect(b"(10, 'in b1')") and t.expect(b"[b1] >>> "),
      "a cell at that prompt runs in b1", tail(t))
t.type("for i in range(2):")
ok = t.expect(b"[b1] ... ")
t.type("    x += i")
t.type("")
check(ok and t.expect(b"[b1] >>> "),
      "the continuation prompt names the branch too", tail(t))

t.type("%switch b2")
ok = t.expect(b"[b2] >>> ")
t.type("(x, 'in b2')")
check(ok and t.expect(b"(7, 'in b2')") and t.expect(b"[b2] >>> "),
      "b2 has the state of the fork, untouched by b1", tail(t))

t.type("%switch main")
ok = t.expect(b"now on 'main' (was 'b2')") and t.expect(b">>> ")
check(ok and not t.seen.endswith(b"] "),
      "back on main the prompt is python's own", tail(t))
t.type("(x, 'in main')")
check(t.expect(b"(7, 'in main')") and t.expect(b">>> "),
      "main kept its own x", tail(t))
t.type("%switch b1")
t.expect(b"[b1] >>> ")
t.type("(x, 'b1 again')")
check(t.expect(b"(11, 'b1 again')") and t.expect(b"[b1] >>> "),
      "and b1 kept its own", tail(t))
# input() in a cell on the branch reads the line typed at the REPL
t.type("input('say: ') + '!'")
ok = t.expect(b"say: ")
t.type("hello")
check(ok and t.expect(b"'hello!'") and t.expect(b"[b1] >>> "),
      "input() on the branch reads the line typed here", tail(t))

t.type("%switch nope")
ok = t.expect(b"coil: ") and t.expect(b"no session 'nope'")
check(ok and t.expect(b">>> ") and t.seen.endswith(b"[b1] "),
      "an unknown session is refused, naming it; the prompt stays",
      tail(t))
t.type("%fork -n x")
check(t.expect(b"coil: ") and t.expect(b"[b1] >>> "),
      "a bad %fork argument is said, and the session goes on", tail(t))

t.type("%close b2")
check(t.expect(b"closed 'b2' at cell ") and t.expect(b"[b1] >>> "),
      "%close of another branch", tail(t))
t.type("%close b1")
ok = t.expect(b"closed 'b1' at cell ") and \
    t.expect(b"'b1' was this prompt's session: %switch to another")
check(ok and t.expect(b"[b1 closed] >>> "),
      "%close of the prompt's own branch: a note, and the prompt says "
      "it is closed", tail(t))
t.type("x")
check(t.expect(b"[b1 closed] >>> ") and b"'b1'" in t.seen,
      "a cell there is refused, and the REPL goes on", tail(t))
t.type("%switch main")
ok = t.expect(b"now on 'main'") and t.expect(b">>> ")
t.type("(x, 'main at last')")
check(ok and t.expect(b"(7, 'main at last')") and t.expect(b">>> "),
      "%switch main after it, and main is as it was", tail(t))
t.type("%close main")
check(t.expect(b"coil: ") and t.expect(b">>> "),
      "the last session cannot be closed", tail(t))
t.type("(x, 'still here')")
check(t.expect(b"(7, 'still here')") and t.expect(b">>> "),
      "and goes on", tail(t))
os.write(t.master, b"\x04")
rc = t.close()
check(rc == 0, "Ctrl-D ends the REPL cleanly (exit status %s)" % rc)
cleanup(wd)
cleanup(state)
done()
