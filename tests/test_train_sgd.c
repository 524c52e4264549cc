/* test_train_sgd.c: the HOGWILD! trainer: convergence per loss, L2 against a full-batch reference, determinism, holdout, label errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"

static void setup(void)
{
    scratch_make("sgd");
}

/* Writes a seeded libsvm file: rows with nnz of d features, a true model
 * w*_j = sin(j); label by kind: 'b' sign (+1/-1), 'c' argmax of 3 class
 * scores (labels 1..3), 'r' a real target with small noise. */
static const char *write_data(const char *name, int rows, int d, int nnz, char kind, uint64_t seed)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        int idx[64];
        float val[64];
        int n = 0;
        int step = d / nnz;
        for (int k = 0; k < nnz; k++) {
            idx[n] = 1 + k * step + (int)hog_rng_below(&r, (uint32_t)step);
            val[n++] = (float)((double)hog_rng_below(&r, 2000) / 1000.0 - 1.0);
        }
        double s[3] = {0, 0, 0};
        for (int k = 0; k < n; k++)
            for (int c = 0; c < 3; c++)
                s[c] += sin(idx[k] * (c + 1.0)) * (double)val[k];
        if (kind == 'b')
            fprintf(f, "%s", s[0] > 0 ? "+1" : "-1");
        else if (kind == 'c')
            fprintf(f, "%d", s[0] > s[1] && s[0] > s[2] ? 1 : s[1] > s[2] ? 2 : 3);
        else
            fprintf(f, "%.6f", 2.0 * s[0] + 0.5 + 0.01 * ((double)hog_rng_below(&r, 1000) / 500.0 - 1.0));
        for (int k = 0; k < n; k++)
            fprintf(f, " %d:%.4f", idx[k], (double)val[k]);
        fprintf(f, "\n");
    }
    fclose(f);
    return path;
}

/* Creates dir/name for writing; its path goes to path (160 bytes). */
static FILE *create(const char *name, char *path)
{
    snprintf(path, 160, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    return f;
}

static hog_dataset *make_data(const char *name, int rows, int d, int nnz, char kind, uint64_t seed)
{
    return open_written(write_data(name, rows, d, nnz, kind, seed));
}


TestSuite(sgd, .init = setup, .fini = scratch_remove);

Test(sgd, logistic_learns_a_separable_problem_on_every_thread_count)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 1);
    hog_dataset *te = make_data("te.svm", 1000, 200, 20, 'b', 2);
    for (unsigned threads = 1; threads <= 2; threads++) {
        hog_train_params p = hog_train_params_default();
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

Test(sgd, hinge_learns_a_separable_problem)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 3);
    hog_train_params p = hog_train_params_default();
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

Test(sgd, softmax_learns_three_classes)
{
    hog_dataset *tr = make_data("tr.svm", 6000, 200, 20, 'c', 4);
    hog_dataset *te = make_data("te.svm", 1500, 200, 20, 'c', 5);
    hog_train_params p = hog_train_params_default();
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

Test(sgd, squared_loss_fits_a_linear_target)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 100, 10, 'r', 6);
    hog_dataset *te = make_data("te.svm", 1000, 100, 10, 'r', 7);
    hog_train_params p = hog_train_params_default();
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

Test(sgd, one_thread_is_reproducible_bit_for_bit)
{
    hog_dataset *tr = make_data("tr.svm", 3000, 100, 10, 'c', 8);
    hog_train_params p = hog_train_params_default();
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

Test(sgd, sparse_l2_reaches_the_full_batch_optimum)
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

    hog_train_params p = hog_train_params_default();
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

Test(sgd, invscaling_schedule_converges)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 20, 'b', 10);
    hog_train_params p = hog_train_params_default();
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

Test(sgd, labels_that_do_not_fit_the_loss_are_refused)
{
    hog_dataset *multi = make_data("m.svm", 300, 50, 5, 'c', 11);
    hog_train_params p = hog_train_params_default();
    hog_trainer *t;
    hog_model *m = (hog_model *)1;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0);
    cr_assert_eq(hog_trainer_run(t, multi, NULL, &m, err, sizeof(err)), HOG_ELABEL);
    cr_assert_null(m);
    cr_assert(strstr(err, "3") && strstr(err, "softmax"), "message: %s", err);
    hog_trainer_free(t);

    hog_dataset *reals = make_data("r.svm", 300, 50, 5, 'r', 12);
    p.loss = HOG_LOSS_SOFTMAX;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0);
    cr_assert_eq(hog_trainer_run(t, reals, NULL, &m, err, sizeof(err)), HOG_ELABEL);
    cr_assert(strstr(err, "not an integer"), "message: %s", err);
    hog_trainer_free(t);
    hog_dataset_close(multi);
    hog_dataset_close(reals);
}

Test(sgd, bad_parameters_are_refused_with_the_field)
{
    hog_train_params p = hog_train_params_default();
    p.decay = 1.5;
    hog_trainer *t = (hog_trainer *)1;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(t);
    cr_assert(strstr(err, "decay"), "message: %s", err);
}

Test(sgd, hot_features_and_intercept_converge_like_one_thread)
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
    double loss[3];
    const unsigned threads[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        hog_train_params p = hog_train_params_default();
        p.threads = threads[i];
        p.epochs = 5;
        p.step = 0.2;
        hog_model *m = train(tr, NULL, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        loss[i] = in.train.loss;
        hog_model_free(m);
    }
    for (int i = 1; i < 3; i++)
        cr_assert_lt(loss[i], loss[0] * 1.15, "%u threads: loss %g, one thread %g", threads[i], loss[i], loss[0]);
    hog_dataset_close(tr);
}

/* Importance weights count an example w times: one feature-less point seen
 * as +1 with weight 3 and as -1 with weight 1 has logistic optimum
 * sigmoid(b) = 3/4, where ignoring the weights gives 1/2. */
Test(sgd, importance_weights_scale_each_example)
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
        hog_train_params p = hog_train_params_default();
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

/* ---- model replicas ---- */

/* With one worker a replica of its own changes nothing: the same weights,
 * bit for bit, as the shared model (node: one node here, one replica). */
Test(sgd, one_worker_replicas_equal_the_shared_model)
{
    hog_dataset *tr = make_data("tr.svm", 3000, 200, 20, 'b', 5);
    hog_train_params p = hog_train_params_default();
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
    hog_train_params p = hog_train_params_default();
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

Test(sgd, core_replicas_average_into_a_model_that_learns)
{
    replicas_learn(HOG_REPLICAS_CORE);
}

Test(sgd, node_replicas_on_two_nodes_learn)
{
    /* Before the pool loads the topology (once per process). */
    setenv("HOG_TOPOLOGY", "package:2 numa:1 core:2 pu:1", 1);
    replicas_learn(HOG_REPLICAS_NODE);
}

Test(sgd, replicas_are_sparse_path_only)
{
    hog_dataset *tr = make_data("tr.svm", 500, 10, 8, 'b', 1); /* dense enough for auto */
    hog_train_params p = hog_train_params_default();
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

/* ---- the first epoch while the text is read (hog_trainer_run_file) ---- */

/* Trains on path with p (blocks of 200 rows: a head of 4, windows of 4 or
 * more); the run must succeed. */
static hog_model *train_file(const char *path, const char *cache, const char *test, hog_train_params p,
                             hog_file_run *fr)
{
    hog_trainer *t;
    hog_model *m;
    char err[512] = "";
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run_file(t, path, &rp, cache, test, &m, fr, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    return m;
}

static void close_run(hog_file_run *fr)
{
    hog_dataset_close(fr->train);
    hog_dataset_close(fr->test);
}

Test(sgd, streamed_first_epoch_learns_as_well_as_reading_whole)
{
    char tr[160], te[160], cache[160];
    snprintf(tr, sizeof(tr), "%s", write_data("tr.svm", 6000, 300, 20, 'b', 11));
    snprintf(te, sizeof(te), "%s", write_data("te.svm", 1000, 300, 20, 'b', 12));
    snprintf(cache, sizeof(cache), "%s/tr.hgd", dir);
    for (unsigned threads = 1; threads <= 2; threads++) {
        hog_train_params p = hog_train_params_default();
        p.threads = threads;
        p.epochs = 6;
        p.step = 0.5;
        hog_file_run a, b;
        p.stream = 1;
        unlink(cache);
        hog_model *ms = train_file(tr, cache, te, p, &a);
        p.stream = 0;
        hog_model *mw = train_file(tr, NULL, te, p, &b);
        cr_assert(a.streamed && !a.cache_used && !b.streamed, "%d %d %d", a.streamed, a.cache_used, b.streamed);
        cr_assert_str_eq(b.note, "streaming is off");
        cr_assert_eq(a.train->info.fingerprint, b.train->info.fingerprint, "the cache holds the same rows");
        hog_model_info is, iw;
        hog_model_get_info(ms, &is);
        hog_model_get_info(mw, &iw);
        cr_assert_eq(is.train_rows, 6000);
        cr_assert_eq(is.test.rows, 1000);
        cr_assert_eq(is.features, iw.features);
        cr_assert_eq(is.data_fingerprint, iw.data_fingerprint);
        cr_assert_gt(is.test.accuracy, 0.93, "threads %u: streamed accuracy %g", threads, is.test.accuracy);
        cr_assert_lt(fabs(is.test.logloss - iw.test.logloss), 0.03, "threads %u: test logloss %g streamed, %g whole",
                     threads, is.test.logloss, iw.test.logloss);
        hog_model_free(ms);
        hog_model_free(mw);
        close_run(&a);
        close_run(&b);
        /* The cache is newer than the text now: the next run reads it. */
        p.stream = 1;
        hog_model *mc = train_file(tr, cache, te, p, &a);
        cr_assert(a.cache_used && !a.streamed);
        hog_model_free(mc);
        close_run(&a);
    }
}

Test(sgd, streamed_run_on_one_thread_is_reproducible_and_grows_the_model)
{
    /* Rows past the head touch features the head never saw (up to 900). */
    char path[160];
    FILE *f = create("grow.svm", path);
    hog_rng r = {5};
    for (int i = 0; i < 5000; i++) {
        int top = i < 1000 ? 100 : 900, a = 1 + (int)hog_rng_below(&r, (uint32_t)top / 2);
        int b = a + 1 + (int)hog_rng_below(&r, (uint32_t)top / 2);
        fprintf(f, "%d %d:1 %d:1\n", (a + b) % 2 ? 1 : -1, a, b);
    }
    fprintf(f, "1 900:1\n");
    cr_assert_eq(fclose(f), 0);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 2;
    p.holdout = 0.2;
    hog_file_run a, b;
    hog_model *m1 = train_file(path, NULL, NULL, p, &a);
    hog_model *m2 = train_file(path, NULL, NULL, p, &b);
    cr_assert(a.streamed && b.streamed);
    cr_assert(same_weights(m1, m2), "one thread replays bit for bit");
    hog_model_info in;
    hog_model_get_info(m1, &in);
    cr_assert_eq(in.features, 900, "1-based indices up to 900");
    cr_assert_neq(hog_w_load(&m1->w[899]), 0.0f, "a feature first seen late is trained");
    /* The holdout is the same rows as when the file is read whole. */
    p.stream = 0;
    hog_file_run c;
    hog_model *m3 = train_file(path, NULL, NULL, p, &c);
    hog_model_info iw;
    hog_model_get_info(m3, &iw);
    cr_assert_eq(in.train_rows, iw.train_rows);
    cr_assert_eq(in.test.rows, iw.test.rows);
    cr_assert_gt(in.test.rows, 800);
    hog_model_free(m1);
    hog_model_free(m2);
    hog_model_free(m3);
    close_run(&a);
    close_run(&b);
    close_run(&c);
    /* The optimisers' per-feature state grows with the model too, on 2
     * threads and with 3 classes (the sanitizer build checks the bounds). */
    p.stream = 1;
    p.threads = 2;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.normalized = 1;
    p.l1 = 1e-5;
    m1 = train_file(path, NULL, NULL, p, &a);
    hog_model_get_info(m1, &in);
    cr_assert(a.streamed);
    cr_assert_eq(in.features, 900);
    cr_assert_neq(hog_w_load(&m1->w[899]), 0.0f);
    hog_model_free(m1);
    close_run(&a);
}

Test(sgd, what_the_head_cannot_settle_is_read_whole_or_started_over)
{
    hog_train_params p = hog_train_params_default();
    p.epochs = 3;
    hog_file_run fr;
    /* Sorted by label: the first blocks have one label value. */
    char path[160];
    FILE *f = create("sorted.svm", path);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d %d:1 %d:0.5\n", i < 2000 ? -1 : 1, 1 + i % 97, 200 + (i < 2000 ? 0 : 1));
    cr_assert_eq(fclose(f), 0);
    hog_model *m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "have 1 label values"), "%s", fr.note);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.train.accuracy, 0.99, "%g", in.train.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Softmax whose third class first shows after the head: started over. */
    f = create("late.svm", path);
    for (int i = 0; i < 3000; i++) {
        int c = i < 1500 ? 1 + i % 2 : 1 + i % 3;
        fprintf(f, "%d %d:1 %d:1\n", c, c, 10 + i % 89);
    }
    cr_assert_eq(fclose(f), 0);
    p.loss = HOG_LOSS_SOFTMAX;
    m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "label 3 first appears in row 1503; started over"), "%s", fr.note);
    hog_model_get_info(m, &in);
    cr_assert_eq(in.classes, 3u);
    cr_assert_gt(in.train.accuracy, 0.99, "%g", in.train.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Dense rows: the dense kernel, which trains on the whole data set. */
    f = create("dense.svm", path);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "%d 1:%d 2:0.5 3:%g\n", i % 2 ? 1 : -1, i % 2, (i % 5) / 5.0);
    cr_assert_eq(fclose(f), 0);
    p.loss = HOG_LOSS_LOGISTIC;
    m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "dense"), "%s", fr.note);
    hog_model_free(m);
    close_run(&fr);
}

Test(sgd, a_malformed_line_stops_a_streamed_run_with_no_model_and_no_cache)
{
    char path[160], cache[160], err[512] = "";
    snprintf(path, sizeof(path), "%s", write_data("bad.svm", 3000, 100, 10, 'b', 3));
    snprintf(cache, sizeof(cache), "%s/bad.hgd", dir);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fprintf(f, "1 5:0.5 3:1\n"); /* indices not increasing */
    cr_assert_eq(fclose(f), 0);
    hog_train_params p = hog_train_params_default();
    hog_trainer *t;
    hog_model *m = NULL;
    hog_file_run fr;
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    int rc = hog_trainer_run_file(t, path, &rp, cache, NULL, &m, &fr, err, sizeof(err));
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    cr_assert(strstr(err, "bad.svm:3001:"), "%s", err);
    cr_assert_null(m);
    cr_assert_null(fr.train);
    cr_assert_neq(access(cache, F_OK), 0, "no cache is left");
    hog_trainer_free(t);
}
