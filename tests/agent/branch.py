#!/usr/bin/env python3
"""Branches in the agent protocol: fork makes sessions that start from
one state and diverge; every request may name its session; cell numbers
go on from the fork point; one branch's crash, timeout, reset and
rollback touch no other; sessions lists them with their memory; close
ends one; adopt makes one the client's default; a request naming a
branch a queued fork will make waits for it; fork from a snapshot or a
cell; names, private files, --max-sessions and the last session are
refused with a reason; the magics do the same; the transcript's lines
say their session."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, cleanup, done, workdir  # noqa: E402


def err(resp):
    return ((resp.get("error") or {}).get("message")) or ""


def diverge(c):
    check(c.run("x = 1; x")["result"] == "1", "main holds x = 1")
    fork = c.call({"op": "fork", "n": 3})
    check(fork.get("status") == "ok" and fork.get("sessions") ==
          ["b1", "b2", "b3"] and fork.get("parent") == "main" and
          fork.get("cell") == 1 and fork.get("files") == "shared" and
          "shared" in fork.get("note", ""),
          "fork n 3 makes b1, b2, b3 from main at cell 1, files shared",
          repr(fork))
    for i, name in enumerate(("b1", "b2", "b3")):
        r = c.run("x = %d; x" % (10 + i), session=name)
        check(r.get("session") == name and r.get("cell") == 2 and
              r.get("result") == str(10 + i),
              "%s: its own x, its cell 2 going on from the fork" % name,
              repr(r))
    r = c.run("x")
    check(r.get("result") == "1" and "session" not in r and
          r.get("cell") == 2, "main still holds x = 1, its answers "
          "without a session field", repr(r))
    for i, name in enumerate(("b1", "b2", "b3")):
        r = c.run("x", session=name)
        check(r.get("result") == str(10 + i), "%s kept its x" % name,
              repr(r))


def contained(c):
    r = c.run("import os; os.kill(os.getpid(), 9)", session="b2")
    check(r.get("status") == "crashed" and r.get("session") == "b2" and
          (r.get("restored") or {}).get("cell") in (1, 2, 3),
          "a crash in b2 is answered in b2, restored from its own "
          "checkpoints", repr(r))
    r = c.run("x", session="b2")
    check(r.get("status") == "ok" and r.get("session") == "b2",
          "b2 goes on after its crash", repr(r))
    for name, want in (("b1", "10"), ("b3", "12"), (None, "1")):
        fields = {"session": name} if name else {}
        r = c.run("x", **fields)
        check(r.get("result") == want, "the crash in b2 did not touch %s"
              % (name or "main"), repr(r))
    r = c.call({"code": "import time; time.sleep(30)", "session": "b3",
                "timeout": 0.5})
    check(r.get("status") == "timeout" and r.get("session") == "b3",
          "a timeout in b3 is b3's", repr(r))
    check(c.run("x", session="b1")["result"] == "10",
          "b1 untouched by b3's timeout")
    snap = c.call({"op": "snapshot", "name": "s1", "session": "b1"})
    check(snap.get("status") == "ok" and snap.get("session") == "b1",
          "a snapshot in b1", repr(snap))
    c.run("x = 99", session="b1")
    rb = c.call({"op": "rollback", "to": "s1", "session": "b1"})
    check(rb.get("status") == "ok" and c.run(
        "x", session="b1")["result"] == "10",
        "b1 rolls back to its own snapshot", repr(rb))
    check(c.run("x", session="b3")["result"] == "12" and
          c.run("x")["result"] == "1",
          "b1's rollback touched neither b3 nor main")
    rs = c.call({"op": "reset", "session": "b3"})
    r = c.run("'x' in dir()", session="b3")
    check(rs.get("status") == "ok" and r.get("result") == "False",
          "reset in b3 gives it a fresh namespace", repr(r))
    check(c.run("x", session="b1")["result"] == "10",
          "b3's reset did not touch b1")


def listing(c):
    s = c.call({"op": "sessions"})
    rows = {x["name"]: x for x in s.get("sessions", [])}
    check(sorted(rows) == ["b1", "b2", "b3", "main"] and
          rows["b1"]["parent"] == "main" and rows["b1"]["from_cell"] == 1
          and rows["main"]["parent"] is None and rows["main"]["default"]
          and not rows["b1"]["default"],
          "sessions lists main and b1..b3 with parent, fork cell, default",
          repr(s))
    mem = rows["b1"].get("memory") or {}
    check(isinstance(mem.get("private"), int) and
          isinstance(mem.get("shared"), int) and mem["shared"] > 0 and
          isinstance(s.get("memory", {}).get("private"), int),
          "each says the memory its worker owns and shares", repr(rows))
    check(rows["b1"].get("isolated") is True or
          "no" in str(rows["b1"].get("isolated")),
          "each branch says whether it has a Landlock domain of its own",
          repr(rows["b1"]))
    p = c.call({"op": "ping"})
    check((p.get("sessions") or {}).get("count") == 4,
          "ping counts the sessions", repr(p.get("sessions")))


def close_adopt(c):
    cl = c.call({"op": "close", "session": "b3"})
    check(cl.get("status") == "ok" and cl.get("closed") == "b3",
          "close ends b3", repr(cl))
    r = c.run("x", session="b3")
    check(r.get("status") == "invalid" and "b3" in err(r) and
          "main, b1, b2" in err(r),
          "a request for b3 now is invalid, naming the sessions", repr(r))
    ad = c.call({"op": "adopt", "session": "b1"})
    check(ad.get("status") == "ok" and ad.get("session") == "b1" and
          ad.get("was") == "main", "adopt b1", repr(ad))
    r = c.run("x")
    check(r.get("result") == "10" and r.get("session") == "b1",
          "requests without a session now go to b1", repr(r))
    rows = {x["name"]: x for x in c.call({"op": "sessions"})["sessions"]}
    check(rows["b1"]["default"] and not rows["main"]["default"],
          "sessions marks b1 as the default", repr(rows))
    cl = c.call({"op": "close", "session": "main"})
    check(cl.get("status") == "ok", "main can be closed while branches "
          "are open", repr(cl))
    check(c.run("x")["result"] == "10", "b1 goes on without main")
    c.call({"op": "close", "session": "b2"})
    last = c.call({"op": "close", "session": "b1"})
    check(last.get("status") == "invalid" and "last" in err(last),
          "the last session cannot be closed", repr(last))


def waits_for_fork(c):
    """Lines sent at once: the request for the branch waits for the
    fork that makes it."""
    ids = [c.send({"code": "y = 5"}), c.send({"op": "fork", "name": "w"}),
           c.send({"code": "y * 2", "session": "w"}),
           c.send({"code": "y", "session": "nowhere"}),
           c.send({"code": "y = 6", "session": "w"}),
           c.send({"op": "adopt", "session": "w"}),
           c.send({"code": "y"})]
    got = {}
    while len(got) < len(ids):
        msg = c.line()
        if "event" not in msg and msg.get("id") in ids:
            got[msg["id"]] = msg
    check(got[ids[2]].get("result") == "10" and
          got[ids[2]].get("session") == "w",
          "a request for a branch sent before its fork ran waits for it",
          repr(got[ids[2]]))
    check(got[ids[3]].get("status") == "invalid" and
          "nowhere" in err(got[ids[3]]),
          "one for a session no fork makes is invalid", repr(got[ids[3]]))
    check(got[ids[5]].get("status") == "ok" and
          got[ids[6]].get("session") == "w" and
          got[ids[6]].get("result") == "6",
          "an adopt of the branch to come waits for it, and the request "
          "after it goes there", repr((got[ids[5]], got[ids[6]])))
    c.call({"op": "adopt", "session": "main"})


def sources_and_refusals(c):
    c.run("z = 'one'")
    c.call({"op": "snapshot", "name": "one"})
    c.run("z = 'two'")
    f = c.call({"op": "fork", "name": "fromsnap", "from": "one"})
    check(f.get("status") == "ok" and f.get("from") == "one" and
          c.run("z", session="fromsnap")["result"] == "'one'",
          "fork from a snapshot starts there", repr(f))
    bad = [({"op": "fork", "name": "fromsnap"}, "already"),
           ({"op": "fork", "name": "9lives"}, "letter"),
           ({"op": "fork", "name": "a", "n": 2}, "'name'"),
           ({"op": "fork", "from": "nosuch"}, "nosuch"),
           ({"op": "fork", "files": "private"}, "Landlock"),
           ({"op": "fork", "files": "mine"}, "shared"),
           ({"op": "fork", "n": 0}, "n")]
    for req, word in bad:
        r = c.call(req)
        check(r.get("status") == "invalid" and word in err(r),
              "refused with a reason: %s" % json.dumps(req), repr(r))


def limits(wd):
    with Coil("--no-record", "--max-sessions", "3", cwd=wd) as c:
        c.run("a = 1")
        r = c.call({"op": "fork", "n": 3})
        check(r.get("status") == "invalid" and "--max-sessions" in err(r),
              "a fork past --max-sessions is refused", repr(r))
        r = c.call({"op": "fork", "n": 2})
        check(r.get("status") == "ok" and len(r["sessions"]) == 2,
              "one within it is made", repr(r))
        r = c.call({"op": "fork"})
        check(r.get("status") == "invalid", "and then no more", repr(r))


def magics(wd):
    with Coil("--no-record", cwd=wd) as c:
        c.run("m = 1")
        r = c.run("%fork try-a")
        check(r.get("status") == "ok" and r.get("sessions") == ["try-a"],
              "%fork NAME forks", repr(r))
        r = c.run("%switch try-a")
        check(r.get("status") == "ok" and r.get("session") == "try-a",
              "%switch adopts", repr(r))
        r = c.run("m = 2; m")
        check(r.get("session") == "try-a" and r.get("result") == "2",
              "cells then run in the branch", repr(r))
        r = c.run("%sessions")
        check(r.get("status") == "ok" and len(r.get("sessions", [])) == 2,
              "%sessions lists them", repr(r))
        r = c.run("%fork -n 2 --from 1")
        check(r.get("status") == "ok" and len(r.get("sessions", [])) == 2,
              "%fork -n 2 --from CELL", repr(r))
        r = c.run("%fork -n lots")
        check(r.get("status") == "invalid" and "'n'" in err(r),
              "%fork -n with a word is refused as the op would be",
              repr(r))
        r = c.run("x = 1\n%fork")
        check(r.get("status") == "error",
              "%fork inside a larger cell is refused by the worker",
              repr(r))
        r = c.run("%close try-a")
        check(r.get("status") == "ok", "%close ends it", repr(r))


def transcript(wd):
    path = os.path.join(wd, "t.jsonl")
    with Coil("--record", path, cwd=wd) as c:
        c.run("q = 1")
        c.call({"op": "fork", "name": "tb"})
        c.run("q = 2", session="tb")
    rc = subprocess.run([COIL, "--replay", path, "--check"], cwd=wd,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(rc.returncode == 0, "--replay --check of it rebuilds the "
          "branch and matches", rc.stdout.decode()[-600:] +
          rc.stderr.decode()[-600:])
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    tb = [x for x in lines if x.get("session") == "tb"]
    check(any(x.get("event") == "response" for x in tb) and
          any(x.get("event") == "queued" for x in tb),
          "the transcript's lines about the branch say its session",
          repr(tb[:3]))
    own = os.path.join(wd, "t.tb.jsonl")
    with open(own) as f:
        mine = [json.loads(x) for x in f if x.strip()]
    check(mine[0].get("branch") == {"session": "tb", "parent": "main",
                                    "cell": 1, "parent_transcript": path}
          and all(x.get("session") == "tb" for x in mine[1:]) and
          any(x.get("event") == "response" for x in mine),
          "the branch has a transcript of its own beside it, naming its "
          "parent and fork point, of its lines alone", repr(mine[:2]))


def strict(wd):
    """Under strict every fork waits for the supervisor's gate: the
    copies of a checkpoint and each branch's own checkpoints pass it,
    and the gate's report stays clean."""
    with Coil("--no-record", "--sandbox", "strict", cwd=wd) as c:
        c.run("s = 1")
        f = c.call({"op": "fork", "n": 2})
        check(f.get("status") == "ok", "strict: fork n 2", repr(f))
        for name in ("b1", "b2"):
            c.run("s = '%s'" % name, session=name)
            snap = c.call({"op": "snapshot", "session": name})
            check(snap.get("status") == "ok" and c.run(
                "s", session=name)["result"] == "'%s'" % name,
                "strict: %s runs and snapshots through the gate" % name,
                repr(snap))
        gate = (c.call({"op": "ping"}).get("sandbox", {}).get(
            "mechanisms", {}).get("checkpoint gate") or {})
        check(gate.get("state") == "on" and "spent_by_cells" not in gate,
              "strict: the gate's report is clean", repr(gate))
        # the branches fork through main's gate: it is still answered
        # once main's worker is reset, and once main is closed
        c.call({"op": "reset"})
        r = c.call({"op": "snapshot", "session": "b1"}, timeout=30)
        check(r.get("status") == "ok", "strict: b1 snapshots after main's "
              "reset", repr(r))
        c.call({"op": "close", "session": "main"})
        r = c.call({"op": "snapshot", "session": "b2"}, timeout=30)
        f = c.call({"op": "fork", "session": "b2"}, timeout=30)
        check(r.get("status") == "ok" and f.get("status") == "ok",
              "strict: b2 snapshots and forks with main closed",
              repr((r, f)))


def main():
    wd = workdir()
    try:
        with Coil("--no-record", cwd=wd) as c:
            diverge(c)
            contained(c)
            listing(c)
            close_adopt(c)
        with Coil("--no-record", cwd=wd) as c:
            waits_for_fork(c)
            sources_and_refusals(c)
        limits(wd)
        magics(wd)
        transcript(wd)
        strict(wd)
    finally:
        cleanup(wd)
    done()


main()
