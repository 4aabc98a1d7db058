#!/usr/bin/python3
# A 20 MB request line is answered "invalid" without being held whole,
# and the session goes on.
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from coiltest import Coil, check

with Coil() as c:
    c.call({"code": "x = 'before'"})
    c.send_raw(b'{"id": 99, "code": "' + b"a" * (20 << 20) + b'"}\n')
    r = c.line()
    check(r["status"] == "invalid" and r["id"] is None,
          "20 MB line is invalid", r)
    check("--max-request" in r["error"]["message"], "message names the "
          "option", r)
    r = c.call({"code": "x"})
    check(r["result"] == "'before'", "session goes on", r)
    # The limit is an option.
with Coil("--max-request", "1K") as c:
    c.send({"code": "'%s'" % ("b" * 2000)})
    r = c.line()
    check(r["status"] == "invalid", "--max-request 1K applies", r)
    r = c.call({"code": "'short'"})
    check(r["result"] == "'short'", "and the next line is read", r)
