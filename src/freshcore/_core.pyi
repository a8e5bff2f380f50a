"""Typed stub of the compiled core (the ``cdef`` functions are reachable from Cython only)."""

import numpy as np
from numpy.typing import NDArray

def lambertw_kernel(z: NDArray[np.float64], branch: int, out: NDArray[np.float64]) -> None: ...
def residual_exp_kernel(i: NDArray[np.float64], x: NDArray[np.float64], out: NDArray[np.float64]) -> None: ...

# Cython module internals (the C-API capsules of the cdef functions, the doctest table).
__pyx_capi__: dict[str, object]
__test__: dict[str, str]
