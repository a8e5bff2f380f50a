"""Reproduce Appendix D of Busa-Fekete et al. (2025): GREEDY follows a bandwidth step 100 -> 150 -> 100
(SPEC section 4).

m = 1000 pages (no signals), 3 instances (``repro_common``).  The rate is 100
on [0, 150), 150 on [150, 300) and 100 on [300, 450]
(``simulate(..., bandwidth_schedule=([150, 300], [150, 100]))``); GREEDY
(``Scheduler(value="greedy")``) gets no other information.  Per phase, the
accuracy over its last 100 time units (the first 50 are left to settle) is
compared with the continuous optimum at that phase's bandwidth.  LDS driven by
the R = 100 optimum (rates never re-solved) is shown for contrast.  Entries:
mean ± standard error over the instances; the within-run standard errors are
printed below.  The second table follows the accuracy in blocks of 25 time
units (instance 0), as in their Fig. 9.

Run: ``PYTHONPATH=src python bench/repro_appendix_d.py``.

Output (2 shared cores, 2026-11-22)::

    Busa-Fekete et al. (2025), Appendix D: m = 1000, bandwidth 100 -> 150 (t = 150) -> 100 (t = 300), 3 instances
        window    R     optimum(R)         GREEDY  se(run)       LDS(100)  se(run)
     [50, 150)  100  0.3695±0.0059  0.3700±0.0035   0.0030  0.3714±0.0041   0.0029
    [200, 300)  150  0.4500±0.0062  0.4499±0.0080   0.0025  0.4428±0.0063   0.0030
    [350, 450)  100  0.3695±0.0059  0.3687±0.0044   0.0031  0.3682±0.0041   0.0029
    accuracy per block of 25 time units (instance 0)
      policy      0     25     50     75    100    125    150    175    200    225    250    275    300    325    350    375    400    425
      GREEDY  0.414  0.368  0.378  0.385  0.369  0.372  0.466  0.463  0.452  0.465  0.469  0.471  0.385  0.373  0.378  0.372  0.384  0.371
    LDS(100)  0.411  0.373  0.374  0.386  0.382  0.376  0.452  0.455  0.443  0.445  0.460  0.470  0.380  0.380  0.377  0.375  0.381  0.367
    ticks (instance 0, GREEDY): 52500, spacing 0.0067..0.0100
"""

from __future__ import annotations

import time

import numpy as np

from freshcore.policies import LowDiscrepancy
from freshcore.policy_simulation import simulate
from freshcore.rates import freshness, optimal_rates
from freshcore.schedule import Scheduler

from repro_common import N_INSTANCES, fmt, instance, print_table

M = 1000
PHASES = ((0.0, 150.0, 100.0), (150.0, 300.0, 150.0), (300.0, 450.0, 100.0))
SCHEDULE = ([150.0, 300.0], [150.0, 100.0])


def main() -> None:
    t0 = time.perf_counter()
    opt = {r: [] for r in (100.0, 150.0)}
    acc = {(name, i): [] for name in ("GREEDY", "LDS(100)") for i in range(3)}
    se = {(name, i): [] for name in ("GREEDY", "LDS(100)") for i in range(3)}
    series = {}
    for k in range(N_INSTANCES):
        pages = instance(M, k)
        for r in opt:
            xi = optimal_rates(pages.change_rate, pages.importance, r, model="periodic")
            opt[r].append(freshness(xi, pages.change_rate, pages.importance, model="periodic"))
        xi100 = optimal_rates(pages.change_rate, pages.importance, 100.0, model="periodic")
        for name, pol in (("GREEDY", Scheduler(pages, 100.0, value="greedy")),
                          ("LDS(100)", LowDiscrepancy(xi100, 100.0))):
            res = simulate(pol, pages, 450.0, rng=k, bandwidth_schedule=SCHEDULE, burn_in=0.0)
            for i, (a, b, _) in enumerate(PHASES):
                ai, si = res.accuracy_between(a + 50.0, b + (1e-9 if b == 450.0 else 0.0))
                acc[(name, i)].append(ai)
                se[(name, i)].append(si)
            if k == 0:
                series[name] = [res.accuracy_between(s, s + 25.0)[0] for s in np.arange(0.0, 450.0, 25.0)]
                gaps = np.diff(res.crawl_times)
                series[name + " ticks"] = (len(res.crawl_times), float(gaps.min()), float(gaps.max()))
    rows = []
    for i, (a, b, r) in enumerate(PHASES):
        rows.append([f"[{a + 50:g}, {b:g})", f"{r:g}", fmt(opt[r]), fmt(acc[("GREEDY", i)]),
                     f"{np.mean(se[('GREEDY', i)]):.4f}", fmt(acc[("LDS(100)", i)]),
                     f"{np.mean(se[('LDS(100)', i)]):.4f}"])
    print(f"Busa-Fekete et al. (2025), Appendix D: m = {M}, bandwidth 100 -> 150 (t = 150) -> 100 (t = 300), "
          f"{N_INSTANCES} instances")
    print_table(["window", "R", "optimum(R)", "GREEDY", "se(run)", "LDS(100)", "se(run)"], rows)
    print("accuracy per block of 25 time units (instance 0)")
    starts = np.arange(0.0, 450.0, 25.0)
    print_table(["policy"] + [f"{s:g}" for s in starts],
                [[name] + [f"{v:.3f}" for v in series[name]] for name in ("GREEDY", "LDS(100)")])
    print(f"ticks (instance 0, GREEDY): {series['GREEDY ticks'][0]}, "
          f"spacing {series['GREEDY ticks'][1]:.4f}..{series['GREEDY ticks'][2]:.4f}")
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
