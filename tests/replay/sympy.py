#!/usr/bin/python3
"""sympy.py - real notebooks replayed against Jupyter (TAP).

The SymPy examples Debian's python-sympy-doc installs, notebooks no one
here wrote: each is executed by `jupyter nbconvert --execute
--allow-errors` with the python3 kernel, then replayed in coil with
--check against nbconvert's outputs (and --export, to read coil's new
outputs cell by cell).  Every cell that differs must be explained by
one of the differences between IPython and coil named below; a cell no
rule explains fails, with its diff.  One check a notebook, its cells
counted by explanation.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from coiltest import COIL, check, diag, done, skip_all  # noqa: E402

NOTEBOOKS = "/usr/share/doc/python-sympy-doc/examples/notebooks"
NBCONVERT = shutil.which("jupyter-nbconvert")
found = sorted(glob.glob(os.path.join(NOTEBOOKS, "*.ipynb")))
if not found:
    skip_all("no notebooks in %s: python-sympy-doc is not installed "
             "(setup.sh installs it)" % NOTEBOOKS)
if NBCONVERT is None:
    skip_all("jupyter-nbconvert is not installed (setup.sh installs it)")
try:
    import ipykernel  # noqa: F401
except ImportError:
    skip_all("python3-ipykernel is not installed (setup.sh installs it)")

WORK = tempfile.mkdtemp(prefix="sympy-", dir=os.environ.get("TEST_WORKDIR"))
ENV = dict(os.environ, PYDEVD_DISABLE_FILE_VALIDATION="1", MPLBACKEND="Agg")


def text(v):
    return "".join(v) if isinstance(v, list) else (v or "")


def outcome(cell):
    """A notebook cell's outputs as coil compares them."""
    out = {"output": "", "stderr": "", "result": None, "error": None,
           "display": []}
    for o in cell.get("outputs", []):
        t = o.get("output_type")
        if t == "stream":
            key = "stderr" if o.get("name") == "stderr" else "output"
            out[key] += text(o.get("text"))
        elif t == "execute_result":
            out["result"] = text(o.get("data", {}).get("text/plain"))
        elif t == "display_data":
            out["display"].append(text(o.get("data", {}).get("text/plain")))
        elif t == "error" and out["error"] is None:
            out["error"] = (o.get("ename"), o.get("evalue"))
    return out


def flat(s):
    return re.sub(r"\s+", "", s or "")


PRETTY = re.compile("[\u239b-\u23ad\u22c5\u2080-\u2089\u2070-\u2079\u00b7"
                    "\u2502\u2500\u03b1-\u03c9]")


ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def same_but(was, now, key):
    """was and now agree on every field but key."""
    return all(was[k] == now[k] for k in ("output", "stderr", "result",
                                          "error") if k != key)


def set_order(a, b):
    """Two texts that differ only in the order of set literals' items:
    string hashes are salted per process (PYTHONHASHSEED)."""
    la, lb = (a or "").splitlines(), (b or "").splitlines()
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if x == y:
            continue
        if not (x.startswith("{") and x.endswith("}") and y[:1] == "{"):
            return False
        if sorted(x[1:-1].split(", ")) != sorted(y[1:-1].split(", ")):
            return False
    return True


def explain(src, was, now, earlier):
    """Why a cell's outcome in coil (now) differs from Jupyter's (was), or
    None.  earlier: whether a cell before it differed already."""
    if re.search(r"^\s*[%!]", src, re.M):
        return ("magic", "an IPython magic or ! line: coil's magics are "
                "not IPython's (%load_ext of sympyprinting, a module SymPy "
                "removed; %pylab)")
    werr, nerr = was["error"], now["error"]
    if earlier and nerr and nerr[0] == "NameError" and werr != nerr:
        return ("follows", "a name an earlier differing cell (a magic) "
                "defined in Jupyter")
    if werr and nerr and werr[0] == nerr[0] and werr[1] != nerr[1]:
        if nerr[1].startswith(werr[1] + ". Did you mean"):
            return ("suggestion", "Python's 'Did you mean' is in coil's "
                    "message, in IPython's traceback only")
        if werr[0] == "SyntaxError" and werr[1].startswith(nerr[1] + " ("):
            return ("syntax-file", "IPython's SyntaxError evalue names its "
                    "temp file and line")
    if was["display"] and "display" in src and now["output"].startswith(
            was["output"]) and same_but(was, now, "output"):
        return ("display", "IPython's display_pretty is display_data in "
                "Jupyter (SymPy's pretty form once init_printing ran); in "
                "coil, without IPython's display hook, it prints str()")
    if set_order(was["output"], now["output"]) and \
            same_but(was, now, "output"):
        return ("set-order", "the items of a printed set come in another "
                "order: string hashes are salted per process")
    if was["result"] is not None and now["result"] is not None and \
            same_but(was, now, "result"):
        w, n = ADDRESS.sub("0x", was["result"]), ADDRESS.sub(
            "0x", now["result"])
        if PRETTY.search(w) and not PRETTY.search(n):
            return ("pretty", "init_printing() makes IPython show SymPy's "
                    "2D unicode form; coil shows repr()")
        if flat(w) == flat(n) or flat(w) == flat(n.replace(" object at",
                                                            " at")):
            return ("ipython-repr", "IPython's pretty printer wraps long "
                    "reprs at 79 columns and leaves 'object' out of the "
                    "default repr")
        if w.replace("[", "").replace("]", "") == n.replace(
                "[", "").replace("]", "") or flat(w) == flat(n).replace(
                "Matrix(", "").replace(")", ""):
            return ("pretty", "IPython's pretty form of a Matrix")
    return None


def replay(name, executed):
    new = os.path.join(WORK, name + ".coil.ipynb")
    p = subprocess.run([COIL, "--replay", executed, "--check", "--export",
                        new, "--no-record", "--timeout", "120"], cwd=WORK,
                       capture_output=True, text=True, timeout=1800)
    with open(os.path.join(WORK, name + ".coil.out"), "w") as f:
        f.write(p.stdout + p.stderr)
    differ = {int(n) for n in re.findall(r"^cell (\d+) differs:", p.stdout,
                                         re.M)}
    diffs = dict(re.findall(r"^cell (\d+) differs:\n(.*?)(?=^In \[|"
                            r"^\d+ cells? replayed|\Z)", p.stdout,
                            re.M | re.S))
    try:
        with open(new, encoding="utf-8") as f:
            cells = json.load(f)["cells"]
    except (OSError, ValueError, KeyError):
        cells = []
    return p, differ, diffs, cells


total = same = 0
for path in found:
    name = os.path.basename(path)[:-len(".ipynb")]
    executed = os.path.join(WORK, name + ".jupyter.ipynb")
    nb = subprocess.run([NBCONVERT, "--to", "notebook", "--execute",
                         "--allow-errors", "--output-dir", WORK, "--output",
                         name + ".jupyter.ipynb",
                         "--ExecutePreprocessor.kernel_name=python3",
                         "--ExecutePreprocessor.timeout=600", path],
                        capture_output=True, text=True, timeout=1800, env=ENV)
    if nb.returncode != 0 or not os.path.exists(executed):
        check(False, "%s: jupyter nbconvert executes it" % name,
              nb.stderr[-2000:])
        continue
    with open(executed, encoding="utf-8") as f:
        code = [c for c in json.load(f)["cells"]
                if c.get("cell_type") == "code"]
    p, differ, diffs, new = replay(name, executed)
    if p.returncode not in (0, 1) or len(new) != len(code):
        check(False, "%s: coil replays its %d code cells" % (name,
                                                              len(code)),
              "exit %d, %d cells exported\n%s" % (p.returncode, len(new),
                                                 p.stderr[-2000:]))
        continue
    why, unexplained, earlier = {}, [], False
    for n in range(1, len(code) + 1):
        if n not in differ:
            continue
        src = text(code[n - 1].get("source"))
        reason = explain(src, outcome(code[n - 1]), outcome(new[n - 1]),
                         earlier)
        earlier = True
        if reason is None:
            unexplained.append("cell %d:\n%s\n%s" % (n, src[:300],
                                                     diffs.get(str(n), "")))
        else:
            why[reason[0]] = why.get(reason[0], 0) + 1
            diag("%s cell %d: %s: %s" % (name, n, reason[0], reason[1]))
    total += len(code)
    same += len(code) - len(differ)
    check(not unexplained, "%s: %d cells, %d as in Jupyter%s" % (
        name, len(code), len(code) - len(differ), "".join(
            ", %d %s" % (k, r) for r, k in sorted(why.items()))),
          "\n".join(unexplained))
check(total > 0 and same * 2 > total, "most cells give what Jupyter gave: "
      "%d of %d" % (same, total))
done()
