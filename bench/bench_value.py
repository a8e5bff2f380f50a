"""Benchmarks of the exponential residual (freshcore.special), the exact crawl value (freshcore.value) and the
optimal thresholds (freshcore.thresholds).

Groups (each holds the plain numpy/scipy baseline beside freshcore):

* ``residual_exp n=...``: ``scipy.special.gammainc(i + 1, x)`` vs
  ``freshcore.special.residual_exp(i, x)`` (with its validation) and the bare
  compiled kernel; i ~ U{0..30}, x ~ U(0, 40) (seed 0);
* ``crawl_value n=...``: baseline = V in plain numpy with ``gammainc``, the
  paper's form ``sum_n [rho^n R^n(c s_n)/c - e^{-alpha iota} R^n(gamma s_n)/gamma]``
  vectorised over pages, looping over n while any page still has a term above
  1e-16 of its sum (the same stopping rule as freshcore, but the cancelling
  difference) vs ``freshcore.value.crawl_value(value="exact")``.  The baseline is
  the numpy a competent user would write: the Greedy value only on the pages
  without informative signals (beta = 0), each page's parameters gathered once,
  the per-page factors (rho^n, e^{-alpha iota}/gamma) carried along and the
  arrays compacted as pages finish, so no pass works on a finished page.

* ``optimal_thresholds n=...``: baseline = the signal-blind periodic optimum
  ``optimal_rates(model="periodic")`` on the same pages (a reference point, not
  the same problem: no plain-numpy solver of Theorem 2 exists to compare
  with) vs ``freshcore.thresholds.optimal_thresholds`` with signals, bandwidth n/10.
  Sizes 10^3 to 10^6, three rounds each (issue 3 target: <= 10 s at 10^6).

Pages: SPEC section 3's check distribution, Delta, mu ~ U[0, 1],
lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6), tau_eff ~ U(0, 10) (seed 0).
Targets (issue 3): residual within 2x of gammainc, exact V >= 20x faster than
the gammainc-based numpy code.

Run (briefly, on the shared machine)::

    PYTHONPATH=src:bench python -m pytest bench/bench_value.py -o python_files='bench_*.py' \
        --benchmark-min-rounds=3 --benchmark-max-time=0.5
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

from freshcore._core import residual_exp_kernel
from freshcore.pages import PageModel
from freshcore.rates import optimal_rates
from freshcore.special import residual_exp
from freshcore.thresholds import optimal_thresholds
from freshcore.value import crawl_value

from benchutil import role, sizes


def residual_points(n):
    rng = np.random.default_rng(0)
    return rng.integers(0, 31, n), rng.uniform(0.0, 40.0, n)


def pages_instance(n):
    rng = np.random.default_rng(0)
    dl, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    lam, nu = rng.beta(0.25, 0.25, n), rng.uniform(0.1, 0.6, n)
    return PageModel(dl, mu, lam, nu), rng.uniform(0, 10, n)


def value_numpy(tau, pages):
    """Exact V in plain numpy + scipy.special.gammainc (the literal, cancelling difference).

    The Greedy value only where signals carry no information (beta = 0); the series over n on the other pages,
    each page's parameters gathered once and the arrays compacted as pages finish (no work on finished pages).
    """
    dl, mu, nu = pages.change_rate, pages.importance, pages.false_rate
    alpha, gamma, beta = pages.alpha, pages.gamma, pages.beta
    out = np.zeros_like(tau)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g = np.flatnonzero((beta == 0) & (dl > 0))
        out[g] = mu[g] * sc.gammainc(2, dl[g] * tau[g]) / dl[g]
        idx = np.flatnonzero((beta > 0) & (alpha > 0) & (dl > 0))
        t, b, c, gm, m = tau[idx], beta[idx], dl[idx] + nu[idx], gamma[idx], mu[idx]
        rho = nu[idx] / c
        e_g = np.exp(-alpha[idx] * t) / gm  # e^{-alpha iota} / gamma
        rho_n, total = np.ones_like(t), np.zeros_like(t)
        n = 0
        while len(idx):
            s = t - n * b if n else t
            a = rho_n * sc.gammainc(n + 1, c * s) / c
            total += a - e_g * sc.gammainc(n + 1, gm * s)
            q = rho * np.minimum(1.0, c * s / (n + 2))
            done = ~np.isfinite(b) | ((n + 1) * b > t) | (a * q <= 1e-16 * total * (1 - q))
            if done.any():
                out[idx[done]] = m[done] * total[done]
                keep = ~done
                idx, t, b, c, gm, m, rho, e_g, rho_n, total = (
                    x[keep] for x in (idx, t, b, c, gm, m, rho, e_g, rho_n, total))
            rho_n = rho_n * rho
            n += 1
    return out


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_residual_gammainc(benchmark, n):
    benchmark.group = f"residual_exp n={n}"
    role(benchmark, "baseline", n=n)
    i, x = residual_points(n)
    benchmark(sc.gammainc, i + 1, x)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_residual_freshcore(benchmark, n):
    benchmark.group = f"residual_exp n={n}"
    role(benchmark, "freshcore", n=n)
    i, x = residual_points(n)
    got = benchmark(residual_exp, i, x)
    np.testing.assert_allclose(got, sc.gammainc(i + 1, x), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_residual_kernel(benchmark, n):
    benchmark.group = f"residual_exp n={n}"
    role(benchmark, "freshcore", n=n)
    i, x = residual_points(n)
    out = np.empty(n)
    benchmark(residual_exp_kernel, i.astype(np.float64), x, out)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_value_numpy(benchmark, n):
    benchmark.group = f"crawl_value n={n}"
    role(benchmark, "baseline", n=n)
    pages, tau = pages_instance(n)
    benchmark.pedantic(value_numpy, (tau, pages), rounds=3)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_value_freshcore(benchmark, n):
    benchmark.group = f"crawl_value n={n}"
    role(benchmark, "freshcore", n=n)
    pages, tau = pages_instance(n)
    got = benchmark(crawl_value, tau, pages)
    ref = value_numpy(tau, pages)
    big = ref > 1e-6 * pages.importance / np.maximum(pages.change_rate, 1e-300)  # where the baseline has digits left
    np.testing.assert_allclose(got[big], ref[big], rtol=1e-6)


@pytest.mark.parametrize("n", sizes(10**3, 10**4, 10**5, 10**6))
def test_thresholds_signal_blind(benchmark, n):
    benchmark.group = f"optimal_thresholds n={n}"
    role(benchmark, "baseline", n=n)
    pages, _ = pages_instance(n)
    benchmark(optimal_rates, pages.change_rate, pages.importance, n / 10, model="periodic")


@pytest.mark.parametrize("n", sizes(10**3, 10**4, 10**5, 10**6))
def test_thresholds_freshcore(benchmark, n):
    benchmark.group = f"optimal_thresholds n={n}"
    role(benchmark, "freshcore", n=n, bandwidth=n / 10)
    pages, _ = pages_instance(n)
    res = benchmark.pedantic(optimal_thresholds, (pages, n / 10), rounds=3)
    assert abs(res.frequencies.sum() / (n / 10) - 1) <= 1e-13
