"""Batched change-rate estimators: the state of the online estimators of Avrachenkov, Patil and Thoppe (2022)
over many pages, one call updating any subset of them.

:class:`NaiveBatch`, :class:`LLNBatch`, :class:`SABatch` and :class:`SAMBatch` are the batched twins of the
streaming estimators of :mod:`freshcore.estimation` (bit-identical to a loop of their updates), whose module
docstring gives the update rules; :func:`freshcore.estimation.estimate_rates` runs them over a whole log.  The
kernels live in ``freshcore._estimation``; full batch updates of many pages run on several threads
(``freshcore._parallel``, bit-identical results).

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import numpy as np

from . import _estimation as _est
from ._papers import AVRACHENKOV_2022, cites
from ._parallel import parallel_chunks
from ._validation import (
    check_array,
    check_batch_pages,
    check_binary,
    check_int,
    check_positive_per_item,
    check_same_length,
    check_scalar,
    read_only_view,
)

__all__ = ["LLNBatch", "NaiveBatch", "SABatch", "SAMBatch"]

# The first parameters of every batch of estimators.
_BATCH_PARAMETERS = """
    Parameters
    ----------
    n_pages : int
        Number of pages (≥ 1).
    crawl_rate : float or array-like of shape (n_pages,), optional
        Default crawl rate(s) p > 0."""


def _as_flags(changed: Any, name: str, caller: str, allow_empty: bool) -> np.ndarray:
    """0/1 flags as uint8; a contiguous 1-D bool array is viewed, not copied."""
    if (
        isinstance(changed, np.ndarray)
        and changed.dtype == np.bool_
        and changed.ndim == 1
        and changed.size > 0
        and changed.flags.c_contiguous
    ):
        return changed.view(np.uint8)
    return check_binary(changed, name, caller, ndim=1, allow_empty=allow_empty)


# count_shared_update converts counts exactly below 2^52 (see _estimation._u52_to_double)
_K_SHARED_MAX = 2**52 - 2


_B = TypeVar("_B", bound="_Batch")


class _Batch:
    """Shared plumbing of the batched estimators (validation, bookkeeping, save/restore)."""

    _state_names: tuple[str, ...] = ()
    _rates: np.ndarray
    _int_state: frozenset[str] = frozenset()  # state arrays of dtype int64 (the others are float64)

    def __init__(self, n_pages: int, crawl_rate: Any = None) -> None:
        caller = type(self).__name__
        self._n = check_int(n_pages, "n_pages", caller, low=1)
        if crawl_rate is None:
            self._p_default: np.ndarray | None = None
        elif np.ndim(crawl_rate) == 0:
            self._p_default = np.array([check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False)])
        else:
            self._p_default = check_array(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False, copy=True)
            if self._p_default.shape[0] != self._n:
                raise ValueError(
                    f"The 'crawl_rate' parameter of {caller} must be a scalar or have length n_pages={self._n}. "
                    f"Got length {self._p_default.shape[0]} instead."
                )
        # Where k is kept (see freshcore._estimation, layer 2).  Shared k: while
        # every update covered all pages, every page has k = self._k_shared and
        # no k array is kept (self._k_arr is None).  The first update of some
        # pages leaves it for good (from_dict may return to it): page i then has
        # k = self._k_base + self._k_arr[i], a full update adds 1 to the base
        # only, and self._k_blk[b] >= 0 records that the pages of block b
        # (_est.BLOCK pages) share their self._k_arr entry.
        self._k_shared: int | None = 0
        self._k_arr: np.ndarray | None = None
        self._k_blk: np.ndarray | None = None
        self._k_base = 0
        self._elapsed = np.zeros(self._n)

    def _per_page_k(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(koff, blk, base) of the per-page k, leaving the shared-k regime if the batch is in it."""
        if self._k_shared is not None:
            self._k_arr = np.zeros(self._n, dtype=np.int64)
            self._k_blk = np.zeros(-(-self._n // _est.BLOCK), dtype=np.int64)
            self._k_base, self._k_shared = self._k_shared, None
        return cast(np.ndarray, self._k_arr), cast(np.ndarray, self._k_blk), self._k_base

    def _set_k(self, k: np.ndarray) -> None:
        """Per-page k = ``k`` (int64, >= 0); used by ``from_dict``."""
        self._k_arr, self._k_base, self._k_shared = k, 0, None
        self._k_blk = np.full(-(-self._n // _est.BLOCK), -1, dtype=np.int64)

    def _k_of(self, idx: np.ndarray | None = None) -> np.ndarray:
        """A new array of the k of pages ``idx`` (all pages when None)."""
        m = self._n if idx is None else idx.shape[0]
        if self._k_shared is not None:
            return np.full(m, self._k_shared, dtype=np.int64)
        koff = cast(np.ndarray, self._k_arr)
        return (koff if idx is None else koff[idx]) + self._k_base

    def _share_k_if_equal(self) -> None:
        """Return to the shared-k regime when every page has the same k (used by ``from_dict``)."""
        k = self._k_of()
        if (k == k[0]).all() and k[0] < _K_SHARED_MAX:
            self._k_shared, self._k_arr, self._k_blk, self._k_base = int(k[0]), None, None, 0

    def _full_update_done(self) -> None:
        """Count the full update just applied by a per-page kernel (which left the k offsets alone)."""
        self._k_base += 1

    # -- public read-only views -------------------------------------------------
    @property
    def n_pages(self) -> int:
        """Number of pages."""
        return self._n

    @property
    def n_updates(self) -> np.ndarray:
        """Observations consumed per page, shape (n_pages,) (read-only)."""
        return read_only_view(self._k_of())

    @property
    def elapsed(self) -> np.ndarray:
        """Sum of the intervals passed to ``update`` per page, shape (n_pages,) (read-only)."""
        return read_only_view(self._elapsed)

    @property
    def rates(self) -> np.ndarray:
        """Current estimates of the change rates, shape (n_pages,) (read-only view)."""
        return read_only_view(self._rates)

    @property
    def crawl_rate(self) -> float | np.ndarray | None:
        """Default crawl rate(s) of the constructor (None if every update passes its own)."""
        if self._p_default is None:
            return None
        if self._p_default.shape[0] == 1 and self._n != 1:
            return float(self._p_default[0])
        return read_only_view(self._p_default)

    # -- update -----------------------------------------------------------------
    def update(self: _B, changed: Any, pages: Any = None, crawl_rate: Any = None, intervals: Any = None) -> _B:
        """Consume one crawl outcome for each of the given pages; return ``self``.

        Parameters
        ----------
        changed : array-like of 0/1 or bool, shape (m,)
            Outcome of each crawl.  With ``pages=None``, m = n_pages and entry i
            belongs to page i.
        pages : array-like of int, shape (m,), optional
            Page of each outcome.  A page may appear several times: its
            outcomes are applied in order, exactly like successive ``update``
            calls of the streaming estimator.
        crawl_rate : float or array-like, shape (m,), optional
            Crawl rate p that generated each outcome; defaults to the
            constructor's ``crawl_rate`` (scalar or per page).
        intervals : float or array-like, shape (m,), optional
            Times since the previous crawls (> 0): not used by the estimate,
            added to ``elapsed`` as in the streaming estimators.

        Returns
        -------
        self

        Notes
        -----
        Everything is validated before any state changes.
        """
        caller = type(self).__name__ + ".update"
        c = _as_flags(changed, "changed", caller, allow_empty=pages is not None)
        m = c.shape[0]
        idx = check_batch_pages(pages, m, self._n, caller)
        p = self._rates_for(crawl_rate, idx, m, caller)
        dt = None if intervals is None else check_positive_per_item(intervals, "intervals", m, caller)
        if m == 0:
            return self
        extra = self._prepare(idx, m)
        if dt is not None:
            if idx is None:
                self._elapsed += dt
            else:
                np.add.at(self._elapsed, idx, dt)
        self._apply(c, idx, p, extra)
        return self

    def _rates_for(self, crawl_rate: Any, idx: np.ndarray | None, m: int, caller: str) -> np.ndarray:
        if crawl_rate is None:
            if self._p_default is None:
                raise ValueError(
                    f"{caller} needs crawl rates: pass 'crawl_rate' here or to the constructor of "
                    f"{type(self).__name__}."
                )
            if self._p_default.shape[0] == 1:
                return self._p_default
            return self._p_default if idx is None else np.ascontiguousarray(self._p_default[idx])
        if np.ndim(crawl_rate) == 0:
            return np.array([check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False)])
        p = check_array(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False, allow_empty=True)
        check_same_length(caller, changed=np.empty(m), crawl_rate=p)
        return p

    def _prepare(self, idx: np.ndarray | None, m: int) -> Any:
        """Validate/compute anything else the step needs (before any state changes)."""
        return None

    def _apply(self, c: np.ndarray, idx: np.ndarray | None, p: np.ndarray, extra: Any) -> None:
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    # -- save / restore -----------------------------------------------------------
    def _params(self) -> dict:
        return {"crawl_rate": None if self._p_default is None else
                (float(self._p_default[0]) if self._p_default.shape[0] == 1 and self._n != 1
                 else self._p_default.copy())}

    def to_dict(self) -> dict:
        """Parameters and state (array copies); ``from_dict`` restores them exactly."""
        state = {"n_updates": self._k_of(), "elapsed": self._elapsed.copy()}
        for name in self._state_names:
            state[name] = self._state_array(name).copy()
        return {"n_pages": self._n, "params": self._params(), "state": state}

    def _state_array(self, name: str) -> np.ndarray:
        return getattr(self, "_" + name)

    def _restored(self) -> None:
        """Hook run by ``from_dict`` once the state arrays are restored and checked."""
        self._share_k_if_equal()

    @classmethod
    def from_dict(cls: type[_B], d: dict[str, Any]) -> _B:
        """Rebuild from ``to_dict()`` output; continuing gives bit-identical results."""
        obj = cls(d["n_pages"], **d["params"])
        caller = cls.__name__ + ".from_dict"
        st = d["state"]
        k = check_array(st["n_updates"], "n_updates", caller, low=0, dtype=np.int64, copy=True)
        obj._elapsed = check_array(st["elapsed"], "elapsed", caller, low=0.0, copy=True)
        arrays = {"n_updates": k, "elapsed": obj._elapsed}
        for name in cls._state_names:
            dtype = np.int64 if name in cls._int_state else np.float64
            arrays[name] = check_array(st[name], name, caller, dtype=dtype, copy=True)
            setattr(obj, "_" + name, arrays[name])
        for name, a in arrays.items():
            if a.shape[0] != obj._n:
                raise ValueError(f"The {name!r} state of {caller} must have length n_pages={obj._n}.")
        obj._set_k(k)
        obj._restored()
        return obj

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_pages={self._n}, {', '.join(f'{k}={v!r}' for k, v in self._params().items())})"


_K_NOTES = """
    While every update has covered all pages, every page has the same k and
    the batch keeps it as one number: a full update then moves only the
    estimates and the flags.  The first update of some pages keeps a k per
    page, as a base that full updates advance plus per-page offsets that they
    leave alone.  Both give the same bits and the same ``to_dict``.
"""

_BATCH_EXAMPLE = """
    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.estimation import {cls}, {stream}
    >>> batch = {cls}(3, crawl_rate=2.0)
    >>> _ = batch.update([1, 0, 1]).update([1, 1], pages=[2, 0])
    >>> one = {stream}(crawl_rate=2.0).update(1).update(1)
    >>> bool(batch.rates[0] == one.rate)
    True
"""


class NaiveBatch(_Batch):
    __doc__ = """Naive estimator over ``n_pages`` pages (see ``NaiveEstimator``).
""" + _BATCH_PARAMETERS + """

    Attributes
    ----------
    rates : ndarray, shape (n_pages,)
        Current estimates q_k (read-only view).
    n_updates, n_changes, elapsed : ndarray, shape (n_pages,)

    Notes
    -----
    Same arithmetic as ``NaiveEstimator`` (shared compiled step functions):
    bit-identical results page by page.

    While every update has used one scalar crawl rate p (the constructor's or
    the same ``crawl_rate`` scalar each time), the segmented rate sum of the
    streaming estimator is implicitly ``0.0 + p * Î_k`` and only k, Î_k and
    the rates are stored and updated.  The first update with another rate,
    per-page or per-observation rates stores the segment state explicitly
    (exactly the numbers the streaming estimator holds) and keeps it.  Both
    regimes give the same bits and the same ``to_dict``.
""" + _BATCH_EXAMPLE.format(cls="NaiveBatch", stream="NaiveEstimator")

    _state_names = ("n_changes", "segment_changes", "segment_rate", "past_sum", "rates")
    _int_state = frozenset({"n_changes", "segment_changes"})
    _mode = 0

    def __init__(self, n_pages: int, *, crawl_rate: Any = None) -> None:
        super().__init__(n_pages, crawl_rate)
        # Î_k per page: int64, or while k is shared and below 2^32 (so Î_k <= k
        # fits) 32-bit, which the shared-k update moves in half the bytes
        # (exactly one of the two is kept; reading _n_changes widens for good).
        self._n1_wide: np.ndarray | None = None
        self._n1_32: np.ndarray | None = np.zeros(self._n, dtype=np.uint32)
        self._rates = np.zeros(self._n)
        # Common-rate regime (segment arrays None): every update so far used the
        # scalar rate self._common (None before the first update), so for each
        # page s_old = 0.0, n1_seg = n1 and p_seg = p (0.0 if never updated).
        self._common: float | None = None
        self._segment_changes: np.ndarray | None = None
        self._segment_rate: np.ndarray | None = None
        self._past_sum: np.ndarray | None = None
        # The shared-k regime of _Batch is only used inside the common-rate one.

    @property
    def _n_changes(self) -> np.ndarray:
        if self._n1_32 is not None:
            self._n1_wide, self._n1_32 = self._n1_32.astype(np.int64), None
        return cast(np.ndarray, self._n1_wide)

    @_n_changes.setter
    def _n_changes(self, value: np.ndarray) -> None:
        self._n1_wide, self._n1_32 = value, None

    def _n1_of(self) -> np.ndarray:
        """A new int64 array of Î_k (without widening the 32-bit counts for good)."""
        return self._n1_32.astype(np.int64) if self._n1_32 is not None else self._n_changes.copy()

    def _n1_narrow(self) -> np.ndarray:
        """The 32-bit counts, narrowing the int64 ones (only while k is shared and below 2^32)."""
        if self._n1_32 is None:
            self._n1_32, self._n1_wide = cast(np.ndarray, self._n1_wide).astype(np.uint32), None
        return self._n1_32

    def _implicit_segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The segment arrays the general path would hold in the common-rate regime (exact)."""
        if self._common is None:
            return np.zeros(self._n, dtype=np.int64), np.zeros(self._n), np.zeros(self._n)
        return self._n1_of(), np.where(self._k_of() > 0, self._common, 0.0), np.zeros(self._n)

    def _materialise(self) -> None:
        """Leave the common-rate regime for good: store the segment arrays explicitly."""
        self._segment_changes, self._segment_rate, self._past_sum = self._implicit_segments()

    def _state_array(self, name: str) -> np.ndarray:
        if self._past_sum is None and name in ("segment_changes", "segment_rate", "past_sum"):
            n1_seg, p_seg, s_old = self._implicit_segments()
            return {"segment_changes": n1_seg, "segment_rate": p_seg, "past_sum": s_old}[name]
        if name == "n_changes":
            return self._n1_of()
        return super()._state_array(name)

    def _restored(self) -> None:
        # Go back to the common-rate regime when the restored segment arrays are
        # exactly its implicit ones (then both continue with the same bits).
        k, n1 = self._k_of(), self._n_changes
        n1_seg, p_seg, s_old = self._segment_changes, self._segment_rate, self._past_sum
        if n1_seg is None or p_seg is None or s_old is None or (n1 < 0).any() or (n1 > k).any():
            return
        if (s_old != 0.0).any() or np.signbit(s_old).any() or not np.array_equal(n1_seg, n1):
            return
        touched = k > 0
        if (p_seg[~touched] != 0.0).any() or np.signbit(p_seg).any():
            return
        rates = np.unique(p_seg[touched])
        if rates.shape[0] > 1 or (rates.shape[0] == 1 and not rates[0] > 0.0):
            return
        self._common = float(rates[0]) if rates.shape[0] == 1 else None
        self._segment_changes = self._segment_rate = self._past_sum = None
        self._share_k_if_equal()

    @property
    def n_changes(self) -> np.ndarray:
        """Observed changes Î_k per page (read-only)."""
        return read_only_view(self._n1_of() if self._n1_32 is not None else self._n_changes)

    def _alpha_args(self, extra: Any) -> tuple[int, float, np.ndarray | None]:
        return 0, 1.0, None

    def _apply(self, c: np.ndarray, idx: np.ndarray | None, p: np.ndarray, extra: Any) -> None:
        kind, a, values = self._alpha_args(extra)
        if self._past_sum is None:
            if p.shape[0] == 1 and (self._common is None or p[0] == self._common):
                self._common = float(p[0])
                if idx is None and self._k_shared is not None and kind != 3 and self._k_shared < _K_SHARED_MAX:
                    rt, k1, pc, mode = self._rates, self._k_shared + 1, self._common, self._mode
                    if k1 < 2**32:
                        n1 = self._n1_narrow()
                        parallel_chunks(self._n, lambda s, e: _est.count_shared_update32(
                            n1[s:e], rt[s:e], c[s:e], k1, pc, mode, kind, a))
                    else:
                        n1 = self._n_changes
                        parallel_chunks(self._n, lambda s, e: _est.count_shared_update(
                            n1[s:e], rt[s:e], c[s:e], k1, pc, mode, kind, a))
                    self._k_shared = k1
                    return
                koff, blk, base = self._per_page_k()
                n1, rt, pc, mode = self._n_changes, self._rates, self._common, self._mode
                if idx is not None:
                    _est.count_common_pages(koff, blk, base, n1, rt, c, idx, pc, mode, kind, a, values)
                    return
                parallel_chunks(self._n, lambda s, e: _est.count_common_full(
                    koff, blk, base, n1, rt, c, pc, mode, kind, a, values, s, e))
                self._full_update_done()
                return
            self._materialise()
        n1_seg, p_seg, s_old = self._segments()
        koff, blk, base = self._per_page_k()
        _est.count_batch_update(koff, blk, base, self._n_changes, n1_seg, p_seg, s_old, self._rates, c, idx, p,
                                self._mode, kind, a, values)
        if idx is None:
            self._full_update_done()

    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The stored segment arrays (outside the common-rate regime)."""
        if self._segment_changes is None or self._segment_rate is None or self._past_sum is None:
            raise RuntimeError("the segment arrays are only stored outside the common-rate regime")
        return self._segment_changes, self._segment_rate, self._past_sum


def _occurrence_k(k: np.ndarray, idx: np.ndarray | None, m: int) -> np.ndarray:
    """k + 1 at each observation, counting earlier duplicates of the same page in this call (``k``: the k of
    each observation's page before the call)."""
    if idx is None:
        return k + 1
    order = np.argsort(idx, kind="stable")
    sp = idx[order]
    start = np.ones(m, dtype=bool)
    start[1:] = sp[1:] != sp[:-1]
    pos = np.arange(m)
    first = np.maximum.accumulate(np.where(start, pos, 0))
    rank = np.empty(m, dtype=np.int64)
    rank[order] = pos - first
    return k + 1 + rank


@cites(AVRACHENKOV_2022)
class LLNBatch(NaiveBatch):
    __doc__ = """LLN estimator over ``n_pages`` pages (see ``LLNEstimator``).
""" + _BATCH_PARAMETERS + """
    alpha : {"one", "log", "sqrt"}, float, callable or sequence, default "one"
        α_k as in ``LLNEstimator`` (a callable is called once per distinct k
        in each update, with the int k).
    consistent : bool or None, default None
        As in ``LLNEstimator``, page by page.

    Attributes
    ----------
    rates : ndarray, shape (n_pages,)
        Current estimates x_k (read-only view).
    n_updates, n_changes, elapsed : ndarray, shape (n_pages,)
        k, Î_k and the sum of the intervals passed to ``update``, page by page.

    Notes
    -----
    x_k = p Î_k / (k + α_k - Î_k), eq. (1) of Avrachenkov et al. (2022), with
    the same compiled step functions as ``LLNEstimator``: bit-identical results
    page by page.
""" + _BATCH_EXAMPLE.format(cls="LLNBatch", stream="LLNEstimator")


    def __init__(
        self, n_pages: int, *, crawl_rate: Any = None, alpha: Any = "one", consistent: bool | None = None
    ) -> None:
        super().__init__(n_pages, crawl_rate=crawl_rate)
        caller = type(self).__name__
        if consistent is not None and not isinstance(consistent, (bool, np.bool_)):
            raise TypeError(
                f"The 'consistent' parameter of {caller} must be True, False or None. Got {consistent!r} instead."
            )
        self._alpha_kind, self._alpha_const, self._alpha_fn = _est._alpha_code(alpha, caller)
        self._alpha_spec = alpha
        self._consistent = None if consistent is None else bool(consistent)
        self._mode = 1 if self._consistent is False else 2

    def _params(self) -> dict:
        d = super()._params()
        d.update(alpha=self._alpha_spec, consistent=self._consistent)
        return d

    def _prepare(self, idx: np.ndarray | None, m: int) -> np.ndarray | None:
        if self._alpha_kind != 3 or self._alpha_fn is None:
            return None
        caller = type(self).__name__ + ".update"
        ks = _occurrence_k(self._k_of(idx), idx, m)
        uniq, inv = np.unique(ks, return_inverse=True)
        fn = self._alpha_fn
        vals = np.array([check_scalar(fn(int(u)), "alpha", caller, low=0.0, low_inclusive=False) for u in uniq])
        return np.ascontiguousarray(vals[inv.reshape(-1)])

    def _alpha_args(self, extra: Any) -> tuple[int, float, np.ndarray | None]:
        return self._alpha_kind, self._alpha_const, extra


@cites(AVRACHENKOV_2022)
class SABatch(_Batch):
    __doc__ = """SA estimator over ``n_pages`` pages (see ``SAEstimator``).
""" + _BATCH_PARAMETERS + """
    eta : float, default 0.75
        Step-size exponent, η_k = (k + 1)^(-η).
    initial : float, default 0.0
        y_0 of every page.

    Attributes
    ----------
    rates : ndarray, shape (n_pages,)
        Current estimates y_k (read-only view).
    n_updates, elapsed : ndarray, shape (n_pages,)

    Notes
    -----
    y_{k+1} = y_k + η_k [I_{k+1}(y_k + p) - y_k], eq. (2) of Avrachenkov et al.
    (2022), with the same compiled step function as ``SAEstimator``:
    bit-identical page by page.
""" + _K_NOTES + _BATCH_EXAMPLE.format(cls="SABatch", stream="SAEstimator")

    _state_names = ("rates",)

    def __init__(self, n_pages: int, *, crawl_rate: Any = None, eta: float = 0.75, initial: float = 0.0) -> None:
        super().__init__(n_pages, crawl_rate)
        caller = type(self).__name__
        self._eta = check_scalar(eta, "eta", caller, low=0.0, low_inclusive=False)
        self._initial = check_scalar(initial, "initial", caller, low=0.0)
        self._rates = np.full(self._n, self._initial)

    def _params(self) -> dict:
        d = super()._params()
        d.update(eta=self._eta, initial=self._initial)
        return d

    def _apply(self, c: np.ndarray, idx: np.ndarray | None, p: np.ndarray, extra: Any) -> None:
        if idx is None and self._k_shared is not None and self._k_shared < _K_SHARED_MAX:
            y, k0, eta = self._rates, self._k_shared, self._eta
            if p.shape[0] == 1:
                parallel_chunks(self._n, lambda s, e: _est.sa_shared_update(y[s:e], c[s:e], p, k0, eta))
            else:
                parallel_chunks(self._n, lambda s, e: _est.sa_shared_update(y[s:e], c[s:e], p[s:e], k0, eta))
            self._k_shared = k0 + 1
            return
        koff, blk, base = self._per_page_k()
        y, eta = self._rates, self._eta
        if idx is not None:
            _est.sa_pages_update(koff, blk, base, y, c, idx, p, eta)
            return
        parallel_chunks(self._n, lambda s, e: _est.sa_full_update(koff, blk, base, y, c, p, eta, s, e))
        self._full_update_done()


@cites(AVRACHENKOV_2022)
class SAMBatch(_Batch):
    __doc__ = """SAM estimator over ``n_pages`` pages (see ``SAMEstimator``).
""" + _BATCH_PARAMETERS + """
    eta, beta, omega : float, defaults 1.3, 0.75, 1.0
        Step-size parameters of eqs. (3) and (10) of Avrachenkov et al. (2022).
    initial : float, default 0.0
        z_0 = z_{-1} of every page.

    Attributes
    ----------
    rates : ndarray, shape (n_pages,)
        Current estimates z_k (read-only view).
    previous : ndarray, shape (n_pages,)
        z_{k-1} (read-only view).
    n_updates, elapsed : ndarray, shape (n_pages,)

    Notes
    -----
    z_{k+1} = z_k + η_k [I_{k+1}(z_k + p) - z_k] + ζ_k (z_k - z_{k-1}), eq. (3)
    of Avrachenkov et al. (2022), with the same compiled step function as
    ``SAMEstimator``: bit-identical page by page.
""" + _K_NOTES + _BATCH_EXAMPLE.format(cls="SAMBatch", stream="SAMEstimator")

    _state_names = ("rates", "previous")

    def __init__(self, n_pages: int, *, crawl_rate: Any = None, eta: float = 1.3, beta: float = 0.75,
                 omega: float = 1.0, initial: float = 0.0) -> None:
        super().__init__(n_pages, crawl_rate)
        caller = type(self).__name__
        self._eta = check_scalar(eta, "eta", caller, low=0.0, low_inclusive=False)
        self._beta = check_scalar(beta, "beta", caller, low=0.0, low_inclusive=False)
        self._omega = check_scalar(omega, "omega", caller, low=0.0, low_inclusive=False)
        self._initial = check_scalar(initial, "initial", caller, low=0.0)
        self._rates = np.full(self._n, self._initial)
        self._previous = np.full(self._n, self._initial)

    @property
    def previous(self) -> np.ndarray:
        """Previous iterates z_{k-1}, shape (n_pages,) (read-only view)."""
        return read_only_view(self._previous)

    def _params(self) -> dict:
        d = super()._params()
        d.update(eta=self._eta, beta=self._beta, omega=self._omega, initial=self._initial)
        return d

    def _apply(self, c: np.ndarray, idx: np.ndarray | None, p: np.ndarray, extra: Any) -> None:
        args = (self._eta, self._beta, self._omega)
        if idx is None and self._k_shared is not None and self._k_shared < _K_SHARED_MAX:
            z, zp, k0 = self._rates, self._previous, self._k_shared
            if p.shape[0] == 1:
                parallel_chunks(self._n, lambda s, e: _est.sam_shared_update(z[s:e], zp[s:e], c[s:e], p, k0, *args))
            else:
                parallel_chunks(self._n, lambda s, e: _est.sam_shared_update(
                    z[s:e], zp[s:e], c[s:e], p[s:e], k0, *args))
            self._k_shared = k0 + 1
            return
        koff, blk, base = self._per_page_k()
        z, zp = self._rates, self._previous
        if idx is not None:
            _est.sam_pages_update(koff, blk, base, z, zp, c, idx, p, *args)
            return
        parallel_chunks(self._n, lambda s, e: _est.sam_full_update(koff, blk, base, z, zp, c, p, *args, s, e))
        self._full_update_done()
