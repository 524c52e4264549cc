/* test_train_hot.c: the workers' private copies of hot weights: with more workers than CPUs the intercept and a hot feature still reach the one-thread loss. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-hot");
}

TestSuite(train_hot, .init = setup, .fini = scratch_remove);

Test(train_hot, hot_features_and_intercept_converge_like_one_thread)
{
    /* Every row has feature 1 and most are positive: the intercept and the
     * hot feature are what workers keep private copies of (here only where
     * workers outnumber the CPUs: 5 segments per worker on 4). More workers
     * must reach the one-thread loss, not overshoot it. */
    char path[160];
    FILE *f = create("hot.svm", path);
    hog_rng r = {13};
    for (int i = 0; i < 20000; i++) {
        int a = 2 + (int)hog_rng_below(&r, 5000), b = 5002 + (int)hog_rng_below(&r, 5000);
        int pos = hog_rng_below(&r, 100) < 80 ? 1 : (a % 2);
        fprintf(f, "%d 1:1 %d:1 %d:%d\n", pos ? 1 : -1, a, b, pos ? 1 : 0);
    }
    fclose(f);
    hog_dataset *tr;
    char err[256];
    cr_assert_eq(hog_dataset_open(path, NULL, &tr, err, sizeof(err)), 0, "%s", err);
    /* The plain loop, and the normalized one of the defaults: each has its
     * own copy of the row loop with the private copies. */
    for (int normalized = 0; normalized <= 1; normalized++) {
        double loss[3];
        const unsigned threads[3] = {1, 2, 4};
        for (int i = 0; i < 3; i++) {
            hog_train_params p = normalized ? hog_train_params_default() : plain_params();
            p.threads = threads[i];
            p.epochs = 5;
            if (!normalized)
                p.step = 0.2;
            hog_model *m = train(tr, NULL, p);
            hog_model_info in;
            hog_model_get_info(m, &in);
            loss[i] = in.train.loss;
            hog_model_free(m);
        }
        for (int i = 1; i < 3; i++)
            cr_assert_lt(loss[i], loss[0] * 1.15, "%s, %u threads: loss %g, one thread %g",
                         normalized ? "normalized" : "plain", threads[i], loss[i], loss[0]);
    }
    hog_dataset_close(tr);
}
