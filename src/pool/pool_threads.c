/* pool_threads.c: a fixed pool of worker threads, pinned with hwloc, that run one parallel step at a time. */
#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <string.h>

#include "pool.h"

/* A step is published by bumping `generation` under the mutex; each worker
 * runs it once and the last to finish wakes the caller. Dispatch costs a few
 * microseconds, and the pool runs a handful of steps per epoch, so a mutex
 * and two condition variables are simpler than anything lock-free and cost
 * nothing measurable. */
typedef struct hog_worker {
    hog_pool *pool;
    unsigned ith;
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
    hwloc_topology_t topo; /* NULL when not binding */
};

static int topology_load(hwloc_topology_t *topo)
{
    if (hwloc_topology_init(topo) < 0)
        return -errno ? -errno : HOG_ETOPOLOGY;
    if (hwloc_topology_load(*topo) < 0) {
        int rc = errno ? -errno : HOG_ETOPOLOGY;
        hwloc_topology_destroy(*topo);
        *topo = NULL;
        return rc;
    }
    return 0;
}

static unsigned topology_cores(hwloc_topology_t topo)
{
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (n <= 0)
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    return n > 0 ? (unsigned)n : 1;
}

unsigned hog_pool_cores(void)
{
    hwloc_topology_t topo;
    if (topology_load(&topo) < 0)
        return 1;
    unsigned n = topology_cores(topo);
    hwloc_topology_destroy(topo);
    return n;
}

static void worker_bind(hog_pool *p, unsigned ith)
{
    hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_CORE) > 0
                                ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    unsigned n = topology_cores(p->topo);
    hwloc_obj_t core = hwloc_get_obj_by_type(p->topo, type, ith % n);
    if (!core)
        return;
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    if (!set)
        return;
    hwloc_bitmap_singlify(set); /* one PU of the core: no migration between its hyperthreads */
    if (hwloc_set_cpubind(p->topo, set, HWLOC_CPUBIND_THREAD) < 0)
        hog_log(HOG_LOG_WARN, "worker %u: cannot bind to core %u: %s", ith, ith % n, strerror(errno));
    hwloc_bitmap_free(set);
}

static void *worker_main(void *v)
{
    hog_worker *w = v;
    hog_pool *p = w->pool;
    if (p->topo)
        worker_bind(p, w->ith);
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

        fn(arg, w->ith, p->nth);

        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

int hog_pool_create(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len)
{
    *out = NULL;
    hog_pool *p = hog_calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    if (bind || nthreads == 0) {
        int rc = topology_load(&p->topo);
        if (rc < 0) {
            hog_pool_free(p);
            return hog_fail(HOG_ETOPOLOGY, err, err_len, "hwloc: cannot load the topology: %s",
                            hog_strerror(rc));
        }
    }
    p->nth = nthreads ? nthreads : topology_cores(p->topo);
    if (!bind && p->topo) {
        hwloc_topology_destroy(p->topo);
        p->topo = NULL;
    }
    p->workers = hog_calloc(p->nth, sizeof(*p->workers));
    if (!p->workers) {
        hog_pool_free(p);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < p->nth; i++) {
        p->workers[i].pool = p;
        p->workers[i].ith = i;
        int rc = pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]);
        if (rc != 0) {
            hog_pool_free(p);
            return hog_fail(-rc, err, err_len, "cannot start worker %u: %s", i, strerror(rc));
        }
        p->started++;
    }
    *out = p;
    return 0;
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
    if (p->topo)
        hwloc_topology_destroy(p->topo);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->mu);
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
