/* etl_parse_rows.c: the rows a chunk is parsed into, the located errors of its lines, and the sort and merge of a row's indices. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "etl_parse.h"

#define SNIPPET_MAX 20

/* ===================================================================== *
 *  Rows
 * ===================================================================== */

void hog_rows_clear(hog_rows *r)
{
    r->rows = 0;
    r->nnz = 0;
    r->lines = 0;
    r->skipped = 0;
    r->kept = 0;
    r->names_len = 0;
    if (r->ptr)
        r->ptr[0] = 0;
}

void hog_rows_free(hog_rows *r)
{
    if (!r)
        return;
    hog_free(r->ptr);
    hog_free(r->index);
    hog_free(r->value);
    hog_free(r->label);
    hog_free(r->weight);
    hog_free(r->field);
    hog_free(r->names);
    memset(r, 0, sizeof(*r));
}

/* Grows geometrically (hog_array_grow), so a chunk costs O(log n)
 * reallocations. ptr holds cap_rows + 1 entries; weight, once the rows are
 * weighted, cap_rows. Each array is grown on its own and the capacities
 * are recorded once all have grown, so a failure leaves r consistent. */
int hog_rows_grow(hog_rows *r, uint64_t more)
{
    if (r->rows + 1 > r->cap_rows || !r->ptr || (r->weighted && !r->weight)) {
        size_t cap = r->cap_rows, pcap = r->ptr ? cap + 1 : 0, wcap = r->weight ? cap : 0;
        void *label = r->label, *ptr = r->ptr, *weight = r->weight;
        int rc = hog_array_grow(&label, &cap, (size_t)r->rows + 1, sizeof(float), 1024);
        r->label = label;
        if (rc == 0) /* exactly cap + 1: growing from it would double it again */
            rc = hog_array_grow(&ptr, &pcap, cap + 1, sizeof(uint32_t), cap + 1);
        if (rc == 0 && !r->ptr)
            ((uint32_t *)ptr)[0] = 0;
        r->ptr = ptr;
        if (rc == 0 && r->weighted)
            rc = hog_array_grow(&weight, &wcap, cap, sizeof(float), cap);
        r->weight = weight;
        if (rc < 0)
            return rc;
        r->cap_rows = cap;
    }
    if (r->nnz + more > r->cap_nnz || (r->fielded && !r->field)) {
        if (r->nnz + more > UINT32_MAX)
            return -ENOMEM;
        size_t cap = r->cap_nnz, icap = cap, fcap = r->field ? cap : 0;
        void *index = r->index, *value = r->value, *field = r->field;
        int rc = hog_array_grow(&index, &icap, (size_t)(r->nnz + more), sizeof(uint32_t), 4096);
        r->index = index;
        if (rc == 0)
            rc = hog_array_grow(&value, &cap, (size_t)(r->nnz + more), sizeof(float), 4096);
        r->value = value;
        /* the field array once the values have fields, as long as the others */
        if (rc == 0 && r->fielded)
            rc = hog_array_grow(&field, &fcap, cap, sizeof(uint16_t), cap);
        r->field = field;
        if (rc < 0)
            return rc;
        r->cap_nnz = cap;
    }
    return 0;
}

/* ===================================================================== *
 *  Located errors
 * ===================================================================== */

/* Writes the text at `at` as the message's "found" part: up to SNIPPET_MAX
 * characters of the token (up to a blank or the separator), quoted; a lone
 * separator when the token is empty; "end of line" at the end. */
static void snippet(const char *at, const char *le, int stop, char *out, size_t len)
{
    if (at >= le) {
        snprintf(out, len, "end of line");
        return;
    }
    char tok[SNIPPET_MAX + 4];
    size_t n = 0;
    const char *p = at;
    size_t max = is_blank(*p) || *p == stop ? 1 : SNIPPET_MAX;
    do {
        unsigned char ch = (unsigned char)*p++;
        tok[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    } while (n < max && p < le && !is_blank(*p) && *p != stop);
    if (n == SNIPPET_MAX && p < le && !is_blank(*p) && *p != stop) {
        memcpy(tok + n, "...", 3);
        n += 3;
    }
    tok[n] = '\0';
    snprintf(out, len, "'%s'", tok);
}

/* Records "expected X, found Y" at `at` (found == NULL: a snippet of the
 * text there) and returns HOG_EFORMAT. */
int hog_parse_fail(hog_parse_ctx *c, const char *at, const char *expected, const char *found)
{
    char buf[SNIPPET_MAX + 16];
    if (!found) {
        snippet(at, c->le, c->stop, buf, sizeof(buf));
        found = buf;
    }
    size_t col = (size_t)(at - c->line) + 1;
    c->e.line = c->line_no;
    c->e.column = col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
    snprintf(c->e.what, sizeof(c->e.what), "expected %s, found %s", expected, found);
    return HOG_EFORMAT;
}

int hog_parse_ceiling_fail(hog_parse_ctx *c, const char *at, const char *end)
{
    const uint64_t features = c->plan->max_features;
    const size_t col = (size_t)(at - c->line) + 1;
    c->bound = 1;
    c->e.line = c->line_no;
    c->e.column = col > UINT32_MAX ? UINT32_MAX : (uint32_t)col;
    snprintf(c->e.what, sizeof(c->e.what),
             "index %.*s is past the ceiling of %llu features (hog_read_params.max_features, "
             "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = %u)",
             (int)HOG_MIN(end - at, 24), at, (unsigned long long)features, hog_bits_within(features));
    return HOG_EFORMAT;
}

/* ===================================================================== *
 *  Sorting a row's (index, value) pairs
 * ===================================================================== */

static int scratch_reserve(hog_parse_ctx *c, size_t n)
{
    size_t cap = c->scratch_cap, kcap = cap, fcap = c->flds ? cap : 0;
    void *keys = c->keys, *vals = c->vals, *flds = c->flds;
    int rc = hog_array_grow(&keys, &kcap, n, sizeof(uint64_t), 64);
    c->keys = keys;
    if (rc == 0)
        rc = hog_array_grow(&vals, &cap, n, sizeof(float), 64);
    c->vals = vals;
    if (rc == 0 && c->out->fielded)
        rc = hog_array_grow(&flds, &fcap, cap, sizeof(uint16_t), cap);
    c->flds = flds;
    if (rc == 0)
        c->scratch_cap = cap;
    return rc;
}

static void sift_down(uint64_t *a, size_t i, size_t n)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && a[l] > a[m])
            m = l;
        if (r < n && a[r] > a[m])
            m = r;
        if (m == i)
            return;
        uint64_t t = a[i];
        a[i] = a[m];
        a[m] = t;
        i = m;
    }
}

/* Introsort on distinct keys: quicksort with a median of three, insertion
 * sort for short runs, heapsort when the recursion gets too deep (so an
 * adversarial row cannot make it quadratic). */
static void sort_u64(uint64_t *a, size_t n, int depth)
{
    while (n > 24) {
        if (depth-- == 0) {
            for (size_t i = n / 2; i-- > 0;)
                sift_down(a, i, n);
            for (size_t i = n - 1; i > 0; i--) {
                uint64_t t = a[0];
                a[0] = a[i];
                a[i] = t;
                sift_down(a, 0, i);
            }
            return;
        }
        uint64_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < piv)
                i++;
            while (a[j] > piv)
                j--;
            if (i >= j)
                break;
            uint64_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] <= piv <= [j+1, n): recurse on the smaller side */
        size_t left = j + 1;
        if (left < n - left) {
            sort_u64(a, left, depth);
            a += left;
            n -= left;
        } else {
            sort_u64(a + left, n - left, depth);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint64_t v = a[i];
        size_t k = i;
        for (; k > 0 && a[k - 1] > v; k--)
            a[k] = a[k - 1];
        a[k] = v;
    }
}

/* Makes the row's pairs from `start` strictly increasing: sorted by index
 * (stable: ties keep their order, so sums are reproducible) and equal
 * indices summed; zero sums are dropped. With fields, a sum keeps the
 * field of its first pair. */
int hog_row_sort_merge(hog_parse_ctx *c, uint64_t start)
{
    hog_rows *o = c->out;
    uint32_t *ix = o->index + start;
    float *val = o->value + start;
    uint16_t *fld = o->fielded ? o->field + start : NULL;
    size_t n = (size_t)(o->nnz - start);
    size_t i = 1;
    while (i < n && ix[i] > ix[i - 1])
        i++;
    if (i >= n)
        return 0;
    int rc = scratch_reserve(c, n);
    if (rc < 0)
        return rc;
    for (i = 0; i < n; i++) {
        c->keys[i] = (uint64_t)ix[i] << 32 | i;
        c->vals[i] = val[i];
    }
    if (fld)
        memcpy(c->flds, fld, n * sizeof(uint16_t));
    int depth = 2;
    for (size_t m = n; m > 1; m >>= 1)
        depth += 2;
    sort_u64(c->keys, n, depth);
    size_t w = 0;
    for (i = 0; i < n;) {
        uint32_t idx = (uint32_t)(c->keys[i] >> 32);
        const uint16_t first = fld ? c->flds[(uint32_t)c->keys[i]] : 0;
        double sum = 0;
        for (; i < n && (uint32_t)(c->keys[i] >> 32) == idx; i++)
            sum += (double)c->vals[(uint32_t)c->keys[i]];
        float f = (float)sum;
        if (!isfinite(f))
            return hog_parse_fail(c, c->line, "features whose merged values are finite", "an overflow");
        if (f != 0.0f) {
            ix[w] = idx;
            val[w] = f;
            if (fld)
                fld[w] = first;
            w++;
        }
    }
    o->nnz = start + w;
    return 0;
}
