#!/usr/bin/env python3
"""A fork that stops part-way, and the checkpoint it copied after it.

A fork orders all its copies of the checkpoint at once and takes each as
it comes (ckpt-copy.c).  When one cannot be made (here: --max-procs is
reached), the fork answers with the branches it made and says why the
rest were not, and the copies still owed are read and let go of: none
is left in the checkpoint's socket to be taken, later, for the copy of
another fork.  So a later fork of the same checkpoint gets a copy of
its own, of the right state, and the sessions are the ones the answers
named."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, cleanup, descendants, done,  # noqa: E402
                      wait_for, workdir)

N = 12


def answers(c, ids):
    got = {}
    while len(got) < len(ids):
        msg = c.line(timeout=120)
        if "event" not in msg and msg.get("id") in ids:
            got[msg["id"]] = msg
    return got


def live(c):
    return len([p for p in descendants(c.pid) if not p.zombie])


def main():
    wd = workdir()
    try:
        with Coil("--no-record", "--max-procs", "10", "--max-sessions",
                  str(N + 2), cwd=wd) as c:
            c.run("x = 41")
            c.call({"op": "snapshot", "name": "at41"})
            before = live(c)
            f = c.call({"op": "fork", "n": N, "from": "at41"}, timeout=120)
            names = f.get("sessions") or []
            warned = " ".join(f.get("warnings") or [])
            check(f.get("status") == "ok" and 0 < len(names) < N and
                  "could not copy itself" in warned,
                  "a fork past --max-procs makes what it can and says why "
                  "it stopped", repr(f)[:400])
            ids = {c.send({"code": "x + 1", "session": n}): n
                   for n in names}
            bad = sorted((ids[i], r.get("status"), r.get("result"))
                         for i, r in answers(c, ids).items()
                         if r.get("result") != "42")
            check(not bad, "each branch made holds the fork's state",
                  repr(bad))
            s = c.call({"op": "sessions"})
            listed = [x.get("name") for x in s.get("sessions", [])]
            check(listed == ["main"] + names,
                  "sessions lists main and the branches made, no other",
                  repr(listed))
            for n in names:
                c.call({"op": "close", "session": n})
            # the branches' processes count against --max-procs until
            # init has reaped them
            check(wait_for(lambda: live(c) <= before, timeout=60),
                  "the closed branches' processes are gone",
                  (live(c), before))
            again = c.call({"op": "fork", "name": "again", "from": "at41"},
                           timeout=120)
            r = c.run("x", session="again")
            check(again.get("status") == "ok" and
                  again.get("sessions") == ["again"] and
                  r.get("result") == "41",
                  "a later fork of the same checkpoint gets a copy of its "
                  "own, of the state it was taken at", repr((again, r)))
            r = c.run("x + 1")
            check(r.get("result") == "42" and "restored" not in r,
                  "main answers on, untouched", repr(r))
    finally:
        cleanup(wd)
    done()


main()
