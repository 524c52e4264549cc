/* test_train_fm.c: factorisation machines: the score is Rendle's pairwise sum, the model learns an interaction no linear model can, saves and loads whole, and refuses what it does not take. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_log.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"
#include "test_xor_data.h"

static void setup(void)
{
    scratch_make("train-fm");
}

TestSuite(train_fm, .init = setup, .fini = scratch_remove);

/* write_xor's rows, a from 1..10 and b from 11..20: no weight of a or b
 * learns their parity XOR, and a's and b's factors do, through
 * <v_a, v_b> = s(a) s(b). */
Test(train_fm, learns_an_interaction_no_linear_model_can)
{
    hog_dataset *tr = open_written(write_xor("tr.svm", XOR_LIBSVM, 8000, 3, 1, 0));
    hog_dataset *te = open_written(write_xor("te.svm", XOR_LIBSVM, 2000, 4, 1, 0));
    hog_train_params p = fm_params();
    for (unsigned threads = 1; threads <= 2; threads++) {
        p.threads = threads;
        hog_model *fm = train(tr, te, p);
        hog_model_info in;
        hog_model_get_info(fm, &in);
        cr_assert_gt(in.test.accuracy, 0.99, "%u threads: a factorisation machine's test accuracy %g", threads,
                     in.test.accuracy);
        cr_assert_lt(in.test.logloss, 0.1, "%u threads: test logloss %g", threads, in.test.logloss);
        cr_assert_eq(in.outputs, 1);
        cr_assert_eq(in.params.factors, 4);
        hog_model_free(fm);
    }
    p.factors = 0;
    hog_model *lin = train(tr, te, p);
    hog_model_info il;
    hog_model_get_info(lin, &il);
    cr_assert_lt(il.test.accuracy, 0.6, "a linear model's test accuracy %g", il.test.accuracy);
    hog_model_free(lin);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* The same interaction as a regression target (squared loss): the
 * factors fit it, a linear model's error stays the target's spread. */
Test(train_fm, fits_an_interaction_under_squared_loss)
{
    hog_dataset *tr = open_written(write_xor("tr.svm", XOR_LIBSVM, 8000, 5, 1, 0));
    hog_dataset *te = open_written(write_xor("te.svm", XOR_LIBSVM, 2000, 6, 1, 0));
    hog_train_params p = fm_params();
    p.loss = HOG_LOSS_SQUARED;
    hog_model *fm = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(fm, &in);
    cr_assert_lt(in.test.rmse, 0.1, "a factorisation machine's test rmse %g", in.test.rmse);
    cr_assert_eq(in.classes, 0);
    hog_model_free(fm);
    p.factors = 0;
    hog_model *lin = train(tr, te, p);
    hog_model_get_info(lin, &in);
    cr_assert_gt(in.test.rmse, 0.9, "a linear model's test rmse %g", in.test.rmse);
    hog_model_free(lin);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* The score hog_model_scores gives (O(nnz k)) against the sum over pairs
 * written out, on a trained model and rows of several values. */
Test(train_fm, the_score_is_the_sum_over_pairs)
{
    hog_dataset *tr = make_data("tr.svm", 3000, 50, 8, 'b', 5);
    hog_train_params p = fm_params();
    p.epochs = 3;
    hog_model *m = train(tr, NULL, p);
    const uint32_t K = m->outputs, F = m->factors;
    cr_assert_eq(F, 4);
    cr_assert_eq(K, 5);
    for (uint64_t i = 0; i < 3000; i += 37) {
        hog_row row = hog_dataset_row(tr, i);
        double want = (double)hog_w_load(&m->bias[0]);
        for (uint32_t a = 0; a < row.nnz; a++) {
            const hog_weight *wa = hog_model_wj(m, row.index[a]);
            want += (double)hog_w_load(&wa[0]) * (double)row.value[a];
            for (uint32_t b = a + 1; b < row.nnz; b++) {
                const hog_weight *wb = hog_model_wj(m, row.index[b]);
                double dot = 0;
                for (uint32_t f = 0; f < F; f++)
                    dot += (double)hog_w_load(&wa[1 + f]) * (double)hog_w_load(&wb[1 + f]);
                want += dot * (double)row.value[a] * (double)row.value[b];
            }
        }
        float got;
        hog_model_scores(m, &row, NULL, &got);
        cr_assert(fabs((double)got - want) <= 1e-4 * (1 + fabs(want)), "row %llu: %.9g, the pairs' sum %.9g",
                  (unsigned long long)i, (double)got, want);
        cr_assert(fabs(hog_model_predict(m, &row, NULL, NULL) - 1 / (1 + exp(-want))) < 1e-5);
    }
    hog_model_free(m);
    hog_dataset_close(tr);
}

/* One thread: the same model run to run, bit for bit; saved and loaded,
 * the same weights, factors and predictions, in a version-4 file. */
Test(train_fm, one_thread_is_reproducible_and_the_file_round_trips)
{
    hog_dataset *tr = make_data("tr.svm", 4000, 200, 10, 'b', 6);
    hog_train_params p = fm_params();
    p.epochs = 4;
    hog_model *a = train(tr, NULL, p), *b = train(tr, NULL, p);
    cr_assert(same_weights(a, b), "two one-thread runs differ");
    char path[256];
    snprintf(path, sizeof(path), "%s/fm.hog", dir);
    cr_assert_eq(hog_model_save(a, path), 0);
    FILE *f = fopen(path, "rb");
    unsigned char head[12];
    cr_assert_eq(fread(head, 1, 12, f), 12);
    fclose(f);
    cr_assert_eq(head[8], 4, "file version %u", head[8]);
    hog_model *c;
    char err[256];
    cr_assert_eq(hog_model_load(path, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(a, c), "the loaded model's weights and factors differ");
    cr_assert_eq(c->factors, 4);
    hog_model_info in;
    hog_model_get_info(c, &in);
    cr_assert_eq(in.outputs, 1);
    cr_assert_eq(in.params.factors, 4);
    for (uint64_t i = 0; i < 4000; i += 101) {
        hog_row row = hog_dataset_row(tr, i);
        cr_assert_eq(hog_model_predict(a, &row, NULL, NULL), hog_model_predict(c, &row, NULL, NULL));
    }
    hog_metrics ma, mc;
    cr_assert_eq(hog_model_evaluate(a, tr, 1, &ma), 0);
    cr_assert_eq(hog_model_evaluate(c, tr, 1, &mc), 0);
    cr_assert_eq(ma.loss, mc.loss);
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
    hog_dataset_close(tr);
}

/* A linear model's file is what it was: not version 4, no factors. */
Test(train_fm, a_linear_model_file_keeps_its_version)
{
    hog_dataset *tr = make_data("tr.svm", 1000, 50, 5, 'b', 7);
    hog_train_params p = plain_params();
    p.epochs = 1;
    hog_model *m = train(tr, NULL, p);
    char path[256];
    snprintf(path, sizeof(path), "%s/lin.hog", dir);
    cr_assert_eq(hog_model_save(m, path), 0);
    FILE *f = fopen(path, "rb");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cr_assert_eq((unsigned char)buf[8], 1);
    cr_assert_null(memmem(buf, n, "factors", 7), "a linear model's metadata names factors");
    hog_model_free(m);
    hog_dataset_close(tr);
}

Test(train_fm, what_it_does_not_take_is_refused_and_named)
{
    hog_train_params p = fm_params();
    hog_trainer *t;
    char err[512];
    p.loss = HOG_LOSS_SOFTMAX;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "not softmax"), "%s", err);
    p = fm_params();
    p.normalized = 1;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "normalized 0"), "%s", err);
    p = fm_params();
    p.kernel = HOG_KERNEL_DENSE;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "sparse kernel"), "%s", err);
    p = fm_params();
    p.factors = HOG_MAX_FACTORS + 1;
    const char *field;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "factors");
    /* Class names: the score could not be turned round into their order. */
    char path[256];
    FILE *f = create("names.csv", path);
    fprintf(f, "y,a\nspam,1\nham,2\nspam,3\n");
    fclose(f);
    hog_read_params rp = hog_read_params_default();
    rp.header = 1;
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(path, &rp, &ds, err, sizeof(err)), 0, "%s", err);
    train_fails(ds, NULL, fm_params(), HOG_ELABEL, err, sizeof(err));
    cr_assert(strstr(err, "numeric labels"), "%s", err);
    hog_dataset_close(ds);
}
