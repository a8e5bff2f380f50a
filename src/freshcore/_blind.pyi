"""Typed stub of the compiled blind-sampling kernels (freshcore._blind); see freshcore.blind for the public API."""

import numpy as np
import numpy.typing as npt

__test__: dict[str, str]

SIMD_LEVEL: int

def _set_simd_level(level: int) -> int: ...

def first_not_binary(flags: npt.NDArray[np.uint8]) -> int: ...
def first_not_age(ages: npt.NDArray[np.float64]) -> int: ...
def first_not_increasing(times: npt.NDArray[np.float64]) -> int: ...
def lattice_step(times: npt.NDArray[np.float64], rtol: float) -> float: ...
def rank_counts(
    ages: npt.NDArray[np.float64], keep: npt.NDArray[np.uint8] | None, x: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]
) -> None: ...
def le_counts(
    ages: npt.NDArray[np.float64], keep: npt.NDArray[np.uint8] | None, x: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]
) -> int: ...
def detection_gaps(changed: npt.NDArray[np.uint8], counts: npt.NDArray[np.int64]) -> tuple[int, int, int]: ...
def gm4_counts(
    times: npt.NDArray[np.float64], changed: npt.NDArray[np.uint8], x: npt.NDArray[np.float64], counts: npt.NDArray[np.int64]
) -> int: ...
def m6_counts(
    times: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    h: float,
    nbins: int,
    counts: npt.NDArray[np.int64],
    fast: bool,
) -> None: ...
def renewal_table(
    x: npt.NDArray[np.float64],
    g_in: npt.NDArray[np.float64],
    g: npt.NDArray[np.float64],
    psum: npt.NDArray[np.float64],
    tail: npt.NDArray[np.float64],
    hazard: npt.NDArray[np.float64],
    mean_age: npt.NDArray[np.float64],
    slope0: npt.NDArray[np.float64],
) -> int: ...
def renewal_pass(
    x: npt.NDArray[np.float64],
    psum: npt.NDArray[np.float64],
    pm: npt.NDArray[np.float64],
    tail: npt.NDArray[np.float64],
    hazard: npt.NDArray[np.float64],
    mean_age: npt.NDArray[np.float64],
    inv_w: npt.NDArray[np.float64],
    lo: npt.NDArray[np.float64] | None,
    hi: npt.NDArray[np.float64] | None,
    lam: float,
    u: float,
    out: npt.NDArray[np.float64] | None = None,
) -> tuple[float, float]: ...
def renewal_psi(
    x: npt.NDArray[np.float64],
    psum: npt.NDArray[np.float64],
    tail: npt.NDArray[np.float64],
    hazard: npt.NDArray[np.float64],
    mean_age: npt.NDArray[np.float64],
    interval: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
) -> None: ...
def renewal_freshness(
    x: npt.NDArray[np.float64],
    g: npt.NDArray[np.float64],
    tail: npt.NDArray[np.float64],
    hazard: npt.NDArray[np.float64],
    interval: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
) -> None: ...
