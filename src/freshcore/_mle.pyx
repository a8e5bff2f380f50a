# cython: language_level=3
"""Compiled kernels of the maximum-likelihood and moment-matching estimators.

Design (see ``_core.pyx`` and STYLE.md): per-page root finders are
``noexcept nogil`` functions; the ``def`` kernels below loop over pages with the
GIL released and write into caller-allocated outputs; ``IntervalBinsState``
holds the compiled state of one streaming binned-MLE estimator.  Nothing here
validates input: ``freshcore.mle`` checks shapes, finiteness, signs and 0/1
flags first, so every interval reaching this module is finite and > 0.

Root finding (both estimators)
------------------------------
The MLE equation (eq. (16) of Avrachenkov, Patil and Thoppe (2022)) is
f(D) = sum_j I_j tau_j/(e^{D tau_j} - 1) = S0;
the moment-matching one F(D) = sum_j e^{-D tau_j} = n0 is rewritten as A(D) = B(D),
two sums of positive terms without cancellation (see ``mm_root``).  log f and
log A are convex and decreasing in D, log B concave and increasing, so Newton's
method on log(lhs) - log(rhs), started at the left of the root, increases
monotonically to it; on the log scale it is nearly linear both in the
exponential tail (large D tau) and where D tau is tiny (f ~ n1/D), so it crosses
many orders of magnitude in a few steps.  The MLE uses Halley's step (the second
derivative costs no extra transcendental) from the Jensen lower bound
n1 log1p(S1/S0)/S1, which is the exact root when all changed intervals are
equal: typically 3 evaluations per page.  The bracket [lo, hi] of SPEC §1 is
updated from the sign at every iterate and any step leaving it (or any
overflowing sum) is replaced by a bisection step (geometric when the bracket
spans more than a factor 4): a safeguarded iteration that never leaves the
bracket, whatever the rounding.  It stops after a step of relative size below
1e-8 (Newton, quadratic) or 1e-6 (Halley, cubic): the error left is rounding.

Numerics: tau/(e^x - 1) = tau/expm1(x) for 1e-150 <= x <= 700, the series
1/D - tau/2 below (also for subnormal or zero x), exp(log tau - x) above (where
e^x overflows but tau e^{-x} may still be a normal number); the derivatives are
accumulated scaled by D and D^2 so that they do not underflow before f does.
Accurate (against mpmath) for intervals from 1e-150 to 1e150 within one page.

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
"""
from libc.math cimport expm1, exp, floor, log, log1p, log2, sqrt, fabs, INFINITY
from libc.stdint cimport int64_t, uint8_t

import numpy as np

ctypedef fused weight_t:
    uint8_t
    double

cdef double _EPS = 2.220446049250313e-16
cdef int _MAX_ITER = 300
# Newton from the left of a convex decreasing function converges monotonically and
# quadratically: after a step of relative size h the error is O(h^2), so a step
# below 1e-8 leaves an error at the level of rounding and the loop stops there.
cdef double _NEWTON_DONE = 1e-8
# The MLE uses Halley's step (cubic: error O(h^3) after a step of size h).
cdef double _HALLEY_DONE = 1e-6


cdef inline void _mle_term(double d, double tau, double w, double* f, double* d1,
                           double* d2) noexcept nogil:
    """Add w phi, -w d phi' and w d^2 phi'' to f[0], d1[0], d2[0], where phi(d) = tau/(e^{d tau} - 1).

    With x = d tau and r = 1/(e^x - 1): phi = tau r, -d phi' = phi x (1 + r),
    d^2 phi'' = phi x^2 (1 + r)(1 + 2 r).  The derivatives are scaled by powers
    of d so that all three sums have the size of f (the unscaled ones carry
    tau^2 and tau^3 and underflow at extreme scales).  Tiny x uses the series
    phi = 1/d - tau/2; where e^x overflows, phi = exp(log tau - x): no NaN, no
    spurious 0.
    """
    cdef double x = d * tau
    cdef double e, r, t, a
    if x > 700.0:
        t = exp(log(tau) - x)  # r = e^{-x} to double precision, but tau r must not underflow first
        if t > 0.0:
            f[0] += w * t
            d1[0] += w * t * x
            d2[0] += w * t * x * x
        return
    if x < 1e-150:
        f[0] += w * (1.0 / d - 0.5 * tau)  # exact in double here, also for subnormal or zero x
        d1[0] += w / d
        d2[0] += 2.0 * w / d
        return
    e = expm1(x)
    r = 1.0 / e
    t = tau * r
    a = t * x * (1.0 + r)
    f[0] += w * t
    d1[0] += w * a
    d2[0] += w * a * x * (1.0 + 2.0 * r)


cdef inline double _next_iterate(double dn, double lo, double hi) noexcept nogil:
    """Return the Newton iterate dn if it lies strictly inside (lo, hi), else a bisection point."""
    if dn > lo and dn < hi:
        return dn
    if hi > 4.0 * lo:
        return sqrt(lo) * sqrt(hi)
    return 0.5 * (lo + hi)


cdef double mle_root(const double* a, const weight_t* w, Py_ssize_t m, double s0) noexcept nogil:
    """Root of sum_j w_j t_j/(e^{D t_j} - 1) = s0 over the entries with w_j != 0, t_j = a_j.

    Raw data (``weight_t`` is uint8): ``a`` are the intervals and ``w`` the change flags.  Binned data
    (``weight_t`` is double): ``a`` are the quadrature points of the bins and ``w`` their weights (see
    ``_gauss_points``).  Returns 0 when no change was seen and +inf when s0 == 0 (every interval changed:
    no finite root).
    """
    cdef double n1 = 0.0, s1 = 0.0, lo, hi, d, dn, f, d1, d2, g, p1, p2, den
    cdef Py_ssize_t j
    cdef int _it
    for j in range(m):
        if w[j] != 0:
            n1 += w[j]
            s1 += w[j] * a[j]
    if n1 == 0.0:
        return 0.0
    if not (s0 > 0.0):
        return INFINITY
    lo = n1 / (s0 + 0.5 * s1)
    hi = n1 / s0
    # x/(e^x - 1) is convex, so by Jensen sum_j t_j/(e^{D t_j} - 1) >= n1 t/(e^{D t} - 1) with
    # t = s1/n1: the root with all changed intervals equal to their mean, n1 log1p(s1/s0)/s1, is
    # a lower bound of the root (exact when they are equal) and a better start than lo.
    d = n1 * log1p(s1 / s0) / s1
    if not (d > lo):
        d = lo
    elif d >= hi:
        d = hi
    for _it in range(_MAX_ITER):
        f = 0.0
        d1 = 0.0
        d2 = 0.0
        for j in range(m):
            if w[j] != 0:
                _mle_term(d, a[j], w[j], &f, &d1, &d2)
        if f > s0:
            lo = d
        elif f < s0:
            hi = d
        else:
            return d
        if hi - lo <= 4.0 * _EPS * lo:
            return d
        dn = -1.0
        if f > 0.0 and d1 > 0.0 and f < INFINITY and d1 < INFINITY and d2 < INFINITY:
            # Halley's step on g(D) = log(f/s0), in relative form: with p1 = -D g' = d1/f and
            # p2 = d2/f, D^2 g'' = p2 - p1^2.  Cubic convergence, no extra transcendental.
            g = log(f / s0)
            p1 = d1 / f
            p2 = d2 / f
            den = 2.0 * p1 * p1 - g * (p2 - p1 * p1)
            if den > 0.0:
                dn = d * (1.0 + 2.0 * g * p1 / den)
            else:
                dn = d * (1.0 + g / p1)
            if fabs(dn - d) <= _HALLEY_DONE * d:
                return dn
        d = _next_iterate(dn, lo, hi)
    return d


cdef double _LN2 = 0.6931471805599453


cdef double mm_root(const double* tau, const uint8_t* changed, Py_ssize_t m) noexcept nogil:
    """Root of F(D) = sum_j e^{-D tau_j} = n0 (moment matching); 0 if n1 = 0, +inf if n0 = 0.

    Evaluated without cancellation: with x = D tau, the terms with x > log 2 are
    kept as e^{-x} (< 1/2) and the others written 1 - q, q = -expm1(-x) (<= 1/2),
    so that F = n0 reads A = B with positive sums on both sides:

        A = sum_{x > log 2} e^{-x} + max(c, 0),   B = sum_{x <= log 2} q + max(-c, 0),

    c = #{x <= log 2} - n0 an exact integer.  For a fixed split log A is convex
    and log B concave, so Newton on log A - log B (one exp or expm1 per term)
    is monotone from the left, and nearly linear both in the exponential tail
    and among tiny x, where plain Newton on F would crawl.  A - B = F - n0
    is continuous across changes of the split and its sign updates the bracket.
    """
    cdef double n0 = 0.0, ssum = 0.0, tmin = INFINITY, lo, hi, d, dn, e, x, lr, nb, c
    cdef double sa, da, sb, db, A, B
    cdef Py_ssize_t j
    cdef int _it
    for j in range(m):
        ssum += tau[j]
        if tau[j] < tmin:
            tmin = tau[j]
        if changed[j] == 0:
            n0 += 1.0
    if n0 == <double> m:
        return 0.0
    if n0 == 0.0:
        return INFINITY
    # Jensen: sum e^{-D tau} >= m e^{-D mean(tau)}  =>  root >= log(m/n0)/mean(tau);
    # each e^{-D tau_j} <= e^{-D min(tau)}          =>  root <= log(m/n0)/min(tau).
    lr = log1p((m - n0) / n0)
    lo = lr / (ssum / m)
    hi = lr / tmin
    d = lo
    for _it in range(_MAX_ITER):
        sa = 0.0
        da = 0.0
        sb = 0.0
        db = 0.0
        nb = 0.0
        for j in range(m):
            x = d * tau[j]
            if x > _LN2:
                e = exp(-x)
                sa += e
                da += tau[j] * e
            else:
                e = expm1(-x)
                sb -= e
                db += tau[j] * (1.0 + e)
                nb += 1.0
        c = nb - n0
        A = sa + (c if c > 0.0 else 0.0)
        B = sb + (-c if c < 0.0 else 0.0)
        if A > B:
            lo = d
        elif A < B:
            hi = d
        else:
            return d
        if hi - lo <= 4.0 * _EPS * lo:
            return d
        dn = -1.0
        if A > 0.0 and B > 0.0 and da + db < INFINITY:
            dn = d + log(A / B) / (da / A + db / B)
            if fabs(dn - d) <= _NEWTON_DONE * d:
                return dn
        d = _next_iterate(dn, lo, hi)
    return d


cdef double poisson_root(const double* p, const uint8_t* changed, Py_ssize_t m) noexcept nogil:
    """MLE of D from flags alone under Poisson crawling with per-crawl rates p_j.

    P(I_j = 1) = D/(D + p_j); the score equation n1/D = sum_j 1/(D + p_j) reads
    sum_j p_j/(p_j + D) = n0 (the moment equation is the same).  Solved like
    ``mm_root``: terms with D > p_j keep e = p_j/(p_j + D) < 1/2, the others
    q = D/(p_j + D) <= 1/2, A = sum e + max(c, 0) = B = sum q + max(-c, 0) with
    c = #{D <= p_j} - n0, Newton on log A - log B (convex, decreasing) from the
    lower end of the bracket [min(p) n1/n0, max(p) n1/n0].  With a constant p
    the bracket is a point and the result is p n1/n0 exactly.
    """
    cdef double n0 = 0.0, pmin = INFINITY, pmax = 0.0, lo, hi, d, dn, c, nb, e, sa, da, sb, db, A, B
    cdef Py_ssize_t j
    cdef int _it
    for j in range(m):
        if p[j] < pmin:
            pmin = p[j]
        if p[j] > pmax:
            pmax = p[j]
        if changed[j] == 0:
            n0 += 1.0
    if n0 == <double> m:
        return 0.0
    if n0 == 0.0:
        return INFINITY
    lo = pmin * (m - n0) / n0
    hi = pmax * (m - n0) / n0
    if not (hi > lo):
        return lo
    d = lo
    for _it in range(_MAX_ITER):
        sa = 0.0
        da = 0.0
        sb = 0.0
        db = 0.0
        nb = 0.0
        for j in range(m):
            e = 1.0 / (p[j] + d)
            if d > p[j]:
                sa += p[j] * e
                da += p[j] * e * e
            else:
                sb += d * e
                db += p[j] * e * e
                nb += 1.0
        c = nb - n0
        A = sa + (c if c > 0.0 else 0.0)
        B = sb + (-c if c < 0.0 else 0.0)
        if A > B:
            lo = d
        elif A < B:
            hi = d
        else:
            return d
        if hi - lo <= 4.0 * _EPS * lo:
            return d
        dn = -1.0
        if A > 0.0 and B > 0.0 and da + db < INFINITY:
            dn = d + log(A / B) / (da / A + db / B)
            if fabs(dn - d) <= _NEWTON_DONE * d:
                return dn
        d = _next_iterate(dn, lo, hi)
    return d


def poisson_rows(const uint8_t[:, ::1] changed, const double[:, ::1] crawl_rates, double[::1] out):
    """out[i] = Poisson-crawl MLE of row i given the rate of every crawl (0 / +inf as in mle_rows)."""
    cdef Py_ssize_t n = changed.shape[0], k = changed.shape[1], i
    if n == 0 or k == 0:
        return
    with nogil:
        for i in range(n):
            out[i] = poisson_root(&crawl_rates[i, 0], &changed[i, 0], k)


def mle_rows(const uint8_t[:, ::1] changed, const double[:, ::1] intervals, double[::1] out):
    """out[i] = MLE root of row i (0 for no change, +inf for all changes).

    The changed intervals of each row are first packed into a contiguous
    buffer (same order), so that the root finder's inner loop runs over them
    alone, without a data-dependent branch per observation.
    """
    cdef Py_ssize_t n = changed.shape[0], k = changed.shape[1], i, j, m
    cdef double s0
    cdef double[::1] buf
    cdef uint8_t[::1] ones
    if n == 0 or k == 0:
        return
    buf = np.empty(k)
    ones = np.ones(k, dtype=np.uint8)
    with nogil:
        for i in range(n):
            s0 = 0.0
            m = 0
            for j in range(k):
                if changed[i, j] == 0:
                    s0 += intervals[i, j]
                else:
                    buf[m] = intervals[i, j]
                    m += 1
            out[i] = mle_root[uint8_t](&buf[0], &ones[0], m, s0)


def mm_rows(const uint8_t[:, ::1] changed, const double[:, ::1] intervals, double[::1] out):
    """out[i] = moment-matching root of row i (0 for no change, +inf for all changes)."""
    cdef Py_ssize_t n = changed.shape[0], k = changed.shape[1], i
    if n == 0 or k == 0:
        return
    with nogil:
        for i in range(n):
            out[i] = mm_root(&intervals[i, 0], &changed[i, 0], k)


# ---------------------------------------------------------------------------
# Ragged logs: one segment of intervals per page
# ---------------------------------------------------------------------------

cdef inline double _sinh(double h) noexcept nogil:
    return 0.5 * (expm1(h) - expm1(-h))


cdef inline double _information_term(double x) noexcept nogil:
    """(x / (2 sinh(x/2)))^2: one changed interval's share of D^2 times the observed information."""
    cdef double h = 0.5 * x, r
    if h < 1e-8:
        return 1.0
    if h > 350.0:
        r = x * exp(-h)  # 2 sinh(h) = e^h to double precision; x e^{-h} may still be a normal number
        return r * r
    r = h / _sinh(h)
    return r * r


def mle_segments(const double[::1] intervals, const uint8_t[::1] changed, const Py_ssize_t[::1] starts,
                 double[::1] out, double[::1] information):
    """out[s] = MLE root of the intervals[starts[s]:starts[s + 1]] (0 for no change, +inf for all changes), as
    ``mle_rows`` computes it for a row (bit-identical), and information[s] = D^2 times the observed Fisher
    information at the root, sum over changed intervals of (x/(2 sinh(x/2)))^2, x = D tau (so that the
    standard error of log D is information**-0.5; 0 where the root is 0 or +inf)."""
    cdef Py_ssize_t n = starts.shape[0] - 1, i, j, m, k_max = 0
    cdef double s0, d, info
    cdef double[::1] buf
    cdef uint8_t[::1] ones
    for i in range(n):
        if starts[i + 1] - starts[i] > k_max:
            k_max = starts[i + 1] - starts[i]
    if n <= 0:
        return
    buf = np.empty(max(k_max, 1))
    ones = np.ones(max(k_max, 1), dtype=np.uint8)
    with nogil:
        for i in range(n):
            s0 = 0.0
            m = 0
            for j in range(starts[i], starts[i + 1]):
                if changed[j] == 0:
                    s0 += intervals[j]
                else:
                    buf[m] = intervals[j]
                    m += 1
            d = mle_root[uint8_t](&buf[0], &ones[0], m, s0)
            out[i] = d
            info = 0.0
            if d > 0.0 and d < INFINITY:
                for j in range(m):
                    info += _information_term(d * buf[j])
            information[i] = info


def mm_segments(const double[::1] intervals, const uint8_t[::1] changed, const Py_ssize_t[::1] starts,
                double[::1] out):
    """out[s] = moment-matching root of segment s, as ``mm_rows`` computes it for a row (bit-identical)."""
    cdef Py_ssize_t n = starts.shape[0] - 1, i
    if n <= 0:
        return
    with nogil:
        for i in range(n):
            if starts[i + 1] == starts[i]:
                out[i] = 0.0  # (no interval: a page crawled once)
            else:
                out[i] = mm_root(&intervals[starts[i]], &changed[starts[i]], starts[i + 1] - starts[i])


# ---------------------------------------------------------------------------
# Binned sufficient statistics of the MLE (streaming, bounded memory per page)
# ---------------------------------------------------------------------------
#
# Each page keeps N_BINS bins of its changed intervals on a logarithmic grid anchored at the page's first
# changed interval a: at level L, bin j holds the intervals tau with
# floor(FINE (log2 tau - log2 a) + 1/2) >> L == j, a width of 2^L/FINE octaves.  The grid depends on ratios of
# intervals only, so it is the same in every unit of time (its edges, at irrational ratios
# 2^((k + 1/2)/FINE), are not hit by round numbers); a window of N_BINS consecutive bins starting at
# ``lo`` holds them.  An interval outside the window moves it when the occupied bins and the new one fit
# in N_BINS, and otherwise doubles the width (level + 1: bins merge in pairs, exactly).  Each bin holds
# (count, mean, M2, M3), its central moment sums, updated in one pass (Pebay's formulas: no
# cancellation) and merged exactly; the score equation takes each bin as the two-point Gauss rule of
# its intervals (exact for cubics).  Per page: ``bins[W, 4]``, ``totals[4]`` = (n0, s0, n1, s1),
# ``anchor`` = log2 a (set at the first change: n1 = 0 before) and ``grid[2]`` = (level, lo).

cdef double FINE = 16.0  # bins per octave at level 0


cdef inline int64_t _floor_shift(int64_t j, int64_t level) noexcept nogil:
    """floor(j / 2**level) for any sign of j."""
    if j >= 0:
        return j >> level
    return -((-j - 1) >> level) - 1


cdef inline void _moments_add(double* b, double x) noexcept nogil:
    """Add x to the bin b = (count, mean, M2, M3): Pebay's one-pass update."""
    cdef double n = b[0], n_new = b[0] + 1.0
    cdef double delta = x - b[1]
    cdef double dn = delta / n_new
    cdef double t1 = delta * dn * n
    b[1] += dn
    b[3] += t1 * dn * (n_new - 2.0) - 3.0 * dn * b[2]
    b[2] += t1
    b[0] = n_new


cdef inline void _moments_merge(double* a, double* b) noexcept nogil:
    """a <- the union of bins a and b (Pebay's pairwise formulas); b is emptied."""
    cdef double na = a[0], nb = b[0], n, delta, dn
    if nb == 0.0:
        return
    if na == 0.0:
        a[0] = b[0]
        a[1] = b[1]
        a[2] = b[2]
        a[3] = b[3]
    else:
        n = na + nb
        delta = b[1] - a[1]
        dn = delta / n
        a[3] = a[3] + b[3] + delta * dn * dn * na * nb * (na - nb) + 3.0 * dn * (na * b[2] - nb * a[2])
        a[2] = a[2] + b[2] + delta * dn * na * nb
        a[1] = a[1] + dn * nb
        a[0] = n
    b[0] = 0.0
    b[1] = 0.0
    b[2] = 0.0
    b[3] = 0.0


cdef inline void _take_bin(double* bins, Py_ssize_t k, int64_t src, Py_ssize_t w) noexcept nogil:
    """Slot k of the window gets slot src's bin, or an empty bin where src is outside the window."""
    cdef Py_ssize_t c
    for c in range(4):
        bins[4 * k + c] = bins[4 * src + c] if 0 <= src < w else 0.0


cdef void _fit_window(double* bins, int64_t* grid, Py_ssize_t w, int64_t jf) noexcept nogil:
    """Move or widen the window (``grid`` = level, lo) until the interval of fine index jf falls in it."""
    cdef int64_t level, lo, j, omin, omax, nmin, nmax, new_lo, shift, dest
    cdef Py_ssize_t k
    while True:
        level = grid[0]
        lo = grid[1]
        j = _floor_shift(jf, level)
        if j >= lo and j < lo + w:
            return
        omin = lo + w
        omax = lo - 1
        for k in range(w):
            if bins[4 * k] > 0.0:
                if lo + k < omin:
                    omin = lo + k
                omax = lo + k
        nmin = j if j < omin else omin
        nmax = j if j > omax else omax
        if nmax - nmin < w:  # move the window as little as fits j
            new_lo = nmin if j < lo else nmax - w + 1
            shift = new_lo - lo
            if shift > 0:  # (slot k takes slot k + shift: in increasing k, each source is read before it is written)
                for k in range(w):
                    _take_bin(bins, k, k + shift, w)
            else:
                for k in range(w - 1, -1, -1):
                    _take_bin(bins, k, k + shift, w)
            grid[1] = new_lo
        else:  # widen: old bin lo + k becomes bin floor((lo + k)/2); in increasing k every target is done
            new_lo = _floor_shift(lo, 1)
            for k in range(w):
                dest = _floor_shift(lo + k, 1) - new_lo
                if dest != k:
                    _moments_merge(&bins[4 * dest], &bins[4 * k])
            grid[0] = level + 1
            grid[1] = new_lo


cdef inline void _add_interval(double* bins, double* totals, double* anchor, int64_t* grid, Py_ssize_t w,
                               bint changed, double tau) noexcept nogil:
    """Add one crawl (a change seen or not after the interval tau > 0) to one page's state."""
    cdef int64_t jf
    if not changed:
        totals[0] += 1.0
        totals[1] += tau
        return
    cdef double lt = log2(tau)
    if totals[2] == 0.0:
        anchor[0] = lt
        grid[0] = 0
        grid[1] = -(w // 2)
    totals[2] += 1.0
    totals[3] += tau
    # (differences of log2: the ratio of two intervals can overflow; |jf| <= FINE 2100)
    jf = <int64_t> floor(FINE * (lt - anchor[0]) + 0.5)
    _fit_window(bins, grid, w, jf)
    _moments_add(&bins[4 * (_floor_shift(jf, grid[0]) - grid[1])], tau)


cdef Py_ssize_t _gauss_points(const double* bins, Py_ssize_t w, double* t, double* wt) noexcept nogil:
    """The two-point Gauss rule of every nonempty bin (nodes t, weights wt); returns the number of points.

    For a bin of count n, mean m and central moments v = M2/n, c = M3/n, the nodes m + x are the roots of
    x^2 - (c/v) x - v (the orthogonal polynomial of degree 2 of the bin's intervals) with weights that
    keep n and the mean: the rule integrates every cubic exactly, so sum_bin phi(tau) is matched up to
    the fourth derivative of phi times the bin's width^4.  A bin of equal intervals (v = 0), or one whose
    lower node rounds to <= 0, is its mean with weight n.
    """
    cdef Py_ssize_t k, p = 0
    cdef double n, m, v, c, disc, x1, x2
    for k in range(w):
        n = bins[4 * k]
        if n == 0.0:
            continue
        m = bins[4 * k + 1]
        v = bins[4 * k + 2] / n
        if v > 0.0:
            c = (bins[4 * k + 3] / n) / v
            disc = sqrt(c * c + 4.0 * v)
            x1 = 0.5 * (c - disc)
            x2 = 0.5 * (c + disc)
            if m + x1 > 0.0 and x1 < 0.0 and x2 > 0.0:
                t[p] = m + x1
                wt[p] = n * (x2 / (x2 - x1))
                t[p + 1] = m + x2
                wt[p + 1] = n * (-x1 / (x2 - x1))
                p += 2
                continue
        t[p] = m
        wt[p] = n
        p += 1
    return p


cdef inline double _binned_root(const double* bins, const double* totals, Py_ssize_t w, double* t,
                                double* wt) noexcept nogil:
    cdef Py_ssize_t p = _gauss_points(bins, w, t, wt)
    return mle_root[double](t, wt, p, totals[1])


def interval_update(double[:, :, ::1] bins, double[:, ::1] totals, double[::1] anchor,
                    int64_t[:, ::1] grid, const Py_ssize_t[::1] indices, const uint8_t[::1] changed,
                    const double[::1] intervals):
    """Add observation j to page indices[j], in order (repeated indices allowed)."""
    cdef Py_ssize_t m = indices.shape[0], w = bins.shape[1], j, i
    if m == 0:
        return
    with nogil:
        for j in range(m):
            i = indices[j]
            _add_interval(&bins[i, 0, 0], &totals[i, 0], &anchor[i], &grid[i, 0], w, changed[j], intervals[j])


def interval_roots(const double[:, :, ::1] bins, const double[:, ::1] totals, double[::1] out):
    """out[i] = root of the binned MLE equation of page i (0 / +inf as in mle_rows)."""
    cdef Py_ssize_t n = bins.shape[0], w = bins.shape[1], i
    cdef double[::1] t = np.empty(2 * w)
    cdef double[::1] wt = np.empty(2 * w)
    if n == 0:
        return
    with nogil:
        for i in range(n):
            out[i] = _binned_root(&bins[i, 0, 0], &totals[i, 0], w, &t[0], &wt[0])


cdef class IntervalBinsState:
    """Compiled state of one streaming binned-MLE estimator (see freshcore.mle).

    The state of one page of ``interval_update`` (``bins``, ``totals``, ``anchor``, ``grid``), updated and
    solved by the same functions, so a batch of pages fed the same observations gives bit-identical results.
    """
    cdef readonly Py_ssize_t n_bins
    cdef double[:, ::1] _bins
    cdef double[::1] _totals, _t, _wt
    cdef double _anchor
    cdef int64_t _grid[2]

    def __init__(self, Py_ssize_t n_bins):
        self.n_bins = n_bins
        self._bins = np.zeros((n_bins, 4))
        self._totals = np.zeros(4)
        self._t = np.empty(2 * n_bins)
        self._wt = np.empty(2 * n_bins)
        self._anchor = 0.0
        self._grid[0] = 0
        self._grid[1] = 0

    def update(self, bint changed, double tau):
        _add_interval(&self._bins[0, 0], &self._totals[0], &self._anchor, self._grid, self.n_bins, changed, tau)

    def update_many(self, const uint8_t[::1] changed, const double[::1] intervals):
        cdef Py_ssize_t j
        with nogil:
            for j in range(changed.shape[0]):
                _add_interval(&self._bins[0, 0], &self._totals[0], &self._anchor, self._grid, self.n_bins,
                              changed[j], intervals[j])

    def root(self):
        return _binned_root(&self._bins[0, 0], &self._totals[0], self.n_bins, &self._t[0], &self._wt[0])

    def get_state(self):
        """(bins, totals, anchor, level, lo): copies of the state arrays and scalars."""
        return (np.asarray(self._bins).copy(), np.asarray(self._totals).copy(), self._anchor, self._grid[0],
                self._grid[1])

    def set_state(self, bins, totals, double anchor, int64_t level, int64_t lo):
        np.asarray(self._bins)[...] = bins
        np.asarray(self._totals)[...] = totals
        self._anchor = anchor
        self._grid[0] = level
        self._grid[1] = lo

    def __reduce__(self):
        return (_rebuild_state, (self.n_bins,) + self.get_state())


def _rebuild_state(n_bins, bins, totals, anchor, level, lo):
    st = IntervalBinsState(n_bins)
    st.set_state(bins, totals, anchor, level, lo)
    return st
