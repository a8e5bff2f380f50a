"""freshcore.special.residual_exp = R^i(x) = P(Poisson(x) > i) against mpmath (tails, x ~ i) and scipy."""

import time

import mpmath as mp
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given
from hypothesis import strategies as st

from freshcore.special import residual_exp

mp.mp.dps = 40
# Below this the reference is subnormal or underflows in double precision: nothing to compare.
TINY = 1e-290


def ref(i, x):
    return float(mp.gammainc(int(i) + 1, 0, mp.mpf(float(x)), regularized=True))


def max_rel_err(orders, x_of_i, f):
    worst = 0.0
    for i in orders:
        xs = x_of_i(i)
        got = f(i, xs)
        for x, g in zip(xs, got):
            r = ref(i, x)
            if r < TINY:
                continue
            worst = max(worst, abs(g - r) / r)
    return worst


def log_grid(i):
    xs = np.concatenate([np.logspace(-300, 4, 40), [i + 1.0 - 1e-9, i + 1.0, i + 1.0 + 1e-9]])
    return xs[xs <= 1e4]


def near_i(i):
    return np.maximum(i * (1.0 + np.linspace(-0.1, 0.1, 15)) + np.linspace(-2, 2, 15), 1e-3)


ours = lambda i, xs: residual_exp(i, xs)  # noqa: E731


@pytest.mark.parametrize("grid", [log_grid, near_i], ids=["log", "near_i"])
def test_small_orders_1e13(grid):
    assert max_rel_err(range(31), grid, ours) <= 1e-13


@pytest.mark.parametrize("grid", [log_grid, near_i], ids=["log", "near_i"])
def test_large_orders_2e12(grid):
    assert max_rel_err([31, 47, 100, 250, 512, 999, 1000], grid, ours) <= 2e-12


def test_not_worse_than_scipy_near_x_equal_i():
    orders = [5, 17, 30, 100, 400, 1000]
    theirs = max_rel_err(orders, near_i, lambda i, xs: sc.gammainc(i + 1, xs))
    mine = max_rel_err(orders, near_i, ours)
    assert mine <= max(theirs, 1e-14)


def test_small_x_where_the_literal_formula_fails():
    # SPEC section 3: the literal 1 - e^{-x} sum x^j/j! has relative error 1.2 at i = 1, x = 1e-8
    for i, x in [(1, 1e-8), (2, 1e-8), (3, 1e-30), (0, 1e-300), (10, 1e-20)]:
        r = ref(i, x)
        assert abs(residual_exp(i, x) - r) <= 1e-14 * r
    literal = 1.0 - np.exp(-1e-8) * (1.0 + 1e-8)
    assert abs(literal - ref(1, 1e-8)) > 0.1 * ref(1, 1e-8)  # the failure we avoid


def test_ends_of_the_domain():
    assert residual_exp(0, 0.0) == 0.0
    assert residual_exp(7, 0.0) == 0.0
    assert residual_exp(0, np.inf) == 1.0
    assert residual_exp(1000, np.inf) == 1.0
    assert residual_exp(3, 1e4) == 1.0


def test_broadcasting_and_types():
    x = np.array([[0.5], [2.0]])
    i = np.array([0, 1, 2])
    got = residual_exp(i, x)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, sc.gammainc(i + 1, x), rtol=1e-13)
    assert isinstance(residual_exp(2, 1.5), float)
    assert isinstance(residual_exp(np.int64(2), np.float64(1.5)), float)
    assert residual_exp(2.0, 1.5) == residual_exp(2, 1.5)
    ro = np.linspace(0.1, 5, 7)
    ro.flags.writeable = False
    np.testing.assert_allclose(residual_exp(3, ro), sc.gammainc(4, ro), rtol=1e-13)
    assert residual_exp([], []).shape == (0,)


@given(
    st.integers(0, 200),
    st.floats(1e-12, 500.0),
    st.floats(1e-12, 500.0),
)
def test_monotone_in_x_and_i(i, x1, x2):
    lo, hi = min(x1, x2), max(x1, x2)
    assert residual_exp(i, lo) <= residual_exp(i, hi)
    assert residual_exp(i + 1, lo) <= residual_exp(i, lo)


def test_random_points_against_scipy():
    rng = np.random.default_rng(7)
    i = rng.integers(0, 60, 5000)
    x = np.exp(rng.uniform(np.log(1e-5), np.log(300), 5000))
    r = sc.gammainc(i + 1, x)
    keep = r > 1e-280
    np.testing.assert_allclose(residual_exp(i, x)[keep], r[keep], rtol=5e-13)


@pytest.mark.parametrize(
    "i, x, match",
    [
        (-1, 1.0, r"'i' parameter of residual_exp"),
        (1.5, 1.0, r"integer >= 0. Got 1.5"),
        ([0, 2, 2.5], 1.0, r"i\[2\] = 2.5"),
        ([0, -3], 1.0, r"i\[1\]"),
        (1, -0.5, r"'x' parameter of residual_exp"),
        (1, [0.0, np.nan], r"x\[1\]"),
        (1, [1.0, 2.0, -1.0], r"x\[2\]"),
        ([1, 2], [1.0, 2.0, 3.0], r"broadcast"),
        (np.nan, 1.0, r"'i' parameter"),
    ],
)
def test_bad_input(i, x, match):
    with pytest.raises(ValueError, match=match):
        residual_exp(i, x)


def test_bad_types():
    with pytest.raises(TypeError):
        residual_exp("a", 1.0)
    with pytest.raises(TypeError):
        residual_exp(1, "x")


def test_greedy_value_residual1_against_mpmath():
    # The scheduler's Greedy value mu R^1(Delta tau)/Delta uses its own R^1 (direct form for x >= 1, an
    # 18-term Taylor sum below): as accurate as the general residual, including both sides of the switch.
    from freshcore.pages import PageModel
    from freshcore.value import crawl_value

    xs = np.sort(np.concatenate([np.logspace(-150, 4, 400), np.linspace(0.9, 1.1, 201), np.nextafter(1.0, [0.0, 2.0])]))
    got = crawl_value(xs, PageModel(np.ones(xs.size), np.ones(xs.size)), value="greedy")
    with mp.workdps(400):  # 1 - e^{-x}(1 + x) cancels ~2 log10(1/x) digits in the reference itself
        ref = [float(1 - mp.exp(-mp.mpf(x)) * (1 + mp.mpf(x))) for x in xs]
        worst = max(abs(g - r) / r for g, r in zip(got, ref))
    assert worst < 1e-15
    assert np.all(np.diff(got) >= 0)  # non-decreasing in x, across the switch too


# ---------------------------------------------------------------------------
# Orders of any size: Temme's uniform expansion from 2**31 on (the series would take O(sqrt(i)) steps)

# (i, x, R^i(x)) at x = a + z sqrt(a), a = i + 1, z in [-37.5, 8.1], rounded to doubles; 30-digit references
# from the Laplace-form integral P(a, x) = a^a e^{-a}/Gamma(a) int e^{-a (s - log1p s)} ds/(1 + s) (quadrature
# in u = a (s - log1p s) in the tails), independent of both the series and Temme's expansion
# (``large_order_reference`` below regenerates them).  For i >= 1e32 the doubles near i are more than sqrt(i)
# apart: x = i is the only point with a result other than 0 or 1.
LARGE_ORDERS = [
    (2147483647.0, 2145745862.3745558, "3.1508362593496205887e-308"),
    (2147483647.0, 2146325124.249704, "2.7316302506687269229e-138"),
    (2147483647.0, 2147020238.4998815, "7.5652465072256237011e-24"),
    (2147483647.0, 2147344625.1499646, "0.0013496430145016664359"),
    (2147483647.0, 2147437307.0499883, "0.15865525391325896925"),
    (2147483647.0, 2147483648.0, "0.50000286961661554573"),
    (2147483647.0, 2147516086.665008, "0.75803749327243072273"),
    (2147483647.0, 2147622670.8500357, "0.99864984692854482774"),
    (2147483647.0, 2147859009.695096, "0.99999999999999972415"),
    (2147483648.0, 2145745863.3741512, "3.1508362596624942549e-308"),
    (2147483648.0, 2146325125.2494342, "2.731630250870841475e-138"),
    (2147483648.0, 2147020239.4997737, "7.565246507453860176e-24"),
    (2147483648.0, 2147344626.1499321, "0.0013496430144963568375"),
    (2147483648.0, 2147437308.0499773, "0.15865525391233129123"),
    (2147483648.0, 2147483649.0, "0.5000028696166148776"),
    (2147483648.0, 2147516087.6650157, "0.75803749327294712872"),
    (2147483648.0, 2147622671.850068, "0.99864984692855025748"),
    (2147483648.0, 2147859010.6951833, "0.99999999999999972415"),
    (2147483649.0, 2145745864.3737466, "3.1508362599753676803e-308"),
    (2147483649.0, 2146325126.2491646, "2.7316302510729559344e-138"),
    (2147483649.0, 2147020240.4996657, "7.5652465072889718042e-24"),
    (2147483649.0, 2147344627.1498997, "0.0013496430144910472385"),
    (2147483649.0, 2147437309.0499666, "0.15865525391264854119"),
    (2147483649.0, 2147483650.0, "0.50000286961661420947"),
    (2147483649.0, 2147516088.6650233, "0.75803749327346353473"),
    (2147483649.0, 2147622672.8501, "0.99864984692851007868"),
    (2147483649.0, 2147859011.6952705, "0.99999999999999972415"),
    (10000000000.0, 9996250000.999813, "3.8627867829334496583e-308"),
    (10000000000.0, 9997500000.999874, "2.9015414245433496554e-138"),
    (10000000000.0, 9999000000.99995, "7.5945012112919825478e-24"),
    (10000000000.0, 9999700000.999985, "0.0013497798514318532441"),
    (10000000000.0, 9999900000.999994, "0.15865525392567702599"),
    (10000000000.0, 10000000001.0, "0.50000132980760127236"),
    (10000000000.0, 10000070001.000004, "0.75803687861075587783"),
    (10000000000.0, 10000300001.000015, "0.99864998378331956922"),
    (10000000000.0, 10000810001.00004, "0.99999999999999972472"),
    (9007199254740992.0, 9007195695756032.0, "4.6044999412987280551e-308"),
    (9007199254740992.0, 9007196882084352.0, "3.0565286471634621111e-138"),
    (9007199254740992.0, 9007198305678337.0, "7.6198264658217713873e-24"),
    (9007199254740992.0, 9007198970022196.0, "0.0013498979011624794473"),
    (9007199254740992.0, 9007199159834727.0, "0.1586552529734578825"),
    (9007199254740992.0, 9007199254740992.0, "0.49999999719764002389"),
    (9007199254740992.0, 9007199321175378.0, "0.75803634525347609789"),
    (9007199254740992.0, 9007199539459790.0, "0.99865010184978626312"),
    (9007199254740992.0, 9007200023481744.0, "0.9999999999999997252"),
    (9.223372036854776e+18, 9.223371922967257e+18, "4.6053279531213943337e-308"),
    (9.223372036854776e+18, 9.223371960929763e+18, "3.0566919280677602749e-138"),
    (9.223372036854776e+18, 9.223372006484771e+18, "7.619852359351824274e-24"),
    (9.223372036854776e+18, 9.223372027743775e+18, "0.0013498986273999564448"),
    (9.223372036854776e+18, 9.223372033817775e+18, "0.15865523759632897475"),
    (9.223372036854776e+18, 9.223372036854776e+18, "0.49999999991242625075"),
    (9.223372036854776e+18, 9.223372038980676e+18, "0.75803628867660567258"),
    (9.223372036854776e+18, 9.223372045965777e+18, "0.99865010136189861874"),
    (9.223372036854776e+18, 9.22337206145448e+18, "0.9999999999999997252"),
    (1e+20, 9.9999999625e+19, "4.6052298673724569096e-308"),
    (1e+20, 9.999999975e+19, "3.0567029443416617515e-138"),
    (1e+20, 9.99999999e+19, "7.6198054870770208112e-24"),
    (1e+20, 9.999999997e+19, "0.0013498957609004412458"),
    (1e+20, 9.999999999e+19, "0.15865508046270681197"),
    (1e+20, 1e+20, "0.49999999997340384797"),
    (1e+20, 1.00000000007e+20, "0.75803629978880316465"),
    (1e+20, 1.0000000003e+20, "0.99865010423584954067"),
    (1e+20, 1.00000000081e+20, "0.99999999999999972521"),
    (1e+100, 1e+100, "0.5"),
    (1e+300, 1e+300, "0.5")
]


def large_order_reference(i, x, dps=30):
    """R^i(x) = P(i + 1, x) by quadrature of its Laplace form (the generator of LARGE_ORDERS)."""

    def phi(s):  # s - log1p(s) without cancellation
        if abs(s) < mp.mpf("0.1"):
            tot, k, p = mp.mpf(0), 2, s * s
            while True:
                term = p / k if k % 2 == 0 else -p / k
                tot += term
                if abs(term) < abs(tot) * mp.mpf(10) ** (-mp.mp.dps - 5):
                    return tot
                p *= s
                k += 1
        return s - mp.log1p(s)

    with mp.workdps(dps):
        a, x = mp.mpf(i) + 1, mp.mpf(x)
        sa = mp.sqrt(a)
        if a > 10**6:  # a^a e^{-a}/Gamma(a) = sqrt(a/(2 pi))/Gamma*(a), log Gamma*(a) by Stirling
            lead = mp.sqrt(a / (2 * mp.pi)) * mp.exp(-(1 / (12 * a) - 1 / (360 * a**3) + 1 / (1260 * a**5)))
        else:
            lead = mp.exp(a * mp.log(a) - a - mp.loggamma(a))
        if abs(x - a) <= 3 * sa:
            vt = (x - a) / sa
            pts = sorted(vt + w for w in mp.linspace(-60 if vt <= 0 else 60, 0, 61))
            integral = mp.quad(lambda v: mp.exp(-a * phi(v / sa)) / (1 + v / sa), pts) / sa
        else:
            t = (x - a) / a
            ut = a * phi(t)

            def s_of(u):
                return mp.findroot(lambda s: phi(s) - u / a, t * mp.sqrt(u / ut), tol=mp.mpf(10) ** (-2 * dps))

            integral = mp.exp(-ut) * mp.quad(lambda w: mp.exp(-w) / (a * abs(s_of(ut + w))), [0, 0.5, 2, 8, 30, 100])
        val = lead * integral
        return val if x <= a else 1 - val


def test_large_orders_against_mpmath():
    # both sides of the switch at 2**31 (series below, Temme's expansion from there on), the tails included
    worst = 0.0
    for i, x, ref in LARGE_ORDERS:
        ref = float(ref)
        got = residual_exp(i, x)
        if ref >= 2.2250738585072014e-308:
            assert abs(got - ref) <= 1e-12 * ref, (i, x, got, ref)
            worst = max(worst, abs(got - ref) / ref)
        else:
            assert got <= 1e-300
    assert worst < 1e-12


@pytest.mark.slow
def test_large_order_reference_regenerates_the_table():
    for i, x, ref in LARGE_ORDERS[::7]:
        assert abs(float(large_order_reference(i, x)) - float(ref)) <= 1e-18 * float(ref) + 1e-320


def test_the_wrapping_orders_of_the_issue():
    # int64 casts wrapped these to 1.0: the true values are 0 (x far below the order) and 1 (far above)
    assert residual_exp(2**63, 1.0) == 0.0
    assert residual_exp(1e300, 0.5) == 0.0
    assert residual_exp(2**63, 1e300) == 1.0
    assert residual_exp(1e300, np.nextafter(1e300, np.inf)) == 1.0
    assert residual_exp(1e300, np.nextafter(1e300, 0.0)) == 0.0
    assert residual_exp(np.float64(2.0**1023), 1.7e308) == 1.0
    assert residual_exp(np.float64(2.0**1023), 8e307) == 0.0
    np.testing.assert_array_equal(residual_exp([2**70, 0], [1e300, 0.0]), [1.0, 0.0])


@given(st.floats(0.0, 1.7e308), st.floats(0.0, 1.7e308))
def test_every_order_in_bounded_time(i, x):
    i = float(np.floor(i))
    t0 = time.perf_counter()
    r = residual_exp(i, x)
    assert time.perf_counter() - t0 < 0.5  # the series is used below 2**31 only: ~1 ms at worst
    assert 0.0 <= r <= 1.0


@pytest.mark.parametrize("i", [2**63 + 1, [0, 2**70 + 1], np.array([2**63 + 1], dtype=np.uint64)])
def test_orders_a_float64_cannot_hold_are_refused(i):
    with pytest.raises(ValueError, match=r"'i' parameter of residual_exp .*float64 holds exactly"):
        residual_exp(i, 1.0)


def test_orders_beyond_the_double_range_are_refused():
    with pytest.raises(ValueError, match=r"'i' parameter of residual_exp must contain finite numbers"):
        residual_exp(10**400, 1.0)
