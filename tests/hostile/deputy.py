#!/usr/bin/python3
"""The supervisor is no cell's deputy: it runs with the user's rights
(root here), so no file it writes, appends to, renames, removes or reads
for the user is reached through a link, a FIFO or a hard link that a
cell could have planted where cells may write (the work dir), in this
session or an earlier one; and coil's own state dir, when it lies in the
work dir (a person who starts coil in their home), is hidden from cells.

The decoys are the test's own: a directory beside the work dir (so a
hard link into the work dir is possible), which cells cannot write,
holding a target file and a secret.  Each attack aims at them, under
standard and strict; afterwards every decoy is as it was, the secret is
in no answer and no file coil wrote, and each refusal names the path and
says why.  The controls: the same paths, when they are plain files, are
used as before.
"""
import json
import os
import pty
import select
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, cleanup, done,  # noqa: E402
                      workdir)

TARGET = b"DECOY-TARGET-UNTOUCHED\n"
SECRET = "COIL-DECOY-SECRET-5f2a"


def decoys():
    d = workdir("coil-decoy-")
    with open(os.path.join(d, "target"), "wb") as f:
        f.write(TARGET)
    with open(os.path.join(d, "secret"), "w") as f:
        f.write(SECRET + "\n")
    os.chmod(os.path.join(d, "target"), 0o600)
    return d


def intact(d, what):
    """The decoy dir holds its two files, as they were, and nothing
    else."""
    with open(os.path.join(d, "target"), "rb") as f:
        t = f.read()
    check(sorted(os.listdir(d)) == ["secret", "target"] and t == TARGET,
          what + ": the decoys are untouched", [os.listdir(d), t])


def run(args, stdin="", env=None, cwd=None):
    return subprocess.run([COIL] + args, input=stdin, capture_output=True,
                          text=True, timeout=120, env=env, cwd=cwd)


def plain_tty(args, lines, env):
    """coil --plain on a pseudo-terminal: types each line, then Ctrl-D;
    everything it showed, and its exit status."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(COIL, [COIL, "--plain"] + args, env)
    out = b""

    def read_until(pred, timeout=60):
        nonlocal out
        end = time.time() + timeout
        while not pred(out) and time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.5)
            if r:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    return
                if not chunk:
                    return
                out += chunk
    read_until(lambda o: b">>> " in o)
    for n, line in enumerate(lines, 1):
        os.write(fd, line.encode() + b"\r")
        read_until(lambda o: o.count(b">>> ") > n)
    os.write(fd, b"\x04")
    read_until(lambda o: False, timeout=30)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return out.decode(errors="replace"), os.waitstatus_to_exitcode(status)


for prof in ("standard", "strict"):
    D = decoys()
    W = workdir()
    T = os.path.join(D, "target")
    base = ["--sandbox", prof, "--workdir", W]

    # --export: a link at the notebook's name, planted before the start,
    # is refused; one planted by a cell (and one at the name the old
    # temp file had) is replaced by the notebook, never followed.
    nb = os.path.join(W, "nb.ipynb")
    os.symlink(T, nb)
    p = run(["--agent", "--no-record", "--export", nb] + base, '{"code":"1"}')
    check(p.returncode == 1 and nb in p.stderr and "symbolic link" in
          p.stderr and not p.stdout, prof + ": --export to a planted link "
          "is refused at the start, naming it", [p.returncode, p.stderr])
    os.unlink(nb)
    with Coil("--no-record", "--export", nb, *base) as c:
        r = c.run("import os\nos.symlink(%r, %r)\nos.symlink(%r, %r)\n"
                  "print('%s')" % (T, nb, T, nb + ".tmp%d" % c.pid,
                                   SECRET[:5]))
        check(r.get("status") == "ok", prof + ": a cell plants links at "
              "the notebook's name and its old temp name", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
    check(not os.path.islink(nb) and json.load(open(nb))["cells"],
          prof + ": the notebook replaced the cell's link", nb)
    intact(D, prof + " --export")

    # --record: a link, a hard link and a FIFO at the transcript's path
    # are refused at the start (the FIFO without a hang).
    for kind, make in (("symbolic link", lambda p: os.symlink(T, p)),
                       ("hard links", lambda p: os.link(T, p)),
                       ("not a regular file", os.mkfifo)):
        t = os.path.join(W, "t.jsonl")
        make(t)
        p = run(["--agent", "--record", t] + base, '{"code":"1"}')
        check(p.returncode == 1 and t in p.stderr and kind in p.stderr,
              "%s: --record at a planted %s is refused" % (prof, kind),
              [p.returncode, p.stderr])
        os.unlink(t)
    intact(D, prof + " --record")
    # ... and a live transcript a cell swaps for a link is still the file
    # coil opened: the decoy gets nothing.
    t = os.path.join(W, "live.jsonl")
    with Coil("--record", t, *base) as c:
        r = c.run("import os\nos.rename(%r, %r)\nos.symlink(%r, %r)"
                  % (t, t + ".away", T, t))
        r = c.run("'after the swap'")
        check(r.get("result") == "'after the swap'", prof + ": the session "
              "goes on after the cell swapped its transcript", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
    with open(t + ".away") as f:
        check("after the swap" in f.read(), prof + ": the transcript kept "
              "going to the file coil opened", t)
    intact(D, prof + " live --record")

    # --replay of a planted link to the secret: refused, the secret
    # shown nowhere (a replayed "cell" would have been its text).
    planted = os.path.join(W, "cells.py")
    os.symlink(os.path.join(D, "secret"), planted)
    p = run(["--replay", planted, "--plain"] + base)
    check(p.returncode == 2 and "cannot read '%s'" % planted in p.stderr and
          "symbolic link" in p.stderr and SECRET not in p.stdout + p.stderr,
          prof + ": --replay of a planted link is refused", [p.returncode,
                                                             p.stderr])
    os.unlink(planted)

    # --allow-write through a link an earlier cell planted in the work
    # dir: the sandbox would have bound what it points at.  Refused.
    ln = os.path.join(W, "data")
    os.symlink(D, ln)
    p = run(["--agent", "--no-record", "--allow-write", ln] + base,
            '{"code":"1"}')
    check(p.returncode == 2 and "--allow-write '%s'" % ln in p.stderr and
          "symbolic link" in p.stderr, prof + ": --allow-write through a "
          "planted link is refused", [p.returncode, p.stderr])
    # --listen in a dir reached through one: refused, nothing made there
    p = run(["--agent", "--no-record", "--listen",
             os.path.join(ln, "s", "coil.sock")] + base, '{"code":"1"}')
    check(p.returncode != 0 and "symbolic link" in p.stderr,
          prof + ": --listen through a planted link is refused",
          [p.returncode, p.stderr])
    os.unlink(ln)
    intact(D, prof + " --allow-write, --listen")

    # coil's state dir in the work dir (HOME there, as for a person who
    # starts coil in their home): said at the start, hidden from cells,
    # and the dirs on the way to it cannot be moved away.
    home = os.path.join(W, "home")
    os.makedirs(home)
    # (an empty XDG_STATE_HOME is not absolute: ignored, as XDG says)
    env = dict(os.environ, HOME=home, XDG_STATE_HOME="")
    state = os.path.join(home, ".local", "state", "coil")
    with Coil(*base, env=env) as c:
        r = c.run("import os\nout = []\n"
                  "for f, *a in ((os.listdir, %r), (open, %r, 'w'),\n"
                  "              (os.rename, %r, %r), (os.rename, %r, %r),\n"
                  "              (os.symlink, %r, %r)):\n"
                  "    try:\n"
                  "        f(*a)\n"
                  "        out.append('done')\n"
                  "    except OSError as e:\n"
                  "        out.append(type(e).__name__)\n"
                  "out" % (state, state + "/history",
                           os.path.join(home, ".local"),
                           os.path.join(W, "away"),
                           os.path.join(home, ".local", "state"),
                           os.path.join(home, ".local", "s2"),
                           T, state + "/transcripts/x.jsonl"))
        got = r.get("result") or ""
        check(r.get("status") == "ok" and "done" not in got,
              prof + ": a cell can neither list, write, move away nor "
              "plant in coil's state dir", r)
        r = c.run("6 * 7")
        check(r.get("result") == "42", prof + ": the session goes on", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
        check("state dir '%s' lies where cells may write" % state in
              c.stderr_text(), prof + ": said once at the start",
              c.stderr_text())
    made = os.listdir(os.path.join(state, "transcripts"))
    check(len(made) == 1 and not os.path.exists(os.path.join(W, "away")),
          prof + ": its transcript is there, the state dir in place", made)

    # History on a terminal: the file is kept in the hidden state dir;
    # a --history that is a planted link is not used, and said.
    out, st = plain_tty(base, ["x = 1", "x + 41"], env)
    with open(os.path.join(state, "history")) as f:
        check("x + 41" in f.read(), prof + ": the history file is kept",
              out)
    hist = os.path.join(W, "hist")
    os.symlink(T, hist)
    out, st = plain_tty(base + ["--history", hist], ["y = 2"], env)
    check(st == 0 and "no history file '%s'" % hist in out and
          "symbolic link" in out, prof + ": a planted --history link is "
          "said and not followed", out)
    intact(D, prof + " history")

    # A home cells may write: what the pager would read there is theirs.
    # A cell plants a ~/.lesskey whose LESSOPEN runs a command, and
    # help() pages (with PAGER naming a program of the cell's, too):
    # neither runs.
    mark = os.path.join(W, "pager-ran")
    with open(os.path.join(home, ".lesskey"), "w") as f:
        f.write("#env\nLESSOPEN=|touch %s; cat %%s\n" % mark)
    os.makedirs(os.path.join(home, ".config"), exist_ok=True)
    with open(os.path.join(home, ".config", "lesskey"), "w") as f:
        f.write("#env\nLESSOPEN=|touch %s; cat %%s\n" % mark)
    evil = os.path.join(W, "evilpager")
    with open(evil, "w") as f:
        f.write("#!/bin/sh\ntouch %s\ncat\n" % mark)
    os.chmod(evil, 0o755)
    out, st = plain_tty(base, ["help(len)", "q"],
                        dict(env, PAGER=evil, LESSOPEN="|touch %s; cat %%s"
                             % mark))
    check("your home lies where cells may write" in out and
          not os.path.exists(mark), prof + ": a home cells may write: "
          "said, and no pager config of theirs runs", out)
    os.unlink(os.path.join(home, ".lesskey"))

    # An older coil's state dir a cell replaced with a link (before the
    # sandbox hid it): the next coil follows none of it.
    cleanup(os.path.join(home, ".local"))
    os.makedirs(os.path.join(home, ".local"))
    os.symlink(D, os.path.join(home, ".local", "state"))
    with Coil(*base, env=env) as c:
        r = c.run("1 + 1")
        check(r.get("result") == "2", prof + ": a session starts beside a "
              "planted state dir", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
        check("no transcript of this session" in c.stderr_text() and
              "symbolic link" in c.stderr_text(), prof + ": it says why "
              "it keeps no transcript", c.stderr_text())
    intact(D, prof + " planted state dir")
    cleanup(W)
    cleanup(D)

# The state dir is hidden wherever cells would see it: in a home reached
# through a link (the binds have real paths), and in an --allow-read dir.
D = decoys()
for prof in ("standard", "strict"):
    W = workdir()
    real = os.path.join(W, "realhome")
    os.makedirs(real)
    link = os.path.join(D, "homelink")          # the user's, outside
    os.symlink(real, link)
    env = dict(os.environ, HOME=link, XDG_STATE_HOME="")
    state = os.path.join(real, ".local", "state", "coil")
    with Coil("--sandbox", prof, "--workdir", W, env=env) as c:
        r = c.run("import os\ntry:\n    os.listdir(%r)\nexcept OSError as e:"
                  "\n    print(type(e).__name__)" % state)
        check("PermissionError" in r.get("output", "") or
              "FileNotFoundError" in r.get("output", ""), prof + ": a home "
              "reached through a link: its state dir is hidden", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
    os.unlink(link)
    # --allow-read of a home outside the work dir: its state hidden too
    H = workdir("coil-home-")
    env = dict(os.environ, HOME=H, XDG_STATE_HOME="")
    state = os.path.join(H, ".local", "state", "coil")
    os.makedirs(state)
    with open(os.path.join(state, "history"), "w") as f:
        f.write("#1\n" + SECRET + "\n")
    with Coil("--sandbox", prof, "--workdir", W, "--allow-read", H,
              env=env) as c:
        r = c.run("import os\ntry:\n    print(open(%r).read())\n"
                  "except OSError as e:\n    print(type(e).__name__)"
                  % os.path.join(state, "history"))
        check(SECRET not in json.dumps(r), prof + ": --allow-read of a "
              "home: coil's history in it is hidden", r)
        check(c.close() == 0, prof + ": coil exits 0", c.stderr_text())
    # --workdir through a link in an --allow-write dir: refused
    A = workdir("coil-aw-")
    os.symlink(D, os.path.join(A, "proj"))
    p = run(["--agent", "--no-record", "--sandbox", prof, "--allow-write",
             A, "--workdir", os.path.join(A, "proj")], '{"code":"1"}')
    check(p.returncode == 2 and "--workdir" in p.stderr and
          "symbolic link" in p.stderr, prof + ": --workdir through a "
          "planted link is refused", [p.returncode, p.stderr])
    cleanup(A)
    cleanup(H)
    cleanup(W)
intact(D, "homes and work dirs through links")
cleanup(D)

# Pruning old transcripts removes names in the transcripts dir only: a
# link there goes, what it points at stays.
D = decoys()
S = workdir("coil-state-")
tdir = os.path.join(S, "coil", "transcripts")
os.makedirs(tdir)
for i in range(120):
    p = os.path.join(tdir, "2000%04dT000000Z-1.jsonl" % i)
    if i < 3:
        os.symlink(os.path.join(D, "target"), p)
    else:
        open(p, "w").close()
env = dict(os.environ, XDG_STATE_HOME=S)
with Coil("--workdir", D, env=env) as c:
    c.run("1")
    check(c.close() == 0, "coil exits 0", c.stderr_text())
left = os.listdir(tdir)
check(len(left) == 100 and not any(os.path.islink(os.path.join(tdir, n))
                                   for n in left),
      "the oldest transcripts, links among them, were pruned", len(left))
intact(D, "pruning")
cleanup(S)
cleanup(D)
done()
