#!/usr/bin/python3
"""The agent on stdin and stdout is a client like any other: a model
that reads its answers slowly never holds up a deadline, and one that
stops reading altogether is dropped with a message: coil ends cleanly
(exit 1, nothing left behind), never blocked in a write."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, cleanup, done, in_dir, wait_for,
                      workdir)
from hublib import Attached, listen_path


def slow_stdout(d):
    """stdout is not read while cells run: the deadline of a runaway
    cell still fires (an observer on the socket sees its answer), and
    every answer is there, in order, once the model reads again."""
    path = listen_path(d)
    agent = Coil("--listen", path, "--workdir", d, "--max-output", "1M")
    wait_for(lambda: os.path.exists(path), timeout=30)
    watcher = Attached(path)
    for i in range(1, 4):
        agent.send({"id": i, "code": "print('x' * (1 << 20))"})
    agent.send({"id": 4, "code": "while True: pass", "timeout": 1})
    r = watcher.wait_event(lambda e: e.get("event") == "response" and
                           e["response"].get("id") == 4, timeout=120)
    check(r is not None and r["response"].get("status") == "timeout",
          "a runaway cell's deadline fires while the model reads nothing",
          r)
    ids = [agent.line().get("id") for _ in range(4)]
    check(ids == [1, 2, 3, 4], "every answer is there, in order, once the "
          "model reads", ids)
    agent.close()
    watcher.close()


def stopped_reading(d):
    """stdout is never read again: coil drops the client and ends."""
    agent = Coil("--workdir", d, "--max-output", "4M", "--checkpoints", "0")
    sent = 0
    try:
        for i in range(60):
            agent.send({"id": i, "code": "print('y' * (8 << 20), end='')"})
            sent += 1
    except BrokenPipeError:
        pass
    try:
        agent.proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        pass
    status = agent.proc.poll()
    err = agent.stderr_text()
    check(status == 1 and "stopped reading" in err,
          "a model that stops reading is dropped with a message, and coil "
          "exits 1", "status %s after %d requests\n%s" % (status, sent,
                                                         err[-2000:]))
    left = wait_for(lambda: not in_dir(d), timeout=10)
    check(left, "nothing of the session is left running", in_dir(d))
    agent.kill()


def main():
    d = workdir()
    try:
        slow_stdout(d)
        stopped_reading(d)
    finally:
        cleanup(d)
    done()


main()
