"""freshcore.blind, part 2: comparison sampling at a constant interval (M3, M4, M5) and the reproductions of
SPEC section 6 that use it (Table I, E[D3], E[D4], Fig. 4 of Li, Cline and Loguinov (2017)).

The tests run the quick forms; ``bench/repro_blind.py`` (or ``freshcore reproduce blind``) prints the full
tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freshcore.blind import Constant, Pareto, m3, m4, m5, simulate_log
from freshcore.reproduce import blind as repro


def ref_gaps(c):
    return np.diff(np.flatnonzero(c))


def ref_m3(c, k):
    g = ref_gaps(c)
    return np.array([np.count_nonzero(g <= n) for n in range(1, k + 1)]) / len(g) if len(g) else np.full(k, np.nan)


def ref_m4(c, k):
    c = np.asarray(c, dtype=bool)
    idx = np.arange(len(c))
    last = np.maximum.accumulate(np.where(c, idx, -1))
    d = (idx - last + 1)[last >= 0]
    return np.array([np.count_nonzero(d <= n) for n in range(1, k + 1)]) / len(d) if len(d) else np.full(k, np.nan)


def ref_m5(c, k):
    g = ref_gaps(c)
    return np.array([np.minimum(g, n).sum() for n in range(1, k + 1)]) / len(c)


@pytest.mark.parametrize("seed", range(8))
def test_m3_m4_m5_equal_the_numpy_references(seed):
    gen = np.random.default_rng(seed)
    n = int(gen.integers(1, 400))
    c = (gen.random(n) < gen.uniform(0.02, 0.9)).astype(np.uint8)
    k = int(gen.integers(1, 30))
    np.testing.assert_array_equal(m3(c, k), ref_m3(c, k))
    np.testing.assert_array_equal(m4(c, k), ref_m4(c, k))
    np.testing.assert_array_equal(m5(c, k), ref_m5(c, k))
    np.testing.assert_array_equal(m4(c.astype(bool), k), ref_m4(c, k))
    np.testing.assert_array_equal(m5(c.tolist(), k), ref_m5(c, k))


def test_without_detections():
    assert np.isnan(m3([0, 1, 0], 2)).all() and np.isnan(m4([0, 0], 2)).all()
    np.testing.assert_array_equal(m5([0, 0, 1, 0], 2), [0.0, 0.0])


def test_m4_m5_are_consistent_and_m3_follows_theorem_6():
    law = Pareto(3.0)
    c = simulate_log(law, Constant(1.0), 1e6, rng=4).changed
    n = np.arange(1.0, 21.0)
    g = law.age_cdf(n)
    assert np.abs(m4(c, 20) - g).max() < 0.005
    assert np.abs(m5(c, 20) - g).max() < 0.005
    # Theorem 6: 1 - G_3(x_n) = (G_U(x_{n+1}) - G_U(x_n)) / G_U(Δ)
    assert np.abs((1.0 - m3(c, 20)) - (law.age_cdf(n + 1.0) - g) / law.age_cdf(1.0)).max() < 0.005


@pytest.mark.parametrize("call, error, message", [
    (lambda: m4([0, 1], 0), ValueError, r"'n_points' parameter of m4 must be an integer >= 1"),
    (lambda: m3([0, 1], 2.0), TypeError, r"'n_points' parameter of m3"),
    (lambda: m5([], 2), ValueError, r"'changed' parameter of m5 must not be empty"),
    (lambda: m5([0, -1], 2), ValueError, r"'changed' parameter of m5 must contain only 0/1 .*changed\[1\] = -1"),
    (lambda: m4([[0, 1]], 2), ValueError, r"'changed' parameter of m4 must be a 1-D array"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------------------
# the reproductions (quick forms)
# ---------------------------------------------------------------------------


def test_table_i_within_15_percent_of_the_paper():
    table = repro.table_i({1e2: 2000, 1e3: 1000, 1e4: 300}, seed=0)
    for T in (1e2, 1e3, 1e4):
        for name, ref in zip(repro.COLUMNS, repro.TABLE_I[T]):
            assert table.values[f"{name}@{T:g}"] == pytest.approx(ref, rel=0.15), (name, T)


@pytest.mark.slow
def test_table_i_at_1e5_within_15_percent_of_the_paper():
    table = repro.table_i({1e5: 300}, seed=0)
    for name, ref in zip(repro.COLUMNS, repro.TABLE_I[1e5]):
        assert table.values[f"{name}@100000"] == pytest.approx(ref, rel=0.15), name


def test_e_d3_within_1_percent_and_d4_head_exact():
    """E[D3] = 4/3 from one window of 10^6 samples.  D4's tail is x^{-2} (infinite variance), so its full
    sample mean needs ~10^7-sample windows (the slow test below); here the head of the sum,
    Σ_{n < 30} (1 − G_4(n)), against Σ_{n < 30} (1 + n)^{-2}, both within 1%."""
    table = repro.d3_d4(1e6, 1, seed=0)
    assert table.values["E[D3]"] == pytest.approx(4 / 3, rel=0.01)
    c = simulate_log(repro.UPDATES, Constant(1.0), 1e6, rng=1).changed
    head = 1.0 + np.sum(1.0 - m4(c, 29))
    assert head == pytest.approx(sum((1.0 + n) ** -2 for n in range(30)), rel=0.01)


@pytest.mark.slow
def test_e_d4_within_1_percent_of_pi_squared_over_6():
    """Four windows of 10^7 samples: the simulated head (n < 100) plus the exact tail (0.6% of the total)
    within 1%; the plain sample mean (infinite variance) within 3%."""
    table = repro.d3_d4(1e7, 4, seed=0)
    assert table.values["E[D4], head + tail"] == pytest.approx(math.pi**2 / 6, rel=0.01)
    assert table.values["E[D4]"] == pytest.approx(math.pi**2 / 6, rel=0.03)
    assert table.values["E[D3]"] == pytest.approx(4 / 3, rel=0.01)


def test_fig4_retained_fraction_within_0_005():
    table = repro.fig4((0.5, 1.0, 2.0, 5.0, 10.0), 3e5, seed=0)  # (p's standard error ~1e-3: 0.005 is 5 of them)
    for key, p in table.values.items():
        if key.startswith("p "):
            want = table.values["E[G_U(S)] " + key[2:]]
            assert abs(p - want) < 0.005, key
    # constant S retains more than exponential S at every λ (Section IV-B)
    for lam in ("0.5", "1", "2", "5", "10"):
        assert table.values[f"p constant@{lam}"] > table.values[f"p exponential@{lam}"]


def test_retained_fraction_closed_forms():
    assert repro.retained_fraction(Constant(1.0)) == 0.75
    # E[G_U(S)] for S ~ Exp(1): 1 - E[(1 + S)^-2] = 1 - (1 - e E1(1)) ...  checked by a second quadrature
    from scipy.special import exp1

    assert repro.retained_fraction(repro.Exponential(1.0)) == pytest.approx(1.0 - (1.0 - math.e * exp1(1.0)))
