"""Shared pieces of the freshcore benchmarks.

Conventions
-----------
* Every file is ``bench/bench_<area>.py`` and uses pytest-benchmark groups.
  Each group holds the plain numpy / pure-Python baseline beside the compiled
  path; the baseline's ``extra_info["role"]`` is ``"baseline"``, the others
  ``"freshcore"`` (use the ``role`` helper below).
* After a timed run, the terminal summary prints, per group, each
  benchmark's median over the baseline's median: the ratio is what we quote
  (machines are shared and noisy; absolute times are not comparable).
* ``FRESHCORE_BENCH_SMOKE=1`` (set by CI together with ``--benchmark-disable``)
  shrinks every size so the whole directory runs once in seconds: the
  benchmarks cannot rot, but CI measures nothing.
"""

from __future__ import annotations

import os


SMOKE = os.environ.get("FRESHCORE_BENCH_SMOKE", "") not in ("", "0")


def sizes(*full: int, smoke: int = 1000) -> list[int]:
    """Problem sizes to parametrize over: ``full`` normally, ``[smoke]`` in smoke mode."""
    return [smoke] if SMOKE else list(full)


def role(benchmark, name: str, **info) -> None:
    """Tag a benchmark as ``"baseline"`` or ``"freshcore"`` and record sizes in extra_info."""
    benchmark.extra_info["role"] = name
    benchmark.extra_info.update(info)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    session = getattr(config, "_benchmarksession", None)
    if session is None or getattr(session, "disabled", True):
        return
    groups: dict = {}
    for bench in session.benchmarks:
        if not getattr(bench, "stats", None):
            continue
        groups.setdefault(bench.group, []).append(bench)
    if not groups:
        return
    tr = terminalreporter
    tr.section("freshcore: ratios to the baseline (median time / baseline median time)")
    for group, benches in sorted(groups.items(), key=lambda kv: str(kv[0])):
        base = [b for b in benches if b.extra_info.get("role") == "baseline"]
        if not base:
            tr.write_line(f"{group}: no baseline in this group")
            continue
        b0 = base[0].stats.median
        tr.write_line(f"{group}:")
        for b in benches:
            r = b.stats.median / b0
            speed = f"{1 / r:8.2f}x faster" if r > 0 else ""
            tr.write_line(f"    {b.name:<60s} ratio {r:9.4f}  ({speed})")
