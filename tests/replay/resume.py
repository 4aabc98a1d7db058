#!/usr/bin/python3
"""resume.py - coil --resume FILE rebuilds a session from its transcript
and serves it live (TAP).

A recorded agent session holds state (a number, a function), a cell
that raised, a cell that wrote a file and a cell whose answer is new
each run (a random number); its supervisor is killed with SIGKILL after
the last answer.  --resume with --agent brings the state back: the
first answer carries "resumed" (six cells, four the same, the random
one differing with its first differing line, the one that wrote a file
not run again with why), ping carries it too (once, when it is the
first answer), live cells go on with the transcript's numbers, and
they are appended to FILE after a header marked "resumed".  FILE then
still replays: --replay --check runs every cell (the resumed ones too)
and matches (the random number ignored).  Resuming the resumed file
again works through MCP (initialize's instructions and the first tool
result say it), over MCP's Streamable HTTP (--http), and then in the
plain REPL (said on stderr before the first prompt).

A branch's transcript goes on the same way; a cell stopped by its
timeout is not run again.  --resume-all runs the cell that wrote a file
again too (its file is there again), listed in "rerun_anyway".

Bad input: a missing file, a notebook, a newer transcript format and
--resume with --replay are refused (exit 2, nothing written); a line
that is not JSON in the middle ends coil (exit 1, nothing written); a
last line cut short (a crash mid-write) is left out, said in a note,
and cut off the file so that the resume's lines do not run into it; a
transcript another coil wrote, or in another venv, is resumed with a
note saying so, and a request it holds no answer to is reported as not
run again.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "mcp"))
from coiltest import (COIL, Coil, check, cleanup, dead, done,  # noqa
                      skip, wait_for, workdir)
from mcplib import Mcp, text  # noqa: E402
import mcphttp  # noqa: E402

WORK = workdir("resume-")
atexit.register(cleanup, WORK)
FILE = os.path.join(WORK, "run.jsonl")
NOISE = ["--ignore", "0\\.[0-9]{8,}"]      # the random number


def lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")


# ---- a session with state, killed -----------------------------------
c = Coil("--record", FILE, "--workdir", WORK)
c.run("x = 41")
r = c.run("x += 1\nx")
check(r.get("result") == "42", "the recording: x is 42", r)
r = c.run("open('out.txt', 'w').write('hi')")
check(any(e.get("kind") in ("create", "write")
          for e in r.get("effects", [])), "the recording: cell 3 wrote "
      "a file, its effects say so", r)
c.run("import random\nrandom.random()")
c.run("def f(n):\n    return n * 2")
r = c.run("1 / 0")
check(r.get("status") == "error", "the recording: cell 6 raised", r)
pid = c.pid
c.proc.kill()                       # SIGKILL the supervisor
c.proc.wait()
check(wait_for(lambda: dead(pid)), "the supervisor is gone")
os.remove(os.path.join(WORK, "out.txt"))
before = lines(FILE)
check(before[-1] == b"", "the killed session's transcript ends whole")
before = before[:-1]

# ---- --resume with --agent ------------------------------------------
with Coil("--resume", FILE, "--workdir", WORK) as c:
    r = c.run("f(x)")
    check(r.get("status") == "ok" and r.get("result") == "84",
          "resumed: the state is back (f(x) is 84)", r)
    check(r.get("cell") == 7, "the live cell goes on from the "
          "transcript's numbers (7)", r)
    res = r.get("resumed") or {}
    check(res.get("cells") == 6 and res.get("same") == 4,
          "the first answer's resumed: 6 cells, 4 the same", res)
    d = res.get("differs") or [{}]
    check(len(d) == 1 and d[0].get("cell") == 4 and
          d[0].get("first", {}).get("field") == "result",
          "resumed.differs: cell 4, its first differing line the result",
          res)
    n = res.get("not_rerun") or [{}]
    check(len(n) == 1 and n[0].get("cell") == 3 and
          "out.txt" in n[0].get("why", ""),
          "resumed.not_rerun: cell 3, which wrote out.txt", res)
    check(res.get("faithful") is False and res.get("errors") == [],
          "resumed says the state is not wholly the recording's", res)
    check(not os.path.exists(os.path.join(WORK, "out.txt")),
          "the cell that wrote a file was not run again")
    r = c.call({"op": "ping"})
    check((r.get("resumed") or {}).get("cells") == 6, "ping carries "
          "resumed too", r)
    r = c.run("x")
    check("resumed" not in r, "only the first answer carries it", r)
    check(c.close() == 0, "the resumed session exits 0", c.stderr_text())
    check("resumed from" in c.stderr_text() and "not run again" in
          c.stderr_text(), "stderr says how faithful the rebuild is",
          c.stderr_text())

after = lines(FILE)
check(after[:len(before)] == before, "the recording is kept as it was")
new = [json.loads(b) for b in after[len(before):] if b]
check(new and "resumed" in new[0] and "coil_transcript" in new[0],
      "a header marked resumed follows it", new[:1])
check(any(o.get("event") == "response" and
          o["response"].get("result") == "84" for o in new),
      "the live cells are appended after it", len(new))
check(not any(o.get("origin") == "replay" for o in new),
      "the cells run again are not recorded twice")

p = subprocess.run([COIL, "--replay", FILE, "--check", "--workdir", WORK,
                    *NOISE], capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "8 cells replayed" in p.stdout,
      "--replay --check reads the resumed file whole and matches",
      p.stdout[-2000:] + p.stderr[-2000:])

# ---- again, through MCP ---------------------------------------------
with Mcp("--resume", FILE, "--workdir", WORK, *NOISE) as m:
    r = m.rpc("initialize", {"protocolVersion": "2025-11-25",
                             "capabilities": {}, "clientInfo": {
                                 "name": "t", "version": "1"}})
    ins = r.get("result", {}).get("instructions", "")
    check("This session was resumed" in ins and "8 cells" in ins,
          "MCP: initialize's instructions say the resume", ins[-600:])
    m.note("notifications/initialized")
    r = m.tool("run_python", {"code": "f(x) + 1"})
    t = text(r)
    sc = r.get("result", {}).get("structuredContent", {})
    check(t.startswith("resumed from") and "Out[9]: 85" in t,
          "MCP: the first tool result says it, then the answer", t)
    check((sc.get("resumed") or {}).get("cells") == 8 and
          sc["resumed"].get("same") == 7,
          "MCP: structuredContent has resumed (7 of 8 the same)", sc)
    r = m.tool("run_python", {"code": "x"})
    check("resumed" not in text(r), "MCP: only the first result", r)
    check(m.close() == 0, "MCP: exits 0", m.stderr_text())

# ---- a ping first: its answer has resumed once -----------------------
p = subprocess.run([COIL, "--agent", "--resume", FILE, "--no-record",
                    "--workdir", WORK, *NOISE], input='{"id": 1, "op": '
                   '"ping"}\n', capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and p.stdout.count('"resumed"') == 1 and
      "cells" in json.loads(p.stdout)["resumed"],
      "a ping first: its answer carries resumed, once", p.stdout[-500:])

# ---- over Streamable HTTP (--no-record: FILE is only read) ----------
HTTP = os.path.join(WORK, "http.jsonl")
shutil.copy(FILE, HTTP)
h = mcphttp.HttpCoil("--resume", HTTP, "--workdir", WORK, *NOISE)
if h.port is None:
    h.close()
    if "without libmicrohttpd" in h.stderr_text():
        skip("HTTP: the resume served over HTTP", "coil was built "
             "without libmicrohttpd")
    else:
        check(False, "HTTP: coil --http starts", h.stderr_text())
else:
    st, init = h.initialize()
    check(st == 200 and "This session was resumed" in
          init.get("result", {}).get("instructions", ""),
          "HTTP: initialize's instructions say the resume", init)
    st, r, sse = h.rpc("tools/call", {"name": "run_python",
                                      "arguments": {"code": "f(x) + 3"}})
    _, ans, _ = sse.until_answer()
    check("resumed from" in text(ans) and "87" in text(ans) and
          ans["result"]["structuredContent"]["resumed"]["cells"] == 10,
          "HTTP: the state is back, the first result says the resume",
          ans)
    check(h.close() in (0, 143), "HTTP: ends on SIGTERM",
          h.stderr_text())
    check(lines(HTTP) == lines(FILE), "HTTP: --no-record adds nothing")

# ---- and the plain REPL ---------------------------------------------
p = subprocess.run([COIL, "--plain", "--resume", FILE, "--workdir", WORK,
                    *NOISE], input="print(f(x) + 2)\n", capture_output=True,
                   text=True, timeout=120)
check(p.returncode == 0 and "86" in p.stdout, "plain: the state is back",
      p.stdout + p.stderr)
check("resumed from" in p.stderr and "10 cells" in p.stderr,
      "plain: the resume is said before the first prompt", p.stderr)

# ---- --resume-all: the files made again (a moved machine) ------------
if os.path.exists(os.path.join(WORK, "out.txt")):
    os.remove(os.path.join(WORK, "out.txt"))     # --replay made it again
with Coil("--resume", FILE, "--resume-all", "--no-record", "--workdir",
          WORK, *NOISE) as c:
    r = c.run("open('out.txt').read()")
    res = r.get("resumed") or {}
    check(r.get("result") == "'hi'" and res.get("not_rerun") == [] and
          [a.get("cell") for a in res.get("rerun_anyway", [])] == [3],
          "--resume-all: cell 3 ran again and wrote its file, listed in "
          "rerun_anyway", r)
    check(c.close() == 0, "--resume-all: exits 0", c.stderr_text())

# ---- a branch made again goes on in its own transcript --------------
BR = os.path.join(WORK, "br.jsonl")
with Coil("--record", BR, "--workdir", WORK) as c:
    c.run("a = 1")
    r = c.call({"op": "fork", "name": "tri"})
    check(r.get("status") == "ok", "branches: the recording forks", r)
    c.run("a = 5", session="tri")
    r = c.call({"code": "import time\nwhile True: time.sleep(0.01)",
                "timeout": 0.3})
    check(r.get("status") == "timeout", "the recording: a cell past its "
          "timeout", r)
    check(c.close() == 0, "branches: the recording exits 0")
BRT = os.path.join(WORK, "br.tri.jsonl")
was = lines(BRT)
with Coil("--resume", BR, "--workdir", WORK) as c:
    r = c.run("a * 10", session="tri")
    check(r.get("result") == "50" and r.get("cell") == 3,
          "branches: the branch is back, its numbers too", r)
    n = (r.get("resumed") or {}).get("not_rerun") or [{}]
    check(n[0].get("cell") == 2 and "timeout" in n[0].get("why", ""),
          "a cell stopped by its timeout is not run again", r)
    check(c.close() == 0, "branches: the resumed session exits 0")
new = [json.loads(b) for b in lines(BRT)[len(was) - 1:] if b]
check(new and "resumed" in new[0] and not any(
      o.get("origin") == "replay" for o in new) and any(
      (o.get("response") or {}).get("result") == "50" for o in new),
      "branches: the branch's transcript goes on after its own mark, "
      "its cells not recorded twice", new)

# ---- bad input ------------------------------------------------------
NB = os.path.join(WORK, "nb.ipynb")
with open(NB, "w") as f:
    json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
               "cells": [{"cell_type": "code", "source": "1",
                          "metadata": {}, "outputs": [],
                          "execution_count": 1}]}, f)
NEWER = os.path.join(WORK, "newer.jsonl")
with open(NEWER, "w") as f:
    f.write('{"coil_transcript": 99, "coil": "9.0"}\n')
for args, want, what in (
        ([os.path.join(WORK, "none.jsonl")], "cannot read",
         "a missing file"),
        ([NB], "not a coil transcript", "a notebook"),
        ([NEWER], "newer than this coil reads", "a newer format"),
        ([FILE, "--replay", FILE], "neither --replay", "with --replay")):
    p = subprocess.run([COIL, "--agent", "--resume", *args, "--workdir",
                        WORK], input="", capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 2 and want in p.stderr,
          "bad input: %s is refused, exit 2" % what, p.stderr)
check(lines(NEWER) == [b'{"coil_transcript": 99, "coil": "9.0"}', b""],
      "nothing is written to a file refused")
MID = os.path.join(WORK, "mid.jsonl")
with open(FILE, "rb") as f:
    rows = f.read().split(b"\n")
with open(MID, "wb") as f:
    f.write(b"\n".join(rows[:5] + [b"not json"] + rows[5:]))
p = subprocess.run([COIL, "--agent", "--resume", MID, "--workdir", WORK],
                   input="", capture_output=True, text=True, timeout=120)
check(p.returncode == 1 and "line 6 is not a JSON object" in p.stderr and
      "nothing was added" in p.stderr, "a line that is not JSON in the "
      "middle: exit 1, the line named", p.stderr)
check(lines(MID) == rows[:5] + [b"not json"] + rows[5:],
      "nothing is added to it")

OTHER = os.path.join(WORK, "other.jsonl")
with open(FILE) as f, open(OTHER, "w") as g:
    head = json.loads(f.readline())
    head.update(coil="0.0.9", venv="/nonexistent/venv")
    g.write(json.dumps(head) + "\n" + f.read())
    # a request queued, never answered: coil was killed under it
    g.write(json.dumps({"t": "2026-12-05T00:00:00.000Z", "event": "queued",
                        "id": 99, "seq": 99, "origin": "agent",
                        "request": {"id": 99, "op": "exec",
                                    "code": "z = 1"}}) + "\n")
with Coil("--resume", OTHER, "--no-record", "--workdir", WORK) as c:
    res = c.run("x").get("resumed") or {}
    notes = " ".join(res.get("notes", []))
    check("written by coil 0.0.9" in notes and "/nonexistent/venv" in
          notes, "another coil's, another venv's transcript: notes say "
          "so", notes)
    last = (res.get("not_rerun") or [{}])[-1]
    check(last.get("op") == "exec" and "no answer" in last.get("why", ""),
          "a request never answered is reported, not run", res)
    check(c.close() == 0, "another coil's transcript: exits 0",
          c.stderr_text())

CUT = os.path.join(WORK, "cut.jsonl")
shutil.copy(FILE, CUT)
with open(CUT, "ab") as f:
    f.write(b'{"t":"2026-12-05T00:00:00.000Z","event":"queu')
with Coil("--resume", CUT, "--workdir", WORK, *NOISE) as c:
    r = c.run("x")
    notes = (r.get("resumed") or {}).get("notes") or []
    check(r.get("result") == "42" and any("cut short" in n for n in notes),
          "a cut last line: the whole lines are used, a note says so", r)
    check(c.close() == 0, "a cut last line: exits 0", c.stderr_text())
bad = []
for b in lines(CUT):
    try:
        if b:
            json.loads(b)
    except ValueError:
        bad.append(b)
check(bad == [], "the cut line is cut off: every line is JSON", bad)
p = subprocess.run([COIL, "--replay", CUT, "--workdir", WORK],
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "--replay reads it after", p.stderr[-2000:])
done()
