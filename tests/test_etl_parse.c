/* test_etl_parse.c: chunks parsed by their format's parser: skip mode and the errors it keeps, line numbers relative to the chunk, an empty chunk, NUL bytes, the feature ceiling of a plan, and format detection. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

/* ===================================================================== *
 *  Chunks
 * ===================================================================== */

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

/* The report: a NUL byte in a libsvm line read as "not a hogtrain
 * dataset (bad magic)". Every format reports it at its own column, even
 * where its parser would read it (a comment, a VW name, a CSV header). */
Test(etl_parse, a_nul_byte_is_an_error_at_its_line_and_column)
{
    static const char libsvm[] = "1 1:1\n0 2:\0" "1\n";
    static const char comment[] = "1 1:1 # a\0b\n";
    static const char vw[] = "1 |f a\0b\n";
    static const char csv[] = "1,2\n3,\0\n";
    static const struct {
        hog_format format;
        const char *text;
        size_t len;
        uint64_t line;
        uint32_t column;
    } cases[] = {
        {HOG_FORMAT_LIBSVM, libsvm, sizeof(libsvm) - 1, 2, 5},
        {HOG_FORMAT_LIBSVM, comment, sizeof(comment) - 1, 1, 10},
        {HOG_FORMAT_VW, vw, sizeof(vw) - 1, 1, 7},
        {HOG_FORMAT_CSV, csv, sizeof(csv) - 1, 2, 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        hog_read_params p = params(cases[i].format);
        hog_text_plan plan;
        char err[256] = "";
        cr_assert_eq(hog_text_plan_make("t", &p, cases[i].text, cases[i].len, &plan, err, sizeof(err)), 0,
                     "case %zu: %s", i, err);
        hog_rows r;
        memset(&r, 0, sizeof(r));
        hog_text_error e;
        cr_assert_eq(hog_parse_chunk(&plan, cases[i].text, cases[i].len, &r, &e), HOG_EFORMAT, "case %zu", i);
        cr_assert_eq(e.line, cases[i].line, "case %zu: line %llu", i, (unsigned long long)e.line);
        cr_assert_eq(e.column, cases[i].column, "case %zu: column %u", i, e.column);
        cr_assert_str_eq(e.what, "expected text, found a NUL byte", "case %zu", i);
        hog_rows_free(&r);
        hog_text_plan_free(&plan);
    }

    /* skipped as a malformed line when asked */
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.on_error = HOG_ON_ERROR_SKIP;
    static const char text[] = "1 1:1\n0 2:\0" "1\n1 3:1\n";
    hog_text_plan plan;
    plan_ok(&p, "1 1:1\n", &plan);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    cr_assert_eq(hog_parse_chunk(&plan, text, sizeof(text) - 1, &r, NULL), 0);
    cr_assert_eq(r.rows, 2);
    cr_assert_eq(r.skipped, 1);
    cr_assert_eq(r.errors[0].line, 2);
    cr_assert_eq(r.errors[0].column, 5);
    hog_rows_free(&r);
    hog_text_plan_free(&plan);

    /* the header, which no parser reads, at plan time */
    static const char header[] = "y,a\0b\n1,2\n";
    p = params(HOG_FORMAT_CSV);
    char err[256] = "";
    cr_assert_eq(hog_text_plan_make("t", &p, header, sizeof(header) - 1, &plan, err, sizeof(err)), HOG_EFORMAT);
    cr_assert_str_eq(err, "t:1:4: expected text, found a NUL byte");
}

/* CSV columns and hashed features are counted against the ceiling when
 * the plan is made: their indices are known before any is read. */
Test(etl_parse, plans_that_could_pass_the_feature_ceiling_are_refused)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.max_features = 3;
    hog_text_plan plan;
    plan_ok(&p, "y,a,b,c\n1,2,3,4\n", &plan);
    hog_text_plan_free(&plan);
    plan_fails(&p, "y,a,b,c,d\n1,2,3,4,5\n", HOG_EFORMAT,
               "t.txt:1: 4 numeric columns are past the ceiling of 3 features (hog_read_params.max_features, "
               "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 1)");
    p.max_features = 1000;
    p.categorical = "c";
    plan_fails(&p, "y,a,b,c\n1,2,3,x\n", HOG_EFORMAT,
               "t.txt:1: 2 numeric columns and 2^18 categorical hashes are past the ceiling of 1000 features "
               "(hog_read_params.max_features, hog_train_params.mem_limit): hash them "
               "(hog_read_params.hash_bits = 9)");
    p.hash_bits = 9; /* every column hashed into 2^9 */
    plan_ok(&p, "y,a,b,c\n1,2,3,x\n", &plan);
    hog_text_plan_free(&plan);
    p = params(HOG_FORMAT_VW); /* 2^18 unless hash_bits says */
    p.max_features = 1000;
    plan_fails(&p, "1 |f a\n", HOG_EPARAM,
               "t.txt: hashing into 2^18 features is past the ceiling of 1000 features "
               "(hog_read_params.max_features, hog_train_params.mem_limit): hash into fewer "
               "(hog_read_params.hash_bits = 9)");
    p.hash_bits = 9;
    plan_ok(&p, "1 |f a\n", &plan);
    hog_text_plan_free(&plan);
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
