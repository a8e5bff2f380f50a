"""Benchmarks of the compiled crawl value of polled signals (freshcore.polled_signals, issue 19).

Pages: the demo's check distribution, Delta, mu ~ U[0, 1], lambda ~ Beta(0.25, 0.25), nu ~ U(0.1, 0.6)
(seed 0), polled every w = 1, 0.3, 0.1, each at its *crawl level*: the pages the continuous optimum of
Busa-Fekete et al. (2025) crawls at bandwidth R = m/5 (``optimal_thresholds``), at ``s = alpha iota``, the
staleness where their polled value is near the winning value (the pages never crawled are left out: a
scheduler evaluates a page near its crossing).

Groups:

* ``polled_value numpy w=...``: baseline = the numpy lattice sum this module replaced
  (``tests/_polled_reference.py``: rows vectorised over the binomial's non-negligible width, Loader's pmf,
  geometric tail bounds -- the best numpy form we know; it is O(lattice points)) on the first 40 pages
  (5 in smoke mode) vs ``polled_value`` on the same pages.
* ``polled_value vs exact w=... n=...``: baseline = ``crawl_value(value="exact")`` (001's exact value, the
  scheduler's current cost per evaluation) on the same pages at ``tau_eff = iota`` vs ``polled_value`` at
  ``s = alpha iota``: the ratio is the cost of an evaluation against the exact value's (issue 19's 2x target
  is per scheduler decision).  n = 10^4 and 10^5 pages.
* ``polled_threshold w=...``: the inverse at the level ``V(s)`` of the same pages (1000 pages), beside
  ``polled_value`` as the baseline (the ratio is the inverse's cost in evaluations).

Run::

    PYTHONPATH=src FRESHCORE_NUM_THREADS=1 python -m pytest bench/bench_polled.py -o python_files='bench_*.py' \
        -p no:cacheprovider --benchmark-min-rounds=5

Per-evaluation percentiles (``python bench/bench_polled.py [n]``, n = 10^4 pages by default): each page's
``V`` evaluated alone, the least of 5 timings (``freshcore._polled._profile``, clock included), median / 90 /
99 / worst per ``w``, beside the exact value's batch time per page; and the evaluations per inverse.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from freshcore.pages import PageModel
from freshcore.polled_signals import polled_threshold, polled_value
from freshcore.thresholds import optimal_thresholds
from freshcore.value import crawl_value

from benchutil import SMOKE, role, sizes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from _polled_reference import _page_sums

WS = [1.0] if SMOKE else [1.0, 0.3, 0.1]


def crawl_level_pages(n):
    """``(pages, iota, s)``: the pages crawled at R = m/5 with their thresholds and staleness levels."""
    rng = np.random.default_rng(0)
    m = int(n * 1.5) + 10
    pages = PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m), rng.beta(0.25, 0.25, m), rng.uniform(0.1, 0.6, m))
    iota = optimal_thresholds(pages, m / 5).thresholds
    keep = np.flatnonzero(np.isfinite(iota) & (pages.alpha > 0))[:n]
    pages = pages[keep]
    return pages, iota[keep], pages.alpha * iota[keep]


@pytest.mark.parametrize("w", WS)
@pytest.mark.parametrize("impl", ["numpy", "freshcore"])
def test_polled_value_vs_numpy(benchmark, impl, w):
    n = 5 if SMOKE else 40
    pages, _, s = crawl_level_pages(n)
    benchmark.group = f"polled_value numpy w={w} n={n}"
    if impl == "numpy":
        role(benchmark, "baseline", n=n, w=w)
        dl, lam, nu, mu = pages.change_rate, pages.recall, pages.false_rate, pages.importance

        def run():
            return np.array([_page_sums(s[i], dl[i], lam[i], nu[i], w, False)[2] for i in range(n)]) * mu
    else:
        role(benchmark, "freshcore", n=n, w=w)

        def run():
            return polled_value(s, w, pages)
    benchmark(run)


@pytest.mark.parametrize("n", sizes(10_000, 100_000, smoke=500))
@pytest.mark.parametrize("w", WS)
@pytest.mark.parametrize("impl", ["exact", "polled"])
def test_polled_value_vs_exact(benchmark, impl, w, n):
    pages, iota, s = crawl_level_pages(n)
    benchmark.group = f"polled_value vs exact w={w} n={n}"
    if impl == "exact":
        role(benchmark, "baseline", n=n, w=w)
        out = np.empty(len(pages))
        benchmark(crawl_value, iota, pages, out=out)
    else:
        role(benchmark, "freshcore", n=n, w=w)
        benchmark(polled_value, s, w, pages)


@pytest.mark.parametrize("w", WS)
@pytest.mark.parametrize("impl", ["value", "threshold"])
def test_polled_threshold(benchmark, impl, w):
    n = 50 if SMOKE else 1000
    pages, _, s = crawl_level_pages(n)
    level = polled_value(s, w, pages)
    benchmark.group = f"polled_threshold w={w} n={n}"
    if impl == "value":
        role(benchmark, "baseline", n=n, w=w)
        benchmark(polled_value, s, w, pages)
    else:
        role(benchmark, "freshcore", n=n, w=w)
        benchmark(polled_threshold, level, w, pages)


def percentiles(n: int = 10_000) -> None:
    """Print the per-evaluation percentiles of ``polled_value`` at the crawl level (see the module notes)."""
    import time

    from freshcore import _polled

    pages, iota, s = crawl_level_pages(n)
    dl, lam, nu = (np.ascontiguousarray(a, dtype=float) for a in (pages.change_rate, pages.recall, pages.false_rate))
    out = np.empty(len(pages))
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        crawl_value(iota, pages, out=out)
        best = min(best, time.perf_counter() - t0)
    print(f"{len(pages)} crawl-level pages; exact value: {best / len(pages) * 1e9:.0f} ns a page (batch, min of 5)")
    for w in (1.0, 0.3, 0.1):
        ns = np.empty(len(s))
        info = np.zeros((len(s), 3))
        _polled._profile(np.ascontiguousarray(s), dl, lam, nu, np.full(len(s), w), 5, ns, info)
        walk = info[:, 0] == 1
        med, p90, p99, worst = np.percentile(ns, [50, 90, 99, 100])
        level = polled_value(s[:2000], w, pages[:2000])
        t0 = time.perf_counter()
        polled_threshold(level, w, pages[:2000])
        t_inv = time.perf_counter() - t0
        t0 = time.perf_counter()
        polled_value(s[:2000], w, pages[:2000])
        t_val = time.perf_counter() - t0
        share = ns[walk].sum() / ns.sum() * 100
        print(f"w={w}: polled_value ns median {med:.0f}, p90 {p90:.0f}, p99 {p99:.0f}, worst {worst:.0f}, "
              f"mean {ns.mean():.0f} (walk on {walk.mean() * 100:.2f}% of pages, {share:.0f}% of the time); "
              f"polled_threshold ~ {t_inv / t_val:.1f} values (2000 pages, one run)")


if __name__ == "__main__":
    percentiles(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
