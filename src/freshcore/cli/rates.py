"""``freshcore rates PAGES --bandwidth B``: how often to crawl each page under a bandwidth budget.

PAGES is a page table (CSV or Parquet, by its name) with one row per URL: ``url``, ``change_rate`` (changes
per unit of time, e.g. the output of ``freshcore estimate``), optionally ``importance`` (a weight: request
rate, popularity...; 1 for every page without it) and, for ``--model signals``, ``recall`` (the probability
that a change is signalled) and ``false_rate`` (false signals per unit of time).  The bandwidth is in crawls
per the same unit of time.

Models: ``poisson`` (the default: crawls at random times, eq. (10) of Avrachenkov, Patil and Thoppe
(2020)), ``periodic`` (evenly spaced crawls), ``signals`` (crawl on a change signal or at a time threshold:
Theorem 2 of Busa-Fekete, Zimmert, György et al. (2025)).  The output has one row per URL with its crawl
rate (crawls per unit of time) and its expected freshness (the fraction of time its copy is fresh; for
``signals`` its time threshold, and the accuracy in place of freshness), and the command says the
importance-weighted total on standard error.

``--model renewal`` (updates that are not Poisson: the periodic crawl plan that is optimal under each page's
law of the time between updates, Li, Cline and Loguinov (2017)) reads an ``update_law`` column in place of
``change_rate``: one law per page, written as its Python form, ``pareto(alpha=3, beta=1)``, ``pareto(3, 1)``,
``exponential(0.5)`` (rate), ``constant(2)`` (every 2 units), ``uniform(1, 2)`` (case and spaces ignored).
Its ``change_rate`` column out is the mean rate of updates, 1 / E[interval].
"""

from __future__ import annotations

import argparse
import functools
import inspect
import math
import re
import sys
from typing import Any, TextIO

import numpy as np

from ._common import (
    CommandError,
    add_output,
    add_plot,
    add_verbosity,
    command_parser,
    positive_float,
    read_chunks,
    save_plot,
    table_format,
    write_output,
    write_table,
)

EXAMPLES = """examples:
  freshcore rates pages.csv --bandwidth 500 -o plan.csv
  freshcore estimate crawls.csv -o pages.csv && freshcore rates pages.csv --bandwidth 2000 --model periodic
  freshcore rates pages.parquet --bandwidth 100 --model signals --format json
  freshcore rates laws.csv --bandwidth 50 --model renewal      # laws.csv: url,update_law ("pareto(3, 1)", ...)"""


def add_parser(sub: Any) -> None:
    """The ``rates`` subcommand and its options."""
    p = command_parser(sub, "rates", "optimal crawl rates (or signal thresholds) for a page table under a bandwidth",
                       __doc__, EXAMPLES)
    p.add_argument("pages", metavar="PAGES", help="the page table: a .csv or .parquet file, or - for CSV on stdin")
    p.add_argument("--bandwidth", type=positive_float, required=True,
                   help="crawls per unit of time for all pages together")
    p.add_argument("--model", choices=("poisson", "periodic", "signals", "renewal"), default="poisson",
                   help="how crawls are spaced (default poisson); signals: crawl on change signals too; renewal: "
                        "periodic crawls of pages whose updates follow the update_law column")
    p.add_argument("--min-rate", type=float, default=0.0, help="lowest crawl rate of a page (default 0)")
    p.add_argument("--max-rate", type=float, default=np.inf, help="highest crawl rate of a page (default none)")
    add_output(p, "plan", ("csv", "json"))
    p.add_argument("--page-column", default="url", metavar="NAME", help="column of the URLs (default url)")
    add_plot(p, "crawl rate against change rate")
    add_verbosity(p, "do not print the total on standard error")
    p.set_defaults(run=run)


_REQUIRED = {"poisson": ("change_rate",), "periodic": ("change_rate",),
             "signals": ("change_rate", "recall", "false_rate"), "renewal": ("update_law",)}

# an update law as written in a page table: name(arguments), each argument a number or name=number
_LAW = re.compile(r"\s*([A-Za-z]+)\s*\((.*)\)\s*\Z", re.S)
_ARG = re.compile(r"\s*(?:([A-Za-z_]+)\s*=\s*)?([^=,]+?)\s*\Z", re.S)


def parse_law(text: Any) -> Any:
    """The update law a table cell names, e.g. ``"pareto(3, 1)"`` or ``"Pareto(alpha=3.0, beta=1.0)"`` (the
    laws' own ``repr``): ValueError saying what is wrong."""
    from ..blind import Constant, Exponential, Pareto, Uniform

    laws = {"exponential": Exponential, "pareto": Pareto, "constant": Constant, "uniform": Uniform}
    m = _LAW.match(text) if isinstance(text, str) else None
    if m is None or m.group(1).lower() not in laws:
        raise ValueError(f"{text!r} is not an update law: write one of "
                         f"{', '.join(f'{k}(...)' for k in laws)}, e.g. 'pareto(3, 1)'")
    cls = laws[m.group(1).lower()]
    args: list[float] = []
    kwargs: dict[str, float] = {}
    for part in m.group(2).split(",") if m.group(2).strip() else []:
        a = _ARG.match(part)
        try:
            value = float(a.group(2)) if a else math.nan
        except ValueError:
            value = math.nan
        if a is None or math.isnan(value):
            raise ValueError(f"{text!r}: {part.strip()!r} is not a number (or name=number)")
        if a.group(1):
            kwargs[a.group(1)] = value
        elif kwargs:
            raise ValueError(f"{text!r}: a plain number after a name=number")
        else:
            args.append(value)
    try:
        inspect.signature(cls).bind(*args, **kwargs)
    except TypeError:
        params = ", ".join(inspect.signature(cls).parameters)
        raise ValueError(f"{text!r}: {m.group(1).lower()} takes ({params})") from None
    try:
        return cls(*args, **kwargs)
    except ValueError as e:
        raise ValueError(f"{text!r}: {e}") from None


def read_pages(path: str, page_column: str, needed: tuple[str, ...], command: str) -> Any:
    """The page table, checked: every needed column, no missing or repeated URL, finite rates >= 0 (errors name
    the file's line and column)."""
    import pandas as pd

    columns = [page_column, *needed]
    chunks = list(read_chunks(path, columns, command))
    table = pd.concat(chunks, ignore_index=True) if len(chunks) > 1 else chunks[0]
    if table.shape[0] == 0:
        raise CommandError(f"{path}: the table has no page")

    where = functools.partial(_where, path)

    urls = table[page_column]
    missing = np.flatnonzero(urls.isna().to_numpy())
    if missing.size:
        raise CommandError(f"{path}, {where(int(missing[0]))}, column {page_column!r}: the URL is missing")
    dup = np.flatnonzero(urls.duplicated().to_numpy())
    if dup.size:
        i = int(dup[0])
        first = int(np.flatnonzero((urls == urls.iloc[i]).to_numpy())[0])
        raise CommandError(f"{path}, {where(i)}, column {page_column!r}: {urls.iloc[i]!r} is listed twice "
                           f"(first on {where(first)})")
    optional = ["importance"] if "importance" in table.columns else []
    for name in [*(n for n in needed if n != "update_law"), *optional]:
        values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if name == "recall":
            bad |= values > 1
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = "in [0, 1]" if name == "recall" else "a finite number >= 0"
            v = table[name].iloc[i]
            detail = "the value is missing" if pd.isna(v) else \
                f"{v.item() if isinstance(v, np.generic) else v!r} is not {what}"
            raise CommandError(f"{path}, {where(i)}, column {name!r}: {detail}")
        table[name] = values
    if not optional:
        table["importance"] = 1.0
    return table


def _where(path: str, i: int) -> str:
    return f"row {i + 1}" if table_format(path) == "parquet" else f"line {i + 2}"


def read_laws(table: Any, path: str) -> list[Any]:
    """The update law of each page (column ``update_law``, rewritten in the laws' own form); errors name the
    file's line."""
    import pandas as pd

    cells = table["update_law"].tolist()
    seen: dict[Any, Any] = {}  # pages share a few laws: each text parsed once
    for i, text in enumerate(cells):
        if text not in seen:
            try:
                seen[text] = parse_law(text)
            except ValueError as e:
                detail = "the value is missing" if not isinstance(text, str) and pd.isna(text) else str(e)
                raise CommandError(f"{path}, {_where(path, i)}, column 'update_law': {detail}") from None
    table["update_law"] = [repr(seen[text]) for text in cells]
    return [seen[text] for text in cells]


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..pages import PageModel
    from ..rates import freshness, optimal_rates
    from ..thresholds import optimal_thresholds

    table = read_pages(args.pages, args.page_column, _REQUIRED[args.model], "rates")
    weight = table["importance"].to_numpy()
    delta: Any
    if args.model == "renewal":
        delta = read_laws(table, args.pages)
        table["change_rate"] = np.array([law.rate for law in delta])
    else:
        delta = table["change_rate"].to_numpy()
    columns = [args.page_column, *(["update_law"] if args.model == "renewal" else []), "change_rate", "importance"]
    try:
        if args.model == "signals":
            res = optimal_thresholds(PageModel(delta, weight, table["recall"].to_numpy(),
                                               table["false_rate"].to_numpy()), args.bandwidth)
            plan = {"crawl_rate": res.frequencies, "threshold": res.thresholds}
            total, label = res.accuracy, "accuracy (importance-weighted fraction of requests served fresh)"
        else:
            rate = optimal_rates(delta, weight, args.bandwidth, model=args.model, min_rate=args.min_rate,
                                 max_rate=args.max_rate)
            plan = {"crawl_rate": rate,
                    "freshness": freshness(rate, delta, weight, model=args.model, per_page=True)}
            total = float(freshness(rate, delta, weight, model=args.model))
            label = "freshness (importance-weighted fraction of time fresh)"
    except ValueError as e:
        raise CommandError(f"{args.pages}: {e}") from None
    result = table[columns].assign(**plan)
    write_output(args.output, lambda f: write_table(result, args.format, f), out)
    if args.plot:
        save_plot(args.plot, lambda ax: _plot(ax, result, args), "rates")
    if not args.quiet:
        print(f"freshcore rates: {len(result)} pages, bandwidth {args.bandwidth:g}, model {args.model}: expected "
              f"{label} {total:.6f}", file=sys.stderr)
    return 0


def _plot(ax: Any, plan: Any, args: argparse.Namespace) -> None:
    """Crawl rate against change rate (log-log), the marker's area growing with importance."""
    ok = plan[(plan["change_rate"] > 0) & np.isfinite(plan["change_rate"])]
    size = 12.0 * ok["importance"] / max(float(ok["importance"].mean()), 1e-300)
    ax.scatter(ok["change_rate"], np.maximum(ok["crawl_rate"], 1e-300), s=np.clip(size, 2.0, 200.0), alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("change rate")
    ax.set_ylabel("crawl rate")
    never = int((ok["crawl_rate"] <= 0).sum())
    ax.set_title(f"{args.model} model, bandwidth {args.bandwidth:g}: {len(ok)} pages ({never} never crawled)")
