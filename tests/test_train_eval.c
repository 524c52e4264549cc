/* test_train_eval.c: metrics from bounded memory: the AUC histogram's bins, its ties and its error bound against the exact AUC, and evaluation against a row-by-row reference. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-eval");
}

TestSuite(train_eval, .init = setup, .fini = scratch_remove);

typedef struct scored {
    float score;
    int pos;
} scored;

static int by_score(const void *a, const void *b)
{
    float x = ((const scored *)a)->score, y = ((const scored *)b)->score;
    return (x > y) - (x < y);
}

/* The exact AUC: the Mann-Whitney statistic over sorted scores, ties half. */
static double exact_auc(scored *v, size_t n)
{
    qsort(v, n, sizeof(*v), by_score);
    double npos = 0, rank_sum = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double pos_in_tie = 0;
        while (j < n && v[j].score == v[i].score)
            pos_in_tie += v[j++].pos;
        rank_sum += 0.5 * (double)(i + 1 + j) * pos_in_tie;
        npos += pos_in_tie;
        i = j;
    }
    double nneg = (double)n - npos;
    return (rank_sum - npos * (npos + 1) / 2) / (npos * nneg);
}

static double hist_auc(const scored *v, size_t n, double *bound)
{
    uint64_t *h = calloc(2 * (size_t)HOG_AUC_BINS, sizeof(uint64_t));
    cr_assert_not_null(h);
    for (size_t i = 0; i < n; i++)
        h[2 * hog_auc_bin(v[i].score) + (v[i].pos != 0)]++;
    double auc = hog_auc_of(h, bound);
    free(h);
    return auc;
}

/* Bins are in the order of their scores: never decreasing over sorted
 * floats of every magnitude; -0 and +0 share one, as the tiny do. */
Test(train_eval, bins_follow_the_order_of_the_scores)
{
    hog_rng r = {5};
    enum { N = 200000 };
    float *f = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        uint32_t bits = (uint32_t)hog_rng_next(&r);
        memcpy(&f[i], &bits, sizeof(bits));
        if (isnan(f[i]))
            f[i] = 0;
    }
    f[0] = INFINITY;
    f[1] = -INFINITY;
    f[2] = -0.0f;
    scored *v = malloc(N * sizeof(scored));
    for (int i = 0; i < N; i++)
        v[i] = (scored){f[i], 0};
    qsort(v, N, sizeof(*v), by_score);
    for (int i = 1; i < N; i++)
        cr_assert_leq(hog_auc_bin(v[i - 1].score), hog_auc_bin(v[i].score), "%a then %a", (double)v[i - 1].score,
                      (double)v[i].score);
    cr_assert_eq(hog_auc_bin(0.0f), hog_auc_bin(-0.0f));
    cr_assert_eq(hog_auc_bin(1e-20f), hog_auc_bin(-1e-20f), "below 2^-32: the middle bin");
    cr_assert_lt(hog_auc_bin(-1e-9f), hog_auc_bin(0.0f));
    cr_assert_lt(hog_auc_bin(0.0f), hog_auc_bin(1e-9f));
    cr_assert_eq(hog_auc_bin(-INFINITY), 0);
    cr_assert_eq(hog_auc_bin(INFINITY), HOG_AUC_BINS - 1);
    /* 1/512 of a binade: 1.0 and 1.002 apart, 1.0 and 1.001 together */
    cr_assert_eq(hog_auc_bin(1.0f), hog_auc_bin(1.001f));
    cr_assert_lt(hog_auc_bin(1.0f), hog_auc_bin(1.002f));
    free(f);
    free(v);
}

/* Scores in bins of their own give the exact AUC and a bound of 0; equal
 * scores count half, as the exact statistic counts ties. */
Test(train_eval, exact_when_no_bin_holds_both_classes)
{
    scored v[6] = {{-3, 0}, {-1, 1}, {0.5f, 0}, {2, 1}, {4, 1}, {8, 0}};
    double bound, auc = hist_auc(v, 6, &bound);
    cr_assert_eq(bound, 0);
    cr_assert_float_eq(auc, exact_auc(v, 6), 1e-15);
    cr_assert_float_eq(auc, 5.0 / 9, 1e-15);
    scored tie[4] = {{1, 1}, {1, 0}, {1, 1}, {1, 0}};
    auc = hist_auc(tie, 4, &bound);
    cr_assert_float_eq(auc, 0.5, 1e-15);
    cr_assert_float_eq(bound, 0.5, 1e-15, "every pair shares the bin");
    scored one_class[2] = {{1, 1}, {2, 1}};
    cr_assert(isnan(hist_auc(one_class, 2, &bound)));
    cr_assert(isnan(bound));
}

/* A trained model's scores: the histogram's AUC is within its bound of the
 * exact one, and the bound is small (the README states 1e-4). */
Test(train_eval, within_the_bound_of_the_exact_auc_on_real_scores)
{
    hog_dataset *ds = make_data("e.svm", 20000, 400, 20, 'b', 31);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 3;
    hog_model *m = train(ds, NULL, p);
    hog_dataset_info di;
    hog_dataset_get_info(ds, &di);
    scored *v = malloc(di.rows * sizeof(scored));
    for (uint64_t i = 0; i < di.rows; i++) {
        hog_row row = hog_dataset_row(ds, i);
        hog_model_scores(m, &row, NULL, &v[i].score);
        v[i].pos = row.label > 0;
    }
    double bound, auc = hist_auc(v, di.rows, &bound);
    double exact = exact_auc(v, di.rows);
    cr_assert_leq(fabs(auc - exact), bound, "histogram %.10f, exact %.10f, bound %g", auc, exact, bound);
    cr_assert_lt(bound, 1e-4, "bound %g", bound);
    cr_assert_lt(fabs(auc - exact), 1e-6, "histogram %.10f, exact %.10f", auc, exact);
    hog_metrics mt;
    cr_assert_eq(hog_model_evaluate(m, ds, 2, &mt), 0);
    cr_assert_eq(mt.auc, auc, "the evaluation counts the same histogram: %.12f, %.12f", mt.auc, auc);
    free(v);
    hog_model_free(m);
    hog_dataset_close(ds);
}

/* The evaluation's metrics equal sums taken row by row (the losses of
 * hog_loss_grad, the accuracy of the predicted class), on every loss. */
Test(train_eval, metrics_equal_a_row_by_row_reference)
{
    const struct {
        hog_loss loss;
        char kind;
    } cases[] = {{HOG_LOSS_LOGISTIC, 'b'}, {HOG_LOSS_HINGE, 'b'}, {HOG_LOSS_SQUARED, 'r'}, {HOG_LOSS_SOFTMAX, 'c'}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        hog_dataset *ds = make_data("m.svm", 3000, 100, 10, cases[c].kind, 40 + c);
        hog_train_params p = hog_train_params_default();
        p.threads = 1;
        p.epochs = 2;
        p.loss = cases[c].loss;
        p.step = cases[c].kind == 'r' ? 0.02 : 0.1;
        hog_model *m = train(ds, NULL, p);
        hog_dataset_info di;
        hog_dataset_get_info(ds, &di);
        double loss = 0, correct = 0, sq = 0;
        for (uint64_t i = 0; i < di.rows; i++) {
            hog_row row = hog_dataset_row(ds, i);
            uint32_t cls;
            float s[8];
            hog_model_scores(m, &row, NULL, s);
            hog_model_predict(m, &row, &cls, NULL);
            float v = 0;
            if (cases[c].kind == 'r') {
                hog_loss_grad(m->info.loss, s[0], row.label, &v);
                sq += ((double)s[0] - (double)row.label) * ((double)s[0] - (double)row.label);
            } else if (cases[c].kind == 'b') {
                hog_loss_grad(m->info.loss, s[0], row.label > 0 ? 1.0f : -1.0f, &v);
                correct += (int)cls == (row.label > 0);
            } else {
                float lse = hog_softmax(s, m->outputs);
                int y = hog_model_class_of(m, row.label);
                hog_model_scores(m, &row, NULL, s);
                v = lse - s[y];
                correct += (int)cls == y;
            }
            loss += (double)v;
        }
        hog_metrics mt;
        cr_assert_eq(hog_model_evaluate(m, ds, 2, &mt), 0);
        cr_assert_eq(mt.rows, di.rows);
        cr_assert_float_eq(mt.loss, loss / (double)di.rows, 1e-9, "loss %d", cases[c].loss);
        if (cases[c].kind == 'r')
            cr_assert_float_eq(mt.rmse, sqrt(sq / (double)di.rows), 1e-9);
        else
            cr_assert_eq(mt.accuracy, correct / (double)di.rows, "accuracy %d", cases[c].loss);
        hog_model_free(m);
        hog_dataset_close(ds);
    }
}
