/* train_kernels.h: the per-coordinate updates the row loops of train_rows.c step with: the optimisers, the regularisers and how they combine. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_KERNELS_H
#define HOG_TRAIN_KERNELS_H

#include <math.h>

#include "train_run.h"

/* For train_rows.c alone: each loop there is compiled once per combination
 * of options, these inlined into it with the options a constant. */

/* The general loops take OPT_PACKED with the OPT_* flags when the model
 * is packed (train_run.h): a constant in each copy of the loop, so that an
 * unpacked run's indexes by outputs, as before there were records, with no
 * stride loaded at every non-zero. */
#define OPT_PACKED 16u

/* Feature j's slot in the private copies, or -1: its index where the
 * copies are the first features (feature_tables.first), else the map's. */
static inline int32_t copy_slot(const epoch_job *job, uint32_t j)
{
    if (job->tab.first)
        return j < job->tab.first ? (int32_t)j : -1;
    return hog_slot_of(job->tab.map, job->tab.map_bits, j);
}

/* The K weights of feature j: the worker's private copy if j is hot, else
 * the shared model. */
static inline hog_weight *weights_of(const epoch_job *job, const worker_state *ws, uint32_t j, const unsigned opt)
{
    const uint32_t K = job->m->outputs;
    int32_t h = copy_slot(job, j);
    return h >= 0 ? ws->hot + (size_t)h * K : ws->w + (size_t)j * ((opt & OPT_PACKED) ? job->m->stride : K);
}

/* The same for the AdaGrad sums of feature j. */
static inline hog_weight *acc_of(const epoch_job *job, const worker_state *ws, uint32_t j, const unsigned opt)
{
    const uint32_t K = job->m->outputs;
    int32_t h = copy_slot(job, j);
    return h >= 0 ? ws->hotacc + (size_t)h * K
                  : ws->optim.acc + (size_t)j * ((opt & OPT_PACKED) ? ws->optim.astride : K);
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
 * (HOGWILD!'s sparse penalty, see hog_scan_l2_scales) and eta the schedule's step:
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
 * racy, as HOGWILD! allows. The flags OPT_* (train_run.h) name the
 * options a segment runs.
 */
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
 * weights as NG does when it grows; a packed model's reciprocal with it)
 * and returns sum (x / s)^2 of the row. */
KERNEL float normalize_row(const epoch_job *job, const worker_state *ws, const hog_row *row, const unsigned opt)
{
    const uint32_t K = job->m->outputs, fs = (opt & OPT_PACKED) ? ws->optim.fstride : 1;
    float nsum = 0.0f;
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint32_t j = row->index[i];
        float ax = fabsf(row->value[i]);
        float s = hog_w_load(&ws->optim.xmax[(size_t)j * fs]);
        if (ax > s) {
            if (s > 0.0f) {
                float shrink = (s / ax) * (s / ax);
                hog_weight *w = weights_of(job, ws, j, opt);
                for (uint32_t k = 0; k < K; k++)
                    hog_w_store(&w[k], hog_w_load(&w[k]) * shrink);
            }
            hog_w_store(&ws->optim.xmax[(size_t)j * fs], ax);
            if (opt & OPT_PACKED)
                hog_w_store(&ws->optim.inv[(size_t)j * fs], 1.0f / ax);
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

/* The squared loss's importance-invariant update (Karampatziakis and
 * Langford 2011, Vowpal Wabbit's default with normalized): a gradient step
 * moves the prediction towards the label by a = the step's rate times the
 * row's squared norm in the rate's metric (with normalized: step * t/N *
 * (sum (x/s)^2 + the bias's 1), times the importance weight), and overshoots
 * it once a > 1, flipping and growing the error once a > 2. Taking the step
 * as the limit of infinitely many small ones, the prediction moves by
 * 1 - e^-a of the error instead of a: the same step while a is small, never
 * past the label however large a row is, so a step that suits the average
 * row cannot diverge on an unusually long one. The gradient is scaled by
 * this factor, (1 - e^-a) / a. */
KERNEL float invariant_factor(float a)
{
    return a > 1e-4f ? -expm1f(-a) / a : 1.0f - 0.5f * a;
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

#endif /* HOG_TRAIN_KERNELS_H */
