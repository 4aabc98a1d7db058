#!/usr/bin/python3
# coil --request-schema agrees with what coil --agent accepts: every op
# is there; each field's bounds hold to the edge (a value just inside is
# not refused for it, one just outside is, naming the field); a value of
# a type the schema does not list is refused; a required field left out
# is named; and a field the schema does not give an op is not checked
# for it.  The real binary on both sides.
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, check_exit, done  # noqa: E402

out = subprocess.run([COIL, "--request-schema"], capture_output=True,
                     timeout=30)
check(out.returncode == 0 and out.stderr == b"",
      "--request-schema exits 0, nothing on stderr", out)
schemas = json.loads(out.stdout)
TYPES = {"string", "integer", "number", "boolean", "null", "array"}


def types(p):
    t = p["type"]
    return set(t) if isinstance(t, list) else {t}


def edges(p):
    """(value, inside) pairs at the bounds of property p."""
    step = 1 if types(p) & {"number"} == set() else 0.5
    if "exclusiveMinimum" in p:
        m = p["exclusiveMinimum"]
        yield m + step, True
        yield m, False
    if "minimum" in p:
        yield p["minimum"], True
        yield p["minimum"] - step, False
    if "maximum" in p:
        yield p["maximum"], True
        yield p["maximum"] + step, False


def base(op, schema):
    """A request of op with a value for each field it needs."""
    req = {"op": op}
    for f in schema.get("required", []):
        p = schema["properties"][f]
        req[f] = "x" if "string" in types(p) else \
            p.get("minimum", p.get("exclusiveMinimum", 0))
    return req


def refused_for(r, field):
    """r is the parser's refusal of field (not the session's refusal of
    the request as a whole, such as a rollback to a cell not kept)."""
    return r.get("status") == "invalid" and \
        r["error"]["message"].startswith("'%s' must be" % field)


# Every bounded field of any op, with a value outside its bounds.
outside = {}
for s in schemas.values():
    for f, p in s["properties"].items():
        for v, inside in edges(p):
            if not inside:
                outside.setdefault(f, v)

with Coil("--sandbox", "none", "--checkpoints", "0") as c:
    r = c.call({"op": "no-such-op"})
    ops = r["error"]["message"].split("the ops are ")[-1].split(", ")
    check(list(schemas) == ops, "the schema has every op, in order", r)

    # shutdown ends the session: its requests go last.
    for op in sorted(schemas, key=lambda o: o == "shutdown"):
        s = schemas[op]
        check(s.get("type") == "object" and isinstance(s.get("description"),
              str) and set(s.get("required", [])) <= set(s["properties"]),
              "%s: an object schema" % op, s)
        for f, p in s["properties"].items():
            check(types(p) <= TYPES and p.get("description"),
                  "%s.%s: JSON types and a description" % (op, f), p)
            for v, inside in edges(p):
                r = c.call(dict(base(op, s), **{f: v}))
                if inside:
                    check(not refused_for(r, f), "%s: %s %r is accepted"
                          % (op, f, v), r)
                else:
                    check(refused_for(r, f), "%s: %s %r is refused"
                          % (op, f, v), r)
            r = c.call(dict(base(op, s), **{f: {"an": "object"}}))
            check(refused_for(r, f) and r["error"]["message"].endswith(
                  "not an object"), "%s: %s as an object is refused"
                  % (op, f), r)
        for f in s.get("required", []):
            req = base(op, s)
            del req[f]
            r = c.call(req)
            check(r.get("status") == "invalid" and r["error"]["message"] ==
                  "op '%s' needs '%s'" % (op, f),
                  "%s without %s is refused" % (op, f), r)
        # One request, as shutdown answers only one.
        others = {f: v for f, v in outside.items()
                  if f not in s["properties"]}
        if others:
            r = c.call(dict(base(op, s), **others))
            check(r.get("status") != "invalid" or not any(
                  refused_for(r, f) for f in others),
                  "%s does not check %s" % (op, ", ".join(others)), r)
    check_exit(c)
done()
