/* util_format.c: doubles written exactly as printf's "%.6f" and "%.9g" write them in the C locale, without printf, for writing predictions fast. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>

#include "util.h"

/*
 * printf formats a number from its exact binary value, correctly rounded
 * (ties to even), which costs it a few hundred nanoseconds: per predicted
 * row, more than scoring the row. Both formatters here give the same bytes
 * for every double, by two fast paths and printf itself for the rest:
 *
 *   %.6f   a double below 10^13 in magnitude is M / 2^S with M < 2^53 and
 *          S > 9; the exact M * 10^6 fits 128 bits, and shifting it right
 *          by S, the bits shifted out deciding the rounding (ties to even),
 *          is the exact rounding printf makes.
 *   %.9g   the double times a power of ten, v * 10^(8-k), is computed with
 *          two roundings (the power is a correctly rounded literal): a
 *          relative error below 2^-52, under 3e-7 on a value below 10^9.
 *          Rounding it to an integer is exact unless it lies within that
 *          error of a half, so a value within 1e-5 of one is left to
 *          printf (a few in 10^5 of arbitrary values, none of the floats
 *          that round to fewer digits).
 *
 * Everything else (NaN, infinities, magnitudes the fast paths do not
 * cover) goes to snprintf in the C locale.
 */

/* printf's "%.9g" (g9 set) or "%.6f" in the C locale, whatever locale the
 * program set. */
static size_t slow(char *buf, int g9, double v)
{
    locale_t c = hog_c_locale();
    locale_t old = c ? uselocale(c) : (locale_t)0;
    int n = snprintf(buf, HOG_FORMAT_CHARS, g9 ? "%.9g" : "%.6f", v);
    if (c)
        uselocale(old);
    return n < 0 ? 0 : HOG_MIN((size_t)n, (size_t)HOG_FORMAT_CHARS - 1);
}

/* "00" to "99": two digits per division. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

/* Writes the `width` decimal digits of u (zero-padded) at p; returns the end. */
static char *digits(char *p, uint64_t u, int width)
{
    int i = width;
    for (; i >= 2; i -= 2) {
        memcpy(p + i - 2, digit_pairs + 2 * (u % 100), 2);
        u /= 100;
    }
    if (i)
        p[0] = (char)('0' + u % 10);
    return p + width;
}

/* The decimal digits of u, as many as it has. */
static char *digits_all(char *p, uint64_t u)
{
    int n = 1;
    for (uint64_t t = u; t >= 10; t /= 10)
        n++;
    return digits(p, u, n);
}

size_t hog_format_f6(char *buf, double v)
{
    if (!(fabs(v) < 1e13))
        return slow(buf, 0, v);
    char *p = buf;
    if (signbit(v)) {
        *p++ = '-';
        v = -v;
    }
    uint64_t q = 0;
    if (v != 0) {
        uint64_t bits;
        memcpy(&bits, &v, sizeof(bits));
        const int biased = (int)(bits >> 52); /* the sign is clear */
        uint64_t mant = bits & ((1ull << 52) - 1);
        if (biased) /* normal: the implicit leading bit; subnormal: 2^-1074 units */
            mant |= 1ull << 52;
        /* v = mant / 2^shift, shift > 9 as v < 10^13 < 2^44 */
        const int shift = 1075 - (biased ? biased : 1);
        unsigned __int128 x = (unsigned __int128)mant * 1000000u; /* below 2^73 */
        if (shift < 128) {       /* q below 10^19 */
            q = (uint64_t)(x >> shift);
            unsigned __int128 rest = x - ((unsigned __int128)q << shift);
            unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
            q += rest > half || (rest == half && (q & 1));
        } /* else x < 2^73 is far below half of 2^shift: it rounds to 0 */
    }
    p = digits_all(p, q / 1000000);
    *p++ = '.';
    p = digits(p, q % 1000000, 6);
    *p = '\0';
    return (size_t)(p - buf);
}

/* 10^0 .. 10^69, each correctly rounded by the compiler. */
#define E(n) 1e##n
static const double pow10_table[70] = {
    E(0),  E(1),  E(2),  E(3),  E(4),  E(5),  E(6),  E(7),  E(8),  E(9),  E(10), E(11), E(12), E(13),
    E(14), E(15), E(16), E(17), E(18), E(19), E(20), E(21), E(22), E(23), E(24), E(25), E(26), E(27),
    E(28), E(29), E(30), E(31), E(32), E(33), E(34), E(35), E(36), E(37), E(38), E(39), E(40), E(41),
    E(42), E(43), E(44), E(45), E(46), E(47), E(48), E(49), E(50), E(51), E(52), E(53), E(54), E(55),
    E(56), E(57), E(58), E(59), E(60), E(61), E(62), E(63), E(64), E(65), E(66), E(67), E(68), E(69),
};
#undef E

/* v * 10^j, |j| < 70. */
static double scale10(double v, int j)
{
    return j >= 0 ? v * pow10_table[j] : v / pow10_table[-j];
}

size_t hog_format_g9(char *buf, double v)
{
    if (v == 0)
        return (size_t)(signbit(v) ? stpcpy(buf, "-0") - buf : stpcpy(buf, "0") - buf);
    double a = fabs(v);
    if (!(a >= 1e-60 && a < 1e60))
        return slow(buf, 1, v);
    uint64_t bits;
    memcpy(&bits, &a, sizeof(bits));
    const int e2 = (int)(bits >> 52) - 1023; /* a in [2^e2, 2^(e2+1)), normal as a >= 1e-60 */
    /* log10(a) lies within 0.302 above e2 * log10(2): the exponent k of a's
     * first digit is this or one more */
    int k = (int)floor(e2 * 0.30102999566398120);
    double x = scale10(a, 8 - k);
    if (fabs(x - 999999999.5) < 1e-4)
        return slow(buf, 1, v);
    if (x >= 999999999.5) { /* nine digits round up to ten: one more power of ten */
        k++;
        x = scale10(a, 8 - k);
    }
    double fl = floor(x);
    if (fabs(x - fl - 0.5) < 1e-5)
        return slow(buf, 1, v);
    uint64_t n = (uint64_t)fl + (x - fl > 0.5); /* 10^8 <= n < 10^9 */
    char d[9];
    digits(d, n, 9);
    int nd = 9; /* significant digits once trailing zeros go, as %g drops them */
    while (nd > 1 && d[nd - 1] == '0')
        nd--;
    char *p = buf;
    if (v < 0)
        *p++ = '-';
    if (k >= -4 && k < 9) { /* %f style with 8 - k decimals */
        if (k >= 0) {
            memcpy(p, d, (size_t)k + 1);
            p += k + 1;
            if (nd > k + 1) {
                *p++ = '.';
                memcpy(p, d + k + 1, (size_t)(nd - k - 1));
                p += nd - k - 1;
            }
        } else {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -k - 1; i++)
                *p++ = '0';
            memcpy(p, d, (size_t)nd);
            p += nd;
        }
    } else { /* %e style with 8 decimals */
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            memcpy(p, d + 1, (size_t)nd - 1);
            p += nd - 1;
        }
        *p++ = 'e';
        *p++ = k < 0 ? '-' : '+';
        int ek = k < 0 ? -k : k;
        p = ek < 10 ? digits(p, (uint64_t)ek, 2) : digits_all(p, (uint64_t)ek);
    }
    *p = '\0';
    return (size_t)(p - buf);
}
