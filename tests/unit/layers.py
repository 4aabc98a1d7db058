#!/usr/bin/python3
"""The sources form layers, and an include never runs up.

src/README names the folders of src/ bottom up, on the line that starts
"Layers, bottom up:"; each folder is one layer, and its README says what
it owns.  A file may include headers of its own folder and of the
folders below it, never of one above: so the front ends sit on the hub,
the hub on the requests and the worker's life, those on the link and
the channel, and nothing low reaches back into a front end.  A header
no folder holds (config.h, made by configure) is left alone.

Inside src/session/, the files are layers too, at the level of calls:
its README lists them top down, and a file calls a function of a file
below it, never of one above; two files on one line may call one
another one way only.  A call is a name a file uses that another file
defines outside "static"; comments are left out."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import check, done  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "src")


def layers():
    with open(os.path.join(SRC, "README")) as f:
        for line in f:
            if line.startswith("Layers, bottom up:"):
                return line.split(":", 1)[1].split()
    return []


order = layers()
check(len(order) > 1, "src/README names the layers, bottom up", order)
rank = {name: i for i, name in enumerate(order)}
home = {}                       # header -> its folder
files = []
for folder in sorted(os.listdir(SRC)):
    path = os.path.join(SRC, folder)
    if not os.path.isdir(path):
        continue
    check(folder in rank, "src/%s is one of the layers" % folder, order)
    check(os.path.exists(os.path.join(path, "README")),
          "src/%s has a README saying what it owns" % folder)
    for name in sorted(os.listdir(path)):
        if name == "pyfiles.c":
            continue            # made by the build (in-tree builds)
        if name.endswith(".h"):
            home[name] = folder
        if name.endswith((".c", ".h")):
            files.append((folder, name))
loose = [n for n in os.listdir(SRC) if n.endswith((".c", ".h", ".py"))]
check(loose == [], "no source file lies loose in src/", loose)

up = []
for folder, name in files:
    with open(os.path.join(SRC, folder, name)) as f:
        for m in re.finditer(r'^#\s*include\s+"([^"]+)"', f.read(), re.M):
            to = home.get(os.path.basename(m.group(1)))
            if to is not None and rank.get(to, -1) > rank.get(folder, -1):
                up.append("%s/%s -> %s/%s" % (folder, name, to, m.group(1)))
check(files != [], "the sources are found (%d files)" % len(files))
check(up == [], "no include runs from a lower layer to a higher one",
      "\n".join(up))


def session_order():
    """The files of src/session/README's list, each with its rank."""
    rank, n = {}, 0
    with open(os.path.join(SRC, "session", "README")) as f:
        for line in f:
            m = re.match(r"^  (\S+(?:, \S+)*)(\s{2,}\S|$)", line)
            if m is None:
                continue
            for stem in m.group(1).split(", "):
                rank[stem] = n
            n += 1
    return rank


def defined(text):
    """The functions text defines outside static, GNU style: the name at
    the start of a line, its type on the line above."""
    return set(m.group(2) for m in re.finditer(
        r"^(?!static)([^\n]*)\n(\w+)\(", text, re.M)
        if not m.group(1).startswith(("#", " ", "\t")) and m.group(1))


def session_calls():
    rank = session_order()
    folder = os.path.join(SRC, "session")
    texts = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".c"):
            with open(os.path.join(folder, name)) as f:
                texts[name[:-2]] = re.sub(r"/\*.*?\*/", "", f.read(),
                                          flags=re.S)
    stray = sorted(set(texts) - set(rank))
    check(len(rank) > 5 and stray == [], "every file of src/session/ is on "
          "its README's list (%d of them)" % len(texts), stray)
    owner = {}
    for stem, text in texts.items():
        for fn in defined(text):
            owner[fn] = stem
    edges = {}
    for stem, text in texts.items():
        for word in set(re.findall(r"\b\w+\b", text)):
            to = owner.get(word)
            if to is not None and to != stem:
                edges.setdefault((stem, to), []).append(word)
    up = ["%s -> %s: %s" % (a, b, " ".join(sorted(ns)))
          for (a, b), ns in sorted(edges.items())
          if rank.get(b, 0) < rank.get(a, 0) or
          (rank.get(b) == rank.get(a) and (b, a) in edges)]
    check(len(edges) > 10, "the calls between the session's files are "
          "found (%d pairs of files)" % len(edges))
    check(up == [], "no file of src/session/ calls one above it on the "
          "list, nor two on a line each other", "\n".join(up))


session_calls()
done()
