"""The memory a user sees of a Scheduler (issue 16): RSS growth per page, measured in a fresh process.

A PageModel of ``m`` pages (SPEC section 3's check distribution) is built, a ``Scheduler`` of the value kind
given (default "exact", the user's default) made from it with staggered last-crawl times, the caller's model
dropped, and 1000 decisions taken, then m/10 more (to t = 1: by then the scheduler has seen the winning value
settle and parked the pages of its slope buckets, a move of most pages from the heaps to the parked list); the
script prints the growth of the process's resident memory
per page at each step, its peak over the whole run, and the compiled state's own ``nbytes`` per page.  The
caller's arrays (56 bytes a page for the model, 8 for the last-crawl times) count in the peak: they are alive
while the scheduler is built.

Run: ``python bench/scheduler_memory.py 10000000 [exact|greedy|...]`` (one process per size and kind: RSS is
per process).
"""

from __future__ import annotations

import gc
import resource
import sys

import numpy as np

import freshcore as fc


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def main(m: int, value: str = "exact") -> None:
    rng = np.random.default_rng(0)
    base = rss()
    pages = fc.PageModel(rng.uniform(0, 1, m), rng.uniform(0, 1, m), rng.beta(0.25, 0.25, m),
                         rng.uniform(0.1, 0.6, m))
    sched = fc.Scheduler(pages, m / 10.0, value=value, last_crawl=-rng.uniform(0, 10, m))
    del pages
    gc.collect()
    built = rss()
    sched.run(1000)
    after = rss()
    sched.run(m // 10)
    later = rss()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"m = {m}, {value}: RSS growth {(built - base) / m:.1f} B/page after construction (caller's model dropped), "
          f"{(after - base) / m:.1f} B/page after 1000 decisions, {(later - base) / m:.1f} after m/10 more "
          f"({sched._state.bucket_sizes()[-2:].sum() / m:.0%} of the pages parked); peak {(peak - base) / m:.1f} "
          f"B/page over the run (the caller's arrays included); compiled state {sched._state.nbytes() / m:.1f} B/page")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000, sys.argv[2] if len(sys.argv) > 2 else "exact")
