"""Offline MLE of change rates (eq. (16) of Avrachenkov et al. (2022)): compiled safeguarded Newton vs a brentq loop.

Both sides solve the same equation on the same simulated logs (Delta = 5, p = 3,
Poisson crawling, k = 100 observations per page) at the same size, so the printed
ratio compares like with like.  The baseline is the natural pure-Python way: a
loop over pages calling ``scipy.optimize.brentq`` (xtol=1e-300, rtol=4 eps, the
accuracy the tests demand) on a numpy-vectorised score over that page's k
observations.  At 10^5 pages one baseline call takes ~10 s, so in full mode it
is timed for a single round (``pedantic``, one call over all pages: the time is
an average over 10^5 root finds, stable enough) instead of scaling a subset.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from freshcore.mle import mle_rates
from freshcore.synthetic_logs import simulate_crawls

from benchutil import SMOKE, role, sizes

K = 100
EPS = np.finfo(float).eps


def _log(n):
    return simulate_crawls(np.full(n, 5.0), 3.0, K, rng=12345)


def _brentq_loop(changed, intervals):
    out = np.empty(len(changed))
    for i in range(len(changed)):
        c, t = changed[i], intervals[i]
        tau1 = t[c == 1]
        s0 = t[c == 0].sum()
        n1 = len(tau1)
        if n1 == 0:
            out[i] = 0.0
            continue
        if s0 == 0.0:
            out[i] = math.inf
            continue

        def score(d, tau1=tau1, s0=s0):
            return np.sum(tau1 / np.expm1(d * tau1)) - s0

        out[i] = brentq(score, n1 / (s0 + tau1.sum() / 2), n1 / s0, xtol=1e-300, rtol=4 * EPS)
    return out


@pytest.mark.parametrize("n", sizes(1_000, 100_000, smoke=200))
def test_mle_brentq_loop(benchmark, n):
    benchmark.group = f"offline MLE, {n} pages x {K} observations"
    role(benchmark, "baseline", n=n, k=K)
    changed, intervals = _log(n)
    if n >= 100_000 and not SMOKE:
        est = benchmark.pedantic(_brentq_loop, args=(changed, intervals), rounds=1, iterations=1)
    else:
        est = benchmark(_brentq_loop, changed, intervals)
    ref, _ = mle_rates(changed, intervals, upper=np.inf, return_clipped=True)
    ok = np.isfinite(ref)
    np.testing.assert_allclose(est[ok], ref[ok], rtol=1e-11)


@pytest.mark.parametrize("n", sizes(1_000, 100_000, smoke=200))
def test_mle_compiled(benchmark, n):
    benchmark.group = f"offline MLE, {n} pages x {K} observations"
    role(benchmark, "freshcore", n=n, k=K)
    changed, intervals = _log(n)
    benchmark(mle_rates, changed, intervals, upper=np.inf, return_clipped=True)


# ---------------------------------------------------------------------------
# streaming interval-aware MLE: one crawl of every page per call
# ---------------------------------------------------------------------------


def _numpy_binned_update(n1, s1, q1, totals, idx, changed, tau, tau_min, tau_max):
    """The plain-numpy way to do IntervalMLEBatch.update (np.add.at handles repeated indices)."""
    n_bins = n1.shape[1]
    b = np.clip(np.floor((np.log(tau) - np.log(tau_min)) * (n_bins / (np.log(tau_max) - np.log(tau_min)))),
                0, n_bins - 1).astype(np.intp)
    ch = changed.astype(bool)
    np.add.at(n1, (idx[ch], b[ch]), 1.0)
    np.add.at(s1, (idx[ch], b[ch]), tau[ch])
    np.add.at(q1, (idx[ch], b[ch]), tau[ch] ** 2)
    np.add.at(totals, (idx[ch], 2), 1.0)
    np.add.at(totals, (idx[ch], 3), tau[ch])
    np.add.at(totals, (idx[~ch], 0), 1.0)
    np.add.at(totals, (idx[~ch], 1), tau[~ch])


def _one_crawl(n):
    rng = np.random.default_rng(7)
    tau = rng.exponential(1 / 3, n)
    changed = (rng.random(n) < -np.expm1(-5 * tau)).astype(np.uint8)
    return np.arange(n), changed, tau


@pytest.mark.parametrize("n", sizes(1_000, 100_000, 1_000_000))
def test_binned_update_numpy(benchmark, n):
    from freshcore.mle import IntervalMLEBatch

    benchmark.group = f"IntervalMLEBatch.update, {n} pages"
    role(benchmark, "baseline", n=n)
    idx, changed, tau = _one_crawl(n)
    b = IntervalMLEBatch(n)
    ref = IntervalMLEBatch(n).update(changed, idx, intervals=tau)  # the baseline computes the same state
    _numpy_binned_update(b._n1, b._s1, b._q1, b._totals, idx, changed, tau, b.tau_min, b.tau_max)
    np.testing.assert_allclose(b._totals, ref._totals, rtol=1e-15)
    np.testing.assert_allclose(b._s1.sum(axis=1), ref._s1.sum(axis=1), rtol=1e-15)
    np.testing.assert_allclose(b._q1.sum(axis=1), ref._q1.sum(axis=1), rtol=1e-15)
    benchmark(_numpy_binned_update, b._n1, b._s1, b._q1, b._totals, idx, changed, tau, b.tau_min, b.tau_max)


@pytest.mark.parametrize("n", sizes(1_000, 100_000, 1_000_000))
def test_binned_update_compiled(benchmark, n):
    from freshcore.mle import IntervalMLEBatch

    benchmark.group = f"IntervalMLEBatch.update, {n} pages"
    role(benchmark, "freshcore", n=n)
    idx, changed, tau = _one_crawl(n)
    b = IntervalMLEBatch(n)
    benchmark(b.update, changed, idx, intervals=tau)
