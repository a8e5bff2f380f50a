# The scheduler's memory helpers (_schedule_memory.h): checked allocation that a test can make fail,
# aligned blocks, prefetch; and typed resizing of the scheduler's arrays.  Inline, compiled into
# freshcore._schedule: ``from freshcore._schedule_memory cimport freshcore_malloc``.

from libc.stdint cimport int32_t, uint16_t

cdef extern from "_schedule_memory.h":
    void* freshcore_malloc(size_t n) noexcept nogil
    void* freshcore_realloc(void* p, size_t n) noexcept nogil
    void* freshcore_aligned_alloc(size_t n) noexcept nogil
    void freshcore_aligned_free(void* p) noexcept nogil
    void FRESHCORE_PREFETCH(const void* p) noexcept nogil
    void freshcore_fail_allocation(long long n) noexcept nogil
    long long freshcore_allocation_count() noexcept nogil
    void freshcore_trim() noexcept nogil


cdef inline bint resize_doubles(double** p, Py_ssize_t n) noexcept nogil:
    """p[0] reallocated to n doubles; False (p[0] unchanged) if memory is exhausted."""
    cdef double* q = <double*>freshcore_realloc(p[0], n * sizeof(double))
    if q == NULL:
        return False
    p[0] = q
    return True


cdef inline bint resize_int32s(int32_t** p, Py_ssize_t n) noexcept nogil:
    """p[0] reallocated to n int32; False (p[0] unchanged) if memory is exhausted."""
    cdef int32_t* q = <int32_t*>freshcore_realloc(p[0], n * sizeof(int32_t))
    if q == NULL:
        return False
    p[0] = q
    return True


cdef inline bint resize_uint16s(uint16_t** p, Py_ssize_t n) noexcept nogil:
    """p[0] reallocated to n uint16; False (p[0] unchanged) if memory is exhausted."""
    cdef uint16_t* q = <uint16_t*>freshcore_realloc(p[0], n * sizeof(uint16_t))
    if q == NULL:
        return False
    p[0] = q
    return True
