/* test_train_metrics.c: the training-set metrics: progressive (the last epoch, each row scored before its step) against an exact pass, for every kind of loss and kernel, and where a run falls back to the exact pass. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-metrics");
}

TestSuite(train_metrics, .init = setup, .fini = scratch_remove);

/* The last epoch's mean training loss, from the progress callback. */
static void last_loss(void *ctx, const hog_epoch_stats *st, int done)
{
    if (done)
        *(double *)ctx = st->train_loss;
}

/* Trains ds with p twice, progressive then exact; the metrics must be
 * measured as asked, on the same rows, and near each other (the last
 * epoch's running model against the final one). */
static void progressive_against_exact(const hog_dataset *ds, hog_train_params p, double loss_tol, double acc_tol)
{
    double epoch_loss = NAN;
    p.progress = last_loss;
    p.progress_ctx = &epoch_loss;
    p.train_metrics = HOG_TRAIN_METRICS_PROGRESSIVE;
    hog_model *a = train(ds, NULL, p);
    p.progress = NULL; /* the loss of a's last epoch stays */
    p.train_metrics = HOG_TRAIN_METRICS_EXACT;
    hog_model *b = train(ds, NULL, p);
    hog_model_info x, y;
    hog_model_get_info(a, &x);
    hog_model_get_info(b, &y);
    cr_assert_eq(x.params.train_metrics, HOG_TRAIN_METRICS_PROGRESSIVE);
    cr_assert_eq(y.params.train_metrics, HOG_TRAIN_METRICS_EXACT);
    if (p.threads == 1)
        cr_assert(same_weights(a, b), "how the metrics are measured changes no step");
    cr_assert_eq(x.train.rows, y.train.rows);
    cr_assert_gt(x.train.rows, 0);
    cr_assert(fabs(x.train.loss - y.train.loss) <= loss_tol, "loss: progressive %g, exact %g", x.train.loss,
              y.train.loss);
    if (p.class_weight == HOG_CLASS_WEIGHT_NONE && p.loss != HOG_LOSS_SOFTMAX) /* the loop's own sum */
        cr_assert(fabs(x.train.loss - epoch_loss) <= 1e-5 * fmax(1.0, fabs(epoch_loss)),
                  "the progressive loss %.9g is the last epoch's %.9g (normalized %d, schedule %d, threads %u)", x.train.loss, epoch_loss, p.normalized, (int)p.schedule, p.threads);
    if (isfinite(y.train.accuracy))
        cr_assert(fabs(x.train.accuracy - y.train.accuracy) <= acc_tol, "accuracy: progressive %g, exact %g",
                  x.train.accuracy, y.train.accuracy);
    if (isfinite(y.train.auc))
        cr_assert(fabs(x.train.auc - y.train.auc) <= acc_tol, "auc: progressive %g, exact %g", x.train.auc,
                  y.train.auc);
    if (isfinite(y.train.rmse))
        cr_assert(fabs(x.train.rmse - y.train.rmse) <= loss_tol, "rmse: progressive %g, exact %g", x.train.rmse,
                  y.train.rmse);
    hog_model_free(a);
    hog_model_free(b);
}

Test(train_metrics, binary_losses_on_every_loop)
{
    hog_dataset *ds = make_data("b.svm", 4000, 200, 12, 'b', 31);
    hog_train_params p = plain_params();
    p.threads = 1;
    progressive_against_exact(ds, p, 0.03, 0.02); /* the plain loop */
    p.normalized = 1;
    p.step = 0.5;
    progressive_against_exact(ds, p, 0.03, 0.02); /* the normalized loop */
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    progressive_against_exact(ds, p, 0.03, 0.02); /* the general loop */
    p = plain_params();
    p.loss = HOG_LOSS_HINGE;
    p.threads = 2;
    progressive_against_exact(ds, p, 0.05, 0.03);
    p.loss = HOG_LOSS_LOGISTIC;
    p.holdout = 0.25; /* the training rows alone */
    progressive_against_exact(ds, p, 0.03, 0.03);
    hog_dataset_close(ds);
}

Test(train_metrics, softmax_regression_and_the_dense_kernel)
{
    hog_dataset *c = make_data("c.svm", 3000, 100, 10, 'c', 32);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.threads = 1;
    progressive_against_exact(c, p, 0.05, 0.03);
    p.class_weight = HOG_CLASS_WEIGHT_BALANCED; /* training's weights, not the metrics' */
    progressive_against_exact(c, p, 0.05, 0.03);
    hog_dataset *r = make_data("r.svm", 3000, 100, 10, 'r', 33);
    p = plain_params();
    p.loss = HOG_LOSS_SQUARED;
    p.step = 0.02;
    p.threads = 1;
    progressive_against_exact(r, p, 0.1, 0.0);
    hog_dataset *d = make_data("d.svm", 3000, 16, 16, 'b', 34); /* every feature in every row: dense */
    p = plain_params();
    p.kernel = HOG_KERNEL_DENSE;
    p.batch = 16;
    p.threads = 1;
    progressive_against_exact(d, p, 0.05, 0.03);
    hog_dataset_close(c);
    hog_dataset_close(r);
    hog_dataset_close(d);
}

/* Where the kept model is not the last epoch's running one, the metrics
 * are measured by a pass of their own whatever was asked. */
Test(train_metrics, averaging_falls_back_to_the_exact_pass)
{
    hog_dataset *ds = make_data("b.svm", 2000, 100, 10, 'b', 35);
    hog_train_params p = plain_params();
    p.average = 2;
    hog_model *m = train(ds, NULL, p);
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    cr_assert_eq(mi.params.train_metrics, HOG_TRAIN_METRICS_EXACT);
    cr_assert_eq(mi.train.rows, 2000);
    hog_model_free(m);
    hog_dataset_close(ds);
}

Test(train_metrics, the_setting_is_checked_and_kept_in_the_model_file)
{
    hog_train_params p = hog_train_params_default();
    cr_assert_eq(p.train_metrics, HOG_TRAIN_METRICS_PROGRESSIVE);
    p.train_metrics = (hog_train_metrics)2;
    const char *field = NULL;
    cr_assert_lt(hog_train_params_check(&p, &field), 0);
    cr_assert_str_eq(field, "train_metrics");
    hog_train_metrics t;
    cr_assert_eq(hog_train_metrics_parse("exact", &t), 0);
    cr_assert_eq(t, HOG_TRAIN_METRICS_EXACT);
    cr_assert_str_eq(hog_train_metrics_name(HOG_TRAIN_METRICS_PROGRESSIVE), "progressive");
    cr_assert_lt(hog_train_metrics_parse("exactly", &t), 0);

    hog_dataset *ds = make_data("b.svm", 1000, 50, 5, 'b', 36);
    hog_train_params q = plain_params();
    for (int k = 0; k < 2; k++) {
        q.train_metrics = k ? HOG_TRAIN_METRICS_EXACT : HOG_TRAIN_METRICS_PROGRESSIVE;
        hog_model *m = train(ds, NULL, q);
        char path[256], err[256];
        snprintf(path, sizeof(path), "%s/m%d.hog", dir, k);
        cr_assert_eq(hog_model_save(m, path), 0);
        hog_model *back;
        cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
        hog_model_info mi;
        hog_model_get_info(back, &mi);
        cr_assert_eq(mi.params.train_metrics, q.train_metrics);
        hog_model_free(back);
        hog_model_free(m);
    }
    hog_dataset_close(ds);
}
