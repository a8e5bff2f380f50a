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
from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._scheduler_base import (
    MAX_POLL_GROUPS,
    SchedulerBase,
    check_last_poll,
    check_poll_groups,
    check_poll_interval,
)
from freshcore._statefile import Entry
from freshcore._validation import check_choice, check_crawl_times, check_int, check_scalar
from freshcore.pages import PageModel, check_pages

__all__ = ["MAX_PAGE_IDS", "MAX_POLL_GROUPS", "Scheduler"]

VALUES = ("exact", "approx", "greedy", "cis", "polled")

#: Page ids a scheduler hands out over its life (its heaps index pages with 32-bit integers).
MAX_PAGE_IDS = 2**31 - 3

_PAGE_KEYS = ("change_rate", "importance", "recall", "false_rate")


@cites(BUSA_FEKETE_2025)
class Scheduler(SchedulerBase):
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
    value : {"exact", "approx", "greedy", "cis", "polled"}, default="exact"
        The crawl value, as ``value`` of :func:`freshcore.value.crawl_value`:
        Greedy-NCIS exact, the approx-``terms`` truncation, Greedy (signals
        ignored) or Greedy-CIS (signals taken as proof of a change); or
        "polled": :func:`freshcore.polled_signals.polled_value` of pages whose
        signal source is polled every ``poll_interval``, fed by :attr:`poll`
        instead of :meth:`signal` (Notes).
    signal_delay : float, default=0.0
        Signals timed less than ``signal_delay`` after their page's last
        crawl are discarded (Appendix C of Busa-Fekete et al. (2025)).  Must
        be 0 with ``value="polled"``: known delays of polled signals are out
        of the scheduler's scope (the posterior with them is
        :func:`freshcore.polled_signals.polled_staleness`'s
        ``signal_delay``, a different quantity: a mean delay).
    terms : int, optional
        Number of terms ``j >= 1`` for ``value="approx"`` (required there,
        not allowed otherwise).
    last_crawl : array_like of shape (n_pages,), optional
        Initial last-crawl time of each page, finite and ``<= 0`` (default:
        all 0).  Any start is cheap, all equal included: the first tick
        evaluates (or, polled, bounds) every page once, the next ones a few
        each (``freshcore._schedule``, "lines bounding sqrt V").
    poll_interval : float or array_like of shape (n_pages,), optional
        ``w > 0`` of each page (a scalar: all), the poll interval its value
        assumes (``inf``: never polled, the Greedy value); required with
        ``value="polled"``, not allowed otherwise.
    last_poll : float or array_like of shape (n_pages,), optional
        Each page's last poll before the start (``value="polled"`` only; a
        scalar: all), finite and not after its last crawl (default: its
        last crawl): its first window starts there, and the part before the
        crawl counts when that window moves.  A poll since the crawl is given
        to :attr:`poll`, which takes polls before the scheduler's time.
    poll_group : int or array_like of shape (n_pages,), optional
        Each page's poll group (``value="polled"`` only; labels ``0 ..
        MAX_POLL_GROUPS - 1``, -1 or default: none), for
        :attr:`poll_group`: one call polls every page of a group (a
        sitemap), its unmoved pages lazily.

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

    With ``value="polled"`` the page crawled is ``argmax_i V_i(s_i)``,
    ``V_i`` :func:`freshcore.polled_signals.polled_value` at the page's
    log-staleness ``s_i = Delta_i (t - ell_i)`` (``ell_i`` an effective
    start: the crawl time, moved by each poll so that ``s_i`` is the
    posterior of :func:`freshcore.polled_signals.polled_staleness`).  Polls
    come by ``poll(pages, t, moved)`` (:attr:`poll`, which exists only for
    this value kind; :meth:`signal` and :meth:`signal_many` are refused): an
    unmoved window lowers ``s_i`` by ``lambda_i Delta_i l``, a moved one
    raises it by its window posterior less ``Delta_i l`` (``l`` the part of
    the window after the crawl; ``inf`` when a move proves a change:
    ``nu_i = 0`` and the window starts at or after the crawl).  The poll interval is the value's: the model assumes each
    crawl starts a poll cycle.  A page whose value cannot be computed
    (past ``freshcore._polled``'s step cap) raises
    :class:`~freshcore.value.PageValueError` as the other kinds do, once a
    tick needs its value: a popped page past 32 poll windows is bounded
    first, and one whose bound is below the tick's best value has lost
    without it.  Pages
    keep line bounds of their value and park as with the other kinds (the
    bounds of the polled value: the module notes of ``freshcore._schedule``),
    so a tick evaluates a few pages, not every one.  Poll groups
    (``poll_group=`` labels, :meth:`set_poll_group`) let one call,
    :attr:`poll_group`, poll every page of a group (a sitemap) at once, in
    O(moved pages): its unmoved windows are applied lazily, as one window
    from each page's last own event (their lowerings of ``s`` add up).

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
    in ``freshcore._schedule``).  This is Algorithm 1 of Busa-Fekete et al.
    (2025), with their Appendices C (delayed signals) and D (bandwidth
    changes).

    Examples
    --------
    >>> from freshcore.pages import PageModel
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

    Polled signals: the pages' sources read every 0.5, the moves seen at
    each poll given to :attr:`poll`:

    >>> pages = PageModel([1.0, 1.0, 0.5], [1.0, 1.0, 1.0], recall=0.8, false_rate=0.1)
    >>> p = Scheduler(pages, 2.0, value="polled", poll_interval=0.5)
    >>> p.run(3).tolist()
    [0, 1, 2]
    >>> p.poll([0, 1, 2], 1.5, [False, True, False])  # page 1's signal moved
    >>> p.run(3).tolist()
    [1, 0, 2]
    >>> hasattr(s, "poll"), hasattr(p, "poll")  # poll exists only for value="polled"
    (False, True)

    Poll groups: pages 0 and 1 in one sitemap (group 0), page 2 in another;
    a fetch of sitemap 0 polls both, only the moved page listed:

    >>> g = Scheduler(pages, 2.0, value="polled", poll_interval=0.5, poll_group=[0, 0, 1])
    >>> g.run(3).tolist()
    [0, 1, 2]
    >>> g.poll_group(0, 1.5, moved=[1])  # = g.poll([0, 1], 1.5, [False, True])
    >>> g.run(3).tolist()
    [1, 0, 2]
    """

    FORMAT_VERSION = 13
    #: Format versions :meth:`from_dict` and :meth:`load` read (5: before the lines bounding sqrt V; 6: before
    #: pages of every value kind parked; 7: before the settle parked the slope buckets a share per tick; 8: before
    #: the settle went by whole buckets, its place a bucket code rather than a page id; 9: before the polled
    #: value kind's crawl, poll and poll interval entries; 10: before poll groups and the polled pages' key
    #: anchors; 11: before the parked polled pages' anchors; 12: before sixteen slope buckets an octave).
    READABLE_VERSIONS = (5, 6, 7, 8, 9, 10, 11, 12, 13)
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
        poll_interval: Any = None,
        last_poll: Any = None,
        poll_group: Any = None,
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
        w = check_poll_interval(poll_interval, value, len(pages), caller)
        if value == "polled" and delay != 0.0:
            raise ValueError(f"The 'signal_delay' parameter of {caller} must be 0 with value='polled' (known delays "
                             f"of polled signals are out of the scheduler's scope). Got {delay!r}.")
        last = None if last_crawl is None else check_crawl_times(last_crawl, len(pages), caller)
        lp = check_last_poll(last_poll, value, np.zeros(len(pages)) if last is None else last, caller)
        groups = check_poll_groups(poll_group, value, len(pages), caller)
        # (the caller's PageModel is not kept: the compiled state holds what the scheduler needs, and ``pages``
        # rebuilds the model from it when asked; keeping it cost 56 bytes a page of the caller's arrays)
        self._pages: PageModel | None = None
        self._value = value
        self._terms = terms
        self._delay = delay
        delta, mu, nu, recall = _page_arrays(pages)
        self._state = _schedule.SchedulerState(delta, mu, nu, recall, VALUES.index(value), j, r, delay, last,
                                               poll_interval=w)
        if lp is not None:
            self._state.set_last_polls(lp)
        if groups is not None and (groups >= 0).any():
            self._state.use_groups(int(groups.max()) + 1)
            self._state.set_groups(np.arange(len(pages), dtype=np.intp), groups)

    @property
    def time(self) -> float:
        """Time of the last tick (0 before the first)."""
        return self._state.time

    @property
    def bandwidth(self) -> float:
        """Current bandwidth ``R``: crawls per unit time, one per tick."""
        return self._state.rate

    def tick_times(self, n: int) -> np.ndarray:
        """Tick times of the next ``n`` decisions, without making them (the bandwidth held).

        They are the times the ticks themselves will have, bit for bit (tick
        ``k`` since the last bandwidth change is at ``origin + k/R``), so a
        loop that must deliver a signal or a poll before the first tick at or
        after its time can compare against them (``time + 1/R`` can round
        below the next tick's time).

        Parameters
        ----------
        n : int
            Number of decisions, ``n >= 0``.

        Returns
        -------
        times : ndarray of shape (n,)
            Increasing.

        Examples
        --------
        >>> from freshcore import PageModel, Scheduler
        >>> s = Scheduler(PageModel([1.0, 2.0], [1.0, 1.0]), bandwidth=10.0)
        >>> s.run(7).shape, s.tick_times(2).tolist()
        ((7,), [0.8, 0.9])
        """
        n = check_int(n, "n", "Scheduler.tick_times", low=0)
        return self._state.tick_times(n)

    @property
    def poll_interval(self) -> np.ndarray | None:
        """Poll interval of each live page under ``value="polled"``, in id order (a copy of shape (n_pages,));
        None for the other value kinds."""
        if self._value != "polled":
            return None
        return self._state._live(self._state.polled_view(2))

    @property
    def n_pages(self) -> int:
        """Number of live pages."""
        return self._state.n_pages

    @property
    def page_ids(self) -> np.ndarray:
        """Ids of the live pages, increasing (int64 array of shape (n_pages,))."""
        return self._state.page_ids()

    def _live_params(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._state.params()

    # -- the moves of SchedulerBase's checked methods ------------------------------------------------------
    @property
    def _n_ids(self) -> int:
        return self._state.n_slots

    def _alive_of(self, ids: np.ndarray) -> np.ndarray:
        return self._state.alive_of(ids)

    def _last_crawl_of(self, ids: np.ndarray) -> np.ndarray:
        return self._state.last_crawl_view()[ids]

    def _signal_count_of(self, ids: np.ndarray) -> np.ndarray:
        return self._state.signal_count_view()[ids]

    def _next(self) -> int:
        return int(self._state.step())

    def _crawl(self, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.intp)
        self._state.run(n, out)
        return out.astype(np.int64, copy=False)

    def _crawl_signalled(self, n: int, pages: np.ndarray, times: np.ndarray) -> np.ndarray:
        out = np.empty(n, dtype=np.intp)
        self._state.run_signalled(n, np.ascontiguousarray(pages, dtype=np.intp),
                                  np.ascontiguousarray(times, dtype=np.float64), out)
        return out.astype(np.int64, copy=False)

    def _signal(self, page: int, t: float) -> bool:
        return bool(self._state.signal(page, t))

    def _last_poll_of(self, ids: np.ndarray) -> np.ndarray:
        return self._state.polled_view(1)[ids]

    def _polls_ok(self, pages: np.ndarray, t: float) -> bool:
        return bool(self._state.polls_ok(pages, t))

    def _poll_many(self, pages: np.ndarray, t: float, moved: np.ndarray) -> int:
        return int(self._state.poll_many(pages, t, moved))

    def _group_labels_of(self, ids: np.ndarray) -> np.ndarray:
        lab = self._state.group_view(0)
        return np.full(len(ids), -1, dtype=np.int64) if lab is None else lab[ids].astype(np.int64)

    def _group_floor(self, group: int, t: float) -> tuple[float, int] | None:
        st = self._state
        if st.group_view(0) is None or group >= len(st.group_view(1)):
            return None
        last = float(st.group_view(2)[group])
        if t < last:
            return last, -1
        if t < st.group_view(3)[group] and t < st.group_top(group):  # (the top is a bound: made exact first)
            lab, polls = st.group_view(0), st.polled_view(1)
            late = np.flatnonzero((lab == group) & st.alive_mask() & (polls > t))
            j = int(late[0])
            return float(polls[j]), j
        return None

    def _group_ok(self, group: int, t: float, moved: np.ndarray) -> bool:
        return bool(self._state.group_ok(group, t, moved))

    def _poll_group(self, group: int, t: float, moved: np.ndarray) -> int:
        st = self._state
        if st.group_view(0) is None or group >= len(st.group_view(1)):
            st.use_groups(group + 1)
        return int(st.poll_group(group, t, moved))

    def _set_groups(self, ids: np.ndarray, labels: np.ndarray) -> None:
        top = int(labels.max())
        if top >= 0 or self._state.group_view(0) is not None:
            self._state.use_groups(top + 1)
            self._state.set_groups(ids, labels)

    def _signals_ok(self, pages: np.ndarray, times: np.ndarray) -> bool:
        return bool(self._state.signals_ok(pages, times))

    def _signal_many(self, pages: np.ndarray, times: np.ndarray) -> np.ndarray:
        out = np.empty(len(pages), dtype=np.uint8)
        self._state.signal_many(pages, times, out)
        return out.view(np.bool_)

    def _set_bandwidth(self, bandwidth: float) -> None:
        self._state.set_rate(bandwidth)

    def _check_room(self, n: int, caller: str) -> None:
        if self._state.n_slots + n > MAX_PAGE_IDS:
            raise ValueError(
                f"The 'pages' parameter of {caller} would take the page ids handed out past {MAX_PAGE_IDS} "
                f"({self._state.n_slots} so far, {n} more)."
            )

    def _new_crawl_times(self, last_crawl: Any, n: int, caller: str) -> np.ndarray:
        if last_crawl is None:
            return np.full(n, self.time)
        return check_crawl_times(last_crawl, n, caller, latest=self.time, scalar=True)

    def _add(self, pages: PageModel, last: np.ndarray, poll_interval: Any = None, last_poll: Any = None,
             groups: Any = None) -> np.ndarray:
        if groups is not None and ((groups >= 0).any() or self._state.group_view(0) is not None):
            self._state.use_groups(int(groups.max()) + 1)
        else:
            groups = None
        first = self._state.add(*_page_arrays(pages), last, poll_interval, last_poll, groups)
        return np.arange(first, first + len(pages), dtype=np.int64)

    def _remove(self, ids: np.ndarray) -> None:
        self._state.remove(ids)

    def _update(self, ids: np.ndarray, pages: PageModel, poll_interval: Any = None) -> None:
        self._state.update(ids, *_page_arrays(pages), poll_interval)

    # -- state: dict, pickle, copy, file (StateFile adds save, load, pickle and copy) ------------------------
    def to_dict(self) -> dict[str, Any]:
        """The full state as a dict of numpy arrays and Python scalars (copies).

        Holds the parameters of every page id handed out (``alive`` flags
        the live ones), the value kind, ``terms``, the signal
        delay and the compiled state (bandwidth ``rate``, origin and tick count of the
        current bandwidth, time, last crawls, signal counts, and each page's
        bound: its key and slope bucket, from which the heaps are rebuilt).
        Under ``value="polled"``, ``last`` is each page's effective start and
        ``crawl``, ``poll`` and ``poll_interval`` its crawl time, last poll
        and poll interval (for the other kinds ``last``, ``last`` and ``inf``);
        the poll groups (format 11): ``poll_group`` each page's label (-1:
        none), ``group_seen`` and ``group_anchor`` its group's poll count and
        its effective start at its last own event (its ``poll`` is then its
        own last poll; ``group_time`` its group's later one), and, one entry
        per group, ``group_polls``, ``group_time`` (``-inf`` before a poll)
        and ``group_top`` (a bound on its pages' last polls); without groups
        -1, 0, ``last`` and empty tables; and ``anchor_t``, ``anchor_ell``
        the time and effective start each page's key was put at (``inf``:
        none; every slot ``inf`` for the other kinds).
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
        live page in one heap once the first tick has passed; a state that
        fails them is refused rather than run.

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
        if version not in cls.READABLE_VERSIONS:
            raise ValueError(
                f"The 'd' parameter of {caller} is of format version {version!r}; this freshcore reads "
                f"versions {', '.join(map(str, cls.READABLE_VERSIONS))}."
            )
        if version == 5:
            d = _upgrade_from_5(d)
        if version in (5, 6):
            d = _upgrade_from_6(d)
        if version in (5, 6, 7):
            d = _upgrade_from_7(d)
        if version in (5, 6, 7, 8):
            d = _upgrade_from_8(d)
        if version in (5, 6, 7, 8, 9):
            if isinstance(d, dict) and d.get("value") == "polled":
                raise ValueError(f"The 'value' entry of the dict given to {caller} is 'polled', a value kind that "
                                 f"format version {version} did not have.")
            d = _upgrade_from_9(d)
        if version in (5, 6, 7, 8, 9, 10):
            d = _upgrade_from_10(d)
        if version in (5, 6, 7, 8, 9, 10, 11):
            d = _upgrade_from_11(d)
        if version in (5, 6, 7, 8, 9, 10, 11, 12):
            d = _upgrade_from_12(d)
        m = len(np.atleast_1d(d.get("alive", ())))
        polled = isinstance(d, dict) and d.get("value") == "polled"
        state = _statefile.check_entries(d, _POLLED_STATE if polled else _STATE, caller, m)
        state.update(_statefile.check_entries(d, _GROUP_TABLES, caller,
                                              len(np.atleast_1d(d.get("group_polls", ())))))
        _check_invariants(state, caller)
        value, terms = state["value"], state["terms"]
        self = cls.__new__(cls)
        self._pages = None
        self._value = value
        self._terms = terms
        self._delay = state["signal_delay"]
        delta, mu, nu, recall = (np.ascontiguousarray(state[k]) for k in ("change_rate", "importance", "false_rate",
                                                                           "recall"))
        self._state = _schedule.SchedulerState(
            delta, mu, nu, recall, VALUES.index(value), -1 if terms is None else terms, state["rate"], self._delay,
            poll_interval=np.ascontiguousarray(state["poll_interval"]) if value == "polled" else None)
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


def _page_arrays(pages: PageModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The per-page arrays of the compiled state: Delta, mu, nu and lambda.

    (``alpha``, ``gamma``, ``beta`` and the signal term of ``tau`` for the
    value kind are recomputed by the compiled state with PageModel's
    operations; ``beta`` by the same compiled function.)
    """
    delta, mu, nu, recall = (np.ascontiguousarray(a, dtype=np.float64) for a in (
        pages.change_rate, pages.importance, pages.false_rate, pages.recall))
    return delta, mu, nu, recall


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
    Entry("crawl", "floats"),
    Entry("poll", "floats"),
    Entry("poll_interval", "floats", low=0.0, open_low=True, finite=False),
    Entry("poll_group", "ints", low=-1, high=MAX_POLL_GROUPS - 1),
    Entry("group_seen", "ints", low=0),
    Entry("group_anchor", "floats", finite=False),
    Entry("ncis", "ints", low=0, high=_schedule.MAX_SIGNALS),
    Entry("anchor_t", "floats", finite=False),
    Entry("anchor_ell", "floats", finite=False),
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
    Entry("park_wait", "int", low=0),  # (0 before the first tick)
    Entry("n_unparks", "int", low=0),
    Entry("park_moving", "bool"),
    Entry("park_move_ref", "float", low=0.0),
    Entry("park_move_tick", "int", low=0),
    Entry("park_settle", "int", low=0),  # (the next slope bucket the settle looks at; 0: no settle under way)
    Entry("park_fall_level", "float", low=0.0),  # (above park_level while a lowering is under way)
    Entry("park_lower", "int", low=0),  # (1 + the next page id the lowering re-keys; 0: none under way)
    Entry("k", "int", low=0),
    Entry("nticks", "int", low=0),
    Entry("n_evaluations", "int", low=0),
    Entry("built", "bool"),
)


#: The poll groups' tables of :meth:`Scheduler.to_dict` (one entry per group).
_GROUP_TABLES = (
    Entry("group_polls", "ints", low=0),
    Entry("group_time", "floats", finite=False),
    Entry("group_top", "floats", finite=False),
)


#: The entries under ``value="polled"``: ``last`` (the effective start) is ``-inf`` after a move that proved a change.
_POLLED_STATE = tuple(Entry("last", "floats", finite=False) if e.name == "last" else e for e in _STATE)


# The bucket codes of formats 6 .. 12 (four slope buckets an octave for the lines bounding V and ln V, 600 each;
# 2400 for sqrt V): the unbounded slopes and the two of the parked pages (_upgrade_from_12 maps them).
_F12_SLOPES = 600
_F12_UNBOUNDED, _F12_PARK, _F12_FAR = 3601, 3602, 3603


def _codes_from_12(code: np.ndarray) -> np.ndarray:
    """Format-12 bucket codes as this format's: a line keeps its slope (each of the four slopes an octave is one
    of the sixteen, ``(1/2 + (q + 1)/8) 2**e = (1/2 + (4 q + 4)/32) 2**e``) and so its key; the codes after the
    slopes move up with them; the others (removed, not placed) stay."""
    code = np.array(code, dtype=np.int64, copy=True)
    out = code.copy()
    per = _schedule.SLOPES_PER_OCTAVE
    n_slopes = _schedule.N_OCTAVES * per
    for lo, base in ((1, 0), (1 + _F12_SLOPES, n_slopes)):  # lines bounding V, then ln V
        sel = (code >= lo) & (code < lo + _F12_SLOPES)
        i = code[sel] - lo
        out[sel] = base + 1 + (i // 4) * per + (i % 4 + 1) * (per // 4) - 1
    sel = (code > 2 * _F12_SLOPES) & (code < _F12_UNBOUNDED)  # sqrt V: sixteen an octave in both
    out[sel] = code[sel] - 2 * _F12_SLOPES + 2 * n_slopes
    for old, new in ((_F12_UNBOUNDED, _schedule.UNBOUNDED_CODE), (_F12_PARK, _schedule.PARK_CODE),
                     (_F12_FAR, _schedule.FAR_CODE)):
        out[code == old] = new
    return out


def _upgrade_from_5(d: Any) -> dict[str, Any]:
    """A format-5 dict as format 6: bucket codes from 1201 on (the unbounded slopes, the parked pages) move up by
    the 2400 codes of the lines bounding sqrt V, and the park is not moving (its window starts now)."""
    d = dict(d)
    if "bucket" in d:
        bucket = np.array(d["bucket"], copy=True)
        if bucket.dtype.kind in "iu":
            old = (bucket >= 1201) & (bucket < _schedule.NOT_PLACED_CODE)
            bucket[old] += _F12_UNBOUNDED - 1201
        d["bucket"] = bucket
    d.update(format_version=6, park_moving=False, park_move_ref=d.get("last_best", 0.0),
             park_move_tick=d.get("nticks", 0))
    return d


def _upgrade_from_6(d: Any) -> dict[str, Any]:
    """A format-6 dict as format 7: the park's wait before its margin halves starts at its shortest (m/16
    ticks, at least 16; format 6 waited m ticks and only when the winning value rose)."""
    d = dict(d)
    alive = np.asarray(d.get("alive", ()))
    m = int(alive.sum()) if alive.dtype.kind == "b" else 0
    d.update(format_version=7, park_wait=m // 16 if m >= 256 else 16)
    return d


def _upgrade_from_7(d: Any) -> dict[str, Any]:
    """A format-7 dict as format 8: no settle under way (format 7 parked every slope bucket's pages below the
    level at the tick the winning value settled) and no lowering (format 7 lowered the level only by falls)."""
    d = dict(d)
    d.update(format_version=8, park_settle=0, park_fall_level=d.get("park_level", 0.0), park_lower=0)
    return d


def _upgrade_from_8(d: Any) -> dict[str, Any]:
    """A format-8 dict as format 9: a settle under way (format 8 went through it by page ids, ``park_settle`` 1 +
    the next id) starts again from the first slope bucket (format 9 goes by whole buckets, ``park_settle`` the next
    bucket code): it parks the pages still in a slope bucket below the level, those parked stay."""
    d = dict(d)
    settle = np.asarray(d.get("park_settle", 0))
    if settle.ndim == 0 and settle.dtype.kind in "iu" and settle > 0:  # (anything else: the checks name it)
        d["park_settle"] = 1
    d["format_version"] = 9
    return d


def _upgrade_from_9(d: Any) -> dict[str, Any]:
    """A format-9 dict as format 10: every slot's crawl and last poll at its last crawl and its poll interval
    ``inf`` (format 9 had no polled value kind; the other kinds ignore them)."""
    d = dict(d)
    last = d.get("last")
    if last is not None:  # (a missing or bad 'last' is named by the checks)
        d.setdefault("crawl", last)
        d.setdefault("poll", last)
        d.setdefault("poll_interval", np.full(np.shape(last), np.inf))
    d["format_version"] = 10
    return d


def _upgrade_from_10(d: Any) -> dict[str, Any]:
    """A format-10 dict as format 11: no page in a poll group (labels -1, counts 0, anchors at ``last``) and no
    group; no page's key has an anchor (``inf``; a polled page's key moves later after unmoved polls only once it
    is put again)."""
    d = dict(d)
    last = d.get("last")
    if last is not None:  # (a missing or bad 'last' is named by the checks)
        n = np.shape(last)
        d.setdefault("poll_group", np.full(n, -1, dtype=np.int64))
        d.setdefault("group_seen", np.zeros(n, dtype=np.int64))
        d.setdefault("group_anchor", last)
        d.setdefault("anchor_t", np.full(n, np.inf))
        d.setdefault("anchor_ell", np.full(n, np.inf))
    for key, dtype in (("group_polls", np.int64), ("group_time", np.float64), ("group_top", np.float64)):
        d.setdefault(key, np.zeros(0, dtype=dtype))
    d["format_version"] = 11
    return d


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
    if k > state["nticks"] or max(state["park_fall"], state["n_unparks"], state["park_move_tick"]) > state["nticks"]:
        raise bad("nticks", "must count every tick: at least 'k', 'park_fall', 'n_unparks' and 'park_move_tick'")
    built, alive, bucket = state["built"], state["alive"], state["bucket"]
    if state["park_lower"] > alive.shape[0]:
        raise bad("park_lower", f"must be at most the number of page slots ({alive.shape[0]}), got "
                  f"{state['park_lower']!r}")
    if state["park_settle"] >= _schedule.UNBOUNDED_CODE:
        raise bad("park_settle", f"must be below {_schedule.UNBOUNDED_CODE} (the next slope bucket the settle looks "
                  f"at, 0 for none), got {state['park_settle']!r}")
    if state["park_fall_level"] < state["park_level"] or (state["park_lower"] == 0) != (
            state["park_fall_level"] == state["park_level"]):
        raise bad("park_fall_level", f"must be 'park_level' ({state['park_level']!r}) when no lowering is under "
                  f"way ('park_lower' 0) and above it otherwise, got {state['park_fall_level']!r}")
    if not built and (state["nticks"] or time != 0.0):
        raise bad("built", "must be True once a tick has passed")
    crawled = "crawl" if value == "polled" else "last"
    late = np.flatnonzero(alive & (state[crawled] > time))
    if late.size:
        j = int(late[0])
        raise bad(crawled, f"must not be after 'time' ({time!r}) for a live page; page {j} was crawled at "
                  f"{state[crawled][j]!r}")
    if value != "polled":  # (written as last, last and inf, and unused: anything else is not this kind's state)
        for key, want in (("crawl", state["last"]), ("poll", state["last"]), ("poll_interval", np.inf)):
            off = np.flatnonzero(state[key] != want)
            if off.size:
                raise bad(key, f"must be {'inf' if key == 'poll_interval' else repr('last')} in every slot with "
                          f"value {value!r}; slot {int(off[0])} has {state[key][off[0]]!r}")
    label, seen, ngroups = state["poll_group"], state["group_seen"], len(state["group_polls"])
    if value != "polled" and (ngroups or (label != -1).any() or (seen != 0).any()
                              or (state["group_anchor"] != state["last"]).any()):
        raise bad("poll_group", f"must be -1 in every slot, with 'group_seen' 0, 'group_anchor' 'last' and no "
                  f"group, with value {value!r}")
    over = np.flatnonzero(label >= ngroups)
    if over.size:
        j = int(over[0])
        raise bad("poll_group", f"must hold labels below the number of groups ({ngroups}); slot {j} has {label[j]}")
    grouped = label >= 0
    polls = np.where(grouped, state["group_polls"][np.where(grouped, label, 0)] if ngroups else 0, 0)
    ahead_count = np.flatnonzero(seen > polls)
    if ahead_count.size:
        j = int(ahead_count[0])
        raise bad("group_seen", f"must not pass its group's poll count; slot {j} has {seen[j]} > {polls[j]}")
    if value == "polled":
        if state["signal_delay"] != 0.0:
            raise bad("signal_delay", f"must be 0 with value 'polled', got {state['signal_delay']!r}")
        counted = np.flatnonzero(state["ncis"] != 0)
        if counted.size:
            raise bad("ncis", f"must be 0 with value 'polled' (polls are not counted); page {int(counted[0])} has "
                      f"{int(state['ncis'][counted[0]])}")
        # (a page's last poll: its own, or its group's when polls of the group are pending)
        pending = grouped & (seen < polls)
        gtime = state["group_time"][np.where(grouped, label, 0)] if ngroups else np.full(len(label), -np.inf)
        poll = np.where(pending, np.maximum(state["poll"], gtime), state["poll"])
        ahead = np.flatnonzero(alive & (state["last"] > np.maximum(time, poll)))
        if ahead.size:
            j = int(ahead[0])
            raise bad("last", f"must not be after the later of 'time' and 'poll' for a live page with value "
                      f"'polled' (an effective start moves only up to its poll); page {j} has {state['last'][j]!r}")
    n_buckets = _schedule.N_BUCKETS
    wrong = (bucket >= n_buckets) & (bucket != _schedule.NOT_PLACED_CODE)
    if wrong.any():
        raise bad("bucket", f"must hold slope buckets below {n_buckets} or {_schedule.NOT_PLACED_CODE} (page "
                  f"{int(np.flatnonzero(wrong)[0])})")
    placed = bucket != _schedule.NOT_PLACED_CODE
    if built and (placed != alive).any():
        j = int(np.flatnonzero(placed != alive)[0])
        raise bad("bucket", f"must place every live page and no removed one (page {j})")
    if not built and placed.any():
        raise bad("bucket", "must place no page before the first tick")


def _upgrade_from_11(d: Any) -> dict[str, Any]:
    """A format-11 dict as format 12: no parked page's key has an anchor (``inf``).  Format 11 kept a polled
    page's anchor from its last line when it parked, where format 12 anchors its park key (which moves later after
    unmoved polls as a line's key does): the old anchor would move the key too far."""
    d = dict(d)
    bucket, t, ell = d.get("bucket"), d.get("anchor_t"), d.get("anchor_ell")
    if bucket is not None and t is not None and ell is not None:  # (anything missing or bad: the checks name it)
        bucket = np.asarray(bucket)
        t, ell = np.array(t, dtype=float, copy=True), np.array(ell, dtype=float, copy=True)
        if bucket.shape == t.shape == ell.shape and bucket.dtype.kind in "iu":
            parked = (bucket == _F12_PARK) | (bucket == _F12_FAR)
            t[parked] = ell[parked] = np.inf
            d["anchor_t"], d["anchor_ell"] = t, ell
    d["format_version"] = 12
    return d


def _upgrade_from_12(d: Any) -> dict[str, Any]:
    """A format-12 dict as format 13: its bucket codes (and the settle's next bucket) as sixteen slope buckets an
    octave have them (``_codes_from_12``: every page keeps its line and key)."""
    d = dict(d)
    bucket = d.get("bucket")
    if bucket is not None:  # (anything missing or bad: the checks name it)
        bucket = np.asarray(bucket)
        if bucket.dtype.kind in "iu" and bucket.ndim == 1:
            d["bucket"] = _codes_from_12(bucket).astype(bucket.dtype)
    settle = np.asarray(d.get("park_settle", 0))
    if settle.ndim == 0 and settle.dtype.kind in "iu" and 0 < settle < _F12_UNBOUNDED:
        # the settle's next bucket (those below it are done): the code after the one before it (the codes up to
        # its own hold no page), so that a settle from the first bucket stays at 1
        d["park_settle"] = int(_codes_from_12(np.array([int(settle) - 1]))[0]) + 1
    d["format_version"] = 13
    return d
