# cython: language_level=3, auto_pickle=False
"""Compiled state of the crawl scheduler (001 Algorithm 1, SPEC section 4).

Layer 3 of STYLE.md: a ``cdef class`` that holds every per-page array and the
heaps, with ``nogil`` loops; ``freshcore.schedule.Scheduler`` validates and
delegates.  Nothing here validates user input.

At tick time ``t`` the scheduler crawls ``argmax_i V_i(tau_i(t))`` (ties to
the lowest index), ``tau_i(t) = (t - last_i) + b_i n_i`` (``b_i n_i`` read as
0 when ``n_i = 0``), with ``b_i`` the time-equivalent of a signal for the value
kind: ``beta_i`` for "exact"/"approx", 0 for "greedy" (signals ignored) and
``inf`` for "cis" when ``lambda_i Delta_i > 0`` (a signal is taken as proof of
a change).  Values are those of ``freshcore._value`` (the same ``cdef``
functions as ``freshcore.value.crawl_value``, so bit-identical to it).

Exactness: the slope invariant
------------------------------
Every value kind grows at a bounded, eventually decreasing pace:
``V'(tau) = mu alpha e^{-alpha tau} psi(tau) <= mu x e^{-x}`` with
``x = alpha tau`` (``psi(tau) <= tau``; Greedy: ``alpha = Delta``,
``psi = tau``; approx-j keeps the first j of the non-negative terms of
``psi``), so for every ``tau >= tau_0``

    V(tau) <= V(tau_0) + s (tau - tau_0),
    s = mu h(alpha tau_0),  h(x) = 1/e for x < 1, x e^{-x} for x >= 1

(``sup_{x' >= x} x' e^{-x'}``; tests/test_schedule_bounds.py checks it for
every kind).  When page ``j`` is evaluated at time ``t_0`` (value ``v_0``),
its bound is the line ``U_j(t) = v_0 + s_b (t - t_0) = s_b (t - k_j)``, valid
for every later ``t`` until the page is crawled or re-parameterised, where
``s_b >= s`` is the page's slope rounded up to a quarter octave and ``k_j =
t_0 - v_0/s_b`` (shaded by a few ulps of the times involved) is its key.  A
counted signal adds ``b_j`` to ``tau_j``, so it lowers the key by ``b_j``
(no evaluation); ``b_j = inf`` (Greedy-CIS, ``nu = 0``) re-evaluates.
Constant values (``tau = inf``, ``mu = 0``, ``Delta = 0``, ``alpha = 0``,
or a slope that underflows) have ``s = 0``: ``U_j = v_0``, key ``-v_0``.

Greedy, where ``V`` is convex (``Delta tau_0 < 1``, or ``v_0 = 0``), may use
a line bounding ``ln V`` instead: ``V = (mu/Delta) F(Delta tau)`` with ``F``
the Gamma(2, 1) distribution function, log-concave since its density
``x e^{-x}`` is, so the tangent of ``ln V`` at ``tau_0`` (slope ``V'/V``)
bounds ``ln V`` everywhere; for ``v_0 = 0``, ``V <= (mu/e) tau`` and
``ln tau <= ln tau_1 - 1 + tau/tau_1`` give a line of slope ``1/tau_1``
(``tau_1 = e L/mu``, ``L`` the last winning value).  Of the two lines, the
one that reaches ``L`` later is kept (tests/test_schedule_bounds.py checks
both bounds).  A line bounding ``V`` from ``v_0 ~ mu Delta tau_0^2/2`` with
slope ``mu/e`` is loose by a factor ``~1/x``; the one bounding ``ln V``
follows the quadratic growth, which is what all pages do at start-up.

The pages are kept in buckets by ``s_b`` (bucket 0: constant values; then
four per octave, ``(1/2 + (q + 1)/8) 2**e`` for slopes from 2**-100 to 2**50,
smaller ones rounded up to the first, once for lines bounding ``V`` and once
for lines bounding ``ln V``; above that an unbounded bucket whose bound is
``inf``), each a 4-ary min-heap on ``(k_j, j)`` (keys stored beside the
ids): in one bucket the page with the smallest key has the largest bound,
and a level change of any kind costs nothing, since keys do not depend on a
level.

A tick at ``t``: take the bucket whose top has the largest bound (ties: the
lower page id; a bound of ``ln V`` compared through ``exp``), pop that page,
evaluate it exactly and keep the best value ``v*`` so far (ties: lowest id;
buckets whose top's bound is below ``v*``, or ``ln v*``, leave the tick's
candidates, since ``v*`` only grows); repeat until every bound left,
inflated for rounding (``U (1 + 1e-11) + s_b 8 eps |t|``; for ``ln V``,
``U + 1e-11 (1 + |U|) + s_b 8 eps |t|``), is below ``v*`` (or ``ln v*``; or
equal, for a higher id).  Every page not popped then has ``V_j(t) <=
U_j(t) < v*``: the best popped page is the exact argmax.  It is crawled
(``last = t``, ``n = 0``) and every popped page goes back with the line from
its value at ``t``.  Pages popped at a tick are those whose bound reaches the
winning value: the pages within ``s_b/R`` of the top and those whose line
from an earlier evaluation overshot (a page whose value is concave near its
crawl converges like Newton's method from below).  Work per tick is a few
evaluations and O(log m) heap work each, independent of the crawl rate and of
any level.

The tick's candidates: a top whose bound exceeded the winning value was
popped, so at the next tick every top's bound is within a few ticks' growth of
the last winning value ``L``, and the tick's winning value is within about
1e-6 of ``L`` (m = 1e6).  Only the buckets whose top reaches ``theta = L (1 -
1e-6)`` (``ln L - 1e-6`` for ``ln V``) enter the search (a handful of the
~140 nonempty ones at m = 1e6, instead of a scan of all of them at every
pop); the others wait, and rejoin only if the tick's best value ends below
``theta`` (their bounds are then compared with it as above).  Either way every
bucket whose top reaches the best value is searched, so the decision is the
same; only the order of the pops (so which pages are evaluated) can differ.

Greedy's park: pages far below the winning value
-------------------------------------------------
In steady state almost every page is far below the winning value, and a
line bound reaches it only after ~7 pops (each closes ~85-90% of the gap: the
slope is rounded up to its bucket's).  Greedy's value has an exact inverse, so
Greedy keeps a page whose value is below the park level ``P`` (``plevel``, a
margin ``pmargin`` below the last winning value: 1/sqrt(m), 1e-3 at m = 1e6)
apart, *parked*, keyed by the time it reaches ``P (1 - 1e-9)`` (``_park_time``:
Lambert W; the shade covers the rounding of the inverse and of the values):
**until its key, a parked page's value is below the park level**.  At a
tick the parked pages whose key has come are popped and evaluated first;
every other parked page is below ``P``, so the search over the buckets stands
as above provided the tick's best value ends at or above ``P``.  If it ends
below (the winning value fell by more than the margin: a higher rate, or
the swings of small ``m``), every parked page is evaluated (O(parked),
``n_unparks``), the margin doubles and the level is lowered.  Raising the
level costs nothing (keys of a lower level are earlier, so still valid); it
follows the winning value up, and the margin halves again after a cycle
without a fall.  The buckets then hold only the ~m x margin pages near the
top (~1e3 at m = 1e6), each popped ~3 times on its way up (m = 1e6: 4.0
evaluations per decision instead of 7.3).  Other value kinds do not park.

The parked pages are split at a horizon ``phor``, m/32 ticks ahead: those due
by it are in ``PARK``, a calendar of ticks (a list per tick of the pages
whose key falls after the last tick and by that one: O(1) to park, to pop
and, the lists holding ~1 page, to remove; a tick pops its list, and
prefetches the next tick's pages), the others in ``FAR``, an unsorted array
whose keys are all after the horizon.  When a tick reaches the horizon, it
moves m/32 ticks on and the ``FAR`` pages due by then join the calendar, so
each ``FAR`` page is read once per move (~32 sequential entries per tick).
A change of rate changes the ticks: the calendar's pages go back to ``FAR``
and the next tick moves the horizon.  The split is not state: files say
``PARK`` for both, and a loaded state starts with the horizon at ``-inf``.
(A binary heap in place of the calendar put a quarter of a decision's time
at m = 1e6 in its sift-down, mostly cache misses in its lower levels.)

Rounding: the bound must hold for the computed values, which are evaluated
at ``tau`` computed as ``fl(fl(t - last) + fl(b n))``.  Its error, at most
``3 eps (|t| + |t_0| + 2 |last| + 2 |b n|)``, is covered by shading the key
by ``8 eps (|t_0| + |last| + |b n|)`` time units and inflating the bound by
``s_b 8 eps |t|`` at comparison; the relative inflation ``1e-11`` covers the
values' own rounding (V is accurate to ~1e-15 relative, tests/test_value.py)
and that of the key arithmetic.

Dynamic pages: page ids are slots of the per-page arrays (``m`` slots handed
out, a removed page's bucket marked dead, capacity grown by doubling), so "ties to the lowest
index" is "lowest id".  A removed page leaves its heap; an added or
re-parameterised page is evaluated at the current time and placed with its
line (O(log m), no rebuild).

Start-up: every live page is evaluated once at the first tick and the buckets
are heapified (O(m)).  Pages that all start crawled at time 0 have values
that grow together, quadratically at first, and the first ticks, at which
``tau`` doubles from one tick to the next, pop many pages (m = 1e5 Greedy:
118 evaluations per tick over the first m/10 ticks, 1517 with lines bounding
``V`` only; "exact" has only those).  ``last`` (``Scheduler(last_crawl=...)``)
staggers the initial crawl times and avoids that.
"""

from libc.math cimport INFINITY, fabs, exp, log, frexp, ldexp, sqrt
from libc.float cimport DBL_EPSILON
from libc.stdint cimport int32_t, uint32_t, uint16_t, uint64_t
from libc.stdlib cimport malloc, realloc, free, abort
from libc.string cimport memcpy, memmove

cimport cython
import numpy as np

from freshcore._value cimport greedy_value_ex, page_value, cis_value, signal_beta
from freshcore._core cimport residual1_inverse

cdef enum:
    SUBB = 4            # buckets per octave of slopes
    NOCT = 150          # octaves: slopes 2**-100 .. 2**50
    EOFFSET = 100
    NS = NOCT * SUBB    # slope buckets of each family
    NBUCKETS = 4 + 2 * NS  # 0: constant values; 1 .. NS: lines bounding V; NS+1 .. 2 NS: lines bounding ln V
    UNBOUNDED = 1 + 2 * NS
    PARK = 2 + 2 * NS   # Greedy pages keyed by the time they reach the park level, due before the horizon
    FAR = 3 + 2 * NS    # the other parked pages: an unsorted array (keys at or after the horizon)
    FAR_SHARE = 32      # the horizon moves by m/FAR_SHARE ticks
    DEAD = 65534        # bucket of a removed page
    NOT_PLACED = 65535  # bucket of a live page in no heap (popped, or before the first tick)

ctypedef uint16_t bucket_t

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define FRESHCORE_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define FRESHCORE_PREFETCH(p) ((void)0)
    #endif
    """
    void FRESHCORE_PREFETCH(const void* p) noexcept nogil

cdef extern from *:
    """
    /* The tick's scan of one family's bucket tops (by position a in its part of act): abd[a] = the
       inflated bound u + mg (f + |u|) + s tpad, u = s (t - atk[a]), s = asl[a] (_bound's arithmetic,
       in that order; f = 1 for the lines bounding ln V, else 0); the buckets whose bound reaches th
       are appended to cb/ub (from nc on) in act's order; returns the new count.  SSE2 (baseline on
       x86-64): two buckets per instruction and a bit mask of those that pass, so neither the bounds
       nor the choice take a branch per bucket (which bucket passes changes from tick to tick).
       Elsewhere the same arithmetic one bucket at a time. */
    #if (defined(__SSE2__) || defined(_M_X64)) && !defined(FRESHCORE_NO_SIMD)
    #include <emmintrin.h>
    #define FRESHCORE_SCAN_SSE2 1
    #endif
    #if defined(__GNUC__) || defined(__clang__)
    #define FRESHCORE_CTZ64(x) __builtin_ctzll(x)
    #else
    static int FRESHCORE_CTZ64(unsigned long long x) { int k = 0; while (!(x & 1)) { x >>= 1; k++; } return k; }
    #endif
    static Py_ssize_t freshcore_scan(const double* asl, const double* atk, const int32_t* act,
                                     Py_ssize_t n, double t, double tpad, double mg, double f,
                                     double th, double* abd, int32_t* cb, double* ub, Py_ssize_t nc) {
        Py_ssize_t a = 0;
    #ifdef FRESHCORE_SCAN_SSE2
        const __m128d vt = _mm_set1_pd(t), vtp = _mm_set1_pd(tpad), vmg = _mm_set1_pd(mg);
        const __m128d vf = _mm_set1_pd(f), vth = _mm_set1_pd(th);
        const __m128d absm = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
        Py_ssize_t c0, end;
        /* 64 buckets at a time: the bounds and a bit mask of those that pass (no dependence from one
           pair to the next), then the passing ones (~3 of ~60) from the mask */
        for (c0 = 0; c0 + 2 <= n; c0 += 64) {
            unsigned long long mask = 0;
            end = c0 + 64 < n ? c0 + 64 : n;
            for (a = c0; a + 2 <= end; a += 2) {
                __m128d s = _mm_loadu_pd(asl + a);
                __m128d u = _mm_mul_pd(s, _mm_sub_pd(vt, _mm_loadu_pd(atk + a)));
                __m128d r = _mm_add_pd(_mm_add_pd(u, _mm_mul_pd(vmg, _mm_add_pd(vf, _mm_and_pd(u, absm)))),
                                       _mm_mul_pd(s, vtp));
                _mm_storeu_pd(abd + a, r);
                mask |= (unsigned long long)_mm_movemask_pd(_mm_cmpge_pd(r, vth)) << (a - c0);
            }
            while (mask) {
                Py_ssize_t k = c0 + FRESHCORE_CTZ64(mask);
                cb[nc] = act[k]; ub[nc] = abd[k]; nc++;
                mask &= mask - 1;
            }
        }
    #endif
        for (; a < n; a++) {
            double s = asl[a], u = s * (t - atk[a]);
            double r = u + mg * (f + fabs(u)) + s * tpad;
            abd[a] = r;
            if (r >= th) { cb[nc] = act[a]; ub[nc] = r; nc++; }
        }
        return nc;
    }
    /* The rejoin: the buckets of one family whose bound abd[a] reaches th, appended as above. */
    static Py_ssize_t freshcore_pick(const double* abd, const int32_t* act, Py_ssize_t n, double th,
                                     int32_t* cb, double* ub, Py_ssize_t nc) {
        Py_ssize_t a = 0;
    #ifdef FRESHCORE_SCAN_SSE2
        const __m128d vth = _mm_set1_pd(th);
        for (; a + 2 <= n; a += 2) {
            /* written whether or not they pass, kept if they do (cb and ub have room for one more) */
            int bits = _mm_movemask_pd(_mm_cmpge_pd(_mm_loadu_pd(abd + a), vth));
            cb[nc] = act[a]; ub[nc] = abd[a]; nc += bits & 1;
            cb[nc] = act[a + 1]; ub[nc] = abd[a + 1]; nc += bits >> 1;
        }
    #endif
        for (; a < n; a++)
            if (abd[a] >= th) { cb[nc] = act[a]; ub[nc] = abd[a]; nc++; }
        return nc;
    }
    static Py_ssize_t freshcore_due_before(const double* keys, Py_ssize_t i, double hor) {
    #ifdef FRESHCORE_SCAN_SSE2
        const __m128d vh = _mm_set1_pd(hor);
        while (i >= 4) {
            __m128d lo = _mm_cmple_pd(_mm_loadu_pd(keys + i - 4), vh);
            __m128d hi = _mm_cmple_pd(_mm_loadu_pd(keys + i - 2), vh);
            if (_mm_movemask_pd(_mm_or_pd(lo, hi)))
                break;
            i -= 4;
        }
    #endif
        while (i > 0 && !(keys[i - 1] <= hor))
            i--;
        return i - 1;
    }
    """
    Py_ssize_t freshcore_due_before(const double* keys, Py_ssize_t i, double hor) noexcept nogil
    Py_ssize_t freshcore_pick(const double* abd, const int32_t* act, Py_ssize_t n, double th, int32_t* cb,
                              double* ub, Py_ssize_t nc) noexcept nogil
    Py_ssize_t freshcore_scan(const double* asl, const double* atk, const int32_t* act, Py_ssize_t n,
                              double t, double tpad, double mg, double f, double th, double* abd,
                              int32_t* cb, double* ub, Py_ssize_t nc) noexcept nogil

cdef extern from *:
    """
    #include <stdlib.h>
    #include <string.h>
    #ifdef _WIN32
    #include <malloc.h>
    #endif
    /* 64-byte aligned blocks for the bucket heaps (NULL if memory is exhausted) */
    static void* freshcore_aligned_alloc(size_t n) {
        void* p = NULL;
    #ifdef _WIN32
        p = _aligned_malloc(n, 64);
    #else
        if (posix_memalign(&p, 64, n) != 0) p = NULL;
    #endif
        return p;
    }
    static void freshcore_aligned_free(void* p) {
    #ifdef _WIN32
        _aligned_free(p);
    #else
        free(p);
    #endif
    }
    """
    void* freshcore_aligned_alloc(size_t n) noexcept nogil
    void freshcore_aligned_free(void* p) noexcept nogil

cdef double PARK_EPS = 1e-4   # the smallest park margin (the park level's relative distance below the winning value)
cdef double PARK_SHADE = 1e-9  # park keys are the times of reaching park_level (1 - PARK_SHADE)
cdef double PREFILTER = 1e-6  # relative margin below the last winning value of the tick's candidates
cdef double MARGIN = 1e-11      # relative inflation of a bound (rounding of values and keys)
cdef double SAFETY = 1.0 + 1e-9  # on the slope before it is rounded up to its bucket's
cdef double INV_E = 0.36787944117144233  # 1/e rounded up (0.367879441171442321595...)
cdef double E_UP = 2.7182818284590455  # e rounded up

#: Number of buckets (constant values, the slopes, the unbounded one).
N_BUCKETS = NBUCKETS

#: Bucket code of the lines of unbounded slope.
UNBOUNDED_CODE = UNBOUNDED

#: Bucket code of a parked Greedy page (keyed by the time it reaches the park level) due before the horizon.
PARK_CODE = PARK

#: Bucket code of a parked Greedy page due at or after the horizon (an unsorted array).
FAR_CODE = FAR

#: Bucket code of a live page in no heap (and, in exported states, of a removed page).
NOT_PLACED_CODE = NOT_PLACED

#: Largest signal count per page between two crawls (32-bit counters); ``Scheduler`` refuses more.
MAX_SIGNALS = 4294967295


cdef struct HotRec:  # the per-page fields a pop reads and writes: one 32-byte record (_HOT_DTYPE)
    double last
    double delta
    double mu
    int32_t hpos
    uint32_t ncis


cdef struct CalEntry:  # an entry of the PARK calendar (16 bytes, four to a cache line)
    double key
    int32_t id    # page (-1: a free entry)
    int32_t next  # next entry of its tick's list (-1: the last), or of the free list


cdef enum:
    HEAP_LEAD = 3  # unused entries before entry 0 of a heap: the siblings 4i+1 .. 4i+4 share one aligned block


cdef double _park_time(double last, double dl, double mu, double level) noexcept nogil:
    """A time before which the Greedy value of a page (last crawl ``last``, Delta, mu > 0) is below ``level``.

    The time at which ``V = (mu/Delta) F(Delta tau)`` reaches ``P = level
    (1 - PARK_SHADE)``: ``F(x) = y = P Delta/mu`` at ``x = -(1 + W_{-1}(-(1 -
    y)/e))`` (``_core.residual1_inverse``, as the periodic rates; accurate to
    4e-15 relative, the largest excess over a 50-digit reference of 7000
    ``y`` from 1e-300 to 1 - 1e-12, near ``y = 0.02`` where the Lambert W
    leaves its branch-point series: ``x`` is taken 1e-14 lower), less a few
    ulps of the times; ``inf`` if ``y >= 1`` (V stays below P).
    ``PARK_SHADE`` (1e-9 of the level, so at least ~5e-10 of ``x``) covers
    the errors of ``x`` (~1e-15 relative), of ``tau = t - last`` and of the
    computed values (tests/test_schedule_bounds.py checks both sides).
    """
    cdef double y, x, key
    y = (level * (1.0 - PARK_SHADE)) * dl / mu
    if not (y < 1.0):
        return INFINITY
    x = residual1_inverse(y, 1.0 - y) * (1.0 - 1e-14)
    key = last + x / dl
    return (key - 8.0 * DBL_EPSILON * (fabs(last) + fabs(key))) - 1e-300


def scan_kernel(const double[::1] asl, const double[::1] atk, const int32_t[::1] act, double t, double tpad,
                double mg, double f, double th, double[::1] abd, int32_t[::1] cb, double[::1] ub):
    """The tick's scan of one family's tops (``freshcore_scan``; for tests, no validation): fills abd[:n]
    and cb/ub[:count] (cb and ub need n + 1 entries); returns the count."""
    cdef Py_ssize_t n = asl.shape[0], nc
    with nogil:
        nc = freshcore_scan(&asl[0] if n else NULL, &atk[0] if n else NULL, &act[0] if n else NULL, n, t, tpad,
                            mg, f, th, &abd[0] if n else NULL, &cb[0], &ub[0], 0)
    return nc


def pick_kernel(const double[::1] abd, const int32_t[::1] act, double th, int32_t[::1] cb, double[::1] ub):
    """The rejoin's choice (``freshcore_pick``; for tests): cb/ub[:count] (n + 1 entries); returns the count."""
    cdef Py_ssize_t n = abd.shape[0], nc
    with nogil:
        nc = freshcore_pick(&abd[0] if n else NULL, &act[0] if n else NULL, n, th, &cb[0], &ub[0], 0)
    return nc


def park_time_kernel(const double[::1] last, const double[::1] delta, const double[::1] mu, double level,
                     double[::1] out):
    """out[i] = the park key of a Greedy page at ``level`` (``_park_time``; for tests, no validation)."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(out.shape[0]):
            out[i] = _park_time(last[i], delta[i], mu[i], level)


cdef inline Py_ssize_t _reaching(int32_t* cb, double* ub, Py_ssize_t n, double th) noexcept nogil:
    """Keep the candidates (cb, ub)[:n] whose bound reaches th, in order; returns their number."""
    cdef Py_ssize_t a, i = 0
    for a in range(n):
        if ub[a] >= th:
            cb[i] = cb[a]
            ub[i] = ub[a]
            i += 1
    return i


cdef void* _heap_block(void* old, size_t n_old, size_t n, size_t item) noexcept nogil:
    """A heap array of n entries of item bytes, its first n_old entries copied from old (freed).

    Arrays start HEAP_LEAD entries into a 64-byte aligned block: the 4 keys
    (32 bytes) and the 4 ids (16 bytes) of a group of siblings each sit in one
    cache line.  NULL for n = 0; aborts if memory is exhausted.
    """
    cdef char* q = NULL
    if n > 0:
        q = <char*>freshcore_aligned_alloc((n + HEAP_LEAD) * item)
        if q == NULL:
            abort()
        q += HEAP_LEAD * item
        if old != NULL and n_old > 0:
            memcpy(q, old, (n_old if n_old < n else n) * item)
    if old != NULL:
        freshcore_aligned_free(<char*>old - HEAP_LEAD * item)
    return q


cdef inline void* _resized(void* p, size_t nbytes) noexcept nogil:
    """realloc, aborting if memory is exhausted (callers hold no GIL and cannot raise)."""
    cdef void* q = realloc(p, nbytes if nbytes > 0 else 1)
    if q == NULL:
        abort()
    return q


@cython.final
cdef class SchedulerState:
    """Per-page state and the slope buckets' heaps (see the module notes).

    ``SchedulerState(delta, mu, nu, recall, kind, terms, rate, signal_delay,
    last=None)``; kind 0 exact, 1 approx-``terms``, 2 greedy, 3 cis.
    ``alpha``, ``gamma`` and ``beta`` are recomputed from these when needed
    (the same floating-point operations as ``PageModel``, ``beta`` by the
    same compiled function, so the same bits), to save memory.

    Memory per page slot: a 32-byte record of the fields a pop reads and
    writes (``last, delta, mu``; ``hpos``, the position in the bucket's heap,
    or a parked page's calendar entry or FAR position; ``ncis``, 32-bit
    signal counts), one cache line for all of them when the record array is
    32-byte aligned (it is), 2 arrays of 8 bytes (``nu, recall``, read by
    the value kinds that use signals), the 2-byte ``bucket`` (also the live
    flag), and the 12-byte heap or FAR entry (key and page id; 16 bytes with
    the list link for the ~m/32 pages in the calendar; the bucket heaps grow
    by n/16 + 4 and shrink past n/8 + 16, FAR by n/128 + 64 and past
    n/16 + 64).  The per-tick buffer of popped pages is sized to the largest
    tick (a few entries in steady state).
    """

    # delta, mu, last, hpos, ncis: strided views of the fields of one record array (_hot_records), for
    # the Python accessors; the nogil code reads and writes them through rec
    cdef object hot
    cdef HotRec* rec  # hot's records (the nogil code reads and writes the fields through it)
    cdef double[:] delta, mu, last
    cdef uint32_t[:] ncis
    cdef int32_t[:] hpos
    cdef double[::1] nu, recall
    cdef int kind
    cdef long terms
    cdef Py_ssize_t m, cap, n_live
    cdef bucket_t[::1] bucket
    # bucket heaps: 4-ary min-heaps on (key, id), keys stored beside the ids
    cdef int32_t** bids
    cdef double** bkey
    cdef int32_t* bsize    # 32-bit: at most 2**31 - 3 pages
    cdef int32_t* bcap
    cdef double* bslope    # the slope of buckets 0 .. NS (those of NS + 1 .. 2 NS are the same: _sb)
    # the nonempty slope buckets (the tick's scan): those of family f (1: lines bounding ln V) at
    # positions 0 .. nact[0] - 1 (family 0) and acap[0] .. acap[0] + nact[1] - 1 (family 1) of act, and by
    # position a:
    cdef int32_t* act
    cdef double* asl       # the bucket's slope,
    cdef double* atk       # its top's key (bkey[b][0]; atk[-1] takes the writes for the other buckets),
    cdef double* abd       # and its top's bound at the tick's scan (contiguous: the scan vectorises)
    cdef double* atk_base  # (atk - 1)
    cdef int32_t* actpos   # position of a bucket in act, -1 if not there
    cdef double* ub        # a tick's candidate buckets (cb) and the bounds of their tops (ub)
    cdef int32_t* cb
    cdef Py_ssize_t nact[2]
    cdef Py_ssize_t acap[2]  # (act and the arrays by position hold acap[0] + acap[1], cb and ub 4 more)
    # pages popped at the current tick
    cdef int32_t* pid
    cdef double* pval
    cdef double* pex     # e^{-Delta tau} of a popped Greedy page's evaluation (-1: not computed)
    cdef Py_ssize_t pcap
    cdef double origin, r_now, t_now, delay, lref, log_lref
    cdef double plevel, pmargin  # Greedy's park level (0: none) and its relative distance below the winning value
    cdef long long pfall         # the tick of the last fall below the park level
    cdef double phor             # the horizon: every page in FAR has a key > phor (-inf: none known)
    # PARK, a calendar of ticks: entry i of cal (a pool, ctop entries used, free ones chained from
    # cfree) is in the list of the first tick after kdone at which its key is due, headed by
    # chead[tick & cmask]; a parked page's hpos is its entry
    cdef CalEntry* cal
    cdef Py_ssize_t ccap, ctop
    cdef int32_t cfree
    cdef int32_t* chead
    cdef long long cmask
    cdef long long kdone         # the last tick whose calendar slot was popped
    cdef long long k, nticks
    cdef bint built
    cdef readonly long long n_evaluations
    cdef readonly long long n_unparks  # ticks whose best value ended below the park level

    def __cinit__(self):
        cdef int b
        self.bids = <int32_t**>malloc(NBUCKETS * sizeof(int32_t*))
        self.bkey = <double**>malloc(NBUCKETS * sizeof(double*))
        self.bsize = <int32_t*>malloc(NBUCKETS * sizeof(int32_t))
        self.bcap = <int32_t*>malloc(NBUCKETS * sizeof(int32_t))
        self.bslope = <double*>malloc((NS + 1) * sizeof(double))
        self.asl = self.atk_base = self.atk = self.abd = self.ub = NULL
        self.act = self.cb = NULL
        self.acap[0] = self.acap[1] = 0
        self.nact[0] = self.nact[1] = 0
        self._act_cap(0, 32)
        self._act_cap(1, 32)
        self.actpos = <int32_t*>malloc(NBUCKETS * sizeof(int32_t))
        if (self.bids == NULL or self.bkey == NULL or self.bsize == NULL or self.bcap == NULL or self.bslope == NULL
                or self.actpos == NULL):
            raise MemoryError()
        for b in range(NBUCKETS):
            self.bids[b] = NULL
            self.bkey[b] = NULL
            self.bsize[b] = 0
            self.bcap[b] = 0
            self.actpos[b] = -1
            if b <= NS:
                # bucket 1 + o SUBB + q (+ NS): slopes up to (1/2 + (q + 1)/(2 SUBB)) 2**(o + 1 - EOFFSET)
                self.bslope[b] = 0.0 if b == 0 else ldexp(0.5 + <double>((b - 1) % SUBB + 1) / (2.0 * SUBB),
                                                          (b - 1) // SUBB + 1 - EOFFSET)
        self.cal = NULL
        self.ccap = 0
        self.ctop = 0
        self.cfree = -1
        self.chead = NULL
        self.cmask = -1
        self.kdone = 0
        self.pid = NULL
        self.pval = NULL
        self.pex = NULL
        self.pcap = 0

    def __dealloc__(self):
        cdef int b
        if self.bids != NULL:
            for b in range(NBUCKETS):
                _heap_block(self.bids[b], 0, 0, sizeof(int32_t))
        if self.bkey != NULL:
            for b in range(NBUCKETS):
                _heap_block(self.bkey[b], 0, 0, sizeof(double))
        free(self.bids)
        free(self.bkey)
        free(self.bsize)
        free(self.bcap)
        free(self.bslope)
        free(self.asl)
        free(self.atk_base)
        free(self.abd)
        free(self.act)
        free(self.actpos)
        free(self.ub)
        free(self.cb)
        free(self.cal)
        free(self.chead)
        free(self.pid)
        free(self.pval)
        free(self.pex)

    def __init__(self, delta, mu, nu, recall, int kind, long terms,
                 double rate, double signal_delay, last=None):
        self.nu, self.recall = _owned(nu), _owned(recall)
        self.kind = kind
        self.terms = terms
        m = self.nu.shape[0]
        self.m = m
        self.cap = m
        self.n_live = m
        hot = _hot_records(m)
        hot["delta"] = np.asarray(delta, dtype=np.float64)
        hot["mu"] = np.asarray(mu, dtype=np.float64)
        if last is not None:
            hot["last"] = np.asarray(last, dtype=np.float64)
        self._set_hot(hot)
        self.bucket = np.full(m, NOT_PLACED, dtype=np.uint16)
        self.origin = 0.0
        self.t_now = 0.0
        self.k = 0
        self.nticks = 0
        self.r_now = rate
        self.delay = signal_delay
        self.lref = 0.0
        self.log_lref = -INFINITY
        self.built = False
        self.n_evaluations = 0
        self.plevel = 0.0
        self.pmargin = PARK_EPS
        self.pfall = 0
        self.phor = -INFINITY
        self.n_unparks = 0
        self._cal_clear()

    def _set_hot(self, hot):
        cdef HotRec[::1] r = hot
        self.hot = hot
        self.rec = &r[0] if r.shape[0] > 0 else NULL
        self.delta, self.mu, self.last = hot["delta"], hot["mu"], hot["last"]
        self.hpos, self.ncis = hot["hpos"], hot["ncis"]

    # -- read-only views -------------------------------------------------
    @property
    def time(self):
        return self.t_now

    @property
    def rate(self):
        return self.r_now

    @property
    def n_pages(self):
        """Live pages."""
        return self.n_live

    @property
    def n_slots(self):
        """Page ids handed out so far (live or removed): the next new id."""
        return self.m

    def bucket_sizes(self):
        """Pages in each bucket (0: constant values, b: slope 2**(b - 192), 253: unbounded), int64."""
        out = np.zeros(NBUCKETS, dtype=np.int64)
        cdef Py_ssize_t b
        for b in range(NBUCKETS):
            out[b] = self.bsize[b]
        return out

    def _buckets(self):
        """Bucket code of ids ``0 .. n_slots - 1`` as held (PARK: in the calendar, FAR after the horizon), a copy."""
        return np.array(self.bucket[:self.m], dtype=np.int64)

    def alive_mask(self):
        """Live flags of ids ``0 .. n_slots - 1`` (bool, a new array)."""
        return np.asarray(self.bucket[:self.m]) != DEAD

    def alive_of(self, ids):
        """Live flags of the given ids (each in ``0 .. n_slots - 1``), bool."""
        return np.asarray(self.bucket[:self.m])[ids] != DEAD

    def page_ids(self):
        """Live page ids, increasing (int64)."""
        return np.flatnonzero(self.alive_mask()).astype(np.int64)

    def _live(self, a):
        x = np.asarray(a[:self.m])
        if self.n_live == self.m:
            return np.array(x, copy=True)
        return x[self.alive_mask()]

    def last_crawl(self):
        """Last crawl of each live page, in id order (copy)."""
        return self._live(self.last)

    def signal_counts(self):
        """Counted signals of each live page, in id order (int64 copy)."""
        return self._live(self.ncis).astype(np.int64)

    def signal_count_view(self):
        """Read-only view of the signal counts of ids ``0 .. n_slots - 1`` (uint32, no copy)."""
        a = np.asarray(self.ncis[:self.m])
        a.flags.writeable = False
        return a

    def params(self):
        """(change_rate, importance, recall, false_rate) of the live pages, in id order (copies)."""
        return (self._live(self.delta), self._live(self.mu), self._live(self.recall), self._live(self.nu))

    def last_crawl_of(self, Py_ssize_t j):
        return self.rec[j].last

    def nbytes(self):
        """Bytes held by the state: per-slot arrays and the bucket heaps and calendar at capacity, the buffers."""
        cdef Py_ssize_t b, heaps = 0
        for b in range(NBUCKETS):
            heaps += self.bcap[b] + (HEAP_LEAD if self.bcap[b] > 0 else 0)
        # the 32-byte records (last, delta, mu, hpos, ncis), nu and recall (float64), bucket (uint16)
        return (self.cap * (5 * sizeof(double) + sizeof(uint32_t) + sizeof(int32_t) + sizeof(bucket_t))
                + (NS + 1) * sizeof(double)
                + heaps * (sizeof(int32_t) + sizeof(double)) + self.pcap * (sizeof(int32_t) + 2 * sizeof(double))
                + self.ccap * sizeof(CalEntry) + (self.cmask + 1) * sizeof(int32_t)
                + NBUCKETS * (2 * sizeof(void*) + 3 * sizeof(int32_t))
                + (self.acap[0] + self.acap[1]) * (3 * sizeof(double) + sizeof(int32_t)) + sizeof(double)
                + (self.acap[0] + self.acap[1] + 4) * (sizeof(double) + sizeof(int32_t)))

    def last_crawl_view(self):
        """Read-only numpy view of the last-crawl times (no copy; valid until the next call that changes them)."""
        a = np.asarray(self.last[:self.m])
        a.flags.writeable = False
        return a

    # -- values ----------------------------------------------------------
    cdef inline double beff(self, Py_ssize_t j) noexcept nogil:
        # time-equivalent of one signal for the value kind (Scheduler's notes)
        if self.kind == 2:
            return 0.0
        if self.kind == 3:
            return INFINITY if self.recall[j] * self.rec[j].delta > 0.0 else 0.0
        return signal_beta(self.rec[j].delta, self.recall[j], self.nu[j])

    cdef inline double alpha(self, Py_ssize_t j) noexcept nogil:
        return (1.0 - self.recall[j]) * self.rec[j].delta  # PageModel.alpha, same operations

    cdef inline double gamma(self, Py_ssize_t j) noexcept nogil:
        return self.recall[j] * self.rec[j].delta + self.nu[j]  # PageModel.gamma, same operations

    cdef inline double bn(self, Py_ssize_t j) noexcept nogil:
        return self.beff(j) * <double>self.rec[j].ncis if self.rec[j].ncis > 0 else 0.0

    cdef inline double tau(self, Py_ssize_t j, double t) noexcept nogil:
        cdef double te = t - self.rec[j].last
        if self.rec[j].ncis > 0:
            te = te + self.beff(j) * <double>self.rec[j].ncis
        return te

    cdef inline double value(self, Py_ssize_t j, double tau, double* ex) noexcept nogil:
        """V_j(tau); for Greedy ``ex[0] = e^{-Delta tau}`` when it was computed, else (and for the other kinds) -1."""
        self.n_evaluations += 1
        ex[0] = -1.0
        if self.kind == 2:
            return greedy_value_ex(tau, self.rec[j].delta, self.rec[j].mu, ex)
        if self.kind == 3:
            return cis_value(tau, self.rec[j].delta, self.recall[j], self.alpha(j), self.rec[j].mu)
        return page_value(tau, self.rec[j].delta, self.alpha(j), self.gamma(j), self.nu[j],
                          signal_beta(self.rec[j].delta, self.recall[j], self.nu[j]),
                          self.rec[j].mu, -1 if self.kind == 0 else self.terms)

    cdef double slope(self, Py_ssize_t j, double tau0, double ex) noexcept nogil:
        """s with V_j(tau) <= V_j(tau0) + s (tau - tau0) for every tau >= tau0 (module notes); 0: constant.

        ``ex``: e^{-x} if the value's evaluation computed it (Greedy), else negative.
        """
        cdef double a, x, mu = self.rec[j].mu
        if mu == 0.0 or self.rec[j].delta == 0.0 or not (tau0 < INFINITY):
            return 0.0
        a = self.rec[j].delta if self.kind == 2 else self.alpha(j)
        if a == 0.0:
            return 0.0  # alpha = 0: V is 0 for every finite tau
        x = a * tau0
        if x < 1.0:
            return mu * INV_E
        return mu * (x * (ex if ex >= 0.0 else exp(-x)))

    cdef inline int _bucket_of(self, double s) noexcept nogil:
        """The bucket of slope s > 0 (its slope is >= s; UNBOUNDED above the largest)."""
        cdef double f
        cdef int e, o
        cdef uint64_t bits
        memcpy(&bits, &s, 8)
        e = <int>((bits >> 52) & 0x7ff)
        if e == 0 or e == 0x7ff:
            f = frexp(s, &e)  # s = f 2**e, 1/2 <= f < 1 (subnormal, inf)
        else:  # frexp from the bits (a libm call was 1 % of a tick): the same f and e
            e -= 1022
            bits = (bits & 0x800fffffffffffffULL) | (<uint64_t>1022 << 52)
            memcpy(&f, &bits, 8)
        o = e + EOFFSET - 1
        if o < 0:
            return 1  # below the smallest slope: rounded up to it
        if o >= NOCT:
            return UNBOUNDED
        # f < 1/2 + (q + 1)/(2 SUBB): the bucket's slope is >= s
        return 1 + o * SUBB + <int>((f - 0.5) * (2 * SUBB))

    cdef int _line(self, Py_ssize_t j, double t0, double v0, double tau0, double ex, double* key) noexcept nogil:
        """Bucket and key (in ``key[0]``) of the bound from V_j = v0 at time t0 (tau_j = tau0; ``ex`` as for slope)."""
        cdef double s, sb, pad, c, sl, cl, L
        cdef int b
        cdef bint in_log = False
        s = self.slope(j, tau0, ex)
        c = v0
        if not (s > 0.0):
            key[0] = -v0  # a constant value
            return 0
        if self.kind == 2 and not (self.rec[j].delta * tau0 >= 1.0 and v0 > 0.0):
            # Greedy where V is convex (where it is concave, the line bounding V is its tangent):
            # also a line bounding ln V (module notes); keep the one that reaches the last winning
            # value L later (both are valid bounds; bucket rounding is ignored in the choice)
            sl = self._log_line(j, v0, tau0, ex, &cl)
            L = self.lref
            if not (L > 0.0) or (L - v0) * sl < (self.log_lref - cl) * s:
                s, c = sl, cl
                in_log = True
        s = s * SAFETY
        if not (s > 0.0):
            key[0] = -v0
            return 0
        b = self._bucket_of(s)
        if b == UNBOUNDED:
            key[0] = t0
            return UNBOUNDED
        if in_log:
            b += NS
        sb = self._sb(b)
        pad = (8.0 * DBL_EPSILON * (fabs(t0) + fabs(self.rec[j].last) + (fabs(self.bn(j)) if self.kind != 2 else 0.0))
               + 1e-300)
        key[0] = (t0 - c / sb) - pad
        return b

    cdef double _log_line(self, Py_ssize_t j, double v0, double tau0, double ex, double* c) noexcept nogil:
        """Greedy: slope s and value c at tau0 of a line in tau bounding ln V_j for every tau >= tau0.

        ``V = (mu/Delta) F(Delta tau)`` with ``F`` the Gamma(2, 1) distribution
        function, log-concave since its density ``x e^{-x}`` is: the tangent of
        ``ln V`` at ``tau0``, slope ``V'/V = mu x e^{-x} / v0``, lies above ``ln V``
        everywhere.  When ``v0 = 0`` (just crawled, or underflow), ``V(tau) <=
        (mu/e) tau`` and ``ln tau <= ln tau1 - 1 + tau/tau1`` for any ``tau1 > 0``
        give the line of slope ``1/tau1``; ``tau1 = e L/mu`` with ``L`` the last
        winning value (``1/R`` before the first), where the linear bound reaches
        ``L``.  The caller has excluded constant values (``mu = 0``,
        ``Delta = 0``, ``tau0 = inf``).
        """
        cdef double mu = self.rec[j].mu, dl = self.rec[j].delta, x, tau1
        if v0 > 0.0:
            x = dl * tau0
            c[0] = log(v0)
            return mu * (x * (ex if ex >= 0.0 else exp(-x))) / v0
        tau1 = E_UP * self.lref / mu if self.lref > 0.0 else 1.0 / self.r_now
        if not (tau1 > 0.0 and tau1 < INFINITY):
            tau1 = 1.0 / self.r_now
        c[0] = log(mu * INV_E) + log(tau1) - 1.0 + tau0 / tau1
        return 1.0 / tau1

    cdef inline double _sb(self, Py_ssize_t b) noexcept nogil:
        """The slope of slope bucket b (1 .. 2 NS)."""
        return self.bslope[b - NS if b > NS else b]

    cdef inline double _bound(self, Py_ssize_t b, double t, double tpad) noexcept nogil:
        """Inflated bound of the top page of nonempty bucket b at time t (tpad = 8 eps |t|); of ln V for Greedy."""
        cdef double u
        if b == UNBOUNDED:
            return INFINITY
        if b == 0:
            u = -self.bkey[0][0]
            return u + MARGIN * fabs(u)
        u = self._sb(b) * (t - self.bkey[b][0])
        if b > NS:  # a bound of ln V: absolute margin
            return u + MARGIN * (1.0 + fabs(u)) + self._sb(b) * tpad
        return u + MARGIN * fabs(u) + self._sb(b) * tpad

    # -- bucket heaps: 4-ary min-heaps on (key, id) ----------------------------------
    # entry i of bucket b: page bids[b][i] with key bkey[b][i]; children 4i+1 .. 4i+4 (one aligned
    # 32-byte block of keys and 16-byte block of ids: _heap_block)
    cdef void _sift_up(self, int b, Py_ssize_t i, int32_t x, double kx) noexcept nogil:
        """Place page x with key kx at hole i of bucket b, moving parents down."""
        cdef int32_t* h = self.bids[b]
        cdef double* hk = self.bkey[b]
        cdef Py_ssize_t p
        cdef double kp
        while i > 0:
            p = (i - 1) >> 2
            kp = hk[p]
            if kx < kp or (kx == kp and x < h[p]):
                h[i] = h[p]
                hk[i] = kp
                self.rec[h[i]].hpos = <int32_t>i
                i = p
            else:
                break
        h[i] = x
        hk[i] = kx
        self.rec[x].hpos = <int32_t>i
        self.atk[self.actpos[b]] = hk[0]  # (atk[-1] when b is not in act)

    cdef void _sift_down(self, int b, Py_ssize_t n, Py_ssize_t i, int32_t x, double kx) noexcept nogil:
        """Place page x with key kx at hole i of bucket b (size n), moving smaller children up."""
        cdef int32_t* h = self.bids[b]
        cdef double* hk = self.bkey[b]
        cdef Py_ssize_t c, c0, cend, g
        cdef double kc
        while True:
            c0 = 4 * i + 1
            if c0 >= n:
                break
            g = 16 * i + 5  # the grandchildren 16i+5 .. 16i+20, contiguous: fetched a level ahead
            if g < n:  # (their keys fill two aligned cache lines, their ids straddle two)
                FRESHCORE_PREFETCH(&hk[g])
                FRESHCORE_PREFETCH(&hk[g + 8])
                FRESHCORE_PREFETCH(&h[g])
                FRESHCORE_PREFETCH(&h[g + 15])
            if c0 + 4 <= n:
                # the smallest (key, id) of four siblings without a branch (which child it is is
                # random: branches mispredicted ~3 times a level): pairs, then their winners
                c = c0 + ((hk[c0 + 1] < hk[c0]) | ((hk[c0 + 1] == hk[c0]) & (h[c0 + 1] < h[c0])))
                g = c0 + 2 + ((hk[c0 + 3] < hk[c0 + 2]) | ((hk[c0 + 3] == hk[c0 + 2]) & (h[c0 + 3] < h[c0 + 2])))
                c = g if ((hk[g] < hk[c]) | ((hk[g] == hk[c]) & (h[g] < h[c]))) else c
                kc = hk[c]
            else:
                cend = n
                c = c0
                kc = hk[c0]
                for c0 in range(c0 + 1, cend):
                    if hk[c0] < kc or (hk[c0] == kc and h[c0] < h[c]):
                        c = c0
                        kc = hk[c0]
            if kc < kx or (kc == kx and h[c] < x):
                h[i] = h[c]
                hk[i] = kc
                self.rec[h[i]].hpos = <int32_t>i
                i = c
            else:
                break
        h[i] = x
        hk[i] = kx
        self.rec[x].hpos = <int32_t>i
        self.atk[self.actpos[b]] = hk[0]  # (atk[-1] when b is not in act)

    cdef void _act_cap(self, int f, Py_ssize_t n) noexcept nogil:
        """Room for n buckets of family f in act and the arrays by position (the entries kept; each
        family's part grows on its own: one family may hold hundreds of buckets and the other a few)."""
        cdef Py_ssize_t o = self.acap[0], k = self.nact[1], a, tot
        self.acap[f] = n
        tot = self.acap[0] + self.acap[1]
        self.asl = <double*>_resized(self.asl, tot * sizeof(double))
        self.atk_base = <double*>_resized(self.atk_base, (tot + 1) * sizeof(double))
        self.atk = self.atk_base + 1
        self.abd = <double*>_resized(self.abd, tot * sizeof(double))
        self.act = <int32_t*>_resized(self.act, tot * sizeof(int32_t))
        # candidates: family 0's (with the 2 special buckets and a spare write), then family 1's (and a spare)
        self.ub = <double*>_resized(self.ub, (tot + 4) * sizeof(double))
        self.cb = <int32_t*>_resized(self.cb, (tot + 4) * sizeof(int32_t))
        if f == 0 and k > 0 and self.acap[0] != o:  # family 1's part moves from o to acap[0]
            n = self.acap[0]
            memmove(self.asl + n, self.asl + o, k * sizeof(double))
            memmove(self.atk + n, self.atk + o, k * sizeof(double))
            memmove(self.abd + n, self.abd + o, k * sizeof(double))
            memmove(self.act + n, self.act + o, k * sizeof(int32_t))
            for a in range(n, n + k):
                self.actpos[self.act[a]] = <int32_t>a

    cdef void _activate(self, int b) noexcept nogil:
        """Add nonempty slope bucket b to the scanned ones (not 0, UNBOUNDED or PARK: looked at apart)."""
        cdef int f
        cdef Py_ssize_t a
        if b == 0 or b == UNBOUNDED or b >= PARK:
            return
        if self.actpos[b] < 0:
            f = 1 if b > NS else 0
            if self.nact[f] == self.acap[f]:
                self._act_cap(f, self.acap[f] + self.acap[f] // 4 + 8)
            a = (self.acap[0] if f else 0) + self.nact[f]
            self.actpos[b] = <int32_t>a
            self.act[a] = b
            self.asl[a] = self._sb(b)
            self.atk[a] = self.bkey[b][0]
            self.nact[f] += 1

    cdef void _deactivate(self, int b) noexcept nogil:
        cdef Py_ssize_t i = self.actpos[b], last
        cdef int32_t q
        cdef int f = 1 if b > NS else 0
        if i < 0:
            return
        last = (self.acap[0] if f else 0) + self.nact[f] - 1
        if i != last:
            q = self.act[last]
            self.act[i] = q
            self.asl[i] = self.asl[last]
            self.atk[i] = self.atk[last]
            self.abd[i] = self.abd[last]  # (a bucket emptied in a tick's search: the rejoin reads abd)
            self.actpos[q] = <int32_t>i
        self.actpos[b] = -1
        self.nact[f] -= 1

    cdef void _reserve(self, int b, Py_ssize_t n) noexcept nogil:
        """Room for n entries in bucket b: grows to n + n/16 + 8, shrinks to that when over n + n/8 + 32.

        (Capacities count the HEAP_LEAD entries before entry 0: +8 rather than the +16 that served
        before there were any keeps the bytes per page at m = 1e5 below 64.)  FAR, which holds most
        pages, grows to n + n/128 + 64 and shrinks when over n + n/16 + 64: the band must hold the
        m/32 pages that leave it at each move of the horizon and come back over the next m/32 ticks
        (a band of n/32 copied it four times a move).
        """
        cdef Py_ssize_t cap = self.bcap[b]
        if b == FAR:
            if n <= cap and n + n // 16 + 64 >= cap:
                return
            self._set_cap(b, n + n // 128 + 64)
            return
        if n <= cap and n + n // 8 + 16 >= cap:
            return
        self._set_cap(b, n + n // 16 + 4)

    cdef void _set_cap(self, int b, Py_ssize_t cap) noexcept nogil:
        """Bucket b's heap arrays resized to cap entries, HEAP_LEAD of them before entry 0 (aborts if
        memory is exhausted); callers ask for at least 8 more than they need."""
        cdef Py_ssize_t n = self.bsize[b]
        cap -= HEAP_LEAD
        self.bids[b] = <int32_t*>_heap_block(self.bids[b], n, cap, sizeof(int32_t))
        self.bkey[b] = <double*>_heap_block(self.bkey[b], n, cap, sizeof(double))
        self.bcap[b] = <int32_t>cap

    cdef void _push(self, Py_ssize_t j, int b, double key) noexcept nogil:
        """Insert page j into the heap of bucket b with the given key."""
        cdef Py_ssize_t n = self.bsize[b]
        if b == PARK:
            self._cal_push(j, key)
            return
        if n + 1 > self.bcap[b]:
            self._reserve(b, n + 1)
        self.bsize[b] = <int32_t>(n + 1)
        self.bucket[j] = <bucket_t>b
        if b == FAR:  # unsorted: appended
            self.bids[b][n] = <int32_t>j
            self.bkey[b][n] = key
            self.rec[j].hpos = <int32_t>n
            return
        self._sift_up(b, n, <int32_t>j, key)
        if n == 0:
            self._activate(b)

    cdef void _take(self, int b, Py_ssize_t i) noexcept nogil:
        """Remove entry i of bucket b's heap (its page's bucket and hpos are reset)."""
        if b == PARK:
            self._cal_take(i)
            return
        cdef int32_t* h = self.bids[b]
        cdef double* hk = self.bkey[b]
        cdef Py_ssize_t last = self.bsize[b] - 1
        cdef int32_t x = h[last]
        cdef double kx = hk[last]
        self.rec[h[i]].hpos = -1
        self.bucket[h[i]] = NOT_PLACED
        self.bsize[b] = <int32_t>last
        if b == FAR:  # unsorted: the last entry fills the hole
            if i != last:
                h[i] = x
                hk[i] = kx
                self.rec[x].hpos = <int32_t>i
        elif i != last:
            if i > 0 and (kx < hk[(i - 1) >> 2] or (kx == hk[(i - 1) >> 2] and x < h[(i - 1) >> 2])):
                self._sift_up(b, i, x, kx)
            else:
                self._sift_down(b, last, i, x, kx)
        if last == 0:
            self._deactivate(b)
        elif last + (last >> 3) + 16 < self.bcap[b] or (b == FAR and last + (last >> 4) + 64 < self.bcap[b]):
            self._reserve(b, last)  # (_reserve's thresholds)

    # -- PARK: a calendar of ticks (a heap of ~3e4 pages cost a quarter of a tick at m = 1e6) -----
    cdef inline double _tick_time(self, long long k) noexcept nogil:
        """The time of tick k (the same operations as _step)."""
        return self.origin + <double>k / self.r_now

    cdef long long _tick_of(self, double key) noexcept nogil:
        """The first tick after kdone whose time is >= key (key finite, at most a window of ticks on)."""
        cdef double x = (key - self.origin) * self.r_now
        cdef long long k = self.kdone + 1
        if x > <double>k:
            k = <long long>x
            while k > self.kdone + 1 and self._tick_time(k - 1) >= key:
                k -= 1
        while self._tick_time(k) < key:
            k += 1
        return k

    cdef inline Py_ssize_t _cal_slot(self, double key) noexcept nogil:
        """The calendar slot of a key: that of the first tick after kdone at which it is due."""
        return <Py_ssize_t>(self._tick_of(key) & self.cmask)

    cdef inline void _cal_link(self, Py_ssize_t i) noexcept nogil:
        """Link entry i (its key set) at the head of its tick's list."""
        cdef Py_ssize_t s = self._cal_slot(self.cal[i].key)
        self.cal[i].next = self.chead[s]
        self.chead[s] = <int32_t>i

    cdef void _cal_push(self, Py_ssize_t j, double key) noexcept nogil:
        """Park page j (in no heap) with the given key (at most the horizon) in the calendar."""
        cdef Py_ssize_t i = self.cfree
        if i >= 0:
            self.cfree = self.cal[i].next
        else:
            if self.ctop == self.ccap:  # (grown by 1/8: the calendar holds ~m/32 pages)
                self.ccap = self.ccap + self.ccap // 8 + 128
                self.cal = <CalEntry*>_resized(self.cal, self.ccap * sizeof(CalEntry))
            i = self.ctop
            self.ctop += 1
        self.cal[i].key = key
        self.cal[i].id = <int32_t>j
        self._cal_link(i)
        self.rec[j].hpos = <int32_t>i
        self.bucket[j] = PARK
        self.bsize[PARK] += 1

    cdef void _cal_take(self, Py_ssize_t i) noexcept nogil:
        """Remove calendar entry i (its page's bucket and hpos are reset)."""
        cdef Py_ssize_t s = self._cal_slot(self.cal[i].key)
        cdef int32_t p = self.chead[s]
        if p == i:
            self.chead[s] = self.cal[i].next
        else:  # (lists hold ~1 entry: as many pages are parked as ticks in the calendar)
            while self.cal[p].next != i:
                p = self.cal[p].next
            self.cal[p].next = self.cal[i].next
        self._cal_free(i)

    cdef inline void _cal_free(self, Py_ssize_t i) noexcept nogil:
        """Entry i (out of its list) to the free list; its page in no heap."""
        cdef int32_t j = self.cal[i].id
        self.rec[j].hpos = -1
        self.bucket[j] = NOT_PLACED
        self.cal[i].id = -1
        self.cal[i].next = self.cfree
        self.cfree = <int32_t>i
        self.bsize[PARK] -= 1

    cdef void _cal_reset(self, Py_ssize_t w) noexcept nogil:
        """An empty calendar of at least w slots (a power of two; PARK's entries must be unlinked)."""
        cdef Py_ssize_t n = 16, s
        while n < w:
            n *= 2
        if n - 1 != self.cmask:
            self.chead = <int32_t*>_resized(self.chead, n * sizeof(int32_t))
            self.cmask = n - 1
        for s in range(n):
            self.chead[s] = -1

    cdef void _unpark_near(self) noexcept nogil:
        """Every PARK page to FAR and the horizon to -inf (the next tick moves it): the tick grid changed."""
        cdef Py_ssize_t i
        cdef int32_t j
        for i in range(self.ctop):
            j = self.cal[i].id
            if j >= 0:
                self._push(j, FAR, self.cal[i].key)
        self._cal_clear()
        self.phor = -INFINITY

    cdef void _cal_clear(self) noexcept nogil:
        """An empty calendar (its pages must have been placed elsewhere or reset)."""
        self.bsize[PARK] = 0
        self.ctop = 0
        self.cfree = -1
        if self.ccap > 1024:
            self.ccap = 1024
            self.cal = <CalEntry*>_resized(self.cal, self.ccap * sizeof(CalEntry))
        self._cal_reset(0)

    cdef inline void _remove(self, Py_ssize_t j) noexcept nogil:
        """Take page j out of its bucket's heap (it must be in one)."""
        self._take(self.bucket[j], self.rec[j].hpos)

    cdef void _place(self, Py_ssize_t j, double t) noexcept nogil:
        """Evaluate live page j (in no heap) at time t and push it (parked, or with its line)."""
        cdef double tau = self.tau(j, t), ex
        cdef double v = self.value(j, tau, &ex)
        self._put(j, t, v, tau, ex)

    cdef inline bint _parks(self, Py_ssize_t j, double v, double tau) noexcept nogil:
        """Whether page j, of value v at tau, is parked: Greedy, below the park level, not constant.

        (Below ``plevel (1 - 2 PARK_SHADE)``: a parked page then either never
        reaches the level of its key, whose key is ``inf``, or ends above it.)
        """
        return (self.kind == 2 and v < self.plevel * (1.0 - 2.0 * PARK_SHADE) and self.rec[j].mu > 0.0
                and self.rec[j].delta > 0.0 and tau < INFINITY)

    cdef inline double _park_floor(self) noexcept nogil:
        """The smallest park margin: 1/sqrt(m) within [PARK_EPS, 0.25] (the winning value moves more at small m)."""
        cdef double f = 1.0 / sqrt(<double>self.n_live) if self.n_live > 0 else 0.25
        return PARK_EPS if f < PARK_EPS else (0.25 if f > 0.25 else f)

    cdef inline double _park_key(self, Py_ssize_t j) noexcept nogil:
        """Greedy page j (mu, Delta > 0): a time before which V_j < plevel (``_park_time``)."""
        return _park_time(self.rec[j].last, self.rec[j].delta, self.rec[j].mu, self.plevel)

    cdef void _put(self, Py_ssize_t j, double t, double v, double tau, double ex) noexcept nogil:
        """Push page j (in no heap) of value v at time t (tau_j = tau): parked, or with its line."""
        cdef double key
        cdef int b
        if self._parks(j, v, tau):
            key = self._park_key(j)
            self._push(j, PARK if key <= self.phor else FAR, key)
            return
        b = self._line(j, t, v, tau, ex, &key)
        self._push(j, b, key)

    # -- ticks -------------------------------------------------------------------
    cdef void _build(self, double t) noexcept nogil:
        """Evaluate every live page at t and heapify the buckets (the first tick, O(m))."""
        cdef Py_ssize_t j
        cdef double tau, v, ex, vmax = 0.0
        cdef double* keys = <double*>malloc((self.m if self.m > 0 else 1) * sizeof(double))
        if keys == NULL:
            abort()
        for j in range(self.m):
            if self.bucket[j] == DEAD:
                continue
            keys[j] = self.value(j, self.tau(j, t), &ex)
            if keys[j] > vmax:
                vmax = keys[j]
        if self.kind == 2:
            self.pmargin = self._park_floor()
            self.plevel = vmax * (1.0 - self.pmargin)  # the first winning value is vmax
        for j in range(self.m):
            if self.bucket[j] == DEAD:
                continue
            tau = self.tau(j, t)
            v = keys[j]
            if self._parks(j, v, tau):
                self.bucket[j] = FAR  # (the horizon is -inf until the tick below moves it)
                keys[j] = self._park_key(j)
            else:
                self.bucket[j] = <bucket_t>self._line(j, t, v, tau, -1.0, &keys[j])
        self._fill_buckets(keys)
        free(keys)
        self.built = True

    cdef void _fill_buckets(self, const double* keys) noexcept nogil:
        """Heaps from bucket[j] and keys[j] of every placed page (empties every bucket first)."""
        cdef Py_ssize_t j, b, i, n
        cdef int32_t* h
        cdef double* hk
        for b in range(NBUCKETS):
            self.bsize[b] = 0
            self.actpos[b] = -1
        self.nact[0] = self.nact[1] = 0
        for j in range(self.m):
            self.rec[j].hpos = -1
            if self.bucket[j] < NBUCKETS:
                self.bsize[self.bucket[j]] += 1
        for b in range(NBUCKETS):
            n = self.bsize[b]
            self.bsize[b] = 0
            if n > self.bcap[b] or n + n // 8 + 16 < self.bcap[b]:
                self._set_cap(b, n + 16)
        for j in range(self.m):
            b = self.bucket[j]
            if b >= NBUCKETS:
                continue
            n = self.bsize[b]
            self.bids[b][n] = <int32_t>j
            self.bkey[b][n] = keys[j]
            self.rec[j].hpos = <int32_t>n
            self.bsize[b] = <int32_t>(n + 1)
        self._cal_clear()  # (callers put parked pages in FAR)
        for b in range(PARK):
            n = self.bsize[b]
            if n == 0:
                continue
            h = self.bids[b]
            hk = self.bkey[b]
            i = (n - 2) // 4 + 1 if n > 1 else 0
            while i > 0:
                i -= 1
                self._sift_down(b, n, i, h[i], hk[i])
            self._activate(b)

    cdef inline void _keep_popped(self, Py_ssize_t n, Py_ssize_t j, double v, double ex) noexcept nogil:
        if n == self.pcap:
            self._popped_cap(2 * self.pcap if self.pcap >= 32 else 64)
        self.pid[n] = <int32_t>j
        self.pval[n] = v
        self.pex[n] = ex

    cdef void _advance_horizon(self, double t) noexcept nogil:
        """Move the horizon past t (by m/FAR_SHARE ticks) and the FAR pages due before it to PARK.

        PARK (the calendar) then holds only the pages due within ~m/32 ticks and each FAR page is
        read once per horizon move (~32 entries per tick, sequentially).
        """
        cdef Py_ssize_t i, w
        cdef int32_t j
        cdef double key, hor
        cdef double* keys
        cdef long long kh
        # (at least t: every page left in FAR is then due after t)
        self.phor = t + <double>(self.n_live // FAR_SHARE + 1) / self.r_now
        # the calendar spans every tick up to the horizon's (a few more for rounding): re-linked if
        # it has to grow, or shrink by 8
        kh = self._tick_of(self.phor)
        w = <Py_ssize_t>(kh - self.kdone) + 8
        if w > self.cmask or 8 * w < self.cmask:
            self._cal_reset(w)
            for i in range(self.ctop):
                if self.cal[i].id >= 0:
                    self._cal_link(i)
        # from the end down (the last entry, which fills a hole, is already read); the search for the
        # next due entry is a tight loop over a local pointer (~1 in 32 entries is due)
        i = self.bsize[FAR]
        hor = self.phor
        while True:
            keys = self.bkey[FAR]  # (again after each move: _take may shrink the array)
            i = freshcore_due_before(keys, i, hor)
            if i < 0:
                break
            key = keys[i]
            j = self.bids[FAR][i]
            self._take(FAR, i)
            self._push(j, PARK, key)

    cdef inline bint _evaluate(self, Py_ssize_t j, double t, Py_ssize_t* pn, double* bv,
                               Py_ssize_t* best) noexcept nogil:
        """Evaluate popped page j at t, keep it (the ``pn[0]``-th popped page) and the best so far; whether it is
        the new best."""
        cdef double ex
        cdef double v = self.value(j, self.tau(j, t), &ex)
        self._keep_popped(pn[0], j, v, ex)
        pn[0] += 1
        if v > bv[0] or (v == bv[0] and j < best[0]):
            bv[0] = v
            best[0] = j
            return True
        return False

    cdef void _popped_cap(self, Py_ssize_t cap) noexcept nogil:
        self.pid = <int32_t*>_resized(self.pid, cap * sizeof(int32_t))
        self.pval = <double*>_resized(self.pval, cap * sizeof(double))
        self.pex = <double*>_resized(self.pex, cap * sizeof(double))
        self.pcap = cap

    cdef inline Py_ssize_t _special_candidates(self, double t, double tpad, double th, Py_ssize_t nc) noexcept nogil:
        """Append to the candidates of lines bounding V (cb, ub)[:nc] the constant values' and the unbounded
        slopes' buckets (kept out of act) whose top's bound at t reaches th; returns the new count."""
        cdef int k, b
        cdef double u
        for k in range(2):
            b = 0 if k == 0 else UNBOUNDED
            if self.bsize[b] > 0:
                u = self._bound(b, t, tpad)
                if u >= th:
                    self.cb[nc] = <int32_t>b
                    self.ub[nc] = u
                    nc += 1
        return nc

    cdef Py_ssize_t _step(self) noexcept nogil:
        cdef double t, tpad, u, bu, ul, bv, lbv
        cdef int32_t* act
        cdef int32_t* cb
        cdef double* asl
        cdef double* atk
        cdef double* abd
        cdef double* ub
        cdef double mg, th0, th1
        cdef bint rejoined = False
        cdef Py_ssize_t n0, n1, o1, ncl
        cdef int32_t* cbl
        cdef double* ubl
        cdef bint fell
        cdef Py_ssize_t a, ba, bl, b, j, btop, best, pn, i, nc
        self.k += 1
        self.nticks += 1
        t = self.origin + <double>self.k / self.r_now
        self.t_now = t
        if not self.built:
            self.kdone = self.k - 1
            self._build(t)
        tpad = 8.0 * DBL_EPSILON * fabs(t)
        # candidates: the nonempty buckets whose top's bound reaches theta, a little below the last
        # winning value; the others are deferred, and looked at again only if the best
        # value of this tick ends below theta.  At the start of a tick every top's bound is within a
        # few ticks' growth of the last winning value (any above it was popped at the last tick), so
        # theta keeps a handful of the ~60 scanned buckets.
        th0 = self.lref * (1.0 - PREFILTER)
        th1 = self.log_lref - PREFILTER  # for the lines bounding ln V
        # (the arrays in locals: the stores below would otherwise make the compiler reload them)
        act, asl, atk, abd, cb, ub = self.act, self.asl, self.atk, self.abd, self.cb, self.ub
        mg = MARGIN
        n0, n1, o1 = self.nact[0], self.nact[1], self.acap[0]
        # the bounds of the tops (abd, by position in act) and the candidates among them: those of
        # lines bounding V in cb/ub[:nc], those bounding ln V in cbl/ubl[:ncl] (each family's
        # argmax then takes no branch on the family)
        cbl, ubl = cb + o1 + 3, ub + o1 + 3
        nc = freshcore_scan(asl, atk, act, n0, t, tpad, mg, 0.0, th0, abd, cb, ub, 0)
        ncl = freshcore_scan(asl + o1, atk + o1, act + o1, n1, t, tpad, mg, 1.0, th1, abd + o1, cbl, ubl, 0)
        nc = self._special_candidates(t, tpad, th0, nc)
        best = -1
        bv = -INFINITY
        lbv = -INFINITY
        pn = 0
        if t >= self.phor and self.bsize[FAR] > 0:
            self._advance_horizon(t)
        # parked pages whose key has come (the calendar's list of tick k): they may have reached the
        # park level (evaluated, popped)
        if self.bsize[PARK] > 0:
            a = <Py_ssize_t>(self.k & self.cmask)
            i = self.chead[a]
            while i >= 0:
                j = self.cal[i].id
                FRESHCORE_PREFETCH(&self.rec[j].last)
                self.chead[a] = self.cal[i].next
                self._cal_free(i)
                self._evaluate(j, t, &pn, &bv, &best)
                i = self.chead[a]
            # the next ticks' misses, fetched a tick ahead: the records of tick k + 1's pages (their
            # entries fetched at the last tick), and tick k + 2's first entry
            i = self.chead[(self.k + 1) & self.cmask]
            a = 0
            while i >= 0 and a < 4:
                j = self.cal[i].id
                FRESHCORE_PREFETCH(&self.rec[j].last)
                FRESHCORE_PREFETCH(&self.bucket[j])
                i = self.cal[i].next
                a += 1
            i = self.chead[(self.k + 2) & self.cmask]
            if i >= 0:
                FRESHCORE_PREFETCH(&self.cal[i])
        self.kdone = self.k
        if best >= 0:
            lbv = log(bv)
        while True:
            while nc + ncl > 0:
                # the largest bound among the lines bounding V and among those bounding ln V
                # (ties: the lower page id); the bounds of ln V are compared with ln of the best value
                ba = bl = -1
                bu = ul = -INFINITY
                for a in range(nc):
                    u = ub[a]
                    if ba < 0 or u > bu or (u == bu and self.bids[cb[a]][0] < self.bids[cb[ba]][0]):
                        ba, bu = a, u
                for a in range(ncl):
                    u = ubl[a]
                    if bl < 0 or u > ul or (u == ul and self.bids[cbl[a]][0] < self.bids[cbl[bl]][0]):
                        bl, ul = a, u
                if ba >= 0 and not (bu > bv or (bu == bv and self.bids[cb[ba]][0] < best)):
                    ba = -1  # no line bounding V reaches the best value
                if bl >= 0 and not (ul > lbv or (ul == lbv and self.bids[cbl[bl]][0] < best)):
                    bl = -1
                if ba < 0 and bl < 0:
                    break  # every candidate left is below the best value (or equal with a higher id)
                if ba < 0 or (bl >= 0 and exp(ul) > bu):
                    b = cbl[bl]  # (a line bounding ln V)
                else:
                    b = cb[ba]
                    bl = -1
                btop = self.bids[b][0]
                # the page's record (one cache line) and the other kinds' fields: fetched while the heap is updated
                FRESHCORE_PREFETCH(&self.rec[btop].last)
                if self.kind != 2:
                    FRESHCORE_PREFETCH(&self.recall[btop])
                    FRESHCORE_PREFETCH(&self.nu[btop])
                self._take(b, 0)
                if self.bsize[b] > 0:
                    u = self._bound(b, t, tpad)
                    if bl >= 0:
                        ubl[bl] = u
                    else:
                        ub[ba] = u
                    if self.actpos[b] >= 0:
                        abd[self.actpos[b]] = u  # (its new top's bound, for a rejoin)
                elif bl >= 0:
                    ncl -= 1
                    cbl[bl] = cbl[ncl]
                    ubl[bl] = ubl[ncl]
                else:
                    nc -= 1
                    cb[ba] = cb[nc]
                    ub[ba] = ub[nc]
                if self._evaluate(btop, t, &pn, &bv, &best):
                    lbv = log(bv)
                    # the best value only grows: drop the candidates that can no longer reach it
                    nc = _reaching(cb, ub, nc, bv)
                    ncl = _reaching(cbl, ubl, ncl, lbv)
            if rejoined or (bv >= th0 and lbv >= th1):
                break  # every deferred bound is below theta (ln theta), so below the best value
            # the best value ended below theta: every nonempty bucket whose top's bound reaches it
            # rejoins (the candidates left are below it: the search over them has ended).  abd holds
            # the bounds at t: a deferred bucket is untouched since the scan, a popped one's was
            # updated, and a bucket emptied since has left act (its last one took its place)
            o1 = self.acap[0]
            nc = freshcore_pick(abd, act, self.nact[0], bv, cb, ub, 0)
            ncl = freshcore_pick(abd + o1, act + o1, self.nact[1], lbv, cbl, ubl, 0)
            nc = self._special_candidates(t, tpad, bv, nc)
            rejoined = True
        fell = self.bsize[PARK] + self.bsize[FAR] > 0 and not (bv >= self.plevel)
        if fell:
            # the best value ended below the park level, which bounds only the parked pages not yet
            # due: every parked page is evaluated (O(parked); the level is then lowered)
            self.n_unparks += 1
            for i in range(self.ctop + self.bsize[FAR]):
                j = self.cal[i].id if i < self.ctop else self.bids[FAR][i - self.ctop]
                if j >= 0:  # (a free calendar entry: -1)
                    self.rec[j].hpos = -1
                    self.bucket[j] = NOT_PLACED
                    self._evaluate(j, t, &pn, &bv, &best)
            self._cal_clear()
            self.bsize[FAR] = 0  # (its capacity is kept: most pages are parked again below)
            self.phor = -INFINITY
            lbv = log(bv)
        if self.kind == 2 and bv > 0.0:
            # the park level: lowered after a fall (with twice the margin), raised (free: keys of a
            # lower level stay valid) when the winning value has moved two margins above it, with
            # half the margin if none fell for a cycle (as many ticks as pages; at small m the
            # winning value moves more)
            if fell or self.plevel == 0.0:
                if fell:
                    self.pmargin = 2.0 * self.pmargin if self.pmargin < 0.25 else 0.5
                    self.pfall = self.nticks
                self.plevel = bv * (1.0 - self.pmargin)
            elif self.plevel < bv * (1.0 - 2.0 * self.pmargin):
                if self.pmargin > self._park_floor() and self.nticks - self.pfall > self.n_live:
                    self.pmargin = 0.5 * self.pmargin if self.pmargin > 2.0 * self._park_floor() else self._park_floor()
                    self.pfall = self.nticks
                self.plevel = bv * (1.0 - self.pmargin)
        # crawl the winner; every popped page goes back, parked or with its line from t
        self.lref = bv
        self.log_lref = lbv
        self.rec[best].last = t
        self.rec[best].ncis = 0
        for i in range(pn):
            j = self.pid[i]
            if j == best and self.kind == 2:
                # Greedy at tau = t - last = 0 (no signal term): greedy_value is exactly 0, not evaluated
                self._put(j, t, 0.0, 0.0, -1.0)
            elif j == best:
                self._place(j, t)
            else:
                self._put(j, t, self.pval[i], self.tau(j, t), self.pex[i])
        if self.pcap > 256 and 8 * pn < self.pcap:  # a start-up transient's buffer is not kept
            self._popped_cap(2 * pn if 2 * pn > 256 else 256)
        return best

    def step(self):
        """Crawl at the next tick; returns the page."""
        cdef Py_ssize_t best
        with nogil:
            best = self._step()
        return best

    def run(self, Py_ssize_t n, Py_ssize_t[::1] out):
        """out[:n] = the pages crawled at the next n ticks."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(n):
                out[i] = self._step()

    def signal(self, Py_ssize_t j, double t):
        """Count a signal of page j at time t (t >= last crawl, count below MAX_SIGNALS); False if discarded."""
        return self._signal(j, t)

    cdef bint _signal(self, Py_ssize_t j, double t) noexcept nogil:
        cdef double b, key
        cdef int k
        cdef Py_ssize_t i
        if t - self.rec[j].last < self.delay:
            return False
        self.rec[j].ncis += 1
        if not self.built:
            return True
        b = self.beff(j)
        if b == 0.0:
            return True  # tau unchanged
        k = self.bucket[j]
        if b == INFINITY or k == 0 or k == UNBOUNDED:
            self._remove(j)
            self._place(j, self.t_now)
            return True
        # tau_j grows by b: the line moves left by b (key lowered; pad for the larger b n)
        i = self.rec[j].hpos
        key = self.bkey[k][i]
        key = (key - b) - 8.0 * DBL_EPSILON * (b * <double>self.rec[j].ncis + fabs(key))
        self._sift_up(k, i, <int32_t>j, key)
        return True

    # -- dynamic pages ------------------------------------------------------------
    def _grow(self, Py_ssize_t need):
        """Capacity >= need slots, by amortised doubling (a copy of every per-page array)."""
        cdef Py_ssize_t cap = self.cap, m = self.m
        if need <= cap:
            return
        cap = max(need, 2 * cap, 16)
        hot = _hot_records(cap)
        hot[:m] = self.hot[:m]
        self._set_hot(hot)
        self.nu = _grown(self.nu, m, cap, 0.0)
        self.recall = _grown(self.recall, m, cap, 0.0)
        self.bucket = _grown(self.bucket, m, cap, NOT_PLACED)
        self.cap = cap

    def add(self, const double[::1] delta, const double[::1] mu, const double[::1] nu,
            const double[::1] recall, const double[::1] last):
        """Append pages with ids n_slots, n_slots + 1, ...; returns the first new id."""
        cdef Py_ssize_t i, j, n = delta.shape[0], first = self.m
        self._grow(self.m + n)
        with nogil:
            for i in range(n):
                j = first + i
                self.rec[j].delta, self.rec[j].mu, self.nu[j], self.recall[j] = delta[i], mu[i], nu[i], recall[i]
                self.rec[j].last = last[i]
                self.rec[j].ncis = 0
                self.rec[j].hpos = -1
                self.bucket[j] = NOT_PLACED
                self.m += 1
                self.n_live += 1
                if self.built:
                    self._place(j, self.t_now)
        return first

    def remove(self, const Py_ssize_t[::1] ids):
        """Remove live pages (distinct ids, checked by the caller); their ids are never reused."""
        cdef Py_ssize_t i, j
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                if self.bucket[j] < NBUCKETS:
                    self._remove(j)
                self.bucket[j] = DEAD
                self.n_live -= 1

    def update(self, const Py_ssize_t[::1] ids, const double[::1] delta, const double[::1] mu,
               const double[::1] nu, const double[::1] recall):
        """New parameters for live pages (distinct ids); last crawl and signal count kept."""
        cdef Py_ssize_t i, j
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                if self.bucket[j] < NBUCKETS:
                    self._remove(j)
                self.rec[j].delta, self.rec[j].mu, self.nu[j], self.recall[j] = delta[i], mu[i], nu[i], recall[i]
                if self.built:
                    self._place(j, self.t_now)

    def signal_many(self, const Py_ssize_t[::1] pages, const double[::1] times, unsigned char[::1] out):
        """out[i] = signal(pages[i], times[i]), in order (pages, times and counts already validated)."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(pages.shape[0]):
                out[i] = self._signal(pages[i], times[i])

    # -- exact state export / import (save, load, pickle) --------------------------
    def __reduce__(self):
        cdef Py_ssize_t m = self.m
        params = (np.array(self.delta[:m]), np.array(self.mu[:m]), np.array(self.nu[:m]),
                  np.array(self.recall[:m]))
        return (_restore, (params, self.kind, self.terms, self.export_state()))

    def export_state(self):
        """Every array and scalar the decisions depend on, as a dict of copies.

        ``key`` and ``bucket`` (65535: in no heap, and for removed pages) are each page's bound; the
        heaps are rebuilt from them by :meth:`import_state`, and since a
        bucket's heap order is the total order on ``(key, id)`` and a tick pops
        every parked page whose key has come, the continued run makes the same
        decisions *and* the same evaluations.
        """
        cdef Py_ssize_t m = self.m
        alive = self.alive_mask()
        return {
            "change_rate": np.array(self.delta[:m], copy=True),
            "importance": np.array(self.mu[:m], copy=True),
            "recall": np.array(self.recall[:m], copy=True),
            "false_rate": np.array(self.nu[:m], copy=True),
            "alive": alive,
            "last": np.array(self.last[:m], copy=True),
            "ncis": np.array(self.ncis[:m], dtype=np.int64),
            "key": self._keys(),
            # (parked pages as PARK whether before or after the horizon: the split is not state)
            "bucket": np.where(alive, np.where(np.asarray(self.bucket[:m]) == FAR, PARK, np.asarray(self.bucket[:m])),
                               NOT_PLACED).astype(np.int64),
            "origin": self.origin,
            "rate": self.r_now,
            "time": self.t_now,
            "signal_delay": self.delay,
            "last_best": self.lref,
            "park_level": self.plevel,
            "park_margin": self.pmargin,
            "park_fall": self.pfall,
            "n_unparks": self.n_unparks,
            "k": self.k,
            "nticks": self.nticks,
            "built": bool(self.built),
            "n_evaluations": self.n_evaluations,
        }

    def _keys(self):
        """Each page's key (0 for a page in no heap), float64."""
        out = np.zeros(self.m)
        cdef double[::1] o = out
        cdef Py_ssize_t j
        for j in range(self.m):
            if self.bucket[j] == PARK:
                o[j] = self.cal[self.rec[j].hpos].key
            elif self.bucket[j] < NBUCKETS:
                o[j] = self.bkey[self.bucket[j]][self.rec[j].hpos]
        return out

    def import_state(self, d):
        """Overwrite the state with ``export_state()`` output of a state over the same page slots.

        The caller (``Scheduler.from_dict``) has checked every entry: nothing
        is validated here.  The parameters are those given to the
        constructor (the same slots).
        """
        cdef Py_ssize_t m = self.m
        np.asarray(self.last)[:m] = np.asarray(d["last"], dtype=np.float64)
        np.asarray(self.ncis)[:m] = np.asarray(d["ncis"], dtype=np.uint32)
        bucket = np.asarray(d["bucket"], dtype=np.uint16)
        np.asarray(self.bucket)[:m] = np.where(bucket == PARK, FAR, bucket)  # the horizon is -inf (below)
        alive = np.asarray(d["alive"], dtype=bool)
        np.asarray(self.bucket)[:m][~alive] = DEAD
        self.n_live = int(alive.sum())
        cdef double[::1] keys = np.ascontiguousarray(d["key"], dtype=np.float64)
        self._fill_buckets(&keys[0] if m > 0 else NULL)
        self.origin = d["origin"]
        self.r_now = d["rate"]
        self.t_now = d["time"]
        self.delay = d["signal_delay"]
        self.lref = d["last_best"]
        self.log_lref = log(self.lref)
        self.k = d["k"]
        self.nticks = d["nticks"]
        self.built = d["built"]
        self.n_evaluations = d["n_evaluations"]
        self.plevel = d["park_level"]
        self.pmargin = d["park_margin"]
        self.pfall = d["park_fall"]
        self.phor = -INFINITY  # (FAR holds keys > -inf: the next tick moves the horizon)
        self.kdone = self.k
        self.n_unparks = d["n_unparks"]

    def set_rate(self, double rate):
        """Ticks continue at spacing 1/rate from the current time."""
        self.origin = self.t_now
        self.k = 0
        self.kdone = 0
        self.r_now = rate
        self._unpark_near()  # (the calendar is of the old ticks)


def _restore(params, int kind, long terms, state):
    """Unpickle a :class:`SchedulerState` (its ``__reduce__``)."""
    s = SchedulerState(*params, kind, terms, state["rate"], state["signal_delay"])
    s.import_state(state)
    return s


#: The per-page fields a pop touches, in one 32-byte record (half a cache line).
_HOT_DTYPE = np.dtype([("last", np.float64), ("delta", np.float64), ("mu", np.float64),
                      ("hpos", np.int32), ("ncis", np.uint32)])


def _hot_records(Py_ssize_t n):
    """n records (last = 0, hpos = -1, the rest 0), 32-byte aligned so that none straddles a cache line."""
    raw = np.zeros(n * 32 + 32, dtype=np.uint8)
    off = (-raw.ctypes.data) % 32
    hot = raw[off:off + n * 32].view(_HOT_DTYPE)
    hot["hpos"] = -1
    return hot


def _owned(a):
    return np.array(a, dtype=np.float64, copy=True)


def _grown(a, Py_ssize_t n, Py_ssize_t cap, fill):
    """New array of length cap: a[:n] then fill."""
    x = np.asarray(a)
    out = np.full(cap, fill, dtype=x.dtype)
    out[:n] = x[:n]
    return out
