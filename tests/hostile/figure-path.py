#!/usr/bin/python3
"""A display entry's "path" is the worker's word: the supervisor reads a
figure back (into a notebook by %save or --export, into an MCP image)
only when it is a file the cell wrote right in the figure dir.

The decoy is the test's own: a PNG-looking file in a directory the
standard sandbox keeps from cells (checked first: the cell cannot open
it).  A cell then names it as a figure in four ways (its own path, a
path through "..", a symbolic link in the figure dir, and the figure
dir itself swapped for a link); none of its bytes may reach the
notebook or the MCP answer.  The control: a PNG the cell wrote in the
figure dir, named the same way, does reach both.
"""
import atexit
import base64
import json
import os
import shutil
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, cleanup, done, skip,  # noqa: E402
                      workdir)

SECRET = b"COIL-DECOY-NOT-FOR-CELLS"
decoy_dir = tempfile.mkdtemp(prefix="coil-decoy-", dir="/var/tmp")
# gone however the test ends: it is the host's /var/tmp
atexit.register(shutil.rmtree, decoy_dir, True)
decoy = os.path.join(decoy_dir, "secret.png")
with open(decoy, "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + SECRET)
OK = b"\x89PNG\r\n\x1a\n" + b"OK-FIGURE"

d = workdir()
fig = os.path.join(d, ".coil", "figures")

NAME = """import sys
sys.modules["_coil"]._shown.append({"type": "image/png", "path": %r})
"""
cells = [
    "import os\nos.makedirs(%r, exist_ok=True)\n"
    "open(%r, 'wb').write(%r)\n" % (fig, os.path.join(fig, "ok.png"), OK)
    + NAME % os.path.join(fig, "ok.png"),
    NAME % decoy,
    NAME % (fig + "/../../../../../../../.." + decoy),
    "import os\nos.symlink(%r, %r)\n" % (decoy, os.path.join(fig, "l.png"))
    + NAME % os.path.join(fig, "l.png"),
]
swap = ("import os\nos.rename(%r, %r)\nos.symlink(%r, %r)\n"
        % (fig, fig + ".away", decoy_dir, fig)
        + NAME % os.path.join(fig, "secret.png"))


def images(nb):
    out = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if "image/png" in o.get("data", {}):
                out.append(base64.b64decode(o["data"]["image/png"]))
    return out


# Containment first: the sandbox keeps the decoy from cells.
with Coil("--workdir", d, "--no-record") as c:
    r = c.run("open(%r, 'rb').read()" % decoy)
    if (r.get("error") or {}).get("type") == "PermissionError":
        check(True, "a cell cannot read the decoy itself")
    else:
        # the rest still holds: the supervisor reads no such file
        skip("a cell cannot read the decoy itself", "this machine's "
             "sandbox lets cells read /var/tmp (coil --sandbox-report)")

    def save(name):
        r = c.run("%save " + name)
        check(r.get("status") == "ok", "%save writes " + name, r)
        with open(os.path.join(d, name)) as f:
            return images(json.load(f))

    for code in cells:
        r = c.run(code)
        check(r.get("status") == "ok", "the cell names its figure", r)
    got = save("nb.ipynb")
    check(OK in got, "control: the cell's own figure is in the notebook",
          got)
    check(not any(SECRET in g for g in got),
          "no figure named outside the figure dir, through '..' or "
          "through a link in it reaches the notebook", got)
    r = c.run(swap)
    check(r.get("status") == "ok", "the cell swaps the figure dir", r)
    got = save("nb2.ipynb")
    check(not any(SECRET in g for g in got),
          "nor one through a figure dir swapped for a link", got)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

# Again through the MCP server's image content.
os.unlink(fig)
os.rename(fig + ".away", fig)
os.unlink(os.path.join(fig, "l.png"))
with Coil(argv=[COIL, "--mcp", "--workdir", d, "--no-record"]) as m:
    seen = []
    for i, code in enumerate(cells + [swap], 1):
        m.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "run_python",
                           "arguments": {"code": code}}})
        r = m.response(i)
        res = r.get("result") or {}
        check(res.get("isError") is False, "tools/call %d runs" % i, r)
        seen += [base64.b64decode(x["data"]) for x in res.get("content", [])
                 if x.get("type") == "image"]
    check(OK in seen, "control: the cell's own PNG is an MCP image", seen)
    check(not any(SECRET in s for s in seen),
          "no decoy bytes in any MCP image", seen)
    check(m.close() == 0, "coil --mcp exits 0", m.stderr_text())

# The figure dir there at start is held open: swapped for a link to the
# decoy's dir later, it is still the one that was there.
d2 = workdir()
fig2 = os.path.join(d2, ".coil", "figures")
os.makedirs(fig2)
with open(os.path.join(fig2, "ok.png"), "wb") as f:
    f.write(OK)
with Coil("--workdir", d2, "--no-record") as c:
    r = c.run(NAME % os.path.join(fig2, "ok.png"))
    r = c.run("import os\nos.rename(%r, %r)\nos.symlink(%r, %r)\n"
              % (fig2, fig2 + ".away", decoy_dir, fig2)
              + NAME % os.path.join(fig2, "secret.png"))
    check(r.get("status") == "ok", "the cell swaps the figure dir it was "
          "started with", r)
    r = c.run("%save nb3.ipynb")
    with open(os.path.join(d2, "nb3.ipynb")) as f:
        got = images(json.load(f))
    check(OK in got and not any(SECRET in g for g in got),
          "the dir held since start: its figure comes, the decoy not", got)
    check(c.close() == 0, "coil exits 0", c.stderr_text())
cleanup(d2)

shutil.rmtree(decoy_dir)
cleanup(d)
done()
