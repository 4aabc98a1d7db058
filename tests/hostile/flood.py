#!/usr/bin/python3
# A cell that prints 200 MB: the response keeps the head and the tail,
# counts what it left out, and the supervisor's memory stays small.
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import Coil, check

with Coil("--timeout", "300") as c:
    r = c.call({"code": "import sys\nfor i in range(2_000_000):\n"
                "    sys.stdout.write('%099d\\n' % i)"}, timeout=300)
    check(r["status"] == "ok", "200 MB cell finishes", r)
    out = r["output"]
    check(len(out.encode()) < 70000, "output is capped", len(out))
    check(out.startswith("0" * 99 + "\n"), "head kept", out[:200])
    check(out.rstrip("\n").endswith("%099d" % 1999999), "tail kept",
          out[-200:])
    check("bytes truncated" in out, "marker present")
    kept = len(out.encode()) - len(out.split("\n[... coil:")[1]
                                   .split("...]\n")[0]) - 20
    check(r["truncated"] > 199_000_000, "truncated counts the bytes",
          r["truncated"])
    with open("/proc/%d/status" % c.proc.pid) as f:
        hwm = [l for l in f if l.startswith("VmHWM")][0].split()[1]
    check(int(hwm) < 16 * 1024, "supervisor peak RSS %s kB < 16 MB" % hwm)
    r = c.call({"code": "os = __import__('os'); os.write(1, b'\\xff' * 100000)"
                "\nNone"})
    check(r["status"] == "ok" and r["output"].startswith("\\xff\\xff"),
          "invalid UTF-8 flood is escaped", r["output"][:40])
    r = c.call({"code": "'x' * 10_000_000"})
    check(len(r["result"]) < 70000 and r["truncated"] > 9_000_000,
          "a huge result is capped", (len(r["result"]), r.get("truncated")))
