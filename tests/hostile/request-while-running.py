#!/usr/bin/python3
# Requests that arrive while a cell runs wait their turn (ping and
# interrupt excepted), and are answered in order.
import sys, os, time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import Coil, check

with Coil() as c:
    c.call({"code": "1"})
    a = c.send({"code": "import time; time.sleep(0.5); 'a'"})
    b = c.send({"code": "'b'"})
    v = c.send({"op": "vars"})
    p = c.send({"op": "ping"})
    order = [c.line()["id"] for _ in range(4)]
    check(order == [p, a, b, v], "ping first, then in order", order)
