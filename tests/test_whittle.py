"""The source model and the Whittle index (Theorem 1 of Avrachenkov and Borkar (2018), SPEC section 5)."""

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import freshcore
from freshcore.whittle import SourceModel, whittle_index

from _whittle_reference import rvi_index

XI = [1.0, 0.7, 0.2, 0.08]
MU = [0.7, 0.35, 0.7, 0.21]


def table1(**kw):
    return SourceModel(250.0, XI, MU, **kw)


# ---------------------------------------------------------------------------
# The model


def test_model_derived_quantities():
    s = SourceModel([250.0, 10.0], [1.0, 0.5], [0.7, 0.02], period=2.0, cost=[1.0, 3.0])
    mu, t = np.array([0.7, 0.02]), 2.0
    np.testing.assert_allclose(s.alpha, np.exp(-mu * t), rtol=1e-15)
    np.testing.assert_allclose(s.u, [250.0 / 0.7 * (1 - np.exp(-1.4)), 10 * 0.5 / 0.02 * (1 - np.exp(-0.04))],
                               rtol=1e-15)
    np.testing.assert_allclose(s.u_star, s.u / (1 - s.alpha), rtol=1e-14)
    assert s.period == 2.0 and s.cost.tolist() == [1.0, 3.0] and len(s) == 2
    for a in (s.arrival_rate, s.utility, s.decay, s.cost, s.alpha, s.u, s.u_star):
        assert not a.flags.writeable
    with pytest.raises(AttributeError):
        s.u = np.zeros(2)


def test_model_broadcasts_indexes_compares_and_pickles():
    s = table1(cost=2.0)
    assert len(s) == 4 and s.arrival_rate.tolist() == [250.0] * 4 and s.cost.tolist() == [2.0] * 4
    assert s[1] == SourceModel(250.0, 0.7, 0.35, cost=2.0)
    assert s[-1] == s[3] and len(s[[0, 2]]) == 2 and len(s[s.decay > 0.5]) == 2
    assert pickle.loads(pickle.dumps(s)) == s and copy.deepcopy(s) == s
    assert s != table1() and s != SourceModel(250.0, XI, MU, period=2.0, cost=2.0)
    assert "n_sources=4" in repr(s)
    with pytest.raises(IndexError, match="source index 4"):
        s[4]
    assert freshcore.SourceModel is SourceModel and freshcore.whittle_index is whittle_index


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(decay=[0.7, 0.0]), r"'decay' parameter of SourceModel must contain finite numbers > 0.0; decay\[1\]"),
        (dict(decay=[0.7, -1.0]), r"decay\[1\] = -1.0"),
        (dict(arrival_rate=[1.0, -2.0]), r"'arrival_rate' .* >= 0.0; arrival_rate\[1\] = -2.0"),
        (dict(utility=[np.nan, 1.0]), r"'utility' .*; utility\[0\] = nan"),
        (dict(period=0.0), r"'period' parameter of SourceModel must be a finite number > 0.0. Got 0.0"),
        (dict(period=-1.0), r"'period'"),
        (dict(cost=[1.0, 0.0]), r"'cost' .* > 0.0; cost\[1\] = 0.0"),
        (dict(cost=[1.0, 1.0, 1.0]), "must have one length"),
        (dict(decay=[1e-200, 1.0], period=1e-200), r"decay\[0\] \* period = 0.0"),
        (dict(arrival_rate=1e300, utility=1e300), "finite u_star"),
        # scalars named without an index
        (dict(utility=np.nan), r"'utility' parameter of SourceModel must be a finite number >= 0\.0\. Got nan"),
        (dict(cost=0.0), r"'cost' parameter of SourceModel must be a finite number > 0\.0\. Got 0\.0 instead"),
    ],
)
def test_model_bad_input(kwargs, message):
    args = dict(arrival_rate=[1.0, 2.0], utility=[1.0, 1.0], decay=[0.7, 0.3])
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        SourceModel(**args)


def test_model_bad_types():
    with pytest.raises(TypeError, match="'utility'"):
        SourceModel(1.0, "a", 1.0)
    with pytest.raises(TypeError, match="'period'"):
        SourceModel(1.0, 1.0, 1.0, period=[1.0])
    with pytest.raises(ValueError, match="'decay' parameter of SourceModel must be a 0-D or 1-D"):
        SourceModel(1.0, 1.0, [[1.0]])


# ---------------------------------------------------------------------------
# The index against its definition (relative value iteration), 1e-9


def _check_against_rvi(sources, x):
    got = whittle_index(x, sources)
    n = len(sources)
    tile = lambda a: np.tile(a, x.shape[0])  # noqa: E731
    ref = rvi_index(x.ravel(), tile(sources.u_star), tile(sources.alpha), tile(sources.cost)).reshape(x.shape)
    scale = sources.u_star / sources.cost
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12 * scale.max())
    assert np.all(np.abs(got - ref) <= 1e-9 * np.maximum(np.abs(ref), 1e-3 * scale[:n]))


def test_index_matches_definition_off_grid_and_costs():
    s = table1(cost=[1.0, 2.5, 0.3, 1.0])
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.3, (6, 4)) * s.u_star          # off-grid states, some above u*
    x[0] = [0.0, 1e-3, 0.5, 1.0] * s.u                      # at and below u
    x[1] = s.u_star * (1 - 1e-9)                            # just below u*
    _check_against_rvi(s, x)


def test_index_matches_definition_on_grid_and_other_periods():
    s = SourceModel([3.0, 40.0, 7.0], [2.0, 0.1, 1.0], [0.05, 1.3, 0.4], period=2.5, cost=[0.5, 1.0, 4.0])
    n = np.arange(1, 7)[:, None]
    grid = s.u_star * (1 - s.alpha ** n)                     # the states a crawled source visits
    _check_against_rvi(s, np.concatenate([grid, grid * (1 + 1e-6), 1.7 * s.u_star[None, :]]))


def test_docstring_says_what_the_definition_checks_cover():
    # the two tests above check off-grid states, states above u* and C != 1, not only the reachable grid
    doc = " ".join(whittle_index.__doc__.split())
    assert "off-grid states" in doc and "states above ``u*``" in doc and "costs ``C != 1``" in doc
    assert "on the reachable states" not in doc


def test_index_closed_form_cases():
    s = table1(cost=[1.0, 2.0, 0.5, 1.0])
    # below u: eta = 1, gamma = (1 - alpha) x / C
    x = 0.5 * s.u
    np.testing.assert_allclose(whittle_index(x, s), (1 - s.alpha) * x / s.cost, rtol=1e-14)
    # at and above u*: x / C
    x = np.stack([s.u_star, 2 * s.u_star])
    np.testing.assert_array_equal(whittle_index(x, s), x / s.cost)
    # the Remark's simplified form on the grid
    n = np.arange(1, 30)[:, None]
    grid = s.u_star * (1 - s.alpha ** n)
    remark = (n * ((1 - s.alpha) * grid - s.u) + grid) / s.cost
    np.testing.assert_allclose(whittle_index(grid, s), remark, rtol=1e-12)
    assert whittle_index(np.zeros(4), s).tolist() == [0.0] * 4


def test_index_shapes_out_and_read_only_input():
    s = table1()
    x = np.random.default_rng(1).uniform(0, 400, (2, 3, 4))
    x.flags.writeable = False
    got = whittle_index(x, s)
    assert got.shape == (2, 3, 4)
    out = np.empty((2, 3, 4))
    assert whittle_index(x, s, out=out) is out
    np.testing.assert_array_equal(out, got)
    np.testing.assert_array_equal(whittle_index(x.tolist(), s), got)
    assert whittle_index(np.empty((0, 4)), s).shape == (0, 4)


@pytest.mark.parametrize(
    ("x", "exc", "message"),
    [
        ([1.0, -1.0, 0.0, 0.0], ValueError, r"'x' parameter of whittle_index must contain finite numbers >= 0.0; "
                                            r"x\[1\] = -1.0"),
        ([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, np.nan, 0.0]], ValueError, r"x\[1, 2\] = nan"),
        ([1.0, np.inf, 0.0, 0.0], ValueError, r"x\[1\] = inf"),
        ([1.0, 2.0, 3.0], ValueError, r"must have shape \(\.\.\., 4\)"),
        (1.0, ValueError, r"must have shape \(\.\.\., 4\)"),
        (np.nan, ValueError, r"'x' parameter of whittle_index must be a finite number >= 0\.0\. Got nan instead"),
        (["a"] * 4, TypeError, "'x'"),
    ],
)
def test_index_bad_input(x, exc, message):
    with pytest.raises(exc, match=message):
        whittle_index(x, table1())


def test_index_bad_sources_and_out():
    with pytest.raises(TypeError, match="'sources' parameter of whittle_index must be a SourceModel"):
        whittle_index([1.0], object())
    with pytest.raises(ValueError, match="'out'"):
        whittle_index(np.ones(4), table1(), out=np.empty(3))


# ---------------------------------------------------------------------------
# Invariants

rates = st.floats(1e-3, 1e3)
decays = st.floats(1e-3, 5.0)


@settings(max_examples=200, deadline=None)
@given(lam=rates, xi=st.floats(1e-3, 10.0), mu=decays, period=st.floats(0.05, 5.0), cost=st.floats(0.1, 10.0),
       f1=st.floats(0.0, 2.0), f2=st.floats(0.0, 2.0))
def test_index_invariants(lam, xi, mu, period, cost, f1, f2):
    s = SourceModel(lam, xi, mu, period=period, cost=cost)
    ustar = s.u_star[0]
    lo, hi = sorted((f1 * ustar, f2 * ustar))
    g_lo, g_hi = whittle_index([[lo], [hi]], s)[:, 0]
    scale = ustar / cost
    assert g_lo <= g_hi + 1e-13 * scale                              # increasing in the state
    for x, g in ((lo, g_lo), (hi, g_hi)):
        assert (1 - s.alpha[0]) * x / cost - 1e-13 * scale <= g <= x / cost + 1e-13 * scale
    # linear in the arrival rate (states scaled alike), inversely proportional to the cost
    s2 = SourceModel(2 * lam, xi, mu, period=period, cost=cost / 4)
    np.testing.assert_allclose(whittle_index([[2 * hi]], s2)[0, 0], 8 * g_hi, rtol=1e-12, atol=1e-12 * scale)


@settings(max_examples=100, deadline=None)
@given(mu=decays, n=st.integers(1, 200), eps=st.floats(1e-12, 1e-6))
def test_index_continuous_at_grid_points(mu, n, eps):
    s = SourceModel(1.0, 1.0, mu)
    xn = s.u_star[0] * (1 - s.alpha[0] ** n)
    # both points on the pieces either side of x_n: x_{n+1} - x_n = u* alpha^n (1 - alpha) is the nearer grid point
    # (x_n - x_{n-1} is 1/alpha times that); past it the slope is a later piece's, (n + 2) and up
    if eps * xn >= s.u_star[0] * s.alpha[0] ** n * (1 - s.alpha[0]):
        return
    g = whittle_index([[xn * (1 - eps)], [xn], [xn * (1 + eps)]], s)[:, 0]
    assert np.all(np.diff(g) >= -1e-15 * s.u_star[0])
    # Lipschitz with the slope eta (1 - alpha) / C of the piece on either side: no jump at x_n
    assert g[2] - g[0] <= 2.01 * eps * xn * (n + 1) * (1 - s.alpha[0]) + 1e-14 * s.u_star[0]


# ---------------------------------------------------------------------------
# The compiled paths: the vector path (AVX-512F where present) and the scalar one give the same bits, and both
# meet a 50-digit evaluation of the ceil form


def mp_index(x, ustar, mut, cost):
    import mpmath as mp

    with mp.workdps(50):
        x, ustar, mut, cost = (mp.mpf(float(v)) for v in (x, ustar, mut, cost))
        if x >= ustar:
            return float(x / cost)
        eta = mp.ceil(mp.log(ustar / (ustar - x)) / mut)
        om = -mp.expm1(-mut)
        return float((-ustar * mp.expm1(-mut * eta) - eta * om * (ustar - x)) / cost)


@pytest.mark.parametrize("scale", [1e-300, 1e-8, 1.0, 1e8, 1e290])
def test_index_paths_agree_and_meet_mpmath(scale):
    from freshcore import _whittle

    rng = np.random.default_rng(int(np.log10(scale) + 400))
    n = 203                                   # not a multiple of eight: the vector loop's tail too
    s = SourceModel(scale * rng.uniform(0.1, 10, n), rng.uniform(0.1, 1, n),
                    np.concatenate([rng.uniform(1e-6, 1e-3, 50), rng.uniform(0.01, 40, n - 50)]),
                    cost=rng.uniform(0.1, 10, n))
    frac = np.concatenate([rng.uniform(0, 1, n - 20), [0.0, 1e-15, 1e-9, 1 - 1e-15, 1 - 1e-9] * 4])
    x = frac * s.u_star
    try:
        best = _whittle.index_simd(-1)
        got = whittle_index(x, s)
        _whittle.index_simd(0)
        scalar = whittle_index(x, s)
    finally:
        _whittle.index_simd(-1)
    np.testing.assert_array_equal(got, scalar)
    ref = np.array([mp_index(*v) for v in zip(x, s.u_star, s.decay * s.period, s.cost)])
    assert np.all(np.abs(got - ref) <= 1e-14 * s.u_star / s.cost), best
