"""Helpers of the freshcore benchmarks (``from benchutil import SMOKE, role, sizes``).

Conventions
-----------
* Every file is ``bench/bench_<area>.py`` and uses pytest-benchmark groups.
  Each group holds the plain numpy / pure-Python baseline beside the compiled
  path; the baseline's ``extra_info["role"]`` is ``"baseline"``, the others
  ``"freshcore"`` (use :func:`role`).
* After a timed run, the terminal summary (``bench/conftest.py``) prints, per
  group, each benchmark's median over the baseline's median: the ratio is what
  we quote (machines are shared and noisy; absolute times are not comparable).
* ``FRESHCORE_BENCH_SMOKE=1`` (set by CI together with ``--benchmark-disable``)
  shrinks every size so the whole directory runs once in seconds: the
  benchmarks cannot rot, but CI measures nothing.
"""

from __future__ import annotations

import os
from typing import Any

SMOKE = os.environ.get("FRESHCORE_BENCH_SMOKE", "") not in ("", "0")


def sizes(*full: int, smoke: int = 1000) -> list[int]:
    """Problem sizes to parametrize over: ``full`` normally, ``[smoke]`` in smoke mode."""
    return [smoke] if SMOKE else list(full)


def role(benchmark: Any, name: str, **info: Any) -> None:
    """Tag a benchmark as ``"baseline"`` or ``"freshcore"`` and record sizes in extra_info."""
    benchmark.extra_info["role"] = name
    benchmark.extra_info.update(info)
