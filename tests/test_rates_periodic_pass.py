"""The periodic pass of freshcore._rates: the eight-lane kernel (_rates_periodic.h) and the scalar loop.

Every level the machine runs (0 baseline, 1 AVX2, 2 AVX-512) must give the same bits; the kernel's x
must match mpmath; the pass must agree with the scalar loop over _core's Lambert W (level -1), and
optimal_rates(model="periodic") solved with either must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _rates_reference import BAD_ARRAYS as COMMON_BAD_ARRAYS
from _rates_reference import periodic_rate_allowance

from freshcore import _rates
from freshcore.rates import optimal_rates

TOP = _rates._periodic_levels()[1]
LEVELS = list(range(TOP + 1))  # the vector levels this machine runs (none where there is no kernel)


@pytest.fixture
def level():
    """Restore the level in use after a test that changes it."""
    old = _rates._periodic_levels()[0]
    yield
    _rates._set_periodic_level(old)


def at_level(lev, fn, *args):
    old = _rates._set_periodic_level(lev)
    try:
        return fn(*args)
    finally:
        _rates._set_periodic_level(old)


def x_ref(t):
    """-1 - W-1(-(1 - t^2)/e) in mpmath, 1 - t^2 = (1 - t)(1 + t) exactly."""
    import mpmath as mp

    with mp.workdps(340):
        return np.array([float(-1 - mp.lambertw(-((1 - mp.mpf(float(v))) * (1 + mp.mpf(float(v)))) / mp.e, -1))
                         for v in t])


def test_levels(level):
    cur, top = _rates._periodic_levels()
    assert cur == top  # the widest at import
    assert _rates._set_periodic_level(-3) == top
    assert _rates._periodic_levels()[0] == -1
    _rates._set_periodic_level(99)
    assert _rates._periodic_levels()[0] == top


@pytest.mark.parametrize("lev", [-1, *LEVELS])
def test_pass_x_against_mpmath(lev):
    """x from c -> 0 (the series) through c = 0.005 (the guess and Newton) to c -> 1."""
    c = np.concatenate([np.logspace(-300, -1, 200), 1 - np.logspace(-16, -1, 200), np.linspace(0.001, 0.999, 999),
                        np.linspace(0.004, 0.006, 101)])
    t = np.sqrt(c)
    out = np.empty_like(t)
    at_level(lev, _rates.periodic_pass_x, t, out)
    ref = x_ref(t)
    np.testing.assert_allclose(out, ref, rtol=2e-15 if lev >= 0 else 1e-13, atol=0)
    zero = np.full(3, np.nan)
    at_level(lev, _rates.periodic_pass_x, np.array([0.0, 0.0, 1e-300]), zero)
    assert zero.tolist() == [0.0, 0.0, pytest.approx(math.sqrt(2) * 1e-300, rel=1e-15)]


def instance(rng, n, kind):
    if kind == "uniform":
        d, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    elif kind == "wide":  # twelve decades each
        d, mu = 10 ** rng.uniform(-6, 6, n), 10 ** rng.uniform(-6, 6, n)
    else:  # "extreme": change rates and importance far apart, near the ends of the range the pass accepts
        d, mu = 10 ** rng.uniform(-150, 150, n), 10 ** rng.uniform(-150, 150, n)
    return np.sqrt(d / mu), d


@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 32, 33, 100, 1001])
@pytest.mark.parametrize("kind", ["uniform", "wide", "extreme"])
@pytest.mark.parametrize("bounds", [False, True])
def test_pass_same_bits_at_every_level_and_close_to_scalar(n, kind, bounds):
    rng = np.random.default_rng(n + 7 * len(kind) + bounds)
    b, d = instance(rng, n, kind)
    if bounds:
        lo = np.where(rng.uniform(size=n) < 0.3, d * rng.uniform(0, 0.05, n), 0.0)
        hi = np.where(rng.uniform(size=n) < 0.3, lo + d * rng.uniform(0, 0.3, n), np.inf)
    else:
        lo, hi = np.zeros(n), np.full(n, np.inf)
    for u in np.quantile(b, [0.05, 0.3, 0.5, 0.9, 1.0]) * np.array([1.0, 1 + 1e-15, 1.001, 1.5, 2.0]):
        got = []
        for lev in LEVELS:
            out = np.full(n, np.nan)
            S, D = at_level(lev, _rates.periodic_eval, b, d, lo, hi, float(u), out)
            got.append((S, D, out))
        for S, D, out in got[1:]:
            np.testing.assert_array_equal([S, D], got[0][:2])
            np.testing.assert_array_equal(out, got[0][2])
        out_s = np.full(n, np.nan)
        S_s, D_s = at_level(-1, _rates.periodic_eval, b, d, lo, hi, float(u), out_s)
        if not LEVELS:
            continue
        S, D, out = got[0]
        assert np.all((out >= lo) & (out <= hi))
        # where c = (b/u)^2 underflows (outside what the solvers pass: u <= 2^500 min b) the scalar loop
        # takes x = 0 (rate hi), the kernel x = sqrt(2) b/u
        with np.errstate(over="ignore"):
            normal = (b / u) ** 2 >= 2.0**-1000
        np.testing.assert_allclose(out[normal], out_s[normal], rtol=5e-14, atol=0)
        if normal.all():
            assert S == pytest.approx(S_s, rel=1e-14, abs=0)
            assert D == pytest.approx(D_s, rel=1e-13, abs=0, nan_ok=True)
        # the rates not written are the same pass (S and D do not depend on writing them)
        np.testing.assert_array_equal(at_level(LEVELS[-1], _rates.periodic_eval, b, d, lo, hi, float(u)), [S, D])


def assert_same_optimum(new, old, d, mu, B):
    """Two solutions of one periodic problem: objective to 1e-14, multiplier to 1e-11, and each rate to
    1e-12 relative plus what the difference of the two multipliers moves it (u dr/du = r a grows like
    1/(1 - c) right past a page's threshold, and the two searches stop at multipliers some ulps apart: 8.6e-15
    relative with the scalar pass, whose page 965 of seed 6 then moves by 3.2e-12), but for pages time-shared
    across a jump (threshold between the two multipliers)."""
    r1, r0 = new.crawl_rate, old.crawl_rate
    assert math.fsum(r1) <= B * (1 + 1e-13)
    assert new.objective == pytest.approx(old.objective, rel=1e-14)
    assert new.multiplier == pytest.approx(old.multiplier, rel=1e-11)
    ya, shared, moved = periodic_rate_allowance(d, mu, old, new)
    bad = (np.abs(r1 - r0) > 1e-12 * r0 + moved * ya + 1e-300) & ~shared
    assert not bad.any(), (np.flatnonzero(bad)[:5], r1[bad][:5], r0[bad][:5])


def previous_solver(fn):
    """Run fn with the solver before issue 16's work: the scalar pass and the classic steps."""
    orig = _rates.periodic_search

    def classic(*args, **kw):
        return orig(*args, **{**kw, "model": False})

    old = _rates._set_periodic_level(-1)
    _rates.periodic_search = classic
    try:
        return fn()
    finally:
        _rates.periodic_search = orig
        _rates._set_periodic_level(old)


@pytest.mark.parametrize("seed", range(16))
def test_optimal_rates_same_as_previous_solver(seed):
    """The whole solve (vector pass, compiled search with model steps) against the scalar pass with the
    classic steps, on random instances from uniform to extreme rates, with and without bounds."""
    rng = np.random.default_rng(100 + seed)
    n = [3, 50, 1000, 20000][seed % 4]
    kind = ["uniform", "wide", "extreme"][seed % 3]
    _, d = instance(rng, n, kind)
    mu = 10 ** rng.uniform(-3, 3, n) if kind == "uniform" else 10 ** rng.uniform(-6, 6, n)
    d[rng.uniform(size=n) < 0.05] = 0.0  # some pages that never change
    B = float(10 ** rng.uniform(-2, 2) * max(1.0, n**0.5) * np.median(d))
    kw = {}
    if seed % 2:
        kw = dict(min_rate=np.where(rng.uniform(size=n) < 0.2, B / n * 0.01, 0.0),
                  max_rate=np.where(rng.uniform(size=n) < 0.2, B / n * 3, np.inf))
    new = optimal_rates(d, mu, B, "periodic", return_details=True, **kw)
    old = previous_solver(lambda: optimal_rates(d, mu, B, "periodic", return_details=True, **kw))
    assert_same_optimum(new, old, d, mu, B)
    if kw:
        assert np.all((new.crawl_rate >= kw["min_rate"]) & (new.crawl_rate <= kw["max_rate"]))


# ---------------------------------------------------------------- the compiled search


def _log(x):
    return math.log(x) if x > 0.0 else -math.inf if x == 0.0 else math.nan


def py_time_share(r_a, r_b, S_a, S_b, budget, out):
    """The Python time-sharing the compiled search replaced (reference)."""
    theta = min(max((budget - S_a) / (S_b - S_a), 0.0), 1.0)
    for kk in range(9):
        if kk == 8:
            theta = 0.0
        total = _rates.mix(r_a, r_b, theta, out)
        if total <= budget:
            break
        theta = max(0.0, theta - (total - budget + (2.0**kk) * 2.3e-16 * budget) / (S_b - S_a))
    return theta


def py_periodic_search(b, dl, lo, hi, budget, slack, u, out, gap=1e-14, slope=None):
    """The Python search of freshcore.rates that ``_rates.periodic_search`` replaced (reference)."""
    b_min = float(b.min())
    u_max = min(b_min * 2.0**500, 2.0**500)
    if not 0.0 < u < math.inf or not 2.0**-500 <= b_min < math.inf:
        return None
    pass_ = _rates.PeriodicPass(b, dl, lo, hi)
    n = len(b)
    accept = budget * (1.0 - gap)
    target = budget * (1.0 - 0.5 * gap)
    u_a, S_a = 0.0, _rates.csum(lo)
    u_b, S_b = math.inf, math.inf
    u_p, S_p = 0.0, 0.0
    r_a, r_b, r_w = lo.copy(), np.empty(n), np.empty(n)
    steps = [0.0, 0.0, 0.0, 0.0]
    wide = 8.0 / n
    nh = 0
    if u <= b_min:
        while u <= b_min:
            u_a = u
            u = 2.0 * u
        u_p, S_p = u_a, S_a
    for _ in range(300):
        if not 2.0**-500 <= u <= u_max:
            return None
        S, D = pass_(u, r_w)
        if S <= budget:
            u_a, S_a = u, S
            r_a, r_w = r_w, r_a
            if S >= accept:
                out[:] = r_a
                return u_a, u_a
        else:
            u_b, S_b = u, S
            r_b, r_w = r_w, r_b
        if u_a > 0.0 and u_b < math.inf and (
                (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget
                or u_b - u_a <= 4.5e-16 * u_b):
            break
        k = u * D / S if (D > 0.0 and S > 0.0) else -1.0
        k_wide = -1.0
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
            k_wide = _log(S / S_p) / _log(u / u_p)
            if k_wide > 0.0 and abs(u - u_p) > wide * u and slope is not None:
                slope[0] = k_wide
        elif u_p == 0.0 and slope is not None and 0.0 < slope[0] < math.inf:
            k_wide = slope[0]
        if k_wide > 0.0 and (k <= 0.0 or abs(_log(target / S)) > wide * k_wide):
            k = k_wide
        u_n = u * math.exp(min(max(_log(target / S) / k, -30.0), 30.0)) if k > 0.0 else -1.0
        steps[nh % 4] = abs(u - u_p) if u_p > 0.0 else math.inf
        u_p, S_p = u, S
        nh += 1
        if (not (u_a < u_n < u_b) or (nh >= 4 and steps[(nh - 1) % 4] > 0.5 * steps[(nh - 4) % 4])
                or abs(u_n - u) <= 9e-16 * u):
            u_n = 2.0 * max(u, u_a) if u_b == math.inf else 0.5 * (u_a + u_b)
            nh = 0
        u = u_n
    else:
        return None
    theta = py_time_share(r_a, r_b, S_a, S_b, budget, out)
    if not _rates.csum(out) >= budget - slack:
        return None
    return (u_a, u_a) if theta == 0.0 else (u_a, u_b)


def search_cases():
    rng = np.random.default_rng(2024)
    for case in range(60):
        n = [1, 2, 5, 40, 333, 5000][case % 6]
        kind = ["uniform", "wide", "extreme"][case % 3]
        b, d = instance(rng, n, kind)
        bounds = case % 4 == 1
        lo = np.where(rng.uniform(size=n) < 0.3, d * rng.uniform(0, 0.01, n), 0.0) if bounds else np.zeros(n)
        hi = (np.where(rng.uniform(size=n) < 0.3, lo + d * rng.uniform(0, 0.3, n), np.inf) if bounds
              else np.full(n, np.inf))
        total_hi = math.inf if np.isinf(hi).any() else float(hi.sum())
        B = float(min(10 ** rng.uniform(-3, 1) * d.sum(), 0.5 * total_hi))
        if not lo.sum() < B * (1 - 1e-14):
            continue
        u0 = [B / max(np.sum(np.sqrt(0.5 * d * d / b**2)), 1e-300), float(np.median(b)) * 0.3,
              float(b.min()) * 0.5, float(np.quantile(b, 0.7))][case % 4]
        gap = 1e-4 if case % 5 == 0 else 1e-14
        slope = [math.nan, 2.5, 0.5][case % 3]
        yield case, b, d, lo, hi, B, u0, gap, slope


@pytest.mark.parametrize("lev", [-1, *LEVELS[-1:]])
def test_compiled_search_same_bits_as_python(lev, level):
    """The compiled search (``_rates.periodic_search``) is the Python search it replaced, bit for bit:
    the same iterates, the same hand-overs, the same time-shared rates and slope."""
    _rates._set_periodic_level(lev)
    seen = {"found": 0, "none": 0, "shared": 0}
    for case, b, d, lo, hi, B, u0, gap, slope in search_cases():
        n = len(b)
        slack = 1e-13 * B
        out_py, out_c = np.full(n, np.nan), np.full(n, np.nan)
        sl_py = [slope]
        ref = py_periodic_search(b, d, lo, hi, B, slack, u0, out_py, gap, sl_py)
        found, u_a, u_b, sl_c, _ = _rates.periodic_search(b, d, lo, hi, 0.0, math.inf, B, slack, u0, gap, slope, out_c,
                                                          model=False)
        assert found == (ref is not None), case
        np.testing.assert_array_equal(sl_c, sl_py[0])
        if ref is None:
            seen["none"] += 1
            continue
        seen["found"] += 1
        seen["shared"] += u_a != u_b
        assert (u_a, u_b) == ref, case
        np.testing.assert_array_equal(out_c, out_py)
        if not lo.any() and np.isinf(hi).all():  # lo/hi None: the same numbers, the same bits
            out_n = np.full(n, np.nan)
            assert _rates.periodic_search(b, d, None, None, 0.0, math.inf, B, slack, u0, gap, slope,
                                          out_n, model=False)[:3] == (True, u_a, u_b)
            np.testing.assert_array_equal(out_n, out_c)
    assert seen["found"] > 20 and seen["shared"] > 0 and seen["none"] > 0, seen


# ---------------------------------------------------------------- the defaults' fast path


def test_fast_path_and_checked_path_give_the_same_bits(tmp_path):
    """Float64 arrays with the default bounds take one compiled check; lists, memory maps and explicit
    bounds of 0 and inf go through the checks and must give the same bits (pages that do not matter
    included)."""
    rng = np.random.default_rng(5)
    n = 5000
    d, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    for zeros in (False, True):
        if zeros:
            d[::17] = 0.0
            mu[::13] = 0.0
        fast = optimal_rates(d, mu, 300.0, "periodic")
        np.testing.assert_array_equal(optimal_rates(list(d), list(mu), 300, "periodic"), fast)
        np.testing.assert_array_equal(
            optimal_rates(d, mu, 300.0, "periodic", min_rate=np.zeros(n), max_rate=np.full(n, np.inf)), fast)
        np.testing.assert_array_equal(optimal_rates(d, mu, 300.0, "periodic", 0, math.inf), fast)
        path = tmp_path / "d.npy"
        np.save(path, d)
        np.testing.assert_array_equal(optimal_rates(np.load(path, mmap_mode="r"), mu, 300.0, "periodic"), fast)
        res = optimal_rates(d, mu, 300.0, "periodic", return_details=True)
        ref = optimal_rates(list(d), list(mu), 300.0, "periodic", return_details=True)
        np.testing.assert_array_equal(res.crawl_rate, fast)
        assert (res.multiplier, res.objective, res.n_crawled) == (ref.multiplier, ref.objective, ref.n_crawled)
        assert np.all(fast[(d == 0) | (mu == 0)] == 0.0)
        assert math.fsum(fast) <= 300.0 * (1 + 1e-14)
    # a minimum of -0.0 is not the default's +0.0 (the general search solves): the pages not crawled keep it
    r = optimal_rates(d, mu, 300.0, "periodic", min_rate=-0.0)
    assert float(np.sum(mu * fresh(r, d))) == pytest.approx(float(np.sum(mu * fresh(fast, d))), rel=1e-14)
    assert np.signbit(r[r == 0]).all() and np.array_equal(r == 0, fast == 0)


BAD_ARRAYS = [*COMMON_BAD_ARRAYS, (dict(bandwidth=-1.0), r"'bandwidth'")]


@pytest.mark.parametrize("kwargs,match", BAD_ARRAYS)
def test_fast_path_raises_the_checks_errors(kwargs, match):
    args = dict(change_rate=np.array([0.1, 0.2, 0.3]), importance=np.array([1.0, 1.0, 1.0]), bandwidth=1.0,
                model="periodic")
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        optimal_rates(**args)


def test_check_pages():
    assert _rates.check_pages(np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, 0.0, 2.0, 4.0])) == (0, 2)
    assert _rates.check_pages(np.array([np.nan, 1.0, -0.0]), np.array([1.0, np.inf, 1.0])) == (2, 1)
    assert _rates.check_pages(np.array([-1e-300]), np.array([1.0])) == (1, 0)


def test_fast_path_no_page_matters():
    """Every change rate or importance 0: the general path's answer (all at the minimum, 0)."""
    res = optimal_rates(np.array([0.0, 1.0]), np.array([1.0, 0.0]), 1.0, "periodic", return_details=True)
    assert res.crawl_rate.tolist() == [0.0, 0.0] and res.n_crawled == 0


# ---------------------------------------------------------------- the model steps


@pytest.mark.parametrize("lev", [-1, *LEVELS])
@pytest.mark.parametrize("kind", ["uniform", "wide"])
def test_pass_far_sums(lev, kind):
    """dS/dy and d^2 S/dy^2 (y = log u) over the pages at least wnear u past their threshold: numpy's
    sums of the closed forms at the pass's rates, and central differences of S over those pages."""
    rng = np.random.default_rng(11)
    n = 3001
    b, d = instance(rng, n, kind)
    u = float(np.median(b))
    out = np.empty(n)
    for wnear in (0.0, 2.0**-12, 0.05):
        S, D, Df, Dff = at_level(lev, _rates.periodic_sums, b, d, None, None, u, wnear, out)
        assert S == at_level(lev, _rates.periodic_eval, b, d, np.zeros(n), np.full(n, np.inf), u)[0]
        far = (u - b >= wnear * u) & (out > 0)
        x = d[far] / out[far]
        c = (b[far] / u) ** 2
        om = (u - b[far]) / u * ((u + b[far]) / u)
        a = 2 * c * (1 + x) / (x * x * om)
        assert Df == pytest.approx(np.sum(out[far] * a), rel=1e-12)
        assert Dff == pytest.approx(np.sum(out[far] * a * (a * (3 - x) - 2)), rel=1e-10, abs=1e-10 * abs(Df))
        if wnear == 0.0:
            assert D * u == pytest.approx(Df, rel=1e-14)
        if wnear == 0.05:  # no page within 1e-4 of u crosses its threshold: differences of the far total
            h = 1e-4
            tot = [np.sum(at_level(lev, _rates.periodic_sums, b[far], d[far], None, None, u * math.exp(s * h),
                                   0.0)[0]) for s in (-1, 0, 1)]
            assert Df == pytest.approx((tot[2] - tot[0]) / (2 * h), rel=1e-7)
            assert Dff == pytest.approx((tot[2] - 2 * tot[1] + tot[0]) / h**2, rel=1e-4)


def kkt_check(d, mu, r, L, B):
    assert math.fsum(r) <= B * (1 + 1e-13)
    assert math.fsum(r) == pytest.approx(B, rel=1e-13)
    x = np.divide(d, r, out=np.full(len(d), np.inf), where=r > 0)
    ok = (x > 0.1) & (x < 30)  # (where numpy's R^1(x) = 1 - e^-x (1 + x) is accurate)
    g = (mu[ok] / d[ok]) * (-np.expm1(-x[ok]) - x[ok] * np.exp(-x[ok]))
    np.testing.assert_allclose(g, L, rtol=1e-10)
    assert np.all(mu[r == 0] / d[r == 0] <= L * (1 + 1e-9))


@pytest.mark.parametrize("seed", range(16))
def test_model_steps_same_answer_fewer_passes(seed):
    """The search with the model steps against the classic steps from the same start: the same optimum
    (objective to 1e-14, rates to 1e-12 but for pages time-shared across a jump, KKT), in fewer passes."""
    rng = np.random.default_rng(300 + seed)
    n = [40, 1000, 10000, 100000][seed % 4]
    kind = ["uniform", "wide", "narrow", "extreme"][(seed // 4) % 4]
    if kind == "narrow":  # every threshold close to the root: the steps cross many entries
        d, mu = rng.uniform(0.9, 1.1, n), rng.uniform(0.9, 1.1, n)
    elif kind == "extreme":
        d, mu = 10 ** rng.uniform(-100, 100, n), 10 ** rng.uniform(-100, 100, n)
    else:
        b, d = instance(rng, n, kind)
        mu = d / b**2
    B = float(n / 10 * np.median(d))
    b = np.sqrt(d / mu)
    passes = {}
    res = {}
    for model in (True, False):
        u0 = B / float(np.sum(np.sqrt(0.5 * mu * d)))
        out = np.empty(n)
        found, u_a, u_b, _, p = _rates.periodic_search(b, d, None, None, 0.0, math.inf, B, 1e-13 * B, u0 * 0.97,
                                                       1e-14, math.nan, out, model=model)
        if not found:
            pytest.skip("the careful solver's case")
        passes[model] = p
        res[model] = out, u_a, u_b
    r1, r0 = res[True][0], res[False][0]
    f1, f0 = (float(np.sum(mu * fresh(r, d))) for r in (r1, r0))
    assert f1 == pytest.approx(f0, rel=1e-14)
    shared = np.zeros(n, bool)
    for _, u_a, u_b in res.values():  # pages whose threshold lies in a time-shared bracket
        shared |= (b >= u_a * (1 - 1e-12)) & (b <= u_b * (1 + 1e-12))
    # 1e-12 relative, plus what the two multipliers' last bits move a page's rate: u dr/du = r a, which
    # grows like 1/(1 - c) right past the threshold (the budget fixes u to ~1e-16, not better)
    x = np.divide(d, r0, out=np.full(n, np.inf), where=r0 > 0)
    u = res[False][1]
    c, om = (b / u) ** 2, (u - b) / u * ((u + b) / u)
    with np.errstate(all="ignore"):
        ya = np.where(r0 > 0, r0 * 2 * c * (1 + x) / (x * x * om), 0.0)
    assert np.all(np.abs(r1 - r0)[~shared] <= (1e-12 * r0 + 1e-15 * ya)[~shared])
    kkt_check(d, mu, r1, 1.0 / (res[True][1] * res[True][2]), B)
    assert passes[True] <= passes[False] + 1, passes


def fresh(r, d):
    x = np.divide(d, r, out=np.full(len(d), np.inf), where=r > 0)
    return np.where(np.isinf(x), 0.0, -np.expm1(-x) / np.where(np.isinf(x), 1.0, x))


def test_model_steps_pass_counts():
    """From the start a subsample gives (within ~0.3%), three full passes on 10^4 uniform pages (the
    classic steps: six)."""
    rng = np.random.default_rng(0)
    n = 10000
    d, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    b = np.sqrt(d / mu)
    B = n / 10
    u_star = optimal_rates(d, mu, B, "periodic", return_details=True).multiplier ** -0.5
    for pert in (1e-3, -1e-3, 3e-3):
        p = [_rates.periodic_search(b, d, None, None, 0.0, math.inf, B, 1e-13 * B, u_star * (1 + pert), 1e-14,
                                    math.nan, np.empty(n), model=model)[4] for model in (True, False)]
        assert p[0] <= 3 < p[1], (pert, p)
