#!/usr/bin/python3
# A cell's child processes: an interrupt (the interrupt op, a deadline
# from --timeout or a request's timeout) reaches them as a terminal's
# Ctrl-C reaches its foreground job, so os.system("sleep ...") returns 2
# at once, as python3 does at a terminal, and the cell goes on; a
# subprocess.run is a KeyboardInterrupt.  Whatever a worker started ends
# with it: a worker killed at its grace, one that kills itself, a coil
# killed or sent SIGTERM (where only a daemon, in a session of its own,
# outlives coil, and only under --sandbox none).  Checkpoints sleep through interrupts: a
# rollback to one taken before them works, and a worker resumed from one
# is interrupted the same way.  Under --sandbox none (no PID namespace)
# and the default sandbox.
#
# Each check's processes carry a marker of their own (sleep 1000.NNNNNN,
# found in /proc/*/cmdline); the test kills whatever carries one of its
# markers at the end, and nothing else.
import os
import random
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, cleanup, done, wait_for,  # noqa: E402
                      workdir)

GRACE = 3               # seconds: every prompt answer comes well before
MARKERS = []


def marker():
    """A sleep argument no other process on the machine has."""
    m = "1000.%06d" % random.randrange(10 ** 6)
    MARKERS.append(m)
    return m


def carrying(m):
    """pids of the live processes whose command line holds marker m."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % d) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if any(m.encode() in a for a in argv) and state != "Z":
            found.append(int(d))
    return found


def none_left(label, m):
    """A check that nothing carrying m is left, after a moment."""
    gone = wait_for(lambda: not carrying(m), timeout=3)
    check(gone, "%s: no process of it is left" % label, carrying(m))


def started(c, req, m, count=1):
    """Send req, wait until count processes carrying m run; its id."""
    rid = c.send(req)
    wait_for(lambda: len(carrying(m)) >= count, timeout=10)
    return rid


def answer(c, rid):
    """The response to rid, also when it came before another's."""
    for e in c.events:
        if e.get("id") == rid and "event" not in e:
            return e
    return c.response(rid, timeout=30)


def timed(c, rid):
    t0 = time.time()
    r = c.response(rid, timeout=30)
    return r, time.time() - t0


def deadlines(prof, c):
    label = prof + ", --timeout, os.system"
    m = marker()
    rid = started(c, {"code": "import os\nr = os.system('sleep %s')\n"
                      "print('after', r)\nr" % m}, m)
    r, took = timed(c, rid)
    check(r.get("status") == "ok" and r.get("result") == "2" and
          r.get("output") == "after 2\n", "%s: os.system returns 2 and "
          "the cell goes on, as at a terminal" % label, r)
    check(took < GRACE, "%s: before the grace period" % label, took)
    check(any("interrupted" in w for w in r.get("warnings", ())),
          "%s: a warning says the cell was interrupted" % label, r)
    none_left(label, m)

    label = prof + ", timeout field, a pipeline"
    m = marker()
    rid = started(c, {"code": "import os\nos.system('sleep %s | cat; "
                      "echo not reached')" % m, "timeout": 0.5}, m)
    r, took = timed(c, rid)
    check(r.get("status") == "ok" and r.get("result") == "2" and
          "not reached" not in r.get("output", "") and took < GRACE,
          "%s: the shell and both commands stop" % label, (r, took))
    none_left(label, m)

    label = prof + ", timeout field, subprocess.run"
    m = marker()
    rid = started(c, {"code": "import subprocess\n"
                      "subprocess.run(['sleep', '%s'])" % m,
                      "timeout": 0.5}, m)
    r, took = timed(c, rid)
    err = r.get("error") or {}
    check(r.get("status") == "timeout" and r.get("restored") is None and
          err.get("type") == "TimeoutError" and took < GRACE,
          "%s: a timeout, the interrupt sufficed" % label, (r, took))
    none_left(label, m)


def interrupts(prof, c, label):
    m = marker()
    rid = started(c, {"code": "import os; os.system('sleep %s')" % m,
                      "timeout": 60}, m, 2)
    t0 = time.time()
    ack = c.call({"op": "interrupt"})
    r = answer(c, rid)
    took = time.time() - t0
    check(ack.get("status") == "ok" and r.get("status") == "ok" and
          r.get("result") == "2" and took < GRACE, "%s, os.system: the "
          "interrupt op stops the command; the cell returns 2" % label,
          (ack, r, took))
    none_left(label + ", os.system", m)

    m = marker()
    rid = started(c, {"code": "import subprocess\n"
                      "subprocess.run(['sleep', '%s'])" % m,
                      "timeout": 60}, m)
    t0 = time.time()
    c.call({"op": "interrupt"})
    r = answer(c, rid)
    took = time.time() - t0
    err = r.get("error") or {}
    check(r.get("status") == "interrupted" and err.get("type") ==
          "KeyboardInterrupt" and took < GRACE, "%s, subprocess.run: "
          "interrupted" % label, (r, took))
    none_left(label + ", subprocess.run", m)


def deaths(prof, c):
    label = prof + ", a worker killed at its grace"
    m = marker()
    rid = started(c, {"code": "import os, signal\n"
                      "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      "os.system('sleep %s')" % m, "timeout": 0.3}, m)
    r, _ = timed(c, rid)
    check(r.get("status") == "timeout" and "killed" in (r.get("error") or
          {}).get("message", ""), "%s: killed" % label, r)
    none_left(label, m)

    label = prof + ", a worker that kills itself"
    m = marker()
    r = c.run("import subprocess\n"
              "p = subprocess.Popen(['sleep', '%s'])\np.pid > 0" % m)
    check(r.get("result") == "True" and wait_for(lambda: carrying(m)),
          "%s: a child started in the background" % label, r)
    r = c.run("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    check(r.get("status") == "crashed", "%s: crashed" % label, r)
    none_left(label, m)


def session(prof):
    wd = workdir()
    c = Coil("--sandbox", prof, "--timeout", "1", "--grace", str(GRACE),
             cwd=wd)
    try:
        r = c.run("x = 'pinned'")
        check(r.get("status") == "ok", "%s: a cell runs" % prof, r)
        c.call({"op": "snapshot", "name": "pin"})
        deadlines(prof, c)
        interrupts(prof, c, prof + ", interrupt op")
        deaths(prof, c)
        # The worker now is a checkpoint resumed after the crash.
        interrupts(prof, c, prof + ", interrupt op, resumed worker")
        r = c.call({"op": "rollback", "to": "pin"})
        check(r.get("status") == "ok", "%s: the checkpoint taken before "
              "the interrupts is still there" % prof, r)
        r = c.run("x")
        check(r.get("result") == "'pinned'", "%s: and restores" % prof, r)
        check(c.close() == 0, "%s: coil exits 0" % prof, c.stderr_text())
    finally:
        c.kill()
        cleanup(wd)


def ends(prof, how):
    label = "%s, coil sent %s" % (prof, how.name)
    wd = workdir()
    c = Coil("--sandbox", prof, cwd=wd)
    try:
        daemon, m = marker(), marker()
        r = c.run("import subprocess\n"
                  "p = subprocess.Popen(['sleep', '%s'], "
                  "start_new_session=True)" % daemon)
        started(c, {"code": "import os; os.system('sleep %s')" % m}, m, 2)
        check(r.get("status") == "ok" and carrying(daemon) and
              len(carrying(m)) >= 2, "%s: a daemon and os.system's "
              "command run" % label, (carrying(daemon), carrying(m)))
        c.proc.send_signal(how)
        c.proc.wait(timeout=20)
        none_left(label + ", os.system", m)
        if prof == "none":
            # It made a session of its own: there, as the user asked.
            check(carrying(daemon), "%s: the daemon outlives it, as "
                  "under none it should" % label, carrying(daemon))
        else:
            none_left(label + ", a daemon", daemon)
    finally:
        c.kill()
        cleanup(wd)


try:
    for p in ("none", "standard"):
        session(p)
        for sig in (signal.SIGKILL, signal.SIGTERM):
            ends(p, sig)
finally:
    for m in MARKERS:
        for pid in carrying(m):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
done()
