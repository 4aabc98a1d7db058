#!/usr/bin/python3
"""A disk-filling loop stops at --max-file-size with an OSError (EFBIG, not
a SIGXFSZ death) and the session goes on.  Under none only the harness's
own RLIMIT_FSIZE stops it."""
import os
import sbxlib

FILL = r'''
n = 0; err = None
with open("fill.bin", "wb") as f:
    try:
        while n < (8 << 30):
            f.write(b"\0" * (1 << 20)); f.flush(); n += 1 << 20
    except OSError as e:
        err = e
print("RESULT fill %s %d MiB %s: %s" % ("DENIED" if err else "ALLOWED",
      n >> 20, type(err).__name__, err), flush=True)
os.remove("fill.bin")
'''

tap = sbxlib.begin("disk-filling loop")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [FILL, sbxlib.SESSION_OK], wd, fsize=256 << 20,
                   args=("--max-file-size", "64M"))
    v, text = r.get("fill")
    size = int(text.split()[0]) if text[:1].isdigit() else -1
    if p == "none":
        tap.ok(v == "DENIED" and size == 256, "none: writes until the "
               "harness's own 256 MiB limit (%s)" % text, r)
    else:
        tap.ok(v == "DENIED" and size == 64 and "File too large" in text,
               "%s: stopped at 64 MiB with EFBIG (%s)" % (p, text), r)
    tap.ok(not os.path.exists(os.path.join(wd, "fill.bin")),
           "%s: the file was removed" % p)
    tap.session(r)
tap.done()
