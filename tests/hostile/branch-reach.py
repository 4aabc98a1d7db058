#!/usr/bin/env python3
"""A branch cannot reach another session's worker.

Under standard and strict, each branch's worker has a Landlock domain of
its own (signal and abstract-socket scopes): a cell of b1 that knows b2's
and main's worker pids cannot signal them (not even signal 0), nor read
their memory or environment through /proc, nor connect to an abstract
socket b2 listens on; b2 and main answer on as before.  A cell that
writes a forged frame on its control socket asking for branches ends
its own worker (a protocol violation) and no session is made.

The control: under --sandbox none the same kill from b1 does end b2's
worker (b2's next answer is a restore), so the checks above test the
sandbox, not a mistake of the test's.  Every process aimed at is one of
this test's own coil's workers.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, cleanup, done, skip, workdir  # noqa: E402

PROBE = r'''
import os, signal, socket
def _try(what, fn):
    try:
        fn()
        return what + " ALLOWED"
    except PermissionError:
        return what + " DENIED"
    except OSError as e:
        return what + " " + type(e).__name__
def _read(path):
    with open(path, "rb") as f:
        f.read(1)
def _abstract(name):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + name)
    finally:
        s.close()
print(_try("signal0-b2", lambda: os.kill(%(b2)d, 0)))
print(_try("kill-main", lambda: os.kill(%(main)d, signal.SIGKILL)))
print(_try("mem-b2", lambda: _read("/proc/%(b2)d/mem")))
print(_try("environ-b2", lambda: _read("/proc/%(b2)d/environ")))
print(_try("abstract-b2", lambda: _abstract("coil-branch-test-%(tag)s")))
print(_try("kill-b2", lambda: os.kill(%(b2)d, signal.SIGKILL)))
'''

LISTEN = r'''
import socket
_l = socket.socket(socket.AF_UNIX)
_l.bind("\0coil-branch-test-%s")
_l.listen(1)
'''

FORGE = r'''
import os, stat
for fd in os.listdir("/proc/self/fd"):
    try:
        if stat.S_ISSOCK(os.fstat(int(fd)).st_mode):
            os.write(int(fd), b'{"t":"fork","n":50}\n')
    except OSError:
        pass
'''


def lines(resp):
    return dict(x.rsplit(" ", 1) for x in resp.get("output", "").split("\n")
                if x.strip())


def attempt(profile, wd):
    with Coil("--no-record", "--sandbox", profile, cwd=wd) as c:
        c.run("x = 1")
        fork = c.call({"op": "fork", "n": 2})
        check(fork.get("status") == "ok", "%s: fork n 2" % profile,
              repr(fork))
        tag = "%d-%s" % (os.getpid(), profile)
        r = c.run(LISTEN % tag, session="b2")
        check(r.get("status") == "ok", "%s: b2 listens on an abstract "
              "socket" % profile, repr(r))
        pids = {"b2": int(c.run("__import__('os').getpid()",
                                session="b2")["result"]),
                "main": int(c.run("__import__('os').getpid()")["result"]),
                "tag": tag}
        rows = {x["name"]: x for x in c.call({"op": "sessions"})["sessions"]}
        got = lines(c.run(PROBE % pids, session="b1"))
        b2 = c.run("x", session="b2")
        main = c.run("x")
        return rows, got, b2, main, c


def main():
    wd = workdir()
    try:
        rows, got, b2, main_, _ = attempt("standard", wd)
        if rows["b1"].get("isolated") is not True:
            skip("b1 has no Landlock domain of its own here: %s"
                 % rows["b1"].get("isolated"), "the kernel lacks scopes")
        else:
            for what in ("signal0-b2", "kill-main", "mem-b2", "environ-b2",
                         "kill-b2"):
                check(got.get(what) == "DENIED",
                      "standard: b1 cannot %s" % what, repr(got))
            check(got.get("abstract-b2") != "ALLOWED",
                  "standard: b1 cannot reach b2's abstract socket",
                  repr(got))
            check(b2.get("status") == "ok" and b2.get("result") == "1" and
                  "restored" not in b2, "standard: b2 answers on, untouched",
                  repr(b2))
            check(main_.get("status") == "ok" and "restored" not in main_,
                  "standard: main answers on, untouched", repr(main_))
        with Coil("--no-record", cwd=wd) as c:
            c.run("x = 1")
            c.call({"op": "fork", "n": 2})
            r = c.run(FORGE, session="b1")
            check(r.get("status") == "crashed",
                  "a forged frame on b1's control socket ends b1's worker",
                  repr(r))
            s = c.call({"op": "sessions"})
            check(len(s.get("sessions", [])) == 3,
                  "and makes no session", repr(s))
            check(c.run("x", session="b2").get("result") == "1",
                  "b2 is untouched by it")
        rows, got, b2, main_, _ = attempt("none", wd)
        check(got.get("kill-b2") == "ALLOWED" and
              b2.get("status") in ("ok", "crashed") and "restored" in b2,
              "the control: under none, b1's kill does end b2's worker "
              "(b2 is restored)", repr((got, b2)))
    finally:
        cleanup(wd)
    done()


main()
