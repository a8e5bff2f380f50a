# cython: language_level=3
"""Compiled kernels of the Theorem 2 solver: per page, the threshold with ``V(iota) = Lambda``.

Layers as in ``_core.pyx``: ``cdef ... noexcept nogil`` functions for one page and ``def`` batch kernels
over typed memoryviews that release the GIL; ``freshcore.thresholds`` validates, holds the outer
(multiplier) iteration in Python and calls these kernels once per multiplier.  The per-page series
(``V``, ``psi`` and their slopes) are those of ``freshcore._value``, cimported through ``_value.pxd``,
so a threshold solved here has the crawl value that ``freshcore.value.crawl_value`` reports.

Kernels:

* ``threshold_kernel``: Halley's method on ``V(iota) = Lambda`` per page, started and bracketed by the
  caller's hints (``_solve_threshold``);
* ``interval_inverse_kernel``: ``iota`` with ``psi(iota) = 1/f`` (the time-shared pages' thresholds);
* ``signal_count_kernel``: pages with ``recall = 1``, crawled at the K-th signal (``best_signal_count``).

References
----------
Busa-Fekete, Zimmert, György et al., "A scalable crawling algorithm utilizing noisy
change-indicating signals", 2025 (Theorem 2, Appendix A).
"""

from libc.math cimport exp, expm1, log, fabs, INFINITY

from freshcore._value cimport crawl_interval, interval_and_slope, value_and_interval

# Thresholds of Theorem 2: V(iota) = Lam per page (signal-aware pages, beta > 0, alpha > 0)
#
# Slope of V: differentiating the series term by term (d R^n(x)/dx = p_n(x), the Poisson pmf),
# w' = sum rho^n p_n(c s_n) and psi' = sum p_n(gamma s_n), and rho^n p_n(c s_n) = e^{-alpha iota}
# p_n(gamma s_n) term by term (both are e^{-c s_n} (nu s_n)^n / n!, since e^{-alpha n beta} =
# (nu/gamma)^n), so w' = e^{-alpha iota} psi' and
#
#     V'(iota) = mu (w' - e^{-alpha iota} psi' + alpha e^{-alpha iota} psi) = mu alpha e^{-alpha iota} psi(iota),
#
# a product of positive factors (no cancellation).  It is also the statement of Theorem 2 that V
# is the marginal value of frequency: d(mu w f)/df = V with f = 1/psi.

# The curvature follows: V''/V' = psi'/psi - alpha, with psi' = sum p_n(gamma s_n) from the same
# series as psi (``interval_and_slope``), so Halley's method costs no more V evaluations than Newton's.

cdef double NEWTON_EXACT = 1e-8
# Halley's error after a step h is ~ (V''^2/(4 V'^2) - V'''/(6 V')) h^3, below 0.75 (kappa h)^2 h with
# kappa = 1/iota + alpha + gamma bounding |V''/V'| (and kappa^2 / 3 |V'''/V'|): with kappa |h| <= 1e-6
# that is under 1e-12 |h| <= 1e-18 iota.  The same bound holds for the second-order prediction
# iota + h - (V''/V') h^2/2 from a solution at a nearby multiplier (``base``).
cdef double HALLEY_EXACT = 1e-6
# Below this kappa |step|, psi at the accepted root is psi + psi' step from the last evaluation (no psi series).
cdef double PSI_TAYLOR = 4e-9


cdef inline void _curvatures(double psi, double* dpsi, double alpha, double* curv_out) noexcept nogil:
    """V''/V' = psi'/psi - alpha and V'''/V' = (psi'' - 2 alpha psi' + alpha^2 psi)/psi in curv_out[0], [1]."""
    if psi > 0.0:
        curv_out[0] = dpsi[0] / psi - alpha
        curv_out[1] = (dpsi[1] - 2.0 * alpha * dpsi[0]) / psi + alpha * alpha
    else:
        curv_out[0] = 0.0
        curv_out[1] = 0.0


cdef inline double _finish(double x, double delta, double alpha, double gamma, double nu, double beta,
                           double mu, double* psi_out, double* slope_out, double* curv_out) noexcept nogil:
    """psi, V', V''/V' and V'''/V' at an accepted threshold x (psi only: V(x) = lam is known); returns x."""
    cdef double psi
    cdef double dpsi[2]
    psi = interval_and_slope(x, delta, gamma, nu, beta, dpsi)
    psi_out[0] = psi
    slope_out[0] = mu * alpha * exp(-alpha * x) * psi
    _curvatures(psi, dpsi, alpha, curv_out)
    return x


cdef double _solve_threshold(double lam, double delta, double alpha, double gamma, double nu,
                             double beta, double mu, double x, double lo, double hi, double base,
                             double* psi_out, double* slope_out, double* curv_out) noexcept nogil:
    """iota with V(iota) = lam (inf when lam >= mu/delta); psi(iota), V'(iota), V''/V' and V'''/V' (curv_out[0],
    curv_out[1]) in the out pointers.

    Halley's method on V(iota) - lam, with the slope above and the curvature
    V''/V' = psi'/psi - alpha (Newton's step where the Halley correction
    ``|h V''/(2 V')|`` exceeds 1/4, ``h`` the Newton step), started at ``x``
    and safeguarded by a bracket: [lo, hi] are bounds from neighbouring
    multipliers (V(lo) <= lam <= V(hi) up to rounding; 0 and inf when
    unknown) that every evaluation narrows; a step that leaves the
    bracket is replaced by its midpoint (or by 4 x while hi is inf).  Ends
    when |V - lam| <= 2e-16 lam, when the step is below 2e-16 iota, when
    the bracket is down to a few ulps, or after a step so small that the
    next iterate is exact to ~1e-18 (cubic convergence: ``|h| kappa <=
    HALLEY_EXACT = 1e-6`` for a Halley step, ``NEWTON_EXACT = 1e-8`` for a
    Newton step, kappa = 1/x + alpha + gamma): then only psi is evaluated
    there.  ``base`` (NaN if none) is the solution at another multiplier
    from which ``x`` was predicted to second order (or interpolated); when
    ``|x - base| kappa <= HALLEY_EXACT``, ``x`` is returned at once.
    """
    cdef double v, psi, d, c2, xn, step, h, t, kap
    cdef double dpsi[2]
    cdef int _it
    cdef bint halley
    psi_out[0] = INFINITY
    slope_out[0] = 0.0
    curv_out[0] = 0.0
    curv_out[1] = 0.0
    if lam >= mu / delta:
        return INFINITY
    if not (lo >= 0.0) or lo == INFINITY:
        lo = 0.0
    if not (hi > lo):
        hi = INFINITY
    if not (x > lo and x < hi):
        x = 0.5 * (lo + hi) if hi < INFINITY else (2.0 * lo if lo > 0.0 else 1.0 / delta)
    elif base >= 0.0 and base < INFINITY and fabs(x - base) * (1.0 / x + alpha + gamma) <= HALLEY_EXACT:
        # x is a second-order prediction from the solution base of a nearby multiplier, close enough to be exact
        return _finish(x, delta, alpha, gamma, nu, beta, mu, psi_out, slope_out, curv_out)
    for _it in range(200):
        v = value_and_interval(x, delta, alpha, gamma, nu, beta, mu, &psi, dpsi)
        d = mu * alpha * exp(-alpha * x) * psi
        _curvatures(psi, dpsi, alpha, curv_out)
        c2 = curv_out[0]
        psi_out[0] = psi
        slope_out[0] = d
        if fabs(v - lam) <= 2e-16 * lam:
            return x  # V(x) = lam to the rounding of V
        if v < lam:
            lo = x
        else:
            hi = x
        h = (lam - v) / d if d > 0.0 else INFINITY
        if fabs(h) <= 2e-16 * x or (hi < INFINITY and hi - lo <= 4e-16 * hi):
            return x
        t = 0.5 * h * c2
        halley = fabs(t) <= 0.25
        step = h / (1.0 + t) if halley else h
        xn = x + step
        kap = 1.0 / x + alpha + gamma
        if xn > lo and xn < hi and fabs(step) * kap <= (HALLEY_EXACT if halley else NEWTON_EXACT):
            # the error of xn is below ~1e-18 of it (see HALLEY_EXACT): V(xn) = lam needs no evaluation
            if fabs(step) * kap <= PSI_TAYLOR:
                # nor psi(xn): psi + psi' step errs by psi'' step^2 / 2 <= (kappa step)^2 psi / 2 < 1e-17 psi
                psi += dpsi[0] * step
                psi_out[0] = psi
                slope_out[0] = mu * alpha * exp(-alpha * xn) * psi
                _curvatures(psi, dpsi, alpha, curv_out)  # psi', psi'' at x: off by ~kappa |step| <= 4e-9
                return xn
            return _finish(xn, delta, alpha, gamma, nu, beta, mu, psi_out, slope_out, curv_out)
        if not (xn > lo and xn < hi):
            if hi == INFINITY:
                xn = 4.0 * x
                if xn == INFINITY:
                    return INFINITY
            else:
                xn = 0.5 * (lo + hi)
        x = xn
    return _finish(x, delta, alpha, gamma, nu, beta, mu, psi_out, slope_out, curv_out)


def threshold_kernel(double lam, const double[::1] delta, const double[::1] alpha,
                     const double[::1] gamma, const double[::1] nu, const double[::1] beta,
                     const double[::1] mu, const double[::1] start, const double[::1] lo,
                     const double[::1] hi, const double[::1] base, double[::1] iota, double[::1] freq,
                     double[::1] slope, double[::1] curv=None, double[::1] curv3=None):
    """Per page: iota[k] with V(iota) = lam, freq[k] = 1/psi(iota), slope[k] = V'(iota) and, if given,
    curv[k] = V''(iota)/V'(iota) and curv3[k] = V'''(iota)/V'(iota) (0 where not crawled).

    ``start`` is the first iterate, ``lo``/``hi`` the safeguarding bracket,
    ``base`` the solution ``start`` was predicted from (see
    ``_solve_threshold``).  Pages are independent: any split of the arrays
    gives the same values.
    """
    cdef Py_ssize_t k, n = delta.shape[0]
    cdef double t, psi, d
    cdef double c[2]
    cdef bint want_curv = curv is not None, want_curv3 = curv3 is not None
    with nogil:
        for k in range(n):
            t = _solve_threshold(lam, delta[k], alpha[k], gamma[k], nu[k], beta[k], mu[k],
                                 start[k], lo[k], hi[k], base[k], &psi, &d, c)
            iota[k] = t
            slope[k] = d
            if want_curv:
                curv[k] = c[0]
            if want_curv3:
                curv3[k] = c[1]
            freq[k] = 0.0 if t == INFINITY else 1.0 / psi


def interval_inverse_kernel(const double[::1] target, const double[::1] delta, const double[::1] gamma,
                            const double[::1] nu, const double[::1] beta, const double[::1] lo,
                            const double[::1] hi, double[::1] iota):
    """iota[k] with psi(iota) = target[k] (psi is increasing), to a few ulps, from the bracket [lo[k], hi[k]].

    The caller's bracket is the two thresholds of neighbouring multipliers, so
    it is narrow and psi nearly linear on it: regula falsi with the Illinois
    modification (the retained end's residual halved when the same end is kept
    twice) converges in a few evaluations where bisection took ~55; a pass that
    does not halve the bracket is followed by a bisection step.  A bracket
    that does not hold the target (or hi = inf) is widened first.  Ends when
    psi(iota) = target exactly or the bracket is below 4e-16 of its upper end,
    returning the upper end (psi(iota) >= target).
    """
    cdef Py_ssize_t k, n = delta.shape[0]
    cdef double a, b, fa, fb, m, fm, t, width
    cdef int _it, side
    cdef bint bisect
    with nogil:
        for k in range(n):
            t = target[k]
            a = lo[k]
            b = hi[k]
            if not (a >= 0.0) or a == INFINITY:
                a = 0.0
            if not (b > a) or b == INFINITY:
                b = a * 2.0 + 1.0
            fa = crawl_interval(a, delta[k], gamma[k], nu[k], beta[k]) - t
            while fa > 0.0 and a > 0.0:
                b, fb = a, fa
                a = 0.0 if a < 1e-300 else 0.5 * a
                fa = crawl_interval(a, delta[k], gamma[k], nu[k], beta[k]) - t
            fb = crawl_interval(b, delta[k], gamma[k], nu[k], beta[k]) - t
            while fb < 0.0 and b < INFINITY:
                a, fa = b, fb
                b *= 4.0
                fb = crawl_interval(b, delta[k], gamma[k], nu[k], beta[k]) - t
            side = 0
            bisect = False
            width = b - a
            for _it in range(400):
                if fb == 0.0 or b - a <= 4e-16 * b:
                    break
                if fa == 0.0:
                    b = a
                    break
                m = b - fb * ((b - a) / (fb - fa))
                if bisect or not (m > a and m < b):
                    m = 0.5 * (a + b)
                    if not (m > a and m < b):
                        break
                fm = crawl_interval(m, delta[k], gamma[k], nu[k], beta[k]) - t
                if fm == 0.0:
                    b = m
                    break
                if fm < 0.0:
                    a, fa = m, fm
                    if side == -1:
                        fb *= 0.5
                    side = -1
                else:
                    b, fb = m, fm
                    if side == 1:
                        fa *= 0.5
                    side = 1
                bisect = b - a > 0.5 * width
                width = b - a
            iota[k] = b


# ---------------------------------------------------------------------------
# recall = 1 (alpha = 0): crawl at the K-th signal

cdef long best_signal_count(double lam, double mu, double delta, double nu) noexcept nogil:
    """K >= 1 maximising (gamma/K) (mu (1 - rho^K)/delta - lam), rho = nu/(delta + nu); 0 if never positive.

    With every change signalled the page is fresh with probability rho^k after
    k signals; crawling at the K-th signal has frequency gamma/K and keeps the
    page fresh a fraction gamma (1 - rho^K)/(K delta) of the time.  The objective
    is unimodal in K (its continuous derivative changes sign once).
    """
    cdef double a = mu / delta, lr, g, g_next
    cdef long K = 1
    if a <= lam:
        return 0
    lr = log(nu / (delta + nu)) if nu > 0.0 else -INFINITY
    g = a * -expm1(lr) - lam
    while K < 100000000:
        g_next = (a * -expm1(<double>(K + 1) * lr) - lam) / <double>(K + 1)
        if g_next <= g:
            break
        g = g_next
        K += 1
    return K if g > 0.0 else 0


def signal_count_kernel(double lam, const double[::1] mu, const double[::1] delta, const double[::1] nu,
                        long[::1] count, double[::1] freq):
    """Per page (recall = 1): count[k] = best K (0: never crawl), freq[k] = gamma/K; returns sum(freq)."""
    cdef Py_ssize_t k, n = delta.shape[0]
    cdef double total = 0.0
    cdef long K
    with nogil:
        for k in range(n):
            K = best_signal_count(lam, mu[k], delta[k], nu[k])
            count[k] = K
            freq[k] = (delta[k] + nu[k]) / <double>K if K > 0 else 0.0
            total += freq[k]
    return total
