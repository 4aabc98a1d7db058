#!/usr/bin/python3
# A thread that keeps printing after its cell ended: its output is never
# mixed into another cell's "output"; it comes as "background".
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

with Coil() as c:
    r = c.call({"code": "import threading, time\n"
                "def chatter():\n"
                "    for i in range(20):\n"
                "        print('tick', i, flush=True)\n"
                "        time.sleep(0.05)\n"
                "threading.Thread(target=chatter, daemon=True).start()"})
    check(r.get("status") == "ok", "cell with a thread ok", r)
    first = r.get("output", "")
    time.sleep(1.5)
    r = c.call({"code": "print('mine')"})
    check(r.get("output") == "mine\n", "the next cell's output is its own",
          r)
    bg = (r.get("background") or {}).get("output", "")
    ticks = [l for l in (first + bg).splitlines() if l.startswith("tick")]
    check(ticks == ["tick %d" % i for i in range(20)],
          "every tick comes once, in order, in output or background",
          (first, bg))
    check("tick 19" in bg, "the late ones are in background", r)
    r = c.call({"code": "'ok'"})
    check(r.get("status") == "ok" and "background" not in r,
          "and only once", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())
done()
