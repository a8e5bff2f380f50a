"""Optimal crawl rates under a bandwidth budget, and the freshness of a crawl-rate vector.

Two models of how a page is crawled at rate ``r``:

* ``"poisson"`` (eq. (10) of Avrachenkov et al. (2020)): crawls form a
  Poisson process; a page changing at rate Delta is fresh a fraction
  ``F = r/(r + Delta)`` of the time.
* ``"periodic"`` (eq. (5) of Busa-Fekete et al. (2025), after Cho and
  Garcia-Molina (2003) and Azar et al. (2018)): crawls are evenly spaced,
  ``F = (r/Delta)(1 - exp(-Delta/r))``.

``optimal_rates`` maximises ``sum_i w_i F_i(r_i)`` subject to
``sum_i r_i <= bandwidth`` and ``min_rate <= r <= max_rate``; ``freshness``
evaluates ``sum_i w_i F_i / sum_i w_i`` for any crawl-rate vector.  The
per-page passes are compiled (``freshcore._rates``); this module validates,
sorts and runs the line search on the multiplier, one compiled pass per step.

References
----------
K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal
freshness in web page crawling", VALUETOOLS 2020.
R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm
utilizing noisy change-indicating signals", 2025.
J. Cho, H. Garcia-Molina, "Effective page refresh policies for web
crawlers", ACM Transactions on Database Systems, 2003.
Y. Azar, E. Horvitz, E. Lubetzky, Y. Peres, D. Shahaf, "Tractable
near-optimal policies for crawling", PNAS, 2018.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike

from freshcore import _rates
from freshcore._validation import (
    check_array,
    check_choice,
    check_same_length,
    check_scalar,
)

__all__ = ["RatesResult", "optimal_rates", "freshness"]

_MODELS = ("poisson", "periodic")
# The periodic solver stops once the budget is used to within this relative gap (never above it).
_PERIODIC_GAP = 1e-14
# Size of the strided subsample whose solution starts the periodic solver on large inputs.
_SUBSAMPLE = 50_000


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
        page that matters is at its ``max_rate``).
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
    """R^1(x) = 1 - e^-x (1 + x) without cancellation for small x."""
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    small = x < 0.1
    xs = x[small]
    # x^2/2 - x^3/3 + x^4/8 - x^5/30 + x^6/144 - x^7/840 + ...
    out[small] = xs * xs * (0.5 - xs * (1 / 3 - xs * (1 / 8 - xs * (1 / 30 - xs * (1 / 144 - xs * (1 / 840 - xs / 5760))))))
    xl = x[~small]
    with np.errstate(over="ignore"):
        out[~small] = -np.expm1(-xl) - xl * np.exp(-xl)
    return out


def _poisson_search(
    s: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, keys: np.ndarray, budget: float, out: np.ndarray
) -> float:
    """u = L^-1/2 of the Poisson optimum (rates written to ``out``); one compiled pass per step.

    ``keys``: the sorted breakpoints (lo_i + Delta_i)/s_i and the finite (hi_i + Delta_i)/s_i;
    requires sum(lo) < budget < sum(hi).  S is linear on each segment [keys[m], keys[m + 1]]
    (keys[K] = inf), m = 0..K-1, and S(keys[0]) = sum(lo).  Each pass evaluates S and its
    slope at the middle of one segment (never at a breakpoint, where rounding could
    misclassify a page); the linear extension either meets the budget inside that segment
    (the closed form: done) or names the segment to try next (Newton on the piecewise-linear
    S), safeguarded by bisection on the segment index (O(log N) passes at worst).  A final
    total over the budget (rounding) steps u down until it is not.
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
        m = int(keys.searchsorted(u, "right")) - 1 if slope_m > 0.0 else (seg_lo + seg_hi) // 2
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
    return u


def _solve_poisson(
    s: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float
) -> tuple[np.ndarray, float]:
    """Exact solution on the active pages; returns (rates, u) with u = L^-1/2 (inf: saturated).

    Sorts the breakpoints, handles the trivial cases and runs the search (see
    ``_poisson_search``).
    """
    n = len(s)
    out = np.empty(n)
    if n == 0:
        return out, math.inf
    if not np.isinf(hi).any() and _rates.csum(hi) <= budget:
        out[:] = hi
        return out, math.inf
    ua = (lo + dl) / s
    if np.isinf(hi).all():
        keys = np.sort(ua)
    else:
        ub = (hi + dl) / s
        keys = np.sort(np.concatenate([ua, ub[np.isfinite(ub)]]))
    if _rates.csum(lo) >= budget:  # no room above the minima (budget == sum(min_rate))
        out[:] = lo
        return out, keys[0]
    u = _poisson_search(s, dl, lo, hi, keys, budget, out)
    return out, u


def _periodic_search(
    b: np.ndarray, dl: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float, u: float, gap: float, out: np.ndarray
) -> tuple[float, float]:
    """Periodic optimum from the start ``u`` (rates written to ``out``); one compiled pass per step.

    Requires sum(lo) < budget (1 - gap) and budget < sum(hi).  Safeguarded Newton on log S
    against log u (S grows like a power of u; plain Newton in u overshoots badly from a
    small start): first with the analytic derivative, then with the secant slope of the
    last two points (pages entering at u = b_i add ~Delta_i/37 almost at once, which the
    local derivative misses), bisection when the bracket does not halve in 3 steps.
    Stops when S is in [budget (1 - gap), budget], or when the bracketing solutions satisfy
    (L_a - L_b)(S_b - S_a) <= 1e-15 budget (or u_a, u_b are adjacent doubles) and then
    time-shares between them.  Returns (u_a, u_b).
    """
    pass_ = _rates.PeriodicPass(b, dl, lo, hi)
    n = len(b)
    accept = budget * (1.0 - gap)
    target = budget * (1.0 - 0.5 * gap)
    u_a, S_a = 0.0, _rates.csum(lo)
    u_b, S_b = math.inf, math.inf
    u_p, S_p = 0.0, 0.0
    r_a, r_b, r_w = lo.copy(), np.empty(n), np.empty(n)  # below, above the budget; work
    widths = [0.0, 0.0, 0.0, 0.0]  # the last four widths of the bracket
    nh = 0
    done = False
    for _ in range(300):
        S, D = pass_(u, r_w)
        if S <= budget:
            u_a, S_a = u, S
            r_a, r_w = r_w, r_a
            if S >= accept:
                u_b = u
                done = True
                break
        else:
            u_b, S_b = u, S
            r_b, r_w = r_w, r_b
        if u_a > 0.0 and u_b < math.inf and (
                (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget
                or u_b - u_a <= 4.5e-16 * u_b):
            break  # (or the bracket is down to adjacent doubles: nothing finer to find)
        k = u * D / S if (D > 0.0 and S > 0.0) else -1.0
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
            k_sec = math.log(S / S_p) / math.log(u / u_p)
            if k_sec > 0.0:
                k = k_sec
        u_p, S_p = u, S
        u_n = u * math.exp(min(max(math.log(target / S) / k, -30.0), 30.0)) if k > 0.0 else -1.0
        widths[nh % 4] = u_b - u_a
        nh += 1
        if (not (u_a < u_n < u_b) or (nh >= 4 and widths[(nh - 1) % 4] > 0.5 * widths[(nh - 4) % 4])
                or abs(u_n - u) <= 9e-16 * u):
            u_n = 2.0 * max(u, u_a) if u_b == math.inf else 0.5 * (u_a + u_b)
            nh = 0
        u = u_n
    if done or u_b == math.inf:
        out[:] = r_a
        if not done:
            u_b = u_a
        return u_a, u_b
    # Time-share between the two neighbouring KKT solutions so that the budget is
    # spent: pages whose threshold b_i lies in (u_a, u_b) jump from 0 to ~Delta_i/37
    # there in double precision, so S(u) = budget may have no floating-point root.
    theta = min(max((budget - S_a) / (S_b - S_a), 0.0), 1.0)
    for kk in range(9):
        if kk == 8:
            theta = 0.0
        total = _rates.mix(r_a, r_b, theta, out)
        if total <= budget:
            break
        # rounding put the mix over the budget: take back the excess and a few ulps more
        theta = max(0.0, theta - (total - budget + (2.0**kk) * 2.3e-16 * budget) / (S_b - S_a))
    if theta == 0.0:
        u_b = u_a
    return u_a, u_b


def _solve_periodic(
    b: np.ndarray, dl: np.ndarray, mu: np.ndarray, lo: np.ndarray, hi: np.ndarray, budget: float
) -> tuple[np.ndarray, float, float]:
    """Periodic optimum on the active pages; returns (rates, u_lo, u_hi).

    The multiplier lies in [1/u_hi^2, 1/u_lo^2] (u_lo = u_hi = inf: budget not binding;
    0: every page at its minimum).  Handles the trivial cases, picks the start and runs the
    search (see ``_periodic_search``).
    """
    n = len(b)
    if not np.isinf(hi).any() and _rates.csum(hi) <= budget:
        return hi.copy(), math.inf, math.inf
    if _rates.csum(lo) >= budget * (1.0 - _PERIODIC_GAP):
        return lo.copy(), 0.0, 0.0
    u = math.nan
    if n >= 10 * _SUBSAMPLE:
        # Start from the solution of an evenly strided subsample (budget scaled to it): it
        # lands within about 1/sqrt(_SUBSAMPLE) of the root and saves a few full passes.
        sub = slice(None, None, n // _SUBSAMPLE)
        sb, sdl, smu, slo, shi = (np.ascontiguousarray(x[sub]) for x in (b, dl, mu, lo, hi))
        _, su_lo, su_hi = _solve_periodic(sb, sdl, smu, slo, shi, budget * len(sb) / n)
        u = math.sqrt(su_lo * su_hi)
    if not 0.0 < u < math.inf:
        # small-c start: xi ~ sqrt(mu Delta / 2) u for every page
        u = budget / _rates.csum(np.sqrt(0.5 * mu * dl))
    out = np.empty(n)
    u_lo, u_hi = _periodic_search(b, dl, lo, hi, budget, u, _PERIODIC_GAP, out)
    return out, u_lo, u_hi


@overload
def optimal_rates(
    change_rate: ArrayLike,
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
    change_rate: ArrayLike,
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
    change_rate: ArrayLike,
    importance: ArrayLike,
    bandwidth: float,
    model: str = ...,
    min_rate: ArrayLike = ...,
    max_rate: ArrayLike = ...,
    *,
    return_details: bool,
) -> np.ndarray | RatesResult: ...


def optimal_rates(
    change_rate: ArrayLike,
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
    change_rate : array_like of shape (n_pages,)
        Change rate Delta_i >= 0 of each page (changes per unit time).
    importance : array_like of shape (n_pages,)
        Importance w_i >= 0 of each page (for ``"periodic"``: the request
        rate mu_i).
    bandwidth : float
        Budget B > 0 on the sum of the crawl rates (crawls per unit time).
    model : {"poisson", "periodic"}, default="poisson"
        How crawls are spaced (see the module docstring).
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
        ``min_rate > max_rate``, mismatched lengths, empty arrays, unknown model.
    TypeError
        Non-numeric input.

    Notes
    -----
    Poisson crawling (eq. (10) of Avrachenkov et al. (2020)): maximise
    ``sum w_i r_i/(r_i + Delta_i)``.  KKT gives
    ``r_i = clip(sqrt(w_i Delta_i / L) - Delta_i, min_i, max_i)``: with
    ``u = L^-1/2`` the total ``S(u)`` is piecewise linear with breakpoints
    ``(min_i + Delta_i)/s_i`` and ``(max_i + Delta_i)/s_i``,
    ``s_i = sqrt(w_i Delta_i)``.  The breakpoints are sorted, the segment
    holding ``S(u) = B`` is found by Newton steps on the sorted breakpoints
    safeguarded by bisection (O(log N) passes at worst), and ``u`` follows in
    closed form on that segment: exact, O(N log N).  Each step of both
    searches is one compiled pass over the pages without the GIL; the
    iteration itself is Python (about 3 us per call for Poisson and 20 us for
    periodic at 10^3 pages, unmeasurable from 10^5 pages on).

    Periodic crawling (eq. (5), Appendix A of Busa-Fekete et al. (2025)): maximise
    ``sum G_i(r_i)``, ``G(r) = (mu/Delta) r (1 - e^(-Delta/r))``.
    ``G'(r) = (mu/Delta) R1(Delta/r)`` falls from ``mu/Delta`` to 0, so page i
    is crawled iff ``Lambda < mu_i/Delta_i``, with ``r_i = Delta_i/x_i``,
    ``x_i = -1 - W_-1(-(1 - c_i)/e)``, ``c_i = Lambda Delta_i/mu_i``, clipped
    to the bounds.  The total is monotone in ``u = Lambda^-1/2`` (roughly a
    power of u); the root of ``S(u) = B`` is found by Newton steps on ``log S``
    against ``log u`` (first with the analytic derivative
    ``dr/du = 2 c Delta (1 + x)/(u x^3 (1 - c))``, then with the secant slope
    of the last two points), safeguarded by the bracket and bisection; on
    500 000 pages or more it starts from the solution of an evenly strided
    50 000-page subsample (6 full passes of Lambert W evaluations on 10^7
    uniform pages).  Page i enters at ``u = b_i = sqrt(Delta_i/mu_i)``, with
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

    ``objective`` is ``sum_i w_i F_i = freshness(crawl_rate, change_rate,
    importance, model) * sum(importance)``; for ``"periodic"`` this is the
    total accuracy ``sum G(xi_i)`` and ``freshness`` is the accuracy per unit
    of request rate.

    References
    ----------
    K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal
    freshness in web page crawling", VALUETOOLS 2020.
    R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling
    algorithm utilizing noisy change-indicating signals", 2025.

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
    """
    caller = "optimal_rates"
    dl = check_array(change_rate, "change_rate", caller, low=0.0)
    w = check_array(importance, "importance", caller, low=0.0)
    n = check_same_length(caller, change_rate=dl, importance=w)
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
        if model == "poisson":
            s = np.sqrt(wa) * np.sqrt(dla)
            sub, u = _solve_poisson(s, dla, lo_a, hi_a, budget)
            if u < math.inf:
                multiplier = 1.0 / (u * u)
        else:
            mua = wa
            sub, u_lo, u_hi = _solve_periodic(np.sqrt(dla / mua), dla, mua, lo_a, hi_a, budget)
            if 0.0 < u_lo < math.inf:
                multiplier = 1.0 / (u_lo * u_hi)
            elif u_lo == 0.0:
                # every page at its minimum: the smallest multiplier that keeps them there
                with np.errstate(divide="ignore"):
                    multiplier = float(np.max(mua / dla * _r1(dla / lo_a)))
        rates[idx] = sub
    if not return_details:
        return rates
    fresh = np.empty(n)
    _rates.freshness_kernel(rates, dl, model == "periodic", fresh)
    objective = _rates.weighted_sum(fresh, w)
    return RatesResult(crawl_rate=rates, multiplier=multiplier, objective=objective, n_crawled=int(np.count_nonzero(rates)))


@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ArrayLike,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: Literal[False] = ...,
) -> float: ...
@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ArrayLike,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: Literal[True],
) -> np.ndarray: ...
@overload
def freshness(
    crawl_rate: ArrayLike,
    change_rate: ArrayLike,
    importance: ArrayLike | None = ...,
    model: str = ...,
    *,
    per_page: bool,
) -> float | np.ndarray: ...


def freshness(
    crawl_rate: ArrayLike,
    change_rate: ArrayLike,
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
    change_rate : array_like of shape (n_pages,)
        Change rates Delta_i >= 0.
    importance : array_like of shape (n_pages,), optional
        Importance w_i >= 0, not all zero (default: uniform).
    model : {"poisson", "periodic"}, default="poisson"
        How crawls are spaced (see the module docstring).
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
    rate) this average is the paper's accuracy per unit of request rate.  A
    page with ``Delta = 0`` never changes and is always fresh (F = 1, even at
    rate 0); a changing page that is never crawled has F = 0.
    :func:`optimal_rates`' ``objective`` is this average times
    ``sum(importance)``.

    References
    ----------
    K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal
    freshness in web page crawling", VALUETOOLS 2020.
    R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling
    algorithm utilizing noisy change-indicating signals", 2025.

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
    dl = check_array(change_rate, "change_rate", caller, low=0.0)
    w = None if importance is None else check_array(importance, "importance", caller, low=0.0)
    if w is None:
        check_same_length(caller, crawl_rate=r, change_rate=dl)
    else:
        check_same_length(caller, crawl_rate=r, change_rate=dl, importance=w)
    check_choice(model, "model", caller, _MODELS)
    if w is not None and not (w > 0).any():
        raise ValueError(f"The 'importance' parameter of {caller} must not be all zero.")
    fresh = np.empty(len(r))
    _rates.freshness_kernel(r, dl, model == "periodic", fresh)
    if per_page:
        return fresh
    if w is None:
        return float(_rates.csum(fresh) / len(fresh))
    return float(_rates.weighted_sum(fresh, w) / _rates.csum(w))
