/* The constants and coefficient tables of the crawl value's closed forms (freshcore._value_residues.pxd,
 * compiled into freshcore._value).  Why each constant is what it is: the docstrings of _value_residues.pxd.
 */
#ifndef FRESHCORE_VALUE_RESIDUES_H
#define FRESHCORE_VALUE_RESIDUES_H

/* relative tolerance of every sum of freshcore._value: a sum stops when its provable remainder is below it */
#define FRESHCORE_SUM_TOL 1e-16
/* sum over the non-real roots of |residue| <= RES_TAIL alpha beta^2 (nu beta/pi)^{iota/beta}:
 * 2 sum_{k>=1} ((2k-1) pi)^-3 = 2 (7/8) zeta(3) / pi^3 = 0.067844..., rounded up */
#define FRESHCORE_RES_TAIL 0.06785
/* the residue form of V is tried from iota >= 4 beta on, and for alpha beta = log(gamma/nu) <= 40 (e^y stays
 * far from overflow); the wider radius of _root_radius from iota >= 16 beta on */
#define FRESHCORE_RES_MIN_K 4.0
#define FRESHCORE_RES_MAX_Y 40.0
#define FRESHCORE_RES_WIDE_K 16.0
/* the residue forms of psi and w replace their series only where it would run past LONG_SERIES terms, and
 * from iota >= 16 beta on */
#define FRESHCORE_LONG_SERIES 4096.0
#define FRESHCORE_PSI_MIN_K 16.0
/* pi and log(pi), rounded to nearest */
#define FRESHCORE_PI 3.141592653589793
#define FRESHCORE_LOG_PI 1.1447298858494002

#include "_static.h"  /* FRESHCORE_STATIC */

/* The coefficient tables, filled once by freshcore._value when it is imported (fill_tables in
 * _value_residues.pxd: each entry from its exact definition) */
FRESHCORE_STATIC double FRESHCORE_SINHC_COEF[8];
FRESHCORE_STATIC double FRESHCORE_R1_COEF[18];
FRESHCORE_STATIC double FRESHCORE_T3_COEF[24];
FRESHCORE_STATIC double FRESHCORE_BQ_COEF[24];
FRESHCORE_STATIC double FRESHCORE_T2_COEF[20];

#endif /* FRESHCORE_VALUE_RESIDUES_H */
