#!/usr/bin/python3
"""share/systemd/'s units as built (the services name the installed
coil): systemd-analyze verify finds nothing to say of any instance; the
sockets listen on loopback, coil@.socket one service per connection and
coil-http@.socket one per instance; no setting that would take from
coil what its own sandbox needs; and each service's ExecStart= as
written, run the way its socket runs it (systemd-socket-activate:
--inetd --accept, or the listening socket passed), answers MCP.

systemd-analyze checks an ExecStart='s program exists, so the copies it
reads name the coil under test instead of the installed one.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, skip_all, workdir  # noqa

UNITS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(COIL))),
                     "share", "systemd")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "share", "systemd")
NAMES = ("coil@.socket", "coil@.service", "coil-http@.socket",
         "coil-http@.service")
# What coil's sandbox cannot do without (coil@.service says why).
BREAKS = ("RestrictNamespaces", "PrivateUsers", "SystemCallFilter",
          "ProtectControlGroups", "ProtectKernelTunables",
          "MemoryDenyWriteExecute")


def unit(name):
    d = SRC if name.endswith(".socket") else UNITS
    with open(os.path.join(d, name)) as f:
        return f.read()


def setting(text, key):
    return [m.group(1) for m in re.finditer(r"^%s=(.*)$" % key, text,
                                            re.M)]


def exec_start(name, dirvar, d):
    cmd = setting(unit(name), "ExecStart")[0].split()
    cmd[0] = COIL
    return [d if a == "${%s}" % dirvar else a for a in cmd]


def verify(tmp):
    ssa = shutil.which("systemd-analyze")
    if ssa is None:
        check(True, "# SKIP systemd-analyze verify: systemd-analyze is not "
              "installed (package systemd)")
        return
    for name in NAMES:
        text = unit(name)
        if name.endswith(".service"):
            text = re.sub(r"^ExecStart=\S+", "ExecStart=" + COIL, text,
                          flags=re.M)
        with open(os.path.join(tmp, name), "w") as f:
            f.write(text)
    for inst in ("coil@7411.socket", "coil@1.service",
                 "coil-http@8080.socket", "coil-http@8080.service"):
        r = subprocess.run([ssa, "verify", "--man=no",
                            os.path.join(tmp, inst)], capture_output=True,
                           text=True, timeout=120, cwd=tmp)
        out = (r.stdout + r.stderr).strip()
        if r.returncode != 0 and ("Failed to initialize manager" in out or
                                  "Failed to connect" in out):
            check(True, "# SKIP systemd-analyze verify %s: it cannot run "
                  "here: %s" % (inst, out[:200]))
            continue
        check(r.returncode == 0 and out == "", "systemd-analyze verify "
              "%s: nothing to say" % inst, (r.returncode, out))


def settings():
    s1, s2 = unit("coil@.socket"), unit("coil-http@.socket")
    check(setting(s1, "ListenStream") == ["127.0.0.1:%i"] and
          setting(s1, "Accept") == ["yes"], "coil@.socket: loopback, "
          "one service per connection", s1)
    check(setting(s2, "ListenStream") == ["127.0.0.1:%i"] and
          setting(s2, "Accept") == ["no"], "coil-http@.socket: loopback, "
          "one service per instance", s2)
    a, b = unit("coil@.service"), unit("coil-http@.service")
    check(setting(a, "StandardInput") == ["socket"] and
          setting(a, "StandardError") == ["journal"], "coil@.service: "
          "MCP on the connection, coil's own words to the journal")
    check("--http systemd" in setting(b, "ExecStart")[0],
          "coil-http@.service serves the socket systemd passes")
    for name, text in (("coil@.service", a), ("coil-http@.service", b)):
        bad = [k for k in BREAKS if setting(text, k)]
        check(not bad and setting(text, "DynamicUser") == ["yes"],
              "%s: its own user, and nothing that breaks coil's sandbox"
              % name, bad)
    for name in ("coil@.service.in", "coil-http@.service.in"):
        with open(os.path.join(SRC, name)) as f:
            check("ExecStart=@bindir@/coil " in f.read(), "%s names "
                  "coil where make install puts it" % name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def activated(args, cmd):
    """systemd-socket-activate on a free loopback port, listening:
    (process, port); a few ports are tried, as another process may
    take one between our look and its bind."""
    for _ in range(5):
        port = free_port()
        p = subprocess.Popen([shutil.which("systemd-socket-activate"),
                              "-l", "127.0.0.1:%d" % port, "-E", "PATH",
                              "-E", "XDG_RUNTIME_DIR", *args, *cmd],
                             stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        line = p.stderr.readline()
        if b"Listening on" in line:
            return p, port
        p.kill()
        p.wait()
    raise RuntimeError("systemd-socket-activate would not listen")


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    p.stderr.close()


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "coil-tests", "version": "1"}}}


def run_services(w):
    if shutil.which("systemd-socket-activate") is None:
        check(True, "# SKIP the services' ExecStart=: no "
              "systemd-socket-activate (package systemd)")
        return
    p, port = activated(["--inetd", "--accept"],
                        exec_start("coil@.service", "RUNTIME_DIRECTORY", w))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
            s.sendall(json.dumps(INIT).encode() + b"\n")
            s.shutdown(socket.SHUT_WR)
            got = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        answer = json.loads(got.split(b"\n")[0])
        check(answer.get("result", {}).get("serverInfo", {}).get("name") ==
              "coil", "coil@.service's ExecStart= answers MCP on its "
              "connection", got[:300])
    finally:
        stop(p)
    p, port = activated([], exec_start("coil-http@.service",
                                       "STATE_DIRECTORY", w))
    try:
        import http.client
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("POST", "/mcp", body=json.dumps(INIT), headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"})
        r = c.getresponse()
        body = r.read()
        check(r.status == 200 and r.getheader("Mcp-Session-Id") and
              b'"coil"' in body, "coil-http@.service's ExecStart= serves "
              "MCP over HTTP on the socket passed", (r.status, body[:300]))
        c.close()
    finally:
        stop(p)


def main():
    if not os.path.exists(os.path.join(UNITS, "coil@.service")):
        skip_all("the units are not built (%s): make first" % UNITS)
    tmp = tempfile.mkdtemp(prefix="coil-units-")
    w = workdir()
    try:
        settings()
        verify(tmp)
        run_services(w)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        cleanup(w)
    done()


main()
