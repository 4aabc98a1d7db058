#!/usr/bin/env python3
"""The cells a crash loses are marked in the record (issue 25, point 1):
a UI attached to a `coil --agent --redo none --checkpoints 0 --listen`
whose agent sends three cells and a crash (no checkpoint is ever taken,
so the crash goes back to a fresh interpreter and nothing is redone,
however the cells are spaced in time) shows the crash's
"restored" with each lost cell and why, marks each lost cell's header
and F3's line LOST, and its namespace pane is the fresh one's."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

sockdir = tempfile.mkdtemp(prefix="coil-lost.", dir="/tmp")
path = os.path.join(sockdir, "s")
CELLS = ["a = 1", "b = 2", "print('third')", "import os; os._exit(3)"]

agent = Coil("--listen", path, "--redo", "none", "--checkpoints", "0",
             cwd=os.environ.get("TEST_WORKDIR"))
ui = None
try:
    check(agent.call({"op": "ping"}).get("status") == "ok",
          "the agent's session is up, its socket made")
    ui = Screen(coil_cmd("--attach", path), 160, 50)
    check(ui.wait(r"attached, \w+"), "the UI attaches", ui.text())
    ids = [agent.send({"code": c}) for c in CELLS]
    got = [agent.response(i) for i in ids]
    crash = got[-1]
    restored = crash.get("restored") or {}
    lost = restored.get("lost") or []
    check(crash.get("status") == "crashed" and
          lost == [g["cell"] for g in got[:-1]],
          "the crash lost the three cells before it", crash)
    for w in restored.get("lost_why", []):
        check(ui.wait_joined(r"lost: cell %d \(%s" % (
            w["cell"], w["why"][:20].replace("(", r"\(")
            .replace(")", r"\)"))),
            "the crash's block says cell %d was lost, and why" % w["cell"],
            ui.text())
    if not restored.get("lost_why"):
        for n in lost:
            check(ui.wait_joined(r"lost: cell %d(?!\d)" % n),
                  "the crash's block says cell %d was lost" % n, ui.text())
    for n in lost:
        check(ui.wait(r"\[%d\] agent \u00b7 lost" % n),
              "cell %d's header says it was lost" % n, ui.text())
    check(ui.wait_gone(r"^a +int") and ui.wait_gone(r"^b +int"),
          "the namespace pane no longer lists what the crash lost",
          ui.text())
    ui.keys("F3")
    for n in lost:
        check(ui.wait(r"\[%d\] agent .*LOST" % n),
              "F3 marks cell %d LOST" % n, ui.text())
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
