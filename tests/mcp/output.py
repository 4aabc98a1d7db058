#!/usr/bin/python3
"""Each tool's outputSchema describes the structuredContent its results
carry, checked with a JSON Schema validator (Debian's python3-jsonschema,
draft 2020-12) on real answers of every tool: values, exceptions, syntax
errors, incomplete code, timeouts, a cell killed after its timeout, a
crash whose restore ran cells again and lost others, an atomic cell
undone, effects, a figure, cut output, unknown and refused arguments,
snapshots, rollbacks, a reset, branches and their sessions.

Valid is not enough: every member an answer carries, at any depth the
schema describes, is one the schema names, so that a member added to an
answer without its schema fails here.
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, check, check_exit, cleanup, done,  # noqa: E402
                      skip_all, workdir)
from mcplib import Mcp  # noqa: E402

try:
    from jsonschema import Draft202012Validator
except ImportError:
    skip_all("python3-jsonschema is not installed (setup.sh installs it)")

SCHEMAS = {t["name"]: t["outputSchema"] for t in json.loads(subprocess.run(
    [COIL, "--tool-schema", "mcp"], capture_output=True, check=True,
    timeout=60).stdout)}
for name, s in SCHEMAS.items():
    try:
        Draft202012Validator.check_schema(s)
        ok, why = True, None
    except Exception as e:        # SchemaError, with the reason
        ok, why = False, str(e)
    check(ok, "%s: its outputSchema is a valid draft 2020-12 schema" % name,
          why)
VALID = {n: Draft202012Validator(s) for n, s in SCHEMAS.items()}


def undescribed(v, s, at="$"):
    """The paths of v's members that schema s does not name, where s
    names members (properties) or says what every member is."""
    out = []
    if isinstance(v, dict) and ("properties" in s or
                                "additionalProperties" in s):
        for k, x in v.items():
            sub = s.get("properties", {}).get(k)
            if sub is None and isinstance(s.get("additionalProperties"),
                                          dict):
                sub = s["additionalProperties"]
            if sub is None:
                out.append("%s.%s" % (at, k))
            else:
                out += undescribed(x, sub, "%s.%s" % (at, k))
    elif isinstance(v, list) and isinstance(s.get("items"), dict):
        for i, x in enumerate(v):
            out += undescribed(x, s["items"], "%s[%d]" % (at, i))
    return out


seen = {"status": set(), "tools": set(), "members": set()}


def answer(m, tool, args=None, session=None):
    """Call tool, check its structuredContent against its outputSchema;
    the structuredContent."""
    if session is not None:
        args = dict(args or {}, session=session)
    r = m.tool(tool, args)
    return judge(tool, args, r)


def judge(tool, args, r):
    sc = (r.get("result") or {}).get("structuredContent")
    what = "%s %s" % (tool, json.dumps(args)[:80])
    if not check(isinstance(sc, dict), what + ": a result with "
                 "structuredContent", r):
        return {}
    errors = ["%s: %s" % ("/".join(map(str, e.absolute_path)), e.message)
              for e in VALID[tool].iter_errors(sc)]
    check(errors == [], what + ": valid against its outputSchema",
          errors[:5] + [json.dumps(sc)[:1500]])
    extra = undescribed(sc, SCHEMAS[tool])
    check(extra == [], what + ": every member named by the schema",
          extra + [json.dumps(sc)[:1500]])
    seen["status"].add(sc.get("status"))
    seen["tools"].add(tool)
    seen["members"] |= set(sc)
    return sc


STUBBORN = ("import signal, time\nsignal.signal(signal.SIGINT, "
            "signal.SIG_IGN)\ntime.sleep(60)")
CRASH = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
PLOT = ("import matplotlib\nmatplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")

d = workdir()
with Mcp("--workdir", d, "--no-record", "--grace", "0.5") as m:
    m.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}})
    m.note("notifications/initialized")
    run = "run_python"
    answer(m, run, {"code": "x = 1"})
    answer(m, run, {"code": "print('hi')\nimport sys\n"
                    "print('err', file=sys.stderr)\n6 * 7"})
    answer(m, run, {"code": "1 / 0"})
    answer(m, run, {"code": "import no_such_module_qq"})
    answer(m, run, {"code": "{'a': 1}['b']"})
    answer(m, run, {"code": "def f(:\n    pass"})
    answer(m, run, {"code": "for i in range(3):"})
    answer(m, run, {"code": "input()"})
    answer(m, run, {"code": "print('x' * 5000)\n'y' * 5000",
                    "max_output": 300})
    answer(m, run, {"code": "open('made.txt', 'w').write('x')\n"
                    "import os, subprocess\nos.rename('made.txt', "
                    "'kept.txt')\nsubprocess.run(['true'])\n"
                    "os.remove('kept.txt')"})
    answer(m, run, {"code": PLOT})
    # an object whose nbytes and shape are not an array's: the answer
    # keeps to its schema (size a count, shape counts)
    answer(m, run, {"code": "class A:\n    nbytes = -5\n    shape = "
                    "(True, 2)\nclass B:\n    nbytes = True\n    shape = "
                    "(-1,)\nb = B()\nc = A()"})
    sc = answer(m, "list_variables")
    got = {v.get("name"): v for v in sc.get("vars", [])}
    check(got.get("b", {}).get("size", -1) >= 0 and
          "shape" not in got.get("b", {}) and "shape" not in got.get("A", {})
          and "shape" not in got.get("c", {}),
          "a false nbytes or shape is not taken as an array's", sc)
    # a cell that writes into coil's own list of what it showed: the
    # supervisor puts a note in each wrong entry's place, so the answer
    # still has the shape its schema states
    sc = answer(m, run, {"code": "import _coil\n_coil._shown.append(5)\n"
                         "_coil._shown.append({'type': 3, 'bytes': -1})"})
    check(sc.get("display") == [{"note": "not a display entry (an object "
                                 "of texts and sizes): left out"}] * 2 and
          any("2 of the cell's display entries" in w
              for w in sc.get("warnings", [])),
          "entries a cell forged in display are noted, and said", sc)
    answer(m, run, {"code": "from IPython.display import display, "
                    "Markdown\ndisplay(Markdown('# title'))",
                    "display": ["text/html"]})
    answer(m, run, {"code": "import time\ntime.sleep(30)",
                    "timeout": 0.5})
    sc = answer(m, run, {"code": STUBBORN, "timeout": 0.5})
    check(sc.get("status") == "timeout" and "restored" in sc,
          "a cell killed after its timeout says what was restored", sc)
    answer(m, run, {"code": "y = 2\n1 / 0", "atomic": True})
    answer(m, run, {"code": "1", "timout": 3, "stream": True})
    answer(m, run, {"code": 5})
    answer(m, run, {"code": "1", "timeout": "soon"})
    # Back to back, so that no checkpoint comes between: the first is
    # run again (its time differs), the second is not (it wrote a
    # file), and the third crashes.
    m.call("a", "import time\nt0 = time.time()\nprint(t0)\nkeep = 1")
    m.call("b", "open('once.txt', 'w').write('1')")
    m.call("c", CRASH)
    for rid in ("a", "b", "c"):
        sc = judge(run, rid, m.response(rid))
    check(sc.get("status") == "crashed" and
          isinstance((sc.get("restored") or {}).get("lost"), list),
          "a crash: restored says what was lost", sc)

    answer(m, run, {"code": "import numpy as np\na = np.zeros((2, 3))\n"
                    "s = 'text'\ndef g(p, q=2):\n    return p"})
    answer(m, "list_variables")
    answer(m, "list_variables", {"all": True})
    answer(m, "inspect", {"name": "g"})
    answer(m, "inspect", {"name": "a.shape"})
    answer(m, "inspect", {"name": "no_such_name"})
    answer(m, "inspect", {})
    answer(m, "snapshot", {"name": "s1"})
    answer(m, run, {"code": "z = 3"})
    answer(m, "snapshot", {"name": "s1"})
    answer(m, "snapshot")
    answer(m, "snapshot", {"name": "bad name!"})
    answer(m, "list_snapshots")
    answer(m, "rollback", {"to": "s1"})
    answer(m, "rollback", {"to": "0"})
    answer(m, "rollback", {"to": "no_such_snapshot"})
    answer(m, "rollback", {"to": 99})
    answer(m, "reset")
    answer(m, run, {"code": "w = 1"})
    answer(m, "fork", {"n": 2})
    answer(m, "fork", {"name": "alt", "from": 0})
    answer(m, "fork", {"files": "private"})
    answer(m, run, {"code": "w + 1"}, session="alt")
    answer(m, run, {"code": CRASH}, session="b1")
    answer(m, "list_variables", session="b1")
    answer(m, "list_sessions")
    answer(m, "adopt_session", {"session": "alt"})
    answer(m, "snapshot", {"name": "on_alt"})
    answer(m, "rollback", {"to": "on_alt"})
    answer(m, "close_session", {"session": "b2"})
    answer(m, "close_session", {"session": "no_such"})
    answer(m, "adopt_session", {"session": "main"})
    answer(m, "close_session", {"session": "alt"})
    answer(m, "close_session", {"session": "b1"})
    answer(m, "close_session", {"session": "main"})
    answer(m, "list_sessions")
    check_exit(m, "coil --mcp exits 0")

check(seen["tools"] == set(SCHEMAS), "every tool was answered",
      sorted(set(SCHEMAS) - seen["tools"]))
check({"ok", "error", "incomplete", "timeout", "crashed", "invalid"} <=
      seen["status"], "answers of every status but interrupted were "
      "checked", sorted(seen["status"]))
check({"restored", "warnings", "session", "error", "effects", "display",
       "truncated", "cut"} <= seen["members"],
      "answers with restored, warnings, session, error, effects, display "
      "and a cut were checked", sorted(seen["members"]))
cleanup(d)
done()
