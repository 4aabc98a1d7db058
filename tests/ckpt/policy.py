#!/usr/bin/python3
# --checkpoint-policy: the default (idle) keeps the state once the session
# is quiet, one checkpoint for cells sent back to back, and at once after
# long work; cheap cells only at a pause (a second with no cell, however
# many other requests come); a crash then says exactly where it is back
# at and which cells it lost.  Atomic cells and snapshots keep their checkpoint before the
# cell whatever the policy; "every" keeps one after each cell.
import json
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, skip, done, unsandboxed, wait_for, check_exit)

CRASH = "import os; os.kill(os.getpid(), 9)"


def batch(c, reqs):
    """Send reqs in one write, so they queue back to back; their
    responses in order."""
    ids = []
    data = b""
    for req in reqs:
        c.next_id += 1
        ids.append(c.next_id)
        data += json.dumps(dict(req, id=c.next_id)).encode() + b"\n"
    c.send_raw(data)
    return [c.response(i) for i in ids]


def kept_cells(r):
    """The cells a snapshots answer has automatic or pinned ones at."""
    return sorted(x["cell"] for x in r["checkpoints"]
                  if x["kind"] != "pristine")


def kept_state(c, timeout=10):
    """The snapshots answer once nothing is unkept (the policy took its
    idle checkpoint), else the last one."""
    last = {}

    def kept():
        nonlocal last
        last = c.call({"op": "snapshots"})
        return last if last["unkept"] == [] else None
    return wait_for(kept, timeout) or last


# --redo none: what a restore itself gives back (tests/ckpt/redo.py runs
# the lost cells again).
with unsandboxed("--redo", "none") as c:
    # Quiet: the state after the cell is kept without a request, at a
    # pause, which requests other than cells (kept_state's, a UI's) do
    # not put off.
    c.run("L = [1]")
    r = kept_state(c)
    check(1 in kept_cells(r) and r["unkept"] == [] and r["policy"] == "idle",
          "idle: cell 1 gets its checkpoint once the session is quiet", r)

    # Back to back: no checkpoint between the cells, and the crash names
    # the cells it lost.
    resps = batch(c, [{"code": "L.append(%d)" % n} for n in (2, 3, 4)] +
                  [{"op": "snapshots"}, {"code": CRASH}])
    snaps, crash = resps[3], resps[4]
    newest = max(x["cell"] for x in snaps["checkpoints"])
    durs = [x["duration_ms"] for x in resps[:3]]
    if sum(durs) < 40:
        check(newest == 1 and snaps["unkept"] == [2, 3, 4],
              "back to back: one checkpoint, none between the cells", snaps)
    else:
        skip("back to back: one checkpoint, none between the cells",
             "the cells took %s ms: long enough to be kept" % durs)
    check(crash["status"] == "crashed" and crash["cell"] == 5 and
          crash["restored"] == {"cell": newest, "threads_lost": 0,
                                "lost": list(range(newest + 1, 5))},
          "crash: restored names cell %d and the cells lost" % newest,
          crash)
    check("lost" in crash["error"]["message"],
          "crash: the message says what is lost", crash)
    r = c.run("L")
    check(r.get("result") == repr(list(range(1, newest + 1))),
          "crash: the lost cells' effects are gone, the rest are there", r)

    # Long work: kept at once, before the next cell runs.  Long is 50
    # times what a checkpoint was timed at, and at least 100 ms: nothing
    # is wanted once the state is kept, so that figure holds until then.
    r = kept_state(c)
    long_s = 0.2 + max(0.1, 50 * (r.get("cost_ms") or 0) / 1000)
    resps = batch(c, [{"code": "import time; time.sleep(%g); M = 1" % long_s},
                      {"code": CRASH}])
    check(resps[1]["restored"] == {"cell": resps[0]["cell"],
                                   "threads_lost": 0, "lost": []},
          "a long cell: its checkpoint comes right after it", resps[1])

    # Atomic: the state before it is kept even if the cells before it
    # ran back to back.
    resps = batch(c, [{"code": "A = 1"}, {"code": "A = 2"},
                      {"code": "A = 3\n" + CRASH, "atomic": True},
                      {"code": "A"}])
    check(resps[2]["status"] == "crashed" and
          resps[2]["restored"] == {"cell": resps[1]["cell"],
                                   "threads_lost": 0, "lost": []},
          "atomic: back at the cell just before it, nothing lost",
          resps[2])
    check(resps[3].get("result") == "2", "atomic: the state before it",
          resps[3])
    resps = batch(c, [{"code": "A = 4"},
                      {"code": "A = 5\nraise ValueError", "atomic": True},
                      {"code": "A"}])
    check(resps[1]["status"] == "error" and resps[2].get("result") == "4",
          "atomic: a cell that raises is undone", resps)

    # Snapshot: pins the state as it is, kept or not yet.
    resps = batch(c, [{"code": "S = 1"}, {"op": "snapshot", "name": "s"},
                      {"code": "S = 2"}, {"code": CRASH}, {"code": "S"}])
    check(resps[1]["status"] == "ok" and resps[1]["cell"] ==
          resps[0]["cell"], "snapshot: pins the cell just run", resps[1])
    check(resps[3]["restored"]["cell"] >= resps[0]["cell"] and
          resps[4].get("result") == ("1" if resps[3]["restored"]["cell"] ==
                                     resps[0]["cell"] else "2"),
          "snapshot: a crash after it goes back no further", resps[3:])
    r = c.call({"op": "rollback", "to": "s"})
    check(r["status"] == "ok" and c.run("S").get("result") == "1",
          "snapshot: rollback to it", r)
    check_exit(c, "coil (idle) exits 0")


with unsandboxed("--redo", "none") as c:
    # A cheap cell is kept at the pause, not as soon as the session is
    # quiet.  Its first cells are not cheap: the copy-on-write faults
    # after each checkpoint.
    for code in ("a = 1", "b = 2", "c = 3"):
        c.run(code)
        costed = kept_state(c)
    r0 = c.run("d = 4")
    time.sleep(0.3)         # quiet long enough; a pause not yet
    early = c.call({"op": "snapshots"})
    limit = 10 * (costed.get("cost_ms") or 2)
    if r0.get("duration_ms", limit) < limit / 2:
        check(early["unkept"] == [r0["cell"]],
              "a cheap cell is not kept before the pause", early)
    else:
        skip("a cheap cell is not kept before the pause",
             "it took %s ms, near 10 forks (%s ms)"
             % (r0.get("duration_ms"), limit))
    r = kept_state(c)
    check(r["unkept"] == [], "but at the pause", r)
    check_exit(c, "coil (idle, pause) exits 0")


with unsandboxed("--redo", "none", "--checkpoint-policy", "every") as c:
    resps = batch(c, [{"code": "E = %d" % n} for n in (1, 2, 3)] +
                  [{"op": "snapshots"}, {"code": CRASH}, {"code": "E"}])
    check(kept_cells(resps[3]) == [1, 2, 3] and resps[3]["unkept"] == [] and
          resps[3]["policy"] == "every",
          "every: a checkpoint after each cell", resps[3])
    check(resps[4]["restored"] == {"cell": 3, "threads_lost": 0,
                                   "lost": []},
          "every: a crash loses nothing", resps[4])
    check(resps[5].get("result") == "3", "every: the namespace at cell 3",
          resps[5])
    check_exit(c, "coil --checkpoint-policy every exits 0")

with unsandboxed("--redo", "none", "--checkpoints", "0") as c:
    resps = batch(c, [{"code": "Z = 1"}, {"code": CRASH}])
    check(resps[1]["restored"] == {"cell": None, "threads_lost": 0,
                                   "lost": [1]},
          "--checkpoints 0: fresh, and cell 1 lost", resps[1])
    check_exit(c, "coil --checkpoints 0 exits 0")
done()
