# cython: language_level=3
"""Compiled kernels of the optimal-rate solvers (``freshcore.rates``).

No validation here (see the design note in ``_core.pyx``): ``freshcore.rates``
passes C-contiguous float64 arrays of equal length over the *active* pages
only (weight > 0 and change rate > 0), with 0 <= lo <= hi.

Both solvers work in u = L^(-1/2), L the budget multiplier, where the total
rate S(u) = sum_i clip(r_i(u), lo_i, hi_i) is nondecreasing:

* Poisson (003 eq. 10): r_i(u) = s_i u - Delta_i with s_i = sqrt(w_i Delta_i),
  so S is piecewise linear with breakpoints (lo_i + Delta_i)/s_i and
  (hi_i + Delta_i)/s_i;
* periodic (001 eq. 5): r_i(u) = Delta_i / x_i with x_i = -1 - W-1(-(1-c_i)/e),
  c_i = (b_i / u)^2, b_i = sqrt(Delta_i/mu_i) (so c_i = L Delta_i/mu_i), and
  r_i = 0 when u <= b_i.

Sums are compensated (Neumaier) across blocks of 32 pages, so that the budget
test S(u) <= B is decided on a total correct to 3.6e-15 relative whatever the
page count.
"""

from libc.math cimport fabs, fmin, fmax, expm1, log, exp, INFINITY
from freshcore._core cimport residual1_inverse as periodic_x

# Sums: plain within blocks of BLOCK pages, Neumaier-compensated across blocks, so the
# relative error of a total of non-negative terms is below BLOCK * 2^-53 (3.6e-15).
cdef enum:
    BLOCK = 32


cdef inline void _nadd(double* s, double* comp, double v) noexcept nogil:
    """Neumaier compensated s += v."""
    cdef double t = s[0] + v
    if fabs(s[0]) >= fabs(v):
        comp[0] += (s[0] - t) + v
    else:
        comp[0] += (v - t) + s[0]
    s[0] = t


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
    S[0] = tot + comp
    slope[0] = sl + scomp


cdef void _periodic_pass(Py_ssize_t n, const double* b, const double* delta, const double* lo,
                         const double* hi, double u, double* out, double* S, double* D) noexcept nogil:
    """S(u) and dS/du; writes the rates to ``out`` unless it is NULL.

    b_i = sqrt(Delta_i/mu_i): page i is crawled iff u > b_i.  c = (b/u)^2 and
    1 - c = (u - b)(u + b)/u^2 (accurate near the threshold).  For unclipped pages
    dxi/du = 2 c Delta (1 + x)/(u x^3 (1 - c)) (from R1'(x) = x e^-x and
    e^x = (1 + x)/(1 - c)).
    """
    cdef Py_ssize_t i
    cdef double c, om, x, v, d, t, tot = 0.0, comp = 0.0, der = 0.0, dcomp = 0.0
    cdef double inv_u = 1.0 / u
    for i in range(n):
        if u <= b[i]:
            v = lo[i]
        else:
            t = b[i] * inv_u
            c = t * t
            om = (u - b[i]) * inv_u * ((u + b[i]) * inv_u)
            x = periodic_x(c, om)
            v = delta[i] / x
            if v <= lo[i]:
                v = lo[i]
            elif v >= hi[i]:
                v = hi[i]
            elif x > 0.0:
                d = 2.0 * c * v * (1.0 + x) / (u * x * x * om)
                _nadd(&der, &dcomp, d)
        _nadd(&tot, &comp, v)
        if out != NULL:
            out[i] = v
    S[0] = tot + comp
    D[0] = der + dcomp


cdef inline double _csum(Py_ssize_t n, const double* x) noexcept nogil:
    cdef Py_ssize_t i
    cdef double tot = 0.0, comp = 0.0
    for i in range(n):
        _nadd(&tot, &comp, x[i])
    return tot + comp


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
    cdef double S = 0.0, D = 0.0
    cdef double* po = NULL
    if n:
        if out is not None:
            po = &out[0]
        with nogil:
            _periodic_pass(n, &b[0], &delta[0], &lo[0], &hi[0], u,
                           po, &S, &D)
    return S, D


cdef inline Py_ssize_t _upper_bound(const double* keys, Py_ssize_t K, double x) noexcept nogil:
    """Number of keys <= x in the sorted keys (numpy's searchsorted side='right')."""
    cdef Py_ssize_t lo = 0, hi = K, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def solve_poisson(const double[::1] s, const double[::1] delta, const double[::1] lo,
                  const double[::1] hi, const double[::1] keys, double budget, double[::1] out):
    """u = L^-1/2 of the Poisson optimum (rates written to ``out``), all in compiled code.

    ``keys``: the sorted breakpoints (lo_i + Delta_i)/s_i and the finite (hi_i + Delta_i)/s_i;
    requires sum(lo) < budget < sum(hi).  S is linear on each segment [keys[m], keys[m + 1]]
    (keys[K] = inf), m = 0..K-1, and S(keys[0]) = sum(lo).  Each pass evaluates S and its
    slope at the middle of one segment (never at a breakpoint, where rounding could
    misclassify a page); the linear extension either meets the budget inside that segment
    (the closed form: done) or names the segment to try next (Newton on the piecewise-linear
    S), safeguarded by bisection on the segment index (O(log N) passes at worst).  A final
    total over the budget (rounding) steps u down until it is not.
    """
    cdef Py_ssize_t n = s.shape[0], K = keys.shape[0], m, seg_lo = 0, seg_hi = K - 1, nh = 0
    cdef Py_ssize_t hist[4]
    cdef double u, u_m, S_m, slope_m, right, total, step, sum_dl, sum_s
    cdef const double* ps = &s[0]
    cdef const double* pd = &delta[0]
    cdef const double* pl = &lo[0]
    cdef const double* ph = &hi[0]
    cdef const double* pk = &keys[0]
    cdef double* po = &out[0]
    with nogil:
        # start where S would reach the budget if every page were unclipped (for lo = 0 and
        # hi = inf this is right of the root, where Newton on the convex S converges monotonically)
        sum_dl = _csum(n, pd)
        sum_s = _csum(n, ps)
        m = _upper_bound(pk, K, (budget + sum_dl) / sum_s) - 1
        while True:
            m = min(max(m, seg_lo), seg_hi)
            u_m = 0.5 * (pk[m] + pk[m + 1]) if m + 1 < K else 2.0 * pk[m] + 1.0
            _poisson_pass(n, ps, pd, pl, ph, u_m, NULL, &S_m, &slope_m)
            u = u_m + (budget - S_m) / slope_m if slope_m > 0.0 else u_m
            right = pk[m + 1] if m + 1 < K else INFINITY
            if (slope_m > 0.0 and pk[m] <= u <= right) or S_m == budget or seg_lo == seg_hi:
                u = fmin(fmax(u, pk[m]), right)
                break
            if S_m < budget:
                seg_lo = m + 1
            else:
                seg_hi = m - 1
            if seg_lo > seg_hi:  # rounding at a breakpoint: the root is at keys[m] or keys[m + 1]
                u = pk[m] if S_m > budget else right
                break
            m = _upper_bound(pk, K, u) - 1 if slope_m > 0.0 else (seg_lo + seg_hi) // 2
            hist[nh % 4] = seg_hi - seg_lo
            nh += 1
            if nh >= 4 and hist[(nh - 1) % 4] > hist[(nh - 4) % 4] // 2:
                m = (seg_lo + seg_hi) // 2
                nh = 0
        _poisson_pass(n, ps, pd, pl, ph, u, po, &total, &slope_m)
        step = 2.0 ** -52
        while total > budget and u > 0.0:
            u = u * (1.0 - step)
            step *= 2.0
            _poisson_pass(n, ps, pd, pl, ph, u, po, &total, &slope_m)
    return u


def solve_periodic(const double[::1] b, const double[::1] delta, const double[::1] lo,
                   const double[::1] hi, double budget, double u, double gap,
                   double[:, ::1] bufs, double[::1] out):
    """Periodic optimum from the start ``u`` (rates written to ``out``), all in compiled code.

    Requires sum(lo) < budget (1 - gap) and budget < sum(hi).  Safeguarded Newton on log S
    against log u (S grows like a power of u; plain Newton in u overshoots badly from a
    small start): first with the analytic derivative, then with the secant slope of the
    last two points (pages entering at u = b_i add ~Delta_i/37 almost at once, which the
    local derivative misses), bisection when the bracket does not halve in 3 steps.
    Stops when S is in [budget (1 - gap), budget], or when the bracketing solutions satisfy
    (L_a - L_b)(S_b - S_a) <= 1e-15 budget (or u_a, u_b are adjacent doubles) and then
    time-shares between them.  ``bufs`` is scratch of shape (3, n).  Returns (u_a, u_b).
    """
    cdef Py_ssize_t n = b.shape[0], it, nh = 0, ia = 0, ib = 1, iw = 2, tmp, i, kk
    cdef double hist[4]
    cdef double S, D, u_a = 0.0, S_a, u_b = INFINITY, S_b = INFINITY, u_p = 0.0, S_p = 0.0
    cdef double k, k_sec, u_n, theta, total, accept = budget * (1.0 - gap)
    cdef double target = budget * (1.0 - 0.5 * gap)
    cdef const double* pb = &b[0]
    cdef const double* pd = &delta[0]
    cdef const double* pl = &lo[0]
    cdef const double* ph = &hi[0]
    cdef bint done = False
    with nogil:
        S_a = _csum(n, pl)
        for i in range(n):
            bufs[ia, i] = pl[i]
        for it in range(300):
            _periodic_pass(n, pb, pd, pl, ph, u, &bufs[iw, 0], &S, &D)
            if S <= budget:
                u_a = u
                S_a = S
                tmp = ia; ia = iw; iw = tmp
                if S >= accept:
                    u_b = u
                    done = True
                    break
            else:
                u_b = u
                S_b = S
                tmp = ib; ib = iw; iw = tmp
            if u_a > 0.0 and u_b < INFINITY and (
                    (1.0 - (u_a / u_b) * (u_a / u_b)) * (S_b - S_a) <= 1e-15 * budget
                    or u_b - u_a <= 4.5e-16 * u_b):
                break  # (or the bracket is down to adjacent doubles: nothing finer to find)
            k = u * D / S if (D > 0.0 and S > 0.0) else -1.0
            if u_p > 0.0 and S_p > 0.0 and S > 0.0 and u != u_p and S != S_p:
                k_sec = log(S / S_p) / log(u / u_p)
                if k_sec > 0.0:
                    k = k_sec
            u_p = u
            S_p = S
            u_n = u * exp(fmin(fmax(log(target / S) / k, -30.0), 30.0)) if k > 0.0 else -1.0
            hist[nh % 4] = u_b - u_a
            nh += 1
            if (not (u_a < u_n < u_b) or (nh >= 4 and hist[(nh - 1) % 4] > 0.5 * hist[(nh - 4) % 4])
                    or fabs(u_n - u) <= 9e-16 * u):
                u_n = 2.0 * fmax(u, u_a) if u_b == INFINITY else 0.5 * (u_a + u_b)
                nh = 0
            u = u_n
        if done or u_b == INFINITY:
            for i in range(n):
                out[i] = bufs[ia, i]
            if not done:
                u_b = u_a
        else:
            # Time-share between the two neighbouring KKT solutions so that the budget is
            # spent: pages whose threshold b_i lies in (u_a, u_b) jump from 0 to ~Delta_i/37
            # there in double precision, so S(u) = budget may have no floating-point root.
            theta = fmin(fmax((budget - S_a) / (S_b - S_a), 0.0), 1.0)
            for kk in range(9):
                if kk == 8:
                    theta = 0.0
                for i in range(n):
                    out[i] = bufs[ia, i] + theta * (bufs[ib, i] - bufs[ia, i])
                total = _csum(n, &out[0])
                if total <= budget:
                    break
                # rounding put the mix over the budget: take back the excess and a few ulps more
                theta = fmax(0.0, theta - (total - budget + (2.0 ** kk) * 2.3e-16 * budget) / (S_b - S_a))
            if theta == 0.0:
                u_b = u_a
    return u_a, u_b


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
    if dl == 0.0:
        return 1.0
    if r == INFINITY:
        return 1.0
    return r / (r + dl)


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
    return tot + comp


def periodic_x_kernel(const double[::1] c, double[::1] out):
    """out[i] = -(1 + W-1(-(1 - c[i])/e)) (exposed for tests)."""
    cdef Py_ssize_t i, n = c.shape[0]
    with nogil:
        for i in range(n):
            out[i] = periodic_x(c[i], 1.0 - c[i])


def csum(const double[::1] x):
    """Compensated sum_i x_i."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef double tot = 0.0, comp = 0.0
    with nogil:
        for i in range(n):
            _nadd(&tot, &comp, x[i])
    return tot + comp
