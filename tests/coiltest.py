"""coiltest - drive a real coil --agent from a test script.

    with Coil("--timeout", "5") as c:
        r = c.call({"code": "1+1"})
        assert r["result"] == "2", r

Requests are numbered automatically; call() returns the response with
the same id and keeps any other line (events) in c.events.
"""
import json
import os
import select
import subprocess
import sys
import time

COIL = os.environ.get("COIL", os.path.join(os.path.dirname(__file__),
                                           "..", "src", "coil"))


class Coil:
    def __init__(self, *args, stdin=subprocess.PIPE, env=None):
        self.proc = subprocess.Popen([COIL, "--agent", *args], stdin=stdin,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env)
        self.next_id = 0
        self.events = []
        self.buf = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, req):
        if "id" not in req:
            self.next_id += 1
            req = dict(req, id=self.next_id)
        self.send_raw(json.dumps(req).encode() + b"\n")
        return req["id"]

    def line(self, timeout=60):
        deadline = time.time() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no response from coil in %ss" % timeout)
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise EOFError("coil closed its stdout")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line.decode("utf-8"))

    def response(self, rid, timeout=60):
        while True:
            msg = self.line(timeout)
            if msg.get("id") == rid and "event" not in msg:
                return msg
            self.events.append(msg)

    def call(self, req, timeout=60):
        return self.response(self.send(req), timeout)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def descendants(pid):
    """PIDs of every process below pid, by /proc/*/stat parent links."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
                parent[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c, pp in parent.items():
            if pp == p:
                out.append(c)
                todo.append(c)
    return out


def session_processes():
    """Processes named like coil's own (init, worker) anywhere."""
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip() in ("coil-init", "coil-worker"):
                        found.append(int(d))
            except OSError:
                pass
    return found


def check(cond, what, detail=None):
    if not cond:
        sys.stderr.write("FAIL: %s\n%s\n" % (what, "" if detail is None
                                             else str(detail)[:3000]))
        sys.exit(1)
    print("ok - %s" % what)
