/* test_train_model_file.c: crafted linear model files, their CRC made right, are refused with the field, its value and the limit, before any size is multiplied or allocated. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
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

/* A logistic model of 4 features, labels -1 and 1, weights -1, -0.5, 0, 0.5. */
static hog_model *model4(void)
{
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 4, 1, 2);
    cr_assert_not_null(m);
    m->class_labels[0] = -1;
    m->class_labels[1] = 1;
    for (uint32_t j = 0; j < 4; j++)
        hog_w_store(&m->w[j], 0.5f * (float)j - 1.0f);
    return m;
}

/* The bytes of model4 saved. */
static uint8_t *saved(size_t *len)
{
    hog_model *m = model4();
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

/* The bytes of a saved softmax model of 2 features whose 3 classes have
 * names: version 2, the names after the labels. */
static uint8_t *saved_named(size_t *len)
{
    hog_model *m = hog_model_new(HOG_LOSS_SOFTMAX, 2, 3, 3);
    cr_assert_not_null(m);
    static const char *const names[3] = {"setosa", "versicolor", "virginica"};
    m->class_names = calloc(3, sizeof(char *));
    for (uint32_t k = 0; k < 3; k++) {
        m->class_labels[k] = k;
        m->class_names[k] = hog_strdup(names[k]);
    }
    for (uint32_t i = 0; i < 6; i++)
        hog_w_store(&m->w[i], (float)i - 2.5f);
    char path[256];
    cr_assert_eq(hog_model_save(m, path_of(path, "named.hog")), 0);
    hog_model_free(m);
    return read_bytes(path, len);
}

/* The offset of the names' size in a saved_named file. */
static size_t names_at(const uint8_t *f)
{
    return 32 + hog_get_u32(f + 12) + 8 * 3;
}

Test(model_file, class_names_round_trip_as_version_2)
{
    size_t len;
    uint8_t *f = saved_named(&len);
    cr_assert_eq(hog_get_u32(f + 8), 2);
    size_t at = names_at(f);
    cr_assert_eq(hog_get_u32(f + at), sizeof("setosa") + sizeof("versicolor") + sizeof("virginica"));
    cr_assert_eq(memcmp(f + at + 4, "setosa\0versicolor\0virginica\0", 28), 0);
    char path[256], err[256] = "";
    hog_model *m = NULL;
    cr_assert_eq(hog_model_load(path_of(path, "named.hog"), &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(hog_model_class_name(m, 0), "setosa");
    cr_assert_str_eq(hog_model_class_name(m, 2), "virginica");
    cr_assert_null(hog_model_class_name(m, 3));
    cr_assert_float_eq(hog_w_load(&m->w[5]), 2.5f, 0);
    hog_model_free(m);
    free(f);
    /* a model without names is still version 1, as older builds read */
    f = saved(&len);
    cr_assert_eq(hog_get_u32(f + 8), 1);
    cr_assert_null(hog_model_class_name(NULL, 0));
    free(f);
}

Test(model_file, crafted_class_names_are_refused_with_their_byte)
{
    size_t len;
    uint8_t *good = saved_named(&len);
    uint8_t *f = malloc(len + 8);
    const size_t at = names_at(good);
    char want[256];

    /* a size past its bound, before it is added to anything */
    memcpy(f, good, len);
    hog_put_u32(f + at, UINT32_MAX);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: names_bytes is 4294967295, not between 6 and 3075 for 3 classes "
             "(at least 2)", at);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* names out of order */
    memcpy(f, good, len);
    memcpy(f + at + 4, "versicolor\0setosa\0", 18);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: class name 1 is not after class 0's: names are distinct and ascending",
             at + 4 + 11);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* an empty name */
    memcpy(f, good, len);
    f[at + 4 + 7] = '\0';
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: class name 1 is 0 bytes, not 1 to 1024", at + 4 + 7);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* the last name without its NUL */
    memcpy(f, good, len);
    f[at + 4 + 27] = 'x';
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: class name 2 runs past the names' 28 bytes", at + 4 + 18);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* labels other than 0, 1, 2 */
    memcpy(f, good, len);
    double y = 7;
    memcpy(f + at - 8, &y, 8);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: class label 2 is 7: a model with class names labels its classes 0 to 2",
             at - 8);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* the file cut before the names' size */
    memcpy(f, good, at + 2);
    hog_put_u32(f + 28, 3);
    snprintf(want, sizeof(want), "truncated: the class names' size at byte %zu is past the file's %zu bytes", at,
             at + 2);
    expect_refused(f, at + 2, HOG_ETRUNCATED, want);
    free(f);
    free(good);
}

/* The bytes of a saved model with feature scales (trained with the
 * normalized update): saved's 4 features, or saved_named's 2 features and
 * 3 named classes; version 3, the sections word after the labels. */
static uint8_t *saved_scaled(int named, size_t *len)
{
    char path[256], err[256] = "";
    size_t n;
    uint8_t *plain = named ? saved_named(&n) : saved(&n);
    free(plain);
    hog_model *m = NULL;
    cr_assert_eq(hog_model_load(path_of(path, named ? "named.hog" : "m.hog"), &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(m->scales, "a version-%d file has none", named ? 2 : 1);
    m->scales = calloc(m->dim, sizeof(hog_weight));
    for (uint64_t j = 0; j < m->dim; j++) /* feature 1's only value seen: 0 */
        hog_w_store(&m->scales[j], j == 1 ? 0.0f : 0.25f * (float)(j + 1));
    cr_assert_eq(hog_model_save(m, path_of(path, "scaled.hog")), 0);
    hog_model_free(m);
    return read_bytes(path, len);
}

/* The offset of the sections word in a file of `classes` classes. */
static size_t sections_at(const uint8_t *f, uint32_t classes)
{
    return 32 + hog_get_u32(f + 12) + 8ull * classes;
}

Test(model_file, feature_scales_round_trip_as_version_3)
{
    for (int named = 0; named < 2; named++) {
        size_t len, plain_len;
        free(named ? saved_named(&plain_len) : saved(&plain_len));
        uint8_t *f = saved_scaled(named, &len);
        const uint32_t classes = named ? 3 : 2, dim = named ? 2 : 4;
        cr_assert_eq(hog_get_u32(f + 8), 3);
        const size_t at = sections_at(f, classes);
        cr_assert_eq(hog_get_u32(f + at), named ? 3u : 2u, "bit 0: names, bit 1: scales");
        cr_assert_eq(len, plain_len + 4 + 4 * dim, "the sections word and a f32 per feature, nothing else");
        const size_t scales_at = at + 4 + (named ? 4 + hog_get_u32(f + at + 4) : 0); /* after the names */
        cr_assert_eq(scales_at + 4 * dim + 4 * (classes == 3 ? 3 : 1) * (1 + dim) + 4, len,
                     "then the bias, the weights and the CRC");
        if (named)
            cr_assert_eq(memcmp(f + at + 4 + 4, "setosa", 7), 0, "the names right after the sections word");
        for (uint32_t j = 0; j < dim; j++) {
            float s;
            memcpy(&s, f + scales_at + 4 * j, 4);
            cr_assert_eq(s, j == 1 ? 0.0f : 0.25f * (float)(j + 1), "feature %u: %g", j, (double)s);
        }
        char path[256], err[256] = "";
        hog_model *m = NULL;
        cr_assert_eq(hog_model_load(path_of(path, "scaled.hog"), &m, err, sizeof(err)), 0, "%s", err);
        cr_assert_not_null(m->scales);
        for (uint32_t j = 0; j < dim; j++)
            cr_assert_eq(hog_w_load(&m->scales[j]), j == 1 ? 0.0f : 0.25f * (float)(j + 1));
        if (named)
            cr_assert_str_eq(hog_model_class_name(m, 1), "versicolor");
        /* and saved again, the same bytes */
        cr_assert_eq(hog_model_save(m, path_of(path, "again.hog")), 0);
        size_t again_len;
        uint8_t *again = read_bytes(path, &again_len);
        cr_assert_eq(again_len, len);
        cr_assert_eq(memcmp(again, f, len), 0);
        free(again);
        hog_model_free(m);
        free(f);
    }
}

Test(model_file, crafted_feature_scales_are_refused_with_their_byte)
{
    size_t len;
    uint8_t *good = saved_scaled(0, &len);
    uint8_t *f = malloc(len);
    const size_t at = sections_at(good, 2), scales_at = at + 4;
    char want[256];

    /* a section this build does not know */
    memcpy(f, good, len);
    hog_put_u32(f + at, 2u | 8u);
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: sections is 0xa, expected bits 0 (class names), 1 (feature scales) "
             "and 2 (feature names) only", at);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* a negative scale, and one not finite */
    static const float bad[2] = {-0.5f, INFINITY};
    for (int i = 0; i < 2; i++) {
        memcpy(f, good, len);
        memcpy(f + scales_at + 4 * 2, &bad[i], 4);
        hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
        snprintf(want, sizeof(want), "byte %zu: the scale of feature 2 is %g, expected a finite value >= 0",
                 scales_at + 8, (double)bad[i]);
        expect_refused(f, len, HOG_ECORRUPT, want);
    }

    /* scales in a model whose metadata says it was trained without them */
    memcpy(f, good, len);
    char *meta = strstr((char *)f + 32, "\nnormalized 1\n"); /* the metadata ends before the labels' zeros */
    cr_assert_not_null(meta);
    meta[12] = '0';
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "byte %zu: sections has feature scales (bit 1), the metadata says normalized 0: "
             "scales are the normalized update's", at);
    expect_refused(f, len, HOG_ECORRUPT, want);

    /* the sections word cut off; the scales' bytes past the file's */
    snprintf(want, sizeof(want), "truncated: the sections word at byte %zu is past the file's %zu bytes", at, at + 2);
    expect_refused(good, at + 2, HOG_ETRUNCATED, want);
    memcpy(f, good, len);
    hog_put_u64(f + 16, 1ull << 39); /* features: scales and weights of 2^39 each */
    hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4));
    snprintf(want, sizeof(want), "truncated: the header implies %llu bytes, the file has %zu",
             (unsigned long long)(len + 8 * ((1ull << 39) - 4)), len);
    expect_refused(f, len, HOG_ETRUNCATED, want);
    /* bit 1 set in a version-3 file without the scales' bytes */
    size_t plain_len;
    uint8_t *plain = saved(&plain_len);
    memcpy(f, plain, at);
    hog_put_u32(f + 8, 3);
    hog_put_u32(f + at, 2);
    memcpy(f + at + 4, plain + at, plain_len - at);
    hog_put_u32(f + plain_len, hog_crc32(0, f, plain_len));
    snprintf(want, sizeof(want), "truncated: the header implies %zu bytes, the file has %zu", plain_len + 4 + 16,
             plain_len + 4);
    expect_refused(f, plain_len + 4, HOG_ETRUNCATED, want);
    free(plain);
    free(f);
    free(good);
}

/* The bytes of a saved logistic model of 4 features (saved's weights)
 * whose training text named features 0 and 2, two names hashing to 2. */
static uint8_t *saved_fnamed(size_t *len)
{
    hog_model *m = model4();
    hog_fnames set = {0};
    cr_assert_eq(hog_fnames_add(&set, 2, "b", 1, '^', "x", 1), 0);
    cr_assert_eq(hog_fnames_add(&set, 0, "age", 3, 0, "", 0), 0);
    cr_assert_eq(hog_fnames_add(&set, 2, "a", 1, '^', "y", 1), 0);
    cr_assert_eq(hog_fnames_add(&set, 2, "b^x", 3, 0, "", 0), 0); /* there already */
    cr_assert_eq(hog_fnames_join(&set, 4, &m->fnames), 0);
    hog_fnames_free(&set);
    char path[256];
    cr_assert_eq(hog_model_save(m, path_of(path, "fnamed.hog")), 0);
    hog_model_free(m);
    return read_bytes(path, len);
}

/* Feature names are version 3's sections bit 2: a u64 size, then the
 * count and (index, name) entries; a model without them stays version 1,
 * byte for byte the model it was. */
Test(model_file, feature_names_round_trip_as_version_3_section_bit_2)
{
    size_t len, plain_len;
    uint8_t *f = saved_fnamed(&len), *plain = saved(&plain_len);
    cr_assert_eq(hog_get_u32(plain + 8), 1, "a model without names is version 1");
    cr_assert_eq(hog_get_u32(f + 8), 3);
    const size_t at = 32 + hog_get_u32(f + 12) + 8 * 2; /* the sections word */
    cr_assert_eq(hog_get_u32(f + at), 4, "sections bit 2 alone");
    static const uint8_t want[] = {2, 0, 0, 0, /* the count */
                                   0, 0, 0, 0, 'a', 'g', 'e', 0,
                                   2, 0, 0, 0, 'a', '^', 'y', '|', 'b', '^', 'x', 0};
    cr_assert_eq(hog_get_u64(f + at + 4), sizeof(want));
    cr_assert_eq(memcmp(f + at + 12, want, sizeof(want)), 0,
                 "the count, then (index, name) entries, the names of 2 sorted and joined");
    cr_assert_eq(len, plain_len + 4 + 8 + sizeof(want), "the weights as the plain model's after them");
    cr_assert_eq(memcmp(f + at + 12 + sizeof(want), plain + at, plain_len - at - 4), 0);
    char path[256], again[256], err[256] = "";
    hog_model *m = NULL;
    cr_assert_eq(hog_model_load(path_of(path, "fnamed.hog"), &m, err, sizeof(err)), 0, "%s", err);
    cr_assert_str_eq(hog_model_feature_name(m, 0), "age");
    cr_assert_str_eq(hog_model_feature_name(m, 2), "a^y|b^x");
    cr_assert_null(hog_model_feature_name(m, 1));
    cr_assert_null(hog_model_feature_name(m, 4));
    cr_assert_null(hog_model_feature_name(NULL, 0));
    cr_assert_eq(hog_model_named_features(m), 2);
    cr_assert_eq(hog_model_named_feature(m, 1), 2);
    cr_assert_eq(hog_model_named_feature(m, 2), UINT64_MAX);
    cr_assert_float_eq(hog_w_load(&m->w[3]), 0.5f, 0);
    cr_assert_eq(hog_model_save(m, path_of(again, "again.hog")), 0);
    size_t again_len;
    uint8_t *g = read_bytes(again, &again_len);
    cr_assert(again_len == len && memcmp(f, g, len) == 0, "saved again, the same bytes");
    hog_model_free(m);
    free(g);
    free(plain);
    free(f);
}

/* Each claim of the feature names is checked at load, before the model is
 * made, the message naming the byte. */
Test(model_file, crafted_feature_names_are_refused_with_their_byte)
{
    size_t len;
    uint8_t *good = saved_fnamed(&len), *f = malloc(len);
    const size_t at = 32 + hog_get_u32(good + 12) + 8 * 2 + 4; /* fnames_bytes */
    const size_t names = at + 8, e0 = names + 4, e1 = e0 + 8; /* the count, the entries */
    char want[256];
#define RESEAL() hog_put_u32(f + len - 4, hog_crc32(0, f, len - 4))

    memcpy(f, good, len);
    hog_put_u64(f + at, 9);
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: fnames_bytes is 9, not between 10 and the %zu bytes the file has after it",
             at, len - at - 8);
    expect_refused(f, len, HOG_ECORRUPT, want);
    hog_put_u64(f + at, UINT64_MAX - 4); /* a size that would wrap an offset */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: fnames_bytes is %llu, not between 10 and the %zu bytes the file has "
             "after it", at, (unsigned long long)(UINT64_MAX - 4), len - at - 8);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    hog_put_u32(f + names, 0);
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: 0 feature names, expected 1 to 3 (24 bytes, 4 features)", names);
    expect_refused(f, len, HOG_ECORRUPT, want);
    hog_put_u32(f + names, 1000000);
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: 1000000 feature names, expected 1 to 3 (24 bytes, 4 features)", names);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    hog_put_u32(f + e1, 4); /* past the features */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: feature name 1 is of feature 4, past the 4 features", e1);
    expect_refused(f, len, HOG_ECORRUPT, want);
    hog_put_u32(f + e1, 0); /* not after entry 0's */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: feature name 1 is of feature 0, not after 0: indices are strictly "
             "ascending", e1);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    f[e0 + 4] = '\0'; /* "age" empty */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: feature name 0 is empty", e0 + 4);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    f[e1 + 4 + 7] = 'z'; /* the last NUL gone */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: feature name 1 runs past the names' end at byte %zu (each ends with a NUL)",
             e1 + 4, e1 + 12);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    hog_put_u32(f + names, 1); /* one entry announced, two there */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: 12 bytes after the last of 1 feature names", e1);
    expect_refused(f, len, HOG_ECORRUPT, want);

    memcpy(f, good, len);
    hog_put_u32(f + at - 4, 0x4 | 0x8); /* an unknown section bit beside it */
    RESEAL();
    snprintf(want, sizeof(want), "byte %zu: sections is 0xc, expected bits 0 (class names), 1 (feature scales) and 2 "
             "(feature names) only", at - 4);
    expect_refused(f, len, HOG_ECORRUPT, want);
    /* the size cut off */
    snprintf(want, sizeof(want), "truncated: the feature names' size at byte %zu is past the file's %zu bytes", at,
             at + 4);
    expect_refused(good, at + 4, HOG_ETRUNCATED, want);
#undef RESEAL
    free(f);
    free(good);
}
