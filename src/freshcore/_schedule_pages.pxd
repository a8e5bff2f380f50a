# The scheduler's pages (freshcore._schedule): the per-page record a pop reads and writes (and the numpy
# arrays that hold the records), each page's value at a tick for the value kind (the same cdef functions as
# freshcore.value.crawl_value, so the same bits), and the pages popped at a tick.  Every function is inline
# (compiled into freshcore._schedule):
# ``from freshcore._schedule_pages cimport Pages, value_at``.

from libc.math cimport INFINITY, NAN, exp, expm1, log1p
from libc.stdint cimport int32_t, uint32_t, uint16_t
from libc.stdlib cimport free

from freshcore._value cimport greedy_value_ex, page_value, cis_value, signal_beta
from freshcore._polled cimport PolledPage, polled_prepare, polled_value, polled_value_bounds
from freshcore._schedule_polled cimport polled_psi_bar, polled_value_cheap
from freshcore._schedule_memory cimport resize_doubles, resize_int32s, resize_uint16s

cdef enum:  # value kinds (freshcore.schedule's _KINDS)
    EXACT = 0
    APPROX = 1
    GREEDY = 2
    CIS = 3
    POLLED = 4  # polled signals (freshcore._polled): last_crawl holds the effective start ell, s = Delta (t - ell)


cdef struct PageRecord:
    # the per-page fields a pop reads and writes, in one 32-byte record (half a cache line)
    double last_crawl
    double change_rate
    double importance
    int32_t entry       # the page's entry in its heap, its calendar entry or its position in the unsorted list
    uint32_t n_signals  # counted signals since the last crawl


cdef inline object page_records(Py_ssize_t n, bint fill=True):
    """n PageRecords as a numpy structured array (last crawl 0, entry -1, the rest 0; without ``fill``, entry 0
    too: the caller fills them), 32-byte aligned so that none straddles a cache line."""
    import numpy as np
    dtype = np.dtype([("last_crawl", np.float64), ("change_rate", np.float64), ("importance", np.float64),
                      ("entry", np.int32), ("n_signals", np.uint32)])
    raw = np.zeros(n * 32 + 32, dtype=np.uint8)
    off = (-raw.ctypes.data) % 32
    records = raw[off:off + n * 32].view(dtype)
    if fill:
        records["entry"] = -1
    return records


cdef inline object grown(a, Py_ssize_t n, Py_ssize_t cap, fill):
    """A per-page array grown to cap slots: a[:n], then fill."""
    import numpy as np
    out = np.full(cap, fill, dtype=a.dtype)
    out[:n] = a[:n]
    return out


cdef struct Pages:
    # the pages' parameters (the state's arrays; set again when they move), by page id; ``alpha``,
    # ``gamma`` and ``beta`` are recomputed when needed, with PageModel's floating-point operations
    PageRecord* records
    double* false_rate
    double* recall
    int kind
    long terms  # of approx-j
    # under POLLED only (NULL otherwise): each page's crawl time c, last poll time p and poll interval w
    double* crawl
    double* last_poll
    double* poll_interval
    # (polled) a direct-mapped cache of polled_prepare's pages (page_prepare; NULL: none), PREP_CACHE entries
    PolledPage* prep_cache


cdef enum:
    PREP_CACHE = 2048  # entries of Pages.prep_cache (a power of 2; ~190 bytes each)


cdef inline void page_prepare(const Pages* p, Py_ssize_t j, PolledPage* pg) noexcept nogil:
    """``polled_prepare`` of polled page j into ``pg``, from the cache when its slot holds the page's parameters
    (a prepared page is a function of ``Delta``, ``lambda``, ``nu`` and ``w`` alone, which it keeps: the same bits
    as a fresh one; ~12 ``exp``/``log`` saved, 3-4 times a popped page).  An empty slot (zeros) matches no page
    (``w > 0``)."""
    cdef double dl = p.records[j].change_rate, lam = p.recall[j], nu = p.false_rate[j], w = p.poll_interval[j]
    cdef PolledPage* c
    if p.prep_cache == NULL:
        polled_prepare(pg, dl, lam, nu, w)
        return
    c = &p.prep_cache[j & (PREP_CACHE - 1)]
    if not (c.dl == dl and c.lam == lam and c.nu == nu and c.w == w):
        polled_prepare(c, dl, lam, nu, w)
    pg[0] = c[0]


cdef inline double signal_time(const Pages* p, Py_ssize_t j) noexcept nogil:
    """b_j, the time-equivalent of one signal for the value kind (freshcore._schedule's module notes)."""
    if p.kind == GREEDY or p.kind == POLLED:
        return 0.0
    if p.kind == CIS:
        return INFINITY if p.recall[j] * p.records[j].change_rate > 0.0 else 0.0
    return signal_beta(p.records[j].change_rate, p.recall[j], p.false_rate[j])


cdef inline bint polled_greedy(const Pages* p, Py_ssize_t j) noexcept nogil:
    """Whether polled page j has exactly Greedy's value (``polled_prepare``'s kind 1: ``lambda Delta = 0`` or
    ``w = inf``, ``Delta > 0``): ``(mu/Delta) R^1(s)``, ``s = Delta (t - ell)``, Greedy's at ``tau = t - ell``."""
    cdef double dl = p.records[j].change_rate
    return p.kind == POLLED and dl != 0.0 and (p.recall[j] * dl == 0.0 or p.poll_interval[j] == INFINITY)


cdef inline double page_alpha(const Pages* p, Py_ssize_t j) noexcept nogil:
    return (1.0 - p.recall[j]) * p.records[j].change_rate  # PageModel.alpha, same operations


cdef inline double page_gamma(const Pages* p, Py_ssize_t j) noexcept nogil:
    return p.recall[j] * p.records[j].change_rate + p.false_rate[j]  # PageModel.gamma, same operations


cdef inline double signal_shift(const Pages* p, Py_ssize_t j) noexcept nogil:
    """b_j n_j (0 without signals)."""
    return signal_time(p, j) * <double>p.records[j].n_signals if p.records[j].n_signals > 0 else 0.0


cdef inline double page_tau(const Pages* p, Py_ssize_t j, double t) noexcept nogil:
    """tau_j(t) = (t - last_j) + b_j n_j."""
    cdef double te = t - p.records[j].last_crawl
    if p.records[j].n_signals > 0:
        te = te + signal_time(p, j) * <double>p.records[j].n_signals
    return te


cdef inline double value_at(const Pages* p, Py_ssize_t j, double tau, double* ex, double* b) noexcept nogil:
    """V_j(tau); for Greedy ``ex[0] = e^{-Delta tau}`` when it was computed, else (and for the other kinds) -1;
    ``b[0] = b_j`` (``signal_time``, the same bits), computed once for the value and the bounds."""
    cdef double dl = p.records[j].change_rate
    cdef PolledPage pg
    ex[0] = -1.0
    if p.kind == POLLED:
        # V(s) at s = Delta (t - ell): polled_sums gives 0 for s <= 0, mu/Delta for s = inf, 0 for Delta = 0
        b[0] = 0.0
        page_prepare(p, j, &pg)
        return polled_value(&pg, dl * tau, p.records[j].importance)
    if p.kind == GREEDY:
        b[0] = 0.0
        return greedy_value_ex(tau, dl, p.records[j].importance, ex)
    if p.kind == CIS:
        b[0] = INFINITY if p.recall[j] * dl > 0.0 else 0.0
        return cis_value(tau, dl, p.recall[j], page_alpha(p, j), p.records[j].importance)
    b[0] = signal_beta(dl, p.recall[j], p.false_rate[j])
    return page_value(tau, dl, page_alpha(p, j), page_gamma(p, j), p.false_rate[j], b[0], p.records[j].importance,
                      -1 if p.kind == EXACT else p.terms)


cdef inline double value_upper_at(const Pages* p, Py_ssize_t j, double tau, bint closed_form,
                                  double* lower) noexcept nogil:
    """An upper bound of ``value_at``'s V_j(tau) for the polled kind: ``polled_value_bounds``' (sums to ~1e-6,
    about half its cost where the lattice is large; NaN if not found, and for the other kinds), with its lower
    bound in ``lower[0]`` (NaN with it); or with ``closed_form`` ``polled_value_cheap`` (four ``exp``/``expm1``;
    ~1% above V at low recall, ~25% at high; inf where it gives none, and for the other kinds), ``lower[0]``
    -inf."""
    cdef double dl = p.records[j].change_rate
    cdef PolledPage pg
    lower[0] = -INFINITY if closed_form else NAN
    if p.kind != POLLED:
        return INFINITY if closed_form else NAN
    page_prepare(p, j, &pg)
    if closed_form:
        return polled_value_cheap(&pg, dl * tau, p.records[j].importance)
    return polled_value_bounds(&pg, dl * tau, p.records[j].importance, lower)


cdef inline double interval_bound(const Pages* p, Py_ssize_t j, double tau, double b) noexcept nogil:
    """An upper bound of psi_j(tau) (``b = b_j``), where ``V' = mu alpha e^{-alpha tau} psi`` (psi is the expected
    time to the crawl of the threshold policy at tau; approx-j keeps some of its non-negative terms; Greedy's
    is tau): ``min(tau, (tau + beta)/(1 + gamma beta))``, since by Wald's identity ``(1 + gamma beta) psi`` is
    the expected effective elapsed time at the crawl, at most ``tau + beta`` (a signal's jump passes tau by
    less than beta).  Not psi itself, which costs several values."""
    cdef double w
    cdef PolledPage pg
    if p.kind == POLLED:
        # polled_psi_bar at s = Delta tau (already in time units): min(s/alpha, Wald's (s + alpha w + b)/(alpha +
        # q b/w)) w/(Delta w); Greedy's tau for the pages of Greedy's value
        if not (tau > 0.0):
            return 0.0
        page_prepare(p, j, &pg)
        return polled_psi_bar(&pg, p.records[j].change_rate * tau) * (1.0 + 1e-15)
    if p.kind == GREEDY or not (0.0 < b < INFINITY):
        return tau
    w = ((tau + b) / (1.0 + page_gamma(p, j) * b)) * (1.0 + 1e-15)
    return w if w < tau else tau


cdef inline double poll_shift(double ell, double c, double p0, double t, bint moved, double dl, double lam,
                              double nu) noexcept nogil:
    """The effective start ``ell`` after a poll at ``t`` of a page crawled at ``c`` whose last poll was at ``p0``
    (``t > c``; the window ``(p0, t]``, ``l = t - max(c, p0)`` after the crawl, ``a = max(0, c - p0)`` before it):
    not moved, ``s`` falls by ``lambda Delta l`` (``ell + lambda l``, at most ``t``: ``s`` at ``t`` not below 0,
    and never lowered: a start at or after ``t``, after a re-parameterisation or a poll delivered before it,
    stays); moved, it rises by
    ``extra = log1p(e^{-e} (1 - e^{-lambda Delta l})/(1 - e^{-e}))``, ``e = nu l + gamma a``
    (``ell - extra/Delta``; ``-inf`` when ``e = 0``: the move proves a change), ``freshcore.polled_signals``'
    window posterior less the ``Delta l`` that ``s = Delta (t - ell)`` has already grown by."""
    cdef double after = t - (c if c > p0 else p0), a = c - p0 if c > p0 else 0.0
    cdef double ld = lam * dl, e, extra
    if not moved:
        e = ell + lam * after
        if e < t:
            return e
        return t if t > ell else ell  # (ell <= t: the rounding of ell + l when lambda = 1; ell > t: kept)
    if ld * after == 0.0:
        return ell
    e = nu * after + (ld + nu) * a
    if e == 0.0:
        return -INFINITY
    extra = log1p(exp(-e) * -expm1(-ld * after) / -expm1(-e))
    return ell - extra / dl


cdef inline double rescaled_start(double ell, double now, double old_dl, double new_dl) noexcept nogil:
    """The effective start that keeps a polled page's ``s = Delta (now - ell)`` when Delta changes (``now``
    if either Delta is 0: ``s`` is then 0, or meaningless; ``ell`` if ``s <= 0``).  Never after ``now`` unless
    ``ell`` is."""
    if not (now - ell > 0.0):
        return ell  # s <= 0 (a poll after the current time): V = 0, kept
    if old_dl == 0.0 or new_dl == 0.0:
        return now
    return now - (old_dl * (now - ell)) / new_dl


cdef struct Popped:
    # the pages popped at a tick, in order: id, value at the tick, e^{-Delta tau} of a Greedy evaluation (-1:
    # not computed), b_j (value_at), and the bucket and key they were popped from (to put them back if the tick fails)
    int32_t* id
    double* value
    double* exp
    double* beta
    double* key
    uint16_t* source
    # (polled) the popped pages waiting with a bound of V as their value (their indices here, ``wait[:nwait]`` of
    # the tick: a binary heap, the largest prio first, ties the lower id, ``wait_push``), and by index the order
    # in which they are taken (``SchedulerState._evaluate``)
    int32_t* wait
    double* prio
    double* lower   # (polled) a waiting page's lower bound of V (NaN: none)
    Py_ssize_t capacity


cdef inline int popped_resize(Popped* p, Py_ssize_t cap) noexcept nogil:
    """The buffer resized to cap entries; -1 if growing it exhausted memory (its capacity then unchanged),
    else 0 (a failed shrink leaves some arrays larger)."""
    cdef bint ok = resize_int32s(&p.id, cap)
    ok = resize_doubles(&p.value, cap) and ok
    ok = resize_doubles(&p.exp, cap) and ok
    ok = resize_doubles(&p.beta, cap) and ok
    ok = resize_doubles(&p.key, cap) and ok
    ok = resize_uint16s(&p.source, cap) and ok
    ok = resize_int32s(&p.wait, cap) and ok
    ok = resize_doubles(&p.prio, cap) and ok
    ok = resize_doubles(&p.lower, cap) and ok
    if ok or cap < p.capacity:
        p.capacity = cap
    return 0 if ok or cap < p.capacity else -1


cdef inline int popped_reserve(Popped* p, Py_ssize_t n) noexcept nogil:
    """Room for n pages (the capacity doubled as often as needed, at least 64); -1 if memory is exhausted."""
    cdef Py_ssize_t cap = p.capacity
    if n <= cap:
        return 0
    while cap < n:
        cap = 2 * cap if cap >= 32 else 64
    return popped_resize(p, cap)


cdef inline void popped_free(Popped* p) noexcept nogil:
    free(p.id)
    free(p.value)
    free(p.exp)
    free(p.beta)
    free(p.key)
    free(p.source)
    free(p.wait)
    free(p.prio)
    free(p.lower)


cdef inline bint wait_above(const Popped* p, int32_t a, int32_t b) noexcept nogil:
    """Whether popped page a is taken before b from the waiting heap: the larger prio, ties the lower id."""
    return p.prio[a] > p.prio[b] or (p.prio[a] == p.prio[b] and p.id[a] < p.id[b])


cdef inline void wait_sift_down(Popped* p, Py_ssize_t n, Py_ssize_t i) noexcept nogil:
    """The heap ``wait[:n]`` restored below slot i (whose entry may rank lower than its children now)."""
    cdef int32_t e = p.wait[i]
    cdef Py_ssize_t c
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and wait_above(p, p.wait[c + 1], p.wait[c]):
            c += 1
        if not wait_above(p, p.wait[c], e):
            break
        p.wait[i] = p.wait[c]
        i = c
    p.wait[i] = e


cdef inline void wait_push(Popped* p, Py_ssize_t* n, int32_t e) noexcept nogil:
    """Popped page e onto the waiting heap ``wait[:n]`` (its prio set; room made by the caller)."""
    cdef Py_ssize_t i = n[0], h
    n[0] = i + 1
    while i > 0:
        h = (i - 1) >> 1
        if not wait_above(p, e, p.wait[h]):
            break
        p.wait[i] = p.wait[h]
        i = h
    p.wait[i] = e


cdef inline void wait_pop(Popped* p, Py_ssize_t* n) noexcept nogil:
    """The waiting heap's top removed."""
    n[0] -= 1
    if n[0] > 0:
        p.wait[0] = p.wait[n[0]]
        wait_sift_down(p, n[0], 0)
