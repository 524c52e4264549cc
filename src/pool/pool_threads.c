/* pool_threads.c: a fixed pool of worker threads, placed over NUMA nodes and pinned with hwloc, that run one parallel step at a time. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"

/* A step is published by bumping `generation` under the mutex; each worker
 * runs it once and the last to finish wakes the caller. Dispatch costs a few
 * microseconds, and the pool runs a handful of steps per epoch, so a mutex
 * and two condition variables are simpler than anything lock-free and cost
 * nothing measurable. */
typedef struct hog_worker {
    hog_pool *pool;
    unsigned ith;
    int bound; /* HOG_BIND_* flags, written by the worker in the binding step */
    pthread_t thread;
} hog_worker;

struct hog_pool {
    pthread_mutex_t mu;
    pthread_cond_t start;
    pthread_cond_t done;
    uint64_t generation;
    unsigned pending;
    int stop;
    hog_pool_fn fn;
    void *arg;

    unsigned nth;
    unsigned started;
    hog_worker *workers;
    const hog_topo *topo; /* NULL when it could not be loaded and is not needed */
    hog_place *place;     /* nth placements; NULL without bind */
};

unsigned hog_pool_default_threads(void)
{
    const hog_topo *t;
    if (hog_topo_default(&t, NULL, 0) < 0)
        return 1;
    return hog_topo_workers(t);
}

static void *worker_main(void *v)
{
    hog_worker *w = v;
    hog_pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->stop)
            pthread_cond_wait(&p->start, &p->mu);
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->generation;
        hog_pool_fn fn = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);

        hog_vector_state_clear();
        fn(arg, w->ith, p->nth);

        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

/* The first step of a bound pool: each worker pins itself, so that binding
 * is complete (and its outcome known) when hog_pool_create returns. */
static void bind_step(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    hog_pool *p = arg;
    p->workers[ith].bound = hog_topo_bind_thread(p->topo, &p->place[ith], ith);
}

static int pool_start(hog_pool *p, const hog_topo *topo, unsigned nthreads, int bind, char *err, size_t err_len)
{
    p->topo = topo;
    p->nth = nthreads ? nthreads : hog_topo_workers(topo); /* topo is set when nthreads is 0 */
    p->workers = hog_calloc(p->nth, sizeof(*p->workers));
    if (!p->workers)
        return hog_fail(-ENOMEM, err, err_len, "out of memory for %u workers", p->nth);
    if (bind) {
        p->place = hog_calloc(p->nth, sizeof(*p->place));
        if (!p->place)
            return hog_fail(-ENOMEM, err, err_len, "out of memory for %u workers", p->nth);
        int rc = hog_topo_place(topo, p->nth, p->place);
        if (rc < 0)
            return hog_fail(rc, err, err_len, "cannot place %u workers: %s", p->nth, hog_strerror(rc));
    }
    for (unsigned i = 0; i < p->nth; i++) {
        p->workers[i].pool = p;
        p->workers[i].ith = i;
        int rc = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
        if (rc != 0)
            return hog_fail(-rc, err, err_len, "cannot start worker %u: %s", i, strerror(rc));
        p->started++;
    }
    if (bind) {
        if (hog_topo_is_machine(topo)) {
            hog_pool_run(p, bind_step, p);
            unsigned cpu = 0, mem = 0;
            for (unsigned i = 0; i < p->nth; i++) {
                cpu += (p->workers[i].bound & HOG_BIND_CPU) != 0;
                mem += (p->workers[i].bound & HOG_BIND_MEM) != 0;
            }
            hog_log(HOG_LOG_DEBUG, "%u workers over %u NUMA nodes: %u pinned, %u with node-bound memory policy",
                    p->nth, hog_topo_nodes(topo), cpu, mem);
        } else {
            hog_log(HOG_LOG_INFO, "topology of %s is not this machine's: %u workers placed on it, not bound",
                    hog_topo_source(topo), p->nth);
        }
    }
    return 0;
}

/* Pools started by this process: hog_pool_created, which tests read. */
static atomic_ulong pools_created;

unsigned long hog_pool_created(void)
{
    return atomic_load_explicit(&pools_created, memory_order_relaxed);
}

/* Starts the pool on t; t is NULL only without bind and with a thread count. */
static int pool_create(const hog_topo *t, unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len)
{
    *out = NULL;
    hog_pool *p = hog_calloc(1, sizeof(*p));
    if (!p)
        return hog_fail(-ENOMEM, err, err_len, "out of memory for a pool of workers");
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    int rc = pool_start(p, t, nthreads, bind, err, err_len);
    if (rc < 0) {
        hog_pool_free(p);
        return rc;
    }
    atomic_fetch_add_explicit(&pools_created, 1, memory_order_relaxed);
    *out = p;
    return 0;
}

/* bind resolved on topology t (NULL: none could be loaded). */
static int bind_on(const hog_topo *t, unsigned nthreads, int bind)
{
    if (bind != HOG_POOL_BIND_AUTO)
        return bind != 0;
    return t && (nthreads == 0 || nthreads >= hog_topo_workers(t));
}

int hog_pool_create_on(const hog_topo *t, unsigned nthreads, int bind, hog_pool **out, char *err,
                       size_t err_len)
{
    return pool_create(t, nthreads, bind_on(t, nthreads, bind), out, err, err_len);
}

int hog_pool_bind_for(unsigned nthreads, int bind)
{
    const hog_topo *t = NULL;
    char why[512];
    if (bind == HOG_POOL_BIND_AUTO && hog_topo_default(&t, why, sizeof(why)) < 0)
        t = NULL;
    return bind_on(t, nthreads, bind);
}

int hog_pool_create(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len)
{
    *out = NULL;
    const hog_topo *t;
    char why[512] = "";
    int rc = hog_topo_default(&t, why, sizeof(why));
    if (rc < 0) {
        /* A known thread count with no binding asked for needs no
         * topology, and auto then binds nothing (but memory that cannot be
         * had is an error wherever it is missed). */
        if (bind == 1 || nthreads == 0 || rc == -ENOMEM)
            return hog_fail(rc == -ENOMEM ? rc : HOG_ETOPOLOGY, err, err_len, "hwloc: cannot load the topology: %s",
                            why);
        t = NULL;
    }
    return pool_create(t, nthreads, bind_on(t, nthreads, bind), out, err, err_len);
}

void hog_pool_free(hog_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->workers[i].thread, NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->mu);
    hog_free(p->place);
    hog_free(p->workers);
    hog_free(p);
}

unsigned hog_pool_threads(const hog_pool *p)
{
    return p->nth;
}

void hog_pool_run(hog_pool *p, hog_pool_fn fn, void *arg)
{
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->nth;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

int hog_pool_worker_node(const hog_pool *p, unsigned ith)
{
    return p->place && ith < p->nth ? (int)p->place[ith].node : -1;
}

const hog_place *hog_pool_worker_place(const hog_pool *p, unsigned ith)
{
    return p->place && ith < p->nth ? &p->place[ith] : NULL;
}

int hog_pool_worker_bound(const hog_pool *p, unsigned ith)
{
    return ith < p->nth ? p->workers[ith].bound : 0;
}

/* ===================================================================== *
 *  Node-local memory
 *
 *  Each block starts with one cache line that records how it was made, so
 *  hog_pool_free_local needs no size and the caller's memory stays
 *  cache-line aligned (the mappings are page aligned).
 * ===================================================================== */

typedef struct local_header {
    void *base;
    size_t total;
    hog_local_kind kind;
} local_header;

#define LOCAL_HEADER HOG_CACHELINE
_Static_assert(sizeof(local_header) <= LOCAL_HEADER, "the header fits in one cache line");

typedef struct touch_job {
    unsigned ith;
    void *base;
    size_t total;
} touch_job;

static void touch_step(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    touch_job *j = arg;
    /* Writing every page faults it in on the node of the CPU writing it. */
    if (ith == j->ith)
        memset(j->base, 0, j->total);
}

/* The header h, where hog_huge_advise puts it in the mapping of total
 * bytes at base (hog_huge_round's length: from its first 2 MiB boundary,
 * on huge pages advised before the first touch, where it is that large),
 * filled in; returns the caller's bytes after it. */
static void *local_finish(local_header *h, void *base, size_t total, hog_local_kind kind)
{
    h->base = base;
    h->total = total;
    h->kind = kind;
    return (char *)h + LOCAL_HEADER;
}

void *hog_pool_alloc_local(hog_pool *p, unsigned ith, size_t bytes)
{
    if (ith >= p->nth || bytes > SIZE_MAX - LOCAL_HEADER) {
        errno = ith >= p->nth ? EINVAL : ENOMEM;
        return NULL;
    }
    size_t total = hog_huge_round(bytes + LOCAL_HEADER);
    if (total == SIZE_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    const hog_place *pl = hog_pool_worker_place(p, ith);
    if (pl && hog_topo_is_machine(p->topo)) {
        void *base = hog_topo_alloc_node(p->topo, pl->node, total);
        if (base) {
            hog_log(HOG_LOG_DEBUG, "worker %u: %zu bytes bound to NUMA node %u", ith, bytes,
                    hog_topo_node_at(p->topo, pl->node)->os_index);
            return local_finish(hog_huge_advise(base, total), base, total, HOG_LOCAL_NODE);
        }
        int why = errno;
        if (p->workers[ith].bound & HOG_BIND_CPU) {
            base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (base == MAP_FAILED)
                return NULL;
            local_header *h = hog_huge_advise(base, total); /* before the touch */
            touch_job j = {ith, base, total};
            hog_pool_run(p, touch_step, &j);
            hog_log(HOG_LOG_DEBUG, "worker %u: %zu bytes first touched by the worker (binding refused: %s)", ith,
                    bytes, strerror(why));
            return local_finish(h, base, total, HOG_LOCAL_TOUCH);
        }
        hog_log(HOG_LOG_DEBUG, "worker %u: binding refused (%s) and the worker is not pinned", ith, strerror(why));
    }
    void *base = hog_aligned_alloc(HOG_CACHELINE, total);
    if (!base)
        return NULL;
    local_header *h = hog_huge_advise(base, total);
    memset(h, 0, LOCAL_HEADER + bytes);
    hog_log(HOG_LOG_DEBUG, "worker %u: %zu bytes in a plain aligned allocation (no placement to follow)", ith, bytes);
    return local_finish(h, base, total, HOG_LOCAL_PLAIN);
}

void hog_pool_free_local(hog_pool *p, void *mem)
{
    if (!mem)
        return;
    local_header *h = (local_header *)((char *)mem - LOCAL_HEADER);
    switch (h->kind) {
    case HOG_LOCAL_NODE: hog_topo_free_node(p->topo, h->base, h->total); break;
    case HOG_LOCAL_TOUCH: munmap(h->base, h->total); break;
    case HOG_LOCAL_PLAIN: hog_free(h->base); break;
    }
}

hog_local_kind hog_pool_local_kind(const void *mem)
{
    return ((const local_header *)((const char *)mem - LOCAL_HEADER))->kind;
}
