#!/usr/bin/python3
# A cell's output belongs to its cell however the supervisor happens to
# read it.  With --checkpoint-policy every, a cell sent while the
# checkpoint after the one before is owed runs right after the fork, so
# the checkpoint's frame and the cell's reply often arrive in one read of
# the control socket; the supervisor must still read the cell's output
# as the cell's (once it took it for background, and a test of the
# sandbox saw "SESSION OK" arrive as the next cell's background).  The
# race is not forced here: many pipelined cells give it many chances.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

N = 150
for policy in ("every", "idle"):
    with Coil("--checkpoint-policy", policy, "--checkpoints", "2") as c:
        for i in range(N):
            c.send({"id": i, "code":
                               "print('cell %d', flush=True)\n"
                               "import sys; sys.stderr.write('err %d\\n')"
                               % (i, i)})
        wrong = []
        for i in range(N):
            r = c.line()
            if r is None:
                wrong.append((i, "no answer"))
                break
            if r.get("id") != i or r.get("output") != "cell %d\n" % i or \
                    r.get("stderr") != "err %d\n" % i or "background" in r:
                wrong.append(r)
        check(not wrong, "%s: each of %d pipelined cells has exactly its "
              "own output and stderr, and none is background" % (policy, N),
              wrong[:3])
        check(c.close() == 0, "%s: coil exits 0" % policy, c.stderr_text())
done()
