/* train_mf.h: the private interface of matrix factorisation: the model object and the SGD step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_MF_H
#define HOG_TRAIN_MF_H

#include "../etl/etl.h" /* ratings: triples and name maps */
#include "../net/net.h" /* several machines */
#include "train.h"

#define HOG_MF_MAX_RANK 1024u

struct hog_mf_model {
    hog_mf_info info;
    uint32_t stride;    /* floats between factor rows: rank rounded up to 16 (64 bytes) */
    hog_weight *p;      /* users * stride, user factor rows, cache-line aligned */
    hog_weight *q;      /* items * stride */
    hog_weight *bu;     /* users */
    hog_weight *bi;     /* items */
    hog_idmap users, items;
};

/* A zeroed model with the given shape and owned, empty name maps.
 * Returns NULL on -ENOMEM. */
hog_mf_model *hog_mf_new(uint32_t users, uint32_t items, uint32_t rank);

/* The loss of one rating as hog_mf_step minimises it, in double:
 * 1/2 e^2 + l2/2 (|p|^2 + |q|^2) + l2b/2 (bu^2 + bi^2), e = r - prediction. */
double hog_mf_rating_loss(uint32_t k, double mean, double bu, double bi, const float *p,
                          const float *q, double r, double l2, double l2b);

/* One SGD step on one rating, on private copies p[0..k), q[0..k) and the
 * biases (the trainer loads them from and stores them to the shared model):
 * each parameter moves by -step times its gradient of hog_mf_rating_loss.
 * Returns e, the error before the step. Plain floats so the compiler
 * vectorises the dot product and the update. */
static inline float hog_mf_step(uint32_t k, float mean, float *restrict bu, float *restrict bi,
                                float *restrict p, float *restrict q, float r, float step, float l2,
                                float l2b)
{
    float dot = 0.0f;
    for (uint32_t f = 0; f < k; f++)
        dot += p[f] * q[f];
    float e = r - (mean + *bu + *bi + dot);
    float se = step * e, sr = 1.0f - step * l2;
    for (uint32_t f = 0; f < k; f++) {
        float pf = p[f], qf = q[f];
        p[f] = sr * pf + se * qf;
        q[f] = sr * qf + se * pf;
    }
    *bu += step * (e - l2b * *bu);
    *bi += step * (e - l2b * *bi);
    return e;
}

#endif /* HOG_TRAIN_MF_H */
