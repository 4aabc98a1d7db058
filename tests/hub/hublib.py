"""hublib - a client of coil's attach socket (coil --agent --listen PATH),
for the tests of the session hub.

    with Coil("--agent", "--listen", path) as agent:
        wait_for(lambda: os.path.exists(path))
        b = Attached(path)
        r = b.call({"id": 1, "code": "b = 2"})    # its own response
        b.events                                  # every event line seen

A response line is one with "status"; anything else is an event
({"event": NAME, ...}).  Everything read is kept in .lines, in order.
A thread reads all the time, as a UI would (reading=False: a client that
never reads, whose socket fills).
"""
import json
import os
import socket
import threading
import time


def connect(sock, path):
    """Connect to a socket path of any length: one too long for a
    sockaddr_un is reached through its directory's descriptor, as coil
    binds it (a build tree can be deep)."""
    if len(os.fsencode(path)) < 108:
        sock.connect(path)
        return
    fd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
    try:
        sock.connect("/proc/self/fd/%d/%s" % (fd, os.path.basename(path)))
    finally:
        os.close(fd)


class Attached:
    def __init__(self, path, reading=True):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connect(self.sock, path)
        self.buf = b""
        self.lines = []         # every object read, in order
        self.events = []        # the event lines among them
        self.pending = {}       # responses by id, not yet taken
        self.closed = False
        self.lock = threading.Condition()
        if reading:
            threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        while not self.closed:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            with self.lock:
                if not data:
                    self.closed = True
                else:
                    self._take(data)
                self.lock.notify_all()

    def _take(self, data):
        self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            obj = json.loads(line)
            self.lines.append(obj)
            if "status" in obj and "event" not in obj:
                self.pending.setdefault(json.dumps(obj.get("id")),
                                        []).append(obj)
            else:
                self.events.append(obj)

    def send(self, req):
        self.sock.sendall((json.dumps(req) + "\n").encode())

    def _read(self, timeout):
        with self.lock:
            self.lock.wait(timeout)

    def response(self, rid, timeout=60):
        key = json.dumps(rid)
        end = time.time() + timeout
        while not self.pending.get(key):
            left = end - time.time()
            if left <= 0 or self.closed:
                raise TimeoutError("no response to id %r" % (rid,))
            self._read(min(left, 1.0))
        with self.lock:
            return self.pending[key].pop(0)

    def call(self, req, timeout=60):
        self.send(req)
        return self.response(req.get("id"), timeout)

    def wait_event(self, pred, timeout=60):
        """The first event (seen or to come) pred accepts."""
        end = time.time() + timeout
        seen = 0
        while True:
            with self.lock:
                new = self.events[seen:]
            for e in new:
                if pred(e):
                    return e
            seen += len(new)
            left = end - time.time()
            if left <= 0 or self.closed:
                return None
            self._read(min(left, 1.0))

    def read_until_closed(self, timeout=30):
        end = time.time() + timeout
        while not self.closed and time.time() < end:
            self._read(min(end - time.time(), 1.0))
        return self.closed

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def listen_path(d):
    """A socket path in a fresh directory only we can enter."""
    sub = os.path.join(d, "sock")
    os.mkdir(sub, 0o700)
    return os.path.join(sub, "coil.sock")
