/* etl_parse.c: chunks of text parsed line by line by their format's parser, for many threads at once; the format detection and the plan that say how. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "etl_parse.h"

/*
 * A chunk is a run of whole lines that is never copied or NUL-terminated:
 * every scan is bounded by the end of its line, and lines are found with
 * memchr. Numbers take Clinger's exact fast path (no strtod) when they
 * can; rows go straight into the caller's growable CSR arrays, reserved once
 * per line, so the per-value loop has no capacity checks.
 *
 * The rules and the error wording are those of the first, line-by-line
 * reader that these parsers replaced, plus (each format's own rules are in
 * its file):
 *
 *  - Lines end at '\n'; trailing '\r's are dropped (CRLF files).
 *  - Values equal to zero are not stored (a sparse row has no explicit zeros).
 *  - Rows that can hold one index twice (hashing, VW, CSV categories) are
 *    sorted by index and equal indices summed; a sum that is zero is
 *    dropped.
 */

#define DEFAULT_STRING_BITS 18u

/* ===================================================================== *
 *  Chunks
 * ===================================================================== */

int hog_parse_chunk(const hog_text_plan *plan, const char *buf, size_t len, hog_rows *out,
                    hog_text_error *err)
{
    hog_parse_ctx c;
    memset(&c, 0, sizeof(c));
    c.plan = plan;
    c.out = out;
    c.line_no = out->lines; /* line numbers count from what out already holds */
    c.first = buf;
    c.lim = buf + len;
    unsigned bits = plan->hash_bits;
    if (bits == 0 && plan->format != HOG_FORMAT_LIBSVM)
        bits = DEFAULT_STRING_BITS;
    c.mask = hog_hash_mask(bits);
    c.stop = plan->format == HOG_FORMAT_CSV ? plan->delimiter
             : plan->format == HOG_FORMAT_VW ? '|'
                                             : HOG_NO_STOP;
    out->weighted = plan->format == HOG_FORMAT_VW;
    int rc = hog_rows_reserve(out, 0); /* ptr[0] exists even for a chunk without rows */
    if (rc == 0 && plan->format == HOG_FORMAT_CSV)
        rc = hog_parse_csv_tables(&c);
    if (rc == 0 && plan->format != HOG_FORMAT_LIBSVM && plan->format != HOG_FORMAT_CSV &&
        plan->format != HOG_FORMAT_VW)
        rc = -EINVAL; /* a plan not made by hog_text_plan_make: a programmer error */

    const uint64_t max_line = plan->max_line ? plan->max_line : HOG_DEFAULT_MAX_LINE;
    const char *p = buf, *end = buf + len;
    while (rc == 0 && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        c.line_no++;
        if (HOG_UNLIKELY((uint64_t)(le - p) > max_line)) { /* not skipped: a bound, not a typo */
            rc = HOG_EFORMAT;
            if (err) {
                err->line = c.line_no;
                err->column = 0;
                snprintf(err->what, sizeof(err->what), "a line longer than %llu bytes (hog_read_params.max_line)",
                         (unsigned long long)max_line);
            }
            break;
        }
        while (le > p && le[-1] == '\r')
            le--;
        c.line = p;
        c.le = le;
        const uint64_t row_nnz = out->nnz;
        switch (plan->format) {
        case HOG_FORMAT_LIBSVM:
            rc = hog_parse_libsvm_line(&c, p, le);
            break;
        case HOG_FORMAT_CSV:
            rc = hog_parse_csv_line(&c, p, le);
            break;
        default:
            rc = hog_parse_vw_line(&c, p, le);
            break;
        }
        if (HOG_UNLIKELY(rc < 0)) {
            out->nnz = row_nnz;
            if (rc == HOG_EFORMAT && plan->skip_errors) {
                out->skipped++;
                if (out->kept < HOG_TEXT_ERRORS_KEPT)
                    out->errors[out->kept++] = c.e;
                rc = 0;
            } else if (rc == HOG_EFORMAT && err) {
                *err = c.e;
            }
        } else {
            rc = 0;
        }
        p = next;
    }
    out->lines = c.line_no;
    hog_free(c.keys);
    hog_free(c.vals);
    hog_free(c.own_kind);
    hog_free(c.own_feature);
    return rc;
}

/* ===================================================================== *
 *  Plans: the format, and (etl_parse_csv.c) for CSV the delimiter, header
 *  and columns
 * ===================================================================== */

/* Whether [s, e) reads "digits:number-ish": a libsvm pair. */
static int is_pair(const char *s, const char *e)
{
    const char *p = s;
    while (p < e && is_digit(*p))
        p++;
    if (p == s || p == e || *p != ':' || ++p == e)
        return 0;
    for (; p < e; p++)
        if (!is_digit(*p) && !strchr(".eE+-", *p))
            return 0;
    return 1;
}

/* 2: VW, 1: libsvm, 0: CSV, -1: cannot tell from this line (blank, comment,
 * or a lone token). */
static int classify_line(const char *s, const char *e)
{
    const char *p = skip_blanks(s, e);
    if (p == e || *p == '#')
        return -1;
    if (memchr(p, '|', (size_t)(e - p)))
        return 2;
    const char *hash = memchr(p, '#', (size_t)(e - p));
    if (hash)
        e = hash;
    const char *te = p;
    while (te < e && !is_blank(*te))
        te++;
    int tokens = 1;
    for (p = skip_blanks(te, e); p < e; p = skip_blanks(te, e), tokens++) {
        for (te = p; te < e && !is_blank(*te);)
            te++;
        if (is_pair(p, te) || (tokens == 1 && te - p >= 4 && memcmp(p, "qid:", 4) == 0))
            return 1;
    }
    if (tokens == 1 && !memchr(s, ',', (size_t)(e - s)) && !memchr(s, ';', (size_t)(e - s)))
        return -1;
    return 0;
}

static hog_format detect_format(const char *head, size_t len)
{
    const char *p = head, *end = head + len;
    hog_head_line l;
    while (hog_head_next(&p, end, &l)) {
        int k = classify_line(l.s, l.e);
        if (k >= 0)
            return k == 2 ? HOG_FORMAT_VW : k == 1 ? HOG_FORMAT_LIBSVM : HOG_FORMAT_CSV;
    }
    return HOG_FORMAT_CSV; /* also for a head with no data: reading it reports that */
}

static int check_params(const hog_read_params *p, char *err, size_t len)
{
    if (p->format < HOG_FORMAT_AUTO || p->format > HOG_FORMAT_VW)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.format: %d is not a hog_format", (int)p->format);
    if (p->format == HOG_FORMAT_BINARY)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.format: a binary dataset is not text");
    if (p->rows_per_block > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.rows_per_block: %u is more than %u",
                        p->rows_per_block, HOG_MAX_ROWS_PER_BLOCK);
    if (p->hash_bits > 31)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.hash_bits: %u is not between 0 and 31",
                        p->hash_bits);
    if (p->index_base < -1 || p->index_base > 1)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.index_base: %d is not -1 (detect), 0 or 1",
                        p->index_base);
    if (p->on_error != HOG_ON_ERROR_STOP && p->on_error != HOG_ON_ERROR_SKIP)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.on_error: %d is not stop or skip",
                        (int)p->on_error);
    char d = p->delimiter;
    if (d != 0 && (d == '\n' || d == '\r' || d == '"' || d == '.' || d == '+' || d == '-' ||
                   d == 'e' || d == 'E' || is_digit(d)))
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.delimiter: '%c' cannot separate numbers", d);
    if (p->header < -1 || p->header > 1)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.header: %d is not 1, 0 or -1", p->header);
    if (p->label_name && p->header == 0)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.label_name: needs a header, but header is 0");
    if (!p->label_name && p->label_index < 0)
        return hog_fail(HOG_EPARAM, err, len, "hog_read_params.label_index: %ld is negative", p->label_index);
    return 0;
}

int hog_text_plan_make(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                       hog_text_plan *plan, char *err, size_t err_len)
{
    memset(plan, 0, sizeof(*plan));
    int rc = check_params(p, err, err_len);
    if (rc < 0)
        return rc;
    plan->format = p->format == HOG_FORMAT_AUTO ? detect_format(head, head_len) : p->format;
    plan->hash_bits = p->hash_bits;
    if (plan->format == HOG_FORMAT_LIBSVM && p->index_base < 0)
        plan->index_base = hog_text_plan_index_base(head, head_len, &plan->base_lines);
    else
        plan->index_base = p->index_base < 0 ? 0 : (unsigned)p->index_base;
    plan->skip_errors = p->on_error == HOG_ON_ERROR_SKIP;
    plan->max_line = p->max_line ? p->max_line : HOG_DEFAULT_MAX_LINE;
    if (plan->format == HOG_FORMAT_CSV) {
        rc = hog_text_plan_csv(path, p, head, head_len, plan, err, err_len);
        if (rc < 0)
            hog_text_plan_free(plan);
    }
    return rc;
}

void hog_text_plan_free(hog_text_plan *plan)
{
    if (!plan)
        return;
    if (plan->column_name)
        for (uint32_t j = 0; j < plan->fields; j++)
            hog_free(plan->column_name[j]);
    hog_free(plan->column_name);
    hog_free(plan->column_feature);
    hog_free(plan->column_kind);
    plan->column_name = NULL;
    plan->column_feature = NULL;
    plan->column_kind = NULL;
}
