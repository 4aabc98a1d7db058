#!/usr/bin/python3
"""record.py - transcripts as they are written (TAP).

--record FILE: the header (format, coil and Python versions, sandbox,
options), one line per request, stream event and response with its UTC
time, seq, cell and origin, each response on disk before its client
reads it; default transcripts of agent sessions under $XDG_STATE_HOME,
the newest 100 kept, none with --no-record; coil --transcripts; a plain
session recorded too; the usage errors.
"""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, check_exit, done  # noqa: E402

WORK = tempfile.mkdtemp(prefix="rec-", dir=os.environ.get("TEST_WORKDIR"))
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(l) for l in f]


def transcripts(state):
    d = os.path.join(state, "coil", "transcripts")
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


# --record FILE, an agent session
path = os.path.join(WORK, "s.jsonl")
c = Coil("--record", path, "--timeout", "7", cwd=WORK)
r = c.run("x = 41\nx + 1")
# The response is read: its line is on disk already.
seen = lines(path)
check(any(l.get("event") == "response" and l.get("seq") == 1 for l in seen),
      "a response's line is written and flushed before its client reads it",
      seen)
c.run("print('hi'); 1/0")
c.call({"op": "vars"})
c.call({"code": "import time; time.sleep(3)", "timeout": 0.5})
check_exit(c)
got = lines(path)
head = got[0]
check(head.get("coil_transcript") == 1 and head.get("coil") and
      re.match(r"^3\.\d+", head.get("python", "")) and
      head.get("sandbox") == "standard" and head.get("mode") == "agent",
      "the header: format 1, coil and Python versions, sandbox, mode", head)
check(head.get("options", {}).get("timeout") == "7" and
      head["options"].get("sandbox") == "standard",
      "the header holds the session's options", head.get("options"))
check(all(TIME.match(l.get("t", "")) for l in got[1:]),
      "every line after the header has its UTC time",
      [l for l in got[1:] if not TIME.match(l.get("t", ""))][:3])
resp = [l for l in got if l.get("event") == "response"]
check([l["response"]["status"] for l in resp] ==
      ["ok", "error", "ok", "timeout"],
      "one response line per request, in order",
      [l["response"].get("status") for l in resp])
check(all(l.get("origin") == "agent" and isinstance(l.get("seq"), int)
          for l in resp) and [l.get("cell") for l in resp] ==
      [1, 2, None, 3], "responses carry seq, origin and the cell",
      [(l.get("seq"), l.get("cell"), l.get("origin")) for l in resp])
out = [l for l in got if l.get("event") == "output"]
check(len(out) == 1 and out[0].get("data") == "hi\n" and
      out[0].get("stream") == "stdout" and out[0].get("cell") == 2,
      "the cell's stream output is a line of its own", out)
queued = [l for l in got if l.get("event") == "queued"]
check(len(queued) == 4 and queued[0]["request"].get("code") ==
      "x = 41\nx + 1", "every request is recorded as it was queued", queued)
check(not any(l.get("event") == "namespace" for l in got),
      "no namespace lines (a transcript does not need them)")

# --record appends: a second session adds its own header.
c = Coil("--record", path, cwd=WORK)
c.run("1")
check_exit(c)
check(sum(1 for l in lines(path) if "coil_transcript" in l) == 2,
      "--record appends a second session after the first")

# default transcripts, under XDG_STATE_HOME only
state = os.path.join(WORK, "state")
env = dict(os.environ, XDG_STATE_HOME=state)
c = Coil(env=env, cwd=WORK)
c.run("2 + 2")
check_exit(c)
names = transcripts(state)
check(len(names) == 1 and names[0].endswith(".jsonl"),
      "an agent session is recorded by default", names)
d = os.path.join(state, "coil", "transcripts")
check(stat.S_IMODE(os.stat(d).st_mode) == 0o700,
      "the transcripts' directory is the user's alone (0700)")
c = Coil("--no-record", env=env, cwd=WORK)
c.run("3")
check_exit(c)
check(len(transcripts(state)) == 1, "--no-record writes none")
for i in range(105):
    with open(os.path.join(d, "20000101T%06dZ-1.jsonl" % i), "w") as f:
        f.write('{"coil_transcript": 1, "started": "2000-01-01T00:00:00.000Z"}'
                "\n")
c = Coil(env=env, cwd=WORK)
c.run("4")
check_exit(c)
names = transcripts(state)
check(len(names) == 100 and "20000101T000006Z-1.jsonl" not in names and
      "20000101T000007Z-1.jsonl" in names and names[-1].startswith("20"),
      "the newest 100 are kept", (len(names), names[:3]))
ls = subprocess.run([COIL, "--transcripts"], env=env, capture_output=True,
                    text=True, timeout=60)
rows = ls.stdout.splitlines()
check(ls.returncode == 0 and rows[0].split()[:5] ==
      ["started", "cells", "errors", "crashes", "duration"] and
      len(rows) == 101, "coil --transcripts lists them with a heading",
      ls.stdout[:500] + ls.stderr)
last = rows[-1].split()
check(len(last) == 6 and last[1:4] == ["1", "0", "0"] and
      last[5].startswith(d), "a row: start, cells, errors, crashes, "
      "duration, path", rows[-1])
empty = dict(os.environ, XDG_STATE_HOME=os.path.join(WORK, "none"))
ls = subprocess.run([COIL, "--transcripts"], env=empty, capture_output=True,
                    text=True, timeout=60)
check(ls.returncode == 0 and "no transcripts" in ls.stdout,
      "--transcripts with none says so", ls.stdout + ls.stderr)

# plain mode records too, with the person as origin
ppath = os.path.join(WORK, "plain.jsonl")
p = subprocess.run([COIL, "--plain", "--record", ppath], cwd=WORK,
                   input="6 * 7\n", capture_output=True, text=True,
                   timeout=60)
pl = lines(ppath) if os.path.exists(ppath) else []
pr = [l for l in pl if l.get("event") == "response"]
check(p.returncode == 0 and pl and pl[0].get("mode") == "plain" and
      pr and pr[0]["response"].get("result") == "42" and
      pr[0].get("origin") == "person", "a plain session is recorded",
      (p.returncode, p.stderr, pl[:3]))

# usage errors
for args, what in ((["--check"], "--check without --replay"),
                   (["--record", "x", "--no-record"], "--record with "
                    "--no-record"),
                   (["--replay", "x", "--agent"], "--replay with --agent"),
                   (["--ignore", "(", "--replay", "x"], "a bad --ignore")):
    u = subprocess.run([COIL, *args], capture_output=True, text=True,
                       timeout=60, cwd=WORK)
    check(u.returncode == 2 and "coil:" in u.stderr,
          "%s is a usage error" % what, u.stderr)
bad = subprocess.run([COIL, "--agent", "--record", "/nonexistent/d/f"],
                     capture_output=True, text=True, timeout=60, cwd=WORK,
                     input="")
check(bad.returncode == 1 and "cannot write the transcript" in bad.stderr,
      "a --record file that cannot be written stops coil at start",
      bad.stderr)
done()
