/* train_mf.c: matrix factorisation by SGD, on FPSGD's grid or HOGWILD!'s shuffled segments: parameters, the model, prediction and training. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_mf.h"

#define SEG HOG_MF_SEG

/* ===================================================================== *
 *  Parameters
 * ===================================================================== */
hog_mf_params hog_mf_params_default(void)
{
    hog_mf_params p;
    memset(&p, 0, sizeof(p));
    p.rank = 32;
    p.threads = 0;
    p.epochs = 20;
    p.step = 0.1;
    p.decay = 0.95;
    p.l2 = 0.1;
    p.l2_bias = 0.01;
    p.init = 0.1;
    p.holdout = 0;
    p.seed = 1;
    p.clamp = 1;
    p.bind = HOG_BIND_AUTO;
    p.schedule = HOG_MF_GRID;
    p.grid = 0;
    p.step_schedule = HOG_SCHEDULE_ADAGRAD;
    return p;
}

int hog_mf_params_check(const hog_mf_params *p, const char **field)
{
    const char *bad = NULL;
    if (p->rank < 1 || p->rank > HOG_MF_MAX_RANK)
        bad = "rank";
    else if (p->threads > 4096)
        bad = "threads";
    else if (p->epochs < 1 || p->epochs > 1000000)
        bad = "epochs";
    else if (!(p->step > 0) || !isfinite(p->step))
        bad = "step";
    else if (!(p->decay > 0 && p->decay <= 1))
        bad = "decay";
    else if (!(p->l2 >= 0) || !isfinite(p->l2))
        bad = "l2";
    else if (!(p->l2_bias >= 0) || !isfinite(p->l2_bias))
        bad = "l2_bias";
    else if (!(p->init >= 0) || !isfinite(p->init))
        bad = "init";
    else if (!(p->holdout >= 0 && p->holdout < 1))
        bad = "holdout";
    else if (p->clamp != 0 && p->clamp != 1)
        bad = "clamp";
    else if ((unsigned)p->bind > HOG_BIND_AUTO)
        bad = "bind";
    else if (p->schedule != HOG_MF_HOGWILD && p->schedule != HOG_MF_GRID && p->schedule != HOG_MF_ARRIVAL)
        bad = "schedule";
    else if (p->grid > HOG_MF_MAX_GRID)
        bad = "grid";
    else if (p->step_schedule != HOG_SCHEDULE_DECAY && p->step_schedule != HOG_SCHEDULE_ADAGRAD)
        bad = "step_schedule";
    else if (p->early_stop > 1000000)
        bad = "early_stop";
    if (field)
        *field = bad;
    return bad ? HOG_EPARAM : 0;
}

/* ===================================================================== *
 *  The model
 * ===================================================================== */
hog_mf_model *hog_mf_new(uint32_t users, uint32_t items, uint32_t rank)
{
    hog_mf_model *m = hog_calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->info.params = hog_mf_params_default();
    m->info.params.bind = 1; /* as hog_model_new's: what files had before auto */
    m->info.params.rank = rank;
    m->info.users = users;
    m->info.items = items;
    m->info.rank = rank;
    m->info.train_rmse = m->info.test_rmse = NAN;
    /* Rows of whole cache lines, so a row is one or two lines of its own
     * and the padding (zero, and kept zero by the step) lets the loops run
     * in full vectors. */
    m->stride = (rank + 15) & ~15u;
    size_t pn = (size_t)(users ? users : 1) * m->stride, qn = (size_t)(items ? items : 1) * m->stride;
    m->p = hog_aligned_alloc(HOG_CACHELINE, pn * sizeof(hog_weight));
    m->q = hog_aligned_alloc(HOG_CACHELINE, qn * sizeof(hog_weight));
    m->bu = hog_calloc(users ? users : 1, sizeof(hog_weight));
    m->bi = hog_calloc(items ? items : 1, sizeof(hog_weight));
    if (!m->p || !m->q || !m->bu || !m->bi) {
        hog_mf_free(m);
        return NULL;
    }
    memset((void *)m->p, 0, pn * sizeof(hog_weight));
    memset((void *)m->q, 0, qn * sizeof(hog_weight));
    return m;
}

/* HOG_SCHEDULE_ADAGRAD's sums, every row's at 1. Returns 0 or -ENOMEM. */
static int mf_adagrad_new(hog_mf_model *m)
{
    uint32_t users = m->info.users ? m->info.users : 1, items = m->info.items ? m->info.items : 1;
    m->gp = hog_malloc(users * sizeof(hog_weight));
    m->gq = hog_malloc(items * sizeof(hog_weight));
    if (!m->gp || !m->gq)
        return -ENOMEM;
    for (uint32_t u = 0; u < users; u++)
        hog_w_store(&m->gp[u], 1.0f);
    for (uint32_t i = 0; i < items; i++)
        hog_w_store(&m->gq[i], 1.0f);
    return 0;
}

void hog_mf_adagrad_free(hog_mf_model *m)
{
    hog_free((void *)m->gp);
    hog_free((void *)m->gq);
    m->gp = m->gq = NULL;
}

int hog_mf_finite(const hog_mf_model *m)
{
    const uint32_t users = m->info.users, items = m->info.items, rank = m->info.rank;
    return hog_w_finite(m->bu, users, 1, 1) && hog_w_finite(m->bi, items, 1, 1) &&
           hog_w_finite(m->p, users, rank, m->stride) && hog_w_finite(m->q, items, rank, m->stride);
}

void hog_mf_free(hog_mf_model *m)
{
    if (!m)
        return;
    hog_free((void *)m->p);
    hog_free((void *)m->q);
    hog_free((void *)m->bu);
    hog_free((void *)m->bi);
    hog_mf_adagrad_free(m);
    hog_mf_free(m->best);
    hog_idmap_free(&m->users);
    hog_idmap_free(&m->items);
    hog_free(m);
}

void hog_mf_get_info(const hog_mf_model *m, hog_mf_info *info)
{
    *info = m->info;
}

void hog_mf_get_epochs(const hog_mf_model *m, unsigned *epochs_run, unsigned *best_epoch)
{
    if (epochs_run)
        *epochs_run = m->epochs_run;
    if (best_epoch)
        *best_epoch = m->best_epoch;
}

/* Copies the biases and factors of src into dst, of the same shape. */
static void mf_copy_rows(hog_mf_model *dst, const hog_mf_model *src)
{
    const size_t np = (size_t)src->info.users * src->stride, nq = (size_t)src->info.items * src->stride;
    for (size_t i = 0; i < np; i++)
        hog_w_store(&dst->p[i], hog_w_load(&src->p[i]));
    for (size_t i = 0; i < nq; i++)
        hog_w_store(&dst->q[i], hog_w_load(&src->q[i]));
    for (uint32_t u = 0; u < src->info.users; u++)
        hog_w_store(&dst->bu[u], hog_w_load(&src->bu[u]));
    for (uint32_t i = 0; i < src->info.items; i++)
        hog_w_store(&dst->bi[i], hog_w_load(&src->bi[i]));
}

int64_t hog_mf_user_id(const hog_mf_model *m, const char *name)
{
    return hog_idmap_find(&m->users, name, strlen(name));
}

int64_t hog_mf_item_id(const hog_mf_model *m, const char *name)
{
    return hog_idmap_find(&m->items, name, strlen(name));
}

/* The prediction for dense ids, UINT32_MAX meaning unknown. */
static float predict_dense(const hog_mf_model *m, uint32_t u, uint32_t i)
{
    float v = (float)m->info.mean;
    int ku = u < m->info.users, ki = i < m->info.items;
    if (ku)
        v += hog_w_load(&m->bu[u]);
    if (ki)
        v += hog_w_load(&m->bi[i]);
    if (ku && ki) {
        const hog_weight *p = m->p + (size_t)u * m->stride, *q = m->q + (size_t)i * m->stride;
        float dot = 0;
        for (uint32_t f = 0; f < m->info.rank; f++)
            dot += hog_w_load(&p[f]) * hog_w_load(&q[f]);
        v += dot;
    }
    if (m->info.params.clamp) {
        v = v < (float)m->info.min ? (float)m->info.min : v;
        v = v > (float)m->info.max ? (float)m->info.max : v;
    }
    return v;
}

double hog_mf_predict_id(const hog_mf_model *m, int64_t user, int64_t item)
{
    uint32_t u = user >= 0 && user < m->info.users ? (uint32_t)user : UINT32_MAX;
    uint32_t i = item >= 0 && item < m->info.items ? (uint32_t)item : UINT32_MAX;
    return predict_dense(m, u, i);
}

double hog_mf_predict(const hog_mf_model *m, const char *user, const char *item)
{
    return hog_mf_predict_id(m, hog_mf_user_id(m, user), hog_mf_item_id(m, item));
}

int hog_mf_match_names(const hog_idmap *model, const hog_idmap *data, uint32_t **out)
{
    uint32_t *map = hog_malloc(((size_t)data->n + 1) * sizeof(uint32_t));
    if (!map)
        return -ENOMEM;
    for (uint32_t k = 0; k < data->n; k++) {
        int64_t id = hog_idmap_find(model, hog_idmap_name(data, k), data->off[k + 1] - data->off[k] - 1);
        map[k] = id < 0 ? UINT32_MAX : (uint32_t)id;
    }
    *out = map;
    return 0;
}

int hog_mf_predict_ratings(const hog_mf_model *m, const hog_ratings *r, float *out, double *rmse)
{
    uint32_t *um = NULL, *im = NULL;
    if (hog_mf_match_names(&m->users, &r->users, &um) < 0 || hog_mf_match_names(&m->items, &r->items, &im) < 0) {
        hog_free(um);
        return -ENOMEM;
    }
    double se = 0;
    for (uint64_t k = 0; k < r->info.ratings; k++) {
        const hog_mf_triple *t = &r->t[k];
        out[k] = predict_dense(m, um[t->user], im[t->item]);
        double e = (double)t->rating - (double)out[k];
        se += e * e;
    }
    if (rmse)
        *rmse = r->info.has_ratings ? sqrt(se / (double)r->info.ratings) : (double)NAN;
    hog_free(um);
    hog_free(im);
    return 0;
}

double hog_mf_rating_loss(uint32_t k, double mean, double bu, double bi, const float *p, const float *q,
                          double r, double l2, double l2b)
{
    double dot = 0, pp = 0, qq = 0;
    for (uint32_t f = 0; f < k; f++) {
        dot += (double)p[f] * (double)q[f];
        pp += (double)p[f] * (double)p[f];
        qq += (double)q[f] * (double)q[f];
    }
    double e = r - (mean + bu + bi + dot);
    return 0.5 * e * e + 0.5 * l2 * (pp + qq) + 0.5 * l2b * (bu * bu + bi * bi);
}

/* ===================================================================== *
 *  Training
 * ===================================================================== */
typedef struct mf_job {
    const hog_mf_params *p;
    hog_mf_model *m;
    const hog_mf_triple *t;  /* the training copy, shuffled once */
    uint64_t n;
    const uint32_t *order;   /* this epoch's order of segments */
    uint32_t nseg;
    mf_grid *grid;           /* the grid's blocks and scheduler, or NULL: segments */
    unsigned epoch;
    float step;
    mf_worker *ws;
    /* evaluation */
    const hog_mf_triple *eval;
    uint64_t neval;
    const atomic_int *stop;  /* multi-node: set when the run must stop, or NULL */
    const hog_link *paced;   /* multi-node, asynchronous: the link the workers pace themselves on
                                (hog_link_pace), or NULL */
    const atomic_int *interrupted; /* the control's flag (pause when set), or NULL */
    double (*now)(void);     /* the clock of due */
    double due;              /* pause for a checkpoint once now() reaches this; 0: never */
    uint32_t paused_at;      /* after a pass: the segments claimed (and so done) before it paused,
                                or nseg or more when it did not */
    /* The next position to claim; a pause sets its top bit, as the linear
     * trainer's does (epoch_job.next in train_run.h): the positions
     * trained are exactly a prefix of the order. */
    _Alignas(HOG_CACHELINE) atomic_uint next;
} mf_job;

#define MF_PAUSED 0x80000000u

/* One rating's step on the shared model: its two rows and biases copied
 * out, stepped by hog_mf_step, stored back; k is the stride, a multiple
 * of 16 (ranks above 32; mf_update_16 and mf_update_32 below take the
 * others). Returns the error. */
static inline float mf_update(hog_mf_model *m, const hog_mf_triple *t, uint32_t k, float mean, float step, float l2,
                              float l2b, float *restrict pl, float *restrict ql)
{
    hog_weight *pu = m->p + (size_t)t->user * m->stride, *qi = m->q + (size_t)t->item * m->stride;
    hog_w_load_row(pl, pu, k);
    hog_w_load_row(ql, qi, k);
    float bu = hog_w_load(&m->bu[t->user]), bi = hog_w_load(&m->bi[t->item]);
    float e = hog_mf_step(k, mean, &bu, &bi, pl, ql, t->rating, step, l2, l2b);
    hog_w_store_row(pu, pl, k);
    hog_w_store_row(qi, ql, k);
    hog_w_store(&m->bu[t->user], bu);
    hog_w_store(&m->bi[t->item], bi);
    return e;
}

/* mf_update for a stride of K (16 or 32) in GCC's vectors of four floats:
 * the same operations in the same order as hog_mf_step (its four partial
 * sums are the lanes), so the same results bit for bit, but a vector
 * kernel whatever the compiler's cost model makes of the plain loops. */
typedef float mf_f4 __attribute__((vector_size(16)));

/* The start of both vector steps for a stride of K: the rating's two rows
 * copied out (pl, ql) and in vectors (pv, qv), their biases (bu, bi) and
 * the error before the step (e), the dot product in four partial sums. */
#define MF_ROWS_ERROR(K)                                                                                        \
    hog_weight *pu = m->p + (size_t)t->user * (K), *qi = m->q + (size_t)t->item * (K);                         \
    _Alignas(16) float pl[K];                                                                                   \
    _Alignas(16) float ql[K];                                                                                   \
    hog_w_load_row(pl, pu, (K));                                                                                \
    hog_w_load_row(ql, qi, (K));                                                                                \
    mf_f4 pv[(K) / 4], qv[(K) / 4], acc = {0.0f, 0.0f, 0.0f, 0.0f};                                             \
    _Pragma("GCC unroll 8") for (uint32_t c = 0; c < (K) / 4; c++) {                                            \
        memcpy(&pv[c], pl + 4 * c, sizeof(mf_f4));                                                              \
        memcpy(&qv[c], ql + 4 * c, sizeof(mf_f4));                                                              \
        acc += pv[c] * qv[c];                                                                                   \
    }                                                                                                           \
    float bu = hog_w_load(&m->bu[t->user]), bi = hog_w_load(&m->bi[t->item]);                                  \
    float e = t->rating - (mean + bu + bi + ((acc[0] + acc[2]) + (acc[1] + acc[3])));

#define MF_UPDATE_K(K)                                                                                          \
    static inline float mf_update_##K(hog_mf_model *m, const hog_mf_triple *t, float mean, float step, float l2, \
                                      float l2b)                                                                \
    {                                                                                                           \
        MF_ROWS_ERROR(K)                                                                                        \
        const float se = step * e, sr = 1.0f - step * l2;                                                       \
        _Pragma("GCC unroll 8") for (uint32_t c = 0; c < (K) / 4; c++) {                                        \
            mf_f4 np = sr * pv[c] + se * qv[c], nq = sr * qv[c] + se * pv[c];                                   \
            memcpy(pl + 4 * c, &np, sizeof(mf_f4));                                                             \
            memcpy(ql + 4 * c, &nq, sizeof(mf_f4));                                                             \
        }                                                                                                       \
        hog_w_store_row(pu, pl, (K));                                                                           \
        hog_w_store_row(qi, ql, (K));                                                                           \
        hog_w_store(&m->bu[t->user], bu + step * (e - l2b * bu));                                               \
        hog_w_store(&m->bi[t->item], bi + step * (e - l2b * bi));                                               \
        return e;                                                                                               \
    }
MF_UPDATE_K(16)
MF_UPDATE_K(32)
#undef MF_UPDATE_K

/* HOG_SCHEDULE_ADAGRAD's mf_update: hog_mf_step_adagrad on the shared
 * model, the rows' AdaGrad sums loaded and stored beside their biases. */
static inline float mf_update_ada(hog_mf_model *m, const hog_mf_triple *t, uint32_t k, float mean, float step,
                                  float l2, float l2b, float inv_rank, float *restrict pl, float *restrict ql)
{
    hog_weight *pu = m->p + (size_t)t->user * m->stride, *qi = m->q + (size_t)t->item * m->stride;
    hog_w_load_row(pl, pu, k);
    hog_w_load_row(ql, qi, k);
    float bu = hog_w_load(&m->bu[t->user]), bi = hog_w_load(&m->bi[t->item]);
    float gu = hog_w_load(&m->gp[t->user]), gi = hog_w_load(&m->gq[t->item]);
    float e = hog_mf_step_adagrad(k, mean, &bu, &bi, &gu, &gi, pl, ql, t->rating, step, l2, l2b, inv_rank);
    hog_w_store_row(pu, pl, k);
    hog_w_store_row(qi, ql, k);
    hog_w_store(&m->bu[t->user], bu);
    hog_w_store(&m->bi[t->item], bi);
    hog_w_store(&m->gp[t->user], gu);
    hog_w_store(&m->gq[t->item], gi);
    return e;
}

/* mf_update_ada for a stride of K (16 or 32) in vectors of four floats:
 * hog_mf_step_adagrad's operations in its order (its partial sums are the
 * lanes), so the same results bit for bit. */
#define MF_UPDATE_ADA_K(K)                                                                                    \
    static inline float mf_update_ada_##K(hog_mf_model *m, const hog_mf_triple *t, float mean, float step,   \
                                          float l2, float l2b, float inv_rank)                                \
    {                                                                                                         \
        const float gu = hog_w_load(&m->gp[t->user]), gi = hog_w_load(&m->gq[t->item]);                      \
        const float su = step / sqrtf(gu), si = step / sqrtf(gi);                                             \
        MF_ROWS_ERROR(K)                                                                                      \
        mf_f4 gp2 = {0.0f, 0.0f, 0.0f, 0.0f}, gq2 = gp2;                                                      \
        _Pragma("GCC unroll 8") for (uint32_t c = 0; c < (K) / 4; c++) {                                      \
            mf_f4 dp = e * qv[c] - l2 * pv[c], dq = e * pv[c] - l2 * qv[c];                                   \
            gp2 += dp * dp;                                                                                   \
            gq2 += dq * dq;                                                                                   \
            mf_f4 np = pv[c] + su * dp, nq = qv[c] + si * dq;                                                 \
            memcpy(pl + 4 * c, &np, sizeof(mf_f4));                                                           \
            memcpy(ql + 4 * c, &nq, sizeof(mf_f4));                                                           \
        }                                                                                                     \
        hog_w_store_row(pu, pl, (K));                                                                         \
        hog_w_store_row(qi, ql, (K));                                                                         \
        hog_w_store(&m->bu[t->user], bu + su * (e - l2b * bu));                                               \
        hog_w_store(&m->bi[t->item], bi + si * (e - l2b * bi));                                               \
        hog_w_store(&m->gp[t->user], gu + ((gp2[0] + gp2[2]) + (gp2[1] + gp2[3])) * inv_rank);                \
        hog_w_store(&m->gq[t->item], gi + ((gq2[0] + gq2[2]) + (gq2[1] + gq2[3])) * inv_rank);                \
        return e;                                                                                             \
    }
MF_UPDATE_ADA_K(16)
MF_UPDATE_ADA_K(32)
#undef MF_UPDATE_ADA_K
#undef MF_ROWS_ERROR

/* A rating's rows are where its user and item happen to be in memory, a
 * cache miss each on a matrix larger than the caches (one worker's band
 * of a 200,000-user matrix is 6,250 rows scattered over 13 MB), and the
 * step can do nothing until they arrive: so the rows (and their biases
 * and AdaGrad sums) of the rating MF_AHEAD places on are asked for while
 * this one steps. Nothing computed changes: the results stay bit for bit. */
#define MF_AHEAD 8u

static inline void mf_prefetch(const hog_mf_model *m, const hog_mf_triple *t, uint32_t k)
{
    const char *pu = (const char *)(m->p + (size_t)t->user * k), *qi = (const char *)(m->q + (size_t)t->item * k);
    for (uint32_t b = 0; b < k * sizeof(float); b += HOG_CACHELINE) {
        __builtin_prefetch(pu + b, 1, 3);
        __builtin_prefetch(qi + b, 1, 3);
    }
    __builtin_prefetch(&m->bu[t->user], 1, 3);
    __builtin_prefetch(&m->bi[t->item], 1, 3);
    if (m->gp) {
        __builtin_prefetch(&m->gp[t->user], 1, 3);
        __builtin_prefetch(&m->gq[t->item], 1, 3);
    }
}

double hog_mf_steps(hog_mf_model *m, const hog_mf_params *p, float mean, float step, mf_worker *w,
                    const hog_mf_triple *t, const uint32_t *perm, uint32_t n, double se)
{
    const uint32_t k = m->stride;
    const float l2 = (float)p->l2, l2b = (float)p->l2_bias;
    float *restrict pl = w->pl, *restrict ql = w->ql;
#define MF_STEPS(UPDATE)                                                                                        \
    for (uint32_t i = 0; i < n; i++) {                                                                          \
        if (i + MF_AHEAD < n)                                                                                   \
            mf_prefetch(m, &t[perm ? perm[i + MF_AHEAD] : i + MF_AHEAD], k);                                    \
        float e = UPDATE;                                                                                       \
        se += (double)e * (double)e;                                                                            \
    }
    if (m->gp) {
        const float ir = 1.0f / (float)m->info.rank;
        if (k == 16)
            MF_STEPS(mf_update_ada_16(m, &t[perm ? perm[i] : i], mean, step, l2, l2b, ir))
        else if (k == 32)
            MF_STEPS(mf_update_ada_32(m, &t[perm ? perm[i] : i], mean, step, l2, l2b, ir))
        else
            MF_STEPS(mf_update_ada(m, &t[perm ? perm[i] : i], k, mean, step, l2, l2b, ir, pl, ql))
    } else if (k == 16)
        MF_STEPS(mf_update_16(m, &t[perm ? perm[i] : i], mean, step, l2, l2b))
    else if (k == 32)
        MF_STEPS(mf_update_32(m, &t[perm ? perm[i] : i], mean, step, l2, l2b))
    else
        MF_STEPS(mf_update(m, &t[perm ? perm[i] : i], k, mean, step, l2, l2b, pl, ql))
#undef MF_STEPS
    return se;
}

/* The steps of n triples of the run's epoch, against the training mean; returns their squared errors. */
static double mf_steps(mf_job *job, mf_worker *w, const hog_mf_triple *t, const uint32_t *perm, uint32_t n)
{
    return hog_mf_steps(job->m, job->p, (float)job->m->info.mean, job->step, w, t, perm, n, 0);
}

static void run_segment(mf_job *job, mf_worker *w, uint32_t seg)
{
    uint64_t first = (uint64_t)seg * SEG;
    uint32_t n = (uint32_t)HOG_MIN((uint64_t)SEG, job->n - first);
    /* An order that depends only on (seed, epoch, segment): one thread replays bit for bit. */
    hog_rng rng = {hog_mix64(job->p->seed ^ 0x6d66ull) ^ hog_mix64(((uint64_t)job->epoch << 32) | seg)};
    for (uint32_t i = 0; i < n; i++)
        w->perm[i] = i;
    hog_shuffle_u32(w->perm, n, &rng);
    w->se += mf_steps(job, w, job->t + first, w->perm, n);
    w->updates += n;
}

/* A block of the grid, its triples in their stored order: no other worker
 * holds a row of its bands (train_mf_grid.c). */
static void run_block(mf_job *job, mf_worker *w, uint32_t blk)
{
    const mf_grid *g = job->grid;
    uint64_t lo = g->start[blk], n = g->start[blk + 1] - lo;
    for (uint64_t done = 0; done < n; done += UINT32_MAX) {
        uint32_t part = (uint32_t)HOG_MIN(n - done, (uint64_t)UINT32_MAX);
        w->se += mf_steps(job, w, job->t + lo + done, NULL, part);
    }
    w->updates += n;
}

/* Whether a worker must pause after its segment or block: an interrupt, or a checkpoint due. */
static int mf_should_pause(const mf_job *job)
{
    return (job->interrupted && atomic_load_explicit(job->interrupted, memory_order_relaxed)) ||
           (job->due > 0 && job->now() >= job->due);
}

static void grid_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    mf_job *job = arg;
    mf_worker *w = &job->ws[ith];
    uint32_t pos;
    while (hog_mf_grid_claim(job->grid, &pos)) {
        run_block(job, w, job->order[pos]);
        hog_mf_grid_release(job->grid, pos, mf_should_pause(job));
    }
}

static void epoch_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    mf_job *job = arg;
    mf_worker *w = &job->ws[ith];
    uint64_t pass = job->paced ? hog_link_passes(job->paced) : 0;
    unsigned ahead = 0;
    for (;;) {
        uint32_t pos = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (pos >= job->nseg || (job->stop && atomic_load_explicit(job->stop, memory_order_relaxed)))
            break;
        run_segment(job, w, job->order[pos]);
        /* Bounded staleness, as the linear trainer's: a rank that trains
         * faster than its link exchanges would otherwise step on views the
         * others' changes have not reached (two ranks ended 19% to 25% above
         * one node's test RMSE once the step ran 2.5x faster; paced, 4% to 6%). */
        if (job->paced)
            hog_link_pace(job->paced, &pass, &ahead);
        if (mf_should_pause(job)) {
            uint32_t old = atomic_fetch_or_explicit(&job->next, MF_PAUSED, memory_order_relaxed);
            if (!(old & MF_PAUSED))
                job->paused_at = old;
        }
    }
}

/* Squared error over a fixed share of the evaluation triples per worker,
 * so the sum (taken in worker order) is the same every run. */
static void eval_worker(void *arg, unsigned ith, unsigned nth)
{
    mf_job *job = arg;
    uint64_t lo = job->neval * ith / nth, hi = job->neval * (ith + 1) / nth;
    double se = 0;
    for (uint64_t k = lo; k < hi; k++) {
        const hog_mf_triple *t = &job->eval[k];
        double e = (double)t->rating - (double)predict_dense(job->m, t->user, t->item);
        se += e * e;
    }
    job->ws[ith].se = se;
}

static double evaluate(mf_job *job, hog_pool *pool, unsigned nth, const hog_mf_triple *t, uint64_t n)
{
    if (n == 0)
        return NAN;
    job->eval = t;
    job->neval = n;
    hog_pool_run(pool, eval_worker, job);
    double se = 0;
    for (unsigned i = 0; i < nth; i++) {
        se += job->ws[i].se;
        job->ws[i].se = 0;
    }
    return sqrt(se / (double)n);
}

/* Factors start N(0, init^2), each row from its own stream (seed, side,
 * row), so the start does not depend on the number of workers. */
typedef struct init_job {
    hog_mf_model *m;
    uint64_t seed;
    double sd;
} init_job;

static void init_rows(hog_weight *rows, uint32_t stride, uint32_t rank, uint64_t lo, uint64_t hi, uint64_t key,
                      double sd)
{
    for (uint64_t r = lo; r < hi; r++) {
        hog_rng rng = {hog_mix64(key ^ hog_mix64(r))};
        for (uint32_t f = 0; f < rank; f++) {
            /* Box-Muller, one of the pair: (0, 1] keeps the log finite. */
            double u1 = 1.0 - (double)(hog_rng_next(&rng) >> 11) * 0x1p-53;
            double u2 = (double)(hog_rng_next(&rng) >> 11) * 0x1p-53;
            double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
            hog_w_store(&rows[r * stride + f], (float)(sd * z));
        }
    }
}

void hog_mf_init_rows(hog_mf_model *m, int items, uint64_t lo, uint64_t hi, uint64_t seed, double sd)
{
    init_rows(items ? m->q : m->p, m->stride, m->info.rank, lo, hi, hog_mix64(seed ^ (items ? 0x49u : 0x55u)), sd);
}

static void init_worker(void *arg, unsigned ith, unsigned nth)
{
    init_job *job = arg;
    hog_mf_model *m = job->m;
    uint64_t nu = m->info.users, ni = m->info.items;
    hog_mf_init_rows(m, 0, nu * ith / nth, nu * (ith + 1) / nth, job->seed, job->sd);
    hog_mf_init_rows(m, 1, ni * ith / nth, ni * (ith + 1) / nth, job->seed, job->sd);
}

/* Uniform in [0, n) for any 64-bit n. */
static uint64_t below64(hog_rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)hog_rng_next(r) * n) >> 64);
}

/* A copy of the names of a ratings set for the model to own. */
static int idmap_copy(hog_idmap *dst, const hog_idmap *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->owned = 1;
    dst->n = src->n;
    dst->off = hog_malloc(((size_t)src->n + 1) * sizeof(uint32_t));
    dst->names = hog_malloc(src->names_len ? src->names_len : 1);
    if (!dst->off || !dst->names)
        return -ENOMEM;
    dst->off[0] = 0;
    if (src->n)
        memcpy(dst->off, src->off, ((size_t)src->n + 1) * sizeof(uint32_t));
    memcpy(dst->names, src->names, src->names_len);
    dst->names_len = dst->names_cap = src->names_len;
    dst->off_cap = src->n + 1;
    return hog_idmap_index(dst);
}

typedef struct mf_run {
    hog_pool *pool;
    mf_worker *ws;
    unsigned nth;
    hog_mf_triple *train;
    hog_mf_triple *eval;
    uint32_t *order;
    uint32_t *um, *im;
    mf_grid grid;          /* the grid schedule's blocks (grid.blocks 0: segments) */
    hog_ckpt_timer timer;  /* the control's checkpoints and interrupt flag */
    mf_run_shape shape;    /* what a checkpoint describes */
    mf_checkpoint ck;      /* the checkpoint resumed from */
} mf_run;

static void mf_run_free(mf_run *rs)
{
    if (rs->ws)
        for (unsigned i = 0; i < rs->nth; i++) {
            hog_pool_free_local(rs->pool, rs->ws[i].pl);
            hog_pool_free_local(rs->pool, rs->ws[i].ql);
            hog_pool_free_local(rs->pool, rs->ws[i].perm);
        }
    hog_free(rs->ws);
    hog_free(rs->train);
    hog_free(rs->eval);
    hog_free(rs->order);
    hog_free(rs->um);
    hog_free(rs->im);
    hog_mf_grid_free(&rs->grid);
    hog_mf_checkpoint_free(&rs->ck);
    hog_pool_return(rs->pool);
}

/* ===================================================================== *
 *  Several machines
 * ===================================================================== */
/* What every rank of a run must share: the settings that change a step. */
static uint64_t mf_fingerprint(const hog_mf_params *p)
{
    double d[] = {p->step, p->decay, p->l2, p->l2_bias, p->init, p->holdout};
    uint64_t u[] = {p->rank, p->epochs, p->seed, (uint64_t)p->clamp, (uint64_t)p->step_schedule, 0x6d66ull};
    return hog_hash64(u, sizeof(u), hog_hash64(d, sizeof(d), 0x11c0ffeeull));
}

/* Meets the other ranks (one ratings file: the same users and items) and
 * starts the link on the model's factors and biases, which every rank
 * initialised alike from the seed. */
static int mf_link_start(const hog_mf_params *p, const hog_ratings *train, hog_mf_model *m, char *err,
                         size_t err_len)
{
    hog_link_shape shape = {.dim = m->info.users, .params_fp = mf_fingerprint(p),
                            .data_fp = train->info.fingerprint};
    int rc = hog_link_join(p->link, &shape, err, err_len);
    if (rc < 0)
        return rc;
    /* A rating touches one row of each: none is hot. AdaGrad's sums stay
     * each rank's own: summed across the ranks (as the rows' changes are)
     * they grew with changes not yet seen and ended two ranks 17% to 31%
     * above one node's test RMSE (tests/nodes-test.sh's case; kept apart,
     * 1% below to 15% above). */
    hog_link_span spans[] = {
        {m->p, (uint64_t)m->info.users * m->stride, 0, NULL, 1}, {m->q, (uint64_t)m->info.items * m->stride, 0, NULL, 1},
        {m->bu, m->info.users, 0, NULL, 1}, {m->bi, m->info.items, 0, NULL, 1},
    };
    rc = hog_link_spans(p->link, spans, HOG_ARRAY_LEN(spans));
    return rc < 0 ? rc : hog_link_start(p->link);
}

/* This epoch's segments (or the grid's blocks), shuffled: all of them, or this rank's share. */
static uint32_t mf_order(const hog_mf_params *p, uint32_t *order, uint64_t nseg, unsigned e)
{
    uint32_t k = 0;
    for (uint32_t s = 0; s < nseg; s++)
        if (!p->link || hog_link_owns_block(p->link, s))
            order[k++] = s;
    hog_rng rng = {hog_mix64(p->seed ^ 0x5eedull) + e};
    hog_shuffle_u32(order, k, &rng);
    return k;
}

/* ===================================================================== *
 *  Pauses and the epochs
 * ===================================================================== */
/* hog_ckpt_pause's write for a factorisation. */
typedef struct mf_write {
    const mf_run *rs;
    const hog_mf_model *m;
    const mf_position *at;
} mf_write;

static int mf_write_ckpt(void *ctx)
{
    const mf_write *w = ctx;
    return hog_mf_checkpoint_write(w->rs->timer.path, &w->rs->shape, w->m, w->rs->ws, w->rs->nth, w->at);
}

/* At a consistent point of the run (at): a checkpoint when one is due,
 * and the end of the run when it is interrupted (see hog_ckpt_pause). */
/* Where the run stands, for a message (as the linear trainer says it). */
static void mf_where(const mf_run *rs, const mf_position *at, char *where, size_t len)
{
    const unsigned epochs = rs->shape.p->epochs;
    if (at->finished)
        snprintf(where, len, "after its last epoch (%u)", epochs);
    else if (at->segment)
        snprintf(where, len, "in epoch %u of %u, after %u of %u %s", at->epoch + 1, epochs, at->segment,
                 rs->shape.segments, rs->grid.blocks ? "blocks" : "segments");
    else
        snprintf(where, len, "before epoch %u of %u", at->epoch + 1, epochs);
}

static int mf_pause(mf_run *rs, const hog_mf_model *m, const mf_position *at, int force, char *err, size_t err_len)
{
    if (!rs->timer.interrupted)
        return 0;
    char where[96];
    mf_where(rs, at, where, sizeof(where));
    mf_write w = {rs, m, at};
    return hog_ckpt_pause(&rs->timer, force, where, mf_write_ckpt, &w, err, err_len);
}

/* The epochs from *at (the start, or a checkpoint's position), each a
 * pass of the workers that pauses when a checkpoint is due or the run is
 * interrupted; then the run's last checkpoint. Returns 0 (st: the last
 * epoch's statistics), or what ends the run. */
static int mf_epochs(mf_run *rs, mf_job *job, uint64_t nseg, uint64_t neval, mf_position *at,
                     hog_mf_epoch_stats *st, char *err, size_t err_len)
{
    const hog_mf_params *p = job->p;
    int rc;
    double first = NAN; /* the first epoch's training error */
    int stop = 0;
    /* A finished run (a checkpoint of one that stopped early among them) trains no more. */
    for (; !at->finished && at->epoch < p->epochs && !stop; at->epoch++, at->segment = 0) {
        const unsigned e = at->epoch;
        if (at->segment == 0) { /* the last evaluation used se */
            at->updates0 = st->updates;
            for (unsigned i = 0; i < rs->nth; i++)
                rs->ws[i].se = 0;
        }
        if ((rc = mf_pause(rs, job->m, at, 0, err, err_len)) < 0)
            return rc;
        job->nseg = mf_order(p, rs->order, job->grid ? job->grid->blocks : nseg, e);
        job->epoch = e;
        job->step = (float)(p->step * pow(p->decay, e));
        for (;;) {
            atomic_store_explicit(&job->next, at->segment, memory_order_relaxed);
            if (job->grid)
                hog_mf_grid_begin(job->grid, rs->order, job->nseg, at->segment);
            job->paused_at = UINT32_MAX;
            job->due = hog_ckpt_due(&rs->timer);
            double t0 = hog_now();
            hog_pool_run(rs->pool, job->grid ? grid_worker : epoch_worker, job);
            at->seconds += hog_now() - t0;
            if (job->grid)
                job->paused_at = hog_mf_grid_paused_at(job->grid);
            if (job->paused_at >= job->nseg)
                break;
            at->segment = job->paused_at;
            if ((rc = mf_pause(rs, job->m, at, 1, err, err_len)) < 0)
                return rc;
        }
        double se = 0;
        uint64_t updates = 0;
        for (unsigned i = 0; i < rs->nth; i++) {
            se += rs->ws[i].se;
            rs->ws[i].se = 0;
            updates += rs->ws[i].updates;
        }
        st->epoch = e + 1;
        st->step = job->step;
        st->seconds = at->seconds;
        int stepped = updates > st->updates; /* a rank with no ratings of its own steps none */
        st->train_rmse = stepped ? sqrt(se / (double)(updates - st->updates)) : (double)NAN;
        st->updates = updates;
        if (p->link && (rc = hog_link_failed(p->link, err, err_len)) < 0)
            return rc;
        if (neval)
            st->test_rmse = evaluate(job, rs->pool, rs->nth, rs->eval, neval);
        at->train_rmse = st->train_rmse;
        at->test_rmse = st->test_rmse;
        if (p->progress)
            p->progress(p->progress_ctx, st);
        /* As the linear runs (train_epoch.c): a NaN or infinite error, or
         * one ten times the first epoch's of this call (plus one), ends it. */
        if (stepped && !isfinite(first))
            first = st->train_rmse;
        if (stepped && (!isfinite(st->train_rmse) || st->train_rmse > 10 * first + 1)) {
            char seen[96] = " (NaN or infinite)";
            if (isfinite(st->train_rmse))
                snprintf(seen, sizeof(seen), " (%.4g after %.4g in the first epoch)", st->train_rmse, first);
            return hog_fail(HOG_EDIVERGED, err, err_len,
                            "the training diverged in epoch %u: its error is %s%s, and no model was made. The steps "
                            "are too large for the ratings' scale: lower hog_mf_params.step (now %g)",
                            e + 1, isfinite(st->train_rmse) ? "growing" : "not finite", seen, p->step);
        }
        if (p->link) {
            hog_link_progress(p->link, e + 1, updates, at->seconds);
            if ((rc = hog_link_epoch_end(p->link, e, err, err_len)) < 0)
                return rc;
        }
        /* Early stopping, as the linear runs' (train_epoch.c): a lower test
         * RMSE keeps this epoch's model; K epochs without one end the run.
         * A NaN RMSE is no improvement. */
        if (job->m->best) {
            if (at->best_epoch == 0 || st->test_rmse < at->best_rmse) {
                at->best_rmse = st->test_rmse;
                at->best_epoch = e + 1;
                at->since = 0;
                mf_copy_rows(job->m->best, job->m);
            } else if (++at->since >= p->early_stop) {
                stop = 1;
                hog_log(HOG_LOG_INFO, "early stop after epoch %u: no lower test rmse for %u epochs; keeping epoch %u "
                        "(test rmse %.4f)", e + 1, p->early_stop, at->best_epoch, at->best_rmse);
            }
        }
    }
    if (!at->finished)
        *at = (mf_position){.epoch = at->epoch, .finished = 1, .updates0 = st->updates, .seconds = at->seconds,
                            .train_rmse = st->train_rmse, .test_rmse = st->test_rmse, .best_rmse = at->best_rmse,
                            .best_epoch = at->best_epoch, .since = at->since};
    return mf_pause(rs, job->m, at, 1, err, err_len);
}

/* The control's checkpoint settings for a run of p on train and test (rs->timer,
 * rs->shape), and the checkpoint to resume from, read and checked against
 * them (rs->ck; *resume then 1). */
static int mf_control_open(mf_run *rs, const hog_mf_params *p, const hog_ratings *train, const hog_ratings *test,
                           int *resume, char *err, size_t err_len)
{
    hog_mf_control *c = p->control;
    *resume = 0;
    rs->shape.p = p;
    rs->shape.train = train;
    rs->shape.test = test;
    if (!c)
        return 0;
    if (p->link && c->ckpt_path)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "a multi-node run takes no checkpoint: set none (hog_mf_control_set_checkpoint) with a link");
    /* hog_link_interrupt ends a multi-node run on every rank; stopping
     * through the control would leave the others to find this rank dead. */
    if (p->link)
        return 0;
    rs->timer = (hog_ckpt_timer){c->ckpt_path, c->ckpt_every, c->now, &c->interrupted, c->now()};
    if (!c->ckpt_path || !c->resume)
        return 0;
    int rc = hog_mf_checkpoint_read(c->ckpt_path, &rs->shape, &rs->ck, err, err_len);
    *resume = rc == 0;
    return rc;
}

int hog_mf_train(const hog_mf_params *p, const hog_ratings *train, const hog_ratings *test, hog_mf_model **out,
                 char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    const char *field;
    if (hog_mf_params_check(p, &field) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "invalid matrix factorisation parameter: hog_mf_params.%s", field);
    if (p->schedule == HOG_MF_ARRIVAL)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_mf_params.schedule HOG_MF_ARRIVAL is one pass's, as the "
                        "ratings come (hog_mf_train_stream): choose HOG_MF_GRID or HOG_MF_HOGWILD");
    if (p->link && hog_link_nodes(p->link) > 1 && hog_link_shards(p->link))
        return hog_fail(HOG_EPARAM, err, err_len, "matrix factorisation across nodes reads one shared ratings file: "
                        "each rank's own file would number its users and items its own way");
    if (!train->info.has_ratings || (test && !test->info.has_ratings))
        return hog_fail(HOG_ELABEL, err, err_len, "%s set has user-item pairs but no ratings",
                        train->info.has_ratings ? "the test" : "the training");
    if (p->early_stop && p->link)
        return hog_fail(HOG_EPARAM, err, err_len, "a multi-node run takes no hog_mf_params.early_stop: each rank "
                        "would keep its own best epoch; set it to 0 with a link");
    if (p->early_stop && !test && !(p->holdout > 0))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_mf_params.early_stop needs a test set or "
                        "hog_mf_params.holdout to measure improvement on");
    mf_run rs = {0};
    hog_mf_model *m = NULL;
    int resume;
    int rc = mf_control_open(&rs, p, train, test, &resume, err, err_len);
    if (rc < 0) {
        hog_mf_checkpoint_free(&rs.ck);
        return rc;
    }
    /* The process's shared pool (pool_shared.c), not threads started per call. */
    rc = hog_pool_borrow(p->threads, p->bind, &rs.pool, err, err_len);
    if (rc < 0) {
        hog_mf_checkpoint_free(&rs.ck);
        return rc;
    }
    rs.nth = hog_pool_threads(rs.pool);
    /* The training copy: the kept triples, shuffled once so that segments of
     * consecutive triples are random samples whatever the file's order (files
     * often come sorted by user). The eval copy: held-out triples, or the
     * test set with its names matched to the training set's ids. */
    uint64_t n = train->info.ratings, ntrain = 0, neval = 0;
    int hold = !test && p->holdout > 0;
    rs.train = hog_malloc((n ? n : 1) * sizeof(hog_mf_triple));
    uint64_t eval_cap = test ? test->info.ratings : hold ? n : 0;
    rs.eval = hog_malloc((eval_cap ? eval_cap : 1) * sizeof(hog_mf_triple));
    if (!rs.train || !rs.eval) {
        rc = -ENOMEM;
        goto fail;
    }
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (uint64_t k = 0; k < n; k++) {
        const hog_mf_triple *t = &train->t[k];
        if (hold && hog_row_held_out(k, p->holdout, p->seed)) {
            rs.eval[neval++] = *t;
            continue;
        }
        rs.train[ntrain++] = *t;
        double v = t->rating;
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (ntrain == 0) {
        rc = hog_fail(HOG_EEMPTY, err, err_len, "every training rating is held out: lower hog_mf_params.holdout");
        goto fail;
    }
    hog_rng shuf = {hog_mix64(p->seed ^ 0x73687566ull)};
    for (uint64_t k = ntrain - 1; k > 0; k--) {
        uint64_t j = below64(&shuf, k + 1);
        hog_mf_triple tmp = rs.train[k];
        rs.train[k] = rs.train[j];
        rs.train[j] = tmp;
    }
    /* The grid (a linked run keeps the segments, which hog_link_owns_block
     * shares out among the ranks: no band could be held across machines).
     * A resumed run keeps its checkpoint's bands, whatever its threads. */
    if (p->schedule == HOG_MF_GRID && !p->link) {
        uint32_t b = hog_mf_grid_bands(p->grid, rs.nth, ntrain);
        if (resume) {
            b = (uint32_t)sqrt((double)rs.ck.segments);
            /* A count that is no grid's: hog_mf_checkpoint_apply refuses it. */
            b = b && b <= HOG_MF_MAX_GRID ? b : 1;
        }
        rs.grid.b = b;
        if ((rc = hog_mf_grid_build(&rs.grid, rs.train, ntrain, train->users.n, train->items.n, p->seed)) < 0)
            goto fail;
    }
    if (test) {
        if (hog_mf_match_names(&train->users, &test->users, &rs.um) < 0 ||
            hog_mf_match_names(&train->items, &test->items, &rs.im) < 0) {
            rc = -ENOMEM;
            goto fail;
        }
        for (uint64_t k = 0; k < test->info.ratings; k++) {
            hog_mf_triple t = test->t[k];
            t.user = rs.um[t.user];
            t.item = rs.im[t.item];
            rs.eval[neval++] = t;
        }
    }

    m = hog_mf_new(train->users.n, train->items.n, p->rank);
    uint64_t nseg = (ntrain + SEG - 1) / SEG;
    /* A claim's counter keeps its top bit for pausing (mf_job.next). */
    uint64_t positions = HOG_MAX(nseg, (uint64_t)rs.grid.blocks);
    rs.order = positions < MF_PAUSED ? hog_malloc(positions * sizeof(uint32_t)) : NULL;
    rs.ws = hog_aligned_alloc(HOG_CACHELINE, rs.nth * sizeof(mf_worker));
    if (rs.ws) /* before any failure: mf_run_free reads every worker's state */
        memset(rs.ws, 0, rs.nth * sizeof(mf_worker));
    if (!m || !rs.order || !rs.ws) {
        rc = -ENOMEM;
        goto fail;
    }
    for (unsigned i = 0; i < rs.nth; i++) {
        /* In the memory of the worker's NUMA node. */
        rs.ws[i].pl = hog_pool_alloc_local(rs.pool, i, m->stride * sizeof(float));
        rs.ws[i].ql = hog_pool_alloc_local(rs.pool, i, m->stride * sizeof(float));
        rs.ws[i].perm = hog_pool_alloc_local(rs.pool, i, SEG * sizeof(uint32_t));
        if (!rs.ws[i].pl || !rs.ws[i].ql || !rs.ws[i].perm) {
            rc = -ENOMEM;
            goto fail;
        }
    }
    if (idmap_copy(&m->users, &train->users) < 0 || idmap_copy(&m->items, &train->items) < 0) {
        rc = -ENOMEM;
        goto fail;
    }
    m->info.params = *p;
    m->info.params.threads = rs.nth;
    m->info.params.bind = hog_pool_bind_for(rs.nth, p->bind); /* what auto came to */
    m->info.params.schedule = rs.grid.blocks ? HOG_MF_GRID : HOG_MF_HOGWILD; /* as run */
    m->info.params.grid = rs.grid.b;
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    m->info.params.control = NULL;
    m->info.mean = sum / (double)ntrain;
    m->info.min = lo;
    m->info.max = hi;
    m->info.train_ratings = ntrain;
    m->info.test_ratings = neval;
    m->info.data_fingerprint = train->info.fingerprint;

    init_job ij = {m, p->seed, p->init};
    hog_pool_run(rs.pool, init_worker, &ij);
    if (p->step_schedule == HOG_SCHEDULE_ADAGRAD && (rc = mf_adagrad_new(m)) < 0)
        goto fail;
    if (p->early_stop && !(m->best = hog_mf_new(m->info.users, m->info.items, p->rank))) {
        rc = -ENOMEM;
        goto fail;
    }
    if (p->link && (rc = mf_link_start(p, train, m, err, err_len)) < 0)
        goto fail;

    mf_job job = {.p = p, .m = m, .t = rs.train, .n = ntrain, .order = rs.order, .nseg = (uint32_t)nseg, .ws = rs.ws,
                  .grid = rs.grid.blocks ? &rs.grid : NULL,
                  .stop = p->link ? hog_link_stop_flag(p->link) : NULL,
                  .paced = p->link && hog_link_paced(p->link) ? p->link : NULL, .interrupted = rs.timer.interrupted,
                  .now = rs.timer.now};
    rs.shape.train_ratings = ntrain;
    rs.shape.segments = rs.grid.blocks ? rs.grid.blocks : (uint32_t)nseg;
    mf_position at = {.train_rmse = NAN, .test_rmse = NAN, .best_rmse = NAN};
    if (resume && (rc = hog_mf_checkpoint_apply(&rs.ck, &rs.shape, m, rs.ws, rs.nth, &at, err, err_len)) < 0)
        goto fail;
    if (resume) {
        char where[96];
        mf_where(&rs, &at, where, sizeof(where));
        hog_log(HOG_LOG_INFO, "resuming from %s: the run %s", rs.ck.path, where);
        hog_mf_checkpoint_free(&rs.ck); /* its buffer: as large as the model */
    }
    hog_mf_epoch_stats st;
    memset(&st, 0, sizeof(st));
    st.epochs = p->epochs;
    st.test_ratings = neval;
    st.epoch = at.epoch;
    st.step = at.epoch ? p->step * pow(p->decay, at.epoch - 1) : 0;
    st.seconds = at.seconds;
    st.updates = at.updates0;
    st.train_rmse = at.train_rmse;
    st.test_rmse = at.test_rmse;
    if (p->control)
        atomic_store(&p->control->training, 1);
    rc = mf_epochs(&rs, &job, nseg, neval, &at, &st, err, err_len);
    if (p->control)
        atomic_store(&p->control->training, 0);
    if (rc < 0)
        goto fail;
    if (p->link) { /* rank 0 gathers the final model; the others keep their view */
        if ((rc = hog_link_finish(p->link, err, err_len)) < 0)
            goto fail;
        if (neval)
            st.test_rmse = evaluate(&job, rs.pool, rs.nth, rs.eval, neval);
    }
    hog_mf_adagrad_free(m); /* training state: the model predicts without it */
    m->info.updates = st.updates;
    m->info.seconds = at.seconds;
    m->info.test_rmse = st.test_rmse;
    m->epochs_run = m->best_epoch = at.epoch;
    if (m->best && at.best_epoch) { /* the best epoch's model, and its test RMSE */
        if (at.best_epoch != at.epoch)
            mf_copy_rows(m, m->best);
        m->best_epoch = at.best_epoch;
        m->info.test_rmse = at.best_rmse;
    }
    hog_mf_free(m->best);
    m->best = NULL;
    m->info.train_rmse = evaluate(&job, rs.pool, rs.nth, rs.train, ntrain);
    mf_run_free(&rs);
    *out = m;
    return 0;
fail:
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    mf_run_free(&rs);
    hog_mf_free(m);
    return rc;
}
