# Where the scheduler keeps its pages (freshcore._schedule): the buckets of lines (a heap per slope,
# _schedule_heap), the two of the parked pages (PARK, the calendar of ticks, _schedule_calendar; FAR, an
# unsorted list), and the scan of the slope buckets' tops (_schedule_scan).  A page is in one bucket at a
# time, code[j] says which and its record's ``entry`` where in it.  Every function is inline (compiled into
# freshcore._schedule): ``from freshcore._schedule_buckets cimport Buckets, buckets_push``.
#
# A heap of n pages grows to n + n/16 + 1 entries (besides the HEAP_LEAD before entry 0) and shrinks when over
# n + n/8 + 16; FAR grows to n + n/32 + 61 and shrinks when over n + n/4 + 64: the pages that leave it at each
# move of the horizon (those due over the next m/32 ticks, ~8% of it at 10^6 pages, since their keys are lower
# bounds) come back over those ticks, and a tighter hysteresis (it was n/128 and n/16) made it shrink at every
# move and grow back by ten copies of the whole list, 5-9% of an exact scheduler's time.  Capacities grow as
# pages arrive but shrink only through buckets_shrink, which the scheduler calls once a call has succeeded:
# a call that runs out of memory puts the pages it took out back where they were, in the room they left.

from libc.stdint cimport int32_t, uint16_t
from libc.stdlib cimport free
from libc.string cimport memset

from freshcore._schedule_memory cimport freshcore_malloc
from freshcore._schedule_pages cimport PageRecord
from freshcore._schedule_heap cimport (Heap, HEAP_LEAD, heap_resize, heap_free, heap_push, heap_take, heap_heapify,
                                       unsorted_append, unsorted_take)
from freshcore._schedule_lines cimport (N_TABLE, CONSTANT, UNBOUNDED, fill_slope_table, bucket_slope, top_bound,
                                        family_of)
from freshcore._schedule_scan cimport (Tops, N_FAMILIES, tops_init, tops_free, tops_full, tops_grow, tops_add,
                                       tops_remove, tops_clear, tops_reserve)
from freshcore._schedule_calendar cimport Calendar, calendar_push, calendar_take, calendar_empty, calendar_clear

ctypedef uint16_t bucket_t

cdef enum:
    PARK = UNBOUNDED + 1  # parked Greedy pages due by the horizon: the calendar
    FAR = UNBOUNDED + 2   # the other parked pages: an unsorted list (keys after the horizon)
    N_CODES = UNBOUNDED + 3
    DEAD = 65534          # bucket of a removed page
    NOT_PLACED = 65535    # bucket of a live page in no bucket (popped, or before the first tick)
    MAX_OVERSIZED = 16    # buckets noted oversized between two shrinks (more wait for a later take)


cdef struct Buckets:
    Heap* heaps          # by bucket code: PARK's is unused (the calendar), FAR's an unsorted list
    double* slope_table  # the slopes of the buckets (fill_slope_table)
    Tops tops            # the nonempty slope buckets scanned at each tick, and the tick's candidates
    Calendar calendar    # PARK, and the ticks
    PageRecord* records  # the pages' records and bucket codes (the state's arrays; set again when they move)
    bucket_t* code
    int32_t oversized[MAX_OVERSIZED]  # buckets noted oversized since the last shrink
    int n_oversized


cdef inline int buckets_init(Buckets* s) noexcept nogil:
    """Empty buckets (s zeroed before); -1 if memory is exhausted (buckets_free then frees what was made)."""
    s.calendar.free = -1
    s.calendar.mask = -1
    s.heaps = <Heap*>freshcore_malloc(N_CODES * sizeof(Heap))
    if s.heaps == NULL:
        return -1
    memset(s.heaps, 0, N_CODES * sizeof(Heap))
    s.slope_table = <double*>freshcore_malloc(N_TABLE * sizeof(double))
    if s.slope_table == NULL:
        return -1
    fill_slope_table(s.slope_table)
    if tops_init(&s.tops, N_CODES) < 0:
        return -1
    return calendar_clear(&s.calendar)


cdef inline void buckets_free(Buckets* s) noexcept nogil:
    cdef int b
    if s.heaps != NULL:
        for b in range(N_CODES):
            heap_free(&s.heaps[b])
    free(s.heaps)
    free(s.slope_table)
    tops_free(&s.tops)
    free(s.calendar.entries)
    free(s.calendar.heads)


cdef inline void buckets_set_top(Buckets* s, Py_ssize_t b) noexcept nogil:
    """Bucket b's top key to the scan (a spare entry takes it when b is not scanned)."""
    s.tops.top_keys[s.tops.position[b]] = s.heaps[b].keys[0]


cdef inline int buckets_grow(Buckets* s, Py_ssize_t b, Py_ssize_t n) noexcept nogil:
    """Room for n > capacity entries in bucket b (FAR: n + n/32 + 61, else n + n/16 + 1); -1 if memory is
    exhausted (nothing changed), else 0."""
    return heap_resize(&s.heaps[b], ((n + n // 32 + 64) if b == FAR else (n + n // 16 + 4)) - HEAP_LEAD)


cdef inline bint buckets_oversized(const Buckets* s, Py_ssize_t b) noexcept nogil:
    """Whether bucket b's arrays are to shrink (FAR: over n + n/4 + 64 entries, else n + n/8 + 16)."""
    cdef Py_ssize_t n = s.heaps[b].size
    return n + (n // 4 + 64 if b == FAR else n // 8 + 16) < s.heaps[b].capacity


cdef inline void buckets_note(Buckets* s, Py_ssize_t b) noexcept nogil:
    """Note bucket b for the next shrink if it is oversized."""
    if buckets_oversized(s, b) and s.n_oversized < MAX_OVERSIZED:
        s.oversized[s.n_oversized] = <int32_t>b
        s.n_oversized += 1


cdef inline void buckets_shrink(Buckets* s) noexcept nogil:
    """The buckets noted oversized shrink (each a best effort)."""
    cdef int i
    cdef Py_ssize_t b, n
    for i in range(s.n_oversized):
        b = s.oversized[i]
        n = s.heaps[b].size
        if buckets_oversized(s, b):
            heap_resize(&s.heaps[b], (n + n // 32 + 64 if b == FAR else n + n // 16 + 4) - HEAP_LEAD)
    s.n_oversized = 0


cdef inline int buckets_push(Buckets* s, Py_ssize_t j, Py_ssize_t b, double key) noexcept nogil:
    """Page j (in no bucket) into bucket b with the given key; -1 (nothing changed) if memory is exhausted,
    else 0."""
    cdef Heap* h
    cdef Py_ssize_t i
    if b == PARK:
        i = calendar_push(&s.calendar, <int32_t>j, key)
        if i < 0:
            return -1
        s.records[j].entry = <int32_t>i
        s.code[j] = PARK
        return 0
    h = &s.heaps[b]
    if h.size == h.capacity and buckets_grow(s, b, h.size + 1) < 0:
        return -1
    if b == FAR:
        unsorted_append(h, <int32_t>j, key, s.records)
    elif b == CONSTANT or b == UNBOUNDED:
        heap_push(h, <int32_t>j, key, s.records)
    elif h.size > 0:
        heap_push(h, <int32_t>j, key, s.records)
        buckets_set_top(s, b)
    else:  # a slope bucket that starts to be scanned
        if tops_full(&s.tops, b) and tops_grow(&s.tops, b) < 0:
            return -1
        heap_push(h, <int32_t>j, key, s.records)
        tops_add(&s.tops, b, bucket_slope(s.slope_table, b), key)
    s.code[j] = <bucket_t>b
    return 0


cdef inline void buckets_take(Buckets* s, Py_ssize_t b, Py_ssize_t i) noexcept nogil:
    """Remove entry i of bucket b (its page is then in no bucket); the capacity is kept, an oversized
    bucket noted."""
    cdef Heap* h
    cdef int32_t j
    if b == PARK:
        j = calendar_take(&s.calendar, i)
    else:
        h = &s.heaps[b]
        j = h.ids[i]
        if b == FAR:
            unsorted_take(h, i, s.records)
        else:
            heap_take(h, i, s.records)
            if h.size == 0:
                tops_remove(&s.tops, b)
            else:
                buckets_set_top(s, b)
        buckets_note(s, b)
    s.records[j].entry = -1
    s.code[j] = NOT_PLACED


cdef inline double buckets_key_of(const Buckets* s, Py_ssize_t j) noexcept nogil:
    """The key of page j (in a bucket)."""
    cdef Py_ssize_t b = s.code[j]
    if b == PARK:
        return s.calendar.entries[s.records[j].entry].key
    return s.heaps[b].keys[s.records[j].entry]


cdef inline void buckets_remove(Buckets* s, Py_ssize_t j) noexcept nogil:
    """Take page j out of its bucket (it must be in one)."""
    buckets_take(s, s.code[j], s.records[j].entry)


cdef inline double buckets_top_bound(const Buckets* s, Py_ssize_t b, double t, double tpad) noexcept nogil:
    """Inflated bound at t of the top of nonempty bucket b (tpad = 8 eps |t|); of ln V for that family."""
    return top_bound(s.slope_table, b, s.heaps[b].keys[0], t, tpad)


cdef inline int buckets_fill(Buckets* s, Py_ssize_t n, const double* keys) noexcept nogil:
    """Every bucket emptied, then filled from code[j] and keys[j] of pages 0 .. n - 1 (parked ones in FAR)
    and heapified; -1 if memory is exhausted before any is filled (every bucket then empty)."""
    cdef Py_ssize_t j, b, k
    cdef Py_ssize_t need[N_FAMILIES]
    cdef Heap* h
    cdef int f
    for b in range(N_CODES):
        s.heaps[b].size = 0
    tops_clear(&s.tops, N_CODES)
    calendar_empty(&s.calendar)
    for j in range(n):  # (the records' entries are set below: one pass over them)
        if s.code[j] < N_CODES:
            s.heaps[s.code[j]].size += 1
    # room in every heap (grown, or shrunk when oversized) and in the scan before any page is placed
    need[0] = need[1] = need[2] = 0
    for b in range(N_CODES):
        h = &s.heaps[b]
        k = h.size
        h.size = 0  # (no entry to keep)
        if k > h.capacity or k + k // 8 + 16 < h.capacity:
            if heap_resize(h, k + 16 - HEAP_LEAD) < 0 and k > h.capacity:
                for j in range(N_CODES):
                    s.heaps[j].size = 0
                return -1
        if k > 0 and b != CONSTANT and b < UNBOUNDED:
            need[family_of(b)] += 1
    for f in range(N_FAMILIES):
        k = s.tops.capacity[f]
        while k < need[f]:
            k = k + k // 4 + 8  # (tops_grow's steps)
        if k != s.tops.capacity[f] and tops_reserve(&s.tops, f, k) < 0:
            return -1  # (every heap is empty)
    for j in range(n):
        b = s.code[j]
        if b >= N_CODES:
            s.records[j].entry = -1
            continue
        h = &s.heaps[b]
        k = h.size
        h.ids[k] = <int32_t>j
        h.keys[k] = keys[j]
        s.records[j].entry = <int32_t>k
        h.size = <int32_t>(k + 1)
    calendar_clear(&s.calendar)  # (shrunk; it cannot fail: its lists exist)
    for b in range(PARK):
        h = &s.heaps[b]
        if h.size == 0:
            continue
        heap_heapify(h, s.records)
        if b != CONSTANT and b != UNBOUNDED:
            tops_add(&s.tops, b, bucket_slope(s.slope_table, b), h.keys[0])
    return 0


cdef inline int buckets_unpark_calendar(Buckets* s) noexcept nogil:
    """Every page of the calendar to FAR (the ticks change); -1 if memory is exhausted (nothing changed)."""
    cdef Py_ssize_t i, n = s.heaps[FAR].size + s.calendar.size
    cdef int32_t j
    if n > s.heaps[FAR].capacity and buckets_grow(s, FAR, n) < 0:
        return -1
    for i in range(s.calendar.top):
        j = s.calendar.entries[i].id
        if j >= 0:
            unsorted_append(&s.heaps[FAR], j, s.calendar.entries[i].key, s.records)
            s.code[j] = FAR
    calendar_clear(&s.calendar)
    return 0


cdef inline Py_ssize_t buckets_unscanned_candidates(Buckets* s, double t, double tpad, double th,
                                                    Py_ssize_t nc) noexcept nogil:
    """Append to the tick's candidates of lines bounding V [:nc] the constant values' and the unbounded
    slopes' buckets (not scanned) whose top's bound at t reaches th; returns the new count."""
    cdef int k, b
    cdef double u
    for k in range(2):
        b = CONSTANT if k == 0 else UNBOUNDED
        if s.heaps[b].size > 0:
            u = buckets_top_bound(s, b, t, tpad)
            if u >= th:
                s.tops.cand_buckets[nc] = <int32_t>b
                s.tops.cand_bounds[nc] = u
                nc += 1
    return nc
