/* test_etl_parse_libsvm.c: the libsvm parser: rows, comments and qid, its fast pair path against strtod, located errors, 1-based indices, the base detected, and feature hashing. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"
#include "etl/etl_parse.h"

#include "test_etl_parse.h"

Test(etl_parse_libsvm, libsvm_rows_comments_qid_crlf_last_line)
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

Test(etl_parse_libsvm, libsvm_long_rows_word_paths)
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

Test(etl_parse_libsvm, libsvm_random_pairs_match_strtod)
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

Test(etl_parse_libsvm, libsvm_pairs_read_alike_at_line_start_and_deep_in_a_chunk)
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

Test(etl_parse_libsvm, libsvm_errors_are_located)
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

Test(etl_parse_libsvm, libsvm_index_base_one)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.index_base = 1;
    hog_rows r;
    parse_ok(&p, "1 1:1 3:2 4294967295:3\n", &r);
    check_row(&r, 0, 1, 3, (uint32_t[]){0, 2, 4294967294u}, (float[]){1, 2, 3});
    hog_rows_free(&r);
    parse_fails(&p, "1 0:1 3:2\n", "1:3: expected an index of at least 1 (indices are 1-based), found 0");
}

/* The base detected: scikit-learn's comment header says it (its files
 * whose column 0 is always zero show no index 0), else an index 0 does. */
Test(etl_parse_libsvm, libsvm_index_base_detected_from_the_header_or_an_index_0)
{
    static const struct {
        const char *head;
        unsigned base;
        const char *why;
    } cases[] = {
        {"# Generated by dump_svmlight_file from scikit-learn 1.2.1\n# Column indices are zero-based\n#\n"
         "1 1:0.5 3:1\n", 0, "header says its column indices are zero-based"},
        {"# Column indices are one-based\n1 0:0.5\n", 1, "header says its column indices are one-based"},
        {"1 1:0.5 3:1\n0 2:1 # 0:1 in a comment\n", 1, "no index 0 in the first MiB"},
        {"1 1:0.5 3:1\n0 00:1\n", 0, "an index 0 in the first MiB"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint64_t lines;
        const char *why;
        unsigned base = hog_text_plan_index_base(cases[i].head, strlen(cases[i].head), &lines, &why);
        cr_assert_eq(base, cases[i].base, "case %zu", i);
        cr_assert(strstr(why, cases[i].why), "case %zu: %s", i, why);
    }
}

Test(etl_parse_libsvm, libsvm_hashing_merges_collisions)
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

/* The report: `printf '1 1:0.5\n-1 4294967295:1\n'` trained with
 * --mem-limit 256M was killed for memory with no word. An index past the
 * ceiling is refused where it is written, before any model is sized. */
Test(etl_parse_libsvm, libsvm_indices_past_the_feature_ceiling_are_refused_where_they_are)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.max_features = 10;
    hog_rows r;
    parse_ok(&p, "1 0:1 9:1\n", &r);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, 9}, (float[]){1, 1});
    hog_rows_free(&r);
    parse_fails(&p, "1 1:1\n0 10:1\n",
                "2:3: index 10 is past the ceiling of 10 features (hog_read_params.max_features, "
                "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 3)");
    /* deep in a long line, with the chunk going on after it: the fast pair path */
    char text[4096] = "1 1:0.5 2:0.5 3:0.5 4:0.5 5:0.5 6:0.5 7:0.5 8:0.5 9:0.5 10:0.5 11:0.5\n";
    for (int i = 0; i < 40; i++)
        strcat(text, "0 1:1 2:1\n");
    parse_fails(&p, text, "1:57: index 10 is past the ceiling of 10 features (hog_read_params.max_features, "
                          "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 3)");
    p.max_features = 67108864; /* what --mem-limit 512M holds of a logistic model */
    parse_fails(&p, "1 1:0.5\n-1 4294967295:1\n",
                "2:4: index 4294967295 is past the ceiling of 67108864 features (hog_read_params.max_features, "
                "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 26)");
    /* 1-based: index N is the Nth feature */
    p.index_base = 1;
    p.max_features = 10;
    parse_ok(&p, "1 10:1\n", &r);
    check_row(&r, 0, 1, 1, (uint32_t[]){9}, (float[]){1});
    hog_rows_free(&r);
    parse_fails(&p, "1 11:1\n", "1:3: index 11 is past the ceiling of 10 features (hog_read_params.max_features, "
                               "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 3)");
    /* a bound, not a typo: on_error skip skips the malformed line, not it */
    p.on_error = HOG_ON_ERROR_SKIP;
    parse_fails(&p, "1 1:1\nx\n1 11:1\n", "3:3: index 11 is past the ceiling of 10 features "
                                          "(hog_read_params.max_features, hog_train_params.mem_limit): hash them "
                                          "(hog_read_params.hash_bits = 3)");
    /* hashed indices stay within 2^bits: a hashing within the ceiling reads any index */
    p.on_error = HOG_ON_ERROR_STOP;
    p.hash_bits = 3;
    parse_ok(&p, "1 7:2 4294967295:1\n", &r);
    check_sorted(&r);
    for (uint32_t k = 0; k < r.nnz; k++)
        cr_assert(r.index[k] < 8);
    hog_rows_free(&r);
    p.hash_bits = 4;
    plan_fails(&p, "1 1:1\n", HOG_EPARAM,
               "t.txt: hashing into 2^4 features is past the ceiling of 10 features (hog_read_params.max_features, "
               "hog_train_params.mem_limit): hash into fewer (hog_read_params.hash_bits = 3)");
}
