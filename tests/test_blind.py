"""freshcore.blind, part 1: the renewal simulators, age sampling (M1, M2), WMRD and KS, and bad input.

Every estimator is checked against a plain numpy reference (integer counts over the same denominators, so
equality is exact) and against its limit in Li, Cline and Loguinov (2017)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from freshcore import _blind_validation, blind_simulation
from freshcore.blind import (
    Constant,
    Exponential,
    Pareto,
    Sampled,
    Uniform,
    ks,
    m1,
    m2,
    renewal_times,
    simulate_log,
    wmrd,
)

LAWS = [Exponential(2.0), Pareto(3.0, 1.0), Constant(0.5), Uniform(0.0, 1.0), Uniform(0.2, 0.9)]


def ref_cdf(values, x):
    values = np.asarray(values)
    if len(values) == 0:
        return np.full(len(x), np.nan)
    return (values[:, None] <= np.asarray(x)[None, :]).sum(axis=0) / len(values)


# ---------------------------------------------------------------------------
# simulators
# ---------------------------------------------------------------------------


def length_biased_cdf(law, x):
    if isinstance(law, Exponential):
        return stats.gamma(2.0, scale=law.mean).cdf(x)
    if isinstance(law, Pareto):
        return stats.betaprime(2.0, law.alpha - 1.0).cdf(x / law.beta)
    if isinstance(law, Uniform):
        return np.clip((x**2 - law.low**2) / (law.high**2 - law.low**2), 0, 1)
    raise AssertionError(law)


@pytest.mark.parametrize("law", [law for law in LAWS if not isinstance(law, Constant)], ids=repr)
def test_length_biased_draws_follow_x_f_over_mean(law):
    draws = law.length_biased(20_000, np.random.default_rng(1))
    assert stats.kstest(draws, lambda x: length_biased_cdf(law, x)).pvalue > 1e-3


@pytest.mark.parametrize("law", LAWS, ids=repr)
def test_intervals_follow_the_law_and_its_mean(law):
    draws = law.sample(20_000, np.random.default_rng(2))
    if isinstance(law, Constant):
        assert np.all(draws == law.value)
        return
    assert stats.kstest(draws, law.cdf).pvalue > 1e-3
    assert law.rate == pytest.approx(1.0 / law.mean)


@pytest.mark.parametrize("law", LAWS, ids=repr)
def test_stationary_start_ages_follow_g(law):
    """The age at a fixed time of a stationary renewal process has law G: one age per independent path."""
    gen = np.random.default_rng(3)
    ages = []
    for _ in range(3000):
        t, before = blind_simulation._renewal(law, 2.0, True, gen)
        ages.append(-before)  # the age at time 0
        assert len(t) == 0 or t[0] > 0.0
    assert stats.kstest(ages, law.age_cdf).pvalue > 1e-3


def test_age_cdfs_integrate_the_survival():
    """G(x) = (1/E[U]) ∫_0^x (1 - F), by quadrature."""
    from scipy.integrate import quad

    for law in LAWS:
        for x in (0.1, 0.4, 0.7, 2.0):
            want = quad(lambda y, law=law: 1.0 - float(law.cdf(y)), 0.0, x, points=[0.2, 0.5, 0.9])[0] / law.mean
            assert float(law.age_cdf(x)) == pytest.approx(want, abs=1e-9), (law, x)


def test_renewal_times_seeded_sorted_and_within_the_window():
    a = renewal_times(Pareto(3.0), 1000.0, rng=5)
    b = renewal_times(Pareto(3.0), 1000.0, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    assert np.all(np.diff(a) > 0) and a[0] > 0 and a[-1] < 1000.0
    assert len(a) == pytest.approx(2000, rel=0.1)
    assert not np.array_equal(a, renewal_times(Pareto(3.0), 1000.0, rng=6))
    np.testing.assert_array_equal(renewal_times(Constant(0.25), 1.0, stationary=False), [0.0, 0.25, 0.5, 0.75])


def test_renewal_times_long_horizon_is_vectorised():
    t = renewal_times(Exponential(1.0), 2e6, rng=0)
    assert len(t) == pytest.approx(2e6, rel=0.01)


def test_user_sampler_plain_callable_and_stationary():
    gamma = Sampled(lambda rng, size: rng.gamma(4.0, 0.25, size), rng=1)
    assert gamma.mean == pytest.approx(1.0, rel=0.02)
    # a gamma(4) interval covering a fixed time is gamma(5): its mean is 5/4
    lb = gamma.length_biased(20_000, np.random.default_rng(0))
    assert lb.mean() == pytest.approx(1.25, rel=0.02)
    t = renewal_times(lambda rng, size: rng.uniform(0.5, 1.5, size), 100.0, rng=0)
    assert np.all(np.diff(t) >= 0.5) and len(t) == pytest.approx(100, abs=10)


@pytest.mark.parametrize("sampler, message", [
    (lambda rng, size: -np.ones(size), r"finite intervals > 0; draw \[0\] = -1.0"),
    (lambda rng, size: np.ones(size + 1), r"must return an array of shape"),
])
def test_user_sampler_bad_draws(sampler, message):
    with pytest.raises(ValueError, match=message):
        Sampled(sampler)


def test_simulate_log_matches_a_brute_force_reading_of_the_updates():
    log = simulate_log(Pareto(3.0), Exponential(1.0), 200.0, rng=7)
    s, u = log.times, log.update_times
    assert s[0] == 0.0 and np.all(np.diff(s) > 0) and s[-1] < 200.0
    for j in range(len(s) - 1):
        assert log.changed[j] == np.any((u > s[j]) & (u <= s[j + 1]))
    for j in range(len(s)):
        before = u[u <= s[j]]
        if len(before):
            assert log.ages[j] == s[j] - before[-1]
        else:
            assert log.ages[j] >= s[j]  # the last update before time 0
    again = simulate_log(Pareto(3.0), Exponential(1.0), 200.0, rng=7)
    np.testing.assert_array_equal(again.changed, log.changed)
    assert log.changed.dtype == np.uint8


# ---------------------------------------------------------------------------
# M1 and M2
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_m1_m2_equal_the_numpy_counts(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(1, 300))
    ages = np.round(gen.exponential(1.0, n), 1)  # ties with the points
    changed = gen.integers(0, 2, n - 1).astype(bool)
    x = np.unique(np.round(gen.uniform(0, 3, int(gen.integers(1, 20))), 1))
    np.testing.assert_array_equal(m2(ages, x), ref_cdf(ages, x))
    np.testing.assert_array_equal(m1(ages, changed, x), ref_cdf(ages[:-1][changed], x))
    np.testing.assert_array_equal(m1(ages, changed.astype(np.int64), x), ref_cdf(ages[:-1][changed], x))


@pytest.mark.parametrize("n_points", [1, 32, 33, 200])
def test_m1_m2_few_and_many_points_paths(n_points):
    """Up to 32 points one vectorised count per point, beyond a search per age: the same counts."""
    gen = np.random.default_rng(n_points)
    ages = np.round(gen.exponential(1.0, 20_000), 2)
    changed = gen.integers(0, 2, len(ages) - 1).astype(np.uint8)
    x = np.round(np.linspace(0.01, 4.0, n_points), 2)
    np.testing.assert_array_equal(m2(ages, x), ref_cdf(ages, x))
    np.testing.assert_array_equal(m1(ages, changed, x), ref_cdf(ages[:-1][changed == 1], x))


@pytest.mark.parametrize("level", [0, 1, 2])
def test_simd_and_scalar_paths_agree(level):
    """Every path of _blind_simd.h (scalar, AVX2, AVX-512F, as far as the processor has them) gives the same
    counts and finds the same first bad age, in the few-points and the many-points paths."""
    from freshcore import _blind

    gen = np.random.default_rng(5)
    ages = np.round(gen.exponential(1.0, 10_001), 2)
    changed = gen.integers(0, 2, 10_000).astype(np.uint8)
    best = _blind.SIMD_LEVEL
    try:
        _blind._set_simd_level(level)
        for x in (np.linspace(0.1, 3.0, 9).round(2), np.linspace(0.1, 3.0, 40).round(2)):
            np.testing.assert_array_equal(m2(ages, x), ref_cdf(ages, x))
            np.testing.assert_array_equal(m1(ages, changed, x), ref_cdf(ages[:-1][changed == 1], x))
            for i, bad in ((5000, np.nan), (9000, -1.0), (10_000, np.inf)):
                broken = ages.copy()
                broken[i] = bad
                broken[i + 1:] = np.nan  # only the first is named
                for call in (lambda b=broken, x=x: m2(b, x), lambda b=broken, x=x: m1(b, changed, x)):
                    with pytest.raises(ValueError, match=rf"ages\[{i}\] = {bad}"):
                        call()
    finally:
        assert _blind._set_simd_level(-1) == best


def test_m2_is_consistent_for_g_and_m1_follows_eq_8():
    """M2 -> G_U (Theorem 5); M1 -> 1 - (G_U(x + Δ) - G_U(x)) / G_U(Δ) at constant S = Δ (eq. (8))."""
    law = Pareto(3.0)
    log = simulate_log(law, Constant(1.0), 1e5, rng=11)
    x = np.linspace(0.1, 5.0, 50)
    assert ks(m2(log.ages, x), law.age_cdf(x)) < 0.01
    g = law.age_cdf
    limit = 1.0 - (g(x + 1.0) - g(x)) / g(1.0)
    assert ks(m1(log.ages, log.changed, x), limit) < 0.01
    assert ks(m1(log.ages, log.changed, x), g(x)) > 0.05  # biased for G_U
    assert ks(m1(log.ages, log.changed, x), law.cdf(x)) > 0.05  # and for F_U


def test_m1_m2_without_data_are_nan():
    assert np.isnan(m1([1.0, 2.0], [0], [1.0])).all()


def test_wmrd_and_ks_by_hand():
    h, g = np.array([0.2, 0.5, 0.9]), np.array([0.25, 0.5, 0.8])
    assert wmrd(h, g) == pytest.approx(0.15 / (0.5 * 3.15))
    assert ks(h, g) == pytest.approx(0.1)
    assert wmrd(g, g) == 0.0 and ks(g, g) == 0.0


# ---------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, message", [
    (lambda: m2([0.1, np.nan], [1.0]), ValueError, r"'ages' parameter of m2 must contain .*ages\[1\] = nan"),
    (lambda: m2([0.1, 0.2, -0.5], [1.0]), ValueError, r"'ages' parameter of m2 must contain finite numbers >= 0; "
                                                      r"ages\[2\] = -0.5"),
    (lambda: m2([0.1, np.inf], [1.0]), ValueError, r"ages\[1\] = inf"),
    (lambda: m2(np.array([0.1, 0.2, np.nan]), [1.0]), ValueError, r"'ages' parameter of m2 must contain finite "
                                                                  r"numbers >= 0; ages\[2\] = nan"),
    (lambda: m1(np.array([0.1, -0.2]), [1], [1.0]), ValueError, r"ages\[1\] = -0.2"),
    (lambda: m2([], [1.0]), ValueError, r"'ages' parameter of m2 must not be empty"),
    (lambda: m2([0.1], []), ValueError, r"'x' parameter of m2 must not be empty"),
    (lambda: m2([0.1], [1.0, 1.0]), ValueError, r"'x' parameter of m2 must be strictly increasing; x\[1\] = 1.0"),
    (lambda: m2([0.1], [-1.0]), ValueError, r"'x' parameter of m2 must contain finite numbers >= 0"),
    (lambda: m2("abc", [1.0]), TypeError, r"'ages' parameter of m2"),
    (lambda: m1([0.1, 0.2], [0, 1], [1.0]), ValueError,
     r"'changed' parameter of m1 must have one flag per pair of consecutive samples, len\(ages\) - 1 = 1. Got 2"),
    (lambda: m1([0.1, 0.2, 0.3], [0, 2], [1.0]), ValueError,
     r"'changed' parameter of m1 must contain only 0/1 .*changed\[1\] = 2"),
    (lambda: m1([0.1, 0.2, 0.3], np.array([0, 3], dtype=np.uint8), [1.0]), ValueError, r"changed\[1\] = 3"),
    (lambda: m1([0.1, 0.2, 0.3], [0.0, 0.5], [1.0]), ValueError, r"changed\[1\] = 0.5"),
    (lambda: m1([0.1], np.array([], dtype=bool), [1.0]), ValueError, r"'changed' parameter of m1 must not be empty"),
    (lambda: wmrd([0.1, np.nan], [0.1, 0.2]), ValueError, r"'estimate' parameter of wmrd .*estimate\[1\] = nan"),
    (lambda: ks([0.1, 0.2], [0.1]), ValueError, r"'estimate' has 2, 'target' has 1"),
    (lambda: renewal_times(Exponential(1.0), 0.0), ValueError, r"'horizon' parameter of renewal_times must be"),
    (lambda: renewal_times("pareto", 1.0), TypeError, r"'interval' parameter of renewal_times must be"),
    (lambda: renewal_times(Exponential(1.0), 1.0, rng=-1), ValueError, r"'rng' parameter of renewal_times"),
    (lambda: simulate_log(Pareto(3.0), 2.0, 1.0), TypeError, r"'samples' parameter of simulate_log must be"),
    (lambda: Pareto(1.0), ValueError, r"'alpha' parameter of Pareto must be a finite number > 1.0"),
    (lambda: Pareto(3.0, 0.0), ValueError, r"'beta' parameter of Pareto"),
    (lambda: Exponential(-1.0), ValueError, r"'rate' parameter of Exponential"),
    (lambda: Constant(0.0), ValueError, r"'value' parameter of Constant"),
    (lambda: Uniform(1.0, 1.0), ValueError, r"'high' parameter of Uniform must be a finite number > 1.0"),
    (lambda: Uniform(-1.0, 1.0), ValueError, r"'low' parameter of Uniform"),
    (lambda: Sampled(3.0), TypeError, r"'sampler' parameter of Sampled must be callable"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_flags_bool_and_uint8_are_read_without_a_copy():
    flags = np.array([True, False, True])
    assert np.shares_memory(_blind_validation._flags(flags, "m4"), flags)
    u8 = np.array([1, 0, 1], dtype=np.uint8)
    assert np.shares_memory(_blind_validation._flags(u8, "m4"), u8)
    ro = np.array([1, 0, 1], dtype=np.uint8)
    ro.flags.writeable = False
    assert _blind_validation._flags(ro, "m4").tolist() == [1, 0, 1]


def test_first_bad_index_scans_cross_blocks():
    from freshcore import _blind

    flags = np.zeros(10_000, dtype=np.uint8)
    assert _blind.first_not_binary(flags) == -1
    flags[[7000, 9000]] = [1, 5]
    assert _blind.first_not_binary(flags) == 9000
    ages = np.ones(10_000)
    ages[[5000, 6000]] = [np.nan, -1.0]
    assert _blind.first_not_age(ages) == 5000
    times = np.arange(10_000.0)
    assert _blind.first_not_increasing(times) == -1
    times[8191] = times[8190]
    assert _blind.first_not_increasing(times) == 8191
    assert _blind.first_not_increasing(np.array([np.nan, 1.0])) == 0
    assert _blind.first_not_increasing(np.array([0.0, np.inf])) == 1


def test_objects_pickled_under_freshcore_blind_still_load():
    """blind.py was split into blind_simulation, blind_estimators, blind_recovery, blind_rates ...: a pickle made
    before names its classes freshcore.blind.<Name> (GLOBAL opcode, protocols 0-3), which must still load."""
    import pickle

    from freshcore.blind import AgeTable, BlindLog, LatticeSamplingWarning, UpdateDistribution, update_distribution

    x = np.linspace(0.1, 2.0, 5)
    objs = [Pareto(3.0, 2.0), Exponential(2.0), Constant(1.5), Uniform(0.5, 2.0),
            simulate_log(Pareto(3.0), Exponential(1.0), 20.0, rng=0),
            update_distribution(Pareto(3.0).age_cdf(x), x),
            AgeTable(np.array([Constant(2.0).age_cdf(x), Pareto(3.0).age_cdf(x)]), x),
            LatticeSamplingWarning("lattice")]
    assert {BlindLog, UpdateDistribution} <= {type(o) for o in objs}
    for obj in objs:
        cls = type(obj)
        new = pickle.dumps(obj, protocol=2)
        here = f"c{cls.__module__}\n{cls.__name__}\n".encode()
        assert here in new, cls
        old = new.replace(here, f"cfreshcore.blind\n{cls.__name__}\n".encode())
        back = pickle.loads(old)
        assert type(back) is cls
        assert pickle.dumps(back, protocol=2) == new
