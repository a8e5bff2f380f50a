"""The periodic model's search on the multiplier: :func:`freshcore.rates.optimal_rates` with
``model="periodic"``.

``_solve_periodic`` takes the active pages: the compiled search (``_periodic_search``, every pass and step
without the GIL; from 512 pages it starts from the solution of a strided subsample), and where that search is not
accurate or does not spend the budget the careful solver with u, b_i and s_i carried as mantissa and exponent
(``_periodic_careful``).  The C passes are ``_rates_periodic.h`` and ``_rates_periodic_body.h`` (in
``freshcore._rates``); the model, the stopping rule and its guarantee are in the Notes of
:func:`~freshcore.rates.optimal_rates`.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore import _rates
from freshcore._rates_common import (
    _PERIODIC_GAP,
    _SUB_FRACTION,
    _SUB_GAP,
    _SUB_MIN,
    _SUBSAMPLE,
    _bracket_closed,
    _check_spent,
    _log,
    _log_newton,
    _r1,
    _reciprocal_product,
    _time_share_by,
)


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
        if _bracket_closed(u_a, u_b, S_a, S_b, budget):
            break
        k = uD / S if (uD > 0.0 and S > 0.0) else -1.0
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
            k_sec = _log(S / S_p) / _log(u / u_p)
            if k_sec > 0.0:
                k = k_sec
        u_p, S_p = u, S
        u_n = _log_newton(u, S, target, k, u_b)
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
