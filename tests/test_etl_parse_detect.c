/* test_etl_parse_detect.c: input that is not text refused with what it looks like, and the text format settled by the lines after the first and the file's name, its reason logged. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

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

Test(etl_parse_detect, zeros_are_not_text)
{
    static char zeros[1 << 20];
    hog_read_params p = params(HOG_FORMAT_AUTO);
    refused("z", &p, zeros, sizeof(zeros), "z: not text: its first 65536 bytes are all zero");
    refused("z", &p, zeros, 100, "z: not text: its first 100 bytes are all zero");
    /* a format given changes nothing: they are no text of any format */
    p.format = HOG_FORMAT_LIBSVM;
    refused("z", &p, zeros, sizeof(zeros), "z: not text: its first 65536 bytes are all zero");
}

Test(etl_parse_detect, random_bytes_are_binary_data)
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

Test(etl_parse_detect, known_binary_formats_are_named)
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

Test(etl_parse_detect, a_few_nul_bytes_in_text_are_the_parsers_to_locate)
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

Test(etl_parse_detect, a_typo_in_line_one_is_read_as_the_format_of_the_lines_after_it)
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

Test(etl_parse_detect, one_line_that_reads_as_no_format_follows_the_name_then_its_pairs)
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

Test(etl_parse_detect, lines_that_agree_decide_whatever_the_first)
{
    /* a first line of another format before CSV lines is their header */
    cr_assert_eq(detect("h.svm", "1 2:1\n1,2\n3,4\n"), HOG_FORMAT_CSV);
    cr_assert_str_eq(logged, "warning: h.svm: read as CSV: line 1 reads as libsvm, and of the next 2 data lines, 0 "
                             "read as libsvm, 2 as CSV and 0 as VW; line 1 is taken for its header\n");
    /* a CSV header whose names hold colons is still a header */
    cr_assert_eq(detect("t.txt", "id 10:00 11:00\n1 2 3\n4 5 6\n"), HOG_FORMAT_CSV);
    cr_assert(strstr(logged, "line 1 is taken for its header"), "%s", logged);
}

Test(etl_parse_detect, mixed_lines_follow_the_name_else_the_most)
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

Test(etl_parse_detect, agreement_logs_nothing_and_a_contrary_name_is_warned_of)
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
