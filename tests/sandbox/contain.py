#!/usr/bin/python3
"""contain.py COMMAND [ARG...] - run one coil contained by the harness.
($SBX_COMMAND, when set, is the COMMAND, and the arguments follow it.)

The sandbox tests attack the machine on purpose, and a sandbox layer that
fails (or --sandbox none) would let an attack through.  This runs COMMAND
where that cannot reach the host:

- a mount namespace of its own (propagation private) in which each dir of
  $SBX_OVERLAY (colon-separated: /etc, /usr/local, /usr/lib, /root, $HOME)
  is covered by an overlayfs whose upper layer is a tmpfs on $SBX_SCRATCH
  (a temp dir of the test's): a write, chmod or unlink there lands in the
  tmpfs, gone with the namespace.  Each overlay is checked in
  /proc/self/mountinfo, then a probe file named .sbx-probe-$SBX_PROBE is
  written through it and read back: the harness, outside, checks that the
  host has no such file before it sends a cell (sbxlib.run).
- $SBX_PASS (colon-separated): the test's own dirs (work dir, decoys)
  that lie under an overlaid dir, e.g. a build tree in /root: each is
  bound back over the overlay, so that the test sees what the session
  did there.
- $SBX_PLANT ({path: text}, JSON): files written inside the overlays only,
  e.g. a key in the real ~/.ssh for the sandboxed profiles to be refused.
- a PID namespace: this process forks PID 1 of it, which mounts its /proc,
  runs COMMAND and reaps; when COMMAND has exited, PID 1 writes one line
  "contain: left PID CMDLINE" on stderr for each process still alive
  after a second, and exits, which kills them all.  PID 1 dies with this
  process (PR_SET_PDEATHSIG), so killing this process ends everything.

Any failure exits 97 before COMMAND runs, with "contain: WHY" on stderr.
"""
import ctypes
import json
import os
import signal
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWPID = 0x20000, 0x20000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = \
    2, 4, 8, 0x1000, 0x4000, 1 << 18
PR_SET_PDEATHSIG = 1


def die(why):
    sys.stderr.write("contain: %s\n" % why)
    sys.stderr.flush()
    os._exit(97)


def mount(src, dst, fstype, flags, data=None):
    enc = (lambda s: s.encode() if s is not None else None)
    if libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags),
                  enc(data)) != 0:
        die("mount %s on '%s': %s" % (fstype or src, dst,
                                      os.strerror(ctypes.get_errno())))


def fstype_at(path):
    """The type of the top mount at path, from mountinfo."""
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if pre.split()[4] == path:
                found = post.split()[0]
    return found


def under_overlay(path, targets):
    return any(path == t or path.startswith(t.rstrip("/") + "/")
               for t in targets)


def pid1(cmd):
    """PID 1 of the harness's namespace: run cmd, reap, report what is
    left."""
    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    child = os.fork()
    if child == 0:
        try:
            os.execv(cmd[0], cmd)
        except OSError as e:
            die("cannot run '%s': %s" % (cmd[0], e))
    status = 0
    while True:
        try:
            p, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if p == child:
            status = st
            break
    end = time.time() + 1.0
    while True:
        while True:
            try:
                p, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                p = 0
            if p == 0:
                break
        left = [int(d) for d in os.listdir("/proc")
                if d.isdigit() and int(d) != 1]
        if not left or time.time() >= end:
            break
        time.sleep(0.05)
    for p in left:
        try:
            with open("/proc/%d/cmdline" % p, "rb") as f:
                line = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        sys.stderr.write("contain: left %d %s\n" % (p, line.strip()))
    sys.stderr.flush()
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status)
             else 128 + os.WTERMSIG(status))


def main():
    cmd = sys.argv[1:]
    if os.environ.get("SBX_COMMAND"):
        cmd = [os.environ["SBX_COMMAND"]] + cmd
    if not cmd:
        die("usage: contain.py COMMAND [ARG...]")
    scratch = os.environ.get("SBX_SCRATCH", "")
    probe = os.environ.get("SBX_PROBE", "")
    if not os.path.isdir(scratch) or not probe.isalnum():
        die("SBX_SCRATCH (a dir) and SBX_PROBE (a token) must be set")
    targets = []
    for t in os.environ.get("SBX_OVERLAY", "").split(":"):
        t = os.path.realpath(t) if t else ""
        if t and os.path.isdir(t) and t not in targets:
            targets.append(t)
    plant = json.loads(os.environ.get("SBX_PLANT") or "{}")
    if libc.unshare(CLONE_NEWNS | CLONE_NEWPID) != 0:
        die("unshare: %s" % os.strerror(ctypes.get_errno()))
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700")
    # through a descriptor: scratch itself may be under an overlaid dir
    # (a build tree in /root) and hidden once that overlay is mounted
    base = "/proc/self/fd/%d" % os.open(scratch, os.O_PATH)
    # the test's own dirs under an overlaid one: held aside, bound back
    # (never an overlaid dir itself, nor one holding a file to plant)
    keep = []
    planted = [os.path.realpath(p) for p in plant]
    for d in sorted(os.environ.get("SBX_PASS", "").split(":"), key=len):
        d = os.path.realpath(d) if d else ""
        if d and os.path.isdir(d) and under_overlay(d, targets) and \
                d not in targets and \
                not under_overlay(d, [kept for _, kept in keep]) and \
                not any(under_overlay(p, [d]) for p in planted) and \
                not under_overlay(d, [os.path.realpath(scratch)]):
            k = os.path.join(base, "k%d" % len(keep))
            os.mkdir(k)
            mount(d, k, None, MS_BIND | MS_REC)
            keep.append((k, d))
    for i, t in enumerate(targets):
        up, wk = os.path.join(base, "u%d" % i), os.path.join(base, "w%d" % i)
        os.mkdir(up)
        os.mkdir(wk)
        mount("overlay", t, "overlay", 0, "lowerdir=%s,upperdir=%s,"
              "workdir=%s" % (t, up, wk))
        if fstype_at(t) != "overlay":
            die("'%s' is not an overlay after mounting one" % t)
        p = os.path.join(t, ".sbx-probe-" + probe)
        with open(p, "w") as f:
            f.write(probe)
        with open(p) as f:
            if f.read() != probe:
                die("the probe in '%s' does not read back" % t)
        if not os.listdir(up):
            die("the probe did not land in the overlay of '%s'" % t)
    for k, d in keep:
        mount(k, d, None, MS_BIND | MS_REC)
        if fstype_at(d) == "overlay":
            die("'%s' is still the overlay after binding it back" % d)
    for path, text in plant.items():
        path = os.path.realpath(path)
        if not under_overlay(path, targets):
            die("'%s' to plant is outside the overlays" % path)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
    pid = os.fork()
    if pid == 0:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != 0 or os.getpid() != 1:
            die("not PID 1 of a new PID namespace (pid %d)" % os.getpid())
        pid1(cmd)
    signal.signal(signal.SIGTERM, lambda *a: os._exit(143))
    _, st = os.waitpid(pid, 0)
    sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st)
             else 128 + os.WTERMSIG(st))


if __name__ == "__main__":
    main()
