#!/usr/bin/python3
"""The venv cells use: $VIRTUAL_ENV, --venv DIR (which wins) and
--no-venv; its site-packages on sys.path as its own python puts them
(after the standard library, .pth files processed, the system's
site-packages only with include-system-site-packages = true), its
scripts first on PATH, VIRTUAL_ENV in the cells' environment, ping's
"venv" and the transcript's header; a venv for another Python and a dir
that is no venv refused at start.  The venvs (python3 -m venv
--without-pip) and their modules are the test's own, in dirs it makes
outside the work dir, so the sandbox must bind them."""
import json
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from venvlib import (make_venv, plant_module, python_version,  # noqa: E402
                     set_cfg, site_packages)
from coiltest import (COIL, Coil, check, check_exit, cleanup,  # noqa: E402
                      done, workdir)

top = workdir("coil-venv-")
wd = os.path.join(top, "work")
os.makedirs(wd)
v1 = make_venv(os.path.join(top, "v1"), pip=False)
v2 = make_venv(os.path.join(top, "v2"), pip=False)
vsys = make_venv(os.path.join(top, "vsys"), pip=False, system_site=True)
plant_module(v1, "mod_one", "WHO = 'v1'\n")
plant_module(v2, "mod_two", "WHO = 'v2'\n")
# a .pth file naming a dir of its own, as an editable install does
extra = os.path.join(v1, "extra")
os.makedirs(extra)
with open(os.path.join(extra, "pth_mod.py"), "w") as f:
    f.write("HERE = True\n")
with open(os.path.join(site_packages(v1), "coil-test.pth"), "w") as f:
    f.write(extra + "\n")
# a console script in bin/, as pip would install one
with open(os.path.join(v1, "bin", "coil-venv-hello"), "w") as f:
    f.write("#!/bin/sh\necho hello from the venv\n")
os.chmod(os.path.join(v1, "bin", "coil-venv-hello"), 0o755)

base_env = {k: v for k, v in os.environ.items()
            if k not in ("VIRTUAL_ENV", "PIP_FIND_LINKS")}
has_numpy = subprocess.run(["/usr/bin/python3", "-c", "import numpy"],
                           capture_output=True).returncode == 0


def session(profile, *args, venv_env=None):
    env = dict(base_env)
    if venv_env is not None:
        env["VIRTUAL_ENV"] = venv_env
    if "--record" not in args:
        args += ("--no-record",)
    return Coil("--sandbox", profile, "--workdir", wd, *args, env=env)


def value(c, code):
    r = c.run(code)
    return r.get("result") if r["status"] == "ok" else r


def imports(c, mod):
    r = c.run("import %s" % mod)
    return r["status"] == "ok"


# $VIRTUAL_ENV, under each profile
for profile in ("none", "standard", "strict"):
    with session(profile, venv_env=v1) as c:
        ping = c.call({"op": "ping"})
        check(ping.get("venv") == v1, "%s: ping names $VIRTUAL_ENV's venv"
              % profile, ping.get("venv"))
        check(value(c, "import mod_one; mod_one.WHO") == "'v1'",
              "%s: a module of the venv imports" % profile)
        check(value(c, "import pth_mod; pth_mod.HERE") == "True",
              "%s: its .pth file is processed" % profile)
        r = value(c, "import sys; [p for p in sys.path if 'v1' in p or "
                  "'python3.' in p]")
        check(isinstance(r, str) and r.index("lib/python3.") <
              r.index(site_packages(v1)), "%s: the venv's site-packages "
              "come after the standard library" % profile, r)
        check(value(c, "import sys; sys.prefix") == repr(v1),
              "%s: sys.prefix is the venv" % profile)
        if has_numpy:
            check(not imports(c, "numpy"), "%s: the system's numpy is not "
                  "importable (include-system-site-packages = false)"
                  % profile)
        check(value(c, "import os; os.environ.get('VIRTUAL_ENV')")
              == repr(v1), "%s: VIRTUAL_ENV in the cells' environment"
              % profile)
        check(value(c, "import os; os.environ['PATH'].split(':')[0]")
              == repr(os.path.join(v1, "bin")),
              "%s: the venv's bin/ is first on PATH" % profile)
        if profile != "strict":
            r = c.run("!coil-venv-hello")
            check(r.get("output") == "hello from the venv\n",
                  "%s: !script finds the venv's scripts" % profile, r)
        r = c.run("open(%r, 'w')" % os.path.join(site_packages(v1), "x"))
        if profile != "none":
            check(r["status"] == "error", "%s: a venv not in --allow-write "
                  "is read-only to cells" % profile, r.get("error"))
        check_exit(c, "%s: coil exits 0" % profile)

# --venv wins over $VIRTUAL_ENV; --no-venv ignores it
with session("standard", "--venv", v2, venv_env=v1) as c:
    check(c.call({"op": "ping"}).get("venv") == v2, "--venv wins over "
          "$VIRTUAL_ENV (ping)")
    check(imports(c, "mod_two") and not imports(c, "mod_one"),
          "--venv wins over $VIRTUAL_ENV (imports)")
    check_exit(c)
with session("standard", "--no-venv", venv_env=v1) as c:
    check(c.call({"op": "ping"}).get("venv") is None,
          "--no-venv: ping says null")
    check(not imports(c, "mod_one"), "--no-venv: $VIRTUAL_ENV's modules "
          "are not importable")
    check(value(c, "import os; 'VIRTUAL_ENV' in os.environ") == "False",
          "--no-venv: no VIRTUAL_ENV in the cells' environment")
    check(value(c, "import os; %r in os.environ['PATH']"
                % os.path.join(v1, "bin")) == "False",
          "--no-venv: its bin/ is not on PATH")
    check_exit(c)
with session("none", "--no-venv", venv_env=v1) as c:
    check(value(c, "import os; 'VIRTUAL_ENV' in os.environ") == "False",
          "--no-venv under none: no VIRTUAL_ENV either")
    check_exit(c)

# include-system-site-packages = true
if has_numpy:
    with session("standard", "--venv", vsys) as c:
        check(imports(c, "numpy"), "include-system-site-packages = true: "
              "the system's numpy imports")
        r = value(c, "import sys; [p for p in sys.path if 'packages' in p]")
        check(isinstance(r, str) and r.index(vsys) < r.index("/usr/lib/"),
              "... after the venv's own site-packages", r)
        check_exit(c)

# no include-system-site-packages line: true, as site.py reads it
if has_numpy:
    noline = os.path.join(top, "noline")
    shutil.copytree(v1, noline, symlinks=True)
    cfg = os.path.join(noline, "pyvenv.cfg")
    with open(cfg) as f:
        kept = [ln for ln in f if not ln.lower().startswith("include-")]
    with open(cfg, "w") as f:
        f.writelines(kept)
    with session("standard", "--venv", noline) as c:
        check(imports(c, "numpy"), "no include-system-site-packages line: "
              "the system's numpy imports, as site.py has it")
        check_exit(c)

# the transcript's header
rec = os.path.join(top, "t.jsonl")
with session("standard", "--venv", v1, "--record", rec) as c:
    c.run("1")
    check_exit(c)
with open(rec) as f:
    head = json.loads(f.readline())
check(head.get("venv") == v1, "the transcript's header names the venv",
      head)

# refused at start: another Python, no pyvenv.cfg, not a dir
ver = python_version()
for key, val in (("version", "3.99.1"), ("version_info", "3.99.1.final.0")):
    other = os.path.join(top, "other-" + key)
    shutil.copytree(v1, other, symlinks=True)
    set_cfg(other, key, val)
    r = subprocess.run([COIL, "--agent", "--no-record", "--workdir", wd,
                        "--venv", other], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, env=base_env)
    check(r.returncode == 2 and "is for Python 3.99, coil embeds %s" % ver
          in r.stderr and "--venv" in r.stderr, "a venv for another Python "
          "(%s) is refused naming both versions" % key, r.stderr)
    r = subprocess.run([COIL, "--agent", "--no-record", "--workdir", wd],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, env=dict(base_env, VIRTUAL_ENV=other))
    check(r.returncode == 2 and "3.99" in r.stderr and "--no-venv" in
          r.stderr, "... from $VIRTUAL_ENV too, pointing at --no-venv",
          r.stderr)
for bad, words in ((wd, "is not a virtualenv"),
                   (os.path.join(top, "missing"), "No such file")):
    r = subprocess.run([COIL, "--agent", "--no-record", "--venv", bad],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, env=base_env)
    check(r.returncode == 2 and words in r.stderr, "--venv %s: refused "
          "(%s)" % (os.path.basename(bad), words), r.stderr)
r = subprocess.run([COIL, "--agent", "--venv", v1, "--no-venv"],
                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                   env=base_env)
check(r.returncode == 2 and "disagree" in r.stderr, "--venv with --no-venv "
      "is a usage error", r.stderr)

cleanup(top)
done()
