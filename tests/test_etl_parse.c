/* test_etl_parse.c: chunks parsed by their format's parser: skip mode and the errors it keeps, line numbers relative to the chunk, an empty chunk, NUL bytes, a plan's feature ceiling, input that is not text, and format detection with its logged reason. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
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

/* ===================================================================== *
 *  Text or not
 * ===================================================================== */

/* The plan of head[0..len) read as path, which must fail with err == want. */
static void refused(const char *path, const hog_read_params *p, const char *head, size_t len, const char *want)
{
    hog_text_plan plan;
    char err[512] = "";
    cr_assert_eq(hog_text_plan_make(path, p, head, len, &plan, err, sizeof(err)), HOG_EFORMAT, "%s", err);
    cr_assert_str_eq(err, want);
}

Test(etl_parse, zeros_are_not_text)
{
    static char zeros[1 << 20];
    hog_read_params p = params(HOG_FORMAT_AUTO);
    refused("z", &p, zeros, sizeof(zeros), "z: not text: its first 65536 bytes are all zero");
    refused("z", &p, zeros, 100, "z: not text: its first 100 bytes are all zero");
    /* a format given changes nothing: they are no text of any format */
    p.format = HOG_FORMAT_LIBSVM;
    refused("z", &p, zeros, sizeof(zeros), "z: not text: its first 65536 bytes are all zero");
}

Test(etl_parse, random_bytes_are_binary_data)
{
    static char bytes[1 << 16];
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        bytes[i] = (char)(x >> 56);
    }
    size_t bad = 0;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        unsigned char b = (unsigned char)bytes[i];
        bad += (b < 0x20 && (b < '\t' || b > '\r')) || b == 0x7f;
    }
    char want[160];
    snprintf(want, sizeof(want), "r: not text but binary data (%zu of its first 65536 bytes are NUL or control "
             "characters)", bad);
    hog_read_params p = params(HOG_FORMAT_AUTO);
    refused("r", &p, bytes, sizeof(bytes), want);
}

Test(etl_parse, known_binary_formats_are_named)
{
    static char buf[4096];
    hog_read_params p = params(HOG_FORMAT_AUTO);
    memcpy(buf, "PK\x03\x04", 4);
    refused("book.xlsx", &p, buf, sizeof(buf), "book.xlsx: not text but a zip archive (a spreadsheet? save it as CSV)");
    memset(buf, 0, sizeof(buf));
    memcpy(buf, "HOGDATA\0\2\0\0\0", 12);
    p.format = HOG_FORMAT_CSV; /* a .hgd read as text on request */
    refused("d.hgd", &p, buf, sizeof(buf),
            "d.hgd: not text but a hogtrain dataset (.hgd), which hog_read_params.format = HOG_FORMAT_BINARY reads");
    /* UTF-16 with and without its byte order mark */
    const char *ascii = "1 1:0.5 2:1\n0 3:1\n";
    size_t n = 2;
    memcpy(buf, "\xff\xfe", 2);
    for (const char *c = ascii; *c; c++) {
        buf[n++] = *c;
        buf[n++] = 0;
    }
    p.format = HOG_FORMAT_AUTO;
    refused("u", &p, buf, n, "u: not text but UTF-16 text (convert it to UTF-8)");
    refused("u", &p, buf + 2, n - 2, "u: not text but UTF-16 text, it seems (convert it to UTF-8)");
}

Test(etl_parse, a_few_nul_bytes_in_text_are_the_parsers_to_locate)
{
    /* Not refused as a whole: the line and column come from the parser. */
    const char text[] = "1 1:0.5\n-1 2:\0" "1\n1 3:1\n";
    hog_read_params p = params(HOG_FORMAT_AUTO);
    hog_text_plan plan;
    char err[256] = "";
    cr_assert_eq(hog_text_plan_make("n.svm", &p, text, sizeof(text) - 1, &plan, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(plan.format, HOG_FORMAT_LIBSVM);
    hog_rows r;
    memset(&r, 0, sizeof(r));
    hog_text_error e;
    cr_assert_eq(hog_parse_chunk(&plan, text, sizeof(text) - 1, &r, &e), HOG_EFORMAT);
    cr_assert_eq(e.line, 2);
    cr_assert_eq(e.column, 6);
    cr_assert_str_eq(e.what, "expected text, found a NUL byte");
    hog_rows_free(&r);
    hog_text_plan_free(&plan);
}

/* ===================================================================== *
 *  Which text format, and why
 * ===================================================================== */

static char logged[2048];

static void keep_log(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof(logged) - n, "%s%s\n", level == HOG_LOG_WARN ? "warning: " : "", msg);
}

/* The format text is detected as when read as path; what was logged in logged. */
static hog_format detect(const char *path, const char *text)
{
    logged[0] = '\0';
    hog_log_set(keep_log, NULL, HOG_LOG_DEBUG);
    hog_read_params p = params(HOG_FORMAT_AUTO);
    hog_text_plan plan;
    char err[512] = "";
    int rc = hog_text_plan_make(path, &p, text, strlen(text), &plan, err, sizeof(err));
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert_eq(rc, 0, "%s: %s", text, err);
    hog_format f = plan.format;
    hog_text_plan_free(&plan);
    return f;
}

Test(etl_parse, a_typo_in_line_one_is_read_as_the_format_of_the_lines_after_it)
{
    /* The report: taken as CSV with a header, the error blamed line 2. */
    cr_assert_eq(detect("b.svm", "1 1::0.5\n-1 2:1\n1 3:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_str_eq(logged, "warning: b.svm: read as libsvm: line 1 reads as CSV, and of the next 2 data lines, 2 "
                             "read as libsvm, 0 as CSV and 0 as VW; line 1 is no CSV header but a libsvm line with "
                             "an error\n");
    /* the name does not matter when the lines agree */
    cr_assert_eq(detect("b.txt", "1 1::0.5\n-1 2:1\n1 3:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_eq(detect("b.csv", "1 1::0.5\n-1 2:1\n1 3:1\n"), HOG_FORMAT_LIBSVM);
    /* nor a CSV-looking line without a broken pair: no header precedes libsvm lines */
    cr_assert_eq(detect("c", "y a b\n1 2:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert(strstr(logged, "line 1 is no CSV header but a libsvm line with an error"), "%s", logged);
}

Test(etl_parse, one_line_that_reads_as_no_format_follows_the_name_then_its_pairs)
{
    /* The report: alone, it was CSV with a header and "no data rows". */
    cr_assert_eq(detect("a.svm", "1 1::0.5\n"), HOG_FORMAT_LIBSVM);
    cr_assert_str_eq(logged, "warning: a.svm: line 1 reads as no format (its index:value pairs are malformed), and "
                             "no line follows it: read as libsvm, as the file's name says\n");
    cr_assert_eq(detect("a.vw.gz", "1 1::0.5\n"), HOG_FORMAT_VW);
    cr_assert_eq(detect("a.txt", "1 1::0.5\n# the end\n"), HOG_FORMAT_LIBSVM);
    cr_assert(strstr(logged, "read as libsvm, as its pairs suggest"), "%s", logged);
    cr_assert_eq(detect("a.csv", "1 1::0.5\n"), HOG_FORMAT_CSV);
}

Test(etl_parse, lines_that_agree_decide_whatever_the_first)
{
    /* a first line of another format before CSV lines is their header */
    cr_assert_eq(detect("h.svm", "1 2:1\n1,2\n3,4\n"), HOG_FORMAT_CSV);
    cr_assert_str_eq(logged, "warning: h.svm: read as CSV: line 1 reads as libsvm, and of the next 2 data lines, 0 "
                             "read as libsvm, 2 as CSV and 0 as VW; line 1 is taken for its header\n");
    /* a CSV header whose names hold colons is still a header */
    cr_assert_eq(detect("t.txt", "id 10:00 11:00\n1 2 3\n4 5 6\n"), HOG_FORMAT_CSV);
    cr_assert(strstr(logged, "line 1 is taken for its header"), "%s", logged);
}

Test(etl_parse, mixed_lines_follow_the_name_else_the_most)
{
    const char *mixed = "a,b\n1 2:1\n1 3:1\n1,2\n";
    cr_assert_eq(detect("m.csv", mixed), HOG_FORMAT_CSV);
    cr_assert_str_eq(logged, "warning: m.csv: read as CSV: line 1 reads as CSV, and of the next 3 data lines, 2 read "
                             "as libsvm, 1 as CSV and 0 as VW; as the file's name says\n");
    cr_assert_eq(detect("m", mixed), HOG_FORMAT_LIBSVM);
    cr_assert(strstr(logged, "; as most of them are"), "%s", logged);
    /* a name none of the lines has does not count */
    cr_assert_eq(detect("m.vw", mixed), HOG_FORMAT_LIBSVM);
    /* a tie among them goes to the name, else to the first line's format */
    cr_assert_eq(detect("m.csv", "1 2:1\n1 2:1\n1,2\n"), HOG_FORMAT_CSV);
    cr_assert_eq(detect("m", "1,2\n1 2:1\n1,2\n"), HOG_FORMAT_CSV);
}

Test(etl_parse, agreement_logs_nothing_and_a_contrary_name_is_warned_of)
{
    cr_assert_eq(detect("d.svm", "1 1:1\n0 2:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_str_eq(logged, "");
    cr_assert_eq(detect("d.csv", "y,a\n1,2\n3,4\n"), HOG_FORMAT_CSV);
    cr_assert_str_eq(logged, "");
    cr_assert_eq(detect("d.csv", "1 1:1\n0 2:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_str_eq(logged, "warning: d.csv: read as libsvm, as its lines are, though its name says CSV\n");
    /* a malformed pair after the first line is a libsvm line's too */
    cr_assert_eq(detect("d", "1 1:1\n1 2:x\n0 3:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_str_eq(logged, "");
}
