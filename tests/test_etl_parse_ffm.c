/* test_etl_parse_ffm.c: the LIBFFM parser: fields kept with their values, rows put in index order, its detection, and located errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

/* Row i's fields are want[0..n). */
static void check_fields(const hog_rows *r, uint64_t i, uint32_t n, const uint16_t *want)
{
    cr_assert(r->fielded, "the rows have no fields");
    cr_assert_eq(r->ptr[i + 1] - r->ptr[i], n, "row %lu", (unsigned long)i);
    for (uint32_t k = 0; k < n; k++)
        cr_assert_eq(r->field[r->ptr[i] + k], want[k], "row %lu value %u: field %u, want %u", (unsigned long)i, k,
                     r->field[r->ptr[i] + k], want[k]);
}

Test(etl_parse_ffm, rows_keep_their_fields)
{
    hog_read_params p = params(HOG_FORMAT_AUTO);
    const char *text = "1 0:3:1 1:7:0.5 2:12:-2\n"
                       "\n"
                       "0 2:40:1 0:5:1 1:9:1.5\r\n" /* any order: sorted by index, fields along */
                       "# a comment line\n"
                       "1 3:8:1 1:8:2 4:2:0 # one index twice: summed, the first field kept; a zero dropped\n"
                       "0\n"
                       "1 65535:4294967295:1";
    hog_text_plan plan;
    plan_ok(&p, text, &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_FFM, "a line whose pairs have two colons is LIBFFM");
    cr_assert(plan.fielded);
    hog_text_plan_free(&plan);
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_eq(r.rows, 5);
    cr_assert_eq(r.lines, 7);
    cr_assert_not(r.weighted);
    check_sorted(&r);
    check_row(&r, 0, 1, 3, (uint32_t[]){3, 7, 12}, (float[]){1, 0.5f, -2});
    check_fields(&r, 0, 3, (uint16_t[]){0, 1, 2});
    check_row(&r, 1, 0, 3, (uint32_t[]){5, 9, 40}, (float[]){1, 1.5f, 1});
    check_fields(&r, 1, 3, (uint16_t[]){0, 1, 2});
    check_row(&r, 2, 1, 1, (uint32_t[]){8}, (float[]){3});
    check_fields(&r, 2, 1, (uint16_t[]){3});
    check_row(&r, 3, 0, 0, NULL, NULL);
    check_row(&r, 4, 1, 1, (uint32_t[]){UINT32_MAX}, (float[]){1});
    check_fields(&r, 4, 1, (uint16_t[]){65535});
    hog_rows_free(&r);
}

/* Indices are as written (LIBFFM counts from 0), unless index_base says
 * 1; hashed, they land where libsvm's hashing puts them, fields kept. */
Test(etl_parse_ffm, index_base_and_hashing)
{
    hog_read_params p = hog_read_params_default(); /* index_base -1: detection, which LIBFFM does not take */
    hog_rows r;
    parse_ok(&p, "1 0:0:1 1:4:2\n0 0:1:1\n", &r);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, 4}, (float[]){1, 2});
    hog_rows_free(&r);
    p.index_base = 1;
    parse_ok(&p, "1 0:1:1 1:4:2\n", &r);
    check_row(&r, 0, 1, 2, (uint32_t[]){0, 3}, (float[]){1, 2});
    hog_rows_free(&r);
    parse_fails(&p, "1 0:0:1\n", "1:5: expected an index of at least 1 (hog_read_params.index_base is 1), found 0");

    p = params(HOG_FORMAT_FFM);
    p.hash_bits = 6;
    parse_ok(&p, "1 0:100:1 1:200:2 2:300:3\n", &r);
    check_sorted(&r);
    cr_assert_eq(r.nnz, 3);
    const uint32_t want[3] = {hog_murmur3_u32(100, 0) & 63, hog_murmur3_u32(200, 0) & 63,
                              hog_murmur3_u32(300, 0) & 63};
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t at = 0;
        while (at < 3 && r.index[at] != want[k])
            at++;
        cr_assert(at < 3, "index %u missing", want[k]);
        cr_assert_eq(r.field[at], k, "the field travels with its hashed index");
        cr_assert_float_eq(r.value[at], (float)(k + 1), 1e-6f);
    }
    hog_rows_free(&r);
}

Test(etl_parse_ffm, errors_name_line_and_column)
{
    hog_read_params p = params(HOG_FORMAT_FFM);
    parse_fails(&p, "1 0:1:1\n1 a:2:1\n", "2:3: expected a field number before ':', found 'a:2:1'");
    parse_fails(&p, "1 :2:1\n", "1:3: expected a field number before ':', found ':2:1'");
    parse_fails(&p, "1 0:1:1 2\n", "1:10: expected ':' after the field number (field:index:value), found end of line");
    parse_fails(&p, "1 0;1:1\n", "1:4: expected ':' after the field number (field:index:value), found ';1:1'");
    parse_fails(&p, "1 0:x:1\n", "1:5: expected an index after the field's ':', found 'x:1'");
    parse_fails(&p, "1 0:5\n", "1:6: expected ':' and a value after the index (field:index:value), found end of line");
    parse_fails(&p, "1 3:5 4:6\n", "1:6: expected ':' and a value after the index (field:index:value), found ' '");
    parse_fails(&p, "1 0:5:x\n", "1:7: expected a number, found 'x'");
    parse_fails(&p, "1 0:5:1e999\n", "1:7: expected a finite number, found '1e999'");
    parse_fails(&p, "1 65536:5:1\n", "1:3: expected a field number below 65536, found '65536:5:1'");
    parse_fails(&p, "1 0:4294967296:1\n", "1:5: expected an index below 4294967296, found '4294967296:1'");
    parse_fails(&p, "x 0:1:1\n", "1:1: expected a number, found 'x'");
}

/* Skip mode skips a bad line and keeps its place; the feature ceiling is a
 * bound it does not skip. */
Test(etl_parse_ffm, skips_and_the_ceiling)
{
    hog_read_params p = params(HOG_FORMAT_FFM);
    p.on_error = HOG_ON_ERROR_SKIP;
    hog_rows r;
    parse_ok(&p, "1 0:1:1\n1 0:b:1\n0 1:2:1\n", &r);
    cr_assert_eq(r.rows, 2);
    cr_assert_eq(r.skipped, 1);
    cr_assert_eq(r.errors[0].line, 2);
    cr_assert_eq(r.errors[0].column, 5);
    check_fields(&r, 1, 1, (uint16_t[]){1});
    hog_rows_free(&r);

    p.max_features = 10;
    parse_fails(&p, "1 0:1:1\n1 0:3:1 1:10:1\n",
                "2:11: index 10 is past the ceiling of 10 features (hog_read_params.max_features, "
                "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 3)");
}

/* A LIBFFM line is told from libsvm and CSV by its two colons, and the
 * name .ffm says so where the lines disagree. */
Test(etl_parse_ffm, detection)
{
    hog_read_params p = params(HOG_FORMAT_AUTO);
    hog_text_plan plan;
    plan_ok(&p, "1 1:2 3:4\n0 2:1\n", &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_LIBSVM, "one colon: libsvm");
    cr_assert_not(plan.fielded);
    hog_text_plan_free(&plan);
    plan_ok(&p, "0 0:1:1\n", &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_FFM);
    hog_text_plan_free(&plan);
    /* the lines after a malformed first one decide */
    plan_ok(&p, "1 0:1:\n1 0:1:1\n0 1:2:0.5\n", &plan);
    cr_assert_eq(plan.format, HOG_FORMAT_FFM);
    hog_text_plan_free(&plan);
    char err[512] = "";
    const char *mixed = "1 0:1:1\n1 2:1\n0 1:2:1\n";
    cr_assert_eq(hog_text_plan_make("d.ffm", &p, mixed, strlen(mixed), &plan, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(plan.format, HOG_FORMAT_FFM, "the name decides a tie");
    hog_text_plan_free(&plan);
}
