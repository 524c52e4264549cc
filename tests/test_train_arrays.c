/* test_train_arrays.c: predictions written into an array, a model's weights read and written in place, and models made from weights. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

#include "test_train_data.h"

static void setup(void)
{
    scratch_make("trarrays");
}

TestSuite(train_arrays, .init = setup, .fini = scratch_remove);

static hog_model *trained(const hog_dataset *ds, hog_loss loss)
{
    hog_train_params p = hog_train_params_default();
    p.loss = loss;
    p.threads = 2;
    p.bind = 0;
    p.epochs = 3;
    p.step = hog_loss_is_regression(loss) ? 0.02 : 0.1; /* 0.1 diverges on this regression data */
    return train(ds, NULL, p);
}

/* Every kind the model has, against hog_model_predict row by row. */
static void predictions_match(const hog_model *m, const hog_dataset *ds)
{
    const uint64_t rows = ds->info.rows;
    const uint32_t K = m->outputs, C = m->info.classes;
    float *score = malloc(rows * sizeof(float)), *label = malloc(rows * sizeof(float));
    float *margins = malloc(rows * K * sizeof(float)), *probs = malloc(rows * (C ? C : 1) * sizeof(float));
    char err[256] = "";
    cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_SCORE, 2, score, rows, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_LABEL, 1, label, rows, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_MARGINS, 0, margins, rows * K, err, sizeof(err)), 0,
                 "%s", err);
    const int has_probs = m->info.loss == HOG_LOSS_LOGISTIC || m->info.loss == HOG_LOSS_SOFTMAX;
    if (has_probs)
        cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_PROBS, 2, probs, rows * C, err, sizeof(err)), 0,
                     "%s", err);
    else
        cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_PROBS, 2, probs, rows, err, sizeof(err)),
                     HOG_EPARAM);
    float s[8], p[8];
    for (uint64_t i = 0; i < rows; i++) {
        hog_row row = hog_dataset_row(ds, i);
        uint32_t cls;
        double want = hog_model_predict(m, &row, &cls, p);
        cr_assert_float_eq(score[i], (float)want, 1e-6f, "row %llu", (unsigned long long)i);
        hog_model_scores(m, &row, NULL, s);
        cr_assert_eq(memcmp(margins + i * K, s, K * sizeof(float)), 0, "row %llu", (unsigned long long)i);
        if (hog_loss_is_regression(m->info.loss))
            cr_assert_eq(label[i], s[0]);
        else
            cr_assert_eq(label[i], (float)hog_model_class_label(m, cls), "row %llu", (unsigned long long)i);
        if (m->info.loss == HOG_LOSS_SOFTMAX)
            for (uint32_t k = 0; k < C; k++)
                cr_assert_float_eq(probs[i * C + k], p[k], 1e-6f);
        else if (has_probs) {
            cr_assert_float_eq(probs[i * 2 + 1], (float)want, 1e-6f);
            cr_assert_float_eq(probs[i * 2], (float)(1 - want), 1e-6f);
        }
    }
    free(score);
    free(label);
    free(margins);
    free(probs);
}

Test(train_arrays, predictions_into_an_array_are_the_model_s_row_by_row)
{
    const hog_loss losses[] = {HOG_LOSS_LOGISTIC, HOG_LOSS_SOFTMAX, HOG_LOSS_SQUARED, HOG_LOSS_HINGE};
    const char kinds[] = {'b', 'c', 'r', 'b'};
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "p%d.svm", i);
        hog_dataset *ds = make_data(name, 9000, 200, 10, kinds[i], 20 + (uint64_t)i);
        hog_model *m = trained(ds, losses[i]);
        predictions_match(m, ds);
        hog_model_free(m);
        hog_dataset_close(ds);
    }
}

Test(train_arrays, a_buffer_too_small_is_refused_before_anything_is_written)
{
    hog_dataset *ds = make_data("s.svm", 100, 20, 4, 'c', 2);
    hog_model *m = trained(ds, HOG_LOSS_SOFTMAX);
    float out[300];
    out[0] = -1;
    char err[256] = "";
    cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_MARGINS, 0, out, 299, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "out_len is 299: 100 rows of 3 need 300 floats");
    cr_assert_eq(out[0], -1.0f);
    cr_assert_eq(hog_model_predict_array(m, ds, (hog_predict_kind)9, 0, out, 300, err, sizeof(err)), HOG_EPARAM);
    hog_model_free(m);
    hog_dataset_close(ds);
}

Test(train_arrays, weights_read_in_place_change_the_model_when_written)
{
    hog_dataset *ds = make_data("w.svm", 2000, 50, 6, 'c', 4);
    hog_model *m = trained(ds, HOG_LOSS_SOFTMAX);
    hog_weights w;
    hog_model_weights(m, &w);
    cr_assert_eq(w.features, m->dim);
    cr_assert_eq(w.outputs, 3);
    cr_assert_eq(w.classes, 3);
    cr_assert_eq(w.class_labels[0], 1.0);
    cr_assert_eq(w.class_labels[2], 3.0);
    hog_row row = hog_dataset_row(ds, 0);
    float before[3], after[3];
    hog_model_scores(m, &row, NULL, before);
    /* Output 2's weight of the row's first feature, and output 0's bias. */
    w.w[row.index[0] * 3 + 2] += 1.0f;
    w.bias[0] -= 2.0f;
    hog_model_scores(m, &row, NULL, after);
    cr_assert_float_eq(after[2], before[2] + row.value[0], 1e-5f);
    cr_assert_float_eq(after[0], before[0] - 2.0f, 1e-5f);
    cr_assert_eq(after[1], before[1]);
    hog_model_free(m);
    hog_dataset_close(ds);

    hog_dataset *r = make_data("r.svm", 500, 20, 4, 'r', 4);
    m = trained(r, HOG_LOSS_SQUARED);
    hog_model_weights(m, &w);
    cr_assert_eq(w.classes, 0);
    cr_assert_null(w.class_labels);
    hog_model_free(m);
    hog_dataset_close(r);
}

Test(train_arrays, a_model_from_its_weights_predicts_saves_and_loads_as_the_trained_one)
{
    hog_dataset *ds = make_data("f.svm", 3000, 80, 6, 'b', 8);
    hog_model *m = trained(ds, HOG_LOSS_LOGISTIC);
    hog_weights w;
    hog_model_weights(m, &w);
    hog_model *copy;
    char err[256] = "";
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_LOGISTIC, w.features, w.classes, w.class_labels, w.w, w.bias, &copy,
                                        err, sizeof(err)),
                 0, "%s", err);
    cr_assert(same_weights(m, copy));
    cr_assert_eq(copy->info.classes, 2);
    cr_assert_eq(hog_model_class_label(copy, 0), -1.0);
    cr_assert_eq(hog_model_class_label(copy, 1), 1.0);
    predictions_match(copy, ds);
    char path[160];
    snprintf(path, sizeof(path), "%s/f.hog", dir);
    cr_assert_eq(hog_model_save(copy, path), 0);
    hog_model *back;
    cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(back, copy));
    hog_metrics a, b;
    cr_assert_eq(hog_model_evaluate(m, ds, 1, &a), 0);
    cr_assert_eq(hog_model_evaluate(back, ds, 1, &b), 0);
    cr_assert_eq(a.accuracy, b.accuracy);
    cr_assert_eq(a.logloss, b.logloss);
    hog_model_free(back);
    hog_model_free(copy);
    hog_model_free(m);
    hog_dataset_close(ds);
}

Test(train_arrays, models_from_weights_are_checked)
{
    hog_model *m = (hog_model *)1;
    char err[256] = "";
    float w[6] = {1, 2, 3, 4, 5, 6}, bias[3] = {0, 0, 0};
    double labels[3] = {0, 1, 1};
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SOFTMAX, 2, 3, NULL, w, bias, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_model_class_label(m, 2), 2.0, "labels 0..classes-1 by default");
    cr_assert_eq(m->w[1 * 3 + 2], 6.0f);
    hog_model_free(m);
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SQUARED, 6, 0, NULL, NULL, NULL, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m->w[5], 0.0f, "NULL weights are zeros");
    hog_model_free(m);

    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SOFTMAX, 2, 3, labels, w, bias, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "class_labels[2] is 1: expected finite labels, strictly ascending");
    cr_assert_null(m);
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_LOGISTIC, 6, 3, NULL, w, bias, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "classes is 3: a logistic model has 2");
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SQUARED, 6, 2, NULL, w, bias, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "classes is 2: a squared model has none (0)");
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SQUARED, 0, 0, NULL, w, bias, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, "features is 0: expected 1 to 2^32");
    w[4] = NAN;
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SOFTMAX, 2, 3, NULL, w, bias, &m, err, sizeof(err)),
                 HOG_ENONFINITE);
    cr_assert_str_eq(err, "w[4] (feature 1, output 1) is nan");
    w[4] = 0;
    bias[1] = INFINITY;
    cr_assert_eq(hog_model_from_weights(HOG_LOSS_SOFTMAX, 2, 3, NULL, w, bias, &m, err, sizeof(err)),
                 HOG_ENONFINITE);
    cr_assert_str_eq(err, "bias[1] is inf");
}

/* A factorisation machine scores one output (hog_model_info.outputs), from
 * a record of 1 + K weights a feature (a field-aware one's, G K): its
 * margins are one float a row, the score hog_model_predict_fields gives
 * before the link. */
Test(train_arrays, a_factorisation_machine_s_margins_are_one_score_a_row)
{
    char path[160];
    FILE *f = create("x.ffm", path);
    hog_rng r = {8};
    for (int i = 0; i < 3000; i++) {
        const uint32_t a = 1 + (uint32_t)hog_rng_below(&r, 10), b = 11 + (uint32_t)hog_rng_below(&r, 10);
        fprintf(f, "%d 0:%u:1 1:%u:1\n", (a % 2) != (b % 2), a, b);
    }
    fclose(f);
    hog_dataset *ds = open_written(path);
    for (uint32_t field_aware = 0; field_aware <= 1; field_aware++) {
        hog_train_params p = hog_train_params_default();
        p.threads = 1;
        p.bind = 0;
        p.epochs = 3;
        p.factors = 4;
        p.field_aware = field_aware;
        p.schedule = HOG_SCHEDULE_ADAGRAD;
        p.step = 0.2;
        p.normalized = 0;
        hog_model *m = train(ds, NULL, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_eq(in.outputs, 1);
        cr_assert_gt(m->outputs, 1, "a record of factors");
        const uint64_t rows = ds->info.rows;
        float *margins = malloc((rows + 1) * sizeof(float));
        margins[rows] = -7.0f;
        char err[256] = "";
        cr_assert_eq(hog_model_predict_array(m, ds, HOG_PREDICT_MARGINS, 1, margins, rows, err, sizeof(err)), 0,
                     "field_aware %u: %s", field_aware, err);
        cr_assert_eq(margins[rows], -7.0f, "nothing past one float a row");
        for (uint64_t i = 0; i < rows; i++) {
            const uint32_t rpb = ds->info.rows_per_block;
            const hog_row row = hog_dataset_row(ds, i);
            const double p1 = hog_model_predict_fields(m, &row, hog_block_fields(&ds->blocks[i / rpb],
                                                                                  (uint32_t)(i % rpb)), NULL, NULL);
            cr_assert_float_eq(1.0 / (1.0 + exp(-(double)margins[i])), p1, 1e-6, "field_aware %u, row %llu",
                               field_aware, (unsigned long long)i);
        }
        free(margins);
        hog_model_free(m);
    }
    hog_dataset_close(ds);
}
