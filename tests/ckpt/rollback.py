#!/usr/bin/python3
# snapshot, rollback (by name and by cell), reset, and their bad inputs:
# a name or cell that does not exist is a clear invalid and changes
# nothing; a rollback sent while a cell runs waits for it and says so.
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done, unsandboxed, check_exit  # noqa: E402

# "every": this pins one checkpoint per cell (policy.py tests the default).
with unsandboxed("--preload", "json", "--checkpoint-policy", "every") as c:
    # Answered once the worker is up, with nothing after it: the pristine
    # checkpoint is taken then (a cell sent at once gets none: pristine.py).
    c.call({"op": "vars"})
    c.call({"code": "x = 1"})                               # cell 1
    r = c.call({"op": "snapshot", "name": "base"})
    check(r["status"] == "ok" and r["name"] == "base" and r["cell"] == 1,
          "snapshot 'base' pins cell 1", r)
    c.call({"code": "x = 2\ny = 'two'"})                    # cell 2
    c.call({"code": "x += 1"})                              # cell 3

    r = c.call({"op": "rollback", "to": "base"})
    check(r["status"] == "ok" and r["cell"] == 1 and r["name"] == "base",
          "rollback to 'base': back at cell 1", r)
    check(r.get("rolled_back") == [2, 3], "the response lists cells 2, 3",
          r)
    check("files" in r.get("note", "") and "processes" in r.get("note", ""),
          "the first rollback says files and processes stay", r)
    r = c.call({"code": "x, 'y' in dir()"})
    check(r.get("result") == "(1, False)", "the namespace is at cell 1", r)

    # The same snapshot again: it is still there after being used.
    c.call({"code": "x = 100"})                             # cell 5
    r = c.call({"op": "rollback", "to": "base"})
    check(r["status"] == "ok" and r.get("rolled_back") == [4, 5],
          "a snapshot can be gone back to twice", r)
    check("note" not in r, "the note comes only once", r)
    r = c.call({"code": "x"})                               # cell 6
    check(r.get("result") == "1", "x is 1 again", r)

    # By cell number, onto another line: cells 2 and 3 come back.
    r = c.call({"op": "rollback", "to": 3})
    check(r["status"] == "ok" and r["cell"] == 3, "rollback to cell 3", r)
    check(r.get("rolled_back") == [6] and r.get("redone") == [2, 3],
          "undoes cell 6, redoes 2 and 3", r)
    r = c.call({"code": "x, y"})                            # cell 7
    check(r.get("result") == "(3, 'two')", "the namespace is at cell 3", r)

    # Bad input: nothing changes.
    c.call({"code": "marker = 'untouched'"})                # cell 8
    for to, what in (("nope", "no snapshot 'nope'"),
                     (999, "no checkpoint at cell 999")):
        r = c.call({"op": "rollback", "to": to})
        check(r["status"] == "invalid" and what in r["error"]["message"],
              "rollback to %r: invalid, says %r" % (to, what), r)
        check("base" in r["error"]["message"],
              "rollback to %r: lists what there is" % (to,), r)
    r = c.call({"op": "rollback", "to": -1})
    check(r["status"] == "invalid", "rollback to -1: invalid", r)
    r = c.call({"op": "rollback"})
    check(r["status"] == "invalid", "rollback without 'to': invalid", r)
    r = c.call({"op": "rollback", "to": [1]})
    check(r["status"] == "invalid", "rollback to a list: invalid", r)
    r = c.call({"code": "marker"})
    check(r.get("result") == "'untouched'", "state untouched by them", r)

    # Snapshot names.
    r = c.call({"op": "snapshot", "name": "42"})
    check(r["status"] == "invalid" and "cell number" in
          r["error"]["message"], "a name of digits is invalid", r)
    r = c.call({"op": "snapshot", "name": "a b"})
    check(r["status"] == "invalid", "a name with a space is invalid", r)
    r = c.call({"op": "snapshot", "name": ""})
    check(r["status"] == "invalid", "an empty name is invalid", r)
    r = c.call({"op": "snapshot", "name": 5})
    check(r["status"] == "invalid", "a number as name is invalid", r)
    r = c.call({"op": "snapshot"})
    check(r["status"] == "ok" and r["name"].startswith("snap"),
          "no name: one is made up", r)
    auto = r["name"]
    c.call({"code": "marker = 'second'"})
    r = c.call({"op": "snapshot", "name": "base"})
    check(r["status"] == "ok" and r.get("replaced") == 1,
          "snapshot 'base' again replaces the old one (cell 1)", r)
    c.call({"code": "marker = 'third'"})
    r = c.call({"op": "rollback", "to": auto})
    c.call({"code": "pass"})
    r = c.call({"code": "marker"})
    check(r.get("result") == "'untouched'", "the made-up name works", r)
    r = c.call({"op": "rollback", "to": "base"})
    r = c.call({"code": "marker"})
    check(r.get("result") == "'second'", "'base' is the new one", r)

    # Snapshot right after a snapshot: the second forks its own copy
    # (the current one already has a name) and both work.
    c.call({"code": "s = 'one'"})
    c.call({"op": "snapshot", "name": "one"})
    r = c.call({"op": "snapshot", "name": "two"})
    check(r["status"] == "ok", "two names for one state", r)
    r = c.call({"op": "snapshots"})
    names = sorted(x["name"] for x in r["checkpoints"] if x["name"])
    check("one" in names and "two" in names, "both listed", names)

    # A rollback sent while a cell runs waits for the cell, then says it
    # waited and for which cell.
    c.call({"code": "w = 'before'"})
    c.call({"op": "snapshot", "name": "w"})
    long_id = c.send({"code": "import time; time.sleep(0.5); w = 'after'"})
    time.sleep(0.1)
    rb_id = c.send({"op": "rollback", "to": "w"})
    r1 = c.response(long_id)
    r2 = c.response(rb_id)
    check(r1["status"] == "ok", "the running cell finished", r1)
    check(r2["status"] == "ok" and r2.get("waited_for_cell") == r1["cell"],
          "the rollback waited for cell %s and says so" % r1["cell"], r2)
    r = c.call({"code": "w"})
    check(r.get("result") == "'before'", "then it rolled back", r)

    # reset: fresh namespace, quickly, from the pristine checkpoint; the
    # preloaded module is still imported (no re-import).
    c.call({"code": "gone = 1"})
    t0 = time.time()
    r = c.call({"op": "reset"})
    dt = time.time() - t0
    check(r["status"] == "ok" and r.get("from") == "pristine checkpoint",
          "reset from the pristine checkpoint (%.1f ms)" % (dt * 1000), r)
    r = c.call({"code": "import sys\n'gone' in dir(), 'json' in sys.modules"})
    check(r.get("result") == "(False, True)",
          "reset: namespace fresh, preload kept", r)
    r = c.call({"op": "rollback", "to": 0})
    check(r["status"] == "ok" and r["cell"] == 0,
          "rollback to 0 is the pristine state", r)
    r = c.call({"op": "rollback", "to": "one"})
    r = c.call({"code": "s"})
    check(r.get("result") == "'one'", "snapshots survive a reset", r)
    check_exit(c, "coil --preload json exits 0")

with unsandboxed("--checkpoints", "0") as c:
    c.call({"code": "v = 1"})
    r = c.call({"op": "reset"})
    check(r["status"] == "ok" and r.get("from") == "new interpreter",
          "--checkpoints 0: reset starts a new interpreter", r)
    c.call({"code": "v = 2"})
    r = c.call({"op": "snapshot", "name": "keep"})
    check(r["status"] == "ok", "--checkpoints 0: snapshot still works", r)
    c.call({"code": "v = 3"})
    r = c.call({"op": "rollback", "to": "keep"})
    r = c.call({"code": "v"})
    check(r.get("result") == "2", "--checkpoints 0: rollback works", r)
    r = c.call({"op": "rollback", "to": 1})
    check(r["status"] == "invalid", "--checkpoints 0: no cell checkpoints",
          r)
    check_exit(c, "coil --checkpoints 0 exits 0")
done()
