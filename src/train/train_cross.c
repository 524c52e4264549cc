/* train_cross.c: feature crosses (Vowpal Wabbit's -q): the rules read from their text, and a row's crosses formed as it is trained or scored. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>

#include "train.h"

#define CROSS_DEFAULT_BITS 22u
#define CROSS_MAX_BITS 30u

int hog_cross_parse(const char *spec, uint32_t bits, uint64_t base, hog_cross *c, char *err, size_t err_len)
{
    memset(c, 0, sizeof(*c));
    c->bits = bits ? bits : CROSS_DEFAULT_BITS;
    c->base = base;
    if (c->bits > CROSS_MAX_BITS)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.cross_bits %u: expected 1 to %u", bits,
                        CROSS_MAX_BITS);
    size_t used = 0;
    for (const char *s = spec ? spec : ""; *s;) {
        if (*s == ',' || *s == ' ') {
            s++;
            continue;
        }
        const size_t at = (size_t)(s - spec);
        if (!s[1] || s[1] == ',' || s[1] == ' ' || (s[2] && s[2] != ',' && s[2] != ' '))
            return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions \"%s\": at byte %zu, expected "
                            "a pair of two bytes (a namespace's first letter, or ':' for any), as in \"ab\" or "
                            "\"::\"", spec, at);
        if (c->n == HOG_MAX_CROSSES)
            return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions \"%s\": more than %u pairs",
                            spec, HOG_MAX_CROSSES);
        c->a[c->n] = s[0] == ':' ? -1 : (int32_t)(unsigned char)s[0];
        c->b[c->n] = s[1] == ':' ? -1 : (int32_t)(unsigned char)s[1];
        used += (size_t)snprintf(c->spec + used, sizeof(c->spec) - used, "%s%c%c", c->n ? "," : "", s[0], s[1]);
        c->n++;
        s += 2;
    }
    if (!c->n)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions is empty: give pairs such as \"ab\" "
                        "or \"::\", or NULL for none");
    return 0;
}

/* Whether a rule crosses fields fa and fb, either way round (-2: a row
 * without fields, which only "::" crosses). */
static int crossed(const hog_cross *c, int32_t fa, int32_t fb)
{
    for (uint32_t k = 0; k < c->n; k++)
        if (((c->a[k] < 0 || c->a[k] == fa) && (c->b[k] < 0 || c->b[k] == fb)) ||
            ((c->a[k] < 0 || c->a[k] == fb) && (c->b[k] < 0 || c->b[k] == fa)))
            return 1;
    return 0;
}

/* The feature the cross of features i < j is. */
static inline uint32_t cross_index(const hog_cross *c, uint32_t i, uint32_t j)
{
    return (uint32_t)(c->base + (hog_mix64(((uint64_t)i << 32) | j) & (((uint64_t)1 << c->bits) - 1)));
}

static inline int32_t field_of(const uint16_t *field, uint32_t i)
{
    return field ? (int32_t)field[i] : -2;
}

uint32_t hog_cross_row(const hog_cross *c, const hog_row *row, const uint16_t *field, uint32_t *idx, float *val)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < row->nnz; i++)
        if (row->index[i] < c->base) { /* a feature beyond the training data's is unknown, crossed or not */
            idx[n] = row->index[i];
            val[n++] = row->value[i];
        }
    /* Pairs of distinct features (i < j: a row's indices ascend, so a
     * pair has one order); "aa" crosses namespace a's features with each
     * other, "::" every pair, as Vowpal Wabbit's -q does. */
    for (uint32_t i = 0; i < row->nnz; i++) {
        const uint32_t ji = row->index[i];
        if (ji >= c->base)
            continue;
        for (uint32_t j = i + 1; j < row->nnz; j++) {
            const uint32_t jj = row->index[j];
            if (jj >= c->base || !crossed(c, field_of(field, i), field_of(field, j)))
                continue;
            idx[n] = cross_index(c, ji, jj);
            val[n++] = row->value[i] * row->value[j];
        }
    }
    return n;
}

/* Crosses counted a batch at a time: their indices first, then the
 * counts, so that the batch's cache misses (each cross is a random place
 * in a table of 2^bits) overlap instead of following one another. */
#define DEGREE_BATCH 64u

static void count_batch(const uint32_t *at, uint32_t n, uint32_t *own, _Atomic uint32_t *shared)
{
    if (own)
        for (uint32_t k = 0; k < n; k++)
            own[at[k]]++;
    else
        for (uint32_t k = 0; k < n; k++)
            atomic_fetch_add_explicit(&shared[at[k]], 1, memory_order_relaxed);
}

void hog_cross_degrees(const hog_cross *c, const hog_row *row, const uint16_t *field, uint32_t *own,
                       _Atomic uint32_t *shared)
{
    uint32_t at[DEGREE_BATCH], n = 0;
    for (uint32_t i = 0; i < row->nnz; i++) {
        const uint32_t ji = row->index[i];
        for (uint32_t j = i + 1; ji < c->base && j < row->nnz; j++) {
            const uint32_t jj = row->index[j];
            if (jj >= c->base || !crossed(c, field_of(field, i), field_of(field, j)))
                continue;
            at[n] = cross_index(c, ji, jj);
            __builtin_prefetch(own ? (const void *)&own[at[n]] : (const void *)&shared[at[n]], 1, 3);
            if (++n == DEGREE_BATCH) {
                count_batch(at, n, own, shared);
                n = 0;
            }
        }
    }
    count_batch(at, n, own, shared);
}

int hog_cross_needs_fields(const hog_cross *c)
{
    for (uint32_t k = 0; k < c->n; k++)
        if (c->a[k] >= 0 || c->b[k] >= 0)
            return 1;
    return 0;
}
