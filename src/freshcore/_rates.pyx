# cython: language_level=3, auto_pickle=False
"""Compiled per-page passes of the optimal-rate solvers (``freshcore.rates``).

No validation here (see the design note in ``_core.pyx``): ``freshcore.rates``
passes C-contiguous float64 arrays of equal length over the *active* pages
only (importance > 0 and change rate > 0), with 0 <= lo <= hi.

Both models work in u = L^(-1/2), L the budget multiplier, where the total
rate S(u) = sum_i clip(r_i(u), lo_i, hi_i) is nondecreasing:

* Poisson crawling (eq. (10) of Avrachenkov et al., 2020):
  r_i(u) = s_i u - Delta_i with s_i = sqrt(w_i Delta_i), so S is piecewise
  linear with breakpoints (lo_i + Delta_i)/s_i and (hi_i + Delta_i)/s_i;
* periodic crawling (eq. (5) of Busa-Fekete et al., 2025):
  r_i(u) = Delta_i / x_i with x_i = -1 - W-1(-(1-c_i)/e), c_i = (b_i / u)^2,
  b_i = sqrt(Delta_i/mu_i) (so c_i = L Delta_i/mu_i), and r_i = 0 when u <= b_i.

One call of a pass object is one pass over the pages without the GIL; the line
search on u that calls them is Python (``freshcore.rates``), except for the
Poisson model without maximum rates, whose sort-free Newton runs whole in one
call (``poisson_solve``), and the periodic search (``periodic_search``: the
passes on vectors of pages, ``_rates_periodic.h``).  Sums are
compensated (Neumaier), so that the budget test S(u) <= B is decided on a total
correct to 3.6e-15 relative whatever the page count.

References
----------
K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal
freshness in web page crawling", VALUETOOLS 2020.
R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm
utilizing noisy change-indicating signals", 2025.
"""

from libc.math cimport fabs, fmin, fmax, expm1, ldexp, sqrt, log, log1p, exp, INFINITY, NAN
from libc.string cimport memcpy

import numpy as np
from freshcore._core cimport residual1_inverse as periodic_x


cdef extern from "_rates_periodic.h":
    ctypedef struct _per_sums "freshcore_periodic_sums":
        double s, sc, y, yc, yf, yfc, yff, yffc
    void _periodic_vec "freshcore_periodic_pass"(const double* b, const double* d, const double* lo, const double* hi,
                                                 double lo0, double hi0, double u, double wnear, double* out,
                                                 Py_ssize_t n, _per_sums* sums) noexcept nogil
    void _periodic_x_vec "freshcore_periodic_x"(const double* tt, double* out, Py_ssize_t n) noexcept nogil
    int _per_max_level "freshcore_periodic_max_level"() noexcept nogil
    int _per_set_level "freshcore_periodic_set_level"(int level) noexcept nogil

cdef extern from "_rates_newton.h":
    void freshcore_newton_block(const double* s, const double* d, const double* lo, double lo0, double u,
                                double* out, Py_ssize_t n, double* bt, double* bs, Py_ssize_t* cnt) noexcept nogil

# Sums: plain within blocks of BLOCK pages, Neumaier-compensated across blocks, so the
# relative error of a total of non-negative terms is below BLOCK * 2^-53 (3.6e-15).
cdef enum:
    BLOCK = 32

# Right of this t = b/u (c = t^2 < 2^-1000) the periodic rate is u sqrt(mu Delta / 2) to double
# precision: x = sqrt(2c)(1 + sqrt(2c)/3 + ...), and sqrt(2c)/3 < 2^-500.
cdef double T_TINY = 2.0 ** -500
cdef double INV_SQRT2 = 0.7071067811865476


cdef inline void _nadd(double* s, double* comp, double v) noexcept nogil:
    """Neumaier compensated s += v."""
    cdef double t = s[0] + v
    if fabs(s[0]) >= fabs(v):
        comp[0] += (s[0] - t) + v
    else:
        comp[0] += (v - t) + s[0]
    s[0] = t


cdef inline double _total(double s, double comp) noexcept nogil:
    """The compensated sum s + comp; s itself once it overflowed (comp is then -inf or NaN)."""
    if s == INFINITY:
        return s
    return s + comp


cdef void _poisson_pass(Py_ssize_t n, const double* s, const double* delta, const double* lo,
                        const double* hi, double u, double* out, double* S, double* slope) noexcept nogil:
    """S(u) and its right slope; writes the rates to ``out`` unless it is NULL."""
    cdef Py_ssize_t i, j = 0, end
    cdef double v, inside, bt, bs, tot = 0.0, comp = 0.0, sl = 0.0, scomp = 0.0
    while j < n:
        end = j + BLOCK if j + BLOCK < n else n
        bt = 0.0
        bs = 0.0
        for i in range(j, end):
            # branch-free: whether a page is clipped is unpredictable from one page to the next
            v = s[i] * u - delta[i]
            inside = (v >= lo[i]) & (v < hi[i])
            v = fmin(fmax(v, lo[i]), hi[i])
            bs += s[i] * inside
            bt += v
            if out != NULL:
                out[i] = v
        _nadd(&sl, &scomp, bs)
        _nadd(&tot, &comp, bt)
        j = end
    S[0] = _total(tot, comp)
    slope[0] = _total(sl, scomp)


# The periodic pass's kernel: the eight-lane one of _rates_periodic.h at the widest level the CPU runs
# (0 baseline, 1 AVX2, 2 AVX-512: the same bits), or -1: the scalar loop over _core's Lambert W below
# (where the compiler has no vector extension; tests select it to compare).
cdef int _per_level = _per_set_level(_per_max_level())


def _periodic_levels():
    """(level in use, widest level this build and machine run) of the periodic pass: -1 the scalar loop,
    0 the eight-lane kernel at the baseline (SSE2 on x86-64), 1 AVX2, 2 AVX-512 (the same bits at 0-2)."""
    return _per_level, _per_max_level()


def _set_periodic_level(int level):
    """Use the periodic pass of ``min(level, widest)`` (-1: the scalar loop); return the previous level.
    Not thread-safe: for tests and benchmarks, not while a solve runs."""
    global _per_level
    old = _per_level
    _per_level = -1 if level < 0 or _per_max_level() < 0 else _per_set_level(level)
    return old


cdef void _periodic_pass(Py_ssize_t n, const double* b, const double* delta, const double* lo,
                         const double* hi, double lo0, double hi0, double u, double wnear, double* out, double* S,
                         double* D, double* Df, double* Dff) noexcept nogil:
    """S(u) and dS/du; writes the rates to ``out`` unless it is NULL.  min_rate is ``lo`` (``lo0`` for
    every page where it is NULL), max_rate ``hi`` (``hi0``).  Over the unclipped pages far from their
    threshold (u - b_i >= wnear u) also Df = dS/dy and Dff = d^2 S/dy^2, y = log u.

    b_i = sqrt(Delta_i/mu_i): page i is crawled iff u > b_i.  c = (b/u)^2 and
    1 - c = (u - b)(u + b)/u^2 (accurate near the threshold).  For unclipped pages
    dxi/dy = xi a, a = 2 c (1 + x)/(x^2 (1 - c)) (from R1'(x) = x e^-x and
    e^x = (1 + x)/(1 - c)), and d^2 xi/dy^2 = xi a (a (3 - x) - 2).  Eight pages at a
    time (``_rates_periodic.h``) unless ``_per_level`` is -1: then page by page with
    _core's Lambert W.
    """
    cdef Py_ssize_t i
    cdef double c, om, x, v, a, ya, t, lk, hk
    cdef double wu = wnear * u
    cdef double inv_u = 1.0 / u
    cdef _per_sums sums
    sums.s = sums.sc = sums.y = sums.yc = sums.yf = sums.yfc = sums.yff = sums.yffc = 0.0
    if _per_level >= 0:
        _periodic_vec(b, delta, lo, hi, lo0, hi0, u, wnear, out, n, &sums)
    else:
        for i in range(n):
            lk = lo[i] if lo != NULL else lo0
            if u <= b[i]:
                v = lk
            else:
                hk = hi[i] if hi != NULL else hi0
                t = b[i] * inv_u
                c = t * t
                om = (u - b[i]) * inv_u * ((u + b[i]) * inv_u)
                x = periodic_x(c, om)
                v = delta[i] / x
                if v <= lk:
                    v = lk
                elif v >= hk:
                    v = hk
                elif x > 0.0:
                    a = (2.0 * c * (1.0 + x)) / (x * x * om)
                    ya = v * a
                    _nadd(&sums.y, &sums.yc, ya)
                    if u - b[i] >= wu:
                        _nadd(&sums.yf, &sums.yfc, ya)
                        _nadd(&sums.yff, &sums.yffc, ya * (a * (3.0 - x) - 2.0))
            _nadd(&sums.s, &sums.sc, v)
            if out != NULL:
                out[i] = v
    S[0] = _total(sums.s, sums.sc)
    D[0] = _total(sums.y, sums.yc) / u
    Df[0] = _total(sums.yf, sums.yfc)
    Dff[0] = _total(sums.yff, sums.yffc)


cdef inline double _py_max(double a, double b) noexcept nogil:
    """Python's max(a, b) of two floats: b only where b > a (so a NaN a stays)."""
    return b if b > a else a


cdef inline double _py_min(double a, double b) noexcept nogil:
    """Python's min(a, b) of two floats: b only where b < a."""
    return b if b < a else a


cdef inline double _log0(double x) noexcept nogil:
    """log with log(0) = -inf and NaN below 0 (``rates._log``)."""
    if x > 0.0:
        return log(x)
    return -INFINITY if x == 0.0 else NAN


cdef double _mix(Py_ssize_t n, const double* a, const double* b, double theta, double* out) noexcept nogil:
    """out = a + theta (b - a) (a exactly where theta = 0), and its compensated total."""
    cdef Py_ssize_t i
    cdef double tot = 0.0, comp = 0.0, v
    for i in range(n):
        v = a[i] + theta * (b[i] - a[i]) if theta != 0.0 else a[i]
        out[i] = v
        _nadd(&tot, &comp, v)
    return _total(tot, comp)


cdef double _time_share(Py_ssize_t n, const double* r_a, const double* r_b, double S_a, double S_b,
                        double budget, double* out) noexcept nogil:
    """out = r_a + theta (r_b - r_a) with the largest total <= budget; returns theta (``out`` must
    alias neither).  theta starts at (budget - S_a)/(S_b - S_a); a total over the budget (rounding)
    gives back the excess and a few ulps more, down to theta = 0 (out = r_a exactly)."""
    cdef double theta = _py_min(_py_max((budget - S_a) / (S_b - S_a), 0.0), 1.0), total
    cdef int kk
    for kk in range(9):
        if kk == 8:
            theta = 0.0
        total = _mix(n, r_a, r_b, theta, out)
        if total <= budget:
            break
        theta = _py_max(0.0, theta - (total - budget + ldexp(1.0, kk) * 2.3e-16 * budget) / (S_b - S_a))
    return theta


# The periodic model step (``_model_step``): the pass leaves the pages within W_NEAR u of their threshold out
# of its far sums; a step's window is max(W_NEAR, 16 |step|) and at most W_MAX (else the classic step).
cdef double W_NEAR = 2.0 ** -12
cdef double W_MAX = 0.125


cdef double _model_step(Py_ssize_t n, const double* b, const double* delta, const double* r, double u, double S,
                        double Df, double Dff, double y_c, double u_a, double u_b, double target, double* nb,
                        double* nd, Py_ssize_t cap) noexcept nogil:
    """The next u of the periodic search from a model of S around u, or NaN where there is none.

    The default bounds only (min_rate 0, max_rate inf).  ``r``: the rates at u, whose total is S;
    ``Df``, ``Dff``: dS/dy and d^2 S/dy^2 (y = log u) over the crawled pages at least W_NEAR u
    from their threshold.  With y_c the classic step (in y), the pages with |b_i - u| < w u,
    w = max(W_NEAR, 16 |y_c|), are "near": their rates, which rise steeply from 0 right after b_i
    (and those that enter on the way), are evaluated exactly; the others by their Taylor polynomial
    of degree 2 in y, exact to (|y|/w)^3 of the rate of those at the window's edge.  The model
    S(y) = (S - S_near(0)) + Df' y + Dff' y^2/2 + S_near(y), Df' and Dff' without the near pages
    past W_NEAR u, is solved by Newton steps safeguarded by bisection within the window and the
    bracket (u_a, u_b), one pass over the near pages (copied to ``nb``, ``nd``, at most ``cap``) a
    step.  NaN where w > W_MAX, there are more than ``cap`` near pages, or the model's root is not
    inside the window and the bracket.
    """
    cdef Py_ssize_t i, cnt = 0
    cdef double w = _py_max(W_NEAR, 16.0 * fabs(y_c)), wu, w0u, t, tt, c, om, x, a, ya
    cdef double sn = 0.0, snc = 0.0, fs, fsc = 0.0, ffs, ffsc = 0.0, s0, y, y_lo, y_hi, y_n, m, mp
    cdef double Sn = 0.0, Dn = 0.0, dfn = 0.0, dffn = 0.0, inv_u = 1.0 / u
    cdef bint below = False, above = False, newton, converged = False
    cdef int _it
    if not (w <= W_MAX):
        return NAN
    wu = w * u
    w0u = W_NEAR * u
    fs = Df
    ffs = Dff
    for i in range(n):
        t = b[i] - u
        if fabs(t) < wu:
            if cnt == cap:
                return NAN
            nb[cnt] = b[i]
            nd[cnt] = delta[i]
            cnt += 1
            _nadd(&sn, &snc, r[i])
            if -t >= w0u and r[i] > 0.0:  # in the pass's far sums: take it out (its x from its rate)
                x = delta[i] / r[i]
                tt = b[i] * inv_u
                c = tt * tt
                om = (u - b[i]) * inv_u * ((u + b[i]) * inv_u)
                a = (2.0 * c * (1.0 + x)) / (x * x * om)
                ya = r[i] * a
                _nadd(&fs, &fsc, -ya)
                _nadd(&ffs, &ffsc, -ya * (a * (3.0 - x) - 2.0))
    fs = _total(fs, fsc)
    ffs = _total(ffs, ffsc)
    s0 = (S - target) - _total(sn, snc)  # the far pages' total at y = 0, less the target
    y_lo = log1p(-w)
    y_hi = log1p(w)
    if u_a > 0.0:
        y_lo = _py_max(y_lo, log(u_a / u))
    if u_b < INFINITY:
        y_hi = _py_min(y_hi, log(u_b / u))
    if not (y_lo < y_hi):
        return NAN
    y = y_c if y_lo < y_c < y_hi else 0.5 * (y_lo + y_hi)
    for _it in range(40):
        if cnt:
            _periodic_pass(cnt, nb, nd, NULL, NULL, 0.0, INFINITY, u * exp(y), 0.0, NULL, &Sn, &Dn, &dfn, &dffn)
        m = s0 + fs * y + 0.5 * ffs * y * y + Sn
        mp = fs + ffs * y + dfn
        if m > 0.0:
            y_hi = y
            above = True
        else:
            y_lo = y
            below = True
        if m == 0.0:
            converged = True
            break
        y_n = y - m / mp if mp > 0.0 else NAN
        newton = y_lo < y_n < y_hi
        if not newton:
            y_n = 0.5 * (y_lo + y_hi)
        if fabs(y_n - y) <= 1e-17:
            # a Newton step this short, or a bracket this narrow with the root inside (not at a window's
            # edge that the root lies beyond)
            converged = newton or (below and above)
            break
        y = y_n
    if not converged:
        return NAN
    return u * exp(y)


cdef enum:
    SEARCH_FOUND = 0       # the rates are in ``out``, the multiplier's u in [u_a, u_b]
    SEARCH_HAND_OVER = 1   # not accurate here, or no convergence: the careful solver solves


cdef int _periodic_search(Py_ssize_t n, const double* b, const double* delta, const double* lo,
                          const double* hi, double lo0, double hi0, double budget, double slack, double u,
                          double gap, double* slope, double* out, double* w1, double* w2,
                          double* nb, double* nd, Py_ssize_t cap, int* passes,
                          double* ua_out, double* ub_out) noexcept nogil:
    """The periodic optimum from the start ``u`` (rates written to ``out``; ``w1``, ``w2`` hold n doubles
    of work): SEARCH_FOUND with (u_a, u_b) in ``ua_out``, ``ub_out``, or SEARCH_HAND_OVER.

    Requires sum(lo) < budget (1 - gap) and budget < sum(hi).  Safeguarded Newton on log S against
    log u (S grows like a power of u; plain Newton in u overshoots badly from a small start): for a
    step predicted to cross many entering pages the secant slope of the last two points, or before
    there is one ``slope[0]`` (a subsample's; pages entering at u = b_i add ~Delta_i/37 almost at
    once, which the local derivative misses), for a step across a few the analytic derivative (exact
    on a smooth stretch); bisection when the steps do not halve in 3.  ``gap``: the acceptance (a
    subsample is solved to 1e-4).  Stops when S is in [budget (1 - gap), budget], or when the
    bracketing solutions satisfy (L_a - L_b)(S_b - S_a) <= 1e-15 budget (or u_a, u_b are adjacent
    doubles) and then time-shares between them (``_time_share``).  The last wide secant slope goes
    back to ``slope[0]`` (``slope`` may be NULL).  SEARCH_HAND_OVER where the pass is not accurate
    (min b_i below 2^-500, u outside [2^-500, 2^500] or above 2^500 min b_i, where b_i^2 or
    c_i = (b_i/u)^2 leave the normal doubles), after 300 steps, or when more than ``slack`` of the
    budget is left.  With ``cap`` > 0 (the default bounds only: ``nb``, ``nd`` hold ``cap``
    doubles) a step close to the root is ``_model_step``'s where it has one (about two full passes
    fewer: 3 instead of 5 from a subsample's start on 10^4 uniform pages); with ``cap`` = 0 every
    operation is that of the Python search it replaced (same bits).  ``passes`` counts the passes.
    """
    cdef Py_ssize_t i
    cdef double b_min = INFINITY, u_max, accept, target, u_a, S_a, u_b, S_b, u_p, S_p, wide
    cdef double S = 0.0, D = 0.0, Df = 0.0, Dff = 0.0, k, k_wide, u_n, u_m, theta, tot = 0.0, comp = 0.0
    cdef double[4] steps
    cdef double* r_a = w1
    cdef double* r_b = w2
    cdef double* r_w = out
    cdef double* tmp
    cdef int nh = 0, _it
    cdef bint done = False
    for i in range(n):
        if b[i] < b_min:
            b_min = b[i]
    u_max = _py_min(b_min * 2.0 ** 500, 2.0 ** 500)
    if not (0.0 < u < INFINITY) or not (2.0 ** -500 <= b_min < INFINITY):
        return SEARCH_HAND_OVER  # (b_i^2 = Delta_i/mu_i must be a normal double for b_i to be accurate)
    accept = budget * (1.0 - gap)
    target = budget * (1.0 - 0.5 * gap)
    for i in range(n):
        r_a[i] = lo[i] if lo != NULL else lo0
        _nadd(&tot, &comp, r_a[i])
    u_a = 0.0
    S_a = _total(tot, comp)
    u_b = INFINITY
    S_b = INFINITY
    u_p = 0.0
    S_p = 0.0
    steps[0] = steps[1] = steps[2] = steps[3] = 0.0
    wide = 8.0 / <double>n  # a step longer than this (relative) spans many entries, at a density ~1
    if u <= b_min:
        # Every page is at its minimum (S = sum(lo), no slope): double u until a page enters,
        # without the passes that would only confirm it.
        while u <= b_min:
            u_a = u
            u = 2.0 * u
        u_p = u_a
        S_p = S_a
    for _it in range(300):
        if not (2.0 ** -500 <= u <= u_max):
            return SEARCH_HAND_OVER
        _periodic_pass(n, b, delta, lo, hi, lo0, hi0, u, W_NEAR if cap else 0.0, r_w, &S, &D, &Df, &Dff)
        passes[0] += 1
        if S <= budget:
            u_a = u
            S_a = S
            tmp = r_a
            r_a = r_w
            r_w = tmp
            if S >= accept:
                if r_a != out:
                    memcpy(out, r_a, n * sizeof(double))
                ua_out[0] = u_a
                ub_out[0] = u_a
                return SEARCH_FOUND
        else:
            u_b = u
            S_b = S
            tmp = r_b
            r_b = r_w
            r_w = tmp
        if u_a > 0.0 and u_b < INFINITY and (
                (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget
                or u_b - u_a <= 4.5e-16 * u_b):
            done = True  # (or the bracket is down to adjacent doubles: nothing finer to find)
            break
        k = u * D / S if (D > 0.0 and S > 0.0) else -1.0
        # For a step across many entering pages the secant slope of the last two points (the
        # analytic one is off by several per cent there: a page just past its threshold rises
        # steeply, then flattens, and Newton gains only a factor ~10 a step), or before there is
        # one the caller's (a subsample's, the same shape); for a step across a few entries at
        # most the analytic one (exact on a smooth stretch; the secant is noise there).
        k_wide = -1.0
        if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
            k_wide = _log0(S / S_p) / _log0(u / u_p)
            if k_wide > 0.0 and fabs(u - u_p) > wide * u and slope != NULL:
                slope[0] = k_wide
        elif u_p == 0.0 and slope != NULL and 0.0 < slope[0] < INFINITY:
            k_wide = slope[0]
        if k_wide > 0.0 and (k <= 0.0 or fabs(_log0(target / S)) > wide * k_wide):
            k = k_wide
        u_n = u * exp(_py_min(_py_max(_log0(target / S) / k, -30.0), 30.0)) if k > 0.0 else -1.0
        if cap and k > 0.0:
            # close to the root: the model step (pages near their threshold exact, the others by Taylor)
            u_m = _model_step(n, b, delta, r_a if S <= budget else r_b, u, S, Df, Dff, _log0(target / S) / k,
                              u_a, u_b, target, nb, nd, cap)
            if u_a < u_m < u_b:
                u_n = u_m
        # safeguard: bisect where the steps do not halve in 3 (or leave the bracket)
        steps[nh % 4] = fabs(u - u_p) if u_p > 0.0 else INFINITY
        u_p = u
        S_p = S
        nh += 1
        if (not (u_a < u_n < u_b) or (nh >= 4 and steps[(nh - 1) % 4] > 0.5 * steps[(nh - 4) % 4])
                or fabs(u_n - u) <= 9e-16 * u):
            u_n = 2.0 * _py_max(u, u_a) if u_b == INFINITY else 0.5 * (u_a + u_b)
            nh = 0
        u = u_n
    if not done:
        return SEARCH_HAND_OVER
    # Time-share between the two neighbouring KKT solutions so that the budget is spent: pages
    # whose threshold b_i lies in (u_a, u_b) jump from 0 to ~Delta_i/37 there in double precision,
    # so S(u) = budget may have no floating-point root.  (out must alias neither r_a nor r_b.)
    if r_a == out or r_b == out:
        memcpy(r_w, out, n * sizeof(double))
        if r_a == out:
            r_a = r_w
        else:
            r_b = r_w
    theta = _time_share(n, r_a, r_b, S_a, S_b, budget, out)
    if not _csum(n, out) >= budget - slack:
        return SEARCH_HAND_OVER
    ua_out[0] = u_a
    ub_out[0] = u_a if theta == 0.0 else u_b
    return SEARCH_FOUND


def periodic_search(const double[::1] b, const double[::1] delta, const double[::1] lo, const double[::1] hi,
                    double lo0, double hi0, double budget, double slack, double u, double gap, double slope,
                    double[::1] out, bint model=True):
    """The compiled periodic search (``_periodic_search``) from the start ``u``:
    (found, u_a, u_b, slope, passes).

    min_rate is ``lo`` (or ``lo0`` for every page where ``lo`` is None), max_rate ``hi`` (``hi0``);
    ``slope``: the caller's wide slope of log S against log u (NaN for none), returned updated.  The
    rates go to ``out`` when found.  ``model``: take the model steps where the bounds are the
    defaults (lo and hi None, lo0 = 0, hi0 = inf); False: the Python search's steps, bit for bit.
    """
    cdef Py_ssize_t n = b.shape[0], cap = 0
    cdef double u_a = NAN, u_b = NAN
    cdef const double* plo = NULL
    cdef const double* phi = NULL
    cdef double* pnb = NULL
    cdef double* pnd = NULL
    cdef int status = SEARCH_HAND_OVER, passes = 0
    cdef double[::1] w1, w2, nb, nd
    if n == 0:
        return False, u_a, u_b, slope, passes
    if lo is not None:
        plo = &lo[0]
    if hi is not None:
        phi = &hi[0]
    w1 = np.empty(n)
    w2 = np.empty(n)
    if model and lo is None and hi is None and lo0 == 0.0 and hi0 == INFINITY:
        cap = n // 4 + 16  # (more near pages than this: the classic step)
        nb = np.empty(cap)
        nd = np.empty(cap)
        pnb = &nb[0]
        pnd = &nd[0]
    with nogil:
        status = _periodic_search(n, &b[0], &delta[0], plo, phi, lo0, hi0, budget, slack, u, gap, &slope,
                                  &out[0], &w1[0], &w2[0], pnb, pnd, cap, &passes, &u_a, &u_b)
    return status == SEARCH_FOUND, u_a, u_b, slope, passes


# The smallest normal double: an s_i below it (but not 0) has lost digits, and the sort-free
# Poisson solve hands the problem on.
cdef double DBL_MIN_NORMAL = 2.2250738585072014e-308

cdef enum:
    NEWTON_OK = 0          # solved: the rates are in ``out``
    NEWTON_BAD_INPUT = 1   # an entry is not a finite number >= 0: the caller's checks say which
    NEWTON_HAND_OVER = 2   # not for this solver (or it did not converge): the general path solves


cdef void _newton_pass(Py_ssize_t n, const double* s, const double* delta, const double* lo, double lo0,
                       double u, double* out, double* S, double* slope, Py_ssize_t* count) noexcept nogil:
    """S(u) = sum_i max(s_i u - Delta_i, lo_i) (lo_i = lo0 for all i where ``lo`` is NULL), its left
    slope (the sum of s_i over the pages above their minimum) and their count; writes the rates to
    ``out`` unless it is NULL.  No upper bounds: the sort-free Newton of ``_poisson_newton``.

    Each block of pages is one ``freshcore_newton_block`` (``_rates_newton.h``: SSE2, branch-free,
    four partial sums), the blocks' totals compensated as everywhere in this module.
    """
    cdef Py_ssize_t j = 0, end, cnt = 0
    cdef double bt = 0.0, bs = 0.0, tot = 0.0, comp = 0.0, sl = 0.0, scomp = 0.0
    while j < n:
        end = j + BLOCK if j + BLOCK < n else n
        freshcore_newton_block(s + j, delta + j, lo + j if lo != NULL else NULL, lo0, u,
                               out + j if out != NULL else NULL, end - j, &bt, &bs, &cnt)
        _nadd(&sl, &scomp, bs)
        _nadd(&tot, &comp, bt)
        j = end
    S[0] = _total(tot, comp)
    slope[0] = _total(sl, scomp)
    count[0] = cnt


cdef int _poisson_newton(Py_ssize_t n, const double* s, const double* delta, const double* lo, double lo0,
                         double budget, double slack, double u, Py_ssize_t prev, Py_ssize_t change,
                         int max_passes, double* out, double* u_out, double* total_out) noexcept nogil:
    """Poisson rates max(s_i u - Delta_i, lo_i) spending ``budget``, by Newton on u without sorting.

    S(u) is convex and piecewise linear, and each Newton step is the closed form on the pages
    above their minimum at the current u: from the right of the root it moves left
    monotonically, and from the left its tangent (below S) lands right of the root.  ``u`` is
    the first point to evaluate, the closed form on an active set of ``prev`` pages (``change``:
    how many pages that set differs from the one before by, or n where unknown).  The active sets
    are nested (a page is above its minimum iff u is right of its breakpoint, also in floating
    point), so an unchanged count means an unchanged set: the u just evaluated is the closed form
    on its own active set, exact.  A total over the budget (rounding) steps u down until it is
    not.  The rates are written on the pass predicted to be the last (a change of k pages is
    followed by about k^2/n) or, where that pass was not written, on one more.
    NEWTON_HAND_OVER after ``max_passes``, at a non-finite u, or when more than ``slack`` of the
    budget is left (rounding: s_i u - Delta_i cancels where change rates dwarf the budget).
    """
    cdef double S = 0.0, slope = 0.0, step
    cdef Py_ssize_t cnt = 0
    cdef bint wrote = False, done = False
    cdef int _it
    for _it in range(max_passes):
        if not (0.0 < u < INFINITY):
            return NEWTON_HAND_OVER
        wrote = <double>change * <double>change < 2.0 * <double>prev
        _newton_pass(n, s, delta, lo, lo0, u, out if wrote else NULL, &S, &slope, &cnt)
        if cnt == prev:
            done = True
            break
        if cnt == 0 or not slope > 0.0:
            return NEWTON_HAND_OVER
        change = prev - cnt if prev > cnt else cnt - prev
        prev = cnt
        u = u + (budget - S) / slope
    if not done:
        return NEWTON_HAND_OVER
    if not wrote:
        _newton_pass(n, s, delta, lo, lo0, u, out, &S, &slope, &cnt)
    step = 2.0 ** -52
    for _it in range(64):
        if S <= budget or not u > 0.0:
            break
        u = u * (1.0 - step)
        step *= 2.0
        _newton_pass(n, s, delta, lo, lo0, u, out, &S, &slope, &cnt)
    if not (budget - slack <= S <= budget and 0.0 < u < INFINITY):
        return NEWTON_HAND_OVER
    u_out[0] = u
    total_out[0] = S
    return NEWTON_OK


cdef double _newton_root(Py_ssize_t n, const double* s, const double* delta, const double* lo, double lo0,
                         double budget, double u, Py_ssize_t prev, int max_passes) noexcept nogil:
    """The u of ``_poisson_newton`` (from the same start, no rates written, no checks); NaN if it fails."""
    cdef double S = 0.0, slope = 0.0
    cdef Py_ssize_t cnt = 0
    cdef int _it
    for _it in range(max_passes):
        if not (0.0 < u < INFINITY):
            break
        _newton_pass(n, s, delta, lo, lo0, u, NULL, &S, &slope, &cnt)
        if cnt == prev:
            return u
        if not slope > 0.0:
            break
        prev = cnt
        u = u + (budget - S) / slope
    return NAN


cdef double _subsample_start(Py_ssize_t n, const double* delta, const double* w, const double* lo, double lo0,
                             double budget, Py_ssize_t m, double* work) noexcept nogil:
    """u of the Poisson optimum of m evenly strided pages with the budget scaled to them: a start
    within a few per cent of the root that saves the full passes of the first Newton steps.  ``work``
    holds 3 m doubles.  NaN where the subsample has a bad entry, an s_i that lost digits, or no
    room above its minima (the caller then starts from the all-active u)."""
    cdef Py_ssize_t k, i, st = n // m, n_pos = 0
    cdef double dl, ww, p, lk, ss = 0.0, sd = 0.0, fixed = 0.0, lsum = 0.0
    cdef double sub_budget = budget * (<double>m / <double>n)
    cdef double* s_sub = work
    cdef double* d_sub = work + m
    cdef double* lo_sub = work + 2 * m
    for k in range(m):
        i = k * st
        dl = delta[i]
        ww = w[i]
        if not ((dl >= 0.0) & (dl < INFINITY) & (ww >= 0.0) & (ww < INFINITY)):
            return NAN
        p = ww * dl
        if ww > 0.0 and dl > 0.0 and (p < DBL_MIN_NORMAL or p == INFINITY):
            return NAN
        lk = lo[i] if lo != NULL else lo0
        s_sub[k] = sqrt(p)
        d_sub[k] = dl
        lo_sub[k] = lk
        lsum += lk
        if p > 0.0:
            n_pos += 1
            ss += s_sub[k]
            sd += dl
        else:
            fixed += lk
    if n_pos == 0 or not lsum < sub_budget:
        return NAN
    return _newton_root(m, s_sub, d_sub, lo_sub, lo0, sub_budget, (sub_budget - fixed + sd) / ss, n_pos, 60)


def poisson_solve(const double[::1] delta, const double[::1] w, const double[::1] lo, double lo0, double budget,
                  double slack, int max_passes, double[::1] s, double[::1] out):
    """The Poisson optimum without maximum rates, checked and solved in one call: (status, u, total).

    min_rate is ``lo`` (or ``lo0`` for every page where ``lo`` is None).  From 512 pages on,
    the Newton start is the u of an evenly strided subsample (``_subsample_start``, in ``out``
    as scratch).  One pass then checks every change rate and importance (finite, >= 0, with a
    finite product: else NEWTON_BAD_INPUT, and the caller's checks name the first bad entry or
    hand the overflowing product to the general path), writes s_i = sqrt(w_i Delta_i) to ``s``
    and evaluates the total and its slope at that start; ``_poisson_newton`` goes on from its
    Newton step, or from the all-active u (right of the root) where there is no start.  Pages
    with w_i Delta_i = 0 have s_i = 0 and stay at their minimum.  NEWTON_HAND_OVER where the
    general path must solve: no page with s_i > 0, a product w_i Delta_i of positive factors
    below the normal doubles (s_i would lose digits, or be 0), a sum of the minima within 2^-40 of the budget or above
    it (the general path decides on its own sum), or no convergence.
    """
    cdef Py_ssize_t i, j = 0, end, n = delta.shape[0], n_pos = 0, n_bad = 0, n_far = 0, cnt = 0, m
    cdef Py_ssize_t prev
    cdef double dl, ww, p, bt = 0.0, bsl = 0.0, bs, bd, bl, lo_sum
    cdef double tot = 0.0, tcomp = 0.0, sls = 0.0, slcomp = 0.0
    cdef double ss = 0.0, scomp = 0.0, sd = 0.0, dcomp = 0.0, fixed = 0.0, fcomp = 0.0
    cdef double u = 0.0, u_start = NAN, total = 0.0
    cdef const double* plo = NULL
    cdef bint ok, evaluate
    cdef int status = NEWTON_HAND_OVER
    if n == 0:
        return status, u, total
    if lo is not None:
        plo = &lo[0]
    with nogil:
        m = min(1024, n // 16)
        if m >= 32:
            u_start = _subsample_start(n, &delta[0], &w[0], plo, lo0, budget, m, &out[0])
        evaluate = 0.0 < u_start < INFINITY
        while j < n:
            end = j + BLOCK if j + BLOCK < n else n
            for i in range(j, end):
                dl = delta[i]
                ww = w[i]
                p = ww * dl
                ok = (dl >= 0.0) & (ww >= 0.0) & (p < INFINITY)  # (NaN fails every test)
                n_bad += not ok
                s[i] = sqrt(p)  # (NaN for a bad entry: the status says so, s is not used)
                n_far += (ww > 0.0) & (dl > 0.0) & (p < DBL_MIN_NORMAL)  # (underflowed to 0 too)
            if evaluate:  # the first Newton pass, at the subsample's u
                freshcore_newton_block(&s[j], &delta[j], plo + j if plo != NULL else NULL, lo0, u_start, NULL,
                                       end - j, &bt, &bsl, &cnt)
                _nadd(&tot, &tcomp, bt)
                _nadd(&sls, &slcomp, bsl)
            j = end
        lo_sum = _csum(n, plo) if plo != NULL else lo0 * <double>n
        if n_bad:
            status = NEWTON_BAD_INPUT
        elif not n_far and lo_sum < budget * (1.0 - 2.0 ** -40):
            bt = _total(tot, tcomp)
            bsl = _total(sls, slcomp)
            if evaluate and cnt > 0 and bsl > 0.0:
                u = u_start + (budget - bt) / bsl
                prev = cnt
            else:
                # all the pages with s_i > 0 above their minima: right of the root
                j = 0
                while j < n:
                    end = j + BLOCK if j + BLOCK < n else n
                    bs = 0.0
                    bd = 0.0
                    bl = 0.0
                    for i in range(j, end):
                        if s[i] > 0.0:
                            n_pos += 1
                            bs += s[i]
                            bd += delta[i]
                        else:
                            bl += plo[i] if plo != NULL else lo0
                    _nadd(&ss, &scomp, bs)
                    _nadd(&sd, &dcomp, bd)
                    _nadd(&fixed, &fcomp, bl)
                    j = end
                u = (budget - _total(fixed, fcomp) + _total(sd, dcomp)) / _total(ss, scomp)
                prev = n_pos
            if prev > 0:
                status = _poisson_newton(n, &s[0], &delta[0], plo, lo0, budget, slack, u, prev, n, max_passes,
                                         &out[0], &u, &total)
    return status, u, total


cdef inline double _csum(Py_ssize_t n, const double* x) noexcept nogil:
    cdef Py_ssize_t i
    cdef double tot = 0.0, comp = 0.0
    for i in range(n):
        _nadd(&tot, &comp, x[i])
    return _total(tot, comp)


def poisson_eval(const double[::1] s, const double[::1] delta, const double[::1] lo,
                 const double[::1] hi, double u, double[::1] out=None):
    """(S(u), right slope dS/du) for the Poisson model; fills ``out`` with the rates if given."""
    cdef Py_ssize_t n = s.shape[0]
    cdef double S = 0.0, slope = 0.0
    cdef double* po = NULL
    if n:
        if out is not None:
            po = &out[0]
        with nogil:
            _poisson_pass(n, &s[0], &delta[0], &lo[0], &hi[0], u,
                          po, &S, &slope)
    return S, slope


def periodic_eval(const double[::1] b, const double[::1] delta, const double[::1] lo,
                  const double[::1] hi, double u, double[::1] out=None):
    """(S(u), dS/du) for the periodic model; fills ``out`` with the rates if given."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double S = 0.0, D = 0.0, Df = 0.0, Dff = 0.0
    cdef double* po = NULL
    if n:
        if out is not None:
            po = &out[0]
        with nogil:
            _periodic_pass(n, &b[0], &delta[0], &lo[0], &hi[0], 0.0, INFINITY, u, 0.0, po, &S, &D, &Df, &Dff)
    return S, D


def periodic_sums(const double[::1] b, const double[::1] delta, const double[::1] lo, const double[::1] hi,
                  double u, double wnear, double[::1] out=None):
    """(S, dS/du, dS/dy, d^2 S/dy^2) of the periodic pass (y = log u; the last two over the unclipped pages
    with u - b_i >= wnear u); fills ``out`` with the rates if given (exposed for tests)."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double S = 0.0, D = 0.0, Df = 0.0, Dff = 0.0
    cdef double* po = NULL
    cdef const double* plo = NULL
    cdef const double* phi = NULL
    if n:
        if out is not None:
            po = &out[0]
        if lo is not None:
            plo = &lo[0]
        if hi is not None:
            phi = &hi[0]
        with nogil:
            _periodic_pass(n, &b[0], &delta[0], plo, phi, 0.0, INFINITY, u, wnear, po, &S, &D, &Df, &Dff)
    return S, D, Df, Dff


cdef class PoissonPass:
    """One Poisson pass over fixed pages per call: ``S, slope = pass_(u, out)``.

    Holds typed views of the arrays (taken once) so that a call costs one pass
    over the pages without the GIL, plus about 0.1 us of Python: the line search
    of ``freshcore.rates`` calls it once per iteration.
    """

    cdef const double[::1] s, delta, lo, hi

    def __init__(self, const double[::1] s, const double[::1] delta, const double[::1] lo,
                 const double[::1] hi):
        self.s = s
        self.delta = delta
        self.lo = lo
        self.hi = hi

    def __call__(self, double u, double[::1] out=None):
        """(S(u), right slope dS/du); fills ``out`` with the rates if given."""
        cdef Py_ssize_t n = self.s.shape[0]
        cdef double S = 0.0, slope = 0.0
        cdef double* po = NULL
        if n:
            if out is not None:
                po = &out[0]
            with nogil:
                _poisson_pass(n, &self.s[0], &self.delta[0], &self.lo[0], &self.hi[0], u, po, &S, &slope)
        return S, slope


cdef class PeriodicPass:
    """One periodic pass over fixed pages per call: ``S, D = pass_(u, out)`` (see PoissonPass)."""

    cdef const double[::1] b, delta, lo, hi

    def __init__(self, const double[::1] b, const double[::1] delta, const double[::1] lo,
                 const double[::1] hi):
        self.b = b
        self.delta = delta
        self.lo = lo
        self.hi = hi

    def __call__(self, double u, double[::1] out=None):
        """(S(u), dS/du); fills ``out`` with the rates if given."""
        cdef Py_ssize_t n = self.b.shape[0]
        cdef double S = 0.0, D = 0.0, Df = 0.0, Dff = 0.0
        cdef double* po = NULL
        if n:
            if out is not None:
                po = &out[0]
            with nogil:
                _periodic_pass(n, &self.b[0], &self.delta[0], &self.lo[0], &self.hi[0], 0.0, INFINITY, u, 0.0, po,
                               &S, &D, &Df, &Dff)
        return S, D


cdef class PeriodicScaledPass:
    """The periodic pass at ``u 2^e`` for any positive u 2^e: ``S, uD = pass_(u, e, out)``.

    Page parameters come as mantissa and exponent pairs, b_i = bm_i 2^be_i and
    s_i = sqrt(mu_i Delta_i) = sm_i 2^se_i, so neither they nor u 2^e need to be
    doubles: only the rates (at most the budget near the solution) and the
    ratios t_i = b_i/(u 2^e) do.  Where t_i < 2^-500 the rate is the closed form
    u 2^e s_i/sqrt(2) (c_i = t_i^2 would lose precision below 2^-1022 or vanish).
    Returns S and u dS/du (scale-free).  The caller keeps u within 2^+-600.
    """

    cdef const double[::1] bm, sm, delta, lo, hi
    cdef const int[::1] be, se

    def __init__(self, const double[::1] bm, const int[::1] be, const double[::1] sm, const int[::1] se,
                 const double[::1] delta, const double[::1] lo, const double[::1] hi):
        self.bm = bm
        self.be = be
        self.sm = sm
        self.se = se
        self.delta = delta
        self.lo = lo
        self.hi = hi

    def __call__(self, double u, int e, double[::1] out=None):
        """(S(u 2^e), u dS/du); fills ``out`` with the rates if given."""
        cdef Py_ssize_t i, n = self.bm.shape[0]
        cdef double bt, t, c, om, x, v, d, tot = 0.0, comp = 0.0, der = 0.0, dcomp = 0.0
        cdef bint smooth
        with nogil:
            for i in range(n):
                bt = ldexp(self.bm[i], self.be[i] - e)  # b_i in units of 2^e (0 or inf past the range)
                smooth = False
                if u <= bt:
                    v = self.lo[i]
                else:
                    t = bt / u
                    if t < T_TINY:
                        v = ldexp(self.sm[i] * u * INV_SQRT2, self.se[i] + e)
                        d = v
                        smooth = True
                    else:
                        c = t * t
                        om = (u - bt) / u * ((u + bt) / u)
                        x = periodic_x(c, om)
                        v = self.delta[i] / x
                        smooth = x > 0.0
                        if smooth:
                            d = 2.0 * c * v * (1.0 + x) / (x * x * om)
                    if v <= self.lo[i]:
                        v = self.lo[i]
                    elif v >= self.hi[i]:
                        v = self.hi[i]
                    elif smooth:
                        _nadd(&der, &dcomp, d)
                _nadd(&tot, &comp, v)
                if out is not None:
                    out[i] = v
        return _total(tot, comp), _total(der, dcomp)


cdef class PoissonKeyPass:
    """The Poisson total over its breakpoints: r_i(u) = min(lo_i + s_i (u - a_i), hi_i) on [a_i, c_i).

    a_i = (lo_i + Delta_i)/s_i and c_i = a_i + (hi_i - lo_i)/s_i are the lower
    and upper breakpoints: r_i = lo_i left of a_i, hi_i from c_i on.  In this
    form the rates at a breakpoint are exact (no s_i u - Delta_i cancellation),
    whatever Delta_i is next to the budget, and a page is rising exactly on the
    segments between its two breakpoints as sorted.  ``pass_(u, out)`` returns
    (S(u), right slope); ``pass_.spend(...)`` the closed-form finish on one
    segment.
    """

    cdef const double[::1] s, a, c, lo, hi

    def __init__(self, const double[::1] s, const double[::1] a, const double[::1] c, const double[::1] lo,
                 const double[::1] hi):
        self.s = s
        self.a = a
        self.c = c
        self.lo = lo
        self.hi = hi

    def __call__(self, double u, double[::1] out=None):
        """(S(u), right slope dS/du); fills ``out`` with the rates if given."""
        cdef Py_ssize_t i, n = self.s.shape[0]
        cdef double v, tot = 0.0, comp = 0.0, sl = 0.0, scomp = 0.0
        with nogil:
            for i in range(n):
                if u <= self.a[i]:
                    v = self.lo[i]
                elif u >= self.c[i]:
                    v = self.hi[i]
                else:
                    v = fmin(self.lo[i] + self.s[i] * (u - self.a[i]), self.hi[i])
                if self.a[i] <= u < self.c[i]:
                    _nadd(&sl, &scomp, self.s[i])
                _nadd(&tot, &comp, v)
                if out is not None:
                    out[i] = v
        return _total(tot, comp), _total(sl, scomp)

    def spend(self, double base, double qm, int qe, double[::1] out):
        """Rates at u = base + q, q = qm 2^qe, on the segment right of ``base``; returns their total.

        The pages rising right of ``base`` (a_i <= base < c_i, those its right
        slope counts) get lo_i + s_i (base - a_i) + s_i q, capped at hi_i:
        q = (B - S(base))/slope is the rest of the budget over the slope, given
        as mantissa and exponent because on the last segment it may exceed the
        double range (and s_i/slope may underflow) while the rates s_i q do
        neither.
        """
        cdef Py_ssize_t i, n = self.s.shape[0]
        cdef double v, tot = 0.0, comp = 0.0
        with nogil:
            for i in range(n):
                if base < self.a[i]:
                    v = self.lo[i]
                elif base >= self.c[i]:
                    v = self.hi[i]
                else:
                    v = fmin(self.lo[i] + (self.s[i] * (base - self.a[i]) + ldexp(self.s[i] * qm, qe)), self.hi[i])
                _nadd(&tot, &comp, v)
                out[i] = v
        return _total(tot, comp)


def mix(const double[::1] a, const double[::1] b, double theta, double[::1] out):
    """out = a + theta (b - a), and its compensated total (the time-sharing of two solutions).

    theta = 0 gives a exactly (also where b holds an overflowed rate).
    """
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double tot = 0.0, comp = 0.0, v
    with nogil:
        for i in range(n):
            v = a[i] + theta * (b[i] - a[i]) if theta != 0.0 else a[i]
            out[i] = v
            _nadd(&tot, &comp, v)
    return _total(tot, comp)


def mix_share(const double[::1] a, const double[::1] b, double share, double width, double[::1] out):
    """out = a + ((b - a)/width) share, and its compensated total.

    The time-share of ``mix`` with theta = share/width, for when theta itself
    underflows: a budget far below the jump of one page (b_i - a_i ~ Delta_i/37)
    gives that page the rate ``share`` whatever the ratio.  share = 0 gives a.
    """
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double tot = 0.0, comp = 0.0, v
    with nogil:
        for i in range(n):
            v = a[i] + (b[i] - a[i]) / width * share if share != 0.0 else a[i]
            out[i] = v
            _nadd(&tot, &comp, v)
    return _total(tot, comp)


cdef inline double _periodic_fresh(double r, double dl) noexcept nogil:
    """Fraction of time fresh under periodic crawling at rate r: (r/Delta)(1 - e^(-Delta/r))."""
    cdef double x
    if dl == 0.0:
        return 1.0
    if r == 0.0:
        return 0.0
    x = dl / r
    if x == 0.0:
        return 1.0
    return -expm1(-x) / x


cdef inline double _poisson_fresh(double r, double dl) noexcept nogil:
    """Fraction of time fresh under Poisson crawling at rate r: r/(r + Delta)."""
    cdef double t
    if dl == 0.0:
        return 1.0
    if r == INFINITY:
        return 1.0
    t = r + dl
    if t == INFINITY:  # both near the top of the double range
        return 1.0 / (1.0 + dl / r)
    return r / t


def freshness_kernel(const double[::1] rates, const double[::1] delta, bint periodic, double[::1] out):
    """out[i] = per-page freshness of ``rates[i]`` against change rate ``delta[i]``."""
    cdef Py_ssize_t i, n = rates.shape[0]
    with nogil:
        if periodic:
            for i in range(n):
                out[i] = _periodic_fresh(rates[i], delta[i])
        else:
            for i in range(n):
                out[i] = _poisson_fresh(rates[i], delta[i])


def weighted_sum(const double[::1] x, const double[::1] w):
    """Compensated sum_i w_i x_i."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef double tot = 0.0, comp = 0.0
    with nogil:
        for i in range(n):
            _nadd(&tot, &comp, w[i] * x[i])
    return _total(tot, comp)


def check_pages(const double[::1] delta, const double[::1] w):
    """(bad, active): the number of pages whose change rate or importance is not a finite number >= 0,
    and of those with both > 0 (the pages that matter).  One pass, without the GIL."""
    cdef Py_ssize_t i, n = delta.shape[0], n_bad = 0, n_active = 0
    cdef double dl, ww
    with nogil:
        for i in range(n):
            dl = delta[i]
            ww = w[i]
            n_bad += not ((dl >= 0.0) & (dl < INFINITY) & (ww >= 0.0) & (ww < INFINITY))  # (NaN fails)
            n_active += (dl > 0.0) & (ww > 0.0)
    return n_bad, n_active


def periodic_pass_x(const double[::1] t, double[::1] out):
    """out[i] = x of the eight-lane periodic pass at u = 1, b = t[i] (c = t^2; exposed for tests).

    Uses the kernel of the level in use (the scalar Lambert W at level -1)."""
    cdef Py_ssize_t i, n = t.shape[0]
    if n == 0:
        return
    with nogil:
        if _per_level >= 0:
            _periodic_x_vec(&t[0], &out[0], n)
        else:
            for i in range(n):
                out[i] = periodic_x(t[i] * t[i], (1.0 - t[i]) * (1.0 + t[i]))


def periodic_x_kernel(const double[::1] c, double[::1] out):
    """out[i] = -(1 + W-1(-(1 - c[i])/e)) (exposed for tests)."""
    cdef Py_ssize_t i, n = c.shape[0]
    with nogil:
        for i in range(n):
            out[i] = periodic_x(c[i], 1.0 - c[i])


def csum(const double[::1] x):
    """Compensated sum_i x_i."""
    cdef Py_ssize_t n = x.shape[0]
    cdef double tot = 0.0
    if n:
        with nogil:
            tot = _csum(n, &x[0])
    return tot


def newton_pass(const double[::1] s, const double[::1] delta, const double[::1] lo, double lo0, double u,
                double[::1] out=None):
    """(S(u), left slope, count) of the sort-free Poisson Newton (``_newton_pass``), rates to ``out`` if given.

    min_rate is ``lo``, or ``lo0`` where ``lo`` is None (exposed for tests).
    """
    cdef double S = 0.0, slope = 0.0
    cdef Py_ssize_t cnt = 0, n = s.shape[0]
    cdef double* po = NULL
    cdef const double* plo = NULL
    if out is not None and n:
        po = &out[0]
    if lo is not None and n:
        plo = &lo[0]
    if n:
        with nogil:
            _newton_pass(n, &s[0], &delta[0], plo, lo0, u, po, &S, &slope, &cnt)
    return S, slope, cnt
