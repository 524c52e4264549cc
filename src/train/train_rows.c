/* train_rows.c: one segment's rows: the per-example kernels (binary, softmax, factorisation machine) and the row loops specialised for each combination of the optimisers (train_kernels.h). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#ifdef __SSE2__
#include <immintrin.h>
#endif

#include "train_kernels.h"

/* ===================================================================== *
 *  The per-example kernels
 * ===================================================================== */
float hog_segment_step(const epoch_job *job, uint32_t pos)
{
    const hog_train_params *p = job->p;
    if (p->schedule == HOG_SCHEDULE_INVSCALING) {
        double t = job->epoch + job->frac0 + (job->frac1 - job->frac0) * pos / job->nsegments;
        return (float)(p->step / pow(1.0 + t, p->power));
    }
    /* adagrad's decay is per coordinate, in the update itself */
    if (p->schedule == HOG_SCHEDULE_CONSTANT || p->schedule == HOG_SCHEDULE_ADAGRAD)
        return (float)p->step;
    return (float)(p->step * pow(p->decay, job->epoch));
}

/* Progressive validation (the last epoch, hog_train_params.train_metrics):
 * each row's score before the model steps on it, counted as hog_evaluate
 * counts a row, weighted by its importance weight alone (w0: no class
 * weight), by hog_eval_add_scored in the loops below. The dense kernel
 * scores a batch at a time, and hands each row's scores over. */
typedef struct prog_dense {
    const hog_model *m;
    hog_eval_sums *prog;
} prog_dense;

static void prog_dense_seen(void *ctx, float label, float weight, float *scores)
{
    const prog_dense *pd = ctx;
    hog_eval_add(pd->m, pd->prog, label, weight, scores);
}

/* One example of a binary or regression loss. Returns the example's loss. */
KERNEL float update_binary(const epoch_job *job, worker_state *ws, const hog_row *row,
                                  float y, float step, float reg, float *bias, float *bacc,
                                  hog_eval_sums *prog, float w0, const unsigned opt)
{
    const uint32_t *idx = row->index;
    const float *val = row->value;
    float nsum = 0.0f;
    if (opt & OPT_NORMALIZED)
        nsum = normalize_row(job, ws, row, opt);
    float margin = *bias;
    for (uint32_t i = 0; i < row->nnz; i++)
        margin += hog_w_load(weights_of(job, ws, idx[i], opt)) * val[i];
    float loss;
    /* An importance weight counts the example that many times: it scales
     * the loss's gradient (so AdaGrad's sums see the weighted gradient too),
     * never the L2 or L1 penalty, which is per occurrence. */
    float gl = row->weight * hog_loss_grad_tau(job->m->info.loss, margin, y, job->tau, &loss);
    if (prog)
        hog_eval_add_scored(job->m, prog, row->label, y > 0, w0, margin, loss);
    if (opt == 0) {
        /* The plain loop, as fast as it was before the options. */
        float sg = step * gl;
        if (reg > 0 || sg != 0)
            for (uint32_t i = 0; i < row->nnz; i++) {
                uint32_t j = idx[i];
                hog_weight *w = weights_of(job, ws, j, opt);
                float shrink = l2_shrink(reg * job->tab.l2_scale[j]);
                hog_w_store(w, hog_w_load(w) * shrink - sg * val[i]);
            }
        if (job->p->bias)
            *bias -= sg;
        return loss;
    }
    float rate = step;
    if (opt & OPT_NORMALIZED) {
        rate *= normalized_rate(job, ws, nsum, opt);
        if (!(opt & OPT_ADAGRAD) && job->m->info.loss == HOG_LOSS_SQUARED)
            gl *= invariant_factor(rate * row->weight * (nsum + (job->p->bias ? 1.0f : 0.0f)));
    }
    const float l2 = (float)job->p->l2, l1 = (float)job->p->l1;
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = idx[i];
        /* packed: the record's copy, beside the weight */
        float c = (opt & OPT_PACKED) ? hog_w_load(&ws->optim.cs[(size_t)j * ws->optim.fstride]) : job->tab.l2_scale[j];
        float s = 1.0f;
        if (opt & OPT_NORMALIZED) {
            s = hog_w_load(&ws->optim.xmax[(opt & OPT_PACKED) ? (size_t)j * ws->optim.fstride : j]);
            if (s == 0.0f) /* only zeros seen: x_j = 0, nothing to learn */
                continue;
        }
        update_coord(weights_of(job, ws, j, opt), (opt & OPT_ADAGRAD) ? acc_of(job, ws, j, opt) : NULL,
                     (opt & OPT_L1) ? ws->optim.l1s + (size_t)j * ((opt & OPT_PACKED) ? ws->optim.lstride : 2) : NULL,
                     gl * val[i], rate, l2 * c, l1 * c, s, opt);
    }
    if (job->p->bias)
        update_bias(bias, bacc, gl, rate, opt);
    return loss;
}

/* One example of a factorisation machine (m->factors = F; a feature's K =
 * 1 + F weights are its linear weight w_j, then its factors v_j): its score
 * is the bias + sum_j w_j x_j + 1/2 sum_f (q_f^2 - sum_j (v_jf x_j)^2),
 * q_f = sum_j v_jf x_j (hog_model_scores computes the same), so the score's
 * slope is x_j in w_j and x_j (q_f - v_jf x_j) in v_jf, O(nnz F) in all.
 * Every weight, factor or not, steps as update_coord steps a linear one:
 * plain or AdaGrad, with the feature's sparse L2 and L1. q holds F floats.
 * Returns the example's loss. */
KERNEL float update_fm(const epoch_job *job, worker_state *ws, const hog_row *row, float y, float step,
                       float *bias, float *bacc, float *q, hog_eval_sums *prog, float w0, const unsigned opt)
{
    const uint32_t K = job->m->outputs, F = K - 1;
    const uint32_t *idx = row->index;
    const float *val = row->value;
    for (uint32_t f = 0; f < F; f++)
        q[f] = 0.0f;
    float lin = *bias, sq = 0.0f;
    for (uint32_t i = 0; i < row->nnz; i++)
        lin += hog_fm_add(weights_of(job, ws, idx[i], opt), val[i], F, q, &sq);
    const float margin = lin + hog_fm_pairs(q, F, sq);
    float loss;
    float gl = row->weight * hog_loss_grad_tau(job->m->info.loss, margin, y, job->tau, &loss);
    if (prog)
        hog_eval_add_scored(job->m, prog, row->label, y > 0, w0, margin, loss);
    const float l2 = (float)job->p->l2, l1 = (float)job->p->l1;
    const size_t ls = (opt & OPT_PACKED) ? ws->optim.lstride : 2 * K;
    for (uint32_t i = 0; i < row->nnz; i++) {
        const uint32_t j = idx[i];
        const float x = val[i];
        const float c = (opt & OPT_PACKED) ? hog_w_load(&ws->optim.cs[(size_t)j * ws->optim.fstride])
                                           : job->tab.l2_scale[j];
        hog_weight *const wj = weights_of(job, ws, j, opt);
        hog_weight *const aj = (opt & OPT_ADAGRAD) ? acc_of(job, ws, j, opt) : NULL;
        hog_weight *const uq = (opt & OPT_L1) ? ws->optim.l1s + (size_t)j * ls : NULL;
        const float gx = gl * x;
        for (uint32_t f = 0; f < F; f++) { /* the slope at the factors the score was computed with */
            const float v = hog_w_load(&wj[1 + f]);
            update_coord(&wj[1 + f], aj ? &aj[1 + f] : NULL, uq ? &uq[2 * (1 + f)] : NULL, gx * (q[f] - v * x),
                         step, l2 * c, l1 * c, 1.0f, opt);
        }
        update_coord(&wj[0], aj, uq, gx, step, l2 * c, l1 * c, 1.0f, opt);
    }
    if (job->p->bias)
        update_bias(bias, bacc, gl, step, opt);
    return loss;
}

/* The lines feature j's weights and state take under opt: a packed
 * model's record (a linear model's is a line; a field-aware machine's 80
 * factors and 80 AdaGrad sums at 20 fields and k 4 are 11, of which the
 * sums' half went unasked before: 2 threads' epochs on gen_click 1.57 s
 * with it against 1.66 s, medians of 14 alternating runs), or its words
 * in each per-feature array. Not the weights and sums of a feature with a
 * private copy: the row steps the copy, and a prefetch asks for the
 * shared lines with write intent, taking them from the core that merged
 * or asked for them last, so two workers asking for the records of the
 * features both copy traded those lines on every row, the traffic the
 * copies are there to end. On gen_click (2 threads, 1,441 features
 * copied, 91% of the non-zeros) the epochs took 0.855 of the time they
 * took asking (median of 10 interleaved rounds); asking for the copies'
 * own lines instead, 0.926: they are in the core's L2 cache. */
KERNEL void prefetch_feature(const epoch_job *job, const worker_state *ws, size_t j, const unsigned opt)
{
    const uint32_t K = job->m->outputs;
    const int copied = job->tab.nlocal && copy_slot(job, (uint32_t)j) >= 0;
    if (opt & OPT_PACKED) {
        if (!copied)
            hog_prefetch_words(ws->w + j * job->m->stride, job->m->stride, 1);
        return;
    }
    if (!copied)
        hog_prefetch_words(ws->w + j * K, K, 1);
    hog_prefetch_words(job->tab.l2_scale + j, 1, 0);
    if (opt & OPT_NORMALIZED)
        hog_prefetch_words(ws->optim.xmax + j, 1, 1);
    if ((opt & OPT_ADAGRAD) && !copied)
        hog_prefetch_words(ws->optim.acc + j * K, K, 1);
    if (opt & OPT_L1)
        hog_prefetch_words(ws->optim.l1s + 2 * j * K, 2 * K, 1);
}

/* The indices of the row a few rows ahead (MODEL_AHEAD), whose model lines
 * a loop asks for a feature or a line at a time as it walks the row it
 * works on (see the tuned loops' comment below); none (k 0) where the model
 * is not prefetched or the segment ends first. */
typedef struct row_ahead {
    const uint32_t *idx;
    uint32_t k;
} row_ahead;

/* A field-aware factorisation machine's row: feature i's weights and
 * AdaGrad sums, from the worker's arrays (P: ffm_cap of each) when the row
 * fits them (fits: update_ffm's test for the row at hand), else looked up
 * again. */
KERNEL hog_weight *ffm_w(const epoch_job *job, const worker_state *ws, const uint32_t *idx, uint32_t i, int fits,
                         const unsigned opt)
{
    return fits ? ws->ffm_w[i] : weights_of(job, ws, idx[i], opt);
}

KERNEL hog_weight *ffm_a(const epoch_job *job, const worker_state *ws, const uint32_t *idx, uint32_t i, int fits,
                         const unsigned opt)
{
    return fits ? ws->ffm_w[ws->ffm_cap + i] : acc_of(job, ws, idx[i], opt);
}

/* Feature j's L2 scale (see train_kernels.h). */
KERNEL float l2c_of(const epoch_job *job, const worker_state *ws, uint32_t j, const unsigned opt)
{
    return (opt & OPT_PACKED) ? hog_w_load(&ws->optim.cs[(size_t)j * ws->optim.fstride]) : job->tab.l2_scale[j];
}

/* Four factors of a pair at once (F a multiple of 4), in GCC's vectors:
 * update_coord's plain or AdaGrad step on each of v_a,fb[f..f+3] (slope
 * t v_b,fa) and v_b,fa[f..f+3] (slope t v_a,fb). The plain step is
 * update_coord's to the bit. The AdaGrad step scales by the processor's
 * approximate reciprocal square root (rsqrtps: 12 bits, a relative error
 * under 4e-4, the same on every run of one machine), as LIBFFM and xLearn
 * do: a pair's two square roots and two divisions held the loop to the
 * divider's pace, and the approximation took the field-aware model from
 * 3.4e5 to 4.3e5 rows/s on one thread (gen_click, 20 fields, k 4, with the
 * pairs' sum below kept in a register), at the same test logloss. The rows
 * are 16-byte aligned: the records and their AdaGrad sums start at
 * multiples of 4 words when the factors are (hog_pack_layout). */
typedef float ffm_f4 __attribute__((vector_size(16)));

KERNEL ffm_f4 ffm_rsqrt_step(ffm_f4 sum, float step)
{
#ifdef __SSE2__
    return step * (ffm_f4)_mm_rsqrt_ps((__m128)(sum + ADAGRAD_EPS));
#else
    ffm_f4 r;
    for (int i = 0; i < 4; i++)
        r[i] = step / sqrtf(sum[i] + ADAGRAD_EPS);
    return r;
#endif
}

/* Four shared weights (16-byte aligned) as a vector, and back. */
KERNEL ffm_f4 ffm_load4(const hog_weight *p)
{
    _Alignas(16) float f[4];
    hog_w_load_row(f, p, 4);
    ffm_f4 v;
    memcpy(&v, f, sizeof(v));
    return v;
}

KERNEL void ffm_store4(hog_weight *p, ffm_f4 v)
{
    _Alignas(16) float f[4];
    memcpy(f, &v, sizeof(v));
    hog_w_store_row(p, f, 4);
}

KERNEL void ffm_pair4(hog_weight *pa, hog_weight *qa, hog_weight *pb, hog_weight *qb, float t, float step,
                      float l2a, float l2b, const unsigned opt)
{
    ffm_f4 va = ffm_load4(pa), vb = ffm_load4(pb);
    ffm_f4 ga = t * vb, gb = t * va;
    if (opt & OPT_ADAGRAD) {
        ga = ga + l2a * va;
        gb = gb + l2b * vb;
        const ffm_f4 ua = ffm_load4(qa) + ga * ga, ub = ffm_load4(qb) + gb * gb;
        ffm_store4(qa, ua);
        ffm_store4(qb, ub);
        va = va - ffm_rsqrt_step(ua, step) * ga;
        vb = vb - ffm_rsqrt_step(ub, step) * gb;
    } else {
        va = va * l2_shrink(step * l2a) - step * ga;
        vb = vb * l2_shrink(step * l2b) - step * gb;
    }
    ffm_store4(pa, va);
    ffm_store4(pb, vb);
}

/* One example of a field-aware factorisation machine (m->fields = G; a
 * feature's K = G F weights are F factors for each field): the bias +
 * hog_ffm_norm times hog_ffm_pairs, so the score's slope is r x_a x_b
 * v_b,fa in v_a,fb for each pair of features a, b (r the row's norm). As in
 * LIBFFM, a pair steps both its factor vectors as soon as its slope is
 * known, from the values the pair read; each coordinate steps as
 * update_coord steps a linear weight (four at a time, ffm_pair4, when the
 * factors allow and no L1 needs its own clip; AdaGrad's root approximate
 * there). While it steps feature a, it asks for the model lines of the
 * row ahead's feature a (ahead; see rows_run). Returns the example's loss. */
KERNEL float update_ffm(const epoch_job *job, worker_state *ws, const hog_row *row, const uint16_t *field, float y,
                        float step, float *bias, float *bacc, hog_eval_sums *prog, float w0, row_ahead ahead,
                        const unsigned opt)
{
    const uint32_t F = job->m->factors, G = job->m->fields, K = job->m->outputs, n = row->nnz;
    const uint32_t *idx = row->index;
    const float *val = row->value;
    const float rn = hog_ffm_norm(val, n);
    const int fits = n <= ws->ffm_cap;
    float pairs = 0.0f;
    if (fits) {
        for (uint32_t i = 0; i < n; i++) {
            ws->ffm_w[i] = weights_of(job, ws, idx[i], opt);
            ws->ffm_w[ws->ffm_cap + i] = (opt & OPT_ADAGRAD) ? acc_of(job, ws, idx[i], opt) : NULL;
        }
        pairs = hog_ffm_pairs(ws->ffm_w, val, field, n, F, G);
    } else { /* a row longer than the arrays: the same sum, its pointers looked up again */
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = a + 1; b < n; b++)
                pairs += hog_ffm_dot(ffm_w(job, ws, idx, a, fits, opt) + (size_t)field[b] * F,
                                     ffm_w(job, ws, idx, b, fits, opt) + (size_t)field[a] * F, F) *
                         val[a] * val[b];
    }
    const float margin = *bias + rn * pairs;
    float loss;
    const float gl = row->weight * hog_loss_grad_tau(job->m->info.loss, margin, y, job->tau, &loss);
    if (prog)
        hog_eval_add_scored(job->m, prog, row->label, y > 0, w0, margin, loss);
    const float l2 = (float)job->p->l2, l1 = (float)job->p->l1;
    const size_t ls = (opt & OPT_PACKED) ? ws->optim.lstride : 2 * (size_t)K;
    const int four = F % 4 == 0 && !(opt & OPT_L1);
#ifndef HOG_W_C11
    if (four && fits && (opt & OPT_ADAGRAD) && __builtin_cpu_supports("avx2")) { /* two pairs at a time */
        for (uint32_t a = 0; a < n; a++)
            ws->ffm_l2[a] = l2 * l2c_of(job, ws, idx[a], opt);
        const ffm_step_row sr = {ws->ffm_w, ws->ffm_w + ws->ffm_cap, val, ws->ffm_l2, field, n, F, rn * gl, step,
                                 ADAGRAD_EPS};
        for (uint32_t a = 0; a < n; a++) {
            if (a < ahead.k)
                prefetch_feature(job, ws, ahead.idx[a], opt);
            hog_ffm_step_avx2(&sr, a);
        }
        goto stepped;
    }
#endif
    for (uint32_t a = 0; a < n; a++) {
        if (a < ahead.k) /* the row ahead's features, one a feature of this row's (see rows_run) */
            prefetch_feature(job, ws, ahead.idx[a], opt);
        const uint32_t ja = idx[a], fa = field[a];
        const float xa = val[a], ca = l2c_of(job, ws, ja, opt);
        hog_weight *const wa = ffm_w(job, ws, idx, a, fits, opt);
        hog_weight *const aa = (opt & OPT_ADAGRAD) ? ffm_a(job, ws, idx, a, fits, opt) : NULL;
        hog_weight *const ua = (opt & OPT_L1) ? ws->optim.l1s + (size_t)ja * ls : NULL;
        for (uint32_t b = a + 1; b < n; b++) {
            const uint32_t jb = idx[b], fb = field[b];
            const float t = rn * gl * xa * val[b], cb = l2c_of(job, ws, jb, opt);
            hog_weight *const wb = ffm_w(job, ws, idx, b, fits, opt);
            hog_weight *const ab = (opt & OPT_ADAGRAD) ? ffm_a(job, ws, idx, b, fits, opt) : NULL;
            const size_t oa = (size_t)fb * F, ob = (size_t)fa * F; /* v_a,fb and v_b,fa */
            if (four) {
                for (uint32_t f = 0; f < F; f += 4)
                    ffm_pair4(&wa[oa + f], aa ? &aa[oa + f] : NULL, &wb[ob + f], ab ? &ab[ob + f] : NULL, t, step,
                              l2 * ca, l2 * cb, opt);
                continue;
            }
            hog_weight *const ub = (opt & OPT_L1) ? ws->optim.l1s + (size_t)jb * ls : NULL;
            for (uint32_t f = 0; f < F; f++) {
                const float va = hog_w_load(&wa[oa + f]), vb = hog_w_load(&wb[ob + f]);
                update_coord(&wa[oa + f], aa ? &aa[oa + f] : NULL, ua ? &ua[2 * (oa + f)] : NULL, t * vb, step,
                             l2 * ca, l1 * ca, 1.0f, opt);
                update_coord(&wb[ob + f], ab ? &ab[ob + f] : NULL, ub ? &ub[2 * (ob + f)] : NULL, t * va, step,
                             l2 * cb, l1 * cb, 1.0f, opt);
            }
        }
    }
#ifndef HOG_W_C11
stepped:
#endif
    for (uint32_t t = n; t < ahead.k; t++)
        prefetch_feature(job, ws, ahead.idx[t], opt);
    if (job->p->bias)
        update_bias(bias, bacc, gl, step, opt);
    return loss;
}

/* One example of softmax regression over K classes. */
KERNEL float update_softmax(const epoch_job *job, worker_state *ws, const hog_row *row,
                                   int y, float step, float reg, float *bias, float *bacc, float *s, float *g,
                                   hog_eval_sums *prog, float w0, float *prog_s, const unsigned opt)
{
    const uint32_t K = job->m->outputs;
    float nsum = 0.0f;
    if (opt & OPT_NORMALIZED)
        nsum = normalize_row(job, ws, row, opt);
    for (uint32_t k = 0; k < K; k++)
        s[k] = bias[k];
    for (uint32_t i = 0; i < row->nnz; i++) {
        const hog_weight *wj = weights_of(job, ws, row->index[i], opt);
        float x = row->value[i];
        for (uint32_t k = 0; k < K; k++)
            s[k] += hog_w_load(&wj[k]) * x;
    }
    if (prog) { /* hog_eval_add turns the scores it takes into probabilities */
        memcpy(prog_s, s, K * sizeof(float));
        hog_eval_add(job->m, prog, row->label, w0, prog_s);
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
            hog_weight *wj = weights_of(job, ws, j, opt);
            float x = row->value[i];
            float shrink = l2_shrink(reg * job->tab.l2_scale[j]);
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
        /* packed: the record's copy, beside the weights */
        float c = (opt & OPT_PACKED) ? hog_w_load(&ws->optim.cs[(size_t)j * ws->optim.fstride]) : job->tab.l2_scale[j];
        float sj = 1.0f;
        if (opt & OPT_NORMALIZED) {
            sj = hog_w_load(&ws->optim.xmax[(opt & OPT_PACKED) ? (size_t)j * ws->optim.fstride : j]);
            if (sj == 0.0f)
                continue;
        }
        hog_weight *wj = weights_of(job, ws, j, opt);
        float x = row->value[i];
        if ((opt & ~OPT_PACKED) == OPT_NORMALIZED) {
            /* update_coord's plain branch with its rate and shrink, which do
             * not depend on the class, taken once per feature: the same
             * operations, one division and shrink for K weights. */
            const float r = rate / (sj * sj), shrink = l2_shrink(r * (l2 * c));
            for (uint32_t k = 0; k < K; k++)
                hog_w_store(&wj[k], hog_w_load(&wj[k]) * shrink - r * (g[k] * x));
            continue;
        }
        hog_weight *aj = (opt & OPT_ADAGRAD) ? acc_of(job, ws, j, opt) : NULL;
        hog_weight *uq = (opt & OPT_L1) ? ws->optim.l1s + (size_t)j * ((opt & OPT_PACKED) ? ws->optim.lstride : 2 * K)
                                         : NULL;
        for (uint32_t k = 0; k < K; k++)
            update_coord(&wj[k], aj ? &aj[k] : NULL, uq ? &uq[2 * k] : NULL, g[k] * x, rate, l2 * c, l1 * c, sj, opt);
    }
    return loss;
}

/* ===================================================================== *
 *  The row loops
 * ===================================================================== */
/* Rows ahead whose indices and values the tuned loops ask for, and whose
 * model lines every loop asks for on a large model (see the tuned loops'
 * comment below for why and how far). */
#define ROW_AHEAD 4u
#define MODEL_AHEAD 2u

/* Whether a pass prefetches the model's lines (MODEL_AHEAD): where its
 * per-feature arrays (words 4-byte words a feature) pass a core's L2
 * cache (1 MiB on the machine it was measured on). Below it the model is in
 * the L2 and the prefetches only cost; above it each line comes from the
 * L3 at best: at 2^18 features packed (4 MiB) prefetching took the default
 * update from 169 M to 249 M non-zeros/s (bench/run model-size). */
#define MODEL_PREFETCH_BYTES ((uint64_t)1 << 20)

static int model_prefetch_on(const epoch_job *job, uint32_t words)
{
    return (uint64_t)job->m->dim * words * sizeof(float) > MODEL_PREFETCH_BYTES;
}

/* Row i + MODEL_AHEAD of a segment's n rows (in perm's order from start),
 * where pm says the model is prefetched. */
KERNEL row_ahead model_ahead(const hog_block *blk, const uint32_t *perm, uint32_t start, uint32_t i, uint32_t n,
                             const int pm)
{
    if (!pm || i + MODEL_AHEAD >= n)
        return (row_ahead){NULL, 0};
    const uint32_t q = start + perm[i + MODEL_AHEAD];
    return (row_ahead){blk->index + blk->ptr[q], blk->ptr[q + 1] - blk->ptr[q]};
}

/* The general loop's prefetch: the lines row r of blk will read and write
 * under opt, its features' weights and state. */
KERNEL void prefetch_state(const epoch_job *job, const worker_state *ws, const hog_block *blk, uint32_t r,
                           const unsigned opt)
{
    for (uint32_t i = blk->ptr[r]; i < blk->ptr[r + 1]; i++)
        prefetch_feature(job, ws, blk->index[i], opt);
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
    int crossed;          /* blk holds the segment's rows crossed already (cross_segment) */
    hog_eval_sums *prog;  /* the last epoch's progressive metrics (epoch_job.prog), or NULL */
    float *prog_s;        /* outputs floats: the scores hog_eval_add takes (and changes) */
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
    const int pm = model_prefetch_on(job, (opt & OPT_PACKED) ? job->m->stride : m->outputs + 2);
    for (uint32_t i = 0; i < n; i++) {
        /* A field-aware row is long work: its update asks for the row
         * ahead's lines a feature at a time (update_ffm), not in a burst
         * that would wait for free fill buffers. */
        const row_ahead ahead = model_ahead(blk, ws->perm, start, i, n, pm && m->fields);
        if (pm && !m->fields && i + MODEL_AHEAD < n)
            prefetch_state(job, ws, blk, start + ws->perm[i + MODEL_AHEAD], opt);
        uint32_t r = start + ws->perm[i];
        if (p->holdout > 0 && hog_row_in_fold(first + ws->perm[i], p->holdout, p->fold, p->seed))
            continue;
        const uint32_t *ptr = blk->ptr;
        hog_row row = {blk->index + ptr[r], blk->value + ptr[r], ptr[r + 1] - ptr[r], blk->label[r],
                       blk->weight ? blk->weight[r] : 1.0f};
        if (m->cross.n && !c->crossed) { /* the row's own non-zeros and its crosses, as one row */
            row.nnz = hog_cross_row(&m->cross, &row, hog_block_fields(blk, r), ws->cross_idx, ws->cross_val);
            row.index = ws->cross_idx;
            row.value = ws->cross_val;
        }
        const float w0 = row.weight; /* what evaluation weighs the row by: no class weight */
        if (job->class_w)
            row.weight *= hog_class_weight_of(job->class_w, m, row.label, job->mid);
        float l;
        if (m->info.loss == HOG_LOSS_SOFTMAX) {
            int y = hog_model_class_of(m, row.label);
            l = update_softmax(job, ws, &row, y, step, reg, bias, bacc, s, g, c->prog, w0, c->prog_s, opt);
        } else if (m->fields) {
            float y = regression ? row.label : (row.label > job->mid ? 1.0f : -1.0f);
            l = update_ffm(job, ws, &row, blk->field + ptr[r], y, step, bias, bacc, c->prog, w0, ahead, opt);
        } else if (m->factors) {
            float y = regression ? row.label : (row.label > job->mid ? 1.0f : -1.0f);
            l = update_fm(job, ws, &row, y, step, bias, bacc, s, c->prog, w0, opt);
        } else {
            float y = regression ? row.label : (row.label > job->mid ? 1.0f : -1.0f);
            l = update_binary(job, ws, &row, y, step, reg, bias, bacc, c->prog, w0, opt);
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
 *  - Copies chosen by nlocal: with no private copies (one thread, or no
 *    feature hot enough) a weight is w[j], with no lookup of a slot; with
 *    them, found through the map, or by the index where they are the first
 *    features (plain_w).
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
 *    they are prefetched ROW_AHEAD rows ahead.
 *  - A large model's lines are prefetched too, MODEL_AHEAD rows ahead (see
 *    prefetch_ahead): each non-zero of a model that does not fit the caches
 *    is a miss, and a row's misses are independent, so asking for them a
 *    row or two early lets them overlap instead of stalling the loop one at
 *    a time. A model the caches hold gains nothing from it and pays the
 *    instructions, so it is not done there (MODEL_PREFETCH_BYTES).
 *  - The packed normalized loop (train's default) spreads those requests
 *    over the row it works on (row_ahead): one line of the row ahead asked
 *    for with each non-zero of its first pass, not all of them in a burst
 *    before it. A core has a dozen or so line fill buffers; a burst of 40
 *    requests fills them and stalls at the next prefetch until a miss comes
 *    back, with nothing of the row's own work in flight beside it. Spread,
 *    the requests leave at about the pace the misses return, overlapped
 *    with the arithmetic. At 2^22 features (one thread, 5 interleaved
 *    rounds) it took the loop from 137-144 M to 156-170 M non-zeros/s,
 *    0.82 of bench_model_mem's limit measured beside it, whose own best
 *    pace is spread too.
 */

/* The bytes of n floats in whole cache lines of their own: a worker writes
 * them on every row, and a small allocation may sit next to another
 * thread's data, whose writes would trade the line with these. (The caller
 * allocates, so that an allocation failure is reported at its call site.) */
static size_t line_bytes(size_t n)
{
    return (n * sizeof(float) + HOG_CACHELINE - 1) / HOG_CACHELINE * HOG_CACHELINE;
}

/* Asks for the line of the row ahead's non-zero t, if it has one: a record
 * of stride words a feature at w. */
KERNEL void ask_ahead(const hog_weight *w, uint32_t stride, row_ahead a, uint32_t t)
{
    if (t < a.k)
        __builtin_prefetch((const void *)(w + (size_t)a.idx[t] * stride), 1, 3);
}

/* The same for its non-zeros from t on: those the row worked on was too
 * short to ask for. */
KERNEL void ask_ahead_from(const hog_weight *w, uint32_t stride, row_ahead a, uint32_t t)
{
    for (; t < a.k; t++)
        __builtin_prefetch((const void *)(w + (size_t)a.idx[t] * stride), 1, 3);
}

/* At row i of a segment's n rows (in perm's order from start): asks for the
 * indices and values of row i + ROW_AHEAD and, with pm, for the model lines
 * of row i + MODEL_AHEAD, whose indices were asked for rows ago: the
 * weights of its features at w (stride words a feature; a packed model's
 * records) and their words at f1 and f2 (per-feature arrays of 4-byte
 * words; NULL: none). The private copies' map (hog_slot_of) is not asked
 * for: the L1 cache holds it. */
KERNEL void prefetch_ahead(const hog_block *blk, const uint32_t *perm, uint32_t start, uint32_t i, uint32_t n,
                           const hog_weight *w, const uint32_t stride, const void *f1, const void *f2, const int pm)
{
    const uint32_t *const ptr = blk->ptr;
    if (i + ROW_AHEAD < n) {
        const uint32_t q = start + perm[i + ROW_AHEAD];
        hog_prefetch_words(blk->index + ptr[q], ptr[q + 1] - ptr[q], 0);
        hog_prefetch_words(blk->value + ptr[q], ptr[q + 1] - ptr[q], 0);
    }
    if (pm && i + MODEL_AHEAD < n) {
        const uint32_t q = start + perm[i + MODEL_AHEAD];
        const uint32_t *const idx = blk->index + ptr[q];
        const uint32_t k = ptr[q + 1] - ptr[q];
        for (uint32_t t = 0; t < k; t++) {
            const size_t j = idx[t];
            __builtin_prefetch((const void *)(w + j * stride), 1, 3);
            if (f1)
                __builtin_prefetch((const char *)f1 + 4 * j, 1, 3);
            if (f2)
                __builtin_prefetch((const char *)f2 + 4 * j, 0, 3);
        }
    }
}

/* Asks for the indices and values of a segment's first rows (prefetch_ahead
 * asks for the rest as the loop goes). */
KERNEL void prefetch_first(const hog_block *blk, const uint32_t *perm, uint32_t start, uint32_t n)
{
    for (uint32_t i = 0; i < ROW_AHEAD && i < n; i++) {
        const uint32_t q = start + perm[i];
        hog_prefetch_words(blk->index + blk->ptr[q], blk->ptr[q + 1] - blk->ptr[q], 0);
        hog_prefetch_words(blk->value + blk->ptr[q], blk->ptr[q + 1] - blk->ptr[q], 0);
    }
}

/* How a tuned loop finds the private copies (its `local`): none, through
 * the map (hog_slot_of), or as the first features (feature_tables.first). */
#define COPIES_NONE 0
#define COPIES_MAP 1
#define COPIES_FIRST 2

/* The weight of feature j: the private copy if local and j has one. A
 * select, not a branch, on whether it has: on hashed features a row's hot
 * ones fall anywhere, and the branch's mispredictions held two threads at
 * 2^22 features to one thread's speed (train_run.h). The map's cell is in
 * the L1 cache, so the weight's load waits little for it; the first
 * features' copies (slot j for j below first) need no load at all. (Over
 * the slot table and its filter that the map replaced, a branch was the
 * faster on features numbered by frequency: the select waited for the
 * filter and the slot table's miss, and ran at 0.86.) */
KERNEL hog_weight *plain_w(hog_weight *w, hog_weight *hot, const uint64_t *map, uint32_t bits, uint32_t first,
                           uint32_t j, const int local, const uint32_t stride)
{
    const uintptr_t shared = (uintptr_t)(w + (size_t)j * stride);
    if (local == COPIES_NONE)
        return (hog_weight *)shared;
    uintptr_t mine, pick; /* pick: all ones where j has a copy */
    if (local == COPIES_FIRST) {
        mine = (uintptr_t)(hot + j);
        pick = -(uintptr_t)(j < first);
    } else {
        const uint64_t e = map[hog_hot_cell(j, bits)];
        mine = (uintptr_t)(hot + (e >> 32));
        pick = -(uintptr_t)((uint32_t)e == j);
    }
    return (hog_weight *)(shared ^ ((shared ^ mine) & pick));
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
    if (!ws->shrink && !(ws->shrink = hog_huge_alloc(line_bytes((size_t)dim))))
        return NULL;
    if (ws->shrink_ok && ws->shrink_reg == reg)
        return ws->shrink;
    const float *l2_scale = job->tab.l2_scale;
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

/* A segment's logistic losses so summed: max(-z, 0) terms added, log1pf
 * terms multiplied. */
typedef struct logistic_sum {
    double loss, prod;
    uint32_t n;
} logistic_sum;

/* Adds the loss of a row of margin z (e: hog_logistic_slope's exp(-|z|)). */
static inline void logistic_add(logistic_sum *ls, float z, float e)
{
    ls->loss += (double)fmaxf(-z, 0.0f);
    ls->prod *= 1.0 + (double)e;
    if (++ls->n == LOGISTIC_PRODUCT_ROWS) {
        ls->loss += log(ls->prod);
        ls->prod = 1.0;
        ls->n = 0;
    }
}

/* The sum of the losses added. */
static inline double logistic_total(const logistic_sum *ls)
{
    return ls->loss + log(ls->prod);
}

KERNEL void rows_plain(const epoch_job *job, worker_state *ws, seg_rows *c, const int local, const int scored)
{
    const hog_train_params *p = job->p;
    const hog_block *blk = c->blk;
    const uint32_t *const ptr = blk->ptr, *const index = blk->index, *const perm = ws->perm;
    const float *const value = blk->value, *const label = blk->label, *const rweight = blk->weight;
    const uint64_t *const map = job->tab.map;
    const uint32_t bits = job->tab.map_bits, nfirst = job->tab.first;
    const float *const l2_scale = job->tab.l2_scale;
    hog_weight *const w = ws->w, *const hot = ws->hot; /* the model, or this worker's replica */
    const hog_loss lossf = job->m->info.loss;
    const int regression = hog_loss_is_regression(lossf), has_bias = p->bias;
    const double holdout = p->holdout;
    const uint64_t seed = p->seed, fold = p->fold, first = c->first;
    const float mid = job->mid, tau = job->tau, step = c->step, reg = c->reg;
    const uint32_t start = c->start, n = c->n;
    const float *const shrink = plain_shrink(job, ws, reg);
    const int pm = model_prefetch_on(job, 2); /* a weight and its shrink or L2 scale */
    hog_eval_sums *const prog = scored ? c->prog : NULL; /* a constant NULL in the loop that does not score */
    float bias = c->bias[0];
    double loss = 0;
    /* Unweighted logistic loss: see LOGISTIC_PRODUCT_ROWS. */
    const float *const class_w = job->class_w;
    const int logistic = lossf == HOG_LOSS_LOGISTIC && !rweight && !class_w;
    logistic_sum ls = {0.0, 1.0, 0};
    uint64_t examples = 0, nnz = 0;
    prefetch_first(blk, perm, start, n);
    for (uint32_t i = 0; i < n; i++) {
        prefetch_ahead(blk, perm, start, i, n, w, 1, shrink, shrink ? NULL : l2_scale, pm);
        if (holdout > 0 && hog_row_in_fold(first + perm[i], holdout, fold, seed))
            continue;
        const uint32_t r = start + perm[i], k = ptr[r + 1] - ptr[r];
        const uint32_t *const idx = index + ptr[r];
        const float *const val = value + ptr[r];
        /* Named scalars, not an array: GCC keeps an array of partial sums
         * in memory across the atomic loads. */
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        uint32_t t = 0;
        for (; t + 4 <= k; t += 4) {
            a0 += hog_w_load(plain_w(w, hot, map, bits, nfirst, idx[t], local, 1)) * val[t];
            a1 += hog_w_load(plain_w(w, hot, map, bits, nfirst, idx[t + 1], local, 1)) * val[t + 1];
            a2 += hog_w_load(plain_w(w, hot, map, bits, nfirst, idx[t + 2], local, 1)) * val[t + 2];
            a3 += hog_w_load(plain_w(w, hot, map, bits, nfirst, idx[t + 3], local, 1)) * val[t + 3];
        }
        for (; t < k; t++)
            a0 += hog_w_load(plain_w(w, hot, map, bits, nfirst, idx[t], local, 1)) * val[t];
        /* The bias joins last, so the sums do not wait for the previous
         * row's update of it. */
        const float margin = bias + ((a0 + a1) + (a2 + a3));
        const float rw = (rweight ? rweight[r] : 1.0f) * (class_w ? class_w[label[r] > mid] : 1.0f);
        const float y = regression ? label[r] : (label[r] > mid ? 1.0f : -1.0f);
        float sg;
        if (logistic) {
            const float z = y * margin;
            float e;
            sg = step * hog_logistic_slope(z, y, &e);
            logistic_add(&ls, z, e);
            if (prog) /* logistic is unweighted here: w0 is 1 */
                hog_eval_add_scored(job->m, prog, label[r], y > 0, 1.0f, margin, fmaxf(-z, 0.0f) + log1pf(e));
        } else {
            float l;
            sg = step * (rw * hog_loss_grad_tau(lossf, margin, y, tau, &l));
            loss += (double)rw * (double)l;
            if (prog)
                hog_eval_add_scored(job->m, prog, label[r], y > 0, rweight ? rweight[r] : 1.0f, margin, l);
        }
        if (shrink && (reg > 0 || sg != 0))
            for (t = 0; t < k; t++) {
                hog_weight *const wj = plain_w(w, hot, map, bits, nfirst, idx[t], local, 1);
                hog_w_store(wj, hog_w_load(wj) * shrink[idx[t]] - sg * val[t]);
            }
        else if (reg > 0 || sg != 0)
            for (t = 0; t < k; t++) {
                const uint32_t j = idx[t];
                hog_weight *const wj = plain_w(w, hot, map, bits, nfirst, j, local, 1);
                hog_w_store(wj, hog_w_load(wj) * l2_shrink(reg * l2_scale[j]) - sg * val[t]);
            }
        if (has_bias)
            bias -= sg;
        examples++;
        nnz += k;
    }
    c->bias[0] = bias;
    c->loss = loss + logistic_total(&ls);
    c->examples = examples;
    c->nnz = nnz;
}

static void rows_plain_shared(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (c->prog)
        rows_plain(job, ws, c, COPIES_NONE, 1);
    else
        rows_plain(job, ws, c, COPIES_NONE, 0);
}

static void rows_plain_local(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (job->tab.first && c->prog)
        rows_plain(job, ws, c, COPIES_FIRST, 1);
    else if (job->tab.first)
        rows_plain(job, ws, c, COPIES_FIRST, 0);
    else if (c->prog)
        rows_plain(job, ws, c, COPIES_MAP, 1);
    else
        rows_plain(job, ws, c, COPIES_MAP, 0);
}

/*
 * The normalized loop of binary and regression losses, tuned.
 *
 * Normalized updates alone (no adagrad, no L1) are train's default, so
 * they get their own loop as the plain update does: per example it does
 * what update_binary does with opt == OPT_NORMALIZED, with what rows_plain
 * does to keep the compiler and the caches on its side: locals, a copy
 * without the slot test when there are no private copies, the rows
 * prefetched ahead (two partial sums, as there, measured no faster here). And it reads each feature's scale once and
 * divides once: the general path walks a row three times (normalize_row,
 * the margin, the update), loads xmax twice and divides three times per
 * non-zero (x / s twice, the rate by s^2); here the first pass brings the
 * scale up to date, sums the margin and keeps 1 / s^2 for the update in a
 * per-worker array (norm_u, as long as the segment's longest row), and the
 * divisions become one reciprocal and multiplies. So the model is the
 * general path's up to rounding, not bit for bit; one thread still replays
 * its own bit for bit.
 */
/* One non-zero x of the normalized loop's first pass, for the feature whose
 * largest |x| is at *sj and weight at *wj: brings the scale s up to date
 * (rescaling the weight as normalize_row does), stores 1 / s^2 at *ut and
 * returns (x / s)^2, or 0 and 0 where only zeros were seen (s = 0). */
KERNEL float norm_scale(hog_weight *sj, hog_weight *wj, float x, float *ut)
{
    const float ax = fabsf(x);
    float s = hog_w_load(sj);
    if (ax > s) {
        if (s > 0.0f) {
            float shrink = (s / ax) * (s / ax);
            hog_w_store(wj, hog_w_load(wj) * shrink);
        }
        hog_w_store(sj, ax);
        s = ax;
    }
    const float inv = s > 0.0f ? 1.0f / s : 0.0f, xs = x * inv;
    *ut = inv * inv;
    return xs * xs;
}

/* norm_scale for a packed model's record rec (train_run.h: the weight,
 * the scale, its reciprocal, the L2 scale), whose weight is at
 * *wj (the record's, or a private copy's): the reciprocal is computed only
 * when the scale grows, and is then what norm_scale computes, so the same
 * bits. (Two workers may store a scale and a reciprocal in between each
 * other's: a pair a step apart, HOGWILD!'s race, as for the weights.) */
KERNEL float norm_scale_packed(hog_weight *rec, hog_weight *wj, float x, float *ut)
{
    const float ax = fabsf(x);
    const float s = hog_w_load(&rec[PACK_NORM_XMAX]);
    float inv;
    if (ax > s) {
        if (s > 0.0f) {
            float shrink = (s / ax) * (s / ax);
            hog_w_store(wj, hog_w_load(wj) * shrink);
        }
        hog_w_store(&rec[PACK_NORM_XMAX], ax);
        inv = 1.0f / ax;
        hog_w_store(&rec[PACK_NORM_INV], inv);
    } else {
        inv = hog_w_load(&rec[PACK_NORM_INV]);
    }
    const float xs = x * inv;
    *ut = inv * inv;
    return xs * xs;
}

KERNEL void rows_norm(const epoch_job *job, worker_state *ws, seg_rows *c, const int local, const int scored,
                      const int packed)
{
    const hog_train_params *p = job->p;
    const hog_block *blk = c->blk;
    const uint32_t *const ptr = blk->ptr, *const index = blk->index, *const perm = ws->perm;
    const float *const value = blk->value, *const label = blk->label, *const rweight = blk->weight;
    const uint64_t *const map = job->tab.map;
    const uint32_t bits = job->tab.map_bits, nfirst = job->tab.first;
    const float *const l2_scale = job->tab.l2_scale;
    hog_weight *const w = ws->w, *const hot = ws->hot, *const xmax = ws->optim.xmax;
    float *const u = ws->norm_u;
    hog_weight **const wp = ws->norm_w;
    /* Packed: one record a feature (train_run.h); else a weight, its scale
     * and its L2 scale, one array each. */
    const uint32_t S = packed ? PACK_NORM_STRIDE : 1;
    const int pm = model_prefetch_on(job, packed ? PACK_NORM_STRIDE : 3);
    const hog_loss lossf = job->m->info.loss;
    const int regression = hog_loss_is_regression(lossf), has_bias = p->bias;
    const float bias1 = has_bias ? 1.0f : 0.0f, l2 = (float)p->l2;
    const double holdout = p->holdout;
    const uint64_t seed = p->seed, fold = p->fold, first = c->first;
    const float *const class_w = job->class_w;
    const float mid = job->mid, tau = job->tau, step = c->step;
    const uint32_t start = c->start, n = c->n;
    hog_eval_sums *const prog = scored ? c->prog : NULL; /* a constant NULL in the loop that does not score */
    float bias = c->bias[0];
    double loss = 0, norm_t = ws->norm_t, norm_n = ws->norm_n;
    /* Unweighted logistic loss: see LOGISTIC_PRODUCT_ROWS (a log1pf a row
     * was 8% of this loop at 2^22 features). */
    const int logistic = lossf == HOG_LOSS_LOGISTIC && !rweight && !class_w;
    logistic_sum ls = {0.0, 1.0, 0};
    uint64_t examples = 0, nnz = 0;
    prefetch_first(blk, perm, start, n);
    for (uint32_t i = 0; i < n; i++) {
        /* Packed: the model lines of the row ahead asked for as this
         * row's first pass goes (row_ahead). */
        prefetch_ahead(blk, perm, start, i, n, w, 1, xmax, l2_scale, packed ? 0 : pm);
        const row_ahead ahead = model_ahead(blk, perm, start, i, n, packed && pm);
        if (holdout > 0 && hog_row_in_fold(first + perm[i], holdout, fold, seed)) {
            ask_ahead_from(w, S, ahead, 0);
            continue;
        }
        const uint32_t r = start + perm[i], k = ptr[r + 1] - ptr[r];
        const uint32_t *const idx = index + ptr[r];
        const float *const val = value + ptr[r];
        /* normalize_row and the margin in one pass: a feature's scale is
         * brought up to date (its weight rescaled as NG does) before its
         * weight is read, and each feature occurs once in a row. */
        float nsum = 0.0f, margin = bias;
        uint32_t t;
        for (t = 0; t < k; t++) {
            const size_t j = idx[t];
            ask_ahead(w, S, ahead, t);
            hog_weight *const wj = plain_w(w, hot, map, bits, nfirst, idx[t], local, S);
            if (local)
                wp[t] = wj;
            nsum += packed ? norm_scale_packed(w + j * S, wj, val[t], &u[t]) : norm_scale(&xmax[j], wj, val[t], &u[t]);
            margin += hog_w_load(wj) * val[t];
        }
        ask_ahead_from(w, S, ahead, t);
        norm_t += 1.0;
        norm_n += (double)nsum + (double)bias1;
        const float rate = step * (float)(norm_n > 0 ? norm_t / norm_n : 1.0);
        const float rw = (rweight ? rweight[r] : 1.0f) * (class_w ? class_w[label[r] > mid] : 1.0f);
        const float y = regression ? label[r] : (label[r] > mid ? 1.0f : -1.0f);
        float gl;
        if (logistic) { /* rw is 1: the same gradient, the loss as rows_plain sums it */
            const float z = y * margin;
            float e;
            gl = hog_logistic_slope(z, y, &e);
            logistic_add(&ls, z, e);
            if (prog)
                hog_eval_add_scored(job->m, prog, label[r], y > 0, 1.0f, margin, fmaxf(-z, 0.0f) + log1pf(e));
        } else {
            float l;
            gl = rw * hog_loss_grad_tau(lossf, margin, y, tau, &l);
            loss += (double)rw * (double)l;
            if (prog)
                hog_eval_add_scored(job->m, prog, label[r], y > 0, rweight ? rweight[r] : 1.0f, margin, l);
        }
        if (lossf == HOG_LOSS_SQUARED)
            gl *= invariant_factor(rate * rw * (nsum + bias1));
        /* update_coord's non-adagrad branch with r = rate / s^2: the skipped
         * features (s = 0, only zeros seen) have u = 0 and x = 0, which
         * leaves their weight as it is. */
        for (t = 0; t < k; t++) {
            const uint32_t j = idx[t];
            hog_weight *const wj = local ? wp[t] : w + (size_t)j * S;
            const float rj = rate * u[t];
            const float cj = packed ? hog_w_load(&w[(size_t)j * S + PACK_NORM_C]) : l2_scale[j];
            hog_w_store(wj, hog_w_load(wj) * l2_shrink(rj * (l2 * cj)) - rj * (gl * val[t]));
        }
        if (has_bias)
            bias -= rate * gl;
        examples++;
        nnz += k;
    }
    ws->norm_t = norm_t;
    ws->norm_n = norm_n;
    c->bias[0] = bias;
    c->loss = loss + logistic_total(&ls);
    c->examples = examples;
    c->nnz = nnz;
}

static void rows_norm_shared(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (c->prog)
        rows_norm(job, ws, c, COPIES_NONE, 1, 0);
    else
        rows_norm(job, ws, c, COPIES_NONE, 0, 0);
}

/* The loop with private copies, found as the run's tables say. */
KERNEL void rows_norm_copies(const epoch_job *job, worker_state *ws, seg_rows *c, const int packed)
{
    if (job->tab.first && c->prog)
        rows_norm(job, ws, c, COPIES_FIRST, 1, packed);
    else if (job->tab.first)
        rows_norm(job, ws, c, COPIES_FIRST, 0, packed);
    else if (c->prog)
        rows_norm(job, ws, c, COPIES_MAP, 1, packed);
    else
        rows_norm(job, ws, c, COPIES_MAP, 0, packed);
}

static void rows_norm_local(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    rows_norm_copies(job, ws, c, 0);
}

/* The same on a packed model (train_run.h), never inlined into rows_2:
 * the small models' loops above then compile as they did before. */
static __attribute__((noinline)) void rows_packed_shared(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (c->prog)
        rows_norm(job, ws, c, COPIES_NONE, 1, 1);
    else
        rows_norm(job, ws, c, COPIES_NONE, 0, 1);
}

static __attribute__((noinline)) void rows_packed_local(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    rows_norm_copies(job, ws, c, 1);
}

/* The non-zeros of the segment's longest row. */
static uint32_t seg_longest(const hog_block *blk, uint32_t start, uint32_t n)
{
    uint32_t longest = 0;
    for (uint32_t r = start; r < start + n; r++)
        longest = HOG_MAX(longest, blk->ptr[r + 1] - blk->ptr[r]);
    return longest;
}

/* Room in ffm_w for the segment's longest row. Where it cannot be had, the
 * arrays stay as they were and longer rows look their pointers up again. */
static void ffm_room(worker_state *ws, const hog_block *blk, uint32_t start, uint32_t n)
{
    const uint32_t longest = seg_longest(blk, start, n);
    if (longest <= ws->ffm_cap)
        return;
    const uint32_t cap = HOG_MAX(longest, 64u);
    hog_weight **w = hog_malloc(2 * (size_t)cap * sizeof(*w));
    float *l2 = hog_malloc((size_t)cap * sizeof(*l2));
    if (!w || !l2) {
        hog_free(w);
        hog_free(l2);
        return;
    }
    hog_free(ws->ffm_w);
    hog_free(ws->ffm_l2);
    ws->ffm_w = w;
    ws->ffm_l2 = l2;
    ws->ffm_cap = cap;
}

/* Room in norm_u for the segment's longest row; 0, or -ENOMEM. */
static int norm_room(worker_state *ws, const seg_rows *c)
{
    const uint32_t longest = seg_longest(c->blk, c->start, c->n);
    if (longest <= ws->norm_cap && ws->norm_u)
        return 0;
    const uint32_t cap = HOG_MAX(longest, 1u);
    float *u = hog_aligned_alloc(HOG_CACHELINE, line_bytes(cap));
    hog_weight **wp = hog_aligned_alloc(HOG_CACHELINE, line_bytes((size_t)cap * (sizeof(*wp) / sizeof(float))));
    if (!u || !wp) {
        hog_free(u);
        hog_free(wp);
        return -ENOMEM;
    }
    hog_free(ws->norm_u);
    hog_free(ws->norm_w);
    ws->norm_u = u;
    ws->norm_w = wp;
    ws->norm_cap = cap;
    return 0;
}

/* The general loop for opt, packed or not (OPT_PACKED). */
KERNEL void rows_general(const epoch_job *job, worker_state *ws, seg_rows *c, const unsigned opt)
{
    if (ws->optim.packed)
        rows_run(job, ws, c, opt | OPT_PACKED);
    else
        rows_run(job, ws, c, opt);
}

/* Normalized alone: the tuned loop for one output, else the general one
 * (also where its array cannot be had: the general one needs none). */
static void rows_2(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (job->m->outputs > 1 || (job->m->cross.n && !c->crossed) || norm_room(ws, c) < 0) /* softmax, FM, crosses */
        rows_general(job, ws, c, OPT_NORMALIZED);
    else if (ws->optim.packed && job->tab.nlocal)
        rows_packed_local(job, ws, c);
    else if (ws->optim.packed)
        rows_packed_shared(job, ws, c);
    else if (job->tab.nlocal && !hog_whole_on(job))
        rows_norm_local(job, ws, c);
    else
        rows_norm_shared(job, ws, c);
}

/* No option: the tuned loop for one output, else the general one. */
static void rows_0(const epoch_job *job, worker_state *ws, seg_rows *c)
{
    if (job->m->outputs > 1 || (job->m->cross.n && !c->crossed)) /* softmax, FM, crosses row by row */
        rows_general(job, ws, c, 0);
    else if (job->tab.nlocal && !hog_whole_on(job))
        rows_plain_local(job, ws, c);
    else
        rows_plain_shared(job, ws, c);
}

/* One copy of the row loop per combination of options, so that the choice
 * is made once per segment, never per non-zero. */
#define ROWS_FN(o)                                                                   \
    static void rows_##o(const epoch_job *job, worker_state *ws, seg_rows *c)        \
    {                                                                                \
        rows_general(job, ws, c, o);                                                 \
    }
ROWS_FN(1)
ROWS_FN(3)
ROWS_FN(4)
ROWS_FN(5)
ROWS_FN(6)
ROWS_FN(7)
#undef ROWS_FN

static void (*const rows_by_opt[OPT_COUNT])(const epoch_job *, worker_state *, seg_rows *) = {
    rows_0, rows_1, rows_2, rows_3, rows_4, rows_5, rows_6, rows_7,
};

/* ===================================================================== *
 *  A segment
 * ===================================================================== */
/* A crossed model's segment, its n rows from start: each row's non-zeros
 * and its crosses formed once into the worker's own block, which every
 * loop then trains as any other, the tuned ones and their prefetching
 * included. NULL where its room cannot be had: the general loop then
 * crosses each row as it meets it. */
static const hog_block *cross_segment(const epoch_job *job, worker_state *ws, const hog_block *blk, uint32_t start,
                                      uint32_t n)
{
    uint64_t room = 0;
    for (uint32_t r = start; r < start + n; r++)
        room += hog_cross_room(blk->ptr[r + 1] - blk->ptr[r]);
    if (room > UINT32_MAX)
        return NULL;
    if (room > ws->xcap) {
        uint32_t *idx = hog_malloc(room * sizeof(uint32_t));
        float *val = hog_malloc(room * sizeof(float));
        if (!idx || !val) {
            hog_free(idx);
            hog_free(val);
            return NULL;
        }
        hog_free(ws->xidx);
        hog_free(ws->xval);
        ws->xidx = idx;
        ws->xval = val;
        ws->xcap = room;
    }
    uint32_t at = 0;
    ws->xptr[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const hog_row row = hog_block_row(blk, start + i);
        at += hog_cross_row(&job->m->cross, &row, hog_block_fields(blk, start + i), ws->xidx + at, ws->xval + at);
        ws->xptr[i + 1] = at;
    }
    ws->xblk = (hog_block){.rows = n, .nnz = at, .ptr = ws->xptr, .index = ws->xidx, .value = ws->xval,
                           .label = blk->label + start, .weight = blk->weight ? blk->weight + start : NULL};
    return &ws->xblk;
}

void hog_segment_run(epoch_job *job, worker_state *ws, uint32_t pos, const hog_block *blk, int fresh)
{
    const hog_dataset *ds = job->ds;
    const hog_train_params *p = job->p;
    hog_model *m = job->m;
    const uint32_t K = m->outputs;
    uint32_t seg = job->segments[pos];
    uint32_t b = seg / job->per_block;
    uint32_t start = (seg % job->per_block) * SEGMENT_ROWS;
    uint32_t n = HOG_MIN(SEGMENT_ROWS, blk->rows - start);
    uint64_t first = job->row0 + (uint64_t)b * ds->info.rows_per_block + start;
    /* The state this worker steps: its replica's, where replicas are packed. */
    ws->optim = job->rep->optim ? job->rep->optim[ws->replica] : job->optim;

    /* The segment's rows in an order that depends only on (seed, epoch,
     * segment), so one thread replays bit for bit. */
    hog_rng rng = {hog_mix64(p->seed) ^ hog_mix64(((uint64_t)job->epoch << 32) | seg)};
    for (uint32_t i = 0; i < n; i++)
        ws->perm[i] = i;
    hog_shuffle_u32(ws->perm, n, &rng);

    float step = hog_segment_step(job, pos);
    if (ws->dense) {
        prog_dense pd = {m, &ws->prog};
        hog_dense_segment(ws->dense, m, p, blk, start, ws->perm, n, first, step, job->mid, job->class_w, &ws->loss,
                          &ws->examples, &ws->nnz, job->prog ? prog_dense_seen : NULL, &pd, ws->scratch + 6 * K);
        return;
    }
    float *s = ws->scratch, *g = s + K, *bias = g + K, *bias0 = bias + K, *bacc = bias0 + K, *bacc0 = bacc + K;
    for (uint32_t k = 0; k < K; k++) {
        bias[k] = bias0[k] = hog_w_load(&ws->bias[k]);
        bacc[k] = bacc0[k] = ws->optim.bias_acc ? hog_w_load(&ws->optim.bias_acc[k]) : 0.0f;
    }
    const int whole = hog_whole_on(job);
    if (!fresh && whole)
        hog_whole_begin(job, ws);
    else if (!fresh)
        hog_hot_begin(job, ws);
    /* Workers of one replica share its clock; with the model shared, all do. */
    hog_overlap *clock = job->rep->n ? &job->rep->clocks[ws->replica] : job->clock;
    unsigned members = job->rep->n ? job->rep->members[ws->replica] : job->nth;
    double t0, a0 = hog_overlap_enter(clock, &t0);
    if (m->fields)
        ffm_room(ws, blk, start, n);
    const hog_block *crossed = m->cross.n ? cross_segment(job, ws, blk, start, n) : NULL;
    seg_rows c = {crossed ? crossed : blk, crossed ? 0 : start, n, first, step, step * (float)p->l2, s, g, bias, bacc,
                  0, 0, 0, crossed != NULL, job->prog ? &ws->prog : NULL, bacc0 + K};
    /* A whole copy is trained as the model itself is on one thread. */
    hog_weight *const model_w = ws->w;
    if (whole)
        ws->w = ws->own;
    rows_by_opt[ws->optim.flags](job, ws, &c);
    ws->w = model_w;
    /* Workers that ran beside this one each corrected the same hot weights
     * towards the same targets; summing their changes would overshoot, so
     * each adds its change divided by how many segments ran beside it,
     * itself included (see hog_overlap): the average when all run at
     * once, the full change when it ran alone. */
    float share = hog_overlap_share(clock, t0, a0, members);
    /* A field-aware machine's hot factors step by AdaGrad, and every row
     * moves a hot feature's factors for another field each: shared out,
     * two workers' changes moved them as one worker's would and two
     * threads needed more epochs (1,000,000 gen_click rows, test logloss
     * after 4 epochs 0.4414, one thread 0.4351); summed, as HOGWILD!'s own
     * racy steps would add them, 0.4358. */
    if (m->fields)
        share = 1.0f;
    if (whole) {
        ws->own_share = share;
        if (++ws->own_since >= job->tab.whole_every)
            hog_whole_sync(job, ws);
    } else {
        hog_hot_sync(job, ws, share);
    }
    /* The intercept is the hottest weight of all: the same delayed update. */
    if (p->bias)
        for (uint32_t k = 0; k < K; k++) {
            hog_w_add(&ws->bias[k], share * (bias[k] - bias0[k]));
            if (ws->optim.bias_acc)
                hog_w_add(&ws->optim.bias_acc[k], bacc[k] - bacc0[k]);
        }
    ws->loss += c.loss;
    ws->examples += c.examples;
    ws->nnz += c.nnz;
}
