/* Bit-level helpers on IEEE-754 binary64 doubles, shared by freshcore's compiled modules.
 *
 * Each function is the exact result of the operation it replaces (frexp's exponent, ldexp(1, e),
 * (double)x for small non-negative integers), written without a library call so that the loops that
 * use it stay branch-free and vectorisable.  Portable C99: type punning through memcpy (which
 * compilers turn into a register move), no platform-specific path.
 */
#ifndef FRESHCORE_FLOAT_BITS_H
#define FRESHCORE_FLOAT_BITS_H

#include <stdint.h>
#include <string.h>

/* e with x = m 2^e, 1/2 <= m < 1, for a normal x > 0 (frexp's exponent, without the call). */
static inline int freshcore_exponent(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return (int)((u >> 52) & 0x7ff) - 1022;
}

/* 2^e for -1022 <= e <= 1023 (ldexp(1, e), without the call). */
static inline double freshcore_pow2(int e) {
    uint64_t u = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Exact int64 -> double for 0 <= x < 2^52: put x in the mantissa of 2^52 and subtract 2^52.
 * Unlike (double)x this vectorises with SSE2 (por/subpd). */
static inline double freshcore_u52_to_double(long long x) {
    union { long long i; double d; } u;
    u.i = x | 0x4330000000000000LL;
    return u.d - 4503599627370496.0;
}

#endif /* FRESHCORE_FLOAT_BITS_H */
