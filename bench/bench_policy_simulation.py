"""Benchmarks of freshcore.policy_simulation: one simulated run, vectorised versus an event-by-event loop.

Group ``simulate m=...`` (R = 100, horizon 100, so 10^4 crawls; Delta, mu ~
U[0, 1], no signals; round robin, so the policy costs next to nothing):

* baseline: the textbook discrete-event loop in pure Python -- the same
  events drawn with numpy, merged into one time-ordered stream, then one
  Python step per event (a tick crawls the policy's page, a change makes its
  page stale, a request counts a hit if its page is fresh);
* freshcore: ``simulate(RoundRobin(m, R), pages, 100)`` (and with the
  ``Scheduler(value="greedy")`` policy for scale).

Group ``simulate polled m=...`` (the same sizes, with signals: lambda ~
Beta(0.25, 0.25), nu ~ U(0.1, 0.6); every page's signal source polled on
the shared grid every 1 time unit, so 100 polls of all m pages):

* baseline: the same pure-Python loop with two more event kinds -- a signal
  sets its page's ``moved`` flag (a Python list), a poll (a numpy step, as a
  competent user would write it) takes the moved pages with
  ``np.flatnonzero``, clears the flags and hands them to the policy's
  ``signal_many`` (round robin's, which ignores them);
* freshcore: ``simulate(Scheduler(pages, R, value="greedy"), pages, 100,
  polls=1.0)`` (the polls fed as signals, ignored by Greedy's value).

``extra_info`` records m, the crawls and the events.  Run briefly::

    PYTHONPATH=src:bench python -m pytest bench/bench_policy_simulation.py -o python_files='bench_*.py' \\
        --benchmark-min-rounds=3 --benchmark-max-time=0.5

Run as a script (``PYTHONPATH=src python bench/bench_policy_simulation.py``) it times
the issue's size, m = 10^4 pages and 10^5 crawls (R = 100, horizon 1000),
with round robin, GREEDY and GREEDY-NCIS with signals, and GREEDY and GREEDY-NCIS with the signals
polled every time unit (10^7 page polls).

The simulator delivers the signals with one ``signal_many`` call per tick.  Current figures:
``bench/README.md``; how they were reached: ``bench/HISTORY.md``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

try:
    from benchutil import SMOKE, role, sizes
except ImportError:  # run as a script
    SMOKE, role, sizes = False, None, None

from freshcore.pages import PageModel
from freshcore.policies import RoundRobin
from freshcore.policy_simulation import simulate
from freshcore.schedule import Scheduler

R = 100.0
HORIZON = 100.0


def instance(m: int, signals: bool = False) -> PageModel:
    rng = np.random.default_rng(0)
    dl, mu = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    if signals:
        return PageModel(dl, mu, rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))
    return PageModel(dl, mu)


def event_loop(pages: PageModel, bandwidth: float, horizon: float, seed: int, burn_in: float = 0.2) -> float:
    """Pure-Python discrete-event simulation of round robin (the baseline)."""
    rng = np.random.default_rng(seed)
    m = len(pages)
    times, kinds, ids = [], [], []
    for kind, rates in ((1, pages.change_rate), (2, pages.importance)):
        counts = rng.poisson(rates * horizon)
        ids.append(np.repeat(np.arange(m), counts))
        times.append(horizon * rng.random(counts.sum()))
        kinds.append(np.full(counts.sum(), kind))
    n_ticks = int(np.floor(horizon * bandwidth + 1e-9))
    times.append(np.arange(1, n_ticks + 1) / bandwidth)
    kinds.append(np.zeros(n_ticks, dtype=np.int64))
    ids.append(np.zeros(n_ticks, dtype=np.int64))
    t, k, p = (np.concatenate(a) for a in (times, kinds, ids))
    order = np.lexsort((k, t))
    fresh = [True] * m
    hits = total = 0
    policy = RoundRobin(m, bandwidth)
    start = burn_in * horizon
    for tt, kk, pp in zip(t[order].tolist(), k[order].tolist(), p[order].tolist()):
        if kk == 0:
            fresh[policy.next()] = True
        elif kk == 1:
            fresh[pp] = False
        elif tt >= start:
            total += 1
            hits += fresh[pp]
    return hits / total


def polled_event_loop(pages: PageModel, bandwidth: float, horizon: float, poll_interval: float, seed: int,
                      burn_in: float = 0.2) -> float:
    """The pure-Python loop of :func:`event_loop` with signals and polls of every page on one grid (the
    polled baseline)."""
    rng = np.random.default_rng(seed)
    m = len(pages)
    times, kinds, ids = [], [], []
    for kind, rates in ((1, pages.change_rate), (2, pages.importance)):
        counts = rng.poisson(rates * horizon)
        ids.append(np.repeat(np.arange(m), counts))
        times.append(horizon * rng.random(counts.sum()))
        kinds.append(np.full(counts.sum(), kind))
    # signals: each change with probability lambda, false ones at rate nu
    true = rng.random(len(ids[0])) < pages.recall[ids[0]]
    fc = rng.poisson(pages.false_rate * horizon)
    sp = np.concatenate((ids[0][true], np.repeat(np.arange(m), fc)))
    ids.append(sp)
    times.append(np.concatenate((times[0][true], horizon * rng.random(fc.sum()))))
    kinds.append(np.full(len(sp), 3))
    n_polls = int(np.floor(horizon / poll_interval + 1e-9))
    times.append(np.arange(1, n_polls + 1) * poll_interval)
    kinds.append(np.full(n_polls, -1))  # a poll before a tick at the same time
    ids.append(np.zeros(n_polls, dtype=np.int64))
    n_ticks = int(np.floor(horizon * bandwidth + 1e-9))
    times.append(np.arange(1, n_ticks + 1) / bandwidth)
    kinds.append(np.zeros(n_ticks, dtype=np.int64))
    ids.append(np.zeros(n_ticks, dtype=np.int64))
    t, k, p = (np.concatenate(a) for a in (times, kinds, ids))
    order = np.lexsort((k, t))
    fresh = [True] * m
    moved = np.zeros(m, dtype=bool)
    hits = total = 0
    policy = RoundRobin(m, bandwidth)
    start = burn_in * horizon
    for tt, kk, pp in zip(t[order].tolist(), k[order].tolist(), p[order].tolist()):
        if kk == 0:
            fresh[policy.next()] = True
        elif kk == 1:
            fresh[pp] = False
        elif kk == 2:
            if tt >= start:
                total += 1
                hits += fresh[pp]
        elif kk == 3:
            moved[pp] = True
        else:
            seen = np.flatnonzero(moved)
            moved[:] = False
            policy.signal_many(seen, np.full(len(seen), tt))
    return hits / total


if sizes is not None:

    @pytest.mark.parametrize("m", sizes(1000, 10000, smoke=200))
    def test_event_loop(benchmark, m):
        benchmark.group = f"simulate m={m}"
        pages = instance(m)
        role(benchmark, "baseline", m=m, crawls=int(R * HORIZON))
        benchmark(event_loop, pages, R, HORIZON, 0)

    @pytest.mark.parametrize("policy", ["round robin", "greedy"])
    @pytest.mark.parametrize("m", sizes(1000, 10000, smoke=200))
    def test_simulate(benchmark, m, policy):
        benchmark.group = f"simulate m={m}"
        pages = instance(m)

        def run():
            pol = RoundRobin(m, R) if policy == "round robin" else Scheduler(pages, R, value="greedy")
            return simulate(pol, pages, HORIZON, rng=0)

        res = run()
        role(benchmark, "freshcore", m=m, crawls=len(res.crawl_pages),
             events=int(res.change_counts.sum() + res.request_counts.sum()))
        benchmark(run)

    @pytest.mark.parametrize("m", sizes(1000, 10000, smoke=200))
    def test_polled_event_loop(benchmark, m):
        benchmark.group = f"simulate polled m={m}"
        pages = instance(m, signals=True)
        role(benchmark, "baseline", m=m, crawls=int(R * HORIZON), polls=int(HORIZON) * m)
        benchmark(polled_event_loop, pages, R, HORIZON, 1.0, 0)

    @pytest.mark.parametrize("m", sizes(1000, 10000, smoke=200))
    def test_simulate_polled(benchmark, m):
        benchmark.group = f"simulate polled m={m}"
        pages = instance(m, signals=True)

        def run():
            return simulate(Scheduler(pages, R, value="greedy"), pages, HORIZON, rng=0, polls=1.0)

        res = run()
        role(benchmark, "freshcore", m=m, crawls=len(res.crawl_pages), polls=res.n_polls,
             events=int(res.change_counts.sum() + res.request_counts.sum()) + res.n_signals)
        benchmark(run)


def main() -> None:
    m, horizon = 10_000, 1000.0
    for name, signals, make, polls in (
        ("round robin", False, lambda p: RoundRobin(m, R), None),
        ("GREEDY", False, lambda p: Scheduler(p, R, value="greedy"), None),
        ("GREEDY-NCIS, signals", True, lambda p: Scheduler(p, R, value="exact"), None),
        ("GREEDY, signals polled every 1", True, lambda p: Scheduler(p, R, value="greedy"), 1.0),
        ("GREEDY-NCIS fed the polls every 1", True, lambda p: Scheduler(p, R, value="exact"), 1.0),
    ):
        pages = instance(m, signals)
        t0 = time.perf_counter()
        res = simulate(make(pages), pages, horizon, rng=0, polls=polls)
        dt = time.perf_counter() - t0
        events = int(res.change_counts.sum() + res.request_counts.sum()) + res.n_signals
        print(f"m = {m}, {len(res.crawl_pages)} crawls, {events} events, {res.n_polls} page polls, {name}: "
              f"{dt:.2f} s (accuracy {res.accuracy:.4f} ± {res.accuracy_se:.4f})")


if __name__ == "__main__":
    main()
