#!/usr/bin/python3
"""Every file-system call in src/ is on the inventory: a comment at the
call (on its line or in the three lines above it, or above the function
that holds it) that says which place it touches and who can write that
place, tagged with one of the classes below.  So a new open, rename or unlink in the supervisor cannot slip in
unreviewed: it fails here until its comment says why a cell cannot have
planted what it touches.  coil(1), FILES, summarises the classes.

    fs(proc)     /proc or /sys of coil's own processes: the kernel's
    fs(cgroup)   the cgroup file system: root's or a delegated subtree
    fs(walked)   through a descriptor hostfs_walk gave (hostfs.h): no
                 link followed where cells may write
    fs(held)     through a descriptor opened before any cell ran
    fs(private)  a dir only coil's user can enter, made by coil (0700),
                 or a file made O_EXCL in one
    fs(user)     a path the user named, used before any cell ran
    fs(newroot)  init, building the worker's root in its own mount
                 namespace before the worker exists
    fs(worker)   runs in the worker, under the sandbox: the cell's rights
    fs(dev)      /dev/null and the terminal
    fs(exec)     a program coil runs: which one, and why no file a cell
                 planted decides what it does
    fs(build)    a build-time tool, not part of coil's processes
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done  # noqa: E402

CLASSES = {"proc", "cgroup", "walked", "held", "private", "user", "newroot",
           "worker", "dev", "build", "exec"}
CALLS = (r"fopen|open|openat|creat|unlink|unlinkat|rename|renameat|"
         r"renameat2|mkdir|mkdirat|rmdir|opendir|symlink|symlinkat|link|"
         r"linkat|chmod|fchmodat|chown|fchownat|lchown|truncate|bind|"
         r"connect|stat|lstat|fstatat|statx|access|faccessat|realpath|"
         r"mkstemp|mkstemps|mkostemp|mkdtemp|tmpfile|readlink|readlinkat|chdir|scandir|"
         r"mount|umount2|open_tree|move_mount|pivot_root|json_dump_file|"
         r"json_load_file|history_truncate_file|read_history|"
         r"write_history|append_history|memfd_create|popen|system|execv|"
         r"execve|execvp|execvpe|execl|execlp|execle|fexecve|posix_spawn|"
         r"posix_spawnp|dlopen|freopen|mknod|mknodat|utimensat|statfs")
CALL = re.compile(r"(?<![\w.>])(%s)\s*\(|SYS_openat2" % CALLS)
TAG = re.compile(r"fs\((\w+)\)")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "src")


def code_of(line):
    """The line without its comments and strings (roughly: enough that
    a call named in a comment or a message is not a call)."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"/\*.*?\*/", "", line)
    line = re.sub(r"//.*", "", line)
    if line.lstrip().startswith("*"):
        return ""
    return line


def head_of(lines, i):
    """The comment right above the definition of the function holding
    line i: a mark there covers every call in the function."""
    while i > 0 and not re.match(r"^\w.*\(", lines[i]):
        i -= 1
    while i > 0 and re.match(r"^\w", lines[i - 1]):
        i -= 1          # the return type's line
    j = i
    while j > 0 and re.match(r"^(/\*| \*)", lines[j - 1]):
        j -= 1
    return "\n".join(lines[j:i])


untagged, badtag, calls = [], [], 0
sources = sorted(os.path.relpath(os.path.join(top, n), SRC)
                 for top, _, names in os.walk(SRC) for n in names
                 if n.endswith(".c") and n != "pyfiles.c")
for name in sources:
    with open(os.path.join(SRC, name)) as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        code = code_of(line)
        # a declaration or definition of coil's own function is no call
        if not CALL.search(code) or re.match(r"^\w", code):
            continue
        calls += 1
        near = "\n".join(lines[max(0, i - 3):i + 1])
        tags = TAG.findall(near) or TAG.findall(head_of(lines, i))
        where = "src/%s:%d: %s" % (name, i + 1, line.strip())
        if not tags:
            untagged.append(where)
        elif not set(tags) <= CLASSES:
            badtag.append(where + "  [%s]" % ", ".join(tags))

check(calls > 50, "the inventory found the file-system calls (%d)" % calls)
check(not untagged, "every file-system call in src/ has its fs(CLASS) "
      "comment saying what it touches and who can write there",
      "\n".join(untagged))
check(not badtag, "every fs(CLASS) is one of " + ", ".join(sorted(CLASSES)),
      "\n".join(badtag))
done()
