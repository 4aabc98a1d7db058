#!/usr/bin/python3
"""The sources form layers, and an include never runs up.

src/README names the folders of src/ bottom up, on the line that starts
"Layers, bottom up:"; each folder is one layer, and its README says what
it owns.  A file may include headers of its own folder and of the
folders below it, never of one above: so the front ends sit on the hub,
the hub on the requests and the worker's life, those on the link and
the channel, and nothing low reaches back into a front end.  A header
no folder holds (config.h, made by configure) is left alone."""
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
done()
