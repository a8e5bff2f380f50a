"""Discrete crawl scheduling at a constant rate (001 Algorithm 1, SPEC section 4).

:class:`Scheduler` crawls, at each tick of a crawl rate ``R``, the page with
the highest crawl value ``V_i(tau_eff,i)`` (:func:`freshcore.value.crawl_value`),
exactly as a brute-force argmax over all pages would (ties to the lowest page
index), without evaluating every page at every tick.  The compiled state
(``freshcore._schedule``) documents the invariant that makes this exact.

This first slice of issue 4 covers a fixed set of pages; adding, removing or
re-parameterising pages, save/load, sharding, the baselines and the simulator
are not implemented yet.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _schedule
from freshcore._validation import check_choice, check_int, check_scalar
from freshcore.value import PageModel

__all__ = ["Scheduler"]

_KINDS = ("exact", "approx", "greedy", "cis")


class Scheduler:
    """Greedy crawl scheduler: crawl ``argmax_i V_i(tau_eff,i(t_j))`` at every tick.

    Parameters
    ----------
    pages : PageModel
        The pages; their parameters are fixed for the
        scheduler's life.
    rate : float
        Crawl rate ``R > 0``: tick ``j`` after the last rate change at time
        ``t_0`` is at ``t_0 + j/R``.  Changed by :meth:`set_rate`.
    value : {"exact", "approx", "greedy", "cis"}, default="exact"
        The crawl value, as ``kind`` of :func:`freshcore.value.crawl_value`:
        Greedy-NCIS exact, the approx-``terms`` truncation, Greedy (signals
        ignored) or Greedy-CIS (signals taken as proof of a change).
    signal_delay : float, default=0.0
        Signals timed less than ``signal_delay`` after their page's last
        crawl are discarded (001 Appendix C).
    terms : int, optional
        Number of terms ``j >= 1`` for ``value="approx"`` (required there,
        not allowed otherwise).

    Notes
    -----
    Every page starts crawled at time 0 with no signals; the first tick is at
    ``1/R``.  At tick time ``t`` the page crawled is ``argmax_i V_i(tau_i)``
    with ``tau_i = (t - last_i) + b_i n_i`` (the term ``b_i n_i`` is 0 when
    ``n_i = 0``), ``last_i`` the page's last crawl, ``n_i`` its counted
    signals since then, and ``b_i`` the time-equivalent of one signal:
    ``beta_i`` (``PageModel.beta``) for "exact" and "approx", 0 for "greedy"
    and ``inf`` for "cis" when ``lambda_i Delta_i > 0`` (0 otherwise).  A crawl
    sets ``last_i = t`` and ``n_i = 0`` (SPEC section 4).  A signal counts as
    soon as :meth:`signal` is called.

    The decision is exactly the brute-force argmax (tests compare every
    decision with one), yet a tick evaluates only a short list of pages near
    the top plus O(log m) heap work per crawled page: see the level invariant
    in ``freshcore._schedule``.

    Examples
    --------
    >>> from freshcore.value import PageModel
    >>> from freshcore.schedule import Scheduler
    >>> pages = PageModel([1.0, 0.5, 0.25], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.1)
    >>> s = Scheduler(pages, rate=1.0, value="exact")
    >>> s.run(5).tolist()
    [0, 1, 0, 2, 1]
    >>> s.signal(2, 5.5)  # page 2, last crawled at t = 4, jumps the queue
    True
    >>> s.run(3).tolist(), s.time
    ([2, 0, 1], 8.0)
    """

    def __init__(
        self, pages: PageModel, rate: float, value: str = "exact", signal_delay: float = 0.0, terms: int | None = None
    ) -> None:
        caller = "Scheduler"
        if not isinstance(pages, PageModel):
            raise TypeError(
                f"The 'pages' parameter of {caller} must be a PageModel. Got {type(pages).__name__} instead."
            )
        r = check_scalar(rate, "rate", caller, low=0.0, low_inclusive=False)
        check_choice(value, "value", caller, _KINDS)
        delay = check_scalar(signal_delay, "signal_delay", caller, low=0.0)
        if value == "approx":
            if terms is None:
                raise ValueError(f"The 'terms' parameter of {caller} is required with value='approx'.")
            j = check_int(terms, "terms", caller, low=1)
        else:
            if terms is not None:
                raise ValueError(f"The 'terms' parameter of {caller} is only used with value='approx'. Got {terms!r}.")
            j = -1
        dl, lam = pages.change_rate, pages.recall
        if value == "greedy":
            beff = np.zeros(len(pages))
        elif value == "cis":
            beff = np.where(lam * dl > 0, np.inf, 0.0)
        else:
            beff = pages.beta
        arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (
            dl, pages.importance, pages.alpha, pages.gamma, pages.false_rate, pages.beta, lam, beff)]
        self._pages = pages
        self._value = value
        self._terms = terms
        self._state = _schedule.SchedulerState(*arrays, _KINDS.index(value), j, r, delay)

    @property
    def time(self) -> float:
        """Time of the last tick (0 before the first)."""
        return self._state.time

    @property
    def rate(self) -> float:
        """Current crawl rate ``R``."""
        return self._state.rate

    @property
    def n_pages(self) -> int:
        """Number of pages."""
        return len(self._pages)

    @property
    def pages(self) -> PageModel:
        """The pages."""
        return self._pages

    @property
    def value(self) -> str:
        """The value kind."""
        return self._value

    @property
    def last_crawl(self) -> np.ndarray:
        """Time of each page's last crawl (0 if never crawled), a copy of shape (n_pages,)."""
        return self._state.last_crawl()

    @property
    def signal_counts(self) -> np.ndarray:
        """Counted signals of each page since its last crawl, int64 copy of shape (n_pages,)."""
        return self._state.signal_counts()

    def next(self) -> int:
        """Advance one tick and return the page crawled at it.

        Returns
        -------
        page : int
        """
        return int(self._state.step())

    def run(self, n: int) -> np.ndarray:
        """Advance ``n`` ticks; return the pages crawled, in order.

        Parameters
        ----------
        n : int
            Number of ticks, ``n >= 0``.

        Returns
        -------
        pages : ndarray of int64 of shape (n,)
        """
        k = check_int(n, "n", "Scheduler.run", low=0)
        out = np.empty(k, dtype=np.intp)
        self._state.run(k, out)
        return out.astype(np.int64, copy=False)

    def signal(self, page: int, t: float) -> bool:
        """Record a change signal of ``page`` at time ``t``.

        Parameters
        ----------
        page : int
            Page index in ``[0, n_pages)``.
        t : float
            Time of the signal, finite and not before the page's last crawl.

        Returns
        -------
        counted : bool
            False when the signal is discarded because it falls less than
            ``signal_delay`` after the page's last crawl (001 Appendix C).

        Raises
        ------
        ValueError
            If ``page`` is out of range, ``t`` is not finite or ``t`` precedes
            the page's last crawl; the scheduler is then unchanged.
        TypeError
            If ``page`` is not an integer or ``t`` not a real number.
        """
        caller = "Scheduler.signal"
        j = check_int(page, "page", caller, low=0, high=self.n_pages - 1)
        tt = check_scalar(t, "t", caller)
        last = self._state.last_crawl_of(j)
        if tt < last:
            raise ValueError(
                f"The 't' parameter of {caller} must not precede the last crawl of page {j} "
                f"(at {last!r}). Got {tt!r} instead."
            )
        return bool(self._state.signal(j, tt))

    def set_rate(self, rate: float) -> Scheduler:
        """Change the crawl rate from now on (001 Appendix D); returns ``self``.

        The next tick is at ``time + 1/rate``.

        Raises
        ------
        ValueError
            If ``rate`` is not a finite number > 0 (the rate is then unchanged).
        """
        r = check_scalar(rate, "rate", "Scheduler.set_rate", low=0.0, low_inclusive=False)
        self._state.set_rate(r)
        return self

    def __repr__(self) -> str:
        return f"Scheduler(n_pages={self.n_pages}, rate={self.rate!r}, value={self._value!r}, time={self.time!r})"
