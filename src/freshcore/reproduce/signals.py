"""The scheduler with change signals: Fig. 4 of Busa-Fekete, Zimmert, György et al. (2025).

lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6), R = 100, horizon 100, m in {100, 200, 500, 1000}, 3 instances,
20% burn-in: the signal-blind periodic optimum, the signal-aware continuous optimum (Theorem 2), and the
scheduler with the crawl values GREEDY (no signals), GREEDY-CIS, GREEDY-NCIS (exact) and its approx-1 and
approx-2 truncations.  SPEC section 4's reproduction, GREEDY / G-CIS / G-NCIS / approx-1 / approx-2:
m = 100: 0.845/0.915/0.922/0.920/0.922; m = 200: 0.704/0.741/0.778/0.774/0.783; m = 500:
0.510/0.438/0.544/0.530/0.542; m = 1000: 0.363/0.266/0.382/0.360/0.377.  ``quick``: m in {100, 500},
horizon 30.
"""

from __future__ import annotations

import numpy as np

from ..policy_simulation import simulate
from ..rates import freshness, optimal_rates
from ..schedule import Scheduler
from ..thresholds import optimal_thresholds
from ._tables import N_INSTANCES, R, Table, fmt, instance

POLICIES = (("GREEDY", "greedy", None), ("G-CIS", "cis", None), ("G-NCIS", "exact", None),
            ("approx-1", "approx", 1), ("approx-2", "approx", 2))
REFERENCE = {100: (0.845, 0.915, 0.922, 0.920, 0.922), 200: (0.704, 0.741, 0.778, 0.774, 0.783),
             500: (0.510, 0.438, 0.544, 0.530, 0.542), 1000: (0.363, 0.266, 0.382, 0.360, 0.377)}


def run(quick: bool = False, seed: int = 0, horizon: float | None = None) -> list[Table]:
    sizes = (100, 500) if quick else (100, 200, 500, 1000)
    horizon = horizon if horizon is not None else (30.0 if quick else 100.0)
    main = Table(f"Busa-Fekete et al. (2025), Fig. 4: lambda ~ Beta(.25,.25), nu ~ U(.1,.6), R = {R:g}, horizon "
                 f"{horizon:g}, {N_INSTANCES} instances, 20% burn-in (reference: SPEC section 4, horizon 100)",
                 ["m", "opt(blind)", "opt(signals)", *[name for name, _, _ in POLICIES], "reference"])
    se_table = Table("mean within-run standard error", ["m", *[name for name, _, _ in POLICIES]])
    for m in sizes:
        blind, aware = [], []
        acc: dict[str, list[float]] = {name: [] for name, _, _ in POLICIES}
        se: dict[str, list[float]] = {name: [] for name, _, _ in POLICIES}
        for k in range(N_INSTANCES):
            pages = instance(m, k, signals=True)
            xi = optimal_rates(pages.change_rate, pages.importance, R, model="periodic")
            blind.append(float(freshness(xi, pages.change_rate, pages.importance, model="periodic")))
            aware.append(optimal_thresholds(pages, R).accuracy)
            for name, value, terms in POLICIES:
                res = simulate(Scheduler(pages, R, value=value, terms=terms), pages, horizon, rng=seed + k)
                acc[name].append(res.accuracy)
                se[name].append(res.accuracy_se)
        main.rows.append([str(m), fmt(blind), fmt(aware), *[fmt(acc[name]) for name, _, _ in POLICIES],
                          "/".join(f"{v:.3f}" for v in REFERENCE[m])])
        se_table.rows.append([str(m), *[f"{np.mean(se[name]):.4f}" for name, _, _ in POLICIES]])
        main.values.update({f"{name}@{m}": float(np.mean(acc[name])) for name, _, _ in POLICIES})
        main.values.update({f"se {name}@{m}": float(np.mean(se[name])) for name, _, _ in POLICIES})
        main.values.update({f"opt(signals)@{m}": float(np.mean(aware)), f"opt(blind)@{m}": float(np.mean(blind))})
    return [main, se_table]
