#!/usr/bin/python3
"""A pathname unix socket outside the work directory (the docker.sock,
dbus, X11 kind): Landlock (ABI <= 7) does not cover connecting to one, so
the worker's root does: /run, /tmp and the rest of the machine are not in
it.  Sockets inside the work dir still work.  Under none the host's
listener is reached."""
import os
import socket
import threading
import sbxlib

d = sbxlib.tmpdir("sbx-sock-", "/run" if os.path.isdir("/run") else "/tmp")
path = os.path.join(d, "s")
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(8)
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
t("connect", lambda: socket.socket(socket.AF_UNIX).connect(%(p)r))
def inside():
    s = socket.socket(socket.AF_UNIX); s.bind("mine.sock"); s.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect("mine.sock"); c.close()
    os.remove("mine.sock")
    return "ok"
t("workdir", inside)
''' % {"p": path}

tap = sbxlib.begin("a pathname unix socket outside")
wd = sbxlib.tmpdir("sbx-wd-")
try:
    for p in sbxlib.PROFILES:
        del hits[:]
        r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
        if p == "none":
            tap.allowed(r, "connect")
            tap.ok(len(hits) == 1, "none: the host's listener was reached")
        else:
            tap.denied(r, "connect")
            tap.ok(not hits, "%s: nothing reached the host's listener" % p)
        if p == "strict":
            tap.denied(r, "workdir")
        else:
            tap.allowed(r, "workdir", "unix sockets in the work dir work")
        tap.session(r)
finally:
    srv.close()
    os.remove(path)
    os.rmdir(d)
tap.done()
