/* test_train_mf_file.c: crafted matrix factorisation model files, their CRC made right, are refused with the field, its value and the limit: what the fuzzer found and every size field. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_mf.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("mf-file");
}

TestSuite(mf_file, .init = setup, .fini = scratch_remove);

/* A rank-2 model of users a, b and items x, y, as training leaves one. */
static hog_mf_model *small_model(void)
{
    hog_mf_model *m = hog_mf_new(2, 2, 2);
    cr_assert_not_null(m);
    uint32_t id;
    cr_assert_eq(hog_idmap_intern(&m->users, "a", 1, &id), 0);
    cr_assert_eq(hog_idmap_intern(&m->users, "b", 1, &id), 0);
    cr_assert_eq(hog_idmap_intern(&m->items, "x", 1, &id), 0);
    cr_assert_eq(hog_idmap_intern(&m->items, "y", 1, &id), 0);
    for (uint32_t u = 0; u < 2; u++) {
        hog_w_store(&m->bu[u], 0.25f * (float)u);
        hog_w_store(&m->bi[u], -0.5f * (float)u);
        for (uint32_t f = 0; f < 2; f++) {
            hog_w_store(&m->p[u * m->stride + f], 0.1f * (float)(u + f));
            hog_w_store(&m->q[u * m->stride + f], 0.2f * (float)(u + 1));
        }
    }
    m->info.mean = 3.5;
    m->info.min = 1;
    m->info.max = 5;
    return m;
}

/* The bytes of m saved, and m freed. */
static uint8_t *saved(hog_mf_model *m, size_t *len)
{
    char path[256];
    cr_assert_eq(hog_mf_save(m, path_of(path, "m.mf")), 0);
    hog_mf_free(m);
    return read_bytes(path, len);
}

/* Writes the crafted bytes and expects load to fail with rc and, after the
 * path, the message want. */
static void expect_refused(const uint8_t *f, size_t len, int rc, const char *want)
{
    char path[256], err[512] = "", full[600];
    write_bytes(path_of(path, "crafted.mf"), f, len);
    hog_mf_model *m = NULL;
    cr_assert_eq(hog_mf_load(path, &m, err, sizeof(err)), rc, "%s", err);
    cr_assert_null(m);
    snprintf(full, sizeof(full), "%s: %s", path, want);
    cr_assert_str_eq(err, full);
}

static void reseal(uint8_t *f, size_t len)
{
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
}

/* Found by the fuzzer: a range whose min is above its max (or a mean or
 * bound that is not a finite float) was loaded, and every clamped
 * prediction came out below min. */
Test(mf_file, a_range_upside_down_or_not_finite_is_refused)
{
    static const struct {
        double mean, min, max;
        const char *want;
    } c[] = {
        {3, 1, 0, "unreadable metadata: min 1 is above max 0"},
        {NAN, 1, 5, "unreadable metadata: mean is nan, not a finite 32-bit float"},
        {3, -INFINITY, 5, "unreadable metadata: min is -inf, not a finite 32-bit float"},
        {3, 1, 1e300, "unreadable metadata: max is 1e+300, not a finite 32-bit float"},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        hog_mf_model *m = small_model();
        m->info.mean = c[i].mean;
        m->info.min = c[i].min;
        m->info.max = c[i].max;
        size_t len;
        uint8_t *f = saved(m, &len);
        expect_refused(f, len, HOG_ECORRUPT, c[i].want);
        free(f);
    }
}

/* The header's reserved word is zero in version 1: anything else is a
 * file this build does not know. */
Test(mf_file, the_reserved_header_field_must_be_zero)
{
    size_t len;
    uint8_t *f = saved(small_model(), &len);
    hog_put_u32(f + 28, 7);
    reseal(f, len);
    expect_refused(f, len, HOG_ECORRUPT, "header field at byte 28 is 7, where version 1 has zero");
    free(f);
}

/* Every size field of the header past its limit, the CRC right: refused by
 * name, value and limit before any is multiplied or allocated. */
Test(mf_file, each_size_field_past_its_limit_is_named)
{
    static const struct {
        unsigned off, width;
        uint64_t v;
        const char *want;
    } c[] = {
        {12, 4, (1u << 20) + 1, "header field meta_bytes is 1048577, not between 0 and 1048576"},
        {16, 4, UINT32_MAX - 1, "header field users is 4294967294, not between 0 and 4294967293"},
        {20, 4, UINT32_MAX, "header field items is 4294967295, not between 0 and 4294967293"},
        {24, 4, 0, "header field rank is 0, not between 1 and 1024"},
        {24, 4, 1025, "header field rank is 1025, not between 1 and 1024"},
        {32, 8, 1ull << 32, "header field user_name_bytes is 4294967296, not between 0 and 4294967295"},
        {40, 8, UINT64_MAX, "header field item_name_bytes is 18446744073709551615, not between 0 and 4294967295"},
    };
    size_t len;
    uint8_t *good = saved(small_model(), &len);
    uint8_t *f = malloc(len);
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        memcpy(f, good, len);
        if (c[i].width == 8)
            hog_put_u64(f + c[i].off, c[i].v);
        else
            hog_put_u32(f + c[i].off, (uint32_t)c[i].v);
        reseal(f, len);
        expect_refused(f, len, HOG_ECORRUPT, c[i].want);
    }
    /* within the limits, the users' factors past the file's bytes */
    memcpy(f, good, len);
    hog_put_u32(f + 16, 1000000);
    reseal(f, len);
    char want[128];
    snprintf(want, sizeof(want), "truncated: the header implies %zu bytes, the file has %zu",
             len + (size_t)(1000000 - 2) * 4 * (1 + 1 + 2), len);
    expect_refused(f, len, HOG_ETRUNCATED, want);
    free(f);
    free(good);
}

/* The model as saved loads, and predicts by name as by id. */
Test(mf_file, the_saved_model_loads)
{
    size_t len;
    uint8_t *f = saved(small_model(), &len);
    char path[256], err[512] = "";
    write_bytes(path_of(path, "ok.mf"), f, len);
    hog_mf_model *m = NULL;
    cr_assert_eq(hog_mf_load(path, &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_mf_user_id(m, "b"), 1);
    cr_assert_eq(hog_mf_predict(m, "b", "y"), hog_mf_predict_id(m, 1, 1));
    hog_mf_free(m);
    free(f);
}
