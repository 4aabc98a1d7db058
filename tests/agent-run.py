#!/usr/bin/python3
"""agent-run.py FILE.test - run one agent-mode session test.

A test file is a session: the requests coil --agent reads and the
responses it must write, in the order they must arrive.

  @ --timeout 5          extra coil arguments (before the first request)
  > {"code": "1+1"}      a request line, sent as it is
  >b b'{"code": "\\xff"}' a request given as a Python bytes literal
  < {"result": "2"}      the next response line must contain this object
  . 0.5                  wait half a second before sending what follows
  # ...                  a comment

Expected objects match by subset: every key given must be there with a
matching value.  A string "~RE" matches any string RE finds a match in,
"!~RE" any string it does not, and "*" any value at all.  All requests
are written at once, then stdin is closed, as a pipe would.
"""
import json
import os
import re
import subprocess
import sys
import threading
import time


def match(want, got, path="$"):
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
            if k not in got:
                errs.append("%s: no key %r" % (path, k))
            else:
                errs += match(v, got[k], "%s.%s" % (path, k))
        return errs
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


def main():
    path = sys.argv[1]
    coil = os.environ.get("COIL", "src/coil")
    args, requests, expected = [], [], []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("@ "):
                args += line[2:].split()
            elif line.startswith(">b "):
                import ast
                requests.append(ast.literal_eval(line[3:]))
            elif line.startswith("> ") or line == ">":
                requests.append(line[2:].encode() + b"\n")
            elif line.startswith(". "):
                requests.append(float(line[2:]))
            elif line.startswith("< "):
                expected.append((n, json.loads(line[2:])))
    proc = subprocess.Popen([coil, "--agent"] + args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=os.environ.get("TEST_WORKDIR"))

    def feed():
        try:
            for r in requests:
                if isinstance(r, float):
                    time.sleep(r)
                else:
                    proc.stdin.write(r)
                    proc.stdin.flush()
            proc.stdin.close()
        except BrokenPipeError:
            pass
    got = {}

    def drain(name):
        got[name] = getattr(proc, name).read()
    threads = [threading.Thread(target=feed, daemon=True),
               threading.Thread(target=drain, args=("stdout",)),
               threading.Thread(target=drain, args=("stderr",))]
    for t in threads:
        t.start()
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for t in threads[1:]:
        t.join()
    proc.stdout, proc.stderr = got["stdout"], got["stderr"]
    lines = proc.stdout.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    failures = []
    for i, raw in enumerate(lines):
        try:
            got = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            failures.append("output line %d is not UTF-8 JSON (%s): %r"
                            % (i + 1, e, raw[:200]))
            continue
        if i >= len(expected):
            failures.append("unexpected output line %d: %s"
                            % (i + 1, raw[:300].decode()))
            continue
        n, want = expected[i]
        for e in match(want, got):
            failures.append("%s:%d: %s" % (path, n, e))
    if len(lines) < len(expected):
        failures.append("%d responses expected, got %d"
                        % (len(expected), len(lines)))
    if proc.returncode != 0:
        failures.append("coil exited %d" % proc.returncode)
    if failures:
        sys.stderr.write("\n".join(failures) + "\n")
        sys.stderr.write("--- coil's stderr ---\n%s"
                         % proc.stderr.decode(errors="replace"))
        sys.stderr.write("--- coil's stdout ---\n%s"
                         % proc.stdout.decode(errors="replace")[:20000])
        return 1
    print("%d responses matched" % len(expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
