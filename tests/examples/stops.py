#!/usr/bin/python3
"""How the example loops end, in Python and Node, against both APIs
played back (looplib.py), with coil --agent unless said:

- the token limit: a call the limit cut (Anthropic's stop_reason
  "max_tokens" in a tool_use block, OpenAI's finish_reason "length" in a
  call's arguments) is not run: it is answered as an error asking for a
  shorter cell, and the loop goes on; an answer in words that the limit
  cut is printed, said on stderr, exit 4;
- a refusal (OpenAI's `refusal`, Anthropic's stop_reason "refusal") and
  OpenAI's content filter: said, exit 5;
- --max-tokens: Anthropic's max_tokens is 4096 unless given; OpenAI's
  max_completion_tokens is sent only when given;
- a figure over the API's limit (Anthropic: 5 MiB of base64; OpenAI:
  20 MB): not sent, said in the call's result ("figure not attached: N
  bytes, over the API's limit"), so that the API does not refuse the
  request; one under it is sent;
- --timeout 0 is no limit, in both loops as in coil;
- coil killed by a signal while a cell runs: the loop says so, exit 1,
  and still writes its --log (Node used to hang there);
- SIGTERM to the loop while a cell runs that would run for an hour:
  the loop closes coil (its stdin, then SIGTERM when it does not end)
  and writes its --log, exit 128 + 15; no coil is left running.

Each waits for the real event (the cell's own file in the work
directory), never for a time.
"""
import json
import os
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import looplib  # noqa: E402
from looplib import (APIS, PNG, FakeApi, node_missing, results,  # noqa: E402
                     run)
from coiltest import check, done, skip  # noqa: E402

CUT_NOTE = "your reply was cut at max_tokens before this call was complete"


def cut(lang):
    for api in APIS:
        what = "%s %s" % (lang, api)
        r = run(lang, api, ["s1-cut-call", "6-done"])
        got = list(results(api, r.requests[1]["body"]).values()) if len(
            r.requests) == 2 else []
        first, second = got if len(got) == 2 else ((None,) * 3,) * 2
        check(r.rc == 0 and first[0] is not None and "x is 42" in first[0],
              what + ": the whole call before the cut one runs, the loop "
              "goes on to the answer", (r.rc, r.err, got))
        check(second[0] is not None and CUT_NOTE in second[0] and
              "send a shorter cell" in second[0] and
              second[1] in (None, True) and
              not os.path.exists(os.path.join(r.wd, "cut-ran")),
              what + ": the call the token limit cut is not run; its "
              "result says why, as an error", second)

        r = run(lang, api, ["s2-cut-text"])
        check(r.rc == 4 and "the squares are 0, 1, 4" in r.out and
              "token limit" in r.err and "--max-tokens" in r.err and
              "Traceback" not in r.err and r.log is not None,
              what + ": an answer cut at the token limit: printed, said, "
              "exit 4", (r.rc, r.out, r.err))

        r = run(lang, api, ["s3-refused"])
        check(r.rc == 5 and "refused" in r.err and "Traceback" not in r.err
              and r.log is not None and
              ("can't help" in r.out if api == "openai" else True),
              what + ": a refusal: said, exit 5", (r.rc, r.out, r.err))

        r = run(lang, api, ["6-done"])
        body = r.requests[0]["body"] if r.requests else {}
        if api == "anthropic":
            ok = body.get("max_tokens") == 4096
        else:
            ok = "max_completion_tokens" not in body and "max_tokens" \
                not in body
        r = run(lang, api, ["6-done"], "--max-tokens", "1234")
        given = r.requests[0]["body"] if r.requests else {}
        key = "max_tokens" if api == "anthropic" else \
            "max_completion_tokens"
        check(ok and r.rc == 0 and given.get(key) == 1234,
              what + ": --max-tokens: %s, 1234 when given" % (
                  "4096 unless given" if api == "anthropic" else
                  "not sent unless given"), (body, given))

    r = run(lang, "openai", ["s4-filter"])
    check(r.rc == 5 and "content filter" in r.err and
          "The squares are" in r.out,
          lang + " openai: the content filter: what came is printed, "
          "said, exit 5", (r.rc, r.out, r.err))


def big_figure(lang):
    for api in APIS:
        what = "%s %s" % (lang, api)
        r = run(lang, api, ["s5-big-figure", "6-done"])
        got = list(results(api, r.requests[1]["body"]).values()) if len(
            r.requests) == 2 else []
        text, _, imgs = got[0] if got else (None, None, [])
        check(r.rc == 0 and text is not None and "shown" in text,
              what + ": a cell shows a 4 MiB figure and a small one",
              (r.rc, r.err))
        if text is None:
            continue
        size = os.path.getsize(os.path.join(r.wd, "big.png"))
        small = PNG + b"SMALL-FIGURE"
        if api == "anthropic":
            check(imgs == [small] and "big.png: not attached: %d bytes, "
                  "over the API's limit]" % size in text and
                  "small.png: attached" in text,
                  what + ": its base64 is over 5 MiB: not sent, said; the "
                  "small one is sent", (text, [len(i) for i in imgs]))
        else:
            check(len(imgs) == 2 and len(imgs[0]) == size and
                  imgs[1] == small and "not attached" not in text and
                  "big.png: attached" in text,
                  what + ": under 20 MB: both are sent",
                  (text, [len(i) for i in imgs]))


def no_timeout(lang):
    r = run(lang, "openai", ["1-print", "6-done"], "--timeout", "0")
    got = list(results("openai", r.requests[1]["body"]).values()) if len(
        r.requests) == 2 else []
    check(r.rc == 0 and got and "x is 42" in got[0][0],
          lang + ": --timeout 0 is no limit, as in coil",
          (r.rc, r.err, got))


def coil_pid(loop_pid):
    """The pid of the coil the loop started (its one child)."""
    kids = []
    for task in os.listdir("/proc/%d/task" % loop_pid):
        with open("/proc/%d/task/%s/children" % (loop_pid, task)) as f:
            kids += [int(k) for k in f.read().split()]
    return kids[0] if len(kids) == 1 else None


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def slow_run(lang, api, end):
    """Start the loop on a cell that runs for an hour; when the cell has
    begun (its file is there), end(loop, coil pid); then the loop's
    exit status (None: still running), stderr, log, the coil pid, and
    whether that coil was left running."""
    fake = FakeApi(api, ["s6-slow", "6-done"])
    wd = looplib.workdir("coil-loop-")
    state = looplib.workdir("coil-loop-state-")
    log = os.path.join(state, "chat.json")
    e = dict(os.environ, COIL=looplib.COIL,
             XDG_STATE_HOME=os.environ.get("XDG_STATE_HOME") or state,
             OPENAI_BASE_URL=fake.url + "/v1", ANTHROPIC_BASE_URL=fake.url)
    e["OPENAI_API_KEY" if api == "openai" else "ANTHROPIC_API_KEY"] = "k"
    loop = subprocess.Popen(looplib.LOOPS[lang] + [
        "--api", api, "--workdir", wd, "--log", log, "--timeout", "0",
        looplib.TASK], env=e, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    started = os.path.join(wd, "started")
    pid, left = None, False
    try:
        # the real event: the cell made its file; the loop ends first
        # only on an error, which the checks then show
        while not os.path.exists(started) and loop.poll() is None:
            time.sleep(0.05)
        pid = coil_pid(loop.pid) if loop.poll() is None else None
        if pid is not None:
            end(loop, pid)
        try:
            err = loop.communicate(timeout=120)[1]
        except subprocess.TimeoutExpired:
            # not a timing: the loop takes seconds; this is a coil left
            # running (it holds the loop's stderr) or a loop that hangs
            err = "the loop, or a coil it left, still ran 120 s later"
        left = pid is not None and alive(pid)
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
        if pid is not None and alive(pid):
            os.kill(pid, signal.SIGKILL)
        fake.close()
    chat = None
    if os.path.exists(log):
        with open(log) as f:
            chat = json.load(f)
    looplib.cleanup(wd)
    looplib.cleanup(state)
    return loop.poll(), err, chat, pid, left


def signals(lang):
    for api in APIS:
        what = "%s %s" % (lang, api)
        rc, err, chat, pid, _ = slow_run(
            lang, api, lambda loop, pid: os.kill(pid, signal.SIGKILL))
        check(pid is not None and rc == 1 and "coil ended" in err and
              chat is not None and "Traceback" not in err,
              what + ": coil killed by a signal during a cell: said, "
              "exit 1, the --log written", (pid, rc, err))

        rc, err, chat, pid, left = slow_run(
            lang, api, lambda loop, pid: loop.send_signal(signal.SIGTERM))
        check(pid is not None and rc == 128 + signal.SIGTERM and
              chat is not None and not left,
              what + ": SIGTERM to the loop during an hour-long cell: "
              "coil closed, the --log written, exit 143", (pid, rc, err))


for lang in ("python", "node"):
    why = node_missing() if lang == "node" else None
    if why:
        skip("the Node example's stops", why)
        continue
    cut(lang)
    big_figure(lang)
    no_timeout(lang)
    signals(lang)
done()
