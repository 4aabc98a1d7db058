#!/usr/bin/env python3
"""Figures in an attached UI: a `coil --agent --listen` session runs a
matplotlib cell before any UI comes; `coil --attach` in tmux then shows
that figure as half blocks (its red axes red) under its display line,
the bytes sent after the UI's hello asked for them; a figure the agent
makes while the UI is there (blue) shows too.  The agent's own answer
and a socket client that sent no hello get the lines they always got,
with no figure bytes; one that says hello with "figures" gets them,
base64 of a PNG, for the cells before it came and with the next
answer."""
import base64
import json
import os
import re
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, skip_all  # noqa: E402
import uilib  # noqa: E402
from uilib import Screen, coil_cmd, have_tmux  # noqa: E402

if not have_tmux():
    skip_all("tmux is not installed")
try:
    import matplotlib  # noqa: F401
except ImportError:
    skip_all("matplotlib is not installed (python3-matplotlib)")


def fig(colour):
    return ("import matplotlib; matplotlib.use('Agg'); "
            "import matplotlib.pyplot as plt; "
            "fig = plt.figure(figsize=(8, 2)); ax = fig.add_subplot(); "
            "ax.set_facecolor('%s'); plt.plot([1, 2, 3]); plt.show()"
            % colour)


SGR_COLOUR = re.compile(r"\x1b\[[34]8;5;(\d+)m")
RED = {196, 160}
BLUE = {21, 20, 19}


def colours(scr):
    """The colours of the screen's half blocks."""
    out = set()
    for line in scr.text(escapes=True).split("\n"):
        if "\u2580" in line:
            out |= {int(c) for c in SGR_COLOUR.findall(line)}
    return out


def wait_colours(scr, want, timeout=20):
    end = time.time() + timeout
    got = set()
    while time.time() < end:
        got = colours(scr)
        if got & want:
            return got
        time.sleep(0.1)
    return got


class Client:
    """A socket client as a script would be one: lines in and out."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(60)
        self.s.connect(path)
        self.buf = b""

    def send(self, msg):
        self.s.sendall(json.dumps(msg).encode() + b"\n")

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.s.recv(1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def until(self, pred):
        """The lines up to the first pred holds for (None: closed)."""
        seen = []
        while True:
            msg = self.line()
            if msg is None:
                return seen, None
            seen.append(msg)
            if pred(msg):
                return seen, msg

    def close(self):
        self.s.close()


def is_png(item):
    try:
        return base64.b64decode(item["base64"],
                                validate=True)[:8] == b"\x89PNG\r\n\x1a\n"
    except (KeyError, TypeError, ValueError):
        return False


sockdir = tempfile.mkdtemp(prefix="coil-fa.", dir="/tmp")
path = os.path.join(sockdir, "s")
agent = Coil("--listen", path, cwd=os.environ.get("TEST_WORKDIR"))
ui = plain = wants = None
try:
    r = agent.run(fig("red"))
    check(r["status"] == "ok" and r.get("display"),
          "the agent's cell made a figure", r)
    check("figure_data" not in r, "the agent's answer has no figure bytes",
          sorted(r))

    plain = Client(path)
    wants = Client(path)
    wants.send({"event": "hello", "figures": True})
    seen, f = wants.until(lambda m: m.get("event") == "figures")
    hist = [m for m in seen if m.get("event") == "history"]
    check(f is not None and len(hist) == 1 and
          f.get("seq") == hist[0]["seq"] and
          len(f.get("figure_data", [])) == 1 and
          is_png(f["figure_data"][0]),
          "a client whose hello asks for figures gets the history's",
          f and {k: v for k, v in f.items() if k != "figure_data"})

    ui = Screen(coil_cmd("--attach", path), 100, 40)
    check(ui.wait(r"attached, \w+"), "the UI attaches", ui.text())
    check(ui.wait_joined(r"display: image/png, [\d.]+ (bytes|KiB), "
                                   r"\d+x\d+, \S*cell-1-1\.png"),
          "the history's display line names the figure", ui.text())
    got = wait_colours(ui, RED)
    check(got & RED, "the figure from before the UI came shows as red "
          "half blocks", repr(got))

    r2 = agent.run(fig("blue"))
    check(r2["status"] == "ok" and "figure_data" not in r2,
          "the agent's next figure, its answer without bytes",
          sorted(r2))
    got = wait_colours(ui, BLUE)
    check(got & BLUE, "the figure made while the UI is there shows as "
          "blue half blocks", repr(got) + ui.text())

    _, ev = plain.until(lambda m: m.get("event") == "response" and
                        m["response"].get("cell") == r2["cell"])
    check(ev is not None and "figure_data" not in ev["response"] and
          ev["response"].get("display") == r2["display"],
          "a client that sent no hello gets the answer as before",
          ev and sorted(ev["response"]))
    _, ev = wants.until(lambda m: m.get("event") == "response" and
                        m["response"].get("cell") == r2["cell"])
    data = ev and ev["response"].get("figure_data")
    check(data is not None and len(data) == 1 and is_png(data[0]) and
          data[0].get("at") == 0,
          "the one that asked gets the answer's figure bytes with it",
          ev and sorted(ev["response"]))
finally:
    for c in (plain, wants):
        if c is not None:
            c.close()
    if ui is not None:
        ui.close()
    agent.close()
    try:
        os.rmdir(sockdir)
    except OSError:
        pass
done()
