#!/usr/bin/python3
# Requests that arrive while a cell runs wait their turn (ping and
# interrupt excepted), and are answered in order.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done  # noqa: E402

with Coil() as c:
    c.call({"code": "1"})
    a = c.send({"code": "import time; time.sleep(0.5); 'a'"})
    b = c.send({"code": "'b'"})
    v = c.send({"op": "vars"})
    p = c.send({"op": "ping"})
    got = [c.line() for _ in range(4)]
    order = [x.get("id") for x in got]
    check(order == [p, a, b, v], "ping first, then in order", order)
    check([x.get("result") for x in got[1:3]] == ["'a'", "'b'"],
          "each cell answered with its own result", got[1:3])
    check(c.close() == 0, "coil exits 0", c.stderr_text())
done()
