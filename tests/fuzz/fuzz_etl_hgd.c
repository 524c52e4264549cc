/* fuzz_etl_hgd.c: libFuzzer target for the binary dataset reader (.hgd): open, checked at open and as read, every row of every block against the summary, the class names and the field count, written again and reopened; its mutator reshapes headers, block tables, blocks (fields too), summaries, class names and feature names and then recomputes every checksum. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include "etl/etl.h"

#include "fuzz_file_common.h"

/* ===================================================================== *
 *  The layout (etl.h has the byte map)
 * ===================================================================== */

enum {
    H_VERSION = 8,
    H_ROWS = 16,
    H_FEATURES = 24,
    H_NNZ = 32,
    H_BLOCKS = 40,
    H_ROWS_PER_BLOCK = 44,
    H_FLAGS = 48,
    H_TABLE_OFFSET = 56,
    H_FILE_BYTES = 64,
    H_FINGERPRINT = 72,
    H_TABLE_SUM = 80,
    H1_HEADER_CRC = 84,
    H_HEADER_SUM = 88,
    H_SUMMARY_OFFSET = 224,
    H_SUMMARY_BYTES = 232,
    H_SUMMARY_SUM = 240,
    H_NAMES_OFFSET = 248,
    H_NAMES_BYTES = 256,
    H_NAMES_SUM = 264,
    H_FNAMES_OFFSET = 272,
    H_FNAMES_BYTES = 280,
    H_FNAMES_SUM = 288,
    H_FIELDS = 296,
    H_HASH_BITS = 300,
    T_OFFSET = 0,
    T_BYTES = 8,
    T_ROWS = 16,
    T_NNZ = 20,
    T_SUM = 24,
};

#define HEAD HOG_HGD_HEADER_BYTES
#define ENTRY HOG_HGD_TABLE_ENTRY

/* The header fields a mutation sets, the size fields listed twice. */
static const fuzz_field header_fields[] = {
    {8, 4},  {12, 4}, {16, 8}, {16, 8}, {24, 8}, {24, 8}, {32, 8}, {32, 8}, {40, 4}, {40, 4},
    {44, 4}, {44, 4}, {48, 4}, {52, 4}, {56, 8}, {56, 8}, {64, 8}, {64, 8}, {96, 8}, {136, 8},
    {224, 8}, {232, 8}, {248, 8}, {248, 8}, {256, 8}, {256, 8}, {272, 8}, {272, 8}, {280, 8}, {280, 8},
    {296, 4}, {296, 4}, {300, 4}, {300, 4},
};

static const fuzz_field entry_fields[] = {{T_OFFSET, 8}, {T_BYTES, 8}, {T_ROWS, 4}, {T_NNZ, 4}, {T_SUM, 8}, {28, 4}};

static int version_1(const uint8_t *d)
{
    return hog_get_u32(d + H_VERSION) == 1;
}

static int weighted(const uint8_t *d)
{
    return !version_1(d) && (hog_get_u32(d + H_FLAGS) & HOG_HGD_WEIGHTED);
}

/* The blocks' optional arrays (hog_block_layout's bits): weights, and
 * fields from version 6. */
static int layout_of(const uint8_t *d)
{
    return (weighted(d) ? HOG_BLOCK_WEIGHTED : 0) |
           (hog_get_u32(d + H_VERSION) >= 6 && (hog_get_u32(d + H_FLAGS) & HOG_HGD_FIELDS) ? HOG_BLOCK_FIELDS : 0);
}

/* A section the header announces (from version `version`, with flag) and
 * places inside the file at its offset and size fields, at least `least`
 * bytes; NULL otherwise. */
static uint8_t *section_of(uint8_t *d, size_t size, uint32_t version, uint32_t flag, size_t off_field,
                           size_t bytes_field, uint64_t least, uint64_t *bytes)
{
    if (size < HEAD || hog_get_u32(d + H_VERSION) < version || !(hog_get_u32(d + H_FLAGS) & flag))
        return NULL;
    uint64_t at = hog_get_u64(d + off_field);
    *bytes = hog_get_u64(d + bytes_field);
    return at <= size && *bytes <= size - at && *bytes >= least ? d + at : NULL;
}

/* The summary, when the header announces one and places it inside the file. */
static uint8_t *summary_of(uint8_t *d, size_t size, uint64_t *bytes)
{
    return section_of(d, size, 3, HOG_HGD_SUMMARY, H_SUMMARY_OFFSET, H_SUMMARY_BYTES, 8, bytes);
}

/* The summary's sum, chained over the arrays its counts give, where they
 * lie inside it. */
static void reseal_summary(uint8_t *d, size_t size)
{
    uint64_t bytes;
    uint8_t *s = summary_of(d, size, &bytes);
    if (!s)
        return;
    uint32_t labels = hog_get_u32(s), degrees = hog_get_u32(s + 4);
    uint64_t listed = labels == HOG_HGD_MANY_LABELS ? 0 : labels;
    uint64_t len[3] = {8 * listed, 8 * listed, 4 * (uint64_t)degrees}, at = 8, sum = hog_hash64(s, 8, 0);
    for (int i = 0; i < 3; i++) {
        uint64_t n = HOG_MIN(len[i], bytes - HOG_MIN(at, bytes));
        sum = hog_hash64(s + HOG_MIN(at, bytes), n, sum);
        at += len[i];
    }
    hog_put_u64(d + H_SUMMARY_SUM, sum);
}

/* The class names, when the header announces them and places them inside
 * the file. */
static uint8_t *names_of(uint8_t *d, size_t size, uint64_t *bytes)
{
    return section_of(d, size, 4, HOG_HGD_NAMES, H_NAMES_OFFSET, H_NAMES_BYTES, 4, bytes);
}

/* The names' sum: of their count, then of the names seeded with it. */
static void reseal_names(uint8_t *d, size_t size)
{
    uint64_t bytes;
    uint8_t *s = names_of(d, size, &bytes);
    if (s)
        hog_put_u64(d + H_NAMES_SUM, hog_hash64(s + 4, bytes - 4, hog_hash64(s, 4, 0)));
}

/* The feature names, when the header announces them and places them
 * inside the file. */
static uint8_t *fnames_of(uint8_t *d, size_t size, uint64_t *bytes)
{
    return section_of(d, size, 5, HOG_HGD_FNAMES, H_FNAMES_OFFSET, H_FNAMES_BYTES, 4, bytes);
}

/* The feature names' sum: of their bytes. */
static void reseal_fnames(uint8_t *d, size_t size)
{
    uint64_t bytes;
    uint8_t *s = fnames_of(d, size, &bytes);
    if (s)
        hog_put_u64(d + H_FNAMES_SUM, hog_hash64(s, bytes, 0));
}

/* The block table, when the header places all of it inside the file. */
static uint8_t *table_of(uint8_t *d, size_t size, uint32_t *n)
{
    if (size < HEAD)
        return NULL;
    uint64_t t = hog_get_u64(d + H_TABLE_OFFSET);
    *n = hog_get_u32(d + H_BLOCKS);
    return t <= size && *n <= (size - t) / ENTRY ? d + t : NULL;
}

/* Block e's arrays, when the entry places them inside the file. */
static uint8_t *block_of(uint8_t *d, size_t size, const uint8_t *e, uint64_t *bytes)
{
    uint64_t off = hog_get_u64(e + T_OFFSET);
    *bytes = hog_block_bytes(hog_get_u32(e + T_ROWS), hog_get_u32(e + T_NNZ), layout_of(d));
    return off <= size && *bytes <= size - off ? d + off : NULL;
}

/* Recomputes what a writer would have: each block's sum (where its arrays
 * lie in the file), the fingerprint, the table's sum, the header's sum. */
static void reseal(uint8_t *d, size_t size)
{
    if (size < HEAD)
        return;
    const int v1 = version_1(d);
    uint32_t n;
    uint8_t *table = table_of(d, size, &n);
    if (table) {
        hog_block *b = calloc(n ? n : 1, sizeof(*b));
        FUZZ_CHECK(b);
        for (uint32_t i = 0; i < n; i++) {
            uint8_t *e = table + (size_t)i * ENTRY;
            uint64_t bytes;
            uint8_t *blk = block_of(d, size, e, &bytes);
            b[i].rows = hog_get_u32(e + T_ROWS);
            b[i].nnz = hog_get_u32(e + T_NNZ);
            if (blk && v1) {
                hog_put_u32(e + T_SUM, hog_crc32(0, blk, (size_t)bytes));
            } else if (blk) {
                hog_block v;
                hog_block_view(&v, blk, b[i].rows, b[i].nnz, layout_of(d), 0);
                hog_put_u64(e + T_SUM, hog_block_sum(&v));
            }
            b[i].sum = v1 ? hog_get_u32(e + T_SUM) : hog_get_u64(e + T_SUM);
        }
        hog_put_u64(d + H_FINGERPRINT, hog_etl_fingerprint(b, n));
        free(b);
        if (v1)
            hog_put_u32(d + H_TABLE_SUM, hog_crc32(0, table, (size_t)n * ENTRY));
        else
            hog_put_u64(d + H_TABLE_SUM, hog_hash64(table, (size_t)n * ENTRY, 0));
    }
    reseal_summary(d, size);
    reseal_names(d, size);
    reseal_fnames(d, size);
    if (v1) {
        hog_put_u32(d + H1_HEADER_CRC, 0);
        hog_put_u32(d + H1_HEADER_CRC, hog_crc32(0, d, HEAD));
    } else {
        hog_put_u64(d + H_HEADER_SUM, 0);
        hog_put_u64(d + H_HEADER_SUM, hog_hash64(d, HEAD, 0));
    }
}

/* ===================================================================== *
 *  Whole blocks: taken out of a file, cut, copied, and laid out again
 * ===================================================================== */

typedef struct part {
    uint8_t *bytes; /* the block's arrays (owned) */
    uint64_t len;
    uint32_t rows, nnz;
} part;

#define MAX_PARTS 64

/* The blocks of a file whose entries place them inside it, in table order. */
static uint32_t parts_of(uint8_t *d, size_t size, part *p)
{
    uint32_t n, k = 0;
    uint8_t *table = table_of(d, size, &n);
    for (uint32_t i = 0; table && i < n && k < MAX_PARTS; i++) {
        uint8_t *e = table + (size_t)i * ENTRY;
        uint64_t bytes;
        uint8_t *blk = block_of(d, size, e, &bytes);
        if (!blk)
            continue;
        p[k].bytes = malloc(bytes ? bytes : 1);
        FUZZ_CHECK(p[k].bytes);
        memcpy(p[k].bytes, blk, bytes);
        p[k].len = bytes;
        p[k].rows = hog_get_u32(e + T_ROWS);
        p[k].nnz = hog_get_u32(e + T_NNZ);
        k++;
    }
    return k;
}

static void parts_free(part *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(p[i].bytes);
}

static uint64_t pad(uint64_t n)
{
    return (n + HOG_HGD_ALIGN - 1) / HOG_HGD_ALIGN * HOG_HGD_ALIGN;
}

/* The summary a writer would count of the parts, for files of up to
 * SUMMARY_FEATURES features and SUMMARY_LABELS labels (a fuzzed file's
 * size); the degrees of indices past the features are not counted. The
 * bytes go to out (summary_size of them); returns their number, or 0. */
#define SUMMARY_FEATURES 4096u
#define SUMMARY_LABELS 256u
static uint64_t summary_size(uint32_t labels, uint32_t degrees)
{
    return 8 + 16 * (uint64_t)labels + 4 * (uint64_t)degrees;
}

static uint64_t count_summary(uint8_t *out, const part *p, uint32_t n, uint64_t features)
{
    double label[SUMMARY_LABELS];
    uint64_t count[SUMMARY_LABELS];
    uint32_t labels = 0, degrees = features <= SUMMARY_FEATURES ? (uint32_t)features : 0;
    uint32_t *deg = calloc(SUMMARY_FEATURES, sizeof(uint32_t));
    FUZZ_CHECK(deg);
    for (uint32_t i = 0; i < n; i++) {
        if (p[i].len < hog_block_bytes(p[i].rows, p[i].nnz, 0))
            continue;
        const uint8_t *index = p[i].bytes + 4 * ((size_t)p[i].rows + 1);
        const uint8_t *lab = index + 8 * (size_t)p[i].nnz;
        for (uint32_t k = 0; k < p[i].nnz; k++) {
            uint32_t j = hog_get_u32(index + 4 * (size_t)k);
            if (j < degrees)
                deg[j]++;
        }
        for (uint32_t r = 0; r < p[i].rows; r++) {
            float f;
            memcpy(&f, lab + 4 * (size_t)r, 4);
            uint32_t at = 0;
            while (at < labels && label[at] < (double)f)
                at++;
            if (at < labels && label[at] == (double)f) {
                count[at]++;
                continue;
            }
            if (labels == SUMMARY_LABELS || isnan(f)) {
                free(deg);
                return 0;
            }
            memmove(label + at + 1, label + at, (labels - at) * sizeof(double));
            memmove(count + at + 1, count + at, (labels - at) * sizeof(uint64_t));
            label[at] = (double)f;
            count[at] = 1;
            labels++;
        }
    }
    hog_put_u32(out, labels);
    hog_put_u32(out + 4, degrees);
    memcpy(out + 8, label, 8 * (size_t)labels);
    memcpy(out + 8 + 8 * (size_t)labels, count, 8 * (size_t)labels);
    memcpy(out + 8 + 16 * (size_t)labels, deg, 4 * (size_t)degrees);
    free(deg);
    return summary_size(labels, degrees);
}

/* Writes header h (its counts made to agree with the blocks) and the
 * blocks into out, as the writer lays them out, with a summary counted
 * again when h announces one (none when it cannot be counted), and the
 * class names' bytes (names_bytes of them, from a copy the caller made)
 * after it when h announces those, then the feature names' likewise.
 * Returns the size, or 0 when it passes max. */
static size_t layout(uint8_t *out, size_t max, const uint8_t *h, const part *p, uint32_t n, const uint8_t *names,
                     uint64_t names_bytes, const uint8_t *fnames, uint64_t fnames_bytes)
{
    const int summary = hog_get_u32(h + H_VERSION) >= 3 && (hog_get_u32(h + H_FLAGS) & HOG_HGD_SUMMARY);
    uint8_t *sum = summary ? malloc(summary_size(SUMMARY_LABELS, SUMMARY_FEATURES)) : NULL;
    FUZZ_CHECK(!summary || sum);
    uint64_t sum_bytes = summary ? count_summary(sum, p, n, hog_get_u64(h + H_FEATURES)) : 0;
    uint64_t size = HEAD;
    for (uint32_t i = 0; i < n; i++)
        size += pad(p[i].len);
    const uint64_t sum_at = size;
    size += (sum_bytes + 7) / 8 * 8;
    const uint64_t names_at = size;
    if (names)
        size += (names_bytes + 7) / 8 * 8;
    const uint64_t fnames_at = size;
    if (fnames)
        size += (fnames_bytes + 7) / 8 * 8;
    size += (uint64_t)n * ENTRY;
    if (size > max) {
        free(sum);
        return 0;
    }
    memmove(out, h, HEAD);
    if (summary && sum_bytes) {
        memcpy(out + sum_at, sum, sum_bytes);
        memset(out + sum_at + sum_bytes, 0, (sum_bytes + 7) / 8 * 8 - sum_bytes);
        hog_put_u64(out + H_SUMMARY_OFFSET, sum_at);
        hog_put_u64(out + H_SUMMARY_BYTES, sum_bytes);
    } else if (summary) { /* none: as a version 3 writer without one */
        hog_put_u32(out + H_FLAGS, hog_get_u32(out + H_FLAGS) & ~HOG_HGD_SUMMARY);
        memset(out + H_SUMMARY_OFFSET, 0, 24);
    }
    free(sum);
    if (names) {
        memcpy(out + names_at, names, names_bytes);
        memset(out + names_at + names_bytes, 0, (names_bytes + 7) / 8 * 8 - names_bytes);
        hog_put_u64(out + H_NAMES_OFFSET, names_at);
        hog_put_u64(out + H_NAMES_BYTES, names_bytes);
    }
    if (fnames) {
        memcpy(out + fnames_at, fnames, fnames_bytes);
        memset(out + fnames_at + fnames_bytes, 0, (fnames_bytes + 7) / 8 * 8 - fnames_bytes);
        hog_put_u64(out + H_FNAMES_OFFSET, fnames_at);
        hog_put_u64(out + H_FNAMES_BYTES, fnames_bytes);
    }
    uint64_t off = HEAD, rows = 0, nnz = 0;
    uint8_t *table = out + size - (size_t)n * ENTRY;
    for (uint32_t i = 0; i < n; i++) {
        memcpy(out + off, p[i].bytes, p[i].len);
        memset(out + off + p[i].len, 0, pad(p[i].len) - p[i].len);
        uint8_t *e = table + (size_t)i * ENTRY;
        memset(e, 0, ENTRY);
        hog_put_u64(e + T_OFFSET, off);
        hog_put_u64(e + T_BYTES, pad(p[i].len));
        hog_put_u32(e + T_ROWS, p[i].rows);
        hog_put_u32(e + T_NNZ, p[i].nnz);
        off += pad(p[i].len);
        rows += p[i].rows;
        nnz += p[i].nnz;
    }
    hog_put_u64(out + H_ROWS, rows);
    hog_put_u64(out + H_NNZ, nnz);
    hog_put_u32(out + H_BLOCKS, n);
    /* every block holds rows_per_block rows but the last */
    uint32_t rpb = hog_get_u32(out + H_ROWS_PER_BLOCK);
    if (n > 1 || (n == 1 && rpb < p[0].rows))
        hog_put_u32(out + H_ROWS_PER_BLOCK, p[0].rows);
    hog_put_u64(out + H_TABLE_OFFSET, (uint64_t)(table - out));
    hog_put_u64(out + H_FILE_BYTES, size);
    return (size_t)size;
}

/* Cuts block b after row k into two blocks with the same rows: a file of
 * one block becomes one of several, each still valid. */
static int split(part *p, uint32_t *n, uint32_t b, uint32_t k, int lay)
{
    part *s = &p[b];
    if (*n >= MAX_PARTS || k == 0 || k >= s->rows || s->len < hog_block_bytes(s->rows, s->nnz, lay))
        return 0;
    const int w = lay & HOG_BLOCK_WEIGHTED;
    const uint32_t rows = s->rows, nnz = s->nnz;
    const uint8_t *ptr = s->bytes, *index = ptr + 4 * ((size_t)rows + 1), *value = index + 4 * (size_t)nnz,
                  *label = value + 4 * (size_t)nnz, *weight = label + 4 * (size_t)rows,
                  *field = weight + (w ? 4 * (size_t)rows : 0);
    uint32_t cut = hog_get_u32(ptr + 4 * (size_t)k);
    if (cut > nnz)
        return 0;
    const uint32_t r2[2] = {k, rows - k}, n2[2] = {cut, nnz - cut}, r0[2] = {0, k}, z0[2] = {0, cut};
    part out[2];
    for (int h = 0; h < 2; h++) {
        out[h].rows = r2[h];
        out[h].nnz = n2[h];
        out[h].len = hog_block_bytes(r2[h], n2[h], lay);
        uint8_t *o = out[h].bytes = malloc(out[h].len);
        FUZZ_CHECK(o);
        for (uint32_t r = 0; r <= r2[h]; r++)
            hog_put_u32(o + 4 * (size_t)r, hog_get_u32(ptr + 4 * ((size_t)r0[h] + r)) - z0[h]);
        o += 4 * ((size_t)r2[h] + 1);
        memcpy(o, index + 4 * (size_t)z0[h], 4 * (size_t)n2[h]);
        o += 4 * (size_t)n2[h];
        memcpy(o, value + 4 * (size_t)z0[h], 4 * (size_t)n2[h]);
        o += 4 * (size_t)n2[h];
        memcpy(o, label + 4 * (size_t)r0[h], 4 * (size_t)r2[h]);
        o += 4 * (size_t)r2[h];
        if (w) {
            memcpy(o, weight + 4 * (size_t)r0[h], 4 * (size_t)r2[h]);
            o += 4 * (size_t)r2[h];
        }
        if (lay & HOG_BLOCK_FIELDS)
            memcpy(o, field + 2 * (size_t)z0[h], 2 * (size_t)n2[h]);
    }
    free(s->bytes);
    memmove(p + b + 2, p + b + 1, (*n - b - 1) * sizeof(*p));
    p[b] = out[0];
    p[b + 1] = out[1];
    (*n)++;
    return 1;
}

/* A copy of the class names (or with feature set, the feature names) of
 * d, for layout (NULL: none). */
static uint8_t *names_copy(uint8_t *d, size_t size, int feature, uint64_t *bytes)
{
    uint8_t *at = feature ? fnames_of(d, size, bytes) : names_of(d, size, bytes);
    if (!at)
        return NULL;
    uint8_t *c = malloc(*bytes);
    FUZZ_CHECK(c);
    memcpy(c, at, *bytes);
    return c;
}

/* Reshapes the blocks: splits one, copies one, drops one or swaps two,
 * then lays the file out again. Returns the new size, or size unchanged. */
static size_t reshape(uint8_t *d, size_t size, size_t max, hog_rng *r)
{
    part p[MAX_PARTS];
    uint32_t n = parts_of(d, size, p);
    if (n == 0)
        return size;
    uint32_t b = hog_rng_below(r, n);
    switch (hog_rng_below(r, 5)) {
    case 0:
    case 1:
        split(p, &n, b, 1 + hog_rng_below(r, p[b].rows ? p[b].rows : 1), layout_of(d));
        break;
    case 2:
        if (n < MAX_PARTS) {
            p[n] = p[b];
            p[n].bytes = malloc(p[b].len ? p[b].len : 1);
            FUZZ_CHECK(p[n].bytes);
            memcpy(p[n].bytes, p[b].bytes, p[b].len);
            n++;
        }
        break;
    case 3:
        if (n > 1) {
            free(p[b].bytes);
            memmove(p + b, p + b + 1, (n - b - 1) * sizeof(*p));
            n--;
        }
        break;
    default: {
        uint32_t c = hog_rng_below(r, n);
        part t = p[b];
        p[b] = p[c];
        p[c] = t;
    }
    }
    uint8_t *out = malloc(max);
    FUZZ_CHECK(out);
    uint64_t names_bytes = 0, fnames_bytes = 0;
    uint8_t *names = names_copy(d, size, 0, &names_bytes), *fnames = names_copy(d, size, 1, &fnames_bytes);
    size_t got = layout(out, max, d, p, n, names, names_bytes, fnames, fnames_bytes);
    if (got) {
        memcpy(d, out, got);
        size = got;
    }
    free(names);
    free(fnames);
    free(out);
    parts_free(p, n);
    return size;
}

/* ===================================================================== *
 *  Field mutations
 * ===================================================================== */

/* One value inside a block: a row offset or an index pushed to a boundary,
 * a value, label or weight made NaN, infinite, negative or extreme, or a
 * field pushed to the count or past it. */
static void mutate_block_value(uint8_t *d, size_t size, hog_rng *r)
{
    uint32_t n;
    uint8_t *table = table_of(d, size, &n);
    if (!table || n == 0)
        return;
    uint8_t *e = table + (size_t)hog_rng_below(r, n) * ENTRY;
    uint64_t bytes;
    uint8_t *blk = block_of(d, size, e, &bytes);
    if (!blk)
        return;
    const uint32_t rows = hog_get_u32(e + T_ROWS), nnz = hog_get_u32(e + T_NNZ);
    const uint64_t features = hog_get_u64(d + H_FEATURES);
    const uint64_t start[6] = {0, rows + 1ull, rows + 1ull + nnz, rows + 1ull + 2ull * nnz,
                               rows + 1ull + 2ull * nnz + rows, bytes / 4};
    if ((layout_of(d) & HOG_BLOCK_FIELDS) && nnz && hog_rng_below(r, 4) == 0) {
        const uint64_t fields_at = 4 * (start[4] + (weighted(d) ? rows : 0)) + 2 * (hog_rng_next(r) % nnz);
        if (fields_at + 2 > bytes)
            return;
        const uint32_t count = hog_get_u32(d + H_FIELDS);
        static const uint16_t special[] = {0, 1, 0xffff};
        const uint32_t k = hog_rng_below(r, 5);
        const uint16_t v = k < 3 ? special[k] : (uint16_t)(count - (k == 3 ? 1 : 0));
        memcpy(blk + fields_at, &v, 2);
        return;
    }
    unsigned a = hog_rng_below(r, weighted(d) ? 5 : 4);
    if (start[a + 1] == start[a])
        return;
    uint8_t *at = blk + 4 * (start[a] + hog_rng_next(r) % (start[a + 1] - start[a]));
    if (a >= 2) {
        float f = fuzz_float(r);
        memcpy(at, &f, 4);
        return;
    }
    static const uint32_t special[] = {0, 1, UINT32_MAX, UINT32_MAX - 1, 1u << 31};
    uint32_t k = hog_rng_below(r, 8), v;
    if (k < HOG_ARRAY_LEN(special))
        v = special[k];
    else if (k == 5)
        v = a == 0 ? nnz + 1 : (uint32_t)features;
    else if (k == 6)
        v = a == 0 ? nnz : (uint32_t)features - 1;
    else
        v = hog_get_u32(at) - 1;
    hog_put_u32(at, v);
}

/* Takes the file a version down, 7 to 6 (the hash bits dropped), 6 to 5 (the fields dropped from the
 * header: the blocks' field arrays become their padding), 5 to 4 (the feature names dropped from
 * the header, their bytes left), 4 to 3 (the class names likewise), 3 to 2
 * (the summary likewise) to 1 (CRC-32s), or from 1 back to 3 without a
 * summary: the sums follow in reseal. */
static void switch_version(uint8_t *d)
{
    const uint32_t v = hog_get_u32(d + H_VERSION);
    if (version_1(d)) {
        hog_put_u32(d + H_VERSION, 3);
        hog_put_u32(d + H1_HEADER_CRC, 0);
    } else if (v >= 7) {
        hog_put_u32(d + H_VERSION, 6);
        hog_put_u32(d + H_FLAGS, hog_get_u32(d + H_FLAGS) & ~HOG_HGD_HASHED);
        memset(d + H_HASH_BITS, 0, 4);
    } else if (v == 6) {
        hog_put_u32(d + H_VERSION, 5);
        hog_put_u32(d + H_FLAGS, hog_get_u32(d + H_FLAGS) & ~HOG_HGD_FIELDS);
        memset(d + H_FIELDS, 0, 4);
    } else if (v == 5) {
        hog_put_u32(d + H_VERSION, 4);
        hog_put_u32(d + H_FLAGS, hog_get_u32(d + H_FLAGS) & ~HOG_HGD_FNAMES);
        memset(d + H_FNAMES_OFFSET, 0, 24);
    } else if (v == 4) {
        hog_put_u32(d + H_VERSION, 3);
        hog_put_u32(d + H_FLAGS, hog_get_u32(d + H_FLAGS) & ~HOG_HGD_NAMES);
        memset(d + H_NAMES_OFFSET, 0, 24);
    } else if (v == 3) {
        hog_put_u32(d + H_VERSION, 2);
        hog_put_u32(d + H_FLAGS, hog_get_u32(d + H_FLAGS) & ~HOG_HGD_SUMMARY);
        memset(d + H_SUMMARY_OFFSET, 0, 24);
    } else {
        hog_put_u32(d + H_VERSION, 1);
        hog_put_u32(d + H_FLAGS, 0);
        memset(d + H_HEADER_SUM, 0, HEAD - H_HEADER_SUM);
    }
}

/* One value of the summary pushed to a boundary: a count of its own, a
 * label, a row count or a degree. */
static void mutate_summary(uint8_t *d, size_t size, hog_rng *r)
{
    uint64_t bytes;
    uint8_t *s = summary_of(d, size, &bytes);
    if (!s)
        return;
    uint32_t word = hog_rng_below(r, (uint32_t)HOG_MIN(bytes / 4, (uint64_t)UINT32_MAX));
    uint8_t *at = s + 4 * (size_t)word;
    if (hog_rng_below(r, 4) == 0 && word >= 2) {
        float f = fuzz_float(r);
        double x = f;
        if (4 * (size_t)word + 8 <= bytes)
            memcpy(at, &x, 8);
        return;
    }
    hog_put_u32(at, (uint32_t)fuzz_boundary(r, hog_get_u32(at), size, 4));
}

/* One byte or the count of the class names: a name emptied (a NUL), a NUL
 * taken away (a name runs on), a name made its neighbour's (a repeat), or
 * the count pushed to a boundary. */
static void mutate_names(uint8_t *d, size_t size, hog_rng *r)
{
    uint64_t bytes;
    uint8_t *s = names_of(d, size, &bytes);
    if (!s)
        return;
    if (bytes == 4 || hog_rng_below(r, 4) == 0) {
        hog_put_u32(s, (uint32_t)fuzz_boundary(r, hog_get_u32(s), 65536, 4));
        return;
    }
    const uint64_t k = 4 + hog_rng_next(r) % (bytes - 4);
    switch (hog_rng_below(r, 3)) {
    case 0:
        s[k] = 0;
        break;
    case 1:
        s[k] = s[k] ? s[k] ^ 1 : 'a';
        break;
    default: /* the bytes before a NUL copied over the next name's first */
        if (k > 4 && s[k - 1] == 0) {
            uint64_t prev = k - 1;
            while (prev > 4 && s[prev - 1] != 0)
                prev--;
            for (uint64_t i = 0; prev + i < k && k + i < bytes; i++)
                s[k + i] = s[prev + i];
        }
    }
}

static size_t mutate_once(uint8_t *d, size_t size, size_t max, hog_rng *r)
{
    uint32_t n;
    uint8_t *table = table_of(d, size, &n);
    switch (hog_rng_below(r, 16)) {
    case 0:
    case 1:
        return LLVMFuzzerMutate(d, size, max);
    case 2:
    case 3:
    case 4: {
        unsigned f = hog_rng_below(r, HOG_ARRAY_LEN(header_fields));
        uint8_t *at = d + header_fields[f].off;
        fuzz_put(at, header_fields[f].width, fuzz_boundary(r, fuzz_get(at, header_fields[f].width), size,
                                                           header_fields[f].width));
        return size;
    }
    case 5:
    case 6:
        if (table && n) {
            uint8_t *e = table + (size_t)hog_rng_below(r, n) * ENTRY;
            unsigned f = hog_rng_below(r, HOG_ARRAY_LEN(entry_fields));
            uint8_t *at = e + entry_fields[f].off;
            fuzz_put(at, entry_fields[f].width,
                     fuzz_boundary(r, fuzz_get(at, entry_fields[f].width), size, entry_fields[f].width));
        }
        return size;
    case 7:
    case 8:
        mutate_block_value(d, size, r);
        return size;
    case 9: { /* cut short: anywhere, or at a block or the table; the header may say so or not */
        static const size_t at[] = {0, 8, 12, HEAD - 1, HEAD, HEAD + 4};
        size_t keep = hog_rng_below(r, 2) ? hog_rng_next(r) % (size + 1)
                                          : HOG_MIN(size, at[hog_rng_below(r, HOG_ARRAY_LEN(at))]);
        if (table && hog_rng_below(r, 2))
            keep = (size_t)(table - d) + ENTRY * (size_t)hog_rng_below(r, n + 1);
        keep = HOG_MIN(keep, size);
        if (keep >= HEAD && hog_rng_below(r, 2))
            hog_put_u64(d + H_FILE_BYTES, keep);
        return keep;
    }
    case 10:
    case 11:
    case 12:
        return reshape(d, size, max, r);
    case 13: { /* bytes grown or cut somewhere, the header told of the new length */
        size_t at = hog_rng_next(r) % (size + 1);
        long delta = hog_rng_below(r, 2) ? (long)(4 << hog_rng_below(r, 11)) : -(long)(4 << hog_rng_below(r, 11));
        size = fuzz_resize(d, size, max, at, delta);
        if (size >= HEAD)
            hog_put_u64(d + H_FILE_BYTES, size);
        return size;
    }
    case 14: { /* the bytes of one part: the header, the table, a block, the summary, the names */
        uint64_t sbytes, nbytes, fbytes;
        uint8_t *sum = summary_of(d, size, &sbytes), *names = names_of(d, size, &nbytes);
        uint8_t *fnames = fnames_of(d, size, &fbytes);
        if (fnames && hog_rng_below(r, 3) == 0) {
            /* an entry's index, a NUL or the count, or any byte */
            if (hog_rng_below(r, 2) && fbytes >= 4)
                fnames[hog_rng_next(r) % fbytes] = (uint8_t)(hog_rng_below(r, 2) ? 0 : hog_rng_next(r));
            else
                fuzz_mutate_part(d, (size_t)(fnames - d), (size_t)fbytes);
        } else if (names && hog_rng_below(r, 3) == 0) {
            if (hog_rng_below(r, 2))
                mutate_names(d, size, r);
            else
                fuzz_mutate_part(d, (size_t)(names - d), (size_t)nbytes);
        } else if (sum && hog_rng_below(r, 3) == 0) {
            if (hog_rng_below(r, 2))
                mutate_summary(d, size, r);
            else
                fuzz_mutate_part(d, (size_t)(sum - d), (size_t)sbytes);
        } else if (table && n && hog_rng_below(r, 2)) {
            uint64_t bytes;
            uint8_t *blk = block_of(d, size, table + (size_t)hog_rng_below(r, n) * ENTRY, &bytes);
            if (blk)
                fuzz_mutate_part(d, (size_t)(blk - d), (size_t)bytes);
        } else if (table && n && hog_rng_below(r, 2)) {
            fuzz_mutate_part(d, (size_t)(table - d), (size_t)n * ENTRY);
        } else {
            fuzz_mutate_part(d, 0, HOG_MIN(size, (size_t)256));
        }
        return size;
    }
    default:
        switch_version(d);
        return size;
    }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    hog_rng r = {seed};
    if (size < HEAD || memcmp(data, HOG_HGD_MAGIC, 8) != 0 || max_size < HEAD)
        return LLVMFuzzerMutate(data, size, max_size);
    for (unsigned k = 1 + hog_rng_below(&r, 3); k > 0 && size >= HEAD; k--)
        size = mutate_once(data, size, max_size, &r);
    /* mostly with every checksum right, so that what comes after them is tested */
    if (hog_rng_below(&r, 16) != 0)
        reseal(data, size);
    return size;
}

/* A block of one file put into the other, in place of one of its own or
 * beside them; files that do not parse are cut and joined at a byte. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    hog_rng r = {seed};
    size_t size = HOG_MIN(a_size, max_out);
    memcpy(out, a, size);
    uint8_t *bb = malloc(b_size ? b_size : 1);
    FUZZ_CHECK(bb);
    memcpy(bb, b, b_size);
    part p[MAX_PARTS], q[MAX_PARTS];
    uint32_t n = parts_of(out, size, p), m = parts_of(bb, b_size, q);
    if (n && m && n < MAX_PARTS) {
        uint32_t at = hog_rng_below(&r, n + 1), from = hog_rng_below(&r, m);
        part take = q[from];
        q[from] = q[--m];
        if (at < n && hog_rng_below(&r, 2)) {
            free(p[at].bytes);
            p[at] = take;
        } else {
            memmove(p + at + 1, p + at, (n - at) * sizeof(*p));
            p[at] = take;
            n++;
        }
        uint8_t *tmp = malloc(max_out);
        FUZZ_CHECK(tmp);
        uint64_t names_bytes = 0, fnames_bytes = 0;
        uint8_t *names = names_copy(out, size, 0, &names_bytes), *fnames = names_copy(out, size, 1, &fnames_bytes);
        size_t got = layout(tmp, max_out, out, p, n, names, names_bytes, fnames, fnames_bytes);
        free(names);
        free(fnames);
        if (got) {
            memcpy(out, tmp, got);
            size = got;
            reseal(out, size);
        }
        free(tmp);
    } else if (size > 0) {
        size_t cut = hog_rng_next(&r) % size, tail = HOG_MIN(b_size - HOG_MIN(cut, b_size), max_out - cut);
        memcpy(out + cut, b + HOG_MIN(cut, b_size), tail);
        size = cut + tail;
        reseal(out, size);
    }
    parts_free(p, n);
    parts_free(q, m);
    free(bb);
    return size;
}

/* ===================================================================== *
 *  The target
 * ===================================================================== */

/* What a trainer and predict read of a data set, every row of every
 * block, checked against the promises of hog_dataset_open. */
static void check_rows(const hog_dataset *ds, hog_dataset_info *info)
{
    hog_dataset_get_info(ds, info);
    FUZZ_CHECK(info->format == HOG_FORMAT_BINARY && info->rows > 0 && info->blocks > 0);
    FUZZ_CHECK(info->rows_per_block >= 1 && info->rows_per_block <= HOG_MAX_ROWS_PER_BLOCK);
    FUZZ_CHECK((info->rows + info->rows_per_block - 1) / info->rows_per_block == info->blocks);
    FUZZ_CHECK(info->features <= (uint64_t)UINT32_MAX + 1);
    uint64_t nnz = 0;
    for (uint64_t i = 0; i < info->rows; i++) {
        hog_row row = hog_dataset_row(ds, i);
        for (uint32_t k = 0; k < row.nnz; k++) {
            FUZZ_CHECK(row.index[k] < info->features && isfinite(row.value[k]));
            FUZZ_CHECK(k == 0 || row.index[k] > row.index[k - 1]);
        }
        FUZZ_CHECK(isfinite(row.label) && isfinite(row.weight) && row.weight >= 0);
        FUZZ_CHECK(info->weighted || row.weight == 1.0f);
        nnz += row.nnz;
    }
    FUZZ_CHECK(nnz == info->nnz);
    /* every value's field is below the count; no count, no fields */
    const int fields = hog_dataset_fields(ds);
    FUZZ_CHECK(fields >= 0 && fields <= (int)HOG_MAX_FIELDS);
    for (uint32_t b = 0; b < info->blocks; b++) {
        const hog_block *blk = &ds->blocks[b];
        FUZZ_CHECK((blk->field != NULL) == (fields > 0));
        for (uint32_t k = 0; blk->field && k < blk->nnz; k++)
            FUZZ_CHECK(blk->field[k] < (uint32_t)fields);
    }
    FUZZ_CHECK(hog_dataset_bytes(ds) == info->file_bytes);
    for (uint32_t b = 0; b < info->blocks; b++) {
        hog_dataset_willneed(ds, b);
        hog_dataset_drop(ds, b, 1);
    }
}

/* The same rows, one row at a time. */
static void check_same_rows(const hog_dataset *a, const hog_dataset *b, uint64_t rows)
{
    for (uint64_t i = 0; i < rows; i++) {
        hog_row x = hog_dataset_row(a, i), y = hog_dataset_row(b, i);
        FUZZ_CHECK(x.nnz == y.nnz && memcmp(&x.label, &y.label, 4) == 0 && memcmp(&x.weight, &y.weight, 4) == 0);
        FUZZ_CHECK(x.nnz == 0 || (memcmp(x.index, y.index, 4ull * x.nnz) == 0 &&
                                  memcmp(x.value, y.value, 4ull * x.nnz) == 0));
    }
}

static int out_fd = -1;
static char out_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    hog_read_params p = hog_read_params_default();
    p.format = HOG_FORMAT_BINARY;
    hog_dataset *ds = NULL;
    char err[512] = "";
    int rc = hog_dataset_open(path, &p, &ds, err, sizeof(err));

    /* The header alone, as a cache's freshness check reads it: refused when
     * the open was refused for something in the header. */
    hog_hgd_source src;
    int has;
    char err2[512] = "";
    int src_rc = hog_hgd_source_read(path, &src, &has, err2, sizeof(err2));
    FUZZ_CHECK(rc < 0 || src_rc == 0);
    if (src_rc < 0)
        fuzz_check_message(err2, path);
    FUZZ_CHECK(src_rc < 0 || has == (size >= HEAD && !version_1(data) &&
                                     (hog_get_u32(data + H_FLAGS) & HOG_HGD_SOURCE) != 0));

    /* Opened to be checked as read: the same verdict, once every block is
     * checked, as the open that checks them all (the message may name
     * another block's fault or the feature count, found in another order). */
    hog_read_params lazy_p = p;
    lazy_p.verify = HOG_VERIFY_AT_FIRST_READ;
    hog_dataset *lazy = NULL;
    char err3[512] = "";
    int lazy_rc = hog_dataset_open(path, &lazy_p, &lazy, err3, sizeof(err3));
    if (lazy_rc == 0) {
        for (uint32_t b = lazy->info.blocks; b-- > 0 && lazy_rc == 0;) /* last first: not file order */
            lazy_rc = hog_dataset_check(lazy, b, err3, sizeof(err3));
        if (lazy_rc == 0)
            lazy_rc = hog_dataset_verify(lazy, err3, sizeof(err3));
        hog_dataset_close(lazy);
    }
    FUZZ_CHECK((rc == 0) == (lazy_rc == 0));
    if (lazy_rc < 0)
        fuzz_check_message(err3, path);

    if (rc < 0) {
        FUZZ_CHECK(ds == NULL);
        FUZZ_CHECK(rc == HOG_EMAGIC || rc == HOG_EVERSION || rc == HOG_ETRUNCATED || rc == HOG_ECHECKSUM ||
                   rc == HOG_ECORRUPT || rc == HOG_EEMPTY || rc == -EFBIG || rc == -ENOMEM);
        fuzz_check_message(err, path);
        fuzz_check_fds();
        return 0;
    }
    hog_dataset_info info;
    check_rows(ds, &info);
    FUZZ_CHECK(info.file_bytes == size);
    /* what a trainer takes from the summary holds of every row: its label is listed */
    const hog_hgd_summary *sm = &ds->summary;
    FUZZ_CHECK(sm->degrees == 0 || sm->degrees == info.features);
    for (uint64_t i = 0; sm->labels && sm->labels != HOG_HGD_MANY_LABELS && i < info.rows; i++) {
        const double y = hog_dataset_row(ds, i).label;
        uint32_t k = 0;
        while (k < sm->labels && sm->label[k] != y)
            k++;
        FUZZ_CHECK(k < sm->labels);
    }

    /* the class names number every row's label, and each is one the map finds */
    uint32_t named = 0; /* names some row has */
    uint8_t *on_row = ds->names.n ? calloc(ds->names.n, 1) : NULL;
    for (uint64_t i = 0; ds->names.n && i < info.rows; i++) {
        const float y = hog_dataset_row(ds, i).label;
        FUZZ_CHECK(y >= 0 && y < (float)ds->names.n && y == (float)(uint32_t)y);
        if (on_row && !on_row[(uint32_t)y]++)
            named++;
    }
    free(on_row);
    for (uint32_t k = 0; k < ds->names.n; k++) {
        const char *name = hog_idmap_name(&ds->names, k);
        const size_t len = strlen(name);
        FUZZ_CHECK(len >= 1 && len <= HOG_LABEL_NAME_MAX && hog_idmap_find(&ds->names, name, len) == (int64_t)k);
    }

    /* Written again (as convert does with binary input) and reopened: the
     * same rows, and for version 2 the same fingerprint. */
    fuzz_file_at(&out_fd, out_path, "", 0);
    hog_atomic_file f = {.fd = out_fd};
    rc = hog_hgd_write(ds, NULL, &f);
    if (named < ds->names.n) { /* a summary that listed a name no row has: refused, not written unreadable */
        FUZZ_CHECK(rc == HOG_ECORRUPT);
        hog_dataset_close(ds);
        fuzz_check_fds();
        return 0;
    }
    FUZZ_CHECK(rc == 0);
    hog_dataset *again = NULL;
    rc = hog_dataset_open(out_path, &p, &again, err, sizeof(err));
    FUZZ_CHECK(rc == 0);
    hog_dataset_info info2;
    check_rows(again, &info2);
    FUZZ_CHECK(info2.rows == info.rows && info2.features == info.features && info2.nnz == info.nnz &&
               info2.blocks == info.blocks && info2.rows_per_block == info.rows_per_block &&
               info2.weighted == info.weighted && info2.index_base == info.index_base);
    FUZZ_CHECK(version_1(data) || info2.fingerprint == info.fingerprint);
    check_same_rows(ds, again, info.rows);
    FUZZ_CHECK(hog_dataset_fields(again) == hog_dataset_fields(ds));
    for (uint32_t b = 0; ds->fields && b < info.blocks; b++)
        FUZZ_CHECK(memcmp(again->blocks[b].field, ds->blocks[b].field, 2ull * ds->blocks[b].nnz) == 0);
    FUZZ_CHECK(again->names.n == ds->names.n && again->names.names_len == ds->names.names_len &&
               (ds->names.n == 0 || memcmp(again->names.names, ds->names.names, ds->names.names_len) == 0));
    hog_dataset_close(again);
    hog_dataset_close(ds);
    fuzz_check_fds();
    return 0;
}
