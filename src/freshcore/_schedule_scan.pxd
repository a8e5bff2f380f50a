# The scan of the scheduler's bucket tops (freshcore._schedule, "The tick's candidates"): the nonempty
# slope buckets, by family (0: lines bounding V, 1: ln V, 2: sqrt V), each with its slope, the key of
# its top and the top's bound at the tick, in arrays by position that the kernels of _schedule_scan.h
# scan two at a time; and the tick's candidates.  Every function is inline (compiled into
# freshcore._schedule): ``from freshcore._schedule_scan cimport Tops``.
#
# Family f's buckets are at positions offset(f) .. offset(f) + count[f] - 1, offset(f) the sum of the
# capacities of the families before it (each family's part grows on its own: one may hold hundreds of
# buckets and another a few).  position[b] is bucket b's position (-1: not scanned); top_keys[-1] is a
# spare entry that takes the writes of the keys of buckets that are not scanned, so that a heap's top can
# be stored without a branch.  The candidates (cand_buckets, cand_bounds) hold family f's from
# cand_offset(f) = offset(f) + 3 f, with room for the two buckets of lines that are not scanned (family 0)
# and a spare write each.

from libc.stdint cimport int32_t
from libc.stdlib cimport free
from libc.string cimport memmove

from freshcore._schedule_lines cimport family_of
from freshcore._schedule_memory cimport freshcore_malloc, resize_doubles, resize_int32s

cdef extern from "_schedule_scan.h":
    Py_ssize_t freshcore_scan(const double* slopes, const double* top_keys, const int32_t* buckets, Py_ssize_t n,
                              double t, double tpad, double mg, double f, double th, double* bounds,
                              int32_t* cand_buckets, double* cand_bounds, Py_ssize_t nc) noexcept nogil
    Py_ssize_t freshcore_pick(const double* bounds, const int32_t* buckets, Py_ssize_t n, double th,
                              int32_t* cand_buckets, double* cand_bounds, Py_ssize_t nc) noexcept nogil
    Py_ssize_t freshcore_due_before(const double* keys, Py_ssize_t i, double hor) noexcept nogil


cdef struct Tops:
    int32_t* buckets
    double* slopes
    double* top_keys  # (one entry before position 0: the spare)
    double* bounds    # contiguous with slopes and top_keys by position: the scan vectorises
    int32_t* position
    int32_t* cand_buckets
    double* cand_bounds
    Py_ssize_t count[3]
    Py_ssize_t capacity[3]


cdef enum:
    N_FAMILIES = 3


cdef inline Py_ssize_t tops_offset(const Tops* s, int f) noexcept nogil:
    """The position of family f's first bucket."""
    return (s.capacity[0] if f >= 1 else 0) + (s.capacity[1] if f >= 2 else 0)


cdef inline Py_ssize_t cand_offset(const Tops* s, int f) noexcept nogil:
    """Where family f's candidates start."""
    return tops_offset(s, f) + 3 * f


cdef inline int tops_reserve(Tops* s, int f, Py_ssize_t n) noexcept nogil:
    """Room for n >= capacity[f] buckets of family f (the entries kept); -1 (room unchanged) if memory is
    exhausted, else 0."""
    cdef Py_ssize_t old[N_FAMILIES]
    cdef Py_ssize_t tot = 0, a, k, o, to
    cdef int g
    cdef double* keys = s.top_keys - 1 if s.top_keys != NULL else NULL
    cdef bint ok
    for g in range(N_FAMILIES):
        old[g] = tops_offset(s, g)
        tot += n if g == f else s.capacity[g]
    # every array to its new size (each at least its old one, whichever fail)
    ok = resize_doubles(&s.slopes, tot)
    ok = resize_doubles(&keys, tot + 1) and ok
    s.top_keys = keys + 1 if keys != NULL else NULL
    ok = resize_doubles(&s.bounds, tot) and ok
    ok = resize_int32s(&s.buckets, tot) and ok
    ok = resize_doubles(&s.cand_bounds, tot + 3 * N_FAMILIES) and ok
    ok = resize_int32s(&s.cand_buckets, tot + 3 * N_FAMILIES) and ok
    if not ok:
        return -1
    s.capacity[f] = n
    # the families after f move right (the last first)
    for g in range(N_FAMILIES - 1, f, -1):
        k = s.count[g]
        o = old[g]
        to = tops_offset(s, g)
        if k == 0 or to == o:
            continue
        memmove(s.slopes + to, s.slopes + o, k * sizeof(double))
        memmove(s.top_keys + to, s.top_keys + o, k * sizeof(double))
        memmove(s.bounds + to, s.bounds + o, k * sizeof(double))
        memmove(s.buckets + to, s.buckets + o, k * sizeof(int32_t))
        for a in range(to, to + k):
            s.position[s.buckets[a]] = <int32_t>a
    return 0


cdef inline int tops_init(Tops* s, Py_ssize_t n_codes) noexcept nogil:
    """Empty tops for bucket codes 0 .. n_codes - 1, room for 32 buckets of each family; -1 if memory is
    exhausted (tops_free then frees what was allocated)."""
    cdef Py_ssize_t b
    s.count[0] = s.count[1] = s.count[2] = 0
    s.capacity[0] = s.capacity[1] = s.capacity[2] = 0
    s.position = <int32_t*>freshcore_malloc(n_codes * sizeof(int32_t))
    if s.position == NULL:
        return -1
    for b in range(n_codes):
        s.position[b] = -1
    if tops_reserve(s, 0, 32) < 0 or tops_reserve(s, 1, 32) < 0 or tops_reserve(s, 2, 32) < 0:
        return -1
    return 0


cdef inline void tops_free(Tops* s) noexcept nogil:
    free(s.slopes)
    free(s.top_keys - 1 if s.top_keys != NULL else NULL)
    free(s.bounds)
    free(s.buckets)
    free(s.position)
    free(s.cand_bounds)
    free(s.cand_buckets)


cdef inline bint tops_full(const Tops* s, Py_ssize_t b) noexcept nogil:
    """Whether adding bucket b (not scanned) needs more room."""
    cdef int f = family_of(b)
    return s.count[f] == s.capacity[f]


cdef inline int tops_grow(Tops* s, Py_ssize_t b) noexcept nogil:
    """Room for one more bucket of b's family (tops_full was true); -1 if memory is exhausted."""
    cdef int f = family_of(b)
    return tops_reserve(s, f, s.capacity[f] + s.capacity[f] // 4 + 8)


cdef inline void tops_add(Tops* s, Py_ssize_t b, double slope, double top_key) noexcept nogil:
    """Scan nonempty slope bucket b (not scanned yet; room made by the caller: not tops_full)."""
    cdef int f = family_of(b)
    cdef Py_ssize_t a = tops_offset(s, f) + s.count[f]
    s.position[b] = <int32_t>a
    s.buckets[a] = <int32_t>b
    s.slopes[a] = slope
    s.top_keys[a] = top_key
    s.count[f] += 1


cdef inline void tops_remove(Tops* s, Py_ssize_t b) noexcept nogil:
    """Stop scanning bucket b (emptied; nothing if it is not scanned): the last of its family fills its place."""
    cdef Py_ssize_t i = s.position[b], last
    cdef int32_t q
    cdef int f = family_of(b)
    if i < 0:
        return
    last = tops_offset(s, f) + s.count[f] - 1
    if i != last:
        q = s.buckets[last]
        s.buckets[i] = q
        s.slopes[i] = s.slopes[last]
        s.top_keys[i] = s.top_keys[last]
        s.bounds[i] = s.bounds[last]  # (a bucket emptied in a tick's search: the rejoin reads bounds)
        s.position[q] = <int32_t>i
    s.position[b] = -1
    s.count[f] -= 1


cdef inline void tops_clear(Tops* s, Py_ssize_t n_codes) noexcept nogil:
    """No bucket scanned (the room is kept)."""
    cdef Py_ssize_t b
    for b in range(n_codes):
        s.position[b] = -1
    s.count[0] = s.count[1] = s.count[2] = 0


cdef inline Py_ssize_t reaching(int32_t* cand_buckets, double* cand_bounds, Py_ssize_t n, double th) noexcept nogil:
    """Keep the candidates [:n] whose bound reaches th, in order; returns their number."""
    cdef Py_ssize_t a, i = 0
    for a in range(n):
        if cand_bounds[a] >= th:
            cand_buckets[i] = cand_buckets[a]
            cand_bounds[i] = cand_bounds[a]
            i += 1
    return i
