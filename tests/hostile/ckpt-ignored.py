#!/usr/bin/python3
"""A worker the cells took over may leave a checkpoint's order
unanswered.  The next request waits for that checkpoint (its frame is
checked against the live worker, session.c's session_may_serve), so
without a bound it would wait for ever, with no deadline of its own:
it has not run.  The wait gets the request's timeout; then the worker
is killed as wedged, the request runs on the one that replaces it, and
its answer says what happened.

The hooked build (tests/coil-hooked) makes the worker ignore the order
of the checkpoint after cell 1 (COIL_TEST_IGNORE_CKPT_CELL=1).  Under
--sandbox none only: the sandboxes give the worker a clean environment,
which the hook's variable does not reach; the hold and its deadline are
the supervisor's, the same under every profile."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import Coil, check, done, hooked  # noqa: E402

HOOKED = hooked()
env = dict(os.environ, COIL_TEST_IGNORE_CKPT_CELL="1")

for sandbox in ("none",):
    with Coil("--no-record", "--sandbox", sandbox, "--checkpoint-policy",
              "every", argv0=HOOKED, env=env) as c:
        r = c.run("x = 1")
        check(r.get("status") == "ok", "%s: cell 1 runs" % sandbox, r)
        r = c.call({"code": "'next'", "timeout": 1})
        warn = " ".join(r.get("warnings") or [])
        check(r.get("status") == "ok" and r.get("result") == "'next'",
              "%s: the request behind the unanswered order runs, once its "
              "timeout ran out" % sandbox, r)
        check("did not hand over the checkpoint" in warn and
              "died between requests" in warn,
              "%s: and its answer says the worker was killed, and why"
              % sandbox, r)
        r = c.run("x")
        check(r.get("status") == "error" and
              (r.get("error") or {}).get("type") == "NameError",
              "%s: with no checkpoint of cell 1, x went with the worker"
              % sandbox, r)
        r = c.run("y = 2\ny")
        check(r.get("result") == "2", "%s: the session goes on" % sandbox,
              r)
done()
