/* train_mf.h: the private interface of matrix factorisation: rating triples, name maps, the model object and the SGD step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_MF_H
#define HOG_TRAIN_MF_H

#include "train.h"

#define HOG_MF_MAX_RANK 1024u

/* One rating, 12 bytes: the training loop reads a triple and two factor
 * rows, so a triple is one record rather than three arrays (one cache miss,
 * not three, when the order is shuffled). */
typedef struct hog_mf_triple {
    uint32_t user;
    uint32_t item;
    float rating;
} hog_mf_triple;

_Static_assert(sizeof(hog_mf_triple) == 12, "a triple is 12 bytes in memory and on disk");

/* Names <-> dense ids. Names are NUL-terminated, back to back in `names`;
 * name i starts at off[i] (off[n] is the end). `slots` is an open-addressing
 * table of id + 1 (0: empty), cap a power of two, at most half full. The
 * names and offsets may point into a mapped file (owned == 0). */
typedef struct hog_idmap {
    uint32_t n;
    uint32_t *off;
    char *names;
    uint64_t names_len; /* bytes used in names */
    uint64_t names_cap; /* bytes allocated (owned only) */
    uint32_t off_cap;   /* entries allocated in off (owned only) */
    uint32_t *slots;
    uint32_t cap;
    int owned;
} hog_idmap;

/* Adds name s[0..len) unless present; *id receives its dense id.
 * Returns 0, -ENOMEM, or HOG_ECORRUPT when the map is full (2^32 - 2 names
 * or 4 GiB of names). */
int hog_idmap_intern(hog_idmap *m, const char *s, size_t len, uint32_t *id);
/* The id of s[0..len), or -1. */
int64_t hog_idmap_find(const hog_idmap *m, const char *s, size_t len);
/* Builds the table over names already in place (a mapped file). Returns 0,
 * -ENOMEM, or HOG_ECORRUPT (a name twice). */
int hog_idmap_index(hog_idmap *m);
/* Checks names and offsets already in place (from a file: offsets
 * increasing from 0 to names_len, every name NUL-terminated with no NUL
 * inside), then indexes them. Returns 0, -ENOMEM or HOG_ECORRUPT. */
int hog_idmap_check(hog_idmap *m);
void hog_idmap_free(hog_idmap *m);
static inline const char *hog_idmap_name(const hog_idmap *m, uint32_t id)
{
    return id < m->n ? m->names + m->off[id] : NULL;
}

struct hog_ratings {
    hog_ratings_info info;
    const hog_mf_triple *t; /* info.ratings triples, in file order */
    hog_mf_triple *own;     /* t when read from text */
    hog_idmap users, items;
    void *map;              /* a mapped .hgr */
    size_t map_len;
};

/* The fingerprint of a set of ratings: the CRC-32 of its triples (high
 * half) and of its user then item names (low half). */
uint64_t hog_ratings_fingerprint(const hog_ratings *r);

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
