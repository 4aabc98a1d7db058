#!/usr/bin/python3
"""A display entry's "path" is the worker's word, and the supervisor
never opens a figure by its name: the worker opens each image file
itself, with the sandbox's rights, and hands the descriptor over with
its reply; the supervisor checks it (a regular file open for reading,
with one link, of at most 32 MiB) and reads the bytes at once.  So a
notebook (%save, --export) and an MCP image hold only what a cell could
have read itself.

The decoys are the test's own: a PNG-looking file in a directory the
sandbox keeps from cells (checked first: the cell cannot open it), a
file outside the work dir that a hard link in the figure dir names, a
33 MiB sparse file, a FIFO.  Under standard and strict:

- a cell of an earlier session replaces .coil/figures with a link to
  the decoy's dir; the next session names a figure through it;
- cells name the decoy by its path, through "..", through a link in the
  figure dir, and name the hard link, the huge file, the FIFO, a device
  and a directory;

and none of those bytes may reach the notebook of %save, the one of
--export, or an MCP image, while the cell's own figure does (the
control), the session goes on, and nothing is made in the decoy's dir.
Under --sandbox none the worker has the user's rights: there the decoy
named by its path does reach the notebook (so the check can see it),
and the supervisor's own checks (one link, the size) still hold.
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

PNG = b"\x89PNG\r\n\x1a\n"
SECRET = b"COIL-DECOY-NOT-FOR-CELLS"
HARD = b"COIL-DECOY-HARD-LINKED"
HUGE = b"COIL-DECOY-HUGE-FILE"
OK = PNG + b"OK-FIGURE"
BAD = (SECRET, HARD, HUGE)

decoy_dir = tempfile.mkdtemp(prefix="coil-decoy-", dir="/var/tmp")
# gone however the test ends: it is the host's /var/tmp
atexit.register(shutil.rmtree, decoy_dir, True)
decoy = os.path.join(decoy_dir, "secret.png")
with open(decoy, "wb") as f:
    f.write(PNG + SECRET)
DECOY_FILES = sorted(os.listdir(decoy_dir))

NAME = """import sys
sys.modules["_coil"]._shown.append({"type": "image/png", "path": %r})
"""


def images(nb):
    out = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            if "image/png" in o.get("data", {}):
                out.append(base64.b64decode(o["data"]["image/png"]))
    return out


def leaked(got):
    return [b for b in BAD if any(b in g for g in got)]


def plant(d, fig):
    """What a cell cannot make, made by the test in the figure dir: a
    hard link to a file outside the work dir (its sibling, on the same
    file system), a 33 MiB sparse file, a FIFO."""
    outside = os.path.join(os.path.dirname(d), os.path.basename(d) + ".hl")
    os.makedirs(outside)
    with open(os.path.join(outside, "f.png"), "wb") as f:
        f.write(PNG + HARD)
    os.link(os.path.join(outside, "f.png"), os.path.join(fig, "hard.png"))
    with open(os.path.join(fig, "huge.png"), "wb") as f:
        f.write(PNG + HUGE)
        f.truncate(33 << 20)
    os.mkfifo(os.path.join(fig, "fifo.png"))
    return outside


def cells(fig):
    """The cells that name figures, the control first: (what, code)."""
    return [
        ("its own PNG", "import os\nos.makedirs(%r, exist_ok=True)\n"
         "open(%r, 'wb').write(%r)\n" % (fig, os.path.join(fig, "ok.png"), OK)
         + NAME % os.path.join(fig, "ok.png")),
        ("the decoy's path", NAME % decoy),
        ("a path through '..'",
         NAME % (fig + "/../../../../../../../.." + decoy)),
        ("a link in the figure dir", "import os\nos.symlink(%r, %r)\n"
         % (decoy, os.path.join(fig, "l.png"))
         + NAME % os.path.join(fig, "l.png")),
        ("a hard link", NAME % os.path.join(fig, "hard.png")),
        ("a 33 MiB file", NAME % os.path.join(fig, "huge.png")),
        ("a FIFO", NAME % os.path.join(fig, "fifo.png")),
        ("a device", NAME % "/dev/zero"),
        ("a directory", NAME % fig),
    ]


def earlier_session(profile, d, fig):
    """A cell of an earlier session makes the figure dir a link to the
    decoy's dir, for the next session to start with."""
    with Coil("--sandbox", profile, "--workdir", d, "--no-record") as c:
        r = c.run("import os\nos.makedirs(%r, exist_ok=True)\n"
                  "os.symlink(%r, %r)" % (os.path.dirname(fig), decoy_dir,
                                          fig))
        check(r.get("status") == "ok", "%s: a cell of an earlier session "
              "makes the figure dir a link to the decoy's dir" % profile, r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())


def notebook_session(profile, d, fig, out):
    """The session after it: a figure through the planted link, then the
    cells; %save's notebook, then --export's.  Returns both notebooks'
    images, and the dir plant() made."""
    export = os.path.join(out, "export.ipynb")
    with Coil("--sandbox", profile, "--workdir", d, "--no-record",
              "--export", export) as c:
        if profile != "none":
            r = c.run("open(%r, 'rb').read()" % decoy)
            if (r.get("error") or {}).get("type") == "PermissionError":
                check(True, "%s: a cell cannot read the decoy itself"
                      % profile)
            else:
                skip("%s: a cell cannot read the decoy itself" % profile,
                     "this machine's sandbox lets cells read /var/tmp "
                     "(coil --sandbox-report)")
        r = c.run(NAME % os.path.join(fig, "secret.png"))
        check(r.get("status") == "ok", "%s: a cell names a figure through "
              "the figure dir an earlier cell made a link" % profile, r)
        # the person mends it (the sandbox's audit hook, which resolves
        # the link, keeps cells from removing it)
        os.unlink(fig)
        os.makedirs(fig)
        outside = plant(d, fig)
        for what, code in cells(fig):
            r = c.run(code, timeout=30)
            check(r.get("status") == "ok" and r.get("display"),
                  "%s: a cell names as a figure %s" % (profile, what), r)
        r = c.run("%save nb.ipynb")
        check(r.get("status") == "ok", "%s: %%save writes nb.ipynb" % profile,
              r)
        with open(os.path.join(d, "nb.ipynb")) as f:
            saved = images(json.load(f))
        r = c.run("6 * 7")
        check(r.get("result") == "42", "%s: the session goes on" % profile, r)
        check(c.close() == 0, "%s: coil exits 0" % profile, c.stderr_text())
    with open(export) as f:
        exported = images(json.load(f))
    return saved, exported, outside


def mcp_session(profile, d, fig):
    """The same cells through the MCP server: its images."""
    os.unlink(os.path.join(fig, "l.png"))
    seen = []
    with Coil(argv=[COIL, "--mcp", "--sandbox", profile, "--workdir", d,
                    "--no-record"]) as m:
        for i, (what, code) in enumerate(cells(fig), 1):
            m.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                    "params": {"name": "run_python",
                               "arguments": {"code": code}}})
            r = m.response(i)
            res = r.get("result") or {}
            check(res.get("isError") is False, "%s: tools/call names %s"
                  % (profile, what), r)
            seen += [base64.b64decode(x["data"])
                     for x in res.get("content", [])
                     if x.get("type") == "image"]
        check(m.close() == 0, "%s: coil --mcp exits 0" % profile,
              m.stderr_text())
    return seen


for profile in ("standard", "strict"):
    d = workdir()
    out = workdir()
    fig = os.path.join(d, ".coil", "figures")
    earlier_session(profile, d, fig)
    saved, exported, outside = notebook_session(profile, d, fig, out)
    check(OK in saved, "%s: control: the cell's own figure is in %%save's "
          "notebook" % profile, saved)
    check(not leaked(saved), "%s: no decoy's bytes in %%save's notebook "
          "(by path, '..', a link, the figure dir linked before the start, "
          "a hard link, a huge file, a FIFO, a device, a dir)" % profile,
          leaked(saved))
    check(OK in exported, "%s: control: the cell's own figure is in "
          "--export's notebook" % profile, exported)
    check(not leaked(exported), "%s: no decoy's bytes in --export's "
          "notebook" % profile, leaked(exported))
    seen = mcp_session(profile, d, fig)
    check(OK in seen, "%s: control: the cell's own PNG is an MCP image"
          % profile, seen)
    check(not leaked(seen), "%s: no decoy's bytes in any MCP image"
          % profile, leaked(seen))
    check(sorted(os.listdir(decoy_dir)) == DECOY_FILES, "%s: nothing was "
          "made in the decoy's dir" % profile, os.listdir(decoy_dir))
    shutil.rmtree(outside)
    cleanup(d)
    cleanup(out)

# --sandbox none: the worker has the user's rights, and so what it hands
# over may be the decoy (the test's own): the check can see it.  The
# supervisor's own checks still hold.
d = workdir()
out = workdir()
fig = os.path.join(d, ".coil", "figures")
earlier_session("none", d, fig)
saved, exported, outside = notebook_session("none", d, fig, out)
check(SECRET in b"".join(saved) and SECRET in b"".join(exported),
      "none: control: the decoy the worker can read reaches both notebooks",
      leaked(saved))
check(HARD not in b"".join(saved + exported) and
      HUGE not in b"".join(saved + exported),
      "none: a hard link and a file over 32 MiB do not", leaked(saved))
shutil.rmtree(outside)
cleanup(d)
cleanup(out)

# A --figure-dir outside the work dir joins --allow-write: one through a
# link in a dir cells may write (--allow-write OUT here: a cell of an
# earlier session could have planted it) is refused, and nothing is made
# where it points.
d = workdir()
out = workdir()
os.symlink(decoy_dir, os.path.join(out, "ln"))
c = Coil("--workdir", d, "--no-record", "--allow-write", out,
         "--figure-dir", os.path.join(out, "ln", "figs"))
status = c.close()
check(status == 2 and "symbolic link" in c.stderr_text(),
      "a --figure-dir through a link is refused, saying why",
      (status, c.stderr_text()))
check(sorted(os.listdir(decoy_dir)) == DECOY_FILES,
      "and nothing is made where the link points", os.listdir(decoy_dir))
cleanup(d)
cleanup(out)

shutil.rmtree(decoy_dir)
done()
