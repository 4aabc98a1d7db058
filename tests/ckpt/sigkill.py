#!/usr/bin/python3
# coil killed with SIGKILL: no process of the session remains - not init,
# not the worker, not a worker resumed from a checkpoint, not a single
# checkpoint - whether a cell is running or not.
#
# Every process of a session has the session's work directory as its
# cwd, so they are found by that even once coil, their ancestor, is gone.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, workdir, cleanup, in_dir, wait_for,
    descendants)


def scenario(label, running, resumed):
    wd = workdir()
    c = unsandboxed(workdir=wd)
    c.call({"code": "x = 1"})
    c.call({"op": "snapshot", "name": "pin"})
    c.call({"code": "x = 2"})
    if resumed:
        # The worker now is a resumed checkpoint; its death signal
        # was set at resume time, not by init's fork.
        c.call({"code": "import os; os._exit(1)"})
        c.call({"op": "rollback", "to": "pin"})
    c.call({"op": "snapshots"})          # every checkpoint has arrived

    def kinds():
        return sorted(set(comm for _, comm in in_dir(wd)))
    # A checkpoint names itself coil-ckpt just after its fork, and the
    # newest may not have yet (in the last two the only one is pin's
    # replacement, forked at the restore).
    want = ["coil", "coil-ckpt", "coil-init", "coil-worker"]
    wait_for(lambda: kinds() == want, timeout=5)
    before = in_dir(wd)
    check(kinds() == want, "%s: the session's processes are there"
          % label, before)
    below = set(p.pid for p in descendants(c.pid))
    check(all(p in below for p, comm in before if comm != "coil"),
          "%s: all below coil" % label, (before, below))
    if running:
        c.send({"code": "while True:\n    pass"})
        time.sleep(0.3)
    c.proc.send_signal(signal.SIGKILL)
    c.proc.wait()
    left = wait_for(lambda: not in_dir(wd), timeout=5)
    check(left, "%s: no process of the session remains" % label,
          in_dir(wd))
    for p, comm in in_dir(wd):
        os.kill(p, signal.SIGKILL)
    cleanup(wd)


scenario("idle", running=False, resumed=False)
scenario("cell running", running=True, resumed=False)
scenario("resumed worker, idle", running=False, resumed=True)
scenario("resumed worker, cell running", running=True, resumed=True)
done()
