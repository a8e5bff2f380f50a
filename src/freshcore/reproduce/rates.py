"""Optimal crawl rates: the periodic optimum (Azar et al.; eq. (5) of Busa-Fekete et al. (2025)) and the
Poisson one (eq. (10) of Avrachenkov, Patil and Thoppe (2020)) on SPEC section 2's check distribution.

m = 1000 pages with Delta, mu ~ U[0, 1], R = 100.  SPEC reports one draw (seed unknown): periodic accuracy
0.359370 with 539 pages crawled.  We report the mean and standard deviation over seeded draws
(``default_rng(0..9)``; ``quick``: 5), beside it.
"""

from __future__ import annotations

import numpy as np

from ..rates import freshness, optimal_rates
from ._tables import R, Table

REFERENCE = {"periodic accuracy": 0.359370, "periodic crawled": 539}


def run(quick: bool = False, seed: int = 0) -> list[Table]:
    draws = range(seed, seed + (5 if quick else 10))
    table = Table(f"Optimal rates, m = 1000, Delta, mu ~ U[0, 1], R = {R:g}: mean ± sd over {len(draws)} draws "
                  "(reference: SPEC section 2, one draw of unknown seed)",
                  ["model", "accuracy", "pages crawled", "reference"])
    for model in ("periodic", "poisson"):
        acc, crawled = [], []
        for s in draws:
            rng = np.random.default_rng(s)
            dl, mu = rng.uniform(0, 1, 1000), rng.uniform(0, 1, 1000)
            xi = optimal_rates(dl, mu, R, model=model)
            acc.append(float(freshness(xi, dl, mu, model=model)))
            crawled.append(int(np.count_nonzero(xi > 0)))
        a, c = np.array(acc), np.array(crawled)
        ref = f"{REFERENCE['periodic accuracy']:.6f}, {REFERENCE['periodic crawled']}" if model == "periodic" else ""
        table.rows.append([model, f"{a.mean():.4f}±{a.std():.4f}", f"{c.mean():.0f}±{c.std():.0f}", ref])
        table.values.update({f"{model} accuracy mean": float(a.mean()), f"{model} accuracy sd": float(a.std()),
                             f"{model} crawled mean": float(c.mean()), f"{model} crawled sd": float(c.std())})
    return [table]
