"""The compiled polled value's extended-precision retry (issue 19): where the CDF sums' interior difference
``(1 - e^{-Delta w}) sum W - Delta w e^{-s} sum P`` cancels (small ``s``: ``V ~ s^2/2`` against sums ~``s``) the
double sums' error bound fails ``FAST_TOL`` and the page walked, ``O(points)``: rarely changing pages polled
often (~36 000 windows) were refused at the step cap.  The retry sums the interior in ``fc_ext`` (x87 long
double, 2^-64) before the walk.  Against the numpy reference, the 30-digit recursion and 50-digit log-pmfs."""

import math
import time

import numpy as np
import pytest
from _polled_reference import _page_sums
from test_polled_signals import ref_sums
from test_polled_small_w import compiled_sums

from freshcore import PageModel, _polled
from freshcore.polled_signals import polled_value

mp = pytest.importorskip("mpmath")
EXT = _polled._have_ext()
needs_ext = pytest.mark.skipif(not EXT, reason="long double has no 64-bit significand here: no retry (the walk)")

DL = 1.670212347626432e-05
LAM, NU, MU = 0.08697286580111542, 0.5866002088458366, 0.5
# the pages of the issue: (t - ell, w, V/mu from the numpy reference _page_sums: 4e7 points, ~10 s, run once)
ISSUE = [(362.48, 0.01, 1.092880658378112), (1000.0, 0.03, None), (1000.0, 0.1, None)]

# pages on the retry (the double sums' bound fails, the extended one passes) small enough for the references:
# (s, Delta, lambda, nu, w), from a random search over Delta 1e-6..1e-2, w 1e-3..1, s 1e-3..0.05
SMALL = [
    (0.0012687165701370648, 0.002381903433409525, 0.4785114074205206, 0.4917262347934053, 0.01503882802409747),
    (0.0010751752783656693, 0.003022414397031323, 0.8527668626551371, 1.5152652727168194, 0.004807901653162905),
    (0.014010786502490694, 0.005568884971323022, 0.24332585532158152, 0.713763236327987, 0.046610024004955446),
    (0.0015207301047641428, 0.0005455327773899976, 0.22635636002294285, 0.4002675230516475, 0.024630491613645892),
    (0.010997152994416658, 3.646159436133416e-05, 0.37384209469829094, 0.606938462678785, 0.24762908806167444),
    (0.005179808559768372, 0.006824832533389908, 0.3939386100521222, 0.010053087736022306, 0.008950216089518093),
    (0.0013332286265099328, 5.632481331255814e-06, 0.16625132298816145, 0.10297851674352868, 0.2949551979708914),
    (0.002977033641551091, 9.270492354533916e-05, 0.11882370761484419, 1.4485680690002147, 0.0456686336089162),
    (0.006923301241284494, 0.00010481441443290778, 0.5175435037153685, 0.06170258702345122, 0.1499795668531481),
    (0.0010000053240831115, 2.3502641413153157e-06, 0.3595746182252398, 0.027516562756099122, 0.6399158658038933),
    (0.004869112524849178, 0.006298418978116006, 0.5073982625992651, 0.02884665887834244, 0.0016333553636584846),
    (0.0034529350768417407, 0.00026574551520545345, 0.7681446615248297, 0.04455958106069685, 0.050296448355843106),
    (0.0022877428889583632, 8.990530737677545e-06, 0.8424041016367098, 0.020748402958118712, 0.5413184664573583),
    (0.0014971659115122328, 8.366970940583013e-05, 0.07786066098854645, 0.013042522938526757, 0.6731664624212919),
]


def _path(s, dl, lam, nu, w):
    """(path: 0 the double CDF sums, 1 the walk, 2 the retry; least ns of 3 evaluations)."""
    arr = [np.array([float(v)]) for v in (s, dl, lam, nu, w)]
    ns = np.empty(1)
    info = np.empty((1, 3))
    _polled._profile(*arr, 3, ns, info)
    return int(info[0, 0]), float(ns[0])


def test_issue_pages_evaluate_fast_and_accurately():
    """Refused at the step cap (w = 0.01, 0.03; 243 ms at w = 0.1) before the retry and the band's w bound."""
    pages = PageModel([DL], [MU], [LAM], [NU])
    for tl, w, ref in ISSUE:
        if ref is not None and not EXT:
            continue  # the double sums' bound fails on it: without the retry it walks (refused at the step cap)
        v = polled_value(np.array([DL * tl]), w, pages)[0]
        assert math.isfinite(v) and v > 0.0
        if ref is not None:
            assert abs(v / MU - ref) <= 1e-12 * ref, (tl, w, v / MU, ref)  # measured: equal
        _, ns = _path(DL * tl, DL, LAM, NU, w)
        assert ns < 50e6, (tl, w, ns)  # measured: 1.3e6, 5.9e5, 5.5e5 ns


@needs_ext
def test_issue_page_takes_the_retry_within_its_bound():
    st, v, bound, ok = _polled._ext_bounds(DL * 362.48, DL, LAM, NU, 0.01)[:4]
    assert st == 0 and ok
    assert abs(v - ISSUE[0][2]) <= bound + 2e-16 * v  # measured: |err| < 1 ulp, bound 7.8e-16
    assert _path(DL * 362.48, DL, LAM, NU, 0.01)[0] == 2


@needs_ext
@pytest.mark.parametrize("page", SMALL)
def test_retry_matches_numpy_and_30_digits(page):
    s, dl, lam, nu, w = page
    assert _path(s, dl, lam, nu, w)[0] == 2  # these pages take the retry
    got = compiled_sums(s, dl, lam, nu, w)
    for g, r in zip(got, _page_sums(s, dl, lam, nu, w)):
        assert abs(g - r) <= 1e-12 * r, (g, r)
    st, v, bound = _polled._ext_bounds(s, dl, lam, nu, w)[:3]
    if s / ((1 - lam) * dl * w) * _columns(s, dl, lam, nu, w) > 1e5:
        return  # the recursion visits every lattice point (~30 s at 7e5)
    exact = float(ref_sums(s, dl, lam, nu, w, dps=30)[2])
    assert st == 0 and abs(v - exact) <= bound + 2e-16 * exact, (v, exact, bound)  # the bound covers the error
    assert abs(got[2] - exact) <= 1e-12 * exact


@needs_ext
def test_extended_log_binom_within_its_error_bound():
    """Loader's log-pmf in fc_ext (its stirlerr table and series to 2^-64) against 50 digits, with ``p`` as
    ``fc_ext`` holds it (the double given) and ``1 - p`` exact."""
    worst = 0.0
    with mp.workdps(50):
        for n, p in [(20, 0.3), (1000, 0.005), (36000, 0.0058), (1e6, 0.2), (1e8, 1e-4), (3e4, 0.97)]:
            mean = n * p
            sd = math.sqrt(n * p * (1 - p))
            for i in {0.0, 1.0, math.floor(mean), math.floor(max(mean - 8 * sd, 0)), math.floor(min(mean + 8 * sd, n)),
                      float(n)}:
                hi, lo, bound = _polled._log_binom_x(i, float(n), p)
                pp = mp.mpf(p)
                exact = (mp.loggamma(n + 1) - mp.loggamma(i + 1) - mp.loggamma(n - i + 1) + i * mp.log(pp)
                         + (n - i) * mp.log(1 - pp))
                err = abs(mp.mpf(hi) + mp.mpf(lo) - exact)
                assert err <= bound, (i, n, p, float(err), bound)
                worst = max(worst, float(err / bound))
    assert worst < 1.0


# the sweep: Delta 1e-6..1e-3 (at 1e-7..1e-8 pages with more than ~10^5 columns, s/b, are still refused: the
# CDF sums are O(columns x sd)), s 1e-4..0.1, w 1e-4..0.1, lambda and nu drawn
def _sweep():
    rng = np.random.default_rng(1)
    rows = []
    for dl in (1e-6, 1e-5, 1e-4, 1e-3):
        for s in (1e-4, 1e-3, 1e-2, 0.03, 0.1):
            for w in (1e-4, 1e-3, 1e-2, 0.1):
                lam = rng.uniform(0.02, 0.98)
                nu = 10 ** rng.uniform(-3, 0.5)
                rows.append((s, dl, lam, nu, w))
    return rows


def _columns(s, dl, lam, nu, w):
    ld = lam * dl
    b = ld * w + math.log1p(math.exp(-nu * w) * -math.expm1(-ld * w) / -math.expm1(-nu * w))
    return s / ((dl - ld) * w + b)


@needs_ext
def test_sweep_not_refused_and_timed():
    slow = []
    for s, dl, lam, nu, w in _sweep():
        if _columns(s, dl, lam, nu, w) > 2e5:
            continue  # refused (step cap): two pages of the 80, 2.7e5 and 3.8e5 columns
        t0 = time.perf_counter()
        v = polled_value(s, w, PageModel(dl, 1.0, lam, nu))[0]
        dt = time.perf_counter() - t0
        assert math.isfinite(v) and v > 0.0
        assert dt < 1.0, (s, dl, lam, nu, w, dt)  # generous: measured at most 0.05 s (load ~3)
        slow.append(dt)
    assert len(slow) >= 78
