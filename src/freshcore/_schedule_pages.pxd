# The scheduler's pages (freshcore._schedule): the per-page record a pop reads and writes (and the numpy
# arrays that hold the records), each page's value at a tick for the value kind (the same cdef functions as
# freshcore.value.crawl_value, so the same bits), and the pages popped at a tick.  Every function is inline
# (compiled into freshcore._schedule):
# ``from freshcore._schedule_pages cimport Pages, value_at``.

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, uint32_t, uint16_t
from libc.stdlib cimport free

from freshcore._value cimport greedy_value_ex, page_value, cis_value, signal_beta
from freshcore._schedule_memory cimport resize_doubles, resize_int32s, resize_uint16s

cdef enum:  # value kinds (freshcore.schedule's _KINDS)
    EXACT = 0
    APPROX = 1
    GREEDY = 2
    CIS = 3


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


cdef inline double signal_time(const Pages* p, Py_ssize_t j) noexcept nogil:
    """b_j, the time-equivalent of one signal for the value kind (freshcore._schedule's module notes)."""
    if p.kind == GREEDY:
        return 0.0
    if p.kind == CIS:
        return INFINITY if p.recall[j] * p.records[j].change_rate > 0.0 else 0.0
    return signal_beta(p.records[j].change_rate, p.recall[j], p.false_rate[j])


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
    ex[0] = -1.0
    if p.kind == GREEDY:
        b[0] = 0.0
        return greedy_value_ex(tau, dl, p.records[j].importance, ex)
    if p.kind == CIS:
        b[0] = INFINITY if p.recall[j] * dl > 0.0 else 0.0
        return cis_value(tau, dl, p.recall[j], page_alpha(p, j), p.records[j].importance)
    b[0] = signal_beta(dl, p.recall[j], p.false_rate[j])
    return page_value(tau, dl, page_alpha(p, j), page_gamma(p, j), p.false_rate[j], b[0], p.records[j].importance,
                      -1 if p.kind == EXACT else p.terms)


cdef inline double interval_bound(const Pages* p, Py_ssize_t j, double tau, double b) noexcept nogil:
    """An upper bound of psi_j(tau) (``b = b_j``), where ``V' = mu alpha e^{-alpha tau} psi`` (psi is the expected
    time to the crawl of the threshold policy at tau; approx-j keeps some of its non-negative terms; Greedy's
    is tau): ``min(tau, (tau + beta)/(1 + gamma beta))``, since by Wald's identity ``(1 + gamma beta) psi`` is
    the expected effective elapsed time at the crawl, at most ``tau + beta`` (a signal's jump passes tau by
    less than beta).  Not psi itself, which costs several values."""
    cdef double w
    if p.kind == GREEDY or not (0.0 < b < INFINITY):
        return tau
    w = ((tau + b) / (1.0 + page_gamma(p, j) * b)) * (1.0 + 1e-15)
    return w if w < tau else tau


cdef struct Popped:
    # the pages popped at a tick, in order: id, value at the tick, e^{-Delta tau} of a Greedy evaluation (-1:
    # not computed), b_j (value_at), and the bucket and key they were popped from (to put them back if the tick fails)
    int32_t* id
    double* value
    double* exp
    double* beta
    double* key
    uint16_t* source
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
