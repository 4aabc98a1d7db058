#!/usr/bin/python3
"""coil --mcp on the wire: JSON-RPC 2.0, one message a line.

- The handshake, its revisions and the errors JSON-RPC names, the tool
  list, 2026-07-28's results, the calls refused, timed out or reading
  input, a long method name, --max-request and --timeout 0 are data:
  tests/mcp/messages.test, tools.test and limits.test.  Here: the tool
  list is share/mcp-tools.json; coil --mcp is silent on stderr.
- Calls: a queued or running call that is cancelled is never answered
  and the session goes on; a progressToken gets the output as it comes;
  an id already in flight is refused; a figure over the size limit is a
  path, not an image.
- --listen serves the same session to an attached client, which sees
  the MCP calls as agent cells; the session is recorded by default (mode
  "mcp") and its transcript replays with --check.
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "hub"))
from coiltest import COIL, check, cleanup, done, wait_for, workdir  # noqa
from hublib import Attached, listen_path  # noqa: E402
from mcplib import Mcp, text  # noqa: E402


def err(r):
    return (r.get("error") or {}).get("code")


d = workdir()
fig = os.path.join(d, ".coil", "figures")

with Mcp("--workdir", d, "--no-record") as m:
    # The handshake's cases are in messages.test; this session needs one.
    m.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}})
    m.note("notifications/initialized")
    r = m.rpc("tools/list")
    tools = (r.get("result") or {}).get("tools", [])
    share = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "..", "share", "mcp-tools.json")
    with open(share) as f:
        check(json.load(f) == tools, "share/mcp-tools.json is what "
              "tools/list answers")
    # Cancelled: queued and running calls are never answered.
    m.send_raw(json.dumps({"jsonrpc": "2.0", "id": "slow", "method":
                           "tools/call", "params": {
                               "name": "run_python", "arguments": {
                                   "code": "import time\nprint('go', "
                                   "flush=True)\ntime.sleep(60)\nlate = 1"},
                               "_meta": {"progressToken": "p1"}}}).encode()
               + b"\n")
    m.send_raw(json.dumps({"jsonrpc": "2.0", "id": "queued", "method":
                           "tools/call", "params": {
                               "name": "run_python", "arguments": {
                                   "code": "queued_ran = 1"}}}).encode()
               + b"\n")
    r = m.line()
    check(r.get("method") == "notifications/progress" and
          r["params"].get("progressToken") == "p1" and
          r["params"].get("message") == "go\n" and
          r["params"].get("progress") == 3,
          "a progressToken gets the output as it comes", r)
    m.note("notifications/cancelled", {"requestId": "queued"})
    m.note("notifications/cancelled", {"requestId": "slow",
                                       "reason": "enough"})
    m.note("notifications/cancelled", {"requestId": "never-sent"})
    r = m.tool("run_python", {"code": "[n in dir() for n in "
                              "('late', 'queued_ran')]"}, rid="next")
    check(text(r) == "Out[%d]: [False, False]\n" %
          r["result"]["structuredContent"]["cell"],
          "the running cell stopped and the queued one never ran", r)
    check(not any(e.get("id") in ("slow", "queued") for e in m.events),
          "neither cancelled call was answered", m.events)

    # An id already in flight is refused; the first call is answered.
    m.send_raw(json.dumps({"jsonrpc": "2.0", "id": "twice", "method":
                           "tools/call", "params": {
                               "name": "run_python", "arguments": {
                                   "code": "import time\ntime.sleep(0.5)"
                                   "\n'first'"}}}).encode() + b"\n")
    r = m.tool("run_python", {"code": "'second'"}, rid="twice")
    check(err(r) == -32600, "a call reusing a running call's id: -32600",
          r)
    r = m.response("twice")
    check(text(r).endswith("'first'\n"), "the running one is answered", r)

    # Figures: each named, at most 16 PNGs and 8 MiB of them as images.
    r = m.tool("run_python", {"code": (
        "import os, sys\nos.makedirs(%r, exist_ok=True)\n"
        "for i in range(20):\n"
        "    p = '%s/f%%d.png' %% i\n"
        "    open(p, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(100000))\n"
        "    for k in range(3):\n"
        "        sys.modules['_coil']._shown.append({'type': 'image/png', "
        "'path': p})") % (fig, fig)})
    content = r["result"]["content"]
    check(sum(1 for c in content if c["type"] == "image") == 16 and
          text(r).count("[image/png: ") == 20,
          "20 figures named three times each: each named once, 16 sent", r)
    r = m.tool("run_python", {"code": (
        "import os, sys\n"
        "for i in range(12):\n"
        "    p = '%s/g%%d.png' %% i\n"
        "    open(p, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(900000))\n"
        "    sys.modules['_coil']._shown.append({'type': 'image/png', "
        "'path': p})") % fig})
    n = sum(1 for c in r["result"]["content"] if c["type"] == "image")
    check(n == 9, "images stop at 8 MiB in all (nine of 900 kB)", n)

    # A figure over the image limit is named, not sent.
    r = m.tool("run_python", {"code": (
        "import os, sys\nos.makedirs(%r, exist_ok=True)\n"
        "open(%r, 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(1600000))\n"
        "sys.modules['_coil']._shown.append({'type': 'image/png', "
        "'path': %r})") % (fig, fig + "/big.png", fig + "/big.png")})
    content = r["result"]["content"]
    check([c["type"] for c in content] == ["text"] and
          fig + "/big.png" in text(r),
          "a figure over 1 MiB is its path, not an image", r)
    check(m.close() == 0 and m.stderr_text() == "",
          "coil --mcp exits 0 at end of input, silent on stderr",
          m.stderr_text())

# An attached client sees the MCP calls; a default transcript replays.
state = os.path.join(d, "state")
env = dict(os.environ, XDG_STATE_HOME=state)
path = listen_path(d)
with Mcp("--workdir", d, "--listen", path, env=env) as m:
    wait_for(lambda: os.path.exists(path), timeout=30)
    a = Attached(path)
    a.call({"id": "hello", "op": "ping"})
    r = m.tool("run_python", {"code": "shared = 'from mcp'\nshared"})
    check(text(r) == "Out[1]: 'from mcp'\n", "the MCP call runs", r)
    seen = wait_for(lambda: any(
        e.get("event") == "queued" and
        (e.get("request") or {}).get("code", "").startswith("shared")
        for e in a.events), timeout=30)
    check(seen, "the attached client sees it queued, as an agent cell",
          a.events)
    r = a.call({"id": 2, "code": "shared.upper()"})
    check(r.get("result") == "'FROM MCP'",
          "and runs its own cell in the same namespace", r)
    r = m.tool("run_python", {"code": "1/0"})
    check(r["result"]["isError"] is True, "an error result", r)
    a.close()
    check(m.close() == 0, "coil --mcp --listen exits 0", m.stderr_text())

tdir = os.path.join(state, "coil", "transcripts")
files = sorted(os.listdir(tdir)) if os.path.isdir(tdir) else []
check(len(files) == 1, "one default transcript", files)
if files:
    t = os.path.join(tdir, files[0])
    with open(t) as f:
        head = json.loads(f.readline())
    check(head.get("mode") == "mcp", "its header says mode mcp", head)
    r = subprocess.run([COIL, "--replay", t, "--check", "--workdir", d],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "coil --replay --check runs it again, the "
          "same", r.stdout[-3000:] + r.stderr[-2000:])

with Mcp("--workdir", d, "--no-record", "--preload", "no_such_module_x") as m:
    r = m.tool("run_python", {"code": "1"}, rid="owed")
    check(err(r) == -32603 and "no_such_module_x" in r["error"]["message"],
          "a session that cannot start answers the call owed -32603, "
          "saying why", r)
    check(m.close() == 1, "and coil exits 1", m.stderr_text())

for args, what in ((["--mcp", "--brief"], "--brief"),
                   (["--mcp", "--replay", "x.ipynb"], "--replay")):
    r = subprocess.run([COIL, *args], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    check(r.returncode == 2 and r.stderr.startswith("coil: "),
          "--mcp with %s is a usage error" % what, r.stderr)
cleanup(d)
done()
