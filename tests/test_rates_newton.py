"""freshcore.rates: the sort-free Poisson Newton (no maximum rates) and the periodic subsample start.

The Newton path (``_rates.poisson_solve``) must agree with the sorted search it replaces
(``_rates_poisson._solve_poisson``, still the path with finite maximum rates) and with a plain numpy
bisection; the arrays it checks in its first pass must raise the same errors as the checks.
"""

import math

import numpy as np
import pytest
from _rates_reference import BAD_ARRAYS as COMMON_BAD_ARRAYS
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore import _rates, _rates_common, _rates_periodic, _rates_poisson, rates
from freshcore.rates import optimal_rates

ROUND = 1e-12


def sorted_path(d, w, B, lo, hi):
    """The sorted search on the active pages (_rates_poisson._solve_poisson), pages put back like optimal_rates."""
    act = (w > 0) & (d > 0)
    out = lo.copy()
    budget = B - (lo.sum() - lo[act].sum())
    sub, mult = _rates_poisson._solve_poisson(w[act], d[act], lo[act], hi[act], budget, _rates_common._BUDGET_TOL * B)
    out[act] = sub
    return out, mult


def ref_atol(d, B):
    """Absolute tolerance against ``bisection``: the budget's 1e-11 and the cancellation in s u - d."""
    return 1e-11 * B + 1e-15 * float(np.max(d))


def bisection(d, w, B, lo, hi):
    """numpy bisection on u = L^-1/2: r = clip(sqrt(w d) u - d, lo, hi).

    Its rates are accurate to ~1e-16 max(d) only (s u - d cancels where a change rate dwarfs the
    budget): compare with ``ref_atol``.
    """
    s = np.sqrt(w * d)
    a, b = 0.0, 1.0
    while np.clip(s * b - d, lo, hi).sum() <= B:
        if b > 1e250:  # the budget covers every maximum: those pages at it, the others at their minimum
            return np.clip(s * b - d, lo, hi)
        b *= 2.0
    for _ in range(200):
        u = 0.5 * (a + b)
        if np.clip(s * u - d, lo, hi).sum() <= B:
            a = u
        else:
            b = u
    return np.clip(s * a - d, lo, hi)


@st.composite
def unbounded(draw, max_n=300):
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = 10.0 ** draw(st.integers(-3, 3))
    spread = draw(st.sampled_from([0.0, 2.0, 6.0]))  # decades of change rate and importance
    d = scale * rng.uniform(0.01, 2.0, n) * 10.0 ** rng.uniform(-spread, spread, n)
    w = rng.uniform(0.01, 2.0, n) * 10.0 ** rng.uniform(-spread, spread, n)
    d[rng.random(n) < 0.1] = 0.0
    w[rng.random(n) < 0.1] = 0.0
    kind = draw(st.sampled_from(["zero", "scalar", "array"]))
    lo = {"zero": np.zeros(n), "scalar": np.full(n, 0.05 * scale), "array": rng.uniform(0, 0.1, n) * scale}[kind]
    B = float(lo.sum()) + draw(st.floats(1e-3, 1e3)) * scale
    return d, w, B, lo


@settings(max_examples=200, deadline=None)
@given(unbounded())
def test_newton_agrees_with_the_sorted_search(inst):
    d, w, B, lo = inst
    hi = np.full(len(d), np.inf)
    res = optimal_rates(d, w, B, "poisson", lo, return_details=True)
    r = res.crawl_rate
    assert np.all(r >= lo) and math.fsum(r) <= B * (1 + ROUND)
    if ((w > 0) & (d > 0)).any():
        assert math.fsum(r) == pytest.approx(B, rel=1e-12)
    ref, mult = sorted_path(d, w, B, lo, hi)
    np.testing.assert_allclose(r, ref, rtol=1e-9, atol=1e-11 * B)
    assert res.multiplier == pytest.approx(mult, rel=1e-9)
    np.testing.assert_allclose(r, bisection(d, w, B, lo, hi), rtol=1e-9, atol=ref_atol(d, B))


@settings(max_examples=100, deadline=None)
@given(unbounded(max_n=100), st.floats(0.05, 3.0))
def test_finite_maxima_keep_the_sorted_search(inst, width):
    d, w, B, lo = inst
    hi = lo + width * np.mean(d + 1e-3)
    hi[::3] = np.inf  # some pages without a maximum: the Newton path must not be taken
    r = optimal_rates(d, w, B, "poisson", lo, hi)
    assert np.all(r >= lo) and np.all(r <= hi) and math.fsum(r) <= B * (1 + ROUND)
    np.testing.assert_allclose(r, bisection(d, w, B, lo, hi), rtol=1e-9, atol=ref_atol(d, B))


def test_fast_path_and_checked_path_give_the_same_bits(tmp_path):
    rng = np.random.default_rng(3)
    n = 5000
    d, w = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    d[::17] = 0.0
    w[::13] = 0.0
    fast = optimal_rates(d, w, 300.0)  # float64 arrays and the defaults: one compiled call
    np.testing.assert_array_equal(optimal_rates(list(d), list(w), 300), fast)
    np.testing.assert_array_equal(optimal_rates(d, w, 300.0, min_rate=np.zeros(n), max_rate=np.full(n, np.inf)), fast)
    np.testing.assert_array_equal(optimal_rates(d.astype(np.float32).astype(float), w, 300.0), optimal_rates(
        np.asarray(d.astype(np.float32), dtype=float), w, 300.0))
    path = tmp_path / "d.npy"
    np.save(path, d)
    np.testing.assert_array_equal(optimal_rates(np.load(path, mmap_mode="r"), w, 300.0), fast)
    # a scalar minimum and the same minimum as an array
    np.testing.assert_array_equal(optimal_rates(d, w, 300.0, min_rate=0.01),
                                  optimal_rates(d, w, 300.0, min_rate=np.full(n, 0.01)))
    res = optimal_rates(d, w, 300.0, return_details=True)
    np.testing.assert_array_equal(res.crawl_rate, fast)
    _, mult = sorted_path(d, w, 300.0, np.zeros(n), np.full(n, np.inf))
    assert res.multiplier == pytest.approx(mult, rel=1e-12)


BAD_ARRAYS = [
    *COMMON_BAD_ARRAYS,
    (dict(min_rate=-0.1), r"'min_rate'"),
    (dict(min_rate=1.0), r"'bandwidth'.*sum of min_rate"),
]


@pytest.mark.parametrize("kwargs,match", BAD_ARRAYS)
def test_fast_path_raises_the_checks_errors(kwargs, match):
    args = dict(change_rate=np.array([0.1, 0.2, 0.3]), importance=np.array([1.0, 1.0, 1.0]), bandwidth=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        optimal_rates(**args)


def test_poisson_solve_statuses():
    d, w = np.array([0.5, 1.0, 2.0]), np.array([1.0, 2.0, 1.0])
    s, out = np.empty(3), np.empty(3)
    status, _, total = _rates.poisson_solve(d, w, None, 0.0, 3.0, 1e-13 * 3, 60, s, out)
    assert status == 0 and total <= 3.0
    np.testing.assert_allclose(out, bisection(d, w, 3.0, np.zeros(3), np.full(3, np.inf)), rtol=1e-12)
    np.testing.assert_allclose(s, np.sqrt(w * d), rtol=1e-15)
    assert _rates.poisson_solve(np.array([0.5, np.nan, 2.0]), w, None, 0.0, 3.0, 0.0, 60, s, out)[0] == 1
    # an overflowing product goes through the checks (no error) and on to the general path
    assert _rates.poisson_solve(np.array([1e200, 1.0, 1.0]), np.array([1e200, 1.0, 1.0]), None, 0.0, 3.0, 0.0, 60,
                                s, out)[0] == 1
    # a product that underflows, no page with s > 0, minima that take the budget: hand over
    assert _rates.poisson_solve(np.array([1e-200, 1.0, 1.0]), np.array([1e-200, 1.0, 1.0]), None, 0.0, 3.0, 0.0,
                                60, s, out)[0] == 2
    assert _rates.poisson_solve(np.zeros(3), w, None, 0.0, 3.0, 0.0, 60, s, out)[0] == 2
    assert _rates.poisson_solve(d, w, None, 1.0, 3.0, 0.0, 60, s, out)[0] == 2
    assert _rates.poisson_solve(d, w, np.array([1.0, 1.0, 1.0]), 0.0, 3.0, 0.0, 60, s, out)[0] == 2
    # too few passes: hand over
    rng = np.random.default_rng(0)
    n = 20000
    dd, ww = 10 ** rng.uniform(-6, 6, n), 10 ** rng.uniform(-6, 6, n)
    s, out = np.empty(n), np.empty(n)
    assert _rates.poisson_solve(dd, ww, None, 0.0, 100.0, 1e-11, 1, s, out)[0] == 2
    assert _rates.poisson_solve(dd, ww, None, 0.0, 100.0, 1e-11, 60, s, out)[0] == 0


@pytest.mark.parametrize("lo", [None, 0.0, 0.3, "array"])
def test_newton_pass_against_numpy(lo):
    rng = np.random.default_rng(5)
    n = 1001  # odd: the tail of the four-way blocks
    s, d = rng.uniform(0, 2, n), rng.uniform(0, 1, n)
    s[::7] = 0.0
    lo_arr = rng.uniform(0, 0.2, n) if lo == "array" else np.full(n, 0.0 if lo is None else lo)
    for u in (0.0, 0.3, 1.0, 5.0, 1e3):
        out = np.empty(n)
        if lo == "array":
            S, slope, cnt = _rates.newton_pass(s, d, lo_arr, 0.0, u, out)
        else:
            S, slope, cnt = _rates.newton_pass(s, d, None, 0.0 if lo is None else lo, u, out)
        v = s * u - d
        up = v > lo_arr
        np.testing.assert_array_equal(out, np.where(up, v, lo_arr))
        assert S == pytest.approx(math.fsum(np.where(up, v, lo_arr)), rel=1e-14, abs=1e-300)
        assert slope == pytest.approx(math.fsum(s[up]), rel=1e-14, abs=1e-300)
        assert cnt == up.sum()
        assert _rates.newton_pass(s, d, lo_arr if lo == "array" else None, 0.0 if lo in (None, "array") else lo,
                                  u)[2] == cnt


def test_too_few_newton_passes_fall_back_to_the_sorted_search(monkeypatch):
    rng = np.random.default_rng(9)
    n = 3000
    d, w = 10 ** rng.uniform(-4, 4, n), 10 ** rng.uniform(-4, 4, n)
    ref = optimal_rates(d, w, 50.0)
    monkeypatch.setattr(rates, "_NEWTON_PASSES", 1)
    r = optimal_rates(d, w, 50.0)
    np.testing.assert_allclose(r, ref, rtol=1e-9, atol=1e-11 * 50.0)
    assert math.fsum(r) <= 50.0 * (1 + ROUND)


@pytest.mark.parametrize("n", [1, 2, 31, 33, 511, 512, 513, 4096])
def test_sizes_around_the_blocks_and_the_subsample(n):
    rng = np.random.default_rng(n)
    d, w = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    B = 0.1 * n + 0.01
    r = optimal_rates(d, w, B)
    np.testing.assert_allclose(r, bisection(d, w, B, np.zeros(n), np.full(n, np.inf)), rtol=1e-9, atol=1e-11 * B)
    assert math.fsum(r) <= B * (1 + ROUND)
    assert math.fsum(r) == pytest.approx(B, rel=1e-12)


def test_degenerate_pages_and_saturating_budgets():
    d = np.array([0.5, 0.0, 0.7, 0.3, 0.0, 1e-170])
    w = np.array([1.0, 1.0, 0.0, 2.0, 0.0, 1e-170])  # the last product underflows: general path
    for lo in (0.0, 0.1):
        for B in (0.6 + 6 * lo, 6 * lo + 1e-9, 6 * lo + 1e6):
            res = optimal_rates(d, w, B, "poisson", lo, return_details=True)
            r = res.crawl_rate
            np.testing.assert_array_equal(r[[1, 2, 4]], lo)
            assert math.fsum(r) <= B * (1 + ROUND)
            assert math.fsum(r) == pytest.approx(B, rel=1e-12)
    # the budget exactly the sum of the minima (general path): everything at its minimum
    np.testing.assert_array_equal(optimal_rates(d[:4], w[:4], 0.4, "poisson", 0.1), np.full(4, 0.1))
    # no page that gains from crawling: the minima, multiplier 0
    res = optimal_rates(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 2.0, return_details=True)
    np.testing.assert_array_equal(res.crawl_rate, [0.0, 0.0])
    assert res.multiplier == 0.0


def test_periodic_subsample_start_agrees(monkeypatch):
    rng = np.random.default_rng(12)
    for n in (100, 1000, 20000):
        d, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
        lo = np.where(rng.random(n) < 0.2, 0.01, 0.0)
        hi = np.where(rng.random(n) < 0.2, 0.3, np.inf)
        B = 0.1 * n
        res = optimal_rates(d, mu, B, "periodic", lo, hi, return_details=True)
        with monkeypatch.context() as m:
            m.setattr(_rates_periodic, "_SUB_MIN", 10**9)  # no subsample: the small-c start
            ref = optimal_rates(d, mu, B, "periodic", lo, hi, return_details=True)
        assert res.objective == pytest.approx(ref.objective, rel=1e-13)
        assert res.multiplier == pytest.approx(ref.multiplier, rel=1e-9)
        assert math.fsum(res.crawl_rate) <= B * (1 + ROUND)
        assert math.fsum(res.crawl_rate) == pytest.approx(B, rel=1e-13)


def count_periodic_passes(monkeypatch):
    """Patch PeriodicPass to count the pages passed over (in units of full passes, set by the caller)."""
    seen = []
    orig = _rates.PeriodicPass

    class Counted:
        def __init__(self, *a):
            self.p, self.n = orig(*a), len(a[0])

        def __call__(self, u, out=None):
            seen.append(self.n)
            return self.p(u, out)

    monkeypatch.setattr(rates._rates, "PeriodicPass", Counted)
    return seen


@pytest.mark.parametrize("seed", [0, 3, 5])
def test_periodic_budget_next_to_a_big_entry_jump(monkeypatch, seed):
    """Six decades of change rates and request rates: the budget may fall just past the threshold of a
    page whose rate rises like 1/log(u - b_i), or into its entry jump.  The solution still spends the
    budget and is KKT, in few full passes (8-11 before the subsample start of any size, 6-8 now)."""
    n = 20000
    rng = np.random.default_rng(seed)
    d, mu = 10 ** rng.uniform(-3, 3, n), 10 ** rng.uniform(-3, 3, n)
    B = n**0.7
    seen = count_periodic_passes(monkeypatch)
    res = optimal_rates(d, mu, B, "periodic", return_details=True)
    assert sum(seen) / n <= 12
    r, L = res.crawl_rate, res.multiplier
    assert math.fsum(r) <= B * (1 + ROUND)
    assert math.fsum(r) == pytest.approx(B, rel=1e-13)
    x = np.divide(d, r, out=np.full(n, np.inf), where=r > 0)
    ok = x < 30
    g = (mu[ok] / d[ok]) * (-np.expm1(-x[ok]) - x[ok] * np.exp(-x[ok]))
    np.testing.assert_allclose(g, L, rtol=1e-11)
    assert np.all(mu[r == 0] / d[r == 0] <= L * (1 + 1e-9))
