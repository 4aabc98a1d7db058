#!/usr/bin/env python3
"""coil --attach in tmux, on the session of a `coil --agent --listen`
that a script drives through stdin and through the socket: the agent's
cells appear in the UI with their output and origin; the person's cell
is in the agent's next vars; two UIs at once; detaching leaves the
session running; a UI that attaches while a cell runs shows what the
cell printed before it came; when the agent ends its session, the UI
says so and stays readable."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, skip_all  # noqa: E402
import uilib  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")

# a unix socket's path has at most 107 bytes: a short directory
sockdir = tempfile.mkdtemp(prefix="coil-at.", dir="/tmp")
path = os.path.join(sockdir, "s")


def socket_call(req):
    return uilib.socket_call(path, req)


agent = Coil("--listen", path, cwd=os.environ.get("TEST_WORKDIR"))
ui = ui2 = ui3 = None
# in the agent's work dir: the sandbox gives cells a /tmp of their own
gate = os.path.join(os.environ.get("TEST_WORKDIR") or os.getcwd(),
                    "attach-gate")
try:
    check(agent.run("a = 1")["status"] == "ok", "the agent runs a cell")
    ui = Screen(coil_cmd("--attach", path), 80, 24)
    check(ui.wait(r"attached, \w+") and ui.wait(r"^a +int +1"),
          "the UI attaches and shows the namespace", ui.text())
    r = agent.run("for i in range(3): print('agent says', i)\nb = [1, 2]")
    check(r["status"] == "ok", "the agent's cell with output")
    check(ui.wait(r"\[2\] agent") and ui.wait(r"agent says 2") and
          ui.wait(r"^b +list +len 2"),
          "the UI shows it: header with origin, output, namespace",
          ui.text())
    ui.type("c = a + 41")
    check(ui.wait(r"\[3\] person") and ui.wait(r"^c +int +42"),
          "the person runs a cell", ui.text())
    v = agent.call({"op": "vars"})
    names = {x["name"]: x["repr"] for x in v.get("vars", [])}
    check(names.get("c") == "42", "the agent's vars sees the person's c",
          v)
    r = socket_call({"id": 9, "code": "d = c * 2\nd"})
    check(r is not None and r.get("result") == "84" and
          r.get("origin") == "person", "a script on the socket runs a cell",
          r)
    check(ui.wait(r"^d +int +84"), "the UI sees the socket's cell too",
          ui.text())
    ui2 = Screen(coil_cmd("--attach", path), 120, 40)
    check(ui2.wait(r"^d +int +84"), "a second UI attaches at once",
          ui2.text())
    ui.keys("C-d")
    check(ui.wait(r"^EXITED 0"), "Ctrl-D detaches the first UI", ui.text())
    check(ui.stty("before") == ui.stty("after") and ui.stty("after"),
          "and leaves its terminal as it was")
    r = agent.run("c + 1")
    check(r.get("result") == "43", "the session goes on after a detach", r)
    check(ui2.wait(r"\[5\] agent") and ui2.wait(r"│ 43"),
          "the second UI still follows", ui2.text())
    rid = agent.send({"code": "import os, time\nprint('early line', "
                      "flush=True)\nwhile not os.path.exists(%r):\n"
                      "    time.sleep(0.05)\nprint('late line')" % gate})
    check(ui2.wait(r"early line"), "a cell prints and waits", ui2.text())
    ui3 = Screen(coil_cmd("--attach", path), 80, 24)
    check(ui3.wait(r"\[6\] agent") and ui3.wait(r"early line"),
          "a UI attaching while it runs shows what it printed before",
          ui3.text())
    open(gate, "w").close()
    check(agent.response(rid).get("status") == "ok" and
          ui3.wait(r"late line") and
          sum(1 for line in ui3.text().splitlines()
              if line.rstrip().endswith("│  early line")) == 1,
          "and the rest as it comes, the early line once", ui3.text())
    ui3.keys("C-d")
    check(ui3.wait(r"^EXITED 0"), "Ctrl-D leaves that UI", ui3.text())
    rc = agent.close()
    check(rc == 0, "the agent ends its session", rc)
    check(ui2.wait(r"session ended: the agent's session ended"),
          "the UI says the session ended", ui2.text())
    check(ui2.wait(r"late line") and ui2.wait(r"^d +int +84"),
          "and stays readable", ui2.text())
    ui2.keys("C-d")
    check(ui2.wait(r"^EXITED 0"), "Ctrl-D leaves it", ui2.text())
finally:
    for s in (ui, ui2, ui3):
        if s is not None:
            s.close()
    agent.kill()
    if os.path.exists(gate):
        os.unlink(gate)
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
