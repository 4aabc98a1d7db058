#!/usr/bin/python3
# A checkpoint that cannot be taken is reported on the next response,
# never skipped silently; an atomic cell is refused rather than run
# unprotected; a crash goes back to the last checkpoint there is.
#
# fork fails here the way it does under memory pressure: with the
# kernel's heuristic overcommit (vm.overcommit_memory = 0) a process may
# grow a private mapping past RAM + swap with mremap, but fork must
# account for all of it at once, and fails with ENOMEM.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, skip_all, check_exit)

try:
    mode = open("/proc/sys/vm/overcommit_memory").read().strip()
except OSError:
    mode = None
if mode != "0":
    skip_all("needs vm.overcommit_memory = 0 to make fork fail "
             "(it is %s)" % mode)

GROW = r'''
import ctypes, mmap
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = _libc.mremap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                       ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                         ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
def _kb(k):
    for l in open("/proc/meminfo"):
        if l.startswith(k + ":"):
            return int(l.split()[1]) * 1024
_total = _kb("MemTotal") + _kb("SwapTotal")
_a = int(_total * 0.6) & ~4095
_b = int(_total * 1.2) & ~4095
_p = _libc.mmap(None, _a, 3, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
_q = _libc.mremap(_p, _a, _b, 1)
big = (_q, _b)
'''
FREE = "_libc.munmap(big[0], big[1]); del big"

# --redo none: what a restore itself gives back (tests/ckpt/redo.py runs
# the lost cells again).
# "every": this pins one checkpoint per cell (policy.py tests the default).
with unsandboxed("--redo", "none", "--checkpoint-policy", "every") as c:
    c.call({"code": "a = 1"})                               # cell 1
    r = c.call({"code": GROW})                              # cell 2
    check(r["status"] == "ok", "a mapping past RAM + swap", r)
    r = c.call({"code": "b = 2"})                           # cell 3
    w = " ".join(r.get("warnings", []))
    check("no checkpoint could be taken after cell 2" in w and
          "Cannot allocate memory" in w and "back to cell 1" in w,
          "the next response warns, and says what a crash would cost", r)

    r = c.call({"code": "a = 'atomic'\n1/0", "atomic": True})
    check(r["status"] == "error" and
          r["error"]["type"] == "CheckpointError" and
          "did not run" in r["error"]["message"],
          "an atomic cell is refused, not run unprotected", r)
    r = c.call({"code": "a"})
    check(r.get("result") == "1", "... and it did not run", r)

    r = c.call({"op": "snapshot", "name": "nope"})
    check(r["status"] == "error" and
          r["error"]["type"] == "CheckpointError",
          "a snapshot that cannot be taken is an error", r)
    r = c.call({"op": "snapshots"})
    check(not any(x["name"] == "nope" for x in r["checkpoints"]),
          "... and not listed", r)

    # Memory freed: checkpoints work again.
    r = c.call({"code": FREE})
    r = c.call({"code": "c = 3"})
    check(not any("no checkpoint" in x for x in r.get("warnings", [])),
          "once the mapping is gone, no warning", r)
    r = c.call({"op": "snapshots"})
    check(any(x["current"] for x in r["checkpoints"]),
          "the current state has a checkpoint again", r)
    good = [x for x in r["checkpoints"] if x["current"]][0]["cell"]

    # Fork failing again, then a crash: back to the last one taken.
    c.call({"code": GROW})
    r = c.call({"code": "d = 4\nimport os\nos._exit(1)"})
    check(r["status"] == "crashed" and r["restored"]["cell"] == good,
          "crash: restored to cell %d, the last checkpoint" % good, r)
    r = c.call({"code": "a, b, c, 'big' in dir(), 'd' in dir()"})
    check(r.get("result") == "(1, 2, 3, False, False)",
          "the namespace is that of cell %d" % good, r)
    check_exit(c, "coil exits 0")
done()
