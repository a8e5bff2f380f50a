"""The ``freshcore`` command.

Commands (``freshcore COMMAND --help`` describes each, with an example):

- ``demo``: the whole pipeline on a built-in synthetic web (:mod:`freshcore.cli.demo`);
- ``estimate``: per-URL change rates from a crawl log, CSV or Parquet (:mod:`freshcore.cli.estimate`);
- ``rates``: optimal crawl rates (or signal thresholds) for a page table under a bandwidth
  (:mod:`freshcore.cli.rates`);
- ``schedule``: the crawl order for a horizon, with change signals, continuing a saved scheduler
  (:mod:`freshcore.cli.schedule`);
- ``simulate``: crawl policies judged on the same simulated events (:mod:`freshcore.cli.simulate`);
- ``reproduce``: the papers' experiments beside the numbers SPEC lists (:mod:`freshcore.cli.reproduce`).

Exit status: 0 on success, 1 when the input is wrong (a missing file or column, an unreadable value: one
line naming the file, line and column, no traceback), 2 for a usage error (unknown option or value).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from .. import __version__
from ..crawl_logs import LogError
from . import demo, estimate, rates, reproduce, schedule, simulate
from ._common import CommandError, check_plot
from .demo import synthetic_signals, synthetic_web

__all__ = ["build_parser", "main", "synthetic_signals", "synthetic_web"]


def build_parser() -> argparse.ArgumentParser:
    """The ``freshcore`` argument parser, one subcommand per module of this package."""
    parser = argparse.ArgumentParser(
        prog="freshcore", description="Keep a crawler's copy of the web fresh.",
        epilog="exit status: 0 success, 1 bad input (one line naming the file and place), 2 usage error",
    )
    parser.add_argument("--version", action="version", version=f"freshcore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo.add_parser(sub)
    estimate.add_parser(sub)
    rates.add_parser(sub)
    schedule.add_parser(sub)
    simulate.add_parser(sub)
    reproduce.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``freshcore`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = sys.stdout if out is None else out
    if args.command is None:
        parser.print_help(out)
        return 2
    t0 = time.perf_counter()
    try:
        if getattr(args, "plot", None):
            check_plot(args.plot, args.command)
        status = int(args.run(args, out))
        if getattr(args, "verbose", False):
            print(f"freshcore {args.command}: done in {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        return status
    except (CommandError, LogError) as e:
        print(f"freshcore {args.command}: {e}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # (the reader of our output went away, as `| head` does: not an error)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
