/* pool_shared.c: the process-wide worker pool that one-shot parallel calls borrow, so that they do not start threads on every call. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>

#include "pool.h"

/*
 * hog_model_evaluate and hog_mf_train each used to start a pool and join it
 * again, a thread start per core per call: the cost an embedding program
 * pays again and again when it scores a model after every change. They
 * borrow this pool instead. The design, kept simple on purpose:
 *
 *   - One pool, made on the first borrow and kept for the life of the
 *     process (idle workers wait on a condition variable and cost nothing),
 *     as the topology (hog_topo_default) is kept.
 *   - A borrower names the shape it needs: a thread count and whether the
 *     workers are bound. A pool with that count serves it, a bound pool also
 *     serving a borrower that does not ask for binding; any other shape
 *     replaces the pool with one of the new shape (it is idle: nobody holds
 *     it).
 *   - It is lent to one borrower at a time, as hog_pool_run requires. A
 *     second borrower meanwhile (another thread, or a progress callback of
 *     the call that holds it) gets a pool of its own for its one call, as
 *     before, so no call ever waits for another and none can deadlock.
 *   - A forked child has none of the parent's threads: it forgets the pool
 *     (leaking it, since its mutex may be in any state) and makes its own.
 *
 * The trainer is not a borrower: a hog_trainer owns its pool for its life
 * and hands that one to the evaluations it runs.
 */
static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static hog_pool *shared;   /* the pool, or NULL before the first borrow */
static int shared_bind;    /* it was made with bind */
static int shared_lent;    /* a borrower holds it */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&shared_mu);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&shared_mu);
}

static void fork_child(void)
{
    shared = NULL;
    shared_lent = 0;
    pthread_mutex_unlock(&shared_mu);
}

static void fork_register(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int hog_pool_borrow(unsigned nthreads, int bind, hog_pool **out, char *err, size_t err_len)
{
    *out = NULL;
    pthread_once(&fork_once, fork_register);
    unsigned want = nthreads;
    const hog_topo *t;
    int topo_rc = want == 0 || bind == HOG_POOL_BIND_AUTO ? hog_topo_default(&t, err, err_len) : 0;
    if (topo_rc == -ENOMEM)
        return topo_rc;
    if (want == 0 && topo_rc == 0)
        want = hog_topo_workers(t);
    bind = hog_pool_bind_for(nthreads, bind); /* the topology is loaded (or failed for good) */
    /* want is 0 only when the topology failed: hog_pool_create then fails
     * with its message, as it did for every call before. */
    pthread_mutex_lock(&shared_mu);
    if (shared_lent || want == 0) {
        pthread_mutex_unlock(&shared_mu);
        return hog_pool_create(nthreads, bind, out, err, err_len);
    }
    if (shared && hog_pool_threads(shared) == want && (shared_bind || !bind)) {
        shared_lent = 1;
        *out = shared;
        pthread_mutex_unlock(&shared_mu);
        return 0;
    }
    hog_pool *idle = shared; /* another shape, and nobody holds it */
    shared = NULL;
    shared_lent = 1; /* the new pool is made outside the lock, already lent */
    pthread_mutex_unlock(&shared_mu);

    hog_pool_free(idle);
    hog_pool *p;
    int rc = hog_pool_create(want, bind, &p, err, err_len);
    pthread_mutex_lock(&shared_mu);
    shared = rc < 0 ? NULL : p;
    shared_bind = bind;
    shared_lent = rc == 0;
    pthread_mutex_unlock(&shared_mu);
    if (rc == 0)
        *out = p;
    return rc;
}

void hog_pool_return(hog_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&shared_mu);
    int mine = p == shared;
    if (mine)
        shared_lent = 0;
    pthread_mutex_unlock(&shared_mu);
    if (!mine)
        hog_pool_free(p);
}
