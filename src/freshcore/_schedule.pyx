# cython: language_level=3, auto_pickle=False
"""Compiled state of the crawl scheduler (001 Algorithm 1, SPEC section 4).

Layer 3 of STYLE.md: a ``cdef class`` that holds every per-page array and the
heap, with ``nogil`` loops; ``freshcore.schedule.Scheduler`` validates and
delegates.  Nothing here validates user input.

At tick time ``t`` the scheduler crawls ``argmax_i V_i(tau_i(t))`` (ties to
the lowest index), ``tau_i(t) = (t - last_i) + b_i n_i`` (``b_i n_i`` read as
0 when ``n_i = 0``), with ``b_i`` the time-equivalent of a signal for the value
kind: ``beta_i`` for "exact"/"approx", 0 for "greedy" (signals ignored) and
``inf`` for "cis" when ``lambda_i Delta_i > 0`` (a signal is taken as proof of
a change).  Values are those of ``freshcore._value`` (the same ``cdef``
functions as ``freshcore.value.crawl_value``, so bit-identical to it).

Exactness: the level invariant
------------------------------
The pages are split by a level ``L > 0`` into

* *hot* pages, an unordered list evaluated exactly at every tick, and
* *cold* pages, in a binary min-heap keyed by a time ``T_i`` with the
  invariant ``V_i(tau_i(t)) < L`` for every ``t < T_i`` (given the page's
  current ``last_i`` and ``n_i``).

``V_i`` is non-decreasing in ``tau`` and ``tau_i`` grows with ``t``, so
``T_i = last_i + lo_i - b_i n_i`` is valid for any ``lo_i`` with
``V_i(lo_i) < L (1 - 1e-12)`` (the margin absorbs rounding in ``tau`` and any
numerical non-monotonicity of ``V`` far below 1e-12 relative; ``lo_i`` comes
from a bracketing search, and ``T_i`` is lowered by a few ulps).  A crawl or a
counted signal changes ``last_i``/``n_i`` and recomputes ``T_i`` (O(log m)).

Hot pages carry a bound ``u_i >= V_i(tau_i(t))`` valid until ``e_i``:
``u_i = V_i(tau_i(t + H/R))`` with ``e_i = t + H/R`` (``H = 8`` ticks), or the
exact value at the current tick (``e_i = t``, marked with the tick number).
A counted signal of a hot page expires its bound.

A tick at ``t``: (1) cold pages with ``T_i <= t`` move to the hot list with
an expired bound; (2) expired bounds are refreshed, and hot pages whose bound
is below ``L`` go back to the heap (the crossing search starts from the bound's
time, so they stay cold for at least ``H`` ticks), in the same pass that finds the
hot page with the largest bound (ties: lowest index); (3) lazy argmax: that
page is evaluated exactly (value ``v``); a page whose bound is below ``v``, or
equal with a higher index, cannot win (bound >= value); the few others are
evaluated in order of decreasing bound while their bound can still beat the
best exact value so far, and the best exact value wins (ties: lowest index).  (4) If that value is ``>= L``
it is the exact argmax over all pages, since every cold page is below ``L``;
otherwise (the hot list drained, or the winning level fell, e.g. after
``set_rate`` raised the rate) everything is rebuilt at ``t`` (all pages
evaluated, O(m log m)) with ``L`` the ``hot_target``-th largest value (the
smallest positive value if that one is 0).  The rebuild evaluates each page
once and keys a cold page by ``T_i = t + (L' - V_i)/(0.368 mu_i)``
(``L' = L (1 - 1e-12)``) without a crossing search: ``V`` grows by at most
``mu/e`` per unit of time for "exact", "cis" and "greedy" (``V' = mu alpha
e^{-alpha tau} psi(tau)``, ``psi(tau) <= tau``; tests/test_schedule_bounds.py),
so the key is valid; a page popped early is searched then (approx-j keeps the
search).  When the hot list grows past
``hot_max``, ``L`` is raised to its ``hot_max/2``-th bound (raising ``L``
keeps every ``T_i`` valid).

Dynamic pages: page ids are slots of the per-page arrays (``m`` slots handed
out, ``alive`` flags, capacity grown by doubling), so "ties to the lowest
index" is "lowest id".  A removed page leaves the heap or the hot list and is
skipped by every later rebuild; removing a page keeps the invariant (cold
pages are still below ``L``, hot bounds still hold).  An added page, and a
re-parameterised cold one, is placed as a counted signal places a cold page:
its value at the current time is computed and it goes to the heap with its
crossing time if below ``L``, to the hot list (expired bound) otherwise.  A
re-parameterised hot page has its bound expired.  Both reset the cached
crossing bracket (``c_level = NaN``).  Each is O(log m); no rebuild.

Work per tick: a scan of the hot list (~100 pages, a comparison each), about
``|hot|/H`` bound refreshes, a few exact evaluations and O(log m) heap work
per promoted or crawled page; the bracket ``[lo_i, hi_i]`` of the crossing
``V_i = L`` is cached per page, so a crawled page gets its next ``T_i``
without evaluating ``V`` while ``L`` is unchanged.  All values of one page
being 0 (``Delta = 0`` or ``mu = 0``) keeps it cold forever (``T_i = inf``);
if every value is 0 the level is 0 and every page is hot (O(m) per tick, a
degenerate case).

Start-up: every page starts crawled at time 0, so early on all values grow
together (by a factor ``(1 + 1/k)^2`` at tick ``k`` for Greedy) and many pages
cross ``L`` at every tick: the first ticks cost O(m) each (measured at
m = 1e5 Greedy: 1.8 ms per tick over the first 5000 ticks, ~4 us per tick
after one crawl cycle).  ``last`` (``Scheduler(last_crawl=...)``) staggers the
initial crawl times and shortens the transient (m = 5000 Greedy, last crawls
uniform on ``[-m/R, 0]``: 417363 instead of 1427336 evaluations over the first
m/2 ticks, tests/test_schedule_state.py).
"""

from libc.math cimport INFINITY, NAN, isnan, fabs
from libc.float cimport DBL_EPSILON
from libc.stdint cimport int32_t
from libc.stdlib cimport qsort, malloc, realloc, free, abort

import numpy as np

from freshcore._value cimport greedy_value, page_value, cis_value

cdef double MARGIN = 1e-12
# dV/dt <= mu/e for "exact", "cis" and "greedy" (V' = mu alpha e^{-alpha tau} psi(tau), psi(tau) <= tau,
# x e^{-x} <= 1/e; Greedy: mu Delta tau e^{-Delta tau}); 0.368 > 1/e leaves room for rounding
cdef double SLOPE = 0.368


cdef inline void* _resized(void* p, size_t nbytes) noexcept nogil:
    """realloc, aborting if memory is exhausted (callers hold no GIL and cannot raise)."""
    cdef void* q = realloc(p, nbytes)
    if q == NULL:
        abort()
    return q


cdef int _cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0]
    cdef double y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef class SchedulerState:
    """Per-page state, the cold heap and the hot list (see the module notes).

    ``SchedulerState(delta, mu, nu, beta, recall, kind, terms, rate,
    signal_delay, last=None)``; kind 0 exact, 1 approx-``terms``, 2 greedy,
    3 cis.  ``alpha``, ``gamma`` and the time-equivalent ``b`` of one signal
    are recomputed from these when needed (the same floating-point
    operations as ``PageModel``, so the same bits), to save memory.

    Memory per page slot: 11 arrays of 8 bytes (``delta, mu, nu, beta,
    recall, last, ncis, cross_t, c_lo, c_hi, c_level``), 2 of 4 bytes
    (``heap, hpos``: at most ``2**31 - 3`` slots) and the ``alive`` byte; the hot list (``hot, hval, hexp, hmark`` and the lazy
    argmax's candidate buffer ``hcand``) is sized to the hot list (a few
    hundred entries), and the rebuild's workspace is
    allocated for the rebuild only.  ``hpos[j]`` is the heap position of a
    cold page, ``-2 - i`` for the hot page at position ``i`` of the hot
    list, -1 otherwise.
    """

    cdef double[::1] delta, mu, nu, beta, recall
    cdef int kind
    cdef long terms
    cdef Py_ssize_t m, cap, n_live
    cdef unsigned char[::1] alive
    cdef double[::1] last, ncis, cross_t, c_lo, c_hi, c_level
    cdef int32_t[::1] heap, hpos  # 32-bit: at most 2**31 - 3 page slots
    cdef Py_ssize_t* hot
    cdef Py_ssize_t* hcand
    cdef double* hval
    cdef double* hexp
    cdef double* hmark
    cdef Py_ssize_t heap_n, hot_n, hot_cap, hot_target, hot_max
    cdef double lev, origin, r_now, t_now, delay, horizon
    cdef long long k, nticks
    cdef bint need_rebuild
    cdef readonly long long n_evaluations
    cdef readonly long long n_rebuilds

    def __cinit__(self):
        self.hot = NULL
        self.hcand = NULL
        self.hval = NULL
        self.hexp = NULL
        self.hmark = NULL
        self.hot_cap = 0

    def __dealloc__(self):
        free(self.hot)
        free(self.hcand)
        free(self.hval)
        free(self.hexp)
        free(self.hmark)

    def __init__(self, delta, mu, nu, beta, recall, int kind, long terms,
                 double rate, double signal_delay, last=None):
        self.delta, self.mu, self.nu = _owned(delta), _owned(mu), _owned(nu)
        self.beta, self.recall = _owned(beta), _owned(recall)
        self.kind = kind
        self.terms = terms
        self.m = self.delta.shape[0]
        self.cap = self.m
        self.n_live = self.m
        m = self.m
        self.alive = np.ones(m, dtype=np.uint8)
        self.last = np.zeros(m) if last is None else np.array(last, dtype=np.float64, copy=True)
        self.ncis = np.zeros(m)
        self.cross_t = np.full(m, INFINITY)
        self.c_lo = np.zeros(m)
        self.c_hi = np.full(m, INFINITY)
        self.c_level = np.full(m, np.nan)
        self.nticks = 0
        self.horizon = 8.0
        self.heap = np.zeros(m, dtype=np.int32)
        self.hpos = np.full(m, -1, dtype=np.int32)
        self.heap_n = 0
        self.hot_n = 0
        self.hot_target = 64  # the rebuild uses min(hot_target, live pages)
        self.hot_max = 4 * self.hot_target
        self.lev = 0.0
        self.origin = 0.0
        self.t_now = 0.0
        self.k = 0
        self.r_now = rate
        self.delay = signal_delay
        self.need_rebuild = True
        self.n_evaluations = 0
        self.n_rebuilds = 0

    # -- read-only views -------------------------------------------------
    @property
    def time(self):
        return self.t_now

    @property
    def rate(self):
        return self.r_now

    @property
    def level(self):
        return self.lev

    @property
    def n_hot(self):
        return self.hot_n

    @property
    def n_pages(self):
        """Live pages."""
        return self.n_live

    @property
    def n_slots(self):
        """Page ids handed out so far (live or removed): the next new id."""
        return self.m

    def alive_mask(self):
        """Copy of the live flags of ids ``0 .. n_slots - 1`` (bool)."""
        return np.array(self.alive[:self.m], dtype=bool)

    def page_ids(self):
        """Live page ids, increasing (int64)."""
        return np.flatnonzero(np.asarray(self.alive[:self.m])).astype(np.int64)

    def _live(self, a):
        x = np.asarray(a[:self.m])
        if self.n_live == self.m:
            return np.array(x, copy=True)
        return x[np.asarray(self.alive[:self.m]).view(bool)]

    def last_crawl(self):
        """Last crawl of each live page, in id order (copy)."""
        return self._live(self.last)

    def signal_counts(self):
        """Counted signals of each live page, in id order (int64 copy)."""
        return self._live(self.ncis).astype(np.int64)

    def params(self):
        """(change_rate, importance, recall, false_rate) of the live pages, in id order (copies)."""
        return (self._live(self.delta), self._live(self.mu), self._live(self.recall), self._live(self.nu))

    def last_crawl_of(self, Py_ssize_t j):
        return self.last[j]

    def nbytes(self):
        """Bytes held by the state's arrays (per-slot arrays at capacity, plus the hot list)."""
        cdef Py_ssize_t cap = self.cap
        # 11 float64 arrays (delta, mu, nu, beta, recall, last, ncis, cross_t, c_lo, c_hi, c_level),
        # 2 int32 arrays (heap, hpos) and the alive bytes, all of capacity cap
        return (cap * (11 * sizeof(double) + 2 * sizeof(int32_t) + sizeof(unsigned char))
                + self.hot_cap * (2 * sizeof(Py_ssize_t) + 3 * sizeof(double)))

    def alive_view(self):
        """Read-only bool view of the live flags of ids ``0 .. n_slots - 1`` (no copy)."""
        a = np.asarray(self.alive[:self.m]).view(bool)
        a.flags.writeable = False
        return a

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
            return INFINITY if self.recall[j] * self.delta[j] > 0.0 else 0.0
        return self.beta[j]

    cdef inline double alpha(self, Py_ssize_t j) noexcept nogil:
        return (1.0 - self.recall[j]) * self.delta[j]  # PageModel.alpha, same operations

    cdef inline double gamma(self, Py_ssize_t j) noexcept nogil:
        return self.recall[j] * self.delta[j] + self.nu[j]  # PageModel.gamma, same operations

    cdef inline double tau(self, Py_ssize_t j, double t) noexcept nogil:
        cdef double te = t - self.last[j]
        if self.ncis[j] > 0.0:
            te = te + self.beff(j) * self.ncis[j]
        return te

    cdef inline double bn(self, Py_ssize_t j) noexcept nogil:
        return self.beff(j) * self.ncis[j] if self.ncis[j] > 0.0 else 0.0

    cdef double value(self, Py_ssize_t j, double tau) noexcept nogil:
        self.n_evaluations += 1
        if self.kind == 2:
            return greedy_value(tau, self.delta[j], self.mu[j])
        if self.kind == 3:
            return cis_value(tau, self.delta[j], self.recall[j], self.alpha(j), self.mu[j])
        return page_value(tau, self.delta[j], self.alpha(j), self.gamma(j), self.nu[j], self.beta[j],
                          self.mu[j], -1 if self.kind == 0 else self.terms)

    cdef bint crossing(self, Py_ssize_t j, double t, double v0, double tau_below) noexcept nogil:
        """Set cross_t[j] (V_j < L before it); True if cross_t[j] > t.

        v0 = V_j(tau_below) with tau_below >= tau_j(t) (-inf: v0 = V_j(tau_j(t))).
        """
        cdef double L = self.lev, lim = self.lev * (1.0 - MARGIN)
        cdef double tau0, lo, hi, step, mid, T, b, base
        cdef double cl = self.c_level[j]
        cdef bint have_hi = False
        cdef int it
        if not (L > 0.0) or not (v0 < lim):
            return False
        tau0 = self.tau(j, t)
        if tau0 == INFINITY:
            self.cross_t[j] = INFINITY
            return True
        lo = tau0
        if tau_below > lo:
            lo = tau_below
        base = lo
        hi = INFINITY
        if cl == L:
            if self.c_lo[j] > lo:
                lo = self.c_lo[j]
            hi = self.c_hi[j]
            have_hi = True
        elif cl > L:
            hi = self.c_hi[j]
            have_hi = hi < INFINITY
        elif cl < L:
            if self.c_lo[j] > lo:
                lo = self.c_lo[j]
        if have_hi and not (hi > lo):
            have_hi = False
            lo = base
        if not have_hi:
            if not (self.value(j, INFINITY) >= lim):
                hi = INFINITY
                lo = INFINITY
            else:
                step = 1.0 / self.delta[j]
                if lo - tau0 > step:
                    step = lo - tau0
                while True:
                    hi = lo + step
                    if hi > 1e300:
                        hi = INFINITY
                        break
                    if self.value(j, hi) >= lim:
                        break
                    lo = hi
                    step = 2.0 * step
        if hi < INFINITY:
            it = 0
            while it < 64 and hi - lo > 0.5 / self.r_now and hi - lo > 0.0625 * (hi - tau0) \
                    and hi - lo > 4.0 * DBL_EPSILON * hi:
                mid = 0.5 * (lo + hi)
                if self.value(j, mid) < lim:
                    lo = mid
                else:
                    hi = mid
                it += 1
        self.c_level[j] = L
        self.c_lo[j] = lo
        self.c_hi[j] = hi
        if lo == INFINITY:
            T = INFINITY
        else:
            b = self.bn(j)
            T = self.last[j] + (lo - b)
            T = T - 8.0 * DBL_EPSILON * (fabs(self.last[j]) + fabs(lo) + fabs(b) + fabs(T)) - 1e-300
        self.cross_t[j] = T
        return T > t

    # -- cold heap (min on cross_t) -----------------------------------------
    cdef inline bint _less(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        return self.cross_t[self.heap[a]] < self.cross_t[self.heap[b]]

    cdef inline void _swap(self, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
        cdef Py_ssize_t ja = self.heap[a], jb = self.heap[b]
        self.heap[a] = jb
        self.heap[b] = ja
        self.hpos[jb] = a
        self.hpos[ja] = b

    cdef void _sift_up(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t p
        while i > 0:
            p = (i - 1) >> 1
            if self._less(i, p):
                self._swap(i, p)
                i = p
            else:
                break

    cdef void _sift_down(self, Py_ssize_t i) noexcept nogil:
        cdef Py_ssize_t c, n = self.heap_n
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and self._less(c + 1, c):
                c += 1
            if self._less(c, i):
                self._swap(c, i)
                i = c
            else:
                break

    cdef void _push(self, Py_ssize_t j) noexcept nogil:
        self.heap[self.heap_n] = j
        self.hpos[j] = self.heap_n
        self.heap_n += 1
        self._sift_up(self.heap_n - 1)

    cdef void _remove(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t i = self.hpos[j], last = self.heap_n - 1
        if i != last:
            self._swap(i, last)
        self.heap_n -= 1
        self.hpos[j] = -1
        if i != last:
            self._sift_up(i)
            self._sift_down(i)

    # -- hot list -------------------------------------------------------------
    cdef void _hot_reserve(self, Py_ssize_t n) noexcept nogil:
        """Room for n hot entries (amortised doubling); aborts if memory is exhausted."""
        cdef Py_ssize_t cap = self.hot_cap
        if n <= cap:
            return
        cap = 2 * cap if 2 * cap > n else n
        if cap < 64:
            cap = 64
        self.hot = <Py_ssize_t*>_resized(self.hot, cap * sizeof(Py_ssize_t))
        self.hcand = <Py_ssize_t*>_resized(self.hcand, cap * sizeof(Py_ssize_t))
        self.hval = <double*>_resized(self.hval, cap * sizeof(double))
        self.hexp = <double*>_resized(self.hexp, cap * sizeof(double))
        self.hmark = <double*>_resized(self.hmark, cap * sizeof(double))
        self.hot_cap = cap

    cdef inline Py_ssize_t _hot_index(self, Py_ssize_t j) noexcept nogil:
        """Position of page j in the hot list, -1 if it is not hot."""
        cdef Py_ssize_t p = self.hpos[j]
        return -2 - p if p <= -2 else -1

    cdef inline void _hot_add(self, Py_ssize_t j, double v, double expiry, double mark) noexcept nogil:
        # hval: an upper bound of V_j valid until hexp (exact at the tick numbered hmark)
        if self.hot_n == self.hot_cap:
            self._hot_reserve(self.hot_n + 1)
        self.hot[self.hot_n] = j
        self.hval[self.hot_n] = v
        self.hexp[self.hot_n] = expiry
        self.hmark[self.hot_n] = mark
        self.hpos[j] = -2 - self.hot_n
        self.hot_n += 1

    cdef inline void _hot_remove(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t i = -2 - self.hpos[j], last = self.hot_n - 1, q
        if i != last:
            q = self.hot[last]
            self.hot[i] = q
            self.hval[i] = self.hval[last]
            self.hexp[i] = self.hexp[last]
            self.hmark[i] = self.hmark[last]
            self.hpos[q] = -2 - i
        self.hpos[j] = -1
        self.hot_n -= 1

    # -- ticks -------------------------------------------------------------------
    cdef void _rebuild(self, double t) noexcept nogil:
        # callers guarantee at least one live page
        cdef Py_ssize_t j, i, n = 0, m = self.m
        cdef Py_ssize_t K = self.hot_target if self.hot_target < self.n_live else self.n_live
        cdef double L, v, lim
        cdef bint slope_key
        # workspace for this rebuild only: the live values in slot order, and a copy to sort
        cdef double* vals = <double*>malloc(self.n_live * sizeof(double))
        cdef double* scratch = <double*>malloc(self.n_live * sizeof(double))
        if vals == NULL or scratch == NULL:
            abort()
        self.n_rebuilds += 1
        for j in range(m):
            self.hpos[j] = -1
            if not self.alive[j]:
                continue
            vals[n] = self.value(j, self.tau(j, t))
            scratch[n] = vals[n]
            n += 1
        self.heap_n = 0
        self.hot_n = 0
        qsort(scratch, n, sizeof(double), _cmp_desc)
        L = scratch[K - 1]
        if not (L > 0.0):
            L = 0.0
            i = K - 1
            while i >= 0:
                if scratch[i] > 0.0:
                    L = scratch[i]
                    break
                i -= 1
        free(scratch)
        self.lev = L
        lim = L * (1.0 - MARGIN)
        slope_key = L > 0.0 and self.kind != 1
        n = 0
        for j in range(m):
            if not self.alive[j]:
                continue
            v = vals[n]
            n += 1
            if slope_key and v < lim:
                # V grows by at most mu/e per unit of time (SLOPE > 1/e): a valid key without a search
                self.cross_t[j] = t + (lim - v) / (SLOPE * self.mu[j]) if self.mu[j] > 0.0 else INFINITY
                self.heap[self.heap_n] = j
                self.hpos[j] = self.heap_n
                self.heap_n += 1
            elif self.crossing(j, t, v, -INFINITY):
                self.heap[self.heap_n] = j
                self.hpos[j] = self.heap_n
                self.heap_n += 1
            else:
                self._hot_add(j, v, t, <double>self.nticks)
        free(vals)
        i = self.heap_n // 2
        while i > 0:
            i -= 1
            self._sift_down(i)
        self.need_rebuild = False

    cdef void _raise_level(self, double t) noexcept nogil:
        cdef Py_ssize_t i, j, n = self.hot_n
        cdef double L
        cdef double* scratch = <double*>malloc(n * sizeof(double))
        if scratch == NULL:
            abort()
        for i in range(n):
            scratch[i] = self.hval[i]
        qsort(scratch, n, sizeof(double), _cmp_desc)
        L = scratch[self.hot_max // 2 - 1]
        free(scratch)
        if not (L > self.lev):
            return
        self.lev = L
        i = 0
        while i < self.hot_n:
            j = self.hot[i]
            if self.crossing(j, t, self.hval[i], self.tau(j, self.hexp[i])):
                self._hot_remove(j)
                self._push(j)
            else:
                i += 1

    cdef (Py_ssize_t, double) _lazy_argmax(self, Py_ssize_t best, double t) noexcept nogil:
        """Exact argmax over the hot list, given ``best``, the page of the largest bound.

        Evaluate ``best`` exactly (value ``ve``).  Any other page with a bound
        below ``ve`` (or equal, with a higher index) cannot win, since bounds
        are >= values; the others, the candidates, are evaluated in order of
        decreasing bound (insertion sort of a handful; unsorted if many) while
        their bound can still beat the best exact value so far.
        """
        cdef Py_ssize_t i, j, p, nc = 0, a, b, x
        cdef double v, ve, bv
        cdef double nt = <double>self.nticks
        p = -2 - self.hpos[best]
        if self.hmark[p] != nt:
            self.hval[p] = self.value(best, self.tau(best, t))
            self.hexp[p] = t
            self.hmark[p] = nt
        ve = self.hval[p]
        for i in range(self.hot_n):
            v = self.hval[i]
            j = self.hot[i]
            if j != best and (v > ve or (v == ve and j < best)):
                self.hcand[nc] = i
                nc += 1
        if nc == 0:
            return best, ve
        if nc <= 32:
            for a in range(1, nc):
                x = self.hcand[a]
                v = self.hval[x]
                b = a - 1
                while b >= 0 and self.hval[self.hcand[b]] < v:
                    self.hcand[b + 1] = self.hcand[b]
                    b -= 1
                self.hcand[b + 1] = x
        bv = ve
        for a in range(nc):
            i = self.hcand[a]
            j = self.hot[i]
            v = self.hval[i]
            if not (v > bv or (v == bv and j < best)):
                continue
            if self.hmark[i] != nt:
                v = self.value(j, self.tau(j, t))
                self.hval[i] = v
                self.hexp[i] = t
                self.hmark[i] = nt
            if v > bv or (v == bv and j < best):
                bv = v
                best = j
        return best, bv

    cdef Py_ssize_t _step(self) noexcept nogil:
        cdef double t, v, bv, lim, h
        cdef Py_ssize_t i, j, best
        self.k += 1
        self.nticks += 1
        t = self.origin + <double>self.k / self.r_now
        self.t_now = t
        h = t + self.horizon / self.r_now
        if self.need_rebuild:
            self._rebuild(t)
        else:
            while self.heap_n > 0 and self.cross_t[self.heap[0]] <= t:
                j = self.heap[0]
                self._remove(j)
                self._hot_add(j, 0.0, -INFINITY, -1.0)
        while True:
            lim = self.lev * (1.0 - MARGIN)
            # one pass: refresh expired bounds (V at t + horizon/R), send pages whose bound is
            # below L back to the heap, and find the largest bound (ties: lowest index)
            bv = -1.0
            best = -1
            i = 0
            while i < self.hot_n:
                j = self.hot[i]
                if self.hexp[i] < t:
                    self.hval[i] = self.value(j, self.tau(j, h))
                    self.hexp[i] = h
                    self.hmark[i] = -1.0
                v = self.hval[i]
                if v < lim and self.crossing(j, t, v, self.tau(j, self.hexp[i])):
                    self._hot_remove(j)
                    self._push(j)
                    continue
                if v > bv or (v == bv and j < best):
                    bv = v
                    best = j
                i += 1
            if best >= 0:
                best, bv = self._lazy_argmax(best, t)
            if best >= 0 and bv >= self.lev:
                break
            self._rebuild(t)
        # crawl the winner
        self._hot_remove(best)
        self.last[best] = t
        self.ncis[best] = 0.0
        v = self.value(best, 0.0)
        if self.crossing(best, t, v, -INFINITY):
            self._push(best)
        else:
            self._hot_add(best, v, t, <double>self.nticks)
        if self.hot_n > self.hot_max:
            self._raise_level(t)
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
        """Count a signal of page j at time t (t >= last crawl); False if discarded."""
        return self._signal(j, t)

    cdef bint _signal(self, Py_ssize_t j, double t) noexcept nogil:
        cdef double v
        cdef Py_ssize_t q
        if t - self.last[j] < self.delay:
            return False
        self.ncis[j] += 1.0
        if self.need_rebuild:
            return True
        q = self._hot_index(j)
        if q >= 0:
            self.hexp[q] = -INFINITY  # its bound no longer holds
            self.hmark[q] = -1.0
            return True
        v = self.value(j, self.tau(j, self.t_now))
        if self.crossing(j, self.t_now, v, -INFINITY):
            self._sift_up(self.hpos[j])
            self._sift_down(self.hpos[j])
        else:
            self._remove(j)
            self._hot_add(j, v, -INFINITY, -1.0)
        return True

    # -- dynamic pages ------------------------------------------------------------
    cdef void _place(self, Py_ssize_t j) noexcept nogil:
        """Put live page j (in neither structure) in the heap or the hot list at the current time."""
        cdef double v = self.value(j, self.tau(j, self.t_now))
        if self.crossing(j, self.t_now, v, -INFINITY):
            self._push(j)
        else:
            self._hot_add(j, v, -INFINITY, -1.0)

    def _grow(self, Py_ssize_t need):
        """Capacity >= need slots, by amortised doubling (a copy of every per-page array)."""
        cdef Py_ssize_t cap = self.cap, m = self.m
        if need <= cap:
            return
        cap = max(need, 2 * cap, 16)
        self.delta = _grown(self.delta, m, cap, 0.0)
        self.mu = _grown(self.mu, m, cap, 0.0)
        self.nu = _grown(self.nu, m, cap, 0.0)
        self.beta = _grown(self.beta, m, cap, 0.0)
        self.recall = _grown(self.recall, m, cap, 0.0)
        self.last = _grown(self.last, m, cap, 0.0)
        self.ncis = _grown(self.ncis, m, cap, 0.0)
        self.cross_t = _grown(self.cross_t, m, cap, INFINITY)
        self.c_lo = _grown(self.c_lo, m, cap, 0.0)
        self.c_hi = _grown(self.c_hi, m, cap, INFINITY)
        self.c_level = _grown(self.c_level, m, cap, np.nan)
        self.heap = _grown(self.heap, self.heap_n, cap, 0)
        self.hpos = _grown(self.hpos, m, cap, -1)
        self.alive = _grown(self.alive, m, cap, 0)
        self.cap = cap

    def add(self, const double[::1] delta, const double[::1] mu, const double[::1] nu,
            const double[::1] beta, const double[::1] recall, const double[::1] last):
        """Append pages with ids n_slots, n_slots + 1, ...; returns the first new id."""
        cdef Py_ssize_t i, j, n = delta.shape[0], first = self.m
        self._grow(self.m + n)
        with nogil:
            for i in range(n):
                j = first + i
                self.delta[j], self.mu[j], self.nu[j] = delta[i], mu[i], nu[i]
                self.beta[j], self.recall[j] = beta[i], recall[i]
                self.last[j] = last[i]
                self.ncis[j] = 0.0
                self.cross_t[j] = INFINITY
                self.c_lo[j] = 0.0
                self.c_hi[j] = INFINITY
                self.c_level[j] = NAN
                self.hpos[j] = -1
                self.alive[j] = 1
                self.m += 1
                self.n_live += 1
                if not self.need_rebuild:
                    self._place(j)
        return first

    def remove(self, const Py_ssize_t[::1] ids):
        """Remove live pages (distinct ids, checked by the caller); their ids are never reused."""
        cdef Py_ssize_t i, j
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                if self.hpos[j] <= -2:
                    self._hot_remove(j)
                elif self.hpos[j] >= 0:
                    self._remove(j)
                self.alive[j] = 0
                self.n_live -= 1

    def update(self, const Py_ssize_t[::1] ids, const double[::1] delta, const double[::1] mu,
               const double[::1] nu, const double[::1] beta, const double[::1] recall):
        """New parameters for live pages (distinct ids); last crawl and signal count kept."""
        cdef Py_ssize_t i, j, q
        with nogil:
            for i in range(ids.shape[0]):
                j = ids[i]
                self.delta[j], self.mu[j], self.nu[j] = delta[i], mu[i], nu[i]
                self.beta[j], self.recall[j] = beta[i], recall[i]
                self.c_level[j] = NAN  # the cached crossing bracket was for the old parameters
                if self.need_rebuild:
                    continue
                q = self._hot_index(j)
                if q >= 0:  # its bound no longer holds: refreshed at the next tick
                    self.hexp[q] = -INFINITY
                    self.hmark[q] = -1.0
                else:
                    self._remove(j)
                    self._place(j)

    def signal_many(self, const Py_ssize_t[::1] pages, const double[::1] times, unsigned char[::1] out):
        """out[i] = signal(pages[i], times[i]), in order (pages and times already validated)."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(pages.shape[0]):
                out[i] = self._signal(pages[i], times[i])

    # -- exact state export / import (save, load, pickle) --------------------------
    def __reduce__(self):
        cdef Py_ssize_t m = self.m
        params = (np.array(self.delta[:m]), np.array(self.mu[:m]), np.array(self.nu[:m]),
                  np.array(self.beta[:m]), np.array(self.recall[:m]))
        return (_restore, (params, self.kind, self.terms, self.export_state()))

    def export_state(self):
        """Every array and scalar the decisions depend on, as a dict of copies.

        ``heap``/``hot`` (with ``hval``, ``hexp``, ``hmark``) are the live
        parts of the cold heap and the hot list in their storage order, so
        :meth:`import_state` restores the structures bit for bit: the
        continued run makes the same decisions *and* the same evaluations.
        The rebuild's workspace is temporary and not part of the state.
        """
        cdef Py_ssize_t hn = self.heap_n, tn = self.hot_n, m = self.m
        return {
            "change_rate": np.array(self.delta[:m], copy=True),
            "importance": np.array(self.mu[:m], copy=True),
            "recall": np.array(self.recall[:m], copy=True),
            "false_rate": np.array(self.nu[:m], copy=True),
            "alive": np.array(self.alive[:m], dtype=bool),
            "last": np.array(self.last[:m], copy=True),
            "ncis": np.array(self.ncis[:m], copy=True),
            "cross_t": np.array(self.cross_t[:m], copy=True),
            "c_lo": np.array(self.c_lo[:m], copy=True),
            "c_hi": np.array(self.c_hi[:m], copy=True),
            "c_level": np.array(self.c_level[:m], copy=True),
            "heap": np.array(self.heap[:hn], dtype=np.intp),
            "hot": _from_ptr_intp(self.hot, tn),
            "hval": _from_ptr(self.hval, tn),
            "hexp": _from_ptr(self.hexp, tn),
            "hmark": _from_ptr(self.hmark, tn),
            "level": self.lev,
            "origin": self.origin,
            "rate": self.r_now,
            "time": self.t_now,
            "signal_delay": self.delay,
            "horizon": self.horizon,
            "k": self.k,
            "nticks": self.nticks,
            "need_rebuild": bool(self.need_rebuild),
            "n_evaluations": self.n_evaluations,
            "n_rebuilds": self.n_rebuilds,
        }

    def import_state(self, d):
        """Overwrite the state with ``export_state()`` output of a state over the same page slots.

        The caller (``Scheduler.from_dict``) has checked every index and
        length: nothing is validated here.  The parameters are those given
        to the constructor (the same slots).
        """
        cdef Py_ssize_t i, j
        cdef Py_ssize_t[::1] heap = np.ascontiguousarray(d["heap"], dtype=np.intp)
        cdef Py_ssize_t[::1] hot = np.ascontiguousarray(d["hot"], dtype=np.intp)
        cdef Py_ssize_t m = self.m
        np.asarray(self.last)[:m] = np.asarray(d["last"], dtype=np.float64)
        np.asarray(self.ncis)[:m] = np.asarray(d["ncis"], dtype=np.float64)
        np.asarray(self.cross_t)[:m] = np.asarray(d["cross_t"], dtype=np.float64)
        np.asarray(self.c_lo)[:m] = np.asarray(d["c_lo"], dtype=np.float64)
        np.asarray(self.c_hi)[:m] = np.asarray(d["c_hi"], dtype=np.float64)
        np.asarray(self.c_level)[:m] = np.asarray(d["c_level"], dtype=np.float64)
        alive = np.ascontiguousarray(d["alive"], dtype=np.uint8)
        np.asarray(self.alive)[:self.m] = alive
        self.n_live = int(alive.sum())
        self.hpos[:] = -1
        self.heap_n = heap.shape[0]
        for i in range(self.heap_n):
            j = heap[i]
            self.heap[i] = j
            self.hpos[j] = i
        self.hot_n = 0
        self._hot_reserve(hot.shape[0])
        self.hot_n = hot.shape[0]
        hval = np.ascontiguousarray(d["hval"], dtype=np.float64)
        hexp = np.ascontiguousarray(d["hexp"], dtype=np.float64)
        hmark = np.ascontiguousarray(d["hmark"], dtype=np.float64)
        for i in range(self.hot_n):
            j = hot[i]
            self.hot[i] = j
            self.hpos[j] = -2 - i
            self.hval[i] = hval[i]
            self.hexp[i] = hexp[i]
            self.hmark[i] = hmark[i]
        self.lev = d["level"]
        self.origin = d["origin"]
        self.r_now = d["rate"]
        self.t_now = d["time"]
        self.delay = d["signal_delay"]
        self.horizon = d["horizon"]
        self.k = d["k"]
        self.nticks = d["nticks"]
        self.need_rebuild = d["need_rebuild"]
        self.n_evaluations = d["n_evaluations"]
        self.n_rebuilds = d["n_rebuilds"]

    def set_rate(self, double rate):
        """Ticks continue at spacing 1/rate from the current time."""
        self.origin = self.t_now
        self.k = 0
        self.r_now = rate


def _restore(params, int kind, long terms, state):
    """Unpickle a :class:`SchedulerState` (its ``__reduce__``)."""
    s = SchedulerState(*params, kind, terms, state["rate"], state["signal_delay"])
    s.import_state(state)
    return s


def _owned(a):
    return np.array(a, dtype=np.float64, copy=True)


def _grown(a, Py_ssize_t n, Py_ssize_t cap, fill):
    """New array of length cap: a[:n] then fill."""
    x = np.asarray(a)
    out = np.full(cap, fill, dtype=x.dtype)
    out[:n] = x[:n]
    return out


cdef object _from_ptr(const double* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = p[i]
    return out


cdef object _from_ptr_intp(const Py_ssize_t* p, Py_ssize_t n):
    out = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] o = out
    cdef Py_ssize_t i
    for i in range(n):
        o[i] = p[i]
    return out
