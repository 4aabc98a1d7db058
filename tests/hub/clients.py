#!/usr/bin/python3
"""Many clients on one session: the agent on stdin and clients on the
attach socket (coil --agent --listen PATH).

- Two clients sending the same ids each get their own answers, and the
  agent's vars sees the person's cell.
- An observer sees every event of every client, in order: each request
  queued, started, its output, its response; the namespace after cells.
- A client that stops reading is dropped with a message and never holds
  up the agent's answers; one that leaves has its queued requests
  cancelled and the session goes on.
- A client that leaves while its cell reads a line (input()) leaves it
  the end of input: the session does not wait for it.  One that only
  shuts its writing half after its request still gets the answer.
- A client that attaches while others' events are on their way gets
  each once: the cells it is told of at attach are not told again.
- The socket is 0600 in a directory only its owner enters; a peer of
  another user is refused with a message.
"""
import json
import os
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (Coil, check, check_exit, cleanup, done, skip, wait_for,
                      workdir)
from hublib import Attached, listen_path


def start(d, *args):
    path = listen_path(d)
    agent = Coil("--listen", path, "--workdir", d, *args)
    up = wait_for(lambda: os.path.exists(path), timeout=30)
    check(up, "the listen socket appears", agent.stderr_text())
    return agent, path


def attach(path, reading=True):
    """A client the session has taken in: its ping is answered (an
    observer sees events from then on, not from its connect)."""
    c = Attached(path, reading)
    if reading:
        c.call({"id": "hello", "op": "ping"})
    return c


def same_ids(agent, path):
    watcher = attach(path)
    b = attach(path)
    agent.send({"id": 1, "code": "a = 1\na"})
    b.send({"id": 1, "code": "b = 2\nprint('from b')\nb"})
    ra = agent.response(1)
    rb = b.response(1)
    check(ra.get("result") == "1" and "seq" not in ra,
          "the agent gets its own answer to id 1, as always", ra)
    check(rb.get("result") == "2" and rb.get("output") == "from b\n" and
          rb.get("origin") == "person" and isinstance(rb.get("seq"), int),
          "the attached client gets its own answer to id 1, with seq and "
          "origin", rb)
    rv = agent.call({"id": 2, "op": "vars"})
    names = sorted(v["name"] for v in rv.get("vars", []))
    check(names == ["a", "b"], "the agent's vars sees the person's cell",
          rv)
    check(not agent.events, "no line of the other client reached the "
          "agent", agent.events)
    resp = watcher.wait_event(lambda e: e.get("event") == "response" and
                              e["response"].get("seq") == rb["seq"])
    check(resp is not None and resp["response"].get("result") == "2",
          "an observer sees the other client's response whole", resp)
    stray = [e for e in b.events if e.get("event") == "response" and
             e["response"].get("id") == 1 and
             e["response"].get("seq") == rb["seq"]]
    check(not stray, "a client's own answer is a response line, not an "
          "event", stray)
    return watcher, b


def in_order(watcher):
    """Every request the watcher saw: queued < started < output <
    response (or cancelled), and the responses in the order the requests
    were run."""
    last = max(e["seq"] for e in watcher.events if "seq" in e)
    watcher.wait_event(lambda e: e.get("seq") == last and
                       e.get("event") in ("response", "cancelled"))
    own = {o.get("seq") for o in watcher.lines if "event" not in o}
    by_seq = {}
    for i, e in enumerate(watcher.events):
        if "seq" in e and e["seq"] not in own:
            by_seq.setdefault(e["seq"], []).append((i, e["event"]))
    bad = []
    for seq, evs in by_seq.items():
        kinds = [k for _, k in evs if k in ("queued", "started", "output",
                                            "response", "cancelled")]
        rank = {"queued": 0, "started": 1, "output": 2, "response": 3,
                "cancelled": 3}
        if kinds != sorted(kinds, key=rank.get) or kinds[0] != "queued" \
                or kinds[-1] not in ("response", "cancelled"):
            bad.append((seq, kinds))
    check(by_seq and not bad, "the observer saw each request queued, "
          "started, its output and its response, in that order",
          bad or watcher.events)
    answered = [e["seq"] for e in watcher.events
                if e.get("event") == "response"]
    execs = [s for s in answered
             if any(k == "started" for _, k in by_seq.get(s, []))]
    check(execs == sorted(execs), "responses to queued requests come in "
          "seq order", answered)
    origins = {e.get("origin") for e in watcher.events
               if e.get("event") == "queued"}
    check(origins == {"agent", "person"}, "events carry the origin of "
          "each request", origins)
    ns = [e for e in watcher.events if e.get("event") == "namespace"]
    check(ns and any(v["name"] == "b" for v in ns[-1].get("vars", [])) and
          all(e.get("seq") in by_seq for e in ns),
          "the observer gets the namespace after each cell, with the "
          "cell's seq", ns[-1:])
    cks = [e for e in watcher.events if e.get("event") == "checkpoint"]
    # "newest" once, at the attach: the checkpoint held then
    check(cks and cks[0].get("state") == "newest" and
          all(e.get("state") in ("taken", "failed") for e in cks[1:]),
          "the newest checkpoint at the attach, and each one taken",
          cks[:1] + cks[-2:])


def slow_reader(agent, path):
    """A client that never reads is dropped; the agent is answered."""
    stuck = Attached(path, reading=False)
    stuck.send({"id": "s", "op": "ping"})
    t0 = time.time()
    answered = 0
    for i in range(12):
        r = agent.run("print('x' * (6 << 20), end='')", timeout=120)
        answered += r.get("status") == "ok"
    check(answered == 12, "the agent got every answer while an attached "
          "client read nothing", "%d of 12" % answered)
    dropped = wait_for(lambda: "stopped reading" in agent.stderr_text(),
                       timeout=60)
    check(dropped, "the client that stopped reading was dropped, with a "
          "message", agent.stderr_text()[-2000:])
    r = agent.call({"op": "ping"})
    check(r.get("status") == "ok", "the session goes on after the drop", r)
    stuck.close()
    return time.time() - t0


def leaving(agent, watcher, path):
    """A client that leaves: its queued request is cancelled, the one
    running finishes for the observers, the session goes on."""
    c = attach(path)
    c.send({"id": "run", "code": "import time\ntime.sleep(2)\n'slept'"})
    c.send({"id": "queued", "code": "never = 1"})
    # Its own events say when its cell started: the watcher may still be
    # reading the flood slow_reader made, seconds behind.
    c.wait_event(lambda e: e.get("event") == "queued" and
                 e.get("id") == "queued")
    c.wait_event(lambda e: e.get("event") == "started" and
                 e.get("id") == "run")
    c.close()
    cancelled = watcher.wait_event(lambda e: e.get("event") == "cancelled"
                                   and e.get("id") == "queued")
    mine = [e for e in watcher.events if e.get("id") in ("run", "queued")]
    check(cancelled is not None and "left" in cancelled.get("reason", ""),
          "the leaving client's queued request is cancelled, and the "
          "observers hear why", mine)
    finished = watcher.wait_event(
        lambda e: e.get("event") == "response" and
        e["response"].get("id") == "run")
    check(finished is not None and
          finished["response"].get("result") == "'slept'",
          "its running cell finishes, and the observers see the answer",
          finished)
    rv = agent.call({"op": "vars"})
    check("never" not in [v["name"] for v in rv.get("vars", [])],
          "the cancelled cell never ran", rv)


def left_reading(agent, path):
    """A client whose cell waits in input() leaves: EOFError, and the
    agent's next cell runs."""
    c = attach(path)
    c.send({"id": "in", "code": "v = input('p? ')", "input": True})
    asked = c.wait_event(lambda e: e.get("event") == "input")
    check(asked is not None, "a client's cell asks it for a line",
          c.events[-3:])
    c.close()
    r = agent.call({"id": "after", "code": "'after'"}, timeout=20)
    check(r.get("result") == "'after'", "it leaves: the agent's next cell "
          "runs at once", r)
    rv = agent.call({"op": "vars"})
    check("v" not in [v["name"] for v in rv.get("vars", [])],
          "the cell that read got the end of input", rv)


def half_closed(path):
    """A client that sends its request and shuts its writing half, as
    nc -N does, still reads the answer."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    from hublib import connect
    connect(s, path)
    s.sendall(b'{"id": "hc", "code": "import time; time.sleep(0.5); '
              b'\'answer\'"}\n')
    s.shutdown(socket.SHUT_WR)
    got, buf = None, b""
    try:
        while got is None:
            data = s.recv(1 << 16)
            if not data:
                break
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                o = json.loads(line)
                if o.get("id") == "hc" and "status" in o:
                    got = o
    except OSError:
        pass
    s.close()
    check(got is not None and got.get("result") == "'answer'",
          "a client that shut its writing half gets its answer", got)


def once_each(agent, path):
    """A client attaching while another's cell is queued and started
    hears of it once."""
    a = attach(path)
    a.send({"id": "x", "code": "import time; time.sleep(1)"})
    b = Attached(path)      # no ping first: it comes in with a's request
    a.response("x")
    b.wait_event(lambda e: e.get("event") == "response" and
                 e["response"].get("id") == "x")
    seen = [(e.get("event"), e.get("seq")) for e in b.events
            if e.get("event") in ("queued", "started")]
    check(seen and len(seen) == len(set(seen)),
          "a client attaching then hears of each cell once", seen)
    a.close()
    b.close()


def refused(path):
    """A peer of another user is told why and closed.  Reaching the
    socket through its 0700 directory takes CAP_DAC_OVERRIDE, which the
    peer keeps as an ambient capability."""
    if os.geteuid() != 0:
        skip("another user's peer is refused", "needs root to be another "
             "user")
        return
    prog = ("import socket, sys\n"
            "sys.path.insert(0, %r)\n"
            "from hublib import connect\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "connect(s, sys.argv[1])\n"
            "print(s.makefile().readline(), end='')\n"
            % os.path.dirname(os.path.abspath(__file__)))
    try:
        out = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             "--inh-caps=+dac_override", "--ambient-caps=+dac_override",
             "/usr/bin/python3", "-c", prog, path],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        skip("another user's peer is refused", "setpriv: %s" % e)
        return
    if out.returncode != 0 and "Operation not permitted" in out.stderr:
        skip("another user's peer is refused", out.stderr.strip())
        return
    try:
        line = json.loads(out.stdout)
    except ValueError:
        line = out.stdout + out.stderr
    check(isinstance(line, dict) and line.get("event") == "refused" and
          "65534" in line.get("message", ""),
          "a peer of another user is refused, with a message", line)


def places(d):
    """A second session on a live socket is refused and the first keeps
    it; a path too long for a sockaddr_un still works."""
    first, path = start(d)
    second = Coil("--listen", path, "--workdir", d)
    status = second.close()
    check(status != 0 and "another session listens on" in
          second.stderr_text(), "a second session on a live socket is "
          "refused, and says why", (status, second.stderr_text()))
    c = Attached(path)
    r = c.call({"id": "still", "code": "1"})
    check(r.get("result") == "1", "the first session keeps its socket", r)
    c.close()
    check_exit(first, "the first session ends as usual")
    deep = os.path.join(d, "d" * 60, "e" * 60)
    os.makedirs(os.path.dirname(deep), 0o700)
    longp = os.path.join(deep, "coil.sock")
    agent = Coil("--listen", longp, "--workdir", d)
    up = wait_for(lambda: os.path.exists(longp), timeout=30)
    check(up and len(longp) > 108, "a socket path of %d bytes is made" %
          len(longp), agent.stderr_text())
    if up:
        c = Attached(longp)
        r = c.call({"id": "deep", "code": "2"})
        check(r.get("result") == "2", "a client attaches through it", r)
        c.close()
    check_exit(agent, "the session ends as usual")
    check(not os.path.exists(longp), "its socket is removed at the end")


def main():
    d = workdir()
    try:
        agent, path = start(d, "--max-output", "4M")
        st = os.stat(path)
        check(stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
              "the socket is mode 0600", oct(st.st_mode))
        watcher, b = same_ids(agent, path)
        slow_reader(agent, path)
        leaving(agent, watcher, path)
        in_order(watcher)
        left_reading(agent, path)
        half_closed(path)
        for _ in range(5):
            once_each(agent, path)
        refused(path)
        b.close()
        check_exit(agent, "coil exits 0 at the end of the agent's input")
        end = watcher.wait_event(lambda e: e.get("event") == "end")
        check(end is not None, "attached clients hear that the session "
              "ended", watcher.events[-3:])
        check(not os.path.exists(path), "the socket is removed at the end")
    finally:
        cleanup(d)
    d = workdir()
    try:
        places(d)
    finally:
        cleanup(d)
    done()


main()
