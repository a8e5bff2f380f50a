"""Typed stub of the scheduler scan's test kernels."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def scan_kernel(
    slopes: _F,
    top_keys: _F,
    buckets: NDArray[np.int32],
    t: float,
    tpad: float,
    mg: float,
    f: float,
    th: float,
    bounds: _F,
    cand_buckets: NDArray[np.int32],
    cand_bounds: _F,
) -> int: ...
def pick_kernel(
    bounds: _F, buckets: NDArray[np.int32], th: float, cand_buckets: NDArray[np.int32], cand_bounds: _F
) -> int: ...

__test__: dict[str, str]
