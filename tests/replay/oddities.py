#!/usr/bin/python3
"""oddities.py - transcripts and notebooks of awkward sessions (TAP).

A cell that prints a NUL byte is recorded, replayed and checked, and
kept in --export's notebook and %save's; rich display() forms (HTML)
are display_data; the plain REPL's probes of a multi-line cell (each
line it reads is asked whether the cell is whole, and answered
incomplete) are neither replayed nor cells of the notebook; a
terminal's cell without a deadline ("timeout": 0) replays; a second
session appended to a transcript replays in a fresh namespace; an
interrupted cell is interrupted in the replay too, and one that read
lines is given them again; snapshot, rollback and reset are compared
by whether they worked; a recorded
request the replay refuses is skipped, said, and fails the check;
a cell cut at --max-output keeps its tail in --export's notebook;
--export to a path that cannot be written is refused at the start, and
a notebook that cannot be written at the end fails the exit status.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, check_exit,  # noqa: E402
                      check_notebook, done)

WORK = tempfile.mkdtemp(prefix="odd-", dir=os.environ.get("TEST_WORKDIR"))


def replay(path, *args):
    p = subprocess.run([COIL, "--replay", path, "--check", "--no-record",
                        *args], cwd=WORK, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def notebook(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f).get("cells", [])
    except (OSError, ValueError) as e:
        return [{"error": str(e)}]


def streams(cell):
    return [(o.get("name"), o.get("text")) for o in cell.get("outputs", [])
            if o.get("output_type") == "stream"]


# a NUL byte, in pieces of one stream
T1, NB1 = os.path.join(WORK, "nul.jsonl"), os.path.join(WORK, "nul.ipynb")
nul = ("import time\nprint('a\\x00b', flush=True); time.sleep(0.2)\n"
       "print('c')")
html = ("class H:\n    def _repr_html_(self):\n        return '<b>x</b>'\n"
        "display(H())")
c = Coil("--record", T1, "--export", NB1, cwd=WORK)
r = c.run(nul)
check(r.get("output") == "a\x00b\nc\n", "a cell prints a NUL byte", r)
r = c.run(html)
check(any(d.get("type") == "text/html" for d in r.get("display", [])),
      "and one displays an object with an HTML form", r)
check_exit(c)
rc, out, err = replay(T1)
check(rc == 0 and "0 differ" in out and "0 skipped" in out,
      "the transcript replays and matches", out + err)
cells = notebook(NB1)
check(len(cells) == 2 and streams(cells[0]) == [("stdout", "a\x00b\nc\n")],
      "--export keeps the NUL and the stream whole", cells)
html_out = [o for o in (cells[1].get("outputs", []) if len(cells) > 1
                        else []) if o.get("output_type") == "display_data"]
check(html_out and html_out[0]["data"].get("text/html") == "<b>x</b>",
      "the HTML form is display_data", cells[1:])
check_notebook(NB1, "that notebook passes nbformat.validate")

# %save: the same cells, the NUL one too
NB2 = os.path.join(WORK, "saved.ipynb")
c = Coil("--no-record", cwd=WORK)
c.run(nul)
r = c.run("%save " + NB2)
check_exit(c)
cells = notebook(NB2)
check(cells and streams(cells[0]) == [("stdout", "a\x00b\nc\n")],
      "%save keeps a cell that printed a NUL", [cells, r])

# a cell cut at --max-output: --export keeps the head and the tail, as
# the answer and %save do
NB8, NB9 = os.path.join(WORK, "cut.ipynb"), os.path.join(WORK, "cut2.ipynb")
c = Coil("--no-record", "--export", NB8, cwd=WORK)
r = c.run("print('x' * 100000 + 'END')")
c.run("%save " + NB9)
check_exit(c)
a, b = notebook(NB8), notebook(NB9)
check(r.get("truncated") and a and streams(a[0]) == [("stdout", r["output"])]
      and r["output"].endswith("END\n"),
      "--export keeps a cut cell's head and tail, as its answer", a[:1])
check(b and streams(a[0]) == streams(b[0]), "and as %save", b[:1])

# the plain REPL's probes: a multi-line cell is one cell
T3, NB3 = os.path.join(WORK, "plain.jsonl"), os.path.join(WORK, "plain.ipynb")
p = subprocess.run([COIL, "--plain", "--record", T3, "--export", NB3],
                   input="for i in range(2):\n    print(i)\n\nprint('end')\n",
                   cwd=WORK, capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and "0\n1\n" in p.stdout, "a plain session with a "
      "multi-line cell", p.stdout + p.stderr)
cells = notebook(NB3)
check([c.get("source") for c in cells] ==
      [["for i in range(2):\n", "    print(i)\n"], ["print('end')"]],
      "its notebook has the two cells the person ran, not the probes",
      cells)
rc, out, err = replay(T3)
check(rc == 0 and "2 cells replayed" in out and "0 differ" in out,
      "its transcript replays the two cells and matches", out + err)

# "timeout": 0 (a terminal's cell has no deadline), and a request the
# replay refuses
with open(T1, encoding="utf-8") as f:
    lines = [json.loads(x) for x in f]
for x in lines:
    if x.get("event") == "queued":
        x["request"]["timeout"] = 0
T4 = os.path.join(WORK, "nodeadline.jsonl")
with open(T4, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(x) + "\n" for x in lines)
rc, out, err = replay(T4)
check(rc == 0 and "0 differ" in out, "a cell recorded with no deadline "
      "(timeout 0) replays", out + err)
for x in lines:
    if x.get("event") == "queued":
        x["request"]["timeout"] = -5
T5 = os.path.join(WORK, "refused.jsonl")
with open(T5, "w", encoding="utf-8") as f:
    f.writelines(json.dumps(x) + "\n" for x in lines)
rc, out, err = replay(T5)
check(rc == 1 and "skipped: 'timeout'" in out and "2 skipped" in out,
      "requests the replay refuses are skipped, said, and fail the check",
      [rc, out, err])

# --record appends: two sessions in one file, the second in a fresh
# namespace
T6 = os.path.join(WORK, "two.jsonl")
for code in ("x = 42", "x"):
    c = Coil("--record", T6, cwd=WORK)
    c.run(code)
    check_exit(c)
rc, out, err = replay(T6)
check(rc == 0 and "[reset: ok]" in out and "NameError" in out and
      "0 differ" in out, "a file of two sessions replays the second "
      "after a reset, and matches", out + err)

# an interrupted cell is interrupted again, as long after its start (the
# session had no deadline: without the interrupt it would run for ever)
T7 = os.path.join(WORK, "int.jsonl")
c = Coil("--record", T7, "--timeout", "0", cwd=WORK)
sent = c.send({"id": "spin", "code": "x = 0\nwhile True:\n    x += 1"})
time.sleep(1)
c.call({"id": "stop", "op": "interrupt"})
r = c.response("spin")
check(r.get("status") == "interrupted", "a cell is interrupted", r)
check_exit(c)
t0 = time.time()
rc, out, err = replay(T7)
check(rc == 0 and "[interrupted]" in out and "0 differ" in out,
      "its replay interrupts it too, and matches (%.1f s)" %
      (time.time() - t0), out + err)

# a cell that read lines (input()) is given them again in the replay
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "hub"))
from hublib import Attached, listen_path  # noqa: E402
from coiltest import wait_for  # noqa: E402

T10 = os.path.join(WORK, "input.jsonl")
sock = listen_path(tempfile.mkdtemp(prefix="s-", dir=WORK))
agent = Coil("--listen", sock, "--record", T10, cwd=WORK)
wait_for(lambda: os.path.exists(sock))
person = Attached(sock)
person.call({"id": "hello", "op": "ping"})
person.send({"id": "in", "code": "v = input('name? ')\nw = input('more? ')",
             "input": True})
person.wait_event(lambda e: e.get("event") == "input")
person.call({"id": "a1", "op": "input", "text": "bob"})
person.wait_event(lambda e: e.get("event") == "input" and
                  e.get("prompt") == "more? ")
person.call({"id": "a2", "op": "input"})          # the end of input
r = person.response("in")
v = agent.run("v")
person.close()
check(r.get("error", {}).get("type") == "EOFError" and
      v.get("result") == "'bob'", "a person's cell reads a line, then "
      "the end of input", [r, v])
check_exit(agent)
with open(T10, encoding="utf-8") as f:
    answered = [json.loads(x) for x in f if '"answered"' in x]
check([a.get("line") for a in answered] == ["bob", None],
      "the transcript keeps what input() was given", answered)
rc, out, err = replay(T10)
check(rc == 0 and "Out[2]: 'bob'" in out and "0 differ" in out,
      "its replay gives the cell the same lines, and matches", out + err)

# snapshot, rollback and reset are compared too: whether they worked
T11 = os.path.join(WORK, "ops.jsonl")
c = Coil("--record", T11, cwd=WORK)
c.run("a = 1")
c.call({"op": "snapshot", "name": "s"})
c.run("a = 2")
c.call({"op": "rollback", "to": "s"})
r = c.call({"op": "rollback", "to": "nope"})
check(r.get("status") == "invalid", "a rollback to no such snapshot is "
      "invalid", r)
check_exit(c)
rc, out, err = replay(T11)
check(rc == 0 and "0 differ" in out, "a session of snapshots and "
      "rollbacks replays and matches", out + err)
with open(T11, encoding="utf-8") as f:
    text = f.read().replace('"status":"invalid"', '"status":"ok"')
T12 = os.path.join(WORK, "ops2.jsonl")
with open(T12, "w", encoding="utf-8") as f:
    f.write(text)
rc, out, err = replay(T12)
check(rc == 1 and "-status: ok" in out and "+status: invalid" in out,
      "a rollback that fails where it once worked differs", out + err)

# --export where no notebook can be written
for bad, why in ((os.path.join(WORK, "no", "such", "dir.ipynb"),
                  "cannot be written"), (WORK, "is a directory")):
    p = subprocess.run([COIL, "--agent", "--no-record", "--export", bad],
                       input='{"code": "1"}\n', cwd=WORK,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and why in p.stderr and not p.stdout,
          "--export to %s: refused before any cell runs" % why,
          [p.returncode, p.stdout, p.stderr])
gone = tempfile.mkdtemp(prefix="gone-", dir=WORK)
c = Coil("--no-record", "--export", os.path.join(gone, "x.ipynb"), cwd=WORK)
c.run("1")
os.rmdir(gone)
status = c.close()
check(status == 1 and "cannot write the notebook" in c.stderr_text(),
      "a notebook that cannot be written when the session ends: said, "
      "and exit status 1", [status, c.stderr_text()])
done()
