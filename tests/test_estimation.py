"""Streaming change-rate estimators: exact small cases, statistics, round trips."""

from __future__ import annotations

import copy
import math
import pickle
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freshcore.estimation import LLNEstimator, NaiveEstimator, SAEstimator, SAMEstimator

CLASSES = [NaiveEstimator, LLNEstimator, SAEstimator, SAMEstimator]


def simulate(rng, delta, p, n_pages, k):
    """Flags I (n_pages, k) of Poisson(delta) changes seen by Poisson(p) crawls (p scalar or (k,))."""
    tau = rng.exponential(1.0, size=(n_pages, k)) / np.broadcast_to(p, (k,))
    return (rng.random((n_pages, k)) < -np.expm1(-delta * tau)).astype(np.uint8)


# ---------------------------------------------------------------------------
# exact hand-computed sequences
# ---------------------------------------------------------------------------


def test_naive_exact_sequence():
    est = NaiveEstimator(crawl_rate=2.0)
    # q_k = p * (#changes) / k
    expected = [Fraction(2, 1), Fraction(2, 2), Fraction(4, 3), Fraction(6, 4)]
    for flag, want in zip([1, 0, 1, 1], expected):
        assert est.update(flag).rate == float(want)
    assert est.n_updates == 4 and est.n_changes == 3


def test_lln_one_exact_sequence():
    est = LLNEstimator(crawl_rate=3.0)
    # x_k = 3 I_k / (k + 1 - I_k): I = 1,1,0,1 -> 3/1, 6/1, 6/2, 9/2
    for flag, want in zip([1, 1, 0, 1], [3.0, 6.0, 3.0, 4.5]):
        assert est.update(flag).rate == want


@pytest.mark.parametrize(
    "alpha, alpha_k",
    [
        ("log", lambda k: math.log(k + 1)),
        ("sqrt", math.sqrt),
        (0.25, lambda k: 0.25),
        (lambda k: k**0.3, lambda k: k**0.3),
        ([0.5, 1.5, 2.5, 0.1, 0.2, 0.3, 4.0, 9.0], lambda k: [0.5, 1.5, 2.5, 0.1, 0.2, 0.3, 4.0, 9.0][k - 1]),
    ],
)
def test_lln_alpha_presets(alpha, alpha_k):
    flags = [0, 1, 1, 0, 1, 1, 1, 0]
    est = LLNEstimator(crawl_rate=1.5, alpha=alpha)
    n1 = 0
    for k, flag in enumerate(flags, start=1):
        n1 += flag
        want = 1.5 * n1 / (k + alpha_k(k) - n1)
        assert est.update(flag).rate == pytest.approx(want, rel=1e-14, abs=0)


def test_lln_log_is_log_k_plus_one_at_k1():
    # with alpha_1 = log 1 = 0 the first estimate would be infinite; SPEC says log(k + 1)
    assert LLNEstimator(crawl_rate=1.0, alpha="log").update(1).rate == pytest.approx(1 / math.log(2), rel=1e-15)


def test_lln_varying_rate_consistent_vs_eq1():
    rates = [2.0, 3.0, 1.0]
    flags = [1, 1, 0]
    cons = LLNEstimator(consistent=True)
    auto = LLNEstimator()
    eq1 = LLNEstimator(consistent=False)
    for f, p in zip(flags, rates):
        for e in (cons, auto, eq1):
            e.update(f, crawl_rate=p)
    assert cons.rate == (2.0 + 3.0) / (1 + 1)
    assert auto.rate == cons.rate
    assert eq1.rate == 1.0 * 2 / (1 + 1)


def test_lln_constant_rate_all_modes_identical():
    rng = np.random.default_rng(1)
    flags = rng.integers(0, 2, 300)
    ests = [LLNEstimator(crawl_rate=0.7, consistent=c, alpha="sqrt") for c in (None, True, False)]
    for f in flags:
        vals = {e.update(int(f)).rate for e in ests}
        assert len(vals) == 1


def test_sa_exact_sequence_eta_one():
    # eta = 1: eta_k = 1/(k + 1), y_{k+1} = y_k + (I (y_k + p) - y_k)/(k + 1)
    p = Fraction(3, 2)
    y = Fraction(1, 4)
    est = SAEstimator(crawl_rate=1.5, eta=1.0, initial=0.25)
    for k, flag in enumerate([1, 0, 0, 1, 1, 0]):
        y = y + (flag * (y + p) - y) / (k + 1)
        assert est.update(flag).rate == pytest.approx(float(y), rel=1e-15)


def test_sa_first_step_has_eta0_one():
    assert SAEstimator(crawl_rate=3.0, initial=7.0).update(0).rate == 0.0
    assert SAEstimator(crawl_rate=3.0).update(1).rate == 3.0


def test_sam_exact_sequence():
    # eta = beta = 1, omega = 1/2: eta_k = beta_k = 1/(k+1), zeta_k = (1 - omega) k/(k + 1), zeta_0 = 0
    p = Fraction(2)
    z_prev = z = Fraction(1, 3)
    est = SAMEstimator(crawl_rate=2.0, eta=1.0, beta=1.0, omega=0.5, initial=1 / 3)
    for k, flag in enumerate([1, 1, 0, 1, 0, 0, 1]):
        zeta = Fraction(k, 2 * (k + 1))
        z, z_prev = z + (flag * (z + p) - z) / (k + 1) + zeta * (z - z_prev), z
        est.update(flag)
        assert est.rate == pytest.approx(float(z), rel=1e-14)
        assert est.previous == pytest.approx(float(z_prev), rel=1e-14)


def test_sa_sam_default_parameters_match_plain_python():
    rng = np.random.default_rng(7)
    flags = simulate(rng, 5.0, 3.0, 1, 500)[0]
    rates = rng.uniform(0.5, 4.0, 500)
    sa, sam = SAEstimator(), SAMEstimator()
    assert (sa.eta, sam.eta, sam.beta, sam.omega) == (0.75, 1.3, 0.75, 1.0)
    y = z = zp = 0.0
    for k, (f, p) in enumerate(zip(flags, rates)):
        y = y + (k + 1) ** -0.75 * (f * (y + p) - y)
        zeta = 0.0 if k == 0 else ((k + 1) ** -0.75 - (k + 1) ** -1.3) / k**-0.75
        z, zp = z + (k + 1) ** -1.3 * (f * (z + p) - z) + zeta * (z - zp), z
        sa.update(int(f), crawl_rate=float(p))
        sam.update(int(f), crawl_rate=float(p))
        assert sa.rate == pytest.approx(y, rel=1e-12)
        assert sam.rate == pytest.approx(z, rel=1e-12)


def test_sam_reduces_to_sa_when_beta_equals_eta_and_omega_one():
    flags = simulate(np.random.default_rng(3), 2.0, 1.0, 1, 200)[0]
    sa, sam = SAEstimator(crawl_rate=1.0, eta=0.8), SAMEstimator(crawl_rate=1.0, eta=0.8, beta=0.8, omega=1.0)
    for f in flags:
        sa.update(int(f))
        sam.update(int(f))
        assert sam.rate == pytest.approx(sa.rate, rel=1e-12, abs=1e-300)


# ---------------------------------------------------------------------------
# statistics on simulated data
# ---------------------------------------------------------------------------


def test_naive_tends_to_biased_limit():
    delta, p = 5.0, 3.0
    flags = simulate(np.random.default_rng(11), delta, p, 1, 40000)[0]
    est = NaiveEstimator(crawl_rate=p).update_many(flags)
    limit = p * delta / (delta + p)
    sd = p * math.sqrt((delta / (delta + p)) * (p / (delta + p)) / flags.size)
    assert abs(est.rate - limit) < 5 * sd
    assert est.rate < delta - 2.0  # biased downwards, far from delta


@pytest.mark.parametrize("cls", [LLNEstimator, SAEstimator, SAMEstimator])
def test_online_estimators_consistent(cls):
    delta, p = 5.0, 3.0
    flags = simulate(np.random.default_rng(12), delta, p, 1, 40000)[0]
    est = cls(crawl_rate=p).update_many(flags)
    assert abs(est.rate - delta) < 0.25


@pytest.mark.parametrize("cls", [LLNEstimator, SAEstimator, SAMEstimator])
def test_consistent_under_varying_crawl_rate(cls):
    delta, k = 2.0, 40000
    rng = np.random.default_rng(13)
    p = np.repeat([0.5, 4.0, 1.0, 6.0], k // 4)
    flags = simulate(rng, delta, p, 1, k)[0]
    est = cls().update_many(flags, crawl_rate=p)
    assert abs(est.rate - delta) < 0.15


def test_eq1_lln_inconsistent_when_rate_varies():
    delta, k = 2.0, 40000
    p = np.repeat([0.5, 6.0], k // 2)
    flags = simulate(np.random.default_rng(14), delta, p, 1, k)[0]
    eq1 = LLNEstimator(consistent=False).update_many(flags, crawl_rate=p)
    cons = LLNEstimator().update_many(flags, crawl_rate=p)
    assert abs(cons.rate - delta) < 0.15
    assert abs(eq1.rate - delta) > 1.0


# ---------------------------------------------------------------------------
# update / update_many / intervals
# ---------------------------------------------------------------------------


def _make(cls, **kw):
    extra = {
        NaiveEstimator: {},
        LLNEstimator: {"alpha": "log"},
        SAEstimator: {"eta": 0.6, "initial": 1.0},
        SAMEstimator: {"eta": 1.1, "beta": 0.6, "omega": 0.9, "initial": 0.5},
    }[cls]
    return cls(**{**extra, **kw})


@pytest.mark.parametrize("cls", CLASSES)
@given(data=st.data())
def test_update_many_equals_loop(cls, data):
    m = data.draw(st.integers(0, 40))
    flags = data.draw(st.lists(st.booleans(), min_size=m, max_size=m))
    rates = data.draw(st.lists(st.floats(0.01, 100.0), min_size=m, max_size=m))
    intervals = data.draw(st.lists(st.floats(1e-3, 10.0), min_size=m, max_size=m))
    a, b = _make(cls, crawl_rate=1.0), _make(cls, crawl_rate=1.0)
    a.update(1)
    b.update(1)
    a.update_many(flags, intervals=intervals, crawl_rate=rates)
    for f, r, t in zip(flags, rates, intervals):
        assert b.update(f, interval=t, crawl_rate=r) is b
    assert a.to_dict() == b.to_dict()
    assert a.rate == b.rate and a.n_updates == b.n_updates == m + 1 and a.elapsed == b.elapsed


@pytest.mark.parametrize("cls", CLASSES)
def test_interval_accumulates_elapsed_and_leaves_estimate_alone(cls):
    a, b = _make(cls, crawl_rate=2.0), _make(cls, crawl_rate=2.0)
    for f, t in [(1, 0.5), (0, 0.25), (1, 1.0)]:
        a.update(f, interval=t)
        b.update(f)
    assert a.elapsed == 1.75 and b.elapsed == 0.0
    assert a.rate == b.rate


@pytest.mark.parametrize("cls", CLASSES)
def test_update_many_scalar_interval_and_rate(cls):
    a = _make(cls).update_many([1, 0, 1], intervals=0.5, crawl_rate=2.0)
    b = _make(cls).update(1, 0.5, 2.0).update(0, 0.5, 2.0).update(1, 0.5, 2.0)
    assert a.to_dict() == b.to_dict() and a.elapsed == 1.5


@pytest.mark.parametrize("cls", CLASSES)
def test_changed_accepts_bool_int_numpy_and_float_flags(cls):
    ref = _make(cls, crawl_rate=1.0)
    for f in (True, 1, False, 0):
        ref.update(f)
    other = _make(cls, crawl_rate=1.0)
    for f in (np.True_, np.int64(1), 0.0, np.uint8(0)):
        other.update(f)
    assert other.rate == ref.rate


@pytest.mark.parametrize("cls", CLASSES)
def test_per_update_rate_overrides_constructor(cls):
    a, b = _make(cls, crawl_rate=1.0), _make(cls)
    for f, p in [(1, 2.0), (1, 1.0), (0, 3)]:
        a.update(f, crawl_rate=p)
        b.update(f, crawl_rate=p)
    assert a.rate == b.rate


# ---------------------------------------------------------------------------
# save / restore
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "dict"])
def test_round_trips_continue_bit_identically(cls, how):
    rng = np.random.default_rng(21)
    flags = rng.integers(0, 2, 60)
    rates = rng.uniform(0.5, 3.0, 60)
    est = _make(cls, crawl_rate=1.25)
    est.update_many(flags[:30], crawl_rate=rates[:30], intervals=rates[:30])
    if how == "pickle":
        twin = pickle.loads(pickle.dumps(est))
    elif how == "deepcopy":
        twin = copy.deepcopy(est)
    else:
        twin = cls.from_dict(est.to_dict())
    assert type(twin) is cls and twin is not est
    assert twin.to_dict() == est.to_dict()
    for f, p in zip(flags[30:], rates[30:]):
        est.update(int(f), crawl_rate=float(p))
        twin.update(int(f), crawl_rate=float(p))
        assert twin.rate == est.rate
    assert twin.n_updates == est.n_updates == 60


def test_dict_holds_plain_python_values():
    d = SAMEstimator(crawl_rate=2.0).update(1).to_dict()
    assert d == {
        "params": {"crawl_rate": 2.0, "eta": 1.3, "beta": 0.75, "omega": 1.0, "initial": 0.0},
        "state": {"n_updates": 1, "elapsed": 0.0, "rate": 2.0, "previous": 0.0},
    }


def test_callable_alpha_survives_dict_round_trip():
    def alpha(k):
        return 1.0 + 1.0 / k

    est = LLNEstimator(crawl_rate=2.0, alpha=alpha).update(1).update(0)
    twin = LLNEstimator.from_dict(est.to_dict())
    assert twin.update(1).rate == est.update(1).rate
    assert twin.alpha is alpha


def test_rate_is_read_only():
    est = SAEstimator(crawl_rate=1.0)
    with pytest.raises(AttributeError):
        est.rate = 3.0
    with pytest.raises(AttributeError):
        est.n_updates = 3
