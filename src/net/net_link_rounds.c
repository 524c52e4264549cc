/* net_link_rounds.c: synchronous averaging (hog_link_params.sync average): rounds through rank 0 in which every living rank's model is summed and the mean sent back, and the trainer's requests the link thread answers. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <string.h>
#include <zmq.h>

#include "net_link.h"

static void spans_read(const hog_link *l, float *out)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < l->nspans; i++)
        for (uint64_t j = 0; j < l->spans[i].count; j++)
            out[k++] = atomic_load_explicit(&l->spans[i].w[j], memory_order_relaxed);
}

/* The spans take the mean m; with a snapshot s, plus what changed since. */
static void spans_adopt(hog_link *l, const unsigned char *m_bytes, const float *m, const float *s)
{
    uint64_t k = 0;
    for (unsigned i = 0; i < l->nspans; i++)
        for (uint64_t j = 0; j < l->spans[i].count; j++, k++) {
            float v = m ? m[k] : hog_frame_f32(m_bytes, k);
            if (s && !l->spans[i].max)
                v += atomic_load_explicit(&l->spans[i].w[j], memory_order_relaxed) - s[k];
            atomic_store_explicit(&l->spans[i].w[j], v, memory_order_relaxed);
            l->base[k] = v;
        }
}

static link_round *round_get(hog_link *l, uint64_t key)
{
    link_round *free_slot = NULL;
    for (unsigned i = 0; i < LINK_ROUNDS; i++) {
        if (l->rounds[i].key == key)
            return &l->rounds[i];
        if (!l->rounds[i].key && !free_slot)
            free_slot = &l->rounds[i];
    }
    if (!free_slot)
        return NULL;
    if (!free_slot->sum && !(free_slot->sum = hog_malloc(HOG_MAX(l->nelems, 1) * sizeof(double))))
        return NULL;
    if (!free_slot->from && !(free_slot->from = hog_malloc(l->nodes)))
        return NULL;
    free_slot->key = key;
    memset(free_slot->from, 0, l->nodes);
    uint64_t k = 0;
    for (unsigned i = 0; i < l->nspans; i++)
        for (uint64_t j = 0; j < l->spans[i].count; j++)
            free_slot->sum[k++] = l->spans[i].max ? -(double)INFINITY : 0.0;
    return free_slot;
}

/* Rank 0 adds one rank's model to a round. */
void hog_link_round_add(hog_link *l, uint64_t key, uint32_t from, const unsigned char *bytes, const float *vals)
{
    link_round *rd = round_get(l, key);
    if (!rd) {
        hog_link_set_failed(l, "rank 0: no room for averaging round %llu (%u rounds open at most, or out of memory)",
                            (unsigned long long)key, LINK_ROUNDS);
        return;
    }
    if (rd->from[from])
        return;
    rd->from[from] = 1;
    uint64_t k = 0;
    for (unsigned i = 0; i < l->nspans; i++)
        for (uint64_t j = 0; j < l->spans[i].count; j++, k++) {
            double v = vals ? vals[k] : hog_frame_f32(bytes, k);
            rd->sum[k] = l->spans[i].max ? HOG_MAX(rd->sum[k], v) : rd->sum[k] + v;
        }
}

/* Whether the trainer waits on request req (a round: the one of key).
 * Read under the lock, which the trainer holds when it writes the
 * request; once seen open, the request stays as it is until answered. */
int hog_link_request_open(hog_link *l, link_request req, uint64_t key)
{
    pthread_mutex_lock(&l->lock);
    int yes = l->req == req && !l->req_done && (req != LINK_REQ_ROUND || l->req_key == key);
    pthread_mutex_unlock(&l->lock);
    return yes;
}

void hog_link_answer(hog_link *l, int rc)
{
    pthread_mutex_lock(&l->lock);
    l->req_done = 1;
    l->req_rc = rc;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* This rank receives a round's mean (rank 0: computes it). */
void hog_link_round_mean(hog_link *l, uint64_t key, const unsigned char *bytes, const float *vals)
{
    if (l->snap && key == l->snap_key) { /* a tick: keep what changed since the snapshot */
        spans_adopt(l, bytes, vals, l->snap);
        hog_free(l->snap); /* adopted once: no other key may match it */
        l->snap = NULL;
        l->snap_key = 0;
    } else if (hog_link_request_open(l, LINK_REQ_ROUND, key)) {
        spans_adopt(l, bytes, vals, NULL);
        hog_link_answer(l, 0);
    }
}

/* Rank 0: a round is complete when every living rank has contributed. */
void hog_link_rounds_check(hog_link *l)
{
    for (unsigned i = 0; i < LINK_ROUNDS; i++) {
        link_round *rd = &l->rounds[i];
        if (!rd->key)
            continue;
        uint32_t n = 0, missing = 0;
        for (uint32_t r = 0; r < l->nodes; r++) {
            n += rd->from[r];
            missing += !rd->from[r] && atomic_load_explicit(&l->live[r], memory_order_relaxed);
        }
        if (missing)
            continue;
        float *mean = hog_malloc(HOG_MAX(l->nelems, 1) * sizeof(float));
        if (!mean) {
            hog_link_set_failed(l, "rank 0: out of memory for an averaging round");
            return;
        }
        uint64_t k = 0;
        for (unsigned s = 0; s < l->nspans; s++)
            for (uint64_t j = 0; j < l->spans[s].count; j++, k++)
                mean[k] = (float)(l->spans[s].max ? rd->sum[k] : rd->sum[k] / n);
        hog_frame f = hog_link_frame(l, HOG_FRAME_MEAN, rd->key);
        f.count = l->nelems;
        f.f32 = mean;
        for (uint32_t r = 1; r < l->nodes; r++)
            if (rd->from[r] && atomic_load_explicit(&l->live[r], memory_order_relaxed))
                hog_link_send_ctl(l, r, &f);
        uint64_t key = rd->key;
        rd->key = 0;
        hog_link_round_mean(l, key, NULL, mean);
        hog_free(mean);
    }
}

/* This rank's model into round key: rank 0 adds it, the others send it. */
void hog_link_round_contribute(hog_link *l, uint64_t key, int tick)
{
    float *v = hog_malloc(HOG_MAX(l->nelems, 1) * sizeof(float));
    if (!v) {
        hog_link_set_failed(l, "rank %u: out of memory for an averaging round", l->rank);
        return;
    }
    spans_read(l, v);
    if (tick) {
        hog_free(l->snap);
        l->snap = v;
        l->snap_key = key;
    }
    if (l->rank == 0) {
        hog_link_round_add(l, key, 0, NULL, v);
        hog_link_rounds_check(l);
    } else {
        hog_frame f = hog_link_frame(l, HOG_FRAME_SUM, key);
        f.count = l->nelems;
        f.f32 = v;
        int rc = hog_link_send_ctl(l, 0, &f);
        if (rc < 0)
            hog_link_set_failed(l, "rank %u: cannot send its model to rank 0: %s", l->rank, zmq_strerror(-rc));
    }
    if (!tick)
        hog_free(v);
}
