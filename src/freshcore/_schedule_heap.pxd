# The scheduler's heaps (freshcore._schedule): 4-ary min-heaps of page ids on (key, id), the keys stored
# beside the ids, each page's position kept in its record (PageRecord.entry).  Every function is inline
# (compiled into freshcore._schedule, where the hot loop calls them):
# ``from freshcore._schedule_heap cimport Heap, heap_push``.
#
# Entry i of a heap is page ids[i] with key keys[i]; its children are 4i+1 .. 4i+4.  The arrays start
# HEAP_LEAD entries into a 64-byte aligned block, so that the 4 keys (32 bytes) and the 4 ids (16 bytes)
# of a group of siblings each sit in one cache line.  The same arrays serve as an unsorted list (the
# parked pages after the horizon): unsorted_append and unsorted_take.

from libc.stdint cimport int32_t
from libc.string cimport memcpy

from freshcore._schedule_memory cimport freshcore_aligned_alloc, freshcore_aligned_free, FRESHCORE_PREFETCH
from freshcore._schedule_pages cimport PageRecord


cdef struct Heap:
    int32_t* ids
    double* keys
    int32_t size
    int32_t capacity  # entries (at most 2**31 - 1), besides the HEAP_LEAD before entry 0


cdef enum:
    HEAP_LEAD = 3  # unused entries before entry 0: the siblings 4i+1 .. 4i+4 share one aligned block


cdef inline bint heap_before(double ka, int32_t a, double kb, int32_t b) noexcept nogil:
    """Whether entry (ka, a) comes before (kb, b): the total order of the heaps."""
    return ka < kb or (ka == kb and a < b)


cdef inline void* _heap_block(size_t n, size_t item) noexcept nogil:
    """A heap array of n > 0 entries of item bytes, HEAP_LEAD entries into an aligned block (NULL: no memory)."""
    cdef char* q = <char*>freshcore_aligned_alloc((n + HEAP_LEAD) * item)
    return NULL if q == NULL else q + HEAP_LEAD * item


cdef inline void _heap_block_free(void* p, size_t item) noexcept nogil:
    if p != NULL:
        freshcore_aligned_free(<char*>p - HEAP_LEAD * item)


cdef inline int heap_resize(Heap* h, Py_ssize_t capacity) noexcept nogil:
    """The heap's arrays resized to capacity >= size entries, its entries kept; -1 (heap unchanged) if
    memory is exhausted, else 0."""
    cdef int32_t* ids = NULL
    cdef double* keys = NULL
    if capacity > 0:
        ids = <int32_t*>_heap_block(capacity, sizeof(int32_t))
        keys = <double*>_heap_block(capacity, sizeof(double))
        if ids == NULL or keys == NULL:
            _heap_block_free(ids, sizeof(int32_t))
            _heap_block_free(keys, sizeof(double))
            return -1
        if h.size > 0:
            memcpy(ids, h.ids, h.size * sizeof(int32_t))
            memcpy(keys, h.keys, h.size * sizeof(double))
    _heap_block_free(h.ids, sizeof(int32_t))
    _heap_block_free(h.keys, sizeof(double))
    h.ids = ids
    h.keys = keys
    h.capacity = <int32_t>capacity
    return 0


cdef inline void heap_free(Heap* h) noexcept nogil:
    h.size = 0
    heap_resize(h, 0)


cdef inline void heap_sift_up(Heap* h, Py_ssize_t i, int32_t x, double kx, PageRecord* rec) noexcept nogil:
    """Place page x with key kx at hole i, moving parents down."""
    cdef int32_t* ids = h.ids
    cdef double* keys = h.keys
    cdef Py_ssize_t p
    cdef double kp
    while i > 0:
        p = (i - 1) >> 2
        kp = keys[p]
        if kx < kp or (kx == kp and x < ids[p]):
            ids[i] = ids[p]
            keys[i] = kp
            rec[ids[i]].entry = <int32_t>i
            i = p
        else:
            break
    ids[i] = x
    keys[i] = kx
    rec[x].entry = <int32_t>i


cdef inline void heap_sift_down(Heap* h, Py_ssize_t n, Py_ssize_t i, int32_t x, double kx,
                                PageRecord* rec) noexcept nogil:
    """Place page x with key kx at hole i of the heap's first n entries, moving smaller children up."""
    cdef int32_t* ids = h.ids
    cdef double* keys = h.keys
    cdef Py_ssize_t c, c0, cend, g
    cdef double kc
    while True:
        c0 = 4 * i + 1
        if c0 >= n:
            break
        g = 16 * i + 5  # the grandchildren 16i+5 .. 16i+20, contiguous: fetched a level ahead
        if g < n:  # (their keys fill two aligned cache lines, their ids straddle two)
            FRESHCORE_PREFETCH(&keys[g])
            FRESHCORE_PREFETCH(&keys[g + 8])
            FRESHCORE_PREFETCH(&ids[g])
            FRESHCORE_PREFETCH(&ids[g + 15])
        if c0 + 4 <= n:
            # the smallest (key, id) of four siblings without a branch (which child it is is random:
            # branches would be mispredicted ~3 times a level): pairs, then their winners
            c = c0 + ((keys[c0 + 1] < keys[c0]) | ((keys[c0 + 1] == keys[c0]) & (ids[c0 + 1] < ids[c0])))
            g = c0 + 2 + ((keys[c0 + 3] < keys[c0 + 2])
                          | ((keys[c0 + 3] == keys[c0 + 2]) & (ids[c0 + 3] < ids[c0 + 2])))
            c = g if ((keys[g] < keys[c]) | ((keys[g] == keys[c]) & (ids[g] < ids[c]))) else c
            kc = keys[c]
        else:
            cend = n
            c = c0
            kc = keys[c0]
            for c0 in range(c0 + 1, cend):
                if keys[c0] < kc or (keys[c0] == kc and ids[c0] < ids[c]):
                    c = c0
                    kc = keys[c0]
        if kc < kx or (kc == kx and ids[c] < x):
            ids[i] = ids[c]
            keys[i] = kc
            rec[ids[i]].entry = <int32_t>i
            i = c
        else:
            break
    ids[i] = x
    keys[i] = kx
    rec[x].entry = <int32_t>i


cdef inline void heap_push(Heap* h, int32_t x, double kx, PageRecord* rec) noexcept nogil:
    """Insert page x with key kx (the caller has made room: size < capacity)."""
    cdef Py_ssize_t n = h.size
    h.size = <int32_t>(n + 1)
    heap_sift_up(h, n, x, kx, rec)


cdef inline void heap_take(Heap* h, Py_ssize_t i, PageRecord* rec) noexcept nogil:
    """Remove entry i (its page's entry is left to the caller); the capacity is kept."""
    cdef int32_t* ids = h.ids
    cdef double* keys = h.keys
    cdef Py_ssize_t last = h.size - 1
    cdef int32_t x = ids[last]
    cdef double kx = keys[last]
    h.size = <int32_t>last
    if i != last:
        if i > 0 and heap_before(kx, x, keys[(i - 1) >> 2], ids[(i - 1) >> 2]):
            heap_sift_up(h, i, x, kx, rec)
        else:
            heap_sift_down(h, last, i, x, kx, rec)


cdef inline void heap_heapify(Heap* h, PageRecord* rec) noexcept nogil:
    """Heap order on the heap's entries, in O(size)."""
    cdef Py_ssize_t n = h.size, i
    i = (n - 2) // 4 + 1 if n > 1 else 0
    while i > 0:
        i -= 1
        heap_sift_down(h, n, i, h.ids[i], h.keys[i], rec)


cdef inline void unsorted_append(Heap* h, int32_t x, double kx, PageRecord* rec) noexcept nogil:
    """Append page x with key kx to the arrays used as an unsorted list (room made by the caller)."""
    cdef Py_ssize_t n = h.size
    h.ids[n] = x
    h.keys[n] = kx
    rec[x].entry = <int32_t>n
    h.size = <int32_t>(n + 1)


cdef inline void unsorted_take(Heap* h, Py_ssize_t i, PageRecord* rec) noexcept nogil:
    """Remove entry i of the unsorted list: the last entry fills the hole (its page's entry is left to the caller)."""
    cdef Py_ssize_t last = h.size - 1
    h.size = <int32_t>last
    if i != last:
        h.ids[i] = h.ids[last]
        h.keys[i] = h.keys[last]
        rec[h.ids[i]].entry = <int32_t>i
