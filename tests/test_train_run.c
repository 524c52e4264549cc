/* test_train_run.c: the HOGWILD! trainer: convergence per loss, L2 against a full-batch reference, determinism, importance weights, label and parameter errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-run");
}

TestSuite(train_run, .init = setup, .fini = scratch_remove);

Test(train_run, logistic_learns_a_separable_problem_on_every_thread_count)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 1);
    hog_dataset *te = make_data("te.svm", 1000, 200, 20, 'b', 2);
    for (unsigned threads = 1; threads <= 2; threads++) {
        hog_train_params p = plain_params();
        p.threads = threads;
        p.epochs = 15;
        p.step = 0.5;
        hog_model *m = train(tr, te, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_gt(in.test.accuracy, 0.93, "threads %u: accuracy %g", threads, in.test.accuracy);
        cr_assert_gt(in.test.auc, 0.98, "threads %u: auc %g", threads, in.test.auc);
        cr_assert_eq(in.test.rows, 1000);
        cr_assert_eq(in.train_rows, 4000);
        cr_assert_eq(in.classes, 2u);
        cr_assert_eq(hog_model_class_label(m, 0), -1.0);
        cr_assert_eq(hog_model_class_label(m, 1), 1.0);
        hog_model_free(m);
    }
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

Test(train_run, hinge_learns_a_separable_problem)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 3);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_HINGE;
    p.holdout = 0.2;
    p.step = 0.1;
    hog_model *m = train(tr, NULL, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.93, "accuracy %g", in.test.accuracy);
    /* The holdout is about 20% of the rows, and training used the rest. */
    cr_assert(in.test.rows > 700 && in.test.rows < 900, "holdout rows %llu", (unsigned long long)in.test.rows);
    cr_assert_eq(in.train_rows + in.test.rows, 4000);
    cr_assert(isnan(in.test.logloss));
    hog_model_free(m);
    hog_dataset_close(tr);
}

Test(train_run, softmax_learns_three_classes)
{
    hog_dataset *tr = make_data("tr.svm", 6000, 200, 20, 'c', 4);
    hog_dataset *te = make_data("te.svm", 1500, 200, 20, 'c', 5);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.epochs = 15;
    p.step = 0.5;
    hog_model *m = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_eq(in.classes, 3u);
    cr_assert_eq(in.outputs, 3u);
    cr_assert_gt(in.test.accuracy, 0.88, "accuracy %g", in.test.accuracy);
    cr_assert_lt(in.test.logloss, 0.4, "logloss %g", in.test.logloss);
    hog_row row = hog_dataset_row(te, 0);
    float probs[3];
    uint32_t cls = 9;
    hog_model_predict(m, &row, &cls, probs);
    cr_assert_lt(cls, 3u);
    cr_assert(fabsf(probs[0] + probs[1] + probs[2] - 1.0f) < 1e-5f);
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

Test(train_run, squared_loss_fits_a_linear_target)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 100, 10, 'r', 6);
    hog_dataset *te = make_data("te.svm", 1000, 100, 10, 'r', 7);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SQUARED;
    p.epochs = 20;
    p.step = 0.05;
    p.l2 = 0;
    hog_model *m = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_lt(in.test.rmse, 0.1, "rmse %g", in.test.rmse);
    cr_assert(fabsf(hog_w_load(&m->bias[0]) - 0.5f) < 0.05f, "bias %g", (double)hog_w_load(&m->bias[0]));
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

Test(train_run, one_thread_is_reproducible_bit_for_bit)
{
    hog_dataset *tr = make_data("tr.svm", 3000, 100, 10, 'c', 8);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.threads = 1;
    p.epochs = 3;
    p.seed = 42;
    hog_model *a = train(tr, NULL, p);
    hog_model *b = train(tr, NULL, p);
    cr_assert(same_weights(a, b), "two one-thread runs with one seed differ");
    p.seed = 43;
    hog_model *c = train(tr, NULL, p);
    cr_assert(!same_weights(a, c), "another seed gave the very same model: the order is not shuffled");
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
    hog_dataset_close(tr);
}

/* Full-batch objective: mean logistic loss + l2/2 |w|^2 (bias unpenalised). */
static double objective(const hog_dataset *ds, const double *w, double b, double l2, uint64_t d)
{
    double sum = 0;
    for (uint64_t i = 0; i < ds->info.rows; i++) {
        hog_row r = hog_dataset_row(ds, i);
        double m = b;
        for (uint32_t k = 0; k < r.nnz; k++)
            m += w[r.index[k]] * (double)r.value[k];
        double y = r.label > 0 ? 1 : -1;
        sum += log1p(exp(-y * m));
    }
    double reg = 0;
    for (uint64_t j = 0; j < d; j++)
        reg += w[j] * w[j];
    return sum / (double)ds->info.rows + 0.5 * l2 * reg;
}

Test(train_run, sparse_l2_reaches_the_full_batch_optimum)
{
    /* Noisy labels so the penalty matters; the reference is plain gradient
     * descent on the full objective, slow but exact. */
    hog_dataset *tr = make_data("tr.svm", 1000, 60, 6, 'b', 9);
    const double l2 = 0.01;
    uint64_t d = tr->info.features;
    double *w = calloc(d, sizeof(double)), *g = calloc(d, sizeof(double));
    double b = 0;
    for (int it = 0; it < 3000; it++) {
        memset(g, 0, d * sizeof(double));
        double gb = 0;
        for (uint64_t i = 0; i < tr->info.rows; i++) {
            hog_row r = hog_dataset_row(tr, i);
            double m = b;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.index[k]] * (double)r.value[k];
            double y = r.label > 0 ? 1 : -1;
            double s = -y / (1 + exp(y * m));
            for (uint32_t k = 0; k < r.nnz; k++)
                g[r.index[k]] += s * (double)r.value[k];
            gb += s;
        }
        for (uint64_t j = 0; j < d; j++)
            w[j] -= 2.0 * (g[j] / (double)tr->info.rows + l2 * w[j]);
        b -= 2.0 * gb / (double)tr->info.rows;
    }
    double ref = objective(tr, w, b, l2, d);

    hog_train_params p = plain_params();
    p.l2 = l2;
    p.threads = 1;
    p.epochs = 40;
    p.step = 0.2;
    p.decay = 0.93;
    hog_model *m = train(tr, NULL, p);
    for (uint64_t j = 0; j < d; j++)
        w[j] = (double)hog_w_load(&m->w[j]);
    double got = objective(tr, w, (double)hog_w_load(&m->bias[0]), l2, d);
    cr_assert(got >= ref - 1e-6, "SGD beat the optimum? %g < %g", got, ref);
    cr_assert_lt(got - ref, 0.01 * ref, "objective %g, the optimum %g", got, ref);

    /* Without the penalty the objective at the penalised optimum is worse. */
    p.l2 = 0;
    hog_model *free_m = train(tr, NULL, p);
    for (uint64_t j = 0; j < d; j++)
        w[j] = (double)hog_w_load(&free_m->w[j]);
    double unpenalised = objective(tr, w, (double)hog_w_load(&free_m->bias[0]), l2, d);
    cr_assert_gt(unpenalised, got, "l2 made no difference: %g vs %g", unpenalised, got);
    hog_model_free(m);
    hog_model_free(free_m);
    free(w);
    free(g);
    hog_dataset_close(tr);
}

Test(train_run, invscaling_schedule_converges)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 10);
    hog_train_params p = plain_params();
    p.schedule = HOG_SCHEDULE_INVSCALING;
    p.step = 1.0;
    p.power = 0.5;
    p.holdout = 0.25;
    hog_model *m = train(tr, NULL, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.9, "accuracy %g", in.test.accuracy);
    hog_model_free(m);
    hog_dataset_close(tr);
}

Test(train_run, labels_that_do_not_fit_the_loss_are_refused)
{
    hog_dataset *multi = make_data("m.svm", 300, 50, 5, 'c', 11);
    hog_train_params p = plain_params();
    char err[256];
    train_fails(multi, NULL, p, HOG_ELABEL, err, sizeof(err));
    cr_assert(strstr(err, "3") && strstr(err, "softmax"), "message: %s", err);

    hog_dataset *reals = make_data("r.svm", 300, 50, 5, 'r', 12);
    p.loss = HOG_LOSS_SOFTMAX;
    train_fails(reals, NULL, p, HOG_ELABEL, err, sizeof(err));
    cr_assert(strstr(err, "not an integer"), "message: %s", err);
    hog_dataset_close(multi);
    hog_dataset_close(reals);
}

/* The scan runs on every worker; what it refuses is the first refusal in
 * file order whatever the timing: the lowest row, the row numbers those
 * of the file. Past MAX_CLASSES distinct labels it stops, however the
 * workers' own sets fill. */
Test(train_run, the_scan_on_every_worker_refuses_the_first_bad_row_in_file_order)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/labels.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 6000; i++)
        fprintf(f, "%s 1:0.5 %d:1\n", i == 900 ? "1.5" : i == 5100 ? "2.5" : i % 3 == 0 ? "0" : i % 3 == 1 ? "1" : "2",
                2 + i % 40);
    cr_assert_eq(fclose(f), 0);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 100;
    hog_dataset *ds;
    char err[256] = "";
    cr_assert_eq(hog_dataset_open(path, &rp, &ds, err, sizeof(err)), 0, "%s", err);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.threads = 2;
    for (int rep = 0; rep < 10; rep++) {
        train_fails(ds, NULL, p, HOG_ELABEL, err, sizeof(err));
        cr_assert_str_eq(err, "row 900: label 1.5 is not an integer class (softmax needs class labels)");
    }
    hog_dataset_close(ds);

    snprintf(path, sizeof(path), "%s/many.svm", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 70000; i++)
        fprintf(f, "%d 1:1\n", i);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(hog_dataset_open(path, &rp, &ds, err, sizeof(err)), 0, "%s", err);
    p.loss = HOG_LOSS_LOGISTIC;
    train_fails(ds, NULL, p, HOG_ELABEL, err, sizeof(err));
    cr_assert_str_eq(err, "more than 65536 distinct labels");
    hog_dataset_close(ds);
}

Test(train_run, bad_parameters_are_refused_with_the_field)
{
    hog_train_params p = plain_params();
    p.decay = 1.5;
    hog_trainer *t = (hog_trainer *)1;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(t);
    cr_assert(strstr(err, "decay"), "message: %s", err);
}

/* Importance weights count an example w times: one feature-less point seen
 * as +1 with weight 3 and as -1 with weight 1 has logistic optimum
 * sigmoid(b) = 3/4, where ignoring the weights gives 1/2. */
Test(train_run, importance_weights_scale_each_example)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/w.vw", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, i % 2 ? "1 3 |a x\n" : "-1 1 |a x\n");
    fclose(f);
    hog_dataset *ds;
    char err[256];
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    for (hog_kernel kernel = HOG_KERNEL_SPARSE; kernel <= HOG_KERNEL_DENSE; kernel++) {
        hog_train_params p = plain_params();
        p.threads = 1;
        p.epochs = 30;
        p.step = 0.05;
        p.l2 = 0;
        p.kernel = kernel;
        p.batch = 1;
        hog_model *m = train(ds, NULL, p);
        hog_row row = hog_dataset_row(ds, 0);
        double prob = hog_model_predict(m, &row, NULL, NULL);
        cr_assert(fabs(prob - 0.75) < 0.02, "kernel %d: P(+1) = %g, want 0.75", (int)kernel, prob);
        hog_model_free(m);
    }
    hog_dataset_close(ds);
}

/* A warm start goes on from the model given: one more epoch from a model
 * trained for five ends nearer its test loss than one epoch from zero, the
 * weights the data does not reach are kept, and a run of another loss is
 * refused. */
Test(train_run, a_warm_start_goes_on_from_the_model_given)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 11);
    hog_dataset *te = make_data("te.svm", 1000, 200, 20, 'b', 12);
    hog_dataset *narrow = make_data("narrow.svm", 4000, 100, 10, 'b', 13);
    hog_train_params p = plain_params();
    p.threads = 1;
    p.step = 0.5;
    p.epochs = 5;
    hog_model *five = train(tr, te, p);
    p.epochs = 1;
    hog_model *cold = train(tr, te, p);
    hog_trainer *t;
    char err[512] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, five), 0);
    hog_model *warm, *kept;
    cr_assert_eq(hog_trainer_run(t, tr, te, &warm, err, sizeof(err)), 0, "%s", err);
    hog_model_info fi, ci, wi;
    hog_model_get_info(five, &fi);
    hog_model_get_info(cold, &ci);
    hog_model_get_info(warm, &wi);
    cr_assert_lt(wi.test.logloss, ci.test.logloss, "warm %g, cold %g", wi.test.logloss, ci.test.logloss);
    cr_assert_lt(fabs(wi.test.logloss - fi.test.logloss), 0.5 * (ci.test.logloss - fi.test.logloss),
                 "warm %g, five epochs %g, cold %g", wi.test.logloss, fi.test.logloss, ci.test.logloss);
    /* data with half the features: the model keeps the other half as given */
    cr_assert_eq(hog_trainer_run(t, narrow, NULL, &kept, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(kept->dim, five->dim);
    for (uint64_t j = 100; j < five->dim; j++)
        cr_assert_eq(hog_w_load(&kept->w[j]), hog_w_load(&five->w[j]), "feature %llu", (unsigned long long)j);
    hog_trainer_free(t);
    p.loss = HOG_LOSS_HINGE;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, five), 0);
    hog_model *none = NULL;
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &none, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_train_params.loss = hinge, the initial model's is logistic"), "%s", err);
    cr_assert_null(none);
    hog_trainer_free(t);
    hog_model_free(five);
    hog_model_free(cold);
    hog_model_free(warm);
    hog_model_free(kept);
    hog_dataset_close(tr);
    hog_dataset_close(te);
    hog_dataset_close(narrow);
}

/* K folds of holdout 1/K hold out every row exactly once, fold 0 is the
 * plain holdout, and a fold past the rows is refused. */
Test(train_run, folds_hold_out_every_row_once)
{
    const unsigned K = 5;
    for (uint64_t row = 0; row < 20000; row++) {
        unsigned held = 0;
        for (unsigned k = 0; k < K; k++) {
            hog_rowsel s = {1.0 / K, 42, 1, k};
            held += hog_rowsel_keep(&s, row);
        }
        cr_assert_eq(held, 1, "row %llu held out %u times", (unsigned long long)row, held);
        cr_assert_eq(hog_row_in_fold(row, 0.2, 0, 42), hog_row_held_out(row, 0.2, 42));
    }
    hog_train_params p = hog_train_params_default();
    const char *field = NULL;
    p.holdout = 0.25;
    p.fold = 3;
    cr_assert_eq(hog_train_params_check(&p, &field), 0);
    p.fold = 4;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "fold");
}

/* bind is 0, 1 or HOG_BIND_AUTO, the default, for linear models and
 * factorisation alike. */
Test(train_run, binding_is_auto_by_default_and_nothing_else_is_taken)
{
    hog_train_params p = hog_train_params_default();
    hog_mf_params q = hog_mf_params_default();
    const char *field = NULL;
    cr_assert_eq(p.bind, HOG_BIND_AUTO);
    cr_assert_eq(q.bind, HOG_BIND_AUTO);
    for (int b = 0; b <= 3; b++) {
        p.bind = q.bind = b;
        cr_assert_eq(hog_train_params_check(&p, &field), b <= HOG_BIND_AUTO ? 0 : HOG_EPARAM, "bind %d", b);
        cr_assert_eq(hog_mf_params_check(&q, &field), b <= HOG_BIND_AUTO ? 0 : HOG_EPARAM, "bind %d", b);
    }
    cr_assert_str_eq(field, "bind");
}

/* The recall of class 1 of m on ds. */
static double recall_of_positive(const hog_model *m, const hog_dataset *ds)
{
    uint64_t pos = 0, hit = 0;
    for (uint64_t i = 0; i < ds->info.rows; i++) {
        hog_row r = hog_dataset_row(ds, i);
        if (r.label <= 0)
            continue;
        uint32_t cls = 0;
        hog_model_predict(m, &r, &cls, NULL);
        pos++;
        hit += cls == 1;
    }
    return (double)hit / (double)pos;
}

/* Balanced class weights: on data with one positive row in ten, the
 * minority class is found far more often than without them. */
Test(train_run, balanced_class_weights_lift_the_minority_class)
{
    char path[256];
    FILE *f = create("skew.svm", path);
    hog_rng rng = {5};
    for (int i = 0; i < 6000; i++) {
        int y = i % 10 == 0 ? 1 : -1;
        double x1 = 0.3 * y + hog_rng_below(&rng, 2000) / 1000.0 - 1, x2 = hog_rng_below(&rng, 2000) / 1000.0 - 1;
        fprintf(f, "%d 1:%.4f 2:%.4f\n", y, x1, x2);
    }
    fclose(f);
    hog_dataset *ds = open_written(path);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 5;
    hog_model *plain = train(ds, NULL, p);
    p.class_weight = HOG_CLASS_WEIGHT_BALANCED;
    hog_model *balanced = train(ds, NULL, p);
    double r0 = recall_of_positive(plain, ds), r1 = recall_of_positive(balanced, ds);
    cr_assert_lt(r0, 0.2, "without weights the minority is mostly missed: recall %g", r0);
    cr_assert_gt(r1, 0.5, "balanced: recall %g (plain %g)", r1, r0);
    hog_model_info mi;
    hog_model_get_info(balanced, &mi);
    cr_assert_eq(mi.params.class_weight, HOG_CLASS_WEIGHT_BALANCED);
    const char *field = NULL;
    p.loss = HOG_LOSS_SQUARED;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "class_weight");
    hog_model_free(plain);
    hog_model_free(balanced);
    hog_dataset_close(ds);
}
