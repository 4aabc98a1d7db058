#!/usr/bin/python3
"""agent-run.py FILE.test - run one agent-mode session test, print TAP.

A test file is a session: the requests coil --agent reads and the
responses it must write, in the order they must arrive.  With "@ --mcp"
it is the MCP server's (JSON-RPC messages, one a line).

  @ --timeout 5          extra coil arguments (before the first request)
  @ requires numpy       skip the file unless python3 imports these
  @@ --sandbox none      run the session once more with these arguments
  > {"code": "1+1"}      a request line, sent as it is
  >b b'{"code": "\\xff"}' a request given as a Python bytes literal
  < {"result": "2"}      the next response line must contain this object
  . 0.5                  wait half a second before sending what follows
  # ...                  a comment

Expected objects match by subset: every key given must be there with a
matching value, and a key given as "!*" must not be there.  A string
"~RE" matches any string RE finds a match in, "!~RE" any string it does
not, and "*" any value at all.  A list matches item by item; one that
ends in "..." matches any list holding its other items in that order,
among others.  All requests are written at once, then stdin is closed,
as a pipe would.

Each run is a fresh coil in a fresh work dir (under $TEST_WORKDIR),
removed after it: the first with the "@" arguments, then one for each
"@@" line with its arguments added.  Beside the work dir, not in it,
each run has an empty scratch dir, removed with it (for --allow-write,
a path outside the work dir).  In "@" and "@@" arguments, requests and
expected strings, "$WORKDIR" and "$SCRATCH" are their absolute paths.

In each run, every expected response is one check (its mismatches as
diagnostics), then one that no line came beyond them, one that every
line was UTF-8 JSON, and one that coil exited 0.

A test file may also be a transcript, as coil --record writes one (its
first line is {"coil_transcript": ...}; see share/example.transcript):
then it is run as `coil --replay FILE --check`, one check per cell
(its diff as diagnostics) and one that coil exited 0.  A session
recorded is a test.
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "lib"))
from coiltest import (COIL, SYSPYTHON, Coil, check, diag,  # noqa: E402
                      done, skip_all, tap)

DEADLINE = 120          # seconds for the whole session


def match(want, got, path="$"):
    """The ways got differs from the expected object want, as strings."""
    if isinstance(want, str) and want == "*":
        return []
    if isinstance(want, str) and want.startswith("!~"):
        if isinstance(got, str) and not re.search(want[2:], got, re.S):
            return []
        return ["%s: %r matches %r" % (path, got, want[2:])]
    if isinstance(want, str) and want.startswith("~"):
        if isinstance(got, str) and re.search(want[1:], got, re.S):
            return []
        return ["%s: %r does not match %r" % (path, got, want[1:])]
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return ["%s: expected an object, got %r" % (path, got)]
        errs = []
        for k, v in want.items():
            if v == "!*":
                if k in got:
                    errs.append("%s: key %r is there" % (path, k))
            elif k not in got:
                errs.append("%s: no key %r" % (path, k))
            else:
                errs += match(v, got[k], "%s.%s" % (path, k))
        return errs
    if isinstance(want, list) and want[-1:] == ["..."]:
        return among(want[:-1], got, path)
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return ["%s: expected %r, got %r" % (path, want, got)]
        errs = []
        for i, (w, g) in enumerate(zip(want, got)):
            errs += match(w, g, "%s[%d]" % (path, i))
        return errs
    if want != got or type(want) is not type(got) and \
            not (isinstance(want, (int, float)) and
                 isinstance(got, (int, float)) and
                 not isinstance(got, bool)):
        return ["%s: expected %r, got %r" % (path, want, got)]
    return []


def among(want, got, path):
    """The ways the list got lacks want's items, in want's order."""
    if not isinstance(got, list):
        return ["%s: expected a list, got %r" % (path, got)]
    i = 0
    for g in got:
        if i < len(want) and not match(want[i], g):
            i += 1
    if i < len(want):
        return ["%s: no item matching %r (in order) in %r"
                % (path, want[i], got)]
    return []


def parse(path):
    """(coil arguments, [arguments of each further run], modules required,
    requests, [(line number, expected object)]).  A request is bytes to
    write, or a float: seconds to wait."""
    args, again, needs, requests, expected = [], [], [], [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("@ requires "):
                needs += line[11:].split()
            elif line.startswith("@@ "):
                again.append(line[3:].split())
            elif line.startswith("@ "):
                args += line[2:].split()
            elif line.startswith(">b "):
                requests.append(ast.literal_eval(line[3:]))
            elif line.startswith("> ") or line == ">":
                requests.append(line[2:].encode() + b"\n")
            elif line.startswith(". "):
                requests.append(float(line[2:]))
            elif line.startswith("< "):
                expected.append((n, json.loads(line[2:])))
    return args, again, needs, requests, expected


def missing(mods):
    """The modules of mods that python3, the one coil embeds, lacks."""
    return [m for m in mods if subprocess.run(
        [SYSPYTHON, "-c", "import " + m], capture_output=True).returncode]


def feed(c, requests):
    try:
        for r in requests:
            if isinstance(r, float):
                time.sleep(r)
            else:
                c.send_raw(r)
        c.proc.stdin.close()
    except (OSError, ValueError):
        pass            # coil is gone: the checks say what it wrote


def session(c, requests):
    """Every line coil writes until it closes its stdout, as bytes; and
    what went wrong reading them (a timeout), or None."""
    t = threading.Thread(target=feed, args=(c, requests), daemon=True)
    t.start()
    lines, end = [], time.time() + DEADLINE
    try:
        while True:
            lines.append(c.raw_line(max(0.1, end - time.time())))
    except EOFError:
        return lines, None
    except TimeoutError:
        c.kill()
        return lines, "coil still ran after %d s: killed" % DEADLINE


def short(obj, width=60):
    text = json.dumps(obj, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 3] + "..."


def is_transcript(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    try:
        return "coil_transcript" in json.loads(first)
    except (ValueError, TypeError):
        return False


def replay_test(path):
    """A transcript as a test: coil --replay --check, a check a cell."""
    name = os.path.basename(path)
    try:
        p = subprocess.run([COIL, "--replay", os.path.abspath(path),
                            "--check"], capture_output=True, text=True,
                           timeout=DEADLINE,
                           cwd=os.environ.get("TEST_WORKDIR"))
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = e.stdout or "", "still ran after %d s" % DEADLINE, -1
        out = out.decode() if isinstance(out, bytes) else out
    cells = re.findall(r"^In \[(\d+)\]: (.*)$", out, re.M)
    diffs = dict(re.findall(r"^cell (\d+) differs:\n(.*?)(?=^In \[|"
                            r"^\d+ cells? replayed|\Z)", out, re.M | re.S))
    for n, first in cells:
        check(n not in diffs, "%s cell %s %s" % (name, n, short(first, 50)),
              diffs.get(n))
    check(rc == 0, "coil --replay --check exits 0",
          "exit status %s\n%s" % (rc, err[-4000:]))
    done()


def subst(x, dirs):
    """x with "$WORKDIR" and "$SCRATCH" replaced: in a request's bytes
    as JSON string text, in the strings of an expected object."""
    if isinstance(x, bytes):
        for k, v in dirs.items():
            x = x.replace(k.encode(), json.dumps(v)[1:-1].encode())
        return x
    if isinstance(x, str):
        for k, v in dirs.items():
            x = x.replace(k, v)
        return x
    if isinstance(x, list):
        return [subst(v, dirs) for v in x]
    if isinstance(x, dict):
        return {k: subst(v, dirs) for k, v in x.items()}
    return x


def run(args, requests, expected):
    """One session in a work dir of its own: (the lines coil wrote, what
    went wrong reading them or None, its exit status, its stderr, the
    expected responses with the dirs' names in them)."""
    top = os.path.realpath(tempfile.mkdtemp(
        prefix="run.", dir=os.environ.get("TEST_WORKDIR")))
    dirs = {"$WORKDIR": os.path.join(top, "work"),
            "$SCRATCH": os.path.join(top, "scratch")}
    try:
        for d in dirs.values():
            os.mkdir(d)
        args = [subst(a, dirs) for a in args]
        # "@ --mcp": the MCP server on the same stdio, not the agent
        c = Coil(*args, cwd=dirs["$WORKDIR"],
                 argv=[COIL, *args] if "--mcp" in args else None)
        lines, trouble = session(c, [subst(r, dirs) for r in requests])
        status = c.close()
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return lines, trouble, status, c.stderr_text(), \
        [(n, subst(want, dirs)) for n, want in expected]


def checks(name, expected, lines, trouble, status):
    """The checks of one run: each expected response, then the rest."""
    parsed, bad = [], []
    for i, raw in enumerate(lines, 1):
        try:
            parsed.append(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as e:
            parsed.append(None)
            bad.append("line %d: %s: %r" % (i, e, raw[:200]))

    for i, (n, want) in enumerate(expected):
        what = "%s:%d %s" % (name, n, short(want))
        if i >= len(lines):
            check(False, what, "no response: coil wrote %d lines"
                  % len(lines))
        elif parsed[i] is None:
            check(False, what, "not JSON: %r" % lines[i][:300])
        else:
            errs = match(want, parsed[i])
            check(not errs, what, "\n".join(errs + [
                "got: " + json.dumps(parsed[i], ensure_ascii=False)[:1000]]))
    extra = lines[len(expected):]
    check(not extra, "%s: no line beyond the %d expected"
          % (name, len(expected)),
          "\n".join(l[:300].decode(errors="replace") for l in extra))
    check(not bad, "%s: every line coil wrote is UTF-8 JSON" % name,
          "\n".join(bad))
    check(status == 0 and trouble is None, "%s: coil exits 0" % name,
          trouble or "exit status %s" % status)


def main():
    path = sys.argv[1]
    name = os.path.basename(path)
    if is_transcript(path):
        replay_test(path)
    args, again, needs, requests, expected = parse(path)
    lack = missing(needs)
    if lack:
        skip_all("python3 cannot import %s (apt-get install %s)" % (
            ", ".join(lack), " ".join("python3-" + m for m in lack)))
    for more in [[]] + again:
        failed = tap().failed
        lines, trouble, status, err, want = run(args + more, requests,
                                                expected)
        label = "%s(%s)" % (name, " ".join(more)) if more else name
        checks(label, want, lines, trouble, status)
        if tap().failed > failed and err:
            diag("--- coil's stderr ---\n" + err[-4000:])
    done()


if __name__ == "__main__":
    main()
