"""optimal_rates and freshness with model="renewal": periodic crawls of pages whose updates form renewal processes,
their update laws given as an AgeTable (tabulated G_U, e.g. estimated) or as exact laws (Exponential, Pareto,
Constant, Uniform) or as change rates (Poisson updates: the periodic model's optimum)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _rates_reference import periodic_rate_allowance
from hypothesis import given, settings
from hypothesis import strategies as st

from freshcore import _blind
from freshcore.blind import (
    AgeTable,
    Constant,
    Exponential,
    Pareto,
    Sampled,
    Uniform,
    m4,
    renewal_freshness,
    renewal_rates,
    simulate_log,
)
from freshcore.rates import RatesResult, freshness, optimal_rates

# ---------------------------------------------------------------------------
# references
# ---------------------------------------------------------------------------


def exact_psi(law, i):
    """psi(I) = ∫_0^I a dG(a) by quadrature of a g(a) (scipy), for the exact laws."""
    from scipy.integrate import quad

    if isinstance(law, Exponential):
        d = law.rate
        return float(-math.expm1(-d * i) - d * i * math.exp(-d * i)) / d
    if isinstance(law, Constant):
        return min(i, law.value) ** 2 / (2 * law.value)
    if isinstance(law, Pareto):  # beta (k (z^(1-k) - 1)/(1 - k) - 1 + z^-k), z = 1 + I/beta, in 40 digits
        import mpmath as mp

        with mp.workdps(40):
            k, b, z = mp.mpf(law.alpha) - 1, mp.mpf(law.beta), 1 + mp.mpf(i) / mp.mpf(law.beta)
            first = mp.log(z) if k == 1 else (z ** (1 - k) - 1) / (1 - k)
            return float(b * (k * first - 1 + z ** (-k)))
    lo, hi, m = law.low, law.high, law.mean
    dens = lambda a: 1 / m if a < lo else max(hi - a, 0.0) / ((hi - lo) * m)  # noqa: E731
    pts = [p for p in (lo, hi) if 0 < p < i]
    return quad(lambda a: a * dens(a), 0.0, i, points=pts or None, limit=200, epsabs=0, epsrel=1e-13)[0]


def exact_mean_age(law):
    if isinstance(law, Pareto):
        k = law.alpha - 1.0
        return law.beta / (k - 1.0) if k > 1.0 else math.inf
    if isinstance(law, Uniform):
        a, b = law.low, law.high
        return (a * a + a * b + b * b) / (3 * (a + b))
    return 1.0 / law.rate if isinstance(law, Exponential) else law.value / 2


def exact_freshness(law, f):
    """f ∫_0^{1/f} (1 - G) by quadrature."""
    from scipy.integrate import quad

    if f == 0:
        return 0.0
    i = 1.0 / f
    pts = [p for p in (getattr(law, "low", None), getattr(law, "high", None), getattr(law, "value", None))
           if p is not None and 0 < p < i]
    return f * quad(lambda a: 1.0 - float(law.age_cdf(a)), 0.0, i, points=pts or None, limit=400,
                    epsabs=0, epsrel=1e-12)[0]


def table_reference(g, x):
    """AgeTable's arrays in numpy: the running maximum of the clipped rows, psi at the points, the tail."""
    g = np.maximum.accumulate(np.clip(g, 0.0, 1.0), axis=1)
    xl = np.concatenate(([0.0], x[:-1]))
    psum = np.cumsum(np.diff(g, axis=1, prepend=0.0) * 0.5 * (x + xl), axis=1)
    m = len(x)
    q = (3 * m) // 4
    tail = 1.0 - g[:, -1]
    sq = 1.0 - (g[:, q - 1] if q else 0.0)
    xq = x[q - 1] if q else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(tail > 0, np.where(sq > tail, np.log(sq / tail) / (x[-1] - xq), 1.0 / x[-1]), 0.0)
        mean = psum[:, -1] + np.where(tail > 0, tail * (x[-1] + 1.0 / hazard), 0.0)
    return g, psum, tail, hazard, mean


def table_psi(x, psum, tail, hazard, mean, i, rows=None):
    """psi of each row (or of the ``rows``) at the intervals i (numpy)."""
    out = np.empty(len(i))
    for j, ii in enumerate(i):
        p = j if rows is None else rows[j]
        if ii == math.inf:
            out[j] = mean[p]
        elif ii >= x[-1]:
            out[j] = mean[p] - (tail[p] * (ii + 1 / hazard[p]) * math.exp(-hazard[p] * (ii - x[-1]))
                                if tail[p] > 0 else 0.0)
        else:
            k = int(np.searchsorted(x, ii))
            p0, x0 = (psum[p, k - 1], x[k - 1]) if k else (0.0, 0.0)
            out[j] = p0 + (psum[p, k] - p0) * (ii * ii - x0 * x0) / (x[k] ** 2 - x0 * x0)
    return out


def table_fresh(x, g, tail, hazard, i):
    """H(I)/I of each row, H by trapezoids (numpy)."""
    xg = np.concatenate(([0.0], x))
    out = np.empty(len(i))
    for p, ii in enumerate(i):
        gg = np.concatenate(([0.0], g[p]))
        if not ii < math.inf:
            out[p] = 0.0
            continue
        if ii >= x[-1]:
            h = np.sum(np.diff(xg) * (1 - 0.5 * (gg[1:] + gg[:-1])))
            if tail[p] > 0:
                h += tail[p] * -math.expm1(-hazard[p] * (ii - x[-1])) / hazard[p]
        else:
            gi = np.interp(ii, xg, gg)
            keep = xg < ii
            xs, gs = np.append(xg[keep], ii), np.append(gg[keep], gi)
            h = np.sum(np.diff(xs) * (1 - 0.5 * (gs[1:] + gs[:-1])))
        out[p] = h / ii
    return out


def random_table(rng, n, m, *, flat=False):
    """Rows of random increasing G on a random grid: some reach 1 (no tail), some have flat stretches."""
    x = np.cumsum(rng.uniform(0.05, 1.0, m))
    inc = rng.exponential(1.0, (n, m))
    if flat:
        inc[rng.uniform(size=(n, m)) < 0.3] = 0.0
        inc[:, 0] += 0.01
    g = np.cumsum(inc, axis=1) / (inc.sum(axis=1, keepdims=True) * rng.uniform(0.8, 1.6, (n, 1)))
    g[rng.uniform(size=n) < 0.2, -1] = 1.0
    return np.clip(g, 0.0, 1.0), x


def assert_same_optimum(new, old, d, w, B, lo=0.0, hi=math.inf):
    """Two solutions of one periodic problem (the test of tests/test_rates_periodic_pass.py): objective to
    1e-14, multiplier to 1e-11, every rate to 1e-12 relative plus what the difference of the two multipliers
    moves it (u dr/du grows like 1/(1 - c) right past a page's threshold), but for pages time-shared across a
    jump (their threshold between the two multipliers)."""
    r1, r0 = new.crawl_rate, old.crawl_rate
    assert math.fsum(r1) <= B * (1 + 1e-13)
    assert new.objective == pytest.approx(old.objective, rel=1e-14)
    assert np.all((r1 >= lo) & (r1 <= hi))
    if old.multiplier == 0.0 or new.multiplier == 0.0:  # the budget covers the maxima: no search
        assert new.multiplier == old.multiplier
        np.testing.assert_array_equal(r1, r0)
        return
    ya, shared, moved = periodic_rate_allowance(d, w, old, new)
    # Where a page's threshold lies between them, its rate rises like 1/log(u - b) right after it and a
    # search that time-shares there stops once (L_a - L_b)(S_b - S_a) <= 1e-15 L_a B: with that page's jump
    # S_b - S_a ~ Delta/37 >= 1e-3 here, the multipliers may then differ by up to 1e-15 B/1e-3.
    assert new.multiplier == pytest.approx(old.multiplier, rel=1e-12 * B if shared.any() else 1e-11)
    bad = (np.abs(r1 - r0) > 1e-12 * r0 + moved * ya + 1e-300) & ~shared
    assert not bad.any(), (np.flatnonzero(bad)[:5], r1[bad][:5], r0[bad][:5])


def kkt(laws, w, res, lo, hi, rtol=1e-9):
    """KKT of the renewal problem at the returned multiplier (exact laws): w psi(1/f) = Lambda on the crawled
    unclipped pages, <= Lambda at the minimum, >= Lambda at the maximum, w E[A] <= Lambda on pages not
    crawled (a time-shared page lies between two multipliers: the reported one and its neighbour)."""
    lam = res.multiplier
    lo, hi = np.broadcast_to(lo, len(w)), np.broadcast_to(hi, len(w))
    shared = 0
    for law, wi, f, a, b in zip(laws, w, res.crawl_rate, lo, hi):
        if wi == 0:
            assert f == a
            continue
        value = wi * (exact_psi(law, 1 / f) if f > 0 else exact_mean_age(law))
        if a < f < b:
            if value != pytest.approx(lam, rel=rtol):
                shared += 1
        elif f == a and a < b:
            assert value <= lam * (1 + rtol)
        elif f == b and a < b:
            assert value >= lam * (1 - rtol)
    assert shared <= 2


def laws_of(draw, n):
    out = []
    for _ in range(n):
        kind = draw(st.sampled_from(["exp", "pareto", "const", "uniform"]))
        if kind == "exp":
            out.append(Exponential(draw(st.floats(0.05, 20.0))))
        elif kind == "pareto":
            out.append(Pareto(draw(st.floats(1.2, 6.0)), draw(st.floats(0.05, 5.0))))
        elif kind == "const":
            out.append(Constant(draw(st.floats(0.05, 20.0))))
        else:
            a = draw(st.floats(0.0, 5.0))
            out.append(Uniform(a, a + draw(st.floats(0.05, 5.0))))
    return out


# ---------------------------------------------------------------------------
# exponential laws: the periodic model's optimum
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 7, 100, 1000, 5000])
@pytest.mark.parametrize("bounds", ["none", "min", "max", "both"])
@pytest.mark.parametrize("form", ["rates", "laws"])
def test_exponential_laws_give_the_periodic_optimum(n, bounds, form):
    """G(a) = 1 - e^{-Δa} exactly (change rates, or Exponential laws): the periodic model's optimum to the
    multipliers' own accuracy (1e-12 relative on the rates), with bounds too; 5000 pages take the subsample
    start."""
    rng = np.random.default_rng(n + len(bounds))
    d, w = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    d[rng.uniform(size=n) < 0.05] = 0.0  # never changes: always fresh, min_rate
    w[rng.uniform(size=n) < 0.05] = 0.0
    B = max(n / 10, 0.5)
    lo = rng.uniform(0, 0.02, n) if bounds in ("min", "both") else 0.0
    hi = np.where(rng.uniform(size=n) < 0.5, rng.uniform(0.05, 0.5, n), np.inf) if bounds in ("max", "both") \
        else np.inf
    if bounds == "max":
        hi = np.maximum(hi, 1e-3)
    change = d if form == "rates" else [Exponential(v) if v > 0 else Exponential(1.0) for v in d]
    if form == "laws":  # Exponential needs a rate > 0: give those pages no importance instead
        w = np.where(d > 0, w, 0.0)
        d = np.where(d > 0, d, 1.0)
    want = optimal_rates(d, w, B, "periodic", lo, hi, return_details=True)
    got = optimal_rates(change, w, B, "renewal", lo, hi, return_details=True)
    assert isinstance(got, RatesResult)
    assert_same_optimum(got, want, d, w, B, lo, hi)
    assert got.n_crawled == pytest.approx(want.n_crawled, abs=1)
    assert freshness(got.crawl_rate, change, w, "renewal") == pytest.approx(
        freshness(got.crawl_rate, d, w, "periodic"), rel=1e-14)


def test_exponential_laws_trivial_cases_as_periodic():
    d, w = np.array([0.5, 1.0, 0.0]), np.array([1.0, 0.0, 1.0])
    for B, lo, hi in [(10.0, 0.0, 2.0), (1.5, 0.5, np.inf), (2.0, 0.1, 1.0), (0.7, 0.1, np.inf)]:
        want = optimal_rates(d, w, B, "periodic", lo, hi, return_details=True)
        got = optimal_rates(d, w, B, "renewal", lo, hi, return_details=True)
        np.testing.assert_allclose(got.crawl_rate, want.crawl_rate, rtol=1e-12)
        assert got.multiplier == pytest.approx(want.multiplier, rel=1e-12)
        assert got.objective == pytest.approx(want.objective, rel=1e-14)


@pytest.mark.parametrize("bounds", [False, True])
def test_tabulated_exponential_to_the_grid_accuracy(bounds):
    """G = 1 - e^{-Δa} tabulated on a grid of step h: linear interpolation moves psi by at most h^2 Δ/12
    (the midpoint rule's error over the segments, ∫ |g'| <= Δ), the tail beyond the grid is exact (its
    hazard is Δ); a rate f = 1/I with psi(I) = Λ/w moves by (δpsi + δΛ/w)/(I^2 g(I)) relative, g(I) = Δ e^{-ΔI}.
    Each rate stays within twice that, the multiplier within h^2 of its own, and halving h divides the
    largest error by about 4 (second order)."""
    rng = np.random.default_rng(3)
    n = 300
    d, w = rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 1.0, n)
    B = 30.0
    lo, hi = (0.01, 0.4) if bounds else (0.0, np.inf)
    want = optimal_rates(d, w, B, "periodic", lo, hi, return_details=True)
    worst = []
    for h in (0.004, 0.002):
        x = h * np.arange(1, int(40 / h) + 1)
        got = optimal_rates(AgeTable(1 - np.exp(-np.outer(d, x)), x), w, B, "renewal", lo, hi, return_details=True)
        assert got.crawl_rate.sum() == pytest.approx(B, rel=1e-13)
        dlam = abs(got.multiplier - want.multiplier)
        assert dlam <= h * h * want.multiplier
        f = want.crawl_rate
        on = f > 0
        i = 1 / f[on]
        allowed = 2 * (h * h * d[on] / 12 + dlam / w[on]) / (i * i * d[on] * np.exp(-d[on] * i)) * f[on]
        err = np.abs(got.crawl_rate[on] - f[on])
        assert np.all(err <= allowed), np.max(err / allowed)
        # pages not crawled stay so, but where the threshold w/Δ is within the multipliers' difference
        near = np.abs(w / d / want.multiplier - 1) <= 2 * dlam / want.multiplier
        assert np.all((got.crawl_rate[~on] == 0) | near[~on])
        worst.append(np.max(err / f[on]))
        assert got.objective == pytest.approx(want.objective, rel=h * h)
    assert 3.0 < worst[0] / worst[1] < 5.0


# ---------------------------------------------------------------------------
# exact laws
# ---------------------------------------------------------------------------


def test_constant_and_pareto_by_hand():
    """Constant(2) and Pareto(3): F_1 = 1 - 1/(4 f) (f >= 1/2), F_2 = f/(1 + f); with bandwidth 1 the
    marginal values 1/(4 f_1^2) = 1/(1 + f_2)^2 give f_1 = 2/3, Λ = 9/16."""
    res = optimal_rates([Constant(2.0), Pareto(3.0)], [1.0, 1.0], 1.0, "renewal", return_details=True)
    np.testing.assert_allclose(res.crawl_rate, [2 / 3, 1 / 3], rtol=1e-13)
    assert res.multiplier == pytest.approx(9 / 16, rel=1e-13)
    assert res.objective == pytest.approx(1 - 3 / 8 + 0.25, rel=1e-13)
    assert res.n_crawled == 2


@pytest.mark.parametrize("law", [Pareto(3.0), Pareto(2.0, 0.5), Pareto(1.5, 2.0), Constant(2.0), Uniform(0.0, 2.0),
                                 Uniform(1.0, 3.0), Exponential(0.7)], ids=repr)
def test_freshness_of_exact_laws_against_quadrature(law):
    f = np.array([0.0, 0.05, 0.3, 0.5, 1.0, 3.0, 50.0, np.inf])
    got = freshness(f, [law] * len(f), model="renewal", per_page=True)
    want = [exact_freshness(law, v) if v < np.inf else 1.0 for v in f]
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_kkt_of_mixed_exact_laws(seed):
    rng = np.random.default_rng(seed)
    n = 40
    laws = []
    for k in rng.integers(0, 4, n):
        if k == 0:
            laws.append(Exponential(rng.uniform(0.1, 3)))
        elif k == 1:
            laws.append(Pareto(rng.uniform(1.3, 5), rng.uniform(0.2, 3)))
        elif k == 2:
            laws.append(Constant(rng.uniform(0.2, 4)))
        else:
            a = rng.uniform(0, 2)
            laws.append(Uniform(a, a + rng.uniform(0.1, 3)))
    w = rng.uniform(0, 1, n)
    w[0] = 0.0
    lo = np.where(rng.uniform(size=n) < 0.3, rng.uniform(0, 0.05, n), 0.0)
    hi = np.where(rng.uniform(size=n) < 0.3, lo + rng.uniform(0.05, 1, n), np.inf)
    for B in (0.5, 5.0, 20.0):
        res = optimal_rates(laws, w, B, "renewal", lo, hi, return_details=True)
        assert res.crawl_rate.sum() == pytest.approx(B, rel=1e-13)
        assert np.all((res.crawl_rate >= lo) & (res.crawl_rate <= hi))
        kkt(laws, w, res, lo, hi)
        assert res.objective == pytest.approx(freshness(res.crawl_rate, laws, w, "renewal") * w.sum(), rel=1e-13)


def test_tabulated_laws_converge_to_the_exact_ones():
    laws = [Pareto(3.0), Pareto(2.5, 2.0), Constant(1.5), Uniform(0.5, 2.0), Exponential(0.8)]
    w = np.array([1.0, 0.5, 0.8, 0.3, 0.6])
    exact = optimal_rates(laws, w, 2.0, "renewal", return_details=True)
    x = np.linspace(0.0005, 200.0, 400_000)
    tab = optimal_rates(AgeTable([law.age_cdf(x) for law in laws], x), w, 2.0, "renewal", return_details=True)
    np.testing.assert_allclose(tab.crawl_rate, exact.crawl_rate, rtol=1e-5)
    assert tab.objective == pytest.approx(exact.objective, rel=1e-7)


def test_heavy_tails_are_always_crawled():
    """Pareto with alpha <= 2 has an infinite mean age: crawled at every multiplier."""
    res = optimal_rates([Pareto(1.5), Pareto(1.8, 3.0), Constant(1.0)], [1e-6, 1e-6, 1.0], 0.5, "renewal",
                        return_details=True)
    assert np.all(res.crawl_rate[:2] > 0) and res.crawl_rate.sum() == pytest.approx(0.5, rel=1e-13)


def test_jump_of_constant_pages_is_time_shared():
    """Two equal Constant(1) pages of equal importance: each enters at rate 1 (the objective is linear below),
    so a budget of 1.5 crawls one at 1 and the other at 0.5, or any split of the jump: the total is the
    budget and the objective 0.75 either way."""
    res = optimal_rates([Constant(1.0)] * 2, [1.0, 1.0], 1.5, "renewal", return_details=True)
    assert res.crawl_rate.sum() == pytest.approx(1.5, rel=1e-14)
    assert res.objective == pytest.approx(0.75 + 0.0, rel=1e-12) or res.objective == pytest.approx(0.75, rel=1e-12)
    assert res.multiplier == pytest.approx(0.5, rel=1e-12)


# ---------------------------------------------------------------------------
# tables: the compiled kernels against numpy
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1, 2, 5, 33, 80])
@pytest.mark.parametrize("flat", [False, True])
def test_table_kernels_against_numpy(m, flat):
    rng = np.random.default_rng(m + 100 * flat)
    g, x = random_table(rng, 60, m, flat=flat)
    g[0] -= 0.05  # below 0 at the start: clipped
    g[1, 0] = 1.2  # above 1: clipped
    t = AgeTable(g, x)
    gr, psum, tail, hazard, mean = table_reference(g, x)
    np.testing.assert_array_equal(t.age_cdf, gr)
    np.testing.assert_allclose(t._psum, psum, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(t.mean_age, mean, rtol=1e-13)
    np.testing.assert_allclose(t._hazard, hazard, rtol=1e-14)
    # psi, the intervals of a pass, and freshness
    i = np.concatenate([x * rng.uniform(0.5, 1.5, m), [x[-1] * 3, 1e-3, np.inf]])[:60]
    i = np.resize(i, 60)
    got = np.empty(60)
    _blind.renewal_psi(t._x, t._psum, t._tail, t._hazard, t._mean_age, i, got)
    np.testing.assert_allclose(got, table_psi(x, psum, tail, hazard, mean, i), rtol=1e-13)
    _blind.renewal_freshness(t._x, t._g, t._tail, t._hazard, i, got)
    np.testing.assert_allclose(got, table_fresh(x, gr, tail, hazard, i), rtol=1e-12, atol=1e-300)
    w = rng.uniform(0.1, 1.0, 60)
    for lam in np.quantile(w * mean, [0.05, 0.5, 0.95]):
        u = lam**-0.5
        lam = 1 / (u * u)
        out = np.empty(60)
        S, D = _blind.renewal_pass(t._x, t._psum, t._pm, t._tail, t._hazard, t._mean_age, 1 / w, None, None,
                                   lam, u, out)
        assert S == pytest.approx(math.fsum(out), rel=1e-15)
        on = out > 0
        assert np.all(w[~on] * mean[~on] <= lam)  # not crawled: the level reaches the mean age
        level = table_psi(x, psum, tail, hazard, mean, 1 / out[on], np.flatnonzero(on))
        np.testing.assert_allclose(level, lam / w[on], rtol=1e-12)
        # dS/du against a central difference (no page enters or crosses a flat stretch within 1e-7)
        eps = 1e-7
        Sp, _ = _blind.renewal_pass(t._x, t._psum, t._pm, t._tail, t._hazard, t._mean_age, 1 / w, None, None,
                                    1 / (u * (1 + eps)) ** 2, u * (1 + eps))
        Sm, _ = _blind.renewal_pass(t._x, t._psum, t._pm, t._tail, t._hazard, t._mean_age, 1 / w, None, None,
                                    1 / (u * (1 - eps)) ** 2, u * (1 - eps))
        if not flat and m > 1:
            assert D == pytest.approx((Sp - Sm) / (2 * eps * u), rel=1e-4)


def test_table_rates_from_estimates():
    """M4's estimates of G_U as a table (rows of NaN-free CDFs): the plan spends the budget and beats the
    Poisson plan with the true rates under the true laws (the quick table of reproduce.blind checks more)."""
    rng = np.random.default_rng(5)
    laws = [Pareto(a, m * (a - 1)) for a, m in zip(rng.uniform(2.5, 4, 20), rng.uniform(0.5, 3, 20))]
    laws += [Constant(p) for p in rng.uniform(0.5, 3, 20)]
    k, step = 100, 0.1
    est = AgeTable([m4(simulate_log(law, Constant(step), 3000.0, rng=rng).changed, k) for law in laws],
                   step * np.arange(1, k + 1))
    w = rng.uniform(0, 1, len(laws))
    mu = np.array([law.rate for law in laws])
    B = 0.3 * mu.sum()
    plan = optimal_rates(est, w, B, "renewal")
    assert plan.sum() == pytest.approx(B, rel=1e-13)
    poisson = optimal_rates(mu, w, B, "periodic")
    assert freshness(plan, laws, w, "renewal") > freshness(poisson, laws, w, "renewal") + 0.005


def test_renewal_rates_is_optimal_rates_on_a_table():
    rng = np.random.default_rng(2)
    g, x = random_table(rng, 50, 20)
    w = rng.uniform(0, 1, 50)
    res = optimal_rates(AgeTable(g, x), w, 3.0, "renewal", return_details=True)
    rates, lam, fresh = renewal_rates(g, x, w, 3.0, return_details=True)
    np.testing.assert_array_equal(rates, res.crawl_rate)
    assert lam == res.multiplier and fresh == pytest.approx(res.objective / w.sum(), rel=1e-15)
    np.testing.assert_array_equal(renewal_freshness(rates, g, x, w, per_page=True),
                                  freshness(rates, AgeTable(g, x), w, "renewal", per_page=True))


def test_table_object():
    x = np.array([0.5, 1.0, 2.0])
    t = AgeTable([0.2, 0.1, 0.5], x)  # one page; the dip is lifted
    assert len(t) == t.n_pages == 1
    assert t.age_cdf.tolist() == [[0.2, 0.2, 0.5]]
    assert "AgeTable(n_pages=1" in repr(t)
    with pytest.raises(ValueError):
        t.age_cdf[0, 0] = 1.0  # read-only
    with pytest.raises(ValueError):
        t.x[0] = 1.0


@pytest.mark.parametrize("n", [600, 5000])
def test_subsample_start_same_optimum(n):
    """From 512 pages on the search starts from a subsample's solution: the same optimum as the direct
    search (KKT on the table, the budget)."""
    rng = np.random.default_rng(n)
    g, x = random_table(rng, n, 12)
    w = rng.uniform(0, 1, n)
    t = AgeTable(g, x)
    res = optimal_rates(t, w, n / 20, "renewal", return_details=True)
    assert res.crawl_rate.sum() == pytest.approx(n / 20, rel=1e-13)
    on = res.crawl_rate > 0
    level = table_psi(t._x, t._psum, t._tail, t._hazard, t._mean_age, 1 / res.crawl_rate[on], np.flatnonzero(on))
    ok = np.isclose(w[on] * level, res.multiplier, rtol=1e-9)
    assert ok.sum() >= on.sum() - 2  # but pages time-shared across a jump
    assert np.all(w[~on] * t.mean_age[~on] <= res.multiplier * (1 + 1e-9))


# ---------------------------------------------------------------------------
# RatesResult, bounds, trivial cases
# ---------------------------------------------------------------------------


def test_result_fields_and_trivial_cases():
    laws = [Pareto(3.0), Constant(2.0), Uniform(0.0, 1.0)]
    w = np.array([1.0, 0.0, 2.0])
    res = optimal_rates(laws, w, 2.0, "renewal", return_details=True)
    assert res.crawl_rate[1] == 0.0 and res.n_crawled == 2
    assert res.objective == pytest.approx(freshness(res.crawl_rate, laws, w, "renewal") * w.sum(), rel=1e-14)
    # the bandwidth covers every maximum: all at their maxima, multiplier 0
    res = optimal_rates(laws, w, 10.0, "renewal", 0.0, 3.0, return_details=True)
    assert res.crawl_rate.tolist() == [3.0, 3.0, 3.0] and res.multiplier == 0.0
    # it covers the maxima of the pages that matter: those at their maxima, the rest at the minimum
    res = optimal_rates(laws, w, 7.0, "renewal", 0.5, 3.0, return_details=True)
    assert res.crawl_rate.tolist() == [3.0, 0.5, 3.0] and res.multiplier == 0.0
    # exactly the minima: the multiplier that keeps every page there, max w psi(1/min)
    res = optimal_rates(laws, w, 1.5, "renewal", 0.5, return_details=True)
    assert res.crawl_rate.tolist() == [0.5, 0.5, 0.5]
    assert res.multiplier == pytest.approx(max(1.0 * exact_psi(laws[0], 2.0), 2.0 * exact_psi(laws[2], 2.0)),
                                           rel=1e-12)


def test_bounds_clip_and_keep_the_budget():
    rng = np.random.default_rng(7)
    n = 200
    g, x = random_table(rng, n, 16)
    w = rng.uniform(0, 1, n)
    lo = rng.uniform(0, 0.01, n)
    hi = np.where(rng.uniform(size=n) < 0.5, lo + rng.uniform(0, 0.2, n), np.inf)
    t = AgeTable(g, x)
    free = optimal_rates(t, w, 10.0, "renewal")
    res = optimal_rates(t, w, 10.0, "renewal", lo, hi, return_details=True)
    assert np.all((res.crawl_rate >= lo) & (res.crawl_rate <= hi))
    assert res.crawl_rate.sum() == pytest.approx(10.0, rel=1e-13)
    assert res.objective <= freshness(free, t, w, "renewal") * w.sum() * (1 + 1e-14)
    # monotone in the bandwidth, as the multiplier falls
    prev, lam = lo, math.inf
    for B in (1.0, 2.0, 5.0, 10.0, 20.0):
        r = optimal_rates(t, w, B, "renewal", lo, hi, return_details=True)
        assert np.all(r.crawl_rate >= prev * (1 - 1e-12)) and r.multiplier <= lam
        prev, lam = r.crawl_rate, r.multiplier


# ---------------------------------------------------------------------------
# hypothesis: invariants
# ---------------------------------------------------------------------------


@st.composite
def instances(draw):
    n = draw(st.integers(1, 12))
    laws = laws_of(draw, n)
    w = np.array([draw(st.floats(0.01, 10.0)) for _ in range(n)])
    B = draw(st.floats(1e-3, 50.0))
    return laws, w, B


@settings(max_examples=60)
@given(instances())
def test_budget_met_with_equality(inst):
    laws, w, B = inst
    r = optimal_rates(laws, w, B, "renewal")
    assert math.fsum(r) <= B * (1 + 1e-15)
    assert math.fsum(r) == pytest.approx(B, rel=1e-13)
    assert np.all(r >= 0) and np.all(np.isfinite(r))


@settings(max_examples=60)
@given(st.data())
def test_rates_monotone_in_importance_for_equal_laws(data):
    law = laws_of(data.draw, 1)[0]
    n = data.draw(st.integers(2, 10))
    w = np.sort(np.array([data.draw(st.floats(0.01, 10.0)) for _ in range(n)]))
    B = data.draw(st.floats(1e-3, 20.0))
    r = optimal_rates([law] * n, w, B, "renewal")
    assert np.all(np.diff(r) >= -1e-12 * r[1:])


@settings(max_examples=60)
@given(instances())
def test_never_below_the_poisson_plan_under_the_true_law(inst):
    """With the laws given exactly, the renewal plan is the optimum under them: the periodic (Poisson) plan
    with the true change rates, evaluated under the same laws, never does better."""
    laws, w, B = inst
    renewal = optimal_rates(laws, w, B, "renewal")
    poisson = optimal_rates([law.rate for law in laws], w, B, "periodic")
    assert freshness(renewal, laws, w, "renewal") >= freshness(poisson, laws, w, "renewal") * (1 - 1e-12)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 20), st.booleans(),
       st.sampled_from(["none", "min", "max", "both"]), st.floats(1e-3, 30.0))
def test_table_invariants(seed, n, m, flat, bounds, B):
    """Tables with flat stretches and rows reaching 1 (jumps), with bounds: the rates lie within them, spend
    the bandwidth (unless the maxima of the pages that matter fit in it), and satisfy KKT on the table but
    for at most two pages time-shared across a jump."""
    rng = np.random.default_rng(seed)
    g, x = random_table(rng, n, m, flat=flat)
    w = rng.uniform(0, 1, n)
    lo = rng.uniform(0, 0.05, n) if bounds in ("min", "both") else np.zeros(n)
    hi = lo + rng.uniform(0.01, 2, n) if bounds in ("max", "both") else np.full(n, np.inf)
    if lo.sum() > B:
        B = lo.sum() * 1.5
    t = AgeTable(g, x)
    res = optimal_rates(t, w, B, "renewal", lo, hi, return_details=True)
    r = res.crawl_rate
    assert np.all((r >= lo) & (r <= hi))
    assert math.fsum(r) <= B * (1 + 1e-15)
    if np.where(w > 0, hi, lo).sum() > B:
        assert math.fsum(r) == pytest.approx(B, rel=1e-13)
    else:
        assert res.multiplier == 0.0
        return
    lam = res.multiplier
    free = (r > lo) & (r < hi)
    with np.errstate(divide="ignore"):
        value = w * table_psi(t._x, t._psum, t._tail, t._hazard, t._mean_age, 1 / r)
    off = free & ~np.isclose(value, lam, rtol=1e-9)
    assert off.sum() <= 2
    assert np.all(value[(r == lo) & (lo < hi)] <= lam * (1 + 1e-9))
    assert np.all(value[(r == hi) & (lo < hi)] >= lam * (1 - 1e-9))


# ---------------------------------------------------------------------------
# bad input: clear errors naming the argument and the first bad index
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("call, error, message", [
    (lambda: AgeTable([[0.1, np.nan], [0.2, 0.3]], [1.0, 2.0]), ValueError, r"'age_cdf'.*age_cdf\[0, 1\] = nan"),
    (lambda: AgeTable([[0.1, 0.2], [0.2, np.inf]], [1.0, 2.0]), ValueError, r"age_cdf\[1, 1\] = inf"),
    (lambda: AgeTable([0.1, np.nan], [1.0, 2.0]), ValueError, r"age_cdf\[1\] = nan"),
    (lambda: AgeTable([[0.1, 0.2]], [1.0, 1.0]), ValueError, r"'x' parameter of AgeTable must be strictly "
                                                             r"increasing; x\[1\] = 1.0"),
    (lambda: AgeTable([[0.1, 0.2]], [0.0, 1.0]), ValueError, r"'x' parameter of AgeTable must contain numbers > 0"),
    (lambda: AgeTable([[0.1, 0.2]], [1.0, np.nan]), ValueError, r"x\[1\] = nan"),
    (lambda: AgeTable([[0.1, 0.2]], [1.0, 2.0, 3.0]), ValueError, r"one column per point of 'x' \(3\)"),
    (lambda: AgeTable(np.zeros((0, 2)), [1.0, 2.0]), ValueError, r"'age_cdf' parameter of AgeTable must not be"),
    (lambda: AgeTable(np.zeros((2, 2, 2)), [1.0, 2.0]), ValueError, r"1-D or 2-D"),
    (lambda: AgeTable([["a", "b"]], [1.0, 2.0]), TypeError, r"'age_cdf'"),
    (lambda: optimal_rates(Pareto(3.0), [1.0], 1.0, "renewal"), TypeError, r"'change_rate'.*single law"),
    (lambda: optimal_rates([Pareto(3.0), Sampled(lambda r, s: r.exponential(1.0, s))], [1.0, 1.0], 1.0,
                           "renewal"), TypeError, r"change_rate\[1\] is Sampled.*AgeTable"),
    (lambda: optimal_rates([Pareto(3.0), 0.5], [1.0, 1.0], 1.0, "renewal"), TypeError,
     r"'change_rate'.*change_rate\[1\] is a float"),
    (lambda: optimal_rates([Pareto(3.0)], [1.0, 1.0], 1.0, "renewal"), ValueError,
     r"'change_rate' has 1 pages, 'importance' has 2"),
    (lambda: optimal_rates([0.5, -1.0], [1.0, 1.0], 1.0, "renewal"), ValueError, r"change_rate\[1\] = -1.0"),
    (lambda: optimal_rates([Pareto(3.0)], [-1.0], 1.0, "renewal"), ValueError, r"importance\[0\] = -1.0"),
    (lambda: optimal_rates([Pareto(3.0)], [1.0], 0.0, "renewal"), ValueError, r"'bandwidth'"),
    (lambda: optimal_rates([Pareto(3.0)] * 2, [1.0, 1.0], 1.0, "renewal", [0.1, 0.5], [0.2, 0.4]), ValueError,
     r"page 1: min_rate = 0.5 > max_rate = 0.4"),
    (lambda: optimal_rates([Pareto(3.0)] * 2, [1.0, 1.0], 1.0, "renewal", [0.1, np.nan]), ValueError,
     r"min_rate\[1\] = nan"),
    (lambda: optimal_rates([Pareto(3.0)] * 2, [1.0, 1.0], 0.5, "renewal", 0.3), ValueError, r"sum of min_rate"),
    (lambda: optimal_rates([Pareto(3.0)], [1.0], 1.0, "periodic"), TypeError,
     r"'change_rate'.*update laws.*only the 'renewal' model"),
    (lambda: optimal_rates(AgeTable([0.5], [1.0]), [1.0], 1.0), TypeError, r"model 'poisson' needs the change rates"),
    (lambda: freshness([1.0], [Pareto(3.0)], model="periodic"), TypeError, r"'change_rate' parameter of freshness"),
    (lambda: freshness([1.0, 2.0], [Pareto(3.0)], model="renewal"), ValueError,
     r"'change_rate' has 1 pages, 'crawl_rate' has 2"),
    (lambda: freshness([1.0], [Pareto(3.0)], [1.0, 1.0], model="renewal"), ValueError, r"'importance' has 2"),
    (lambda: freshness([-1.0], [Pareto(3.0)], model="renewal"), ValueError, r"crawl_rate\[0\] = -1.0"),
    (lambda: freshness([1.0], [Pareto(3.0)], [0.0], model="renewal"), ValueError, r"must not be all zero"),
    (lambda: renewal_freshness([1.0], [[0.1, 0.2]], [0.1, 0.2], [0.0]), ValueError, r"'importance' parameter of "
                                                                                    r"renewal_freshness"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_mixed_families_never_overspend_by_an_ulp():
    """Hypothesis found pages of two law families whose pass summed the families' spends one by one, an ulp
    short of the rates' compensated sum: the search stopped on it and the final check refused its own rates
    (20.562500000000004 of 20.5625). The pass now reports the sum the check takes."""
    laws = [Uniform(1, 2), Constant(1), Constant(2)]
    r = optimal_rates(laws, [1, 1, 3], 20.5625, model="renewal")
    assert math.fsum(r) <= 20.5625
    assert math.fsum(r) == pytest.approx(20.5625, rel=1e-13)
