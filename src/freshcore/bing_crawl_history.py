"""Reading the public Bing crawl-history dataset (Kolobov et al.) into freshcore's crawl-log layout.

The dataset released with Kolobov, Lubetzky, Peres and Horvitz (SIGIR 2019) and Kolobov, Peres, Lubetzky and
Horvitz (NeurIPS 2019) records 14 weeks of daily crawls of ~18 million URLs by Bing's crawler, as TSV files
without a header:

- ``urlid_offset_history.txt``: a URL id, the offset in days of its first crawl from the start of the
  collection, and its history ``[[interval, changed], ...]``: for each later crawl, the days since the
  previous crawl and 1 if the page had changed since then, else 0;
- ``urlid_imp.txt``: a URL id and Bing's importance score of the URL;
- ``urlid_chrate_compl_obs_hist.txt``: for the ~4 % of URLs whose changes were observed completely (from
  their sitemaps), a URL id and its Poisson change rate per day.

:func:`read_history` turns the history into crawl-log rows (``url`` = the URL id, ``time`` in days since the
start of the collection, ``changed``), in chunks, for :func:`freshcore.estimate_log_rates`;
:func:`read_pages` gives each URL's importance and, where the dataset has it, its complete-observation
change rate (``reference_rate``), to compare estimates with.  The ``freshcore estimate --layout bing DIR``
command does both.

References
----------
.. [1] A. Kolobov, E. Lubetzky, Y. Peres, E. Horvitz, "Optimal freshness crawl under politeness
   constraints", SIGIR 2019.
.. [2] A. Kolobov, Y. Peres, C. Lu, E. Horvitz, "Staying up to date with online content changes using
   reinforcement learning for scheduling", NeurIPS 2019.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["HISTORY_FILE", "IMPORTANCE_FILE", "RATES_FILE", "read_history", "read_pages"]

HISTORY_FILE = "urlid_offset_history.txt"
IMPORTANCE_FILE = "urlid_imp.txt"
RATES_FILE = "urlid_chrate_compl_obs_hist.txt"


class BingFormatError(ValueError):
    """A line of a Bing dataset file that does not have its layout (``path`` and 1-based ``line`` say where)."""

    def __init__(self, path: str, line: int, detail: str) -> None:
        super().__init__(f"{path}, line {line}: {detail}")
        self.path = path
        self.line = line
        self.detail = detail


def _path(folder_or_file: str | os.PathLike[str], name: str) -> str:
    p = os.fspath(folder_or_file)
    return os.path.join(p, name) if os.path.isdir(p) else p


def read_history(folder: str | os.PathLike[str], *, chunk_rows: int = 1_000_000) -> Iterator[Any]:
    """The crawl history of the dataset as crawl-log DataFrames of about ``chunk_rows`` rows.

    Parameters
    ----------
    folder : path
        The dataset's folder (holding ``urlid_offset_history.txt``) or that file itself.
    chunk_rows : int
        Rows per DataFrame (whole URLs: a chunk ends at the end of a URL's history).

    Yields
    ------
    pandas.DataFrame
        Columns ``url`` (the URL id, int64), ``time`` (days since the collection started, float64: the first
        crawl's offset, then the running sum of the intervals) and ``changed`` (uint8; 0 on a first crawl).

    Raises
    ------
    BingFormatError
        A line without three tab-separated fields, an offset or interval that is not a finite number >= 0
        (an interval must be > 0), or a change indicator other than 0/1; the error names the file and line.
    FileNotFoundError
        If the file does not exist.
    """
    import pandas as pd

    path = _path(folder, HISTORY_FILE)
    urls: list[np.ndarray] = []
    times: list[np.ndarray] = []
    flags: list[np.ndarray] = []
    rows = 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            url, offset, intervals, changed = _parse_history_line(line, path, number)
            t = np.empty(intervals.shape[0] + 1)
            t[0] = offset
            np.cumsum(intervals, out=t[1:])
            t[1:] += offset
            urls.append(np.full(t.shape[0], url, dtype=np.int64))
            times.append(t)
            flags.append(np.r_[np.uint8(0), changed])
            rows += t.shape[0]
            if rows >= chunk_rows:
                yield pd.DataFrame({"url": np.concatenate(urls), "time": np.concatenate(times),
                                    "changed": np.concatenate(flags)})
                urls, times, flags, rows = [], [], [], 0
    if urls:
        yield pd.DataFrame({"url": np.concatenate(urls), "time": np.concatenate(times),
                            "changed": np.concatenate(flags)})


def _parse_history_line(line: str, path: str, number: int) -> tuple[int, float, np.ndarray, np.ndarray]:
    fields = line.rstrip("\n").split("\t")
    if len(fields) != 3:
        raise BingFormatError(path, number, f"expected 3 tab-separated fields (URL id, offset, history), got "
                                            f"{len(fields)}")
    try:
        url = int(fields[0])
    except ValueError:
        raise BingFormatError(path, number, f"the URL id {fields[0]!r} is not an integer") from None
    try:
        offset = float(fields[1])
    except ValueError:
        raise BingFormatError(path, number, f"the first crawl's offset {fields[1]!r} is not a number") from None
    if not (np.isfinite(offset) and offset >= 0):
        raise BingFormatError(path, number, f"the first crawl's offset {fields[1]!r} is not a number >= 0")
    body = fields[2].strip()
    if not (body.startswith("[") and body.endswith("]")):
        raise BingFormatError(path, number, "the history is not a list [[interval, changed], ...]")
    inner = body[1:-1].replace("[", " ").replace("]", " ").replace(",", " ").split()
    if len(inner) % 2:
        raise BingFormatError(path, number, "the history has an interval without its change indicator")
    try:
        values = np.array(inner, dtype=np.float64).reshape(-1, 2)
    except ValueError:
        raise BingFormatError(path, number, "the history holds something other than numbers") from None
    intervals, changed = values[:, 0], values[:, 1]
    bad = ~(np.isfinite(intervals) & (intervals > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BingFormatError(path, number,
                              f"interval {i + 1} of the history is {float(intervals[i])!r}, not a number > 0")
    bad = (changed != 0) & (changed != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BingFormatError(path, number,
                              f"change indicator {i + 1} of the history is {float(changed[i])!r}, not 0/1")
    return url, offset, intervals, changed.astype(np.uint8)


def read_pages(folder: str | os.PathLike[str]) -> Any:
    """Each URL's importance and, where the dataset has it, its complete-observation change rate.

    Parameters
    ----------
    folder : path
        The dataset's folder, holding ``urlid_imp.txt`` and (optionally) ``urlid_chrate_compl_obs_hist.txt``.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``url`` (the URL id): ``importance`` and ``reference_rate`` (changes per day; NaN for the
        URLs without a complete observation history).
    """
    import pandas as pd

    folder = os.fspath(folder)
    imp = _two_columns(os.path.join(folder, IMPORTANCE_FILE), "importance")
    rates_path = os.path.join(folder, RATES_FILE)
    ref = _two_columns(rates_path, "reference_rate") if os.path.exists(rates_path) else \
        pd.DataFrame({"reference_rate": pd.Series(dtype=np.float64)}, index=pd.Index([], name="url", dtype=np.int64))
    return imp.join(ref, how="outer")


def _two_columns(path: str, name: str) -> Any:
    import pandas as pd

    try:
        table = pd.read_csv(path, sep="\t", header=None, names=["url", name], dtype={"url": np.int64},
                            skip_blank_lines=True)
    except ValueError as e:
        raise BingFormatError(path, 0, f"expected lines 'URL id <tab> number' ({e})") from None
    values = pd.to_numeric(table[name], errors="coerce").to_numpy(dtype=np.float64)
    bad = ~(np.isfinite(values) & (values >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise BingFormatError(path, i + 1, f"{table[name].iloc[i]!r} is not a number >= 0")
    return pd.DataFrame({name: values}, index=pd.Index(table["url"].to_numpy(), name="url"))
