/* test_train_model.c: model files round-trip exactly, in any locale, and damaged ones or bad metadata are refused with the right error. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <locale.h>
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
    damage(8, SEEK_SET, 0x08); /* version 1 (the sample is plain): 9, past this build's 6 */
    cr_assert_eq(load_error(err, sizeof(err)), HOG_EVERSION);
    cr_assert(strstr(err, "model version 9, this build reads versions 1 to 6"), "%s", err);

    unlink(path);
    cr_assert_eq(load_error(err, sizeof(err)), -2);
    hog_model_free(m);
}

/* Writes `bytes` at offset off from the end of the model file (the CRC is
 * the last 4 bytes) and reseals the CRC, as a crafted file would be. */
static void patch_and_reseal(long off, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, off, SEEK_END);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    unsigned char *buf = malloc((size_t)len);
    fseek(f, 0, SEEK_SET);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    unsigned char crc[4];
    hog_put_u32(crc, hog_crc32(0, buf, (size_t)len - 4));
    fseek(f, -4, SEEK_END);
    cr_assert_eq(fwrite(crc, 1, 4, f), 4u);
    fclose(f);
    free(buf);
}

/* NaN or infinite numbers under a valid checksum are refused at load, and a
 * model holding them is never saved. */
Test(model, non_finite_numbers_are_never_saved_or_loaded)
{
    hog_model *m = sample_model();
    char err[256];
    float nan_f = NAN, inf_f = INFINITY;
    double nan_d = NAN;

    cr_assert_eq(hog_model_save(m, path), 0);
    patch_and_reseal(-8, &nan_f, 4); /* the last weight: feature 49, output 2 */
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "the weight of feature 49, output 2, is not finite"), "%s", err);

    cr_assert_eq(hog_model_save(m, path), 0);
    patch_and_reseal(-4 - 4 * 150 - 4, &inf_f, 4); /* the last bias */
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "bias 2 is not finite"), "%s", err);

    cr_assert_eq(hog_model_save(m, path), 0);
    patch_and_reseal(-4 - 4 * 150 - 4 * 3 - 8, &nan_d, 8); /* the last class label */
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "class label 2 is nan"), "%s", err);

    unlink(path);
    hog_w_store(&m->w[7], NAN);
    cr_assert_eq(hog_model_save(m, path), HOG_ENONFINITE);
    cr_assert_eq(access(path, F_OK), -1, "a model with NaN weights was written");
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

/* ===================================================================== *
 *  The metadata codec (train_meta.c)
 * ===================================================================== */
static int parse_loss(const char *text, void *at)
{
    return hog_loss_parse(text, at);
}

Test(model, metadata_numbers_round_trip_exactly)
{
    double d[] = {0.1, 1.0 / 3, 1e-300, 5e-324, -0.0, 1.7976931348623157e308, 0.123456789012345, NAN, INFINITY,
                  -INFINITY};
    uint64_t u = UINT64_MAX, hex = 0x00000000000000abull;
    unsigned un = 4000000000u;
    int neg = -1;
    hog_loss loss = HOG_LOSS_QUANTILE;
    static const char *const keys[] = {"d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9"};
    hog_meta_field f[16];
    size_t n = 0;
    f[n++] = (hog_meta_field){"note", HOG_META_NOTE, NULL, "written, then skipped", NULL};
    for (size_t i = 0; i < HOG_ARRAY_LEN(d); i++)
        f[n++] = HOG_META_NUM(keys[i], &d[i]);
    f[n++] = HOG_META_NUM("u", &u);
    f[n++] = HOG_META_NUM("un", &un);
    f[n++] = HOG_META_NUM("neg", &neg);
    f[n++] = (hog_meta_field){"hex", HOG_META_HEX64, &hex, NULL, NULL};
    f[n++] = (hog_meta_field){"loss", HOG_META_WORD, &loss, hog_loss_name(loss), parse_loss};
    char *text;
    size_t len;
    cr_assert_eq(hog_meta_write(f, n, &text, &len), 0);
    const char *lines[] = {"\nd0 0.10000000000000001\n", "\nd3 4.9406564584124654e-324\n", "\nd7 nan\n",
                           "\nhex 00000000000000ab\n", "\nneg -1\n", "\nloss quantile\n"};
    for (size_t i = 0; i < HOG_ARRAY_LEN(lines); i++)
        cr_assert(memmem(text, len, lines[i], strlen(lines[i])), "%s in %.*s", lines[i], (int)len, text);

    double want[HOG_ARRAY_LEN(d)];
    memcpy(want, d, sizeof(d));
    memset(d, 0, sizeof(d));
    u = un = 0;
    hex = 0;
    neg = 0;
    loss = HOG_LOSS_LOGISTIC;
    char why[128] = "";
    cr_assert_eq(hog_meta_read(text, len, f, n, why, sizeof(why)), 0, "%s", why);
    for (size_t i = 0; i < HOG_ARRAY_LEN(d); i++)
        cr_assert(memcmp(&d[i], &want[i], sizeof(double)) == 0 || (isnan(d[i]) && isnan(want[i])),
                  "%s: %a read back as %a", keys[i], want[i], d[i]);
    cr_assert_eq(u, UINT64_MAX);
    cr_assert_eq(un, 4000000000u);
    cr_assert_eq(neg, -1);
    cr_assert_eq(hex, 0xabu);
    cr_assert_eq(loss, HOG_LOSS_QUANTILE);
    hog_free(text);
}

/* Reads text (copied: the reader writes into it) into one field; returns the code and the message. */
static int read_one(const char *text, hog_meta_field f, char *why, size_t len)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", text);
    return hog_meta_read(buf, strlen(buf), &f, 1, why, len);
}

Test(model, metadata_errors_name_the_line_and_the_key)
{
    double step = 0;
    unsigned epochs = 0;
    int bias = 0;
    char why[160];
    hog_meta_field fs = HOG_META_NUM("step", &step), fe = HOG_META_NUM("epochs", &epochs);
    hog_meta_field fb = HOG_META_NUM("bias", &bias);
    hog_meta_field fm = {"model", HOG_META_WORD, NULL, "mf", NULL};

    cr_assert_eq(read_one("newer 1\nstep 0,5\n", fs, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_str_eq(why, "line 2: step: expected a number, found \"0,5\"");
    cr_assert_eq(read_one("step \n", fs, why, sizeof(why)), HOG_ECORRUPT, "an empty value is not 0");
    cr_assert_eq(read_one("epochs -1\n", fe, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_str_eq(why, "line 1: epochs: expected an unsigned integer, found \"-1\"");
    cr_assert_eq(read_one("epochs 4294967296\n", fe, why, sizeof(why)), HOG_ECORRUPT, "beyond unsigned");
    cr_assert_eq(read_one("bias 1x\n", fb, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_eq(read_one("model linear\n", fm, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_str_eq(why, "line 1: model: expected \"mf\", found \"linear\"");
    cr_assert_eq(read_one("step 1\nepochs", fe, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_str_eq(why, "line 2: no newline at its end");
    cr_assert_eq(read_one("step\n", fs, why, sizeof(why)), HOG_ECORRUPT);
    cr_assert_str_eq(why, "line 1: no space between a key and a value");
    /* Keys the table does not name are a newer writer's: skipped, whatever their value. */
    cr_assert_eq(read_one("newer what ever\nepochs 12\n", fe, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(epochs, 12u);
    cr_assert_eq(read_one("model mf\n", fm, why, sizeof(why)), 0, "%s", why);
}

/* Rewrites a saved model's metadata value (same length) and its checksum. */
static void rewrite_meta(const char *from, const char *to)
{
    unsigned char *buf;
    size_t len;
    cr_assert_eq(hog_read_file(path, &buf, &len), 0);
    unsigned char *at = memmem(buf, len, from, strlen(from));
    cr_assert_not_null(at, "%s is in the file", from);
    memcpy(at, to, strlen(to));
    hog_put_u32(buf + len - 4, hog_crc32(0, buf, len - 4));
    cr_assert_eq(hog_write_file_atomic(path, buf, len), 0);
    hog_free(buf);
}

Test(model, a_bad_metadata_value_is_refused_with_its_place)
{
    hog_model *m = sample_model();
    cr_assert_eq(hog_model_save(m, path), 0);
    rewrite_meta("\nepochs 7\n", "\nepochs x\n");
    char err[256];
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, path) && strstr(err, "unreadable metadata: line 9: epochs: expected an unsigned integer"),
              "%s", err);

    cr_assert_eq(hog_model_save(m, path), 0);
    rewrite_meta("\ndata_index_base 0\n", "\ndata_index_base 2\n");
    cr_assert_eq(load_error(err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "data_index_base 2"), "%s", err);
    hog_model_free(m);
}

/* Under a locale whose decimal point is a comma (de_DE, made here with
 * localedef; skipped where its sources are not installed), model files still
 * hold '.' and load back to the same values. */
Test(model, files_are_written_in_the_c_locale_whatever_the_program_set)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    if (system(cmd) != 0)
        cr_skip_test("localedef cannot make de_DE here");
    setenv("LOCPATH", dir, 1);
    if (!setlocale(LC_ALL, "de_DE.UTF-8"))
        cr_skip_test("the de_DE locale made by localedef does not load");
    char num[HOG_NUMBER_CHARS];
    snprintf(num, sizeof(num), "%g", 0.5);
    cr_assert_str_eq(num, "0,5", "the locale is in force");
    hog_number_format(num, sizeof(num), 0.5);
    cr_assert_str_eq(num, "0.5");

    hog_model *m = sample_model();
    cr_assert_eq(hog_model_save(m, path), 0);
    unsigned char *buf;
    size_t len;
    cr_assert_eq(hog_read_file(path, &buf, &len), 0);
    const char *line = "\nstep 0.123456789012345\n";
    cr_assert_not_null(memmem(buf, len, line, strlen(line)));
    hog_free(buf);
    hog_model *back;
    char err[256] = "";
    cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(back->info.params.step, m->info.params.step);
    cr_assert_eq(back->info.test.accuracy, 0.9);
    setlocale(LC_ALL, "C");
    hog_model_free(m);
    hog_model_free(back);
}
