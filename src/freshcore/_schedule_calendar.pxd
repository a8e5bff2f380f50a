# The calendar of ticks of the scheduler's parked pages (freshcore._schedule, "The park"): a list per
# tick of the pages whose key is due at that tick (after the last popped tick and by that one).  O(1) to
# park a page, to pop a tick's list and, lists holding ~1 page, to remove a page.  Every function is inline
# (compiled into freshcore._schedule): ``from freshcore._schedule_calendar cimport Calendar``.
#
# Tick k is at time origin + k/rate (calendar_time: the scheduler's ticks are the calendar's).  The entries
# are a pool (``top`` used, the free ones chained from ``free``); the list of tick k is headed by
# ``heads[k & mask]``, which is unambiguous while the calendar spans fewer than mask + 1 ticks (the
# scheduler keeps only the pages due by its horizon in it, and sizes ``heads`` to the horizon).

from libc.stdint cimport int32_t, uint16_t

from freshcore._schedule_memory cimport freshcore_realloc, FRESHCORE_PREFETCH
from freshcore._schedule_pages cimport PageRecord


cdef struct CalendarEntry:  # 16 bytes, four to a cache line
    double key
    int32_t id    # page (-1: a free entry)
    int32_t next  # next entry of its tick's list (-1: the last), or of the free list


cdef struct Calendar:
    double origin  # tick k is at time origin + k/rate
    double rate
    CalendarEntry* entries
    Py_ssize_t capacity, top
    int32_t free
    int32_t* heads
    long long mask
    long long last_popped_tick
    Py_ssize_t size  # pages in the calendar


cdef inline double calendar_time(const Calendar* c, long long k) noexcept nogil:
    """The time of tick k."""
    return c.origin + <double>k / c.rate


cdef inline long long calendar_tick_of(const Calendar* c, double key) noexcept nogil:
    """The first tick after the last popped one whose time is >= key (key finite, within the calendar's span)."""
    cdef double x = (key - c.origin) * c.rate
    cdef long long k = c.last_popped_tick + 1
    if x > <double>k:
        k = <long long>x
        while k > c.last_popped_tick + 1 and calendar_time(c, k - 1) >= key:
            k -= 1
    while calendar_time(c, k) < key:
        k += 1
    return k


cdef inline void calendar_link(Calendar* c, Py_ssize_t i) noexcept nogil:
    """Link entry i (its key set) at the head of its tick's list."""
    cdef Py_ssize_t s = <Py_ssize_t>(calendar_tick_of(c, c.entries[i].key) & c.mask)
    c.entries[i].next = c.heads[s]
    c.heads[s] = <int32_t>i


cdef inline Py_ssize_t calendar_push(Calendar* c, int32_t page, double key) noexcept nogil:
    """Park page with key (due within the calendar's span); returns its entry, or -1 (calendar unchanged)
    if memory is exhausted."""
    cdef Py_ssize_t i = c.free, cap
    cdef CalendarEntry* e
    if i >= 0:
        c.free = c.entries[i].next
    else:
        if c.top == c.capacity:  # (grown by 1/8: the calendar holds ~m/32 pages)
            cap = c.capacity + c.capacity // 8 + 128
            e = <CalendarEntry*>freshcore_realloc(c.entries, cap * sizeof(CalendarEntry))
            if e == NULL:
                return -1
            c.entries = e
            c.capacity = cap
        i = c.top
        c.top += 1
    c.entries[i].key = key
    c.entries[i].id = page
    calendar_link(c, i)
    c.size += 1
    return i


cdef inline int calendar_reserve(Calendar* c, Py_ssize_t n) noexcept nogil:
    """Room for n more pages (free entries and those past the top), so that as many calendar_push calls
    cannot fail; -1 (calendar unchanged) if memory is exhausted, else 0."""
    cdef Py_ssize_t cap
    cdef CalendarEntry* e
    if c.capacity - c.size >= n:
        return 0
    cap = c.size + n
    cap = cap + cap // 8 + 128
    e = <CalendarEntry*>freshcore_realloc(c.entries, cap * sizeof(CalendarEntry))
    if e == NULL:
        return -1
    c.entries = e
    c.capacity = cap
    return 0


cdef inline int32_t calendar_release(Calendar* c, Py_ssize_t i) noexcept nogil:
    """Entry i, out of its list, to the free list; returns its page."""
    cdef int32_t page = c.entries[i].id
    c.entries[i].id = -1
    c.entries[i].next = c.free
    c.free = <int32_t>i
    c.size -= 1
    return page


cdef inline void calendar_prefetch(const Calendar* c, long long k, const PageRecord* records,
                                   const uint16_t* code, const double* recall, const double* false_rate) noexcept nogil:
    """After popping tick k: the next ticks' misses, fetched a tick ahead (the records and bucket codes of tick
    k + 1's first pages, and their recall and false rate unless NULL (Greedy), whose entries were fetched at
    tick k - 1, and the first entry of tick k + 2)."""
    cdef Py_ssize_t i = c.heads[(k + 1) & c.mask], a = 0
    cdef int32_t j
    while i >= 0 and a < 4:
        j = c.entries[i].id
        FRESHCORE_PREFETCH(&records[j])
        FRESHCORE_PREFETCH(&code[j])
        if recall != NULL:
            FRESHCORE_PREFETCH(&recall[j])
            FRESHCORE_PREFETCH(&false_rate[j])
        i = c.entries[i].next
        a += 1
    i = c.heads[(k + 2) & c.mask]
    if i >= 0:
        FRESHCORE_PREFETCH(&c.entries[i])


cdef inline int32_t calendar_take(Calendar* c, Py_ssize_t i) noexcept nogil:
    """Remove entry i from its tick's list and the calendar; returns its page."""
    cdef Py_ssize_t s = <Py_ssize_t>(calendar_tick_of(c, c.entries[i].key) & c.mask)
    cdef int32_t p = c.heads[s]
    if p == i:
        c.heads[s] = c.entries[i].next
    else:  # (lists hold ~1 entry: as many pages are parked as ticks in the calendar)
        while c.entries[p].next != i:
            p = c.entries[p].next
        c.entries[p].next = c.entries[i].next
    return calendar_release(c, i)


cdef inline int calendar_reset_heads(Calendar* c, Py_ssize_t w) noexcept nogil:
    """Empty lists for at least w ticks (a power of two, at least 16; the entries must be relinked or
    dropped).  -1 (heads unchanged) if growing them exhausted memory; a failed shrink keeps them larger."""
    cdef Py_ssize_t n = 16, s
    cdef int32_t* h
    while n < w:
        n *= 2
    if n - 1 != c.mask:
        h = <int32_t*>freshcore_realloc(c.heads, n * sizeof(int32_t))
        if h != NULL:
            c.heads = h
            c.mask = n - 1
        elif n - 1 > c.mask:
            return -1
    for s in range(c.mask + 1):
        c.heads[s] = -1
    return 0


cdef inline void calendar_relink(Calendar* c) noexcept nogil:
    """Link every entry in use at the head of its tick's list (after calendar_reset_heads)."""
    cdef Py_ssize_t i
    for i in range(c.top):
        if c.entries[i].id >= 0:
            calendar_link(c, i)


cdef inline void calendar_compact(Calendar* c, PageRecord* records) noexcept nogil:
    """The entries in use moved down over the free ones (their pages' records told), the memory past them
    shrunk to 1/8 + 128 more (a best effort) and the lists relinked: O(entries).  (The calendar grows by 1/8
    when full and its free entries are reused, but a transient, a horizon move after a settle or a lowering
    put many pages at once, left it at twice its size: 0.5 bytes a page at 10^5 Greedy pages; park_advance
    compacts it when over 5/4 of its pages and 256.)"""
    cdef Py_ssize_t i, k = 0, s, cap
    cdef int32_t j
    cdef CalendarEntry* e
    for i in range(c.top):
        j = c.entries[i].id
        if j >= 0:
            c.entries[k] = c.entries[i]
            records[j].entry = <int32_t>k
            k += 1
    c.top = k
    c.free = -1
    cap = k + k // 8 + 128
    if cap < c.capacity:
        e = <CalendarEntry*>freshcore_realloc(c.entries, cap * sizeof(CalendarEntry))
        if e != NULL:
            c.entries = e
            c.capacity = cap
    for s in range(c.mask + 1):
        c.heads[s] = -1
    calendar_relink(c)


cdef inline void calendar_empty(Calendar* c) noexcept nogil:
    """No pages (their records are left to the caller) and empty lists; the memory is kept."""
    cdef Py_ssize_t s
    c.size = 0
    c.top = 0
    c.free = -1
    for s in range(c.mask + 1):
        c.heads[s] = -1


cdef inline int calendar_clear(Calendar* c) noexcept nogil:
    """No pages and 16 empty lists, at most 1024 entries kept (a failed shrink keeps more); -1 if the
    lists' first allocation exhausted memory (the calendar is then empty, without lists), else 0."""
    cdef CalendarEntry* e
    c.size = 0
    c.top = 0
    c.free = -1
    if c.capacity > 1024:
        e = <CalendarEntry*>freshcore_realloc(c.entries, 1024 * sizeof(CalendarEntry))
        if e != NULL:
            c.entries = e
            c.capacity = 1024
    return calendar_reset_heads(c, 0)
