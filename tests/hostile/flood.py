#!/usr/bin/python3
# A cell that prints 200 MB: the response keeps exactly the first and
# the last bytes it printed, within --max-output (64 KiB), the marker
# between them says how many were left out, and the supervisor's memory
# stays small.
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import ASAN, Coil, check, done, skip, vm_kb  # noqa: E402

CAP = 64 << 10                  # --max-output's default
LINES = 2_000_000               # of 100 bytes: 200 MB
MARKER = re.compile(r"\n\[\.\.\. coil: (\d+) lines?, (\d+) bytes? cut \.\.\.\]\n")


def printed(first, last):
    """Lines first..last-1 of what the cell prints."""
    return "".join("%099d\n" % i for i in range(first, last))


with Coil("--timeout", "300") as c:
    r = c.call({"code": "import sys\nfor i in range(%d):\n"
                "    sys.stdout.write('%%099d\\n' %% i)" % LINES},
                timeout=300)
    check(r.get("status") == "ok", "200 MB cell finishes", r)
    out = r.get("output", "")
    marks = list(MARKER.finditer(out))
    check(len(marks) == 1, "one marker in the output", out[:300])
    if marks:
        m = marks[0]
        head, tail = out[:m.start()].encode(), out[m.end():].encode()
        kept = len(head) + len(tail)
        # The cell's output is ASCII lines of 100 bytes: each cut moves
        # back to the newline near it, so head and tail keep whole lines,
        # as many as fit in half the cap each.
        whole = CAP // 2 // 100
        check(head == printed(0, whole).encode(),
              "the head is the first %d lines printed" % whole, head[-200:])
        check(tail == printed(LINES - whole, LINES).encode(),
              "the tail is the last %d lines printed" % whole, tail[:200])
        check(r.get("truncated") == 100 * LINES - kept,
              "truncated counts the bytes left out",
              (r.get("truncated"), 100 * LINES - kept))
        check(int(m.group(2)) == r.get("truncated") and
              int(m.group(1)) == LINES - 2 * whole,
              "the marker says as many, and the lines", m.group(0))
    hwm = vm_kb(c.pid, "VmHWM")
    if ASAN:
        skip("supervisor peak RSS %d kB" % hwm,
             "a sanitizer build's memory figures mean nothing")
    else:
        check(0 < hwm < 16 * 1024,
              "supervisor peak RSS %d kB < 16 MB" % hwm)

    # os.write to a pipe may write less than it is given: all of it, in
    # a loop.
    r = c.call({"code": "import os\nn = 0\nwhile n < 100000:\n"
                "    n += os.write(1, b'\\xff' * (100000 - n))\nNone"})
    out = r.get("output", "")
    check(r.get("status") == "ok" and out.startswith("\\xff\\xff") and
          out.endswith("\\xff"), "invalid UTF-8 flood is escaped",
          out[:40])
    check(r.get("truncated") == 100000 - CAP and len(out) <= 4 * CAP + 64,
          "and capped as bytes", (r.get("truncated"), len(out)))

    r = c.call({"code": "'x' * 10_000_000"})
    res = r.get("result") or ""
    check(len(res.encode()) <= CAP + 64 and
          r.get("truncated") == 10_000_002 - CAP and
          res.startswith("'xxx") and res.endswith("xxx'"),
          "a huge result is capped the same way",
          (len(res), r.get("truncated"), res[:20], res[-20:]))
    check(c.close() == 0, "coil exits 0", c.stderr_text())
done()
