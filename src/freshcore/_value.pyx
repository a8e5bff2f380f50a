# cython: language_level=3
"""Compiled crawl value of one page with noisy change signals (001, SPEC section 3).

Layers as in ``_core.pyx``: ``cdef ... noexcept nogil`` functions for one page
(declared in ``_value.pxd`` so the scheduler can cimport them) and ``def`` batch
kernels over typed memoryviews that release the GIL.  Nothing here validates:
``freshcore.value`` checks and derives every parameter first.

Per page: change rate delta, importance mu, recall lam, false-signal rate nu;
derived alpha = (1 - lam) delta, gamma = lam delta + nu, c = alpha + gamma =
delta + nu, rho = nu / c and beta = log(gamma / nu) / alpha, with the
conventions of ``freshcore.pages.PageModel`` (beta = 0 when lam delta = 0,
beta = inf when nu = 0 or alpha = 0).  With K = floor(iota / beta) and
s_n = iota - n beta:

    psi(iota) = sum_{n<=K} R^n(gamma s_n) / gamma
    w(iota)   = sum_{n<=K} rho^n R^n(c s_n) / c
    V(iota)   = mu (w - e^{-alpha iota} psi) = mu sum_{n<=K} D_n,
    D_n = A_n - B_n,  A_n = rho^n R^n(c s_n)/c,  B_n = e^{-alpha iota} R^n(gamma s_n)/gamma

(e^{-alpha iota} (nu/gamma)^n = e^{-alpha s_n} since e^{-alpha beta} = nu/gamma).
Every D_n >= 0.  Where c s_n < n + 1 (the long tail of a series: every term
once n exceeds c iota) A_n and D_n come from one Poisson series in c s_n,
D_n = rho^n/c sum_{j>n} p_j(c s_n) (1 - r^{j-n-1}) below, summed two terms a
pass from one pmf (no residual, no subtraction).  Elsewhere D_n is formed as
A_n - B_n where B_n <= 0.75 A_n (at most two
bits lost), otherwise as the sum of non-negative terms

    D_n = rho^n / c * sum_{j>n} p_j(c s_n) (1 - r^{j-n-1}),  r = gamma / c,

obtained by expanding both residuals as Poisson tails (1 - r^m by the
recurrence (1 - r^m) r + (1 - r)).  Where both arguments exceed n + 1 (long
series) the complement form rho^n/c [-expm1(E) - Q^n(c s) + e^E Q^n(gamma s)],
E = -alpha s - (n+1) log(gamma/c), Q^n = 1 - R^n, is used instead when its
lower-tail terms are both at most a quarter of -expm1(E) (at most two bits lost).  The sum over n stops when the
provable remainder sum_{m>n} D_m <= A_n q/(1 - q), q = rho min(1, c s_n/(n+2))
(R^{m+1}(x)/R^m(x) <= x/(m+2) and s_n decreases), is below 1e-16 of the sum;
each term's own series stops at 1e-17 of that term plus 1e-17 of the sum before it
(so N terms add at most N 1e-17 of V in truncation).  The sums over n of psi, w and
V add their first 256 terms plainly and carry the rounding error of every later
addition (``_add``), and re-anchor rho^n at exp(n log rho) from n = 256 on (``_rho_power``):
plain sums lost 2.7e-12 of psi at 1e5 terms and 2.7e-11 at 1e6, the product rho_n rho
up to 3.3e-12 of w and V (rho near 1); measured against 40-digit sums, K = 1e3..1e6: 2e-14.

Two shortcuts make up most of the speed.  Term 0, the whole sum when beta >
iota, has closed forms (``_term0``).  Where iota >= 4 beta (the pages with
many terms: small beta) V is taken from the residues of its Laplace transform
alpha / (s (s + alpha) (s + c - nu e^{-s beta})): two real poles in closed
form plus the non-real ones, whose sum is bounded by 0.06785 alpha beta^2
(nu beta/R)^{iota/beta} with R = pi (or a wider radius when nu beta e^{c beta}
is large); that form is used only when the bound is below 1e-16 of V, and
psi and w have theirs where their series would be long (the unit
``_value_residues.pxd``, compiled into this module; tests check the bounds
against 50-digit references).  They also remove the O(iota/beta) cost of
pages with a high recall and many false signals.  Elsewhere the series above
runs, with pmfs from pow (or multiplications) times a table of 1/j!.  A
recurrence across terms at a fixed argument does not apply: the arguments
c (iota - n beta) change with n.

The batch kernel of exact V (``value_kernel``, kind 0) gives every page the
bits of ``page_value`` (the scheduler's path) but sums the series pages
together, a pass over n at a time (``_exact_values``): one page's terms wait on
each other (a term's tolerance comes from the sum of the ones before), while
the terms of different pages do not, and the pair series of a pass run four or
eight at a time without a data-dependent exit (``_value_series.h``, AVX2 or
AVX-512 where the processor has it).  Page by page, that exit cost more than
the sums themselves.
"""

cimport cython
from libc.stdlib cimport malloc, free
from libc.math cimport exp, expm1, log, log1p, floor, frexp, ldexp, pow, isnan, INFINITY, NAN

from freshcore._core cimport residual_exp, poisson_pmf
from freshcore._value_residues cimport (PI, RES_MIN_K, SINHC_COEF, fill_tables, one_minus_exp, residual1_e,
                                        residue_value, residue_interval, residue_fresh, SUM_TOL as CLOSED_FORM_TOL)

cdef extern from "_float_bits.h":
    int freshcore_exponent(double x) noexcept nogil

cdef extern from "_value_series.h":
    void freshcore_series_pairs(Py_ssize_t m, long j, const double* xs, const double* rs, const double* omrs,
                                const double* tols, const double* inv, long inv_size, double series_tol,
                                double* sa_out, double* sd_out) noexcept nogil
    int freshcore_set_series_simd(int level) noexcept nogil
    void freshcore_lower_sums(Py_ssize_t m, long n, const double* xs, double series_tol, double* out) noexcept nogil
    void freshcore_tail_sums(Py_ssize_t m, long j, const double* xs, const double* inv, long inv_size,
                             double series_tol, double* out) noexcept nogil
    void freshcore_term0_closed(Py_ssize_t m, const double* ss, const double* cs, const double* gs, const double* a_s,
                                const double* xs, const double* axs, const double* gxs, int ax_small, int gx_small,
                                const double* sinhc, double cancel_ratio, double* d_out, double* a_out,
                                unsigned char* need) noexcept nogil
    void freshcore_term0_series(Py_ssize_t m, const double* xs, const double* axs, const double* gxs,
                                const double* inv, double series_tol, double* sa_out, double* se_out) noexcept nogil

fill_tables()
freshcore_set_series_simd(-1)  # (the batch series' kernels, chosen once at import, before any thread runs them)

cdef double CANCEL_RATIO = 0.75
cdef double SERIES_TOL = 1e-17
# every sum stops when its provable remainder is below SUM_TOL of it, as the closed forms' error bounds must be
# (a variable rather than the header's constant: GCC then keeps page_value's loop one register move shorter)
cdef double SUM_TOL = CLOSED_FORM_TOL
# the sums over n (psi, w, V) add their terms plainly up to term COMPENSATE_FROM - 1 and with their rounding
# errors carried from there on (``_add``): plain addition of N non-negative terms may lose (N - 1) 2^-53 of the sum,
# 2.8e-14 at N = 256, but 1.5-2.7e-12 was measured at N = 1e5 (most terms of a long psi series are the same
# 1/gamma, so the roundings share a sign); the series shorter than that keep the bits of plain summation
cdef enum:
    COMPENSATE_FROM = 256
    RHO_ANCHOR = 16  # (``_rho_power``: exp(n log rho) every RHO_ANCHOR terms, a power of two dividing COMPENSATE_FROM)
# every series stops past MAX_TERMS terms with NaN, where no closed form applies (the Python functions then raise
# ValueError)
cdef long MAX_TERMS = 1048576
# 1/k for the Poisson ratios x/k of the series (a multiplication instead of a division)
cdef enum:
    INV_SIZE = 2048
    FACT_SIZE = 101
cdef double INV[INV_SIZE]
INV[0] = INFINITY
for _k in range(1, INV_SIZE):
    INV[_k] = 1.0 / <double>_k
# 1/j!, each correctly rounded (from the exact fraction)
cdef double INV_FACT[FACT_SIZE]
from fractions import Fraction as _Fraction
from math import factorial as _factorial
for _k in range(FACT_SIZE):
    INV_FACT[_k] = float(_Fraction(1, _factorial(_k)))


cdef inline double _add(long n, double total, double t, double* err) noexcept nogil:
    """total + t for the sums over n: rounded, or from n = COMPENSATE_FROM on with its rounding error added to
    err[0] (Knuth's TwoSum, exact in round-to-nearest whatever the magnitudes: -ffp-contract=off, no fast-math).
    The sum is then total + err[0] (err[0] = 0 before: the same bits as plain summation)."""
    cdef double s, bb
    if n < COMPENSATE_FROM:
        return total + t
    s = total + t
    bb = s - total
    err[0] += (total - (s - bb)) + (t - bb)
    return s


cdef double _difference_series(long n, double cs, double lr, double one_minus_r) noexcept nogil:
    """sum_{j>n} p_j(cs) (1 - r^{j-n-1}) as non-negative terms, lr = log r = log(gamma/c) < 0.

    Upwards, 1 - r^{m+1} = (1 - r^m) r + (1 - r) adds two non-negative numbers
    (no cancellation, no expm1 per term); downwards -expm1(m lr) is used.
    """
    cdef long j0, j
    cdef double p0, p, fac, total = 0.0, q, term, r = exp(lr)
    if cs == INFINITY:
        return 1.0  # (the Poisson mass at infinity, where 1 - r^{j-n-1} -> 1: r < 1)
    j0 = <long>floor(cs)
    if j0 < n + 1:
        j0 = n + 1
    p0 = poisson_pmf(j0, cs)
    # upward from j0 (j0 >= cs - 1: the pmf ratio cs/(j+1) is below 1 beyond it)
    p = p0
    j = j0
    fac = -expm1(<double>(j - n - 1) * lr) if j > n + 1 else 0.0
    while True:
        total += p * fac
        j += 1
        p *= cs / <double>j
        fac = fac * r + one_minus_r
        q = cs / <double>(j + 1)
        # remainder from j on <= p / (1 - q)
        if p == 0.0 or (q < 1.0 and p <= SERIES_TOL * total * (1.0 - q)):
            break
    # downward from j0 - 1 to n + 1 (pmf and factor both decrease)
    p = p0
    j = j0
    while j > n + 1:
        p *= <double>j / cs
        j -= 1
        fac = -expm1(<double>(j - n - 1) * lr)
        term = p * fac
        total += term
        q = <double>j / cs
        if term == 0.0 or (q < 1.0 and term * q <= SERIES_TOL * total * (1.0 - q)):
            break
    return total


cdef inline double _pmf(long j, double x) noexcept nogil:
    """p_j(x) = x^j e^{-x} / j!: pow, exp and a table for j <= 100, 0 < x < 100 (each factor to ~1 ulp,
    no overflow: x^j < 1e200, 1/j! > 1e-159) while x^j stays normal; poisson_pmf (Loader's form) elsewhere."""
    cdef double xj, x2
    if j < FACT_SIZE and x < 100.0 and x > 0.0:
        if j <= 8:
            # a few multiplications instead of pow (at most 4 roundings: x^j within 2 ulp)
            x2 = x * x
            if j <= 2:
                xj = x if j == 1 else (x2 if j == 2 else 1.0)
            elif j <= 4:
                xj = x2 * x if j == 3 else x2 * x2
            elif j <= 6:
                xj = (x2 * x2) * (x if j == 5 else x2)
            else:
                xj = (x2 * x2) * (x2 * (x if j == 7 else x2))
        else:
            xj = pow(x, <double>j)
        if xj >= 1e-280:
            return xj * INV_FACT[j] * exp(-x)
    return poisson_pmf(j, x)


cdef inline double _series_pair(long n, double x, double r, double one_minus_r, double tol_abs,
                                double* ra) noexcept nogil:
    """For x < n + 1: sum_{j>n} p_j(x) (1 - r^{j-n-1}); R^n(x) = sum_{j>n} p_j(x) in ra[0].

    Both Poisson tails from one pmf and one loop: with t_m = p_{n+1+m}(x) /
    p_{n+1}(x) (ratio x/(n+2+m) < 1) and f_m = 1 - r^m (f_{m+1} = f_m r + 1 - r),
    the sums of t_m and t_m f_m, all terms non-negative, stopped when the
    remainder of either, below t_m q/(1 - q) with q = x/(n+3+m), is under
    1e-17 of the smaller sum plus ``tol_abs`` (1e-17 of the page's sum so far, in
    units of p_{n+1}(x): a term far below the sum needs fewer digits).
    """
    cdef double p, t = 1.0, sa = 1.0, sd = 0.0, f = 0.0, q1, q2, t1, f1
    cdef double r2 = r * r, one_minus_r2 = one_minus_r * (1.0 + r)
    cdef long j = n + 2
    p = _pmf(n + 1, x)
    if p == 0.0:
        ra[0] = 0.0
        return 0.0
    tol_abs /= p
    q1 = x * INV[j] if j < INV_SIZE - 1 else x / <double>j
    while True:
        # two terms per pass: the loop-carried chains (t, f, the sums) take one step per pair
        q2 = x * INV[j + 1] if j < INV_SIZE - 1 else x / <double>(j + 1)
        t1 = t * q1
        f1 = f * r + one_minus_r
        t = t * (q1 * q2)
        f = f * r2 + one_minus_r2
        sa += t1 + t
        sd += t1 * f1 + t * f
        j += 2
        q1 = x * INV[j] if j < INV_SIZE - 1 else x / <double>j
        # remainder of either sum <= t q1 / (1 - q1)
        if t * q1 <= (SERIES_TOL * sd + tol_abs) * (1.0 - q1) or t == 0.0:
            break
    ra[0] = p * sa
    return p * sd


cdef inline double _series_tail(long n, double x, double tol_abs, double* pmf_out) noexcept nogil:
    """R^n(x) = sum_{j>n} p_j(x) for x < n + 1, as in ``_series_pair`` (one sum), stopped when the
    remainder is below 1e-17 of the sum plus ``tol_abs``; p_{n+1}(x) in ``pmf_out[0]``."""
    cdef double p, t = 1.0, sa = 1.0, q1, q2, t1
    cdef long j = n + 2
    p = _pmf(n + 1, x)
    pmf_out[0] = p
    if p == 0.0:
        return 0.0
    tol_abs /= p
    q1 = x * INV[j] if j < INV_SIZE - 1 else x / <double>j
    while True:
        q2 = x * INV[j + 1] if j < INV_SIZE - 1 else x / <double>(j + 1)
        t1 = t * q1
        t = t * (q1 * q2)
        sa += t1 + t
        j += 2
        q1 = x * INV[j] if j < INV_SIZE - 1 else x / <double>j
        if t * q1 <= (SERIES_TOL * sa + tol_abs) * (1.0 - q1) or t == 0.0:
            break
    return p * sa


# x >= n + 1 >= 1
@cython.cdivision(True)
cdef inline double _lower_from_pmf(long n, double x, double pn) noexcept nogil:
    """Q^n(x) = sum_{j<=n} p_j(x) for x >= n + 1 from pn = p_n(x): pn sum_k u_k, u_{k+1} = u_k (n-k)/x,
    stopped when the remainder (below u_k r/(1 - r), r = (n-k)/x < 1) is under 1e-17 of the sum.
    R^n(x) = 1 - Q^n(x) loses nothing there (Q^n(x) <= Q^n(n+1) < 0.6)."""
    cdef double t = 1.0, total = 1.0, r, ix = 1.0 / x
    cdef long k = 0
    if pn == 0.0:
        return 0.0
    while k < n:
        t *= <double>(n - k) * ix
        total += t
        k += 1
        r = <double>(n - k) * ix
        if t * r <= SERIES_TOL * total * (1.0 - r):
            break
    return pn * total


# c = delta + nu > 0 and gamma > 0 (callers take gamma = 0 to the Greedy value)
@cython.cdivision(True)
cdef inline double _term0(double s, double c, double gamma, double alpha, double* a_out) noexcept nogil:
    """D_0(s) = R^0(c s)/c - e^{-alpha s} R^0(gamma s)/gamma >= 0 in closed form or by one short series;
    A_0 in a_out[0]; nan when none of the forms below applies (the caller then uses the general ones).

    Where x = c s > 2 or gamma s >= 0.7: A_0 - B_0 if B_0 <= 0.75 A_0, else
    D_0 = [gamma (1 - e^{-alpha s}) - alpha e^{-alpha s} (1 - e^{-gamma s})]/(c gamma)
    if its second part is at most 0.75 of the first (gamma s >= 0.7 and alpha s
    small, the case of a recall near 1: the ratio is below
    (1 - e^{-gamma s})/(gamma s)); at most two bits are lost in either difference.
    Otherwise, for x <= 2: D_0 = s e^{-x} sum_{k>=1} e_k, e_k = (x^k - (gamma s)^k)/(k+1)!,
    by the non-negative recurrence e_k = (x e_{k-1} + alpha s b_{k-1})/(k+1),
    b_k = (gamma s)^k/(k+1)! (and A_0 = s e^{-x} sum_k x^k/(k+1)! alongside).
    """
    cdef double x = c * s, ax = alpha * s, gx = gamma * s, a, b, e, t, sa, se, q, ea, em, eg, t2, xx, axg
    cdef long k
    if x > 2.0 or gx >= 0.7:
        em = one_minus_exp(ax, &ea)
        eg = one_minus_exp(gx, &t)
        # A_0 = (1 - e^{-x})/c, 1 - e^{-x} = (1 - e^{-alpha s}) + e^{-alpha s} (1 - e^{-gamma s})
        a = (em + ea * eg) / c
        a_out[0] = a
        # e^{-alpha s} (1 - e^{-gamma s})/gamma; for gamma s < 1e-8 as e^{-alpha s} s (1 - gamma s/2)
        # (relative error below 1e-16): the product ea eg would lose its digits below 2^-1022 when
        # gamma is tiny (subnormal recall and false rate gave V = R^0 instead of R^1)
        b = ea * eg / gamma if gx >= 1e-8 else ea * (s * (1.0 - 0.5 * gx))
        if b <= CANCEL_RATIO * a:
            return a - b
        a = gamma * em
        b = alpha * ea * eg
        if b <= CANCEL_RATIO * a:
            return (a - b) / (c * gamma)
        if x > 2.0:
            return NAN
    # two terms a pass: e_{k+2} = (x^2 e_k + alpha s (x + gamma s) b_k) / ((k+2)(k+3)), one chain step
    a = 1.0
    b = 1.0
    e = 0.0
    sa = 1.0
    se = 0.0
    xx = x * x
    axg = ax * (x + gx)
    k = 0
    while True:
        t = INV[k + 2]
        t2 = t * INV[k + 3]
        se += (x * e + ax * b) * t + (xx * e + axg * b) * t2
        sa += a * x * t + a * xx * t2
        e = (xx * e + axg * b) * t2
        b = b * (gx * gx) * t2
        a = a * xx * t2
        k += 2
        q = x * INV[k + 2]
        # every later e_j <= a_j = x^j/(j+1)!, whose sum is below a q/(1 - q) (q <= 2/3)
        if a * q <= SERIES_TOL * se * (1.0 - q) or a == 0.0:
            break
    t = s * exp(-x)
    a_out[0] = t * sa
    return t * se


cdef inline double _log_r(double alpha, double gamma, double c) noexcept nogil:
    """log(gamma/c) = log(1 - alpha/c), accurate on both ends."""
    return log1p(-alpha / c) if alpha < 0.5 * c else log(gamma / c)


cdef inline double _rho_power(long n, double rho_n, double rho, double delta, double nu, double c,
                              double* lrho) noexcept nogil:
    """rho^n (rho = nu/c, c = delta + nu) for the sums over n, given rho_n = rho^{n-1}: the product rho_n rho up to
    n = COMPENSATE_FROM - 1; from there exp(n log rho) at every multiple of RHO_ANCHOR and the product in between
    (log rho computed into lrho[0] at n = COMPENSATE_FROM, by ``_log_r``: log1p(-Delta/c) from rho = 1/2 up).

    The product's roundings and the rounding of rho itself (relative error up to 2^-53, n times in rho^n) add
    up: with rho near 1 (Delta << nu) w and V lost 1.2-3.3e-12 at n ~ 1e5 (Delta = 1e-6..1e-7).  exp(n log rho)
    is within |n log rho| 2^-52 + 1 ulp of the exact power of nu/(Delta + nu) (terms past rho^n < 1e-17 do not
    count: |n log rho| < 40), and the 15 products after it add at most 15 2^-52: ~1e-14 in all.  (An exp at every
    term cost long series of w 7-15%; one in 16, nothing measurable.)"""
    if n < COMPENSATE_FROM:
        return rho_n * rho
    if n == COMPENSATE_FROM:
        lrho[0] = _log_r(delta, nu, c)
    if n & (RHO_ANCHOR - 1) == 0:
        return exp(<double>n * lrho[0])
    return rho_n * rho


cdef inline double _term_series(long n, double s, double c, double gamma, double alpha,
                                double rho_n, double e_ai, double lr, double total, double qb,
                                double* a_out) noexcept nogil:
    """D_n(s) >= 0 by the series forms of the module notes; stores A_n in a_out[0]; ``total``: the sum of the
    terms before; ``qb``: Q^n(gamma s) where gamma s >= n + 1 if the caller has it, computed as here (NaN
    otherwise); ``lr``: log(gamma/c), or NaN (then computed here by the rarer forms that need it)."""
    cdef double a, b, e, qa, rb, y, x = c * s
    if x < <double>(n + 1):
        # both arguments below n + 1: one series gives A_n and D_n (no residual, no cancellation)
        if rho_n == 0.0:
            a_out[0] = 0.0
            return 0.0
        b = _series_pair(n, x, gamma / c, alpha / c, SERIES_TOL * total * c / rho_n, &a)
        a_out[0] = rho_n * a / c
        return rho_n * b / c
    qa = _lower_from_pmf(n, x, _pmf(n, x))
    a = rho_n * (1.0 - qa) / c
    a_out[0] = a
    if a == 0.0:
        return 0.0
    y = gamma * s
    if y < <double>(n + 1):
        rb = _series_tail(n, y, 0.0, &e)
    else:
        if isnan(qb):
            qb = _lower_from_pmf(n, y, _pmf(n, y))
        rb = 1.0 - qb
    b = e_ai * rb / gamma
    if b <= CANCEL_RATIO * a:
        return a - b
    return _term_cancel(n, s, x, y, c, gamma, alpha, rho_n, lr, qa, qb)


cdef double _term_cancel(long n, double s, double x, double y, double c, double gamma, double alpha, double rho_n,
                         double lr, double qa, double qb) noexcept nogil:
    """The end of ``_term_series`` for x = c s >= n + 1 where A_n - B_n would lose more than two bits: the
    complement form or the difference series (qa = Q^n(x), qb = Q^n(y) where y = gamma s >= n + 1)."""
    cdef double e, t1, q
    if y > <double>(n + 1):
        # both residuals near 1: A - B = rho^n/c [-expm1(E) - Q^n(cs) + e^E Q^n(gamma s)],
        # E = -alpha s - (n+1) log r <= 0; used when the Q terms are small beside -expm1(E)
        if isnan(lr):
            lr = _log_r(alpha, gamma, c)
        e = -alpha * s - <double>(n + 1) * lr
        if e < 0.0:
            t1 = -expm1(e)
            q = exp(e) * qb
            if q <= 0.25 * t1:
                return rho_n / c * (t1 + (q - qa))
    if isnan(lr):
        lr = _log_r(alpha, gamma, c)
    return rho_n / c * _difference_series(n, x, lr, alpha / c)


cdef inline double _term(long n, double s, double c, double gamma, double alpha,
                         double rho_n, double e_ai, double lr, double total, double qb,
                         double* a_out) noexcept nogil:
    """D_n(s) >= 0: term 0 in closed form where ``_term0`` has one, else ``_term_series`` (same arguments)."""
    cdef double b
    if n == 0:
        b = _term0(s, c, gamma, alpha, a_out)
        if not isnan(b):
            return b
    return _term_series(n, s, c, gamma, alpha, rho_n, e_ai, lr, total, qb, a_out)


cdef double signal_beta(double delta, double recall, double nu) noexcept nogil:
    """beta = log(1 + lambda Delta / nu) / alpha, the time-equivalent of one signal (001 Lemma 4, SPEC section 3).

    0 when ``lambda Delta = 0`` (signals carry no information), inf when
    ``nu = 0`` or ``alpha = (1 - lambda) Delta = 0`` (a signal proves a
    change).  ``PageModel.beta`` and the scheduler (which recomputes it to
    save memory) both call this function, so they agree bit for bit.
    """
    cdef double lam_dl = recall * delta
    cdef double alpha = (1.0 - recall) * delta
    if lam_dl == 0.0:
        return 0.0
    if nu == 0.0 or alpha == 0.0:
        return INFINITY
    return log1p(lam_dl / nu) / alpha


def beta_kernel(const double[::1] delta, const double[::1] recall, const double[::1] nu, double[::1] out):
    """out[i] = signal_beta(delta[i], recall[i], nu[i])."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(delta.shape[0]):
            out[i] = signal_beta(delta[i], recall[i], nu[i])


# Rates beyond 2**+-200 are brought to about 1 by a change of the unit of time (see _unit_shift).
cdef double UNIT_SHIFT_HI = 1.6069380442589903e+60  # 2**200
cdef double UNIT_SHIFT_LO = 6.223015277861142e-61  # 2**-200


cdef inline bint _rates_near_one(double delta, double nu) noexcept nogil:
    """Whether max(delta, nu) lies in [2**-200, 2**200] or is 0 (no change of unit needed)."""
    cdef double m = delta if delta > nu else nu
    return m < UNIT_SHIFT_HI and (m >= UNIT_SHIFT_LO or m == 0.0)


cdef inline int _clamp_shift(int k, double t) noexcept nogil:
    """The k' between 0 and k nearest k with the time t (>= 0) times 2**k' exact.

    t = f 2**e with f in [1/2, 1): f 2**(e + k) is finite for e + k <= 1024 (scaling up is exact, subnormals
    included) and normal, so exact, for e + k >= -1021.  Both bounds admit k = 0.
    """
    cdef int e = 0
    if t == 0.0 or t == INFINITY:
        return k
    frexp(t, &e)
    if k > 1024 - e:
        return 1024 - e
    if k < 0 and k < -1021 - e:
        return -1021 - e if -1021 - e < 0 else 0
    return k


cdef inline int _unit_shift(double delta, double alpha, double gamma, double nu, double iota, double beta,
                            bint* past=NULL) noexcept nogil:
    """The k with max(delta, nu) 2**-k in [1/2, 1) when that rate lies outside [2**-200, 2**200], moved towards
    0 as little as keeps every time (iota, beta) times 2**k and every rate times 2**-k exact; else 0.

    V/mu, psi and w are times: a unit of time 2**k times longer multiplies every rate by 2**-k and every
    time by 2**k, exactly (powers of two), and products of a rate and a time are unchanged to the bit.  Only
    products of two rates depend on the unit (the closed forms divide by Delta alpha (1 + gamma beta)), and
    they leave the double range past 2**+-511: evaluated in the unit where the rates are about 1 (or as near
    it as the other parameters allow), a page gets the same bits as in any unit where nothing overflows, and a
    correct answer where it would.  ``past`` (if given) is set where beta is finite and iota itself lies past
    2**1023 in the unit where the largest rate is about 1: there V and w are their limits at iota = inf to
    double precision (tested; K = iota/beta > 1e290 terms), while psi, which grows with iota, takes the shift
    nearest that unit.
    """
    cdef double m = delta if delta > nu else nu
    cdef int e = 0, k
    if past != NULL:
        past[0] = False
    if m > 0.0 and m < INFINITY and (m >= UNIT_SHIFT_HI or m < UNIT_SHIFT_LO):
        frexp(m, &e)
        k = _clamp_shift(e, iota)
        if past != NULL and k != e and 0.0 < beta < INFINITY:
            past[0] = True
        # (each clamp moves k towards 0 and so keeps the bounds before it)
        k = _clamp_shift(k, beta)
        k = -_clamp_shift(-k, delta)  # (a rate r times 2**-k: the time clamp applied to -k)
        k = -_clamp_shift(-k, alpha)
        k = -_clamp_shift(-k, gamma)
        e = -_clamp_shift(-k, nu)
    return e


cdef double greedy_value(double iota, double delta, double mu) noexcept nogil:
    """Signal-blind value mu R^1(delta iota) / delta (0 when delta = 0)."""
    cdef double ex
    return greedy_value_ex(iota, delta, mu, &ex)


cdef double greedy_value_ex(double iota, double delta, double mu, double* ex) noexcept nogil:
    """``greedy_value``, with ``ex[0] = e^{-x}`` (x = delta iota) where it was computed, else -1.

    (The scheduler's slope bounds reuse it: the same bits as ``exp(-delta * iota)``.)
    """
    cdef double x
    ex[0] = -1.0
    if isnan(iota):
        return NAN
    if delta == 0.0 or mu == 0.0:
        return 0.0
    if iota == INFINITY:
        return mu / delta
    x = delta * iota
    if not (x > 0.0):
        return 0.0
    if x == INFINITY:
        return mu / delta
    ex[0] = exp(-x)
    if x < 1e-150:
        return mu * (iota * (0.5 * x))  # R^1(x)/delta = iota x/2 (1 - 2x/3 + ...): x^2 would underflow
    return mu * residual1_e(x, ex[0]) / delta


cdef double page_value(double iota, double delta, double alpha, double gamma, double nu,
                       double beta, double mu, long terms) noexcept nogil:
    """Crawl value V(iota) of one page; terms < 0: exact, else the approx-terms truncation."""
    cdef int k
    cdef bint past
    if _rates_near_one(delta, nu) or isnan(iota) or beta == 0.0 or delta == 0.0 or mu == 0.0 or terms == 0:
        return _page_value(iota, delta, alpha, gamma, nu, beta, mu, terms)
    k = _unit_shift(delta, alpha, gamma, nu, iota, beta, &past)
    if past:
        return _page_value(INFINITY, delta, alpha, gamma, nu, beta, mu, terms)
    return ldexp(_page_value(ldexp(iota, k), ldexp(delta, -k), ldexp(alpha, -k), ldexp(gamma, -k), ldexp(nu, -k),
                             ldexp(beta, k), mu, terms), -k)


cdef double _page_value(double iota, double delta, double alpha, double gamma, double nu,
                        double beta, double mu, long terms) noexcept nogil:
    """``page_value`` in the unit of time given."""
    cdef double c, rho, rho_n, e_ai, lr, s, a, d, total, q, d0, a0, err = 0.0, lrho = NAN
    cdef long n
    if isnan(iota):
        return NAN
    if delta == 0.0 or mu == 0.0 or terms == 0:
        return 0.0
    c = delta + nu
    rho = nu / c
    if iota == INFINITY:
        if terms < 0 or rho == 0.0 or beta == 0.0:
            return mu / delta
        return mu * -expm1(<double>terms * log1p(-delta / c)) / delta
    if beta == 0.0:
        return greedy_value(iota, delta, mu)
    if alpha == 0.0:
        return 0.0
    if terms < 0 and beta < INFINITY and residue_value(iota, delta, alpha, gamma, nu, beta, &total, True):
        return mu * total
    # term 0 first: it is the whole sum when beta > iota (the same bits as the loop below gives)
    d0 = _term0(iota, c, gamma, alpha, &a0)
    if not isnan(d0) and (terms == 1 or beta > iota or a0 == 0.0):
        return mu * d0
    e_ai = exp(-alpha * iota)
    lr = NAN  # log(gamma/c), computed by _term where it needs it (the rarer forms of a term)
    total = 0.0
    rho_n = 1.0
    n = 0
    while True:
        if n > MAX_TERMS:
            return NAN
        s = iota - <double>n * beta if n > 0 else iota
        if n == 0 and not isnan(d0):
            d = d0
            a = a0
        else:  # (term 0 here only where _term0 had no closed form: not tried twice)
            d = _term_series(n, s, c, gamma, alpha, rho_n, e_ai, lr, total, NAN, &a)
        total = _add(n, total, d, &err)
        if terms >= 0 and n + 1 >= terms:
            break
        if beta == INFINITY or <double>(n + 1) * beta > iota or a == 0.0:
            break
        q = c * s / <double>(n + 2)
        q = rho * (q if q < 1.0 else 1.0)
        if q < 1.0 and a * q <= SUM_TOL * total * (1.0 - q):
            break
        rho_n = _rho_power(n + 1, rho_n, rho, delta, nu, c, &lrho)
        n += 1
    return mu * (total + err)


cdef double cis_value(double iota, double delta, double recall, double alpha, double mu) noexcept nogil:
    """Greedy-CIS value: V of the same page with nu = 0 (beta = inf, one term)."""
    if recall == 0.0:
        return greedy_value(iota, delta, mu)
    return page_value(iota, delta, alpha, recall * delta, 0.0, INFINITY, mu, -1)


cdef inline double _pmf_below(long n, double x, double p_next) noexcept nogil:
    """p_n(x) from p_{n+1}(x) = ``p_next`` (p_n = p_{n+1} (n+1)/x), or directly where that is 0 or x = 0."""
    if p_next > 0.0 and x > 0.0:
        return p_next * <double>(n + 1) / x
    if x == 0.0:
        return 1.0 if n == 0 else 0.0
    return _pmf(n, x)


cdef inline double _pmf_step(long n, double x, double pn) noexcept nogil:
    """p_{n-1}(x) - p_n(x) (d p_n/dx; p_{-1} = 0) from p_n(x) = ``pn``."""
    if n == 0:
        return -pn
    if x > 0.0:
        return pn * (<double>n / x - 1.0)
    return 1.0 if n == 1 else 0.0


cdef double interval_and_slope(double iota, double delta, double gamma, double nu, double beta,
                               double* dpsi_out) noexcept nogil:
    """psi(iota) and its slopes (``_interval_and_slope``) in the unit of time nearest the page's rates."""
    cdef int k
    cdef double total
    if _rates_near_one(delta, nu) or isnan(iota) or iota == INFINITY or beta == 0.0 or gamma == 0.0:
        return _interval_and_slope(iota, delta, gamma, nu, beta, dpsi_out)
    k = _unit_shift(delta, 0.0, gamma, nu, iota, beta)  # (psi is a time, psi' a ratio, psi'' an inverse time)
    total = ldexp(_interval_and_slope(ldexp(iota, k), ldexp(delta, -k), ldexp(gamma, -k), ldexp(nu, -k),
                                      ldexp(beta, k), dpsi_out), -k)
    if dpsi_out != NULL:
        dpsi_out[1] = ldexp(dpsi_out[1], k)
    return total


cdef double _interval_and_slope(double iota, double delta, double gamma, double nu, double beta,
                                double* dpsi_out) noexcept nogil:
    """psi(iota), and when ``dpsi_out`` is not NULL psi'(iota) = sum_n p_n(gamma s_n) in ``dpsi_out[0]`` and
    psi''(iota) = gamma sum_n (p_{n-1} - p_n)(gamma s_n) in ``dpsi_out[1]`` (psi is the same either way).

    d R^n(gamma s)/d iota = gamma p_n(gamma s), so psi' is the sum of the pmfs at the arguments of
    psi's terms, over the same terms (psi's stopping rule; the pmfs' remainder is of the order of
    psi's times (n+2)/(gamma s_n), far below the ~1e-6 that the Halley step and the outer slope
    need); the series' p_{n+1} gives p_n where it is at hand.
    """
    cdef double s, t, total = 0.0, dtotal = 0.0, d2total = 0.0, q, x, p, pn, err = 0.0
    cdef long n = 0
    cdef bint slopes = dpsi_out != NULL
    if slopes:
        dpsi_out[0] = 0.0
        dpsi_out[1] = 0.0
    if isnan(iota):
        if slopes:
            dpsi_out[0] = NAN
            dpsi_out[1] = NAN
        return NAN
    if iota == INFINITY:
        return INFINITY
    if beta == 0.0 or gamma == 0.0:
        if slopes:
            dpsi_out[0] = 1.0
        return iota
    if residue_interval(iota, gamma, beta, &total, dpsi_out):
        return total
    while True:
        if n > MAX_TERMS:
            if slopes:
                dpsi_out[0] = NAN
                dpsi_out[1] = NAN
            return NAN
        s = iota - <double>n * beta if n > 0 else iota
        x = gamma * s
        if x < 1e-100:
            # R^n(x)/gamma = s R^n(x)/x = s (1 - x/2 + ...) for n = 0 and below s x^n for n >= 1, exact in
            # double precision: the literal quotient loses every digit when x (or gamma) is subnormal
            t = s if n == 0 else 0.0
            if slopes:
                pn = _pmf(n, x)
        elif x < <double>(n + 1):
            t = _series_tail(n, x, SERIES_TOL * total * gamma, &p) / gamma
            if slopes:
                pn = _pmf_below(n, x, p)
        else:
            pn = _pmf(n, x)
            t = (1.0 - _lower_from_pmf(n, x, pn)) / gamma
        if slopes:
            dtotal += pn
            d2total += _pmf_step(n, x, pn)
        total = _add(n, total, t, &err)
        if beta == INFINITY or <double>(n + 1) * beta > iota or t == 0.0:
            break
        q = gamma * s / <double>(n + 2)
        if q < 1.0 and t * q <= SUM_TOL * total * (1.0 - q):
            break
        n += 1
    if slopes:
        dpsi_out[0] = dtotal
        dpsi_out[1] = gamma * d2total
    return total + err


cdef double crawl_interval(double iota, double delta, double gamma, double nu, double beta) noexcept nogil:
    """psi(iota): expected time between crawls of the threshold policy."""
    return interval_and_slope(iota, delta, gamma, nu, beta, NULL)


cdef double fresh_time(double iota, double delta, double alpha, double gamma, double nu,
                       double beta) noexcept nogil:
    """w(iota): expected time the copy stays fresh per crawl interval (NaN past MAX_TERMS terms)."""
    cdef int k
    cdef bint past
    if _rates_near_one(delta, nu) or isnan(iota) or iota == INFINITY:
        return _fresh_time(iota, delta, alpha, gamma, nu, beta)
    k = _unit_shift(delta, alpha, gamma, nu, iota, beta, &past)
    if past:
        return _fresh_time(INFINITY, delta, alpha, gamma, nu, beta)
    return ldexp(_fresh_time(ldexp(iota, k), ldexp(delta, -k), ldexp(alpha, -k), ldexp(gamma, -k), ldexp(nu, -k),
                             ldexp(beta, k)), -k)


cdef double _fresh_time(double iota, double delta, double alpha, double gamma, double nu,
                        double beta) noexcept nogil:
    """``fresh_time`` in the unit of time given."""
    cdef double c, rho, rho_n = 1.0, s, t, total = 0.0, q, err = 0.0, lrho = NAN
    cdef long n = 0
    if isnan(iota):
        return NAN
    c = delta + nu
    if iota == INFINITY:
        return 1.0 / delta if delta > 0.0 else INFINITY
    if beta == 0.0:
        if delta == 0.0:
            return iota
        return residual_exp(0, delta * iota) / delta
    if residue_fresh(iota, delta, alpha, gamma, nu, beta, &total):
        return total
    rho = nu / c
    while True:
        if n > MAX_TERMS:
            return NAN
        s = iota - <double>n * beta if n > 0 else iota
        t = rho_n * residual_exp(n, c * s) / c
        total = _add(n, total, t, &err)
        if beta == INFINITY or <double>(n + 1) * beta > iota or t == 0.0:
            break
        q = c * s / <double>(n + 2)
        q = rho * (q if q < 1.0 else 1.0)
        if q < 1.0 and t * q <= SUM_TOL * total * (1.0 - q):
            break
        rho_n = _rho_power(n + 1, rho_n, rho, delta, nu, c, &lrho)
        n += 1
    return total + err


cdef double value_and_interval(double iota, double delta, double alpha, double gamma, double nu,
                               double beta, double mu, double* psi_out, double* dpsi_out) noexcept nogil:
    """V and psi (``_value_and_interval``) in the unit of time nearest the page's rates."""
    cdef int k
    cdef bint past
    cdef double v
    if _rates_near_one(delta, nu) or isnan(iota) or iota == INFINITY:
        return _value_and_interval(iota, delta, alpha, gamma, nu, beta, mu, psi_out, dpsi_out)
    k = _unit_shift(delta, alpha, gamma, nu, iota, beta, &past)
    if past:  # (V at its limit, psi in the unit nearest the rates')
        psi_out[0] = interval_and_slope(iota, delta, gamma, nu, beta, dpsi_out)
        return page_value(INFINITY, delta, alpha, gamma, nu, beta, mu, -1)
    # (V/mu and psi are times, psi' a ratio, psi'' an inverse time)
    v = ldexp(_value_and_interval(ldexp(iota, k), ldexp(delta, -k), ldexp(alpha, -k), ldexp(gamma, -k),
                                  ldexp(nu, -k), ldexp(beta, k), mu, psi_out, dpsi_out), -k)
    psi_out[0] = ldexp(psi_out[0], -k)
    dpsi_out[1] = ldexp(dpsi_out[1], k)
    return v


cdef double _value_and_interval(double iota, double delta, double alpha, double gamma, double nu,
                                double beta, double mu, double* psi_out, double* dpsi_out) noexcept nogil:
    """Exact V(iota) (as ``page_value(..., -1)``) and psi(iota) (as ``crawl_interval``) in one pass.

    Both series run over the same s_n; a term whose Q^n(gamma s_n) psi takes
    from its lower sum hands it to V's D_n instead of recomputing it.  Every
    operation of either sum is the one of its own function, so both results
    are bit-identical to those (tested); each sum stops by its own rule.  psi'(iota) comes with psi, as
    in ``interval_and_slope``, in ``dpsi_out``.
    """
    cdef double c, rho, rho_n = 1.0, e_ai = NAN, lr, s, y, qb, t, d, a, q, p, pn, lrho = NAN
    cdef double v_total = 0.0, p_total = 0.0, dp_total = 0.0, d2p_total = 0.0, v_err = 0.0, p_err = 0.0
    cdef bint v_on = True, p_on = True
    cdef long n = 0
    if isnan(iota) or iota == INFINITY or delta == 0.0 or mu == 0.0 or beta == 0.0 or alpha == 0.0 \
            or beta == INFINITY or gamma == 0.0:
        psi_out[0] = interval_and_slope(iota, delta, gamma, nu, beta, dpsi_out)
        return page_value(iota, delta, alpha, gamma, nu, beta, mu, -1)
    c = delta + nu
    rho = nu / c
    lr = NAN
    if residue_value(iota, delta, alpha, gamma, nu, beta, &v_total, True):
        # V in closed form (as page_value does); only psi's series runs
        v_on = False
    else:
        e_ai = exp(-alpha * iota)
    if residue_interval(iota, gamma, beta, &p_total, dpsi_out):
        # psi in closed form (as interval_and_slope does)
        p_on = False
        dp_total = dpsi_out[0]
        d2p_total = dpsi_out[1] / gamma
    while v_on or p_on:
        if n > MAX_TERMS:
            psi_out[0] = NAN
            dpsi_out[0] = NAN
            dpsi_out[1] = NAN
            return NAN
        s = iota - <double>n * beta if n > 0 else iota
        qb = NAN
        if p_on:
            y = gamma * s
            if y < <double>(n + 1):
                t = _series_tail(n, y, SERIES_TOL * p_total * gamma, &p) / gamma
                pn = _pmf_below(n, y, p)
            else:
                pn = _pmf(n, y)
                qb = _lower_from_pmf(n, y, pn)
                t = (1.0 - qb) / gamma
            dp_total += pn
            d2p_total += _pmf_step(n, y, pn)
            p_total = _add(n, p_total, t, &p_err)
            if <double>(n + 1) * beta > iota or t == 0.0:
                p_on = False
            else:
                q = gamma * s / <double>(n + 2)
                if q < 1.0 and t * q <= SUM_TOL * p_total * (1.0 - q):
                    p_on = False
        if v_on:
            d = _term(n, s, c, gamma, alpha, rho_n, e_ai, lr, v_total, qb, &a)
            v_total = _add(n, v_total, d, &v_err)
            if <double>(n + 1) * beta > iota or a == 0.0:
                v_on = False
            else:
                q = c * s / <double>(n + 2)
                q = rho * (q if q < 1.0 else 1.0)
                if q < 1.0 and a * q <= SUM_TOL * v_total * (1.0 - q):
                    v_on = False
            rho_n = _rho_power(n + 1, rho_n, rho, delta, nu, c, &lrho)
        n += 1
    psi_out[0] = p_total + p_err
    dpsi_out[0] = dp_total
    dpsi_out[1] = gamma * d2p_total
    return mu * (v_total + v_err)


def value_interval_kernel(const double[::1] tau, const double[::1] delta, const double[::1] alpha,
                          const double[::1] gamma, const double[::1] nu, const double[::1] beta,
                          const double[::1] mu, double[::1] value, double[::1] interval):
    """value[k], interval[k] = exact V and psi at tau[k] from ``value_and_interval`` (for tests)."""
    cdef Py_ssize_t k, n = value.shape[0]
    cdef double psi
    cdef double dpsi[2]
    with nogil:
        for k in range(n):
            value[k] = value_and_interval(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k], mu[k], &psi, dpsi)
            interval[k] = psi


def page_value_kernel(const double[::1] tau, const double[::1] delta, const double[::1] alpha,
                      const double[::1] gamma, const double[::1] nu, const double[::1] beta, const double[::1] mu,
                      long terms, double[::1] out):
    """out[k] = page_value(tau[k], ..., terms), one page at a time: the scalar path the scheduler takes, which the
    batch kernels must match bit for bit (for tests)."""
    cdef Py_ssize_t k
    with nogil:
        for k in range(out.shape[0]):
            out[k] = page_value(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k], mu[k], terms)


def series_simd(int level=-1):
    """Choose the kernels of the batch series (``_value_series.h``) and return the level used: -1 the best the
    processor has (the default), 0 the scalar loops, 1 SSE2, 2 AVX2, 3 AVX-512 for the pair series (AVX2 for term
    0's).  For tests: every level gives the same bits."""
    return freshcore_set_series_simd(level)


def residue_kernel(const double[::1] tau, const double[::1] delta, const double[::1] alpha,
                   const double[::1] gamma, const double[::1] nu, const double[::1] beta,
                   double[::1] value, unsigned char[::1] used, bint no_subnormal=True):
    """used[k] = whether ``residue_value`` applies at tau[k] (then value[k] = V/mu), for tests; no_subnormal=False:
    with the bound's subnormal arithmetic (the form before the shortcut around it, to compare with)."""
    cdef Py_ssize_t k, n = value.shape[0]
    cdef double v
    with nogil:
        for k in range(n):
            v = NAN
            used[k] = residue_value(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k], &v, no_subnormal)
            value[k] = v


# ---------------------------------------------------------------------------
# Exact V of many pages (``value_kernel``'s kind 0): page_value(..., -1) of each, bit for bit

cdef enum:
    BLOCK = 256  # series pages summed together


cdef inline bint _plain(double iota, double delta, double alpha, double nu, double beta, double mu) noexcept nogil:
    """Whether ``page_value(iota, ..., -1)`` goes straight to the residue form, term 0 and the series of
    ``_page_value`` (no change of unit and none of its special cases)."""
    return (_rates_near_one(delta, nu) and iota < INFINITY and delta > 0.0 and mu != 0.0 and alpha > 0.0
            and beta > 0.0 and beta < INFINITY)


cdef struct SeriesBlock:
    # per series page (slot): its index, derived parameters and the state of _page_value's loop over n
    Py_ssize_t k[BLOCK]
    double c[BLOCK]
    double rho[BLOCK]
    double r[BLOCK]
    double omr[BLOCK]
    double e_ai[BLOCK]
    double total[BLOCK]
    double err[BLOCK]
    double rho_n[BLOCK]
    double lrho[BLOCK]
    double d[BLOCK]
    double a[BLOCK]
    Py_ssize_t live[BLOCK]
    # one pass: the terms of the pair series (slot, x, pmf, j = n + 2, tolerance / pmf, sums), the others
    Py_ssize_t p_slot[BLOCK]
    double p_x[BLOCK]
    double p_p[BLOCK]
    double p_r[BLOCK]
    double p_omr[BLOCK]
    double p_tol[BLOCK]
    double p_sa[BLOCK]
    double p_sd[BLOCK]
    Py_ssize_t l_slot[BLOCK]
    double l_s[BLOCK]
    # the other terms (x >= n + 1): x, y = gamma s, p_n(x), Q^n(x), the pmf and Q^n or R^n of y
    double l_x[BLOCK]
    double l_y[BLOCK]
    double l_pn[BLOCK]
    double l_qa[BLOCK]
    double l_p[BLOCK]
    double l_qb[BLOCK]
    double l_rb[BLOCK]
    Py_ssize_t g_h[BLOCK]
    double g_x[BLOCK]
    double g_s[BLOCK]


cdef void _other_terms(SeriesBlock* b, Py_ssize_t nq, long n, const double* alpha,
                       const double* gamma) noexcept nogil:
    """The pass's terms with x = c s >= n + 1 (b.l_slot, b.l_s): ``_term_series``'s steps for them, its loops run
    over the terms together (``_value_series.h``): Q^n(x) from the lower sum of x, A_n, then R^n(y), y = gamma s,
    from the tail series (y < n + 1) or the lower sum of y, B_n, and D_n = A_n - B_n where that loses at most two
    bits (``_term_cancel`` otherwise)."""
    cdef Py_ssize_t h, g, i, k, ny = 0, nt = 0
    cdef double x, y, a, p, bb
    cdef int nz, tail
    for h in range(nq):
        x = b.c[b.l_slot[h]] * b.l_s[h]
        b.l_x[h] = x
        b.l_pn[h] = _pmf(n, x)
    freshcore_lower_sums(nq, n, b.l_x, SERIES_TOL, b.g_s)
    for h in range(nq):
        i = b.l_slot[h]
        # (``_lower_from_pmf``: 0 where the pmf is)
        b.l_qa[h] = b.l_pn[h] * b.g_s[h] if b.l_pn[h] != 0.0 else 0.0
        a = b.rho_n[i] * (1.0 - b.l_qa[h]) / b.c[i]
        b.a[i] = a
        b.d[i] = 0.0  # (the term where A_n = 0)
        y = gamma[b.k[i]] * b.l_s[h]
        b.l_y[h] = y
        nz = a != 0.0
        tail = y < <double>(n + 1)
        # the terms needing y's tail series at the front of g_h, those needing its lower sum at the back
        b.g_h[nt] = h
        nt += nz & tail
        b.g_h[nq - 1 - ny] = h
        ny += nz & (1 - tail)
    # R^n(y) = p_{n+1}(y) times the tail sum, where y < n + 1 (``_series_tail`` with no absolute tolerance)
    for g in range(nt):
        h = b.g_h[g]
        b.l_p[h] = _pmf(n + 1, b.l_y[h])
        b.g_x[g] = b.l_y[h]
    freshcore_tail_sums(nt, n + 2, b.g_x, INV, INV_SIZE, SERIES_TOL, b.g_s)
    for g in range(nt):
        h = b.g_h[g]
        p = b.l_p[h]
        b.l_rb[h] = p * b.g_s[g] if p != 0.0 else 0.0
        b.l_qb[h] = NAN
    # Q^n(y) from the lower sum, where y >= n + 1
    for g in range(ny):
        h = b.g_h[nq - 1 - g]
        b.l_p[h] = _pmf(n, b.l_y[h])
        b.g_x[g] = b.l_y[h]
    freshcore_lower_sums(ny, n, b.g_x, SERIES_TOL, b.g_s)
    for g in range(ny):
        h = b.g_h[nq - 1 - g]
        p = b.l_p[h]
        b.l_qb[h] = p * b.g_s[g] if p != 0.0 else 0.0
        b.l_rb[h] = 1.0 - b.l_qb[h]
    # B_n and D_n
    for g in range(nt + ny):
        h = b.g_h[g] if g < nt else b.g_h[nq - 1 - (g - nt)]
        i = b.l_slot[h]
        k = b.k[i]
        a = b.a[i]
        bb = b.e_ai[i] * b.l_rb[h] / gamma[k]
        if bb <= CANCEL_RATIO * a:
            b.d[i] = a - bb
        else:
            b.d[i] = _term_cancel(n, b.l_s[h], b.l_x[h], b.l_y[h], b.c[i], gamma[k], alpha[k], b.rho_n[i], NAN,
                                  b.l_qa[h], b.l_qb[h])


cdef void _series_block(SeriesBlock* b, Py_ssize_t m, const double* tau, const double* delta, const double* alpha,
                        const double* gamma, const double* nu, const double* beta, const double* mu,
                        double* out) noexcept nogil:
    """Finish the m series pages of ``b``: ``_page_value``'s loop over n, one pass per n over the pages still
    summing (term 0's closed form d0, a0 in b.d, b.a, NaN where it has none), each term by the function
    ``_page_value`` would use on the same arguments.  The pair series of a pass run four at a time
    (``_value_series.h``); the terms of different pages are independent, and nothing in a pass waits on a
    branch that depends on a term's value."""
    cdef Py_ssize_t i, h, nl, np_, nq, k
    cdef long n = 0
    cdef int isp, done
    cdef double iota, s, x, c, p, q, a
    for i in range(m):
        k = b.k[i]
        c = b.c[i]
        b.rho[i] = nu[k] / c
        b.r[i] = gamma[k] / c
        b.omr[i] = alpha[k] / c
        b.e_ai[i] = exp(-alpha[k] * tau[k])
        b.total[i] = 0.0
        b.err[i] = 0.0
        b.rho_n[i] = 1.0
        b.live[i] = i
    nl = m
    while nl > 0:
        if n > MAX_TERMS:
            for h in range(nl):
                out[b.k[b.live[h]]] = NAN
            return
        np_ = 0
        nq = 0
        if n == 0:
            # term 0: its closed form, or (none: NaN) the series forms as _page_value takes them
            for h in range(nl):
                i = b.live[h]
                if isnan(b.d[i]):
                    k = b.k[i]
                    b.d[i] = _term_series(0, tau[k], b.c[i], gamma[k], alpha[k], 1.0, b.e_ai[i], NAN, 0.0, NAN,
                                          &b.a[i])
        else:
            # the pass's terms: x < n + 1 to the pair series (gathered), the others to _term_series
            for h in range(nl):
                i = b.live[h]
                k = b.k[i]
                s = tau[k] - <double>n * beta[k]
                x = b.c[i] * s
                isp = x < <double>(n + 1)
                b.p_slot[np_] = i
                b.p_x[np_] = x
                np_ += isp
                b.l_slot[nq] = i
                b.l_s[nq] = s
                nq += 1 - isp
            # the pair terms: the pmf, then the sums four at a time (rho^n = 0 or pmf = 0: the term is 0)
            h = 0
            for i in range(np_):
                k = b.p_slot[i]
                p = _pmf(n + 1, b.p_x[i]) if b.rho_n[k] != 0.0 else 0.0
                if p == 0.0:
                    b.a[k] = 0.0
                    b.d[k] = 0.0
                    continue
                b.p_slot[h] = k
                b.p_x[h] = b.p_x[i]
                b.p_p[h] = p
                b.p_r[h] = b.r[k]
                b.p_omr[h] = b.omr[k]
                b.p_tol[h] = SERIES_TOL * b.total[k] * b.c[k] / b.rho_n[k] / p
                h += 1
            freshcore_series_pairs(h, n + 2, b.p_x, b.p_r, b.p_omr, b.p_tol, INV, INV_SIZE, SERIES_TOL, b.p_sa,
                                   b.p_sd)
            for i in range(h):
                k = b.p_slot[i]
                p = b.p_p[i]
                b.a[k] = b.rho_n[k] * (p * b.p_sa[i]) / b.c[k]
                b.d[k] = b.rho_n[k] * (p * b.p_sd[i]) / b.c[k]
            if nq > 0:
                _other_terms(b, nq, n, alpha, gamma)
        # _page_value's stopping rule; the pages that go on stay in b.live, in order
        np_ = 0
        for h in range(nl):
            i = b.live[h]
            k = b.k[i]
            iota = tau[k]
            c = b.c[i]
            a = b.a[i]
            b.total[i] = _add(n, b.total[i], b.d[i], &b.err[i])
            s = iota - <double>n * beta[k] if n > 0 else iota
            q = c * s / <double>(n + 2)
            q = b.rho[i] * (q if q < 1.0 else 1.0)
            done = ((<double>(n + 1) * beta[k] > iota) | (a == 0.0)
                    | ((q < 1.0) & (a * q <= SUM_TOL * b.total[i] * (1.0 - q))))
            out[k] = mu[k] * (b.total[i] + b.err[i])  # (the last pass's value stays)
            b.rho_n[i] = _rho_power(n + 1, b.rho_n[i], b.rho[i], delta[k], nu[k], c, &b.lrho[i])
            b.live[np_] = i
            np_ += 1 - done
        nl = np_
        n += 1


cdef enum:
    CHUNK = 2048  # pages a time through each step
    KINDS = 8  # the pages of a step are taken kind by kind (``_residue_kind``, ``_term0_kind``)


cdef struct ChunkWork:
    # a chunk's pages for the residue form, and for term 0 (those below iota = 4 beta, then the residue form's
    # refusals), each by kind: r_k[g][0 .. nr[g] - 1] the pages of kind g
    Py_ssize_t r_k[KINDS][CHUNK]
    Py_ssize_t t_k[KINDS][CHUNK]
    Py_ssize_t nr[KINDS]
    Py_ssize_t nt[KINDS]
    # term 0 for the pages of one kind: its arguments, and the sums of its series (kinds 0-3: c iota <= 2 and
    # gamma iota < 0.7) or its closed forms' D_0, A_0 and where none applies (kinds 4-7)
    double s[CHUNK]
    double c[CHUNK]
    double g[CHUNK]
    double al[CHUNK]
    double x[CHUNK]
    double ax[CHUNK]
    double gx[CHUNK]
    double sa[CHUNK]
    double se[CHUNK]
    unsigned char need[CHUNK]


cdef inline int _residue_kind(double iota, double kk, double alpha, double beta, double nu) noexcept nogil:
    """A guess at the branches ``residue_value`` takes on this page (only the order of the pages depends on it):
    whether its power-of-two bound goes below 2^-1022, and alpha beta below 0.01, 0.25, 2 or above (T3, Bq)."""
    cdef double r = nu * beta * (1.0 / PI), y = alpha * beta
    cdef int e = freshcore_exponent(r) if r > 0.0 else 0
    return (e * (kk if kk < 2000.0 else 2000.0) <= -1022.0) * 4 + (y < 2.0) + (y < 0.25) + (y < 0.01)


cdef inline int _term0_kind(double iota, double c, double gamma, double alpha) noexcept nogil:
    """The branches ``_term0`` takes on this page: its closed forms or its series (c iota > 2 or gamma iota >=
    0.7), and 1 - e^{-x} below or above x = 0.7 for x = alpha iota and gamma iota."""
    cdef double x = c * iota, ax = alpha * iota, gx = gamma * iota
    return ((x > 2.0) | (gx >= 0.7)) * 4 + (ax < 0.7) * 2 + (gx < 0.7)


cdef int _exact_values(const double* tau, const double* delta, const double* alpha, const double* gamma,
                       const double* nu, const double* beta, const double* mu, double* out,
                       Py_ssize_t n) noexcept nogil:
    """out[k] = page_value(tau[k], ..., -1) for k < n, bit for bit; -1 if out of memory (nothing written).

    Each page takes _page_value's steps -- the residue form where iota >= 4 beta, term 0 where that is not
    used, the series where term 0 is not all of V -- but a chunk of pages takes each step in turn, in a loop of
    its own, and the pages are handed from one step to the next without a branch (each list takes every page's
    index, and its length grows by 0 or 1).  In page order the step a page ends at was a branch mispredicted
    about once or twice a page.  Within a step the pages go kind by kind, the kind a guess at the branches the
    step will take on them (``_residue_kind``, ``_term0_kind``), so that a branch that goes one way for a run of
    pages is predicted.  A page's value is written by the step it ends at (earlier steps may write a placeholder
    there first); the order changes no value.  The series pages go on to ``_series_block``.
    """
    cdef SeriesBlock* b = <SeriesBlock*>malloc(sizeof(SeriesBlock))
    cdef ChunkWork* w = <ChunkWork*>malloc(sizeof(ChunkWork))
    cdef Py_ssize_t k, k0, k1, i, m = 0
    cdef double iota, c, v, d0, a0, kk
    cdef int yes, g, h
    if b == NULL or w == NULL:
        free(b)
        free(w)
        return -1
    k0 = 0
    while k0 < n:
        k1 = k0 + CHUNK if k0 + CHUNK < n else n
        for g in range(KINDS):
            w.nr[g] = 0
            w.nt[g] = 0
        for k in range(k0, k1):
            iota = tau[k]
            if not _plain(iota, delta[k], alpha[k], nu[k], beta[k], mu[k]):
                out[k] = page_value(iota, delta[k], alpha[k], gamma[k], nu[k], beta[k], mu[k], -1)
                continue
            kk = iota / beta[k]
            yes = kk >= RES_MIN_K  # (residue_value's first test)
            g = _residue_kind(iota, kk, alpha[k], beta[k], nu[k])
            w.r_k[g][w.nr[g]] = k
            w.nr[g] += yes
            g = _term0_kind(iota, delta[k] + nu[k], gamma[k], alpha[k])
            w.t_k[g][w.nt[g]] = k
            w.nt[g] += 1 - yes
        for h in range(KINDS):
            for i in range(w.nr[h]):
                k = w.r_k[h][i]
                v = NAN
                yes = residue_value(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k], &v, True)
                out[k] = mu[k] * v
                g = _term0_kind(tau[k], delta[k] + nu[k], gamma[k], alpha[k])
                w.t_k[g][w.nt[g]] = k
                w.nt[g] += 1 - yes
        for h in range(KINDS):
            # the kind's pages together (``_value_series.h``): c iota <= 2 and gamma iota < 0.7 (kinds 0-3), _term0
            # sums its series at once; elsewhere its closed forms, each 1 - e^{-x} in one form for the kind
            for i in range(w.nt[h]):
                k = w.t_k[h][i]
                w.s[i] = tau[k]
                w.c[i] = delta[k] + nu[k]
                w.g[i] = gamma[k]
                w.al[i] = alpha[k]
                w.x[i] = w.c[i] * tau[k]
                w.ax[i] = alpha[k] * tau[k]
                w.gx[i] = gamma[k] * tau[k]
            if h < 4:
                freshcore_term0_series(w.nt[h], w.x, w.ax, w.gx, INV, SERIES_TOL, w.sa, w.se)
            else:
                freshcore_term0_closed(w.nt[h], w.s, w.c, w.g, w.al, w.x, w.ax, w.gx, (h >> 1) & 1, h & 1, SINHC_COEF,
                                       CANCEL_RATIO, w.se, w.sa, w.need)
            for i in range(w.nt[h]):
                k = w.t_k[h][i]
                iota = tau[k]
                c = w.c[i]
                if h < 4:
                    v = iota * exp(-w.x[i])
                    a0 = v * w.sa[i]
                    d0 = v * w.se[i]
                elif w.need[i]:
                    d0 = _term0(iota, c, gamma[k], alpha[k], &a0)
                else:
                    d0 = w.se[i]
                    a0 = w.sa[i]
                out[k] = mu[k] * d0
                # (the page's slot in the series block, taken only where term 0 is not all of V)
                b.k[m] = k
                b.c[m] = c
                b.d[m] = d0
                b.a[m] = a0
                yes = isnan(d0) | ((beta[k] <= iota) & (a0 != 0.0))
                m += yes
                if m == BLOCK:
                    _series_block(b, m, tau, delta, alpha, gamma, nu, beta, mu, out)
                    m = 0
        k0 = k1
    if m > 0:
        _series_block(b, m, tau, delta, alpha, gamma, nu, beta, mu, out)
    free(b)
    free(w)
    return 0


# ---------------------------------------------------------------------------
# Batch kernels (kind: 0 exact, 1 approx-terms, 2 greedy, 3 cis)

def value_kernel(const double[::1] tau, const double[::1] delta, const double[::1] recall,
                 const double[::1] nu, const double[::1] mu, const double[::1] alpha,
                 const double[::1] gamma, const double[::1] beta, int kind, long terms,
                 double[::1] out):
    """out[k] = V(tau[k]) of page k (all arrays of one length, validated by the caller)."""
    cdef Py_ssize_t k, n = out.shape[0]
    cdef int err = 0
    if n == 0:
        return
    with nogil:
        if kind == 0:
            err = _exact_values(&tau[0], &delta[0], &alpha[0], &gamma[0], &nu[0], &beta[0], &mu[0], &out[0], n)
        elif kind == 1:
            for k in range(n):
                out[k] = page_value(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k], mu[k], terms)
        elif kind == 2:
            for k in range(n):
                out[k] = greedy_value(tau[k], delta[k], mu[k])
        else:
            for k in range(n):
                out[k] = cis_value(tau[k], delta[k], recall[k], alpha[k], mu[k])
    if err:
        raise MemoryError()


def interval_kernel(const double[::1] tau, const double[::1] delta, const double[::1] nu,
                    const double[::1] gamma, const double[::1] beta, double[::1] out):
    """out[k] = psi(tau[k]) of page k."""
    cdef Py_ssize_t k, n = out.shape[0]
    with nogil:
        for k in range(n):
            out[k] = crawl_interval(tau[k], delta[k], gamma[k], nu[k], beta[k])


def fresh_kernel(const double[::1] tau, const double[::1] delta, const double[::1] alpha, const double[::1] nu,
                 const double[::1] gamma, const double[::1] beta, double[::1] out):
    """out[k] = w(tau[k]) of page k."""
    cdef Py_ssize_t k, n = out.shape[0]
    with nogil:
        for k in range(n):
            out[k] = fresh_time(tau[k], delta[k], alpha[k], gamma[k], nu[k], beta[k])
