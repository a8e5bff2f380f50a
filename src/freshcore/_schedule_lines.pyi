"""Typed stub of the scheduler bounds' test kernels."""

import numpy as np
from numpy.typing import NDArray

_F = NDArray[np.float64]

PARK_X_LEVEL: int

def park_time_many_kernel(last: _F, delta: _F, mu: _F, level: float, out: _F) -> None: ...
def park_time_kernel(last: _F, delta: _F, mu: _F, level: float, out: _F) -> None: ...
def reach_time_kernel(
    t0: _F, tau0: _F, v0: _F, psi0: _F, a: _F, mu: _F, level: float, out: _F
) -> None: ...

def psi_slope_kernel(mu: _F, a: _F, tau0: _F, psi0: _F, b: _F, g: _F, out: _F) -> None: ...

__test__: dict[str, str]
