"""freshcore.special.residual_exp = R^i(x) = P(Poisson(x) > i) against mpmath (tails, x ~ i) and scipy."""

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given
from hypothesis import strategies as st

from freshcore.special import residual_exp

mp.mp.dps = 40
# Below this the reference is subnormal or underflows in double precision: nothing to compare.
TINY = 1e-290


def ref(i, x):
    return float(mp.gammainc(int(i) + 1, 0, mp.mpf(float(x)), regularized=True))


def max_rel_err(orders, x_of_i, f):
    worst = 0.0
    for i in orders:
        xs = x_of_i(i)
        got = f(i, xs)
        for x, g in zip(xs, got):
            r = ref(i, x)
            if r < TINY:
                continue
            worst = max(worst, abs(g - r) / r)
    return worst


def log_grid(i):
    xs = np.concatenate([np.logspace(-300, 4, 40), [i + 1.0 - 1e-9, i + 1.0, i + 1.0 + 1e-9]])
    return xs[xs <= 1e4]


def near_i(i):
    return np.maximum(i * (1.0 + np.linspace(-0.1, 0.1, 15)) + np.linspace(-2, 2, 15), 1e-3)


ours = lambda i, xs: residual_exp(i, xs)  # noqa: E731


@pytest.mark.parametrize("grid", [log_grid, near_i], ids=["log", "near_i"])
def test_small_orders_1e13(grid):
    assert max_rel_err(range(0, 31), grid, ours) <= 1e-13


@pytest.mark.parametrize("grid", [log_grid, near_i], ids=["log", "near_i"])
def test_large_orders_2e12(grid):
    assert max_rel_err([31, 47, 100, 250, 512, 999, 1000], grid, ours) <= 2e-12


def test_not_worse_than_scipy_near_x_equal_i():
    orders = [5, 17, 30, 100, 400, 1000]
    theirs = max_rel_err(orders, near_i, lambda i, xs: sc.gammainc(i + 1, xs))
    mine = max_rel_err(orders, near_i, ours)
    assert mine <= max(theirs, 1e-14)


def test_small_x_where_the_literal_formula_fails():
    # SPEC section 3: the literal 1 - e^{-x} sum x^j/j! has relative error 1.2 at i = 1, x = 1e-8
    for i, x in [(1, 1e-8), (2, 1e-8), (3, 1e-30), (0, 1e-300), (10, 1e-20)]:
        r = ref(i, x)
        assert abs(residual_exp(i, x) - r) <= 1e-14 * r
    literal = 1.0 - np.exp(-1e-8) * (1.0 + 1e-8)
    assert abs(literal - ref(1, 1e-8)) > 0.1 * ref(1, 1e-8)  # the failure we avoid


def test_ends_of_the_domain():
    assert residual_exp(0, 0.0) == 0.0
    assert residual_exp(7, 0.0) == 0.0
    assert residual_exp(0, np.inf) == 1.0
    assert residual_exp(1000, np.inf) == 1.0
    assert residual_exp(3, 1e4) == 1.0


def test_broadcasting_and_types():
    x = np.array([[0.5], [2.0]])
    i = np.array([0, 1, 2])
    got = residual_exp(i, x)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, sc.gammainc(i + 1, x), rtol=1e-13)
    assert isinstance(residual_exp(2, 1.5), float)
    assert isinstance(residual_exp(np.int64(2), np.float64(1.5)), float)
    assert residual_exp(2.0, 1.5) == residual_exp(2, 1.5)
    ro = np.linspace(0.1, 5, 7)
    ro.flags.writeable = False
    np.testing.assert_allclose(residual_exp(3, ro), sc.gammainc(4, ro), rtol=1e-13)
    assert residual_exp([], []).shape == (0,)


@given(
    st.integers(0, 200),
    st.floats(1e-12, 500.0),
    st.floats(1e-12, 500.0),
)
def test_monotone_in_x_and_i(i, x1, x2):
    lo, hi = min(x1, x2), max(x1, x2)
    assert residual_exp(i, lo) <= residual_exp(i, hi)
    assert residual_exp(i + 1, lo) <= residual_exp(i, lo)


def test_random_points_against_scipy():
    rng = np.random.default_rng(7)
    i = rng.integers(0, 60, 5000)
    x = np.exp(rng.uniform(np.log(1e-5), np.log(300), 5000))
    r = sc.gammainc(i + 1, x)
    keep = r > 1e-280
    np.testing.assert_allclose(residual_exp(i, x)[keep], r[keep], rtol=5e-13)


@pytest.mark.parametrize(
    "i, x, match",
    [
        (-1, 1.0, r"'i' parameter of residual_exp"),
        (1.5, 1.0, r"integer >= 0. Got 1.5"),
        ([0, 2, 2.5], 1.0, r"i\[2\] = 2.5"),
        ([0, -3], 1.0, r"i\[1\]"),
        (1, -0.5, r"'x' parameter of residual_exp"),
        (1, [0.0, np.nan], r"x\[1\]"),
        (1, [1.0, 2.0, -1.0], r"x\[2\]"),
        ([1, 2], [1.0, 2.0, 3.0], r"broadcast"),
        (np.nan, 1.0, r"'i' parameter"),
    ],
)
def test_bad_input(i, x, match):
    with pytest.raises(ValueError, match=match):
        residual_exp(i, x)


def test_bad_types():
    with pytest.raises(TypeError):
        residual_exp("a", 1.0)
    with pytest.raises(TypeError):
        residual_exp(1, "x")


def test_greedy_value_residual1_against_mpmath():
    # The scheduler's Greedy value mu R^1(Delta tau)/Delta uses its own R^1 (direct form for x >= 1, an
    # 18-term Taylor sum below): as accurate as the general residual, including both sides of the switch.
    from freshcore.pages import PageModel
    from freshcore.value import crawl_value

    xs = np.sort(np.concatenate([np.logspace(-150, 4, 400), np.linspace(0.9, 1.1, 201), np.nextafter(1.0, [0.0, 2.0])]))
    got = crawl_value(xs, PageModel(np.ones(xs.size), np.ones(xs.size)), value="greedy")
    with mp.workdps(400):  # 1 - e^{-x}(1 + x) cancels ~2 log10(1/x) digits in the reference itself
        worst = max(abs(g - float(1 - mp.exp(-mp.mpf(x)) * (1 + mp.mpf(x)))) / float(1 - mp.exp(-mp.mpf(x)) * (1 + mp.mpf(x)))
                    for x, g in zip(xs, got))
    assert worst < 1e-15
    assert np.all(np.diff(got) >= 0)  # non-decreasing in x, across the switch too
