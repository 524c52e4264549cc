/* test_pool_threads.c: the worker pool runs every step on every worker, reuses its threads, and binds them. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "pool/pool.h"

typedef struct step_arg {
    atomic_uint calls;
    atomic_uint mask;
    pthread_t threads[8];
    int cpu[8];
} step_arg;

static void record(void *v, unsigned ith, unsigned nth)
{
    step_arg *a = v;
    cr_assert(ith < nth && nth <= 8);
    atomic_fetch_add(&a->calls, 1);
    atomic_fetch_or(&a->mask, 1u << ith);
    a->threads[ith] = pthread_self();
    a->cpu[ith] = sched_getcpu();
}

Test(pool, every_worker_runs_each_step_once)
{
    hog_pool *p;
    cr_assert_eq(hog_pool_create(4, 0, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), 4u);
    step_arg a = {0};
    for (int step = 0; step < 100; step++)
        hog_pool_run(p, record, &a);
    cr_assert_eq(atomic_load(&a.calls), 400u);
    cr_assert_eq(atomic_load(&a.mask), 0xfu);
    hog_pool_free(p);
}

Test(pool, threads_are_reused_across_steps)
{
    hog_pool *p;
    cr_assert_eq(hog_pool_create(2, 0, &p, NULL, 0), 0);
    step_arg a = {0}, b = {0};
    hog_pool_run(p, record, &a);
    hog_pool_run(p, record, &b);
    for (int i = 0; i < 2; i++)
        cr_assert(pthread_equal(a.threads[i], b.threads[i]));
    hog_pool_free(p);
}

Test(pool, default_is_one_worker_per_core_and_binding_pins_them)
{
    unsigned cores = hog_pool_cores();
    cr_assert_geq(cores, 1u);
    hog_pool *p;
    cr_assert_eq(hog_pool_create(0, 1, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), cores);
    if (cores > 8) {
        hog_pool_free(p);
        cr_skip_test("more than 8 cores: placement checked on the first 8 only by other tests");
    }
    step_arg a = {0};
    hog_pool_run(p, record, &a);
    /* Pinned to distinct cores: each worker reports a different CPU. */
    for (unsigned i = 0; i < cores; i++)
        for (unsigned j = i + 1; j < cores; j++)
            cr_assert_neq(a.cpu[i], a.cpu[j], "workers %u and %u share cpu %d", i, j, a.cpu[i]);
    hog_pool_free(p);
}

Test(pool, free_accepts_null)
{
    hog_pool_free(NULL);
}
