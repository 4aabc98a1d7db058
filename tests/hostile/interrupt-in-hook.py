#!/usr/bin/python3
"""An interrupt that lands in coil's own code run inside a cell (the
20 ms timer that flushes the cell's output, the audit hook that flushes
before a process starts or a signal goes) is the cell's: it must stop
the cell, not be swallowed there and leave the cell running until the
grace runs out and the worker is killed.  Seen once in CI as a timeout
with no traceback (tests/agent/answers-b.py) on a loaded machine: there
the interrupt came while the timer flushed the stream, and CPython's
BufferedWriter.flush returned with it still set, reported as a
SystemError caused by it, which the timer's handler swallowed.  That
path needs a signal inside a write(2) and is not forced here; a loop of
answers-b's cell under four busy loops lost 1 interrupt in 25 before,
none in 100 after.

Each cell here makes that code slow on purpose, with a stream whose
flush() sleeps 15 ms, so that most interrupts land in it: before the
fix most runs ran into the kill.  (Not longer than the timer's 20 ms:
then each tick would start inside the one before, ever deeper.)"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

SLOW = ("import sys, time, os\n"
        "class Slow:\n"
        "    def write(self, s):\n"
        "        return len(s)\n"
        "    def flush(self):\n"
        "        time.sleep(0.015)\n")
CASES = (
    ("the flush timer", SLOW + "sys.__stdout__ = Slow()\n"
     "while True:\n    pass"),
    ("the audit hook's flush", SLOW + "sys.stdout = Slow()\n"
     "while True:\n    os.kill(os.getpid(), 0)"),
)

for what, code in CASES:
    # a session each: the cell leaves its slow stream behind
    with Coil("--grace", "5") as c:
        r = c.call({"code": code, "timeout": 0.5})
        err = r.get("error") or {}
        check(r.get("status") == "timeout" and not r.get("restored") and
              "<cell" in (err.get("traceback") or ""),
              "%s: an interrupt landing in it stops the cell, which is "
              "not killed" % what, r)
        r = c.run("'alive'")
        check(r.get("result") == "'alive'", "%s: the session goes on"
              % what, r)
# The streams a cell leaves are its own business, whatever they are:
# without "closed", or with one that raises, the next cell still runs.
for what, stream in (
        ("no 'closed'", "class S:\n    def write(self, s): return len(s)"
         "\n    def flush(self): pass\n"),
        ("a 'closed' that raises",
         "class S:\n    def write(self, s): return len(s)\n"
         "    def flush(self): pass\n"
         "    @property\n    def closed(self): raise ValueError('no')\n")):
    with Coil() as c:
        c.run(stream + "import sys\nsys.stdout = sys.__stdout__ = S()")
        r = c.run("print('x'); 'alive'")
        check(r.get("status") == "ok" and r.get("result") == "'alive'",
              "a stream with %s left by a cell: the next cell runs"
              % what, r)
done()
