"""How the scheduler's cost per decision grows with the number of pages (issue 4).

For each m, a :class:`freshcore.schedule.Scheduler` over SPEC section 3's
check distribution (Delta, mu ~ U[0, 1], lambda ~ Beta(0.25, 0.25),
nu ~ U(0.1, 0.6)) at R = m/10, with initial crawl times staggered uniformly
over each page's interval at the signal-blind periodic optimum
(``last_crawl = -U(0, 1) / f_i``, ``f_i`` from ``optimal_rates(model="periodic")``;
one round-robin cycle ``m/R`` for pages it never crawls): a state like one
reached after the crawler has run a while (every page starting at 0 makes
the first ticks evaluate most pages, see ``freshcore._schedule``).  After
``burn-in`` decisions (not timed), ``decisions`` more are timed with
``perf_counter``.  Beside it, a numpy brute-force argmax per tick (``crawl_value``
of every page, ``np.argmax``) is timed over a few ticks from the same state;
the ratio of the two per-decision times is reported, as are the value
evaluations per decision and the scheduler's bytes per page (the ``nbytes``
of every array the compiled state holds, page parameters included).

Run::

    PYTHONPATH=src python bench/scale_schedule.py --sizes 10000 100000 1000000 10000000 --values greedy exact
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_schedule import pages_instance

from freshcore.rates import optimal_rates
from freshcore.schedule import Scheduler
from freshcore.value import crawl_value


def state_bytes(s: Scheduler) -> int:
    """Bytes held by the scheduler's compiled state (``SchedulerState.nbytes``: per-slot arrays, heaps, tables)."""
    return int(s._state.nbytes())


def brute_force_per_tick(s: Scheduler, ticks: int) -> float:
    pages, value = s.pages, s.value
    last = s.last_crawl.copy()
    t, dt = s.time, 1.0 / s.bandwidth
    t0 = time.perf_counter()
    for _ in range(ticks):
        t += dt
        best = int(np.argmax(crawl_value(t - last, pages, value)))
        last[best] = t
    return (time.perf_counter() - t0) / ticks


def measure(m: int, value: str, decisions: int, burn_in: int, seed: int = 0) -> dict:
    pages = pages_instance(m)  # bench_schedule's pages, seed 0
    rate = m / 10.0
    rng = np.random.default_rng(seed + 1)
    # each page at a uniform phase of its periodic-optimum interval (never-crawled pages: one cycle m/R)
    f = optimal_rates(pages.change_rate, pages.importance, rate, model="periodic")
    interval = np.where(f > 0, 1.0 / np.where(f > 0, f, 1.0), m / rate)
    last = -rng.uniform(0.0, 1.0, m) * interval
    t0 = time.perf_counter()
    s = Scheduler(pages, rate, value=value, last_crawl=last)
    s.run(1)
    build = time.perf_counter() - t0
    s.run(burn_in)
    e0 = s._state.n_evaluations
    t0 = time.perf_counter()
    s.run(decisions)
    per = (time.perf_counter() - t0) / decisions
    evals = (s._state.n_evaluations - e0) / decisions
    bf_ticks = max(2, min(50, int(2e7 // m)))
    bf = brute_force_per_tick(s, bf_ticks)
    return dict(m=m, value=value, build_s=build, us_per_decision=per * 1e6, decisions_per_s=1.0 / per,
                evals_per_decision=evals, brute_us=bf * 1e6, ratio=bf / per,
                bytes_per_page=state_bytes(s) / m)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--values", nargs="+", default=["greedy", "exact"])
    ap.add_argument("--decisions", type=int, default=200_000)
    ap.add_argument("--burn-in", type=int, default=100_000)
    a = ap.parse_args(argv)
    print(f"{'value':>7} {'m':>9} {'build s':>8} {'us/dec':>8} {'dec/s':>10} {'evals/dec':>9} "
          f"{'brute us':>10} {'speed-up':>9} {'B/page':>7}")
    for value in a.values:
        for m in a.sizes:
            r = measure(m, value, a.decisions, a.burn_in)
            print(f"{r['value']:>7} {r['m']:>9} {r['build_s']:8.2f} {r['us_per_decision']:8.2f} "
                  f"{r['decisions_per_s']:10.0f} {r['evals_per_decision']:9.2f} "
                  f"{r['brute_us']:10.0f} {r['ratio']:9.0f} {r['bytes_per_page']:7.1f}", flush=True)


if __name__ == "__main__":
    main()
