#!/usr/bin/env python3
"""The UI's branches in tmux, attached to a `coil --agent --listen` that
a script drives: the person forks the live session (Esc f, :fork NAME,
%fork in a cell), sees the branch in the status line and in each cell's
header, runs a cell there while the agent's cell on main still runs,
goes from branch to branch (Esc n, Esc p, F6's picker, :switch), and
compares two branches' namespaces (:compare, c in the picker); the
agent's default stays main all along; `--attach PATH --session NAME`
starts on a branch, and an unknown name is an error that lists them."""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, Coil, check, done, skip_all  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

sockdir = tempfile.mkdtemp(prefix="coil-br.", dir="/tmp")
path = os.path.join(sockdir, "s")
work = os.environ.get("TEST_WORKDIR") or os.getcwd()
gate = os.path.join(work, "branches-gate")


def names(resp):
    return {v["name"]: v["repr"] for v in resp.get("vars", [])}


agent = Coil("--listen", path, cwd=os.environ.get("TEST_WORKDIR"))
ui = ui2 = ui3 = None
try:
    check(agent.run("a = 1")["status"] == "ok", "the agent runs a cell")
    ui = Screen(coil_cmd("--attach", path), 100, 30)
    check(ui.wait(r"attached, \w+") and ui.wait(r"^a +int +1"),
          "the UI attaches", ui.text())
    check(not re.search(r" on main \|", ui.text()),
          "without branches the status line names none", ui.text())

    # fork here: the person goes to the copy
    ui.keys("Escape", "f")
    check(ui.wait(r"forked 'b1' from 'main' at cell 1; the work directory "
                  r"is shared: you are on 'b1'") and ui.wait(r" on b1 \|"),
          "Esc f forks main and the UI goes to b1", ui.text())
    s = agent.call({"op": "sessions"})
    got = {x["name"]: x for x in s.get("sessions", [])}
    check(set(got) == {"main", "b1"} and got["b1"].get("parent") == "main"
          and got["main"].get("default") is True,
          "the session has main and b1; the agent's default is main", s)

    # the agent goes on with main: a cell that waits on a gate
    rid = agent.send({"code": "import os, time\nprint('main waits', "
                      "flush=True)\nwhile not os.path.exists(%r):\n"
                      "    time.sleep(0.05)\nc = 3" % gate})
    check(ui.wait(r"\[2\] agent on main") and ui.wait(r"main waits"),
          "the agent's cell on main shows, marked main", ui.text())
    ui.type("a = 2; b = 'on the branch'; print('b1 ran', a)")
    check(ui.wait(r"\[2\] person[^\n]* on b1") and ui.wait(r"b1 ran 2") and
          ui.wait(r"^a +int +2") and ui.wait(r"^b +str +'on the branch'"),
          "the person's cell runs on b1 while main's still runs, and the "
          "namespace pane is b1's", ui.text())
    check(not os.path.exists(gate) and agent.call(
          {"op": "ping"}).get("status") == "ok",
          "main's cell was still running meanwhile")
    open(gate, "w").close()
    r = agent.response(rid)
    check(r.get("status") == "ok" and r.get("cell") == 2 and
          "session" not in r, "the agent's cell ends on main", r)
    v = agent.call({"op": "vars"})
    check(names(v).get("a") == "1" and names(v).get("c") == "3" and
          "b" not in names(v), "the agent's vars are still main's", v)
    ui.type("d = 4")
    check(ui.wait(r"\[3\] person[^\n]* on b1") and ui.wait(r"^d +int +4") and
          not re.search(r"^c +int", ui.text(), re.M) and
          re.search(r"^a +int +2", ui.text(), re.M),
          "the pane stays b1's after main's cell", ui.text())

    # compare: main and yours
    ui.type(":compare")
    check(ui.wait(r"compare 'main' \| 'b1'") and ui.wait(r"only in one") and
          ui.wait(r" c +3 +- *│?$") and ui.wait(r" b +- +'on the branch'")
          and ui.wait(r" a +1 +2 *│?$") and
          ui.wait(r"3 in one only, 1 different"),
          "the overlay shows names in one only and the reprs that differ",
          ui.text())
    ui.keys("q")
    check(ui.wait_gone(r"compare 'main'"), "q closes it", ui.text())

    # switch: next and previous, as tmux's windows
    ui.keys("Escape", "n")
    check(ui.wait(r" on main \|") and ui.wait(r"^c +int +3") and
          ui.wait(r"^a +int +1"),
          "Esc n goes to main: its namespace", ui.text())
    ui.type("e = a * 10")
    check(ui.wait(r"\[3\] person[^\n]* on main") and ui.wait(r"^e +int +10"),
          "the person's cell now runs on main", ui.text())
    ui.keys("Escape", "p")
    check(ui.wait(r" on b1 \|") and ui.wait(r"^a +int +2"),
          "Esc p goes back to b1", ui.text())

    # named forks, a magic's fork, the picker
    ui.type(":fork try-a")
    check(ui.wait(r"forked 'try-a' from 'b1' at cell 3") and
          ui.wait(r" on try-a \|") and ui.wait(r"^d +int +4"),
          ":fork NAME forks the branch one is on, named", ui.text())
    ui.type("%fork")
    check(ui.wait(r"forked 'b2' from 'try-a'") and ui.wait(r" on try-a \|"),
          "%fork in a cell forks and stays", ui.text())
    ui.keys("F6")
    check(ui.wait(r"branches \(F6\)") and
          ui.wait(r"  main +- +- +3 +idle") and
          ui.wait(r"b1 +main +1 +3 +idle") and
          ui.wait(r">\* try-a +b1 +3 +3 +idle") and
          ui.wait(r"b2 +try-a +3 +3 +idle") and ui.wait(r"private"),
          "F6 lists the branches: parent, fork cell, cell, state, "
          "memory; yours picked", ui.text())
    ui.keys("Up")
    check(ui.wait(r">  b1 +main"), "Up picks another", ui.text())
    ui.keys("c")
    check(ui.wait(r"compare 'try-a' \| 'b1'") and
          ui.wait(r"0 in one only, 0 different"),
          "c compares it with yours", ui.text())
    ui.keys("q")
    ui.keys("F6")
    check(ui.wait(r">\* try-a"), "the picker again", ui.text())
    ui.keys("Up", "Up", "Up", "Enter")
    check(ui.wait(r" on main \|") and ui.wait(r"^e +int +10"),
          "Enter goes to the branch picked", ui.text())
    ui.type(":switch nope")
    check(ui.wait(r"no branch 'nope' \(the branches are: main, b1, "
                  r"try-a, b2\)") and ui.wait(r" on main \|"),
          ":switch to an unknown name says which there are", ui.text())
    ui.type(":switch b1")
    check(ui.wait(r" on b1 \|") and ui.wait(r"^a +int +2"),
          ":switch NAME goes there", ui.text())

    # a second UI on a branch from the start
    ui2 = Screen(coil_cmd("--attach", path, "--session", "try-a"), 100, 30)
    check(ui2.wait(r" on try-a \|") and ui2.wait(r"^d +int +4") and
          ui2.wait(r"^b +str"), "--attach --session starts on that branch",
          ui2.text())
    ui2.type("f = 'two'")
    check(ui2.wait(r"person[^\n]* on try-a") and ui2.wait(r"^f +str +'two'"),
          "its cells run there", ui2.text())
    check(ui.wait(r"\[4\] person[^\n]* on try-a"),
          "the first UI sees that cell, marked", ui.text())
    v = agent.call({"op": "vars"})
    check("f" not in names(v) and names(v).get("e") == "10",
          "the agent's default is still main", v)
    r = agent.run("g = 7")
    check(r.get("status") == "ok" and r.get("cell") == 4,
          "the agent goes on with main", r)
    check(ui2.wait(r"\[4\] agent on main"),
          "a UI on a branch sees the agent's cells, marked", ui2.text())
    ui2.keys("C-d")
    check(ui2.wait(r"^EXITED 0"), "Ctrl-D leaves it", ui2.text())

    bad = subprocess.run([COIL, "--attach", path, "--session", "nope"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, timeout=60)
    check(bad.returncode != 0 and b"no session 'nope'" in bad.stderr,
          "--session with an unknown name is an error naming it",
          bad.stderr)

    ui.keys("C-d")
    check(ui.wait(r"^EXITED 0"), "Ctrl-D detaches the UI", ui.text())
    check(ui.stty("before") == ui.stty("after") and ui.stty("after"),
          "and leaves its terminal as it was")
    rc = agent.close()
    check(rc == 0, "the agent ends its session", rc)
    # the UI's own session (no --attach): the same keys
    ui3 = Screen(coil_cmd(), 100, 30)
    ui3.type("a = 1")
    check(ui3.wait(r"^a +int +1"), "a UI of its own runs a cell",
          ui3.text())
    ui3.keys("Escape", "f")
    check(ui3.wait(r"forked 'b1' from 'main' at cell 1") and
          ui3.wait(r" on b1 \|"), "Esc f forks it", ui3.text())
    ui3.type("a = 2")
    check(ui3.wait(r"\[2\] person on b1") and ui3.wait(r"^a +int +2"),
          "a cell on the branch", ui3.text())
    ui3.type("while True: pass")
    ui3.keys("Enter")
    check(ui3.wait(r" on b1 \| cell 3 running"), "a cell runs on b1",
          ui3.text())
    ui3.keys("C-c")
    check(ui3.wait(r" on b1 \| cell 3 interrupted"),
          "Ctrl-C interrupts the branch's running cell", ui3.text())
    ui3.keys("Escape", "n")
    check(ui3.wait(r" on main \|") and ui3.wait(r"^a +int +1"),
          "Esc n: main is as it was", ui3.text())
    ui3.type(":compare b1")
    check(ui3.wait(r"compare 'main' \| 'b1'") and
          ui3.wait(r" a +1 +2 *│?$") and
          ui3.wait(r"0 in one only, 1 different"),
          ":compare NAME: yours and it", ui3.text())
    ui3.keys("q")
    ui3.keys("C-d")
    check(ui3.wait(r"^EXITED 0"), "Ctrl-D leaves it, branches and all",
          ui3.text())
finally:
    for scr in (ui, ui2, ui3):
        if scr is not None:
            scr.close()
    agent.kill()
    if os.path.exists(gate):
        os.unlink(gate)
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
