"""Benchmarks of freshcore.rates.optimal_rates and freshcore.special.lambertw.

Each group holds the numpy a competent user would write for the same problem (role ``baseline``, the
one the ratios are taken against) beside freshcore, and where useful other plain implementations
(role ``reference``, their ratio to the baseline printed too):

* ``optimal_rates[poisson] n=...``: baseline = Newton on the Lagrange multiplier in numpy, sort-free.
  With ``u = L^-1/2`` the total ``S(u) = sum max(s_i u - Delta_i, 0)``, ``s_i = sqrt(w_i Delta_i)``, is
  convex and piecewise linear; Newton from the all-active start ``u0 = (B + sum Delta)/sum s`` (right of
  the root) moves left monotonically, each step the closed form on the current active set
  ``u = (B + sum_A Delta)/sum_A s``, and stops when the active set no longer changes: the exact answer
  in 4-5 passes here, no sort (the sort of 10^7 breakpoints alone costs more than all the passes).  The
  masked sums are ``np.dot`` against the boolean mask (the fastest of the forms tried: boolean
  indexing, ``where=`` reductions, a float mask).  Reference: ``argsort`` = the exact closed form over
  the sorted breakpoints (argsort, cumulative sums, searchsorted), the textbook water-filling.
* ``optimal_rates[periodic] n=...``: baseline = Newton on ``log S`` against ``log L`` in numpy (the
  analytic derivative ``dr/dc = r (1 + x)/((1 - c) x^2)`` comes with each pass for a few more array
  operations), bracketed, to ``|S - B| <= 1e-12 B``; from 4096 pages on it starts from the
  multiplier of an evenly strided subsample of n/8 pages (at most 50 000) solved to 1e-4
  (freshcore's own start; at 10^4 pages it makes the baseline 1.7x faster).  The
  per-page ``x = -1 - W-1(-(1 - c)/e)`` is a numpy Halley iteration on ``x - log1p(x) = -log1p(-c)``
  from the branch-point series (the series itself where ``sqrt(2t) < 1e-3``): 4e-14 relative against
  freshcore's kernel and 8x faster than ``scipy.special.lambertw(., -1)``, which converts to complex.
  Reference: ``scipy-lambertw`` = the same iteration with ``scipy.special.lambertw`` (one round at
  10^7, where a call takes about ten seconds).  The old ``brentq`` bracketing (about 15 passes of
  Lambert W) is gone: no user would write it for speed.
* ``lambertw[branch] n=...``: ``scipy.special.lambertw(z, k).real`` vs ``freshcore.special.lambertw``.
* ``optimal_rates[renewal] n=... m=32`` (issue 18: pages whose updates are not Poisson): each page's age
  distribution G_U tabulated on 32 points 0.25 .. 8 (half Pareto, half constant intervals:
  ``renewal_instance``), importance U[0, 1], bandwidth 0.3 sum(mu_i).  freshcore: ``AgeTable`` +
  ``optimal_rates(model="renewal")``, the table's construction included.  Baseline: the same problem on the
  same grid in numpy, by bisection on log Lambda (the method the issue names) with vectorised per-page
  solves: psi at the grid points by one cumsum, each pass the segment of every page by one comparison of
  the table against the levels (``count_nonzero``: 2x faster here than a per-row binary search by fancy
  indexing), ``I^2`` linear in psi on it, the exponential tail by ``x_numpy``'s Halley iteration; until
  the total is within 1e-12 below the budget (freshcore: 1e-14) or the bracket is two adjacent doubles
  (then time-shared).  ``test_renewal_baseline_agrees`` checks, untimed, that both give the same rates.

Instances (but renewal's): Delta, mu ~ U[0, 1] (seed 0), bandwidth n/10 (SPEC section 2's ratio R/m), no
rate bounds (the defaults).  Measure on one thread (``FRESHCORE_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``: the
baselines' ``np.dot`` would otherwise use a second core).

Run (briefly, on the shared machine)::

    PYTHONPATH=src FRESHCORE_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python -m pytest bench/bench_rates.py \
        -o python_files='bench_*.py' -p no:cacheprovider --benchmark-min-rounds=5
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

from freshcore.blind import AgeTable
from freshcore.rates import optimal_rates
from freshcore.special import lambertw

from benchutil import SMOKE, role, sizes

SIZES = sizes(10**3, 10**4, 10**5, 10**6, 10**7)
SUBSAMPLE = 50_000  # the periodic baselines start from the multiplier of n/8 pages, at most this many,
SUB_FROM = 4096  # from this many pages on (below, numpy's call overhead on the subsample costs more)


def instance(n):
    rng = np.random.default_rng(0)
    return rng.uniform(0, 1, n), rng.uniform(0, 1, n), n / 10


# ---------------------------------------------------------------- Poisson


def poisson_newton(d, w, B):
    """Poisson optimum (min_rate = 0, max_rate = inf): Newton on u = L^-1/2 from the all-active start."""
    s = np.sqrt(w * d)
    u = (B + d.sum()) / s.sum()
    buf = np.empty_like(d)
    k = -1
    while True:
        np.multiply(s, u, out=buf)
        act = buf > d
        ka = np.count_nonzero(act)
        if ka == k:  # the same active set as at the previous u: u is its closed form
            break
        k = ka
        u = (B + np.dot(d, act)) / np.dot(s, act)
    buf -= d
    return np.maximum(buf, 0.0, out=buf)


def poisson_argsort(d, w, B):
    """Exact Poisson optimum (min_rate = 0, max_rate = inf): the closed form over the sorted breakpoints."""
    s = np.sqrt(w * d)
    act = s > 0
    sa, da = s[act], d[act]
    ua = da / sa  # page becomes active at u = Delta/s
    order = np.argsort(ua)
    cs = np.cumsum(sa[order])
    cd = np.cumsum(da[order])
    S_at = cs * ua[order] - cd  # total rate at each breakpoint
    k = int(np.searchsorted(S_at, B, side="right"))  # pages 0..k-1 are active
    u = (B + cd[k - 1]) / cs[k - 1]
    out = np.zeros_like(d)
    out[act] = np.maximum(sa * u - da, 0.0)
    return out


# ---------------------------------------------------------------- periodic


def x_numpy(c):
    """x > 0 with 1 - e^-x (1 + x) = c for 0 < c < 1, i.e. -1 - W-1(-(1 - c)/e), in numpy.

    Halley on f(x) = x - log1p(x) - t, t = -log1p(-c), from the branch-point series
    x = p + p^2/3 + p^3/36 - p^4/270 + p^5/4320 (p = sqrt(2t)) below t = 2 and from
    t + log1p(t + log1p(t)) above; two steps.  Where p < 1e-3 the series is exact to rounding
    and f would cancel, so it is kept.
    """
    return x_of_t(-np.log1p(-c))


def x_of_t(t):
    """x > 0 with x - log1p(x) = t > 0, i.e. -1 - W-1(-e^(-1 - t)): x_numpy's Halley iteration on t itself
    (the renewal tail's t = r x_m - log(r c) is not -log1p(-c) of a c that would round to 1)."""
    p = np.sqrt(2.0 * t)
    ser = p * (1.0 + p * (1.0 / 3.0 + p * (1.0 / 36.0 + p * (-1.0 / 270.0 + p / 4320.0))))
    x = np.where(t < 2.0, ser, t + np.log1p(t + np.log1p(t)))
    for _ in range(2):
        xp1 = 1.0 + x
        f = x - np.log1p(x) - t
        fp = x / xp1
        x -= f * fp / (fp * fp - 0.5 * f / (xp1 * xp1))
    return np.where(p < 1e-3, ser, x)


def x_scipy(c):
    """The same x with scipy.special.lambertw (complex), sqrt(2c) where W rounded to -1."""
    x = -1.0 - sc.lambertw((c - 1.0) / np.e, -1).real
    return np.where(x > 0.0, x, np.sqrt(2.0 * c))


def _periodic_pass(lam, ratio, d, xfun, out):
    """Rates at multiplier lam into ``out``; (their total, d log S / d log lam)."""
    c = lam * ratio
    m = c < 1.0
    cm = c[m]
    x = xfun(cm)
    r = d[m] / x
    out[:] = 0.0
    out[m] = r
    S = r.sum()
    # dr/dlog(lam) = -r c (dx/dc)/x with dx/dc = (1 + x)/((1 - c) x)
    return S, -np.sum(r * cm * (1.0 + x) / ((1.0 - cm) * x * x)) / S


def _solve_multiplier(ratio, d, R, lam, tol, xfun):
    """Newton on log S against log lam from lam, bracketed; (lam, rates) with |S - R| <= tol R."""
    out = np.empty_like(d)
    lo, hi = 0.0, np.inf  # S(lo) > R >= S(hi)
    best_lam, best = None, None
    for _ in range(200):
        S, k = _periodic_pass(lam, ratio, d, xfun, out)
        if abs(S - R) <= tol * R:
            return lam, out
        if S > R:
            lo = lam
        else:
            hi, best_lam = lam, lam
            best = out.copy()
        if hi < np.inf and hi - lo <= 1e-15 * hi:  # the budget falls into one page's entry jump
            return best_lam, best
        step = np.log(R / S) / k if k < 0.0 else np.nan
        nxt = lam * np.exp(np.clip(step, -30.0, 30.0))
        if not lo < nxt < hi:
            nxt = np.sqrt(lo * hi) if 0.0 < lo and hi < np.inf else (4.0 * lam if S > R else 0.25 * lam)
        lam = nxt
    raise RuntimeError("no convergence")


def periodic_numpy(d, mu, R, xfun=x_numpy):
    """Periodic optimum (min_rate = 0, max_rate = inf) in numpy: Newton on the multiplier."""
    ratio = d / mu  # c_i = lam Delta_i / mu_i
    n = len(d)
    m = min(SUBSAMPLE, n // 8)
    if n >= SUB_FROM:
        sub = slice(None, None, n // m)
        ds, rs = np.ascontiguousarray(d[sub]), np.ascontiguousarray(ratio[sub])
        Rs = R * len(ds) / n
        lam = (np.sum(np.sqrt(0.5 * ds * ds / rs)) / Rs) ** 2
        lam = _solve_multiplier(rs, ds, Rs, lam, 1e-4, xfun)[0]
    else:
        # small-c start: xi <= sqrt(mu Delta/(2 lam)), so S(lam) <= R here
        lam = (np.sum(np.sqrt(0.5 * mu * d)) / R) ** 2
    return _solve_multiplier(ratio, d, R, lam, 1e-12, xfun)[1]


# ---------------------------------------------------------------- benchmarks


def run(benchmark, fn, *args, single=False):
    if single and not SMOKE:
        return benchmark.pedantic(fn, args=args, rounds=1, iterations=1)
    return benchmark(fn, *args)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("impl", ["baseline", "argsort", "freshcore"])
def test_optimal_rates_poisson(benchmark, n, impl):
    d, w, B = instance(n)
    benchmark.group = f"optimal_rates[poisson] n={n}"
    role(benchmark, {"argsort": "reference"}.get(impl, impl), n=n)
    if impl == "baseline":
        r = run(benchmark, poisson_newton, d, w, B)
    elif impl == "argsort":
        r = run(benchmark, poisson_argsort, d, w, B)
    else:
        r = run(benchmark, optimal_rates, d, w, B, "poisson")
    assert r.sum() <= B * (1 + 1e-12)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("impl", ["baseline", "scipy-lambertw", "freshcore"])
def test_optimal_rates_periodic(benchmark, n, impl):
    d, mu, R = instance(n)
    benchmark.group = f"optimal_rates[periodic] n={n}"
    role(benchmark, {"scipy-lambertw": "reference"}.get(impl, impl), n=n)
    if impl == "baseline":
        r = run(benchmark, periodic_numpy, d, mu, R)
    elif impl == "scipy-lambertw":
        r = run(benchmark, periodic_numpy, d, mu, R, x_scipy, single=n > 10**6)
    else:
        r = run(benchmark, optimal_rates, d, mu, R, "periodic")
    assert r.sum() <= R * (1 + 1e-12)


@pytest.mark.parametrize("n", sizes(10**6))
@pytest.mark.parametrize("branch", [0, -1])
@pytest.mark.parametrize("impl", ["baseline", "freshcore"])
def test_lambertw(benchmark, n, branch, impl):
    rng = np.random.default_rng(1)
    z = rng.uniform(-np.exp(-1), 10.0 if branch == 0 else 0.0, n)
    benchmark.group = f"lambertw[{branch}] n={n}"
    role(benchmark, impl, n=n, branch=branch)
    out = np.empty(n)
    if impl == "baseline":
        benchmark(lambda: sc.lambertw(z, branch).real)
    else:
        benchmark(lambertw, z, branch, out=out)


# ---------------------------------------------------------------- renewal (tabulated age distributions)

RENEWAL_SIZES = sizes(10**3, 10**5, 10**6)
GRID = 0.25 * np.arange(1, 33)  # 32 points up to 8 (as an M4 estimate at a constant interval of 0.25 gives)


def renewal_instance(n):
    """Half Pareto pages (alpha ~ U[2.5, 4], mean interval ~ U[0.5, 5]), half constant intervals (period ~
    U[0.5, 5]), their G_U tabulated on GRID; importance ~ U[0, 1]; bandwidth 0.3 sum(mu_i)."""
    rng = np.random.default_rng(18)
    half = n // 2
    alpha, mean = rng.uniform(2.5, 4.0, half), rng.uniform(0.5, 5.0, half)
    period = rng.uniform(0.5, 5.0, n - half)
    g = np.empty((n, len(GRID)))
    g[:half] = -np.expm1(-(alpha - 1.0)[:, None] * np.log1p(GRID[None, :] / (mean * (alpha - 1.0))[:, None]))
    g[half:] = np.minimum(GRID[None, :] / period[:, None], 1.0)
    return g, rng.uniform(0.0, 1.0, n), 0.3 * float(np.sum(1.0 / mean) + np.sum(1.0 / period))


def renewal_numpy(g, x, w, B, tol=1e-12):
    """The renewal optimum (min_rate 0, max_rate inf) in numpy: bisection on log Lambda.

    The table: psi at the grid points by one cumsum, the exponential tail's hazard from the last quarter of
    the grid, E[A_i].  A pass at Lambda: t = Lambda/w; crawled iff t < E[A]; the segment by counting the
    grid points with psi < t (one vectorised comparison over the table: faster here than a per-row binary
    search by take_along_axis); I^2 linear in psi on it; in the tail Halley on x - log1p(x) = r x_m -
    log(r c).  Bisection from [E/2^k, max w E[A]] until the total is within ``tol`` below the budget, or the
    bracket is two adjacent doubles (a jump: time-share).
    """
    n, m = g.shape
    xl = np.concatenate(([0.0], x[:-1]))
    psum = np.cumsum(np.diff(g, axis=1, prepend=0.0) * (0.5 * (x + xl)), axis=1)
    flat = psum.ravel()
    tail = 1.0 - g[:, -1]
    q = (3 * m) // 4
    sq = 1.0 - g[:, q - 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        hazard = np.where(sq > tail, np.log(sq / tail) / (x[-1] - x[q - 1]), 1.0 / x[-1])
        mean = psum[:, -1] + np.where(tail > 0.0, tail * (x[-1] + 1.0 / hazard), 0.0)
    inv_w = 1.0 / w
    rows = np.arange(n) * m

    def rates(lam):
        t = lam * inv_w
        k = np.count_nonzero(psum < t[:, None], axis=1)
        out = np.zeros(n)
        seg = np.flatnonzero((t < mean) & (k < m))
        ks, ts = k[seg], t[seg]
        p1 = flat[rows[seg] + ks]
        p0 = np.where(ks > 0, flat[rows[seg] + ks - 1], 0.0)
        x1, x0 = x[ks], xl[ks]
        out[seg] = 1.0 / np.sqrt(x0 * x0 + (ts - p0) * ((x1 - x0) * (x1 + x0)) / (p1 - p0))
        tl = np.flatnonzero((t < mean) & (k == m))
        r, c = hazard[tl], (mean[tl] - t[tl]) / tail[tl]
        out[tl] = 1.0 / np.maximum(x_of_t(r * x[-1] - np.log(r * c)) / r, x[-1])
        return out

    hi = float(np.max(w * mean))  # no page is crawled from here on
    lo, f_hi = hi, np.zeros(n)
    while True:
        lo *= 0.5
        f_lo = rates(lo)
        S_lo = f_lo.sum()
        if S_lo >= B:
            break
        hi, f_hi = lo, f_lo
    S_hi = f_hi.sum()
    while hi > np.nextafter(lo, np.inf):
        mid = np.sqrt(lo * hi)
        f = rates(mid)
        S = f.sum()
        if S > B:
            lo, f_lo, S_lo = mid, f, S
        else:
            hi, f_hi, S_hi = mid, f, S
            if S >= B * (1.0 - tol):
                return f
    theta = (B - S_hi) / (S_lo - S_hi)
    return f_hi + theta * (f_lo - f_hi)


def renewal_freshcore(g, x, w, B):
    return optimal_rates(AgeTable(g, x), w, B, "renewal")


def test_renewal_baseline_agrees():
    """Not timed: the baseline and freshcore give the same rates (to what the baseline's 1e-12 moves them)."""
    g, w, B = renewal_instance(2000)
    want, got = renewal_numpy(g, GRID, w, B), renewal_freshcore(g, GRID, w, B)
    assert got.sum() <= B * (1 + 1e-13)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("n", RENEWAL_SIZES)
@pytest.mark.parametrize("impl", ["baseline", "freshcore"])
def test_optimal_rates_renewal(benchmark, n, impl):
    g, w, B = renewal_instance(n)
    benchmark.group = f"optimal_rates[renewal] n={n} m={len(GRID)}"
    role(benchmark, impl, n=n, m=len(GRID))
    r = run(benchmark, renewal_numpy if impl == "baseline" else renewal_freshcore, g, GRID, w, B)
    assert r.sum() <= B * (1 + 1e-12)
