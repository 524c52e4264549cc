/* test_pool_shared.c: the shared pool is made once and lent again, a second borrower gets its own, and evaluation and matrix factorisation start no pool per call. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("pool-shared");
}

/* Each test runs in a process of its own, so each starts with no shared pool. */
TestSuite(pool_shared, .init = setup, .fini = scratch_remove);

static void count_step(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    atomic_fetch_add((atomic_uint *)arg, 1u << ith);
}

/* Runs one step on p: every worker reports once. */
static void check_runs(hog_pool *p)
{
    atomic_uint seen = 0;
    hog_pool_run(p, count_step, &seen);
    cr_assert_eq(atomic_load(&seen), (1u << hog_pool_threads(p)) - 1);
}

Test(pool_shared, a_borrower_gets_the_same_pool_each_time)
{
    unsigned long before = hog_pool_created();
    hog_pool *a, *b;
    cr_assert_eq(hog_pool_borrow(2, 0, &a, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(a), 2u);
    check_runs(a);
    hog_pool_return(a);
    cr_assert_eq(hog_pool_borrow(2, 0, &b, NULL, 0), 0);
    cr_assert_eq(b, a, "the pool is kept between calls");
    check_runs(b);
    hog_pool_return(b);
    cr_assert_eq(hog_pool_created() - before, 1u);
    hog_pool_return(NULL);
}

Test(pool_shared, a_second_borrower_meanwhile_gets_a_pool_of_its_own)
{
    unsigned long before = hog_pool_created();
    hog_pool *a, *b, *c;
    cr_assert_eq(hog_pool_borrow(2, 0, &a, NULL, 0), 0);
    cr_assert_eq(hog_pool_borrow(2, 0, &b, NULL, 0), 0, "a borrower never waits for another");
    cr_assert_neq(b, a);
    check_runs(b);
    check_runs(a);
    hog_pool_return(b); /* freed: it was made for that call */
    hog_pool_return(a);
    cr_assert_eq(hog_pool_borrow(2, 0, &c, NULL, 0), 0);
    cr_assert_eq(c, a, "the shared pool is lent again once it is back");
    hog_pool_return(c);
    cr_assert_eq(hog_pool_created() - before, 2u);
}

Test(pool_shared, another_shape_replaces_it_and_a_bound_pool_serves_unbound_calls)
{
    unsigned long before = hog_pool_created();
    hog_pool *p;
    cr_assert_eq(hog_pool_borrow(2, 0, &p, NULL, 0), 0);
    hog_pool_return(p);
    cr_assert_eq(hog_pool_borrow(3, 0, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), 3u);
    cr_assert_null(hog_pool_worker_place(p, 0), "made without bind");
    hog_pool_return(p);
    cr_assert_eq(hog_pool_borrow(3, 1, &p, NULL, 0), 0);
    cr_assert_not_null(hog_pool_worker_place(p, 0), "a borrower asking for binding gets a bound pool");
    check_runs(p);
    hog_pool_return(p);
    hog_pool *q;
    cr_assert_eq(hog_pool_borrow(3, 0, &q, NULL, 0), 0);
    cr_assert_eq(q, p, "the bound pool serves a borrower that does not ask for binding");
    hog_pool_return(q);
    cr_assert_eq(hog_pool_created() - before, 3u);
}

Test(pool_shared, zero_threads_means_one_per_core)
{
    hog_pool *p, *q;
    cr_assert_eq(hog_pool_borrow(0, 0, &p, NULL, 0), 0);
    cr_assert_eq(hog_pool_threads(p), hog_pool_default_threads());
    hog_pool_return(p);
    cr_assert_eq(hog_pool_borrow(hog_pool_default_threads(), 0, &q, NULL, 0), 0);
    cr_assert_eq(q, p);
    hog_pool_return(q);
}

/* A binary data set, its label the sign of a fixed linear rule. */
static hog_dataset *write_data(const char *name, int rows)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {3};
    for (int i = 0; i < rows; i++) {
        double x[6], s = 0;
        for (int j = 0; j < 6; j++) {
            x[j] = (double)hog_rng_below(&r, 2000) / 1000.0 - 1.0;
            s += sin(j + 1.0) * x[j];
        }
        fprintf(f, "%s", s > 0 ? "+1" : "-1");
        for (int j = 0; j < 6; j++)
            fprintf(f, " %d:%.3f", j, x[j]);
        fputc('\n', f);
    }
    fclose(f);
    hog_dataset *ds;
    char err[256] = "";
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    return ds;
}

Test(pool_shared, evaluating_many_times_starts_one_pool)
{
    hog_dataset *ds = write_data("e.svm", 3000);
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 6, 1, 2);
    cr_assert_not_null(m);
    m->class_labels[0] = -1;
    m->class_labels[1] = 1;
    for (uint64_t j = 0; j < 6; j++)
        hog_w_store(&m->w[j], (float)sin(j + 1.0));
    unsigned long before = hog_pool_created();
    hog_metrics first;
    cr_assert_eq(hog_model_evaluate(m, ds, 2, &first), 0);
    cr_assert_eq(first.rows, 3000u);
    cr_assert_gt(first.accuracy, 0.95);
    for (int i = 0; i < 50; i++) {
        hog_metrics mt;
        cr_assert_eq(hog_model_evaluate(m, ds, 2, &mt), 0);
        cr_assert_eq(mt.rows, first.rows);
        cr_assert_eq(mt.accuracy, first.accuracy);
        cr_assert_eq(mt.auc, first.auc);
        cr_assert_float_eq(mt.loss, first.loss, 1e-12);
    }
    cr_assert_eq(hog_pool_created() - before, 1u, "51 evaluations, %lu pools", hog_pool_created() - before);
    hog_model_free(m);
    hog_dataset_close(ds);
}

Test(pool_shared, matrix_factorisation_and_evaluation_share_one_pool)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/r.csv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {5};
    fprintf(f, "user,item,rating\n");
    for (int t = 0; t < 2000; t++)
        fprintf(f, "u%u,i%u,%u\n", hog_rng_below(&r, 40), hog_rng_below(&r, 30), 1 + hog_rng_below(&r, 5));
    fclose(f);
    hog_ratings *rt;
    char err[256] = "";
    cr_assert_eq(hog_ratings_open(path, 0, &rt, err, sizeof(err)), 0, "%s", err);
    hog_mf_params p = hog_mf_params_default();
    p.threads = 2;
    p.bind = 0;
    p.rank = 4;
    p.epochs = 2;
    unsigned long before = hog_pool_created();
    hog_mf_info first;
    for (int i = 0; i < 3; i++) {
        hog_mf_model *m;
        cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), 0, "%s", err);
        hog_mf_info in;
        hog_mf_get_info(m, &in);
        if (i == 0)
            first = in;
        cr_assert_eq(in.params.threads, 2u);
        cr_assert_eq(in.updates, first.updates);
        hog_mf_free(m);
    }
    hog_dataset *ds = write_data("e.svm", 500);
    hog_model *lm = hog_model_new(HOG_LOSS_SQUARED, 6, 1, 0);
    hog_metrics mt;
    cr_assert_eq(hog_model_evaluate(lm, ds, 2, &mt), 0);
    cr_assert_eq(mt.rows, 500u);
    cr_assert_eq(hog_pool_created() - before, 1u, "three trainings and an evaluation, %lu pools",
                 hog_pool_created() - before);
    hog_model_free(lm);
    hog_dataset_close(ds);
    hog_ratings_close(rt);
}
