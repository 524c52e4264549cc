/* test_train_summary.c: a .hgd's summary of labels and degrees stands in for the trainer's scan: the very model the scan gives, bit for bit, for every kind of label, class weights and a holdout; a summary that lies about a row's label stops the run at that row's block. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_run.h"

#include "test_etl_files.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-summary");
}

TestSuite(train_summary, .init = setup, .fini = scratch_remove);

/* Opens path with its blocks checked as training first reads them, as the
 * command does. */
static hog_dataset *open_lazy_at(const char *path)
{
    hog_read_params p = hog_read_params_default();
    p.verify = HOG_VERIFY_AT_FIRST_READ;
    hog_dataset *ds = NULL;
    char err[512] = "";
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), 0, "%s", err);
    return ds;
}

/* ds saved as a .hgd, which carries a summary, and the same file as
 * version 2, which does not: both opened as the command opens them. */
static void save_both(const hog_dataset *ds, const char *name, hog_dataset **with, hog_dataset **without)
{
    char v3[256], v2[256], name2[128];
    cr_assert_eq(hog_dataset_save(ds, path_of(v3, name)), 0);
    snprintf(name2, sizeof(name2), "v2-%s", name);
    hgd_without_summary(v3, path_of(v2, name2));
    *with = open_lazy_at(v3);
    *without = open_lazy_at(v2);
    cr_assert_neq((*with)->summary.labels, 0, "a .hgd written now has a summary");
    cr_assert_eq((*without)->summary.labels, 0);
}

/* Trains the file with a summary and the one without on p: the very same
 * model, and whether the summary stood in for the scan is as expected. */
static void assert_same_model(const hog_dataset *with, const hog_dataset *without, hog_train_params p, int used)
{
    cr_assert_eq(hog_scan_summary(with, &p, NULL) != NULL, used);
    cr_assert_null(hog_scan_summary(without, &p, NULL));
    hog_model *a = train(with, NULL, p);
    hog_model *b = train(without, NULL, p);
    cr_assert(same_weights(a, b), "the summary's model is not the scan's (loss %d)", (int)p.loss);
    cr_assert_eq(a->info.classes, b->info.classes);
    if (a->info.classes)
        cr_assert_eq(memcmp(a->class_labels, b->class_labels, a->info.classes * sizeof(double)), 0);
    hog_model_free(a);
    hog_model_free(b);
}

Test(train_summary, the_summary_gives_the_scans_model_bit_for_bit)
{
    static const struct {
        char kind;
        hog_loss loss;
        hog_class_weight weight;
    } cases[] = {
        {'b', HOG_LOSS_LOGISTIC, HOG_CLASS_WEIGHT_NONE}, {'b', HOG_LOSS_HINGE, HOG_CLASS_WEIGHT_BALANCED},
        {'c', HOG_LOSS_SOFTMAX, HOG_CLASS_WEIGHT_NONE},  {'c', HOG_LOSS_SOFTMAX, HOG_CLASS_WEIGHT_BALANCED},
        {'r', HOG_LOSS_SQUARED, HOG_CLASS_WEIGHT_NONE},
    };
    for (size_t i = 0; i < HOG_ARRAY_LEN(cases); i++) {
        char name[32];
        snprintf(name, sizeof(name), "d%zu.svm", i);
        hog_dataset *text = make_data(name, 3000, 300, 12, cases[i].kind, 20 + i), *with, *without;
        snprintf(name, sizeof(name), "d%zu.hgd", i);
        save_both(text, name, &with, &without);
        hog_train_params p = hog_train_params_default(); /* the normalized update, and L2 (its scales) */
        p.threads = 1;
        p.epochs = 3;
        p.l2 = 1e-3;
        p.loss = cases[i].loss;
        p.class_weight = cases[i].weight;
        assert_same_model(with, without, p, 1);
        p.normalized = 0; /* the plain update, with its shrink tables */
        p.step = 0.1;
        assert_same_model(with, without, p, 1);
        p.holdout = 0.2; /* the degrees of the rows trained on: the scan counts them */
        assert_same_model(with, without, p, 0);
        hog_dataset_close(text);
        hog_dataset_close(with);
        hog_dataset_close(without);
    }
}

/* A regression target with more distinct values than a summary lists: the
 * scan counts the degrees, and a classifier on it is refused as before. */
Test(train_summary, a_target_of_many_values_is_scanned)
{
    hog_dataset *text = make_data("many.svm", 70000, 50, 3, 'r', 5), *with, *without;
    save_both(text, "many.hgd", &with, &without);
    cr_assert_eq(with->summary.labels, HOG_HGD_MANY_LABELS);
    cr_assert_eq(with->summary.degrees, with->info.features);
    hog_train_params p = plain_params();
    p.threads = 1;
    p.epochs = 1;
    p.loss = HOG_LOSS_SQUARED;
    assert_same_model(with, without, p, 1); /* regression needs no labels listed */
    p.loss = HOG_LOSS_SOFTMAX;
    cr_assert_null(hog_scan_summary(with, &p, NULL));
    char err[256];
    train_fails(with, NULL, p, HOG_ELABEL, err, sizeof(err));
    cr_assert(strstr(err, "not an integer") || strstr(err, "distinct labels"), "%s", err);
    hog_dataset_close(text);
    hog_dataset_close(with);
    hog_dataset_close(without);
}

/* A crafted summary that lists other labels than the rows hold, its
 * checksums recomputed: refused at the open that checks every block, and
 * by the first read of the row's block in a run that trusts the summary
 * for its classes. */
Test(train_summary, a_summary_that_lies_about_a_label_is_caught_at_its_row)
{
    hog_dataset *text = make_data("b.svm", 2000, 100, 8, 'b', 9), *with, *without;
    save_both(text, "b.hgd", &with, &without);
    hog_dataset_close(with);
    hog_dataset_close(without);
    char path[256], lie[256], err[512] = "";
    size_t n;
    uint8_t *f = read_bytes(path_of(path, "b.hgd"), &n);
    uint64_t at;
    memcpy(&at, f + 224, 8);
    double two = 2.0; /* labels -1, +1: the second becomes 2 */
    memcpy(f + at + 8 + 8, &two, 8);
    hgd_reseal_summary(f);
    write_bytes(path_of(lie, "lie.hgd"), f, n);
    free(f);

    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(lie, NULL, &ds, err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "label 1 is not one of the 2 in the file's summary"), "%s", err);
    cr_assert(strstr(err, ": block 0: row "), "%s", err);

    ds = open_lazy_at(lie);
    hog_train_params p = plain_params();
    p.threads = 2;
    p.epochs = 1;
    cr_assert_not_null(hog_scan_summary(ds, &p, NULL));
    train_fails(ds, NULL, p, HOG_ECORRUPT, err, sizeof(err));
    cr_assert(strstr(err, "label 1 is not one of the 2 in the file's summary"), "%s", err);
    hog_dataset_close(ds);
    hog_dataset_close(text);
}
