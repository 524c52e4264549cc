/* train_dense.c: the dense kernel: mini-batches made dense and stepped with OpenBLAS GEMM, each worker writing the shared model HOGWILD!-style. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "train.h"

/*
 * One worker's step over a mini-batch of n rows, X (n x d, dense), with a
 * model W (d x K, feature-major as the model stores it) and bias b:
 *
 *   S  = X W + 1 b^T          scores, one GEMM
 *   G  = dloss/dS             per row: softmax(S_i) - onehot(y_i), or the
 *                             binary loss's slope at the margin
 *   dW = X^T G                the batch's summed gradient, a second GEMM
 *   W <- W (1 - step l2 n) - step dW,   b <- b - step sum_i G_i
 *
 * The step is the sum over the batch, as n plain SGD steps taken from the
 * same weights would be, so hog_train_params.step means the same on both
 * kernels; L2 is the full-gradient term, n examples' worth of the penalty mean
 * loss + l2/2 |w|^2 per batch.
 *
 * The GEMMs read a worker-local snapshot of W, not the shared model in
 * place: OpenBLAS reads memory with plain (vector) loads, which on weights
 * that other workers store to at the same time would be a C11 data race,
 * not the relaxed atomic access train.h allows. The update is written back
 * one weight at a time with hog_w_load/hog_w_store against the current
 * value (not the snapshot), so a racing worker's change in between is lost
 * only for the weights stored at that very moment, as HOGWILD! accepts; the
 * values that pass reads and writes become the next batch's snapshot, so
 * the snapshot costs no pass of its own (one hog_w_load of every weight at
 * the start of each segment) and is as fresh as the last batch's update.
 */

/* Rows are padded to a multiple of this many floats, so every row of the
 * batch starts 64-byte aligned for OpenBLAS's vector loads. */
#define ROW_ALIGN_FLOATS (HOG_CACHELINE / sizeof(float))

struct hog_dense {
    uint64_t dim;     /* features: columns of X, rows of W */
    uint64_t ld;      /* floats per row of X: dim padded to ROW_ALIGN_FLOATS */
    uint32_t outputs; /* K */
    uint32_t batch;   /* rows of X */
    float *x;         /* batch * ld: the batch's rows, dense */
    float *w;         /* dim * K: the snapshot of the shared weights */
    float *bias;      /* K: the snapshot of the shared biases */
    float *s;         /* batch * K: scores, then their gradient */
    float *dw;        /* dim * K: the batch's weight gradient */
    float *y;         /* batch: each row's target (binary: +-1, squared: the label, softmax: the class) */
    float *w0;        /* batch: each row's importance weight (the rows' own: no class weight) */
    hog_row *rows;    /* batch: the rows themselves */
    atomic_uint *published; /* batches published by all the workers (see hog_dense_share), or NULL */
    unsigned members;       /* workers publishing there */
    unsigned published0;    /* *published when the snapshot was read */
};

/* ===================================================================== *
 *  OpenBLAS
 * ===================================================================== */
/* Debian's libopenblas0 is the pthread build (the alternative `-lopenblas`
 * links against unless the serial one is installed and selected), whose
 * GEMM splits across its own thread pool. Our workers are already one per
 * core and pinned: OpenBLAS threads would oversubscribe the cores and make
 * the workers' concurrent calls queue on its single server. So OpenBLAS is
 * set to one thread, once per process, the documented way for programs that
 * are themselves multi-threaded; each call then runs in the calling worker,
 * whatever the variant. The setting is process-wide, which hogtrain.h says. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void blas_single(void)
{
    openblas_set_num_threads(1);
    hog_log(HOG_LOG_DEBUG, "OpenBLAS %s (%s), one thread per call", openblas_get_config(),
            openblas_get_parallel() == 0 ? "serial" : openblas_get_parallel() == 1 ? "pthread" : "OpenMP");
}

void hog_dense_blas_init(void)
{
    pthread_once(&blas_once, blas_single);
}

/* ===================================================================== *
 *  Buffers
 * ===================================================================== */
void hog_dense_free(hog_dense *d)
{
    if (!d)
        return;
    hog_free(d->x);
    hog_free(d->w);
    hog_free(d->bias);
    hog_free(d->s);
    hog_free(d->dw);
    hog_free(d->y);
    hog_free(d->w0);
    hog_free(d->rows);
    hog_free(d);
}

hog_dense *hog_dense_new(uint64_t dim, uint32_t outputs, uint32_t batch)
{
    hog_dense *d = hog_calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->dim = dim;
    d->ld = (dim + ROW_ALIGN_FLOATS - 1) / ROW_ALIGN_FLOATS * ROW_ALIGN_FLOATS;
    d->outputs = outputs;
    d->batch = batch;
    size_t wbytes = (size_t)dim * outputs * sizeof(float);
    d->x = hog_aligned_alloc(HOG_CACHELINE, (size_t)batch * d->ld * sizeof(float));
    d->w = hog_aligned_alloc(HOG_CACHELINE, wbytes);
    d->bias = hog_aligned_alloc(HOG_CACHELINE, outputs * sizeof(float));
    d->s = hog_aligned_alloc(HOG_CACHELINE, (size_t)batch * outputs * sizeof(float));
    d->dw = hog_aligned_alloc(HOG_CACHELINE, wbytes);
    d->y = hog_malloc(batch * sizeof(float));
    d->w0 = hog_malloc(batch * sizeof(float));
    d->rows = hog_malloc(batch * sizeof(hog_row));
    if (!d->x || !d->w || !d->bias || !d->s || !d->dw || !d->y || !d->w0 || !d->rows) {
        hog_dense_free(d);
        return NULL;
    }
    /* Touched here, by the worker that will use them: first touch places
     * the pages on that worker's NUMA node. */
    memset(d->x, 0, (size_t)batch * d->ld * sizeof(float));
    memset(d->w, 0, wbytes);
    memset(d->dw, 0, wbytes);
    memset(d->s, 0, (size_t)batch * outputs * sizeof(float));
    return d;
}

uint64_t hog_dense_bytes(uint64_t dim, uint32_t outputs, uint32_t batch)
{
    uint64_t ld = (dim + ROW_ALIGN_FLOATS - 1) / ROW_ALIGN_FLOATS * ROW_ALIGN_FLOATS;
    return sizeof(float) * ((uint64_t)batch * ld + 2 * dim * outputs + (uint64_t)batch * outputs + outputs + batch) +
           (uint64_t)batch * sizeof(hog_row) + sizeof(hog_dense);
}

typedef struct create_job {
    uint64_t dim;
    uint32_t outputs, batch;
    hog_dense **out;
} create_job;

static void create_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    create_job *job = arg;
    job->out[ith] = hog_dense_new(job->dim, job->outputs, job->batch);
}

int hog_dense_create_all(hog_pool *pool, uint64_t dim, uint32_t outputs, uint32_t batch, hog_dense **out)
{
    unsigned nth = hog_pool_threads(pool);
    create_job job = {dim, outputs, batch, out};
    hog_dense_blas_init();
    hog_pool_run(pool, create_worker, &job);
    for (unsigned i = 0; i < nth; i++)
        if (!out[i]) {
            for (unsigned k = 0; k < nth; k++) {
                hog_dense_free(out[k]);
                out[k] = NULL;
            }
            return -ENOMEM;
        }
    return 0;
}

/* ===================================================================== *
 *  Scores
 * ===================================================================== */
void hog_dense_snapshot(hog_dense *d, const hog_model *m)
{
    if (d->published)
        d->published0 = atomic_load_explicit(d->published, memory_order_relaxed);
    size_t n = (size_t)d->dim * d->outputs;
    for (size_t t = 0; t < n; t++)
        d->w[t] = hog_w_load(&m->w[t]);
    for (uint32_t k = 0; k < d->outputs; k++)
        d->bias[k] = hog_w_load(&m->bias[k]);
}

/* Asks for a row's indices and values ahead of use: rows come in shuffled
 * order from a data set far larger than the caches, so without this the
 * scatter below waits on memory for every line of every row. */
static void prefetch_row(const hog_row *r)
{
    const char *ix = (const char *)r->index, *v = (const char *)r->value;
    size_t bytes = (size_t)r->nnz * sizeof(float);
    for (size_t o = 0; o < bytes; o += HOG_CACHELINE) {
        __builtin_prefetch(ix + o);
        __builtin_prefetch(v + o);
    }
}

/* Writes rows[0..n) into X densely; indices at or beyond dim (a test set
 * wider than the model) are dropped, as hog_model_scores drops them. */
static void densify(hog_dense *d, const hog_row *rows, uint32_t n)
{
    if (n > 0)
        prefetch_row(&rows[0]);
    for (uint32_t i = 0; i < n; i++) {
        if (i + 1 < n)
            prefetch_row(&rows[i + 1]);
        float *xi = d->x + (size_t)i * d->ld;
        memset(xi, 0, d->dim * sizeof(float));
        const hog_row *r = &rows[i];
        const uint32_t *ix = r->index;
        const float *v = r->value;
        uint32_t nnz = r->nnz;
        /* Indices increase: the in-range ones are a prefix, all of them
         * unless the last is out of range. */
        while (nnz > 0 && ix[nnz - 1] >= d->dim)
            nnz--;
        for (uint32_t t = 0; t < nnz; t++)
            xi[ix[t]] = v[t];
    }
}

/* S = X W + 1 b^T over the first n rows of X, with the snapshot. */
static void scores(hog_dense *d, uint32_t n)
{
    const uint32_t K = d->outputs;
    for (uint32_t i = 0; i < n; i++)
        memcpy(d->s + (size_t)i * K, d->bias, K * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)K, (int)d->dim, 1.0f, d->x,
                (int)d->ld, d->w, (int)K, 1.0f, d->s, (int)K);
}

const float *hog_dense_scores(hog_dense *d, const hog_row *rows, uint32_t n)
{
    densify(d, rows, n);
    scores(d, n);
    return d->s;
}

/* ===================================================================== *
 *  Training
 * ===================================================================== */
/* Replaces each score row of the batch by the loss's gradient with respect
 * to it, times the row's importance weight; returns the batch's weighted
 * summed loss (at the snapshot's weights). */
static double batch_gradient(hog_dense *d, hog_loss loss, uint32_t n)
{
    const uint32_t K = d->outputs;
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
        float *s = d->s + (size_t)i * K;
        const float wt = d->rows[i].weight;
        if (loss == HOG_LOSS_SOFTMAX) {
            uint32_t y = (uint32_t)d->y[i];
            float score_y = s[y];
            total += (double)wt * (double)(hog_softmax(s, K) - score_y);
            s[y] -= 1.0f;
            if (wt != 1.0f)
                for (uint32_t k = 0; k < K; k++)
                    s[k] *= wt;
        } else {
            float v;
            s[0] = wt * hog_loss_grad(loss, s[0], d->y[i], &v);
            total += (double)wt * (double)v;
        }
    }
    return total;
}

void hog_dense_share(hog_dense *d, atomic_uint *published, unsigned members)
{
    d->published = published;
    d->members = members;
}

/* The part of a batch's step this worker takes. Workers running side by
 * side each compute a batch gradient from nearly the same weights, and
 * every one of those gradients is dense: applied in full, k workers would
 * step k times as far as one, and past a few workers the model diverges
 * (Fashion-MNIST softmax on 16 cores: test logloss 2.4 against 0.48 on one).
 * So, as the sparse kernel does with its hot weights, each batch's step is
 * divided by the number of batches published since its snapshot was read,
 * its own included: 1/k when k workers run at once, the whole step when the
 * others are descheduled. Together they take one step of k batches. */
static float batch_share(hog_dense *d)
{
    if (!d->published)
        return 1.0f;
    unsigned now = atomic_fetch_add_explicit(d->published, 1, memory_order_relaxed);
    unsigned others = now - d->published0;
    d->published0 = now + 1; /* the update below is the next batch's snapshot */
    return 1.0f / (float)(1 + HOG_MIN(others, d->members - 1));
}

/* One mini-batch of the n rows in d->rows, targets in d->y. The snapshot
 * must be current: the segment takes one before its first batch, and each
 * batch leaves the values it reads and writes back as the next one's. */
/* Who is told of each row's scores before the step (hog_dense_seen_fn). */
typedef struct seen_to {
    hog_dense_seen_fn fn;
    void *ctx;
    float *s; /* outputs floats: the copy handed over */
} seen_to;

static double batch_step(hog_dense *d, hog_model *m, const hog_train_params *p, uint32_t n, float step,
                         const seen_to *seen)
{
    const uint32_t K = d->outputs;
    densify(d, d->rows, n);
    scores(d, n);
    if (seen->fn)
        for (uint32_t i = 0; i < n; i++) {
            memcpy(seen->s, d->s + (size_t)i * K, K * sizeof(float));
            seen->fn(seen->ctx, d->rows[i].label, d->w0[i], seen->s);
        }
    double loss = batch_gradient(d, m->info.loss, n);
    step *= batch_share(d);
    /* dW = X^T G: the rows of G are the score rows, now gradients. */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)d->dim, (int)K, (int)n, 1.0f, d->x,
                (int)d->ld, d->s, (int)K, 0.0f, d->dw, (int)K);
    /* The update reads each weight's current value, racing workers'
     * changes included, and the result doubles as the next batch's
     * snapshot: one pass over the model per batch instead of two. Weights
     * no row of the batch touches, without L2, are read and not written. */
    float shrink = fmaxf(0.0f, 1.0f - step * (float)p->l2 * (float)n);
    size_t nw = (size_t)d->dim * K;
    /* Locals, so the compiler need not reload them after every atomic
     * store; the loop is the one cost of a batch that does not shrink with
     * its size, so it is kept branch-free where it can be. */
    hog_weight *const mw = m->w;
    const float *const dw = d->dw;
    float *const snap = d->w;
    if (shrink < 1.0f) {
        for (size_t t = 0; t < nw; t++) {
            float w = hog_w_load(&mw[t]) * shrink - step * dw[t];
            hog_w_store(&mw[t], w);
            snap[t] = w;
        }
    } else {
        for (size_t t = 0; t < nw; t++) {
            float w = hog_w_load(&mw[t]);
            if (dw[t] != 0.0f) {
                w -= step * dw[t];
                hog_w_store(&mw[t], w);
            }
            snap[t] = w;
        }
    }
    for (uint32_t k = 0; k < K; k++) {
        float b = hog_w_load(&m->bias[k]);
        if (p->bias) {
            float g = 0;
            for (uint32_t i = 0; i < n; i++)
                g += d->s[(size_t)i * K + k];
            b -= step * g;
            hog_w_store(&m->bias[k], b);
        }
        d->bias[k] = b;
    }
    return loss;
}

void hog_dense_segment(hog_dense *d, hog_model *m, const hog_train_params *p, const hog_block *blk,
                       uint32_t start, const uint32_t *perm, uint32_t n, uint64_t first_row, float step,
                       float mid, const float *class_w, double *loss, uint64_t *examples, uint64_t *nnz,
                       hog_dense_seen_fn seen_fn, void *seen_ctx, float *seen_s)
{
    const seen_to seen = {seen_fn, seen_ctx, seen_s};
    const hog_loss kind = m->info.loss;
    uint32_t nb = 0;
    hog_dense_snapshot(d, m);
    for (uint32_t i = 0; i < n; i++) {
        if (p->holdout > 0 && hog_row_in_fold(first_row + perm[i], p->holdout, p->fold, p->seed))
            continue;
        uint32_t r = start + perm[i];
        const uint32_t *ptr = blk->ptr;
        hog_row row = {blk->index + ptr[r], blk->value + ptr[r], ptr[r + 1] - ptr[r], blk->label[r],
                       blk->weight ? blk->weight[r] : 1.0f};
        d->w0[nb] = row.weight;
        if (class_w)
            row.weight *= hog_class_weight_of(class_w, m, row.label, mid);
        float y;
        if (kind == HOG_LOSS_SOFTMAX)
            y = (float)hog_model_class_of(m, row.label);
        else if (kind == HOG_LOSS_SQUARED)
            y = row.label;
        else
            y = row.label > mid ? 1.0f : -1.0f;
        d->rows[nb] = row;
        d->y[nb++] = y;
        *nnz += row.nnz;
        if (nb == d->batch) {
            *loss += batch_step(d, m, p, nb, step, &seen);
            *examples += nb;
            nb = 0;
        }
    }
    if (nb) {
        *loss += batch_step(d, m, p, nb, step, &seen);
        *examples += nb;
    }
}
