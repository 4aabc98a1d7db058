#!/usr/bin/python3
# --brief: the same answers with what says nothing left out.  Two
# sessions run the same requests, one with --brief; each brief answer
# must be the full one less exactly its empty members (null, "", [], {})
# at the top and in its error, id and status always kept, and nothing
# else changed (figures that differ from run to run, duration_ms,
# cpu_ms, memory_peak and the totals, are compared by presence).
# brief.test: a quiet cell's answer, key by key.
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, check_exit, done  # noqa: E402

VOLATILE = {"duration_ms", "cpu_ms", "memory_peak", "totals", "version",
            "checkpoints", "sandbox"}

REQUESTS = [
    ("a cell with nothing to say", {"code": "x = 1"}),
    ("a cell with output and a result", {"code": "print('hi'); x + 1"}),
    ("a cell with stderr only", {"code": "import sys; sys.stderr.write('e')"}),
    ("an error", {"code": "1/0"}),
    ("an incomplete cell", {"code": "(("}),
    ("a syntax error", {"code": "x = )"}),
    ("a cell that prints nothing and returns None", {"code": "None"}),
    ("vars", {"op": "vars"}),
    ("an empty namespace listing of a name that is not there",
     {"op": "inspect", "name": "nope"}),
    ("an invalid request", {"op": "rolback"}),
    ("ping", {"op": "ping"}),
]


def empty(v):
    return v is None or v == "" or v == [] or v == {}


def pruned(full):
    """full as --brief should give it."""
    out = {}
    for k, v in full.items():
        if k in ("id", "status"):
            out[k] = v
        elif k == "error" and isinstance(v, dict):
            out[k] = {ek: ev for ek, ev in v.items() if not empty(ev)}
        elif not empty(v):
            out[k] = v
    return out


def same(want, got):
    """Why got is not want (volatile figures by presence), or ""."""
    if set(want) != set(got):
        return "keys %s, want %s" % (sorted(got), sorted(want))
    for k in want:
        if k not in VOLATILE and want[k] != got[k]:
            return "%s: %r, want %r" % (k, got[k], want[k])
    return ""


def main():
    full, brief = Coil("--sandbox", "none"), Coil("--sandbox", "none",
                                                  "--brief")
    for what, req in REQUESTS:
        f, b = full.call(dict(req)), brief.call(dict(req))
        why = same(pruned(f), b)
        check(not why and f.get("status") == b.get("status"),
              "--brief: %s: the full answer less its empty members" % what,
              "%s\nfull:  %s\nbrief: %s" % (why, f, b))
    check_exit(full)
    check_exit(brief)
    p = subprocess.run([COIL, "--plain", "--brief"], input=b"",
                       capture_output=True, timeout=60)
    check(p.returncode == 2 and b"--brief" in p.stderr,
          "--brief outside --agent is refused, and says why",
          (p.returncode, p.stderr))
    done()


main()
