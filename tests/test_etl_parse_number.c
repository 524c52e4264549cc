/* test_etl_parse_number.c: exact number parsing: every double bit for bit as strtod reads it, what is refused, and the floats of the parsers' fast decimal paths. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

/* ===================================================================== *
 *  Numbers: bitwise the double strtod gives
 * ===================================================================== */

static void expect_same(const char *s, size_t len)
{
    /* tight: the field ends with the number */
    double want = strtod(s, NULL), got = -12345;
    const char *e = hog_parse_double(s, s + len, &got);
    cr_assert_eq(e, s + len, "%s: stopped at %td", s, e ? e - s : -1);
    cr_assert_eq(memcmp(&want, &got, sizeof(double)), 0, "%s: got %a, want %a", s, got, want);
}

Test(etl_parse_number, numbers_match_strtod_bitwise)
{
    static const char *edge[] = {
        "0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.5e3", "00000001", "1e-320", "4.9e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1.7976931348623157e308",
        "1.7976931348623158e308", "1.7976931348623159e308", "2.2250738585072014e-308",
        "2.2250738585072011e-308", "0.1000000000000000055511151231257827",
        "0.1000000000000000055511151231257828", "9007199254740993", "9007199254740992",
        "9007199254740991.5", "123456789012345678901234567890", "1e22", "1e23", "9e22", "1e-22",
        "1e-23", "3.14159265358979323846264338327950288", "0.000000000000000000000000000001",
        "1e400", "-1e400", "1e-400", "0e999999", "1E5", "1e+5", "1e0005", "8.98846567431158e307",
        "4503599627370496.5", "4503599627370497.5", "0.30000000000000004", "1.0000000000000002",
        "7.2057594037927933e16", "123456.7890123", "99999999999999999999e-20",
    };
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
        expect_same(edge[i], strlen(edge[i]));

    /* Random digit strings: 1..25 digits, the point anywhere (or none), a
     * sign, an exponent from -330 to 330 on half of them. Each is checked
     * twice: as a whole field, and followed by a blank and padding (so the
     * word-at-a-time paths that need readable bytes past the number run). */
    hog_rng rng = {2024};
    char buf[96];
    const int n = 5000000;
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        unsigned sign = hog_rng_below(&rng, 4);
        if (sign == 1)
            buf[len++] = '-';
        else if (sign == 2)
            buf[len++] = '+';
        unsigned nd = 1 + hog_rng_below(&rng, hog_rng_below(&rng, 4) == 0 ? 25 : 9);
        unsigned point = hog_rng_below(&rng, nd + 2); /* nd + 1: no point */
        for (unsigned k = 0; k < nd; k++) {
            if (k == point)
                buf[len++] = '.';
            unsigned r = hog_rng_below(&rng, 16);
            buf[len++] = (char)('0' + (r < 10 ? r : r == 10 ? 9 : 0)); /* zeros and nines often */
        }
        if (point == nd)
            buf[len++] = '.';
        if (hog_rng_below(&rng, 2)) {
            int ex = (int)hog_rng_below(&rng, 661) - 330;
            if (hog_rng_below(&rng, 4) == 0)
                ex = (int)hog_rng_below(&rng, 61) - 30;
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%c%d",
                                    hog_rng_below(&rng, 2) ? 'e' : 'E', ex);
        }
        buf[len] = '\0';
        double want = strtod(buf, NULL), got = -12345, got2 = -12345;
        const char *e = hog_parse_double(buf, buf + len, &got);
        if (e != buf + len || memcmp(&want, &got, sizeof(double)) != 0)
            cr_assert_fail("%s: got %a (end %td), want %a", buf, got, e ? e - buf : -1, want);
        memset(buf + len, ' ', 40);
        e = hog_parse_double(buf, buf + len + 40, &got2);
        if (e != buf + len || memcmp(&want, &got2, sizeof(double)) != 0)
            cr_assert_fail("%s (padded): got %a, want %a", buf, got2, want);
    }
}

/* Numbers longer than any stack buffer: strtod reads a bounded copy of
 * their significant digits, and a nonzero digit past them still decides a
 * tie. Halfway points between doubles, written out exactly and continued
 * with zeros, then with a final 1. */
Test(etl_parse_number, long_numbers_match_strtod_bitwise)
{
    static char buf[4096];
    /* 1 + 2^-53, between 1 and the next double (a tie: even, 1), and 2^-1075,
     * between 0 and the least subnormal (a tie: 0); exact in a long double. */
    const long double halves[] = {1.0L + 0x1p-53L, 0x1p-1075L};
    for (size_t h = 0; h < sizeof(halves) / sizeof(halves[0]); h++) {
        int len = snprintf(buf, sizeof(buf), "%.1200Lf", halves[h]);
        cr_assert(len > 1000 && (size_t)len < sizeof(buf));
        expect_same(buf, (size_t)len);
        double tie = strtod(buf, NULL);
        buf[len - 1] = '1';
        expect_same(buf, (size_t)len);
        cr_assert_neq(strtod(buf, NULL), tie, "%.30s...: the final 1 must round up", buf);
    }
    /* Random digit strings of 100 to 3000 digits, the point anywhere, an
     * exponent on half of them. */
    hog_rng rng = {77};
    for (int i = 0; i < 3000; i++) {
        size_t len = 0;
        if (hog_rng_below(&rng, 2))
            buf[len++] = '-';
        unsigned nd = 100 + hog_rng_below(&rng, 2901);
        unsigned point = hog_rng_below(&rng, nd + 1);
        unsigned zeros = hog_rng_below(&rng, 3) == 0 ? hog_rng_below(&rng, nd) : 0; /* leading zeros */
        for (unsigned k = 0; k < nd; k++) {
            if (k == point)
                buf[len++] = '.';
            buf[len++] = k < zeros ? '0' : (char)('0' + hog_rng_below(&rng, 10));
        }
        if (hog_rng_below(&rng, 2))
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "e%d", (int)hog_rng_below(&rng, 6001) - 3000);
        buf[len] = '\0';
        expect_same(buf, len);
    }
}

Test(etl_parse_number, numbers_rejected)
{
    static const char *bad[] = {"", "abc", "nan", "NaN", "inf", "-inf", "Infinity", "-", "+",
                                ".", "-.", "+.e5", "e5", " 1", "--1", "+-1", "x1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        double d;
        cr_assert_null(hog_parse_double(bad[i], bad[i] + strlen(bad[i]), &d), "'%s' accepted",
                       bad[i]);
    }
    /* a number that stops early is not the whole field: callers refuse it */
    double d;
    const char *s = "1.2.3";
    cr_assert_eq(hog_parse_double(s, s + 5, &d), s + 3);
    s = "0x10";
    cr_assert_eq(hog_parse_double(s, s + 4, &d), s + 1);
    s = "1e";
    cr_assert_eq(hog_parse_double(s, s + 2, &d), s + 1);
    s = "1e+";
    cr_assert_eq(hog_parse_double(s, s + 3, &d), s + 1);
    /* the end is respected: "12" of "123" */
    s = "123";
    cr_assert_eq(hog_parse_double(s, s + 2, &d), s + 2);
    cr_assert_eq(d, 12.0);
    /* huge exponents give strtod's inf, which the parsers refuse as not finite */
    s = "1e999";
    cr_assert_eq(hog_parse_double(s, s + 5, &d), s + 5);
    cr_assert(isinf(d));
}

/* n decimals of the forms the word-at-a-time paths take: [-]digits, or
 * [-]up to 7 digits . up to 7 digits, zero-padded fractions included. */
static char (*random_decimals(int n, uint64_t seed))[40]
{
    hog_rng rng = {seed};
    char (*num)[40] = malloc((size_t)n * sizeof(*num));
    cr_assert_not_null(num);
    for (int i = 0; i < n; i++) {
        unsigned a = hog_rng_below(&rng, 10000000), f = hog_rng_below(&rng, 8);
        int w = (int)hog_rng_below(&rng, 8);
        if (f == 7)
            snprintf(num[i], 40, "%s%u", hog_rng_below(&rng, 2) ? "-" : "", a);
        else
            snprintf(num[i], 40, "%s%u.%0*u", hog_rng_below(&rng, 2) ? "-" : "",
                     a % (unsigned)pow(10, f), w, hog_rng_below(&rng, 10000000) % (unsigned)pow(10, w));
    }
    return num;
}

/* n decimals exactly halfway between two floats: an odd 25-bit significand
 * times 2^-k, written with k = 1..7 decimals (9 to 14 digits). */
static char (*float_midpoints(int n, uint64_t seed))[40]
{
    hog_rng rng = {seed};
    char (*num)[40] = malloc((size_t)n * sizeof(*num));
    cr_assert_not_null(num);
    for (int i = 0; i < n; i++) {
        unsigned k = 1 + (unsigned)i % 7;
        uint64_t m = (uint64_t)(1u << 24) + 1 + 2 * hog_rng_below(&rng, 1u << 23);
        for (unsigned j = 0; j < k; j++)
            m *= 5;
        char digits[24];
        int w = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)m);
        snprintf(num[i], 40, "%s%.*s.%s", i % 3 ? "" : "-", w - (int)k, digits, digits + w - (int)k);
    }
    return num;
}

/* Parses one value per line ("1,V" or "1 1:V") and checks each against
 * (float)strtod, bit for bit; frees num. */
static void values_match_strtod(hog_format fmt, int n, char (*num)[40])
{
    size_t cap = (size_t)n * 48 + 64, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, fmt == HOG_FORMAT_CSV ? "1,%s\n" : "1 1:%s\n", num[i]);
    hog_read_params p = params(fmt);
    p.header = 0;
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        float want = (float)strtod(num[i], NULL);
        uint32_t k = r.ptr[i + 1] - r.ptr[i];
        float got = k ? r.value[r.ptr[i]] : 0.0f;
        cr_assert_eq(memcmp(&want, &got, 4) == 0 || (want == 0 && got == 0), 1,
                     "%s: got %a, want %a", num[i], (double)got, (double)want);
    }
    hog_rows_free(&r);
    free(text);
    free(num);
}

Test(etl_parse_number, chunk_values_are_strtod_floats)
{
    /* CSV and libsvm values multiply by 10^-k instead of dividing: the
     * float must still be (float)strtod's, up to 14 digits. */
    values_match_strtod(HOG_FORMAT_CSV, 100000, random_decimals(100000, 99));
}

Test(etl_parse_number, libsvm_values_are_strtod_floats)
{
    values_match_strtod(HOG_FORMAT_LIBSVM, 400000, random_decimals(400000, 7));
}

Test(etl_parse_number, float_midpoints_round_to_even)
{
    /* Halfway between two floats (float)strtod rounds to even, where
     * m * 10^-k, off by an ulp of double, may round to either side. */
    values_match_strtod(HOG_FORMAT_CSV, 40000, float_midpoints(40000, 31));
    values_match_strtod(HOG_FORMAT_LIBSVM, 40000, float_midpoints(40000, 37));
}
