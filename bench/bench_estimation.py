"""Benchmarks of the online change-rate estimators (freshcore.estimation).

Two targets (issue 2):

* streaming ``update(1)`` from Python costs ≤ 1.5× an empty Python method call
  (group ``estimation-streaming``; baseline: ``def f(self, changed,
  interval=None, crawl_rate=None): return self`` on a plain class);
* a full-array SA/SAM/LLN batch update over 10^7 pages is ≥ 3× faster than the
  best plain-numpy implementation (groups ``estimation-batch-<m>-vs-numpy``)
  and within 2× of one pass of memory traffic over the same state arrays,
  ``np.copyto`` of each of them (groups ``estimation-batch-<m>-vs-copyto``).

Run briefly:
``PYTHONPATH=src python -m pytest bench/bench_estimation.py -o python_files='bench_*.py'
--benchmark-min-rounds=3 --benchmark-max-time=0.5``
"""

from __future__ import annotations

import numpy as np
import pytest

from freshcore import get_num_threads, set_num_threads
from freshcore.estimation import LLNBatch, LLNEstimator, NaiveEstimator, SABatch, SAEstimator, SAMBatch, SAMEstimator

from benchutil import role, sizes

# ---------------------------------------------------------------------------
# streaming update
# ---------------------------------------------------------------------------

CALLS = 1000  # calls per timed round, 10 per loop iteration so loop overhead stays small


class _Plain:
    def f(self, changed, interval=None, crawl_rate=None):
        return self


def _plain_calls(o):
    def run():
        for _ in range(CALLS // 10):
            o.f(1); o.f(1); o.f(1); o.f(1); o.f(1); o.f(1); o.f(1); o.f(1); o.f(1); o.f(1)  # noqa: E702

    return run


def _update_calls(o):
    def run():
        for _ in range(CALLS // 10):
            o.update(1); o.update(1); o.update(1); o.update(1); o.update(1)  # noqa: E702
            o.update(1); o.update(1); o.update(1); o.update(1); o.update(1)  # noqa: E702

    return run


@pytest.mark.benchmark(group="estimation-streaming")
def test_streaming_empty_method_baseline(benchmark):
    role(benchmark, "baseline", calls=CALLS)
    benchmark(_plain_calls(_Plain()))


@pytest.mark.benchmark(group="estimation-streaming")
@pytest.mark.parametrize("cls", [NaiveEstimator, LLNEstimator, SAEstimator, SAMEstimator], ids=lambda c: c.__name__)
def test_streaming_update(benchmark, cls):
    role(benchmark, "freshcore", calls=CALLS)
    est = cls(crawl_rate=3.0)
    benchmark(_update_calls(est))
    assert est.n_updates >= CALLS


# ---------------------------------------------------------------------------
# batched full-array update: best plain numpy, compiled, one memory pass
# ---------------------------------------------------------------------------


def _eta_k(k, e):
    """(k + 1)^(-e) per page, a scalar when every page has the same k (the common full-update case)."""
    k0 = k[0]
    if k.min() == k0 == k.max():
        return (float(k0) + 1.0) ** -e
    return np.power(k + 1.0, -e)


class NumpySA:
    def __init__(self, n, p, eta=0.75):
        self.k = np.zeros(n, dtype=np.int64)
        self.y = np.zeros(n)
        self.t = np.empty(n)
        self.p, self.eta = p, eta

    def update(self, changed):
        t, y = self.t, self.y
        e = _eta_k(self.k, self.eta)
        np.add(y, self.p, out=t)
        np.multiply(t, changed, out=t)
        np.subtract(t, y, out=t)
        np.multiply(t, e, out=t)
        np.add(y, t, out=y)
        self.k += 1

    def state(self):
        return [self.k, self.y]


def _sam_coefs(k, eta, beta, omega):
    """eta_k and zeta_k = (beta_k - omega eta_k) / beta_{k-1} (zeta_0 = 0), scalars when k is uniform."""
    k0 = k[0]
    if k.min() == k0 == k.max():
        kk = float(k0)
        e = (kk + 1.0) ** -eta
        return e, (0.0 if k0 == 0 else ((kk + 1.0) ** -beta - omega * e) / kk**-beta)
    kp = k + 1.0
    e = kp**-eta
    return e, np.where(k == 0, 0.0, (kp**-beta - omega * e) / np.maximum(k, 1) ** -beta)


class NumpySAM:
    def __init__(self, n, p, eta=1.3, beta=0.75, omega=1.0):
        self.k = np.zeros(n, dtype=np.int64)
        self.z = np.zeros(n)
        self.zp = np.zeros(n)
        self.t = np.empty(n)
        self.m = np.empty(n)
        self.p, self.eta, self.beta, self.omega = p, eta, beta, omega

    def update(self, changed):
        k, z, zp, t, m = self.k, self.z, self.zp, self.t, self.m
        e, zeta = _sam_coefs(k, self.eta, self.beta, self.omega)
        np.subtract(z, zp, out=m)
        np.multiply(m, zeta, out=m)
        np.add(z, self.p, out=t)
        np.multiply(t, changed, out=t)
        np.subtract(t, z, out=t)
        np.multiply(t, e, out=t)
        np.copyto(zp, z)
        np.add(z, t, out=z)
        np.add(z, m, out=z)
        k += 1

    def state(self):
        return [self.k, self.z, self.zp]


class NumpyLLN:
    """Best plain numpy for the benchmarked case: consistent LLN, alpha = 1, one scalar rate, all pages.

    With one crawl rate for everybody the consistent LLN is eq. (1) of
    Avrachenkov et al. (2022), x_k = p n1 / (alpha + k - n1).  After full updates every page has the same
    k, so k is one Python int (freshcore's batch keeps it as one number too, in
    its shared-k regime) and an update is four in-place passes: n1 += I, the
    denominator ``(alpha + k) - n1``, ``n1 / d`` and ``* p``.  n1 is kept as
    float64 (exact integer counts, so no int -> float conversion pass).
    (n1 / d) * p instead of p n1 / d: the same within a few ulps.
    """

    def __init__(self, n, p, alpha=1.0):
        self.k = 0
        self.n1 = np.zeros(n)
        self.rate = np.zeros(n)
        self.p, self.alpha = p, alpha

    def update(self, changed):
        n1, rate = self.n1, self.rate
        self.k += 1
        np.add(n1, changed, out=n1)
        np.subtract(self.alpha + float(self.k), n1, out=rate)
        np.divide(n1, rate, out=rate)
        np.multiply(rate, self.p, out=rate)

    def state(self):
        """The arrays an update touches (freshcore's LLNBatch in its shared-k regime: n1 and the rates)."""
        return [self.n1, self.rate]


METHODS = {
    "sa": (NumpySA, lambda n: SABatch(n, crawl_rate=3.0), lambda b: b._rates),
    "sam": (NumpySAM, lambda n: SAMBatch(n, crawl_rate=3.0), lambda b: b._rates),
    "lln": (NumpyLLN, lambda n: LLNBatch(n, crawl_rate=3.0), lambda b: b._rates),
}


def _flags(n, seed=0):
    return np.random.default_rng(seed).random(n) < 0.6


def _check_baseline_agrees(method):
    """The numpy baseline computes the same estimates (within 1e-12) as freshcore."""
    np_cls, make, rates = METHODS[method]
    n = 1000
    ref, fc = np_cls(n, 3.0), make(n)
    for s in range(5):
        c = _flags(n, s)
        ref.update(c)
        fc.update(c)
    est = {"sa": ref.state()[1], "sam": ref.state()[1], "lln": ref.state()[-1]}[method]
    np.testing.assert_allclose(est, rates(fc), rtol=1e-12, atol=0)


@pytest.mark.parametrize("n", sizes(10**5, 10**7))
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("versus", ["numpy", "copyto"])
def test_batch_update(benchmark, method, n, versus):
    benchmark.group = f"estimation-batch-{method}-vs-{versus}-n{n}"
    np_cls, _, _ = METHODS[method]
    changed = _flags(n)
    if versus == "numpy":
        _check_baseline_agrees(method)
        base = np_cls(n, 3.0)
        base.update(changed)
        role(benchmark, "baseline", n=n, what="plain numpy")
        benchmark(base.update, changed)
    else:
        src = np_cls(n, 3.0).state()
        dst = [np.empty_like(a) for a in src]

        def copy_state():
            for d, s in zip(dst, src):
                np.copyto(d, s)

        role(benchmark, "baseline", n=n, what="np.copyto of the state arrays")
        benchmark(copy_state)


@pytest.mark.parametrize("n", sizes(10**5, 10**7))
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("versus", ["numpy", "copyto"])
@pytest.mark.parametrize("threads", [1, "default"])
def test_batch_update_freshcore(benchmark, method, n, versus, threads):
    """freshcore on one thread, and with its default thread count (large full updates are split)."""
    benchmark.group = f"estimation-batch-{method}-vs-{versus}-n{n}"
    _, make, _ = METHODS[method]
    changed = _flags(n)
    batch = make(n)
    batch.update(changed)
    n_threads = 1 if threads == 1 else get_num_threads()
    role(benchmark, "freshcore", n=n, threads=n_threads)
    old = set_num_threads(n_threads)
    try:
        benchmark(batch.update, changed)
    finally:
        set_num_threads(old)
