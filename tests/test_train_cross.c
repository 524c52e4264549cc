/* test_train_cross.c: feature crosses (Vowpal Wabbit's -q): the rules are read or refused with why, a row's crosses are the pairs they name, and a linear model learns through them what it cannot alone, saves, loads and scores with them. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"
#include "test_xor_data.h"

static void setup(void)
{
    scratch_make("train-cross");
}

TestSuite(train_cross, .init = setup, .fini = scratch_remove);

Test(train_cross, rules_are_read_or_refused_with_why)
{
    hog_cross c;
    char err[256];
    cr_assert_eq(hog_cross_parse("ab, :c", 0, 100, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.a[0], 'a');
    cr_assert_eq(c.b[0], 'b');
    cr_assert_eq(c.a[1], -1);
    cr_assert_eq(c.b[1], 'c');
    cr_assert_eq(c.bits, 22);
    cr_assert_eq(c.base, 100);
    cr_assert_str_eq(c.spec, "ab,:c");
    cr_assert(hog_cross_needs_fields(&c));
    cr_assert_eq(hog_cross_parse("::", 12, 0, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert(!hog_cross_needs_fields(&c));
    cr_assert_eq(hog_cross_parse("abc", 0, 0, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "at byte 0, expected a pair of two bytes"), "%s", err);
    cr_assert_eq(hog_cross_parse("ab,c", 0, 0, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "at byte 3"), "%s", err);
    cr_assert_eq(hog_cross_parse(" , ", 0, 0, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "empty"), "%s", err);
    cr_assert_eq(hog_cross_parse("ab", 31, 0, &c, err, sizeof(err)), HOG_EPARAM);
    char many[200] = "";
    for (int i = 0; i <= (int)HOG_MAX_CROSSES; i++)
        strcat(many, "ab,");
    cr_assert_eq(hog_cross_parse(many, 0, 0, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "more than 32 pairs"), "%s", err);
    hog_train_params p = hog_train_params_default();
    p.cross_bits = 31;
    const char *field;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "cross_bits");
}

/* The crosses of a row of fields a, a, b, c (indices 1, 2, 3, 4): "ab"
 * pairs 1 and 2 with 3; "aa" pairs 1 with 2; "::" every pair; without
 * fields only "::" crosses; features past the base are left out. */
Test(train_cross, a_row_is_crossed_as_the_rules_say)
{
    const uint32_t index[4] = {1, 2, 3, 4};
    const float value[4] = {2, 3, 5, 7};
    const uint16_t field[4] = {'a', 'a', 'b', 'c'};
    const hog_row row = {index, value, 4, 1, 1};
    uint32_t idx[16];
    float val[16];
    hog_cross c;
    cr_assert_eq(hog_cross_parse("ab", 10, 10, &c, NULL, 0), 0);
    uint32_t n = hog_cross_row(&c, &row, field, idx, val);
    cr_assert_eq(n, 6, "the row's 4 and 2 crosses, got %u", n);
    for (int i = 0; i < 4; i++)
        cr_assert(idx[i] == index[i] && val[i] == value[i]);
    cr_assert(idx[4] >= 10 && idx[4] < 10 + 1024 && idx[5] >= 10 && idx[5] < 10 + 1024 && idx[4] != idx[5]);
    cr_assert(val[4] == 10.0f && val[5] == 15.0f, "%g %g", (double)val[4], (double)val[5]);
    cr_assert_eq(hog_cross_parse("ba", 10, 10, &c, NULL, 0), 0);
    uint32_t again[16];
    cr_assert_eq(hog_cross_row(&c, &row, field, again, val), 6);
    cr_assert(again[4] == idx[4] && again[5] == idx[5], "the same pair, either way round");
    cr_assert_eq(hog_cross_parse("aa", 10, 10, &c, NULL, 0), 0);
    cr_assert_eq(hog_cross_row(&c, &row, field, idx, val), 5);
    cr_assert(val[4] == 6.0f);
    cr_assert_eq(hog_cross_parse("::", 10, 10, &c, NULL, 0), 0);
    cr_assert_eq(hog_cross_row(&c, &row, field, idx, val), 10);
    cr_assert_eq(hog_cross_row(&c, &row, NULL, idx, val), 10);
    cr_assert_eq(hog_cross_parse("ab", 10, 10, &c, NULL, 0), 0);
    cr_assert_eq(hog_cross_row(&c, &row, NULL, idx, val), 4, "without fields, no named pair");
    cr_assert_eq(hog_cross_parse("::", 10, 3, &c, NULL, 0), 0);
    cr_assert_eq(hog_cross_row(&c, &row, field, idx, val), 3, "indices 1 and 2, and their cross");
}

static hog_dataset *open_fields(const char *path)
{
    hog_read_params rp = hog_read_params_default();
    rp.fields = 1;
    hog_dataset *ds;
    char err[512];
    cr_assert_eq(hog_dataset_open(path, &rp, &ds, err, sizeof(err)), 0, "%s", err);
    return ds;
}

/* write_xor's Vowpal Wabbit text, namespace c noise: no weight of a
 * feature predicts the label, the weight of each pair of a and b does. */
Test(train_cross, a_linear_model_learns_through_its_crosses)
{
    hog_dataset *tr = open_fields(write_xor("tr.vw", XOR_VW, 6000, 3, 0, 30));
    hog_dataset *te = open_fields(write_xor("te.vw", XOR_VW, 2000, 4, 0, 30));
    hog_train_params p = hog_train_params_default();
    p.epochs = 6;
    p.threads = 1;
    hog_dataset_info di;
    hog_dataset_get_info(tr, &di);
    hog_model *lin = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(lin, &in);
    cr_assert_lt(in.test.accuracy, 0.6, "without crosses: %g", in.test.accuracy);
    static const struct {
        const char *spec;
        unsigned threads;
        double min_acc;
    } runs[] = {{"ab", 1, 0.99}, {"ab", 2, 0.99}, {"::", 1, 0.95}, {"ac", 1, 0.0}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        p.interactions = runs[i].spec;
        p.cross_bits = 16;
        p.threads = runs[i].threads;
        hog_model *m = train(tr, te, p);
        hog_model_get_info(m, &in);
        if (runs[i].min_acc > 0)
            cr_assert_gt(in.test.accuracy, runs[i].min_acc, "\"%s\", %u threads: %g", runs[i].spec,
                         runs[i].threads, in.test.accuracy);
        else
            cr_assert_lt(in.test.accuracy, 0.6, "\"ac\" crosses the noise: %g", in.test.accuracy);
        cr_assert_str_eq(in.params.interactions, runs[i].spec);
        cr_assert_eq(in.params.cross_bits, 16);
        cr_assert_eq(in.features, di.features + 65536, "the data's features, then 2^16 crosses");
        hog_model_free(m);
    }
    hog_model_free(lin);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* hog_train_params.l2_crossed: the penalty (fixed, or l2_rows's) times the
 * non-zeros of a crossed row over its own. write_xor's rows have three
 * features (a, b, c) and "ab" one cross, so the factor is exact; without
 * crosses, or without the flag, the penalty is as given. */
Test(train_cross, the_penalty_follows_the_crosses_when_asked)
{
    hog_dataset *tr = open_fields(write_xor("tr.vw", XOR_VW, 3000, 5, 0, 30));
    hog_dataset_info di;
    hog_dataset_get_info(tr, &di);
    const double factor = (double)(di.nnz + di.rows) / (double)di.nnz;
    cr_assert_eq(di.nnz, 3 * di.rows);
    static const struct {
        const char *spec;
        uint32_t crossed;
        double l2_rows;
        double want; /* over the penalty as given */
    } runs[] = {{"ab", 0, 0, 1}, {"ab", 1, 0, 4.0 / 3.0}, {NULL, 1, 0, 1}, {"ab", 1, 1, 4.0 / 3.0}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        hog_train_params p = hog_train_params_default();
        p.epochs = 1;
        p.threads = 1;
        p.interactions = runs[i].spec;
        p.cross_bits = 16;
        p.l2_crossed = runs[i].crossed;
        p.l2_rows = runs[i].l2_rows;
        const double given = runs[i].l2_rows > 0 ? 1.0 / (double)di.rows : p.l2;
        hog_model *m = train(tr, NULL, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_float_eq(in.params.l2, given * runs[i].want, 1e-9 * given, "run %zu: l2 %g, given %g, factor %g", i,
                           in.params.l2, given, factor);
        if (runs[i].want > 1)
            cr_assert_float_eq(runs[i].want, factor, 1e-12);
        hog_model_free(m);
    }
    hog_dataset_close(tr);
}

/* Saved and loaded: a version-6 file, the same crosses and scores; a row
 * without the fields its rules name has no score; a warm start goes on
 * with the same crosses only; a factorisation machine takes none. */
Test(train_cross, the_file_round_trips_and_other_runs_are_refused_and_named)
{
    hog_dataset *tr = open_fields(write_xor("tr.vw", XOR_VW, 3000, 5, 0, 30));
    hog_train_params p = hog_train_params_default();
    p.epochs = 3;
    p.threads = 1;
    p.interactions = "ab";
    p.cross_bits = 12;
    hog_model *a = train(tr, NULL, p);
    char path[256], err[512];
    snprintf(path, sizeof(path), "%s/q.hog", dir);
    cr_assert_eq(hog_model_save(a, path), 0);
    FILE *f = fopen(path, "rb");
    unsigned char head[12];
    cr_assert_eq(fread(head, 1, 12, f), 12);
    fclose(f);
    cr_assert_eq(head[8], 6, "file version %u", head[8]);
    hog_model *b;
    cr_assert_eq(hog_model_load(path, &b, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(a, b));
    hog_model_info in;
    hog_model_get_info(b, &in);
    cr_assert_str_eq(in.params.interactions, "ab");
    cr_assert_eq(in.params.cross_bits, 12);
    hog_metrics ma, mb;
    cr_assert_eq(hog_model_evaluate(a, tr, 1, &ma), 0);
    cr_assert_eq(hog_model_evaluate(b, tr, 2, &mb), 0);
    cr_assert_eq(ma.loss, mb.loss);
    cr_assert_gt(ma.accuracy, 0.95, "%g", ma.accuracy);
    const hog_row row = hog_dataset_row(tr, 0);
    cr_assert(isnan(hog_model_predict(b, &row, NULL, NULL)), "no fields, no crosses of a and b: no score");

    hog_trainer *t;
    hog_model *c = NULL;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, b), 0);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &c, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    hog_model_free(c);
    hog_train_params q = p;
    q.interactions = "ba,ab";
    cr_assert_eq(hog_trainer_create(&q, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, b), 0);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "the initial model's are \"ab\""), "%s", err);
    hog_trainer_free(t);
    q.interactions = NULL;
    cr_assert_eq(hog_trainer_create(&q, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, b), 0);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &c, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "the initial model crosses features"), "%s", err);
    hog_trainer_free(t);

    q = p;
    q.factors = 4;
    q.normalized = 0;
    train_fails(tr, NULL, q, HOG_EPARAM, err, sizeof(err));
    cr_assert(strstr(err, "crosses are for a linear or softmax model"), "%s", err);
    q = p;
    q.interactions = "abc";
    cr_assert_eq(hog_trainer_create(&q, &t, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "expected a pair of two bytes"), "%s", err);
    hog_dataset *svm = make_data("tr.svm", 500, 30, 5, 'b', 7);
    train_fails(svm, NULL, p, HOG_EPARAM, err, sizeof(err));
    cr_assert(strstr(err, "names fields, and the training data has none"), "%s", err);
    hog_dataset_close(svm);
    hog_model_free(a);
    hog_model_free(b);
    hog_dataset_close(tr);
}
