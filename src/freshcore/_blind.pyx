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
# crawl rates for renewal pages (beyond the paper): one page's interval and freshness
# ---------------------------------------------------------------------------
#
# A page's age distribution G is piecewise linear on the grid x[0] = 0 < x[1] < ... < x[m] (G[0] = 0, G
# non-decreasing, slope s_k on (x[k-1], x[k]]) and, where G[m] < 1, has an exponential tail beyond x[m]:
# 1 - G(a) = (1 - G[m]) e^{-r (a - x[m])}.  Crawled every I, the page is fresh at age a of the crawl with
# probability 1 - G(a); H(I) = ∫_0^I (1 - G) and psi(I) = ∫_0^I a dG(a) = I G(I) - ∫_0^I G (the partial mean
# of the age), tabulated at the grid points as hcum and psum by the caller.

cdef double _tail_solve(double xm, double r, double c) noexcept nogil:
    """I >= xm with (I + 1/r) e^{-r (I - xm)} = c, 0 < c <= xm + 1/r: Newton on the log, which is concave
    and decreasing in I, from I = xm (monotone from the left)."""
    cdef double i = xm, f, lc = log(c)
    cdef int _it
    for _it in range(200):
        f = log(i + 1.0 / r) - r * (i - xm) - lc
        if f <= 0.0:
            break
        i += f / (r - 1.0 / (i + 1.0 / r))
    return i


def renewal_intervals(const double[::1] x, const double[:, ::1] g, const double[:, ::1] psum,
                      const double[::1] rate, const double[::1] level, double[::1] out):
    """out[i] = the crawl interval I of page i with psi_i(I) = level[i] (INFINITY where level[i] >= psi_i(inf),
    0 where level[i] <= 0).  ``rate`` is the tail's r per page (0: G reaches 1 on the grid)."""
    cdef Py_ssize_t n = g.shape[0], m = x.shape[0] - 1, p, lo, hi, mid
    cdef double t, s, tail, c
    with nogil:
        for p in range(n):
            t = level[p]
            if t <= 0.0:
                out[p] = 0.0
                continue
            if t > psum[p, m]:
                tail = 1.0 - g[p, m]
                if rate[p] <= 0.0 or tail <= 0.0:
                    out[p] = INFINITY
                    continue
                c = (x[m] + 1.0 / rate[p]) - (t - psum[p, m]) / tail
                out[p] = _tail_solve(x[m], rate[p], c) if c > 0.0 else INFINITY
                continue
            lo = 0  # psum[p, lo] < t <= psum[p, hi]
            hi = m
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if psum[p, mid] < t:
                    lo = mid
                else:
                    hi = mid
            s = (g[p, hi] - g[p, lo]) / (x[hi] - x[lo])
            out[p] = sqrt(x[lo] * x[lo] + 2.0 * (t - psum[p, lo]) / s)


def renewal_freshness(const double[::1] x, const double[:, ::1] g, const double[:, ::1] hcum,
                      const double[::1] rate, const double[::1] interval, double[::1] out):
    """out[i] = H_i(I) / I, the time-averaged freshness of page i crawled every I = interval[i] (0 for an
    infinite interval)."""
    cdef Py_ssize_t n = g.shape[0], m = x.shape[0] - 1, p, lo, hi, mid
    cdef double i, s, d, h, tail
    with nogil:
        for p in range(n):
            i = interval[p]
            if not i < INFINITY:
                out[p] = 0.0
                continue
            if i <= 0.0:
                out[p] = 1.0
                continue
            if i >= x[m]:
                tail = 1.0 - g[p, m]
                h = hcum[p, m]
                if tail > 0.0 and rate[p] > 0.0:
                    h += tail * (-expm1(-rate[p] * (i - x[m]))) / rate[p]
                out[p] = h / i
                continue
            lo = 0  # x[lo] <= i < x[hi]
            hi = m
            while hi - lo > 1:
                mid = (lo + hi) >> 1
                if x[mid] <= i:
                    lo = mid
                else:
                    hi = mid
            s = (g[p, hi] - g[p, lo]) / (x[hi] - x[lo])
            d = i - x[lo]
            out[p] = (hcum[p, lo] + (1.0 - g[p, lo]) * d - 0.5 * s * d * d) / i
