"""``freshcore simulate PAGES --bandwidth B --horizon H``: judge crawl policies on simulated events.

PAGES is a page table as for ``freshcore rates`` (``url``, ``change_rate``, optional ``importance`` as
requests per unit of time, ``recall`` and ``false_rate`` of the change signals).  The discrete-event
simulator draws the changes, requests and signals of these pages once (``--seed``), and every policy of
``--policies`` plays the same events at the same bandwidth: ``ncis`` (the exact scheduler with signals,
Busa-Fekete, Zimmert, György et al. (2025)), ``greedy`` (the same without signals), ``lds`` (low discrepancy
at the periodic optimum's rates), ``round-robin`` and ``nutch`` (Apache Nutch's adaptive schedule).  Each
policy knows the page table as it is.

The table gives, per policy, the accuracy (the fraction of requests served fresh after the burn-in) with its
batch-means standard error, the crawls made and the decisions per second inside the policy; beside them the
analytic accuracy of the continuous optimum with signals (Theorem 2) and without (the periodic optimum).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

import numpy as np

from ._common import (
    CommandError,
    add_output,
    add_pages_bandwidth,
    add_plot,
    add_verbosity,
    command_parser,
    save_plot,
    write_output,
    write_table,
)
from .demo import _POLICIES, _policy_list, _Timed, policy_builders
from .rates import read_pages

EXAMPLES = """examples:
  freshcore simulate pages.csv --bandwidth 10 --horizon 100
  freshcore simulate pages.csv --bandwidth 10 --horizon 100 --policies ncis,lds --seed 3 -o accuracy.csv"""


def add_parser(sub: Any) -> None:
    """The ``simulate`` subcommand and its options."""
    p = command_parser(sub, "simulate", "the accuracy of crawl policies on simulated changes, requests and signals",
                       __doc__, EXAMPLES)
    add_pages_bandwidth(p, "units of time to simulate")
    p.add_argument("--policies", type=_policy_list, default=tuple(_POLICIES), metavar="LIST",
                   help=f"comma-separated policies (default all: {','.join(_POLICIES)})")
    p.add_argument("--burn-in", type=float, default=0.2,
                   help="fraction of the horizon before requests count (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated events (default 0)")
    add_output(p, "table", ("text", "csv", "json"))
    p.add_argument("--page-column", default="url", metavar="NAME", help="column of the URLs (default url)")
    add_plot(p, "each policy's accuracy with its standard error")
    add_verbosity(p, "no progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    import pandas as pd
    from tqdm import tqdm

    from ..pages import PageModel
    from ..policy_simulation import simulate
    from ..rates import freshness, optimal_rates
    from ..thresholds import optimal_thresholds

    if not 0.0 <= args.burn_in < 1.0:
        raise CommandError(f"--burn-in must be in [0, 1), got {args.burn_in}")
    table = read_pages(args.pages, args.page_column, ("change_rate",), "simulate")
    n = table.shape[0]
    extra = {name: table[name].to_numpy(dtype=np.float64) if name in table.columns else np.zeros(n)
             for name in ("recall", "false_rate")}
    delta, mu = table["change_rate"].to_numpy(), table["importance"].to_numpy()
    try:
        pages = PageModel(delta, mu, extra["recall"], extra["false_rate"])
        rows = [("optimum with signals (analytic)", optimal_thresholds(pages, args.bandwidth).accuracy),
                ("optimum, no signals (analytic)",
                 float(freshness(optimal_rates(delta, mu, args.bandwidth, model="periodic"), delta, mu,
                                 model="periodic")))]
        builders = policy_builders(pages, args.bandwidth)
    except ValueError as e:
        raise CommandError(f"{args.pages}: {e}") from None
    records = [{"policy": name, "accuracy": acc, "accuracy_se": np.nan, "crawls": 0, "decisions_per_second": np.nan}
               for name, acc in rows]
    bar = tqdm(args.policies, desc="simulating", unit="policy", file=sys.stderr,
               disable=args.quiet or not sys.stderr.isatty(), leave=False)
    for name in bar:
        policy = _Timed(builders[name]())
        t0 = time.perf_counter()
        res = simulate(policy, pages, args.horizon, rng=np.random.default_rng([args.seed, 2]), burn_in=args.burn_in)
        crawls = len(res.crawl_pages)
        speed = crawls / policy.seconds if policy.seconds > 0 else np.nan
        records.append({"policy": _POLICIES[name], "accuracy": res.accuracy, "accuracy_se": res.accuracy_se,
                        "crawls": crawls, "decisions_per_second": speed, "seconds": time.perf_counter() - t0})
    bar.close()
    result = pd.DataFrame(records).drop(columns="seconds", errors="ignore")
    write_output(args.output, lambda f: _write(result, args, f), out)
    if args.plot:
        save_plot(args.plot, lambda ax: _plot(ax, result, args), "simulate")
    return 0


def _plot(ax: Any, result: Any, args: argparse.Namespace) -> None:
    """Each policy's accuracy with a 2-standard-error bar, the analytic optima as lines."""
    sim = result.iloc[2:]
    ax.bar(np.arange(len(sim)), sim["accuracy"], yerr=2 * sim["accuracy_se"], capsize=4, color="C0", alpha=0.8)
    ax.set_xticks(np.arange(len(sim)), sim["policy"], rotation=20, ha="right")
    for (_, row), color in zip(result.iloc[:2].iterrows(), ("C3", "C2")):
        ax.axhline(row["accuracy"], color=color, lw=1.2, ls="--", label=row["policy"])
    low = float(min(sim["accuracy"].min(), result["accuracy"].iloc[:2].min()))
    ax.set_ylim(max(0.0, low - 0.1), 1.0)
    ax.set_ylabel("accuracy (requests served fresh)")
    ax.set_title(f"{args.horizon:g} units of time, bandwidth {args.bandwidth:g}, seed {args.seed} (bars: ± 2 se)")
    ax.legend(loc="upper right")


def _write(result: Any, args: argparse.Namespace, f: TextIO) -> None:
    if args.format != "text":
        write_table(result, args.format, f)
        return
    f.write(f"{len(result) - 2} policies, {args.horizon:g} units of time, bandwidth {args.bandwidth:g}, seed "
            f"{args.seed}; accuracy: fraction of requests served fresh after {args.burn_in:g} of the horizon\n")
    f.write(f"{'policy':<32s} {'accuracy':>8s} {'± se':>7s} {'crawls':>8s} {'decisions/s':>12s}\n")
    for rec in result.to_dict(orient="records"):
        se = "" if np.isnan(rec["accuracy_se"]) else f"{rec['accuracy_se']:.4f}"
        crawls = "" if not rec["crawls"] else str(rec["crawls"])
        speed = "" if np.isnan(rec["decisions_per_second"]) else f"{rec['decisions_per_second']:,.0f}"
        f.write(f"{rec['policy']:<32s} {rec['accuracy']:>8.4f} {se:>7s} {crawls:>8s} {speed:>12s}\n")
