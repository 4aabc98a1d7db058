#!/usr/bin/python3
"""UDP to 127.0.0.1:53 (the classic DNS exfiltration path, which Landlock's
TCP rules do not cover): no inet socket, no interface.  Under none the
datagram reaches the host."""
import socket
import threading
import sbxlib

srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
srv.bind(("127.0.0.1", 0))
port = srv.getsockname()[1]
got = []


def recv():
    while True:
        try:
            got.append(srv.recv(100))
        except OSError:
            return


threading.Thread(target=recv, daemon=True).start()

CELL = r'''
import socket
def send(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    return s.sendto(b"exfil", ("127.0.0.1", port))
t("udp53", lambda: send(53))
t("udp", lambda: send(%(port)d))
k("socket-kernel", lambda c: c.socket(2, 2, 0))
''' % {"port": port}

tap = sbxlib.begin("UDP to 127.0.0.1:53")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    del got[:]
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "udp53")
        tap.allowed(r, "udp")
        tap.ok(got == [b"exfil"], "none: the datagram reached the host")
    else:
        tap.denied(r, "udp53")
        tap.denied(r, "udp")
        tap.denied(r, "socket-kernel", words=False, kernel=True)
        tap.ok(not got, "%s: nothing reached the host" % p)
    tap.session(r)
tap.done()
