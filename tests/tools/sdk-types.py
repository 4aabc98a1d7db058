#!/usr/bin/python3
"""share/'s tool definitions against the official SDKs' own types,
with TypeScript's tsc --noEmit --strict: tools-openai.json as openai's
ChatCompletionTool[], tools-anthropic.json as @anthropic-ai/sdk's
Messages Tool[], mcp-tools.json as @modelcontextprotocol/sdk's Tool[]
(so a shape an API rejects fails here; tests/mcp/share.py checks the
files are what coil prints).

A JSON module import would widen "function" and "object" to string and
check nothing, so each file's text goes into a .ts module as an object
literal of the SDK's type, where every literal is checked against the
type and unknown keys are errors.  Copies broken on purpose (openai's
parameters as a string, an anthropic tool without its name, an MCP
outputSchema of type "array") must fail in the same run, each for its
own reason: the check bites.

The SDKs are installed with npm ci from tests/tools/package-lock.json
into the build tree (tests/tools-node), once; without node or npm the
test skips, saying so.
"""
import json
import os
import re
import shutil
import subprocess
import sys
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "mcp"))
from coiltest import check, done, skip_all  # noqa: E402
from mcplib import install, node_major  # noqa: E402

SHARE = os.path.join(HERE, "..", "..", "share")
HEAD = ('import type OpenAI from "openai";\n'
        'import type Anthropic from "@anthropic-ai/sdk";\n'
        'import type { Tool } from "@modelcontextprotocol/sdk/types.js";\n')
TYPES = {"openai": "OpenAI.Chat.Completions.ChatCompletionTool[]",
         "anthropic": "Anthropic.Messages.Tool[]", "mcp": "Tool[]"}
FILES = {"openai": "tools-openai.json", "anthropic": "tools-anthropic.json",
         "mcp": "mcp-tools.json"}


def module(api, text):
    return "%sexport const tools: %s = %s;\n" % (HEAD, TYPES[api], text)


def broken(api, tools):
    """A copy of the definitions an API must refuse, and the words of
    tsc's error about it."""
    if api == "openai":
        f = tools[0]["function"]
        f["parameters"] = json.dumps(f["parameters"])
        return tools, "Type 'string' is not assignable to type " \
            "'FunctionParameters'"
    if api == "anthropic":
        del tools[1]["name"]
        return tools, "Property 'name' is missing"
    tools[2]["outputSchema"]["type"] = "array"
    return tools, "Type '\"array\"' is not assignable to type '\"object\"'"


if node_major() is None or shutil.which("npm") is None:
    skip_all("no node or npm on PATH (Node.js 20 and npm: ./setup.sh "
             "installs them)")
d, why = install(HERE, "tools-node")
if d is None:
    skip_all(why)
tsc = os.path.join(d, "node_modules", ".bin", "tsc")
run = os.path.join(d, "run.%d" % os.getpid())
os.makedirs(run, exist_ok=True)
try:
    files, want = [], {}
    for api, name in FILES.items():
        with open(os.path.join(SHARE, name)) as f:
            text = f.read()
        with open(os.path.join(run, api + ".ts"), "w") as f:
            f.write(module(api, text))
        tools, words = broken(api, json.loads(text))
        with open(os.path.join(run, api + "-broken.ts"), "w") as f:
            f.write(module(api, json.dumps(tools, indent=2)))
        files += [api + ".ts", api + "-broken.ts"]
        want[api + "-broken.ts"] = words
    with open(os.path.join(run, "tsconfig.json"), "w") as f:
        json.dump({"compilerOptions": {
            "strict": True, "noEmit": True, "module": "nodenext",
            "moduleResolution": "nodenext", "target": "es2022",
            "skipLibCheck": True, "types": []}, "files": files}, f)
    r = subprocess.run([tsc, "-p", "tsconfig.json", "--pretty", "false"],
                       cwd=run, capture_output=True, text=True, timeout=600)
    errors = {}
    for line in r.stdout.splitlines():
        m = re.match(r"([\w.-]+\.ts)\(\d+,\d+\): error TS\d+: (.*)", line)
        if m:
            errors.setdefault(m.group(1), []).append(m.group(2))
    check(set(errors) <= set(want) and r.stderr == "",
          "tsc reads the SDKs' types, and errs only in the broken copies",
          r.stdout[-3000:] + r.stderr[-2000:])
    for api in FILES:
        check(api + ".ts" not in errors, "share/%s is %s under tsc "
              "--strict" % (FILES[api], TYPES[api]),
              errors.get(api + ".ts", [])[:5])
        b = api + "-broken.ts"
        check(any(want[b] in e for e in errors.get(b, [])),
              "a broken copy of %s fails tsc: %s" % (FILES[api], want[b]),
              errors.get(b, [])[:5])
finally:
    shutil.rmtree(run, ignore_errors=True)
done()
