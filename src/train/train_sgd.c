/* train_sgd.c: the HOGWILD! trainer: workers run SGD over shuffled row segments, all writing one shared model without locks. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "train.h"

/* Rows are handed out in segments of this many rows of one block: large
 * enough that claiming one (an atomic add) and publishing the private copies
 * of the hot weights (see hot_begin) cost little per row, small enough that
 * the copies are not too stale and the segments balance the workers. */
#define SEGMENT_ROWS 1024u
#define MAX_CLASSES 65536u

struct hog_trainer {
    hog_train_params p;
    hog_pool *pool;
};

int hog_trainer_create(const hog_train_params *p, hog_trainer **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    const char *field;
    if (hog_train_params_check(p, &field) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "invalid training parameter: %s", field);
    hog_trainer *t = hog_calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->p = *p;
    int rc = hog_pool_create(p->threads, p->bind, &t->pool, err, err_len);
    if (rc < 0) {
        hog_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void hog_trainer_free(hog_trainer *t)
{
    if (!t)
        return;
    hog_pool_free(t->pool);
    hog_free(t);
}

unsigned hog_trainer_threads(const hog_trainer *t)
{
    return hog_pool_threads(t->pool);
}

/* ===================================================================== *
 *  Labels
 * ===================================================================== */
/* Adds y to the ascending set c[0..*n) unless it is there.
 * Returns 0, or HOG_ELABEL when the set is full. */
static int class_insert(double *c, uint32_t *n, double y)
{
    uint32_t lo = 0, hi = *n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *n && c[lo] == y)
        return 0;
    if (*n == MAX_CLASSES)
        return HOG_ELABEL;
    memmove(c + lo + 1, c + lo, (*n - lo) * sizeof(double));
    c[lo] = y;
    (*n)++;
    return 0;
}

/* What training needs to know of its data before the first step, in one
 * pass (out of core, one read of the file): the distinct label values of
 * every row, ascending (not for squared loss), and for each feature the
 * number of training rows (holdout excluded) that touch it. On success
 * *classes, *nclasses, *deg and *rows are set; the caller frees the arrays.
 * Errors: HOG_ELABEL (with a message), -ENOMEM. */
static int scan_training_set(const hog_dataset *ds, const hog_train_params *p, uint64_t dim, int ooc,
                             double **classes, uint32_t *nclasses, uint32_t **deg, uint64_t *rows,
                             char *err, size_t err_len)
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
        if (ooc)
            hog_dataset_willneed(ds, b + 1);
        for (uint32_t r = 0; r < blk->rows && rc == 0; r++) {
            uint64_t i = (uint64_t)b * ds->info.rows_per_block + r;
            double y = blk->label[r];
            if (want_classes && p->loss == HOG_LOSS_SOFTMAX && y != floor(y))
                rc = hog_fail(HOG_ELABEL, err, err_len,
                              "row %llu: label %g is not an integer class (softmax needs class labels)",
                              (unsigned long long)i, y);
            else if (want_classes && class_insert(c, &n, y) < 0)
                rc = hog_fail(HOG_ELABEL, err, err_len, "more than %u distinct labels", MAX_CLASSES);
            if (rc < 0 || (p->holdout > 0 && hog_row_held_out(i, p->holdout, p->seed)))
                continue;
            kept++;
            for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                d[blk->index[k]]++;
        }
        if (ooc)
            hog_dataset_drop(ds, b, 1);
    }
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

/* ===================================================================== *
 *  One epoch
 * ===================================================================== */

typedef struct worker_state {
    _Alignas(HOG_CACHELINE) double loss;
    uint64_t examples;
    uint64_t nnz;
    float *scratch;   /* 6 * outputs floats: scores, gradient, local bias, its start,
                         the bias's AdaGrad sum and its start */
    uint32_t *perm;   /* SEGMENT_ROWS */
    hog_weight *hot;  /* nhot * outputs: this worker's copy of the hot weights */
    float *hot0;      /* their values at the start of the segment */
    hog_dense *dense; /* the dense path's buffers, or NULL on the sparse path */
    hog_weight *w;    /* the weights this worker reads and writes: the model's, or its replica's */
    hog_weight *bias; /* the same for the biases */
    unsigned replica; /* which replica (0 when the model is shared) */
    hog_weight *hotacc; /* adagrad: the same for the hot weights' squared-gradient sums */
    float *hotacc0;
    float *shrink;    /* the plain loop's L2 shrink per feature (see plain_shrink), or NULL */
    float shrink_reg; /* the reg it was computed for, if shrink_ok */
    int shrink_ok;
    double norm_t;    /* normalized: examples this worker has seen, all epochs */
    double norm_n;    /* normalized: their sum of |x / xmax|^2 (NG's N) */
} worker_state;

/*
 * Model replicas (DimmWitted's design space, --replicas). With `machine`
 * every worker writes the model itself. With `node` the workers of a NUMA
 * node share a replica in that node's memory, and a background thread keeps
 * averaging the replicas into one another while the epoch runs; with `core`
 * each worker has a replica of its own, written by it alone. Either way,
 * after every epoch the replicas are averaged into the model (which is what
 * is evaluated and saved) and start the next epoch from it. Per-worker
 * copies of hot features would divide a change among workers that never
 * wrote the same weights, so they are kept only among the workers of one
 * replica: none with `core`.
 */
typedef struct replica_set {
    unsigned n;            /* replicas; 0: the model is shared (machine) */
    hog_weight **w;        /* n arrays of dim * outputs weights */
    hog_weight **bias;     /* n arrays of outputs biases */
    unsigned *members;     /* n: workers writing each replica */
    hog_overlap *clocks;   /* n, one per cache line: segments in flight on each replica */
    uint64_t nweights;     /* dim * outputs */
    uint32_t outputs;
    pthread_t thread;      /* node replicas, n > 1: the averaging thread of the running epoch */
    int running;
    atomic_int stop;
    atomic_ullong passes;  /* background averaging passes completed (for the log) */
} replica_set;

/* Polyak-Ruppert averaging: sums of the shared weights sampled at evenly
 * spaced points of each averaged epoch. */
typedef struct avg_state {
    double *sum;          /* dim * outputs weights, then outputs biases */
    uint64_t count;       /* samples summed */
    unsigned from_epoch;  /* 0-based: the first epoch averaged */
    pthread_mutex_t lock; /* one sample at a time (a few per epoch, never per example) */
} avg_state;

#define AVERAGE_POINTS 64u

typedef struct epoch_job {
    const hog_train_params *p;
    hog_model *m;
    const hog_dataset *ds;
    const float *l2_scale;    /* per feature: rows / rows touching it, for HOGWILD!'s sparse L2 */
    const int16_t *slot;      /* per feature: its slot in each worker's private copies, or -1 */
    const uint32_t *hot_ids;  /* the features kept in private copies, by slot, hot first */
    uint32_t nlocal;          /* features kept in private copies */
    uint32_t nhot;            /* the first nhot of them are hot */
    unsigned nth;             /* workers */
    const uint32_t *units;    /* segment ids in this epoch's order */
    uint32_t nunits;
    uint32_t segs_per_block;
    uint64_t row0;            /* the row number of ds's first row (a window of a streamed epoch) */
    double frac0, frac1;      /* the part of the epoch these units are: 0 and 1, or a window's */
    int window;               /* 1: a window of the streamed first epoch (see stream_epoch) */
    int ooc;                  /* out of core: read blocks ahead, drop them when done */
    uint32_t ahead;           /* out of core: how many segments ahead to start reading */
    atomic_uint *left;        /* out of core: segments of each block not yet done */
    unsigned epoch;           /* 0-based */
    float mid;                /* binary: labels above this are positive */
    float tau;                /* quantile loss */
    unsigned opt;             /* OPT_* flags: which update the segments run */
    hog_weight *acc;          /* adagrad: per weight, the sum of squared gradients */
    hog_weight *bias_acc;     /* adagrad: the same for the biases */
    hog_weight *xmax;         /* normalized: per feature, the largest |x| seen */
    hog_weight *l1s;          /* l1: per weight, the penalty owed and applied (u, q) */
    avg_state *avg;           /* averaging, or NULL */
    const replica_set *rep;   /* replicas (rep->n == 0: none) */
    worker_state *ws;
    double t0;                /* when training started, for progress reports */
    double done_seconds;      /* training seconds before this epoch */
    hog_epoch_stats *stats;   /* the epoch's stats so far, for progress reports */
    _Alignas(HOG_CACHELINE) atomic_uint next;
    hog_overlap *clock;       /* segments in flight on the shared model (see replica_set's clocks) */
} epoch_job;

static float unit_step(const epoch_job *job, uint32_t pos)
{
    const hog_train_params *p = job->p;
    if (p->schedule == HOG_SCHEDULE_INVSCALING) {
        double t = job->epoch + job->frac0 + (job->frac1 - job->frac0) * pos / job->nunits;
        return (float)(p->step / pow(1.0 + t, p->power));
    }
    /* adagrad's decay is per coordinate, in the update itself */
    if (p->schedule == HOG_SCHEDULE_CONSTANT || p->schedule == HOG_SCHEDULE_ADAGRAD)
        return (float)p->step;
    return (float)(p->step * pow(p->decay, job->epoch));
}

/* The K weights of feature j: the worker's private copy if j is hot, else
 * the shared model. */
static inline hog_weight *weights_of(const epoch_job *job, const worker_state *ws, uint32_t j)
{
    const uint32_t K = job->m->outputs;
    int32_t h = job->slot[j];
    return h >= 0 ? ws->hot + (size_t)h * K : ws->w + (size_t)j * K;
}

/* The same for the AdaGrad sums of feature j. */
static inline hog_weight *acc_of(const epoch_job *job, const worker_state *ws, uint32_t j)
{
    const uint32_t K = job->m->outputs;
    int32_t h = job->slot[j];
    return h >= 0 ? ws->hotacc + (size_t)h * K : job->acc + (size_t)j * K;
}

/*
 * Optimisers and regularisers, and how they combine.
 *
 * The per-non-zero loop is the whole cost of training, so each combination
 * of the options below gets its own copy of the loop (see ROWS_FN), chosen
 * once per segment; the plain one (OPT 0: constant, decay or invscaling
 * steps with the sparse L2) is the loop as it was before any of them, with
 * no added test per non-zero. For the coordinate j of an example touching
 * it, with g = dloss/dmargin, the L2 scale c_j = rows / rows touching j
 * (HOGWILD!'s sparse penalty, see feature_table) and eta the schedule's step:
 *
 *   gradient   G_j = g x_j + l2 c_j w_j
 *   rate       r_j = eta                                     plain
 *                    eta / sqrt(A_j),  A_j += G_j^2           adagrad
 *                    eta (t/N) / s_j^2                        normalized
 *                    eta sqrt(t/N) / (s_j sqrt(A_j))          adagrad + normalized
 *   step       w_j <- w_j (1 - r_j l2 c_j) - r_j g x_j       (adagrad: w_j - r_j G_j,
 *                                                             a step of at most eta)
 *   L1         u_j += r_j l1 c_j                              (the penalty owed)
 *              w_j <- max(0, w_j - (u_j + q_j)) if w_j > 0,
 *                     min(0, w_j + (u_j - q_j)) if w_j < 0
 *              q_j += the change                              (the penalty applied)
 *
 * s_j is the largest |x_j| seen so far and N the running sum over examples
 * of sum_j (x_j / s_j)^2 (t examples): the NG algorithm of Ross, Mineiro
 * and Langford (2013), which makes the model invariant to the scale of each
 * feature; when s_j grows, w_j is scaled by (s_j_old / s_j)^2 as NG does.
 * VW's default is adagrad + normalized. s_j, the AdaGrad sums A_j and the
 * weights are all shared without locks (relaxed loads and stores); t and N
 * are counted per worker, an estimate of the same ratio.
 *
 * L1 is the truncated gradient (Langford, Li and Zhang, 2009) with the
 * cumulative penalty of Tsuruoka, Tsujii and Ananiadou (2009): applied like
 * the L2 to the coordinates an example touches and scaled by c_j, so over
 * an epoch each weight is owed the pull towards zero that the full
 * objective's l1 asks for; a weight whose step would carry it across zero
 * stops at exactly zero. Plain truncation (clip by r_j l1 c_j at each
 * touch) leaves most weights that belong at zero jittering around it, one
 * noisy gradient away; the cumulative form banks the penalty a weight
 * sitting at zero could not take (u_j - |q_j| grows) and spends it on the
 * next kicks, so those weights stay exactly zero - measured on the test
 * data, about the optimum's non-zero count instead of nearly all weights.
 * Chosen over FTRL-proximal because its state (u_j, q_j, side by side in
 * one array) is only read and written with the weight it belongs to, so it
 * works unchanged with every schedule above (FTRL is a schedule of its own,
 * AdaGrad-like, and computes each weight from its state on every read), with
 * the workers' private copies of hot weights and with averaging. With l2 as
 * well it is the elastic net (the shrink, then the clip: the proximal step
 * of both penalties). u_j and q_j of hot weights are shared, not copied:
 * racy, as HOGWILD! allows.
 */
#define OPT_ADAGRAD 1u
#define OPT_NORMALIZED 2u
#define OPT_L1 4u
#define OPT_COUNT 8u
/* The per-example functions below take opt as a constant and must be
 * inlined into each copy of the row loop for the copies to specialise. */
#define KERNEL static inline __attribute__((always_inline))
#define ADAGRAD_EPS 1e-12f

/* The L2 shrink factor max(0, 1 - rc), a compare and not a call: without
 * -ffinite-math-only GCC calls libm for fmaxf. Same result: 1 - rc is never
 * -0, and a NaN gives 0 both ways. */
KERNEL float l2_shrink(float rc)
{
    float s = 1.0f - rc;
    return s > 0.0f ? s : 0.0f;
}

/* The cumulative L1 clip of one weight wv; uq points at its (u, q). */
KERNEL float clip_l1(float wv, hog_weight *uq, float owe)
{
    float u = hog_w_load(&uq[0]) + owe, q = hog_w_load(&uq[1]);
    float z = wv;
    if (wv > 0.0f)
        wv = fmaxf(0.0f, wv - (u + q));
    else if (wv < 0.0f)
        wv = fminf(0.0f, wv + (u - q));
    hog_w_store(&uq[0], u);
    hog_w_store(&uq[1], q + (wv - z));
    return wv;
}

/* normalized: brings each feature's largest |x| up to date (rescaling its
 * weights as NG does when it grows) and returns sum (x / s)^2 of the row. */
KERNEL float normalize_row(const epoch_job *job, const worker_state *ws, const hog_row *row)
{
    const uint32_t K = job->m->outputs;
    float nsum = 0.0f;
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = row->index[i];
        float ax = fabsf(row->value[i]);
        float s = hog_w_load(&job->xmax[j]);
        if (ax > s) {
            if (s > 0.0f) {
                float shrink = (s / ax) * (s / ax);
                hog_weight *w = weights_of(job, ws, j);
                for (uint32_t k = 0; k < K; k++)
                    hog_w_store(&w[k], hog_w_load(&w[k]) * shrink);
            }
            hog_w_store(&job->xmax[j], ax);
            s = ax;
        }
        if (s > 0.0f)
            nsum += (row->value[i] / s) * (row->value[i] / s);
    }
    return nsum;
}

/* The rate multiplier of the normalized update for this example (t/N, or
 * its square root with adagrad), after counting the example in. */
KERNEL float normalized_rate(const epoch_job *job, worker_state *ws, float nsum, const unsigned opt)
{
    ws->norm_t += 1.0;
    ws->norm_n += (double)nsum + (job->p->bias ? 1.0 : 0.0);
    double ratio = ws->norm_n > 0 ? ws->norm_t / ws->norm_n : 1.0;
    return (float)((opt & OPT_ADAGRAD) ? sqrt(ratio) : ratio);
}

/* One coordinate's update under opt (see the comment above): w is the
 * weight, a its AdaGrad sum (adagrad only), gx = g x_j, s = s_j. */
KERNEL void update_coord(hog_weight *w, hog_weight *a, hog_weight *uq, float gx, float rate, float l2c,
                                float l1c, float s, const unsigned opt)
{
    float wv = hog_w_load(w);
    float r = rate;
    if (opt & OPT_ADAGRAD) {
        float grad = gx + l2c * wv;
        float sum = hog_w_load(a) + grad * grad;
        hog_w_store(a, sum);
        r /= sqrtf(sum + ADAGRAD_EPS);
        if (opt & OPT_NORMALIZED)
            r /= s;
        wv -= r * grad;
    } else {
        if (opt & OPT_NORMALIZED)
            r /= s * s;
        wv = wv * l2_shrink(r * l2c) - r * gx;
    }
    if (opt & OPT_L1)
        wv = clip_l1(wv, uq, r * l1c);
    hog_w_store(w, wv);
}

/* The bias's update: no penalty, x = 1 (s = 1). */
KERNEL void update_bias(float *bias, float *bacc, float g, float rate, const unsigned opt)
{
    float r = rate;
    if (opt & OPT_ADAGRAD) {
        *bacc += g * g;
        r /= sqrtf(*bacc + ADAGRAD_EPS);
    }
    *bias -= r * g;
}

/* One example of a binary or regression loss. Returns the example's loss. */
KERNEL float update_binary(const epoch_job *job, worker_state *ws, const hog_row *row,
                                  float y, float step, float reg, float *bias, float *bacc,
                                  const unsigned opt)
{
    const uint32_t *idx = row->index;
    const float *val = row->value;
    float nsum = 0.0f;
    if (opt & OPT_NORMALIZED)
        nsum = normalize_row(job, ws, row);
    float margin = *bias;
    for (uint32_t i = 0; i < row->nnz; i++)
        margin += hog_w_load(weights_of(job, ws, idx[i])) * val[i];
    float loss;
    /* An importance weight counts the example that many times: it scales
     * the loss's gradient (so AdaGrad's sums see the weighted gradient too),
     * never the L2 or L1 penalty, which is per occurrence. */
    float gl = row->weight * hog_loss_grad_tau(job->m->info.loss, margin, y, job->tau, &loss);
    if (opt == 0) {
        /* The plain loop, as fast as it was before the options. */
        float sg = step * gl;
        if (reg > 0 || sg != 0)
            for (uint32_t i = 0; i < row->nnz; i++) {
                uint32_t j = idx[i];
                hog_weight *w = weights_of(job, ws, j);
                float shrink = l2_shrink(reg * job->l2_scale[j]);
                hog_w_store(w, hog_w_load(w) * shrink - sg * val[i]);
            }
        if (job->p->bias)
            *bias -= sg;
        return loss;
    }
    float rate = step;
    if (opt & OPT_NORMALIZED)
        rate *= normalized_rate(job, ws, nsum, opt);
    const float l2 = (float)job->p->l2, l1 = (float)job->p->l1;
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = idx[i];
        float c = job->l2_scale[j];
        float s = 1.0f;
        if (opt & OPT_NORMALIZED) {
            s = hog_w_load(&job->xmax[j]);
            if (s == 0.0f) /* only zeros seen: x_j = 0, nothing to learn */
                continue;
        }
        update_coord(weights_of(job, ws, j), (opt & OPT_ADAGRAD) ? acc_of(job, ws, j) : NULL,
                     (opt & OPT_L1) ? job->l1s + 2 * (size_t)j : NULL, gl * val[i], rate, l2 * c, l1 * c, s, opt);
    }
    if (job->p->bias)
        update_bias(bias, bacc, gl, rate, opt);
    return loss;
}

/* One example of softmax regression over K classes. */
KERNEL float update_softmax(const epoch_job *job, worker_state *ws, const hog_row *row,
                                   int y, float step, float reg, float *bias, float *bacc, float *s, float *g,
                                   const unsigned opt)
{
    const uint32_t K = job->m->outputs;
    float nsum = 0.0f;
    if (opt & OPT_NORMALIZED)
        nsum = normalize_row(job, ws, row);
    for (uint32_t k = 0; k < K; k++)
        s[k] = bias[k];
    for (uint32_t i = 0; i < row->nnz; i++) {
        const hog_weight *wj = weights_of(job, ws, row->index[i]);
        float x = row->value[i];
        for (uint32_t k = 0; k < K; k++)
            s[k] += hog_w_load(&wj[k]) * x;
    }
    float score_y = s[y];
    float loss = hog_softmax(s, K) - score_y;
    if (opt == 0) {
        for (uint32_t k = 0; k < K; k++) {
            g[k] = step * row->weight * (s[k] - (k == (uint32_t)y ? 1.0f : 0.0f));
            if (job->p->bias)
                bias[k] -= g[k];
        }
        for (uint32_t i = 0; i < row->nnz; i++) {
            uint32_t j = row->index[i];
            hog_weight *wj = weights_of(job, ws, j);
            float x = row->value[i];
            float shrink = l2_shrink(reg * job->l2_scale[j]);
            for (uint32_t k = 0; k < K; k++)
                hog_w_store(&wj[k], hog_w_load(&wj[k]) * shrink - g[k] * x);
        }
        return loss;
    }
    float rate = step;
    if (opt & OPT_NORMALIZED)
        rate *= normalized_rate(job, ws, nsum, opt);
    for (uint32_t k = 0; k < K; k++) {
        g[k] = row->weight * (s[k] - (k == (uint32_t)y ? 1.0f : 0.0f));
        if (job->p->bias)
            update_bias(&bias[k], &bacc[k], g[k], rate, opt);
    }
    const float l2 = (float)job->p->l2, l1 = (float)job->p->l1;
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = row->index[i];
        float c = job->l2_scale[j], sj = 1.0f;
        if (opt & OPT_NORMALIZED) {
            sj = hog_w_load(&job->xmax[j]);
            if (sj == 0.0f)
                continue;
        }
        hog_weight *wj = weights_of(job, ws, j);
        hog_weight *aj = (opt & OPT_ADAGRAD) ? acc_of(job, ws, j) : NULL;
        hog_weight *uq = (opt & OPT_L1) ? job->l1s + 2 * (size_t)j * K : NULL;
        float x = row->value[i];
        for (uint32_t k = 0; k < K; k++)
            update_coord(&wj[k], aj ? &aj[k] : NULL, uq ? &uq[2 * k] : NULL, g[k] * x, rate, l2 * c, l1 * c, sj, opt);
    }
    return loss;
}

/*
 * Hot features and the intercept.
 *
 * HOGWILD! assumes that two examples rarely touch the same weight. Real
 * sparse data has a head of features (frequent words, the intercept) that
 * nearly every example touches; if every worker wrote those to the shared
 * model, their cache lines would bounce between cores on every example and
 * more threads would run slower than one. So each worker keeps a private
 * copy of the hot weights: it reads them from the shared model before its
 * first segment (hot_begin), steps its copy through the segment's examples,
 * and at the end adds its change to the shared model and takes the result
 * as the next segment's start (hot_sync) - a delayed update whose delay is
 * one segment, within HOGWILD!'s bounded-staleness analysis. Workers running
 * side by side correct the same hot weights towards the same targets, so
 * the changes are averaged over the segments that ran beside it (see
 * hog_overlap in train.h), not summed; a hot weight's change is a segment's
 * worth of steps, too much to lose to a racing writer, so it is added with
 * a compare-and-swap (hog_w_add), once per weight per segment. Warm
 * features, touched by 0.1% to 1% of rows, get a step or two per segment:
 * they are kept private only to keep their cache lines still, and their
 * changes are summed with HOGWILD!'s plain racy update. Cold weights
 * are read and written in the shared model directly. With one worker there
 * are no hot features: nothing to contend with. AdaGrad's sums of squared
 * gradients get the same private copies, but their changes are always
 * summed: each worker's gradients are gradients the model has seen.
 */
static void hot_begin(const epoch_job *job, worker_state *ws)
{
    const uint32_t K = job->m->outputs;
    for (uint32_t h = 0; h < job->nlocal; h++) {
        const hog_weight *w = ws->w + (size_t)job->hot_ids[h] * K;
        for (uint32_t k = 0; k < K; k++) {
            float v = hog_w_load(&w[k]);
            hog_w_store(&ws->hot[h * K + k], v);
            ws->hot0[h * K + k] = v;
        }
    }
    if (job->acc)
        for (uint32_t h = 0; h < job->nlocal; h++) {
            const hog_weight *a = job->acc + (size_t)job->hot_ids[h] * K;
            for (uint32_t k = 0; k < K; k++) {
                float v = hog_w_load(&a[k]);
                hog_w_store(&ws->hotacc[h * K + k], v);
                ws->hotacc0[h * K + k] = v;
            }
        }
}

/* One private copy at the end of a segment: publishes its change to the
 * shared weight (a hot one's scaled by share, with a compare-and-swap; a
 * warm one's, a step or two, with HOGWILD!'s racy update) and starts the
 * next segment from what the shared weight now holds. */
static inline void sync_weight(hog_weight *shared, hog_weight *mine, float *mine0, int hot, float share)
{
    float delta = hog_w_load(mine) - *mine0, v;
    if (delta == 0.0f)
        v = hog_w_load(shared);
    else if (hot)
        v = hog_w_add(shared, share * delta);
    else {
        v = hog_w_load(shared) + delta;
        hog_w_store(shared, v);
    }
    hog_w_store(mine, v);
    *mine0 = v;
}

/* The end of one segment and the hot_begin of the next in one pass, so that
 * each shared cache line is fetched once per segment, not twice. The
 * AdaGrad sums' changes are summed, not shared out. */
static void hot_sync(const epoch_job *job, worker_state *ws, float share)
{
    const uint32_t K = job->m->outputs;
    for (uint32_t h = 0; h < job->nlocal; h++) {
        hog_weight *w = ws->w + (size_t)job->hot_ids[h] * K;
        for (uint32_t k = 0; k < K; k++)
            sync_weight(&w[k], &ws->hot[h * K + k], &ws->hot0[h * K + k], h < job->nhot, share);
    }
    if (job->acc)
        for (uint32_t h = 0; h < job->nlocal; h++) {
            hog_weight *a = job->acc + (size_t)job->hot_ids[h] * K;
            for (uint32_t k = 0; k < K; k++)
                sync_weight(&a[k], &ws->hotacc[h * K + k], &ws->hotacc0[h * K + k], h < job->nhot, 1.0f);
        }
}

/* A segment's rows, in the order perm gives, and what they add up to. */
typedef struct seg_rows {
    const hog_block *blk;
    uint32_t start, n;
    uint64_t first;      /* the row number of the segment's first row */
    float step, reg;
    float *s, *g, *bias, *bacc;
    double loss;
    uint64_t examples, nnz;
} seg_rows;

KERNEL void rows_run(const epoch_job *job, worker_state *ws, seg_rows *c,
                                                           const unsigned opt)
{
    const hog_train_params *p = job->p;
    const hog_model *m = job->m;
    const hog_block *blk = c->blk;
    const int regression = hog_loss_is_regression(m->info.loss);
    /* In locals: a store through a weight pointer may not alias them. */
    const uint32_t start = c->start, n = c->n;
    const uint64_t first = c->first;
    const float step = c->step, reg = c->reg;
    float *const s = c->s, *const g = c->g, *const bias = c->bias, *const bacc = c->bacc;
    double loss = 0;
    uint64_t examples = 0, nnz = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = start + ws->perm[i];
        if (p->holdout > 0 && hog_row_held_out(first + ws->perm[i], p->holdout, p->seed))
            continue;
        const uint32_t *ptr = blk->ptr;
        hog_row row = {blk->index + ptr[r], blk->value + ptr[r], ptr[r + 1] - ptr[r], blk->label[r],
                       blk->weight ? blk->weight[r] : 1.0f};
        float l;
        if (m->info.loss == HOG_LOSS_SOFTMAX) {
            int y = hog_model_class_of(m, row.label);
            l = update_softmax(job, ws, &row, y, step, reg, bias, bacc, s, g, opt);
        } else {
            float y = regression ? row.label : (row.label > job->mid ? 1.0f : -1.0f);
            l = update_binary(job, ws, &row, y, step, reg, bias, bacc, opt);
        }
        loss += (double)row.weight * (double)l;
        examples++;
        nnz += row.nnz;
    }
    c->loss = loss;
    c->examples = examples;
    c->nnz = nnz;
}

/*
 * The plain loop of binary and regression losses, tuned.
 *
 * With no option set and one output this loop is all the trainer does,
 * so it gets its own code (rows_0 picks it once per segment). What it does
 * per example is exactly update_binary's opt == 0 branch; what differs is
 * how the compiler and the caches see it:
 *  - Everything the loop reads that is not a weight lives in a local. The
 *    weights are _Atomic: GCC orders other memory around each access, so
 *    through the job and worker pointers it reloaded job->m, m->w,
 *    m->outputs, job->feat and the step on every non-zero. Locals cannot be
 *    reached through a weight pointer; one output is a constant, not a
 *    multiply.
 *  - Two copies, chosen by nlocal: with no private copies (one thread, or
 *    no feature hot enough) a weight is w[j], with no test of slot[j].
 *  - The dot product keeps four partial sums: a single chain of adds waits
 *    4 cycles per non-zero for the previous add. This reassociates the sum,
 *    so margins differ from update_binary's in the last bits; the order is
 *    fixed by the row, so one thread still replays bit for bit. Everything
 *    else (the loss, the L2 shrink, the step) is computed with the same
 *    operations in the same order as before.
 *  - The L2 shrink max(0, 1 - reg c_j) of every feature is computed once
 *    per epoch into a packed per-worker table (see plain_shrink): the update
 *    then gathers one float per non-zero from a table half the size of the
 *    feature table, and skips a multiply, a subtract and a compare. It is
 *    the same float expression, so the same bits. Under the invscaling
 *    schedule reg changes with every segment and the shrink is computed in
 *    the loop (l2_shrink: a compare, not a call to fmaxf).
 *  - The rows of a segment are visited in shuffled order, so the hardware
 *    prefetcher cannot guess where the next row's indices and values are:
 *    they are prefetched PLAIN_AHEAD rows ahead. (Prefetching the next
 *    row's weights as well was measured: no gain, so it is not done.)
 */
#define PLAIN_AHEAD 2u

/* Asks for the cache lines of n 4-byte elements at a. */
KERNEL void prefetch_span(const void *a, uint32_t n)
{
    uintptr_t q = (uintptr_t)a & ~(uintptr_t)(HOG_CACHELINE - 1), e = (uintptr_t)a + (uintptr_t)n * 4;
    for (; q < e; q += HOG_CACHELINE)
        __builtin_prefetch((const void *)q, 0, 3);
}

/* The weight of feature j: the private copy if local and j has one. The
 * slot table is two bytes a feature, apart from the L2 scales, so that the
 * lookup on every non-zero stays in the caches: with both in one 8-byte
 * record the two-thread loop ran 12% slower (bench-rcv1.sh). */
KERNEL hog_weight *plain_w(hog_weight *w, hog_weight *hot, const int16_t *slot, uint32_t j, const int local)
{
    if (local) {
        int32_t h = slot[j];
        return h >= 0 ? hot + h : w + j;
    }
    return w + j;
}

/* The worker's table of l2_shrink(reg * c_j) for every feature, brought up
 * to date for reg, or NULL where the loop computes it itself: under
 * invscaling (reg changes with every segment, and recomputing dim entries
 * per segment costs more than it saves on large models), in a streamed
 * first epoch (c_j changes with every window), on models of more
 * than SHRINK_MAX_FEATURES features (a table per worker, outside the memory
 * limit, whose gathers miss the caches anyway), or when the table cannot be
 * allocated. Made by the worker itself, so on its NUMA node. */
#define SHRINK_MAX_FEATURES (1u << 24)

static const float *plain_shrink(const epoch_job *job, worker_state *ws, float reg)
{
    const uint64_t dim = job->m->dim;
    if (job->p->schedule == HOG_SCHEDULE_INVSCALING || job->window || dim > SHRINK_MAX_FEATURES)
        return NULL;
    if (!ws->shrink && !(ws->shrink = hog_malloc(dim * sizeof(float))))
        return NULL;
    if (ws->shrink_ok && ws->shrink_reg == reg)
        return ws->shrink;
    const float *l2_scale = job->l2_scale;
    for (uint64_t j = 0; j < dim; j++)
        ws->shrink[j] = l2_shrink(reg * l2_scale[j]);
    ws->shrink_reg = reg;
    ws->shrink_ok = 1;
    return ws->shrink;
}

/* The plain loop's unweighted logistic loss is log1pf(e) + max(-z, 0)
 * (hog_logistic_slope); it sums the log1pf(e) terms as the logarithm of a
 * product, one log per LOGISTIC_PRODUCT_ROWS rows instead of a log1pf per
 * row: each factor lies in [1, 2], so the product cannot overflow a double,
 * and the sum is as exact as summing the log1pf values. */
#define LOGISTIC_PRODUCT_ROWS 512u

KERNEL void rows_plain(const epoch_job *job, worker_state *ws, seg_rows *c, const int local)
{
    const hog_train_params *p = job->p;
    const hog_block *blk = c->blk;
    const uint32_t *const ptr = blk->ptr, *const index = blk->index, *const perm = ws->perm;
    const float *const value = blk->value, *const label = blk->label, *const rweight = blk->weight;
    const int16_t *const slot = job->slot;
    const float *const l2_scale = job->l2_scale;
    hog_weight *const w = ws->w, *const hot = ws->hot; /* the model, or this worker's replica */
    const hog_loss lossf = job->m->info.loss;
    const int regression = hog_loss_is_regression(lossf), has_bias = p->bias;
    const double holdout = p->holdout;
    const uint64_t seed = p->seed, first = c->first;
    const float mid = job->mid, tau = job->tau, step = c->step, reg = c->reg;
    const uint32_t start = c->start, n = c->n;
    const float *const shrink = plain_shrink(job, ws, reg);
    float bias = c->bias[0];
    double loss = 0;
    /* Unweighted logistic loss: see LOGISTIC_PRODUCT_ROWS. */
    const int logistic = lossf == HOG_LOSS_LOGISTIC && !rweight;
    double prod = 1.0;
    uint32_t nprod = 0;
    uint64_t examples = 0, nnz = 0;
    for (uint32_t i = 0; i < PLAIN_AHEAD && i < n; i++) {
        uint32_t q = start + perm[i];
        prefetch_span(index + ptr[q], ptr[q + 1] - ptr[q]);
        prefetch_span(value + ptr[q], ptr[q + 1] - ptr[q]);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (i + PLAIN_AHEAD < n) {
            uint32_t q = start + perm[i + PLAIN_AHEAD];
            prefetch_span(index + ptr[q], ptr[q + 1] - ptr[q]);
            prefetch_span(value + ptr[q], ptr[q + 1] - ptr[q]);
        }
        if (holdout > 0 && hog_row_held_out(first + perm[i], holdout, seed))
            continue;
        const uint32_t r = start + perm[i], k = ptr[r + 1] - ptr[r];
        const uint32_t *const idx = index + ptr[r];
        const float *const val = value + ptr[r];
        /* Named scalars, not an array: GCC keeps an array of partial sums
         * in memory across the atomic loads. */
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        uint32_t t = 0;
        for (; t + 4 <= k; t += 4) {
            a0 += hog_w_load(plain_w(w, hot, slot, idx[t], local)) * val[t];
            a1 += hog_w_load(plain_w(w, hot, slot, idx[t + 1], local)) * val[t + 1];
            a2 += hog_w_load(plain_w(w, hot, slot, idx[t + 2], local)) * val[t + 2];
            a3 += hog_w_load(plain_w(w, hot, slot, idx[t + 3], local)) * val[t + 3];
        }
        for (; t < k; t++)
            a0 += hog_w_load(plain_w(w, hot, slot, idx[t], local)) * val[t];
        /* The bias joins last, so the sums do not wait for the previous
         * row's update of it. */
        const float margin = bias + ((a0 + a1) + (a2 + a3));
        const float rw = rweight ? rweight[r] : 1.0f;
        const float y = regression ? label[r] : (label[r] > mid ? 1.0f : -1.0f);
        float sg;
        if (logistic) {
            const float z = y * margin;
            float e;
            sg = step * hog_logistic_slope(z, y, &e);
            loss += (double)fmaxf(-z, 0.0f);
            prod *= 1.0 + (double)e;
            if (++nprod == LOGISTIC_PRODUCT_ROWS) {
                loss += log(prod);
                prod = 1.0;
                nprod = 0;
            }
        } else {
            float l;
            sg = step * (rw * hog_loss_grad_tau(lossf, margin, y, tau, &l));
            loss += (double)rw * (double)l;
        }
        if (shrink && (reg > 0 || sg != 0))
            for (t = 0; t < k; t++) {
                hog_weight *const wj = plain_w(w, hot, slot, idx[t], local);
                hog_w_store(wj, hog_w_load(wj) * shrink[idx[t]] - sg * val[t]);
            }
        else if (reg > 0 || sg != 0)
            for (t = 0; t < k; t++) {
                const uint32_t j = idx[t];
                hog_weight *const wj = plain_w(w, hot, slot, j, local);
                hog_w_store(wj, hog_w_load(wj) * l2_shrink(reg * l2_scale[j]) - sg * val[t]);
            }
        if (has_bias)
            bias -= sg;
        examples++;
        nnz += k;
    }
    c->bias[0] = bias;
    c->loss = loss + log(prod);
    c->examples = examples;
    c->nnz = nnz;
}

static void rows_plain_shared(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    rows_plain(job, ws, c, 0);
}

static void rows_plain_local(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    rows_plain(job, ws, c, 1);
}

/* No option: the tuned loop for one output, else the general one. */
static void rows_0(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (job->m->info.loss == HOG_LOSS_SOFTMAX)
        rows_run(job, ws, c, 0);
    else if (job->nlocal)
        rows_plain_local(job, ws, c);
    else
        rows_plain_shared(job, ws, c);
}

/* One copy of the row loop per combination of options, so that the choice
 * is made once per segment, never per non-zero. */
#define ROWS_FN(o)                                                                   \
    static void rows_##o(const epoch_job *job, worker_state *ws, seg_rows *c)        \
    {                                                                                \
        rows_run(job, ws, c, o);                                                     \
    }
ROWS_FN(1)
ROWS_FN(2)
ROWS_FN(3)
ROWS_FN(4)
ROWS_FN(5)
ROWS_FN(6)
ROWS_FN(7)
#undef ROWS_FN

static void (*const rows_by_opt[OPT_COUNT])(const epoch_job *, worker_state *, seg_rows *) = {
    rows_0, rows_1, rows_2, rows_3, rows_4, rows_5, rows_6, rows_7,
};

/* Segment pos; fresh: the private copies hold what the shared weights held
 * at the end of this worker's previous segment of the job (see hot_sync). */
static void run_unit(epoch_job *job, worker_state *ws, uint32_t pos, int fresh)
{
    const hog_dataset *ds = job->ds;
    const hog_train_params *p = job->p;
    hog_model *m = job->m;
    const uint32_t K = m->outputs;
    uint32_t unit = job->units[pos];
    uint32_t b = unit / job->segs_per_block;
    uint32_t start = (unit % job->segs_per_block) * SEGMENT_ROWS;
    const hog_block *blk = &ds->blocks[b];
    uint32_t n = HOG_MIN(SEGMENT_ROWS, blk->rows - start);
    uint64_t first = job->row0 + (uint64_t)b * ds->info.rows_per_block + start;

    /* The segment's rows in an order that depends only on (seed, epoch,
     * segment), so one thread replays bit for bit. */
    hog_rng rng = {hog_mix64(p->seed) ^ hog_mix64(((uint64_t)job->epoch << 32) | unit)};
    for (uint32_t i = 0; i < n; i++)
        ws->perm[i] = i;
    hog_shuffle_u32(ws->perm, n, &rng);

    float step = unit_step(job, pos);
    if (ws->dense) {
        hog_dense_segment(ws->dense, m, p, blk, start, ws->perm, n, first, step, job->mid, &ws->loss,
                          &ws->examples, &ws->nnz);
        return;
    }
    float *s = ws->scratch, *g = s + K, *bias = g + K, *bias0 = bias + K, *bacc = bias0 + K, *bacc0 = bacc + K;
    for (uint32_t k = 0; k < K; k++) {
        bias[k] = bias0[k] = hog_w_load(&ws->bias[k]);
        bacc[k] = bacc0[k] = job->bias_acc ? hog_w_load(&job->bias_acc[k]) : 0.0f;
    }
    if (!fresh)
        hot_begin(job, ws);
    /* Workers of one replica share its clock; with the model shared, all do. */
    hog_overlap *clock = job->rep->n ? &job->rep->clocks[ws->replica] : job->clock;
    unsigned members = job->rep->n ? job->rep->members[ws->replica] : job->nth;
    double t0, a0 = hog_overlap_enter(clock, &t0);
    seg_rows c = {blk, start, n, first, step, step * (float)p->l2, s, g, bias, bacc, 0, 0, 0};
    rows_by_opt[job->opt](job, ws, &c);
    /* Workers that ran beside this one each corrected the same hot weights
     * towards the same targets; summing their changes would overshoot, so
     * each adds its change divided by how many segments ran beside it,
     * itself included (see hog_overlap): the average when all run at
     * once, the full change when it ran alone. */
    float share = hog_overlap_share(clock, t0, a0, members);
    hot_sync(job, ws, share);
    /* The intercept is the hottest weight of all: the same delayed update. */
    if (p->bias)
        for (uint32_t k = 0; k < K; k++) {
            hog_w_add(&ws->bias[k], share * (bias[k] - bias0[k]));
            if (job->bias_acc)
                hog_w_add(&job->bias_acc[k], bacc[k] - bacc0[k]);
        }
    ws->loss += c.loss;
    ws->examples += c.examples;
    ws->nnz += c.nnz;
}

/* Averaging: adds the shared weights to the sums, one sample. The workers
 * go on writing meanwhile; the sample is as racy as any HOGWILD! read. */
static void average_sample(const epoch_job *job)
{
    avg_state *a = job->avg;
    const hog_model *m = job->m;
    const replica_set *rp = job->rep;
    uint64_t n = m->dim * m->outputs;
    pthread_mutex_lock(&a->lock);
    if (rp->n == 0) {
        for (uint64_t i = 0; i < n; i++)
            a->sum[i] += (double)hog_w_load(&m->w[i]);
        for (uint32_t k = 0; k < m->outputs; k++)
            a->sum[n + k] += (double)hog_w_load(&m->bias[k]);
    } else { /* the model is the replicas' mean */
        double inv = 1.0 / rp->n;
        for (unsigned r = 0; r < rp->n; r++) {
            for (uint64_t i = 0; i < n; i++)
                a->sum[i] += inv * (double)hog_w_load(&rp->w[r][i]);
            for (uint32_t k = 0; k < m->outputs; k++)
                a->sum[n + k] += inv * (double)hog_w_load(&rp->bias[r][k]);
        }
    }
    a->count++;
    pthread_mutex_unlock(&a->lock);
}

/* Whether the segment at pos ends one of the epoch's AVERAGE_POINTS evenly
 * spaced sampling points (all segments when there are fewer). */
static int average_point(const epoch_job *job, uint32_t pos)
{
    uint64_t pts = AVERAGE_POINTS;
    return (uint64_t)(pos + 1) * pts / job->nunits != (uint64_t)pos * pts / job->nunits;
}

/* Reports progress from worker 0 at most five times a second. */
static void maybe_report(epoch_job *job, uint32_t pos, double *last)
{
    const hog_train_params *p = job->p;
    double now = hog_now();
    if (!p->progress || now - *last < 0.2)
        return;
    *last = now;
    hog_epoch_stats st = *job->stats;
    st.progress = job->frac0 + (job->frac1 - job->frac0) * (pos + 1) / job->nunits;
    st.seconds = job->done_seconds + (now - job->t0);
    p->progress(p->progress_ctx, &st, 0);
}

/* Out of core, segments come block by block (see order_units): when the
 * segment `ahead` places on starts a new block, start reading that block;
 * when the last segment of a block is done, drop it. */
static void ooc_before(const epoch_job *job, uint32_t pos)
{
    uint32_t q = pos + job->ahead, spb = job->segs_per_block;
    if (q < job->nunits && job->units[q] / spb != job->units[q - 1] / spb)
        hog_dataset_willneed(job->ds, job->units[q] / spb);
}

static void ooc_after(const epoch_job *job, uint32_t pos)
{
    uint32_t b = job->units[pos] / job->segs_per_block;
    if (atomic_fetch_sub_explicit(&job->left[b], 1, memory_order_acq_rel) == 1)
        hog_dataset_drop(job->ds, b, 1);
}

static void epoch_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    epoch_job *job = arg;
    worker_state *ws = &job->ws[ith];
    double last = hog_now();
    int fresh = 0;
    for (;;) {
        uint32_t pos = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (pos >= job->nunits)
            break;
        if (job->ooc)
            ooc_before(job, pos);
        run_unit(job, ws, pos, fresh);
        fresh = 1;
        if (job->avg && average_point(job, pos))
            average_sample(job);
        if (job->ooc)
            ooc_after(job, pos);
        if (ith == 0)
            maybe_report(job, pos, &last);
    }
}

/* This epoch's order of segments. In memory: all segments shuffled. Out of
 * core: blocks shuffled, and each block's segments shuffled and kept
 * together, so that only the few blocks being worked on are resident.
 * base holds every segment in block order, block b's from first[b] to
 * first[b + 1]; order is scratch for nblocks block numbers. */
static void order_units(uint32_t *units, const uint32_t *base, const uint32_t *first, uint32_t nblocks,
                        int ooc, uint32_t *order, hog_rng *rng)
{
    uint32_t nunits = first[nblocks];
    if (!ooc) {
        memcpy(units, base, nunits * sizeof(uint32_t));
        hog_shuffle_u32(units, nunits, rng);
        return;
    }
    for (uint32_t b = 0; b < nblocks; b++)
        order[b] = b;
    hog_shuffle_u32(order, nblocks, rng);
    uint32_t k = 0;
    for (uint32_t i = 0; i < nblocks; i++) {
        uint32_t b = order[i], n = first[b + 1] - first[b];
        memcpy(units + k, base + first[b], n * sizeof(uint32_t));
        hog_shuffle_u32(units + k, n, rng);
        k += n;
    }
}

/* ===================================================================== *
 *  A run
 * ===================================================================== */
/* Features kept in private copies: touched by at least 1 row in LOCAL_SHARE,
 * at most LOCAL_WEIGHTS weights in all (a worker's copy stays within its L2
 * cache). Those touched by at least 1 row in HOT_SHARE are hot: their
 * changes are averaged; the others' are summed. */
#define LOCAL_SHARE 1000u
#define HOT_SHARE 100u
#define LOCAL_WEIGHTS 16384u
/* Private copies delay the hot weights' updates by a segment and share
 * them out among the segments that ran beside it, so k workers together
 * move a hot weight about as far as one segment would. On a data set of
 * few segments per worker that delay is much of an epoch and the sharing
 * much of its progress, while the contention the copies avoid costs little
 * on a set that small: below COPY_MIN_SEGMENTS segments per worker, no
 * copies - unless there are more workers than CPUs. Then a worker is
 * descheduled for a whole time slice between loading a hot weight and
 * storing its update, and that store throws away every update the others
 * made meanwhile; a private copy's change is merged as a difference, so
 * its delay costs nothing. */
#define COPY_MIN_SEGMENTS 8u
_Static_assert(LOCAL_WEIGHTS <= INT16_MAX, "private copy slots are int16_t");

/* The most features a worker keeps private copies of, for outputs weights each. */
static uint32_t local_max(uint32_t outputs)
{
    return HOG_MAX(LOCAL_WEIGHTS / outputs, 1u);
}

typedef struct hot_cand {
    uint32_t feature;
    uint32_t degree;
} hot_cand;

static int hot_cmp(const void *a, const void *b)
{
    const hot_cand *x = a, *y = b;
    if (x->degree != y->degree)
        return x->degree < y->degree ? 1 : -1;
    return (x->feature > y->feature) - (x->feature < y->feature);
}

/* Builds the per-feature tables from the training rows' feature degrees.
 * L2 scale: HOGWILD! spreads the regulariser over the examples, each
 * applying it only to the features it touches, weighted by
 * rows / (rows touching the feature), so that over an epoch every weight is
 * shrunk as much as by the full-gradient term l2/2 * |w|^2.
 * Slots: the features kept in private copies get slots 0..*nlocal-1 in
 * *hot_ids order, the others -1.
 * Returns 0 or -ENOMEM; on success *hot_ids holds *nlocal features, the
 * first *nhot of them hot. */
static int feature_table(const uint32_t *deg, uint64_t rows, uint64_t dim, uint32_t outputs, unsigned nth,
                         float **l2_out, int16_t **slot_out, uint32_t **hot_ids, uint32_t *nlocal, uint32_t *nhot)
{
    float *l2_scale = hog_malloc(dim * sizeof(float));
    int16_t *slot = hog_malloc(dim * sizeof(int16_t));
    uint64_t segments = (rows + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
    int copies = nth > 1 && (segments >= (uint64_t)COPY_MIN_SEGMENTS * nth || nth > hog_cpus());
    uint32_t max_hot = copies ? local_max(outputs) : 0;
    uint32_t ncand = 0;
    for (uint64_t j = 0; l2_scale && slot && j < dim; j++) {
        l2_scale[j] = deg[j] ? (float)((double)rows / deg[j]) : 0.0f;
        slot[j] = -1;
        ncand += max_hot && (uint64_t)deg[j] * LOCAL_SHARE >= rows && deg[j] > 0;
    }
    hot_cand *cand = hog_malloc((ncand ? ncand : 1) * sizeof(hot_cand));
    uint32_t *ids = hog_malloc((ncand ? ncand : 1) * sizeof(uint32_t));
    if (!l2_scale || !slot || !cand || !ids) {
        hog_free(cand);
        hog_free(ids);
        hog_free(slot);
        hog_free(l2_scale);
        return -ENOMEM;
    }
    uint32_t c = 0;
    for (uint64_t j = 0; j < dim && c < ncand; j++)
        if ((uint64_t)deg[j] * LOCAL_SHARE >= rows && deg[j] > 0)
            cand[c++] = (hot_cand){(uint32_t)j, deg[j]};
    qsort(cand, ncand, sizeof(hot_cand), hot_cmp);
    uint32_t n = HOG_MIN(ncand, max_hot), hot = 0;
    for (uint32_t h = 0; h < n; h++) {
        ids[h] = cand[h].feature;
        slot[ids[h]] = (int16_t)h;
        hot += (uint64_t)cand[h].degree * HOT_SHARE >= rows;
    }
    hog_free(cand);
    *l2_out = l2_scale;
    *slot_out = slot;
    *hot_ids = ids;
    *nlocal = n;
    *nhot = hot;
    return 0;
}

/* ===================================================================== *
 *  Replicas
 * ===================================================================== */

/* Makes the replicas of `kind` for the pool's workers, each in the memory
 * of the node of the first worker writing it, and points every worker at
 * its replica (or at the model). Returns 0 or -ENOMEM. */
static int replicas_make(replica_set *r, hog_replicas kind, hog_pool *pool, hog_model *m, worker_state *ws,
                         unsigned nth)
{
    memset(r, 0, sizeof(*r));
    r->nweights = m->dim * m->outputs;
    r->outputs = m->outputs;
    atomic_init(&r->stop, 0);
    atomic_init(&r->passes, 0);
    for (unsigned i = 0; i < nth; i++) {
        ws[i].w = m->w;
        ws[i].bias = m->bias;
        ws[i].replica = 0;
    }
    if (kind == HOG_REPLICAS_MACHINE)
        return 0;
    /* Workers to replicas: one each (core), or by NUMA node, numbered in
     * the order the nodes first appear among the workers. */
    int *nodes = hog_malloc(nth * sizeof(int));
    if (!nodes)
        return -ENOMEM;
    unsigned n = 0;
    for (unsigned i = 0; i < nth; i++) {
        unsigned g = i;
        if (kind == HOG_REPLICAS_NODE) {
            int node = hog_pool_worker_node(pool, i);
            for (g = 0; g < n && nodes[g] != node; g++)
                ;
            if (g == n)
                nodes[n++] = node;
        } else {
            n = nth;
        }
        ws[i].replica = g;
    }
    hog_free(nodes);
    r->n = n;
    r->w = hog_calloc(n, sizeof(hog_weight *));
    r->bias = hog_calloc(n, sizeof(hog_weight *));
    r->members = hog_calloc(n, sizeof(unsigned));
    r->clocks = hog_aligned_alloc(HOG_CACHELINE, (size_t)n * sizeof(hog_overlap));
    if (!r->w || !r->bias || !r->members || !r->clocks)
        return -ENOMEM;
    for (unsigned g = 0; g < n; g++)
        hog_overlap_init(&r->clocks[g], hog_now);
    for (unsigned i = 0; i < nth; i++) {
        unsigned g = ws[i].replica;
        if (r->members[g]++ == 0) { /* node-local to its first worker, zeroed like the model */
            r->w[g] = hog_pool_alloc_local(pool, i, (size_t)r->nweights * sizeof(hog_weight));
            r->bias[g] = hog_pool_alloc_local(pool, i, r->outputs * sizeof(hog_weight));
            if (!r->w[g] || !r->bias[g])
                return -ENOMEM;
        }
        ws[i].w = r->w[g];
        ws[i].bias = r->bias[g];
    }
    return 0;
}

static void replicas_free(replica_set *r, hog_pool *pool)
{
    for (unsigned g = 0; g < r->n; g++) {
        if (r->w)
            hog_pool_free_local(pool, (void *)r->w[g]);
        if (r->bias)
            hog_pool_free_local(pool, (void *)r->bias[g]);
    }
    hog_free(r->w);
    hog_free(r->bias);
    hog_free(r->members);
    for (unsigned g = 0; r->clocks && g < r->n; g++)
        hog_overlap_destroy(&r->clocks[g]);
    hog_free(r->clocks);
    memset(r, 0, sizeof(*r));
}

/* Coordinates [lo, hi) of the weights (then, past nweights, the biases):
 * each set to the replicas' mean, in every replica and, if m is not NULL,
 * in the model. */
static void replicas_mean(const replica_set *r, hog_model *m, uint64_t lo, uint64_t hi)
{
    const float inv = 1.0f / (float)r->n;
    for (uint64_t i = lo; i < hi; i++) {
        /* The weights, then past nweights the biases: one index space, so
         * that workers and the background pass can split it anywhere. */
        int weight = i < r->nweights;
        uint64_t j = weight ? i : i - r->nweights;
        hog_weight *const *arr = weight ? r->w : r->bias;
        float sum = 0.0f;
        for (unsigned g = 0; g < r->n; g++)
            sum += hog_w_load(&arr[g][j]);
        float mean = sum * inv;
        for (unsigned g = 0; g < r->n; g++)
            hog_w_store(&arr[g][j], mean);
        if (m)
            hog_w_store(weight ? &m->w[j] : &m->bias[j], mean);
    }
}

typedef struct mean_job {
    const replica_set *r;
    hog_model *m;
} mean_job;

static void mean_worker(void *arg, unsigned ith, unsigned nth)
{
    const mean_job *j = arg;
    uint64_t n = j->r->nweights + j->r->outputs;
    replicas_mean(j->r, j->m, n * ith / nth, n * (ith + 1) / nth);
}

/* After an epoch: the model and every replica become the replicas' mean. */
static void replicas_average(const replica_set *r, hog_pool *pool, hog_model *m)
{
    mean_job j = {r, m};
    hog_pool_run(pool, mean_worker, &j);
}

/* Node replicas: the background averaging thread, one pass over the model
 * after another while the epoch runs, a chunk at a time; racing the
 * workers' updates as HOGWILD! races them. */
static void *replicas_background(void *arg)
{
    replica_set *r = arg;
    const uint64_t n = r->nweights + r->outputs, chunk = 4096;
    while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
        for (uint64_t lo = 0; lo < n && !atomic_load_explicit(&r->stop, memory_order_relaxed); lo += chunk)
            replicas_mean(r, NULL, lo, HOG_MIN(n, lo + chunk));
        atomic_fetch_add_explicit(&r->passes, 1, memory_order_relaxed);
    }
    return NULL;
}

static void replicas_background_start(replica_set *r)
{
    if (r->n < 2)
        return; /* one replica: nothing to average with */
    atomic_store_explicit(&r->stop, 0, memory_order_relaxed);
    r->running = pthread_create(&r->thread, NULL, replicas_background, r) == 0;
    if (!r->running)
        hog_log(HOG_LOG_WARN, "node replicas: no averaging thread could start; they meet after the epoch");
}

static void replicas_background_stop(replica_set *r)
{
    if (!r->running)
        return;
    atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
    pthread_join(r->thread, NULL);
    r->running = 0;
}

typedef struct run_state {
    const hog_train_params *p;
    hog_model *m;
    worker_state *ws;
    unsigned nth;
    uint64_t dim;     /* features the per-feature arrays hold: the model's */
    uint32_t classes;
    uint32_t outputs;
    hog_path path;
    unsigned opt;     /* OPT_* */
    uint64_t limit;   /* hog_mem_limit */
    int ooc;
    uint32_t *units;  /* this epoch's order of segments */
    uint32_t *base;   /* every segment, in block order */
    uint32_t *first;  /* blocks + 1: where each block's segments start in base */
    uint32_t *order;  /* blocks: scratch for the block order */
    atomic_uint *left;/* blocks: segments of each block not yet done (out of core) */
    uint32_t nblocks, nunits, segs_per_block;
    uint32_t *deg;    /* per feature: training rows that touch it */
    uint64_t deg_rows;/* training rows (holdout excluded) counted in deg */
    float *l2_scale;
    int16_t *slot;
    uint32_t *hot_ids;
    uint32_t nlocal;
    uint32_t nhot;
    double *classes_of; /* the label values, ascending */
    hog_weight *acc;      /* adagrad: dim * outputs sums of squared gradients */
    hog_weight *bias_acc; /* adagrad: outputs */
    hog_weight *xmax;     /* normalized: dim */
    hog_weight *l1s;      /* l1: 2 * dim * outputs */
    avg_state avg;        /* averaging: avg.sum is NULL when off */
    int avg_lock;         /* 1: avg.lock was initialised */
    hog_model *avg_m;     /* averaging: the average, for evaluation */
    float *best;          /* early stopping: the best epoch's weights, then biases */
    replica_set rep;      /* --replicas node|core (rep.n == 0: none) */
    hog_pool *pool;       /* the trainer's: the replicas' memory came from it */

    /* the epochs so far */
    hog_epoch_stats st;
    double seconds;       /* training seconds */
    double best_loss;
    hog_metrics best_test;
    unsigned best_epoch, since_best, epochs_run;
    _Alignas(HOG_CACHELINE) atomic_uint dense_published; /* the dense path's batches (hog_dense_share) */
    hog_overlap clock;    /* segments in flight on the shared model (run_init makes it) */
} run_state;

static void run_state_free(run_state *rs)
{
    if (rs->ws)
        for (unsigned i = 0; i < rs->nth; i++) {
            worker_state *ws = &rs->ws[i];
            void *local[] = {ws->scratch, ws->perm, (void *)ws->hot, ws->hot0, (void *)ws->hotacc, ws->hotacc0};
            for (unsigned k = 0; k < HOG_ARRAY_LEN(local); k++)
                hog_pool_free_local(rs->pool, local[k]);
            hog_dense_free(ws->dense);
            hog_free(ws->shrink);
        }
    hog_free(rs->ws);
    hog_free(rs->units);
    hog_free(rs->base);
    hog_free(rs->first);
    hog_free(rs->order);
    hog_free((void *)rs->left);
    hog_free(rs->deg);
    hog_free(rs->l2_scale);
    hog_free(rs->slot);
    hog_free(rs->hot_ids);
    hog_free(rs->classes_of);
    hog_free((void *)rs->acc);
    hog_free((void *)rs->bias_acc);
    hog_free((void *)rs->xmax);
    hog_free((void *)rs->l1s);
    hog_free(rs->avg.sum);
    if (rs->avg_lock)
        pthread_mutex_destroy(&rs->avg.lock);
    hog_overlap_destroy(&rs->clock);
    hog_model_free(rs->avg_m);
    hog_free(rs->best);
    replicas_background_stop(&rs->rep);
    if (rs->pool)
        replicas_free(&rs->rep, rs->pool);
    hog_model_free(rs->m);
    memset(rs, 0, sizeof(*rs));
}

/* The weights and then the biases of m, into or out of buf (dim * outputs
 * + outputs floats). */
static void weights_save(const hog_model *m, float *buf)
{
    uint64_t n = m->dim * m->outputs;
    for (uint64_t i = 0; i < n; i++)
        buf[i] = hog_w_load(&m->w[i]);
    for (uint32_t k = 0; k < m->outputs; k++)
        buf[n + k] = hog_w_load(&m->bias[k]);
}

static void weights_restore(hog_model *m, const float *buf)
{
    uint64_t n = m->dim * m->outputs;
    for (uint64_t i = 0; i < n; i++)
        hog_w_store(&m->w[i], buf[i]);
    for (uint32_t k = 0; k < m->outputs; k++)
        hog_w_store(&m->bias[k], buf[n + k]);
}

/* Sets m's weights to the average of the samples so far. */
static void average_into(hog_model *m, const avg_state *a)
{
    uint64_t n = m->dim * m->outputs;
    double inv = 1.0 / (double)a->count;
    for (uint64_t i = 0; i < n; i++)
        hog_w_store(&m->w[i], (float)(a->sum[i] * inv));
    for (uint32_t k = 0; k < m->outputs; k++)
        hog_w_store(&m->bias[k], (float)(a->sum[n + k] * inv));
}

static uint64_t count_nonzero(const hog_model *m)
{
    uint64_t n = m->dim * m->outputs, nz = 0;
    for (uint64_t i = 0; i < n; i++)
        nz += hog_w_load(&m->w[i]) != 0.0f;
    return nz;
}

/* The model's outputs for rs->classes label values: binary losses need
 * exactly two, softmax at least two (one output each). */
static int run_outputs(run_state *rs, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    uint32_t classes = rs->classes;
    rs->outputs = 1;
    if (hog_loss_is_regression(p->loss))
        return 0;
    if (p->loss != HOG_LOSS_SOFTMAX && classes != 2)
        return hog_fail(HOG_ELABEL, err, err_len, "%s loss needs exactly two label values, the training set has %u%s",
                        hog_loss_name(p->loss), classes, classes > 2 ? " (use --loss softmax for multiclass)" : "");
    if (p->loss == HOG_LOSS_SOFTMAX && classes < 2)
        return hog_fail(HOG_ELABEL, err, err_len, "softmax needs at least two classes, the training set has %u",
                        classes);
    if (p->loss == HOG_LOSS_SOFTMAX)
        rs->outputs = classes;
    return 0;
}

/* The options that run on the sparse path only, or NULL: the dense path
 * steps plain mini-batch SGD. */
static const char *sparse_only(const hog_train_params *p)
{
    return p->schedule == HOG_SCHEDULE_ADAGRAD ? "--schedule adagrad"
           : p->normalized                    ? "--normalized"
           : p->l1 > 0                        ? "--l1"
           : p->loss == HOG_LOSS_QUANTILE     ? "--loss quantile"
           : p->replicas == HOG_REPLICAS_NODE ? "--replicas node"
           : p->replicas == HOG_REPLICAS_CORE ? "--replicas core"
                                              : NULL;
}

/* Settles rs->path for data of rows, features and nnz: by density for
 * auto; options the dense path lacks send auto to the sparse path (*forced
 * then names the option, else it is NULL) and refuse a forced dense path. */
static int run_path(run_state *rs, uint64_t rows, uint64_t features, uint64_t nnz, const char **forced, char *err,
                    size_t err_len)
{
    const hog_train_params *p = rs->p;
    hog_path path = hog_path_pick(p->path, rows, features, nnz, rs->outputs);
    const char *sparse = sparse_only(p);
    *forced = NULL;
    if (path == HOG_PATH_DENSE && sparse) {
        if (p->path == HOG_PATH_DENSE)
            return hog_fail(HOG_EPARAM, err, err_len, "path: the dense path does not support %s; use the sparse path",
                            sparse);
        *forced = sparse;
        path = HOG_PATH_SPARSE;
    }
    rs->path = path;
    return 0;
}

/* Logs the path run_path settled, and why when an option forced it. */
static void log_path(const run_state *rs, const char *forced, uint64_t rows, uint64_t features, uint64_t nnz)
{
    const hog_train_params *p = rs->p;
    if (forced)
        hog_log(HOG_LOG_INFO, "sparse path: %s runs on the sparse path only", forced);
    hog_log(HOG_LOG_INFO, "%s path%s: density %.3g, %llu features, %u outputs%s", hog_path_name(rs->path),
            p->path == HOG_PATH_AUTO ? " (auto)" : "",
            (double)nnz / ((double)rows * (double)HOG_MAX(features, 1)), (unsigned long long)features, rs->outputs,
            rs->path == HOG_PATH_DENSE ? ", OpenBLAS mini-batches" : "");
}

/* Private copies per worker: none on the dense path (each batch's update
 * is already one write per weight), none for replicas of one worker each. */
static unsigned copy_workers(const run_state *rs)
{
    return rs->path == HOG_PATH_DENSE || rs->p->replicas == HOG_REPLICAS_CORE ? 1 : rs->nth;
}

/* (Re)builds the per-feature tables from rs->deg. */
static int run_tables(run_state *rs)
{
    hog_free(rs->l2_scale);
    hog_free(rs->slot);
    hog_free(rs->hot_ids);
    rs->l2_scale = NULL;
    rs->slot = NULL;
    rs->hot_ids = NULL;
    return feature_table(rs->deg, rs->deg_rows, rs->dim, rs->outputs, copy_workers(rs), &rs->l2_scale, &rs->slot,
                         &rs->hot_ids, &rs->nlocal, &rs->nhot);
}

/* Makes the model (rs->dim features, rs->outputs outputs) and everything the
 * epochs share that does not depend on how the data is cut into blocks:
 * the workers' buffers, replicas and the optimisers' per-weight state.
 * rs->deg and the feature tables are the caller's. */
static int run_alloc(run_state *rs, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const uint64_t dim = rs->dim;
    const uint32_t outputs = rs->outputs;
    rs->m = hog_model_new(p->loss, dim, outputs, rs->classes);
    rs->ws = hog_aligned_alloc(HOG_CACHELINE, rs->nth * sizeof(worker_state));
    if (!rs->m || !rs->ws)
        return -ENOMEM;
    memset(rs->ws, 0, rs->nth * sizeof(worker_state));
    if (rs->classes)
        memcpy(rs->m->class_labels, rs->classes_of, rs->classes * sizeof(double));
    if (rs->path == HOG_PATH_DENSE) {
        /* The buffers are touched as they are made: a model too large for
         * them would meet the OOM killer, not -ENOMEM, so it is refused
         * here (auto never picks one; --path dense on a huge model can). */
        uint64_t need = (uint64_t)rs->nth * hog_dense_bytes(dim, outputs, p->batch);
        if (need > rs->limit)
            return hog_fail(HOG_EPARAM, err, err_len,
                            "the dense path needs %llu bytes of buffers for %llu features x %u outputs, more than "
                            "the memory limit (%llu): use the sparse path", (unsigned long long)need,
                            (unsigned long long)dim, outputs, (unsigned long long)rs->limit);
        hog_dense **dense = hog_calloc(rs->nth, sizeof(hog_dense *));
        int rc = dense ? hog_dense_create_all(rs->pool, dim, outputs, p->batch, dense) : -ENOMEM;
        atomic_init(&rs->dense_published, 0);
        for (unsigned i = 0; dense && i < rs->nth; i++) {
            rs->ws[i].dense = dense[i];
            if (dense[i])
                hog_dense_share(dense[i], &rs->dense_published, rs->nth);
        }
        hog_free(dense);
        if (rc < 0)
            return rc;
    }
    /* Room for as many private copies as feature_table can choose, so the
     * tables can be rebuilt between epochs. */
    size_t nhot = (size_t)(copy_workers(rs) > 1 ? local_max(outputs) : 0) * outputs + 1;
    for (unsigned i = 0; i < rs->nth; i++) {
        worker_state *ws = &rs->ws[i];
        /* In the memory of the worker's NUMA node (zeroed, cache-line aligned). */
        ws->scratch = hog_pool_alloc_local(rs->pool, i, 6 * outputs * sizeof(float));
        ws->perm = hog_pool_alloc_local(rs->pool, i, SEGMENT_ROWS * sizeof(uint32_t));
        ws->hot = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(hog_weight));
        ws->hot0 = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(float));
        if (!ws->scratch || !ws->perm || !ws->hot || !ws->hot0)
            return -ENOMEM;
        if (p->schedule == HOG_SCHEDULE_ADAGRAD) {
            ws->hotacc = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(hog_weight));
            ws->hotacc0 = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(float));
            if (!ws->hotacc || !ws->hotacc0)
                return -ENOMEM;
        }
    }
    int rc = replicas_make(&rs->rep, rs->path == HOG_PATH_SPARSE ? p->replicas : HOG_REPLICAS_MACHINE, rs->pool,
                           rs->m, rs->ws, rs->nth);
    if (rc < 0)
        return rc;
    if (rs->rep.n)
        hog_log(HOG_LOG_INFO, "%s replicas: %u, averaged into the model after every epoch%s",
                hog_replicas_name(p->replicas), rs->rep.n,
                p->replicas == HOG_REPLICAS_NODE && rs->rep.n > 1 ? " and by a background thread meanwhile" : "");
    rs->opt = (p->schedule == HOG_SCHEDULE_ADAGRAD ? OPT_ADAGRAD : 0) | (p->normalized ? OPT_NORMALIZED : 0) |
              (p->l1 > 0 ? OPT_L1 : 0);
    if (rs->opt & OPT_ADAGRAD) {
        rs->acc = hog_calloc(dim * outputs, sizeof(hog_weight));
        rs->bias_acc = hog_calloc(outputs, sizeof(hog_weight));
        if (!rs->acc || !rs->bias_acc)
            return -ENOMEM;
    }
    if ((rs->opt & OPT_L1) && !(rs->l1s = hog_calloc(2 * dim * outputs, sizeof(hog_weight))))
        return -ENOMEM;
    if ((rs->opt & OPT_NORMALIZED) && !(rs->xmax = hog_calloc(dim, sizeof(hog_weight))))
        return -ENOMEM;
    return 0;
}

/* What needs the model's final size: averaging and early stopping. */
static int run_alloc_final(run_state *rs)
{
    const hog_train_params *p = rs->p;
    size_t nweights = (size_t)rs->dim * rs->outputs + rs->outputs;
    if (p->average) {
        rs->avg.sum = hog_calloc(nweights, sizeof(double));
        rs->avg_m = hog_model_new(p->loss, rs->dim, rs->outputs, rs->classes);
        if (!rs->avg.sum || !rs->avg_m)
            return -ENOMEM;
        rs->avg.from_epoch = p->epochs - p->average;
        pthread_mutex_init(&rs->avg.lock, NULL);
        rs->avg_lock = 1;
    }
    if (p->early_stop && !(rs->best = hog_malloc(nweights * sizeof(float))))
        return -ENOMEM;
    if (rs->nlocal)
        hog_log(HOG_LOG_DEBUG, "%u features kept per worker, %u of them hot", rs->nlocal, rs->nhot);
    return 0;
}

/* The segments of train's blocks, and the model's record of its data. */
static int run_units(run_state *rs, const hog_dataset *train)
{
    uint32_t rpb = train->info.rows_per_block, nblocks = train->info.blocks;
    uint32_t spb = (rpb + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
    rs->units = hog_malloc((size_t)nblocks * spb * sizeof(uint32_t));
    rs->base = hog_malloc((size_t)nblocks * spb * sizeof(uint32_t));
    rs->first = hog_malloc(((size_t)nblocks + 1) * sizeof(uint32_t));
    rs->order = hog_malloc(((size_t)nblocks + 1) * sizeof(uint32_t));
    rs->left = hog_malloc(((size_t)nblocks + 1) * sizeof(atomic_uint));
    if (!rs->units || !rs->base || !rs->first || !rs->order || !rs->left)
        return -ENOMEM;
    uint32_t nunits = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        rs->first[b] = nunits;
        for (uint32_t s = 0; s * SEGMENT_ROWS < train->blocks[b].rows; s++)
            rs->base[nunits++] = b * spb + s;
    }
    rs->first[nblocks] = nunits;
    rs->nblocks = nblocks;
    rs->nunits = nunits;
    rs->segs_per_block = spb;

    hog_model *m = rs->m;
    m->info.params = *rs->p;
    m->info.params.threads = rs->nth;
    m->info.params.path = rs->path;
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    m->info.data_fingerprint = train->info.fingerprint;
    m->info.data_skipped = train->info.skipped;
    m->info.data_index_base = train->info.index_base;
    if (rs->avg_m) {
        rs->avg_m->info = m->info;
        memcpy(rs->avg_m->class_labels, m->class_labels, (rs->classes ? rs->classes : 1) * sizeof(double));
    }
    return 0;
}

/* A job for epoch e over rs's model and tables; the caller sets the units. */
static epoch_job job_for(run_state *rs, unsigned e)
{
    const hog_train_params *p = rs->p;
    epoch_job job = {
        .p = p, .m = rs->m, .l2_scale = rs->l2_scale, .slot = rs->slot, .hot_ids = rs->hot_ids,
        .nlocal = rs->nlocal, .nhot = rs->nhot, .nth = rs->nth, .frac1 = 1.0, .epoch = e, .ws = rs->ws,
        .done_seconds = rs->seconds, .stats = &rs->st,
    };
    job.mid = rs->classes == 2 ? (float)(0.5 * (rs->classes_of[0] + rs->classes_of[1])) : 0.0f;
    job.tau = (float)p->quantile;
    job.opt = rs->opt;
    job.acc = rs->acc;
    job.bias_acc = rs->bias_acc;
    job.xmax = rs->xmax;
    job.l1s = rs->l1s;
    job.avg = rs->avg.sum && e >= rs->avg.from_epoch ? &rs->avg : NULL;
    job.rep = &rs->rep;
    atomic_init(&job.next, 0);
    job.clock = &rs->clock;
    return job;
}

/* Runs the pool over job's units: one pass of the workers. */
static void run_pass(run_state *rs, epoch_job *job)
{
    if (rs->p->replicas == HOG_REPLICAS_NODE)
        replicas_background_start(&rs->rep);
    hog_pool_run(rs->pool, epoch_worker, job);
    replicas_background_stop(&rs->rep);
}

/* Epoch e over the whole of train. */
static void run_epoch(run_state *rs, const hog_dataset *train, unsigned e)
{
    epoch_job job = job_for(rs, e);
    job.ds = train;
    job.units = rs->units;
    job.nunits = rs->nunits;
    job.segs_per_block = rs->segs_per_block;
    job.ooc = rs->ooc;
    job.left = rs->left;
    job.ahead = HOG_MIN(rs->nunits - 1, 2 * rs->nth * rs->segs_per_block);
    hog_rng rng = {hog_mix64(rs->p->seed ^ 0x5eed0000ull) + e};
    order_units(rs->units, rs->base, rs->first, rs->nblocks, rs->ooc, rs->order, &rng);
    if (rs->ooc) {
        uint32_t spb = rs->segs_per_block;
        for (uint32_t b = 0; b < rs->nblocks; b++)
            atomic_init(&rs->left[b], rs->first[b + 1] - rs->first[b]);
        for (uint32_t q = 0; q <= job.ahead; q++) /* the first blocks, before the workers ask */
            if (q == 0 || rs->units[q] / spb != rs->units[q - 1] / spb)
                hog_dataset_willneed(train, rs->units[q] / spb);
    }
    rs->st.step = unit_step(&job, 0);
    job.t0 = hog_now();
    run_pass(rs, &job);
    if (rs->rep.n)
        replicas_average(&rs->rep, rs->pool, rs->m);
    rs->seconds += hog_now() - job.t0;
}

/* The sum of the workers' training losses so far. */
static double workers_loss(const run_state *rs)
{
    double loss = 0;
    for (unsigned i = 0; i < rs->nth; i++)
        loss += rs->ws[i].loss;
    return loss;
}

/* After epoch e (examples ex0 and loss loss0 before it): the epoch's
 * statistics, evaluation, early stopping and the progress report. Sets
 * *stop when early stopping ends the run. Returns 0 or an evaluation error. */
static int run_epoch_end(run_state *rs, unsigned e, uint64_t ex0, double loss0, const hog_dataset *eval_ds,
                         const hog_rowsel *eval_sel, int *stop)
{
    const hog_train_params *p = rs->p;
    hog_epoch_stats *st = &rs->st;
    double loss = workers_loss(rs);
    st->examples = st->nnz = 0;
    for (unsigned i = 0; i < rs->nth; i++) {
        st->examples += rs->ws[i].examples;
        st->nnz += rs->ws[i].nnz;
    }
    st->progress = 1;
    st->seconds = rs->seconds;
    st->train_loss = st->examples > ex0 ? (loss - loss0) / (double)(st->examples - ex0) : (double)NAN;
    if (!isfinite(st->train_loss) && st->examples > ex0)
        hog_log(HOG_LOG_WARN, "epoch %u: the training loss is not finite: lower --step", e + 1);
    rs->epochs_run = e + 1;
    /* Within the averaging window the average is the model. */
    const hog_model *now_m = rs->m;
    if (rs->avg.sum && e >= rs->avg.from_epoch && rs->avg.count) {
        average_into(rs->avg_m, &rs->avg);
        now_m = rs->avg_m;
    }
    if (eval_ds) {
        int rc = hog_evaluate(now_m, eval_ds, eval_sel, hog_dataset_bytes(eval_ds) > rs->limit, rs->pool, &st->test);
        if (rc < 0)
            return rc;
    }
    *stop = 0;
    if (p->early_stop) {
        if (st->test.loss < rs->best_loss) {
            rs->best_loss = st->test.loss;
            rs->best_test = st->test;
            rs->best_epoch = e + 1;
            rs->since_best = 0;
            weights_save(now_m, rs->best);
        } else {
            *stop = ++rs->since_best >= p->early_stop;
        }
    }
    if (p->progress)
        p->progress(p->progress_ctx, st, 1);
    if (*stop)
        hog_log(HOG_LOG_INFO, "early stop after epoch %u: no lower test loss for %u epochs; keeping epoch %u", e + 1,
                p->early_stop, rs->best_epoch);
    return 0;
}

/* Epochs from..epochs-1 over train, then the model kept (the best epoch's,
 * else the average, else the last) and its training metrics. */
static int run_epochs(run_state *rs, const hog_dataset *train, const hog_dataset *test, unsigned from,
                      hog_model **out, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const hog_dataset *eval_ds = test ? test : (p->holdout > 0 ? train : NULL);
    const hog_rowsel eval_sel = {test ? 0.0 : p->holdout, p->seed, 1};
    const hog_rowsel train_sel = {p->holdout, p->seed, 0};
    int rc = 0, stop = 0;
    if (from > 0) { /* the first epoch ran while train was read: evaluate it now */
        rc = run_epoch_end(rs, from - 1, 0, 0, eval_ds, &eval_sel, &stop);
        if (rc < 0)
            return rc;
    }
    for (unsigned e = from; e < p->epochs && !stop; e++) {
        uint64_t ex0 = rs->st.examples;
        double loss0 = workers_loss(rs);
        rs->st.epoch = e + 1;
        rs->st.progress = 0;
        run_epoch(rs, train, e);
        rc = run_epoch_end(rs, e, ex0, loss0, eval_ds, &eval_sel, &stop);
        if (rc < 0)
            return rc;
    }
    if (rs->st.examples == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "every training row is held out: lower the holdout fraction");
    hog_model *m = rs->m;
    m->info.epochs_run = rs->epochs_run;
    m->info.best_epoch = rs->epochs_run;
    if (rs->best_epoch) {
        weights_restore(m, rs->best);
        rs->st.test = rs->best_test;
        m->info.best_epoch = rs->best_epoch;
    } else if (rs->avg.sum && rs->avg.count) {
        average_into(m, &rs->avg);
    }
    m->info.nonzero = count_nonzero(m);
    hog_log(HOG_LOG_DEBUG, "model: %llu of %llu weights non-zero", (unsigned long long)m->info.nonzero,
            (unsigned long long)(rs->dim * rs->outputs));
    rc = hog_evaluate(m, train, &train_sel, rs->ooc, rs->pool, &m->info.train);
    if (rc < 0)
        return rc;
    m->info.train_rows = m->info.train.rows;
    m->info.test = rs->st.test;
    m->info.seconds = rs->seconds;
    rs->m = NULL;
    *out = m;
    return 0;
}

/* A run's state before its first epoch. */
static void run_init(run_state *rs, hog_trainer *t)
{
    memset(rs, 0, sizeof(*rs));
    rs->p = &t->p;
    rs->nth = hog_pool_threads(t->pool);
    hog_overlap_init(&rs->clock, hog_now);
    rs->pool = t->pool;
    rs->limit = hog_mem_limit(&t->p);
    rs->st.epochs = t->p.epochs;
    rs->st.test = hog_metrics_none();
    rs->best_loss = INFINITY;
    rs->best_test = hog_metrics_none();
}

int hog_trainer_run(hog_trainer *t, const hog_dataset *train, const hog_dataset *test,
                    hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    const hog_train_params *p = &t->p;
    if (train->info.rows == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "the training set has no rows");
    if (p->early_stop && !test && p->holdout <= 0)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "early_stop needs a test set or a holdout fraction to measure improvement on");
    run_state rs;
    run_init(&rs, t);
    rs.ooc = hog_dataset_bytes(train) > rs.limit;
    if (rs.ooc)
        hog_log(HOG_LOG_INFO, "training out of core: %llu bytes of data, a limit of %llu",
                (unsigned long long)hog_dataset_bytes(train), (unsigned long long)rs.limit);
    rs.dim = HOG_MAX(train->info.features, 1);
    int rc = scan_training_set(train, p, rs.dim, rs.ooc, &rs.classes_of, &rs.classes, &rs.deg, &rs.deg_rows, err,
                               err_len);
    if (rc == 0)
        rc = run_outputs(&rs, err, err_len);
    const char *forced = NULL;
    if (rc == 0 && (rc = run_path(&rs, train->info.rows, train->info.features, train->info.nnz, &forced, err,
                                  err_len)) == 0)
        log_path(&rs, forced, train->info.rows, train->info.features, train->info.nnz);
    if (rc == 0)
        rc = run_alloc(&rs, err, err_len);
    if (rc == 0)
        rc = run_tables(&rs);
    if (rc == 0)
        rc = run_alloc_final(&rs);
    if (rc == 0)
        rc = run_units(&rs, train);
    if (rc == 0)
        rc = run_epochs(&rs, train, test, 0, out, err, err_len);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    run_state_free(&rs);
    return rc;
}

/* ===================================================================== *
 *  The first epoch while the text is read
 *
 *  The first STREAM_HEAD blocks settle what training needs up front: the
 *  label values, the path (by density) and first feature degrees. Then
 *  every window of blocks the feed hands over is one pass of the workers,
 *  the window's segments shuffled among themselves, while the feed parses
 *  the next ones. Between windows the degrees (and so the L2 scales) grow
 *  with the rows seen, and the per-feature arrays with the largest index
 *  seen. The rows arrive in file order, shuffled only within a window: a
 *  file sorted by label should be shuffled first, or read whole first
 *  (stream 0). When the rest of the file breaks what the head settled (a
 *  label value the head did not have), the run starts over on the whole
 *  data set, which the feed goes on building meanwhile.
 * ===================================================================== */
#define STREAM_HEAD 4u

/* Blocks per window: enough segments that the workers' shares balance
 * (two blocks, eight segments, a worker), at most 16 (the feed holds three
 * windows: 48 blocks, 120 MB of RCV1-shaped rows). */
static uint32_t stream_window(unsigned nth)
{
    return HOG_MIN(HOG_MAX(4u, 2u * nth), 16u);
}

/* Why a run cannot stream the first epoch, or NULL. */
static const char *stream_refusal(const hog_train_params *p)
{
    if (!p->stream)
        return "streaming is off";
    if (p->replicas != HOG_REPLICAS_MACHINE)
        return p->replicas == HOG_REPLICAS_NODE ? "--replicas node" : "--replicas core";
    if (p->path == HOG_PATH_DENSE)
        return "the dense path";
    if (p->average == p->epochs)
        return "averaging over every epoch";
    return NULL;
}

/* Sets the model's size: the per-feature arrays hold at least dim features. */
static void run_settle_dim(run_state *rs, uint64_t dim)
{
    rs->dim = dim;
    rs->m->dim = dim;
    rs->m->info.features = dim;
}

/* Grows every per-feature array to dim features, the new ones zero (slots
 * -1). Returns 0 or -ENOMEM (the arrays grown so far stay valid). */
static int run_grow(run_state *rs, uint64_t dim)
{
    const uint64_t old = rs->dim, K = rs->outputs;
    if (dim <= old)
        return 0;
    hog_model *m = rs->m;
    hog_weight *w = hog_aligned_alloc(HOG_CACHELINE, dim * K * sizeof(hog_weight));
    if (!w)
        return -ENOMEM;
    memcpy((void *)w, (const void *)m->w, old * K * sizeof(hog_weight));
    memset((void *)(w + old * K), 0, (dim - old) * K * sizeof(hog_weight));
    hog_free((void *)m->w);
    m->w = w;
    for (unsigned i = 0; i < rs->nth; i++)
        rs->ws[i].w = w;
    struct { void **p; size_t size; } grow[] = {
        {(void **)&rs->deg, sizeof(uint32_t)}, /* NULL while a stream_count owns it */
        {(void **)&rs->l2_scale, sizeof(float)},
        {(void **)&rs->slot, sizeof(int16_t)},
        {(void **)&rs->acc, K * sizeof(hog_weight)},
        {(void **)&rs->xmax, sizeof(hog_weight)},
        {(void **)&rs->l1s, 2 * K * sizeof(hog_weight)},
    };
    for (unsigned i = 0; i < HOG_ARRAY_LEN(grow); i++) {
        if (!*grow[i].p)
            continue;
        char *q = hog_realloc(*grow[i].p, dim * grow[i].size);
        if (!q)
            return -ENOMEM;
        memset(q + old * grow[i].size, 0, (dim - old) * grow[i].size);
        *grow[i].p = q;
    }
    for (uint64_t j = old; j < dim; j++)
        rs->slot[j] = -1;
    run_settle_dim(rs, dim);
    return 0;
}

/* Whether y is one of the label values the run has (always, for regression). */
static int label_known(const run_state *rs, double y)
{
    if (hog_loss_is_regression(rs->p->loss))
        return 1;
    uint32_t lo = 0, hi = rs->classes;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (rs->classes_of[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < rs->classes && rs->classes_of[lo] == y;
}

/* The degrees of the rows streamed so far, counted one window ahead of
 * training by a thread of its own (counting every non-zero on the thread
 * that feeds the workers cost as long as training the window), which owns
 * deg while it runs. */
typedef struct stream_count {
    run_state *rs;          /* read only: the parameters and label values */
    const hog_block *blks;  /* the window to count */
    uint32_t n;
    uint64_t row0;          /* its first row's number */
    uint32_t rpb;
    uint32_t *deg;          /* per feature, deg_cap of them */
    uint64_t deg_cap;
    uint64_t deg_rows;      /* training rows counted */
    uint64_t top;           /* the window's largest index + 1 */
    int rc;                 /* 0, -ENOMEM, or 1: a label the head did not have */
    char why[96];
} stream_count;

static void *count_main(void *arg)
{
    stream_count *c = arg;
    const run_state *rs = c->rs;
    const hog_train_params *p = rs->p;
    c->top = 0;
    c->rc = 0;
    for (uint32_t b = 0; b < c->n; b++) {
        const hog_block *blk = &c->blks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            if (!label_known(rs, blk->label[r])) {
                snprintf(c->why, sizeof(c->why), "label %g first appears in row %llu", (double)blk->label[r],
                         (unsigned long long)(c->row0 + (uint64_t)b * c->rpb + r + 1));
                c->rc = 1;
                return NULL;
            }
            if (blk->ptr[r + 1] > blk->ptr[r])
                c->top = HOG_MAX(c->top, (uint64_t)blk->index[blk->ptr[r + 1] - 1] + 1);
        }
    }
    if (c->top > c->deg_cap) {
        uint64_t cap = HOG_MAX(c->top, 2 * c->deg_cap);
        uint32_t *d = hog_realloc(c->deg, cap * sizeof(uint32_t));
        if (!d) {
            c->rc = -ENOMEM;
            return NULL;
        }
        memset(d + c->deg_cap, 0, (cap - c->deg_cap) * sizeof(uint32_t));
        c->deg = d;
        c->deg_cap = cap;
    }
    uint32_t *const deg = c->deg;
    for (uint32_t b = 0; b < c->n; b++) {
        const hog_block *blk = &c->blks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            if (p->holdout > 0 && hog_row_held_out(c->row0 + (uint64_t)b * c->rpb + r, p->holdout, p->seed))
                continue;
            c->deg_rows++;
            for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                deg[blk->index[k]]++;
        }
    }
    return NULL;
}

/* The L2 scales of a streamed epoch, rows / degree from the rows counted
 * so far: set again whenever the rows have doubled since the last time, so
 * the estimates follow the data at the cost of one pass over the features
 * per doubling. A feature not counted yet gets the scale of one row in
 * all, which is what it will have when it first shows. */
static void stream_scales(run_state *rs, const stream_count *c)
{
    const double rows = (double)c->deg_rows;
    for (uint64_t j = 0; j < rs->dim; j++) {
        uint32_t d = j < c->deg_cap ? c->deg[j] : 0;
        rs->l2_scale[j] = (float)(d ? rows / d : rows);
    }
}

/* Settles the run's shape from the head (n blocks): label values, path,
 * features, degrees and tables, and makes the model. Returns 0, -ENOMEM,
 * or 1 when the head cannot settle it (*why says why). */
static int stream_head(run_state *rs, const hog_block *head, uint32_t n, uint32_t rpb, char *why, size_t why_len)
{
    const hog_train_params *p = rs->p;
    uint64_t rows = 0, nnz = 0, top = 0;
    int want_classes = !hog_loss_is_regression(p->loss);
    if (want_classes && !(rs->classes_of = hog_malloc(MAX_CLASSES * sizeof(double))))
        return -ENOMEM;
    for (uint32_t b = 0; b < n; b++) {
        const hog_block *blk = &head[b];
        rows += blk->rows;
        nnz += blk->nnz;
        for (uint32_t r = 0; r < blk->rows; r++) {
            double y = blk->label[r];
            if (want_classes && ((p->loss == HOG_LOSS_SOFTMAX && y != floor(y)) ||
                                 class_insert(rs->classes_of, &rs->classes, y) < 0)) {
                snprintf(why, why_len, "the labels do not fit the loss");
                return 1;
            }
            if (blk->ptr[r + 1] > blk->ptr[r])
                top = HOG_MAX(top, (uint64_t)blk->index[blk->ptr[r + 1] - 1] + 1);
        }
    }
    char detail[160];
    if (run_outputs(rs, detail, sizeof(detail)) < 0) {
        snprintf(why, why_len, "its first %llu rows have %u label values", (unsigned long long)rows, rs->classes);
        return 1;
    }
    const char *forced;
    if (run_path(rs, rows, top, nnz, &forced, detail, sizeof(detail)) < 0 || rs->path == HOG_PATH_DENSE) {
        snprintf(why, why_len, "dense data (the dense path)");
        return 1;
    }
    log_path(rs, forced, rows, top, nnz);
    rs->dim = HOG_MAX(top, 1);
    if (!(rs->deg = hog_calloc(rs->dim, sizeof(uint32_t))))
        return -ENOMEM;
    int rc = run_alloc(rs, NULL, 0);
    if (rc < 0)
        return rc;
    /* The head's degrees, as every later window's are counted (its labels
     * are the classes, and deg has room for its indices). */
    stream_count c = {.rs = rs, .blks = head, .n = n, .row0 = 0, .rpb = rpb, .deg = rs->deg, .deg_cap = rs->dim};
    count_main(&c);
    rs->deg_rows = c.deg_rows;
    return run_tables(rs);
}

/* Trains one window: a pass of the workers over its blocks' segments. */
static void stream_pass(run_state *rs, const hog_block *blks, uint32_t n, uint64_t row0, uint32_t rpb,
                        double frac0, double frac1, uint32_t *units, uint32_t window_index, double t_start)
{
    uint32_t spb = (rpb + SEGMENT_ROWS - 1) / SEGMENT_ROWS, nunits = 0;
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t s = 0; s * SEGMENT_ROWS < blks[b].rows; s++)
            units[nunits++] = b * spb + s;
    hog_dataset win;
    memset(&win, 0, sizeof(win));
    win.blocks = (hog_block *)blks;
    win.info.blocks = n;
    win.info.rows_per_block = rpb;
    win.fd = -1;
    epoch_job job = job_for(rs, 0);
    job.ds = &win;
    job.units = units;
    job.nunits = nunits;
    job.segs_per_block = spb;
    job.row0 = row0;
    job.frac0 = frac0;
    job.frac1 = frac1;
    job.window = 1;
    /* A segment's rows are shuffled by (seed, epoch, its number in the
     * window): numbers repeat across windows, so the window's index goes
     * into the order of the segments, and the rows differ by block. */
    hog_rng rng = {hog_mix64(rs->p->seed ^ 0x57ea0000ull) + window_index};
    hog_shuffle_u32(units, nunits, &rng);
    rs->st.step = unit_step(&job, 0);
    job.t0 = hog_now();
    job.done_seconds = job.t0 - t_start;
    run_pass(rs, &job);
}

/* Trains the first epoch on the feed's blocks as they come, the head (n
 * blocks in held, which has room for two windows) first: each window is
 * one pass of the workers while a counting thread takes the next.
 * Returns 0 (rs->deg holds every training row's degrees, rs->seconds the
 * epoch's time), 1 when a label the head lacked showed (why says which),
 * or a negative error. *held_n: the blocks still held, to give back. */
static int stream_epoch(run_state *rs, hog_feed *feed, hog_block *held, uint32_t n, double pos, uint32_t window,
                        uint32_t rpb, uint32_t *units, uint32_t *held_n, char *why, size_t why_len, char *err,
                        size_t err_len)
{
    int rc = 0;
    rs->st.epoch = 1;
    const double t_start = hog_now();
    /* The window being trained (cur) and the next (nxt), counted meanwhile. */
    stream_count sc = {.rs = rs, .rpb = rpb, .deg = rs->deg, .deg_cap = rs->dim, .deg_rows = rs->deg_rows};
    rs->deg = NULL;
    stream_scales(rs, &sc);
    hog_block *cur = held, *nxt = held + window;
    uint32_t ncur = n, nnxt = 0;
    uint64_t row0 = 0, scaled = sc.deg_rows;
    double frac0 = 0, pos_cur = pos;
    for (uint32_t w = 0; ncur > 0 && rc == 0; w++) {
        double pos_nxt = pos_cur;
        while (nnxt < window && (rc = hog_feed_next(feed, &nxt[nnxt], &pos_nxt, err, err_len)) == 1)
            nnxt++;
        if (rc < 0)
            break;
        rc = 0;
        uint64_t row_nxt = row0;
        for (uint32_t b = 0; b < ncur; b++)
            row_nxt += cur[b].rows;
        pthread_t counter;
        int counting = 0;
        sc.rc = 0;
        if (nnxt) {
            sc.blks = nxt;
            sc.n = nnxt;
            sc.row0 = row_nxt;
            counting = pthread_create(&counter, NULL, count_main, &sc) == 0;
            if (!counting) /* no thread to spare: count first */
                count_main(&sc);
        }
        stream_pass(rs, cur, ncur, row0, rpb, frac0, pos_cur, units, w, t_start);
        if (counting)
            pthread_join(counter, NULL);
        for (uint32_t b = 0; b < ncur; b++)
            hog_feed_release(feed);
        hog_block *tmp = cur;
        cur = nxt;
        nxt = tmp;
        ncur = nnxt;
        nnxt = 0;
        row0 = row_nxt;
        frac0 = pos_cur;
        pos_cur = pos_nxt;
        if (sc.rc != 0) {
            rc = sc.rc < 0 ? hog_fail(sc.rc, err, err_len, "out of memory") : 1;
            if (rc == 1)
                snprintf(why, why_len, "%s", sc.why);
        } else if (sc.top > rs->dim) { /* features the model has no room for yet */
            uint64_t old = rs->dim;
            if ((rc = run_grow(rs, HOG_MAX(sc.top, 2 * rs->dim))) < 0)
                hog_fail(rc, err, err_len, "out of memory");
            for (uint64_t j = old; rc == 0 && j < rs->dim; j++)
                rs->l2_scale[j] = (float)sc.deg_rows;
        }
        if (rc == 0 && sc.deg_rows >= 2 * scaled) {
            stream_scales(rs, &sc);
            scaled = sc.deg_rows;
        }
    }
    rs->seconds = hog_now() - t_start;
    /* The degrees are the run's again, with room for every feature. */
    rs->deg = sc.deg;
    rs->deg_rows = sc.deg_rows;
    *held_n = ncur + nnxt;
    if (rc == 0 && sc.deg_cap < rs->dim) {
        uint32_t *d = hog_realloc(rs->deg, rs->dim * sizeof(uint32_t));
        if (!d)
            return hog_fail(-ENOMEM, err, err_len, "out of memory");
        memset(d + sc.deg_cap, 0, (rs->dim - sc.deg_cap) * sizeof(uint32_t));
        rs->deg = d;
    }
    return rc;
}

/* Whether cache is there and newer than input (or as new). A pipe's text
 * is new every time. */
static int cache_fresh(const char *input, const char *cache)
{
    struct stat in, ca;
    if (stat(input, &in) < 0 || stat(cache, &ca) < 0 || hog_is_stream(in.st_mode))
        return 0;
    return ca.st_mtim.tv_sec > in.st_mtim.tv_sec ||
           (ca.st_mtim.tv_sec == in.st_mtim.tv_sec && ca.st_mtim.tv_nsec >= in.st_mtim.tv_nsec);
}

/* Opens the test set (if any) the way the training text was read: with
 * its index base when the parameters leave it to detection. */
static int open_test(const char *test_path, const hog_read_params *r, int train_base, hog_dataset **test,
                     char *err, size_t err_len)
{
    *test = NULL;
    if (!test_path)
        return 0;
    hog_read_params tr = *r;
    if (tr.index_base < 0)
        tr.index_base = train_base;
    return hog_dataset_open(test_path, &tr, test, err, err_len);
}

int hog_trainer_run_file(hog_trainer *t, const char *path, const hog_read_params *rp, const char *cache_path,
                         const char *test_path, hog_model **out, hog_file_run *run, char *err, size_t err_len)
{
    *out = NULL;
    const hog_train_params *p = &t->p;
    hog_file_run fr;
    memset(&fr, 0, sizeof(fr));
    *run = fr;
    if (p->early_stop && !test_path && p->holdout <= 0)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "early_stop needs a test set or a holdout fraction to measure improvement on");
    double t0 = hog_now();
    hog_read_params r = rp ? *rp : hog_read_params_default();
    if (r.rows_per_block == 0)
        r.rows_per_block = HOG_DEFAULT_ROWS_PER_BLOCK;
    const uint32_t rpb = r.rows_per_block;
    hog_format fmt;
    int rc = hog_resolve_format(path, &r, &fmt, err, err_len);
    if (rc < 0)
        return rc;
    const char *refusal = stream_refusal(p);
    /* The first epoch's steps follow its position in the file, which a
     * pipe's unknown length leaves unknown: its text is read whole first
     * (into memory or the cache, as a streamed run would keep it anyway). */
    struct stat in_st;
    if (!refusal && stat(path, &in_st) == 0 && hog_is_stream(in_st.st_mode))
        refusal = "the input is a pipe, whose length is unknown";
    hog_dataset *ds = NULL, *test = NULL;
    hog_feed *feed = NULL;
    run_state rs;
    run_init(&rs, t);
    /* The feed may hold a window being trained, the next being counted and
     * one being parsed. */
    const uint32_t window = stream_window(rs.nth), depth = 3 * window;
    _Static_assert(STREAM_HEAD <= 4, "the head is a window: stream_window is at least 4");
    hog_block *held = hog_malloc(2 * window * sizeof(hog_block));
    uint32_t *units = hog_malloc((size_t)window * ((rpb + SEGMENT_ROWS - 1) / SEGMENT_ROWS) * sizeof(uint32_t));
    uint32_t n = 0;
    int restarted = 0;
    if (!held || !units) {
        rc = hog_fail(-ENOMEM, err, err_len, "out of memory");
        goto out;
    }
    if (cache_path && cache_fresh(path, cache_path)) {
        hog_log(HOG_LOG_INFO, "reading %s, the cache of %s", cache_path, path);
        fr.cache_used = 1;
        if ((rc = hog_hgd_open(cache_path, &ds, err, err_len)) < 0)
            goto out;
        goto whole;
    }
    if (fmt == HOG_FORMAT_BINARY) {
        if (cache_path)
            rc = hog_dataset_convert(path, &r, cache_path, NULL, err, err_len);
        if (rc == 0)
            rc = hog_hgd_open(cache_path ? cache_path : path, &ds, err, err_len);
        if (rc < 0)
            goto out;
        goto whole;
    }
    rc = hog_feed_start(path, &r, cache_path, depth, &feed, err, err_len);
    if (rc < 0)
        goto out;
    if (refusal) { /* the feed only builds the data set */
        snprintf(fr.note, sizeof(fr.note), "%s", refusal);
        goto drain;
    }
    double pos = 0;
    while (n < STREAM_HEAD && (rc = hog_feed_next(feed, &held[n], &pos, err, err_len)) == 1)
        n++;
    if (rc < 0)
        goto out;
    /* The test set now, read as the training text is, so that a bad one
     * fails the run before the first epoch, not after it. */
    if (n && (rc = open_test(test_path, &r, hog_feed_index_base(feed), &test, err, err_len)) < 0)
        goto out;
    rc = n ? stream_head(&rs, held, n, rpb, fr.note, sizeof(fr.note)) : 1;
    if (rc < 0)
        goto out;
    if (rc == 1)
        goto drain;

    hog_log(HOG_LOG_INFO, "training while reading %s: the first epoch takes its rows in file order, in windows of "
            "%u blocks", path, window);
    rc = stream_epoch(&rs, feed, held, n, pos, window, rpb, units, &n, fr.note, sizeof(fr.note), err, err_len);
    if (rc < 0)
        goto out;
    if (rc == 1) {
        hog_log(HOG_LOG_INFO, "%s: %s: training again from the start on the whole file", path, fr.note);
        snprintf(fr.note + strlen(fr.note), sizeof(fr.note) - strlen(fr.note), "; started over");
        restarted = 1;
        goto drain;
    }
    fr.streamed = 1;
    rc = hog_feed_finish(feed, &ds, err, err_len);
    if (rc < 0)
        goto out;
    fr.read_seconds = hog_now() - t0;
    /* The whole data set: its size, and the tables from every row's degrees. */
    uint64_t dim = HOG_MAX(ds->info.features, 1);
    if ((rc = run_grow(&rs, dim)) == 0) {
        run_settle_dim(&rs, dim);
        rs.ooc = hog_dataset_bytes(ds) > rs.limit;
        rc = run_tables(&rs);
    }
    if (rc == 0)
        rc = run_alloc_final(&rs);
    if (rc == 0)
        rc = run_units(&rs, ds);
    if (rc == 0)
        rc = run_epochs(&rs, ds, test, 1, out, err, err_len);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    goto out;

drain:
    if (p->stream && !restarted)
        hog_log(HOG_LOG_INFO, "reading %s whole before training: %s", path, fr.note);
    for (uint32_t b = 0; b < n; b++)
        hog_feed_release(feed);
    n = 0;
    hog_feed_drain(feed);
    run_state_free(&rs);
    run_init(&rs, t);
    rc = hog_feed_finish(feed, &ds, err, err_len);
    if (rc < 0)
        goto out;
whole:
    fr.read_seconds = hog_now() - t0;
    if (!test)
        rc = open_test(test_path, &r, ds->info.index_base, &test, err, err_len);
    if (rc == 0)
        rc = hog_trainer_run(t, ds, test, out, err, err_len);
out:
    run_state_free(&rs);
    for (uint32_t b = 0; feed && b < n; b++)
        hog_feed_release(feed);
    hog_feed_free(feed);
    hog_free(held);
    hog_free(units);
    if (rc < 0) {
        hog_model_free(*out);
        *out = NULL;
        hog_dataset_close(test);
        hog_dataset_close(ds);
        return rc;
    }
    fr.train = ds;
    fr.test = test;
    *run = fr;
    return 0;
}
