#!/usr/bin/python3
# A thread that keeps printing after its cell ended: its output is never
# mixed into another cell's "output"; it comes as "background".
import sys, os, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import Coil, check

with Coil() as c:
    r = c.call({"code": "import threading, time\n"
                "def chatter():\n"
                "    for i in range(20):\n"
                "        print('tick', i, flush=True)\n"
                "        time.sleep(0.05)\n"
                "threading.Thread(target=chatter, daemon=True).start()"})
    check(r["status"] == "ok", "cell with a thread ok", r)
    time.sleep(1.5)
    r = c.call({"code": "print('mine')"})
    check(r["output"] == "mine\n", "the next cell's output is its own", r)
    bg = r.get("background", {}).get("output", "")
    check("tick 19" in bg, "the thread's output is in background", r)
    r = c.call({"code": "'ok'"})
    check(r["status"] == "ok" and "background" not in r, "and only once", r)
