"""Benchmarks of the online change-rate estimators (freshcore.estimation).

Two targets (issues 2 and 16):

* streaming ``update(1)`` from Python costs ≤ 1.5× an empty Python method call
  (group ``estimation-streaming``; baseline: ``def f(self, changed,
  interval=None, crawl_rate=None): return self`` on a plain class);
* a full-array SA/SAM/LLN batch update (every page once, one crawl rate) over
  10^5, 10^6 and 10^7 pages is ≥ 3× faster than the numpy a competent user
  would write for the same state, on one thread (``FRESHCORE_NUM_THREADS=1``;
  the ``default`` rows use freshcore's default thread count).

Each batch benchmark compares like with like, in three kinds of groups:

``estimation-batch-<m>-vs-numpy-n<n>`` -- per-page k.
    The baseline holds what a user who also updates some pages at a time must
    hold: an int64 update count per page beside the estimates, and adds 1 to
    it in every full update.  Its step sizes are one scalar taken from k[0]:
    in this benchmark every page has the same k and the caller knows it, so
    there is no per-call check (no ``k.min()``/``k.max()``).  freshcore's batch
    is in its per-page k regime (entered by one update naming every page): it
    keeps k as a base plus per-page offsets that a full update leaves alone,
    noted per block of pages whose offsets are equal (so it reads them only
    where they differ).
``estimation-batch-<m>-vs-numpy-shared-k-n<n>`` -- one shared k.
    The lean baseline: all pages are crawled the same number of times, so k
    is one Python int and no count array exists; freshcore's batch is in its
    shared-k regime (only full updates so far).
``estimation-batch-<m>-vs-copyto-n<n>``
    One pass of memory traffic over the state arrays the shared-k update
    touches (``np.copyto`` of each), beside freshcore's shared-k update: how
    close the update runs to memory speed (target: within 2×).

Both numpy baselines are the direct in-place formulas (no temporaries beyond
one scratch array, no copies: SAM writes z_{k+1} into the buffer of z_{k-1}
and swaps the two, LLN keeps Î_k as float64 so no int -> float pass), checked
against freshcore within 1e-12 before timing; the variants tried and measured
slower on the 2-core machine of issue 16 (``np.where``/masked copies, an
expanded SA formula with two products of the flags) are not used.

Run briefly:
``PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python -m pytest bench/bench_estimation.py -o python_files='bench_*.py'
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


class NumpySA:
    """y <- y + eta_k [I (y + p) - y], eq. (2), in place; an int64 k per page with ``per_page_k``."""

    def __init__(self, n, p, eta=0.75, per_page_k=True):
        self.k = 0
        self.kpage = np.zeros(n, dtype=np.int64) if per_page_k else None
        self.y = np.zeros(n)
        self.t = np.empty(n)
        self.p, self.eta = p, eta

    def _k(self):
        # every page has the same k in this benchmark: the step size is one scalar (k[0] when k is per page)
        return self.k if self.kpage is None else int(self.kpage[0])

    def update(self, changed):
        t, y = self.t, self.y
        e = (self._k() + 1.0) ** -self.eta
        np.add(y, self.p, out=t)
        np.multiply(t, changed, out=t)
        np.subtract(t, y, out=t)
        np.multiply(t, e, out=t)
        np.add(y, t, out=y)
        if self.kpage is None:
            self.k += 1
        else:
            self.kpage += 1

    def estimates(self):
        return self.y


class NumpySAM(NumpySA):
    """z <- z + eta_k [I (z + p) - z] + zeta_k (z - z_prev), eqs. (3) and (10): the new z goes into the buffer of
    z_prev and the two are swapped (no copy)."""

    def __init__(self, n, p, eta=1.3, beta=0.75, omega=1.0, per_page_k=True):
        super().__init__(n, p, eta, per_page_k)
        self.zp = np.zeros(n)
        self.beta, self.omega = beta, omega

    def update(self, changed):
        z, zp, t = self.y, self.zp, self.t
        k = self._k()
        e = (k + 1.0) ** -self.eta
        zeta = 0.0 if k == 0 else ((k + 1.0) ** -self.beta - self.omega * e) / float(k) ** -self.beta
        np.subtract(z, zp, out=zp)  # z_prev is not needed after this
        np.multiply(zp, zeta, out=zp)
        np.add(z, self.p, out=t)
        np.multiply(t, changed, out=t)
        np.subtract(t, z, out=t)
        np.multiply(t, e, out=t)
        np.add(z, t, out=t)
        np.add(t, zp, out=zp)
        self.y, self.zp = zp, z
        if self.kpage is None:
            self.k += 1
        else:
            self.kpage += 1


class NumpyLLN(NumpySA):
    """Consistent LLN, alpha = 1, one crawl rate: x_k = p n1 / (alpha + k - n1), eq. (1) of Avrachenkov et al.
    (2022), in four in-place passes: n1 += I, the denominator ``(alpha + k) - n1``, ``n1 / d`` and ``* p``.

    n1 is kept as float64 (exact integer counts, so no int -> float pass).
    (n1 / d) * p instead of p n1 / d: the same within a few ulps.
    """

    def __init__(self, n, p, alpha=1.0, per_page_k=True):
        super().__init__(n, p, per_page_k=per_page_k)
        self.n1 = np.zeros(n)
        self.alpha = alpha

    def update(self, changed):
        n1, rate = self.n1, self.y
        k = self._k() + 1
        np.add(n1, changed, out=n1)
        np.subtract(self.alpha + float(k), n1, out=rate)
        np.divide(n1, rate, out=rate)
        np.multiply(rate, self.p, out=rate)
        if self.kpage is None:
            self.k += 1
        else:
            self.kpage += 1


METHODS = {
    "sa": (NumpySA, lambda n: SABatch(n, crawl_rate=3.0)),
    "sam": (NumpySAM, lambda n: SAMBatch(n, crawl_rate=3.0)),
    "lln": (NumpyLLN, lambda n: LLNBatch(n, crawl_rate=3.0)),
}


def _shared_k_state(batch):
    """The arrays freshcore's shared-k update touches (beside the flags)."""
    if isinstance(batch, SAMBatch):
        return [batch._rates, batch._previous]
    if isinstance(batch, LLNBatch):
        return [batch._n1_32, batch._rates]  # 32-bit counts while k is shared (and below 2^32)
    return [batch._rates]


def _flags(n, seed=0):
    return np.random.default_rng(seed).random(n) < 0.6


def _batch(method, n, regime):
    """freshcore's batch of ``method`` over n pages in the given k regime."""
    batch = METHODS[method][1](n)
    if regime == "per-page":
        batch.update(_flags(n, 1), pages=np.arange(n))
        assert batch._k_shared is None
    return batch


def _check_baseline_agrees(method, regime):
    """The numpy baseline computes the same estimates (within 1e-12) as freshcore."""
    np_cls, _ = METHODS[method]
    n = 1000
    ref, fc = np_cls(n, 3.0, per_page_k=regime == "per-page"), _batch(method, n, regime)
    if regime == "per-page":
        ref.update(_flags(n, 1))
    for s in range(5):
        c = _flags(n, s)
        ref.update(c)
        fc.update(c)
    assert (fc._k_shared is None) == (regime == "per-page")
    np.testing.assert_allclose(ref.estimates(), fc.rates, rtol=1e-12, atol=0)


GROUPS = {"numpy": "per-page", "numpy-shared-k": "shared", "copyto": "shared"}


@pytest.mark.parametrize("n", sizes(10**5, 10**6, 10**7))
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("versus", sorted(GROUPS))
def test_batch_update(benchmark, method, n, versus):
    benchmark.group = f"estimation-batch-{method}-vs-{versus}-n{n}"
    np_cls, _ = METHODS[method]
    regime = GROUPS[versus]
    changed = _flags(n)
    if versus == "copyto":
        src = _shared_k_state(_batch(method, n, regime))
        dst = [np.empty_like(a) for a in src]

        def copy_state():
            for d, s in zip(dst, src):
                np.copyto(d, s)

        role(benchmark, "baseline", n=n, what="np.copyto of the shared-k state arrays")
        benchmark(copy_state)
        return
    _check_baseline_agrees(method, regime)
    base = np_cls(n, 3.0, per_page_k=regime == "per-page")
    base.update(changed)
    role(benchmark, "baseline", n=n, what=f"numpy, {regime} k")
    benchmark(base.update, changed)


@pytest.mark.parametrize("n", sizes(10**5, 10**6, 10**7))
@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("versus", sorted(GROUPS))
@pytest.mark.parametrize("threads", [1, "default"])
def test_batch_update_freshcore(benchmark, method, n, versus, threads):
    """freshcore on one thread, and with its default thread count (large full updates are split)."""
    benchmark.group = f"estimation-batch-{method}-vs-{versus}-n{n}"
    regime = GROUPS[versus]
    changed = _flags(n)
    batch = _batch(method, n, regime)
    batch.update(changed)
    n_threads = 1 if threads == 1 else get_num_threads()
    role(benchmark, "freshcore", n=n, threads=n_threads, regime=regime)
    old = set_num_threads(n_threads)
    try:
        benchmark(batch.update, changed)
    finally:
        set_num_threads(old)
    assert (batch._k_shared is None) == (regime == "per-page")
