"""looplib - the example tool loops (share/examples/) against recorded
API responses, with the real coil and no network.

A FakeApi is an HTTP server on 127.0.0.1 that answers each POST with the
next response of a script (files in tests/examples/openai/ and
tests/examples/anthropic/, in the shapes the APIs return: OpenAI
chat.completion objects with tool_calls, Anthropic message objects with
tool_use blocks and a stop_reason) and keeps every request the example
sent, to be checked: the tools are what `coil --tool-schema API` prints,
the system text is `coil --system-prompt`'s, and each tool result
carries what the cell gave.  run() starts one example (Python or Node)
with OPENAI_BASE_URL or ANTHROPIC_BASE_URL pointing there.

main_checks() and replay_checks() are the scenarios a test file runs for
one language and one coil mode, for both APIs; the chat log the example
writes (--log) is replayed with `coil --replay`.
"""
import atexit
import base64
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, SYSPYTHON, TOP, check, cleanup, skip,
                      workdir)  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(TOP, "share", "examples")
LOOPS = {"python": [SYSPYTHON, os.path.join(EXAMPLES, "coil-loop.py")],
         "node": ["node", os.path.join(EXAMPLES, "coil-loop.mjs")]}
APIS = ("openai", "anthropic")
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
PNG = b"\x89PNG\r\n\x1a\n"
MAIN = ["1-print", "2-crash", "3-timeout", "4-figure", "5-errors", "6-done"]
REPLAY = ["r1-print", "r2-two", "r3-done"]
TASK = "compute x, plot the squares, and tell me"


def recorded(api, name):
    with open(os.path.join(HERE, api, name + ".json")) as f:
        return json.load(f)


def node_missing():
    """Why the Node example cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (the Node example needs Node 20)"
    out = subprocess.run(["node", "--version"], capture_output=True,
                         text=True).stdout.strip()
    if int(out.lstrip("v").split(".")[0] or 0) < 20:
        return "node %s is older than 20 (the Node example needs 20)" % out
    return None


def matplotlib_missing():
    r = subprocess.run([SYSPYTHON, "-c", "import matplotlib"],
                       capture_output=True)
    return "matplotlib is not installed" if r.returncode else None


class FakeApi:
    """The model's API, played back: each POST gets the next (status,
    body) of the script; a POST past its end gets a 500 that says so."""

    def __init__(self, api, script):
        self.script = [s if isinstance(s, tuple) else (200, recorded(api, s))
                       for s in script]
        self.requests = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n)
                try:
                    body = json.loads(body)
                except ValueError:
                    pass
                fake.requests.append({"path": self.path, "body": body,
                                      "headers": {k.lower(): v for k, v in
                                                  self.headers.items()}})
                status, answer = (fake.script.pop(0) if fake.script else
                                  (500, {"error": "the test's script of "
                                         "responses has ended"}))
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class Run:
    """One run of an example: rc, out, err, requests, log (the chat log
    it wrote, or None), wd (its work directory)."""


def run(lang, api, script, *args, mode="agent", key=True, pick=True):
    """Run the example in lang against a FakeApi playing script; args
    are the example's own (before "--"); the task is TASK.  With
    pick=False the example picks the API by the key that is set."""
    fake = FakeApi(api, script)
    r = Run()
    r.wd = workdir("coil-loop-")
    state = tempfile.mkdtemp(prefix="coil-loop-state-",
                             dir=os.environ.get("TEST_WORKDIR"))
    atexit.register(cleanup, r.wd)
    atexit.register(cleanup, state)
    log = os.path.join(state, "chat.json")
    e = dict(os.environ, COIL=COIL,
             XDG_STATE_HOME=os.environ.get("XDG_STATE_HOME") or state,
             OPENAI_BASE_URL=fake.url + "/v1", ANTHROPIC_BASE_URL=fake.url)
    for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        e.pop(k, None)
    if key:
        e["OPENAI_API_KEY" if api == "openai" else
          "ANTHROPIC_API_KEY"] = "test-key"
    cmd = LOOPS[lang] + (["--mcp"] if mode == "mcp" else []) + (
        ["--api", api] if pick else []) + [
        "--workdir", r.wd, "--log", log, *args, TASK]
    try:
        p = subprocess.run(cmd, env=e, capture_output=True, text=True,
                           timeout=600)
        r.rc, r.out, r.err = p.returncode, p.stdout, p.stderr
    finally:
        fake.close()
    r.requests = fake.requests
    # the options the example gives coil, and so --tool-schema
    r.coil_options = ["--workdir", r.wd, "--timeout", args[list(
        args).index("--timeout") + 1] if "--timeout" in args else "30"]
    r.log = None
    if os.path.exists(log):
        with open(log) as f:
            r.log = json.load(f)
    r.log_path = log
    return r


def coil_prints(*args):
    p = subprocess.run([COIL, *args], capture_output=True, text=True)
    return p.stdout if p.returncode == 0 else None


# ---- what a request says --------------------------------------------------

def results(api, body):
    """The tool results in the request's last turn: {call id: (text,
    is_error or None, [PNG bytes of its figures])}."""
    msgs = body["messages"]
    out = {}
    if api == "anthropic":
        for blk in msgs[-1]["content"]:
            if blk.get("type") != "tool_result":
                continue
            text = "".join(c["text"] for c in blk["content"]
                           if c["type"] == "text")
            imgs = [base64.b64decode(c["source"]["data"])
                    for c in blk["content"] if c["type"] == "image" and
                    c["source"]["type"] == "base64" and
                    c["source"]["media_type"] == "image/png"]
            out[blk["tool_use_id"]] = (text, blk.get("is_error"), imgs)
        return out
    # OpenAI: the tool messages after the last assistant message, and
    # the figures in a user message after them (tool messages take text)
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    imgs = []
    for m in msgs[last + 1:]:
        if m["role"] == "tool":
            out[m["tool_call_id"]] = (m["content"], None, [])
        elif m["role"] == "user" and isinstance(m["content"], list):
            for part in m["content"]:
                url = part.get("image_url", {}).get("url", "")
                if url.startswith("data:image/png;base64,"):
                    imgs.append(base64.b64decode(url.split(",", 1)[1]))
    if imgs and out:
        k = list(out)[-1]
        out[k] = (out[k][0], None, imgs)
    return out


def call_ids(api, name):
    """The call ids of a recorded response, in order."""
    r = recorded(api, name)
    if api == "openai":
        return [c["id"] for c in r["choices"][0]["message"].get(
            "tool_calls") or []]
    return [b["id"] for b in r["content"] if b["type"] == "tool_use"]


def final_text(api, name):
    r = recorded(api, name)
    if api == "openai":
        return r["choices"][0]["message"]["content"]
    return "".join(b["text"] for b in r["content"] if b["type"] == "text")


# ---- the scenarios ----------------------------------------------------------

def first_request(api, r, what):
    """The first request: the API's path and key, the model, coil's tools
    and system text (for the options the session has), the task."""
    req = r.requests[0]
    body, h = req["body"], req["headers"]
    tools = json.loads(coil_prints("--tool-schema", api, *r.coil_options)
                       or "null")
    system = coil_prints("--system-prompt", *r.coil_options)
    check(req["path"] == PATHS[api], "%s: POST %s" % (what, PATHS[api]),
          req["path"])
    if api == "openai":
        check(h.get("authorization") == "Bearer test-key",
              what + ": the key as a bearer token", h)
        check(body["messages"][0] == {"role": "system", "content": system}
              and body["messages"][1] == {"role": "user", "content": TASK},
              what + ": the system message is coil --system-prompt's, then "
              "the task", body["messages"][:2])
    else:
        check(h.get("x-api-key") == "test-key" and
              h.get("anthropic-version") == "2023-06-01",
              what + ": x-api-key and anthropic-version", h)
        check(body.get("system") == system and body["messages"] == [
            {"role": "user", "content": TASK}] and
            isinstance(body.get("max_tokens"), int),
            what + ": system is coil --system-prompt's, then the task",
            body)
    check(tools and body.get("tools") == tools, what + ": the tools are "
          "exactly coil --tool-schema %s's" % api, body.get("tools"))
    check(isinstance(body.get("model"), str) and body["model"],
          what + ": a model is named", body.get("model"))


def main_checks(lang, mode):
    """The whole loop, for both APIs: a printing cell, a crash, a
    timeout, a figure, errors of every kind, the model's last word; then
    the chat log it wrote replays."""
    mpl = matplotlib_missing()
    for api in APIS:
        what = "%s %s %s" % (lang, api, mode)
        r = run(lang, api, MAIN, "--timeout", "2", mode=mode)
        check(r.rc == 0 and final_text(api, "6-done") in r.out and
              "Let me start" in r.out,
              what + ": the loop ends with the model's answer, exit 0",
              "rc %s\nout: %s\nerr: %s" % (r.rc, r.out, r.err))
        check(len(r.requests) == len(MAIN), what + ": one request a turn",
              len(r.requests))
        if len(r.requests) != len(MAIN):
            continue
        first_request(api, r, what)
        # each request after the first answers the calls of the response
        # before it
        got = [results(api, q["body"]) for q in r.requests[1:]]
        text = {(name, k): got[n].get(cid, (None, None, []))
                for n, name in enumerate(MAIN[:-1])
                for k, cid in enumerate(call_ids(api, name))}
        t, err, _ = text[("1-print", 0)]
        check(t is not None and "x is 42" in t and err in (None, False),
              what + ": a cell's output is its tool result", t)
        t, err, _ = text[("2-crash", 0)]
        check(t is not None and "[coil restored]" in t and
              "the Python process died" in t and err in (None, True),
              what + ": a crash: the result says plainly what was "
              "restored", t)
        t, err, _ = text[("3-timeout", 0)]
        check(t is not None and "[coil timeout]" in t and "(2 s)" in t and
              "TimeoutError" in t and "waited" not in t and
              "the namespace is as the cell left it" in t,
              what + ": the loop's --timeout stops a cell, and the result "
              "says so, and that the namespace stays", t)
        t, err, imgs = text[("4-figure", 0)]
        if mpl:
            skip(what + ": a figure goes back as an image", mpl)
        else:
            check(t is not None and "plotted" in t and len(imgs) == 1 and
                  imgs[0].startswith(PNG), what + ": a figure goes back as "
                  "an image (%s)" % ("a tool_result image block" if
                                     api == "anthropic" else
                                     "an image_url data URL in a user "
                                     "message"), (t, len(imgs)))
        t, err, _ = text[("5-errors", 0)]
        check(t is not None and "ZeroDivisionError" in t and
              err in (None, True), what + ": a cell that raised: the "
              "traceback", t)
        t, err, _ = text[("5-errors", 1)]
        check(t is not None and "unknown tool 'run_shell'" in t and
              "run_python" in t, what + ": an unknown tool: said, with "
              "the tools", t)
        t, err, _ = text[("5-errors", 2)]
        check(t is not None and "needs 'code'" in t and err in (None, True),
              what + ": arguments coil refuses: its message", t)
        t, err, _ = text[("5-errors", 3)]
        check(t is not None and "42" in t and ('"x"' in t or "x:" in t),
              what + ": list_variables after the crash: x is back", t)
        if api == "openai":
            t, err, _ = text[("5-errors", 4)]
            check(t is not None and "not a JSON object" in t,
                  what + ": arguments that are not JSON: said", t)
        check(all(len(g) == len(call_ids(api, MAIN[n]))
                  for n, g in enumerate(got)),
              what + ": every call has its result", [list(g) for g in got])
        replay_log(r, api, what, mpl)


def replay_log(r, api, what, mpl):
    """The chat log the example wrote: the last request's messages and
    the model's last answer; coil --replay runs its cells again."""
    last = r.requests[-1]["body"]["messages"]
    check(r.log is not None and r.log["messages"][:len(last)] == last and
          len(r.log["messages"]) == len(last) + 1,
          what + ": --log holds the chat as sent, and the last answer",
          r.log and len(r.log["messages"]))
    if r.log is None:
        return
    p = subprocess.run([COIL, "--replay", r.log_path, "--tool", "run_python",
                        "--check", "--timeout", "60", "--workdir", r.wd,
                        "--no-record", "--ignore", "running cell 2; .*"],
                       capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    check("In [5]: 1/0" in out and
          "In [6]" not in out and "x is 42" in out and "WorkerDied" in out
          and "waited" in out and "ZeroDivisionError" in out and
          ("plotted" in out or mpl),
          what + ": coil --replay runs the log's cells again", out)
    # --check of the whole chat: each result as the model read it (the
    # loop's notes and figure lines aside) is what the cell gives now,
    # the crash's and the traceback's included.  What the crash could
    # restore is the checkpoints' (taken by time), hence --ignore'd.
    # Cell 3 ran past the loop's --timeout (2 s), which the log does not
    # carry, and now runs to its end: that one difference is found.
    check(p.returncode == 1 and "1 differs" in out and
          "cell 3 differs" in out and "+  waited" in out and
          "-  TimeoutError: cell 3 ran past its" in out,
          what + ": coil --replay --check of the whole chat: every result "
          "the same but the cell the loop's --timeout stopped", out)


def replay_checks(lang, mode):
    """A log of cells that print: coil --replay --check finds each tool
    result the same as the cell gives now.  The example picks the API by
    the key that is set."""
    for api in APIS:
        what = "%s %s %s" % (lang, api, mode)
        r = run(lang, api, REPLAY, mode=mode, pick=False)
        check(r.rc == 0 and r.log is not None and r.requests and
              all(q["path"] == PATHS[api] for q in r.requests),
              what + ": with only its key set, the example picks the "
              "API; the chat is logged", "rc %s\n%s" % (r.rc, r.err))
        if r.log is None:
            continue
        p = subprocess.run([COIL, "--replay", r.log_path, "--check",
                            "--workdir", r.wd, "--no-record"],
                           capture_output=True, text=True, timeout=600)
        out = p.stdout + p.stderr
        check(p.returncode == 0 and "3 cells replayed" in out and
              "0 differ" in out, what + ": coil --replay --check of "
              "the log the example wrote: every result the same", out)
