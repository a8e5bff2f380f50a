"""Discrete crawl scheduling at a constant rate (001 Algorithm 1, SPEC section 4).

:class:`Scheduler` crawls, at each tick of a crawl rate ``R``, the page with
the highest crawl value ``V_i(tau_eff,i)`` (:func:`freshcore.value.crawl_value`),
exactly as a brute-force argmax over all pages would (ties to the lowest page
index), without evaluating every page at every tick.  The compiled state
(``freshcore._schedule``) documents the invariant that makes this exact.

Pages have stable integer ids and can be added, removed and re-parameterised
(e.g. with fresh change-rate estimates) between ticks without a rebuild.
The full state survives :meth:`Scheduler.save`/:meth:`Scheduler.load`,
``pickle``, ``copy`` and :meth:`Scheduler.to_dict`/:meth:`Scheduler.from_dict`:
the continued decision sequence is identical to an uninterrupted run (SPEC
section 4, "its state can be saved and restored").
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from freshcore import _schedule, _statefile
from freshcore._statefile import item as _item
from freshcore._validation import check_array, check_choice, check_indices, check_int, check_same_length, check_scalar
from freshcore.pages import PageModel, check_pages

__all__ = ["Scheduler", "FORMAT_VERSION"]

_KINDS = ("exact", "approx", "greedy", "cis")

#: Version of the :meth:`Scheduler.save` file format; :meth:`Scheduler.load` rejects any other.
FORMAT_VERSION = 4
_MAGIC = "freshcore.Scheduler"
_MAX_SLOTS = 2**31 - 3  # page ids handed out over a scheduler's life (32-bit heap indices)
_PAGE_KEYS = ("change_rate", "importance", "recall", "false_rate")
_FLOAT_KEYS = ("last", "key")
_FLOAT_SCALARS = ("origin", "rate", "time", "signal_delay", "last_best", "park_level", "park_margin")
_INT_SCALARS = ("k", "nticks", "n_evaluations", "n_unparks", "park_fall")


def _check_last_crawl(last_crawl: Any, m: int, caller: str) -> np.ndarray:
    """Initial last-crawl times of m pages (finite, <= 0), a float64 copy; a ValueError naming ``caller`` otherwise."""
    last = check_array(last_crawl, "last_crawl", caller, high=0.0, copy=True)
    if len(last) != m:
        raise ValueError(
            f"The 'last_crawl' parameter of {caller} must have one entry per page ({m}). Got shape {last.shape} instead."
        )
    return last


class Scheduler(_statefile.DictState):
    """Greedy crawl scheduler: crawl ``argmax_i V_i(tau_eff,i(t_j))`` at every tick.

    Parameters
    ----------
    pages : PageModel
        The initial pages, with ids ``0 .. len(pages) - 1``.  Pages are
        added, removed and re-parameterised with :meth:`add_pages`,
        :meth:`remove_pages` and :meth:`update_pages`.
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
    id of a removed page is never reused.  Decisions, :meth:`signal` and the
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

    Examples
    --------
    >>> from freshcore.pages import PageModel
    >>> from freshcore.schedule import Scheduler
    >>> pages = PageModel([1.0, 0.5, 0.25], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.1)
    >>> s = Scheduler(pages, rate=1.0, value="exact")
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

    def __init__(
        self,
        pages: PageModel,
        rate: float,
        value: str = "exact",
        signal_delay: float = 0.0,
        terms: int | None = None,
        *,
        last_crawl: Any = None,
    ) -> None:
        caller = "Scheduler"
        check_pages(pages, caller)
        r = check_scalar(rate, "rate", caller, low=0.0, low_inclusive=False)
        if len(pages) > _MAX_SLOTS:
            raise ValueError(f"The 'pages' parameter of {caller} must hold at most {_MAX_SLOTS} pages. Got {len(pages)}.")
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
        last = None if last_crawl is None else _check_last_crawl(last_crawl, len(pages), caller)
        arrays = _page_arrays(pages, value)
        self._pages: PageModel | None = pages
        self._value = value
        self._terms = terms
        self._delay = delay
        self._state = _schedule.SchedulerState(*arrays, _KINDS.index(value), j, r, delay, last)

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
        j = check_int(page, "page", caller, low=0)
        if j >= self._state.n_slots or not self._state.alive_of(j):
            raise ValueError(f"The 'page' parameter of {caller} must be a live page id. Got {j!r} ({self._why(j)}).")
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
        if self._state.n_slots + n > _MAX_SLOTS:
            raise ValueError(
                f"The 'pages' parameter of {caller} would take the page ids handed out past {_MAX_SLOTS} "
                f"({self._state.n_slots} so far, {n} more)."
            )
        if last_crawl is None:
            last = np.full(n, self.time)
        else:
            last = check_array(last_crawl, "last_crawl", caller, ndim=(0, 1), high=self.time)
            if np.ndim(last_crawl) == 0:
                last = np.full(n, float(last.reshape(-1)[0]))
            elif len(last) != n:
                raise ValueError(
                    f"The 'last_crawl' parameter of {caller} must have one entry per page ({n}). "
                    f"Got shape {last.shape} instead."
                )
        first = self._state.add(*_page_arrays(pages, self._value), np.ascontiguousarray(last, dtype=np.float64))
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
        self._state.update(p, *_page_arrays(pages, self._value))
        self._pages = None
        return self

    def _why(self, j: int) -> str:
        return "removed" if j < self._state.n_slots else f"ids so far are 0 .. {self._state.n_slots - 1}"

    def _check_ids(self, ids: Any, name: str, caller: str, distinct: bool = False) -> np.ndarray:
        """Live page ids as an intp array; ValueError naming the first unknown, removed or repeated one."""
        p = check_indices(ids, name, caller, self._state.n_slots)
        dead = ~self._state.alive_of(p)
        if dead.any():
            i = int(np.flatnonzero(dead)[0])
            raise ValueError(
                f"The {name!r} parameter of {caller} must contain live page ids; {name}[{i}] = {int(p[i])} (removed)."
            )
        if distinct and len(p) > 1:
            order = np.argsort(p, kind="stable")
            rep = np.flatnonzero(p[order][1:] == p[order][:-1])
            if len(rep):
                i = int(order[1:][rep].min())
                raise ValueError(
                    f"The {name!r} parameter of {caller} must contain distinct page ids; {name}[{i}] = {int(p[i])} "
                    f"is repeated."
                )
        return p

    def _need_pages(self, caller: str) -> None:
        if self._state.n_pages == 0:
            raise ValueError(f"{caller}: no page to crawl (every page was removed).")

    # -- state: dict, pickle, copy, file -----------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The full state as a dict of numpy arrays and Python scalars (copies).

        Holds the parameters of every page id handed out (``alive`` flags
        the live ones), the value kind, ``terms``, the signal
        delay and the compiled state (rate, origin and tick count of the
        current rate, time, last crawls, signal counts, and each page's
        bound: its key and slope bucket, from which the heaps are rebuilt).
        :meth:`from_dict` restores it exactly: the continued decisions (and
        even the value evaluations) are those of an uninterrupted run.
        """
        d: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "value": self._value,
            "terms": self._terms,
        }
        d.update(self._state.export_state())
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scheduler:
        """Rebuild a scheduler from :meth:`to_dict` output.

        Raises
        ------
        ValueError
            If an entry is missing, of the wrong shape or inconsistent (an
            index out of range, a page both hot and cold, a broken heap, ...).
        TypeError
            If ``d`` is not a mapping.
        """
        caller = "Scheduler.from_dict"
        if not hasattr(d, "keys"):
            raise TypeError(f"The 'd' parameter of {caller} must be a dict. Got {type(d).__name__} instead.")
        need = ("format_version", "value", "terms", *_PAGE_KEYS, "alive", *_FLOAT_KEYS, "ncis", "bucket",
                *_FLOAT_SCALARS, *_INT_SCALARS, "built")
        missing = [k for k in need if k not in d]
        if missing:
            raise ValueError(f"The 'd' parameter of {caller} lacks the entries {missing}.")
        version = _item(d["format_version"])
        if version != FORMAT_VERSION:
            raise ValueError(
                f"The 'd' parameter of {caller} is of format version {version!r}; this freshcore reads "
                f"version {FORMAT_VERSION}."
            )
        value = _item(d["value"])
        terms = _item(d["terms"])
        pages = PageModel(*(d[k] for k in _PAGE_KEYS))
        self = cls(pages, _item(d["rate"]), value=value, signal_delay=_item(d["signal_delay"]), terms=terms)
        state = _check_state(d, len(pages), caller)
        self._state.import_state(state)
        self._pages = None
        return self

    def save(self, path: str | os.PathLike) -> None:
        """Write the full state to ``path`` atomically.

        The file is an ``.npz`` archive (read with ``allow_pickle=False``)
        holding :meth:`to_dict`, a magic string, :data:`FORMAT_VERSION` and
        the SHA-256 of the payload.  It is written to a temporary file in the
        same directory, flushed to disk (``fsync``) and renamed over ``path``
        (``os.replace``), so a crash or an error mid-save leaves any previous
        file at ``path`` intact and never a partial one.

        Parameters
        ----------
        path : str or path-like
            Destination (no suffix is added).
        """
        _statefile.write(path, _to_arrays(self.to_dict()), _MAGIC)

    @classmethod
    def load(cls, path: str | os.PathLike) -> Scheduler:
        """Read a scheduler written by :meth:`save`.

        Raises
        ------
        ValueError
            If the file is truncated or corrupted (unreadable archive, or a
            payload whose SHA-256 does not match), is not a scheduler file
            (wrong magic string) or is of another format version.
        FileNotFoundError
            If ``path`` does not exist.
        """
        return cls.from_dict(_from_arrays(_statefile.read(path, _MAGIC, FORMAT_VERSION, "scheduler")))

    def __repr__(self) -> str:
        return f"Scheduler(n_pages={self.n_pages}, rate={self.rate!r}, value={self._value!r}, time={self.time!r})"


def _page_arrays(pages: PageModel, value: str) -> list[np.ndarray]:
    """The per-page arrays of the compiled state: Delta, mu, nu and lambda.

    (``alpha``, ``gamma``, ``beta`` and the signal term of ``tau`` for
    ``value`` are recomputed by the compiled state with PageModel's
    operations; ``beta`` by the same compiled function.)
    """
    return [np.ascontiguousarray(a, dtype=np.float64) for a in (
        pages.change_rate, pages.importance, pages.false_rate, pages.recall)]


def _to_arrays(d: dict[str, Any]) -> dict[str, np.ndarray]:
    out = dict(d)
    if out["terms"] is None:
        out["terms"] = -1
    return {k: np.asarray(v) for k, v in out.items()}


def _from_arrays(data: dict[str, np.ndarray]) -> dict[str, Any]:
    """Undo :func:`_to_arrays` (``terms`` -1 is None) on the entries of a file."""
    if "terms" in data and _item(data["terms"]) == -1:
        data["terms"] = None
    return data


def _check_state(d: dict[str, Any], m: int, caller: str) -> dict[str, Any]:
    """Validate the compiled-state entries of a :meth:`Scheduler.to_dict` dict (so import cannot go out of bounds)."""

    def bad(key: str, why: str) -> ValueError:
        return ValueError(f"The {key!r} entry of the dict given to {caller} {why}.")

    out: dict[str, Any] = {}
    for key in _FLOAT_KEYS:
        a = np.ascontiguousarray(d[key], dtype=np.float64)
        if a.shape != (m,):
            raise bad(key, f"must have shape ({m},), got {a.shape}")
        out[key] = a
    if not np.isfinite(out["last"]).all():
        raise bad("last", "must be finite")
    if np.isnan(out["key"]).any():
        raise bad("key", "must not hold NaN")
    for key, high in (("ncis", _schedule.MAX_SIGNALS), ("bucket", _schedule.NOT_PLACED_CODE)):
        a = np.asarray(d[key])
        if a.shape != (m,) or (a.size and a.dtype.kind not in "iu"):
            raise bad(key, f"must be an integer array of shape ({m},)")
        a = a.astype(np.int64)
        if a.size and (a.min() < 0 or a.max() > high):
            raise bad(key, f"must hold integers in [0, {high}]")
        out[key] = a
    alive = np.asarray(d["alive"])
    if alive.shape != (m,) or alive.dtype.kind not in "biu" or not np.isin(alive, (0, 1)).all():
        raise bad("alive", f"must hold {m} flags")
    out["alive"] = alive.astype(bool)
    for key in _FLOAT_SCALARS:
        v = _item(d[key])
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not np.isfinite(v):
            raise bad(key, f"must be a finite number, got {v!r}")
        out[key] = float(v)
    if out["rate"] <= 0 or out["signal_delay"] < 0 or out["last_best"] < 0:
        raise bad("rate", "'signal_delay' and 'last_best' must be in range")
    if out["park_level"] < 0:
        raise bad("park_level", f"must be >= 0, got {out['park_level']!r}")
    if not 0 < out["park_margin"] < 1:
        raise bad("park_margin", f"must be in (0, 1), got {out['park_margin']!r}")
    for key in _INT_SCALARS:
        v = _item(d[key])
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise bad(key, f"must be an integer >= 0, got {v!r}")
        out[key] = v
    built = _item(d["built"])
    if not isinstance(built, bool):
        raise bad("built", f"must be a bool, got {built!r}")
    out["built"] = built
    n_buckets = _schedule.N_BUCKETS
    wrong = (out["bucket"] >= n_buckets) & (out["bucket"] != _schedule.NOT_PLACED_CODE)
    if wrong.any():
        raise bad("bucket", f"must hold slope buckets below {n_buckets} or {_schedule.NOT_PLACED_CODE} (page "
                  f"{int(np.flatnonzero(wrong)[0])})")
    parked = np.isin(out["bucket"], (_schedule.PARK_CODE, _schedule.FAR_CODE))
    if parked.any() and _item(d["value"]) != "greedy":
        raise bad("bucket", f"must park only Greedy pages (page {int(np.flatnonzero(parked)[0])})")
    placed = out["bucket"] != _schedule.NOT_PLACED_CODE
    if built and (placed != out["alive"]).any():
        j = int(np.flatnonzero(placed != out["alive"])[0])
        raise bad("bucket", f"must place every live page and no removed one (page {j})")
    if not built and placed.any():
        raise bad("bucket", "must place no page before the first tick")
    return out
