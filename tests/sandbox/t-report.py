#!/usr/bin/python3
"""Say what holds: the probe (coil --sandbox-report) runs the real steps
and reports each mechanism; on this kind of machine (root, Landlock, user
namespaces, cgroup v1 pids and memory) every guarantee holds and
--sandbox-require passes.  As an ordinary user without a delegated cgroup
the memory limit is missing: the report says so, the session still runs
with what it has, and --sandbox-require refuses to start."""
import os
import shutil
import subprocess
import sbxlib


def probe(profile, *extra, user=None):
    cmd = [sbxlib.COIL, "--sandbox-report", "--sandbox", profile] + list(extra)
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
               "--clear-groups"] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return p.stdout


tap = sbxlib.begin("the sandbox report")
wd = sbxlib.tmpdir("sbx-wd-")
for p in ("standard", "strict"):
    out = probe(p, "--workdir", wd)
    tap.ok(("sandbox %s on Linux" % p) in out, "%s: the probe reports" % p)
    if "every protection holds" not in out:
        tap.skip("%s: every protection holds" % p, "this machine lacks some: "
                 + "; ".join(l.strip() for l in out.splitlines()
                             if l.strip().startswith(("missing", "NOT"))))
        continue
    tap.ok(True, "%s: every protection holds here" % p)
    r = sbxlib.run(p, [sbxlib.SESSION_OK], wd, args=("--sandbox-require",))
    tap.ok(r.session_ok() and r.report and r.report["complete"],
           "%s --require: starts" % p, r)
out = probe("none", "--workdir", wd)
tap.ok("no protection asked for" in out, "none: nothing is claimed")

if shutil.which("setpriv") is None:
    tap.skip("ordinary user", "no setpriv(1) to become one")
else:
    uwd = sbxlib.tmpdir("sbx-wd-", "/tmp")  # user nobody can reach it
    os.chown(uwd, 65534, 65534)
    out = probe("standard", "--workdir", uwd, user=65534)
    tap.ok("NOT    memory limited" in out and "missing  cgroup memory" in out,
           "ordinary user: the missing memory cgroup is reported, with a "
           "hint", None)
    tap.ok("holds  no network" in out and "holds  writes only" in out,
           "ordinary user: the rest still holds (user namespace, Landlock, "
           "seccomp)")
    cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
           sbxlib.COIL, "--agent", "--sandbox", "standard", "--workdir", uwd]
    cell = '{"id": 1, "code": "print(\'SESSION OK\')"}\n'
    p = subprocess.run(cmd, input=cell, capture_output=True, text=True,
                       timeout=60)
    tap.ok("SESSION OK" in p.stdout, "ordinary user: the session runs with "
           "what it has")
    p = subprocess.run(cmd + ["--sandbox-require"], input=cell,
                       capture_output=True, text=True, timeout=60)
    tap.ok("SESSION OK" not in p.stdout and "--sandbox-require: not "
           "enforced here: memory limited" in p.stderr,
           "ordinary user --require: refuses, naming what is missing (%s)"
           % (p.stderr.strip().splitlines() or [""])[0][:150])
    os.rmdir(uwd)
tap.done()
