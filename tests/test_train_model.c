/* test_train_model.c: model files round-trip exactly, and damaged ones are refused with the right error. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/train.h"

#include "test_scratch.h"

static char path[128];

static void setup(void)
{
    scratch_make("model");
    snprintf(path, sizeof(path), "%s/m.hog", dir);
}

TestSuite(model, .init = setup, .fini = scratch_remove);

static hog_model *sample_model(void)
{
    hog_model *m = hog_model_new(HOG_LOSS_SOFTMAX, 50, 3, 3);
    cr_assert_not_null(m);
    for (uint64_t i = 0; i < 150; i++)
        hog_w_store(&m->w[i], (float)sin((double)i) * 0.1f);
    for (uint32_t k = 0; k < 3; k++) {
        hog_w_store(&m->bias[k], 0.25f * (float)k);
        m->class_labels[k] = 2.0 * k + 1;
    }
    m->info.data_fingerprint = 0x0123456789abcdefull;
    m->info.train_rows = 1234;
    m->info.params.step = 0.123456789012345;
    m->info.params.epochs = 7;
    m->info.params.seed = 99;
    m->info.test.rows = 10;
    m->info.test.accuracy = 0.9;
    return m;
}

Test(model, save_and_load_round_trip)
{
    hog_model *m = sample_model();
    cr_assert_eq(hog_model_save(m, path), 0);
    hog_model *back;
    char err[256] = "";
    cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
    hog_model_info a, b;
    hog_model_get_info(m, &a);
    hog_model_get_info(back, &b);
    cr_assert_eq(b.loss, HOG_LOSS_SOFTMAX);
    cr_assert_eq(b.features, 50u);
    cr_assert_eq(b.classes, 3u);
    cr_assert_eq(b.data_fingerprint, a.data_fingerprint);
    cr_assert_eq(b.train_rows, 1234u);
    cr_assert_eq(b.params.step, a.params.step, "parameters round-trip exactly");
    cr_assert_eq(b.params.epochs, 7u);
    cr_assert_eq(b.params.seed, 99u);
    cr_assert_eq(b.test.accuracy, 0.9);
    cr_assert(isnan(b.test.auc));
    cr_assert(memcmp((const void *)m->w, (const void *)back->w, 150 * sizeof(float)) == 0);
    cr_assert_eq(hog_model_class_label(back, 2), 5.0);
    hog_model_free(m);
    hog_model_free(back);
}

static void damage(long off, int whence, unsigned char x)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, off, whence);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ x, f);
    fclose(f);
}

static int load_error(char *err, size_t len)
{
    hog_model *back = (hog_model *)1;
    int rc = hog_model_load(path, &back, err, len);
    cr_assert_null(back);
    return rc;
}

Test(model, damaged_files_are_refused)
{
    hog_model *m = sample_model();
    char err[256];

    cr_assert_eq(hog_model_save(m, path), 0);
    damage(-20, SEEK_END, 0x40);
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECHECKSUM);
    cr_assert(strstr(err, path) && strstr(err, "checksum"), "%s", err);

    cr_assert_eq(hog_model_save(m, path), 0);
    cr_assert_eq(truncate(path, 300), 0);
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ETRUNCATED);
    cr_assert(strstr(err, "truncated"), "%s", err);

    cr_assert_eq(hog_model_save(m, path), 0);
    damage(0, SEEK_SET, 0x01);
    cr_assert_eq(load_error(err, sizeof(err)), HOG_EMAGIC);

    cr_assert_eq(hog_model_save(m, path), 0);
    damage(8, SEEK_SET, 0x02);
    cr_assert_eq(load_error(err, sizeof(err)), HOG_EVERSION);
    cr_assert(strstr(err, "version 3"), "%s", err);

    unlink(path);
    cr_assert_eq(load_error(err, sizeof(err)), -2);
    hog_model_free(m);
}

Test(model, a_failed_save_leaves_the_old_file)
{
    hog_model *m = sample_model();
    cr_assert_eq(hog_model_save(m, path), 0);
    struct stat before;
    cr_assert_eq(stat(path, &before), 0);
    char bad[160];
    snprintf(bad, sizeof(bad), "%s/no-such-folder/m.hog", dir);
    cr_assert_eq(hog_model_save(m, bad), -2);
    /* No temporary file is left beside the model either. */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", dir);
    cr_assert_eq(system(cmd), 0);
    hog_model_free(m);
}
