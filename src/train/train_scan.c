/* train_scan.c: what training must know of its data before it steps: the label values, and each feature's degree and the L2 scale it gives. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train_run.h"

/* ===================================================================== *
 *  A whole data set
 * ===================================================================== */
int hog_class_insert(double *c, uint32_t *n, double y)
{
    return hog_set_insert_f64(c, n, MAX_CLASSES, y) < 0 ? HOG_ELABEL : 0;
}

/* The scan on every worker: each takes the next block of the source's
 * pass (in file order, checked), and adds its labels and degrees to its
 * own part. Degrees go into a
 * worker's own array while those fit in SCAN_OWN_BYTES in all, else into
 * the shared one with atomic adds. An error is kept with its block, and
 * the lowest block's is reported: the one a reader in file order meets
 * first, whatever the timing. */
#define SCAN_OWN_BYTES (64u << 20)

typedef struct scan_part {
    _Alignas(HOG_CACHELINE) double *classes;
    uint32_t nclasses;
    uint32_t *deg;        /* this worker's degrees, or NULL: the shared array's atomics */
    uint64_t kept;
    uint32_t longest;     /* the most non-zeros of a row it scanned */
    uint32_t bad;         /* the block of its error (UINT32_MAX: none) */
    int rc;
    char err[256];
} scan_part;

typedef struct scan_job {
    const hog_dataset *ds;
    const hog_train_params *p;
    const hog_cross *cross; /* the crosses whose degrees are counted too, or NULL */
    int want_classes;
    hog_block_source *src;
    uint32_t *deg;        /* the result, worker 0's own */
    atomic_uint first_bad; /* the lowest block with an error so far */
    scan_part *parts;
} scan_job;

static void scan_fail(scan_job *j, scan_part *part, uint32_t b, int rc)
{
    part->bad = b;
    part->rc = rc;
    hog_atomic_min_u32(&j->first_bad, b);
}

static void scan_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    scan_job *j = arg;
    scan_part *part = &j->parts[ith];
    const hog_dataset *ds = j->ds;
    const hog_train_params *p = j->p;
    uint32_t *own = ith == 0 ? j->deg : part->deg;
    _Atomic uint32_t *shared = (_Atomic uint32_t *)j->deg; /* where a worker without its own array adds */
    double last = NAN; /* the label last inserted: runs of one label skip the search */
    for (;;) {
        /* The scan is the first read of a file opened to be checked as it
         * is read: its one pass over the data checks every block (a block
         * that fails stops the pass; hog_block_source_end says why). */
        uint32_t b;
        const hog_block *blk;
        int rc = hog_block_source_next(j->src, &b, &blk);
        if (rc <= 0)
            break;
        if (b > atomic_load_explicit(&j->first_bad, memory_order_relaxed)) {
            hog_block_source_release(j->src, b);
            break;
        }
        rc = 0;
        for (uint32_t r = 0; r < blk->rows && rc == 0; r++) {
            uint64_t i = (uint64_t)b * ds->info.rows_per_block + r;
            double y = blk->label[r];
            if (j->want_classes && p->loss == HOG_LOSS_SOFTMAX && y != floor(y))
                rc = hog_fail(HOG_ELABEL, part->err, sizeof(part->err),
                              "row %llu: label %g is not an integer class (softmax needs class labels)",
                              (unsigned long long)i, y);
            else if (j->want_classes && y != last && hog_class_insert(part->classes, &part->nclasses, y) < 0)
                rc = hog_fail(HOG_ELABEL, part->err, sizeof(part->err), "more than %u distinct labels", MAX_CLASSES);
            last = y;
            if (rc < 0 || (p->holdout > 0 && hog_row_in_fold(i, p->holdout, p->fold, p->seed)))
                continue;
            part->kept++;
            if (own)
                for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                    own[blk->index[k]]++;
            else
                for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                    atomic_fetch_add_explicit(&shared[blk->index[k]], 1, memory_order_relaxed);
            part->longest = HOG_MAX(part->longest, blk->ptr[r + 1] - blk->ptr[r]);
            if (j->cross) {
                const hog_row row = hog_block_row(blk, r);
                hog_cross_degrees(j->cross, &row, hog_block_fields(blk, r), own, shared);
            }
        }
        hog_block_source_release(j->src, b);
        if (rc < 0) {
            scan_fail(j, part, b, rc);
            break;
        }
    }
}

const hog_hgd_summary *hog_scan_summary(const hog_dataset *ds, const hog_train_params *p, const unsigned char *mine)
{
    const hog_hgd_summary *s = &ds->summary;
    if (!s->labels || !s->degrees || s->degrees != ds->info.features || mine || p->holdout > 0)
        return NULL;
    if (hog_loss_is_regression(p->loss))
        return s;
    if (s->labels == HOG_HGD_MANY_LABELS)
        return NULL; /* the scan says where the labels grow too many */
    for (uint32_t i = 0; i < s->labels && p->loss == HOG_LOSS_SOFTMAX; i++)
        if (s->label[i] != floor(s->label[i]))
            return NULL; /* the scan names the first row of a label that is not a class */
    return s;
}

/* What the scan would count, from the summary a .hgd carries. */
static int scan_from_summary(const hog_dataset *ds, const hog_hgd_summary *s, const hog_train_params *p, uint64_t dim,
                             double **classes, uint32_t *nclasses, uint32_t **deg, uint64_t *rows)
{
    const int want_classes = !hog_loss_is_regression(p->loss);
    uint32_t *d = hog_calloc(dim, sizeof(uint32_t));
    double *c = want_classes ? hog_malloc(MAX_CLASSES * sizeof(double)) : NULL;
    if (!d || (want_classes && !c)) {
        hog_free(d);
        hog_free(c);
        return -ENOMEM;
    }
    memcpy(d, s->degree, (size_t)s->degrees * sizeof(uint32_t));
    if (want_classes)
        memcpy(c, s->label, s->labels * sizeof(double));
    *classes = c;
    *nclasses = want_classes ? s->labels : 0;
    *deg = d;
    *rows = ds->info.rows;
    return 0;
}

_Static_assert(MAX_CLASSES == HOG_HGD_SUMMARY_LABELS, "a .hgd's summary lists as many labels as a run may have");

int hog_scan_training_set(const hog_dataset *ds, const hog_train_params *p, const hog_cross *cross, uint32_t *longest,
                          uint64_t dim, hog_block_source *src, const unsigned char *mine, hog_pool *pool,
                          double **classes, uint32_t *nclasses, uint32_t **deg, uint64_t *rows, char *err,
                          size_t err_len)
{
    const hog_hgd_summary *s = cross ? NULL : hog_scan_summary(ds, p, mine); /* no summary counts crosses */
    if (s) {
        hog_log(HOG_LOG_DEBUG, "labels and degrees from the summary of %s: no scan",
                ds->path ? ds->path : "the data set");
        return scan_from_summary(ds, s, p, dim, classes, nclasses, deg, rows);
    }
    const unsigned nth = hog_pool_threads(pool);
    scan_job j = {.ds = ds, .p = p, .cross = cross, .src = src, .want_classes = !hog_loss_is_regression(p->loss)};
    atomic_init(&j.first_bad, UINT32_MAX);
    j.deg = hog_calloc(dim, sizeof(uint32_t));
    j.parts = hog_aligned_alloc(HOG_CACHELINE, nth * sizeof(scan_part));
    double *c = j.want_classes ? hog_malloc(MAX_CLASSES * sizeof(double)) : NULL;
    int rc = j.deg && j.parts && (c || !j.want_classes) ? 0 : -ENOMEM;
    if (j.parts)
        memset(j.parts, 0, nth * sizeof(scan_part));
    const int own = (uint64_t)dim * sizeof(uint32_t) * (nth - 1) <= SCAN_OWN_BYTES;
    for (unsigned i = 0; rc == 0 && i < nth; i++) {
        j.parts[i].bad = UINT32_MAX;
        if (j.want_classes && !(j.parts[i].classes = hog_malloc(MAX_CLASSES * sizeof(double))))
            rc = -ENOMEM;
        if (i > 0 && own && !(j.parts[i].deg = hog_calloc(dim, sizeof(uint32_t))))
            rc = -ENOMEM;
    }
    uint32_t *mine_blocks = NULL, nmine = 0; /* a rank's share: the pass's blocks */
    if (rc == 0 && mine && !(mine_blocks = hog_malloc(HOG_MAX(ds->info.blocks, 1u) * sizeof(uint32_t))))
        rc = -ENOMEM;
    for (uint32_t b = 0; rc == 0 && mine && b < ds->info.blocks; b++)
        if (mine[b])
            mine_blocks[nmine++] = b;
    int src_rc = 0;
    char src_err[256] = "";
    if (rc == 0 && (rc = hog_block_source_pass(src, HOG_PASS_CHECK, mine_blocks, nmine)) == 0) {
        hog_pool_run(pool, scan_worker, &j);
        /* Over every block: the source checks the header's counts too. */
        src_rc = hog_block_source_end(src, src_err, sizeof(src_err));
    }
    hog_free(mine_blocks);
    uint64_t kept = 0;
    uint32_t n = 0;
    const scan_part *first = NULL; /* the error of the lowest block */
    for (unsigned i = 0; rc == 0 && i < nth; i++)
        if (j.parts[i].bad != UINT32_MAX && (!first || j.parts[i].bad < first->bad))
            first = &j.parts[i];
    /* A block's own error, or the source's (a block that failed its check,
     * the counts, a changed file): the one a reader in file order meets
     * first. */
    if (rc == 0 && first && first->bad < hog_block_source_failed(src))
        rc = hog_fail(first->rc, err, err_len, "%s", first->err);
    else if (rc == 0 && src_rc < 0)
        rc = hog_fail(src_rc, err, err_len, "%s", src_err);
    else if (rc == 0 && first)
        rc = hog_fail(first->rc, err, err_len, "%s", first->err);
    for (unsigned i = 0; rc == 0 && i < nth; i++) {
        const scan_part *part = &j.parts[i];
        kept += part->kept;
        if (longest)
            *longest = HOG_MAX(*longest, part->longest);
        for (uint32_t k = 0; k < part->nclasses && rc == 0; k++)
            if (hog_class_insert(c, &n, part->classes[k]) < 0)
                rc = hog_fail(HOG_ELABEL, err, err_len, "more than %u distinct labels", MAX_CLASSES);
        if (i > 0 && part->deg)
            for (uint64_t f = 0; f < dim; f++)
                j.deg[f] += part->deg[f];
    }
    if (j.parts)
        for (unsigned i = 0; i < nth; i++) {
            hog_free(j.parts[i].classes);
            hog_free(j.parts[i].deg);
        }
    hog_free(j.parts);
    if (rc < 0) {
        hog_free(c);
        hog_free(j.deg);
        return rc;
    }
    *classes = c;
    *nclasses = n;
    *deg = j.deg;
    *rows = kept;
    return 0;
}

/* HOGWILD! spreads the L2 regulariser over the examples, each applying it
 * only to the features it touches, weighted by rows / (rows touching the
 * feature), so that over an epoch every weight is shrunk as much as by the
 * full-gradient term l2/2 * |w|^2. A feature no row touches gets 0. */
void hog_scan_l2_scales(const uint32_t *deg, uint64_t rows, uint64_t dim, float *l2_scale)
{
    for (uint64_t j = 0; j < dim; j++)
        l2_scale[j] = deg[j] ? (float)((double)rows / deg[j]) : 0.0f;
}

/* ===================================================================== *
 *  A window of the streamed first epoch
 * ===================================================================== */
/* Whether y is one of the label values the run has (always, for regression). */
static int label_known(const window_count *c, double y)
{
    if (hog_loss_is_regression(c->p->loss))
        return 1;
    return hog_has_f64(c->classes, c->nclasses, y);
}

/* Counting every non-zero on the thread that feeds the workers cost as
 * long as training the window: so the next window is counted on a thread
 * of its own while the workers train this one, and owns the degrees
 * meanwhile. */
void *hog_window_count(void *arg)
{
    window_count *c = arg;
    const hog_train_params *p = c->p;
    c->top = 0;
    c->rc = 0;
    for (uint32_t b = 0; b < c->n; b++) {
        const hog_block *blk = &c->blks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            const uint64_t row = c->row0 + (uint64_t)b * c->rpb + r + 1;
            if (!label_known(c, blk->label[r])) {
                snprintf(c->why, sizeof(c->why), "label %g first appears in row %llu", (double)blk->label[r],
                         (unsigned long long)row);
                c->bad_block = b;
                c->bad_row = r;
                c->bad_label = blk->label[r];
                c->bad_field = -1;
                c->rc = 1;
                return NULL;
            }
            for (uint32_t k = blk->ptr[r]; c->fields && k < blk->ptr[r + 1]; k++)
                if (!blk->field || blk->field[k] >= c->fields) {
                    const int f = blk->field ? blk->field[k] : 0;
                    snprintf(c->why, sizeof(c->why), "field %d first appears in row %llu", f,
                             (unsigned long long)row);
                    c->bad_block = b;
                    c->bad_row = r;
                    c->bad_field = f;
                    c->rc = 1;
                    return NULL;
                }
            if (blk->ptr[r + 1] > blk->ptr[r])
                c->top = HOG_MAX(c->top, (uint64_t)blk->index[blk->ptr[r + 1] - 1] + 1);
        }
    }
    const size_t cap = c->deg_cap;
    if (hog_array_grow((void **)&c->deg, &c->deg_cap, c->top, sizeof(uint32_t), 0) < 0) {
        c->rc = -ENOMEM;
        return NULL;
    }
    memset(c->deg + cap, 0, (c->deg_cap - cap) * sizeof(uint32_t));
    uint32_t *const deg = c->deg;
    for (uint32_t b = 0; b < c->n; b++) {
        const hog_block *blk = &c->blks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            if (p->holdout > 0 && hog_row_in_fold(c->row0 + (uint64_t)b * c->rpb + r, p->holdout, p->fold, p->seed))
                continue;
            c->deg_rows++;
            for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                deg[blk->index[k]]++;
            c->longest = HOG_MAX(c->longest, blk->ptr[r + 1] - blk->ptr[r]);
            if (c->cross) {
                const hog_row row = hog_block_row(blk, r);
                hog_cross_degrees(c->cross, &row, hog_block_fields(blk, r), deg, NULL);
            }
        }
    }
    return NULL;
}
