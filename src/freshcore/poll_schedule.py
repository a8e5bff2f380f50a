"""When a crawler polls each page's signal source (a sitemap or feed), and what each poll sees.

A :class:`PollSchedule` says when the pages' signal sources are read (per page or per group, regularly or at
explicit times): :func:`freshcore.policy_simulation.simulate` takes it as ``polls`` and a policy sees, at each
poll, only whether the page's signal moved since the previous poll and, where the source gives it, when it last
moved (SPEC section 3b).  ``_poll_observations`` turns the simulated signals into those observations.  The
posterior a scheduler keeps from them is :mod:`freshcore.polled_signals`; reading real sitemaps is
:mod:`freshcore.sitemaps`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from freshcore._validation import check_array

__all__ = ["PollSchedule"]


class PollSchedule:
    """When the crawler reads each page's signal source (a sitemap or feed), for ``simulate(polls=...)``.

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
        uniformly on ``[0, poll_interval)`` from :func:`~freshcore.policy_simulation.simulate`'s ``rng``
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
        ``poll_times``.  :func:`~freshcore.policy_simulation.simulate` checks the lengths against its
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
        """The number of groups, or None when it is the number of pages (given by ``simulate``)."""
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
