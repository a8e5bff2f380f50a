"""Sharded crawl scheduling: k independent schedulers merged into one stream (SPEC section 4).

Busa-Fekete, Zimmert, György et al. (2025) note (Section 5.2, "Scalability")
that their Algorithm 1 is decentralised except for the argmax, and that one can
"shard the web pages into N shards and assign 1/N bandwidth to each shard, and
schedule the web pages in each shard independently in parallel".
:class:`ShardedScheduler` does exactly that with ``k``
:class:`freshcore.schedule.Scheduler` objects over disjoint page sets, each at
rate ``R/k``, and merges their decisions into one stream of *global* page ids.
Pages can be added (each to the shard with the fewest live pages), removed and
re-parameterised by stable id, as in one scheduler.

Merge rule
----------
Every shard starts at time 0 and ticks at ``t_0 + j/(R/k)`` (``j = 1, 2,
...`` since the last rate change at ``t_0``), so all shards tick at the same
times: one *round* of ``k`` decisions per ``k/R`` time units, the same mean
rate ``R`` as one scheduler.  The merged stream orders decisions by (tick
time, shard number): round 1 is shard 0, 1, ..., k-1 at ``k/R``, then round 2
at ``2k/R``, and so on.  It does not depend on threads or on how the calls to
:meth:`ShardedScheduler.next` and :meth:`ShardedScheduler.run` split it.

A rate change in the middle of a round (after shards ``0..p-1`` ticked at the
round's time ``T``) leaves the round's time alone: shards ``0..p-1`` change
rate at once, shards ``p..k-1`` right after their tick at ``T``, so all shards
again tick together at ``T + j/(R'/k)``.

What sharding gives up: within a shard the decision is the shard's exact
argmax, but across shards each shard crawls its own best page every round,
whether or not another shard's second best is worth more.  With pages spread
evenly (``page % k`` by default) the loss is small when each shard holds many
pages; :func:`freshcore.simulate` measures it.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from freshcore import _parallel, _polled, _schedule, _statefile, schedule
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._scheduler_base import (
    SchedulerBase,
    check_last_poll,
    check_poll_groups,
    check_poll_interval,
)
from freshcore._statefile import Entry
from freshcore._validation import check_crawl_times, check_int, check_page_id, check_scalar, read_only_view
from freshcore.pages import PageModel, check_pages
from freshcore.schedule import Scheduler
from freshcore.value import PageValueError, crawl_value

__all__ = ["ShardedScheduler"]

#: The entries of :meth:`ShardedScheduler.to_dict` but ``schedulers`` (``assign`` has one per page id).
_STATE = (
    Entry("shards", "int", low=1),
    Entry("assign", "ints", low=0),
    Entry("rate", "float", low=0.0, open_low=True),
    Entry("position", "int", low=0),
    Entry("time", "float", low=0.0),
    Entry("origin", "float", low=0.0),
    Entry("ticks", "int", low=0),
    Entry("shard_rate", "float", low=0.0, open_low=True),
    Entry("pending_rate", "float", low=0.0, open_low=True, optional=True),
)

#: Decisions per shard below which :meth:`ShardedScheduler.run` stays on the
#: calling thread.  Measured with ``threshold`` of bench/bench_sharding.py on
#: the shared 2-core machine (load average ~3, m = 10^5, Greedy): the pool's
#: hand-off costs a median 41 us per call (2 x 1 decision: 40 us on one
#: thread, 81 us on the pool), but the threaded run was 0-12 % slower per
#: decision up to 1024 decisions per shard for k = 2 and only at 4096 and above
#: no slower (0.62-0.99 of the one-thread time; a loaded machine rarely gives
#: both threads a core).
MIN_PARALLEL_TICKS = 4096

#: Batches of :meth:`ShardedScheduler.signal_many` from this size on go to
#: the shards' own ``signal_many`` (when :class:`~freshcore.schedule.Scheduler`
#: has it) grouped by shard; smaller ones are routed one by one.
_MANY = 32


@cites(BUSA_FEKETE_2025)
class ShardedScheduler(SchedulerBase):
    """``shards`` independent :class:`~freshcore.schedule.Scheduler` objects at bandwidth ``R/shards``, merged.

    Parameters
    ----------
    pages : PageModel
        The initial pages, with ids ``0 .. len(pages) - 1``.  Pages are
        added, removed and re-parameterised with :meth:`add_pages`,
        :meth:`remove_pages` and :meth:`update_pages`.
    bandwidth : float
        Total crawls per unit time ``R > 0``; each shard crawls at ``R/shards``.
    shards : int
        Number of shards ``k``, ``1 <= k <= n_pages``.
    value : {"exact", "approx", "greedy", "cis", "polled"}, default="exact"
        The crawl value of every shard (see :class:`~freshcore.schedule.Scheduler`);
        "polled" takes :attr:`poll` (each page's polls go to its shard).
    signal_delay : float, default=0.0
        Discard window for signals (Appendix C of Busa-Fekete et al. (2025)), in
        every shard.
    terms : int, optional
        Terms of ``value="approx"``.
    assign : array_like of int of shape (n_pages,), optional
        Shard number of each page, in ``[0, shards)``, every shard non-empty.
        Default ``page % shards``.  Within a shard, pages keep the order of
        their ids, so ties still go to the lowest id.
    last_crawl : array_like of shape (n_pages,), optional
        Initial last-crawl time of each page, finite and ``<= 0`` (default:
        all 0), given to its shard (as ``Scheduler(last_crawl=...)``:
        staggered times shorten the start-up transient).
    poll_interval : float or array_like of shape (n_pages,), optional
        ``w > 0`` of each page, required with ``value="polled"`` and not
        allowed otherwise (as ``Scheduler(poll_interval=...)``).
    last_poll, poll_group : float or array_like, int or array_like, optional
        Each page's last poll and poll group (``value="polled"`` only), given
        to its shard (as ``Scheduler(last_poll=..., poll_group=...)``); a
        group may span shards: :attr:`poll_group` polls it on every shard.

    Notes
    -----
    Shard ``s`` is a :class:`~freshcore.schedule.Scheduler` over
    the pages :meth:`shard_pages` lists at rate ``R/k``: its ``j``-th tick after a rate
    change at ``t_0`` is at ``t_0 + j/(R/k)`` (``j k/R`` up to rounding).  The
    merged stream holds, for each round, the decisions of shards ``0..k-1`` in
    that order (the merge rule of :mod:`freshcore.sharding`); :attr:`time` is
    the tick time of the last decision, and :meth:`tick_times` gives the times
    of the next ones, which :func:`freshcore.simulate` uses as the crawl times.
    With ``k = 1`` the decisions are exactly those of one ``Scheduler``
    (Section 5.2 of Busa-Fekete et al. (2025); SPEC section 4).

    The full state survives :meth:`save`/:meth:`load`, ``pickle``, ``copy``
    and :meth:`to_dict`/:meth:`from_dict`, also in the middle of a round or
    of a rate change: the continued decisions are those of an uninterrupted
    run.

    Pages have stable integer ids, as in a
    :class:`~freshcore.schedule.Scheduler`: :meth:`add_pages` gives the new
    pages the next unused ids and each, one after the other, to the shard
    with the fewest live pages (ties to the lowest shard number), where it
    gets the next unused id of that shard's scheduler, so within a shard ids
    and local ids keep the same order; a removed id is never reused, and a
    shard cannot lose its last page (it crawls one at every round).  The
    per-page properties (:attr:`last_crawl`, :attr:`signal_counts`,
    :attr:`pages`) list the live pages in increasing id order, i.e. entry
    ``i`` is page ``page_ids[i]`` (the identity until a page is removed).

    :meth:`run` runs the shards on the shared thread pool of
    :func:`freshcore.set_num_threads` when each shard makes at least
    ``MIN_PARALLEL_TICKS`` decisions (the compiled scheduler releases the GIL);
    the result is the same as the sequential merge.

    Examples
    --------
    >>> from freshcore.pages import PageModel
    >>> from freshcore.sharding import ShardedScheduler
    >>> pages = PageModel([1.0, 0.5, 0.25, 2.0], [1.0, 1.0, 1.0, 1.0])
    >>> s = ShardedScheduler(pages, bandwidth=2.0, shards=2, value="greedy")
    >>> s.shard_of(3), s.local_index(3)
    (1, 1)
    >>> s.tick_times(4).tolist()
    [1.0, 1.0, 2.0, 2.0]
    >>> s.run(4).tolist(), s.time
    ([0, 3, 2, 1], 2.0)
    >>> s.signal(1, 2.5)
    True
    >>> t = ShardedScheduler.from_dict(s.to_dict())  # or pickle, copy, save/load
    >>> s.run(3).tolist() == t.run(3).tolist()
    True
    >>> s.remove_pages([0]).add_pages(PageModel([4.0], [1.0])).tolist()  # to shard 0, now the smaller
    [4]
    >>> s.shard_pages(0).tolist(), s.page_ids.tolist()
    ([2, 4], [1, 2, 3, 4])
    """

    FORMAT_VERSION = 2
    READABLE_VERSIONS = (2,)
    _MAGIC = "freshcore.ShardedScheduler"
    _WHAT = "sharded scheduler"
    _NAME = "ShardedScheduler"

    def __init__(
        self,
        pages: PageModel,
        bandwidth: float,
        shards: int,
        *,
        value: str = "exact",
        signal_delay: float = 0.0,
        terms: int | None = None,
        assign: Any = None,
        last_crawl: Any = None,
        poll_interval: Any = None,
        last_poll: Any = None,
        poll_group: Any = None,
    ) -> None:
        caller = "ShardedScheduler"
        check_pages(pages, caller)
        m = len(pages)
        r = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
        k = check_int(shards, "shards", caller, low=1, high=m)
        if assign is None:
            owner = np.arange(m, dtype=np.int64) % k
        else:
            owner = _check_assign(assign, m, k, caller)
        last = None if last_crawl is None else check_crawl_times(last_crawl, m, caller)
        w = check_poll_interval(poll_interval, value, m, caller)
        lp = check_last_poll(last_poll, value, np.zeros(m) if last is None else last, caller)
        groups = check_poll_groups(poll_group, value, m, caller)
        members, local = _layout(owner, k)
        # each Scheduler validates value/signal_delay/terms; build them all before keeping any
        scheds = tuple(
            Scheduler(pages[members[s]], r / k, value=value, signal_delay=signal_delay, terms=terms,
                      last_crawl=None if last is None else last[members[s]],
                      poll_interval=None if w is None else w[members[s]],
                      last_poll=None if lp is None else lp[members[s]],
                      poll_group=None if groups is None else groups[members[s]])
            for s in range(k)
        )
        # (the caller's PageModel is not kept: ``pages`` rebuilds it from the shards when asked)
        self._adopt(None, r, owner, members, local, scheds, 0, 0.0, 0.0, 0, r / k, None)

    def _adopt(self, pages: PageModel | None, bandwidth: float, owner: np.ndarray, members: tuple, local: np.ndarray,
               scheds: tuple, pos: int, time: float, origin: float, ticks: int, srate: float,
               pending: float | None) -> None:
        """Set every attribute (a new scheduler's, or a checked :meth:`from_dict`'s; ``pages`` None: not known yet)."""
        owner.flags.writeable = False
        alive = np.zeros(len(owner), dtype=bool)
        for ids, sched in zip(members, scheds):
            alive[ids[sched.page_ids]] = True
        self._alive = alive  # live page ids (every page id handed out is in _owner, _local and one of _members)
        self._pages = pages
        self._bandwidth = bandwidth
        self._k = len(scheds)
        self._owner = owner
        self._local = local
        self._members = members
        self._scheds = scheds
        self._value, self._terms, self._delay = scheds[0].value, scheds[0].terms, scheds[0].signal_delay
        # the merge position: shards 0.._pos-1 ticked at _time in the current round (0: round complete)
        self._pos = pos
        self._time = time
        # the shards' clock, as the compiled scheduler computes it: t = _origin + _j / _srate
        self._origin = origin
        self._j = ticks
        self._srate = srate
        self._pending = pending  # new shard rate for shards _pos..k-1 after their tick
        self._out_of_step: str | None = None  # why the shards' clocks stopped matching the merge (a failed run)

    # -- read-only state ----------------------------------------------------
    @property
    def shards(self) -> int:
        """Number of shards ``k``."""
        return self._k

    @property
    def schedulers(self) -> tuple:
        """The shards' schedulers (a tuple; shard ``s`` works in its local indices)."""
        return self._scheds

    @property
    def time(self) -> float:
        """Tick time of the last decision (0 before the first)."""
        return self._time

    @property
    def bandwidth(self) -> float:
        """Total crawl rate ``R`` (each shard crawls at ``R/shards``)."""
        return self._bandwidth

    @property
    def n_pages(self) -> int:
        """Number of live pages."""
        return sum(s.n_pages for s in self._scheds)

    @property
    def page_ids(self) -> np.ndarray:
        """Ids of the live pages, increasing (int64 array of shape (n_pages,))."""
        return np.flatnonzero(self._alive).astype(np.int64)

    def _live_params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        live = self._alive
        change_rate = self._by_id(lambda sched: sched.pages.change_rate)[live]
        importance = self._by_id(lambda sched: sched.pages.importance)[live]
        recall = self._by_id(lambda sched: sched.pages.recall)[live]
        false_rate = self._by_id(lambda sched: sched.pages.false_rate)[live]
        return change_rate, importance, recall, false_rate

    def _by_id(self, get: Any, dtype: Any = np.float64) -> np.ndarray:
        """An array over every page id handed out: ``get(shard scheduler)`` at its live pages, 0 at removed ones."""
        out = np.zeros(len(self._owner), dtype=dtype)
        for ids, sched in zip(self._members, self._scheds):
            out[ids[sched.page_ids]] = get(sched)
        return out

    def _check_page(self, page: Any, caller: str) -> int:
        return check_page_id(page, "page", caller, self._n_ids, self._alive_of)

    def shard_of(self, page: int) -> int:
        """Shard number of live page ``page``."""
        return int(self._owner[self._check_page(page, "ShardedScheduler.shard_of")])

    def local_index(self, page: int) -> int:
        """Id of live page ``page`` in its shard's scheduler."""
        return int(self._local[self._check_page(page, "ShardedScheduler.local_index")])

    def shard_pages(self, shard: int) -> np.ndarray:
        """Ids of the live pages of ``shard``, increasing (read-only int64 array).

        Their ids in the shard's scheduler (:meth:`local_index`) increase with
        them; they are the positions in this array until a page is removed.
        """
        s = check_int(shard, "shard", "ShardedScheduler.shard_pages", low=0, high=self._k - 1)
        ids, sched = self._members[s], self._scheds[s]
        if sched.n_pages == len(ids):
            return ids
        return read_only_view(ids[sched.page_ids])

    # -- the clock ------------------------------------------------------------
    def _tick_times(self, n: int) -> np.ndarray:
        return self.tick_times(n)

    def tick_times(self, n: int) -> np.ndarray:
        """Tick times of the next ``n`` decisions, without making them (the rate held).

        Parameters
        ----------
        n : int
            Number of decisions, ``n >= 0``.

        Returns
        -------
        times : ndarray of shape (n,)
            Non-decreasing; the ``k`` decisions of a round share their time.
        """
        self._check_in_step("ShardedScheduler.tick_times")
        n = check_int(n, "n", "ShardedScheduler.tick_times", low=0)
        k = self._k
        rest = min(n, k - self._pos) if self._pos else 0  # the current round's remaining shards
        origin, j, srate = self._after_round()
        rounds = -(-(n - rest) // k)
        t = origin + np.arange(j + 1, j + 1 + rounds, dtype=np.float64) / srate
        return np.concatenate([np.full(rest, self._time), np.repeat(t, k)[: n - rest]])

    def _advance(self, n: int) -> None:
        """Move the merge position and the mirrored shard clock past ``n`` decisions."""
        k, p = self._k, self._pos
        if p:
            if n < k - p:
                self._pos = p + n
                return
            n -= k - p  # the current round completes
            if self._pending is not None:
                self._origin, self._j, self._srate = self._time, 0, self._pending
                self._pending = None
            self._pos = 0
        full, self._pos = divmod(n, k)
        rounds = full + (self._pos > 0)
        if rounds:
            self._j += rounds
            self._time = self._origin + self._j / self._srate

    def _after_round(self) -> tuple[float, int, float]:
        """The shards' common clock (origin, ticks since it, shard rate) once the current round is complete."""
        if self._pos and self._pending is not None:
            return self._time, 0, self._pending
        return self._origin, self._j, self._srate

    # -- the moves of SchedulerBase's checked methods ------------------------------------------------------
    @property
    def _n_ids(self) -> int:
        return len(self._owner)

    def _alive_of(self, ids: np.ndarray) -> np.ndarray:
        return self._alive[ids]

    def _per_shard(self, ids: np.ndarray, get: Any, dtype: Any) -> np.ndarray:
        """``get(shard scheduler, local ids)`` of live global ids, shard by shard."""
        out = np.empty(len(ids), dtype=dtype)
        owner = self._owner[ids]
        for s in np.unique(owner).tolist():
            sel = np.flatnonzero(owner == s)
            out[sel] = get(self._scheds[s], self._local[ids[sel]])
        return out

    def _last_crawl_of(self, ids: np.ndarray) -> np.ndarray:
        return self._per_shard(ids, lambda sched, local: sched._last_crawl_of(local), np.float64)

    def _last_poll_of(self, ids: np.ndarray) -> np.ndarray:
        return self._per_shard(ids, lambda sched, local: sched._last_poll_of(local), np.float64)

    def _poll_many(self, pages: np.ndarray, t: float, moved: np.ndarray) -> int:
        """Each shard receives its own polls in their original order (polls of different shards do not
        interact); the error of a shard names the page by its global id."""
        self._check_in_step(f"{self._NAME}.poll")
        owner, local = self._owner[pages], self._local[pages]
        order = np.argsort(owner, kind="stable")
        shards, starts = np.unique(owner[order], return_index=True)
        for s, sel in zip(shards.tolist(), np.split(order, starts[1:])):
            try:
                self._scheds[s].poll(local[sel].astype(np.intp), t, moved[sel].astype(bool))
            except PageValueError as e:
                raise self._global(e, s, f" The polls of this call to the shards before shard {s}, and to shard {s} "
                                   f"before this one, were recorded; the others not.") from None
        return 0

    def _signal_count_of(self, ids: np.ndarray) -> np.ndarray:
        return self._per_shard(ids, lambda sched, local: sched._signal_count_of(local), np.int64)

    def _group_labels_of(self, ids: np.ndarray) -> np.ndarray:
        return self._per_shard(ids, lambda sched, local: sched._group_labels_of(local), np.int64)

    def _group_floor(self, group: int, t: float) -> tuple[float, int] | None:
        for s, sched in enumerate(self._scheds):
            floor = sched._group_floor(group, t)
            if floor is not None:
                return floor[0], int(self._members[s][floor[1]]) if floor[1] >= 0 else -1
        return None

    def _poll_group(self, group: int, t: float, moved: np.ndarray) -> int:
        """Every shard polls the group (O(shards + moved): a shard without a page of it records the poll
        only), each with its own moved pages; the error of a shard names the page by its global id."""
        self._check_in_step(f"{self._NAME}.poll_group")
        owner, local = self._owner[moved], self._local[moved]
        for s, sched in enumerate(self._scheds):
            try:
                sched._poll_group(group, t, np.ascontiguousarray(local[owner == s], dtype=np.intp))
            except PageValueError as e:
                raise self._global(e, s, f" The group poll is recorded on the shards before shard {s}, not on "
                                   f"those after it.") from None
        return 0

    def _set_groups(self, ids: np.ndarray, labels: np.ndarray) -> None:
        owner = self._owner[ids]
        for s in np.unique(owner).tolist():
            sel = np.flatnonzero(owner == s)
            self._scheds[s]._set_groups(np.ascontiguousarray(self._local[ids[sel]], dtype=np.intp), labels[sel])

    def _crawl(self, n: int) -> np.ndarray:
        """The next ``n`` decisions of the merged stream (the shards on threads for long runs: the same result)."""
        k, p = self._k, self._pos
        out = np.empty(n, dtype=np.int64)
        # decision i of this call is shard (p + i) % k; shard s makes counts[s] of them, from offset[s] on
        offset = (np.arange(k) - p) % k
        counts = np.maximum(0, (n - offset + k - 1) // k)
        pending = self._pending if p else None

        def work(s: int) -> None:
            c = int(counts[s])
            if c == 0:
                return
            sched = self._scheds[s]
            try:
                if pending is not None and s >= p:  # its tick in the current round, then the new bandwidth
                    first = sched.run(1)
                    sched.set_bandwidth(pending)
                    local = np.concatenate([first, sched.run(c - 1)])
                else:
                    local = sched.run(c)
            except PageValueError as e:  # (named by its global id; one decision asked: nothing has moved)
                raise self._global(e, s, " The tick is not taken: the scheduler is as before it." if n == 1 else
                                   f" (Shard {s}.) No decision of this call is returned, and the shards are no longer "
                                   f"in step: restore the scheduler from a state saved before the call.") from None
            out[int(offset[s])::k] = self._members[s][local]

        def work_on(group: list[int]) -> None:
            for s in group:
                work(s)

        self._check_in_step(f"{self._NAME}.run")
        threads = min(_parallel.get_num_threads(), k)
        try:
            if threads > 1 and n // k >= MIN_PARALLEL_TICKS:
                pool = _parallel._get_pool(threads - 1)
                groups = [list(range(g, k, threads)) for g in range(threads)]
                futures = [pool.submit(work_on, group) for group in groups[1:]]
                try:
                    work_on(groups[0])
                finally:
                    for f in futures:
                        f.result()
            else:
                work_on(list(range(k)))
        except BaseException as e:
            if n > 1:  # some shards may have ticked, others not: the merge position no longer says where they are
                self._out_of_step = f"a run of {n} decisions failed part-way ({type(e).__name__}: {e})"
            raise
        self._advance(n)
        return out

    def _check_in_step(self, caller: str) -> None:
        """Refuse to go on from a run that failed part-way (the shards' clocks no longer match the merge's)."""
        if self._out_of_step is not None:
            raise RuntimeError(
                f"{caller}: the shards are no longer in step ({self._out_of_step}); restore the sharded scheduler from "
                f"a state saved before that call (save/load, to_dict/from_dict, pickle)."
            )

    def _global(self, e: PageValueError, s: int, then: str) -> PageValueError:
        """The error of shard ``s`` naming its page by the page's global id."""
        return e.for_page(int(self._members[s][e.page]), then)

    def _signal(self, page: int, t: float) -> bool:
        self._check_in_step(f"{self._NAME}.signal")
        s = int(self._owner[page])
        try:
            return self._scheds[s].signal(int(self._local[page]), t)
        except PageValueError as e:
            raise self._global(e, s, e.then) from None

    def _signal_many(self, pages: np.ndarray, times: np.ndarray) -> np.ndarray:
        """Each shard receives its own signals in their original order (signals of different shards do not
        interact): batches of 32 or more through its ``signal_many``, else one ``signal`` call each."""
        self._check_in_step(f"{self._NAME}.signal_many")
        out = np.zeros(len(pages), dtype=bool)
        owner, local = self._owner[pages], self._local[pages]
        if len(pages) < _MANY:
            # a few signals (the simulator's usual batch): grouping costs more than it saves
            for i, (s, j, t) in enumerate(zip(owner.tolist(), local.tolist(), times.tolist())):
                try:
                    out[i] = self._scheds[s].signal(j, t)
                except PageValueError as e:
                    raise self._global(e, s, f" At signal {i + 1} of {len(pages)}: the first {i} were recorded, "
                                       f"the others not.") from None
            return out
        order = np.argsort(owner, kind="stable")
        shards, starts = np.unique(owner[order], return_index=True)
        for s, sel in zip(shards.tolist(), np.split(order, starts[1:])):
            try:
                out[sel] = self._scheds[s].signal_many(local[sel], times[sel])
            except PageValueError as e:
                raise self._global(e, s, f" The signals of this call to the shards before shard {s}, and to shard {s} "
                                   f"before this one, were recorded; the others not.") from None
        return out

    def _set_bandwidth(self, bandwidth: float) -> None:
        """Each shard ``bandwidth/shards``; in the middle of a round, the shards still to tick in it do so at
        :attr:`time` first (the merge rule of :mod:`freshcore.sharding`)."""
        self._check_in_step(f"{self._NAME}.set_bandwidth")
        sr = bandwidth / self._k
        p = self._pos
        for s in range(p if p else self._k):
            self._scheds[s].set_bandwidth(sr)
        if p:
            self._pending = sr
        else:
            self._origin, self._j, self._srate = self._time, 0, sr
        self._bandwidth = bandwidth

    def _new_shards(self, n: int) -> np.ndarray:
        """The shards of ``n`` new pages, given one by one to the shard with the fewest live pages."""
        return _fill(np.array([sched.n_pages for sched in self._scheds], dtype=np.int64), n)

    def _check_room(self, n: int, caller: str) -> None:
        counts = np.bincount(self._new_shards(n), minlength=self._k)
        for s in range(self._k):
            if len(self._members[s]) + counts[s] > schedule.MAX_PAGE_IDS:
                raise ValueError(
                    f"The 'pages' parameter of {caller} would take shard {s}'s page ids past "
                    f"{schedule.MAX_PAGE_IDS}."
                )

    def _new_crawl_times(self, last_crawl: Any, n: int, caller: str) -> np.ndarray:
        shard = self._new_shards(n)
        times = np.array([sched.time for sched in self._scheds])[shard]
        if last_crawl is None:
            return times
        last = check_crawl_times(last_crawl, n, caller, latest=None, scalar=True)
        late = np.flatnonzero(last > times)
        if late.size:
            i = int(late[0])
            raise ValueError(
                f"The 'last_crawl' parameter of {caller} must not be after the last tick of the page's shard; "
                f"last_crawl[{i}] = {last[i].item()!r} > {times[i].item()!r}, the time of shard {shard[i]}."
            )
        return last

    def _add(self, pages: PageModel, last: np.ndarray, poll_interval: Any = None, last_poll: Any = None,
             groups: Any = None) -> np.ndarray:
        """Each new page to the shard with the fewest live pages then, with the next unused ids.

        The maps from ids to shards are copied: O(m) per call, so add pages in
        batches rather than one call per page.
        """
        self._check_in_step(f"{self._NAME}.add_pages")
        n = len(pages)
        shard = self._new_shards(n)
        times = np.array([sched.time for sched in self._scheds])[shard]
        if self._value == "polled":
            self._check_polled(pages, last, times, poll_interval, times > 0.0,
                               lambda k: (k, f" It is pages[{k}] of those added; none was added."))
        else:
            self._check_values(pages, times - last, times > 0.0, lambda k: (k, f" It is pages[{k}] of those added; "
                                                                               f"none was added."))
        first = len(self._owner)
        new = np.arange(first, first + n, dtype=np.int64)
        local = np.empty(n, dtype=np.int64)
        members = list(self._members)
        for s in np.flatnonzero(np.bincount(shard, minlength=self._k)).tolist():
            sel = np.flatnonzero(shard == s)
            local[sel] = self._scheds[s].add_pages(
                pages[sel], last_crawl=last[sel], poll_interval=None if poll_interval is None else poll_interval[sel],
                last_poll=None if last_poll is None else last_poll[sel], poll_group=None if groups is None
                else groups[sel])
            members[s] = read_only_view(np.concatenate([members[s], new[sel]]))
        self._owner = read_only_view(np.concatenate([self._owner, shard]))
        self._local = read_only_view(np.concatenate([self._local, local]))
        self._members = tuple(members)
        self._alive = np.concatenate([self._alive, np.ones(n, dtype=bool)])
        return new

    def _check_values(self, pages: PageModel, tau: np.ndarray, built: np.ndarray,
                      name: Callable[[int], tuple[int, str]]) -> None:
        """Refuse, before any shard moves, pages whose value at ``tau`` a built shard could not compute (a shard
        evaluates new and updated pages at once, with the compiled value of ``crawl_value``: the same verdict).
        ``name(k)``: the page id and the end of the message for ``pages[k]``."""
        if self._value in ("exact", "approx") and built.any():  # (Greedy's and Greedy-CIS's are closed forms)
            try:
                crawl_value(np.where(built, tau, 0.0), pages, self._value, self._terms)
            except PageValueError as e:
                page, then = name(e.page)
                raise e.for_page(page, then, who="The crawl scheduler") from None

    def _check_polled(self, pages: PageModel, ell: np.ndarray, times: np.ndarray, w: np.ndarray, built: np.ndarray,
                      name: Callable[[int], tuple[int, str]]) -> None:
        """``_check_values`` for value "polled": the pages' values at ``s = Delta (time - ell)`` (effective starts
        ``ell``, poll intervals ``w``), the compiled value a shard computes."""
        if not built.any():
            return
        dl, mu, lam, nu = (np.ascontiguousarray(a, dtype=np.float64) for a in (
            pages.change_rate, pages.importance, pages.recall, pages.false_rate))
        tau = np.where(built, times - ell, 0.0)
        out = np.empty(len(dl))
        bad = _polled.sums_kernel(np.ascontiguousarray(dl * tau), dl, lam, nu,
                                  np.ascontiguousarray(w, dtype=np.float64), mu, 2, out)
        if bad >= 0:
            page, then = name(bad)
            raise _schedule._no_value(page, dl[bad], lam[bad], nu[bad], float(tau[bad]), then, True)

    def _check_removal(self, ids: np.ndarray, caller: str) -> None:
        gone = np.bincount(self._owner[ids], minlength=self._k)
        for s, sched in enumerate(self._scheds):
            if gone[s] and gone[s] == sched.n_pages:
                raise ValueError(
                    f"The 'ids' parameter of {caller} would leave shard {s} without pages (a shard crawls one of "
                    f"its pages at every round); nothing is removed."
                )

    def _remove(self, ids: np.ndarray) -> None:
        self._check_in_step(f"{self._NAME}.remove_pages")
        owner = self._owner[ids]
        for s in np.unique(owner).tolist():
            self._scheds[s].remove_pages(self._local[ids[owner == s]])
        self._alive[ids] = False

    def _update(self, ids: np.ndarray, pages: PageModel, poll_interval: Any = None) -> None:
        self._check_in_step(f"{self._NAME}.update_pages")
        owner = self._owner[ids]
        times = np.array([sched.time for sched in self._scheds])[owner]
        if self._value == "polled":
            # each shard keeps s at its time (``_schedule._rescaled_start``), and the poll intervals unless given
            ell = self._per_shard(ids, lambda sched, local: sched._state.polled_view(0)[local], np.float64)
            w = self._per_shard(ids, lambda sched, local: sched._state.polled_view(2)[local], np.float64)
            old = self._per_shard(ids, lambda sched, local: sched._state._field("change_rate")[local], np.float64)
            new = [_schedule._rescaled_start(a, b, c, d) for a, b, c, d in
                   zip(ell.tolist(), times.tolist(), old.tolist(), pages.change_rate.tolist())]
            self._check_polled(pages, np.array(new), times, w if poll_interval is None else poll_interval,
                               times > 0.0, lambda k: (int(ids[k]), " None was updated."))
        else:
            n = self._signal_count_of(ids)
            tau = times - self._last_crawl_of(ids)
            tau = np.where(n > 0, tau + pages.beta * n, tau)  # (page_tau's operations, with the new beta)
            self._check_values(pages, tau, times > 0.0, lambda k: (int(ids[k]), " None was updated."))
        for s in np.unique(owner).tolist():
            sel = np.flatnonzero(owner == s)
            self._scheds[s].update_pages(self._local[ids[sel]], pages[sel], poll_interval=None
                                         if poll_interval is None else poll_interval[sel])

    # -- state: dict, pickle, copy, file (StateFile adds save, load, pickle and copy) ------------------------
    def to_dict(self) -> dict[str, Any]:
        """The full state as a dict of numpy arrays, Python scalars and the shards' dicts (copies).

        Holds the number of shards, the shard of every page id handed out
        (``assign``, removed pages included), the total bandwidth ``rate``,
        the merge position (``position``: shards ``0..position-1`` ticked at
        ``time`` in the current round), the shards' common clock (``origin +
        ticks/shard_rate``), the bandwidth the rest of a round's shards take
        after their tick (``pending_rate``, None outside a change of bandwidth
        in mid-round), and ``schedulers``: each shard's
        :meth:`Scheduler.to_dict <freshcore.schedule.Scheduler.to_dict>`.
        :meth:`from_dict` restores it exactly: the continued decisions are
        those of an uninterrupted run.
        """
        self._check_in_step(f"{self._NAME}.to_dict")
        return {
            "format_version": self.FORMAT_VERSION,
            "shards": self._k,
            "assign": np.array(self._owner, dtype=np.int64, copy=True),
            "rate": self._bandwidth,
            "position": self._pos,
            "time": self._time,
            "origin": self._origin,
            "ticks": self._j,
            "shard_rate": self._srate,
            "pending_rate": self._pending,
            "schedulers": [s.to_dict() for s in self._scheds],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShardedScheduler:
        """Rebuild a sharded scheduler from :meth:`to_dict` output.

        Everything is checked before the object is assembled: each shard's dict by
        :meth:`Scheduler.from_dict <freshcore.schedule.Scheduler.from_dict>`,
        and that the shards hold the page ids ``assign`` gives them, share the
        value kind, ``terms`` and signal delay, and keep the clock (origin,
        ticks, rate, time) that the merge position says they keep.

        Raises
        ------
        ValueError
            If an entry is missing, of the wrong type or shape, out of range or
            inconsistent with the others; the message names the entry.
        TypeError
            If ``d`` is not a mapping.
        """
        caller = "ShardedScheduler.from_dict"
        version = _statefile.check_entries(d, (Entry("format_version", "int"),), caller)["format_version"]
        if version != cls.FORMAT_VERSION:
            raise ValueError(
                f"The 'd' parameter of {caller} is of format version {version!r}; this freshcore reads "
                f"version {cls.FORMAT_VERSION}."
            )
        if "schedulers" not in d:
            raise ValueError(f"The 'd' parameter of {caller} lacks the entries ['schedulers'].")

        def bad(key: str, why: str) -> ValueError:
            return ValueError(f"The {key!r} entry of the dict given to {caller} {why}.")

        assign = np.asarray(d.get("assign", ()))
        if assign.ndim != 1 or (assign.size and assign.dtype.kind not in "iu"):
            raise bad("assign", "must be a 1-d integer array")
        st = _statefile.check_entries(d, _STATE, caller, len(assign))

        k, pos, j = st["shards"], st["position"], st["ticks"]
        rate, time, origin, srate, pending = (st[key] for key in ("rate", "time", "origin", "shard_rate",
                                                                  "pending_rate"))
        if pos >= k:
            raise bad("position", f"must be below 'shards' ({k}), got {pos}")
        if pos and j == 0:
            raise bad("position", "must be 0 before the first round")
        if pending is not None and pos == 0:
            raise bad("pending_rate", "must be None between rounds ('position' 0)")
        if rate / k != (srate if pending is None else pending):
            which = "shard_rate" if pending is None else "pending_rate"
            raise bad("rate", f"divided by 'shards' must be the shards' new rate {which!r}")
        if time != origin + j / srate:
            raise bad("time", "must be 'origin' + 'ticks' / 'shard_rate'")
        owner = _check_assign(st["assign"], len(st["assign"]), k, caller)
        members, local = _layout(owner, k)
        dicts = d["schedulers"]
        if not isinstance(dicts, (list, tuple)) or len(dicts) != k:
            raise bad("schedulers", f"must be a list of {k} dicts (one per shard)")
        scheds: list[Scheduler] = []
        for s, ds in enumerate(dicts):
            try:
                sched = Scheduler.from_dict(ds)
            except (TypeError, ValueError) as exc:
                raise bad("schedulers", f"holds a bad dict for shard {s}: {exc}") from exc
            n = len(members[s])
            if len(ds["alive"]) != n or sched.n_pages == 0:
                raise bad("schedulers", f"must give shard {s} the {n} page ids of 'assign', at least one of them live")
            first = scheds[0] if scheds else sched
            if (sched.value, sched.terms, sched.signal_delay) != (first.value, first.terms, first.signal_delay):
                raise bad("schedulers", f"must share one value kind, 'terms' and signal delay (shard {s} differs)")
            # the shard's clock: ticked at `time` (s < pos, or a complete round) or still due there
            if pos == 0 or s < pos:
                want = (time, 0, pending) if pending is not None else (origin, j, srate)
            else:
                want = (origin, j - 1, srate)
            got = tuple(_statefile.item(ds[key]) for key in ("origin", "k", "rate"))
            if got != want or sched.time != want[0] + want[1] / want[2]:
                raise bad("schedulers", f"must hold shard {s}'s clock as the merge position gives it: origin, ticks "
                          f"and rate {want}, got {got} at time {sched.time!r}")
            scheds.append(sched)
        self = cls.__new__(cls)
        self._adopt(None, rate, owner, members, local, tuple(scheds), pos, time, origin, j, srate, pending)
        return self

    def __repr__(self) -> str:
        return (
            f"ShardedScheduler(n_pages={self.n_pages}, bandwidth={self._bandwidth!r}, shards={self._k}, "
            f"value={self.value!r}, time={self._time!r})"
        )


def _layout(owner: np.ndarray, k: int) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Each shard's page ids (increasing; position = local id) and each page's local id, read-only, from ``owner``."""
    m = len(owner)
    order = np.argsort(owner, kind="stable")
    sizes = np.bincount(owner, minlength=k)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    local = np.empty(m, dtype=np.int64)
    local[order] = np.arange(m, dtype=np.int64) - np.repeat(bounds[:-1], sizes)
    local.flags.writeable = False
    members = []
    for s in range(k):
        ids = order[bounds[s]:bounds[s + 1]].astype(np.int64)
        ids.flags.writeable = False
        members.append(ids)
    return tuple(members), local


def _fill(live: np.ndarray, n: int) -> np.ndarray:
    """Shard of each of ``n`` new pages given one by one to the shard with the fewest live pages (ties: lowest).

    Taking them one by one takes the pairs (live pages, shard) in increasing
    order, ``live[s], live[s] + 1, ...`` for shard ``s``: every pair below the
    level ``L`` (the highest with at most ``n`` pairs below it), then the
    first of those at ``L``.
    """
    lo, hi = int(live.min()), int(live.min()) + n
    while lo < hi:  # the highest L with sum(max(0, L - live)) <= n
        mid = (lo + hi + 1) // 2
        if np.maximum(0, mid - live).sum() <= n:
            lo = mid
        else:
            hi = mid - 1
    counts = np.maximum(0, lo - live)
    at_level = np.flatnonzero(live <= lo)[: n - int(counts.sum())]
    counts[at_level] += 1
    shard = np.repeat(np.arange(len(live), dtype=np.int64), counts)
    level = live[shard] + np.arange(len(shard)) - np.repeat(np.cumsum(counts) - counts, counts)
    return shard[np.lexsort((shard, level))]


def _check_assign(assign: Any, m: int, k: int, caller: str) -> np.ndarray:
    if isinstance(assign, (str, bytes)):
        raise TypeError(f"The 'assign' parameter of {caller} must be an array of integer shard numbers. Got a string.")
    a = np.asarray(assign)
    if a.dtype.kind not in "iu":
        raise TypeError(
            f"The 'assign' parameter of {caller} must be an array of integer shard numbers. "
            f"Got dtype {a.dtype} instead."
        )
    if a.shape != (m,):
        raise ValueError(f"The 'assign' parameter of {caller} must have shape ({m},). Got shape {a.shape} instead.")
    bad = np.flatnonzero((a < 0) | (a >= k))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"The 'assign' parameter of {caller} must hold shard numbers in [0, {k}); assign[{i}] = {a[i].item()!r}."
        )
    a = a.astype(np.int64)
    empty = np.flatnonzero(np.bincount(a, minlength=k) == 0)
    if empty.size:
        raise ValueError(f"The 'assign' parameter of {caller} leaves shard {int(empty[0])} without pages.")
    return a
