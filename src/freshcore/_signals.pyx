# cython: language_level=3
"""Compiled kernel of the signal-model fit (Appendix E of Busa-Fekete et al. (2025), SPEC §3).

Design (see ``_core.pyx`` and STYLE.md): the per-page solver is a
``noexcept nogil`` function; the ``def`` kernel loops over pages with the GIL
released and writes into caller-allocated outputs.  Nothing here validates:
``freshcore.signals`` checks shapes, signs, integrality and 0/1 flags first,
and rejects a change in an interval with no elapsed time and no signal.

The problem (one page)
----------------------
Crawl intervals j with elapsed time tau_j, signal count n_j and change flag
z_j.  With s_j = a tau_j + b n_j, (a, b) = (alpha, alpha beta) >= 0,

    L(a, b) = - a T0 - b N0 + sum_{z_j = 1} log(1 - e^{-s_j}),

T0, N0 the sums of tau and n over unchanged intervals.  L is concave (the
log of 1 - e^{-s} is concave in s, s linear in (a, b)).  The changed
intervals are packed into contiguous buffers first, so the inner loops run
over them alone.  With r = 1/(e^s - 1):

    d/ds log(1 - e^{-s}) = r,    d^2/ds^2 = -r (1 + r),

evaluated together with L in one pass (one exponential and one logarithm per
changed interval, see ``_evaluate``).

Solver: projected Newton with an active set on the box [0, a_hi] x [0, b_hi].
A bound is active when the iterate sits on it and the gradient points
outwards; the Newton system is solved on the free coordinates (a diagonal
step replaces it when the 2x2 Hessian is numerically singular, e.g. when all
changed intervals have proportional (tau, n)).  Steps are projected on the
box and backtracked (Armijo) unless the Newton decrement g.d is below 1e-6,
where the quadratic model is exact to rounding and the full step is taken.
Stop after a full Newton step below 1e-7 relative in a and 1e-7 absolute in b
(Newton converges quadratically: the error left is O(1e-14)), after any step
below 1e-11 / 1e-12, when the line search finds no ascent, or at max_iter.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
"""
from libc.math cimport expm1, exp, log, log1p, fabs, INFINITY
from libc.stdint cimport uint8_t

import numpy as np


cdef inline double _clip(double x, double hi) noexcept nogil:
    if x < 0.0:
        return 0.0
    if x > hi:
        return hi
    return x


cdef double _evaluate(const double* tau, const double* cnt, Py_ssize_t m, double t0, double n0,
                      double a, double b, double* g) noexcept nogil:
    """Return L(a, b); g = [dL/da, dL/db, d2L/da2, d2L/dadb, d2L/db2].

    One exponential and one logarithm per changed interval: with e = e^s - 1
    (s < log 2) log(1 - e^{-s}) = log(e) - s and r = 1/e; otherwise, with
    q = e^{-s}, log1p(-q) and r = q/(1 - q).  No overflow for large s, no
    cancellation for small s; s = 0 gives L = -inf (and infinite derivatives).
    """
    cdef double total = -a * t0 - b * n0
    cdef double ga = -t0, gb = -n0, haa = 0.0, hab = 0.0, hbb = 0.0
    cdef double s, r, w, e, q
    cdef Py_ssize_t j
    for j in range(m):
        s = a * tau[j] + b * cnt[j]
        if s < 0.6931471805599453:
            e = expm1(s)
            total += log(e) - s
            r = 1.0 / e
        else:
            q = exp(-s)
            total += log1p(-q)
            r = q / (1.0 - q)
        w = r * (1.0 + r)
        ga += r * tau[j]
        gb += r * cnt[j]
        haa -= w * tau[j] * tau[j]
        hab -= w * tau[j] * cnt[j]
        hbb -= w * cnt[j] * cnt[j]
    g[0] = ga
    g[1] = gb
    g[2] = haa
    g[3] = hab
    g[4] = hbb
    return total


cdef inline double _coord_step(double g, double h, double x, double hi) noexcept nogil:
    """One-coordinate Newton step; towards the bound the gradient points at if h is not < 0."""
    if h < 0.0:
        return -g / h
    return (hi - x) if g > 0.0 else -x


cdef int fit_page(const double* tau, const double* cnt, Py_ssize_t m, double t0, double n0,
                  double a_hi, double b_hi, int max_iter, double* a_out, double* b_out) noexcept nogil:
    """Maximise L over the box; returns the number of Newton iterations."""
    cdef double a, b, L, L1, a1, b1, da, db, det, dec, t, ts, n1sum = 0.0
    cdef double g[5]
    cdef double g1[5]
    cdef bint free_a, free_b, newton
    cdef int it = 0, ls
    cdef Py_ssize_t j
    if m == 0:  # no change observed: L = -a T0 - b N0 is maximal at the origin
        a_out[0] = 0.0
        b_out[0] = 0.0
        return 0
    ts = 0.0
    for j in range(m):
        ts += tau[j]
        n1sum += cnt[j]
    # start inside the box: the signal-blind Jensen bound for a, precision 1 - 1/e for b
    if t0 + 0.5 * ts > 0.0:
        a = m / (t0 + 0.5 * ts)
    else:
        a = a_hi
    a = _clip(a, a_hi)
    if a <= 0.0:
        a = a_hi
    b = 1.0 if b_hi > 1.0 else 0.5 * b_hi
    if n1sum == 0.0:
        b = 0.0  # b does not enter the changed terms; -b N0 makes 0 optimal
    elif n0 == 0.0:
        b = b_hi  # dL/db = sum r_j n_j >= 0 for every a: the upper bound is optimal
    L = _evaluate(tau, cnt, m, t0, n0, a, b, g)
    for it in range(1, max_iter + 1):  # no-cython-lint (the count of iterations is returned)
        free_a = not ((a <= 0.0 and g[0] <= 0.0) or (a >= a_hi and g[0] >= 0.0))
        free_b = n1sum > 0.0 and not ((b <= 0.0 and g[1] <= 0.0) or (b >= b_hi and g[1] >= 0.0))
        da = 0.0
        db = 0.0
        newton = False
        if free_a and free_b:
            det = g[2] * g[4] - g[3] * g[3]
            if g[2] < 0.0 and g[4] < 0.0 and det > 1e-12 * g[2] * g[4]:
                da = -(g[4] * g[0] - g[3] * g[1]) / det
                db = -(g[2] * g[1] - g[3] * g[0]) / det
                newton = True
            else:
                da = _coord_step(g[0], g[2], a, a_hi)
                db = _coord_step(g[1], g[4], b, b_hi)
        elif free_a:
            da = _coord_step(g[0], g[2], a, a_hi)
            newton = g[2] < 0.0
        elif free_b:
            db = _coord_step(g[1], g[4], b, b_hi)
            newton = g[4] < 0.0
        else:
            break
        dec = g[0] * da + g[1] * db
        t = 1.0
        a1 = _clip(a + da, a_hi)
        b1 = _clip(b + db, b_hi)
        L1 = _evaluate(tau, cnt, m, t0, n0, a1, b1, g1)
        if not (dec < 1e-6 and L1 > -INFINITY):
            ls = 0
            while not (L1 >= L + 1e-4 * (g[0] * (a1 - a) + g[1] * (b1 - b))) and ls < 60:
                t *= 0.5
                a1 = _clip(a + t * da, a_hi)
                b1 = _clip(b + t * db, b_hi)
                L1 = _evaluate(tau, cnt, m, t0, n0, a1, b1, g1)
                ls += 1
            if ls == 60:
                break  # no ascent left at the level of rounding
        if (fabs(a1 - a) <= 1e-11 * a1 and fabs(b1 - b) <= 1e-12) or (
                newton and t == 1.0 and fabs(a1 - a) <= 1e-7 * a1 and fabs(b1 - b) <= 1e-7):
            a = a1
            b = b1
            break
        a = a1
        b = b1
        L = L1
        for j in range(5):
            g[j] = g1[j]
    a_out[0] = a
    b_out[0] = b
    return it


def fit_rows(const double[:, ::1] elapsed, const double[:, ::1] signals, const uint8_t[:, ::1] changed,
             const double[::1] a_upper, const double[::1] b_upper, double[::1] alpha, double[::1] alpha_beta,
             int[::1] n_iter, int max_iter):
    """Per row i, the maximiser (alpha[i], alpha_beta[i]) of L over [0, a_upper[i]] x [0, b_upper[i]]."""
    cdef Py_ssize_t n = elapsed.shape[0], k = elapsed.shape[1], i, j, m
    cdef double t0, n0
    cdef double[::1] tbuf, nbuf
    if n == 0:
        return
    tbuf = np.empty(max(k, 1))
    nbuf = np.empty(max(k, 1))
    with nogil:
        for i in range(n):
            t0 = 0.0
            n0 = 0.0
            m = 0
            for j in range(k):
                if changed[i, j] == 0:
                    t0 += elapsed[i, j]
                    n0 += signals[i, j]
                else:
                    tbuf[m] = elapsed[i, j]
                    nbuf[m] = signals[i, j]
                    m += 1
            n_iter[i] = fit_page(&tbuf[0], &nbuf[0], m, t0, n0, a_upper[i], b_upper[i], max_iter,
                                 &alpha[i], &alpha_beta[i])
