/* etl_parse_number.c: the exact decimal number parser: every number as strtod reads it in the C locale, by Clinger's fast path where it can. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl_parse.h"

/* The rare forms: many digits, large exponents, subnormals. [s, p) has
 * already been checked against the grammar, so strtod must take all of it.
 * strtod needs a string of its own, and a number can be as long as a line:
 * it gets a bounded copy on the stack instead, "[-]0.DIGITS" and a decimal
 * exponent, which rounds to the same double. Its significant digits stop
 * at SLOW_DIGITS, followed by a '1' when a digit dropped was not 0: the
 * halfway points between doubles have at most 767 significant digits, so
 * the digits past them only tell which side of one the number lies on,
 * and the '1' keeps that side. */
#define SLOW_DIGITS 780

static const char *number_slow(const char *s, const char *p, double *out)
{
    char buf[SLOW_DIGITS + 32];
    size_t n = 0;
    const char *q = s;
    if (*q == '-' || *q == '+')
        buf[n++] = *q++;
    buf[n++] = '0';
    buf[n++] = '.';
    size_t digits = 0;
    int64_t point = 0; /* the number is 0.DIGITS x 10^(point + exponent) */
    int seen = 0, frac = 0, sticky = 0;
    for (; q < p && *q != 'e' && *q != 'E'; q++) {
        if (*q == '.') {
            frac = 1;
        } else if (!seen && *q == '0') {
            point -= frac;
        } else {
            seen = 1;
            point += !frac;
            if (digits < SLOW_DIGITS) {
                buf[n++] = *q;
                digits++;
            } else if (*q != '0') {
                sticky = 1;
            }
        }
    }
    if (sticky)
        buf[n++] = '1';
    if (!seen)
        buf[n++] = '0';
    int64_t e = 0;
    if (q < p) { /* [eE] [+-] digits */
        int neg = *++q == '-';
        q += *q == '-' || *q == '+';
        for (; q < p; q++)
            if (e < 1000000000) /* strtod takes it as far out of range all the same */
                e = e * 10 + (*q - '0');
        e = neg ? -e : e;
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "e%lld", (long long)(e + point));
    /* strtod_l in the process's one C locale (util_number.c), so '.' is the
     * decimal point whatever the program's locale; if it could not be made,
     * strtod under the process locale is the fallback (the C locale unless
     * the program called setlocale). */
    locale_t c = hog_c_locale();
    char *end;
    double d = c != (locale_t)0 ? strtod_l(buf, &end, c) : strtod(buf, &end);
    *out = d;
    return end == buf + n ? p : NULL;
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
