/* fuzz_etl_ratings_hgr.c: libFuzzer target for the binary ratings file (.hgr): open, every rating and both names of each, each name looked up; its mutator resizes the sections with the header's counts and recomputes the fingerprint and both CRCs. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "etl/etl.h"

#include "fuzz_sections.h"

/* The layout etl_ratings_hgr.c writes: a 64-byte header, the triples, then
 * the user and the item name tables, names padded to 4 bytes. */
#define HEAD 64u

static const fuzz_field fields[] = {{8, 4}, {12, 4}, {16, 8}, {16, 8}, {24, 4}, {28, 4}, {32, 8}, {40, 8}};

static uint64_t pad4(uint64_t n)
{
    return (n + 3) & ~(uint64_t)3;
}

static void layout(const uint8_t *d, fuzz_layout *l)
{
    uint64_t n = hog_get_u64(d + 16), users = hog_get_u32(d + 24), items = hog_get_u32(d + 28);
    uint64_t ulen = hog_get_u64(d + 32), ilen = hog_get_u64(d + 40);
    fuzz_section(l, FUZZ_HEADER, HEAD, -1);
    /* a triple's ids and rating are all 4 bytes: ids mostly, the rating a third of the time */
    fuzz_section(l, FUZZ_U32, 12 * n, -1);
    fuzz_section(l, FUZZ_U32, 4 * (users + 1), -1);
    fuzz_section(l, FUZZ_NAMES, pad4(ulen), -1);
    fuzz_section(l, FUZZ_U32, 4 * (items + 1), -1);
    fuzz_section(l, FUZZ_NAMES, pad4(ilen), -1);
}

/* The fingerprint (hog_ratings_fingerprint) and the two CRCs, where the
 * header places the triples and names inside the file. */
static void reseal(uint8_t *d, size_t size)
{
    fuzz_layout l;
    memset(&l, 0, sizeof(l));
    layout(d, &l);
    if (fuzz_inside(&l, 5, size) && hog_get_u64(d + 32) <= l.len[3] && hog_get_u64(d + 40) <= l.len[5]) {
        uint32_t hi = hog_crc32(0, d + l.off[1], (size_t)l.len[1]);
        uint32_t lo = hog_crc32(0, d + l.off[3], (size_t)hog_get_u64(d + 32));
        lo = hog_crc32(lo, d + l.off[5], (size_t)hog_get_u64(d + 40));
        hog_put_u64(d + 48, (uint64_t)hi << 32 | lo);
    }
    hog_put_u32(d + 56, hog_crc32(0, d + HEAD, size - HEAD));
    hog_put_u32(d + 60, hog_crc32(0, d, 60));
}

static const fuzz_format format = {"HOGRATE", HEAD, fields, HOG_ARRAY_LEN(fields), layout, reseal};

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    hog_rng r = {seed ^ 0x5eedu};
    /* a rating made NaN, infinite or extreme (the sections see only ids) */
    if (size >= HEAD && memcmp(data, format.magic, 8) == 0 && hog_rng_below(&r, 4) == 0) {
        uint64_t n = hog_get_u64(data + 16);
        if (n && HEAD + 12 * HOG_MIN(n, (uint64_t)size) <= size) {
            float f = fuzz_float(&r);
            memcpy(data + HEAD + 12 * (hog_rng_next(&r) % n) + 8, &f, 4);
            reseal(data, size);
            return size;
        }
    }
    return fuzz_sectioned_mutate(&format, data, size, max_size, seed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The magic sends a file to the binary reader; the rest is text, which
     * fuzz_etl_reader reads (its reader's setup would cost more here than
     * all of the binary file's checks). */
    if (size < 8 || memcmp(data, HOG_HGR_MAGIC, 8) != 0)
        return 0;
    const char *path = fuzz_file(data, size);
    hog_ratings *r = NULL;
    char err[512] = "";
    int rc = hog_ratings_open(path, 0, &r, err, sizeof(err));
    if (rc < 0) {
        FUZZ_CHECK(r == NULL);
        FUZZ_CHECK(rc == HOG_EVERSION || rc == HOG_ETRUNCATED || rc == HOG_ECHECKSUM || rc == HOG_ECORRUPT ||
                   rc == HOG_EEMPTY || rc == -ENOMEM);
        fuzz_check_message(err, path);
        fuzz_check_fds();
        return 0;
    }
    hog_ratings_info info;
    hog_ratings_get_info(r, &info);
    FUZZ_CHECK(info.ratings > 0);
    for (uint64_t i = 0; i < info.ratings; i++) {
        uint32_t user, item;
        float rating;
        hog_ratings_get(r, i, &user, &item, &rating);
        FUZZ_CHECK(user < info.users && item < info.items);
        FUZZ_CHECK(hog_ratings_user_name(r, user) != NULL && hog_ratings_item_name(r, item) != NULL);
        FUZZ_CHECK(info.has_ratings ? isfinite(rating) : isnan(rating));
        if (info.has_ratings)
            FUZZ_CHECK(rating >= info.min && rating <= info.max);
    }
    FUZZ_CHECK(hog_ratings_user_name(r, info.users) == NULL && hog_ratings_item_name(r, info.items) == NULL);
    /* each name finds its own id */
    for (uint32_t u = 0; u < info.users; u++) {
        const char *s = hog_ratings_user_name(r, u);
        FUZZ_CHECK(hog_idmap_find(&r->users, s, strlen(s)) == u);
    }
    for (uint32_t i = 0; i < info.items; i++) {
        const char *s = hog_ratings_item_name(r, i);
        FUZZ_CHECK(hog_idmap_find(&r->items, s, strlen(s)) == i);
    }
    FUZZ_CHECK(info.binary && info.fingerprint == hog_ratings_fingerprint(r));
    hog_ratings_close(r);
    fuzz_check_fds();
    return 0;
}
