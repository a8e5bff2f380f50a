"""The compiled polled-signal value (freshcore._polled, issue 19): against the numpy reference
(tests/_polled_reference.py) and the 50-digit recursion of tests/test_polled_signals.py over a wide parameter
grid, on both of its paths (the CDF sums and the point walk it falls back to), the inverse polled_threshold (a
lower bound of the crossing), invariants, and the work bound."""

import math

import numpy as np
import pytest
from _polled_reference import _page_sums
from hypothesis import given, settings
from hypothesis import strategies as st
from test_polled_signals import ref_sums

from freshcore import PageModel, _polled
from freshcore.polled_signals import (
    MAX_STEPS,
    moved_weight,
    polled_fresh_time,
    polled_interval,
    polled_threshold,
    polled_value,
)
from freshcore.value import crawl_value

# (Delta, lambda, nu, w): lambda -> 0 and -> 1, nu -> 0 and large, w tiny and large, Delta tiny and huge
WIDE = [
    (1.0, 1e-6, 0.3, 0.3), (1.0, 0.999999, 0.3, 0.3), (1.0, 1.0, 0.3, 0.3), (1.0, 0.5, 1e-6, 0.3),
    (1.0, 0.5, 50.0, 0.3), (1.0, 0.5, 0.3, 1e-3), (1.0, 0.5, 0.3, 30.0), (1e-3, 0.5, 0.3, 1.0),
    (200.0, 0.5, 0.3, 0.01), (0.05, 0.9, 0.1, 0.1), (2.0, 0.3, 0.6, 0.1), (0.7, 0.98, 0.4, 1.0),
]
LEVELS = (1e-7, 0.0231, 0.4117, 1.7313, 6.2131)


def _lattice_points(s, dl, lam, nu, w):
    """About how many points the references visit (rows x columns)."""
    b = float(moved_weight(w, PageModel(dl, 1.0, lam, nu))[0])
    aw = (1 - lam) * dl * w
    rows = s / aw + 2 if aw > 0 else 1e9
    return rows * (s / b + 2 if 0 < b < math.inf else 1.0)


@pytest.fixture(params=[0, 2], ids=["auto", "walk"])
def mode(request):
    """The kernel's path: 0 the CDF sums where they vouch for their result, else the walk; 2 the walk only."""
    old = _polled._set_mode(request.param)
    yield request.param
    _polled._set_mode(old)


@pytest.mark.parametrize("dl, lam, nu, w", WIDE)
def test_compiled_matches_50_digits_and_numpy(dl, lam, nu, w, mode):
    pages = PageModel(dl, 1.7, lam, nu)
    worst = 0.0
    for s in LEVELS:
        got = (polled_interval(s, w, pages)[0], polled_fresh_time(s, w, pages)[0], polled_value(s, w, pages)[0] / 1.7)
        points = _lattice_points(s, dl, lam, nu, w)
        if points < 2e5:
            for g, r in zip(got, _page_sums(s, dl, lam, nu, w)):
                assert g == pytest.approx(r, rel=1e-12, abs=0.0), (s, g, r)
        if points < 1500 and nu > 0:  # the 50-digit recursion visits every lattice point
            exact = [float(v) for v in ref_sums(s, dl, lam, nu, w, dps=40)]
            for g, r in zip(got, exact):
                worst = max(worst, abs(g - r) / r)
    assert worst <= 1e-12  # measured: below 1e-14


def test_compiled_matches_numpy_on_the_demo_web():
    """Random demo pages (Delta, mu ~ U[0, 1], lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6)) at w = 1, 0.3, 0.1."""
    rng = np.random.default_rng(19)
    n = 60
    pages = PageModel(rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.beta(0.25, 0.25, n), rng.uniform(0.1, 0.6, n))
    s = rng.uniform(0.05, 4.0, n)
    for w in (1.0, 0.3, 0.1):
        v = polled_value(s, w, pages)
        ref = np.array([_page_sums(s[i], pages.change_rate[i], pages.recall[i], pages.false_rate[i], w, False)[2]
                        for i in range(n)]) * pages.importance
        np.testing.assert_allclose(v, ref, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("dl, lam, nu, w", [(1.0, 0.5, 0.3, 0.1), (0.7, 0.98, 0.4, 1.0), (1.0, 1e-3, 0.3, 0.3),
                                            (2.0, 0.9, 0.1, 0.3), (1.0, 1.0, 0.3, 0.5), (0.8, 0.0, 0.3, 0.5)])
def test_threshold_is_the_crossing_and_a_lower_bound(dl, lam, nu, w):
    mu = 1.3
    pages = PageModel(dl, mu, lam, nu)
    for frac in (1e-9, 0.01, 0.2, 0.6, 0.95, 0.999):
        level = frac * mu / dl
        s = polled_threshold(level, w, pages)[0]
        assert 0.0 < s < math.inf
        slack = level * (1 - 1e-12)
        assert polled_value(s, w, pages)[0] >= slack
        assert polled_value(np.nextafter(s, 0.0), w, pages)[0] < slack
        # lower bound: the true value (the numpy reference, 50-digit-checked) is below the level before s
        below = np.nextafter(s, 0.0)
        assert _page_sums(below, dl, lam, nu, w, False)[2] * mu < level


def test_threshold_at_a_jump_and_special_levels():
    """At an unmoved breakpoint theta V jumps up: levels inside the jump are first reached just past theta."""
    dl, lam, nu, w, mu = 1.0, 0.7, 0.3, 0.5, 1.3
    pages = PageModel(dl, mu, lam, nu)
    theta = dl * w  # x(1, 0) + lambda Delta w
    lo, hi = (polled_value(theta * (1 + e), w, pages)[0] for e in (-1e-13, 1e-13))
    s = polled_threshold(0.5 * (lo + hi), w, pages)[0]
    assert s == pytest.approx(theta, rel=1e-12) and s >= theta * (1 - 1e-15)
    many = PageModel([1.0, 1.0, 0.0, 1.0], 1.0, 0.5, 0.3)
    out = polled_threshold([0.0, 1.0, 0.5, np.inf], 0.3, many)
    assert out.tolist() == [0.0, math.inf, math.inf, math.inf]


@settings(max_examples=60, deadline=None)
@given(dl=st.floats(0.01, 5.0), lam=st.floats(0.0, 1.0), nu=st.floats(0.01, 2.0), w=st.floats(0.05, 3.0),
       s=st.floats(1e-4, 8.0), h=st.floats(1e-6, 0.5))
def test_value_invariants(dl, lam, nu, w, s, h):
    pages = PageModel(dl, 1.0, lam, nu)
    v0, v1 = polled_value([s, s + h], w, PageModel([dl, dl], 1.0, lam, nu))
    assert 0.0 < v0 <= v1 * (1 + 1e-13) <= (1.0 / dl) * (1 + 1e-13)
    alpha = (1 - lam) * dl
    if alpha > 0:
        r1 = -math.expm1(-s) - s * math.exp(-s)
        assert v0 <= min(1.0 / dl, r1 / alpha) * (1 + 1e-12)
    fr = polled_fresh_time(s, w, pages)[0]
    psi = polled_interval(s, w, pages)[0]
    assert v0 == pytest.approx(fr - math.exp(-s) * psi, rel=1e-9, abs=1e-15)


def test_refuses_pages_past_max_steps_without_hanging():
    """The walk refuses a page past MAX_STEPS points (here ~10^8); the CDF sums evaluate the same page (in a
    few hundred tail terms) and agree with the limit w -> 0 (the value of Busa-Fekete et al. at
    tau_eff = s/alpha, |V_w - V_0|/V_0 ~ 0.1 to 0.3 w)."""
    pages = PageModel([1.0, 1.0], 1.0, 0.5, 0.3)
    assert MAX_STEPS == 1 << 24
    old = _polled._set_mode(2)
    try:
        with pytest.raises(ValueError, match=r"polled_interval cannot evaluate page 1 .*MAX_STEPS = 16777216"):
            polled_interval([0.1, 30.0], 1e-6, pages)
        with pytest.raises(ValueError, match=r"polled_threshold cannot evaluate page 1 .*MAX_STEPS"):
            polled_threshold([0.01, 0.999], 1e-6, pages)
    finally:
        _polled._set_mode(old)
    s = np.array([0.1, 2.0, 30.0])
    three = PageModel([1.0] * 3, 1.0, 0.5, 0.3)
    cont = crawl_value(s / 0.5, three)
    np.testing.assert_allclose(polled_value(s, 1e-6, three), cont, rtol=1e-5)
    assert np.all(np.isfinite(polled_interval(s, 1e-6, three)))
    level = polled_threshold([0.01, 0.999], 1e-6, pages)
    assert np.all(np.isfinite(level))


# (Delta, lambda, nu, w) with a band (s - Delta w < x < s) of more than BAND_WALK = 24 points, which the CDF
# sums take by its sums of P, W and k P, and small enough for the 50-digit recursion
WIDE_BAND = [(1.0, 0.97, 0.3, 1.0), (0.5, 0.99, 0.2, 0.5), (2.0, 0.96, 0.6, 0.3), (1.0, 0.98, 0.05, 2.0)]


@pytest.mark.parametrize("dl, lam, nu, w", WIDE_BAND + WIDE[:6])
def test_cdf_sums_match_50_digits_and_the_walk(dl, lam, nu, w):
    """The CDF path alone (mode 1: -2 where its error bound is above 4e-13 of a sum) against the 50-digit
    recursion and the walk."""
    pages = PageModel(dl, 1.0, lam, nu)
    worst = 0.0
    vouched = 0
    for s in (0.3, 1.1, 2.7, 4.4):
        fast, walked = [], []
        for m, out in ((1, fast), (2, walked)):
            old = _polled._set_mode(m)
            try:
                for fn in (polled_interval, polled_fresh_time, polled_value):
                    try:
                        out.append(fn(s, w, pages)[0])
                    except ValueError:
                        out.append(math.nan)
            finally:
                _polled._set_mode(old)
        if not all(math.isfinite(v) for v in fast):
            continue
        vouched += 1
        for f, g in zip(fast, walked):
            assert f == pytest.approx(g, rel=1e-12, abs=0.0), (s, f, g)
        if _lattice_points(s, dl, lam, nu, w) < 1500 and nu > 0:
            for f, r in zip(fast, ref_sums(s, dl, lam, nu, w, dps=40)):
                worst = max(worst, abs(f - float(r)) / float(r))
    assert vouched >= 2
    assert worst <= 1e-12


def test_cdf_sums_vouch_for_most_demo_pages():
    """On the demo web at its crawl levels the CDF sums are the path taken for nearly every page (the walk is
    the fallback for small s, where V ~ s^2/2 is small against the sums it is the difference of)."""
    rng = np.random.default_rng(7)
    n = 300
    pages = PageModel(rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.beta(0.25, 0.25, n), rng.uniform(0.1, 0.6, n))
    s = rng.uniform(0.5, 6.0, n)
    for w in (1.0, 0.3, 0.1):
        old = _polled._set_mode(1)
        try:
            ok = 0
            for i in range(n):
                try:
                    polled_value(s[i], w, pages[i:i + 1])
                    ok += 1
                except ValueError:
                    pass
        finally:
            _polled._set_mode(old)
        assert ok >= 0.95 * n


def test_threshold_bad_input():
    pages = PageModel([1.0, 1.0], 1.0, 0.5, 0.3)
    with pytest.raises(ValueError, match=r"level\[1\] = -1.0"):
        polled_threshold([0.1, -1.0], 0.5, pages)
    with pytest.raises(ValueError, match=r"level\[0\] = nan"):
        polled_threshold([np.nan, 0.1], 0.5, pages)
    with pytest.raises(ValueError, match=r"poll_interval\[1\] = 0.0"):
        polled_threshold(0.1, [0.5, 0.0], pages)
    with pytest.raises(ValueError, match="length 2"):
        polled_threshold([0.1, 0.2, 0.3], 0.5, pages)
    with pytest.raises(TypeError, match="PageModel"):
        polled_threshold(0.1, 0.5, [1.0])


def test_cdf_sums_and_walk_match_numpy_on_a_many_column_page(monkeypatch):
    """~350 columns of up to ~10^5 alive points each (b/(alpha w) ~ 340, high false-move rate): both paths against
    the numpy reference (allowed 2^31 points here; ~2.5 s).  The walk gave psi = 52.27 here against 60.77: its
    weights, carried up each column by the ratios of consecutive terms from ``P(k = 0) = q^j``, underflowed past
    ``j ~ 290`` (``q = 0.078``), so whole columns summed to zero and the column stop rule took that for the end."""
    import freshcore.polled_signals as ps

    monkeypatch.setattr(ps, "MAX_POINTS", 1 << 31)
    dl, lam, nu, w, s = 0.02302299042234959, 0.9633779267819443, 5.814634531863765, 0.013977262648677956, 1.4
    pages = PageModel(dl, 1.0, lam, nu)
    ref = _page_sums(s, dl, lam, nu, w)
    assert ref[0] == pytest.approx(60.772243592552, rel=1e-12)
    for m in (0, 1, 2):
        old = _polled._set_mode(m)
        try:
            got = (polled_interval(s, w, pages)[0], polled_fresh_time(s, w, pages)[0], polled_value(s, w, pages)[0])
        finally:
            _polled._set_mode(old)
        for g, r in zip(got, ref):
            assert g == pytest.approx(r, rel=1e-12, abs=0.0), (m, g, r)


def _many_column_pages(seed, n, lam_near_one, max_points):
    """Pages whose columns run past the underflow of ``q^j`` (``j > 745/|log q|``): ``(Delta, lambda, nu, w, s,
    points)``."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        dl = 10 ** rng.uniform(-3, 0)
        lam = 1 - 10 ** rng.uniform(-2, -1) if lam_near_one else rng.uniform(0.01, 0.999)
        nu, w, s = 10 ** rng.uniform(-0.5, 1.5), 10 ** rng.uniform(-3, 0), rng.uniform(0.3, 5.0)
        q = -math.expm1(-(lam * dl + nu) * w)
        b = float(moved_weight(w, PageModel(dl, 1.0, lam, nu))[0])
        aw = (1 - lam) * dl * w
        columns = s / (aw + b)
        points = columns * s / aw
        if columns > 1.1 * 745 / -math.log(q) and points < max_points:
            out.append((dl, lam, nu, w, s, points))
    return out


@pytest.mark.parametrize("seed, n, lam_near_one, max_points", [(1, 60, False, 3e6), (2, 8, True, 3e7)],
                         ids=["lambda", "lambda-near-1"])
def test_walk_matches_the_cdf_sums_and_numpy_past_the_underflow(seed, n, lam_near_one, max_points):
    """A sweep of many-column pages (small Delta w, large nu; lambda anywhere and near 1, s up to 5) whose columns
    start below the underflow: the walk alone (mode 2) against the CDF sums where they vouch for their result
    (mode 1) and the numpy reference where it is cheap (the walk was off by up to 4e-6 and 0.23 here)."""
    worst = 0.0
    vouched = 0
    for dl, lam, nu, w, s, points in _many_column_pages(seed, n, lam_near_one, max_points):
        pages = PageModel(dl, 1.0, lam, nu)
        res = []
        for m in (1, 2):
            old = _polled._set_mode(m)
            try:
                res.append([fn(s, w, pages)[0] for fn in (polled_interval, polled_fresh_time, polled_value)])
            except ValueError:
                res.append(None)
            finally:
                _polled._set_mode(old)
        fast, walked = res
        assert walked is not None
        if fast is not None:
            vouched += 1
            for f, g in zip(fast, walked):
                worst = max(worst, abs(g - f) / f)
        if points < 3e5:
            for g, r in zip(walked, _page_sums(s, dl, lam, nu, w)):
                worst = max(worst, abs(g - r) / r)
    assert vouched >= n // 2
    assert worst <= 1e-12  # measured: 6e-14


def test_negative_binomial_cdf_within_its_error_bound():
    """The CDF sums' building block against 50-digit incomplete beta values: both tails within their bounds."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    rng = np.random.default_rng(3)
    for _ in range(60):
        r, p, kk = float(rng.integers(1, 300)), 10 ** rng.uniform(-3, -0.01), float(np.floor(10 ** rng.uniform(0, 4.5)))
        st_, lo, elo, up, eup = _polled._nb_cdf(kk, r, p)
        assert st_ == 0
        pm = mp.mpf(p)
        for got, bound, ref in ((lo, elo, mp.betainc(r, kk + 1, 0, pm, regularized=True)),
                                (up, eup, mp.betainc(kk + 1, r, 0, 1 - pm, regularized=True))):
            assert abs(got - float(ref)) <= bound + 1e-300, (r, p, kk, got, float(ref), bound)
            # (6 |log pmf| + 24 + the deviances' |i - n p| terms) ulps: tails below 1e-30 get more (the deviance
            # terms were missing from the old 6 |log pmf| + 256, which held here to 1e-100 but not at n ~ 1e8)
            assert bound <= 2e-13 * got or got < 1e-30


def test_recall_within_ulps_of_one_returns():
    """alpha w within ulps of 0 against the level: the columns' last k come from a bisection, not steps of one
    from the cap (which never returned: recall = 1 - 3e-15, Delta = 0.105, nu = 0.57, w = 0.1, s = 0.86)."""
    rng = np.random.default_rng(41)
    for _ in range(60):
        dl = float(np.exp(rng.uniform(np.log(1e-3), np.log(50.0))))
        nu = float(rng.uniform(0.01, 2.0))
        w = float(rng.choice([1e-3, 0.1, 1.0, 10.0]))
        s = float(rng.uniform(0.01, 12.0))
        for k in (1, 3, 14, 1000, 10**6):
            v = polled_value(s, w, PageModel([dl], [1.0], [1.0 - k * 2.0**-53], [nu]))[0]
            assert 0.0 < v <= 1.0 / dl
    v = polled_value(0.8595187267516831, 0.1, PageModel([0.10503335150165292], [1.0], [0.9999999999999969],
                                                        [0.5735081516595044]))[0]
    assert v == pytest.approx(polled_value(0.8595187267516831, 0.1, PageModel([0.10503335150165292], [1.0], [1.0],
                                                                                [0.5735081516595044]))[0], rel=1e-12)


def test_recall_within_ulps_of_one_tends_to_recall_one():
    """Values for recall 1 - k ulp tend to those of recall 1 (the point walk alone stopped columns early on such
    pages: psi 229 against 245.6 at Delta = 0.043, nu = 1.68, w = 0.001, s = 10.8)."""
    rng = np.random.default_rng(43)
    for _ in range(40):
        dl = float(np.exp(rng.uniform(np.log(1e-3), np.log(50.0))))
        nu = float(rng.uniform(0.01, 2.0))
        w = float(rng.choice([1e-3, 0.1, 1.0, 10.0]))
        s = float(rng.uniform(0.5, 12.0))
        one = polled_value(s, w, PageModel([dl], [1.0], [1.0], [nu]))[0]
        for k in (1, 14, 10**6):
            v = polled_value(s, w, PageModel([dl], [1.0], [1.0 - k * 2.0**-53], [nu]))[0]
            assert abs(v - one) <= 1e-9 * one, (dl, nu, w, s, k, v, one)


def test_threshold_closes_its_bracket_on_the_demo_web():
    """polled_level's end (a Newton landing within four ulps, then steps of 1, 1, 2, 4, ... ulps and bisection)
    and its start (just below the root of mu R^1(s)/alpha = level): on random demo pages and on Greedy pages
    (lambda = 0, where that start is within 1e-3 of the crossing) the result is the crossing to one ulp."""
    rng = np.random.default_rng(23)
    n = 300
    lam = rng.beta(0.25, 0.25, n)
    lam[:40] = 0.0
    pages = PageModel(rng.uniform(0.05, 1, n), rng.uniform(0.1, 1, n), lam, rng.uniform(0.1, 0.6, n))
    s = rng.uniform(0.05, 6.0, n)
    for w in (1.0, 0.1):
        level = polled_value(s, w, pages)
        got = polled_threshold(level, w, pages)
        slack = level * (1 - 1e-12)
        assert np.all(polled_value(got, w, pages) >= slack)
        assert np.all(polled_value(np.nextafter(got, 0.0), w, pages) < slack)
        np.testing.assert_allclose(got, s, rtol=1e-9)


def test_band_residual_within_a_few_ulps():
    """R^1(y) = 1 - e^{-y}(1 + y) and 1 - e^{-y} as the band sums take them (Taylor series below 1, from e^{-y}
    above) against 50 digits: within 8 and 3 ulps (the band's error bound allows 40 a point for the pmf and
    these together; measured: 6.2 and 2)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    ys = np.concatenate([10 ** np.linspace(-8, 2, 400), np.nextafter(1.0, [0.0, 2.0]), [1.0, 0.999, 1.001, 40.0]])
    for y in ys:
        e = mp.exp(-mp.mpf(y))
        r1, fr = _polled._r1(float(y))
        assert abs(r1 - float(1 - e * (1 + mp.mpf(y)))) <= 8 * 2.0**-53 * float(1 - e * (1 + mp.mpf(y))), y
        assert abs(fr - float(1 - e)) <= 3 * 2.0**-53 * float(1 - e), y
