/* test_train_model_file.c: crafted linear model files, their CRC made right, are refused with the field, its value and the limit, before any size is multiplied or allocated. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("model-file");
}

TestSuite(model_file, .init = setup, .fini = scratch_remove);

/* The bytes of a saved logistic model of 4 features. */
static uint8_t *saved(size_t *len)
{
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 4, 1, 2);
    cr_assert_not_null(m);
    m->class_labels[0] = -1;
    m->class_labels[1] = 1;
    for (uint32_t j = 0; j < 4; j++)
        hog_w_store(&m->w[j], 0.5f * (float)j - 1.0f);
    char path[256];
    cr_assert_eq(hog_model_save(m, path_of(path, "m.hog")), 0);
    hog_model_free(m);
    return read_bytes(path, len);
}

static void expect_refused(const uint8_t *f, size_t len, int rc, const char *want)
{
    char path[256], err[512] = "", full[600];
    write_bytes(path_of(path, "crafted.hog"), f, len);
    hog_model *m = NULL;
    cr_assert_eq(hog_model_load(path, &m, err, sizeof(err)), rc, "%s", err);
    cr_assert_null(m);
    snprintf(full, sizeof(full), "%s: %s", path, want);
    cr_assert_str_eq(err, full);
}

Test(model_file, each_size_field_past_its_limit_is_named)
{
    static const struct {
        unsigned off, width;
        uint64_t v;
        const char *want;
    } c[] = {
        {12, 4, (1u << 20) + 1, "header field meta_bytes is 1048577, not between 0 and 1048576"},
        {24, 4, 0, "header field outputs is 0, not between 1 and 1048576"},
        {24, 4, UINT32_MAX, "header field outputs is 4294967295, not between 1 and 1048576"},
        {28, 4, (1u << 20) + 1, "header field classes is 1048577, not between 0 and 1048576"},
        {16, 8, (1ull << 40) + 1, "header field features is 1099511627777, not between 0 and 1099511627776"},
        {16, 8, UINT64_MAX, "header field features is 18446744073709551615, not between 0 and 1099511627776"},
    };
    size_t len;
    uint8_t *good = saved(&len);
    uint8_t *f = malloc(len);
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        memcpy(f, good, len);
        if (c[i].width == 8)
            hog_put_u64(f + c[i].off, c[i].v);
        else
            hog_put_u32(f + c[i].off, (uint32_t)c[i].v);
        hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
        expect_refused(f, len, HOG_ECORRUPT, c[i].want);
    }
    /* the features limit follows the outputs: 2^40 weights in all */
    memcpy(f, good, len);
    hog_put_u32(f + 24, 1024);
    hog_put_u64(f + 16, (1ull << 30) + 1);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    expect_refused(f, len, HOG_ECORRUPT, "header field features is 1073741825, not between 0 and 1073741824");
    /* within the limits, weights past the file's bytes */
    memcpy(f, good, len);
    hog_put_u64(f + 16, 1ull << 40);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    char want[128];
    snprintf(want, sizeof(want), "truncated: the header implies %llu bytes, the file has %zu",
             (unsigned long long)(len + 4 * ((1ull << 40) - 4)), len);
    expect_refused(f, len, HOG_ETRUNCATED, want);
    free(f);
    free(good);
}
