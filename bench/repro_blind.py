"""Reproduce the blind-sampling experiments of Li, Cline and Loguinov (2017) (SPEC section 6): Table I (M4 and
M5 at T = 1e2 .. 1e6), E[D3] and E[D4], Fig. 4 (M1's retained fraction), Fig. 15 (M6) and Fig. 8 (F_U and μ
recovered by finite differences); and, beyond the paper, crawl plans from the recovered G_U against the Poisson
plan.

The experiments are ``freshcore.reproduce.blind`` (``freshcore reproduce blind`` prints the same tables; the
tests run the quick form).  Run: ``PYTHONPATH=src python bench/repro_blind.py [--quick]`` (full: about a
minute).
"""

from __future__ import annotations

import sys
import time

from freshcore.reproduce import blind

if __name__ == "__main__":
    t0 = time.perf_counter()
    for table in blind.run(quick="--quick" in sys.argv[1:]):
        print(table.text(), end="\n\n", flush=True)
    print(f"({time.perf_counter() - t0:.1f} s)")
