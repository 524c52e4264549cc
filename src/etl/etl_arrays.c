/* etl_arrays.c: data sets made from arrays in memory: a CSR matrix (copied, or borrowed in place, with its fields where it has them) or a dense one, every array checked first. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "etl.h"

/* ===================================================================== *
 *  Checking the arrays
 *
 *  A data set is trusted by everything downstream (the trainer indexes
 *  weights by these indices, a field-aware model its factors by these
 *  fields), so nothing of the caller's is used before every offset, index,
 *  value, field, label and weight has been looked at.
 * ===================================================================== */

/* Offset i of the CSR's row offsets, whichever their width. */
static inline int64_t csr_ptr(const hog_csr *c, uint64_t i)
{
    return c->indptr_bytes == 4 ? (int64_t)((const int32_t *)c->indptr)[i] : ((const int64_t *)c->indptr)[i];
}

static int check_shape(const hog_csr *c, char *err, size_t err_len)
{
    if (!c)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr: NULL");
    if (c->rows == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "hog_csr.rows is 0: a data set needs rows");
    if (c->cols == 0 || c->cols > (1ull << 32))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.cols is %llu: expected 1 to 2^32 columns",
                        (unsigned long long)c->cols);
    if (c->indptr_bytes != 4 && c->indptr_bytes != 8)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indptr_bytes is %u: expected 4 (int32_t) or 8 (int64_t)",
                        c->indptr_bytes);
    if (c->rows_per_block > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.rows_per_block is %u: at most %u", c->rows_per_block,
                        HOG_MAX_ROWS_PER_BLOCK);
    for (size_t i = 0; i < HOG_ARRAY_LEN(c->reserved); i++)
        if (c->reserved[i])
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.reserved[%zu] is not zero: zero the struct before "
                            "filling it in", i);
    if (c->reserved32)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.reserved32 is not zero: zero the struct before filling it "
                        "in");
    if (c->field_count > HOG_MAX_FIELDS)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.field_count is %u: at most %u (a field is a uint16_t)",
                        c->field_count, HOG_MAX_FIELDS);
    if (c->field_count && !c->fields)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.field_count is %u and hog_csr.fields is NULL: a count of "
                        "fields needs the fields (or 0 without them)", c->field_count);
    if (!c->indptr)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indptr is NULL: expected rows + 1 offsets");
    if (c->indptr_bytes == 4 && c->rows >= (uint64_t)INT32_MAX)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.rows is %llu: more than int32_t offsets can count",
                        (unsigned long long)c->rows);
    if (csr_ptr(c, 0) != 0)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indptr[0] is %lld: expected 0", (long long)csr_ptr(c, 0));
    return 0;
}

/* The rows' offsets: non-decreasing from 0. Then nnz, and the arrays
 * that must be there when there are values. */
static int check_offsets(const hog_csr *c, uint64_t *nnz, char *err, size_t err_len)
{
    int64_t prev = 0;
    for (uint64_t r = 0; r < c->rows; r++) {
        int64_t next = csr_ptr(c, r + 1);
        if (next < prev)
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indptr: row %llu: indptr[%llu] = %lld is below "
                            "indptr[%llu] = %lld: expected non-decreasing offsets", (unsigned long long)r,
                            (unsigned long long)r + 1, (long long)next, (unsigned long long)r, (long long)prev);
        prev = next;
    }
    *nnz = (uint64_t)prev;
    if (prev && (!c->indices || !c->values))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.%s is NULL: expected indptr[rows] = %lld of them",
                        c->indices ? "values" : "indices", (long long)prev);
    return 0;
}

/* Row r's indices, values, label and weight. */
static int check_row(const hog_csr *c, uint64_t r, char *err, size_t err_len)
{
    const uint64_t s = (uint64_t)csr_ptr(c, r), e = (uint64_t)csr_ptr(c, r + 1);
    for (uint64_t k = s; k < e; k++) {
        const uint32_t j = c->indices[k];
        if (j >= c->cols)
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indices: row %llu: index %u is not below hog_csr.cols "
                            "= %llu", (unsigned long long)r, j, (unsigned long long)c->cols);
        if (k > s && j <= c->indices[k - 1])
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.indices: row %llu: index %u after %u: expected "
                            "strictly increasing indices within a row (sorted, no duplicates)",
                            (unsigned long long)r, j, c->indices[k - 1]);
        if (!isfinite(c->values[k]))
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.values: row %llu, index %u: %g: expected a finite "
                            "number", (unsigned long long)r, j, (double)c->values[k]);
        if (c->fields && c->field_count && c->fields[k] >= c->field_count)
            return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.fields: row %llu, index %u: field %u is not below "
                            "hog_csr.field_count = %u", (unsigned long long)r, j, c->fields[k], c->field_count);
    }
    if (c->labels && !isfinite(c->labels[r]))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.labels[%llu] is %g: expected a finite number",
                        (unsigned long long)r, (double)c->labels[r]);
    if (c->weights && !(isfinite(c->weights[r]) && c->weights[r] >= 0))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_csr.weights[%llu] is %g: expected a finite number, not "
                        "negative", (unsigned long long)r, (double)c->weights[r]);
    return 0;
}

/* A block of `rows` rows and nnz values (its arrays `layout`,
 * HOG_BLOCK_*) must fit the format's 32-bit counts (hog_builder_add's
 * limit too), so that it saves as a .hgd. */
static int check_block(uint32_t b, uint64_t first, uint64_t rows, uint64_t nnz, int layout, char *err,
                       size_t err_len)
{
    if (nnz <= UINT32_MAX && hog_block_bytes(rows, nnz, layout) <= UINT32_MAX)
        return 0;
    return hog_fail(HOG_EPARAM, err, err_len, "block %u (rows %llu to %llu) holds %llu values, more than a block "
                    "of 4 GiB can: lower hog_csr.rows_per_block", b, (unsigned long long)first,
                    (unsigned long long)(first + rows - 1), (unsigned long long)nnz);
}

/* ===================================================================== *
 *  Making the data set
 * ===================================================================== */

/* The fields of a CSR matrix's data set: 0 without fields, else its
 * field_count, or the largest field + 1 (at least 1, as the builder counts
 * a text's: rows with fields and no values still have fields). */
static uint32_t csr_fields(const hog_csr *c, uint64_t nnz)
{
    if (!c->fields)
        return 0;
    if (c->field_count)
        return c->field_count;
    uint16_t most = 0;
    for (uint64_t k = 0; k < nnz; k++)
        most = c->fields[k] > most ? c->fields[k] : most;
    return (uint32_t)most + 1;
}

/* An empty data set of `rows` rows in blocks of rpb, with room for its
 * block views and `heap` buffers. */
static hog_dataset *dataset_new(uint64_t rows, uint64_t cols, uint32_t rpb, int weighted, uint32_t heap)
{
    hog_dataset *ds = hog_calloc(1, sizeof(*ds));
    if (!ds)
        return NULL;
    ds->fd = -1;
    ds->version = HOG_HGD_VERSION;
    ds->info.format = HOG_FORMAT_AUTO;
    ds->info.rows = rows;
    ds->info.features = cols;
    ds->info.rows_per_block = rpb;
    ds->info.blocks = (uint32_t)((rows + rpb - 1) / rpb);
    ds->info.weighted = weighted;
    ds->blocks = hog_calloc(ds->info.blocks, sizeof(hog_block));
    ds->heap = hog_calloc(heap, sizeof(void *));
    if (!ds->blocks || !ds->heap) {
        hog_dataset_close(ds);
        return NULL;
    }
    return ds;
}

/* Every block is in place: the sums, nnz and fingerprint. */
static void dataset_seal(hog_dataset *ds)
{
    uint64_t nnz = 0;
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        ds->blocks[b].sum = hog_block_sum(&ds->blocks[b]);
        nnz += ds->blocks[b].nnz;
    }
    ds->info.nnz = nnz;
    ds->info.fingerprint = hog_etl_fingerprint(ds->blocks, ds->info.blocks);
}

/* Borrowed: the blocks view the caller's arrays; only the offsets, rebased
 * to each block, are the data set's (and zero labels when there are none). */
static int csr_borrow(const hog_csr *c, uint32_t rpb, hog_dataset *ds)
{
    const uint32_t nb = ds->info.blocks;
    uint32_t *ptr = hog_malloc(((size_t)c->rows + nb) * sizeof(uint32_t));
    float *zeros = c->labels ? NULL : hog_calloc(c->rows, sizeof(float));
    if (!ptr || (!c->labels && !zeros)) {
        hog_free(ptr);
        hog_free(zeros);
        return -ENOMEM;
    }
    ds->heap[ds->heap_count++] = ptr;
    if (zeros)
        ds->heap[ds->heap_count++] = zeros;
    const float *labels = c->labels ? c->labels : zeros;
    for (uint32_t b = 0; b < nb; b++) {
        const uint64_t r0 = (uint64_t)b * rpb, n = HOG_MIN((uint64_t)rpb, c->rows - r0);
        const int64_t base = csr_ptr(c, r0);
        uint32_t *p = ptr + r0 + b;
        for (uint64_t i = 0; i <= n; i++)
            p[i] = (uint32_t)(csr_ptr(c, r0 + i) - base);
        hog_block *blk = &ds->blocks[b];
        blk->rows = (uint32_t)n;
        blk->nnz = p[n];
        blk->ptr = p;
        blk->index = c->indices ? c->indices + base : NULL;
        blk->value = c->values ? c->values + base : NULL;
        blk->label = labels + r0;
        blk->weight = c->weights ? c->weights + r0 : NULL;
        blk->field = c->fields ? c->fields + base : NULL;
    }
    return 0;
}

/* Copied: each block packed into one buffer of the file layout, as the
 * builder keeps blocks in memory. */
static int csr_copy(const hog_csr *c, uint32_t rpb, hog_dataset *ds)
{
    const int weighted = c->weights != NULL;
    const int layout = (weighted ? HOG_BLOCK_WEIGHTED : 0) | (c->fields ? HOG_BLOCK_FIELDS : 0);
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        const uint64_t r0 = (uint64_t)b * rpb, n = HOG_MIN((uint64_t)rpb, c->rows - r0);
        const int64_t base = csr_ptr(c, r0);
        const uint32_t nnz = (uint32_t)(csr_ptr(c, r0 + n) - base);
        uint8_t *buf = hog_aligned_alloc(HOG_CACHELINE, (size_t)hog_block_bytes(n, nnz, layout));
        if (!buf)
            return -ENOMEM;
        ds->heap[ds->heap_count++] = buf;
        hog_block *blk = &ds->blocks[b];
        hog_block_view(blk, buf, (uint32_t)n, nnz, layout, 0);
        uint32_t *p = (uint32_t *)blk->ptr;
        for (uint64_t i = 0; i <= n; i++)
            p[i] = (uint32_t)(csr_ptr(c, r0 + i) - base);
        if (nnz) {
            memcpy((void *)blk->index, c->indices + base, (size_t)nnz * sizeof(uint32_t));
            memcpy((void *)blk->value, c->values + base, (size_t)nnz * sizeof(float));
            if (c->fields)
                memcpy((void *)blk->field, c->fields + base, (size_t)nnz * sizeof(uint16_t));
        }
        if (c->labels)
            memcpy((void *)blk->label, c->labels + r0, (size_t)n * sizeof(float));
        else
            memset((void *)blk->label, 0, (size_t)n * sizeof(float));
        if (weighted)
            memcpy((void *)blk->weight, c->weights + r0, (size_t)n * sizeof(float));
    }
    return 0;
}

int hog_dataset_from_csr(const hog_csr *csr, int flags, hog_dataset **out, char *err_detail, size_t err_len)
{
    if (!out)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "out must not be NULL");
    *out = NULL;
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    if (flags & ~HOG_ARRAYS_BORROW)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "flags: 0x%x is not HOG_ARRAYS_BORROW or 0", (unsigned)flags);
    uint64_t nnz = 0;
    int rc = check_shape(csr, err_detail, err_len);
    if (rc == 0)
        rc = check_offsets(csr, &nnz, err_detail, err_len);
    if (rc < 0)
        return rc;
    const uint32_t rpb = csr->rows_per_block ? csr->rows_per_block : HOG_DEFAULT_ROWS_PER_BLOCK;
    const uint64_t blocks = (csr->rows + rpb - 1) / rpb;
    if (blocks > UINT32_MAX)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "%llu rows make %llu blocks of %u, more than 2^32 - 1: "
                        "raise hog_csr.rows_per_block", (unsigned long long)csr->rows,
                        (unsigned long long)blocks, rpb);
    const int layout = (csr->weights ? HOG_BLOCK_WEIGHTED : 0) | (csr->fields ? HOG_BLOCK_FIELDS : 0);
    for (uint32_t b = 0; b < blocks; b++) {
        const uint64_t r0 = (uint64_t)b * rpb, n = HOG_MIN((uint64_t)rpb, csr->rows - r0);
        rc = check_block(b, r0, n, (uint64_t)(csr_ptr(csr, r0 + n) - csr_ptr(csr, r0)), layout, err_detail,
                         err_len);
        if (rc < 0)
            return rc;
    }
    const int borrow = flags & HOG_ARRAYS_BORROW;
    hog_dataset *ds = dataset_new(csr->rows, csr->cols, rpb, csr->weights != NULL, borrow ? 2 : (uint32_t)blocks);
    if (ds)
        ds->fields = csr_fields(csr, nnz);
    rc = ds ? (borrow ? csr_borrow(csr, rpb, ds) : csr_copy(csr, rpb, ds)) : -ENOMEM;
    if (rc < 0) {
        hog_dataset_close(ds);
        return hog_fail(rc, err_detail, err_len, "out of memory for %llu rows of %llu values",
                        (unsigned long long)csr->rows, (unsigned long long)nnz);
    }
    /* The rows' values and fields, a block at a time as vector reductions
     * (hog_block_sound); the rows of a block that fails are walked for the
     * message, which names the caller's array and row. The offsets were
     * checked first (check_offsets), so every view lies in the arrays. */
    const hog_hgd_summary none = {0};
    for (uint32_t b = 0; b < blocks && rc == 0; b++) {
        uint64_t top;
        if (hog_block_sound(&ds->blocks[b], csr->cols, ds->fields, &none, &top))
            continue;
        const uint64_t r0 = (uint64_t)b * rpb, n = HOG_MIN((uint64_t)rpb, csr->rows - r0);
        for (uint64_t r = r0; r < r0 + n && rc == 0; r++)
            rc = check_row(csr, r, err_detail, err_len);
    }
    if (rc < 0) {
        hog_dataset_close(ds);
        return rc;
    }
    dataset_seal(ds);
    *out = ds;
    return 0;
}

/* ===================================================================== *
 *  A dense matrix
 * ===================================================================== */

/* Rows [r0, r0 + n) of x into one packed block: the non-zeros counted
 * first, so the buffer is made once. */
static int dense_block(const float *x, uint64_t cols, uint64_t r0, uint64_t n, const float *labels,
                       const float *weights, uint32_t b, hog_dataset *ds, char *err, size_t err_len)
{
    uint64_t nnz = 0;
    for (uint64_t r = r0; r < r0 + n; r++) {
        const float *row = x + r * cols;
        for (uint64_t j = 0; j < cols; j++) {
            if (!isfinite(row[j]))
                return hog_fail(HOG_EPARAM, err, err_len, "x: row %llu, column %llu: %g: expected a finite number",
                                (unsigned long long)r, (unsigned long long)j, (double)row[j]);
            nnz += row[j] != 0.0f;
        }
        if (labels && !isfinite(labels[r]))
            return hog_fail(HOG_EPARAM, err, err_len, "labels[%llu] is %g: expected a finite number",
                            (unsigned long long)r, (double)labels[r]);
        if (weights && !(isfinite(weights[r]) && weights[r] >= 0))
            return hog_fail(HOG_EPARAM, err, err_len, "weights[%llu] is %g: expected a finite number, not negative",
                            (unsigned long long)r, (double)weights[r]);
    }
    int rc = check_block(b, r0, n, nnz, weights != NULL ? HOG_BLOCK_WEIGHTED : 0, err, err_len);
    if (rc < 0)
        return rc;
    uint8_t *buf = hog_aligned_alloc(HOG_CACHELINE, (size_t)hog_block_bytes(n, nnz, weights != NULL));
    if (!buf)
        return hog_fail(-ENOMEM, err, err_len, "out of memory for block %u of %llu values", b,
                        (unsigned long long)nnz);
    ds->heap[ds->heap_count++] = buf;
    hog_block *blk = &ds->blocks[b];
    hog_block_view(blk, buf, (uint32_t)n, (uint32_t)nnz, weights != NULL, 0);
    uint32_t *ptr = (uint32_t *)blk->ptr, *index = (uint32_t *)blk->index;
    float *value = (float *)blk->value;
    uint32_t k = 0;
    ptr[0] = 0;
    for (uint64_t i = 0; i < n; i++) {
        const float *row = x + (r0 + i) * cols;
        for (uint64_t j = 0; j < cols; j++)
            if (row[j] != 0.0f) {
                index[k] = (uint32_t)j;
                value[k++] = row[j];
            }
        ptr[i + 1] = k;
    }
    if (labels)
        memcpy((void *)blk->label, labels + r0, (size_t)n * sizeof(float));
    else
        memset((void *)blk->label, 0, (size_t)n * sizeof(float));
    if (weights)
        memcpy((void *)blk->weight, weights + r0, (size_t)n * sizeof(float));
    return 0;
}

int hog_dataset_from_dense(const float *x, uint64_t rows, uint64_t cols, const float *labels, const float *weights,
                           uint32_t rows_per_block, hog_dataset **out, char *err_detail, size_t err_len)
{
    if (!out)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "out must not be NULL");
    *out = NULL;
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    if (rows == 0)
        return hog_fail(HOG_EEMPTY, err_detail, err_len, "rows is 0: a data set needs rows");
    if (cols == 0 || cols > (1ull << 32))
        return hog_fail(HOG_EPARAM, err_detail, err_len, "cols is %llu: expected 1 to 2^32 columns",
                        (unsigned long long)cols);
    if (!x)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "x is NULL: expected rows * cols floats");
    if (rows > UINT64_MAX / cols)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "rows * cols (%llu * %llu) overflows",
                        (unsigned long long)rows, (unsigned long long)cols);
    if (rows_per_block > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "rows_per_block is %u: at most %u", rows_per_block,
                        HOG_MAX_ROWS_PER_BLOCK);
    const uint32_t rpb = rows_per_block ? rows_per_block : HOG_DEFAULT_ROWS_PER_BLOCK;
    const uint64_t blocks = (rows + rpb - 1) / rpb;
    if (blocks > UINT32_MAX)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "%llu rows make %llu blocks of %u, more than 2^32 - 1: "
                        "raise rows_per_block", (unsigned long long)rows, (unsigned long long)blocks, rpb);
    hog_dataset *ds = dataset_new(rows, cols, rpb, weights != NULL, (uint32_t)blocks);
    if (!ds)
        return hog_fail(-ENOMEM, err_detail, err_len, "out of memory for %llu rows", (unsigned long long)rows);
    int rc = 0;
    for (uint32_t b = 0; b < blocks && rc == 0; b++) {
        const uint64_t r0 = (uint64_t)b * rpb;
        rc = dense_block(x, cols, r0, HOG_MIN((uint64_t)rpb, rows - r0), labels, weights, b, ds, err_detail,
                         err_len);
    }
    if (rc < 0) {
        hog_dataset_close(ds);
        return rc;
    }
    dataset_seal(ds);
    *out = ds;
    return 0;
}

/* ===================================================================== *
 *  Labels out
 * ===================================================================== */
void hog_dataset_labels(const hog_dataset *ds, float *out)
{
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        const hog_block *blk = &ds->blocks[b];
        memcpy(out + (uint64_t)b * ds->info.rows_per_block, blk->label, (size_t)blk->rows * sizeof(float));
    }
}
