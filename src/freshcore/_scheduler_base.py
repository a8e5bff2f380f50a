"""What :class:`~freshcore.schedule.Scheduler` and :class:`~freshcore.sharding.ShardedScheduler` share.

Both crawl one page per tick and take signals, bandwidth changes and page
changes by stable page id; :class:`SchedulerBase` holds those public methods
once, with their argument checks and documentation, over a few moves that each
class makes its own way (``_crawl``, ``_signal``, ``_add``, ...).  Every check
runs before any move, so a refused call leaves the scheduler unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from freshcore import _schedule, _statefile
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import (
    check_array,
    check_binary,
    check_int,
    check_page_id,
    check_page_ids,
    check_same_length,
    check_scalar,
)
from freshcore.pages import PageModel, check_pages


def check_poll_interval(poll_interval: Any, value: str, n: int, caller: str) -> np.ndarray | None:
    """``poll_interval`` of ``value="polled"`` as n per-page values ``w > 0`` (a scalar: all; ``inf`` allowed),
    a float64 copy; required there, refused otherwise (None for the other kinds)."""
    if value != "polled":
        if poll_interval is not None:
            raise ValueError(f"The 'poll_interval' parameter of {caller} is only used with value='polled'. Got "
                             f"{poll_interval!r}.")
        return None
    if poll_interval is None:
        raise ValueError(f"The 'poll_interval' parameter of {caller} is required with value='polled'.")
    w = check_array(poll_interval, "poll_interval", caller, ndim=(0, 1), low=0.0, low_inclusive=False,
                    allow_inf=True)
    if np.ndim(poll_interval) == 0:
        return np.full(n, float(w[0]))
    if len(w) != n:
        raise ValueError(f"The 'poll_interval' parameter of {caller} must be a number or an array of length {n} "
                         f"(one per page). Got length {len(w)} instead.")
    return np.array(w, dtype=np.float64, copy=True)


#: Poll group labels a scheduler takes: ``0 .. MAX_POLL_GROUPS - 1`` (``-1``: in no group).  Its tables hold 24
#: bytes a group up to the largest label used, so labels are meant to be numbered from 0.
MAX_POLL_GROUPS = 2**24


def check_last_poll(last_poll: Any, value: str, crawl: np.ndarray, caller: str) -> np.ndarray | None:
    """``last_poll`` of ``value="polled"``: one time per page (a scalar: all), finite and not after the page's last
    crawl ``crawl`` (a float64 copy; None: None, the caller's default, the last crawl); refused for the other
    kinds.  (A poll after the crawl is given to ``poll``, which takes polls before the scheduler's time: the
    scheduler then applies its window.)"""
    if last_poll is None:
        return None
    if value != "polled":
        raise ValueError(f"The 'last_poll' parameter of {caller} is only used with value='polled'. Got "
                         f"{last_poll!r}.")
    n = len(crawl)
    p = check_array(last_poll, "last_poll", caller, ndim=(0, 1), allow_empty=n == 0, copy=True)
    if np.ndim(last_poll) == 0:
        p = np.full(n, float(p.reshape(-1)[0]))
    elif len(p) != n:
        raise ValueError(f"The 'last_poll' parameter of {caller} must be a number or an array of length {n} (one "
                         f"per page). Got length {len(p)} instead.")
    late = np.flatnonzero(p > crawl)
    if late.size:
        i = int(late[0])
        raise ValueError(f"The 'last_poll' parameter of {caller} must not be after each page's last crawl (a poll "
                         f"since the crawl goes to poll()); last_poll[{i}] = {p[i].item()!r} > {crawl[i].item()!r}.")
    return np.ascontiguousarray(p, dtype=np.float64)


def check_poll_groups(labels: Any, value: str, n: int, caller: str, name: str = "poll_group") -> np.ndarray | None:
    """Poll group labels of ``value="polled"``: one integer per page (a scalar: all) in ``-1 .. MAX_POLL_GROUPS -
    1`` (-1: none), an int32 copy (None: None); refused for the other kinds."""
    if labels is None:
        return None
    if value != "polled":
        raise ValueError(f"The {name!r} parameter of {caller} is only used with value='polled'. Got {labels!r}.")
    a = np.asarray(labels)
    if a.dtype.kind not in "iu" and not (a.size == 0 and a.dtype.kind == "f"):
        raise TypeError(f"The {name!r} parameter of {caller} must hold integer group labels (-1: none). Got dtype "
                        f"{a.dtype}.")
    if a.ndim == 0:
        a = np.full(n, int(a), dtype=np.int64)
    if a.ndim != 1 or len(a) != n:
        raise ValueError(f"The {name!r} parameter of {caller} must be an integer or an array of length {n} (one per "
                         f"page). Got shape {a.shape} instead.")
    bad = np.flatnonzero((a < -1) | (a >= MAX_POLL_GROUPS))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"The {name!r} parameter of {caller} must hold labels in -1 .. {MAX_POLL_GROUPS - 1} (-1: "
                         f"no group); {name}[{i}] = {a[i].item()!r}.")
    return np.ascontiguousarray(a, dtype=np.int32)


class SchedulerBase(_statefile.StateFile):
    """The public methods of a scheduler of pages with stable ids (see the subclasses)."""

    #: The class's name in messages.
    _NAME = "Scheduler"
    _pages: PageModel | None
    _value: str
    _terms: int | None
    _delay: float

    # -- what both hold --------------------------------------------------------------------------------------
    @property
    def value(self) -> str:
        """The value kind (``value`` of :func:`freshcore.value.crawl_value`)."""
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
    def pages(self) -> PageModel:
        """The live pages' current parameters, in id order (``pages[i]`` is page ``page_ids[i]``).

        Raises
        ------
        ValueError
            If every page was removed (a PageModel cannot be empty).
        """
        if self._pages is None:
            if self.n_pages == 0:
                raise ValueError(f"{self._NAME}.pages: every page was removed.")
            self._pages = PageModel(*self._live_params())
        return self._pages

    @property
    def last_crawl(self) -> np.ndarray:
        """Time of each live page's last crawl, in id order (a copy of shape (n_pages,)).

        0 (or the ``last_crawl`` given) for a page never crawled; for an added
        page, the ``last_crawl`` given to :meth:`add_pages` (default: the time
        its ticks had reached then).
        """
        return self._last_crawl_of(self.page_ids)

    @property
    def signal_counts(self) -> np.ndarray:
        """Counted signals of each live page since its last crawl, in id order (int64 copy of shape (n_pages,))."""
        return self._signal_count_of(self.page_ids).astype(np.int64)

    # -- what a subclass provides --------------------------------------------------------------------------
    @property
    def time(self) -> float:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def n_pages(self) -> int:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @property
    def page_ids(self) -> np.ndarray:  # pragma: no cover - every subclass defines it
        """Ids of the live pages, increasing (int64 array of shape (n_pages,))."""
        raise NotImplementedError

    def _live_params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
        """(change_rate, importance, recall, false_rate) of the live pages, in id order."""
        raise NotImplementedError

    @property
    def _n_ids(self) -> int:  # pragma: no cover - every subclass defines it
        """Page ids handed out so far (live or removed): the next new id."""
        raise NotImplementedError

    def _alive_of(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Live flags of ids in ``0 .. _n_ids - 1``."""
        raise NotImplementedError

    def _last_crawl_of(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Last crawl times of live ids."""
        raise NotImplementedError

    def _signal_count_of(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Counted signals of live ids since their last crawl."""
        raise NotImplementedError

    def _crawl(self, n: int) -> np.ndarray:  # pragma: no cover
        """The pages crawled at the next ``n >= 1`` ticks (some page is live), int64."""
        raise NotImplementedError

    def _next(self) -> int:
        """The page crawled at the next tick (some page is live)."""
        return int(self._crawl(1)[0])

    def _signal(self, page: int, t: float) -> bool:  # pragma: no cover
        """Record a checked signal."""
        raise NotImplementedError

    def _last_poll_of(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Last poll times of live ids (value "polled")."""
        raise NotImplementedError

    def _polls_ok(self, pages: np.ndarray, t: float) -> bool:
        """Whether a compiled pass finds the polls' ids live and ``t`` not before each one's last poll (then
        ``poll`` skips those checks); the default is False."""
        return False

    def _poll_many(self, pages: np.ndarray, t: float, moved: np.ndarray) -> int:  # pragma: no cover
        """Record checked polls in order (``moved`` uint8 flags)."""
        raise NotImplementedError

    def _group_labels_of(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Poll group labels of live ids (value "polled"; -1: none), int64."""
        raise NotImplementedError

    def _group_floor(self, group: int, t: float) -> tuple[float, int] | None:  # pragma: no cover
        """None if ``t`` is not before group ``group``'s last poll nor a live member's last poll; else the time
        it precedes and the member's id (-1: the group's own last poll)."""
        raise NotImplementedError

    def _group_ok(self, group: int, t: float, moved: np.ndarray) -> bool:
        """Whether a compiled pass finds the group poll valid (then ``poll_group`` skips its checks)."""
        return False

    def _poll_group(self, group: int, t: float, moved: np.ndarray) -> int:  # pragma: no cover
        """Record a checked group poll."""
        raise NotImplementedError

    def _set_groups(self, ids: np.ndarray, labels: np.ndarray) -> None:  # pragma: no cover
        """Put checked live ids into checked groups."""
        raise NotImplementedError

    def _signals_ok(self, pages: np.ndarray, times: np.ndarray) -> bool:
        """Whether a compiled pass finds the signals valid (then ``signal_many`` skips its checks); the default
        is False: every signal goes through the checks."""
        return False

    def _signal_many(self, pages: np.ndarray, times: np.ndarray) -> np.ndarray:  # pragma: no cover
        """Record checked signals in order; the counted flags (bool)."""
        raise NotImplementedError

    def _set_bandwidth(self, bandwidth: float) -> None:  # pragma: no cover
        raise NotImplementedError

    def _new_crawl_times(self, last_crawl: Any, n: int, caller: str) -> np.ndarray:  # pragma: no cover
        """The checked last crawls of ``n`` new pages (``None``: just crawled, at the time their ticks have reached)."""
        raise NotImplementedError

    def _check_room(self, n: int, caller: str) -> None:  # pragma: no cover
        """Refuse ``n`` new pages when they would take the page ids past their limit."""
        raise NotImplementedError

    def _add(self, pages: PageModel, last: np.ndarray, poll_interval: Any = None, last_poll: Any = None,
             groups: Any = None) -> np.ndarray:  # pragma: no cover
        """Add checked pages (and, under "polled", their poll intervals, last polls and poll groups: None, their
        last crawls and none); their new ids (int64)."""
        raise NotImplementedError

    def _check_removal(self, ids: np.ndarray, caller: str) -> None:
        """Refuse a removal the scheduler cannot make (checked ids)."""

    def _remove(self, ids: np.ndarray) -> None:  # pragma: no cover
        raise NotImplementedError

    def _update(self, ids: np.ndarray, pages: PageModel, poll_interval: Any = None) -> None:  # pragma: no cover
        raise NotImplementedError

    # -- decisions ------------------------------------------------------------------------------------------
    def next(self) -> int:
        """Advance one tick and return the page crawled at it.

        Returns
        -------
        page : int
            Its id.

        Raises
        ------
        ValueError
            If every page was removed, or (:class:`~freshcore.value.PageValueError`) a page the tick evaluates
            has a value that cannot be computed in bounded time; the scheduler is then as before the call.
        """
        self._need_pages(f"{self._NAME}.next")
        return self._next()

    def run(self, n: int, signals: tuple[Any, Any] | None = None) -> np.ndarray:
        """Advance ``n`` ticks; return the pages crawled, in order (equal to ``n`` calls of :meth:`next`).

        Parameters
        ----------
        n : int
            Number of ticks, ``n >= 0``.
        signals : (pages, times), optional
            Change signals to record on the way, times non-decreasing: each
            just before the first tick at or after its time, those after the
            last tick after it.  Equal to a loop of :meth:`signal_many` (the
            signals up to each tick's time) and :meth:`next`, without a Python
            call per tick: the way to deliver a stream of signals fast.

        Returns
        -------
        pages : ndarray of int64 of shape (n,)
            Their ids.

        Raises
        ------
        ValueError
            If ``n < 0``, or ``n > 0`` and every page was removed, or
            ``signals`` is bad as :meth:`signal_many` says (or its times
            decrease; signal counts are checked as if no page were crawled on
            the way), naming the first bad index, nothing done; or
            (:class:`~freshcore.value.PageValueError`) a page a tick evaluates
            has a value that cannot be computed in bounded time: the ticks and
            signals before that one are taken (the message says how many) and
            are lost to the caller.
        """
        caller = f"{self._NAME}.run"
        k = check_int(n, "n", caller, low=0)
        if signals is not None:
            self._no_signals(caller)
            if not isinstance(signals, tuple) or len(signals) != 2:
                raise TypeError(f"The 'signals' parameter of {caller} must be a (pages, times) pair of arrays, got "
                                f"{type(signals).__name__}.")
            p, tt = self._checked_signals(signals[0], signals[1], caller)
            down = np.flatnonzero(tt[1:] < tt[:-1])
            if down.size:
                i = int(down[0]) + 1
                raise ValueError(f"The 'times' of the 'signals' parameter of {caller} must not decrease; times[{i}] = "
                                 f"{tt[i].item()!r} < times[{i - 1}] = {tt[i - 1].item()!r}.")
            if k == 0:
                if len(p):
                    self._signal_many(p, tt)
                return np.empty(0, dtype=np.int64)
            self._need_pages(caller)
            return self._crawl_signalled(k, p, tt)
        if k == 0:
            return np.empty(0, dtype=np.int64)
        self._need_pages(caller)
        return self._crawl(k)

    def _crawl_signalled(self, n: int, pages: np.ndarray, times: np.ndarray) -> np.ndarray:
        # (a subclass with a compiled loop overrides this)
        ticks = self._tick_times(n)
        cut = np.searchsorted(times, ticks, side="right")
        out = np.empty(n, dtype=np.int64)
        a = 0
        for k in range(n):
            b = int(cut[k])
            if b > a:
                self._signal_many(pages[a:b], times[a:b])
                a = b
            out[k] = self._next()
        if a < len(pages):
            self._signal_many(pages[a:], times[a:])
        return out

    def _tick_times(self, n: int) -> np.ndarray:  # pragma: no cover - subclasses without a compiled loop define it
        raise NotImplementedError

    def _need_pages(self, caller: str) -> None:
        if self.n_pages == 0:
            raise ValueError(f"{caller}: no page to crawl (every page was removed).")

    # -- signals ----------------------------------------------------------------------------------------------
    @cites(BUSA_FEKETE_2025)
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
            ``signal_delay`` after the page's last crawl (Appendix C of
            Busa-Fekete et al. (2025)).

        Raises
        ------
        ValueError
            If ``page`` is not a live page id, ``t`` is not finite or precedes
            the page's last crawl, or the page already has the most signals a
            scheduler counts, or (:class:`~freshcore.value.PageValueError`) the
            page's value, which a signal may make the scheduler evaluate, cannot be
            computed in bounded time; the scheduler is then unchanged.
        TypeError
            If ``page`` is not an integer or ``t`` not a real number.
        """
        caller = f"{self._NAME}.signal"
        self._no_signals(caller)
        j = check_page_id(page, "page", caller, self._n_ids, self._alive_of)
        tt = check_scalar(t, "t", caller)
        ids = np.array([j], dtype=np.intp)
        last = float(self._last_crawl_of(ids)[0])
        if tt < last:
            raise ValueError(
                f"The 't' parameter of {caller} must not precede the last crawl of page {j} "
                f"(at {last!r}). Got {tt!r} instead."
            )
        if int(self._signal_count_of(ids)[0]) >= _schedule.MAX_SIGNALS:
            raise ValueError(
                f"{caller}: page {j} already has {_schedule.MAX_SIGNALS} signals since its last crawl, the most a "
                f"scheduler counts (32-bit counters)."
            )
        return bool(self._signal(j, tt))

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
            page's last crawl, a page would get more signals than a scheduler
            counts, or the lengths differ; the message names the first bad
            index and no signal is recorded.
        TypeError
            If ``pages`` is not an integer array or ``times`` not real.
        """
        self._no_signals(f"{self._NAME}.signal_many")
        p, tt = self._checked_signals(pages, times, f"{self._NAME}.signal_many")
        if len(p) == 0:
            return np.zeros(0, dtype=bool)
        return self._signal_many(p, tt)

    def _no_signals(self, caller: str) -> None:
        if self._value == "polled":
            raise ValueError(f"{caller}: a scheduler of value 'polled' takes polls, not signals: call "
                             f"poll(pages, t, moved).")

    # -- polls (value "polled") -------------------------------------------------------------------------------
    @property
    def poll(self) -> Any:
        """``poll(pages, t, moved, lastmod=None)``: record polls of the pages' signal sources (value "polled").

        Only a scheduler of ``value="polled"`` has it: for the other kinds
        the attribute does not exist (``AttributeError``, so that
        ``getattr(policy, "poll", None)`` tells a simulator to feed them
        signals instead).

        Parameters
        ----------
        pages : int or array_like of int of shape (n,)
            Ids of live pages (a page may repeat: its later polls see an
            empty window); an int with a single flag polls one page.
        t : float
            Time of the polls, finite and not before any of the pages' last
            poll (it may precede the scheduler's time: a poll delivered
            late, or a page's first poll after a ``last_poll`` given to the
            constructor or :meth:`add_pages`).
        moved : bool or array_like of bool of shape (n,)
            Whether each page's signal moved since its previous poll (0/1
            accepted).
        lastmod : array_like, optional
            The time of the latest move, where the source gives it: accepted
            and not used (the value uses only whether the signal moved).

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If a page is not a live id, ``t`` is not finite or precedes a
            page's last poll, a flag is not 0/1, or the
            lengths differ (the message names the first bad index; no poll is
            recorded); or (:class:`~freshcore.value.PageValueError`) a page
            whose value a moved poll makes the scheduler evaluate cannot be
            computed in bounded time: the polls before it are recorded (the
            message says how many).
        TypeError
            If ``pages`` is not an integer array or ``t`` not a real number.
        AttributeError
            If the scheduler's value kind is not "polled".

        Notes
        -----
        A poll closes the page's window ``(p, t]`` (``p`` its last poll; at
        first its last crawl).  The part after the crawl, ``l``, changes the
        page's log-staleness ``s`` (:func:`freshcore.polled_signals.window_staleness`
        less the ``Delta l`` that ``s`` has already grown by): an unmoved
        window lowers ``s`` by ``lambda Delta l``, which only lowers the
        page's value (nothing else to do); a moved one raises it, and the
        page's bound moves earlier as a signal's does.  A poll at or before
        the crawl only starts the next window.
        """
        if self._value != "polled":
            raise AttributeError(f"{self._NAME}.poll exists only for value='polled' (this one is {self._value!r}): "
                                 f"feed signals with signal or signal_many")
        return self._poll_checked

    def _poll_checked(self, pages: Any, t: Any, moved: Any, lastmod: Any = None) -> None:
        caller = f"{self._NAME}.poll"
        tt = check_scalar(t, "t", caller)
        if (type(pages) is np.ndarray and pages.dtype == np.intp and pages.ndim == 1 and pages.flags.c_contiguous
                and type(moved) is np.ndarray and moved.dtype == np.bool_ and moved.shape == pages.shape
                and moved.flags.c_contiguous and self._polls_ok(pages, tt)):
            p, mv = pages, moved.view(np.uint8)  # (all valid, checked in one compiled pass)
        else:
            if np.ndim(pages) == 0 and np.ndim(moved) == 0:  # one page
                pages, moved = [pages], [moved]
            p = check_page_ids(pages, "pages", caller, self._n_ids, self._alive_of)
            mv = check_binary(moved, "moved", caller, allow_empty=True)
            check_same_length(caller, pages=p, moved=mv)
            if len(p) == 0:
                return
            last = self._last_poll_of(p)
            bad = np.flatnonzero(tt < last)
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"The 't' parameter of {caller} must not precede the last poll of each page; t = {tt!r} < "
                    f"{last[i].item()!r}, the last poll of page {p[i].item()} (pages[{i}]); no poll is recorded."
                )
        if lastmod is not None:  # (accepted and not used; still checked, so that a wrong one is not silent)
            lm = np.asarray(lastmod)
            if lm.dtype.kind not in "fiu":
                raise TypeError(f"The 'lastmod' parameter of {caller} must hold times (numbers; NaN where the "
                                f"source gives none). Got an array of dtype {lm.dtype}.")
            if lm.ndim > 1 or lm.size != len(p):
                raise ValueError(f"The 'lastmod' parameter of {caller} must have one time per page ({len(p)}). "
                                 f"Got shape {lm.shape}; no poll is recorded.")
        if len(p):
            self._poll_many(p, tt, mv)

    _poll_checked.__doc__ = poll.__doc__  # (what help(scheduler.poll) shows: the bound method, not the property)

    @property
    def poll_group(self) -> Any:
        """``poll_group(group, t, moved=())``: a poll of every live page of a poll group at once (value "polled").

        A sitemap is a group: one fetch polls every page in it, and only the
        pages whose lastmod moved are news.  Equal to
        ``poll(members, t, flags)`` with every live member of the group and
        the flags of ``moved``, up to the rounding of the unmoved windows
        (below), in O(len(moved)) rather than O(members): the unmoved
        windows are applied lazily.  Like :attr:`poll`, the attribute exists
        only under ``value="polled"``.

        Parameters
        ----------
        group : int
            The group's label, ``0 .. MAX_POLL_GROUPS - 1`` (the labels the
            pages were given by ``poll_group=`` of the constructor or
            :meth:`add_pages`, or :meth:`set_poll_group`; a label no live
            page has polls no page).
        t : float
            Time of the poll, finite and not before the group's last poll
            nor any of its live pages' last poll (it may precede the
            scheduler's time).
        moved : array_like of int, default=()
            Ids of the group's pages whose signal moved since their previous
            poll (a repeated id sees an empty window the second time).

        Returns
        -------
        None

        Raises
        ------
        ValueError
            If ``group`` is out of range, ``t`` is not finite or precedes the
            group's last poll or a member's last poll (the message names
            the page), or a moved id is not a live page of the group (the
            message names the first bad index; nothing is recorded); or
            (:class:`~freshcore.value.PageValueError`) a moved page's value
            cannot be computed: the group's poll is recorded for every page
            but the moved ones from that one on (the message says so).
        TypeError
            If ``group`` is not an integer or ``moved`` not integer ids.
        AttributeError
            If the scheduler's value kind is not "polled".

        Notes
        -----
        An unmoved window lowers ``ell`` by an amount additive in the
        window's length (``ell += lambda l``, ``l`` its part after the
        crawl), so the group's polls since a page's last own event (its
        crawl, a poll of it alone or as moved, a change of its parameters or
        group) add up to one window from then to the group's last poll: the
        scheduler keeps per group its poll count and last poll time, per page
        the count and effective start at its last own event, and computes
        that one window before anything reads the page's ``ell`` (an
        evaluation, a crawl, a poll, the properties, :meth:`to_dict`).  The
        keys need no change: unmoved polls only lower the value.  One window
        ``lambda (T - p)`` rounds differently from the sum of its pieces
        ``lambda (T_1 - p) + lambda (T_2 - T_1) + ...`` that per-page polls
        would add (a few ulps of ``ell``); the result does not depend on
        when or how often it is computed, and every decision is the argmax of
        the values at these starts.
        """
        if self._value != "polled":
            raise AttributeError(f"{self._NAME}.poll_group exists only for value='polled' (this one is "
                                 f"{self._value!r})")
        return self._poll_group_checked

    def _poll_group_checked(self, group: Any, t: Any, moved: Any = ()) -> None:
        caller = f"{self._NAME}.poll_group"
        if (type(group) is int and type(moved) is np.ndarray and moved.dtype == np.intp and moved.ndim == 1
                and moved.flags.c_contiguous and type(t) is float and self._group_ok(group, t, moved)):
            self._poll_group(group, t, moved)  # (all valid, checked in one compiled pass)
            return
        g = check_int(group, "group", caller, low=0, high=MAX_POLL_GROUPS - 1)
        tt = check_scalar(t, "t", caller)
        p = check_page_ids(moved, "moved", caller, self._n_ids, self._alive_of)
        if len(p):
            lab = self._group_labels_of(p)
            off = np.flatnonzero(lab != g)
            if off.size:
                i = int(off[0])
                where = f"in group {int(lab[i])}" if lab[i] >= 0 else "in no group"
                raise ValueError(f"The 'moved' parameter of {caller} must list live pages of group {g}; moved[{i}] = "
                                 f"{int(p[i])} is {where}; no poll is recorded.")
        floor = self._group_floor(g, tt)
        if floor is not None:
            last, j = floor
            whose = f"the last poll of its page {j}" if j >= 0 else f"the last poll of group {g}"
            raise ValueError(f"The 't' parameter of {caller} must not precede the last poll of the group nor of any "
                             f"of its pages; t = {tt!r} < {last!r}, {whose}; no poll is recorded.")
        self._poll_group(g, tt, p)

    _poll_group_checked.__doc__ = poll_group.__doc__

    @property
    def poll_groups(self) -> np.ndarray | None:
        """Poll group label of each live page under ``value="polled"`` (-1: none), in id order (int64 copy of
        shape (n_pages,)); None for the other value kinds."""
        if self._value != "polled":
            return None
        return self._group_labels_of(self.page_ids.astype(np.intp))

    def set_poll_group(self, ids: Any, labels: Any) -> Any:
        """Move live pages into poll groups (value "polled"); returns ``self``.

        Parameters
        ----------
        ids : array_like of int of shape (n,)
            Distinct live page ids.
        labels : int or array_like of int of shape (n,)
            Their new groups, ``0 .. MAX_POLL_GROUPS - 1``, or -1 for none.

        Notes
        -----
        A page keeps its last poll and effective start (its old group's polls
        so far count); it takes its new group's poll count, so only the new
        group's later polls apply to it.  O(n), no evaluation.

        Raises
        ------
        ValueError
            If an id is unknown, removed or repeated, a label is out of
            range, or the lengths differ (the message names the first bad
            index; nothing is changed), or the value kind is not "polled".
        """
        caller = f"{self._NAME}.set_poll_group"
        if self._value != "polled":
            raise ValueError(f"{caller}: poll groups exist only for value='polled' (this one is {self._value!r}).")
        p = check_page_ids(ids, "ids", caller, self._n_ids, self._alive_of, distinct=True)
        lab = check_poll_groups(labels, self._value, len(p), caller, "labels")
        assert lab is not None
        if len(p):
            self._set_groups(p, lab)
        return self

    def _checked_signals(self, pages: Any, times: Any, caller: str) -> tuple[np.ndarray, np.ndarray]:
        """``pages`` and ``times`` as intp and float64 arrays, checked as :meth:`signal_many` says."""
        if (type(pages) is np.ndarray and type(times) is np.ndarray and pages.dtype == np.intp
                and times.dtype == np.float64 and pages.ndim == 1 and pages.flags.c_contiguous
                and times.flags.c_contiguous and len(pages) and self._signals_ok(pages, times)):
            return pages, times  # (all valid, checked in one compiled pass)
        p = check_page_ids(pages, "pages", caller, self._n_ids, self._alive_of)
        tt = check_array(times, "times", caller, allow_empty=True)
        check_same_length(caller, pages=p, times=tt)
        if len(p) == 0:
            return p, tt
        if tt.min() < self.time:  # every last crawl is at or before the time: only then can a signal precede one
            last = self._last_crawl_of(p)
            bad = np.flatnonzero(tt < last)
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"The 'times' parameter of {caller} must not precede the last crawl of each page; "
                    f"times[{i}] = {tt[i].item()!r} < {last[i].item()!r}, the last crawl of page {p[i].item()}."
                )
        limit = _schedule.MAX_SIGNALS
        counts = self._signal_count_of(p).astype(np.int64)
        if int(counts.max()) + len(p) > limit:  # rare: count exactly
            order = np.argsort(p, kind="stable")
            sp = p[order]
            first = np.r_[True, sp[1:] != sp[:-1]]
            rank = np.arange(len(sp)) - np.maximum.accumulate(np.where(first, np.arange(len(sp)), 0))
            over = np.flatnonzero(counts[order] + rank + 1 > limit)
            if over.size:
                i = int(order[over].min())
                raise ValueError(
                    f"The 'pages' parameter of {caller} would give page {int(p[i])} more than {limit} signals since "
                    f"its last crawl, the most a scheduler counts (32-bit counters), at pages[{i}]; no signal is "
                    f"recorded."
                )
        return p, tt

    # -- bandwidth --------------------------------------------------------------------------------------------
    @cites(BUSA_FEKETE_2025)
    def set_bandwidth(self, bandwidth: float) -> Any:
        """Change the bandwidth from now on (Appendix D of Busa-Fekete et al. (2025)); returns ``self``.

        The next tick is at ``time + 1/bandwidth``.

        Raises
        ------
        ValueError
            If ``bandwidth`` is not a finite number > 0 (it is then unchanged).
        """
        r = check_scalar(bandwidth, "bandwidth", f"{self._NAME}.set_bandwidth", low=0.0, low_inclusive=False)
        self._set_bandwidth(r)
        return self

    # -- pages ------------------------------------------------------------------------------------------------
    def add_pages(self, pages: PageModel, last_crawl: Any = None, poll_interval: Any = None, *,
                  last_poll: Any = None, poll_group: Any = None) -> np.ndarray:
        """Add pages; returns their new ids (the next unused ones, never reused).

        Parameters
        ----------
        pages : PageModel
            Parameters of the new pages.
        last_crawl : float or array_like of shape (len(pages),), optional
            Their last crawl, finite and not after the time the scheduler's
            ticks have reached (default: that time, i.e. just crawled).
        poll_interval : float or array_like of shape (len(pages),), optional
            Their poll interval ``w > 0``: required with ``value="polled"``,
            not allowed otherwise.
        last_poll : float or array_like of shape (len(pages),), optional
            Their last poll (``value="polled"`` only), finite and not after
            their last crawl (default: their last crawl); their first window
            starts there (its part before the crawl counts when it moves).
        poll_group : int or array_like of shape (len(pages),), optional
            Their poll group (``value="polled"`` only; -1 or default: none;
            :attr:`poll_group`); they take its poll count: only its later polls
            apply to them.

        Returns
        -------
        ids : ndarray of int64 of shape (len(pages),)

        Raises
        ------
        ValueError
            If a ``last_crawl`` is not finite or too late, a ``last_poll`` not
            finite or after its page's last crawl, a ``poll_group`` label out of
            range (the message names the first bad index), the lengths differ,
            the page ids handed out
            would pass their limit, or (:class:`~freshcore.value.PageValueError`)
            a new page's value cannot be computed in bounded time; nothing is
            added then.
        TypeError
            If ``pages`` is not a PageModel.

        Notes
        -----
        No rebuild: each new page is evaluated at the current time and goes
        to the heap of its slope bucket (O(log m) each; ``freshcore._schedule``).
        """
        caller = f"{self._NAME}.add_pages"
        check_pages(pages, caller)
        n = len(pages)
        self._check_room(n, caller)
        last = self._new_crawl_times(last_crawl, n, caller)
        w = check_poll_interval(poll_interval, self._value, n, caller)
        lp = check_last_poll(last_poll, self._value, last, caller)
        lab = check_poll_groups(poll_group, self._value, n, caller)
        if w is None:
            ids = self._add(pages, last)
        elif lp is None and lab is None:
            ids = self._add(pages, last, w)
        else:
            ids = self._add(pages, last, w, lp, lab)
        self._pages = None
        return ids

    def remove_pages(self, ids: Any) -> Any:
        """Remove live pages (no rebuild); returns ``self``.

        Parameters
        ----------
        ids : array_like of int
            Distinct live page ids; their ids are never handed out again.

        Raises
        ------
        ValueError
            If an id is unknown, already removed or repeated (the message
            names the first bad index), or the scheduler cannot do without the
            pages; nothing is removed then.
        """
        caller = f"{self._NAME}.remove_pages"
        p = check_page_ids(ids, "ids", caller, self._n_ids, self._alive_of, distinct=True)
        self._check_removal(p, caller)
        self._remove(p)
        self._pages = None
        return self

    def update_pages(self, ids: Any, pages: PageModel, poll_interval: Any = None) -> Any:
        """New parameters for live pages, e.g. fresh change-rate estimates; returns ``self``.

        The pages keep their last crawl and counted signals; each is
        re-placed in the heap of its slope bucket (no rebuild).  Under
        ``value="polled"`` each keeps its log-staleness at the current time
        (the windows it summarises are not kept, so it is not recomputed
        under the new parameters) and its last poll.

        Parameters
        ----------
        ids : array_like of int of shape (n,)
            Distinct live page ids.
        pages : PageModel of n pages
            Their new parameters, in the order of ``ids``.
        poll_interval : float or array_like of shape (n,), optional
            Their new poll intervals (``value="polled"`` only; default: kept).

        Raises
        ------
        ValueError
            If an id is unknown, removed or repeated, the lengths differ, or
            (:class:`~freshcore.value.PageValueError`) a page's new value cannot
            be computed in bounded time; the scheduler is then unchanged.
        TypeError
            If ``pages`` is not a PageModel.
        """
        caller = f"{self._NAME}.update_pages"
        p = check_page_ids(ids, "ids", caller, self._n_ids, self._alive_of, distinct=True)
        check_pages(pages, caller)
        if len(pages) != len(p):
            raise ValueError(
                f"The 'pages' parameter of {caller} must have one page per id ({len(p)}). Got {len(pages)} instead."
            )
        w = None if poll_interval is None else check_poll_interval(poll_interval, self._value, len(p), caller)
        if w is None:
            self._update(p, pages)
        else:
            self._update(p, pages, w)
        self._pages = None
        return self
