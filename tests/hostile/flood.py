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
from coiltest import Coil, check, done, vm_kb  # noqa: E402

CAP = 64 << 10                  # --max-output's default
LINES = 2_000_000               # of 100 bytes: 200 MB
MARKER = re.compile(r"\n\[\.\.\. coil: (\d+) bytes truncated \.\.\.\]\n")


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
        # The cell's output is ASCII: no character is cut, so head and
        # tail fill the cap exactly, half each.
        check(kept == CAP and len(head) == CAP // 2,
              "head and tail keep %d bytes, the cap" % CAP,
              "head %d, tail %d" % (len(head), len(tail)))
        check(head == printed(0, CAP // 100 + 1).encode()[:len(head)],
              "the head is the first bytes printed", head[-200:])
        check(tail == printed(LINES - CAP // 100 - 1,
                              LINES).encode()[-len(tail):],
              "the tail is the last bytes printed", tail[:200])
        check(r.get("truncated") == 100 * LINES - kept,
              "truncated counts the bytes left out",
              (r.get("truncated"), 100 * LINES - kept))
        check(int(m.group(1)) == r.get("truncated"),
              "the marker says as many", m.group(0))
    hwm = vm_kb(c.pid, "VmHWM")
    check(0 < hwm < 16 * 1024, "supervisor peak RSS %d kB < 16 MB" % hwm)

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
