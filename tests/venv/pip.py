#!/usr/bin/python3
"""%pip and !pip in a cell run the venv's own pip on it, offline: under
--sandbox standard, with the venv in --allow-write and a directory of
wheels the test wrote by hand, `%pip install --find-links DIR tinypkg`
installs it and the next cell imports it; !pip, !pip3 and
!python -m pip do the same, and so does PIP_FIND_LINKS; the package's
console script is on the cells' PATH.  Without --find-links (and
without --allow-net) the answer says what to pass, at once; a venv the
sandbox does not let cells write gets the --allow-write to pass; with no
venv %pip says how to start coil with one; under strict (no processes)
it is refused.  No network: pip gets --no-index."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venvlib import make_venv, make_wheel, site_packages  # noqa: E402
from coiltest import Coil, check, check_exit, cleanup, done, workdir  # noqa

top = workdir("coil-pip-")
wd = os.path.join(top, "work")
os.makedirs(wd)
venv = make_venv(os.path.join(top, "venv"), pip=True)
wheels = os.path.join(wd, "wheels")
for i, name in enumerate(("tinypkg", "tinypkg2", "tinypkg3", "tinypkg4",
                          "tinypkg5")):
    make_wheel(wheels, name, value=42 + i)
env = {k: v for k, v in os.environ.items()
       if k not in ("VIRTUAL_ENV", "PIP_FIND_LINKS")}


def session(*args, profile="standard"):
    return Coil("--sandbox", profile, "--workdir", wd, "--no-record",
                "--venv", venv, *args, env=env)


def message(r):
    return (r.get("error") or {}).get("message", "")


with session("--allow-write", venv) as c:
    r = c.run("%pip install tinypkg", timeout=30)
    m = message(r)
    check(r["status"] == "error" and "--find-links DIR" in m and
          "PIP_FIND_LINKS" in m and "--allow-net" in m and
          not r.get("effects"),
          "without --find-links the answer says what to pass, at once "
          "(no pip started)", r)
    r = c.run("%pip install --find-links wheels tinypkg", timeout=300)
    check(r["status"] == "ok" and "Successfully installed tinypkg-0.1" in
          r["output"], "%pip install --find-links DIR installs the wheel",
          r)
    check(any(e.get("cmd", "").startswith(venv + "/bin/python -m pip "
                                          "install --no-index")
              for e in r.get("effects", [])),
          "... with the venv's own pip, given --no-index", r.get("effects"))
    r = c.run("import tinypkg; tinypkg.VALUE")
    check(r.get("result") == "42", "the next cell imports it", r)
    r = c.run("!tinypkg-hello")
    check(r.get("output") == "hello from tinypkg\n", "its console script "
          "is on the cells' PATH", r)
    r = c.run("!pip install -f wheels tinypkg2", timeout=300)
    check(r["status"] == "ok" and "Successfully installed" in r["output"],
          "!pip install -f DIR installs", r)
    r = c.run("import tinypkg2; tinypkg2.VALUE")
    check(r.get("result") == "43", "... and it imports", r)
    r = c.run("%env PIP_FIND_LINKS=wheels\n!python -m pip install tinypkg3",
              timeout=300)
    check(r["status"] == "ok" and "Successfully installed" in r["output"],
          "!python -m pip with PIP_FIND_LINKS set by a cell installs", r)
    r = c.run("import tinypkg3; tinypkg3.VALUE")
    check(r.get("result") == "44", "... and it imports", r)
    r = c.run("!pip3 list", timeout=300)
    check(r["status"] == "ok" and "tinypkg3" in r["output"],
          "!pip3 list lists what the venv holds", r)
    r = c.run("x = !pip list\n[l.split()[0] for l in x if 'tinypkg' in l]",
              timeout=300)
    check(r.get("result") == "['tinypkg', 'tinypkg2', 'tinypkg3']",
          "x = !pip list: pip's output as lines", r)
    r = c.run("import os\nos.environ.pop('PIP_FIND_LINKS')\n"
              "%pip -q --log pip.log install tinypkg5", timeout=30)
    m = message(r)
    check(r["status"] == "error" and "--find-links DIR" in m and
          not r.get("effects"), "general options before the command: "
          "the offline rule still holds, at once", r)
    r = c.run("%pip -q install -f wheels tinypkg5", timeout=300)
    check(r["status"] == "ok" and any(
        e.get("cmd", "").startswith(venv + "/bin/python -m pip -q install "
                                    "--no-index")
        for e in r.get("effects", [])),
        "... and --no-index goes after the command", r)
    r = c.run("!pip list 2>/dev/null | grep -c tinypkg", timeout=300)
    check(r["status"] == "ok" and r.get("output") == "4\n",
          "!pip in a pipeline is the shell's, with the venv's pip", r)
    r = c.run("%pip uninstall -y tinypkg3", timeout=300)
    check(r["status"] == "ok" and not os.path.exists(
        os.path.join(site_packages(venv), "tinypkg3")),
        "%pip uninstall -y removes it", r)
    check_exit(c)

# a venv the sandbox lets cells read but not write
with session() as c:
    r = c.run("%pip install --find-links wheels tinypkg4", timeout=30)
    check(r["status"] == "error" and "--allow-write %s" % venv in message(r),
          "a venv not in --allow-write: the answer names --allow-write", r)
    r = c.run("!pip install --find-links wheels tinypkg4", timeout=30)
    check(r["status"] == "error" and "--allow-write %s" % venv in message(r),
          "... !pip too", r)
    check(not os.path.exists(os.path.join(site_packages(venv), "tinypkg4")),
          "... and nothing was installed")
    r = c.run("import tinypkg; tinypkg.VALUE")
    check(r.get("result") == "42", "what is installed imports", r)
    check_exit(c)

# a venv whose python leads outside what cells see (as pyenv's do)
far = make_venv(os.path.join(top, "far"), pip=False)
os.unlink(os.path.join(far, "bin", "python"))
os.symlink(os.path.join(top, "gone", "python3"), os.path.join(far, "bin",
                                                             "python"))
with Coil("--sandbox", "standard", "--workdir", wd, "--no-record",
          "--venv", far, "--allow-write", far, env=env) as c:
    r = c.run("%pip list", timeout=60)
    check(r["status"] == "error" and "cells cannot reach" in message(r) and
          "/usr/bin/python3 -m venv" in message(r),
          "a venv whose python leads nowhere here: %pip says why", r)
    check_exit(c)

with session(profile="strict") as c:
    r = c.run("%pip list")
    check(r["status"] == "error" and "strict" in message(r),
          "strict: %pip is refused (no processes), saying why", r)
    check_exit(c)

with Coil("--sandbox", "standard", "--workdir", wd, "--no-record",
          env=env) as c:
    r = c.run("%pip install tinypkg")
    m = message(r)
    check(r["status"] == "error" and "--venv DIR" in m and "activated venv"
          in m, "no venv: %pip says to start coil with --venv DIR", r)
    r = c.run("!pip install tinypkg")
    check(r["status"] == "error" and "--venv DIR" in message(r),
          "... !pip too", r)
    check_exit(c)

cleanup(top)
done()
