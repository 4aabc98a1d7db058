#!/usr/bin/python3
"""coil --mcp under the official MCP SDK clients from the npm registry:
@modelcontextprotocol/sdk (v1, the 2025 handshake) and
@modelcontextprotocol/client (v2) in each of its ways of agreeing on a
revision: the handshake, server/discover then 2026-07-28 ("auto", which
starts the server twice), and 2026-07-28 alone ("pin").

Each session (tests/mcp/client.mjs) lists the tools and calls each of
them: a value with output, an exception (isError), bad arguments (a
result the model can read, not a protocol error), an unknown tool (a
protocol error), a call cancelled while it runs (the SDK's AbortSignal:
the cell stops, the session goes on), a figure (image content), a
snapshot and rollback, a crash (restored from the checkpoint), a cell
cancelled that ignores the interrupt (killed, and the next result says
so), a reset, code holding a lone surrogate (answered, not left to the call's
timeout) and a rollback to "0".  The session is recorded by default, as an agent's is.

The SDKs are installed with npm ci from tests/mcp/package-lock.json into
the build tree (tests/mcp-node), once.
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, skip, workdir  # noqa: E402
from mcplib import install, node_major  # noqa: E402

TOOLS = {"run_python", "list_variables", "inspect", "snapshot",
         "list_snapshots", "rollback", "reset", "fork", "list_sessions",
         "close_session", "adopt_session"}
RUNS = [("v1", "legacy", None), ("v2", "legacy", "2025-11-25"),
        ("v2", "auto", "2026-07-28"), ("v2", "pin", "2026-07-28")]


def session(d, sdk, mode):
    w = workdir()
    # coil's state beside the work dir: in it, coil would say on stderr
    # that the sandbox hides it, and stderr is to stay empty here
    state = workdir("coil-state-")
    env = dict(os.environ, XDG_STATE_HOME=state)
    r = subprocess.run(["node", os.path.join(d, "client.mjs"), sdk, mode,
                        COIL, w], capture_output=True, text=True, env=env,
                       timeout=600)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = {"error": "no JSON from client.mjs: %r %r"
               % (r.stdout[-2000:], r.stderr[-2000:])}
    return w, state, out


def checks(name, want_version, w, state, out):
    s = out.get("steps", {})
    ok = check(out.get("error") is None, name + ": the session runs "
               "through", out.get("error"))
    if not ok:
        return
    if want_version is not None:
        check(out.get("version") == want_version, name + ": revision "
              + want_version, out.get("version"))
    check((out.get("server") or {}).get("name") == "coil",
          name + ": serverInfo names coil", out.get("server"))
    check("persistent" in (out.get("instructions") or ""),
          name + ": instructions say what the session is",
          out.get("instructions"))
    tools = {t["name"]: t for t in out.get("tools", [])}
    check(set(tools) == TOOLS, name + ": the tools", sorted(tools))
    rp = tools.get("run_python", {})
    check(rp.get("required") == ["code"] and "timeout" in
          rp.get("properties", []) and not {"stream", "input", "columns",
                                             "lines"} & set(
              rp.get("properties", [])),
          name + ": run_python takes code and timeout, not the terminal's "
          "fields", rp)
    check((tools.get("list_variables", {}).get("annotations") or {})
          .get("readOnlyHint") is True and
          (tools.get("reset", {}).get("annotations") or {})
          .get("destructiveHint") is True,
          name + ": annotations say which tools change nothing",
          {k: t.get("annotations") for k, t in tools.items()})

    v = s.get("value", {})
    check(v.get("text") == "hi\nOut[1]: 42\n" and not v.get("isError") and
          (v.get("structured") or {}).get("result") == "42",
          name + ": a cell's output and value, as text and structured", v)
    v = s.get("raise", {})
    check(v.get("isError") and "ZeroDivisionError: division by zero" in
          v.get("text", "") and
          ((v.get("structured") or {}).get("error") or {}).get("type") ==
          "ZeroDivisionError", name + ": an exception is isError with its "
          "traceback", v)
    v = s.get("vars", {})
    check("x: int = 42" in v.get("text", ""), name + ": list_variables",
          v)
    v = s.get("bad_args", {})
    check(v.get("isError") and "needs 'code'" in v.get("text", ""),
          name + ": bad arguments are a result the model reads", v)
    v = s.get("unknown_tool", {})
    check(v.get("thrown") and v.get("code") == -32602,
          name + ": an unknown tool is a protocol error (-32602)", v)
    v = s.get("cancel", {})
    check(v.get("thrown") and v.get("progress") == ["started\n"],
          name + ": the cell's output came as progress, and the "
          "cancelled call rejects", v)
    v = s.get("after_cancel", {})
    check((v.get("structured") or {}).get("result") == "(False, 42)",
          name + ": the cancelled cell stopped before its end, and the "
          "namespace stayed", v)
    v = s.get("after_stubborn", {})
    check(s.get("cancel_stubborn", {}).get("thrown") and
          (v.get("structured") or {}).get("result") == "42" and
          "cell" in ((v.get("structured") or {}).get("restored") or {}) and
          "the call you cancelled left the session changed" in
          v.get("text", ""),
          name + ": a cancelled cell that ignored the interrupt was killed; "
          "the next result carries 'restored' and says why", v)
    if version != "2026-07-28":
        check(any(m.get("level") == "warning" and "cancelled" in
                  (m.get("data") or {}).get("message", "")
                  for m in out.get("log", [])),
              name + ": and a warning notification said so at once",
              out.get("log"))
    v = s.get("figure", {})
    check(v.get("images") == [{"mimeType": "image/png",
                               "head": "89504e470d0a1a0a"}] and
          "/.coil/figures/" in v.get("text", ""),
          name + ": a figure is a PNG image, and its path is named", v)
    v = s.get("after_rollback", {})
    check((v.get("structured") or {}).get("result") == "42",
          name + ": rollback to a snapshot by name", v)
    v = s.get("crash", {})
    check(v.get("isError") and (v.get("structured") or {}).get("status") ==
          "crashed" and "worker died" in v.get("text", ""),
          name + ": a crash is isError and says so", v)
    v = s.get("after_crash", {})
    check((v.get("structured") or {}).get("result") == "42",
          name + ": after the crash the namespace is the checkpoint's", v)
    v = s.get("after_reset", {})
    check((v.get("structured") or {}).get("result") == "False",
          name + ": reset empties the namespace", v)
    v = s.get("surrogate", {})
    check((v.get("structured") or {}).get("result") == "(1, True)" and
          (v.get("structured") or {}).get("output") == "\\ud800\n",
          name + ": a lone surrogate JSON.stringify escaped is answered: "
          "in a string literal it is that character, printed escaped", v)
    v = s.get("rollback_digits", {})
    check(not v.get("isError") and (v.get("structured") or {}).get(
          "status") == "ok" and (v.get("structured") or {}).get("cell") == 0,
          name + ": rollback to \"0\" is to cell 0", v)
    check(out.get("stderr") == "" and out.get("close_error") is None,
          name + ": nothing on stderr, and the client closes cleanly",
          out)

    tdir = os.path.join(state, "coil", "transcripts")
    modes, cells = [], 0
    for f in sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []:
        with open(os.path.join(tdir, f)) as fh:
            lines = [json.loads(x) for x in fh if x.strip()]
        if lines:
            modes.append(lines[0].get("mode"))
            cells += sum(1 for x in lines if x.get("event") == "queued")
    check(modes == ["mcp"] and cells == 18,
          name + ": the session is recorded by default, as mode mcp, its "
          "18 calls that reached it (a probe of the server leaves none)",
          (modes, cells))


major = node_major()
if major is None:
    skip("the MCP SDK sessions", "no node on PATH (Node.js 20: ./setup.sh "
         "installs it)")
    done()
d, why = install()
if d is None:
    skip("the MCP SDK sessions", why)
    done()
for sdk, mode, version in RUNS:
    name = "%s %s" % (sdk, mode)
    if sdk == "v2" and major < 20:
        skip(name, "@modelcontextprotocol/client needs Node.js 20, this is "
             "%d" % major)
        continue
    w, state, out = session(d, sdk, mode)
    checks(name, version, w, state, out)
    cleanup(w)
    cleanup(state)
done()
