# cython: language_level=3
"""Compiled Whittle index of ephemeral-content sources (Avrachenkov and Borkar (2018), SPEC section 5).

Layers as in ``_core.pyx``: ``cdef inline ... noexcept nogil`` functions for one source and one state, ``def``
batch kernels over typed memoryviews that release the GIL.  Nothing here validates: ``freshcore.whittle``
checks every parameter and derives, per source,

    ustar = Lambda xi / mu          (u* = u / (1 - alpha): the limit of the passive dynamics)
    mut   = mu T                    (alpha = e^{-mu T}; inv_mut = 1 / (mu T))
    om    = -expm1(-mu T)           (1 - alpha, accurate when mu T is small)
    invc  = 1 / C

so that u = ustar om.  The index of Theorem 1 in its ceil form (computed in ``_whittle_index.h``, eight
pairs at a time with AVX-512F, with its own log and expm1 so that every path gives the same bits), with
y = ustar - x > 0,

    eta   = ceil(log(ustar / y) / mut)
    gamma = invc [ustar (1 - alpha^eta) - eta om y]
          = invc [eta ((1 - alpha) x - u) + u (1 - alpha^eta) / (1 - alpha)]

and gamma = invc x for x >= ustar (SPEC: the paper's log+ convention would give 0 there).  Both terms in the
bracket lie in [0, ustar] (eta om y <= y log(ustar/y) + om y <= ustar), so the absolute error is a few ulp of
ustar.  gamma is continuous in x (its two expressions agree at the grid points x_n = ustar (1 - alpha^n) where
eta steps), so a rounding of eta by one there costs nothing: log(ustar/y) needs only about an ulp.

The threshold of eq. (21), x_bar = ustar (1 - exp(1 + W_{-1}((q - 1)/e))) with q = C lambda / ustar, takes
1 + W_{-1} from ``lambertw_shifted`` (the lower branch behind ``freshcore.lambertw``) given q = 1 + e z exactly:
forming z first would lose q's digits near lambda = 0, the branch point, where x_bar ~ sqrt(2 C lambda ustar).
"""

from libc.math cimport ceil, exp, expm1, fabs, log
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc

from freshcore._core cimport lambertw_shifted, lambertwm1


cdef extern from "_whittle_index.h":
    double freshcore_whittle_index_one(double x, double ustar, double mut, double inv_mut, double om,
                                       double invc) noexcept nogil
    void freshcore_whittle_index(const double* x, const double* ustar, const double* mut, const double* inv_mut,
                                 const double* om, const double* invc, double* out, Py_ssize_t rows,
                                 Py_ssize_t n) noexcept nogil
    int freshcore_set_whittle_simd(int level) noexcept nogil

freshcore_set_whittle_simd(-1)  # the index kernel's path, chosen once at import (before any thread runs it)


cdef inline double source_index(double x, double ustar, double mut, double inv_mut, double om,
                                double invc) noexcept nogil:
    """The Whittle index of one source in state x >= 0 (module docstring; ``_whittle_index.h``)."""
    return freshcore_whittle_index_one(x, ustar, mut, inv_mut, om, invc)


def index_kernel(const double[::1] x, const double[::1] ustar, const double[::1] mut, const double[::1] inv_mut,
                 const double[::1] om, const double[::1] invc, double[::1] out):
    """out[k n + i] = gamma_i(x[k n + i]) for the n = len(ustar) sources, x holding whole rows of n states."""
    cdef Py_ssize_t n = ustar.shape[0]
    if n == 0 or x.shape[0] == 0:
        return
    with nogil:
        freshcore_whittle_index(&x[0], &ustar[0], &mut[0], &inv_mut[0], &om[0], &invc[0], &out[0],
                                x.shape[0] // n, n)


def index_simd(int level=-1):
    """The index kernel's path: 1 AVX-512F (eight pairs at a time), 0 scalar; ``level`` sets it (-1: the best
    the processor has; a level above it is lowered).  Returns the path in use.  Both give the same bits."""
    return freshcore_set_whittle_simd(level)


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
# Random numbers for the stochastic index below: xoshiro256** (Blackman and Vigna), four words a stream.
# (The stochastic model's arrivals have their own generator, ``_whittle_arrivals.h``.)


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


cdef extern from "_whittle_arrivals.h":
    void freshcore_arrivals(uint64_t* streams, const double* lam_t, const double* mut, const double* xi,
                            int exponential, const double* tables, const long* slot, double* out, long* counts,
                            Py_ssize_t steps, Py_ssize_t reps, Py_ssize_t n) noexcept nogil
    int freshcore_set_arrivals_simd(int level) noexcept nogil

freshcore_set_arrivals_simd(-1)  # the generator's path, chosen once at import


def arrivals_kernel(uint64_t[:, ::1] streams, const double[::1] lam_t, const double[::1] mut,
                    const double[::1] xi, bint exponential, const double[:, ::1] tables, const long[::1] slot,
                    double[:, :, ::1] out, long[:, :, ::1] counts=None):
    """out[k, r, i] = U_i of period k in replica r (``_whittle_arrivals.h``): Poisson(lam_t[i]) arrivals at
    uniform epochs of the period, each worth xi[i] (or an exponential of mean xi[i]) times e^{-mut[i] w}.

    ``streams[r]`` holds replica r's eight xoshiro256** states, word by word (32 words), advanced in place;
    ``tables[slot[i]]`` holds e^{-mut[i] j/256}, j < 256, where slot[i] >= 0 (mut[i] <= 8); ``counts``
    (optional, the shape of out) receives the numbers of arrivals."""
    cdef long* cnt = NULL
    if out.shape[0] == 0 or out.shape[1] == 0 or out.shape[2] == 0:
        return
    if counts is not None:
        cnt = &counts[0, 0, 0]
    with nogil:
        freshcore_arrivals(&streams[0, 0], &lam_t[0], &mut[0], &xi[0], exponential, &tables[0, 0], &slot[0],
                           &out[0, 0, 0], cnt, out.shape[0], out.shape[1], out.shape[2])


def arrivals_simd(int level=-1):
    """The generator's path: 1 AVX-512F (eight streams at a time), 0 scalar; ``level`` sets it (-1: the best the
    processor has).  Returns the path in use.  Both give the same bits."""
    return freshcore_set_arrivals_simd(level)


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


# ---------------------------------------------------------------------------
# Whittle top-M at scale (deterministic model).  A passive source's state is known in advance,
#     X(t) = u* + (x_ref - u*) alpha^{t - t_ref}     (eq. (2) solved; x_ref the state at period t_ref),
# and the index is increasing in the state, so below u* a source's index trajectory is increasing and the
# period at which it first reaches a level L is computable (inverting gamma piece by piece, then the
# geometric approach to u*).  The core keeps a level L with at least M sources at or above it: those whose
# index may reach L, shade below, are "awake" and evaluated every period; every other source sleeps in a
# calendar (a ring of RING buckets of intrusive lists) until the period when it may reach L, one period
# early.  A sleeping source's index is below L, and the M-th largest awake index is at least L, so the top M
# of the awake sources (ties to the lowest index) are the top M of all: the same decisions as evaluating
# every index.  When fewer than M awake indices reach L, everything is evaluated again and L reset to the
# (M + slack)-th largest index ("rebuild", O(n)); when the awake set grows past M + 4 slack, L is raised
# among the awake ones only.

DEF RING = 4096
cdef long long NEVER = 0x7FFFFFFFFFFFFFFF
cdef double LEVEL_SHADE = 1e-12


cdef inline bint _better(double ga, long long ia, double gb, long long ib) noexcept nogil:
    return ga > gb or (ga == gb and ia < ib)


cdef inline void _swap(double* g, long long* ids, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef double tg = g[a]
    cdef long long ti = ids[a]
    g[a] = g[b]
    ids[a] = ids[b]
    g[b] = tg
    ids[b] = ti


cdef void _select_top(double* g, long long* ids, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """Reorder (g, ids) so that its first k entries are the k best (largest g, then lowest id): quickselect."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j, mid
    cdef double pg
    cdef long long pi
    if k <= 0 or k >= n:
        return
    while hi > lo:
        mid = lo + (hi - lo) // 2
        # median of three to the middle
        if _better(g[mid], ids[mid], g[lo], ids[lo]):
            _swap(g, ids, mid, lo)
        if _better(g[hi], ids[hi], g[lo], ids[lo]):
            _swap(g, ids, hi, lo)
        if _better(g[hi], ids[hi], g[mid], ids[mid]):
            _swap(g, ids, hi, mid)
        pg, pi = g[mid], ids[mid]
        i, j = lo, hi
        while i <= j:
            while _better(g[i], ids[i], pg, pi):
                i += 1
            while _better(pg, pi, g[j], ids[j]):
                j -= 1
            if i <= j:
                _swap(g, ids, i, j)
                i += 1
                j -= 1
        if k - 1 <= j:
            hi = j
        elif k - 1 >= i:
            lo = i
        else:
            return


DEF MAX_PARTIALS = 64


cdef double exact_sum(double* x, Py_ssize_t n, double* p) noexcept nogil:
    """The correctly rounded sum of x[0..n) (Shewchuk's algorithm, as Python's ``math.fsum``), so independent of
    the order of x: a period's reward does not depend on the order in which the M sources were selected (a
    restored scheduler selects them in another order).  p: MAX_PARTIALS scratch doubles.  The plain sum if a
    partial overflows (or, which cannot happen with finite x, they outnumber the scratch)."""
    cdef Py_ssize_t i, j, k, npart = 0
    cdef double xv, y, t, hi = 0.0, lo = 0.0, yr
    for i in range(n):
        xv = x[i]
        k = 0
        for j in range(npart):
            y = p[j]
            if fabs(xv) < fabs(y):
                t = xv
                xv = y
                y = t
            hi = xv + y
            lo = y - (hi - xv)
            if lo != 0.0:
                p[k] = lo
                k += 1
            xv = hi
        if k >= MAX_PARTIALS or not fabs(xv) <= 1.7976931348623157e308:
            hi = 0.0
            for j in range(n):
                hi += x[j]
            return hi
        p[k] = xv
        npart = k + 1
    # the partials, non-overlapping and ascending, summed from the top with the half-way correction of fsum
    hi = 0.0
    if npart > 0:
        npart -= 1
        hi = p[npart]
        while npart > 0:
            xv = hi
            npart -= 1
            y = p[npart]
            hi = xv + y
            yr = hi - xv
            lo = y - yr
            if lo != 0.0:
                break
        if npart > 0 and ((lo < 0.0 and p[npart - 1] < 0.0) or (lo > 0.0 and p[npart - 1] > 0.0)):
            y = lo * 2.0
            xv = hi + y
            yr = xv - hi
            if y == yr:
                hi = xv
    return hi


cdef struct Source:
    # one source's record, hot fields first (96 bytes): a source's visit touches two cache lines, not ten arrays
    double x_ref, ustar, mut, invc
    long long t_ref, wake
    double om, g, u, inv_mut
    long long reset_wait, reset_stamp


cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef class TopMCore:
    """State of the calendar-driven Whittle top-M (see above); ``freshcore.whittle_policies.WhittleScheduler``
    validates and wraps it."""

    cdef Source* src
    cdef double[::1] sel_g
    cdef long long[::1] awake, spare, sel_i
    cdef long long** bucket
    cdef Py_ssize_t* bsize
    cdef Py_ssize_t* bcap
    cdef bint oom
    cdef long long stamp
    cdef unsigned char[::1] picked
    cdef Py_ssize_t n, m, slack
    cdef readonly Py_ssize_t n_awake
    cdef long long t
    cdef double level, wake_level
    cdef bint fresh
    cdef public long long rebuilds, relevels
    cdef double partials[MAX_PARTIALS]

    def __init__(self, const double[::1] ustar, const double[::1] mut, const double[::1] inv_mut,
                 const double[::1] om, const double[::1] invc, const double[::1] u, const double[::1] x0,
                 Py_ssize_t m, Py_ssize_t slack):
        import numpy as np
        cdef Py_ssize_t i
        self.n, self.m, self.slack = ustar.shape[0], m, slack
        self.src = <Source*>malloc((self.n if self.n > 0 else 1) * sizeof(Source))
        if self.src == NULL:
            raise MemoryError()
        for i in range(self.n):
            self.src[i].ustar, self.src[i].mut, self.src[i].om = ustar[i], mut[i], om[i]
            self.src[i].inv_mut = inv_mut[i]
            self.src[i].invc, self.src[i].u, self.src[i].x_ref = invc[i], u[i], x0[i]
            self.src[i].g, self.src[i].t_ref, self.src[i].wake = 0.0, 0, 0
            self.src[i].reset_wait, self.src[i].reset_stamp = 0, -1
        self.sel_g = np.empty(self.n)
        self.sel_i = np.empty(self.n, dtype=np.int64)
        self.bucket = <long long**>calloc(RING, sizeof(long long*))
        self.bsize = <Py_ssize_t*>calloc(RING, sizeof(Py_ssize_t))
        self.bcap = <Py_ssize_t*>calloc(RING, sizeof(Py_ssize_t))
        if self.bucket == NULL or self.bsize == NULL or self.bcap == NULL:
            raise MemoryError()
        self.oom = False
        self.awake = np.empty(self.n, dtype=np.int64)
        self.spare = np.empty(self.n, dtype=np.int64)
        self.picked = np.zeros(self.n, dtype=np.uint8)
        self.stamp = 0
        self.t, self.n_awake, self.fresh = 0, 0, True
        self.rebuilds = self.relevels = 0

    def __dealloc__(self):
        cdef Py_ssize_t b
        free(self.src)
        if self.bucket != NULL:
            for b in range(RING):
                free(self.bucket[b])
        free(self.bucket)
        free(self.bsize)
        free(self.bcap)

    @property
    def time(self):
        return self.t

    cdef inline double state(self, Py_ssize_t i, long long t) noexcept nogil:
        cdef long long s = t - self.src[i].t_ref
        if s == 0:
            return self.src[i].x_ref
        return self.src[i].ustar + (self.src[i].x_ref - self.src[i].ustar) * exp(-self.src[i].mut * s)

    cdef inline double index(self, Py_ssize_t i, long long t) noexcept nogil:
        return source_index(self.state(i, t), self.src[i].ustar, self.src[i].mut, self.src[i].inv_mut,
                            self.src[i].om, self.src[i].invc)

    cdef inline double grid_index(self, Py_ssize_t i, double n) noexcept nogil:
        """gamma_i(x_n), x_n = u* (1 - alpha^n) (the Remark's form, exact there)."""
        cdef double us = self.src[i].ustar, c = self.src[i].mut * n
        return (-us * expm1(-c) - n * self.src[i].om * us * exp(-c)) * self.src[i].invc

    cdef long long wake_time(self, Py_ssize_t i, long long t0) noexcept nogil:
        """The first period > t0 at which source i's index may reach the wake level, or NEVER; its index at t0
        is below that level.  The level is shaded by 1e-13 u*/C more (the index's own rounding is a few ulp of
        u*/C) and a crossing within 1e-7 of a period counts as the period before."""
        cdef double us = self.src[i].ustar, xr = self.src[i].x_ref, r, hi, x_l, gap, s
        cdef double lv = self.wake_level - 1e-13 * us * self.src[i].invc
        cdef long long w
        if xr >= us or lv >= us * self.src[i].invc:
            return NEVER
        # the piece: the least n >= 1 with gamma(x_n) >= lv.  gamma(x_n) C / u* = 1 - y (1 + om n), y = alpha^n,
        # so with r = om / (mu T) and v = log y, e^v (1 - r v) = 1 - z (z = C lv / u*): v = W_{-1}(-(1 - z)
        # e^{-1/r} / r) + 1/r.  That n, rounded, is then corrected by evaluating gamma(x_n) itself.
        r = self.src[i].om / self.src[i].mut
        hi = -(lambertwm1(-(1.0 - lv / (us * self.src[i].invc)) * exp(-1.0 / r) / r) + 1.0 / r) / self.src[i].mut
        if not hi < 4.5e15:
            return NEVER
        hi = ceil(hi) if hi > 1.0 else 1.0
        while self.grid_index(i, hi) < lv:
            hi += 1.0
        while hi > 1.0 and self.grid_index(i, hi - 1.0) >= lv:
            hi -= 1.0
        # on the piece eta = hi: gamma(x) = [u* (1 - alpha^hi) - hi om (u* - x)] / C
        gap = (-us * expm1(-self.src[i].mut * hi) - lv / self.src[i].invc) / (hi * self.src[i].om)
        if gap <= 0.0:
            return NEVER
        x_l = us - gap
        if x_l <= xr:
            return t0 + 1
        s = log((us - xr) / gap) / self.src[i].mut
        w = self.src[i].t_ref + <long long>ceil(s - 1e-7 * (1.0 + s))
        return w if w > t0 + 1 else t0 + 1

    cdef void place(self, Py_ssize_t i, long long t0, double g0, bint reset) noexcept nogil:
        """Source i, of index g0 at period t0: awake (appended to ``spare``) or asleep until its wake time.
        After a crawl (``reset``: its state is u at t0) the wait is the same every time until the level
        changes: it is kept."""
        cdef long long w
        if g0 >= self.wake_level:
            self.spare[self.n_awake] = i
            self.n_awake += 1
            return
        if reset and self.src[i].reset_stamp == self.stamp:
            w = self.src[i].reset_wait
            if w != NEVER:
                w += t0
        else:
            w = self.wake_time(i, t0)
            if reset:
                self.src[i].reset_stamp = self.stamp
                self.src[i].reset_wait = NEVER if w == NEVER else w - t0
        self.src[i].wake = w
        if w == NEVER:
            return
        self.push(w % RING, i)

    cdef void push(self, long long b, long long i) noexcept nogil:
        """Source i into calendar bucket b (an array that doubles when full; ``oom`` set if it cannot)."""
        cdef long long* grown
        cdef Py_ssize_t cap
        if self.bsize[b] == self.bcap[b]:
            cap = 2 * self.bcap[b] if self.bcap[b] > 0 else 64
            grown = <long long*>realloc(self.bucket[b], cap * sizeof(long long))
            if grown == NULL:
                self.oom = True
                return
            self.bucket[b], self.bcap[b] = grown, cap
        self.bucket[b][self.bsize[b]] = i
        self.bsize[b] += 1

    cdef void set_level(self, double level) noexcept nogil:
        self.stamp += 1
        self.level = level
        self.wake_level = level - LEVEL_SHADE * fabs(level) - 1e-300

    cdef void rebuild(self, long long t) noexcept nogil:
        """Every index at t; the level at the (M + slack)-th largest; everything placed again."""
        cdef Py_ssize_t i, k = self.m + self.slack
        cdef long long[::1] tmp
        for i in range(self.n):
            self.src[i].g = self.index(i, t)
            self.sel_g[i] = self.src[i].g
            self.sel_i[i] = i
        if k > self.n:
            k = self.n
        _select_top(&self.sel_g[0], &self.sel_i[0], self.n, k)
        self.set_level(self.sel_g[0])
        for i in range(1, k):
            if self.sel_g[i] < self.level:
                self.set_level(self.sel_g[i])
        for i in range(RING):
            self.bsize[i] = 0
        self.n_awake = 0
        for i in range(self.n):
            self.place(i, t, self.src[i].g, False)
        tmp = self.awake
        self.awake = self.spare
        self.spare = tmp
        self.rebuilds += 1

    cdef void drain(self, long long t) noexcept nogil:
        """Wake the sources due at t (the awake list grows); the others of the bucket stay."""
        cdef long long b = t % RING, i
        cdef long long* arr = self.bucket[b]
        cdef Py_ssize_t k, nb = self.bsize[b], keep = 0
        for k in range(nb):
            if k + 8 < nb:
                __builtin_prefetch(&self.src[arr[k + 8]])
            i = arr[k]
            if self.src[i].wake <= t:
                self.awake[self.n_awake] = i
                self.n_awake += 1
            else:
                arr[keep] = i
                keep += 1
        self.bsize[b] = keep

    cdef double step(self, long long* chosen) noexcept nogil:
        """One period: the M crawled sources into chosen[0..M), their summed states returned."""
        cdef long long t = self.t, i
        cdef Py_ssize_t k, na, count, m = self.m
        cdef double reward = 0.0, lv
        cdef long long[::1] tmp
        if self.fresh:
            self.rebuild(t)
            self.fresh = False
        else:
            self.drain(t)
        while True:
            na = self.n_awake
            count = 0
            for k in range(na):
                if k + 8 < na:
                    __builtin_prefetch(&self.src[self.awake[k + 8]])
                i = self.awake[k]
                self.src[i].g = self.index(i, t)
                if self.src[i].g >= self.level:
                    count += 1
            if count >= m:
                break
            self.rebuild(t)
        na = self.n_awake
        if na > m + 4 * self.slack:
            # raise the level among the awake sources only (the sleeping ones are below the old level)
            for k in range(na):
                self.sel_g[k] = self.src[self.awake[k]].g
                self.sel_i[k] = self.awake[k]
            _select_top(&self.sel_g[0], &self.sel_i[0], na, m + self.slack)
            lv = self.sel_g[0]
            for k in range(1, m + self.slack):
                if self.sel_g[k] < lv:
                    lv = self.sel_g[k]
            if lv > self.level:
                self.set_level(lv)
                self.relevels += 1
        for k in range(na):
            self.sel_g[k] = self.src[self.awake[k]].g
            self.sel_i[k] = self.awake[k]
        _select_top(&self.sel_g[0], &self.sel_i[0], na, m)
        for k in range(m):
            i = self.sel_i[k]
            chosen[k] = i
            self.sel_g[k] = self.state(i, t)
            self.picked[i] = 1
        reward = exact_sum(&self.sel_g[0], m, self.partials)
        self.n_awake = 0
        for k in range(na):
            i = self.awake[k]
            if self.picked[i]:
                self.picked[i] = 0
                self.src[i].x_ref = self.src[i].u
                self.src[i].t_ref = t + 1
                self.place(i, t + 1, self.index(i, t + 1), True)
            elif self.src[i].g >= self.level:
                self.spare[self.n_awake] = i
                self.n_awake += 1
            else:
                self.place(i, t + 1, self.index(i, t + 1), False)
        tmp = self.awake
        self.awake = self.spare
        self.spare = tmp
        self.t = t + 1
        return reward

    def run(self, long long periods, long long[:, ::1] chosen, double[::1] rewards):
        """``periods`` periods: chosen[k] the M sources crawled at the k-th, rewards[k] their summed states."""
        cdef long long k
        with nogil:
            for k in range(periods):
                rewards[k] = self.step(&chosen[k, 0])
                if self.oom:
                    break
        if self.oom:
            raise MemoryError("the Whittle scheduler's calendar could not grow")

    def record(self, double[::1] x_ref, long long[::1] t_ref):
        """x_ref[i], t_ref[i]: source i's state at period t_ref[i] (0, or the period after its last crawl), from
        which its state follows in closed form; all the core keeps per source beyond its parameters."""
        cdef Py_ssize_t i
        for i in range(self.n):
            x_ref[i], t_ref[i] = self.src[i].x_ref, self.src[i].t_ref

    def restore(self, const double[::1] x_ref, const long long[::1] t_ref, long long t):
        """Put back a :meth:`record` and the time ``t`` (checked by the caller: ``0 <= t_ref <= t``).  The
        calendar, the level and the awake list are derived from them: rebuilt at the next period, as at the start
        (they cache the indices, which the record and the time determine)."""
        cdef Py_ssize_t i
        for i in range(self.n):
            self.src[i].x_ref, self.src[i].t_ref = x_ref[i], t_ref[i]
            self.src[i].g, self.src[i].wake = 0.0, 0
            self.src[i].reset_wait, self.src[i].reset_stamp = 0, -1
            self.picked[i] = 0
        for i in range(RING):
            self.bsize[i] = 0
        self.t, self.n_awake, self.fresh = t, 0, True

    def __reduce__(self):
        raise TypeError("a TopMCore cannot be pickled: pickle the WhittleScheduler that holds it (its to_dict() "
                        "and from_dict() save and restore it)")

    def states(self, double[::1] out):
        """out[i] = the state of source i now."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(self.n):
                out[i] = self.state(i, self.t)
