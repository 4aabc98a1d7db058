#!/usr/bin/python3
"""A refusal names what would lift it, or says that nothing will (issue
22, point 9).

Under standard and strict, a cell tries what the sandbox refuses in each
class of path: a secret of /etc, the kernel's files in /proc (another
process's memory, the cell's own descriptor reopened), a cgroup file,
/sys, a device.  Each answer must be a PermissionError whose words name
the option that lifts it (a directory for --allow-read, --memory for the
session's limits, --sandbox none where no --allow-* reaches), never
--allow-write DIR or --allow-read FILE, which could not help; and the
session goes on.  --allow-write /proc and a cgroup dir are refused at
start, since they would hand cells the kernel's files.

Nothing here is written: every file is opened without truncating and
left unwritten, and the kernel refuses each open even where the hook
would not speak (the words are the hook's; the refusal is the kernel's).
Whether coil runs as root decides the words for /etc's secrets: as
root, --allow-read /etc lifts them (its bind is id-mapped to root); as
another user, nothing does.
"""
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, cleanup, done, skip,  # noqa: E402
                      workdir)

CGROUP_FILES = """p = [l.split(":", 2)[2] for l in
     open("/proc/self/cgroup").read().split()
     if l.split(":")[1] in ("pids", "")][0]
import glob
f = (glob.glob("/sys/fs/cgroup/pids" + p + "/pids.max") +
     glob.glob("/sys/fs/cgroup" + p + "/pids.max"))"""
CGROUP = CGROUP_FILES + """
open(f[0], "a")"""

# (name, cell, words the refusal must hold, words it must not)
CASES = [
    ("another process's memory in /proc", "open('/proc/1/mem', 'r+b')",
     ["the kernel's files in /proc", "no --allow-write lifts it",
      "--sandbox none"], ["--allow-write DIR"]),
    ("the cell's own memory in /proc",
     "import os; open('/proc/%d/mem' % os.getpid(), 'r+b')",
     ["the kernel's files in /proc", "--sandbox none"],
     ["--allow-write DIR"]),
    ("its own stdout reopened through /proc/self/fd",
     "open('/proc/self/fd/1', 'a')",
     ["reopening a descriptor through /proc", "os.fdopen(fd, 'w')"],
     ["--allow-write"]),
    ("a cgroup file (the session's pids.max)", CGROUP,
     ["cgroup files", "--memory SIZE or --max-procs N"],
     ["--allow-write"]),
    ("a device the sandbox's /dev lacks", "open('/dev/sda', 'rb')",
     ["the machine's devices", "--sandbox none"], ["--allow-read"]),
]


def refusal(c, code):
    r = c.run(code)
    e = r.get("error") or {}
    return r["status"], e.get("type"), e.get("message") or ""


def shadow_case(profile, root):
    """/etc/shadow: under strict /etc is Python's few files only (so any
    directory named by --allow-read lifts it); under standard, as root,
    /etc's whole directory; as another user nothing does, and the refusal
    is the kernel's own (none of the sandbox's, so no words of it)."""
    if profile == "strict":
        return ["reading beyond Python's own files", "--allow-read DIR"]
    if root:
        return ["'/etc/shadow'", "--allow-read /etc to allow it"]
    # the user's own rights keep it (no sandbox rule): the kernel's
    # "Permission denied", naming no option
    return []


def landlock(profile):
    """Whether Landlock's file rules hold here: without them the hook
    has no rules to explain and stays quiet."""
    r = subprocess.run([COIL, "--sandbox", profile, "--sandbox-report"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=60)
    return re.search(r"^\s*on\s+landlock files", r.stdout.decode(
        "utf-8", "replace"), re.M) is not None


def run(profile):
    root = os.geteuid() == 0
    if not landlock(profile):
        skip("%s: the refusals' words" % profile,
             "Landlock's file rules are not on here: the hook stays quiet")
        return
    d = workdir()
    try:
        with Coil("--sandbox", profile, "--workdir", d, cwd=d) as c:
            cases = CASES + [("/etc/shadow", "open('/etc/shadow')",
                              shadow_case(profile, root),
                              ["--allow-read /etc/shadow"])]
            for name, code, want, never in cases:
                if code == CGROUP and c.run(CGROUP_FILES + "\nlen(f)").get(
                        "result") == "0":
                    skip("%s: %s: the refusal says what lifts it"
                         % (profile, name), "the session has no cgroup of "
                         "its own here (coil --sandbox-report: as this "
                         "user, none is delegated)")
                    continue
                if not want:
                    # the kernel's own refusal, which names no option
                    r = c.run(code)
                    e = r.get("error") or {}
                    msg = e.get("message") or ""
                    check(e.get("type") == "PermissionError" and
                          "--allow" not in msg,
                          "%s: %s: the refusal says what lifts it"
                          % (profile, name), r)
                    continue
                st, kind, msg = refusal(c, code)
                missing = [w for w in want if w not in msg]
                wrong = [w for w in never if w in msg]
                check(st == "error" and kind == "PermissionError" and
                      not missing and not wrong and
                      "%s sandbox" % profile in msg,
                      "%s: %s: the refusal says what lifts it"
                      % (profile, name),
                      "status %s %s: %r\nmissing %r, wrongly %r"
                      % (st, kind, msg, missing, wrong))
            r = c.run("6 * 7")
            check(r.get("result") == "42",
                  "%s: the session goes on after the refusals" % profile,
                  r)
    finally:
        cleanup(d)


def refused_at_start():
    d = workdir()
    try:
        for opt in ("/proc", "/proc/self", "/sys/fs/cgroup", "/dev"):
            r = subprocess.run([COIL, "--agent", "--allow-write", opt],
                               stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=d, timeout=60)
            err = r.stderr.decode("utf-8", "replace")
            check(r.returncode == 2 and "--allow-write '%s'" % opt in err
                  and "not the cells' to write" in err,
                  "--allow-write %s is refused at start, saying why" % opt,
                  "exit %d: %s" % (r.returncode, err))
    finally:
        cleanup(d)


refused_at_start()
for p in ("standard", "strict"):
    run(p)
done()
