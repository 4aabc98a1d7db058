#!/usr/bin/python3
"""bench/tokens.py - what a fixed data-analysis session costs a model.

A code-interpreter tool hands the model text after each cell; that text
is what the session costs in tokens.  This runs the same 30 cells (a CSV
read into a pandas frame, head, dtypes, groupby, describe, a KeyError on
a misspelled column, an import of a missing module, a matplotlib plot
saved to a file, print loops, a large result, an exception raised in a
function the cell calls, a SyntaxError, a warning...) through
`coil --agent` and through a Jupyter kernel, and counts the characters
each hands to the model, cell by cell.

What is counted:

- coil: the response line `coil --agent --brief` writes for the cell,
  as it is (the whole JSON object, keys, escapes, `duration_ms`,
  `cpu_ms`, `memory_peak` and all, without its newline).  A tool loop
  hands that line to the model unchanged.  --brief is the form made for
  a model: the default's line, less its empty fields; the default's
  total is printed below the table too.
- Jupyter (ipykernel through jupyter_client's BlockingKernelClient, the
  python3 kernel of /usr/bin/python3): the iopub messages of the cell, in
  the order they come, as a typical tool loop turns them into text:
  `stream` text (stdout and stderr), the `text/plain` of
  `execute_result` and `display_data`, and an `error`'s `traceback`
  lines joined with newlines, with the ANSI colour codes stripped.  The
  pieces are joined with a newline where one does not already end.  No
  JSON, no status, no execution count: less than any real loop adds.

Both run in a fresh directory holding the same CSV, with the same
Debian Python 3 and libraries (coil embeds the interpreter
/usr/bin/python3 runs).

"Nothing the model needs left out": each cell lists the strings a model
needs from its answer (the value computed, the exception's type and the
missing key, the module's name, the warning's category...).  Each is
looked for in both tools' text: in coil's, in the string values of the
parsed response (the line with its JSON escapes undone); in Jupyter's,
in the text counted above.  A miss is reported with the cell.

    COIL=build/src/coil /usr/bin/python3 bench/tokens.py [--dump DIR]

Prints a Markdown table (per cell and total: coil's characters,
Jupyter's, the ratio coil/jupyter, the needed strings found) on stdout.
--dump DIR also writes each cell's two texts to DIR/NN-coil.json and
DIR/NN-jupyter.txt, to read them side by side.  Exits 1 when coil's
total is not lower than Jupyter's or coil's text lacks a needed string;
a Jupyter that cannot start gives an "n/a (reason)" column, not a
failure.
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True                  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (COIL, NA, jupyter_start, jupyter_stop,  # noqa: E402
                   line_peer)

TIMEOUT = 120                   # seconds a cell may take, on either side
CSV = "sales.csv"


def write_csv(path):
    """240 rows: a month, a region and a product each, units and price;
    `returns` is empty on every 7th row.  Fixed values, no randomness,
    so that both tools and every run see the same data."""
    regions = ("North", "South", "East", "West")
    prices = {"apple": 1.25, "pear": 2.5, "plum": 3.75, "fig": 5.0,
              "kiwi": 0.8}
    rows = ["month,region,product,units,price,returns"]
    i = 0
    for m in range(1, 13):
        for r, region in enumerate(regions):
            for p, (product, price) in enumerate(prices.items()):
                units = (m * 7 + r * 5 + p * 3) % 17 + 1
                returns = "" if i % 7 == 0 else str((m + r + p) % 3)
                rows.append(f"2024-{m:02d},{region},{product},{units},"
                            f"{price},{returns}")
                i += 1
    with open(path, "w") as f:
        f.write("\n".join(rows) + "\n")


# The session: (what the cell does, its code, the strings a model needs
# from its answer).  Values follow from write_csv's data.
CELLS = [
    ("imports", "import pandas as pd\nimport numpy as np", []),
    ("read the CSV", f"df = pd.read_csv({CSV!r})", []),
    ("shape", "df.shape", ["(240, 6)"]),
    ("head", "df.head()", ["region", "North", "apple", "2024-01"]),
    ("dtypes", "df.dtypes", ["units", "int64", "returns", "float64",
                             "object"]),
    ("missing values", "df.isna().sum()", ["returns", "35"]),
    ("new column", "df['revenue'] = df['units'] * df['price']\n"
                   "df['revenue'].sum()", ["5766.05"]),
    ("groupby mean", "df.groupby('region')['revenue'].mean()",
     ["East", "North", "South", "West", "23.106667"]),
    ("groupby unstack",
     "df.groupby(['region', 'product'])['units'].sum().unstack()",
     ["apple", "kiwi", "West"]),
    ("describe", "df.describe()", ["count", "mean", "std", "max", "240"]),
    ("KeyError, misspelled column", "df['reigon'].unique()",
     ["KeyError", "reigon", "df['reigon'].unique()"]),
    ("the right column", "sorted(df['region'].unique())",
     ["['East', 'North', 'South', 'West']"]),
    ("missing module", "import seaborn as sns",     # not in setup.sh
     ["ModuleNotFoundError", "seaborn"]),
    ("matplotlib, Agg", "import matplotlib\nmatplotlib.use('Agg')\n"
                        "import matplotlib.pyplot as plt", []),
    ("plot to a file",
     "fig, ax = plt.subplots()\n"
     "df.groupby('month')['revenue'].sum().plot(ax=ax, title='revenue')\n"
     "fig.savefig('revenue.png')\nplt.close(fig)\n"
     "print('saved revenue.png')", ["saved revenue.png"]),
    ("check the file", "import os\nos.path.getsize('revenue.png') > 1000",
     ["True"]),
    ("print loop", "for region, g in df.groupby('region'):\n"
                   "    print(region, len(g), round(g['revenue'].sum(), 2))",
     ["East 60", "West 60"]),
    ("define a helper", "def parse_month(s):\n"
                        "    year, month = s.split('-')\n"
                        "    return int(year), int(month)", []),
    ("exception in the helper",
     "[parse_month(s) for s in ['2024-01', '2024-1x']]",
     ["ValueError", "invalid literal for int()", "'1x'", "parse_month",
      "int(month)"]),
    ("helper, fixed", "df['m'] = [parse_month(s)[1] for s in df['month']]\n"
                      "df['m'].max()", ["12"]),
    ("pivot table", "df.pivot_table(index='region', columns='product',\n"
                    "               values='revenue', aggfunc='sum')",
     ["fig", "plum"]),
    ("top 5", "df.nlargest(5, 'revenue')[['month', 'region', 'revenue']]",
     ["revenue", "85.0"]),
    ("chained-assignment warning", "df[df['units'] > 10]['price'] = 0",
     ["SettingWithCopyWarning", "Try using .loc"]),
    ("correlation", "df[['units', 'price', 'revenue']].corr().round(3)",
     ["units", "price", "1.0"]),
    ("SyntaxError", "df.groupby('region']",
     ["SyntaxError", "does not match opening parenthesis"]),
    ("large frame", "big = pd.DataFrame(np.arange(40000).reshape(5000, 8))\n"
                    "big", ["[5000 rows x 8 columns]", "39999"]),
    ("long print loop", "for i in range(300):\n"
                        "    print(f'row {i}: {i * i}')",
     ["row 0: 0", "row 299: 89401"]),
    ("exception in a library call", "pd.to_datetime(df['region'])",
     ["ParserError", "North", "pd.to_datetime(df['region'])"]),
    ("save a summary", "summary = df.groupby('region')['revenue'].agg"
                       "(['sum', 'mean'])\nsummary.to_csv('summary.csv')\n"
                       "summary.round(2)", ["sum", "mean", "West"]),
    ("read it back", "open('summary.csv').read().splitlines()[0]",
     ["region,sum,mean"]),
]

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def strings(value):
    """The string values in a parsed JSON value, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


# The fields of a coil response that carry what the cell did; the rest of
# the line (keys, id, status, cell number, duration, nulls) is envelope.
CONTENT = ("output", "stderr", "result", "error", "display")


def envelope(line):
    """The characters of a coil response line that are not the cell's
    output, result, error or displays: the JSON around them."""
    msg = json.loads(line)
    inner = sum(len(json.dumps(s, ensure_ascii=False)) - 2
                for k in CONTENT for s in strings(msg.get(k)))
    return len(line) - inner


def coil_session(workdir, *args):
    """Each cell's (counted text, searched text) from coil --agent."""
    if not os.access(COIL, os.X_OK):
        raise NA(f"no coil at {COIL}")
    peer = line_peer([COIL, "--agent", *args], cwd=workdir)
    out = []
    try:
        for i, (_, code, _) in enumerate(CELLS, 1):
            peer.send({"id": i, "code": code})
            while True:
                line = peer.raw_line(TIMEOUT).decode("utf-8")
                msg = json.loads(line)
                if msg.get("id") == i and "event" not in msg:
                    break
            out.append((line, "\n".join(strings(msg))))
    finally:
        peer.close()
    return out


def jupyter_text(msgs):
    """What a tool loop hands the model from a cell's iopub messages."""
    parts = []
    for m in msgs:
        kind, content = m["msg_type"], m["content"]
        if kind == "stream":
            parts.append(content["text"])
        elif kind in ("execute_result", "display_data"):
            parts.append(content["data"].get("text/plain", ""))
        elif kind == "error":
            parts.append(ANSI.sub("", "\n".join(content["traceback"])))
    text = ""
    for p in parts:
        if text and not text.endswith("\n"):
            text += "\n"
        text += p
    return text


def jupyter_session(workdir):
    """Each cell's text from a Jupyter python3 kernel started in workdir
    (it inherits this process's directory)."""
    here = os.getcwd()
    os.chdir(workdir)
    try:
        km, kc = jupyter_start()
    finally:
        os.chdir(here)
    out = []
    try:
        for _, code, _ in CELLS:
            msgs = []
            kc.execute_interactive(code, timeout=TIMEOUT,
                                   output_hook=msgs.append)
            text = jupyter_text(msgs)
            out.append((text, text))
    finally:
        jupyter_stop(km, kc)
    return out


def run(session, top, name):
    """session's texts, or the reason it could not run."""
    workdir = os.path.join(top, name)
    os.mkdir(workdir)
    write_csv(os.path.join(workdir, CSV))
    try:
        return session(workdir), None
    except NA as e:
        return None, str(e)
    except Exception as e:  # noqa: BLE001 - a peer's failure is a row
        return None, f"{type(e).__name__}: {e}"[:160]


def missing(texts, i):
    if texts is None:
        return None
    return [s for s in CELLS[i][2] if s not in texts[i][1]]


def found(miss, i):
    need = len(CELLS[i][2])
    if miss is None:
        return "n/a"
    if not miss:
        return f"{need}/{need}"
    return f"{need - len(miss)}/{need} (no {', '.join(map(repr, miss))})"


def ratio(a, b):
    return f"{a / b:.2f}" if b else "—"


def table(coil, jupyter, coil_na, jupyter_na):
    """Prints the table; returns the failures, as sentences."""
    print("| # | cell | coil | Jupyter | coil/Jupyter "
          "| needed, in coil | needed, in Jupyter |")
    print("| ---: | --- | ---: | ---: | ---: | --- | --- |")
    tc = tj = 0
    fails = []
    for i, (what, _, _) in enumerate(CELLS):
        c = len(coil[i][0]) if coil else None
        j = len(jupyter[i][0]) if jupyter else None
        mc, mj = missing(coil, i), missing(jupyter, i)
        if mc:
            fails.append(f"coil's answer to cell {i + 1} ({what}) lacks "
                         f"{', '.join(map(repr, mc))}")
        tc += c or 0
        tj += j or 0
        row = [str(i + 1), what, "n/a" if c is None else f"{c:,}",
               "n/a" if j is None else f"{j:,}",
               ratio(c, j) if coil and jupyter else "—",
               found(mc, i), found(mj, i)]
        print("| " + " | ".join(x.replace("|", "\\|") for x in row) + " |")
    need = sum(len(c[2]) for c in CELLS)
    nc = need - sum(len(missing(coil, i)) for i in range(len(CELLS))) \
        if coil else None
    nj = need - sum(len(missing(jupyter, i)) for i in range(len(CELLS))) \
        if jupyter else None
    total = ["", "**total**",
             f"**{tc:,}**" if coil else f"n/a ({coil_na})",
             f"**{tj:,}**" if jupyter else f"n/a ({jupyter_na})",
             f"**{ratio(tc, tj)}**" if coil and jupyter else "—",
             f"{nc}/{need}" if coil else "n/a",
             f"{nj}/{need}" if jupyter else "n/a"]
    print("| " + " | ".join(x.replace("|", "\\|") for x in total) + " |")
    if not coil:
        fails.append(f"coil did not run: {coil_na}")
    elif jupyter and tc >= tj:
        fails.append(f"coil's {tc:,} characters are not fewer than "
                     f"Jupyter's {tj:,}")
    return fails


def dump(path, coil, jupyter):
    os.makedirs(path, exist_ok=True)
    for name, texts in (("coil.json", coil), ("jupyter.txt", jupyter)):
        for i, (text, _) in enumerate(texts or ()):
            with open(os.path.join(path, f"{i + 1:02d}-{name}"), "w") as f:
                f.write(text + "\n")


def main():
    args = sys.argv[1:]
    if args not in ([],) and not (len(args) == 2 and args[0] == "--dump"):
        sys.exit(__doc__)
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    top = tempfile.mkdtemp(prefix="coil-tokens-")
    try:
        coil, coil_na = run(lambda d: coil_session(d, "--brief"), top,
                            "coil")
        full, _ = run(coil_session, top, "coil-full")
        jupyter, jupyter_na = run(jupyter_session, top, "jupyter")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if args:
        dump(args[1], coil, jupyter)
    print(f"Characters handed to the model, per cell, for a fixed "
          f"{len(CELLS)}-cell pandas session:")
    print()
    fails = table(coil, jupyter, coil_na, jupyter_na)
    print()
    print("coil: the `coil --agent --brief` response line, as is.  Jupyter: "
          "stream text, `text/plain` of results and displays, traceback "
          "lines without ANSI colours (bench/tokens.py says more).")
    if coil:
        env = sum(envelope(line) for line, _ in coil)
        print(f"Of coil's characters, {env:,} are the JSON around the "
              f"cells' text (keys, ids, status, duration...), "
              f"{env / len(CELLS):.0f} a cell.")
    if full:
        print(f"Without --brief (every field, empty ones too), coil hands "
              f"the model {sum(len(line) for line, _ in full):,} "
              f"characters.")
    for f in fails:
        print(f"tokens: {f}", file=sys.stderr)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
