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

M6 bins: ``edges[n] = n h`` for n = 0 .. B + 1 (computed once by the caller, so the numpy reference uses the
same numbers); a distance d in (0, edges[B]] falls in bin n, the smallest n >= 1 with d <= edges[n].
``_bin`` guesses n = floor(d / h) from a multiplication by 1/h and corrects it against the edges, so the
bin never depends on how the division rounds and both M6 forms, which share it, count bit-identically.

References
----------
.. [1] X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM
   Transactions on Networking, 2017 (an earlier version in IEEE INFOCOM 2015).
"""
from libc.stdint cimport int64_t, uint8_t

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


cdef inline Py_ssize_t _bin(double d, const double* edges, double inv_h, Py_ssize_t nbins) noexcept nogil:
    """The bin n in 1 .. nbins with edges[n - 1] < d <= edges[n], for 0 < d <= edges[nbins]."""
    cdef double guess = d * inv_h
    cdef Py_ssize_t n = nbins
    if guess < <double>nbins:
        n = <Py_ssize_t>guess
    if n < 1:
        n = 1
    while n > 1 and d <= edges[n - 1]:
        n -= 1
    while d > edges[n]:
        n += 1
    return n


# ---------------------------------------------------------------------------
# validation helpers: the first bad index, or -1
# ---------------------------------------------------------------------------

cdef inline bint _not_age(double a) noexcept nogil:
    return not (a >= 0.0 and a <= 1.7976931348623157e308)  # NaN, negative or infinite


cdef inline bint _not_after(double a, double before) noexcept nogil:
    return not (a > before and a <= 1.7976931348623157e308)  # NaN, infinite, or not above the one before


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


cdef Py_ssize_t _first_not_increasing(const double* t, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t lo = 1, hi, i, bad
    if n and _not_after(t[0], -1.7976931348623157e308):
        return 0
    while lo < n:
        hi = lo + BLOCK if lo + BLOCK < n else n
        bad = 0
        for i in range(lo, hi):
            bad += _not_after(t[i], t[i - 1])
        if bad:
            for i in range(lo, hi):
                if _not_after(t[i], t[i - 1]):
                    return i
        lo = hi
    return -1


cdef double _lattice_step(const double* t, Py_ssize_t n, double rtol) noexcept nogil:
    cdef Py_ssize_t i
    cdef double c = 1.7976931348623157e308, s, r, k
    if n < 2:
        return 0.0
    for i in range(1, n):
        s = t[i] - t[i - 1]
        c = s if s < c else c
    for i in range(1, n):
        r = (t[i] - t[i - 1]) / c
        if r > 1e15:  # no meaningful lattice (and beyond int64)
            return 0.0
        k = <double>(<int64_t>(r + 0.5))
        if not (r - k <= rtol * r and k - r <= rtol * r):
            return 0.0
    return c


def first_not_binary(const uint8_t[::1] flags):
    """Index of the first entry of ``flags`` other than 0 or 1, or -1."""
    cdef Py_ssize_t i = -1
    if flags.shape[0]:
        with nogil:
            i = _first_not_binary(&flags[0], flags.shape[0])
    return i


def first_not_age(const double[::1] ages):
    """Index of the first entry of ``ages`` that is NaN, negative or infinite, or -1."""
    cdef Py_ssize_t i = -1
    if ages.shape[0]:
        with nogil:
            i = _first_not_age(&ages[0], ages.shape[0])
    return i


def first_not_increasing(const double[::1] times):
    """Index of the first entry of ``times`` that is not finite or not above the one before it, or -1."""
    cdef Py_ssize_t i = -1
    if times.shape[0]:
        with nogil:
            i = _first_not_increasing(&times[0], times.shape[0])
    return i


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

def age_counts(const double[::1] ages, const double[::1] x, int64_t[::1] counts):
    """M2: ``counts[m]`` += #{ages with rank m among the sorted points x} (len(counts) = len(x) + 1)."""
    cdef Py_ssize_t n = ages.shape[0], k = x.shape[0], j
    with nogil:
        for j in range(n):
            counts[_rank(&x[0], k, ages[j])] += 1


def kept_age_counts(const double[::1] ages, const uint8_t[::1] keep, const double[::1] x, int64_t[::1] counts):
    """M1: as :func:`age_counts` over the ages ``ages[j]`` with ``keep[j] = 1`` (j < len(keep))."""
    cdef Py_ssize_t n = keep.shape[0], k = x.shape[0], j
    with nogil:
        for j in range(n):
            counts[_rank(&x[0], k, ages[j])] += keep[j]


def detection_gaps(const uint8_t[::1] changed, int64_t[::1] counts):
    """M3 and M5: ``counts[min(g, K)]`` += 1 for each gap g >= 1 between consecutive detections (positions of
    the ones of ``changed``), K = len(counts) - 1.  Returns the number of detections."""
    cdef Py_ssize_t n = changed.shape[0], top = counts.shape[0] - 1, j, last = -1, g
    cdef int64_t detections = 0
    with nogil:
        for j in range(n):
            if changed[j]:
                if last >= 0:
                    g = j - last
                    counts[g if g < top else top] += 1
                last = j
                detections += 1
    return detections


def run_lengths(const uint8_t[::1] changed, int64_t[::1] counts):
    """M4: for every sample j >= 1 from the first detection on, ``counts[min(r, K)]`` += 1, where r = j - d + 1
    and d the last sample <= j at which an update was detected (``changed[d - 1] = 1``), K = len(counts) - 1."""
    cdef Py_ssize_t n = changed.shape[0], top = counts.shape[0] - 1, j
    cdef int64_t run = 0, started = 0
    with nogil:
        for j in range(n):
            if changed[j]:
                run = 1
                started = 1
            else:
                run += 1
            counts[run if run < top else top] += started


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


def m6_pairs(const double[::1] times, const uint8_t[::1] changed, const double[::1] edges,
             int64_t[::1] pairs, int64_t[::1] updated):
    """M6 over all pairs i < j (eqs. (52)-(53) of Li et al.): ``pairs[n]`` += W_ij(y_n), ``updated[n]`` +=
    Q_ij W_ij(y_n), for the bins n = 1 .. B (B = len(edges) - 2)."""
    cdef Py_ssize_t n = times.shape[0], nbins = edges.shape[0] - 2, i, j, b
    cdef double top = edges[nbins], inv_h = 1.0 / edges[1], si, d
    cdef int64_t q
    with nogil:
        for i in range(n - 1):
            si = times[i]
            q = 0
            for j in range(i + 1, n):
                q |= changed[j - 1]
                d = times[j] - si
                if d <= top:
                    b = _bin(d, &edges[0], inv_h, nbins)
                    pairs[b] += 1
                    updated[b] += q


def m6_fast(const double[::1] times, const uint8_t[::1] changed, const double[::1] edges,
            int64_t[::1] pairs, int64_t[::1] updated):
    """M6 over the pairs no farther apart than edges[B] only (SPEC section 6): the same counts as
    :func:`m6_pairs`.  For each i the partners j run forward while s_j - s_i <= edges[B]; those before the
    next detection after i (``changed[j - 1] = 0`` all the way: one change-free run) have Q_ij = 0, the rest
    Q_ij = 1, so no flag is read inside the pair loops."""
    cdef Py_ssize_t n = times.shape[0], nbins = edges.shape[0] - 2, i, j, b, nxt
    cdef double top = edges[nbins], inv_h = 1.0 / edges[1], si, d
    with nogil:
        nxt = n  # first j > i with changed[j - 1] = 1 (n if none), maintained from the right
        i = n - 2
        while i >= 0:
            if changed[i]:
                nxt = i + 1
            si = times[i]
            j = i + 1
            while j < nxt:
                d = times[j] - si
                if d > top:
                    break
                pairs[_bin(d, &edges[0], inv_h, nbins)] += 1
                j += 1
            else:
                while j < n:
                    d = times[j] - si
                    if d > top:
                        break
                    b = _bin(d, &edges[0], inv_h, nbins)
                    pairs[b] += 1
                    updated[b] += 1
                    j += 1
            i -= 1
