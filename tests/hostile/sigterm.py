#!/usr/bin/python3
# SIGTERM while a cell runs: the worker is killed and coil exits
# promptly; no process of the session is left.
import sys, os, time, signal
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import Coil, check, descendants

c = Coil()
r = c.call({"code": "1"})
c.send({"code": "import time; time.sleep(60)"})
time.sleep(0.3)
kids = descendants(c.proc.pid)
check(len(kids) >= 2, "init and worker exist", kids)
t0 = time.time()
c.proc.send_signal(signal.SIGTERM)
rc = c.proc.wait(timeout=10)
check(time.time() - t0 < 5, "exits within 5 s")
check(rc == 128 + signal.SIGTERM, "exit status says SIGTERM", rc)
time.sleep(0.2)
alive = [p for p in kids if os.path.exists("/proc/%d" % p) and
         open("/proc/%d/stat" % p).read().split()[2] != "Z"]
check(not alive, "no process of the session remains", alive)
