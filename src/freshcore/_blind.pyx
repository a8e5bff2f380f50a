# cython: language_level=3
"""Compiled counting kernels of the blind-sampling estimators M1-M6 and G-M4 of Li, Cline and Loguinov (2017)
(the compiled twin of ``freshcore.blind``).

Design (see ``_core.pyx`` and STYLE.md): every estimator is a histogram built in one pass over the crawler's
log; the kernels here fill caller-allocated ``int64`` counts with the GIL released and ``freshcore.blind``
turns them into distribution functions.  The kernels never validate.  The ``first_*`` scans are the
validation's compiled helpers: each returns the first bad index (or -1) of an array that the Python layer
then names in its error; they test whole blocks with a vectorisable reduction and look for the index only
in a block that failed, so checking 10^7 flags costs a fraction of the count itself.

Conventions shared by the kernels
---------------------------------
``times[0..n-1]`` are the sample times (strictly increasing), ``changed[j]`` (n - 1 flags) is Q_{j,j+1}:
1 iff an update fell in (s_j, s_{j+1}].  Q_ij = OR of ``changed[i..j-1]``.

Sorted query points ``x[0..k-1]``: ``_rank(x, k, a)`` is #{x_m < a}, so an age ``a`` counted in bin
``_rank`` is <= x_m exactly for m >= that bin (cumulative sums of the bins give the CDF at every x_m).

M6 bins: a distance d = s_j - s_i falls in bin n = ceil(d * (1/h)) (at least 1), d * (1/h) computed in double
precision (a multiplication: the bin differs from ceil(d / h) only for distances within an ulp of a bin
edge); both M6 forms compute it the same way, so they count bit-identically.  Both count, per bin, the pairs
whose page changed and all pairs (those inside one change-free run, Q_ij = 0, are counted apart and taken
from the changed ones).  No flag is read in the pair loops: the partners j of i split at ``nxt``, the first
sample after i's next detected change.

The hot loops (M1 and M2 with few points, both M6 forms, the times scan) are C in ``_blind_simd.h``, each with a
portable scalar path and AVX2 and AVX-512 paths chosen once at import (``SIMD_LEVEL``); every path counts the
same.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking, 2017 (an earlier version in IEEE INFOCOM 2015).
"""
from libc.math cimport INFINITY, expm1, log, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport exp, log1p  # (the renewal kernels)

from freshcore._core cimport residual1_inverse

cdef extern from "_blind_simd.h" nogil:
    int fc_set_simd_level(int level) noexcept
    # the first i with times[i] not finite or not above times[i - 1], or -1; then *gap = the shortest interval
    Py_ssize_t fc_scan_times(const double* t, Py_ssize_t n, double* gap) noexcept
    # counts[q] += #{j < n : ages[j] <= x[q] (and keep[j] = 1)}, q < k; the first j with ages[j] not an age, or -1
    Py_ssize_t fc_le_counts(const double* ages, const uint8_t* keep, Py_ssize_t n, const double* x, Py_ssize_t k,
                            int64_t* counts) noexcept
    # M6's counts: counts[2 b] the changed pairs, counts[2 b + 1] all pairs, in the bins b (pairs: -1 if out of
    # memory)
    int fc_m6_pairs(const double* t, const uint8_t* changed, Py_ssize_t n, double inv_h, int32_t nbins,
                    int64_t* counts) noexcept
    void fc_m6_fast(const double* t, const uint8_t* changed, Py_ssize_t n, double inv_h, int32_t nbins,
                    int64_t* counts) noexcept

cdef enum:
    BLOCK = 4096  # entries tested together by the first_* scans


# ---------------------------------------------------------------------------
# layer 1: one sample, one pair
# ---------------------------------------------------------------------------

cdef inline Py_ssize_t _rank(const double* x, Py_ssize_t k, double a) noexcept nogil:
    """#{m : x[m] < a} for sorted x (k >= 1), by a branch-free binary search."""
    cdef const double* base = x
    cdef Py_ssize_t n = k, half
    while n > 1:
        half = n >> 1
        base = base + half if base[half] < a else base
        n -= half
    return (base - x) + (1 if base[0] < a else 0)


# ---------------------------------------------------------------------------
# validation helpers: the first bad index, or -1
# ---------------------------------------------------------------------------

cdef inline bint _not_age(double a) noexcept nogil:
    return not (a >= 0.0 and a <= 1.7976931348623157e308)  # NaN, negative or infinite


cdef Py_ssize_t _first_not_binary(const uint8_t* flags, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi, i
    cdef uint8_t acc
    while lo < n:
        hi = lo + BLOCK if lo + BLOCK < n else n
        acc = 0
        for i in range(lo, hi):
            acc |= flags[i]
        if acc > 1:
            for i in range(lo, hi):
                if flags[i] > 1:
                    return i
        lo = hi
    return -1


cdef Py_ssize_t _first_not_age(const double* ages, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi, i, bad
    while lo < n:
        hi = lo + BLOCK if lo + BLOCK < n else n
        bad = 0
        for i in range(lo, hi):
            bad += _not_age(ages[i])
        if bad:
            for i in range(lo, hi):
                if _not_age(ages[i]):
                    return i
        lo = hi
    return -1


cdef double _lattice_step(const double* t, Py_ssize_t n, double rtol) noexcept nogil:
    cdef Py_ssize_t i
    cdef double c = 0.0, r, k
    fc_scan_times(t, n, &c)  # the shortest interval (the times are valid)
    for i in range(1, n):
        r = (t[i] - t[i - 1]) / c
        if r > 1e15:  # no meaningful lattice (and beyond int64)
            return 0.0
        k = <double>(<int64_t>(r + 0.5))
        if not (r - k <= rtol * r and k - r <= rtol * r):
            return 0.0
    return c


cdef enum:
    NOT_BINARY
    NOT_AGE
    NOT_INCREASING


cdef Py_ssize_t _first(const void* data, Py_ssize_t n, int kind) noexcept:
    """The first bad index of a scan (see the callers), or -1; the loop without the GIL."""
    with nogil:
        if kind == NOT_BINARY:
            return _first_not_binary(<const uint8_t*>data, n)
        if kind == NOT_AGE:
            return _first_not_age(<const double*>data, n)
        return fc_scan_times(<const double*>data, n, NULL)


def first_not_binary(const uint8_t[::1] flags):
    """Index of the first entry of ``flags`` other than 0 or 1, or -1."""
    return _first(&flags[0], flags.shape[0], NOT_BINARY) if flags.shape[0] else -1


def first_not_age(const double[::1] ages):
    """Index of the first entry of ``ages`` that is NaN, negative or infinite, or -1."""
    return _first(&ages[0], ages.shape[0], NOT_AGE) if ages.shape[0] else -1


def first_not_increasing(const double[::1] times):
    """Index of the first entry of ``times`` that is not finite or not above the one before it, or -1."""
    return _first(&times[0], times.shape[0], NOT_INCREASING) if times.shape[0] else -1


def lattice_step(const double[::1] times, double rtol):
    """The smallest sampling interval c if every interval s_{j+1} - s_j is within ``rtol`` (relative) of an
    integer multiple of c (a lattice sampler), else 0.0.  Stops at the first interval that is not."""
    cdef double c = 0.0
    if times.shape[0] >= 2:
        with nogil:
            c = _lattice_step(&times[0], times.shape[0], rtol)
    return c


# ---------------------------------------------------------------------------
# layer 2: the estimators' counts
# ---------------------------------------------------------------------------

cdef const uint8_t* _kept(const uint8_t[::1] keep, Py_ssize_t* n) noexcept:
    """The flags of the kept ages (then ``n`` = their number), or NULL for every age."""
    if keep is None:
        return NULL
    n[0] = keep.shape[0]
    return &keep[0] if keep.shape[0] else NULL


def rank_counts(const double[::1] ages, const uint8_t[::1] keep, const double[::1] x, int64_t[::1] counts):
    """M1, M2 with many points: ``counts[m]`` += #{ages with rank m among the sorted points x} (len(counts) =
    len(x) + 1), over the ages ``ages[j]`` with ``keep[j] = 1`` (j < len(keep)), or over every age if ``keep``
    is None."""
    cdef Py_ssize_t n = ages.shape[0], k = x.shape[0], j
    cdef const uint8_t* kp = _kept(keep, &n)
    with nogil:
        for j in range(n):
            counts[_rank(&x[0], k, ages[j])] += 1 if kp == NULL else kp[j]


def le_counts(const double[::1] ages, const uint8_t[::1] keep, const double[::1] x, int64_t[::1] counts):
    """M1, M2 with few points: ``counts[m]`` += #{ages <= x[m]}, over the ages ``ages[j]`` with ``keep[j] = 1``
    (j < len(keep)), or over every age if ``keep`` is None; every age (with ``keep``, the last one too) is
    checked in the same pass.  Returns the index of the first entry that is not an age (NaN, negative or
    infinite), or -1; the counts are then incomplete (the caller raises)."""
    cdef Py_ssize_t n = ages.shape[0], bad = -1
    cdef const uint8_t* kp = _kept(keep, &n)
    with nogil:
        bad = fc_le_counts(&ages[0], kp, n, &x[0], x.shape[0], &counts[0])
        if bad < 0 and kp != NULL and _not_age(ages[n]):
            bad = n
    return bad


def detection_gaps(const uint8_t[::1] changed, int64_t[:, ::1] counts):
    """M3, M4 and M5: ``counts[l, min(g, K)]`` += 1 for each gap g >= 1 between consecutive detections (the
    positions of the ones of ``changed``), K = counts.shape[1] - 1, spread over the rows l (independent
    counters, so that runs of equal gaps do not wait on one another; sum the rows).  Returns (detections,
    first, last): their number and the first and last positions (-1 without any).

    Each block's positions are gathered first by a branch-free compaction (``pos[c] = j; c += changed[j]``),
    so the loop over the flags has no branch to mispredict."""
    cdef Py_ssize_t n = changed.shape[0], top = counts.shape[1] - 1, lanes = counts.shape[0]
    cdef Py_ssize_t lo, hi, j, c, p, g, last = -1, first = -1, lane = 0
    cdef int64_t detections = 0
    cdef Py_ssize_t pos[BLOCK]
    with nogil:
        lo = 0
        while lo < n:
            hi = lo + BLOCK if lo + BLOCK < n else n
            c = 0
            for j in range(lo, hi):
                pos[c] = j
                c += changed[j]
            if c:
                p = 0
                if last < 0:
                    first = last = pos[0]
                    p = 1
                while p < c:
                    g = pos[p] - last
                    last = pos[p]
                    counts[lane, g if g < top else top] += 1
                    lane = lane + 1 if lane + 1 < lanes else 0
                    p += 1
                detections += c
            lo = hi
    return detections, first, last


def gm4_counts(const double[::1] times, const uint8_t[::1] changed, const double[::1] x, int64_t[::1] counts):
    """G-M4: for every sample j from the first detection on, the rank among x of s_j - s_{d - 1}, d the last
    sample <= j at which an update was detected (``changed[d - 1] = 1``).  Returns the number of samples."""
    cdef Py_ssize_t n = changed.shape[0], k = x.shape[0], j
    cdef double anchor = 0.0
    cdef int64_t started = 0, total = 0
    with nogil:
        for j in range(n):
            if changed[j]:
                anchor = times[j]
                started = 1
            if started:
                counts[_rank(&x[0], k, times[j + 1] - anchor)] += 1
                total += 1
    return total


def _set_simd_level(int level):
    """Choose the paths of ``_blind_simd.h``: 0 scalar, 1 AVX2, 2 AVX-512, -1 the best the processor has (chosen
    at import); returns the one used.  Every path gives the same results (for tests)."""
    return fc_set_simd_level(level)


SIMD_LEVEL = fc_set_simd_level(-1)  # once, at import: no lazy choice racing between threads


def m6_counts(const double[::1] times, const uint8_t[::1] changed, double h, Py_ssize_t nbins,
              int64_t[:, ::1] counts, bint fast):
    """M6's counts (eqs. (52)-(53) of Li et al.) in ``counts`` (shape (nbins + 2, 2), zero on entry): for the bins
    n = 1 .. nbins, ``counts[n, 0]`` = Z(y_n), the sum of Q_ij W_ij(y_n) over the pairs i < j (those whose page
    changed), and ``counts[n, 1]`` = W(y_n), the number of pairs.

    ``fast=False``: every pair (the paper's form; ``fc_m6_pairs`` of ``_blind_simd.h``: a tile of samples by
    partners at a time, then the unchanged pairs row by row), those beyond nbins h in ``counts[nbins + 1]``.
    ``fast=True``: only the pairs no farther apart than nbins h (SPEC section 6; ``fc_m6_fast``: for each i its
    partners up to the first beyond), the same counts in the bins 1 .. nbins, and ``counts[nbins + 1]`` left
    alone."""
    cdef Py_ssize_t n = times.shape[0]
    cdef int status = 0
    if n < 2:
        return
    with nogil:
        if fast:
            fc_m6_fast(&times[0], &changed[0], n, 1.0 / h, <int32_t>nbins, &counts[0, 0])
        else:
            status = fc_m6_pairs(&times[0], &changed[0], n, 1.0 / h, <int32_t>nbins, &counts[0, 0])
    if status < 0:
        raise MemoryError(f"m6: no memory for the counts of {nbins} bins")


# ---------------------------------------------------------------------------
# crawl rates for renewal pages (beyond the paper): the tabulated age distributions of freshcore.rates'
# model "renewal" (freshcore._renewal.AgeTable)
# ---------------------------------------------------------------------------
#
# A page's age distribution G is piecewise linear on the grid 0 = x_{-1} < x[0] < ... < x[m-1] (G(0) = 0 is
# implicit, G non-decreasing in [0, 1]) and, where T = 1 - G[m-1] > 0, has an exponential tail beyond x[m-1]:
# 1 - G(a) = T e^{-r (a - x[m-1])}.  Crawled every I, the page is fresh at age a of the crawl with probability
# 1 - G(a); H(I) = ∫_0^I (1 - G) and psi(I) = ∫_0^I a dG(a) = I G(I) - ∫_0^I G (the partial mean of the age,
# tabulated at the grid points as psum).  On a segment (x_{k-1}, x_k] of slope s, psi(I) = psum_{k-1} +
# s (I^2 - x_{k-1}^2)/2: I^2 interpolates x^2 linearly in psi, and s = 2 (psum_k - psum_{k-1})/(x_k^2 -
# x_{k-1}^2), so a pass reads one row of psum and nothing of G.  In the tail psi(inf) - psi(I) = T (I + 1/r)
# e^{-r (I - x[m-1])}; psi(inf) = E[A] is the page's mean age.

cdef enum:
    SCAN = 64  # rows up to this long are scanned from the start rather than bisected
    AHEAD = 8  # the row of the page this many ahead is prefetched (only some pages read theirs: no stream)

cdef extern from *:
    void _prefetch "__builtin_prefetch"(const void* p) noexcept nogil


cdef inline Py_ssize_t _count_below(const double* row, Py_ssize_t m, double t) noexcept nogil:
    """#{j : row[j] < t} for a non-decreasing row with row[m - 1] >= t: a scan from the start (reads only
    the lines up to the answer, in order)."""
    cdef Py_ssize_t k = 0
    while row[k] < t:
        k += 1
    return k


cdef inline bint _not_finite(double v) noexcept nogil:
    return not (v >= -1.7976931348623157e308 and v <= 1.7976931348623157e308)


cdef Py_ssize_t _renewal_table(const double* x, const double* g_in, Py_ssize_t n, Py_ssize_t m, double* g,
                               double* psum, double* tail, double* hazard, double* mean_age,
                               double* slope0) noexcept nogil:
    cdef Py_ssize_t p, k, q = (3 * m) // 4
    cdef double v, run, acc, xprev, gprev, t, sq, xq
    for p in range(n):
        run = 0.0
        acc = 0.0
        xprev = 0.0
        for k in range(m):
            v = g_in[p * m + k]
            if _not_finite(v):
                return p * m + k
            gprev = run
            if v > run:
                run = v if v < 1.0 else 1.0
            acc += (run - gprev) * (0.5 * (x[k] + xprev))
            g[p * m + k] = run
            psum[p * m + k] = acc
            xprev = x[k]
        t = 1.0 - run
        tail[p] = t
        slope0[p] = g[p * m] / x[0]
        if t > 0.0:
            sq = 1.0 - (g[p * m + q - 1] if q else 0.0)
            xq = x[q - 1] if q else 0.0
            hazard[p] = log(sq / t) / (x[m - 1] - xq) if sq > t else 1.0 / x[m - 1]
            mean_age[p] = acc + t * (x[m - 1] + 1.0 / hazard[p])
        else:
            hazard[p] = 0.0
            mean_age[p] = acc
    return -1


def renewal_table(const double[::1] x, const double[:, ::1] g_in, double[:, ::1] g, double[:, ::1] psum,
                  double[::1] tail, double[::1] hazard, double[::1] mean_age, double[::1] slope0):
    """Fill a table of age distributions from ``g_in`` (n, m) on the grid ``x`` (m,): ``g`` = g_in clipped
    to [0, 1] and made non-decreasing (its running maximum), ``psum`` = psi at the grid points, ``tail`` =
    1 - G[m-1], ``hazard`` = the tail's r (0 without a tail), ``mean_age`` = psi(inf), ``slope0`` = G[0]/x[0]
    (the interpolant's density at 0, the update rate it implies).  The tail's r is the slope of -log(1 - G)
    from x_q (q = 3m/4 in the grid with x_{-1} = 0) to x[m-1], or 1/x[m-1] where 1 - G does not fall there.
    Returns the flat index of the first entry of g_in that is not a finite number (the table is incomplete
    then), or -1."""
    cdef Py_ssize_t bad
    with nogil:
        bad = _renewal_table(&x[0], &g_in[0, 0], g_in.shape[0], g_in.shape[1], &g[0, 0], &psum[0, 0], &tail[0],
                             &hazard[0], &mean_age[0], &slope0[0])
    return bad


cdef double _tail_solve(double xm, double r, double c) noexcept nogil:
    """I >= xm with (I + 1/r) e^{-r (I - xm)} = c, 0 < c <= xm + 1/r (the interval whose psi leaves c T of
    the mean age beyond it).  With x = r I this is x - log1p(x) = s, s = r xm - log(r c), i.e. x = -1 -
    W-1(-e^{-1-s}): Halley's iteration from the branch-point series (s < 2) or the asymptote s + log1p(s +
    log1p(s)), stopping after a step below 1e-6 x (cubic convergence: the error left is far below an ulp),
    two steps mostly; below s = 2^-9, where x - log1p(x) cancels, the periodic
    rates' inverse of R^1 (R^1(x) = 1 - e^-x (1 + x) = -expm1(-s))."""
    cdef double s = r * xm - log(r * c), p, x, xp1, f, fp, dx
    cdef int _it
    if s < 0.001953125:
        x = residual1_inverse(-expm1(-s), exp(-s)) if s > 0.0 else 0.0
    else:
        p = sqrt(2.0 * s)
        x = (p * (1.0 + p * (1.0 / 3.0 + p * (1.0 / 36.0 + p * (-1.0 / 270.0 + p / 4320.0)))) if s < 2.0
             else s + log1p(s + log1p(s)))
        for _it in range(4):
            xp1 = 1.0 + x
            f = x - log1p(x) - s
            fp = x / xp1
            dx = f * fp / (fp * fp - 0.5 * f / (xp1 * xp1))
            x -= dx
            if (dx if dx >= 0.0 else -dx) <= 1e-6 * x:  # Halley: the error left is of the order of dx^3
                break
    x /= r
    return x if x > xm else xm


cdef inline void _nadd(double* s, double* c, double v) noexcept nogil:
    """Neumaier's compensated s += v (the lost low part into c)."""
    cdef double t = s[0] + v
    if (s[0] if s[0] >= 0.0 else -s[0]) >= (v if v >= 0.0 else -v):
        c[0] += (s[0] - t) + v
    else:
        c[0] += (v - t) + s[0]
    s[0] = t


def renewal_pass(const double[::1] x, const double[:, ::1] psum, const double[::1] pm,
                 const double[::1] tail, const double[::1] hazard, const double[::1] mean_age,
                 const double[::1] inv_w, const double[::1] lo, const double[::1] hi, double lam, double u,
                 double[::1] out=None):
    """(S, dS/du): the crawl rates f_i at the multiplier ``lam`` = u^-2 summed (compensated), and their
    derivative in u; the rates written to ``out`` if given.  ``pm`` = psum[:, m - 1], read apart from the
    rows, so that a page whose level is within the grid reads only the lines of its row up to it.  Page
    i's unclipped rate is f = 1/I with psi_i(I) = t = lam inv_w[i] (0 where t reaches mean_age[i]: not
    crawled), clipped to [lo[i], hi[i]] (None: 0 and inf); on the unclipped pages df/du = 2 t q f^3/u,
    q = 1/G'(I) (dpsi = I G'(I) dI)."""
    cdef Py_ssize_t n = psum.shape[0], m = psum.shape[1], p, k
    cdef double S = 0.0, Sc = 0.0, D = 0.0, t, f, p0, x0, x1, i, q, lk, hk, xm = x[m - 1]
    cdef const double* row
    cdef const double* plo = &lo[0] if lo is not None else NULL
    cdef const double* phi = &hi[0] if hi is not None else NULL
    cdef double* po = &out[0] if out is not None else NULL
    with nogil:
        for p in range(n):
            if p + AHEAD < n:
                _prefetch(&psum[p + AHEAD, 0])
            t = lam * inv_w[p]
            lk = plo[p] if plo != NULL else 0.0
            hk = phi[p] if phi != NULL else INFINITY
            f = 0.0
            q = 0.0
            if t < mean_age[p]:
                row = &psum[p, 0]
                if t <= pm[p]:
                    k = _count_below(row, m, t) if m <= SCAN else _rank(row, m, t)  # the first psum[k] >= t
                    p0 = row[k - 1] if k else 0.0
                    x0 = x[k - 1] if k else 0.0
                    x1 = x[k]
                    q = 0.5 * ((x1 - x0) * (x1 + x0)) / (row[k] - p0)
                    i = sqrt(x0 * x0 + 2.0 * (t - p0) * q)
                else:
                    i = _tail_solve(xm, hazard[p], (mean_age[p] - t) / tail[p])
                    q = exp(hazard[p] * (i - xm)) / (tail[p] * hazard[p])
                f = 1.0 / i
            if f <= lk:
                f = lk
            elif f >= hk:
                f = hk
            else:
                D += t * q * f * f * f
            _nadd(&S, &Sc, f)
            if po != NULL:
                po[p] = f
    return S + Sc, 2.0 * D / u


def renewal_psi(const double[::1] x, const double[:, ::1] psum, const double[::1] tail,
                const double[::1] hazard, const double[::1] mean_age, const double[::1] interval,
                double[::1] out):
    """out[i] = psi_i(interval[i]), the partial mean of page i's age up to its crawl interval (mean_age[i]
    for an infinite interval)."""
    cdef Py_ssize_t n = psum.shape[0], m = psum.shape[1], p, k
    cdef double i, p0, x0, xm = x[m - 1]
    with nogil:
        for p in range(n):
            i = interval[p]
            if not i < INFINITY:
                out[p] = mean_age[p]
            elif i >= xm:
                out[p] = mean_age[p] - (tail[p] * (i + 1.0 / hazard[p]) * exp(-hazard[p] * (i - xm))
                                        if tail[p] > 0.0 else 0.0)
            else:
                k = _rank(&x[0], m, i)  # x[k - 1] < i <= x[k]
                p0 = psum[p, k - 1] if k else 0.0
                x0 = x[k - 1] if k else 0.0
                out[p] = p0 + (psum[p, k] - p0) * ((i - x0) * (i + x0)) / ((x[k] - x0) * (x[k] + x0))


def renewal_freshness(const double[::1] x, const double[:, ::1] g, const double[::1] tail,
                      const double[::1] hazard, const double[::1] interval, double[::1] out):
    """out[i] = H_i(I)/I, the time-averaged freshness of page i crawled every I = interval[i] (0 for an
    infinite interval, 1 for 0): the trapezoids of 1 - G up to I, then the tail."""
    cdef Py_ssize_t n = g.shape[0], m = g.shape[1], p, k
    cdef double i, h, xprev, gprev, s, d, xm = x[m - 1]
    with nogil:
        for p in range(n):
            i = interval[p]
            if not i < INFINITY:
                out[p] = 0.0
                continue
            if i <= 0.0:
                out[p] = 1.0
                continue
            h = 0.0
            xprev = 0.0
            gprev = 0.0
            k = 0
            while k < m and x[k] <= i:
                h += (x[k] - xprev) * (1.0 - 0.5 * (g[p, k] + gprev))
                xprev = x[k]
                gprev = g[p, k]
                k += 1
            if k < m:
                s = (g[p, k] - gprev) / (x[k] - xprev)
                d = i - xprev
                h += (1.0 - gprev) * d - 0.5 * s * d * d
            elif tail[p] > 0.0:
                h += tail[p] * (-expm1(-hazard[p] * (i - xm))) / hazard[p]
            out[p] = h / i
