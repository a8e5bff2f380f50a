/* The inner loops of freshcore._blind that pay for SIMD, each with a portable scalar path and an AVX2 path
 * (target attribute, chosen once at run time: fc_set_simd_level), which give the same results:
 *
 * - fc_row_bins: the bins of M6's pair distances, out[j] = ceil((t[j] - si) * inv_h), at least 1 and at
 *   most top (= nbins + 1: "beyond the last bin"); the product is capped before its conversion, so no
 *   distance overflows the int32 bin.  The same bits on both paths (IEEE subtraction, multiplication,
 *   minimum and truncation, no fused multiply-add).  Written with intrinsics: GCC does not vectorise the
 *   scalar loop for the x86-64 baseline (SSE2 has no packed int32 maximum and its conversions leave half a
 *   register idle).
 * - fc_count_le, fc_count_le_kept, fc_count_ages: #{j : a[j] <= x} (and keep[j] = 1), M1's and M2's counts,
 *   and #{j : a[j] is an age} (a number in [0, DBL_MAX]); integer sums, so any order gives the same count.
 *   The AVX2 and AVX-512F clones are the same C loops, which GCC vectorises there (the counts take AVX-512F
 *   where the processor has it: eight ages a compare).
 *
 * - fc_diag_bins: the same bins for the pairs of one diagonal (all pairs (k, k + offset)).
 * - fc_m6_fast: M6's fast form, a fixed window of partners at a time (AVX2 only; see below).
 *
 * FRESHCORE_NO_SIMD keeps the scalar paths only.
 */
#ifndef FRESHCORE_BLIND_SIMD_H
#define FRESHCORE_BLIND_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "_static.h" /* FRESHCORE_STATIC */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(FRESHCORE_NO_SIMD)
#include <immintrin.h>
#define FRESHCORE_BLIND_AVX2 1
#endif

FRESHCORE_STATIC void fc_row_bins_scalar(const double *t, ptrdiff_t m, double si, double inv_h, int32_t top,
                                         int32_t *out)
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

/* The same bins for the pairs (k, k + offset) of one diagonal: out[k] for the distance later[k] - earlier[k]. */
FRESHCORE_STATIC void fc_diag_bins_scalar(const double *later, const double *earlier, ptrdiff_t m, double inv_h,
                                          int32_t top, int32_t *out)
{
    const double cap = (double)top;
    for (ptrdiff_t j = 0; j < m; j++) {
        double x = (later[j] - earlier[j]) * inv_h;
        x = x < cap ? x : cap;
        int32_t b = (int32_t)x;
        b += (double)b < x;
        out[j] = b > 1 ? b : 1;
    }
}

#ifdef FRESHCORE_BLIND_AVX2
__attribute__((target("avx2"))) static void fc_diag_bins_avx2(const double *later, const double *earlier,
                                                               ptrdiff_t m, double inv_h, int32_t top, int32_t *out)
{
    const __m256d vinv = _mm256_set1_pd(inv_h), vcap = _mm256_set1_pd((double)top), vone = _mm256_set1_pd(1.0);
    const __m128i one = _mm_set1_epi32(1);
    ptrdiff_t j = 0;
    for (; j + 4 <= m; j += 4) {
        __m256d x = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(later + j), _mm256_loadu_pd(earlier + j)), vinv);
        x = _mm256_min_pd(x, vcap);
        __m128i b = _mm256_cvttpd_epi32(x);
        __m256d up = _mm256_and_pd(_mm256_cmp_pd(_mm256_cvtepi32_pd(b), x, _CMP_LT_OQ), vone);
        b = _mm_max_epi32(_mm_add_epi32(b, _mm256_cvttpd_epi32(up)), one);
        _mm_storeu_si128((__m128i *)(out + j), b);
    }
    fc_diag_bins_scalar(later + j, earlier + j, m - j, inv_h, top, out + j);
}

__attribute__((target("avx2"))) static void fc_row_bins_avx2(const double *t, ptrdiff_t m, double si,
                                                              double inv_h, int32_t top, int32_t *out)
{
    const __m256d vsi = _mm256_set1_pd(si), vinv = _mm256_set1_pd(inv_h), vcap = _mm256_set1_pd((double)top);
    const __m256d vone = _mm256_set1_pd(1.0);
    const __m128i one = _mm_set1_epi32(1);
    ptrdiff_t j = 0;
    for (; j + 4 <= m; j += 4) {
        __m256d x = _mm256_mul_pd(_mm256_sub_pd(_mm256_loadu_pd(t + j), vsi), vinv);
        x = _mm256_min_pd(x, vcap); /* x < cap ? x : cap */
        __m128i b = _mm256_cvttpd_epi32(x);
        __m256d up = _mm256_and_pd(_mm256_cmp_pd(_mm256_cvtepi32_pd(b), x, _CMP_LT_OQ), vone);
        b = _mm_max_epi32(_mm_add_epi32(b, _mm256_cvttpd_epi32(up)), one);
        _mm_storeu_si128((__m128i *)(out + j), b);
    }
    fc_row_bins_scalar(t + j, m - j, si, inv_h, top, out + j);
}
#endif

/* M6's fast form with AVX2 (the counts of _blind.m6_fast, pair for pair): for each i the bins of its next
 * FC_WINDOW partners come from two vectors, whether they are within the largest bin or not, and are counted
 * in a loop of fixed length (no exit to mispredict); a partner beyond the largest bin lands in one of the
 * FC_WINDOW overflow entries top .. top + FC_WINDOW - 1 (spread so that they do not wait on one another).
 * Only a window holding more than FC_WINDOW partners goes on, FC_CHUNK partners' bins at a time.  pairs and unchanged hold
 * nbins + 1 + FC_WINDOW entries. */
#define FC_WINDOW 8
#define FC_CHUNK 256

#ifdef FRESHCORE_BLIND_AVX2
__attribute__((target("avx2"))) static void fc_m6_fast_avx2(const double *t, const uint8_t *changed, ptrdiff_t n,
                                                             double inv_h, int32_t nbins, int64_t *pairs,
                                                             int64_t *unchanged)
{
    const double cap = (double)nbins; /* a pair counts iff (s_j - s_i) / h <= nbins */
    const int32_t top = nbins + 1;
    int32_t bins[FC_WINDOW], chunk[FC_CHUNK];
    ptrdiff_t nxt = n; /* the first j > i with changed[j - 1] = 1 (n if none) */
    for (ptrdiff_t i = n - 2; i >= 0; i--) {
        if (changed[i]) {
            nxt = i + 1;
        }
        const double si = t[i];
        ptrdiff_t j = i + 1;
        if (i + FC_WINDOW < n) {
            fc_row_bins_avx2(t + j, FC_WINDOW, si, inv_h, top, bins);
            for (int w = 0; w < FC_WINDOW; w++) {
                int32_t b = bins[w] + (bins[w] == top) * w;
                pairs[b] += 1;
                unchanged[b] += j + w < nxt;
            }
            j += FC_WINDOW;
        }
        if (j < n && (t[j] - si) * inv_h <= cap) { /* more partners: chunks, until the first beyond */
            for (;;) {
                ptrdiff_t m = n - j < FC_CHUNK ? n - j : FC_CHUNK, w = 0;
                fc_row_bins_avx2(t + j, m, si, inv_h, top, chunk);
                for (; w < m && chunk[w] < top; w++) { /* the bins only grow with j */
                    pairs[chunk[w]] += 1;
                }
                for (ptrdiff_t u = 0; u < w && j + u < nxt; u++) { /* the partners before the next change */
                    unchanged[chunk[u]] += 1;
                }
                if (w < m || j + m >= n) {
                    break;
                }
                j += m;
            }
        }
    }
}
#endif

/* The counting loops: integer sums of comparisons, so every path (and any order) gives the same count. */
#define FC_COUNT_LE_LOOP                                                                                      \
    int64_t s = 0;                                                                                            \
    for (ptrdiff_t j = 0; j < n; j++) {                                                                       \
        s += a[j] <= x;                                                                                       \
    }                                                                                                         \
    return s;

#define FC_COUNT_LE_KEPT_LOOP                                                                                 \
    int64_t s = 0;                                                                                            \
    for (ptrdiff_t j = 0; j < n; j++) {                                                                       \
        s += (a[j] <= x) & keep[j];                                                                           \
    }                                                                                                         \
    return s;

/* ages that are numbers in [0, DBL_MAX]: not NaN, not negative, not infinite */
#define FC_COUNT_AGES_LOOP                                                                                    \
    int64_t s = 0;                                                                                            \
    for (ptrdiff_t j = 0; j < n; j++) {                                                                       \
        s += (a[j] >= 0.0) & (a[j] <= 1.7976931348623157e308);                                                \
    }                                                                                                         \
    return s;

/* out[j] = a[j] where keep[j], else +infinity (which is above every point): M1's kept ages, so that the plain
   count follows */
#define FC_MASK_LOOP                                                                                          \
    for (ptrdiff_t j = 0; j < n; j++) {                                                                       \
        out[j] = keep[j] ? a[j] : (double)INFINITY;                                                           \
    }

#define FC_COUNTS(suffix, attr)                                                                               \
    attr int64_t fc_count_le_##suffix(const double *a, ptrdiff_t n, double x) { FC_COUNT_LE_LOOP }             \
    attr int64_t fc_count_le_kept_##suffix(const double *a, const uint8_t *keep, ptrdiff_t n, double x)        \
    {                                                                                                         \
        FC_COUNT_LE_KEPT_LOOP                                                                                 \
    }                                                                                                         \
    attr int64_t fc_count_ages_##suffix(const double *a, ptrdiff_t n) { FC_COUNT_AGES_LOOP }                  \
    attr void fc_mask_##suffix(const double *a, const uint8_t *keep, ptrdiff_t n, double *out) { FC_MASK_LOOP }

FC_COUNTS(scalar, FRESHCORE_STATIC)
#ifdef FRESHCORE_BLIND_AVX2
FC_COUNTS(avx2, __attribute__((target("avx2"))) static)
FC_COUNTS(avx512, __attribute__((target("avx512f"))) static)
#endif

/* The paths taken: 0 scalar, 1 AVX2, 2 AVX-512F for the counts (AVX2 for the bins); set once at import. */
static int fc_simd_level = 0;

/* Sets the paths (a level above what the processor has, or -1, means the best it has); returns the one used. */
FRESHCORE_STATIC int fc_set_simd_level(int level)
{
    int best = 0;
#ifdef FRESHCORE_BLIND_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        best = 1;
        if (__builtin_cpu_supports("avx512f")) {
            best = 2;
        }
    }
#endif
    fc_simd_level = level < 0 || level > best ? best : level;
    return fc_simd_level;
}

static inline void fc_row_bins(const double *t, ptrdiff_t m, double si, double inv_h, int32_t top, int32_t *out)
{
#ifdef FRESHCORE_BLIND_AVX2
    if (fc_simd_level >= 1) {
        fc_row_bins_avx2(t, m, si, inv_h, top, out);
        return;
    }
#endif
    fc_row_bins_scalar(t, m, si, inv_h, top, out);
}

static inline void fc_diag_bins(const double *later, const double *earlier, ptrdiff_t m, double inv_h, int32_t top,
                                int32_t *out)
{
#ifdef FRESHCORE_BLIND_AVX2
    if (fc_simd_level >= 1) {
        fc_diag_bins_avx2(later, earlier, m, inv_h, top, out);
        return;
    }
#endif
    fc_diag_bins_scalar(later, earlier, m, inv_h, top, out);
}

#ifdef FRESHCORE_BLIND_AVX2
#define FC_DISPATCH(name, ...)                                                                                \
    if (fc_simd_level == 2) {                                                                                 \
        return name##_avx512(__VA_ARGS__);                                                                    \
    }                                                                                                         \
    if (fc_simd_level == 1) {                                                                                 \
        return name##_avx2(__VA_ARGS__);                                                                      \
    }                                                                                                         \
    return name##_scalar(__VA_ARGS__);
#else
#define FC_DISPATCH(name, ...) return name##_scalar(__VA_ARGS__);
#endif

static inline int64_t fc_count_le(const double *a, ptrdiff_t n, double x) { FC_DISPATCH(fc_count_le, a, n, x) }

static inline int64_t fc_count_le_kept(const double *a, const uint8_t *keep, ptrdiff_t n, double x)
{
    FC_DISPATCH(fc_count_le_kept, a, keep, n, x)
}

static inline int64_t fc_count_ages(const double *a, ptrdiff_t n) { FC_DISPATCH(fc_count_ages, a, n) }

static inline void fc_mask(const double *a, const uint8_t *keep, ptrdiff_t n, double *out)
{
#ifdef FRESHCORE_BLIND_AVX2
    if (fc_simd_level == 2) {
        fc_mask_avx512(a, keep, n, out);
        return;
    }
    if (fc_simd_level == 1) {
        fc_mask_avx2(a, keep, n, out);
        return;
    }
#endif
    fc_mask_scalar(a, keep, n, out);
}

/* fc_m6_fast_avx2 where the level allows it (returns 1), else 0: the caller runs its portable loop. */
static inline int fc_m6_fast(const double *t, const uint8_t *changed, ptrdiff_t n, double inv_h, int32_t nbins,
                             int64_t *pairs, int64_t *unchanged)
{
#ifdef FRESHCORE_BLIND_AVX2
    if (fc_simd_level >= 1) {
        fc_m6_fast_avx2(t, changed, n, inv_h, nbins, pairs, unchanged);
        return 1;
    }
#endif
    (void)t, (void)changed, (void)n, (void)inv_h, (void)nbins, (void)pairs, (void)unchanged;
    return 0;
}

#endif /* FRESHCORE_BLIND_SIMD_H */
