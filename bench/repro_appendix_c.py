"""Reproduce 001 Appendix C: delayed change signals, with and without the discard window (SPEC section 4).

R = 100, horizon 100, m in {100, 200, 500, 1000}, 3 instances with
``lambda ~ Beta(0.25, 0.25)``, ``nu ~ U(0.1, 0.6)`` (``repro_common``).  True
signals arrive ``Poisson(6)/R`` after their change (001 Appendix C: "delayed
with a random quantity generated from the Poisson distribution with v = 6";
we read the unit as ticks, 1/R, consistent with its window ``T_delay = 5/R``);
false signals are Poisson.  Columns: GREEDY (signals unused); GREEDY-NCIS
without delay; GREEDY-NCIS with the delays; GREEDY-NCIS-D with the delays and
signals discarded within ``T_delay = 5/R`` after the page's last crawl
(``Scheduler(signal_delay=5/R)``).  Entries: mean ± standard error over the
instances, then the mean within-run standard error and the fraction of
signals NCIS-D discarded.

Run: ``PYTHONPATH=src python bench/repro_appendix_c.py [horizon]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from repro_common import N_INSTANCES, R, fmt, instance, print_table

from freshcore.schedule import Scheduler
from freshcore.simulator import simulate


def poisson_delay(rng, n):
    return rng.poisson(6.0, n) / R


def main(horizon: float = 100.0, sizes=(100, 200, 500, 1000)) -> None:
    t0 = time.perf_counter()
    names = ("GREEDY", "NCIS", "NCIS delayed", "NCIS-D delayed")
    rows, se_rows = [], []
    for m in sizes:
        acc = {n: [] for n in names}
        se = {n: [] for n in names}
        dropped = []
        for k in range(N_INSTANCES):
            pages = instance(m, k, signals=True)
            runs = (
                ("GREEDY", Scheduler(pages, R, value="greedy"), None),
                ("NCIS", Scheduler(pages, R, value="exact"), None),
                ("NCIS delayed", Scheduler(pages, R, value="exact"), poisson_delay),
                ("NCIS-D delayed", Scheduler(pages, R, value="exact", signal_delay=5.0 / R), poisson_delay),
            )
            for name, pol, delay in runs:
                res = simulate(pol, pages, horizon, seed=k, signal_delay=delay)
                acc[name].append(res.accuracy)
                se[name].append(res.accuracy_se)
                if name == "NCIS-D delayed":
                    dropped.append(1.0 - res.n_signals_counted / res.n_signals)
        rows.append([str(m)] + [fmt(acc[n]) for n in names])
        se_rows.append([str(m)] + [f"{np.mean(se[n]):.4f}" for n in names] + [f"{np.mean(dropped):.3f}"])
    print(f"001 Appendix C: signal delays Poisson(6)/R, window T_delay = 5/R, R = {R:g}, horizon {horizon:g}, "
          f"{N_INSTANCES} instances")
    print_table(["m", *names], rows)
    print("mean within-run standard error; fraction of signals discarded by NCIS-D")
    print_table(["m", *names, "discarded"], se_rows)
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 100.0)
