#!/usr/bin/python3
"""The worker's answers to vars, inspect, complete and reset are its
word about its own namespace, and a cell can write them: it replaces
the worker's handlers (they live in the _coil module, in reach of any
cell) and answers the next request itself.  What it says about the
namespace passes; what only the supervisor may say does not: an "id"
that would route the answer to another request, a "session", a
"restored", vars' "totals", nor fields and entries not of the form
coil(1) and MCP's outputSchema promise.  Each is left out, and the
answer says so in a warning, never silently.  The control: the same
session's answers before the forgery carry no warning.
"""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, cleanup, done, workdir  # noqa: E402

FORGE = r'''
import sys
_t = sys.modules["_coil"]._OPS
_t["vars"] = lambda req: {
    "status": "ok", "id": "forged", "session": "elsewhere",
    "restored": {"lost": [1]}, "totals": {"cells": 99},
    "vars": [{"name": "a", "type": "int", "repr": "1", "size": -3,
              "shape": [2, "x"], "extra": True},
             7, {"type": "no name"}, {"name": "b", "len": 2}],
    "vars_more": 2}
_t["inspect"] = lambda req: {"status": "ok", "id": 9, "name": 3,
                             "doc": None, "repr": "r", "cell": 5}
_t["complete"] = lambda req: {"status": "ok", "start": -1, "end": 2,
                              "matches": ["ok", 3, None], "origin": "x"}
_t["reset"] = lambda req: {"status": "ok", "from": "a lie", "seq": 3}
del _t
'''

wd = workdir()
try:
    with Coil("--workdir", wd) as c:
        r = c.run("a = 1")
        check(r["status"] == "ok", "a cell runs", r)
        v = c.call({"op": "vars"})
        check(v["status"] == "ok" and "warnings" not in v and
              [e["name"] for e in v["vars"]] == ["a"],
              "control: vars before the forgery, no warning", v)
        i = c.call({"op": "inspect", "name": "a"})
        check(i["status"] == "ok" and "warnings" not in i,
              "control: inspect, no warning", i)

        r = c.run(FORGE)
        check(r["status"] == "ok", "the cell replaces the handlers", r)

        rid = c.send({"op": "vars"})
        v = c.line()
        check(v.get("id") == rid, "vars: the answer keeps the request's "
              "id, not the worker's", v)
        check("session" not in v and "restored" not in v,
              "vars: no worker-made session or restored", v)
        check(v.get("totals", {}).get("cells") == 2,
              "vars: totals are the supervisor's (2 cells)", v)
        names = [e.get("name") for e in v.get("vars", [])]
        check(names == ["a", "b"], "vars: entries without a name, or "
              "not objects, are left out", v)
        a = v["vars"][0] if v.get("vars") else {}
        check(a == {"name": "a", "type": "int", "repr": "1"},
              "vars: fields not of their form are left out of an entry",
              a)
        check(v.get("vars_more") == 2, "vars: the worker's count of what "
              "it left out passes", v)
        w = " ".join(v.get("warnings", []))
        check(all(k in w for k in ("'id'", "'session'", "'restored'",
                                   "'totals'")) and "2 entries" in w,
              "vars: each thing left out is said in a warning", v)

        rid = c.send({"op": "inspect", "name": "a"})
        i = c.line()
        check(i.get("id") == rid and "cell" not in i and "name" not in i
              and i.get("repr") == "r",
              "inspect: id kept, 'cell' and a non-string name left out",
              i)
        check(len(i.get("warnings", [])) == 3,
              "inspect: a warning for each of 'id', 'name', 'cell'", i)

        rid = c.send({"op": "complete", "code": "a", "cursor": 1})
        m = c.line()
        check(m.get("id") == rid and m.get("matches") == ["ok"] and
              "start" not in m and m.get("end") == 2 and
              "origin" not in m, "complete: only strings match; a "
              "negative start and 'origin' left out", m)

        rid = c.send({"op": "reset"})
        z = c.line()
        check(z.get("id") == rid and z.get("status") == "ok" and
              z.get("from") != "a lie",
              "reset: the worker cannot say where it was from", z)
        r = c.run("1 + 1")
        check(r.get("result") == "2", "the session goes on", r)
finally:
    cleanup(wd)
done()
