"""The update-interval distribution F_U and the update rate μ recovered from an estimate of the age distribution G_U.

G_U(x) = μ ∫_0^x (1 − F_U), so its derivative g_U = μ (1 − F_U): :func:`update_distribution` takes it by finite
differences (an :class:`UpdateDistribution`), :func:`flat_bin_width` finds the bin width where the estimated rate
is flat (Section IV of Li, Cline and Loguinov (2017)).  The estimates come from
:mod:`freshcore.blind_estimators`; :mod:`freshcore.blind` gathers the whole blind-sampling API.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._blind_validation import _points
from ._papers import LI_2017, cites
from ._validation import check_array, check_int, check_scalar

__all__ = ["UpdateDistribution", "flat_bin_width", "update_distribution"]


def _derivative_weights(z: float, xs: np.ndarray, order: int = 1) -> np.ndarray:
    """Weights w with sum w_i f(xs_i) ≈ f^(order)(z), exact for polynomials of degree < len(xs) (Fornberg's
    recursion, "Generation of finite difference formulas on arbitrarily spaced grids", 1988)."""
    n = len(xs)
    c = np.zeros((n, order + 1))
    c[0, 0] = 1.0
    c1, c4 = 1.0, xs[0] - z
    for i in range(1, n):
        mn = min(i, order)
        c2, c5, c4 = 1.0, c4, xs[i] - z
        for j in range(i):
            c3 = xs[i] - xs[j]
            c2 *= c3
            if j == i - 1:
                for k in range(mn, 0, -1):
                    c[i, k] = c1 * (k * c[i - 1, k - 1] - c5 * c[i - 1, k]) / c2
                c[i, 0] = -c1 * c5 * c[i - 1, 0] / c2
            for k in range(mn, 0, -1):
                c[j, k] = (c4 * c[j, k] - k * c[j, k - 1]) / c3
            c[j, 0] = c4 * c[j, 0] / c3
        c1 = c2
    return c[:, order]


def _rate_from_integral(x: np.ndarray, integral: np.ndarray) -> float:
    """g_U(0) from I = ∫_0^x G_U at the points x (> 0): I(0) = I'(0) = 0, so I(x) = Σ_{j=2}^{m+1} a_j x^j through
    the m points gives g_U(0) = I''(0) = 2 a_2 (error O(h^m))."""
    scale = x[-1]
    a = np.linalg.solve((x[:, None] / scale) ** np.arange(2, len(x) + 2)[None, :], integral)
    return float(2.0 * a[0] / scale**2)


def _density(xs: np.ndarray, g: np.ndarray, points: int, order: int = 1) -> np.ndarray:
    """The derivative of that order of g at every xs from a `points`-point stencil: one-sided at the ends,
    centred inside.  Stencils of the same shape (all of them on an even grid, but the ends) share their
    weights."""
    n = len(xs)
    half = (points - 1) // 2
    out = np.empty(n)
    cache: dict[tuple[float, ...], np.ndarray] = {}
    for p in range(n):
        lo = min(max(p - half, 0), n - points)
        rel = xs[lo:lo + points] - xs[p]
        scale = rel[-1] - rel[0]
        unit = rel / scale
        key = tuple(np.round(unit, 12).tolist())
        w = cache.get(key)
        if w is None:
            w = cache[key] = _derivative_weights(0.0, unit, order)
        out[p] = (w @ g[lo:lo + points]) / scale**order
    return out


@dataclass(frozen=True)
class UpdateDistribution:
    """F_U and μ recovered from an estimate of G_U (:func:`update_distribution`).

    Attributes
    ----------
    x : ndarray, shape (m + 1,)
        0 and the points of the estimate.
    cdf : ndarray, shape (m + 1,)
        F_U(x) = 1 − g_U(x)/g_U(0).
    density : ndarray, shape (m + 1,)
        g_U(x) = G_U'(x) = μ (1 − F_U(x)).
    rate : float
        μ = g_U(0) = 1/E[U].
    """

    x: np.ndarray
    cdf: np.ndarray
    density: np.ndarray
    rate: float


@cites(LI_2017)
def update_distribution(age_cdf: Any, x: Any, *, points: int = 5, averages: bool = False) -> UpdateDistribution:
    """Recover the update-interval distribution F_U and the update rate μ from an estimate of G_U.

    G_U(x) = μ ∫_0^x (1 − F_U), so its derivative g_U = μ(1 − F_U): μ = g_U(0) and F_U = 1 − g_U/g_U(0)
    (Section IV-A of Li, Cline and Loguinov (2017)).  The derivative is taken by ``points``-point finite
    differences (Section IV-E): one-sided at 0 (with G_U(0) = 0) and at the last point, centred in between.

    Parameters
    ----------
    age_cdf : array-like of float, shape (m,)
        The estimate of G_U at the points ``x`` (from :func:`~freshcore.blind.m2`, :func:`~freshcore.blind.m4`,
        :func:`~freshcore.blind.m5` or :func:`~freshcore.blind.m6`); finite.
    x : array-like of float > 0, shape (m,), strictly increasing
        Where ``age_cdf`` holds (with ``averages``: the right ends of the bins).
    points : int >= 2, default 5
        Points of each stencil (the error of a k-point formula is O(h^{k-1})); m + 1 >= points.
    averages : bool, default False
        ``age_cdf[n]`` is the average of G_U over (x[n − 1], x[n]] (x[−1] = 0), as :func:`~freshcore.blind.m6`
        estimates with a sampler whose renewal weight is flat across a bin (exponential sampling): the sums of the
        averages times the bin widths are then I(x) = ∫_0^x G_U exactly, and g_U is its second derivative
        (``points`` >= 3; at 0 from the polynomial with I(0) = I'(0) = 0 through the first points − 1).

    Returns
    -------
    UpdateDistribution

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Pareto, update_distribution
    >>> x = 0.01 * np.arange(1, 301)
    >>> r = update_distribution(Pareto(3.0).age_cdf(x), x)
    >>> round(r.rate, 4), round(float(np.abs(r.cdf - Pareto(3.0).cdf(r.x)).max()), 4)
    (2.0, 0.0)
    """
    caller = "update_distribution"
    g = check_array(age_cdf, "age_cdf", caller)
    xs = _points(x, caller)
    if len(xs) != len(g):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'age_cdf' has {len(g)}, "
                         f"'x' has {len(xs)}.")
    if xs[0] <= 0.0:
        raise ValueError(f"The 'x' parameter of {caller} must contain numbers > 0 (G_U(0) = 0 is added); "
                         f"x[0] = {xs[0].item()!r}.")
    k = check_int(points, "points", caller, low=3 if averages else 2, high=len(xs) + 1)
    xs = np.concatenate(([0.0], xs))
    if averages:
        integral = np.concatenate(([0.0], np.cumsum(np.diff(xs) * g)))
        dens = _density(xs, integral, k, order=2)
        dens[0] = _rate_from_integral(xs[1:k], integral[1:k])
    else:
        dens = _density(xs, np.concatenate(([0.0], g)), k)
    rate = float(dens[0])
    if not rate > 0.0:
        raise ValueError(f"The 'age_cdf' parameter of {caller} must rise at 0 (the slope there is the update rate); "
                         f"its {k}-point slope at 0 is {rate!r}.")
    return UpdateDistribution(x=xs, cdf=1.0 - dens / rate, density=dens, rate=rate)


@cites(LI_2017)
def flat_bin_width(estimate: Callable[[float], Any], low: float, high: float, *, points: int = 5,
                   rtol: float = 0.01, xtol: float = 0.01, averages: bool = False) -> float:
    """The bin width h for recovering μ: the largest h in [low, high] where the estimated rate is flat.

    With bins too wide, the finite difference at 0 misses the curvature of G_U (the estimated E[U] = 1/μ
    falls as h shrinks); once h is small enough the estimate stays put (Fig. 8(a) of Li, Cline and Loguinov
    (2017)) until, at still smaller h, too few samples fall in the first bins and noise takes over.  The
    search halves h from ``high`` until the estimated rate at h agrees with the one at h/2 within ``rtol``
    (the top of the flat region), then bisects on a log scale between that h and 2h for the largest such h.

    Parameters
    ----------
    estimate : callable
        ``estimate(h)`` returns ``(x, G)``: the estimate of G_U at (at least ``points − 1``) points x > 0
        spaced h apart, e.g. ``lambda h: (h * n, m2(ages, h * n))`` with ``n = np.arange(1, 5)``.
    low, high : float, 0 < low < high
        The search range.
    points : int >= 2, default 5
        Points of the one-sided stencil at 0.
    rtol : float > 0, default 0.01
        Flat: |μ(h) − μ(h/2)| <= rtol μ(h/2).
    xtol : float > 0, default 0.01
        Stop when high/low < 1 + xtol.
    averages : bool, default False
        The estimate holds bin averages, as in :func:`update_distribution` (e.g. ``lambda h: (h * n,
        m6(times, changed, h, 4))``).

    Returns
    -------
    float
        h.

    Raises
    ------
    ValueError
        If the estimate is flat nowhere in [low, high] (too few samples for ``rtol``).

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.blind import Pareto, flat_bin_width
    >>> g = Pareto(3.0).age_cdf
    >>> n = np.arange(1, 5)
    >>> h = flat_bin_width(lambda h: (h * n, g(h * n)), 1e-4, 1.0)
    >>> 0.05 < h < 0.5
    True
    """
    caller = "flat_bin_width"
    if not callable(estimate):
        raise TypeError(f"The 'estimate' parameter of {caller} must be callable. Got {type(estimate).__name__}.")
    lo = check_scalar(low, "low", caller, low=0.0, low_inclusive=False)
    hi = check_scalar(high, "high", caller, low=lo, low_inclusive=False)
    k = check_int(points, "points", caller, low=3 if averages else 2)
    rt = check_scalar(rtol, "rtol", caller, low=0.0, low_inclusive=False)
    xt = check_scalar(xtol, "xtol", caller, low=0.0, low_inclusive=False)

    def rate(h: float) -> float:
        xv, gv = estimate(h)
        xv, gv = np.asarray(xv, dtype=float)[: k - 1], np.asarray(gv, dtype=float)[: k - 1]
        if len(xv) < k - 1:
            raise ValueError(f"The 'estimate' of {caller} must return at least points - 1 = {k - 1} values.")
        if averages:
            return _rate_from_integral(xv, np.cumsum(np.diff(np.concatenate(([0.0], xv))) * gv))
        return float(_derivative_weights(0.0, np.concatenate(([0.0], xv))) @ np.concatenate(([0.0], gv)))

    def flat(h: float) -> bool:
        a, b = rate(h), rate(0.5 * h)
        return bool(abs(a - b) <= rt * abs(b))

    h = hi
    while not flat(h):
        h *= 0.5
        if h < lo:
            raise ValueError(f"The estimate of {caller} is flat nowhere in [low, high] = [{lo!r}, {hi!r}] (its rate "
                             f"moves by more than rtol={rt!r} between h and h/2): more samples, or a larger "
                             "'rtol', are needed.")
    if h == hi:
        return hi
    lo, hi = h, min(2.0 * h, hi)  # flat at lo, not at hi
    while hi / lo > 1.0 + xt:
        mid = math.sqrt(lo * hi)
        if flat(mid):
            lo = mid
        else:
            hi = mid
    return lo
