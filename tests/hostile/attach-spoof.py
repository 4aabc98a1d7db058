#!/usr/bin/python3
"""coil --attach talks only to the session that made the socket.

The --listen socket lies in a directory cells can write (the work dir,
as `--listen ./sock/c.sock` would put it), so a cell can remove it and
put its own there.  Under standard and strict:

- --listen warns that cells can write the socket's directory; its key
  (peer.h) is where no cell reads it, and a cell connecting to the real
  socket is refused without hearing the token;
- a person's coil --attach works, and a tool finds the key's token in
  the hello;
- standard: a cell serves its own socket at the path (a thread of the
  worker); coil --attach refuses, naming the path and why, and the cell's
  server receives no byte of what was typed, also when a key names its
  socket (as when its inode is the real socket's, reused);
- a link planted at the path (to a server of the test's, outside the
  sandbox) and a removed socket are refused the same way; strict lets a
  cell make no socket at all;
- the session goes on, and when it ends neither key nor key directory is
  left.

Then, without an attack: --listen in an --allow-write dir warns, one
outside everything cells reach does not, a key directory inside the work
dir is refused, and --sandbox none says that nothing of this holds.
Every path is in temp dirs the test makes and removes.
"""
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "ui"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "hub"))
from coiltest import (COIL, Coil, check, cleanup, done, skip,  # noqa: E402
                      workdir)
from hublib import connect  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

RUN = os.environ["XDG_RUNTIME_DIR"]     # coiltest's, a temp dir
TYPED = "typed_by_the_person = 'not for cells'"


def attach(path):
    """coil --attach with a line already typed: (status, stderr)."""
    p = subprocess.run([COIL, "--attach", path], input=(TYPED + "\n").encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    return p.returncode, p.stderr.decode(errors="replace")


def key_of(path):
    st = os.stat(path, follow_symlinks=False)
    return os.path.join(RUN, "coil", "attach-%d-%d" % (st.st_dev, st.st_ino))


class Decoy:
    """A server of the test's own, outside the sandbox: every connection
    it takes and the bytes each sent."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="coil-dec.", dir="/tmp")
        self.path = os.path.join(self.dir, "s")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(8)
        self.conns = []
        self.stop = False
        self.th = threading.Thread(target=self._serve, daemon=True)
        self.th.start()

    def _serve(self):
        while True:
            c, _ = self.srv.accept()
            if self.stop:
                c.close()
                return
            got = b""
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += b
            c.close()
            self.conns.append(got)

    def close(self):
        """Stop (through a last connection of our own) and join: every
        connection before is counted."""
        self.stop = True
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.path)
        self.th.join()
        self.srv.close()
        cleanup(self.dir)


FAKE = r"""
import json, os, socket, threading
P = %r
os.unlink(P)
fake = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
fake.bind(P)
fake.listen(8)
fake_conns, fake_stop = [], []
def fake_serve():
    while True:
        c, _ = fake.accept()
        if fake_stop:
            c.close()
            return
        got = b""
        try:
            # what a spoof would say: the supervisor's pid, some token
            c.sendall(json.dumps({"event": "hello", "pid": %d,
                                  "token": "0" * 32}).encode() + b"\n")
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got += b
        except OSError:
            pass
        c.close()
        fake_conns.append(got.decode(errors="replace"))
fake_th = threading.Thread(target=fake_serve, daemon=True)
fake_th.start()
"""

FAKE_STOP = r"""
fake_stop.append(1)
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(P)
fake_th.join()
fake.close()
print(json.dumps(fake_conns))
"""

CONNECT = r"""
import socket
with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect(%r)
    line = s.makefile("rb").readline()
line
"""


def profile(prof):
    d = workdir()
    sockdir = os.path.join(d, "sock")
    os.mkdir(sockdir, 0o700)
    path = os.path.join(sockdir, "c.sock")
    # what cells bind and connect to, from their cwd (the work dir): a
    # deep build tree's path is too long for a sockaddr_un
    rel = os.path.relpath(path, d)
    agent = Coil("--sandbox", prof, "--workdir", d, "--listen", path,
                 "--no-record", "--checkpoints", "0")
    decoy = Decoy()
    ui = None
    crafted = None
    try:
        r = agent.run("1")
        check(r.get("status") == "ok", "%s: the session runs" % prof, r)
        err = agent.stderr_text()
        check("--listen: the socket's directory '%s' lies in the work dir"
              % sockdir in err and "which cells can write" in err,
              "%s: --listen warns that cells can write its directory"
              % prof, err)
        kp = key_of(path)
        st = os.stat(kp, follow_symlinks=False)
        with open(kp) as f:
            key = json.load(f)
        check(stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o600 and
              key.get("pid") == agent.proc.pid and
              len(key.get("token", "")) == 32,
              "%s: the key names the supervisor, mode 0600, outside the "
              "work dir" % prof, (oct(st.st_mode), key, agent.proc.pid))
        token = key["token"]

        # a cell can neither read the key nor be told its token
        r = agent.run("open(%r).read()" % kp)
        check(r.get("error") is not None and token not in json.dumps(r),
              "%s: a cell cannot read the key" % prof, r)
        r = agent.run(CONNECT % rel)
        if prof == "standard":
            check("refused" in (r.get("result") or "") and
                  token not in json.dumps(r),
                  "%s: a cell connecting to the real socket is refused, "
                  "without the token" % prof, r)
        else:
            check(r.get("error") is not None and token not in json.dumps(r),
                  "%s: a cell cannot even connect to the socket" % prof, r)

        # the person attaches; a tool checks the hello
        if have_tmux():
            ui = Screen(coil_cmd("--attach", path), 80, 24)
            check(ui.wait(r"attached, \w+"), "%s: coil --attach attaches"
                  % prof, ui.text())
            ui.type("mine = 7")
            check(ui.wait(r"^mine +int +7"),
                  "%s: and the person's cell runs" % prof, ui.text())
            ui.keys("C-d")
            check(ui.wait(r"^EXITED 0"), "%s: Ctrl-D detaches" % prof,
                  ui.text())
            ui.close()
            ui = None
        else:
            skip("%s: coil --attach attaches" % prof, "tmux is not installed")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            connect(s, path)
            hello = json.loads(s.makefile("rb").readline())
        check(hello.get("event") == "hello" and hello.get("token") == token
              and hello.get("pid") == agent.proc.pid,
              "%s: a tool is greeted with the key's token and pid" % prof,
              hello)

        if prof == "standard":
            r = agent.run(FAKE % (rel, agent.proc.pid))
            check(r.get("status") == "ok" and
                  stat.S_ISSOCK(os.stat(path).st_mode),
                  "%s: a cell serves its own socket at the path" % prof, r)
            rc, err = attach(path)
            check(rc != 0 and "refusing to attach to '%s'" % path in err and
                  "a cell may have replaced" in err,
                  "%s: coil --attach refuses the cell's server, naming the "
                  "path" % prof, (rc, err))
            # as when the cell's socket has the real one's inode: a key
            # names it, and the kernel's pid tells the truth
            crafted = key_of(path)
            if crafted != kp:
                with open(crafted, "w") as f:
                    json.dump(key, f)
                os.chmod(crafted, 0o600)
            else:
                crafted = None
            rc, err = attach(path)
            check(rc != 0 and "refusing to attach to '%s'" % path in err and
                  ("served by pid" in err or "served by uid" in err),
                  "%s: also when a key names its socket: the peer is not "
                  "the supervisor" % prof, (rc, err))
            r = agent.run(FAKE_STOP)
            conns = json.loads(r.get("output") or "null")
            check(conns is not None and len(conns) >= 1 and
                  all(c == "" for c in conns),
                  "%s: the cell's server got no byte of what was typed"
                  % prof, r)
        else:
            r = agent.run("import socket\n"
                          "socket.socket(socket.AF_UNIX).bind(%r)"
                          % (rel + ".x"))
            check(r.get("error") is not None and
                  not os.path.exists(path + ".x"),
                  "%s: a cell can make no socket to serve from" % prof, r)

        # a link to another server, and no socket at all
        r = agent.run("import os\nos.unlink(%r)\nos.symlink(%r, %r)"
                      % (path, decoy.path, path))
        check(r.get("status") == "ok" and os.path.islink(path),
              "%s: a cell puts a link at the path" % prof, r)
        rc, err = attach(path)
        check(rc != 0 and "'%s'" % path in err and "not a socket" in err,
              "%s: coil --attach refuses the link" % prof, (rc, err))
        r = agent.run("import os\nos.unlink(%r)" % path)
        rc, err = attach(path)
        check(rc != 0 and "cannot attach to '%s'" % path in err,
              "%s: and a removed socket" % prof, (rc, err))

        r = agent.run("6 * 7")
        check(r.get("result") == "42", "%s: the session goes on" % prof, r)
    finally:
        if ui is not None:
            ui.close()
        decoy.close()
        if crafted is not None and os.path.exists(crafted):
            os.unlink(crafted)
        rc = agent.close()
        cleanup(d)
    check(decoy.conns == [], "%s: the link's server was never reached"
          % prof, decoy.conns)
    check(rc == 0, "%s: the session ends" % prof, agent.stderr_text())
    check(not os.path.exists(os.path.join(RUN, "coil")),
          "%s: neither key nor key directory is left" % prof,
          os.listdir(RUN))


def quiet(args, env=None):
    """A session that runs one cell and ends: (status, stderr)."""
    c = Coil(*args, "--no-record", env=env)
    try:
        c.run("1")
    finally:
        rc = c.close()
    return rc, c.stderr_text()


def warnings():
    d = workdir()
    out = workdir()             # outside the work dir, like $XDG_RUNTIME_DIR
    try:
        os.mkdir(os.path.join(out, "s"), 0o700)
        aw = os.path.join(out, "s", "c.sock")
        rc, err = quiet(["--workdir", d, "--allow-write", out,
                         "--listen", aw])
        check(rc == 0 and "lies in the --allow-write dir '%s'" % out in err,
              "--listen in an --allow-write dir warns", err)
        rc, err = quiet(["--workdir", d, "--listen", aw])
        check(rc == 0 and "warning: --listen" not in err,
              "--listen outside everything cells reach is silent", err)
        rc, err = quiet(["--sandbox", "none", "--workdir", d, "--listen",
                         aw])
        check(rc == 0 and "under --sandbox none" in err and
              "cannot tell their server from this session's" in err,
              "--sandbox none says nothing of this holds", err)
        run = os.path.join(d, "run")
        os.mkdir(run, 0o700)
        p = subprocess.run([COIL, "--agent", "--no-record", "--workdir", d,
                            "--listen", aw], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=dict(os.environ, XDG_RUNTIME_DIR=run),
                           timeout=120)
        err = p.stderr.decode(errors="replace")
        check(p.returncode != 0 and "the attach key's directory" in err and
              "lies in the work dir" in err and "XDG_RUNTIME_DIR" in err,
              "a key directory cells can read is refused", err)
        check(not os.path.exists(aw) and os.listdir(run) == [],
              "and leaves no socket, no key, no key directory",
              os.listdir(run))
    finally:
        cleanup(d)
        cleanup(out)


for prof in ("standard", "strict"):
    profile(prof)
warnings()
done()
