#!/usr/bin/env python3
"""Many branches made by one fork, each asked at once.

A fork op holds the supervisor's loop while it makes its branches, one
copy after another; the first branches are resumed and say hello
meanwhile, with no poll to read it.  A resumed worker that does not say
hello in time is killed as wedged: those first branches were, and their
first cell answered "crashed", when a fork took longer than that wait
(seen with 100 branches on a loaded machine).  The hooked build slows
each copy (COIL_TEST_SLOW_CLONE_MS) so that the fork of 40 outlasts
it; then every branch, asked 1+1 at once, answers 2."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, cleanup, done, hooked, workdir  # noqa: E402

N = 40


def main():
    wd = workdir()
    env = dict(os.environ, COIL_TEST_SLOW_CLONE_MS="150")
    try:
        with Coil("--no-record", "--max-sessions", str(N + 1), cwd=wd,
                  env=env, argv0=hooked()) as c:
            c.run("x = 1")
            f = c.call({"op": "fork", "n": N}, timeout=120)
            names = f.get("sessions") or []
            check(f.get("status") == "ok" and len(names) == N and
                  f.get("fork_ms", 0) > 5000,
                  "one fork makes %d branches, slower than a resume may "
                  "wait for its hello" % N, repr(f)[:300])
            ids = {c.send({"code": "x + 1", "session": n}): n
                   for n in names}
            got = {}
            while len(got) < len(ids):
                msg = c.line(timeout=120)
                if "event" not in msg and msg.get("id") in ids:
                    got[msg["id"]] = msg
            bad = sorted((ids[i], r.get("status")) for i, r in got.items()
                         if r.get("result") != "2")
            check(not bad, "each answers 2, none killed as wedged",
                  repr(bad))
            s = c.call({"op": "sessions"})
            check(len(s.get("sessions", [])) == N + 1,
                  "sessions lists them all", len(s.get("sessions", [])))
    finally:
        cleanup(wd)
    done()


main()
