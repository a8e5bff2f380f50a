"""Crawl logs in: per-page change-rate estimates from a long-format crawl log.

A crawl log has one row per crawl: the page (a URL or any other key), the time of the crawl, and whether
the crawl saw the page changed since the previous crawl of that page.  Pages are crawled at irregular
times, each as often as it is, so the log is ragged: :func:`estimate_log_rates` sorts the rows of each
page by time, derives the intervals between its consecutive crawls, and estimates each page's change
rate from them with the interval-aware maximum-likelihood estimator (eq. (16) of Avrachenkov et al.
(2022)), with a confidence interval from the observed information.

Times may be numbers (the rates are then per unit of those numbers), ``datetime64`` or pandas
timestamps, or ISO 8601 strings (the rates are then per ``unit``, a day by default).  The first crawl of a
page only starts its first interval: its ``changed`` flag is not used.

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web pages",
   Performance Evaluation 153, 2022.
.. [2] J. Cho, H. Garcia-Molina, "Estimating frequency of change", ACM Transactions on Internet
   Technology 3(3), 2003.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from ._mle import mle_segments, mm_segments
from ._papers import AVRACHENKOV_2022, CHO_GARCIA_MOLINA_2003, cites
from ._validation import check_choice, check_scalar

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LogError", "LogRates", "SingleCrawlWarning", "estimate_log_rates", "log_intervals"]

_UNITS = {"day": 86400.0, "hour": 3600.0, "minute": 60.0, "second": 1.0}
_METHODS = ("mle", "mm")


class LogError(ValueError):
    """A crawl log with a bad row: ``row`` (0-based, in the whole log) and ``field`` ("page", "time",
    "changed" or "fingerprint") say where, and ``detail`` what, for a caller that reports file lines and
    column names (the message says all three)."""

    def __init__(self, message: str, *, row: int, field: str, detail: str) -> None:
        super().__init__(message)
        self.row = row
        self.field = field
        self.detail = detail


class SingleCrawlWarning(UserWarning):
    """Some pages of a crawl log were crawled once: no interval, so no estimate (their rate is NaN)."""


@dataclass(frozen=True)
class LogRates:
    """Per-page estimates from a crawl log (:func:`estimate_log_rates`), one entry per page, pages sorted.

    Attributes
    ----------
    page : ndarray
        The page keys, sorted.
    change_rate : ndarray of float
        The estimate, per unit of time (NaN for a page crawled once).
    ci_low, ci_high : ndarray of float
        The confidence interval (``method="mle"``; NaN for ``"mm"``): on the log scale from the observed
        information where the estimate is finite and positive; ``[0, z^2/(2 S0)]`` (likelihood ratio)
        where no change was seen; ``[lower, inf]`` (likelihood ratio) where every crawl saw one.
    n_intervals : ndarray of int
        Intervals observed (crawls after the first).
    n_changes : ndarray of int
        Intervals that ended in a detected change.
    clipped : ndarray of bool
        Estimates set to the cap ``upper`` (every crawl saw a change, or the root exceeded the cap).
    recall, false_rate : ndarray of float, or None
        With signal counts in the log: each page's signal recall and false-signal rate (per unit of time),
        fitted given its estimated change rate (:func:`freshcore.fit_signal_model`); NaN where the rate is
        0, the cap or missing.
    """

    page: np.ndarray
    change_rate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_intervals: np.ndarray
    n_changes: np.ndarray
    clipped: np.ndarray
    recall: np.ndarray | None = None
    false_rate: np.ndarray | None = None

    def to_frame(self, page_column: str = "url") -> pd.DataFrame:
        """The estimates as a pandas DataFrame indexed by page (pandas is an optional dependency)."""
        pd = _pandas("LogRates.to_frame")
        return pd.DataFrame(
            {"change_rate": self.change_rate, "ci_low": self.ci_low, "ci_high": self.ci_high,
             "n_intervals": self.n_intervals, "n_changes": self.n_changes, "clipped": self.clipped,
             **({} if self.recall is None else {"recall": self.recall, "false_rate": self.false_rate})},
            index=pd.Index(self.page, name=page_column),
        )

    def __len__(self) -> int:
        return int(self.page.shape[0])


def _pandas(caller: str) -> Any:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(f"{caller} needs pandas: pip install 'freshcore[logs]'.") from None
    return pd


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "iloc")


def _column(log: Any, name: str, what: str, caller: str) -> np.ndarray:
    if name not in log.columns:
        cols = ", ".join(repr(str(c)) for c in log.columns)
        raise ValueError(f"{caller}: the log has no {what} column {name!r} (its columns: {cols}); name it with "
                         f"{what}_column=.")
    col = log[name]
    if getattr(col.dtype, "tz", None) is not None:  # timestamps with a time zone: in UTC, as datetime64
        return col.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")
    return col.to_numpy()


def _page_codes(pages: np.ndarray, caller: str, row0: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique page keys and each row's code (its index among them)."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None:
        codes, uniques = pd.factorize(pages, sort=True, use_na_sentinel=True)
        if codes.size and codes.min() < 0:
            i = int(np.flatnonzero(codes < 0)[0])
            raise LogError(f"The 'pages' of {caller} must not be missing; row {row0 + i} is {_key(pages[i])!r}.",
                           row=row0 + i, field="page", detail="the page is missing")
        return np.asarray(uniques), codes.astype(np.intp, copy=False)
    if pages.dtype.kind == "f" and np.isnan(pages).any():
        i = int(np.flatnonzero(np.isnan(pages))[0])
        raise LogError(f"The 'pages' of {caller} must not be missing; row {row0 + i} is {_key(pages[i])!r}.",
                       row=row0 + i, field="page", detail="the page is missing")
    try:
        uniques, codes = np.unique(pages, return_inverse=True)
    except TypeError:  # (keys of mixed types: compared as strings)
        uniques, codes = np.unique(pages.astype(str), return_inverse=True)
    return uniques, codes.astype(np.intp, copy=False)


def _times(times: Any, unit: Any, caller: str, row0: int = 0) -> tuple[np.ndarray, str, float]:
    """The times as float64 or int64 nanoseconds, their kind ("f", "M" or "m": numbers, dates, durations), and
    the length of the output unit in those numbers.  Rows are numbered from ``row0`` in messages."""
    t = np.asarray(times)
    if t.ndim != 1:
        raise ValueError(f"The 'times' of {caller} must be one-dimensional. Got shape {t.shape} instead.")
    if t.dtype.kind in "OUS":
        try:
            t = _parse_times(t)
        except (ValueError, TypeError, OverflowError):
            for i, v in enumerate(t):
                try:
                    np.datetime64(v, "ns")
                except (ValueError, TypeError, OverflowError):
                    raise LogError(f"The 'times' of {caller} must be numbers or timestamps; row {row0 + i} is "
                                   f"{_key(v)!r}, which is neither.", row=row0 + i, field="time",
                                   detail=f"{_key(v)!r} is not a number or a timestamp") from None
            raise
    if t.dtype.kind in "Mm":
        kind = t.dtype.kind
        ns = t.astype("datetime64[ns]" if kind == "M" else "timedelta64[ns]").view(np.int64)
        nat = ns == np.iinfo(np.int64).min
        if nat.any():
            row = row0 + int(np.flatnonzero(nat)[0])
            raise LogError(f"The 'times' of {caller} must not be missing; row {row} is NaT.", row=row, field="time",
                           detail="the time is missing")
        if unit is None:
            unit = "day"
        if isinstance(unit, str):
            length = _UNITS[check_choice(unit, "unit", caller, tuple(_UNITS))] * 1e9
        else:
            length = float(np.timedelta64(unit, "ns").astype(np.int64))
            if not length > 0:
                raise ValueError(f"The 'unit' parameter of {caller} must be a positive duration. Got {unit!r}.")
        return ns, kind, length
    if t.dtype.kind not in "iuf":
        raise TypeError(f"The 'times' of {caller} must be numbers or timestamps. Got dtype {t.dtype}.")
    if unit is not None:
        raise ValueError(f"The 'unit' parameter of {caller} applies to timestamps; numeric times are already in "
                         "their own unit (the rates are per that unit).")
    t = t.astype(np.float64)
    bad = ~np.isfinite(t)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LogError(f"The 'times' of {caller} must be finite; row {row0 + i} is {_key(t[i])!r}.", row=row0 + i,
                       field="time", detail=f"the time is {_key(t[i])!r}")
    return t, "f", 1.0


def _parse_times(t: np.ndarray) -> np.ndarray:
    """Timestamps given as strings or objects (pandas Timestamps, datetimes) as datetime64[ns] in UTC: with
    pandas, ISO 8601 with any offset ("Z", "+02:00") is converted to UTC; without it, numpy's parser (no offsets)."""
    try:
        import pandas as pd
    except ImportError:
        return t.astype("datetime64[ns]")
    if t.dtype.kind == "O" and t.shape[0] and all(isinstance(v, (int, float)) for v in t[:1]):
        raise TypeError("numbers")
    parsed = pd.to_datetime(pd.Series(t), utc=True, format="ISO8601") if t.dtype.kind in "US" or \
        isinstance(t[0] if t.shape[0] else None, str) else pd.to_datetime(pd.Series(t), utc=True)
    return parsed.dt.tz_localize(None).to_numpy(dtype="datetime64[ns]")


def log_intervals(
    pages: Any, times: Any, changed: Any, *, unit: Any = None, caller: str = "log_intervals"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The intervals of a ragged crawl log, page by page.

    Parameters
    ----------
    pages : array-like, shape (m,)
        The page of each crawl: any keys (URL strings, integer ids...).
    times : array-like, shape (m,)
        The time of each crawl: numbers, ``datetime64``/``timedelta64`` values, pandas timestamps or ISO 8601
        strings.  Rows need not be sorted.
    changed : array-like of 0/1 or bool, shape (m,)
        Whether the crawl saw the page changed since its previous crawl (ignored on a page's first crawl).
    unit : {"day", "hour", "minute", "second"} or numpy.timedelta64, optional
        For timestamps: the unit of time of the intervals (a day by default).  Not allowed with numbers.

    Returns
    -------
    page : ndarray, shape (n_pages,)
        The sorted unique pages.
    starts : ndarray of intp, shape (n_pages + 1,)
        Page p's intervals are ``intervals[starts[p]:starts[p + 1]]``, in time order.
    intervals : ndarray of float64
    changed : ndarray of uint8
        Whether each interval ended in a detected change.

    Raises
    ------
    ValueError
        Arrays of different lengths, a missing page or time, a flag other than 0/1, or two crawls of one
        page at the same time (named by page and time).
    """
    uniques, codes, t, kind, length, c = _encode(pages, times, changed, unit, caller)
    if codes.shape[0] == 0:
        raise ValueError(f"{caller}: the log is empty.")
    return _intervals(uniques, codes, t, kind, length, c, caller)[:4]


def _encode(pages: Any, times: Any, changed: Any, unit: Any, caller: str, row0: int = 0,
            fingerprints: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, float, np.ndarray]:
    """One block of log rows, checked and encoded: (sorted unique pages, each row's page code, times, their kind,
    the unit's length, flags or, with ``fingerprints``, 64-bit hashes of the content fingerprints)."""
    keys = np.asarray(pages)
    if keys.ndim != 1:
        raise ValueError(f"The 'pages' of {caller} must be one-dimensional. Got shape {keys.shape} instead.")
    t, kind, length = _times(times, unit, caller, row0)
    c = _hashes(changed, caller, row0) if fingerprints else _flags(changed, caller, row0)
    if not (keys.shape[0] == t.shape[0] == c.shape[0]):
        what = "fingerprints" if fingerprints else "changed"
        raise ValueError(f"The columns of {caller} must have the same length: pages has {keys.shape[0]}, times "
                         f"{t.shape[0]}, {what} {c.shape[0]}.")
    if keys.shape[0] == 0:
        return keys, np.empty(0, np.intp), t, kind, length, c
    uniques, codes = _page_codes(keys, caller, row0)
    return uniques, codes, t, kind, length, c


def _hashes(fingerprints: Any, caller: str, row0: int) -> np.ndarray:
    """64-bit hashes of content fingerprints (any hashable values; equal values, equal hashes: pandas' hash,
    stable across chunks and runs).  A missing fingerprint is a LogError naming its row."""
    pd = _pandas(caller)
    f = np.asarray(fingerprints)
    if f.ndim != 1:
        raise ValueError(f"The 'fingerprints' of {caller} must be one-dimensional. Got shape {f.shape} instead.")
    missing = np.asarray(pd.isna(f))
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        raise LogError(f"The 'fingerprints' of {caller} must not be missing; row {row0 + i} is {_key(f[i])!r}.",
                       row=row0 + i, field="fingerprint", detail="the fingerprint is missing")
    return np.asarray(pd.util.hash_array(f.astype(object) if f.dtype.kind in "OUS" else f), dtype=np.uint64)


_FLAG_WORDS = {"0": 0, "1": 1, "false": 0, "true": 1}


def _flag(v: Any) -> int:
    """One changed flag from a bool, a number 0/1 or the words 0, 1, true, false (any case); -1 if none."""
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, float, np.number)):
        return int(v) if v in (0, 1) else -1
    if isinstance(v, (str, bytes)):
        word = (v.decode() if isinstance(v, bytes) else v).strip().lower()
        return _FLAG_WORDS.get(word, -1)
    return -1


def _flags(changed: Any, caller: str, row0: int) -> np.ndarray:
    """The changed flags as uint8 0/1; anything else is a LogError naming the first bad row."""
    c = np.asarray(changed)
    if c.dtype.kind == "b":
        return np.ascontiguousarray(c, dtype=np.uint8)
    if c.dtype.kind in "iuf":
        values = np.where((c == 0) | (c == 1), c, -1).astype(np.int8)
    else:
        values = np.fromiter((_flag(v) for v in c), dtype=np.int8, count=c.shape[0])
    bad = values < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LogError(f"The 'changed' of {caller} must be 0/1 (or False/True); row {row0 + i} is {_key(c[i])!r}.",
                       row=row0 + i, field="changed", detail=f"{_key(c[i])!r} is not 0/1 or true/false")
    return np.ascontiguousarray(values.astype(np.uint8))


def _intervals(uniques: np.ndarray, codes: np.ndarray, t: np.ndarray, kind: str, length: float, c: np.ndarray,
               caller: str, fingerprints: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sort the encoded rows by page and time and take each page's intervals (see :func:`log_intervals`); with
    ``fingerprints``, ``c`` holds hashes and a crawl changed where its hash differs from the previous crawl's.
    Also returns, for each interval, the row of the crawl that ends it (to carry other columns along)."""
    order = _page_time_order(codes, t)
    codes_s, t_s, c_s = codes[order], t[order], c[order]
    same = codes_s[1:] == codes_s[:-1]
    steps = np.diff(t_s)
    zero = same & ~(steps > 0)
    if zero.any():
        j = int(np.flatnonzero(zero)[0])
        row = int(order[j + 1])
        key, when = _key(uniques[codes_s[j]]), _time_str(t[row], kind)
        first, second = sorted((int(order[j]), row))
        raise LogError(f"{caller}: page {key!r} has two crawls at time {when} (rows {int(order[j])} and {row}); "
                       "drop or merge them.", row=second, field="time",
                       detail=f"page {key!r} is crawled twice at {when} (also on row {first} of the log)")
    intervals = steps[same].astype(np.float64) / length
    if fingerprints:
        flags = np.ascontiguousarray((c_s[1:] != c_s[:-1])[same].astype(np.uint8))
    else:
        flags = np.ascontiguousarray(c_s[1:][same])
    first = np.r_[0, np.flatnonzero(~same) + 1]  # first row of each page in the sorted log
    starts = np.empty(uniques.shape[0] + 1, dtype=np.intp)
    starts[:-1] = first - np.arange(first.shape[0])
    starts[-1] = intervals.shape[0]
    return uniques, starts, np.ascontiguousarray(intervals), flags, order[1:][same]


def _chunks(log: Any, caller: str) -> Any:
    """The DataFrames of an iterable of chunks (e.g. ``pandas.read_csv(..., chunksize=...)``), checked."""
    if isinstance(log, (str, bytes, dict, np.ndarray)) or not hasattr(log, "__iter__"):
        raise TypeError(f"The 'log' parameter of {caller} must be a pandas DataFrame or an iterable of DataFrames "
                        f"(give pages=, times= and changed= for arrays). Got {type(log).__name__}.")
    for i, chunk in enumerate(log):
        if not _is_frame(chunk):
            raise TypeError(f"The 'log' parameter of {caller} must be a pandas DataFrame or an iterable of "
                            f"DataFrames; its chunk {i} is a {type(chunk).__name__}.")
        yield chunk


def _encode_chunks(chunks: Any, columns: tuple[str, str, str], unit: Any, caller: str, fingerprints: bool = False,
                   signal_column: str | None = None, signals_out: list[np.ndarray] | None = None,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, str, float, np.ndarray]:
    """Encode a log chunk by chunk: page codes (int64), times and flags, 17 bytes a row, plus the distinct
    pages; only one chunk of the log itself is in memory at a time.  With ``signal_column``, each chunk's signal
    counts go to ``signals_out``."""
    pd = _pandas(caller)
    known = pd.Index([], dtype=object)
    keys: list[Any] = []
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    kind0, length0, row0 = "", 1.0, 0
    for chunk in chunks:
        pages = _column(chunk, columns[0], "page", caller)
        times = _column(chunk, columns[1], "time", caller)
        changed = _column(chunk, columns[2], "fingerprint" if fingerprints else "changed", caller)
        uniq, codes, t, kind, length, c = _encode(pages, times, changed, unit, caller, row0, fingerprints)
        if signal_column is not None and signals_out is not None:
            signals_out.append(_counts(_column(chunk, signal_column, "signal", caller), caller, row0))
        if codes.shape[0]:
            if not kind0:
                kind0, length0 = kind, length
            elif kind != kind0:
                raise ValueError(f"{caller}: the times from row {row0} on are {_KINDS[kind]}, those before "
                                 f"{_KINDS[kind0]}.")
            ids = np.asarray(known.get_indexer(uniq), dtype=np.int64)
            new = ids < 0
            if new.any():
                ids[new] = len(keys) + np.arange(int(new.sum()))
                keys.extend(uniq[new].tolist())
                known = known.append(pd.Index(uniq[new], dtype=object))
            parts.append((ids[codes], t, c))
        row0 += int(chunk.shape[0])
    if not parts:
        raise ValueError(f"{caller}: the log is empty.")
    all_keys = np.empty(len(keys), dtype=object)
    all_keys[:] = keys
    try:
        order = np.argsort(all_keys, kind="stable")
    except TypeError:  # (keys of mixed types: compared as strings)
        order = np.argsort(all_keys.astype(str), kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    codes_all = rank[np.concatenate([p[0] for p in parts])]
    return (all_keys[order], codes_all.astype(np.intp, copy=False), np.concatenate([p[1] for p in parts]), kind0,
            length0, np.concatenate([p[2] for p in parts]))


_KINDS = {"f": "numbers", "M": "dates", "m": "durations"}


def _counts(values: Any, caller: str, row0: int) -> np.ndarray:
    """Signal counts as int64 (whole numbers >= 0); anything else is a LogError naming the first bad row."""
    v = np.asarray(values)
    f = v.astype(np.float64) if v.dtype.kind in "iufb" else np.array([_number(x) for x in v], dtype=np.float64)
    bad = ~(np.isfinite(f) & (f >= 0) & (f == np.floor(f)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LogError(f"The 'signals' of {caller} must be whole numbers >= 0; row {row0 + i} is {_key(v[i])!r}.",
                       row=row0 + i, field="signals", detail=f"{_key(v[i])!r} is not a count of signals")
    return f.astype(np.int64)


def _number(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _time_str(t: Any, kind: str) -> str:
    """One encoded time as the user would write it (for messages)."""
    if kind == "M":
        return str(np.datetime_as_string(np.datetime64(int(t), "ns"), unit="auto"))
    if kind == "m":
        return f"{int(t) / 1e9:g} s"
    return repr(_key(t))


def _page_time_order(codes: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The row order by page, then time: one argsort of page code << 32 | rank of the time (5 times faster
    than np.lexsort at 10^6 rows); lexsort past 2**31 rows."""
    m = t.shape[0]
    if m >= 2**31:
        return np.lexsort((t, codes))
    key = np.empty(m, dtype=np.int64)  # (built in place: three arrays of 8 bytes a row at most)
    key[np.argsort(t)] = np.arange(m, dtype=np.int64)
    key |= codes.astype(np.int64) << 32
    return np.argsort(key)


def _key(x: Any) -> Any:
    """A page key as the user wrote it (a numpy scalar as its Python value)."""
    return x.item() if isinstance(x, np.generic) else x


@overload
def estimate_log_rates(
    log: pd.DataFrame, *, pages: None = None, times: None = None, changed: None = None, fingerprints: None = None,
    signals: None = None, method: str = ..., unit: Any = ..., confidence: float = ..., upper: float | None = ...,
    page_column: str = ..., time_column: str = ..., changed_column: str = ..., fingerprint_column: str | None = ...,
    signal_column: str | None = ...,
) -> pd.DataFrame: ...


@overload
def estimate_log_rates(
    log: None = None, *, pages: Any, times: Any, changed: Any = ..., fingerprints: Any = ..., signals: Any = ...,
    method: str = ..., unit: Any = ..., confidence: float = ..., upper: float | None = ..., page_column: str = ...,
    time_column: str = ..., changed_column: str = ..., fingerprint_column: str | None = ...,
    signal_column: str | None = ...,
) -> LogRates: ...


@cites(AVRACHENKOV_2022, CHO_GARCIA_MOLINA_2003)
def estimate_log_rates(
    log: Any = None,
    *,
    pages: Any = None,
    times: Any = None,
    changed: Any = None,
    fingerprints: Any = None,
    signals: Any = None,
    method: str = "mle",
    unit: Any = None,
    confidence: float = 0.95,
    upper: float | None = None,
    page_column: str = "url",
    time_column: str = "time",
    changed_column: str = "changed",
    fingerprint_column: str | None = None,
    signal_column: str | None = None,
) -> Any:
    """Change rate of every page of a ragged crawl log, with a confidence interval.

    Parameters
    ----------
    log : pandas.DataFrame, optional
        One row per crawl, with the columns ``page_column``, ``time_column`` and ``changed_column``.  The
        result is then a DataFrame indexed by page.  Without it, give ``pages``, ``times`` and ``changed``.
    pages, times, changed : array-like, shape (m,)
        The log as arrays (see :func:`log_intervals`); the result is then a :class:`LogRates`.
    fingerprints : array-like, shape (m,), optional
        Instead of ``changed``: a fingerprint of each crawl's content (a hash, an ETag, the text...): a crawl
        changed when its fingerprint differs from the page's previous crawl's (compared through 64-bit hashes).
    method : {"mle", "mm"}, default "mle"
        ``"mle"``: the maximum-likelihood estimate from the intervals (eq. (16) of Avrachenkov et al.
        (2022)), consistent under any crawl schedule that does not depend on the changes.  ``"mm"``: moment
        matching (Cho and Garcia-Molina (2003)'s estimator for irregular intervals), no confidence interval.
    unit : {"day", "hour", "minute", "second"} or numpy.timedelta64, optional
        For timestamps, the rates are per this unit (a day by default); numeric times give rates per their
        own unit, and ``unit`` must then be left out.
    confidence : float in (0, 1), default 0.95
        Level of the interval ``[ci_low, ci_high]``.
    upper : float, optional
        Cap of the estimates; default ``1000 / mean(interval)`` per page (as :func:`freshcore.mle_rates`).
    page_column, time_column, changed_column : str
        Column names of ``log``.
    fingerprint_column : str, optional
        A column of content fingerprints of ``log`` to use instead of ``changed_column``.
    signals, signal_column : array-like of whole numbers >= 0, or a column name of ``log``, optional
        The change signals (sitemap pings, feed entries...) received since the page's previous crawl, per crawl:
        then each page's signal recall and false-signal rate are fitted too (columns ``recall``,
        ``false_rate``), ready for ``optimal_thresholds`` or ``freshcore rates --model signals``.

    Returns
    -------
    pandas.DataFrame or LogRates
        Per page (sorted): ``change_rate``, ``ci_low``, ``ci_high``, ``n_intervals``, ``n_changes``,
        ``clipped``.  A page crawled once has no interval: its rate and interval are NaN, and a
        :class:`SingleCrawlWarning` says how many such pages there are.

    Notes
    -----
    Rows are sorted by page and time first (a log need not be ordered); two crawls of a page at the same
    time are an error.  The MLE of each page is the root of
    :math:`\\sum_j I_j\\tau_j/(e^{\\Delta\\tau_j} - 1) = \\sum_j (1 - I_j)\\tau_j`, computed by the compiled
    kernel of :func:`freshcore.mle_rates` (the same bits for the same intervals).  Its interval is
    :math:`\\hat\\Delta e^{\\pm z s}` with :math:`s^{-2} = \\hat\\Delta^2 J`,
    :math:`J = \\sum_j I_j \\tau_j^2 / (4\\sinh^2(\\hat\\Delta\\tau_j/2))` the observed information
    (a Wald interval for :math:`\\log\\Delta`, which stays positive).  Where the estimate is 0 or the cap
    the likelihood has no interior maximum, and the bound that exists comes from the likelihood ratio
    :math:`2(\\ell(\\hat\\Delta) - \\ell(\\Delta)) \\le z^2`.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.crawl_logs import estimate_log_rates
    >>> r = estimate_log_rates(pages=["a", "a", "a", "b", "b"], times=[0.0, 1.0, 2.0, 0.0, 3.0],
    ...                        changed=[0, 1, 0, 0, 1])
    >>> r.page.tolist(), np.round(r.change_rate, 4).tolist(), r.n_intervals.tolist()
    (['a', 'b'], [0.6931, 333.3333], [2, 1])
    """
    caller = "estimate_log_rates"
    frame = log is not None
    by_content = fingerprints is not None or fingerprint_column is not None
    if frame:
        if pages is not None or times is not None or changed is not None or fingerprints is not None:
            raise ValueError(f"{caller} takes either a DataFrame or pages=, times= and changed=, not both.")
    else:
        if changed is not None and fingerprints is not None:
            raise ValueError(f"{caller} takes changed= or fingerprints=, not both.")
        flags = fingerprints if fingerprints is not None else changed
        if pages is None or times is None or flags is None:
            missing = [n for n, v in (("pages", pages), ("times", times), ("changed", flags)) if v is None]
            raise ValueError(f"{caller} needs a DataFrame or all of pages=, times= and changed= (missing: "
                             f"{', '.join(missing)}).")
    check_choice(method, "method", caller, _METHODS)
    level = check_scalar(confidence, "confidence", caller, low=0.0, high=1.0, low_inclusive=False,
                         high_inclusive=False)
    cap = None if upper is None else check_scalar(upper, "upper", caller, low=0.0, low_inclusive=False,
                                                  allow_inf=True)
    parts: list[np.ndarray] = []
    if frame:
        columns = (page_column, time_column, fingerprint_column or changed_column)
        chunks = [log] if _is_frame(log) else _chunks(log, caller)
        encoded = _encode_chunks(chunks, columns, unit, caller, by_content, signal_column, parts)
    else:
        encoded = _encode(pages, times, flags, unit, caller, 0, by_content)
        if encoded[1].shape[0] == 0:
            raise ValueError(f"{caller}: the log is empty.")
        if signals is not None:
            parts.append(_counts(signals, caller, 0))
            if parts[0].shape != encoded[1].shape:
                raise ValueError(f"The columns of {caller} must have the same length: pages has "
                                 f"{encoded[1].shape[0]}, signals {parts[0].shape[0]}.")
    page, starts, intervals, flags, ends = _intervals(*encoded, caller, by_content)
    result = _estimate(page, starts, intervals, flags, method, level, cap)
    if parts:
        n_signals = np.concatenate(parts)[ends]
        recall, false_rate = _fit_signals(starts, intervals, flags, n_signals, result)
        result = LogRates(**{**result.__dict__, "recall": recall, "false_rate": false_rate})
    return result.to_frame(page_column) if frame else result


def _fit_signals(starts: np.ndarray, intervals: np.ndarray, flags: np.ndarray, n_signals: np.ndarray,
                 result: LogRates) -> tuple[np.ndarray, np.ndarray]:
    """Each page's signal recall and false-signal rate, fitted given its estimated change rate.

    Pages go to ``fit_signal_model`` in groups of similar interval counts (within a factor 2), each padded with
    (0, 0, 0) entries (which carry no information) to its longest: the padding stays below the data.
    """
    from .signals import fit_signal_model

    n = result.page.shape[0]
    recall = np.full(n, np.nan)
    false_rate = np.full(n, np.nan)
    rate = result.change_rate
    counts = np.diff(starts)
    fit = np.flatnonzero(~result.clipped & (counts > 0) & np.isfinite(rate) & (rate > 0))
    if fit.size == 0:
        return recall, false_rate
    group = np.floor(np.log2(counts[fit])).astype(np.int64)
    for g in np.unique(group):
        members = fit[group == g]
        width = int(counts[members].max())
        # each member's intervals, scattered into its row of the padded arrays in one step
        row = np.repeat(np.arange(members.size), counts[members])
        col = np.arange(row.size) - np.repeat(np.cumsum(counts[members]) - counts[members], counts[members])
        src = np.repeat(starts[members], counts[members]) + col
        tau = np.zeros((members.size, width))
        sig = np.zeros((members.size, width), dtype=np.int64)
        chg = np.zeros((members.size, width), dtype=np.uint8)
        tau[row, col], sig[row, col], chg[row, col] = intervals[src], n_signals[src], flags[src]
        res = fit_signal_model(tau, sig, chg, change_rate=rate[members])
        recall[members] = res.recall
        false_rate[members] = res.false_rate
    return recall, false_rate


def _estimate(page: np.ndarray, starts: np.ndarray, intervals: np.ndarray, flags: np.ndarray, method: str,
              level: float, cap: float | None) -> LogRates:
    n = page.shape[0]
    counts = np.diff(starts)
    changes = _segment_sums(flags.astype(np.int64), starts, counts)
    total = _segment_sums(intervals, starts, counts)
    s0 = _segment_sums(np.where(flags == 1, 0.0, intervals), starts, counts)
    root = np.empty(n)
    information = np.zeros(n)
    if method == "mle":
        mle_segments(intervals, flags, starts, root, information)
    else:
        mm_segments(intervals, flags, starts, root)
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.full(n, cap) if cap is not None else 1000.0 / (total / counts)  # (1000/mean, as mle_rates)
    clipped = (counts > 0) & (np.isinf(root) | (root > up))
    rate = np.where(clipped, up, root)
    single = counts == 0
    rate[single] = np.nan
    if single.any():
        first = _key(page[single][0])
        warnings.warn(f"estimate_log_rates: {int(single.sum())} page(s) (first: {first!r}) were crawled once: no "
                      "interval, so no estimate (NaN).", SingleCrawlWarning, stacklevel=3)
    lo = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    if method == "mle":
        z = NormalDist().inv_cdf(0.5 + 0.5 * level)
        inner = ~clipped & (root > 0) & np.isfinite(root)
        s = np.zeros(n)
        s[inner] = 1.0 / np.sqrt(information[inner])
        lo[inner] = root[inner] * np.exp(-z * s[inner])
        hi[inner] = root[inner] * np.exp(z * s[inner])
        none = ~single & (changes == 0)  # l(D) = -D S0: 2 (l(0) - l(D)) <= z^2 for D <= z^2/(2 S0)
        lo[none] = 0.0
        hi[none] = z * z / (2.0 * s0[none])
        every = clipped & (changes == counts) & ~single
        if every.any():
            lo[every] = _all_changed_lower(intervals, flags, starts, np.flatnonzero(every), z)
            hi[every] = np.inf
        capped = clipped & ~every  # a finite root above the cap: the interval of the root, shown as it is
        lo[capped], hi[capped] = np.nan, np.nan
    return LogRates(page=page, change_rate=rate, ci_low=lo, ci_high=hi, n_intervals=counts.astype(np.int64),
                    n_changes=changes.astype(np.int64), clipped=clipped)


def _segment_sums(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sum of each segment values[starts[p]:starts[p + 1]] (0 for an empty one), pairwise within each."""
    out = np.zeros(counts.shape[0], dtype=values.dtype)
    full = counts > 0
    if full.any():
        out[full] = np.add.reduceat(values, starts[:-1][full])
    return out


def _all_changed_lower(intervals: np.ndarray, flags: np.ndarray, starts: np.ndarray, which: np.ndarray,
                       z: float) -> np.ndarray:
    """Likelihood-ratio lower bounds where every interval of a page ended in a change.

    l(D) = sum_j log(1 - e^{-D tau_j}) increases to 0 as D grows, so the bound is the D with l(D) = -z^2/2:
    found by bisection on log D (80 halvings of a bracket of 2^±64 around n/sum(tau): below 1e-9 relative).
    """
    out = np.empty(which.shape[0])
    for k, p in enumerate(which):
        tau = intervals[starts[p]:starts[p + 1]]
        a, b = np.log(tau.size / tau.sum()) - 44.0, np.log(tau.size / tau.sum()) + 44.0
        for _ in range(80):
            mid = 0.5 * (a + b)
            ell = np.log(-np.expm1(-np.exp(mid) * tau)).sum()
            if ell < -0.5 * z * z:
                a = mid
            else:
                b = mid
        out[k] = np.exp(0.5 * (a + b))
    return out
