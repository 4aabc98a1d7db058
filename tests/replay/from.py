#!/usr/bin/python3
"""from.py - coil --replay FILE --from N picks a run up at cell N (TAP).

A real recording (a transcript of three cells) is replayed to cell 2,
and the session goes on live: with --agent the client's cells land on
the branch forked there (its answers name it), while main keeps the
state after cell 2 and `sessions` lists both; with --then FILE2 (a
"# %%" file of new cells only) those run on the branch first; the plain
REPL on a pipe is handed the branch the same way.  --check with --then
compares the two continuations: FILE's cell 3 on main against its
recording, FILE2's cells on the branch against theirs (a notebook, one
of whose recorded outputs is wrong: exit 1, that cell's diff), and
where the two continuations differ from each other.

Bad input, each a clear error and no session handed over: --from 0,
--then without --from, --check --from without --then, --from past the
file's cells, a file whose cell 2 raises where nothing was recorded
(the state at the fork point would not be the recording's), and a
--then file that is a whole recording from the start.
"""
import atexit
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, cleanup, done, workdir)  # noqa

WORK = workdir("rep-from-")
atexit.register(cleanup, WORK)
FILE = os.path.join(WORK, "run.jsonl")
NEW = os.path.join(WORK, "new.py")
BAD = os.path.join(WORK, "bad.py")
NB = os.path.join(WORK, "new.ipynb")

with Coil("--record", FILE, "--workdir", WORK) as c:
    c.run("x = 1")
    c.run("x += 1")
    r = c.run("y = x * 10\ny")
    check(r.get("result") == "20", "the recording's cell 3 gives 20", r)
    check(c.close() == 0, "the recording session exits 0", c.stderr_text())

with open(NEW, "w") as f:
    f.write("# %%\ny = x * 100\ny\n# %%\nx\n")
with open(BAD, "w") as f:
    f.write("# %%\nx = 1\n# %%\nundefined_name\n# %%\nx\n")


def code_cell(n, source, result):
    return {"cell_type": "code", "execution_count": n, "metadata": {},
            "source": source, "outputs": [{
                "output_type": "execute_result", "execution_count": n,
                "metadata": {}, "data": {"text/plain": result}}]}


with open(NB, "w") as f:
    json.dump({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
               "cells": [code_cell(1, "y = x * 100\ny", "200"),
                         code_cell(2, "x", "3")]}, f)


def coil(*args, stdin=""):
    p = subprocess.run([COIL, "--workdir", WORK, "--no-record", *args],
                       cwd=WORK, input=stdin, capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


# ---- --agent: the branch is the client's, main keeps cell 2
with Coil("--no-record", "--workdir", WORK, "--replay", FILE,
          "--from", "2") as c:
    r = c.run("x")
    check(r.get("status") == "ok" and r.get("result") == "2",
          "agent: the session stands after cell 2", r)
    branch = r.get("session")
    check(branch not in (None, "main"),
          "agent: the client's cells go to the branch, which its answer "
          "names", r)
    r = c.run("x = 99")
    r = c.call({"op": "sessions"})
    names = {s.get("name"): s for s in r.get("sessions", [])}
    check(r.get("status") == "ok" and set(names) == {"main", branch},
          "agent: sessions lists main and the branch", r)
    check(names.get(branch, {}).get("default") is True and
          names.get("main", {}).get("default") is False,
          "agent: the branch is the client's default", r)
    check(names.get(branch, {}).get("parent") == "main",
          "agent: the branch's parent is main", r)
    r = c.run("x", session="main")
    check(r.get("result") == "2", "agent: main keeps the state at cell 2",
          r)
    r = c.run("x")
    check(r.get("result") == "99", "agent: the branch went on alone", r)
    check(c.close() == 0, "agent: coil exits 0", c.stderr_text())
    check("forked" in c.stderr_text(), "agent: stderr says where it "
          "forked", c.stderr_text())

# ---- --then: FILE2's cells run on the branch first
with Coil("--no-record", "--workdir", WORK, "--replay", FILE,
          "--from", "2", "--then", NEW) as c:
    r = c.run("y")
    check(r.get("result") == "200", "then: FILE2's cells ran on the branch",
          r)
    r = c.run("y", session="main")
    check(r.get("status") == "error" and
          (r.get("error") or {}).get("type") == "NameError",
          "then: main stands after cell 2, before any y", r)
    check(c.close() == 0, "then: coil exits 0", c.stderr_text())

# ---- the plain REPL on a pipe
rc, out, err = coil("--plain", "--replay", FILE, "--from", "2",
                    stdin="print(x * 7)\n")
check(rc == 0 and "14" in out, "plain: the REPL goes on after cell 2",
      (rc, out, err))
check("{" not in out, "plain: nothing of the hand-over on stdout",
      out)

# ---- --mcp: the tools' calls go to the branch, stdout is JSON-RPC only
MCP_IN = "".join(json.dumps(m) + "\n" for m in (
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "from.py", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "run_python", "arguments": {"code": "x"}}}))
rc, out, err = coil("--mcp", "--replay", FILE, "--from", "2", stdin=MCP_IN)
msgs = [json.loads(line) for line in out.splitlines()]
sc = [m for m in msgs if m.get("id") == 2][0]["result"]["structuredContent"]
check(rc == 0 and all(m.get("jsonrpc") == "2.0" for m in msgs) and
      sc.get("result") == "2" and sc.get("session") not in (None, "main"),
      "mcp: run_python goes on from cell 2 on the branch", (rc, out, err))

# ---- --check: the two continuations
rc, out, err = coil("--replay", FILE, "--from", "2", "--then", NEW,
                    "--check")
check(rc == 0, "check: exit 0 when each cell is as recorded (FILE2 has "
      "nothing recorded)", (rc, out, err))
check("cell 3: main and" in out and "200" in out,
      "check: the continuations' cell 3 differ, said with both",
      out)
check("cell 4: only" in out, "check: the branch's extra cell is said",
      out)
rc, out, err = coil("--replay", FILE, "--from", "2", "--then", NB,
                    "--check")
check(rc == 1, "check: exit 1 when a branch cell differs from its "
      "recording", (rc, out, err))
check(re.search(r"cell 4 on \S+ differs:", out) is not None,
      "check: the branch's cell 4 differs from its recording, said", out)

# ---- bad input
for args, what, want in (
        (["--from", "0"], "--from 0", "--from 1 or more"),
        (["--then", NEW], "--then without --from", "give --from N"),
        (["--from", "1", "--check"], "--check --from without --then",
         "--then FILE2"),
        (["--from", "4"], "--from past the cells",
         "past the end of"),
        (["--from", "2", "--then", FILE], "--then a whole recording",
         "begins with the 2 cells")):
    rc, out, err = coil("--plain", "--replay", FILE, *args,
                        stdin="print('handed over')\n")
    check(rc != 0 and want in err and "handed over" not in out,
          "bad input: %s: a clear error, no session" % what,
          (rc, out, err))
rc, out, err = coil("--plain", "--replay", BAD, "--from", "2",
                    stdin="print('handed over')\n")
check(rc == 1 and "NameError" in err and "no branch was made" in err and
      "handed over" not in out,
      "bad input: a failing cell before the fork point is named, no "
      "session", (rc, out, err))
rc, out, err = coil("--agent", "--replay", BAD, "--from", "1",
                    stdin=json.dumps({"id": 1, "code": "x"}) + "\n")
check(rc == 0 and json.loads(out.splitlines()[-1]).get("result") == "1",
      "a failing cell after the fork point is the branch's business",
      (rc, out, err))

done()
