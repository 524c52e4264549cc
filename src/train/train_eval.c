/* train_eval.c: metrics of a model on a data set (log loss, accuracy, AUC, RMSE), computed in parallel. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* Rows per GEMM when evaluating on the dense kernel. */
#define EVAL_BATCH 256u

typedef struct eval_part {
    _Alignas(HOG_CACHELINE) uint64_t rows;
    double wsum;    /* their importance weights (the rows, when unweighted) */
    double correct; /* weight of the rows classified right */
    double known;   /* softmax: weight of the rows whose label is one of the model's classes */
    double loss;    /* weighted sum of the model's own loss */
    double sq;      /* weighted sum of squared residuals */
    int oom;
} eval_part;

typedef struct eval_job {
    const hog_model *m;
    const hog_dataset *ds;
    const hog_rowsel *sel;
    int drop;
    int dense;      /* score batches of rows with GEMM (the model was trained on the dense kernel) */
    atomic_uint next_block;
    eval_part *parts;
    float *score;   /* binary: one score per row, NaN where not selected */
    uint8_t *pos;   /* binary: 1 where the row is positive */
} eval_job;

static void eval_rows(eval_job *job, eval_part *part, float *s, uint64_t lo, uint64_t hi);
static void eval_rows_dense(eval_job *job, eval_part *part, hog_dense *d, uint64_t lo, uint64_t hi);

static void eval_worker(void *arg, unsigned ith, unsigned nth)
{
    eval_job *job = arg;
    const hog_model *m = job->m;
    eval_part *part = &job->parts[ith];
    const hog_dataset *ds = job->ds;
    const uint32_t K = m->outputs;
    float *s = hog_malloc(K * sizeof(float));
    /* Made here, so the buffers are on this worker's node; the snapshot is
     * taken once: nothing writes the model during an evaluation. */
    hog_dense *d = job->dense ? hog_dense_new(m->dim, K, EVAL_BATCH) : NULL;
    if (!s || (job->dense && !d)) {
        hog_free(s);
        hog_dense_free(d);
        part->oom = 1;
        return;
    }
    if (d)
        hog_dense_snapshot(d, m);
    /* Whole blocks, claimed in file order, so an out-of-core scan reads
     * each block once, ahead of use, and drops it after. */
    for (;;) {
        uint32_t b = atomic_fetch_add_explicit(&job->next_block, 1, memory_order_relaxed);
        if (b >= ds->info.blocks)
            break;
        if (job->drop && b + nth < ds->info.blocks)
            hog_dataset_willneed(ds, b + nth);
        uint64_t lo = (uint64_t)b * ds->info.rows_per_block, hi = lo + ds->blocks[b].rows;
        if (d)
            eval_rows_dense(job, part, d, lo, hi);
        else
            eval_rows(job, part, s, lo, hi);
        if (job->drop)
            hog_dataset_drop(ds, b, 1);
    }
    hog_free(s);
    hog_dense_free(d);
}

/* Adds row i (its label, its importance weight, its scores s, which it may
 * overwrite) to the metrics: losses and accuracy are weighted means, as the
 * training objective weighs the rows; AUC counts every row once. */
static void eval_account(eval_job *job, eval_part *part, uint64_t i, float label, float weight, float *s)
{
    const hog_model *m = job->m;
    const uint32_t K = m->outputs;
    const double w = (double)weight;
    part->rows++;
    part->wsum += w;
    switch (m->info.loss) {
    case HOG_LOSS_SOFTMAX: {
        int y = hog_model_class_of(m, label);
        float score_y = y >= 0 ? s[y] : 0.0f;
        float lse = hog_softmax(s, K); /* s now holds probabilities */
        uint32_t best = 0;
        for (uint32_t k = 1; k < K; k++)
            best = s[k] > s[best] ? k : best;
        if (y >= 0) {
            part->known += w;
            part->correct += best == (uint32_t)y ? w : 0;
            part->loss += w * (double)(lse - score_y); /* -log p_y, exact even when p_y underflows */
        }
        break;
    }
    case HOG_LOSS_SQUARED:
    case HOG_LOSS_QUANTILE: {
        float v; /* squared/2, or the pinball loss at the model's quantile */
        hog_loss_grad_tau(m->info.loss, s[0], label, (float)m->info.params.quantile, &v);
        part->loss += w * (double)v;
        double r = (double)s[0] - (double)label;
        part->sq += w * r * r;
        break;
    }
    default: {
        int pos = hog_model_class_of(m, label);
        float v;
        hog_loss_grad(m->info.loss, s[0], pos ? 1.0f : -1.0f, &v);
        part->loss += w * (double)v;
        part->correct += (s[0] > 0) == pos ? w : 0;
        job->score[i] = s[0];
        job->pos[i] = (uint8_t)pos;
        break;
    }
    }
}

static void eval_rows(eval_job *job, eval_part *part, float *s, uint64_t lo, uint64_t hi)
{
    for (uint64_t i = lo; i < hi; i++) {
        if (job->score)
            job->score[i] = NAN;
        if (!hog_rowsel_keep(job->sel, i))
            continue;
        hog_row row = hog_dataset_row(job->ds, i);
        hog_model_scores(job->m, &row, s);
        eval_account(job, part, i, row.label, row.weight, s);
    }
}

/* The same metrics, the scores of EVAL_BATCH selected rows at a time from
 * one GEMM. */
static void eval_rows_dense(eval_job *job, eval_part *part, hog_dense *d, uint64_t lo, uint64_t hi)
{
    const uint32_t K = job->m->outputs;
    hog_row rows[EVAL_BATCH];
    uint64_t ids[EVAL_BATCH];
    uint32_t n = 0;
    for (uint64_t i = lo; i < hi; i++) {
        if (job->score)
            job->score[i] = NAN;
        if (hog_rowsel_keep(job->sel, i)) {
            ids[n] = i;
            rows[n++] = hog_dataset_row(job->ds, i);
        }
        if (n == EVAL_BATCH || (i + 1 == hi && n > 0)) {
            float *s = (float *)hog_dense_scores(d, rows, n);
            for (uint32_t r = 0; r < n; r++)
                eval_account(job, part, ids[r], rows[r].label, rows[r].weight, s + (size_t)r * K);
            n = 0;
        }
    }
}

typedef struct scored {
    float score;
    uint8_t pos;
} scored;

static int scored_cmp(const void *a, const void *b)
{
    float x = ((const scored *)a)->score, y = ((const scored *)b)->score;
    return (x > y) - (x < y);
}

/* Area under the ROC curve: the Mann-Whitney statistic, ties counted half. */
static double auc_of(scored *v, uint64_t n)
{
    qsort(v, n, sizeof(*v), scored_cmp);
    double npos = 0, rank_sum = 0;
    for (uint64_t i = 0; i < n;) {
        uint64_t j = i;
        uint64_t pos_in_tie = 0;
        while (j < n && v[j].score == v[i].score)
            pos_in_tie += v[j++].pos;
        double mean_rank = 0.5 * (double)(i + 1 + j); /* ranks i+1 .. j */
        rank_sum += mean_rank * (double)pos_in_tie;
        npos += (double)pos_in_tie;
        i = j;
    }
    double nneg = (double)n - npos;
    if (npos == 0 || nneg == 0)
        return NAN;
    return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg);
}

int hog_evaluate(const hog_model *m, const hog_dataset *ds, const hog_rowsel *sel, int drop,
                 hog_pool *pool, hog_metrics *out)
{
    *out = hog_metrics_none();
    unsigned nth = hog_pool_threads(pool);
    uint64_t n = ds->info.rows;
    int binary = hog_loss_is_binary(m->info.loss);
    eval_job job = {.m = m, .ds = ds, .sel = sel, .drop = drop, .dense = m->info.params.kernel == HOG_KERNEL_DENSE};
    if (job.dense)
        hog_dense_blas_init();
    atomic_init(&job.next_block, 0);
    if (drop)
        for (uint32_t b = 0; b < nth && b < ds->info.blocks; b++)
            hog_dataset_willneed(ds, b);
    job.parts = hog_aligned_alloc(HOG_CACHELINE, nth * sizeof(eval_part));
    if (binary) {
        job.score = hog_malloc(n * sizeof(float));
        job.pos = hog_malloc(n);
    }
    int rc = 0;
    if (!job.parts || (binary && (!job.score || !job.pos))) {
        rc = -ENOMEM;
        goto out;
    }
    memset(job.parts, 0, nth * sizeof(eval_part));
    hog_pool_run(pool, eval_worker, &job);

    eval_part t = {0};
    for (unsigned i = 0; i < nth; i++) {
        t.rows += job.parts[i].rows;
        t.wsum += job.parts[i].wsum;
        t.correct += job.parts[i].correct;
        t.known += job.parts[i].known;
        t.loss += job.parts[i].loss;
        t.sq += job.parts[i].sq;
        t.oom |= job.parts[i].oom;
    }
    if (t.oom) {
        rc = -ENOMEM;
        goto out;
    }
    out->rows = t.rows;
    if (t.rows == 0 || t.wsum == 0)
        goto out;
    double rows = t.wsum;
    switch (m->info.loss) {
    case HOG_LOSS_SOFTMAX:
        out->accuracy = t.correct / rows;
        out->loss = out->logloss = t.known > 0 ? t.loss / t.known : (double)NAN;
        break;
    case HOG_LOSS_SQUARED:
    case HOG_LOSS_QUANTILE:
        out->loss = t.loss / rows;
        out->rmse = sqrt(t.sq / rows);
        break;
    default: {
        out->loss = t.loss / rows;
        out->accuracy = t.correct / rows;
        if (m->info.loss == HOG_LOSS_LOGISTIC)
            out->logloss = out->loss;
        /* Compact the selected rows' scores in place, reusing the buffers. */
        scored *v = hog_malloc(t.rows * sizeof(scored));
        if (!v) {
            rc = -ENOMEM;
            goto out;
        }
        uint64_t k = 0;
        for (uint64_t i = 0; i < n; i++)
            if (!isnan(job.score[i]))
                v[k++] = (scored){job.score[i], job.pos[i]};
        out->auc = auc_of(v, k);
        hog_free(v);
        break;
    }
    }
out:
    hog_free(job.parts);
    hog_free(job.score);
    hog_free(job.pos);
    return rc;
}

/* The trainer evaluates with its own pool; a caller of the public call has
 * none, and borrows the process's shared one (pool_shared.c) rather than
 * start threads on every call. */
int hog_model_evaluate(const hog_model *m, const hog_dataset *ds, unsigned threads, hog_metrics *out)
{
    hog_pool *pool;
    *out = hog_metrics_none();
    int rc = hog_pool_borrow(threads, 0, &pool, NULL, 0);
    if (rc < 0)
        return rc;
    hog_train_params p = hog_train_params_default();
    rc = hog_evaluate(m, ds, NULL, hog_dataset_bytes(ds) > hog_mem_limit(&p), pool, out);
    hog_pool_return(pool);
    return rc;
}
