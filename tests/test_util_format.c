/* test_util_format.c: the fast "%.6f" and "%.9g" formatters write what snprintf writes, byte for byte, over random and edge-case values. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/* Compares both formatters with snprintf on v; returns 1 when both agree. */
static int agrees(double v)
{
    char fast[HOG_FORMAT_CHARS], ref[HOG_FORMAT_CHARS];
    size_t n = hog_format_f6(fast, v);
    snprintf(ref, sizeof(ref), "%.6f", v);
    cr_expect_str_eq(fast, ref, "%%.6f of %a", v);
    cr_expect_eq(n, strlen(ref), "%%.6f of %a: length %zu", v, n);
    int ok = strcmp(fast, ref) == 0 && n == strlen(ref);
    n = hog_format_g9(fast, v);
    snprintf(ref, sizeof(ref), "%.9g", v);
    cr_expect_str_eq(fast, ref, "%%.9g of %a", v);
    cr_expect_eq(n, strlen(ref), "%%.9g of %a: length %zu", v, n);
    return ok && strcmp(fast, ref) == 0 && n == strlen(ref);
}

Test(util_format, edge_cases)
{
    const double edges[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, 1e-6, 5e-7, 4.999999e-7, 5.000001e-7, 0.0000005, 0.0000015, 0.0000025,
        0.9999995, 0.99999949999999, 0.12345650000000001, 1e-4, 1e-5, 0.0001, 0.00001, 123456789.0,
        999999999.0, 999999999.5, 999999999.49999994, 1e9, 1e9 - 1, 99999999.95, 0.1, 0.2, 0.3, 1.0 / 3,
        2.0 / 3, 1e13 - 1, 1e13, -1e13, 1e15, 1e22, 1e23, 1e60, 1e-60, 1e300, 1e-300, DBL_MAX, -DBL_MAX,
        DBL_MIN, DBL_TRUE_MIN, FLT_MAX, FLT_MIN, FLT_TRUE_MIN, (double)FLT_EPSILON, DBL_EPSILON,
        (float)0.1, (float)1e-7, (float)123.456, (float)-9.87654321e-3, 1234.5, 0.5e-6, 1.5e-6,
        2.5e-6, INFINITY, -INFINITY, NAN, -NAN,
    };
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        agrees(edges[i]);
    /* every power of ten and its neighbours, where the exponent of %g turns */
    for (int e = -70; e <= 70; e++) {
        double p = pow(10, e);
        agrees(p);
        agrees(nextafter(p, 0));
        agrees(nextafter(p, INFINITY));
        agrees(-p);
        agrees(p * (1 - 5e-10));
        agrees(p * 0.9999999995);
    }
}

/* Ties: values exactly half way between two outputs, which printf rounds
 * to even. */
Test(util_format, exact_ties_round_to_even)
{
    for (int k = 0; k < 4096; k++) {
        agrees((k + 0.5) / 1048576.0 * 1e-0); /* dyadic: exact halves of 2^-20 steps */
        agrees(k * 0.5);                      /* n.5: %.9g keeps them; %.6f too */
        agrees((double)(k * 2 + 1) * 0x1p-21); /* halves of 1e-6 do not occur, near ones do */
        agrees(123456788.5 + k);              /* %.9g: the tenth digit a tie */
        agrees(12345678.25 + k);
    }
    agrees(1000000005.0); /* ten digits ending in 5: a tie at nine */
    agrees(1000000015.0);
    agrees(2.5e-6 * 0x1p-60 * 0x1p60);
}

/* Random values of the kinds predictions hold (probabilities, floats) and
 * arbitrary doubles, fixed seed. */
Test(util_format, random_values)
{
    hog_rng r = {42};
    int bad = 0;
    for (int i = 0; i < 300000 && bad < 10; i++) {
        uint64_t bits = hog_rng_next(&r);
        double p = (double)(bits >> 11) * 0x1p-53;           /* a probability */
        uint32_t fb = (uint32_t)(bits >> 32);
        float f;
        memcpy(&f, &fb, sizeof(f));                            /* any float, NaN and all */
        double scaled = ((double)(bits & 0xffffff) / 0x1p24 - 0.5) * pow(10, (double)(i % 140) - 70);
        double any;
        memcpy(&any, &bits, sizeof(any));
        bad += !agrees(p);
        bad += !agrees(1.0 / (1.0 + exp(-(double)f)));
        bad += !agrees((double)f);
        bad += !agrees(scaled);
        if (i % 8 == 0) /* most arbitrary doubles go to printf itself: few are enough */
            bad += !agrees(any);
    }
    cr_assert_eq(bad, 0);
}

/* The C locale's '.', whatever locale the program runs in. */
Test(util_format, c_locale_whatever_the_program_set)
{
    if (!setlocale(LC_ALL, "de_DE.UTF-8") && !setlocale(LC_ALL, "fr_FR.UTF-8"))
        cr_skip_test("no locale with a decimal comma is installed");
    char buf[HOG_FORMAT_CHARS];
    hog_format_f6(buf, 0.25);
    cr_assert_str_eq(buf, "0.250000");
    hog_format_g9(buf, 1.5);
    cr_assert_str_eq(buf, "1.5");
    hog_format_f6(buf, 1e20); /* printf's path */
    cr_assert_str_eq(buf, "100000000000000000000.000000");
    hog_format_g9(buf, 1e-70);
    cr_assert_str_eq(buf, "1e-70");
    hog_format_g9(buf, 1.25e-70);
    cr_assert_str_eq(buf, "1.25e-70");
    setlocale(LC_ALL, "C");
}
