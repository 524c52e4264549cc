/* test_etl_dataset.c: the public data set calls: read parameters, text formats of the same rows, and atomic save and convert. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etl/etl.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("etl-dataset");
}

TestSuite(etl_dataset, .init = setup, .fini = scratch_remove);

Test(etl_dataset, read_params_default)
{
    hog_read_params p = hog_read_params_default();
    cr_assert_eq(p.format, HOG_FORMAT_AUTO);
    cr_assert_eq(p.delimiter, 0);
    cr_assert_eq(p.header, -1);
    cr_assert_eq(p.label_index, 0);
    cr_assert_null(p.label_name);
    cr_assert_eq(p.rows_per_block, 0);
}

Test(etl_dataset, csv_and_libsvm_of_same_rows_share_a_fingerprint)
{
    char a[256], b[256];
    write_bytes(path_of(a, "a.svm"), "1 0:2 2:3\n0 1:4\n", 16);
    write_bytes(path_of(b, "b.csv"), "y,p,q,r\n1,2,0,3\n0,0,4,0\n", 24);
    hog_dataset *x = open_ok(a, NULL), *y = open_ok(b, NULL);
    assert_same_rows(x, y);
    hog_dataset_close(x);
    hog_dataset_close(y);
}

/* ===================================================================== *
 *  Atomic output
 * ===================================================================== */

Test(etl_dataset, convert_leaves_no_file_on_parse_error)
{
    char in[256], out[256], err[512] = "";
    write_bytes(path_of(in, "bad.svm"), "1 1:1\n1 2:x\n", 12);
    path_of(out, "out.hgd");
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(in, NULL, out, &info, err, sizeof(err)), HOG_EFORMAT);
    char expect[512];
    snprintf(expect, sizeof(expect), "%s:2:5: expected a number, found 'x'", in);
    cr_assert_str_eq(err, expect);
    cr_assert_eq(access(out, F_OK), -1);
    cr_assert_eq(count_files(), 1);

    /* an empty input: nothing written either */
    write_bytes(in, "", 0);
    cr_assert_eq(hog_dataset_convert(in, NULL, out, NULL, err, sizeof(err)), HOG_EEMPTY);
    cr_assert_eq(access(out, F_OK), -1);
    cr_assert_eq(count_files(), 1);
}

Test(etl_dataset, convert_keeps_older_file_on_error)
{
    char in[256], out[256], err[512] = "";
    path_of(out, "out.hgd");
    write_bytes(out, "older contents", 14);
    write_bytes(path_of(in, "bad.csv"), "1,2\n3,4,5\n", 10);
    cr_assert_eq(hog_dataset_convert(in, NULL, out, NULL, err, sizeof(err)), HOG_EFORMAT);
    size_t len;
    uint8_t *got = read_bytes(out, &len);
    cr_assert_eq(len, 14);
    cr_assert_eq(memcmp(got, "older contents", 14), 0);
    free(got);
    cr_assert_eq(count_files(), 2);

    /* a good input replaces it */
    write_bytes(in, "1,2\n3,4\n", 8);
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(in, NULL, out, &info, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.rows, 2);
    hog_dataset *ds = open_ok(out, NULL);
    hog_row r = hog_dataset_row(ds, 1);
    cr_assert_eq(r.label, 3.0f);
    cr_assert_eq(r.nnz, 1);
    cr_assert_eq(r.value[0], 4.0f);
    hog_dataset_close(ds);

    /* binary to binary: validated and rewritten */
    char out2[256];
    cr_assert_eq(hog_dataset_convert(out, NULL, path_of(out2, "copy.hgd"), &info, err,
                                     sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.rows, 2);
    cr_assert_eq(count_files(), 3);
}

/* The input under its own name or another (a hard link) is never the
 * output: converting would write over what is being read. */
Test(etl_dataset, convert_refuses_its_own_input_as_output)
{
    char in[256], other[256], err[512] = "";
    write_bytes(path_of(in, "a.svm"), "1 1:0.5\n-1 2:1\n", 16);
    path_of(other, "b.svm");
    cr_assert_eq(link(in, other), 0);
    cr_assert_eq(hog_dataset_convert(in, NULL, in, NULL, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "is the input"), "%s", err);
    cr_assert_eq(hog_dataset_convert(in, NULL, other, NULL, err, sizeof(err)), HOG_EPARAM);
    size_t len;
    uint8_t *got = read_bytes(in, &len);
    cr_assert_eq(len, 16);
    cr_assert_eq(memcmp(got, "1 1:0.5\n-1 2:1\n", 16), 0);
    free(got);
    cr_assert_eq(count_files(), 2);
}

Test(etl_dataset, save_into_missing_folder_fails_cleanly)
{
    char txt[256], out[256];
    write_bytes(path_of(txt, "a.svm"), "1 1:1\n", 6);
    hog_dataset *ds = open_ok(txt, NULL);
    cr_assert_eq(hog_dataset_save(ds, path_of(out, "no/such/dir/a.hgd")), -ENOENT);
    hog_dataset_close(ds);
    cr_assert_eq(count_files(), 1);
}
