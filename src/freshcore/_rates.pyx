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

from libc.math cimport fabs, fmin, fmax, expm1, INFINITY
from freshcore._core cimport lambertw_shifted

cdef double INV_E_HI = 0.36787944117144233
# Sums: plain within blocks of BLOCK pages, Neumaier-compensated across blocks, so the
# relative error of a total of non-negative terms is below BLOCK * 2^-53 (3.6e-15).
cdef enum:
    BLOCK = 32


cdef inline double periodic_x(double c, double om) noexcept nogil:
    """x solving 1 - e^-x (1 + x) = c, i.e. x = -(1 + W-1(-(1 - c)/e)); om = 1 - c given accurately.

    x(0) = 0 and x -> inf as c -> 1 (only like -log(1 - c): this is why 1 - c must
    be accurate, or the rate Delta/x would jump from ~Delta/37 to 0 at c = 1).
    """
    if c <= 0.0:
        return 0.0
    if om <= 0.0:
        return INFINITY
    # q = 1 + e z = c exactly: the branch-point series sees the exact distance.
    return -lambertw_shifted(c, -om * INV_E_HI, True)


cdef inline void _nadd(double* s, double* comp, double v) noexcept nogil:
    """Neumaier compensated s += v."""
    cdef double t = s[0] + v
    if fabs(s[0]) >= fabs(v):
        comp[0] += (s[0] - t) + v
    else:
        comp[0] += (v - t) + s[0]
    s[0] = t


def poisson_eval(const double[::1] s, const double[::1] delta, const double[::1] lo,
                 const double[::1] hi, double u, double[::1] out=None):
    """(S(u), right slope dS/du) for the Poisson model; fills ``out`` with the rates if given."""
    cdef Py_ssize_t i, j, end, n = s.shape[0]
    cdef double v, inside, bt, bs, tot = 0.0, comp = 0.0, slope = 0.0, scomp = 0.0
    cdef bint fill = out is not None
    with nogil:
        j = 0
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
                if fill:
                    out[i] = v
            _nadd(&slope, &scomp, bs)
            _nadd(&tot, &comp, bt)
            j = end
    return tot + comp, slope + scomp


def periodic_eval(const double[::1] b, const double[::1] delta, const double[::1] lo,
                  const double[::1] hi, double u, double[::1] out=None):
    """(S(u), dS/du) for the periodic model; fills ``out`` with the rates if given.

    b_i = sqrt(Delta_i/mu_i): page i is crawled iff u > b_i.  c = (b/u)^2 and
    1 - c = (u - b)(u + b)/u^2 (accurate near the threshold).  For unclipped pages
    dxi/du = 2 c Delta (1 + x)/(u x^3 (1 - c)) (from R1'(x) = x e^-x and
    e^x = (1 + x)/(1 - c)).
    """
    cdef Py_ssize_t i, n = b.shape[0]
    cdef double c, om, x, v, d, t, tot = 0.0, comp = 0.0, der = 0.0, dcomp = 0.0
    cdef double inv_u = 1.0 / u
    cdef bint fill = out is not None
    with nogil:
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
            if fill:
                out[i] = v
    return tot + comp, der + dcomp


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
