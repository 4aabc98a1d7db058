#!/usr/bin/python3
# coil's start-up sweep removes what a coil killed before its teardown
# left - a coil-<N>-XXXXXX temp dir, a coil.<N> cgroup - when coil N is
# gone, and only then: a live coil's, a locked dir (an init still holds
# it), a name that is not coil's, a file, stay.  A symlink planted in a
# stale dir is removed, never followed.
#
# The stale things are made here: the dirs under this test's TMPDIR, the
# cgroups under a cgroup this test creates and runs coil in (coil sweeps
# beside its own cgroup).  coil runs with --sandbox none, so it makes no
# cgroup or temp dir of its own there, and sweeps before it starts; then
# with the standard sandbox, whose janitor sweeps while the session
# starts (this test waits for it).
import fcntl
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cleanlib import cgroup_bases  # noqa: E402
from coiltest import (COIL, check, skip, done, workdir, cleanup,  # noqa: E402
                      wait_for)

SPAN = 100000000        # the probe's sessions are numbered N + SPAN


def dead_pid():
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def mkdir(path):
    os.mkdir(path)
    return path


wd, tmp = workdir(), workdir("tmp-")
dead = dead_pid()
sleeper = subprocess.Popen(["sleep", "120"])
alive = sleeper.pid

# A canary outside, which the planted links point at.
canary_dir = mkdir(os.path.join(wd, "outside"))
canary = os.path.join(canary_dir, "canary")
open(canary, "w").write("keep me")

stale = mkdir(os.path.join(tmp, "coil-%d-aaaaaa" % dead))
open(os.path.join(stale, "f"), "w").write("x")
mkdir(os.path.join(stale, "sub"))
open(os.path.join(stale, "sub", "g"), "w").write("y")
os.symlink(canary, os.path.join(stale, "link-to-file"))
os.symlink(canary_dir, os.path.join(stale, "link-to-dir"))
probe = mkdir(os.path.join(tmp, "coil-%d-bbbbbb" % (SPAN + dead)))
live_dir = mkdir(os.path.join(tmp, "coil-%d-cccccc" % alive))
locked = mkdir(os.path.join(tmp, "coil-%d-dddddd" % dead))
lock_fd = os.open(locked, os.O_RDONLY)
fcntl.flock(lock_fd, fcntl.LOCK_EX)
odd = mkdir(os.path.join(tmp, "coil-%d-short" % dead))
plain_file = os.path.join(tmp, "coil-%d-eeeeee" % dead)
open(plain_file, "w").write("not a dir")
mine = mkdir(os.path.join(tmp, "mine-%d-ffffff" % dead))

# A cgroup of our own to run coil in, with stale and live coil.N beside.
test_cg = None
if os.geteuid() == 0:
    for base in cgroup_bases():
        try:
            test_cg = mkdir(os.path.join(base, "coiltest.%d" % os.getpid()))
            break
        except OSError:
            continue
cg = {}
if test_cg is not None:
    for name, n in (("dead", dead), ("probe", SPAN + dead), ("live", alive)):
        cg[name] = mkdir(os.path.join(test_cg, "coil.%d" % n))


def into_test_cgroup():
    if test_cg is not None:
        with open(os.path.join(test_cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))


env = dict(os.environ, TMPDIR=tmp)
p = subprocess.run([COIL, "--agent", "--sandbox", "none"], input=b"",
                   capture_output=True, env=env, cwd=wd, timeout=60,
                   preexec_fn=into_test_cgroup)
check(p.returncode == 0, "coil starts and ends", p.stderr[-2000:])

check(not os.path.exists(stale), "a dead coil's temp dir is removed",
      os.listdir(tmp))
check(not os.path.exists(probe), "a dead coil's probe dir is removed")
check(os.path.exists(canary) and open(canary).read() == "keep me" and
      os.listdir(canary_dir) == ["canary"],
      "the links planted in it were not followed", os.listdir(canary_dir))
check(os.path.isdir(live_dir), "a live coil's temp dir stays")
check(os.path.isdir(locked), "a locked temp dir (its init lives) stays")
check(os.path.isdir(odd) and os.path.isfile(plain_file) and
      os.path.isdir(mine), "names that are not coil's temp dirs stay",
      os.listdir(tmp))

if test_cg is None:
    for what in ("a dead coil's cgroup is removed",
                 "a dead coil's probe cgroup is removed",
                 "a live coil's cgroup stays"):
        skip(what, "no cgroup hierarchy this test may create a cgroup "
             "in (not root, or cgroupfs read-only)")
else:
    check(not os.path.exists(cg["dead"]), "a dead coil's cgroup is "
          "removed", os.listdir(test_cg))
    check(not os.path.exists(cg["probe"]), "a dead coil's probe cgroup "
          "is removed", os.listdir(test_cg))
    check(os.path.isdir(cg["live"]), "a live coil's cgroup stays")

# Again with the standard sandbox: the janitor sweeps, the session's
# start does not wait for it.
again = [mkdir(os.path.join(tmp, "coil-%d-gggggg" % dead))]
if test_cg is not None:
    again.append(mkdir(os.path.join(test_cg, "coil.%d" % dead)))
p = subprocess.run([COIL, "--agent"], input=b'{"code": "1+1"}\n',
                   capture_output=True, env=env, cwd=wd, timeout=60,
                   preexec_fn=into_test_cgroup)
check(p.returncode == 0 and b'"result":"2"' in p.stdout,
      "coil with the standard sandbox starts, answers and ends",
      p.stdout[-500:] + p.stderr[-2000:])
check(wait_for(lambda: not any(os.path.exists(d) for d in again),
               timeout=30),
      "its janitor sweeps a dead coil's temp dir%s" %
      (" and cgroup" if test_cg is not None else ""),
      [d for d in again if os.path.exists(d)])
check(os.path.isdir(live_dir) and os.path.isdir(locked),
      "and leaves a live coil's and a locked one")

if test_cg is not None:
    for d in cg.values():
        if os.path.isdir(d):
            os.rmdir(d)

    def test_cg_empty():
        with open(os.path.join(test_cg, "cgroup.procs")) as f:
            return f.read().strip() == ""
    wait_for(test_cg_empty, timeout=5)
    try:
        os.rmdir(test_cg)
    except OSError as e:
        print("# could not remove %s: %s" % (test_cg, e))

os.close(lock_fd)
sleeper.kill()
sleeper.wait()
cleanup(tmp)
cleanup(wd)
done()
