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
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Mapping

import numpy as np

from ._mle import mle_rows, mm_rows
from ._validation import check_array, check_binary, check_scalar

__all__ = [
    "ClippedEstimateWarning",
    "mle_rates",
    "moment_rates",
    "cgm_rates",
]


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


def _observations(changed: Any, intervals: Any, crawl_rate: Any, caller: str):
    """Validate the log; return (changed 2-D uint8, intervals 2-D float64 or None, crawl_rate or None, scalar)."""
    c = check_binary(changed, "changed", caller, ndim=(1, 2))
    scalar = c.ndim == 1
    c2 = c.reshape(1, -1) if scalar else c
    t2 = None
    if intervals is not None:
        t = check_array(intervals, "intervals", caller, ndim=(1, 2), low=0.0, low_inclusive=False, allow_empty=True)
        if t.shape != c.shape:
            raise ValueError(
                f"The 'changed' and 'intervals' parameters of {caller} must have the same shape. "
                f"Got {c.shape} and {t.shape} instead."
            )
        t2 = t.reshape(c2.shape)
    p = None
    if crawl_rate is not None:
        p = _per_page(crawl_rate, "crawl_rate", caller, c2.shape[0])
    if t2 is None and p is None:
        raise ValueError(f"{caller} needs 'intervals' or 'crawl_rate' (the rate of Poisson crawling). Got neither.")
    return c2, t2, p, scalar


def _upper(upper: Any, caller: str, c2, t2, p) -> np.ndarray:
    n = c2.shape[0]
    if upper is not None:
        return _per_page(upper, "upper", caller, n, allow_inf=True)
    if p is not None:
        return 1000.0 * p
    return 1000.0 / t2.mean(axis=1)


def _finish(est: np.ndarray, upper: np.ndarray, return_clipped: bool, scalar: bool, caller: str):
    clipped = np.isinf(est) | (est > upper)
    est = np.where(clipped, upper, est)
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
    """p n1/n0: the MLE (and the moment estimate) when crawls are Poisson at rate p."""
    n1 = c2.sum(axis=1, dtype=np.float64)
    n0 = c2.shape[1] - n1
    with np.errstate(divide="ignore", invalid="ignore"):
        est = np.where(n0 > 0, p * n1 / np.where(n0 > 0, n0, 1.0), np.inf)
    return np.where(n1 > 0, est, 0.0)


# ---------------------------------------------------------------------------
# offline estimators
# ---------------------------------------------------------------------------


def mle_rates(changed, intervals=None, *, crawl_rate=None, upper=None, return_clipped=False):
    """Maximum-likelihood change rate of each page from its crawl log.

    Parameters
    ----------
    changed : array-like of 0/1, shape (n_pages, k) or (k,)
        ``changed[i, j] = 1`` iff page ``i`` changed during its ``j``-th crawl interval.
    intervals : array-like of float > 0, same shape as ``changed``, optional
        The crawl intervals tau.  If omitted, ``crawl_rate`` is required and the
        crawls are taken to be Poisson at that rate (intervals unobserved).
    crawl_rate : float or array of shape (n_pages,), optional
        Poisson crawl rate p; only used without ``intervals`` and for the default cap.
    upper : float or array of shape (n_pages,), optional
        Cap of the estimate (``inf`` allowed); default ``1000 * crawl_rate`` or
        ``1000 / mean(intervals)`` per page.
    return_clipped : bool, default False
        Also return the mask of clipped pages (and do not warn).

    Returns
    -------
    rates : ndarray of shape (n_pages,), or float for 1-D input
    clipped : ndarray of bool of shape (n_pages,), or bool; only if ``return_clipped``

    Notes
    -----
    With intervals, the estimate is the unique root of the likelihood equation
    (eq. (16) of 000; SPEC §1)

    .. math:: \\sum_j I_j \\tau_j / (e^{\\Delta\\tau_j} - 1) = \\sum_j (1 - I_j)\\tau_j ,

    which lies in ``[n1/(S0 + S1/2), n1/S0]`` (S0, S1: total interval without /
    with a change, n1: number of changes).  A compiled safeguarded Newton
    iteration on the logarithm of both sides finds it to full double precision
    (it equals ``scipy.optimize.brentq`` within 1e-11 relative).  All-zero rows
    give 0; all-one rows have no finite root and are clipped to ``upper``.

    Without intervals (Poisson crawling at known rate p), P(I = 1) = Delta/(Delta + p)
    and the MLE is the closed form ``p * n1 / n0``, with the same clipping.

    Examples
    --------
    >>> from freshcore.mle import mle_rates
    >>> round(mle_rates([1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), 6)  # = log 2 for equal intervals
    0.693147
    >>> mle_rates([[1, 1, 0], [0, 0, 0]], crawl_rate=2.0)
    array([4., 0.])
    """
    caller = "mle_rates"
    c2, t2, p, scalar = _observations(changed, intervals, crawl_rate, caller)
    up = _upper(upper, caller, c2, t2, p)
    if t2 is None:
        est = _poisson_crawl_estimate(c2, p)
    else:
        est = np.empty(c2.shape[0])
        mle_rows(c2, t2, est)
    return _finish(est, up, return_clipped, scalar, caller)


def moment_rates(changed, intervals=None, *, crawl_rate=None, upper=None, return_clipped=False):
    """Moment-matching change rate of each page from its crawl log.

    Parameters
    ----------
    changed, intervals, crawl_rate, upper, return_clipped
        As in :func:`mle_rates`.

    Returns
    -------
    rates : ndarray of shape (n_pages,), or float for 1-D input
    clipped : ndarray of bool of shape (n_pages,), or bool; only if ``return_clipped``

    Notes
    -----
    The root of :math:`\\sum_j (1 - I_j) = \\sum_j e^{-\\Delta\\tau_j}` (Section 3.4
    of 000, after Cho and Garcia-Molina): the observed number of unchanged
    intervals equals its expectation.  It lies in
    ``[log(k/n0)/mean(tau), log(k/n0)/min(tau)]`` (Jensen), where the same
    compiled safeguarded Newton iteration finds it.  Without intervals (Poisson
    crawling at rate p) E[e^{-Delta tau}] = p/(p + Delta) and the estimate is
    ``p * n1 / n0``.  All-zero rows give 0, all-one rows are clipped.

    Examples
    --------
    >>> from freshcore.mle import moment_rates
    >>> round(moment_rates([1, 0, 1, 0], [1.0, 1.0, 1.0, 1.0]), 6)  # = log 2 for equal intervals
    0.693147
    """
    caller = "moment_rates"
    c2, t2, p, scalar = _observations(changed, intervals, crawl_rate, caller)
    up = _upper(upper, caller, c2, t2, p)
    if t2 is None:
        est = _poisson_crawl_estimate(c2, p)
    else:
        est = np.empty(c2.shape[0])
        mm_rows(c2, t2, est)
    return _finish(est, up, return_clipped, scalar, caller)


def cgm_rates(changed, intervals=None, *, crawl_rate=None):
    """Cho–Garcia-Molina improved estimator of each page's change rate.

    Parameters
    ----------
    changed : array-like of 0/1, shape (n_pages, k) or (k,)
    intervals : array-like of float > 0, same shape, optional
        Only their mean per page is used.
    crawl_rate : float or array of shape (n_pages,), optional
        Used (as mean interval 1/p) when ``intervals`` is omitted.

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
    mean_tau = t2.mean(axis=1) if t2 is not None else 1.0 / p
    est = -np.log1p(-n1 / (k + 0.5)) / mean_tau
    return float(est[0]) if scalar else est
