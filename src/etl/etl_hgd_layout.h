/* etl_hgd_layout.h: the .hgd's byte layout (header fields, table columns, the checksums over them) and the vector reductions that its writer and its checks share. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_ETL_HGD_LAYOUT_H
#define HOG_ETL_HGD_LAYOUT_H

#include <string.h>

#include "etl.h"

/*
 * Binary dataset, version 7 (.hgd). All integers and floats little-endian.
 *
 *   offset  bytes  field
 *   0       8      magic "HOGDATA\0"
 *   8       4      version (7 with hash bits, else 6 with fields, else 5 with
 *                  feature names, else 4
 *                  with class names, else 3; versions 1 and 2 are read too,
 *                  see below)
 *   12      4      header_bytes (4096)
 *   16      8      rows
 *   24      8      features       (largest index + 1)
 *   32      8      nnz
 *   40      4      blocks
 *   44      4      rows_per_block (every block has this many rows but the last)
 *   48      4      flags          (bit 0: weighted; bit 1: the indices were 1-based in
 *                                  the libsvm text converted, and are stored minus one;
 *                                  bit 2: a cache, with the source record at 96;
 *                                  bit 3: the summary, placed at 224;
 *                                  bit 4: class names, placed at 248 (version 4);
 *                                  bit 5: feature names, placed at 272 (version 5);
 *                                  bit 6: a field per non-zero, their count at
 *                                  296 (version 6);
 *                                  bit 7: the text's hash bits at 300 (version 7);
 *                                  a reader rejects unknown bits)
 *   52      4      block_align    (4096)
 *   56      8      table_offset   (multiple of 8, after the last block)
 *   64      8      file_bytes     (the whole file; a shorter file is truncated)
 *   72      8      fingerprint    (hog_etl_fingerprint over the block table)
 *   80      8      table_sum      (XXH3-64, seed 0, of the block table)
 *   88      8      header_sum     (XXH3-64, seed 0, of bytes 0..4095 with this field zero)
 *   96      4000   zero but for the source record (flags bit 2, 96..223), the
 *                  summary's place (flags bit 3, 224..247), the class
 *                  names' place (flags bit 4, 248..271), the feature
 *                  names' place (flags bit 5, 272..295), the field
 *                  count (flags bit 6, 296..299) and the hash bits (flags
 *                  bit 7, 300..303):
 *   96      8        source bytes   (the size of the file the cache was made from)
 *   104     8        source mtime   (its modification time, ns since the epoch, signed)
 *   112     8        source inode
 *   120     8        source device
 *   128     8        source sample  (hog_hash64 of its first MiB, seed HOG_HGD_SAMPLE_SEED,
 *                                    chained into the last MiB when the file is longer)
 *   136     88       read options   (11 u64, in hog_hgd_source's order: the
 *                                    hog_read_params fields that shape the rows, the
 *                                    strings as their hog_hash64, feature_names as
 *                                    bit 16 of format; zero for binary input)
 *   224     8        summary_offset (multiple of 8, after the last block, before the table)
 *   232     8        summary_bytes
 *   240     8        summary_sum    (XXH3-64, seed 0, of the summary's bytes)
 *   248     8        names_offset   (multiple of 8, after the summary, before the table)
 *   256     8        names_bytes
 *   264     8        names_sum      (XXH3-64 of the names' count, seed 0, then of
 *                                    the names themselves, seeded with that)
 *   272     8        fnames_offset  (multiple of 8, after the sections before it,
 *                                    before the table)
 *   280     8        fnames_bytes
 *   288     8        fnames_sum     (XXH3-64, seed 0, of the feature names' bytes)
 *   296     4        fields         (1 to HOG_MAX_FIELDS: every field below it)
 *   300     4        hash_bits      (1 to 31: the hog_read_params.hash_bits the text
 *                                    was read with, which text to score with a model
 *                                    trained on the file is hashed with too)
 *
 *   blocks, each at a multiple of block_align, padded with zeros to one:
 *     u32 ptr[rows + 1]   ptr[0] = 0, non-decreasing, ptr[rows] = nnz
 *     u32 index[nnz]      strictly increasing within a row, < features
 *     f32 value[nnz]      finite
 *     f32 label[rows]     finite
 *     f32 weight[rows]    weighted files only: finite, not negative
 *     u16 field[nnz]      files with fields only (flags bit 6): each
 *                         non-zero's field, < fields
 *
 *   summary at summary_offset (flags bit 3): what training must know of
 *   every row before its first step, counted once when the file is written:
 *     u32 labels          the distinct label values, or HOG_HGD_MANY_LABELS
 *                         when there are more than HOG_HGD_SUMMARY_LABELS
 *     u32 degrees         features, or 0 when there are more than
 *                         HOG_HGD_SUMMARY_FEATURES (no degrees kept)
 *     f64 label[labels]   ascending, finite (none when MANY)
 *     u64 count[labels]   the rows with each, every one at least 1, summing to rows
 *     u32 degree[degrees] per feature, the rows with a non-zero there
 *   summary_bytes is 8 + 16 * labels + 4 * degrees exactly (labels read as
 *   0 when MANY). A reader that uses the labels checks each row's label
 *   against them as it checks its block, so a crafted summary cannot give
 *   the trainer a class it does not know.
 *
 *   class names at names_offset (flags bit 4, version 4): the labels were
 *   strings (a CSV column of "setosa", "versicolor", ...), numbered in the
 *   order they first appeared; label i is name i:
 *     u32 names           1 to HOG_MAX_LABEL_NAMES
 *     names, each 1 to HOG_LABEL_NAME_MAX bytes and a NUL, distinct, back
 *     to back in label order
 *   names_bytes is 4 + the names' bytes with their NULs exactly. A file
 *   with names has a summary (flags bit 3) whose labels are exactly 0, 1,
 *   ..., names - 1, so every row's label is a name's number.
 *
 *   feature names at fnames_offset (flags bit 5, version 5): what the text
 *   called its features (hog_fnames, joined):
 *     u32 count           1 to features
 *     count entries, each u32 index (< features, strictly ascending), then
 *     the name (at least 1 byte) and a NUL
 *   fnames_bytes is 4 + the entries' bytes exactly.
 *
 *   block table at table_offset, one 32-byte entry per block:
 *     u64 offset, u64 bytes (padded size), u32 rows, u32 nnz,
 *     u64 sum: XXH3-64 chained over the block's arrays in the order above,
 *              s = 0, then s = XXH3(array, seed s) for each array
 *
 * Every block starts on a 4096-byte boundary so it can be memory-mapped or
 * read with O_DIRECT on its own; blocks are the unit of shuffling, streaming
 * and sharding. The sum is chained over the arrays, not taken over the
 * packed bytes, so a writer can checksum and write the arrays where they
 * are, without packing them first.
 *
 * Fields (version 6) are what factorisation machines that are field-aware
 * (FFM) pair features by: LIBFFM text's "field:index:value", Vowpal
 * Wabbit's namespaces. A field is a u16: more than 256 fields are common
 * in CSV columns, more than 65,536 in no FFM (its model holds a latent
 * vector per feature and field), and a wider type would take a fifth more
 * of each non-zero's 10 bytes. Version 6 has no hash bits: flags bit 7 and
 * bytes 300..303 are zero; a writer still writes it (or older) for text not
 * hashed by that setting. Version 5 has no fields: flags bit 6 and
 * bytes 296..299 are zero; a writer still writes it (or older) for data
 * without them, byte for byte.
 * Version 4 has no feature names: flags bit 5 and bytes 272..295 are zero;
 * a writer still writes it for data without them, byte for byte.
 * Version 3 has no class names: flags bit 4 and bytes 248..271 are zero; a
 * writer still writes it for numeric labels, byte for byte, so older
 * builds read such files. Version 2 has no summary either: flags bit 3 and
 * bytes 224..247 are zero, and a trainer counts what it needs in a pass of
 * its own. Version 1 differs
 * from 2 only in its checksums, which are zlib's CRC-32: the
 * header has u32 table_crc at 80 and u32 header_crc at 84 (zero from 88);
 * a table entry has u32 crc (of the block's unpadded bytes) at 24 and u32
 * reserved (0) at 28; flags are 0. It is read, never written.
 */


/* The file format is little-endian and the in-memory blocks are the file's
 * bytes, so a block read from text and one mapped from disk have the same CRC.
 * Converting on load would cost a copy of every mapped block; we refuse
 * big-endian hosts instead. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hogtrain's binary dataset format needs a little-endian host"
#endif
_Static_assert(sizeof(float) == 4, "f32 values must be 4 bytes");
_Static_assert(sizeof(uint32_t) == 4 && sizeof(uint64_t) == 8, "fixed-width integers");
_Static_assert(HOG_HGD_HEADER_BYTES % HOG_HGD_ALIGN == 0, "blocks start aligned after the header");

/* ===================================================================== *
 *  Header and table layout (the byte map above)
 * ===================================================================== */

enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_HEADER_BYTES = 12,
    H_ROWS = 16,
    H_FEATURES = 24,
    H_NNZ = 32,
    H_BLOCKS = 40,
    H_ROWS_PER_BLOCK = 44,
    H_FLAGS = 48,
    H_BLOCK_ALIGN = 52,
    H_TABLE_OFFSET = 56,
    H_FILE_BYTES = 64,
    H_FINGERPRINT = 72,
    H_TABLE_SUM = 80,  /* version 1: u32 table CRC */
    H_HEADER_SUM = 88,
    H_END = 96,        /* zero from here on, or the source record (flags bit 2) */
    H_SOURCE_BYTES = 96,
    H_SOURCE_MTIME = 104,
    H_SOURCE_INODE = 112,
    H_SOURCE_DEVICE = 120,
    H_SOURCE_SAMPLE = 128,
    H_SOURCE_READ = 136,
    H_SOURCE_END = H_SOURCE_READ + 8 * HOG_HGD_READ_FIELDS, /* 224: where the summary's place begins */
    H_SUMMARY_OFFSET = 224,
    H_SUMMARY_BYTES = 232,
    H_SUMMARY_SUM = 240,
    H_SUMMARY_END = 248, /* where the class names' place begins */
    H_NAMES_OFFSET = 248,
    H_NAMES_BYTES = 256,
    H_NAMES_SUM = 264,
    H_NAMES_END = 272, /* where the feature names' place begins */
    H_FNAMES_OFFSET = 272,
    H_FNAMES_BYTES = 280,
    H_FNAMES_SUM = 288,
    H_FNAMES_END = 296, /* where the field count's place begins */
    H_FIELDS = 296,
    H_FIELDS_END = 300, /* where the hash bits' place begins */
    H_HASH_BITS = 300,
    H_HASH_BITS_END = 304, /* zero from here on */
    H1_HEADER_CRC = 84, /* version 1 */
    H1_END = 88,
};

enum { T_OFFSET = 0, T_BYTES = 8, T_ROWS = 16, T_NNZ = 20, T_SUM = 24, T1_RESERVED = 28 };

_Static_assert(H_SOURCE_END == H_SUMMARY_OFFSET, "the summary's place follows the source record");
_Static_assert(H_SUMMARY_END == H_NAMES_OFFSET, "the class names' place follows the summary's");
_Static_assert(H_NAMES_END == H_FNAMES_OFFSET, "the feature names' place follows the class names'");
_Static_assert(H_FNAMES_END == H_FIELDS, "the field count's place follows the feature names'");
_Static_assert(H_FIELDS_END == H_HASH_BITS, "the hash bits' place follows the field count's");
_Static_assert(HOG_MAX_LABEL_NAMES <= HOG_HGD_SUMMARY_LABELS, "a file with class names lists their numbers");

/* The magic, "HOGDATA" and its NUL: HGD_MAGIC_BYTES bytes. */
#define HGD_MAGIC ((const uint8_t *)HOG_HGD_MAGIC)
#define HGD_MAGIC_BYTES 8

/* The summary's size for its counts (labels read as 0 when MANY). */
static inline uint64_t summary_size(uint32_t labels, uint32_t degrees)
{
    return 8 + 16 * (uint64_t)(labels == HOG_HGD_MANY_LABELS ? 0 : labels) + 4 * (uint64_t)degrees;
}

/* The summary's sum, chained over its arrays as a block's is. */
static inline uint64_t summary_sum(const uint8_t *head, const hog_hgd_summary *s)
{
    const uint64_t n = s->labels == HOG_HGD_MANY_LABELS ? 0 : s->labels;
    uint64_t sum = hog_hash64(head, 8, 0);
    sum = hog_hash64(s->label, n * sizeof(double), sum);
    sum = hog_hash64(s->count, n * sizeof(uint64_t), sum);
    return hog_hash64(s->degree, (uint64_t)s->degrees * sizeof(uint32_t), sum);
}

/* The header's own checksum, over its bytes with the checksum field zero. */
static inline uint64_t header_sum(const uint8_t *h, uint32_t version)
{
    uint8_t copy[HOG_HGD_HEADER_BYTES];
    memcpy(copy, h, sizeof(copy));
    if (version == 1) {
        memset(copy + H1_HEADER_CRC, 0, 4);
        return hog_crc32(0, copy, sizeof(copy));
    }
    memset(copy + H_HEADER_SUM, 0, 8);
    return hog_hash64(copy, sizeof(copy), 0);
}

static inline uint64_t table_sum(const uint8_t *table, size_t bytes, uint32_t version)
{
    return version == 1 ? hog_crc32(0, table, bytes) : hog_hash64(table, bytes, 0);
}

/* The class names' sum: of their count, then of the names, seeded with it. */
static inline uint64_t names_sum(const uint8_t *count, const void *names, uint64_t names_len)
{
    return hog_hash64(names, names_len, hog_hash64(count, 4, 0));
}

/* The source record in the header's bytes (the byte map above), and back. */
static inline void put_source(uint8_t *h, const hog_hgd_source *src)
{
    hog_put_u64(h + H_SOURCE_BYTES, src->bytes);
    hog_put_u64(h + H_SOURCE_MTIME, (uint64_t)src->mtime_ns);
    hog_put_u64(h + H_SOURCE_INODE, src->inode);
    hog_put_u64(h + H_SOURCE_DEVICE, src->device);
    hog_put_u64(h + H_SOURCE_SAMPLE, src->sample);
    for (unsigned i = 0; i < HOG_HGD_READ_FIELDS; i++)
        hog_put_u64(h + H_SOURCE_READ + 8 * i, src->read[i]);
}

static inline void get_source(const uint8_t *h, hog_hgd_source *src)
{
    src->bytes = hog_get_u64(h + H_SOURCE_BYTES);
    src->mtime_ns = (int64_t)hog_get_u64(h + H_SOURCE_MTIME);
    src->inode = hog_get_u64(h + H_SOURCE_INODE);
    src->device = hog_get_u64(h + H_SOURCE_DEVICE);
    src->sample = hog_get_u64(h + H_SOURCE_SAMPLE);
    for (unsigned i = 0; i < HOG_HGD_READ_FIELDS; i++)
        src->read[i] = hog_get_u64(h + H_SOURCE_READ + 8 * i);
}

/* ===================================================================== *
 *  Blocks: their arrays, the fingerprint's step
 * ===================================================================== */

#define FP_SEED 0x686f676461746131ULL /* "hogdata1" */

/* Folded incrementally, so a streaming writer needs no list of blocks. */
static inline uint64_t fp_step(uint64_t h, uint32_t rows, uint32_t nnz, uint64_t sum)
{
    h = hog_mix64(h ^ (((uint64_t)rows << 32) | nnz));
    return hog_mix64(h ^ sum);
}

/* The arrays of a block in file order, as (pointer, bytes) pairs. */
typedef struct block_arrays {
    const void *p[6];
    size_t len[6];
    unsigned n;
} block_arrays;

static inline void arrays_of(block_arrays *a, const hog_block *b)
{
    const size_t rows = b->rows, nnz = b->nnz;
    a->p[0] = b->ptr, a->len[0] = 4 * (rows + 1);
    a->p[1] = b->index, a->len[1] = 4 * nnz;
    a->p[2] = b->value, a->len[2] = 4 * nnz;
    a->p[3] = b->label, a->len[3] = 4 * rows;
    a->n = 4;
    if (b->weight)
        a->p[a->n] = b->weight, a->len[a->n++] = 4 * rows;
    if (b->field)
        a->p[a->n] = b->field, a->len[a->n++] = 2 * nnz;
}

/* The reductions of hog_block_sound and the writer's summary, four
 * elements at a time in the compiler's portable vectors (SSE on x86-64,
 * NEON on arm64), the rest one by one. Loads go through memcpy: the arrays
 * are 4-byte aligned. */
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

static inline v4u v4u_at(const uint32_t *p)
{
    v4u v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static inline uint32_t v4u_or(v4u v)
{
    return v[0] | v[1] | v[2] | v[3];
}

/* The largest of a[0..n), 0 for none. */
static inline uint32_t lanes_max(const uint32_t *a, uint32_t n)
{
    v4u m = {0, 0, 0, 0};
    uint32_t k = 0, most = 0;
    for (; k + 4 <= n; k += 4) {
        const v4u x = v4u_at(a + k), gt = (v4u)(x > m);
        m = (x & gt) | (m & ~gt);
    }
    for (unsigned l = 0; l < 4; l++)
        most = m[l] > most ? m[l] : most;
    for (; k < n; k++)
        most = a[k] > most ? a[k] : most;
    return most;
}

/* Checks every block of ds (etl_hgd_check.c), on several threads, each
 * block's pages dropped after, and out of the page cache with drop_cache;
 * then the header's feature count against the largest index + 1.
 * Returns 0, HOG_ECHECKSUM or HOG_ECORRUPT (err names file and block). */
int hog_hgd_check_blocks(const char *path, const hog_dataset *ds, uint64_t features, int drop_cache,
                         char *err, size_t err_len);

#endif
