"""Typed stub of the compiled Whittle index and its simulation kernels (``cdef`` functions are Cython-only)."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def index_kernel(x: _F, ustar: _F, mut: _F, om: _F, invc: _F, out: _F) -> None: ...

__test__: dict[str, str]
