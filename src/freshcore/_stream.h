/* Copies of double arrays with non-temporal (cache-bypassing) stores, for freshcore._estimation.
 *
 * A kernel that only writes a large output (the batched estimators' rates) would otherwise read every
 * cache line of it in before writing it.  The SSE2 path streams 16-byte aligned pairs; the portable
 * fallback beside it is a plain memcpy (the same values, ordinary stores).  freshcore_sfence orders
 * the streamed stores before later ones (a no-op in the fallback).
 */
#ifndef FRESHCORE_STREAM_H
#define FRESHCORE_STREAM_H

#include <stddef.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>

/* Copy with non-temporal stores where the target is 16-byte aligned. */
static inline void freshcore_stream(double* dst, const double* src, ptrdiff_t n) {
    ptrdiff_t i = 0;
    while (i < n && (((size_t)(dst + i)) & 15)) { dst[i] = src[i]; i++; }
    for (; i + 2 <= n; i += 2) _mm_stream_pd(dst + i, _mm_loadu_pd(src + i));
    for (; i < n; i++) dst[i] = src[i];
}

static inline void freshcore_sfence(void) { _mm_sfence(); }

#else /* portable fallback */

static inline void freshcore_stream(double* dst, const double* src, ptrdiff_t n) {
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof(double));
}

static inline void freshcore_sfence(void) {}

#endif

#endif /* FRESHCORE_STREAM_H */
