#!/usr/bin/python3
"""The example loops' edges, in Python and Node, against both APIs
played back (looplib.py), with coil --agent unless said:

- --max-turns: a model that still calls tools after N turns is stopped
  there, exit 3, said;
- the API's own error (a 401 in each API's shape): its message, exit 1,
  no traceback; no key at all: said before any request;
- a cell that ignores its timeout's interrupt is killed: the result
  says the timeout, that the process was killed and what the namespace
  is back at (agent mode with OpenAI's API, MCP with Anthropic's).  A
  call before it makes SIGINT ignored, so that the deadline cannot come
  before the cell does;
- a cell's result reads the same in agent mode as over MCP (the loop
  words an agent answer as coil --mcp does): its output, a traceback,
  arguments refused;
- figures in agent mode, where the loop reads a display entry's file
  itself: a cell names its own PNG in the work directory (attached), a
  link there to a decoy PNG outside it, a FIFO, and the decoy by its
  path (none attached, none read, the loop does not hang on the FIFO).
  The decoy is the test's own file, in a directory it made.
"""
import base64
import json
import os
import sys
import tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from looplib import (APIS, PNG, node_missing, recorded, results,  # noqa: E402
                     run)
from coiltest import check, cleanup, done, skip  # noqa: E402

SECRET = b"COIL-DECOY-NOT-FOR-THE-MODEL"
decoy_dir = tempfile.mkdtemp(prefix="coil-loop-decoy-",
                             dir=os.environ.get("TEST_WORKDIR"))
decoy = os.path.join(decoy_dir, "secret.png")
with open(decoy, "wb") as f:
    f.write(PNG + SECRET)


def hostile(api):
    """The recorded call, naming this run's decoy."""
    body = json.dumps(recorded(api, "h1-figures")).replace("@DECOY@", decoy)
    return (200, json.loads(body))


def limits(lang):
    for api in APIS:
        what = "%s %s" % (lang, api)
        r = run(lang, api, ["1-print", "2-crash"], "--max-turns", "1")
        check(r.rc == 3 and "--max-turns" in r.err and len(r.requests) == 1
              and "Traceback" not in r.err, what + ": --max-turns 1: "
              "stopped after one turn, exit 3, said", (r.rc, r.err))

        r = run(lang, api, [(401, recorded(api, "401"))])
        msg = recorded(api, "401")["error"]["message"]
        check(r.rc == 1 and "401" in r.err and msg in r.err and
              "Traceback" not in r.err and len(r.requests) == 1,
              what + ": the API's error: its message, exit 1",
              (r.rc, r.err))

        r = run(lang, api, ["6-done"], key=False)
        name = "OPENAI_API_KEY" if api == "openai" else "ANTHROPIC_API_KEY"
        check(r.rc == 1 and "set " + name in r.err and not r.requests,
              what + ": no key: said, nothing sent", (r.rc, r.err))

        mode = "agent" if api == "openai" else "mcp"
        r = run(lang, api, ["k1-kill", "6-done"], mode=mode)
        got = list(results(api, r.requests[1]["body"]).values()) if len(
            r.requests) == 2 else []
        # the first call ignores SIGINT, the second runs on past its 1 s
        text, err, _ = got[1] if len(got) == 2 else (None, None, [])
        check(r.rc == 0 and text is not None and "[coil timeout]" in text
              and "(1 s)" in text and "[coil restored]" in text and
              "its process was killed" in text and err in (None, True),
              what + " " + mode + ": a cell that ignores the interrupt: "
              "killed, restored, said", (r.rc, text, r.err))

        r = run(lang, api, [hostile(api), "6-done"])
        got = results(api, r.requests[1]["body"]) if len(
            r.requests) == 2 else {}
        text, _, imgs = next(iter(got.values()), (None, None, []))
        check(r.rc == 0 and text is not None and "named" in text,
              what + ": a cell names figures of every kind", (r.rc, r.err))
        if text is None:
            continue
        check(imgs == [PNG + b"OWN-FIGURE"] and "own.png: attached" in text,
              what + ": its own PNG in the work directory is attached",
              (text, imgs))
        check("link.png: not attached" in text and
              "fifo.png: not attached" in text and
              "%s: not attached" % decoy in text,
              what + ": a link out of the work directory, a FIFO and a "
              "file outside it are not", text)
        sent = json.dumps([q["body"] for q in r.requests])
        check(base64.b64encode(PNG + SECRET).decode()[:20] not in sent and
              SECRET.decode() not in sent,
              what + ": nothing of the decoy reaches the API")


def same_words(lang):
    """The same calls in both modes: the same text for the model."""
    texts = {}
    for mode in ("agent", "mcp"):
        r = run(lang, "openai", ["1-print", "5-errors", "6-done"], mode=mode)
        texts[mode] = [list(results("openai", q["body"]).values())
                       for q in r.requests[1:]]
    a, m = texts["agent"], texts["mcp"]
    # 1-print's call, then 5-errors': 1/0, an unknown tool, no code
    pairs = [(a[0][0], m[0][0])] + list(zip(a[1][:3], m[1][:3])) if len(
        a) == len(m) == 2 else []
    check(len(pairs) == 4 and all(x[0] == y[0] for x, y in pairs),
          lang + ": an agent answer reads as coil --mcp words it", pairs)


limits("python")
same_words("python")
why = node_missing()
if why:
    skip("the Node example's limits", why)
else:
    limits("node")
    same_words("node")
cleanup(decoy_dir)
done()
