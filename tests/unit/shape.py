#!/usr/bin/python3
"""A newcomer can read any file and any function whole: no source file
over 800 lines, no C or Python function over 80.  C functions are found
as the style writes them (the name at the start of a line, the body
ending at a "}" alone in the first column); Python ones by "def" and
their indentation."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "src")
MAX_FILE, MAX_FUNC = 800, 80


def c_functions(lines):
    start = name = None
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z_]\w*)\(", line)
        if m:
            start, name = i, m.group(1)
        elif line == "}" and start is not None:
            yield name, i - start + 1
            start = None


def py_functions(lines):
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)def (\w+)", line)
        if not m:
            continue
        indent, j = len(m.group(1)), i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  len(lines[j]) - len(lines[j].lstrip())
                                  > indent):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1
        yield m.group(2), j - i


long_files, long_funcs, n = [], [], 0
for top, dirs, names in os.walk(SRC):
    for name in sorted(names):
        if not name.endswith((".c", ".h", ".py")) or name == "pyfiles.c":
            continue
        path = os.path.join(top, name)
        rel = os.path.relpath(path, SRC)
        with open(path) as f:
            lines = f.read().split("\n")
        n += 1
        if len(lines) - 1 > MAX_FILE:
            long_files.append("%s: %d lines" % (rel, len(lines) - 1))
        funcs = py_functions(lines) if name.endswith(".py") else \
            c_functions(lines)
        long_funcs += ["%s: %s, %d lines" % (rel, fn, k)
                       for fn, k in funcs if k > MAX_FUNC]
check(n > 50, "the sources are found (%d files)" % n)
check(long_files == [], "no source file over %d lines" % MAX_FILE,
      "\n".join(long_files))
check(long_funcs == [], "no function over %d lines" % MAX_FUNC,
      "\n".join(long_funcs))
done()
