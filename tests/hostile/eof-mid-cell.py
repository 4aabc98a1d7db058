#!/usr/bin/python3
# End of input while a cell runs: the cell finishes, its response is
# written, coil exits 0.  The request has no final newline, as when a
# client is cut off mid-write.
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

c = Coil()
c.send_raw(b'{"id": 1, "code": "import time; time.sleep(0.5); '
           b'print(\\"done\\")"}')
c.proc.stdin.close()
lines = []
try:
    while True:
        lines.append(c.raw_line())
except EOFError:
    pass
rc = c.close()
check(rc == 0, "exit status 0", "status %s: %s" % (rc, c.stderr_text()))
check(len(lines) == 1, "one line written", lines)
r = json.loads(lines[0]) if lines else {}
check(r.get("id") == 1 and r.get("output") == "done\n",
      "the last request (no newline) is answered", r)
done()
