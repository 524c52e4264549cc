/* etl_hgd_check.c: a block's checks (its checksum, offsets, indices, values, labels, weights and fields, as vector reductions), the fingerprint, and the checks of a whole mapped file at open or at a pass's end. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "etl_hgd_layout.h"

/* ===================================================================== *
 *  Checksums and fingerprint
 * ===================================================================== */

uint64_t hog_etl_fingerprint(const hog_block *blocks, uint32_t n)
{
    uint64_t h = FP_SEED;
    for (uint32_t i = 0; i < n; i++)
        h = fp_step(h, blocks[i].rows, blocks[i].nnz, blocks[i].sum);
    return h;
}

uint64_t hog_block_sum(const hog_block *b)
{
    block_arrays a;
    arrays_of(&a, b);
    uint64_t s = 0;
    for (unsigned i = 0; i < a.n; i++)
        s = hog_hash64(a.p[i], a.len[i], s);
    return s;
}

/* ===================================================================== *
 *  A block's arrays
 * ===================================================================== */

/* Finite without a libm call: an f32 is non-finite exactly when its exponent bits are all ones. */
static inline int f32_finite(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return (bits & 0x7f800000u) != 0x7f800000u;
}

/* How many k in 1..n have a[k] < a[k - 1] (or equal, with equal). */
static uint32_t lanes_descents(const uint32_t *a, uint32_t n, int equal)
{
    v4u c = {0, 0, 0, 0};
    uint32_t k = 1, total = 0;
    for (; k + 4 <= n; k += 4) {
        const v4u x = v4u_at(a + k), prev = v4u_at(a + k - 1);
        c -= equal ? (v4u)(x <= prev) : (v4u)(x < prev); /* a true lane is all ones: -1 */
    }
    total = c[0] + c[1] + c[2] + c[3];
    for (; k < n; k++)
        total += equal ? a[k] <= a[k - 1] : a[k] < a[k - 1];
    return total;
}

/* Whether any of the f32 bit patterns a[0..n) is infinite or NaN, or
 * with sign, negative (below -0). */
static uint32_t lanes_nonfinite(const uint32_t *a, uint32_t n, int sign)
{
    const uint32_t above = sign ? 0x7f800000u : 0xffffffffu; /* from 0x7f800000 up: inf, NaN, negative */
    v4u bad = {0, 0, 0, 0};
    uint32_t k = 0, any = 0;
    for (; k + 4 <= n; k += 4) {
        const v4u x = v4u_at(a + k);
        bad |= (v4u)((x & 0x7f800000u) == 0x7f800000u) | ((v4u)(x >= above) & (v4u)(x != 0x80000000u));
    }
    any = v4u_or(bad);
    for (; k < n; k++)
        any |= ((a[k] & 0x7f800000u) == 0x7f800000u) | ((a[k] >= above) & (a[k] != 0x80000000u));
    return any;
}

/* Whether every label[0..n) is y0 or y1 (which may be y0). */
static int lanes_two_labels(const float *label, uint32_t n, float y0, float y1)
{
    v4u bad = {0, 0, 0, 0};
    uint32_t k = 0, any = 0;
    for (; k + 4 <= n; k += 4) {
        v4f x;
        memcpy(&x, label + k, sizeof(x));
        bad |= (v4u)(x != y0) & (v4u)(x != y1);
    }
    any = v4u_or(bad);
    for (; k < n; k++)
        any |= (label[k] != y0) & (label[k] != y1);
    return !any;
}

/* Whether block b passes every check of check_block but its checksum,
 * each test a reduction over an array (the lanes_ helpers): a block is read
 * at memory speed, and only one that fails is walked again, row by row, for
 * the message. Indices strictly increase within each row when the descents
 * of the whole index array are exactly those at row starts. *top gets
 * the largest index + 1. */
int hog_block_sound(const hog_block *b, uint64_t features, uint32_t fields, const hog_hgd_summary *sm,
                    uint64_t *top)
{
    const uint32_t rows = b->rows, nnz = b->nnz, *ptr = b->ptr, *idx = b->index;
    if (ptr[0] != 0 || ptr[rows] != nnz || lanes_descents(ptr, rows + 1, 0) != 0)
        return 0;
    const uint32_t most = lanes_max(idx, nnz);
    uint32_t descents = lanes_descents(idx, nnz, 1);
    for (uint32_t r = 1; r < rows; r++) /* a non-empty row's first index may be below the last one's */
        if (ptr[r] > 0 && ptr[r] < ptr[r + 1])
            descents -= idx[ptr[r]] <= idx[ptr[r] - 1];
    if (descents || (nnz && most >= features))
        return 0;
    if (lanes_nonfinite((const uint32_t *)(const void *)b->value, nnz, 0) ||
        lanes_nonfinite((const uint32_t *)(const void *)b->label, rows, 0) ||
        (b->weight && lanes_nonfinite((const uint32_t *)(const void *)b->weight, rows, 1)))
        return 0;
    if (b->field) {
        uint32_t top_field = 0;
        for (uint32_t k = 0; k < nnz; k++) /* one pass, a max: a field past the count fails it */
            top_field = b->field[k] > top_field ? b->field[k] : top_field;
        if (nnz && top_field >= fields)
            return 0;
    }
    if ((sm->labels == 1 || sm->labels == 2) &&
        !lanes_two_labels(b->label, rows, (float)sm->label[0], (float)sm->label[sm->labels - 1]))
        return 0;
    if (sm->labels > 2 && sm->labels != HOG_HGD_MANY_LABELS)
        for (uint32_t r = 0; r < rows; r++)
            if (!hog_has_f64(sm->label, sm->labels, b->label[r]))
                return 0;
    *top = nnz ? (uint64_t)most + 1 : 0;
    return 1;
}

/* Checks one block's bytes: its checksum, then every offset, index, value
 * and label; *top gets the largest feature index + 1 (0 without any). */
static int check_block(const char *path, uint32_t version, uint32_t i, const hog_block *b,
                       uint64_t features, uint32_t fields, const hog_hgd_summary *sm, uint64_t *top, char *err,
                       size_t len)
{
    const int listed = sm->labels && sm->labels != HOG_HGD_MANY_LABELS;
    *top = 0;
    uint64_t sum = version == 1 ? hog_crc32(0, b->ptr, (size_t)hog_block_bytes(b->rows, b->nnz, 0))
                                : hog_block_sum(b);
    if (sum != b->sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: block %u: checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                        path, i, (unsigned long long)b->sum, (unsigned long long)sum);
    if (hog_block_sound(b, features, fields, sm, top))
        return 0;
    if (b->ptr[0] != 0)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: first row offset is %u, not 0",
                        path, i, b->ptr[0]);
    if (b->ptr[b->rows] != b->nnz)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: block %u: last row offset is %u, block has %u non-zeros", path, i,
                        b->ptr[b->rows], b->nnz);
    for (uint32_t r = 0; r < b->rows; r++) {
        uint32_t s = b->ptr[r], e = b->ptr[r + 1];
        if (e < s || e > b->nnz)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: offsets %u..%u out of order or past %u", path,
                            i, r, s, e, b->nnz);
        for (uint32_t k = s; k < e; k++) {
            if (b->index[k] >= features)
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature index %u >= features %llu", path,
                                i, r, b->index[k], (unsigned long long)features);
            if (k > s && b->index[k] <= b->index[k - 1])
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature index %u after %u (not increasing)",
                                path, i, r, b->index[k], b->index[k - 1]);
            if (!f32_finite(b->value[k]))
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: value of feature %u is not finite", path,
                                i, r, b->index[k]);
            if (b->field && b->field[k] >= fields)
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature %u has field %u, not below the file's %u fields",
                                path, i, r, b->index[k], b->field[k], fields);
        }
        if (e > s)
            *top = HOG_MAX(*top, (uint64_t)b->index[e - 1] + 1);
        if (!f32_finite(b->label[r]))
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: row %u: label is not finite",
                            path, i, r);
        if (listed && !hog_has_f64(sm->label, sm->labels, b->label[r]))
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: label %g is not one of the %u in the file's summary", path, i,
                            r, (double)b->label[r], sm->labels);
        if (b->weight && !(f32_finite(b->weight[r]) && b->weight[r] >= 0))
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: weight is negative or not finite", path, i, r);
    }
    return 0;
}

/* Records top as a checked block's largest feature index + 1: the record
 * of the checks, which every reader of the data set shares. */
static void top_seen(const hog_dataset *ds, uint64_t top)
{
    hog_atomic_max_u64(&((hog_dataset *)ds)->checked_top, top);
}

/* Checking every block is a CRC and a pass over every index: on a large
 * file, seconds on one core. The blocks are shared out among the CPUs,
 * each thread taking the next unchecked block; the error reported is that
 * of the lowest-numbered bad block, whatever thread found it, so the
 * message does not depend on timing. */
typedef struct check_job {
    const char *path;
    const hog_dataset *ds;
    uint64_t features;
    int drop_cache;
    atomic_uint next;
    atomic_uint first_bad; /* lowest bad block so far, or UINT32_MAX */
    pthread_mutex_t mu;
    int rc;
    char err[512];
    uint64_t top; /* the largest feature index + 1 of the blocks checked */
} check_job;

static void *check_worker(void *v)
{
    check_job *j = v;
    const hog_dataset *ds = j->ds;
    char err[512];
    uint64_t top = 0;
    for (;;) {
        uint32_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        /* Past the first bad block nothing can change the verdict. */
        if (i >= ds->info.blocks || i > atomic_load_explicit(&j->first_bad, memory_order_relaxed))
            break;
        if (ds->checked && atomic_load_explicit(&ds->checked[i], memory_order_acquire))
            continue;
        hog_dataset_willneed(ds, i + 1);
        uint64_t btop;
        int rc = check_block(j->path, ds->version, i, &ds->blocks[i], j->features, ds->fields, &ds->summary, &btop,
                             err, sizeof(err));
        top = HOG_MAX(top, btop);
        if (rc == 0 && ds->checked)
            atomic_store_explicit(&ds->checked[i], 1, memory_order_release);
        hog_dataset_drop(ds, i, j->drop_cache);
        if (rc < 0) {
            pthread_mutex_lock(&j->mu);
            if (i < atomic_load_explicit(&j->first_bad, memory_order_relaxed)) {
                atomic_store_explicit(&j->first_bad, i, memory_order_relaxed);
                j->rc = rc;
                memcpy(j->err, err, sizeof(err));
            }
            pthread_mutex_unlock(&j->mu);
            break;
        }
    }
    pthread_mutex_lock(&j->mu);
    j->top = HOG_MAX(j->top, top);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int hog_hgd_check_blocks(const char *path, const hog_dataset *ds, uint64_t features, int drop_cache,
                        char *err, size_t err_len)
{
    check_job j = {.path = path, .ds = ds, .features = features, .drop_cache = drop_cache};
    atomic_init(&j.next, 0);
    atomic_init(&j.first_bad, UINT32_MAX);
    pthread_mutex_init(&j.mu, NULL);
    unsigned n = HOG_MIN(hog_cpus(), ds->info.blocks), started = 0;
    pthread_t t[64];
    n = HOG_MIN(n, (unsigned)HOG_ARRAY_LEN(t));
    /* The calling thread is one of the checkers; the others are helpers
     * that may fail to start without harm. */
    for (unsigned k = 1; k < n; k++)
        if (pthread_create(&t[started], NULL, check_worker, &j) == 0)
            started++;
    check_worker(&j);
    for (unsigned k = 0; k < started; k++)
        pthread_join(t[k], NULL);
    pthread_mutex_destroy(&j.mu);
    if (j.rc < 0)
        return hog_fail(j.rc, err, err_len, "%s", j.err);
    if (ds->checked) { /* with the blocks checked one by one before */
        top_seen(ds, j.top);
        j.top = atomic_load_explicit(&ds->checked_top, memory_order_relaxed);
    }
    /* A writer records the largest index + 1 (hog_builder): a larger count
     * would have a trainer allocate weights for features no row has. */
    if (features != j.top)
        return hog_fail(HOG_ECORRUPT, err, err_len,
                        "%s: header field features is %llu, but the blocks' largest feature index + 1 is %llu", path,
                        (unsigned long long)features, (unsigned long long)j.top);
    return 0;
}

int hog_dataset_check_view(const hog_dataset *ds, uint32_t b, const hog_block *view, char *err, size_t err_len)
{
    uint64_t top;
    int rc = check_block(ds->path, ds->version, b, view, ds->info.features, ds->fields, &ds->summary, &top, err,
                         err_len);
    if (rc == 0)
        top_seen(ds, top);
    return rc;
}

int hog_dataset_check_block(const hog_dataset *ds, uint32_t b, char *err, size_t err_len)
{
    int rc = hog_dataset_check_view(ds, b, &ds->blocks[b], err, err_len);
    if (rc < 0)
        return rc;
    atomic_store_explicit(&ds->checked[b], 1, memory_order_release);
    return 0;
}

int hog_dataset_check_failed(const hog_dataset *ds, uint32_t b, char *err, size_t err_len)
{
    int rc = hog_dataset_check_block(ds, b, err, err_len);
    return rc < 0 ? rc : hog_fail(HOG_ECHECKSUM, err, err_len, "%s: block %u failed its check as it was read",
                                  ds->path ? ds->path : "the data set", b);
}

int hog_dataset_verify(const hog_dataset *ds, char *err, size_t err_len)
{
    if (!ds)
        return hog_fail(HOG_EPARAM, err, err_len, "ds must not be NULL");
    if (!ds->checked)
        return 0;
    return hog_hgd_check_blocks(ds->path, ds, ds->info.features, ds->map_bytes > hog_mem_usable() / 2, err, err_len);
}
