"""The stochastic Whittle index of Section VIII of Avrachenkov and Borkar (2018) (eqs. (33)-(35))."""

import numpy as np
import pytest

from freshcore import _whittle
from freshcore.whittle import SourceModel, relaxed_optimum, source_gain, whittle_index
from freshcore.whittle_policies import GreedyPolicy, WhittlePolicy
from freshcore.whittle_simulation import simulate_sources
from freshcore.whittle_stochastic import stochastic_bound, stochastic_gain, stochastic_index

TABLE1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])


def test_without_noise_it_is_the_deterministic_index():
    s = SourceModel([250.0, 3.0, 40.0], [1.0, 2.0, 0.1], [0.7, 0.2, 1.3], period=1.5, cost=[1.0, 2.5, 0.4])
    x = np.array([0.05, 0.3, 0.6, 0.9, 1.2])[:, None] * s.u_star
    got = stochastic_index(x, s, noise=False, grid=400, iterations=4000)
    np.testing.assert_allclose(got, whittle_index(x, s), rtol=5e-4)


def interpolation(points, g, h):
    """Rows of weights w with w @ V = the kernel's linear interpolation of V at ``points`` (end cells
    extrapolated)."""
    t = points / h
    j = np.clip(np.floor(t), 0, g - 2).astype(int)
    w = np.zeros((len(points), g))
    np.add.at(w, (np.arange(len(points)), j), 1 - (t - j))
    np.add.at(w, (np.arange(len(points)), j + 1), t - j)
    return w


def direct_index(x_c, alpha, cost, x_hi, samples, g):
    """Eqs. (28)-(31) solved directly on the same grid and empirical law: the policy's bias by a linear solve
    (V(0) = 0), then the subsidy that makes x_c indifferent (the condition is affine in the subsidy)."""
    h = x_hi / (g - 1)
    xs = np.arange(g) * h
    after_crawl = interpolation(samples, g, h).mean(axis=0)

    def condition(lam):
        a = np.zeros((g + 1, g + 1))
        b = np.zeros(g + 1)
        for k, x in enumerate(xs):
            a[k, :g] = np.eye(g)[k] - (interpolation(alpha * x + samples, g, h).mean(axis=0) if x < x_c
                                       else after_crawl)
            a[k, g] = 1.0
            b[k] = cost * lam if x < x_c else x
        a[g, 0] = 1.0
        v = np.linalg.solve(a, b)[:g]
        return cost * lam + interpolation(alpha * x_c + samples, g, h).mean(axis=0) @ v - after_crawl @ v - x_c

    f0, f1 = condition(0.0), condition(1.0)
    return -f0 / (f1 - f0)


@pytest.mark.parametrize(("i", "frac"), [(0, 0.4), (1, 0.7), (3, 0.5)])
def test_two_timescale_scheme_meets_the_direct_solution(i, frac):
    """With the noise on, the stochastic approximation settles on the root of eqs. (28)-(31) for the same
    grid and samples, within its own noise."""
    rng = np.random.default_rng(i)
    g = 120
    samples = TABLE1.u[i] + rng.normal(0.0, 0.1 * TABLE1.u[i], 24).clip(-TABLE1.u[i], None)
    alpha, cost, x_c = TABLE1.alpha[i], 1.0, frac * TABLE1.u_star[i]
    x_hi = 1.5 * TABLE1.u_star[i]
    out = np.empty(1)
    streams = rng.integers(1, 2**63, size=(1, 4), dtype=np.uint64)
    _whittle.stochastic_index_kernel(np.array([x_c]), np.array([alpha]), np.array([cost]), np.array([x_hi]),
                                     samples[None, :].copy(), g, 20000, np.array([0.5 * x_c]), streams, out)
    ref = direct_index(x_c, alpha, cost, x_hi, samples, g)
    assert out[0] == pytest.approx(ref, rel=3e-3)


def test_table1_stochastic_index_near_the_deterministic_one():
    """Table I's sources (Poisson arrivals, deterministic utilities): within a few percent of the closed form,
    as the paper's advice to use the deterministic index suggests; seeded, so reproducible."""
    x = np.array([0.3, 0.6])[:, None] * TABLE1.u_star
    got = stochastic_index(x, TABLE1, rng=0, samples=64, iterations=3000, grid=200)
    np.testing.assert_array_equal(got, stochastic_index(x, TABLE1, rng=0, samples=64, iterations=3000, grid=200))
    np.testing.assert_allclose(got, whittle_index(x, TABLE1), rtol=0.05)


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        (dict(x=[1.0, -1.0, 0.0, 0.0]), ValueError, r"'x' parameter of stochastic_index .*x\[1\] = -1.0"),
        (dict(x=[1.0, 1.0]), ValueError, r"shape \(\.\.\., 4\)"),
        (dict(grid=8), ValueError, "'grid' parameter of stochastic_index must be an integer >= 16"),
        (dict(samples=0), ValueError, "'samples'"),
        (dict(iterations=0), ValueError, "'iterations'"),
        (dict(utility="beta"), ValueError, "'utility'"),
        (dict(sources=None), TypeError, "'sources' parameter of stochastic_index"),
        # noise='no' is truthy: it must be refused, not read as True
        (dict(noise="no"), TypeError, r"'noise' parameter of stochastic_index must be a bool .*Got 'no' of type str"),
        (dict(noise=0), TypeError, "'noise' parameter of stochastic_index"),
        (dict(noise=None), TypeError, "'noise' parameter of stochastic_index"),
    ],
)
def test_stochastic_index_bad_input(kwargs, exc, message):
    args = dict(x=[1.0, 1.0, 1.0, 1.0], sources=TABLE1)
    args.update(kwargs)
    with pytest.raises(exc, match=message):
        stochastic_index(**args)


# ---------------------------------------------------------------------------
# The stochastic model's per-source problem and its Lagrangian bound


@pytest.mark.parametrize("lam", [0.0, 30.0, 105.0, 300.0])
def test_stochastic_gain_without_noise_is_the_deterministic_one(lam):
    s = SourceModel([250.0, 3.0, 40.0], [1.0, 2.0, 0.1], [0.7, 0.2, 1.3], period=1.5, cost=[1.0, 2.5, 0.4])
    np.testing.assert_allclose(stochastic_gain(lam, s, noise=False, grid=200), source_gain(lam, s), rtol=1e-3)


def test_noise_takes_numpy_bools():
    x = [[10.0, 20.0, 5.0, 3.0]]
    kw = dict(iterations=200, samples=4, grid=32, rng=0)
    np.testing.assert_array_equal(stochastic_index(x, TABLE1, noise=np.False_, **kw),
                                  stochastic_index(x, TABLE1, noise=False, **kw))


def test_stochastic_bound_without_noise_is_the_relaxed_optimum():
    bound_off, _ = stochastic_bound(TABLE1, 1, noise=False, grid=100)
    assert bound_off == pytest.approx(relaxed_optimum(TABLE1, 1).value, rel=1e-4)


@pytest.mark.slow  # (~25 s: a grid DP over 8192 sampled arrivals, and two 3000-step simulations)
def test_stochastic_bound_bounds_the_policies():
    bound_off, _ = stochastic_bound(TABLE1, 1, noise=False, grid=100)
    bound, lam = stochastic_bound(TABLE1, 1, grid=120, samples=8192, rng=3)
    assert 0 < lam < TABLE1.u_star.max()
    assert bound >= bound_off - 0.05                 # looking at the states can only help
    for policy in (WhittlePolicy(1), GreedyPolicy(1)):
        run = simulate_sources(policy, TABLE1, 3000, model="stochastic", n_replicas=10, rng=2018)
        assert run.reward <= bound


@pytest.mark.parametrize(
    ("call", "exc", "message"),
    [
        (lambda: stochastic_gain(np.nan, TABLE1), ValueError, "'multiplier' parameter of stochastic_gain"),
        (lambda: stochastic_gain(1.0, TABLE1, grid=4), ValueError, "'grid' parameter of stochastic_gain"),
        (lambda: stochastic_bound(TABLE1, 0.0), ValueError, "'budget' parameter of stochastic_bound"),
        (lambda: stochastic_bound(TABLE1, 1, samples=0), ValueError, "'samples' parameter of stochastic_bound"),
        (lambda: stochastic_bound(None, 1), TypeError, "'sources' parameter of stochastic_bound"),
        (lambda: stochastic_bound(TABLE1, 1, noise="no"), TypeError, "'noise' parameter of stochastic_bound must be "
                                                                      "a bool"),
        (lambda: stochastic_gain(1.0, TABLE1, noise=1), TypeError, "'noise' parameter of stochastic_gain"),
    ],
)
def test_stochastic_bound_bad_input(call, exc, message):
    with pytest.raises(exc, match=message):
        call()
