"""``freshcore estimate LOG``: per-URL change rates from a crawl log.

The log is a CSV or Parquet table (by its name: ``.parquet`` is Parquet, anything else CSV, ``-`` CSV on
standard input) with one row per crawl: the URL, the time of the crawl, and whether the crawl saw the page
changed since its previous crawl (``changed``: 0/1 or true/false), or instead a fingerprint of the content
(``--fingerprint-column``: a hash, an ETag...; a crawl changed where it differs from the URL's previous
crawl).  A ``signals`` column (``--signal-column``), the change signals received since the URL's previous
crawl, adds each URL's signal recall and false-signal rate (for ``freshcore rates --model signals``).  Times
are ISO 8601 timestamps or numbers (seconds by default: ``--time-unit``).  Rows may come in
any order; the log is read in chunks of 10^6 rows.

The output (CSV by default, or JSON lines) has one row per URL, sorted: the change rate per ``--unit``
(a day by default), its confidence interval, the number of intervals and of changes seen, and whether the
estimate is the cap (a change at every crawl).  The estimator is the maximum-likelihood estimate from the
actual intervals (``--method mle``, the default: crawl intervals in real logs are irregular), or moment
matching (``--method mm``); see ``freshcore.estimate_log_rates``.

``--layout bing DIR`` reads the public Bing crawl-history dataset of Kolobov et al. (a folder holding
``urlid_offset_history.txt``, ``urlid_imp.txt`` and ``urlid_chrate_compl_obs_hist.txt``; see
``freshcore.bing_crawl_history``) instead: the URLs are its ids, times are in days, and the output adds each
URL's importance and the dataset's complete-observation change rate (``reference_rate``) where it has one,
so that the two can be compared, and the output fed to ``freshcore rates``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from typing import Any, TextIO

import numpy as np

from ..crawl_logs import LogError, SingleCrawlWarning, estimate_log_rates
from ._common import (
    CommandError,
    add_output,
    add_plot,
    add_verbosity,
    command_parser,
    read_chunks,
    save_plot,
    table_format,
    write_output,
    write_table,
)

_UNITS = ("day", "hour", "minute", "second")
# nanoseconds in one unit of numeric times
_TIME_UNITS = {"second": 10**9, "millisecond": 10**6, "microsecond": 10**3, "minute": 60 * 10**9,
               "hour": 3600 * 10**9, "day": 86400 * 10**9}

EXAMPLES = """examples:
  freshcore estimate crawls.csv -o rates.csv
  freshcore estimate crawls.parquet --unit hour --format json -o -
  freshcore estimate crawls.csv --fingerprint-column etag --page-column page
  freshcore estimate --layout bing PoliteCrawling/ -o bing_rates.csv
  freshcore estimate examples/crawl_log.csv --reference examples/pages.csv --plot estimates.png"""


def add_parser(sub: Any) -> None:
    """The ``estimate`` subcommand and its options."""
    p = command_parser(sub, "estimate", "per-URL change rates from a crawl log (CSV or Parquet)", __doc__, EXAMPLES)
    p.add_argument("log", metavar="LOG", help="the crawl log: a .csv or .parquet file, or - for CSV on stdin "
                                              "(with --layout bing: the dataset's folder)")
    p.add_argument("--layout", choices=("table", "bing"), default="table",
                   help="table (default): one row per crawl; bing: the Bing crawl-history dataset's files")
    add_output(p, "estimates", ("csv", "json"))
    p.add_argument("--method", choices=("mle", "mm"), default="mle",
                   help="mle (default): maximum likelihood from the intervals; mm: moment matching")
    p.add_argument("--unit", choices=_UNITS, default="day", help="rates per this unit of time (default day)")
    p.add_argument("--time-unit", choices=tuple(_TIME_UNITS), default="second",
                   help="the unit of numeric times (default second: Unix timestamps); ISO timestamps need none")
    p.add_argument("--confidence", type=float, default=0.95, help="level of the intervals (default 0.95)")
    p.add_argument("--page-column", default="url", metavar="NAME", help="column of the URLs (default url)")
    p.add_argument("--time-column", default="time", metavar="NAME", help="column of the times (default time)")
    p.add_argument("--changed-column", default="changed", metavar="NAME",
                   help="column of the change flags (default changed)")
    p.add_argument("--fingerprint-column", default=None, metavar="NAME",
                   help="column of content fingerprints, instead of change flags")
    p.add_argument("--reference", default=None, metavar="PAGES",
                   help="a page table (url, change_rate) of known rates, e.g. a simulation's truth: adds them as "
                        "reference_rate, and --plot draws the estimates against them")
    p.add_argument("--signal-column", default=None, metavar="NAME",
                   help="column of the change signals received before each crawl (default: signals, if the log "
                        "has it): adds each URL's signal recall and false-signal rate")
    add_plot(p, "the estimates with their intervals (against reference rates, with --reference or --layout bing)")
    add_verbosity(p, "no progress bar, no warnings")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    import time

    from tqdm import tqdm

    if not 0.0 < args.confidence < 1.0:
        raise CommandError(f"--confidence must be between 0 and 1, got {args.confidence}")
    flag_column = args.fingerprint_column or args.changed_column
    columns = [args.page_column, args.time_column, flag_column]
    t0 = time.perf_counter()
    bar = tqdm(desc="reading", unit=" rows", unit_scale=True, file=sys.stderr,
               disable=args.quiet or not sys.stderr.isatty(), leave=False)
    rows = 0

    if args.layout == "bing":
        return _run_bing(args, out, bar, t0)

    signal_column = args.signal_column
    source = read_chunks(args.log, columns + ([signal_column] if signal_column else []), "estimate",
                         optional=() if signal_column else ("signals",))
    first = next(source, None)
    if signal_column is None and first is not None and "signals" in first.columns:
        signal_column = "signals"  # (a column named signals is used when present)
    keep = columns + ([signal_column] if signal_column else [])

    def chunks() -> Any:
        nonlocal rows
        for chunk in itertools.chain([] if first is None else [first], source):
            chunk = chunk[keep]
            times = chunk[args.time_column]
            if times.dtype.kind in "iuf":  # numbers in --time-unit since the Unix epoch: as dates
                chunk = chunk.assign(**{args.time_column: _durations(times.to_numpy(), args.time_unit)
                                        + np.datetime64(0, "ns")})
            rows += len(chunk)
            bar.update(len(chunk))
            yield chunk

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", SingleCrawlWarning)
            rates = estimate_log_rates(
                chunks(), method=args.method, unit=args.unit, confidence=args.confidence,
                page_column=args.page_column, time_column=args.time_column, changed_column=args.changed_column,
                fingerprint_column=args.fingerprint_column, signal_column=signal_column,
            )
    except LogError as e:
        raise CommandError(f"{_place(e, args, flag_column, signal_column)}: {e.detail}") from None
    except ValueError as e:
        raise CommandError(f"{args.log}: {str(e).removeprefix('estimate_log_rates: ')}") from None
    finally:
        bar.close()
    for w in caught:
        if not issubclass(w.category, SingleCrawlWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        elif not args.quiet:
            print(f"freshcore estimate: warning: {str(w.message).removeprefix('estimate_log_rates: ')}",
                  file=sys.stderr)
    table = rates.reset_index()
    if args.reference:
        table = _with_reference(table, args)
    return _finish(args, out, table, rows, t0)


def _with_reference(table: Any, args: argparse.Namespace) -> Any:
    """The estimates with the reference table's change rates (``reference_rate``; NaN for URLs it lacks)."""
    from .rates import read_pages

    ref = read_pages(args.reference, args.page_column, ("change_rate",), "estimate")
    known = ref.set_index(args.page_column)["change_rate"].rename("reference_rate")
    return table.join(known, on=args.page_column)


def _run_bing(args: argparse.Namespace, out: TextIO, bar: Any, t0: float) -> int:
    """``--layout bing``: the dataset's history through the same estimator, joined with its page files."""

    from ..bing_crawl_history import BingFormatError, read_history, read_pages

    rows = 0

    def chunks() -> Any:
        nonlocal rows
        for chunk in read_history(args.log):
            rows += len(chunk)
            bar.update(len(chunk))
            yield chunk

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingleCrawlWarning)  # (a URL crawled once has no estimate: NaN)
            rates = estimate_log_rates(chunks(), method=args.method, confidence=args.confidence)
        pages = read_pages(args.log)
    except BingFormatError as e:
        raise CommandError(str(e)) from None
    except FileNotFoundError as e:
        raise CommandError(f"{e.filename}: no such file") from None
    finally:
        bar.close()
    if args.unit != "day":  # (the dataset's times are days)
        scale = {"hour": 24.0, "minute": 1440.0, "second": 86400.0}[args.unit]
        rates[["change_rate", "ci_low", "ci_high"]] /= scale
        pages["reference_rate"] /= scale
    return _finish(args, out, rates.join(pages, how="left").reset_index(), rows, t0)


def _finish(args: argparse.Namespace, out: TextIO, table: Any, rows: int, t0: float) -> int:
    """Write the estimates (and the plot); with --verbose, say what was read."""

    write_output(args.output, lambda f: write_table(table, args.format, f), out)
    if args.plot:
        save_plot(args.plot, lambda ax: plot_estimates(ax, table, args.unit), "estimate")
    if args.verbose:
        print(f"freshcore estimate: {rows} crawls, {len(table)} URLs", file=sys.stderr)
    return 0


def plot_estimates(ax: Any, table: Any, unit: str) -> None:
    """The estimates with their intervals: against the reference rates where the table has them (log-log,
    the diagonal for agreement), else sorted, on a log scale.  Capped (clipped) and missing estimates are
    left out."""
    ok = table[~table["clipped"] & np.isfinite(table["change_rate"]) & (table["change_rate"] > 0)]
    if "reference_rate" in ok.columns and ok["reference_rate"].notna().any():
        ref = ok[ok["reference_rate"].notna()]
        err = np.vstack([ref["change_rate"] - ref["ci_low"], ref["ci_high"] - ref["change_rate"]])
        ax.errorbar(ref["reference_rate"], ref["change_rate"], yerr=err, fmt="o", ms=3, capsize=2, alpha=0.8)
        lo = float(np.nanmin([ref["reference_rate"].min(), ref["ci_low"][ref["ci_low"] > 0].min()]))
        hi = float(np.nanmax([ref["reference_rate"].max(), ref["ci_high"][np.isfinite(ref["ci_high"])].max()]))
        ax.plot([lo, hi], [lo, hi], color="grey", lw=1, label="estimate = reference")
        ax.set_xscale("log")
        ax.set_xlabel(f"reference change rate (per {unit})")
        ax.set_title(f"{len(ref)} URLs with a reference rate: estimate and its interval")
        ax.legend()
    else:
        s = ok.sort_values("change_rate").reset_index(drop=True)
        err = np.vstack([s["change_rate"] - s["ci_low"], np.where(np.isfinite(s["ci_high"]),
                                                                  s["ci_high"] - s["change_rate"], 0.0)])
        ax.errorbar(np.arange(len(s)), s["change_rate"], yerr=err, fmt="o", ms=3, capsize=2, alpha=0.8)
        ax.set_xlabel("URLs, by estimated change rate")
        ax.set_title(f"{len(s)} URLs: estimate and its interval ({int(table['clipped'].sum())} capped, not shown)")
    ax.set_yscale("log")
    ax.set_ylabel(f"estimated change rate (per {unit})")


def _durations(values: np.ndarray, unit: str) -> np.ndarray:
    """Numbers in ``unit`` as timedelta64[ns] (NaN as NaT): whole numbers exactly, fractions to the
    nanosecond (or to the double's precision of such a count)."""
    if values.dtype.kind in "iu":
        return (values.astype(np.int64) * _TIME_UNITS[unit]).astype("timedelta64[ns]")
    v = values.astype(np.float64) * float(_TIME_UNITS[unit])
    bad = ~np.isfinite(v)
    ns = np.where(bad, 0.0, np.round(v)).astype(np.int64)
    out = ns.astype("timedelta64[ns]")
    out[bad] = np.timedelta64("NaT")
    return out


def _place(e: LogError, args: argparse.Namespace, flag_column: str, signal_column: str | None) -> str:
    """Where a bad row is: the file's line (CSV, after the header) or row (Parquet), and the column."""
    column = {"page": args.page_column, "time": args.time_column, "signals": signal_column}.get(e.field) or \
        flag_column
    where = f"row {e.row + 1}" if table_format(args.log) == "parquet" else f"line {e.row + 2}"
    return f"{args.log}, {where}, column {column!r}"
