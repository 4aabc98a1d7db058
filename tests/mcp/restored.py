#!/usr/bin/python3
"""The model is told whenever the state changes under it (issue 24,
part 2), over MCP.

A call cancelled while its cell runs gets no answer (notifications/
cancelled), yet a cell that ignores the interrupt is killed after its
grace and the worker restored: what it lost and what was run again is
said at once in a notifications/message (level warning, MCP's logging)
and in the next call's result, as "restored" in its structuredContent
and a warning in its text.  An interrupt that sufficed changes nothing
and says nothing; logging/setLevel above warning stops the message,
not the result's word.  A frame forged on the control socket and a
worker killed between calls put "restored" on the result they belong
to: the forging call's, and the next one.
"""
import os
import signal
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (check, check_exit, cleanup, done,  # noqa: E402
                      wait_for, workdir, workers)
from mcplib import Mcp, text  # noqa: E402


# Prints, then ignores the interrupt: only a kill stops it.
STUBBORN = ("import signal, time\nsignal.signal(signal.SIGINT, "
            "signal.SIG_IGN)\nprint('running', flush=True)\ntime.sleep(60)")
# Prints, then sleeps: the interrupt stops it.
MILD = "import time\nprint('running', flush=True)\ntime.sleep(60)"


def handshake(m):
    m.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}, "init")


def cancel_running(m, rid, code):
    m.call(rid, code, progress=rid)
    m.until(lambda x: x.get("method") == "notifications/progress")
    m.send_msg({"method": "notifications/cancelled",
                "params": {"requestId": rid}})


def session(wd, level):
    with Mcp("--workdir", wd, "--no-record", "--grace", "0.5") as m:
        handshake(m)
        m.send_msg({"method": "notifications/initialized"})
        if level is not None:
            r = m.rpc("logging/setLevel", {"level": level}, "level")
            check(r.get("result") == {}, "logging/setLevel %s" % level, r)
        # keep and unkept back to back: no checkpoint between them
        m.call("a", "keep = 1")
        m.call("b", "unkept = keep + 1")
        m.response("a")
        m.response("b")
        cancel_running(m, "c", STUBBORN)
        note = m.until(lambda x: x.get("method") == "notifications/message"
                       or x.get("id") == "d") if level is None else None
        m.call("d", "keep, unkept")
        r = m.response("d")
        check_exit(m, "coil --mcp exits 0")
    return note, r, m.events


# Writes a frame that is no JSON on every socket the worker holds.
FORGE = ("import os, stat\nfor n in os.listdir('/proc/self/fd'):\n"
         "    try:\n        fd = int(n)\n"
         "        if stat.S_ISSOCK(os.fstat(fd).st_mode):\n"
         "            os.write(fd, b'\\x05\\0\\0\\0\\0\\0\\0\\0hello')\n"
         "    except OSError:\n        pass")


def forged_and_idle(wd):
    with Mcp("--workdir", wd, "--no-record", "--checkpoints", "0",
             "--sandbox", "none") as m:
        handshake(m)
        m.call("a", "keep = 1")
        m.call("b", FORGE)
        m.response("a")
        r = m.response("b")
        sc = r["result"]["structuredContent"]
        check(sc.get("status") == "crashed" and
              (sc.get("restored") or {}).get("redone") == [1] and
              "broke protocol" in text(r),
              "a forged frame: the call's result says the worker broke "
              "protocol, and what was restored and redone", r)
        old = workers(m.pid)
        os.kill(old[0], signal.SIGKILL)
        check(wait_for(lambda: [p for p in workers(m.pid) if p != old[0]]),
              "a worker killed between calls is replaced")
        m.call("c", "keep")
        r = m.response("c")
        sc = r["result"]["structuredContent"]
        check(sc.get("result") == "1" and
              (sc.get("restored") or {}).get("redone") == [1] and
              "died between requests" in text(r),
              "killed between calls: the next result carries 'restored' "
              "and the warning", r)
        check_exit(m, "coil --mcp exits 0")


def main():
    wd = workdir()
    try:
        note, r, events = session(wd, None)
        sc = (r.get("result") or {}).get("structuredContent", {})
        check(note is not None and note.get("method") ==
              "notifications/message" and
              note["params"].get("level") == "warning" and
              "cancelled" in note["params"]["data"].get("message", "") and
              "cell" in note["params"]["data"].get("restored", {}),
              "a cancelled call whose worker was killed: a warning "
              "notification says so at once, with what was restored",
              note)
        # (cells 1 and 2 were run again, unless a checkpoint came
        # between them and the cancelled one: either way both are there)
        check(sc.get("result") == "(1, 2)" and
              "cell" in (sc.get("restored") or {}) and
              "the call you cancelled left the session changed" in text(r),
              "the next result carries 'restored' and a warning, and the "
              "state it says", r)
        check(not any(e.get("id") == "c" for e in events),
              "the cancelled call is not answered", events)

        forged_and_idle(wd)
        _, r, events = session(wd, "error")
        check(not any(e.get("method") == "notifications/message"
                      for e in events),
              "logging/setLevel error: no warning notification", events)
        check("cell" in (r["result"]["structuredContent"].get("restored")
                         or {}) and "cancelled" in text(r),
              "the next result still says it", r)

        with Mcp("--workdir", wd, "--no-record") as m:
            handshake(m)
            m.call("a", "keep = 1")
            m.response("a")
            cancel_running(m, "b", MILD)
            m.call("c", "keep")
            r = m.response("c")
            check("restored" not in r["result"]["structuredContent"] and
                  "cancelled" not in text(r) and not any(
                      e.get("method") == "notifications/message"
                      for e in m.events),
                  "an interrupt that sufficed changes nothing, and says "
                  "nothing", r)
            check_exit(m, "coil --mcp exits 0")
    finally:
        cleanup(wd)
    done()


main()
