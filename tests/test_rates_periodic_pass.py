"""The periodic pass of freshcore._rates: the eight-lane kernel (_rates_periodic.h) and the scalar loop.

Every level the machine runs (0 baseline, 1 AVX2, 2 AVX-512) must give the same bits; the kernel's x
must match mpmath; the pass must agree with the scalar loop over _core's Lambert W (level -1), and
optimal_rates(model="periodic") solved with either must agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from freshcore import _rates
from freshcore.rates import optimal_rates

TOP = _rates._periodic_levels()[1]
LEVELS = list(range(TOP + 1))  # the vector levels this machine runs (none where there is no kernel)


@pytest.fixture
def level():
    """Restore the level in use after a test that changes it."""
    old = _rates._periodic_levels()[0]
    yield
    _rates._set_periodic_level(old)


def at_level(lev, fn, *args):
    old = _rates._set_periodic_level(lev)
    try:
        return fn(*args)
    finally:
        _rates._set_periodic_level(old)


def x_ref(t):
    """-1 - W-1(-(1 - t^2)/e) in mpmath, 1 - t^2 = (1 - t)(1 + t) exactly."""
    import mpmath as mp

    with mp.workdps(340):
        return np.array([float(-1 - mp.lambertw(-((1 - mp.mpf(float(v))) * (1 + mp.mpf(float(v)))) / mp.e, -1))
                         for v in t])


def test_levels(level):
    cur, top = _rates._periodic_levels()
    assert cur == top  # the widest at import
    assert _rates._set_periodic_level(-3) == top
    assert _rates._periodic_levels()[0] == -1
    _rates._set_periodic_level(99)
    assert _rates._periodic_levels()[0] == top


@pytest.mark.parametrize("lev", [-1, *LEVELS])
def test_pass_x_against_mpmath(lev):
    """x from c -> 0 (the series) through c = 0.005 (the guess and Newton) to c -> 1."""
    c = np.concatenate([np.logspace(-300, -1, 200), 1 - np.logspace(-16, -1, 200), np.linspace(0.001, 0.999, 999),
                        np.linspace(0.004, 0.006, 101)])
    t = np.sqrt(c)
    out = np.empty_like(t)
    at_level(lev, _rates.periodic_pass_x, t, out)
    ref = x_ref(t)
    np.testing.assert_allclose(out, ref, rtol=2e-15 if lev >= 0 else 1e-13, atol=0)
    zero = np.full(3, np.nan)
    at_level(lev, _rates.periodic_pass_x, np.array([0.0, 0.0, 1e-300]), zero)
    assert zero.tolist() == [0.0, 0.0, pytest.approx(math.sqrt(2) * 1e-300, rel=1e-15)]


def instance(rng, n, kind):
    if kind == "uniform":
        d, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    elif kind == "wide":  # twelve decades each
        d, mu = 10 ** rng.uniform(-6, 6, n), 10 ** rng.uniform(-6, 6, n)
    else:  # "extreme": change rates and importance far apart, near the ends of the range the pass accepts
        d, mu = 10 ** rng.uniform(-150, 150, n), 10 ** rng.uniform(-150, 150, n)
    return np.sqrt(d / mu), d


@pytest.mark.parametrize("n", [1, 7, 8, 9, 31, 32, 33, 100, 1001])
@pytest.mark.parametrize("kind", ["uniform", "wide", "extreme"])
@pytest.mark.parametrize("bounds", [False, True])
def test_pass_same_bits_at_every_level_and_close_to_scalar(n, kind, bounds):
    rng = np.random.default_rng(n + 7 * len(kind) + bounds)
    b, d = instance(rng, n, kind)
    if bounds:
        lo = np.where(rng.uniform(size=n) < 0.3, d * rng.uniform(0, 0.05, n), 0.0)
        hi = np.where(rng.uniform(size=n) < 0.3, lo + d * rng.uniform(0, 0.3, n), np.inf)
    else:
        lo, hi = np.zeros(n), np.full(n, np.inf)
    for u in np.quantile(b, [0.05, 0.3, 0.5, 0.9, 1.0]) * np.array([1.0, 1 + 1e-15, 1.001, 1.5, 2.0]):
        got = []
        for lev in LEVELS:
            out = np.full(n, np.nan)
            S, D = at_level(lev, _rates.periodic_eval, b, d, lo, hi, float(u), out)
            got.append((S, D, out))
        for S, D, out in got[1:]:
            np.testing.assert_array_equal([S, D], got[0][:2])
            np.testing.assert_array_equal(out, got[0][2])
        out_s = np.full(n, np.nan)
        S_s, D_s = at_level(-1, _rates.periodic_eval, b, d, lo, hi, float(u), out_s)
        if not LEVELS:
            continue
        S, D, out = got[0]
        assert np.all((out >= lo) & (out <= hi))
        # where c = (b/u)^2 underflows (outside what the solvers pass: u <= 2^500 min b) the scalar loop
        # takes x = 0 (rate hi), the kernel x = sqrt(2) b/u
        with np.errstate(over="ignore"):
            normal = (b / u) ** 2 >= 2.0**-1000
        np.testing.assert_allclose(out[normal], out_s[normal], rtol=5e-14, atol=0)
        if normal.all():
            assert S == pytest.approx(S_s, rel=1e-14, abs=0)
            assert D == pytest.approx(D_s, rel=1e-13, abs=0, nan_ok=True)
        # the rates not written are the same pass (S and D do not depend on writing them)
        np.testing.assert_array_equal(at_level(LEVELS[-1], _rates.periodic_eval, b, d, lo, hi, float(u)), [S, D])


@pytest.mark.skipif(not LEVELS, reason="no vector kernel in this build")
@pytest.mark.parametrize("seed", range(12))
def test_optimal_rates_same_as_scalar_pass(seed):
    """The whole solve with the vector pass against the solve with the scalar pass: 1e-12 relative."""
    rng = np.random.default_rng(100 + seed)
    n = [3, 50, 1000, 20000][seed % 4]
    kind = ["uniform", "wide", "extreme"][seed % 3]
    _, d = instance(rng, n, kind)
    mu = 10 ** rng.uniform(-3, 3, n) if kind == "uniform" else 10 ** rng.uniform(-6, 6, n)
    d[rng.uniform(size=n) < 0.05] = 0.0  # some pages that never change
    B = float(10 ** rng.uniform(-2, 2) * max(1.0, n**0.5) * np.median(d))
    kw = {}
    if seed % 2:
        kw = dict(min_rate=np.where(rng.uniform(size=n) < 0.2, B / n * 0.01, 0.0),
                  max_rate=np.where(rng.uniform(size=n) < 0.2, B / n * 3, np.inf))
    vec = at_level(TOP, lambda: optimal_rates(d, mu, B, "periodic", return_details=True, **kw))
    sca = at_level(-1, lambda: optimal_rates(d, mu, B, "periodic", return_details=True, **kw))
    assert math.fsum(vec.crawl_rate) <= B * (1 + 1e-12)
    np.testing.assert_allclose(vec.crawl_rate, sca.crawl_rate, rtol=1e-12, atol=1e-12 * B / n)
    assert vec.objective == pytest.approx(sca.objective, rel=1e-12)
    assert vec.multiplier == pytest.approx(sca.multiplier, rel=1e-11)
