"""Discrete-event simulation that judges crawl policies (SPEC section 4).

:func:`simulate` draws Poisson changes, requests and change-indicating
signals for a set of pages, lets a crawl policy pick one page per tick, and
measures the *accuracy*: the fraction of requests that find a fresh copy, as
in the experiments of Section 6 of Busa-Fekete, Zimmert, György et al. (2025).

The policy
----------
Any :class:`~freshcore.policies.CrawlPolicy`: :class:`freshcore.schedule.Scheduler`,
:class:`freshcore.sharding.ShardedScheduler`, the baselines of
:mod:`freshcore.policies`, or an object of your own with the same members.
A policy handed to :func:`simulate` must be new (``time == 0``): every page
counts as crawled, hence fresh, at time 0.  Its optional members
(``signal_many``, ``tick_times``, ``observe``) are used when present, as
:class:`~freshcore.policies.CrawlPolicy` describes.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import check_array, check_int, check_rng, check_same_length, check_scalar
from freshcore.pages import PageModel, check_pages
from freshcore.policies import CrawlPolicy

__all__ = ["PollSchedule", "SimulationResult", "simulate"]



class PollSchedule:
    """When the crawler reads each page's signal source (a sitemap or feed), for :func:`simulate`'s ``polls``.

    A page's signal source is read at its poll times; at each poll the crawler
    sees only whether the page's signal *moved* since the previous poll
    (several moves collapse into one observation) and, where the source gives
    it (sitemap ``lastmod``), the time of the latest move (SPEC section 3b).
    Pages are polled per page, or per *group* (the pages of a group are
    polled together, like the URLs of one sitemap), either regularly every
    ``poll_interval`` or at explicit ``poll_times``.

    Parameters
    ----------
    poll_interval : float > 0 or array_like of shape (n_groups,), optional
        Time between two polls of a group (of a page when ``groups`` is None,
        the array then of shape ``(n_pages,)``).  The polls of a group are at
        ``phase + k * poll_interval`` (computed so in floating point) for the
        integers ``k`` with ``0 < phase + k * poll_interval <= horizon``.
        Give exactly one of ``poll_interval`` and ``poll_times``.
    groups : array_like of int of shape (n_pages,), optional
        The group of each page, in ``[0, n_groups)``.  None (the default):
        every page is its own group.  ``n_groups`` is the length of the
        per-group arrays given (``poll_interval``, ``phase``, ``poll_times``),
        else ``max(groups) + 1``.
    phase : float, array_like of shape (n_groups,) or "random", default=0.0
        Offset of each group's regular polls, in ``[0, poll_interval)``.  The
        default 0 puts every group on one shared grid ``k * poll_interval``
        (for equal intervals): one read of one sitemap tells the crawler about
        all its pages at once, which is what a crawler reading a site's
        sitemap does, and the polls then arrive in few large batches (the
        fastest to simulate).  ``"random"``: each group's phase is drawn
        uniformly on ``[0, poll_interval)`` from :func:`simulate`'s ``rng``
        after every event (so the events are the same as without polls).
        Only with ``poll_interval``.
    poll_times : sequence of array_like, optional
        Irregular polls: ``poll_times[g]`` are group ``g``'s poll times (of
        page ``g`` when ``groups`` is None), finite, ``>= 0`` and strictly
        increasing; times after the horizon are ignored.
    lastmod : bool, default=False
        Whether the source gives the time of the latest move: a policy's
        ``poll`` is then called as ``poll(pages, t, moved, lastmod=times)``
        (``times``: the latest move of each polled page in the window, NaN
        where it did not move) instead of ``poll(pages, t, moved)``.

    Raises
    ------
    TypeError
        For arguments of the wrong type (a string for an array, a float for ``groups``, ...).
    ValueError
        Naming the argument and its first bad index: ``poll_interval <= 0``
        or NaN, ``phase`` outside ``[0, poll_interval)``, negative groups,
        poll times that are negative, NaN or not increasing, arrays of
        different lengths, both or neither of ``poll_interval`` and
        ``poll_times``.  :func:`simulate` checks the lengths against its
        pages (``groups`` of shape ``(n_pages,)``, per-page arrays when
        ``groups`` is None) and refuses more than ``10**8`` page polls up to
        its horizon (their arrays would take gigabytes), before it draws
        anything.

    Notes
    -----
    A page's first poll sees the moves since time 0 (every page counts as
    crawled, and its source as read, at time 0).  A move counts in the window
    ``(previous poll, this poll]``: a move at exactly a poll time is seen by
    that poll.

    Examples
    --------
    >>> from freshcore.policy_simulation import PollSchedule
    >>> PollSchedule(1.0)  # every page on the shared grid 1, 2, 3, ...
    PollSchedule(poll_interval=1.0, groups=None, phase=0.0, poll_times=None, lastmod=False)
    >>> s = PollSchedule([1.0, 0.25], groups=[0, 0, 1], phase=[0.5, 0.0])  # two sitemaps
    >>> s.n_groups
    2
    >>> from freshcore import PageModel, Scheduler
    >>> from freshcore.policy_simulation import simulate
    >>> pages = PageModel([0.5, 1.0, 2.0], [1.0, 1.0, 1.0], recall=0.8, false_rate=0.2)
    >>> res = simulate(Scheduler(pages, 3.0), pages, 100.0, rng=1, polls=s)
    >>> res.n_polls  # 2 pages every 1 (at 0.5, 1.5, ...) and 1 page every 0.25, up to 100
    600
    >>> res.n_polls_moved + res.n_moves_hidden <= res.n_signals
    True
    """

    def __init__(self, poll_interval: Any = None, *, groups: Any = None, phase: Any = 0.0, poll_times: Any = None,
                 lastmod: bool = False) -> None:
        caller = "PollSchedule"
        if (poll_interval is None) == (poll_times is None):
            raise ValueError(f"{caller} needs exactly one of 'poll_interval' (regular polls) and 'poll_times' "
                             "(irregular polls).")
        if not isinstance(lastmod, (bool, np.bool_)):
            raise TypeError(f"The 'lastmod' parameter of {caller} must be True or False. Got {lastmod!r}.")
        sizes: dict[str, int] = {}
        g_arr = None
        if groups is not None:
            g_arr = _check_groups(groups, caller)
        w: np.ndarray | None = None
        ph: np.ndarray | str | None = None
        times: tuple[np.ndarray, ...] | None = None
        if poll_interval is not None:
            w = check_array(poll_interval, "poll_interval", caller, ndim=(0, 1), low=0.0, low_inclusive=False)
            w = w.reshape(np.shape(poll_interval))  # check_array makes scalars 1-D
            if w.ndim == 1:
                sizes["poll_interval"] = len(w)
            if isinstance(phase, str):
                if phase != "random":
                    raise ValueError(f"The 'phase' parameter of {caller} must be a number, an array or 'random'. "
                                     f"Got {phase!r}.")
                ph = "random"
            else:
                ph_arr = check_array(phase, "phase", caller, ndim=(0, 1), low=0.0).reshape(np.shape(phase))
                if ph_arr.ndim == 1:
                    sizes["phase"] = len(ph_arr)
                ph = ph_arr
        else:
            if not (isinstance(phase, (int, float, np.integer, np.floating)) and not isinstance(phase, bool)
                    and float(phase) == 0.0):
                raise ValueError(f"The 'phase' parameter of {caller} applies to regular polls ('poll_interval') "
                                 f"only. Got {phase!r} with 'poll_times'.")
            ph = np.zeros(())
            if isinstance(poll_times, (str, bytes, np.ndarray)) or not isinstance(poll_times, Sequence):
                raise TypeError(f"The 'poll_times' parameter of {caller} must be a sequence (list or tuple) of "
                                f"arrays, one per group. Got {type(poll_times).__name__}.")
            out = []
            for gi, tg in enumerate(poll_times):
                name = f"poll_times[{gi}]"
                a = check_array(tg, name, caller, low=0.0, allow_empty=True)
                bad = np.flatnonzero(np.diff(a) <= 0)
                if bad.size:
                    j = int(bad[0]) + 1
                    raise ValueError(f"The '{name}' parameter of {caller} must be strictly increasing; "
                                     f"{name}[{j}] = {float(a[j])!r} <= {name}[{j - 1}] = {float(a[j - 1])!r}.")
                a.setflags(write=False)
                out.append(a)
            times = tuple(out)
            sizes["poll_times"] = len(times)
        if len(set(sizes.values())) > 1:
            raise ValueError(f"The per-group arrays of {caller} must have the same length. Got "
                             + ", ".join(f"{k} of length {v}" for k, v in sizes.items()) + ".")
        n_groups = next(iter(sizes.values())) if sizes else None
        if g_arr is not None:
            if n_groups is None:
                n_groups = int(g_arr.max()) + 1 if len(g_arr) else 0
            elif len(g_arr) and int(g_arr.max()) >= n_groups:
                i = int(np.flatnonzero(g_arr >= n_groups)[0])
                raise ValueError(f"The 'groups' parameter of {caller} must contain groups in [0, {n_groups}) "
                                 f"(the length of {', '.join(sizes)}); groups[{i}] = {int(g_arr[i])}.")
        if w is not None and isinstance(ph, np.ndarray):
            wb, pb = (np.atleast_1d(a) for a in np.broadcast_arrays(w, ph))
            bad = np.flatnonzero(pb >= wb)
            if bad.size:
                i = int(bad[0])
                where = f"phase[{i}]" if ph.ndim else "phase"
                raise ValueError(f"The 'phase' parameter of {caller} must lie in [0, poll_interval); "
                                 f"{where} = {float(pb[i])!r} >= poll_interval = {float(wb[i])!r}.")
        for arr in (w, ph, g_arr):
            if isinstance(arr, np.ndarray):
                arr.setflags(write=False)
        self._w, self._phase, self._times, self._groups = w, ph, times, g_arr
        self._n_groups = n_groups
        self._lastmod = bool(lastmod)

    @property
    def poll_interval(self) -> np.ndarray | None:
        """The interval of each group (0-d for one shared by all), or None for irregular polls."""
        return self._w

    @property
    def groups(self) -> np.ndarray | None:
        """The group of each page (intp), or None (every page its own group)."""
        return self._groups

    @property
    def phase(self) -> np.ndarray | str | None:
        """The phase of each group's regular polls (0-d for one shared by all) or ``"random"``."""
        return self._phase if self._w is not None else None

    @property
    def poll_times(self) -> tuple[np.ndarray, ...] | None:
        """Each group's irregular poll times, or None for regular polls."""
        return self._times

    @property
    def n_groups(self) -> int | None:
        """The number of groups, or None when it is the number of pages (given by :func:`simulate`)."""
        return self._n_groups

    @property
    def lastmod(self) -> bool:
        """Whether ``poll`` is also given the time of each page's latest move."""
        return self._lastmod

    def __repr__(self) -> str:
        def show(a: Any) -> str:
            if isinstance(a, np.ndarray):
                return repr(a.item()) if a.ndim == 0 else f"array of {len(a)}"
            if isinstance(a, tuple):
                return f"{len(a)} arrays"
            return repr(a)

        return (f"PollSchedule(poll_interval={show(self._w)}, groups={show(self._groups)}, "
                f"phase={show(self.phase)}, poll_times={show(self._times)}, lastmod={self._lastmod})")

    def _check_fit(self, m: int, horizon: float, caller: str) -> None:
        """Check the schedule against ``m`` pages and the horizon (before anything is drawn)."""
        g = self._groups
        if g is not None and len(g) != m:
            raise ValueError(f"The 'polls' parameter of {caller} has groups of shape ({len(g)},) but 'pages' has "
                             f"{m} pages.")
        if g is None and self._n_groups is not None and self._n_groups != m:
            raise ValueError(f"The 'polls' parameter of {caller} has per-page arrays of length {self._n_groups} "
                             f"(no 'groups') but 'pages' has {m} pages.")
        if self._w is not None:
            n_groups = self._n_groups if g is not None else m
            assert n_groups is not None
            w = np.broadcast_to(self._w, (n_groups,))
            page_group = g if g is not None else np.arange(m, dtype=np.intp)
            total = float(np.sum(np.floor(horizon / w[page_group]) + 1.0))
        else:
            assert self._times is not None
            sizes = np.array([np.count_nonzero(t <= horizon) for t in self._times], dtype=np.float64)
            total = float(np.sum(sizes[g])) if g is not None else float(sizes.sum())
        if total > _MAX_POLLS:
            raise ValueError(f"The 'polls' parameter of {caller} asks for about {total:.3g} page polls up to the "
                             f"horizon (more than {_MAX_POLLS:.0e}): poll less often or per group.")

    def _clocks(self, m: int, horizon: float, rng: np.random.Generator) -> tuple[np.ndarray, list]:
        """The poll clock of each page (intp, shape (m,)) and each clock's poll times in ``(0, horizon]``
        (``[0, horizon]`` for irregular ones); groups with the same regular grid share a clock.  After
        :meth:`_check_fit`."""
        g = self._groups
        n_groups = self._n_groups if g is not None else m
        assert n_groups is not None
        page_group = g if g is not None else np.arange(m, dtype=np.intp)
        if self._times is not None:
            return page_group, [t[t <= horizon] for t in self._times]
        assert self._w is not None
        w = np.broadcast_to(self._w, (n_groups,))
        if isinstance(self._phase, str):  # "random": drawn after every event
            ph = w * rng.random(n_groups)
        else:
            ph = np.broadcast_to(np.asarray(self._phase), (n_groups,))
        pairs, inv = np.unique(np.stack([w, ph], axis=1), axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        used = np.zeros(len(pairs), dtype=bool)
        used[inv[page_group]] = True
        clocks = []
        for c, (wc, pc) in enumerate(pairs):
            if not used[c]:
                clocks.append(np.empty(0))
                continue
            k = np.arange(0, math.floor((horizon - pc) / wc) + 2, dtype=np.float64)
            t = pc + k * wc
            clocks.append(t[(t > 0.0) & (t <= horizon)])
        return inv[page_group], clocks


_MAX_POLLS = 1e8  # page polls per run: about 2-4 GB of arrays at this size


def _check_groups(groups: Any, caller: str) -> np.ndarray:
    if isinstance(groups, (str, bytes)):
        raise TypeError(f"The 'groups' parameter of {caller} must be an array of integer groups. Got a string.")
    arr = np.asarray(groups)
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise TypeError(f"The 'groups' parameter of {caller} must be an array of integer groups. "
                        f"Got dtype {arr.dtype} instead.")
    if arr.ndim != 1:
        raise ValueError(f"The 'groups' parameter of {caller} must be a 1-D array. Got shape {arr.shape} instead.")
    bad = np.flatnonzero(arr < 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"The 'groups' parameter of {caller} must contain groups >= 0; groups[{i}] = "
                         f"{arr[i].item()!r}.")
    return np.ascontiguousarray(arr, dtype=np.intp)


@dataclass
class _Polls:
    """Every page poll up to the horizon, in time order: batches of one poll time each."""

    times: np.ndarray  # the distinct poll times, increasing
    starts: np.ndarray  # batch b is [starts[b], starts[b + 1]) of the arrays below
    pages: np.ndarray  # int64
    moved: np.ndarray  # bool
    lastmod: np.ndarray | None  # float64, NaN where not moved (only when asked for)
    n_moved: int
    n_hidden: int


def _poll_observations(schedule: PollSchedule, m: int, H: float, sig_t: np.ndarray, sig_p: np.ndarray,
                       rng: np.random.Generator) -> _Polls:
    """What each poll sees: per page poll, whether a signal arrived in (previous poll, poll], and the latest."""
    page_clock, clocks = schedule._clocks(m, H, rng)
    n_c = np.array([len(t) for t in clocks], dtype=np.int64)
    coff = np.concatenate(([0], np.cumsum(n_c)))
    ct = np.concatenate(clocks) if clocks else np.empty(0)
    cc = np.repeat(np.arange(len(clocks), dtype=np.intp), n_c)
    per_page = n_c[page_clock]
    base = np.concatenate(([0], np.cumsum(per_page)))
    n_obs = int(base[-1])
    # each signal's window: the number of polls of its page's clock strictly before it (a signal at a poll
    # time belongs to that poll)
    sc = page_clock[sig_p]
    if len(clocks) == 1:
        k = np.searchsorted(ct, sig_t, side="left")
    else:
        key_c = np.concatenate((sc, cc))
        key_t = np.concatenate((sig_t, ct))
        kind = np.concatenate((np.zeros(len(sig_t), dtype=np.int8), np.ones(len(ct), dtype=np.int8)))
        order = np.lexsort((kind, key_t, key_c))
        is_poll = kind[order].astype(np.int64)
        before = np.cumsum(is_poll) - is_poll
        k = np.empty(len(sig_t), dtype=np.int64)
        sig_pos = order < len(sig_t)
        k[order[sig_pos]] = before[sig_pos]
        k -= coff[sc]
    valid = k < n_c[sc]
    ids = base[sig_p[valid]] + k[valid]
    moved_pm = np.zeros(n_obs, dtype=bool)
    moved_pm[ids] = True
    n_moved = int(np.count_nonzero(moved_pm))
    last_pm = None
    if schedule.lastmod:
        last_pm = np.full(n_obs, np.nan)
        o = np.argsort(ids, kind="stable")  # the signals are in time order: the last of each window is its latest
        ids_s, t_s = ids[o], sig_t[valid][o]
        end = np.flatnonzero(np.concatenate((ids_s[1:] != ids_s[:-1], [True]))) if len(ids_s) else ids_s
        last_pm[ids_s[end]] = t_s[end]
    if len(clocks) == 1:  # one grid for all pages: page-major is an (m, K) matrix, time-major its transpose
        K = len(ct)
        return _Polls(
            times=ct,
            starts=np.arange(0, m * K + 1, m, dtype=np.int64),
            pages=np.tile(np.arange(m, dtype=np.int64), K),
            moved=moved_pm.reshape(m, K).T.ravel(),
            lastmod=None if last_pm is None else last_pm.reshape(m, K).T.ravel(),
            n_moved=n_moved,
            n_hidden=len(ids) - n_moved,
        )
    # time-major: the clocks' polls by (time, clock), each expanded to the clock's pages (ascending)
    members = np.argsort(page_clock, kind="stable")
    msize = np.bincount(page_clock, minlength=len(clocks))
    moff = np.concatenate(([0], np.cumsum(msize)))
    ck = np.arange(len(ct), dtype=np.int64) - coff[cc]
    tm = np.lexsort((cc, ct))
    tm = tm[msize[cc[tm]] > 0]
    cnt = msize[cc[tm]]
    start_of = np.repeat(np.cumsum(cnt) - cnt, cnt)
    ramp = np.arange(int(cnt.sum()), dtype=np.int64) - start_of
    obs_p = members[np.repeat(moff[cc[tm]], cnt) + ramp].astype(np.int64)
    obs_id = base[obs_p] + np.repeat(ck[tm], cnt)
    pt = ct[tm]
    new = np.flatnonzero(np.concatenate(([True], pt[1:] != pt[:-1]))) if len(pt) else np.empty(0, dtype=np.intp)
    first = (np.cumsum(cnt) - cnt)[new]
    return _Polls(
        times=pt[new],
        starts=np.concatenate((first, [len(obs_p)])).astype(np.int64),
        pages=obs_p,
        moved=moved_pm[obs_id],
        lastmod=None if last_pm is None else last_pm[obs_id],
        n_moved=n_moved,
        n_hidden=len(ids) - n_moved,
    )


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    accuracy : float
        Fraction of the requests at times ``>= burn_in * horizon`` that found
        a fresh copy (NaN if there were none).
    accuracy_se : float
        Its standard error by batch means: the evaluation window is cut into
        ``n_blocks`` equal time blocks, ``se = std(block accuracies)/sqrt(n_blocks)``.
    n_requests : int
        Requests in the evaluation window.
    crawl_counts : ndarray of int64 of shape (n_pages,)
        Crawls of each page in the evaluation window.
    empirical_rates : ndarray of shape (n_pages,)
        ``crawl_counts / (horizon - burn_in * horizon)``.
    change_counts, request_counts : ndarray of int64 of shape (n_pages,)
        Changes and requests of each page over the whole horizon.
    n_signals : int
        Signals (true and false, after their delays) that arrived by the
        horizon: delivered to the policy as they arrive without ``polls``;
        with ``polls`` seen only through them (``n_polls_moved +
        n_moves_hidden`` plus those after a page's last poll).
    n_signals_counted : int
        Those the policy reported as counted (``signal`` returned True); with
        ``polls``, the moved polls fed to a policy without ``poll`` as signals
        that it counted.
    crawl_pages, crawl_times : ndarray of shape (n_ticks,)
        Every decision (int64) and its tick time, in order.
    request_times : ndarray of shape (n_all_requests,)
        Time of every request over the whole horizon (grouped by page).
    request_fresh : ndarray of bool of shape (n_all_requests,)
        Whether that request found a fresh copy.
    window : tuple of float
        The evaluation window ``(burn_in * horizon, horizon)``.
    n_polls : int
        Page polls (one page read at one poll time) up to the horizon; 0 without ``polls``.
    n_polls_moved : int
        Those that saw the page's signal moved since its previous poll.
    n_moves_hidden : int
        Signal moves that a poll did not see as such because another move
        fell in the same window (moves seen by polls minus ``n_polls_moved``).
    """

    accuracy: float
    accuracy_se: float
    n_requests: int
    crawl_counts: np.ndarray
    empirical_rates: np.ndarray
    change_counts: np.ndarray
    request_counts: np.ndarray
    n_signals: int
    n_signals_counted: int
    crawl_pages: np.ndarray
    crawl_times: np.ndarray
    request_times: np.ndarray
    request_fresh: np.ndarray
    window: tuple
    n_polls: int = 0
    n_polls_moved: int = 0
    n_moves_hidden: int = 0

    def accuracy_between(self, start: float, end: float, n_blocks: int = 20) -> tuple[float, float]:
        """Accuracy and its batch-means standard error over requests in ``[start, end)``.

        Parameters
        ----------
        start, end : float
            The time window, ``start < end``.
        n_blocks : int, default=20
            Equal time blocks for the standard error (``>= 2``).

        Returns
        -------
        accuracy, se : float
            NaN when the window holds no request (se NaN also when a block is empty).
        """
        caller = "SimulationResult.accuracy_between"
        a = check_scalar(start, "start", caller)
        b = check_scalar(end, "end", caller, low=a, low_inclusive=False)
        nb = check_int(n_blocks, "n_blocks", caller, low=2)
        return _window_accuracy(self.request_times, self.request_fresh, a, b, nb)


def _window_accuracy(times: np.ndarray, fresh: np.ndarray, a: float, b: float, nb: int) -> tuple[float, float]:
    sel = (times >= a) & (times < b)
    n = int(sel.sum())
    if n == 0:
        return math.nan, math.nan
    f = fresh[sel]
    block = np.minimum(((times[sel] - a) * (nb / (b - a))).astype(np.int64), nb - 1)
    req = np.bincount(block, minlength=nb)
    hits = np.bincount(block, weights=f, minlength=nb)
    acc = float(f.mean())
    if (req == 0).any():
        return acc, math.nan
    per = hits / req
    return acc, float(per.std(ddof=1) / math.sqrt(nb))


def _page_major(
    rng: np.random.Generator, rates: np.ndarray, horizon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Poisson processes of the given rates on [0, horizon], grouped by page, sorted within a page.

    Returns ``(keys, pages, times, counts)``: ``keys = page + t/(2 horizon)``
    (one sorted float64 array that orders events by page, then time),
    ``pages`` (intp), ``times`` and the per-page counts.
    """
    counts = rng.poisson(rates * horizon)
    pages = np.repeat(np.arange(len(rates), dtype=np.intp), counts)
    keys = np.sort(pages + 0.5 * rng.random(len(pages)))
    times = (keys - pages) * (2.0 * horizon)
    return keys, pages, times, counts.astype(np.int64)


_REQUIRED = ("bandwidth", "time", "n_pages", "next", "run", "set_bandwidth")


def _check_policy(policy: Any, n_pages: int, caller: str) -> None:
    # a CrawlPolicy, or the same without ``signal`` (such a policy is given no signals)
    if not all(hasattr(policy, a) for a in _REQUIRED):
        members = [a for a in ("bandwidth", "time", "n_pages", "next", "run", "signal", "set_bandwidth")
                   if not hasattr(policy, a)]
        raise TypeError(
            f"The 'policy' parameter of {caller} must be a crawl policy (freshcore.CrawlPolicy); "
            f"{type(policy).__name__} lacks {', '.join(members)}."
        )
    if policy.n_pages != n_pages:
        raise ValueError(f"The 'policy' parameter of {caller} has {policy.n_pages} pages but 'pages' has {n_pages}.")
    if policy.time != 0.0:
        raise ValueError(
            f"The 'policy' parameter of {caller} must be a new policy (time 0). Got time {policy.time!r} instead."
        )


def _delays(signal_delay: Any, rng: np.random.Generator, n: int, caller: str) -> np.ndarray | None:
    if signal_delay is None:
        return None
    if callable(signal_delay):
        d = check_array(signal_delay(rng, n), "signal_delay(rng, n)", caller, low=0.0, allow_empty=True)
        if d.shape != (n,):
            raise ValueError(
                f"The 'signal_delay' parameter of {caller} must return an array of shape ({n},). "
                f"Got shape {d.shape} instead."
            )
        return d
    mean = check_scalar(signal_delay, "signal_delay", caller, low=0.0)
    return rng.exponential(mean, n) if mean > 0 else None


def _events(pages: PageModel, H: float, rng: np.random.Generator, signal_delay: Any, caller: str) -> tuple:
    """The events of one run, all drawn from ``rng`` (the same whatever the policy and the polls).

    Returns ``(kc, tc, change_counts, kr, tr, request_counts, sig_t, sig_p)``: the changes and the requests
    as :func:`_page_major` gives them, and the signals arriving by ``H`` (after their delays) in time
    order (times, pages).
    """
    m = len(pages)
    dl, mu, lam, nu = pages.change_rate, pages.importance, pages.recall, pages.false_rate
    kc, pc, tc, change_counts = _page_major(rng, dl, H)
    kr, _, tr, request_counts = _page_major(rng, mu, H)
    # signals: true ones thin the changes (then delay), false ones are Poisson
    if lam.any():
        true = rng.random(len(pc)) < lam[pc]
        sp, st = pc[true], tc[true]
    else:  # recall 0 everywhere: no true signals, no draws
        sp, st = pc[:0], tc[:0]
    d = _delays(signal_delay, rng, len(st), caller)
    if d is not None:
        st = st + d
    fcount = rng.poisson(nu * H)
    fp = np.repeat(np.arange(m, dtype=np.intp), fcount)
    ft = H * rng.random(len(fp))
    sig_t = np.concatenate([st, ft])
    sig_p = np.concatenate([sp, fp])
    keep = sig_t <= H
    sig_t, sig_p = sig_t[keep], sig_p[keep]
    order = np.argsort(sig_t, kind="stable")
    return kc, tc, change_counts, kr, tr, request_counts, sig_t[order], sig_p[order]


@cites(BUSA_FEKETE_2025)
def simulate(
    policy: CrawlPolicy,
    pages: PageModel,
    horizon: float,
    *,
    rng: Any = None,
    burn_in: float = 0.2,
    signal_delay: float | Callable[[np.random.Generator, int], Any] | None = None,
    bandwidth_schedule: Any = None,
    polls: PollSchedule | float | None = None,
    n_blocks: int = 20,
    progress: bool = False,
) -> SimulationResult:
    """Run a crawl policy against simulated page changes, requests and signals.

    Parameters
    ----------
    policy : CrawlPolicy
        A new policy over the same pages (e.g. :class:`freshcore.schedule.Scheduler`,
        :class:`freshcore.policies.LowDiscrepancy`; see :class:`freshcore.policies.CrawlPolicy`).
    pages : PageModel
        Change rates ``Delta_i``, request rates ``mu_i``, signal recall
        ``lambda_i`` and false-signal rates ``nu_i`` of the world (the policy
        may or may not know them).
    horizon : float
        Simulated time ``T > 0``; ticks run while ``time + 1/bandwidth <= T``.
    rng : None, int or numpy.random.Generator
        Source of the events (a seed or a Generator); the same seed gives the
        same events whatever the policy (so policies can be compared on the
        same events).
    burn_in : float in [0, 1), default=0.2
        Requests before ``burn_in * T`` are not counted.
    signal_delay : None, float >= 0 or callable, default=None
        Delay between a change and its (true) signal: None or 0 for none, a
        float for exponential delays of that mean, or ``f(rng, n)`` returning
        ``n`` delays ``>= 0``.  False signals are Poisson whatever the delay.
    bandwidth_schedule : (times, rates), optional
        Bandwidth changes (Appendix D of Busa-Fekete et al. (2025)): at each
        ``times[k]`` (increasing, in ``[0, T]``) the policy's
        ``set_bandwidth(rates[k])`` is called before the first tick after
        ``times[k]``, which is then at the last tick at or before ``times[k]``
        plus ``1/rates[k]``.
    polls : PollSchedule or float > 0, optional
        Polled signal sources: the policy learns of the signals only by
        polling them (a float ``w`` is ``PollSchedule(w)``, every page on the
        shared grid ``w, 2w, ...``).  None (the default): each signal is
        delivered when it arrives.  See Notes.
    n_blocks : int, default=20
        Number of time blocks for the batch-means standard error (``>= 2``).
    progress : bool, default=False
        Show a progress bar of the simulated time on standard error (tqdm); the result is the same.

    Returns
    -------
    SimulationResult

    Raises
    ------
    TypeError
        If ``policy`` is not a :class:`~freshcore.policies.CrawlPolicy` or ``pages`` is not a PageModel.
    ValueError
        For a used policy, mismatched page counts, ``horizon <= 0``,
        ``burn_in`` outside ``[0, 1)``, negative delays, a bad bandwidth schedule,
        ``polls`` that do not fit the pages (see :class:`PollSchedule`).

    Notes
    -----
    Events (vectorised, drawn from ``rng``): per page, Poisson
    changes of rate ``Delta_i`` and requests of rate ``mu_i`` on ``[0, T]``;
    each change is signalled with probability ``lambda_i`` (after its delay);
    false signals are Poisson of rate ``nu_i``.  Signals arriving after ``T``
    are dropped.  The loop delivers, before each tick, the signals that
    arrived up to it in time order (through ``signal``, at
    ``max(arrival, time of the last tick)``), and asks the policy for the
    tick's page (signals arriving exactly at a tick come before it); runs of
    ticks without a signal or rate change go through one ``run(k)`` call.  Every page counts as crawled at time 0.
    The ``j``-th tick after the last bandwidth change at ``t_0`` is taken
    to be at ``t_0 + j/R`` (:class:`~freshcore.policies.CrawlPolicy`'s
    clock), so that a signal or poll at exactly a tick time is delivered
    before that tick.  A policy without ``signal``/``signal_many`` is given
    no signals.

    With ``polls`` the signals are not delivered as they arrive: at each
    poll time ``t`` the simulator computes, for each page polled then,
    ``moved`` -- whether any of its signals (true or false, after its delay)
    arrived in ``(previous poll of the page, t]`` (since time 0 for its first
    poll) -- and the time of the latest one, and delivers, in time order
    with the ticks (a poll at exactly a tick time before it):

    - to a policy with ``poll``: every poll, ``poll(pages, t, moved)`` (one
      call per distinct poll time; ``pages`` int64, the pages polled at
      ``t``, each once; ``moved`` bool of the same length; pages that did not
      move included), with ``lastmod=`` the latest move times when the
      schedule's ``lastmod`` is True;
    - to a policy without ``poll`` but with ``signal_many`` or ``signal``:
      one signal at the poll time for each moved page (the value of
      Busa-Fekete et al. (2025) "fed the polls"), through one
      ``signal_many`` call per tick with a poll;
    - to a policy with neither: nothing.

    Poll times are passed as ``max(poll time, time of the last tick)``; polls
    after the last tick (at times up to the horizon) are delivered after it.
    Every policy is judged on the same events: the changes, requests and
    signals are drawn as without ``polls``, and a ``"random"`` phase after
    them.

    A request of page ``i`` at time ``q`` is fresh iff no change of page
    ``i`` falls in ``(c, q]``, ``c`` its last crawl at or before ``q``
    (SPEC section 4: "accuracy = fraction of requests that find a fresh
    copy"); computed after the loop with ``searchsorted`` over keys
    ``page + t/(2T)``, which orders events of a page by time up to the float
    resolution of the key (about ``4 T m 2**-53``: events of one page closer
    than ~1e-8 time units at ``T m = 10**7`` count as simultaneous, changes
    then counting as seen by the crawl).  For periodic crawling at rate
    ``xi`` the expected accuracy is ``sum_i mu_i F_i / sum_i mu_i`` with
    ``F_i = (xi_i/Delta_i)(1 - exp(-Delta_i/xi_i))`` (eq. (5) of
    Busa-Fekete et al. (2025); :func:`freshcore.rates.freshness`).

    Examples
    --------
    >>> from freshcore.pages import PageModel
    >>> from freshcore.policies import RoundRobin
    >>> from freshcore.policy_simulation import simulate
    >>> from freshcore.rates import freshness
    >>> pages = PageModel([0.5, 1.0, 2.0, 0.2], [1.0, 1.0, 1.0, 1.0])
    >>> res = simulate(RoundRobin(4, bandwidth=4.0), pages, 2000.0, rng=1)
    >>> len(res.crawl_pages), float(res.crawl_times[-1]), res.empirical_rates.round(2).tolist()
    (8000, 2000.0, [1.0, 1.0, 1.0, 1.0])
    >>> expected = freshness([1.0] * 4, pages.change_rate, pages.importance, model="periodic")
    >>> bool(abs(res.accuracy - expected) < 4 * res.accuracy_se)
    True
    """
    caller = "simulate"
    check_pages(pages, caller)
    m = len(pages)
    _check_policy(policy, m, caller)
    H = check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
    burn = check_scalar(burn_in, "burn_in", caller, low=0.0, high=1.0, high_inclusive=False)
    nb = check_int(n_blocks, "n_blocks", caller, low=2)
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"The 'progress' parameter of {caller} must be True or False. Got {progress!r}.")
    if bandwidth_schedule is None:
        rs_t, rs_r = np.empty(0), np.empty(0)
    else:
        try:
            times_in, rates_in = bandwidth_schedule
        except (TypeError, ValueError):
            raise TypeError(
                f"The 'bandwidth_schedule' parameter of {caller} must be a pair (times, rates). "
                f"Got {bandwidth_schedule!r}."
            ) from None
        rs_t = check_array(times_in, "bandwidth_schedule times", caller, low=0.0, high=H)
        rs_r = check_array(rates_in, "bandwidth_schedule rates", caller, low=0.0, low_inclusive=False)
        check_same_length(caller, bandwidth_schedule_times=rs_t, bandwidth_schedule_rates=rs_r)
        bad = np.flatnonzero(np.diff(rs_t) <= 0)
        if bad.size:
            i = int(bad[0]) + 1
            raise ValueError(
                f"The 'bandwidth_schedule times' parameter of {caller} must be strictly increasing; "
                f"times[{i}] = {rs_t[i]!r} <= times[{i - 1}] = {rs_t[i - 1]!r}."
            )
    if polls is not None:
        if not isinstance(polls, PollSchedule):
            if isinstance(polls, (bool, np.bool_)) or not isinstance(polls, numbers.Real):
                raise TypeError(f"The 'polls' parameter of {caller} must be a PollSchedule or a poll interval > 0. "
                                f"Got {type(polls).__name__}.")
            polls = PollSchedule(check_scalar(polls, "polls", caller, low=0.0, low_inclusive=False))
        polls._check_fit(m, H, caller)
    rng = check_rng(rng, caller)

    kc, _, change_counts, kr, tr, request_counts, sig_t, sig_p = _events(pages, H, rng, signal_delay, caller)

    poll_q = None
    if polls is not None:
        poll_q = _poll_observations(polls, m, H, sig_t, sig_p, rng)
    poll_fn = getattr(policy, "poll", None)
    has_signal = callable(getattr(policy, "signal", None)) or callable(getattr(policy, "signal_many", None))
    feed: Any
    if poll_q is None:
        feed = _SignalFeed(policy, sig_t, sig_p) if has_signal else _NoFeed()
    elif callable(poll_fn):
        feed = _PollFeed(policy, poll_q)
    elif has_signal:
        cnt = np.diff(poll_q.starts)
        fed_t = np.repeat(poll_q.times, cnt)[poll_q.moved]
        feed = _SignalFeed(policy, fed_t, poll_q.pages[poll_q.moved])
    else:
        feed = _NoFeed()

    bar = None
    if progress:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=H, desc="simulate", unit=" time", file=sys.stderr, leave=False,
                   bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} [{elapsed}<{remaining}]")
    try:
        crawls_p, crawls_t, counted = _run_loop(policy, H, feed, rs_t, rs_r, kc, m, bar)
    finally:
        if bar is not None:
            bar.close()

    # freshness of every request: last crawl key at or before the request, changes in between
    ck = np.sort(np.concatenate([np.arange(m, dtype=np.float64), crawls_p + crawls_t / (2.0 * H)]))
    seen = np.searchsorted(kc, ck, side="right")  # changes up to each crawl (few queries)
    last = np.searchsorted(ck, kr, side="right") - 1
    fresh = np.searchsorted(kc, kr, side="right") == seen[last]

    t0 = burn * H
    acc, se = _window_accuracy(tr, fresh, t0, H + 1e-12 * H, nb) if len(tr) else (math.nan, math.nan)
    in_win = crawls_t >= t0
    counts = np.bincount(crawls_p[in_win], minlength=m).astype(np.int64)
    n_req = int(np.count_nonzero(tr >= t0))
    return SimulationResult(
        accuracy=acc,
        accuracy_se=se,
        n_requests=n_req,
        crawl_counts=counts,
        empirical_rates=counts / (H - t0),
        change_counts=change_counts,
        request_counts=request_counts,
        n_signals=len(sig_t),
        n_signals_counted=counted,
        crawl_pages=crawls_p,
        crawl_times=crawls_t,
        request_times=tr,
        request_fresh=fresh,
        window=(t0, H),
        n_polls=0 if poll_q is None else len(poll_q.pages),
        n_polls_moved=0 if poll_q is None else poll_q.n_moved,
        n_moves_hidden=0 if poll_q is None else poll_q.n_hidden,
    )


class _NoFeed:
    """Nothing to deliver (a policy without ``signal``/``signal_many`` or ``poll``)."""

    next_time = math.inf

    def deliver(self, t_next: float, t_now: float) -> int:  # pragma: no cover - never due
        return 0


class _SignalFeed:
    """Signals (or moved polls fed as signals) in time order, through ``signal_many`` or ``signal``."""

    def __init__(self, policy: Any, times: np.ndarray, pages: np.ndarray) -> None:
        many = getattr(policy, "signal_many", None)
        self._many = many if callable(many) else None
        self._one = getattr(policy, "signal", None)
        self._t, self._p = times, pages
        self._i = 0
        self.next_time = float(times[0]) if len(times) else math.inf

    def deliver(self, t_next: float, t_now: float) -> int:
        """The signals up to ``t_next`` (at ``max(arrival, t_now)``); how many the policy counted."""
        i = self._i
        j = int(np.searchsorted(self._t, t_next, side="right"))
        ts = np.maximum(self._t[i:j], t_now)
        ps = self._p[i:j]
        counted = 0
        if self._many is not None:
            res = np.asarray(self._many(ps, ts))
            counted = int(res) if res.ndim == 0 else int(np.count_nonzero(res))
        elif self._one is not None:
            for p, t in zip(ps.tolist(), ts.tolist()):
                counted += bool(self._one(p, t))
        self._i = j
        self.next_time = float(self._t[j]) if j < len(self._t) else math.inf
        return counted


class _PollFeed:
    """Poll batches in time order, one ``poll(pages, t, moved)`` call per poll time."""

    def __init__(self, policy: Any, polls: _Polls) -> None:
        self._poll = policy.poll
        self._q = polls
        self._b = 0
        self.next_time = float(polls.times[0]) if len(polls.times) else math.inf

    def deliver(self, t_next: float, t_now: float) -> int:
        """The poll batches up to ``t_next`` (each at ``max(poll time, t_now)``)."""
        q, b = self._q, self._b
        n = len(q.times)
        while b < n and q.times[b] <= t_next:
            s, e = int(q.starts[b]), int(q.starts[b + 1])
            t = max(float(q.times[b]), t_now)
            if q.lastmod is None:
                self._poll(q.pages[s:e], t, q.moved[s:e])
            else:
                self._poll(q.pages[s:e], t, q.moved[s:e], lastmod=q.lastmod[s:e])
            b += 1
        self._b = b
        self.next_time = float(q.times[b]) if b < n else math.inf
        return 0


def _last_tick(origin: float, r: float, t: float, strict: bool) -> int:
    """The largest ``j >= 0`` with ``origin + j/r <= t`` (``< t`` when ``strict``; 0 if none), in the
    floating point of the tick clock ``origin + j/r``."""
    if t == math.inf:
        return 1 << 62
    j = max(0, math.floor((t - origin) * r))
    if strict:
        while j > 0 and origin + j / r >= t:
            j -= 1
        while origin + (j + 1) / r < t:
            j += 1
    else:
        while j > 0 and origin + j / r > t:
            j -= 1
        while origin + (j + 1) / r <= t:
            j += 1
    return j


def _run_loop(
    policy: CrawlPolicy, H: float, feed: Any, rs_t: np.ndarray, rs_r: np.ndarray, kc: np.ndarray, m: int,
    bar: Any = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Deliver signals or polls (``feed``) and bandwidth changes, collect the decisions (pages, times) and
    the counted signals (``bar``: a tqdm bar over the simulated time, or None).

    The ``j``-th tick after the last bandwidth change (at ``origin``) is at ``origin + j/r``, the clock of
    :class:`~freshcore.policies.CrawlPolicy`, so an event at exactly a tick time is delivered before it."""
    observe = getattr(policy, "observe", None)
    observe = observe if callable(observe) else None
    ticks = getattr(policy, "tick_times", None)
    ticks = ticks if callable(ticks) else None
    n_rs = len(rs_t)
    last = np.zeros(m)
    scale = 1.0 / (2.0 * H)
    out_p: list = []
    out_t: list = []
    ri = 0
    counted = 0
    origin, j = float(policy.time), 0
    r = policy.bandwidth
    while True:
        t_now = policy.time
        if bar is not None:
            bar.update(min(t_now, H) - bar.n)
        t_next = origin + (j + 1) / r if ticks is None else float(ticks(1)[0])
        while ri < n_rs and rs_t[ri] < t_next:
            policy.set_bandwidth(float(rs_r[ri]))
            ri += 1
            r, origin, j = policy.bandwidth, float(policy.time), 0
            t_next = origin + 1.0 / r if ticks is None else float(ticks(1)[0])
        if t_next > H:
            break
        if feed.next_time <= t_next:
            counted += feed.deliver(t_next, t_now)
        if observe is not None:
            page = int(policy.next())
            j += 1
            t = policy.time
            lo = np.searchsorted(kc, page + last[page] * scale, side="right")
            hi = np.searchsorted(kc, page + t * scale, side="right")
            observe(page, bool(hi > lo))
            last[page] = t
            out_p.append(np.array([page], dtype=np.int64))
            out_t.append(np.array([t]))
            continue
        # ticks up to the horizon and the next rate change, strictly before the next signal or poll
        limit = min(H, float(rs_t[ri]) if ri < n_rs else H)
        if ticks is not None:
            k, ts = _ticks_before(ticks, t_now, r, limit, feed.next_time)
            out_p.append(np.asarray(policy.run(k), dtype=np.int64))
            out_t.append(ts)
            continue
        k = max(1, min(_last_tick(origin, r, limit, False), _last_tick(origin, r, feed.next_time, True)) - j)
        ps = np.asarray(policy.run(k), dtype=np.int64)
        ts = origin + np.arange(j + 1, j + k + 1) / r
        ts[-1] = policy.time
        j += k
        out_p.append(ps)
        out_t.append(ts)
    if isinstance(feed, _PollFeed) and feed.next_time <= H:  # every page polled at all its times
        feed.deliver(H, policy.time)
    if out_p:
        return np.concatenate(out_p), np.concatenate(out_t), counted
    return np.empty(0, dtype=np.int64), np.empty(0), counted


def _ticks_before(
    ticks: Callable[[int], Any], t_now: float, r: float, limit: float, t_sig: float
) -> tuple[int, np.ndarray]:
    """The decisions of a ``tick_times`` policy timed at or before ``limit`` and before ``t_sig`` (at least one).

    Returns their number and times; asks for ``tick_times`` of a first guess
    (``1/r`` spacing) and doubles it until a time falls beyond the bounds.
    """
    want = max(1, math.floor((limit - t_now) * r) + 1)
    while True:
        ts = np.asarray(ticks(want), dtype=np.float64)
        k = min(int(np.searchsorted(ts, limit, side="right")), int(np.searchsorted(ts, t_sig, side="left")))
        if k < want:
            k = max(1, k)
            return k, ts[:k].copy()
        want *= 2
