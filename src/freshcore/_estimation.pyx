# cython: language_level=3
"""Compiled online change-rate estimators: Naive, LLN, SA and SAM of Avrachenkov, Patil and Thoppe (2022) [1]_
(the compiled twin of ``freshcore.estimation``).

Design
------
Layers as in STYLE.md:

1. Step functions for one page and one observation (``_sa_step``,
   ``_sam_step``, ``_seg_add``, ...; the SA and SAM steps are C in
   ``_estimation_kernels.h``, beside the full-update loops that use them).
   They are the single source of the arithmetic: the streaming classes and
   the batch kernels call the same functions, which is what makes the two
   paths bit-identical.
2. ``def`` batch kernels over typed memoryviews that release the GIL, one per
   way the batch keeps k (see "Where the batches keep k" at layer 2):
   ``*_shared_update`` (one k for all pages), ``*_full_update`` and
   ``*_pages_update`` (a k per page; every page once, or some pages).  They
   never validate: ``freshcore.estimation`` does.
3. ``cdef class`` streaming estimators.  Their ``update`` method is the one
   place where the compiled module checks its input itself: a Python wrapper
   around ``update`` would double the cost of a call, so the fast path (a
   ``bool``/``int`` flag and no per-call rate) is checked here with pointer
   comparisons, and every other input goes to a Python-level slow path that
   uses ``freshcore._validation`` (error messages are only ever built there).

State layout shared by Naive and LLN ("count" state): ``k`` updates, ``n1``
changes in total, and the change-weighted rate sum ``sum_j p_j I_j`` kept as
``s_old + p_seg * n1_seg``: ``s_old`` holds the sum over past constant-rate
segments, ``n1_seg`` counts the changes seen at the current rate ``p_seg``.
While the rate has never changed ``s_old`` is exactly ``0.0`` and the sum is
exactly ``p * n1`` -- the numbers of eq. (1) of Avrachenkov et al. (2022) bit for bit.

The batches (``NaiveBatch``/``LLNBatch``) exploit this: while every update
used one scalar rate p the segment arrays are implicit (s_old = 0.0,
n1_seg = n1, p_seg = p) and the ``count_shared_update``/``count_common_*``
kernels touch only k, n1 and the rates (about half the memory traffic of
``count_batch_update``); the first other rate stores them and
``count_batch_update`` takes over.

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
"""

from libc.math cimport exp, log, sqrt, NAN, INFINITY
from cpython.float cimport PyFloat_CheckExact, PyFloat_AS_DOUBLE

import numpy as np

from ._validation import check_binary, check_scalar, check_array, check_same_length, check_int

# ---------------------------------------------------------------------------
# layer 1: per-page, per-step arithmetic (shared by streaming and batch paths)
# ---------------------------------------------------------------------------

# alpha kinds of the LLN estimator
cdef enum:
    ALPHA_CONST = 0
    ALPHA_LOG = 1
    ALPHA_SQRT = 2
    ALPHA_CALLABLE = 3

# modes of the count kernel
cdef enum:
    MODE_NAIVE = 0
    MODE_LLN_EQ1 = 1
    MODE_LLN_CONSISTENT = 2


cdef inline double _power_step(long long k, double e) noexcept nogil:
    """Step size (k + 1)^(-e) used in the update that consumes I_{k+1}.

    Evaluated as exp(-e log(k + 1)) (relative error ~1e-15, exactly 1 at k = 0):
    one log and one exp are cheaper than pow, and SAM shares the log between
    its two step sizes.
    """
    return exp(-e * log(<double>(k + 1)))


cdef inline void _sam_coefs(long long k, double eta, double beta, double omega, double b_prev,
                            double* e_k, double* b_k, double* zeta_k) noexcept nogil:
    """eta_k, beta_k and zeta_k = (beta_k - omega eta_k) / beta_{k-1} (eq. (10) of Avrachenkov et al. (2022)),
    zeta_0 = 0.

    ``b_prev`` is beta_{k-1} = _power_step(k - 1, beta) (ignored at k = 0).
    """
    cdef double L = log(<double>(k + 1))
    e_k[0] = exp(-eta * L)
    b_k[0] = exp(-beta * L)
    zeta_k[0] = 0.0 if k == 0 else (b_k[0] - omega * e_k[0]) / b_prev


# The SA/SAM steps and the full-update loops are C (_estimation_kernels.h): the loops are compiled for
# SSE2, AVX2 and AVX-512 and the widest the machine runs is chosen at import (the same bits; see there).
cdef extern from "_estimation_kernels.h":
    double _sa_step "freshcore_sa_step"(double y, double changed, double p, double eta_k) noexcept nogil
    double _sam_step "freshcore_sam_step"(double z, double z_prev, double changed, double p,
                                          double eta_k, double zeta_k) noexcept nogil
    void _sa_block "freshcore_sa_block"(double* y, const unsigned char* c, const double* p, Py_ssize_t ps,
                                        Py_ssize_t n, double eta_k) noexcept nogil
    void _sam_block "freshcore_sam_block"(double* z, double* zp, const unsigned char* c, const double* p,
                                          Py_ssize_t ps, Py_ssize_t n, double eta_k, double zeta_k) noexcept nogil
    void _count_block "freshcore_count_block"(long long* n1, double* out, const unsigned char* c, Py_ssize_t n,
                                              long long k1, double p, double a, int naive) noexcept nogil
    void _count32_block "freshcore_count32_block"(unsigned int* n1, double* out, const unsigned char* c,
                                                  Py_ssize_t n, long long k1, double p, double a,
                                                  int naive) noexcept nogil
    int _max_level "freshcore_est_max_level"() noexcept nogil
    int _set_level "freshcore_est_set_level"(int level) noexcept nogil


cdef int _level = _set_level(_max_level())


def _kernel_levels():
    """(level in use, widest level this machine runs) of the full-update loops: 0 the baseline build
    (SSE2 on x86-64), 1 AVX2, 2 AVX-512 (the same bits at every level)."""
    return _level, _max_level()


def _set_kernel_level(int level):
    """Use the loops of ``min(level, widest)`` (the tests run every level the machine has); return the
    previous level.  Not thread-safe: for tests, not while updates run."""
    global _level
    old = _level
    _level = _set_level(level)
    return old


cdef inline double _lln_alpha(int kind, double a, long long k) noexcept nogil:
    """alpha_k for the presets: a constant, log(k + 1) or sqrt(k)."""
    if kind == ALPHA_LOG:
        return log(<double>(k + 1))
    if kind == ALPHA_SQRT:
        return sqrt(<double>k)
    return a


cdef inline void _seg_add(double* s_old, double* p_seg, long long* n1_seg,
                          int changed, double p) noexcept nogil:
    """Add one observation at rate p to the segmented sum s_old + p_seg * n1_seg."""
    if p != p_seg[0]:
        s_old[0] = s_old[0] + p_seg[0] * <double>n1_seg[0]
        p_seg[0] = p
        n1_seg[0] = 0
    n1_seg[0] += changed


cdef inline double _count_rate(int mode, long long k, long long n1, double s_old,
                               double p_seg, long long n1_seg, double p, double alpha_k) noexcept nogil:
    """Naive q_k = sum p_j I_j / k; LLN eq. (1) p I_k / (alpha_k + k - I_k) or its consistent form."""
    if mode == MODE_NAIVE:
        return (s_old + p_seg * <double>n1_seg) / <double>k
    if mode == MODE_LLN_EQ1:
        return (p * <double>n1) / (alpha_k + <double>(k - n1))
    return (s_old + p_seg * <double>n1_seg) / (alpha_k + <double>(k - n1))


# ---------------------------------------------------------------------------
# layer 2: batch kernels (no validation; see freshcore.estimation)
# ---------------------------------------------------------------------------

# Where the batches keep k.  While every update covered all pages, every page
# has the same k and the batch keeps that one number ("shared k"): the
# ``*_shared_update`` kernels touch no k at all.  Otherwise page i has
# k = base + koff[i] ("per-page k"): a full update (every page once) adds 1 to
# the base and leaves ``koff`` alone, an update of some pages adds 1 to their
# ``koff``.  The full-update kernels work in blocks of _BLOCK pages: pages
# [b _BLOCK, (b + 1) _BLOCK) form block b, and ``blk[b] >= 0`` records that all
# of its pages have koff = blk[b] (-1: not known).  A block whose pages share k
# takes the step sizes once and runs the loop of _estimation_kernels.h (the
# same expression per page, so the same bits), without reading koff when blk
# knows it; other blocks and updates of some pages take the page-by-page loops.
cdef enum:
    _BLOCK = 512

BLOCK = _BLOCK


cdef inline long long _block_koff(const long long* koff, long long* blk, Py_ssize_t s, Py_ssize_t e,
                                  Py_ssize_t n) noexcept nogil:
    """The koff that every page of [s, e) (inside one block) has, or -1 if they differ.

    A block found uniform is recorded in ``blk`` when [s, e) is the whole block
    (so concurrent calls on disjoint page ranges never write the same entry).
    """
    cdef Py_ssize_t b = s // _BLOCK, i
    cdef long long d0 = blk[b], diff = 0
    if d0 >= 0:
        return d0
    d0 = koff[s]
    for i in range(s, e):
        diff |= koff[i] ^ d0
    if diff != 0:
        return -1
    if s == b * _BLOCK and (e - s == _BLOCK or e == n):
        blk[b] = d0
    return d0


cdef inline Py_ssize_t _block_end(Py_ssize_t s, Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t e = (s // _BLOCK + 1) * _BLOCK
    return e if e < stop else stop


cdef inline void _bump(long long* koff, long long* blk, Py_ssize_t i) noexcept nogil:
    """One more observation of page i in an update of some pages."""
    koff[i] += 1
    blk[i // _BLOCK] = -1


cdef void _sa_pages(long long* koff, long long* blk, long long base, double* y, const unsigned char* c,
                    const Py_ssize_t* pages, const double* p, Py_ssize_t ps, Py_ssize_t j0, Py_ssize_t j1,
                    double eta, long long* last_k, double* eta_k) noexcept nogil:
    """Observations j0 .. j1 - 1, of pages ``pages[j]`` (NULL: page j of a full update, k not stored)."""
    cdef Py_ssize_t j, i
    cdef long long kk
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = base + koff[i]
        if kk != last_k[0]:
            eta_k[0] = _power_step(kk, eta)
            last_k[0] = kk
        y[i] = _sa_step(y[i], <double>c[j], p[j * ps], eta_k[0])
        if pages != NULL:
            _bump(koff, blk, i)


def sa_pages_update(long long[::1] koff, long long[::1] blk, long long base, double[::1] y,
                    const unsigned char[::1] changed, const Py_ssize_t[::1] pages, const double[::1] p, double eta):
    """SA step for observation j on page ``pages[j]``, in order (per-page k).

    ``changed`` holds 0/1 bytes; ``p`` has length 1 (one rate for all) or
    ``len(changed)``.
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef long long last_k = -1
    cdef double eta_k = 0.0
    with nogil:
        _sa_pages(&koff[0], &blk[0], base, &y[0], &changed[0], &pages[0], &p[0], ps, 0, m, eta, &last_k, &eta_k)


def sa_full_update(long long[::1] koff, long long[::1] blk, long long base, double[::1] y,
                   const unsigned char[::1] changed, const double[::1] p, double eta, Py_ssize_t start,
                   Py_ssize_t stop):
    """SA step of pages start .. stop - 1 of a full update (per-page k; the caller then adds 1 to the base).

    ``y``, ``changed`` and ``p`` (length 1 or one per page) cover all pages.
    """
    cdef Py_ssize_t n = y.shape[0], ps = 0 if p.shape[0] == 1 else 1, s, e
    if stop <= start:
        return
    cdef long long* kp = &koff[0]
    cdef long long* bp = &blk[0]
    cdef double* yp = &y[0]
    cdef const unsigned char* cp = &changed[0]
    cdef const double* pp = &p[0]
    cdef long long d0, k0, last_k = -1
    cdef double eta_k = 0.0
    with nogil:
        s = start
        while s < stop:
            e = _block_end(s, stop)
            d0 = _block_koff(kp, bp, s, e, n)
            if d0 >= 0:
                k0 = base + d0
                if k0 != last_k:
                    eta_k = _power_step(k0, eta)
                    last_k = k0
                _sa_block(&yp[s], &cp[s], &pp[s * ps], ps, e - s, eta_k)
            else:
                _sa_pages(kp, bp, base, yp, cp, NULL, pp, ps, s, e, eta, &last_k, &eta_k)
            s = e


def sa_shared_update(double[::1] y, const unsigned char[::1] changed, const double[::1] p, long long k, double eta):
    """SA full update of pages that all have k (shared k: no k array); ``p`` has length 1 or one per page.

    The numbers of the per-page kernels bit for bit (the same step size and ``_sa_block``).
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef double eta_k = _power_step(k, eta)
    with nogil:
        _sa_block(&y[0], &changed[0], &p[0], ps, m, eta_k)


cdef inline void _sam_step_sizes(long long k, double eta, double beta, double omega,
                                 double* eta_k, double* zeta_k) noexcept nogil:
    """eta_k and zeta_k of the update that consumes I_{k+1} (beta_{k-1} recomputed)."""
    cdef double b_k
    _sam_coefs(k, eta, beta, omega, _power_step(k - 1, beta) if k > 0 else 1.0, eta_k, &b_k, zeta_k)


cdef void _sam_pages(long long* koff, long long* blk, long long base, double* z, double* zp,
                     const unsigned char* c, const Py_ssize_t* pages, const double* p, Py_ssize_t ps,
                     Py_ssize_t j0, Py_ssize_t j1, double eta, double beta, double omega,
                     long long* last_k, double* eta_k, double* zeta_k) noexcept nogil:
    """SAM twin of ``_sa_pages``."""
    cdef Py_ssize_t j, i
    cdef long long kk
    cdef double zi
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = base + koff[i]
        if kk != last_k[0]:
            _sam_step_sizes(kk, eta, beta, omega, eta_k, zeta_k)
            last_k[0] = kk
        zi = z[i]
        z[i] = _sam_step(zi, zp[i], <double>c[j], p[j * ps], eta_k[0], zeta_k[0])
        zp[i] = zi
        if pages != NULL:
            _bump(koff, blk, i)


def sam_pages_update(long long[::1] koff, long long[::1] blk, long long base, double[::1] z, double[::1] z_prev,
                     const unsigned char[::1] changed, const Py_ssize_t[::1] pages, const double[::1] p,
                     double eta, double beta, double omega):
    """SAM step for observation j on page ``pages[j]``, in order; see ``sa_pages_update``."""
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef long long last_k = -1
    cdef double eta_k = 0.0, zeta_k = 0.0
    with nogil:
        _sam_pages(&koff[0], &blk[0], base, &z[0], &z_prev[0], &changed[0], &pages[0], &p[0], ps, 0, m,
                   eta, beta, omega, &last_k, &eta_k, &zeta_k)


def sam_full_update(long long[::1] koff, long long[::1] blk, long long base, double[::1] z,
                    double[::1] z_prev, const unsigned char[::1] changed, const double[::1] p,
                    double eta, double beta, double omega, Py_ssize_t start, Py_ssize_t stop):
    """SAM step of pages start .. stop - 1 of a full update; see ``sa_full_update``."""
    cdef Py_ssize_t n = z.shape[0], ps = 0 if p.shape[0] == 1 else 1, s, e
    if stop <= start:
        return
    cdef long long* kp = &koff[0]
    cdef long long* bp = &blk[0]
    cdef double* zv = &z[0]
    cdef double* zpv = &z_prev[0]
    cdef const unsigned char* cp = &changed[0]
    cdef const double* pp = &p[0]
    cdef long long d0, k0, last_k = -1
    cdef double eta_k = 0.0, zeta_k = 0.0
    with nogil:
        s = start
        while s < stop:
            e = _block_end(s, stop)
            d0 = _block_koff(kp, bp, s, e, n)
            if d0 >= 0:
                k0 = base + d0
                if k0 != last_k:
                    _sam_step_sizes(k0, eta, beta, omega, &eta_k, &zeta_k)
                    last_k = k0
                _sam_block(&zv[s], &zpv[s], &cp[s], &pp[s * ps], ps, e - s, eta_k, zeta_k)
            else:
                _sam_pages(kp, bp, base, zv, zpv, cp, NULL, pp, ps, s, e, eta, beta, omega,
                           &last_k, &eta_k, &zeta_k)
            s = e


def sam_shared_update(double[::1] z, double[::1] z_prev, const unsigned char[::1] changed, const double[::1] p,
                      long long k, double eta, double beta, double omega):
    """SAM full update of pages that all have k (no k array); see ``sa_shared_update``."""
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef double eta_k, zeta_k
    _sam_step_sizes(k, eta, beta, omega, &eta_k, &zeta_k)
    with nogil:
        _sam_block(&z[0], &z_prev[0], &changed[0], &p[0], ps, m, eta_k, zeta_k)


cdef void _count_general(long long* koff, long long* blk, long long base, long long* n1, long long* n1_seg,
                         double* p_seg, double* s_old, double* rate, const unsigned char* c,
                         const Py_ssize_t* pages, const double* p, Py_ssize_t ps, Py_ssize_t j0, Py_ssize_t j1,
                         int mode, int alpha_kind, double alpha, const double* alpha_values,
                         long long* last_k, double* a) noexcept nogil:
    cdef Py_ssize_t j, i
    cdef long long kk
    cdef int cj
    cdef double pj
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = base + koff[i] + 1
        cj = c[j]
        pj = p[j * ps]
        _seg_add(&s_old[i], &p_seg[i], &n1_seg[i], cj, pj)
        n1[i] += cj
        if pages != NULL:
            _bump(koff, blk, i)
        if alpha_kind == ALPHA_CALLABLE:
            a[0] = alpha_values[j]
        elif alpha_kind != ALPHA_CONST and kk != last_k[0]:
            a[0] = _lln_alpha(alpha_kind, alpha, kk)
            last_k[0] = kk
        rate[i] = _count_rate(mode, kk, n1[i], s_old[i], p_seg[i], n1_seg[i], pj, a[0])


def count_batch_update(long long[::1] koff, long long[::1] blk, long long base, long long[::1] n1,
                       long long[::1] n1_seg, double[::1] p_seg, double[::1] s_old, double[::1] rate,
                       const unsigned char[::1] changed, const Py_ssize_t[::1] pages,
                       const double[::1] p, int mode, int alpha_kind, double alpha,
                       const double[::1] alpha_values):
    """Naive/LLN step for observation j on page ``pages[j]`` (or j: a full update, after which the caller
    adds 1 to the base), in order (per-page k).

    ``mode``: 0 Naive, 1 LLN eq. (1), 2 consistent LLN.  ``alpha_kind``: 0 the
    constant ``alpha``, 1 log(k + 1), 2 sqrt(k), 3 ``alpha_values[j]`` (one
    precomputed alpha_k per observation).  ``changed`` holds 0/1 bytes.
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef const Py_ssize_t* pg = NULL
    if pages is not None:
        pg = &pages[0]
    cdef const double* av = NULL
    if alpha_values is not None:
        av = &alpha_values[0]
    cdef long long last_k = -1
    cdef double a = alpha
    # No blocked fast path here: the int64 -> double conversions do not vectorise
    # without AVX-512, and a blocked variant measured slower than this loop,
    # which already runs at about one np.copyto pass over the state.
    with nogil:
        _count_general(&koff[0], &blk[0], base, &n1[0], &n1_seg[0], &p_seg[0], &s_old[0], &rate[0],
                       &changed[0], pg, &p[0], ps, 0, m, mode, alpha_kind, alpha, av, &last_k, &a)


# Bit-exact int64 -> double and non-temporal copies: C in _float_bits.h and _stream.h (each platform path
# beside its portable fallback).
cdef extern from "_float_bits.h":
    double _u52_to_double "freshcore_u52_to_double"(long long x) noexcept nogil


cdef extern from "_stream.h":
    void _stream "freshcore_stream"(double* dst, const double* src, Py_ssize_t n) noexcept nogil
    void _sfence "freshcore_sfence"() noexcept nogil


# Full common-rate updates of at least this many pages write the rates with
# non-temporal stores: the rates are only written, so ordinary stores first
# read every line in (a quarter of the kernel's memory traffic).  Measured on
# a 2-core Xeon VM: -25% time at 3e6 and 1e7 pages, +20% at 1e5 and 1e6 pages
# (state still in cache), hence the threshold.
cdef enum:
    _STREAM_MIN = 2097152


# Counts below this bound convert exactly with _u52_to_double (2^52).
cdef long long _U52 = 4503599627370496


cdef inline double _common_rate(int mode, long long k, long long n1, double p, double alpha_k) noexcept nogil:
    """``_count_rate`` in the common-rate regime (s_old = 0.0, p_seg = p, n1_seg = n1).

    There ``s_old + p_seg * n1_seg`` is ``0.0 + p * n1`` and ``p * n1`` is +0.0
    or positive (p > 0, n1 >= 0), so dropping the ``0.0 +`` gives the same bits
    in every mode: Naive, eq. (1) and the consistent LLN all reduce to
    ``p * n1`` over their denominators.
    """
    if mode == MODE_NAIVE:
        return (p * <double>n1) / <double>k
    return (p * <double>n1) / (alpha_k + <double>(k - n1))


cdef void _common_general(long long* koff, long long* blk, long long base, long long* n1, double* rate,
                          const unsigned char* c, const Py_ssize_t* pages, double p, Py_ssize_t j0, Py_ssize_t j1,
                          int mode, int alpha_kind, double alpha, const double* alpha_values,
                          long long* last_k, double* a) noexcept nogil:
    """Observations j0 .. j1 - 1 in the common-rate regime, page by page (see ``_sa_pages``)."""
    cdef Py_ssize_t j, i
    cdef long long kk, nn
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = base + koff[i] + 1
        nn = n1[i] + c[j]
        n1[i] = nn
        if pages != NULL:
            _bump(koff, blk, i)
        if alpha_kind == ALPHA_CALLABLE:
            a[0] = alpha_values[j]
        elif alpha_kind != ALPHA_CONST and kk != last_k[0]:
            a[0] = _lln_alpha(alpha_kind, alpha, kk)
            last_k[0] = kk
        rate[i] = _common_rate(mode, kk, nn, p, a[0])


cdef inline void _shared_block(long long* n1, unsigned int* n1_32, double* out, const unsigned char* c,
                               Py_ssize_t n, long long k1, double p, double a, int naive) noexcept nogil:
    if n1_32 != NULL:
        _count32_block(n1_32, out, c, n, k1, p, a, naive)
    else:
        _count_block(n1, out, c, n, k1, p, a, naive)


cdef void _common_full_shared(long long* n1, unsigned int* n1_32, double* rt, const unsigned char* cp,
                              Py_ssize_t m, long long k1, double p, double a, int mode) noexcept nogil:
    """Full update of a batch whose pages all share k = k1 - 1 (no k array is touched); the counts are
    ``n1`` or, when it is not NULL, the 32-bit ``n1_32``."""
    cdef double buf[_BLOCK]
    cdef Py_ssize_t s = 0, e
    cdef int naive = mode == MODE_NAIVE
    if m < _STREAM_MIN:
        _shared_block(n1, n1_32, rt, cp, m, k1, p, a, naive)
        return
    while s < m:
        e = s + _BLOCK if s + _BLOCK < m else m
        _shared_block(NULL if n1 == NULL else &n1[s], NULL if n1_32 == NULL else &n1_32[s], buf, &cp[s],
                      e - s, k1, p, a, naive)
        _stream(&rt[s], buf, e - s)
        s = e
    _sfence()


def count_shared_update(long long[::1] n1, double[::1] rate, const unsigned char[::1] changed,
                        long long k1, double p, int mode, int alpha_kind, double alpha):
    """``count_common_full`` for a batch whose pages all share k = k1 - 1 (shared k: no k array).

    Touches only ``n1``, the flags and ``rate`` (about 25 bytes per page).
    Requires ``alpha_kind`` constant, log or sqrt and 1 <= k1 < 2^52 - 1; the
    numbers are those of the per-page kernels bit for bit (the same ``_count_block``).
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef double a = alpha if alpha_kind == ALPHA_CONST else _lln_alpha(alpha_kind, alpha, k1)
    with nogil:
        _common_full_shared(&n1[0], NULL, &rate[0], &changed[0], m, k1, p, a, mode)


def count_shared_update32(unsigned int[::1] n1, double[::1] rate, const unsigned char[::1] changed,
                          long long k1, double p, int mode, int alpha_kind, double alpha):
    """``count_shared_update`` with 32-bit counts (about 17 bytes per page); requires k1 < 2^32."""
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef double a = alpha if alpha_kind == ALPHA_CONST else _lln_alpha(alpha_kind, alpha, k1)
    with nogil:
        _common_full_shared(NULL, &n1[0], &rate[0], &changed[0], m, k1, p, a, mode)


def count_common_pages(long long[::1] koff, long long[::1] blk, long long base, long long[::1] n1,
                       double[::1] rate, const unsigned char[::1] changed, const Py_ssize_t[::1] pages,
                       double p, int mode, int alpha_kind, double alpha, const double[::1] alpha_values):
    """``count_batch_update`` of some pages for a batch whose every update so far used the one crawl rate ``p``.

    The segment arrays are then implicit (s_old = 0.0, p_seg = p, n1_seg = n1)
    and only k, ``n1`` and ``rate`` are touched; the numbers are those of
    ``count_batch_update`` bit for bit (see ``_common_rate``).
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef const double* av = NULL
    if alpha_values is not None:
        av = &alpha_values[0]
    cdef long long last_k = -1
    cdef double a = alpha
    with nogil:
        _common_general(&koff[0], &blk[0], base, &n1[0], &rate[0], &changed[0], &pages[0], p, 0, m, mode,
                        alpha_kind, alpha, av, &last_k, &a)


def count_common_full(long long[::1] koff, long long[::1] blk, long long base, long long[::1] n1,
                      double[::1] rate, const unsigned char[::1] changed, double p, int mode, int alpha_kind,
                      double alpha, const double[::1] alpha_values, Py_ssize_t start, Py_ssize_t stop):
    """``count_common_pages`` for pages start .. stop - 1 of a full update (the caller then adds 1 to the base).

    Blocks whose pages share k run ``_count_block`` with the block-invariant
    k + 1 and alpha_k; ranges of at least ``_STREAM_MIN`` pages stream the rates out.
    """
    cdef Py_ssize_t n = n1.shape[0], s, e
    if stop <= start:
        return
    cdef const double* av = NULL
    if alpha_values is not None:
        av = &alpha_values[0]
    cdef long long* kp = &koff[0]
    cdef long long* bp = &blk[0]
    cdef long long* n1p = &n1[0]
    cdef double* rt = &rate[0]
    cdef const unsigned char* cp = &changed[0]
    cdef long long d0, k1, last_k = -1
    cdef double a = alpha
    cdef double buf[_BLOCK]
    cdef bint stream = stop - start >= _STREAM_MIN
    with nogil:
        s = start
        while s < stop:
            e = _block_end(s, stop)
            d0 = -1 if alpha_kind == ALPHA_CALLABLE else _block_koff(kp, bp, s, e, n)
            if 0 <= d0 and base + d0 < _U52 - 1:
                k1 = base + d0 + 1
                if alpha_kind != ALPHA_CONST and k1 != last_k:
                    a = _lln_alpha(alpha_kind, alpha, k1)
                    last_k = k1
                if stream:
                    _count_block(&n1p[s], buf, &cp[s], e - s, k1, p, a, mode == MODE_NAIVE)
                    _stream(&rt[s], buf, e - s)
                else:
                    _count_block(&n1p[s], &rt[s], &cp[s], e - s, k1, p, a, mode == MODE_NAIVE)
            else:
                _common_general(kp, bp, base, n1p, rt, cp, NULL, p, s, e, mode, alpha_kind, alpha, av,
                                &last_k, &a)
            s = e
        if stream:
            _sfence()


# ---------------------------------------------------------------------------
# layer 3: streaming estimators
# ---------------------------------------------------------------------------

cdef object _ONE = 1
cdef object _ZERO = 0


cdef int _changed_slow(object changed, str caller) except -1:
    """Error/unusual path for the ``changed`` flag (numpy scalars, 0.0/1.0, bad input)."""
    return int(check_binary(changed, "changed", caller, ndim=0).reshape(-1)[0])


cdef inline int _changed_value(object changed, object owner) except -1:
    # Fast path: True/False and the cached small ints 0/1 are compared by identity.
    if changed is True or changed is _ONE:
        return 1
    if changed is False or changed is _ZERO:
        return 0
    return _changed_slow(changed, type(owner).__name__ + ".update")


cdef double _positive_slow(object x, str name, str caller) except? -1.0:
    return check_scalar(x, name, caller, low=0.0, low_inclusive=False)


cdef inline double _positive_value(object x, str name, object owner) except? -1.0:
    cdef double v
    if PyFloat_CheckExact(x):
        v = PyFloat_AS_DOUBLE(x)
        if v > 0.0 and v < INFINITY:
            return v
    return _positive_slow(x, name, type(owner).__name__ + ".update")


cdef double _missing_rate(object owner) except -1.0:
    raise ValueError(
        f"{type(owner).__name__}.update needs a crawl rate: pass 'crawl_rate' to the update or to the "
        f"constructor of {type(owner).__name__}."
    )


def _check_params_rate(crawl_rate, caller):
    """Constructor crawl rate: None (give it per update) or a finite number > 0; NaN encodes None."""
    if crawl_rate is None:
        return NAN
    return check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False)


def _check_many(owner, changed, intervals, crawl_rate, double default_rate):
    """Validate the arguments of ``update_many``; return (flags, intervals or None, rates)."""
    caller = type(owner).__name__ + ".update_many"
    c = check_binary(changed, "changed", caller, ndim=1, allow_empty=True)
    m = c.shape[0]
    dt = None
    if intervals is not None:
        if np.ndim(intervals) == 0:
            dt = np.full(m, check_scalar(intervals, "intervals", caller, low=0.0, low_inclusive=False))
        else:
            dt = check_array(intervals, "intervals", caller, ndim=1, low=0.0, low_inclusive=False,
                             allow_empty=True)
            check_same_length(caller, changed=c, intervals=dt)
    if crawl_rate is None:
        if default_rate != default_rate:
            if m == 0:
                return c, dt, np.ones(1)
            raise ValueError(
                f"{caller} needs crawl rates: pass 'crawl_rate' here or to the constructor "
                f"of {type(owner).__name__}."
            )
        p = np.array([default_rate])
    elif np.ndim(crawl_rate) == 0:
        p = np.array([check_scalar(crawl_rate, "crawl_rate", caller, low=0.0, low_inclusive=False)])
    else:
        p = check_array(crawl_rate, "crawl_rate", caller, ndim=1, low=0.0, low_inclusive=False, allow_empty=True)
        check_same_length(caller, changed=c, crawl_rate=p)
        if m == 0:
            p = np.ones(1)
    return c, dt, p


cdef class _OnlineEstimator:
    """Common state: number of updates, default crawl rate, elapsed time, current estimate."""

    cdef long long _k
    cdef double _crawl_rate     # NaN: no default rate
    cdef double _elapsed
    cdef double _rate

    @property
    def rate(self):
        """Current estimate of the change rate (read-only)."""
        return self._rate

    @property
    def n_updates(self):
        """Number of observations consumed so far (k)."""
        return self._k

    @property
    def elapsed(self):
        """Sum of the ``interval`` values passed to ``update``/``update_many`` (0.0 if none)."""
        return self._elapsed

    @property
    def crawl_rate(self):
        """Default crawl rate p of the constructor (None if every update gives its own)."""
        return None if self._crawl_rate != self._crawl_rate else self._crawl_rate

    cdef void _step(self, int c, double p) noexcept nogil:
        """One observation (flag c, crawl rate p); every estimator but LLN defines it."""

    def update(self, changed, interval=None, crawl_rate=None):
        cdef int c = _changed_value(changed, self)
        cdef double p, dt = 0.0
        if crawl_rate is None:
            p = self._crawl_rate
            if p != p:
                _missing_rate(self)
        else:
            p = _positive_value(crawl_rate, "crawl_rate", self)
        if interval is not None:
            dt = _positive_value(interval, "interval", self)
            self._elapsed += dt
        self._step(c, p)
        return self

    def update_many(self, changed, intervals=None, crawl_rate=None):
        c, dt, p = _check_many(self, changed, intervals, crawl_rate, self._crawl_rate)
        cdef const unsigned char[::1] cv = c
        cdef const double[::1] pv = p
        cdef Py_ssize_t j, m = cv.shape[0], ps = 0 if pv.shape[0] == 1 else 1
        cdef const double[::1] dv
        if dt is not None:
            dv = dt
            for j in range(m):
                self._elapsed += dv[j]
        with nogil:
            for j in range(m):
                self._step(cv[j], pv[j * ps])
        return self

    def _params(self):
        return {"crawl_rate": self.crawl_rate}

    def _state(self):
        return {"n_updates": self._k, "elapsed": self._elapsed, "rate": self._rate}

    def _set_state(self, state):
        caller = type(self).__name__ + ".from_dict"
        self._k = check_int(state["n_updates"], "n_updates", caller, low=0)
        self._elapsed = check_scalar(state["elapsed"], "elapsed", caller, low=0.0)
        self._rate = check_scalar(state["rate"], "rate", caller)

    def to_dict(self):
        """Parameters and state as a dict of plain Python values; ``from_dict`` restores it exactly."""
        return {"params": self._params(), "state": self._state()}

    @classmethod
    def from_dict(cls, d):
        """Rebuild an estimator from ``to_dict()`` output; continuing gives bit-identical results."""
        obj = cls(**d["params"])
        obj._set_state(d["state"])
        return obj

    def __reduce__(self):
        return (_restore, (type(self), self.to_dict()))

    def __repr__(self):
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({params}) [n_updates={self._k}, rate={self._rate!r}]"


def _restore(cls, d):
    return cls.from_dict(d)


cdef class _CountEstimator(_OnlineEstimator):
    """State shared by Naive and LLN: k, changes n1, and the segmented sum of p_j I_j."""

    cdef long long _n1
    cdef long long _n1_seg
    cdef double _p_seg
    cdef double _s_old

    def _state(self):
        d = _OnlineEstimator._state(self)
        d.update(n_changes=self._n1, segment_changes=self._n1_seg, segment_rate=self._p_seg,
                 past_sum=self._s_old)
        return d

    def _set_state(self, state):
        _OnlineEstimator._set_state(self, state)
        caller = type(self).__name__ + ".from_dict"
        self._n1 = check_int(state["n_changes"], "n_changes", caller, low=0, high=self._k)
        self._n1_seg = check_int(state["segment_changes"], "segment_changes", caller, low=0, high=self._n1)
        self._p_seg = check_scalar(state["segment_rate"], "segment_rate", caller, low=0.0)
        self._s_old = check_scalar(state["past_sum"], "past_sum", caller, low=0.0)

    @property
    def n_changes(self):
        """Number of observed changes (Î_k)."""
        return self._n1


cdef class _NaiveEstimator(_CountEstimator):

    def __init__(self, *, crawl_rate=None):
        self._crawl_rate = _check_params_rate(crawl_rate, type(self).__name__)

    cdef void _step(self, int c, double p) noexcept nogil:
        _seg_add(&self._s_old, &self._p_seg, &self._n1_seg, c, p)
        self._n1 += c
        self._k += 1
        self._rate = _count_rate(MODE_NAIVE, self._k, self._n1, self._s_old, self._p_seg,
                                 self._n1_seg, p, 0.0)


cdef class _LLNEstimator(_CountEstimator):

    cdef int _alpha_kind
    cdef double _alpha
    cdef object _alpha_spec
    cdef object _alpha_fn
    cdef int _mode
    cdef object _consistent

    def __init__(self, *, crawl_rate=None, alpha="one", consistent=None):
        caller = type(self).__name__
        self._crawl_rate = _check_params_rate(crawl_rate, caller)
        self._alpha_kind, self._alpha, self._alpha_fn = _alpha_code(alpha, caller)
        self._alpha_spec = alpha
        if consistent is not None and not isinstance(consistent, (bool, np.bool_)):
            raise TypeError(
                f"The 'consistent' parameter of {caller} must be True, False or None. Got {consistent!r} instead."
            )
        self._consistent = None if consistent is None else bool(consistent)
        self._mode = MODE_LLN_EQ1 if consistent is not None and not consistent else MODE_LLN_CONSISTENT

    def _params(self):
        return {"crawl_rate": self.crawl_rate, "alpha": self._alpha_spec, "consistent": self._consistent}

    @property
    def alpha(self):
        """The alpha_k specification given to the constructor."""
        return self._alpha_spec

    @property
    def consistent(self):
        """True/False/None as given to the constructor (None and True compute the same numbers)."""
        return self._consistent

    cdef double _next_alpha(self) except? -1.0:
        if self._alpha_kind == ALPHA_CALLABLE:
            return check_scalar(self._alpha_fn(self._k + 1), "alpha", type(self).__name__ + ".update",
                                low=0.0, low_inclusive=False)
        return _lln_alpha(self._alpha_kind, self._alpha, self._k + 1)

    cdef void _step_alpha(self, int c, double p, double a) noexcept nogil:
        _seg_add(&self._s_old, &self._p_seg, &self._n1_seg, c, p)
        self._n1 += c
        self._k += 1
        self._rate = _count_rate(self._mode, self._k, self._n1, self._s_old, self._p_seg,
                                 self._n1_seg, p, a)

    def update(self, changed, interval=None, crawl_rate=None):
        cdef int c = _changed_value(changed, self)
        cdef double p, a, dt = 0.0
        if crawl_rate is None:
            p = self._crawl_rate
            if p != p:
                _missing_rate(self)
        else:
            p = _positive_value(crawl_rate, "crawl_rate", self)
        if interval is not None:
            dt = _positive_value(interval, "interval", self)
        a = self._next_alpha()
        self._elapsed += dt
        self._step_alpha(c, p, a)
        return self

    def update_many(self, changed, intervals=None, crawl_rate=None):
        c, dt, p = _check_many(self, changed, intervals, crawl_rate, self._crawl_rate)
        cdef const unsigned char[::1] cv = c
        cdef const double[::1] pv = p
        cdef Py_ssize_t j, m = cv.shape[0], ps = 0 if pv.shape[0] == 1 else 1
        cdef const double[::1] dv
        cdef double[::1] av = np.zeros(m)
        if self._alpha_kind == ALPHA_CALLABLE:
            caller = type(self).__name__ + ".update_many"
            for j in range(m):
                av[j] = check_scalar(self._alpha_fn(self._k + 1 + j), "alpha", caller,
                                     low=0.0, low_inclusive=False)
        else:
            for j in range(m):
                av[j] = _lln_alpha(self._alpha_kind, self._alpha, self._k + 1 + j)
        if dt is not None:
            dv = dt
            for j in range(m):
                self._elapsed += dv[j]
        with nogil:
            for j in range(m):
                self._step_alpha(cv[j], pv[j * ps], av[j])
        return self


class _AlphaSequence:
    """alpha_k = values[k - 1] for an alpha given as a sequence (k = 1, 2, ...)."""

    def __init__(self, values, caller):
        self.values = check_array(values, "alpha", caller, low=0.0, low_inclusive=False)
        self.caller = caller

    def __call__(self, k):
        if k > self.values.shape[0]:
            raise ValueError(
                f"The 'alpha' parameter of {self.caller} has {self.values.shape[0]} entries (alpha_1 .. alpha_n); "
                f"there is no alpha_k for k = {k}."
            )
        return float(self.values[k - 1])


def _alpha_code(alpha, caller):
    """Map an LLN alpha specification to (kind, constant, callable or None)."""
    if isinstance(alpha, str):
        presets = {"one": (ALPHA_CONST, 1.0), "log": (ALPHA_LOG, 0.0), "sqrt": (ALPHA_SQRT, 0.0)}
        if alpha not in presets:
            raise ValueError(
                f"The 'alpha' parameter of {caller} must be 'one', 'log', 'sqrt', a finite number > 0, a "
                f"callable k -> alpha_k or a 1-D sequence of alpha_1, alpha_2, ... Got {alpha!r} instead."
            )
        return presets[alpha] + (None,)
    if callable(alpha):
        return ALPHA_CALLABLE, 0.0, alpha
    if isinstance(alpha, (list, tuple, np.ndarray)) and np.ndim(alpha) == 1:
        return ALPHA_CALLABLE, 0.0, _AlphaSequence(alpha, caller)
    return ALPHA_CONST, check_scalar(alpha, "alpha", caller, low=0.0, low_inclusive=False), None


cdef class _SAEstimator(_OnlineEstimator):

    cdef double _eta
    cdef double _initial

    def __init__(self, *, crawl_rate=None, eta=0.75, initial=0.0):
        caller = type(self).__name__
        self._crawl_rate = _check_params_rate(crawl_rate, caller)
        self._eta = check_scalar(eta, "eta", caller, low=0.0, low_inclusive=False)
        self._initial = check_scalar(initial, "initial", caller, low=0.0)
        self._rate = self._initial

    def _params(self):
        return {"crawl_rate": self.crawl_rate, "eta": self._eta, "initial": self._initial}

    @property
    def eta(self):
        """Step-size exponent: eta_k = (k + 1)^(-eta)."""
        return self._eta

    cdef void _step(self, int c, double p) noexcept nogil:
        self._rate = _sa_step(self._rate, <double>c, p, _power_step(self._k, self._eta))
        self._k += 1


cdef class _SAMEstimator(_OnlineEstimator):

    cdef double _eta
    cdef double _beta
    cdef double _omega
    cdef double _initial
    cdef double _prev
    cdef double _b_prev     # cache of beta_{k-1} = _power_step(k - 1, beta); not part of the state

    def __init__(self, *, crawl_rate=None, eta=1.3, beta=0.75, omega=1.0, initial=0.0):
        caller = type(self).__name__
        self._crawl_rate = _check_params_rate(crawl_rate, caller)
        self._eta = check_scalar(eta, "eta", caller, low=0.0, low_inclusive=False)
        self._beta = check_scalar(beta, "beta", caller, low=0.0, low_inclusive=False)
        self._omega = check_scalar(omega, "omega", caller, low=0.0, low_inclusive=False)
        self._initial = check_scalar(initial, "initial", caller, low=0.0)
        self._rate = self._initial
        self._prev = self._initial

    def _params(self):
        return {"crawl_rate": self.crawl_rate, "eta": self._eta, "beta": self._beta,
                "omega": self._omega, "initial": self._initial}

    def _state(self):
        d = _OnlineEstimator._state(self)
        d["previous"] = self._prev
        return d

    def _set_state(self, state):
        _OnlineEstimator._set_state(self, state)
        self._prev = check_scalar(state["previous"], "previous", type(self).__name__ + ".from_dict")
        self._b_prev = _power_step(self._k - 1, self._beta) if self._k > 0 else 1.0

    @property
    def eta(self):
        """Step-size exponent: eta_k = (k + 1)^(-eta)."""
        return self._eta

    @property
    def beta(self):
        """Momentum exponent: beta_k = (k + 1)^(-beta)."""
        return self._beta

    @property
    def omega(self):
        """Momentum constant omega of eq. (10)."""
        return self._omega

    @property
    def previous(self):
        """The previous iterate z_{k-1}."""
        return self._prev

    cdef void _step(self, int c, double p) noexcept nogil:
        cdef double z = self._rate, e_k, b_k, zeta_k
        _sam_coefs(self._k, self._eta, self._beta, self._omega, self._b_prev, &e_k, &b_k, &zeta_k)
        self._rate = _sam_step(z, self._prev, <double>c, p, e_k, zeta_k)
        self._b_prev = b_k
        self._prev = z
        self._k += 1
