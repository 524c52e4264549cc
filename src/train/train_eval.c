/* train_eval.c: metrics of a model on a data set (log loss, accuracy, AUC from a histogram of scores, RMSE), computed in parallel in bounded memory. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "train.h"

/* Rows per GEMM when evaluating on the dense kernel. */
#define EVAL_BATCH 256u

/* ===================================================================== *
 *  AUC from a histogram of scores
 *
 *  Sorting every score (8 bytes a row, kept until the end) made the
 *  evaluation's memory grow with the data. A row's score instead picks a
 *  bin by its float bits, which orders bins as the scores: the middle bin
 *  holds magnitudes below 2^-HOG_AUC_BINADES/2 (zero among them), the
 *  outermost ones everything beyond 2^HOG_AUC_BINADES/2, and between them
 *  each power of two is cut into HOG_AUC_STEPS bins of equal width (a bin
 *  is 1/512 of its scores' magnitude wide, 0.2%). A positive and a negative
 *  row in different bins are ordered as their scores are; two in one bin
 *  count as a tie, half, as the exact Mann-Whitney statistic counts equal
 *  scores. So the AUC is exact but for pairs that share a bin, and differs
 *  from the exact one by at most half the fraction of positive-negative
 *  pairs that do (hog_auc_of returns that bound): zero when no bin holds
 *  both, and for scores spread over a range a few hundred bins wide or
 *  more, below 1e-4 (the tests measure it).
 * ===================================================================== */
uint32_t hog_auc_bin(float score)
{
    uint32_t u;
    memcpy(&u, &score, sizeof(u));
    const uint32_t mag = u & 0x7fffffffu;
    const uint32_t lo = (uint32_t)(127 - HOG_AUC_BINADES / 2) << 23; /* 2^-32 */
    const uint32_t span = (uint32_t)HOG_AUC_BINADES << 23;
    const uint32_t mid = HOG_AUC_BINADES * HOG_AUC_STEPS;
    if (mag < lo)
        return mid;
    /* the top bits of the exponent and mantissa above 2^-32: HOG_AUC_STEPS a binade */
    uint32_t q = (HOG_MIN(mag - lo, span - 1) >> (23 - HOG_AUC_STEP_BITS)) + 1;
    return u >> 31 ? mid - q : mid + q;
}

double hog_auc_of(const uint64_t *hist, double *bound)
{
    double below = 0, pairs = 0, tied = 0, npos = 0;
    for (uint32_t b = 0; b < HOG_AUC_BINS; b++) {
        double neg = (double)hist[2 * b], pos = (double)hist[2 * b + 1];
        pairs += pos * below + 0.5 * pos * neg;
        tied += pos * neg;
        below += neg;
        npos += pos;
    }
    double all = npos * below;
    if (bound)
        *bound = all > 0 ? 0.5 * tied / all : (double)NAN;
    return all > 0 ? pairs / all : (double)NAN;
}

/* ===================================================================== *
 *  Sums of one worker's rows
 * ===================================================================== */
int hog_eval_sums_init(hog_eval_sums *e, const hog_model *m)
{
    memset(e, 0, sizeof(*e));
    if (!hog_loss_is_binary(m->info.loss))
        return 0;
    /* Pages of zeros until a bin is counted in: a narrow range of scores
     * touches few of them. */
    e->hist = hog_calloc(2 * (size_t)HOG_AUC_BINS, sizeof(uint64_t));
    return e->hist ? 0 : -ENOMEM;
}

void hog_eval_sums_free(hog_eval_sums *e)
{
    hog_free(e->hist);
    e->hist = NULL;
}

/* The index of the largest of s[0..k), the first of equals. */
static uint32_t argmax(const float *s, uint32_t k)
{
    uint32_t best = 0;
    for (uint32_t i = 1; i < k; i++)
        best = s[i] > s[best] ? i : best;
    return best;
}

uint32_t hog_scores_class(const hog_model *m, float *s)
{
    switch (m->info.loss) {
    case HOG_LOSS_SOFTMAX:
        hog_softmax(s, m->outputs); /* the most probable, as hog_model_predict picks it */
        return argmax(s, m->outputs);
    case HOG_LOSS_SQUARED:
    case HOG_LOSS_QUANTILE:
        return 0;
    default:
        return s[0] > 0;
    }
}

/* Losses and accuracy are weighted means, as the training objective weighs
 * the rows; AUC counts every row once. */
uint32_t hog_eval_add(const hog_model *m, hog_eval_sums *e, float label, float weight, float *s)
{
    const uint32_t K = m->outputs;
    const double w = (double)weight;
    e->rows++;
    e->wsum += w;
    switch (m->info.loss) {
    case HOG_LOSS_SOFTMAX: {
        int y = hog_model_class_of(m, label);
        float score_y = y >= 0 ? s[y] : 0.0f;
        float lse = hog_softmax(s, K); /* s now holds probabilities */
        uint32_t best = argmax(s, K);
        if (y >= 0) {
            e->known += w;
            e->correct += best == (uint32_t)y ? w : 0;
            e->loss += w * (double)(lse - score_y); /* -log p_y, exact even when p_y underflows */
        }
        return best;
    }
    case HOG_LOSS_SQUARED:
    case HOG_LOSS_QUANTILE: {
        float v; /* squared/2, or the pinball loss at the model's quantile */
        hog_loss_grad_tau(m->info.loss, s[0], label, (float)m->info.params.quantile, &v);
        e->loss += w * (double)v;
        double r = (double)s[0] - (double)label;
        e->sq += w * r * r;
        return 0;
    }
    default: {
        int pos = hog_model_class_of(m, label);
        float v;
        hog_loss_grad(m->info.loss, s[0], pos ? 1.0f : -1.0f, &v);
        e->loss += w * (double)v;
        e->correct += (s[0] > 0) == pos ? w : 0;
        e->hist[2 * hog_auc_bin(s[0]) + (pos != 0)]++;
        return s[0] > 0;
    }
    }
}

void hog_eval_sums_merge(hog_eval_sums *into, const hog_eval_sums *from)
{
    into->rows += from->rows;
    into->wsum += from->wsum;
    into->correct += from->correct;
    into->known += from->known;
    into->loss += from->loss;
    into->sq += from->sq;
    if (into->hist && from->hist)
        for (size_t b = 0; b < 2 * (size_t)HOG_AUC_BINS; b++)
            into->hist[b] += from->hist[b];
}

void hog_eval_metrics(const hog_model *m, const hog_eval_sums *t, hog_metrics *out)
{
    *out = hog_metrics_none();
    out->rows = t->rows;
    if (t->rows == 0 || t->wsum == 0)
        return;
    double rows = t->wsum;
    switch (m->info.loss) {
    case HOG_LOSS_SOFTMAX:
        out->accuracy = t->correct / rows;
        out->loss = out->logloss = t->known > 0 ? t->loss / t->known : (double)NAN;
        break;
    case HOG_LOSS_SQUARED:
    case HOG_LOSS_QUANTILE:
        out->loss = t->loss / rows;
        out->rmse = sqrt(t->sq / rows);
        break;
    default:
        out->loss = t->loss / rows;
        out->accuracy = t->correct / rows;
        if (m->info.loss == HOG_LOSS_LOGISTIC)
            out->logloss = out->loss;
        out->auc = hog_auc_of(t->hist, NULL);
        break;
    }
}

/* ===================================================================== *
 *  Evaluation of a data set on a pool
 * ===================================================================== */
typedef struct eval_part {
    _Alignas(HOG_CACHELINE) hog_eval_sums sums;
    int oom;
} eval_part;

typedef struct eval_job {
    const hog_model *m;
    const hog_dataset *ds;
    const hog_rowsel *sel;
    int dense;      /* score batches of rows with GEMM (the model was trained on the dense kernel) */
    const float *relabel; /* the data set's class names: name c scores as the model's label relabel[c] */
    hog_block_source *src; /* the blocks, in file order */
    eval_part *parts;
} eval_job;

static void eval_rows(eval_job *job, hog_eval_sums *e, float *s, const hog_block *blk, uint64_t first);
static void eval_rows_dense(eval_job *job, hog_eval_sums *e, hog_dense *d, const hog_block *blk, uint64_t first);

static void eval_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    eval_job *job = arg;
    const hog_model *m = job->m;
    eval_part *part = &job->parts[ith];
    const hog_dataset *ds = job->ds;
    const uint32_t K = m->outputs;
    float *s = hog_malloc(K * sizeof(float));
    /* Made here, so the buffers are on this worker's node; the snapshot is
     * taken once: nothing writes the model during an evaluation. */
    hog_dense *d = job->dense ? hog_dense_new(m->dim, K, EVAL_BATCH) : NULL;
    if (!s || (job->dense && !d) || hog_eval_sums_init(&part->sums, m) < 0) {
        hog_free(s);
        hog_dense_free(d);
        part->oom = 1;
        return;
    }
    if (d)
        hog_dense_snapshot(d, m);
    /* Whole blocks, taken in file order, so that out of core each is read
     * once, ahead of use, and let go after (a block that fails stops the
     * pass: hog_block_source_end says why). */
    uint32_t b;
    const hog_block *blk;
    while (hog_block_source_next(job->src, &b, &blk) > 0) {
        uint64_t first = (uint64_t)b * ds->info.rows_per_block;
        if (d)
            eval_rows_dense(job, &part->sums, d, blk, first);
        else
            eval_rows(job, &part->sums, s, blk, first);
        hog_block_source_release(job->src, b);
    }
    hog_free(s);
    hog_dense_free(d);
}

/* The selected rows of blk, whose row 0 is the data set's row first. */
static void eval_rows(eval_job *job, hog_eval_sums *e, float *s, const hog_block *blk, uint64_t first)
{
    const int pm = hog_model_prefetch_on(job->m);
    for (uint32_t r = 0; pm && r < HOG_SCORE_AHEAD; r++)
        hog_model_prefetch_row(job->m, blk, r);
    for (uint32_t r = 0; r < blk->rows; r++) {
        if (pm)
            hog_model_prefetch_row(job->m, blk, r + HOG_SCORE_AHEAD);
        if (!hog_rowsel_keep(job->sel, first + r))
            continue;
        hog_row row = hog_block_row(blk, r);
        hog_model_scores(job->m, &row, hog_block_fields(blk, r), s);
        hog_eval_add(job->m, e, job->relabel ? job->relabel[(uint32_t)row.label] : row.label, row.weight, s);
    }
}

/* The same metrics, the scores of EVAL_BATCH selected rows at a time from
 * one GEMM. */
static void eval_rows_dense(eval_job *job, hog_eval_sums *e, hog_dense *d, const hog_block *blk, uint64_t first)
{
    const uint32_t K = job->m->outputs;
    hog_row rows[EVAL_BATCH];
    uint32_t n = 0;
    for (uint32_t i = 0; i < blk->rows; i++) {
        if (hog_rowsel_keep(job->sel, first + i))
            rows[n++] = hog_block_row(blk, i);
        if (n == EVAL_BATCH || (i + 1 == blk->rows && n > 0)) {
            float *s = (float *)hog_dense_scores(d, rows, n);
            for (uint32_t r = 0; r < n; r++)
                hog_eval_add(job->m, e, job->relabel ? job->relabel[(uint32_t)rows[r].label] : rows[r].label,
                             rows[r].weight, s + (size_t)r * K);
            n = 0;
        }
    }
}

int hog_evaluate(const hog_model *m, const hog_dataset *ds, const hog_rowsel *sel, hog_block_source *src,
                 uint64_t limit, hog_pool *pool, hog_metrics *out, char *err, size_t err_len)
{
    *out = hog_metrics_none();
    unsigned nth = hog_pool_threads(pool);
    eval_job job = {.m = m, .ds = ds, .sel = sel, .src = src, .dense = m->info.params.kernel == HOG_KERNEL_DENSE};
    float *relabel;
    int rc = hog_model_fields_fit(m, ds->fields, "the data set to evaluate on", err, err_len);
    if (rc < 0)
        return rc;
    rc = hog_labels_map_new(m, &ds->names, &relabel, err, err_len);
    if (rc < 0)
        return rc;
    job.relabel = relabel;
    if (job.dense)
        hog_dense_blas_init();
    job.parts = hog_aligned_alloc(HOG_CACHELINE, nth * sizeof(eval_part));
    if (job.parts)
        memset(job.parts, 0, nth * sizeof(eval_part));
    if (job.parts && !src) {
        hog_source_params sp = hog_source_params_default();
        sp.readers = nth;
        sp.limit = sp.resident = limit;
        rc = hog_block_source_open(ds, &sp, &job.src);
    }
    if (job.parts && rc == 0)
        rc = hog_block_source_pass(job.src, HOG_PASS_EVAL, NULL, 0);
    if (!job.parts || rc < 0) {
        if (job.src != src)
            hog_block_source_close(job.src);
        hog_free(job.parts);
        hog_free(relabel);
        return job.parts ? hog_fail(rc, err, err_len, "reading the blocks to evaluate: %s", hog_strerror(rc))
                         : -ENOMEM;
    }
    hog_pool_run(pool, eval_worker, &job);

    for (unsigned i = 0; i < nth; i++) {
        rc = job.parts[i].oom ? -ENOMEM : rc;
        if (i > 0)
            hog_eval_sums_merge(&job.parts[0].sums, &job.parts[i].sums);
    }
    /* A block that failed its read or its check, or a file changed: the
     * source's error names it. */
    int rr = hog_block_source_end(job.src, err, err_len);
    if (job.src != src)
        hog_block_source_close(job.src);
    if (rc == 0 && rr < 0)
        rc = rr;
    if (rc == 0)
        hog_eval_metrics(m, &job.parts[0].sums, out);
    for (unsigned i = 0; i < nth; i++)
        hog_eval_sums_free(&job.parts[i].sums);
    hog_free(job.parts);
    hog_free(relabel);
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
    uint64_t limit = hog_mem_limit(&p);
    rc = hog_evaluate(m, ds, NULL, NULL, limit, pool, out, NULL, 0);
    hog_pool_return(pool);
    return rc;
}
