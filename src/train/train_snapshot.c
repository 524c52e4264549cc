/* train_snapshot.c: models handed out while a run in one pass goes on (snapshots): the settings, when one is due, and the model of the rows learned so far. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "train_run.h"

int hog_trainer_set_snapshots(hog_trainer *t, uint64_t every_rows, double every_seconds, hog_snapshot_fn write,
                              void *ctx)
{
    if (!hog_snapshot_settings_ok(every_rows, every_seconds, write != NULL))
        return HOG_EPARAM;
    t->snap_write = write;
    t->snap_ctx = ctx;
    t->snap_rows = every_rows;
    t->snap_every = every_seconds;
    return 0;
}

void hog_trainer_snapshot(hog_trainer *t)
{
    atomic_store_explicit(&t->snap_asked, 1, memory_order_relaxed);
}

/* The rows the workers have trained in this run. */
static uint64_t rows_trained(const run_state *rs)
{
    uint64_t rows = 0;
    for (unsigned i = 0; i < rs->nth; i++)
        rows += rs->ws[i].examples;
    return rows;
}

/* A model of the run's as a file holds it: the weights compacted out of a
 * packed model's records (a run's own layout), the intercepts, the classes
 * and the normalized update's scales, with the progressive metrics of the
 * rows so far as its training metrics; NULL for want of memory. The
 * workers are idle, and their private copies published (each segment's
 * end does so), so the shared model is the run's whole state. */
static hog_model *snapshot_model(const run_state *rs, uint64_t rows)
{
    const hog_model *r = rs->m;
    const uint32_t K = r->outputs;
    hog_model *m = hog_model_new(r->info.loss, r->dim, K, r->info.classes);
    if (!m)
        return NULL;
    m->info = r->info;
    m->info.features = r->dim;
    m->factors = r->factors;
    m->fields = r->fields;
    m->cross = r->cross;
    /* The run's model gets the data's hashing with its info when the data
     * set is whole (hog_run_model_info): a snapshot in the stream's middle
     * takes the run's, its read's. */
    m->data_hash_bits = r->data_hash_bits ? r->data_hash_bits : rs->data_hash_bits;
    memcpy(m->class_labels, r->class_labels, (r->info.classes ? r->info.classes : 1) * sizeof(double));
    if (hog_model_names_copy(m, r) < 0)
        goto fail;
    const uint64_t nonzero = hog_model_weights_to(r, m->w);
    for (uint32_t k = 0; k < K; k++)
        hog_w_store(&m->bias[k], hog_w_load(&r->bias[k]));
    if (rs->optim.xmax) {
        if (!(m->scales = hog_huge_alloc((size_t)HOG_MAX(r->dim, 1u) * sizeof(hog_weight))))
            goto fail;
        for (uint64_t j = 0; j < r->dim; j++)
            hog_w_store(&m->scales[j], hog_w_load(&rs->optim.xmax[j * rs->optim.fstride]));
    }
    m->info.nonzero = nonzero;
    m->info.epochs_run = m->info.best_epoch = 1;
    m->info.train_rows = rows;
    m->info.seconds = rs->seconds;
    m->info.test = hog_metrics_none();
    m->info.train = hog_metrics_none();
    if (rs->prog_on) {
        hog_eval_sums sums;
        if (hog_eval_sums_init(&sums, m) < 0) {
            hog_eval_sums_free(&sums);
            goto fail;
        }
        for (unsigned i = 0; i < rs->nth; i++)
            hog_eval_sums_merge(&sums, &rs->ws[i].prog);
        hog_eval_metrics(m, &sums, &m->info.train);
        m->info.params.train_metrics = HOG_TRAIN_METRICS_PROGRESSIVE;
        hog_eval_sums_free(&sums);
    }
    return m;
fail:
    hog_model_free(m);
    return NULL;
}

void hog_run_snapshot(run_state *rs)
{
    snap_state *sn = &rs->snap;
    if (!sn->write)
        return;
    const int asked = atomic_exchange_explicit(sn->asked, 0, memory_order_relaxed);
    const uint64_t rows = rows_trained(rs);
    const double now = hog_now();
    const int due = asked || (sn->every_rows && rows - sn->last_rows >= sn->every_rows) ||
                    (sn->every_seconds > 0 && now - sn->last_time >= sn->every_seconds);
    if (!due || rows == sn->last_rows)
        return;
    hog_model *m = snapshot_model(rs, rows);
    const int rc = m ? sn->write(sn->ctx, m) : -ENOMEM;
    if (rc < 0)
        hog_log(HOG_LOG_WARN, "snapshot after %llu rows not written: %s; training goes on",
                (unsigned long long)rows, hog_strerror(rc));
    else
        hog_log(HOG_LOG_INFO, "snapshot after %llu rows, %.2f s into the run (%.3f s to make and write)",
                (unsigned long long)rows, now - sn->start, hog_now() - now);
    hog_model_free(m);
    sn->last_rows = rows;
    sn->last_time = hog_now();
}
