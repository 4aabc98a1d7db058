#!/usr/bin/python3
# A 20 MB request line is answered "invalid" without being held whole,
# with the id its head shows, and the session goes on; --max-request
# sets the limit.
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import ASAN, Coil, check, skip, done, vm_kb  # noqa: E402

with Coil() as c:
    c.call({"code": "x = 'before'"})
    hwm0 = vm_kb(c.pid, "VmHWM")
    c.send_raw(b'{"id": 99, "code": "' + b"a" * (20 << 20) + b'"}\n')
    r = c.line()
    check(r.get("status") == "invalid" and r.get("id") == 99,
          "20 MB line is invalid, answered with its id", r)
    check("--max-request" in (r.get("error") or {}).get("message", ""),
          "the message names the option", r)
    # It reads up to --max-request (16 MiB) of it, no more.
    grew = vm_kb(c.pid, "VmHWM") - hwm0
    what = "the line is not held whole: peak RSS grew %d kB" % grew
    if ASAN:
        skip(what, "a sanitizer build's memory figures mean nothing")
    else:
        check(grew < (16 << 10) + 2048, what)
    r = c.call({"code": "x"})
    check(r.get("result") == "'before'", "the session goes on", r)
    check(c.close() == 0, "coil exits 0", c.stderr_text())

with Coil("--max-request", "1K") as c:
    c.send({"code": "'%s'" % ("b" * 2000), "id": "late"})
    r = c.line()
    check(r.get("status") == "invalid" and r.get("id") == "late",
          "--max-request 1K applies (the id is seen in the line's first "
          "4 KiB)", r)
    r = c.call({"code": "'short'"})
    check(r.get("result") == "'short'", "and the next line is read", r)
    check(c.close() == 0, "coil exits 0 (--max-request 1K)",
          c.stderr_text())
done()
