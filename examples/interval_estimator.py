"""Bias and RMSE of the streaming interval-aware MLE against the offline MLE and SA.

Delta = 5, crawl rate p = 3 (mean), k = 100 and 1000 observations, 1000 seeded runs
per cell, under Poisson, periodic and jittered-periodic (tau = (1 + 0.5 U)/p,
U ~ U(-1, 1)) crawling.  Estimators:

* ``binned``  — :class:`freshcore.mle.IntervalMLEBatch` (default 32 log-spaced bins
  on [1e-3, 1e3], i.e. 54 % wide, two moment-matched points per bin): streaming,
  O(1) per update, 3*32 + 4 numbers per page;
* ``MLE``     — :func:`freshcore.mle.mle_rates`, offline, uses every interval;
* ``SA``      — the SA estimator of Avrachenkov, Patil and Thoppe (2022) (their
  eq. (2), eta = 0.75, y_0 = 0) with p the mean crawl rate, i.e. assuming
  Poisson crawling (``estimate_rates(method="sa")``).

``bias ± se`` is the mean error over the runs with its standard error.

Measured on this machine (``PYTHONPATH=src python examples/interval_estimator.py``, seed 2026)::

    Delta = 5.0, p = 3.0, 1000 runs per row; bias ± standard error, RMSE
    schedule   k      binned bias ± se   RMSE |  MLE bias ± se   RMSE |  SA bias ± se   RMSE | max|binned-MLE|/MLE
    poisson    100     +0.159 ± 0.026   0.824 | +0.159 ± 0.026   0.823 | -0.104 ± 0.031   0.992 |             3.3e-04
    poisson    1000    +0.011 ± 0.008   0.241 | +0.010 ± 0.008   0.241 | -0.002 ± 0.012   0.366 |             1.4e-04
    periodic   100     +0.061 ± 0.020   0.637 | +0.061 ± 0.020   0.637 | +5.716 ± 0.061   6.030 |             1.6e-15
    periodic   1000    +0.011 ± 0.006   0.200 | +0.011 ± 0.006   0.200 | +7.571 ± 0.030   7.631 |             1.3e-14
    jittered   100     +0.044 ± 0.020   0.644 | +0.044 ± 0.020   0.644 | +4.615 ± 0.057   4.949 |             8.0e-05
    jittered   1000    +0.014 ± 0.006   0.198 | +0.014 ± 0.006   0.198 | +6.011 ± 0.025   6.063 |             1.3e-05

SA is consistent only under Poisson crawling (under periodic crawling it tends to
p P/(1 - P) = 12.9 with P = 1 - e^{-Delta/p}); the binned streaming MLE follows
the offline MLE under all three schedules: identical up to rounding under periodic
crawling (one interval length, so the bins are exact), within 0.04 % of it under
Poisson and jittered crawling, and both keep only the MLE's small O(1/k) bias.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore.estimation import estimate_rates
from freshcore.mle import IntervalMLEBatch, mle_rates
from freshcore.synthetic_logs import simulate_crawls

DELTA, P, RUNS, SEED = 5.0, 3.0, 1000, 2026


def summary(est: np.ndarray) -> str:
    err = est - DELTA
    return f"{err.mean():+.3f} ± {err.std(ddof=1) / math.sqrt(len(err)):.3f}   {math.sqrt(np.mean(err**2)):.3f}"


def main() -> None:
    rng = np.random.default_rng(SEED)
    print(f"Delta = {DELTA}, p = {P}, {RUNS} runs per row; bias ± standard error, RMSE")
    print(f"{'schedule':<10s} {'k':<5s} {'binned bias ± se   RMSE':>24s} | {'MLE bias ± se   RMSE':>21s} | "
          f"{'SA bias ± se   RMSE':>20s} | {'max|binned-MLE|/MLE':>19s}")
    for schedule in ("poisson", "periodic", "jittered"):
        for k in (100, 1000):
            changed, tau = simulate_crawls(np.full(RUNS, DELTA), P, k, schedule=schedule, jitter=0.5, rng=rng)
            batch = IntervalMLEBatch(RUNS)
            for j in range(k):  # one crawl of every page per call, as a crawler would feed it
                batch.update(changed[:, j], intervals=tau[:, j])
            binned = batch.rates
            offline = mle_rates(changed, tau)
            sa = estimate_rates(changed, crawl_rate=P, method="sa")  # eq. (2) of Avrachenkov et al. (2022), eta = 0.75
            ok = offline > 0
            gap = np.max(np.abs(binned[ok] - offline[ok]) / offline[ok])
            print(f"{schedule:<10s} {k:<5d} {summary(binned):>24s} | {summary(offline):>21s} | {summary(sa):>20s} | "
                  f"{gap:19.1e}")


if __name__ == "__main__":
    main()
