#!/usr/bin/python3
"""replay.py - coil --replay FILE [--check] (TAP).

A recorded session replayed and checked: equal despite addresses and
times; a changed result is a diff and exit 1; --ignore; the recorded
options (a hanging cell replayed under the recorded timeout).  Every
bad input: a cut last line, a line that is not JSON, a newer format, a
recording that used an option this coil lacks, a huge transcript in
bounded memory.  The other kinds: notebooks (their outputs are the
expectation), "# %%" files, OpenAI and Anthropic chat logs.
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import ASAN, COIL, Coil, check, done, skip  # noqa: E402

WORK = tempfile.mkdtemp(prefix="rep-", dir=os.environ.get("TEST_WORKDIR"))


def replay(path, *args, timeout=120):
    p = subprocess.run([COIL, "--replay", path, *args], cwd=WORK,
                       capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def record(name, cells, *args):
    path = os.path.join(WORK, name)
    with Coil("--record", path, *args, cwd=WORK) as c:
        for code in cells:
            c.run(code)
    return path


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- a session, replayed and checked
CELLS = ["x = 41\nx + 1", "print('out'); import sys; "
         "print('err', file=sys.stderr)", "object()",
         "import time; t0 = time.time(); f'{time.time() - t0:.6f}s'",
         "{}['missing']", "import json; json.loads('{')"]
rec = record("s.jsonl", CELLS)
rc, out, err = replay(rec, "--check")
check(rc == 0 and "6 cells replayed" in out and "0 differ" in out,
      "a session replayed matches its recording (exit 0)", out + err)
check("In [1]: x = 41" in out and "Out[1]: 42" in out and
      "KeyError: 'missing'" in out, "each cell is printed with its new "
      "outcome", out)

# a changed answer
lines = read(rec).splitlines(True)
for i, l in enumerate(lines):
    if '"result":"42"' in l:
        lines[i] = l.replace('"result":"42"', '"result":"43"')
changed = write("changed.jsonl", "".join(lines))
rc, out, err = replay(changed, "--check")
check(rc == 1 and "cell 1 differs" in out and "-  43" in out and
      "+  42" in out and "@@ " in out, "a changed result: a unified diff "
      "and exit 1", out + err)
rc, out, err = replay(changed, "--check", "--ignore", "4[23]")
check(rc == 0, "--ignore makes the difference noise", out + err)
rc, out, err = replay(changed)
check(rc == 0 and "differs" not in out, "without --check nothing is "
      "compared", out)

# recorded options: a cell that hangs, replayed under the recorded timeout
hang = record("hang.jsonl", ["while True: pass", "'after'"],
              "--timeout", "1")
t0 = time.time()
rc, out, err = replay(hang, "--check")
took = time.time() - t0
check(rc == 0 and "[timeout]" in out and "Out[2]: 'after'" in out and
      took < 30, "a cell that hangs times out under the recorded timeout, "
      "and the replay goes on (%.1f s)" % took, out + err)
rc, out, err = replay(hang, "--check", "--timeout", "3")
check("ran past its 3 s timeout" in out and rc == 0,
      "the command line's --timeout wins over the recording's (and a "
      "duration is noise)", out + err)

# ---- bad input
text = read(rec)
cut = write("cut.jsonl", text[:text.rstrip("\n").rfind("\n") + 40])
n = text.count("\n")
rc, out, err = replay(cut, "--check")
check(rc == 0 and ("line %d" % n) in err and "cut short" in err and
      "In [5]:" in out, "a cut last line: replayed up to it, the line "
      "named", err + out[-300:])
bad = text.splitlines(True)
bad.insert(3, "this is not JSON\n")
rc, out, err = replay(write("bad.jsonl", "".join(bad)), "--check")
check(rc == 2 and "line 4 is not a JSON object" in err,
      "a line that is not JSON: named, exit 2", err)
head = json.loads(text.splitlines()[0])
newer = dict(head, coil_transcript=99)
rc, out, err = replay(write("newer.jsonl", json.dumps(newer) + "\n" +
                            "".join(text.splitlines(True)[1:])))
check(rc == 2 and "format 99, newer than this coil reads (1)" in err and
      out == "", "a newer format is refused before anything runs", err)
rc, out, err = replay(rec, "--check")
check(rc == 0 and "timeout" not in head["options"] and "warning" not in err,
      "a default --timeout is not recorded, and the replay warns of nothing",
      (head["options"], err))
old = dict(head, options=dict(head["options"], timeout="-1"))
rc, out, err = replay(write("old.jsonl", json.dumps(old) + "\n" +
                            "".join(text.splitlines(True)[1:])), "--check")
check(rc == 0 and "warning" not in err and "0 differ" in out,
      "coil 0.1.0's \"timeout\": \"-1\" (unset) replays without a warning",
      err)
alien = dict(head, options=dict(head["options"], **{"gpu-count": "2"}))
rc, out, err = replay(write("alien.jsonl", json.dumps(alien) + "\n" +
                            "".join(text.splitlines(True)[1:])), "--check")
check(rc == 0 and "--gpu-count, which this coil lacks" in err,
      "an option this coil lacks: said, replayed without it", err)
rc, out, err = replay(os.path.join(WORK, "absent.jsonl"))
check(rc == 2 and "cannot read" in err, "a file that is not there: exit 2",
      err)
rc, out, err = replay(write("prose.txt", "just some words\n"))
check(rc == 2 and "not a transcript" in err, "a file of no known kind: "
      "exit 2", err)

# a huge transcript: streamed, memory bounded
MB = int(os.environ.get("COIL_TEST_BIG_MB", "256"))
big = os.path.join(WORK, "big.jsonl")
pad = "x" * (1 << 20)
with open(big, "w") as f:
    f.write(text.splitlines(True)[0])
    for i in range(MB):
        f.write(json.dumps({"t": "2026-01-01T00:00:00.000Z",
                            "event": "background", "stream": "stdout",
                            "data": pad}) + "\n")
    f.write("".join(text.splitlines(True)[1:]))
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
p = subprocess.Popen([COIL, "--replay", big, "--check", "--sandbox", "none",
                      "--checkpoints", "0"], cwd=WORK,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True)
out, err = p.communicate(timeout=600)
# coil's own peak (the supervisor): from /proc is gone; wait4's maxrss
# of the largest child waited for, coil itself here (its worker is not
# our child).
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
check(p.returncode == 0 and "6 cells replayed" in out,
      "a %d MB transcript replays" % MB, (out[-300:], err))
if ASAN:
    skip("its peak memory, %d MB" % (peak // 1024),
         "a sanitizer build's memory figures mean nothing")
else:
    check(peak < 64 * 1024, "in bounded memory (peak %d MB)"
          % (peak // 1024), before)
os.unlink(big)

# ---- notebooks
def nb(cells):
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                       "cells": cells})


def code(src, outputs, n=1):
    return {"cell_type": "code", "source": src, "metadata": {},
            "execution_count": n, "outputs": outputs}


NB = [{"cell_type": "markdown", "source": "# a title", "metadata": {}},
      code("print('hello')\n6 * 7", [
          {"output_type": "stream", "name": "stdout", "text": ["hello\n"]},
          {"output_type": "execute_result", "execution_count": 1,
           "metadata": {}, "data": {"text/plain": "42"}}]),
      code("import sys\nprint('warn', file=sys.stderr)", [
          {"output_type": "stream", "name": "stderr", "text": "warn\n"}], 2),
      code("1/0", [{"output_type": "error", "ename": "ZeroDivisionError",
                    "evalue": "division by zero", "traceback": []}], 3)]
rc, out, err = replay(write("n.ipynb", nb(NB)), "--check")
check(rc == 0 and "3 cells replayed" in out and "(notebook)" in out,
      "a notebook replays and matches its stored outputs", out + err)
NB[1]["outputs"][1]["data"]["text/plain"] = "41"
rc, out, err = replay(write("n2.ipynb", nb(NB)), "--check")
check(rc == 1 and "cell 1 differs" in out and "-  41" in out,
      "a notebook whose stored result differs: exit 1", out + err)
rc, out, err = replay(write("t.ipynb", nb([NB[0]])))
check(rc == 2 and "has no code cells" in err, "a notebook with no code "
      "cells: exit 2", err)
rc, out, err = replay(write("j.ipynb", '{"nbformat": 4, "cells": [\n'))
check(rc == 2 and "is not JSON" in err, "an .ipynb that is not JSON: "
      "exit 2", err)
# by content, not the name
rc, out, err = replay(write("notebook.data", nb([NB[2]])), "--check")
check(rc == 0 and "(notebook)" in out, "a notebook is known by its "
      "content, whatever its name", out + err)

# ---- "# %%" files
rc, out, err = replay(write("p.py", "import math\n# %%\nr = 2\n"
                            "# %% [markdown]\n# words\n# %%\n"
                            "round(math.pi * r ** 2, 2)\n"))
check(rc == 0 and "In [3]: round" in out and "Out[3]: 12.57" in out,
      "a '# %%' file runs cell by cell, markdown skipped", out + err)

# ---- chat logs
OPENAI = [{"role": "user", "content": "compute"},
          {"role": "assistant", "content": None, "tool_calls": [
              {"id": "c1", "type": "function", "function": {
                  "name": "python", "arguments": json.dumps(
                      {"code": "print(6 * 7)"})}}]},
          {"role": "tool", "tool_call_id": "c1", "content": "42\n"},
          {"role": "assistant", "content": None, "tool_calls": [
              {"id": "c2", "type": "function", "function": {
                  "name": "search", "arguments": '{"q": "x"}'}}]},
          {"role": "tool", "tool_call_id": "c2", "content": "nothing"}]
rc, out, err = replay(write("o.json", json.dumps(OPENAI)), "--check")
check(rc == 0 and "1 cell replayed" in out and "(OpenAI chat log)" in out,
      "an OpenAI chat log: the Python calls replayed, their results "
      "checked", out + err)
OPENAI[2]["content"] = "41\n"
rc, out, err = replay(write("o2.json", json.dumps(OPENAI)), "--check")
check(rc == 1 and "-  41" in out, "a tool result that differs: exit 1",
      out + err)
KEYED = [{"role": "assistant", "tool_calls": [{"id": "k", "function": {
    "name": "run", "arguments": json.dumps({"source": "'keyed'"})}}]}]
rc, out, err = replay(write("k.json", json.dumps(KEYED)), "--code-key",
                      "source")
check(rc == 0 and "Out[1]: 'keyed'" in out, "--code-key names the "
      "argument that holds the code", out + err)
ANTHROPIC = {"messages": [
    {"role": "assistant", "content": [
        {"type": "text", "text": "let me run"},
        {"type": "tool_use", "id": "t1", "name": "bash",
         "input": {"code": "echo no"}},
        {"type": "tool_use", "id": "t2", "name": "python",
         "input": {"code": "sum(range(10))"}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "no"},
        {"type": "tool_result", "tool_use_id": "t2",
         "content": [{"type": "text", "text": "45"}]}]}]}
rc, out, err = replay(write("a.json", json.dumps(ANTHROPIC)), "--check",
                      "--tool", "python")
check(rc == 0 and "Out[1]: 45" in out and "(Anthropic chat log)" in out and
      "echo" not in out, "an Anthropic log: --tool picks the tool",
      out + err)
rc, out, err = replay(write("none.json", json.dumps(
    [{"role": "user", "content": "hello"},
     {"role": "assistant", "content": "hi"}])))
check(rc == 2 and "no Python tool calls" in err, "a chat log with no "
      "Python tool calls: said, exit 2", err)

# ---- replaying records a replay too
again = os.path.join(WORK, "again.jsonl")
rc, out, err = replay(rec, "--record", again)
rl = [json.loads(l) for l in read(again).splitlines()]
check(rc == 0 and rl[0].get("mode") == "replay" and
      {l.get("origin") for l in rl if l.get("event") == "response"} ==
      {"replay"}, "a replay --record'ed says it was one", rl[:2])
rc, out, err = replay(again, "--check")
check(rc == 0, "and that transcript replays the same", out + err)
done()
