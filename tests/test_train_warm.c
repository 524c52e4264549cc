/* test_train_warm.c: runs that start from an initial model (hog_trainer_set_init): its weights, its classes, its size, and what it refuses. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

#include "test_train_data.h"

static void setup(void)
{
    scratch_make("warm");
}

TestSuite(train_warm, .init = setup, .fini = scratch_remove);

static hog_train_params params(hog_loss loss, unsigned epochs)
{
    hog_train_params p = hog_train_params_default();
    p.loss = loss;
    p.threads = 1;
    p.bind = 0;
    p.epochs = epochs;
    /* The normalized update's scales start afresh in any run, and grow
     * with the values seen, rescaling the weights they cover (NG): the
     * plain update leaves the initial model's weights as they are. */
    p.normalized = 0;
    p.step = 0.1; /* the plain update's scale (the default's 2 is the normalized one's) */
    return p;
}

/* Trains p on ds from init (NULL: zeros); expects rc, and err to hold want. */
static hog_model *train_from(const hog_model *init, const hog_dataset *ds, hog_train_params p, int rc,
                             const char *want)
{
    hog_trainer *t;
    hog_model *m = NULL;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, init), 0);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), rc, "%s", err);
    if (want)
        cr_assert(strstr(err, want), "'%s' lacks '%s'", err, want);
    hog_trainer_free(t);
    return m;
}

Test(train_warm, a_run_starts_from_the_initial_model_s_weights)
{
    hog_dataset *ds = make_data("a.svm", 4000, 100, 8, 'b', 3);
    hog_model *first = train_from(NULL, ds, params(HOG_LOSS_LOGISTIC, 5), 0, NULL);
    hog_metrics a;
    cr_assert_eq(hog_model_evaluate(first, ds, 1, &a), 0);
    cr_assert_gt(a.accuracy, 0.85);
    /* A step so small that nothing moves: the model is the initial one. */
    hog_train_params still = params(HOG_LOSS_LOGISTIC, 1);
    still.step = 1e-30;
    hog_model *warm = train_from(first, ds, still, 0, NULL);
    cr_assert(same_weights(warm, first));
    hog_model *cold = train_from(NULL, ds, still, 0, NULL);
    hog_metrics c;
    cr_assert_eq(hog_model_evaluate(cold, ds, 1, &c), 0);
    cr_assert_float_eq(c.logloss, log(2.0), 1e-6, "from zeros: every probability 1/2");
    /* Five epochs, then five more from there, against ten at once: the
     * second five restart the schedule, so not the same, but as good. */
    hog_model *more = train_from(first, ds, params(HOG_LOSS_LOGISTIC, 5), 0, NULL);
    hog_metrics b;
    cr_assert_eq(hog_model_evaluate(more, ds, 1, &b), 0);
    cr_assert_lt(b.logloss, a.logloss, "training on goes on from the first model");
    hog_model_free(more);
    hog_model_free(cold);
    hog_model_free(warm);
    hog_model_free(first);
    hog_dataset_close(ds);
}

Test(train_warm, the_initial_model_may_be_freed_and_unset)
{
    hog_dataset *ds = make_data("u.svm", 2000, 50, 6, 'r', 5);
    hog_model *first = train_from(NULL, ds, params(HOG_LOSS_SQUARED, 3), 0, NULL);
    hog_train_params still = params(HOG_LOSS_SQUARED, 1);
    still.step = 1e-30;
    hog_trainer *t;
    hog_model *m;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&still, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, first), 0);
    hog_model *keep = train_from(NULL, ds, params(HOG_LOSS_SQUARED, 3), 0, NULL);
    hog_model_free(first); /* copied */
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(m, keep));
    hog_model_free(m);
    cr_assert_eq(hog_trainer_set_init(t, NULL), 0);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_weights w;
    hog_model_weights(m, &w);
    cr_assert_lt(fabsf(w.bias[0]), 1e-20f, "from zeros again");
    hog_model_free(m);
    hog_model_free(keep);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

Test(train_warm, a_batch_of_one_class_trains_on_from_a_model_that_knows_both)
{
    char path[160];
    FILE *f = create("one.svm", path);
    for (int i = 0; i < 300; i++)
        fprintf(f, "1 %d:1 %d:0.5\n", 1 + i % 5, 6 + i % 3);
    fclose(f);
    hog_dataset *one = open_written(path);
    hog_model *none = train_from(NULL, one, params(HOG_LOSS_LOGISTIC, 1), HOG_ELABEL, "exactly two label values");
    cr_assert_null(none);
    hog_model *init;
    double labels[2] = {-1, 1};
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_LOGISTIC, 4, 2, labels, NULL, NULL, &init, NULL, 0), 0);
    hog_model *m = train_from(init, one, params(HOG_LOSS_LOGISTIC, 2), 0, NULL);
    cr_assert_eq(m->info.classes, 2);
    cr_assert_eq(hog_model_class_label(m, 0), -1.0);
    cr_assert_eq(m->dim, 8, "the data's features, more than the initial model's 4");
    cr_assert_gt(hog_w_load(&m->bias[0]), 0.1f, "pushed towards the one class seen");
    hog_model_free(m);
    /* A label the initial model does not have. */
    double other[2] = {0, 2};
    hog_model_free(init);
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_LOGISTIC, 4, 2, other, NULL, NULL, &init, NULL, 0), 0);
    cr_assert_null(train_from(init, one, params(HOG_LOSS_LOGISTIC, 1), HOG_ELABEL,
                              "label 1 is not one of the initial model's 2 classes"));
    cr_assert_null(train_from(init, one, params(HOG_LOSS_HINGE, 1), HOG_EPARAM,
                              "hog_train_params.loss = hinge, the initial model's is logistic"));
    hog_model_free(init);
    hog_dataset_close(one);
}

Test(train_warm, softmax_takes_the_initial_model_s_classes_and_replicas_start_from_it)
{
    hog_dataset *ds = make_data("c.svm", 6000, 120, 8, 'c', 6);
    hog_model *first = train_from(NULL, ds, params(HOG_LOSS_SOFTMAX, 3), 0, NULL);
    hog_train_params still = params(HOG_LOSS_SOFTMAX, 1);
    still.step = 1e-30;
    still.threads = 2;
    still.replicas = HOG_REPLICAS_CORE;
    hog_model *m = train_from(first, ds, still, 0, NULL);
    hog_metrics a, b;
    cr_assert_eq(hog_model_evaluate(first, ds, 1, &a), 0);
    cr_assert_eq(hog_model_evaluate(m, ds, 1, &b), 0);
    cr_assert_float_eq(b.logloss, a.logloss, 1e-6, "the replicas, averaged, are the initial model");
    cr_assert_eq(m->info.classes, 3);
    hog_model_free(m);
    hog_model_free(first);
    hog_dataset_close(ds);
}

Test(train_warm, a_file_is_read_whole_before_a_run_from_an_initial_model)
{
    const char *path = write_data("f.svm", 20000, 100, 8, 'b', 2);
    hog_dataset *ds = open_written(path);
    hog_model *first = train_from(NULL, ds, params(HOG_LOSS_LOGISTIC, 2), 0, NULL);
    hog_train_params still = params(HOG_LOSS_LOGISTIC, 1);
    still.step = 1e-30;
    hog_trainer *t;
    hog_model *m;
    hog_file_run run;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&still, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, first), 0);
    cr_assert_eq(hog_trainer_run_file(t, path, NULL, NULL, NULL, &m, &run, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(run.streamed, 0);
    cr_assert_str_eq(run.note, "a warm start (its features and classes are settled on the whole data)");
    cr_assert(same_weights(m, first));
    hog_dataset_close(run.train);
    hog_model_free(m);
    hog_model_free(first);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}
