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

The threshold of eq. (21), x_bar = ustar (1 - exp(1 + W_{-1}((q - 1)/e))) with q = C lambda / ustar, takes
1 + W_{-1} from ``lambertw_shifted`` (the lower branch behind ``freshcore.lambertw``) given q = 1 + e z exactly:
forming z first would lose q's digits near lambda = 0, the branch point, where x_bar ~ sqrt(2 C lambda ustar).
"""

from libc.math cimport ceil, exp, expm1, fabs, floor, lgamma, log, log1p, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc

from freshcore._core cimport lambertw_shifted


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


cdef double INV_E = 0.36787944117144233


cdef inline double lambert_threshold_one(double c_lam, double ustar) noexcept nogil:
    """x_bar of eq. (21) on the lower branch, 0 for C lambda <= 0 and C lambda for C lambda >= ustar."""
    cdef double q, x
    if c_lam <= 0.0:
        return 0.0
    if c_lam >= ustar:
        return c_lam
    q = c_lam / ustar
    x = -ustar * expm1(lambertw_shifted(q, (q - 1.0) * INV_E, True))
    return x if x > 0.0 else 0.0


def threshold_kernel(const double[::1] c_lam, const double[::1] ustar, double[::1] out):
    """out[k n + i] = x_bar_i at C_i lambda = c_lam[k n + i] for the n = len(ustar) sources."""
    cdef Py_ssize_t n = ustar.shape[0], rows, k, i, base
    if n == 0:
        return
    rows = c_lam.shape[0] // n
    with nogil:
        for k in range(rows):
            base = k * n
            for i in range(n):
                out[base + i] = lambert_threshold_one(c_lam[base + i], ustar[i])


# ---------------------------------------------------------------------------
# The stochastic model (eq. (23)): U(k) = sum over the period's Poisson arrivals of xi e^{-mu (kT - tau)}.
#
# One xoshiro256** stream per replica (state: 4 uint64 words, seeded by the caller from a numpy Generator);
# a stream is consumed period by period, source by source, whatever the policy does, so runs that share a
# seed share their arrivals (common random numbers) and blocks of any length give the same draws.


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t next_u64(uint64_t* s) noexcept nogil:
    """xoshiro256** (Blackman and Vigna): the next 64 bits of the stream s[0..3]."""
    cdef uint64_t result = _rotl(s[1] * 5, 7) * 9
    cdef uint64_t t = s[1] << 17
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = _rotl(s[3], 45)
    return result


cdef inline double next_double(uint64_t* s) noexcept nogil:
    """Uniform on [0, 1) with 53 random bits."""
    return <double>(next_u64(s) >> 11) * 1.1102230246251565e-16


cdef long poisson_small(uint64_t* s, double lam) noexcept nogil:
    """Poisson(lam) by multiplying uniforms (Knuth), for lam < 10."""
    cdef double limit = exp(-lam), p = 1.0
    cdef long k = -1
    while True:
        k += 1
        p *= next_double(s)
        if p <= limit:
            return k


cdef long poisson_ptrs(uint64_t* s, double lam) noexcept nogil:
    """Poisson(lam), lam >= 10: Hoermann's transformed rejection with squeeze (PTRS), as numpy's."""
    cdef double slam = sqrt(lam), loglam = log(lam)
    cdef double b = 0.931 + 2.53 * slam
    cdef double a = -0.059 + 0.02483 * b
    cdef double invalpha = 1.1239 + 1.1328 / (b - 3.4)
    cdef double vr = 0.9277 - 3.6224 / (b - 2.0)
    cdef double uu, v, us
    cdef long k
    while True:
        uu = next_double(s) - 0.5
        v = next_double(s)
        us = 0.5 - fabs(uu)
        k = <long>floor((2.0 * a / us + b) * uu + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0):
            return k


cdef inline long poisson(uint64_t* s, double lam) noexcept nogil:
    if lam <= 0.0:
        return 0
    if lam < 10.0:
        return poisson_small(s, lam)
    return poisson_ptrs(s, lam)


# e^{-c w} for a uniform w = (b >> 11) 2^-53 from 64 random bits b, c = mu T <= 8: w = j/256 + f with
# j = b >> 56 and 0 <= f < 1/256, so e^{-c w} = E[j] e^{-c f}, E[j] = e^{-c j/256} from a per-source table
# (``tables[slot[i]]``, made once by the caller: a source's draws never depend on how they are blocked) and
# e^{-t}, 0 <= t = c f < 1/32, by its Taylor polynomial of degree 7 (remainder t^8/8! < 2.2e-17): a few
# multiplications instead of a call of exp, to rounding.  Sources without a table (slot -1) call exp.
DEF TABLE_SIZE = 256


cdef inline double exp_minus_small(double t) noexcept nogil:
    """e^{-t} for 0 <= t < 1/32 (degree-7 Taylor polynomial, Horner)."""
    return 1.0 - t * (1.0 - t * (0.5 - t * (1.0 / 6.0 - t * (1.0 / 24.0 - t * (1.0 / 120.0 - t * (
        1.0 / 720.0 - t * (1.0 / 5040.0)))))))


def arrivals_kernel(uint64_t[:, ::1] streams, const double[::1] lam_t, const double[::1] mut,
                    const double[::1] xi, bint exponential, const double[:, ::1] tables, const long[::1] slot,
                    double[:, :, ::1] out, long[:, :, ::1] counts=None):
    """out[k, r, i] = U_i of period k in replica r: Poisson(lam_t[i]) arrivals at uniform epochs of the period,
    each worth xi[i] (or an exponential of mean xi[i]) times e^{-mut[i] w}, w ~ U[0, 1) its age in periods.

    ``streams[r]`` is replica r's xoshiro256** state, advanced in place; ``tables[slot[i]]`` holds
    e^{-mut[i] j/256}, j < 256, where slot[i] >= 0 (mut[i] <= 8); ``counts`` (optional, same shape as out)
    receives the number of arrivals."""
    cdef Py_ssize_t steps = out.shape[0], reps = out.shape[1], n = out.shape[2], k, r, i
    cdef long _j, m
    cdef double acc, c, e, f_scale = 1.1102230246251565e-16
    cdef uint64_t* s
    cdef uint64_t b
    cdef uint64_t low45 = (<uint64_t>1 << 45) - 1
    cdef bint keep = counts is not None
    cdef const double* tab
    with nogil:
        for k in range(steps):
            for r in range(reps):
                s = &streams[r, 0]
                for i in range(n):
                    m = poisson(s, lam_t[i])
                    c = mut[i]
                    acc = 0.0
                    if exponential:
                        for _j in range(m):
                            e = -log1p(-next_double(s))
                            acc += e * exp(-c * next_double(s))
                    elif slot[i] >= 0:
                        tab = &tables[slot[i], 0]
                        for _j in range(m):
                            b = next_u64(s)
                            acc += tab[b >> 56] * exp_minus_small(c * (<double>((b >> 11) & low45) * f_scale))
                    else:
                        for _j in range(m):
                            acc += exp(-c * next_double(s))
                    out[k, r, i] = xi[i] * acc
                    if keep:
                        counts[k, r, i] = m


# ---------------------------------------------------------------------------
# The stochastic index of Section VIII (eqs. (33)-(35)): two timescales on one threshold x_c.
#
# Fast: relative value iteration for the policy "crawl iff x >= x_c" on a grid of g points over [0, x_hi],
# phi the empirical law of the samples U_s, linear interpolation (linear extrapolation past x_hi):
#     R_n = mean_s V_n(U_s)                                  (the value right after a crawl, the paper's V_n(u))
#     (T V_n)(x) = C gamma_n + mean_s V_n(alpha x + U_s)    x < x_c      (34)
#     (T V_n)(x) = x + R_n                                   x >= x_c     (35)
#     V_{n+1} = (1 - tau) V_n + tau (T V_n) - [that at x = 0]   (tau = 1/2: the noise-free dynamics are periodic)
# Slow: stochastic approximation (33) with a fresh draw U~ from phi,
#     gamma_{n+1} = gamma_n - a_n (C gamma_n + V_n(alpha x_c + U~) - R_n - x_c),  a_n = a0 / (1 + n / 100)^0.7,
# the estimate being the average of gamma_n over the second half of the iterations (Polyak-Ruppert).


cdef inline double _interp(const double* v, Py_ssize_t g, double inv_h, double x) noexcept nogil:
    cdef double t = x * inv_h
    cdef Py_ssize_t j
    if t <= 0.0:
        j = 0
    elif t >= g - 1:
        j = g - 2
    else:
        j = <Py_ssize_t>t
    return v[j] + (t - j) * (v[j + 1] - v[j])


cdef double _stochastic_index_one(double x_c, double alpha, double cost, double x_hi, Py_ssize_t g,
                                  const double* samples, Py_ssize_t n_samples, long iterations, double gamma0,
                                  double a0, uint64_t* stream, double* v, double* tv) noexcept nogil:
    cdef double h = x_hi / (g - 1), inv_h = 1.0 / h, gamma = gamma0, r = 0.0, acc, x, shift, d, a, mean = 0.0
    cdef long half = iterations // 2
    cdef Py_ssize_t j, s, pick
    cdef long n
    for j in range(g):
        v[j] = j * h
    for n in range(iterations):
        r = 0.0
        for s in range(n_samples):
            r += _interp(v, g, inv_h, samples[s])
        r /= n_samples
        for j in range(g):
            x = j * h
            if x >= x_c:
                tv[j] = x + r
            else:
                acc = 0.0
                for s in range(n_samples):
                    acc += _interp(v, g, inv_h, alpha * x + samples[s])
                tv[j] = cost * gamma + acc / n_samples
        shift = 0.5 * (v[0] + tv[0])
        for j in range(g):
            v[j] = 0.5 * (v[j] + tv[j]) - shift
        r = 0.0
        for s in range(n_samples):
            r += _interp(v, g, inv_h, samples[s])
        r /= n_samples
        pick = <Py_ssize_t>(next_double(stream) * n_samples) if n_samples > 1 else 0
        d = cost * gamma + _interp(v, g, inv_h, alpha * x_c + samples[pick]) - r - x_c
        a = a0 / ((1.0 + n / 100.0) ** 0.7)
        gamma -= a * d
        if n >= half:
            mean += gamma
    return mean / (iterations - half)


def stochastic_index_kernel(const double[::1] x_c, const double[::1] alpha, const double[::1] cost,
                            const double[::1] x_hi, const double[:, ::1] samples, long grid, long iterations,
                            const double[::1] gamma0, uint64_t[:, ::1] streams, double[::1] out):
    """out[p] = the index of threshold x_c[p] by eqs. (33)-(35) (see above): pair p has its own alpha, cost,
    grid top x_hi, samples of U (a row of ``samples``), start gamma0 and xoshiro256** stream."""
    cdef Py_ssize_t p, n_pairs = x_c.shape[0], n_samples = samples.shape[1]
    cdef double* v
    cdef double* tv
    v = <double*>malloc(2 * grid * sizeof(double))
    if v == NULL:
        raise MemoryError()
    tv = v + grid
    try:
        with nogil:
            for p in range(n_pairs):
                out[p] = _stochastic_index_one(x_c[p], alpha[p], cost[p], x_hi[p], grid, &samples[p, 0], n_samples,
                                               iterations, gamma0[p], 0.5 / cost[p], &streams[p, 0], v, tv)
    finally:
        free(v)
