"""Baseline crawl policies for :func:`freshcore.policy_simulation.simulate` (SPEC section 4).

Every class here satisfies :class:`CrawlPolicy` (``bandwidth``, ``time``,
``n_pages``, ``next()``, ``run(n)``, ``signal(page, t)``,
``set_bandwidth(bandwidth)``; :class:`NutchAdaptive` also has
``observe(page, changed)``), the same interface as
:class:`freshcore.schedule.Scheduler`, so the simulator judges all of them
on the same events.  None of the baselines uses change signals:
``signal`` and ``signal_many`` validate their arguments and return ``False``.

- :class:`LowDiscrepancy` -- per-page crawl rates ``xi_i`` (e.g. the continuous
  optimum), earliest due time first (SPEC section 4's form of "LDS", a baseline
  of Section 6 of Busa-Fekete, Zimmert, György et al. (2025)).
- :class:`RoundRobin` -- pages ``0, 1, ..., m - 1, 0, ...``.
- :class:`UniformRandom` -- a uniformly random page at every tick.
- :class:`NutchAdaptive` -- Apache Nutch's ``AdaptiveFetchSchedule`` under a
  fixed budget.

Ticks: the ``j``-th tick after the last change of bandwidth ``R`` at time
``t_0`` (0 at first) is at ``t_0 + j/R``, the convention of the scheduler.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import heapq
from typing import Any, Protocol, runtime_checkable

import numpy as np

from freshcore._papers import AVRACHENKOV_2020, AZAR_2018, BUSA_FEKETE_2025, cites
from freshcore._validation import check_array, check_indices, check_int, check_rng, check_same_length, check_scalar

__all__ = ["CrawlPolicy", "LowDiscrepancy", "NutchAdaptive", "RoundRobin", "UniformRandom"]

_DAY = 86400.0


@runtime_checkable
class CrawlPolicy(Protocol):
    """What a crawl policy offers: one page per tick of a bandwidth, told of change signals.

    :class:`~freshcore.schedule.Scheduler`, :class:`~freshcore.sharding.ShardedScheduler`
    and the baselines of this module satisfy it, and
    :func:`~freshcore.policy_simulation.simulate` accepts any object that does
    (``isinstance(obj, CrawlPolicy)`` checks the members by name; a type
    checker checks their signatures).

    The ``j``-th tick after the last change of bandwidth ``R`` at time ``t_0``
    (0 at first) is at ``t_0 + j/R``.

    Beyond the members below, :func:`~freshcore.policy_simulation.simulate`
    uses these when a policy has them:

    ``signal_many(pages, times) -> ndarray of bool``
        Several signals at once, in time order; equal to a loop of :meth:`signal`.
    ``tick_times(n) -> ndarray``
        The tick times of the next ``n`` decisions (non-decreasing), without
        making them, for a policy whose decisions are not evenly spaced (e.g.
        :class:`~freshcore.sharding.ShardedScheduler`, whose ``k`` shards tick
        together once every ``k/R``).
    ``observe(page, changed)``
        The crawl's outcome, called right after each crawl (the simulator then
        steps one tick at a time), as :class:`NutchAdaptive` needs.
    ``poll(pages, t, moved)``
        A read of polled signal sources (a sitemap, a feed) at time ``t``
        (not before the last tick): ``pages`` (int64 array) were polled,
        ``moved`` (bool array of the same length) says whose signal moved
        since its previous poll -- several moves in between collapse into one
        -- pages that did not move included (SPEC section 3b).  With
        ``simulate(..., polls=...)`` a policy with ``poll`` gets every poll
        this way (with ``lastmod=`` the latest move times, NaN where none,
        when the :class:`~freshcore.policy_simulation.PollSchedule` says the
        source gives them); a policy without it gets one :meth:`signal` at
        the poll time per moved page ("fed the polls"); one without ``signal``
        either gets nothing.

    :func:`~freshcore.policy_simulation.simulate` also drives an object
    without ``signal``/``signal_many`` (it is given no signals), which is not a
    CrawlPolicy.
    """

    @property
    def bandwidth(self) -> float:
        """Crawls per unit time ``R``: the ticks are ``1/R`` apart."""

    @property
    def time(self) -> float:
        """Time of the last tick (0 before the first)."""

    @property
    def n_pages(self) -> int:
        """Number of (live) pages."""

    def next(self) -> int:
        """Advance one tick and return the page crawled at it."""

    def run(self, n: int) -> np.ndarray:
        """The pages crawled at the next ``n`` ticks (int64, shape ``(n,)``); equal to ``n`` calls of :meth:`next`."""

    def signal(self, page: int, t: float) -> bool:
        """A change signal of ``page`` at time ``t`` (not before its last crawl); whether the policy counted it."""

    def set_bandwidth(self, bandwidth: float) -> object:
        """Change the bandwidth from now on (the next tick is at ``time + 1/bandwidth``); returns the policy."""


class _TickPolicy:
    """Tick clock shared by the baselines (not public)."""

    _caller = "policy"

    def __init__(self, n_pages: int, bandwidth: float) -> None:
        self._m = n_pages
        self._bandwidth = bandwidth
        self._origin = 0.0
        self._k = 0
        self._time = 0.0

    @property
    def bandwidth(self) -> float:
        """Current bandwidth ``R``: crawls per unit time, one per tick."""
        return self._bandwidth

    @property
    def time(self) -> float:
        """Time of the last tick (0 before the first)."""
        return self._time

    @property
    def n_pages(self) -> int:
        """Number of pages."""
        return self._m

    def _tick(self) -> float:
        self._k += 1
        self._time = self._origin + self._k / self._bandwidth
        return self._time

    def _ticks(self, n: int) -> np.ndarray:
        """Times of the next ``n`` ticks (advances the clock)."""
        t = self._origin + np.arange(self._k + 1, self._k + n + 1) / self._bandwidth
        self._k += n
        if n:
            self._time = float(t[-1])
        return t

    def _choose(self, t: float) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    def next(self) -> int:
        """Advance one tick (to ``time + 1/bandwidth``) and return the page crawled at it."""
        return self._choose(self._tick())

    def run(self, n: int) -> np.ndarray:
        """Advance ``n`` ticks; return the pages crawled, int64 array of shape (n,).

        Equal to ``n`` calls of :meth:`next`.
        """
        k = check_int(n, "n", f"{self._caller}.run", low=0)
        out = np.empty(k, dtype=np.int64)
        for j in range(k):
            out[j] = self._choose(self._tick())
        return out

    def signal(self, page: int, t: float) -> bool:
        """Change signals are ignored by this baseline: validate and return ``False``.

        Raises
        ------
        ValueError, TypeError
            If ``page`` is not an index in ``[0, n_pages)`` or ``t`` not a finite number.
        """
        caller = f"{self._caller}.signal"
        check_int(page, "page", caller, low=0, high=self._m - 1)
        check_scalar(t, "t", caller)
        return False

    def signal_many(self, pages: Any, times: Any) -> np.ndarray:
        """Many signals at once, ignored like :meth:`signal`: validate, return all ``False``.

        Parameters
        ----------
        pages : array_like of int of shape (n,)
            Page indices in ``[0, n_pages)``.
        times : array_like of float of shape (n,)
            Finite signal times.

        Returns
        -------
        counted : ndarray of bool of shape (n,)
            All ``False``.

        Raises
        ------
        ValueError, TypeError
            Naming the first bad index, or for different lengths.
        """
        caller = f"{self._caller}.signal_many"
        idx = check_indices(pages, "pages", caller, self._m)
        tt = check_array(times, "times", caller, allow_empty=True)
        check_same_length(caller, pages=idx, times=tt)
        return np.zeros(len(idx), dtype=bool)

    def set_bandwidth(self, bandwidth: float) -> Any:
        """Change the bandwidth from now on (the next tick is at ``time + 1/bandwidth``); returns ``self``.

        Raises
        ------
        ValueError
            If ``bandwidth`` is not a finite number > 0 (the bandwidth is then unchanged).
        """
        r = check_scalar(bandwidth, "bandwidth", f"{self._caller}.set_bandwidth", low=0.0, low_inclusive=False)
        self._origin, self._k, self._bandwidth = self._time, 0, r
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_pages={self._m}, bandwidth={self._bandwidth!r}, time={self._time!r})"


def _check_bandwidth(bandwidth: Any, caller: str) -> float:
    return check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)


@cites(BUSA_FEKETE_2025)
class RoundRobin(_TickPolicy):
    """Crawl the pages in turn: ``0, 1, ..., n_pages - 1, 0, 1, ...``.

    Parameters
    ----------
    n_pages : int
        Number of pages ``m >= 1``.
    bandwidth : float
        Crawls per unit time ``R > 0`` (one per tick).

    Notes
    -----
    Every page is crawled periodically with interval ``m/R``; its expected
    freshness is ``G(R/m)/mu`` (eq. (5) of Busa-Fekete et al. (2025),
    :func:`freshcore.rates.freshness` with ``model="periodic"``).

    Examples
    --------
    >>> from freshcore.policies import RoundRobin
    >>> p = RoundRobin(3, bandwidth=2.0)
    >>> p.run(4).tolist(), p.time
    ([0, 1, 2, 0], 2.0)
    """

    _caller = "RoundRobin"

    def __init__(self, n_pages: int, bandwidth: float) -> None:
        m = check_int(n_pages, "n_pages", self._caller, low=1)
        super().__init__(m, _check_bandwidth(bandwidth, self._caller))
        self._count = 0

    def _choose(self, t: float) -> int:
        page = self._count % self._m
        self._count += 1
        return page

    def run(self, n: int) -> np.ndarray:
        k = check_int(n, "n", "RoundRobin.run", low=0)
        self._ticks(k)
        out = (self._count + np.arange(k, dtype=np.int64)) % self._m
        self._count += k
        return out

    run.__doc__ = _TickPolicy.run.__doc__


@cites(AVRACHENKOV_2020)
class UniformRandom(_TickPolicy):
    """Crawl a uniformly random page at every tick.

    Parameters
    ----------
    n_pages : int
        Number of pages ``m >= 1``.
    bandwidth : float
        Crawls per unit time ``R > 0`` (one per tick).
    rng : None, int or numpy.random.Generator, default=None
        Source of the choices (a seed or a Generator); the same seed gives the same sequence, and
        ``run(n)`` equals ``n`` calls of :meth:`next`.

    Notes
    -----
    Each page is crawled at the ticks of a Bernoulli(``p = 1/m``) thinning
    of the tick grid, so at a random time its copy has age ``(u + K)/R`` with
    ``u ~ U[0, 1)`` and ``K ~ Geometric(p)`` on ``{0, 1, ...}``: its
    freshness is ``(1 - e^{-x})/x * p/(1 - (1 - p) e^{-x})`` with
    ``x = Delta/R``, close to the Poisson-crawling value
    ``(R/m)/(R/m + Delta)`` (eq. (10) of Avrachenkov, Patil and Thoppe (2020))
    and below the periodic one.

    Examples
    --------
    >>> from freshcore.policies import UniformRandom
    >>> p = UniformRandom(5, bandwidth=1.0, rng=0)
    >>> q = UniformRandom(5, bandwidth=1.0, rng=0)
    >>> p.run(6).tolist() == [q.next() for _ in range(6)]
    True
    """

    _caller = "UniformRandom"

    def __init__(self, n_pages: int, bandwidth: float, rng: Any = None) -> None:
        m = check_int(n_pages, "n_pages", self._caller, low=1)
        super().__init__(m, _check_bandwidth(bandwidth, self._caller))
        self._rng = check_rng(rng, self._caller)

    def _choose(self, t: float) -> int:
        return int(self._rng.integers(0, self._m))

    def run(self, n: int) -> np.ndarray:
        k = check_int(n, "n", "UniformRandom.run", low=0)
        self._ticks(k)
        return self._rng.integers(0, self._m, size=k).astype(np.int64, copy=False)

    run.__doc__ = _TickPolicy.run.__doc__


@cites(AZAR_2018, BUSA_FEKETE_2025)
class LowDiscrepancy(_TickPolicy):
    """Low-discrepancy crawling at given per-page rates ("LDS", SPEC section 4).

    Parameters
    ----------
    crawl_rate : array_like of shape (n_pages,)
        Target crawl rate ``xi_i >= 0`` of each page, not all zero: e.g.
        ``optimal_rates(change_rate, importance, R, model="periodic")`` or
        ``optimal_thresholds(pages, R).frequencies``.  Pages with
        ``xi_i = 0`` are never crawled.
    bandwidth : float
        Crawls per unit time ``R > 0`` of the ticks.

    Notes
    -----
    Every page starts crawled at time 0 with due time ``d_i = 1/xi_i``.  At
    each tick the page with the earliest due time is crawled (ties go to the
    lowest index) and its due time advances by ``1/xi_i``.  So page ``i``'s
    ``k``-th crawl is its ``k``-th due time ``k/xi_i`` in order; when
    ``sum(xi) = R`` the crawls keep pace with the due times and each page's
    crawl intervals average ``1/xi_i``.  Otherwise the crawls run ahead of
    (or behind) the due times and page ``i`` gets the share
    ``xi_i / sum(xi)`` of the crawls, i.e. the rate ``R xi_i / sum(xi)``.
    A heap keyed on ``(d_i, i)`` makes a tick ``O(log m)``.

    This is the standard low-discrepancy (earliest-due-first) form that SPEC
    section 4 prescribes; it is *not* a transcription of Algorithm 3 of Azar
    et al. (2018), whose text is not available to us.  The rates are fixed:
    after :meth:`set_bandwidth` the ticks change but ``xi`` does not (the optimum
    would have to be recomputed, the drawback Section 5 of Busa-Fekete et al.
    (2025) points out; their Section 6.4 runs it as "LDS").

    Examples
    --------
    >>> from freshcore.policies import LowDiscrepancy
    >>> p = LowDiscrepancy([2.0, 1.0, 1.0, 0.0], bandwidth=4.0)
    >>> p.run(8).tolist()
    [0, 0, 1, 2, 0, 0, 1, 2]
    """

    _caller = "LowDiscrepancy"

    def __init__(self, crawl_rate: Any, bandwidth: float) -> None:
        xi = check_array(crawl_rate, "crawl_rate", self._caller, low=0.0, copy=True)
        if not (xi > 0).any():
            raise ValueError(f"The 'crawl_rate' parameter of {self._caller} must have at least one entry > 0.")
        super().__init__(len(xi), _check_bandwidth(bandwidth, self._caller))
        xi.flags.writeable = False
        self._xi = xi
        with np.errstate(divide="ignore"):
            self._step = np.where(xi > 0, 1.0 / xi, np.inf)
        idx = np.flatnonzero(xi > 0)
        self._heap = [(float(self._step[i]), int(i)) for i in idx]
        heapq.heapify(self._heap)

    @property
    def crawl_rate(self) -> np.ndarray:
        """The target crawl rates ``xi`` (read-only)."""
        return self._xi

    def _choose(self, t: float) -> int:
        due, page = self._heap[0]
        heapq.heapreplace(self._heap, (due + float(self._step[page]), page))
        return page


class NutchAdaptive(_TickPolicy):
    """Apache Nutch's ``AdaptiveFetchSchedule`` under a fixed crawl budget (SPEC section 4).

    Parameters
    ----------
    n_pages : int
        Number of pages ``m >= 1``.
    bandwidth : float
        Crawls per unit time ``R > 0``: one crawl per tick, always.
    inc_rate, dec_rate : float, default=0.4, 0.2
        ``db.fetch.schedule.adaptive.inc_rate`` / ``dec_rate`` (Nutch's
        ``nutch-default.xml`` values), in ``[0, 1)``.
    min_interval, max_interval : float, default=60 s, 365 days
        ``db.fetch.schedule.adaptive.min_interval`` / ``max_interval`` in
        Nutch seconds.
    initial_interval : float, default=30 days
        ``db.fetch.interval.default`` in Nutch seconds.
    sync_delta : bool, default=True
        ``db.fetch.schedule.adaptive.sync_delta``.
    sync_delta_rate : float, default=0.3
        ``db.fetch.schedule.adaptive.sync_delta_rate``, in ``[0, 1]``.
    db_max_interval : float or None, default=90 days
        ``db.fetch.interval.max`` in Nutch seconds (None: no such check).
    requeue_now : bool, default=False
        How a page over ``db_max_interval`` is re-queued: False (SPEC section
        4) schedules it ``0.9 db_max_interval`` ahead; True follows
        ``AbstractFetchSchedule.shouldFetch`` literally (due at once).

    Notes
    -----
    Time scale: Nutch's seconds are multiplied by ``s = (m/R)/initial_interval``
    (fixed at construction), so the initial interval of 30 days becomes
    ``m/R``, the round-robin period at the initial bandwidth.  Every page starts
    fetched at time 0 with interval ``I = initial_interval``, modification
    time ``M = 0`` and due time ``F = I``.

    At each tick the page with the smallest due time ``F`` (the most overdue
    one; ties to the lowest index) is crawled, whether or not it is due yet,
    so the budget is always spent.  Its outcome ``changed`` arrives through
    :meth:`observe`; then, as ``AdaptiveFetchSchedule.setFetchSchedule`` (Nutch
    1.x, ``src/java/org/apache/nutch/crawl/AdaptiveFetchSchedule.java``) does
    at fetch time ``t``:

    1. changed (``STATUS_MODIFIED``): ``I <- I (1 - dec_rate)``, ``M <- t``;
       unchanged (``STATUS_NOTMODIFIED``): ``I <- I (1 + inc_rate)``; no
       outcome (``STATUS_UNKNOWN``, a crawl never observed): ``I`` unchanged;
    2. sync delta: ``delta = t - M``; if ``delta > I`` then ``I <- delta``;
       the reference time is ``t - sync_delta_rate * delta``;
    3. clamp ``I`` to ``[min_interval, max_interval]``;
    4. ``F <- reference + I``.

    Then ``db.fetch.interval.max`` (SPEC section 4): if ``I > db_max_interval``
    the page is re-queued with ``I <- 0.9 db_max_interval`` (81 days by
    default) and ``F <- t + I``.  Nutch's own check
    (``AbstractFetchSchedule.shouldFetch``, run when a fetch list is
    generated) tests ``F - now > db_max_interval`` and then sets ``F <- now``
    (and ``I <- 0.9 db_max_interval`` if ``I > db_max_interval``);
    ``requeue_now=True`` does exactly that right after the update (``F - now``
    only shrinks with time, so checking once is the same).  Under a fixed
    budget that literal form makes an unchanged page with a large ``delta``
    come back at once, tick after tick, until it changes: in
    ``bench/repro_nutch.py`` one page then takes 30-60% of all crawls.  The
    default form never puts a due time in the past.  Without any check, the
    sync-delta step gives ``F = t + I - 0.3 delta`` with ``I`` capped at
    365 days, in the past once ``delta`` exceeds about 1217 days: Nutch's
    known issue NUTCH-1564 ("sync_delta forces immediate re-fetch for
    documents not modified").

    The defaults are those of Nutch's ``conf/nutch-default.xml`` (inc 0.4,
    sync_delta_rate 0.3), as SPEC section 4 lists them; the fall-backs hard
    coded in ``AdaptiveFetchSchedule.setConf`` (0.2 and 0.2) apply only when
    the configuration lacks the keys.

    A crawl whose outcome is not observed before the next tick is treated as
    ``STATUS_UNKNOWN``.  A heap keyed on ``(F, page)`` makes a tick
    ``O(log m)``.

    References
    ----------
    Apache Nutch 1.x (github.com/apache/nutch), ``src/java/org/apache/nutch/crawl/``
    ``AdaptiveFetchSchedule.java`` (``setFetchSchedule``: the interval update
    and the sync-delta step) and ``AbstractFetchSchedule.java``
    (``shouldFetch``), ``conf/nutch-default.xml`` for the default values, and
    the issue NUTCH-1564.

    Examples
    --------
    >>> from freshcore.policies import NutchAdaptive
    >>> p = NutchAdaptive(3, bandwidth=1.0)
    >>> for changed in (True, False, False):
    ...     page = p.next()
    ...     _ = p.observe(page, changed)
    >>> p.intervals.round(3).tolist()  # initial interval m/R = 3; x 0.8 (changed), x 1.4, x 1.4
    [2.4, 4.2, 4.2]
    >>> p.due_times.round(3).tolist()  # t - 0.3 (t - M) + I
    [3.4, 5.6, 6.3]
    """

    _caller = "NutchAdaptive"

    def __init__(
        self,
        n_pages: int,
        bandwidth: float,
        *,
        inc_rate: float = 0.4,
        dec_rate: float = 0.2,
        min_interval: float = 60.0,
        max_interval: float = 365 * _DAY,
        initial_interval: float = 30 * _DAY,
        sync_delta: bool = True,
        sync_delta_rate: float = 0.3,
        db_max_interval: float | None = 90 * _DAY,
        requeue_now: bool = False,
    ) -> None:
        c = self._caller
        m = check_int(n_pages, "n_pages", c, low=1)
        r = _check_bandwidth(bandwidth, c)
        inc = check_scalar(inc_rate, "inc_rate", c, low=0.0, high=1.0, high_inclusive=False)
        dec = check_scalar(dec_rate, "dec_rate", c, low=0.0, high=1.0, high_inclusive=False)
        lo = check_scalar(min_interval, "min_interval", c, low=0.0, low_inclusive=False)
        hi = check_scalar(max_interval, "max_interval", c, low=lo)
        init = check_scalar(initial_interval, "initial_interval", c, low=0.0, low_inclusive=False)
        for name, flag in (("sync_delta", sync_delta), ("requeue_now", requeue_now)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"The {name!r} parameter of {c} must be a bool. Got {flag!r} instead.")
        srate = check_scalar(sync_delta_rate, "sync_delta_rate", c, low=0.0, high=1.0)
        dbmax = None if db_max_interval is None else check_scalar(
            db_max_interval, "db_max_interval", c, low=0.0, low_inclusive=False)
        super().__init__(m, r)
        s = (m / r) / init
        self._scale = s
        self._inc, self._dec, self._sync, self._srate = inc, dec, bool(sync_delta), srate
        self._lo, self._hi = lo * s, hi * s
        self._dbmax = None if dbmax is None else dbmax * s
        self._requeue_now = bool(requeue_now)
        i0 = m / r  # = initial_interval * s, without its rounding
        self._interval = np.full(m, i0)
        self._modified = np.zeros(m)
        self._due = np.full(m, i0)
        self._heap = [(i0, i) for i in range(m)]  # already a heap (sorted)
        self._pending: int | None = None
        self._pending_time = 0.0

    @property
    def scale(self) -> float:
        """Simulation time units per Nutch second, ``(m/R)/initial_interval``."""
        return self._scale

    @property
    def intervals(self) -> np.ndarray:
        """Current fetch interval of each page, in simulation time units (a copy)."""
        return self._interval.copy()

    @property
    def due_times(self) -> np.ndarray:
        """Current due time (Nutch's ``fetchTime``) of each page, in simulation time (a copy).

        The page crawled at the last tick keeps its old due time until its
        outcome is observed (or the next tick).
        """
        return self._due.copy()

    def _update(self, page: int, t: float, status: int) -> None:
        """``setFetchSchedule`` then the ``shouldFetch`` re-queue check; push the page back."""
        interval = self._interval[page]
        if status == 1:
            interval *= 1.0 - self._dec
            self._modified[page] = t
        elif status == 0:
            interval *= 1.0 + self._inc
        ref = t
        if self._sync:
            delta = t - self._modified[page]
            if delta > interval:
                interval = delta
            ref = t - self._srate * delta
        interval = min(max(interval, self._lo), self._hi)
        due = ref + interval
        if self._dbmax is not None:
            if self._requeue_now:
                if due - t > self._dbmax:
                    if interval > self._dbmax:
                        interval = 0.9 * self._dbmax
                    due = t
            elif interval > self._dbmax:
                interval = 0.9 * self._dbmax
                due = t + interval
        self._interval[page] = interval
        self._due[page] = due
        heapq.heappush(self._heap, (float(due), page))

    def _flush(self) -> None:
        if self._pending is not None:
            page, self._pending = self._pending, None
            self._update(page, self._pending_time, -1)

    def _choose(self, t: float) -> int:
        self._flush()
        _, page = heapq.heappop(self._heap)
        self._pending, self._pending_time = page, t
        return page

    def observe(self, page: int, changed: bool) -> NutchAdaptive:
        """Report the outcome of the crawl made at the last tick; returns ``self``.

        Parameters
        ----------
        page : int
            The page returned by the last :meth:`next`.
        changed : bool
            Whether the page changed since its previous crawl.

        Raises
        ------
        ValueError
            If ``page`` is not the page crawled at the last tick, or its
            outcome was already observed.
        TypeError
            If ``changed`` is not a bool.
        """
        caller = f"{self._caller}.observe"
        j = check_int(page, "page", caller, low=0, high=self._m - 1)
        if not isinstance(changed, (bool, np.bool_)):
            raise TypeError(f"The 'changed' parameter of {caller} must be a bool. Got {changed!r} instead.")
        if self._pending != j:
            raise ValueError(
                f"The 'page' parameter of {caller} must be the page crawled at the last tick "
                f"({self._pending!r}, None if already observed). Got {j!r} instead."
            )
        self._pending = None
        self._update(j, self._pending_time, 1 if changed else 0)
        return self
