#!/usr/bin/python3
"""options.py - a replay's recorded options never loosen the sandbox (TAP).

A transcript is a file a cell may have written (it lies in the work
dir, the cells' to write), and --replay takes the session's options from
its header.  So a hostile header that asks for --sandbox none,
--allow-write and --allow-read of a dir outside the work dir,
--allow-net and higher limits must change nothing of what holds cells
in: the replay runs under standard, the cells cannot write the dir nor
read the secret in it, and stderr names each option left out and how
to get it.  The controls: the same replay with --sandbox none on the
command line does write there (the test's own decoy); with
--allow-write DIR on the command line the write lands and the other
options are still left out.  A recording may tighten: a recorded strict
profile and a lower --max-file-size are taken, a higher one is not.
Notebooks and chat logs carry no options at all, whatever keys they
hold.

The decoys are the test's own: a dir under /var/tmp (which the standard
sandbox keeps from cells; checked first), holding a secret file; it is
removed however the test ends.
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import (COIL, Coil, check, cleanup, done, skip,  # noqa: E402
                      workdir)

SECRET = "COIL-DECOY-SECRET-r3pl4y"

decoy = tempfile.mkdtemp(prefix="coil-decoy-", dir="/var/tmp")
# gone however the test ends: it is the host's /var/tmp
atexit.register(shutil.rmtree, decoy, True)
with open(os.path.join(decoy, "secret"), "w") as f:
    f.write(SECRET + "\n")
PLANTED = os.path.join(decoy, "planted")

WORK = workdir("rep-opts-")
atexit.register(cleanup, WORK)


def replay(path, *args):
    p = subprocess.run([COIL, "--plain", "--replay", path, *args], cwd=WORK,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def decoy_files():
    return sorted(os.listdir(decoy))


def transcript(name, cells, options):
    """A transcript recorded in the work dir (its cells run under
    standard there), whose header's options are then replaced: what a
    cell of that session could have done to it."""
    path = os.path.join(WORK, name)
    with Coil("--record", path, cwd=WORK) as c:
        for code in cells:
            c.run(code)
        check(c.close() == 0, "%s: the recording session exits 0" % name,
              c.stderr_text())
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines(True)
    head = json.loads(lines[0])
    head["options"] = dict(head["options"], **options)
    head["sandbox"] = options.get("sandbox", head["sandbox"])
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(head) + "\n" + "".join(lines[1:]))
    return path


# Can a cell under standard read the decoy dir here at all?  If it can
# (a machine whose sandbox lacks a layer), the secret's checks say so.
with Coil("--no-record", cwd=WORK) as c:
    r = c.run("open(%r).read()" % os.path.join(decoy, "secret"))
    kept = (r.get("error") or {}).get("type") == "PermissionError"
    c.close()

WRITE = "open(%r, 'w').write('planted by a replayed cell')" % PLANTED
READ = "print(open(%r).read())" % os.path.join(decoy, "secret")
WHO = "import resource; resource.getrlimit(resource.RLIMIT_FSIZE)[0]"

evil = transcript("evil.jsonl", [WRITE, READ, WHO], {
    "sandbox": "none", "allow-write": [decoy], "allow-read": [decoy],
    "allow-net": True, "max-file-size": "2G", "memory": "64G"})

# ---- the attack: replayed under standard, each option left out said
rc, out, err = replay(evil)
check(rc == 0 and "In [3]:" in out, "the hostile transcript replays "
      "(exit 0)", out + err)
check(decoy_files() == ["secret"], "its cell wrote nothing in the dir its "
      "header asked --allow-write for", decoy_files())
if kept:
    check(SECRET not in out + err, "the secret is in no output", out + err)
else:
    skip("the secret is in no output", "this machine's sandbox lets cells "
         "read /var/tmp (coil --sandbox-report)")
check("standard sandbox" in out, "the cells ran under standard (the "
      "refusal says so)", out)
check("Out[3]: 1073741824" in out, "and under the default --max-file-size, "
      "not the recording's higher one", out)
warned = [l for l in err.splitlines() if l.startswith("coil: warning: ")]
want = {
    "--sandbox none": "the recording ran with --sandbox none: replayed "
    "under standard; pass --sandbox none yourself to replay it so",
    "--allow-write": "the recording ran with --allow-write %s: replayed "
    "without it; pass --allow-write %s yourself" % (decoy, decoy),
    "--allow-read": "the recording ran with --allow-read %s: replayed "
    "without it" % decoy,
    "--allow-net": "the recording ran with --allow-net: replayed without "
    "it; pass --allow-net yourself",
    "--max-file-size": "the recording ran with --max-file-size 2G: "
    "replayed with --max-file-size 1073741824; pass --max-file-size 2G",
    "--memory": "the recording ran with --memory 64G: replayed with "
    "--memory 4294967296",
}
for what, words in want.items():
    check(sum(words in l for l in warned) == 1, "stderr has one warning "
          "line naming %s and how to get it" % what, err)
check(len(warned) == len(want), "and no other warning", err)

# ---- control: --sandbox none on the command line lifts it
rc, out, err = replay(evil, "--sandbox", "none")
check(rc == 0 and os.path.exists(PLANTED), "control: with --sandbox none "
      "on the command line the cell writes the decoy dir", (out, err))
check(SECRET in out, "control: and reads the secret", out)
check("warning" not in err, "control: nothing is said of options that "
      "hold nothing under none", err)
os.unlink(PLANTED)

# ---- --allow-write on the command line: that one, and only it
rc, out, err = replay(evil, "--allow-write", decoy)
check(rc == 0 and os.path.exists(PLANTED), "with --allow-write DIR on the "
      "command line the write lands", (out, err))
check("--allow-write" not in err and "--sandbox none" in err and
      "--allow-read %s: replayed without it" % decoy in err,
      "and the options not given are still left out, and said", err)
os.unlink(PLANTED)

# ---- a recording may tighten: the stricter of the two
strict = transcript("strict.jsonl", [WHO, "import subprocess\n"
                                     "subprocess.run(['true']).returncode"],
                    {"sandbox": "strict", "max-file-size": "1M"})
rc, out, err = replay(strict)
check(rc == 0 and "Out[1]: 1048576" in out, "a recorded lower "
      "--max-file-size is taken", out + err)
check("strict sandbox" in out and "Out[2]" not in out, "a recorded strict "
      "profile is taken (no new process)", out + err)
check("warning" not in err, "tightening is not warned of", err)
rc, out, err = replay(strict, "--sandbox", "standard")
check(rc == 0 and "Out[2]: 0" in out, "the command line's --sandbox wins "
      "over the recording's", out + err)

# ---- notebooks, "# %%" files and chat logs carry no options, whatever
# keys they hold
OPTS = {"sandbox": "none", "allow-write": [decoy]}
NB = {"nbformat": 4, "nbformat_minor": 5, "metadata": {"options": OPTS},
      "options": OPTS,
      "cells": [{"cell_type": "code", "source": WRITE, "metadata": {},
                 "execution_count": 1, "outputs": []}]}
CHAT = {"options": OPTS,
        "messages": [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {
                "name": "python", "arguments": json.dumps({"code": WRITE})}}
        ]}]}
for what, name, text in (
        ("a notebook", "evil.ipynb", json.dumps(NB, indent=1)),
        ("a '# %%' file", "evil.py",
         "# %%\n# options: " + json.dumps(OPTS) + "\n" + WRITE + "\n"),
        ("a chat log", "evil.json", json.dumps(CHAT))):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    rc, out, err = replay(path)
    check(rc == 0 and "In [1]:" in out and "standard sandbox" in out and
          decoy_files() == ["secret"] and "warning" not in err,
          "%s with 'options' in it: replayed under standard, nothing "
          "written, nothing said" % what, out + err)

shutil.rmtree(decoy)
done()
