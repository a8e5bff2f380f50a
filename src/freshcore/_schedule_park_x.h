/* Greedy's park keys for many pages at once (freshcore._schedule's settle; one page: park_time of
 * _schedule_lines.pxd): x = -1 - W-1(-(1 - c)/e), the x >= 0 with R^1(x) = 1 - e^-x (1 + x) = c, for
 * 0 <= c < 1, by the periodic rates' branch-free kernel (fc_periodic_x of _rates_periodic_body.h: t =
 * -log(1 - c), a rational guess in sqrt(t) and one Newton step, or the branch-point series below c = 0.005;
 * below 2e-15 relative from c -> 0 to c -> 1, tests/test_rates_periodic_pass.py), with 1 - c and sqrt(c)
 * formed from c (1 - c is exact from c = 1/2 on, where the kernel uses it; below, the kernel corrects its
 * rounding).  park_time takes x 5e-14 lower, which covers that error as it covers the scalar Lambert W's
 * (up to 2.3e-14 near c = 0.005).  The scalar Lambert W costs ~25-30 ns a page (two or three calls of libm's log and branches the
 * data make unpredictable): at 10^6 pages, Greedy from bench/cold_start.py's phased start, 40% of the
 * settle.
 *
 * freshcore_park_x(c, out, n): out[i] = x at c[i] (each 0 <= c[i] < 1), at the widest level the CPU runs
 * (freshcore_park_x_set_level, as freshcore_periodic_set_level: the same bits at every level); where there
 * is no vector kernel (FRESHCORE_PERIODIC_VEC undefined) the level is -1 and the caller keeps its scalar
 * loop (freshcore_park_x is then a no-op). */
#ifndef FRESHCORE_SCHEDULE_PARK_X_H
#define FRESHCORE_SCHEDULE_PARK_X_H

#include <stddef.h>
#include <string.h>

#include "_static.h"
#include "_rates_periodic.h"

#ifdef FRESHCORE_PERIODIC_VEC
/* a version for one instruction set: W lanes a vector; lanes past n compute at c = 1/2 and are dropped */
#define FRESHCORE_PARK_X_VERSION(SUF, W)                                                   \
    FRESHCORE_STATIC void freshcore_park_x##SUF(const double* c, double* out, ptrdiff_t n) { \
        ptrdiff_t i, l, m;                                                                 \
        for (i = 0; i < n; i += W) {                                                       \
            double t[W];                                                                   \
            fc_vd##SUF v;                                                                  \
            m = n - i < W ? n - i : W;                                                     \
            for (l = 0; l < W; l++) t[l] = l < m ? c[i + l] : 0.5;                         \
            v = fc_load##SUF(t);                                                           \
            v = fc_periodic_x##SUF(fc_sqrt##SUF(v), v, 1.0 - v);                          \
            memcpy(t, &v, sizeof v);                                                       \
            for (l = 0; l < m; l++) out[i + l] = t[l];                                     \
        }                                                                                  \
    }

FRESHCORE_PARK_X_VERSION(_0, 2)
#ifdef FRESHCORE_PERIODIC_DISPATCH
#pragma GCC push_options
#pragma GCC target("avx2")
FRESHCORE_PARK_X_VERSION(_1, 4)
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512bw,avx512vl")
FRESHCORE_PARK_X_VERSION(_2, 8)
#pragma GCC pop_options
#endif

typedef void (*freshcore_park_x_fn)(const double*, double*, ptrdiff_t);

/* The version in use (freshcore_park_x_set_level sets it; the baseline until then). */
FRESHCORE_STATIC freshcore_park_x_fn freshcore_park_x = freshcore_park_x_0;

/* Use version min(level, widest) (at least 0); return the level set. */
FRESHCORE_STATIC int freshcore_park_x_set_level(int level) {
    int top = freshcore_periodic_max_level();
    if (level > top) level = top;
    if (level < 0) level = 0;
    freshcore_park_x = freshcore_park_x_0;
#ifdef FRESHCORE_PERIODIC_DISPATCH
    if (level == 1) freshcore_park_x = freshcore_park_x_1;
    if (level == 2) freshcore_park_x = freshcore_park_x_2;
#endif
    return level;
}

#else /* no vector kernel: the caller's scalar loop (level -1) */
#define freshcore_park_x(c, out, n) ((void)0)
FRESHCORE_STATIC int freshcore_park_x_set_level(int level) {
    (void)level;
    return -1;
}
#endif /* FRESHCORE_PERIODIC_VEC */

#endif /* FRESHCORE_SCHEDULE_PARK_X_H */
