#!/usr/bin/python3
"""numpy, pandas and matplotlib work under every profile with the default
limits: imports, a matmul, a DataFrame, a plot saved to the work dir."""
import os
import sbxlib

CELL = r'''
import time
t0 = time.time()
import numpy as np, pandas as pd
import matplotlib
import matplotlib.pyplot as plt
t("imports", lambda: round(time.time() - t0, 2))
t("matmul", lambda: float((np.ones((300, 300)) @ np.ones((300, 300))).sum()))
t("pandas", lambda: int(pd.DataFrame({"a": range(10)}).a.sum()))
def plot():
    fig, ax = plt.subplots(); ax.plot([1, 3, 2]); fig.savefig("plot.png")
    return os.path.getsize("plot.png") > 1000
t("plot", plot)
t("threads", lambda: os.environ.get("OPENBLAS_NUM_THREADS"))
'''

tap = sbxlib.begin("numpy, pandas and matplotlib")
try:
    import numpy, pandas, matplotlib  # noqa: F401
except ImportError as e:
    tap.skip("all", "the system Python lacks %s" % e.name)
    tap.done()
wd = sbxlib.tmpdir("sbx-wd-")
for p in sbxlib.PROFILES:
    r = sbxlib.run(p, [CELL, sbxlib.SESSION_OK], wd)
    for n in ("imports", "matmul", "pandas", "plot"):
        tap.allowed(r, n, "works")
    tap.ok(r.get("matmul")[1] == str(300.0 ** 3), "%s: the matmul is right"
           % p, r)
    tap.ok(os.path.exists(os.path.join(wd, "plot.png")), "%s: plot.png is "
           "in the work dir" % p)
    if p != "none":
        tap.ok(r.get("threads")[1] == repr(str(len(os.sched_getaffinity(0)))),
               "%s: OPENBLAS_NUM_THREADS is the CPUs allowed (%s)"
               % (p, r.get("threads")[1]), r)
    os.remove(os.path.join(wd, "plot.png"))
    tap.session(r)
tap.done()
