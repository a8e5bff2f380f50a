"""NaiveBatch/LLNBatch: the common-rate regime and the switch to the segmented state.

While every update uses one scalar crawl rate the batches keep only k, n1 and
the rates; the first other rate stores the segment arrays.  Both regimes must
equal a loop of streaming estimators bit for bit, and ``to_dict`` must hold
exactly the streaming estimators' segment state, whatever the regime.
"""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore.estimation import LLNBatch, LLNEstimator, NaiveBatch, NaiveEstimator

PAIRS = {"naive": (NaiveBatch, NaiveEstimator), "lln": (LLNBatch, LLNEstimator)}


def _alpha_k(k):
    return 0.5 + 1.0 / k


PARAMS = {
    "naive": st.just({}),
    "lln": st.fixed_dictionaries(
        {
            "alpha": st.sampled_from(["one", "log", "sqrt", 0.3, _alpha_k, tuple(np.linspace(0.2, 3.0, 200))]),
            "consistent": st.sampled_from([None, True, False]),
        }
    ),
}

RATES = st.sampled_from([0.5, 1.0, 1.5, 3.0, 7.25])  # few values, so rates repeat and segments reopen


def _bits(x) -> str:
    return float(x).hex() + ("-" if math.copysign(1.0, x) < 0 else "+")


def _common(batch) -> bool:
    return batch._past_sum is None


def _assert_same(batch, streams):
    """Rates, counts and the exported segment state equal the streaming estimators' bit for bit."""
    assert [_bits(r) for r in batch.rates] == [_bits(s.rate) for s in streams]
    d = batch.to_dict()["state"]
    for i, s in enumerate(streams):
        sd = s.to_dict()["state"]
        assert int(d["n_updates"][i]) == sd["n_updates"]
        assert int(d["n_changes"][i]) == sd["n_changes"]
        assert int(d["segment_changes"][i]) == sd["segment_changes"]
        assert _bits(d["segment_rate"][i]) == _bits(sd["segment_rate"])
        assert _bits(d["past_sum"][i]) == _bits(sd["past_sum"])
    assert d["n_changes"].dtype == d["segment_changes"].dtype == np.int64
    assert d["segment_rate"].dtype == d["past_sum"].dtype == np.float64


def _round_trip(batch, how):
    cls = type(batch)
    return {"pickle": lambda: pickle.loads(pickle.dumps(batch)), "deepcopy": lambda: copy.deepcopy(batch),
            "dict": lambda: cls.from_dict(batch.to_dict()), "none": lambda: batch}[how]()


@pytest.mark.parametrize("method", sorted(PAIRS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_regime_switch_equals_streaming_at_every_step(method, data):
    batch_cls, stream_cls = PAIRS[method]
    params = data.draw(PARAMS[method])
    n = data.draw(st.integers(1, 5))
    default = data.draw(st.one_of(st.none(), RATES))
    batch = batch_cls(n, crawl_rate=default, **params)
    streams = [stream_cls(crawl_rate=default, **params) for _ in range(n)]
    common = None  # the one rate used so far, as the batch sees it
    for _ in range(data.draw(st.integers(1, 10))):
        # common-rate updates dominate; other rates, per-page and per-observation rates interleave
        kind = data.draw(st.sampled_from(["common", "common", "common", "scalar", "array"]))
        full = data.draw(st.booleans())
        pages = list(range(n)) if full else data.draw(st.lists(st.integers(0, n - 1), max_size=2 * n))
        m = len(pages)
        flags = data.draw(st.lists(st.booleans(), min_size=m, max_size=m))
        if kind == "common":  # the rate of the first update (the constructor's is only a default)
            p = common if common is not None else (default if default is not None else data.draw(RATES))
            rates = None if p == default and data.draw(st.booleans()) else p
            per_obs = [p] * m
        elif kind == "array":
            rates = data.draw(st.lists(RATES, min_size=m, max_size=m))
            per_obs = rates
        else:
            rates = data.draw(RATES)
            per_obs = [rates] * m
        was_common = _common(batch)
        batch.update(flags, pages=None if full else pages, crawl_rate=rates)
        for f, i, p in zip(flags, pages, per_obs):
            streams[i].update(f, crawl_rate=p)
        if m:  # one rate for the whole update (a scalar, or an array of length 1) keeps the fast regime
            one_rate = np.ndim(rates) == 0 or m == 1
            if was_common and one_rate and common is None:
                common = per_obs[0]
            assert _common(batch) == (was_common and one_rate and per_obs[0] == common)
        _assert_same(batch, streams)
        how = data.draw(st.sampled_from(["none", "none", "pickle", "deepcopy", "dict"]))
        twin = _round_trip(batch, how)
        assert _common(twin) == _common(batch) or how == "dict"
        for key, a in twin.to_dict()["state"].items():
            np.testing.assert_array_equal(a, batch.to_dict()["state"][key])
        if how == "dict" and _common(twin) and not _common(batch):
            # an exported segmented state that equals a common-rate one (e.g. only zero-change
            # segments were closed) restores to the fast regime at the rate of its open segments
            common = twin._common
        batch = twin
        _assert_same(batch, streams)


@pytest.mark.parametrize("method", sorted(PAIRS))
def test_switch_materialises_the_implicit_segment_state(method):
    batch_cls, stream_cls = PAIRS[method]
    batch = batch_cls(4, crawl_rate=2.0)
    streams = [stream_cls(crawl_rate=2.0) for _ in range(4)]
    steps = [([1, 0, 1], [0, 1, 0], None), ([1, 1, 0, 1], None, None), ([1, 1], [3, 1], 2.0),
             ([0, 1, 1, 1], None, 5.0), ([1, 1, 1, 1], None, None)]
    regimes = []
    for flags, pages, rate in steps:
        batch.update(flags, pages=pages, crawl_rate=rate)
        for f, i in zip(flags, range(4) if pages is None else pages):
            streams[i].update(f, crawl_rate=rate)
        regimes.append(_common(batch))
        _assert_same(batch, streams)
    # page 2 is untouched until the switch: its segment rate is still 0.0 there, as in the stream
    assert regimes == [True, True, True, False, False]


@pytest.mark.parametrize("method", sorted(PAIRS))
def test_from_dict_chooses_the_regime_from_the_state(method):
    batch_cls, _ = PAIRS[method]
    common = batch_cls(3, crawl_rate=2.0).update([1, 0, 1], pages=[0, 1, 0])
    general = batch_cls(3, crawl_rate=2.0).update([1, 0, 1]).update([1, 1, 0], crawl_rate=3.0)
    fresh = batch_cls(3, crawl_rate=2.0)
    assert _common(batch_cls.from_dict(common.to_dict()))
    assert _common(batch_cls.from_dict(fresh.to_dict()))
    assert not _common(batch_cls.from_dict(general.to_dict()))
    # a segmented state that equals the implicit one goes back to the common regime
    d = general.to_dict()
    d["state"]["segment_changes"] = d["state"]["n_changes"].copy()
    d["state"]["past_sum"] = np.zeros(3)
    restored = batch_cls.from_dict(d)
    assert _common(restored) and restored._common == 3.0
    # -0.0, a second rate or a rate on an untouched page keep the segmented state
    for name, value in (("past_sum", [0.0, -0.0, 0.0]), ("segment_rate", [3.0, 2.0, 3.0])):
        bad = copy.deepcopy(d)
        bad["state"][name] = np.array(value)
        assert not _common(batch_cls.from_dict(bad))
    d = fresh.update([1], pages=[0]).to_dict()
    d["state"]["segment_rate"] = np.array([2.0, 2.0, 0.0])
    assert not _common(batch_cls.from_dict(d))


@pytest.mark.parametrize(
    "method, params",
    [("naive", {}), ("lln", {}), ("lln", {"alpha": "log"}), ("lln", {"alpha": "sqrt"}),
     ("lln", {"alpha": 0.3, "consistent": False}), ("lln", {"alpha": _alpha_k})],
)
def test_common_full_updates_across_blocks(method, params):
    # more pages than one block of the compiled full-update loop, with blocks
    # where k is uniform and blocks where it is not
    batch_cls, stream_cls = PAIRS[method]
    n = 1300
    rng = np.random.default_rng(7)
    batch = batch_cls(n, crawl_rate=1.7, **params)
    streams = [stream_cls(crawl_rate=1.7, **params) for _ in range(n)]
    for step in range(4):
        if step == 2:
            pages = rng.integers(300, 800, 60)
            flags = rng.integers(0, 2, 60)
            batch.update(flags, pages=pages)
            for f, i in zip(flags, pages):
                streams[i].update(int(f))
        flags = rng.random(n) < 0.5
        batch.update(flags)
        for f, s in zip(flags, streams):
            s.update(bool(f))
        assert _common(batch)
        assert batch.rates.tolist() == [s.rate for s in streams]
        assert batch.n_changes.tolist() == [s.n_changes for s in streams]


@pytest.mark.parametrize(
    "method, params", [("naive", {}), ("lln", {}), ("lln", {"alpha": "log", "consistent": False})]
)
def test_large_common_updates_stream_the_same_bits(method, params):
    # full updates of >= 2^21 pages write the rates with non-temporal stores; the
    # per-page-rate batch runs the segmented kernel, already checked against streaming
    batch_cls, _ = PAIRS[method]
    n = 2**21 + 37
    rng = np.random.default_rng(11)
    fast = batch_cls(n, crawl_rate=1.7, **params)
    slow = batch_cls(n, crawl_rate=np.full(n, 1.7), **params)
    for step in range(3):
        if step == 1:
            pages = rng.integers(0, n, 5000)
            flags = rng.integers(0, 2, 5000)
            fast.update(flags, pages=pages)
            slow.update(flags, pages=pages)
        flags = rng.random(n) < 0.5
        fast.update(flags)
        slow.update(flags)
        assert _common(fast) and not _common(slow)
        assert np.array_equal(fast.rates.view(np.int64), slow.rates.view(np.int64))
        assert np.array_equal(fast.n_changes, slow.n_changes)


@pytest.mark.parametrize("method", sorted(PAIRS))
def test_shared_k_regime(method):
    """Full common-rate updates keep one shared k (no k array); a subset update stores k per page;
    the numbers equal the streaming estimators throughout, and from_dict of an all-equal k returns to it."""
    batch_cls, stream_cls = PAIRS[method]
    params = {"alpha": "log"} if method == "lln" else {}
    rng = np.random.default_rng(7)
    n = 700  # more than one block of the kernel
    batch = batch_cls(n, crawl_rate=2.5, **params)
    streams = [stream_cls(crawl_rate=2.5, **params) for _ in range(n)]
    for _ in range(5):
        flags = rng.random(n) < 0.4
        batch.update(flags)
        for s, f in zip(streams, flags):
            s.update(bool(f))
        assert batch._k_shared is not None and batch._k_arr is None
        _assert_same(batch, streams)
    np.testing.assert_array_equal(batch.n_updates, 5)
    restored = batch_cls.from_dict(batch.to_dict())
    assert restored._k_shared == 5
    twin = pickle.loads(pickle.dumps(batch))
    assert twin._k_shared == 5
    batch.update([1, 0], pages=[3, 3])
    streams[3].update(1).update(0)
    assert batch._k_shared is None
    assert batch.n_updates[3] == 7 and batch.n_updates[0] == 5
    _assert_same(batch, streams)
    restored = batch_cls.from_dict(batch.to_dict())
    assert restored._k_shared is None
    for b in (batch, restored, twin):
        b.update(np.ones(n, dtype=bool))
    for s in streams:
        s.update(1)
    _assert_same(batch, streams)
    _assert_same(restored, streams)
