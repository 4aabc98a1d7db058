#!/usr/bin/env python3
"""coil-loop.py - a model and a persistent Python session: a whole tool loop.

    OPENAI_API_KEY=sk-... ./coil-loop.py "plot sin(x); its maxima?"
    ANTHROPIC_API_KEY=sk-ant-... ./coil-loop.py --mcp "..."

The loop sends the task to OpenAI's Chat Completions API or Anthropic's
Messages API with coil's tools, runs each tool call in one coil session,
sends the answers back, and stops when the model answers in words or
after --max-turns turns.  The tool definitions (`coil --tool-schema
openai|anthropic`) and the system text (`coil --system-prompt`) come
from the coil it runs, so nothing here goes stale.

coil runs in agent mode (`coil --agent`: a JSON object a line, each tool
an op) or, with --mcp, as an MCP server (`coil --mcp`: JSON-RPC,
tools/call).  Either way the model gets the same things:
  - restored: when the Python process died (a crash, a cell killed at
    its timeout), what the namespace is back at and what was lost;
  - timeouts: every cell has one (--timeout, or the model's own
    `timeout`), and a cell stopped by it is said to be;
  - figures: sent as images, in each API's own form;
  - errors: a cell that raised, arguments coil refused, an unknown
    tool: the tool's result says so, for the model to mend.

Standard library only: copy the file and make it yours.  Its twin in
Node, coil-loop.mjs, is built the same way, with the same names.

Environment: OPENAI_API_KEY or ANTHROPIC_API_KEY (the API is the one
whose key is set, or --api), OPENAI_BASE_URL and ANTHROPIC_BASE_URL
(read as the official SDKs read them), COIL (the coil to run, default
`coil` on PATH).  Exit status: 0 when the model answered, 1 on an
error, 3 when --max-turns ran out first, 4 when the model's answer was
cut at the token limit (--max-tokens), 5 when the model refused or the
API's content filter stopped it; 128 + N when signal N stopped the loop
(coil is closed and the --log written first).
"""
import argparse
import base64
import json
import os
import signal
import stat
import subprocess
import sys
import urllib.error
import urllib.request

MODELS = {"openai": "gpt-4.1", "anthropic": "claude-sonnet-4-5"}
# Each tool is one agent op; its arguments are the op's fields (coil(1)).
OPS = {"run_python": "exec", "list_variables": "vars",
       "inspect": "inspect", "snapshot": "snapshot",
       "list_snapshots": "snapshots", "rollback": "rollback",
       "reset": "reset", "fork": "fork", "list_sessions": "sessions",
       "close_session": "close", "adopt_session": "adopt"}
# The most one image may be: Anthropic counts its base64 text (5 MiB),
# OpenAI its bytes (20 MB).  The loop reads a figure up to the larger.
MAX_IMAGE = {"openai": 20_000_000, "anthropic": 5 << 20}
MAX_FIGURE = 20_000_000
# What the model gets for a tool call its reply cut short.
CUT_CALL = ("your reply was cut at max_tokens before this call was "
            "complete; send a shorter cell")
CUT = object()      # a call's arguments, when the cut fell in them
# Exit statuses beyond 0, 1 (an error) and 3 (--max-turns ran out).
EXIT_CUT, EXIT_REFUSED = 4, 5
# How long close() waits for coil to end once its input is closed: a
# running cell's grace (coil's --grace, 2 s by default) and some more.
CLOSE_WAIT = 5 + 2
PNG = b"\x89PNG\r\n\x1a\n"


def say(*what):
    print("coil-loop:", *what, file=sys.stderr, flush=True)


def coil_prints(coil, *args):
    """What `coil ARGS` prints: its tool definitions, its system text
    (given the session's options, which they speak of)."""
    r = subprocess.run([coil, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("coil-loop: '%s %s' failed: %s" % (
            coil, " ".join(args), r.stderr.strip()))
    return r.stdout


# ---- coil as the tool ----------------------------------------------------

def restored_note(answer):
    """`restored` in plain words: the model must know what it lost."""
    r = answer["restored"]
    why = ("the cell ran past its timeout and its process was killed"
           if answer.get("status") == "timeout" else
           "the Python process died")
    if r.get("cell") is None:
        text = (why + " and nothing could be restored: the namespace is "
                "empty, as in a new session (import and define again what "
                "you need).")
    else:
        text = ("%s; the namespace was restored to its state after cell "
                "%d: what later cells defined is gone." % (why, r["cell"]))
    if r.get("redone"):
        text += " Run again, and answered as before: cells %s." % (
            ", ".join(map(str, r["redone"])))
    for d in r.get("differs") or []:
        text += " Cell %s answered differently when run again: %s." % (
            d["cell"], json.dumps(d.get("first")))
    if r.get("lost"):
        cells = ", ".join(str(c) for c in r["lost"])
        whys = ["%s: %s" % (w["cell"], w["why"])
                for w in r.get("lost_why") or []]
        why_lost = "; ".join(whys) or "see coil(1)"
        text += (" Lost, not run again: cells %s (%s); run them again if "
                 "you need what they made." % (cells, why_lost))
    if r.get("threads_lost"):
        text += " %d threads the cells started are gone." % (
            r["threads_lost"],)
    return "\n[coil restored] " + text + "\n"


def finish(args, answer, text, images, is_error, timeout):
    """A tool's result for the model: coil's text, and what the loop adds
    (the same in both modes; answer is the agent answer or MCP's
    structuredContent, which has the same fields)."""
    if answer.get("status") == "timeout":
        text += ("\n[coil timeout] the cell ran past its timeout (%g s) and "
                 "was stopped. Give run_python a larger timeout (seconds) "
                 "for long work, or split it into shorter cells.\n" % (
                     args.get("timeout") or timeout))
    if answer.get("restored"):
        text += restored_note(answer)
    elif answer.get("status") in ("timeout", "interrupted"):
        text += ("\n[coil] the interrupt stopped it: the namespace is as "
                 "the cell left it, what it did before the stop stays.\n")
    return {"text": text.rstrip() or "(no output)", "images": images,
            "is_error": is_error}


def read_figure(path, workdir):
    """A figure's PNG bytes, or None.  A cell can put a link where a
    figure was, so the file is opened without following one, and taken
    only if it is a regular PNG file in the work directory (which cells
    may read anyway), with one name (a hard link could be another file
    of yours): nothing else of yours goes to the API."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        real = os.readlink("/proc/self/fd/%d" % fd)
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or
                st.st_size > MAX_FIGURE or
                not real.startswith(workdir + os.sep)):
            return None
        data = f.read(MAX_FIGURE + 1)
    return data if data.startswith(PNG) and len(data) <= MAX_FIGURE else None


def answer_text(answer):
    """An agent answer as the model reads it, worded as coil --mcp words
    it: what the cell printed, its stderr marked, the traceback, Out[N];
    another op's answer is its fields."""
    def line(s):
        return s if s == "" or s.endswith("\n") else s + "\n"
    if answer.get("status") == "invalid":
        return "%s: %s\n" % (answer["error"]["type"],
                              answer["error"]["message"])
    if "output" not in answer:
        return json.dumps({k: v for k, v in answer.items() if k != "id"},
                          ensure_ascii=False)
    err = answer.get("error") or {}
    text = line(answer.get("output") or "")
    if answer.get("stderr"):
        text += "[stderr]\n" + line(answer["stderr"])
    text += line(err.get("traceback") or "")
    if err and err["message"] not in (err.get("traceback") or ""):
        text += "%s: %s\n" % (err["type"], err["message"])
    if err.get("hint"):
        text += "hint: %s\n" % err["hint"]
    if answer.get("result") is not None:
        text += "Out[%s]: %s\n" % (answer["cell"], answer["result"])
    for w in answer.get("warnings") or []:
        text += "warning: %s\n" % w
    return text


class CoilGone(Exception):
    pass


class CoilProcess:
    """A coil running as the tool, in one mode: "--agent" or "--mcp"."""

    def __init__(self, coil, mode, coil_options, workdir, timeout):
        self.workdir = os.path.realpath(workdir)
        self.timeout = timeout
        self.proc = subprocess.Popen([coil, mode, *coil_options],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.last_id = 0

    def send(self, msg):
        try:
            self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise CoilGone("coil ended (exit status %s)" % self.proc.wait())

    def lines(self):
        """The JSON lines coil writes, until it ends."""
        for line in self.proc.stdout:
            yield json.loads(line)
        raise CoilGone("coil ended (exit status %s)" % self.proc.wait())

    def close(self):
        """End coil: close its input, and if it has not ended in
        CLOSE_WAIT seconds (a cell still running), SIGTERM, then
        SIGKILL: no coil is left running when the loop ends."""
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        for end in (None, self.proc.terminate, self.proc.kill):
            if end is not None:
                end()
            try:
                self.proc.wait(CLOSE_WAIT)
                return
            except subprocess.TimeoutExpired:
                pass
        self.proc.wait()


class AgentCoil(CoilProcess):
    """coil --agent: a request a line, an answer a line (lines with
    "event" are a cell's stream events: skipped)."""

    def __init__(self, coil, coil_options, workdir, timeout):
        super().__init__(coil, "--agent", coil_options, workdir, timeout)

    def start(self):
        pass

    def request(self, req):
        self.last_id += 1
        self.send(dict(req, id=self.last_id))
        for answer in self.lines():
            if answer.get("id") == self.last_id and "event" not in answer:
                return answer

    def call(self, tool, args):
        answer = self.request(dict(args, op=OPS[tool]))
        text, images = answer_text(answer), []
        for d in answer.get("display") or []:
            if d.get("type") != "image/png" or not d.get("path"):
                continue
            data = read_figure(d["path"], self.workdir)
            if data is None:
                text += "[figure %s: not attached]\n" % d["path"]
                continue
            # fit_images() says whether it is attached
            images.append({"mime": "image/png", "path": d["path"],
                           "data": base64.b64encode(data).decode()})
        return finish(args, answer, text, images,
                      answer.get("status") != "ok", self.timeout)


class McpCoil(CoilProcess):
    """coil --mcp: JSON-RPC 2.0 a line; initialize, then tools/call."""

    def __init__(self, coil, coil_options, workdir, timeout):
        super().__init__(coil, "--mcp", coil_options, workdir, timeout)

    def start(self):
        self.rpc("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "coil-loop", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def rpc(self, method, params):
        """The call's result; its JSON-RPC error as {"error": message}."""
        self.last_id += 1
        self.send({"jsonrpc": "2.0", "id": self.last_id, "method": method,
                   "params": params})
        for msg in self.lines():
            if msg.get("method") == "notifications/message":
                say("coil says:", json.dumps(msg["params"].get("data")))
            if msg.get("id") == self.last_id and "method" not in msg:
                if "error" in msg:
                    return {"error": msg["error"]["message"]}
                return msg["result"]

    def call(self, tool, args):
        res = self.rpc("tools/call", {"name": tool, "arguments": args})
        if "error" in res:
            return finish(args, {}, "error: " + res["error"], [], True,
                          self.timeout)
        text = "".join(c["text"] for c in res["content"]
                       if c["type"] == "text")
        images = [{"mime": c["mimeType"], "data": c["data"]}
                  for c in res["content"] if c["type"] == "image"]
        return finish(args, res.get("structuredContent") or {}, text,
                      images, res.get("isError", False), self.timeout)


def fit_images(api, result):
    """The result, with each image over the API's limit (a figure the
    loop read, or one in coil's MCP result) taken out and said in its
    text: the API would refuse the whole request (400), and end the
    run.  A figure the loop read has its path: said either way."""
    kept = []
    for im in result["images"]:
        size = len(im["data"]) * 3 // 4 - im["data"][-2:].count("=")
        # Anthropic counts the base64 text, OpenAI the bytes
        counted = len(im["data"]) if api == "anthropic" else size
        name = "figure %s:" % im["path"] if "path" in im else "figure"
        if counted > MAX_IMAGE[api]:
            result["text"] += ("\n[%s not attached: %d bytes, over the "
                               "API's limit]" % (name, size))
            continue
        if "path" in im:
            result["text"] += "\n[%s attached]" % name
        kept.append({"mime": im["mime"], "data": im["data"]})
    result["images"] = kept
    return result


def run_tool(coil, name, args):
    if args is CUT:
        return {"text": CUT_CALL, "images": [], "is_error": True}
    if name not in OPS:
        return {"text": "unknown tool '%s': the tools are %s" % (
            name, ", ".join(OPS)), "images": [], "is_error": True}
    if not isinstance(args, dict):
        return {"text": "the arguments of '%s' are not a JSON object: call "
                "it again with one" % name, "images": [], "is_error": True}
    return coil.call(name, args)


# ---- the model's API -----------------------------------------------------

def post(url, headers, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), dict(
        headers, **{"content-type": "application/json"}))
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit("coil-loop: %s answered %d: %s" % (
            url, e.code, e.read().decode(errors="replace")[:2000]))
    except urllib.error.URLError as e:
        sys.exit("coil-loop: cannot reach %s: %s" % (url, e.reason))


def api_key(name):
    if not os.environ.get(name):
        sys.exit("coil-loop: set %s (or choose the other API with --api)"
                 % name)
    return os.environ[name]


class OpenAIChat:
    """Chat Completions.  A call's arguments are JSON in a string; each
    result is a "tool" message, which holds text only, so figures follow
    the results in a user message, as image_url data URLs."""

    def __init__(self, model, system, tools, max_tokens):
        base = os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self.url = base.rstrip("/") + "/chat/completions"
        self.headers = {"authorization": "Bearer " +
                        api_key("OPENAI_API_KEY")}
        self.model, self.tools = model, tools
        self.max_tokens = max_tokens      # None: the model's own limit
        self.messages = [{"role": "system", "content": system}]

    def ask(self, task):
        self.messages.append({"role": "user", "content": task})

    def turn(self):
        """The model's next turn: its text, its calls [(id, name,
        arguments, or None when they are not JSON)], and how it stopped:
        None (as it meant to), "cut" (at the token limit: its last call,
        or its text, is not whole) or "refused" (a refusal, or the
        content filter)."""
        body = {"model": self.model, "messages": self.messages,
                "tools": self.tools}
        if self.max_tokens is not None:
            body["max_completion_tokens"] = self.max_tokens
        reply = post(self.url, self.headers, body)
        choice = reply["choices"][0]
        msg = choice["message"]
        stop = None
        if choice.get("finish_reason") == "length":
            stop = "cut"
        if choice.get("finish_reason") == "content_filter" or \
                msg.get("refusal"):
            stop = "refused"
        self.messages.append({k: msg[k] for k in ("role", "content",
                                                  "tool_calls") if k in msg})
        calls = []
        for c in msg.get("tool_calls") or []:
            try:
                args = json.loads(c["function"]["arguments"] or "{}")
            except ValueError:
                args = None
            calls.append((c["id"], c["function"]["name"], args))
        if stop == "cut" and calls:
            # the cut fell in the last call: its arguments are not whole
            calls[-1] = calls[-1][:2] + (CUT,)
        return msg.get("content") or msg.get("refusal") or "", calls, stop

    def give(self, calls, results):
        figures = []
        for (call_id, name, _), res in zip(calls, results):
            self.messages.append({"role": "tool", "tool_call_id": call_id,
                                  "content": res["text"]})
            figures += [{"type": "image_url", "image_url": {
                "url": "data:%s;base64,%s" % (im["mime"], im["data"])}}
                for im in res["images"]]
        if figures:
            self.messages.append({"role": "user", "content": [
                {"type": "text", "text": "The figures of those calls:"}]
                + figures})


class AnthropicMessages:
    """Messages API.  Results are tool_result blocks of one user message;
    a figure is an image block in its call's tool_result."""

    def __init__(self, model, system, tools, max_tokens):
        base = os.environ.get("ANTHROPIC_BASE_URL") or \
            "https://api.anthropic.com"
        self.url = base.rstrip("/") + "/v1/messages"
        self.headers = {"x-api-key": api_key("ANTHROPIC_API_KEY"),
                        "anthropic-version": "2023-06-01"}
        self.model, self.tools, self.system = model, tools, system
        self.max_tokens = max_tokens or 4096    # the API requires one
        self.messages = []

    def ask(self, task):
        self.messages.append({"role": "user", "content": task})

    def turn(self):
        """As OpenAIChat.turn(): text, calls, how it stopped."""
        reply = post(self.url, self.headers, {
            "model": self.model, "max_tokens": self.max_tokens,
            "system": self.system, "tools": self.tools,
            "messages": self.messages})
        self.messages.append({"role": "assistant",
                              "content": reply["content"]})
        stop = {"max_tokens": "cut", "refusal": "refused"}.get(
            reply.get("stop_reason"))
        text = "".join(b["text"] for b in reply["content"]
                       if b["type"] == "text")
        calls = [(b["id"], b["name"], b["input"])
                 for b in reply["content"] if b["type"] == "tool_use"]
        if stop == "cut" and reply["content"][-1:] and \
                reply["content"][-1]["type"] == "tool_use":
            # the cut fell in the last call: its input is not whole
            calls[-1] = calls[-1][:2] + (CUT,)
        return text, calls, stop

    def give(self, calls, results):
        self.messages.append({"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": call_id,
            "is_error": res["is_error"],
            "content": [{"type": "text", "text": res["text"]}] + [
                {"type": "image", "source": {"type": "base64", "media_type":
                                             im["mime"], "data": im["data"]}}
                for im in res["images"]]}
            for (call_id, _, _), res in zip(calls, results)]})


APIS = {"openai": OpenAIChat, "anthropic": AnthropicMessages}


# ---- the loop ------------------------------------------------------------

def options(argv):
    """Options, the task, and what follows "--": coil's own options."""
    cut = argv.index("--") if "--" in argv else len(argv)
    p = argparse.ArgumentParser(description="A model with a coil session.")
    p.add_argument("task", help="what to ask the model")
    p.add_argument("--api", choices=sorted(APIS), help="default: the one "
                   "whose key is set, openai when both are")
    p.add_argument("--model", help="default: %s" % MODELS)
    p.add_argument("--mcp", action="store_true",
                   help="run coil --mcp (default: coil --agent)")
    p.add_argument("--max-turns", type=int, default=20)
    p.add_argument("--max-tokens", type=int, help="the most the model "
                   "may write in one turn (default: 4096 for Anthropic, "
                   "which needs one; OpenAI's model's own limit)")
    p.add_argument("--timeout", type=float, default=30,
                   help="seconds a cell may run, unless the model says "
                   "(0: no limit)")
    p.add_argument("--workdir", default=".",
                   help="the session's work directory")
    p.add_argument("--log", help="write the chat here as JSON at the end "
                   "(coil --replay reads it)")
    opts = p.parse_args(argv[:cut])
    opts.coil_options = ["--workdir", opts.workdir, "--timeout",
                         "%g" % opts.timeout, *argv[cut + 1:]]
    if opts.api is None:
        opts.api = ("anthropic" if os.environ.get("ANTHROPIC_API_KEY") and
                    not os.environ.get("OPENAI_API_KEY") else "openai")
    return opts


class Stopped(Exception):
    """SIGTERM or SIGINT to the loop: it ends as it would on an error,
    closing coil and writing the --log."""


def stopped(signum, frame):
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)   # one is enough: now close
    raise Stopped(signum)


def main(argv):
    opts = options(argv)
    coil_bin = os.environ.get("COIL") or "coil"
    tools = json.loads(coil_prints(coil_bin, "--tool-schema", opts.api,
                                   *opts.coil_options))
    system = coil_prints(coil_bin, "--system-prompt", *opts.coil_options)
    chat = APIS[opts.api](opts.model or MODELS[opts.api], system, tools,
                          opts.max_tokens)
    chat.ask(opts.task)
    coil = None
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stopped)
    try:
        coil = (McpCoil if opts.mcp else AgentCoil)(
            coil_bin, opts.coil_options, opts.workdir, opts.timeout)
        coil.start()
        for _ in range(opts.max_turns):
            text, calls, stop = chat.turn()
            if text:
                print(text, flush=True)
            if stop == "refused":
                say("the model refused, or the API's content filter "
                    "stopped its answer")
                return EXIT_REFUSED
            if not calls:
                if stop == "cut":
                    say("the answer was cut at the token limit: give a "
                        "larger --max-tokens")
                    return EXIT_CUT
                return 0
            results = []
            for _, name, args in calls:
                if args is CUT:
                    say("%s: cut at the token limit, not run" % name)
                else:
                    say("%s %s" % (name, json.dumps(args)[:200]))
                results.append(fit_images(opts.api,
                                          run_tool(coil, name, args)))
            chat.give(calls, results)
        say("stopped after %d turns (--max-turns): the model still had "
            "calls to make" % opts.max_turns)
        return 3
    except CoilGone as e:
        say(e)
        return 1
    except Stopped as e:
        say("stopped by signal %d: closing coil" % e.args[0])
        return 128 + e.args[0]
    finally:
        if coil is not None:
            coil.close()
        if opts.log:
            with open(opts.log, "w") as f:
                json.dump({"api": opts.api, "model": chat.model,
                           "system": system, "messages": chat.messages},
                          f, indent=1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
