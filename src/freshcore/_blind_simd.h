/* The counting kernels of freshcore._blind, each with a portable scalar path and, on x86-64 with GCC or clang,
 * an AVX2 and an AVX-512 path (target attributes; the level is chosen once, at import: fc_set_simd_level).
 * Every path gives the same counts: integer sums, and the same bins to the bit (IEEE subtraction,
 * multiplication, minimum and rounding up; no fused multiply-add).
 *
 * - fc_le_counts (M1, M2 with few points): counts[q] += #{j : a[j] <= x[q]} (and keep[j] = 1), one pass over
 *   the ages for up to 16 points (AVX2: 8) (the ages stream from memory once, each block of them checked in
 *   the same pass); returns the index of the first entry that is not an age, or -1.
 * - fc_m6_pairs, fc_m6_fast (M6): the counts of pairs per bin, counts[2 n] the pairs between which the page
 *   changed and counts[2 n + 1] all pairs, for the bins n = 1 .. nbins.
 *   The bin of a distance d is ceil(d * inv_h), at least 1, capped at top = nbins + 1 ("beyond the last bin").
 *
 * FRESHCORE_NO_SIMD keeps the scalar paths only.
 */
#ifndef FRESHCORE_BLIND_SIMD_H
#define FRESHCORE_BLIND_SIMD_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "_static.h" /* FRESHCORE_STATIC */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(FRESHCORE_NO_SIMD)
#include <immintrin.h>
#define FRESHCORE_BLIND_X86 1
#define FC_AVX2 __attribute__((target("avx2,popcnt")))
#define FC_AVX512 __attribute__((target("avx2,avx512f,avx512vl,avx512bw,popcnt")))
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FC_INLINE static inline __attribute__((always_inline))
#else
#define FC_INLINE static inline
#endif

/* The paths taken: 0 scalar, 1 AVX2, 2 AVX-512 (F, VL, BW); set once at import. */
static int fc_simd_level = 0;

/* Sets the paths (a level above what the processor has, or -1, means the best it has); returns the one used. */
FRESHCORE_STATIC int fc_set_simd_level(int level)
{
    int best = 0;
#ifdef FRESHCORE_BLIND_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) {
        best = 1;
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw")) {
            best = 2;
        }
    }
#endif
    fc_simd_level = level < 0 || level > best ? best : level;
    return fc_simd_level;
}

/* Instantiates NAME##_scalar, NAME##_avx2 and NAME##_avx512 from the macro BODY(suffix) (a function body using
 * the helpers of its own path, helper##suffix), and NAME(...) choosing among them.  PARAMS and ARGS are the
 * parenthesised parameter and argument lists. */
#ifdef FRESHCORE_BLIND_X86
#define FC_PATHS(ret, name, params, args, body)                                                               \
    static ret name##_scalar params body(_scalar)                                                             \
    FC_AVX2 static ret name##_avx2 params body(_avx2)                                                         \
    FC_AVX512 static ret name##_avx512 params body(_avx512)                                                   \
    static inline ret name params                                                                             \
    {                                                                                                         \
        if (fc_simd_level == 2) {                                                                             \
            return name##_avx512 args;                                                                        \
        }                                                                                                     \
        if (fc_simd_level == 1) {                                                                             \
            return name##_avx2 args;                                                                          \
        }                                                                                                     \
        return name##_scalar args;                                                                            \
    }
/* the same for a function returning void (ISO C forbids `return f();` there) */
#define FC_PATHS_VOID(name, params, args, body)                                                               \
    static void name##_scalar params body(_scalar)                                                            \
    FC_AVX2 static void name##_avx2 params body(_avx2)                                                        \
    FC_AVX512 static void name##_avx512 params body(_avx512)                                                  \
    static inline void name params                                                                            \
    {                                                                                                         \
        if (fc_simd_level == 2) {                                                                             \
            name##_avx512 args;                                                                               \
        } else if (fc_simd_level == 1) {                                                                      \
            name##_avx2 args;                                                                                 \
        } else {                                                                                              \
            name##_scalar args;                                                                               \
        }                                                                                                     \
    }
#else
#define FC_PATHS(ret, name, params, args, body)                                                               \
    static ret name##_scalar params body(_scalar)                                                             \
    static inline ret name params { return name##_scalar args; }
#define FC_PATHS_VOID(name, params, args, body)                                                               \
    static void name##_scalar params body(_scalar)                                                            \
    static inline void name params { name##_scalar args; }
#endif

/* ---------------------------------------------------------------------------------------------------------
 * sample times: the first bad one, and the shortest interval
 * ------------------------------------------------------------------------------------------------------- */

#define FC_SCAN_BLOCK 2048

static inline int fc_is_after(double a, double before) { return (a > before) & (a <= DBL_MAX); }

/* 1 if t[i] is finite and above t[i - 1] for every lo <= i < hi (lo >= 1), the smallest t[i] - t[i - 1] folded
 * into *gap. */
static int fc_times_block_scalar(const double *t, ptrdiff_t lo, ptrdiff_t hi, double *gap)
{
    ptrdiff_t good = 0;
    double g = *gap;
    for (ptrdiff_t i = lo; i < hi; i++) {
        const double s = t[i] - t[i - 1];
        good += fc_is_after(t[i], t[i - 1]);
        g = s < g ? s : g;
    }
    *gap = g;
    return good == hi - lo;
}

#ifdef FRESHCORE_BLIND_X86
FC_INLINE FC_AVX512 int fc_times_block_avx512(const double *t, ptrdiff_t lo, ptrdiff_t hi, double *gap)
{
    const __m512d big = _mm512_set1_pd(DBL_MAX);
    __m512d g = _mm512_set1_pd(*gap);
    __mmask8 ok = 0xFF;
    ptrdiff_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        const __m512d cur = _mm512_loadu_pd(t + i), prev = _mm512_loadu_pd(t + i - 1);
        ok &= _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(cur, prev, _CMP_GT_OQ), cur, big, _CMP_LE_OQ);
        g = _mm512_min_pd(g, _mm512_sub_pd(cur, prev));
    }
    *gap = _mm512_reduce_min_pd(g);
    return fc_times_block_scalar(t, i, hi, gap) & (ok == 0xFF);
}

FC_INLINE FC_AVX2 int fc_times_block_avx2(const double *t, ptrdiff_t lo, ptrdiff_t hi, double *gap)
{
    const __m256d big = _mm256_set1_pd(DBL_MAX);
    __m256d g = _mm256_set1_pd(*gap), ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    ptrdiff_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        const __m256d cur = _mm256_loadu_pd(t + i), prev = _mm256_loadu_pd(t + i - 1);
        const __m256d after = _mm256_and_pd(_mm256_cmp_pd(cur, prev, _CMP_GT_OQ), _mm256_cmp_pd(cur, big, _CMP_LE_OQ));
        ok = _mm256_and_pd(ok, after);
        g = _mm256_min_pd(g, _mm256_sub_pd(cur, prev));
    }
    const __m128d h = _mm_min_pd(_mm256_castpd256_pd128(g), _mm256_extractf128_pd(g, 1));
    *gap = _mm_cvtsd_f64(_mm_min_sd(h, _mm_unpackhi_pd(h, h)));
    return fc_times_block_scalar(t, i, hi, gap) & (_mm256_movemask_pd(ok) == 0xF);
}
#endif

/* The first i with t[i] not finite or not above t[i - 1] (t[0]: not finite), or -1; then, if gap is not NULL,
 * *gap = the smallest interval t[i] - t[i - 1] (DBL_MAX if n < 2). */
#define FC_SCAN_TIMES_BODY(suffix)                                                                            \
    {                                                                                                         \
        double g = DBL_MAX;                                                                                   \
        if (n && !fc_is_after(t[0], -DBL_MAX)) {                                                              \
            return 0;                                                                                         \
        }                                                                                                     \
        for (ptrdiff_t lo = 1; lo < n; lo += FC_SCAN_BLOCK) {                                                 \
            const ptrdiff_t hi = n - lo < FC_SCAN_BLOCK ? n : lo + FC_SCAN_BLOCK;                             \
            if (!fc_times_block##suffix(t, lo, hi, &g)) {                                                     \
                for (ptrdiff_t i = lo;; i++) {                                                                \
                    if (!fc_is_after(t[i], t[i - 1])) {                                                       \
                        return i;                                                                             \
                    }                                                                                         \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        if (gap) {                                                                                            \
            *gap = g;                                                                                         \
        }                                                                                                     \
        return -1;                                                                                            \
    }
FC_PATHS(ptrdiff_t, fc_scan_times, (const double *t, ptrdiff_t n, double *gap), (t, n, gap), FC_SCAN_TIMES_BODY)
#undef FC_SCAN_TIMES_BODY

/* ---------------------------------------------------------------------------------------------------------
 * M1, M2 with few points
 * ------------------------------------------------------------------------------------------------------- */

#define FC_LE_BLOCK 2048 /* ages checked, and counted for a group of points, in one pass */
/* points counted in one pass: an accumulator register each */
#define FC_LE_GROUP_scalar 16
#define FC_LE_GROUP_avx512 16
#define FC_LE_GROUP_avx2 8

static inline int fc_is_age(double a) { return (a >= 0.0) & (a <= DBL_MAX); } /* not NaN, negative, infinite */

/* One block a[0..m) and g points; returns 0 (counts incomplete) if an entry is not an age. */
static int fc_le_block_scalar(const double *a, const uint8_t *keep, ptrdiff_t m, const double *x, int g,
                              int64_t *counts)
{
    ptrdiff_t good = 0;
    for (ptrdiff_t j = 0; j < m; j++) {
        good += fc_is_age(a[j]);
    }
    for (int q = 0; q < g; q++) {
        const double xq = x[q];
        int64_t s = 0;
        if (keep) {
            for (ptrdiff_t j = 0; j < m; j++) {
                s += (a[j] <= xq) & keep[j];
            }
        } else {
            for (ptrdiff_t j = 0; j < m; j++) {
                s += a[j] <= xq;
            }
        }
        counts[q] += s;
    }
    return good == m;
}

#ifdef FRESHCORE_BLIND_X86
/* The vector loop over a[0..m) (m a multiple of the lanes) for G points, G a constant once inlined into the switch
 * below (so that the accumulators are registers); returns 0 if an entry is not an age. */
FC_INLINE FC_AVX512 int fc_le_group_avx512(const double *a, const uint8_t *keep, ptrdiff_t m, const double *x,
                                           const int G, int64_t *counts)
{
    __m512i acc[FC_LE_GROUP_avx512];
    for (int q = 0; q < G; q++) {
        acc[q] = _mm512_setzero_si512();
    }
    __mmask8 ok = 0xFF;
    for (ptrdiff_t j = 0; j < m; j += 8) {
        const __m512d v = _mm512_loadu_pd(a + j);
        ok &= _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(v, _mm512_setzero_pd(), _CMP_GE_OQ), v,
                                      _mm512_set1_pd(DBL_MAX), _CMP_LE_OQ);
        const __mmask8 kept = keep ? _mm_test_epi8_mask(_mm_loadl_epi64((const __m128i *)(keep + j)),
                                                        _mm_set1_epi8(1))
                                   : 0xFF;
        for (int q = 0; q < G; q++) { /* acc - (-1) where a[j] <= x[q] */
            acc[q] = _mm512_mask_sub_epi64(acc[q], _mm512_mask_cmp_pd_mask(kept, v, _mm512_set1_pd(x[q]), _CMP_LE_OQ),
                                           acc[q], _mm512_set1_epi64(-1));
        }
    }
    for (int q = 0; q < G; q++) {
        counts[q] += _mm512_reduce_add_epi64(acc[q]);
    }
    return ok == 0xFF;
}

FC_INLINE FC_AVX2 int fc_le_group_avx2(const double *a, const uint8_t *keep, ptrdiff_t m, const double *x,
                                       const int G, int64_t *counts)
{
    __m256i acc[FC_LE_GROUP_avx2];
    for (int q = 0; q < G; q++) {
        acc[q] = _mm256_setzero_si256();
    }
    __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    for (ptrdiff_t j = 0; j < m; j += 4) {
        __m256d v = _mm256_loadu_pd(a + j);
        ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_GE_OQ),
                                             _mm256_cmp_pd(v, _mm256_set1_pd(DBL_MAX), _CMP_LE_OQ)));
        if (keep) { /* ages not kept become +infinity, above every point */
            int32_t k4;
            __builtin_memcpy(&k4, keep + j, 4);
            const __m256i kept = _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(k4)));
            v = _mm256_blendv_pd(_mm256_set1_pd(INFINITY), v, _mm256_castsi256_pd(kept));
        }
        for (int q = 0; q < G; q++) { /* acc - (-1) where a[j] <= x[q] */
            acc[q] = _mm256_sub_epi64(acc[q], _mm256_castpd_si256(_mm256_cmp_pd(v, _mm256_set1_pd(x[q]), _CMP_LE_OQ)));
        }
    }
    for (int q = 0; q < G; q++) {
        const __m128i s = _mm_add_epi64(_mm256_castsi256_si128(acc[q]), _mm256_extracti128_si256(acc[q], 1));
        counts[q] += _mm_cvtsi128_si64(s) + _mm_extract_epi64(s, 1);
    }
    return _mm256_movemask_pd(ok) == 0xF;
}

/* One block a[0..m) and g points: the vector loop for g, a constant in each case, and the last m % lanes ages by
 * the scalar loop. */
#define FC_CASE(suffix, G)                                                                                    \
    case G:                                                                                                   \
        return good & fc_le_group##suffix(a, keep, v, x, G, counts);
#define FC_CASES8(suffix)                                                                                     \
    FC_CASE(suffix, 1) FC_CASE(suffix, 2) FC_CASE(suffix, 3) FC_CASE(suffix, 4) FC_CASE(suffix, 5)           \
    FC_CASE(suffix, 6) FC_CASE(suffix, 7) FC_CASE(suffix, 8)
#define FC_LE_SWITCH(suffix, lanes, cases)                                                                     \
    const ptrdiff_t v = m - m % lanes;                                                                        \
    const int good = fc_le_block_scalar(a + v, keep ? keep + v : NULL, m - v, x, g, counts);                   \
    switch (g) {                                                                                              \
        cases                                                                                                 \
    }                                                                                                         \
    return 0;

FC_INLINE FC_AVX512 int fc_le_block_avx512(const double *a, const uint8_t *keep, ptrdiff_t m, const double *x, int g,
                                           int64_t *counts)
{
    FC_LE_SWITCH(_avx512, 8, FC_CASES8(_avx512) FC_CASE(_avx512, 9) FC_CASE(_avx512, 10) FC_CASE(_avx512, 11)
                 FC_CASE(_avx512, 12) FC_CASE(_avx512, 13) FC_CASE(_avx512, 14) FC_CASE(_avx512, 15)
                 FC_CASE(_avx512, 16))
}

FC_INLINE FC_AVX2 int fc_le_block_avx2(const double *a, const uint8_t *keep, ptrdiff_t m, const double *x, int g,
                                       int64_t *counts)
{
    FC_LE_SWITCH(_avx2, 4, FC_CASES8(_avx2))
}
#undef FC_LE_SWITCH
#undef FC_CASES8
#undef FC_CASE
#endif

static ptrdiff_t fc_first_not_age_in(const double *a, ptrdiff_t lo, ptrdiff_t hi)
{
    for (ptrdiff_t j = lo; j < hi; j++) {
        if (!fc_is_age(a[j])) {
            return j;
        }
    }
    return -1;
}

/* counts[q] += #{j < n : a[j] <= x[q] (and keep[j] = 1)}, q < k; the ages a block at a time, each block's
 * points FC_LE_GROUP##suffix at a time, every pass checking the block.  Returns the first j with
 * a[j] not an age (then the counts are incomplete), or -1. */
#define FC_LE_COUNTS_BODY(suffix)                                                                             \
    {                                                                                                         \
        const int group = FC_LE_GROUP##suffix;                                                                \
        for (ptrdiff_t lo = 0; lo < n; lo += FC_LE_BLOCK) {                                                   \
            const ptrdiff_t m = n - lo < FC_LE_BLOCK ? n - lo : FC_LE_BLOCK;                                  \
            for (ptrdiff_t q = 0; q < k; q += group) {                                                        \
                const int g = (int)(k - q < group ? k - q : group);                                           \
                const int good = keep ? fc_le_block##suffix(a + lo, keep + lo, m, x + q, g, counts + q)       \
                                      : fc_le_block##suffix(a + lo, NULL, m, x + q, g, counts + q);           \
                if (!good) {                                                                                  \
                    return fc_first_not_age_in(a, lo, lo + m);                                                \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
        return -1;                                                                                            \
    }
FC_PATHS(ptrdiff_t, fc_le_counts, (const double *a, const uint8_t *keep, ptrdiff_t n, const double *x, ptrdiff_t k,
                                   int64_t *counts),
         (a, keep, n, x, k, counts), FC_LE_COUNTS_BODY)
#undef FC_LE_COUNTS_BODY

/* ---------------------------------------------------------------------------------------------------------
 * M6: bins of pair distances
 * ------------------------------------------------------------------------------------------------------- */

/* out[j] = the bin of t[j] - si, j < m. */
FC_INLINE void fc_bins_scalar(const double *t, ptrdiff_t m, double si, double inv_h, int32_t top, int32_t *out)
{
    const double cap = (double)top;
    for (ptrdiff_t j = 0; j < m; j++) {
        double x = (t[j] - si) * inv_h;
        x = x < cap ? x : cap;
        int32_t b = (int32_t)x; /* x >= 0: truncation is floor */
        b += (double)b < x;
        out[j] = b > 1 ? b : 1;
    }
}

/* out[0..8) = the bins of the 8 partners t[0..8) of si */
FC_INLINE void fc_bins8_scalar(const double *t, double si, double inv_h, int32_t top, int32_t *out)
{
    fc_bins_scalar(t, 8, si, inv_h, top, out);
}

#ifdef FRESHCORE_BLIND_X86
FC_INLINE FC_AVX512 __m256i fc_bin8_avx512(__m512d later, __m512d earlier, __m512d inv, __m512d cap)
{
    const __m512d x = _mm512_min_pd(_mm512_mul_pd(_mm512_sub_pd(later, earlier), inv), cap);
    return _mm256_max_epi32(_mm512_cvt_roundpd_epi32(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC),
                            _mm256_set1_epi32(1));
}

FC_INLINE FC_AVX512 void fc_bins8_avx512(const double *t, double si, double inv_h, int32_t top, int32_t *out)
{
    _mm256_storeu_si256((__m256i *)out, fc_bin8_avx512(_mm512_loadu_pd(t), _mm512_set1_pd(si), _mm512_set1_pd(inv_h),
                                                       _mm512_set1_pd((double)top)));
}

/* ceil by rounding, then truncation (exact: 0 <= x <= top < 2^31) */
FC_INLINE FC_AVX2 __m128i fc_bin4_avx2(__m256d later, __m256d earlier, __m256d inv, __m256d cap)
{
    const __m256d x = _mm256_min_pd(_mm256_mul_pd(_mm256_sub_pd(later, earlier), inv), cap);
    return _mm_max_epi32(_mm256_cvttpd_epi32(_mm256_round_pd(x, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)),
                         _mm_set1_epi32(1));
}

FC_INLINE FC_AVX2 __m256i fc_bin8_avx2(const double *t, double si, double inv_h, int32_t top)
{
    const __m256d e = _mm256_set1_pd(si), inv = _mm256_set1_pd(inv_h), cap = _mm256_set1_pd((double)top);
    return _mm256_set_m128i(fc_bin4_avx2(_mm256_loadu_pd(t + 4), e, inv, cap),
                            fc_bin4_avx2(_mm256_loadu_pd(t), e, inv, cap));
}

FC_INLINE FC_AVX2 void fc_bins8_avx2(const double *t, double si, double inv_h, int32_t top, int32_t *out)
{
    _mm256_storeu_si256((__m256i *)out, fc_bin8_avx2(t, si, inv_h, top));
}
#endif

/* M6 over all pairs i < j, a tile of FC_TILE_ROWS samples i by FC_TILE_COLS partners j at a time (their bins, at
 * most (rows + columns) (gap / h) apart, are a band of the histogram that stays in cache), each row of a tile
 * counted by fc_row_count: the bins of a group of 8 partners stored, and those of the group FC_TILE_LAG groups
 * before counted, in one loop (the vector and the scalar work overlap, and an entry is read once its store has
 * left the store queue: read at once, a 4-byte entry of a 32-byte store waits for it).  The counts go to a
 * uint32 histogram (a narrow band of cache), added to the int64 counts before any could wrap. */
#define FC_TILE_ROWS 128
#define FC_TILE_COLS 256
#define FC_TILE_LAG 24

/* h[bin] += 1 for the partners t[0..m) of si, m <= FC_TILE_COLS */
#define FC_COUNT8(e)                                                                                          \
    h[(e)[0]] += 1, h[(e)[1]] += 1, h[(e)[2]] += 1, h[(e)[3]] += 1, h[(e)[4]] += 1, h[(e)[5]] += 1,           \
        h[(e)[6]] += 1, h[(e)[7]] += 1
#define FC_ROW_COUNT(suffix, attr)                                                                            \
    FC_INLINE attr void fc_row_count##suffix(const double *t, ptrdiff_t m, double si, double inv_h, int32_t top, \
                                             uint32_t *h)                                                     \
    {                                                                                                         \
        int32_t buf[FC_TILE_COLS];                                                                            \
        const ptrdiff_t groups = m / 8, lead = groups < FC_TILE_LAG ? groups : FC_TILE_LAG;                   \
        ptrdiff_t g = 0;                                                                                      \
        for (; g < lead; g++) {                                                                               \
            fc_bins8##suffix(t + 8 * g, si, inv_h, top, buf + 8 * g);                                         \
        }                                                                                                     \
        for (; g < groups; g++) { /* the bins of group g, the counts of group g - FC_TILE_LAG */               \
            fc_bins8##suffix(t + 8 * g, si, inv_h, top, buf + 8 * g);                                         \
            FC_COUNT8(buf + 8 * (g - FC_TILE_LAG));                                                           \
        }                                                                                                     \
        fc_bins_scalar(t + 8 * groups, m - 8 * groups, si, inv_h, top, buf + 8 * groups);                     \
        for (g = groups - lead; g < groups; g++) {                                                            \
            FC_COUNT8(buf + 8 * g);                                                                           \
        }                                                                                                     \
        for (ptrdiff_t k = 8 * groups; k < m; k++) {                                                          \
            h[buf[k]] += 1;                                                                                   \
        }                                                                                                     \
    }
FC_ROW_COUNT(_scalar, )
#ifdef FRESHCORE_BLIND_X86
FC_ROW_COUNT(_avx2, FC_AVX2)
FC_ROW_COUNT(_avx512, FC_AVX512)
#endif
#undef FC_ROW_COUNT
#undef FC_COUNT8

/* changed ? i + 1 : nxt without a branch (the flags are random: a branch on them is mispredicted half the time) */
static inline ptrdiff_t fc_next_change(uint8_t changed, ptrdiff_t i, ptrdiff_t nxt)
{
    const ptrdiff_t mask = -(ptrdiff_t)changed;
    return ((i + 1) & mask) | (nxt & ~mask);
}

/* The pairs in h[b], b <= last, added to counts[2 b] and counts[2 b + 1] (all pairs) or, for the unchanged ones,
 * taken from counts[2 b] (the changed pairs); h emptied. */
static void fc_add_counts(uint32_t *h, ptrdiff_t last, int unchanged, int64_t *counts)
{
    for (ptrdiff_t b = 0; b <= last; b++) {
        counts[2 * b] += unchanged ? -(int64_t)h[b] : (int64_t)h[b];
        counts[2 * b + 1] += unchanged ? 0 : h[b];
        h[b] = 0;
    }
}

/* M6 over all pairs i < j, the pairs beyond the last bin in bin top = nbins + 1 (counts: 2 (nbins + 2) entries, per
 * bin the changed pairs and all pairs).  Every pair is counted (tile by tile), then the pairs inside a change-free
 * run (for each i its partners before the next detected change) are taken from the changed ones.  Returns -1
 * (nothing counted) if out of memory. */
#define FC_PAIRS_SINCE (UINT32_MAX - (uint64_t)FC_TILE_ROWS * FC_TILE_COLS) /* a tile more could wrap a count */
#define FC_M6_PAIRS_BODY(suffix)                                                                              \
    {                                                                                                         \
        const int32_t top = nbins + 1;                                                                        \
        uint32_t *h = (uint32_t *)calloc((size_t)top + 1, sizeof(uint32_t));                                  \
        uint64_t since = 0; /* pairs counted in h since it was emptied */                                    \
        if (!h) {                                                                                             \
            return -1;                                                                                        \
        }                                                                                                     \
        for (ptrdiff_t lo = 0; lo < n - 1; lo += FC_TILE_ROWS) {                                              \
            const ptrdiff_t hi = n - 1 - lo < FC_TILE_ROWS ? n - 1 : lo + FC_TILE_ROWS;                       \
            for (ptrdiff_t col = lo + 1; col < n; col += FC_TILE_COLS) {                                      \
                const ptrdiff_t end = n - col < FC_TILE_COLS ? n : col + FC_TILE_COLS;                        \
                if (since > FC_PAIRS_SINCE) {                                                                 \
                    fc_add_counts(h, top, 0, counts);                                                         \
                    since = 0;                                                                                \
                }                                                                                             \
                for (ptrdiff_t i = lo; i < hi; i++) {                                                         \
                    const ptrdiff_t j = i + 1 > col ? i + 1 : col;                                            \
                    if (j < end) {                                                                            \
                        fc_row_count##suffix(t + j, end - j, t[i], inv_h, top, h);                            \
                    }                                                                                         \
                }                                                                                             \
                since += (uint64_t)FC_TILE_ROWS * FC_TILE_COLS;                                               \
            }                                                                                                 \
        }                                                                                                     \
        fc_add_counts(h, top, 0, counts);                                                                     \
        since = 0;                                                                                            \
        ptrdiff_t nxt = n;  /* the first j > i with changed[j - 1] = 1 (n if none) */                         \
        ptrdiff_t last = 0; /* the largest bin of an unchanged pair (a row's last: bins grow with j) */         \
        for (ptrdiff_t i = n - 2; i >= 0; i--) {                                                              \
            nxt = fc_next_change(changed[i], i, nxt);                                                         \
            for (ptrdiff_t j = i + 1; j < nxt; j += FC_TILE_COLS) {                                           \
                if (since > FC_PAIRS_SINCE) {                                                                 \
                    fc_add_counts(h, top, 1, counts);                                                         \
                    since = 0;                                                                                \
                }                                                                                             \
                const ptrdiff_t m = nxt - j < FC_TILE_COLS ? nxt - j : FC_TILE_COLS;                          \
                fc_row_count##suffix(t + j, m, t[i], inv_h, top, h);                                          \
                since += FC_TILE_COLS;                                                                        \
                int32_t b;                                                                                    \
                fc_bins_scalar(t + j + m - 1, 1, t[i], inv_h, top, &b);                                       \
                last = b > last ? b : last;                                                                   \
            }                                                                                                 \
        }                                                                                                     \
        fc_add_counts(h, last, 1, counts);                                                                    \
        free(h);                                                                                              \
        return 0;                                                                                             \
    }
FC_PATHS(int, fc_m6_pairs, (const double *t, const uint8_t *changed, ptrdiff_t n, double inv_h, int32_t nbins,
                            int64_t *counts),
         (t, changed, n, inv_h, nbins, counts), FC_M6_PAIRS_BODY)
#undef FC_M6_PAIRS_BODY
#undef FC_PAIRS_SINCE

/* M6's fast form: for each i its partners 8 at a time.  A window writes an entry 2 bin + (partner before the
 * next change) for each of its 8 partners into a buffer and keeps those within the last bin: the bins only grow
 * with j (times are sorted, and rounding keeps the order), so these are the first c, and the next window
 * starts where they end.  Only a window all within goes on, which the 8th partner's distance tells (the same
 * subtraction and product as its bin, ready before the bins), so that the one branch per i that is not always
 * taken the same way is decided early; the buffer's entries are counted when it is full, in a loop without
 * branches.  No flag is read in the windows: the partners before nxt, the first sample after i's next detected
 * change, are the unchanged pairs. */
#define FC_M6_BUF 2048

/* out[w] = 2 bin + (w < before) for the partners t[w] of si, w < 8 (< rem where rem < 8); returns how many are
 * within the last bin (a prefix). */
FC_INLINE int fc_window_scalar(const double *t, ptrdiff_t rem, double si, double inv_h, int32_t top,
                               ptrdiff_t before, int32_t *out)
{
    const int lim = rem < 8 ? (int)rem : 8;
    const double cap = (double)(top - 1);
    int w = 0;
    for (; w < lim && (t[w] - si) * inv_h <= cap; w++) { /* the partners within the last bin: the first ones */
        fc_bins_scalar(t + w, 1, si, inv_h, top, out + w);
        out[w] = 2 * out[w] + (w < before);
    }
    return w;
}

#ifdef FRESHCORE_BLIND_X86
FC_INLINE FC_AVX512 int fc_window_avx512(const double *t, ptrdiff_t rem, double si, double inv_h, int32_t top,
                                         ptrdiff_t before, int32_t *out)
{
    const __m512d later = rem >= 8 ? _mm512_loadu_pd(t) /* a masked load is slower: only at the end */
                                   : _mm512_mask_loadu_pd(_mm512_set1_pd(INFINITY), (__mmask8)((1u << rem) - 1), t);
    const __m256i b = fc_bin8_avx512(later, _mm512_set1_pd(si), _mm512_set1_pd(inv_h), _mm512_set1_pd((double)top));
    const __mmask8 unchanged = _mm512_cmplt_epi64_mask(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7),
                                                       _mm512_set1_epi64(before));
    const __m256i twice = _mm256_add_epi32(b, b);
    _mm256_storeu_si256((__m256i *)out, _mm256_mask_add_epi32(twice, unchanged, twice, _mm256_set1_epi32(1)));
    return __builtin_popcount(_mm256_cmplt_epi32_mask(b, _mm256_set1_epi32(top)));
}

FC_INLINE FC_AVX2 int fc_window_avx2(const double *t, ptrdiff_t rem, double si, double inv_h, int32_t top,
                                     ptrdiff_t before, int32_t *out)
{
    if (rem < 8) {
        return fc_window_scalar(t, rem, si, inv_h, top, before, out);
    }
    const __m256i b = fc_bin8_avx2(t, si, inv_h, top);
    const __m256i unchanged = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)(before < 8 ? before : 8)),
                                                 _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); /* -1 where w < before */
    _mm256_storeu_si256((__m256i *)out, _mm256_sub_epi32(_mm256_add_epi32(b, b), unchanged));
    const __m256i within = _mm256_cmpgt_epi32(_mm256_set1_epi32(top), b);
    return __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(within)));
}
#endif

/* counts[e] += 1 for the entries e of buf[0..m), alternately into counts and alt if alt is not NULL (with few bins
 * the same entry comes back soon: two copies of the histogram halve the increments that wait on one another) */
FC_INLINE void fc_count_entries(const int32_t *buf, ptrdiff_t m, int64_t *counts, int64_t *alt)
{
    ptrdiff_t p = 0;
    if (alt) {
        for (; p + 2 <= m; p += 2) {
            counts[buf[p]] += 1;
            alt[buf[p + 1]] += 1;
        }
    }
    for (; p < m; p++) {
        counts[buf[p]] += 1;
    }
}

#define FC_ALT_BINS 65536 /* up to this many bins the counts are spread over two copies */

/* The pairs within nbins bins: counts[2 b] the changed ones and counts[2 b + 1] all of them, b <= nbins (counts:
 * 2 (nbins + 1) entries at least, zero on entry). */
#define FC_M6_FAST_BODY(suffix)                                                                               \
    {                                                                                                         \
        const int32_t top = nbins + 1;                                                                        \
        const double cap = (double)nbins;                                                                     \
        int32_t buf[FC_M6_BUF + 8];                                                                           \
        int64_t *alt = nbins < FC_ALT_BINS ? (int64_t *)calloc(2 * (size_t)top, sizeof(int64_t)) : NULL;      \
        ptrdiff_t pos = 0, nxt = n; /* nxt: the first j > i with changed[j - 1] = 1 (n if none) */            \
        for (ptrdiff_t i = n - 2; i >= 0; i--) {                                                              \
            nxt = fc_next_change(changed[i], i, nxt);                                                         \
            ptrdiff_t j = i + 1;                                                                              \
            pos += fc_window##suffix(t + j, n - j, t[i], inv_h, top, nxt - j, buf + pos);                     \
            while (j + 7 < n && (t[j + 7] - t[i]) * inv_h <= cap) { /* all 8 within: the next 8 */            \
                j += 8;                                                                                       \
                if (pos >= FC_M6_BUF) {                                                                       \
                    fc_count_entries(buf, pos, counts, alt);                                                  \
                    pos = 0;                                                                                  \
                }                                                                                             \
                pos += fc_window##suffix(t + j, n - j, t[i], inv_h, top, nxt - j, buf + pos);                 \
            }                                                                                                 \
            if (pos >= FC_M6_BUF) {                                                                           \
                fc_count_entries(buf, pos, counts, alt);                                                      \
                pos = 0;                                                                                      \
            }                                                                                                 \
        }                                                                                                     \
        fc_count_entries(buf, pos, counts, alt);                                                              \
        for (ptrdiff_t b = 0; b <= nbins; b++) { /* all pairs: the unchanged ones and the changed ones */     \
            if (alt) {                                                                                        \
                counts[2 * b] += alt[2 * b];                                                                  \
                counts[2 * b + 1] += alt[2 * b + 1];                                                          \
            }                                                                                                 \
            counts[2 * b + 1] += counts[2 * b];                                                               \
        }                                                                                                     \
        free(alt);                                                                                            \
    }
FC_PATHS_VOID(fc_m6_fast, (const double *t, const uint8_t *changed, ptrdiff_t n, double inv_h, int32_t nbins,
                           int64_t *counts),
              (t, changed, n, inv_h, nbins, counts), FC_M6_FAST_BODY)
#undef FC_M6_FAST_BODY

#endif /* FRESHCORE_BLIND_SIMD_H */
