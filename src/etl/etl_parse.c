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
#define NUL_WINDOW (64u << 10) /* bytes searched for a NUL at a time: they stay in the cache for the parser */

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
    const char *checked = buf, *nul = NULL; /* no NUL in [p, checked) but at nul */
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
        /* A NUL byte is no text: found here, at its column, rather than by
         * each parser where it fails to read it (or, in a comment or a
         * name, reads it). Searched a window at a time ahead of the lines,
         * not line by line: a call per short line cost more than the search. */
        while (!nul && checked < le) {
            const size_t n = HOG_MIN((size_t)(end - checked), (size_t)NUL_WINDOW);
            nul = memchr(checked, '\0', n);
            checked += n;
        }
        if (HOG_UNLIKELY(nul && nul < le)) {
            rc = hog_parse_fail(&c, nul, "text", "a NUL byte");
            nul = NULL; /* the search goes on from the next line */
            checked = next;
        } else if (plan->format == HOG_FORMAT_LIBSVM)
            rc = hog_parse_libsvm_line(&c, p, le);
        else if (plan->format == HOG_FORMAT_CSV)
            rc = hog_parse_csv_line(&c, p, le);
        else
            rc = hog_parse_vw_line(&c, p, le);
        if (HOG_UNLIKELY(rc < 0)) {
            out->nnz = row_nnz;
            if (rc == HOG_EFORMAT && plan->skip_errors && !c.bound) {
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
 *  Plans: the format (etl_parse_detect.c), and (etl_parse_csv.c) for CSV
 *  the delimiter, header and columns
 * ===================================================================== */

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

/* A NUL byte in the header lines (which no parser reads) at its line and column. */
static int header_text(const char *path, const char *head, uint64_t len, char *err, size_t err_len)
{
    const char *nul = len ? memchr(head, '\0', (size_t)len) : NULL;
    if (!nul)
        return 0;
    unsigned long long line = 1;
    const char *start = head;
    for (const char *q = head; (q = memchr(q, '\n', (size_t)(nul - q))) != NULL; start = ++q)
        line++;
    return hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu:%llu: expected text, found a NUL byte", path, line,
                    (unsigned long long)(nul - start) + 1);
}

/* The features a plan can make without reading an index (hashed features,
 * CSV columns) within the ceiling; libsvm indices as written are checked
 * as they are read (etl_parse_libsvm.c). */
static int check_ceiling(const char *path, const hog_text_plan *plan, char *err, size_t err_len)
{
    const uint64_t cap = plan->max_features;
    const unsigned bits = plan->hash_bits ? plan->hash_bits
                          : plan->format == HOG_FORMAT_VW ? DEFAULT_STRING_BITS : 0;
    if (!cap || (plan->format == HOG_FORMAT_LIBSVM && !bits))
        return 0;
    if (bits) {
        if ((1ull << bits) <= cap)
            return 0;
        return hog_fail(HOG_EPARAM, err, err_len, "%s: hashing into 2^%u features is past the ceiling of %llu "
                        "features (hog_read_params.max_features, hog_train_params.mem_limit): hash into fewer "
                        "(hog_read_params.hash_bits = %u)", path, bits, (unsigned long long)cap, hog_bits_within(cap));
    }
    uint64_t numeric = 0;
    int categorical = 0;
    for (uint32_t j = 0; j < plan->fields; j++) {
        numeric += plan->column_kind[j] == HOG_COL_NUMBER;
        categorical |= plan->column_kind[j] == HOG_COL_CATEGORICAL;
    }
    if (numeric + (categorical ? 1ull << DEFAULT_STRING_BITS : 0) <= cap)
        return 0;
    return hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu: %llu numeric columns%s are past the ceiling of %llu "
                    "features (hog_read_params.max_features, hog_train_params.mem_limit): hash them "
                    "(hog_read_params.hash_bits = %u)", path, (unsigned long long)HOG_MAX(plan->header_lines, 1),
                    (unsigned long long)numeric, categorical ? " and 2^18 categorical hashes" : "",
                    (unsigned long long)cap, hog_bits_within(cap));
}

int hog_text_plan_make(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                       hog_text_plan *plan, char *err, size_t err_len)
{
    memset(plan, 0, sizeof(*plan));
    int rc = check_params(p, err, err_len);
    if (rc == 0)
        rc = hog_text_check(path, head, head_len, err, err_len);
    if (rc < 0)
        return rc;
    plan->format = p->format == HOG_FORMAT_AUTO ? hog_text_detect(path, head, head_len) : p->format;
    plan->hash_bits = p->hash_bits;
    plan->max_features = p->max_features;
    if (plan->format == HOG_FORMAT_LIBSVM && p->index_base < 0)
        plan->index_base = hog_text_plan_index_base(head, head_len, &plan->base_lines);
    else
        plan->index_base = p->index_base < 0 ? 0 : (unsigned)p->index_base;
    plan->skip_errors = p->on_error == HOG_ON_ERROR_SKIP;
    plan->max_line = p->max_line ? p->max_line : HOG_DEFAULT_MAX_LINE;
    if (plan->format == HOG_FORMAT_CSV)
        rc = hog_text_plan_csv(path, p, head, head_len, plan, err, err_len);
    if (rc == 0)
        rc = header_text(path, head, plan->header_bytes, err, err_len);
    if (rc == 0)
        rc = check_ceiling(path, plan, err, err_len);
    if (rc < 0)
        hog_text_plan_free(plan);
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
