#!/usr/bin/python3
"""A setsid'ed, double-forked daemon is gone when the session ends, even
when coil itself is killed: init is PID 1 of the session's PID namespace
and dies with the supervisor, and the kernel then kills every process of
the namespace.  (Strict refuses the fork itself.)  Under none the daemon
outlives the session."""
import sbxlib

DAEMON = r'''
def start():
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 3)
            os.execv("/bin/sleep", ["sleep", "987"])
        os._exit(0)
    os.waitpid(pid, 0)
    return "started"
t("daemon", start)
'''
WAIT = 'import time; time.sleep(60)'

tap = sbxlib.begin("a setsid'ed double-forked daemon")
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [DAEMON, sbxlib.SESSION_OK], wd)
    daemons = [c for _, c in r.leftovers if "sleep 987" in c]
    if p == "strict":
        tap.denied(r, "daemon")
    else:
        tap.allowed(r, "daemon", "starting processes is allowed")
    if p == "none":
        tap.ok(daemons, "none: the daemon outlives the session (%s)"
               % daemons, r)
    tap.session(r)
    # and when coil is killed outright, with the daemon running
    r = sbxlib.run(p, [DAEMON + WAIT], wd, kill_after=3)
    daemons = [c for _, c in r.leftovers if "sleep 987" in c]
    if p == "none":
        tap.ok(daemons, "none: the daemon outlives a killed coil")
    else:
        tap.ok(not r.leftovers, "%s: nothing outlives a killed coil%s" % (
            p, "" if not r.leftovers else ": %s" % r.leftovers), r)
tap.done()
