"""freshcore.blind, part 5: every path of the compiled kernels (``_blind_simd.h``: scalar, AVX2, AVX-512, as far as
the processor has them) gives the numpy counts, through the cases each path treats apart: the number of points
counted in one pass (1 .. 16, then several passes), the blocks of ages and their last few, M6's windows of 8
partners (the last samples, rows with more than 8 or 16 partners, a full buffer) and the first bad entry."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_blind import ref_cdf
from test_blind_random import ref_m6

from freshcore import _blind
from freshcore.blind import LatticeSamplingWarning, m1, m2, m6

LEVELS = [0, 1, 2]


@pytest.fixture(params=LEVELS, ids=["scalar", "avx2", "avx512"])
def level(request):
    """Run the test on one path (skipped where the processor lacks it); the best path again afterwards."""
    best = _blind.SIMD_LEVEL
    if request.param > best:
        pytest.skip(f"the processor has SIMD level {best}")
    assert _blind._set_simd_level(request.param) == request.param
    yield request.param
    assert _blind._set_simd_level(-1) == best


def test_m1_m2_every_group_of_points(level):
    """1 .. 32 points (one pass up to 16 points, 8 with AVX2, then more), 2 blocks of 2048 ages and a tail."""
    gen = np.random.default_rng(level)
    n = 2 * 2048 + 13
    ages = np.round(gen.exponential(1.0, n), 2)  # ties with the points
    ages[::97] = -0.0  # an age of -0 is 0
    changed = gen.integers(0, 2, n - 1).astype(np.uint8)
    for k in range(1, 33):
        x = np.round(np.linspace(0.0, 3.1, k), 2) if k > 1 else np.array([0.7])
        np.testing.assert_array_equal(m2(ages, x), ref_cdf(ages, x), err_msg=f"{k} points")
        np.testing.assert_array_equal(m1(ages, changed, x), ref_cdf(ages[:-1][changed == 1], x), err_msg=f"{k} points")
    for n_short in (1, 2, 7, 8, 9, 31):  # shorter than one vector
        a = ages[:n_short]
        c = changed[:n_short - 1] if n_short > 1 else None
        x = np.array([0.5, 1.0, 2.0])
        np.testing.assert_array_equal(m2(a, x), ref_cdf(a, x))
        if c is not None and c.any():
            np.testing.assert_array_equal(m1(a, c, x), ref_cdf(a[:-1][c == 1], x))


@pytest.mark.parametrize("k", [1, 9, 17, 32])
def test_m1_m2_name_the_first_bad_age_in_any_pass(level, k):
    gen = np.random.default_rng(k)
    n = 2 * 2048 + 13
    ages = gen.exponential(1.0, n)
    changed = np.ones(n - 1, dtype=np.uint8)
    x = np.linspace(0.1, 3.0, k)
    for i, bad in ((0, np.nan), (7, -1.0), (8, np.inf), (2047, -np.inf), (2048, np.nan), (n - 2, -1e-300),
                   (n - 1, np.inf)):
        broken = ages.copy()
        broken[i] = bad
        broken[i + 1:] = np.nan  # only the first is named
        with pytest.raises(ValueError, match=rf"ages\[{i}\] = {bad}"):
            m2(broken, x)
        with pytest.raises(ValueError, match=rf"ages\[{i}\] = {bad}"):
            m1(broken, changed, x)  # the last age too, though no flag keeps it


def quiet_m6(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LatticeSamplingWarning)
        return m6(*args, **kwargs, return_counts=True)


def m6_cases():
    gen = np.random.default_rng(18)
    for n in (2, 3, 8, 9, 10, 16, 17, 18, 25, 300):
        yield f"exponential n={n}", np.cumsum(gen.exponential(1.0, n)), 0.05
    yield "dense: rows of 40 partners", np.cumsum(gen.exponential(0.01, 400)), 0.05
    yield "bin edges hit", np.cumsum(gen.integers(1, 9, 500)) * 0.25, 0.25
    yield "large offset", 1e6 + np.cumsum(gen.uniform(0.0, 2.0, 500)), 0.1
    yield "buffer refilled", np.cumsum(gen.exponential(0.05, 2500)), 0.05  # ~10^5 pairs within 100 bins
    yield "many bins", np.cumsum(gen.exponential(1.0, 300)), 1e-3  # > 65536 bins: one copy of the histogram


@pytest.mark.parametrize("case", list(m6_cases()), ids=lambda c: c[0])
def test_m6_both_forms_equal_numpy(level, case):
    _, t, h = case
    changed = np.random.default_rng(len(t)).random(len(t) - 1) < 0.4
    for max_bin in (None, 1, 3, 100, 70_000):
        if max_bin is None and len(t) > 500:
            continue  # the numpy reference holds every pair
        _, w, z = ref_m6(t, changed, h, max_bin)
        for method in ("pairs", "fast"):
            _, w_c, z_c = quiet_m6(t, changed, h, max_bin, method=method)
            np.testing.assert_array_equal(w_c, w, err_msg=f"{method}, max_bin={max_bin}")
            np.testing.assert_array_equal(z_c, z, err_msg=f"{method}, max_bin={max_bin}")


def test_m6_runs_without_change_and_all_changed(level):
    t = np.cumsum(np.random.default_rng(3).exponential(0.1, 200))
    for flags in (np.zeros(199, dtype=np.uint8), np.ones(199, dtype=np.uint8)):
        _, w, z = ref_m6(t, flags, 0.05, 60)
        for method in ("pairs", "fast"):
            _, w_c, z_c = quiet_m6(t, flags, 0.05, 60, method=method)
            np.testing.assert_array_equal(w_c, w)
            np.testing.assert_array_equal(z_c, z)


def test_times_scan_and_lattice_step(level):
    n = 2 * 2048 + 13
    times = np.cumsum(np.random.default_rng(4).exponential(1.0, n))
    assert _blind.first_not_increasing(times) == -1
    for i, bad in ((0, np.nan), (1, -1.0), (7, np.inf), (8, None), (2048, np.nan), (2049, None), (n - 1, np.inf)):
        broken = times.copy()
        broken[i] = broken[i - 1] if bad is None else bad
        assert _blind.first_not_increasing(broken) == i
    assert _blind.first_not_increasing(np.array([-np.inf, 0.0])) == 0
    assert _blind.first_not_increasing(np.array([0.0, 1.0, 1.0 + 2e-16, 1.0])) == 3
    assert _blind.lattice_step(times, 1e-9) == 0.0
    steps = np.random.default_rng(5).integers(1, 4, n - 1) * 0.5
    steps[[5, 3000]] = 0.5  # the shortest interval in a vector and in the tail
    lattice = np.concatenate(([0.0], np.cumsum(steps)))
    assert _blind.lattice_step(lattice, 1e-9) == 0.5
    lattice[-1] += 0.1
    assert _blind.lattice_step(lattice, 1e-9) == 0.0
