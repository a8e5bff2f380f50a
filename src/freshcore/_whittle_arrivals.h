/* The utilities U of the stochastic model (eq. (23) of Avrachenkov and Borkar 2018) for many periods, replicas
 * and sources: the kernel of freshcore._whittle (``arrivals_kernel``).
 *
 * U_i(k) = xi_i sum over the period's Poisson(Lambda_i T) arrivals of e^{-mu_i T w}, w ~ U[0, 1) the arrival's
 * age in periods (its epoch uniform in the period), the utility xi_i or an exponential of mean xi_i.
 *
 * Random numbers: each replica has eight xoshiro256** streams (Blackman and Vigna), its 32 state words laid out
 * word by word (words[w * 8 + lane]) so that one AVX-512 register holds one word of all eight.  A replica's
 * numbers are read period by period, source by source, whatever the caller does with them, so runs that share
 * a seed share their arrivals (common random numbers) and blocks of any length give the same draws:
 *   - the count of a source's arrivals: Poisson by multiplying uniforms below a mean of 10, by Hoermann's
 *     PTRS from 10 (as numpy), from stream 0;
 *   - with a table (mu T <= 8; ``tab`` = e^{-mu T j/256}, j < 256, made once by the caller) the epochs come
 *     eight at a time, one from each stream: 64 random bits b, j = b >> 56, f = ((b >> 11) mod 2^45) 2^-53
 *     (w = j/256 + f), e^{-mu T w} = tab[j] e^{-mu T f} with e^{-t}, t < 1/32, by its Taylor polynomial to
 *     t^7 (remainder < 2.2e-17); lane sums ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), then the last
 *     (count mod 8) epochs from stream 0 added one by one, after them;
 *   - without a table, or with exponential utilities, every epoch (and utility) from stream 0, e^{-mu T w} by
 *     libm's exp (and -log1p(-v) for the exponential).
 * The AVX-512F path (chosen at run time) and the scalar loops do the same operations in the same order (no
 * fused multiply-add): the same bits.  FRESHCORE_NO_SIMD or FRESHCORE_PORTABLE keeps the scalar loops.
 */
#ifndef FRESHCORE_WHITTLE_ARRIVALS_H
#define FRESHCORE_WHITTLE_ARRIVALS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_static.h"  /* FRESHCORE_STATIC */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FRESHCORE_NO_SIMD) && !defined(FRESHCORE_PORTABLE)
#include <immintrin.h>
#define FRESHCORE_ARRIVALS_AVX512 1
#endif

#define FC_LANES 8

static inline uint64_t fc_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* The next 64 bits of stream ``lane`` of the replica whose words are ``s``. */
static inline uint64_t fc_next(uint64_t* s, int lane) {
    uint64_t* s0 = s + lane;
    uint64_t* s1 = s + FC_LANES + lane;
    uint64_t* s2 = s + 2 * FC_LANES + lane;
    uint64_t* s3 = s + 3 * FC_LANES + lane;
    uint64_t result = fc_rotl(*s1 * 5, 7) * 9;
    uint64_t t = *s1 << 17;
    *s2 ^= *s0;
    *s3 ^= *s1;
    *s1 ^= *s2;
    *s0 ^= *s3;
    *s2 ^= t;
    *s3 = fc_rotl(*s3, 45);
    return result;
}

static inline double fc_uniform(uint64_t* s) { return (double)(fc_next(s, 0) >> 11) * 1.1102230246251565e-16; }

static long fc_poisson(uint64_t* s, double lam) {
    if (!(lam > 0.0)) {
        return 0;
    }
    if (lam < 10.0) {
        double limit = exp(-lam), p = 1.0;
        long k = -1;
        for (;;) {
            k += 1;
            p *= fc_uniform(s);
            if (p <= limit) {
                return k;
            }
        }
    }
    double slam = sqrt(lam), loglam = log(lam);
    double b = 0.931 + 2.53 * slam;
    double a = -0.059 + 0.02483 * b;
    double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    double vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double uu = fc_uniform(s) - 0.5;
        double v = fc_uniform(s);
        double us = 0.5 - fabs(uu);
        long k = (long)floor((2.0 * a / us + b) * uu + lam + 0.43);
        if (us >= 0.07 && v <= vr) {
            return k;
        }
        if (k < 0 || (us < 0.013 && v > us)) {
            continue;
        }
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0)) {
            return k;
        }
    }
}

/* e^{-t}, 0 <= t < 1/32: Taylor to t^7, Horner. */
static inline double fc_exp_minus_small(double t) {
    return 1.0 - t * (1.0 - t * (0.5 - t * (1.0 / 6.0 - t * (1.0 / 24.0 - t * (1.0 / 120.0 - t * (
        1.0 / 720.0 - t * (1.0 / 5040.0)))))));
}

static inline double fc_discount(const double* tab, double c, uint64_t b) {
    double f = (double)((b >> 11) & ((UINT64_C(1) << 45) - 1)) * 1.1102230246251565e-16;
    return tab[b >> 56] * fc_exp_minus_small(c * f);
}

/* The sum of ``groups`` x 8 discounts, one per stream a group (scalar). */
static double fc_groups_scalar(uint64_t* s, const double* tab, double c, long groups) {
    double lane[FC_LANES] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (long g = 0; g < groups; g++) {
        for (int l = 0; l < FC_LANES; l++) {
            lane[l] += fc_discount(tab, c, fc_next(s, l));
        }
    }
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

#ifdef FRESHCORE_ARRIVALS_AVX512
#define FC_ARR_AVX512 __attribute__((target("avx512f")))

FC_ARR_AVX512 static double fc_groups_avx512(uint64_t* s, const double* tab, double c, long groups) {
    __m512i s0 = _mm512_loadu_si512((const void*)s), s1 = _mm512_loadu_si512((const void*)(s + 8));
    __m512i s2 = _mm512_loadu_si512((const void*)(s + 16)), s3 = _mm512_loadu_si512((const void*)(s + 24));
    const __m512i low45 = _mm512_set1_epi64((long long)((UINT64_C(1) << 45) - 1));
    const __m512d two52 = _mm512_set1_pd(4503599627370496.0);
    const __m512d scale = _mm512_set1_pd(1.1102230246251565e-16), vc = _mm512_set1_pd(c);
    __m512d acc = _mm512_setzero_pd();
    for (long g = 0; g < groups; g++) {
        __m512i x = _mm512_add_epi64(_mm512_slli_epi64(s1, 2), s1);                     /* s1 * 5 */
        x = _mm512_rol_epi64(x, 7);
        __m512i b = _mm512_add_epi64(_mm512_slli_epi64(x, 3), x);                       /* * 9 */
        __m512i t = _mm512_slli_epi64(s1, 17);
        s2 = _mm512_xor_si512(s2, s0);
        s3 = _mm512_xor_si512(s3, s1);
        s1 = _mm512_xor_si512(s1, s2);
        s0 = _mm512_xor_si512(s0, s3);
        s2 = _mm512_xor_si512(s2, t);
        s3 = _mm512_rol_epi64(s3, 45);
        /* f = ((b >> 11) mod 2^45) 2^-53: the 45-bit integer as a double by 2^52's bits, minus 2^52 */
        __m512i fi = _mm512_and_si512(_mm512_srli_epi64(b, 11), low45);
        __m512d f = _mm512_mul_pd(_mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(fi, _mm512_castpd_si512(two52))),
                                                two52), scale);
        __m512d tt = _mm512_mul_pd(vc, f);
        /* fc_exp_minus_small, the same order */
        __m512d p = _mm512_set1_pd(1.0 / 5040.0);
        p = _mm512_sub_pd(_mm512_set1_pd(1.0 / 720.0), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(1.0 / 120.0), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(1.0 / 24.0), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(1.0 / 6.0), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(0.5), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(1.0), _mm512_mul_pd(tt, p));
        p = _mm512_sub_pd(_mm512_set1_pd(1.0), _mm512_mul_pd(tt, p));
        __m512d e = _mm512_i64gather_pd(_mm512_srli_epi64(b, 56), tab, 8);
        acc = _mm512_add_pd(acc, _mm512_mul_pd(e, p));
    }
    _mm512_storeu_si512((void*)s, s0);
    _mm512_storeu_si512((void*)(s + 8), s1);
    _mm512_storeu_si512((void*)(s + 16), s2);
    _mm512_storeu_si512((void*)(s + 24), s3);
    double lane[FC_LANES];
    _mm512_storeu_pd(lane, acc);
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}
#endif

static int freshcore_arrivals_simd = -1;

/* 1 where the AVX-512 path runs, 0 otherwise; ``level`` 0 forces the scalar loops, -1 the best available. */
FRESHCORE_STATIC int freshcore_set_arrivals_simd(int level) {
    int best = 0;
#ifdef FRESHCORE_ARRIVALS_AVX512
    __builtin_cpu_init();
    best = __builtin_cpu_supports("avx512f") ? 1 : 0;
#endif
    freshcore_arrivals_simd = level < 0 || level > best ? best : level;
    return freshcore_arrivals_simd;
}

/* out[(k reps + r) n + i] = U_i of period k in replica r (``streams`` + 32 r: its words); counts likewise
 * (may be NULL); tables + 256 slot[i] for the sources with slot[i] >= 0. */
FRESHCORE_STATIC void freshcore_arrivals(uint64_t* streams, const double* lam_t, const double* mut,
                                         const double* xi, int exponential, const double* tables,
                                         const long* slot, double* out, long* counts, ptrdiff_t steps,
                                         ptrdiff_t reps, ptrdiff_t n) {
    if (freshcore_arrivals_simd < 0) {
        freshcore_set_arrivals_simd(-1);
    }
    for (ptrdiff_t k = 0; k < steps; k++) {
        for (ptrdiff_t r = 0; r < reps; r++) {
            uint64_t* s = streams + 32 * r;
            for (ptrdiff_t i = 0; i < n; i++) {
                long m = fc_poisson(s, lam_t[i]);
                double c = mut[i], acc = 0.0;
                if (exponential) {
                    for (long j = 0; j < m; j++) {
                        double e = -log1p(-fc_uniform(s));
                        acc += e * exp(-c * fc_uniform(s));
                    }
                } else if (slot[i] >= 0) {
                    const double* tab = tables + 256 * slot[i];
                    long groups = m / FC_LANES;
#ifdef FRESHCORE_ARRIVALS_AVX512
                    if (freshcore_arrivals_simd == 1) {
                        acc = fc_groups_avx512(s, tab, c, groups);
                    } else {
                        acc = fc_groups_scalar(s, tab, c, groups);
                    }
#else
                    acc = fc_groups_scalar(s, tab, c, groups);
#endif
                    for (long j = 0; j < m - FC_LANES * groups; j++) {
                        acc += fc_discount(tab, c, fc_next(s, 0));
                    }
                } else {
                    for (long j = 0; j < m; j++) {
                        acc += exp(-c * fc_uniform(s));
                    }
                }
                ptrdiff_t at = (k * reps + r) * n + i;
                out[at] = xi[i] * acc;
                if (counts != NULL) {
                    counts[at] = m;
                }
            }
        }
    }
}

#endif
