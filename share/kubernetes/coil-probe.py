#!/usr/bin/python3
"""coil-probe.py - a Kubernetes probe for `coil --mcp --http`: MCP's ping.

    python3 coil-probe.py [--port 8080] [--host 127.0.0.1] [--timeout 2]

POSTs the JSON-RPC request {"method": "ping"} to http://HOST:PORT/mcp in
MCP's stateless form (MCP-Protocol-Version: 2026-07-28), which needs no
MCP session: a probe makes none and uses up none of the sessions coil
keeps.  The bearer token comes from COIL_HTTP_TOKEN (the container's
environment, which an exec probe shares) or from --token-file FILE.
coil's supervisor answers ping from the loop that serves every request,
also while a cell runs, so an answer says the session is served.

Exit 0 when coil answered the ping; 1, saying why on stderr, when it did
not (no answer within the timeout, refused, a wrong token, not MCP).
Python's standard library only: the image needs python3-minimal and
coil's libpython3.11-stdlib, nothing else.
"""
import argparse
import http.client
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description="ping coil's MCP over HTTP")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--token-file", help="the bearer token (else "
                    "COIL_HTTP_TOKEN)")
    a = ap.parse_args()
    token = os.environ.get("COIL_HTTP_TOKEN")
    if a.token_file is not None:
        with open(a.token_file) as f:
            token = f.read().strip()
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28"}
    if token:
        headers["Authorization"] = "Bearer " + token
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    try:
        c = http.client.HTTPConnection(a.host, a.port, timeout=a.timeout)
        c.request("POST", "/mcp", body=body, headers=headers)
        r = c.getresponse()
        data = r.read(65536)
        c.close()
    except (OSError, http.client.HTTPException) as e:
        sys.exit("coil-probe: no answer from http://%s:%d/mcp: %s"
                 % (a.host, a.port, e))
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None
    if r.status != 200 or not isinstance(answer, dict) or \
            answer.get("id") != 1 or "result" not in answer:
        sys.exit("coil-probe: http://%s:%d/mcp answered %d: %s"
                 % (a.host, a.port, r.status,
                    data[:200].decode(errors="replace").strip()))


if __name__ == "__main__":
    main()
