#!/usr/bin/python3
"""A cell holds only the descriptors coil documents, and init nothing of
the supervisor's.

From a cell, /proc/self/fd lists: 0 (/dev/null), 1 and 2 (the output
pipes), the worker's copies of 1 and 2 (at 100 and up), and the control
socket (one socket, high, close-on-exec).  Nothing else: not the
supervisor's descriptors, not an old worker's after init restarts, not
strict's seccomp listener, also while --preload imports run.  Under
--sandbox none, init itself is read from outside: /dev/null on 0 and 1,
its report socket and its signalfd, and nothing more.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, done, workdir, cleanup,  # noqa
                      descendants, wait_for)

LIST = r'''
import os, fcntl
def _fds():
    out = {}
    for n in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            t = os.readlink("/proc/self/fd/" + n)
        except OSError:
            continue            # listdir's own, closed by now
        cloexec = bool(fcntl.fcntl(int(n), fcntl.F_GETFD) & fcntl.FD_CLOEXEC)
        out[int(n)] = (t, cloexec)
    return out
_fds()
'''

PROBE = r'''
import os
FDS = {}
for n in os.listdir("/proc/self/fd"):
    try:
        FDS[int(n)] = os.readlink("/proc/self/fd/" + n)
    except OSError:
        pass
'''


def expected(tag, fds):
    """Check a cell's {fd: (target, cloexec)} against what is documented."""
    import ast
    fds = ast.literal_eval(fds) if isinstance(fds, str) else fds
    check(fds.get(0, ("",))[0] == "/dev/null", "%s: fd 0 is /dev/null" % tag,
          fds)
    check(all(fds.get(i, ("",))[0].startswith("pipe:") for i in (1, 2)),
          "%s: fd 1 and 2 are pipes" % tag, fds)
    socks = [fd for fd, (t, _) in fds.items() if t.startswith("socket:")]
    check(len(socks) == 1 and socks[0] >= 200 and fds[socks[0]][1],
          "%s: one socket, the control socket, high and close-on-exec"
          % tag, fds)
    copies = [fd for fd, (t, _) in fds.items()
              if fd >= 100 and t in (fds[1][0], fds[2][0])]
    check(len(copies) == 2 and all(fds[fd][1] for fd in copies),
          "%s: the worker's copies of fd 1 and 2, close-on-exec" % tag, fds)
    rest = set(fds) - {0, 1, 2} - set(socks) - set(copies)
    check(not rest, "%s: no other descriptor" % tag,
          {fd: fds[fd] for fd in rest})


def init_of(coil_pid):
    found = wait_for(lambda: [p.pid for p in descendants(coil_pid)
                              if p.comm == "coil-init" and not p.zombie])
    return found[0] if found else None


def init_fds(pid):
    out = {}
    for n in os.listdir("/proc/%d/fd" % pid):
        try:
            out[int(n)] = os.readlink("/proc/%d/fd/%s" % (pid, n))
        except OSError:
            pass
    return out


def check_init(tag, coil_pid):
    pid = init_of(coil_pid)
    if not check(pid is not None, "%s: init found" % tag):
        return
    fds = init_fds(pid)
    check(fds.get(0) == "/dev/null" and fds.get(1) == "/dev/null",
          "%s: init's stdin and stdout are /dev/null" % tag, fds)
    rest = {fd: t for fd, t in fds.items() if fd > 2}
    kinds = sorted("socket" if t.startswith("socket:") else t
                   for t in rest.values())
    check(kinds == ["anon_inode:[signalfd]", "socket"],
          "%s: init holds its report socket and signalfd, nothing else"
          % tag, fds)


def session(profile):
    wd = workdir()
    with open(os.path.join(wd, "fdprobe.py"), "w") as f:
        f.write(PROBE)
    # "every": the crash below must land on the cell just before it,
    # which defined _fds, however quick the turnaround.
    c = Coil("--sandbox", profile, "--timeout", "20", "--workdir", wd,
             "--preload", "fdprobe", "--checkpoint-policy", "every")
    try:
        r = c.run(LIST)
        if check(r.get("status") == "ok", "%s: the listing cell runs"
                 % profile, r):
            expected(profile, r["result"])
        r = c.run("import fdprobe\nsorted(t for t in fdprobe.FDS.values() "
                  "if t.startswith('anon_inode'))")
        check(r.get("result") == "[]",
              "%s: --preload imports hold no seccomp listener nor any "
              "other anonymous inode" % profile, r)
        # After a restore from a checkpoint: the same.
        r = c.run("import os; os._exit(1)")
        check(r.get("status") == "crashed", "%s: a worker dies" % profile,
              r)
        r = c.run("_fds()")
        if check(r.get("status") == "ok", "%s: the restored worker lists "
                 "its descriptors" % profile, r):
            expected(profile + ", restored", r["result"])
        if profile == "none":
            check_init("none", c.pid)
            # init restarts: a cell under none may kill its parent.
            r = c.run("import os, time\nos.kill(os.getppid(), 9)\n"
                      "time.sleep(10)")
            check(r.get("status") == "crashed",
                  "none: the cell that kills init crashes", r)
            r = c.run(LIST)
            if check(r.get("status") == "ok", "none: a new worker after "
                     "init restarted lists its descriptors", r):
                expected("none, after init restarted", r["result"])
            check_init("none, after init restarted", c.pid)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())
    except Exception as e:
        check(False, "%s: the session went on" % profile,
              "%r\n%s" % (e, c.stderr_text()))
        c.kill()
    finally:
        cleanup(wd)


for p in ("none", "standard", "strict"):
    session(p)
done()
