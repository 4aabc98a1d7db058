#!/usr/bin/python3
"""Ten thousand open files: stopped at the open-files limit with EMFILE,
the session goes on.  Under none (the harness raises the soft limit) they
all open."""
import sbxlib

OPEN = r'''
fs = []; err = None
try:
    for i in range(10000):
        fs.append(open("/dev/null"))
except OSError as e:
    err = e
n = len(fs)
for f in fs:
    f.close()
print("RESULT files %s %d %s: %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__, err), flush=True)
'''

tap = sbxlib.begin("ten thousand open files")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [OPEN, sbxlib.SESSION_OK], wd)
    v, text = r.get("files")
    if p == "none":
        tap.allowed(r, "files", "no limit of coil's")
    else:
        tap.ok(v == "DENIED" and "Too many open files" in text,
               "%s: stopped at the open-files limit (%s)" % (p, text), r)
    tap.session(r)
tap.done()
