"""Feed a site's sitemap to a Scheduler: poll it, compare two reads, signal the pages whose lastmod moved.

What a crawler with sitemaps does, by hand, against a local test web (:class:`freshcore.testweb.LocalWeb`:
pages changing as Poisson processes, a sitemap whose ``lastmod`` moves at a signalled change with probability
lambda and falsely at rate nu).  Every ``w`` virtual days the crawler reads ``/sitemap.xml`` with urllib,
parses it (:func:`freshcore.sitemaps.parse_sitemap`), compares it with the previous read
(:func:`freshcore.sitemaps.compare_sitemaps`) and tells the exact Scheduler of Busa-Fekete et al. (2025) one
signal per moved page; between polls it fetches ``R`` pages per day, as the scheduler says.
:func:`freshcore.testweb.run_crawler` is this loop, made punctual; here it is spelled out.

The table: the accuracy (mu-weighted fraction of time fresh, from the server's ground truth) of the same
loop with the signals ignored (``value="greedy"``) and fed (``value="exact"``), on the same events, and how
many lastmod moves the polls saw against how many happened.  Output (the events are seeded; the fetch times
depend on the machine's load: three runs gave greedy 0.6975-0.6978, exact 0.7197-0.7215; at 2.5x the speed the
loop fell behind and the two came within 0.01 of each other either way)::

    100 pages, R = 20/day, sitemap polled every 0.25 day, accuracy over days 2..8
       value  accuracy  moves seen  happened
      greedy    0.6976         521       645
       exact    0.7197         521       645
"""

import urllib.request

import numpy as np

from freshcore.schedule import Scheduler
from freshcore.sitemaps import compare_sitemaps, parse_sitemap
from freshcore.testweb import LocalWeb, synthetic_pages

N, DAYS, BURN_IN, W, SPEED = 100, 8.0, 2.0, 0.25, 4.0
R = N / 5


def crawl(value: str) -> tuple[float, int, int]:
    pages = synthetic_pages(N, rng=7)
    with LocalWeb(pages, horizon=DAYS, speed=SPEED, rng=7) as web:
        ids = web.page_ids()
        url_of = {i: u for u, i in ids.items()}
        scheduler = Scheduler(pages, R, value=value)
        previous, seen, k = None, 0, 0
        for j in range(1, int(DAYS * R) + 1):
            t = j / R
            while k * W <= t:  # polls due by this tick first
                web.clock.sleep_until(k * W)
                with urllib.request.urlopen(web.url + "/sitemap.xml") as r:
                    snapshot = parse_sitemap(r.read())
                if previous is not None:
                    changes = compare_sitemaps(previous, snapshot, ids)
                    moved = changes.pages[changes.moved]
                    scheduler.signal_many(moved, np.full(len(moved), k * W))
                    seen += len(moved)
                previous, k = snapshot, k + 1
            page = scheduler.next()
            web.clock.sleep_until(t)
            with urllib.request.urlopen(url_of[page]) as r:
                r.read()
    return web.freshness(BURN_IN, DAYS, weighted=True), seen, web.moves_between(0.0, (k - 1) * W)


print(f"{N} pages, R = {R:g}/day, sitemap polled every {W:g} day, accuracy over days {BURN_IN:g}..{DAYS:g}")
print(f"{'value':>8} {'accuracy':>9} {'moves seen':>11} {'happened':>9}")
for value in ("greedy", "exact"):
    acc, seen, happened = crawl(value)
    print(f"{value:>8} {acc:>9.4f} {seen:>11} {happened:>9}")
