"""``freshcore schedule PAGES --bandwidth B --horizon H``: the crawl order for the next H units of time.

PAGES is a page table as for ``freshcore rates`` (``url``, ``change_rate``, optional ``importance``,
``recall``, ``false_rate``).  The exact scheduler (Algorithm 1 of Busa-Fekete, Zimmert, György et al.
(2025)) crawls one page every 1/B units of time, the page whose crawl is worth most now (``--value``: exact
with signals by default, or greedy without), and the command streams its decisions, one row per crawl:
the time and the URL, as CSV or JSON lines.

``--signals FILE`` (CSV or Parquet with ``url`` and ``time``) gives change signals (sitemap pings, feeds...)
on the scheduler's clock: each is counted as the scheduler reaches its time.  ``--state FILE`` continues from
a saved scheduler when FILE exists (the page table must be the one it was made from, same order) and saves
it there at the end (atomically), so that successive runs continue one schedule.

``--value polled --poll-interval W`` ranks pages by the value of polled signals (a signal source read every W,
``freshcore.polled_signals``), fed by ``--polls FILE`` (``url``, ``time``, ``moved``: whether the page's signal
moved since its previous poll) in place of ``--signals``: the polls of each time are given to the scheduler
together, as it reaches that time.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from ._common import (
    CommandError,
    add_output,
    add_pages_bandwidth,
    add_verbosity,
    command_parser,
    read_chunks,
    table_format,
    write_output,
    write_table,
)
from .rates import read_pages

EXAMPLES = """examples:
  freshcore schedule pages.csv --bandwidth 1000 --horizon 1 -o today.csv
  freshcore schedule pages.csv --bandwidth 1000 --horizon 1 --state crawler.sched --signals pings.csv
  freshcore schedule pages.parquet --bandwidth 50 --horizon 7 --value greedy --format json -o -
  freshcore schedule pages.csv --bandwidth 1000 --horizon 1 --value polled --poll-interval 0.25 --polls polls.csv"""

_BATCH = 65_536  # decisions per call of the scheduler between two writes or signals


def add_parser(sub: Any) -> None:
    """The ``schedule`` subcommand and its options."""
    p = command_parser(sub, "schedule", "the crawl order for a horizon, from a page table (and change signals)",
                       __doc__, EXAMPLES)
    add_pages_bandwidth(p, "units of time to schedule")
    p.add_argument("--value", choices=("exact", "greedy", "approx", "cis", "polled"), default="exact",
                   help="the crawl value ranking the pages (default exact: with signals)")
    p.add_argument("--signals", default=None, metavar="FILE", help="change signals: a table with url and time")
    p.add_argument("--poll-interval", type=float, default=None, metavar="W",
                   help="with --value polled: the time between two polls of a page's signal source")
    p.add_argument("--polls", default=None, metavar="FILE",
                   help="with --value polled: polls, a table with url, time and moved (true/false, 1/0)")
    p.add_argument("--state", default=None, metavar="FILE",
                   help="continue from this saved scheduler if it exists, and save it there at the end")
    add_output(p, "decisions", ("csv", "json"))
    p.add_argument("--page-column", default="url", metavar="NAME", help="column of the URLs (default url)")
    add_verbosity(p, "no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    import pandas as pd
    from tqdm import tqdm

    from ..pages import PageModel
    from ..schedule import Scheduler

    table = read_pages(args.pages, args.page_column, ("change_rate",), "schedule")
    n = table.shape[0]
    column = {name: table[name].to_numpy(dtype=np.float64) if name in table.columns else np.zeros(n)
              for name in ("recall", "false_rate")}
    pages = PageModel(table["change_rate"].to_numpy(), table["importance"].to_numpy(), column["recall"],
                      column["false_rate"])
    urls = table[args.page_column].to_numpy()
    loaded = args.state is not None and os.path.exists(args.state)
    try:
        if loaded:
            sched = Scheduler.load(args.state)
            if sched.n_pages != n:
                raise CommandError(f"{args.state}: a scheduler of {sched.n_pages} pages, but {args.pages} has {n}")
            if sched.bandwidth != args.bandwidth:
                sched.set_bandwidth(args.bandwidth)
            if args.poll_interval is not None:
                # (the saved state's poll intervals are its model of the polls; one given again must agree)
                saved = sched.poll_interval
                if saved is None:
                    raise CommandError(f"{args.state}: --poll-interval is only used with --value polled (the "
                                       f"saved scheduler's value is {sched.value!r})")
                if not np.all(saved == args.poll_interval):
                    raise CommandError(f"{args.state}: --poll-interval {args.poll_interval:g} differs from the "
                                       f"saved scheduler's poll interval; to change it, start a new state")
        else:
            if args.value == "polled" and args.poll_interval is None:
                raise CommandError("--value polled needs --poll-interval W")
            if args.value != "polled" and args.poll_interval is not None:
                raise CommandError("--poll-interval is only used with --value polled")
            sched = Scheduler(pages, args.bandwidth, value=args.value, poll_interval=args.poll_interval)
    except (ValueError, OSError) as e:
        raise CommandError(f"{args.state or args.pages}: {e}") from None
    polled = sched.value == "polled"
    if polled and args.signals is not None:
        raise CommandError("a polled scheduler takes --polls, not --signals")
    if not polled and args.polls is not None:
        raise CommandError("--polls needs --value polled (a scheduler of another value takes --signals)")
    sig_pages, sig_times = _signals(args, urls, sched.time)
    poll_pages, poll_times, poll_moved = _polls(args, urls, sched.time, loaded)
    ticks = int(np.floor(args.horizon * args.bandwidth + 1e-9))
    start = sched.time

    def write(f: TextIO) -> None:
        done, k = 0, 0  # decisions made, signals delivered
        bar = tqdm(total=ticks, desc="scheduling", unit=" crawls", unit_scale=True, file=sys.stderr,
                   disable=args.quiet or not sys.stderr.isatty(), leave=False)
        header = True
        q = 0  # polls delivered
        while done < ticks:
            # the signals up to the next tick's time (the tick's own: time + 1/bandwidth can round below it),
            # then the ticks before the next signal (at most a batch)
            nxt = float(sched.tick_times(1)[0])
            upto = int(np.searchsorted(sig_times, nxt, side="right"))
            if upto > k:
                sched.signal_many(sig_pages[k:upto], sig_times[k:upto])
                k = upto
            # the polls up to the next tick's time, one call per poll time
            upto = int(np.searchsorted(poll_times, nxt, side="right"))
            while q < upto:
                e = int(np.searchsorted(poll_times, poll_times[q], side="right"))
                sched.poll(poll_pages[q:e], max(float(poll_times[q]), sched.time), poll_moved[q:e])
                q = e
            step = min(_BATCH, ticks - done)
            # (a tick's margin: the ticks of a batch end at least a tick before the next signal or poll, so that
            # each is given before the tick whose time + 1/bandwidth first reaches it, whatever the rounding; with
            # ceil(...) - 1, a signal at 0.4 met at 0.1 came after the tick at 0.4: ceil(3.0000000000000004) - 1)
            if k < sig_times.shape[0]:
                before = int(np.ceil((sig_times[k] - sched.time) * args.bandwidth)) - 2
                step = max(1, min(step, before))
            if q < poll_times.shape[0]:
                before = int(np.ceil((poll_times[q] - sched.time) * args.bandwidth)) - 2
                step = max(1, min(step, before))
            t0 = sched.time
            crawled = sched.run(step)
            times = t0 + np.arange(1, step + 1) / args.bandwidth
            block = pd.DataFrame({"time": times, "url": urls[crawled]})
            if args.format == "csv":
                block.to_csv(f, index=False, header=header, float_format="%.10g")
            else:
                write_table(block, "json", f)
            header = False
            done += step
            bar.update(step)
        bar.close()

    write_output(args.output, write, out)
    if args.state is not None:
        sched.save(args.state)
    if not args.quiet:
        print(f"freshcore schedule: {ticks} crawls of {n} pages from time {start:g} to {sched.time:g}",
              file=sys.stderr)
    return 0


def _polls(args: argparse.Namespace, urls: np.ndarray, now: float,
           loaded: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The polls file as page ids, times and moved flags, sorted by time (stable); those at or before the time of a
    loaded scheduler were delivered by an earlier run."""
    if args.polls is None:
        return np.empty(0, np.intp), np.empty(0), np.empty(0, bool)
    table, where, times = _timed_rows(args, args.polls, "moved")
    flags = {"true": True, "false": False, "1": True, "0": False, "1.0": True, "0.0": False}
    raw = table["moved"]
    parsed = [flags.get(str(x).strip().lower()) for x in raw]
    bad_flag = [i for i, x in enumerate(parsed) if x is None]
    if bad_flag:
        i = bad_flag[0]
        raise CommandError(f"{args.polls}, {where(i)}, column 'moved': {raw.iloc[i]!r} is not a flag "
                           "(true/false or 1/0)")
    ids = _row_pages(args, args.polls, table, where, urls)
    order = np.argsort(times, kind="stable")
    keep = times[order] > now if loaded else times[order] >= now
    moved = np.array(parsed, dtype=bool)
    return ids[order][keep].astype(np.intp), times[order][keep], moved[order][keep]


def _signals(args: argparse.Namespace, urls: np.ndarray, now: float) -> tuple[np.ndarray, np.ndarray]:
    """The signals file as page ids and times, sorted by time (URLs not in the page table are an error)."""
    if args.signals is None:
        return np.empty(0, np.int64), np.empty(0)
    table, where, times = _timed_rows(args, args.signals)
    ids = _row_pages(args, args.signals, table, where, urls)
    order = np.argsort(times, kind="stable")
    keep = times[order] >= now  # (signals before the scheduler's clock were delivered by an earlier run)
    return ids[order][keep].astype(np.int64), times[order][keep]


def _timed_rows(args: argparse.Namespace, path: str, *extra: str) -> tuple[Any, Callable[[int], str], np.ndarray]:
    """The rows of a signals or polls file (the page column, "time" and ``extra``), how to name row i in an error,
    and the times (a CommandError naming the first that is not a number)."""
    import pandas as pd

    table = pd.concat(list(read_chunks(path, [args.page_column, "time", *extra], "schedule")), ignore_index=True)

    def where(i: int) -> str:
        return f"row {i + 1}" if table_format(path) == "parquet" else f"line {i + 2}"

    times = pd.to_numeric(table["time"], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(times)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CommandError(f"{path}, {where(i)}, column 'time': {table['time'].iloc[i]!r} is not a time on "
                           "the scheduler's clock (a number)")
    return table, where, times


def _row_pages(args: argparse.Namespace, path: str, table: Any, where: Callable[[int], str],
               urls: np.ndarray) -> np.ndarray:
    """The page id of each row (a CommandError naming the first URL not in the page table)."""
    import pandas as pd

    ids = pd.Index(urls).get_indexer(table[args.page_column])
    unknown = np.flatnonzero(ids < 0)
    if unknown.size:
        i = int(unknown[0])
        raise CommandError(f"{path}, {where(i)}, column {args.page_column!r}: "
                           f"{table[args.page_column].iloc[i]!r} is not in {args.pages}")
    return ids
