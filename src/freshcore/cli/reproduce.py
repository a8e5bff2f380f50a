"""``freshcore reproduce NAME``: a paper's experiments, their tables beside the numbers SPEC lists.

NAME is a topic: ``estimators`` (RMSE of the online estimators and the MLE, Avrachenkov, Patil and Thoppe
(2022)), ``rates`` (the optimal rates' check distribution), ``scheduler`` (the scheduler against the
continuous optimum, Fig. 2 of Busa-Fekete, Zimmert, György et al. (2025)), ``signals`` (with change signals,
their Fig. 4), ``blind`` (the blind-sampling estimators, Table I of Li, Cline and Loguinov (2017)).
The code is ``freshcore.reproduce``, the same the tests and benchmarks run.  ``--quick``
runs a smaller version (seconds instead of minutes); ``--plot`` draws the main table's numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

import numpy as np

from ._common import add_output, add_plot, add_verbosity, command_parser, save_plot, write_output

EXAMPLES = """examples:
  freshcore reproduce estimators
  freshcore reproduce signals --quick --plot fig4.png
  freshcore reproduce scheduler -o fig2.txt"""


def add_parser(sub: Any) -> None:
    """The ``reproduce`` subcommand and its options."""
    from ..reproduce import EXPERIMENTS

    p = command_parser(sub, "reproduce", "the papers' experiments, printed beside the numbers SPEC lists",
                       __doc__, EXAMPLES)
    p.add_argument("name", choices=tuple(EXPERIMENTS), metavar="NAME",
                   help=f"the experiments: {', '.join(EXPERIMENTS)}")
    p.add_argument("--quick", action="store_true", help="a smaller run (fewer sizes, runs or a shorter horizon)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulated runs (default 0)")
    add_output(p, "tables", None)
    add_plot(p, "the main table")
    add_verbosity(p, "do not print the time taken")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from ..reproduce import run as reproduce

    t0 = time.perf_counter()
    tables = reproduce(args.name, quick=args.quick, seed=args.seed)
    text = "\n\n".join(t.text() for t in tables) + "\n"
    def write(f: TextIO) -> None:
        f.write(text)

    write_output(args.output, write, out)
    if args.plot:
        save_plot(args.plot, lambda ax: _plot(ax, tables[0], args.name), "reproduce")
    if not args.quiet:
        print(f"freshcore reproduce {args.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


def _plot(ax: Any, table: Any, name: str) -> None:
    """The table's ``series@x`` numbers as lines over x (log scales where they span decades), else bars."""
    series: dict[str, list[tuple[float, float]]] = {}
    for key, v in table.values.items():
        if "@" in key and not key.startswith(("se ", "max|")):
            label, x = key.rsplit("@", 1)
            series.setdefault(label, []).append((float(x), float(v)))
    if series:
        for label, pts in series.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        xs = [p[0] for pts in series.values() for p in pts]
        if max(xs) / min(xs) >= 10:
            ax.set_xscale("log")
        ax.set_xlabel({"estimators": "k (crawls)", "blind": "T (window)"}.get(name, "m (pages)"))
        ax.set_ylabel({"estimators": "RMSE", "blind": "WMRD, KS"}.get(name, "accuracy"))
        if name in ("estimators", "blind"):
            ax.set_yscale("log")
        ax.legend()
    else:
        keys = [k for k in table.values if "mean" in k and "accuracy" in k]
        ax.bar(np.arange(len(keys)), [table.values[k] for k in keys])
        ax.set_xticks(np.arange(len(keys)), keys)
        ax.set_ylabel("accuracy")
    ax.set_title(table.title.split(":")[0], fontsize=10)
