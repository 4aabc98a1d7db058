#!/usr/bin/python3
"""A fork bomb is stopped by the session's process limit (the pids cgroup;
root ignores RLIMIT_NPROC), the session goes on, and nothing survives it.
Under none only the harness's own cgroup stops it."""
import sbxlib

BOMB = r'''
import time
me = os.getpid(); t0 = time.time(); err = None; n = 0
while time.time() - t0 < 20:
    try:
        if os.fork() == 0:
            continue            # every child forks on
        n += 1
    except OSError as e:
        err = e
        break
if os.getpid() != me:
    time.sleep(1)
    os._exit(0)
print("RESULT bomb %s %s: %s" % ("DENIED" if err else "ALLOWED",
      type(err).__name__, err), flush=True)
'''

tap = sbxlib.begin("fork bomb")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [BOMB, sbxlib.SESSION_OK], wd, outer_pids=512,
                   need=() if p == "none" else ("cgroup pids",),
                   args=("--max-procs", "128"))
    if r.skipped:
        tap.skip("%s: fork bomb" % p, r.skip_reason)
        continue
    if p == "none":
        # nothing of coil's stops it: the harness's pids.max=512 does
        tap.ok(r.get("bomb")[0] == "DENIED" and "Resource temporarily"
               in r.get("bomb")[1], "none: the bomb runs until the "
               "harness's own limit stops it", r)
        tap.session(r)
        continue
    v, text = r.get("bomb")
    if p == "strict":
        tap.denied(r, "bomb")
    else:
        tap.ok(v == "DENIED" and "Resource temporarily unavailable" in text,
               "standard: the bomb is stopped by pids.max (%s)" % text, r)
    tap.session(r)
tap.done()
