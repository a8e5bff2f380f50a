# cython: language_level=3
"""Compiled Whittle index of ephemeral-content sources (Avrachenkov and Borkar (2018), SPEC section 5).

Layers as in ``_core.pyx``: ``cdef inline ... noexcept nogil`` functions for one source and one state, ``def``
batch kernels over typed memoryviews that release the GIL.  Nothing here validates: ``freshcore.whittle``
checks every parameter and derives, per source,

    ustar = Lambda xi / mu          (u* = u / (1 - alpha): the limit of the passive dynamics)
    mut   = mu T                    (alpha = e^{-mu T})
    om    = -expm1(-mu T)           (1 - alpha, accurate when mu T is small)
    invc  = 1 / C

so that u = ustar om.  The index of Theorem 1 in its ceil form, with y = ustar - x > 0,

    eta   = ceil(log(ustar / y) / mut)
    gamma = invc [ustar (1 - alpha^eta) - eta om y]
          = invc [eta ((1 - alpha) x - u) + u (1 - alpha^eta) / (1 - alpha)]

and gamma = invc x for x >= ustar (SPEC: the paper's log+ convention would give 0 there).  Both terms in the
bracket lie in [0, ustar] (eta om y <= y log(ustar/y) + om y <= ustar), so the absolute error is a few ulp of
ustar.  gamma is continuous in x (its two expressions agree at the grid points x_n = ustar (1 - alpha^n) where
eta steps), so a rounding of eta by one there costs nothing; log(ustar/y) is taken as -log1p(-x/ustar) while
x < ustar/2 (accurate for small x), as log(ustar/y) above.
"""

from libc.math cimport ceil, expm1, log, log1p


cdef inline double source_index(double x, double ustar, double mut, double om, double invc) noexcept nogil:
    """The Whittle index of one source in state x >= 0 (module docstring)."""
    cdef double y, r, eta
    if x >= ustar:
        return invc * x
    y = ustar - x
    r = x / ustar
    if r < 0.5:
        eta = ceil(-log1p(-r) / mut)
    else:
        eta = ceil(log(ustar / y) / mut)
    return invc * (-ustar * expm1(-mut * eta) - eta * om * y)


def index_kernel(const double[::1] x, const double[::1] ustar, const double[::1] mut, const double[::1] om,
                 const double[::1] invc, double[::1] out):
    """out[k n + i] = gamma_i(x[k n + i]) for the n = len(ustar) sources, x holding whole rows of n states."""
    cdef Py_ssize_t n = ustar.shape[0], rows, k, i, base
    if n == 0:
        return
    rows = x.shape[0] // n
    with nogil:
        for k in range(rows):
            base = k * n
            for i in range(n):
                out[base + i] = source_index(x[base + i], ustar[i], mut[i], om[i], invc[i])
