# Compiled special functions shared by freshcore's Cython modules.
# ``from freshcore._core cimport lambertwm1`` etc.; see the docstring of _core.pyx.

cdef double branch_distance(double z) noexcept nogil
cdef double lambertw_shifted(double q, double z, bint lower) noexcept nogil
cdef double lambertw0(double z) noexcept nogil
cdef double lambertwm1(double z) noexcept nogil
cdef double poisson_pmf(long j, double x) noexcept nogil
cdef double residual_exp(long i, double x) noexcept nogil
cdef double poisson_lower(long i, double x) noexcept nogil
