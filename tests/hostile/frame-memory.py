#!/usr/bin/python3
"""The supervisor's memory is bounded whatever the worker sends.

The supervisor runs outside every limit of the sandbox (--memory, the
cgroups), and jansson spends 30 to 240 bytes on each JSON value: 32 MiB
of nested JSON once took it to 2.6 GB.  chan.h's chan_peer_limits weigh
each frame from the worker before it is parsed: 64 MiB, 64 levels,
131072 values.  A cell writes, on its own control socket, the frames
worst for the parser at the largest size allowed: 64 MiB of arrays
nested past the limit, 64 MiB of empty objects, the most empty objects
allowed padded to 64 MiB (the frame that is parsed, then refused for
its missing seq), a header promising 1 GiB, an object key of 64 MiB and
a string value of 64 MiB (keys are bounded to 4 KiB, strings to 24
MiB), and strings of 24 MiB filling a frame (parsed, then refused for
its missing seq).  Each must end that
worker with a ProtocolError that says what was wrong, put the
namespace back at the cell before, and leave the session usable.  Then
legitimate lists at their worst: a million display entries and a
namespace of 200000 names, which answers cap at 1000 entries with the
count of the rest.

The bound: the supervisor's peak resident memory (VmHWM of the coil
process) may grow over its normal peak (after a few ordinary cells,
vars and complete) by at most 3 frame limits, 192 MiB: one for the frame
buffered whole before it is weighed, one for what jansson copies of its
strings, one for the 131072 values of at most ~256 bytes each (32 MiB)
and the answers built from a capped reply.  Not a multiple of the normal
size, which is a few MiB and would make any multiple meaningless: the
point is a fixed bound from the limits, where the same frames cost 40
to 80 times their size before (2.6 GB and more).  The test also prints
the peak as a multiple of the normal one.  Run under standard and
strict.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (ASAN, Coil, check, cleanup, done, skip,  # noqa: E402
                      workdir)

MIB = 1 << 20
FRAME = 64 * MIB            # chan.h's CHAN_PEER_FRAME
ITEMS = 128 << 10           # CHAN_PEER_ITEMS
STRING = FRAME // 8 * 3     # CHAN_PEER_STRING
BOUND = 3 * FRAME

# forge(body) writes a frame of body (bytes), or a bare header
# promising n bytes, whole, on every socket of the process.
HELPER = r'''
import os, stat, struct
def forge(body=None, n=None):
    data = struct.pack("II", len(body) if n is None else n, 0) + \
        (body or b"")
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if not stat.S_ISSOCK(os.fstat(fd).st_mode):
                continue
        except OSError:
            continue
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
'''

# (what, the cell's forge call, what the ProtocolError must say)
FRAMES = [
    ("64 MiB of nested arrays",
     'forge(b"[" * %d + b"]" * %d)' % (FRAME // 2, FRAME // 2),
     "nested over 64 levels"),
    ("64 MiB of empty objects",
     'forge(b"[" + b"{},{}," * %d + b"{}]")' % ((FRAME - 8) // 6),
     "over 131072 values"),
    # parsed, as it is within the limits: 5 items and the objects
    ("the most empty objects allowed, in 64 MiB",
     'b = b\'{"t": "reply", "x": [\' + b"{}," * %d + b"{}]}"\n'
     'forge(b + b" " * (%d - len(b)))' % (ITEMS - 6, FRAME),
     "carries no seq"),
    ("a header promising 1 GiB", "forge(n=1 << 30)",
     "over the limits of 67108864"),
    # jansson holds a string in its lexer's buffer, then as the value,
    # and a key once more in the hash table: 64 MiB of one grew the
    # peak by 192 and 256 MiB
    ("an object key of 64 MiB",
     'forge(b\'{"\' + b"k" * %d + b\'": 1}\')' % (FRAME - 7),
     "an object key of over 4096 bytes"),
    ("a string value of 64 MiB",
     'forge(b\'{"t": "reply", "x": "\' + b"s" * %d + b\'"}\')'
     % (FRAME - 23), "a string of over 25165824 bytes"),
    # parsed: strings as long as allowed (the last one shorter) fill
    # the frame; jansson holds each once more and the longest a third
    # time in its lexer's buffer
    ("strings of 24 MiB, in 64 MiB",
     'h = b\'{"t": "reply", "x": ["\' + \\\n'
     '    b\'", "\'.join([b"s" * %d] * 2) + b\'", "\'\n'
     'forge(h + b"s" * (%d - len(h) - 3) + b\'"]}\')'
     % (STRING, FRAME), "carries no seq"),
]


def hwm(pid):
    """The peak resident memory of process pid, in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def session(profile):
    wd = workdir()
    # "every": a forged frame must land the namespace on the cell just
    # before it, one checkpoint per cell.
    c = Coil("--sandbox", profile, "--timeout", "60", "--workdir", wd,
             "--checkpoint-policy", "every")
    try:
        r = c.run("keep = 0")
        if r.get("status") != "ok" and profile == "strict":
            skip("%s: the sandbox" % profile, r.get("error"))
            c.close()
            return
        if not check(r.get("status") == "ok", "%s: a first cell runs"
                     % profile, r):
            return
        # the normal peak: a few ordinary cells and the other ops
        c.run("import json\nx = list(range(1000))\nprint(len(x))")
        c.call({"op": "vars"})
        c.call({"op": "complete", "code": "js"})
        normal = hwm(c.pid)
        for i, (what, call, why) in enumerate(FRAMES, 1):
            tag = "%s, %s" % (profile, what)
            r = c.run("keep = %d" % i)
            before = r.get("cell")
            # once no checkpoint is owed (as in tests/proto/forge.py);
            # unkept says whether the state after `before` was kept
            snap = c.call({"op": "snapshots"})
            kept = before not in (snap.get("unkept") or [])
            # the helper in the same cell: a restore may go further back
            r = c.call({"code": HELPER + "spoiled = 1\n" + call})
            err = r.get("error") or {}
            check(r.get("status") == "crashed" and
                  err.get("type") == "ProtocolError" and
                  why in (err.get("message") or ""),
                  "%s: the worker is ended, the answer says '%s'"
                  % (tag, why), r)
            back = (r.get("restored") or {}).get("cell")
            check(back == before if kept else back is not None,
                  "%s: the namespace is back at cell %s" % (tag, before),
                  r.get("restored"))
            r = c.run("('spoiled' in globals(), 1 + 1)")
            check(r.get("result") == "(False, 2)",
                  "%s: the session goes on" % tag, r)
        # legitimate lists at their worst
        r = c.run("import sys\nsys.modules['_coil']._shown.extend("
                  "[{'type': 'text/plain', 'text': 'x'}] * 1000000)")
        check(r.get("status") == "ok" and len(r.get("display")) == 1000 and
              any("showed 1000000 objects" in w
                  for w in r.get("warnings", [])),
              "%s: a million display entries: 1000 kept, the count said"
              % profile, {k: r.get(k) for k in ("status", "warnings")})
        r = c.run("globals().update(('v%d' % i, i) for i in "
                  "range(200000))")
        check(r.get("status") == "ok", "%s: 200000 names" % profile, r)
        r = c.call({"op": "vars"})
        check(r.get("status") == "ok" and len(r.get("vars")) == 1000 and
              r.get("vars_more", 0) + 1000 >= 200000,
              "%s: vars of 200000 names: 1000 listed, the rest counted"
              % profile, {k: r.get(k) for k in ("status", "vars_more")})
        r = c.call({"op": "complete", "code": "v"})
        check(r.get("status") == "ok" and len(r.get("matches")) == 1000 and
              r.get("matches_more", 0) + 1000 >= 200000,
              "%s: completing among 200000 names: 1000 matches, the rest "
              "counted" % profile,
              {k: r.get(k) for k in ("status", "matches_more")})
        peak = hwm(c.pid)
        what = ("%s: the supervisor's peak memory grew by %.1f MiB, within "
                "%d MiB (%.1f MiB normal, %.1f x)"
                % (profile, (peak - normal) / MIB, BOUND // MIB,
                   normal / MIB, peak / max(normal, 1)))
        if ASAN:
            # freed blocks wait in the sanitizer's quarantine (256 MiB)
            # and every block has redzones: the bound is the plain
            # build's
            skip(what, "a sanitizer build's allocator holds what coil "
                 "frees; the plain build checks the bound")
        else:
            check(peak - normal <= BOUND, what)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())
    except Exception as e:      # a hang or a dead coil: say so, go on
        check(False, "%s: the session went on" % profile,
              "%r\n%s" % (e, c.stderr_text()))
        c.kill()
    finally:
        cleanup(wd)


for p in ("standard", "strict"):
    session(p)
done()
