"""Benchmarks of freshcore.sharding: one Scheduler beside a ShardedScheduler with k = 2 and 4 shards.

Group ``sharding greedy m=...``: each benchmark call makes ``DECISIONS``
decisions from a warmed-up state (``1.2 m`` decisions of burn-in, not timed),
so the ratio is per decision:

* baseline: one :class:`freshcore.schedule.Scheduler` at rate ``R``
  (``run(DECISIONS)``);
* freshcore: :class:`freshcore.sharding.ShardedScheduler` with ``k`` shards
  at ``R/k`` each, ``run(DECISIONS)``, once on the calling thread
  (``threads=1``) and once with the shards on the shared pool (``threads=2``;
  ``DECISIONS/k`` decisions per shard is above ``MIN_PARALLEL_TICKS``).

Each shard's heaps cover ``m/k`` pages, so a decision is a little
cheaper even on one thread; on threads, the shards run concurrently.  Pages:
SPEC section 3's check distribution (as in bench_schedule.py), ``R = m/10``,
Greedy value, no signals.  ``extra_info`` records m, k, the threads and the
decisions per call and the value evaluations per decision (summed over the
shards).

Run (briefly, on the shared machine)::

    PYTHONPATH=src:bench python -m pytest bench/bench_sharding.py -o python_files='bench_*.py' \\
        --benchmark-min-rounds=5 --benchmark-max-time=1

``threshold`` below measures the per-shard decision count above which the
threaded run pays (``python bench/bench_sharding.py``), ``accuracy`` the
simulated accuracy of k shards beside one scheduler
(``python bench/bench_sharding.py accuracy``), and ``ratios`` the group's
ratios with the variants interleaved (``python bench/bench_sharding.py ratios``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from bench_schedule import pages_instance

import freshcore
from freshcore import sharding
from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.sharding import ShardedScheduler

from benchutil import SMOKE, role, sizes

DECISIONS = 200 if SMOKE else 40_000



_WARM: dict = {}


def warmed(m, k):
    """A scheduler (k = 0: one Scheduler) after 1.2 m decisions, cached per (m, k)."""
    if (m, k) not in _WARM:
        pages = pages_instance(m)
        s = Scheduler(pages, m / 10.0, value="greedy") if k == 0 else ShardedScheduler(
            pages, m / 10.0, k, value="greedy")
        s.run(int(1.2 * m))
        _WARM[(m, k)] = s
    return _WARM[(m, k)]


@pytest.fixture
def threads():
    old = freshcore.get_num_threads()
    yield freshcore.set_num_threads
    freshcore.set_num_threads(old)


@pytest.mark.parametrize("m", sizes(100_000))
def test_one_scheduler(benchmark, m):
    benchmark.group = f"sharding greedy m={m}"
    role(benchmark, "baseline", m=m, shards=1, threads=1, decisions_per_call=DECISIONS)
    timed(benchmark, warmed(m, 0))


def timed(benchmark, s):
    """Benchmark ``s.run(DECISIONS)``; record value evaluations per decision in extra_info."""
    calls = [0]

    def call():
        calls[0] += 1
        return s.run(DECISIONS)

    c0 = counters(s)
    benchmark(call)
    ev = counters(s) - c0
    n = max(1, calls[0])
    benchmark.extra_info["evaluations_per_decision"] = ev / (n * DECISIONS)


@pytest.mark.parametrize("m", sizes(100_000))
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_sharded(benchmark, threads, monkeypatch, m, k, n_threads):
    benchmark.group = f"sharding greedy m={m}"
    role(benchmark, "freshcore", m=m, shards=k, threads=n_threads, decisions_per_call=DECISIONS)
    threads(n_threads)
    if SMOKE:  # tiny calls: let them take the threaded path too
        monkeypatch.setattr(sharding, "MIN_PARALLEL_TICKS", 1)
    timed(benchmark, warmed(m, k))


def threshold(m=100_000, k=2, per_shard=(64, 256, 1024, 4096, 16384), repeats=31):
    """Median seconds per decision of ``run(k * n)`` on one thread and on the pool, for each ``n`` per shard.

    The two settings alternate call by call, so load from other processes
    hits both alike.
    """
    s = warmed(m, k)
    old, saved = freshcore.get_num_threads(), sharding.MIN_PARALLEL_TICKS
    rows = []
    try:
        sharding.MIN_PARALLEL_TICKS = 1
        for n in per_shard:
            ts: dict = {1: [], 2: []}
            for _ in range(repeats):
                for thr in (1, 2):
                    freshcore.set_num_threads(thr)
                    t0 = time.perf_counter()
                    s.run(k * n)
                    ts[thr].append(time.perf_counter() - t0)
            rows.append((n, float(np.median(ts[1])) / (k * n), float(np.median(ts[2])) / (k * n)))
    finally:
        freshcore.set_num_threads(old)
        sharding.MIN_PARALLEL_TICKS = saved
    return rows


def ratios(m=100_000, decisions=DECISIONS, repeats=15):
    """Median seconds per call of ``run(decisions)``: one Scheduler, then k = 2, 4 on 1 and 2 threads.

    The variants alternate call by call (the pytest groups run one after the
    other, so load from other processes can favour one of them).  Returns
    ``{(k, threads): median}``, ``(1, 1)`` the one Scheduler.
    """
    variants = [(1, 1), (2, 1), (2, 2), (4, 1), (4, 2)]
    scheds = {v: warmed(m, 0 if v[0] == 1 else v[0]) for v in variants}
    ts: dict = {v: [] for v in variants}
    work = {v: 0.0 for v in variants}
    old = freshcore.get_num_threads()
    try:
        for _ in range(repeats):
            for v in variants:
                freshcore.set_num_threads(v[1])
                c0 = counters(scheds[v])
                t0 = time.perf_counter()
                scheds[v].run(decisions)
                ts[v].append(time.perf_counter() - t0)
                work[v] += counters(scheds[v]) - c0
    finally:
        freshcore.set_num_threads(old)
    calls = repeats * decisions
    return {v: (float(np.median(t)), work[v] / calls) for v, t in ts.items()}


def counters(s):
    """Value evaluations so far, summed over the shards (the compiled state's counter)."""
    states = [x._state for x in s.schedulers] if isinstance(s, ShardedScheduler) else [s._state]
    return float(sum(x.n_evaluations for x in states))


def accuracy(ms=(200, 1000), values=("greedy", "exact"), shards=(1, 2, 4, 8), instances=3):
    """simulate() accuracy of k shards beside k = 1 on the same events (R = 100, horizon 100).

    Pages as ``pages_instance`` (seeded by the instance), events seeded by
    ``100 + instance``; returns ``{(m, value): {k: [accuracy per instance]}}``.
    """
    from freshcore.policy_simulation import simulate

    out = {}
    for m in ms:
        for value in values:
            rows: dict = {k: [] for k in shards}
            for inst in range(instances):
                rng = np.random.default_rng(inst)
                pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m), rng.beta(0.25, 0.25, m),
                                  rng.uniform(0.1, 0.6, m))
                for k in shards:
                    res = simulate(ShardedScheduler(pages, 100.0, k, value=value), pages, 100.0, rng=100 + inst)
                    rows[k].append(res.accuracy)
            out[(m, value)] = rows
    return out


if __name__ == "__main__":
    import sys

    if "ratios" in sys.argv[1:]:
        med = ratios()
        print(f"m = 100000, Greedy, {DECISIONS} decisions per call: median time per call, ratio to one "
              "Scheduler, value evaluations per decision")
        base = med[(1, 1)][0]
        for (k, thr), (t, ev) in med.items():
            print(f"  k = {k}, threads = {thr}: {t * 1e3:8.1f} ms  {t / base:6.3f}  {ev:6.1f}")
    elif "accuracy" in sys.argv[1:]:
        for (m, value), rows in accuracy().items():
            base = np.array(rows[1])
            print(f"m = {m}, {value}: mean accuracy (mean and most negative difference to k = 1 per instance)")
            for k, acc in rows.items():
                d = np.array(acc) - base
                print(f"  k = {k}: {np.mean(acc):.4f}  ({np.mean(d):+.4f}, {np.min(d):+.4f})")
    else:
        for k in (2, 4):
            print(f"k = {k}: decisions per shard, us per decision on 1 thread, on 2 threads, ratio")
            for n, one, two in threshold(k=k):
                print(f"  {n:6d}  {one * 1e6:7.3f}  {two * 1e6:7.3f}  {two / one:6.2f}")
