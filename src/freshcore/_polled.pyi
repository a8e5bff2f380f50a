"""Typed stub of the compiled polled-signal value (freshcore._polled); see freshcore.polled_signals for the API."""

import numpy as np
import numpy.typing as npt

# Cython module internals (the C-API capsules of the cdef functions the scheduler will cimport, the doctest table).
__pyx_capi__: dict[str, object]
__test__: dict[str, str]

def sums_kernel(
    s: npt.NDArray[np.float64],
    dl: npt.NDArray[np.float64],
    lam: npt.NDArray[np.float64],
    nu: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    mu: npt.NDArray[np.float64],
    what: int,
    out: npt.NDArray[np.float64],
) -> int: ...
def level_kernel(
    level: npt.NDArray[np.float64],
    dl: npt.NDArray[np.float64],
    lam: npt.NDArray[np.float64],
    nu: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    mu: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
) -> int: ...
def _set_mode(mode: int) -> int: ...
def _nb_cdf(kk: float, r: float, p: float) -> tuple[int, float, float, float, float]: ...
def _value_upper(s: float, dl: float, lam: float, nu: float, w: float, mu: float = ...) -> float: ...
def _value_bounds(s: float, dl: float, lam: float, nu: float, w: float, mu: float = ...) -> tuple[float, float]: ...
def _profile(
    s: npt.NDArray[np.float64],
    dl: npt.NDArray[np.float64],
    lam: npt.NDArray[np.float64],
    nu: npt.NDArray[np.float64],
    w: npt.NDArray[np.float64],
    reps: int,
    ns: npt.NDArray[np.float64],
    info: npt.NDArray[np.float64],
) -> None: ...
def _r1(y: float) -> tuple[float, float]: ...
def _log_binom(i: float, n: float, p: float) -> tuple[float, float]: ...
def _fast_bounds(
    s: float, dl: float, lam: float, nu: float, w: float, band_walk: float = ...
) -> tuple[int, float, float]: ...
def _ext_bounds(
    s: float, dl: float, lam: float, nu: float, w: float, band_walk: float = ...
) -> tuple[int, float, float, bool, float, float, float]: ...
def _log_binom_x(i: float, n: float, p: float) -> tuple[float, float, float]: ...
def _have_ext() -> bool: ...
