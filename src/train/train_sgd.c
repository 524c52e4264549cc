/* train_sgd.c: the HOGWILD! trainer: workers run SGD over shuffled row segments, all writing one shared model without locks. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train.h"

/* Rows are handed out in segments of this many rows of one block: large
 * enough that claiming one (an atomic add) costs nothing, small enough that
 * a few thousand segments balance the workers. */
#define SEGMENT_ROWS 512u
#define MAX_CLASSES 65536u

struct hog_trainer {
    hog_train_params p;
    hog_pool *pool;
};

int hog_trainer_create(const hog_train_params *p, hog_trainer **out, char *err, size_t err_len)
{
    *out = NULL;
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
/* Collects the distinct label values of ds, ascending, into a new array.
 * Returns the count, or a negative error with a message. */
static int collect_classes(const hog_dataset *ds, hog_loss loss, double **out, char *err, size_t err_len)
{
    double *c = hog_malloc(MAX_CLASSES * sizeof(double));
    if (!c)
        return -ENOMEM;
    uint32_t n = 0;
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        const hog_block *blk = &ds->blocks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            double y = blk->label[r];
            if (loss == HOG_LOSS_SOFTMAX && y != floor(y)) {
                hog_free(c);
                return hog_fail(HOG_ELABEL, err, err_len,
                                "row %llu: label %g is not an integer class (softmax needs class labels)",
                                (unsigned long long)b * ds->info.rows_per_block + r, y);
            }
            uint32_t lo = 0, hi = n;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (c[mid] < y)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < n && c[lo] == y)
                continue;
            if (n == MAX_CLASSES) {
                hog_free(c);
                return hog_fail(HOG_ELABEL, err, err_len, "more than %u distinct labels", MAX_CLASSES);
            }
            memmove(c + lo + 1, c + lo, (n - lo) * sizeof(double));
            c[lo] = y;
            n++;
        }
    }
    *out = c;
    return (int)n;
}

/* ===================================================================== *
 *  One epoch
 * ===================================================================== */
typedef struct worker_state {
    _Alignas(HOG_CACHELINE) double loss;
    uint64_t examples;
    uint64_t nnz;
    float *scratch;   /* 4 * outputs floats: scores, gradient, local bias, its start */
    uint32_t *perm;   /* SEGMENT_ROWS */
} worker_state;

typedef struct epoch_job {
    const hog_train_params *p;
    hog_model *m;
    const hog_dataset *ds;
    const float *scale;    /* per feature: rows / rows touching it, for sparse L2 */
    const uint32_t *units; /* segment ids in this epoch's order */
    uint32_t nunits;
    uint32_t segs_per_block;
    unsigned epoch;        /* 0-based */
    float mid;             /* binary: labels above this are positive */
    worker_state *ws;
    double t0;             /* when training started, for progress reports */
    double done_seconds;   /* training seconds before this epoch */
    hog_epoch_stats *stats;/* the epoch's stats so far, for progress reports */
    _Alignas(HOG_CACHELINE) atomic_uint next;
} epoch_job;

static float unit_step(const epoch_job *job, uint32_t pos)
{
    const hog_train_params *p = job->p;
    if (p->schedule == HOG_SCHEDULE_INVSCALING) {
        double t = job->epoch + (double)pos / job->nunits;
        return (float)(p->step / pow(1.0 + t, p->power));
    }
    return (float)(p->step * pow(p->decay, job->epoch));
}

/* One example of a binary or squared loss. Returns the example's loss. */
static inline float update_binary(hog_model *m, const float *scale, const hog_row *row, float y,
                                  float step, float reg, float *bias)
{
    hog_weight *w = m->w;
    const uint32_t *idx = row->index;
    const float *val = row->value;
    float margin = *bias;
    for (uint32_t i = 0; i < row->nnz; i++)
        margin += hog_w_load(&w[idx[i]]) * val[i];
    float loss;
    float sg = step * hog_loss_grad(m->info.loss, margin, y, &loss);
    if (reg > 0) {
        for (uint32_t i = 0; i < row->nnz; i++) {
            uint32_t j = idx[i];
            float shrink = fmaxf(0.0f, 1.0f - reg * scale[j]);
            hog_w_store(&w[j], hog_w_load(&w[j]) * shrink - sg * val[i]);
        }
    } else if (sg != 0) {
        for (uint32_t i = 0; i < row->nnz; i++)
            hog_w_store(&w[idx[i]], hog_w_load(&w[idx[i]]) - sg * val[i]);
    }
    *bias -= sg;
    return loss;
}

/* One example of softmax regression over K classes. */
static inline float update_softmax(hog_model *m, const float *scale, const hog_row *row, int y,
                                   float step, float reg, float *bias, float *s, float *g)
{
    const uint32_t K = m->outputs;
    for (uint32_t k = 0; k < K; k++)
        s[k] = bias[k];
    for (uint32_t i = 0; i < row->nnz; i++) {
        const hog_weight *wj = m->w + (uint64_t)row->index[i] * K;
        float x = row->value[i];
        for (uint32_t k = 0; k < K; k++)
            s[k] += hog_w_load(&wj[k]) * x;
    }
    float score_y = s[y];
    float loss = hog_softmax(s, K) - score_y;
    for (uint32_t k = 0; k < K; k++) {
        g[k] = step * (s[k] - (k == (uint32_t)y ? 1.0f : 0.0f));
        bias[k] -= g[k];
    }
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = row->index[i];
        hog_weight *wj = m->w + (uint64_t)j * K;
        float x = row->value[i];
        float shrink = reg > 0 ? fmaxf(0.0f, 1.0f - reg * scale[j]) : 1.0f;
        for (uint32_t k = 0; k < K; k++)
            hog_w_store(&wj[k], hog_w_load(&wj[k]) * shrink - g[k] * x);
    }
    return loss;
}

static void run_unit(epoch_job *job, worker_state *ws, uint32_t pos)
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
    uint64_t first = (uint64_t)b * ds->info.rows_per_block + start;

    /* The segment's rows in an order that depends only on (seed, epoch,
     * segment), so one thread replays bit for bit. */
    hog_rng rng = {hog_mix64(p->seed) ^ hog_mix64(((uint64_t)job->epoch << 32) | unit)};
    for (uint32_t i = 0; i < n; i++)
        ws->perm[i] = i;
    hog_shuffle_u32(ws->perm, n, &rng);

    float step = unit_step(job, pos);
    float reg = step * (float)p->l2;
    float *s = ws->scratch, *g = s + K, *bias = g + K, *bias0 = bias + K;
    /* The intercept is touched by every example, so writing it to shared
     * memory each time would bounce its cache line between all cores. Each
     * worker steps a private copy through the segment and adds its change to
     * the shared value once at the end (a delayed HOGWILD! update). */
    for (uint32_t k = 0; k < K; k++)
        bias[k] = bias0[k] = hog_w_load(&m->bias[k]);
    double loss = 0;
    uint64_t examples = 0, nnz = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = start + ws->perm[i];
        if (p->holdout > 0 && hog_row_held_out(first - start + r, p->holdout, p->seed))
            continue;
        const uint32_t *ptr = blk->ptr;
        hog_row row = {blk->index + ptr[r], blk->value + ptr[r], ptr[r + 1] - ptr[r], blk->label[r]};
        if (m->info.loss == HOG_LOSS_SOFTMAX) {
            int y = hog_model_class_of(m, row.label);
            loss += (double)update_softmax(m, job->scale, &row, y, step, reg, bias, s, g);
        } else {
            float y = m->info.loss == HOG_LOSS_SQUARED ? row.label : (row.label > job->mid ? 1.0f : -1.0f);
            loss += (double)update_binary(m, job->scale, &row, y, step, reg, bias);
        }
        examples++;
        nnz += row.nnz;
    }
    if (p->bias)
        for (uint32_t k = 0; k < K; k++)
            hog_w_store(&m->bias[k], hog_w_load(&m->bias[k]) + (bias[k] - bias0[k]));
    ws->loss += loss;
    ws->examples += examples;
    ws->nnz += nnz;
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
    st.progress = (double)(pos + 1) / job->nunits;
    st.seconds = job->done_seconds + (now - job->t0);
    p->progress(p->progress_ctx, &st, 0);
}

static void epoch_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    epoch_job *job = arg;
    worker_state *ws = &job->ws[ith];
    double last = hog_now();
    for (;;) {
        uint32_t pos = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (pos >= job->nunits)
            break;
        run_unit(job, ws, pos);
        if (ith == 0)
            maybe_report(job, pos, &last);
    }
}

/* ===================================================================== *
 *  A run
 * ===================================================================== */
/* Per-feature L2 scale: HOGWILD! spreads the regulariser over the examples,
 * each applying it only to the features it touches, weighted by
 * rows / (rows touching the feature), so that over an epoch every weight is
 * shrunk as much as by the full-gradient term l2/2 * |w|^2. */
static float *degree_scale(const hog_dataset *ds, const hog_train_params *p, uint64_t dim)
{
    uint32_t *deg = hog_calloc(dim, sizeof(uint32_t));
    float *scale = hog_malloc(dim * sizeof(float));
    if (!deg || !scale) {
        hog_free(deg);
        hog_free(scale);
        return NULL;
    }
    uint64_t rows = 0;
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        const hog_block *blk = &ds->blocks[b];
        for (uint32_t r = 0; r < blk->rows; r++) {
            uint64_t i = (uint64_t)b * ds->info.rows_per_block + r;
            if (p->holdout > 0 && hog_row_held_out(i, p->holdout, p->seed))
                continue;
            rows++;
            for (uint32_t k = blk->ptr[r]; k < blk->ptr[r + 1]; k++)
                deg[blk->index[k]]++;
        }
    }
    for (uint64_t j = 0; j < dim; j++)
        scale[j] = deg[j] ? (float)((double)rows / deg[j]) : 0.0f;
    hog_free(deg);
    return scale;
}

typedef struct run_state {
    worker_state *ws;
    unsigned nth;
    uint32_t *units;
    float *scale;
    double *classes;
} run_state;

static void run_state_free(run_state *rs)
{
    if (rs->ws)
        for (unsigned i = 0; i < rs->nth; i++) {
            hog_free(rs->ws[i].scratch);
            hog_free(rs->ws[i].perm);
        }
    hog_free(rs->ws);
    hog_free(rs->units);
    hog_free(rs->scale);
    hog_free(rs->classes);
}

int hog_trainer_run(hog_trainer *t, const hog_dataset *train, const hog_dataset *test,
                    hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    const hog_train_params *p = &t->p;
    if (train->info.rows == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "the training set has no rows");
    run_state rs = {0};
    rs.nth = hog_pool_threads(t->pool);
    hog_model *m = NULL;
    int rc = 0;

    /* Classes: binary losses need exactly two label values, softmax integers. */
    uint32_t classes = 0, outputs = 1;
    if (p->loss != HOG_LOSS_SQUARED) {
        rc = collect_classes(train, p->loss, &rs.classes, err, err_len);
        if (rc < 0)
            goto fail;
        classes = (uint32_t)rc;
        if (p->loss != HOG_LOSS_SOFTMAX && classes != 2) {
            rc = hog_fail(HOG_ELABEL, err, err_len,
                          "%s loss needs exactly two label values, the training set has %u%s", hog_loss_name(p->loss),
                          classes, classes > 2 ? " (use --loss softmax for multiclass)" : "");
            goto fail;
        }
        if (p->loss == HOG_LOSS_SOFTMAX) {
            if (classes < 2) {
                rc = hog_fail(HOG_ELABEL, err, err_len, "softmax needs at least two classes, the training set has %u", classes);
                goto fail;
            }
            outputs = classes;
        }
    }
    uint64_t dim = HOG_MAX(train->info.features, 1);
    m = hog_model_new(p->loss, dim, outputs, classes);
    rs.ws = hog_aligned_alloc(HOG_CACHELINE, rs.nth * sizeof(worker_state));
    uint32_t rpb = train->info.rows_per_block;
    uint32_t segs_per_block = (rpb + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
    rs.units = hog_malloc((size_t)train->info.blocks * segs_per_block * sizeof(uint32_t));
    if (!m || !rs.ws || !rs.units) {
        rc = -ENOMEM;
        goto fail;
    }
    memset(rs.ws, 0, rs.nth * sizeof(worker_state));
    for (unsigned i = 0; i < rs.nth; i++) {
        rs.ws[i].scratch = hog_malloc(4 * outputs * sizeof(float));
        rs.ws[i].perm = hog_malloc(SEGMENT_ROWS * sizeof(uint32_t));
        if (!rs.ws[i].scratch || !rs.ws[i].perm) {
            rc = -ENOMEM;
            goto fail;
        }
    }
    if (classes)
        memcpy(m->class_labels, rs.classes, classes * sizeof(double));
    if (p->l2 > 0 && !(rs.scale = degree_scale(train, p, dim))) {
        rc = -ENOMEM;
        goto fail;
    }
    uint32_t nunits = 0;
    for (uint32_t b = 0; b < train->info.blocks; b++)
        for (uint32_t s = 0; s * SEGMENT_ROWS < train->blocks[b].rows; s++)
            rs.units[nunits++] = b * segs_per_block + s;

    m->info.params = *p;
    m->info.params.threads = rs.nth;
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    m->info.data_fingerprint = train->info.fingerprint;

    const hog_dataset *eval_ds = test ? test : (p->holdout > 0 ? train : NULL);
    hog_rowsel eval_sel = {test ? 0.0 : p->holdout, p->seed, 1};
    hog_rowsel train_sel = {p->holdout, p->seed, 0};

    hog_epoch_stats st;
    memset(&st, 0, sizeof(st));
    st.epochs = p->epochs;
    st.test = hog_metrics_none();
    double seconds = 0;
    for (unsigned e = 0; e < p->epochs; e++) {
        epoch_job job = {
            .p = p, .m = m, .ds = train, .scale = rs.scale, .units = rs.units, .nunits = nunits,
            .segs_per_block = segs_per_block, .epoch = e, .ws = rs.ws, .done_seconds = seconds, .stats = &st,
        };
        job.mid = classes == 2 ? (float)(0.5 * (rs.classes[0] + rs.classes[1])) : 0.0f;
        atomic_init(&job.next, 0);
        hog_rng rng = {hog_mix64(p->seed ^ 0x5eed0000ull) + e};
        hog_shuffle_u32(rs.units, nunits, &rng);
        uint64_t ex0 = st.examples;
        double loss0 = 0;
        for (unsigned i = 0; i < rs.nth; i++)
            loss0 += rs.ws[i].loss;

        st.epoch = e + 1;
        st.progress = 0;
        st.step = unit_step(&job, 0);
        job.t0 = hog_now();
        hog_pool_run(t->pool, epoch_worker, &job);
        seconds += hog_now() - job.t0;

        double loss = 0;
        st.examples = st.nnz = 0;
        for (unsigned i = 0; i < rs.nth; i++) {
            loss += rs.ws[i].loss;
            st.examples += rs.ws[i].examples;
            st.nnz += rs.ws[i].nnz;
        }
        st.progress = 1;
        st.seconds = seconds;
        st.train_loss = st.examples > ex0 ? (loss - loss0) / (double)(st.examples - ex0) : (double)NAN;
        if (!isfinite(st.train_loss) && st.examples > ex0)
            hog_log(HOG_LOG_WARN, "epoch %u: the training loss is not finite: lower --step", e + 1);
        if (eval_ds) {
            rc = hog_evaluate(m, eval_ds, &eval_sel, t->pool, &st.test);
            if (rc < 0)
                goto fail;
        }
        if (p->progress)
            p->progress(p->progress_ctx, &st, 1);
    }
    if (st.examples == 0) {
        rc = hog_fail(HOG_EEMPTY, err, err_len, "every training row is held out: lower the holdout fraction");
        goto fail;
    }
    rc = hog_evaluate(m, train, &train_sel, t->pool, &m->info.train);
    if (rc < 0)
        goto fail;
    m->info.train_rows = m->info.train.rows;
    m->info.test = st.test;
    m->info.seconds = seconds;
    run_state_free(&rs);
    *out = m;
    return 0;
fail:
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    run_state_free(&rs);
    hog_model_free(m);
    return rc;
}
