/* The scheduler's scan kernels (freshcore._schedule_scan.pxd declares them; freshcore._schedule explains
 * the bounds they compare).
 *
 * The nonempty slope buckets of one family are held by position a = 0 .. n - 1: slopes[a], the key of
 * the bucket's top top_keys[a], its bound at the tick bounds[a], its bucket buckets[a].
 *
 * - freshcore_scan: the tick's scan.  bounds[a] = the inflated bound u + mg (f + |u|) + s tpad of the
 *   top, u = s (t - top_keys[a]), s = slopes[a] (in that order: the arithmetic of line_bound in
 *   _schedule_lines.pxd; f = 1 for the lines bounding ln V, else 0); the buckets whose bound reaches th
 *   are appended to cand_buckets/cand_bounds from index nc on, in position order; returns the new count.
 * - freshcore_pick: the rejoin.  The buckets whose bounds[a] reaches th, appended in the same way
 *   (cand_buckets and cand_bounds need room for one entry more than they receive).
 * - freshcore_due_before: the largest index below i whose key is <= hor (-1 if none).
 *
 * With SSE2 (baseline on x86-64) two entries per instruction and, for the scan and the pick, a bit mask
 * of the entries that pass, so that neither the bounds nor the choice take a branch per bucket (which
 * bucket passes changes from tick to tick).  Without SSE2, or with FRESHCORE_NO_SIMD, the same
 * arithmetic one entry at a time (the loops after the SSE2 blocks finish their odd entries).  The
 * count of trailing zeros is a GCC/clang builtin, else (or with FRESHCORE_PORTABLE) a loop.
 */
#ifndef FRESHCORE_SCHEDULE_SCAN_H
#define FRESHCORE_SCHEDULE_SCAN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "_static.h"  /* FRESHCORE_STATIC */

#if (defined(__SSE2__) || defined(_M_X64)) && !defined(FRESHCORE_NO_SIMD)
#include <emmintrin.h>
#define FRESHCORE_SCAN_SSE2 1
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(FRESHCORE_PORTABLE)
#define FRESHCORE_CTZ64(x) __builtin_ctzll(x)
#else
/* x != 0 */
FRESHCORE_STATIC int FRESHCORE_CTZ64(unsigned long long x) {
    int k = 0;
    while (!(x & 1)) {
        x >>= 1;
        k++;
    }
    return k;
}
#endif

FRESHCORE_STATIC ptrdiff_t freshcore_scan(const double* slopes, const double* top_keys, const int32_t* buckets,
                                ptrdiff_t n, double t, double tpad, double mg, double f, double th,
                                double* bounds, int32_t* cand_buckets, double* cand_bounds, ptrdiff_t nc) {
    ptrdiff_t a = 0;
#ifdef FRESHCORE_SCAN_SSE2
    const __m128d vt = _mm_set1_pd(t), vtp = _mm_set1_pd(tpad), vmg = _mm_set1_pd(mg);
    const __m128d vf = _mm_set1_pd(f), vth = _mm_set1_pd(th);
    const __m128d absm = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
    ptrdiff_t c0, end;
    /* 64 buckets at a time: the bounds and a bit mask of those that pass (no dependence from one pair
       to the next), then the passing ones (a few of ~60) from the mask */
    for (c0 = 0; c0 + 2 <= n; c0 += 64) {
        unsigned long long mask = 0;
        end = c0 + 64 < n ? c0 + 64 : n;
        for (a = c0; a + 2 <= end; a += 2) {
            __m128d s = _mm_loadu_pd(slopes + a);
            __m128d u = _mm_mul_pd(s, _mm_sub_pd(vt, _mm_loadu_pd(top_keys + a)));
            __m128d r = _mm_add_pd(_mm_add_pd(u, _mm_mul_pd(vmg, _mm_add_pd(vf, _mm_and_pd(u, absm)))),
                                   _mm_mul_pd(s, vtp));
            _mm_storeu_pd(bounds + a, r);
            mask |= (unsigned long long)_mm_movemask_pd(_mm_cmpge_pd(r, vth)) << (a - c0);
        }
        while (mask) {
            ptrdiff_t k = c0 + FRESHCORE_CTZ64(mask);
            cand_buckets[nc] = buckets[k];
            cand_bounds[nc] = bounds[k];
            nc++;
            mask &= mask - 1;
        }
    }
#endif
    for (; a < n; a++) {
        double s = slopes[a], u = s * (t - top_keys[a]);
        double r = u + mg * (f + fabs(u)) + s * tpad;
        bounds[a] = r;
        if (r >= th) {
            cand_buckets[nc] = buckets[a];
            cand_bounds[nc] = r;
            nc++;
        }
    }
    return nc;
}

FRESHCORE_STATIC ptrdiff_t freshcore_pick(const double* bounds, const int32_t* buckets, ptrdiff_t n, double th,
                                int32_t* cand_buckets, double* cand_bounds, ptrdiff_t nc) {
    ptrdiff_t a = 0;
#ifdef FRESHCORE_SCAN_SSE2
    const __m128d vth = _mm_set1_pd(th);
    for (; a + 2 <= n; a += 2) {
        /* written whether or not they pass, kept if they do */
        int bits = _mm_movemask_pd(_mm_cmpge_pd(_mm_loadu_pd(bounds + a), vth));
        cand_buckets[nc] = buckets[a];
        cand_bounds[nc] = bounds[a];
        nc += bits & 1;
        cand_buckets[nc] = buckets[a + 1];
        cand_bounds[nc] = bounds[a + 1];
        nc += bits >> 1;
    }
#endif
    for (; a < n; a++)
        if (bounds[a] >= th) {
            cand_buckets[nc] = buckets[a];
            cand_bounds[nc] = bounds[a];
            nc++;
        }
    return nc;
}

FRESHCORE_STATIC ptrdiff_t freshcore_due_before(const double* keys, ptrdiff_t i, double hor) {
#ifdef FRESHCORE_SCAN_SSE2
    const __m128d vh = _mm_set1_pd(hor);
    while (i >= 4) {
        __m128d lo = _mm_cmple_pd(_mm_loadu_pd(keys + i - 4), vh);
        __m128d hi = _mm_cmple_pd(_mm_loadu_pd(keys + i - 2), vh);
        if (_mm_movemask_pd(_mm_or_pd(lo, hi)))
            break;
        i -= 4;
    }
#endif
    while (i > 0 && !(keys[i - 1] <= hor))
        i--;
    return i - 1;
}

#endif /* FRESHCORE_SCHEDULE_SCAN_H */
