/* One block of the sort-free Poisson Newton pass of freshcore._rates (``_newton_pass``).
 *
 * For pages i < n of a block (n <= 32): v_i = s_i u - Delta_i, the rate max(v_i, l_i)
 * (l_i = lo[i], or lo0 where lo is NULL) written to out[i] unless out is NULL; returns in
 * *bt the block's total of the rates, in *bs the sum of s_i over the pages above their minimum
 * (v_i > l_i) and adds their count to *cnt.  Partial sums by i mod 4 (the tail past the last
 * multiple of 4 goes to the first), combined as (p0 + p1) + (p2 + p3): the SSE2 path keeps the
 * four in two registers and the portable fallback in four variables, so that both give the same
 * bits.  max is a > b ? a : b (maxpd / maxsd), never fmax (a call into libm without
 * -ffast-math), and nothing branches on the data (whether a page is above its minimum is
 * unpredictable from one page to the next).
 */
#ifndef FRESHCORE_RATES_NEWTON_H
#define FRESHCORE_RATES_NEWTON_H

#include <stddef.h>

static inline double freshcore_newton_max(double a, double b) { return a > b ? a : b; }

/* The scalar page: the tail of both paths and the whole fallback. */
static inline void freshcore_newton_page(double si, double di, double l, double u, double* out_i,
                                         double* bt, double* bs, ptrdiff_t* cnt) {
    double v = si * u - di;
    int up = v > l;
    v = freshcore_newton_max(v, l);
    *bt += v;
    *bs += si * (double)up;
    *cnt += up;
    if (out_i) *out_i = v;
}

#if defined(__SSE2__)
#include <emmintrin.h>

static inline void freshcore_newton_block(const double* s, const double* d, const double* lo, double lo0,
                                          double u, double* out, ptrdiff_t n, double* bt, double* bs,
                                          ptrdiff_t* cnt) {
    const __m128d U = _mm_set1_pd(u), L0 = _mm_set1_pd(lo0), ONE = _mm_set1_pd(1.0);
    __m128d t01 = _mm_setzero_pd(), t23 = _mm_setzero_pd(), b01 = _mm_setzero_pd(), b23 = _mm_setzero_pd();
    __m128d c01 = _mm_setzero_pd(), c23 = _mm_setzero_pd();
    double t[4], b[4], c[4], tail_t = 0.0, tail_b = 0.0;
    ptrdiff_t i = 0, tail_c = 0;
    for (; i + 4 <= n; i += 4) {
        __m128d s01 = _mm_loadu_pd(s + i), s23 = _mm_loadu_pd(s + i + 2);
        __m128d l01 = lo ? _mm_loadu_pd(lo + i) : L0, l23 = lo ? _mm_loadu_pd(lo + i + 2) : L0;
        __m128d v01 = _mm_sub_pd(_mm_mul_pd(s01, U), _mm_loadu_pd(d + i));
        __m128d v23 = _mm_sub_pd(_mm_mul_pd(s23, U), _mm_loadu_pd(d + i + 2));
        __m128d m01 = _mm_cmpgt_pd(v01, l01), m23 = _mm_cmpgt_pd(v23, l23);
        v01 = _mm_max_pd(v01, l01);  /* v > l ? v : l, as freshcore_newton_max */
        v23 = _mm_max_pd(v23, l23);
        t01 = _mm_add_pd(t01, v01);
        t23 = _mm_add_pd(t23, v23);
        b01 = _mm_add_pd(b01, _mm_and_pd(m01, s01));  /* s_i * up: s_i or +0 */
        b23 = _mm_add_pd(b23, _mm_and_pd(m23, s23));
        c01 = _mm_add_pd(c01, _mm_and_pd(m01, ONE));
        c23 = _mm_add_pd(c23, _mm_and_pd(m23, ONE));
        if (out) {
            _mm_storeu_pd(out + i, v01);
            _mm_storeu_pd(out + i + 2, v23);
        }
    }
    _mm_storeu_pd(t, t01);
    _mm_storeu_pd(t + 2, t23);
    _mm_storeu_pd(b, b01);
    _mm_storeu_pd(b + 2, b23);
    _mm_storeu_pd(c, c01);
    _mm_storeu_pd(c + 2, c23);
    tail_t = t[0];
    tail_b = b[0];
    for (; i < n; i++)
        freshcore_newton_page(s[i], d[i], lo ? lo[i] : lo0, u, out ? out + i : NULL, &tail_t, &tail_b, &tail_c);
    *bt = (tail_t + t[1]) + (t[2] + t[3]);
    *bs = (tail_b + b[1]) + (b[2] + b[3]);
    *cnt += (ptrdiff_t)(c[0] + c[1] + c[2] + c[3]) + tail_c;
}

#else /* portable fallback: the same partial sums in the same order */

static inline void freshcore_newton_block(const double* s, const double* d, const double* lo, double lo0,
                                          double u, double* out, ptrdiff_t n, double* bt, double* bs,
                                          ptrdiff_t* cnt) {
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0, b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        freshcore_newton_page(s[i], d[i], lo ? lo[i] : lo0, u, out ? out + i : NULL, &t0, &b0, cnt);
        freshcore_newton_page(s[i + 1], d[i + 1], lo ? lo[i + 1] : lo0, u, out ? out + i + 1 : NULL, &t1, &b1, cnt);
        freshcore_newton_page(s[i + 2], d[i + 2], lo ? lo[i + 2] : lo0, u, out ? out + i + 2 : NULL, &t2, &b2, cnt);
        freshcore_newton_page(s[i + 3], d[i + 3], lo ? lo[i + 3] : lo0, u, out ? out + i + 3 : NULL, &t3, &b3, cnt);
    }
    for (; i < n; i++)
        freshcore_newton_page(s[i], d[i], lo ? lo[i] : lo0, u, out ? out + i : NULL, &t0, &b0, cnt);
    *bt = (t0 + t1) + (t2 + t3);
    *bs = (b0 + b1) + (b2 + b3);
}

#endif

#endif /* FRESHCORE_RATES_NEWTON_H */
