/* train_arrays.c: models as arrays: predictions written into a caller's buffer in parallel, weights read in place, and models made from weights. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "train.h"

/* ===================================================================== *
 *  Predictions into an array
 * ===================================================================== */

/* Floats per row of kind for m, or 0 when m has no such prediction. */
static uint32_t per_row(const hog_model *m, hog_predict_kind kind)
{
    switch (kind) {
    case HOG_PREDICT_SCORE:
    case HOG_PREDICT_LABEL:
        return 1;
    case HOG_PREDICT_MARGINS: /* a factorisation machine scores one output from a record of several */
        return m->info.outputs;
    case HOG_PREDICT_PROBS:
        return m->info.loss == HOG_LOSS_LOGISTIC || m->info.loss == HOG_LOSS_MODIFIED_HUBER ||
                       m->info.loss == HOG_LOSS_SOFTMAX
                   ? m->info.classes
                   : 0;
    }
    return 0;
}

typedef struct predict_job {
    const hog_model *m;
    const hog_dataset *ds;
    hog_predict_kind kind;
    uint32_t n;     /* floats per row */
    hog_block_source *src; /* the blocks, checked as they are read */
    float *out;
    atomic_int oom;
} predict_job;

/* Row i's prediction of job's kind from its scores s (which it may
 * overwrite) into o. */
static void predict_one(const predict_job *job, const hog_row *row, const uint16_t *field, float *s, float *o)
{
    const hog_model *m = job->m;
    const uint32_t K = m->outputs;
    hog_model_scores(m, row, field, s);
    if (job->kind == HOG_PREDICT_MARGINS) {
        memcpy(o, s, job->n * sizeof(float));
        return;
    }
    if (m->info.loss == HOG_LOSS_SOFTMAX) {
        hog_softmax(s, K);
        uint32_t best = 0;
        for (uint32_t k = 1; k < K; k++)
            best = s[k] > s[best] ? k : best;
        if (job->kind == HOG_PREDICT_PROBS)
            memcpy(o, s, K * sizeof(float));
        else
            o[0] = job->kind == HOG_PREDICT_LABEL ? (float)m->class_labels[best] : s[best];
        return;
    }
    /* One score: a margin, or the prediction of a regression. */
    const float z = s[0];
    const double p = m->info.loss == HOG_LOSS_LOGISTIC         ? 1.0 / (1.0 + exp(-(double)z))
                     : m->info.loss == HOG_LOSS_MODIFIED_HUBER ? 0.5 * ((double)fmaxf(-1.0f, fminf(1.0f, z)) + 1.0)
                                                               : (double)z;
    switch (job->kind) {
    case HOG_PREDICT_PROBS:
        o[0] = (float)(1.0 - p);
        o[1] = (float)p;
        break;
    case HOG_PREDICT_LABEL:
        o[0] = hog_loss_is_regression(m->info.loss) ? z : (float)m->class_labels[z > 0];
        break;
    default:
        o[0] = (float)p;
        break;
    }
}

static void predict_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)ith;
    (void)nth;
    predict_job *job = arg;
    const hog_dataset *ds = job->ds;
    float *s = hog_malloc(job->m->outputs * sizeof(float));
    if (!s) {
        atomic_store(&job->oom, 1);
        return;
    }
    uint32_t b;
    const hog_block *blk;
    while (hog_block_source_next(job->src, &b, &blk) > 0) {
        const uint64_t first = (uint64_t)b * ds->info.rows_per_block;
        for (uint32_t r = 0; r < blk->rows; r++) {
            const hog_row row = hog_block_row(blk, r);
            predict_one(job, &row, hog_block_fields(blk, r), s, job->out + (first + r) * job->n);
        }
        hog_block_source_release(job->src, b);
    }
    hog_free(s);
}

int hog_model_predict_array(const hog_model *m, const hog_dataset *ds, hog_predict_kind kind, unsigned threads,
                            float *out, uint64_t out_len, char *err_detail, size_t err_len)
{
    if (!m || !ds || !out)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "m, ds and out must not be NULL");
    const uint32_t n = per_row(m, kind);
    if (n == 0)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "kind %d: a %s model has no such prediction%s", (int)kind,
                        hog_loss_name(m->info.loss),
                        kind == HOG_PREDICT_PROBS ? " (probabilities: logistic, modified_huber, softmax)" : "");
    int rc = hog_model_fields_fit(m, ds->fields, "the data set", err_detail, err_len);
    if (rc < 0)
        return rc;
    const uint64_t rows = ds->info.rows;
    if (rows > UINT64_MAX / n || out_len < rows * n)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "out_len is %llu: %llu rows of %u need %llu floats",
                        (unsigned long long)out_len, (unsigned long long)rows, n,
                        (unsigned long long)(rows * n));
    hog_pool *pool;
    rc = hog_pool_borrow(threads, 0, &pool, err_detail, err_len);
    if (rc < 0)
        return rc;
    /* One pass that checks the data set: its rows are read as they are. */
    const hog_train_params defaults = hog_train_params_default();
    hog_source_params sp = hog_source_params_default();
    sp.readers = hog_pool_threads(pool);
    sp.limit = sp.resident = hog_mem_limit(&defaults);
    predict_job job = {.m = m, .ds = ds, .kind = kind, .n = n, .out = out};
    atomic_init(&job.oom, 0);
    if ((rc = hog_block_source_open(ds, &sp, &job.src)) == 0 &&
        (rc = hog_block_source_pass(job.src, HOG_PASS_CHECK, NULL, 0)) == 0) {
        hog_pool_run(pool, predict_worker, &job);
        rc = hog_block_source_end(job.src, err_detail, err_len);
    }
    hog_block_source_close(job.src);
    hog_pool_return(pool);
    if (rc == 0 && atomic_load(&job.oom))
        return hog_fail(-ENOMEM, err_detail, err_len, "out of memory");
    return rc == -ENOMEM ? hog_fail(rc, err_detail, err_len, "out of memory") : rc;
}

/* ===================================================================== *
 *  Weights
 * ===================================================================== */
void hog_model_weights(hog_model *m, hog_weights *out)
{
    out->features = m->dim;
    out->outputs = m->outputs;
    out->classes = m->info.classes;
    out->w = (float *)(void *)m->w;
    out->bias = (float *)(void *)m->bias;
    out->class_labels = m->info.classes ? m->class_labels : NULL;
}

/* The classes a model of loss needs: 0 when `classes` fits it, else
 * HOG_EPARAM with why. */
static int classes_fit(hog_loss loss, uint32_t classes, char *err, size_t err_len)
{
    if (hog_loss_is_regression(loss) ? classes == 0
        : loss == HOG_LOSS_SOFTMAX   ? classes >= 2 && classes <= 65536
                                     : classes == 2)
        return 0;
    return hog_fail(HOG_EPARAM, err, err_len, "classes is %u: a %s model has %s", classes, hog_loss_name(loss),
                    hog_loss_is_regression(loss) ? "none (0)"
                    : loss == HOG_LOSS_SOFTMAX   ? "2 to 65536, one output each"
                                                 : "2");
}

int hog_model_from_weights(hog_loss loss, uint64_t features, uint32_t classes, const double *class_labels,
                           const float *w, const float *bias, hog_model **out, char *err_detail, size_t err_len)
{
    if (!out)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "out must not be NULL");
    *out = NULL;
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    if ((unsigned)loss > HOG_LOSS_QUANTILE)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "loss: %d is not a hog_loss", (int)loss);
    if (features == 0 || features > (1ull << 32))
        return hog_fail(HOG_EPARAM, err_detail, err_len, "features is %llu: expected 1 to 2^32",
                        (unsigned long long)features);
    int rc = classes_fit(loss, classes, err_detail, err_len);
    if (rc < 0)
        return rc;
    for (uint32_t k = 0; class_labels && k < classes; k++)
        if (!isfinite(class_labels[k]) || (k > 0 && !(class_labels[k] > class_labels[k - 1])))
            return hog_fail(HOG_EPARAM, err_detail, err_len, "class_labels[%u] is %g: expected finite labels, "
                            "strictly ascending", k, class_labels[k]);
    const uint32_t outputs = loss == HOG_LOSS_SOFTMAX ? classes : 1;
    if (features > UINT64_MAX / sizeof(float) / outputs)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "features * outputs (%llu * %u) overflows",
                        (unsigned long long)features, outputs);
    const uint64_t n = features * outputs;
    for (uint64_t i = 0; w && i < n; i++)
        if (!isfinite(w[i]))
            return hog_fail(HOG_ENONFINITE, err_detail, err_len, "w[%llu] (feature %llu, output %llu) is %g",
                            (unsigned long long)i, (unsigned long long)(i / outputs),
                            (unsigned long long)(i % outputs), (double)w[i]);
    for (uint32_t k = 0; bias && k < outputs; k++)
        if (!isfinite(bias[k]))
            return hog_fail(HOG_ENONFINITE, err_detail, err_len, "bias[%u] is %g", k, (double)bias[k]);
    hog_model *m = hog_model_new(loss, features, outputs, classes);
    if (!m)
        return hog_fail(-ENOMEM, err_detail, err_len, "out of memory for %llu weights", (unsigned long long)n);
    m->info.params.loss = loss;
    if (w) {
        memcpy((void *)m->w, w, n * sizeof(float));
        for (uint64_t i = 0; i < n; i++)
            m->info.nonzero += w[i] != 0.0f;
    }
    if (bias)
        memcpy((void *)m->bias, bias, outputs * sizeof(float));
    for (uint32_t k = 0; k < classes; k++)
        m->class_labels[k] = class_labels ? class_labels[k] : (double)k;
    *out = m;
    return 0;
}
