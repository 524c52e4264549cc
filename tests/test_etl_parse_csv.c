/* test_etl_parse_csv.c: the CSV parser and its plan: header, quotes and CRLF, located errors, label, ignored and categorical columns, hashing, delimiters and parameter errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

Test(etl_parse_csv, csv_header_quotes_crlf_empty_fields)
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

Test(etl_parse_csv, csv_errors_are_located)
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

Test(etl_parse_csv, csv_label_ignore_categorical)
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

Test(etl_parse_csv, csv_hash_bits_numeric_by_name)
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

Test(etl_parse_csv, csv_delimiters_and_detection)
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

Test(etl_parse_csv, csv_parameter_errors)
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
    p = params(HOG_FORMAT_CSV);
    p.rows_per_block = (1u << 24) + 1;
    plan_fails(&p, "1,2\n", HOG_EPARAM, "hog_read_params.rows_per_block: 16777217 is more than 16777216");
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

/* Read with fields, each value keeps its column's number in the line
 * (the label's and ignored columns counted): categorical values hashed
 * per column keep the column they came from; without, no fields. */
Test(etl_parse_csv, csv_columns_as_fields)
{
    hog_read_params p = params(HOG_FORMAT_CSV);
    p.label_name = "y";
    p.ignore = "id";
    p.categorical = "color,shape";
    const char *text = "id,x,color,y,shape,z\n"
                       "7,1.5,red,1,round,2\n"
                       "8,0,blue,0,,0\n";
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_not(r.fielded);
    hog_rows_free(&r);
    p.fields = 1;
    parse_ok(&p, text, &r);
    cr_assert(r.fielded);
    cr_assert_eq(r.rows, 2);
    check_sorted(&r);
    const struct {
        uint32_t index;
        uint16_t field;
    } want[] = {{0, 1},
                {1, 5},
                {2 + hog_hash_feature("color=red", 9, 0, 18), 2},
                {2 + hog_hash_feature("shape=round", 11, 0, 18), 4}};
    cr_assert_eq(r.ptr[1], 4);
    for (unsigned k = 0; k < 4; k++) {
        uint32_t at = 0;
        while (at < 4 && r.index[at] != want[k].index)
            at++;
        cr_assert(at < 4, "value %u missing", k);
        cr_assert_eq(r.field[at], want[k].field, "value %u: field %u, want %u", k, r.field[at], want[k].field);
    }
    cr_assert_eq(r.ptr[2] - r.ptr[1], 1);
    cr_assert_eq(r.field[r.ptr[1]], 2, "blue, in column 2");
    hog_rows_free(&r);

    /* a field is a u16: a line of more columns has no fields to give them */
    const size_t cols = HOG_MAX_FIELDS + 1;
    char *wide = malloc(2 * cols + 1);
    cr_assert_not_null(wide);
    for (size_t j = 0; j < cols; j++) {
        wide[2 * j] = '1';
        wide[2 * j + 1] = j + 1 < cols ? ',' : '\n';
    }
    wide[2 * cols] = '\0';
    p = params(HOG_FORMAT_CSV);
    p.fields = 1;
    plan_fails(&p, wide, HOG_EPARAM,
               "t.txt: 65537 columns, each a field, are more than the 65536 fields a data set may have "
               "(hog_read_params.fields)");
    p.fields = 0;
    parse_ok(&p, wide, &r);
    cr_assert_eq(r.nnz, HOG_MAX_FIELDS, "read without fields as before");
    hog_rows_free(&r);
    free(wide);
}
