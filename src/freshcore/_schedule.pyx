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
smallest positive value if that one is 0).  When the hot list grows past
``hot_max``, ``L`` is raised to its ``hot_max/2``-th bound (raising ``L``
keeps every ``T_i`` valid).

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
after one crawl cycle).  Staggered initial crawl times are not offered yet.
"""

from libc.math cimport INFINITY, isnan, fabs
from libc.float cimport DBL_EPSILON
from libc.stdlib cimport qsort

import numpy as np

from freshcore._value cimport greedy_value, page_value, cis_value

cdef double MARGIN = 1e-12


cdef int _cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0]
    cdef double y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef class SchedulerState:
    """Per-page state, the cold heap and the hot list (see the module notes).

    ``SchedulerState(delta, mu, alpha, gamma, nu, beta, recall, beff, kind,
    terms, rate, signal_delay)``; kind 0 exact, 1 approx-``terms``, 2 greedy,
    3 cis; ``beff`` is the time-equivalent of one signal used in ``tau``.
    """

    cdef const double[::1] delta, mu, alpha, gamma, nu, beta, recall, beff
    cdef int kind
    cdef long terms
    cdef Py_ssize_t m
    cdef double[::1] last, ncis, cross_t, c_lo, c_hi, c_level, vals, scratch, hval, hexp, hmark
    cdef Py_ssize_t[::1] heap, hpos, hot, hotpos
    cdef Py_ssize_t heap_n, hot_n, hot_target, hot_max
    cdef double lev, origin, r_now, t_now, delay, horizon
    cdef long long k, nticks
    cdef bint need_rebuild
    cdef readonly long long n_evaluations
    cdef readonly long long n_rebuilds

    def __init__(self, delta, mu, alpha, gamma, nu, beta, recall, beff, int kind, long terms,
                 double rate, double signal_delay):
        self.delta, self.mu, self.alpha, self.gamma = delta, mu, alpha, gamma
        self.nu, self.beta, self.recall, self.beff = nu, beta, recall, beff
        self.kind = kind
        self.terms = terms
        self.m = self.delta.shape[0]
        m = self.m
        self.last = np.zeros(m)
        self.ncis = np.zeros(m)
        self.cross_t = np.full(m, INFINITY)
        self.c_lo = np.zeros(m)
        self.c_hi = np.full(m, INFINITY)
        self.c_level = np.full(m, np.nan)
        self.vals = np.zeros(m)
        self.scratch = np.zeros(m)
        self.hval = np.zeros(m)
        self.hexp = np.zeros(m)
        self.hmark = np.zeros(m)
        self.nticks = 0
        self.horizon = 8.0
        self.heap = np.zeros(m, dtype=np.intp)
        self.hpos = np.full(m, -1, dtype=np.intp)
        self.hot = np.zeros(m, dtype=np.intp)
        self.hotpos = np.full(m, -1, dtype=np.intp)
        self.heap_n = 0
        self.hot_n = 0
        self.hot_target = 64 if m > 64 else m
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

    def last_crawl(self):
        return np.array(self.last, copy=True)

    def signal_counts(self):
        return np.array(self.ncis, copy=True).astype(np.int64)

    def last_crawl_of(self, Py_ssize_t j):
        return self.last[j]

    # -- values ----------------------------------------------------------
    cdef inline double tau(self, Py_ssize_t j, double t) noexcept nogil:
        cdef double te = t - self.last[j]
        if self.ncis[j] > 0.0:
            te = te + self.beff[j] * self.ncis[j]
        return te

    cdef inline double bn(self, Py_ssize_t j) noexcept nogil:
        return self.beff[j] * self.ncis[j] if self.ncis[j] > 0.0 else 0.0

    cdef double value(self, Py_ssize_t j, double tau) noexcept nogil:
        self.n_evaluations += 1
        if self.kind == 2:
            return greedy_value(tau, self.delta[j], self.mu[j])
        if self.kind == 3:
            return cis_value(tau, self.delta[j], self.recall[j], self.alpha[j], self.mu[j])
        return page_value(tau, self.delta[j], self.alpha[j], self.gamma[j], self.nu[j], self.beta[j],
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
    cdef inline void _hot_add(self, Py_ssize_t j, double v, double expiry, double mark) noexcept nogil:
        # hval: an upper bound of V_j valid until hexp (exact at the tick numbered hmark)
        self.hot[self.hot_n] = j
        self.hval[self.hot_n] = v
        self.hexp[self.hot_n] = expiry
        self.hmark[self.hot_n] = mark
        self.hotpos[j] = self.hot_n
        self.hot_n += 1

    cdef inline void _hot_remove(self, Py_ssize_t j) noexcept nogil:
        cdef Py_ssize_t i = self.hotpos[j], last = self.hot_n - 1, q
        if i != last:
            q = self.hot[last]
            self.hot[i] = q
            self.hval[i] = self.hval[last]
            self.hexp[i] = self.hexp[last]
            self.hmark[i] = self.hmark[last]
            self.hotpos[q] = i
        self.hotpos[j] = -1
        self.hot_n -= 1

    # -- ticks -------------------------------------------------------------------
    cdef void _rebuild(self, double t) noexcept nogil:
        cdef Py_ssize_t j, i, K = self.hot_target, m = self.m
        cdef double L
        self.n_rebuilds += 1
        for j in range(m):
            self.vals[j] = self.value(j, self.tau(j, t))
            self.scratch[j] = self.vals[j]
            self.hpos[j] = -1
            self.hotpos[j] = -1
        self.heap_n = 0
        self.hot_n = 0
        qsort(&self.scratch[0], m, sizeof(double), _cmp_desc)
        L = self.scratch[K - 1]
        if not (L > 0.0):
            L = 0.0
            i = K - 1
            while i >= 0:
                if self.scratch[i] > 0.0:
                    L = self.scratch[i]
                    break
                i -= 1
        self.lev = L
        for j in range(m):
            if self.crossing(j, t, self.vals[j], -INFINITY):
                self.heap[self.heap_n] = j
                self.hpos[j] = self.heap_n
                self.heap_n += 1
            else:
                self._hot_add(j, self.vals[j], t, <double>self.nticks)
        i = self.heap_n // 2
        while i > 0:
            i -= 1
            self._sift_down(i)
        self.need_rebuild = False

    cdef void _raise_level(self, double t) noexcept nogil:
        cdef Py_ssize_t i, j, n = self.hot_n
        cdef double L
        for i in range(n):
            self.scratch[i] = self.hval[i]
        qsort(&self.scratch[0], n, sizeof(double), _cmp_desc)
        L = self.scratch[self.hot_max // 2 - 1]
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
        cdef Py_ssize_t i, j, p, nc = 0, a, b
        cdef double v, ve, bv, x
        cdef double nt = <double>self.nticks
        p = self.hotpos[best]
        if self.hmark[p] != nt:
            self.hval[p] = self.value(best, self.tau(best, t))
            self.hexp[p] = t
            self.hmark[p] = nt
        ve = self.hval[p]
        for i in range(self.hot_n):
            v = self.hval[i]
            j = self.hot[i]
            if j != best and (v > ve or (v == ve and j < best)):
                self.scratch[nc] = <double>i
                nc += 1
        if nc == 0:
            return best, ve
        if nc <= 32:
            for a in range(1, nc):
                x = self.scratch[a]
                v = self.hval[<Py_ssize_t>x]
                b = a - 1
                while b >= 0 and self.hval[<Py_ssize_t>self.scratch[b]] < v:
                    self.scratch[b + 1] = self.scratch[b]
                    b -= 1
                self.scratch[b + 1] = x
        bv = ve
        for a in range(nc):
            i = <Py_ssize_t>self.scratch[a]
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
        cdef double v
        if t - self.last[j] < self.delay:
            return False
        self.ncis[j] += 1.0
        if self.need_rebuild:
            return True
        if self.hotpos[j] >= 0:
            self.hexp[self.hotpos[j]] = -INFINITY  # its bound no longer holds
            self.hmark[self.hotpos[j]] = -1.0
            return True
        v = self.value(j, self.tau(j, self.t_now))
        if self.crossing(j, self.t_now, v, -INFINITY):
            self._sift_up(self.hpos[j])
            self._sift_down(self.hpos[j])
        else:
            self._remove(j)
            self._hot_add(j, v, -INFINITY, -1.0)
        return True

    def set_rate(self, double rate):
        """Ticks continue at spacing 1/rate from the current time."""
        self.origin = self.t_now
        self.k = 0
        self.r_now = rate
