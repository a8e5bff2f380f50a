"""The distances between an estimated and a true distribution function on the same points that Li, Cline and
Loguinov (2017) judge the blind-sampling estimators by: :func:`wmrd` (eq. (48)) and :func:`ks` (eq. (49)).

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._papers import LI_2017, cites
from ._validation import check_array

__all__ = ["ks", "wmrd"]


def _pair(estimate: Any, target: Any, caller: str) -> tuple[np.ndarray, np.ndarray]:
    h = check_array(estimate, "estimate", caller)
    g = check_array(target, "target", caller)
    if len(h) != len(g):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'estimate' has {len(h)}, "
                         f"'target' has {len(g)}.")
    return h, g


@cites(LI_2017)
def wmrd(estimate: Any, target: Any) -> float:
    """The weighted mean relative difference of two distribution functions on the same points, eq. (48) of
    Li, Cline and Loguinov (2017).

    Parameters
    ----------
    estimate, target : array-like of float, shape (m,)
        H(x_n, T) and G_U(x_n) (the paper uses x_n = nΔ, n = 1 .. 9); finite.

    Returns
    -------
    float
        Σ|H − G| / Σ (H + G)/2.

    Examples
    --------
    >>> from freshcore.blind import wmrd
    >>> round(wmrd([0.5, 1.0], [0.4, 1.0]), 6)
    0.068966
    """
    h, g = _pair(estimate, target, "wmrd")
    return float(np.abs(h - g).sum() / (0.5 * (h + g).sum()))


@cites(LI_2017)
def ks(estimate: Any, target: Any) -> float:
    """The Kolmogorov-Smirnov distance of two distribution functions on the same points, eq. (49) of Li,
    Cline and Loguinov (2017): the largest |H − G| over the points.

    Parameters
    ----------
    estimate, target : array-like of float, shape (m,)
        H(x_n, T) and G_U(x_n); finite.

    Returns
    -------
    float

    Examples
    --------
    >>> from freshcore.blind import ks
    >>> ks([0.5, 1.0], [0.4, 1.0])
    0.09999999999999998
    """
    h, g = _pair(estimate, target, "ks")
    return float(np.abs(h - g).max())
