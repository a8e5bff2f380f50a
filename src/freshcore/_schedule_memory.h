/* Memory helpers of the scheduler's compiled core (freshcore._schedule and its units).
 *
 * - freshcore_malloc / freshcore_realloc: malloc and realloc that return NULL on failure (callers report
 *   it up to code holding the GIL, which raises MemoryError) and that a test can make fail on purpose.
 * - freshcore_aligned_alloc / freshcore_aligned_free: 64-byte aligned blocks (the bucket heaps), with
 *   _aligned_malloc on Windows, posix_memalign elsewhere, and a portable fallback (an over-allocated
 *   malloc block with the original pointer stored before the aligned address) compiled with
 *   FRESHCORE_PORTABLE.
 * - FRESHCORE_PREFETCH(p): a prefetch hint with GCC or clang, nothing elsewhere (or with FRESHCORE_PORTABLE).
 * - freshcore_trim(): give the freed memory at the top of the heap and in whole pages back to the system,
 *   after many blocks were freed at once (Greedy's pages leaving the bucket heaps for the park): glibc's
 *   malloc_trim, which would otherwise keep it (its mmap threshold grows with each freed mmapped block);
 *   nothing elsewhere (or with FRESHCORE_PORTABLE): other allocators return memory on their own terms.
 *
 * Allocation-failure injection (for tests): freshcore_fail_allocation(n) with n > 0 makes the n-th
 * allocation from then on fail, once (0: never).  It costs one predictable branch per allocation, and
 * allocations are rare (capacities grow geometrically).  The counters are per extension module (static):
 * every allocation of the scheduler is made in freshcore._schedule, whose units are inline.
 */
#ifndef FRESHCORE_SCHEDULE_MEMORY_H
#define FRESHCORE_SCHEDULE_MEMORY_H

/* posix_memalign is POSIX, not C99: declared by <stdlib.h> only with _POSIX_C_SOURCE (Python.h defines it
   first in the extension; a header compiled on its own, e.g. by .ci/run's header check, needs it here) */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200112L
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(_WIN32) || (defined(__GLIBC__) && !defined(FRESHCORE_PORTABLE))
#include <malloc.h>
#endif

#include "_static.h"  /* FRESHCORE_STATIC */

FRESHCORE_STATIC long long freshcore_fail_countdown = 0;  /* > 0: allocations left until the one that fails */
FRESHCORE_STATIC long long freshcore_allocations = 0;     /* allocations made (or refused) so far */

FRESHCORE_STATIC void freshcore_fail_allocation(long long n) { freshcore_fail_countdown = n > 0 ? n : 0; }
FRESHCORE_STATIC long long freshcore_allocation_count(void) { return freshcore_allocations; }

/* Whether this allocation is to fail (the injected failure). */
FRESHCORE_STATIC int freshcore_injected_failure(void) {
    freshcore_allocations++;
    return freshcore_fail_countdown > 0 && --freshcore_fail_countdown == 0;
}

/* malloc (of at least one byte); NULL if memory is exhausted. */
FRESHCORE_STATIC void* freshcore_malloc(size_t n) {
    return freshcore_injected_failure() ? NULL : malloc(n > 0 ? n : 1);
}

/* realloc (to at least one byte); NULL if memory is exhausted, p then still valid and unchanged. */
FRESHCORE_STATIC void* freshcore_realloc(void* p, size_t n) {
    return freshcore_injected_failure() ? NULL : realloc(p, n > 0 ? n : 1);
}

/* A 64-byte aligned block of n > 0 bytes (NULL if memory is exhausted), freed by freshcore_aligned_free. */
FRESHCORE_STATIC void* freshcore_aligned_alloc(size_t n) {
    void* p = NULL;
    if (freshcore_injected_failure())
        return NULL;
#if defined(FRESHCORE_PORTABLE)
    {
        /* malloc'ed block: the aligned address, with the block's own address in the word before it */
        char* raw = (char*)malloc(n + 64 + sizeof(void*));
        if (raw != NULL) {
            uintptr_t a = ((uintptr_t)(raw + sizeof(void*)) + 63) & ~(uintptr_t)63;
            p = (void*)a;
            ((void**)p)[-1] = raw;
        }
    }
#elif defined(_WIN32)
    p = _aligned_malloc(n, 64);
#else
    if (posix_memalign(&p, 64, n) != 0)
        p = NULL;
#endif
    return p;
}

FRESHCORE_STATIC void freshcore_aligned_free(void* p) {
#if defined(FRESHCORE_PORTABLE)
    if (p != NULL)
        free(((void**)p)[-1]);
#elif defined(_WIN32)
    _aligned_free(p);
#else
    free(p);
#endif
}

FRESHCORE_STATIC void freshcore_trim(void) {
#if defined(__GLIBC__) && !defined(FRESHCORE_PORTABLE)
    malloc_trim(0);
#endif
}

#if (defined(__GNUC__) || defined(__clang__)) && !defined(FRESHCORE_PORTABLE)
#define FRESHCORE_PREFETCH(p) __builtin_prefetch((const void*)(p))
#else
#define FRESHCORE_PREFETCH(p) ((void)(p))
#endif

#endif /* FRESHCORE_SCHEDULE_MEMORY_H */
