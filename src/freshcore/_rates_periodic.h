/* The periodic pass of freshcore._rates (``_periodic_pass``) on vectors of pages.
 *
 * For pages i < n (b_i = sqrt(Delta_i/mu_i), the multiplier's u = L^-1/2): page i is crawled iff
 * u > b_i, at the rate v_i = Delta_i / x_i clipped to [lo_i, hi_i], with
 *     x_i = -1 - W-1(-(1 - c_i)/e),   c_i = (b_i/u)^2,   1 - c_i = (u - b_i)(u + b_i)/u^2,
 * the x > 0 with R^1(x) = 1 - e^-x (1 + x) = c; and the unclipped pages add
 *     u dv/du = v a,   a = 2 c (1 + x)/(x^2 (1 - c)),   d^2 v/d(log u)^2 = v a (a (3 - x) - 2)
 * to the derivatives.  freshcore_periodic_pass(b, d, lo, hi, lo0, hi0, u, wnear, out, n, &sums) writes
 * v to out (unless out is NULL; lo/hi NULL: lo0/hi0 for every page) and adds to the Neumaier pairs of
 * ``sums`` the totals of v, of u dv/du, and over the pages with u - b >= wnear u (far from their
 * threshold, for the search's model steps) of u dv/du and d^2 v/d(log u)^2: plain sums within blocks
 * of 32 pages (eight logical lanes, combined in a fixed order), compensated across blocks, as the
 * module's other sums.
 *
 * Why not the scalar loop over _core's Lambert W (``residual1_inverse``): that costs 25-30 ns a page
 * (two calls of libm's log, a piecewise guess chosen by branches that the data make unpredictable, the
 * crawled/not-crawled branch likewise), and numpy's vectorised log1p beat it at 10^4 pages
 * (bench/bench_rates.py).  Here every page takes the same branch-free arithmetic, lane by lane:
 *
 * - t = -log(1 - c), as -log1p(-c) from c where c < 1/2 (c is accurate, 1 - c rounded is not: the
 *   rounding is corrected) and as -log of the accurate 1 - c above;
 * - c < 0.005 (the series region of _core's lambertw_shifted): x = the 16-term branch-point series
 *   in p = sqrt(2c) = sqrt(2) b/u, exact to rounding;
 * - else the guess x ~ N(s)/D(s), s = sqrt(t), a minimax rational of degrees 6 and 4 within 2.3e-10
 *   (0.0045 <= t <= 40; the pass has t < 37 since 1 - c >= 2^-53 where u > b), and one Newton step
 *   on f(x) = x - log1p(x) - t (the residual log(z/w) - w of _core's Fritsch iteration with
 *   w = -1 - x, z = -(1 - c)/e), which leaves 0.5 (2.3e-10)^2 relative;
 * - log is fdlibm's algorithm (e_log.c: reduction to [sqrt(2)/2, sqrt(2)), the degree-14 odd
 *   minimax in s = f/(2 + f); error below one ulp) without its branches, for positive normal
 *   arguments; log1p(y) = log(1 + y) + (y - ((1 + y) - 1))/(1 + y).
 * Measured on the AMD EPYC (Zen 5) VM of issue 16, 10^4 uniform pages (min of 300 passes, load ~5):
 * 7.8 ns a page with AVX-512, 14.4 with AVX2, 31 at the SSE2 baseline (the scalar loop: 25-30).
 *
 * Versions: _rates_periodic_body.h is compiled once per instruction set (baseline, AVX2, AVX-512,
 * under `#pragma GCC target`), with vectors of its native width (2, 4, 8 doubles); a group of eight
 * pages is 8/width vectors, each with its own sums, so that every version does the same IEEE
 * operations on the same pages and adds them in the same order: the same bits
 * (-ffp-contract=off in setup.py: no fused multiply-add).  freshcore_periodic_set_level picks the
 * widest version the CPU runs at import.  Clang and non-x86 GCC build the baseline version only;
 * where the vector extension is missing (MSVC) or FRESHCORE_NO_SIMD is set, FRESHCORE_PERIODIC_VEC is
 * undefined and _rates.pyx keeps its scalar loop (accurate to ~2e-14, not the same bits).
 *
 * Accuracy of x (tests/test_rates_periodic_pass.py, against mpmath): below 2e-15 relative from c -> 0
 * to c -> 1 (the worst, ~9e-16, around c = 0.008, where f cancels: x ~ 0.1); the scalar loop's is
 * 2.4e-14 there.
 */
#ifndef FRESHCORE_RATES_PERIODIC_H
#define FRESHCORE_RATES_PERIODIC_H

#include <stddef.h>
#include <string.h>

#include "_static.h" /* FRESHCORE_STATIC */

/* The pass's totals as Neumaier pairs (value, compensation): the rates (s), u dS/du over the unclipped
 * pages (y), and over those of them far from their threshold (|b - u| >= wnear u) u dS/du (yf) and
 * d^2 S/d(log u)^2 (yff).  The caller zeroes them and adds each pair. */
typedef struct {
    double s, sc, y, yc, yf, yfc, yff, yffc;
} freshcore_periodic_sums;


#if (defined(__GNUC__) || defined(__clang__)) && !defined(FRESHCORE_NO_SIMD)
#define FRESHCORE_PERIODIC_VEC 1
#if defined(__x86_64__) && !defined(__clang__)
#define FRESHCORE_PERIODIC_DISPATCH 1 /* (GCC's `#pragma GCC target`; Clang builds the baseline only) */
#endif

#define FRESHCORE_PER_INLINE static inline __attribute__((always_inline, unused))
#if defined(__SSE2__)
#include <immintrin.h>
#endif


/* fdlibm's log (e_log.c): the coefficients of R(s^2) and ln 2 split in two */
#define FC_LG1 6.666666666666735130e-01
#define FC_LG2 3.999999999940941908e-01
#define FC_LG3 2.857142874366239149e-01
#define FC_LG4 2.222219843214978396e-01
#define FC_LG5 1.818357216161805012e-01
#define FC_LG6 1.531383769920937332e-01
#define FC_LG7 1.479819860511658591e-01
#define FC_LN2_HI 6.93147180369123816490e-01
#define FC_LN2_LO 1.90821492927058770002e-10
/* 1.5 * 2^52: (bits of it) + k, as a double, minus it, is the integer k for |k| < 2^51 */
#define FC_MAGIC 6755399441055744.0
#define FC_MAGIC_BITS 0x4338000000000000ULL

#define FC_SUFFIX _0
#define FC_W 2
#include "_rates_periodic_body.h"
#undef FC_SUFFIX
#undef FC_W
#ifdef FRESHCORE_PERIODIC_DISPATCH
#pragma GCC push_options
#pragma GCC target("avx2")
#define FC_SUFFIX _1
#define FC_W 4
#include "_rates_periodic_body.h"
#undef FC_SUFFIX
#undef FC_W
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl")
#define FC_SUFFIX _2
#define FC_W 8
#include "_rates_periodic_body.h"
#undef FC_SUFFIX
#undef FC_W
#pragma GCC pop_options
#endif

typedef void (*freshcore_periodic_pass_fn)(const double*, const double*, const double*, const double*, double,
                                           double, double, double, double*, ptrdiff_t, freshcore_periodic_sums*);
typedef void (*freshcore_periodic_x_fn)(const double*, double*, ptrdiff_t);

/* The version in use (freshcore_periodic_set_level sets them; the baseline until then). */
FRESHCORE_STATIC freshcore_periodic_pass_fn freshcore_periodic_pass = freshcore_periodic_pass_0;
FRESHCORE_STATIC freshcore_periodic_x_fn freshcore_periodic_x = freshcore_periodic_x_0;

#else /* no vector kernel: _rates.pyx runs its scalar loop (level -1) and never calls these */
#define freshcore_periodic_pass(...) ((void)0)
#define freshcore_periodic_x(...) ((void)0)
#endif /* vector extension */

/* The widest version this CPU and OS run: 2 (AVX-512), 1 (AVX2), 0 (baseline), -1 (no vector kernel). */
FRESHCORE_STATIC int freshcore_periodic_max_level(void) {
#ifdef FRESHCORE_PERIODIC_VEC
#ifdef FRESHCORE_PERIODIC_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return 2;
    if (__builtin_cpu_supports("avx2")) return 1;
#endif
    return 0;
#else
    return -1;
#endif
}

/* Use version min(level, max level) (at least 0 where there is a vector kernel); return the level set. */
FRESHCORE_STATIC int freshcore_periodic_set_level(int level) {
    int top = freshcore_periodic_max_level();
    if (top < 0) return -1;
    if (level > top) level = top;
    if (level < 0) level = 0;
#ifdef FRESHCORE_PERIODIC_VEC
    freshcore_periodic_pass = freshcore_periodic_pass_0;
    freshcore_periodic_x = freshcore_periodic_x_0;
#ifdef FRESHCORE_PERIODIC_DISPATCH
    if (level == 1) {
        freshcore_periodic_pass = freshcore_periodic_pass_1;
        freshcore_periodic_x = freshcore_periodic_x_1;
    } else if (level == 2) {
        freshcore_periodic_pass = freshcore_periodic_pass_2;
        freshcore_periodic_x = freshcore_periodic_x_2;
    }
#endif
#endif
    return level;
}

#endif /* FRESHCORE_RATES_PERIODIC_H */
