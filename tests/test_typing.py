"""A user's script over the public API type-checks under ``mypy --strict`` (the package ships ``py.typed``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

USER_SCRIPT = textwrap.dedent(
    '''
    """What a crawler engineer writes against freshcore, annotated as a strict code base would be."""
    from __future__ import annotations

    import numpy as np
    import numpy.typing as npt

    import freshcore as fc

    changed, intervals = fc.simulate_crawls(np.full(100, 2.0), 3.0, 50, rng=0)
    estimates: np.ndarray = fc.estimate_rates(changed, intervals, crawl_rate=3.0, method="sam")
    online = fc.SAMEstimator(crawl_rate=3.0).update(1).update(0)
    estimate: float = online.rate
    batch = fc.LLNBatch(100, crawl_rate=3.0).update(changed[:, 0])
    batch_rates: np.ndarray = batch.rates

    change_rate = np.array([0.5, 2.0, 8.0])
    importance = np.array([1.0, 3.0, 1.0])
    crawl_rate: np.ndarray = fc.optimal_rates(change_rate, importance, 4.0)
    details: fc.RatesResult = fc.optimal_rates(change_rate, importance, 4.0, return_details=True)
    total: float = fc.freshness(crawl_rate, change_rate, importance)
    each: np.ndarray = fc.freshness(crawl_rate, change_rate, importance, per_page=True)
    w: float = fc.lambertw(1.0)
    ws: npt.NDArray[np.float64] = fc.lambertw(np.array([1.0, 2.0]))

    pages = fc.PageModel(change_rate, importance, recall=[0.0, 0.5, 0.9], false_rate=0.2)
    values: np.ndarray = fc.crawl_value(np.array([0.5, 0.5, 0.5]), pages, value="exact")
    plan: fc.ThresholdsResult = fc.optimal_thresholds(pages, 4.0)
    accuracy: float = plan.accuracy

    sched = fc.Scheduler(pages, 4.0, value="greedy")
    first: int = sched.next()
    more: np.ndarray = sched.run(8)
    counted: bool = sched.signal(0, sched.time)
    new_ids: np.ndarray = sched.add_pages(fc.PageModel([1.0], [2.0]))
    sched.remove_pages([1]).update_pages([0], fc.PageModel([1.5], [3.0]))
    restored: fc.Scheduler = fc.Scheduler.from_dict(sched.to_dict())
    sharded = fc.ShardedScheduler(pages, 4.0, 2, value="greedy")

    policies: list[fc.CrawlPolicy] = [sched, sharded, fc.RoundRobin(3, 4.0), fc.UniformRandom(3, 4.0, rng=1),
                                      fc.LowDiscrepancy(crawl_rate, 4.0), fc.NutchAdaptive(3, 4.0)]
    result: fc.SimulationResult = fc.simulate(fc.RoundRobin(3, 4.0), pages, 10.0, rng=0)
    simulated: float = result.accuracy
    '''
)


@pytest.mark.developer
def test_user_script_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy")
    script = tmp_path / "crawler.py"
    script.write_text(USER_SCRIPT)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file", "/dev/null", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_user_script_runs(tmp_path, monkeypatch):
    """The same script runs (so the types it relies on are the real ones)."""
    monkeypatch.chdir(tmp_path)
    exec(compile(USER_SCRIPT, "crawler.py", "exec"), {})
