"""Typed stub of the compiled Whittle index and its simulation kernels (``cdef`` functions are Cython-only)."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def index_kernel(x: _F, ustar: _F, mut: _F, om: _F, invc: _F, out: _F) -> None: ...
def threshold_kernel(c_lam: _F, ustar: _F, out: _F) -> None: ...
def arrivals_kernel(
    streams: NDArray[np.uint64], lam_t: _F, mut: _F, xi: _F, exponential: bool, tables: _F,
    slot: NDArray[np.int64], out: _F, counts: NDArray[np.int64] | None = ...,
) -> None: ...
def stochastic_index_kernel(
    x_c: _F, alpha: _F, cost: _F, x_hi: _F, samples: _F, grid: int, iterations: int, gamma0: _F,
    streams: NDArray[np.uint64], out: _F,
) -> None: ...

class TopMCore:
    rebuilds: int
    relevels: int
    @property
    def n_awake(self) -> int: ...
    @property
    def time(self) -> int: ...
    def __init__(self, ustar: _F, mut: _F, om: _F, invc: _F, u: _F, x0: _F, m: int, slack: int) -> None: ...
    def run(self, periods: int, chosen: NDArray[np.int64], rewards: _F) -> None: ...
    def states(self, out: _F) -> None: ...

__test__: dict[str, str]
