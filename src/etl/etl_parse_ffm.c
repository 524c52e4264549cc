/* etl_parse_ffm.c: the LIBFFM line parser: a label, then field:index:value triples, each value kept with its field. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "etl_parse.h"

/* ===================================================================== *
 *  LIBFFM (and xLearn's FFM input):  label field:index:value ... [# comment]
 *
 *  Fields and indices are non-negative decimal integers: a field below
 *  HOG_MAX_FIELDS, an index below 2^32. Indices are global, as LIBFFM
 *  numbers them (a linear model reads the index and leaves the field), and
 *  kept as written (hog_read_params.index_base 1 subtracts one, as for
 *  libsvm; detection never does: LIBFFM counts from 0). A row's triples may
 *  come in any order (LIBFFM does not ask for one): they are sorted by
 *  index and an index given twice is summed, keeping its first field.
 *  With hash_bits > 0 the index (after the base) is hashed as libsvm's is.
 * ===================================================================== */

/* The decimal digits at p (not past end) into *out, saturated at
 * UINT32_MAX + 1. Returns the end of the digits. */
static HOG_ALWAYS_INLINE const char *scan_uint(const char *p, const char *end, const char *lim, uint64_t *out)
{
    if (HOG_LIKELY(lim - p >= 8)) {
        unsigned n = digits8(p, end, out);
        if (HOG_LIKELY(n < 8))
            return p + n;
    }
    uint64_t v = 0;
    for (; p < end && is_digit(*p); p++)
        if (v <= UINT32_MAX)
            v = v * 10 + (uint64_t)(*p - '0');
    *out = v > UINT32_MAX ? (uint64_t)UINT32_MAX + 1 : v;
    return p;
}

int hog_parse_ffm_line(hog_parse_ctx *c, const char *line, const char *le)
{
    const char *p = skip_blanks(line, le);
    if (p == le || *p == '#')
        return 0;
    hog_rows *o = c->out;
    /* a triple takes at least 6 bytes with its blank ("0:0:1 ") */
    int rc = hog_rows_reserve(o, (uint64_t)(le - p) / 6 + 1);
    if (rc < 0)
        return rc;
    const uint64_t start = o->nnz;
    const unsigned base = c->plan->index_base;
    const int hashed = c->plan->hash_bits > 0;
    const uint64_t cap = c->plan->max_features;
    uint64_t nnz = start;

    double d;
    const char *e = scan_number(p, le, c->lim, &d);
    if (!e || (e < le && !is_blank(*e) && *e != '#'))
        return hog_parse_fail(c, p, "a number", NULL);
    float label = 0;
    if ((rc = finite_value(c, p, d, &label)) < 0)
        return rc;

    for (p = skip_blanks(e, le); p < le; p = skip_blanks(e, le)) {
        if (*p == '#') { /* the rest of the line is a comment */
            le = c->le = p;
            break;
        }
        uint64_t field, idx;
        const char *q = scan_uint(p, le, c->lim, &field);
        if (HOG_UNLIKELY(q == p))
            return hog_parse_fail(c, p, "a field number before ':'", NULL);
        if (HOG_UNLIKELY(q == le || *q != ':'))
            return hog_parse_fail(c, q, "':' after the field number (field:index:value)", NULL);
        if (HOG_UNLIKELY(field >= HOG_MAX_FIELDS)) {
            char exp[48];
            snprintf(exp, sizeof(exp), "a field number below %u", HOG_MAX_FIELDS);
            return hog_parse_fail(c, p, exp, NULL);
        }
        const char *is = q + 1;
        q = scan_uint(is, le, c->lim, &idx);
        if (HOG_UNLIKELY(q == is))
            return hog_parse_fail(c, is, "an index after the field's ':'", NULL);
        if (HOG_UNLIKELY(q == le || *q != ':'))
            return hog_parse_fail(c, q, "':' and a value after the index (field:index:value)", NULL);
        if (HOG_UNLIKELY(idx > UINT32_MAX))
            return hog_parse_fail(c, is, "an index below 4294967296", NULL);
        if (HOG_UNLIKELY(idx < base))
            return hog_parse_fail(c, is, "an index of at least 1 (hog_read_params.index_base is 1)", "0");
        if (HOG_UNLIKELY(cap && !hashed && idx - base >= cap))
            return hog_parse_ceiling_fail(c, is, q); /* a bound, as libsvm's */
        const char *vs = q + 1;
        e = scan_number(vs, le, c->lim, &d);
        if (HOG_UNLIKELY(!e || (e < le && !is_blank(*e) && *e != '#')))
            return hog_parse_fail(c, vs, "a number", NULL);
        float v = (float)d;
        if (HOG_UNLIKELY(!isfinite(v)))
            return hog_parse_fail(c, vs, "a finite number", NULL);
        if (v != 0.0f) {
            uint32_t ix = (uint32_t)idx - base;
            if (hashed)
                ix = hog_murmur3_u32(ix, 0) & c->mask;
            o->index[nnz] = ix;
            o->value[nnz] = v;
            o->field[nnz] = (uint16_t)field;
            nnz++;
        }
    }
    o->nnz = nnz;
    if ((rc = hog_row_sort_merge(c, start)) < 0)
        return rc;
    hog_rows_push(o, label);
    return 1;
}
