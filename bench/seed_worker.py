"""The "seed" peer: the simplest persistent Python worker behind a pipe.

Reads one JSON request a line on stdin ({"id": .., "code": ..}), runs the code
in one namespace dict with stdout captured in a StringIO, evaluates a final
expression for its result, and writes one JSON line back.  run_cell() is also
timed in-process by bench.py as the exec part of the floor.
"""
import ast
import contextlib
import io
import json
import sys


def run_cell(ns, code):
    """Run code in ns; return (output, repr of the last expression or None)."""
    tree = ast.parse(code, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    out = io.StringIO()
    result = None
    with contextlib.redirect_stdout(out):
        exec(compile(tree, "<cell>", "exec"), ns)
        if last is not None:
            value = eval(compile(last, "<cell>", "eval"), ns)
            if value is not None:
                ns["_"] = value
                result = repr(value)
    return out.getvalue(), result


def main():
    ns = {"__name__": "__main__"}
    for line in sys.stdin:
        req = json.loads(line)
        try:
            output, result = run_cell(ns, req["code"])
            reply = {"id": req.get("id"), "status": "ok", "output": output,
                     "result": result}
        except Exception as e:  # noqa: BLE001 - a cell may raise anything
            reply = {"id": req.get("id"), "status": "error",
                     "error": {"type": type(e).__name__, "message": str(e)}}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
