#!/usr/bin/python3
"""Netlink, vsock, packet and raw sockets: seccomp refuses the families
(netlink and packet are how a process inspects and reconfigures the
network; vsock reaches the hypervisor).  Under none root opens them (vsock
where the machine has it)."""
import sbxlib

CELL = r'''
import socket
t("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close())
t("vsock", lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close())
t("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0).close())
t("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, 1).close())
k("netlink-kernel", lambda c: c.socket(16, 3, 0))
k("vsock-kernel", lambda c: c.socket(40, 1, 0))
k("packet-kernel", lambda c: c.socket(17, 3, 0))
k("raw-kernel", lambda c: c.socket(2, 3, 1))
'''

tap = sbxlib.begin("netlink and vsock sockets")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
    if p == "none":
        tap.allowed(r, "netlink")
        tap.allowed(r, "packet")
        v, text = r.get("vsock")
        tap.ok(v == "ALLOWED" or "Address family not supported" in text,
               "none: vsock opens where the machine has it (%s)" % text, r)
    else:
        for n in ("netlink", "vsock", "packet", "raw"):
            tap.denied(r, n)
            v, text = r.get(n + "-kernel")
            tap.ok(v == "DENIED" and "EACCES" in text, "%s: %s is refused "
                   "by seccomp (%s)" % (p, n, text), r)
    tap.session(r)
tap.done()
