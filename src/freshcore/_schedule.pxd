# The compiled scheduler state (freshcore._schedule): its fields and C methods, declared here so that its
# units can take the state whole (``_schedule_export``: the state as the file format holds it).  What the
# fields hold and why: the module notes and the class docstring in ``_schedule.pyx``.
# ``from freshcore._schedule cimport SchedulerState``.

cimport cython
from libc.stdint cimport int32_t, int64_t, uint32_t

from freshcore._schedule_pages cimport Pages, Popped
from freshcore._schedule_buckets cimport Buckets
from freshcore._schedule_park cimport Park


cdef struct TickUndo:  # what a tick changes besides the buckets, to put it back if memory runs out
    long long tick, n_ticks, last_popped_tick, n_evaluations
    double now, last_winning_value, log_last_winning_value
    Park park
    double winner_last_crawl
    uint32_t winner_signals
    double winner_crawl  # (under "polled")
    double winner_last_poll  # (under "polled", with poll groups: the winner's last poll, count and anchor)
    int64_t winner_seen
    double winner_anchor


@cython.final
cdef class SchedulerState:
    # the per-page arrays: the PageRecords (a numpy structured array, page_records), false rate, recall and
    # bucket code; ``pages`` and ``buckets`` hold their data pointers
    cdef object records_array
    cdef object false_rate, recall, bucket
    cdef object polled_arrays  # under "polled": (crawl, last poll, poll interval), float64; else None
    # under "polled" (else NULL): per page the anchor of its key, (t0, ell0) as float32 rounded up, NaN if
    # none (re-keyed at its pop after unmoved polls, _rekey_shift)
    cdef object rekey_array
    cdef object prep_cache_array  # (polled) the bytes of pages.prep_cache
    cdef float* rekey
    cdef Pages pages
    # poll groups (under "polled", once a page has a group; NULL before): per slot its group label (-1: none),
    # the group's poll count at its last own event (``seen``) and its effective start then (``anchor``); per
    # group its poll count, last poll time and the latest last poll of its members (``top``, a bound); the
    # numpy arrays in group_arrays (label, seen, anchor) and group_tables (polls, time, top)
    cdef object group_arrays, group_tables
    cdef int32_t* g_label
    cdef int64_t* g_seen
    cdef double* g_anchor
    cdef int64_t* g_polls
    cdef double* g_time
    cdef double* g_top
    cdef Py_ssize_t n_groups
    # the group members whose effective start is after their window's start (``ell > max(c, p)``, after a
    # re-parameterisation or a poll before ``ell``): their next unmoved window may be capped (``poll_shift``), so
    # their group's polls are theirs one by one, not lazily; a list (no repeats: a flag per slot) that holds
    # them all, and maybe others (checked when their group polls)
    cdef unsigned char* g_flag
    cdef int32_t* g_prone
    cdef Py_ssize_t n_prone
    cdef Py_ssize_t n_ids, capacity, n_live  # ids handed out, slots allocated, live pages
    cdef Buckets buckets
    cdef Park park
    cdef Popped popped  # the pages popped at the current tick
    # (polled) the tick's best page taken on its bounds, not its value (its index in popped, whose value holds
    # its upper bound; -1: none, the best value is the best page's value)
    cdef Py_ssize_t prov
    cdef double now, signal_delay
    cdef double last_winning_value, log_last_winning_value
    cdef long long tick, n_ticks  # ticks since the calendar's origin, ticks in all
    cdef bint built
    cdef bint broken  # loading a state ran out of memory: every call refuses
    cdef readonly long long n_evaluations
    cdef readonly long long n_bound_wins  # (polled) ticks whose winner was taken on its bounds, without its value
    # the page (-1: none) whose value the current call could not compute (NaN: past the series cap), and its tau
    cdef Py_ssize_t failed_page
    cdef double failed_tau

    cdef _usable(self)
    cdef _failed(self, str then)
    # pages in their buckets
    cdef inline double _value(self, Py_ssize_t j, double tau, double* ex, double* b) noexcept nogil
    cdef inline bint _parks(self, Py_ssize_t j, double v, double tau) noexcept nogil
    cdef inline double _park_key(self, Py_ssize_t j, double t, double v, double tau, double psi,
                                 double b) noexcept nogil
    cdef inline void _prefetch_page(self, Py_ssize_t j) noexcept nogil
    cdef int _put(self, Py_ssize_t j, double t, double v, double tau, double ex, double bj) noexcept nogil
    cdef int _place(self, Py_ssize_t j, double t) noexcept nogil
    cdef inline double _ell(self, Py_ssize_t j) noexcept nogil
    cdef inline void _rekey_set(self, Py_ssize_t j, double t0, double ell0) noexcept nogil
    cdef inline void _mark_rekeyed(self, Py_ssize_t n, Py_ssize_t j, double rk, double rd, Py_ssize_t source,
                                   double key) noexcept nogil
    cdef inline double _rekey_shift(self, Py_ssize_t j, double t) noexcept nogil
    # ticks
    cdef int _build(self, double t) noexcept nogil
    cdef inline bint _evaluate(self, Py_ssize_t j, double t, Py_ssize_t source, double key, Py_ssize_t* pn,
                               double* bv, Py_ssize_t* best, Py_ssize_t* nwait, double prio) noexcept nogil
    cdef inline bint _resolve(self, Py_ssize_t* nwait, double t, double* bv, Py_ssize_t* best) noexcept nogil
    cdef inline bint _bounded_first(self, Py_ssize_t j, double tau) noexcept nogil
    cdef inline bint _better_p(self, Py_ssize_t j, double v, double t, double* bv, Py_ssize_t* best) noexcept nogil
    cdef void _settle_prov(self, double t, double* bv) noexcept nogil
    cdef inline double _value_into(self, Py_ssize_t n, double t) noexcept nogil
    cdef inline bint _waiting_top(self, Py_ssize_t* nwait, double bv, Py_ssize_t best, double* u) noexcept nogil
    cdef void _resolve_all(self, Py_ssize_t* nwait, double t, double* bv, Py_ssize_t* best) noexcept nogil
    cdef void _park_lines(self, double t, Py_ssize_t j0, Py_ssize_t j1) noexcept nogil
    cdef void _settle_bucket(self, Py_ssize_t b, double t, double tpad, double lim) noexcept nogil
    cdef void _settle_keys(self, const int32_t* cid, const double* cy, const double* cx, Py_ssize_t k) noexcept nogil
    cdef inline void _settle_put(self, int32_t j, double key) noexcept nogil
    cdef Py_ssize_t _settle_end(self) noexcept nogil
    cdef Py_ssize_t _bucket_pages(self, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil
    cdef void _lower(self, double t) noexcept nogil
    cdef Py_ssize_t _lower_end(self) noexcept nogil
    cdef inline bint _below_park(self, Py_ssize_t b, double key, double t, double tpad, double lim) noexcept nogil
    cdef void _undo_tick(self, const TickUndo* u, Py_ssize_t pn, Py_ssize_t placed, Py_ssize_t best) noexcept nogil
    cdef Py_ssize_t _step(self) noexcept nogil
    # signals and dynamic pages
    cdef int _signal(self, Py_ssize_t j, double t) noexcept nogil
    cdef int _shift_earlier(self, Py_ssize_t j, double d, double span) noexcept nogil
    cdef int _poll(self, Py_ssize_t j, double t, bint moved) noexcept nogil
    cdef inline void _sync_polls(self, Py_ssize_t j) noexcept nogil
    cdef inline void _own_polls(self, Py_ssize_t j) noexcept nogil
    cdef inline void _anchor(self, Py_ssize_t j) noexcept nogil
    cdef inline bint _prone(self, Py_ssize_t j) noexcept nogil
    cdef inline double _last_poll(self, Py_ssize_t j) noexcept nogil
    cdef inline void _swap_params(self, Py_ssize_t j, double* old, double delta, double mu, double nu,
                                  double recall) noexcept nogil
