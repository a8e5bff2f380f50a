"""The checks of the blind-sampling logs shared by :mod:`freshcore.blind_estimators` and
:mod:`freshcore.blind_recovery`: change flags, sample times, ages and evaluation points, each named with its first
bad index (float64 and 0/1 arrays pass without a copy; the compiled scans of ``freshcore._blind`` check them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _blind
from ._validation import check_array, check_binary


def _flags(x: Any, caller: str, n: int | None = None, *, name: str = "changed", of: str = "times") -> np.ndarray:
    """0/1 flags as a contiguous uint8 array (bool and uint8 without a copy), one per pair of consecutive
    samples when ``n`` (the number of samples) is given."""
    arr = x if isinstance(x, np.ndarray) else None
    if arr is not None and arr.ndim == 1 and arr.dtype in (np.bool_, np.uint8):
        arr = np.ascontiguousarray(arr).view(np.uint8)
        if arr.size == 0:
            raise ValueError(f"The {name!r} parameter of {caller} must not be empty.")
        i = _blind.first_not_binary(arr)
        if i >= 0:
            raise ValueError(f"The {name!r} parameter of {caller} must contain only 0/1 (or False/True) flags; "
                             f"{name}[{i}] = {arr[i].item()!r}.")
    else:
        arr = check_binary(x, name, caller)
    if n is not None and len(arr) != n - 1:
        raise ValueError(f"The {name!r} parameter of {caller} must have one flag per pair of consecutive samples, "
                         f"len({of}) - 1 = {n - 1}. Got {len(arr)} instead.")
    return arr


def _floats(x: Any, name: str, caller: str) -> np.ndarray:
    """A 1-D float64 array, not empty; float64 arrays pass without a scan (the compiled scans check them)."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.dtype == np.float64 and x.size:
        return np.ascontiguousarray(x)
    return check_array(x, name, caller, allow_inf=True)  # NaN is named here, the rest by the scans


def _bad_age(ages: np.ndarray, i: int, caller: str) -> None:
    if i >= 0:
        raise ValueError(f"The 'ages' parameter of {caller} must contain finite numbers >= 0; "
                         f"ages[{i}] = {ages[i].item()!r}.")


def _times(x: Any, caller: str) -> np.ndarray:
    arr = _floats(x, "times", caller)
    i = _blind.first_not_increasing(arr)
    if i >= 0:
        if i == 0 or not np.isfinite(arr[i]):
            raise ValueError(f"The 'times' parameter of {caller} must contain finite numbers; "
                             f"times[{i}] = {arr[i].item()!r}.")
        raise ValueError(f"The 'times' parameter of {caller} must be strictly increasing (sorted, no duplicates); "
                         f"times[{i}] = {arr[i].item()!r} is not above times[{i - 1}] = {arr[i - 1].item()!r}.")
    return arr


def _points(x: Any, caller: str, name: str = "x") -> np.ndarray:
    arr = check_array(x, name, caller, low=0.0)
    bad = np.flatnonzero(np.diff(arr) <= 0.0)
    if bad.size:
        i = int(bad[0]) + 1
        raise ValueError(f"The {name!r} parameter of {caller} must be strictly increasing; {name}[{i}] = "
                         f"{arr[i].item()!r} is not above {name}[{i - 1}] = {arr[i - 1].item()!r}.")
    return arr
