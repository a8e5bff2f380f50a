"""Blind-sampling estimators (freshcore.blind, issue 18): the compiled counts beside the numpy a competent user
would write for the same estimate, in one run, one thread.

Targets (issue 18): M1-M5 over 10^7 samples ≥ 3× numpy; M6 over all pairs at n = 10^4 ≥ 20× a vectorised numpy
all-pairs baseline; fast M6 at n = 10^6 samples with bins up to 10/μ ≥ 10× a vectorised numpy version of the
same exact two-pointer algorithm.

Data: Pareto updates (α = 3, β = 1, μ = 2) from ``simulate_log``; constant sampling (λ = 1) for M1-M5 (ages for
M1/M2), exponential sampling (λ = 1) for M6 with h = 0.05.  Each baseline's result is checked against
freshcore's before timing.

Baselines (the best numpy formulation we know for the same output, no padding work):

* M1, M2 at 9 points: ``np.count_nonzero(ages <= x_m)`` per point (one SIMD compare and count each; faster
  here than ``searchsorted`` + ``bincount``, and no sort: the estimate is linear in n); M1 first selects the
  kept ages with a boolean view of the flags.
* M3, M4, M5: the gaps between detections, ``np.diff(np.flatnonzero(changed))``, histogrammed by
  ``np.bincount(np.minimum(gaps, k + 1))``; M4's counts follow from that histogram and the last run (a run of
  L samples adds one sample to each of the values 1..L), which beats the per-sample
  ``np.maximum.accumulate`` reading of eq. (40).
* M6 all pairs: diagonal by diagonal (the pairs (i, i + m) for each offset m: one subtraction, one ceil of
  d·(1/h), one comparison of prefix change counts), the bins of many diagonals concatenated into blocks of
  ~4·10^6 pairs before each ``np.bincount`` (one bincount per diagonal would clear the 2·10^5 bins 10^4 times).
* M6 fast: the same offsets, stopping at the first offset where no pair is within the largest bin, each
  offset's pairs masked to that distance (the numpy form of the two-pointer sweep).

Run: ``PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python -m pytest bench/bench_blind.py -o python_files='bench_*.py'
-p no:cacheprovider --benchmark-min-rounds=5``
"""

from __future__ import annotations

import numpy as np
import pytest

from freshcore.blind import Constant, Exponential, Pareto, m1, m2, m3, m4, m5, m6, simulate_log

from benchutil import SMOKE, role

N_SAMPLES = 10_000 if SMOKE else 10_000_000
N_PAIRS = 500 if SMOKE else 10_000
N_FAST = 10_000 if SMOKE else 1_000_000
K = 9  # points x_n = n, n = 1 .. 9 (Table I's)
H = 0.05
FAST_BINS = 100  # up to 10/μ = 5 time units
X = np.arange(1.0, K + 1.0)


@pytest.fixture(scope="module")
def constant_log():
    return simulate_log(Pareto(3.0), Constant(1.0), float(N_SAMPLES), rng=18)


@pytest.fixture(scope="module")
def random_logs():
    pairs = simulate_log(Pareto(3.0), Exponential(1.0), float(N_PAIRS), rng=18)
    fast = simulate_log(Pareto(3.0), Exponential(1.0), float(N_FAST), rng=19)
    return pairs, fast


# ---------------------------------------------------------------------------
# numpy baselines
# ---------------------------------------------------------------------------


def np_m2(ages, x):
    return np.array([np.count_nonzero(ages <= xm) for xm in x]) / len(ages)


def np_m1(ages, changed, x):
    kept = ages[:-1][changed.view(bool)]
    return np.array([np.count_nonzero(kept <= xm) for xm in x]) / len(kept)


def np_gap_histogram(changed, k):
    where = np.flatnonzero(changed)
    gaps = np.diff(where)
    return np.bincount(np.minimum(gaps, k + 1), minlength=k + 2), where


def np_m3(changed, k):
    hist, _ = np_gap_histogram(changed, k)
    return np.cumsum(hist[1:k + 1]) / hist.sum()


def np_m4(changed, k):
    hist, where = np_gap_histogram(changed, k)
    runs = hist[::-1].cumsum()[::-1][1:k + 1]  # #{gaps >= r}, r = 1..k
    runs += np.arange(1, k + 1) <= len(changed) - where[-1]  # the last run
    return np.cumsum(runs) / (len(changed) - where[0])


def np_m5(changed, k):
    hist, _ = np_gap_histogram(changed, k)
    at_least = hist[::-1].cumsum()[::-1]
    return np.cumsum(at_least[1:k + 1]) / len(changed)


def np_m6_all_pairs(times, changed, h):
    n = len(times)
    inv_h = 1.0 / h
    nbins = int(np.ceil((times[-1] - times[0]) * inv_h))
    prefix = np.concatenate(([0], np.cumsum(changed, dtype=np.int64)))
    pairs = np.zeros(nbins + 2, dtype=np.int64)
    updated = np.zeros(nbins + 2, dtype=np.int64)
    bins, flags, size = [], [], 0
    for m in range(1, n):
        bins.append(np.ceil((times[m:] - times[:-m]) * inv_h).astype(np.intp))
        flags.append(prefix[m:] > prefix[:-m])
        size += n - m
        if size >= 1 << 22 or m == n - 1:
            b, q = np.concatenate(bins), np.concatenate(flags)
            pairs += np.bincount(b, minlength=nbins + 2)
            updated += np.bincount(b[q], minlength=nbins + 2)
            bins, flags, size = [], [], 0
    pairs, updated = pairs[1:nbins + 1], updated[1:nbins + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs > 0, updated / np.maximum(pairs, 1), np.nan)


def np_m6_fast(times, changed, h, nbins):
    inv_h = 1.0 / h
    prefix = np.concatenate(([0], np.cumsum(changed, dtype=np.int64)))
    pairs = np.zeros(nbins + 1, dtype=np.int64)
    updated = np.zeros(nbins + 1, dtype=np.int64)
    for m in range(1, len(times)):
        x = (times[m:] - times[:-m]) * inv_h
        near = x <= nbins
        if not near.any():
            break
        b = np.ceil(x[near]).astype(np.intp)
        pairs += np.bincount(b, minlength=nbins + 1)
        updated += np.bincount(b[(prefix[m:] > prefix[:-m])[near]], minlength=nbins + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pairs[1:] > 0, updated[1:] / np.maximum(pairs[1:], 1), np.nan)


# ---------------------------------------------------------------------------
# M1-M5 over 10^7 samples
# ---------------------------------------------------------------------------

LINEAR = {
    "M1": (lambda log: np_m1(log.ages, log.changed, X), lambda log: m1(log.ages, log.changed, X)),
    "M2": (lambda log: np_m2(log.ages, X), lambda log: m2(log.ages, X)),
    "M3": (lambda log: np_m3(log.changed, K), lambda log: m3(log.changed, K)),
    "M4": (lambda log: np_m4(log.changed, K), lambda log: m4(log.changed, K)),
    "M5": (lambda log: np_m5(log.changed, K), lambda log: m5(log.changed, K)),
}


@pytest.mark.parametrize("name", LINEAR)
def test_linear_numpy(benchmark, constant_log, name):
    benchmark.group = f"blind {name}, {N_SAMPLES} samples, {K} points"
    role(benchmark, "baseline", n=N_SAMPLES, k=K)
    baseline, compiled = LINEAR[name]
    np.testing.assert_allclose(baseline(constant_log), compiled(constant_log), rtol=1e-15)
    benchmark(baseline, constant_log)


@pytest.mark.parametrize("name", LINEAR)
def test_linear_compiled(benchmark, constant_log, name):
    benchmark.group = f"blind {name}, {N_SAMPLES} samples, {K} points"
    role(benchmark, "freshcore", n=N_SAMPLES, k=K)
    benchmark(LINEAR[name][1], constant_log)


# ---------------------------------------------------------------------------
# M6
# ---------------------------------------------------------------------------


def test_m6_all_pairs_numpy(benchmark, random_logs):
    log = random_logs[0]
    n = len(log.times)
    benchmark.group = f"blind M6 all pairs, n = {n}, h = {H}, every distance"
    role(benchmark, "baseline", n=n, h=H)
    np.testing.assert_array_equal(np_m6_all_pairs(log.times, log.changed, H), m6(log.times, log.changed, H))
    benchmark.pedantic(np_m6_all_pairs, args=(log.times, log.changed, H), rounds=3 if not SMOKE else 1)


def test_m6_all_pairs_compiled(benchmark, random_logs):
    log = random_logs[0]
    n = len(log.times)
    benchmark.group = f"blind M6 all pairs, n = {n}, h = {H}, every distance"
    role(benchmark, "freshcore", n=n, h=H)
    benchmark(m6, log.times, log.changed, H, method="pairs")


def test_m6_fast_numpy(benchmark, random_logs):
    log = random_logs[1]
    n = len(log.times)
    benchmark.group = f"blind M6 fast, n = {n}, h = {H}, {FAST_BINS} bins (distance 10/μ)"
    role(benchmark, "baseline", n=n, h=H, bins=FAST_BINS)
    np.testing.assert_array_equal(np_m6_fast(log.times, log.changed, H, FAST_BINS),
                                  m6(log.times, log.changed, H, FAST_BINS))
    benchmark(np_m6_fast, log.times, log.changed, H, FAST_BINS)


def test_m6_fast_compiled(benchmark, random_logs):
    log = random_logs[1]
    n = len(log.times)
    benchmark.group = f"blind M6 fast, n = {n}, h = {H}, {FAST_BINS} bins (distance 10/μ)"
    role(benchmark, "freshcore", n=n, h=H, bins=FAST_BINS)
    benchmark(m6, log.times, log.changed, H, FAST_BINS)
