#!/usr/bin/python3
"""Socket activation (sdfd.h) with systemd-socket-activate, systemd's own
tool for it: coil --mcp --http systemd serves MCP over HTTP on the
socket passed (a raw client and the official SDK's client answered);
--inetd --accept gives one stdio MCP session per connection, each its
own, ended when its client goes (mid-cell too); coil --agent --listen
systemd serves the attach socket systemd bound (a script and coil
--attach on it; the socket is left in place); no cell sees LISTEN_* or
the socket.  And the refusals, exit 2 naming
what was passed: no LISTEN_FDS, another process's LISTEN_PID, a UDP
socket, a TCP socket that does not listen, a unix socket given to
--http, a TCP one given to --listen, an abstract unix socket, two
sockets and no name, a name not passed; a socket on 0.0.0.0 without a
token is refused as --http 0.0.0.0:PORT is.

The refusals pass sockets the test made, with LISTEN_PID set by a shell
that then execs coil (its pid is coil's), as systemd does.
"""
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "ui"))
from coiltest import (COIL, Coil, check, cleanup, done, skip_all,  # noqa: E402
                      wait_for, workdir)
from mcphttp import HttpCoil, text  # noqa: E402
from mcplib import install, node_major  # noqa: E402

SSA = shutil.which("systemd-socket-activate")
if SSA is None:
    skip_all("systemd-socket-activate is not installed (package systemd)")
TOKEN = "coil-activation-token-0123456789"
# systemd-socket-activate passes its children only what -E names.
PASS_ENV = ("PATH", "XDG_RUNTIME_DIR", "XDG_STATE_HOME")


class Activated:
    """systemd-socket-activate -l ADDR [ssa args] COIL args, its stderr
    read as it comes; .ok once it listens (False: it could not)."""

    def __init__(self, addr, ssa_args, args, env_names=(), env=None):
        cmd = [SSA, "-l", addr, *ssa_args]
        for name in PASS_ENV + tuple(env_names):
            cmd += ["-E", name]
        self.proc = subprocess.Popen(cmd + [COIL, *args],
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        self.err = b""
        self.heard = threading.Condition()
        self.eof = False
        threading.Thread(target=self._read, daemon=True).start()
        self.ok = self.wait_for(b"Listening on ")

    def _read(self):
        while True:
            chunk = os.read(self.proc.stderr.fileno(), 4096)
            with self.heard:
                self.err += chunk
                self.eof = not chunk
                self.heard.notify_all()
            if not chunk:
                return

    def wait_for(self, what, timeout=60):
        with self.heard:
            self.heard.wait_for(lambda: what in self.err or self.eof,
                                timeout)
            return what in self.err

    def text(self):
        with self.heard:
            return self.err.decode(errors="replace")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def activate_tcp(ssa_args, args, **kw):
    """Activated on 127.0.0.1 at a free port: another process may take
    the port between our look and systemd-socket-activate's bind, so a
    few are tried.  (Activated, port)."""
    for _ in range(5):
        port = free_port()
        a = Activated("127.0.0.1:%d" % port, ssa_args, args, **kw)
        if a.ok:
            return a, port
        a.close()
    raise RuntimeError("systemd-socket-activate would not listen: " +
                       a.text())


# ---------------------------------------------------------------- HTTP

def http_client(port):
    """mcphttp's raw client on a coil someone else started."""
    c = HttpCoil.__new__(HttpCoil)
    c.port, c.sid, c.version, c.next_id = port, None, "2025-11-25", 0
    return c


def call(c, code):
    st, r, sse = c.rpc("tools/call", {"name": "run_python",
                                      "arguments": {"code": code}},
                       headers=c.headers({"Authorization": "Bearer " +
                                          TOKEN}))
    if st != 200 or not hasattr(sse, "until_answer"):
        return {"status": st, "body": repr(sse)}
    _, answer, _ = sse.until_answer()
    sse.drop()
    return answer


def test_http(w):
    env = dict(os.environ, COIL_HTTP_TOKEN=TOKEN)
    a, port = activate_tcp([], ["--mcp", "--http", "systemd", "--no-record",
                                "--workdir", w], env_names=(
                                    "COIL_HTTP_TOKEN",), env=env)
    try:
        c = http_client(port)
        auth = {"Authorization": "Bearer " + TOKEN}
        # The first connection is what starts coil: it waits in the
        # socket's backlog meanwhile, as under systemd.
        st, r, body = c.rpc("initialize", {
            "protocolVersion": c.version, "capabilities": {},
            "clientInfo": {"name": "coil-tests", "version": "1"}},
            headers=c.headers(auth, sid=False))
        c.sid = r.getheader("Mcp-Session-Id")
        check(st == 200 and c.sid, "the first connection starts coil, "
              "and initialize makes a session on systemd's socket",
              (st, body[:300]))
        check(a.wait_for(b"serving MCP on http://127.0.0.1:%d/mcp "
                         b"(systemd's socket) (bearer token required)"
                         % port),
              "coil says it serves the passed socket, token required",
              a.text())
        ans = call(c, "import os\nsorted(k for k in os.environ if "
                   "k.startswith('LISTEN'))")
        check("[]" in text(ans), "no cell sees LISTEN_PID, LISTEN_FDS or "
              "LISTEN_FDNAMES", ans)
        link = os.readlink("/proc/%d/fd/3" % a.proc.pid)
        ans = call(c, "import os\nlinks = []\nfor f in os.listdir("
                   "'/proc/self/fd'):\n    try:\n        links.append("
                   "os.readlink('/proc/self/fd/' + f))\n    except OSError:"
                   "\n        pass\n%r in links" % link)
        check(link.startswith("socket:") and "False" in text(ans),
              "the worker does not hold the listening socket (%s)" % link,
              ans)
        st, _, body = c.post({"jsonrpc": "2.0", "id": 99,
                              "method": "tools/list"})
        check(st == 401, "a request without the token is refused (401)",
              (st, body[:200]))
        if node_major() is None or node_major() < 18:
            check(True, "# SKIP the SDK client: Node.js 18 or newer is "
                  "not installed")
            return
        d, why = install()
        if d is None:
            check(True, "# SKIP the SDK client: " + why)
            return
        r = subprocess.run(["node", os.path.join(d, "http-v2.mjs"),
                            "http://127.0.0.1:%d/mcp" % port, TOKEN,
                            "legacy"], capture_output=True, text=True,
                           timeout=600)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = {"error": "no JSON from http-v2.mjs: %r %r"
                   % (r.stdout[-2000:], r.stderr[-2000:])}
        check(out.get("error") is None and out.get("session") and
              ": 42" in out.get("first", "") and
              ": 21" in out.get("second", ""),
              "the official SDK's client runs cells on systemd's socket",
              out)
    finally:
        rc = a.close()
    check(rc in (0, 143), "coil ends on SIGTERM", (rc, a.text()[-2000:]))


# ------------------------------------------------ per connection, stdio

class Line:
    """One TCP connection speaking MCP's stdio framing: a line each."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.buf = b""
        self.n = 0

    def ask(self, method, params=None):
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": method}
        if params is not None:
            msg["params"] = params
        self.s.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            while b"\n" not in self.buf:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise EOFError("coil closed the connection")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            m = json.loads(line)
            if m.get("id") == self.n:
                return m

    def tell(self, method):
        self.s.sendall(json.dumps({"jsonrpc": "2.0", "method": method})
                       .encode() + b"\n")

    def run(self, code):
        return text(self.ask("tools/call", {"name": "run_python",
                                            "arguments": {"code": code}}))

    def end(self):
        """Shut our side: coil answers what it owes and closes its own."""
        self.s.shutdown(socket.SHUT_WR)
        rest = b""
        while True:
            chunk = self.s.recv(65536)
            if not chunk:
                break
            rest += chunk
        self.s.close()
        return rest


def test_inetd(w):
    a, port = activate_tcp(["--accept", "--inetd"],
                           ["--mcp", "--no-record", "--workdir", w])
    try:
        one, two = Line(port), Line(port)
        for c in (one, two):
            r = c.ask("initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "coil-tests", "version": "1"}})
            check(r.get("result", {}).get("serverInfo", {}).get("name") ==
                  "coil", "a connection is an MCP session on stdio", r)
            c.tell("notifications/initialized")
        check("Out[1]: 42" in one.run("mine = 41\nmine + 1"),
              "the first connection's session runs a cell", one.run("1"))
        t = two.run("'mine' in dir()")
        check("False" in t, "the second connection's session is another "
              "session", t)
        check("Out[" in two.run("2 + 2"), "and runs its own cells")
        check(one.end() == b"", "shutting the connection's writing half "
              "ends its session, nothing more said")
        check(two.end() == b"", "and the other's")
        three = Line(port)
        three.ask("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "coil-tests", "version": "1"}})
        three.s.sendall(json.dumps({
            "jsonrpc": "2.0", "id": 9, "method": "tools/call",
            "params": {"name": "run_python", "arguments": {
                "code": "import time\ntime.sleep(1)"}}}).encode() + b"\n")
        three.s.close()
        check(wait_for(lambda: a.text().count("died with code 0") == 3,
                       120),
              "each connection's coil exits 0, one whose client closed "
              "the connection while its cell ran too", a.text()[-3000:])
    finally:
        a.close()


# ------------------------------------------------------------- --listen

def test_listen(w):
    sockdir = tempfile.mkdtemp(prefix="coil-sa.", dir="/tmp")
    path = os.path.join(sockdir, "s")
    cmd = [SSA, "-l", path]
    for name in PASS_ENV:
        cmd += ["-E", name]
    agent = Coil(argv=cmd + [COIL, "--agent", "--listen", "systemd",
                             "--no-record", "--workdir", w])
    ui = None
    try:
        check(wait_for(lambda: os.path.exists(path), 60),
              "systemd-socket-activate binds the unix socket")
        import uilib
        r = uilib.socket_call(path, {"id": 1, "code": "import os\nsorted(k "
                                     "for k in os.environ if "
                                     "k.startswith('LISTEN'))"})
        check(r is not None and r.get("result") == "[]" and
              r.get("origin") == "person",
              "a script's connection starts coil, and its cell runs "
              "(no LISTEN_* in the cell's environment)", r)
        check(agent.run("a = 41\na + 1").get("result") == "42",
              "the agent on stdin shares the session")
        if shutil.which("tmux") is None:
            check(True, "# SKIP coil --attach: tmux is not installed")
        else:
            ui = uilib.Screen(uilib.coil_cmd("--attach", path), 80, 24)
            check(ui.wait(r"attached, \w+") and ui.wait(r"^a +int +41"),
                  "coil --attach on systemd's socket checks its key and "
                  "attaches", ui.text())
            ui.type("b = a + 1")
            check(ui.wait(r"^b +int +42"), "the person runs a cell",
                  ui.text())
            v = agent.call({"op": "vars"})
            check(any(x["name"] == "b" for x in v.get("vars", [])),
                  "the agent sees it", v)
            ui.keys("C-d")
            check(ui.wait(r"^EXITED 0"), "the UI detaches", ui.text())
        rc = agent.close()
        check(rc == 0, "the agent's session ends", (rc, agent.stderr_text()))
        keys = os.path.join(os.environ["XDG_RUNTIME_DIR"], "coil")
        check(os.path.exists(path) and not any(
            f.startswith("attach-") for f in (os.listdir(keys) if
                                              os.path.isdir(keys) else [])),
              "systemd's socket is left where it is, coil's key removed",
              os.listdir(sockdir))
    finally:
        if ui is not None:
            ui.close()
        agent.kill()
        shutil.rmtree(sockdir, ignore_errors=True)


# ------------------------------------------------------------ refusals

def passed(socks, args, names=None, pid=None):
    """coil args, started by bash (dash takes no fd above 9), which
    passes socks from fd 3 on with LISTEN_PID its own pid (pid, when
    given, instead) and execs coil: (exit status, stderr)."""
    high = [fcntl.fcntl(s.fileno(), fcntl.F_DUPFD_CLOEXEC, 100)
            for s in socks]
    redir = " ".join("%d<&%d" % (3 + i, fd) for i, fd in enumerate(high))
    script = ('LISTEN_PID=%s LISTEN_FDS=%d; export LISTEN_PID LISTEN_FDS; '
              '%sexec "$@" %s' % (pid if pid is not None else "$$",
                                  len(socks), "LISTEN_FDNAMES=%s; export "
                                  "LISTEN_FDNAMES; " % names if names
                                  else "", redir))
    try:
        r = subprocess.run(["bash", "-c", script, "sh", COIL, "--no-record",
                            *args], pass_fds=high, capture_output=True,
                           text=True, timeout=120,
                           stdin=subprocess.DEVNULL)
    finally:
        for fd in high:
            os.close(fd)
    return r.returncode, r.stderr


def listening(family=socket.AF_INET, addr=("127.0.0.1", 0), backlog=True):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.bind(addr)
    if backlog:
        s.listen(4)
    return s


def test_refusals(w):
    http = ["--mcp", "--http", "systemd", "--workdir", w]
    listen = ["--agent", "--listen", "systemd", "--workdir", w]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("LISTEN_")}
    r = subprocess.run([COIL, "--no-record", *http], env=env,
                       capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and "no socket was passed" in r.stderr and
          "LISTEN_FDS" in r.stderr, "no LISTEN_FDS: refused, exit 2",
          (r.returncode, r.stderr))
    sockdir = tempfile.mkdtemp(prefix="coil-sa.", dir="/tmp")
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp, idle = listening(), listening(backlog=False)
    unix = listening(socket.AF_UNIX, os.path.join(sockdir, "u"))
    abstract = listening(socket.AF_UNIX, "\0coil-test-%d" % os.getpid())
    anyaddr = listening(addr=("0.0.0.0", 0))
    cases = [
        ([tcp], http, None, "1", "are for another process (LISTEN_PID 1",
         "another process's LISTEN_PID"),
        ([udp], http, None, None, "is an IPv4 datagram socket",
         "a UDP socket given to --http"),
        ([idle], http, None, None, "IPv4 stream socket that does not "
         "listen", "a TCP socket that does not listen"),
        ([unix], http, None, None, "is a unix stream socket; --http takes "
         "a listening TCP socket", "a unix socket given to --http"),
        ([tcp], listen, None, None, "is an IPv4 stream socket; --listen "
         "takes a listening unix stream socket",
         "a TCP socket given to --listen"),
        ([udp, unix], http, "a:b", None, "2 sockets were passed "
         "(LISTEN_FDNAMES 'a:b'): pick one with systemd:NAME",
         "two sockets and no name"),
        ([udp, unix], http[:2] + ["systemd:c"] + http[3:], "a:b", None,
         "no socket of that name was passed", "a name not passed"),
        ([udp, unix], http[:2] + ["systemd:b"] + http[3:], "a:b", None,
         "the socket passed (fd 4) is a unix stream socket",
         "systemd:b takes the second socket"),
    ]
    try:
        for socks, args, names, pid, want, what in cases:
            rc, err = passed(socks, args, names, pid)
            check(rc == 2 and want in err, what + ": refused, exit 2",
                  (rc, err))
        rc, err = passed([abstract], listen)
        check(rc == 2 and "not bound to an absolute path" in err,
              "an abstract unix socket given to --listen: refused, exit 2",
              (rc, err))
        rc, err = passed([anyaddr], http)
        check(rc == 1 and "is not a loopback address: give a bearer token"
              in err, "a socket on 0.0.0.0 needs a token, as --http "
              "0.0.0.0:PORT does", (rc, err))
    finally:
        for s in (udp, tcp, idle, unix, abstract, anyaddr):
            s.close()
        shutil.rmtree(sockdir, ignore_errors=True)


def main():
    w = workdir()
    try:
        test_refusals(w)
        test_inetd(w)
        test_listen(w)
        test_http(w)
    finally:
        cleanup(w)
    done()


main()
