/* The per-step arithmetic of the online change-rate estimators and their full-update loops, for
 * freshcore._estimation (which explains the estimators and the regimes of the batches).
 *
 * - freshcore_sa_step / freshcore_sam_step: one SA / SAM step of one page (eqs. (2) and (3) of
 *   Avrachenkov et al. (2022)).  The streaming estimators and every batch kernel call these two, so
 *   streaming and batched results are the same bits.
 * - freshcore_sa_block / freshcore_sam_block: the step of n consecutive pages that share k (so the
 *   step sizes), the rate of page i p[i * ps] (ps = 0: one rate; ps = 1: one per page).
 * - freshcore_count_block: the common-rate Naive/LLN update of n consecutive pages that all had
 *   k = k1 - 1: n1[i] += c[i] and out[i] = p n1 / k1 (naive) or p n1 / (a + (k1 - n1)).
 *   0 <= n1 <= k1 < 2^52 makes freshcore_u52_to_double exact, so these are the bits of (double)n1.
 *   freshcore_count32_block: the same numbers from 32-bit counts n1 (k1 < 2^32).
 * None of them touches k: the batches keep it elsewhere (one shared number, or a base plus a
 * per-page offset that a full update leaves alone).
 *
 * These loops run at memory speed once the state is out of the caches, but in the caches they are
 * bound by arithmetic (the LLN loop by its division): there the 4 and 8 doubles per instruction of
 * AVX2 and AVX-512 are 1.5 to 3 times faster than SSE2, the x86-64 baseline the module is compiled for
 * (measured at 10^5 pages on the 2-core AMD EPYC VM of issue 16).
 * So on x86-64 with GCC or Clang each block function is compiled three times (baseline, AVX2,
 * AVX-512) from one always-inline body, and freshcore_est_set_level picks the version the CPU (and the
 * OS, which must save the wider registers) supports, at import.  Additions, multiplications,
 * divisions and the byte -> double conversions are exact IEEE operations at any vector width, and
 * -ffp-contract=off (setup.py) forbids fused multiply-adds in every version, so the three give the same
 * bits (tests/test_estimation_kregimes.py runs each on the machine it has).  Elsewhere (other CPUs, MSVC)
 * or with FRESHCORE_NO_SIMD only the baseline version is compiled.
 */
#ifndef FRESHCORE_ESTIMATION_KERNELS_H
#define FRESHCORE_ESTIMATION_KERNELS_H

#include <stddef.h>

#include "_float_bits.h"  /* freshcore_u52_to_double */
#include "_static.h"      /* FRESHCORE_STATIC */

#if defined(__GNUC__) || defined(__clang__)
#define FRESHCORE_EST_INLINE static inline __attribute__((always_inline, unused))
#define FRESHCORE_RESTRICT __restrict__
#else
#define FRESHCORE_EST_INLINE static inline
#define FRESHCORE_RESTRICT
#endif

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(FRESHCORE_NO_SIMD)
#define FRESHCORE_EST_DISPATCH 1
#define FRESHCORE_EST_AVX2 __attribute__((target("avx2")))
#define FRESHCORE_EST_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl")))
#endif

/* y_{k+1} = y_k + eta_k [I_{k+1} (y_k + p) - y_k], eq. (2) */
FRESHCORE_EST_INLINE double freshcore_sa_step(double y, double changed, double p, double eta_k) {
    return y + eta_k * (changed * (y + p) - y);
}

/* z_{k+1} = z_k + eta_k [I_{k+1} (z_k + p) - z_k] + zeta_k (z_k - z_{k-1}), eq. (3) */
FRESHCORE_EST_INLINE double freshcore_sam_step(double z, double z_prev, double changed, double p, double eta_k,
                                               double zeta_k) {
    return z + eta_k * (changed * (z + p) - z) + zeta_k * (z - z_prev);
}

/* The bodies: one loop per case (one rate or one per page), each simple enough for the compiler to
 * vectorise. */
FRESHCORE_EST_INLINE void freshcore_sa_block_body(double* FRESHCORE_RESTRICT y,
                                                  const unsigned char* FRESHCORE_RESTRICT c,
                                                  const double* FRESHCORE_RESTRICT p, ptrdiff_t ps, ptrdiff_t n,
                                                  double eta_k) {
    ptrdiff_t i;
    double pv = p[0];
    if (ps == 0) {
        for (i = 0; i < n; i++) y[i] = freshcore_sa_step(y[i], (double)c[i], pv, eta_k);
    } else {
        for (i = 0; i < n; i++) y[i] = freshcore_sa_step(y[i], (double)c[i], p[i], eta_k);
    }
}

FRESHCORE_EST_INLINE void freshcore_sam_block_body(double* FRESHCORE_RESTRICT z, double* FRESHCORE_RESTRICT zp,
                                                   const unsigned char* FRESHCORE_RESTRICT c,
                                                   const double* FRESHCORE_RESTRICT p, ptrdiff_t ps, ptrdiff_t n,
                                                   double eta_k, double zeta_k) {
    ptrdiff_t i;
    double zi, pv = p[0];
    if (ps == 0) {
        for (i = 0; i < n; i++) {
            zi = z[i];
            z[i] = freshcore_sam_step(zi, zp[i], (double)c[i], pv, eta_k, zeta_k);
            zp[i] = zi;
        }
    } else {
        for (i = 0; i < n; i++) {
            zi = z[i];
            z[i] = freshcore_sam_step(zi, zp[i], (double)c[i], p[i], eta_k, zeta_k);
            zp[i] = zi;
        }
    }
}

FRESHCORE_EST_INLINE void freshcore_count_block_body(long long* FRESHCORE_RESTRICT n1, double* FRESHCORE_RESTRICT out,
                                                     const unsigned char* FRESHCORE_RESTRICT c, ptrdiff_t n,
                                                     long long k1, double p, double a, int naive) {
    ptrdiff_t i;
    long long nn;
    double dk = (double)k1;
    if (naive) {
        for (i = 0; i < n; i++) {
            nn = n1[i] + c[i];
            n1[i] = nn;
            out[i] = (p * freshcore_u52_to_double(nn)) / dk;
        }
    } else {
        for (i = 0; i < n; i++) {
            nn = n1[i] + c[i];
            n1[i] = nn;
            out[i] = (p * freshcore_u52_to_double(nn)) / (a + freshcore_u52_to_double(k1 - nn));
        }
    }
}

/* The same with 32-bit counts (the shared-k batches keep n1 so while k < 2^32: n1 <= k fits, exactly). */
FRESHCORE_EST_INLINE void freshcore_count32_block_body(unsigned int* FRESHCORE_RESTRICT n1,
                                                       double* FRESHCORE_RESTRICT out,
                                                       const unsigned char* FRESHCORE_RESTRICT c, ptrdiff_t n,
                                                       long long k1, double p, double a, int naive) {
    ptrdiff_t i;
    long long nn;
    double dk = (double)k1;
    if (naive) {
        for (i = 0; i < n; i++) {
            nn = (long long)(n1[i] + c[i]);
            n1[i] = (unsigned int)nn;
            out[i] = (p * freshcore_u52_to_double(nn)) / dk;
        }
    } else {
        for (i = 0; i < n; i++) {
            nn = (long long)(n1[i] + c[i]);
            n1[i] = (unsigned int)nn;
            out[i] = (p * freshcore_u52_to_double(nn)) / (a + freshcore_u52_to_double(k1 - nn));
        }
    }
}

/* The versions: _0 baseline, _1 AVX2, _2 AVX-512 (the same bodies). */
#define FRESHCORE_EST_VERSIONS(ATTR, SUFFIX)                                                                      \
    ATTR FRESHCORE_STATIC void freshcore_sa_block##SUFFIX(double* y, const unsigned char* c, const double* p,     \
                                                          ptrdiff_t ps, ptrdiff_t n, double eta_k) {              \
        freshcore_sa_block_body(y, c, p, ps, n, eta_k);                                                           \
    }                                                                                                             \
    ATTR FRESHCORE_STATIC void freshcore_sam_block##SUFFIX(double* z, double* zp, const unsigned char* c,         \
                                                           const double* p, ptrdiff_t ps, ptrdiff_t n,            \
                                                           double eta_k, double zeta_k) {                         \
        freshcore_sam_block_body(z, zp, c, p, ps, n, eta_k, zeta_k);                                              \
    }                                                                                                             \
    ATTR FRESHCORE_STATIC void freshcore_count_block##SUFFIX(long long* n1, double* out, const unsigned char* c,  \
                                                             ptrdiff_t n, long long k1, double p, double a,       \
                                                             int naive) {                                         \
        freshcore_count_block_body(n1, out, c, n, k1, p, a, naive);                                               \
    }                                                                                                             \
    ATTR FRESHCORE_STATIC void freshcore_count32_block##SUFFIX(unsigned int* n1, double* out,                     \
                                                               const unsigned char* c, ptrdiff_t n, long long k1, \
                                                               double p, double a, int naive) {                   \
        freshcore_count32_block_body(n1, out, c, n, k1, p, a, naive);                                             \
    }

#define FRESHCORE_EST_NO_ATTR
FRESHCORE_EST_VERSIONS(FRESHCORE_EST_NO_ATTR, _0)
#ifdef FRESHCORE_EST_DISPATCH
FRESHCORE_EST_VERSIONS(FRESHCORE_EST_AVX2, _1)
FRESHCORE_EST_VERSIONS(FRESHCORE_EST_AVX512, _2)
#endif

typedef void (*freshcore_sa_block_fn)(double*, const unsigned char*, const double*, ptrdiff_t, ptrdiff_t, double);
typedef void (*freshcore_sam_block_fn)(double*, double*, const unsigned char*, const double*, ptrdiff_t, ptrdiff_t,
                                       double, double);
typedef void (*freshcore_count_block_fn)(long long*, double*, const unsigned char*, ptrdiff_t, long long, double,
                                         double, int);
typedef void (*freshcore_count32_block_fn)(unsigned int*, double*, const unsigned char*, ptrdiff_t, long long,
                                           double, double, int);

/* The version in use (freshcore_est_set_level sets them; the baseline until then). */
FRESHCORE_STATIC freshcore_sa_block_fn freshcore_sa_block = freshcore_sa_block_0;
FRESHCORE_STATIC freshcore_sam_block_fn freshcore_sam_block = freshcore_sam_block_0;
FRESHCORE_STATIC freshcore_count_block_fn freshcore_count_block = freshcore_count_block_0;
FRESHCORE_STATIC freshcore_count32_block_fn freshcore_count32_block = freshcore_count32_block_0;

/* The widest version this CPU and OS run: 2 (AVX-512), 1 (AVX2) or 0 (baseline). */
FRESHCORE_STATIC int freshcore_est_max_level(void) {
#ifdef FRESHCORE_EST_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return 2;
    if (__builtin_cpu_supports("avx2")) return 1;
#endif
    return 0;
}

/* Use version min(level, freshcore_est_max_level()); return the level set. */
FRESHCORE_STATIC int freshcore_est_set_level(int level) {
    int top = freshcore_est_max_level();
    if (level > top) level = top;
    if (level < 0) level = 0;
    freshcore_sa_block = freshcore_sa_block_0;
    freshcore_sam_block = freshcore_sam_block_0;
    freshcore_count_block = freshcore_count_block_0;
    freshcore_count32_block = freshcore_count32_block_0;
#ifdef FRESHCORE_EST_DISPATCH
    if (level == 1) {
        freshcore_sa_block = freshcore_sa_block_1;
        freshcore_sam_block = freshcore_sam_block_1;
        freshcore_count_block = freshcore_count_block_1;
        freshcore_count32_block = freshcore_count32_block_1;
    } else if (level == 2) {
        freshcore_sa_block = freshcore_sa_block_2;
        freshcore_sam_block = freshcore_sam_block_2;
        freshcore_count_block = freshcore_count_block_2;
        freshcore_count32_block = freshcore_count32_block_2;
    }
#endif
    return level;
}

#endif /* FRESHCORE_ESTIMATION_KERNELS_H */
