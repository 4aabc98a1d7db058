#!/usr/bin/python3
"""chatlog.py - coil --replay CHATLOG --check of a chat whose tool
results coil itself worded (TAP).

A model that drives coil --mcp (or an example loop in agent mode) reads
a cell's answer as coil words it: the output, a "[stderr]" block, the
traceback, "Out[N]: " and the result.  The texts here are taken from a
real coil --mcp, put in an OpenAI and an Anthropic chat log, and
replayed with --check: the same cells pass, also when the log began
mid-session (its Out[N] and tracebacks' <cell N> are not the
replay's), and a loop's own notes
are no difference; a changed result, output or error still is.
"""
import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "mcp"))
from coiltest import COIL, check, cleanup, done, workdir  # noqa: E402
from mcplib import Mcp, text  # noqa: E402

# The first is run over MCP but left out of the logs: they start
# mid-session, so the recorded Out[N] is one more than the replay's.
CELLS = ["setup = 1",
         "x = 41\nx + 1",
         "import sys\nprint('out')\nprint('err', file=sys.stderr)",
         "{}['missing']",
         "object()",
         "print('no value')"]

WD = workdir("chatlog-")


def mcp_texts():
    """Each cell's tool result, as coil --mcp words it."""
    texts = []
    with Mcp("--workdir", WD, "--no-record") as m:
        m.rpc("initialize", {"protocolVersion": "2025-11-25",
                             "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}},
              "init")
        m.send_msg({"method": "notifications/initialized"})
        for code in CELLS:
            texts.append(text(m.tool("run_python", {"code": code})))
    return texts[1:]


def openai(texts, cells=CELLS[1:]):
    msgs = [{"role": "user", "content": "compute"}]
    for i, (code, t) in enumerate(zip(cells, texts)):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": "c%d" % i, "type": "function", "function": {
                "name": "run_python", "arguments": json.dumps(
                    {"code": code})}}]})
        msgs.append({"role": "tool", "tool_call_id": "c%d" % i,
                     "content": t})
    return msgs


def anthropic(texts, cells=CELLS[1:]):
    msgs = [{"role": "user", "content": "compute"}]
    for i, (code, t) in enumerate(zip(cells, texts)):
        msgs.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t%d" % i, "name": "run_python",
             "input": {"code": code}}]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t%d" % i,
             "content": [{"type": "text", "text": t}]}]})
    return {"messages": msgs}


def replay(name, log):
    path = os.path.join(WD, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(log, f)
    p = subprocess.run([COIL, "--replay", path, "--check", "--workdir", WD,
                        "--no-record"], capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout + p.stderr


try:
    TEXTS = mcp_texts()
    check("Out[2]: 42" in TEXTS[0] and "[stderr]\nerr" in TEXTS[1] and
          "Traceback" in TEXTS[2] and "KeyError" in TEXTS[2] and
          "Out[5]: <object object at 0x" in TEXTS[3],
          "coil --mcp words the answers: Out[N], [stderr], the traceback",
          TEXTS)
    for api, shape in (("OpenAI", openai), ("Anthropic", anthropic)):
        rc, out = replay(api + ".json", shape(TEXTS))
        check(rc == 0 and "(%s chat log)" % api in out and
              "5 cells replayed" in out and "0 differ" in out,
              "%s: coil's own results check equal, Out[N] of a log begun "
              "mid-session too" % api, out)

    # What an example loop adds after coil's text is the loop's: its
    # notes and its figures' lines (share/examples/coil-loop.py).
    noted = list(TEXTS)
    noted[0] += ("\n\n[coil] the interrupt stopped it: the namespace is "
                 "as the cell left it, what it did before the stop "
                 "stays.")
    noted[4] = noted[4].rstrip("\n") + "\n[figure /nowhere/f.png: attached]"
    rc, out = replay("noted.json", openai(noted))
    check(rc == 0 and "0 differ" in out,
          "a loop's notes and figure lines are no difference", out)

    # The check still bites: a result, an output, an error changed.
    for what, n, old, new, shown in (
            ("a changed result", 0, "Out[2]: 42", "Out[2]: 43",
             "-  Out[<n>]: 43"),
            ("a changed output", 1, "out\n", "OUT\n", "-  OUT"),
            ("a changed stderr", 1, "]\nerr", "]\nwarning", "-  warning"),
            ("a changed error", 2, "'missing'", "'other'",
             "-  KeyError: 'other'")):
        for api, shape in (("OpenAI", openai), ("Anthropic", anthropic)):
            texts = list(TEXTS)
            check(old in texts[n], "%s: the text to change is there" % what,
                  texts[n])
            texts[n] = texts[n].replace(old, new)
            rc, out = replay("bite.json", shape(texts))
            check(rc == 1 and "cell %d differs" % (n + 1) in out and
                  "1 differ" in out and shown in out,
                  "%s: %s is reported as a difference" % (api, what), out)
    # A cell that raises no more: the traceback recorded is missing now.
    cells = copy.copy(CELLS[1:])
    cells[2] = "{}.get('missing')"
    rc, out = replay("noerr.json", anthropic(TEXTS, cells))
    check(rc == 1 and "cell 3 differs" in out and "-  KeyError" in out,
          "an error that is gone is a difference", out)
    # A bare result (a harness of its own) still checks as before.
    rc, out = replay("bare.json", openai(
        ["42", "out\nerr", "", "<object object at 0x7f00aa>", "no value"]))
    check(rc == 1 and "cell 3 differs" in out and "cell 1 " not in out and
          "cell 2 " not in out and "cell 5 " not in out,
          "bare results: the same cells equal, a missing error differs",
          out)
finally:
    cleanup(WD)
done()
