"""Crawling a local test web over HTTP with noisy sitemaps (issue 19): freshness from the server's ground truth.

A :class:`freshcore.testweb.LocalWeb` of ``--pages`` pages (the demo's synthetic web: Delta log-uniform on
[0.02, 5] per day, Pareto importance, sitemap recall lambda ~ Beta(0.25, 0.25), false lastmod moves
nu ~ U(0.1, 0.6) per day) serves its pages and its sitemap on 127.0.0.1 with an accelerated clock
(``--speed`` virtual days per wall second).  :func:`freshcore.testweb.run_crawler` fetches R = N/5 pages per
virtual day over one keep-alive HTTP connection, sleeping until each fetch is due, and polls the sitemap every
``w`` of ``--polls`` days; the policy is given the true page parameters.  Policies (:data:`POLICIES`):

* ``round-robin``, ``greedy`` (the Scheduler, signals ignored): blind, so run once per seed, without polls;
* ``exact`` (the Scheduler's value of Busa-Fekete et al. (2025)), fed at each poll one signal (at the poll time)
  for each page whose lastmod moved since the previous poll (feed ``moved``), or only for those whose new lastmod
  is later than the page's last fetch (feed ``after-fetch``: a move the fetch already saw is no news): once per
  poll interval and feed;
* any other name added to ``POLICIES`` (e.g. the polled value kind, fed ``poll(pages, t, moved)``) runs like
  ``exact``.

Every policy of a seed sees the same events (the seed draws the web and its events).  Accuracy is the
mu-weighted time-average fraction of fresh pages (the fraction of requests served fresh), freshness the
unweighted one, both over ``--measure`` days after ``--burn-in`` days, computed exactly by the server from
its change times and fetch log.  The tables give the mean over seeds +- its standard error, the paired
difference with Greedy, the lastmod moves the polls saw (after collapsing) against those that happened, how
late the fetches went out (wall milliseconds: median, 99th percentile, max over the seeds) and wall seconds
per run.

Run: ``PYTHONPATH=src python bench/crawl_testweb.py [--pages 500] [--seeds 5] [--burn-in 10] [--measure 30]
[--polls 1 0.1] [--speed 2] [--policies round-robin greedy exact] [--groups 1]``; ``--quick`` is a small run.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from freshcore.testweb import POLICIES, crawl_local_web, synthetic_pages

BLIND = ("round-robin", "greedy")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "?"


def _mse(x: list[float]) -> str:
    a = np.asarray(x, dtype=float)
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
    return f"{a.mean():.4f}±{se:.4f}"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=500)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--burn-in", type=float, default=10.0)
    p.add_argument("--measure", type=float, default=30.0)
    p.add_argument("--polls", type=float, nargs="+", default=[1.0, 0.1])
    p.add_argument("--speed", type=float, default=2.0)
    p.add_argument("--policies", nargs="+", default=["round-robin", "greedy", "exact"])
    p.add_argument("--groups", type=int, default=1)
    p.add_argument("--feeds", nargs="+", default=["moved", "after-fetch"], choices=["moved", "after-fetch"])
    p.add_argument("--web", default="demo", choices=["demo", "uniform"])
    p.add_argument("--quick", action="store_true", help="100 pages, 2 seeds, 2 + 5 days, speed 10")
    a = p.parse_args(argv)
    if a.quick:
        a.pages, a.seeds, a.burn_in, a.measure, a.speed = 100, 2, 2.0, 5.0, 10.0
    unknown = [x for x in a.policies if x not in POLICIES]
    if unknown:
        p.error(f"unknown policies {unknown}; known: {sorted(POLICIES)}")
    r = a.pages / 5
    runs: list[tuple[str, float | None, str]] = [(name, None, "-") for name in a.policies if name in BLIND]
    runs += [(name, w, f) for name in a.policies if name not in BLIND for w in a.polls for f in a.feeds]
    print(f"test web over HTTP: web {a.web}, N = {a.pages}, R = N/5 = {r:g}/day, burn-in {a.burn_in:g} + measured "
          f"{a.measure:g} days, speed {a.speed:g} days/s, sitemap groups {a.groups}, seeds {a.first_seed}.."
          f"{a.first_seed + a.seeds - 1}; load {_load()}", flush=True)
    res: dict[tuple[str, float | None, str], list] = {k: [] for k in runs}
    wall0 = time.perf_counter()
    for seed in range(a.first_seed, a.first_seed + a.seeds):
        pages = synthetic_pages(a.pages, rng=seed, web=a.web)
        line = []
        for name, w, feed in runs:
            out = crawl_local_web(name, pages, bandwidth=r, burn_in=a.burn_in, measure=a.measure, poll_interval=w,
                                  speed=a.speed, rng=seed, sitemap_groups=a.groups,
                                  feed="moved" if feed == "-" else feed)
            res[(name, w, feed)].append(out)
            line.append(f"{name}{'' if w is None else f'@{w:g}/{feed}'} {out.accuracy:.4f}")
        print(f"  seed {seed}: " + ", ".join(line) + f"  (load {_load()})", flush=True)
    base = res.get(("greedy", None, "-"))
    print(f"\n{'policy':>12} {'w':>5} {'feed':>11} {'accuracy':>15} {'freshness':>15} {'acc - greedy':>15} "
          f"{'moves seen':>11} {'happened':>9} {'signals':>8} {'late ms p50/p99/max':>20} {'errors':>6} {'wall s':>7}")
    for (name, w, feed), outs in res.items():
        acc = [o.accuracy for o in outs]
        diff = _mse([o.accuracy - g.accuracy for o, g in zip(outs, base)]) if base and name != "greedy" else "-"
        late = np.concatenate([o.report.late for o in outs]) / a.speed * 1e3
        seen = "-" if w is None else f"{np.mean([o.report.n_moved for o in outs]):.0f}"
        happened = "-" if w is None else f"{np.mean([o.moves for o in outs]):.0f}"
        signals = "-" if w is None else f"{np.mean([o.report.n_signals for o in outs]):.0f}"
        late_s = f"{np.median(late):.2f}/{np.percentile(late, 99):.2f}/{late.max():.1f}"
        fresh = _mse([o.freshness for o in outs])
        print(f"{name:>12} {'-' if w is None else f'{w:g}':>5} {feed:>11} {_mse(acc):>15} {fresh:>15} {diff:>15}"
              f" {seen:>11} {happened:>9} {signals:>8} {late_s:>20} {sum(o.report.errors for o in outs):>6} "
              f"{np.mean([o.report.wall_seconds for o in outs]):>7.1f}")
    print(f"\n(moves: mean per run over the polled span; wall {time.perf_counter() - wall0:.0f} s; load {_load()})")


if __name__ == "__main__":
    main()
