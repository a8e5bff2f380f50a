"""How the scheduler's cost per decision grows with the number of pages (issue 4).

For each m, a :class:`freshcore.schedule.Scheduler` over SPEC section 3's
check distribution (Delta, mu ~ U[0, 1], lambda ~ Beta(0.25, 0.25),
nu ~ U(0.1, 0.6)) at R = m/10, with initial crawl times staggered uniformly
over each page's interval at the signal-blind periodic optimum
(``last_crawl = -U(0, 1) / f_i``, ``f_i`` from ``optimal_rates(model="periodic")``;
one round-robin cycle ``m/R`` for pages it never crawls): a state like one
reached after the crawler has run a while (``cold_start.py`` measures the
starts, every page at 0 included).  After
``burn-in`` decisions (not timed), ``decisions`` more are timed with
``perf_counter``.  Beside it, a numpy brute-force argmax per tick (``crawl_value``
of every page, ``np.argmax``) is timed over a few ticks from the same state;
the ratio of the two per-decision times is reported, as are the value
evaluations per decision and the scheduler's bytes per page (the ``nbytes``
of every array the compiled state holds, page parameters included).

With ``--until T``, instead: one run per size and value from the same start to time T, every chunk of
``--chunk`` decisions reported (microseconds and evaluations per decision, and the process's CPU time per
decision, which a shared machine's load inflates less): the trend of a long run, with no window to choose.  With
``--signals`` as well, SPEC section 3's signals are delivered on the way (page i
signals at rate ``gamma_i = lambda_i Delta_i + nu_i``, ~6 a tick here): each chunk's are drawn before it
(not timed) and passed to ``Scheduler.run(chunk, signals=...)``, so the time is the scheduler's, signals
included; with ``--per-tick`` too, they are delivered the way a caller without it would, one
``signal_many`` and one ``next`` a tick.

Run::

    PYTHONPATH=src python bench/scale_schedule.py --sizes 10000 100000 1000000 10000000 --values greedy exact
    PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python bench/scale_schedule.py --sizes 1000000 --values exact \
        --until 60 --chunk 500000
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


def staggered(m: int, seed: int = 0):
    """bench_schedule's pages (seed 0), R = m/10, and each page's last crawl at a uniform phase of its
    periodic-optimum interval (never-crawled pages: one cycle m/R)."""
    pages = pages_instance(m)
    rate = m / 10.0
    rng = np.random.default_rng(seed + 1)
    f = optimal_rates(pages.change_rate, pages.importance, rate, model="periodic")
    interval = np.where(f > 0, 1.0 / np.where(f > 0, f, 1.0), m / rate)
    return pages, rate, -rng.uniform(0.0, 1.0, m) * interval


def per_tick(s: Scheduler, n: int, sig: tuple[np.ndarray, np.ndarray]) -> None:
    """What a caller without ``run(n, signals=...)`` writes: per tick, ``signal_many`` of the signals up to its
    time, then ``next``; the rest after."""
    pages, times = sig
    cut = np.searchsorted(times, s.time + np.arange(1, n + 1) / s.bandwidth, side="right")
    a = 0
    for k in range(n):
        b = cut[k]
        if b > a:
            s.signal_many(pages[a:b], times[a:b])
            a = b
        s.next()
    if a < len(pages):
        s.signal_many(pages[a:], times[a:])


def trend(m: int, value: str, until: float, chunk: int, signals: bool = False, loop: bool = False) -> None:
    """Print microseconds and evaluations per decision of every chunk of a run from the staggered start to time
    ``until`` (with SPEC section 3's signals delivered on the way if ``signals``: by ``run(n, signals=...)``, or
    one tick at a time from Python if ``loop``)."""
    pages, rate, last = staggered(m)
    s = Scheduler(pages, rate, value=value, last_crawl=last)
    s.run(1)
    cum = np.cumsum(pages.gamma)
    rng = np.random.default_rng(7)
    while s.time < until:
        sig = None
        if signals:  # the chunk's signals: Poisson(sum gamma) in time, each page with probability gamma_i/sum
            c = rng.poisson(cum[-1] * chunk / rate)
            sig = (np.searchsorted(cum, rng.uniform(0.0, cum[-1], c), side="right").astype(np.intp),
                   np.sort(s.time + rng.uniform(0.0, chunk / rate, c)))
        e0 = s._state.n_evaluations
        t0, c0 = time.perf_counter(), time.process_time()
        if loop and sig is not None:
            per_tick(s, chunk, sig)
        else:
            s.run(chunk, signals=sig)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        print(f"{value:>7} {m:>9} t={s.time:8.2f} {dt / chunk * 1e6:8.2f} us/dec ({dc / chunk * 1e6:.2f} CPU) "
              f"{(s._state.n_evaluations - e0) / chunk:7.2f} evals/dec"
              + (f" {len(sig[0]) / chunk:5.2f} signals/dec" if sig is not None else ""), flush=True)


def measure(m: int, value: str, decisions: int, burn_in: int, seed: int = 0) -> dict:
    pages, rate, last = staggered(m, seed)
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
    ap.add_argument("--until", type=float, default=None, help="report every chunk of one run to this time")
    ap.add_argument("--chunk", type=int, default=500_000)
    ap.add_argument("--signals", action="store_true", help="with --until: deliver SPEC section 3's signals")
    ap.add_argument("--per-tick", action="store_true",
                    help="with --signals: deliver them one tick at a time from Python (signal_many, next)")
    a = ap.parse_args(argv)
    if a.until is not None:
        for value in a.values:
            for m in a.sizes:
                trend(m, value, a.until, a.chunk, a.signals, a.per_tick)
        return
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
