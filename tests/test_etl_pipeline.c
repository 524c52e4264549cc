/* test_etl_pipeline.c: text files read end to end (reader, pipeline, parsers): rows, format detection, the exact located error messages, a read ended by a stop fd. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl/etl.h"

#include "test_scratch.h"

/* ---- a scratch folder per test (Criterion runs each test in its own process) ---- */

static void setup(void)
{
    scratch_make("etl-pipeline");
}

TestSuite(etl_pipeline, .init = setup, .fini = scratch_remove);

/* Writes content to dir/name; the path goes into out (256 bytes). */
static const char *put(char *out, const char *name, const char *content)
{
    snprintf(out, 256, "%s/%s", dir, name);
    FILE *f = fopen(out, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(content, 1, strlen(content), f), strlen(content));
    cr_assert_eq(fclose(f), 0);
    return out;
}

static hog_read_params params(hog_format fmt)
{
    hog_read_params p = hog_read_params_default();
    p.format = fmt;
    return p;
}

/* Opens text that must parse; fails the test with the detail otherwise. */
static hog_dataset *open_ok(const char *name, const char *content, const hog_read_params *p)
{
    char path[256], err[512] = "";
    hog_dataset *ds = NULL;
    int rc = hog_dataset_open(put(path, name, content), p, &ds, err, sizeof(err));
    cr_assert_eq(rc, 0, "open %s: %s (%s)", name, hog_strerror(rc), err);
    cr_assert_not_null(ds);
    return ds;
}

/* Opens text that must fail with rc; the detail must equal "PATH" + suffix. */
static void open_fails(const char *name, const char *content, const hog_read_params *p, int want,
                       const char *suffix)
{
    char path[256], err[512] = "", expect[512];
    hog_dataset *ds = (hog_dataset *)1;
    int rc = hog_dataset_open(put(path, name, content), p, &ds, err, sizeof(err));
    cr_assert_eq(rc, want, "%s: got %d (%s), want %d; detail: %s", name, rc, hog_strerror(rc),
                 want, err);
    cr_assert_null(ds);
    snprintf(expect, sizeof(expect), "%s%s", path, suffix);
    cr_assert_str_eq(err, expect);
}

/* Asserts row i: label, then nnz (index, value) pairs. */
static void check_row(const hog_dataset *ds, uint64_t i, float label, uint32_t nnz,
                      const uint32_t *idx, const float *val)
{
    hog_row r = hog_dataset_row(ds, i);
    cr_assert_float_eq(r.label, label, 1e-6f, "row %lu label %g", (unsigned long)i,
                       (double)r.label);
    cr_assert_eq(r.nnz, nnz, "row %lu: nnz %u, want %u", (unsigned long)i, r.nnz, nnz);
    for (uint32_t k = 0; k < nnz; k++) {
        cr_assert_eq(r.index[k], idx[k], "row %lu pair %u index", (unsigned long)i, k);
        cr_assert_float_eq(r.value[k], val[k], 1e-6f, "row %lu pair %u value", (unsigned long)i,
                           k);
    }
}

/* ===================================================================== *
 *  libsvm
 * ===================================================================== */

Test(etl_pipeline, libsvm_rows_comments_qid_crlf_tabs)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.rows_per_block = 2;
    hog_dataset *ds = open_ok("a.svm",
                              "# a comment line\n"
                              "1 1:0.5 3:2\n"
                              "\n"
                              "-1 2:1.5 # trailing comment\n"
                              "   \t\n"
                              "0 qid:3 1:1 4:0 5:-2\r\n"
                              "+1.5\t7:1e-1\t\t9:3\n"
                              "2\n",
                              &p);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.format, HOG_FORMAT_LIBSVM);
    cr_assert_eq(info.rows, 5);
    cr_assert_eq(info.nnz, 7); /* 4:0 is dropped */
    cr_assert_eq(info.index_base, 1); /* no index 0: detected as 1-based, stored minus one */
    cr_assert_eq(info.features, 9);
    cr_assert_eq(info.blocks, 3);
    cr_assert_eq(info.rows_per_block, 2);
    check_row(ds, 0, 1, 2, (uint32_t[]){0, 2}, (float[]){0.5f, 2});
    check_row(ds, 1, -1, 1, (uint32_t[]){1}, (float[]){1.5f});
    check_row(ds, 2, 0, 2, (uint32_t[]){0, 4}, (float[]){1, -2});
    check_row(ds, 3, 1.5f, 2, (uint32_t[]){6, 8}, (float[]){0.1f, 3});
    check_row(ds, 4, 2, 0, NULL, NULL);
    hog_dataset_close(ds);
}

Test(etl_pipeline, libsvm_auto_detected_and_zero_index_kept)
{
    hog_dataset *ds = open_ok("b.txt", "1 0:1 4294967295:2\n", NULL);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.format, HOG_FORMAT_LIBSVM);
    cr_assert_eq(info.index_base, 0); /* an index 0: detected as 0-based */
    cr_assert_eq(info.features, 4294967296ULL);
    check_row(ds, 0, 1, 2, (uint32_t[]){0, 4294967295u}, (float[]){1, 2});
    hog_dataset_close(ds);
}

Test(etl_pipeline, libsvm_errors_are_located)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    open_fails("a.svm", "1 1:1\n0 2:1\n1 3:1.5 x 4:1\n", &p, HOG_EFORMAT,
               ":3:9: expected index:value, found 'x'");
    open_fails("b.svm", "1 1:1\n\n\n\n1 3:1 7:1 3:2\n", &p, HOG_EFORMAT,
               ":5:11: expected an index greater than 7, found 3");
    open_fails("c.svm", "1 3:1 3:2\n", &p, HOG_EFORMAT,
               ":1:7: expected an index greater than 3, found 3");
    open_fails("d.svm", "abc 1:1\n", &p, HOG_EFORMAT, ":1:1: expected a number, found 'abc'");
    open_fails("e.svm", "1 2:abc\n", &p, HOG_EFORMAT, ":1:5: expected a number, found 'abc'");
    open_fails("f.svm", "1 2:\n", &p, HOG_EFORMAT, ":1:5: expected a number, found end of line");
    open_fails("g.svm", "1 2: 3:1\n", &p, HOG_EFORMAT, ":1:5: expected a number, found ' '");
    open_fails("h.svm", "1 2:1e999\n", &p, HOG_EFORMAT,
               ":1:5: expected a finite number, found '1e999'");
    open_fails("i.svm", "nan 1:1\n", &p, HOG_EFORMAT, ":1:1: expected a number, found 'nan'");
    open_fails("j.svm", "1 2:inf\n", &p, HOG_EFORMAT, ":1:5: expected a number, found 'inf'");
    open_fails("k.svm", "1 2:1.5x\n", &p, HOG_EFORMAT, ":1:5: expected a number, found '1.5x'");
    open_fails("l.svm", "1 2:0x10\n", &p, HOG_EFORMAT, ":1:5: expected a number, found '0x10'");
    open_fails("m.svm", "1 4294967296:1\n", &p, HOG_EFORMAT,
               ":1:3: expected an index below 4294967296, found '4294967296:1'");
    open_fails("n.svm", "1 -3:1\n", &p, HOG_EFORMAT, ":1:3: expected index:value, found '-3:1'");
    open_fails("o.svm", "1 1:1 qid:2\n", &p, HOG_EFORMAT,
               ":1:7: expected index:value, found 'qid:2'");
    open_fails("p.svm", "1 qid:x 1:1\n", &p, HOG_EFORMAT, ":1:7: expected a query id, found 'x'");
    open_fails("q.svm", "1 2:1 3:123456789012345678901234567890123456789012345\n", &p,
               HOG_EFORMAT, ":1:9: expected a finite number, found '12345678901234567890...'");
    open_fails("r.svm", "1 2:1\n1 3:1\r4:1\n", &p, HOG_EFORMAT,
               ":2:5: expected a number, found '1?4:1'");
}

Test(etl_pipeline, libsvm_empty_files)
{
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    open_fails("empty.svm", "", &p, HOG_EEMPTY, ": no data rows");
    open_fails("comments.svm", "# nothing\n\n   \n# here\n", &p, HOG_EEMPTY, ": no data rows");
    open_fails("auto-empty", "", NULL, HOG_EEMPTY, ": no data rows");
}

Test(etl_pipeline, numbers_match_strtod)
{
    /* The parser's fast path must give the float strtod gives, in every notation. */
    char path[256], *text = malloc(1 << 20), num[2000][96];
    cr_assert_not_null(text);
    size_t len = 0;
    hog_rng rng = {7};
    for (int i = 0; i < 2000; i++) {
        const char *sign = hog_rng_below(&rng, 3) == 0 ? "-" : "";
        unsigned long long a = hog_rng_next(&rng) >> hog_rng_below(&rng, 64);
        unsigned long long b2 = hog_rng_next(&rng) >> 1;
        unsigned f = hog_rng_below(&rng, 7), u = hog_rng_below(&rng, 1000000);
        int e = (int)hog_rng_below(&rng, 61) - 30;
        switch (f) {
        case 0: snprintf(num[i], 96, "%s%llu", sign, a); break;
        case 1: snprintf(num[i], 96, "%s%llu.%03u", sign, a, u % 1000); break;
        case 2: snprintf(num[i], 96, "%s0.%06u%llu", sign, u, a); break;
        case 3: snprintf(num[i], 96, "%s%llue%d", sign, a % 100000, e); break;
        case 4: snprintf(num[i], 96, "%s.%ue%d", sign, u, e); break;
        case 5: snprintf(num[i], 96, "%s%llu.%uE+%d", sign, a % 1000, u, e < 0 ? -e : e); break;
        default: snprintf(num[i], 96, "%s%llu%llu", sign, a % 1000, b2); break;
        }
        len += (size_t)snprintf(text + len, (1 << 20) - len, "%s\n", num[i]);
    }
    FILE *fp = fopen(put(path, "n.csv", ""), "w");
    cr_assert_not_null(fp);
    fwrite(text, 1, len, fp);
    fclose(fp);
    free(text);
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.header = 0;
    char err[512] = "";
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), 0, "%s", err);
    for (int i = 0; i < 2000; i++) {
        float want = (float)strtod(num[i], NULL), got = hog_dataset_row(ds, (uint64_t)i).label;
        cr_assert_eq(memcmp(&want, &got, sizeof(float)), 0, "%s: got %a, want %a", num[i],
                     (double)got, (double)want);
    }
    hog_dataset_close(ds);
}

/* ===================================================================== *
 *  CSV
 * ===================================================================== */

Test(etl_pipeline, csv_header_detected_label_first)
{
    hog_dataset *ds = open_ok("a.csv", "y,a,b\n1,0.5,0\n0,0,2\n-1, 3 ,4\n", NULL);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.format, HOG_FORMAT_CSV);
    cr_assert_eq(info.rows, 3);
    cr_assert_eq(info.nnz, 4);
    cr_assert_eq(info.features, 2);
    check_row(ds, 0, 1, 1, (uint32_t[]){0}, (float[]){0.5f});
    check_row(ds, 1, 0, 1, (uint32_t[]){1}, (float[]){2});
    check_row(ds, 2, -1, 2, (uint32_t[]){0, 1}, (float[]){3, 4});
    hog_dataset_close(ds);
}

Test(etl_pipeline, csv_no_header_detected)
{
    hog_dataset *ds = open_ok("a.csv", "1,2,3\n4,5,6\n", NULL);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 2);
    check_row(ds, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){2, 3});
    check_row(ds, 1, 4, 2, (uint32_t[]){0, 1}, (float[]){5, 6});
    hog_dataset_close(ds);
}

Test(etl_pipeline, csv_label_by_index_and_forced_header)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_index = 2;
    p.header = 1; /* a numeric first line taken as names anyway */
    hog_dataset *ds = open_ok("a.csv", "10,20,30\n1,2,3\n0,5,7\n", &p);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 2);
    check_row(ds, 0, 3, 2, (uint32_t[]){0, 1}, (float[]){1, 2});
    check_row(ds, 1, 7, 1, (uint32_t[]){1}, (float[]){5});
    hog_dataset_close(ds);
}

Test(etl_pipeline, csv_label_by_name_with_quoted_header)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_name = "the \"label\"";
    hog_dataset *ds = open_ok("q.csv",
                              "\"x,1\", \"the \"\"label\"\"\" ,z\r\n"
                              "1,2,3\r\n"
                              "4,5,0\r\n",
                              &p);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 2);
    check_row(ds, 0, 2, 2, (uint32_t[]){0, 1}, (float[]){1, 3});
    check_row(ds, 1, 5, 1, (uint32_t[]){0}, (float[]){4});
    hog_dataset_close(ds);
}

Test(etl_pipeline, csv_delimiters)
{
    static const char *files[] = {
        "y;a;b\n1;2;3\n",      /* detected ';' */
        "y\ta\tb\n1\t2\t3\n",  /* detected tab */
        "y  a b\n 1   2\t3 \n", /* detected blank runs */
        "y;a;b\n1,5;2;3\n",     /* ';' outnumbers ',' */
    };
    for (size_t i = 0; i < 3; i++) {
        hog_dataset *ds = open_ok("d.csv", files[i], NULL);
        hog_dataset_info info;
        hog_dataset_get_info(ds, &info);
        cr_assert_eq(info.rows, 1, "file %zu", i);
        check_row(ds, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){2, 3});
        hog_dataset_close(ds);
    }
    /* A decimal comma is not a number: the ';' file is rejected with its location. */
    open_fails("e.csv", files[3], NULL, HOG_EFORMAT, ":2:1: expected a number, found '1,5'");

    /* An explicit delimiter wins over detection. */
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.delimiter = '|';
    p.header = 0;
    hog_dataset *ds = open_ok("f.csv", "1|2|3\n", &p);
    check_row(ds, 0, 1, 2, (uint32_t[]){0, 1}, (float[]){2, 3});
    hog_dataset_close(ds);
}

Test(etl_pipeline, csv_errors_are_located)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    open_fails("a.csv", "1,2,3\n4,5\n", &p, HOG_EFORMAT, ":2:4: expected 3 fields, found 2");
    open_fails("b.csv", "1,2\n\n3,4,5\n", &p, HOG_EFORMAT, ":3:5: expected 2 fields, found 3");
    /* Empty numeric fields are missing values (stored as nothing); an empty
     * label is an error. */
    hog_dataset *ds = open_ok("c.csv", "1,2,3\n1,,3\n1,2,\n", &p);
    cr_assert_eq(hog_dataset_row(ds, 1).nnz, 1);
    cr_assert_eq(hog_dataset_row(ds, 1).index[0], 1);
    cr_assert_eq(hog_dataset_row(ds, 2).nnz, 1);
    cr_assert_eq(hog_dataset_row(ds, 2).index[0], 0);
    hog_dataset_close(ds);
    open_fails("d.csv", "1,2,3\n,2,3\n", &p, HOG_EFORMAT, ":2:1: expected a number, found ','");
    open_fails("e.csv", "y,a,b\n1,2x,3\n", &p, HOG_EFORMAT,
               ":2:3: expected a number, found '2x'");
    open_fails("f.csv", "y,a\n1,1e40\n", &p, HOG_EFORMAT,
               ":2:3: expected a finite number, found '1e40'");
    /* RFC 4180: a quoted number is a number. */
    hog_dataset *q = open_ok("g.csv", "y,a\n1,\"2\"\n", &p);
    cr_assert_eq(hog_dataset_row(q, 0).value[0], 2.0f);
    hog_dataset_close(q);
    open_fails("h.csv", "\"abc,d\n1,2\n", &p, HOG_EFORMAT,
               ":1:1: expected a closing quote, found end of line");
    open_fails("i.csv", "\"a\"b,c\n1,2\n", &p, HOG_EFORMAT,
               ":1:4: expected a delimiter after the closing quote, found 'b'");
    p.header = 0;
    open_fails("j.csv", "y,a\n1,2\n", &p, HOG_EFORMAT, ":1:1: expected a number, found 'y'");
}

Test(etl_pipeline, csv_parameter_errors)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_name = "zz";
    open_fails("a.csv", "y,a\n1,2\n", &p, HOG_EPARAM, ": no column named 'zz' (columns: y, a)");
    p = params(HOG_FORMAT_CSV);
    p.label_index = 3;
    open_fails("b.csv", "1,2,3\n", &p, HOG_EPARAM,
               ": label column 3 is out of range: the first line has 3 fields");

    char path[256], err[256];
    hog_dataset *ds;
    p = params(HOG_FORMAT_CSV);
    p.label_name = "y";
    p.header = 0;
    cr_assert_eq(hog_dataset_open(put(path, "c.csv", "y\n1\n"), &p, &ds, err, sizeof(err)),
                 HOG_EPARAM);
    cr_assert(strstr(err, "label_name") != NULL, "%s", err);
    p = params(HOG_FORMAT_CSV);
    p.delimiter = '.';
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "delimiter") != NULL, "%s", err);
}

Test(etl_pipeline, csv_empty_files)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    open_fails("a.csv", "", &p, HOG_EEMPTY, ": no data rows");
    open_fails("b.csv", "y,a,b\n\n", &p, HOG_EEMPTY, ": no data rows");
}

Test(etl_pipeline, csv_label_only_column)
{
    hog_dataset *ds = open_ok("a.csv", "y\n1\n0\n", NULL);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 2);
    cr_assert_eq(info.nnz, 0);
    cr_assert_eq(info.features, 0);
    check_row(ds, 1, 0, 0, NULL, NULL);
    hog_dataset_close(ds);
}

/* ===================================================================== *
 *  Detection and files
 * ===================================================================== */

/* The text format the pipeline's plan settles on for these first bytes. */
static hog_format detected(const char *text)
{
    hog_read_params p = hog_read_params_default();
    hog_text_plan plan;
    char err[256] = "";
    cr_assert_eq(hog_text_plan_make("t", &p, text, strlen(text), &plan, err, sizeof(err)), 0, "%s", err);
    hog_format f = plan.format;
    hog_text_plan_free(&plan);
    return f;
}

Test(etl_pipeline, detect_format)
{
    cr_assert_eq(detected("1 1:2 3:4\n"), HOG_FORMAT_LIBSVM);
    /* a comment and a label-only row first: the next line decides */
    cr_assert_eq(detected("# c, d\n\n1\n0 qid:1 2:1\n"), HOG_FORMAT_LIBSVM);
    cr_assert_eq(detected("y,a\n1,2\n"), HOG_FORMAT_CSV);
    cr_assert_eq(detected("1 2 3\n"), HOG_FORMAT_CSV);
    cr_assert_eq(detected("12:30,1\n"), HOG_FORMAT_CSV);
    cr_assert_eq(detected("1 |f a b:2\n"), HOG_FORMAT_VW);

    char path[256];
    int binary = -1;
    cr_assert_eq(hog_detect_binary(put(path, "f", "HOGDATA"), &binary), 0);
    cr_assert_eq(binary, 0); /* seven bytes are not the 8-byte magic */

    snprintf(path, sizeof(path), "%s/g", dir);
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    fwrite("HOGDATA\0\1\0\0\0", 1, 12, fp);
    fclose(fp);
    cr_assert_eq(hog_detect_binary(path, &binary), 0);
    cr_assert_eq(binary, 1);

    /* a damaged magic still reads as binary (text has no NUL bytes) */
    fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    fwrite("XOGDATA\0\1\0\0\0", 1, 12, fp);
    fclose(fp);
    cr_assert_eq(hog_detect_binary(path, &binary), 0);
    cr_assert_eq(binary, 1);
    hog_dataset *bad;
    char berr[512];
    cr_assert_eq(hog_dataset_open(path, NULL, &bad, berr, sizeof(berr)), HOG_EMAGIC, "%s", berr);

    /* a NUL byte in text read as libsvm on request is located at its own column */
    fp = fopen(path, "wb");
    cr_assert_not_null(fp);
    fwrite("1 1:1\n0 2\0:1\n", 1, 14, fp);
    fclose(fp);
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    char err[512], expect[600];
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), HOG_EFORMAT);
    snprintf(expect, sizeof(expect), "%s:2:4: expected text, found a NUL byte", path);
    cr_assert_str_eq(err, expect);

    snprintf(path, sizeof(path), "%s/missing", dir);
    cr_assert_eq(hog_detect_binary(path, &binary), -ENOENT);
}

Test(etl_pipeline, missing_file_names_it)
{
    char path[256], err[512], expect[512];
    snprintf(path, sizeof(path), "%s/nope.csv", dir);
    hog_read_params p = params(HOG_FORMAT_CSV);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), -ENOENT);
    snprintf(expect, sizeof(expect), "%s: %s", path, strerror(ENOENT));
    cr_assert_str_eq(err, expect);
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), -ENOENT);
    cr_assert_str_eq(err, expect);
}

/* The report of skipped lines holds every kept error in full, however long
 * the path that each of its lines names. */
Test(etl_pipeline, skipped_lines_report_with_a_long_path)
{
    char path[1024], err[512] = "";
    int n = snprintf(path, sizeof(path), "%s/", dir);
    for (int d = 0; d < 3; d++) { /* three folders of 200 characters */
        memset(path + n, 'd', 200);
        n += 200;
        path[n] = '\0';
        cr_assert_eq(mkdir(path, 0700), 0, "%s", strerror(errno));
        path[n++] = '/';
    }
    snprintf(path + n, sizeof(path) - (size_t)n, "bad.svm");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "1 1:1\n");
    for (int i = 0; i < 7; i++)
        fprintf(f, "1 abcdefghijklmnopqrstuvwxyz:1\n");
    fclose(f);
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.on_error = HOG_ON_ERROR_SKIP;
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), 0, "%s", err);
    char report[8192];
    cr_assert_eq(hog_dataset_skipped(ds, report, sizeof(report)), 7);
    const char *at = report;
    for (int i = 0; i < HOG_TEXT_ERRORS_KEPT; i++) {
        char want[1200];
        snprintf(want, sizeof(want),
                 "%s:%d:3: expected index:value, found 'abcdefghijklmnopqrst...'\n", path, i + 2);
        cr_assert_eq(strncmp(at, want, strlen(want)), 0, "line %d of the report: %s", i + 1, at);
        at += strlen(want);
    }
    cr_assert_str_eq(at, "");
    hog_dataset_close(ds);
}

Test(etl_pipeline, text_streamed_into_builder_directly)
{
    char path[256], err[256];
    hog_builder *b;
    cr_assert_eq(hog_builder_create(0, NULL, &b), 0);
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_text_summary sum;
    cr_assert_eq(hog_text_stream(put(path, "a.svm", "1 1:1\n0 2:2\n"), &p, b, &sum, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_builder_rows(b), 2);
    cr_assert_eq(sum.lines, 2);
    cr_assert_eq(sum.format, HOG_FORMAT_LIBSVM);
    p.format = HOG_FORMAT_BINARY;
    cr_assert_eq(hog_text_stream(path, &p, b, &sum, err, sizeof(err)), HOG_EPARAM);
    hog_builder_free(b);
}

/* The index base is detected from the head of the file: an index 0 there
 * makes it 0-based; without one it is 1-based, and an index 0 further on is
 * an error that names its line and says how the base was settled. The base
 * travels through the binary format, so a model's inputs keep their meaning. */
Test(etl_pipeline, libsvm_index_base_detection)
{
    char path[256], hgd[256], err[512] = "";
    snprintf(path, sizeof(path), "%s/late0.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 100000; i++) /* about 1.4 MB: past the head the plan sees */
        fprintf(f, "1 1:0.5 %d:1\n", 2 + i % 1000);
    fprintf(f, "1 0:1\n");
    fclose(f);
    hog_dataset *ds;
    hog_read_params p = hog_read_params_default();
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), HOG_EFORMAT);
    cr_assert(strstr(err, "late0.svm:100001:3: expected an index of at least 1 (none is 0 in the "
                          "first ") != NULL, "%s", err);
    cr_assert(strstr(err, "hog_read_params.index_base 0 reads as written), found 0") != NULL, "%s", err);
    p.index_base = 0;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.index_base, 0);
    cr_assert_eq(info.features, 1002);
    hog_dataset_close(ds);

    /* 1-based, through convert and back */
    snprintf(path, sizeof(path), "%s/one.svm", dir);
    f = fopen(path, "w");
    fprintf(f, "1 1:1 3:1 # 0:5 in a comment is no index\n-1 qid:0 2:1\n");
    fclose(f);
    snprintf(hgd, sizeof(hgd), "%s/one.hgd", dir);
    p.index_base = -1;
    cr_assert_eq(hog_dataset_convert(path, &p, hgd, &info, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.index_base, 1);
    cr_assert_eq(info.features, 3);
    cr_assert_eq(hog_dataset_open(hgd, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.index_base, 1);
    check_row(ds, 0, 1, 2, (uint32_t[]){0, 2}, (float[]){1, 1});
    check_row(ds, 1, -1, 1, (uint32_t[]){1}, (float[]){1});
    hog_dataset_close(ds);
}

/* ===================================================================== *
 *  Lines longer than hog_read_params.max_line
 * ===================================================================== */

/* The pipeline reads 4 MiB chunks: lines placed across their ends take
 * the producer's paths, lines inside one the parser's. */
#define CHUNK (4u << 20)

/* Appends to s (at *at) short libsvm lines and one comment that fills the
 * rest, so that the next line starts at byte `to`; returns the lines added. */
static unsigned fill_to(char *s, size_t *at, size_t to)
{
    unsigned lines = 0;
    while (*at + 6 + 3 <= to) {
        memcpy(s + *at, "1 1:1\n", 6);
        *at += 6;
        lines++;
    }
    size_t gap = to - *at; /* "#" + gap - 2 x's + "\n", at least 2 bytes */
    s[(*at)++] = '#';
    memset(s + *at, 'x', gap - 2);
    *at += gap - 2;
    s[(*at)++] = '\n';
    return lines + 1;
}

/* Appends a libsvm line of exactly `bytes` bytes before its newline: a
 * label and one pair, then blanks. */
static void long_line(char *s, size_t *at, size_t bytes, int newline)
{
    memcpy(s + *at, "0 2:1", 5);
    memset(s + *at + 5, ' ', bytes - 5);
    *at += bytes;
    if (newline)
        s[(*at)++] = '\n';
}

/* Opens the first `len` bytes of s as a libsvm file with max_line; returns
 * the error code, the detail in err (with the path cut off). */
static int open_max_line(const char *s, size_t len, uint64_t max_line, hog_on_error on_error, char *err)
{
    char path[256], detail[512] = "";
    snprintf(path, sizeof(path), "%s/long.svm", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(s, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.max_line = max_line;
    p.on_error = on_error;
    hog_dataset *ds = NULL;
    int rc = hog_dataset_open(path, &p, &ds, detail, sizeof(detail));
    hog_dataset_close(ds);
    snprintf(err, 512, "%s", rc < 0 ? detail + strlen(path) : "");
    return rc;
}

Test(etl_pipeline, a_line_longer_than_max_line_is_an_error_with_its_number)
{
    char s[4096], err[512];
    size_t at = 0;
    memcpy(s, "1 1:1\n0 2:1\n", 12);
    at = 12;
    long_line(s, &at, 2000, 1);
    memcpy(s + at, "1 3:1\n", 6);
    at += 6;
    /* in one chunk: the parser measures it, in stop and in skip mode alike */
    cr_assert_eq(open_max_line(s, at, 1024, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    cr_assert_str_eq(err, ":3: a line longer than 1024 bytes (hog_read_params.max_line)");
    cr_assert_eq(open_max_line(s, at, 1024, HOG_ON_ERROR_SKIP, err), HOG_EFORMAT);
    cr_assert_str_eq(err, ":3: a line longer than 1024 bytes (hog_read_params.max_line)");
    /* the newline does not count */
    cr_assert_eq(open_max_line(s, at, 1999, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    cr_assert_eq(open_max_line(s, at, 2000, HOG_ON_ERROR_STOP, err), 0, "%s", err);
    cr_assert_eq(open_max_line(s, at, 0, HOG_ON_ERROR_STOP, err), 0, "0 is the default, 64 MiB: %s", err);
}

/* The three ways a line can run past a chunk's end: finished in the next
 * chunk (a seam), begun so far before the end that what is left of the
 * chunk is already too long, or running through whole chunks with no
 * newline, to the end of the file. */
Test(etl_pipeline, a_long_line_across_chunk_ends_is_found_before_it_is_held)
{
    size_t cap = 3 * (size_t)CHUNK;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    char err[512], want[128];

    size_t at = 0;
    unsigned before = fill_to(s, &at, CHUNK - 500);
    long_line(s, &at, 2000, 1);
    memcpy(s + at, "1 3:1\n", 6);
    at += 6;
    cr_assert_eq(open_max_line(s, at, 1024, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    snprintf(want, sizeof(want), ":%u: a line longer than 1024 bytes (hog_read_params.max_line)", before + 1);
    cr_assert_str_eq(err, want, "a seam");
    cr_assert_eq(open_max_line(s, at, 2048, HOG_ON_ERROR_STOP, err), 0, "under the bound, the seam is parsed: %s", err);

    at = 0;
    before = fill_to(s, &at, CHUNK - 3000);
    long_line(s, &at, 5000, 1);
    cr_assert_eq(open_max_line(s, at, 1024, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    snprintf(want, sizeof(want), ":%u: a line longer than 1024 bytes (hog_read_params.max_line)", before + 1);
    cr_assert_str_eq(err, want, "too long before the chunk ends");

    at = 0;
    before = fill_to(s, &at, CHUNK - 100);
    long_line(s, &at, CHUNK + CHUNK / 2, 0);
    cr_assert_eq(open_max_line(s, at, CHUNK, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    snprintf(want, sizeof(want), ":%u: a line longer than %u bytes (hog_read_params.max_line)", before + 1, CHUNK);
    cr_assert_str_eq(err, want, "through a whole chunk, no newline to the end");
    cr_assert_eq(open_max_line(s, at, 2 * (uint64_t)CHUNK, HOG_ON_ERROR_STOP, err), 0, "%s", err);
    free(s);
}

/* A first line that does not end in the first MiB, which the plan reads:
 * too long for a CSV file's columns, or for a bound below it. */
Test(etl_pipeline, a_first_line_past_the_plans_mib)
{
    size_t len = (2u << 20) + 1;
    char *s = malloc(len + 1);
    cr_assert_not_null(s);
    size_t at = 0;
    long_line(s, &at, len - 1, 1);
    char err[512];
    cr_assert_eq(open_max_line(s, at, 1024, HOG_ON_ERROR_STOP, err), HOG_EFORMAT);
    cr_assert_str_eq(err, ":1: a line longer than 1024 bytes (hog_read_params.max_line)");
    cr_assert_eq(open_max_line(s, at, 0, HOG_ON_ERROR_STOP, err), 0, "a long libsvm line is fine: %s", err);
    memset(s, '7', len - 1); /* one CSV field of 2 MiB */
    char path[256], detail[512] = "";
    snprintf(path, sizeof(path), "%s/wide.csv", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(s, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, detail, sizeof(detail)), HOG_EFORMAT);
    cr_assert(strstr(detail, "wide.csv:1: a line longer than 1048576 bytes, the most the first line of CSV may hold"),
              "%s", detail);
    free(s);
}

/* ===================================================================== *
 *  Streams
 * ===================================================================== */

/* Text in a pipe whose writer has closed it: its path, for the pipeline. */
static const char *piped(char *path, int fds[2], const char *text)
{
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    size_t n = strlen(text);
    cr_assert_eq(write(fds[1], text, n), (ssize_t)n);
    close(fds[1]);
    snprintf(path, 64, "/proc/self/fd/%d", fds[0]);
    return path;
}

/* A file's last line may lack its newline; a stream's may not: a writer
 * that died in the middle of "3:0.25" leaves "3:0.2", which parses. The
 * cut line is malformed: an error, or skipped and reported. */
Test(etl_pipeline, a_stream_that_ends_inside_a_line_is_an_error_naming_it)
{
    char path[64], err[512], want[256];
    int fds[2];
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(piped(path, fds, "1 1:1\n0 3:0.2"), &p, &ds, err, sizeof(err)), HOG_EFORMAT);
    snprintf(want, sizeof(want), "%s:2:8: expected a newline, found the end of the stream (the line is cut short)",
             path);
    cr_assert_str_eq(err, want);
    close(fds[0]);

    p.on_error = HOG_ON_ERROR_SKIP;
    cr_assert_eq(hog_dataset_open(piped(path, fds, "1 1:1\n0 3:0.2"), &p, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 1);
    cr_assert_eq(hog_dataset_skipped(ds, err, sizeof(err)), 1);
    snprintf(want, sizeof(want), "%s:2:8: expected a newline", path);
    cr_assert(strstr(err, want), "%s", err);
    hog_dataset_close(ds);
    close(fds[0]);

    /* blanks after the last newline are no line */
    p.on_error = HOG_ON_ERROR_STOP;
    cr_assert_eq(hog_dataset_open(piped(path, fds, "1 1:1\n0 3:0.2\n \t"), &p, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 2);
    hog_dataset_close(ds);
    close(fds[0]);
}

/* An eager pass builder and the pipe that feeds it: each block it gets
 * writes the next line into the pipe, so the read can only go on if the
 * rows already in the pipe come out while it is still open. */
typedef struct eager_feed {
    int fd;            /* the pipe's writing end */
    const char **next; /* the lines still to write, NULL-terminated */
    uint32_t rows[8];  /* each block's rows */
    unsigned blocks;
} eager_feed;

static int eager_block(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs)
{
    (void)kept;
    (void)position;
    (void)bufs;
    eager_feed *f = ctx;
    if (f->blocks < HOG_ARRAY_LEN(f->rows))
        f->rows[f->blocks] = blk->rows;
    f->blocks++;
    if (*f->next) {
        ssize_t n = (ssize_t)strlen(*f->next);
        if (write(f->fd, *f->next, (size_t)n) != n)
            return -EIO;
        f->next++;
    } else if (f->fd >= 0) {
        close(f->fd);
        f->fd = -1;
    }
    return 0;
}

Test(etl_pipeline, an_eager_builder_gets_a_streams_rows_while_it_is_open, .timeout = 30)
{
    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    const char *lines[] = {"0 2:1\n-1 3:1\n", "1 4:1\n1 5:", "1\n", NULL};
    eager_feed f = {.fd = fds[1], .next = lines};
    cr_assert_eq(write(fds[1], "1 1:1\n", 6), 6);
    char path[64], err[512] = "";
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
    hog_builder *b;
    cr_assert_eq(hog_builder_create_pass(0, &b), 0);
    hog_builder_on_block(b, eager_block, &f);
    hog_builder_set_eager(b);
    cr_assert(hog_builder_eager(b));
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    hog_text_summary sum;
    cr_assert_eq(hog_text_stream(path, &p, b, &sum, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_builder_rows(b), 5);
    cr_assert_eq(sum.lines, 5);
    /* a block per write, of the rows it ends ("1 5:" is answered when its
     * end comes) */
    cr_assert_eq(f.blocks, 4, "%u blocks", f.blocks);
    cr_assert(f.rows[0] == 1 && f.rows[1] == 2 && f.rows[2] == 1 && f.rows[3] == 1, "%u %u %u %u", f.rows[0],
              f.rows[1], f.rows[2], f.rows[3]);
    cr_assert_eq(f.fd, -1, "the pipe was closed by the last block's callback");
    cr_assert_eq(hog_builder_finish_pass(b), 0);
    close(fds[0]);
}

/* A pass builder's blocks from a file whose row i is "i % 2 1:1 100:i+1":
 * each row checked whole (a line cut short by the stop and parsed would
 * have a smaller last value); the first block makes the stop fd readable. */
typedef struct stop_rows {
    int stop_fd;
    uint64_t rows;
    unsigned warnings;
    char warned[512];
} stop_rows;

static int stop_block(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs)
{
    (void)kept;
    (void)position;
    (void)bufs;
    stop_rows *s = ctx;
    for (uint32_t i = 0; i < blk->rows; i++, s->rows++) {
        cr_assert_eq(blk->label[i], (float)(s->rows % 2), "row %llu", (unsigned long long)s->rows);
        cr_assert_eq(blk->ptr[i + 1] - blk->ptr[i], 2, "row %llu", (unsigned long long)s->rows);
        cr_assert_eq(blk->value[blk->ptr[i] + 1], (float)(s->rows + 1), "row %llu: a cut line parsed",
                     (unsigned long long)s->rows);
    }
    if (s->rows == blk->rows)
        cr_assert_eq(eventfd_write(s->stop_fd, 1), 0);
    return 0;
}

static stop_rows *stop_log;

static void keep_stop_warning(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    if (level == HOG_LOG_WARN && stop_log) {
        stop_log->warnings++;
        snprintf(stop_log->warned, sizeof(stop_log->warned), "%s", msg);
    }
}

/* A file, unlike a stream, ends where the reader stops: the text read
 * before the stop goes on, its last line (cut by a chunk's end) is left out
 * rather than read as a file's last line without a newline, and the read
 * ends well before the file does, with no error. */
Test(etl_pipeline, a_stop_fd_ends_the_read_of_a_file_with_whole_rows, .timeout = 60)
{
    enum { LINES = 800000 };
    char path[256], err[512] = "";
    snprintf(path, sizeof(path), "%s/big.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < LINES; i++)
        fprintf(f, "%d 1:1 100:%d\n", i % 2, i + 1);
    cr_assert_eq(fclose(f), 0);
    hog_read_params p = params(HOG_FORMAT_LIBSVM);
    p.mem_limit = 80u << 20; /* chunks of 1 MiB, 4 out at most: 12 MB is many chunks */
    p.index_base = 0;
    stop_rows s = {.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
    cr_assert_geq(s.stop_fd, 0);
    hog_builder *b;
    cr_assert_eq(hog_builder_create_pass(1000, &b), 0);
    hog_builder_on_block(b, stop_block, &s);
    cr_assert_eq(hog_builder_stop_fd(b), -1, "none by default");
    hog_builder_set_stop(b, s.stop_fd);
    cr_assert_eq(hog_builder_stop_fd(b), s.stop_fd);
    stop_log = &s;
    hog_log_set(keep_stop_warning, NULL, HOG_LOG_WARN);
    hog_text_summary sum;
    cr_assert_eq(hog_text_stream(path, &p, b, &sum, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(sum.stopped, 1);
    cr_assert_eq(hog_builder_stopped(b), 1);
    cr_assert_eq(sum.skipped, 0);
    cr_assert_eq(hog_builder_finish_pass(b), 0);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert(s.rows >= 1000 && s.rows < LINES / 2, "%llu rows", (unsigned long long)s.rows);
    cr_assert_leq(s.warnings, 1);
    char want[512];
    snprintf(want, sizeof(want), "%s:%llu: the read was stopped inside this line: its first ", path,
             (unsigned long long)s.rows + 1);
    cr_assert(s.warnings == 0 || strstr(s.warned, want) == s.warned, "%s", s.warned);
    close(s.stop_fd);
}
