# cython: language_level=3
"""Compiled special functions of freshcore (cimportable through ``_core.pxd``).

Design
------
freshcore's compiled code is layered (see STYLE.md):

1. ``cdef inline ... noexcept nogil`` functions for one page, one step or one
   series term;
2. ``def`` batch kernels over typed memoryviews (``const double[::1]`` in,
   caller-allocated ``double[::1]`` out) that release the GIL;
3. ``cdef class`` state holders for what must stay compiled between calls;
4. public Python functions and classes (``freshcore.*``) that validate input,
   choose defaults, allocate outputs and delegate here.

The kernels never validate user input: by the time they run, every array is
C-contiguous float64 (or the documented integer type), of matching length and
within range, so ``boundscheck``/``wraparound`` are off and ``cdivision`` is on
(guarded divisions only).  Build with ``FRESHCORE_DEBUG_CYTHON=1`` to switch the
checks back on.

Lambert W
---------
``lambertw0`` (principal branch, z >= -1/e) and ``lambertwm1`` (lower branch,
-1/e <= z < 0) for real arguments:

* near the branch point (q = 1 + e z < 0.005) the series
  W = sum_k mu_k p^k in p = +-sqrt(2 q) (Corless et al. 1996, eq. 4.22; p > 0
  for W0, p < 0 for W-1), 16 terms, where q is computed with 1/e split into a
  double-double (hi + lo) so that it carries the full precision of z;
* tiny |z| (< 1e-3, branch 0): the Taylor series sum (-n)^(n-1)/n! z^n;
* elsewhere an initial guess (piecewise degree-8 Chebyshev fits: in z or log z
  for W0 up to 1e10, in -log(-z) for W-1; the de Bruijn asymptotic series for W0
  beyond 1e10; the branch-point series close to -1/e), each within 4.2e-6, refined
  by Fritsch-Shafer-Crowley iteration (fourth order: one step leaves ~K eps^4,
  K < 1.5), whose residual log(z/w) - w is formed as log|z| - log|w| when z/w
  would under- or overflow.

``lambertw_shifted(q, z, lower)`` returns 1 + W(z) from an accurate q = 1 + e z
supplied by the caller; the periodic rate solver uses it with q = c exactly, so
x = -(1 + W-1(-(1 - c)/e)) keeps full relative precision as c -> 0.

Conventions at the ends of the domain: W0(+inf) = +inf, W-1(0) = -inf (as
scipy.special.lambertw), and the double nearest -1/e (-0.36787944117144233,
1.2e-17 below the exact -1/e) is treated as the branch point: W = -1.

Exponential residual
--------------------
``residual_exp(i, x)`` = R^i(x) = 1 - e^{-x} sum_{j<=i} x^j/j! = P(Poisson(x) > i)
= gammainc(i + 1, x) (SPEC section 3).  The literal formula cancels for small x,
so (as in the standard incomplete-gamma algorithms):

* x < i + 1: the series e^{-x} sum_{j>i} x^j/j! = p_{i+1}(x) (1 + x/(i+2) + ...),
  whose terms fall at least geometrically (ratio x/(i+2+k) < 1), summed until
  the provable remainder is below 1e-17 of the sum;
* x >= i + 1: the complement 1 - p_i(x) (1 + i/x + i(i-1)/x^2 + ...), where
  the subtracted part is at most ~0.55, so nothing cancels.

The Poisson probability p_j(x) = e^{-x} x^j/j! is formed as pow(x, j) e^{-x}/j!
for x < 1 (pow keeps full precision where j log x is large) and otherwise by
Loader's saddle-point form exp(-stirlerr(j) - bd0(j, x))/sqrt(2 pi j), whose
bd0(j, x) = j log(j/x) + x - j is summed as a series for j close to x (C.
Loader, "Fast and accurate computation of binomial probabilities", 2000; the
same scheme as R's dpois).

Both loops take O(sqrt(i)) steps where x is close to i (the Poisson mass spreads
over ~sqrt(i) orders), so ``residual_exp_order`` (the Python API's path, any
integral order in the double range) hands orders i >= 2^31 to Temme's uniform
asymptotic expansion (``_residual_large``): with a = i + 1, lambda = x/a and
eta = sign(lambda - 1) sqrt(2 (lambda - 1 - log lambda)),

    P(a, x) = erfc(-eta sqrt(a/2))/2 - R_a(eta),   Q(a, x) = erfc(eta sqrt(a/2))/2 + R_a(eta),
    R_a(eta) = e^{-a eta^2/2} / sqrt(2 pi a) * (c_0(eta) + c_1(eta)/a + c_2(eta)/a^2 + ...)

(Temme, "The asymptotic expansion of the incomplete gamma functions", SIAM J.
Math. Anal. 10, 1979; DLMF 8.12.3-8.12.12), c_k as power series in eta from
exact rational arithmetic.  Where the result is not 0 or 1 in double precision,
a eta^2/2 < 750 and a >= 2^31 give |eta| < 0.00084, so c_0 to eta^7, c_1 to eta^5
and c_2 to eta^2 leave under 1e-22 of R_a, and the omitted c_3/a^3 < 1e-30; R_a is
at most |eta|/3 of the erfc term in the tails (no cancellation).  What is left is
the conditioning of e^{-a eta^2/2} and erfc near underflow (the exponent, up to 750,
carries ~2e-16 of relative error): ~2e-13 relative there, 1e-16 near the centre.
"""

from libc.math cimport sqrt, log, exp, pow, fabs, erfc, INFINITY, NAN, isnan

# 1/e and e as double-double (hi + lo), for q = 1 + e z near the branch point.
cdef double INV_E_HI = 0.36787944117144233
cdef double INV_E_LO = -1.2428753672788363e-17
cdef double E_HI = 2.718281828459045
cdef double E_LO = 1.4456468917292502e-16

# Series coefficients mu_1..mu_16 of W = -1 + sum_k mu_k p^k, p = +-sqrt(2(1 + e z)).
cdef double MU1 = 1.0
cdef double MU2 = -0.3333333333333333
cdef double MU3 = 0.1527777777777778
cdef double MU4 = -0.07962962962962963
cdef double MU5 = 0.044502314814814814
cdef double MU6 = -0.02598471487360376
cdef double MU7 = 0.01563563253233392
cdef double MU8 = -0.009616892024299432
cdef double MU9 = 0.006014543252956118
cdef double MU10 = -0.0038112980348919993
cdef double MU11 = 0.0024408779911439826
cdef double MU12 = -0.0015769303446867841
cdef double MU13 = 0.0010262633205076071
cdef double MU14 = -0.0006720616311561362
cdef double MU15 = 0.0004424730618146209
cdef double MU16 = -0.00029267722472962746

# Below this q = 1 + e z the 16-term series is the answer (|p| < 0.1: the first
# omitted term is < 2e-4 * 0.1^17 relative).
cdef double Q_SERIES = 0.005
# Above this q the branch-point series is no longer a good starting guess.
cdef double Q_GUESS = 0.3


cdef double branch_distance(double z) noexcept nogil:
    """q = 1 + e z computed in double-double so that it is accurate near z = -1/e."""
    cdef double d = (z + INV_E_HI) + INV_E_LO   # z + INV_E_HI is exact there (Sterbenz)
    return d * E_HI + d * E_LO


cdef inline double _series_p1(double p) noexcept nogil:
    """1 + W as the branch-point series sum_{k=1}^{16} mu_k p^k (Horner)."""
    cdef double s = MU16
    s = s * p + MU15
    s = s * p + MU14
    s = s * p + MU13
    s = s * p + MU12
    s = s * p + MU11
    s = s * p + MU10
    s = s * p + MU9
    s = s * p + MU8
    s = s * p + MU7
    s = s * p + MU6
    s = s * p + MU5
    s = s * p + MU4
    s = s * p + MU3
    s = s * p + MU2
    s = s * p + MU1
    return s * p


cdef inline double _fritsch(double z, double w) noexcept nogil:
    """Refine w ~ W(z) by Fritsch-Shafer-Crowley iteration (z, w of equal sign, w != 0, -1)."""
    cdef double zn, t, eps, r
    cdef int _it
    cdef bint tiny = fabs(z) < 1e-280 or fabs(z) > 1e280
    for _it in range(6):
        if tiny:
            zn = log(fabs(z)) - log(fabs(w)) - w
        else:
            zn = log(z / w) - w
        t = 2.0 * (1.0 + w) * (1.0 + w + (2.0 / 3.0) * zn)
        r = t - 2.0 * zn
        if r == 0.0:
            break
        eps = zn * (t - zn) / ((1.0 + w) * r)
        w = w + w * eps
        if fabs(eps) < 2e-4:
            # the error left is about K eps^4 with K < 1.5 where this is used (|1 + w| > 0.5
            # or a series guess good to 1e-5): below 2.4e-15 relative
            break
    return w


cdef inline double _debruijn(double l1) noexcept nogil:
    """Asymptotic W ~ L1 - L2 + L2/L1 + L2(L2-2)/(2 L1^2) with L1 = log|z| (either sign of L1 handled by caller)."""
    cdef double l2 = log(fabs(l1))
    return l1 - l2 + l2 / l1 + l2 * (l2 - 2.0) / (2.0 * l1 * l1)


cdef inline double _horner8(double t, double c0, double c1, double c2, double c3, double c4,
                            double c5, double c6, double c7, double c8) noexcept nogil:
    return c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * (c5 + t * (c6 + t * (c7 + t * c8)))))))


cdef inline double _guess_m1(double sg) noexcept nogil:
    """x = -1 - W-1(z) from sg = -1 - log(-z) in [0.35, 750): piecewise degree-8 Chebyshev
    fits (variable t mapped to [-1, 1], power basis), relative error < 2.7e-6 against mpmath."""
    cdef double t
    if sg < 1.5:
        t = (sg - 0.925) * 1.7391304347826089
        return _horner8(t, 2.035314767769444, 0.8574952805725615, -0.05948719265704821, 0.019675536658543564,
                        -0.007896114934367766, 0.0026930449484291246, -0.0010736922945076106, 0.0015544294960352437,
                        -0.0008808522241855669)
    elif sg < 5.0:
        t = (sg - 3.25) * 0.5714285714285714
        return _horner8(t, 5.050069629703291, 2.096523389308527, -0.07192188405240076, 0.021636508611881954,
                        -0.007660733363887595, 0.0026501891152439215, -0.001024171019339752, 0.0008494130841892766,
                        -0.0004055567630911207)
    elif sg < 16.0:
        t = (sg - 10.5) * 0.18181818181818182
        return _horner8(t, 13.149692698473178, 5.918252515465633, -0.09411204908514989, 0.029344817144377394,
                        -0.01052312535297734, 0.003674519386581218, -0.0014203734765444369, 0.0011222200214417919,
                        -0.0005243800397274216)
    elif sg < 48.0:
        t = (sg - 32.0) * 0.0625
        return _horner8(t, 35.6000493959436, 16.44942994479198, -0.10382431346637852, 0.032520747481118446,
                        -0.011564867709483354, 0.004033644311391483, -0.0015411312858315967, 0.001121109905614222,
                        -0.0005048263961422157)
    elif sg < 160.0:
        t = (sg - 104.0) * 0.017857142857142856
        return _horner8(t, 108.69772803126791, 56.5151683981454, -0.1339006972310391, 0.046914177330874635,
                        -0.018558263416093894, 0.0067513284285299485, -0.0027575192780201446, 0.002636207834179469,
                        -0.00131747358819274)
    else:
        t = (sg - 455.0) * 0.003389830508474576
        return _horner8(t, 461.13585156913155, 295.63952736783045, -0.20471606762499353, 0.09022254663350765,
                        -0.04490320829950712, 0.013615261659808447, -0.00498367506487581, 0.015371489669883609,
                        -0.00980860210869734)


cdef inline double _guess_w0(double z) noexcept nogil:
    """W0(z) for -0.2576 < z < 1e10 (|z| >= 1e-3): piecewise degree-8 Chebyshev fits (power basis in
    t mapped to [-1, 1]; in z, in z with W0(z)/z near 0, in log z above 3), relative error < 4.2e-6 against mpmath."""
    cdef double t, lz
    if z < -0.1:
        t = (z - -0.17880000000000001) * 12.69035532994924
        return _horner8(t, -0.22360263113109816, 0.12692607833184566, -0.01842995720407266, 0.004136159866845257,
                        -0.0011123161651464986, 0.0003204658303211021, -9.978426950507652e-05, 4.568577546553352e-05,
                        -1.627977546215886e-05)
    elif z < 0.6:
        t = (z - 0.25) * 2.857142857142857
        return z * _horner8(t, 0.8155539276416701, -0.1933522319873762, 0.06486504087607106, -0.02536870466162669,
                            0.010756609379942985, -0.003957577032319034, 0.001653993537001768, -0.0018457343015008316,
                            0.0009689960753531039)
    elif z < 3.01:
        t = (z - 1.805) * 0.8298755186721992
        return _horner8(t, 0.8061033035746026, 0.2979499602203385, -0.0689535119911892, 0.022766052035845856,
                        -0.008707066235055013, 0.003103502586714318, -0.001247614062146241, 0.001204347643773706,
                        -0.0006059632659908868)
    # z >= 3.01: fits in log z
    lz = log(z)
    if lz < 3.5:
        t = (lz - 2.299306144334055) * 0.8328517675684836
        return _horner8(t, 1.7434437949054222, 0.7630344995683388, 0.06086312867950868, -0.008048819366169585,
                        0.0006828912842474593, 4.859326205014023e-05, -3.7065275036692326e-05, 8.669748400878806e-06,
                        -9.120680403065223e-07)
    elif lz < 9.0:
        t = (lz - 6.25) * 0.36363636363636365
        return _horner8(t, 4.702009932857516, 2.267713794590629, 0.09590381075667705, -0.022721954268575945,
                        0.005489492872250139, -0.0012776537108037443, 0.00026992419244379316, -3.731944632940039e-05,
                        -1.4931985247396411e-06)
    else:
        t = (lz - 16.05) * 0.14184397163120566
        return _horner8(t, 13.450950287292406, 6.562144962554065, 0.11076537422680005, -0.0323145651158381,
                        0.010314827117276899, -0.003325509020464963, 0.0011180707131504348, -0.0005217568874805443,
                        0.00018282055491275942)


cdef double lambertw_shifted(double q, double z, bint lower) noexcept nogil:
    """1 + W(z) on branch 0 (``lower`` false) or -1 (``lower`` true), given q = 1 + e z.

    ``q`` must be accurate (the caller computes it, e.g. with
    ``branch_distance``); ``z`` is used away from the branch point only.
    """
    cdef double p, w
    if isnan(q) or isnan(z):
        return NAN
    if q <= 0.0:
        return 0.0
    if q < Q_SERIES:
        p = sqrt(2.0 * q)
        return _series_p1(-p if lower else p)
    if lower:
        if z >= 0.0:
            return -INFINITY if z == 0.0 else NAN
        if q < Q_GUESS:
            w = _series_p1(-sqrt(2.0 * q)) - 1.0
        else:
            w = -1.0 - _guess_m1(-1.0 - log(-z))
        return 1.0 + _fritsch(z, w)
    return 1.0 + lambertw0(z)


cdef double lambertw0(double z) noexcept nogil:
    """Principal branch W0(z), z >= -1/e (NaN below; +inf at +inf)."""
    cdef double q, w, a
    if isnan(z):
        return NAN
    a = fabs(z)
    if a < 1e-3:
        # sum_{n>=1} (-n)^(n-1)/n! z^n, 8 terms: first omitted term < 2e-21 relative
        return z * (1.0 + z * (-1.0 + z * (1.5 + z * (-8.0 / 3.0 + z * (125.0 / 24.0 + z * (
            -54.0 / 5.0 + z * (16807.0 / 720.0 + z * (-16384.0 / 315.0))))))))
    if z == INFINITY:
        return INFINITY
    if z < 0.0:
        q = branch_distance(z)
        if q <= 0.0:
            return -1.0 if z >= -INV_E_HI else NAN
        if q < Q_SERIES:
            return _series_p1(sqrt(2.0 * q)) - 1.0
        if q < Q_GUESS:
            w = _series_p1(sqrt(2.0 * q)) - 1.0
        else:
            w = _guess_w0(z)
        return _fritsch(z, w)
    if z < 1e10:
        w = _guess_w0(z)
    else:
        w = _debruijn(log(z))
    return _fritsch(z, w)


cdef double lambertwm1(double z) noexcept nogil:
    """Lower branch W-1(z), -1/e <= z < 0 (-inf at 0, NaN outside)."""
    cdef double q
    if isnan(z) or z > 0.0:
        return NAN
    if z == 0.0:
        return -INFINITY
    q = branch_distance(z)
    if q <= 0.0:
        return -1.0 if z >= -INV_E_HI else NAN
    return lambertw_shifted(q, z, True) - 1.0


def lambertw_kernel(const double[::1] z, int branch, double[::1] out):
    """out[i] = W_branch(z[i]) for branch 0 or -1 (no validation: see freshcore.special.lambertw)."""
    cdef Py_ssize_t i, n = z.shape[0]
    with nogil:
        if branch == 0:
            for i in range(n):
                out[i] = lambertw0(z[i])
        else:
            for i in range(n):
                out[i] = lambertwm1(z[i])


# ---------------------------------------------------------------------------
# Exponential residual R^i(x) = P(Poisson(x) > i)

# stirlerr(n) = log(n!) - (n + 1/2) log(n) + n - log(sqrt(2 pi)), n = 1..15 (mpmath, 40 digits).
cdef double[16] STIRLERR_TABLE = [
    0.0,
    0.08106146679532726, 0.0413406959554093, 0.02767792568499834, 0.020790672103765093,
    0.016644691189821193, 0.013876128823070748, 0.01189670994589177, 0.010411265261972096,
    0.009255462182712733, 0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
    0.006408994188004207, 0.0059513701127588475, 0.005554733551962801]
cdef double LOG_SQRT_2PI = 0.91893853320467274178
cdef double SQRT_2PI = 2.5066282746310005024


cdef double stirlerr(double n) noexcept nogil:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for integers n >= 1 held in a double (table, then the Stirling series;
    Loader's saddle-point binomial of freshcore._polled uses it too)."""
    cdef double nn
    if n <= 15.0:
        return STIRLERR_TABLE[<int>n]
    nn = n * n
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - (1.0 / 1680.0 - (1.0 / 1188.0) / nn) / nn) / nn) / nn) / n


cdef double bd0(double j, double x) noexcept nogil:
    """Loader's deviance j log(j/x) + x - j without cancellation, j > 0, x > 0 (for other modules)."""
    return _bd0(j, x)


cdef inline double _stirlerr(long n) noexcept nogil:
    return stirlerr(<double>n)


cdef inline double _bd0(double j, double x) noexcept nogil:
    """j log(j/x) + x - j without cancellation (Loader 2000), j > 0, x > 0."""
    cdef double v, s, s1, ej
    cdef int k
    if fabs(j - x) < 0.1 * (j + x):
        v = (j - x) / (j + x)
        s = (j - x) * v
        ej = 2.0 * j * v
        v = v * v
        for k in range(1, 1000):
            ej *= v
            s1 = s + ej / (2 * k + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return j * log(j / x) + x - j


cdef double poisson_pmf(long j, double x) noexcept nogil:
    """p_j(x) = e^{-x} x^j / j! for j >= 0, x >= 0 (see the module notes)."""
    cdef double f
    cdef long k
    if j < 0 or x == INFINITY:
        return 0.0  # (x = inf: the mass has gone to infinity; Loader's form would give inf - inf)
    if x == 0.0:
        return 1.0 if j == 0 else 0.0
    if j == 0:
        return exp(-x)
    if x < 1.0 and j <= 170:
        f = 1.0
        for k in range(2, j + 1):
            f *= <double>k
        return pow(x, <double>j) * exp(-x) / f
    return exp(-_stirlerr(j) - _bd0(<double>j, x)) / (SQRT_2PI * sqrt(<double>j))


cdef double residual_exp(long i, double x) noexcept nogil:
    """R^i(x) = P(Poisson(x) > i) for i >= 0, x >= 0 (x = inf gives 1, NaN gives NaN)."""
    cdef double p, t, total, r
    cdef long k
    if isnan(x):
        return NAN
    if x <= 0.0:
        return 0.0
    if x == INFINITY:
        return 1.0
    if x < <double>(i + 1):
        # e^{-x} sum_{j>i} x^j/j! = p_{i+1}(x) sum_k t_k, t_{k+1} = t_k x/(i+2+k)
        p = poisson_pmf(i + 1, x)
        if p == 0.0:
            return 0.0
        t = 1.0
        total = 1.0
        k = 0
        while True:
            r = x / <double>(i + 2 + k)
            t *= r
            total += t
            k += 1
            # remainder after this term <= t r'/(1 - r'), r' = x/(i+2+k) < 1
            r = x / <double>(i + 2 + k)
            if t * r <= 1e-17 * total * (1.0 - r):
                break
        return p * total
    return 1.0 - _lower_tail(i, x)


cdef double poisson_lower(long i, double x) noexcept nogil:
    """Q^i(x) = P(Poisson(x) <= i) = 1 - R^i(x), accurate in relative terms for x >= i + 1."""
    if isnan(x):
        return NAN
    if x <= 0.0:
        return 1.0
    if x == INFINITY:
        return 0.0
    if x < <double>(i + 1):
        return 1.0 - residual_exp(i, x)
    return _lower_tail(i, x)


cdef double _lower_tail(long i, double x) noexcept nogil:
    """e^{-x} sum_{j<=i} x^j/j! = p_i(x) sum_k u_k, u_{k+1} = u_k (i-k)/x, for x >= i + 1."""
    cdef double p, t, total, r
    cdef long k
    p = poisson_pmf(i, x)
    if p == 0.0:
        return 0.0
    t = 1.0
    total = 1.0
    k = 0
    while k < i:
        t *= <double>(i - k) / x
        total += t
        k += 1
        # remainder <= t q/(1 - q) with q = (i-k)/x <= i/x < 1
        r = <double>(i - k) / x
        if t * r <= 1e-17 * total * (1.0 - r):
            break
    return p * total


# ---------------------------------------------------------------------------
# Large orders: Temme's uniform expansion (see the module notes)

# Orders from this one on take the uniform expansion (below it the series cost O(sqrt(i)) <= ~4e5 steps).
cdef double TEMME_MIN_ORDER = 2147483648.0
# c_k(eta) = sum_n d_{k,n} eta^n (Temme 1979; generated in exact rational arithmetic, rounded once)
cdef double[8] TEMME_C0 = [
    -0.3333333333333333, 0.08333333333333333, -0.014814814814814815, 0.0011574074074074073, 0.0003527336860670194,
    -0.0001787551440329218, 3.919263178522438e-05, -2.185448510679992e-06]
cdef double[6] TEMME_C1 = [
    -0.001851851851851852, -0.003472222222222222, 0.0026455026455026454, -0.0009902263374485596,
    0.00020576131687242798, -4.018775720164609e-07]
cdef double[3] TEMME_C2 = [0.004133597883597883, -0.0026813271604938273, 0.0007716049382716049]
# (t - log1p(t))/t^2 = sum_{k>=0} (-1)^k t^k/(k + 2) for |t| <= 0.01: 10 terms (the first omitted is below 1e-21)
cdef double[10] LOG1P_REM = [
    0.5, -0.3333333333333333, 0.25, -0.2, 0.16666666666666666, -0.14285714285714285, 0.125, -0.1111111111111111, 0.1,
    -0.09090909090909091]
cdef double TWO_PI = 6.283185307179586


cdef double _residual_large(double i, double x) noexcept nogil:
    """R^i(x) for an integral order i >= 2^31 (a double), x >= 0 finite: Temme's expansion (module notes).

    t = (x - a)/a with a = i + 1 is formed as ((x - i) - 1)/a, x - i exact (Sterbenz) where it matters
    (x within a factor 2 of i): a itself may not be a double (i >= 2^53), but the distance is.
    """
    cdef double a, t, h, y2, eta, ra, s
    if x <= 0.5 * i:
        return 0.0  # P(a, a/2) < e^{-a (1/2 - log 2 + ...)} ~ e^{-0.15 a}: 0 in double
    if x >= 2.0 * i:
        return 1.0  # Q(a, 2a) < e^{-0.3 a}: R = 1 in double
    a = i + 1.0
    t = ((x - i) - 1.0) / a
    if t < -0.01:
        return 0.0  # a (t - log1p t) > 2^31 4.9e-5 = 1e5 > 750: R < e^{-750}
    if t > 0.01:
        return 1.0
    # a eta^2 / 2 = a (t - log1p t) = ((x - a) t) (t - log1p t)/t^2
    h = horner(LOG1P_REM, 9, t)
    y2 = (((x - i) - 1.0) * t) * h
    if y2 > 750.0:
        return 0.0 if t < 0.0 else 1.0
    eta = t * sqrt(2.0 * h)
    s = horner(TEMME_C0, 7, eta) + (horner(TEMME_C1, 5, eta) + horner(TEMME_C2, 2, eta) / a) / a
    ra = exp(-y2) / sqrt(TWO_PI * a) * s
    if t < 0.0:
        return 0.5 * erfc(sqrt(y2)) - ra   # P(a, x), eta sqrt(a/2) = -sqrt(y2)
    return 1.0 - (0.5 * erfc(sqrt(y2)) + ra)


cdef double residual_exp_order(double i, double x) noexcept nogil:
    """R^i(x) for any integral order 0 <= i < inf given as a double (the public ``residual_exp``'s path):
    ``residual_exp`` below 2^31 (the same bits), Temme's expansion from there on."""
    if isnan(x) or isnan(i):
        return NAN
    if i < TEMME_MIN_ORDER:
        return residual_exp(<long>i, x)
    if x <= 0.0:
        return 0.0
    if x == INFINITY:
        return 1.0
    return _residual_large(i, x)


def residual_exp_kernel(const double[::1] i, const double[::1] x, double[::1] out):
    """out[k] = R^{i[k]}(x[k]) (inputs validated by the caller: i integral and finite >= 0, x >= 0, equal
    lengths)."""
    cdef Py_ssize_t k, n = x.shape[0]
    with nogil:
        for k in range(n):
            out[k] = residual_exp_order(i[k], x[k])
