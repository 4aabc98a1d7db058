#!/usr/bin/python3
"""The worker's environment carries no secret of coil's own: an allow-list,
not a deny-list; HOME is the work dir, TMPDIR the private temp dir,
MPLCONFIGDIR under it; the original environment block (what
/proc/self/environ shows, and what any C code could find in memory) is
erased.  Under none the environment passes through whole."""
import os
import sbxlib

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
       "AWS_SECRET_ACCESS_KEY": "sbx-secret-1", "OPENAI_API_KEY": "sbx-secret-2",
       "ANTHROPIC_API_KEY": "sbx-secret-3", "GITHUB_TOKEN": "sbx-secret-4",
       "HOME": "/root", "SSH_AUTH_SOCK": "/tmp/agent.sock",
       "COIL_FUTURE_VARIABLE": "sbx-secret-5", "OMP_NUM_THREADS": "3"}

CELL = r'''
t("secrets", lambda: sorted(k for k, v in os.environ.items() if "sbx-secret" in v))
t("ssh-agent", lambda: os.environ.get("SSH_AUTH_SOCK"))
t("home", lambda: os.environ["HOME"] == os.getcwd())
t("tmpdir", lambda: os.environ["TMPDIR"])
t("mpl", lambda: os.environ["MPLCONFIGDIR"].startswith(os.environ["TMPDIR"]))
t("lang", lambda: os.environ.get("LC_ALL"))
t("omp", lambda: os.environ.get("OMP_NUM_THREADS"))
t("proc-environ", lambda: b"sbx-secret" in open("/proc/self/environ", "rb").read())
def stack():
    # the memory the original environment lived in, read raw
    f = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
    start, end = int(f[47]), int(f[48])
    blob = ctypes.string_at(start, end - start)
    return blob.count(b"\0") == len(blob)
t("memory", stack)
'''

tap = sbxlib.begin("the environment")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd, env=ENV)
    if p == "none":
        tap.ok("AWS_SECRET_ACCESS_KEY" in r.get("secrets")[1], "none: the "
               "environment passes through (%s)" % r.get("secrets")[1], r)
        tap.session(r)
        continue
    tap.ok(r.get("secrets") == ("ALLOWED", "[]"), "%s: no secret variable "
           "(%s)" % (p, r.get("secrets")[1]), r)
    tap.ok(r.get("ssh-agent") == ("ALLOWED", "None"), "%s: no ssh agent" % p,
           r)
    tap.ok(r.get("home") == ("ALLOWED", "True"), "%s: HOME is the work dir"
           % p, r)
    tap.ok(r.get("mpl") == ("ALLOWED", "True"), "%s: MPLCONFIGDIR is under "
           "the private temp dir" % p, r)
    tap.ok(r.get("lang") == ("ALLOWED", "'C.UTF-8'"), "%s: the locale is "
           "kept" % p, r)
    tap.ok(r.get("omp") == ("ALLOWED", "'3'"), "%s: a thread count the "
           "user set is kept" % p, r)
    tap.ok(r.get("proc-environ") == ("ALLOWED", "False"), "%s: "
           "/proc/self/environ holds no secret" % p, r)
    tap.ok(r.get("memory") == ("ALLOWED", "True"), "%s: the original "
           "environment block is zeroed" % p, r)
    tap.ok("sbx-secret" not in r.out, "%s: no secret anywhere in the "
           "output" % p, r)
    tap.session(r)
tap.done()
