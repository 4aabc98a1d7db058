#!/usr/bin/python3
# stand-in for coil --agent (DELETE before finishing)
import sys, json, io, contextlib, ast
sys.path.insert(0, "/work/main/bench")
from seed_worker import run_cell
args = sys.argv[1:]
assert args[0] == "--agent"
ns = {"__name__": "__main__"}
CAP = 65536
class Cap(io.TextIOBase):
    def __init__(s): s.head = []; s.n = 0; s.total = 0
    def write(s, t):
        s.total += len(t)
        if s.n < CAP: s.head.append(t); s.n += len(t)
        return len(t)
for line in sys.stdin:
    req = json.loads(line)
    c = Cap()
    with contextlib.redirect_stdout(c):
        tree = ast.parse(req["code"])
        last = None
        if isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, "<cell>", "exec"), ns)
        r = eval(compile(last, "<cell>", "eval"), ns) if last else None
    out = "".join(c.head)[:CAP]
    rep = {"id": req.get("id"), "status": "ok", "output": out, "stderr": "",
           "result": None if r is None else repr(r), "truncated": c.total - len(out)}
    sys.stdout.write(json.dumps(rep) + "\n"); sys.stdout.flush()
