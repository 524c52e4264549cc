/* train_replicas.c: model replicas (per NUMA node or per worker), averaged into one another by a background thread and into the model after every epoch. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "train_run.h"

int hog_replicas_make(replica_set *r, hog_replicas kind, hog_pool *pool, hog_model *m, worker_state *ws,
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

void hog_replicas_free(replica_set *r, hog_pool *pool)
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

void hog_replicas_average(const replica_set *r, hog_pool *pool, hog_model *m)
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

void hog_replicas_background_start(replica_set *r)
{
    if (r->n < 2)
        return; /* one replica: nothing to average with */
    atomic_store_explicit(&r->stop, 0, memory_order_relaxed);
    r->running = pthread_create(&r->thread, NULL, replicas_background, r) == 0;
    if (!r->running)
        hog_log(HOG_LOG_WARN, "node replicas: no averaging thread could start; they meet after the epoch");
}

void hog_replicas_background_stop(replica_set *r)
{
    if (!r->running)
        return;
    atomic_store_explicit(&r->stop, 1, memory_order_relaxed);
    pthread_join(r->thread, NULL);
    r->running = 0;
}
