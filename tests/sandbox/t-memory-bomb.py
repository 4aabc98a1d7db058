#!/usr/bin/python3
"""A memory bomb is stopped: in one process by RLIMIT_DATA (MemoryError),
across processes by the session's memory cgroup (the OOM killer acts in the
session only).  Under none only the harness's own memory limit stops it."""
import sbxlib

ONE = r'''
chunks = []; err = None
try:
    while len(chunks) < 6 * 64:                  # up to 6 GiB
        chunks.append(b"\1" * (16 << 20))        # touched, so charged
except MemoryError as e:
    err = e
n = len(chunks) * 16
del chunks
print("RESULT one %s %d MiB %s" % ("DENIED" if err else "ALLOWED", n,
      type(err).__name__), flush=True)
'''

MANY = r'''
kids = []
def hog():
    try:
        x = b"\1" * (200 << 20)
        import time; time.sleep(2)
        os._exit(0)
    except MemoryError:
        os._exit(3)
for i in range(5):
    try:
        pid = os.fork()
    except OSError as e:
        print("RESULT many DENIED %s: %s" % (type(e).__name__, e), flush=True)
        break
    if pid == 0:
        hog()
    kids.append(pid)
else:
    killed = 0
    for pid in kids:
        _, st = os.waitpid(pid, 0)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == 9:
            killed += 1
    print("RESULT many %s %d of 5 killed" % ("DENIED" if killed else
          "ALLOWED", killed), flush=True)
'''

tap = sbxlib.begin("memory bomb")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [ONE, MANY, sbxlib.SESSION_OK], wd,
                   outer_memory=1 << 30,
                   need=() if p == "none" else ("cgroup memory",),
                   args=("--memory", "256M"))
    if r.skipped:
        tap.skip("%s: memory bomb" % p, r.skip_reason)
        continue
    if p == "none":
        tap.ok(r.cells.get(0) == ("signal", "9"), "none: one process grows "
               "until the harness's memory cgroup kills it", r)
        tap.ok(r.get("many")[0] == "ALLOWED" or "killed" in r.get("many")[1],
               "none: five 200 MiB processes fit in the harness's 1 GiB", r)
        tap.session(r)
        continue
    v, text = r.get("one")
    rl = r.report["mechanisms"]["rlimits"]["detail"] if r.report else ""
    if "DATA=unset" in rl:
        # a sanitizer build sets no RLIMIT_DATA: the cgroup stops it
        tap.ok(r.cells.get(0) == ("signal", "9"), "%s: one process is "
               "killed by the session's memory cgroup (%s)" % (p, rl), r)
    else:
        tap.ok(v == "DENIED" and "MemoryError" in text, "%s: one process "
               "gets MemoryError at --memory 256M (%s)" % (p, text), r)
    if p == "strict":
        tap.denied(r, "many")
    else:
        v, text = r.get("many")
        tap.ok(v == "DENIED", "standard: processes together are held to "
               "256M by the memory cgroup (%s)" % text, r)
    tap.session(r)
tap.done()
