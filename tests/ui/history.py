#!/usr/bin/env python3
"""A client of the attach socket sees the cells that ran before it came:
the hub keeps them (the newest 200) and sends each as a "history" line
at attach, then "queued" and "started" for the cell running then.  In
tmux, coil --attach shows them: each cell's header with its origin, its
code, output, stderr and error, the last result, the F3 list and a cell
in full; and the cell that was running when it attached, with its
output and answer.  An attached UI answers its own cells' input() (the
exec's "input" and the input op); a socket client that did not ask
gets EOFError, and may not answer another's."""
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

sockdir = tempfile.mkdtemp(prefix="coil-hi.", dir="/tmp")
path = os.path.join(sockdir, "s")


def attach_lines():
    """The lines a new socket client gets before the answer to its
    first request (a ping): what the session told it of the past."""
    got = []
    uilib.socket_call(path, {"op": "ping", "id": "p"}, events=got)
    return got


def socket_call(req):
    return uilib.socket_call(path, req)


CELLS = ["a = 1\nprint('first cell says hi')",
         "import sys; print('oops', file=sys.stderr); 1/0",
         "b = a + 1\nb"]

agent = Coil("--listen", path, cwd=os.environ.get("TEST_WORKDIR"))
ui = None
try:
    answers = [agent.run(code) for code in CELLS]
    check([r["status"] for r in answers] == ["ok", "error", "ok"],
          "the agent runs three cells before anyone attaches", answers)
    lines = attach_lines()
    hist = [m for m in lines if m.get("event") == "history"]
    check(len(hist) == 3 and [m["request"]["code"] for m in hist] == CELLS
          and all(m["origin"] == "agent" for m in hist),
          "a socket client gets them as history lines, oldest first, "
          "with their code and origin", lines)
    check(all(m["response"].get(k) == r.get(k) for m, r in
              zip(hist, answers) for k in ("cell", "status", "output",
                                           "stderr", "result")) and
          all(m["response"]["seq"] == m["seq"] for m in hist),
          "each with the response as the agent got it", hist)
    check(not [m for m in lines if m.get("id") != "p" and m.get("event")
               not in ("hello", "history", "namespace", "checkpoint",
                       "worker")],
          "and no cell is left open (the rest is the client's own ping)",
          lines)

    # the next cell is still running when the UI attaches
    late = agent.send({"code": "import time; time.sleep(2)\n"
                               "print('late cell done')\n'late'"})
    ui = Screen(coil_cmd("--attach", path), 100, 30)
    check(ui.wait(r"attached, \w+") and ui.wait(r"\[1\] agent") and
          ui.wait(r"│> a = 1$") and ui.wait(r"│  first cell says hi") and
          ui.wait(r"\[2\] agent") and ui.wait(r"│! oops") and
          ui.wait(r"│x ZeroDivisionError: division by zero") and
          ui.wait(r"\[3\] agent") and ui.wait(r"│> b = a \+ 1"),
          "the UI shows the cells from before it attached: header, "
          "origin, code, output, stderr, error", ui.text())
    r = agent.response(late)
    check(r.get("result") == "'late'", "the running cell ends", r)
    check(ui.wait(r"\[4\] agent") and ui.wait(r"│  late cell done") and
          ui.wait(r"result of cell 4 \(agent\): ok") and
          ui.wait(r"│ 'late'"),
          "and the cell running when it attached, with its output and "
          "result", ui.text())
    ui.keys("F3")
    check(ui.wait(r"\[1\] agent +ok .*a = 1") and
          ui.wait(r"\[2\] agent +error .*import sys") and
          ui.wait(r"\[4\] agent +ok .*import time"),
          "F3 lists every cell of the session", ui.text())
    ui.keys("Up", "Up", "Up", "Enter")
    check(ui.wait(r"cell 1, by the agent: ok") and
          ui.wait(r"first cell says hi"),
          "Enter shows the first one in full", ui.text())
    ui.keys("Escape", "Escape")
    ui.type("who = input('who? ')")
    check(ui.wait(r"^who\? ?$") and ui.wait(r"reads a line"),
          "attached, a cell's input() asks in the UI", ui.text())
    ui.type("Grace")
    check(ui.wait(r"^who +str +'Grace'"), "the typed line answers it",
          ui.text())
    v = {x["name"]: x["repr"] for x in agent.call({"op": "vars"})["vars"]}
    check(v.get("who") == "'Grace'", "and the agent's vars sees it", v)
    ui.type("input('again? ')")
    check(ui.wait(r"^again\? ?$"), "another input()", ui.text())
    ui.keys("C-d")
    check(ui.wait(r"EOFError") and ui.wait(r"^>>> ?$"),
          "Ctrl-D answers it with the end of input, and does not detach",
          ui.text())
    r = socket_call({"id": 5, "code": "input('nobody answers: ')"})
    check(r is not None and r["error"]["type"] == "EOFError",
          "a socket client that did not ask to answer gets EOFError", r)
    r = socket_call({"id": 6, "op": "input", "text": "x"})
    check(r is not None and r["status"] == "invalid",
          "and an input op with no cell of its own reading is refused", r)
    ui.keys("C-d")
    check(ui.wait(r"^EXITED 0"), "Ctrl-D detaches", ui.text())
    ui.close()
    ui = None

    # stdout and stderr in the order they came, not one after the other
    # (each write is let be read before the next)
    turns = ("import sys, time\n"
             "for i, s in enumerate([sys.stdout, sys.stderr] * 2):\n"
             "    print(i, 'to', 'err' if s is sys.stderr else 'out',"
             " file=s, flush=True)\n"
             "    time.sleep(0.2)\n")
    r = agent.run(turns)
    check(r["output"] == "0 to out\n2 to out\n" and
          r["stderr"] == "1 to err\n3 to err\n",
          "a cell whose streams take turns", r)
    hist = [m for m in attach_lines() if m.get("event") == "history"]
    check(hist and hist[-1].get("order") == [[1, 9], [2, 9], [1, 9], [2, 9]]
          and "order" not in hist[0],
          "its history line says the order the streams came in; a cell "
          "whose streams did not take turns has none",
          hist[-1] if hist else None)
    ui = Screen(coil_cmd("--attach", path), 100, 30)
    check(ui.wait(r"│  3 to err|│! 3 to err"), "the UI shows it",
          ui.text())
    shown = [ln.split("│", 1)[1].strip() for ln in ui.text().splitlines()
             if "│" in ln and " to " in ln]
    check(shown == ["0 to out", "! 1 to err", "2 to out", "! 3 to err"],
          "in the order the streams came", ui.text())
    ui.keys("C-d")
    check(ui.wait(r"^EXITED 0"), "and detaches", ui.text())
    ui.close()
    ui = None

    # the bound: the newest 200 cells
    for i in range(205):
        agent.send({"code": "n = %d" % i, "id": "n%d" % i})
    r = agent.response("n204", timeout=300)
    last = r.get("cell") or 0
    check(r.get("status") == "ok" and last > 205, "205 more cells", r)
    hist = [m for m in attach_lines() if m.get("event") == "history"]
    check(len(hist) == 200 and hist[0]["response"]["cell"] == last - 199
          and
          hist[-1]["request"]["code"] == "n = 204",
          "the history keeps the newest 200 cells",
          [len(hist)] + [m["response"].get("cell") for m in hist[:2]])
    check(agent.close() == 0, "the agent's session ends")
finally:
    if ui is not None:
        ui.close()
    agent.kill()
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
