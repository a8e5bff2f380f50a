"""Polled, lossy change signals (freshcore.polled_signals, issue 19): the posterior per window against Monte
Carlo, psi / w / V against an independent 50-digit recursion and against Monte Carlo of the threshold policy,
the limits (Greedy, continuous signals), the properties a scheduler relies on, and bad input."""

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from freshcore import PageModel
from freshcore.polled_signals import (
    PolledState,
    moved_weight,
    polled_fresh_time,
    polled_interval,
    polled_staleness,
    polled_value,
    regular_staleness,
    window_staleness,
)
from freshcore.special import residual_exp
from freshcore.value import crawl_value

# ---------------------------------------------------------------------------------------------------------
# Independent references, written from the model (no shared code with the module)


def ref_sums(iota, dl, lam, nu, w, dps=50):
    """``(psi, w, V/mu)`` in ``dps`` digits from the renewal recursion of the threshold policy.

    From the start of a window at remainder ``r = iota - s`` the page is crawled in the drift if
    ``r <= Delta w`` (after ``r/Delta``, fresh for ``(1 - e^{-r})/Delta`` in expectation); otherwise the window
    is lived in full and the poll moves ``r`` to ``r - alpha w`` (not moved) or ``r - alpha w - b`` (moved,
    probability q; a crawl at the poll if that is ``<= 0``), the process being the same from there on:

    ``psi(r) = w + (1 - q) psi(r - alpha w) + q psi(r - alpha w - b)``,
    ``F(r) = (1 - e^{-Delta w})/Delta + e^{-alpha w} ((1 - q) F(r - alpha w) + q e^{-b} F(r - alpha w - b))``,

    evaluated backwards over the lattice of remainders (``alpha = 0``: the recursion in ``b`` alone).
    """
    with mp.workdps(dps):
        dl, lam, nu, w, iota = (mp.mpf(float(v)) for v in (dl, lam, nu, w, iota))
        ld = lam * dl
        a = dl - ld
        q = 1 - mp.exp(-(ld + nu) * w)
        b = ld * w - mp.log((1 - mp.exp(-nu * w)) / q)
        dw = dl * w
        zero = (mp.mpf(0), mp.mpf(0))

        def leaf(r):
            return r / dl, (1 - mp.exp(-r)) / dl

        if a == 0:
            memo = {}
            for j in range(int(mp.floor(iota / b)) + 2, -1, -1):
                r = iota - b * j
                if r <= 0:
                    memo[j] = zero
                elif r <= dw:
                    memo[j] = leaf(r)
                else:  # psi(r) = w + (1 - q) psi(r) + q psi(r - b)
                    p1, f1 = memo[j + 1]
                    memo[j] = ((w + q * p1) / q, ((1 - mp.exp(-dw)) / dl + q * mp.exp(-b) * f1) / q)
            psi, fr = memo[0]
        else:
            n_rows = int(mp.floor(iota / (a * w))) + 2
            n_moved = int(mp.floor(iota / b)) + 2
            nxt = {}
            for n in range(n_rows, -1, -1):
                cur = {}
                for j in range(min(n, n_moved), -1, -1):
                    r = iota - a * w * n - b * j
                    if r <= 0:
                        cur[j] = zero
                    elif r <= dw:
                        cur[j] = leaf(r)
                    else:
                        p0, f0 = nxt[j]
                        p1, f1 = nxt.get(j + 1, zero) if r - a * w - b > 0 else zero
                        cur[j] = (w + (1 - q) * p0 + q * p1,
                                  (1 - mp.exp(-dw)) / dl + mp.exp(-a * w) * ((1 - q) * f0 + q * mp.exp(-b) * f1))
                nxt = cur
            psi, fr = nxt[0]
        return psi, fr, fr - mp.exp(-iota) * psi


def simulate_windows(rng, n, dl, lam, nu, before, after):
    """``n`` windows of length ``before + after`` with a crawl ``before`` into each: (moved, unchanged after
    the crawl), from explicit Poisson changes (signalled with probability lam) and false moves."""
    length = before + after
    k = rng.poisson(dl * length, n)
    owner = np.repeat(np.arange(n), k)
    when = rng.uniform(0.0, length, k.sum())
    signalled = rng.random(k.sum()) < lam
    moved = (np.bincount(owner[signalled], minlength=n) > 0) | (rng.poisson(nu * length, n) > 0)
    changed_after = np.bincount(owner[when > before], minlength=n) > 0
    return moved, ~changed_after


def simulate_cycles(rng, n, iota, dl, lam, nu, w):
    """Monte Carlo of the threshold policy ``crawl when s >= iota`` over ``n`` crawl cycles that start at a
    poll: (cycle lengths, fresh times), from explicit events; the posterior from SPEC section 3b's formulas."""
    gamma, alpha = lam * dl + nu, (1 - lam) * dl
    stay_moved = math.exp(-dl * w) * -math.expm1(-nu * w) / -math.expm1(-gamma * w)  # P(no change | moved)
    add_moved = -math.log(stay_moved)  # a moved window's weight
    length = np.zeros(n)
    fresh = np.zeros(n)
    s = np.zeros(n)
    changed = np.zeros(n, dtype=bool)
    alive = np.arange(n)
    while len(alive):
        m = len(alive)
        k = rng.poisson(dl * w, m)
        first = np.where(k > 0, w * (1.0 - rng.random(m) ** (1.0 / np.maximum(k, 1))), np.inf)
        moved = (rng.binomial(k, lam) + rng.poisson(nu * w, m)) > 0
        drift_hit = (iota - s[alive]) / dl  # s reaches iota in the drift after this long
        stop = np.minimum(drift_hit, w)
        fresh[alive] += np.where(changed[alive], 0.0, np.minimum(first, stop))
        length[alive] += stop
        changed[alive] |= first < stop
        s_new = s[alive] + np.where(moved, add_moved, alpha * w)
        s[alive] = s_new
        alive = alive[(drift_hit > w) & (s_new < iota)]
    return length, fresh


# ---------------------------------------------------------------------------------------------------------
# The posterior per window (SPEC section 3b) and the state


@pytest.mark.parametrize("dl, lam, nu, before, after", [
    (1.0, 0.6, 0.3, 0.0, 1.0),   # SPEC section 3b's window
    (3.0, 0.9, 0.1, 0.0, 0.3),
    (2.0, 0.3, 0.5, 0.4, 0.3),   # a window cut by the crawl
    (0.5, 1.0, 0.2, 0.7, 0.5),
])
def test_window_posterior_matches_monte_carlo(dl, lam, nu, before, after):
    rng = np.random.default_rng([19, int(100 * dl), int(100 * after)])
    n = 2_000_000
    moved, fresh = simulate_windows(rng, n, dl, lam, nu, before, after)
    pages = PageModel(dl, 1.0, lam, nu)
    for flag in (False, True):
        sel = fresh[moved == flag]
        p = sel.mean()
        se = math.sqrt(p * (1 - p) / len(sel))
        want = math.exp(-window_staleness(after, flag, pages, before)[0])
        assert abs(p - want) <= 3 * se, (flag, p, want, se)
    # the closed forms of SPEC section 3b for a whole window
    if before == 0.0:
        gamma = lam * dl + nu
        assert window_staleness(after, False, pages)[0] == pytest.approx((1 - lam) * dl * after, rel=1e-15)
        spec = math.exp(-dl * after) * (1 - math.exp(-nu * after)) / (1 - math.exp(-gamma * after))
        assert math.exp(-window_staleness(after, True, pages)[0]) == pytest.approx(spec, rel=1e-14)


def test_log_posterior_matches_monte_carlo_per_flag_pattern():
    """A crawl inside the first of three windows: P(unchanged since the crawl | the three flags) for each of the
    eight patterns, against exp(-polled_staleness) (the windows' factors multiply)."""
    rng = np.random.default_rng(1919)
    dl, lam, nu, w, crawl = 1.5, 0.7, 0.4, 0.5, 0.2
    n = 2_000_000
    k = rng.poisson(dl * 3 * w, n)
    owner = np.repeat(np.arange(n), k)
    when = rng.uniform(0.0, 3 * w, k.sum())
    sig = rng.random(k.sum()) < lam
    false_k = rng.poisson(nu * 3 * w, n)
    f_owner = np.repeat(np.arange(n), false_k)
    f_when = rng.uniform(0.0, 3 * w, false_k.sum())
    flags = []
    for win in range(3):
        lo, hi = win * w, (win + 1) * w
        a = np.bincount(owner[sig & (when > lo) & (when <= hi)], minlength=n) > 0
        b = np.bincount(f_owner[(f_when > lo) & (f_when <= hi)], minlength=n) > 0
        flags.append(a | b)
    fresh = np.bincount(owner[when > crawl], minlength=n) == 0
    code = flags[0] * 4 + flags[1] * 2 + flags[2] * 1
    for pattern in range(8):
        sel = fresh[code == pattern]
        p = sel.mean()
        se = math.sqrt(p * (1 - p) / len(sel))
        bits = [(pattern >> 2) & 1, (pattern >> 1) & 1, pattern & 1]
        st = polled_staleness(3 * w, crawl, [0.0, w, 2 * w, 3 * w], [False, *bits], dl, lam, nu)
        assert abs(p - math.exp(-st.staleness)) <= 3 * se, (bits, p, math.exp(-st.staleness), se)


def test_moved_weight_limits_and_bounds():
    pages = PageModel([1.0, 1.0, 2.0, 0.7], 1.0, [0.5, 0.0, 0.9, 0.3], [0.25, 0.3, 0.0, 0.2])
    b = moved_weight(1e-9, pages)
    assert b[0] == pytest.approx(math.log(3.0), rel=1e-8)  # log(gamma/nu) = alpha beta
    assert b[1] == 0.0 and b[2] == math.inf
    for w in (0.01, 0.3, 1.0, 5.0):
        bw = moved_weight(w, pages)
        assert (bw >= pages.recall * pages.change_rate * w).all()
        with mp.workdps(40):
            mw = mp.mpf(w)
            mp_b = [float(mp.mpf(l_) * d * mw - mp.log(mp.expm1(-n_ * mw) / mp.expm1(-(l_ * d + n_) * mw)))
                    for d, l_, n_ in zip(pages.change_rate[[0, 3]], pages.recall[[0, 3]], pages.false_rate[[0, 3]])]
        np.testing.assert_allclose(bw[[0, 3]], mp_b, rtol=1e-14)
    # nu -> inf: a move is certain and says nothing, b -> lambda Delta w
    big = moved_weight(0.1, PageModel(1.0, 1.0, 0.5, 1e4))[0]
    assert big == pytest.approx(0.05, rel=1e-15)


def test_polled_staleness_equals_regular_polls_and_parts():
    dl, lam, nu, w = 1.3, 0.6, 0.35, 0.25
    pages = PageModel(dl, 1.0, lam, nu)
    rng = np.random.default_rng(7)
    for _ in range(20):
        n = int(rng.integers(0, 12))
        flags = rng.random(n) < 0.4
        tau = n * w + rng.uniform(0, w)
        crawl = 10.0
        polls = crawl + w * np.arange(0, n + 1)  # a poll at the crawl, then every w
        st = polled_staleness(crawl + tau, crawl, polls, [True, *flags], dl, lam, nu)
        assert isinstance(st, PolledState)
        reg = regular_staleness(tau, int(flags.sum()), w, pages)[0]
        assert st.staleness == pytest.approx(reg, rel=1e-13, abs=1e-15)
        assert st.windows == n and st.moved_windows == int(flags.sum())
        assert st.staleness == pytest.approx(st.at_poll + dl * (crawl + tau - st.since), rel=1e-13)
    # nothing polled since the crawl: the prior
    st = polled_staleness(5.0, 3.0, [1.0, 2.0], [True, True], dl, lam, nu)
    assert st == PolledState(dl * 2.0, 0.0, 3.0, 0, 0)
    # no poll before the crawl in the log: its first poll only opens it (its flag is ignored)
    st = polled_staleness(3.5, 1.0, [2.0, 3.0], [True, False], dl, lam, nu)
    assert st.staleness == pytest.approx(dl * 1.0 + (1 - lam) * dl * 1.0 + dl * 0.5, rel=1e-14)
    assert st.windows == 1 and st.moved_windows == 0
    # a window cut by the crawl
    st = polled_staleness(2.0, 1.25, [1.0, 2.0], [False, True], dl, lam, nu)
    assert st.staleness == pytest.approx(window_staleness(0.75, True, pages, 0.25)[0], rel=1e-15)


# ---------------------------------------------------------------------------------------------------------
# psi, w and V: against the 50-digit recursion and Monte Carlo


GRID = [  # (Delta, lambda, nu, w); thresholds off the lattice levels (psi and w jump at those)
    (1.0, 0.2, 0.1, 0.1), (1.0, 0.6, 0.5, 1.0), (1.0, 0.95, 0.1, 0.1), (1.0, 1.0, 0.5, 0.1),
    (0.3, 0.6, 0.1, 1.0), (0.3, 0.95, 0.5, 0.1), (3.0, 0.2, 0.5, 0.1), (3.0, 0.6, 0.1, 1.0),
    (3.0, 1.0, 0.1, 1.0), (1.0, 1e-3, 0.5, 0.1), (5.0, 0.5, 0.1, 0.01), (1.0, 0.5, 1e-4, 0.3),
    (0.02, 0.5, 0.6, 1.0), (1.0, 0.5, 0.0, 0.3),
]


@pytest.mark.parametrize("dl, lam, nu, w", GRID)
def test_values_match_50_digit_recursion(dl, lam, nu, w):
    pages = PageModel(dl, 2.5, lam, nu)
    worst = 0.0
    for iota in (1.3e-6, 0.0137, 0.3719, 1.2931, 4.1377):
        if nu == 0.0:
            continue  # b = inf: the recursion's b is infinite; checked in test_no_false_signals
        psi, fr, val = (float(v) for v in ref_sums(iota, dl, lam, nu, w))
        got = (polled_interval(iota, w, pages)[0], polled_fresh_time(iota, w, pages)[0],
               polled_value(iota, w, pages)[0] / 2.5)
        for g, r in zip(got, (psi, fr, val)):
            worst = max(worst, abs(g - r) / r)
    assert worst <= 1e-13  # measured: below 1.2e-15 on this grid


def test_no_false_signals():
    """nu = 0: a move proves a change (b = inf); only the unmoved paths stay alive."""
    dl, lam, w, iota = 1.0, 0.5, 0.3, 1.2345
    pages = PageModel(dl, 1.0, lam, 0.0)
    q = -math.expm1(-lam * dl * w)
    aw = (1 - lam) * dl * w
    psi = fr = 0.0
    n = 0
    while True:  # rows of unmoved windows: weight (1 - q)^n at level aw n
        x = aw * n
        alive = n == 0 or x + lam * dl * w < iota
        if not alive:
            break
        d = min(dl * w, iota - x)
        psi += (1 - q) ** n * d / dl
        fr += (1 - q) ** n * math.exp(-x) * -math.expm1(-d) / dl
        n += 1
    assert polled_interval(iota, w, pages)[0] == pytest.approx(psi, rel=1e-14)
    assert polled_fresh_time(iota, w, pages)[0] == pytest.approx(fr, rel=1e-14)


@pytest.mark.parametrize("dl, lam, nu, w, iota", [
    (1.0, 0.5, 0.3, 0.1, 0.5317),
    (2.0, 0.95, 0.5, 0.3, 1.3071),
])
def test_psi_and_fresh_time_match_monte_carlo(dl, lam, nu, w, iota):
    _check_monte_carlo(dl, lam, nu, w, iota, 200_000)


@pytest.mark.slow
@pytest.mark.parametrize("dl, lam, nu, w, iota", [
    (1.0, 0.5, 0.3, 0.1, 0.5317), (1.0, 0.2, 0.5, 1.0, 4.0113), (0.5, 0.999, 0.6, 0.1, 0.9071),
    (1.0, 0.9, 0.3, 1.0, 2.0117), (2.0, 0.95, 0.5, 0.3, 1.3071), (0.3, 0.7, 0.1, 1.0, 0.8113),
    (1.0, 1.0, 0.3, 0.3, 1.5031), (4.0, 0.5, 0.5, 0.3, 2.2371),
])
def test_psi_and_fresh_time_match_monte_carlo_long(dl, lam, nu, w, iota):
    _check_monte_carlo(dl, lam, nu, w, iota, 1_000_000)


def _check_monte_carlo(dl, lam, nu, w, iota, n):
    rng = np.random.default_rng([19, int(1000 * iota)])
    length, fresh = simulate_cycles(rng, n, iota, dl, lam, nu, w)
    pages = PageModel(dl, 1.0, lam, nu)
    psi = polled_interval(iota, w, pages)[0]
    fr = polled_fresh_time(iota, w, pages)[0]
    assert abs(length.mean() - psi) <= 3 * length.std() / math.sqrt(n), (length.mean(), psi)
    assert abs(fresh.mean() - fr) <= 3 * fresh.std() / math.sqrt(n), (fresh.mean(), fr)


# ---------------------------------------------------------------------------------------------------------
# Limits


@pytest.mark.parametrize("w", [1e-3, 0.1, 1.0, 7.0, np.inf])
def test_uninformative_signals_give_greedy_exactly(w):
    s = np.array([1e-7, 0.01, 0.3, 1.0, 3.7, 20.0, np.inf])
    dl = 0.8
    pages = PageModel(np.full(len(s), dl), 1.7, 0.0, 0.4)  # lambda = 0: b = 0, s = Delta tau
    greedy = np.where(np.isinf(s), 1.7 / dl, 1.7 * residual_exp(1, np.where(np.isinf(s), 0.0, s)) / dl)
    np.testing.assert_allclose(polled_value(s, w, pages), greedy, rtol=1e-15)
    np.testing.assert_allclose(polled_interval(s[:-1], w, pages[:-1]), s[:-1] / dl, rtol=1e-15)


def test_many_false_signals_give_greedy():
    """nu w = 1000: every window moves and says nothing (q = 1 - e^-1000, b - lambda Delta w = O(e^-1000))."""
    s = np.array([0.0137, 0.3719, 1.2931, 4.1377])
    dl, mu = 1.1, 0.9
    pages = PageModel(np.full(len(s), dl), mu, 0.6, 1e4)
    np.testing.assert_allclose(polled_value(s, 0.1, pages), mu * residual_exp(1, s) / dl, rtol=1e-13)


@pytest.mark.parametrize("dl, lam, nu, iota", [(1.0, 0.5, 0.3, 0.8113), (1.0, 0.9, 0.3, 1.5031),
                                               (0.5, 0.3, 0.5, 0.4117)])
def test_continuous_polls_give_the_signal_value(dl, lam, nu, iota):
    """w -> 0: V_w(s) -> the value of Busa-Fekete et al. (2025) at tau_eff = s/alpha, at rate O(w)."""
    pages = PageModel(dl, 1.0, lam, nu)
    v0 = crawl_value(iota / pages.alpha[0], pages)[0]
    errs = []
    for w in (1e-2, 1e-3, 1e-4):
        errs.append(abs(polled_value(iota, w, pages)[0] - v0) / v0)
        assert errs[-1] <= 0.5 * w  # measured 0.10 w to 0.24 w
    assert errs[2] < errs[1] < errs[0]
    assert errs[2] / errs[0] < 0.03  # linear in w


# ---------------------------------------------------------------------------------------------------------
# Properties the scheduler relies on


def test_value_is_non_decreasing_with_upward_jumps_at_unmoved_breakpoints():
    dl, lam, nu, w, mu = 1.0, 0.7, 0.3, 0.5, 1.3
    pages = PageModel(dl, mu, lam, nu)
    s = np.linspace(0.0, 4.0, 1601)
    v = polled_value(s, w, PageModel(np.full(len(s), dl), mu, lam, nu))
    assert v[0] == 0.0 and (np.diff(v) >= 0).all()
    assert polled_value(np.inf, w, pages)[0] == pytest.approx(mu / dl, rel=1e-15)
    # the first unmoved breakpoint: x(1, 0) + lambda Delta w = Delta w, the poll now falls inside the cycle
    aw, lw = (1 - lam) * dl * w, lam * dl * w
    theta = aw + lw
    lo, hi = (polled_value(theta * (1 + e), w, pages)[0] for e in (-1e-12, 1e-12))
    q = -math.expm1(-(lam * dl + nu) * w)
    jump = mu / dl * (1 - q) * math.exp(-aw) * residual_exp(1, lw)
    assert hi - lo == pytest.approx(jump, rel=1e-6)
    # between breakpoints: dV/ds = mu e^{-s} psi(s)
    for x in (0.2311, 0.8917, 2.3713):
        h = 1e-6
        dv = (polled_value(x + h, w, pages)[0] - polled_value(x - h, w, pages)[0]) / (2 * h)
        assert dv == pytest.approx(mu * math.exp(-x) * polled_interval(x, w, pages)[0], rel=1e-6)


def test_value_bounds_for_parking():
    """V(s) <= mu min(1/Delta, R^1(s)/alpha): s_t >= alpha t along every path, so psi(s) <= s/alpha."""
    rng = np.random.default_rng(3)
    n = 200
    pages = PageModel(rng.uniform(0.05, 3, n), rng.uniform(0.1, 2, n), rng.uniform(0, 0.98, n),
                      rng.uniform(0.05, 1, n))
    s = rng.uniform(0, 6, n)
    w = rng.uniform(0.05, 1.5, n)
    v = polled_value(s, w, pages)
    mu, dl, alpha = pages.importance, pages.change_rate, pages.alpha
    assert (v <= mu * np.minimum(1 / dl, residual_exp(1, s) / alpha) * (1 + 1e-14)).all()
    assert (polled_interval(s, w, pages) <= s / alpha * (1 + 1e-14)).all()


def test_value_is_the_stationary_price_of_its_threshold():
    """With Lambda = V(iota0), the gain (mu w(iota) - Lambda)/psi(iota) of the thresholds is stationary at iota0
    (Theorem 2's argument), and equals mu e^{-iota0}, the freshness at the threshold.  Near iota0 (no breakpoint
    in between) iota0 is the best threshold; farther, past an unmoved breakpoint where psi and w jump, another
    can be better: V is the stationary price, not always the optimal one (module notes)."""
    dl, lam, nu, w, mu = 1.0, 0.6, 0.3, 0.3, 1.0
    pages = PageModel(dl, mu, lam, nu)

    def gain(iota, price):
        many = PageModel(np.full(len(iota), dl), mu, lam, nu)
        return (mu * polled_fresh_time(iota, w, many) - price) / polled_interval(iota, w, many)

    for iota0 in (0.6137, 1.4171):
        price = polled_value(iota0, w, pages)[0]
        g0 = gain(np.array([iota0]), price)[0]
        assert g0 == pytest.approx(mu * math.exp(-iota0), rel=1e-12)
        near = iota0 + np.linspace(-0.01, 0.01, 41)  # no breakpoint within 0.01 of either
        assert (gain(near, price) <= g0 + 1e-15).all()
        h = 1e-5
        slope = (gain(np.array([iota0 + h]), price)[0] - gain(np.array([iota0 - h]), price)[0]) / (2 * h)
        assert abs(slope) < 1e-8
    # the unmoved breakpoint at 0.63 (x(2, 0) + lambda Delta w): with the price of 0.6137, 0.6637 gains more
    price = polled_value(0.6137, w, pages)[0]
    assert gain(np.array([0.6637]), price)[0] > gain(np.array([0.6137]), price)[0] * (1 + 1e-3)


def test_large_staleness_is_the_saturated_value():
    """Past e^{-s} (1 + Delta s/alpha) < 1e-17 the value is mu/Delta and w is 1/Delta (module notes); below it
    the lattice sums approach them from below."""
    pages = PageModel([1.0, 0.02, 3.0], [1.0, 1.0, 2.0], [0.5, 0.3, 0.99], [0.3, 0.5, 0.2])
    cap = pages.importance / pages.change_rate
    for s in (46.0, 1e3, 1e12):
        np.testing.assert_array_equal(polled_value(s, 0.1, pages), cap)
        np.testing.assert_array_equal(polled_fresh_time(s, 0.1, pages), 1 / pages.change_rate)
    near = polled_value([30.0, 30.0], 0.1, pages[[0, 2]])
    assert (near <= cap[[0, 2]]).all() and (near >= cap[[0, 2]] * (1 - 1e-11)).all()


def test_special_pages():
    pages = PageModel([0.0, 1.0, 1.0], 1.0, [0.5, 0.5, 0.5], [0.3, 0.3, 0.3])
    assert polled_value([1.0, 0.0, np.inf], 0.5, pages).tolist() == [0.0, 0.0, 1.0]
    assert polled_interval([1.0, 0.0, np.inf], 0.5, pages).tolist() == [np.inf, 0.0, np.inf]
    assert polled_fresh_time([1.0, 0.0, np.inf], 0.5, pages).tolist() == [np.inf, 0.0, 1.0]


# ---------------------------------------------------------------------------------------------------------
# Bad input


def test_bad_input_is_refused_with_clear_errors():
    pages = PageModel([1.0, 1.0], 1.0, 0.5, 0.3)
    with pytest.raises(ValueError, match=r"'poll_interval' parameter of polled_value .* > 0"):
        polled_value(1.0, 0.0, pages)
    with pytest.raises(ValueError, match=r"poll_interval\[1\] = -1.0"):
        polled_value(1.0, [0.5, -1.0], pages)
    with pytest.raises(ValueError, match=r"staleness\[0\] = nan"):
        polled_value([np.nan, 1.0], 0.5, pages)
    with pytest.raises(ValueError, match=r"staleness\[1\] = -0.5"):
        polled_interval([1.0, -0.5], 0.5, pages)
    with pytest.raises(ValueError, match="length 2"):
        polled_fresh_time([1.0, 2.0, 3.0], 0.5, pages)
    with pytest.raises(TypeError, match="PageModel"):
        polled_value(1.0, 0.5, [1.0])
    with pytest.raises(ValueError, match=r"moved\[1\] = 2"):
        window_staleness(1.0, [1, 2], pages)
    with pytest.raises(ValueError, match=r"before_crawl\[0\] = -1.0"):
        window_staleness(1.0, True, pages, [-1.0, 0.0])
    with pytest.raises(ValueError, match=r"moved_windows\[0\] = 3.0 with 2 windows"):
        regular_staleness([2.5, 1.0], [3, 0], 1.0, pages)
    with pytest.raises(ValueError, match=r"moved_windows\[1\] = 0.5"):
        regular_staleness([2.5, 1.0], [1, 0.5], 1.0, pages)


def test_bad_poll_logs_are_refused():
    args = (1.0, 0.5, 0.3)
    with pytest.raises(ValueError, match=r"non-decreasing; poll_times\[2\] = 1.0 < poll_times\[1\] = 2.0"):
        polled_staleness(5.0, 0.0, [0.5, 2.0, 1.0], [0, 1, 0], *args)
    with pytest.raises(ValueError, match=r"poll_times\[1\] = nan"):
        polled_staleness(5.0, 0.0, [0.5, np.nan], [0, 1], *args)
    with pytest.raises(ValueError, match=r"poll_times\[1\] = 6.0"):  # a poll after now
        polled_staleness(5.0, 0.0, [0.5, 6.0], [0, 1], *args)
    with pytest.raises(ValueError, match=r"moved\[0\] = 0.5"):
        polled_staleness(5.0, 0.0, [0.5, 1.0], [0.5, 1], *args)
    with pytest.raises(TypeError, match="moved"):
        polled_staleness(5.0, 0.0, [0.5, 1.0], ["a", "b"], *args)
    with pytest.raises(ValueError, match="one length"):
        polled_staleness(5.0, 0.0, [0.5, 1.0], [True], *args)
    with pytest.raises(ValueError, match="'last_crawl'"):
        polled_staleness(5.0, 6.0, [0.5], [True], *args)
    with pytest.raises(ValueError, match="'now'"):
        polled_staleness(np.nan, 0.0, [0.5], [True], *args)
    with pytest.raises(ValueError, match="'recall'"):
        polled_staleness(5.0, 0.0, [0.5], [True], 1.0, 1.5, 0.3)


def test_refuses_pages_past_the_work_bound(monkeypatch):
    """The numpy reference (tests/_polled_reference.py) refuses past MAX_POINTS; the compiled path past
    MAX_STEPS (tests/test_polled_kernel.py)."""
    from _polled_reference import _page_sums

    import freshcore.polled_signals as ps

    monkeypatch.setattr(ps, "MAX_POINTS", 50)
    assert _page_sums(0.1, 1.0, 0.5, 0.3, 0.01)[2] > 0.0
    with pytest.raises(ValueError, match=r"MAX_POINTS = 50"):
        _page_sums(30.0, 1.0, 0.5, 0.3, 0.01)


def test_simulation_script_runs_quick():
    """bench/repro_polled.py --quick: every policy runs on the same events and the table prints."""
    import repro_polled

    out = repro_polled.main(["--quick", "--policies", *repro_polled.POLICIES])
    for run in out["runs"]:
        for key in ("greedy", "ncis", "opt001", ("polled", 0.5), ("ncis-fed", 0.5), ("polled+", 0.5),
                    ("ironed", 0.5), ("opt-polled", 0.5)):
            assert 0.0 < run[key] < 1.0, key


# ---------------------------------------------------------------------------------------------------------
# Delayed signals (exponential delays of known mean): the window factors with H = lambda Delta [Phi(p1 - c) -
# Phi(p0 - c)]


def test_delayed_posterior_matches_monte_carlo():
    """Changes over a long past, true signals delayed by Exp(theta), false moves undelayed; a crawl inside the
    first of two windows: P(unchanged since the crawl | both flags) against exp(-polled_staleness)."""
    rng = np.random.default_rng(1923)
    dl, lam, nu, theta = 0.8, 0.7, 0.3, 0.5
    crawl, polls, now = 0.0, [-0.2, 0.9, 1.6], 1.6
    n, t0 = 1_000_000, -12.0  # changes before t0 arrive before -0.2 with probability 1 - e^{-23.6}
    k = rng.poisson(dl * (now - t0), n)
    owner = np.repeat(np.arange(n), k)
    when = rng.uniform(t0, now, k.sum())
    sig = rng.random(k.sum()) < lam
    arrive = when + rng.exponential(theta, k.sum())
    unchanged = np.bincount(owner[when > crawl], minlength=n) == 0
    flags = []
    for lo, hi in itertools.pairwise(polls):
        true = np.bincount(owner[sig & (arrive > lo) & (arrive <= hi)], minlength=n) > 0
        flags.append(true | (rng.poisson(nu * (hi - lo), n) > 0))
    for f1 in (False, True):
        for f2 in (False, True):
            sel = unchanged[(flags[0] == f1) & (flags[1] == f2)]
            p = sel.mean()
            se = math.sqrt(p * (1 - p) / len(sel))
            st = polled_staleness(now, crawl, polls, [False, f1, f2], dl, lam, nu, signal_delay=theta)
            assert abs(p - math.exp(-st.staleness)) <= 3.5 * se, (f1, f2, p, math.exp(-st.staleness), se)
            # without the delay in the posterior the answer is off by many standard errors for a moved window
            if f1 or f2:
                plain = math.exp(-polled_staleness(now, crawl, polls, [False, f1, f2], dl, lam, nu).staleness)
                assert abs(p - plain) > 5 * se


def test_delayed_window_limits_and_parts():
    pages = PageModel([0.8, 1.5, 0.3], [1.0, 2.0, 0.5], recall=[0.7, 0.2, 0.95], false_rate=[0.3, 0.5, 0.05])
    for moved in (False, True):
        plain = window_staleness([0.7, 1.1, 0.4], moved, pages, [0.2, 0.0, 0.5])
        # None and 0 are no delay, the same bits
        assert np.array_equal(window_staleness([0.7, 1.1, 0.4], moved, pages, [0.2, 0.0, 0.5], signal_delay=0.0),
                              plain)
        # a tiny delay is close to none, a huge one makes moves say nothing about changes after the crawl
        near = window_staleness([0.7, 1.1, 0.4], moved, pages, [0.2, 0.0, 0.5], signal_delay=1e-9)
        np.testing.assert_allclose(near, plain, rtol=1e-7)
        far = window_staleness([0.7, 1.1, 0.4], moved, pages, [0.2, 0.0, 0.5], signal_delay=1e12)
        np.testing.assert_allclose(far, pages.change_rate * [0.7, 1.1, 0.4], rtol=1e-10)
    # a window that starts after the crawl: its place matters with delays, not without
    a = window_staleness(1.0, True, pages, since_crawl=0.0, signal_delay=0.5)
    b = window_staleness(1.0, True, pages, since_crawl=2.0, signal_delay=0.5)
    assert (a != b).all()
    assert np.array_equal(window_staleness(1.0, True, pages, since_crawl=2.0), window_staleness(1.0, True, pages))
    # polled_staleness is the sum of its windows' window_staleness plus the open drift
    dl, lam, nu = 0.8, 0.7, 0.3
    one = PageModel([dl], [1.0], recall=[lam], false_rate=[nu])
    st = polled_staleness(3.1, 0.5, [0.0, 1.0, 2.0, 3.0], [True, False, True, True], dl, lam, nu, signal_delay=0.4)
    parts = (window_staleness(0.5, False, one, 0.5, signal_delay=0.4)[0]
             + window_staleness(1.0, True, one, since_crawl=0.5, signal_delay=0.4)[0]
             + window_staleness(1.0, True, one, since_crawl=1.5, signal_delay=0.4)[0])
    assert st.at_poll == pytest.approx(parts, rel=1e-14)
    assert st.staleness == pytest.approx(parts + dl * 0.1, rel=1e-14)


def test_delay_mass_against_mpmath():
    from freshcore.polled_signals import _delay_mass

    xs = np.array([-1.0, 0.0, 1e-300, 1e-12, 1e-6, 0.01, 0.3, 0.49999, 0.5, 0.50001, 0.9, 2.0, 30.0, 800.0, 1e300])
    for theta in (1e-3, 0.5, 1.0, 7.0):
        got = _delay_mass(xs, theta)
        with mp.workdps(50):
            for x, g in zip(xs, got):
                y = mp.mpf(max(x, 0.0)) / theta
                want = mp.mpf(theta) * (y - 1 + mp.exp(-y)) if y > 0 else mp.mpf(0)
                assert g == pytest.approx(float(want), rel=2e-15, abs=0.0), (x, theta, g, float(want))


def test_delayed_bad_input_names_the_argument():
    pages = PageModel([1.0, 1.0], 1.0, recall=0.5, false_rate=0.25)
    with pytest.raises(ValueError, match="signal_delay"):
        window_staleness(1.0, True, pages, signal_delay=-1.0)
    with pytest.raises(ValueError, match="signal_delay"):
        window_staleness(1.0, True, pages, signal_delay=float("nan"))
    with pytest.raises(TypeError, match="signal_delay"):
        window_staleness(1.0, True, pages, signal_delay="soon")
    with pytest.raises(ValueError, match=r"since_crawl.*page 1"):
        window_staleness(1.0, True, pages, [0.0, 0.5], since_crawl=[0.0, 1.0], signal_delay=0.5)
    with pytest.raises(ValueError, match="since_crawl"):
        window_staleness(1.0, True, pages, since_crawl=[-1.0, 0.0])
    with pytest.raises(ValueError, match="signal_delay"):
        polled_staleness(5.0, 0.0, [0.5, 1.0], [0, 1], 1.0, 0.5, 0.25, signal_delay=math.inf)
