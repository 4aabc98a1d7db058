#!/usr/bin/python3
"""coil --mcp --http under the official MCP SDK's Streamable HTTP client
(@modelcontextprotocol/sdk's StreamableHTTPClientTransport), on
127.0.0.1 with a bearer token: the tools listed, cells run (a value
kept from call to call, an exception, a figure as image content, output
as progress), a call cancelled with the SDK's AbortSignal (the cell
stops, the session goes on), a connection dropped while its cell runs
(the SDK resumes with Last-Event-ID and gets the answer kept for it),
the session ended with DELETE; and the client refused without the
token, with a wrong one, and from a foreign Origin.  The v2 client
(@modelcontextprotocol/client) in each of its ways to a revision: the
handshake (a session), server/discover then 2026-07-28, and 2026-07-28
alone (no session).

The SDK is installed with npm ci from tests/mcp/package-lock.json into
the build tree (tests/mcp-node), once (mcplib.install).
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, cleanup, done, skip_all, workdir  # noqa: E402
from mcphttp import start  # noqa: E402
from mcplib import install, node_major  # noqa: E402

TOKEN = "coil-sdk-token-0123456789abcdef"


def checks(out):
    s = out.get("steps", {})
    check(out.get("error") is None, "the session runs through",
          out.get("error"))
    check(isinstance(out.get("session"), str) and
          len(out["session"]) == 32, "the SDK holds coil's session id",
          out.get("session"))
    check("run_python" in (out.get("tools") or []), "the tools are listed",
          out.get("tools"))
    v = s.get("value", {})
    check(v.get("text", "").endswith("Out[1]: 42\n") and "hi" in
          v.get("text", "") and not v.get("isError"), "a cell's output "
          "and value", v)
    check("Out[2]: 43" in s.get("next", {}).get("text", ""),
          "the namespace is kept from call to call", s.get("next"))
    r = s.get("raise", {})
    check(r.get("isError") and "ZeroDivisionError" in r.get("text", ""),
          "an exception is a result with isError", r)
    f = s.get("figure", {})
    check(any(i["mimeType"] == "image/png" and i["head"] ==
              "89504e470d0a1a0a" for i in f.get("images", [])),
          "a figure comes as PNG image content", f)
    p = s.get("progress", {})
    check("".join(p.get("messages", [])) == "line 0\nline 1\nline 2\n" and
          "'done'" in p.get("text", ""), "output comes as progress "
          "before the result", p)
    check(s.get("cancel", {}).get("thrown") is True, "a cancelled call "
          "rejects", s.get("cancel"))
    check("False" in s.get("after_cancel", {}).get("text", ""),
          "the cancelled cell stopped, and the session goes on",
          s.get("after_cancel"))
    d = s.get("drop", {})
    check(d.get("dropped") is True and "started\nfinished\n" in
          d.get("text", "") and "'kept'" in d.get("text", ""),
          "a connection dropped mid-cell: the SDK resumes and gets the "
          "answer", d)
    check("Out[" in s.get("after_drop", {}).get("text", ""),
          "the session goes on after the drop", s.get("after_drop"))
    check("terminated" in s and s["terminated"] is None,
          "DELETE ends the session", s.get("terminated"))
    for name, what in (("no_token", "without the token"),
                       ("wrong_token", "with a wrong token"),
                       ("wrong_origin", "from a foreign Origin")):
        st = s.get(name, {})
        code = "403" if name == "wrong_origin" else "401"
        check(st.get("connected") is False and (str(st.get("code")) == code
              or code in st.get("message", "")),
              "the SDK client is refused %s (%s)" % (what, code), st)


def v2(d, port):
    for mode, want in (("legacy", "2025-11-25"), ("auto", "2026-07-28"),
                       ("pin", "2026-07-28")):
        r = subprocess.run(["node", os.path.join(d, "http-v2.mjs"),
                            "http://127.0.0.1:%d/mcp" % port, TOKEN, mode],
                           capture_output=True, text=True, timeout=600)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = {"error": "no JSON from http-v2.mjs: %r %r"
                   % (r.stdout[-2000:], r.stderr[-2000:])}
        stateful = mode == "legacy"
        check(out.get("error") is None and out.get("version") == want and
              (out.get("session") is not None) == stateful and
              "Out[" in out.get("first", "") and ": 42" in out["first"] and
              ": 21" in out.get("second", "") and
              out.get("progress") == ["p\n"],
              "v2 client, %s: revision %s, %s, cells and progress" %
              (mode, want, "a session" if stateful else "no session"), out)


def main():
    if node_major() is None or node_major() < 18:
        skip_all("Node.js 18 or newer is not installed (setup.sh installs "
                 "it)")
    d, why = install()
    if d is None:
        skip_all(why)
    w = workdir()
    state = workdir("coil-state-")
    env = dict(os.environ, COIL_HTTP_TOKEN=TOKEN, XDG_STATE_HOME=state)
    c = start("--workdir", w, env=env)
    try:
        r = subprocess.run(["node", os.path.join(d, "http.mjs"),
                            "http://127.0.0.1:%d/mcp" % c.port, TOKEN, w],
                           capture_output=True, text=True, timeout=600)
        try:
            out = json.loads(r.stdout)
        except ValueError:
            out = {"error": "no JSON from http.mjs: %r %r"
                   % (r.stdout[-2000:], r.stderr[-2000:])}
        checks(out)
        v2(d, c.port)
    finally:
        c.close()
    check(c.stderr_rest() == "", "coil said nothing else on stderr",
          c.stderr_rest()[-4000:])
    cleanup(w)
    cleanup(state)
    done()


main()
