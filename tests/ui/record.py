#!/usr/bin/env python3
"""The output pane is the session's record (issue 25, point 1): a UI
attached to a `coil --agent --listen` that a script drives shows, for
each of the agent's cells, what the agent's JSON answer said, field for
field: the header with its origin, the code, output, stderr, the result
as Out[N], the error with its hint on a line of its own, the warnings,
one line a display entry (type, size, dimensions, path), what
"restored" said after a crash, and the marks a crash's lost cells and a
rollback's undone cells get (in the pane and in F3).  After the crash
the namespace pane holds what the restored worker's vars say."""
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

sockdir = tempfile.mkdtemp(prefix="coil-rec.", dir="/tmp")
path = os.path.join(sockdir, "s")
COLS, ROWS = 160, 50


def record(ui):
    """The output pane's lines (right of the namespace pane's bar)."""
    return [ln.split("\u2502", 1)[1].rstrip()
            for ln in ui.text().split("\n") if "\u2502" in ln]


def joined(ui):
    """The record's rows without their 2-column markers, joined: a line
    wrapped at the pane's edge reads whole again."""
    return "".join(ln[2:] for ln in record(ui))


def shows(ui, line, timeout=15):
    """Wait for line in the record (wrapped or not)."""
    end = time.time() + timeout
    while time.time() < end:
        if line in joined(ui):
            return True
        time.sleep(0.1)
    return False


def size(n):
    if n < 1024:
        return "%d bytes" % n
    if n < 1048576:
        return "%.1f KiB" % (n / 1024)
    return "%.1f MiB" % (n / 1048576)


def block_of(ui, cell, timeout=15):
    """Wait for cell's header; the record's lines from it to the next."""
    if not ui.wait(r"\[%d\] agent" % cell, timeout):
        return []
    lines = record(ui)
    for i, ln in enumerate(lines):
        if re.search(r"\[%d\] agent" % cell, ln):
            rest = lines[i + 1:]
            for k, nx in enumerate(rest):
                if re.search(r"\u2500\u2500 \[\d+\]", nx):
                    return lines[i:i + 1 + k]
            return lines[i:]
    return []


def check_answer(ui, r, what):
    """The record's block of answer r holds each of its fields."""
    cell = r["cell"]
    want = []
    if r.get("output"):
        want += r["output"].rstrip("\n").split("\n")
    if r.get("stderr"):
        want += r["stderr"].rstrip("\n").split("\n")
    if r.get("result") is not None:
        want.append("Out[%d]: %s" % (cell, r["result"]))
    err = r.get("error")
    if err:
        want.append("%s: %s" % (err["type"], err["message"].split("\n")[0]))
        if err.get("hint"):
            want.append("hint: " + err["hint"].split("\n")[0])
    for w in r.get("warnings", []):
        want.append("warning: " + w)
    for d in r.get("display", []):
        line = "display: %s, %s" % (d["type"], size(d.get("bytes", 0)))
        if "width" in d:
            line += ", %dx%d" % (d["width"], d["height"])
        if "path" in d:
            line += ", " + d["path"]
        want.append(line)
    rs = r.get("restored")
    if isinstance(rs, dict):
        want.append("restored: the namespace is back at the state after "
                    "cell %d" % rs["cell"] if rs.get("cell") is not None
                    else "restored: nothing could be restored: a fresh "
                    "namespace")
        for lw in rs.get("lost_why", []):
            want.append("lost: cell %d (%s)" % (lw["cell"], lw["why"]))
        if rs.get("redone"):
            want.append("redone, answered as before: cell " +
                        ", ".join(str(c) for c in rs["redone"]))
    ok = True
    for w in want:
        if not shows(ui, w):
            ok = False
            check(False, "%s: the record shows %r" % (what, w),
                  "\n".join(block_of(ui, cell)))
    check(ok and len(want) > 0, "%s: the record shows every field of the "
          "answer (%d lines)" % (what, len(want)),
          "\n".join(block_of(ui, cell)))


agent = Coil("--listen", path, "--checkpoint-policy", "every",
              cwd=os.environ.get("TEST_WORKDIR"))
ui = None
try:
    r1 = agent.run("region = 5\nprint('set region')\nregion")
    check(r1["status"] == "ok", "the agent's first cell", r1)
    ui = Screen(coil_cmd("--attach", path), COLS, ROWS)
    check(ui.wait(r"attached, \w+"), "the UI attaches", ui.text())
    check_answer(ui, r1, "an answer from before the UI attached")
    check(ui.wait(r"\[1\] agent") and shows(ui, "region = 5"),
          "the header names the agent, and the code is there", ui.text())

    r2 = agent.run("d = {'region': 1, 'other': 2}\nd['regoin']")
    check(r2["status"] == "error" and r2["error"].get("hint"),
          "a KeyError near a defined key has a hint", r2)
    check_answer(ui, r2, "an error with a hint")

    r3 = agent.run("import sys, warnings\n"
                   "warnings.warn('careful now')\n"
                   "sys.stdout = None")
    check(r3.get("warnings"), "a cell that leaves the answer a warning", r3)
    check_answer(ui, r3, "warnings")
    check(shows(ui, "warning: %s" % r3["warnings"][0]),
          "the warning on a line of its own")

    r4 = agent.run("import matplotlib\nmatplotlib.use('Agg')\n"
                   "import matplotlib.pyplot as plt\n"
                   "plt.plot([1, 3, 2])\nplt.show()\n"
                   "list(range(40))")
    check(r4["status"] == "ok" and r4.get("display"), "a figure", r4)
    check_answer(ui, r4, "a figure and a long result")
    keep = agent.run("keep = 1")
    r5 = agent.run("import os\nos._exit(3)")
    check(r5["status"] == "crashed" and isinstance(r5.get("restored"),
                                                   dict),
          "a crash restores", r5)
    check_answer(ui, r5, "a crash")
    check(shows(ui, "the worker died (exit status 3)") or
          any("the worker died" in ln for ln in block_of(ui, r5["cell"])),
          "the worker's death under the crashed cell's block",
          "\n".join(block_of(ui, r5["cell"])))
    v = agent.call({"op": "vars"})
    names = sorted(x["name"] for x in v.get("vars", []))
    ns = []
    end = time.time() + 15
    while time.time() < end:
        ns = sorted(ln.split()[0] for ln in ui.text().split("\n")
                    if "\u2502" in ln and ln.split("\u2502")[0].strip()
                    and not ln.startswith(" namespace"))
        if ns == names:
            break
        time.sleep(0.1)
    check(ns == names, "after the crash the namespace pane holds what "
          "vars says", (ns, names))
    for lw in r5["restored"].get("lost_why", []):
        check(ui.wait(r"\[%d\] agent \u00b7 lost" % lw["cell"]),
              "a lost cell's header says so", ui.text())

    rb = agent.call({"op": "rollback", "to": r1["cell"]})
    check(rb["status"] == "ok", "the agent rolls back", rb)
    check(ui.wait(r"rollback agent") and
          shows(ui, "the namespace is back at the state after cell %d"
                % r1["cell"]),
          "the rollback's own block says where it left the namespace",
          ui.text())
    check(ui.wait(r"\[%d\] agent \u00b7 rolled back" % keep["cell"]) and
          shows(ui, "cell %d was rolled back" % keep["cell"]),
          "the undone cells are marked: header and a note", ui.text())
    check(ui.wait(r"^region +int +5") and ui.wait_gone(r"^keep +int"),
          "and the namespace pane is the rolled-back one", ui.text())
    ui.keys("F3")
    check(ui.wait(r"\[%d\] agent +error .*ROLLED BACK" % r2["cell"]),
          "F3 marks the rolled-back cells", ui.text())
    ui.keys("Escape")
    ui.keys("C-d")
    check(ui.wait(r"^EXITED 0"), "Ctrl-D detaches", ui.text())
finally:
    if ui is not None:
        ui.close()
    agent.kill()
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
