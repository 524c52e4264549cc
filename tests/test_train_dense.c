/* test_train_dense.c: the dense (OpenBLAS mini-batch) kernel: the batch step against per-example sums, the same optimum as the sparse kernel, determinism, kernel choice, GEMM evaluation. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "train/train.h"

#include "test_command.h"
#include "test_train.h"

static void setup(void)
{
    scratch_make("dense");
}

TestSuite(dense, .init = setup, .fini = scratch_remove);

/* Writes a seeded libsvm file of rows with every one of d features set
 * (uniform in [-1, 1], indices 0..d-1) and opens it. Labels from a true
 * model w*_jc = sin((j + 1) (c + 1)): kind 'b' the sign of class 0's score
 * (+1/-1), flipped with probability `noise`; 'c' the argmax of 3 class
 * scores (labels 0..2), replaced by a random class with probability noise;
 * 'r' 2 * score_0 + 0.5 plus noise. */
static hog_dataset *make_dense(const char *name, int rows, int d, char kind, double noise, uint64_t seed)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        float x[64];
        double s[3] = {0, 0, 0};
        for (int j = 0; j < d; j++) {
            x[j] = (float)((double)hog_rng_below(&r, 2000) / 1000.0 - 1.0);
            for (int c = 0; c < 3; c++)
                s[c] += sin((j + 1.0) * (c + 1.0)) * (double)x[j];
        }
        int flip = (double)hog_rng_below(&r, 1000000) < noise * 1e6;
        if (kind == 'b')
            fprintf(f, "%s", (s[0] > 0) != flip ? "+1" : "-1");
        else if (kind == 'c')
            fprintf(f, "%d", flip ? (int)hog_rng_below(&r, 3) : s[0] > s[1] && s[0] > s[2] ? 0 : s[1] > s[2] ? 1 : 2);
        else
            fprintf(f, "%.6f", 2.0 * s[0] + 0.5 + noise * ((double)hog_rng_below(&r, 1000) / 500.0 - 1.0));
        for (int j = 0; j < d; j++)
            fprintf(f, " %d:%.4f", j, (double)x[j]);
        fprintf(f, "\n");
    }
    fclose(f);
    return open_written(path);
}


/* ===================================================================== *
 *  The batch step
 * ===================================================================== */
/* One batch of n rows through hog_dense_segment against the same update
 * summed example by example in double precision from the same weights. */
static void check_batch_step(hog_loss loss, uint32_t K, char kind)
{
    const uint32_t n = 24, d = 10;
    hog_dataset *ds = make_dense("b.svm", (int)n, (int)d, kind, 0.1, 5);
    const hog_block *blk = &ds->blocks[0];
    uint32_t classes = loss == HOG_LOSS_SQUARED ? 0 : loss == HOG_LOSS_SOFTMAX ? K : 2;
    hog_model *m = hog_model_new(loss, d, K, classes);
    cr_assert_not_null(m);
    if (loss == HOG_LOSS_SOFTMAX)
        for (uint32_t k = 0; k < K; k++)
            m->class_labels[k] = k;
    else if (classes) {
        m->class_labels[0] = -1;
        m->class_labels[1] = 1;
    }
    hog_rng r = {77};
    for (uint32_t t = 0; t < d * K; t++)
        hog_w_store(&m->w[t], (float)((double)hog_rng_below(&r, 1000) / 2000.0 - 0.25));
    for (uint32_t k = 0; k < K; k++)
        hog_w_store(&m->bias[k], 0.1f * (float)k - 0.05f);

    const float step = 0.05f;
    hog_train_params p = plain_params();
    p.loss = loss;
    p.l2 = 0.01;
    /* The reference: w' = w (1 - step l2 n) - step sum_i g_i x_i, b' = b - step sum_i g_i. */
    double *w = calloc(d * K, sizeof(double)), *gw = calloc(d * K, sizeof(double)), gb[8] = {0};
    for (uint32_t t = 0; t < d * K; t++)
        w[t] = (double)hog_w_load(&m->w[t]);
    double loss_ref = 0;
    for (uint32_t i = 0; i < n; i++) {
        hog_row row = hog_dataset_row(ds, i);
        double s[8];
        for (uint32_t k = 0; k < K; k++) {
            s[k] = (double)hog_w_load(&m->bias[k]);
            for (uint32_t t = 0; t < row.nnz; t++)
                s[k] += w[row.index[t] * K + k] * (double)row.value[t];
        }
        double g[8];
        if (loss == HOG_LOSS_SOFTMAX) {
            double mx = s[0], z = 0;
            for (uint32_t k = 1; k < K; k++)
                mx = fmax(mx, s[k]);
            for (uint32_t k = 0; k < K; k++)
                z += exp(s[k] - mx);
            int y = (int)row.label;
            for (uint32_t k = 0; k < K; k++)
                g[k] = exp(s[k] - mx) / z - (k == (uint32_t)y);
            loss_ref += mx + log(z) - s[y];
        } else {
            float y = loss == HOG_LOSS_SQUARED ? row.label : (row.label > 0 ? 1.0f : -1.0f);
            float v;
            g[0] = (double)hog_loss_grad(loss, (float)s[0], y, &v);
            loss_ref += (double)v;
        }
        for (uint32_t k = 0; k < K; k++) {
            gb[k] += g[k];
            for (uint32_t t = 0; t < row.nnz; t++)
                gw[row.index[t] * K + k] += g[k] * (double)row.value[t];
        }
    }

    hog_dense *dn = hog_dense_new(d, K, n);
    cr_assert_not_null(dn);
    hog_dense_blas_init();
    uint32_t perm[24];
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    double got_loss = 0;
    uint64_t examples = 0, nnz = 0;
    hog_dense_segment(dn, m, &p, blk, 0, perm, n, 0, step, 0.0f, NULL, &got_loss, &examples, &nnz, NULL, NULL, NULL);
    cr_assert_eq(examples, n);
    cr_assert_eq(nnz, (uint64_t)n * d);
    cr_assert_float_eq(got_loss, loss_ref, 1e-4 * fmax(1.0, fabs(loss_ref)), "loss %g, per example %g", got_loss,
                       loss_ref);
    double shrink = 1.0 - (double)step * p.l2 * n;
    for (uint32_t t = 0; t < d * K; t++) {
        double want = w[t] * shrink - (double)step * gw[t];
        double got = (double)hog_w_load(&m->w[t]);
        cr_assert_float_eq(got, want, 1e-5 * fmax(1.0, fabs(want)), "weight %u: %.8g, per-example sum %.8g", t, got,
                           want);
    }
    for (uint32_t k = 0; k < K; k++) {
        double want = (0.1 * k - 0.05) - (double)step * gb[k];
        cr_assert_float_eq((double)hog_w_load(&m->bias[k]), want, 1e-5, "bias %u", k);
    }
    hog_dense_free(dn);
    hog_model_free(m);
    free(w);
    free(gw);
    hog_dataset_close(ds);
}

Test(dense, softmax_batch_step_is_the_sum_of_per_example_steps)
{
    check_batch_step(HOG_LOSS_SOFTMAX, 3, 'c');
}

Test(dense, logistic_batch_step_is_the_sum_of_per_example_steps)
{
    check_batch_step(HOG_LOSS_LOGISTIC, 1, 'b');
}

Test(dense, hinge_and_squared_batch_steps_are_the_sums_of_per_example_steps)
{
    check_batch_step(HOG_LOSS_HINGE, 1, 'b');
    check_batch_step(HOG_LOSS_SQUARED, 1, 'r');
}

Test(dense, scores_match_the_row_by_row_scores_and_ignore_unknown_features)
{
    hog_dataset *ds = make_dense("s.svm", 40, 12, 'c', 0, 6);
    /* A model narrower than the data: features 8..11 are unknown to it. */
    hog_model *m = hog_model_new(HOG_LOSS_SOFTMAX, 8, 3, 3);
    hog_rng r = {3};
    for (uint32_t t = 0; t < 8 * 3; t++)
        hog_w_store(&m->w[t], (float)((double)hog_rng_below(&r, 1000) / 1000.0 - 0.5));
    for (uint32_t k = 0; k < 3; k++)
        hog_w_store(&m->bias[k], (float)k);
    hog_dense *dn = hog_dense_new(8, 3, 40);
    hog_dense_blas_init();
    hog_dense_snapshot(dn, m);
    hog_row rows[40];
    for (uint32_t i = 0; i < 40; i++)
        rows[i] = hog_dataset_row(ds, i);
    const float *s = hog_dense_scores(dn, rows, 40);
    for (uint32_t i = 0; i < 40; i++) {
        float want[3];
        hog_model_scores(m, &rows[i], NULL, want);
        for (uint32_t k = 0; k < 3; k++)
            cr_assert_float_eq(s[i * 3 + k], want[k], 1e-5f, "row %u class %u", i, k);
    }
    hog_dense_free(dn);
    hog_model_free(m);
    hog_dataset_close(ds);
}

/* ===================================================================== *
 *  Whole runs
 * ===================================================================== */
/* The full-batch objective the model info does not hold: mean loss (the
 * model's own, as evaluated) + l2/2 |w|^2. */
static double objective(const hog_model *m, const hog_dataset *ds, double l2)
{
    hog_metrics mt;
    cr_assert_eq(hog_model_evaluate(m, ds, 1, &mt), 0);
    double reg = 0;
    for (uint64_t t = 0; t < m->dim * m->outputs; t++) {
        double w = (double)hog_w_load(&m->w[t]);
        reg += w * w;
    }
    return mt.loss + 0.5 * l2 * reg;
}

/* Tolerance: both kernels run SGD to near the same regularised optimum; the
 * objectives they reach agree within 0.5% (measured: the first 6 digits). */
static void same_optimum(hog_loss loss, char kind, double step)
{
    hog_dataset *tr = make_dense("tr.svm", 3000, 20, kind, 0.1, 11);
    hog_train_params p = plain_params();
    p.loss = loss;
    p.threads = 1;
    p.epochs = 30;
    p.step = step;
    p.decay = 0.9;
    p.l2 = 1e-3;
    p.batch = 16;
    p.kernel = HOG_KERNEL_SPARSE;
    hog_model *sp = train(tr, NULL, p);
    p.kernel = HOG_KERNEL_DENSE;
    hog_model *dn = train(tr, NULL, p);
    cr_assert_eq(sp->info.params.kernel, HOG_KERNEL_SPARSE);
    cr_assert_eq(dn->info.params.kernel, HOG_KERNEL_DENSE);
    double a = objective(sp, tr, p.l2), b = objective(dn, tr, p.l2);
    cr_assert(isfinite(a) && isfinite(b));
    cr_assert_lt(fabs(a - b), 0.005 * a, "%s: sparse kernel objective %g, dense %g", hog_loss_name(loss), a, b);
    /* And it is a real optimum, not two equal failures: well below the
     * loss of the zero model (log 2 for logistic, log 3 for softmax). */
    cr_assert_lt(b, loss == HOG_LOSS_SOFTMAX ? 0.7 * log(3.0) : 0.7 * log(2.0), "dense objective %g", b);
    hog_model_free(sp);
    hog_model_free(dn);
    hog_dataset_close(tr);
}

Test(dense, logistic_reaches_the_sparse_kernels_objective)
{
    same_optimum(HOG_LOSS_LOGISTIC, 'b', 0.05);
}

Test(dense, softmax_reaches_the_sparse_kernels_objective)
{
    same_optimum(HOG_LOSS_SOFTMAX, 'c', 0.05);
}

Test(dense, hinge_and_squared_learn_with_two_threads_and_a_holdout)
{
    hog_dataset *tr = make_dense("tr.svm", 4000, 20, 'b', 0, 12);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_HINGE;
    p.threads = 2;
    p.epochs = 10;
    p.step = 0.02;
    p.holdout = 0.2;
    p.kernel = HOG_KERNEL_DENSE;
    p.batch = 32;
    hog_model *m = train(tr, NULL, p);
    /* The holdout is evaluated, and only it: about 800 rows. */
    cr_assert(m->info.test.rows > 650 && m->info.test.rows < 950, "held-out rows %llu",
              (unsigned long long)m->info.test.rows);
    cr_assert_eq(m->info.train.rows + m->info.test.rows, 4000);
    cr_assert_gt(m->info.test.accuracy, 0.95, "hinge held-out accuracy %g", m->info.test.accuracy);
    hog_model_free(m);
    hog_dataset_close(tr);

    tr = make_dense("r.svm", 4000, 20, 'r', 0.05, 13);
    p.loss = HOG_LOSS_SQUARED;
    p.step = 0.005;
    p.schedule = HOG_SCHEDULE_INVSCALING;
    m = train(tr, NULL, p);
    /* The targets' spread is about 5; the noise is 0.05 / sqrt(3). */
    cr_assert_lt(m->info.test.rmse, 0.1, "squared held-out rmse %g", m->info.test.rmse);
    cr_assert_float_eq((double)hog_w_load(&m->bias[0]), 0.5, 0.05, "intercept %g", (double)hog_w_load(&m->bias[0]));
    hog_model_free(m);
    hog_dataset_close(tr);
}

Test(dense, one_thread_is_reproducible_bit_for_bit)
{
    hog_dataset *tr = make_dense("tr.svm", 3000, 30, 'c', 0.05, 8);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.threads = 1;
    p.epochs = 3;
    p.seed = 42;
    p.kernel = HOG_KERNEL_DENSE;
    p.batch = 50;
    hog_model *a = train(tr, NULL, p);
    hog_model *b = train(tr, NULL, p);
    cr_assert(same_weights(a, b), "two one-thread dense runs with one seed differ");
    p.seed = 43;
    hog_model *c = train(tr, NULL, p);
    cr_assert(!same_weights(a, c), "another seed gave the very same model: the order is not shuffled");
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
    hog_dataset_close(tr);
}

/* ===================================================================== *
 *  Choosing the kernel
 * ===================================================================== */
Test(dense, auto_picks_dense_for_dense_data_and_sparse_otherwise)
{
    /* Fashion-MNIST's shape: 60,000 rows, 784 features, half non-zero. */
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 60000, 784, 23423502, 10), HOG_KERNEL_DENSE);
    /* Just below and at the threshold. */
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 1000, 100, 19999, 1), HOG_KERNEL_SPARSE);
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 1000, 100, 20000, 1), HOG_KERNEL_DENSE);
    /* Dense but too wide, or too many weights. */
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 1000, HOG_DENSE_MAX_FEATURES + 1ull, 1000ull * 40000, 1),
                 HOG_KERNEL_SPARSE);
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 1000, 10000, 1000ull * 5000, 1000), HOG_KERNEL_SPARSE);
    /* RCV1-like: sparse. */
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_AUTO, 1000000, 1u << 20, 75000000, 1), HOG_KERNEL_SPARSE);
    /* Asked for explicitly: as asked, whatever the data. */
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_DENSE, 1000000, 1u << 20, 75000000, 1), HOG_KERNEL_DENSE);
    cr_assert_eq(hog_kernel_pick(HOG_KERNEL_SPARSE, 60000, 784, 23423502, 10), HOG_KERNEL_SPARSE);

    /* A run records what it chose, and the model file keeps it. */
    hog_dataset *dense = make_dense("d.svm", 500, 10, 'b', 0, 1);
    char path[128];
    snprintf(path, sizeof(path), "%s/sp.svm", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 500; i++)
        fprintf(f, "%d %d:1 %d:0.5\n", i % 2 ? 1 : -1, (i * 7) % 100, 100 + i % 2);
    fclose(f);
    hog_dataset *sparse;
    char err[256];
    cr_assert_eq(hog_dataset_open(path, NULL, &sparse, err, sizeof(err)), 0, "%s", err);
    hog_train_params p = plain_params();
    p.epochs = 2;
    p.threads = 1;
    hog_model *a = train(dense, NULL, p), *b = train(sparse, NULL, p);
    cr_assert_eq(a->info.params.kernel, HOG_KERNEL_DENSE);
    cr_assert_eq(b->info.params.kernel, HOG_KERNEL_SPARSE);
    snprintf(path, sizeof(path), "%s/a.hog", dir);
    cr_assert_eq(hog_model_save(a, path), 0);
    hog_model *loaded;
    cr_assert_eq(hog_model_load(path, &loaded, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(loaded->info.params.kernel, HOG_KERNEL_DENSE);
    cr_assert_eq(loaded->info.params.batch, p.batch);
    hog_model_free(loaded);
    hog_model_free(a);
    hog_model_free(b);
    hog_dataset_close(dense);
    hog_dataset_close(sparse);
}

Test(dense, bad_kernel_and_batch_are_refused_with_the_field)
{
    const char *field = NULL;
    hog_train_params p = plain_params();
    p.batch = 0;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "batch");
    p.batch = 1025;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "batch");
    p = plain_params();
    p.kernel = (hog_kernel)3;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "kernel");
    hog_kernel parsed;
    cr_assert_eq(hog_kernel_parse("dense", &parsed), 0);
    cr_assert_eq(parsed, HOG_KERNEL_DENSE);
    cr_assert_eq(hog_kernel_parse("Dense", &parsed), HOG_EPARAM);
    cr_assert_str_eq(hog_kernel_name(HOG_KERNEL_SPARSE), "sparse");
}

/* ===================================================================== *
 *  Evaluation with GEMM
 * ===================================================================== */
Test(dense, gemm_evaluation_gives_the_row_by_row_metrics)
{
    /* 5000 rows: blocks of 4096 and 904, batches cut at block ends. */
    hog_dataset *tr = make_dense("tr.svm", 5000, 20, 'c', 0.1, 21);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.epochs = 3;
    p.kernel = HOG_KERNEL_DENSE;
    hog_model *m = train(tr, NULL, p);
    hog_pool *pool;
    cr_assert_eq(hog_pool_create(2, 0, &pool, NULL, 0), 0);
    hog_rowsel sel = {0.3, 5, 1, 0};
    hog_metrics dense_all, dense_sel, sparse_all, sparse_sel;
    cr_assert_eq(hog_evaluate(m, tr, NULL, NULL, 0, pool, &dense_all, NULL, 0), 0);
    cr_assert_eq(hog_evaluate(m, tr, &sel, NULL, 0, pool, &dense_sel, NULL, 0), 0);
    m->info.params.kernel = HOG_KERNEL_SPARSE;
    cr_assert_eq(hog_evaluate(m, tr, NULL, NULL, 0, pool, &sparse_all, NULL, 0), 0);
    cr_assert_eq(hog_evaluate(m, tr, &sel, NULL, 0, pool, &sparse_sel, NULL, 0), 0);
    cr_assert_eq(dense_all.rows, 5000);
    cr_assert_eq(dense_sel.rows, sparse_sel.rows);
    cr_assert(dense_sel.rows > 1300 && dense_sel.rows < 1700);
    cr_assert_float_eq(dense_all.accuracy, sparse_all.accuracy, 1e-3); /* a near tie may round the other way */
    cr_assert_float_eq(dense_sel.accuracy, sparse_sel.accuracy, 1e-3);
    cr_assert_float_eq(dense_all.logloss, sparse_all.logloss, 1e-5);
    cr_assert_float_eq(dense_sel.logloss, sparse_sel.logloss, 1e-5);
    cr_assert_gt(dense_all.accuracy, 0.8);
    hog_model_free(m);

    /* Binary: AUC too. */
    hog_dataset_close(tr);
    tr = make_dense("b.svm", 3000, 20, 'b', 0.1, 22);
    p.loss = HOG_LOSS_LOGISTIC;
    m = train(tr, NULL, p);
    cr_assert_eq(m->info.params.kernel, HOG_KERNEL_DENSE);
    cr_assert_eq(hog_evaluate(m, tr, NULL, NULL, 0, pool, &dense_all, NULL, 0), 0);
    m->info.params.kernel = HOG_KERNEL_SPARSE;
    cr_assert_eq(hog_evaluate(m, tr, NULL, NULL, 0, pool, &sparse_all, NULL, 0), 0);
    cr_assert_float_eq(dense_all.auc, sparse_all.auc, 1e-4);
    cr_assert_float_eq(dense_all.logloss, sparse_all.logloss, 1e-5);
    cr_assert_float_eq(dense_all.accuracy, sparse_all.accuracy, 1e-3); /* a near tie may round the other way */
    cr_assert_gt(dense_all.auc, 0.85);
    hog_pool_free(pool);
    hog_model_free(m);
    hog_dataset_close(tr);
}

/* ===================================================================== *
 *  The command
 * ===================================================================== */
Test(dense, the_command_takes_kernel_and_batch_logs_and_reports_the_kernel)
{
    hog_dataset *ds = make_dense("c.svm", 600, 12, 'c', 0, 4);
    hog_dataset_close(ds);
    cr_assert_eq(hog("train c.svm -o m.hog --loss softmax --epochs 2 --normalized 0 --report r.json"), 0, "%s", out);
    cr_assert_not_null(strstr(out, "dense kernel (auto): density 1"), "%s", out);
    cr_assert_eq(hog("train c.svm -o m.hog --loss softmax --epochs 2 --kernel sparse --report r.json"),
                 0, "%s", out);
    cr_assert_not_null(strstr(out, "sparse kernel: density 1"), "%s", out);
    /* --path, the option's first name, still sets it. */
    cr_assert_eq(hog("train c.svm -o m.hog --loss softmax --epochs 2 --normalized=0 --path dense --batch 7 "
                                       "--report r.json -q && cat r.json"), 0, "%s", out);
    cr_assert_not_null(strstr(out, "\"kernel\": \"dense\""), "%s", out);
    cr_assert_not_null(strstr(out, "\"batch\": 7,"), "%s", out);
    cr_assert_eq(hog("train c.svm -o m.hog --kernel fast"), 2);
    cr_assert_not_null(strstr(out, "--kernel: expected auto, sparse or dense, found 'fast'"), "%s", out);
    cr_assert_eq(hog("train c.svm -o m.hog --path fast"), 2);
    cr_assert_not_null(strstr(out, "--path: expected auto, sparse or dense, found 'fast'"), "%s", out);
    cr_assert_eq(hog("train c.svm -o m.hog --batch 0"), 2);
    cr_assert_not_null(strstr(out, "invalid value for --batch"), "%s", out);
    cr_assert_eq(hog("train c.svm -o m.hog --batch 2000"), 2);
    cr_assert_not_null(strstr(out, "--batch: expected a whole number from 0 to 1024, found '2000'"), "%s", out);
}

Test(dense, a_model_too_large_for_the_dense_buffers_is_refused_with_a_message)
{
    /* 5 million features: 32 dense rows alone take 640 MB per worker. */
    char path[128];
    snprintf(path, sizeof(path), "%s/wide.svm", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "1 0:1 4999999:1\n-1 1:1\n");
    fclose(f);
    hog_dataset *ds;
    char err[256] = "";
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    hog_train_params p = plain_params();
    p.kernel = HOG_KERNEL_DENSE;
    p.threads = 1;
    p.mem_limit = 64u << 20;
    hog_trainer *t;
    hog_model *m = NULL;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(m);
    cr_assert_not_null(strstr(err, "the dense kernel needs"), "%s", err);
    cr_assert_not_null(strstr(err, "5000000 features x 1 outputs"), "%s", err);
    cr_assert_not_null(strstr(err, "use the sparse kernel"), "%s", err);
    /* Auto takes the sparse kernel on the same data and trains. */
    hog_trainer_free(t);
    p.kernel = HOG_KERNEL_AUTO;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m->info.params.kernel, HOG_KERNEL_SPARSE);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

/* Options the mini-batch step does not implement send auto to the sparse
 * kernel, and make a forced dense run fail with the option named. */
Test(dense, sparse_only_options_choose_or_demand_the_sparse_kernel)
{
    hog_dataset *ds = make_dense("so.csv", 600, 16, 'b', 0.0, 3);
    const char *what[] = {"hog_train_params.schedule adagrad", "hog_train_params.normalized", "hog_train_params.l1"};
    for (int k = 0; k < 3; k++) {
        hog_train_params p = plain_params();
        p.threads = 1;
        p.epochs = 2;
        if (k == 0)
            p.schedule = HOG_SCHEDULE_ADAGRAD;
        else if (k == 1)
            p.normalized = 1;
        else
            p.l1 = 1e-4;
        hog_model *m = train(ds, NULL, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_eq(in.params.kernel, HOG_KERNEL_SPARSE, "auto with %s", what[k]);
        hog_model_free(m);

        p.kernel = HOG_KERNEL_DENSE;
        hog_trainer *t;
        char err[256] = "";
        cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), HOG_EPARAM, "dense with %s", what[k]);
        cr_assert(strstr(err, what[k]) != NULL, "%s", err);
        hog_trainer_free(t);
    }
    hog_dataset_close(ds);
}
