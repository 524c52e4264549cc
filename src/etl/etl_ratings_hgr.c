/* etl_ratings_hgr.c: the binary ratings file (.hgr): mapped and checked at open, written atomically. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>

#include "etl.h"

/*
 * Binary ratings file (.hgr), version 1. Little-endian.
 *
 * Why a format of its own and not rows of a .hgd: a rating stored as a .hgd
 * row would be a row offset, two indices, two values and a label (24 bytes
 * where a triple needs 12), in 4096-byte aligned blocks, and .hgd has no
 * place for the user and item names that predictions are asked by. This
 * file is the triples as the trainer holds them in memory, so it is mapped
 * and used in place, plus the two name tables.
 *
 *   offset  bytes        field
 *   0       8            magic "HOGRATE\0"
 *   8       4            version (1)
 *   12      4            flags: bit 0 set when the triples have ratings
 *                        (a pairs file has not); other bits refused
 *   16      8            n, triples
 *   24      4            users
 *   28      4            items
 *   32      8            U, bytes of user names (NUL-terminated, back to back)
 *   40      8            I, bytes of item names
 *   48      8            fingerprint (hog_ratings_fingerprint)
 *   56      4            CRC-32 of every byte after the header
 *   60      4            CRC-32 of bytes 0..59
 *   64      12 n         triples: u32 user, u32 item, f32 rating (NaN in a pairs file)
 *   ...     4 (users+1)  u32 offset of each user name in the user names, then U
 *   ...     U + pad      user names, zero-padded to a multiple of 4
 *   ...     4 (items+1)  item name offsets
 *   ...     I + pad      item names, zero-padded to a multiple of 4
 *
 * Everything is checked at open: sizes against the file size, both CRCs,
 * name offsets increasing and each name NUL-terminated and unique, ids in
 * range, ratings finite.
 */
#define HGR_VERSION 1u
#define HGR_HEAD 64u
#define HGR_HAS_RATINGS 1u
#define HGR_MAX_RATINGS (1ull << 40)
#define HGR_MAX_NAMES (UINT32_MAX - 2ull) /* hog_idmap's most names */

static uint64_t pad4(uint64_t n)
{
    return (n + 3) & ~(uint64_t)3;
}

uint64_t hog_ratings_fingerprint(const hog_ratings *r)
{
    uint32_t hi = hog_crc32(0, r->t, r->info.ratings * sizeof(hog_mf_triple));
    uint32_t lo = hog_crc32(0, r->users.names, r->users.names_len);
    lo = hog_crc32(lo, r->items.names, r->items.names_len);
    return (uint64_t)hi << 32 | lo;
}

/* Checks one name table at p (offsets, then names) of n names and
 * names_len bytes, and points m at it. Returns 0 or HOG_ECORRUPT. */
static int map_names(hog_idmap *m, const unsigned char *p, uint32_t n, uint64_t names_len)
{
    m->n = n;
    m->off = (uint32_t *)(uintptr_t)p;
    m->names = (char *)(uintptr_t)(p + 4ull * (n + 1));
    m->names_len = names_len;
    m->owned = 0;
    return hog_idmap_check(m);
}

int hog_hgr_open(hog_ratings *r, const char *path, int fd, uint64_t size, char *err, size_t err_len)
{
    if (size < HGR_HEAD)
        return hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %llu bytes, the header alone is %u", path,
                        (unsigned long long)size, HGR_HEAD);
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: mmap: %s", path, hog_strerror(rc));
    }
    r->map = map;
    r->map_len = size;
    const unsigned char *h = map;
    if (hog_crc32(0, h, 60) != hog_get_u32(h + 60))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: header checksum mismatch: the file is corrupted", path);
    uint32_t version = hog_get_u32(h + 8), flags = hog_get_u32(h + 12);
    if (version != HGR_VERSION)
        return hog_fail(HOG_EVERSION, err, err_len, "%s: ratings file version %u, this build reads version %u", path,
                        version, HGR_VERSION);
    if (flags & ~HGR_HAS_RATINGS)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unknown flags 0x%x", path, flags);
    uint64_t n = hog_get_u64(h + 16), ulen = hog_get_u64(h + 32), ilen = hog_get_u64(h + 40);
    uint32_t users = hog_get_u32(h + 24), items = hog_get_u32(h + 28);
    /* Each size against its limit, before any is multiplied: the length
     * check below then bounds them all by the file's bytes. */
    const struct {
        const char *field;
        uint64_t v, max;
    } sizes[] = {{"ratings", n, HGR_MAX_RATINGS},          {"users", users, HGR_MAX_NAMES},
                 {"items", items, HGR_MAX_NAMES},          {"user_name_bytes", ulen, UINT32_MAX},
                 {"item_name_bytes", ilen, UINT32_MAX}};
    for (size_t i = 0; i < HOG_ARRAY_LEN(sizes); i++)
        if (sizes[i].v > sizes[i].max)
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: header field %s is %llu, more than %llu", path,
                            sizes[i].field, (unsigned long long)sizes[i].v, (unsigned long long)sizes[i].max);
    uint64_t want = HGR_HEAD + 12 * n + 4ull * (users + 1) + pad4(ulen) + 4ull * (items + 1) + pad4(ilen);
    if (size != want)
        return hog_fail(size < want ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                        "%s: %s: the header implies %llu bytes, the file has %llu", path,
                        size < want ? "truncated" : "trailing bytes", (unsigned long long)want,
                        (unsigned long long)size);
    if (hog_crc32(0, h + HGR_HEAD, size - HGR_HEAD) != hog_get_u32(h + 56))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the file is corrupted", path);
    const unsigned char *p = h + HGR_HEAD + 12 * n;
    int rc = map_names(&r->users, p, users, ulen);
    if (rc == 0)
        rc = map_names(&r->items, p + 4ull * (users + 1) + pad4(ulen), items, ilen);
    if (rc == -ENOMEM)
        return hog_fail(rc, err, err_len, "%s: out of memory", path);
    if (rc < 0)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: a name table is malformed", path);
    r->t = (const hog_mf_triple *)(const void *)(h + HGR_HEAD);
    r->info.ratings = n;
    r->info.has_ratings = (flags & HGR_HAS_RATINGS) != 0;
    r->info.binary = 1;
    for (uint64_t i = 0; i < n; i++) {
        const hog_mf_triple *t = &r->t[i];
        if (t->user >= users || t->item >= items || (r->info.has_ratings && !isfinite(t->rating)))
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: triple %llu is out of range (user %u, item %u, rating %g)",
                            path, (unsigned long long)i, t->user, t->item, (double)t->rating);
        if (!r->info.has_ratings && !isnan(t->rating))
            return hog_fail(HOG_ECORRUPT, err, err_len,
                            "%s: triple %llu has rating %g in a file of pairs (flags bit 0 clear), where it is NaN",
                            path, (unsigned long long)i, (double)t->rating);
    }
    if (n == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "%s: no ratings", path);
    r->info.fingerprint = hog_get_u64(h + 48);
    if (hog_ratings_fingerprint(r) != r->info.fingerprint)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: the fingerprint does not match the contents", path);
    return 0;
}

static int write_names(hog_atomic_file *f, uint32_t *crc, const hog_idmap *m)
{
    static const char zero[4] = {0};
    uint32_t first = 0;
    const uint32_t *off = m->n ? m->off : &first;
    *crc = hog_crc32(*crc, off, 4ull * (m->n + 1));
    int rc = hog_atomic_write(f, off, 4ull * (m->n + 1));
    size_t pad = (size_t)(pad4(m->names_len) - m->names_len);
    if (rc == 0 && m->names_len) {
        *crc = hog_crc32(*crc, m->names, m->names_len);
        rc = hog_atomic_write(f, m->names, m->names_len);
    }
    if (rc == 0 && pad) {
        *crc = hog_crc32(*crc, zero, pad);
        rc = hog_atomic_write(f, zero, pad);
    }
    return rc;
}

int hog_ratings_save(const hog_ratings *r, const char *path)
{
    const hog_ratings_info *in = &r->info;
    unsigned char h[HGR_HEAD] = {0};
    memcpy(h, HOG_HGR_MAGIC, 8);
    hog_put_u32(h + 8, HGR_VERSION);
    hog_put_u32(h + 12, in->has_ratings ? HGR_HAS_RATINGS : 0);
    hog_put_u64(h + 16, in->ratings);
    hog_put_u32(h + 24, r->users.n);
    hog_put_u32(h + 28, r->items.n);
    hog_put_u64(h + 32, r->users.names_len);
    hog_put_u64(h + 40, r->items.names_len);
    hog_put_u64(h + 48, in->fingerprint);
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    if (rc < 0)
        return rc;
    /* The body first (its CRC goes in the header), then the header. */
    uint32_t crc = 0;
    rc = hog_atomic_pwrite(&f, h, HGR_HEAD, 0);
    if (rc == 0) {
        crc = hog_crc32(crc, r->t, 12 * in->ratings);
        rc = hog_atomic_write(&f, r->t, 12 * in->ratings);
    }
    if (rc == 0)
        rc = write_names(&f, &crc, &r->users);
    if (rc == 0)
        rc = write_names(&f, &crc, &r->items);
    if (rc == 0) {
        hog_put_u32(h + 56, crc);
        hog_put_u32(h + 60, hog_crc32(0, h, 60));
        rc = hog_atomic_pwrite(&f, h, HGR_HEAD, 0);
    }
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}
