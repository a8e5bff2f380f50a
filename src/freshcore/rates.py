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
takes the fast paths and hands the active pages to the line search on the
multiplier of each model, one compiled pass per step: ``_rates_poisson`` (the
Poisson model without maximum rates runs its whole Newton in one compiled call,
here), ``_rates_periodic`` (each of its searches, on a subsample and on all
pages, one compiled call) and ``_rates_renewal`` (whose per-page passes are
those of ``freshcore._renewal``); ``_rates_common`` holds what they share.

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
from freshcore._rates_common import _BUDGET_TOL, _reciprocal_product
from freshcore._rates_periodic import _solve_periodic
from freshcore._rates_poisson import _solve_poisson
from freshcore._rates_renewal import _solve_renewal
from freshcore._validation import (
    check_array,
    check_choice,
    check_same_length,
    check_scalar,
)

if TYPE_CHECKING:
    from freshcore.blind_simulation import IntervalDistribution

__all__ = ["RatesResult", "freshness", "optimal_rates"]

# How pages change: change rates Delta_i, or (model "renewal") their update laws
ChangeRate: TypeAlias = "ArrayLike | _renewal.AgeTable | Sequence[IntervalDistribution]"

_MODELS = ("poisson", "periodic", "renewal")
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
