/* The Poisson pair series of freshcore._value (``_series_pair``) for many terms at once: the batch kernel of
 * the exact crawl value (``_series_block`` in _value.pyx) gathers the terms of one pass over its series pages
 * whose argument x lies below n + 1 and hands them here.
 *
 * For each term i (x = xs[i] < n + 1, j = js[i] = n + 2, r = rs[i] = gamma/c, omr = omrs[i] = alpha/c, and
 * tol = tols[i] the absolute tolerance already divided by p_{n+1}(x)) the sums
 *     sa = sum_{m>=0} t_m,   sd = sum_{m>=0} t_m f_m,   t_m = prod_{k<m} x/(j + k),  f_m = 1 - r^m,
 * are those of ``_series_pair``'s loop: two terms a pass, q = x * inv[j] (inv[j] = 1/j, the table INV of
 * _value.pyx) while j < inv_size - 1 and x / j beyond, the sums after the first pass where
 *     t q1 <= (series_tol sd + tol) (1 - q1)  or  t = 0                                     (the stop).
 *
 * Why not that loop term after term: its exit, data-dependent, is mispredicted about once a term, and the
 * processor learns so only once the stop's inputs are known -- the tolerance, which comes from the sum of the
 * page's earlier terms and the pmf (two divisions, pow and exp) -- and then drops the work it had begun on
 * other terms.  Run with a fixed number of passes instead (measured: the bench's series pages took 9.4 ms of
 * 42 less), and here on four terms side by side:
 *
 * - FRESHCORE_PAIR_PASSES passes for every term, whatever the stop says: each pass is the scalar loop's
 *   operations in its order (IEEE arithmetic gives the same bits one lane at a time or two), and a lane
 *   records its sums at the first pass where its stop holds (a bit mask selects them; no branch);
 * - a lane whose stop has not held after those passes goes on in the scalar loop from its state (the few
 *   long terms: x close to n + 1), as does a lane whose ratios would run past the table;
 * - the passes past a lane's stop only shrink its t (each later t is below the stopping one) and feed sums
 *   that are dropped.
 *
 * So every sum returned is bit for bit the one of ``_series_pair``'s loop.  With SSE2 (baseline on x86-64)
 * two registers hold the four lanes; where the processor has AVX2 one register (target attribute, chosen at run
 * time), with AVX-512F eight lanes in one; without SSE2, or with FRESHCORE_NO_SIMD, each term runs the scalar
 * loop.  (IEEE arithmetic gives the same bits one lane at a time or eight; no fused multiply-add is used.)
 */
#ifndef FRESHCORE_VALUE_SERIES_H
#define FRESHCORE_VALUE_SERIES_H

#include <math.h>
#include <stddef.h>

#include "_static.h"  /* FRESHCORE_STATIC */

#if (defined(__SSE2__) || defined(_M_X64)) && !defined(FRESHCORE_NO_SIMD)
#include <emmintrin.h>
#define FRESHCORE_SERIES_SSE2 1
#endif

/* passes run on every term (the bench's terms stop after 6.7 on average, 12 or fewer for 90 %) */
#define FRESHCORE_PAIR_PASSES 12

/* The scalar loop of _series_pair from the state at the top of a pass (t, sa, sd, f, q1 = the ratio for j). */
FRESHCORE_STATIC void freshcore_pair_finish(double x, double r, double omr, double tol, long j, double t,
                                            double sa, double sd, double f, double q1, const double* inv,
                                            long inv_size, double series_tol, double* sa_out, double* sd_out) {
    const double r2 = r * r, omr2 = omr * (1.0 + r);
    double q2, t1, f1;
    for (;;) {
        q2 = j < inv_size - 1 ? x * inv[j + 1] : x / (double)(j + 1);
        t1 = t * q1;
        f1 = f * r + omr;
        t = t * (q1 * q2);
        f = f * r2 + omr2;
        sa = sa + (t1 + t);
        sd = sd + (t1 * f1 + t * f);
        j = j + 2;
        q1 = j < inv_size - 1 ? x * inv[j] : x / (double)j;
        if (t * q1 <= (series_tol * sd + tol) * (1.0 - q1) || t == 0.0) {
            break;
        }
    }
    *sa_out = sa;
    *sd_out = sd;
}

/* One term from the start (t = 1, sa = 1, sd = 0, f = 0): _series_pair's loop itself. */
FRESHCORE_STATIC void freshcore_pair_one(double x, double r, double omr, double tol, long j, const double* inv,
                                         long inv_size, double series_tol, double* sa_out, double* sd_out) {
    const double q1 = j < inv_size - 1 ? x * inv[j] : x / (double)j;
    freshcore_pair_finish(x, r, omr, tol, j, 1.0, 1.0, 0.0, 0.0, q1, inv, inv_size, series_tol, sa_out, sd_out);
}

#ifdef FRESHCORE_SERIES_SSE2
/* Four terms: lanes 0-1 in the registers *a, 2-3 in *b; lane l reads term idx[l] and writes it if l < n_out
   (j0 + 2 FRESHCORE_PAIR_PASSES < inv_size - 1: the caller checks). */
FRESHCORE_STATIC void freshcore_pair_four(const ptrdiff_t* idx, int n_out, long j0, const double* xs,
                                          const double* rs, const double* omrs, const double* tols,
                                          const double* inv, long inv_size, double series_tol, double* sa_out,
                                          double* sd_out) {
    const __m128d one = _mm_set1_pd(1.0), zero = _mm_setzero_pd(), stol = _mm_set1_pd(series_tol);
    const __m128d xa = _mm_setr_pd(xs[idx[0]], xs[idx[1]]), xb = _mm_setr_pd(xs[idx[2]], xs[idx[3]]);
    const __m128d ra = _mm_setr_pd(rs[idx[0]], rs[idx[1]]), rb = _mm_setr_pd(rs[idx[2]], rs[idx[3]]);
    const __m128d oa = _mm_setr_pd(omrs[idx[0]], omrs[idx[1]]), ob = _mm_setr_pd(omrs[idx[2]], omrs[idx[3]]);
    const __m128d tla = _mm_setr_pd(tols[idx[0]], tols[idx[1]]), tlb = _mm_setr_pd(tols[idx[2]], tols[idx[3]]);
    const __m128d r2a = _mm_mul_pd(ra, ra), r2b = _mm_mul_pd(rb, rb);
    const __m128d o2a = _mm_mul_pd(oa, _mm_add_pd(one, ra)), o2b = _mm_mul_pd(ob, _mm_add_pd(one, rb));
    const double* pj = inv + j0;
    __m128d ta = one, tb = one, saa = one, sab = one, sda = zero, sdb = zero, fa = zero, fb = zero, q1a, q1b;
    __m128d q2a, q2b, t1a, t1b, f1a, f1b, ha, hb, fsa = zero, fsb = zero, fda = zero, fdb = zero;
    __m128d donea = zero, doneb = zero;
    double sa4[4], sd4[4], t4[4], f4[4], q4[4];
    __m128d v;
    int l, k, done;
    v = _mm_set1_pd(pj[0]);
    q1a = _mm_mul_pd(xa, v);
    q1b = _mm_mul_pd(xb, v);
    for (k = 0; k < 2 * FRESHCORE_PAIR_PASSES; k += 2) {
        v = _mm_set1_pd(pj[k + 1]);
        q2a = _mm_mul_pd(xa, v);
        q2b = _mm_mul_pd(xb, v);
        t1a = _mm_mul_pd(ta, q1a);
        t1b = _mm_mul_pd(tb, q1b);
        f1a = _mm_add_pd(_mm_mul_pd(fa, ra), oa);
        f1b = _mm_add_pd(_mm_mul_pd(fb, rb), ob);
        ta = _mm_mul_pd(ta, _mm_mul_pd(q1a, q2a));
        tb = _mm_mul_pd(tb, _mm_mul_pd(q1b, q2b));
        fa = _mm_add_pd(_mm_mul_pd(fa, r2a), o2a);
        fb = _mm_add_pd(_mm_mul_pd(fb, r2b), o2b);
        saa = _mm_add_pd(saa, _mm_add_pd(t1a, ta));
        sab = _mm_add_pd(sab, _mm_add_pd(t1b, tb));
        sda = _mm_add_pd(sda, _mm_add_pd(_mm_mul_pd(t1a, f1a), _mm_mul_pd(ta, fa)));
        sdb = _mm_add_pd(sdb, _mm_add_pd(_mm_mul_pd(t1b, f1b), _mm_mul_pd(tb, fb)));
        v = _mm_set1_pd(pj[k + 2]);
        q1a = _mm_mul_pd(xa, v);
        q1b = _mm_mul_pd(xb, v);
        /* the stop, and the lanes where it holds for the first time (their sums are kept) */
        ha = _mm_or_pd(_mm_cmple_pd(_mm_mul_pd(ta, q1a),
                                    _mm_mul_pd(_mm_add_pd(_mm_mul_pd(stol, sda), tla), _mm_sub_pd(one, q1a))),
                       _mm_cmpeq_pd(ta, zero));
        hb = _mm_or_pd(_mm_cmple_pd(_mm_mul_pd(tb, q1b),
                                    _mm_mul_pd(_mm_add_pd(_mm_mul_pd(stol, sdb), tlb), _mm_sub_pd(one, q1b))),
                       _mm_cmpeq_pd(tb, zero));
        ha = _mm_andnot_pd(donea, ha);
        hb = _mm_andnot_pd(doneb, hb);
        fsa = _mm_or_pd(_mm_and_pd(ha, saa), _mm_andnot_pd(ha, fsa));
        fsb = _mm_or_pd(_mm_and_pd(hb, sab), _mm_andnot_pd(hb, fsb));
        fda = _mm_or_pd(_mm_and_pd(ha, sda), _mm_andnot_pd(ha, fda));
        fdb = _mm_or_pd(_mm_and_pd(hb, sdb), _mm_andnot_pd(hb, fdb));
        donea = _mm_or_pd(donea, ha);
        doneb = _mm_or_pd(doneb, hb);
    }
    done = _mm_movemask_pd(donea) | (_mm_movemask_pd(doneb) << 2);
    _mm_storeu_pd(sa4, fsa);
    _mm_storeu_pd(sa4 + 2, fsb);
    _mm_storeu_pd(sd4, fda);
    _mm_storeu_pd(sd4 + 2, fdb);
    if ((done & ((1 << n_out) - 1)) == (1 << n_out) - 1) {
        for (l = 0; l < n_out; l++) {
            sa_out[idx[l]] = sa4[l];
            sd_out[idx[l]] = sd4[l];
        }
        return;
    }
    /* a lane whose stop has not held goes on in the scalar loop from its state after the passes */
    _mm_storeu_pd(t4, ta);
    _mm_storeu_pd(t4 + 2, tb);
    _mm_storeu_pd(f4, fa);
    _mm_storeu_pd(f4 + 2, fb);
    _mm_storeu_pd(q4, q1a);
    _mm_storeu_pd(q4 + 2, q1b);
    {
        double s4[4], d4[4];
        _mm_storeu_pd(s4, saa);
        _mm_storeu_pd(s4 + 2, sab);
        _mm_storeu_pd(d4, sda);
        _mm_storeu_pd(d4 + 2, sdb);
        for (l = 0; l < n_out; l++) {
            ptrdiff_t i = idx[l];
            if ((done >> l) & 1) {
                sa_out[i] = sa4[l];
                sd_out[i] = sd4[l];
            } else {
                freshcore_pair_finish(xs[i], rs[i], omrs[i], tols[i], j0 + 2 * FRESHCORE_PAIR_PASSES, t4[l],
                                      s4[l], d4[l], f4[l], q4[l], inv, inv_size, series_tol, sa_out + i,
                                      sd_out + i);
            }
        }
    }
}
#endif

#if defined(FRESHCORE_SERIES_SSE2) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__)) && !defined(FRESHCORE_NO_AVX2)
#include <immintrin.h>
#define FRESHCORE_SERIES_AVX2 1
/* freshcore_pair_four with the four lanes in one 256-bit register (AVX2, chosen at run time where the
   processor has it): the same operations lane by lane (no fused multiply-add), so the same bits; the state of
   a pass fits the 16 registers (the SSE2 version spills the loop-carried sums to memory). */
__attribute__((target("avx2"))) static void freshcore_pair_four_avx2(
        const ptrdiff_t* idx, int n_out, long j0, const double* xs, const double* rs, const double* omrs,
        const double* tols, const double* inv, long inv_size, double series_tol, double* sa_out, double* sd_out) {
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd(), stol = _mm256_set1_pd(series_tol);
    const __m256d x = _mm256_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]]);
    const __m256d r = _mm256_setr_pd(rs[idx[0]], rs[idx[1]], rs[idx[2]], rs[idx[3]]);
    const __m256d o = _mm256_setr_pd(omrs[idx[0]], omrs[idx[1]], omrs[idx[2]], omrs[idx[3]]);
    const __m256d tl = _mm256_setr_pd(tols[idx[0]], tols[idx[1]], tols[idx[2]], tols[idx[3]]);
    const __m256d r2 = _mm256_mul_pd(r, r), o2 = _mm256_mul_pd(o, _mm256_add_pd(one, r));
    const double* pj = inv + j0;
    __m256d t = one, sa = one, sd = zero, f = zero, q1, q2, t1, f1, h, fs = zero, fd = zero, dn = zero;
    double sa4[4], sd4[4], t4[4], f4[4], q4[4], s4[4], d4[4];
    int l, k, done;
    q1 = _mm256_mul_pd(x, _mm256_set1_pd(pj[0]));
    for (k = 0; k < 2 * FRESHCORE_PAIR_PASSES; k += 2) {
        q2 = _mm256_mul_pd(x, _mm256_set1_pd(pj[k + 1]));
        t1 = _mm256_mul_pd(t, q1);
        f1 = _mm256_add_pd(_mm256_mul_pd(f, r), o);
        t = _mm256_mul_pd(t, _mm256_mul_pd(q1, q2));
        f = _mm256_add_pd(_mm256_mul_pd(f, r2), o2);
        sa = _mm256_add_pd(sa, _mm256_add_pd(t1, t));
        sd = _mm256_add_pd(sd, _mm256_add_pd(_mm256_mul_pd(t1, f1), _mm256_mul_pd(t, f)));
        q1 = _mm256_mul_pd(x, _mm256_set1_pd(pj[k + 2]));
        /* the stop (ordered, non-signalling compares: those of the scalar <= and ==), where it holds first */
        h = _mm256_or_pd(_mm256_cmp_pd(_mm256_mul_pd(t, q1),
                                       _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(stol, sd), tl), _mm256_sub_pd(one, q1)),
                                       _CMP_LE_OQ),
                         _mm256_cmp_pd(t, zero, _CMP_EQ_OQ));
        h = _mm256_andnot_pd(dn, h);
        fs = _mm256_blendv_pd(fs, sa, h);
        fd = _mm256_blendv_pd(fd, sd, h);
        dn = _mm256_or_pd(dn, h);
    }
    done = _mm256_movemask_pd(dn);
    _mm256_storeu_pd(sa4, fs);
    _mm256_storeu_pd(sd4, fd);
    if ((done & ((1 << n_out) - 1)) == (1 << n_out) - 1) {
        for (l = 0; l < n_out; l++) {
            sa_out[idx[l]] = sa4[l];
            sd_out[idx[l]] = sd4[l];
        }
        return;
    }
    _mm256_storeu_pd(t4, t);
    _mm256_storeu_pd(f4, f);
    _mm256_storeu_pd(q4, q1);
    _mm256_storeu_pd(s4, sa);
    _mm256_storeu_pd(d4, sd);
    for (l = 0; l < n_out; l++) {
        ptrdiff_t i = idx[l];
        if ((done >> l) & 1) {
            sa_out[i] = sa4[l];
            sd_out[i] = sd4[l];
        } else {
            freshcore_pair_finish(xs[i], rs[i], omrs[i], tols[i], j0 + 2 * FRESHCORE_PAIR_PASSES, t4[l], s4[l],
                                  d4[l], f4[l], q4[l], inv, inv_size, series_tol, sa_out + i, sd_out + i);
        }
    }
}
#endif

#ifdef FRESHCORE_SERIES_AVX2
/* freshcore_pair_four_avx2 with eight lanes in one 512-bit register (AVX-512F, chosen at run time). */
__attribute__((target("avx512f"))) static void freshcore_pair_eight_avx512(
        const ptrdiff_t* idx, int n_out, long j0, const double* xs, const double* rs, const double* omrs,
        const double* tols, const double* inv, long inv_size, double series_tol, double* sa_out, double* sd_out) {
    const __m512d one = _mm512_set1_pd(1.0), zero = _mm512_setzero_pd(), stol = _mm512_set1_pd(series_tol);
    const __m512d x = _mm512_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]], xs[idx[4]], xs[idx[5]],
                                     xs[idx[6]], xs[idx[7]]);
    const __m512d r = _mm512_setr_pd(rs[idx[0]], rs[idx[1]], rs[idx[2]], rs[idx[3]], rs[idx[4]], rs[idx[5]],
                                     rs[idx[6]], rs[idx[7]]);
    const __m512d o = _mm512_setr_pd(omrs[idx[0]], omrs[idx[1]], omrs[idx[2]], omrs[idx[3]], omrs[idx[4]],
                                     omrs[idx[5]], omrs[idx[6]], omrs[idx[7]]);
    const __m512d tl = _mm512_setr_pd(tols[idx[0]], tols[idx[1]], tols[idx[2]], tols[idx[3]], tols[idx[4]],
                                      tols[idx[5]], tols[idx[6]], tols[idx[7]]);
    const __m512d r2 = _mm512_mul_pd(r, r), o2 = _mm512_mul_pd(o, _mm512_add_pd(one, r));
    const double* pj = inv + j0;
    __m512d t = one, sa = one, sd = zero, f = zero, q1, q2, t1, f1, fs = zero, fd = zero;
    __mmask8 h, dn = 0;
    double sa8[8], sd8[8], t8[8], f8[8], q8[8], s8[8], d8[8];
    int l, k;
    q1 = _mm512_mul_pd(x, _mm512_set1_pd(pj[0]));
    for (k = 0; k < 2 * FRESHCORE_PAIR_PASSES; k += 2) {
        q2 = _mm512_mul_pd(x, _mm512_set1_pd(pj[k + 1]));
        t1 = _mm512_mul_pd(t, q1);
        f1 = _mm512_add_pd(_mm512_mul_pd(f, r), o);
        t = _mm512_mul_pd(t, _mm512_mul_pd(q1, q2));
        f = _mm512_add_pd(_mm512_mul_pd(f, r2), o2);
        sa = _mm512_add_pd(sa, _mm512_add_pd(t1, t));
        sd = _mm512_add_pd(sd, _mm512_add_pd(_mm512_mul_pd(t1, f1), _mm512_mul_pd(t, f)));
        q1 = _mm512_mul_pd(x, _mm512_set1_pd(pj[k + 2]));
        h = (__mmask8)(_mm512_cmp_pd_mask(_mm512_mul_pd(t, q1),
                                          _mm512_mul_pd(_mm512_add_pd(_mm512_mul_pd(stol, sd), tl),
                                                        _mm512_sub_pd(one, q1)), _CMP_LE_OQ)
                       | _mm512_cmp_pd_mask(t, zero, _CMP_EQ_OQ));
        h = (__mmask8)(h & ~dn);
        fs = _mm512_mask_blend_pd(h, fs, sa);
        fd = _mm512_mask_blend_pd(h, fd, sd);
        dn = (__mmask8)(dn | h);
    }
    _mm512_storeu_pd(sa8, fs);
    _mm512_storeu_pd(sd8, fd);
    if (((int)dn & ((1 << n_out) - 1)) == (1 << n_out) - 1) {
        for (l = 0; l < n_out; l++) {
            sa_out[idx[l]] = sa8[l];
            sd_out[idx[l]] = sd8[l];
        }
        return;
    }
    _mm512_storeu_pd(t8, t);
    _mm512_storeu_pd(f8, f);
    _mm512_storeu_pd(q8, q1);
    _mm512_storeu_pd(s8, sa);
    _mm512_storeu_pd(d8, sd);
    for (l = 0; l < n_out; l++) {
        ptrdiff_t i = idx[l];
        if ((dn >> l) & 1) {
            sa_out[i] = sa8[l];
            sd_out[i] = sd8[l];
        } else {
            freshcore_pair_finish(xs[i], rs[i], omrs[i], tols[i], j0 + 2 * FRESHCORE_PAIR_PASSES, t8[l], s8[l],
                                  d8[l], f8[l], q8[l], inv, inv_size, series_tol, sa_out + i, sd_out + i);
        }
    }
}
#endif

/* The kernels freshcore_series_pairs and freshcore_term0_series use: -1 the best the processor has (found on the
   first call), else 0 the scalar loops, 1 SSE2, 2 AVX2, 3 AVX-512F for the pair series (AVX2 for term 0's; lower
   if not compiled in).  Every choice gives the same bits (tests compare). */
static int freshcore_series_simd = -1;

FRESHCORE_STATIC int freshcore_series_simd_level(void) {
    int level = 0;
#ifdef FRESHCORE_SERIES_SSE2
    level = 1;
#endif
#ifdef FRESHCORE_SERIES_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        level = 2;
    }
    if (level == 2 && __builtin_cpu_supports("avx512f")) {
        level = 3;
    }
#endif
    return level;
}

/* Sets the kernel (see freshcore_series_simd; levels above the processor's are lowered); returns the one used. */
FRESHCORE_STATIC int freshcore_set_series_simd(int level) {
    int best = freshcore_series_simd_level();
    freshcore_series_simd = level < 0 || level > best ? best : level;
    return freshcore_series_simd;
}

/* sa_out[i], sd_out[i] for the m terms i < m (see the notes at the top). */
FRESHCORE_STATIC void freshcore_series_pairs(ptrdiff_t m, long j, const double* xs, const double* rs,
                                             const double* omrs, const double* tols, const double* inv,
                                             long inv_size, double series_tol, double* sa_out, double* sd_out) {
    ptrdiff_t i = 0;
#ifdef FRESHCORE_SERIES_SSE2
    ptrdiff_t idx[4];
    int l, n_out;
    if (freshcore_series_simd < 0) {
        freshcore_set_series_simd(-1);
    }
    if (freshcore_series_simd > 0 && j + 2 * FRESHCORE_PAIR_PASSES < inv_size - 1) {
#ifdef FRESHCORE_SERIES_AVX2
        if (freshcore_series_simd == 3) {
            ptrdiff_t idx8[8];
            for (; i < m; i += 8) {
                n_out = m - i < 8 ? (int)(m - i) : 8;
                for (l = 0; l < 8; l++) {
                    idx8[l] = l < n_out ? i + l : m - 1;
                }
                freshcore_pair_eight_avx512(idx8, n_out, j, xs, rs, omrs, tols, inv, inv_size, series_tol, sa_out,
                                            sd_out);
            }
        }
#endif
        for (; i < m; i += 4) {
            /* the last one to three terms: the missing lanes repeat the last term (their sums are not written) */
            n_out = m - i < 4 ? (int)(m - i) : 4;
            for (l = 0; l < 4; l++) {
                idx[l] = l < n_out ? i + l : m - 1;
            }
#ifdef FRESHCORE_SERIES_AVX2
            if (freshcore_series_simd >= 2) {
                freshcore_pair_four_avx2(idx, n_out, j, xs, rs, omrs, tols, inv, inv_size, series_tol, sa_out,
                                         sd_out);
                continue;
            }
#endif
            freshcore_pair_four(idx, n_out, j, xs, rs, omrs, tols, inv, inv_size, series_tol, sa_out, sd_out);
        }
    }
#endif
    for (; i < m; i++) {
        freshcore_pair_one(xs[i], rs[i], omrs[i], tols[i], j, inv, inv_size, series_tol, sa_out + i, sd_out + i);
    }
}

/* Term 0's series (``_term0`` of _value.pyx where c s <= 2 and gamma s < 0.7) for m pages: x = c s, ax = alpha s,
   gx = gamma s; sa_out, se_out = the sums sa, se the scalar loop below returns (then A_0 = s e^{-x} sa, D_0 =
   s e^{-x} se).  Two terms a pass, k = 0, 2, 4, ... for every page alike (t = inv[k + 2], t2 = t inv[k + 3]);
   stopped after the first pass where a q <= series_tol se (1 - q) or a = 0, q = x inv[k + 2] (k after the pass).
   With AVX2, four pages side by side, FRESHCORE_TERM0_PASSES passes each keeping its sums of the first pass
   where its stop holds, as the pair series above; the rare longer ones finish in the scalar loop. */
#define FRESHCORE_TERM0_PASSES 10

FRESHCORE_STATIC void freshcore_term0_finish(double x, double ax, double gx, long k, double a, double b, double e,
                                             double sa, double se, const double* inv, double series_tol,
                                             double* sa_out, double* se_out) {
    const double xx = x * x, axg = ax * (x + gx);
    double t, t2, q;
    for (;;) {
        t = inv[k + 2];
        t2 = t * inv[k + 3];
        se = se + ((x * e + ax * b) * t + (xx * e + axg * b) * t2);
        sa = sa + (a * x * t + a * xx * t2);
        e = (xx * e + axg * b) * t2;
        b = b * (gx * gx) * t2;
        a = a * xx * t2;
        k = k + 2;
        q = x * inv[k + 2];
        if (a * q <= series_tol * se * (1.0 - q) || a == 0.0) {
            break;
        }
    }
    *sa_out = sa;
    *se_out = se;
}

#ifdef FRESHCORE_SERIES_AVX2
__attribute__((target("avx2"))) static void freshcore_term0_four_avx2(
        const ptrdiff_t* idx, int n_out, const double* xs, const double* axs, const double* gxs, const double* inv,
        double series_tol, double* sa_out, double* se_out) {
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd(), stol = _mm256_set1_pd(series_tol);
    const __m256d x = _mm256_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]]);
    const __m256d ax = _mm256_setr_pd(axs[idx[0]], axs[idx[1]], axs[idx[2]], axs[idx[3]]);
    const __m256d gx = _mm256_setr_pd(gxs[idx[0]], gxs[idx[1]], gxs[idx[2]], gxs[idx[3]]);
    const __m256d xx = _mm256_mul_pd(x, x), axg = _mm256_mul_pd(ax, _mm256_add_pd(x, gx));
    const __m256d gg = _mm256_mul_pd(gx, gx);
    __m256d a = one, b = one, e = zero, sa = one, se = zero, t, t2, q, h, u, fs = zero, fe = zero, dn = zero;
    double s4[4], e4[4], a4[4], b4[4], ee4[4], sa4[4], se4[4];
    int l, k, done;
    for (k = 0; k < 2 * FRESHCORE_TERM0_PASSES; k += 2) {
        t = _mm256_set1_pd(inv[k + 2]);
        t2 = _mm256_set1_pd(inv[k + 2] * inv[k + 3]);
        u = _mm256_add_pd(_mm256_mul_pd(xx, e), _mm256_mul_pd(axg, b));
        se = _mm256_add_pd(se, _mm256_add_pd(_mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(x, e), _mm256_mul_pd(ax, b)), t),
                                             _mm256_mul_pd(u, t2)));
        sa = _mm256_add_pd(sa, _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(a, x), t),
                                             _mm256_mul_pd(_mm256_mul_pd(a, xx), t2)));
        e = _mm256_mul_pd(u, t2);
        b = _mm256_mul_pd(_mm256_mul_pd(b, gg), t2);
        a = _mm256_mul_pd(_mm256_mul_pd(a, xx), t2);
        q = _mm256_mul_pd(x, _mm256_set1_pd(inv[k + 4]));
        h = _mm256_or_pd(_mm256_cmp_pd(_mm256_mul_pd(a, q), _mm256_mul_pd(_mm256_mul_pd(stol, se), _mm256_sub_pd(one, q)),
                                       _CMP_LE_OQ),
                         _mm256_cmp_pd(a, zero, _CMP_EQ_OQ));
        h = _mm256_andnot_pd(dn, h);
        fs = _mm256_blendv_pd(fs, sa, h);
        fe = _mm256_blendv_pd(fe, se, h);
        dn = _mm256_or_pd(dn, h);
    }
    done = _mm256_movemask_pd(dn);
    _mm256_storeu_pd(s4, fs);
    _mm256_storeu_pd(e4, fe);
    if ((done & ((1 << n_out) - 1)) == (1 << n_out) - 1) {
        for (l = 0; l < n_out; l++) {
            sa_out[idx[l]] = s4[l];
            se_out[idx[l]] = e4[l];
        }
        return;
    }
    _mm256_storeu_pd(a4, a);
    _mm256_storeu_pd(b4, b);
    _mm256_storeu_pd(ee4, e);
    _mm256_storeu_pd(sa4, sa);
    _mm256_storeu_pd(se4, se);
    for (l = 0; l < n_out; l++) {
        ptrdiff_t i = idx[l];
        if ((done >> l) & 1) {
            sa_out[i] = s4[l];
            se_out[i] = e4[l];
        } else {
            freshcore_term0_finish(xs[i], axs[i], gxs[i], 2 * FRESHCORE_TERM0_PASSES, a4[l], b4[l], ee4[l], sa4[l],
                                   se4[l], inv, series_tol, sa_out + i, se_out + i);
        }
    }
}
#endif

/* sa_out[i], se_out[i] of term 0's series for the m pages i < m (see above). */
FRESHCORE_STATIC void freshcore_term0_series(ptrdiff_t m, const double* xs, const double* axs, const double* gxs,
                                             const double* inv, double series_tol, double* sa_out,
                                             double* se_out) {
    ptrdiff_t i = 0;
#ifdef FRESHCORE_SERIES_AVX2
    ptrdiff_t idx[4];
    int l, n_out;
    if (freshcore_series_simd < 0) {
        freshcore_set_series_simd(-1);
    }
    if (freshcore_series_simd >= 2) {
        for (; i < m; i += 4) {
            n_out = m - i < 4 ? (int)(m - i) : 4;
            for (l = 0; l < 4; l++) {
                idx[l] = l < n_out ? i + l : m - 1;
            }
            freshcore_term0_four_avx2(idx, n_out, xs, axs, gxs, inv, series_tol, sa_out, se_out);
        }
    }
#endif
    for (; i < m; i++) {
        freshcore_term0_finish(xs[i], axs[i], gxs[i], 0, 1.0, 1.0, 0.0, 1.0, 0.0, inv, series_tol, sa_out + i,
                               se_out + i);
    }
}

/* The lower sums of ``_lower_from_pmf`` (x >= n + 1): total = sum_k u_k, u_0 = 1, u_{k+1} = u_k (n - k)/x, stopped
   after the first k where u_k r <= series_tol total (1 - r), r = (n - k)/x (which holds at k = n, r = 0), for the
   m arguments xs[i] of one n; Q^n(x) = p_n(x) total.  With AVX2, four at a time, every lane running until all
   have stopped (checked every eight steps) and keeping its sum of its first stop. */
FRESHCORE_STATIC double freshcore_lower_one(long n, double x, double series_tol) {
    double t = 1.0, total = 1.0, r, ix = 1.0 / x;
    long k = 0;
    while (k < n) {
        t = t * ((double)(n - k) * ix);
        total = total + t;
        k = k + 1;
        r = (double)(n - k) * ix;
        if (t * r <= series_tol * total * (1.0 - r)) {
            break;
        }
    }
    return total;
}

#ifdef FRESHCORE_SERIES_AVX2
__attribute__((target("avx2"))) static void freshcore_lower_four_avx2(const ptrdiff_t* idx, int n_out, long n,
                                                                       const double* xs, double series_tol,
                                                                       double* out) {
    const __m256d one = _mm256_set1_pd(1.0), stol = _mm256_set1_pd(series_tol);
    const __m256d ix = _mm256_div_pd(one, _mm256_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]]));
    __m256d t = one, total = one, r, h, res = one, dn = _mm256_setzero_pd();
    double o4[4];
    long k = 0;
    int l;
    while (k < n) {
        t = _mm256_mul_pd(t, _mm256_mul_pd(_mm256_set1_pd((double)(n - k)), ix));
        total = _mm256_add_pd(total, t);
        k = k + 1;
        r = _mm256_mul_pd(_mm256_set1_pd((double)(n - k)), ix);
        h = _mm256_cmp_pd(_mm256_mul_pd(t, r), _mm256_mul_pd(_mm256_mul_pd(stol, total), _mm256_sub_pd(one, r)),
                          _CMP_LE_OQ);
        h = _mm256_andnot_pd(dn, h);
        res = _mm256_blendv_pd(res, total, h);
        dn = _mm256_or_pd(dn, h);
        if ((k & 7) == 0 && _mm256_movemask_pd(dn) == 15) {
            break;
        }
    }
    _mm256_storeu_pd(o4, res);
    for (l = 0; l < n_out; l++) {
        /* (a lane never stopped only where n = 0 or a NaN: its loop's sum is the one it ends with) */
        out[idx[l]] = (_mm256_movemask_pd(dn) >> l) & 1 ? o4[l] : freshcore_lower_one(n, xs[idx[l]], series_tol);
    }
}
#endif

FRESHCORE_STATIC void freshcore_lower_sums(ptrdiff_t m, long n, const double* xs, double series_tol, double* out) {
    ptrdiff_t i = 0;
#ifdef FRESHCORE_SERIES_AVX2
    ptrdiff_t idx[4];
    int l, n_out;
    if (freshcore_series_simd < 0) {
        freshcore_set_series_simd(-1);
    }
    if (freshcore_series_simd >= 2) {
        for (; i < m; i += 4) {
            n_out = m - i < 4 ? (int)(m - i) : 4;
            for (l = 0; l < 4; l++) {
                idx[l] = l < n_out ? i + l : m - 1;
            }
            freshcore_lower_four_avx2(idx, n_out, n, xs, series_tol, out);
        }
    }
#endif
    for (; i < m; i++) {
        out[i] = freshcore_lower_one(n, xs[i], series_tol);
    }
}

/* The tail sums of ``_series_tail`` with no absolute tolerance (x < n + 1, j = n + 2): sa = sum_m t_m as in the
   pair series, stopped after the first pass where t q1 <= series_tol sa (1 - q1) or t = 0; R^n(x) = p_{n+1}(x) sa.
   With AVX2, four at a time with FRESHCORE_PAIR_PASSES fixed passes, as the pair series. */
FRESHCORE_STATIC double freshcore_tail_finish(double x, long j, double t, double sa, double q1, const double* inv,
                                              long inv_size, double series_tol) {
    double q2, t1;
    for (;;) {
        q2 = j < inv_size - 1 ? x * inv[j + 1] : x / (double)(j + 1);
        t1 = t * q1;
        t = t * (q1 * q2);
        sa = sa + (t1 + t);
        j = j + 2;
        q1 = j < inv_size - 1 ? x * inv[j] : x / (double)j;
        if (t * q1 <= (series_tol * sa + 0.0) * (1.0 - q1) || t == 0.0) {
            break;
        }
    }
    return sa;
}

#ifdef FRESHCORE_SERIES_AVX2
__attribute__((target("avx2"))) static void freshcore_tail_four_avx2(const ptrdiff_t* idx, int n_out, long j0,
                                                                      const double* xs, const double* inv,
                                                                      long inv_size, double series_tol, double* out) {
    const __m256d one = _mm256_set1_pd(1.0), zero = _mm256_setzero_pd(), stol = _mm256_set1_pd(series_tol);
    const __m256d x = _mm256_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]]);
    const double* pj = inv + j0;
    __m256d t = one, sa = one, q1, q2, t1, h, fs = zero, dn = zero;
    double s4[4], t4[4], q4[4], a4[4];
    int l, k, done;
    q1 = _mm256_mul_pd(x, _mm256_set1_pd(pj[0]));
    for (k = 0; k < 2 * FRESHCORE_PAIR_PASSES; k += 2) {
        q2 = _mm256_mul_pd(x, _mm256_set1_pd(pj[k + 1]));
        t1 = _mm256_mul_pd(t, q1);
        t = _mm256_mul_pd(t, _mm256_mul_pd(q1, q2));
        sa = _mm256_add_pd(sa, _mm256_add_pd(t1, t));
        q1 = _mm256_mul_pd(x, _mm256_set1_pd(pj[k + 2]));
        h = _mm256_or_pd(_mm256_cmp_pd(_mm256_mul_pd(t, q1),
                                       _mm256_mul_pd(_mm256_add_pd(_mm256_mul_pd(stol, sa), zero),
                                                     _mm256_sub_pd(one, q1)), _CMP_LE_OQ),
                         _mm256_cmp_pd(t, zero, _CMP_EQ_OQ));
        h = _mm256_andnot_pd(dn, h);
        fs = _mm256_blendv_pd(fs, sa, h);
        dn = _mm256_or_pd(dn, h);
    }
    done = _mm256_movemask_pd(dn);
    _mm256_storeu_pd(s4, fs);
    _mm256_storeu_pd(t4, t);
    _mm256_storeu_pd(q4, q1);
    _mm256_storeu_pd(a4, sa);
    for (l = 0; l < n_out; l++) {
        ptrdiff_t i = idx[l];
        out[i] = (done >> l) & 1 ? s4[l] : freshcore_tail_finish(xs[i], j0 + 2 * FRESHCORE_PAIR_PASSES, t4[l], a4[l],
                                                                 q4[l], inv, inv_size, series_tol);
    }
}
#endif

FRESHCORE_STATIC void freshcore_tail_sums(ptrdiff_t m, long j, const double* xs, const double* inv, long inv_size,
                                          double series_tol, double* out) {
    ptrdiff_t i = 0;
#ifdef FRESHCORE_SERIES_AVX2
    ptrdiff_t idx[4];
    int l, n_out;
    if (freshcore_series_simd < 0) {
        freshcore_set_series_simd(-1);
    }
    if (freshcore_series_simd >= 2 && j + 2 * FRESHCORE_PAIR_PASSES < inv_size - 1) {
        for (; i < m; i += 4) {
            n_out = m - i < 4 ? (int)(m - i) : 4;
            for (l = 0; l < 4; l++) {
                idx[l] = l < n_out ? i + l : m - 1;
            }
            freshcore_tail_four_avx2(idx, n_out, j, xs, inv, inv_size, series_tol, out);
        }
    }
#endif
    for (; i < m; i++) {
        const double q1 = j < inv_size - 1 ? xs[i] * inv[j] : xs[i] / (double)j;
        out[i] = freshcore_tail_finish(xs[i], j, 1.0, 1.0, q1, inv, inv_size, series_tol);
    }
}

/* Term 0's closed forms (``_term0`` where c s > 2 or gamma s >= 0.7) for m pages of one kind: ax_small = whether
   alpha s < 0.7 and gx_small = whether gamma s < 0.7 for all of them (so 1 - e^{-x} takes one form in every
   lane).  For page i (s, c, gamma, alpha and x = c s, ax = alpha s, gx = gamma s): a_out[i] = A_0 and d_out[i] =
   D_0 as _term0 returns them, or need[i] = 1 where none of the closed forms applies (c s <= 2 there: _term0's
   series; c s > 2: NaN).  e^{-x/2} or e^{-x} from libm one page at a time, the rest four pages at a time with
   AVX2 (the same operations lane by lane: _term0's bits); without AVX2 need[i] = 1 for every page. */
#ifdef FRESHCORE_SERIES_AVX2
__attribute__((target("avx2"))) static void freshcore_term0_closed_four(
        const ptrdiff_t* idx, int n_out, const double* ss, const double* cs, const double* gs, const double* as,
        const double* xs, const double* axs, const double* gxs, int ax_small, int gx_small, const double* sinhc,
        double cancel_ratio, double* d_out, double* a_out, unsigned char* need) {
    const __m256d one = _mm256_set1_pd(1.0), half = _mm256_set1_pd(0.5), quarter = _mm256_set1_pd(0.25);
    const __m256d cr = _mm256_set1_pd(cancel_ratio), two = _mm256_set1_pd(2.0);
    const __m256d s = _mm256_setr_pd(ss[idx[0]], ss[idx[1]], ss[idx[2]], ss[idx[3]]);
    const __m256d c = _mm256_setr_pd(cs[idx[0]], cs[idx[1]], cs[idx[2]], cs[idx[3]]);
    const __m256d g = _mm256_setr_pd(gs[idx[0]], gs[idx[1]], gs[idx[2]], gs[idx[3]]);
    const __m256d al = _mm256_setr_pd(as[idx[0]], as[idx[1]], as[idx[2]], as[idx[3]]);
    const __m256d x = _mm256_setr_pd(xs[idx[0]], xs[idx[1]], xs[idx[2]], xs[idx[3]]);
    const __m256d ax = _mm256_setr_pd(axs[idx[0]], axs[idx[1]], axs[idx[2]], axs[idx[3]]);
    const __m256d gx = _mm256_setr_pd(gxs[idx[0]], gxs[idx[1]], gxs[idx[2]], gxs[idx[3]]);
    double ha4[4], hg4[4], d4[4], a4[4];
    __m256d ha, hg, ea, em, eg, a, b, a2, b2, d, z, p, ok1, ok2, bad;
    int l, k, m1, m2, mb;
    for (l = 0; l < 4; l++) {
        double u = axs[idx[l]], v = gxs[idx[l]];
        ha4[l] = exp(ax_small ? -0.5 * u : -u);
        hg4[l] = exp(gx_small ? -0.5 * v : -v);
    }
    ha = _mm256_loadu_pd(ha4);
    hg = _mm256_loadu_pd(hg4);
    /* one_minus_exp(ax, &ea), one_minus_exp(gx, &.) */
    if (ax_small) {
        z = _mm256_mul_pd(_mm256_mul_pd(quarter, ax), ax);
        p = _mm256_set1_pd(sinhc[7]);
        for (k = 6; k >= 0; k--) {
            p = _mm256_add_pd(_mm256_mul_pd(p, z), _mm256_set1_pd(sinhc[k]));
        }
        ea = _mm256_mul_pd(ha, ha);
        em = _mm256_mul_pd(_mm256_mul_pd(ha, ax), p);
    } else {
        ea = ha;
        em = _mm256_sub_pd(one, ha);
    }
    if (gx_small) {
        z = _mm256_mul_pd(_mm256_mul_pd(quarter, gx), gx);
        p = _mm256_set1_pd(sinhc[7]);
        for (k = 6; k >= 0; k--) {
            p = _mm256_add_pd(_mm256_mul_pd(p, z), _mm256_set1_pd(sinhc[k]));
        }
        eg = _mm256_mul_pd(_mm256_mul_pd(hg, gx), p);
    } else {
        eg = _mm256_sub_pd(one, hg);
    }
    a = _mm256_div_pd(_mm256_add_pd(em, _mm256_mul_pd(ea, eg)), c);
    b = _mm256_blendv_pd(_mm256_mul_pd(ea, _mm256_mul_pd(s, _mm256_sub_pd(one, _mm256_mul_pd(half, gx)))),
                         _mm256_div_pd(_mm256_mul_pd(ea, eg), g), _mm256_cmp_pd(gx, _mm256_set1_pd(1e-8), _CMP_GE_OQ));
    ok1 = _mm256_cmp_pd(b, _mm256_mul_pd(cr, a), _CMP_LE_OQ);
    a2 = _mm256_mul_pd(g, em);
    b2 = _mm256_mul_pd(_mm256_mul_pd(al, ea), eg);
    ok2 = _mm256_cmp_pd(b2, _mm256_mul_pd(cr, a2), _CMP_LE_OQ);
    d = _mm256_blendv_pd(_mm256_div_pd(_mm256_sub_pd(a2, b2), _mm256_mul_pd(c, g)), _mm256_sub_pd(a, b), ok1);
    bad = _mm256_andnot_pd(_mm256_or_pd(ok1, ok2), _mm256_set1_pd(-0.0));  /* (sign bit: neither form) */
    _mm256_storeu_pd(d4, d);
    _mm256_storeu_pd(a4, a);
    m1 = _mm256_movemask_pd(ok1);
    m2 = _mm256_movemask_pd(ok2);
    mb = _mm256_movemask_pd(_mm256_cmp_pd(x, two, _CMP_GT_OQ));
    (void)bad;
    for (l = 0; l < n_out; l++) {
        ptrdiff_t i = idx[l];
        a_out[i] = a4[l];
        d_out[i] = d4[l];
        need[i] = 0;
        if (!(((m1 | m2) >> l) & 1)) {
            /* neither form: NaN where c s > 2, else _term0's series (the caller's) */
            if ((mb >> l) & 1) {
                d_out[i] = NAN;
            } else {
                need[i] = 1;
            }
        }
    }
}
#endif

FRESHCORE_STATIC void freshcore_term0_closed(ptrdiff_t m, const double* ss, const double* cs, const double* gs,
                                             const double* as, const double* xs, const double* axs,
                                             const double* gxs, int ax_small, int gx_small, const double* sinhc,
                                             double cancel_ratio, double* d_out, double* a_out,
                                             unsigned char* need) {
    ptrdiff_t i = 0;
#ifndef FRESHCORE_SERIES_AVX2
    /* (no vector path here: every page goes to the caller's scalar forms) */
    (void)ss, (void)cs, (void)gs, (void)as, (void)xs, (void)axs, (void)gxs, (void)ax_small, (void)gx_small;
    (void)sinhc, (void)cancel_ratio, (void)d_out, (void)a_out;
#else
    ptrdiff_t idx[4];
    int l, n_out;
    if (freshcore_series_simd < 0) {
        freshcore_set_series_simd(-1);
    }
    if (freshcore_series_simd >= 2) {
        for (; i < m; i += 4) {
            n_out = m - i < 4 ? (int)(m - i) : 4;
            for (l = 0; l < 4; l++) {
                idx[l] = l < n_out ? i + l : m - 1;
            }
            freshcore_term0_closed_four(idx, n_out, ss, cs, gs, as, xs, axs, gxs, ax_small, gx_small, sinhc,
                                        cancel_ratio, d_out, a_out, need);
        }
    }
#endif
    for (; i < m; i++) {
        need[i] = 1;
    }
}

#endif /* FRESHCORE_VALUE_SERIES_H */
