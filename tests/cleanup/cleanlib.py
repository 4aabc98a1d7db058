"""cleanlib - what a session may leave on the host, found precisely.

A session of coil pid N may make a cgroup coil.N beside the cgroup coil
runs in (in each hierarchy: v1 pids and memory, v2) and, only without a
mount namespace, a temp dir coil-N-XXXXXX under $TMPDIR.  The tests point
TMPDIR at a directory of their own and look there, and at the exact
cgroup paths coil would use, worked out from /proc/self/cgroup and
/proc/self/mountinfo as coil does (coil inherits the test's cgroups).
"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import coiltest  # noqa: E402


def cgroup_bases():
    """The cgroup dirs this process is in, in each hierarchy coil puts a
    session in: v1's pids and memory, v2."""
    mounts = []          # (fstype, mountpoint, root, options)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, right = line.split(" - ", 1)
            fields, rfields = left.split(), right.split()
            if rfields[0] in ("cgroup", "cgroup2"):
                mounts.append((rfields[0], fields[4], fields[3],
                               rfields[2].split(",")))
    bases = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            for fstype, mnt, root, opts in mounts:
                mine = [c for c in ctrls.split(",") if c in opts]
                if hid == "0" and ctrls == "" and fstype == "cgroup2":
                    pass
                elif fstype == "cgroup" and mine and \
                        ("pids" in mine or "memory" in mine):
                    pass
                else:
                    continue
                rel = path
                if root != "/" and rel.startswith(root):
                    rel = rel[len(root):]
                bases.append(os.path.normpath(mnt + "/" + rel))
    return sorted(set(bases))


def cgroups_of(pid):
    """Every cgroup named for coil pid that exists now."""
    found = set()
    for b in cgroup_bases():
        p = os.path.join(b, "coil.%d" % pid)
        if os.path.isdir(p):
            found.add(p)
    for p in glob.glob("/sys/fs/cgroup/*/coil.%d" % pid) + \
            glob.glob("/sys/fs/cgroup/coil.%d" % pid):
        found.add(p)
    return sorted(found)


def tmpdirs_of(tmp, pid):
    return sorted(glob.glob(os.path.join(tmp, "coil-%d-*" % pid)))


def live(pids):
    """The pids of pids that are alive (zombies are not)."""
    out = []
    for p in pids:
        pr = coiltest.proc(p)
        if pr is not None and not pr.zombie:
            out.append(p)
    return out
