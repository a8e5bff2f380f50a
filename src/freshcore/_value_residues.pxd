# The closed forms of freshcore._value: the residues of the Laplace transforms of V, psi and w, used where
# their series would be long (many terms: iota/beta large), with the elementary pieces they share with the
# series (Horner's rule, 1 - e^{-x}, R^1).  Every function is inline (compiled into freshcore._value, where the
# per-page functions call them); constants and coefficient tables in ``_value_residues.h``:
# ``from freshcore._value_residues cimport residue_value``.
#
# Each ``residue_*`` returns False when its form does not apply, and then writes nothing to its outputs (the
# caller sums its series into the same variable from 0: a refused psi once left its closed form there, and
# psi came out about twice too large); where it applies, its error bound (in its docstring, checked against
# 50-digit references by tests/test_value.py) is below 1e-16 of the result.  The forms replace the series of
# psi and w only where the series would run past LONG_SERIES terms: at most iota/beta terms, and about
# gamma iota (psi) or (Delta + nu) iota (w) before R^n(x s_n) falls off (n > x s_n), so every page with a
# shorter series keeps its series' bits.

cimport cython
from libc.float cimport DBL_MAX, DBL_MIN
from libc.math cimport exp, log, log1p, floor, ceil, sqrt, INFINITY

from freshcore._core cimport horner

cdef extern from "_float_bits.h":
    int freshcore_exponent(double x) noexcept nogil
    double freshcore_pow2(int e) noexcept nogil

cdef extern from "_value_residues.h":
    const double SUM_TOL "FRESHCORE_SUM_TOL"
    const double RES_TAIL "FRESHCORE_RES_TAIL"
    const double RES_MIN_K "FRESHCORE_RES_MIN_K"
    const double RES_MAX_Y "FRESHCORE_RES_MAX_Y"
    const double RES_WIDE_K "FRESHCORE_RES_WIDE_K"
    const double LONG_SERIES "FRESHCORE_LONG_SERIES"
    const double PSI_MIN_K "FRESHCORE_PSI_MIN_K"
    const double PI "FRESHCORE_PI"
    const double LOG_PI "FRESHCORE_LOG_PI"
    double SINHC_COEF "FRESHCORE_SINHC_COEF"[8]
    double R1_COEF "FRESHCORE_R1_COEF"[18]
    double T3_COEF "FRESHCORE_T3_COEF"[24]
    double BQ_COEF "FRESHCORE_BQ_COEF"[24]
    double T2_COEF "FRESHCORE_T2_COEF"[20]


# T3(y) and Bq(y) below y = 2 as y^3 times a polynomial of RES_TERMS terms (the first omitted terms are below
# 2e-21 of the sums)
cdef enum:
    RES_TERMS = 24


cdef inline int fill_tables() except -1:
    """The coefficient tables of the closed forms (once, when the module that includes them is imported).

    SINHC: sinh(h)/h = sum_k h^{2k}/(2k+1)!; R1: R^1(x) = e^{-x} x^2 sum_k x^k/(k+2)!; T3: T3(y) = y^3 sum_k
    (-1)^k y^k/(k+3)!; Bq: Bq(y) = y^3 sum_k (k+1) y^k/(2 (k+3)!); T2: T2(y) = y^2 sum_k (-y)^k/(k+2)!.  Each
    entry is its exact fraction correctly rounded, but R1's, each the rounded quotient of the one before.
    """
    from fractions import Fraction
    from math import factorial
    cdef int k
    for k in range(8):
        SINHC_COEF[k] = float(Fraction(1, factorial(2 * k + 1)))
    R1_COEF[0] = 0.5
    for k in range(1, 18):
        R1_COEF[k] = R1_COEF[k - 1] / (k + 2)
    for k in range(RES_TERMS):
        T3_COEF[k] = float(Fraction((-1) ** k, factorial(k + 3)))
        BQ_COEF[k] = float(Fraction(k + 1, 2 * factorial(k + 3)))
    for k in range(20):
        T2_COEF[k] = float(Fraction((-1) ** k, factorial(k + 2)))
    return 0


cdef inline double one_minus_exp(double x, double* e_out) noexcept nogil:
    """1 - e^{-x} for x >= 0, with e^{-x} in e_out[0]: one exp and no expm1 (libm's is several times slower).

    x < 0.7: 1 - e^{-x} = e^{-x/2} 2 sinh(x/2) = e^{-x/2} x sinhc(x/2), all terms positive (sinhc(h) =
    sinh(h)/h by Horner over 8 terms for h^2 < 0.1225: the first omitted one is below 1e-20), and
    e^{-x} = (e^{-x/2})^2 (each within a few ulps); else 1 - e^{-x} directly (e^{-x} <= 1/2:
    at most one bit lost).
    """
    cdef double h
    if x < 0.7:
        h = exp(-0.5 * x)
        e_out[0] = h * h
        return h * x * horner(SINHC_COEF, 7, 0.25 * x * x)
    h = exp(-x)
    e_out[0] = h
    return 1.0 - h


cdef inline double residual1_e(double x, double ex) noexcept nogil:
    """R^1(x) = 1 - e^{-x} (1 + x) for 0 < x < inf given ex = e^{-x}, without the general residual's pmf.

    x >= 1: the direct form (R^1 >= 1 - 2/e, so the subtraction loses under
    two bits); x < 1: e^{-x} sum_{k>=2} x^k/k! by Horner over 18 terms (the
    first omitted one is below 2/20! < 1e-18 of the sum; fewer terms for small
    x measured no faster).  The scheduler's Greedy ticks evaluate this more than anything else.
    """
    if x >= 1.0:
        return 1.0 - ex * (1.0 + x)
    return ex * (x * x) * horner(R1_COEF, 17, x)


cdef inline double _t3(double y) noexcept nogil:
    """T3(y) = sum_{n>=3} (-1)^{n+1} y^n/n! = 1 - y + y^2/2 - e^{-y} > 0 for y > 0."""
    if y >= 2.0:
        # 1 - y + y^2/2 = ((y - 1)^2 + 1)/2 >= 1 beside e^{-y} <= 0.14: no cancellation
        return 0.5 * ((y - 1.0) * (y - 1.0) + 1.0) - exp(-y)
    # the first omitted term is below 1e-17 of the sum: 7 terms for y < 0.01, 12 for y < 0.25, else 24
    return (y * y * y) * horner(T3_COEF, 6 if y < 0.01 else (11 if y < 0.25 else RES_TERMS - 1), y)


cdef inline double _bq(double y) noexcept nogil:
    """Bq(y) = sum_{n>=3} (n-2) y^n/(2 n!) = e^y (y/2 - 1) + 1 + y/2 (all terms non-negative)."""
    if y >= 2.0:
        return exp(y) * (0.5 * y - 1.0) + (1.0 + 0.5 * y)
    # the first omitted term is below 1e-17 of the sum: 7 terms for y < 0.01, 12 for y < 0.25, else 24
    return (y * y * y) * horner(BQ_COEF, 6 if y < 0.01 else (11 if y < 0.25 else RES_TERMS - 1), y)


cdef inline void _horner2(const double* c1, const double* c2, int last, double x, double* h1_out,
                          double* h2_out) noexcept nogil:
    """``horner(c1, last, x)`` and ``horner(c2, last, x)`` side by side (two independent chains, each the
    operations of its own ``horner``)."""
    cdef double h1 = c1[last], h2 = c2[last]
    cdef int k = last - 1
    while k >= 0:
        h1 = h1 * x + c1[k]
        h2 = h2 * x + c2[k]
        k -= 1
    h1_out[0] = h1
    h2_out[0] = h2


cdef inline void _t3_bq(double y, double* t3_out, double* bq_out) noexcept nogil:
    """``_t3(y)`` and ``_bq(y)``, the same bits: below y = 2 their Horner chains side by side, with a length fixed
    at each call (the compiler unrolls them: no loop exit that depends on y to mispredict)."""
    cdef double y3, h1, h2
    if y >= 2.0:
        t3_out[0] = _t3(y)
        bq_out[0] = _bq(y)
        return
    if y < 0.01:
        _horner2(T3_COEF, BQ_COEF, 6, y, &h1, &h2)
    elif y < 0.25:
        _horner2(T3_COEF, BQ_COEF, 11, y, &h1, &h2)
    else:
        _horner2(T3_COEF, BQ_COEF, RES_TERMS - 1, y, &h1, &h2)
    y3 = y * y * y
    t3_out[0] = y3 * h1
    bq_out[0] = y3 * h2


cdef inline double _root_radius(double lz) noexcept nogil:
    """A lower bound R >= pi on |w| over the non-real roots of w e^w = z, given lz = log z (z > 0).

    At such a root, theta = |Im w| > pi and |w| e^{Re w} = z, so |w|^2 = log^2(z/|w|) + theta^2.
    For z > pi, the root R0 in [pi, z) of R^2 = log^2(z/R) + pi^2 is a lower bound on |w| (if
    |w| < R0 <= z then log(z/|w|) > log(z/R0) >= 0 and |w| > R0).  R_up = sqrt(log^2(z/pi) + pi^2)
    is above R0 and R_lo = sqrt(log^2(z/R_up) + pi^2) below it when R_up <= z: R_lo is returned.
    w = beta (s + c), so |s + c| >= R/beta at the non-real roots of F.
    """
    cdef double a, r_up
    if not (lz > LOG_PI):
        return PI
    a = lz - LOG_PI
    r_up = sqrt(a * a + PI * PI)
    a = lz - log(r_up)
    if not (a >= 0.0):
        return PI
    a = sqrt(a * a + PI * PI)
    return a if a > PI else PI


# delta, alpha, beta > 0 (checked by the caller) and 1 + u >= 1
@cython.cdivision(True)
cdef inline bint residue_value(double iota, double delta, double alpha, double gamma, double nu,
                               double beta, double* out, bint no_subnormal) noexcept nogil:
    """V(iota)/mu from the residues of its Laplace transform, where they converge fast; False if not usable.

    The Laplace transform of V/mu in iota is alpha / (s (s + alpha) F(s)),
    F(s) = s + c - nu e^{-s beta} (sum the transforms of the terms D_n; c = delta + nu).
    Its poles: s = 0 (residue 1/delta), the double pole s = -alpha (F(-alpha) = 0 since
    e^{alpha beta} = gamma/nu; F'(-alpha) = 1 + u, u = gamma beta) and the non-real roots
    of F.  With y = alpha beta = log(gamma/nu) the first two give

        V/mu = C + [R^1(alpha iota)/alpha + kappa (1 - e^{-alpha iota})] / (1 + u) + E,
        kappa = gamma beta^2 / (2 (1 + u)),
        C = 1/delta - (1/alpha + kappa)/(1 + u) = gamma (nu beta Bq(y) - T3(y)) / (delta alpha (1 + u)^2),

    C in a form without the cancellation of its definition (T3, Bq above).  At a
    non-real root s = sigma + i omega, |s + c| = nu e^{-sigma beta} and
    sin(omega beta) < 0, so |omega| > (2k - 1) pi / beta for the k-th root of
    each sign, e^{sigma iota} <= (nu/|omega|)^{iota/beta} and
    |s|, |s + alpha|, |F'(s)|/beta >= |omega|: the residues sum to
    |E| <= RES_TAIL alpha beta^2 (nu beta/R)^{iota/beta} with R = pi, or from
    iota >= 16 beta on with R = ``_root_radius`` (|s + c| >= R/beta, sharper
    for large nu beta e^{c beta}).  Used when that bound is below 1e-16 of the
    result and |C| is at most the result (so C's rounding costs a few ulps of
    V), i.e. when the series over n would need many terms: iota >= 4 beta and
    nu beta < R; the caller sums the series otherwise.
    """
    cdef double kk, ub, scale, r, y, u, p, cpos, cneg, ai, v, em, ea, nb, rad = PI, t3, bq
    cdef int e2, e_lo, e_hi
    cdef bint exact = False, tiny_ub = False
    kk = iota / beta
    if not (kk >= RES_MIN_K):
        return False
    y = alpha * beta
    if y > RES_MAX_Y:
        return False
    scale = RES_TAIL * alpha * beta * beta
    nb = nu * beta
    ub = INFINITY
    r = nb / PI
    if r < 1.0 and r >= DBL_MIN:
        # the bound scale r^kk, r = m 2^e2 with 1/2 <= m < 1 and e2 <= 0, lies between
        # 2^{(e2-1) ceil(kk)} and 2^{e2 floor(kk)}: powers of two first (exponents below -1022
        # make no decision from below and are raised to -1022 above), the exact bound only if they do not decide
        e2 = freshcore_exponent(r)
        e_lo = (e2 - 1) * <int>ceil(kk) if kk <= 2000.0 else -2000000
        if e_lo < -1022 or scale * freshcore_pow2(e_lo) * delta <= SUM_TOL:
            e_hi = e2 * <int>(floor(kk) if kk < 2000.0 else 2000.0)
            if no_subnormal and e_hi <= -1022 and scale < 1.0 and delta < 1e200:
                # ub = scale 2^-1022 would be subnormal (arithmetic on subnormals is slow: about a quarter of
                # the time of the bench's residue pages went there).  It is at most DBL_MIN and ub delta is
                # below 2^-822, far below SUM_TOL: 0 takes its place in the tests below, and the last one
                # compares the subnormal bound itself only where SUM_TOL v < DBL_MIN (the same decisions)
                ub = 0.0
                tiny_ub = True
            else:
                ub = scale * freshcore_pow2(e_hi if e_hi > -1022 else -1022)
                if ub * delta > SUM_TOL:
                    ub = scale * exp(kk * log(r))
                    exact = True
    elif r < 1.0:
        ub = scale * exp(kk * log(r))
        exact = True
    if ub * delta > SUM_TOL:
        # V <= 1/delta: with the radius pi the bound cannot be below 1e-16 of V; a wider one
        # (large z = nu beta e^{c beta}: a high recall with frequent false signals) where many terms remain
        if kk < RES_WIDE_K:
            return False
        rad = _root_radius(log(nb) + (delta + nu) * beta)
        if not (nb < rad):
            return False
        ub = scale * exp(kk * log(nb / rad))
        exact = True
        if ub * delta > SUM_TOL:
            return False
    u = gamma * beta
    ai = alpha * iota
    if ai == INFINITY:
        ai = DBL_MAX  # R^1 and 1 - e^{-x} are 1 there, as at inf (where x e^{-x} would be NaN)
    em = one_minus_exp(ai, &ea)
    if ai >= 1e-150 and delta * alpha >= 1e-280:
        p = (residual1_e(ai, ea) / alpha + (gamma * beta * beta / (2.0 * (1.0 + u))) * em) / (1.0 + u)
        cpos = gamma / (delta * alpha * (1.0 + u) * (1.0 + u))
        _t3_bq(y, &t3, &bq)
        cneg = cpos * t3
        cpos = cpos * (nu * beta) * bq
    else:
        # tiny rates (alpha iota or Delta alpha near underflow): R^1(ai)/alpha = iota R^1(ai)/ai (R^1(x)/x =
        # x/2 (1 - 2x/3 + ...) for x < 1e-150) and, with 1/alpha = beta/y, C = u (nu beta Bq(y) - T3(y))/(y Delta
        # (1 + u)^2), the y^3 of Bq and T3 divided out below y = 2: the same quantities without over- or underflow
        p = (iota * (residual1_e(ai, ea) / ai if ai >= 1e-150 else 0.5 * ai) +
             (gamma * beta * beta / (2.0 * (1.0 + u))) * em) / (1.0 + u)
        cpos = u / (delta * (1.0 + u) * (1.0 + u))
        if y < 2.0:
            cpos = cpos * (y * y)
            cneg = cpos * (_t3(y) / (y * y * y) if y >= 1e-100 else 1.0 / 6.0)
            cpos = cpos * (nu * beta) * (_bq(y) / (y * y * y) if y >= 1e-100 else BQ_COEF[0])
        else:
            cpos = cpos / y
            cneg = cpos * _t3(y)
            cpos = cpos * (nu * beta) * _bq(y)
    v = p + (cpos - cneg)
    if not (cpos + cneg <= v):
        return False
    if tiny_ub and not (SUM_TOL * v >= DBL_MIN):
        ub = scale * freshcore_pow2(-1022)
    if not (ub <= SUM_TOL * v):
        if exact:
            return False
        if not (scale * exp(kk * log(nb / rad)) <= SUM_TOL * v):
            return False
    out[0] = v
    return True


cdef inline double _t2(double y) noexcept nogil:
    """T2(y) = e^{-y} - 1 + y >= 0 without cancellation (below y = 1 by Horner over 20 terms: the first omitted one
    is below 1e-20)."""
    if y >= 1.0:
        return (y - 1.0) + exp(-y)  # e^{-y} <= 1/e beside y - 1 >= 0 and the sum >= 1/e: under one bit lost
    return (y * y) * horner(T2_COEF, 19, y)


@cython.cdivision(True)
cdef inline bint residue_interval(double iota, double gamma, double beta, double* psi_out,
                                  double* dpsi_out) noexcept nogil:
    """psi(iota) (and psi', psi'' in dpsi_out when not NULL) from the residues of its Laplace transform, where the
    series is long; False when that form is not used.

    Transforming the series term by term (R^n(gamma t)/gamma has the transform (gamma/(s + gamma))^{n+1}/(gamma s),
    shifted by n beta) gives 1/(s G(s)), G(s) = s + gamma - gamma e^{-s beta}.  Its poles: the double pole at
    s = 0 (G(0) = 0, G'(0) = 1 + u, G''(0) = -gamma beta^2, u = gamma beta), whose residue is

        (iota + kappa)/(1 + u),  kappa = gamma beta^2/(2 (1 + u))

    (the renewal-theory asymptote: the drift 1 + gamma beta of tau_eff, and kappa/(1 + u) the mean overshoot of
    the level iota), and the non-real roots s_k = sigma + i omega of G.  With w = beta (s + gamma) these solve
    w e^w = u e^u; |s + gamma| = gamma e^{-sigma beta} and sin(omega beta) < 0 give |omega| > (2k - 1) pi/beta
    for the k-th root of each sign, so with M_k = max(R, (2k - 1) pi) (R = pi, or from iota >= 16 beta on the
    wider ``_root_radius`` bound on |w|) e^{sigma iota} = (gamma/|s + gamma|)^{iota/beta} <= (u/M_k)^{iota/beta},
    |s| >= |omega| and |G'(s)| = |1 + beta (s + gamma)| >= beta |omega|.  Summing over the roots (r = u/R,
    K = iota/beta >= 16):

        |psi - (iota + kappa)/(1 + u)| <= 2 beta r^K sum_k ((2k - 1) pi)^-2 = beta r^K / 4,
        |psi' - 1/(1 + u)|             <= (2/pi) (3 + log(1 + R/pi)) r^K,
        |psi''|                        <= (4 R/(pi beta)) (3 + log(1 + R/pi)) r^K,

    (psi' and psi'' from the residues times s and s^2, |s| <= |s + gamma| + gamma <= 2 M_k/beta).  The form is
    used when the series would take more than LONG_SERIES terms and these bounds are below 1e-16 of psi, of
    psi' and of psi'/beta; tests check it against 30-digit sums of the series on both sides of the switch.
    """
    cdef double k, u, r, rad = PI, rk, lg, psi
    if not (beta > 0.0 and beta < INFINITY and gamma > 0.0 and iota < INFINITY):
        return False
    k = iota / beta
    if not (k >= PSI_MIN_K and k > LONG_SERIES and gamma * iota > LONG_SERIES):
        return False
    u = gamma * beta
    if not (u < PI):
        rad = _root_radius(log(u) + u)
    r = u / rad
    if not (r < 1.0):
        return False
    rk = exp(k * log(r)) if r > 0.0 else 0.0
    lg = (2.0 / PI) * (3.0 + log1p(rad / PI)) * rk
    psi = (iota + u * beta / (2.0 * (1.0 + u))) / (1.0 + u)
    if not (0.25 * beta * rk <= SUM_TOL * psi and lg * (1.0 + u) <= SUM_TOL
            and 2.0 * rad * lg * (1.0 + u) <= SUM_TOL):
        return False  # (nothing written: the callers sum the series from their own 0)
    psi_out[0] = psi
    if dpsi_out != NULL:
        dpsi_out[0] = 1.0 / (1.0 + u)
        dpsi_out[1] = 0.0
    return True


@cython.cdivision(True)
cdef inline bint residue_fresh(double iota, double delta, double alpha, double gamma, double nu, double beta,
                               double* w_out) noexcept nogil:
    """w(iota) from the residues of its Laplace transform 1/(s F(s)), F(s) = s + Delta + nu - nu e^{-s beta},
    where the series is long; False when that form is not used.

    The real poles are s = 0 (residue 1/Delta) and s = -alpha (F(-alpha) = 0, F'(-alpha) = 1 + u), which give

        w = 1/Delta - e^{-alpha iota}/(alpha (1 + u))
          = gamma T2(y)/(Delta alpha (1 + u)) + (1 - e^{-alpha iota})/(alpha (1 + u))

    with y = alpha beta = log(gamma/nu) and T2(y) = e^{-y} - 1 + y (alpha (1 + u) - Delta = gamma T2(y)): two
    non-negative terms.  The non-real roots of F are those of G (``residue_interval``) shifted by -alpha, at the
    same |s + Delta + nu| = nu e^{-sigma beta}, so e^{sigma iota} <= (nu beta/M_k)^{iota/beta}, |s| >= |omega|,
    |F'(s)| >= beta |omega| and |w - (that)| <= beta (nu beta/R)^K / 4; used past LONG_SERIES terms when this is
    below 1e-16 of w.
    """
    cdef double k, u, y, r, rad = PI, rk, em, ea, v
    if not (beta > 0.0 and beta < INFINITY and alpha > 0.0 and nu > 0.0 and iota < INFINITY):
        return False
    k = iota / beta
    if not (k >= PSI_MIN_K and k > LONG_SERIES and (delta + nu) * iota > LONG_SERIES):
        return False
    u = gamma * beta
    if not (u < PI):
        rad = _root_radius(log(u) + u)
    r = nu * beta / rad
    if not (r < 1.0):
        return False
    rk = exp(k * log(r)) if r > 0.0 else 0.0
    y = alpha * beta
    em = one_minus_exp(alpha * iota, &ea)
    v = gamma * _t2(y) / (delta * alpha * (1.0 + u)) + em / (alpha * (1.0 + u))
    if not (0.25 * beta * rk <= SUM_TOL * v):
        return False
    w_out[0] = v
    return True
