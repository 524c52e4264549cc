/* fuzz_sections.h: the mutator the fuzz targets of files made of a header and sections back to back share (the model files, the ratings file): size fields pushed to boundaries, the sections resized to follow them, then the checksums recomputed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_FUZZ_SECTIONS_H
#define HOG_FUZZ_SECTIONS_H

#include "fuzz_file_common.h"

/* ===================================================================== *
 *  Files of a header and sections back to back (the model files, the
 *  ratings file): a format lists the header's size fields and, from a
 *  header, where each section lies; the mutator pushes a field to a
 *  boundary and, half the time, grows or cuts the sections it sizes so
 *  that the file has the length the header implies and the checks past
 *  the length are reached. The format's reseal then recomputes the
 *  checksums.
 * ===================================================================== */

typedef enum fuzz_kind {
    FUZZ_HEADER, /* the fixed header: only its fields are set */
    FUZZ_TEXT,   /* "key value" lines */
    FUZZ_U32,    /* ids or offsets */
    FUZZ_F32,
    FUZZ_F64,
    FUZZ_NAMES,  /* NUL-terminated names back to back */
    FUZZ_SUM,    /* the checksum at the end */
} fuzz_kind;

#define FUZZ_SECTIONS 16

typedef struct fuzz_layout {
    unsigned n;
    uint64_t off[FUZZ_SECTIONS], len[FUZZ_SECTIONS];
    fuzz_kind kind[FUZZ_SECTIONS];
    int len_field[FUZZ_SECTIONS]; /* the index in fields of the field that is this section's byte length, or -1 */
} fuzz_layout;

typedef struct fuzz_format {
    const char *magic; /* 8 bytes */
    size_t head;       /* bytes of the fixed header */
    const fuzz_field *fields;
    unsigned nfields;
    /* where the sections lie by the header at d (at least head bytes);
     * lengths in 64 bits, past the file when the header says so */
    void (*layout)(const uint8_t *d, fuzz_layout *l);
    void (*reseal)(uint8_t *d, size_t size);
} fuzz_format;

/* Appends a section after the last (at UINT64_MAX when the lengths before
 * it pass 2^64: outside any file). */
static void fuzz_section(fuzz_layout *l, fuzz_kind kind, uint64_t len, int len_field)
{
    uint64_t off = 0;
    if (l->n) {
        off = l->off[l->n - 1] + l->len[l->n - 1];
        if (off < l->off[l->n - 1])
            off = UINT64_MAX;
    }
    l->off[l->n] = off;
    l->len[l->n] = len;
    l->kind[l->n] = kind;
    l->len_field[l->n] = len_field;
    l->n++;
}

/* Section i lies inside a file of size bytes. */
static int fuzz_inside(const fuzz_layout *l, unsigned i, size_t size)
{
    return l->off[i] <= size && l->len[i] <= size - l->off[i];
}

/* Grows or cuts each section from its length in `from` to its length in
 * `to` (both laid out from headers of this file), the last first so that
 * the places of the others hold. Nothing changes when the result would
 * pass max or a section changed lies past the end of the file. */
static size_t fuzz_relayout(uint8_t *d, size_t size, size_t max, const fuzz_layout *from, const fuzz_layout *to)
{
    uint64_t want = size;
    for (unsigned i = 0; i < from->n; i++) {
        if (from->len[i] == to->len[i])
            continue;
        if (!fuzz_inside(from, i, size) || to->len[i] > max)
            return size;
        want = want - from->len[i] + to->len[i];
        if (want > max)
            return size;
    }
    for (unsigned i = from->n; i-- > 0;) {
        if (from->len[i] == to->len[i])
            continue;
        size_t keep = (size_t)HOG_MIN(from->len[i], to->len[i]);
        size = fuzz_resize(d, size, max, (size_t)from->off[i] + keep,
                           (long)to->len[i] - (long)from->len[i]);
    }
    return size;
}

/* A text value a metadata reader must refuse or read right. */
static const char *const fuzz_words[] = {
    "nan", "inf", "-inf", "-1", "0", "1", "1e999", "-1e999", "1e-400", "4294967295", "4294967296",
    "18446744073709551615", "18446744073709551616", "-9223372036854775809", "0x10", "", " ", "1 ",
    "+1", "01", "1.5", "abc", "softmax", "logistic", "squared", "ffffffffffffffff", "0.5e", "1,5",
};

/* One line of "key value" text: its value replaced, the line doubled,
 * its newline dropped or a key made unknown. Returns the new length. */
static size_t fuzz_text_line(uint8_t *t, size_t len, size_t max, hog_rng *r)
{
    if (len == 0)
        return 0;
    size_t at = hog_rng_next(r) % len;
    while (at > 0 && t[at - 1] != '\n')
        at--;
    size_t end = at;
    while (end < len && t[end] != '\n')
        end++;
    size_t sp = at;
    while (sp < end && t[sp] != ' ')
        sp++;
    switch (hog_rng_below(r, 4)) {
    case 0: { /* the value */
        if (sp >= end)
            return len;
        const char *w = fuzz_words[hog_rng_below(r, HOG_ARRAY_LEN(fuzz_words))];
        size_t wl = strlen(w), old = end - sp - 1;
        if (len - old + wl > max)
            return len;
        memmove(t + sp + 1 + wl, t + end, len - end);
        memcpy(t + sp + 1, w, wl);
        return len - old + wl;
    }
    case 1: { /* the line twice */
        size_t ll = HOG_MIN(end + 1, len) - at;
        if (len + ll > max)
            return len;
        memmove(t + at + ll, t + at, len - at);
        return len + ll;
    }
    case 2: /* no newline */
        if (end < len) {
            memmove(t + end, t + end + 1, len - end - 1);
            return len - 1;
        }
        return len;
    default: /* another key */
        if (sp > at)
            t[at + hog_rng_next(r) % (sp - at)] ^= 0x20;
        return len;
    }
}

/* One element of a section, or its bytes. */
static void fuzz_element(uint8_t *p, uint64_t len, fuzz_kind kind, hog_rng *r)
{
    if (len == 0)
        return;
    switch (kind) {
    case FUZZ_U32: {
        if (len < 4)
            return;
        uint8_t *at = p + 4 * (hog_rng_next(r) % (len / 4));
        uint32_t last = hog_get_u32(p + len / 4 * 4 - 4);
        uint32_t k = hog_rng_below(r, 4);
        hog_put_u32(at, k == 0   ? last
                        : k == 1 ? last + 1
                        : k == 2 ? hog_get_u32(at) + 1
                                 : (uint32_t)fuzz_boundary(r, hog_get_u32(at), len, 4));
        return;
    }
    case FUZZ_F32: {
        if (len < 4)
            return;
        float f = fuzz_float(r);
        memcpy(p + 4 * (hog_rng_next(r) % (len / 4)), &f, 4);
        return;
    }
    case FUZZ_F64: {
        if (len < 8)
            return;
        uint8_t *at = p + 8 * (hog_rng_next(r) % (len / 8));
        double v = (double)fuzz_float(r);
        if (hog_rng_below(r, 3) == 0 && at > p) /* equal to the one before it, or below it */
            memcpy(&v, at - 8, 8), v -= hog_rng_below(r, 2);
        memcpy(at, &v, 8);
        return;
    }
    case FUZZ_NAMES: {
        uint8_t *at = p + hog_rng_next(r) % len;
        *at = *at ? 0 : (uint8_t)('a' + hog_rng_below(r, 26));
        return;
    }
    default:
        fuzz_mutate_part(p, 0, (size_t)len);
        return;
    }
}

static size_t fuzz_sectioned_once(const fuzz_format *f, uint8_t *d, size_t size, size_t max, hog_rng *r)
{
    fuzz_layout l;
    memset(&l, 0, sizeof(l));
    f->layout(d, &l);
    switch (hog_rng_below(r, 12)) {
    case 0:
    case 1:
        return LLVMFuzzerMutate(d, size, max);
    case 2:
    case 3:
    case 4: { /* a size field at a boundary, the sections following it half the time */
        unsigned k = hog_rng_below(r, f->nfields);
        uint8_t *at = d + f->fields[k].off;
        unsigned w = f->fields[k].width;
        fuzz_put(at, w, fuzz_boundary(r, fuzz_get(at, w), size, w));
        if (hog_rng_below(r, 2)) {
            fuzz_layout to;
            memset(&to, 0, sizeof(to));
            f->layout(d, &to);
            size = fuzz_relayout(d, size, max, &l, &to);
        }
        return size;
    }
    case 5:
    case 6:
    case 7: { /* one element of a section inside the file */
        unsigned i = hog_rng_below(r, l.n);
        if (l.kind[i] == FUZZ_HEADER || l.kind[i] == FUZZ_SUM || !fuzz_inside(&l, i, size))
            return size;
        if (l.kind[i] == FUZZ_TEXT && l.len_field[i] >= 0) {
            /* a line changed, the length field and the sections after it following */
            size_t cap = (size_t)l.len[i] + 64;
            uint8_t *t = malloc(cap);
            FUZZ_CHECK(t);
            memcpy(t, d + l.off[i], (size_t)l.len[i]);
            size_t n = fuzz_text_line(t, (size_t)l.len[i], cap, r);
            const unsigned k = (unsigned)l.len_field[i];
            fuzz_put(d + f->fields[k].off, f->fields[k].width, n);
            fuzz_layout to;
            memset(&to, 0, sizeof(to));
            f->layout(d, &to);
            size_t was = size;
            size = fuzz_relayout(d, size, max, &l, &to);
            if (size != was || n == l.len[i])
                memcpy(d + l.off[i], t, n);
            else /* it did not fit: the field as it was */
                fuzz_put(d + f->fields[k].off, f->fields[k].width, l.len[i]);
            free(t);
            return size;
        }
        fuzz_element(d + l.off[i], l.len[i], l.kind[i], r);
        return size;
    }
    case 8: { /* a section's bytes */
        unsigned i = hog_rng_below(r, l.n);
        if (fuzz_inside(&l, i, size))
            fuzz_mutate_part(d, (size_t)l.off[i], (size_t)l.len[i]);
        return size;
    }
    case 9: { /* cut short, or bytes added at the end */
        if (hog_rng_below(r, 2))
            return (size_t)(hog_rng_next(r) % (size + 1));
        return fuzz_resize(d, size, max, size, 1 + (long)hog_rng_below(r, 64));
    }
    default: { /* one section's bytes grown or cut, the header not told */
        unsigned i = hog_rng_below(r, l.n);
        if (l.kind[i] == FUZZ_HEADER || !fuzz_inside(&l, i, size))
            return size;
        long delta = hog_rng_below(r, 2) ? 1 + (long)hog_rng_below(r, 16) : -(long)(1 + hog_rng_below(r, 16));
        return fuzz_resize(d, size, max, (size_t)(l.off[i] + l.len[i]), delta);
    }
    }
}

/* The custom mutator of a sectioned format: one to three changes, then
 * (fifteen times in sixteen) every checksum made right again. */
static size_t fuzz_sectioned_mutate(const fuzz_format *f, uint8_t *d, size_t size, size_t max, unsigned seed)
{
    hog_rng r = {seed};
    if (size < f->head || memcmp(d, f->magic, 8) != 0 || max < f->head)
        return LLVMFuzzerMutate(d, size, max);
    for (unsigned k = 1 + hog_rng_below(&r, 3); k > 0 && size >= f->head; k--)
        size = fuzz_sectioned_once(f, d, size, max, &r);
    if (size >= f->head && hog_rng_below(&r, 16) != 0)
        f->reseal(d, size);
    return size;
}

#endif /* HOG_FUZZ_SECTIONS_H */
