"""Input validation shared by every public function of freshcore.

All user input passes through these helpers before it reaches the compiled
kernels, which never validate (see the design note at the top of
``_core.pyx``).  Messages follow scikit-learn's wording::

    The 'bandwidth' parameter of optimal_rates must be a finite number > 0. Got -1.0 instead.

and, for arrays, name the first offending index::

    The 'weights' parameter of optimal_rates must contain finite numbers >= 0; weights[3] = -1.0.
"""

from __future__ import annotations

import numbers
import operator
from typing import Any

import numpy as np

__all__ = [
    "broadcast_parameters",
    "check_array",
    "check_batch_pages",
    "check_binary",
    "check_choice",
    "check_crawl_times",
    "check_indices",
    "check_int",
    "check_out",
    "check_page_id",
    "check_page_ids",
    "check_positive_per_item",
    "check_rng",
    "check_same_length",
    "check_scalar",
    "read_only_view",
]


def _describe_bounds(low: float | None, high: float | None, low_inclusive: bool, high_inclusive: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>=' if low_inclusive else '>'} {low!r}")
    if high is not None:
        parts.append(f"{'<=' if high_inclusive else '<'} {high!r}")
    return " and ".join(parts)


def _out_of_bounds(
    values: np.ndarray, low: float | None, high: float | None, low_inclusive: bool, high_inclusive: bool
) -> np.ndarray:
    """Boolean mask of entries outside the bounds (NaN counts as outside)."""
    bad = np.zeros(values.shape, dtype=bool)
    if low is not None:
        bad |= ~(values >= low) if low_inclusive else ~(values > low)
    if high is not None:
        bad |= ~(values <= high) if high_inclusive else ~(values < high)
    return bad


def check_scalar(
    x: Any,
    name: str,
    caller: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    allow_inf: bool = False,
) -> float:
    """Return ``x`` as a Python float after checking type, finiteness and range.

    Raises
    ------
    TypeError
        If ``x`` is not a real number (bools are rejected too).
    ValueError
        If ``x`` is NaN, infinite (unless ``allow_inf``) or out of range.
    """
    what = "a finite number" if not allow_inf else "a number"
    bounds = _describe_bounds(low, high, low_inclusive, high_inclusive)
    expect = f"{what} {bounds}".strip()
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
            x = x.item()
        else:
            raise TypeError(
                f"The {name!r} parameter of {caller} must be {expect}. "
                f"Got {x!r} of type {type(x).__name__} instead."
            )
    v = float(x)
    ok = not np.isnan(v) and (allow_inf or np.isfinite(v))
    if ok:
        ok = not _out_of_bounds(np.asarray(v), low, high, low_inclusive, high_inclusive)
    if not ok:
        raise ValueError(f"The {name!r} parameter of {caller} must be {expect}. Got {x!r} instead.")
    return v


def check_int(x: Any, name: str, caller: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``x`` as a Python int (numpy integers accepted, bools and floats rejected)."""
    bounds = _describe_bounds(low, high, True, True)
    expect = f"an integer {bounds}".strip()
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"The {name!r} parameter of {caller} must be {expect}. Got {x!r} instead.")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(
            f"The {name!r} parameter of {caller} must be {expect}. "
            f"Got {x!r} of type {type(x).__name__} instead."
        ) from None
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"The {name!r} parameter of {caller} must be {expect}. Got {v!r} instead.")
    return v


def _as_numeric_array(x: Any, name: str, caller: str) -> np.ndarray:
    if isinstance(x, (str, bytes)):
        raise TypeError(f"The {name!r} parameter of {caller} must be array-like of numbers. Got a string instead.")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"The {name!r} parameter of {caller} could not be converted to an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(
            f"The {name!r} parameter of {caller} must be array-like of real numbers. Got dtype {arr.dtype} instead."
        )
    return arr


def _shaped(x: Any, name: str, caller: str, ndim: int | tuple[int, ...] | None, allow_empty: bool) -> np.ndarray:
    """``x`` as a numeric array of one of the ``ndim`` (None: any), not empty unless ``allow_empty``."""
    arr = _as_numeric_array(x, name, caller)
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if ndims is not None and arr.ndim not in ndims:
        want = " or ".join(f"{d}-D" for d in ndims)
        raise ValueError(f"The {name!r} parameter of {caller} must be a {want} array. Got shape {arr.shape} instead.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"The {name!r} parameter of {caller} must not be empty.")
    return arr


def _index_str(name: str, flat_index: int, shape: tuple[int, ...]) -> str:
    if len(shape) <= 1:
        return f"{name}[{flat_index}]"
    idx = np.unravel_index(flat_index, shape)
    return f"{name}[{', '.join(str(int(i)) for i in idx)}]"


def check_array(
    x: Any,
    name: str,
    caller: str,
    *,
    ndim: int | tuple[int, ...] | None = 1,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    allow_inf: bool = False,
    allow_empty: bool = False,
    dtype: Any = np.float64,
    copy: bool = False,
) -> np.ndarray:
    """Return ``x`` as a C-contiguous array of ``dtype`` after validation.

    Read-only and memory-mapped inputs are accepted; the result is only a
    copy when a conversion is needed (or ``copy=True``).  For 1-D input the
    error names the first bad index, for N-D input the first bad position in
    C order.
    """
    arr = _shaped(x, name, caller, ndim, allow_empty)
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if copy and isinstance(x, np.ndarray) and np.shares_memory(arr, x):
        arr = arr.copy()
    if arr.dtype.kind == "f":
        finite_ok = np.isfinite(arr) if not allow_inf else ~np.isnan(arr)
        bad = ~finite_ok | _out_of_bounds(arr, low, high, low_inclusive, high_inclusive)
    else:
        bad = _out_of_bounds(arr, low, high, low_inclusive, high_inclusive)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        what = "finite numbers" if not allow_inf else "numbers (not NaN)"
        bounds = _describe_bounds(low, high, low_inclusive, high_inclusive)
        raise ValueError(
            f"The {name!r} parameter of {caller} must contain {what} {bounds}".rstrip()
            + f"; {_index_str(name, i, arr.shape)} = {arr.ravel()[i].item()!r}."
        )
    return arr


def check_binary(
    x: Any, name: str, caller: str, *, ndim: int | tuple[int, ...] | None = 1, allow_empty: bool = False
) -> np.ndarray:
    """Return a C-contiguous ``uint8`` array of 0/1 flags.

    Booleans, integers and floats are accepted as long as every entry is
    exactly 0 or 1; anything else is a ``ValueError`` naming the first bad
    index, and non-numeric dtypes are a ``TypeError``.
    """
    arr = _shaped(x, name, caller, ndim, allow_empty)
    if arr.dtype.kind == "b":
        return np.ascontiguousarray(arr, dtype=np.uint8)
    bad = (arr != 0) & (arr != 1)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(
            f"The {name!r} parameter of {caller} must contain only 0/1 (or False/True) flags; "
            f"{_index_str(name, i, arr.shape)} = {arr.ravel()[i].item()!r}."
        )
    return np.ascontiguousarray(arr, dtype=np.uint8)


def check_same_length(caller: str, **arrays: np.ndarray) -> int:
    """Check that all given arrays have the same length along axis 0; return it."""
    items = [(k, v) for k, v in arrays.items() if v is not None]
    if not items:
        return 0
    n0 = len(items[0][1])
    for _, v in items[1:]:
        if len(v) != n0:
            desc = ", ".join(f"{kk!r} has {len(vv)}" for kk, vv in items)
            raise ValueError(f"The array parameters of {caller} must have the same length: {desc}.")
    return n0


def broadcast_parameters(caller: str, what: str, **params: tuple[np.ndarray, Any]) -> list[np.ndarray]:
    """Per-item parameters given as scalars or 1-d arrays, broadcast to one length (read-only views).

    Each keyword maps a parameter's name to ``(checked, raw)``: the checked array (``ndim`` 0 or 1) and what
    the caller gave.  The 1-d ones must share their length, the number of ``what`` (e.g. "pages"); scalars
    take it (1 if every parameter is a scalar).  ValueError naming every shape otherwise.
    """
    lengths = {len(a) for a, raw in params.values() if np.ndim(raw) == 1}
    if len(lengths) > 1:
        shapes = ", ".join(f"{name}={np.shape(a)}" for name, (a, _) in params.items())
        raise ValueError(f"The array parameters of {caller} must have one length (the number of {what}). "
                         f"Got lengths {shapes}.")
    n = lengths.pop() if lengths else 1
    return [np.broadcast_to(a.reshape(-1)[:1] if np.ndim(raw) == 0 else a, (n,)) for a, raw in params.values()]


def check_choice(x: Any, name: str, caller: str, choices: tuple[str, ...]) -> str:
    """Check that ``x`` is one of ``choices`` (strings)."""
    if not isinstance(x, str) or x not in choices:
        opts = ", ".join(repr(c) for c in choices)
        raise ValueError(f"The {name!r} parameter of {caller} must be one of {opts}. Got {x!r} instead.")
    return x


def check_indices(x: Any, name: str, caller: str, n: int, *, allow_empty: bool = True) -> np.ndarray:
    """Return ``x`` as a C-contiguous ``intp`` array of indices in ``[0, n)``."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"The {name!r} parameter of {caller} must be an array of integer indices. Got a string.")
    arr = np.asarray(x)
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            arr = arr.astype(np.intp)
        else:
            raise TypeError(
                f"The {name!r} parameter of {caller} must be an array of integer indices. "
                f"Got dtype {arr.dtype} instead."
            )
    if arr.ndim != 1:
        raise ValueError(f"The {name!r} parameter of {caller} must be a 1-D array. Got shape {arr.shape} instead.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"The {name!r} parameter of {caller} must not be empty.")
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The {name!r} parameter of {caller} must contain indices in [0, {n}); {name}[{i}] = {arr[i].item()!r}."
        )
    return np.ascontiguousarray(arr, dtype=np.intp)


def check_out(out: Any, shape: tuple, caller: str, *, name: str = "out") -> np.ndarray:
    """Check a caller-supplied output array: float64, C-contiguous, writeable, of ``shape``."""
    if not isinstance(out, np.ndarray):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a numpy array or None. Got {type(out).__name__} instead."
        )
    if out.dtype != np.float64:
        raise TypeError(f"The {name!r} parameter of {caller} must have dtype float64. Got dtype {out.dtype} instead.")
    if out.shape != tuple(shape):
        raise ValueError(
            f"The {name!r} parameter of {caller} must have shape {tuple(shape)}. Got shape {out.shape} instead."
        )
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"The {name!r} parameter of {caller} must be a writeable C-contiguous array.")
    return out


def check_rng(rng: Any, caller: str, *, name: str = "rng") -> np.random.Generator:
    """A numpy Generator from ``rng``: None (fresh OS entropy), an int seed ``>= 0`` or a Generator (used as is).

    The one way freshcore takes randomness (as ``numpy.random.default_rng`` and
    scikit-learn's ``random_state`` do): the same seed gives the same draws, and
    a Generator passed in is advanced, not copied.
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (bool, np.bool_)) or not isinstance(rng, (numbers.Integral, np.integer)):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be None, an int seed or a numpy.random.Generator. "
            f"Got {rng!r} of type {type(rng).__name__} instead."
        )
    if rng < 0:
        raise ValueError(f"The {name!r} parameter of {caller} must be None, an int seed >= 0 or a "
                         f"numpy.random.Generator. Got {rng!r} instead.")
    return np.random.default_rng(int(rng))


def check_page_ids(
    ids: Any, name: str, caller: str, n_ids: int, alive: Any, *, distinct: bool = False
) -> np.ndarray:
    """Live page ids of a scheduler as an ``intp`` array.

    ``n_ids``: the ids handed out so far (``0 .. n_ids - 1``); ``alive(p)``:
    the live flags of the ids ``p`` (removed ids are refused).  With
    ``distinct`` a repeated id is refused too.  Each error names the first bad
    index.
    """
    p = check_indices(ids, name, caller, n_ids)
    dead = np.flatnonzero(~np.asarray(alive(p), dtype=bool))
    if dead.size:
        i = int(dead[0])
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


def check_page_id(page: Any, name: str, caller: str, n_ids: int, alive: Any) -> int:
    """One live page id (see :func:`check_page_ids`)."""
    j = check_int(page, name, caller, low=0)
    if j >= n_ids or not bool(alive(np.array([j]))[0]):
        why = "removed" if j < n_ids else f"ids so far are 0 .. {n_ids - 1}"
        raise ValueError(f"The {name!r} parameter of {caller} must be a live page id. Got {j!r} ({why}).")
    return j


def check_crawl_times(last_crawl: Any, n: int, caller: str, *, latest: float | None = 0.0,
                      scalar: bool = False) -> np.ndarray:
    """Last-crawl times of ``n`` pages: finite and ``<= latest`` (None: no bound), a float64 copy of shape (n,).

    With ``scalar`` a number is every page's time.  ``latest`` is the current
    time of the scheduler; the error names the first bad page.
    """
    last = check_array(last_crawl, "last_crawl", caller, ndim=(0, 1) if scalar else 1, high=latest, copy=True)
    if np.ndim(last_crawl) == 0:
        return np.full(n, float(last.reshape(-1)[0]))
    if len(last) != n:
        raise ValueError(
            f"The 'last_crawl' parameter of {caller} must have one entry per page ({n}). "
            f"Got shape {last.shape} instead."
        )
    return last


def read_only_view(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a`` (no copy): what properties hand out, so that callers cannot change the state."""
    v = a.view()
    v.flags.writeable = False
    return v


def check_batch_pages(pages: Any, m: int, n_pages: int, caller: str) -> np.ndarray | None:
    """The pages of ``m`` outcomes given to a batched estimator's ``update``: None when ``pages`` is None (then
    the outcomes must be one per page, ``m == n_pages``), else ``m`` indices in ``[0, n_pages)``."""
    if pages is None:
        if m != n_pages:
            raise ValueError(
                f"The 'changed' parameter of {caller} must have length n_pages={n_pages} when 'pages' is "
                f"None. Got length {m} instead."
            )
        return None
    idx = check_indices(pages, "pages", caller, n_pages)
    if len(idx) != m:
        raise ValueError(
            f"The array parameters of {caller} must have the same length: 'changed' has {m}, 'pages' has {len(idx)}."
        )
    return idx


def check_positive_per_item(x: Any, name: str, m: int, caller: str) -> np.ndarray:
    """A number > 0 for each of ``m`` items: a scalar (every item's) or an array of length ``m``, float64."""
    if np.ndim(x) == 0:
        return np.full(m, check_scalar(x, name, caller, low=0.0, low_inclusive=False))
    arr = check_array(x, name, caller, low=0.0, low_inclusive=False, allow_empty=True)
    if len(arr) != m:
        raise ValueError(
            f"The array parameters of {caller} must have the same length: 'changed' has {m}, {name!r} has {len(arr)}."
        )
    return arr
