#!/usr/bin/python3
"""Defense in depth, and honesty: with each mechanism switched off in turn
(as a machine without it would be), the report says which guarantees no
longer hold, every guarantee it still claims is still enforced, and the
core ones (secrets, writes outside, the network) hold with any one layer
gone."""
import os
import socket
import threading
import sbxlib

# before the decoys: they need root too
tap = sbxlib.begin("layers")

# The real ~/.ssh path, with a key the harness plants in its overlay only;
# the write to /usr/local lands in the harness's overlay if a layer lets
# it through.
key = os.path.join(sbxlib.HOME, ".ssh", "coil-sandbox-layers-key")
victim = sbxlib.decoy("victim", parent="/opt")
sockdir = sbxlib.tmpdir("sbx-sock-", "/run")
spath = os.path.join(sockdir, "s")
usrv = socket.socket(socket.AF_UNIX)
usrv.bind(spath)
os.chmod(spath, 0o777)
usrv.listen(8)
tsrv = socket.socket()
tsrv.bind(("127.0.0.1", 0))
tsrv.listen(8)


def serve(s):
    while True:
        try:
            s.accept()[0].close()
        except OSError:
            return


for s in (usrv, tsrv):
    threading.Thread(target=serve, args=(s,), daemon=True).start()

CELL = r'''
k("shadow", lambda c: c.open(b"/etc/shadow", 0))
k("ssh", lambda c: c.open(%(key)r, 0))
k("write-usr", lambda c: c.open(b"/usr/local/coil-layers-test", 0o101, 0o644))
k("chmod-outside", lambda c: c.chmod(%(victim)r, 0o777))
import socket
def connect(fam, addr):
    s = socket.socket(fam)
    s.settimeout(3)
    s.connect(addr)
    s.close()
    return "connected"
# through the socket module: without the audit hook, the kernel answers
t("tcp", lambda: connect(socket.AF_INET, ("127.0.0.1", %(port)d)))
t("unix-socket", lambda: connect(socket.AF_UNIX, %(spath)r))
k("unshare", lambda c: c.unshare(0x10000000))
k("ptrace-init", lambda c: c.ptrace(16, 1, 0, 0))
''' % {"key": key.encode(), "victim": victim.encode(),
       "port": tsrv.getsockname()[1], "spath": spath}

# the check -> the guarantee that covers it (a prefix of the rule's text)
COVERS = {
    "shadow": "reads limited",
    "ssh": "reads limited",
    "write-usr": "writes only",
    "chmod-outside": "writes only",
    "tcp": "no network",
    "unix-socket": "no unix socket",
    "unshare": "no ptrace, mount",
    "ptrace-init": "no signals or tracing",
}
ALWAYS = ("shadow", "ssh", "write-usr", "chmod-outside", "tcp")
LAYERS = (None, "user namespace", "mount namespace", "pid namespace",
          "network namespace", "landlock files", "seccomp")

if not os.access(sbxlib.HOOKED, os.X_OK):
    tap.skip_all("%s is not built: the degraded runs need coil's test "
                 "hooks (make check builds it)" % sbxlib.HOOKED)
wd = sbxlib.tmpdir("sbx-wd-")
for skip in LAYERS:
    name = "standard" + (" without %s" % skip if skip else "")
    env = {"PATH": "/usr/bin:/bin"}
    if skip:
        env["COIL_TEST_SKIP"] = skip
    r = sbxlib.run("standard", [CELL, sbxlib.SESSION_OK], wd,
                   coil=sbxlib.HOOKED, env=env, audit=False,
                   plant={key: "SECRET\n"})
    if r.skipped:
        tap.skip("%s: the report and the layers left" % name,
                 r.skip_reason)
        continue
    if not r.report or not r.report.get("rules"):
        tap.ok(False, "%s: a report" % name, r)
        continue
    if skip:
        tap.ok(r.mech(skip) == "missing", "%s: the report says '%s' is "
               "missing (%s)" % (name, skip, r.mech(skip)), r)
    holds = {x["rule"]: x["holds"] for x in r.report["rules"]}
    for check, prefix in COVERS.items():
        rule = next(k for k in holds if k.startswith(prefix))
        v, text = r.get(check)
        if holds[rule]:
            tap.ok(v == "DENIED", "%s: %s is refused, as the report "
                   "claims '%s' (%s)" % (name, check, prefix, text), r)
        elif check not in ALWAYS:
            tap.diag("%s: %s: %s %s (the report says '%s' does not "
                     "hold)" % (name, check, v, text, prefix))
    for check in ALWAYS:
        tap.ok(r.get(check)[0] == "DENIED", "%s: %s is refused by the "
               "layers left (%s)" % (name, check, r.get(check)[1]), r)
    if skip is None:
        tap.ok(all(holds.values()), "standard: every guarantee holds", r)
    else:
        lost = [k for k, v in holds.items() if not v]
        tap.diag("without %s the report says these no longer hold: %s"
                 % (skip, "; ".join(lost) or "none"))
    tap.ok(not os.path.exists("/usr/local/coil-layers-test") and
           not os.path.exists(key), "%s: nothing reached the host's "
           "/usr/local or ~/.ssh" % name)
    tap.session(r)
usrv.close()
tap.done()
