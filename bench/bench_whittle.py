"""Benchmarks of the Whittle index for ephemeral content (freshcore.whittle, issue 17).

Groups (each holds the plain numpy baseline beside freshcore; one thread, FRESHCORE_NUM_THREADS=1):

* ``whittle_index n=...``: Theorem 1's ceil form over n (source, state) pairs.  Baseline: the same formula in
  numpy, one vectorised pass per operation, ``where`` for the states above u* (the arrays of the derived
  parameters given, as ``SourceModel`` gives them to both) vs ``freshcore.whittle.whittle_index`` (with its
  validation).  Sources: Lambda ~ U(1, 100), xi ~ U(0.1, 1), mu ~ U(0.02, 2), C ~ U(0.5, 2); states
  ~ U(0, 1.2 u*) (seed 0).  Target: >= 5x at 10^6.
* ``whittle_period n=... M=...``: one period of the Whittle policy on the deterministic model.  Baseline: the
  numpy step a competent user writes: every index from the current states (the formula above), the top M by
  ``argpartition`` with ties to the lowest index (above the M-th value, then the lowest of those equal to
  it), the reward, and the states advanced in place (``X *= alpha; X += u; X[chosen] = u``) vs
  ``WhittleScheduler.run(1)``, which uses that a passive source's index trajectory is known in advance.
  Before timing, both run the first 30 periods from X(0) = u and their decisions are checked identical; the
  scheduler then runs to period 2000 (steady state; its first period, a full pass, is reported separately
  in ``extra_info["first_period_s"]``).  Sources as above with C = 1.  Target: >= 100x at 10^6, M = 10^3.
* ``whittle_stochastic R=...``: the stochastic simulator of eq. (23) on Table I's sources (Lambda = 250:
  1000 arrivals a period, each at a uniform epoch and discounted), R replicas x 200 periods, the greedy-type
  policy.  Baseline: the same simulation loop with the arrivals drawn by numpy, vectorised over a block of
  periods x R replicas x 4 sources holding about 5 * 10^6 arrivals, numpy's fastest block (``Generator.poisson``
  counts, one ``random`` call for all the epochs, ``np.repeat`` of the segment ids, ``exp`` of the discounts
  and ``bincount`` per segment) vs
  ``simulate_sources(model="stochastic")``.  ``extra_info["arrivals"]`` holds the arrivals simulated per run
  (divide by the time for arrivals per second).  Target: >= 3x.

Sizes in smoke mode (FRESHCORE_BENCH_SMOKE=1): 10^3 pairs, 10^3 sources with M = 10, 4 replicas.

Run::

    PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python -m pytest bench/bench_whittle.py -o python_files='bench_*.py' \\
        -p no:cacheprovider --benchmark-min-rounds=5
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from freshcore.whittle import SourceModel, whittle_index
from freshcore.whittle_policies import GreedyPolicy, WhittleScheduler
from freshcore.whittle_simulation import simulate_sources

from benchutil import SMOKE, role, sizes

TABLE1 = SourceModel(250.0, [1.0, 0.7, 0.2, 0.08], [0.7, 0.35, 0.7, 0.21])


def random_sources(n, costs=True, seed=0):
    rng = np.random.default_rng(seed)
    return SourceModel(rng.uniform(1, 100, n), rng.uniform(0.1, 1, n), rng.uniform(0.02, 2, n),
                       cost=rng.uniform(0.5, 2, n) if costs else 1.0)


def index_numpy(x, ustar, mut, om, cost):
    """Theorem 1's ceil form, x/C above u*."""
    with np.errstate(divide="ignore", invalid="ignore"):
        y = ustar - x
        eta = np.ceil(np.log(ustar / y) / mut)
        g = (-ustar * np.expm1(-mut * eta) - eta * om * y) / cost
    return np.where(y > 0, g, x / cost)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_index_numpy(benchmark, n):
    benchmark.group = f"whittle_index n={n}"
    role(benchmark, "baseline", n=n)
    s = random_sources(n)
    x = np.random.default_rng(1).uniform(0, 1.2, n) * s.u_star
    mut = s.decay * s.period
    benchmark(index_numpy, x, s.u_star, mut, s.u / s.u_star, s.cost)


@pytest.mark.parametrize("n", sizes(1000, 100_000, 1_000_000))
def test_index_freshcore(benchmark, n):
    benchmark.group = f"whittle_index n={n}"
    role(benchmark, "freshcore", n=n)
    s = random_sources(n)
    x = np.random.default_rng(1).uniform(0, 1.2, n) * s.u_star
    got = benchmark(whittle_index, x, s)
    ref = index_numpy(x, s.u_star, s.decay * s.period, -np.expm1(-s.decay * s.period), s.cost)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12 * float((s.u_star / s.cost).max()))


class NumpyWhittleStep:
    """One period of the Whittle policy in numpy (the baseline of ``whittle_period``)."""

    def __init__(self, s, m):
        self.ustar, self.mut, self.om, self.cost = s.u_star, s.decay * s.period, -np.expm1(-s.decay * s.period), s.cost
        self.alpha, self.u, self.m = s.alpha, s.u, m
        self.x = s.u.copy()

    def __call__(self):
        g = index_numpy(self.x, self.ustar, self.mut, self.om, self.cost)
        part = np.argpartition(-g, self.m - 1)[: self.m]
        theta = g[part].min()
        above = np.flatnonzero(g > theta)
        chosen = np.concatenate([above, np.flatnonzero(g == theta)[: self.m - len(above)]])
        reward = self.x[chosen].sum()
        self.x *= self.alpha
        self.x += self.u
        self.x[chosen] = self.u[chosen]
        return np.sort(chosen), reward


PERIOD_SIZES = [(1000, 10)] if SMOKE else [(100_000, 100), (1_000_000, 1000)]


@pytest.mark.parametrize(("n", "m"), PERIOD_SIZES)
def test_period_numpy(benchmark, n, m):
    benchmark.group = f"whittle_period n={n} M={m}"
    role(benchmark, "baseline", n=n, m=m)
    step = NumpyWhittleStep(random_sources(n, costs=False), m)
    benchmark(step)


@pytest.mark.parametrize(("n", "m"), PERIOD_SIZES)
def test_period_freshcore(benchmark, n, m):
    benchmark.group = f"whittle_period n={n} M={m}"
    role(benchmark, "freshcore", n=n, m=m)
    s = random_sources(n, costs=False)
    step = NumpyWhittleStep(s, m)
    sched = WhittleScheduler(s, m)
    t0 = time.perf_counter()
    chosen, rewards = sched.run(1)
    benchmark.extra_info["first_period_s"] = time.perf_counter() - t0
    ref = step()
    np.testing.assert_array_equal(chosen[0], ref[0])
    for _ in range(29):
        chosen, rewards = sched.run(1)
        ref = step()
        np.testing.assert_array_equal(chosen[0], ref[0])
        assert rewards[0] == pytest.approx(ref[1], rel=1e-12)
    sched.run(2000 - 30 if not SMOKE else 10)
    benchmark(sched.run, 1)


def numpy_arrivals(n_steps, n_replicas, rng):
    """U for ``n_steps`` periods: poisson counts, one ``random`` call for every epoch, the segment ids by
    ``repeat``, the discounts by ``exp``, summed per segment by ``bincount``."""
    s = TABLE1
    lam_t = np.broadcast_to(s.arrival_rate * s.period, (n_steps, n_replicas, len(s)))
    mut = np.broadcast_to(s.decay * s.period, lam_t.shape).ravel()
    counts = rng.poisson(lam_t)
    ids = np.repeat(np.arange(counts.size), counts.ravel())
    disc = np.exp(-mut[ids] * rng.random(ids.size))
    return np.bincount(ids, disc, minlength=counts.size).reshape(counts.shape) * s.utility


def stochastic_numpy(n_steps, n_replicas, rng):
    """Eq. (23) with the greedy-type policy, the arrivals drawn by numpy a block of periods at a time: about
    5 * 10^6 arrivals a block, numpy's fastest (2-10 * 10^6 measured at 63 M/s; 1 or 25-50 * 10^6 at 28-42)."""
    s = TABLE1
    block = max(1, int(5e6 // (n_replicas * float((s.arrival_rate * s.period).sum()))))
    policy = GreedyPolicy(1)
    policy.start(s, n_replicas)
    u = numpy_arrivals(1, n_replicas, rng)
    x, age = u[0], np.ones((n_replicas, len(s)), dtype=np.int64)
    rewards = np.empty((n_replicas, n_steps))
    for k in range(n_steps):
        if k % block == 0:
            u = numpy_arrivals(min(block, n_steps - k), n_replicas, rng)
        v = policy.choose(x, age, k)
        rewards[:, k] = np.where(v, x, 0.0).sum(axis=1)
        x = np.where(v, u[k % block], s.alpha * x + u[k % block])
        age = np.where(v, 1, age + 1)
    return rewards


REPLICAS = sizes(100, 1000, smoke=4)


@pytest.mark.parametrize("r", REPLICAS)
def test_stochastic_numpy(benchmark, r):
    benchmark.group = f"whittle_stochastic R={r}"
    role(benchmark, "baseline", replicas=r, steps=200, arrivals=int(201 * r * 1000))
    rng = np.random.default_rng(0)
    rewards = benchmark(stochastic_numpy, 200, r, rng)
    assert abs(rewards[:, 20:].mean() - 260.4) < 3.0


@pytest.mark.parametrize("r", REPLICAS)
def test_stochastic_freshcore(benchmark, r):
    benchmark.group = f"whittle_stochastic R={r}"
    role(benchmark, "freshcore", replicas=r, steps=200, arrivals=int(201 * r * 1000))
    run = benchmark(simulate_sources, GreedyPolicy(1), TABLE1, 200, model="stochastic", n_replicas=r, rng=0)
    assert abs(run.rewards[:, 20:].mean() - 260.4) < 3.0
