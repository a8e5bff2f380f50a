"""Reproduce Fig. 2 and Appendix B of Busa-Fekete et al. (2025): GREEDY and LDS against the continuous optimum,
no signals (SPEC section 4).

The experiment is ``freshcore.reproduce.scheduler`` (``freshcore reproduce scheduler`` prints the same tables;
the tests run its quick form).  Run: ``PYTHONPATH=src python bench/repro_fig2.py [horizon]`` (default 1000).
"""

from __future__ import annotations

import sys
import time

from freshcore.reproduce import scheduler

if __name__ == "__main__":
    t0 = time.perf_counter()
    for table in scheduler.run(horizon=float(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(table.text())
    print(f"({time.perf_counter() - t0:.1f} s)")
