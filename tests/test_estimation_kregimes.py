"""Where the batched estimators keep k, and the versions of their full-update loops.

Every batch starts with one shared k (no k array) while each update covers all
pages; the first update of some pages gives each page its own k, kept as a base
(bumped by full updates) plus a per-page offset, with a per-block note of the
blocks whose pages share it; ``from_dict`` of an all-equal k returns to the
shared k.  Whatever the regime, the numbers must be those of a plain numpy
reference (below: the same IEEE operations, step sizes from libm as the
compiled code takes them, so equal bit for bit) and of the streaming
estimators, and every version of the compiled loops (baseline, AVX2, AVX-512:
whichever this machine runs) must give the same bits.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore import _estimation as _est
from freshcore import set_num_threads
from freshcore.estimation import (
    LLNBatch,
    LLNEstimator,
    NaiveBatch,
    NaiveEstimator,
    SABatch,
    SAEstimator,
    SAMBatch,
    SAMEstimator,
)

LEVELS = list(range(_est._kernel_levels()[1] + 1))


@pytest.fixture(params=LEVELS, ids=lambda v: f"level{v}")
def level(request):
    """Run the test with each version of the full-update loops this machine has."""
    old = _est._set_kernel_level(request.param)
    assert _est._kernel_levels()[0] == request.param
    yield request.param
    _est._set_kernel_level(old)


def _power_step(k: int, e: float) -> float:
    return math.exp(-e * math.log(k + 1))  # libm, as _power_step in freshcore._estimation


class NumpySAReference:
    """SA over n pages, k per page: y <- y + eta_k (c (y + p) - y), eta_k = (k + 1)^(-eta)."""

    def __init__(self, n, eta, initial):
        self.k = np.zeros(n, dtype=np.int64)
        self.y = np.full(n, initial)
        self.eta = eta

    def step_sizes(self, k):
        uniq, inv = np.unique(k, return_inverse=True)
        return np.array([_power_step(int(u), self.eta) for u in uniq])[inv.reshape(-1)]

    def update(self, c, pages, p):
        """A full update (pages None) at once; else one observation after another."""
        c = np.asarray(c, dtype=np.float64)
        p = np.broadcast_to(np.asarray(p, dtype=np.float64), c.shape)
        if pages is None:
            e = self.step_sizes(self.k)
            self.y = self.y + e * (c * (self.y + p) - self.y)
            self.k += 1
            return
        for j, i in enumerate(pages):
            e = self.step_sizes(self.k[i : i + 1])
            y = self.y[i : i + 1]
            self.y[i : i + 1] = y + e * (c[j : j + 1] * (y + p[j : j + 1]) - y)
            self.k[i] += 1

    def rates(self):
        return self.y


class NumpySAMReference(NumpySAReference):
    """SAM: z <- z + eta_k (c (z + p) - z) + zeta_k (z - z_prev), zeta_k = (beta_k - omega eta_k) / beta_{k-1}."""

    def __init__(self, n, eta, beta, omega, initial):
        super().__init__(n, eta, initial)
        self.zp = self.y.copy()
        self.beta, self.omega = beta, omega

    def coefs(self, k):
        e, z = [], []
        for kk in k.tolist():  # as _sam_coefs: one log, two exps; beta_{k-1} from its own log
            L = math.log(kk + 1)
            ek, bk = math.exp(-self.eta * L), math.exp(-self.beta * L)
            e.append(ek)
            z.append(0.0 if kk == 0 else (bk - self.omega * ek) / _power_step(kk - 1, self.beta))
        return np.array(e), np.array(z)

    def update(self, c, pages, p):
        c = np.asarray(c, dtype=np.float64)
        p = np.broadcast_to(np.asarray(p, dtype=np.float64), c.shape)
        if pages is None:
            e, zeta = self.coefs(self.k)
            z, zp = self.y, self.zp
            self.y = z + e * (c * (z + p) - z) + zeta * (z - zp)
            self.zp = z
            self.k += 1
            return
        for j, i in enumerate(pages):
            e, zeta = self.coefs(self.k[i : i + 1])
            z, zp = self.y[i : i + 1].copy(), self.zp[i : i + 1]
            self.y[i : i + 1] = z + e * (c[j : j + 1] * (z + p[j : j + 1]) - z) + zeta * (z - zp)
            self.zp[i : i + 1] = z
            self.k[i] += 1


def _bits(a) -> list[str]:
    return [float(x).hex() + ("-" if math.copysign(1.0, x) < 0 else "+") for x in np.asarray(a, dtype=np.float64)]


def _shared(batch) -> bool:
    return batch._k_shared is not None and batch._k_arr is None


def _round_trip(batch, how):
    return {"pickle": lambda: pickle.loads(pickle.dumps(batch)), "deepcopy": lambda: copy.deepcopy(batch),
            "dict": lambda: type(batch).from_dict(batch.to_dict()), "none": lambda: batch}[how]()


def _make(method, n, p_default, params):
    if method == "sa":
        return SABatch(n, crawl_rate=p_default, **params), NumpySAReference(n, params["eta"], params["initial"])
    return (SAMBatch(n, crawl_rate=p_default, **params),
            NumpySAMReference(n, params["eta"], params["beta"], params["omega"], params["initial"]))


PARAMS = {
    "sa": st.fixed_dictionaries({"eta": st.floats(0.3, 1.0), "initial": st.floats(0.0, 5.0)}),
    "sam": st.fixed_dictionaries({"eta": st.floats(0.6, 1.6), "beta": st.floats(0.3, 1.0),
                                  "omega": st.floats(0.2, 2.0), "initial": st.floats(0.0, 5.0)}),
}
RATES = st.sampled_from([0.5, 1.0, 2.5, 7.25])


@pytest.mark.parametrize("method", ["sa", "sam"])
@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_shared_and_per_page_k_equal_the_numpy_reference(method, data):
    """Random full and partial updates, round trips and loop versions: the bits of the numpy reference at every
    step, one shared k exactly while no update of some pages happened (or from_dict found every k equal)."""
    n = data.draw(st.sampled_from([1, 3, 7, 600, 1100]))  # 600 and 1100: more than one block of pages
    params = data.draw(PARAMS[method])
    p_default = data.draw(st.one_of(RATES, st.just("per-page")))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    default = rng.choice([0.5, 1.0, 2.5], n) if p_default == "per-page" else p_default
    batch, ref = _make(method, n, default, params)
    shared = True
    for _ in range(data.draw(st.integers(1, 8))):
        kind = data.draw(st.sampled_from(["full", "full", "full-rates", "pages", "few-pages"]))
        level = data.draw(st.sampled_from(LEVELS))
        old = _est._set_kernel_level(level)
        try:
            if kind.startswith("full"):
                c = rng.random(n) < 0.5
                p = rng.choice([0.5, 1.0, 2.5], n) if kind == "full-rates" else None
                batch.update(c, crawl_rate=p)
                ref.update(c, None, default if p is None else p)
            else:
                m = data.draw(st.integers(0, min(2 * n, 40) if kind == "pages" else 3))
                pages = rng.integers(0, n, m)
                c = rng.integers(0, 2, m)
                batch.update(c, pages=pages)
                ref.update(c, pages, default if np.ndim(default) == 0 else np.asarray(default)[pages])
                shared = shared and m == 0
        finally:
            _est._set_kernel_level(old)
        assert _shared(batch) == shared
        assert _bits(batch.rates) == _bits(ref.rates())
        if method == "sam":
            assert _bits(batch.previous) == _bits(ref.zp)
        np.testing.assert_array_equal(batch.n_updates, ref.k)
        how = data.draw(st.sampled_from(["none", "none", "pickle", "deepcopy", "dict"]))
        batch = _round_trip(batch, how)
        if how == "dict":
            shared = bool((ref.k == ref.k[0]).all())
        assert _shared(batch) == shared
        d = batch.to_dict()["state"]
        assert d["n_updates"].dtype == np.int64
        np.testing.assert_array_equal(d["n_updates"], ref.k)
        assert _bits(d["rates"]) == _bits(ref.rates())


PAIRS = {"naive": (NaiveBatch, NaiveEstimator), "lln": (LLNBatch, LLNEstimator),
         "sa": (SABatch, SAEstimator), "sam": (SAMBatch, SAMEstimator)}


@pytest.mark.parametrize("method", sorted(PAIRS))
def test_per_page_k_across_blocks_equals_streaming(method, level):
    """Blocks of pages whose k differ, blocks that share it, and blocks noted as sharing it until an update of
    some of their pages: the streaming estimators' bits at every loop version."""
    batch_cls, stream_cls = PAIRS[method]
    block = _est.BLOCK
    n = 3 * block + 37
    rng = np.random.default_rng(3)
    params = {"alpha": "log"} if method == "lln" else {}
    batch = batch_cls(n, crawl_rate=1.9, **params)
    streams = [stream_cls(crawl_rate=1.9, **params) for _ in range(n)]

    def full():
        flags = rng.random(n) < 0.5
        batch.update(flags)
        for f, s in zip(flags, streams):
            s.update(bool(f))

    def some(pages):
        flags = rng.integers(0, 2, len(pages))
        batch.update(flags, pages=pages)
        for f, i in zip(flags, pages):
            streams[i].update(int(f))

    full()
    some([5, block + 3, block + 3])  # two blocks get differing k
    assert batch._k_shared is None
    for step in range(6):
        full()
        if step == 1:
            others = np.setdiff1d(np.arange(block, 2 * block), [block + 3])
            some(np.concatenate([others, others]))  # block 1: the others catch up with page block + 3
        if step == 3:
            some([2 * block + 1])  # block 2 was noted as sharing k: no more
        blk = batch._k_blk
        assert blk[0] == -1 and blk[3] >= 0
        assert batch.rates.tolist() == [s.rate for s in streams]
        assert batch.n_updates.tolist() == [s.n_updates for s in streams]
    assert batch._k_blk[1] >= 0


@pytest.mark.parametrize("method", sorted(PAIRS))
@pytest.mark.parametrize("regime", ["shared", "per-page"])
def test_threads_split_full_updates_anywhere_with_the_same_bits(method, regime):
    """Large full updates run in chunks on threads whose bounds are not block bounds: one thread and two give
    the same bits, in both regimes."""
    batch_cls, _ = PAIRS[method]
    n = 2**19 + 1234
    rng = np.random.default_rng(9)
    batches = [batch_cls(n, crawl_rate=2.2) for _ in range(2)]
    if regime == "per-page":
        pages = rng.integers(0, n, 5000)
        for b in batches:
            b.update(np.ones(5000, dtype=bool), pages=pages)
    for _ in range(3):
        flags = rng.random(n) < 0.5
        for b, threads in zip(batches, (1, 2)):
            old = set_num_threads(threads)
            try:
                b.update(flags)
            finally:
                set_num_threads(old)
        a, b = batches
        assert (a._k_shared is None) == (regime == "per-page")
        assert np.array_equal(a.rates.view(np.int64), b.rates.view(np.int64))
        assert np.array_equal(a.n_updates, b.n_updates)
    if regime == "per-page":  # every whole block the 5000 pages missed is noted as sharing k
        assert (batches[1]._k_blk >= 0).sum() > 0


@pytest.mark.parametrize("method", sorted(PAIRS))
def test_a_block_split_between_threads_is_not_noted(method):
    """The threads' chunks meet inside a block whose part on one side shares k and the other part has another
    k: neither thread may note the block as sharing k (the next update would use the wrong k)."""
    batch_cls, _ = PAIRS[method]
    n, block = 2**19 + 1234, _est.BLOCK
    cut = n // 2  # where the two threads' chunks meet
    b = cut // block
    assert cut % block != 0
    k = np.full(n, 3, dtype=np.int64)
    k[cut : (b + 1) * block] = 4
    d = batch_cls(n, crawl_rate=2.2).to_dict()
    d["state"]["n_updates"] = k
    if method in ("naive", "lln"):
        d["state"]["n_changes"] = np.zeros(n, dtype=np.int64)
        d["state"]["segment_changes"] = np.zeros(n, dtype=np.int64)
        d["state"]["segment_rate"] = np.full(n, 2.2)
    one, two = batch_cls.from_dict(d), batch_cls.from_dict(d)
    rng = np.random.default_rng(4)
    for _ in range(3):
        flags = rng.random(n) < 0.5
        for batch, threads in ((one, 1), (two, 2)):
            old = set_num_threads(threads)
            try:
                batch.update(flags)
            finally:
                set_num_threads(old)
        assert two._k_blk[b] == -1
        assert np.array_equal(one.rates.view(np.int64), two.rates.view(np.int64))
    np.testing.assert_array_equal(two.n_updates, k + 3)


def test_kernel_levels():
    used, widest = _est._kernel_levels()
    assert 0 <= used <= widest <= 2
    assert used == widest  # the widest at import
    old = _est._set_kernel_level(99)
    try:
        assert _est._kernel_levels()[0] == widest
        _est._set_kernel_level(-3)
        assert _est._kernel_levels()[0] == 0
    finally:
        _est._set_kernel_level(old)
    assert _est._kernel_levels() == (used, widest)


@pytest.mark.parametrize("method", ["naive", "lln"])
def test_32_bit_counts_while_k_is_shared_and_below_2_32(method, level):
    """Naive/LLN keep Î_k in 32 bits while k is shared and below 2^32: across 2^32 the counts widen, the numbers
    stay the streaming estimators' (restored at k close to 2^32)."""
    batch_cls, stream_cls = PAIRS[method]
    n, p = 700, 1.7
    k0 = 2**32 - 3
    rng = np.random.default_rng(8)
    n1 = k0 - rng.integers(0, 4, n)
    params = {"alpha": "log"} if method == "lln" else {}
    d = batch_cls(n, crawl_rate=p, **params).to_dict()
    d["state"].update(n_updates=np.full(n, k0), n_changes=n1, segment_changes=n1.copy(), segment_rate=np.full(n, p),
                      past_sum=np.zeros(n))
    batch = batch_cls.from_dict(d)
    assert batch._k_shared == k0 and batch._common == p
    streams = []
    for i in range(n):
        s = stream_cls(crawl_rate=p, **params)
        s._set_state({"n_updates": k0, "elapsed": 0.0, "rate": 0.0, "n_changes": int(n1[i]),
                      "segment_changes": int(n1[i]), "segment_rate": p, "past_sum": 0.0})
        streams.append(s)
    for step in range(4):
        flags = rng.random(n) < 0.7
        batch.update(flags)
        for f, s in zip(flags, streams):
            s.update(bool(f))
        assert (batch._n1_32 is not None) == (step < 2)  # k = 2^32 - 2, 2^32 - 1: 32 bits; then 64
        assert batch.n_changes.dtype == np.int64
        assert batch.n_changes.tolist() == [s.n_changes for s in streams]
        assert _bits(batch.rates) == _bits([s.rate for s in streams])


@pytest.mark.parametrize("method", ["naive", "lln"])
def test_32_bit_counts_are_read_without_widening(method):
    batch_cls, stream_cls = PAIRS[method]
    batch = batch_cls(5, crawl_rate=2.0).update([1, 0, 1, 1, 0]).update([1, 1, 0, 1, 0])
    assert batch._n1_32 is not None and batch._n1_32.dtype == np.uint32
    assert batch.n_changes.tolist() == [2, 1, 1, 2, 0] and batch.n_changes.dtype == np.int64
    d = batch.to_dict()["state"]
    assert d["n_changes"].dtype == d["segment_changes"].dtype == np.int64
    for twin in (pickle.loads(pickle.dumps(batch)), copy.deepcopy(batch)):
        assert twin._n1_32 is not None
        np.testing.assert_array_equal(twin.n_changes, batch.n_changes)
    assert batch._n1_32 is not None and batch._n1_wide is None
    batch.update([1], pages=[4])  # k per page: the counts widen for good
    assert batch._n1_32 is None and batch._n1_wide is not None
    assert batch.n_changes.tolist() == [2, 1, 1, 2, 1]
    batch.update(np.ones(5, dtype=bool))
    assert batch._n1_32 is None
    restored = batch_cls.from_dict(batch.to_dict())  # k differs between pages: stays per page, 64 bits
    assert restored._n1_32 is None and restored._k_shared is None
    stream = stream_cls(crawl_rate=2.0)
    for f in (0, 0, 1, 1):
        stream.update(f)
    assert batch.rates[4] == stream.rate
