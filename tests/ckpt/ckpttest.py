"""ckpttest - helpers for the checkpoint tests (tests/ckpt/*.py).

Each test drives the real binary through coil --agent (tests/coiltest.py)
and prints TAP: "ok N - what" or "not ok N - what" with the detail as
comments, the plan at the end, and exits 1 when any check failed, 77 when
the machine lacks what the test needs (skip_all says which).
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from coiltest import Coil, descendants  # noqa: E402,F401

_n = 0
_failed = 0


def check(cond, what, detail=None):
    global _n, _failed
    _n += 1
    if cond:
        print("ok %d - %s" % (_n, what))
    else:
        _failed += 1
        print("not ok %d - %s" % (_n, what))
        if detail is not None:
            for line in str(detail)[:4000].splitlines():
                print("# " + line)
    sys.stdout.flush()
    return bool(cond)


def done():
    print("1..%d" % _n)
    sys.exit(1 if _failed else 0)


def skip_all(why):
    print("1..0 # SKIP %s" % why)
    sys.exit(77)


def workdir():
    """A private work directory: every process of the session has it as
    its cwd, which is how the tests find them even after coil is gone."""
    d = tempfile.mkdtemp(prefix="coil-ckpt-test-",
                         dir=os.environ.get("TEST_WORKDIR"))
    return os.path.realpath(d)


def cleanup(d):
    shutil.rmtree(d, ignore_errors=True)


def proc_info(pid):
    """(comm, state, ppid) of a live process, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
    except OSError:
        return None
    comm = st[st.index("(") + 1:st.rindex(")")]
    rest = st[st.rindex(")") + 2:].split()
    return comm, rest[0], int(rest[1])


def in_dir(d):
    """Live (not zombie) processes whose cwd is d."""
    found = []
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            if os.readlink("/proc/%s/cwd" % e) != d:
                continue
        except OSError:
            continue
        info = proc_info(int(e))
        if info is not None and info[1] != "Z":
            found.append((int(e), info[0]))
    return found


def tree(pid):
    """{comm: count} of the live processes below pid, and the zombies."""
    counts, zombies = {}, 0
    for p in descendants(pid):
        info = proc_info(p)
        if info is None:
            continue
        if info[1] == "Z":
            zombies += 1
            continue
        counts[info[0]] = counts.get(info[0], 0) + 1
    return counts, zombies


def pss_kb(pid):
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_for(pred, timeout=10, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def start(*args, cwd=None, **kw):
    """A Coil whose session runs in cwd (its --workdir).

    Without a sandbox: these tests reach into the session from outside
    (they kill a checkpoint by the pid a cell reports, count processes by
    their working directory, starve fork of memory), and the sandbox's
    PID namespace and limits would change what they measure.  The
    sandbox's own tests (tests/sandbox) cover checkpoints under it."""
    if cwd is not None:
        args = ("--workdir", cwd) + args
    return Coil("--sandbox", "none", *args, **kw)
