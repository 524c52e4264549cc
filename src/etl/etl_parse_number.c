/* etl_parse_number.c: the exact decimal number parser: every number as strtod reads it in the C locale, by Clinger's fast path where it can. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "etl_parse.h"

/* The rare forms: many digits, large exponents, subnormals. [s, p) has
 * already been checked against the grammar, so strtod must take all of it. */
static const char *number_slow(const char *s, const char *p, double *out)
{
    size_t n = (size_t)(p - s);
    char small[128];
    char *buf = n < sizeof(small) ? small : hog_malloc(n + 1);
    if (!buf)
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    /* strtod_l in the process's one C locale (util_number.c), so '.' is the
     * decimal point whatever the program's locale; if it could not be made,
     * strtod under the process locale is the fallback (the C locale unless
     * the program called setlocale). */
    locale_t c = hog_c_locale();
    char *e;
    double d = c != (locale_t)0 ? strtod_l(buf, &e, c) : strtod(buf, &e);
    const char *r = e == buf + n ? p : NULL;
    if (buf != small)
        hog_free(buf);
    *out = d;
    return r;
}

/* Parses [+-] digits [. digits] [(e|E) [+-] digits], with digits on at least
 * one side of the point, at s and not past end; returns where it ends, or
 * NULL if no number starts at s. Hex floats, "inf" and "nan", which strtod
 * would take and no data file means, are refused by this grammar.
 *
 * Most numbers in data files have few digits and a small exponent: with at
 * most 19 significant digits the mantissa m is exact in a uint64; if also
 * m <= 2^53 and |exponent| <= 22, both m and 10^|exponent| are exact
 * doubles, and one IEEE multiply or divide rounds their product correctly:
 * the double strtod returns (Clinger's fast path). Larger exponents whose
 * excess over 22 fits in m's headroom are shifted into m first. Everything
 * else goes to strtod_l. */
const char *hog_scan_number_general(const char *s, const char *end, double *out)
{
    const char *p = s;
    int neg = 0;
    if (p < end && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    const char *digits = p;
    while (p < end && *p == '0')
        p++;
    uint64_t m = 0;
    const char *sig = p;
    while (p < end && is_digit(*p))
        m = m * 10 + (uint64_t)(*p++ - '0');
    size_t nsig = (size_t)(p - sig);
    int any = p > digits;
    int64_t exp10 = 0;
    if (p < end && *p == '.') {
        const char *frac = ++p;
        if (nsig == 0) /* 0.000123: zeros before the first significant digit */
            while (p < end && *p == '0')
                p++;
        const char *fsig = p;
        while (p < end && is_digit(*p))
            m = m * 10 + (uint64_t)(*p++ - '0');
        nsig += (size_t)(p - fsig);
        exp10 = -(int64_t)(p - frac);
        any |= p > frac;
    }
    if (!any)
        return NULL;
    if (p < end && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        int eneg = 0;
        if (q < end && (*q == '-' || *q == '+')) {
            eneg = *q == '-';
            q++;
        }
        if (q < end && is_digit(*q)) { /* else the 'e' is not part of the number */
            int64_t e = 0;
            for (; q < end && is_digit(*q); q++)
                if (e < 100000)
                    e = e * 10 + (*q - '0');
            exp10 += eneg ? -e : e;
            p = q;
        }
    }
    if (HOG_LIKELY(nsig <= 19)) {
        if (m == 0) {
            *out = neg ? -0.0 : 0.0;
            return p;
        }
        if (HOG_LIKELY(m <= (1ULL << 53))) {
            double d;
            if (exp10 >= -22 && exp10 <= 22) {
                d = exp10 < 0 ? (double)m / pow10_exact[-exp10] : (double)m * pow10_exact[exp10];
                *out = neg ? -d : d;
                return p;
            }
            if (exp10 > 22 && exp10 <= 22 + 16 && m <= (1ULL << 53) / pow10_int[exp10 - 22]) {
                d = (double)(m * pow10_int[exp10 - 22]) * 1e22;
                *out = neg ? -d : d;
                return p;
            }
        }
    }
    return number_slow(s, p, out);
}

const char *hog_parse_double(const char *s, const char *end, double *out)
{
    return scan_number(s, end, end, out);
}
