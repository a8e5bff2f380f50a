"""Optimal crawl rates under a bandwidth budget, and the freshness of a crawl-rate vector.

Three models of how a page is crawled at rate ``r``:

* ``"poisson"`` (eq. (10) of Avrachenkov et al. (2020)): crawls form a
  Poisson process; a page changing at rate Delta is fresh a fraction
  ``F = r/(r + Delta)`` of the time.
* ``"periodic"`` (eq. (5) of Busa-Fekete et al. (2025), after Cho and
  Garcia-Molina (2003) and Azar et al. (2018)): crawls are evenly spaced,
  ``F = (r/Delta)(1 - exp(-Delta/r))``.
* ``"renewal"`` (beyond Li, Cline and Loguinov (2017), whose estimators give
  G): crawls are evenly spaced and the page's updates form a stationary
  renewal process, not necessarily Poisson, with age distribution G (the
  forward-recurrence law); crawled every ``I = 1/r`` it is fresh at age ``a``
  of a crawl with probability ``1 - G(a)``: ``F = r ∫_0^{1/r} (1 - G)``.
  ``change_rate`` then holds the pages' update laws (tabulated in a
  :class:`freshcore.blind.AgeTable`, or exact :mod:`freshcore.blind` laws); a
  change rate Delta stands for Poisson updates, G = 1 - exp(-Delta a), for
  which the model is ``"periodic"``.

``optimal_rates`` maximises ``sum_i w_i F_i(r_i)`` subject to
``sum_i r_i <= bandwidth`` and ``min_rate <= r <= max_rate``; ``freshness``
evaluates ``sum_i w_i F_i / sum_i w_i`` for any crawl-rate vector.  The
per-page passes are compiled (``freshcore._rates``); this module validates,
sorts and runs the line search on the multiplier, one compiled pass per step
(the Poisson model without maximum rates runs its whole Newton in one compiled
call, the periodic model each of its searches, on a subsample and on all pages;
the renewal model's per-page passes are those of ``freshcore._renewal``).

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal freshness in web page
   crawling", VALUETOOLS 2020.
.. [2] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
.. [3] J. Cho, H. Garcia-Molina, "Effective page refresh policies for web crawlers", ACM Transactions
   on Database Systems 28(4), 2003.
.. [4] Y. Azar, E. Horvitz, E. Lubetzky, Y. Peres, D. Shahaf, "Tractable near-optimal policies for
   crawling", PNAS 115(32), 2018.
.. [5] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking 25(1), 2017.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeGuard, overload

import numpy as np
from numpy.typing import ArrayLike

from freshcore import _rates, _renewal
from freshcore._papers import AVRACHENKOV_2020, BUSA_FEKETE_2025, LI_2017, cites
from freshcore._validation import (
    check_array,
    check_choice,
    check_same_length,
    check_scalar,
)

if TYPE_CHECKING:
    from freshcore.blind import IntervalDistribution

__all__ = ["RatesResult", "freshness", "optimal_rates"]

# How pages change: change rates Delta_i, or (model "renewal") their update laws
ChangeRate: TypeAlias = "ArrayLike | _renewal.AgeTable | Sequence[IntervalDistribution]"

_MODELS = ("poisson", "periodic", "renewal")
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
# Passes of the sort-free Poisson Newton (no maximum rates) before it hands the problem to the
# sorted search: 3-4 on uniform change rates and importance, about 5 over twelve decades (from
# the all-active start, below 512 pages: 4-5 and up to about 20).
_NEWTON_PASSES = 60


@dataclass(frozen=True)
class RatesResult:
    """Solution of :func:`optimal_rates` (``return_details=True``).

    Attributes
    ----------
    crawl_rate : ndarray of shape (n_pages,)
        Optimal crawl rates.
    multiplier : float
        Lagrange multiplier L of the budget: the marginal objective of one
        more unit of bandwidth.  0 when the budget is not binding (every
        page that matters is at its ``max_rate``); rounded to 0 or inf where
        it lies outside the double range.
    objective : float
        ``sum_i w_i F_i(r_i)``; equals ``freshness(crawl_rate, change_rate,
        importance, model) * sum(importance)``.  Pages with zero change rate
        count as always fresh.
    n_crawled : int
        Number of pages with a positive crawl rate (the pages crawled).
    """

    crawl_rate: np.ndarray
    multiplier: float
    objective: float
    n_crawled: int


def _bound(x: Any, name: str, n: int, caller: str, *, allow_inf: bool) -> np.ndarray:
    if isinstance(x, numbers.Real) or (isinstance(x, np.ndarray) and x.ndim == 0):
        v = check_scalar(x, name, caller, low=0.0, allow_inf=allow_inf)
        return np.full(n, v)
    arr = check_array(x, name, caller, low=0.0, allow_inf=allow_inf)
    if len(arr) != n:
        raise ValueError(
            f"The {name!r} parameter of {caller} must be a number or an array of length {n} "
            f"(the number of pages). Got length {len(arr)} instead."
        )
    return arr


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


def _poisson_search(
    s: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, keys: np.ndarray, budget: float, out: np.ndarray
) -> tuple[float, float]:
    """u = L^-1/2 of the Poisson optimum and the total of the rates written to ``out``.

    One compiled pass per step.  ``keys``: the sorted breakpoints (lo_i + Delta_i)/s_i and
    the finite (hi_i + Delta_i)/s_i, all finite and positive; requires
    sum(lo) < budget < sum(hi).  S is linear on each segment [keys[m], keys[m + 1]]
    (keys[K] = inf), m = 0..K-1, and S(keys[0]) = sum(lo).  Each pass evaluates S and its
    slope at the middle of one segment (never at a breakpoint, where rounding could
    misclassify a page); the linear extension either meets the budget inside that segment
    (the closed form: done) or names the segment to try next (Newton on the piecewise-linear
    S), safeguarded by bisection on the segment index (O(log N) passes at worst).  A final
    total over the budget (rounding) steps u down until it is not.  The closed form
    u_m + (B - S(u_m))/slope loses the digits that S(u_m) - B and s_i u - Delta_i cancel;
    the caller checks the total.
    """
    pass_ = _rates.PoissonPass(s, dl, lo, hi)
    K = len(keys)
    # start where S would reach the budget if every page were unclipped (for lo = 0 and
    # hi = inf this is right of the root, where Newton on the convex S converges monotonically)
    m = int(keys.searchsorted((budget + _rates.csum(dl)) / _rates.csum(s), "right")) - 1
    seg_lo, seg_hi = 0, K - 1
    widths = [0, 0, 0, 0]  # the last four widths of the segment range
    nh = 0
    while True:
        m = min(max(m, seg_lo), seg_hi)
        left: float = keys.item(m)
        right: float = keys.item(m + 1) if m + 1 < K else math.inf
        u_m = 0.5 * (left + right) if m + 1 < K else 2.0 * left + 1.0
        S_m, slope_m = pass_(u_m)
        u = u_m + (budget - S_m) / slope_m if slope_m > 0.0 else u_m
        if (slope_m > 0.0 and left <= u <= right) or S_m == budget or seg_lo == seg_hi:
            u = min(max(u, left), right)
            break
        if S_m < budget:
            seg_lo = m + 1
        else:
            seg_hi = m - 1
        if seg_lo > seg_hi:  # rounding at a breakpoint: the root is at keys[m] or keys[m + 1]
            u = left if S_m > budget else right
            break
        if slope_m > 0.0 and not math.isnan(u):
            m = int(keys.searchsorted(u, "right")) - 1
        else:
            m = (seg_lo + seg_hi) // 2
        widths[nh % 4] = seg_hi - seg_lo
        nh += 1
        if nh >= 4 and widths[(nh - 1) % 4] > widths[(nh - 4) % 4] // 2:
            m = (seg_lo + seg_hi) // 2
            nh = 0
    total, _ = pass_(u, out)
    step = 2.0**-52
    while total > budget and u > 0.0:
        u = u * (1.0 - step)
        step *= 2.0
        total, _ = pass_(u, out)
    return u, total


def _poisson_careful(
    w: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float, slack: float, out: np.ndarray
) -> float:
    """Poisson optimum for any finite inputs (rates written to ``out``); returns the multiplier.

    Works on the breakpoint form of the rates, r_i(u) = min(lo_i + s_i (u - a_i), hi_i)
    between a_i = (lo_i + Delta_i)/s_i and c_i = a_i + (hi_i - lo_i)/s_i, lo_i left of
    a_i and hi_i from c_i on (``_rates.PoissonKeyPass``): exact at a breakpoint, with no
    s_i u - Delta_i to cancel however far Delta_i is above the budget.  Bisection on the
    sorted breakpoints finds the segment [k_m, k_(m+1)) holding S(u) = B (S is monotone in
    u, also in floating point); on it the pages rising get S(k_m)'s rates plus the rest
    of the budget in proportion to s_i, capped at the segment's end, without forming u
    (beyond the double range on the last segment when the rates dwarf the breakpoints).
    Where S jumps (a page whose a_i and c_i are one double goes from lo_i to hi_i at
    once) the budget is time-shared between the rates on either side.  The importance is
    rescaled by 4^-k (s_i by 2^-k and the breakpoints by 2^k, exactly; the rates do not
    change) so that s_i and the breakpoints stay doubles where they can.
    """
    mw, ew = np.frexp(np.sqrt(w))
    md, ed = np.frexp(np.sqrt(dl))
    es = ew + ed  # s_i < 2^es_i
    k = 0
    free = hi > lo  # (pages with min_rate = max_rate do not move)
    if free.any():
        # breakpoints a_i, c_i < 2^ec_i (roughly): (lo_i + Delta_i) and (hi_i + Delta_i) over s_i
        ec = np.log2(np.maximum(np.where(np.isinf(hi), lo, hi), dl)[free]) + 2.0 - es[free]
        # k keeps every s_i 2^-k and breakpoint 2^k below 2^1000 where both fit, then
        # s_i 2^-k above 2^-1000 where that fits too, then k = 0
        k_lo, k_hi = int(es[free].max()) - 1000, 1000 - math.ceil(float(ec.max()))
        k = min(max(min(0, int(es[free].min()) + 1000), k_lo), k_hi) if k_lo <= k_hi else k_lo
    s = np.ldexp(mw * md, es - k)
    # (a page whose s_i 2^-k underflows stays at its minimum: its breakpoints are past the range)
    a = np.where(s > 0.0, lo / s + dl / s, math.inf)
    c = np.where(s > 0.0, a + (hi - lo) / s, math.inf)
    ends = np.concatenate([a, c])
    keys = np.sort(ends[np.isfinite(ends)])
    pass_ = _rates.PoissonKeyPass(s, a, c, lo, hi)
    j_lo, j_hi = 0, len(keys)  # S(keys[j_lo]) <= B < S(keys[j_hi]) (S(keys[0]) = sum(lo), keys[K] = inf)
    while j_hi - j_lo > 1:
        mid = (j_lo + j_hi) // 2
        if pass_(keys.item(mid))[0] <= budget:
            j_lo = mid
        else:
            j_hi = mid
    base: float = keys.item(j_lo) if len(keys) else 0.0
    nxt: float = keys.item(j_hi) if j_hi < len(keys) else math.inf
    total, slope = pass_(base, out)
    u_a = u_b = base
    partner = math.nextafter(base, math.inf)
    if pass_(partner)[0] <= budget:
        partner = nxt
        if slope > 0.0:
            # Rates at base + q, q = (B - S(base))/slope, stopping at the segment's end
            sm, se = math.frexp(slope)
            share = budget - total
            for kk in range(9):
                if kk == 8:
                    share = 0.0
                qm, qe = math.frexp(share)
                qm, qe = qm / sm, qe - se  # q = share/slope = qm 2^qe, whatever its size
                if nxt < math.inf and _ldexp(qm, qe) >= nxt - base:
                    qm, qe = math.frexp(nxt - base)
                total = pass_.spend(base, qm, qe, out)
                if total <= budget:
                    break
                # rounding put the total over the budget: take back a few ulps of it
                share = max(0.0, share - (2.0**kk) * 2.3e-16 * budget)
            u_a = u_b = base + _ldexp(qm, qe)
    if total < budget - slack and partner < math.inf:
        # S jumps at partner (right after base, or at the segment's end): a page whose
        # breakpoints a_i and c_i are one double goes from lo_i to hi_i there.  Time-share
        # with the rates at partner; both are KKT solutions.
        r_a, r_b = out.copy(), np.empty(len(out))
        S_b, _ = pass_(partner, r_b)
        _time_share_by(r_a, r_b, total, S_b, budget, out)
        u_b = partner
    _check_spent(out, budget, slack)
    return _reciprocal_product(u_a, u_b, 2 * k)


def _solve_poisson(
    w: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float, slack: float
) -> tuple[np.ndarray, float]:
    """Poisson optimum on the active pages: (rates, multiplier).

    Handles the trivial cases, sorts the breakpoints and runs the search
    (``_poisson_search``); a total it leaves more than ``slack`` under the budget,
    or breakpoints outside the double range, hand the problem to
    ``_poisson_careful``.  (Without maximum rates ``optimal_rates`` first tries the
    sort-free Newton, ``_rates.poisson_solve``.)
    """
    n = len(w)
    out = np.empty(n)
    if n == 0:
        return out, 0.0
    if not np.isinf(hi).any() and _rates.csum(hi) <= budget:
        out[:] = hi
        return out, 0.0
    s = np.sqrt(w) * np.sqrt(dl)
    ua = (lo + dl) / s
    if np.isinf(hi).all():
        keys = np.sort(ua)
    else:
        ub = (hi + dl) / s
        keys = np.sort(np.concatenate([ua, ub[np.isfinite(ub)]]))
    # the plain search needs every s_i a normal double (accurate) and every breakpoint finite
    plain = keys[0] > 0.0 and keys[-1] < math.inf and float(s.min()) >= 2.2250738585072014e-308
    if _rates.csum(lo) >= budget:  # no room above the minima (budget == sum(min_rate))
        out[:] = lo
        if plain:
            return out, _reciprocal_product(keys.item(0), keys.item(0))
        # max_i G_i'(lo_i) = max_i w_i Delta_i/(lo_i + Delta_i)^2, in logarithms
        log_g = np.log(w) + np.log(dl) - 2.0 * np.logaddexp(np.log(lo), np.log(dl))
        return out, float(np.exp(np.max(log_g)))
    if plain:
        u, total = _poisson_search(s, dl, lo, hi, keys, budget, out)
        if budget - slack <= total <= budget and 0.0 < u < math.inf:
            return out, _reciprocal_product(u, u)
    return out, _poisson_careful(w, dl, lo, hi, budget, slack, out)


def _periodic_search(
    b: np.ndarray, dl: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, budget: float, slack: float,
    u: float, out: np.ndarray, gap: float = _PERIODIC_GAP, slope: list[float] | None = None,
) -> tuple[float, float] | None:
    """Periodic optimum from the start ``u`` (rates written to ``out``): (u_a, u_b), or None.

    The compiled search (``_rates.periodic_search``: every pass and step without the GIL); lo/hi
    None are min_rate 0 and max_rate inf for every page.  Requires sum(lo) < budget (1 - gap) and
    budget < sum(hi).  Safeguarded Newton on log S against log u (S grows like a power of u; plain
    Newton in u overshoots badly from a small start): for a step predicted to cross many entering
    pages the secant slope of the last two points, or before there is one the caller's ``slope`` (a
    subsample's; pages entering at u = b_i add ~Delta_i/37 almost at once, which the local
    derivative misses), for a step across a few the analytic derivative (exact on a smooth
    stretch); bisection when the steps do not halve in 3.  ``gap``: the acceptance (a subsample is
    solved to 1e-4).  Stops when S is in [budget (1 - gap), budget], or when the bracketing
    solutions satisfy (L_a - L_b)(S_b - S_a) <= 1e-15 budget (or u_a, u_b are adjacent doubles) and
    then time-shares between them.  None where the pass is not accurate (min b_i below 2^-500, u
    outside [2^-500, 2^500] or above 2^500 min b_i, where b_i^2 or c_i = (b_i/u)^2 leave the normal
    doubles), after 300 steps, or when more than ``slack`` of the budget is left: the caller then
    solves with ``_periodic_careful``.  ``slope[0]`` gets the last wide secant slope.
    """
    found, u_a, u_b, k, _ = _rates.periodic_search(
        b, dl, lo, hi, 0.0, math.inf, budget, slack, u, gap, slope[0] if slope is not None else math.nan, out
    )
    if slope is not None:
        slope[0] = k
    return (u_a, u_b) if found else None


def _periodic_careful(
    mu: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float, slack: float, out: np.ndarray
) -> float:
    """Periodic optimum for any finite inputs (rates written to ``out``); returns the multiplier.

    The search of ``_periodic_search`` with u = x 2^e: the pass
    (``_rates.PeriodicScaledPass``) takes b_i and s_i = sqrt(mu_i Delta_i) as mantissa
    and exponent, and far right of its threshold a page's rate is the closed form
    u s_i/sqrt(2), so u, b_i and s_i may lie anywhere in (0, inf); x stays within
    2^+-500 and e moves.  It starts at min b_i (every page at its minimum) and at the
    lower bound (B - sum(lo)) sqrt(2)/sum(s_i) of the root, grows by 2^40 while nothing is
    above the budget, bisects geometrically while the bracket spans more than a factor 4.
    """
    md, ed = np.frexp(np.sqrt(dl))
    mm, em = np.frexp(np.sqrt(mu))
    bm, be = md / mm, (ed - em).astype(np.intc)
    sm, se = md * mm, (ed + em).astype(np.intc)
    pass_ = _rates.PeriodicScaledPass(bm, be, sm, se, dl, lo, hi)
    n = len(dl)
    lo_sum = _rates.csum(lo)
    accept = budget * (1.0 - _PERIODIC_GAP)
    target = budget * (1.0 - 0.5 * _PERIODIC_GAP)
    # min b_i = bm_j 2^be_j sets the scale: x = u 2^-e
    j = int(np.argmin(be + np.log2(bm)))
    e = int(be[j])
    u_a, S_a = float(bm[j]), lo_sum
    # the lower bound of the root: S(u) <= sum(lo) + u sum(s_i)/sqrt(2)
    E = int(se.max())
    q = min((budget - lo_sum) * math.sqrt(2.0) / _rates.csum(np.ldexp(sm, se - E)), 1.7976931348623157e308)
    qm, qe = math.frexp(q)
    shift = qe - E - e  # u_start = qm 2^(shift + e)
    u = math.ldexp(qm, shift) if -900 < shift < 900 else (math.inf if shift > 0 else 0.0)
    u = min(max(u, u_a * (1.0 + 2.0**-20)), 2.0**400)
    u_b, S_b = math.inf, math.inf
    u_p, S_p = 0.0, 0.0
    r_a, r_b, r_w = lo.copy(), np.empty(n), np.empty(n)
    widths = [0.0, 0.0, 0.0, 0.0]
    nh = 0
    for _ in range(600):
        S, uD = pass_(u, e, r_w)
        if S <= budget:
            u_a, S_a = u, S
            r_a, r_w = r_w, r_a
            if S >= accept:
                u_b = u
                break
        else:
            u_b, S_b = u, S
            r_b, r_w = r_w, r_b
        if u_b < math.inf and (
                (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget
                or u_b - u_a <= 4.5e-16 * u_b):
            break
        k = uD / S if (uD > 0.0 and S > 0.0) else -1.0
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
            k_sec = _log(S / S_p) / _log(u / u_p)
            if k_sec > 0.0:
                k = k_sec
        u_p, S_p = u, S
        u_n = u * math.exp(min(max(_log(target / S) / k, -30.0), 30.0)) if 0.0 < k < math.inf else -1.0
        if u_b == math.inf:
            u_n = min(u_n, 16.0 * u)  # (few pages entered yet: their slope says little)
        widths[nh % 4] = u_b - u_a
        nh += 1
        if (not (u_a < u_n < u_b) or (nh >= 4 and widths[(nh - 1) % 4] > 0.5 * widths[(nh - 4) % 4])
                or abs(u_n - u) <= 9e-16 * u):
            if u_b == math.inf:
                u_n = u * 2.0**40
            elif u_a > 0.0 and u_b > 4.0 * u_a:
                u_n = math.sqrt(u_a) * math.sqrt(u_b)
            else:
                u_n = 0.5 * (u_a + u_b)
            nh = 0
        u = u_n
        f = math.frexp(u)[1]
        if abs(f) > 500:  # move the scale so that u stays within 2^+-500
            e += f
            u, u_a, u_b, u_p = (math.ldexp(v, -f) for v in (u, u_a, u_b, u_p))
    share = 0.0
    if u_b < math.inf and S_a < accept and S_b < math.inf:
        # time-share as _periodic_search does, in shares of the budget rather than theta, which
        # underflows when the budget is far below one page's entry jump
        share = _time_share_by(r_a, r_b, S_a, S_b, budget, out)
    else:
        out[:] = r_a
    _check_spent(out, budget, slack)
    return _reciprocal_product(u_a, u_a if share == 0.0 else u_b, -2 * e)


def _floor_multiplier(mu: np.ndarray, dl: np.ndarray, lo: np.ndarray) -> float:
    """The smallest periodic multiplier that keeps every page at its minimum: max_i G_i'(lo_i).

    G'(r) = (mu/Delta) R^1(Delta/r); in logarithms where the product leaves the double range.
    """
    x = dl / lo
    r1 = _r1(x)
    g = mu / dl * r1
    bad = ~np.isfinite(g) | ((g == 0.0) & (x > 0.0))
    if bad.any():
        # R^1(x) = x^2/2 (1 + O(x)) where it underflows
        lr1 = np.where(r1[bad] > 0.0, np.log(r1[bad]), 2.0 * np.log(x[bad]) - math.log(2.0))
        g[bad] = np.exp(np.log(mu[bad]) - np.log(dl[bad]) + lr1)
    return float(np.max(g))


def _solve_periodic(
    mu: np.ndarray, dl: np.ndarray, lo: np.ndarray | None, hi: np.ndarray | None, budget: float, slack: float
) -> tuple[np.ndarray, float]:
    """Periodic optimum on the active pages: (rates, multiplier).

    Handles the trivial cases, picks the start and runs the search
    (``_periodic_search``); where that search is not accurate or does not spend the
    budget, ``_periodic_careful`` solves.  ``lo`` and ``hi`` None: min_rate 0 and
    max_rate inf for every page (the same numbers as arrays of them, the same bits).
    """
    n = len(dl)
    if hi is not None and not np.isinf(hi).any() and _rates.csum(hi) <= budget:
        return hi.copy(), 0.0
    if lo is not None and _rates.csum(lo) >= budget * (1.0 - _PERIODIC_GAP):
        return lo.copy(), _floor_multiplier(mu, dl, lo)
    b = np.sqrt(dl / mu)
    u = math.nan
    slope = [math.nan]  # the subsample's last wide secant slope of log S against log u
    m = min(_SUBSAMPLE, n // _SUB_FRACTION)
    if m >= _SUB_MIN:
        # Start from the solution of an evenly strided subsample of m pages (budget scaled to it),
        # solved to _SUB_GAP: it lands within about 1/sqrt(m) of the root and saves full passes.
        sub = slice(None, None, n // m)
        sb, sdl, smu = (np.ascontiguousarray(x[sub]) for x in (b, dl, mu))
        slo = None if lo is None else np.ascontiguousarray(lo[sub])
        shi = None if hi is None else np.ascontiguousarray(hi[sub])
        s_budget = budget * len(sb) / n
        if (shi is None or np.isinf(shi).any() or _rates.csum(shi) > s_budget) and (
                0.0 if slo is None else _rates.csum(slo)) < s_budget * (1.0 - _PERIODIC_GAP):
            s_total = _rates.csum(np.sqrt(0.5 * smu * sdl))
            s_start = s_budget / s_total if s_total > 0.0 else math.nan
            found = _periodic_search(
                sb, sdl, slo, shi, s_budget, slack * len(sb) / n, s_start, np.empty(len(sb)), _SUB_GAP, slope
            )
            if found is not None:
                u = math.sqrt(found[0] * found[1])
    if not 0.0 < u < math.inf:
        # small-c start: xi ~ sqrt(mu Delta / 2) u for every page
        total = _rates.csum(np.sqrt(0.5 * mu * dl))
        u = budget / total if total > 0.0 else math.nan
    out = np.empty(n)
    found = _periodic_search(b, dl, lo, hi, budget, slack, u, out, slope=slope)
    if found is not None:
        return out, _reciprocal_product(*found)
    lo = np.zeros(n) if lo is None else lo
    hi = np.full(n, math.inf) if hi is None else hi
    return out, _periodic_careful(mu, dl, lo, hi, budget, slack, out)


def _periodic_default(
    dl: np.ndarray, mu: np.ndarray, bandwidth: float, return_details: bool
) -> np.ndarray | RatesResult | None:
    """The periodic optimum with the default bounds (min_rate 0, max_rate inf), or None.

    One compiled pass (``_rates.check_pages``) checks the arrays and counts the pages that
    matter (change rate and importance > 0); None where an entry is bad (the caller's
    checks then raise their error) or no page matters (the general path's trivial case).
    Both paths of ``optimal_rates`` call it with the same pages, so that a list and an
    array, or a memory map, give the same bits.
    """
    n = len(dl)
    n_bad, n_active = _rates.check_pages(dl, mu)
    if n_bad or n_active == 0:
        return None
    slack = _BUDGET_TOL * bandwidth
    # (over- and underflow are expected at the ends of the double range: see optimal_rates)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if n_active == n:
            rates, multiplier = _solve_periodic(mu, dl, None, None, bandwidth, slack)
        else:
            idx = np.flatnonzero((mu > 0) & (dl > 0))
            sub, multiplier = _solve_periodic(mu[idx], dl[idx], None, None, bandwidth, slack)
            rates = np.zeros(n)
            rates[idx] = sub
    if not return_details:
        return rates
    return _details(rates, dl, mu, True, multiplier)


_RENEWAL_PASSES = 300  # the renewal search's passes at most (about 8 on 10^3 to 10^6 tabulated pages)


def _renewal_search(
    pass_: _renewal.Pass, entry: np.ndarray, lo: np.ndarray, budget: float, u: float, out: np.ndarray,
    gap: float = _PERIODIC_GAP,
) -> tuple[float, float]:
    """Renewal optimum from the start ``u`` (rates written to ``out``): (u_a, u_b), u_b = u_a unless time-shared.

    Requires sum(lo) < budget (1 - gap) < S(inf).  ``pass_(u, out)`` gives S(u) and dS/du: S is
    non-decreasing in u = Lambda^-1/2 and jumps where a page's rate leaves 0 at a positive value (at its
    entry ``entry[i]`` = (w_i E[A_i])^-1/2 when its G reaches 1, as constant intervals do) or crosses a flat
    stretch of G.  Newton on log S against log u: the analytic derivative, or across a wide step (log u
    moved by more than 1e-4) the secant of the last two points, which sees the pages that entered between
    them; at most 16 times up until S exceeds the budget.  Safeguards: where the step leaves the bracket,
    the miss |log(S/B)| does not halve in 3 steps, or the bracket's secant is 4 times steeper than S at
    either end (a jump inside), the next point is just after, then just before, the middle entry inside
    the bracket (8 ulps either side: both sides of a jump in two passes); without one, where a page entered
    closer to the bracket than its width (its rate rises like 1/log(u - entry)), the geometric mean of the
    bracket's distances to that entry; else bisection (geometric while the bracket spans more than a factor
    4).  Stops when S is in [budget (1 - gap), budget] (``gap``:
    1e-14; a subsample is solved to 1e-4), or when the bracketing solutions satisfy (L_a - L_b)(S_b - S_a)
    <= 1e-15 L_a budget (or u_a, u_b are adjacent doubles) and then time-shares between them, as the
    periodic search does.
    """
    n = len(out)
    accept = budget * (1.0 - gap)
    target = budget * (1.0 - 0.5 * gap)
    u_a, S_a, k_a = 0.0, _rates.csum(lo), 0.0
    u_b, S_b, k_b = math.inf, math.inf, 0.0
    r_a, r_b, r_w = lo.copy(), np.empty(n), np.empty(n)
    u_p = S_p = 0.0
    misses = [0.0, 0.0, 0.0, 0.0]  # |log(S/target)| of the last four passes
    nh = 0
    for _ in range(_RENEWAL_PASSES):
        S, D = pass_(u, r_w)
        k = u * D / S if (D > 0.0 and S > 0.0) else -1.0  # d log S / d log u here (no entry counted)
        if S <= budget:
            u_a, S_a, k_a = u, S, k
            r_a, r_w = r_w, r_a
            if S >= accept:
                u_b = u
                break
        else:
            u_b, S_b, k_b = u, S, k
            r_b, r_w = r_w, r_b
        if u_b < math.inf and (
                (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget or u_b - u_a <= 4.5e-16 * u_b):
            break
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and abs(_log(u / u_p)) > 1e-4 and S != S_p:
            k_sec = _log(S / S_p) / _log(u / u_p)  # with the pages that entered since the last point
            if k_sec > 0.0:
                k = k_sec
        u_p, S_p = u, S
        u_n = u * math.exp(min(max(_log(target / S) / k, -30.0), 30.0)) if 0.0 < k < math.inf else -1.0
        if u_b == math.inf:
            u_n = min(u_n, 16.0 * u)  # (few pages entered yet: their slope says little)
        misses[nh % 4] = abs(_log(S / target)) if S > 0.0 else math.inf
        nh += 1
        jump = (u_a > 0.0 and S_a > 0.0 and u_b < math.inf
                and _log(S_b / S_a) > 4.0 * max(k_a, k_b, 0.0) * _log(u_b / u_a))
        if (jump or not (u_a < u_n < u_b) or (nh >= 4 and misses[(nh - 1) % 4] > 0.5 * misses[(nh - 4) % 4])
                or abs(u_n - u) <= 9e-16 * u):
            u_n = -1.0
            if u_a > 0.0 and u_b < math.inf:
                inside = entry[(entry > u_a) & (entry < u_b)]
                if len(inside):
                    c = float(np.partition(inside, len(inside) // 2)[len(inside) // 2])
                    for cand in (c * (1.0 + 1.8e-15), c * (1.0 - 1.8e-15)):
                        if u_a < cand < u_b:
                            u_n = cand
                            break
                else:
                    # a page that entered just left of the bracket rises like 1/log(u - entry): bisect the
                    # distance to that entry geometrically
                    below = entry[entry <= u_a]
                    e = float(below.max()) if len(below) else 0.0
                    if 0.0 < u_a - e < u_b - u_a:
                        u_n = e + math.sqrt(u_a - e) * math.sqrt(u_b - e)
                        u_n = u_n if u_a < u_n < u_b else -1.0
            if u_n > 0.0:
                pass
            elif u_b == math.inf:
                u_n = 4.0 * u
            elif u_a == 0.0:
                u_n = 0.25 * u_b
            elif u_b > 4.0 * u_a:
                u_n = math.sqrt(u_a) * math.sqrt(u_b)
            else:
                u_n = 0.5 * (u_a + u_b)
            nh = 0
        u = u_n
    if u_b < math.inf and S_a < accept and S_b < math.inf:
        share = _time_share_by(r_a, r_b, S_a, S_b, budget, out)
        return u_a, (u_a if share == 0.0 else u_b)
    out[:] = r_a
    return u_a, u_a


def _solve_renewal(
    laws: _renewal.Laws, w: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float, slack: float
) -> tuple[np.ndarray, float]:
    """Renewal optimum on all pages: (rates, multiplier).

    Pages with w_i = 0 or a law that never changes (change rate 0) gain nothing and stay at their minimum
    (their passes keep them there); the trivial cases are those of the other models.
    """
    n = laws.n
    if not np.isinf(hi).any() and _rates.csum(hi) <= budget:
        return hi.copy(), 0.0
    active = (w > 0.0) & laws.changes()
    top = np.where(active, hi, lo)
    if not np.isinf(top).any() and _rates.csum(top) <= budget:
        return top, 0.0
    if _rates.csum(lo) >= budget * (1.0 - _PERIODIC_GAP):
        # the smallest multiplier that keeps every page at its minimum: max_i w_i psi_i(1/lo_i)
        with np.errstate(divide="ignore"):
            marginal = laws.psi(np.where(active, 1.0 / lo, math.inf))
        return lo.copy(), float(np.max(np.where(active, w * marginal, 0.0)))
    default = not lo.any() and not np.signbit(lo).any() and bool(np.isinf(hi).all())
    u = math.nan
    m = min(_SUBSAMPLE, n // _SUB_FRACTION)
    sub = laws.strided(n // m) if m >= _SUB_MIN else None
    if sub is not None:
        # Start from the solution of an evenly strided subsample of m pages (budget scaled to it), solved to
        # _SUB_GAP, as the periodic solver does: it lands within about 1/sqrt(m) of the root.
        k = n // m
        s_lo, s_hi, s_w = (np.ascontiguousarray(v[::k]) for v in (lo, hi, w))
        s_active = np.ascontiguousarray(active[::k])
        s_budget = budget * len(s_w) / n
        if s_active.any() and ((np.isinf(s_hi).any() or _rates.csum(np.where(s_active, s_hi, s_lo)) > s_budget)
                and _rates.csum(s_lo) < s_budget * (1.0 - _SUB_GAP)):
            s_pass = sub.make_pass(s_w, None if default else s_lo, None if default else s_hi)
            s_u = _renewal_start(sub, s_w, s_lo, s_active, s_budget)
            found = _renewal_search(s_pass, _renewal_entry(sub, s_w, s_active), s_lo, s_budget, s_u,
                                    np.empty(len(s_w)), _SUB_GAP)
            u = math.sqrt(found[0] * found[1])
    if not 0.0 < u < math.inf:
        u = _renewal_start(laws, w, lo, active, budget)
    out = np.empty(n)
    pass_ = laws.make_pass(w, None if default else lo, None if default else hi)
    u_a, u_b = _renewal_search(pass_, _renewal_entry(laws, w, active), lo, budget, u, out)
    _check_spent(out, budget, slack)
    return out, _reciprocal_product(u_a, u_b)


def _renewal_start(laws: _renewal.Laws, w: np.ndarray, lo: np.ndarray, active: np.ndarray, budget: float) -> float:
    """A u left of the root: psi(I) <= G'(0) I^2/2 (an age density never rises), so f_i <= u sqrt(w_i G_i'(0)/2)
    and S(u) <= sum(lo) + u sum sqrt(w_i G_i'(0)/2), which meets the budget there; and no page is crawled below
    u = min_i (w_i E[A_i])^-1/2."""
    speed = _rates.csum(np.sqrt(0.5 * np.where(active, w * laws.slope0(), 0.0)))
    reach = float(np.max(np.where(active, w * laws.mean_age(), 0.0)))
    u = (budget - _rates.csum(lo)) / speed if speed > 0.0 else math.nan
    first = 1.0 / math.sqrt(reach) if 0.0 < reach < math.inf else 0.0
    return max(u, first * (1.0 + 2.0**-30)) if u == u else (first * 2.0 if first > 0.0 else 1.0)


def _renewal_entry(laws: _renewal.Laws, w: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Each page's entry (w_i E[A_i])^-1/2, the u above which it is crawled (inf: never; 0: always)."""
    with np.errstate(divide="ignore"):
        return np.where(active, 1.0 / np.sqrt(w * laws.mean_age()), math.inf)


def _renewal_details(rates: np.ndarray, laws: _renewal.Laws, w: np.ndarray, multiplier: float) -> RatesResult:
    fresh = np.ascontiguousarray(laws.fresh(rates))
    return RatesResult(crawl_rate=rates, multiplier=multiplier, objective=_rates.weighted_sum(fresh, w),
                       n_crawled=int(np.count_nonzero(rates)))


@overload
def optimal_rates(
    change_rate: ChangeRate,
    importance: ArrayLike,
    bandwidth: float,
    model: str = ...,
    min_rate: ArrayLike = ...,
    max_rate: ArrayLike = ...,
    *,
    return_details: Literal[False] = ...,
) -> np.ndarray: ...
@overload
def optimal_rates(
    change_rate: ChangeRate,
    importance: ArrayLike,
    bandwidth: float,
    model: str = ...,
    min_rate: ArrayLike = ...,
    max_rate: ArrayLike = ...,
    *,
    return_details: Literal[True],
) -> RatesResult: ...
@overload
def optimal_rates(
    change_rate: ChangeRate,
    importance: ArrayLike,
    bandwidth: float,
    model: str = ...,
    min_rate: ArrayLike = ...,
    max_rate: ArrayLike = ...,
    *,
    return_details: bool,
) -> np.ndarray | RatesResult: ...


@cites(AVRACHENKOV_2020, BUSA_FEKETE_2025, LI_2017)
def optimal_rates(
    change_rate: ChangeRate,
    importance: ArrayLike,
    bandwidth: float,
    model: str = "poisson",
    min_rate: ArrayLike = 0.0,
    max_rate: ArrayLike = math.inf,
    *,
    return_details: bool = False,
) -> np.ndarray | RatesResult:
    """Crawl rates that maximise weighted freshness under a bandwidth budget.

    Parameters
    ----------
    change_rate : array_like of shape (n_pages,), or the pages' update laws
        How each page changes: its change rate Delta_i >= 0 (changes per unit
        time).  For ``"renewal"`` its update law, whose change rate is the
        law's ``rate`` (1/E[U], U the interval between updates): an
        :class:`~freshcore.blind.AgeTable` (the age distributions G_i
        tabulated on one grid, e.g. as :func:`~freshcore.blind.m4` or
        :func:`~freshcore.blind.m6` estimate them), a sequence of
        :class:`~freshcore.blind.Exponential`, :class:`~freshcore.blind.Pareto`,
        :class:`~freshcore.blind.Constant` and :class:`~freshcore.blind.Uniform`
        laws, one per page (their G exact), or change rates (Poisson updates:
        ``Exponential(Delta_i)``, where the model is ``"periodic"``).
    importance : array_like of shape (n_pages,)
        Importance w_i >= 0 of each page (for ``"periodic"``: the request
        rate mu_i).
    bandwidth : float
        Budget B > 0 on the sum of the crawl rates (crawls per unit time).
    model : {"poisson", "periodic", "renewal"}, default="poisson"
        How crawls are spaced, and how pages change (see the module
        docstring).
    min_rate, max_rate : float or array_like of shape (n_pages,)
        Per-page bounds, 0 <= min_rate <= max_rate (max_rate may be inf).
    return_details : bool, default=False
        Return a :class:`RatesResult` instead of the crawl rates.

    Returns
    -------
    crawl_rate : ndarray of shape (n_pages,), or RatesResult
        The optimal crawl rates (with ``return_details``: a
        :class:`RatesResult` holding them with the multiplier, the
        objective and the number of pages crawled).

    Raises
    ------
    ValueError
        Non-finite or negative change rates, importance or bounds (naming the
        first bad index), bandwidth <= 0, bandwidth below ``sum(min_rate)``,
        ``min_rate > max_rate``, mismatched lengths, empty arrays, unknown model;
        or inputs spanning too wide a range for a double-precision solution
        (see Notes, Extremes).
    TypeError
        Non-numeric input; update laws with a model other than ``"renewal"``,
        a single law for all pages, or a law without a closed-form age
        distribution (:class:`~freshcore.blind.Sampled`: tabulate it), naming
        its index.

    Notes
    -----
    Poisson crawling (eq. (10) of Avrachenkov et al. (2020)): maximise
    ``sum w_i r_i/(r_i + Delta_i)``.  KKT gives
    ``r_i = clip(sqrt(w_i Delta_i / L) - Delta_i, min_i, max_i)``: with
    ``u = L^-1/2`` the total ``S(u)`` is piecewise linear with breakpoints
    ``(min_i + Delta_i)/s_i`` and ``(max_i + Delta_i)/s_i``,
    ``s_i = sqrt(w_i Delta_i)``.  Without maximum rates (the default) ``S`` is
    convex and no sort is needed: Newton on ``u`` from the ``u`` of a
    1024-page subsample (from the all-active ``u``, right of the root, below
    512 pages) takes the closed form on the current active set each step and
    ends exactly when that set repeats (3-4 passes on uniform pages, about 5
    over twelve decades), in one compiled call that also checks the arrays of
    a call with the defaults.  With maximum rates ``S`` is not convex: the
    breakpoints are sorted, the segment holding ``S(u) = B`` is found by
    Newton steps on the sorted breakpoints safeguarded by bisection (O(log N)
    passes at worst), and ``u`` follows in closed form on that segment: exact,
    O(N log N).  Each step of the periodic search is one compiled pass over
    the pages without the GIL (on vectors of pages: see ``_rates_periodic.h``), and
    each search (on the subsample, then on all pages) is one compiled call.

    Periodic crawling (eq. (5), Appendix A of Busa-Fekete et al. (2025)): maximise
    ``sum G_i(r_i)``, ``G(r) = (mu/Delta) r (1 - e^(-Delta/r))``.
    ``G'(r) = (mu/Delta) R1(Delta/r)`` falls from ``mu/Delta`` to 0, so page i
    is crawled iff ``Lambda < mu_i/Delta_i``, with ``r_i = Delta_i/x_i``,
    ``x_i = -1 - W_-1(-(1 - c_i)/e)``, ``c_i = Lambda Delta_i/mu_i``, clipped
    to the bounds.  The total is monotone in ``u = Lambda^-1/2`` (roughly a
    power of u); the root of ``S(u) = B`` is found by Newton steps on ``log S``
    against ``log u`` (first with the analytic derivative
    ``dr/du = 2 c Delta (1 + x)/(u x^3 (1 - c))``, then with the secant slope
    of the last two points where the step spanned many entering pages),
    safeguarded by the bracket and bisection; close to the root, with the
    default bounds, a step solves a model of ``S`` instead: the pages within
    ``max(2^-12, 16 |step|)`` of their threshold (whose rates rise steeply
    right after it) exactly, the others by their Taylor polynomial of degree 2
    in ``log u`` (the pass sums both derivatives).  From 512 pages on it starts
    from the solution (to 1e-4) of an evenly strided subsample of 1/8 of the
    pages, at most 50 000 (3 full passes on 10^4 to 10^6 uniform pages, 5-6
    with the classic steps alone).  Page i enters at ``u = b_i = sqrt(Delta_i/mu_i)``, with
    ``1 - c`` computed as ``(u - b)(u + b)/u^2``; in double precision its rate
    still jumps there from 0 to about ``Delta_i/37`` (``x ~ -log(1 - c)``), so
    ``S(u) = B`` may have no floating-point root.  The iteration stops when the
    budget is met to 1e-14 relative, or when the bracketing solutions ``r^a``
    (multiplier ``L_a``, total ``S_a <= B``) and ``r^b`` (``L_b < L_a``,
    ``S_b > B``) satisfy ``(L_a - L_b)(S_b - S_a) <= 1e-15 L_a B``; it then
    time-shares, ``r = r^a + theta (r^b - r^a)`` with ``sum r = B``.  By
    concavity and weak duality that objective is within
    ``(L_a - L_b)(B - S_a)`` of the optimum.

    Degenerate pages: pages with ``w_i = 0`` or ``Delta_i = 0`` gain nothing
    from crawling (``F = 1`` for a page that never changes, whatever its
    rate; ``G = mu`` in the periodic model) and get ``min_rate``.  (The
    limit Delta -> 0 of G is ``mu [r > 0]``; taking the copy of a page that
    never changes as fresh even at rate 0 keeps G continuous, agrees with
    :func:`freshness`, and avoids a supremum that no rate attains.)  If the
    bandwidth covers ``sum(max_rate)``, every page (these included) is crawled at
    its ``max_rate``; if it only covers the maxima of the other pages, those
    are at their maxima, the degenerate pages at their minima, and the rest
    of the budget is unused (multiplier 0).

    Budget: the returned rates never sum to more than ``bandwidth`` beyond
    the rounding of the sum itself: the solvers test every candidate total
    (computed with Neumaier compensation, relative error below 3.6e-15
    whatever the page count) against the budget and only return rates whose
    total passed; a Poisson total over the budget (from rounding) makes the
    solver step ``u`` down until it is not (S is monotone in u, also in
    floating point), a time-shared periodic mix gives back the excess.

    Extremes: any finite inputs are solved.  Where the searches above lose the
    budget to rounding (a change rate far above the bandwidth, where
    ``s_i u - Delta_i`` cancels; a breakpoint or ``u`` outside the double
    range; ``c_i`` below the normal doubles) or leave more than 1e-13 of the
    bandwidth unspent, a careful solver of the same model takes over: for
    Poisson, bisection on the breakpoints ``a_i = (min_i + Delta_i)/s_i`` with
    the rates written as ``min_i + s_i (u - a_i)`` (exact at a breakpoint) and
    the rest of the budget shared in proportion to ``s_i`` on the last
    segment, without forming ``u``; for periodic, the same search with ``u``,
    ``b_i`` and ``s_i`` carried as mantissa and exponent and the closed form
    ``u sqrt(mu_i Delta_i / 2)`` far right of a threshold.  Both time-share
    across a jump of one page's rate in budget shares (theta itself may
    underflow).  The result: finite rates within the bounds that spend the
    bandwidth to 1e-13 and satisfy KKT to rounding, and a multiplier rounded to
    0 or inf where it lies outside the double range.  Inputs whose breakpoints
    cannot all be represented at one scale (importance and change rates at
    opposite ends of the double range, next to bounds near 1e308) raise a
    ValueError instead of returning an inexact answer.

    Renewal updates (G_U of Li, Cline and Loguinov (2017), beyond their
    paper): maximise ``sum w_i F_i(r_i)``, ``F(r) = r H(1/r)``,
    ``H(I) = ∫_0^I (1 - G)``.  ``F`` is concave with ``F'(r) = psi(1/r)``,
    ``psi(I) = ∫_0^I a dG(a)`` the partial mean of the age, falling from the
    mean age ``E[A] = psi(inf)`` to 0: page i is crawled iff
    ``L < w_i E[A_i]``, at the interval with ``psi_i(I_i) = L/w_i``, clipped
    to the bounds, and the total is monotone in ``L`` (the periodic optimum's
    structure: with ``G = 1 - e^(-Delta a)``, ``psi(I) = R1(Delta I)/Delta``).
    The per-page solve: for an :class:`~freshcore.blind.AgeTable` (G linear
    between the points, an exponential tail beyond) a compiled pass, ``I^2``
    linear in ``psi`` on a segment and ``-1 - W-1`` in the tail; for
    exponential laws the periodic model's pass (the same bits); for constant
    intervals a closed form; for Pareto and uniform intervals a vectorised
    Newton on their closed forms (tabulate them beyond some 10^4 pages).  The
    search on ``u = L^-1/2`` is Newton on ``log S`` against ``log u`` from the
    solution of a strided subsample (from 512 pages of one family, as for
    ``"periodic"``), the secant across wide steps (which sees the pages that
    entered), bracketed.  ``S`` jumps where a page's rate leaves 0 at a
    positive value (G reaching 1: constant intervals enter at ``1/P``) or
    crosses a flat stretch of a tabulated G: a bracket holding a jump tries the
    entries inside it, and the search time-shares across the jump as the
    periodic search does (same stopping rule, same guarantee).  About 5-13
    full passes on 10^3 to 10^6 tabulated pages, after 4-17 on the
    subsample.  The search works at one scale: where it cannot spend the
    bandwidth (inputs near the ends of the double range) it raises a
    ValueError.

    ``objective`` is ``sum_i w_i F_i = freshness(crawl_rate, change_rate,
    importance, model) * sum(importance)``; for ``"periodic"`` this is the
    total accuracy ``sum G(xi_i)`` and ``freshness`` is the accuracy per unit
    of request rate.

    Examples
    --------
    >>> import numpy as np
    >>> from freshcore.rates import optimal_rates
    >>> r = optimal_rates([1.0, 2.0, 0.0], [1.0, 1.0, 1.0], bandwidth=3.0)
    >>> r.round(6)
    array([1.485281, 1.514719, 0.      ])
    >>> bool(r.sum() <= 3.0), round(float(r.sum()), 12)
    (True, 3.0)
    >>> res = optimal_rates([0.2, 0.9], [1.0, 0.5], 1.0, model="periodic", return_details=True)
    >>> res.n_crawled, round(res.objective, 6)
    (2, 1.056088)

    A page updated every 2 time units and one with Pareto(3) intervals (mean
    1/2): both have mean age 1, and the renewal model plans with their whole
    laws (F_1 = 1 - 1/(4 r), F_2 = r/(1 + r); the multiplier is 9/16).

    >>> from freshcore.blind import Constant, Pareto
    >>> optimal_rates([Constant(2.0), Pareto(3.0)], [1.0, 1.0], 1.0, model="renewal").round(6)
    array([0.666667, 0.333333])
    """
    if (
        type(model) is str and model == "poisson" and type(return_details) is bool
        and _plain(change_rate) and _plain(importance) and len(change_rate) == len(importance)
        and _real(bandwidth) and 0.0 < bandwidth < math.inf
        and _real(min_rate) and 0.0 <= min_rate < math.inf and _real(max_rate) and max_rate == math.inf
    ):
        # the defaults' arrays: checked in the compiled pass that starts the solve
        fast = _poisson_newton(change_rate, importance, None, float(min_rate), float(bandwidth), return_details)
        if fast is not None:
            return fast
    if (
        type(model) is str and model == "periodic" and type(return_details) is bool
        and _plain(change_rate) and _plain(importance) and len(change_rate) == len(importance)
        and _real(bandwidth) and 0.0 < bandwidth < math.inf
        and _real(min_rate) and min_rate == 0.0 and math.copysign(1.0, min_rate) > 0.0
        and _real(max_rate) and max_rate == math.inf
    ):
        # the defaults' arrays: checked in one compiled pass
        fast = _periodic_default(change_rate, importance, float(bandwidth), return_details)
        if fast is not None:
            return fast
    caller = "optimal_rates"
    laws, dl = _change(change_rate, model, caller)
    w = check_array(importance, "importance", caller, low=0.0)
    if laws is None:
        assert dl is not None
        n = check_same_length(caller, change_rate=dl, importance=w)
    else:
        n = _same_length(laws, w, "importance", caller)
    B = check_scalar(bandwidth, "bandwidth", caller, low=0.0, low_inclusive=False)
    check_choice(model, "model", caller, _MODELS)
    lo = _bound(min_rate, "min_rate", n, caller, allow_inf=False)
    hi = _bound(max_rate, "max_rate", n, caller, allow_inf=True)
    bad = lo > hi
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"The 'min_rate' parameter of {caller} must not exceed 'max_rate'; "
            f"page {i}: min_rate = {lo[i].item()!r} > max_rate = {hi[i].item()!r}."
        )
    if not isinstance(return_details, (bool, np.bool_)):
        raise TypeError(f"The 'return_details' parameter of {caller} must be a bool. Got {return_details!r} instead.")
    lo_sum = _rates.csum(lo)
    if lo_sum > B:
        raise ValueError(
            f"The 'bandwidth' parameter of {caller} must be >= the sum of min_rate ({lo_sum!r}). Got {B!r} instead."
        )

    if laws is not None:
        # (over- and underflow are expected at the ends of the double range: see optimal_rates)
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            rates, multiplier = _solve_renewal(laws, w, lo, hi, B, _BUDGET_TOL * B)
            return _renewal_details(rates, laws, w, multiplier) if return_details else rates
    assert dl is not None
    if model == "poisson" and np.isinf(hi).all():
        sorted_free = _poisson_newton(dl, w, lo, 0.0, B, return_details)
        if sorted_free is not None:
            return sorted_free
    if model == "periodic" and not lo.any() and not np.signbit(lo).any() and np.isinf(hi).all():
        default = _periodic_default(dl, w, B, bool(return_details))
        if default is not None:
            return default
    rates = lo.copy()
    hi_sum = math.inf if np.isinf(hi).any() else _rates.csum(hi)
    active = (w > 0) & (dl > 0)
    multiplier = 0.0
    if hi_sum <= B:
        rates[:] = hi
    else:
        idx: slice | np.ndarray
        if active.all():
            idx = slice(None)
            budget = B
            dla, lo_a, hi_a, wa = dl, lo, hi, w
        else:
            idx = np.flatnonzero(active)
            budget = B - (lo_sum - _rates.csum(lo[idx]))  # what is left for the active pages
            dla, lo_a, hi_a, wa = dl[idx], lo[idx], hi[idx], w[idx]
        # Over- and underflow in the solvers' numpy steps are expected at the ends of the double
        # range: every result is checked, and the careful solvers take over where it fails.
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            solve = _solve_poisson if model == "poisson" else _solve_periodic
            sub, multiplier = solve(wa, dla, lo_a, hi_a, budget, _BUDGET_TOL * B)
        rates[idx] = sub
    if not return_details:
        return rates
    return _details(rates, dl, w, model == "periodic", multiplier)


def _change(change_rate: Any, model: Any, caller: str) -> tuple[_renewal.Laws | None, np.ndarray | None]:
    """``change_rate`` checked for ``model``: (the update laws, None) for "renewal", else (None, the rates)."""
    if type(model) is str and model == "renewal":
        return _renewal.laws(change_rate, "change_rate", caller), None
    if _renewal.is_laws(change_rate):
        raise TypeError(
            f"The 'change_rate' parameter of {caller} holds update laws ({type(change_rate).__name__}), which only "
            f"the 'renewal' model uses; model {model!r} needs the change rates Delta_i."
        )
    return None, check_array(change_rate, "change_rate", caller, low=0.0)


def _same_length(laws: _renewal.Laws, x: np.ndarray, name: str, caller: str) -> int:
    if laws.n != len(x):
        raise ValueError(f"The array parameters of {caller} must have the same length: 'change_rate' has "
                         f"{laws.n} pages, {name!r} has {len(x)}.")
    return laws.n


def _details(rates: np.ndarray, dl: np.ndarray, w: np.ndarray, periodic: bool, multiplier: float) -> RatesResult:
    fresh = np.empty(len(rates))
    _rates.freshness_kernel(rates, dl, periodic, fresh)
    objective = _rates.weighted_sum(fresh, w)
    return RatesResult(
        crawl_rate=rates, multiplier=multiplier, objective=objective, n_crawled=int(np.count_nonzero(rates))
    )


def _plain(x: Any) -> TypeGuard[np.ndarray]:
    """Whether ``x`` is a non-empty C-contiguous 1-D float64 ndarray (the fast path's arrays)."""
    return type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1 and x.flags.c_contiguous and len(x) > 0


def _real(x: Any) -> TypeGuard[float]:
    """Whether ``x`` is a Python int (not bool) or float, numpy's float64 included."""
    return type(x) is int or isinstance(x, float)


def _poisson_newton(
    dl: np.ndarray, w: np.ndarray, lo: np.ndarray | None, lo0: float, bandwidth: float, return_details: bool
) -> np.ndarray | RatesResult | None:
    """The Poisson optimum without maximum rates by the sort-free Newton (``_rates.poisson_solve``), or None.

    min_rate is ``lo``, or ``lo0`` for every page where ``lo`` is None.  The call checks the
    arrays in the pass that starts the solve; None where an entry is bad (the caller's checks
    then raise their error) or where the problem needs the general path (its degenerate and
    extreme cases).  Both paths of ``optimal_rates`` call it with the same pages, so that a
    list and an array, or a memory map, give the same bits.
    """
    n = len(dl)
    s, out = np.empty(n), np.empty(n)
    status, u, _ = _rates.poisson_solve(dl, w, lo, lo0, bandwidth, _BUDGET_TOL * bandwidth, _NEWTON_PASSES, s, out)
    if status != 0:
        return None
    if not return_details:
        return out
    return _details(out, dl, w, False, _reciprocal_product(u, u))


@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ChangeRate,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: Literal[False] = ...,
) -> float: ...
@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ChangeRate,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: Literal[True],
) -> np.ndarray: ...
@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ChangeRate,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: bool,
) -> float | np.ndarray: ...


@cites(AVRACHENKOV_2020, BUSA_FEKETE_2025, LI_2017)
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ChangeRate,
    importance: ArrayLike | None = None,
    model: str = "poisson",
    *,
    per_page: bool = False,
) -> float | np.ndarray:
    """Importance-weighted average freshness of a crawl-rate vector.

    Parameters
    ----------
    crawl_rate : array_like of shape (n_pages,)
        Crawl rates r_i >= 0 (``inf`` allowed: always fresh).
    change_rate : array_like of shape (n_pages,), or the pages' update laws
        Change rates Delta_i >= 0; for ``"renewal"`` the update laws, as in
        :func:`optimal_rates`.
    importance : array_like of shape (n_pages,), optional
        Importance w_i >= 0, not all zero (default: uniform).
    model : {"poisson", "periodic", "renewal"}, default="poisson"
        How crawls are spaced, and how pages change (see the module docstring).
    per_page : bool, default=False
        Return the per-page freshness F_i instead of the weighted average.

    Returns
    -------
    float or ndarray of shape (n_pages,)
        ``sum_i w_i F_i / sum_i w_i`` in [0, 1], or F_i with ``per_page``.

    Notes
    -----
    Poisson crawling: ``F = r/(r + Delta)`` (eq. (10) of Avrachenkov et al.
    (2020)).  Periodic crawling: ``F = G(r)/mu = (r/Delta)(1 - e^(-Delta/r))``
    (eq. (5) of Busa-Fekete et al. (2025)); with importance mu (the request
    rate) this average is the paper's accuracy per unit of request rate.
    Renewal updates with age distribution G (Li, Cline and Loguinov (2017)):
    ``F = r ∫_0^{1/r} (1 - G)``, exact for the laws of :mod:`freshcore.blind`
    and for an :class:`~freshcore.blind.AgeTable`'s interpolant (the
    periodic F where G is exponential).  A page with ``Delta = 0`` never
    changes and is always fresh (F = 1, even at rate 0); a changing page that
    is never crawled has F = 0.  :func:`optimal_rates`' ``objective`` is this
    average times ``sum(importance)``.

    Examples
    --------
    >>> from freshcore.rates import freshness
    >>> freshness([1.0, 1.0], [1.0, 0.0])
    0.75
    >>> freshness([1.0, 1.0], [1.0, 0.0], model="periodic", per_page=True).round(6)
    array([0.632121, 1.      ])
    """
    caller = "freshness"
    r = check_array(crawl_rate, "crawl_rate", caller, low=0.0, allow_inf=True)
    laws, dl = _change(change_rate, model, caller)
    w = None if importance is None else check_array(importance, "importance", caller, low=0.0)
    if laws is not None:
        _same_length(laws, r, "crawl_rate", caller)
        if w is not None:
            _same_length(laws, w, "importance", caller)
    else:
        assert dl is not None
        if w is None:
            check_same_length(caller, crawl_rate=r, change_rate=dl)
        else:
            check_same_length(caller, crawl_rate=r, change_rate=dl, importance=w)
    check_choice(model, "model", caller, _MODELS)
    if w is not None and not (w > 0).any():
        raise ValueError(f"The 'importance' parameter of {caller} must not be all zero.")
    if laws is not None:
        fresh = np.ascontiguousarray(laws.fresh(r))
    else:
        assert dl is not None
        fresh = np.empty(len(r))
        _rates.freshness_kernel(r, dl, model == "periodic", fresh)
    if per_page:
        return fresh
    if w is None:
        return float(_rates.csum(fresh) / len(fresh))
    total = _rates.csum(w)
    if total == math.inf:  # the importance sums past the double range; the average ignores its scale
        w = np.ldexp(w, -64)
        total = _rates.csum(w)
    return float(_rates.weighted_sum(fresh, w) / total)
