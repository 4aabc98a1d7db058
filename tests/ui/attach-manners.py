#!/usr/bin/env python3
"""Attach manners (issue 25, part 5), in tmux, on the session of a
`coil --agent --listen` a script drives: a UI that attaches while the
agent's cell runs shows the cell's clock from its start, not from the
attach, and the checkpoint the session holds; Ctrl-C on the agent's
cell asks first: n leaves it running (it ends well once let go), y
interrupts it and the agent's answer names the person; Ctrl-C on the
UI's own cell asks nothing.  Two UIs have distinct names, each shown
in the cell headers of both.  Each waiting cell blocks reading a fifo
the test opens when it is done checking: nothing waits on a clock."""
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

sockdir = tempfile.mkdtemp(prefix="coil-am.", dir="/tmp")
path = os.path.join(sockdir, "s")
wd = os.environ.get("TEST_WORKDIR") or os.getcwd()
fifo = os.path.join(wd, "manners-fifo")
os.mkfifo(fifo)
# reads the fifo: blocks till the test opens it for writing
READ = "print('waiting', flush=True); open(%r).read()" % fifo


def release():
    """Let the cell reading the fifo go: there must be one, or this
    fails at once (ENXIO) instead of waiting."""
    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    os.write(fd, b"go")
    os.close(fd)


def agent_cell(agent):
    """The agent's cell that reads the fifo, once it runs."""
    rid = agent.send({"code": READ, "stream": True})
    while True:
        m = agent.line()
        if m.get("event") == "output" and m.get("id") == rid:
            return rid, time.monotonic()
        agent.events.append(m)


def clock(screen):
    m = re.search(r"cell (\d+) running (\d+\.\d)s", screen.text())
    return (int(m.group(1)), float(m.group(2))) if m else (None, None)


agent = Coil("--listen", path, cwd=wd)
ui = ui2 = None
try:
    check(agent.run("a = 1")["status"] == "ok", "the agent runs a cell")
    check(agent.call({"op": "snapshot", "name": "one"})["status"] == "ok",
          "and keeps a snapshot of cell 1")
    rid, seen = agent_cell(agent)
    # the cell has run at least this long when the UI attaches
    while time.monotonic() - seen < 3:
        time.sleep(0.1)
    least = time.monotonic() - seen
    ui = Screen(coil_cmd("--attach", path), 100, 24)
    check(ui.wait(r"cell 2 running \d+\.\ds"), "a UI attaches mid-cell",
          ui.text())
    cell, secs = clock(ui)
    check(cell == 2 and secs is not None and secs + 0.1 >= least,
          "its clock counts from the cell's start: %s s, the cell had run "
          "%.1f s at the attach" % (secs, least), ui.text())
    check(ui.wait(r"\| ckpt 1 \|"), "and it shows the checkpoint held",
          ui.text())
    ui.keys("C-c")
    check(ui.wait(r"cell 2 is not yours \(agent\): interrupt it\? \(y/n\)"),
          "Ctrl-C on the agent's cell asks first", ui.text())
    ui.keys("n")
    check(ui.wait_gone(r"interrupt it\?") and
          ui.wait(r"cell 2 running"), "n: the question goes, the cell "
          "runs on", ui.text())
    release()
    r = agent.response(rid)
    check(r.get("status") == "ok", "and ends well once let go", r)

    rid, seen = agent_cell(agent)
    check(ui.wait(r"cell 3 running"), "the agent's next cell runs",
          ui.text())
    ui.keys("C-c")
    check(ui.wait(r"cell 3 is not yours \(agent\): interrupt it\? \(y/n\)"),
          "Ctrl-C asks again", ui.text())
    ui.keys("y")
    r = agent.response(rid)
    msg = (r.get("error") or {}).get("message", "")
    m = re.fullmatch(r'interrupted by person "(\S+)" \(an attached UI\)',
                     msg)
    check(r.get("status") == "interrupted" and m is not None,
          "y interrupts it; the agent's answer names the person", r)
    name = m.group(1) if m else "?"
    check(re.fullmatch(r"[^@]+@pts/\d+", name) is not None,
          "by their user and terminal: %s" % name)

    ui.type(READ)
    check(ui.wait(r"cell 4 running"), "the person's own cell runs",
          ui.text())
    ui.keys("C-c")
    check(ui.wait(r"KeyboardInterrupt: interrupted by person"),
          "Ctrl-C on one's own cell interrupts it unasked", ui.text())
    check("not yours" not in ui.text(), "with no question", ui.text())

    ui2 = Screen(coil_cmd("--attach", path), 100, 24)
    check(ui2.wait(r"attached"), "a second UI attaches", ui2.text())
    ui.type("b = 2")
    ui2.type("c = 3")
    check(ui.wait(r"\[5\] person %s" % re.escape(name)) and
          ui2.wait(r"\[5\] person %s" % re.escape(name)),
          "the first UI's cell is headed with its name, in both UIs",
          ui2.text())
    m2 = re.search(r"\[6\] person (\S+@pts/\d+)", ui2.text()) if \
        ui2.wait(r"\[6\] person \S+@pts/\d+") else None
    check(m2 is not None and m2.group(1) != name and
          ui.wait(r"\[6\] person %s" % re.escape(m2.group(1))),
          "the second's with its own, distinct name, in both UIs",
          ui.text())
    ui.keys("F3")
    check(ui.wait(r"\[6\] person %s" % re.escape(m2.group(1) if m2 else
                                                  "?")),
          "F3 lists the cells with the person's name", ui.text())
    ui.keys("F3")
    for s in (ui, ui2):
        s.keys("C-d")
        check(s.wait(r"^EXITED 0"), "Ctrl-D detaches", s.text())
    check(agent.close() == 0, "the agent's session ends well")
finally:
    for s in (ui, ui2):
        if s is not None:
            s.close()
    agent.kill()
    os.unlink(fifo)
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
