#!/usr/bin/python3
"""A huge text in an answer is cut, never turned into an OverflowError.

The worker cuts a result, an error message and a traceback before they
cross the socket (worker.py's _cut), and the supervisor weighs its
frames (chan.h: 64 MiB, a string of 32 MiB at most).  The cut is by
UTF-8 bytes: at --max-output 16M, the documented maximum, an error of
40 million 'é' (80 MB), of 40 million ASCII letters, and a result of
20 million 4-byte characters each come back as themselves, cut in the
middle with the supervisor's marker, whose count of bytes cut plus the
bytes kept is the whole text's.  A cut by characters let 2 x 16 M
non-ASCII characters through, a frame over the limit, and the answer
became "OverflowError: the answer is too large to send".  And an
input() prompt or a help page over the limits is the cell's
OverflowError: the worker is not ended for sending it.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

CAP = 16 << 20
MARK = re.compile(r"\n\[\.\.\. coil: (\d+) lines?, (\d+) bytes? cut "
                  r"\.\.\.\]\n")


def whole(text, total, what):
    """text is a cut of a text of total UTF-8 bytes: one marker, its
    count and the bytes kept adding up to total, within the cap."""
    found = MARK.findall(text or "")
    kept = len(MARK.sub("", text or "", count=1).encode("utf-8"))
    check(len(found) == 1 and int(found[0][1]) + kept == total and
          kept <= CAP,
          "%s: cut once in the middle, %d bytes kept of %d"
          % (what, kept, total),
          found)


with Coil("--max-output", "16M", "--timeout", "120") as c:
    for what, ch, n in (("40M 'é' (80 MB)", "é", 40_000_000),
                        ("40M ASCII letters", "a", 40_000_000)):
        r = c.run("raise ValueError(%r * %d)" % (ch, n), timeout=300)
        err = r.get("error") or {}
        check(r.get("status") == "error" and err.get("type") == "ValueError",
              "an error message of %s comes back as its ValueError"
              % what, {"status": r.get("status"), "type": err.get("type"),
                       "message": (err.get("message") or "")[:200]})
        whole(err.get("message"), n * len(ch.encode("utf-8")),
              "the message of %s" % what)
        tb = err.get("traceback") or ""
        check(tb.count(ch * 1000) > 0 and len(MARK.findall(tb)) == 1,
              "its traceback is cut too", tb[:200])
    r = c.run("'\\U0001F600' * 20_000_000", timeout=300)
    check(r.get("status") == "ok", "a result of 20M 4-byte characters is "
          "answered", {k: r.get(k) for k in ("status", "error")})
    # the repr: the characters and two quotes
    whole(r.get("result"), 20_000_000 * 4 + 2,
          "the result of 20M 4-byte characters")
    # input()'s prompt and help's page cross in a frame of their own
    # (worker-ask.c): one over the limits is the cell's OverflowError,
    # not a violation that ends the worker
    c.run("kept = 'here'")
    for what, args in (("an input() prompt", "'p' * 30_000_000"),
                       ("a help page", "'', 'p' * 30_000_000")):
        r = c.run("import sys\nsys.modules['_coil']._ask(%s)" % args)
        err = r.get("error") or {}
        check(r.get("status") == "error" and
              err.get("type") == "OverflowError" and
              "too large to send" in (err.get("message") or ""),
              "%s of 30 MB is an OverflowError" % what,
              {"status": r.get("status"), "error": err.get("message")})
    r = c.run("kept")
    check(r.get("result") == "'here'", "the worker lives on", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())
done()
