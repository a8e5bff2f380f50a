"""freshcore.blind, part 4: F_U and μ from an estimate of G_U by finite differences, the flat-region bin width,
and Fig. 8 of Li, Cline and Loguinov (2017)."""

from __future__ import annotations

import numpy as np
import pytest

from freshcore import blind_recovery
from freshcore.blind import Exponential, Pareto, Uniform, flat_bin_width, m2, update_distribution
from freshcore.reproduce import blind as repro


def test_fornberg_weights_are_the_textbook_stencils():
    w = blind_recovery._derivative_weights(0.0, np.arange(5.0))
    np.testing.assert_allclose(w, np.array([-25, 48, -36, 16, -3]) / 12, atol=1e-13)
    w = blind_recovery._derivative_weights(0.0, np.arange(-2.0, 3.0))
    np.testing.assert_allclose(w, np.array([1, -8, 0, 8, -1]) / 12, atol=1e-13)
    w = blind_recovery._derivative_weights(0.0, np.arange(-1.0, 2.0), order=2)
    np.testing.assert_allclose(w, [1, -2, 1], atol=1e-13)


@pytest.mark.parametrize("law", [Pareto(3.0), Pareto(2.5, 2.0), Exponential(0.7), Uniform(0.0, 2.0)], ids=repr)
def test_exact_age_cdf_gives_back_f_and_mu(law):
    x = 0.01 * np.arange(1, 401)
    r = update_distribution(law.age_cdf(x), x)
    assert r.rate == pytest.approx(law.rate, rel=1e-4)
    # the uniform law's density has kinks (at 2): away from them the stencils are exact to O(h^4)
    smooth = np.abs(r.x - 2.0) > 0.03 if isinstance(law, Uniform) else slice(None)
    np.testing.assert_allclose(r.cdf[smooth], law.cdf(r.x)[smooth], atol=1e-4)
    np.testing.assert_allclose(r.density, r.rate * (1.0 - r.cdf), rtol=1e-12, atol=1e-12)
    assert r.x[0] == 0.0 and len(r.x) == len(x) + 1


def test_exact_bin_averages_give_back_mu():
    h, n = 0.02, 300
    avg = repro.bin_average(h, n)  # Pareto(3, 1)
    x = h * np.arange(1, n + 1)
    r = update_distribution(avg, x, averages=True)
    assert r.rate == pytest.approx(2.0, rel=1e-5)
    np.testing.assert_allclose(r.cdf[:-3], Pareto(3.0).cdf(r.x)[:-3], atol=1e-3)


def test_flat_bin_width_on_exact_and_on_simulated_m2():
    g = Pareto(3.0).age_cdf
    n = np.arange(1, 5)
    h = flat_bin_width(lambda h: (h * n, g(h * n)), 1e-4, 1.0)
    rate = update_distribution(g(h * n), h * n).rate
    # flat: within rtol = 1% of the rate at h/2, which is itself off by a fraction of that
    assert rate == pytest.approx(2.0, rel=0.02)
    assert flat_bin_width(lambda h: (h * n, Exponential(2.0).age_cdf(h * n)), 1e-4, 0.01) == 0.01


def test_fig8_recovery_from_m2_and_m6():
    """M2 at λ = 100 over T = 10^5 (10^7 ages): μ within 2%, F_U within 0.02 (measured 1.982, 0.009); M6
    (exponential S, T = 10^6, bin averages, rtol 2%): μ within 5%, F_U within 0.04 (measured 1.966, 0.022)."""
    table = repro.recovery(1e5, 1e6, seed=0, rtol_m6=0.02)
    v = table.values
    assert v["mu M2"] == pytest.approx(2.0, rel=0.02) and v["KS F_U M2"] < 0.02
    assert v["mu M6"] == pytest.approx(2.0, rel=0.05) and v["KS F_U M6"] < 0.04


def test_flat_nowhere_is_an_error():
    rng = np.random.default_rng(0)
    ages = rng.exponential(0.5, 50)  # far too few ages for a 0.1% plateau
    n = np.arange(1, 5)
    with pytest.raises(ValueError, match=r"flat_bin_width is flat nowhere in \[low, high\]"):
        flat_bin_width(lambda h: (h * n, m2(ages, h * n)), 1e-3, 1.0, rtol=1e-3)


@pytest.mark.parametrize("call, error, message", [
    (lambda: update_distribution([0.1, 0.2], [0.1]), ValueError, r"'age_cdf' has 2, 'x' has 1"),
    (lambda: update_distribution([0.0, 0.2], [0.2, 0.1]), ValueError, r"'x' parameter of update_distribution must "
                                                                     r"be strictly increasing"),
    (lambda: update_distribution([0.0, 0.2], [0.0, 0.2]), ValueError, r"'x' parameter of update_distribution must "
                                                                     r"contain numbers > 0 .*x\[0\] = 0.0"),
    (lambda: update_distribution([0.1, 0.2], [0.1, 0.2]), ValueError, r"'points' parameter of update_distribution "
                                                                     r"must be an integer >= 2 and <= 3"),
    (lambda: update_distribution([0.1, 0.2], [0.1, 0.2], points=2, averages=True), ValueError,
     r"'points' parameter of update_distribution must be an integer >= 3"),
    (lambda: update_distribution([-0.1, -0.2, -0.3, -0.4], [0.1, 0.2, 0.3, 0.4]), ValueError,
     r"'age_cdf' parameter of update_distribution must rise at 0"),
    (lambda: update_distribution([0.1, np.nan], [0.1, 0.2], points=2), ValueError, r"age_cdf\[1\] = nan"),
    (lambda: flat_bin_width(3.0, 0.1, 1.0), TypeError, r"'estimate' parameter of flat_bin_width must be callable"),
    (lambda: flat_bin_width(lambda h: ([h], [h]), 1.0, 0.5), ValueError, r"'high' parameter of flat_bin_width"),
    (lambda: flat_bin_width(lambda h: ([h], [h]), 0.1, 1.0), ValueError, r"must return at least points - 1 = 4"),
    (lambda: flat_bin_width(lambda h: ([h], [h]), 0.1, 1.0, rtol=0.0), ValueError, r"'rtol' parameter"),
])
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()
