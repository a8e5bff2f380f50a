"""Typed stub of the compiled crawl value (the ``cdef`` functions are reachable from Cython only)."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def value_kernel(
    tau: _F, delta: _F, recall: _F, nu: _F, mu: _F, alpha: _F, gamma: _F, beta: _F, kind: int, terms: int, out: _F
) -> None: ...
def beta_kernel(delta: _F, recall: _F, nu: _F, out: _F) -> None: ...
def interval_kernel(tau: _F, delta: _F, nu: _F, gamma: _F, beta: _F, out: _F) -> None: ...
def fresh_kernel(tau: _F, delta: _F, alpha: _F, nu: _F, gamma: _F, beta: _F, out: _F) -> None: ...

def value_interval_kernel(tau: _F, delta: _F, alpha: _F, gamma: _F, nu: _F, beta: _F, mu: _F, value: _F, interval: _F) -> None: ...
def residue_kernel(tau: _F, delta: _F, alpha: _F, gamma: _F, nu: _F, beta: _F, value: _F, used: NDArray[np.uint8]) -> None: ...

# Cython module internals (the C-API capsules of the cdef functions, the doctest table).
__pyx_capi__: dict[str, object]
__test__: dict[str, str]
