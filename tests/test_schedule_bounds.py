"""The slope bound the scheduler relies on (freshcore._schedule, "the slope invariant").

For every value kind, ``V(tau) <= V(tau_0) + s (tau - tau_0)`` for all ``tau >= tau_0`` with
``s = mu h(a tau_0)``, ``h(x) = 1/e`` for ``x < 1`` and ``x e^{-x}`` for ``x >= 1``
(``sup_{x' >= x} x' e^{-x'}``), ``a = alpha = (1 - lambda) Delta`` (``Delta`` for Greedy):
``V' = mu alpha e^{-alpha tau} psi(tau)`` with ``psi(tau) <= tau`` (approx-j keeps the first j
non-negative terms of ``psi``).  Every page's bound line in the scheduler has such a slope.
"""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from freshcore.pages import PageModel
from freshcore.value import crawl_value


def pages_from(dl, mu, lam, nu, n=1):
    return PageModel(np.full(n, dl), np.full(n, mu), np.full(n, lam), np.full(n, nu))


def h(x):
    return np.where(x < 1.0, 1.0 / np.e, x * np.exp(-np.maximum(x, 1.0)))


@settings(max_examples=300, deadline=None)
@given(
    dl=st.floats(1e-4, 1e3),
    mu=st.floats(1e-3, 1e3),
    lam=st.sampled_from([0.0, 1e-6, 0.05, 0.5, 0.95, 1.0 - 1e-9]),
    nu=st.sampled_from([0.0, 1e-6, 0.1, 0.6, 10.0]),
    kind=st.sampled_from(["exact", "cis", "greedy", "approx1", "approx2", "approx3"]),
)
def test_value_lies_below_the_slope_line(dl, mu, lam, nu, kind):
    # tau on the page's own scale and far beyond it; every later tau against the line from every tau_0
    tau = np.concatenate([[0.0], np.geomspace(1e-6, 1e3, 80) / dl])
    pages = pages_from(dl, mu, lam, nu, len(tau))
    if kind.startswith("approx"):
        v = crawl_value(tau, pages, "approx", int(kind[-1]))
    else:
        v = crawl_value(tau, pages, kind)
    a = dl if kind == "greedy" else (1.0 - lam) * dl
    s = mu * h(a * tau)
    for i in range(len(tau) - 1):
        line = v[i] + s[i] * (tau[i + 1:] - tau[i])
        # rounding of V (~1e-15 relative) is what the scheduler's 1e-11 inflation covers
        assert np.all(v[i + 1:] <= line + 1e-13 * np.abs(v[i + 1:])), (kind, i)


@settings(max_examples=300, deadline=None)
@given(
    dl=st.floats(1e-4, 1e3),
    mu=st.floats(1e-3, 1e3),
    lam=st.sampled_from([0.0, 1e-6, 0.05, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0 - 1e-9]),
    nu=st.sampled_from([0.0, 1e-6, 0.05, 0.2, 0.58, 1.0, 3.0, 10.0]),
    kind=st.sampled_from(["exact", "cis", "greedy", "approx1", "approx2", "approx3"]),
)
def test_value_over_tau_squared_does_not_increase(dl, mu, lam, nu, kind):
    # the lines bounding sqrt V (freshcore._schedule, "The start"): V(tau)/tau**2 does not increase, so
    # sqrt V(tau) <= sqrt V(tau_0) tau/tau_0 for tau >= tau_0; and V(tau) <= (mu alpha/2) tau**2.  tau on the
    # page's own scale, far beyond it and, where signals are worth much (large gamma beta), across the
    # signals' steps beta
    pages1 = pages_from(dl, mu, lam, nu)
    beta = float(pages1.beta[0]) if kind != "greedy" else math.inf
    tau = np.geomspace(1e-6, 1e3, 400) / dl
    if 0.0 < beta < 1e6 / dl:
        tau = np.sort(np.concatenate([tau, beta * (np.arange(1, 9)[:, None] + np.linspace(-0.05, 0.5, 80)).ravel()]))
    pages = pages_from(dl, mu, lam, nu, len(tau))
    if kind.startswith("approx"):
        v = crawl_value(tau, pages, "approx", int(kind[-1]))
    else:
        v = crawl_value(tau, pages, kind)
    a = dl if kind == "greedy" else (1.0 - lam) * dl
    ratio = v / tau**2
    # each ratio at most every earlier one (rounding of V: 1e-13 relative, what the scheduler's margin covers)
    running_min = np.minimum.accumulate(ratio)
    assert np.all(ratio <= running_min * (1 + 1e-13) + 1e-300), (kind, int(np.argmax(ratio > running_min)))
    assert np.all(v <= 0.5 * mu * a * tau**2 * (1 + 1e-13) + 1e-300), kind


def test_greedy_bound_is_the_tangent_beyond_the_inflection():
    # Greedy: dV/dtau = mu Delta tau e^{-Delta tau}: the bound is mu/e at Delta tau <= 1 and the slope itself beyond
    pages = pages_from(2.0, 3.0, 0.0, 0.0)
    eps = 1e-6
    for x in (0.5, 1.0, 3.0):
        t = x / 2.0
        slope = (crawl_value(t + eps, pages, "greedy")[0] - crawl_value(t - eps, pages, "greedy")[0]) / (2 * eps)
        assert abs(slope - 3.0 * x * np.exp(-x)) < 1e-6
        assert slope <= 3.0 * h(np.array(x)) * (1 + 1e-6)


@settings(max_examples=200, deadline=None)
@given(dl=st.floats(1e-4, 1e3), mu=st.floats(1e-3, 1e3))
def test_greedy_log_value_lies_below_its_tangents(dl, mu):
    # Greedy V = (mu/Delta) F(Delta tau), F the Gamma(2, 1) distribution function: ln V is concave, so
    # every tangent of ln V (slope V'/V = mu x e^{-x} / V) bounds it on both sides; the scheduler's lines
    # for Greedy where V is convex are these tangents.
    tau = np.geomspace(1e-6, 60.0, 120) / dl
    v = crawl_value(tau, pages_from(dl, mu, 0.0, 0.0, len(tau)), "greedy")
    x = dl * tau
    ok = v > 0
    tau, v, x = tau[ok], v[ok], x[ok]
    sigma = mu * x * np.exp(-x) / v
    lv = np.log(v)
    for i in range(0, len(tau), 7):
        line = lv[i] + sigma[i] * (tau - tau[i])
        assert np.all(lv <= line + 1e-12 * (1.0 + np.abs(lv))), i


@settings(max_examples=100, deadline=None)
@given(dl=st.floats(1e-4, 1e3), mu=st.floats(1e-3, 1e3), tau1=st.floats(1e-6, 1e3))
def test_greedy_log_bound_from_zero(dl, mu, tau1):
    # a just-crawled page: V(tau) <= (mu/e) tau and ln tau <= ln tau1 - 1 + tau/tau1 for any tau1 > 0
    tau = np.geomspace(1e-8, 1e4, 200)
    v = crawl_value(tau, pages_from(dl, mu, 0.0, 0.0, len(tau)), "greedy")
    bound = np.log(mu / np.e) + np.log(tau1) - 1.0 + tau / tau1
    ok = v > 0
    assert np.all(np.log(v[ok]) <= bound[ok] + 1e-12 * (1.0 + np.abs(bound[ok])))


# ---------------------------------------------------------------------------
# Greedy's park keys (park_time of freshcore._schedule_lines): a parked page's key is a time before which its
# computed value is below the park level, and (up to the 1e-9 shade and a few ulps) the time it reaches it


def park_times(last, dl, mu, level, many=False):
    """park_time's keys, or (many) the settle's: x for all pages at once by the vector kernel where there is one."""
    from freshcore import _schedule_lines

    n = len(dl)
    out = np.empty(n)
    kernel = _schedule_lines.park_time_many_kernel if many else _schedule_lines.park_time_kernel
    kernel(np.full(n, float(last)), np.asarray(dl, float), np.asarray(mu, float), level, out)
    return out


@settings(max_examples=300, deadline=None)
@given(
    dl=st.floats(1e-4, 1e3),
    mu=st.floats(1e-3, 1e3),
    y=st.one_of(st.floats(1e-12, 1.0 - 1e-12), st.sampled_from([1e-300, 1e-12, 0.5, 1.0 - 1e-12, 1.0 - 2e-9])),
    last=st.sampled_from([0.0, -123.4, 1e6]),
)
# where the Lambert W leaves its branch-point series, x is up to 2.3e-14 high (the kernel takes it 5e-14 lower)
@example(dl=1.0, mu=1.0, y=0.005013274331142985, last=0.0)
@example(dl=1.0, mu=1.0, y=0.03391326338475057, last=0.0)
@example(dl=1.0, mu=1.0, y=0.023892109376537407, last=0.0)
@example(dl=1.0, mu=1.0, y=1.2249206475770821e-40, last=0.0)
@pytest.mark.parametrize("many", [False, True])
def test_greedy_park_key_is_a_tight_lower_bound(dl, mu, y, last, many):
    # (many: the settle's keys, x by the periodic rates' vector kernel; its lanes past the page, at c = 1/2,
    # dropped)
    import mpmath

    level = y * mu / dl
    key = park_times(last, [dl], [mu], level, many)[0]
    pages = pages_from(dl, mu, 0.0, 0.0)
    if not key < np.inf:
        # never reached: the page's largest value mu/Delta is below the shaded level
        assert level * (1 - 1e-9) * dl / mu >= 1.0
        return
    # below the level at every tick before the key (tau as the scheduler computes it: t - last)
    for t in (np.nextafter(key, -np.inf), key - 1e-9 * abs(key - last), last + 0.5 * (key - last)):
        if t >= last:
            assert crawl_value(t - last, pages, "greedy")[0] < level
    # and the time it reaches the shaded level, less a few ulps of the times (50-digit reference for
    # the double y = P (1 - 1e-9) Delta/mu the kernel solves for), which is before the level's own
    y_shaded = (level * (1.0 - 1e-9)) * dl / mu
    # (1 - y) must keep y's digits near the branch point: 50 digits more than y's exponent
    with mpmath.workdps(50 + int(-math.log10(y_shaded))):

        def crossing(yy):
            return mpmath.mpf(last) + (-1 - mpmath.lambertw(-(1 - yy) / mpmath.e, -1).real) / mpmath.mpf(dl)

        exact = crossing(mpmath.mpf(y_shaded))
        slack = 1e-13 * float(exact - last) + 32 * np.finfo(float).eps * (abs(last) + abs(float(exact))) + 1e-300
        assert exact - slack <= key <= exact
        assert key < crossing(mpmath.mpf(level) * mpmath.mpf(dl) / mpmath.mpf(mu))


@pytest.mark.parametrize("many", [False, True])
def test_greedy_park_key_extremes(many):
    # level 0 or below the value at last: the key is last (due at once); mu/Delta below the level: never
    k = park_times(5.0, [2.0, 2.0, 2.0], [3.0, 3.0, 3.0], 0.0, many)
    assert (k <= 5.0).all() and (k > 5.0 - 1e-12).all()
    assert park_times(0.0, [2.0], [3.0], 1.5 / (1 - 1e-9) * (1 + 1e-15), many)[0] == np.inf  # V(inf) = mu/Delta
    # at mu/Delta itself the shaded level (1 - 1e-9) is reached (and the page then leaves the park: its
    # value is above the 1 - 2e-9 below which pages are parked)
    assert park_times(0.0, [2.0], [3.0], 1.5, many)[0] < np.inf


def test_settle_park_keys_agree_with_park_time():
    # the settle's keys (x by the vector kernel, many pages at once, lanes past the end dropped; a page at or
    # above mu/Delta: inf) are park_time's on every page, over shares y from 1e-300 to 1 - 1e-16: each is within
    # ~3e-14 of the 50-digit crossing of the shaded level (1e-14 of it the shade of x; the scalar Lambert W's
    # error reaches 2e-14 near y = 0.006, above its series, the kernel's 2e-15), so within 6e-14 of each other
    # (test_greedy_park_key_is_a_tight_lower_bound checks each against the crossing)
    from freshcore import _schedule_lines

    rng = np.random.default_rng(3)
    n = 20_001  # (not a multiple of any vector width)
    y = np.concatenate([10.0 ** rng.uniform(-300, 0, n // 2), 1.0 - 10.0 ** rng.uniform(-16, 0, n - n // 2)])
    y[:5] = [0.0, 1.0, 1.5, 0.005, 0.5]
    dl = 10.0 ** rng.uniform(-3, 3, n)
    mu = 10.0 ** rng.uniform(-3, 3, n)
    level = 1.0
    dl = y * mu / (level * (1.0 - 1e-9))  # P Delta/mu = y (up to rounding)
    dl[0] = 1.0
    mu[0] = 1e300  # y = 1e-300: the series
    a = park_times(0.0, dl, mu, level)
    b = park_times(0.0, dl, mu, level, True)
    assert np.array_equal(np.isinf(a), np.isinf(b)) and np.isinf(a).any()
    ok = np.isfinite(a) & (dl > 0)
    assert np.all(np.abs(a[ok] - b[ok]) <= 6e-14 * np.abs(a[ok]) + 1e-300)
    assert _schedule_lines.PARK_X_LEVEL in (-1, 0, 1, 2)


# ---------------------------------------------------------------------------
# the tick's scan of the bucket tops (SSE2 on x86-64, 64 buckets at a time) against numpy


@pytest.mark.parametrize("n", [0, 1, 2, 3, 63, 64, 65, 66, 127, 128, 129, 200])
def test_scan_kernel_matches_numpy(n):
    from freshcore import _schedule_scan

    rng = np.random.default_rng(n)
    for f in (0.0, 1.0):
        for frac in (0.0, 0.05, 0.5, 1.0):  # the share of buckets that pass
            asl = 10.0 ** rng.uniform(-5.0, 5.0, n)
            atk = rng.uniform(0.0, 100.0, n)
            act = rng.permutation(n + 10)[:n].astype(np.int32)
            t, tpad, mg = 150.0, 8 * np.finfo(float).eps * 150.0, 1e-11
            u = asl * (t - atk)
            want = (u + mg * (f + np.abs(u))) + asl * tpad  # _bound's arithmetic, in its order
            if n and 0.0 < frac < 1.0:
                th = np.sort(want)[int((1.0 - frac) * (n - 1))]  # one of the bounds: equal passes
            else:
                th = -np.inf if frac == 1.0 else np.inf
            abd, cb, ub = np.empty(n), np.empty(n + 1, np.int32), np.empty(n + 1)
            k = _schedule_scan.scan_kernel(asl, atk, act, t, tpad, mg, f, th, abd, cb, ub)
            np.testing.assert_array_equal(abd, want)  # bit for bit
            passing = np.flatnonzero(want >= th)
            assert k == len(passing)
            np.testing.assert_array_equal(cb[:k], act[passing])  # in act's order
            np.testing.assert_array_equal(ub[:k], want[passing])
            cb2, ub2 = np.empty(n + 1, np.int32), np.empty(n + 1)
            k2 = _schedule_scan.pick_kernel(abd, act, th, cb2, ub2)
            assert k2 == k
            np.testing.assert_array_equal(cb2[:k], cb[:k])
            np.testing.assert_array_equal(ub2[:k], ub[:k])


# ---------------------------------------------------------------------------
# the bounds of pages of the other kinds (freshcore._schedule, "The park"): psi, the lines from psi, the park keys

_KINDS = ["exact", "cis", "approx1", "approx2", "approx3"]


def values(tau, dl, mu, lam, nu, kind):
    pages = pages_from(dl, mu, lam, nu, len(tau))
    if kind.startswith("approx"):
        return crawl_value(tau, pages, "approx", int(kind[-1]))
    return crawl_value(tau, pages, kind)


def psi_bound(tau, dl, lam, nu, kind):
    """The scheduler's bound of psi (``_schedule_pages.interval_bound``): min(tau, (tau + beta)/(1 + gamma beta)),
    tau for Greedy-CIS."""
    p = pages_from(dl, 1.0, lam, nu)
    beta, gamma = float(p.beta[0]), float(p.gamma[0])
    if kind == "cis" or not 0.0 < beta < np.inf:
        return np.asarray(tau, dtype=float)
    return np.minimum(tau, (tau + beta) / (1.0 + gamma * beta) * (1.0 + 1e-15))


_PARAMS = dict(
    dl=st.floats(1e-3, 1e2),
    mu=st.floats(1e-2, 1e2),
    lam=st.sampled_from([0.0, 1e-6, 0.05, 0.5, 0.9, 0.99, 0.999, 1.0 - 1e-9]),
    nu=st.sampled_from([0.0, 1e-6, 0.05, 0.2, 0.58, 3.0]),
)


@settings(max_examples=200, deadline=None)
@given(**{k: v for k, v in _PARAMS.items() if k != "mu"})
def test_psi_is_one_lipschitz_and_below_its_wald_bound(dl, lam, nu):
    # psi(tau) = E[time to the crawl of the threshold policy at tau]: psi(tau + h) <= psi(tau) + h, and by Wald's
    # identity (1 + gamma beta) psi(tau) = E[effective elapsed time at the crawl] <= tau + beta; across the
    # signals' steps i beta too
    from freshcore.value import crawl_interval

    p = pages_from(dl, 1.0, lam, nu)
    beta = float(p.beta[0])
    tau = np.geomspace(1e-6, 1e3, 300) / dl
    if 0.0 < beta < 1e6 / dl:
        tau = np.sort(np.concatenate([tau, beta * (np.arange(1, 9)[:, None] + np.linspace(-0.05, 0.5, 60)).ravel()]))
    psi = crawl_interval(tau, pages_from(dl, 1.0, lam, nu, len(tau)))
    assert np.all(psi <= psi_bound(tau, dl, lam, nu, "exact") * (1 + 1e-13) + 1e-300)
    assert np.all(np.diff(psi) <= np.diff(tau) * (1 + 1e-12) + 1e-13 * psi[1:])


@settings(max_examples=300, deadline=None)
@given(**_PARAMS, kind=st.sampled_from(_KINDS))
def test_value_lies_below_the_psi_slope_line(dl, mu, lam, nu, kind):
    # the lines bounding V of the kinds other than Greedy take the smaller slope that psi's bounds give
    from freshcore import _schedule_lines

    tau = np.concatenate([[0.0], np.geomspace(1e-6, 1e3, 80) / dl])
    v = values(tau, dl, mu, lam, nu, kind)
    p = pages_from(dl, mu, lam, nu)
    a = (1.0 - lam) * dl
    b = np.inf if kind == "cis" else float(p.beta[0])
    g = float(p.gamma[0])
    n = len(tau)
    s = np.empty(n)
    _schedule_lines.psi_slope_kernel(np.full(n, mu), np.full(n, a), tau, psi_bound(tau, dl, lam, nu, kind),
                                     np.full(n, b), np.full(n, g), s)
    assert np.all(s <= mu * h(a * tau) * (1 + 1e-15))  # (never looser than the slope without psi)
    for i in range(n - 1):
        line = v[i] + s[i] * (tau[i + 1:] - tau[i])
        assert np.all(v[i + 1:] <= line + 1e-13 * np.abs(v[i + 1:])), (kind, i)


@settings(max_examples=300, deadline=None)
@given(**_PARAMS, kind=st.sampled_from(_KINDS), share=st.floats(1e-9, 1.2), at=st.floats(0.0, 30.0))
@example(dl=1.3828049733463343, mu=5.619767099683636, lam=0.0, nu=3.0, kind="exact", share=0.99, at=19.38)
# v0 ~ 1.5e-312 (subnormal): P/v0 overflowed to inf and the key said "never"
@example(dl=1.0, mu=1.0, lam=0.0, nu=0.0, kind="exact", share=1.0, at=1.708366484655531e-156)
def test_park_key_of_every_kind_is_a_lower_bound(dl, mu, lam, nu, kind, share, at):
    # a page of value v0 at tau0 stays below the level until its key (the later of the times the curve from
    # psi's bound and the line bounding sqrt V reach the shaded level), and never reaches it when the key is inf
    from freshcore import _schedule_lines

    a = (1.0 - lam) * dl
    tau0 = at / a if at > 0 else 0.0
    v0 = values(np.array([tau0]), dl, mu, lam, nu, kind)[0]
    level = v0 + (mu / dl - v0) * share
    if not level > v0:
        return
    one = np.ones(1)
    key = np.empty(1)
    _schedule_lines.reach_time_kernel(0.0 * one, tau0 * one, v0 * one, psi_bound(tau0 * one, dl, lam, nu, kind),
                                      a * one, mu * one, level, key)
    d = key[0]
    if d == np.inf:
        later = tau0 + np.geomspace(1e-4, 1e4, 300) / a
        assert np.all(values(later, dl, mu, lam, nu, kind) < level)
        return
    assert d >= 0.0
    before = tau0 + d * np.concatenate([np.linspace(0.0, 1.0, 120)[1:], [1.0 - 1e-12, 1.0]])
    assert np.all(values(before, dl, mu, lam, nu, kind) < level), kind
