/* test_train.h: what the trainer tests share: opening the data they write, training a model that must train, comparing two models bit for bit. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_TRAIN_H
#define HOG_TEST_TRAIN_H

#include <criterion/criterion.h>
#include <string.h>

#include "train/train.h"

/* The settings these tests were written for, and what they test: the
 * plain (not normalized) update at step 0.1, decaying by 0.9 over 10
 * epochs, hog_train_params_default() before its defaults became the
 * normalized update. The tests of the defaults themselves start from
 * hog_train_params_default(). */
static inline hog_train_params plain_params(void)
{
    hog_train_params p = hog_train_params_default();
    p.normalized = 0;
    p.step = 0.1;
    p.decay = 0.9;
    p.epochs = 10;
    return p;
}

/* plain_params for a factorisation machine: 4 factors, AdaGrad at 0.2,
 * l2 1e-6, 15 epochs, one thread. */
static inline hog_train_params fm_params(void)
{
    hog_train_params p = plain_params();
    p.factors = 4;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.2;
    p.l2 = 1e-6;
    p.epochs = 15;
    p.threads = 1;
    return p;
}

/* Opens a data set written by the test, with the default read parameters. */
static inline hog_dataset *open_written(const char *path)
{
    hog_dataset *ds;
    char err[512];
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    return ds;
}

/* Trains with p; the run must succeed. */
static inline hog_model *train(const hog_dataset *ds, const hog_dataset *test, hog_train_params p)
{
    hog_trainer *t;
    hog_model *m;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, test, &m, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    return m;
}

/* Trains with p, which must fail with code and make no model; the message
 * goes to err (len bytes). */
static inline void train_fails(const hog_dataset *ds, const hog_dataset *test, hog_train_params p, int code,
                               char *err, size_t len)
{
    hog_trainer *t;
    hog_model *m = (hog_model *)1;
    cr_assert_eq(hog_trainer_create(&p, &t, err, len), 0, "%s", err);
    err[0] = '\0';
    cr_assert_eq(hog_trainer_run(t, ds, test, &m, err, len), code, "%s", err);
    cr_assert_null(m);
    hog_trainer_free(t);
}

/* The same weights and biases, bit for bit. */
static inline int same_weights(const hog_model *a, const hog_model *b)
{
    size_t n = a->dim * a->outputs;
    return a->dim == b->dim && a->outputs == b->outputs &&
           memcmp((const void *)a->w, (const void *)b->w, n * sizeof(float)) == 0 &&
           memcmp((const void *)a->bias, (const void *)b->bias, a->outputs * sizeof(float)) == 0;
}

#endif /* HOG_TEST_TRAIN_H */
