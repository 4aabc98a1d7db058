#!/usr/bin/python3
"""Who interrupted a cell is in its answer (issue 25, part 5).

The interrupt op takes an optional "by", a short printable string:
checked as --request-schema says (1 to 64 characters, none a control
character), refused with the field named otherwise.  The answer of the
cell an interrupt stops says who asked: the agent's own "by", or, from
the attach socket, the person: the "by" sent, else the name the
session gave that client in its hello, "(an attached UI)".  With no
"by" from the agent, the answer says what it always said.  Over MCP the
tool's result says the same.  What a client attaching mid-cell is sent
says how long the cell has run and which checkpoint is the newest, and
a transcript names each attached person's cells beside their origin,
and replays.  Each cell waits on a file the test makes, not on a clock.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "mcp"))
from coiltest import COIL, Coil, check, cleanup, done, workdir  # noqa: E402
from mcplib import Mcp, text  # noqa: E402

SCHEMA = json.loads(subprocess.run([COIL, "--request-schema"],
                                   capture_output=True, timeout=30).stdout)


def waiting_cell(gate):
    """A cell that says it runs, then waits for the file gate."""
    return ("import os, time\nprint('running', flush=True)\n"
            "while not os.path.exists(%r):\n    time.sleep(0.02)" % gate)


class Peer:
    """A client of the attach socket, as a tool would be: the hello and
    the lines it is sent."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(60)
        self.s.connect(path)
        self.f = self.s.makefile("rb")
        self.hello = self.line()

    def line(self):
        return json.loads(self.f.readline())

    def send(self, req):
        self.s.sendall(json.dumps(req).encode() + b"\n")

    def until(self, pred):
        while True:
            msg = self.line()
            if pred(msg):
                return msg

    def close(self):
        self.f.close()
        self.s.close()


def started(agent, rid):
    """Wait for the streamed cell rid to say it runs."""
    while True:
        m = agent.line()
        if m.get("event") == "output" and m.get("id") == rid and \
                "running" in m.get("data", ""):
            return
        agent.events.append(m)


# ---- the field --------------------------------------------------------
p = SCHEMA["interrupt"]["properties"].get("by", {})
check(p.get("type") == "string" and p.get("minLength") == 1 and
      p.get("maxLength") == 64 and "pattern" in p,
      "--request-schema gives interrupt a 'by' of 1 to 64 characters", p)
with Coil("--sandbox", "none", "--no-record") as c:
    for by, why in (("", "empty"), ("a\nb", "a newline"),
                    ("a\x1b[31m", "an escape"), ("a\x85", "a C1 control"),
                    ("x" * 65, "65 characters"), (7, "a number")):
        r = c.call({"op": "interrupt", "by": by})
        check(r.get("status") == "invalid" and r["error"]["message"]
              .startswith("'by' must be a string of 1 to 64 characters"),
              "a 'by' that is %s is refused, the field named" % why, r)
    r = c.call({"op": "interrupt", "by": "\u540d" * 64})
    check(r.get("status") == "ok" and r.get("interrupted") is False,
          "64 characters of 3 bytes each are taken", r)
    r = c.run("1 + 1")
    check(r.get("result") == "2", "the session goes on", r)

# ---- the agent's own interrupt, and one from the socket ---------------
wd = workdir()
sockdir = tempfile.mkdtemp(prefix="coil-ib.", dir="/tmp")
path = os.path.join(sockdir, "s")
record = os.path.join(sockdir, "t.jsonl")
agent = peer = None
try:
    agent = Coil("--listen", path, "--workdir", wd, "--record", record)
    gates = [os.path.join(wd, "gate%d" % i) for i in range(4)]
    rid = agent.send({"code": waiting_cell(gates[0]), "stream": True})
    started(agent, rid)
    r = agent.call({"op": "interrupt"})
    a = agent.response(rid)
    check(a.get("status") == "interrupted" and a["error"]["message"] ==
          "interrupted by an interrupt request",
          "an interrupt without 'by' is told as before", a)

    rid = agent.send({"code": waiting_cell(gates[1]), "stream": True})
    started(agent, rid)
    agent.call({"op": "interrupt", "by": "ci-bot"})
    a = agent.response(rid)
    check(a.get("status") == "interrupted" and a["error"]["message"] ==
          'interrupted by agent "ci-bot"',
          "the agent's own 'by' is named with its origin", a)

    check(agent.call({"op": "snapshot", "name": "s"}).get("status") == "ok",
          "a snapshot: a checkpoint at cell 2")
    rid = agent.send({"code": waiting_cell(gates[2]), "stream": True})
    started(agent, rid)
    seen = time.monotonic()
    # the cell has run at least this long when the peer attaches
    while time.monotonic() - seen < 1.0:
        time.sleep(0.1)
    least = time.monotonic() - seen
    peer = Peer(path)
    name = peer.hello.get("name", "")
    check(peer.hello.get("event") == "hello" and isinstance(name, str) and
          0 < len(name) <= 64 and name.isprintable(),
          "the hello names the client", peer.hello)
    st = peer.until(lambda m: m.get("event") == "started")
    check(st.get("cell") == 3 and isinstance(st.get("elapsed_ms"), int) and
          st["elapsed_ms"] >= least * 1000 - 1,
          "an attach mid-cell is told how long it has run (>= %.0f ms)"
          % (least * 1000), st)
    ck = peer.until(lambda m: m.get("event") == "checkpoint")
    check(ck.get("state") == "newest" and ck.get("cell") == 2 and
          ck.get("kind") == "snapshot" and ck.get("count", 0) >= 1,
          "and which checkpoint is the newest", ck)
    peer.send({"id": "p1", "op": "interrupt", "by": "alice"})
    a = agent.response(rid)
    check(a.get("status") == "interrupted" and a["error"]["message"] ==
          'interrupted by person "alice" (an attached UI)',
          "an attached client's 'by': a person, attached", a)

    rid = agent.send({"code": waiting_cell(gates[3]), "stream": True})
    started(agent, rid)
    peer.send({"id": "p2", "op": "interrupt"})
    a = agent.response(rid)
    check(a.get("status") == "interrupted" and a["error"]["message"] ==
          'interrupted by person "%s" (an attached UI)' % name,
          "without 'by', the name its hello gave it", a)

    peer.send({"id": "p3", "code": "x = 41"})
    r = peer.until(lambda m: m.get("id") == "p3" and "event" not in m)
    check(r.get("status") == "ok", "the attached client runs a cell", r)
    check(agent.run("x + 1").get("result") == "42", "the agent sees it")
    peer.close()
    peer = None
    check(agent.close() == 0, "the session ends well")
    with open(record) as f:
        lines = [json.loads(x) for x in f]
    mine = [x for x in lines if x.get("id") == "p3"]
    check(len(mine) == 3 and all(x.get("origin") == "person" and
                                 x.get("by") == name for x in mine),
          "the transcript names the person beside the origin, on the "
          "cell's queued, started and response lines", mine)
    theirs = [x for x in lines if x.get("origin") == "agent"]
    check(theirs and all("by" not in x for x in theirs),
          "and says nothing more of the agent's", theirs[:2])
    for g in gates:     # run again, the cells find their gates open
        open(g, "w").close()
    r = subprocess.run([COIL, "--replay", record, "--sandbox", "none"],
                       capture_output=True, timeout=120,
                       cwd=wd, stdin=subprocess.DEVNULL)
    check(r.returncode == 0, "the transcript replays", r)
finally:
    if peer is not None:
        peer.close()
    if agent is not None:
        agent.kill()
    cleanup(wd)
    for n in os.listdir(sockdir):
        os.unlink(os.path.join(sockdir, n))
    os.rmdir(sockdir)

# ---- over MCP --------------------------------------------------------
wd = workdir()
sockdir = tempfile.mkdtemp(prefix="coil-ib.", dir="/tmp")
path = os.path.join(sockdir, "s")
try:
    with Mcp("--listen", path, "--workdir", wd, "--no-record") as m:
        m.rpc("initialize", {"protocolVersion": "2025-11-25",
                             "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}})
        m.send_msg({"method": "notifications/initialized"})
        m.call("run", waiting_cell(os.path.join(wd, "gate")), progress="run")
        m.until(lambda x: x.get("method") == "notifications/progress")
        peer = Peer(path)
        peer.send({"id": 1, "op": "interrupt", "by": "alice"})
        r = m.until(lambda x: x.get("id") == "run")
        check(r["result"].get("isError") is True and
              'interrupted by person "alice" (an attached UI)' in
              text(r), "over MCP the tool's result names the person",
              r)
        peer.close()
        peer = None
finally:
    if peer is not None:
        peer.close()
    cleanup(wd)
    for n in os.listdir(sockdir):
        os.unlink(os.path.join(sockdir, n))
    os.rmdir(sockdir)
done()
