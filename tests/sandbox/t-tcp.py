#!/usr/bin/python3
"""TCP to 127.0.0.1: the worker has a network namespace of its own (no
interface but a loopback that is down), Landlock denies TCP connect and
bind, and seccomp denies inet sockets.  --allow-net lifts it under
standard.  Under none the connection reaches the host's listener."""
import socket
import threading
import sbxlib

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
port = srv.getsockname()[1]
hits = []


def accept():
    while True:
        try:
            c, _ = srv.accept()
        except OSError:
            return
        hits.append(1)
        c.close()


threading.Thread(target=accept, daemon=True).start()

CELL = r'''
import socket
t("connect", lambda: socket.create_connection(("127.0.0.1", %(port)d), timeout=3).close())
t("bind", lambda: socket.socket().bind(("0.0.0.0", 8765)))
t("dns", lambda: socket.getaddrinfo("example.com", 80))
k("socket-kernel", lambda c: c.socket(2, 1, 0))
''' % {"port": port}

tap = sbxlib.begin("TCP to 127.0.0.1")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    del hits[:]
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "connect")
        tap.ok(len(hits) == 1, "none: the host's listener was reached")
    else:
        tap.denied(r, "connect")
        tap.denied(r, "bind")
        tap.denied(r, "dns")
        tap.denied(r, "socket-kernel", words=False, kernel=True)
        tap.ok(not hits, "%s: nothing reached the host's listener" % p)
    tap.session(r)
del hits[:]
r = sbxlib.run("standard", [CELL], wd, args=("--allow-net",))
tap.allowed(r, "connect", "--allow-net lifts it")
tap.ok(len(hits) == 1, "standard --allow-net: the listener was reached")
r = sbxlib.run("strict", [CELL], wd, args=("--allow-net",))
tap.denied(r, "connect")
tap.done()
