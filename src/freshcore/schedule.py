"""Discrete crawl scheduling at a given bandwidth: the exact argmax of the crawl value at every tick.

:class:`Scheduler` crawls, at each tick of a bandwidth ``R`` (crawls per unit
time), the page with the highest crawl value ``V_i(tau_eff,i)``
(:func:`freshcore.value.crawl_value`), exactly as a brute-force argmax over
all pages would (ties to the lowest page id), without evaluating every page at
every tick: Algorithm 1 of Busa-Fekete et al. (2025).  The compiled state
(``freshcore._schedule``) documents the invariant that makes this exact.

Pages have stable integer ids and can be added, removed and re-parameterised
(e.g. with fresh change-rate estimates) between ticks without a rebuild.
The full state survives :meth:`Scheduler.save`/:meth:`Scheduler.load`,
``pickle``, ``copy`` and :meth:`Scheduler.to_dict`/:meth:`Scheduler.from_dict`:
the continued decision sequence is identical to an uninterrupted run.

References
----------
R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm
utilizing noisy change-indicating signals", 2025: Algorithm 1, Appendices C
(delayed signals) and D (bandwidth changes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _schedule, _statefile
from freshcore._statefile import Entry
from freshcore._validation import (
    check_array,
    check_choice,
    check_crawl_times,
    check_int,
    check_page_id,
    check_page_ids,
    check_same_length,
    check_scalar,
)
from freshcore.value import PageModel
from freshcore.value import _check_pages as check_pages  # (until PageModel has a module of its own)

__all__ = ["MAX_PAGE_IDS", "Scheduler"]

VALUES = ("exact", "approx", "greedy", "cis")

#: Page ids a scheduler hands out over its life (its heaps index pages with 32-bit integers).
MAX_PAGE_IDS = 2**31 - 3

_PAGE_KEYS = ("change_rate", "importance", "recall", "false_rate")


class Scheduler(_statefile.StateFile):
    """Greedy crawl scheduler: crawl ``argmax_i V_i(tau_eff,i(t_j))`` at every tick.

    Parameters
    ----------
    pages : PageModel
        The initial pages, with ids ``0 .. len(pages) - 1``.  Pages are
        added, removed and re-parameterised with :meth:`add_pages`,
        :meth:`remove_pages` and :meth:`update_pages`.
    bandwidth : float
        Crawls per unit time ``R > 0``: tick ``j`` after the last change of
        bandwidth at time ``t_0`` is at ``t_0 + j/R``.  Changed by
        :meth:`set_bandwidth`.
    value : {"exact", "approx", "greedy", "cis"}, default="exact"
        The crawl value, as ``value`` of :func:`freshcore.value.crawl_value`:
        Greedy-NCIS exact, the approx-``terms`` truncation, Greedy (signals
        ignored) or Greedy-CIS (signals taken as proof of a change).
    signal_delay : float, default=0.0
        Signals timed less than ``signal_delay`` after their page's last
        crawl are discarded (Appendix C of Busa-Fekete et al., 2025).
    terms : int, optional
        Number of terms ``j >= 1`` for ``value="approx"`` (required there,
        not allowed otherwise).
    last_crawl : array_like of shape (n_pages,), optional
        Initial last-crawl time of each page, finite and ``<= 0`` (default:
        all 0).  Staggering them (e.g. ``-uniform(0, n_pages/R)``) shortens
        the start-up transient in which every page's value grows at the same
        pace and the first ticks cost O(n_pages) each (``freshcore._schedule``).

    Notes
    -----
    Every page starts crawled at ``last_crawl`` (default 0) with no signals;
    the first tick is at ``1/R``.  At tick time ``t`` the page crawled is ``argmax_i V_i(tau_i)``
    with ``tau_i = (t - last_i) + b_i n_i`` (the term ``b_i n_i`` is 0 when
    ``n_i = 0``), ``last_i`` the page's last crawl, ``n_i`` its counted
    signals since then, and ``b_i`` the time-equivalent of one signal:
    ``beta_i`` (``PageModel.beta``) for "exact" and "approx", 0 for "greedy"
    and ``inf`` for "cis" when ``lambda_i Delta_i > 0`` (0 otherwise).  A crawl
    sets ``last_i = t`` and ``n_i = 0`` (SPEC section 4).  A signal counts as
    soon as :meth:`signal` is called.

    Pages are named by stable integer ids: the initial pages are
    ``0 .. m-1``, :meth:`add_pages` hands out the next unused ids, and the
    id of a removed page is never reused (at most :data:`MAX_PAGE_IDS` ids over
    a scheduler's life).  Decisions, :meth:`signal` and the
    other methods use these ids; ties go to the lowest id.  The per-page
    properties (:attr:`last_crawl`, :attr:`signal_counts`, :attr:`pages`)
    list the live pages in increasing id order, i.e. entry ``i`` is page
    ``page_ids[i]`` (the identity until a page is removed).

    The decision is exactly the brute-force argmax over the live pages
    (tests compare every decision with one), yet a tick evaluates only the
    few pages whose upper bound reaches the winning value, with O(log m) heap
    work each: every page's value is bounded by a line from its last
    evaluation, with a slope from a bound on ``dV/dtau`` (the slope invariant
    in ``freshcore._schedule``).

    References
    ----------
    R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling
    algorithm utilizing noisy change-indicating signals", 2025: Algorithm 1.

    Examples
    --------
    >>> from freshcore.value import PageModel
    >>> from freshcore.schedule import Scheduler
    >>> pages = PageModel([1.0, 0.5, 0.25], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.1)
    >>> s = Scheduler(pages, bandwidth=1.0, value="exact")
    >>> s.run(5).tolist()
    [0, 1, 0, 2, 1]
    >>> s.signal(2, 5.5)  # page 2, last crawled at t = 4, jumps the queue
    True
    >>> s.run(3).tolist(), s.time
    ([2, 0, 1], 8.0)
    >>> s.add_pages(PageModel([2.0], [1.0]), last_crawl=5.0).tolist()  # gets id 3
    [3]
    >>> s.remove_pages([0]).update_pages([1], PageModel([0.1], [1.0])).run(3).tolist()
    [3, 2, 3]
    >>> s.page_ids.tolist(), s.last_crawl.tolist()
    ([1, 2, 3], [8.0, 10.0, 11.0])
    """

    FORMAT_VERSION = 5
    _MAGIC = "freshcore.Scheduler"
    _WHAT = "scheduler"

    def __init__(
        self,
        pages: PageModel,
        bandwidth: float,
        value: str = "exact",
        signal_delay: float = 0.0,
        terms: int | None = None,
        *,
        last_crawl: Any = None,
    ) -> None:
        caller = "Scheduler"
        check_pages(pages, caller)
        r = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
        if len(pages) > MAX_PAGE_IDS:
            raise ValueError(
                f"The 'pages' parameter of {caller} must hold at most {MAX_PAGE_IDS} pages. Got {len(pages)}."
            )
        check_choice(value, "value", caller, VALUES)
        delay = check_scalar(signal_delay, "signal_delay", caller, low=0.0)
        j = _check_terms(terms, value, caller)
        last = None if last_crawl is None else check_crawl_times(last_crawl, len(pages), caller)
        self._pages: PageModel | None = pages
        self._value = value
        self._terms = terms
        self._delay = delay
        self._state = _schedule.SchedulerState(*_page_arrays(pages), VALUES.index(value), j, r, delay, last)

    @property
    def time(self) -> float:
        """Time of the last tick (0 before the first)."""
        return self._state.time

    @property
    def bandwidth(self) -> float:
        """Current bandwidth ``R``: crawls per unit time, one per tick."""
        return self._state.rate

    @property
    def n_pages(self) -> int:
        """Number of live pages."""
        return self._state.n_pages

    @property
    def page_ids(self) -> np.ndarray:
        """Ids of the live pages, increasing (int64 array of shape (n_pages,))."""
        return self._state.page_ids()

    @property
    def pages(self) -> PageModel:
        """The live pages' current parameters, in id order (``pages[i]`` is page ``page_ids[i]``).

        Raises
        ------
        ValueError
            If every page was removed (a PageModel cannot be empty).
        """
        if self._pages is None:
            if self.n_pages == 0:
                raise ValueError("Scheduler.pages: every page was removed.")
            self._pages = PageModel(*self._state.params())
        return self._pages

    @property
    def value(self) -> str:
        """The value kind."""
        return self._value

    @property
    def signal_delay(self) -> float:
        """Signals less than this after their page's last crawl are discarded."""
        return self._delay

    @property
    def terms(self) -> int | None:
        """Number of terms of ``value="approx"`` (None otherwise)."""
        return self._terms

    @property
    def last_crawl(self) -> np.ndarray:
        """Time of each live page's last crawl, in id order (a copy of shape (n_pages,)).

        0 (or the ``last_crawl`` given) for a page never crawled; the time of
        its addition (or the ``last_crawl`` given) for an added page.
        """
        return self._state.last_crawl()

    @property
    def signal_counts(self) -> np.ndarray:
        """Counted signals of each live page since its last crawl, in id order (int64 copy of shape (n_pages,))."""
        return self._state.signal_counts()

    def next(self) -> int:
        """Advance one tick and return the page crawled at it.

        Returns
        -------
        page : int
            Its id.

        Raises
        ------
        ValueError
            If every page was removed.
        """
        self._need_pages("Scheduler.next")
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
            Their ids.

        Raises
        ------
        ValueError
            If ``n < 0``, or ``n > 0`` and every page was removed.
        """
        k = check_int(n, "n", "Scheduler.run", low=0)
        if k:
            self._need_pages("Scheduler.run")
        out = np.empty(k, dtype=np.intp)
        self._state.run(k, out)
        return out.astype(np.int64, copy=False)

    def signal(self, page: int, t: float) -> bool:
        """Record a change signal of ``page`` at time ``t``.

        Parameters
        ----------
        page : int
            Id of a live page.
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
            If ``page`` is not a live page id, ``t`` is not finite or ``t`` precedes
            the page's last crawl; the scheduler is then unchanged.
        TypeError
            If ``page`` is not an integer or ``t`` not a real number.
        """
        caller = "Scheduler.signal"
        j = check_page_id(page, "page", caller, self._state.n_slots, self._state.alive_of)
        tt = check_scalar(t, "t", caller)
        last = self._state.last_crawl_of(j)
        if tt < last:
            raise ValueError(
                f"The 't' parameter of {caller} must not precede the last crawl of page {j} "
                f"(at {last!r}). Got {tt!r} instead."
            )
        if self._state.signal_count_view()[j] >= _schedule.MAX_SIGNALS:
            raise ValueError(
                f"{caller}: page {j} already has {_schedule.MAX_SIGNALS} signals since its last crawl, the most a "
                f"scheduler counts (32-bit counters)."
            )
        return bool(self._state.signal(j, tt))

    def signal_many(self, pages: Any, times: Any) -> np.ndarray:
        """Record several change signals at once; equal to a loop of :meth:`signal`.

        Parameters
        ----------
        pages : array_like of int of shape (n,)
            Page id of each signal.
        times : array_like of float of shape (n,)
            Time of each signal, finite and not before its page's last crawl.

        Returns
        -------
        counted : ndarray of bool of shape (n,)
            ``counted[i]`` is what ``signal(pages[i], times[i])`` returns
            when the signals are recorded in order.

        Raises
        ------
        ValueError
            If a page is not a live page id, a time is not finite or precedes its
            page's last crawl, or the lengths differ; the message names the
            first bad index and no signal is recorded.
        TypeError
            If ``pages`` is not an integer array or ``times`` not real.
        """
        caller = "Scheduler.signal_many"
        p = self._check_ids(pages, "pages", caller)
        tt = check_array(times, "times", caller, allow_empty=True)
        check_same_length(caller, pages=p, times=tt)
        last = self._state.last_crawl_view()[p]
        bad = tt < last
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"The 'times' parameter of {caller} must not precede the last crawl of each page; "
                f"times[{i}] = {tt[i].item()!r} < {last[i].item()!r}, the last crawl of page {p[i].item()}."
            )
        counts = self._state.signal_count_view()
        if len(p) and int(counts[p].max()) + len(p) > _schedule.MAX_SIGNALS:  # rare: count exactly
            per_page = np.bincount(p, minlength=len(counts))
            over = counts.astype(np.int64) + per_page > _schedule.MAX_SIGNALS
            if over.any():
                j = int(np.flatnonzero(over)[0])
                i = int(np.flatnonzero(p == j)[_schedule.MAX_SIGNALS - int(counts[j])])
                raise ValueError(
                    f"The 'pages' parameter of {caller} would give page {j} more than {_schedule.MAX_SIGNALS} "
                    f"signals since its last crawl, the most a scheduler counts (32-bit counters), at "
                    f"pages[{i}]; no signal is recorded."
                )
        out = np.empty(len(p), dtype=np.uint8)
        self._state.signal_many(p, tt, out)
        return out.view(np.bool_)

    def set_bandwidth(self, bandwidth: float) -> Scheduler:
        """Change the bandwidth from now on (Appendix D of Busa-Fekete et al., 2025); returns ``self``.

        The next tick is at ``time + 1/bandwidth``.

        Raises
        ------
        ValueError
            If ``bandwidth`` is not a finite number > 0 (it is then unchanged).
        """
        r = check_scalar(bandwidth, "bandwidth", "Scheduler.set_bandwidth", low=0.0, low_inclusive=False)
        self._state.set_rate(r)
        return self

    # -- dynamic pages ----------------------------------------------------------
    def add_pages(self, pages: PageModel, last_crawl: Any = None) -> np.ndarray:
        """Add pages; returns their new ids (the next unused ones, never reused).

        Parameters
        ----------
        pages : PageModel
            Parameters of the new pages.
        last_crawl : float or array_like of shape (len(pages),), optional
            Their last crawl, finite and ``<= time`` (default: ``time``, i.e.
            just crawled).

        Returns
        -------
        ids : ndarray of int64 of shape (len(pages),)

        Notes
        -----
        No rebuild: each new page is evaluated at the current time and goes
        to the heap of its slope bucket (O(log m) each; ``freshcore._schedule``).
        """
        caller = "Scheduler.add_pages"
        check_pages(pages, caller)
        n = len(pages)
        if self._state.n_slots + n > MAX_PAGE_IDS:
            raise ValueError(
                f"The 'pages' parameter of {caller} would take the page ids handed out past {MAX_PAGE_IDS} "
                f"({self._state.n_slots} so far, {n} more)."
            )
        if last_crawl is None:
            last = np.full(n, self.time)
        else:
            last = check_crawl_times(last_crawl, n, caller, latest=self.time, scalar=True)
        first = self._state.add(*_page_arrays(pages), last)
        self._pages = None
        return np.arange(first, first + n, dtype=np.int64)

    def remove_pages(self, ids: Any) -> Scheduler:
        """Remove live pages (no rebuild); returns ``self``.

        Parameters
        ----------
        ids : array_like of int
            Distinct live page ids.

        Raises
        ------
        ValueError
            If an id is unknown, already removed or repeated (the message
            names the first bad index); nothing is removed then.
        """
        p = self._check_ids(ids, "ids", "Scheduler.remove_pages", distinct=True)
        self._state.remove(p)
        self._pages = None
        return self

    def update_pages(self, ids: Any, pages: PageModel) -> Scheduler:
        """New parameters for live pages, e.g. fresh change-rate estimates; returns ``self``.

        The pages keep their last crawl and counted signals; each is
        re-placed in the heap of its slope bucket (no rebuild).

        Parameters
        ----------
        ids : array_like of int of shape (n,)
            Distinct live page ids.
        pages : PageModel of n pages
            Their new parameters, in the order of ``ids``.

        Raises
        ------
        ValueError
            If an id is unknown, removed or repeated, or the lengths differ;
            the scheduler is then unchanged.
        """
        caller = "Scheduler.update_pages"
        p = self._check_ids(ids, "ids", caller, distinct=True)
        check_pages(pages, caller)
        if len(pages) != len(p):
            raise ValueError(
                f"The 'pages' parameter of {caller} must have one page per id ({len(p)}). Got {len(pages)} instead."
            )
        self._state.update(p, *_page_arrays(pages))
        self._pages = None
        return self

    def _check_ids(self, ids: Any, name: str, caller: str, distinct: bool = False) -> np.ndarray:
        """Live page ids as an intp array; ValueError naming the first unknown, removed or repeated one."""
        return check_page_ids(ids, name, caller, self._state.n_slots, self._state.alive_of, distinct=distinct)

    def _need_pages(self, caller: str) -> None:
        if self._state.n_pages == 0:
            raise ValueError(f"{caller}: no page to crawl (every page was removed).")

    # -- state: dict, pickle, copy, file (StateFile adds save, load, pickle and copy) ------------------------
    def to_dict(self) -> dict[str, Any]:
        """The full state as a dict of numpy arrays and Python scalars (copies).

        Holds the parameters of every page id handed out (``alive`` flags
        the live ones), the value kind, ``terms``, the signal
        delay and the compiled state (bandwidth ``rate``, origin and tick count of the
        current bandwidth, time, last crawls, signal counts, and each page's
        bound: its key and slope bucket, from which the heaps are rebuilt).
        :meth:`from_dict` restores it exactly: the continued decisions (and
        even the value evaluations) are those of an uninterrupted run.
        """
        d: dict[str, Any] = {
            "format_version": self.FORMAT_VERSION,
            "value": self._value,
            "terms": self._terms,
        }
        d.update(self._state.export_state())
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scheduler:
        """Rebuild a scheduler from :meth:`to_dict` output.

        Every entry is checked (type, shape, range), and so are the
        invariants that tie them together: the clock (``time = origin +
        k/rate``, never before 0), no live page crawled after ``time``, every
        live page in one heap once the first tick has passed, parked pages only
        for Greedy; a state that fails them is refused rather than run.

        Raises
        ------
        ValueError
            If an entry is missing, of the wrong shape or type, out of range,
            or inconsistent with the others; the message names the entry.
        TypeError
            If ``d`` is not a mapping.
        """
        caller = "Scheduler.from_dict"
        version = _statefile.check_entries(d, (Entry("format_version", "int"),), caller)["format_version"]
        if version != cls.FORMAT_VERSION:
            raise ValueError(
                f"The 'd' parameter of {caller} is of format version {version!r}; this freshcore reads "
                f"version {cls.FORMAT_VERSION}."
            )
        m = len(np.atleast_1d(d.get("alive", ())))
        state = _statefile.check_entries(d, _STATE, caller, m)
        _check_invariants(state, caller)
        value, terms = state["value"], state["terms"]
        self = cls.__new__(cls)
        self._pages = None
        self._value = value
        self._terms = terms
        self._delay = state["signal_delay"]
        arrays = [np.ascontiguousarray(state[k]) for k in ("change_rate", "importance", "false_rate", "recall")]
        self._state = _schedule.SchedulerState(
            *arrays, VALUES.index(value), -1 if terms is None else terms, state["rate"], self._delay)
        self._state.import_state(state)
        return self

    def __repr__(self) -> str:
        return (f"Scheduler(n_pages={self.n_pages}, bandwidth={self.bandwidth!r}, value={self._value!r}, "
                f"time={self.time!r})")


def _check_terms(terms: Any, value: str, caller: str) -> int:
    """``terms`` of ``value="approx"`` (required there, refused otherwise); -1 for the other kinds."""
    if value == "approx":
        if terms is None:
            raise ValueError(f"The 'terms' parameter of {caller} is required with value='approx'.")
        return check_int(terms, "terms", caller, low=1)
    if terms is not None:
        raise ValueError(f"The 'terms' parameter of {caller} is only used with value='approx'. Got {terms!r}.")
    return -1


def _page_arrays(pages: PageModel) -> list[np.ndarray]:
    """The per-page arrays of the compiled state: Delta, mu, nu and lambda.

    (``alpha``, ``gamma``, ``beta`` and the signal term of ``tau`` for the
    value kind are recomputed by the compiled state with PageModel's
    operations; ``beta`` by the same compiled function.)
    """
    return [np.ascontiguousarray(a, dtype=np.float64) for a in (
        pages.change_rate, pages.importance, pages.false_rate, pages.recall)]


#: The entries of :meth:`Scheduler.to_dict` (the page arrays have one entry per page id handed out).
_STATE = (
    Entry("format_version", "int"),
    Entry("value", "str", choices=VALUES),
    Entry("terms", "int", low=1, optional=True),
    Entry("change_rate", "floats", low=0.0),
    Entry("importance", "floats", low=0.0),
    Entry("recall", "floats", low=0.0, high=1.0),
    Entry("false_rate", "floats", low=0.0),
    Entry("alive", "flags"),
    Entry("last", "floats"),
    Entry("ncis", "ints", low=0, high=_schedule.MAX_SIGNALS),
    Entry("key", "floats", finite=False),
    Entry("bucket", "ints", low=0, high=_schedule.NOT_PLACED_CODE),
    Entry("origin", "float", low=0.0),
    Entry("rate", "float", low=0.0, open_low=True),
    Entry("time", "float", low=0.0),
    Entry("signal_delay", "float", low=0.0),
    Entry("last_best", "float", low=0.0),
    Entry("park_level", "float", low=0.0),
    Entry("park_margin", "float", low=0.0, high=1.0, open_low=True, open_high=True),
    Entry("park_fall", "int", low=0),
    Entry("n_unparks", "int", low=0),
    Entry("k", "int", low=0),
    Entry("nticks", "int", low=0),
    Entry("n_evaluations", "int", low=0),
    Entry("built", "bool"),
)


def _check_invariants(state: dict[str, Any], caller: str) -> None:
    """What ties the checked entries of a :meth:`Scheduler.to_dict` dict together (a ValueError naming one)."""

    def bad(key: str, why: str) -> ValueError:
        return ValueError(f"The {key!r} entry of the dict given to {caller} {why}.")

    value, terms = state["value"], state["terms"]
    if (value == "approx") != (terms is not None):
        raise bad("terms", f"must be an integer >= 1 with value 'approx' and None otherwise, got {terms!r}")
    # the clock: ticks at origin + j/rate since the last change of bandwidth (at time origin), from time 0 on
    origin, k, rate, time = state["origin"], state["k"], state["rate"], state["time"]
    if time != origin + k / rate:
        raise bad("time", f"must be 'origin' + 'k' / 'rate' ({origin!r} + {k} / {rate!r}), got {time!r}")
    if k > state["nticks"] or state["park_fall"] > state["nticks"] or state["n_unparks"] > state["nticks"]:
        raise bad("nticks", "must count every tick: at least 'k', 'park_fall' and 'n_unparks'")
    built, alive, bucket = state["built"], state["alive"], state["bucket"]
    if not built and (state["nticks"] or time != 0.0):
        raise bad("built", "must be True once a tick has passed")
    late = np.flatnonzero(alive & (state["last"] > time))
    if late.size:
        j = int(late[0])
        raise bad("last", f"must not be after 'time' ({time!r}) for a live page; page {j} was crawled at "
                  f"{state['last'][j]!r}")
    n_buckets = _schedule.N_BUCKETS
    wrong = (bucket >= n_buckets) & (bucket != _schedule.NOT_PLACED_CODE)
    if wrong.any():
        raise bad("bucket", f"must hold slope buckets below {n_buckets} or {_schedule.NOT_PLACED_CODE} (page "
                  f"{int(np.flatnonzero(wrong)[0])})")
    parked = np.isin(bucket, (_schedule.PARK_CODE, _schedule.FAR_CODE))
    if parked.any() and value != "greedy":
        raise bad("bucket", f"must park only Greedy pages (page {int(np.flatnonzero(parked)[0])})")
    placed = bucket != _schedule.NOT_PLACED_CODE
    if built and (placed != alive).any():
        j = int(np.flatnonzero(placed != alive)[0])
        raise bad("bucket", f"must place every live page and no removed one (page {j})")
    if not built and placed.any():
        raise bad("bucket", "must place no page before the first tick")
