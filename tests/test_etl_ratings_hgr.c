/* test_etl_ratings_hgr.c: crafted binary ratings files (.hgr), their checksums made right, are refused with the field, its value and the limit: what the fuzzer found and every size field. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("hgr");
}

TestSuite(etl_ratings_hgr, .init = setup, .fini = scratch_remove);

/* The bytes of a .hgr saved from text (pairs allowed or not). */
static uint8_t *saved(const char *text, int pairs, size_t *len)
{
    char txt[256], hgr[256], err[512] = "";
    write_bytes(path_of(txt, "r.txt"), text, strlen(text));
    hog_ratings *r = NULL;
    cr_assert_eq(hog_ratings_open(txt, pairs, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_ratings_save(r, path_of(hgr, "r.hgr")), 0);
    hog_ratings_close(r);
    return read_bytes(hgr, len);
}

/* What a writer would have put in the header for these bytes: the
 * fingerprint, the body's CRC and the header's CRC. */
static void reseal(uint8_t *f, size_t len)
{
    uint64_t n = hog_get_u64(f + 16), users = hog_get_u32(f + 24), ulen = hog_get_u64(f + 32),
             ilen = hog_get_u64(f + 40);
    const uint8_t *names = f + 64 + 12 * n + 4 * (users + 1);
    const uint8_t *inames = names + ((ulen + 3) & ~3ull) + 4 * ((uint64_t)hog_get_u32(f + 28) + 1);
    uint32_t lo = hog_crc32(hog_crc32(0, names, ulen), inames, ilen);
    hog_put_u64(f + 48, (uint64_t)hog_crc32(0, f + 64, 12 * n) << 32 | lo);
    hog_put_u32(f + 56, hog_crc32(0, f + 64, len - 64));
    hog_put_u32(f + 60, hog_crc32(0, f, 60));
}

/* Writes the crafted bytes and expects open to fail with rc and, after the
 * path, the message want. */
static void expect_refused(const uint8_t *f, size_t len, int rc, const char *want)
{
    char path[256], err[512] = "", full[600];
    write_bytes(path_of(path, "crafted.hgr"), f, len);
    hog_ratings *r = NULL;
    cr_assert_eq(hog_ratings_open(path, 1, &r, err, sizeof(err)), rc, "%s", err);
    cr_assert_null(r);
    snprintf(full, sizeof(full), "%s: %s", path, want);
    cr_assert_str_eq(err, full);
}

/* Found by the fuzzer: a pairs file (flags bit 0 clear) whose triples hold
 * ratings was read as pairs with ratings, which its readers take for
 * missing. */
Test(etl_ratings_hgr, a_pairs_file_with_a_rating_is_refused)
{
    size_t len;
    uint8_t *f = saved("u1 i1\nu2 i1\nu1 i2\n", 1, &len);
    cr_assert_eq(hog_get_u32(f + 12), 0, "a pairs file");
    float four = 4.0f;
    memcpy(f + 64 + 12 + 8, &four, 4); /* the second triple's rating */
    reseal(f, len);
    expect_refused(f, len, HOG_ECORRUPT,
                   "triple 1 has rating 4 in a file of pairs (flags bit 0 clear), where it is NaN");
    free(f);
}

/* Every size field of the header past its limit, the checksums right:
 * refused by name, value and limit before anything is read or mapped
 * beyond the header. */
Test(etl_ratings_hgr, each_size_field_past_its_limit_is_named)
{
    static const struct {
        unsigned off, width;
        uint64_t v;
        const char *want;
    } c[] = {
        {16, 8, (1ull << 40) + 1, "header field ratings is 1099511627777, more than 1099511627776"},
        {16, 8, UINT64_MAX, "header field ratings is 18446744073709551615, more than 1099511627776"},
        {24, 4, UINT32_MAX - 1, "header field users is 4294967294, more than 4294967293"},
        {28, 4, UINT32_MAX, "header field items is 4294967295, more than 4294967293"},
        {32, 8, 1ull << 32, "header field user_name_bytes is 4294967296, more than 4294967295"},
        {40, 8, 1ull << 63, "header field item_name_bytes is 9223372036854775808, more than 4294967295"},
    };
    size_t len;
    uint8_t *good = saved("alice film 4\nbob film 3\nalice show 5\n", 0, &len);
    uint8_t *f = malloc(len);
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        memcpy(f, good, len);
        if (c[i].width == 8)
            hog_put_u64(f + c[i].off, c[i].v);
        else
            hog_put_u32(f + c[i].off, (uint32_t)c[i].v);
        hog_put_u32(f + 60, hog_crc32(0, f, 60));
        expect_refused(f, len, HOG_ECORRUPT, c[i].want);
    }
    /* within the limits but past the file's bytes: the length it implies */
    memcpy(f, good, len);
    hog_put_u32(f + 24, 1000);
    hog_put_u32(f + 60, hog_crc32(0, f, 60));
    char want[128];
    snprintf(want, sizeof(want), "truncated: the header implies %zu bytes, the file has %zu", len + 4 * (1000 - 2),
             len);
    expect_refused(f, len, HOG_ETRUNCATED, want);
    free(f);
    free(good);
}

/* The untouched file opens: the crafting above changed only what it says. */
Test(etl_ratings_hgr, the_saved_file_opens)
{
    size_t len;
    uint8_t *f = saved("alice film 4\nbob film 3\nalice show 5\n", 0, &len);
    reseal(f, len);
    char path[256], err[512] = "";
    write_bytes(path_of(path, "ok.hgr"), f, len);
    hog_ratings *r = NULL;
    cr_assert_eq(hog_ratings_open(path, 0, &r, err, sizeof(err)), 0, "%s", err);
    hog_ratings_info info;
    hog_ratings_get_info(r, &info);
    cr_assert_eq(info.ratings, 3);
    cr_assert_eq(info.users, 2);
    cr_assert_eq(info.items, 2);
    hog_ratings_close(r);
    free(f);
}
