#!/usr/bin/python3
"""The tool definitions and the system text, from one source.

- share/'s generated files are byte for byte what coil prints with no
  other option: --tool-schema mcp, openai and anthropic, --system-prompt
  (make share-update writes them again).
- coil --tool-schema mcp is tools/list's tools, and coil --system-prompt
  is initialize's instructions and a newline, with the same options:
  --allow-net, --timeout, --max-output and --memory shape both alike.
- openai's and anthropic's definitions are MCP's tools reshaped: each
  API's shape, the same names, descriptions and input schemas, within
  the APIs' limits on names and descriptions.
- every tool has an outputSchema, a draft 2020-12 object schema; a
  client that agreed on a revision before 2025-06-18 gets none.
- --request-schema names its draft in each op's schema.
- an unknown API, or both options at once, is a usage error.
"""
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, cleanup, done, workdir  # noqa: E402
from mcplib import Mcp  # noqa: E402

SHARE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                     "share")
DRAFT = "https://json-schema.org/draft/2020-12/schema"


def coil(*args):
    """coil's exit status, stdout (bytes) and stderr (text)."""
    r = subprocess.run([COIL, *args], capture_output=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace")


def printed(*args):
    rc, out, err = coil(*args)
    check(rc == 0 and err == "", "coil %s exits 0, silent on stderr"
          % " ".join(args), err)
    return out


for args, name in ((["--tool-schema", "mcp"], "mcp-tools.json"),
                   (["--tool-schema", "openai"], "tools-openai.json"),
                   (["--tool-schema", "anthropic"], "tools-anthropic.json"),
                   (["--system-prompt"], "system-prompt.txt")):
    with open(os.path.join(SHARE, name), "rb") as f:
        check(f.read() == printed(*args), "share/%s is what coil %s "
              "prints (make share-update)" % (name, " ".join(args)))

mcp = json.loads(printed("--tool-schema", "mcp"))
openai = json.loads(printed("--tool-schema", "openai"))
anthropic = json.loads(printed("--tool-schema", "anthropic"))
check([t["name"] for t in mcp] == [t["function"]["name"] for t in openai]
      == [t["name"] for t in anthropic] and len(mcp) == 11,
      "the same eleven tools, in the same order, for each API",
      [t["name"] for t in mcp])
check(all(o == {"type": "function", "function": {
    "name": m["name"], "description": m["description"],
    "parameters": m["inputSchema"]}} for m, o in zip(mcp, openai)),
    "openai's: {type: function, function: {name, description, "
    "parameters}}, parameters MCP's inputSchema")
check(all(a == {"name": m["name"], "description": m["description"],
                "input_schema": m["inputSchema"]}
          for m, a in zip(mcp, anthropic)),
      "anthropic's: {name, description, input_schema}, MCP's inputSchema")
# What the types cannot say: both APIs take names of 1 to 64 letters,
# digits, _ and -, and OpenAI's function descriptions are at most 1024
# characters long.
check(all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", t["name"]) and
          len(t["description"]) <= 1024 for t in mcp),
      "names and descriptions within the APIs' limits",
      [(t["name"], len(t["description"])) for t in mcp])
check(all(isinstance(t.get("outputSchema"), dict) and
          t["outputSchema"].get("type") == "object" and
          t["outputSchema"].get("required") == ["status"] and
          "$schema" not in t["outputSchema"] for t in mcp),
      "every tool has an outputSchema: an object, status required, "
      "embedded (no $schema)")

d = workdir()
HELLO = {"capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
for opts in ([], ["--allow-net", "--timeout", "0", "--max-output", "1000",
                  "--memory", "300M"]):
    with Mcp("--workdir", d, "--no-record", *opts) as m:
        r = m.rpc("initialize", dict(HELLO, protocolVersion="2025-11-25"))
        instr = (r.get("result") or {}).get("instructions", "")
        m.note("notifications/initialized")
        tools = (m.rpc("tools/list").get("result") or {}).get("tools")
        check(m.close() == 0, "coil --mcp %s exits 0" % " ".join(opts),
              m.stderr_text())
    what = " ".join(opts) or "no option"
    check(json.loads(printed("--tool-schema", "mcp", *opts)) == tools,
          "with %s, --tool-schema mcp is tools/list's tools" % what)
    check(printed("--system-prompt", *opts) == (instr + "\n").encode(),
          "with %s, --system-prompt is initialize's instructions" % what,
          instr)
    net = [t["annotations"]["openWorldHint"] for t in tools]
    check(net == [bool(opts)] + [False] * 10, "with %s, only run_python "
          "may reach the world, and only with --allow-net" % what, net)
    if opts:
        check("no time limit" in instr and "1000 bytes" in instr and
              "300 MiB" in instr and "may use the network" in instr,
              "the system text says the limits the options set", instr)
    else:
        check("after 30 s" in instr and "65536 bytes" in instr and
              "4 GiB" in instr and "cannot reach the network" in instr,
              "the system text says the default limits", instr)
text = printed("--system-prompt").decode()
check(all(t["name"] in text for t in mcp) and '"restored"' in text and
      '"lost"' in text and '"redone"' in text,
      "the system text names each tool and says how to read restored",
      text)

# A revision before 2025-06-18 has no outputSchema (nor does its Tool).
with Mcp("--workdir", d, "--no-record") as m:
    m.rpc("initialize", dict(HELLO, protocolVersion="2025-03-26"))
    m.note("notifications/initialized")
    old = (m.rpc("tools/list").get("result") or {}).get("tools") or []
    check(len(old) == 11 and not any("outputSchema" in t for t in old) and
          [dict(t, outputSchema=n["outputSchema"]) for t, n in
           zip(old, mcp)] == mcp, "2025-03-26: the same tools without "
          "outputSchema", old[:1])
    check(m.close() == 0, "and coil exits 0", m.stderr_text())

schemas = json.loads(printed("--request-schema"))
check(all(list(s)[0] == "$schema" and s["$schema"] == DRAFT
          for s in schemas.values()),
      "--request-schema: each op's schema names draft 2020-12 first")

for args, want in ((["--tool-schema", "gemini"], "unknown API 'gemini' for "
                    "--tool-schema (openai, anthropic or mcp)"),
                   (["--tool-schema"], "needs an argument"),
                   (["--tool-schema", "mcp", "--system-prompt"],
                    "give one")):
    rc, out, err = coil(*args)
    check(rc == 2 and out == b"" and err.startswith("coil: ") and
          want in err, "coil %s: a usage error, nothing on stdout"
          % " ".join(args), err)
cleanup(d)
done()
