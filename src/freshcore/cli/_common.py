"""What every ``freshcore`` command shares: option types, plain help text, reading tables, writing outputs
atomically, and user errors reported as one line (exit status 1) instead of a traceback."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TextIO, cast

import numpy as np


class CommandError(Exception):
    """A user error (a bad file, column or value): ``main`` prints ``freshcore <command>: <message>`` and exits
    with status 1."""


def positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {v}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not (v > 0 and np.isfinite(v)):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text}")
    return v


def command_parser(sub: Any, name: str, help: str, doc: str, examples: str) -> argparse.ArgumentParser:
    """A subcommand's parser: ``help`` in the command list, its module docstring (after the first paragraph)
    as plain text and its examples as the description."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=plain_text(doc.split("\n\n", 1)[1]) + "\n\n" + examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def add_output(p: argparse.ArgumentParser, what: str, formats: tuple[str, ...] | None = ("csv", "json")) -> None:
    """``-o/--output`` (``-`` for standard output, else written atomically) and ``--format`` (first: default)."""
    p.add_argument("-o", "--output", default="-", metavar="FILE",
                   help=f"where to write the {what} (default -: standard output); written atomically")
    if formats:
        p.add_argument("--format", choices=formats, default=formats[0],
                       help=f"{formats[0]} (default), " + " or ".join(formats[1:]) + " (JSON: one row per line)")


def add_plot(p: argparse.ArgumentParser, what: str) -> None:
    """``--plot FILE``: also draw ``what`` (PNG, SVG or PDF by the name; matplotlib, the ``plot`` extra)."""
    p.add_argument("--plot", default=None, metavar="FILE",
                   help=f"also draw {what} to FILE (.png, .svg, .pdf; needs matplotlib)")


def add_verbosity(p: argparse.ArgumentParser, quiet: str) -> None:
    """``-q/--quiet`` (what it silences: ``quiet``) and ``-v/--verbose`` (say what was done and how long it
    took, on standard error)."""
    p.add_argument("-q", "--quiet", action="store_true", help=quiet)
    p.add_argument("-v", "--verbose", action="store_true", help="say what was done and how long it took")


def add_pages_bandwidth(p: argparse.ArgumentParser, horizon_help: str) -> None:
    """The page table, ``--bandwidth`` and ``--horizon`` of the commands that run a policy over time."""
    p.add_argument("pages", metavar="PAGES", help="the page table: a .csv or .parquet file")
    p.add_argument("--bandwidth", type=positive_float, required=True, help="crawls per unit of time")
    p.add_argument("--horizon", type=positive_float, required=True, help=horizon_help)


def plain_text(doc: str) -> str:
    """A docstring's reST as plain text for ``--help``: no ``literal`` quotes, **bold**, :role:`x` markup."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", doc)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*", r"\1", text)
    return text


def pandas(command: str) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise CommandError(f"reading crawl logs needs pandas: pip install 'freshcore[logs]' (for {command})") from None
    return pd


def table_format(path: str) -> str:
    """"parquet" or "csv" from a file name (``-`` is CSV on standard input)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    return "parquet" if ".parquet" in suffixes or ".pq" in suffixes else "csv"


def read_chunks(path: str, columns: list[str], command: str, chunk_rows: int = 1_000_000,
                optional: tuple[str, ...] = ()) -> Iterator[Any]:
    """A CSV or Parquet table as DataFrame chunks of ``chunk_rows`` rows (only one in memory at a time), with
    ``columns`` (required) and those of ``optional`` the table has.

    Errors name the file: a missing or unreadable path, a table without one of ``columns``, a truncated or
    corrupted Parquet file.
    """
    pd = pandas(command)
    if path != "-" and not os.path.exists(path):
        raise CommandError(f"{path}: no such file")
    if table_format(path) == "parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise CommandError(f"{path}: reading Parquet needs pyarrow: pip install 'freshcore[logs]'") from None
        try:
            pf = pq.ParquetFile(path)
        except Exception as e:  # pyarrow raises ArrowInvalid / OSError for bad files
            raise CommandError(f"{path}: not a readable Parquet file ({_first_line(e)})") from None
        missing = [c for c in columns if c not in pf.schema_arrow.names]
        if missing:
            raise CommandError(f"{path}: no column {missing[0]!r} (its columns: "
                               f"{', '.join(repr(n) for n in pf.schema_arrow.names)})")
        try:
            wanted = [*columns, *(c for c in optional if c in pf.schema_arrow.names and c not in columns)]
            for batch in pf.iter_batches(batch_size=chunk_rows, columns=wanted):
                yield batch.to_pandas()
        except Exception as e:
            raise CommandError(f"{path}: not a readable Parquet file ({_first_line(e)})") from None
        return
    try:
        reader = pd.read_csv(path if path != "-" else _stdin(), chunksize=chunk_rows, skip_blank_lines=False,
                             skipinitialspace=True)
        first = True
        for chunk in reader:
            if first:
                missing = [c for c in columns if c not in chunk.columns]
                if missing:
                    raise CommandError(f"{path}: no column {missing[0]!r} (its columns: "
                                       f"{', '.join(repr(str(n)) for n in chunk.columns)})")
                first = False
            yield chunk
        if first:
            raise CommandError(f"{path}: the file is empty")
    except pd.errors.EmptyDataError:
        raise CommandError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as e:
        raise CommandError(f"{path}: not a readable CSV file ({_first_line(e)})") from None
    except (UnicodeDecodeError, OSError) as e:
        raise CommandError(f"{path}: cannot be read ({_first_line(e)})") from None


def _stdin() -> IO[str]:
    import sys

    return sys.stdin


def _first_line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def write_output(path: str, write: Callable[[TextIO], None], out: TextIO) -> None:
    """Write a text output to ``path`` atomically (a failed run leaves no partial file), or to ``out`` when
    ``path`` is ``-``."""
    from .._statefile import atomic_file

    if path == "-":
        write(out)
        return
    target = Path(path)
    if not target.parent.exists():
        raise CommandError(f"{path}: no such folder {str(target.parent)!r}")
    try:
        with atomic_file(target, "w", newline="") as f:
            write(cast(TextIO, f))
    except OSError as e:
        raise CommandError(f"{path}: cannot be written ({e.strerror or e})") from None


def write_table(table: Any, fmt: str, f: TextIO) -> None:
    """A DataFrame as CSV (10 significant digits) or JSON lines (inf as "inf", NaN as null)."""
    import json

    if fmt == "csv":
        table.to_csv(f, index=False, float_format="%.10g")
        return
    for rec in table.to_dict(orient="records"):
        f.write(json.dumps({k: _jsonable(v) for k, v in rec.items()}) + "\n")


def _jsonable(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None if np.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def check_plot(path: str, command: str) -> None:
    """Before any work: matplotlib is there, the file type is one it writes, the folder exists."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise CommandError(f"--plot needs matplotlib: pip install 'freshcore[plot]' (for {command})") from None
    if Path(path).suffix.lower() not in (".png", ".svg", ".pdf"):
        raise CommandError(f"{path}: --plot writes .png, .svg or .pdf files")
    if not Path(path).parent.exists():
        raise CommandError(f"{path}: no such folder {str(Path(path).parent)!r}")


def save_plot(path: str, draw: Callable[[Any], None], command: str) -> None:
    """Draw a figure with ``draw(ax)`` and write it to ``path`` (PNG, SVG or PDF by its suffix) atomically.

    matplotlib is an optional dependency: without it this is a :class:`CommandError` saying how to get it.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise CommandError(f"--plot needs matplotlib: pip install 'freshcore[plot]' (for {command})") from None
    from .._statefile import atomic_file

    fmt = Path(path).suffix.lower().lstrip(".") or "png"
    if fmt not in ("png", "svg", "pdf"):
        raise CommandError(f"{path}: --plot writes .png, .svg or .pdf files")
    target = Path(path)
    if not target.parent.exists():
        raise CommandError(f"{path}: no such folder {str(target.parent)!r}")
    fig, ax = plt.subplots(figsize=(7.0, 4.5), layout="constrained")
    try:
        draw(ax)
        with atomic_file(target, "wb") as f:
            fig.savefig(f, format=fmt, dpi=120)
    finally:
        plt.close(fig)
