#!/usr/bin/python3
# SIGTERM while a cell runs: the worker is killed and coil exits
# promptly; no process of the session is left.
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, descendants, dead  # noqa: E402

c = Coil()
r = c.call({"code": "1"})
c.send({"code": "import time; time.sleep(60)"})
time.sleep(0.3)
kids = descendants(c.pid)
comms = sorted(p.comm for p in kids)
check("coil-init" in comms and "coil-worker" in comms,
      "init and worker exist", kids)
t0 = time.time()
c.proc.send_signal(signal.SIGTERM)
try:
    rc = c.proc.wait(timeout=10)
except Exception:
    rc = None
dt = time.time() - t0
check(rc is not None and dt < 5, "exits within 5 s (%.2f s)" % dt)
check(rc == 128 + signal.SIGTERM, "exit status says SIGTERM", rc)
c.kill()
time.sleep(0.2)
alive = [p for p in kids if not dead(p.pid)]
check(not alive, "no process of the session remains", alive)
done()
