"""pytest hooks of the freshcore benchmarks: the ratio of each benchmark to its group's baseline.

The helpers the benchmark files share are in ``benchutil.py``.
"""

from __future__ import annotations


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
