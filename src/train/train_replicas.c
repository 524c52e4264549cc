/* train_replicas.c: model replicas (per NUMA node or per worker), averaged into one another by a background thread and into the model after every epoch. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "train_run.h"

int hog_replicas_make(replica_set *r, hog_replicas kind, hog_pool *pool, hog_model *m, const optim_state *o,
                      worker_state *ws, unsigned nth)
{
    memset(r, 0, sizeof(*r));
    r->dim = m->dim;
    r->stride = m->stride;
    r->outputs = m->outputs;
    if (o->packed)
        r->layout = hog_pack_layout(o->flags, m->outputs);
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
    /* Unpacked, each replica steps arrays of its own as well: shared, every
     * worker would still write the AdaGrad sums (and a node's the other
     * nodes'), which is what replicas are for not doing. */
    const int own = !o->packed && (o->flags & (OPT_ADAGRAD | OPT_L1 | OPT_NORMALIZED));
    r->optim = o->packed || own ? hog_calloc(n, sizeof(optim_state)) : NULL;
    if (own && (((o->flags & OPT_ADAGRAD) && !(r->acc = hog_calloc(n, sizeof(hog_weight *)))) ||
                ((o->flags & OPT_L1) && !(r->l1s = hog_calloc(n, sizeof(hog_weight *)))) ||
                ((o->flags & OPT_NORMALIZED) && !(r->xmax = hog_calloc(n, sizeof(hog_weight *))))))
        return -ENOMEM;
    if (!r->w || !r->bias || !r->members || !r->clocks || ((o->packed || own) && !r->optim))
        return -ENOMEM;
    for (unsigned g = 0; g < n; g++)
        hog_overlap_init(&r->clocks[g], hog_now);
    for (unsigned i = 0; i < nth; i++) {
        unsigned g = ws[i].replica;
        if (r->members[g]++ == 0) { /* node-local to its first worker, zeroed like the model */
            const size_t words = (size_t)(r->dim * r->outputs);
            r->w[g] = hog_pool_alloc_local(pool, i, (size_t)(r->dim * r->stride) * sizeof(hog_weight));
            r->bias[g] = hog_pool_alloc_local(pool, i, r->outputs * sizeof(hog_weight));
            if (!r->w[g] || !r->bias[g])
                return -ENOMEM;
            if (r->acc && !(r->acc[g] = hog_pool_alloc_local(pool, i, words * sizeof(hog_weight))))
                return -ENOMEM;
            if (r->l1s && !(r->l1s[g] = hog_pool_alloc_local(pool, i, 2 * words * sizeof(hog_weight))))
                return -ENOMEM;
            if (r->xmax && !(r->xmax[g] = hog_pool_alloc_local(pool, i, (size_t)r->dim * sizeof(hog_weight))))
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
        if (r->acc)
            hog_pool_free_local(pool, (void *)r->acc[g]);
        if (r->l1s)
            hog_pool_free_local(pool, (void *)r->l1s[g]);
        if (r->xmax)
            hog_pool_free_local(pool, (void *)r->xmax[g]);
    }
    hog_free(r->w);
    hog_free(r->bias);
    hog_free(r->acc);
    hog_free(r->l1s);
    hog_free(r->xmax);
    hog_free(r->optim);
    hog_free(r->members);
    for (unsigned g = 0; r->clocks && g < r->n; g++)
        hog_overlap_destroy(&r->clocks[g]);
    hog_free(r->clocks);
    memset(r, 0, sizeof(*r));
}

/* A view into replica g's records of what o views in the model's. */
static hog_weight *rebase(const replica_set *r, unsigned g, const hog_model *m, hog_weight *p)
{
    return p ? r->w[g] + (p - m->w) : NULL;
}

void hog_replicas_load(replica_set *r, const hog_model *m, const optim_state *o)
{
    const size_t bytes = (size_t)(r->dim * r->stride) * sizeof(hog_weight);
    const size_t words = (size_t)(r->dim * r->outputs);
    r->origin = m->w;
    r->origin_bias = m->bias;
    r->run = *o;
    for (unsigned g = 0; g < r->n; g++) {
        memcpy((void *)r->w[g], (const void *)m->w, bytes);
        memcpy((void *)r->bias[g], (const void *)m->bias, r->outputs * sizeof(hog_weight));
        if (!r->optim)
            continue;
        optim_state *v = &r->optim[g];
        *v = *o; /* the strides, the flags and the intercept's AdaGrad sums (shared) */
        if (!o->packed) { /* arrays of its own, from the run's */
            if (r->acc) {
                memcpy((void *)r->acc[g], (const void *)o->acc, words * sizeof(hog_weight));
                v->acc = r->acc[g];
            }
            if (r->l1s) {
                memcpy((void *)r->l1s[g], (const void *)o->l1s, 2 * words * sizeof(hog_weight));
                v->l1s = r->l1s[g];
            }
            if (r->xmax) {
                memcpy((void *)r->xmax[g], (const void *)o->xmax, (size_t)r->dim * sizeof(hog_weight));
                v->xmax = r->xmax[g];
            }
            continue;
        }
        v->xmax = rebase(r, g, m, o->xmax);
        v->inv = rebase(r, g, m, o->inv);
        v->cs = rebase(r, g, m, o->cs);
        v->acc = rebase(r, g, m, o->acc);
        v->l1s = rebase(r, g, m, o->l1s);
    }
}

/* The n words at `at` of every array of arr (and of to, if not NULL): each
 * set to the origin's word (what every replica started from) plus the mean
 * change of the replicas that changed it - the value itself where one did.
 * A plain mean would divide a rare feature's steps, taken in the one
 * replica whose rows hold it, by the replicas that never saw it. */
static void mean_words(hog_weight *const *arr, unsigned nr, const hog_weight *origin, hog_weight *to, size_t at,
                       uint32_t n)
{
    for (uint32_t q = 0; q < n; q++) {
        const float o = hog_w_load(&origin[at + q]);
        float sum = 0.0f, v = o;
        unsigned changed = 0;
        for (unsigned g = 0; g < nr; g++) {
            const float x = hog_w_load(&arr[g][at + q]);
            if (x != o) {
                sum += x - o;
                changed++;
                v = x;
            }
        }
        if (changed > 1)
            v = o + sum / (float)changed;
        for (unsigned g = 0; g < nr; g++)
            hog_w_store(&arr[g][at + q], v);
        if (to)
            hog_w_store(&to[at + q], v);
    }
}

/* The word at `at` of every array of arr (and of to, if not NULL): each
 * set to the largest, which is returned. */
static float max_word(hog_weight *const *arr, unsigned nr, hog_weight *to, size_t at)
{
    float s = 0.0f;
    for (unsigned g = 0; g < nr; g++)
        s = HOG_MAX(s, hog_w_load(&arr[g][at]));
    for (unsigned g = 0; g < nr; g++)
        hog_w_store(&arr[g][at], s);
    if (to)
        hog_w_store(&to[at], s);
    return s;
}

/* Feature j's record in every replica (and in m and the run's arrays, if m
 * is not NULL) merged word by word (see replica_set): the weights,
 * AdaGrad's sums and L1's pairs as mean_words merges them, the scale the
 * largest and its reciprocal after it, the L2 scale left alone. Unpacked,
 * the record is the outputs weights, and the sums, pairs and scale are in
 * each replica's arrays of its own. */
static void merge_feature(const replica_set *r, hog_model *m, uint64_t j)
{
    const uint32_t K = r->outputs;
    const pack_layout *l = &r->layout;
    const size_t at = (size_t)j * r->stride;
    hog_weight *const to = m ? m->w : NULL;
    mean_words(r->w, r->n, r->origin, to, at, K);
    if (!l->stride) {
        if (r->acc)
            mean_words(r->acc, r->n, r->run.acc, m ? r->run.acc : NULL, (size_t)j * K, K);
        if (r->l1s)
            mean_words(r->l1s, r->n, r->run.l1s, m ? r->run.l1s : NULL, (size_t)j * 2 * K, 2 * K);
        if (r->xmax)
            max_word(r->xmax, r->n, m ? r->run.xmax : NULL, j);
        return;
    }
    if (l->xmax) {
        const float s = max_word(r->w, r->n, to, at + l->xmax);
        const float inv = s > 0.0f ? 1.0f / s : 0.0f; /* as the loops compute it */
        for (unsigned g = 0; g < r->n; g++)
            hog_w_store(&r->w[g][at + l->inv], inv);
        if (to)
            hog_w_store(&to[at + l->inv], inv);
    }
    if (l->acc)
        mean_words(r->w, r->n, r->origin, to, at + l->acc, K);
    if (l->l1)
        mean_words(r->w, r->n, r->origin, to, at + l->l1, 2 * K);
}

/* Features [lo, hi) (the biases are feature dim, past the last): merged
 * into every replica and, if m is not NULL, into the model. One index space,
 * so that workers and the background pass can split it anywhere. */
static void replicas_mean(const replica_set *r, hog_model *m, uint64_t lo, uint64_t hi)
{
    for (uint64_t j = lo; j < hi; j++) {
        if (j < r->dim)
            merge_feature(r, m, j);
        else
            mean_words(r->bias, r->n, r->origin_bias, m ? m->bias : NULL, 0, r->outputs);
    }
}

typedef struct mean_job {
    const replica_set *r;
    hog_model *m;
} mean_job;

static void mean_worker(void *arg, unsigned ith, unsigned nth)
{
    const mean_job *j = arg;
    uint64_t n = j->r->dim + 1;
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
    const uint64_t n = r->dim + 1, chunk = 4096;
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
