"""Simulated crawl logs: Poisson page changes observed by Poisson, periodic or jittered crawls."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._papers import AVRACHENKOV_2022, cites
from ._validation import check_array, check_choice, check_int, check_rng, check_same_length, check_scalar

__all__ = ["SCHEDULES", "simulate_crawls"]

SCHEDULES = ("poisson", "periodic", "jittered")


@cites(AVRACHENKOV_2022)
def simulate_crawls(
    change_rate: Any, crawl_rate: Any, n_crawls: int, *, schedule: str = "poisson", jitter: float = 0.5,
    rng: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate the crawl log of pages whose changes form Poisson processes.

    Parameters
    ----------
    change_rate : array-like of float >= 0, shape (n_pages,)
        The change rate Delta_i of each page.
    crawl_rate : float > 0 or array-like of float > 0, shape (n_pages,)
        The crawl rate p_i of each page (mean number of crawls per unit time).
    n_crawls : int >= 1
        Number of crawls (observations) per page, k.
    schedule : {"poisson", "periodic", "jittered"}, default "poisson"
        How the intervals tau are drawn: ``"poisson"`` tau ~ Exp(p_i);
        ``"periodic"`` tau = 1/p_i exactly; ``"jittered"``
        tau = (1/p_i)(1 + jitter U), U ~ Uniform(-1, 1), so the mean stays 1/p_i.
    jitter : float in [0, 1), default 0.5
        Relative half-width of the jittered intervals (ignored otherwise).
    rng : None, int or numpy.random.Generator
        Source of randomness; the same seed gives the same log.

    Returns
    -------
    changed : ndarray of uint8, shape (n_pages, n_crawls)
        1 iff at least one change fell in the interval ending at that crawl.
    intervals : ndarray of float64, shape (n_pages, n_crawls)
        The interval lengths tau.

    Notes
    -----
    The change process is Poisson and independent of the crawls, so by
    memorylessness the indicators are independent given the intervals with
    P(I = 1 | tau) = 1 - e^{-Delta tau} (SPEC §1; Section 2 of Avrachenkov, Patil
    and Thoppe (2022)): drawing them directly is exact, and fully vectorised.
    Under Poisson crawling P(I = 1) = Delta/(Delta + p).

    Examples
    --------
    >>> from freshcore.synthetic_logs import simulate_crawls
    >>> changed, intervals = simulate_crawls([5.0, 0.0], 3.0, 4, schedule="periodic", rng=0)
    >>> changed.shape, intervals.dtype, changed[1].tolist()
    ((2, 4), dtype('float64'), [0, 0, 0, 0])
    """
    caller = "simulate_crawls"
    delta = check_array(change_rate, "change_rate", caller, ndim=1, low=0.0)
    n = delta.shape[0]
    if np.ndim(crawl_rate) == 0:
        p = np.full(n, check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False))
    else:
        p = check_array(crawl_rate, "crawl_rate", caller, ndim=1, low=0.0, low_inclusive=False)
        check_same_length(caller, change_rate=delta, crawl_rate=p)
    k = check_int(n_crawls, "n_crawls", caller, low=1)
    check_choice(schedule, "schedule", caller, SCHEDULES)
    j = check_scalar(jitter, "jitter", caller, low=0.0, high=1.0, high_inclusive=False)
    gen = check_rng(rng, caller)

    mean = (1.0 / p)[:, None]
    if schedule == "poisson":
        intervals = gen.exponential(1.0, size=(n, k)) * mean
    elif schedule == "periodic":
        intervals = np.broadcast_to(mean, (n, k)).copy()
    else:
        intervals = mean * (1.0 + j * gen.uniform(-1.0, 1.0, size=(n, k)))
    # P(at least one change in tau) = 1 - exp(-Delta tau) = -expm1(-Delta tau)
    prob = -np.expm1(-delta[:, None] * intervals)
    changed = (gen.random(size=(n, k)) < prob).astype(np.uint8)
    return changed, intervals
