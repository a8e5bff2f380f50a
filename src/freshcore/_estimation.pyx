# cython: language_level=3
"""Compiled online change-rate estimators: Naive, LLN, SA and SAM of Avrachenkov, Patil and Thoppe (2022) [1]_
(the compiled twin of ``freshcore.estimation``).

Design
------
Layers as in STYLE.md:

1. ``cdef inline ... noexcept nogil`` step functions for one page and one
   observation (``_sa_step``, ``_sam_step``, ``_seg_add``, ...).  They are the
   single source of the arithmetic: the streaming classes and the batch
   kernels call the same functions, which is what makes the two paths
   bit-identical.
2. ``def`` batch kernels (``*_batch_update``) over typed memoryviews that
   release the GIL.  They never validate: ``freshcore.estimation`` does.
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
n1_seg = n1, p_seg = p) and ``count_common_update`` touches only k, n1 and
the rates (about half the memory traffic of ``count_batch_update``); the
first other rate stores them and ``count_batch_update`` takes over.

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


cdef inline double _sa_step(double y, double changed, double p, double eta_k) noexcept nogil:
    """y_{k+1} = y_k + eta_k [I_{k+1} (y_k + p) - y_k], eq. (2) of Avrachenkov et al. (2022)."""
    return y + eta_k * (changed * (y + p) - y)


cdef inline double _sam_step(double z, double z_prev, double changed, double p,
                             double eta_k, double zeta_k) noexcept nogil:
    """z_{k+1} = z_k + eta_k [I_{k+1} (z_k + p) - z_k] + zeta_k (z_k - z_{k-1}), eq. (3) of
    Avrachenkov et al. (2022)."""
    return z + eta_k * (changed * (z + p) - z) + zeta_k * (z - z_prev)


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

# Full updates (every page once, one crawl rate) run in blocks of _BLOCK pages:
# a block whose pages all share k uses loop-invariant step sizes and a loop the
# compiler vectorises (the same expression per element, so the same bits);
# other blocks, subsets and per-observation rates take the general loop.
cdef enum:
    _BLOCK = 512


cdef inline bint _same_k(const long long* k, Py_ssize_t s, Py_ssize_t e, long long k0) noexcept nogil:
    cdef bint same = 1
    cdef Py_ssize_t i
    for i in range(s, e):
        same &= k[i] == k0
    return same


cdef void _sa_general(long long* k, double* y, const unsigned char* c, const Py_ssize_t* pages,
                      const double* p, Py_ssize_t ps, Py_ssize_t j0, Py_ssize_t j1, double eta,
                      long long* last_k, double* eta_k) noexcept nogil:
    cdef Py_ssize_t j, i
    cdef long long kk
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = k[i]
        if kk != last_k[0]:
            eta_k[0] = _power_step(kk, eta)
            last_k[0] = kk
        y[i] = _sa_step(y[i], <double>c[j], p[j * ps], eta_k[0])
        k[i] = kk + 1


def sa_batch_update(long long[::1] k, double[::1] y, const unsigned char[::1] changed,
                    const Py_ssize_t[::1] pages, const double[::1] p, double eta):
    """SA step for observation j on page ``pages[j]`` (or j when ``pages`` is None), in order.

    ``changed`` holds 0/1 bytes; ``p`` has length 1 (one rate for all) or
    ``len(changed)``.
    """
    cdef Py_ssize_t m = changed.shape[0], s, e, i
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef const Py_ssize_t* pg = NULL
    if pages is not None:
        pg = &pages[0]
    cdef long long* kp = &k[0]
    cdef double* yp = &y[0]
    cdef const unsigned char* cp = &changed[0]
    cdef const double* pp = &p[0]
    cdef long long k0, last_k = -1
    cdef double eta_k = 0.0, pv = p[0]
    with nogil:
        if pg != NULL or ps != 0:
            _sa_general(kp, yp, cp, pg, pp, ps, 0, m, eta, &last_k, &eta_k)
        else:
            s = 0
            while s < m:
                e = s + _BLOCK if s + _BLOCK < m else m
                k0 = kp[s]
                if _same_k(kp, s, e, k0):
                    if k0 != last_k:
                        eta_k = _power_step(k0, eta)
                        last_k = k0
                    for i in range(s, e):
                        yp[i] = _sa_step(yp[i], <double>cp[i], pv, eta_k)
                        kp[i] = k0 + 1
                else:
                    _sa_general(kp, yp, cp, NULL, pp, 0, s, e, eta, &last_k, &eta_k)
                s = e


cdef void _sam_general(long long* k, double* z, double* zp, const unsigned char* c, const Py_ssize_t* pages,
                       const double* p, Py_ssize_t ps, Py_ssize_t j0, Py_ssize_t j1,
                       double eta, double beta, double omega,
                       long long* last_k, double* eta_k, double* zeta_k) noexcept nogil:
    cdef Py_ssize_t j, i
    cdef long long kk
    cdef double zi, b_k
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = k[i]
        if kk != last_k[0]:
            _sam_coefs(kk, eta, beta, omega, _power_step(kk - 1, beta) if kk > 0 else 1.0,
                       eta_k, &b_k, zeta_k)
            last_k[0] = kk
        zi = z[i]
        z[i] = _sam_step(zi, zp[i], <double>c[j], p[j * ps], eta_k[0], zeta_k[0])
        zp[i] = zi
        k[i] = kk + 1


def sam_batch_update(long long[::1] k, double[::1] z, double[::1] z_prev,
                     const unsigned char[::1] changed, const Py_ssize_t[::1] pages,
                     const double[::1] p, double eta, double beta, double omega):
    """SAM step for observation j on page ``pages[j]`` (or j), in order; see ``sa_batch_update``."""
    cdef Py_ssize_t m = changed.shape[0], s, e, i
    if m == 0:
        return
    cdef Py_ssize_t ps = 0 if p.shape[0] == 1 else 1
    cdef const Py_ssize_t* pg = NULL
    if pages is not None:
        pg = &pages[0]
    cdef long long* kp = &k[0]
    cdef double* zv = &z[0]
    cdef double* zpv = &z_prev[0]
    cdef const unsigned char* cp = &changed[0]
    cdef const double* pp = &p[0]
    cdef long long k0, last_k = -1
    cdef double eta_k = 0.0, zeta_k = 0.0, b_k = 0.0, zi, pv = p[0]
    with nogil:
        if pg != NULL or ps != 0:
            _sam_general(kp, zv, zpv, cp, pg, pp, ps, 0, m, eta, beta, omega, &last_k, &eta_k, &zeta_k)
        else:
            s = 0
            while s < m:
                e = s + _BLOCK if s + _BLOCK < m else m
                k0 = kp[s]
                if _same_k(kp, s, e, k0):
                    if k0 != last_k:
                        _sam_coefs(k0, eta, beta, omega, _power_step(k0 - 1, beta) if k0 > 0 else 1.0,
                                   &eta_k, &b_k, &zeta_k)
                        last_k = k0
                    for i in range(s, e):
                        zi = zv[i]
                        zv[i] = _sam_step(zi, zpv[i], <double>cp[i], pv, eta_k, zeta_k)
                        zpv[i] = zi
                        kp[i] = k0 + 1
                else:
                    _sam_general(kp, zv, zpv, cp, NULL, pp, 0, s, e, eta, beta, omega, &last_k, &eta_k, &zeta_k)
                s = e


cdef void _count_general(long long* k, long long* n1, long long* n1_seg, double* p_seg, double* s_old,
                         double* rate, const unsigned char* c, const Py_ssize_t* pages,
                         const double* p, Py_ssize_t ps, Py_ssize_t j0, Py_ssize_t j1,
                         int mode, int alpha_kind, double alpha, const double* alpha_values,
                         long long* last_k, double* a) noexcept nogil:
    cdef Py_ssize_t j, i
    cdef long long kk
    cdef int cj
    cdef double pj
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = k[i] + 1
        cj = c[j]
        pj = p[j * ps]
        _seg_add(&s_old[i], &p_seg[i], &n1_seg[i], cj, pj)
        n1[i] += cj
        k[i] = kk
        if alpha_kind == ALPHA_CALLABLE:
            a[0] = alpha_values[j]
        elif alpha_kind != ALPHA_CONST and kk != last_k[0]:
            a[0] = _lln_alpha(alpha_kind, alpha, kk)
            last_k[0] = kk
        rate[i] = _count_rate(mode, kk, n1[i], s_old[i], p_seg[i], n1_seg[i], pj, a[0])


def count_batch_update(long long[::1] k, long long[::1] n1, long long[::1] n1_seg,
                       double[::1] p_seg, double[::1] s_old, double[::1] rate,
                       const unsigned char[::1] changed, const Py_ssize_t[::1] pages,
                       const double[::1] p, int mode, int alpha_kind, double alpha,
                       const double[::1] alpha_values):
    """Naive/LLN step for observation j on page ``pages[j]`` (or j), in order.

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
    cdef long long* kp = &k[0]
    cdef long long* n1p = &n1[0]
    cdef long long* n1s = &n1_seg[0]
    cdef double* psg = &p_seg[0]
    cdef double* so = &s_old[0]
    cdef double* rt = &rate[0]
    cdef const unsigned char* cp = &changed[0]
    cdef const double* pp = &p[0]
    cdef long long last_k = -1
    cdef double a = alpha
    # No blocked fast path here: the int64 -> double conversions do not vectorise
    # without AVX-512, and a blocked variant measured slower than this loop,
    # which already runs at about one np.copyto pass over the state.
    with nogil:
        _count_general(kp, n1p, n1s, psg, so, rt, cp, pg, pp, ps, 0, m, mode, alpha_kind, alpha, av,
                       &last_k, &a)


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


cdef void _common_general(long long* k, long long* n1, double* rate, const unsigned char* c,
                          const Py_ssize_t* pages, double p, Py_ssize_t j0, Py_ssize_t j1,
                          int mode, int alpha_kind, double alpha, const double* alpha_values,
                          long long* last_k, double* a) noexcept nogil:
    cdef Py_ssize_t j, i
    cdef long long kk, nn
    for j in range(j0, j1):
        i = j if pages == NULL else pages[j]
        kk = k[i] + 1
        nn = n1[i] + c[j]
        n1[i] = nn
        k[i] = kk
        if alpha_kind == ALPHA_CALLABLE:
            a[0] = alpha_values[j]
        elif alpha_kind != ALPHA_CONST and kk != last_k[0]:
            a[0] = _lln_alpha(alpha_kind, alpha, kk)
            last_k[0] = kk
        rate[i] = _common_rate(mode, kk, nn, p, a[0])


cdef inline void _common_block(long long* k, long long* n1, double* out, const unsigned char* c,
                               Py_ssize_t s, Py_ssize_t e, long long k1, double p, double a,
                               int mode) noexcept nogil:
    """Full-update block [s, e) whose pages all had k = k1 - 1; the rate of page i goes to out[i - s].

    ``k`` may be NULL (the batch keeps one shared k, see ``count_shared_update``):
    the test is loop-invariant, so the compiler unswitches it.  The compiler
    vectorises both loops; 0 <= n1 <= k1 < 2^52 makes _u52_to_double exact,
    and k1 - n1 is formed in integers as in _common_rate, so the bits are
    those of _common_rate.
    """
    cdef Py_ssize_t i
    cdef long long nn
    cdef double dk = <double>k1
    if mode == MODE_NAIVE:
        for i in range(s, e):
            nn = n1[i] + c[i]
            n1[i] = nn
            if k != NULL:
                k[i] = k1
            out[i - s] = (p * _u52_to_double(nn)) / dk
    else:
        for i in range(s, e):
            nn = n1[i] + c[i]
            n1[i] = nn
            if k != NULL:
                k[i] = k1
            out[i - s] = (p * _u52_to_double(nn)) / (a + _u52_to_double(k1 - nn))


cdef void _common_full_shared(long long* n1, double* rt, const unsigned char* cp, Py_ssize_t m,
                              long long k1, double p, double a, int mode) noexcept nogil:
    """Full update of a batch whose pages all share k = k1 - 1 (no k array is touched)."""
    cdef double buf[_BLOCK]
    cdef bint stream = m >= _STREAM_MIN
    cdef Py_ssize_t s = 0, e
    while s < m:
        e = s + _BLOCK if s + _BLOCK < m else m
        if stream:
            _common_block(NULL, n1, buf, cp, s, e, k1, p, a, mode)
            _stream(&rt[s], buf, e - s)
        else:
            _common_block(NULL, n1, &rt[s], cp, s, e, k1, p, a, mode)
        s = e
    if stream:
        _sfence()


def count_shared_update(long long[::1] n1, double[::1] rate, const unsigned char[::1] changed,
                        long long k1, double p, int mode, int alpha_kind, double alpha):
    """``count_common_update`` for a full update of a batch whose pages all share k = k1 - 1.

    The common-rate batch keeps k as one number while every update covered all
    pages, so the kernel touches only ``n1``, the flags and ``rate`` (about 25
    bytes per page instead of 41).  Requires ``alpha_kind`` constant, log or sqrt
    and 1 <= k1 < 2^52 - 1; the numbers are those of ``count_common_update``
    bit for bit (the same ``_common_block``).
    """
    cdef Py_ssize_t m = changed.shape[0]
    if m == 0:
        return
    cdef double a = alpha if alpha_kind == ALPHA_CONST else _lln_alpha(alpha_kind, alpha, k1)
    with nogil:
        _common_full_shared(&n1[0], &rate[0], &changed[0], m, k1, p, a, mode)


def count_common_update(long long[::1] k, long long[::1] n1, double[::1] rate,
                        const unsigned char[::1] changed, const Py_ssize_t[::1] pages,
                        double p, int mode, int alpha_kind, double alpha,
                        const double[::1] alpha_values):
    """``count_batch_update`` for a batch whose every update so far used the one crawl rate ``p``.

    The segment arrays are then implicit (s_old = 0.0, p_seg = p, n1_seg = n1)
    and only ``k``, ``n1`` and ``rate`` are touched; the numbers are those of
    ``count_batch_update`` bit for bit (see ``_common_rate``).
    """
    cdef Py_ssize_t m = changed.shape[0], s, e
    if m == 0:
        return
    cdef const Py_ssize_t* pg = NULL
    if pages is not None:
        pg = &pages[0]
    cdef const double* av = NULL
    if alpha_values is not None:
        av = &alpha_values[0]
    cdef long long* kp = &k[0]
    cdef long long* n1p = &n1[0]
    cdef double* rt = &rate[0]
    cdef const unsigned char* cp = &changed[0]
    cdef long long k0, k1, last_k = -1
    cdef double a = alpha
    cdef double buf[_BLOCK]
    cdef bint stream = 0
    with nogil:
        if pg != NULL or alpha_kind == ALPHA_CALLABLE:
            _common_general(kp, n1p, rt, cp, pg, p, 0, m, mode, alpha_kind, alpha, av, &last_k, &a)
        else:
            # Full update: blocks whose pages share k run _common_block with the
            # block-invariant k + 1 and alpha_k; large updates stream the rates out.
            stream = m >= _STREAM_MIN
            s = 0
            while s < m:
                e = s + _BLOCK if s + _BLOCK < m else m
                k0 = kp[s]
                if k0 < _U52 - 1 and _same_k(kp, s, e, k0):
                    k1 = k0 + 1
                    if alpha_kind != ALPHA_CONST and k1 != last_k:
                        a = _lln_alpha(alpha_kind, alpha, k1)
                        last_k = k1
                    if stream:
                        _common_block(kp, n1p, buf, cp, s, e, k1, p, a, mode)
                        _stream(&rt[s], buf, e - s)
                    else:
                        _common_block(kp, n1p, &rt[s], cp, s, e, k1, p, a, mode)
                else:
                    _common_general(kp, n1p, rt, cp, NULL, p, s, e, mode, alpha_kind, alpha, av, &last_k, &a)
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
