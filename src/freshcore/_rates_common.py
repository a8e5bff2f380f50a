"""What the multiplier searches of :func:`freshcore.rates.optimal_rates` share: their tolerances and subsample
sizes, arithmetic that stays defined at the ends of the double range, R^1, the time-share across a jump of the
total, and the check that a careful solver spent the budget.

The searches themselves: ``_rates_poisson`` (Poisson crawling), ``_rates_periodic`` (periodic crawling),
``_rates_renewal`` (periodic crawling of pages whose updates form renewal processes).  Their per-page passes are
compiled (``freshcore._rates``; for renewal pages the passes of ``freshcore._renewal``); ``freshcore.rates``
validates, takes the fast paths and hands the active pages to them.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore import _rates

# The periodic solver stops once the budget is used to within this relative gap (never above it).
_PERIODIC_GAP = 1e-14
# Size of the strided subsample whose solution starts the periodic solver: at most _SUBSAMPLE
# pages and 1/_SUB_FRACTION of them, none below _SUB_MIN; solved to _SUB_GAP of its budget.
_SUBSAMPLE = 50_000
_SUB_FRACTION = 8
_SUB_MIN = 64
_SUB_GAP = 1e-4
# A fast search whose rates leave more than this share of the bandwidth unspent hands the
# problem to the careful solver of its model (which spends it to rounding).
_BUDGET_TOL = 1e-13


def _r1(x: np.ndarray) -> np.ndarray:
    """R^1(x) = 1 - e^-x (1 + x) without cancellation for small x (R^1(inf) = 1)."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x < 0.1
    xs = x[small]
    # x^2/2 - x^3/3 + x^4/8 - x^5/30 + x^6/144 - x^7/840 + ...
    poly = 0.5 - xs * (1 / 3 - xs * (1 / 8 - xs * (1 / 30 - xs * (1 / 144 - xs * (1 / 840 - xs / 5760)))))
    out[small] = xs * xs * poly
    xl = x[~small]
    with np.errstate(over="ignore", invalid="ignore"):
        out[~small] = -np.expm1(-xl) - np.where(xl < math.inf, xl * np.exp(-xl), 0.0)
    return out


def _log(x: float) -> float:
    """math.log with C's log(0) = -inf instead of an exception."""
    return math.log(x) if x > 0.0 else -math.inf if x == 0.0 else math.nan


def _ldexp(m: float, e: int) -> float:
    """math.ldexp, inf where it overflows."""
    try:
        return math.ldexp(m, e)
    except OverflowError:
        return math.inf


def _reciprocal_product(x: float, y: float, exp2: int = 0) -> float:
    """2^exp2 / (x y) for x, y > 0, also where x y or the result leave the double range.

    Rounds like ``1.0 / (x * y)`` wherever that is computed without overflow or
    underflow; inf where the result overflows, 0 where it underflows.
    """
    p = x * y
    if exp2 == 0 and 2.2250738585072014e-308 <= p < math.inf:
        return 1.0 / p
    if p == 0.0 and (x == 0.0 or y == 0.0):
        return math.inf
    if math.isinf(x) or math.isinf(y):
        return 0.0
    mx, ex = math.frexp(x)
    my, ey = math.frexp(y)
    try:
        return math.ldexp(1.0 / (mx * my), exp2 - ex - ey)
    except OverflowError:
        return math.inf


def _time_share_by(
    r_a: np.ndarray, r_b: np.ndarray, S_a: float, S_b: float, budget: float, out: np.ndarray
) -> float:
    """``_time_share`` in shares of the budget: out = r_a + (r_b - r_a) share/(S_b - S_a); returns share.

    For the careful solvers, where theta = share/(S_b - S_a) may underflow (a budget far
    below one page's jump).
    """
    share = budget - S_a
    for kk in range(9):
        if kk == 8:
            share = 0.0
        if _rates.mix_share(r_a, r_b, share, S_b - S_a, out) <= budget:
            break
        share = max(0.0, share - (2.0**kk) * 2.3e-16 * budget)
    return share


def _check_spent(rates: np.ndarray, budget: float, slack: float) -> None:
    """Raise where a careful solver left more than ``slack`` of the budget (no double-precision answer).

    A few subnormal steps per page are allowed besides: a subnormal budget is not
    spent to a relative 1e-13.
    """
    total = _rates.csum(rates)
    if not budget - slack - 4 * len(rates) * 5e-324 <= total <= budget:
        raise ValueError(
            "The 'change_rate', 'importance', 'min_rate' and 'max_rate' parameters of optimal_rates span too "
            f"wide a range for a double-precision solution at this 'bandwidth': the rates found spend {total!r} "
            f"of {budget!r}."
        )


def _bracket_closed(u_a: float, u_b: float, S_a: float, S_b: float, budget: float) -> bool:
    """Whether the bracket [u_a, u_b] of a search on u = L^-1/2 is closed: (L_a - L_b)(S_b - S_a) <= 1e-15 L_a
    budget, or u_a and u_b adjacent doubles (the periodic and renewal searches then time-share)."""
    return u_b < math.inf and (
        (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget or u_b - u_a <= 4.5e-16 * u_b)


def _log_newton(u: float, S: float, target: float, k: float, u_b: float) -> float:
    """The Newton step of the periodic and renewal searches on log S against log u from (u, S) with slope k,
    at most e^30 either way and 16 u before the bracket closes on the right; -1 without a usable slope."""
    u_n = u * math.exp(min(max(_log(target / S) / k, -30.0), 30.0)) if 0.0 < k < math.inf else -1.0
    if u_b == math.inf:
        u_n = min(u_n, 16.0 * u)  # (few pages entered yet: their slope says little)
    return u_n
