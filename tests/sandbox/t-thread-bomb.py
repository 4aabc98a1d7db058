#!/usr/bin/python3
"""A thread bomb is stopped by the process limit (threads are tasks: pids
cgroup), the session goes on.  Under none only the harness's limit stops
it."""
import sbxlib

BOMB = r'''
import threading
ev = threading.Event(); n = 0; err = None
try:
    while n < 20000:
        threading.Thread(target=ev.wait, daemon=True).start()
        n += 1
except (RuntimeError, OSError) as e:
    err = e
ev.set()
print("RESULT threads %s %d %s: %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__, err), flush=True)
'''

tap = sbxlib.begin("thread bomb")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [BOMB, sbxlib.SESSION_OK], wd, outer_pids=512,
                   need=() if p == "none" else ("cgroup pids",),
                   args=("--max-procs", "128"))
    if r.skipped:
        tap.skip("%s: thread bomb" % p, r.skip_reason)
        continue
    v, text = r.get("threads")
    n = int(text.split()[0]) if text[:1].isdigit() else -1
    if p == "none":
        tap.ok(v == "DENIED" and n > 300, "none: threads run until the "
               "harness's own limit (%d threads)" % n, r)
    else:
        tap.ok(v == "DENIED" and 0 < n < 128 and "can't start new thread"
               in text, "%s: stopped at the session's limit of 128 tasks "
               "(%d threads: %s)" % (p, n, text[:80]), r)
    tap.session(r)
tap.done()
