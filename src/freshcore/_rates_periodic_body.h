/* One version of the periodic pass of _rates_periodic.h (which see), included once per instruction set
 * with FC_SUFFIX set (_0 baseline, _1 AVX2, _2 AVX-512) under the matching `#pragma GCC target`: every
 * helper below is compiled for that target, so that GCC keeps the comparisons and blends on the
 * eight lanes in vector registers (helpers compiled for the baseline and inlined into a wider target
 * get their comparisons split lane by lane).  No include guard: the names carry the suffix.
 * Compiled alone (without FC_SUFFIX, as .ci/check-headers compiles every header), it is empty: its
 * versions are compiled through _rates_periodic.h. */
#ifdef FC_SUFFIX

#define FC_CAT2(a, b) a##b
#define FC_CAT(a, b) FC_CAT2(a, b)
#define FC_F(name) FC_CAT(name, FC_SUFFIX)

/* FC_W lanes a vector, the native width (2 SSE2, 4 AVX2, 8 AVX-512): a group of eight pages is 8/FC_W
 * vectors, each with its own sums, so that lane l of sub-vector k always adds page 8 g + FC_W k + l and
 * the eight logical lanes are summed in the same order at every width. */
typedef double FC_F(fc_vd) __attribute__((vector_size(FC_W * 8)));
typedef long long FC_F(fc_vm) __attribute__((vector_size(FC_W * 8)));
typedef unsigned long long FC_F(fc_vu) __attribute__((vector_size(FC_W * 8)));
#define VD FC_F(fc_vd)
#define VM FC_F(fc_vm)
#define VU FC_F(fc_vu)
#define FC_K (8 / FC_W)

/* a where m, else b (bitwise: no branch) */
FRESHCORE_PER_INLINE VD FC_F(fc_sel)(VM m, VD a, VD b) {
    return (VD)(((VU)a & (VU)m) | ((VU)b & ~(VU)m));
}

FRESHCORE_PER_INLINE VD FC_F(fc_set1)(double x) {
    VD v;
    int l;
    for (l = 0; l < FC_W; l++) v[l] = x;
    return v;
}

FRESHCORE_PER_INLINE VD FC_F(fc_load)(const double* p) {
    VD v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* fdlibm's log (e_log.c) for positive normal finite lanes, branch-free: below one ulp.  The mantissa
 * is taken to [sqrt(2)/2, sqrt(2)) (1 + f), log(1 + f) = f - (hfsq - s (hfsq + R(s^2))), s = f/(2 + f),
 * R the degree-14 minimax of fdlibm; fdlibm's other form f - s (f - R), which it uses for some f to
 * save a multiplication, is not used (both are within one ulp). */
FRESHCORE_PER_INLINE VD FC_F(fc_log)(VD x) {
    VU ix = (VU)x;
    VU hx = ix >> 32;
    VU k = (hx >> 20) - 1023u; /* (mod 2^64: the sum with the magic bits below wraps back) */
    VU i;
    VD f, dk, s, z, w, t1, t2, r, hfsq;
    hx &= 0x000fffffULL;
    i = (hx + 0x95f64ULL) & 0x100000ULL; /* the mantissa is sqrt(2) or more: halve it */
    k += i >> 20;
    ix = ((hx | (i ^ 0x3ff00000ULL)) << 32) | (ix & 0xffffffffULL);
    f = (VD)ix - 1.0;
    dk = (VD)(k + FC_MAGIC_BITS) - FC_MAGIC; /* the integer k, exactly */
    s = f / (2.0 + f);
    z = s * s;
    w = z * z;
    t1 = w * (FC_LG2 + w * (FC_LG4 + w * FC_LG6));
    t2 = z * (FC_LG1 + w * (FC_LG3 + w * (FC_LG5 + w * FC_LG7)));
    r = t2 + t1;
    hfsq = 0.5 * f * f;
    return dk * FC_LN2_HI - ((hfsq - (s * (hfsq + r) + dk * FC_LN2_LO)) - f);
}

/* log1p(y) for lanes with 1 + y positive normal: log(1 + y) corrected for the rounding of 1 + y */
FRESHCORE_PER_INLINE VD FC_F(fc_log1p)(VD y) {
    VD u = 1.0 + y;
    return FC_F(fc_log)(u) + (y - (u - 1.0)) / u;
}

/* 1 + W as the branch-point series sum_{k=1}^{16} mu_k q^k (_core's _series_p1), by Estrin's scheme (four
 * levels of products instead of sixteen dependent steps: the lanes wait on this) */
FRESHCORE_PER_INLINE VD FC_F(fc_series_p1)(VD q) {
    const VD q2 = q * q, q4 = q2 * q2, q8 = q4 * q4;
    const VD a0 = 1.0 + q * -0.3333333333333333, a1 = 0.1527777777777778 + q * -0.07962962962962963;
    const VD a2 = 0.044502314814814814 + q * -0.02598471487360376;
    const VD a3 = 0.01563563253233392 + q * -0.009616892024299432;
    const VD a4 = 0.006014543252956118 + q * -0.0038112980348919993;
    const VD a5 = 0.0024408779911439826 + q * -0.0015769303446867841;
    const VD a6 = 0.0010262633205076071 + q * -0.0006720616311561362;
    const VD a7 = 0.0004424730618146209 + q * -0.00029267722472962746;
    const VD b0 = a0 + q2 * a1, b1 = a2 + q2 * a3, b2 = a4 + q2 * a5, b3 = a6 + q2 * a7;
    return q * ((b0 + q4 * b1) + q8 * (b2 + q4 * b3));
}

/* sqrt on the lanes (the instruction of each target; no vector sqrt in GCC's vector extension) */
FRESHCORE_PER_INLINE VD FC_F(fc_sqrt)(VD x) {
#if defined(FRESHCORE_PERIODIC_DISPATCH) && FC_W == 8
    return (VD)_mm512_sqrt_pd((__m512d)x);
#elif defined(FRESHCORE_PERIODIC_DISPATCH) && FC_W == 4
    return (VD)_mm256_sqrt_pd((__m256d)x);
#elif defined(__SSE2__) && FC_W == 2
    return (VD)_mm_sqrt_pd((__m128d)x);
#else
    int l;
    for (l = 0; l < FC_W; l++) x[l] = __builtin_sqrt(x[l]);
    return x;
#endif
}

/* x = -1 - W-1(-(1 - c)/e) for lanes with 0 <= c < 1: tt = b/u (c = tt^2), om = 1 - c accurate. */
FRESHCORE_PER_INLINE VD FC_F(fc_periodic_x)(VD tt, VD c, VD om) {
    const VM small = (VM)(c < 0.5), series = (VM)(c < 0.005);
    const VD p = 1.4142135623730951 * tt; /* sqrt(2c) */
    const VD xs = -FC_F(fc_series_p1)(-p);
    /* t = -log(1 - c): -log1p(-c) from c below 1/2 (1 - c rounded, then corrected), -log(om) above */
    const VD arg = FC_F(fc_sel)(small, 1.0 - c, om);
    const VD t0 = -FC_F(fc_log)(arg);
    /* the guess: x(t) = N(s)/D(s), s = sqrt(t) (minimax, degrees 6 and 4, within 2.3e-10 for
     * 0.0045 <= t <= 40: the pass has t < 37), one division for g = N^2 r and 1/g = D^2 r, r = 1/(N D) */
    const VD sq = FC_F(fc_sqrt)(t0), s2 = sq * sq, s4 = s2 * s2;
    const VD num = (-3.9063998897476455e-10 + sq * 1.414213574183056) +
                   s2 * (1.8969840880334197 + sq * 1.0936674447722656) +
                   s4 * ((0.3223891076371556 + sq * 0.04513154011639594) + s2 * 0.0017576765404714156);
    const VD den = (1.0 + sq * 0.8699658864145906) + s2 * (0.3076777225106069 + sq * 0.045068797568331063) +
                   s4 * 0.0017580582151701149;
    const VD r = 1.0 / (num * den);
    const VD g = (num * num) * r, ig = (den * den) * r;
    /* one Newton step on f(x) = x - log1p(x) - t (quadratic: 0.5 (2.3e-10)^2 relative left), with
     * t = t0 - ((1 - arg) - c)/arg where 1 - c was rounded, log1p(g) = log(1 + g) + (g - ((1 + g) - 1))/(1 + g),
     * the two corrections by one division */
    const VD u1 = 1.0 + g, r2 = 1.0 / (arg * u1);
    const VD t = t0 - FC_F(fc_sel)(small, ((1.0 - arg) - c) * u1 * r2, FC_F(fc_set1)(0.0));
    const VD lg = FC_F(fc_log)(u1) + (g - (u1 - 1.0)) * arg * r2;
    const VD f = (g - lg) - t;
    return FC_F(fc_sel)(series, xs, g - f * (1.0 + ig));
}

/* Eight pages: their rates into *v_out; for the unclipped ones ya = v a = u dv/du, a = 2 c (1 + x)/(x^2 (1 - c)),
 * into *ya_out, and where |b - u| >= wnear u (far from the threshold) also into *yf_out with
 * yaa = d^2 v/d(log u)^2 = v a (a (3 - x) - 2) into *yff_out (0 elsewhere). */
FRESHCORE_PER_INLINE void FC_F(fc_periodic_pages)(VD vb, VD vd, VD vlo, VD vhi, double u, double inv_u, double wu,
                                                  VD* v_out, VD* ya_out, VD* yf_out, VD* yff_out) {
    const VM in = (VM)(u > vb);
    VD tt = vb * inv_u, c = tt * tt, om = (u - vb) * inv_u * ((u + vb) * inv_u), x, v, a, ya;
    /* the lanes not crawled (and om <= 0 or c >= 1 past rounding) compute at c = 1/2, then are dropped */
    const VM ok = in & (VM)(om > 0.0) & (VM)(c < 1.0);
    VM m_lo, m_hi, smooth, far;
    tt = FC_F(fc_sel)(ok, tt, FC_F(fc_set1)(0.7071067811865476));
    c = FC_F(fc_sel)(ok, c, FC_F(fc_set1)(0.5));
    om = FC_F(fc_sel)(ok, om, FC_F(fc_set1)(0.5));
    x = FC_F(fc_periodic_x)(tt, c, om);
    x = FC_F(fc_sel)(in & ~ok, FC_F(fc_set1)(__builtin_inf()), x); /* om <= 0: rate 0, as residual1_inverse */
    v = vd / x;
    a = (2.0 * c * (1.0 + x)) / (x * x * om);
    ya = v * a;
    m_lo = (VM)(v <= vlo);
    m_hi = (VM)(v >= vhi) & ~m_lo;
    smooth = in & ~m_lo & ~m_hi & (VM)(x > 0.0);
    far = smooth & (VM)((u - vb) >= wu); /* (crawled pages: b < u) */
    v = FC_F(fc_sel)(m_lo, vlo, FC_F(fc_sel)(m_hi, vhi, v));
    *v_out = FC_F(fc_sel)(in, v, vlo);
    *ya_out = FC_F(fc_sel)(smooth, ya, FC_F(fc_set1)(0.0));
    *yf_out = FC_F(fc_sel)(far, ya, FC_F(fc_set1)(0.0));
    *yff_out = FC_F(fc_sel)(far, ya * (a * (3.0 - x) - 2.0), FC_F(fc_set1)(0.0));
}

/* The sum of the eight logical lanes of acc[0..FC_K-1], in one order at every width */
#define FC_LANE(a, k) ((a)[(k) / FC_W][(k) % FC_W])
FRESHCORE_PER_INLINE double FC_F(fc_hsum)(const VD* a) {
    return ((FC_LANE(a, 0) + FC_LANE(a, 1)) + (FC_LANE(a, 2) + FC_LANE(a, 3))) +
           ((FC_LANE(a, 4) + FC_LANE(a, 5)) + (FC_LANE(a, 6) + FC_LANE(a, 7)));
}
#undef FC_LANE

/* Neumaier compensated s += v (as _nadd of _rates.pyx) */
FRESHCORE_PER_INLINE void FC_F(fc_nadd)(double* s, double* comp, double v) {
    double t = *s + v;
    if (__builtin_fabs(*s) >= __builtin_fabs(v))
        *comp += (*s - t) + v;
    else
        *comp += (v - t) + *s;
    *s = t;
}

/* The whole pass (see _rates_periodic.h). */
FRESHCORE_STATIC void FC_F(freshcore_periodic_pass)(const double* b, const double* d, const double* lo,
                                                    const double* hi, double lo0, double hi0, double u, double wnear,
                                                    double* out, ptrdiff_t n, freshcore_periodic_sums* sums) {
    const double inv_u = 1.0 / u, wu = wnear * u;
    const VD vlo0 = FC_F(fc_set1)(lo0), vhi0 = FC_F(fc_set1)(hi0);
    ptrdiff_t i = 0, j, l, m;
    int k;
    VD v, ya, yf, yff;
    while (i < n) {
        VD acc_v[FC_K], acc_y[FC_K], acc_f[FC_K], acc_ff[FC_K];
        const ptrdiff_t end = n - i < 32 ? n : i + 32;
        for (k = 0; k < FC_K; k++) acc_v[k] = acc_y[k] = acc_f[k] = acc_ff[k] = FC_F(fc_set1)(0.0);
        for (j = i; j + 8 <= end; j += 8) {
            for (k = 0; k < FC_K; k++) {
                const ptrdiff_t o = j + k * FC_W;
                FC_F(fc_periodic_pages)(FC_F(fc_load)(b + o), FC_F(fc_load)(d + o), lo ? FC_F(fc_load)(lo + o) : vlo0,
                                        hi ? FC_F(fc_load)(hi + o) : vhi0, u, inv_u, wu, &v, &ya, &yf, &yff);
                acc_v[k] += v;
                acc_y[k] += ya;
                acc_f[k] += yf;
                acc_ff[k] += yff;
                if (out) memcpy(out + o, &v, sizeof v);
            }
        }
        if (j < end) { /* the last pages: lanes past n are b = +inf (not crawled: rate 0, no derivative) */
            double tb[8], td[8], tl[8], th[8];
            m = end - j;
            for (l = 0; l < 8; l++) {
                tb[l] = l < m ? b[j + l] : __builtin_inf();
                td[l] = l < m ? d[j + l] : 1.0;
                tl[l] = l < m ? (lo ? lo[j + l] : lo0) : 0.0;
                th[l] = l < m ? (hi ? hi[j + l] : hi0) : __builtin_inf();
            }
            for (k = 0; k < FC_K; k++) {
                const int o = k * FC_W;
                FC_F(fc_periodic_pages)(FC_F(fc_load)(tb + o), FC_F(fc_load)(td + o), FC_F(fc_load)(tl + o),
                                        FC_F(fc_load)(th + o), u, inv_u, wu, &v, &ya, &yf, &yff);
                acc_v[k] += v;
                acc_y[k] += ya;
                acc_f[k] += yf;
                acc_ff[k] += yff;
                memcpy(tb + o, &v, sizeof v);
            }
            if (out)
                for (l = 0; l < m; l++) out[j + l] = tb[l];
        }
        FC_F(fc_nadd)(&sums->s, &sums->sc, FC_F(fc_hsum)(acc_v));
        FC_F(fc_nadd)(&sums->y, &sums->yc, FC_F(fc_hsum)(acc_y));
        FC_F(fc_nadd)(&sums->yf, &sums->yfc, FC_F(fc_hsum)(acc_f));
        FC_F(fc_nadd)(&sums->yff, &sums->yffc, FC_F(fc_hsum)(acc_ff));
        i = end;
    }
}

/* x of the pass at u = 1 for given b (test hook): out[i] = x at c = b^2, 1 - c = (1 - b)(1 + b). */
FRESHCORE_STATIC void FC_F(freshcore_periodic_x)(const double* tt, double* out, ptrdiff_t n) {
    ptrdiff_t i, l, m;
    for (i = 0; i < n; i += FC_W) {
        double tb[FC_W];
        VD vb, x;
        m = n - i < FC_W ? n - i : FC_W;
        for (l = 0; l < FC_W; l++) tb[l] = l < m ? tt[i + l] : 0.5;
        vb = FC_F(fc_load)(tb);
        x = FC_F(fc_periodic_x)(vb, vb * vb, (1.0 - vb) * (1.0 + vb));
        memcpy(tb, &x, sizeof x);
        for (l = 0; l < m; l++) out[i + l] = tb[l];
    }
}

#undef VD
#undef VM
#undef VU
#undef FC_K
#undef FC_F
#undef FC_CAT
#undef FC_CAT2

#endif /* FC_SUFFIX */
