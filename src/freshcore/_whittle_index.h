/* The Whittle index of Theorem 1 (Avrachenkov and Borkar 2018) for many (source, state) pairs, without calls
 * of libm: the batch kernel of freshcore._whittle (``index_kernel``) and the scheduler's one-source path
 * (``source_index``) both come here, so every path gives the same bits.
 *
 * Per pair, with y = u* - x (see _whittle.pyx):
 *     x >= u*:  gamma = x / C
 *     else:     eta = ceil(log(u* / y) (1 / (mu T))),  gamma = [-u* expm1(-mu T eta) - eta (1 - alpha) y] / C
 * (1 / (mu T) precomputed by the model).  log and expm1 are this file's own, branch-free, so that eight pairs
 * go through one AVX-512 register, with one division (u* / y) a pair:
 *   - log(v), v >= 1: v = 2^e m with m in [1, 2), c_j = 1 + (j + 1/2)/64 the centre of m's 64th j (its top six
 *     bits), log m = log c_j + log1p(r), r = m (1/c_j) - 1, |r| < 1/128, by its Taylor series to r^8
 *     (remainder < 1e-20; Estrin's scheme, as the other polynomials: short dependency chains);
 *     log c_j and 1/c_j from tables made at import; e ln 2 in two parts.  Its error
 *     (about an ulp) only moves eta when log(u* / y)/(mu T) is that close to an integer, i.e. x within a few ulp
 *     of a grid point x_n = u* (1 - alpha^n), where gamma's two expressions agree (gamma is continuous): the
 *     result moves by less than an ulp of u* / C.
 *   - expm1(z), z <= 0: k = round(z / ln 2), r = z - k ln 2 (two parts; r = z exactly when k = 0, i.e.
 *     |z| < ln2/2), e^r - 1 by its Taylor series to r^13 (remainder < 1e-17 relative), then for k != 0
 *     (e^r - 1 + 1) 2^k - 1 with 2^k applied in two halves so that results down to the subnormals come out
 *     (z is clamped at -745.2: 0).
 * No fused multiply-add is used (the build has -ffp-contract=off): the scalar loop and the vector lanes give
 * the same bits.  The vector path (target attribute, chosen at run time with __builtin_cpu_supports) runs
 * eight pairs at a time where the processor has AVX-512F; FRESHCORE_NO_SIMD or FRESHCORE_PORTABLE keeps the
 * scalar path everywhere.
 */
#ifndef FRESHCORE_WHITTLE_INDEX_H
#define FRESHCORE_WHITTLE_INDEX_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_static.h"  /* FRESHCORE_STATIC */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FRESHCORE_NO_SIMD) && !defined(FRESHCORE_PORTABLE)
#include <immintrin.h>
#define FRESHCORE_WHITTLE_AVX512 1
#endif

#define FC_LN2_HI 6.93147180369123816490e-01
#define FC_LN2_LO 1.90821492927058770002e-10
#define FC_LOG2E 1.44269504088896338700e+00
#define FC_HALF_LN2 0.34657359027997264
#define FC_EXP_MIN (-745.2)
#define FC_SQRT2 1.4142135623730951

static inline double fc_bits_to_double(uint64_t b) { double d; memcpy(&d, &b, sizeof d); return d; }
static inline uint64_t fc_double_to_bits(double d) { uint64_t b; memcpy(&b, &d, sizeof b); return b; }

/* e^r - 1 for |r| <= ln2/2 + tiny: r q(r), q the Taylor polynomial of degree 12 of (e^r - 1)/r, by Estrin's
 * scheme (a short dependency chain: the vector path's latency is what it costs). */
#define FC_E1 1.0
#define FC_E2 0.5
#define FC_E3 (1.0 / 6.0)
#define FC_E4 (1.0 / 24.0)
#define FC_E5 (1.0 / 120.0)
#define FC_E6 (1.0 / 720.0)
#define FC_E7 (1.0 / 5040.0)
#define FC_E8 (1.0 / 40320.0)
#define FC_E9 (1.0 / 362880.0)
#define FC_E10 (1.0 / 3628800.0)
#define FC_E11 (1.0 / 39916800.0)
#define FC_E12 (1.0 / 479001600.0)
#define FC_E13 (1.0 / 6227020800.0)
static inline double fc_expm1_poly(double r) {
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double a0 = FC_E1 + FC_E2 * r, a1 = FC_E3 + FC_E4 * r, a2 = FC_E5 + FC_E6 * r, a3 = FC_E7 + FC_E8 * r;
    double a4 = FC_E9 + FC_E10 * r, a5 = FC_E11 + FC_E12 * r;
    double b0 = a0 + a1 * r2, b1 = a2 + a3 * r2, b2 = a4 + a5 * r2;
    double d0 = b0 + b1 * r4, d1 = b2 + FC_E13 * r4;
    return r * (d0 + d1 * r8);
}

/* expm1(z) for z <= 0 (see the top). */
static inline double fc_expm1_neg(double z) {
    double zc = z < FC_EXP_MIN ? FC_EXP_MIN : z;
    double kd = nearbyint(zc * FC_LOG2E);
    double r = (zc - kd * FC_LN2_HI) - kd * FC_LN2_LO;
    double p = fc_expm1_poly(r);
    int64_t k = (int64_t)kd;
    int64_t k1 = k >> 1, k2 = k - k1;
    double e = (p + 1.0) * fc_bits_to_double((uint64_t)(k1 + 1023) << 52)
               * fc_bits_to_double((uint64_t)(k2 + 1023) << 52);
    return kd == 0.0 ? p : e - 1.0;
}

/* log c_j and 1/c_j, c_j = 1 + (j + 1/2)/64 (filled by freshcore_set_whittle_simd, at import). */
static double fc_log_c[64], fc_inv_c[64];

static void fc_log_tables(void) {
    for (int j = 0; j < 64; j++) {
        double c = 1.0 + (j + 0.5) / 64.0;
        fc_log_c[j] = log(c);
        fc_inv_c[j] = 1.0 / c;
    }
}

/* log1p(r) for |r| < 1/128: r q(r), q the Taylor polynomial of degree 7 of log1p(r)/r, by Estrin's scheme. */
static inline double fc_log1p_small(double r) {
    double r2 = r * r, r4 = r2 * r2;
    double a0 = 1.0 + (-0.5) * r, a1 = (1.0 / 3.0) + (-0.25) * r, a2 = 0.2 + (-1.0 / 6.0) * r;
    double a3 = (1.0 / 7.0) + (-0.125) * r;
    double b0 = a0 + a1 * r2, b1 = a2 + a3 * r2;
    return r * (b0 + b1 * r4);
}

/* log(v) for finite v >= 1 (see the top). */
static inline double fc_log_ge1(double v) {
    uint64_t b = fc_double_to_bits(v);
    double e = (double)(int64_t)((b >> 52) - 1023);
    double m = fc_bits_to_double((b & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);
    int j = (int)((b >> 46) & 63);
    double r = m * fc_inv_c[j] - 1.0;
    return e * FC_LN2_HI + ((e * FC_LN2_LO + fc_log_c[j]) + fc_log1p_small(r));
}

/* The index of one source in state x >= 0. */
static inline double freshcore_whittle_index_one(double x, double ustar, double mut, double inv_mut, double om,
                                                 double invc) {
    double y = ustar - x;
    if (!(y > 0.0)) {
        return x * invc;
    }
    double eta = ceil(fc_log_ge1(ustar / y) * inv_mut);
    return (-ustar * fc_expm1_neg(-mut * eta) - eta * om * y) * invc;
}

#ifdef FRESHCORE_WHITTLE_AVX512
#define FC_AVX512 __attribute__((target("avx512f")))

#define FC_SET(c) _mm512_set1_pd(c)
#define FC_ADD _mm512_add_pd
#define FC_MUL _mm512_mul_pd

/* fc_expm1_poly and fc_log1p_small lane by lane: the same operations in the same order. */
FC_AVX512 static inline __m512d fc_expm1_poly512(__m512d r) {
    __m512d r2 = FC_MUL(r, r), r4 = FC_MUL(r2, r2), r8 = FC_MUL(r4, r4);
    __m512d a0 = FC_ADD(FC_SET(FC_E1), FC_MUL(FC_SET(FC_E2), r)), a1 = FC_ADD(FC_SET(FC_E3), FC_MUL(FC_SET(FC_E4), r));
    __m512d a2 = FC_ADD(FC_SET(FC_E5), FC_MUL(FC_SET(FC_E6), r)), a3 = FC_ADD(FC_SET(FC_E7), FC_MUL(FC_SET(FC_E8), r));
    __m512d a4 = FC_ADD(FC_SET(FC_E9), FC_MUL(FC_SET(FC_E10), r));
    __m512d a5 = FC_ADD(FC_SET(FC_E11), FC_MUL(FC_SET(FC_E12), r));
    __m512d b0 = FC_ADD(a0, FC_MUL(a1, r2)), b1 = FC_ADD(a2, FC_MUL(a3, r2)), b2 = FC_ADD(a4, FC_MUL(a5, r2));
    __m512d d0 = FC_ADD(b0, FC_MUL(b1, r4)), d1 = FC_ADD(b2, FC_MUL(FC_SET(FC_E13), r4));
    return FC_MUL(r, FC_ADD(d0, FC_MUL(d1, r8)));
}

FC_AVX512 static inline __m512d fc_log1p_small512(__m512d r) {
    __m512d r2 = FC_MUL(r, r), r4 = FC_MUL(r2, r2);
    __m512d a0 = FC_ADD(FC_SET(1.0), FC_MUL(FC_SET(-0.5), r));
    __m512d a1 = FC_ADD(FC_SET(1.0 / 3.0), FC_MUL(FC_SET(-0.25), r));
    __m512d a2 = FC_ADD(FC_SET(0.2), FC_MUL(FC_SET(-1.0 / 6.0), r));
    __m512d a3 = FC_ADD(FC_SET(1.0 / 7.0), FC_MUL(FC_SET(-0.125), r));
    __m512d b0 = FC_ADD(a0, FC_MUL(a1, r2)), b1 = FC_ADD(a2, FC_MUL(a3, r2));
    return FC_MUL(r, FC_ADD(b0, FC_MUL(b1, r4)));
}

FC_AVX512 static inline __m512d fc_expm1_neg512(__m512d z) {
    const __m512d magic = _mm512_set1_pd(6755399441055744.0);  /* 1.5 2^52: k + magic holds k in its low bits */
    __m512d zc = _mm512_max_pd(z, _mm512_set1_pd(FC_EXP_MIN));
    __m512d kd = _mm512_roundscale_pd(_mm512_mul_pd(zc, _mm512_set1_pd(FC_LOG2E)),
                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512d r = _mm512_sub_pd(_mm512_sub_pd(zc, _mm512_mul_pd(kd, _mm512_set1_pd(FC_LN2_HI))),
                              _mm512_mul_pd(kd, _mm512_set1_pd(FC_LN2_LO)));
    __m512d p = fc_expm1_poly512(r);
    __m512i k = _mm512_sub_epi64(_mm512_castpd_si512(_mm512_add_pd(kd, magic)), _mm512_castpd_si512(magic));
    __m512i k1 = _mm512_srai_epi64(k, 1), k2 = _mm512_sub_epi64(k, k1);
    const __m512i bias = _mm512_set1_epi64(1023);
    __m512d s1 = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k1, bias), 52));
    __m512d s2 = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(k2, bias), 52));
    __m512d e = _mm512_sub_pd(_mm512_mul_pd(_mm512_mul_pd(_mm512_add_pd(p, _mm512_set1_pd(1.0)), s1), s2),
                              _mm512_set1_pd(1.0));
    __mmask8 zero_k = _mm512_cmp_pd_mask(kd, _mm512_setzero_pd(), _CMP_EQ_OQ);
    return _mm512_mask_blend_pd(zero_k, e, p);
}

FC_AVX512 static inline __m512d fc_log_ge1_512(__m512d v) {
    const __m512i b = _mm512_castpd_si512(v);
    /* the biased exponent as a double: (bits >> 52) | 2^52's bits, minus 2^52 */
    const __m512d two52 = _mm512_set1_pd(4503599627370496.0);
    __m512d eb = _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(_mm512_srli_epi64(b, 52),
                                                                    _mm512_castpd_si512(two52))), two52);
    __m512d e = _mm512_sub_pd(eb, _mm512_set1_pd(1023.0));
    __m512d m = _mm512_castsi512_pd(_mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi64(0x000FFFFFFFFFFFFFLL)),
                                                    _mm512_set1_epi64(0x3FF0000000000000LL)));
    __m512i j = _mm512_and_si512(_mm512_srli_epi64(b, 46), _mm512_set1_epi64(63));
    __m512d r = _mm512_sub_pd(_mm512_mul_pd(m, _mm512_i64gather_pd(j, fc_inv_c, 8)), _mm512_set1_pd(1.0));
    __m512d head = _mm512_add_pd(_mm512_mul_pd(e, _mm512_set1_pd(FC_LN2_LO)), _mm512_i64gather_pd(j, fc_log_c, 8));
    return _mm512_add_pd(_mm512_mul_pd(e, _mm512_set1_pd(FC_LN2_HI)),
                         _mm512_add_pd(head, fc_log1p_small512(r)));
}

FC_AVX512 static void fc_index_avx512(const double* x, const double* ustar, const double* mut,
                                      const double* inv_mut, const double* om, const double* invc, double* out,
                                      ptrdiff_t n) {
    ptrdiff_t i = 0;
    const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0), two = _mm512_set1_pd(2.0);
    for (; i + 8 <= n; i += 8) {
        __m512d vx = _mm512_loadu_pd(x + i), vu = _mm512_loadu_pd(ustar + i), vm = _mm512_loadu_pd(mut + i);
        __m512d vo = _mm512_loadu_pd(om + i), vc = _mm512_loadu_pd(invc + i);
        __m512d y = _mm512_sub_pd(vu, vx);
        __mmask8 pos = _mm512_cmp_pd_mask(y, zero, _CMP_GT_OQ);
        __m512d ys = _mm512_mask_blend_pd(pos, one, y), us = _mm512_mask_blend_pd(pos, two, vu);
        __m512d eta = _mm512_roundscale_pd(_mm512_mul_pd(fc_log_ge1_512(_mm512_div_pd(us, ys)),
                                                         _mm512_loadu_pd(inv_mut + i)),
                                           _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        __m512d e1 = fc_expm1_neg512(_mm512_mul_pd(_mm512_sub_pd(zero, vm), eta));
        __m512d g = _mm512_mul_pd(_mm512_sub_pd(_mm512_mul_pd(_mm512_sub_pd(zero, vu), e1),
                                                _mm512_mul_pd(_mm512_mul_pd(eta, vo), y)), vc);
        _mm512_storeu_pd(out + i, _mm512_mask_blend_pd(pos, _mm512_mul_pd(vx, vc), g));
    }
    for (; i < n; i++) {
        out[i] = freshcore_whittle_index_one(x[i], ustar[i], mut[i], inv_mut[i], om[i], invc[i]);
    }
}
#endif

static int freshcore_whittle_simd = -1;

/* 1 where the AVX-512 path runs, 0 otherwise; ``level`` 0 forces the scalar path, -1 the best available. */
FRESHCORE_STATIC int freshcore_set_whittle_simd(int level) {
    int best = 0;
    if (fc_log_c[63] == 0.0) {
        fc_log_tables();
    }
#ifdef FRESHCORE_WHITTLE_AVX512
    __builtin_cpu_init();
    best = __builtin_cpu_supports("avx512f") ? 1 : 0;
#endif
    freshcore_whittle_simd = level < 0 || level > best ? best : level;
    return freshcore_whittle_simd;
}

/* out[k] = the index of pair k: ``rows`` rows of the n sources (parameters of length n). */
FRESHCORE_STATIC void freshcore_whittle_index(const double* x, const double* ustar, const double* mut,
                                              const double* inv_mut, const double* om, const double* invc,
                                              double* out, ptrdiff_t rows, ptrdiff_t n) {
    if (freshcore_whittle_simd < 0) {
        freshcore_set_whittle_simd(-1);
    }
    for (ptrdiff_t k = 0; k < rows; k++) {
        const double* xk = x + k * n;
        double* ok = out + k * n;
#ifdef FRESHCORE_WHITTLE_AVX512
        if (freshcore_whittle_simd == 1 && n >= 8) {
            fc_index_avx512(xk, ustar, mut, inv_mut, om, invc, ok, n);
            continue;
        }
#endif
        for (ptrdiff_t i = 0; i < n; i++) {
            ok[i] = freshcore_whittle_index_one(xk[i], ustar[i], mut[i], inv_mut[i], om[i], invc[i]);
        }
    }
}

#endif
