#!/usr/bin/python3
"""A venv is often .venv in the work dir, which cells write.  The
supervisor reads its pyvenv.cfg once, at start, through the dir it
walked and held then, and the sandbox binds what was held, never the
path again.  So:

- a cell that replaces .venv with a link to a decoy dir (outside every
  dir the sandbox shows) and then crashes the worker: the fresh worker
  (--checkpoints 0) sees nothing of the decoy under standard and strict,
  no mount of it, and the session goes on with ping naming the venv it
  started with.  Under none (the control) the fresh worker follows the
  link and imports the decoy's module: the path a cell controls does
  lead there, and only the sandbox keeps it out.
- a venv outside the work dir, renamed by the test and a decoy put at
  its path after the start, then init killed (the supervisor starts a
  new one, which builds the worker's root again): the new worker still
  reads the venv that was opened at start.

The decoy's pyvenv.cfg is a FIFO: anything that opened it to read
would hang there, and the session would stop answering.  The decoys
are the test's own, in a dir it makes under /var/tmp and removes."""
import atexit
import os
import shutil
import signal
import sys
import tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venvlib import make_venv, plant_module, site_packages  # noqa: E402
from coiltest import (Coil, check, check_exit, cleanup,  # noqa: E402
                      descendants, done, skip, wait_for, workdir)

decoy = tempfile.mkdtemp(prefix="coil-venv-decoy-", dir="/var/tmp")
atexit.register(shutil.rmtree, decoy, True)


def make_decoy(d):
    """A dir that looks like a venv with a module decoy_mod, and a FIFO
    for its pyvenv.cfg."""
    sp = os.path.join(d, "lib", "python%d.%d" % sys.version_info[:2],
                      "site-packages")
    os.makedirs(sp)
    os.makedirs(os.path.join(d, "bin"))
    with open(os.path.join(sp, "decoy_mod.py"), "w") as f:
        f.write("DECOY = True\n")
    os.mkfifo(os.path.join(d, "pyvenv.cfg"))


make_decoy(os.path.join(decoy, "cell"))
env = {k: v for k, v in os.environ.items()
       if k not in ("VIRTUAL_ENV", "PIP_FIND_LINKS")}

SWAP = """import os
os.rename(".venv", ".venv-moved")
os.symlink(%r, ".venv")
"""
CRASH = "import os; os._exit(3)"
LOOK = """import os, sys
seen = []
try:
    import decoy_mod
    seen.append("imported")
except ImportError:
    pass
try:
    os.listdir(%r)
    seen.append("listed")
except OSError:
    pass
with open("/proc/self/mountinfo") as f:
    if %r in f.read():
        seen.append("mounted")
seen
"""

for profile in ("none", "standard", "strict"):
    top = workdir("coil-venv-swap-")
    venv = make_venv(os.path.join(top, ".venv"), pip=False)
    plant_module(venv, "venv_mod", "OK = True\n")
    c = Coil("--sandbox", profile, "--workdir", top, "--no-record",
             "--checkpoints", "0", env=dict(env, VIRTUAL_ENV=venv))
    r = c.run("import venv_mod; venv_mod.OK")
    check(r.get("result") == "True", "%s: .venv's module imports" % profile,
          r)
    r = c.run(SWAP % os.path.join(decoy, "cell"))
    check(r["status"] == "ok" and os.path.islink(os.path.join(top, ".venv")),
          "%s: a cell replaced .venv with a link to the decoy" % profile, r)
    r = c.run(CRASH)
    check(r["status"] == "crashed", "%s: then crashed the worker" % profile,
          r.get("status"))
    r = c.run(LOOK % (decoy, decoy), timeout=60)
    seen = r.get("result")
    if profile == "none":
        check(seen is not None and "imported" in seen, "none (control): the "
              "fresh worker follows the cell's link to the decoy", r)
    else:
        check(seen == "[]", "%s: the fresh worker sees nothing of the decoy "
              "(no import, no listing, no mount)" % profile, r)
    ping = c.call({"op": "ping"})
    check(ping.get("venv") == venv, "%s: the session goes on with the venv "
          "it started with" % profile, ping.get("venv"))
    check_exit(c, "%s: coil exits 0" % profile)
    cleanup(top)

# a venv outside the work dir, its path changed after the start, init
# killed: the new init binds the dir opened at start
top = workdir("coil-venv-held-")
wd = os.path.join(top, "work")
os.makedirs(wd)
ext = os.path.join(decoy, "ext")
os.makedirs(ext)
venv = make_venv(os.path.join(ext, "venv"), pip=False)
plant_module(venv, "held_mod", "HELD = True\n")
c = Coil("--sandbox", "standard", "--workdir", wd, "--no-record",
         "--checkpoints", "0", "--venv", venv, env=env)
r = c.run("import held_mod; held_mod.HELD")
check(r.get("result") == "True", "standard: a venv outside the work dir "
      "imports (its own bind)", r)
# the sandbox's report: ping has it once the first worker is up
ping = wait_for(lambda: (lambda p: p if "mechanisms" in (
    p.get("sandbox") or {}) else None)(c.call({"op": "ping"})), timeout=60)
mount = (((ping or {}).get("sandbox") or {}).get("mechanisms") or {}).get(
    "mount namespace", {}).get("state")
if mount != "on":
    skip("the new init binds the venv opened at start", "no mount "
         "namespace here (%s): Landlock alone, no bind" % mount)
else:
    os.rename(venv, venv + "-moved")
    make_decoy(venv)
    inits = [p.pid for p in descendants(c.pid)
             if p.comm == "coil-init" and not p.zombie]
    check(len(inits) == 1, "coil has one init", inits)
    os.kill(inits[0], signal.SIGKILL)
    # The old worker may answer a cell or two before coil hears of its
    # init's death: cells run until an answer says a new init started,
    # then one more that the new init's worker answers.
    told = []

    def replaced():
        r = c.run("1")
        if any("init process was killed" in w
               for w in r.get("warnings") or []):
            told.append(r)
        return r if told and r["status"] == "ok" else None
    r = wait_for(replaced, timeout=60)
    check(told and r["status"] == "ok", "a new init starts a worker, and an "
          "answer says so", (told, r))
    new = wait_for(lambda: [p.pid for p in descendants(c.pid)
                            if p.comm == "coil-init" and not p.zombie])
    check(new and new != inits, "... under a new init", new)
    r = c.run("""import sys
out = []
for m in ("held_mod", "decoy_mod"):
    try:
        __import__(m)
        out.append(m)
    except ImportError:
        pass
out""")
    check(r.get("result") == "['held_mod']", "the new worker reads the venv "
          "opened at start, not the decoy now at its path", r)
    check(os.path.exists(os.path.join(venv + "-moved", "lib")) and
          os.path.isdir(site_packages(venv + "-moved")),
          "the venv is still where the test moved it")
check_exit(c, "coil exits 0")
cleanup(top)
done()
