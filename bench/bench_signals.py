"""Signal-model fit (Appendix E of Busa-Fekete et al. (2025)): compiled projected Newton vs a
``scipy.optimize.minimize`` loop.

Both sides maximise the same log-likelihood on the same simulated logs (Delta = 0.2,
recall 0.6, nu = 0.1, Poisson crawling at p = 0.4, k = 100 crawls per page).  The
baseline is the natural pure-Python way: a loop over pages calling
``scipy.optimize.minimize(method="L-BFGS-B")`` with bounds a, b >= 0 on the numpy
negative log-likelihood and its exact gradient (ftol 1e-15, gtol 1e-12, the
accuracy the tests compare at), started from the signal-blind guess.

One baseline page costs milliseconds, so 10^5 pages would take minutes: the
baseline runs at 10^3 pages only.  The group at 10^3 pages compares like with like;
at 10^5 pages the compiled fit runs alone, and its ratio to the baseline is
``t(10^5) / (100 t_baseline(10^3))`` (the fit is linear in the number of pages),
computed by hand from the printed medians.

Current figures: ``bench/README.md``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from freshcore.signals import fit_signal_model, simulate_signal_log

from benchutil import role, sizes

K = 100


def _log(n):
    return simulate_signal_log(np.full(n, 0.2), 0.6, 0.1, 0.4, K, rng=12345)


def _neg_loglik(x, tau, n, z):
    s = x[0] * tau + x[1] * n
    c = z == 1
    value = np.sum(s[~c]) - np.sum(np.log(-np.expm1(-s[c])))
    with np.errstate(over="ignore"):
        r = 1.0 / np.expm1(s[c])
    return value, np.array([tau[~c].sum() - (r * tau[c]).sum(), n[~c].sum() - (r * n[c]).sum()])


def _minimize_loop(elapsed, n_signals, changed):
    out = np.empty((len(elapsed), 2))
    counts = n_signals.astype(float)
    for i in range(len(elapsed)):
        tau, n, z = elapsed[i], counts[i], changed[i]
        a0 = max(z.sum(), 1) / tau.sum()
        res = minimize(_neg_loglik, [a0, 1.0], args=(tau, n, z), jac=True, method="L-BFGS-B",
                       bounds=[(1e-12, None), (0.0, None)], options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 1000})
        out[i] = res.x
    return out


@pytest.mark.parametrize("n", sizes(1_000, smoke=50))
def test_signal_fit_minimize_loop(benchmark, n):
    benchmark.group = f"signal-model fit, {n} pages x {K} crawls"
    role(benchmark, "baseline", n=n, k=K)
    log = _log(n)
    est = benchmark.pedantic(_minimize_loop, args=tuple(log), rounds=3, iterations=1)
    fit = fit_signal_model(*log)
    np.testing.assert_allclose(est[:, 0], fit.alpha, rtol=1e-4)


@pytest.mark.parametrize("n", sizes(1_000, 100_000, smoke=50))
def test_signal_fit_freshcore(benchmark, n):
    benchmark.group = f"signal-model fit, {n} pages x {K} crawls"
    role(benchmark, "freshcore", n=n, k=K)
    log = _log(n)
    fit = benchmark(fit_signal_model, *log)
    assert fit.alpha.shape == (n,)
