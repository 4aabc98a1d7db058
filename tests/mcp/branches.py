#!/usr/bin/python3
"""A best-of-n over one MCP connection, under the official MCP SDK
clients (@modelcontextprotocol/sdk v1 and @modelcontextprotocol/client
v2, the handshake): tests/mcp/branches.mjs.

From one state (x = 0) the fork tool makes three branches; each sets x
differently through the session argument of run_python and reads it
back, and main keeps its own.  Results of a branch say which session
answered, in the text and in structuredContent.  A snapshot, a rollback
and a crash in one branch touch no other.  list_sessions lists them.
adopt_session keeps b2: calls without a session then go to it.  Refused,
with a result the model can read and nothing changed: an unknown
session, a session that is no string, a taken name, a fork past
--max-sessions, a closed session, closing the last one.
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, skip, workdir  # noqa: E402
from mcplib import install, node_major  # noqa: E402

MAX = 5         # main and three branches, and room for one more
OTHERS = ["run_python", "list_variables", "inspect", "snapshot",
          "list_snapshots", "rollback", "reset"]


def run(d, sdk):
    w = workdir()
    state = workdir("coil-state-")     # beside the work dir: stderr quiet
    env = dict(os.environ, XDG_STATE_HOME=state)
    r = subprocess.run(["node", os.path.join(d, "branches.mjs"), sdk, COIL,
                        w, "--max-sessions", str(MAX)],
                       capture_output=True, text=True, env=env, timeout=600)
    try:
        out = json.loads(r.stdout)
    except ValueError:
        out = {"error": "no JSON from branches.mjs: %r %r"
               % (r.stdout[-2000:], r.stderr[-2000:])}
    return w, state, out


def sc(v):
    return v.get("structured") or {}


def names_of(v):
    return [e.get("name") for e in sc(v).get("sessions") or []]


def entry(v, name):
    for e in sc(v).get("sessions") or []:
        if e.get("name") == name:
            return e
    return {}


def checks(name, out):
    s = out.get("steps", {})
    if not check(out.get("error") is None, name + ": the session runs "
                 "through", out.get("error")):
        return
    tools = out.get("tools", {})
    check({"fork", "list_sessions", "close_session",
           "adopt_session"} <= set(tools),
          name + ": tools/list has fork, list_sessions, close_session and "
          "adopt_session", sorted(tools))
    check(all("session" in tools.get(t, {}).get("properties", [])
              for t in OTHERS),
          name + ": every other tool takes a session argument",
          {t: tools.get(t) for t in OTHERS})
    check(all(tools.get(t, {}).get("required") == ["session"]
              for t in ("close_session", "adopt_session")) and
          {"n", "name", "from", "session"} <=
          set(tools.get("fork", {}).get("properties", [])),
          name + ": close and adopt need session; fork takes n, name, "
          "from and session", tools)

    f = s.get("fork", {})
    b = sc(f).get("sessions") or []
    check(not f.get("isError") and b == ["b1", "b2", "b3"] and
          sc(f).get("parent") == "main" and
          "forked from main" in f.get("text", ""),
          name + ": fork n=3 makes b1, b2, b3 from main, and says so", f)
    if len(b) != 3:
        return
    for i, br in enumerate(b):
        v = s.get("read_" + br, {})
        check(sc(v).get("result") == "(%d, 'shared')" % ((i + 1) * 10) and
              sc(v).get("session") == br and
              v.get("text", "").startswith("[session %s]\n" % br),
              name + ": %s kept its own x and the state it forked from; "
              "the result names the session" % br, v)
    v = s.get("read_main", {})
    check(sc(v).get("result") == "(0, 'shared')" and
          sc(v).get("session") in (None, "main") and
          not v.get("text", "").startswith("[session"),
          name + ": main's x is untouched, its result as before", v)
    v = s.get("vars_b2", {})
    check("x: int = 20" in v.get("text", ""),
          name + ": list_variables in b2 sees b2's x", v)
    v = s.get("after_rollback_b3", {})
    check(not s.get("rollback_b3", {}).get("isError") and
          sc(v).get("result") == "30",
          name + ": a snapshot and rollback in b3", (s.get("rollback_b3"),
                                                    v))
    v = s.get("rollback_main", {})
    check(v.get("isError") and "mine" in v.get("text", ""),
          name + ": b3's snapshot is b3's: main has none of that name", v)
    v = s.get("crash_b3", {})
    check(sc(v).get("status") == "crashed" and sc(v).get("session") == "b3"
          and sc(s.get("after_crash_b3", {})).get("status") == "ok",
          name + ": a crash in b3 is b3's, and b3 goes on", (
              v, s.get("after_crash_b3")))
    v = s.get("after_crash_b1", {})
    check(sc(v).get("result") == "10",
          name + ": b1 is untouched by b3's rollback and crash", v)

    v = s.get("list", {})
    main = entry(v, "main")
    b1 = entry(v, "b1")
    check(names_of(v) == ["main", "b1", "b2", "b3"] and
          main.get("default") is True and b1.get("default") is False and
          b1.get("parent") == "main" and
          b1.get("from_cell") == sc(f).get("cell") and
          "b1" in v.get("text", ""),
          name + ": list_sessions lists main (the default) and the "
          "branches with their parent and fork point", v)

    v = s.get("unknown", {})
    check(v.get("isError") and "no session 'nope'" in v.get("text", "") and
          "b2" in v.get("text", ""),
          name + ": an unknown session is refused, naming the sessions", v)
    v = s.get("bad_type", {})
    check(v.get("isError") and "'session'" in v.get("text", ""),
          name + ": a session that is no string is refused, naming it", v)
    v = s.get("taken", {})
    check(v.get("isError") and sc(v).get("status") == "invalid",
          name + ": a fork to a taken name is refused", v)
    v = s.get("past_max", {})
    check(v.get("isError") and sc(v).get("status") == "invalid" and
          names_of(s.get("list_after_refusals", {})) ==
          ["main", "b1", "b2", "b3"],
          name + ": a fork past --max-sessions is refused, nothing made",
          (v, s.get("list_after_refusals")))

    v = s.get("adopt", {})
    check(not v.get("isError") and sc(v).get("session") == "b2" and
          sc(v).get("was") == "main",
          name + ": adopt_session b2 says what it replaced", v)
    v = s.get("after_adopt", {})
    check(sc(v).get("result") == "20" and sc(v).get("session") == "b2" and
          v.get("text", "").startswith("[session b2]\n"),
          name + ": a call without session now goes to b2", v)
    v = s.get("list_adopted", {})
    check(entry(v, "b2").get("default") is True and
          entry(v, "main").get("default") is False,
          name + ": list_sessions says b2 is the default now", v)
    v = s.get("close_b1", {})
    check(not v.get("isError") and sc(v).get("closed") == "b1" and
          s.get("closed_b1", {}).get("isError") and
          "no session 'b1'" in s.get("closed_b1", {}).get("text", ""),
          name + ": close_session b1; a call to it is then refused",
          (v, s.get("closed_b1")))
    check(not s.get("close_b3", {}).get("isError") and
          not s.get("close_main", {}).get("isError"),
          name + ": b3 and main close", (s.get("close_b3"),
                                         s.get("close_main")))
    v = s.get("close_last", {})
    check(v.get("isError") and sc(s.get("last_lives", {})).get("result") ==
          "20" and names_of(s.get("list_end", {})) == ["b2"],
          name + ": the last session cannot be closed, and goes on",
          (v, s.get("last_lives"), s.get("list_end")))
    check(out.get("stderr") == "" and out.get("close_error") is None,
          name + ": nothing on stderr, and the client closes cleanly", out)


major = node_major()
if major is None:
    skip("the MCP SDK branches", "no node on PATH (Node.js 20: ./setup.sh "
         "installs it)")
    done()
d, why = install()
if d is None:
    skip("the MCP SDK branches", why)
    done()
for sdk in ("v1", "v2"):
    if sdk == "v2" and major < 20:
        skip(sdk, "@modelcontextprotocol/client needs Node.js 20, this is "
             "%d" % major)
        continue
    w, state, out = run(d, sdk)
    checks(sdk, out)
    cleanup(w)
    cleanup(state)
done()
