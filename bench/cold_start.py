"""What a scheduler's first decisions cost, against its steady state and a brute-force tick (issue 16).

For each value kind and start, a :class:`freshcore.schedule.Scheduler` over ``bench_schedule.pages_instance(m)``
(SPEC section 3's check pages) at R = m/10, one thread, in one process:

- ``start``: the initial crawl times: ``zero`` (the default: every page crawled at time 0), ``staggered``
  (``last_crawl = -U(0, m/R)``), ``clumps`` (four equal groups crawled at 0, -m/(4R), -m/(2R), -3m/(4R)) or
  ``phased`` (each page at a uniform phase of its periodic-optimum interval: ``scale_schedule.py``'s start);
- ``cold``: construction plus the first ``decisions`` decisions (the first tick builds the buckets), the
  first through ``next()`` and the others through ``run()``, as ``steady`` is timed;
- ``cold next``: the same, on a second scheduler in the same process, every decision through ``next()``
  and timed alone (how this script measured ``cold`` before: each decision then also pays a Python call
  and two timer reads, ~0.5 us, 5 ms over 10^4 decisions); ``next/steady`` is ``cold next/steady next``
  (both phases through ``next()``);
- ``worst``: the costliest of those decisions after the first;
- ``steady``: ``decisions`` decisions timed after ``warm`` more (t = warm/R; 3e6 at m = 1e6 is t = 30), in
  the same process, through ``run()``; ``steady next``: as many more, through ``next()``;
- ``worst run``: the costliest decision after the first of the whole run (the warm ones too, each timed
  alone), and ``falls``: how many times over the run the winning value fell below the park level, which
  evaluates every parked page (the costliest decisions of a long run); ``worst run cpu``: the costliest warm
  decision on the thread's CPU clock (``time.thread_time``), against the brute-force tick's CPU time: on a
  shared machine a wall-clock spike can be the thread waiting for a core;
- ``brute``: one brute-force tick, the compiled ``crawl_value`` of every page and ``np.argmax``, from the
  same state (the median of three, wall and CPU).

The figures are ``cold/steady`` (the issue's target: at most 20; ``next/steady`` the same with the cold phase
through ``next()``) and ``worst/brute``, ``worst run/brute`` and ``worst run cpu/brute`` (at most 1), with the
value evaluations per decision of each phase.  Every decision of a run is made; none is skipped or chosen.

Run::

    PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python bench/cold_start.py --pages 1000000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from bench_schedule import pages_instance
from scale_schedule import staggered

from freshcore.schedule import Scheduler
from freshcore.value import crawl_value


def initial_crawls(start: str, m: int, rate: float) -> np.ndarray | None:
    if start == "zero":
        return None
    if start == "staggered":
        return -np.random.default_rng(1).uniform(0.0, m / rate, m)
    if start == "phased":
        return staggered(m)[2]
    return -(np.arange(m) % 4) * (m / rate / 4.0)  # clumps


def brute_tick(s: Scheduler) -> tuple[float, float]:
    pages, value, last = s.pages, s.value, s.last_crawl
    t = s.time + 1.0 / s.bandwidth
    times, cpu = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        c0 = time.thread_time()
        np.argmax(crawl_value(t - last, pages, value))
        cpu.append(time.thread_time() - c0)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), float(np.median(cpu))


def measure(m: int, value: str, start: str, decisions: int, warm: int) -> dict:
    pages = pages_instance(m)
    rate = m / 10.0
    last = initial_crawls(start, m, rate)
    # cold, through run() as the steady phase: construction, the first decision (which builds the buckets), then
    # run(decisions - 1); the first scheduler of the process (fresh memory)
    t0 = time.perf_counter()
    s = Scheduler(pages, rate, value=value, last_crawl=last)
    s.next()
    build = time.perf_counter() - t0
    e0 = s._state.n_evaluations
    s.run(decisions - 1)
    cold = time.perf_counter() - t0
    cold_evals = (s._state.n_evaluations - e0) / (decisions - 1)
    # the same cold phase through next(), each decision timed alone (the costliest one; the sum includes a
    # Python call and two timer reads a decision), on a second scheduler (the first one kept: its memory is
    # not reused)
    t0 = time.perf_counter()
    c = Scheduler(pages, rate, value=value, last_crawl=last)
    c.next()
    worst = 0.0
    for _ in range(decisions - 1):
        t1 = time.perf_counter()
        c.next()
        worst = max(worst, time.perf_counter() - t1)
    cold_next = time.perf_counter() - t0
    del c
    # the warm decisions (not a timed phase): each timed alone on the wall clock and on the thread's CPU clock
    # (a wall-clock spike on a shared machine can be the thread waiting for a core, not work)
    worst_run = worst
    worst_cpu = 0.0
    for _ in range(warm):
        t1 = time.perf_counter()
        c1 = time.thread_time()
        s.next()
        worst_cpu = max(worst_cpu, time.thread_time() - c1)
        worst_run = max(worst_run, time.perf_counter() - t1)
    e1 = s._state.n_evaluations
    t1 = time.perf_counter()
    s.run(decisions)
    steady = time.perf_counter() - t1
    steady_evals = (s._state.n_evaluations - e1) / decisions
    t1 = time.perf_counter()
    for _ in range(decisions):
        s.next()
    steady_next = time.perf_counter() - t1
    falls = s._state.n_unparks
    brute, brute_cpu = brute_tick(s)
    return dict(value=value, start=start, build_s=build, cold_s=cold, steady_s=steady, ratio=cold / steady,
                cold_next_s=cold_next, steady_next_s=steady_next, next_ratio=cold_next / steady_next,
                worst_ms=worst * 1e3, brute_ms=brute * 1e3, worst_over_brute=worst / brute,
                worst_run_over_brute=worst_run / brute, worst_cpu_over_brute=worst_cpu / brute_cpu, falls=falls,
                cold_evals=cold_evals, steady_evals=steady_evals)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=1_000_000)
    ap.add_argument("--values", nargs="+", default=["greedy", "exact"])
    ap.add_argument("--starts", nargs="+", default=["zero", "staggered", "clumps", "phased"])
    ap.add_argument("--decisions", type=int, default=10_000)
    ap.add_argument("--warm", type=int, default=None, help="decisions before the steady ones (default 3 m)")
    args = ap.parse_args(argv)
    warm = 3 * args.pages if args.warm is None else args.warm
    print(f"m = {args.pages}, R = m/10, {args.decisions} decisions cold and steady (after {warm}), one process each")
    print(f"{'value':7} {'start':10} {'build s':>8} {'cold s':>8} {'steady s':>9} {'cold/steady':>11} "
          f"{'cold next s':>11} {'steady next s':>13} {'next/steady':>11} "
          f"{'worst ms':>9} {'brute ms':>9} {'worst/brute':>11} {'evals cold':>10} {'evals steady':>12} "
          f"{'falls':>5} {'worst run/brute':>15} {'worst run cpu/brute':>19}")
    for value in args.values:
        for start in args.starts:
            r = measure(args.pages, value, start, args.decisions, warm)
            print(f"{r['value']:7} {r['start']:10} {r['build_s']:8.3f} {r['cold_s']:8.3f} {r['steady_s']:9.4f} "
                  f"{r['ratio']:11.1f} {r['cold_next_s']:11.3f} {r['steady_next_s']:13.4f} {r['next_ratio']:11.1f} "
                  f"{r['worst_ms']:9.3f} {r['brute_ms']:9.2f} {r['worst_over_brute']:11.3f} "
                  f"{r['cold_evals']:10.1f} {r['steady_evals']:12.1f} {r['falls']:5d} "
                  f"{r['worst_run_over_brute']:15.2f} {r['worst_cpu_over_brute']:19.2f}", flush=True)


if __name__ == "__main__":
    main()
