/* test_train_params.c: the ceiling on features that a run's memory limit sets: bytes per feature by optimiser and replicas, the read parameters lowered to it, a model refused before it is allocated. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("train-params");
}

TestSuite(train_params, .init = setup, .fini = scratch_remove);

#define MIB (1ull << 20)

static hog_trainer *trainer(hog_train_params p)
{
    hog_trainer *t;
    char err[256] = "";
    p.bind = 0;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    return t;
}

/* The model and its optimiser's state have half of the limit; the data the other. */
Test(train_params, the_ceiling_is_what_the_memory_limit_holds_of_the_model_and_its_state)
{
    hog_train_params p = hog_train_params_default();
    p.threads = 2;
    p.mem_limit = 256 * MIB;
    hog_trainer *t = trainer(p);
    /* per feature: 4 bytes of weight per output, and 4 of normalized's
     * scale; one output packs them with the scale's reciprocal and the L2
     * term, 16 bytes (train_run.h, "The model's layout") */
    cr_assert_eq(hog_trainer_max_features(t, 1), 128 * MIB / 16);
    /* ten outputs: their weights, the scale, its reciprocal and the L2
     * scale, 13 words in a record of 16 (a cache line) */
    cr_assert_eq(hog_trainer_max_features(t, 10), 128 * MIB / 64);
    hog_trainer_free(t);

    /* the plain update: the weights alone */
    p.normalized = 0;
    t = trainer(p);
    cr_assert_eq(hog_trainer_max_features(t, 1), 128 * MIB / 4);
    cr_assert_eq(hog_trainer_max_features(t, 10), 128 * MIB / 40);
    hog_trainer_free(t);

    /* AdaGrad 4, L1 8, averaging 12, early stopping 4, normalized 4 per
     * feature; on one output the weight, the scale, its reciprocal, the L2
     * scale, AdaGrad's and L1's words are packed in a record of 8 words */
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.l1 = 1e-4;
    p.average = 1;
    p.early_stop = 2;
    p.normalized = 1;
    t = trainer(p);
    cr_assert_eq(hog_trainer_max_features(t, 1), 128 * MIB / (32 + 12 + 4));
    /* ten outputs: 10 weights, 3 words, 10 sums and 20 of L1 in a record of
     * 48 words (three cache lines), averaging and early stopping besides */
    cr_assert_eq(hog_trainer_max_features(t, 10), 128 * MIB / (48 * 4 + 12 * 10 + 4 * 10));
    hog_trainer_free(t);

    /* a replica per worker is a model's copy each */
    p = hog_train_params_default();
    p.threads = 2;
    p.mem_limit = 256 * MIB;
    p.normalized = 0;
    p.replicas = HOG_REPLICAS_CORE;
    t = trainer(p);
    cr_assert_eq(hog_trainer_max_features(t, 1), 128 * MIB / (4 + 2 * 4));
    hog_trainer_free(t);
}

Test(train_params, read_parameters_take_the_lower_ceiling)
{
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.mem_limit = 256 * MIB;
    p.normalized = 0; /* 4 bytes a feature */
    hog_trainer *t = trainer(p);
    hog_read_params rp = hog_read_params_default(), buf;
    rp.hash_bits = 7;
    const hog_read_params *r = hog_trainer_read_params(t, &rp, &buf);
    cr_assert_eq(r, &buf);
    cr_assert_eq(r->max_features, 128 * MIB / 4);
    cr_assert_eq(r->hash_bits, 7, "the rest as given");
    rp.max_features = 1000;
    cr_assert_eq(hog_trainer_read_params(t, &rp, &buf)->max_features, 1000);
    rp.max_features = 1ull << 40;
    cr_assert_eq(hog_trainer_read_params(t, &rp, &buf)->max_features, 128 * MIB / 4);
    cr_assert_eq(hog_trainer_read_params(t, NULL, &buf)->max_features, 128 * MIB / 4);
    hog_trainer_free(t);

    p.loss = HOG_LOSS_SOFTMAX; /* two classes at the fewest */
    t = trainer(p);
    cr_assert_eq(hog_trainer_read_params(t, NULL, &buf)->max_features, 128 * MIB / 8);
    hog_trainer_free(t);
}

/* The report, through the library: trained with a limit of 256 MiB,
 * `1 1:0.5\n-1 4294967295:1\n` needed a model of 16 GiB and was killed. */
Test(train_params, a_file_past_the_ceiling_fails_at_the_index_before_the_model_is_made)
{
    char path[256], err[512] = "", want[512];
    snprintf(path, sizeof(path), "%s/b.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("1 1:0.5\n-1 4294967295:1\n", f);
    cr_assert_eq(fclose(f), 0);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.mem_limit = 256 * MIB;
    p.normalized = 0; /* 4 bytes a feature */
    for (int stream = 0; stream <= 1; stream++) {
        p.stream = stream;
        hog_trainer *t = trainer(p);
        hog_model *m = NULL;
        hog_file_run run;
        cr_assert_eq(hog_trainer_run_file(t, path, NULL, NULL, NULL, &m, &run, err, sizeof(err)), HOG_EFORMAT,
                     "%s", err);
        cr_assert_null(m);
        snprintf(want, sizeof(want), "%s:2:4: index 4294967295 is past the ceiling of 33554432 features "
                 "(hog_read_params.max_features, hog_train_params.mem_limit): hash them "
                 "(hog_read_params.hash_bits = 25)", path);
        cr_assert_str_eq(err, want);
        hog_trainer_free(t);
    }
}

Test(train_params, a_data_set_whose_model_does_not_fit_is_refused_before_it_is_made)
{
    char path[256], err[512] = "";
    snprintf(path, sizeof(path), "%s/d.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("1 1:1 100000:1\n2 2:1\n3 3:1\n", f); /* 100,000 features, three classes */
    cr_assert_eq(fclose(f), 0);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);

    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.loss = HOG_LOSS_SOFTMAX;
    p.normalized = 0;
    p.mem_limit = 2 * 100000 * 12; /* the model's half: 3 x 4 bytes a feature, exactly enough */
    hog_trainer *t = trainer(p);
    hog_model *m;
    cr_assert_eq(hog_trainer_features_fit(t, 100000, 3, err, sizeof(err)), 0);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_model_free(m);
    hog_trainer_free(t);

    p.mem_limit -= 1;
    t = trainer(p);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(m);
    cr_assert_str_eq(err, "100000 features x 3 outputs need 1200000 bytes with the optimiser's state, more than "
                          "half of hog_train_params.mem_limit (2399999 bytes: 99999 features): hash them "
                          "(hog_read_params.hash_bits = 16)");
    hog_trainer_free(t);
    hog_dataset_close(ds);
}
