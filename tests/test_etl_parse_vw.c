/* test_etl_parse_vw.c: the Vowpal Wabbit parser: labels, weights, tags, hashed features in namespaces, and located errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_parse.h"

static uint32_t vw_index(const char *ns, const char *f, unsigned bits)
{
    uint32_t seed = *ns ? hog_hash_feature(ns, strlen(ns), 0, 0) : 0;
    return hog_hash_feature(f, strlen(f), seed, bits);
}

Test(etl_parse_vw, vw_rows)
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

Test(etl_parse_vw, vw_errors)
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

/* Read with fields, each namespace is one, numbered by its name's first
 * byte (the default namespace's 32); without, the rows have none. */
Test(etl_parse_vw, namespaces_as_fields)
{
    hog_read_params p = params(HOG_FORMAT_VW);
    const char *text = "1 |user age:0.5 |item price:3 | plain\n-1 |Zed z\n";
    hog_rows r;
    parse_ok(&p, text, &r);
    cr_assert_not(r.fielded, "no fields unless asked");
    hog_rows_free(&r);
    p.fields = 1;
    parse_ok(&p, text, &r);
    cr_assert(r.fielded);
    cr_assert_eq(r.rows, 2);
    const struct {
        const char *ns, *f;
        uint16_t field;
    } want[] = {{"user", "age", 'u'}, {"item", "price", 'i'}, {"", "plain", ' '}, {"Zed", "z", 'Z'}};
    for (unsigned k = 0; k < 4; k++) {
        const uint32_t ix = vw_index(want[k].ns, want[k].f, 18);
        const uint32_t from = k < 3 ? r.ptr[0] : r.ptr[1], to = k < 3 ? r.ptr[1] : r.ptr[2];
        uint32_t at = from;
        while (at < to && r.index[at] != ix)
            at++;
        cr_assert(at < to, "feature %s^%s missing", want[k].ns, want[k].f);
        cr_assert_eq(r.field[at], want[k].field, "%s^%s: field %u", want[k].ns, want[k].f, r.field[at]);
    }
    hog_rows_free(&r);
    p.fields = 2;
    plan_fails(&p, text, HOG_EPARAM, "hog_read_params.fields: 2 is not 0 or 1");
}
