"""The Poisson model's search on the multiplier: :func:`freshcore.rates.optimal_rates` with ``model="poisson"``
where the sort-free Newton (``freshcore._rates.poisson_solve``, without maximum rates) does not apply.

``_solve_poisson`` takes the active pages: the search on the sorted breakpoints (``_poisson_search``, one compiled
pass per step), and where it loses the budget to rounding or a breakpoint leaves the double range the careful
solver on the breakpoint form (``_poisson_careful``).  The KKT conditions, the budget guarantee and the extremes
are in the Notes of :func:`~freshcore.rates.optimal_rates`.
"""

from __future__ import annotations

import math

import numpy as np

from freshcore import _rates
from freshcore._rates_common import _check_spent, _ldexp, _reciprocal_product, _time_share_by


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
