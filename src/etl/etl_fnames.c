/* etl_fnames.c: feature names: the distinct (index, name) pairs text gives its features, collected per parser thread, merged, joined one per index, and their bytes in a file. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "etl.h"

/*
 * A set is collected as the text is parsed: each parser thread keeps its
 * own (hog_rows.fnames), the pipeline merges them into the builder's when
 * the text is read, and the builder joins the result for the data set:
 * one entry per named index, ascending, the names of an index that several
 * names hash to sorted (strcmp) and joined by HOG_FNAMES_SEP. Sorting
 * makes the joined form independent of which thread saw a name first, so
 * a file gives the same names on any number of threads.
 *
 * The table is open addressing, at most half full, each slot holding its
 * pair's index, name length and name offset, so that a name seen before
 * (most of a parser's lookups) costs one slot and one compare of its
 * bytes, not loads from the pair arrays too. The slot comes from the
 * index alone, mixed: the index is already a hash of the name for hashed
 * features, and the names of one index are told apart by comparing them.
 */
struct hog_fname_slot {
    uint32_t index;
    uint32_t len; /* 0: empty (names are not) */
    uint64_t off;
};

static inline uint64_t name_len(const hog_fnames *f, uint32_t i)
{
    return f->off[i + 1] - f->off[i] - 1;
}

static inline uint32_t slot_of(uint32_t index, uint32_t mask)
{
    return (uint32_t)hog_mix64(index + 0x9e3779b97f4a7c15ULL) & mask;
}

/* Whether slot s holds (index, a sep b), n bytes. */
static inline int slot_is(const hog_fnames *f, const struct hog_fname_slot *s, uint32_t index, size_t n,
                          const char *a, size_t alen, char sep, const char *b, size_t blen)
{
    if (s->index != index || s->len != n)
        return 0;
    const char *t = f->text + s->off;
    return memcmp(t, a, alen) == 0 && (!sep || t[alen] == sep) && memcmp(t + n - blen, b, blen) == 0;
}

static int table_grow(hog_fnames *f)
{
    const uint32_t cap = f->slots_cap ? 2 * f->slots_cap : 1024;
    struct hog_fname_slot *s = hog_calloc(cap, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (uint32_t i = 0; i < f->n; i++) {
        uint32_t h = slot_of(f->index[i], cap - 1);
        while (s[h].len)
            h = (h + 1) & (cap - 1);
        s[h] = (struct hog_fname_slot){f->index[i], (uint32_t)name_len(f, i), f->off[i]};
    }
    hog_free(f->slots);
    f->slots = s;
    f->slots_cap = cap;
    return 0;
}

int hog_fnames_add(hog_fnames *f, uint32_t index, const char *a, size_t alen, char sep, const char *b, size_t blen)
{
    const size_t n = alen + (sep ? 1 : 0) + blen;
    if (n == 0)
        return 0;
    if (f->slots_cap) {
        const uint32_t mask = f->slots_cap - 1;
        for (uint32_t h = slot_of(index, mask); f->slots[h].len; h = (h + 1) & mask)
            if (slot_is(f, &f->slots[h], index, n, a, alen, sep, b, blen))
                return 0;
    }
    if (n > HOG_FEATURE_NAME_MAX || f->n >= HOG_FEATURE_NAMES_MAX) {
        f->dropped++;
        return 0;
    }
    if (2ull * (f->n + 1) > f->slots_cap) {
        int rc = table_grow(f);
        if (rc < 0)
            return rc;
    }
    void *p = f->index;
    int rc = hog_array_grow(&p, &f->cap, (size_t)f->n + 1, sizeof(uint32_t), 256);
    f->index = p;
    if (rc == 0) {
        p = f->off;
        rc = hog_array_grow(&p, &f->off_cap, (size_t)f->n + 2, sizeof(uint64_t), 256);
        f->off = p;
    }
    if (rc == 0) {
        p = f->text;
        rc = hog_array_grow(&p, &f->text_cap, (size_t)f->text_len + n + 1, 1, 4096);
        f->text = p;
    }
    if (rc < 0)
        return rc;
    char *t = f->text + f->text_len;
    memcpy(t, a, alen);
    if (sep)
        t[alen] = sep;
    memcpy(t + n - blen, b, blen);
    t[n] = '\0';
    f->off[f->n] = f->text_len;
    f->index[f->n] = index;
    f->text_len += n + 1;
    f->off[f->n + 1] = f->text_len;
    uint32_t h = slot_of(index, f->slots_cap - 1);
    while (f->slots[h].len)
        h = (h + 1) & (f->slots_cap - 1);
    f->slots[h] = (struct hog_fname_slot){index, (uint32_t)n, f->off[f->n]};
    f->n++;
    return 0;
}

int hog_fnames_merge(hog_fnames *dst, const hog_fnames *src, int split)
{
    int rc = 0;
    for (uint32_t i = 0; i < src->n && rc == 0; i++) {
        const char *s = src->text + src->off[i], *end = s + name_len(src, i);
        while (rc == 0) {
            const char *bar = split ? memchr(s, HOG_FNAMES_SEP, (size_t)(end - s)) : NULL;
            const char *e = bar ? bar : end;
            rc = hog_fnames_add(dst, src->index[i], s, (size_t)(e - s), 0, "", 0);
            if (!bar)
                break;
            s = bar + 1;
        }
    }
    dst->dropped += src->dropped;
    return rc;
}

typedef struct fname_ref {
    uint32_t index;
    const char *name;
} fname_ref;

static int ref_order(const void *x, const void *y)
{
    const fname_ref *a = x, *b = y;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return strcmp(a->name, b->name);
}

int hog_fnames_join(const hog_fnames *f, uint64_t below, hog_fnames *out)
{
    memset(out, 0, sizeof(*out));
    out->dropped = f->dropped;
    if (f->n == 0)
        return 0;
    fname_ref *r = hog_malloc((size_t)f->n * sizeof(*r));
    out->index = hog_malloc((size_t)f->n * sizeof(uint32_t));
    out->off = hog_malloc(((size_t)f->n + 1) * sizeof(uint64_t));
    out->text = hog_malloc((size_t)f->text_len); /* as many bytes: a separator takes a NUL's place */
    if (!r || !out->index || !out->off || !out->text) {
        hog_free(r);
        hog_fnames_free(out);
        return -ENOMEM;
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < f->n; i++)
        if (f->index[i] < below)
            r[kept++] = (fname_ref){f->index[i], f->text + f->off[i]};
    qsort(r, kept, sizeof(*r), ref_order);
    uint64_t at = 0;
    for (uint32_t i = 0; i < kept; i++) {
        const size_t len = strlen(r[i].name);
        if (out->n && out->index[out->n - 1] == r[i].index) {
            out->text[at - 1] = HOG_FNAMES_SEP;
        } else {
            out->index[out->n] = r[i].index;
            out->off[out->n++] = at;
        }
        memcpy(out->text + at, r[i].name, len + 1);
        at += len + 1;
    }
    out->off[out->n] = at;
    out->text_len = at;
    out->text_cap = (size_t)f->text_len;
    out->cap = f->n;
    out->off_cap = (size_t)f->n + 1;
    hog_free(r);
    return 0;
}

int hog_fnames_copy(hog_fnames *dst, const hog_fnames *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->dropped = src->dropped;
    if (src->n == 0)
        return 0;
    dst->index = hog_malloc((size_t)src->n * sizeof(uint32_t));
    dst->off = hog_malloc(((size_t)src->n + 1) * sizeof(uint64_t));
    dst->text = hog_malloc((size_t)src->text_len);
    if (!dst->index || !dst->off || !dst->text) {
        hog_fnames_free(dst);
        return -ENOMEM;
    }
    memcpy(dst->index, src->index, (size_t)src->n * sizeof(uint32_t));
    memcpy(dst->off, src->off, ((size_t)src->n + 1) * sizeof(uint64_t));
    memcpy(dst->text, src->text, (size_t)src->text_len);
    dst->n = dst->cap = src->n;
    dst->off_cap = (size_t)src->n + 1;
    dst->text_len = src->text_len;
    dst->text_cap = (size_t)src->text_len;
    return 0;
}

const char *hog_fnames_find(const hog_fnames *f, uint32_t index)
{
    uint32_t lo = 0, hi = f->n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (f->index[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->n && f->index[lo] == index ? f->text + f->off[lo] : NULL;
}

void hog_fnames_free(hog_fnames *f)
{
    hog_free(f->index);
    hog_free(f->off);
    hog_free(f->text);
    hog_free(f->slots);
    memset(f, 0, sizeof(*f));
}

/* ===================================================================== *
 *  The bytes in a file (.hgd and model file alike):
 *    u32 count, then count times: u32 index, the name, a NUL;
 *    indices strictly ascending
 * ===================================================================== */

uint64_t hog_fnames_bytes(const hog_fnames *f)
{
    return 4 + 4ull * f->n + f->text_len;
}

void hog_fnames_put(const hog_fnames *f, uint8_t *p)
{
    hog_put_u32(p, f->n);
    p += 4;
    for (uint32_t i = 0; i < f->n; i++) {
        const uint64_t n = f->off[i + 1] - f->off[i];
        hog_put_u32(p, f->index[i]);
        memcpy(p + 4, f->text + f->off[i], (size_t)n);
        p += 4 + n;
    }
}

int hog_fnames_read(const char *path, const uint8_t *p, uint64_t bytes, uint64_t at, uint64_t features,
                    hog_fnames *out, char *err, size_t len)
{
    memset(out, 0, sizeof(*out));
    if (bytes < 4)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature names of %llu bytes, less than their count's 4",
                        path, (unsigned long long)at, (unsigned long long)bytes);
    const uint32_t n = hog_get_u32(p);
    /* each name takes at least 6 bytes: its index, a byte and its NUL */
    if (n == 0 || n > (bytes - 4) / 6 || n > features)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %u feature names, expected 1 to %llu (%llu bytes, "
                        "%llu features)", path, (unsigned long long)at, n,
                        (unsigned long long)HOG_MIN((bytes - 4) / 6, features), (unsigned long long)bytes,
                        (unsigned long long)features);
    out->index = hog_malloc((size_t)n * sizeof(uint32_t));
    out->off = hog_malloc(((size_t)n + 1) * sizeof(uint64_t));
    out->text = hog_malloc((size_t)(bytes - 4)); /* more than the names take: bounded whatever the entries say */
    if (!out->index || !out->off || !out->text) {
        hog_fnames_free(out);
        return hog_fail(-ENOMEM, err, len, "%s: out of memory", path);
    }
    const uint8_t *s = p + 4, *end = p + bytes;
    int rc = 0;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        const unsigned long long where = at + (unsigned long long)(s - p);
        if (end - s < 6) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature name %u of %u runs past the names' end at "
                          "byte %llu", path, where, k, n, (unsigned long long)(at + bytes));
            break;
        }
        const uint32_t index = hog_get_u32(s);
        const uint8_t *nul = memchr(s + 4, '\0', (size_t)(end - s - 4));
        if (index >= features)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature name %u is of feature %u, past the %llu "
                          "features", path, where, k, index, (unsigned long long)features);
        else if (k > 0 && index <= out->index[k - 1])
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature name %u is of feature %u, not after %u: "
                          "indices are strictly ascending", path, where, k, index, out->index[k - 1]);
        else if (!nul)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature name %u runs past the names' end at byte "
                          "%llu (each ends with a NUL)", path, where + 4, k, (unsigned long long)(at + bytes));
        else if (nul == s + 4)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: feature name %u is empty", path, where + 4, k);
        if (rc < 0)
            break;
        const uint64_t nl = (uint64_t)(nul - s - 4) + 1;
        out->index[k] = index;
        out->off[k] = out->text_len;
        memcpy(out->text + out->text_len, s + 4, (size_t)nl);
        out->text_len += nl;
        out->n = k + 1;
        s = nul + 1;
    }
    if (rc == 0 && s != end)
        rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %llu bytes after the last of %u feature names", path,
                      (unsigned long long)(at + (uint64_t)(s - p)), (unsigned long long)(end - s), n);
    if (rc < 0) {
        hog_fnames_free(out);
        return rc;
    }
    out->off[n] = out->text_len;
    out->cap = n;
    out->off_cap = (size_t)n + 1;
    out->text_cap = (size_t)(bytes - 4);
    return 0;
}
