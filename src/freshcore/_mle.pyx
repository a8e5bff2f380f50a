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
from libc.math cimport expm1, exp, log, log1p, sqrt, fabs, INFINITY
from libc.stdint cimport uint8_t

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


cdef inline void _bin_terms(double d, double s, double n, double q, double* f, double* d1,
                            double* d2) noexcept nogil:
    """Add the terms of one bin (n changed intervals, sum s, sum of squares q).

    Two points t - sigma and t + sigma of weight n/2 have the bin's mean and
    variance, so sum_bin phi(tau) is matched up to the fourth central moment
    (exact when all intervals of the bin are equal: sigma = 0).  If rounding
    gives a negative variance, or the spread is too wide for t - sigma > 0
    (possible only in the open end bins), the bin's mean alone is used.
    """
    cdef double t = s / n
    cdef double v = q / n - t * t
    cdef double sig
    if v > 0.0:
        sig = sqrt(v)
        if sig < t:
            _mle_term(d, t - sig, 0.5 * n, f, d1, d2)
            _mle_term(d, t + sig, 0.5 * n, f, d1, d2)
            return
    _mle_term(d, t, n, f, d1, d2)


cdef inline double _next_iterate(double dn, double lo, double hi) noexcept nogil:
    """Return the Newton iterate dn if it lies strictly inside (lo, hi), else a bisection point."""
    if dn > lo and dn < hi:
        return dn
    if hi > 4.0 * lo:
        return sqrt(lo) * sqrt(hi)
    return 0.5 * (lo + hi)


cdef double mle_root(const double* a, const weight_t* w, const double* q, Py_ssize_t m,
                     double s0) noexcept nogil:
    """Root of sum_j w_j t_j/(e^{D t_j} - 1) = s0 over the entries with w_j != 0.

    Raw data (``weight_t`` is uint8): ``a`` are the intervals, ``w`` the change
    flags, t_j = a_j (``q`` unused).  Binned data (``weight_t`` is double):
    ``a``, ``q`` are the bin sums of the changed intervals and of their squares
    and ``w`` the bin counts; each bin enters as two points t -+ sigma of weight
    w/2 (mean t = a/w, variance sigma^2 = q/w - t^2), which reproduces the first
    two moments of the bin (see ``_bin_terms``).
    Returns 0 when no change was seen and +inf when s0 == 0 (every interval
    changed: no finite root).
    """
    cdef double n1 = 0.0, s1 = 0.0, lo, hi, d, dn, f, d1, d2, g, p1, p2, den
    cdef Py_ssize_t j
    cdef int _it
    for j in range(m):
        if w[j] != 0:
            n1 += w[j]
            s1 += a[j]
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
                if weight_t is double:
                    _bin_terms(d, a[j], w[j], q[j], &f, &d1, &d2)
                else:
                    _mle_term(d, a[j], 1.0, &f, &d1, &d2)
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
            out[i] = mle_root[uint8_t](&buf[0], &ones[0], NULL, m, s0)


def mm_rows(const uint8_t[:, ::1] changed, const double[:, ::1] intervals, double[::1] out):
    """out[i] = moment-matching root of row i (0 for no change, +inf for all changes)."""
    cdef Py_ssize_t n = changed.shape[0], k = changed.shape[1], i
    if n == 0 or k == 0:
        return
    with nogil:
        for i in range(n):
            out[i] = mm_root(&intervals[i, 0], &changed[i, 0], k)


# ---------------------------------------------------------------------------
# Binned sufficient statistics of the MLE (streaming, bounded memory per page)
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _bin_index(double tau, double log_tau_min, double inv_log_width,
                                  Py_ssize_t n_bins) noexcept nogil:
    cdef double u = (log(tau) - log_tau_min) * inv_log_width
    if not (u > 0.0):
        return 0
    if u >= <double> n_bins:
        return n_bins - 1
    return <Py_ssize_t> u


cdef inline void _grid(double tau_min, double tau_max, Py_ssize_t n_bins,
                       double* log_tau_min, double* inv_log_width) noexcept nogil:
    log_tau_min[0] = log(tau_min)
    inv_log_width[0] = n_bins / (log(tau_max) - log_tau_min[0])


def binned_update(double[:, ::1] n1, double[:, ::1] s1, double[:, ::1] q1, double[:, ::1] totals,
                  const Py_ssize_t[::1] indices, const uint8_t[::1] changed,
                  const double[::1] intervals, double tau_min, double tau_max):
    """Add observation j to page indices[j], in order (repeated indices allowed).

    ``totals[i]`` holds (n0, s0, n1, s1) of page i: count and sum of the
    intervals without / with a change.
    """
    cdef Py_ssize_t m = indices.shape[0], n_bins = n1.shape[1], j, i, b
    cdef double lmin, inv
    _grid(tau_min, tau_max, n_bins, &lmin, &inv)
    with nogil:
        for j in range(m):
            i = indices[j]
            if changed[j]:
                b = _bin_index(intervals[j], lmin, inv, n_bins)
                n1[i, b] += 1.0
                s1[i, b] += intervals[j]
                q1[i, b] += intervals[j] * intervals[j]
                totals[i, 2] += 1.0
                totals[i, 3] += intervals[j]
            else:
                totals[i, 0] += 1.0
                totals[i, 1] += intervals[j]


def binned_roots(const double[:, ::1] n1, const double[:, ::1] s1, const double[:, ::1] q1,
                 const double[:, ::1] totals,
                 double[::1] out):
    """out[i] = root of the binned MLE equation of page i (0 / +inf as in mle_rows)."""
    cdef Py_ssize_t n = n1.shape[0], n_bins = n1.shape[1], i
    if n == 0:
        return
    with nogil:
        for i in range(n):
            out[i] = mle_root[double](&s1[i, 0], &n1[i, 0], &q1[i, 0], n_bins, totals[i, 1])


cdef class IntervalBinsState:
    """Compiled state of one streaming binned-MLE estimator (see freshcore.mle).

    Holds, per log-spaced interval bin, the number, the sum and the sum of
    squares of the intervals that ended in a detected change, plus the totals (n0, s0, n1, s1) of the
    intervals without / with a change.  ``update`` is O(1); ``root`` solves the
    binned MLE equation with the same kernel as ``binned_roots``, so a batch of
    pages fed the same observations gives bit-identical results.
    """
    cdef readonly Py_ssize_t n_bins
    cdef readonly double tau_min, tau_max
    cdef double _lmin, _inv
    cdef double[::1] _n1, _s1, _q1
    cdef readonly double n0, s0, n1_total, s1_total

    def __init__(self, Py_ssize_t n_bins, double tau_min, double tau_max):
        self.n_bins = n_bins
        self.tau_min = tau_min
        self.tau_max = tau_max
        _grid(tau_min, tau_max, n_bins, &self._lmin, &self._inv)
        self._n1 = np.zeros(n_bins)
        self._s1 = np.zeros(n_bins)
        self._q1 = np.zeros(n_bins)
        self.n0 = 0.0
        self.s0 = 0.0
        self.n1_total = 0.0
        self.s1_total = 0.0

    cdef inline void _add(self, bint changed, double tau) noexcept nogil:
        cdef Py_ssize_t b
        if changed:
            b = _bin_index(tau, self._lmin, self._inv, self.n_bins)
            self._n1[b] += 1.0
            self._s1[b] += tau
            self._q1[b] += tau * tau
            self.n1_total += 1.0
            self.s1_total += tau
        else:
            self.n0 += 1.0
            self.s0 += tau

    def update(self, bint changed, double tau):
        self._add(changed, tau)

    def update_many(self, const uint8_t[::1] changed, const double[::1] intervals):
        cdef Py_ssize_t j
        with nogil:
            for j in range(changed.shape[0]):
                self._add(changed[j], intervals[j])

    def root(self):
        return mle_root[double](&self._s1[0], &self._n1[0], &self._q1[0], self.n_bins, self.s0)

    @property
    def n1(self):
        return np.asarray(self._n1).copy()

    @property
    def s1(self):
        return np.asarray(self._s1).copy()

    @property
    def q1(self):
        return np.asarray(self._q1).copy()

    def set_state(self, n1, s1, q1, double n0, double s0, double n1_total, double s1_total):
        cdef Py_ssize_t b
        for b in range(self.n_bins):
            self._n1[b] = n1[b]
            self._s1[b] = s1[b]
            self._q1[b] = q1[b]
        self.n0 = n0
        self.s0 = s0
        self.n1_total = n1_total
        self.s1_total = s1_total

    def __reduce__(self):
        return (_rebuild_state, (self.n_bins, self.tau_min, self.tau_max, self.n1, self.s1, self.q1,
                                 self.n0, self.s0, self.n1_total, self.s1_total))


def _rebuild_state(n_bins, tau_min, tau_max, n1, s1, q1, n0, s0, n1_total, s1_total):
    st = IntervalBinsState(n_bins, tau_min, tau_max)
    st.set_state(n1, s1, q1, n0, s0, n1_total, s1_total)
    return st
