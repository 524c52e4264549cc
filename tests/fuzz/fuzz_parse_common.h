/* fuzz_parse_common.h: what the chunk-parser fuzz targets share: the frame of a target (option bytes, then the text), one plan and parse of the input, whole and cut in two, with the invariants of hog_rows checked. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_FUZZ_PARSE_COMMON_H
#define HOG_FUZZ_PARSE_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* hog_read_params_default's values, without linking etl_dataset.c (and
 * with it the readers and their libraries) into the targets. */
static hog_read_params fuzz_params(void)
{
    hog_read_params p;
    memset(&p, 0, sizeof(p));
    p.header = -1;
    return p;
}

/* hog_read_params.max_line from two bits of the options: the default
 * (64 MiB) half the time, else a bound the longer lines pass. */
static uint64_t fuzz_max_line(unsigned two_bits)
{
    static const uint64_t bound[4] = {0, 0, 16, 4096};
    return bound[two_bits & 3];
}

/* The options of the formats written index:value (libsvm, LIBFFM), from
 * one byte, the same bits for both so that their seeds mean the same:
 *   bits 0-1  hash_bits 0, 1, 18 or 31
 *   bit 2     index_base 1 (else 0)
 *   bit 3     on_error skip (else stop)
 *   bit 4     format detected (HOG_FORMAT_AUTO) rather than given
 *   bits 5-6  max_line (fuzz_max_line)
 * Bit 7 is the target's own. */
static inline void fuzz_pick_indexed(hog_read_params *p, uint8_t o, hog_format format)
{
    static const unsigned bits[4] = {0, 1, 18, 31};
    p->format = (o & 16) ? HOG_FORMAT_AUTO : format;
    p->hash_bits = bits[o & 3];
    p->index_base = (o >> 2) & 1;
    p->on_error = (o >> 3) & 1 ? HOG_ON_ERROR_SKIP : HOG_ON_ERROR_STOP;
    p->max_line = fuzz_max_line(o >> 5);
}

/* A broken invariant is a crash, so libFuzzer keeps the input. */
#define FUZZ_CHECK(x)                                                                              \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

static void fuzz_check_rows(const hog_rows *r, const hog_text_plan *plan, int rc,
                            const hog_text_error *e)
{
    FUZZ_CHECK(r->ptr && r->ptr[0] == 0);
    /* the values have fields when the plan keeps them, one each */
    FUZZ_CHECK(r->fielded == (plan->fielded || plan->format == HOG_FORMAT_FFM));
    FUZZ_CHECK(!r->fielded || !r->nnz || r->field);
    FUZZ_CHECK(r->ptr[r->rows] == r->nnz);
    FUZZ_CHECK(r->kept <= HOG_TEXT_ERRORS_KEPT && r->kept <= r->skipped);
    FUZZ_CHECK(r->rows + r->skipped <= r->lines);
    for (uint64_t i = 0; i < r->rows; i++) {
        FUZZ_CHECK(r->ptr[i] <= r->ptr[i + 1]);
        FUZZ_CHECK(isfinite(r->label[i]));
        for (uint32_t k = r->ptr[i]; k < r->ptr[i + 1]; k++) {
            FUZZ_CHECK(isfinite(r->value[k]) && r->value[k] != 0.0f);
            FUZZ_CHECK(k == r->ptr[i] || r->index[k - 1] < r->index[k]);
            if (plan->hash_bits)
                FUZZ_CHECK(r->index[k] < (1u << plan->hash_bits));
        }
    }
    for (uint32_t i = 0; i < r->kept; i++)
        FUZZ_CHECK(r->errors[i].line >= 1 && r->errors[i].line <= r->lines &&
                   r->errors[i].column >= 1 && strncmp(r->errors[i].what, "expected ", 9) == 0);
    if (rc == HOG_EFORMAT && e->column == 0) /* a line past plan->max_line, in either mode */
        FUZZ_CHECK(e->line == r->lines && strncmp(e->what, "a line longer than ", 19) == 0);
    else if (rc == HOG_EFORMAT && plan->max_features && strstr(e->what, " is past the ceiling of ")) /* a bound */
        FUZZ_CHECK(e->line == r->lines && e->column >= 1 && strncmp(e->what, "index ", 6) == 0);
    else if (rc == HOG_EFORMAT)
        FUZZ_CHECK(!plan->skip_errors && e->line == r->lines && e->column >= 1 &&
                   strncmp(e->what, "expected ", 9) == 0);
    else
        FUZZ_CHECK(rc == 0);
}

/* Plans from the input and parses it: whole, then as two chunks cut at a
 * line end picked by the input; the two readings must agree. The input is
 * copied to a buffer of its exact size so that any read past it is caught. */
static void fuzz_plan_and_parse(const hog_read_params *p, const uint8_t *data, size_t size,
                                size_t cut_hint)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return;
    memcpy(buf, data, size);
    hog_text_plan plan;
    char err[256];
    if (hog_text_plan_make("fuzz", p, buf, size, &plan, err, sizeof(err)) != 0) {
        FUZZ_CHECK(err[0] != '\0');
        free(buf);
        return;
    }
    FUZZ_CHECK(plan.header_bytes <= size);
    const char *body = buf + plan.header_bytes;
    size_t len = size - (size_t)plan.header_bytes;

    hog_rows whole, parts;
    memset(&whole, 0, sizeof(whole));
    memset(&parts, 0, sizeof(parts));
    hog_text_error e1, e2;
    int rc1 = hog_parse_chunk(&plan, body, len, &whole, &e1);
    fuzz_check_rows(&whole, &plan, rc1, &e1);

    const char *nl = len ? memchr(body + cut_hint % len, '\n', len - cut_hint % len) : NULL;
    size_t cut = nl ? (size_t)(nl - body) + 1 : len;
    int rc2 = hog_parse_chunk(&plan, body, cut, &parts, &e2);
    if (rc2 == 0) {
        /* the second chunk, appended: its lines continue the count */
        rc2 = hog_parse_chunk(&plan, body + cut, len - cut, &parts, &e2);
    }
    fuzz_check_rows(&parts, &plan, rc2, &e2);
    FUZZ_CHECK(rc1 == rc2);
    if (rc1 == 0) {
        FUZZ_CHECK(whole.rows == parts.rows && whole.nnz == parts.nnz &&
                   whole.lines == parts.lines && whole.skipped == parts.skipped);
        if (whole.nnz) {
            FUZZ_CHECK(memcmp(whole.index, parts.index, whole.nnz * sizeof(uint32_t)) == 0);
            FUZZ_CHECK(memcmp(whole.value, parts.value, whole.nnz * sizeof(float)) == 0);
        }
        if (whole.rows)
            FUZZ_CHECK(memcmp(whole.label, parts.label, whole.rows * sizeof(float)) == 0);
        if (whole.nnz && whole.fielded)
            FUZZ_CHECK(memcmp(whole.field, parts.field, whole.nnz * sizeof(uint16_t)) == 0);
    } else {
        FUZZ_CHECK(e1.line == e2.line && e1.column == e2.column &&
                   strcmp(e1.what, e2.what) == 0);
    }
    hog_rows_free(&whole);
    hog_rows_free(&parts);
    hog_text_plan_free(&plan);
    free(buf);
}

/* The frame of every text target: the input's first `head` bytes choose
 * the options (pick sets them from those bytes over fuzz_params), the last
 * of them also where the text is cut in two chunks; the rest is the text,
 * planned and parsed by fuzz_plan_and_parse. An input shorter than its
 * head is passed over. Returns 0, as libFuzzer asks. */
static int fuzz_text_target(const uint8_t *data, size_t size, size_t head,
                            void (*pick)(hog_read_params *p, const uint8_t *opts))
{
    if (size < head)
        return 0;
    hog_read_params p = fuzz_params();
    pick(&p, data);
    fuzz_plan_and_parse(&p, data + head, size - head, data[head - 1]);
    return 0;
}

#endif /* HOG_FUZZ_PARSE_COMMON_H */
