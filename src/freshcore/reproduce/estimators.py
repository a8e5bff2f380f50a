"""Change-rate estimators: RMSE of Naive, LLN, SA, SAM and the MLE (Avrachenkov, Patil and Thoppe (2022)).

Delta = 5, Poisson crawling at p = 3, the paper's defaults (LLN alpha = 1; SA eta = 0.75; SAM eta = 1.3,
beta = 0.75, omega = 1), the RMSE over independent runs after k crawls, beside the reference table of SPEC
section 1 (1000 runs).  ``quick``: 200 runs, k = 100 and 1000 only.
"""

from __future__ import annotations

import numpy as np

from ..estimation import LLNBatch, NaiveBatch, SABatch, SAMBatch
from ..mle import mle_rates
from ..synthetic_logs import simulate_crawls
from ._tables import Table

DELTA, P = 5.0, 3.0
REFERENCE = {  # SPEC section 1: RMSE over 1000 runs
    100: {"Naive": 3.13, "LLN": 1.06, "SA": 0.98, "SAM": 1.04, "MLE": 0.82},
    1000: {"Naive": 3.13, "LLN": 0.33, "SA": 0.38, "SAM": 0.38, "MLE": 0.25},
    5000: {"Naive": 3.12, "LLN": 0.15, "SA": 0.20, "SAM": 0.20, "MLE": 0.11},
}
NAMES = ("Naive", "LLN", "SA", "SAM", "MLE")


def run(quick: bool = False, seed: int = 0) -> list[Table]:
    runs = 200 if quick else 1000
    ks = (100, 1000) if quick else (100, 1000, 5000)
    changed, tau = simulate_crawls(np.full(runs, DELTA), P, max(ks), rng=seed)
    batches = {"Naive": NaiveBatch(runs, crawl_rate=P), "LLN": LLNBatch(runs, crawl_rate=P),
               "SA": SABatch(runs, crawl_rate=P), "SAM": SAMBatch(runs, crawl_rate=P)}
    table = Table(f"Avrachenkov, Patil and Thoppe (2022): RMSE over {runs} runs, Delta = {DELTA:g}, Poisson crawling "
                  f"at p = {P:g} (reference: 1000 runs, SPEC section 1)",
                  ["k", *[f"{n}" for n in NAMES], *[f"ref {n}" for n in NAMES]])
    done = 0
    for k in ks:
        for j in range(done, k):
            for b in batches.values():
                b.update(changed[:, j])
        done = k
        est = {n: b.rates for n, b in batches.items()}
        est["MLE"] = mle_rates(changed[:, :k], tau[:, :k], upper=1000 * P)
        rmse = {n: float(np.sqrt(np.mean((est[n] - DELTA) ** 2))) for n in NAMES}
        table.rows.append([str(k), *[f"{rmse[n]:.3f}" for n in NAMES], *[f"{REFERENCE[k][n]:.2f}" for n in NAMES]])
        table.values.update({f"{n}@{k}": rmse[n] for n in NAMES})
    return [table]
