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

int hog_scan_training_set(const hog_dataset *ds, const hog_train_params *p, uint64_t dim, int ooc,
                          const unsigned char *mine, double **classes, uint32_t *nclasses, uint32_t **deg,
                          uint64_t *rows, char *err, size_t err_len)
{
    int want_classes = !hog_loss_is_regression(p->loss);
    double *c = want_classes ? hog_malloc(MAX_CLASSES * sizeof(double)) : NULL;
    uint32_t *d = hog_calloc(dim, sizeof(uint32_t));
    if ((want_classes && !c) || !d) {
        hog_free(c);
        hog_free(d);
        return -ENOMEM;
    }
    uint32_t n = 0;
    uint64_t kept = 0;
    int rc = 0;
    for (uint32_t b = 0; b < ds->info.blocks && rc == 0; b++) {
        const hog_block *blk = &ds->blocks[b];
        if (mine && !mine[b])
            continue;
        if (ooc)
            hog_dataset_willneed(ds, b + 1);
        /* The scan is the first read of a file opened to be checked as it
         * is read: its one pass over the data checks every block. */
        if ((rc = hog_dataset_check(ds, b, err, err_len)) < 0)
            break;
        for (uint32_t r = 0; r < blk->rows && rc == 0; r++) {
            uint64_t i = (uint64_t)b * ds->info.rows_per_block + r;
            double y = blk->label[r];
            if (want_classes && p->loss == HOG_LOSS_SOFTMAX && y != floor(y))
                rc = hog_fail(HOG_ELABEL, err, err_len,
                              "row %llu: label %g is not an integer class (softmax needs class labels)",
                              (unsigned long long)i, y);
            else if (want_classes && hog_class_insert(c, &n, y) < 0)
                rc = hog_fail(HOG_ELABEL, err, err_len, "more than %u distinct labels", MAX_CLASSES);
            if (rc < 0 || (p->holdout > 0 && hog_row_in_fold(i, p->holdout, p->fold, p->seed)))
                continue;
            kept++;
            for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                d[blk->index[k]]++;
        }
        if (ooc)
            hog_dataset_drop(ds, b, 1);
    }
    /* Every block checked so: the header's feature count against the
     * largest index the blocks hold, as a check at open would (a crafted
     * count would have the trainer allocate weights no row uses). */
    if (rc == 0 && !mine)
        rc = hog_dataset_verify(ds, err, err_len);
    if (rc < 0) {
        hog_free(c);
        hog_free(d);
        return rc;
    }
    *classes = c;
    *nclasses = n;
    *deg = d;
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
    uint32_t lo = 0, hi = c->nclasses;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c->classes[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->nclasses && c->classes[lo] == y;
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
            if (!label_known(c, blk->label[r])) {
                snprintf(c->why, sizeof(c->why), "label %g first appears in row %llu", (double)blk->label[r],
                         (unsigned long long)(c->row0 + (uint64_t)b * c->rpb + r + 1));
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
        }
    }
    return NULL;
}
