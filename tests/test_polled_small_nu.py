"""The compiled polled value (freshcore._polled) at small false-move rates nu (0 to 1e-3) and recall lambda from 0
to 1: against the numpy reference (tests/_polled_reference.py) and the 50-digit recursion, on both paths, the
Greedy limit lambda Delta -> 0, the bound mu R^1(s)/alpha, and the work of the nu = 0 pages.

The walk summed a column's far part as its total minus its upper tail wherever the far end was past the mode of
the column's measure; column 0's P(k) = qb^k has its mode at k = 1 and its total qb/q ~ 1/(gamma w), so at small
q that difference cancelled ~1/q-fold: 1e-7 of V at nu = 1e-6 (6.8e-7 at nu = 0) where the reference is exact to
1e-15.  At nu = 0 the same upper tail took ~1/q points (refused past MAX_STEPS, or ~ms)."""


import numpy as np
import pytest
from _polled_reference import _page_sums
from test_polled_kernel import _lattice_points
from test_polled_signals import ref_sums

from freshcore import PageModel, _polled
from freshcore.polled_signals import polled_fresh_time, polled_interval, polled_value
from freshcore.special import residual_exp

NUS = (0.0, 1e-8, 1e-6, 1e-4, 1e-3)
LAMS = (0.0, 1e-12, 1e-9, 1e-6, 1e-3, 0.1, 0.5, 0.9, 1.0)
# levels and Deltas off the lattice (at x + lambda Delta w = s exactly V jumps: the paths may round either way)
S = (0.3017, 1.0093, 2.9871, 6.333333333333333)


@pytest.fixture(params=[0, 2], ids=["auto", "walk"])
def mode(request):
    """The kernel's path: 0 the CDF sums where they vouch for their result, else the walk; 2 the walk only."""
    old = _polled._set_mode(request.param)
    yield request.param
    _polled._set_mode(old)


def _compiled(s, dl, lam, nu, w):
    pages = PageModel(dl, 1.0, lam, nu)
    return polled_interval(s, w, pages)[0], polled_fresh_time(s, w, pages)[0], polled_value(s, w, pages)[0]


def _exact(s, dl, lam, nu, w):
    """50-digit (psi, w, V/mu); nu = 0 as nu = 1e-40 (a moved window then adds b ~ log(q/(nu w)) > 80 > s:
    no moved column is alive, the values differ by ~1e-38)."""
    return [float(v) for v in ref_sums(s, dl, lam, nu if nu > 0 else 1e-40, w, dps=40)]


@pytest.mark.parametrize("nu", NUS)
@pytest.mark.parametrize("w", [0.3, 1.0, 10.0])
def test_small_nu_matches_numpy_and_50_digits(nu, w, mode):
    worst = worst_mp = 0.0
    compared = 0
    for dl in (0.01496, 0.28107, 2.0131):
        for lam in LAMS:
            for s in S:
                got = _compiled(s, dl, lam, nu, w)
                points = _lattice_points(s, dl, lam, nu, w) if nu > 0 else s / max((1 - lam) * dl * w, 1e-300)
                if points < 1e5:
                    for g, r in zip(got, _page_sums(s, dl, lam, nu, w)):
                        assert g == pytest.approx(r, rel=1e-12, abs=0.0), (dl, lam, s, g, r)
                        worst = max(worst, abs(g - r) / r)
                    compared += 1
                if points < 400 and 0.0 < lam < 1.0:
                    for g, r in zip(got, _exact(s, dl, lam, nu, w)):
                        worst_mp = max(worst_mp, abs(g - r) / r)
    assert compared >= 60
    assert worst <= 1e-12 and worst_mp <= 1e-12  # measured: below 1e-14


def test_the_reviewers_cases_against_50_digits(mode):
    """The cases reported at 1.0e-7 (and above the bound mu R^1(s)/alpha by 1e-10) and the nu = 0 page refused."""
    for dl, lam, nu, w, s in [(0.01496, 4.4e-12, 1e-6, 10.0, 1.0), (0.28107, 3.72e-11, 1e-6, 10.0, 6.333333333333333),
                              (0.0768, 1.4e-5, 0.0, 0.3, 1.0), (0.0768, 1.4e-5, 0.0, 0.3, 6.333333333333333),
                              (0.17376489243830634, 1.0618957902676223e-10, 1e-6, 0.1, 3.0)]:
        got = _compiled(s, dl, lam, nu, w)
        for g, r in zip(got, _exact(s, dl, lam, nu, w)):
            assert g == pytest.approx(r, rel=1e-12, abs=0.0), (dl, lam, nu, w, s, g, r)
        assert got[2] <= float(residual_exp(1, s)) / (dl - lam * dl) * (1 + 1e-14)


@pytest.mark.parametrize("nu", NUS)
def test_greedy_limit(nu, mode):
    """lambda -> 0: V tends to Greedy's R^1(s)/Delta (V/Greedy - 1 is ~lambda/2: within 1e-12 for lambda <= 1e-13;
    4e-12 at lambda = 8.4e-12, Delta = 0.012, nu = 0, w = 1, s = 1.82 by 50 digits) and stays below the bound
    R^1(s)/alpha (to rounding); a subnormal lambda (a scheduler's hypothesis case: qb/q overflows) stays finite."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        dl = float(np.exp(rng.uniform(np.log(1e-2), np.log(5.0))))
        w = float(rng.choice([0.3, 1.0, 3.0, 10.0]))
        s = float(rng.uniform(0.05, 12.0))
        greedy = float(residual_exp(1, s)) / dl
        for lam in (1e-15, 1e-13, 2.2250738585e-313):
            v = polled_value(s, w, PageModel(dl, 1.0, lam, nu))[0]
            assert v == pytest.approx(greedy, rel=1e-12, abs=0.0), (dl, lam, nu, w, s)
            assert v <= float(residual_exp(1, s)) / (dl - lam * dl) * (1 + 1e-14)


@pytest.mark.parametrize("nu", [0.0, 1e-8, 1e-6])
def test_low_recall_pages_are_cheap(nu):
    """Low-recall pages at tiny nu: never refused, nearly all on the CDF path (its geometric sub-columns by
    expm1: the binomial tail's 1 - pb^n, EPS absolute, times column 0's qb/q ~ 1/q, failed its error bound), in
    about as many terms as alive points.  Before: the walk refused (0.0768, 1.4e-5, 0, 0.3) past MAX_STEPS or
    took ~2000 points at s = 3, and (0.174, 1.06e-10, 1e-6, 0.1, 3) past MAX_STEPS."""
    rng = np.random.default_rng(13)
    n = 300
    dl = np.exp(rng.uniform(np.log(1e-2), np.log(5.0), n))
    lam = 10 ** rng.uniform(-12, -1, n)
    w = rng.choice([0.1, 0.3, 1.0, 10.0], n)
    s = rng.uniform(0.05, 8.0, n)
    nus = np.full(n, nu)
    ns = np.empty(n)
    info = np.empty((n, 3))
    _polled._profile(s, dl, lam, nus, w, 1, ns, info)
    out = np.empty(n)
    assert _polled.sums_kernel(s, dl, lam, nus, w, np.ones(n), 2, out) == -1
    alive = s / ((1 - lam) * dl * w)  # points in column 0; the moved columns have a mass ~ (q s/(alpha w))^j
    steps = np.where(info[:, 0] == 1, info[:, 2], info[:, 1])
    assert np.all(steps <= 2 * alive + 64), np.max(steps - 2 * alive)
    assert np.mean(info[:, 0] == 0) >= 0.95  # measured: all
    for i in range(0, n, 10):
        assert out[i] == pytest.approx(_page_sums(s[i], dl[i], lam[i], nu, w[i], False)[2], rel=1e-12, abs=0.0)
