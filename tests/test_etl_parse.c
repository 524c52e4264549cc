/* test_etl_parse.c: the chunk parsers (libsvm, CSV, VW), their plans, located errors, skip mode, feature hashing and exact number parsing. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

/* ===================================================================== *
 *  Helpers
 * ===================================================================== */

static hog_read_params params(hog_format fmt)
{
    hog_read_params p = hog_read_params_default();
    p.format = fmt;
    p.index_base = 0; /* indices as written, unless a test says otherwise */
    return p;
}

static void plan_ok(const hog_read_params *p, const char *text, hog_text_plan *plan)
{
    char err[512] = "";
    int rc = hog_text_plan_make("t.txt", p, text, strlen(text), plan, err, sizeof(err));
    cr_assert_eq(rc, 0, "plan: %s (%s)", hog_strerror(rc), err);
}

static void plan_fails(const hog_read_params *p, const char *text, int want, const char *msg)
{
    char err[512] = "";
    hog_text_plan plan;
    int rc = hog_text_plan_make("t.txt", p, text, strlen(text), &plan, err, sizeof(err));
    cr_assert_eq(rc, want, "plan: got %d (%s), want %d: %s", rc, hog_strerror(rc), want, err);
    cr_assert_str_eq(err, msg);
}

/* Plans from the text, parses it all after the header as one chunk. */
static void parse_ok(const hog_read_params *p, const char *text, hog_rows *r)
{
    hog_text_plan plan;
    plan_ok(p, text, &plan);
    memset(r, 0, sizeof(*r));
    hog_text_error e;
    memset(&e, 0, sizeof(e));
    size_t h = (size_t)plan.header_bytes;
    int rc = hog_parse_chunk(&plan, text + h, strlen(text) - h, r, &e);
    cr_assert_eq(rc, 0, "parse: %s at %llu:%u: %s", hog_strerror(rc), (unsigned long long)e.line,
                 e.column, e.what);
    hog_text_plan_free(&plan);
}

/* Parses text that must fail in stop mode with "line:column: what". */
static void parse_fails(const hog_read_params *p, const char *text, const char *want)
{
    hog_text_plan plan;
    plan_ok(p, text, &plan);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    hog_text_error e;
    memset(&e, 0, sizeof(e));
    size_t h = (size_t)plan.header_bytes;
    int rc = hog_parse_chunk(&plan, text + h, strlen(text) - h, &r, &e);
    cr_assert_eq(rc, HOG_EFORMAT, "%s: got %d, want HOG_EFORMAT", text, rc);
    char got[256];
    snprintf(got, sizeof(got), "%llu:%u: %s", (unsigned long long)e.line, e.column, e.what);
    cr_assert_str_eq(got, want, "input %s", text);
    hog_rows_free(&r);
    hog_text_plan_free(&plan);
}

static void check_row(const hog_rows *r, uint64_t i, float label, uint32_t nnz, const uint32_t *idx,
                      const float *val)
{
    cr_assert(i < r->rows, "row %lu of %lu", (unsigned long)i, (unsigned long)r->rows);
    cr_assert_float_eq(r->label[i], label, 1e-6f, "row %lu label %g", (unsigned long)i,
                       (double)r->label[i]);
    uint32_t n = r->ptr[i + 1] - r->ptr[i];
    cr_assert_eq(n, nnz, "row %lu: nnz %u, want %u", (unsigned long)i, n, nnz);
    for (uint32_t k = 0; k < nnz; k++) {
        cr_assert_eq(r->index[r->ptr[i] + k], idx[k], "row %lu pair %u index %u, want %u",
                     (unsigned long)i, k, r->index[r->ptr[i] + k], idx[k]);
        cr_assert_float_eq(r->value[r->ptr[i] + k], val[k], 1e-6f, "row %lu pair %u value",
                           (unsigned long)i, k);
    }
}

/* Every row's indices strictly increasing. */
static void check_sorted(const hog_rows *r)
{
    for (uint64_t i = 0; i < r->rows; i++)
        for (uint32_t k = r->ptr[i] + 1; k < r->ptr[i + 1]; k++)
            cr_assert(r->index[k - 1] < r->index[k], "row %lu not increasing", (unsigned long)i);
}

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

Test(etl_parse, numbers_match_strtod_bitwise)
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

Test(etl_parse, numbers_rejected)
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

Test(etl_parse, chunk_values_are_strtod_floats)
{
    /* CSV and libsvm values multiply by 10^-k instead of dividing: the
     * float must still be (float)strtod's, up to 14 digits. */
    values_match_strtod(HOG_FORMAT_CSV, 100000, random_decimals(100000, 99));
}

Test(etl_parse, libsvm_values_are_strtod_floats)
{
    values_match_strtod(HOG_FORMAT_LIBSVM, 400000, random_decimals(400000, 7));
}

Test(etl_parse, float_midpoints_round_to_even)
{
    /* Halfway between two floats (float)strtod rounds to even, where
     * m * 10^-k, off by an ulp of double, may round to either side. */
    values_match_strtod(HOG_FORMAT_CSV, 40000, float_midpoints(40000, 31));
    values_match_strtod(HOG_FORMAT_LIBSVM, 40000, float_midpoints(40000, 37));
}

/* ===================================================================== *
 *  Hashing
 * ===================================================================== */

Test(etl_parse, murmur3_reference_values)
{
    /* MurmurHash3_x86_32's published test values */
    cr_assert_eq(hog_hash_feature("", 0, 0, 0), 0u);
    cr_assert_eq(hog_hash_feature("", 0, 1, 0), 0x514e28b7u);
    cr_assert_eq(hog_hash_feature("", 0, 0xffffffffu, 0), 0x81f16f39u);
    cr_assert_eq(hog_hash_feature("hello", 5, 0, 0), 0x248bfa47u);
    cr_assert_eq(hog_hash_feature("aaaa", 4, 0x9747b28cu, 0), 0x5a97808au);
    cr_assert_eq(hog_hash_feature("abc", 3, 0x9747b28cu, 0), 0xc84a62ddu);
    cr_assert_eq(hog_hash_feature("Hello, world!", 13, 0x9747b28cu, 0), 0x24884cbau);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    cr_assert_eq(hog_hash_feature(fox, strlen(fox), 0, 0), 0x2e4ff723u);
    cr_assert_eq(hog_hash_feature(fox, strlen(fox), 0, 18), 0x2e4ff723u & 0x3ffffu);
    cr_assert_eq(hog_hash_feature("hello", 5, 0, 31), 0x248bfa47u & 0x7fffffffu);
}

/* ===================================================================== *
 *  libsvm
 * ===================================================================== */

Test(etl_parse, libsvm_rows_comments_qid_crlf_last_line)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_rows r;
    parse_ok(&p,
             "# a comment line\n"
             "1 1:0.5 3:2\n"
             "\n"
             "-1 2:1.5 # trailing comment\n"
             "   \t\n"
             "0 qid:3 1:1 4:0 5:-2\r\n"
             "+1.5\t7:1e-1\t\t9:3\n"
             "2\n"
             "3 10:0.25 11:-0.000001",
             &r);
    cr_assert_eq(r.lines, 9);
    cr_assert_eq(r.rows, 6);
    cr_assert_eq(r.nnz, 9); /* 4:0 is not stored */
    check_row(&r, 0, 1, 2, (uint32_t[]){1, 3}, (float[]){0.5f, 2});
    check_row(&r, 1, -1, 1, (uint32_t[]){2}, (float[]){1.5f});
    check_row(&r, 2, 0, 2, (uint32_t[]){1, 5}, (float[]){1, -2});
    check_row(&r, 3, 1.5f, 2, (uint32_t[]){7, 9}, (float[]){0.1f, 3});
    check_row(&r, 4, 2, 0, NULL, NULL);
    check_row(&r, 5, 3, 2, (uint32_t[]){10, 11}, (float[]){0.25f, -0.000001f});
    hog_rows_free(&r);
}

Test(etl_parse, libsvm_long_rows_word_paths)
{
    /* long lines so that the fast pair path runs, with every digit count */
    char *text = malloc(1 << 20);
    cr_assert_not_null(text);
    size_t len = 0;
    for (int row = 0; row < 50; row++) {
        len += (size_t)sprintf(text + len, "%d", row % 3);
        uint32_t idx = 0;
        for (int k = 0; k < 60; k++) {
            idx += 1 + (uint32_t)(k * 7919 + row * 104729) % (k < 30 ? 10 : 100000);
            len += (size_t)sprintf(text + len, " %u:%d.%0*d", idx, k % 9, k % 8, k * 37 % 1000);
        }
        text[len++] = '\n';
    }
    text[len] = '\0';
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, 50);
    check_sorted(&r);
    /* compare with a plain reading of the same text */
    const char *s = text;
    for (uint64_t i = 0; i < r.rows; i++) {
        char *e;
        cr_assert_eq(r.label[i], (float)strtod(s, &e));
        s = e;
        uint32_t k = r.ptr[i];
        while (*s == ' ') {
            unsigned long ix = strtoul(s + 1, &e, 10);
            float v = (float)strtod(e + 1, &e);
            s = e;
            if (v == 0.0f)
                continue;
            cr_assert_eq(r.index[k], ix);
            cr_assert_eq(r.value[k], v);
            k++;
        }
        cr_assert_eq(k, r.ptr[i + 1]);
        s++;
    }
    hog_rows_free(&r);
    free(text);
}

/* One libsvm line of random pairs: indices of 1 to 10 digits, values with
 * or without a sign, a dot, an exponent, 0 to 9 digits on either side;
 * spaces, tabs, double blanks, trailing blanks, CRLF and comments. */
static size_t random_libsvm_line(hog_rng *g, char *out)
{
    size_t n = (size_t)sprintf(out, "%u", hog_rng_below(g, 2));
    uint64_t idx = hog_rng_below(g, 3) ? hog_rng_below(g, 10) : (uint64_t)pow(10, hog_rng_below(g, 10));
    uint64_t step = 1 + (uint64_t)pow(10, hog_rng_below(g, 8));
    for (unsigned k = 0, pairs = hog_rng_below(g, 80); k < pairs && idx <= UINT32_MAX; k++) {
        unsigned sep = hog_rng_below(g, 40);
        n += (size_t)sprintf(out + n, "%s%llu:", sep == 0 ? "\t" : sep == 1 ? "  " : " ",
                             (unsigned long long)idx);
        if (hog_rng_below(g, 3) == 0)
            out[n++] = '-';
        unsigned ni = hog_rng_below(g, 10), nf = hog_rng_below(g, 10), dot = hog_rng_below(g, 4) != 0;
        if (ni + nf == 0 || !dot)
            ni++;
        for (unsigned i = 0; i < ni; i++)
            out[n++] = (char)('0' + hog_rng_below(g, i == 0 && ni > 1 && hog_rng_below(g, 2) ? 1 : 10));
        if (dot) {
            out[n++] = '.';
            for (unsigned i = 0; i < nf; i++)
                out[n++] = (char)('0' + hog_rng_below(g, 10));
        }
        if (hog_rng_below(g, 50) == 0)
            n += (size_t)sprintf(out + n, "e%d", (int)hog_rng_below(g, 20) - 10);
        idx += 1 + hog_rng_below(g, (uint32_t)HOG_MIN(step, UINT32_MAX));
    }
    unsigned end = hog_rng_below(g, 40);
    n += (size_t)sprintf(out + n, "%s", end == 0 ? " \n" : end == 1 ? "\r\n" : end == 2 ? " # note 1:2\n" : "\n");
    return n;
}

Test(etl_parse, libsvm_random_pairs_match_strtod)
{
    /* Every pair shape the fast and general paths split between, in lines
     * long enough for the fast path, read as strtoul and (float)strtod do. */
    enum { LINES = 4000 };
    hog_rng g = {2024};
    char *text = malloc((size_t)LINES * 2048);
    cr_assert_not_null(text);
    size_t len = 0;
    for (int i = 0; i < LINES; i++)
        len += random_libsvm_line(&g, text + len);
    text[len] = '\0';
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, LINES);
    const char *s = text;
    for (uint64_t i = 0; i < r.rows; i++) {
        const char *le = strchr(s, '\n'), *hash = memchr(s, '#', (size_t)(le - s));
        if (hash)
            le = hash;
        char *e;
        cr_assert_eq(r.label[i], (float)strtod(s, &e));
        uint32_t k = r.ptr[i];
        for (s = e; s < le;) {
            s += strspn(s, " \t\r");
            if (s >= le)
                break;
            unsigned long ix = strtoul(s, &e, 10);
            cr_assert_eq(*e, ':', "line %lu: %.30s", (unsigned long)i + 1, s);
            const char *vs = e + 1;
            float v = (float)strtod(vs, &e);
            s = e;
            if (v == 0.0f)
                continue;
            cr_assert(k < r.ptr[i + 1], "line %lu: too few pairs", (unsigned long)i + 1);
            cr_assert_eq(r.index[k], ix, "line %lu: index %u, want %lu", (unsigned long)i + 1, r.index[k], ix);
            cr_assert_eq(memcmp(&r.value[k], &v, 4), 0, "line %lu: %.*s read as %a, want %a",
                         (unsigned long)i + 1, (int)(e - vs), vs, (double)r.value[k], (double)v);
            k++;
        }
        cr_assert_eq(k, r.ptr[i + 1], "line %lu: %u pairs, want %u", (unsigned long)i + 1,
                     r.ptr[i + 1] - r.ptr[i], k - r.ptr[i]);
        s = strchr(s, '\n') + 1;
    }
    hog_rows_free(&r);
    free(text);
}

/* Parses text as one chunk with the plan given; returns hog_parse_chunk's code. */
static int parse_with(const hog_text_plan *plan, const char *text, hog_rows *r, hog_text_error *e)
{
    memset(r, 0, sizeof(*r));
    memset(e, 0, sizeof(*e));
    return hog_parse_chunk(plan, text, strlen(text), r, e);
}

Test(etl_parse, libsvm_pairs_read_alike_at_line_start_and_deep_in_a_chunk)
{
    /* A token first in a short chunk (the general path reads it) and deep
     * in a long one (the fast path sees it first) must give the same pairs,
     * or the same error at the same place. Random tokens of digits, colons,
     * signs, dots, exponents and strays, plus the edge cases by hand. */
    static const char *const edge[] = {
        "1:5",        "1:-5",        "1:.5",       "1:5.",      "1:-.5",      "1:-5.",      "1:",
        "1:-",        "1:.",         "1:-.",       ":5",        "1::5",       "1:--5",      "1:5-",
        "1:.-5",      "1:5.5.5",     "1:5e",       "1:5e3",     "1:0x1",      "-1:5",       "1:+5",
        "12345678:1", "123456789:1", "1:12345678", "1:.12345678", "1:1.2345678", "1:123456789",
        "1:1234567.1", "1:-12345678", "1:0.000000001", "4294967295:1", "4294967296:1", "1:5#x",
        "1:5:6",      "1:1e400",     "1:00000001", "00000001:1",   "1:0.00392157", "1:-0.00392157",
        "1:00.12345678", "1:000123456789", "1:0.000392157", "1:10.1234567", "1:10.12345678",
        "1:0.12345678", "1:00000000.5", "1:01.2345678", "1:100000000", "1:1000.0000"
    };
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_text_plan plan;
    plan_ok(&p, "1 1:1\n", &plan);
    hog_rng g = {77};
    static const char alphabet[] = "0123456789012345678901234567890123456789::-.e+x";
    for (int t = 0; t < 20000; t++) {
        char tok[32];
        if (t < (int)(sizeof(edge) / sizeof(edge[0]))) {
            snprintf(tok, sizeof(tok), "%s", edge[t]);
        } else {
            unsigned n = 1 + hog_rng_below(&g, 16);
            for (unsigned i = 0; i < n; i++)
                tok[i] = alphabet[hog_rng_below(&g, (uint32_t)sizeof(alphabet) - 1)];
            tok[n] = '\0';
        }
        char shrt[64], lng[256];
        snprintf(shrt, sizeof(shrt), "1 %s\n", tok);
        snprintf(lng, sizeof(lng), "1 0:1 1:1 2:1 3:1\n1 %s\n1 0:1 1:1 2:1 3:1 4:1 5:1 6:1 7:1 8:1\n", tok);
        hog_rows rs, rl;
        hog_text_error es, el;
        int cs = parse_with(&plan, shrt, &rs, &es), cl = parse_with(&plan, lng, &rl, &el);
        cr_assert_eq(cs, cl, "%s: %d alone, %d deep", tok, cs, cl);
        if (cs) {
            cr_assert_str_eq(es.what, el.what, "%s", tok);
            cr_assert_eq(el.line, 2, "%s", tok);
            cr_assert_eq(el.column, es.column, "%s: column %u alone, %u deep", tok, es.column, el.column);
        } else {
            uint32_t n = rs.ptr[1];
            cr_assert_eq(rl.ptr[2] - rl.ptr[1], n, "%s", tok);
            cr_assert_eq(memcmp(rl.index + rl.ptr[1], rs.index, n * 4), 0, "%s: indices", tok);
            cr_assert_eq(memcmp(rl.value + rl.ptr[1], rs.value, n * 4), 0, "%s: values", tok);
        }
        hog_rows_free(&rs);
        hog_rows_free(&rl);
    }
    hog_text_plan_free(&plan);
}

Test(etl_parse, libsvm_errors_are_located)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    parse_fails(&p, "1 1:1\n0 2:1\n1 3:1.5 x 4:1\n", "3:9: expected index:value, found 'x'");
    parse_fails(&p, "1 1:1\n\n\n\n1 3:1 7:1 3:2\n",
                "5:11: expected an index greater than 7, found 3");
    parse_fails(&p, "1 3:1 3:2\n", "1:7: expected an index greater than 3, found 3");
    parse_fails(&p, "abc 1:1\n", "1:1: expected a number, found 'abc'");
    parse_fails(&p, "1 2:abc\n", "1:5: expected a number, found 'abc'");
    parse_fails(&p, "1 2:\n", "1:5: expected a number, found end of line");
    parse_fails(&p, "1 2:", "1:5: expected a number, found end of line");
    parse_fails(&p, "1 2: 3:1\n", "1:5: expected a number, found ' '");
    parse_fails(&p, "1 2:1e999\n", "1:5: expected a finite number, found '1e999'");
    parse_fails(&p, "nan 1:1\n", "1:1: expected a number, found 'nan'");
    parse_fails(&p, "1 2:inf\n", "1:5: expected a number, found 'inf'");
    parse_fails(&p, "1 2:1.5x\n", "1:5: expected a number, found '1.5x'");
    parse_fails(&p, "1 2:1.2.3\n", "1:5: expected a number, found '1.2.3'");
    parse_fails(&p, "1 2:0x10\n", "1:5: expected a number, found '0x10'");
    parse_fails(&p, "1 4294967296:1\n",
                "1:3: expected an index below 4294967296, found '4294967296:1'");
    parse_fails(&p, "1 -3:1\n", "1:3: expected index:value, found '-3:1'");
    parse_fails(&p, "1 1:1 qid:2\n", "1:7: expected index:value, found 'qid:2'");
    parse_fails(&p, "1 qid:x 1:1\n", "1:7: expected a query id, found 'x'");
    parse_fails(&p, "1 2:1 3:123456789012345678901234567890123456789012345\n",
                "1:9: expected a finite number, found '12345678901234567890...'");
    parse_fails(&p, "1 2:1\n1 3:1\r4:1\n", "2:5: expected a number, found '1?4:1'");
    /* the same errors deep in long lines (the fast pair path sees them first) */
    parse_fails(&p, "1 1:0.5 2:0.5 3:0.5 4:0.5 5:0.5 6:0.5 7:0.5 8:0.5 9:0.5 9:0.5\n",
                "1:57: expected an index greater than 9, found 9");
    parse_fails(&p, "1 1:0.5 2:0.5 3:0.5 4:0.5 5:0.5 6:0.5 7:0.5 8:0.5 9:0.5x 10:0.5\n",
                "1:53: expected a number, found '0.5x'");
}

Test(etl_parse, libsvm_index_base_one)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.index_base = 1;
    hog_rows r;
    parse_ok(&p, "1 1:1 3:2 4294967295:3\n", &r);
    check_row(&r, 0, 1, 3, (uint32_t[]){0, 2, 4294967294u}, (float[]){1, 2, 3});
    hog_rows_free(&r);
    parse_fails(&p, "1 0:1 3:2\n", "1:3: expected an index of at least 1 (indices are 1-based), found 0");
}

Test(etl_parse, libsvm_hashing_merges_collisions)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.hash_bits = 1; /* two buckets: eight indices must collide */
    hog_rows r;
    parse_ok(&p, "1 1:1 2:2 3:4 4:8 5:16 6:32 7:64 8:128\n0 5:1\n", &r);
    cr_assert_eq(r.rows, 2);
    check_sorted(&r);
    uint32_t n = r.ptr[1] - r.ptr[0];
    cr_assert(n >= 1 && n <= 2);
    float sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        cr_assert(r.index[k] < 2);
        sum += r.value[k];
    }
    cr_assert_float_eq(sum, 255.0f, 1e-3f);
    /* each bucket is the sum of the indices that hash there */
    float want[2] = {0, 0};
    for (uint32_t ix = 1; ix <= 8; ix++) {
        unsigned char b[4] = {(unsigned char)ix, 0, 0, 0};
        want[hog_hash_feature((const char *)b, 4, 0, 1)] += (float)(1u << (ix - 1));
    }
    for (uint32_t k = 0; k < n; k++)
        cr_assert_float_eq(r.value[k], want[r.index[k]], 1e-3f);
    hog_rows_free(&r);

    /* values that cancel when merged are dropped */
    p.hash_bits = 20;
    parse_ok(&p, "1 1:1 2:2\n", &r);
    check_sorted(&r);
    hog_rows_free(&r);
}

Test(etl_parse, skip_mode_counts_and_keeps_first_errors)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.on_error = HOG_ON_ERROR_SKIP;
    hog_text_plan plan;
    const char *text = "1 1:1\nx\n1 2:1\n2 2:1 1:1\n3 a\n\n4 5:z\n5 6:6\n6 :1\n7 1:\n8 8:8\n";
    plan_ok(&p, text, &plan);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(hog_parse_chunk(&plan, text, strlen(text), &r, NULL), 0);
    cr_assert_eq(r.lines, 11);
    cr_assert_eq(r.skipped, 6);
    cr_assert_eq(r.kept, HOG_TEXT_ERRORS_KEPT);
    cr_assert_eq(r.rows, 4);
    check_row(&r, 0, 1, 1, (uint32_t[]){1}, (float[]){1});
    check_row(&r, 1, 1, 1, (uint32_t[]){2}, (float[]){1});
    check_row(&r, 2, 5, 1, (uint32_t[]){6}, (float[]){6});
    check_row(&r, 3, 8, 1, (uint32_t[]){8}, (float[]){8});
    cr_assert_eq(r.nnz, 4); /* skipped lines leave no values behind */
    static const uint64_t lines[] = {2, 4, 5, 7, 9};
    static const uint32_t cols[] = {1, 7, 3, 5, 3};
    for (int i = 0; i < HOG_TEXT_ERRORS_KEPT; i++) {
        cr_assert_eq(r.errors[i].line, lines[i], "error %d line %llu", i,
                     (unsigned long long)r.errors[i].line);
        cr_assert_eq(r.errors[i].column, cols[i], "error %d column %u", i, r.errors[i].column);
    }
    cr_assert_str_eq(r.errors[1].what, "expected an index greater than 2, found 1");

    /* rows are appended and cleared for reuse */
    hog_rows_clear(&r);
    cr_assert_eq(r.rows, 0);
    cr_assert_eq(r.skipped, 0);
    cr_assert_eq(hog_parse_chunk(&plan, "1 1:1\n", 6, &r, NULL), 0);
    cr_assert_eq(r.rows, 1);
    cr_assert_eq(r.lines, 1);
    hog_rows_free(&r);
    hog_rows_free(&r); /* a freed one can be freed again */
    hog_text_plan_free(&plan);
}

Test(etl_parse, chunks_have_relative_lines)
{
    /* Two chunks of one file: the second's errors count from its own start. */
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_text_plan plan;
    const char *text = "1 1:1\n1 2:2\n1 3:3\n1 4:x\n";
    plan_ok(&p, text, &plan);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    hog_text_error e;
    cr_assert_eq(hog_parse_chunk(&plan, text, 12, &r, &e), 0);
    cr_assert_eq(r.lines, 2);
    hog_rows_clear(&r);
    cr_assert_eq(hog_parse_chunk(&plan, text + 12, strlen(text) - 12, &r, &e), HOG_EFORMAT);
    cr_assert_eq(e.line, 2);
    cr_assert_eq(e.column, 5);
    cr_assert_str_eq(e.what, "expected a number, found 'x'");
    cr_assert_eq(r.rows, 1);
    hog_rows_free(&r);
    hog_text_plan_free(&plan);
}

Test(etl_parse, empty_chunk)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_text_plan plan;
    plan_ok(&p, "", &plan);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(hog_parse_chunk(&plan, "", 0, &r, NULL), 0);
    cr_assert_eq(r.rows, 0);
    cr_assert_eq(r.lines, 0);
    cr_assert_not_null(r.ptr);
    cr_assert_eq(r.ptr[0], 0);
    hog_rows_free(&r);
    hog_text_plan_free(&plan);
}

/* ===================================================================== *
 *  CSV
 * ===================================================================== */

Test(etl_parse, csv_header_quotes_crlf_empty_fields)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    hog_text_plan plan;
    const char *text = "\n\"y\",a,\"b,c\"\r\n1,0.5,\"2\"\r\n0,,3\r\n-1, 3 ,\"\"\r\n2,\" 4\",0";
    plan_ok(&p, text, &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_CSV);
    cr_assert_eq(plan.fields, 3);
    cr_assert_eq(plan.delimiter, ',');
    cr_assert_eq(plan.header_lines, 2);
    cr_assert_eq(plan.header_bytes, (uint64_t)(strstr(text, "\r\n1,") + 2 - text));
    cr_assert_str_eq(plan.column_name[2], "b,c");
    hog_text_plan_free(&plan);
    hog_rows r;
    /* the last line: a quoted number must be exactly a number */
    parse_fails(&p, text, "4:3: expected a number, found '\"'");
    const char *good = "y,a,b\r\n1,0.5,\"2\"\r\n0,,3\r\n-1, 3 ,\"\"\r\n2,\"4\",0";
    parse_ok(&p, good, &r);
    cr_assert_eq(r.rows, 4);
    cr_assert_eq(r.lines, 4);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){0.5f, 2});
    check_row(&r, 1, 0, 1, (uint32_t[]){1}, (float[]){3});
    check_row(&r, 2, -1, 1, (uint32_t[]){0}, (float[]){3});
    check_row(&r, 3, 2, 1, (uint32_t[]){0}, (float[]){4});
    hog_rows_free(&r);
}

Test(etl_parse, csv_errors_are_located)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    parse_fails(&p, "1,2,3\n4,5\n", "2:4: expected 3 fields, found 2");
    parse_fails(&p, "1,2\n\n3,4,5\n", "3:5: expected 2 fields, found 3");
    parse_fails(&p, "1,2\n3,4,5,\"6,7\",8\n", "2:5: expected 2 fields, found 5");
    parse_fails(&p, "1,2,3\n,2,3\n", "2:1: expected a number, found ','");
    parse_fails(&p, "1,2,3\n\"\",2,3\n", "2:1: expected a number, found '\"\"'");
    parse_fails(&p, "y,a,b\n1,2x,3\n", "1:3: expected a number, found '2x'");
    parse_fails(&p, "y,a\n1,1e40\n", "1:3: expected a finite number, found '1e40'");
    parse_fails(&p, "y,a\n1,\"2\n", "1:3: expected a closing quote, found end of line");
    parse_fails(&p, "y,a\n1,\"2\"x\n", "1:6: expected a delimiter after the closing quote, found 'x'");
    parse_fails(&p, "y;a;b\n1,5;2;3\n", "1:1: expected a number, found '1,5'");
    plan_fails(&p, "\"abc,d\n1,2\n", HOG_EFORMAT,
               "t.txt:1:1: expected a closing quote, found end of line");
    plan_fails(&p, "\"a\"b,c\n1,2\n", HOG_EFORMAT,
               "t.txt:1:4: expected a delimiter after the closing quote, found 'b'");
    p.header = 0;
    parse_fails(&p, "y,a\n1,2\n", "1:1: expected a number, found 'y'");
}

Test(etl_parse, csv_label_ignore_categorical)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_name = "y";
    p.ignore = "id, 4";
    p.categorical = "color";
    hog_text_plan plan;
    const char *text = "id,x,color,y,junk,z\n"
                       "7,1.5,red,1,abc,2\n"
                       "8,0,\"bl\"\"ue\",0,,0\n"
                       "9,3,,1,x,4\n";
    plan_ok(&p, text, &plan);
    cr_assert_eq(plan.label_col, 3);
    cr_assert_eq(plan.column_kind[0], HOG_COL_IGNORE);
    cr_assert_eq(plan.column_kind[1], HOG_COL_NUMBER);
    cr_assert_eq(plan.column_kind[2], HOG_COL_CATEGORICAL);
    cr_assert_eq(plan.column_kind[3], HOG_COL_LABEL);
    cr_assert_eq(plan.column_kind[4], HOG_COL_IGNORE);
    cr_assert_eq(plan.column_kind[5], HOG_COL_NUMBER);
    hog_text_plan_free(&plan);
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, 3);
    check_sorted(&r);
    /* numeric x, z at 0, 1; categories after them, at 2 + hash */
    uint32_t red = 2 + hog_hash_feature("color=red", 9, 0, 18);
    uint32_t blue = 2 + hog_hash_feature("color=bl\"ue", 11, 0, 18);
    check_row(&r, 0, 1, 3, (uint32_t[]){0, 1, red}, (float[]){1.5f, 2, 1});
    check_row(&r, 1, 0, 1, (uint32_t[]){blue}, (float[]){1});
    check_row(&r, 2, 1, 2, (uint32_t[]){0, 1}, (float[]){3, 4});
    hog_rows_free(&r);

    /* by number, without a header */
    p = params(HOG_FORMAT_CSV);
    p.label_index = 1;
    p.categorical = "0";
    parse_ok(&p, "a,1,2\nb,0,3\n", &r);
    cr_assert_eq(r.rows, 2);
    uint32_t a = 1 + hog_hash_feature("0=a", 3, 0, 18);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, a}, (float[]){2, 1});
    hog_rows_free(&r);
}

Test(etl_parse, csv_hash_bits_numeric_by_name)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.hash_bits = 1; /* every column in two buckets: collisions are summed */
    hog_rows r;
    parse_ok(&p, "y,a,b,c\n1,1,2,4\n", &r);
    check_sorted(&r);
    float want[2] = {0, 0};
    want[hog_hash_feature("a", 1, 0, 1)] += 1;
    want[hog_hash_feature("b", 1, 0, 1)] += 2;
    want[hog_hash_feature("c", 1, 0, 1)] += 4;
    uint32_t n = r.ptr[1];
    cr_assert_eq(n, (want[0] != 0) + (want[1] != 0));
    for (uint32_t k = 0; k < n; k++)
        cr_assert_float_eq(r.value[k], want[r.index[k]], 1e-6f);
    hog_rows_free(&r);
}

Test(etl_parse, csv_delimiters_and_detection)
{
    static const char *files[] = {
        "y;a;b\n1;2;3\n",
        "y\ta\tb\n1\t2\t3\n",
        "y  a b\n 1   2\t3 \n",
    };
    for (size_t i = 0; i < 3; i++) {
        hog_read_params p = params(HOG_FORMAT_AUTO);
        hog_rows r;
        parse_ok(&p, files[i], &r);
        cr_assert_eq(r.rows, 1, "file %zu", i);
        check_row(&r, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){2, 3});
        hog_rows_free(&r);
    }
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.delimiter = '|';
    p.header = 0;
    hog_rows r;
    parse_ok(&p, "1|2|3\n", &r);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){2, 3});
    hog_rows_free(&r);
    /* a first line with a missing value is still data */
    p = params(HOG_FORMAT_CSV);
    hog_text_plan plan;
    plan_ok(&p, "1,,3\n4,5,6\n", &plan);
    cr_assert_eq(plan.header_bytes, 0);
    cr_assert_eq(plan.header_lines, 0);
    hog_text_plan_free(&plan);
}

Test(etl_parse, csv_parameter_errors)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_name = "zz";
    plan_fails(&p, "y,a,b\n1,2,3\n", HOG_EPARAM, "t.txt: no column named 'zz' (columns: y, a, b)");
    p = params(HOG_FORMAT_CSV);
    p.ignore = "a,q";
    plan_fails(&p, "y,a,b\n1,2,3\n", HOG_EPARAM, "t.txt: no column named 'q' (columns: y, a, b)");
    p = params(HOG_FORMAT_CSV);
    p.categorical = "7";
    plan_fails(&p, "1,2,3\n", HOG_EPARAM,
               "t.txt: categorical: column 7 is out of range: the first line has 3 fields");
    p = params(HOG_FORMAT_CSV);
    p.ignore = "y";
    plan_fails(&p, "y,a\n1,2\n", HOG_EPARAM, "t.txt: ignore: column 'y' is the label");
    p = params(HOG_FORMAT_CSV);
    p.label_index = 3;
    plan_fails(&p, "1,2,3\n", HOG_EPARAM,
               "t.txt: label column 3 is out of range: the first line has 3 fields");
    p = params(HOG_FORMAT_CSV);
    p.hash_bits = 32;
    plan_fails(&p, "1,2\n", HOG_EPARAM, "hog_read_params.hash_bits: 32 is not between 0 and 31");
    p = params(HOG_FORMAT_BINARY);
    plan_fails(&p, "1,2\n", HOG_EPARAM, "hog_read_params.format: a binary dataset is not text");
    p = params(HOG_FORMAT_CSV);
    p.delimiter = '.';
    plan_fails(&p, "1,2\n", HOG_EPARAM, "hog_read_params.delimiter: '.' cannot separate numbers");

    /* only a header, or nothing: fine here (the pipeline reports no rows) */
    p = params(HOG_FORMAT_CSV);
    p.label_name = "y";
    hog_text_plan plan;
    plan_ok(&p, "a,y\n", &plan);
    cr_assert_eq(plan.header_bytes, 4);
    cr_assert_eq(plan.label_col, 1);
    hog_text_plan_free(&plan);
    plan_ok(&p, "", &plan);
    hog_text_plan_free(&plan);
    hog_text_plan_free(NULL);
}

/* ===================================================================== *
 *  Vowpal Wabbit
 * ===================================================================== */

static uint32_t vw_index(const char *ns, const char *f, unsigned bits)
{
    uint32_t seed = *ns ? hog_hash_feature(ns, strlen(ns), 0, 0) : 0;
    return hog_hash_feature(f, strlen(f), seed, bits);
}

Test(etl_parse, vw_rows)
{
    hog_read_params p = params(HOG_FORMAT_AUTO);
    hog_text_plan plan;
    const char *text = "1 2.5 'ex1|user age:0.5 tall |item:2 price:3 42\n"
                       "\n"
                       "-1 tag|user age:0.25 age:0.25\r\n"
                       "0 | a b:0\n"
                       "3 |x";
    plan_ok(&p, text, &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_VW);
    hog_text_plan_free(&plan);
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, 4);
    cr_assert_eq(r.lines, 5);
    check_sorted(&r);

    /* row 0: four features, each where its hash says */
    struct {
        uint32_t ix;
        float v;
    } want[4] = {{vw_index("user", "age", 18), 0.5f},
                 {vw_index("user", "tall", 18), 1},
                 {vw_index("item", "price", 18), 6},
                 {vw_index("item", "42", 18), 2}};
    cr_assert_eq(r.ptr[1], 4);
    for (int k = 0; k < 4; k++) {
        int found = 0;
        for (uint32_t q = 0; q < 4; q++)
            if (r.index[q] == want[k].ix) {
                cr_assert_float_eq(r.value[q], want[k].v, 1e-6f);
                found = 1;
            }
        cr_assert(found, "feature %d missing", k);
    }
    /* row 1: a repeated feature summed */
    check_row(&r, 1, -1, 1, (uint32_t[]){vw_index("user", "age", 18)}, (float[]){0.5f});
    check_row(&r, 2, 0, 1, (uint32_t[]){vw_index("", "a", 18)}, (float[]){1});
    check_row(&r, 3, 3, 0, NULL, NULL);
    hog_rows_free(&r);

    p.hash_bits = 4;
    parse_ok(&p, "1 |n a b c d e f g h i j k l m n o p q r s t u v w x y z\n", &r);
    check_sorted(&r);
    cr_assert(r.nnz <= 16);
    float sum = 0;
    for (uint32_t k = 0; k < r.nnz; k++)
        sum += r.value[k];
    cr_assert_float_eq(sum, 26, 1e-6f);
    hog_rows_free(&r);
}

Test(etl_parse, vw_errors)
{
    hog_read_params p = params(HOG_FORMAT_VW);
    parse_fails(&p, "1 a b\n", "1:6: expected '|' and features, found end of line");
    parse_fails(&p, "|a b\n", "1:1: expected a label, found '|'");
    parse_fails(&p, "x |a b\n", "1:1: expected a number, found 'x'");
    parse_fails(&p, "1 |a b:x\n", "1:8: expected a number, found 'x'");
    parse_fails(&p, "1 |a :3\n", "1:6: expected a feature name, found ':3'");
    parse_fails(&p, "1 2 3 |a b\n", "1:5: expected '|', found '3'");
    parse_fails(&p, "1 x y|a b\n", "1:3: expected an importance weight or a 'tag, found 'x'");
    parse_fails(&p, "1 |a:q b\n", "1:6: expected a number, found 'q'");
    parse_fails(&p, "1 |a b:1e39\n", "1:8: expected a finite number, found '1e39'");
}

/* ===================================================================== *
 *  Detection
 * ===================================================================== */

Test(etl_parse, detect_formats)
{
    static const struct {
        const char *text;
        hog_format fmt;
    } cases[] = {
        {"1 1:2 3:4\n", HOG_FORMAT_LIBSVM},
        {"# c, d\n\n1\n0 qid:1 2:1\n", HOG_FORMAT_LIBSVM},
        {"y,a\n1,2\n", HOG_FORMAT_CSV},
        {"1 2 3\n", HOG_FORMAT_CSV},
        {"12:30,1\n", HOG_FORMAT_CSV},
        {"1 |ns a b\n", HOG_FORMAT_VW},
        {"\n# c\n-1 'tag|a x:1\n", HOG_FORMAT_VW},
        {"", HOG_FORMAT_CSV},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hog_read_params p = params(HOG_FORMAT_AUTO);
        hog_text_plan plan;
        plan_ok(&p, cases[i].text, &plan);
        cr_assert_eq(plan.format, cases[i].fmt, "case %zu", i);
        hog_text_plan_free(&plan);
    }
}
