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


def _numpy_interval_update(bins, totals, anchor, grid, idx, changed, tau):
    """The plain-numpy way to do IntervalMLEBatch.update when no page repeats and no window moves: the
    same bin index (log grid anchored at each page's first change) and the same one-pass moment update."""
    w = bins.shape[1]
    ch = changed.astype(bool)
    i0, i1, t = idx[~ch], idx[ch], tau[ch]
    totals[i0, 0] += 1.0
    totals[i0, 1] += tau[~ch]
    lt = np.log2(t)
    new = totals[i1, 2] == 0.0
    anchor[i1[new]] = lt[new]
    grid[i1[new]] = (0, -(w // 2))
    totals[i1, 2] += 1.0
    totals[i1, 3] += t
    jf = np.floor(16.0 * (lt - anchor[i1]) + 0.5).astype(np.int64)
    k = (jf >> grid[i1, 0]) - grid[i1, 1]
    if np.any((k < 0) | (k >= w)):
        raise NotImplementedError("the numpy baseline covers updates that stay in each page's window")
    b = bins[i1, k]
    n = b[:, 0]
    n_new = n + 1.0
    delta = t - b[:, 1]
    dn = delta / n_new
    t1 = delta * dn * n
    b[:, 1] += dn
    b[:, 3] += t1 * dn * (n_new - 2.0) - 3.0 * dn * b[:, 2]
    b[:, 2] += t1
    b[:, 0] = n_new
    bins[i1, k] = b


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
    ref = IntervalMLEBatch(n)
    for _ in range(2):  # the baseline computes the same state (a first change, then a second in its bin)
        ref.update(changed, idx, intervals=tau)
        _numpy_interval_update(b._bins, b._totals, b._anchor, b._grid, idx, changed, tau)
    for name in ("_bins", "_totals", "_anchor", "_grid"):
        np.testing.assert_allclose(getattr(b, name), getattr(ref, name), rtol=1e-15)
    benchmark(_numpy_interval_update, b._bins, b._totals, b._anchor, b._grid, idx, changed, tau)


@pytest.mark.parametrize("n", sizes(1_000, 100_000, 1_000_000))
def test_binned_update_compiled(benchmark, n):
    from freshcore.mle import IntervalMLEBatch

    benchmark.group = f"IntervalMLEBatch.update, {n} pages"
    role(benchmark, "freshcore", n=n)
    idx, changed, tau = _one_crawl(n)
    b = IntervalMLEBatch(n)
    benchmark(b.update, changed, idx, intervals=tau)
