"""freshcore.blind, part 3: comparison sampling at random intervals (G-M4 and M6, both compiled forms) and
Fig. 15 of Li, Cline and Loguinov (2017)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freshcore.blind import Constant, Exponential, LatticeSamplingWarning, Pareto, Uniform, g_m4, m4, m6, simulate_log
from freshcore.reproduce import blind as repro


def ref_m6(times, changed, h, max_bin=None):
    """All pairs in numpy: bin n = ceil(d * (1/h)), at least 1."""
    t = np.asarray(times, dtype=float)
    if max_bin is None:
        max_bin = max(1, int(np.ceil((t[-1] - t[0]) * (1.0 / h))))
    c = np.concatenate(([0], np.cumsum(changed)))
    i, j = np.triu_indices(len(t), 1)
    bins = np.maximum(np.ceil((t[j] - t[i]) * (1.0 / h)), 1.0)
    keep = bins <= max_bin
    b = bins[keep].astype(np.intp)
    q = (c[j] > c[i])[keep]
    w = np.bincount(b, minlength=max_bin + 1)[1:]
    z = np.bincount(b, weights=q, minlength=max_bin + 1)[1:].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(w > 0, z / np.maximum(w, 1), np.nan), w, z


def ref_gm4(times, changed, x):
    t = np.asarray(times, dtype=float)
    c = np.asarray(changed, dtype=bool)
    values = []
    anchor = None
    for j in range(len(c)):
        if c[j]:
            anchor = t[j]
        if anchor is not None:
            values.append(t[j + 1] - anchor)
    v = np.array(values)
    return (v[:, None] <= np.asarray(x)[None, :]).sum(0) / len(v) if len(v) else np.full(len(x), np.nan)


def quiet_m6(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LatticeSamplingWarning)
        return m6(*args, **kwargs)


@st.composite
def logs(draw):
    n = draw(st.integers(2, 60))
    if draw(st.booleans()):  # on a grid of quarters: distances land exactly on the bin edges
        steps = draw(st.lists(st.integers(1, 12), min_size=n - 1, max_size=n - 1))
        times = np.concatenate(([0.0], np.cumsum(steps) * 0.25)) + draw(st.sampled_from([0.0, 1e3]))
    else:
        steps = draw(st.lists(st.floats(1e-3, 5.0), min_size=n - 1, max_size=n - 1))
        times = np.concatenate(([0.0], np.cumsum(steps)))
        times = np.unique(times)
        if len(times) < 2:
            times = np.array([0.0, 1.0])
    changed = np.array(draw(st.lists(st.booleans(), min_size=len(times) - 1, max_size=len(times) - 1)))
    h = draw(st.sampled_from([0.25, 0.1, 0.3, 1.0, 0.07]))
    max_bin = draw(st.one_of(st.none(), st.integers(1, 80)))
    return times, changed, h, max_bin


@given(logs())
def test_m6_pairs_and_fast_count_identically_and_equal_numpy(log):
    times, changed, h, max_bin = log
    est_p, w_p, z_p = quiet_m6(times, changed, h, max_bin, method="pairs", return_counts=True)
    est_f, w_f, z_f = quiet_m6(times, changed, h, max_bin, method="fast", return_counts=True)
    np.testing.assert_array_equal(w_p, w_f)
    np.testing.assert_array_equal(z_p, z_f)
    np.testing.assert_array_equal(est_p, est_f)
    est_r, w_r, z_r = ref_m6(times, changed, h, max_bin)
    np.testing.assert_array_equal(w_f, w_r)
    np.testing.assert_array_equal(z_f, z_r)
    np.testing.assert_array_equal(est_f, est_r)


@pytest.mark.parametrize("seed", range(4))
def test_m6_forms_agree_on_simulated_logs(seed):
    log = simulate_log(Pareto(3.0), Exponential(1.0), 3000.0, rng=seed)
    for max_bin in (None, 7, 200):
        a = m6(log.times, log.changed, 0.05, max_bin, method="pairs", return_counts=True)
        b = m6(log.times, log.changed, 0.05, max_bin, method="fast", return_counts=True)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    assert a[1].sum() == len(log.times) * (len(log.times) - 1) // 2 or max_bin is not None


@pytest.mark.parametrize("h", [0.25, 0.05, 0.1])
def test_m6_scalar_and_simd_bins_agree(h):
    from freshcore import _blind

    t = np.cumsum(np.random.default_rng(1).integers(1, 9, 3000)) * 0.25 + 0.1 * (h == 0.1)  # edges hit
    c = np.random.default_rng(2).random(len(t) - 1) < 0.3
    best = _blind.SIMD_LEVEL
    try:
        _blind._set_simd_level(0)
        scalar = [quiet_m6(t, c, h, b, method=m, return_counts=True) for b in (None, 40) for m in ("pairs", "fast")]
    finally:
        assert _blind._set_simd_level(-1) == best
    simd = [quiet_m6(t, c, h, b, method=m, return_counts=True) for b in (None, 40) for m in ("pairs", "fast")]
    for a, b in zip(scalar, simd):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


def test_m6_default_covers_every_pair_and_small_example():
    t = [0.0, 0.3, 1.1, 1.5, 2.6]
    est, w, z = m6(t, [0, 1, 0, 1], 1.0, return_counts=True)
    assert w.sum() == 10 and len(est) == 3
    np.testing.assert_array_equal(w, [3, 5, 2])
    np.testing.assert_array_equal(z, [1, 5, 2])


def test_m6_read_only_and_bool_inputs():
    log = simulate_log(Pareto(3.0), Exponential(1.0), 500.0, rng=3)
    t, c = log.times.copy(), log.changed.astype(bool)
    t.flags.writeable = False
    c.flags.writeable = False
    np.testing.assert_array_equal(m6(t, c, 0.1, 50), m6(log.times, log.changed, 0.1, 50))


def test_m6_lattice_sampler_warns_and_m4_equivalence():
    log = simulate_log(Pareto(3.0), Constant(1.0), 2000.0, rng=1)
    with pytest.warns(LatticeSamplingWarning, match=r"'times' parameter of m6: every sampling interval is a "
                                                    r"multiple of 1.0 .*phase-lock.*Assumption 1"):
        m6(log.times, log.changed, 1.0, 5)
    # multiples of one step (a crawler that skips some visits) are a lattice too
    t = np.cumsum(np.random.default_rng(0).integers(1, 4, 100)) * 0.5
    with pytest.warns(LatticeSamplingWarning):
        m6(t, np.zeros(99, dtype=np.uint8), 0.5, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m6(simulate_log(Pareto(3.0), Uniform(0.0, 2.0), 200.0, rng=1).times[:50], np.zeros(49, dtype=bool), 0.5, 3)


@pytest.mark.parametrize("seed", range(6))
def test_g_m4_equals_reference_and_m4_at_constant_intervals(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(2, 200))
    t = np.cumsum(gen.exponential(1.0, n))
    c = gen.random(n - 1) < 0.4
    x = np.sort(gen.uniform(0, 6, 7))
    np.testing.assert_array_equal(g_m4(t, c, x), ref_gm4(t, c, x))
    # at a constant interval G-M4 is M4
    tc = np.arange(n, dtype=float)
    np.testing.assert_array_equal(g_m4(tc, c, np.arange(1.0, 6.0)), m4(c, 5))


def test_g_m4_is_biased_at_random_intervals_where_m6_is_not():
    """Fig. 14 against Fig. 15: under Pareto updates and exponential sampling G-M4's tail is far from G_U."""
    law = Pareto(3.0)
    log = simulate_log(law, Exponential(1.0), 1e5, rng=2)
    x = np.arange(1.0, 10.0)
    assert np.abs(g_m4(log.times, log.changed, x) - law.age_cdf(x)).max() > 0.05
    est = m6(log.times, log.changed, 1.0, 9)
    assert np.abs(est - repro.bin_average(1.0, 9)).max() < 0.01


def test_fig15_m6_ks_to_the_bin_averages():
    """T = 10^6, h = 0.05: M6's KS distance to the bin averages of G_U below 0.01 with exponential and uniform
    sampling (measured 0.005 and 0.008), while to G_U(nh) it is about g_U(0) h / 2 = 0.05 (the bin bias)."""
    table = repro.fig15(1e6, seed=0)
    for name in ("exponential", "uniform [0, 2]"):
        assert table.values[f"KS avg {name}"] < 0.01
        assert 0.03 < table.values[f"KS edge {name}"] < 0.06


@pytest.mark.parametrize("call, error, message", [
    (lambda: m6([0.0, 1.0, 1.0], [0, 1], 0.5), ValueError,
     r"'times' parameter of m6 must be strictly increasing \(sorted, no duplicates\); times\[2\] = 1.0 is not above "
     r"times\[1\] = 1.0"),
    (lambda: m6([0.0, 2.0, 1.0], [0, 1], 0.5), ValueError, r"times\[2\] = 1.0 is not above times\[1\] = 2.0"),
    (lambda: m6([0.0, np.nan], [0], 0.5), ValueError, r"'times' parameter of m6 must contain .*times\[1\] = nan"),
    (lambda: m6(np.array([0.0, np.nan]), [0], 0.5), ValueError, r"'times' parameter of m6 must contain finite "
                                                               r"numbers; times\[1\] = nan"),
    (lambda: m6([np.inf, 1.0], [0], 0.5), ValueError, r"times\[0\] = inf"),
    (lambda: m6([0.0, 1.0, 2.0], [0], 0.5), ValueError,
     r"'changed' parameter of m6 must have one flag per pair of consecutive samples, len\(times\) - 1 = 2. Got 1"),
    (lambda: m6([0.0, 1.0, 2.0], [0, 2], 0.5), ValueError, r"'changed' parameter of m6 must contain only 0/1 .*"
                                                         r"changed\[1\] = 2"),
    (lambda: m6([0.0, 1.0], [0], 0.0), ValueError, r"'bin_width' parameter of m6 must be a finite number > 0.0"),
    (lambda: m6([0.0, 1.0], [0], -1.0), ValueError, r"'bin_width' parameter of m6"),
    (lambda: m6([0.0, 1.0], [0], 0.5, 0), ValueError, r"'max_bin' parameter of m6 must be an integer >= 1"),
    (lambda: m6([0.0, 1.0], [0], 0.5, method="all"), ValueError, r"'method' parameter of m6 must be one of"),
    (lambda: m6([], [], 0.5), ValueError, r"'times' parameter of m6 must not be empty"),
    (lambda: m6([0.0], [], 0.5), ValueError, r"'changed' parameter of m6 must not be empty"),
    (lambda: m6([0.0, 1e9], [1], 1e-3), ValueError, r"'max_bin' parameter of m6 is None, which would need"),
    (lambda: g_m4([0.0, 1.0, 0.5], [0, 1], [1.0]), ValueError, r"'times' parameter of g_m4 must be strictly"),
    (lambda: g_m4([0.0, 1.0], [1], [2.0, 1.0]), ValueError, r"'x' parameter of g_m4 must be strictly increasing"),
])
def test_bad_input(call, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LatticeSamplingWarning)
        with pytest.raises(error, match=message):
            call()
