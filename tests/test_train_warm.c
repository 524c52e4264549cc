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
    /* The plain update: the normalized one's tests are below. */
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

Test(train_warm, a_file_streams_from_an_initial_model)
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
    cr_assert_eq(run.streamed, 1, "%s", run.note);
    cr_assert(same_weights(m, first), "a step of 1e-30 leaves the initial weights as they were");
    hog_dataset_close(run.train);
    hog_model_free(m);
    hog_model_free(first);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

/* The normalized update: a model keeps its feature scales (each feature's
 * largest |x| seen) and a run from it goes on from them, so a step that
 * moves nothing leaves the model as it was, also through its file. */
Test(train_warm, the_normalized_update_goes_on_from_the_model_s_feature_scales)
{
    hog_dataset *ds = make_data("n.svm", 4000, 100, 8, 'b', 3);
    hog_train_params p = params(HOG_LOSS_LOGISTIC, 3);
    p.normalized = 1;
    p.step = 1;
    hog_model *first = train_from(NULL, ds, p, 0, NULL);
    cr_assert_not_null(first->scales);
    int seen = 0;
    for (uint64_t j = 0; j < first->dim; j++) {
        const float s = hog_w_load(&first->scales[j]);
        cr_assert(s >= 0.0f && s <= 1.0f, "feature %llu: %g, the data's values are in [-1, 1]",
                  (unsigned long long)j, (double)s);
        seen += s > 0.5f;
    }
    cr_assert_gt(seen, 90, "most features have seen a value near 1");
    char path[160], err[256] = "";
    snprintf(path, sizeof(path), "%s/n.hog", dir);
    cr_assert_eq(hog_model_save(first, path), 0);
    hog_model *loaded = NULL;
    cr_assert_eq(hog_model_load(path, &loaded, err, sizeof(err)), 0, "%s", err);
    hog_train_params still = p;
    still.epochs = 1;
    still.step = 1e-30;
    for (int from_file = 0; from_file < 2; from_file++) {
        hog_model *warm = train_from(from_file ? loaded : first, ds, still, 0, NULL);
        cr_assert(same_weights(warm, first), "from the %s", from_file ? "file" : "model");
        cr_assert_eq(memcmp((const void *)warm->scales, (const void *)first->scales, first->dim * sizeof(float)), 0);
        hog_metrics a, b;
        cr_assert_eq(hog_model_evaluate(first, ds, 1, &a), 0);
        cr_assert_eq(hog_model_evaluate(warm, ds, 1, &b), 0);
        cr_assert_eq(a.logloss, b.logloss, "the same predictions");
        hog_model_free(warm);
    }
    /* A model without scales (from weights) starts them at 0, as before. */
    hog_model *bare = NULL;
    hog_weights w;
    hog_model_weights(first, &w);
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_LOGISTIC, w.features, 2, w.class_labels, w.w, w.bias, &bare,
                                        NULL, 0), 0);
    cr_assert_null(bare->scales);
    hog_model *warm = train_from(bare, ds, still, 0, NULL);
    cr_assert_not_null(warm->scales, "this run's own");
    hog_model_free(warm);
    hog_model_free(bare);
    hog_model_free(loaded);
    hog_model_free(first);
    hog_dataset_close(ds);
}

/* What the scales are for: a feature whose new rows start small (0.1) and
 * later reach the model's scale (1). From a scale of 0 the first value
 * seen became the scale and the later 1 shrank the learned weight by
 * (0.1 / 1)^2 = 0.01; from the model's scale nothing shrinks. A feature
 * new to the run (3, past the model's 2: indices 2 and 1) starts at 0 and takes its own. */
Test(train_warm, a_warm_start_keeps_weights_learned_at_a_larger_scale)
{
    char path[160];
    FILE *f = create("big.svm", path);
    static const float xs[4] = {-1, -0.5f, 0.5f, 1};
    for (int i = 0; i < 2000; i++) {
        const float x = xs[i % 4];
        fprintf(f, "%g 1:%g 2:%g\n", (double)(2 * x), (double)x, (double)(x > 0 ? 1 : 0));
    }
    fclose(f);
    hog_dataset *big = open_written(path);
    f = create("small.svm", path);
    for (int i = 0; i < 2000; i++) {
        const float x = i < 1999 ? 0.1f : 1.0f;
        fprintf(f, "%g 1:%g 3:%g\n", (double)(2 * x), (double)x, (double)(i % 2 ? 4 : 2));
    }
    fclose(f);
    hog_dataset *small = open_written(path);
    hog_train_params p = params(HOG_LOSS_SQUARED, 10);
    p.normalized = 1;
    p.step = 1;
    hog_model *first = train_from(NULL, big, p, 0, NULL);
    cr_assert_eq(first->info.data_index_base, 1, "libsvm's 1-based indices: feature 1 is index 0");
    const float w1 = hog_w_load(&first->w[0]);
    cr_assert_gt(w1, 1.0f, "y = 2 x1: %g", (double)w1);
    cr_assert_eq(first->dim, 2);
    cr_assert_eq(hog_w_load(&first->scales[0]), 1.0f);
    p.epochs = 1;
    p.step = 1e-9;
    hog_model *warm = train_from(first, small, p, 0, NULL);
    cr_assert_eq(warm->dim, 3);
    cr_assert_float_eq(hog_w_load(&warm->w[0]), w1, 1e-5, "the learned weight is kept (it was %g)",
                       (double)hog_w_load(&warm->w[0]));
    cr_assert_eq(hog_w_load(&warm->scales[0]), 1.0f);
    cr_assert_eq(hog_w_load(&warm->scales[2]), 4.0f, "the new feature's own scale");
    hog_model_free(warm);
    hog_model_free(first);
    hog_dataset_close(small);
    hog_dataset_close(big);
}
