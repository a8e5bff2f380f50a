"""Typed stub of the compiled signal-model kernel (freshcore._signals); see freshcore.signals for the public API."""

import numpy as np
import numpy.typing as npt

__test__: dict[str, str]

def fit_rows(
    elapsed: npt.NDArray[np.float64],
    signals: npt.NDArray[np.float64],
    changed: npt.NDArray[np.uint8],
    a_upper: npt.NDArray[np.float64],
    b_upper: npt.NDArray[np.float64],
    alpha: npt.NDArray[np.float64],
    alpha_beta: npt.NDArray[np.float64],
    n_iter: npt.NDArray[np.intc],
    max_iter: int,
) -> None: ...
