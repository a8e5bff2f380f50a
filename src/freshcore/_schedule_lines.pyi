"""Typed stub of the scheduler bounds' test kernels."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

def park_time_kernel(last: _F, delta: _F, mu: _F, level: float, out: _F) -> None: ...

__test__: dict[str, str]
