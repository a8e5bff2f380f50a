/* Extended precision for the polled value's retry of its cancelling column sums (freshcore._polled, issue 19).
 *
 * FC_HAVE_EXT is 1 where long double carries a 64-bit significand (x87 extended: x86 and x86-64 with GCC or
 * clang), and fc_ext is long double there: 11 bits more than double at about the speed of double.  Everywhere
 * else (MSVC, where long double is double; aarch64 and ppc64, where it is a 113-bit software float, ~50x slower)
 * fc_ext is double and FC_HAVE_EXT 0: the portable fallback, where _polled skips the retry and walks the page
 * as before.  FC_EXT_EPS is the unit roundoff of fc_ext (2^-64 or 2^-53).
 */
#ifndef FRESHCORE_POLLED_EXT_H
#define FRESHCORE_POLLED_EXT_H
#include <float.h>
#include <math.h>

#if defined(LDBL_MANT_DIG) && LDBL_MANT_DIG == 64 && !defined(FRESHCORE_NO_LONG_DOUBLE)
#define FC_HAVE_EXT 1
typedef long double fc_ext;
#define FC_EXT_EPS (LDBL_EPSILON / 2.0L)
#define fc_exp expl
#define fc_expm1 expm1l
#define fc_log logl
#define fc_log1p log1pl
#define fc_fabs fabsl
#define FC_LIT(x) x##L
#else
#define FC_HAVE_EXT 0
typedef double fc_ext;
#define FC_EXT_EPS (DBL_EPSILON / 2.0)
#define fc_exp exp
#define fc_expm1 expm1
#define fc_log log
#define fc_log1p log1p
#define fc_fabs fabs
#define FC_LIT(x) x
#endif

#define FC_LOG_2PI FC_LIT(1.83787706640934548356065947281123528)

/* stirlerr(n) = log(n!) - (n + 1/2) log(n) + n - log(sqrt(2 pi)), n = 0..15 (mpmath, 40 digits) */
static const fc_ext fc_stirl_tab[16] = {
    FC_LIT(0.0),
    FC_LIT(0.0810614667953272582196702635944),
    FC_LIT(0.0413406959554092940938220814071),
    FC_LIT(0.0276779256849983391487892927462),
    FC_LIT(0.0207906721037650931115227717678),
    FC_LIT(0.0166446911898211921631948653736),
    FC_LIT(0.0138761288230707479987457270238),
    FC_LIT(0.0118967099458917700950557241177),
    FC_LIT(0.0104112652619720964974785671325),
    FC_LIT(0.0092554621827127329177286366331),
    FC_LIT(0.00833056343336287125646931865963),
    FC_LIT(0.0075736754879518407949720242116),
    FC_LIT(0.00694284010720952986566415266348),
    FC_LIT(0.00640899418800420706843963108298),
    FC_LIT(0.00595137011275884773562441604647),
    FC_LIT(0.00555473355196280137103868995979),
};

/* stirlerr(n): the table to 15, above it the Stirling series to 1/n^15 (truncated at n = 16: 6e-22) */
static inline fc_ext fc_stirl(fc_ext n) {
    fc_ext u, u2;
    if (n <= 15) return fc_stirl_tab[(int)n];
    u = FC_LIT(1.0) / n;
    u2 = u * u;
    return (FC_LIT(1.0) / 12 - (FC_LIT(1.0) / 360 - (FC_LIT(1.0) / 1260 - (FC_LIT(1.0) / 1680 - (FC_LIT(1.0) / 1188
            - (FC_LIT(691.0) / 360360 - (FC_LIT(1.0) / 156 - (FC_LIT(3617.0) / 122400) * u2) * u2) * u2) * u2) * u2)
            * u2) * u2) * u;
}

/* Loader's deviance j log(j/x) + x - j without cancellation, j > 0, x > 0 */
static inline fc_ext fc_bd0(fc_ext j, fc_ext x) {
    fc_ext v, s, s1, ej;
    int k;
    if (fc_fabs(j - x) < FC_LIT(0.1) * (j + x)) {
        v = (j - x) / (j + x);
        s = (j - x) * v;
        ej = 2 * j * v;
        v = v * v;
        for (k = 1; k < 1000; k++) {
            ej *= v;
            s1 = s + ej / (2 * k + 1);
            if (s1 == s) return s1;
            s = s1;
        }
        return s;
    }
    return j * fc_log(j / x) + x - j;
}

#endif
