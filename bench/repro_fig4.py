"""Reproduce Fig. 4 of Busa-Fekete et al. (2025): the scheduler with change signals (SPEC section 4).

The experiment is ``freshcore.reproduce.signals`` (``freshcore reproduce signals`` prints the same tables; the
tests run its quick form).  Run: ``PYTHONPATH=src python bench/repro_fig4.py [horizon]`` (default 100).
"""

from __future__ import annotations

import sys
import time

from freshcore.reproduce import signals

if __name__ == "__main__":
    t0 = time.perf_counter()
    for table in signals.run(horizon=float(sys.argv[1]) if len(sys.argv) > 1 else None):
        print(table.text())
    print(f"({time.perf_counter() - t0:.1f} s)")
