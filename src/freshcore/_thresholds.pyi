"""Typed stub of the compiled Theorem 2 kernels (the ``cdef`` functions are reachable from Cython only)."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def threshold_kernel(
    lam: float,
    delta: _F,
    alpha: _F,
    gamma: _F,
    nu: _F,
    beta: _F,
    mu: _F,
    start: _F,
    lo: _F,
    hi: _F,
    base: _F,
    iota: _F,
    freq: _F,
    slope: _F,
    curv: _F | None = None,
    curv3: _F | None = None,
) -> None: ...
def interval_inverse_kernel(target: _F, delta: _F, gamma: _F, nu: _F, beta: _F, lo: _F, hi: _F, iota: _F) -> None: ...
def signal_count_kernel(lam: float, mu: _F, delta: _F, nu: _F, count: NDArray[np.int_], freq: _F) -> float: ...

# Cython module internals (the doctest table).
__test__: dict[str, str]
