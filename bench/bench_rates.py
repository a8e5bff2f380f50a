"""Benchmarks of freshcore.rates.optimal_rates and freshcore.special.lambertw.

Groups (each holds the plain numpy/scipy baseline beside freshcore):

* ``optimal_rates[poisson] n=...``: baseline = the exact closed form in plain
  numpy (argsort of the breakpoints Delta_i/sqrt(w_i Delta_i), cumulative sums,
  searchsorted for the active set);
* ``optimal_rates[periodic] n=...``: baseline = ``scipy.optimize.brentq`` on
  the multiplier with ``scipy.special.lambertw(., -1)`` for every page at every
  step (rtol 1e-12).  At 10^7 pages one baseline call takes tens of seconds, so
  the baselines run a single round (``pedantic``);
* ``lambertw[branch] n=...``: ``scipy.special.lambertw(z, k).real`` vs
  ``freshcore.special.lambertw``.

Instances: Delta, mu ~ U[0, 1] (seed 0), bandwidth n/10 (SPEC section 2's ratio
R/m), no rate bounds.  The brief's bar: optimal_rates at 10^7 pages <= 3 s for
both models.

Run (briefly, on the shared machine)::

    PYTHONPATH=src python -m pytest bench/bench_rates.py -o python_files='bench_*.py' \
        --benchmark-min-rounds=3 --benchmark-max-time=0.5
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
from scipy.optimize import brentq

from freshcore.rates import optimal_rates
from freshcore.special import lambertw

from benchutil import SMOKE, role, sizes


def instance(n):
    rng = np.random.default_rng(0)
    return rng.uniform(0, 1, n), rng.uniform(0, 1, n), n / 10


def poisson_numpy(d, w, B):
    """Exact Poisson optimum (min_rate = 0, max_rate = inf) in plain numpy."""
    s = np.sqrt(w * d)
    act = s > 0
    sa, da = s[act], d[act]
    ua = da / sa  # page becomes active at u = Delta/s
    order = np.argsort(ua)
    cs = np.cumsum(sa[order])
    cd = np.cumsum(da[order])
    S_at = cs * ua[order] - cd  # total rate at each breakpoint
    k = int(np.searchsorted(S_at, B, side="right"))  # pages 0..k-1 are active
    u = (B + cd[k - 1]) / cs[k - 1]
    out = np.zeros_like(d)
    out[act] = np.maximum(sa * u - da, 0.0)
    return out


def periodic_numpy(d, mu, R):
    """Periodic optimum (no bounds) with scipy: brentq on Lambda, scipy's W-1 for every page."""

    def xi(lam):
        c = lam * d / mu
        out = np.zeros_like(d)
        m = c < 1
        z = np.maximum(-(1.0 - c[m]) / np.e, -np.exp(-1.0))  # rounding can put z below -1/e
        x = -1.0 - sc.lambertw(z, -1).real
        x = np.where(x > 0, x, np.sqrt(2.0 * c[m]))  # small-c limit where W rounded to -1
        out[m] = d[m] / x
        return out

    # bracket: start where the small-c bound xi <= sqrt(mu Delta/(2 Lambda)) gives R, go down
    lam_lo = (np.sum(np.sqrt(0.5 * mu * d)) / R) ** 2
    while xi(lam_lo).sum() <= R:
        lam_lo /= 4.0
    lam = brentq(lambda L: xi(L).sum() - R, lam_lo, float(np.max(mu / d)), rtol=1e-12)
    return xi(lam)


BIG = 10**6  # above this the baselines run one round only


def run(benchmark, fn, *args, single=False):
    if single and not SMOKE:
        return benchmark.pedantic(fn, args=args, rounds=1, iterations=1)
    return benchmark(fn, *args)


@pytest.mark.parametrize("n", sizes(10**3, 10**5, 10**6, 10**7))
@pytest.mark.parametrize("impl", ["baseline", "freshcore"])
def test_optimal_rates_poisson(benchmark, n, impl):
    d, w, B = instance(n)
    benchmark.group = f"optimal_rates[poisson] n={n}"
    role(benchmark, impl, n=n)
    if impl == "baseline":
        r = run(benchmark, poisson_numpy, d, w, B, single=n > BIG)
    else:
        r = run(benchmark, optimal_rates, d, w, B, "poisson")
    assert r.sum() <= B * (1 + 1e-12)


@pytest.mark.parametrize("n", sizes(10**3, 10**5, 10**6, 10**7))
@pytest.mark.parametrize("impl", ["baseline", "freshcore"])
def test_optimal_rates_periodic(benchmark, n, impl):
    d, mu, R = instance(n)
    benchmark.group = f"optimal_rates[periodic] n={n}"
    role(benchmark, impl, n=n)
    if impl == "baseline":
        r = run(benchmark, periodic_numpy, d, mu, R, single=n > BIG)
    else:
        r = run(benchmark, optimal_rates, d, mu, R, "periodic")
    assert r.sum() <= R * (1 + 1e-10)


@pytest.mark.parametrize("n", sizes(10**6))
@pytest.mark.parametrize("branch", [0, -1])
@pytest.mark.parametrize("impl", ["baseline", "freshcore"])
def test_lambertw(benchmark, n, branch, impl):
    rng = np.random.default_rng(1)
    z = rng.uniform(-np.exp(-1), 10.0 if branch == 0 else 0.0, n)
    benchmark.group = f"lambertw[{branch}] n={n}"
    role(benchmark, impl, n=n, branch=branch)
    out = np.empty(n)
    if impl == "baseline":
        benchmark(lambda: sc.lambertw(z, branch).real)
    else:
        benchmark(lambertw, z, branch, out=out)
