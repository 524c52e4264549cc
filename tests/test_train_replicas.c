/* test_train_replicas.c: model replicas per worker and per node: one worker's replica equals the shared model, several average into a model that learns (a word taking the mean change of the replicas that changed it), the sparse path only. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "train/train.h"
#include "train/train_run.h"

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-replicas");
}

TestSuite(train_replicas, .init = setup, .fini = scratch_remove);

/* With one worker a replica of its own changes nothing: the same weights,
 * bit for bit, as the shared model (node: one node here, one replica). */
Test(train_replicas, one_worker_replicas_equal_the_shared_model)
{
    hog_dataset *tr = make_data("tr.svm", 3000, 200, 20, 'b', 5);
    /* the plain update, and the default one with AdaGrad and L1: their sums,
     * pairs and scales in arrays of the replica's own (a small model stays
     * unpacked) */
    for (int opt = 0; opt < 2; opt++) {
        hog_train_params p = plain_params();
        p.threads = 1;
        p.epochs = 4;
        if (opt) {
            p.normalized = 1;
            p.schedule = HOG_SCHEDULE_ADAGRAD;
            p.l1 = 1e-5;
        }
        p.replicas = HOG_REPLICAS_MACHINE;
        hog_model *shared = train(tr, NULL, p);
        for (hog_replicas r = HOG_REPLICAS_NODE; r <= HOG_REPLICAS_CORE; r++) {
            p.replicas = r;
            hog_model *m = train(tr, NULL, p);
            cr_assert(same_weights(m, shared), "%s replicas, one worker, options %d", hog_replicas_name(r), opt);
            hog_model_info in;
            hog_model_get_info(m, &in);
            cr_assert_eq(in.params.replicas, r);
            hog_model_free(m);
        }
        hog_model_free(shared);
    }
    hog_dataset_close(tr);
}

/* An unpacked model's replicas step AdaGrad sums and feature scales of
 * their own, merged into the run's with the weights: the sums as the
 * weights are, the scales the largest. */
Test(train_replicas, unpacked_replicas_step_state_of_their_own)
{
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 3, 1, 2);
    cr_assert_not_null(m);
    hog_pool *pool;
    char err[256] = "";
    cr_assert_eq(hog_pool_create(2, 0, &pool, err, sizeof(err)), 0, "%s", err);
    worker_state ws[2];
    memset(ws, 0, sizeof(ws));
    hog_weight acc[3], xmax[3];
    for (int j = 0; j < 3; j++) {
        hog_w_store(&acc[j], 1.0f);
        hog_w_store(&xmax[j], 2.0f);
    }
    optim_state o = {.flags = OPT_ADAGRAD | OPT_NORMALIZED, .fstride = 1, .astride = 1, .lstride = 2, .acc = acc,
                     .xmax = xmax};
    replica_set r;
    cr_assert_eq(hog_replicas_make(&r, HOG_REPLICAS_CORE, pool, m, &o, ws, 2), 0);
    hog_replicas_load(&r, m, &o);
    for (unsigned g = 0; g < 2; g++) {
        cr_assert_not_null(r.optim);
        cr_assert_neq(r.optim[g].acc, acc, "replica %u steps sums of its own", g);
        cr_assert_neq(r.optim[g].xmax, xmax);
        cr_assert_eq(hog_w_load(&r.optim[g].acc[1]), 1.0f, "loaded from the run's");
        cr_assert_eq(hog_w_load(&r.optim[g].xmax[1]), 2.0f);
    }
    hog_w_store(&r.optim[0].acc[0], 3.0f); /* one replica: its value */
    hog_w_store(&r.optim[0].acc[1], 2.0f); /* both: the mean change */
    hog_w_store(&r.optim[1].acc[1], 4.0f);
    hog_w_store(&r.optim[1].xmax[2], 5.0f); /* the largest */
    cr_assert_eq(hog_w_load(&acc[0]), 1.0f, "the run's sums untouched while the replicas step");
    hog_replicas_average(&r, pool, m);
    const float want_acc[3] = {3.0f, 1.0f + (1.0f + 3.0f) / 2, 1.0f}, want_x[3] = {2.0f, 2.0f, 5.0f};
    for (int j = 0; j < 3; j++) {
        cr_assert_float_eq(hog_w_load(&acc[j]), want_acc[j], 1e-6f, "sum %d: %g", j, (double)hog_w_load(&acc[j]));
        cr_assert_eq(hog_w_load(&xmax[j]), want_x[j], "scale %d", j);
        for (unsigned g = 0; g < 2; g++) {
            cr_assert_float_eq(hog_w_load(&r.optim[g].acc[j]), want_acc[j], 1e-6f);
            cr_assert_eq(hog_w_load(&r.optim[g].xmax[j]), want_x[j]);
        }
    }
    hog_replicas_free(&r, pool);
    hog_pool_free(pool);
    hog_model_free(m);
}

/* Several replicas are averaged into one model that still learns: per
 * worker, and per node on a synthetic machine of two nodes, where a
 * background thread averages while the workers run. */
static void replicas_learn(hog_replicas r)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 1);
    hog_dataset *te = make_data("te.svm", 1000, 200, 20, 'b', 2);
    hog_train_params p = plain_params();
    p.threads = 4;
    p.epochs = 15;
    p.step = 0.5;
    p.replicas = r;
    hog_model *m = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.93, "%s replicas: accuracy %g", hog_replicas_name(r), in.test.accuracy);
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

Test(train_replicas, core_replicas_average_into_a_model_that_learns)
{
    replicas_learn(HOG_REPLICAS_CORE);
}

Test(train_replicas, node_replicas_on_two_nodes_learn)
{
    /* Before the pool loads the topology (once per process). */
    char err[512] = "";
    cr_assert_eq(hog_topology_set("package:2 numa:1 core:2 pu:1", err, sizeof(err)), 0, "%s", err);
    replicas_learn(HOG_REPLICAS_NODE);
}

Test(train_replicas, replicas_are_sparse_path_only)
{
    hog_dataset *tr = make_data("tr.svm", 500, 10, 8, 'b', 1); /* dense enough for auto */
    hog_train_params p = plain_params();
    p.threads = 2;
    p.epochs = 1;
    p.replicas = HOG_REPLICAS_CORE;
    hog_model *m = train(tr, NULL, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_eq(in.params.kernel, HOG_KERNEL_SPARSE, "auto with replicas takes the sparse kernel");
    hog_model_free(m);
    p.kernel = HOG_KERNEL_DENSE;
    hog_trainer *t;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_train_params.replicas core") != NULL, "%s", err);
    hog_trainer_free(t);
    hog_dataset_close(tr);
}

/* The merge after an epoch: each word is what the replicas started from
 * (the model) plus the mean change of the replicas that changed it - the
 * value itself where one did, so a rare feature's steps taken in one
 * replica are not divided by the replicas that never saw it. */
Test(train_replicas, a_merge_takes_the_mean_change_of_the_replicas_that_changed_a_word)
{
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 4, 1, 2);
    cr_assert_not_null(m);
    for (uint64_t j = 0; j < 4; j++)
        hog_w_store(&hog_model_wj(m, j)[0], 1.0f);
    hog_w_store(&m->bias[0], 0.5f);
    hog_pool *pool;
    char err[256] = "";
    cr_assert_eq(hog_pool_create(3, 0, &pool, err, sizeof(err)), 0, "%s", err);
    worker_state ws[3];
    memset(ws, 0, sizeof(ws));
    optim_state o = {.fstride = 1, .astride = 1, .lstride = 2};
    replica_set r;
    cr_assert_eq(hog_replicas_make(&r, HOG_REPLICAS_CORE, pool, m, &o, ws, 3), 0);
    hog_replicas_load(&r, m, &o);
    /* feature 0 untouched; 1 changed by replica 2 alone; 2 by replicas 0
     * and 1; 3 by all three; the bias by replica 0 alone */
    hog_w_store(&r.w[2][1], 1.3f);
    hog_w_store(&r.w[0][2], 2.0f);
    hog_w_store(&r.w[1][2], 0.0f + 1.5f);
    for (unsigned g = 0; g < 3; g++)
        hog_w_store(&r.w[g][3], 1.0f + 0.25f * (float)(g + 1));
    hog_w_store(&r.bias[0][0], -0.75f);
    hog_replicas_average(&r, pool, m);
    const float want[4] = {1.0f, 1.3f, 1.0f + (1.0f + 0.5f) / 2, 1.0f + (0.25f + 0.5f + 0.75f) / 3};
    for (unsigned g = 0; g <= 3; g++)
        for (uint64_t j = 0; j < 4; j++) {
            const hog_weight *w = g < 3 ? &r.w[g][j] : &hog_model_wj(m, j)[0];
            cr_assert_float_eq(hog_w_load(w), want[j], 1e-6f, "%s %u, feature %lu: %g", g < 3 ? "replica" : "model",
                               g, (unsigned long)j, (double)hog_w_load(w));
        }
    cr_assert_eq(hog_w_load(&r.w[1][1]), 1.3f, "one replica's change is its value, bit for bit");
    cr_assert_eq(hog_w_load(&m->bias[0]), -0.75f);
    cr_assert_eq(hog_w_load(&r.bias[2][0]), -0.75f);
    hog_replicas_free(&r, pool);
    hog_pool_free(pool);
    hog_model_free(m);
}
