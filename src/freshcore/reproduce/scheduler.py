"""The scheduler without signals: Fig. 2 and Appendix B of Busa-Fekete, Zimmert, György et al. (2025).

R = 100, horizon 1000, m in {100, 200, 500, 1000}, 3 instances (``_tables.instance``), accuracy after a 20%
burn-in.  The optimum is the periodic continuous optimum (``optimal_rates(..., model="periodic")``, their
eq. (5)); LDS crawls at those rates; GREEDY is ``Scheduler(value="greedy")``.  Columns: mean ± standard error
over the instances, the mean within-run standard error (batch means), and the mean and largest absolute
difference to the optimum on the same instance.  The second table compares the empirical crawl rates after
the burn-in with the optimal rates (their Appendix B).  SPEC section 4's reproduction: optimum / GREEDY / LDS
= 0.834/0.833/0.833 (m = 100), 0.701/0.702/0.702 (200), 0.511/0.510/0.510 (500), 0.371/0.371/0.370 (1000).
``quick``: m in {100, 200}, horizon 200.
"""

from __future__ import annotations

import numpy as np

from ..policies import LowDiscrepancy
from ..policy_simulation import simulate
from ..rates import freshness, optimal_rates
from ..schedule import Scheduler
from ._tables import N_INSTANCES, R, Table, fmt, instance

REFERENCE = {100: (0.834, 0.833, 0.833), 200: (0.701, 0.702, 0.702), 500: (0.511, 0.510, 0.510),
             1000: (0.371, 0.371, 0.370)}


def run(quick: bool = False, seed: int = 0, horizon: float | None = None) -> list[Table]:
    sizes = (100, 200) if quick else (100, 200, 500, 1000)
    horizon = horizon if horizon is not None else (200.0 if quick else 1000.0)
    main = Table(f"Busa-Fekete et al. (2025), Fig. 2: no signals, R = {R:g}, horizon {horizon:g}, {N_INSTANCES} "
                 "instances, 20% burn-in (reference: SPEC section 4, horizon 1000)",
                 ["m", "optimum", "GREEDY", "se(run)", "LDS", "se(run)", "G-opt", "max|G-opt|", "L-opt",
                  "max|L-opt|", "reference"])
    rates = Table("Busa-Fekete et al. (2025), Appendix B: empirical crawl rates r against the optimal rates xi, "
                  "sum|r - xi| / sum(xi)", ["m", "mean #(xi > 0)", "GREEDY", "LDS"])
    for m in sizes:
        opt, n_crawled = [], []
        acc: dict[str, list[float]] = {"GREEDY": [], "LDS": []}
        se: dict[str, list[float]] = {"GREEDY": [], "LDS": []}
        diff: dict[str, list[float]] = {"GREEDY": [], "LDS": []}
        dist: dict[str, list[float]] = {"GREEDY": [], "LDS": []}
        for k in range(N_INSTANCES):
            pages = instance(m, k)
            xi = optimal_rates(pages.change_rate, pages.importance, R, model="periodic")
            o = float(freshness(xi, pages.change_rate, pages.importance, model="periodic"))
            opt.append(o)
            n_crawled.append(int((xi > 0).sum()))
            for name, pol in (("GREEDY", Scheduler(pages, R, value="greedy")), ("LDS", LowDiscrepancy(xi, R))):
                res = simulate(pol, pages, horizon, rng=seed + k)
                acc[name].append(res.accuracy)
                se[name].append(res.accuracy_se)
                diff[name].append(res.accuracy - o)
                dist[name].append(float(np.abs(res.empirical_rates - xi).sum() / xi.sum()))
        row = [str(m), fmt(opt)]
        for name in ("GREEDY", "LDS"):
            row += [fmt(acc[name]), f"{np.mean(se[name]):.4f}"]
        for name in ("GREEDY", "LDS"):
            row += [f"{np.mean(diff[name]):+.4f}", f"{np.max(np.abs(diff[name])):.4f}"]
        main.rows.append([*row, "/".join(f"{v:.3f}" for v in REFERENCE[m])])
        rates.rows.append([str(m), f"{np.mean(n_crawled):.0f}", fmt(dist["GREEDY"]), fmt(dist["LDS"])])
        main.values.update({f"optimum@{m}": float(np.mean(opt)), f"GREEDY@{m}": float(np.mean(acc["GREEDY"])),
                            f"LDS@{m}": float(np.mean(acc["LDS"])),
                            f"max|GREEDY-opt|@{m}": float(np.max(np.abs(diff["GREEDY"]))),
                            f"max|LDS-opt|@{m}": float(np.max(np.abs(diff["LDS"])))})
    return [main, rates]
