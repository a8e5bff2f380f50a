"""The compiled polled-signal value at small poll intervals (w = 1e-2, 1e-3, 1e-4; issue 19, as w -> 0 the
lattice has ~1/w points a column): against the 30-digit recursion of tests/test_polled_signals.py and the numpy
reference, on both paths; the error bounds the CDF sums rest on (Loader's log-pmf at n up to 1e9, the negative
binomial tails at the small-w pages' sizes) against 50-digit values."""

import math

import numpy as np
import pytest
from _polled_reference import _page_sums
from test_polled_signals import ref_sums

from freshcore import PageModel, _polled
from freshcore.polled_signals import polled_fresh_time, polled_interval, polled_value

mp = pytest.importorskip("mpmath")
EPS = 2.0**-53

# (Delta, lambda, nu, w, s): s off the lattice's levels (psi and V jump there), references within ~1 s each
SMALL_W = [
    (1.0, 0.5, 0.3, 1e-2, 0.5137), (0.2, 0.05, 0.4, 1e-2, 0.4137), (1.0, 0.97, 0.3, 1e-2, 1.2137),
    (1.0, 0.5, 0.3, 1e-3, 0.5137), (1.0, 0.1, 0.5, 1e-3, 0.8137), (2.0, 0.9, 0.2, 1e-3, 1.5137),
    (0.05, 0.3, 0.4, 1e-3, 0.1137),
    (1.0, 0.5, 0.3, 1e-4, 0.2137), (3.0, 0.8, 0.05, 1e-4, 0.3137),
]


def compiled_sums(s, dl, lam, nu, w):
    """``(psi, w, V/mu)`` of one page from the public functions (the compiled kernel), as ``ref_sums`` gives them."""
    pages = PageModel(dl, 1.3, lam, nu)
    return (polled_interval(s, w, pages)[0], polled_fresh_time(s, w, pages)[0], polled_value(s, w, pages)[0] / 1.3)


@pytest.fixture(params=[0, 2], ids=["auto", "walk"])
def mode(request):
    old = _polled._set_mode(request.param)
    yield request.param
    _polled._set_mode(old)


@pytest.mark.parametrize("dl, lam, nu, w, s", SMALL_W)
def test_small_w_matches_30_digits_and_numpy(dl, lam, nu, w, s, mode):
    got = compiled_sums(s, dl, lam, nu, w)
    for g, r in zip(got, ref_sums(s, dl, lam, nu, w, dps=30)):
        assert abs(g - float(r)) <= 1e-12 * float(r), (g, float(r))  # measured: 7e-16 (walk: 4e-15)
    for g, r in zip(got, _page_sums(s, dl, lam, nu, w)):
        assert g == pytest.approx(r, rel=1e-12, abs=0.0)


def test_log_binom_within_its_error_bound():
    """Loader's log-pmf of the CDF sums' first terms against 50 digits, n up to 1e9 (the small-w columns): its
    error grows with |i - n p| (the rounding of n p against Loader's stationary deviance), which the old bound
    (6 |lp| + 256 ulps) missed by ~10^4 ulps at n ~ 1e8."""
    rng = np.random.default_rng(11)
    worst = 0.0
    with mp.workdps(50):
        for _ in range(400):
            n = float(np.floor(10 ** rng.uniform(0.3, 9)))
            p = 10 ** rng.uniform(-8, -0.001) if rng.uniform() < 0.8 else 1 - 10 ** rng.uniform(-6, -0.3)
            sd = math.sqrt(n * p * (1 - p))
            i = float(np.clip(np.round(n * p + rng.normal() * sd * rng.uniform(0, 10)), 1, n - 1))
            if not 0 < i < n:
                continue
            lp, bound = _polled._log_binom(i, n, p)
            pm, nm, im = mp.mpf(p), mp.mpf(n), mp.mpf(i)
            ref = (mp.loggamma(nm + 1) - mp.loggamma(im + 1) - mp.loggamma(nm - im + 1) + im * mp.log(pm)
                   + (nm - im) * mp.log(1 - pm))
            worst = max(worst, abs(lp - float(ref)) / bound)
    assert worst <= 1.0  # measured: 0.5


def test_negative_binomial_cdf_within_its_error_bound_at_small_w():
    """The tails at the small-w columns' sizes (p down to 1e-5, kk up to 2e8, r up to 1000) against 50-digit
    incomplete beta values."""
    rng = np.random.default_rng(5)
    with mp.workdps(50):
        for _ in range(20):
            p = 10 ** rng.uniform(-5, -2)
            r = float(rng.integers(1, 1000))
            kk = float(np.floor(r / p * 10 ** rng.uniform(-0.3, 0.3)))
            st_, lo, elo, up, eup = _polled._nb_cdf(kk, r, p)
            if st_ != 0:
                continue
            pm = mp.mpf(p)
            for got, bound, want in ((lo, elo, mp.betainc(r, kk + 1, 0, pm, regularized=True)),
                                     (up, eup, mp.betainc(kk + 1, r, 0, 1 - pm, regularized=True))):
                assert abs(got - float(want)) <= bound + 1e-300, (r, p, kk, got, float(want), bound)



# crawl-level pages of bench_polled.crawl_level_pages(5000) with small s (s, Delta, lambda, nu), which the CDF
# sums used to refuse (V 25-160x below the sums it is the difference of; bands of 25 to 5e6 points at lambda
# near 1), where the walk took up to 2e8 ns at w = 1e-4
SMALL_S = [
    (0.029099866690869718, 0.0005868353751119493, 0.7990311583782217, 0.23131261922656185),
    (0.03768244595383123, 0.0003006901069229073, 0.01814386189459268, 0.4790195287161426),
    (0.033568479815270356, 0.00032938982731045563, 0.022667425565020365, 0.47449033881886404),
    (0.025692080666565503, 0.00037808488215040903, 0.04984506721726627, 0.28109654178517796),
    (0.04529093306262614, 0.0009615505794944301, 0.02242609999185433, 0.37016646255133145),
    (0.07732627739117526, 0.001944921167131075, 0.029662501950606355, 0.39456429656636927),
    (0.056900507082176525, 0.0022290075028803535, 3.50882234087914e-10, 0.24145497430596577),
    (0.06404182662565672, 0.002882341053802362, 0.05105011441495099, 0.4412947238477709),
    (0.1472267662923583, 0.011067790409348133, 0.0709340527800383, 0.5823874340527156),
    (0.13378678420206114, 0.009670767623561782, 0.9999199041194117, 0.33762425923096107),
    (0.12014108529869193, 0.009746824286419375, 0.9902266473168434, 0.24968207328573708),
    (0.17192315451158705, 0.00811786871513187, 0.9690850963965211, 0.19161869830393866),
    (0.1790226027584842, 0.017623163916745788, 0.9807612158235617, 0.5801605966245823),
    (0.2449439949246662, 0.008068107915057965, 0.9891136877355577, 0.5880184594756951),
    (0.08287303055335636, 0.0011504636251643552, 0.9999998024162787, 0.5176835351890395),
    (0.15833253649830442, 0.00010800680093148163, 0.9997647259844632, 0.5182614760754716),
    (0.08792278397441182, 0.005422422093494084, 0.0054263895469108744, 0.4686866218416479),
]


def _walked(s, dl, lam, nu, w):
    old = _polled._set_mode(2)
    try:
        return polled_value(s, w, PageModel(dl, 1.0, lam, nu))[0]
    finally:
        _polled._set_mode(old)


@pytest.mark.parametrize("w", [1.0, 0.5])
def test_cdf_sums_bound_their_error_on_small_s_pages(w):
    """The CDF sums' error bound (bands of up to 24 and of up to 4096 points walked) against the walk (which
    loses about two bits), and the value taken against it: the bound covers the error on every page."""
    worst = worst_ratio = 0.0
    for s, dl, lam, nu in SMALL_S:
        walked = _walked(s, dl, lam, nu, w)
        for band in (24.0, 4096.0):
            st_, v, bound = _polled._fast_bounds(s, dl, lam, nu, w, band)
            if st_ != 0:
                continue
            assert abs(v - walked) <= bound + 2e-15 * walked, (s, dl, lam, nu, band, v, walked, bound)
            worst_ratio = max(worst_ratio, abs(v - walked) / (bound + 2e-15 * walked))
        got = polled_value(s, w, PageModel(dl, 1.0, lam, nu))[0]
        worst = max(worst, abs(got - walked) / walked)
    assert worst <= 1e-12  # measured: 2.3e-14 (w = 1), 2.1e-14 (w = 0.5)
    assert worst_ratio <= 1.0  # measured: 0.2, 0.09


def test_small_s_pages_against_30_digits():
    """A few of them against the 30-digit recursion at w = 1 (the CDF sums on every one)."""
    for s, dl, lam, nu in (SMALL_S[1], SMALL_S[3], SMALL_S[6]):
        got = polled_value(s, 1.0, PageModel(dl, 1.0, lam, nu))[0]
        ref = float(ref_sums(s, dl, lam, nu, 1.0, dps=30)[2])
        assert abs(got - ref) <= 1e-12 * ref, (s, got, ref)  # measured: 2.3e-14


@pytest.mark.parametrize("w", [1e-2, 1e-3, 1e-4])
def test_small_s_pages_take_the_cdf_sums_at_small_w(w):
    """At small w the walk costs ~1/w points a column (2e8 ns a page at w = 1e-4, refused past MAX_STEPS): the
    CDF sums alone (mode 1: a refusal raises) vouch for every one of these pages but those with bands wider than
    4096 points (lambda within 1e-4 of 1, where the walk is cheap)."""
    old = _polled._set_mode(1)
    try:
        for s, dl, lam, nu in SMALL_S:
            if lam > 0.9999:
                continue  # bands of ~1/(1 - lambda) > 4096 points: the walk (cheap there)
            v = polled_value(s, w, PageModel(dl, 1.0, lam, nu))[0]
            assert math.isfinite(v) and v > 0.0
    finally:
        _polled._set_mode(old)


# low recall at w = 1e-3 (the pages a Scheduler pops there: b ~ 30 windows, 20-40 columns, the rest's bound
# ending the columns): against the numpy reference, and 30 digits (slow: 9-80 s each)
LOW_RECALL = [
    (0.5, 0.01, 0.35, 1e-3, 2.5137), (0.05, 0.02, 0.55, 1e-3, 0.2137), (0.3, 0.003, 0.45, 1e-3, 1.6137),
    (0.9, 0.02, 0.58, 1e-3, 4.6137),
]


@pytest.mark.parametrize("dl, lam, nu, w, s", LOW_RECALL)
def test_low_recall_many_columns_match_numpy(dl, lam, nu, w, s, mode):
    got = compiled_sums(s, dl, lam, nu, w)
    for g, r in zip(got, _page_sums(s, dl, lam, nu, w)):
        assert g == pytest.approx(r, rel=1e-12, abs=0.0)  # measured: 6e-16


@pytest.mark.slow
@pytest.mark.parametrize("dl, lam, nu, w, s", LOW_RECALL[:2])
def test_low_recall_many_columns_match_30_digits(dl, lam, nu, w, s):
    got = compiled_sums(s, dl, lam, nu, w)
    for g, r in zip(got, ref_sums(s, dl, lam, nu, w, dps=30)):
        assert abs(g - float(r)) <= 1e-12 * float(r), (g, float(r))  # measured: 3e-16
