"""Offline maximum-likelihood, moment-matching and Cho–Garcia-Molina estimators,
and a streaming MLE that uses the actual crawl intervals.

Data layout
-----------
``changed`` and ``intervals`` hold one row per page and one column per crawl:
``changed[i, j]`` is 1 iff page ``i`` changed between crawls ``j - 1`` and ``j``
and ``intervals[i, j]`` is the length of that interval.  A 1-D input is a single
page; like a numpy reduction over the last axis, the result is then a scalar
(a Python ``float``, and a ``bool`` for the clipping flag) instead of an array
of shape ``(n_pages,)``.

Clipping
--------
When every observation of a page reports a change, the likelihood increases
without bound and neither the MLE nor moment matching has a finite root.  Such
pages, and pages whose root exceeds the cap, get the cap ``upper``: by default
``1000 * crawl_rate`` when a crawl rate is given, else ``1000 / mean(interval)``
of that page (SPEC §1).  Clipped pages are reported by ``return_clipped=True``;
otherwise a single :class:`ClippedEstimateWarning` per call says how many pages
were clipped.  Pages without any change get 0.

Streaming
---------
:class:`IntervalMLEEstimator` (one page) and :class:`IntervalMLEBatch` (arrays of
pages, bit-identical) keep bounded binned sufficient statistics of the MLE and
solve it on demand with the same compiled kernel: unlike the SA/SAM/LLN estimators
of Avrachenkov, Patil and Thoppe (2022) they use the actual intervals and stay
consistent under non-Poisson crawling.

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
.. [2] J. Cho, H. Garcia-Molina, "Estimating frequency of change", ACM Transactions on Internet
   Technology 3(3), 2003.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any, Literal, cast, overload

import numpy as np

from ._mle import (
    IntervalBinsState,
    interval_roots,
    interval_update,
    mle_rows,
    mle_segments,
    mm_rows,
    mm_segments,
    poisson_rows,
)
from ._papers import AVRACHENKOV_2022, CHO_GARCIA_MOLINA_2003, UPADHYAY_2020, cites
from ._validation import (
    check_array,
    check_batch_pages,
    check_binary,
    check_int,
    check_out,
    check_positive_per_item,
    check_same_length,
    check_scalar,
)

__all__ = [
    "BinningWarning",
    "ClippedEstimateWarning",
    "CrawlTimesWarning",
    "IntervalMLEBatch",
    "IntervalMLEEstimator",
    "cgm_rates",
    "mle_rates",
    "moment_rates",
]


class CrawlTimesWarning(UserWarning):
    """A single page's intervals that increase strictly, as the crawl times of a log do: probably times given
    where intervals are meant (``freshcore.estimate_log_rates`` takes a log of crawl times)."""


# a 1-D log of this many or more strictly increasing intervals warns (1/8! = 2.5e-5 by chance)
_LOOKS_LIKE_TIMES = 8


class ClippedEstimateWarning(UserWarning):
    """Some pages had no finite estimate (every crawl saw a change) or exceeded the cap and were clipped."""


# ---------------------------------------------------------------------------
# validation shared by the offline estimators
# ---------------------------------------------------------------------------


def _per_page(x: Any, name: str, caller: str, n_pages: int, *, allow_inf: bool = False) -> np.ndarray:
    """A positive scalar or an array of shape (n_pages,), returned as float64 of shape (n_pages,)."""
    if np.ndim(x) == 0:
        v = check_scalar(x, name, caller, low=0.0, low_inclusive=False, allow_inf=allow_inf)
        return np.full(n_pages, v)
    arr = check_array(x, name, caller, ndim=1, low=0.0, low_inclusive=False, allow_inf=allow_inf)
    if arr.shape[0] != n_pages:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be a number or an array with one entry per page "
            f"({n_pages}). Got shape {arr.shape} instead."
        )
    return arr


def _crawl_rates(crawl_rate: Any, c: np.ndarray, caller: str) -> np.ndarray:
    """Crawl rates as shape (n_pages,) (one per page) or (n_pages, k) (the rate of every crawl)."""
    n, k = (1, c.shape[0]) if c.ndim == 1 else c.shape
    if np.ndim(crawl_rate) == 0:
        return _per_page(crawl_rate, "crawl_rate", caller, n)
    p = check_array(crawl_rate, "crawl_rate", caller, ndim=(1, 2), low=0.0, low_inclusive=False)
    if p.shape == (n,):
        return p
    if p.shape == c.shape:
        return p.reshape(n, k)
    raise ValueError(
        f"The 'crawl_rate' parameter of {caller} must be a number, an array with one entry per page ({n},) or "
        f"one per crawl {c.shape}. Got shape {p.shape} instead."
    )


def _observations(
    changed: Any, intervals: Any, crawl_rate: Any, caller: str
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None, bool]:
    """Validate the log; return (changed 2-D uint8, intervals 2-D float64 or None, crawl_rate or None, scalar)."""
    c = check_binary(changed, "changed", caller, ndim=(1, 2))
    scalar = c.ndim == 1
    c2 = c.reshape(1, -1) if scalar else c
    t2 = None
    if intervals is not None:
        if getattr(intervals, "dtype", None) is not None and np.dtype(intervals.dtype).kind in "mM":
            raise TypeError(
                f"The 'intervals' parameter of {caller} must be numbers in your unit of time (the rates are per that "
                f"unit). Got dtype {np.dtype(intervals.dtype)}: divide by a unit, e.g. intervals / np.timedelta64(1, "
                "'D') for rates per day, or give a log of crawl times to freshcore.estimate_log_rates."
            )
        t = check_array(intervals, "intervals", caller, ndim=(1, 2), low=0.0, low_inclusive=False, allow_empty=True)
        if t.ndim == 1 and t.shape[0] >= _LOOKS_LIKE_TIMES and bool(np.all(np.diff(t) > 0)):
            warnings.warn(
                f"{caller}: the {t.shape[0]} intervals increase strictly, as crawl times do (by chance with "
                f"probability 1/{t.shape[0]}!): they are taken as the intervals of one page; for the times of a "
                "crawl log, of one or many pages, use freshcore.estimate_log_rates.",
                CrawlTimesWarning, stacklevel=3,
            )
        if t.shape != c.shape:
            raise ValueError(
                f"The 'changed' and 'intervals' parameters of {caller} must have the same shape. "
                f"Got {c.shape} and {t.shape} instead."
            )
        t2 = t.reshape(c2.shape)
    p = None if crawl_rate is None else _crawl_rates(crawl_rate, c, caller)
    if t2 is None and p is None:
        raise ValueError(f"{caller} needs 'intervals' or 'crawl_rate' (the rate of Poisson crawling). Got neither.")
    return c2, t2, p, scalar


def _with_gaps(
    changed: Any, intervals: Any, crawl_rate: Any, upper: Any, caller: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, bool] | None:
    """A log whose missing observations are NaN intervals (rows of different lengths padded with NaN): the
    observed intervals and flags row after row, each row's start, the caps and whether the log is 1-D; None
    when no interval is NaN.  The flags at NaN intervals are not read (NaN or anything there)."""
    if intervals is None or crawl_rate is not None:
        return None
    t = np.asarray(intervals)
    if t.dtype.kind != "f" or not np.isnan(t).any():
        return None
    missing = np.isnan(t)
    t = check_array(np.where(missing, 1.0, t), "intervals", caller, ndim=(1, 2), low=0.0, low_inclusive=False)
    c_raw = np.asarray(changed)
    if c_raw.shape != t.shape:
        raise ValueError(f"The 'changed' and 'intervals' parameters of {caller} must have the same shape. "
                         f"Got {c_raw.shape} and {t.shape} instead.")
    if c_raw.dtype.kind == "f":
        c_raw = np.where(missing, 0.0, c_raw)
    c = check_binary(c_raw, "changed", caller, ndim=(1, 2))
    scalar = t.ndim == 1
    t2, c2, m2 = (t.reshape(1, -1), c.reshape(1, -1), missing.reshape(1, -1)) if scalar else (t, c, missing)
    counts = (~m2).sum(axis=1)
    if np.any(counts == 0):
        i = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"The 'intervals' of {caller} must hold at least one observation per page; "
                         f"{'the page' if scalar else f'row {i}'} is all NaN.")
    keep = ~m2
    flat_t = np.ascontiguousarray(t2[keep])
    flat_c = np.ascontiguousarray(c2[keep])
    starts = np.r_[0, np.cumsum(counts)].astype(np.intp)
    if upper is None:
        up = 1000.0 / (np.where(keep, t2, 0.0).sum(axis=1) / counts)
    else:
        up = _per_page(upper, "upper", caller, t2.shape[0], allow_inf=True)
    return flat_t, flat_c, starts, up, scalar


def _upper(upper: Any, caller: str, c2: np.ndarray, t2: np.ndarray | None, p: np.ndarray | None) -> np.ndarray:
    n = c2.shape[0]
    if upper is not None:
        return _per_page(upper, "upper", caller, n, allow_inf=True)
    if p is not None:
        return 1000.0 * (p if p.ndim == 1 else p.mean(axis=1))
    return 1000.0 / cast(np.ndarray, t2).mean(axis=1)  # (the log has intervals when it has no crawl rate)


def _check_out(out: Any, n_pages: int, scalar: bool, caller: str) -> np.ndarray:
    """The output array: a new one, or the caller's after the shared ``check_out`` checks."""
    if out is None:
        return np.empty(n_pages)
    if scalar:
        raise ValueError(f"The 'out' parameter of {caller} is only supported for 2-D input (one row per page).")
    return check_out(out, (n_pages,), caller)


def _finish(est: np.ndarray, upper: np.ndarray, return_clipped: bool, scalar: bool, caller: str) -> Any:
    clipped = np.isinf(est) | (est > upper)
    np.copyto(est, upper, where=clipped)
    if not return_clipped and clipped.any():
        warnings.warn(
            f"{caller}: {int(clipped.sum())} of {est.size} page(s) had no finite estimate (a change at every "
            "crawl) or exceeded 'upper' and were clipped to 'upper'; pass return_clipped=True to get the mask.",
            ClippedEstimateWarning,
            stacklevel=3,
        )
    if scalar:
        out = (float(est[0]), bool(clipped[0])) if return_clipped else float(est[0])
        return out
    return (est, clipped) if return_clipped else est


def _poisson_crawl_estimate(c2: np.ndarray, p: np.ndarray) -> np.ndarray:
    """p n1/n0: the MLE (and the moment estimate) when crawls are Poisson at rate p.

    With one rate per crawl (p of shape (n_pages, k)) the root of
    sum_j p_j/(p_j + Delta) = n0, found by the compiled kernel.
    """
    if p.ndim == 2:
        out = np.empty(c2.shape[0])
        poisson_rows(c2, p, out)
        return out
    n1 = c2.sum(axis=1, dtype=np.float64)
    n0 = c2.shape[1] - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(n0 > 0, p * n1 / np.where(n0 > 0, n0, 1.0), np.inf)
    return np.where(n1 > 0, est, 0.0)


# ---------------------------------------------------------------------------
# offline estimators
# ---------------------------------------------------------------------------


@overload
def mle_rates(
    changed: Any, intervals: Any = ..., *, crawl_rate: Any = ..., upper: Any = ...,
    return_clipped: Literal[False] = ..., out: np.ndarray | None = ...,
) -> Any: ...
@overload
def mle_rates(
    changed: Any, intervals: Any = ..., *, crawl_rate: Any = ..., upper: Any = ...,
    return_clipped: Literal[True], out: np.ndarray | None = ...,
) -> tuple[Any, Any]: ...


@cites(AVRACHENKOV_2022, CHO_GARCIA_MOLINA_2003)
def mle_rates(
    changed: Any,
    intervals: Any = None,
    *,
    crawl_rate: Any = None,
    upper: Any = None,
    return_clipped: bool = False,
    out: np.ndarray | None = None,
) -> Any:
    """Maximum-likelihood change rate of each page from its crawl log.

    Parameters
    ----------
    changed : array-like of 0/1, shape (n_pages, k) or (k,)
        ``changed[i, j] = 1`` iff page ``i`` changed during its ``j``-th crawl interval.
    intervals : array-like of float > 0, same shape as ``changed``, optional
        The crawl intervals tau.  If omitted, ``crawl_rate`` is required and the
        crawls are taken to be Poisson at that rate (intervals unobserved).  A NaN
        interval is a missing observation (rows of different lengths padded with
        NaN; the flag there is not read); for a long-format log of crawl times see
        :func:`freshcore.estimate_log_rates`.
    crawl_rate : float or array of shape (n_pages,) or (n_pages, k), optional
        Poisson crawl rate p: one for all pages, one per page, or the rate that
        generated each interval.  Only used without ``intervals`` and for the
        default cap (1000 times the page's mean rate).
    upper : float or array of shape (n_pages,), optional
        Cap of the estimate (``inf`` allowed); default ``1000 * crawl_rate`` or
        ``1000 / mean(intervals)`` per page.
    return_clipped : bool, default False
        Also return the mask of clipped pages (and do not warn).
    out : ndarray of float64, shape (n_pages,), optional
        Where to write the estimates (2-D input only); returned.

    Returns
    -------
    rates : ndarray of shape (n_pages,), or float for 1-D input
    clipped : ndarray of bool of shape (n_pages,), or bool; only if ``return_clipped``

    Notes
    -----
    With intervals, the estimate is the unique root of the likelihood equation
    (eq. (16) of Avrachenkov et al. (2022); SPEC §1)

    .. math:: \\sum_j I_j \\tau_j / (e^{\\Delta\\tau_j} - 1) = \\sum_j (1 - I_j)\\tau_j ,

    which lies in ``[n1/(S0 + S1/2), n1/S0]`` (S0, S1: total interval without /
    with a change, n1: number of changes).  A compiled safeguarded Newton
    iteration on the logarithm of both sides finds it to full double precision
    (it equals ``scipy.optimize.brentq`` within 1e-11 relative).  All-zero rows
    give 0; all-one rows have no finite root and are clipped to ``upper``.

    Without intervals (Poisson crawling at known rate p), P(I = 1) = Delta/(Delta + p)
    and the MLE is the closed form ``p * n1 / n0``, with the same clipping.  When
    the rate changed between crawls (p_j per observation), the score equation
    n1/Delta = sum_j 1/(Delta + p_j) is solved in the form
    sum_j p_j/(p_j + Delta) = n0 by the same kind of compiled safeguarded Newton
    iteration, on the bracket [min p n1/n0, max p n1/n0].

    Examples
    --------
    >>> from freshcore.mle import mle_rates
    >>> round(mle_rates([1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), 6)  # = log 2 for equal intervals
    0.693147
    >>> mle_rates([[1, 1, 0], [0, 0, 0]], crawl_rate=2.0)
    array([4., 0.])
    """
    caller = "mle_rates"
    gaps = _with_gaps(changed, intervals, crawl_rate, upper, caller)
    if gaps is not None:  # (NaN intervals: observations missing, rows of different lengths)
        flat_t, flat_c, starts, up, scalar = gaps
        est = _check_out(out, up.shape[0], scalar, caller)
        mle_segments(flat_t, flat_c, starts, est, np.empty(up.shape[0]))
        return _finish(est, up, return_clipped, scalar, caller)
    c2, t2, p, scalar = _observations(changed, intervals, crawl_rate, caller)
    up = _upper(upper, caller, c2, t2, p)
    est = _check_out(out, c2.shape[0], scalar, caller)
    if t2 is None:
        est[...] = _poisson_crawl_estimate(c2, cast(np.ndarray, p))  # (no intervals: a crawl rate)
    else:
        mle_rows(c2, t2, est)
    return _finish(est, up, return_clipped, scalar, caller)


@overload
def moment_rates(
    changed: Any, intervals: Any = ..., *, crawl_rate: Any = ..., upper: Any = ...,
    return_clipped: Literal[False] = ..., out: np.ndarray | None = ...,
) -> Any: ...
@overload
def moment_rates(
    changed: Any, intervals: Any = ..., *, crawl_rate: Any = ..., upper: Any = ...,
    return_clipped: Literal[True], out: np.ndarray | None = ...,
) -> tuple[Any, Any]: ...


@cites(AVRACHENKOV_2022, UPADHYAY_2020)
def moment_rates(
    changed: Any,
    intervals: Any = None,
    *,
    crawl_rate: Any = None,
    upper: Any = None,
    return_clipped: bool = False,
    out: np.ndarray | None = None,
) -> Any:
    """Moment-matching change rate of each page from its crawl log.

    Parameters
    ----------
    changed, intervals, crawl_rate, upper, return_clipped, out
        As in :func:`mle_rates`.

    Returns
    -------
    rates : ndarray of shape (n_pages,), or float for 1-D input
    clipped : ndarray of bool of shape (n_pages,), or bool; only if ``return_clipped``

    Notes
    -----
    The root of :math:`\\sum_j (1 - I_j) = \\sum_j e^{-\\Delta\\tau_j}` (Section 3.4
    of Avrachenkov et al. (2022) and Section 4 of Upadhyay et al. (2020)): the
    observed number of unchanged intervals equals its expectation.  It lies in
    ``[log(k/n0)/mean(tau), log(k/n0)/min(tau)]`` (Jensen), where the same
    compiled safeguarded Newton iteration finds it.  Without intervals (Poisson
    crawling at rate p) E[e^{-Delta tau}] = p/(p + Delta) and the estimate is
    ``p * n1 / n0``; with a rate per crawl, the root of sum_j p_j/(p_j + Delta) = n0,
    which is also the MLE (see :func:`mle_rates`).  All-zero rows give 0,
    all-one rows are clipped.

    Examples
    --------
    >>> from freshcore.mle import moment_rates
    >>> round(moment_rates([1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), 6)  # = log 2 for equal intervals
    0.693147
    """
    caller = "moment_rates"
    gaps = _with_gaps(changed, intervals, crawl_rate, upper, caller)
    if gaps is not None:  # (NaN intervals: observations missing, rows of different lengths)
        flat_t, flat_c, starts, up, scalar = gaps
        est = _check_out(out, up.shape[0], scalar, caller)
        mm_segments(flat_t, flat_c, starts, est)
        return _finish(est, up, return_clipped, scalar, caller)
    c2, t2, p, scalar = _observations(changed, intervals, crawl_rate, caller)
    up = _upper(upper, caller, c2, t2, p)
    est = _check_out(out, c2.shape[0], scalar, caller)
    if t2 is None:
        est[...] = _poisson_crawl_estimate(c2, cast(np.ndarray, p))  # (no intervals: a crawl rate)
    else:
        mm_rows(c2, t2, est)
    return _finish(est, up, return_clipped, scalar, caller)


@cites(CHO_GARCIA_MOLINA_2003)
def cgm_rates(changed: Any, intervals: Any = None, *, crawl_rate: Any = None, out: np.ndarray | None = None) -> Any:
    """Cho–Garcia-Molina improved estimator of each page's change rate.

    Parameters
    ----------
    changed : array-like of 0/1, shape (n_pages, k) or (k,)
    intervals : array-like of float > 0, same shape, optional
        Only their mean per page is used.
    crawl_rate : float or array of shape (n_pages,) or (n_pages, k), optional
        Used when ``intervals`` is omitted: the mean interval is the mean of 1/p.
    out : ndarray of float64, shape (n_pages,), optional
        Where to write the estimates (2-D input only); returned.

    Returns
    -------
    rates : ndarray of shape (n_pages,), or float for 1-D input

    Notes
    -----
    :math:`\\hat\\Delta = -\\frac{1}{\\bar\\tau}\\log\\frac{k - \\hat I + 0.5}{k + 0.5}`
    (SPEC §1), with :math:`\\hat I` the number of changes and
    :math:`\\bar\\tau` the mean interval.  It is designed for regular intervals;
    under Poisson crawling it tends to p log(1 + Delta/p), not Delta.  Always finite.

    Examples
    --------
    >>> from freshcore.mle import cgm_rates
    >>> round(cgm_rates([1, 1, 1, 1], [2.0, 2.0, 2.0, 2.0]), 6)  # log(9)/2
    1.098612
    """
    caller = "cgm_rates"
    c2, t2, p, scalar = _observations(changed, intervals, crawl_rate, caller)
    k = c2.shape[1]
    n1 = c2.sum(axis=1, dtype=np.float64)
    if t2 is not None:
        mean_tau = t2.mean(axis=1)
    else:
        rate = cast(np.ndarray, p)  # (no intervals: a crawl rate)
        mean_tau = 1.0 / rate if rate.ndim == 1 else (1.0 / rate).mean(axis=1)
    est = _check_out(out, c2.shape[0], scalar, caller)
    np.divide(-np.log1p(-n1 / (k + 0.5)), mean_tau, out=est)
    return float(est[0]) if scalar else est


# ---------------------------------------------------------------------------
# streaming MLE over binned sufficient statistics (beyond the papers)
# ---------------------------------------------------------------------------


# Levels of the compiled bins (freshcore._mle): at level L a bin is 2**L / FINE octaves wide.
_FINE = 16
# Widest bins (in octaves) at which the binned MLE is within 1e-4 of the offline MLE (measured: at most 5e-5
# over Poisson, jittered, periodic and log-uniform crawling in every unit; tests/test_mle.py)
_WIDTH_OK = 0.5


class BinningWarning(UserWarning):
    """The changed intervals of a page span so many octaves that its bins are wider than half an octave.

    Its streaming MLE may then differ from the offline MLE by more than 1e-4 (relative); more bins
    (``n_bins``) keep it within.
    """


def _check_n_bins(n_bins: Any, caller: str) -> int:
    return check_int(n_bins, "n_bins", caller, low=2)


def _warn_wide(width: np.ndarray, caller: str, n_bins: int) -> None:
    wide = np.flatnonzero(width > _WIDTH_OK)
    if wide.size:
        i = int(wide[0])
        warnings.warn(
            f"{caller}: the changed intervals of {wide.size} page(s) (first: page {i}) span more than {n_bins // 2} "
            f"octaves, so their bins are {width[i]:g} octaves wide and the estimates may differ from the offline "
            f"MLE by more than 1e-4; n_bins={int(2 * n_bins * width.max())} keeps them within.",
            BinningWarning, stacklevel=3,
        )


def _check_flag(x: Any, caller: str) -> int:
    if isinstance(x, (bool, np.bool_)) or (isinstance(x, (int, np.integer)) and x in (0, 1)):
        return bool(x)
    if isinstance(x, (float, np.floating)) and x in (0.0, 1.0):
        return bool(x)
    if not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"The 'changed' parameter of {caller} must be 0/1 (or False/True). Got {x!r} of type {type(x).__name__}."
        )
    raise ValueError(f"The 'changed' parameter of {caller} must be 0/1 (or False/True). Got {x!r} instead.")


@cites(AVRACHENKOV_2022, CHO_GARCIA_MOLINA_2003)
class IntervalMLEEstimator:
    """Streaming maximum-likelihood change rate that uses the actual crawl intervals.

    Consistent under any crawl schedule that does not depend on the change
    process (Poisson, periodic, jittered, adaptive...), unlike the SA/SAM/LLN
    estimators of Avrachenkov et al. (2022), which assume Poisson crawling at a
    known rate.  It agrees with the offline MLE (:func:`mle_rates` on the same
    intervals) to 1e-4 or better, in any unit of time: its bins follow the
    ratios of the intervals, not their size.  Memory is bounded:
    ``4 * n_bins + 7`` numbers (1 KiB with the defaults) whatever the number of
    observations.

    Parameters
    ----------
    n_bins : int >= 2, default 32
        Number of interval bins kept.  They are 1/16 octave wide until the
        changed intervals span more than ``n_bins / 16`` octaves, then twice as
        wide each time the span doubles: the estimate stays within 1e-4 of the
        offline MLE while the span is at most ``n_bins / 2`` octaves (16
        octaves, a factor 65 536, by default), and a :class:`BinningWarning`
        says so when reading ``rate`` beyond.
    upper : float, optional
        Cap of the estimate (``inf`` allowed); default ``1000 / mean(interval)``.

    Attributes
    ----------
    rate : float
        Current estimate (read-only; 0 before the first change).
    clipped : bool
        Whether ``rate`` was clipped to the cap (every crawl saw a change).
    n_updates : int
    bin_width : float
        Width of the bins in octaves (0 before the first change).

    Notes
    -----
    The log-likelihood of (I_j, tau_j) is
    sum_j [I_j log(1 - e^{-Delta tau_j}) - (1 - I_j) Delta tau_j]; its score
    equation is eq. (16) of Avrachenkov et al. (2022),
    :math:`\\sum_j I_j\\tau_j/(e^{\\Delta\\tau_j} - 1) = S_0`.  The right side
    S_0 only needs the running sum of unchanged intervals.  The changed intervals
    go to bins on a logarithmic grid anchored at the first of them, so that
    multiplying every interval by c multiplies every bin's contents by c and the
    estimate by 1/c (to rounding: 1e-12 is tested from c = 1e-6 to 1e6).  A
    window of ``n_bins`` bins moves with the intervals and widens (bins merge in
    pairs) only when they span more than it holds.  Each bin keeps the count,
    mean and second and third central moments of its intervals (one-pass
    updates, exact merges), and enters the score equation as their two-point
    Gauss rule, exact for cubics: the error is of the order of the fourth
    derivative of :math:`\\tau/(e^{\\Delta\\tau} - 1)` times the bin width to
    the fourth.  Measured largest relative difference from the offline MLE (400
    crawls, Delta from 0.05 to 20, tests/test_mle.py): 1.3e-6 with bins a
    quarter octave wide, 5e-5 at half an octave, 8e-4 at one octave.  The root
    is found by the same compiled safeguarded Newton kernel as :func:`mle_rates`,
    lazily when ``rate`` is read after an update; ``update`` itself is O(1)
    (amortised: moving the window is O(n_bins)).

    Examples
    --------
    >>> from freshcore.mle import IntervalMLEEstimator
    >>> est = IntervalMLEEstimator()
    >>> _ = est.update(1, 0.5).update(0, 0.5).update(1, 0.5).update(0, 0.5)
    >>> round(est.rate, 6)  # log(2)/0.5: the MLE for equal intervals
    1.386294
    """

    __slots__ = ("_cache", "_state", "_upper")
    _caller = "IntervalMLEEstimator"

    def __init__(self, *, n_bins: int = 32, upper: float | None = None) -> None:
        nb = _check_n_bins(n_bins, self._caller)
        self._upper = (
            None if upper is None
            else check_scalar(upper, "upper", self._caller, low=0.0, low_inclusive=False, allow_inf=True)
        )
        self._state = IntervalBinsState(nb)
        self._cache: tuple[float, bool] | None = None

    # -- updates ---------------------------------------------------------
    def update(self, changed: Any, interval: float) -> IntervalMLEEstimator:
        """Add one crawl: ``changed`` (0/1) seen after an interval of length ``interval`` > 0. Returns self."""
        c = _check_flag(changed, "IntervalMLEEstimator.update")
        t = check_scalar(interval, "interval", "IntervalMLEEstimator.update", low=0.0, low_inclusive=False)
        self._state.update(bool(c), t)
        self._cache = None
        return self

    def update_many(self, changed: Any, intervals: Any) -> IntervalMLEEstimator:
        """Add a sequence of crawls in order; equal to a loop of :meth:`update`. Returns self."""
        caller = "IntervalMLEEstimator.update_many"
        c = check_binary(changed, "changed", caller, ndim=1, allow_empty=True)
        t = check_array(intervals, "intervals", caller, ndim=1, low=0.0, low_inclusive=False, allow_empty=True)
        check_same_length(caller, changed=c, intervals=t)
        self._state.update_many(c, t)
        self._cache = None
        return self

    # -- estimate --------------------------------------------------------
    def _solve(self) -> tuple[float, bool]:
        if self._cache is None:
            root = self._state.root()
            n0, s0, n1, s1 = (float(v) for v in self._state.get_state()[1])
            if self._upper is not None:
                up = self._upper
            elif n0 + n1 > 0:
                up = 1000.0 * ((n0 + n1) / (s0 + s1))
            else:
                up = math.inf
            clipped = math.isinf(root) or root > up
            self._cache = (up if clipped else root, clipped)
            _warn_wide(np.array([self.bin_width]), self._caller, self._state.n_bins)
        return self._cache

    @property
    def rate(self) -> float:
        """The current estimate of the change rate."""
        return self._solve()[0]

    @property
    def clipped(self) -> bool:
        """True when the estimate is the cap (no finite root: a change at every crawl so far)."""
        return self._solve()[1]

    @property
    def n_updates(self) -> int:
        """Number of observations consumed."""
        totals = self._state.get_state()[1]
        return int(totals[0] + totals[2])

    @property
    def bin_width(self) -> float:
        """Width of the bins in octaves (0 before the first change)."""
        _, totals, _, level, _ = self._state.get_state()
        return 0.0 if totals[2] == 0.0 else 2.0**level / _FINE

    # -- persistence -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain-Python state; :meth:`from_dict` restores it exactly."""
        bins, totals, anchor, level, lo = self._state.get_state()
        return {
            "n_bins": self._state.n_bins, "upper": self._upper, "bins": bins.tolist(), "totals": totals.tolist(),
            "anchor": anchor, "level": int(level), "lo": int(lo),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IntervalMLEEstimator:
        caller = "IntervalMLEEstimator.from_dict"
        obj = cls(n_bins=d["n_bins"], upper=d["upper"])
        bins, totals, anchor, level, lo = _check_bins_state(d, 1, obj._state.n_bins, caller)
        obj._state.set_state(bins[0], totals[0], float(anchor[0]), int(level[0]), int(lo[0]))
        return obj

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, d: dict[str, Any]) -> None:
        other = type(self).from_dict(d)
        self._state, self._upper, self._cache = other._state, other._upper, None

    def __repr__(self) -> str:
        return f"IntervalMLEEstimator(rate={self.rate!r}, n_updates={self.n_updates})"


def _check_bins_state(
    d: Mapping[str, Any], n_pages: int, n_bins: int, caller: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The state arrays of a saved binned MLE, checked: shapes, signs, and a window that holds its bins."""
    for key in ("bins", "totals", "anchor", "level", "lo"):
        if key not in d:
            raise ValueError(f"The dict given to {caller} has no {key!r} entry.")
    bins = check_array(d["bins"], "bins", caller, ndim=None, allow_empty=True)
    totals = check_array(d["totals"], "totals", caller, ndim=None, low=0.0)
    anchor = np.atleast_1d(check_array(d["anchor"], "anchor", caller, ndim=None))
    level = np.atleast_1d(np.asarray(d["level"]))
    lo = np.atleast_1d(np.asarray(d["lo"]))
    bins = bins.reshape((1, *bins.shape)) if bins.ndim == 2 and n_pages == 1 else bins
    totals = totals.reshape((1, *totals.shape)) if totals.ndim == 1 and n_pages == 1 else totals
    for name, arr, shape in (("bins", bins, (n_pages, n_bins, 4)), ("totals", totals, (n_pages, 4)),
                             ("anchor", anchor, (n_pages,)), ("level", level, (n_pages,)), ("lo", lo, (n_pages,))):
        if arr.shape != shape:
            raise ValueError(f"The {name!r} entry of the dict given to {caller} must have shape {shape}. "
                             f"Got {arr.shape} instead.")
    for name, arr in (("level", level), ("lo", lo)):
        if arr.dtype.kind not in "iu" and not np.all(np.mod(arr, 1) == 0):
            raise ValueError(f"The {name!r} entry of the dict given to {caller} must hold integers.")
    level, lo = level.astype(np.int64), lo.astype(np.int64)
    if np.any(level < 0) or np.any(level > 20):
        i = int(np.flatnonzero((level < 0) | (level > 20))[0])
        raise ValueError(f"The 'level' entry of the dict given to {caller} must be in [0, 20]; got {level[i]} "
                         f"at index {i}.")
    counts = bins[..., 0]
    if np.any(counts < 0) or np.any(bins[..., 2] < 0) or np.any(counts != np.floor(counts)):
        raise ValueError(f"The 'bins' entry of the dict given to {caller} must hold counts that are whole "
                         "numbers >= 0 and second moments >= 0.")
    if np.any(np.abs(counts.sum(axis=1) - totals[:, 2]) > 0):
        raise ValueError(f"The 'bins' and 'totals' entries of the dict given to {caller} disagree: the bins' "
                         "counts must add up to the number of changed intervals.")
    return bins, totals, anchor, level, lo


class IntervalMLEBatch:
    """Streaming interval-aware MLE for many pages at once (see :class:`IntervalMLEEstimator`).

    Parameters
    ----------
    n_pages : int >= 1
    n_bins : int >= 2, default 32
        As in :class:`IntervalMLEEstimator` (bins per page).
    upper : float or array of shape (n_pages,), optional
        Cap of the estimates; default ``1000 / mean(interval)`` per page.

    Notes
    -----
    State per page: ``n_bins`` bins of (count, mean, M2, M3) of the changed intervals, the totals (n0, S0,
    n1, S1) of the intervals without / with a change, and the grid (anchor, level, first bin): ``4 n_bins
    + 7`` numbers, 1 KiB per page by default.  :meth:`update` adds any subset of pages in one compiled call;
    ``rates`` solves the binned equations of all pages in one compiled call.  Results are bit-identical to
    one :class:`IntervalMLEEstimator` per page fed the same observations in the same order.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.mle import IntervalMLEBatch
    >>> b = IntervalMLEBatch(2).update([1, 0], intervals=0.5).update([0, 0], intervals=[0.5, 1.0])
    >>> np.round(b.rates, 6)
    array([1.386294, 0.      ])
    """

    _caller = "IntervalMLEBatch"

    def __init__(self, n_pages: int, *, n_bins: int = 32, upper: Any = None) -> None:
        n = check_int(n_pages, "n_pages", self._caller, low=1)
        self.n_bins = _check_n_bins(n_bins, self._caller)
        self.n_pages = n
        self._upper = None if upper is None else _per_page(upper, "upper", self._caller, n, allow_inf=True)
        self._bins = np.zeros((n, self.n_bins, 4))
        self._totals = np.zeros((n, 4))
        self._anchor = np.zeros(n)
        self._grid = np.zeros((n, 2), dtype=np.int64)
        self._cache: tuple[np.ndarray, np.ndarray] | None = None

    def update(self, changed: Any, pages: Any = None, intervals: Any = None) -> IntervalMLEBatch:
        """Consume one crawl outcome for each of the given pages; return ``self``.

        Parameters
        ----------
        changed : array-like of 0/1 or bool, shape (m,)
            Outcome of each crawl.  With ``pages=None``, m = n_pages and entry i
            belongs to page i.
        pages : array-like of int, shape (m,), optional
            Page of each outcome; a page may appear several times (applied in
            order, like successive :meth:`IntervalMLEEstimator.update` calls).
        intervals : float or array-like of float > 0, shape (m,)
            The interval that ended at each crawl (required), in any unit of time: the estimates are in its
            inverse.

        Returns
        -------
        self

        Notes
        -----
        Everything is validated before any state changes.
        """
        caller = "IntervalMLEBatch.update"
        c = check_binary(changed, "changed", caller, ndim=1, allow_empty=pages is not None)
        m = c.shape[0]
        idx = check_batch_pages(pages, m, self.n_pages, caller)
        if idx is None:
            idx = np.arange(m, dtype=np.intp)
        if intervals is None:
            raise ValueError(f"{caller} needs 'intervals': the length of the interval that ended at each crawl.")
        t = check_positive_per_item(intervals, "intervals", m, caller)
        interval_update(self._bins, self._totals, self._anchor, self._grid, idx, c, t)
        self._cache = None
        return self

    def _solve(self) -> tuple[np.ndarray, np.ndarray]:
        if self._cache is None:
            root = np.empty(self.n_pages)
            interval_roots(self._bins, self._totals, root)
            n0, s0, n1, s1 = self._totals.T
            if self._upper is not None:
                up = self._upper
            else:
                n = n0 + n1
                with np.errstate(divide="ignore", invalid="ignore"):
                    up = np.where(n > 0, 1000.0 * (n / (s0 + s1)), np.inf)
            clipped = np.isinf(root) | (root > up)
            self._cache = (np.where(clipped, up, root), clipped)
            _warn_wide(self.bin_width, self._caller, self.n_bins)
        return self._cache

    @property
    def rates(self) -> np.ndarray:
        """Current estimates, shape (n_pages,) (a copy)."""
        return self._solve()[0].copy()

    @property
    def clipped(self) -> np.ndarray:
        """Pages whose estimate is the cap, shape (n_pages,) (a copy)."""
        return self._solve()[1].copy()

    @property
    def n_updates(self) -> np.ndarray:
        """Observations consumed per page, shape (n_pages,)."""
        return (self._totals[:, 0] + self._totals[:, 2]).astype(np.int64)

    @property
    def bin_width(self) -> np.ndarray:
        """Width of each page's bins in octaves, shape (n_pages,) (0 before its first change)."""
        return np.where(self._totals[:, 2] > 0, np.ldexp(1.0, self._grid[:, 0].astype(np.int32)) / _FINE, 0.0)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python state; :meth:`from_dict` restores it exactly."""
        return {
            "n_pages": self.n_pages, "n_bins": self.n_bins,
            "upper": None if self._upper is None else self._upper.tolist(),
            "bins": self._bins.tolist(), "totals": self._totals.tolist(), "anchor": self._anchor.tolist(),
            "level": self._grid[:, 0].tolist(), "lo": self._grid[:, 1].tolist(),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> IntervalMLEBatch:
        caller = "IntervalMLEBatch.from_dict"
        obj = cls(d["n_pages"], n_bins=d["n_bins"], upper=d["upper"])
        bins, totals, anchor, level, lo = _check_bins_state(d, obj.n_pages, obj.n_bins, caller)
        obj._bins[...] = bins
        obj._totals[...] = totals
        obj._anchor[...] = anchor
        obj._grid[:, 0] = level
        obj._grid[:, 1] = lo
        return obj

    def __repr__(self) -> str:
        return f"IntervalMLEBatch(n_pages={self.n_pages}, n_bins={self.n_bins})"
