#!/usr/bin/python3
"""A crash loses nothing the session can redo (issue 24, part 1).

Cells sent back to back, as a pipeline or a harness sends them, leave
no pause for the idle policy's checkpoint, so a crash goes back further
than the cell before it.  The cells it lost that did nothing outside the
namespace are run again before the answer, compared with what they
first answered, and "restored" says what became of each: "redone",
"differs" (with the first line that differs), "lost" and "lost_why".

Each crash (a segfault, os._exit, a kill after a timeout the cell
ignores, a frame forged on the control socket) under standard and
strict: the cells after it answer exactly as in a session that never
crashed (whatever checkpoint the policy had kept).  From a fresh
interpreter (--checkpoints 0, so that no checkpoint a loaded machine
makes sooner changes what is lost): a cell that wrote a file is lost,
not run twice, and so is every cell after it; a cell that draws from
random without a seed differs; a redo that crashes stops the redo there; --checkpoints 0
redoes from a fresh interpreter, also when the worker dies between
requests (the next answer carries "restored"); --redo none redoes
nothing.
"""
import os
import re
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    Coil, check, check_exit, cleanup, done, wait_for, workdir, workers)

STATE = [
    "x = 42",
    "def f(n):\n    return n * x",
    "data = [f(i) for i in range(5)]\nprint('data', data)",
    "class K:\n    def __init__(self, v):\n        self.v = v\nk = K('obj')",
    "x += 1\nx",
]
LATER = [
    "print(x, data, k.v)",
    "f(2)",
    "undefined_name",
    "sorted(n for n in globals() if not n.startswith('_'))",
]
FORGE = r'''
import os, stat
for name in os.listdir("/proc/self/fd"):
    fd = int(name)
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.write(fd, b"\x05\x00\x00\x00\x00\x00\x00\x00hello")
    except OSError:
        pass
'''
CRASHES = [
    ("a segfault", {"code": "import ctypes; ctypes.string_at(0)"}),
    ("os._exit", {"code": "import os; os._exit(3)"}),
    ("a kill after its timeout", {
        "code": "import signal, time\n"
                "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                "time.sleep(60)", "timeout": 0.5}),
    ("a forged frame", {"code": FORGE}),
]
# What an answer says, for comparing two sessions: not its number or
# its cost.
SAME = ("status", "output", "stderr", "result", "error")


def pipeline(c, reqs):
    """Send every request at once, then read their answers in order."""
    ids = [c.send(dict(r) if isinstance(r, dict) else {"code": r})
           for r in reqs]
    return [c.response(i, timeout=120) for i in ids]


def said(r):
    """r's words, its cell's number left out of the traceback."""
    out = {k: r.get(k) for k in SAME}
    if out["error"]:
        out["error"] = dict(out["error"], traceback=re.sub(
            r"<cell \d+>", "<cell>", out["error"].get("traceback") or ""))
    return out


def session(wd, *args):
    return Coil("--workdir", wd, "--grace", "0.5", *args, cwd=wd)


def crashes(wd, profile):
    with session(wd, "--sandbox", profile) as c:
        plain = [said(r) for r in pipeline(c, STATE + LATER)[len(STATE):]]
    check(plain[0]["output"] == "43 [0, 42, 84, 126, 168] obj\n",
          "%s: the session the others are compared with" % profile, plain)
    for what, crash in CRASHES:
        with session(wd, "--sandbox", profile) as c:
            got = pipeline(c, STATE + [crash] + LATER)
            r = got[len(STATE)]
            rest = got[len(STATE) + 1:]
            check_exit(c, "%s, %s: coil exits 0" % (profile, what))
        restored = r.get("restored") or {}
        # A loaded machine may make the cells long enough for the state
        # after the last of them to be kept at once: then nothing is
        # lost, and nothing is to be run again.
        kept = restored.get("cell") == len(STATE)
        check(r.get("status") in ("crashed", "timeout") and
              (restored.get("redone") or kept) and
              not restored.get("lost") and
              restored.get("differs", []) == [],
              "%s, %s: the lost cells were run again, all answering as "
              "before" % (profile, what), r)
        start = restored.get("cell") or 0
        check(kept or start < len(STATE) and
              restored.get("redone") == list(range(start + 1,
                                                   len(STATE) + 1)),
              "%s, %s: 'redone' lists the cells after the restore's" %
              (profile, what), restored)
        check([said(x) for x in rest] == plain,
              "%s, %s: the cells after it answer as if it never crashed" %
              (profile, what), [said(x) for x in rest])
        check(kept or "were run again and answered as before" in
              (r.get("error") or {}).get("message", ""),
              "%s, %s: the message says so" % (profile, what), r)


def effects(wd):
    log = os.path.join(wd, "log.txt")
    cells = ["a = 1",
             "import random\nr = random.random()\nr",
             "b = a + 1",
             "with open('log.txt', 'a') as fh:\n    fh.write('once\\n')\n"
             "c = 3",
             "d = 4",
             "import ctypes; ctypes.string_at(0)",
             "[name in globals() for name in 'abcd']"]
    # From a fresh interpreter: with checkpoints, a loaded machine makes
    # the cells long enough for one to be kept at once (CKPT_WORK_MS),
    # and the crash would lose less than the rule is checked on.
    with session(wd, "--checkpoints", "0") as c:
        got = pipeline(c, cells)
    restored = got[5].get("restored") or {}
    check(restored.get("redone") == [1, 3] and
          [d.get("cell") for d in restored.get("differs", [])] == [2],
          "a cell drawing from random without a seed is run again and "
          "listed in 'differs'", restored)
    first = (restored.get("differs") or [{}])[0].get("first", {})
    check(first.get("field") == "result" and first.get("was") ==
          got[1].get("result") and first.get("now") != first.get("was"),
          "'differs' gives the first line that differs, then and now",
          first)
    check(restored.get("lost") == [4, 5] and
          [w.get("cell") for w in restored.get("lost_why", [])] == [4, 5] and
          "log.txt" in restored["lost_why"][0]["why"] and
          "after cell 4" in restored["lost_why"][1]["why"],
          "a cell that wrote a file is lost with why, and so is every cell "
          "after it", restored)
    with open(log) as fh:
        check(fh.read() == "once\n", "the file was written once")
    check(got[6].get("result") == "[True, True, False, False]",
          "the namespace holds what was redone, not what was lost", got[6])
    check("cell 4: it wrote 'log.txt'" in got[5]["error"]["message"],
          "the message names the first lost cell and why",
          got[5]["error"]["message"])


def redo_crashes(wd):
    # Cell 2 dies when 'boom' exists, which the crashing cell makes: its
    # redo crashes too, and the redo stops there.
    cells = ["a = 1",
             "import os\nif os.path.exists('boom'):\n    os._exit(5)\nb = 2",
             "c = 3",
             "open('boom', 'w').close()\nimport ctypes; ctypes.string_at(0)",
             "[name in globals() for name in 'abc']"]
    with session(wd, "--checkpoints", "0") as c:
        got = pipeline(c, cells)
        check_exit(c, "a redo that crashes: coil exits 0")
    os.unlink(os.path.join(wd, "boom"))
    restored = got[3].get("restored") or {}
    why = {w["cell"]: w["why"] for w in restored.get("lost_why", [])}
    check(restored.get("cell") is None and restored.get("lost") == [1, 2, 3]
          and "crashed too" in why.get(2, "") and
          "lost again" in why.get(1, "") and "after a cell" in
          why.get(3, ""),
          "a redo that crashes stops there, and says what became of each "
          "cell", restored)
    check(got[4].get("result") == "[False, False, False]",
          "and the namespace is the fresh one the second crash left", got[4])


def idle(wd):
    # No checkpoints: a worker killed between requests comes back fresh,
    # and every cell is run again before the next request.
    with session(wd, "--checkpoints", "0", "--sandbox", "none") as c:
        pipeline(c, ["a = 1", "b = a + 1"])
        old = workers(c.pid)
        check(len(old) == 1, "the worker is found", old)
        os.kill(old[0], signal.SIGKILL)
        # the supervisor has seen the death once it starts another
        check(wait_for(lambda: [p for p in workers(c.pid) if p != old[0]]),
              "a new worker starts")
        r = c.run("a + b")
        check(r.get("result") == "3" and
              (r.get("restored") or {}).get("redone") == [1, 2],
              "after a death between requests, the next answer says what "
              "was redone, and the state is back", r)
        check(any("died between requests" in w and
                  "were run again" in w for w in r.get("warnings", [])),
              "and a warning says so", r)
        r = c.run("a")
        check("restored" not in r, "the answer after it has none", r)


def interrupted(wd):
    # An interrupt the cell ignores: killed after its grace, answered
    # with what was restored and redone.
    with session(wd) as c:
        pipeline(c, ["a = 1", "b = a + 1"])
        rid = c.send({"code": "import signal, time\n"
                      "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                      "print('on', flush=True)\ntime.sleep(60)",
                      "stream": True})
        while c.line().get("event") != "output":
            pass
        c.call({"op": "interrupt"})
        r = c.response(rid)
        check(r.get("status") == "interrupted" and
              "cell" in (r.get("restored") or {}) and
              c.run("a + b").get("result") == "3",
              "an interrupt the cell ignores: killed, answered with what "
              "was restored, the state back", r)


def redo_none(wd):
    with session(wd, "--redo", "none", "--checkpoints", "0") as c:
        got = pipeline(c, ["a = 1", "b = 2",
                           "import ctypes; ctypes.string_at(0)",
                           "'a' in globals()"])
    restored = got[2].get("restored") or {}
    check(restored.get("lost") and "redone" not in restored and
          got[3].get("result") == "False",
          "--redo none: the lost cells stay lost", got[2:])


def main():
    wd = workdir()
    try:
        for profile in ("standard", "strict"):
            crashes(wd, profile)
        effects(wd)
        redo_crashes(wd)
        idle(wd)
        interrupted(wd)
        redo_none(wd)
    finally:
        cleanup(wd)
    done()


main()
