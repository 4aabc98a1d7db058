#!/usr/bin/python3
# What checkpoints cost, as snapshots and ping report it: a checkpoint
# shares its pages with the worker until one of them writes, so it holds
# next to nothing at first, and the old version of whatever the worker
# rewrites after.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, unsandboxed, check_exit  # noqa: E402


MB = 1 << 20

# "every": one checkpoint per cell, so that each rewrite of 'big' leaves
# an old version behind whatever the timing (the default takes one when
# the session is quiet, which back-to-back requests may never be).
with unsandboxed("--checkpoint-policy", "every") as c:
    c.call({"code": "big = bytearray(64 << 20)\nbig[::4096] = b'x' * "
            "len(big[::4096])"})
    r = c.call({"op": "snapshot", "name": "with-big"})
    r = c.call({"op": "snapshots"})
    snap = [x for x in r["checkpoints"] if x["name"] == "with-big"][0]
    check(snap["private"] is not None and snap["private"] < 8 * MB,
          "a fresh checkpoint of 64 MB holds %.1f MB of its own"
          % (snap["private"] / MB), snap)
    check(r["memory"] < 16 * MB,
          "all checkpoints hold %.1f MB beyond the worker"
          % (r["memory"] / MB), r)
    check(snap["age_s"] >= 0 and snap["kind"] == "snapshot" and
          snap["cell"] == 1 and isinstance(snap["pid"], int),
          "the entry has its age, kind, cell and pid", snap)

    # The worker rewrites every page: the snapshot now holds the old ones.
    c.call({"code": "big[::4096] = b'y' * len(big[::4096])"})
    r = c.call({"op": "snapshots"})
    snap = [x for x in r["checkpoints"] if x["name"] == "with-big"][0]
    check(snap["private"] >= 60 * MB,
          "after the worker rewrote it, the snapshot holds %.1f MB"
          % (snap["private"] / MB), snap)
    check(r["memory"] >= 60 * MB,
          "the total says %.1f MB" % (r["memory"] / MB), r)
    p = c.call({"op": "ping"})
    check(p["checkpoints"]["memory"] >= 60 * MB and
          p["checkpoints"]["count"] == r["count"],
          "ping says the same", p)

    # Pages shared by several checkpoints but no longer by the worker
    # are no one's private memory, but they are counted in the total.
    c.call({"code": "small = 1"})
    c.call({"code": "small = 2"})
    c.call({"code": "big[::4096] = b'z' * len(big[::4096])"})
    r = c.call({"op": "snapshots"})
    check(r["memory"] >= 120 * MB,
          "two old versions of 'big': %.1f MB in all" % (r["memory"] / MB),
          [(x["cell"], x["private"]) for x in r["checkpoints"]])

    # Dropping them gives it back: roll back, then the rest go as the
    # automatic ones are replaced.
    r = c.call({"op": "rollback", "to": "with-big"})
    check(r["status"] == "ok", "rollback to the big snapshot", r)
    r = c.call({"code": "bytes(big[:1]), len(big)"})
    check(r.get("result") == "(b'x', %d)" % (64 << 20),
          "the 64 MB are the snapshot's", r)
    check_exit(c, "coil exits 0")
done()
