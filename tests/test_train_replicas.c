/* test_train_replicas.c: model replicas per worker and per node: one worker's replica equals the shared model, several average into a model that learns, the sparse path only. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

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
    hog_train_params p = plain_params();
    p.threads = 1;
    p.epochs = 4;
    hog_model *shared = train(tr, NULL, p);
    for (hog_replicas r = HOG_REPLICAS_NODE; r <= HOG_REPLICAS_CORE; r++) {
        p.replicas = r;
        hog_model *m = train(tr, NULL, p);
        cr_assert(same_weights(m, shared), "%s replicas, one worker", hog_replicas_name(r));
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_eq(in.params.replicas, r);
        hog_model_free(m);
    }
    hog_model_free(shared);
    hog_dataset_close(tr);
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
