"""Crawl value V, interval psi, fresh time w and frequency f (SPEC section 3; Lemma 4 and Appendix A.1 of
Busa-Fekete et al. (2025))."""

import itertools
import math
import pickle

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import gammainc

from freshcore import _value
from freshcore.pages import PageModel
from freshcore.special import residual_exp
from freshcore.value import crawl_frequency, crawl_interval, crawl_value, fresh_time

# ---------------------------------------------------------------------------
# Independent 50-digit reference, written from the paper's formulas (no shared code)


def ref_value(iota, dl, lam, nu, mu=1.0):
    """mu (w - e^{-alpha iota} psi) summed to K = floor(iota/beta) in 50 digits.

    The sum stops early only once the w-tail bound rho^{i+1}/(c (1 - rho)) (each
    later term of V is non-negative and below its w-term rho^m/c) is below 1e-30
    of the value.
    """
    with mp.workdps(50):
        dl, lam, nu, iota, mu = (mp.mpf(float(v)) for v in (dl, lam, nu, iota, mu))
        alpha = (1 - lam) * dl
        gamma = lam * dl + nu
        beta = -mp.log(nu / gamma) / alpha
        c = dl + nu
        rho = nu / c
        K = int(mp.floor(iota / beta))
        w = psi = mp.mpf(0)
        for i in range(K + 1):
            s = iota - i * beta
            w += nu**i / c ** (i + 1) * mp.gammainc(i + 1, 0, c * s, regularized=True)
            psi += mp.gammainc(i + 1, 0, gamma * s, regularized=True) / gamma
            if rho ** (i + 1) / (c * (1 - rho)) < mp.mpf(10) ** -30 * (w - mp.exp(-alpha * iota) * psi):
                break
        return mu * (w - mp.exp(-alpha * iota) * psi)


def recall_for_beta(dl, nu, beta):
    """The recall lambda at which a page (dl, nu) has the given beta (beta increases with lambda)."""
    f = lambda lam: np.log(np.log1p(lam * dl / nu) / ((1 - lam) * dl)) - np.log(beta)  # noqa: E731
    return brentq(f, 1e-300, 1 - 1e-15, xtol=1e-300, rtol=1e-15)


@pytest.mark.parametrize("dl, nu, mu", [(1.0, 0.5, 1.0), (0.3, 0.05, 2.5), (2.0, 3.0, 0.7)])
def test_value_matches_mpmath_over_iota_and_beta_grid(dl, nu, mu):
    iotas = np.logspace(-9, 4, 14)
    worst = 0.0
    for beta in np.logspace(-6, 6, 7):
        lam = recall_for_beta(dl, nu, beta)
        pages = PageModel(np.full(len(iotas), dl), mu, lam, nu)
        assert pages.beta[0] == pytest.approx(beta, rel=1e-8)
        got = crawl_value(iotas, pages)
        for iota, g in zip(iotas, got):
            r = ref_value(iota, dl, lam, nu, mu)
            worst = max(worst, float(abs(g - r) / r))
    assert worst <= 1e-12


def test_literal_difference_fails_where_ours_does_not():
    # SPEC: w - e^{-alpha iota} psi loses everything at iota = 1e-7
    pages = PageModel(1.0, 1.0, 0.5, 0.3)
    iota = 1e-7
    literal = fresh_time(iota, pages)[0] - np.exp(-pages.alpha[0] * iota) * crawl_interval(iota, pages)[0]
    r = ref_value(iota, 1.0, 0.5, 0.3)
    assert abs(crawl_value(iota, pages)[0] - r) <= 1e-14 * r
    assert abs(literal - r) > 1e-9 * r  # eight digits lost (measured 1.1e-8 relative)


# ---------------------------------------------------------------------------
# Monte Carlo of the threshold policy: crawl when tau_elap + beta n_cis >= iota


def simulate(dl, lam, nu, iota, n_intervals, seed):
    """Interval lengths T and fresh times min(T, first change) of independent crawl intervals."""
    rng = np.random.default_rng(seed)
    beta = PageModel(dl, 1.0, lam, nu).beta[0]
    m = n_intervals
    t = np.zeros(m)
    n = np.zeros(m)
    first_change = np.full(m, np.inf)
    length = np.full(m, np.nan)
    active = np.ones(m, dtype=bool)
    rate = dl + nu
    while active.any():
        idx = np.flatnonzero(active)
        with np.errstate(invalid="ignore"):
            due = (np.maximum(t[idx], np.where(n[idx] > 0, iota - beta * n[idx], iota)) if beta > 0
                   else np.full(len(idx), iota))
        nxt = t[idx] + rng.exponential(1.0 / rate, len(idx)) if rate > 0 else np.full(len(idx), np.inf)
        crawl = due <= nxt
        length[idx[crawl]] = due[crawl]
        active[idx[crawl]] = False
        ev = idx[~crawl]
        t[ev] = nxt[~crawl]
        u = rng.uniform(size=len(ev))
        is_change = u < dl / rate
        first_change[ev[is_change]] = np.minimum(first_change[ev[is_change]], t[ev[is_change]])
        signal = np.where(is_change, rng.uniform(size=len(ev)) < lam, True)
        n[ev[signal]] += 1
    return length, np.minimum(length, first_change)


@pytest.mark.parametrize(
    "dl, lam, nu, iota",
    [
        (1.0, 0.5, 0.3, 2.0),  # general
        (1.0, 0.7, 0.0, 1.5),  # no false signals: beta = inf
        (0.5, 0.999, 0.5, 3.0),  # large beta (~ 1.4e3)
        (2.0, 0.05, 1.0, 3.0),  # small beta: many signals before a crawl
        (1.0, 0.0, 0.4, 1.2),  # uninformative signals: psi = iota
        (0.8, 0.6, 0.2, 8.0),  # several signals needed (K = 4)
    ],
)
def test_psi_and_w_match_monte_carlo(dl, lam, nu, iota):
    length, fresh = simulate(dl, lam, nu, iota, 100_000, seed=int(1000 * (dl + 10 * lam + 100 * nu + 1000 * iota)))
    pages = PageModel(dl, 1.0, lam, nu)
    psi = crawl_interval(iota, pages)[0]
    w = fresh_time(iota, pages)[0]
    se_psi = length.std(ddof=1) / np.sqrt(len(length))
    se_w = fresh.std(ddof=1) / np.sqrt(len(fresh))
    assert abs(length.mean() - psi) <= 4 * se_psi + 1e-12
    assert abs(fresh.mean() - w) <= 4 * se_w + 1e-12
    assert crawl_frequency(iota, pages)[0] == pytest.approx(1.0 / psi, rel=1e-15)


# ---------------------------------------------------------------------------
# Shape of V and f

params = st.tuples(
    st.floats(1e-3, 5.0),  # Delta
    st.floats(0.0, 1.0),  # lambda
    st.floats(0.0, 3.0),  # nu
)


@given(params, st.floats(0.0, 200.0), st.floats(0.0, 200.0))
def test_value_non_decreasing_and_frequency_non_increasing(p, a, b):
    dl, lam, nu = p
    lo, hi = min(a, b), max(a, b)
    pages = PageModel([dl, dl], 1.0, lam, nu)
    v = crawl_value([lo, hi], pages)
    f = crawl_frequency([lo, hi], pages)
    assert 0.0 <= v[0] <= v[1] * (1 + 1e-13) <= (1 + 1e-12) / dl
    assert f[0] * (1 + 1e-13) >= f[1] >= 0.0


@given(params, st.floats(0.0, 50.0), st.integers(1, 5))
def test_approx_is_a_lower_bound(p, iota, j):
    dl, lam, nu = p
    pages = PageModel(dl, 1.0, lam, nu)
    exact = crawl_value(iota, pages)[0]
    approx = crawl_value(iota, pages, value="approx", terms=j)[0]
    approx_next = crawl_value(iota, pages, value="approx", terms=j + 1)[0]
    assert approx <= approx_next <= exact * (1 + 1e-13)


@pytest.mark.parametrize("lam, nu", [(5e-324, 5e-324), (0.0, 1e-320), (1e-310, 1e-310), (1e-200, 1e-200)])
def test_approx_with_tiny_signal_rates(lam, nu):
    # gamma = lambda Delta + nu subnormal or tiny: term 0's e^{-alpha s} (1 - e^{-gamma s})/gamma once
    # underflowed in the product (hypothesis found p = (1, 5e-324, 5e-324): approx-1 gave R^0 = 0.9502
    # at iota = 3 instead of the Greedy value R^1 = 0.8009); V is then the Greedy value to rounding
    pages = PageModel(1.0, 1.0, lam, nu)
    for iota in (0.5, 3.0, 40.0):
        greedy = crawl_value(iota, pages, value="greedy")[0]
        for j in (1, 2, 3):
            approx = crawl_value(iota, pages, value="approx", terms=j)[0]
            assert abs(approx - greedy) <= 1e-15 * greedy, (iota, j)
        assert abs(crawl_value(iota, pages)[0] - greedy) <= 1e-15 * greedy


def test_approx_levels_off_at_one_minus_rho_to_the_j():
    dl, nu, mu = np.array([1.0, 0.4, 2.0]), np.array([0.5, 1.0, 0.1]), np.array([1.0, 3.0, 0.5])
    pages = PageModel(dl, mu, 0.3, nu)
    rho = nu / (dl + nu)
    for j in (1, 2, 3):
        limit = mu * (1 - rho**j) / dl
        np.testing.assert_allclose(crawl_value(np.inf, pages, value="approx", terms=j), limit, rtol=1e-14)
        np.testing.assert_allclose(crawl_value(1e4, pages, value="approx", terms=j), limit, rtol=1e-12)
        assert np.all(limit < mu / dl)


def test_value_at_infinity():
    pages = PageModel([1.0, 0.25, 3.0, 2.0], [1.0, 2.0, 0.5, 1.0], [0.0, 0.5, 1.0, 0.3], [0.0, 0.2, 0.4, 0.0])
    mu_dl = pages.importance / pages.change_rate
    for kind in ("exact", "greedy", "cis"):
        np.testing.assert_allclose(crawl_value(np.inf, pages, value=kind), mu_dl, rtol=1e-15)
    # approaching infinity (lambda = 1 is the exception: V = 0 until a signal)
    v = crawl_value(1e4, pages)
    np.testing.assert_allclose(v[[0, 1, 3]], mu_dl[[0, 1, 3]], rtol=1e-12)
    scaled = crawl_value(np.inf, pages) * pages.normalized_importance / pages.importance
    np.testing.assert_allclose(scaled, pages.normalized_importance / pages.change_rate, rtol=1e-15)


def test_greedy_and_cis_formulas():
    iota = np.array([1e-6, 0.3, 2.0, 40.0])
    dl, lam, nu, mu = 0.7, 0.6, 0.25, 1.3
    pages = PageModel(np.full(4, dl), mu, lam, nu)
    greedy = mu * residual_exp(1, dl * iota) / dl
    np.testing.assert_allclose(crawl_value(iota, pages, value="greedy"), greedy, rtol=1e-15)
    for x, got in zip(iota, crawl_value(iota, pages, value="cis")):
        with mp.workdps(50):
            x, a, g = mp.mpf(float(x)), mp.mpf((1 - lam) * dl), mp.mpf(lam * dl)
            r = mu * (mp.gammainc(1, 0, dl * x, regularized=True) / dl
                      - mp.gammainc(1, 0, g * x, regularized=True) / (g * mp.exp(a * x)))
        assert abs(got - r) <= 1e-13 * r


# ---------------------------------------------------------------------------
# Degenerate regions: limits, continuity, no NaN

IOTA = np.array([1e-5, 0.3, 2.0, 20.0])


def value(dl, lam, nu, kind="exact"):
    return crawl_value(IOTA, PageModel(np.full(len(IOTA), dl), 1.0, lam, nu), value=kind)


def rel(a, b):
    return np.max(np.abs(a - b) / np.abs(b))


EPS = 10.0 ** -np.arange(3, 13, 3)


@pytest.mark.parametrize("path", ["lam=e,nu=e", "lam=e,nu=e^2", "lam=e^2,nu=e", "lam=0,nu=e", "lam=e,nu=0"])
def test_gamma_to_zero_gives_greedy(path):
    greedy = value(1.0, 0.0, 0.0, "greedy")
    np.testing.assert_array_equal(value(1.0, 0.0, 0.0), greedy)
    errs = []
    for e in EPS:
        lam, nu = {"lam=e,nu=e": (e, e), "lam=e,nu=e^2": (e, e * e), "lam=e^2,nu=e": (e * e, e),
                   "lam=0,nu=e": (0.0, e), "lam=e,nu=0": (e, 0.0)}[path]
        errs.append(rel(value(1.0, lam, nu), greedy))
    assert errs[-1] <= 1e-8 and all(b <= max(a, 1e-14) for a, b in itertools.pairwise(errs))


@pytest.mark.parametrize("lam", [0.2, 0.6, 0.95])
def test_nu_to_zero_gives_greedy_cis(lam):
    cis = value(1.0, lam, 0.0)
    np.testing.assert_allclose(value(1.0, lam, 0.7, "cis"), cis, rtol=1e-15)  # cis ignores nu
    errs = [rel(value(1.0, lam, e), cis) for e in 10.0 ** -np.arange(3, 16, 3)]
    assert errs[-1] <= 1e-10 and errs[0] >= errs[-1]


@pytest.mark.parametrize("nu", [0.1, 1.0])
def test_lambda_to_zero_with_false_signals_gives_greedy(nu):
    greedy = value(1.0, 0.0, nu)
    np.testing.assert_allclose(greedy, value(1.0, 0.0, 0.0, "greedy"), rtol=1e-15)
    errs = [rel(value(1.0, e, nu), greedy) for e in EPS]
    assert errs[-1] <= 1e-8 and all(b <= max(a, 1e-14) for a, b in itertools.pairwise(errs))


@pytest.mark.parametrize("nu", [0.0, 0.4])
def test_lambda_to_one_alpha_to_zero(nu):
    # every change signalled: fresh for sure until a signal, V = 0 at finite iota
    assert np.all(value(1.0, 1.0, nu) == 0.0)
    vals = [value(1.0, 1.0 - e, nu) for e in EPS]
    assert np.all(np.isfinite(vals)) and np.max(vals[-1]) <= 1e-8
    assert all(np.all(b <= a) for a, b in itertools.pairwise(vals))


@pytest.mark.parametrize("lam, nu", [(0.5, 0.3), (0.0, 0.3), (1.0, 0.0), (0.5, 0.0)])
def test_delta_to_zero(lam, nu):
    assert np.all(value(0.0, lam, nu) == 0.0)
    vals = [value(e, lam, nu) for e in EPS]
    assert np.max(vals[-1]) <= 1e-8 and all(np.all(b <= a) for a, b in itertools.pairwise(vals))


def test_no_nan_on_a_grid_with_every_degenerate_value():
    rng = np.random.default_rng(3)
    dl = rng.choice([0.0, 1e-300, 1e-9, 0.5, 1.0, 7.0], 4000)
    lam = rng.choice([0.0, 1e-12, 0.3, 1 - 1e-12, 1.0], 4000)
    nu = rng.choice([0.0, 1e-300, 1e-9, 0.4, 5.0], 4000)
    tau = rng.choice([0.0, 1e-300, 1e-9, 0.7, 30.0, np.inf], 4000)
    pages = PageModel(dl, 1.0, lam, nu)
    for kind, terms in [("exact", None), ("approx", 2), ("greedy", None), ("cis", None)]:
        v = crawl_value(tau, pages, value=kind, terms=terms)
        assert not np.isnan(v).any() and np.all(v >= 0)
    for fn in (crawl_interval, fresh_time, crawl_frequency):
        r = fn(tau, pages)
        assert not np.isnan(r).any() and np.all(r >= 0)


# ---------------------------------------------------------------------------
# PageModel


def test_page_model_derived_and_read_only():
    pages = PageModel([1.0, 2.0, 0.5], [1.0, 3.0, 0.0], [0.5, 0.0, 1.0], 0.25)
    np.testing.assert_array_equal(pages.alpha, [0.5, 2.0, 0.0])
    np.testing.assert_array_equal(pages.gamma, [0.75, 0.25, 0.75])
    assert pages.beta[0] == pytest.approx(-np.log(0.25 / 0.75) / 0.5, rel=1e-15)
    assert pages.beta[1] == 0.0 and pages.beta[2] == np.inf
    np.testing.assert_allclose(pages.normalized_importance, [0.25, 0.75, 0.0])
    assert len(pages) == 3
    for name in ("change_rate", "importance", "recall", "false_rate", "alpha", "gamma", "beta"):
        with pytest.raises(ValueError):
            getattr(pages, name)[0] = 1.0
        with pytest.raises(AttributeError):
            setattr(pages, name, np.zeros(3))


def test_page_model_input_not_aliased():
    dl = np.array([1.0, 2.0])
    pages = PageModel(dl, 1.0)
    dl[0] = 5.0
    assert pages.change_rate[0] == 1.0


def test_page_model_indexing_equality_pickle():
    pages = PageModel([1.0, 2.0, 0.5, 3.0], [1.0, 3.0, 2.0, 1.0], [0.5, 0.0, 1.0, 0.2], [0.1, 0.2, 0.0, 0.3])
    sub = pages[1:3]
    assert sub == PageModel([2.0, 0.5], [3.0, 2.0], [0.0, 1.0], [0.2, 0.0])
    assert pages[-1] == PageModel(3.0, 1.0, 0.2, 0.3)
    assert pages[np.array([True, False, False, True])] == pages[[0, 3]]
    assert pages != sub and pages != "x"
    np.testing.assert_array_equal(crawl_value(2.0, pages)[[1, 2]], crawl_value(2.0, sub))
    again = pickle.loads(pickle.dumps(pages))
    assert again == pages and np.array_equal(again.beta, pages.beta)
    with pytest.raises(IndexError):
        pages[4]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(change_rate=[1.0, -1.0], importance=1.0), r"change_rate\[1\]"),
        (dict(change_rate=[1.0, np.inf], importance=1.0), r"change_rate\[1\]"),
        (dict(change_rate=1.0, importance=[1.0, np.nan]), r"importance\[1\]"),
        (dict(change_rate=1.0, importance=-2.0), r"'importance' parameter of PageModel"),
        (dict(change_rate=1.0, importance=1.0, recall=[0.5, 1.5]), r"recall\[1\]"),
        (dict(change_rate=1.0, importance=1.0, recall=-0.1), r"'recall'"),
        (dict(change_rate=1.0, importance=1.0, false_rate=[0.0, 0.0, -1.0]), r"false_rate\[2\]"),
        (dict(change_rate=[1.0, 2.0], importance=[1.0, 2.0, 3.0]), r"one length"),
        (dict(change_rate=[[1.0]], importance=1.0), r"'change_rate'"),
    ],
)
def test_page_model_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PageModel(**kwargs)


# ---------------------------------------------------------------------------
# Public functions: arguments, out=, read-only input


def test_out_and_read_only_input():
    pages = PageModel([1.0, 2.0], 1.0, 0.5, 0.2)
    tau = np.array([0.5, 3.0])
    tau.flags.writeable = False
    out = np.empty(2)
    for fn in (crawl_value, crawl_interval, fresh_time, crawl_frequency):
        res = fn(tau, pages, out=out)
        assert res is out
        np.testing.assert_array_equal(out, fn(tau, pages))


@pytest.mark.parametrize("fn", [crawl_value, crawl_interval, fresh_time, crawl_frequency])
def test_bad_times_and_pages(fn):
    pages = PageModel([1.0, 2.0], 1.0, 0.5, 0.2)
    name = "tau_eff" if fn is crawl_value else "threshold"
    with pytest.raises(ValueError, match=rf"{name}\[1\]"):
        fn([1.0, -1.0], pages)
    with pytest.raises(ValueError, match=rf"{name}\[0\]"):
        fn([np.nan, 1.0], pages)
    with pytest.raises(ValueError, match=rf"'{name}'"):
        fn(-0.5, pages)
    with pytest.raises(ValueError, match="length 2"):
        fn([1.0, 2.0, 3.0], pages)
    with pytest.raises(TypeError, match="PageModel"):
        fn(1.0, {"change_rate": 1.0})
    with pytest.raises(ValueError):
        fn(1.0, pages, out=np.empty(3))


def test_bad_value_and_terms():
    pages = PageModel(1.0, 1.0, 0.5, 0.2)
    with pytest.raises(ValueError, match="'value' parameter of crawl_value"):
        crawl_value(1.0, pages, value="fast")
    with pytest.raises(ValueError, match=r"'terms'.*required"):
        crawl_value(1.0, pages, value="approx")
    with pytest.raises(ValueError, match="'terms'"):
        crawl_value(1.0, pages, value="approx", terms=0)
    with pytest.raises(TypeError, match="'terms'"):
        crawl_value(1.0, pages, value="approx", terms=1.5)
    with pytest.raises(ValueError, match="only used with value='approx'"):
        crawl_value(1.0, pages, terms=2)


# ---------------------------------------------------------------------------
# Exact V at the switches of its compiled series (issue 3, Performance).  page_value forms a term
# D_n from one Poisson series (both tails together) when x_n = c (iota - n beta) < n + 1 and from
# residuals otherwise, and reads the ratios x/k from a table of 1/k below k = 2048 (a division
# above).  These tests put terms on both sides of each switch.


def one_page(dl, nu, beta):
    lam = recall_for_beta(dl, nu, beta)
    return lam, PageModel([dl], [1.0], [lam], [nu])


@pytest.mark.parametrize("dl, nu, beta", [(1.0, 0.5, 0.3), (0.3, 0.05, 2.0), (0.05, 1.0, 0.02), (2.0, 3.0, 1e-3)])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 40])
def test_value_at_the_series_switch(dl, nu, beta, n):
    """Term n with x_n just below, at and just above n + 1 (the series / residual switch)."""
    lam, pages = one_page(dl, nu, beta)
    c, b = dl + nu, pages.beta[0]
    for eps in (-1e-3, -1e-12, 0.0, 1e-12, 1e-3):
        iota = n * b + (n + 1) / c * (1.0 + eps)
        got = crawl_value([iota], pages)[0]
        ref = ref_value(iota, dl, lam, nu)
        assert abs(got - ref) <= 1e-12 * ref, (iota, eps, got, float(ref))


@pytest.mark.parametrize("n", [98, 99, 100, 101])
def test_value_at_the_pmf_table_end(n):
    """Series terms around n + 1 = 100 (the pmf's pow-and-table form ends at j = 100 and x = 100).

    rho = 1/1.05: term 99 is ~1e-4 of V, so 1/100! off by 1e-7 fails the test (checked).
    """
    dl, nu, beta = 0.05, 1.0, 0.3
    lam, pages = one_page(dl, nu, beta)
    c, b = dl + nu, pages.beta[0]
    for x in (50.0, 99.5, n + 0.999, 100.5):
        iota = n * b + x / c
        got = crawl_value([iota], pages)[0]
        ref = ref_value(iota, dl, lam, nu)
        assert abs(got - ref) <= 1e-12 * ref, (x, got, float(ref))


def test_value_across_the_reciprocal_table():
    """Terms n < 2046 by residuals, n = 2045..2047 by series crossing k = 2048, n > 2047 past the table.

    rho^2048 ~ 1.6e-9 of the first term: a ratio off by 1e-3 beyond the table fails this test.
    """
    dl, nu, n = 0.01, 1.0, 2047
    lam, pages = one_page(dl, nu, 0.05)
    iota = n * pages.beta[0] + (n + 1) / (dl + nu) * 0.999
    got = crawl_value([iota], pages)[0]
    ref = ref_value(iota, dl, lam, nu)
    assert abs(got - ref) <= 1e-12 * ref


def test_value_many_terms_matches_mpmath_on_random_pages():
    """SPEC section 3's bench distribution, long series included (seeded)."""
    rng = np.random.default_rng(3)
    m = 60
    dl, nu = rng.uniform(0.01, 1, m), rng.uniform(0.1, 0.6, m)
    lam = rng.beta(0.25, 0.25, m).clip(1e-9, 1 - 1e-9)
    iota = rng.uniform(0, 30, m)
    got = crawl_value(iota, PageModel(dl, 1.0, lam, nu))
    for k in range(m):
        ref = ref_value(iota[k], dl[k], lam[k], nu[k])
        assert abs(got[k] - ref) <= 1e-12 * ref, k


@pytest.mark.parametrize("kind, terms", [("exact", None), ("approx", 3), ("greedy", None), ("cis", None)])
def test_value_does_not_depend_on_the_thread_split(kind, terms):
    import freshcore._parallel as par

    rng = np.random.default_rng(5)
    m = 5001
    pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m), rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))
    tau = rng.uniform(0, 10, m)
    old_chunk, old_heavy, old_threads = par.MIN_CHUNK, par.MIN_CHUNK_HEAVY, par.get_num_threads()
    try:
        par.set_num_threads(1)
        one = crawl_value(tau, pages, kind, terms)
        par.MIN_CHUNK, par.MIN_CHUNK_HEAVY, _ = 700, 700, par.set_num_threads(3)
        calls = []
        real = par.parallel_chunks
        par_chunks = lambda n, fn, heavy=False: real(n, lambda p, q: (calls.append((p, q)), fn(p, q)), heavy)  # noqa: E731
        import freshcore.value as value_mod

        value_mod.parallel_chunks = par_chunks
        try:
            three = crawl_value(tau, pages, kind, terms)
        finally:
            value_mod.parallel_chunks = real
    finally:
        par.MIN_CHUNK, par.MIN_CHUNK_HEAVY = old_chunk, old_heavy
        par.set_num_threads(old_threads)
    assert sorted(calls) == [(0, 1667), (1667, 3334), (3334, 5001)]  # really split in three
    np.testing.assert_array_equal(one, three)


def test_fused_value_and_interval_are_bit_identical():
    # the threshold solver's one-pass V and psi against crawl_value and crawl_interval, degenerate pages included
    from freshcore import _value

    rng = np.random.default_rng(9)
    m = 4000
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    lam, nu = rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m)
    dl[:50], lam[50:100], lam[100:150], nu[150:200], mu[200:250] = 0.0, 0.0, 1.0, 0.0, 0.0
    dl[250:400] *= 1e-3  # rho near 1: long series
    tau = rng.uniform(0, 30, m)
    tau[:400:7], tau[1:400:11], tau[2:400:13] = 0.0, np.inf, 1e-9
    pages = PageModel(dl, mu, lam, nu)
    v, psi = np.empty(m), np.empty(m)
    args = [np.ascontiguousarray(x) for x in (tau, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate,
                                              pages.beta, pages.importance)]
    _value.value_interval_kernel(*args, v, psi)
    np.testing.assert_array_equal(v, crawl_value(tau, pages))
    np.testing.assert_array_equal(psi, crawl_interval(tau, pages))


# ---------------------------------------------------------------------------
# The batch kernel of exact V (``_value._exact_values``): each page's value by the functions page_value uses, the
# series pages summed together (their pair series four at a time, ``_value_series.h``): the same bits as
# page_value one page at a time, whichever pair-series kernel (scalar, SSE2, AVX2) runs.


def scalar_values(tau, pages):
    """page_value(..., -1) page by page (the scheduler's path)."""
    out = np.empty(len(pages))
    args = [np.ascontiguousarray(x, dtype=float) for x in (tau, pages.change_rate, pages.alpha, pages.gamma,
                                                            pages.false_rate, pages.beta, pages.importance)]
    _value.page_value_kernel(*args, -1, out)
    return out


def batch_values_each_kernel(tau, pages):
    """crawl_value with each pair-series kernel the build and the processor have (the default one last)."""
    best = _value.series_simd(-1)
    try:
        got = []
        for level in range(best + 1):
            assert _value.series_simd(level) == level
            got.append(crawl_value(tau, pages))
    finally:
        _value.series_simd(-1)
    return got


def assert_bits_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    same = (a.view(np.int64) == b.view(np.int64)) | (np.isnan(a) & np.isnan(b))
    assert same.all(), np.flatnonzero(~same)[:10]


def edge_pages(seed, m):
    """Pages over many decades of every parameter, with the degenerate ones mixed in."""
    rng = np.random.default_rng(seed)
    dl, nu = 10 ** rng.uniform(-4, 3, m), 10 ** rng.uniform(-5, 3, m)
    lam = rng.uniform(0, 1, m)
    lam[::3] = 10 ** rng.uniform(-9, -0.2, len(lam[::3]))
    lam[1::3] = 1 - 10 ** rng.uniform(-9, -0.3, len(lam[1::3]))
    mu = rng.uniform(0, 2, m)
    dl[::41], lam[1::43], lam[2::47], nu[3::53], mu[4::59] = 0.0, 0.0, 1.0, 0.0, 0.0
    dl[5::61] *= 1e-250  # rates far from 1: a change of unit
    nu[6::67] *= 1e250
    pages = PageModel(dl, mu, lam, nu)
    with np.errstate(invalid="ignore", over="ignore"):
        tau = np.where(np.isfinite(pages.beta) & (pages.beta > 0), pages.beta, 1.0 / (dl + nu + 1e-300))
        tau = tau * 10 ** rng.uniform(-3, 2.5, m)
    tau[7::71], tau[8::73], tau[9::79] = 0.0, np.inf, 1e-300
    return pages, tau


@pytest.mark.parametrize("seed", [0, 1])
def test_batch_value_equals_page_value_bit_for_bit(seed):
    """Random and degenerate pages: the batch kernel gives page_value's bits, with every pair-series kernel."""
    if seed == 0:  # the bench's pages (SPEC section 3's check distribution)
        rng = np.random.default_rng(0)
        m = 30_000
        dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
        lam, nu = rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m)
        pages, tau = PageModel(dl, mu, lam, nu), rng.uniform(0, 10, m)
    else:
        pages, tau = edge_pages(seed, 30_000)
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)


def test_batch_value_past_256_terms_equals_page_value_bit_for_bit():
    """Series past n = 256, where the sums carry their rounding errors and rho^n = exp(n log rho): the batch kernel,
    the fused V and psi and page_value agree bit for bit (Delta << nu, recall near 1: the residue form refused)."""
    rng = np.random.default_rng(11)
    m = 600
    dl, nu, lam = 10 ** rng.uniform(-4, -2, m), rng.uniform(0.5, 3.0, m), 1 - 10 ** rng.uniform(-4, -2, m)
    pages = PageModel(dl, rng.uniform(0.5, 2, m), lam, nu)
    tau = pages.beta * rng.uniform(300, 3000, m)
    used, rv = np.zeros(m, np.uint8), np.empty(m)
    args = [np.ascontiguousarray(x) for x in (tau, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate,
                                              pages.beta)]
    _value.residue_kernel(*args, rv, used)
    assert (used == 0).mean() > 0.5  # (measured: all)
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)
    v, psi = np.empty(m), np.empty(m)
    _value.value_interval_kernel(*args, pages.importance, v, psi)
    assert_bits_equal(v, ref)
    assert_bits_equal(psi, crawl_interval(tau, pages))


def test_batch_value_pair_series_cover_every_case():
    """The batch's series pages: terms whose pair series stop within the fixed passes and past them (x close to
    n + 1), ratios past the end of the 1/j table (n > 2000: the scalar loop), a block of 256 pages at a time and
    a last partial one, groups of four with one to three lanes short."""
    rng = np.random.default_rng(5)
    m = 1037
    dl, nu, lam = 10 ** rng.uniform(-2, 0.5, m), 10 ** rng.uniform(-1, 1, m), rng.uniform(0.05, 0.6, m)
    pages = PageModel(dl, 1.0, lam, nu)
    tau = pages.beta * rng.uniform(1.0, 3.9, m)  # below the residue form's 4 beta: every page sums its series
    c = dl + nu
    # x_n = c (tau - n beta) just below n + 1 for n = 1: the slowest pair series
    near = rng.random(m) < 0.3
    tau[near] = pages.beta[near] + 2.0 / c[near] * (1 - 10 ** rng.uniform(-12, -2, near.sum()))
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)
    # ~2100 terms, the last twenty pair series past the end of the table (the residue forms do not apply)
    long_page = PageModel([1.0], 1.0, [0.99], [1e3])
    t_long = np.array([2100.5 * long_page.beta[0]])
    ref = scalar_values(t_long, long_page)
    for got in batch_values_each_kernel(t_long, long_page):
        assert_bits_equal(got, ref)


def test_batch_other_terms_cover_every_case():
    """Series pages whose terms have x = c s_n >= n + 1 (A_n from the lower sum of x, then B_n from the tail series
    or the lower sum of y = gamma s_n, or the cancelling forms): many terms (n up to ~60, lower sums past eight
    steps), recalls near 1 (B_n close to A_n), against page_value bit for bit with each kernel."""
    rng = np.random.default_rng(13)
    m = 3001
    dl, nu = 10 ** rng.uniform(-1, 1, m), 10 ** rng.uniform(-1, 1.5, m)
    lam = np.where(rng.random(m) < 0.4, 1 - 10 ** rng.uniform(-6, -1, m), rng.uniform(0.01, 0.9, m))
    pages = PageModel(dl, 1.0, lam, nu)
    tau = pages.beta * rng.uniform(1.0, 60.0, m)
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)
    # the cases are there, on the pages the residue form leaves to the series: terms with x >= n + 1 for n >= 8,
    # with y on both sides of n + 1
    v, used = np.empty(m), np.zeros(m, np.uint8)
    _value.residue_kernel(tau, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate, pages.beta, v, used)
    c, g, b = dl + nu, pages.gamma, pages.beta
    n = np.arange(60)[None, :]
    s = tau[:, None] - n * b[:, None]
    other = (s >= 0) & (used == 0)[:, None] & (c[:, None] * s >= n + 1) & (n >= 8)
    assert other.sum() > 10_000
    assert (other & (g[:, None] * s < n + 1)).sum() > 100 and (other & (g[:, None] * s >= n + 1)).sum() > 10_000


def test_batch_term0_closed_forms_cover_every_case():
    """Pages whose V is term 0 in closed form (beta > iota, c iota > 2 or gamma iota >= 0.7), four of one kind at a
    time: A_0 - B_0, the second form (a recall near 1), gamma iota below 1e-8, each 1 - e^{-x} form (where the
    first form fails the second holds: 2 10^6 random arguments found no exception); page_value's bits with each
    kernel."""
    rng = np.random.default_rng(17)
    m = 4001
    dl, nu = 10 ** rng.uniform(-2, 1, m), 10 ** rng.uniform(-12, 1, m)
    lam = np.where(rng.random(m) < 0.4, 1 - 10 ** rng.uniform(-12, -1, m), 10 ** rng.uniform(-14, 0, m))
    pages = PageModel(dl, 1.0, lam, nu)
    c, g, a = dl + nu, pages.gamma, pages.alpha
    tau = 10 ** rng.uniform(-10, 1.5, m) / c
    with np.errstate(invalid="ignore"):
        tau = np.where(np.isfinite(pages.beta), np.minimum(tau, 0.999 * pages.beta), tau)
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)
    # the cases (numpy's exp may differ from libm's in the last bit: enough to see each case occur)
    x, ax, gx = c * tau, a * tau, g * tau
    closed = (x > 2) | (gx >= 0.7)
    with np.errstate(all="ignore"):
        ea, eg = np.exp(-ax), -np.expm1(-gx)
        em = -np.expm1(-ax)
        a0 = (em + ea * eg) / c
        b0 = np.where(gx >= 1e-8, ea * eg / g, ea * tau * (1 - 0.5 * gx))
        first = b0 <= 0.75 * a0
        second = ~first & (a * ea * eg <= 0.75 * g * em)
    for case in (first, second, gx < 1e-8, (ax < 0.7) & (gx >= 0.7), (ax >= 0.7) & (gx < 0.7),
                 (ax >= 0.7) & (gx >= 0.7)):
        assert (closed & case).sum() >= 3


def term0_series_passes(x, ax, gx):
    """Passes of _term0's series (c iota <= 2, gamma iota < 0.7) before it stops, in Python floats."""
    inv = [math.inf] + [1.0 / j for j in range(1, 64)]
    a, b, e, se, k, passes = 1.0, 1.0, 0.0, 0.0, 0, 0
    xx, axg = x * x, ax * (x + gx)
    while True:
        t = inv[k + 2]
        t2 = t * inv[k + 3]
        se += (x * e + ax * b) * t + (xx * e + axg * b) * t2
        e = (xx * e + axg * b) * t2
        b = b * (gx * gx) * t2
        a = a * xx * t2
        k += 2
        passes += 1
        q = x * inv[k + 2]
        if a * q <= 1e-17 * se * (1.0 - q) or a == 0.0:
            return passes


def test_batch_term0_series_cover_every_case():
    """Pages whose V is term 0's series (beta > iota, c iota <= 2, gamma iota < 0.7), summed four at a time: those
    that stop within the fixed passes and those past them (a recall near 1: the sum is a small difference and
    needs more terms), against page_value bit for bit with each kernel."""
    rng = np.random.default_rng(8)
    m = 2003
    dl, nu = 10 ** rng.uniform(-1, 0.3, m), 10 ** rng.uniform(-3, 0, m)
    lam = np.where(rng.random(m) < 0.5, 1 - 10 ** rng.uniform(-12, -1, m), rng.uniform(0, 1, m))
    pages = PageModel(dl, 1.0, lam, nu)
    c = dl + nu
    tau = np.minimum(rng.uniform(0.01, 2.0, m) / c, 0.69 / pages.gamma) * (1 - 1e-9)
    tau = np.minimum(tau, 0.999 * np.where(np.isfinite(pages.beta), pages.beta, np.inf))
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)
    passes = [term0_series_passes(c[k] * tau[k], pages.alpha[k] * tau[k], pages.gamma[k] * tau[k]) for k in range(m)]
    assert min(passes) <= 10 < max(passes)


@given(st.lists(st.tuples(st.floats(-3, 1.5), st.floats(-4, 1.5), st.floats(0, 1), st.floats(-2, 1.7)),
                min_size=1, max_size=40))
@settings(max_examples=150, deadline=None)
def test_batch_value_equals_page_value_hypothesis(rows):
    ldl, lnu, lam, lk = (np.array(c) for c in zip(*rows))
    pages = PageModel(10**ldl, 1.0, lam, 10**lnu)
    with np.errstate(invalid="ignore", over="ignore"):
        tau = np.where(np.isfinite(pages.beta) & (pages.beta > 0), pages.beta, 1.0) * 10**lk
    ref = scalar_values(tau, pages)
    for got in batch_values_each_kernel(tau, pages):
        assert_bits_equal(got, ref)


# ---------------------------------------------------------------------------
# The residue form of exact V (``residue_value`` of ``_value_residues.pxd``): where iota >= 4 beta and
# nu beta < pi, V is the two real poles of its Laplace transform in closed form plus the non-real residues, which
# are bounded by RES_TAIL alpha beta^2 (nu beta/pi)^{iota/beta}; it is used only when that bound is below 1e-16
# of V.

RES_TAIL = 0.06785  # 2 (7/8) zeta(3) / pi^3 rounded up, as in _value_residues.h


def two_pole_part(iota, dl, lam, nu):
    """1/Delta - e^{-alpha iota} (iota + 1/alpha + kappa)/(1 + u) in 50 digits, from the definitions."""
    with mp.workdps(50):
        dl, lam, nu, iota = (mp.mpf(float(v)) for v in (dl, lam, nu, iota))
        alpha, gamma = (1 - lam) * dl, lam * dl + nu
        beta = mp.log(gamma / nu) / alpha
        u = gamma * beta
        kappa = gamma * beta**2 / (2 * (1 + u))
        return 1 / dl - mp.exp(-alpha * iota) * (iota + 1 / alpha + kappa) / (1 + u)


def residue_pages(seed, m, k_lo, k_hi):
    rng = np.random.default_rng(seed)
    dl, nu, lam = 10 ** rng.uniform(-2, 1, m), 10 ** rng.uniform(-4, 1, m), rng.uniform(0.0, 1.0, m)
    lam[: m // 2] = 10 ** rng.uniform(-8, -0.5, m // 2)  # beta << 1/Delta: the pages with long series
    pages = PageModel(dl, 1.0, lam, nu)
    iota = pages.beta * rng.uniform(k_lo, k_hi, m)
    keep = (dl * iota < 60) & (nu * pages.beta < np.pi)
    return PageModel(dl[keep], 1.0, lam[keep], nu[keep]), iota[keep]


def test_non_real_residues_stay_within_their_bound():
    """V - (two real poles) against the bound, also at iota/beta < 4 where the bound is not small."""
    pages, iota = residue_pages(11, 400, 0.3, 8.0)
    worst = 0.0
    for k in range(len(pages)):
        dl, lam, nu, b = pages.change_rate[k], pages.recall[k], pages.false_rate[k], pages.beta[k]
        tail = ref_value(iota[k], dl, lam, nu) - two_pole_part(iota[k], dl, lam, nu)
        bound = RES_TAIL * pages.alpha[k] * b**2 * (nu * b / np.pi) ** (iota[k] / b)
        with mp.workdps(50):
            # the reference carries ~1e-30 of V in truncation
            assert abs(tail) <= bound * (1 + 1e-9) + 1e-28 / dl, k
            worst = max(worst, float(abs(tail) / bound)) if bound > 1e-25 / dl else worst
    assert worst > 0.05  # the bound is not loose: some tails reach a twentieth of it (0.15 seen)


def test_residue_form_matches_mpmath():
    pages, iota = residue_pages(12, 3000, 3.5, 60.0)
    v, used = np.empty(len(pages)), np.zeros(len(pages), np.uint8)
    _value.residue_kernel(iota, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate, pages.beta, v, used)
    idx = np.flatnonzero(used)
    assert len(idx) >= 0.3 * len(pages) and not used[iota < 4 * pages.beta].any()
    np.testing.assert_array_equal(crawl_value(iota[idx], pages[idx]), v[idx])  # crawl_value takes this path
    for k in idx[::6]:
        ref = ref_value(iota[k], pages.change_rate[k], pages.recall[k], pages.false_rate[k])
        assert abs(v[k] - ref) <= 1e-13 * ref, k


def residue_both_ways(iota, pages):
    """residue_kernel with and without the shortcut around the subnormal bound: (value, used) of each."""
    args = (np.ascontiguousarray(iota, dtype=float), pages.change_rate, pages.alpha, pages.gamma, pages.false_rate,
            pages.beta)
    out = []
    for shortcut in (True, False):
        v, used = np.full(len(pages), np.nan), np.zeros(len(pages), np.uint8)
        _value.residue_kernel(*args, v, used, shortcut)
        out.append((v, used))
    return out


def test_residue_bound_without_subnormals_decides_alike():
    """Where the power-of-two bound is scale 2^-1022 with scale < 1 (a subnormal, slow to compute with), the
    residue form keeps it out of its arithmetic: the same pages take the form, with the same bits, as when the
    subnormal bound is computed (many terms: iota/beta up to 10^6; tiny rates where 1e-16 V < DBL_MIN)."""
    rng = np.random.default_rng(21)
    m = 4000
    dl, nu, lam = 10 ** rng.uniform(-2, 1, m), 10 ** rng.uniform(-4, 1, m), 10 ** rng.uniform(-9, -0.3, m)
    pages = PageModel(dl, 1.0, lam, nu)
    iota = pages.beta * 10 ** rng.uniform(0.5, 6, m)
    # tiny times and recalls: V/mu ~ iota^2 alpha/2 ~ 1e-301, so 1e-16 V is itself subnormal
    tiny = PageModel(np.ones(50), 1.0, 10 ** rng.uniform(-153, -151, 50), np.ones(50))
    tiny_iota = tiny.beta * rng.uniform(300, 3000, 50)
    for tau, pg in ((iota, pages), (tiny_iota, tiny)):
        (v1, u1), (v2, u2) = residue_both_ways(tau, pg)
        np.testing.assert_array_equal(u1, u2)
        np.testing.assert_array_equal(v1, v2)
        np.testing.assert_array_equal(crawl_value(tau[u1 == 1], pg[np.flatnonzero(u1)]), v1[u1 == 1])
    # the shortcut is taken (the bound's exponent at -1022 or below, scale < 1) and so is the form
    (v1, u1), _ = residue_both_ways(iota, pages)
    kk, nb = iota / pages.beta, pages.false_rate * pages.beta
    with np.errstate(divide="ignore"):
        e_hi = np.frexp(nb / np.pi)[1] * np.floor(np.minimum(kk, 2000))
    short = (e_hi <= -1022) & (RES_TAIL * pages.alpha * pages.beta**2 < 1)
    assert (u1.astype(bool) & short).sum() >= 500
    (tv, tu), _ = residue_both_ways(tiny_iota, tiny)
    assert tu.all() and (1e-16 * tv < np.finfo(float).tiny).any() and (tv > 0).all()
    # and the values are right
    for k in np.flatnonzero(u1.astype(bool) & short)[:: 97][:8]:
        ref = ref_value(iota[k], dl[k], lam[k], nu[k])
        assert abs(v1[k] - ref) <= 1e-13 * ref, k


@given(st.floats(-2, 1), st.floats(-4, 1), st.floats(-12, -0.3), st.floats(0.5, 7))
@settings(max_examples=300, deadline=None)
def test_residue_bound_without_subnormals_hypothesis(ldl, lnu, llam, lk):
    pages = PageModel([10**ldl], 1.0, [10**llam], [10**lnu])
    iota = pages.beta * 10**lk
    (v1, u1), (v2, u2) = residue_both_ways(iota, pages)
    assert u1[0] == u2[0] and ((np.isnan(v1[0]) and np.isnan(v2[0])) or v1[0] == v2[0])


@pytest.mark.parametrize("dl, nu, beta", [(1.0, 0.5, 1e-3), (0.3, 0.05, 0.5), (2.0, 3.0, 1e-6), (0.05, 1.0, 2.0)])
def test_value_continuous_at_the_residue_switch(dl, nu, beta):
    """Just below iota = 4 beta the series, just above it the residue form (where it applies): both exact."""
    lam, pages = one_page(dl, nu, beta)
    b = pages.beta[0]
    iotas = [4 * b * (1 + e) for e in (-1e-12, 0.0, 1e-12, 1e-3)] + [40 * b]
    used = np.zeros(len(iotas), np.uint8)
    v = np.empty(len(iotas))
    page_arrays = [np.repeat(a, len(iotas)) for a in (pages.change_rate, pages.alpha, pages.gamma,
                                                     pages.false_rate, pages.beta)]
    _value.residue_kernel(np.array(iotas), *page_arrays, v, used)
    assert not used[0]
    got = crawl_value(iotas, PageModel(np.repeat(dl, len(iotas)), 1.0, lam, nu))
    for iota, g in zip(iotas, got):
        ref = ref_value(iota, dl, lam, nu)
        assert abs(g - ref) <= 1e-13 * ref, (iota, g, float(ref))
    assert got[0] <= got[1] * (1 + 1e-14) and got[1] <= got[2] * (1 + 1e-14)


# ---------------------------------------------------------------------------
# Term 0 in closed form (``_value._term0``): with x = c iota, A_0 - B_0 or
# [gamma (1 - e^{-alpha iota}) - alpha e^{-alpha iota} (1 - e^{-gamma iota})]/(c gamma) where x > 2 or
# gamma iota >= 0.7, a non-negative two-variable series otherwise; 1 - e^{-y} through sinh below y = 0.7.
# These pages have beta > iota, so term 0 is all of V.


@pytest.mark.parametrize("recall", [0.3, 0.9, 1 - 1e-6, 1 - 1e-12])
def test_term_zero_forms_match_mpmath(recall):
    rng = np.random.default_rng(int(recall * 1e6) % 1000)
    dl, nu = 10 ** rng.uniform(-2, 1, 40), 10 ** rng.uniform(-3, 1, 40)
    pages = PageModel(dl, 1.0, recall, nu)
    c, g, a = dl + nu, pages.gamma, pages.alpha
    # x around 2, gamma iota around 0.7, alpha iota around 0.7, and spread out
    iotas = [2 / c * (1 + e) for e in (-1e-9, 1e-9)] + [0.7 / g * (1 + e) for e in (-1e-9, 1e-9)]
    iotas += [0.7 / a * (1 + e) for e in (-1e-9, 1e-9)] + [10 ** rng.uniform(-9, 1.5, 40) / c]
    for iota in iotas:
        iota = np.minimum(iota, 0.999 * pages.beta)
        got = crawl_value(iota, pages)
        for k in range(len(pages)):
            if iota[k] > 0:
                ref = ref_value(iota[k], dl[k], recall, nu[k])
                assert abs(got[k] - ref) <= 1e-14 * ref, (k, iota[k], got[k], float(ref))


def radius_lower_bound(nu_beta, c_beta):
    """max(pi, R_lo) of ``_root_radius`` (``_value_residues.pxd``), written from its docstring: |w| >= R at every
    non-real root of w e^w = z, z = nu beta e^{c beta}, where R^2 = log^2(z/R) + pi^2 bounds the root from below."""
    lz = np.log(nu_beta) + c_beta
    if lz <= np.log(np.pi):
        return np.pi
    r_up = np.hypot(lz - np.log(np.pi), np.pi)
    if lz - np.log(r_up) < 0:
        return np.pi
    return max(np.pi, np.hypot(lz - np.log(r_up), np.pi))


def test_non_real_residues_within_the_wide_radius_bound():
    """High recall and many false signals (nu beta >= pi): |E| <= RES_TAIL alpha beta^2 (nu beta/R)^{iota/beta}."""
    rng = np.random.default_rng(5)
    worst, checked = 0.0, 0
    while checked < 40:
        dl, nu, lam = 10 ** rng.uniform(-1, 0.5), 10 ** rng.uniform(0, 2.5), rng.uniform(0.5, 0.98)
        pages = PageModel([dl], 1.0, lam, nu)
        b = pages.beta[0]
        rad = radius_lower_bound(nu * b, (dl + nu) * b)
        k = rng.uniform(1, 40)
        if nu * b >= rad or dl * k * b > 40 or k * b * (dl + nu) > 3000:
            continue
        tail = ref_value(k * b, dl, lam, nu) - two_pole_part(k * b, dl, lam, nu)
        bound = RES_TAIL * pages.alpha[0] * b**2 * (nu * b / rad) ** k
        assert abs(tail) <= bound, (dl, nu, lam, k)
        worst = max(worst, float(abs(tail) / bound))
        checked += 1
    assert worst > 0.02  # not loose (0.074 seen)


def test_residue_form_with_the_wide_radius_matches_mpmath():
    """Pages that needed ~10^3 series terms (recall 0.9, nu = 10^3 at iota/beta ~ 1100: 223 us a page) and
    now take the residue form."""
    rng = np.random.default_rng(2)
    m = 200
    dl, nu, lam = 10 ** rng.uniform(-1, 0.5, m), 10 ** rng.uniform(0.5, 3, m), rng.uniform(0.6, 0.98, m)
    pages = PageModel(dl, 1.0, lam, nu)
    iota = pages.beta * rng.uniform(100, 300, m)
    v, used = np.empty(m), np.zeros(m, np.uint8)
    _value.residue_kernel(iota, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate, pages.beta, v, used)
    wide = np.flatnonzero(used.astype(bool) & (pages.false_rate * pages.beta >= np.pi))
    assert len(wide) >= 20
    for k in wide[:6]:
        ref = ref_value(iota[k], dl[k], lam[k], nu[k])
        assert abs(v[k] - ref) <= 1e-13 * ref, k
    big = PageModel([1.0], 1.0, 0.9, 1e3)
    got = crawl_value([10.0], big)[0]
    assert abs(got - ref_value(10.0, 1.0, 0.9, 1e3)) <= 1e-13 * got


# ---------------------------------------------------------------------------
# Work per page: closed forms past LONG_SERIES = 4096 series terms, a cap on every series


def within(seconds, fn, *args):
    """fn(*args) on a thread; fails once ``seconds`` pass (the kernels release the GIL, so a slow one cannot
    hold the test up past it)."""
    import threading

    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:
            box["error"] = e

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(seconds)
    assert not th.is_alive(), f"{getattr(fn, '__name__', fn)} took more than {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def series_reference(iota, dl, lam, nu, which, dps=30):
    """psi (``which="psi"``) or w (``"w"``) summed as their series in ``dps`` digits; a term with R^n = 1 or 0 to
    1e-35 (Chernoff: Q^n(x), R^n(x) <= exp(-(x - n)^2 / (2 max(x, n)))) is counted without evaluating gammainc."""
    with mp.workdps(dps):
        dl, lam, nu, iota = (mp.mpf(float(v)) for v in (dl, lam, nu, iota))
        alpha, gamma = (1 - lam) * dl, lam * dl + nu
        beta = mp.log1p(lam * dl / nu) / alpha
        c = dl + nu
        rate, fac = (gamma, 1) if which == "psi" else (c, nu / c)
        K = int(mp.floor(iota / beta))
        tot, n, w = mp.mpf(0), 0, mp.mpf(1)
        while n <= K:
            x = rate * (iota - n * beta)
            gap = x - n
            if gap > 0 and gap * gap > 170 * x:
                r = mp.mpf(1)
            elif gap < 0 and gap * gap > 170 * max(x, n):
                break
            else:
                r = mp.gammainc(n + 1, 0, x, regularized=True)
            tot += w * r / rate
            if which == "w":
                w *= fac
                if w < mp.mpf(10) ** -40 * tot:
                    break
            n += 1
        return tot


@pytest.mark.parametrize("dl, lam, nu", [(1.0, 1e-3, 1.0), (0.01, 0.3, 5.0), (0.5, 0.05, 3.0)])
def test_residue_forms_of_psi_and_w_on_both_sides_of_the_switch(dl, lam, nu):
    # psi: the closed form (iota + kappa)/(1 + gamma beta) + (residues <= beta r^K/4) from gamma iota > 4096 on;
    # w: gamma T2(y)/(Delta alpha (1 + u)) + (1 - e^{-alpha iota})/(alpha (1 + u)) from (Delta + nu) iota > 4096 on
    pages = PageModel(dl, 1.0, lam, nu)
    assert 4096 * pages.beta[0] < 0.95 * 4096 / (dl + nu)  # K > 4096 on both sides: only the product decides
    for which, rate, fn in (("psi", pages.gamma[0], crawl_interval), ("w", dl + nu, fresh_time)):
        for side in (0.97, 1.03):
            iota = side * 4096 / rate
            ref = series_reference(iota, dl, lam, nu, which)
            got = fn(iota, pages)[0]
            assert abs(got - ref) <= 1e-12 * ref, (which, iota, got, ref)


def test_psi_residue_bound_holds_where_the_form_is_not_used():
    # psi minus its two-pole part against beta r^K / 4 (r = gamma beta / pi) at K = 16..40, in 30 digits
    pages = PageModel(1.0, 1.0, 0.6, 0.5)
    g, b = pages.gamma[0], pages.beta[0]
    u = g * b
    assert u < np.pi
    worst = 0.0
    for k in (16.3, 20.0, 27.5, 40.0):
        iota = k * b
        ref = series_reference(iota, 1.0, 0.6, 0.5, "psi", dps=40)
        with mp.workdps(40):
            tail = ref - (mp.mpf(iota) + u * b / (2 * (1 + u))) / (1 + u)
        bound = b * (u / np.pi) ** k / 4
        assert abs(tail) <= bound, (k, tail, bound)
        worst = max(worst, float(abs(tail)) / bound)
    assert worst > 1e-5  # not vacuous (measured: 8.7e-5 of the bound)


def long_series_reference(iota, dl, lam, nu, dps=40, window="mp"):
    """(psi, w, V) at iota summed as their series in ``dps`` digits, for long series (K = floor(iota/beta) in the
    thousands): the terms with R^n = 1 to e^-40 (Chernoff, as in ``series_reference`` but at gap^2 > 80 x) are
    counted in closed form (psi: their number over gamma; w: the geometric sum (1 - rho^m)/Delta of a prefix of m
    terms), and only the terms in between take mp.gammainc; V = w - e^{-alpha iota} psi in those digits.

    ``window="scipy"`` (for K up to 1e5 in a fast test): those terms in between take scipy.special.gammainc of
    x_n rounded to double instead (the sums, rho^n and x_n stay in ``dps`` digits).  They are a few percent of the
    terms (about 18 sqrt(x)/(1 + u) of the x/(1 + u) before the tail, u = rate beta) and scipy's R^n is within
    ~1e-14 of each (against mpmath, n up to 1e5), so that reference is within ~1e-15 of the sums."""
    with mp.workdps(dps):
        dl, lam, nu, iota = (mp.mpf(float(v)) for v in (dl, lam, nu, iota))
        alpha, gamma, c = (1 - lam) * dl, lam * dl + nu, dl + nu
        beta = mp.log1p(lam * dl / nu) / alpha
        rho = nu / c
        K = int(mp.floor(iota / beta))
        out = []
        for rate, fac in ((gamma, None), (c, rho)):
            n = np.arange(K + 1)
            x = float(rate) * (float(iota) - n * float(beta))
            gap = x - n
            one = (gap > 0) & (gap * gap > 80 * x)
            zero = (gap < 0) & (gap * gap > 80 * np.maximum(x, n))
            m = int(np.argmin(one)) if not one.all() else K + 1  # the R^n = 1 terms: a prefix of m terms
            assert not one[m:].any()
            tot = mp.mpf(m) / rate if fac is None else (1 - fac**m) / dl
            idx = [int(i) for i in np.flatnonzero(~one & ~zero)]
            xs = [rate * (iota - i * beta) for i in idx]
            if window == "mp":
                rs = [mp.gammainc(i + 1, 0, xi, regularized=True) for i, xi in zip(idx, xs)]
            else:
                rs = [mp.mpf(float(r)) for r in gammainc(np.array(idx) + 1.0, np.array([float(xi) for xi in xs]))]
            for i, r in zip(idx, rs):
                tot += (r if fac is None else fac**i * r) / rate
            out.append(tot)
        psi, w = out
        return float(psi), float(w), float(w - mp.exp(-alpha * iota) * psi)


def test_psi_past_4096_terms_where_the_closed_form_is_refused():
    # the bug report: residue_interval stored its closed form in psi before testing its error bound, and where the
    # bound refused it (r = u/R = 0.99985, r^K not small) the series was summed on top: psi about twice its value
    # from K > 4096 on (13963.28 instead of 6981.64), and so in the frequencies and thresholds of optimal_thresholds
    from scipy.special import gammainc

    dl, lam, nu = 0.001, 0.99, 0.58
    pages = PageModel([dl], [1.0], [lam], [nu])
    g, b = lam * dl + nu, float(pages.beta[0])
    for t, k in [(698000.0, 4092), (698669.33466733, 4096), (698889.44472236, 4097)]:
        assert int(t // b) == k
        n = np.arange(k + 1)
        ref = (gammainc(n + 1, g * (t - n * b)) / g).sum()
        got = crawl_interval(np.array([t]), pages)[0]
        assert abs(got - ref) <= 1e-12 * ref, (t, got, ref)
        assert crawl_frequency(t, pages)[0] == 1.0 / got
        v, psi = np.empty(1), np.empty(1)
        _value.value_interval_kernel(np.array([t]), pages.change_rate, pages.alpha, pages.gamma, pages.false_rate,
                                     pages.beta, np.ones(1), v, psi)
        assert psi[0] == got  # (the fused series of the thresholds' solve: same bits)
    u = g * b  # the renewal asymptote agrees to 2.5e-8 only: the closed form is rightly refused there
    t = 698669.33466733
    assert 1e-9 < abs((t + u * b / (2 * (1 + u))) / (1 + u) / crawl_interval(t, pages)[0] - 1) < 1e-7


def check_long_series(ldl, lam, nu, k, frac, window):
    """psi, w and V (and the fused V and psi of the thresholds' solve, and V's series where its closed form would
    be taken: approx with every term) against ``long_series_reference`` at iota = (k + frac) beta; the fused
    results, and the batch V against page_value, bit for bit."""
    dl = 10.0**ldl
    pages = PageModel(dl, 1.0, lam, nu)
    iota = (k + frac) * float(pages.beta[0])
    psi, w, v = long_series_reference(iota, dl, lam, nu, window=window)
    t = np.array([iota])
    fv, fpsi = np.empty(1), np.empty(1)
    _value.value_interval_kernel(t, pages.change_rate, pages.alpha, pages.gamma, pages.false_rate, pages.beta,
                                 np.ones(1), fv, fpsi)
    got_psi, got_v = crawl_interval(t, pages)[0], crawl_value(t, pages)[0]
    for name, got, ref in (("psi", got_psi, psi), ("w", fresh_time(t, pages)[0], w), ("V", got_v, v),
                           ("V series", crawl_value(t, pages, "approx", 2 * k + 2)[0], v)):
        assert abs(got - ref) <= 1e-12 * ref, (name, got, ref)
    assert_bits_equal([fpsi[0], fv[0]], [got_psi, got_v])
    assert_bits_equal(scalar_values(t, pages), [got_v])


# recalls from 0.8 to 1 - 1e-5, half of them past 0.99 (where gamma beta is large and the series run long), and
# K on both sides of LONG_SERIES = 4096, past it and up to 1e5 (a third each)
long_recalls = st.one_of(st.floats(0.8, 0.99), st.floats(-5.0, -2.0).map(lambda e: 1.0 - 10.0**e))
long_ks = st.one_of(st.integers(3800, 4400), st.integers(4400, 20_000), st.integers(20_000, 100_000))


@settings(max_examples=300, deadline=None)
@given(ldl=st.floats(-3.0, 3.0), lam=long_recalls, nu=st.floats(0.05, 3.0), k=long_ks, frac=st.floats(0.0, 0.999))
@example(ldl=-3.0, lam=0.99, nu=0.58, k=4096, frac=0.3)  # (the bug report's page: the closed form refused)
@example(ldl=0.0, lam=0.999, nu=0.58, k=5000, frac=0.5)  # (gamma beta = 1.6e3: r >= 1, the closed form not tried)
@example(ldl=math.log10(20.0), lam=0.999, nu=1.0, k=100_000, frac=0.5)  # (psi by plain summation: 2.7e-12 off)
@example(ldl=-6.0, lam=0.99, nu=3.0, k=100_000, frac=0.37)  # (rho = 1 - 3e-7: w and V 1.2e-12 off by rho_n *= rho)
def test_long_series_of_psi_w_and_value_match_their_sums(ldl, lam, nu, k, frac):
    # K from 3800 to 1e5 (both sides of LONG_SERIES = 4096), gamma beta from ~4 to ~1e7: the closed forms are taken,
    # refused by their bound (r^K not small) or not tried (r >= 1); the long series add their terms with their
    # rounding errors carried and take rho^n = exp(n log rho) from n = 256 on (plain summation lost 2.7e-12 of psi
    # at K = 1e5, rho_n *= rho 1.2e-12 of w at rho = 1 - 3e-7).  The terms between R^n = 0 and 1 from scipy here
    # (``window="scipy"``), from mpmath in the slow variant below
    check_long_series(ldl, lam, nu, k, frac, "scipy")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(ldl=st.floats(-4.0, 3.0), lam=long_recalls, nu=st.floats(0.05, 3.0), k=long_ks, frac=st.floats(0.0, 0.999))
@example(ldl=math.log10(20.0), lam=0.99, nu=1.0, k=100_000, frac=0.5)
@example(ldl=-6.0, lam=0.99, nu=3.0, k=100_000, frac=0.37)
def test_long_series_match_their_40_digit_sums_exhaustive(ldl, lam, nu, k, frac):
    # the test above against 40-digit sums throughout (mpmath's gammainc for every term between R^n = 0 and 1:
    # seconds an example at K = 1e5)
    check_long_series(ldl, lam, nu, k, frac, "mp")


def test_the_long_interval_of_the_issue_in_bounded_time():
    # 2.4 s for one page before (the series over ~1e7 signals); the closed form now: psi = (iota + kappa)/(1 + u)
    pages = PageModel(1.0, 1.0, recall=1e-6, false_rate=1.0)
    f = within(0.25, crawl_frequency, 1e7, pages)
    u = pages.gamma[0] * pages.beta[0]
    assert f[0] == pytest.approx((1 + u) / (1e7 + u * pages.beta[0] / (2 * (1 + u))), rel=1e-15)


def test_tiny_rates_keep_their_value():
    # Delta alpha and alpha iota near underflow: V ~ mu alpha iota^2 / 2 (R^1(x) ~ x^2/2 would underflow)
    pages = PageModel([1e-300, 1e-300], 1.0, [1e-12, 0.0], [1.0, 0.0])
    v = within(0.25, crawl_value, 1e8, pages)
    np.testing.assert_allclose(v, [0.5 * pages.alpha[0] * 1e16 / (1 + pages.gamma[0] * pages.beta[0]), 0.5e-284],
                               rtol=1e-11)
    np.testing.assert_allclose(crawl_value(1e8, pages[1:], "greedy"), [0.5e-284], rtol=1e-15)


def test_series_past_the_cap_are_refused():
    # a recall of 1 - 1e-9 with 10^8 false signals per unit time: no closed form converges, the series would need
    # ~1e7 terms; refused (ValueError naming the page) within the cap's ~1 s
    pages = PageModel([1.0, 1.0], 1.0, [0.5, 1 - 1e-9], [1.0, 1e8])
    for fn in (crawl_value, crawl_interval, fresh_time, crawl_frequency):
        with pytest.raises(ValueError, match=r"cannot evaluate page 1 \(change_rate=1\.0, recall=0\.999999999"):
            within(10.0, fn, 1e8, pages)


rates = st.one_of(st.just(0.0), st.floats(1e-300, 1e300).map(lambda v: float(10 ** np.round(np.log10(v), 3))))
recalls = st.one_of(st.just(0.0), st.just(1.0), st.floats(1e-300, 1.0), st.floats(1e-16, 0.5).map(lambda e: 1 - e))
iotas = st.one_of(st.just(0.0), st.just(np.inf), st.floats(1e-300, 1e300))


@settings(max_examples=60, deadline=None)
@given(dl=rates, lam=recalls, nu=rates, iota=iotas)
def test_extreme_parameters_finish_in_bounded_time(dl, lam, nu, iota):
    """Every function at any parameters: an answer within its bounds in bounded time, or a clear ValueError."""
    pages = PageModel(dl, 1.0, lam, nu)
    for fn in (crawl_value, crawl_interval, fresh_time):
        try:
            r = within(5.0, fn, iota, pages)[0]
        except ValueError as e:
            assert "cannot evaluate page 0" in str(e)
            continue
        assert not np.isnan(r), fn.__name__
        if fn is crawl_value:
            assert 0.0 <= r <= (1.0 / dl if dl > 0 else 0.0) * (1 + 1e-12)  # V <= mu/Delta
        elif fn is crawl_interval:
            assert r <= iota * (1 + 1e-12)  # tau_eff grows at least as fast as time
        else:
            assert 0.0 <= r <= (1.0 / dl if dl > 0 else np.inf) * (1 + 1e-12)  # fresh at most until the change


# (change_rate, recall, false_rate, time): pages whose products of two rates leave the double range, where V, w or
# psi were wrong before the unit change (V 1.8 times mu/Delta, w = inf) or where the time itself is past 2**1023
# in the unit of the rates
EXTREME_PAGES = [
    (1e153, 0.25, 1e135, 1e153),
    (7e231, 0.25, 1e213, 1e-230),
    (7e231, 0.25, 1e213, 1e230),
    (1e-300, 0.25, 1e-290, 1e295),
    (1.7218685749860236e-102, 0.5, 1.606941253012836e206, 1e-200),
    (6.714288529259495e153, 0.25, 7.144963260755354e135, 2.0**512),
    (5.000345349769927e291, 0.125, 2.660725059798879e273, 2.0**54),
    (1.9678862897067666e287, 0.25, 2.2181964198002376e269, 4.946608029462091e173),
]


@pytest.mark.parametrize(("delta", "recall", "nu", "iota"), EXTREME_PAGES)
def test_extreme_rates_are_evaluated_in_a_unit_near_them(delta, recall, nu, iota):
    """V, w and psi do not depend on the unit of time: at rates past 2**+-200 they are those of the same page in
    the unit where its largest rate is about 1 (exact powers of two), or V's and w's limits where the time is past
    the double range in that unit."""
    pages = PageModel(delta, 1.0, recall, nu)
    e = np.frexp(max(delta, nu))[1]
    scaled = PageModel(np.ldexp(delta, -e), 1.0, recall, np.ldexp(nu, -e))
    with np.errstate(over="ignore"):
        t = np.ldexp(iota, e)
    if np.isfinite(t):
        want = [np.ldexp(fn(t, scaled)[0], -e) for fn in (crawl_value, fresh_time, crawl_interval)]
    else:  # past 2**1023: the limits at iota = inf
        want = [1.0 / delta, 1.0 / delta, None]
    got = [within(5.0, fn, iota, pages)[0] for fn in (crawl_value, fresh_time, crawl_interval)]
    for g, w in zip(got[:2], want[:2]):
        assert g == pytest.approx(w, rel=1e-14)
        assert 0.0 <= g <= 1.0 / delta * (1 + 1e-12)
    if want[2] is not None:
        assert got[2] == pytest.approx(want[2], rel=1e-14)
    assert 0.0 < got[2] <= iota


@settings(max_examples=200, deadline=None)
@given(lam=st.one_of(st.floats(1e-300, 1 - 1e-16), st.floats(1e-16, 0.5).map(lambda e: 1 - e)),
       log_ratio=st.floats(-300, 300))
def test_value_and_fresh_time_reach_their_limits_past_the_double_range(lam, log_ratio):
    """What the unit change relies on: with the largest rate about 1 and beta finite, V and w at iota = 2**1023
    are their limits mu/Delta and 1/Delta (K = iota/beta > 1e290 terms)."""
    r = 10.0**log_ratio
    delta, nu = (1.0, r) if r < 1 else (1.0 / r, 1.0)
    pages = PageModel(delta, 1.0, lam, nu)
    if not 0.0 < pages.beta[0] < np.inf:
        return
    for fn in (crawl_value, fresh_time):
        try:
            got = within(5.0, fn, 2.0**1023, pages)[0]
        except ValueError as e:  # (a page past the series cap, refused alike at every time)
            assert "cannot evaluate page 0" in str(e)
            continue
        assert got == pytest.approx(1.0 / delta, rel=1e-14)


@pytest.mark.parametrize("recall", [5e-324, 1e-310, 1e-300])
def test_interval_with_a_subnormal_signal_rate(recall):
    """psi = R^0(gamma iota)/gamma with gamma subnormal is iota (the literal quotient was 0, so f = inf)."""
    pages = PageModel([54.88, 1.0], [1.0, 1.0], recall=[recall, recall], false_rate=0.0)
    iota = np.array([0.009, 3.0])
    np.testing.assert_allclose(crawl_interval(iota, pages), iota, rtol=1e-15)
    np.testing.assert_allclose(crawl_frequency(iota, pages), 1.0 / iota, rtol=1e-15)


def test_arguments_past_the_largest_double_do_not_hang():
    """c s overflowing to inf in a term of V: the Poisson pmf at inf is 0 (was NaN, and the difference series never
    stopped). Such a page is now answered or refused within the cap's time: refused where its rates are within
    2**+-200 (no change of unit), answered by V's limit mu/Delta where nu iota is past the double range."""
    pages = PageModel(3.019951720402044e-112, 1.0, 0.9999998868664156, 1e60)
    with pytest.raises(ValueError, match="cannot evaluate page 0"):
        within(10.0, crawl_value, 1e250, pages)
    pages = PageModel(3.019951720402044e-112, 1.0, 0.9999998868664156, 6.280583588133205e164)
    assert within(10.0, crawl_value, 3.6399911165453953e155, pages)[0] == 1.0 / 3.019951720402044e-112
