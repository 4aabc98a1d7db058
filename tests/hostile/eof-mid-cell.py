#!/usr/bin/python3
# End of input while a cell runs: the cell finishes, its response is
# written, coil exits 0.
import sys, os, json, subprocess
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import COIL, check

p = subprocess.run([COIL, "--agent"], input=b'{"id": 1, "code": "import '
                   b'time; time.sleep(0.5); print(\\"done\\")"}',
                   capture_output=True, timeout=60)
lines = p.stdout.decode().splitlines()
check(p.returncode == 0, "exit status 0", p)
check(len(lines) == 1 and json.loads(lines[0])["output"] == "done\n",
      "the last request (no newline) is answered", lines)
