# Compiled special functions shared by freshcore's Cython modules.
# ``from freshcore._core cimport lambertwm1`` etc.; see the docstring of _core.pyx.

from libc.math cimport INFINITY

cdef double branch_distance(double z) noexcept nogil
cdef double lambertw_shifted(double q, double z, bint lower) noexcept nogil
cdef double lambertw0(double z) noexcept nogil
cdef double lambertwm1(double z) noexcept nogil
cdef double poisson_pmf(long j, double x) noexcept nogil
cdef double stirlerr(double n) noexcept nogil
cdef double bd0(double j, double x) noexcept nogil
cdef double residual_exp(long i, double x) noexcept nogil
cdef double residual_exp_order(double i, double x) noexcept nogil
cdef double poisson_lower(long i, double x) noexcept nogil


cdef inline double horner(const double* coef, int last, double x) noexcept nogil:
    """sum_{k<=last} coef[k] x^k by Horner's rule (the polynomials of the special functions and of the crawl
    value's closed forms)."""
    cdef double h = coef[last]
    cdef int k = last - 1
    while k >= 0:
        h = h * x + coef[k]
        k -= 1
    return h


cdef inline double residual1_inverse(double c, double om) noexcept nogil:
    """x >= 0 with R^1(x) = 1 - e^-x (1 + x) = c, i.e. x = -(1 + W-1(-(1 - c)/e)); om = 1 - c given accurately.

    x(0) = 0 and x -> inf as c -> 1 (only like -log(1 - c): this is why 1 - c
    must be accurate, or the periodic rate Delta/x would jump from ~Delta/37 to
    0 at c = 1).  q = 1 + e z = c exactly: the branch-point series sees the
    exact distance.  Inline here for the periodic rates (freshcore._rates) and
    Greedy's park keys (freshcore._schedule).
    """
    if c <= 0.0:
        return 0.0
    if om <= 0.0:
        return INFINITY
    return -lambertw_shifted(c, -om * 0.36787944117144233, True)  # (1/e, as INV_E_HI of _core.pyx)
