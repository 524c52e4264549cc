/* pool.h: the private interface of the worker pool: threads made once, pinned to cores with hwloc, reused for every parallel step. */
#ifndef HOG_POOL_H
#define HOG_POOL_H

#include "../util/util.h"

typedef struct hog_pool hog_pool;

/* The work of one parallel step: called once on every worker with its index
 * ith in [0, nth). */
typedef void (*hog_pool_fn)(void *arg, unsigned ith, unsigned nth);

/* The number of cores hwloc sees in this process's CPU set (at least 1). */
unsigned hog_pool_cores(void);

/* Starts nthreads workers (0: one per core). With bind set, worker i is
 * pinned to core i (cores in hwloc's logical order, so workers fill one NUMA
 * node before the next; threads beyond the core count wrap around).
 * Returns 0, -ENOMEM, -errno from pthread_create, or HOG_ETOPOLOGY (hwloc
 * failed to load the topology; err names the cause). Binding that the OS
 * refuses is logged and is not an error. */
int hog_pool_create(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len);

/* Stops and joins the workers. NULL is accepted. */
void hog_pool_free(hog_pool *p);

unsigned hog_pool_threads(const hog_pool *p);

/* Runs fn(arg, ith, nth) on every worker and returns when all have returned.
 * Called from one thread at a time (not from a worker). */
void hog_pool_run(hog_pool *p, hog_pool_fn fn, void *arg);

#endif /* HOG_POOL_H */
