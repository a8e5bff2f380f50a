"""Benchmarks of freshcore.schedule: decisions per second of the exact scheduler.

Group ``schedule <value> m=...`` (value "greedy" and "exact"): each benchmark
call makes ``TICKS`` decisions from a warmed-up state (every page crawled
about once: ``1.2 m`` ticks of burn-in, not timed), so the ratio is per
decision:

* baseline: numpy brute force per tick -- ``tau_eff`` of every page,
  ``freshcore.value.crawl_value`` over all pages (the compiled V: a generous
  baseline), ``np.argmax``, crawl the winner;
* freshcore: ``Scheduler.run(TICKS)``.

``extra_info`` records m, the decisions per call and, for the scheduler, the
mean number of value evaluations per decision in the timed calls, and the
amortised decisions per second over the last m/5 decisions of the burn-in.  Pages: SPEC section 3's check
distribution (Delta, mu ~ U[0, 1],
lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6), seed 0), rate R = m/10.  No
signals (the decision cost is what is measured here).

Group ``schedule memory m=...`` (m = 1e5 and 1e6, Greedy): the scheduler's
construction plus its first decision (every page evaluated once) beside the
brute-force baseline's first decision; ``extra_info`` records the state's
bytes per page (``SchedulerState.nbytes()``: its per-page arrays at capacity
plus the bucket heaps, after the first decision) and the bytes per page that
``tracemalloc`` saw allocated (and its peak) while constructing the
``Scheduler`` (the heaps are C ``malloc`` memory, filled at the first
decision, which tracemalloc does not see).  Issue 4's target is
<= 64 bytes per page.

Run (briefly, on the shared machine)::

    PYTHONPATH=src:bench python -m pytest bench/bench_schedule.py -o python_files='bench_*.py' \\
        --benchmark-min-rounds=3 --benchmark-max-time=0.5
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np
import pytest

from freshcore.pages import PageModel
from freshcore.schedule import Scheduler
from freshcore.value import crawl_value

from benchutil import SMOKE, role, sizes

TICKS = 20


def pages_instance(n):
    rng = np.random.default_rng(0)
    dl, mu = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    lam, nu = rng.beta(0.25, 0.25, n), rng.uniform(0.1, 0.6, n)
    return PageModel(dl, mu, lam, nu)


_WARM: dict = {}


def warmed(m, value):
    """A scheduler after 1.2 m ticks (cached), and its amortised seconds per decision over the last m/5.

    The timed calls are short; the amortised figure (``perf_counter`` over
    m/5 consecutive decisions) is recorded beside their median.
    """
    key = (m, value)
    if key not in _WARM:
        s = Scheduler(pages_instance(m), m / 10.0, value=value)
        n = m // 5 if not SMOKE else 10
        s.run(5 * n)
        t0 = time.perf_counter()
        s.run(n)
        _WARM[key] = (s, (time.perf_counter() - t0) / n)
    return _WARM[key]


class BruteForce:
    """Brute-force argmax per tick, started from the scheduler's state."""

    def __init__(self, sched):
        self.pages, self.value = sched.pages, sched.value
        self.last = sched.last_crawl
        self.t, self.dt = sched.time, 1.0 / sched.bandwidth

    def run(self, n):
        out = np.empty(n, dtype=np.int64)
        for k in range(n):
            self.t += self.dt
            best = int(np.argmax(crawl_value(self.t - self.last, self.pages, self.value)))
            self.last[best] = self.t
            out[k] = best
        return out


@pytest.mark.parametrize("m", sizes(10_000, 100_000))
@pytest.mark.parametrize("value", ["greedy", "exact"])
def test_brute_force(benchmark, value, m):
    benchmark.group = f"schedule {value} m={m}"
    role(benchmark, "baseline", m=m, decisions_per_call=TICKS)
    ref = BruteForce(warmed(m, value)[0])
    benchmark(ref.run, TICKS)


@pytest.mark.parametrize("m", sizes(10_000, 100_000))
@pytest.mark.parametrize("value", ["greedy", "exact"])
def test_scheduler(benchmark, value, m):
    benchmark.group = f"schedule {value} m={m}"
    s, amortised = warmed(m, value)
    role(benchmark, "freshcore", m=m, decisions_per_call=TICKS, amortised_decisions_per_s=1.0 / amortised)
    state = s._state
    e0, d0 = state.n_evaluations, s.time
    benchmark(s.run, TICKS)
    decisions = round((s.time - d0) * s.bandwidth)
    benchmark.extra_info["evaluations_per_decision"] = (state.n_evaluations - e0) / max(decisions, 1)


def memory_figures(m):
    """(state bytes per page after the first decision, traced bytes per page of construction, traced peak)."""
    pages = pages_instance(m)
    tracemalloc.start()
    try:
        s = Scheduler(pages, m / 10.0, value="greedy")
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    s.next()
    return s._state.nbytes() / m, current / m, peak / m


@pytest.mark.parametrize("m", sizes(100_000, 1_000_000))
def test_memory_brute_force(benchmark, m):
    benchmark.group = f"schedule memory m={m}"
    role(benchmark, "baseline", m=m)
    pages = pages_instance(m)
    last = np.zeros(m)
    benchmark(lambda: int(np.argmax(crawl_value(1.0 / (m / 10.0) - last, pages, "greedy"))))


@pytest.mark.parametrize("m", sizes(100_000, 1_000_000))
def test_memory_scheduler(benchmark, m):
    benchmark.group = f"schedule memory m={m}"
    state, traced, peak = memory_figures(m)
    role(benchmark, "freshcore", m=m, state_bytes_per_page=state, traced_construction_bytes_per_page=traced,
         traced_construction_peak_bytes_per_page=peak)
    pages = pages_instance(m)
    benchmark(lambda: Scheduler(pages, m / 10.0, value="greedy").next())


@pytest.mark.skipif(not SMOKE, reason="the scripts' own figures come from running them (bench/README.md)")
def test_scripts_run(capsys):
    # the command-line measurements (cold_start.py, scale_schedule.py, scheduler_memory.py) at tiny sizes, so that
    # they cannot rot
    import cold_start
    import scale_schedule
    import scheduler_memory

    cold_start.main(["--pages", "2000", "--decisions", "50", "--warm", "200"])
    scale_schedule.main(["--sizes", "2000", "--decisions", "100", "--burn-in", "100"])
    scale_schedule.main(["--sizes", "2000", "--values", "exact", "--until", "0.2", "--chunk", "20"])
    scale_schedule.main(["--sizes", "2000", "--values", "exact", "--until", "0.2", "--chunk", "20", "--signals"])
    scale_schedule.main(["--sizes", "2000", "--values", "exact", "--until", "0.2", "--chunk", "20", "--signals",
                         "--per-tick"])
    scheduler_memory.main(3000)
    out = capsys.readouterr().out
    assert out.count("greedy") >= 4 and out.count("exact") >= 4 and "signals/dec" in out and "B/page" in out
