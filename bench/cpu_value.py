"""One-thread CPU time of exact V and of optimal_thresholds (issue 3), steadier than wall time on a shared machine.

``value N``: ``bench_value.value_numpy`` (numpy + ``scipy.special.gammainc``)
against ``crawl_value(..., value="exact")`` on ``bench_value.pages_instance(N)``, both
timed with ``time.process_time`` (best of 3 / best of 6, interleaved).  ``thresholds N``:
wall and CPU time of ``optimal_thresholds(pages, N/10)`` on the same pages.

Run (as bench/HISTORY.md quotes it)::

    FRESHCORE_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src:bench python bench/cpu_value.py value 1000000
    FRESHCORE_NUM_THREADS=1 PYTHONPATH=src:bench python bench/cpu_value.py thresholds 100000
"""

from __future__ import annotations

import sys
import time

from bench_value import pages_instance, value_numpy

from freshcore.thresholds import optimal_thresholds
from freshcore.value import crawl_value


def cpu(f, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        c = time.process_time()
        f()
        best = min(best, time.process_time() - c)
    return best


def main(argv: list[str]) -> None:
    what, n = argv[0], int(argv[1])
    pages, tau = pages_instance(n)
    if what == "value":
        # interleaved (baseline, then freshcore twice, three rounds): a slow spell of the shared host
        # hits both sides rather than one
        tb = tf = float("inf")
        for _ in range(3):
            tb = min(tb, cpu(lambda: value_numpy(tau, pages), 1))
            tf = min(tf, cpu(lambda: crawl_value(tau, pages), 2))
        print(f"n={n} CPU seconds (best of 3 / 6, interleaved): numpy+gammainc {tb:.3f}, freshcore {tf:.4f}, "
              f"ratio {tb / tf:.2f}")
    elif what == "thresholds":
        t, c0 = time.perf_counter(), time.process_time()
        res = optimal_thresholds(pages, n / 10)
        dt, dc = time.perf_counter() - t, time.process_time() - c0
        print(f"n={n} optimal_thresholds {dt:.2f} s (cpu {dc:.2f} s)  sum f / R - 1 = "
              f"{res.frequencies.sum() / (n / 10) - 1:.1e}")
    else:
        raise SystemExit("usage: cpu_value.py value|thresholds N")


if __name__ == "__main__":
    main(sys.argv[1:])
