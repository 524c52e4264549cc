/* test_etl_parse.h: what the text parser tests share: read parameters, planning and parsing a text as one chunk, and checking the rows it gives. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_ETL_PARSE_H
#define HOG_TEST_ETL_PARSE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "etl/etl.h"

static inline hog_read_params params(hog_format fmt)
{
    hog_read_params p = hog_read_params_default();
    p.format = fmt;
    p.index_base = 0; /* indices as written, unless a test says otherwise */
    return p;
}

static inline void plan_ok(const hog_read_params *p, const char *text, hog_text_plan *plan)
{
    char err[512] = "";
    int rc = hog_text_plan_make("t.txt", p, text, strlen(text), plan, err, sizeof(err));
    cr_assert_eq(rc, 0, "plan: %s (%s)", hog_strerror(rc), err);
}

/* Plans from the text, which must fail with want and msg. */
static inline void plan_fails(const hog_read_params *p, const char *text, int want, const char *msg)
{
    char err[512] = "";
    hog_text_plan plan;
    int rc = hog_text_plan_make("t.txt", p, text, strlen(text), &plan, err, sizeof(err));
    cr_assert_eq(rc, want, "plan: got %d (%s), want %d: %s", rc, hog_strerror(rc), want, err);
    cr_assert_str_eq(err, msg);
}

/* Plans from the text, parses it all after the header as one chunk. */
static inline void parse_ok(const hog_read_params *p, const char *text, hog_rows *r)
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
static inline void parse_fails(const hog_read_params *p, const char *text, const char *want)
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

static inline void check_row(const hog_rows *r, uint64_t i, float label, uint32_t nnz, const uint32_t *idx,
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
static inline void check_sorted(const hog_rows *r)
{
    for (uint64_t i = 0; i < r->rows; i++)
        for (uint32_t k = r->ptr[i] + 1; k < r->ptr[i + 1]; k++)
            cr_assert(r->index[k - 1] < r->index[k], "row %lu not increasing", (unsigned long)i);
}

#endif /* HOG_TEST_ETL_PARSE_H */
