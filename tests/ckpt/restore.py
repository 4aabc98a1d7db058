#!/usr/bin/python3
# Restore on every failure: a segfault, os._exit, a kill from outside, a
# timeout that needs SIGKILL.  The response says which cell the namespace
# is back at, and the next request sees exactly that state.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (  # noqa: E402
    check, done, unsandboxed, workdir, cleanup, check_exit)

wd = workdir()
# "every": these pin the restore to the cell just before the crash, one
# checkpoint per cell; the default policy has its own test (policy.py).
with unsandboxed("--grace", "0.5", "--checkpoint-policy", "every",
                workdir=wd) as c:
    c.call({"code": "a = 1\nimport random\nrandom.seed(7)"})
    c.call({"code": "b = [1, 2, 3]\nclass K:\n    pass\nk = K()\nk.v = 'obj'"})
    r = c.call({"code": "c = 3"})
    check(r["status"] == "ok" and r["cell"] == 3, "three cells ran", r)

    # A segfault: back at cell 3.
    r = c.call({"code": "a = 'changed'\nimport ctypes\nctypes.string_at(0)"})
    check(r["status"] == "crashed", "segfault: status crashed", r)
    check(r.get("restored") == {"cell": 3, "threads_lost": 0,
                                  "lost": []},
          "segfault: restored says cell 3, no threads lost", r)
    check("signal 11" in r["error"]["message"] and
          "back at the state after cell 3" in r["error"]["message"],
          "segfault: the message names the signal and the cell", r)
    r = c.call({"code": "a, b, k.v, c"})
    check(r.get("result") == "(1, [1, 2, 3], 'obj', 3)",
          "segfault: the namespace is really at cell 3", r)

    # os._exit after output: the output is still reported.
    r = c.call({"code": "print('bye'); b.append(4); import os; os._exit(3)"})
    check(r["status"] == "crashed" and r["output"] == "bye\n" and
          "exit status 3" in r["error"]["message"],
          "os._exit: crashed, output kept, exit status named", r)
    check(r["restored"]["cell"] == 5,
          "os._exit: restored to the cell before (5)", r)
    r = c.call({"code": "b"})
    check(r.get("result") == "[1, 2, 3]", "os._exit: b.append undone", r)

    # The random module's sequence goes on from the checkpoint's state:
    # the same draw twice, once before and once after a crash.  gauss()
    # draws two values at a time and keeps the second for the next call:
    # that half-used pair survives too.
    for what, setup, draw in (
            ("random's state", "pass", "random.random()"),
            ("random's pending gauss value",
             "random.seed(11); g1 = random.gauss()", "random.gauss()")):
        c.call({"code": setup + "\nst = random.getstate()"})
        r1 = c.call({"code": draw})
        c.call({"code": "random.setstate(st)"})
        crash = c.call({"code": "import os; os._exit(1)"})
        r2 = c.call({"code": draw})
        # where the crash went back to is in the detail: an intermittent
        # failure here (once in CI, 2026-12-05) is not traced yet
        check(r1.get("result") is not None and
              r1.get("result") == r2.get("result"),
              "%s survives a restore" % what,
              (r1, crash.get("restored"), r2))

    # A timeout that needs SIGKILL.
    r = c.call({"code": "d = 4"})
    dcell = r["cell"]
    r = c.call({"code": "import signal, time\n"
                "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                "d = 'lost'\ntime.sleep(60)", "timeout": 0.3})
    check(r["status"] == "timeout" and r["error"]["type"] == "TimeoutError",
          "ignored interrupt: status timeout", r)
    check(r.get("restored") == {"cell": dcell, "threads_lost": 0,
                                  "lost": []},
          "ignored interrupt: restored to the cell before", r)
    r = c.call({"code": "import signal; d, signal.getsignal(signal.SIGINT) "
                "is signal.default_int_handler"})
    check(r.get("result") == "(4, True)",
          "killed cell undone, its SIG_IGN too", r)

    # A timeout the interrupt settles: restored is null, nothing undone.
    r = c.call({"code": "e = 5\nimport time\ntime.sleep(30)",
                "timeout": 0.3})
    check(r["status"] == "timeout" and r["restored"] is None,
          "interrupt sufficed: restored null", r)
    r = c.call({"code": "e"})
    check(r.get("result") == "5", "interrupt sufficed: state kept", r)

    # Threads do not survive a fork: the restore says how many.
    r = c.call({"code": "import threading, time\n"
                "ev = threading.Event()\n"
                "t1 = threading.Thread(target=ev.wait, daemon=True)\n"
                "t2 = threading.Thread(target=ev.wait, daemon=True)\n"
                "t1.start(); t2.start()"})
    tcell = r["cell"]
    r = c.call({"code": "import os; os.kill(os.getpid(), 9)"})
    check(r["status"] == "crashed" and
          r.get("restored") == {"cell": tcell, "threads_lost": 2,
                                  "lost": []},
          "two threads lost, and said so", r)
    check("2 threads did not survive" in r["error"]["message"],
          "the message says so too", r)
    r = c.call({"code": "threading.active_count(), t1.is_alive()"})
    check(r.get("result") == "(1, False)",
          "the restored namespace has no thread running", r)
    r = c.call({"code": "print('after threads')"})
    check(r.get("output") == "after threads\n", "print works after", r)

    # The worker killed from outside between requests: the next response
    # says so, and the state is the last cell's.
    r = c.call({"code": "f = 6\nimport os\nos.getpid()"})
    fcell = r["cell"]
    pid = int(r["result"])
    # snapshots waits for the checkpoint the worker owes after the cell;
    # killed before it, the state of that cell is lost (and said so).
    r = c.call({"op": "snapshots"})
    check(any(x["cell"] == fcell and x["current"]
              for x in r["checkpoints"]),
          "snapshots lists the checkpoint of cell %d as current" % fcell, r)
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.3)
    r = c.call({"code": "f"})
    check(r.get("result") == "6", "killed between requests: state kept", r)
    w = " ".join(r.get("warnings", []))
    check("died between requests" in w and
          "after cell %d" % fcell in w,
          "killed between requests: a warning says so", r)

    # The resumed worker is a child of init, like the first one was.
    r = c.call({"code": "import os; os.getppid()"})
    ppid = int(r["result"])
    try:
        comm = open("/proc/%d/comm" % ppid).read().strip()
    except OSError:
        comm = None
    check(comm == "coil-init", "the resumed worker's parent is init", comm)

    # A resumed worker still streams a cell's output as it comes, and
    # still puts back an fd 1 the cell closed.
    r = c.call({"code": "import os; os._exit(5)"})
    c.events.clear()
    t0 = time.time()
    rid = c.send({"code": "import time\nprint('first')\ntime.sleep(0.6)\n"
                  "print('second')", "stream": True})
    first = c.line()
    t_first = time.time() - t0
    r = c.response(rid)
    check(first.get("event") == "output" and "first" in first.get("data", "")
          and t_first < 0.5 and r["output"] == "first\nsecond\n",
          "a resumed worker streams output (first line after %.2f s)"
          % t_first, (first, r))
    c.call({"code": "import os; os.close(1)"})
    r = c.call({"code": "print('fd 1 is back')"})
    check(r.get("output") == "fd 1 is back\n",
          "a resumed worker repairs a closed fd 1", r)

    # Restore is quick: well under a fresh interpreter's start.
    r = c.call({"code": "g = 7"})
    t0 = time.time()
    r = c.call({"code": "import os; os._exit(0)"})
    dt = time.time() - t0
    check(r["restored"]["cell"] == r["cell"] - 1 and dt < 1.0,
          "restore took %.1f ms" % (dt * 1000), r)
    check_exit(c, "coil --grace 0.5 exits 0")
cleanup(wd)

# Without checkpoints: a crash starts a fresh namespace and says so; the
# cell before it is run again (tests/ckpt/redo.py), unless --redo none.
for redo, restored, said, z in (
        ("safe", {"cell": None, "threads_lost": 0, "redone": [1],
                  "differs": [], "lost": [], "lost_why": []},
         "cell 1 was run again", "True"),
        ("none", {"cell": None, "threads_lost": 0, "lost": [1]},
         "cell 1 is lost", "False")):
    with unsandboxed("--checkpoints", "0", "--redo", redo) as c:
        c.call({"code": "z = 1"})
        r = c.call({"code": "import os; os._exit(1)"})
        check(r["status"] == "crashed" and r["restored"] == restored,
              "--checkpoints 0, --redo %s: restored cell null, cell 1 %s" %
              (redo, "redone" if z == "True" else "lost"), r)
        check(said in r["error"]["message"],
              "--checkpoints 0, --redo %s: the message says so" % redo, r)
        check("fresh namespace" in r["error"]["message"],
              "--checkpoints 0, --redo %s: the message says fresh" % redo,
              r)
        r = c.call({"code": "'z' in dir()"})
        check(r.get("result") == z, "--checkpoints 0, --redo %s: z is %s" %
              (redo, "back" if z == "True" else "gone"), r)
        r = c.call({"op": "snapshots"})
        check(r["count"] == 0, "--checkpoints 0: no checkpoints", r)
        check_exit(c, "coil --checkpoints 0 --redo %s exits 0" % redo)
done()
