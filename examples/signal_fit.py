"""Precision and recall of change-indicating signals: the MLE of Appendix E of Busa-Fekete et al. (2025) against naive
counting.

Design of their Appendix E: per page, precision and recall ~ U[0.2, 0.95], mean
change interval 1/Delta ~ U[2, 20], crawl rate p = c Delta with c from 1/4 to 4,
Poisson crawling, horizon 10^5 (so 1,250 to 200,000 crawls per page); the false
signal rate follows from the precision, nu = lambda Delta (1 - precision)/precision.
The paper does not say how c is drawn: ``c ~ U`` draws it uniformly on [1/4, 4]
(as the other parameters), ``c ~ logU`` log-uniformly (as many pages crawled
slower as faster than they change, hence fewer crawls on average).

Estimators, per page:

* ``MLE``   — :func:`freshcore.signals.fit_signal_model`, Delta estimated from the
  same log (Delta = alpha + gamma precision);
* ``naive`` — :func:`freshcore.signals.naive_signal_model`, interval counting.

``MAE`` is the mean absolute error over the pages, ``bias ± se`` the mean signed
error with its standard error.

Measured on this machine (``PYTHONPATH=src python examples/signal_fit.py``, seed 2026)::

    Appendix E design, horizon 1e+05, 1000 pages per row
    c draw     estimator   precision MAE  bias ± se             recall MAE  bias ± se
    c ~ U      MLE               0.00690  -0.00065 ± 0.00032          0.00707  -0.00054 ± 0.00033
    c ~ U      naive             0.18108  +0.18108 ± 0.00376          0.17041  +0.17041 ± 0.00342
    c ~ logU   MLE               0.00961  +0.00002 ± 0.00044          0.01005  +0.00028 ± 0.00049
    c ~ logU   naive             0.24009  +0.24009 ± 0.00464          0.22322  +0.22322 ± 0.00413
    (7.1 s)

With c ~ U the MLE meets issue 3's bound (mean absolute error <= 1e-2) with a
margin (0.0069, 0.0071; the tests assert it on this reading); with c ~ logU it
sits at the bound (0.0096, 0.0100): its error is statistical, it falls as one over
the square root of the number of crawls, and log-uniform c gives fewer crawls.
The MLE's mean signed error is within about 2 standard errors of 0; the naive
counts overestimate both precision and recall by 0.17 to 0.24 (a false signal and
an unsignalled change in the same interval count as a true signal).  The paper's
"order of 1e-4" (its Fig. 11) is not reproduced at this horizon: with 10^3 to
10^5 crawls per page, sampling error alone is of order 1e-2.
"""

from __future__ import annotations

import time

import numpy as np

from freshcore.signals import fit_signal_model, naive_signal_model, simulate_signal_log

HORIZON = 1e5
PAGES = 1000
SEED = 2026


def errors(log_uniform: bool, rng: np.random.Generator):
    precision = rng.uniform(0.2, 0.95, PAGES)
    recall = rng.uniform(0.2, 0.95, PAGES)
    delta = 1.0 / rng.uniform(2.0, 20.0, PAGES)
    c = np.exp(rng.uniform(np.log(0.25), np.log(4.0), PAGES)) if log_uniform else rng.uniform(0.25, 4.0, PAGES)
    p = c * delta
    nu = recall * delta * (1.0 - precision) / precision
    mle = np.empty((PAGES, 2))
    naive = np.empty((PAGES, 2))
    for i in range(PAGES):  # page by page: the logs differ in length by a factor of up to 160
        k = int(1.2 * p[i] * HORIZON) + 100
        log = simulate_signal_log(delta[i:i + 1], recall[i:i + 1], nu[i:i + 1], p[i:i + 1], k,
                                  horizon=HORIZON, rng=rng)
        fit = fit_signal_model(*log)
        est = naive_signal_model(*log)
        mle[i] = fit.precision[0] - precision[i], fit.recall[0] - recall[i]
        naive[i] = est.precision[0] - precision[i], est.recall[0] - recall[i]
    return mle, naive


def main() -> None:
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    print(f"Appendix E design, horizon {HORIZON:.0e}, {PAGES} pages per row")
    print(f"{'c draw':<10s} {'estimator':<10s} {'precision MAE':>14s}  {'bias ± se':<20s} "
          f"{'recall MAE':>11s}  bias ± se")
    for log_uniform in (False, True):
        mle, naive = errors(log_uniform, rng)
        label = "c ~ logU" if log_uniform else "c ~ U"
        for name, err in (("MLE", mle), ("naive", naive)):
            cells = []
            for j in range(2):
                e = err[:, j]
                se = e.std(ddof=1) / np.sqrt(len(e))
                cells.append(f"{np.abs(e).mean():14.5f}  {e.mean():+.5f} ± {se:.5f}   ")
            print(f"{label:<10s} {name:<10s} {cells[0]}{cells[1]}".rstrip())
    print(f"({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
