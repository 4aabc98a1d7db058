#!/usr/bin/python3
# 1,000 cells in a row with checkpoints on: the number of processes, the
# supervisor's descriptors and the memory of the session stay bounded.
# --checkpoint-memory drops the oldest ones when they hold too much.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    ASAN, check, skip, done, unsandboxed, tree, descendants, pss_kb,
    wait_for, check_exit)




def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def total_pss(c):
    return sum(pss_kb(p.pid) for p in descendants(c.pid)) + pss_kb(c.pid)


CELL = ("d[%d %% 50] = 'x' * 1000\n"
        "l = list(range(1000))\n"
        "class C:\n    pass\n"
        "o = C(); o.me = o\n"          # cyclic garbage, every cell
        "n = %d")

# "every": a checkpoint made and dropped each cell, the churn this
# test looks for leaks in.
with unsandboxed("--checkpoint-policy", "every") as c:
    c.call({"code": "d = {}"})
    c.call({"op": "snapshot", "name": "pin"})
    seen_max = 0
    for i in range(1, 1001):
        r = c.call({"code": CELL % (i, i)})
        if r["status"] != "ok":
            check(False, "cell %d ran" % i, r)
            break
        if i == 200:
            c.call({"op": "snapshots"})     # let the checkpoint arrive
            pss200 = total_pss(c)
            fds200 = fds(c.pid)
        if i % 100 == 0:
            counts, zombies = tree(c.pid)
            seen_max = max(seen_max, sum(counts.values()) + zombies)
    c.call({"op": "snapshots"})
    # A dropped checkpoint is killed, but takes a moment to exit; a new
    # one is named coil-worker until it renames itself after the fork.
    wait_for(lambda: tree(c.pid)[0].get("coil-ckpt", 0) <= 10 and
             tree(c.pid)[0].get("coil-worker") == 1, 5)
    counts, zombies = tree(c.pid)
    # init, the worker, 8 automatic, the pristine one, 'pin', and one
    # dropped checkpoint the worker has not reaped yet.
    check(counts.get("coil-init") == 1 and counts.get("coil-worker") == 1,
          "one init, one worker", counts)
    check(counts.get("coil-ckpt", 0) <= 11,
          "checkpoints: %d (8 automatic + pristine + pin, and at most "
          "one dropped that has not exited yet)"
          % counts.get("coil-ckpt", 0), counts)
    check(zombies <= 2 and seen_max <= 14,
          "processes stay bounded (at most %d seen, %d zombies)"
          % (seen_max, zombies), (counts, zombies))
    pss1000 = total_pss(c)
    # AddressSanitizer's quarantine and shadow memory make the worker's
    # own memory grow and checkpoints' private memory differ: the memory
    # figures mean something only in a plain build.
    what = "memory after 1000 cells: %d KB, after 200: %d KB" % (pss1000,
                                                                  pss200)
    if ASAN:
        skip(what, "a sanitizer build's memory figures mean nothing")
    else:
        check(pss1000 - pss200 < 30 * 1024, what, (pss200, pss1000))
    check(fds(c.pid) <= fds200 + 2,
          "supervisor descriptors: %d, after 200 cells: %d"
          % (fds(c.pid), fds200))
    r = c.call({"code": "n, len(d), len(l)"})
    check(r.get("result") == "(1000, 50, 1000)", "state is right", r)
    r = c.call({"op": "rollback", "to": "pin"})
    r = c.call({"code": "d"})
    check(r.get("result") == "{}", "the pin made 1000 cells ago works", r)
    check_exit(c, "coil exits 0")

# --checkpoint-memory: each cell leaves 8 MB that only its checkpoint
# holds once the next cell replaces it.
# "every": one checkpoint per cell, whatever the timing, for the cap to
# drop (the default takes one when the session is quiet).
with unsandboxed("--checkpoint-memory", "40M", "--checkpoint-policy",
                 "every") as c:
    for i in range(12):
        r = c.call({"code": "a = bytearray(b'%d' * (8 << 20))" % (i % 10)})
    r = c.call({"op": "snapshots"})
    autos = [x for x in r["checkpoints"] if x["kind"] == "auto"]
    check(r["memory"] is not None and r["memory"] <= 48 << 20,
          "checkpoint memory %.1f MB, cap 40 MB (+ the newest)"
          % (r["memory"] / 1048576), r)
    what = "%d automatic checkpoints kept" % len(autos)
    if ASAN:
        skip(what, "a sanitizer build's checkpoints hold other memory")
    else:
        check(2 <= len(autos) < 8, what, r)
    r = c.call({"op": "ping"})
    check(r["checkpoints"]["memory"] is not None and
          r["checkpoints"]["count"] >= 2, "ping reports the memory", r)
    r = c.call({"op": "rollback", "to": autos[0]["cell"]})
    check(r["status"] == "ok", "the oldest kept one still works", r)
    check_exit(c, "coil --checkpoint-memory 40M exits 0")

# "every": this pins one checkpoint per cell (policy.py tests the default).
with unsandboxed("--checkpoints", "3", "--checkpoint-policy", "every") as c:
    for i in range(10):
        c.call({"code": "k = %d" % i})
    r = c.call({"op": "snapshots"})
    cells = [x["cell"] for x in r["checkpoints"] if x["kind"] == "auto"]
    check(cells == [8, 9, 10], "--checkpoints 3 keeps the newest three",
          r)
    check_exit(c, "coil --checkpoints 3 exits 0")
done()
