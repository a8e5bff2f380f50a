"""The renewal model's search on the multiplier: :func:`freshcore.rates.optimal_rates` with ``model="renewal"``
(pages crawled periodically whose updates form renewal processes).

``_solve_renewal`` takes all pages and their update laws (``freshcore._renewal``, whose per-page passes give the
total and its slope at a multiplier): Newton on log S against log u from the solution of a strided subsample, the
secant across wide steps, bracketed, time-shared across a jump of the total (``_renewal_search``).  The model is in
the Notes of :func:`~freshcore.rates.optimal_rates`.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore import _rates, _renewal
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
    _reciprocal_product,
    _time_share_by,
)

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
        if _bracket_closed(u_a, u_b, S_a, S_b, budget):
            break
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and abs(_log(u / u_p)) > 1e-4 and S != S_p:
            k_sec = _log(S / S_p) / _log(u / u_p)  # with the pages that entered since the last point
            if k_sec > 0.0:
                k = k_sec
        u_p, S_p = u, S
        u_n = _log_newton(u, S, target, k, u_b)
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
