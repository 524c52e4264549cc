/* etl.h: the private interface of the data layer: the in-memory block layout, the row builder, the binary format and the text readers. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_ETL_H
#define HOG_ETL_H

#include <stdatomic.h>
#include <stdint.h>

#include "../util/util.h"

/* Binary dataset (.hgd), version 7: its byte map, field by field, is the
 * comment at the top of etl_hgd_layout.h, beside the offsets that code it. */
#define HOG_HGD_MAGIC "HOGDATA"
#define HOG_HGD_VERSION 7u
#define HOG_HGD_VERSION_FIELDS 6u  /* what a writer writes for fields without hash bits */
#define HOG_HGD_VERSION_FNAMES 5u  /* what a writer writes for feature names without fields */
#define HOG_HGD_VERSION_CLASSES 4u /* what a writer writes for class names without feature names */
#define HOG_HGD_VERSION_NUMBERS 3u /* what a writer writes for numeric labels */
#define HOG_HGD_WEIGHTED 1u  /* flags bit 0 */
#define HOG_HGD_ONE_BASED 2u /* flags bit 1: from libsvm text with 1-based indices */
#define HOG_HGD_SOURCE 4u    /* flags bit 2: a cache, carrying the record of its source */
#define HOG_HGD_SUMMARY 8u   /* flags bit 3: the summary of labels and degrees (version 3) */
#define HOG_HGD_NAMES 16u    /* flags bit 4: class names (version 4) */
#define HOG_HGD_FNAMES 32u   /* flags bit 5: feature names (version 5) */
#define HOG_HGD_FIELDS 64u   /* flags bit 6: a field per non-zero (version 6) */
#define HOG_HGD_HASHED 128u  /* flags bit 7: the hash bits of the text converted (version 7) */
/* The most fields a data set may have: a field is a u16 (see above). */
#define HOG_MAX_FIELDS 65536u
#define HOG_HGD_SUMMARY_LABELS 65536u          /* the most label values a summary lists */
#define HOG_HGD_MANY_LABELS 0xffffffffu        /* a summary's label count when there are more */
#define HOG_HGD_SUMMARY_FEATURES (1u << 24)    /* the most features a summary keeps degrees of */
#define HOG_HGD_HEADER_BYTES 4096u
#define HOG_HGD_ALIGN 4096u
#define HOG_HGD_TABLE_ENTRY 32u
#define HOG_DEFAULT_ROWS_PER_BLOCK 4096u
/* The most rows a block may hold, from a file or a caller: the trainer cuts
 * blocks into segments of 1024 rows with 32-bit counts, and a block's row
 * offsets are 32-bit. 2^24 is far above any useful size (a block is the
 * unit of shuffling and of read-ahead). */
#define HOG_MAX_ROWS_PER_BLOCK (1u << 24)

/* What a cache records of the file it was made from (flags bit 2), so that
 * a later run can tell whether the file is still the one it holds: a
 * file replaced, rewritten in place (even with its old time put back, as
 * `cp -p` does) or read with other options is not. */
#define HOG_HGD_READ_FIELDS 11u
#define HOG_HGD_SAMPLE_BYTES (1u << 20) /* the source's first and last MiB are hashed */
#define HOG_HGD_SAMPLE_SEED 0x686f67736f757263ULL /* "hogsourc" */
typedef struct hog_hgd_source {
    uint64_t bytes;
    int64_t mtime_ns;
    uint64_t inode, device;
    uint64_t sample;
    /* hog_read_params' format, delimiter, header, label_index, label_name,
     * ignore, categorical, rows_per_block, hash_bits, index_base, on_error
     * (the strings hashed, 0 for NULL); all zero for a binary source */
    uint64_t read[HOG_HGD_READ_FIELDS];
} hog_hgd_source;

/* A version-3 file's summary (see above), its arrays in the mapping. */
typedef struct hog_hgd_summary {
    uint32_t labels;         /* 0: no summary; HOG_HGD_MANY_LABELS: more than can be listed */
    uint32_t degrees;        /* the features it has degrees of (0: none) */
    const double *label;     /* ascending */
    const uint64_t *count;   /* rows per label */
    const uint32_t *degree;  /* rows with a non-zero, per feature */
} hog_hgd_summary;

/* Names <-> dense ids. Names are NUL-terminated, back to back in `names`;
 * name i starts at off[i] (off[n] is the end). `slots` is an open-addressing
 * table of id + 1 (0: empty), cap a power of two, at most half full. The
 * names and offsets may point into a mapped file (owned == 0). */
typedef struct hog_idmap {
    uint32_t n;
    uint32_t *off;
    char *names;
    uint64_t names_len; /* bytes used in names */
    size_t names_cap;   /* bytes allocated (owned only) */
    size_t off_cap;     /* entries allocated in off (owned only) */
    uint32_t *slots;
    uint32_t cap;
    int owned;
} hog_idmap;

/* Feature names (etl_fnames.c): what text calls its features (a CSV
 * header's numeric columns and "column=value" of categorical ones, Vowpal
 * Wabbit's "namespace^feature"), as (index, name) pairs. A set collects
 * the distinct pairs (hog_fnames_add: per parser thread, then merged); its
 * joined form (hog_fnames_join) has one entry per named index, ascending,
 * the names that hash to one index sorted (strcmp) and joined by
 * HOG_FNAMES_SEP: what a data set, a .hgd and a model keep. Name i is
 * text + off[i], NUL-terminated (off[n] is the end). Memory: a set holds
 * at most HOG_FEATURE_NAMES_MAX names of at most HOG_FEATURE_NAME_MAX
 * bytes; names past either are not kept (dropped counts them), their
 * features stay unnamed. */
#define HOG_FEATURE_NAME_MAX 1024u
#define HOG_FEATURE_NAMES_MAX (1u << 20)
#define HOG_FNAMES_SEP '|'
typedef struct hog_fnames {
    uint32_t n;
    uint32_t *index;
    uint64_t *off;
    char *text;
    uint64_t text_len;
    size_t text_cap, cap, off_cap; /* bytes of text, entries of index and of off allocated */
    struct hog_fname_slot *slots;  /* a set's table, slots_cap a power of two; NULL when joined */
    uint32_t slots_cap;
    uint64_t dropped;              /* names not kept (too many, too long) */
} hog_fnames;

/* Adds the name a, then sep (0: none), then b to index, unless the pair is
 * in the set already. Returns 0 or -ENOMEM. */
int hog_fnames_add(hog_fnames *f, uint32_t index, const char *a, size_t alen, char sep, const char *b,
                   size_t blen);
/* Adds src's pairs to the set dst; with split, src is joined and each of
 * its names split at HOG_FNAMES_SEP (a warm start's model names). Returns
 * 0 or -ENOMEM. */
int hog_fnames_merge(hog_fnames *dst, const hog_fnames *src, int split);
/* The joined form of the set f into *out (new, owned), of the indices
 * below `below` (the features a data set has: a name whose feature never
 * held a value past the last one that did is left out). Returns 0 or
 * -ENOMEM. */
int hog_fnames_join(const hog_fnames *f, uint64_t below, hog_fnames *out);
/* A copy of the joined src into *dst (new, owned). Returns 0 or -ENOMEM. */
int hog_fnames_copy(hog_fnames *dst, const hog_fnames *src);
/* The joined name of index, or NULL when it has none (binary search). */
const char *hog_fnames_find(const hog_fnames *f, uint32_t index);
void hog_fnames_free(hog_fnames *f);
/* The joined form in a file: u32 count, then per entry u32 index, the
 * name and a NUL, indices strictly ascending. hog_fnames_bytes is its
 * size, hog_fnames_put writes it at p. */
uint64_t hog_fnames_bytes(const hog_fnames *f);
void hog_fnames_put(const hog_fnames *f, uint8_t *p);
/* Reads and checks those bytes (p[0..bytes), at file offset `at`) into
 * *out (owned): a count of 1 to what the bytes and features hold, each
 * index below features and above the one before, each name non-empty and
 * ended by a NUL, no byte after the last. Returns 0, HOG_ECORRUPT (err:
 * "path: byte N: ...") or -ENOMEM. */
int hog_fnames_read(const char *path, const uint8_t *p, uint64_t bytes, uint64_t at, uint64_t features,
                    hog_fnames *out, char *err, size_t len);

/* One block of rows in CSR form: a view into a mapping or into heap memory. */
typedef struct hog_block {
    uint32_t rows;
    uint32_t nnz;
    uint64_t sum; /* the table's checksum of the block (a CRC-32 in version 1 files) */
    const uint32_t *ptr;
    const uint32_t *index;
    const float *value;
    const float *label;
    const float *weight; /* importance weights, or NULL when every row weighs 1 */
    const uint16_t *field; /* each non-zero's field, or NULL when the data has no fields */
} hog_block;

/* Row r of block b. */
static inline hog_row hog_block_row(const hog_block *b, uint32_t r)
{
    const uint32_t s = b->ptr[r];
    return (hog_row){b->index + s, b->value + s, b->ptr[r + 1] - s, b->label[r], b->weight ? b->weight[r] : 1.0f};
}

/* Row r's fields (one a value), or NULL when the block has none. */
static inline const uint16_t *hog_block_fields(const hog_block *b, uint32_t r)
{
    return b->field ? b->field + b->ptr[r] : NULL;
}

struct hog_dataset {
    hog_dataset_info info;
    hog_block *blocks;     /* info.blocks of them */
    void *map;             /* the mapping of a binary dataset, or NULL */
    size_t map_bytes;
    void **heap;           /* heap buffers owned (one per block), or NULL */
    uint32_t heap_count;
    int fd;                /* the mapped file, kept for posix_fadvise; -1 if none */
    uint32_t version;      /* the format version of the blocks' checksums (1: CRC-32) */
    char *skip_report;     /* the first skipped lines' locations, or NULL */
    char *path;            /* the mapped file's path, for hog_dataset_changed_path; or NULL */
    uint64_t mapped_size;  /* the mapped file's size and modification time when it was opened */
    int64_t mapped_mtime_ns;
    _Atomic unsigned char *checked; /* opened with HOG_VERIFY_AT_FIRST_READ: per block, 1 once
                                       checked (hog_dataset_check); NULL: every block is sound */
    _Atomic uint64_t checked_top;   /* the largest feature index + 1 of the blocks checked so far */
    hog_hgd_summary summary;        /* labels 0: none (text, arrays, an older .hgd) */
    hog_idmap names;                /* class names (labels that were strings), label i is name i;
                                       n 0: the labels are numbers */
    hog_fnames fnames;              /* feature names, joined (n 0: none) */
    uint32_t fields;                /* every block's fields are below it; 0: no fields (hog_block.field
                                       NULL) */
    unsigned hash_bits;             /* the hog_read_params.hash_bits its text was read with (0: none, or
                                       not known) */
};

/* Checks block b of ds before its rows are read, once: nothing for a data
 * set whose blocks are all sound (checked at open, or built here), else
 * the block's checksum, offsets, indices, values and labels on its first
 * call (etl_hgd_check.c). Thread-safe: two threads may both check a block the
 * first time. Errors: HOG_ECHECKSUM, HOG_ECORRUPT, err naming the file and
 * the block. */
int hog_dataset_check_block(const hog_dataset *ds, uint32_t b, char *err, size_t err_len);
/* Whether block b passes every check of a block's arrays (offsets,
 * indices below features and increasing in each row, values, labels and
 * weights finite, weights not negative, labels among sm's when it lists
 * them, fields below `fields` where the block has them; not the
 * checksum), as vector reductions: 0 says only that one
 * failed, which a row-by-row walk then names. *top gets the largest index
 * + 1. sm may be a zeroed summary. */
int hog_block_sound(const hog_block *b, uint64_t features, uint32_t fields, const hog_hgd_summary *sm,
                    uint64_t *top);
/* Block b of ds, read again into view (a copy of its bytes elsewhere, as
 * the block ring reads them): every check of hog_dataset_check_block on the
 * copy. Errors as there. */
int hog_dataset_check_view(const hog_dataset *ds, uint32_t b, const hog_block *view, char *err, size_t err_len);
/* The error of block b, which a reader's hog_dataset_check refused: its
 * check again, for the message (HOG_ECHECKSUM naming the block should the
 * file now pass it). */
int hog_dataset_check_failed(const hog_dataset *ds, uint32_t b, char *err, size_t err_len);
static inline int hog_dataset_check(const hog_dataset *ds, uint32_t b, char *err, size_t err_len)
{
    if (!ds->checked || atomic_load_explicit(&ds->checked[b], memory_order_acquire))
        return 0;
    return hog_dataset_check_block(ds, b, err, err_len);
}

/* Mapped data sets are listed while open, for hog_dataset_changed_path
 * (etl_hgd.c): hog_hgd_forget takes ds off the list (hog_dataset_close). */
void hog_hgd_forget(const hog_dataset *ds);

/* Out-of-core scans (etl_hgd_pages.c), for the block source and the check
 * at open: no reader outside the data layer calls these. A data set larger
 * than the memory it may use is walked block by block: hog_dataset_willneed starts reading a block ahead of use
 * (MADV_WILLNEED: asynchronous read-ahead), hog_dataset_drop gives a finished
 * block's pages back (MADV_DONTNEED for the process and, with cache set,
 * POSIX_FADV_DONTNEED for the page cache), so resident memory stays at the
 * blocks in use. Both do nothing for a data set in heap memory. Thread-safe. */
void hog_dataset_willneed(const hog_dataset *ds, uint32_t block);
void hog_dataset_drop(const hog_dataset *ds, uint32_t block, int cache);
/* Bytes a data set occupies when fully resident (etl_dataset.c). */
uint64_t hog_dataset_bytes(const hog_dataset *ds);
/* Frees what a mapped data set made by a spilled builder still holds of
 * the blocks built before the spill (see hog_builder_spill): their views
 * handed out before must be done with. Nothing for any other data set. */
void hog_dataset_drop_heap(hog_dataset *ds);

/* A block's optional arrays, as a layout: which of them it has. 1 is
 * HOG_BLOCK_WEIGHTED, so a caller's "weighted" flag is the layout of a
 * block without fields. */
#define HOG_BLOCK_WEIGHTED 1
#define HOG_BLOCK_FIELDS 2
static inline int hog_block_layout(const hog_block *b)
{
    return (b->weight ? HOG_BLOCK_WEIGHTED : 0) | (b->field ? HOG_BLOCK_FIELDS : 0);
}

/* The size of a block's unpadded bytes in the file layout (etl_hgd_layout.h). */
static inline uint64_t hog_block_bytes(uint64_t rows, uint64_t nnz, int layout)
{
    return 4 * (rows + 1) + 8 * nnz + 4 * rows + (layout & HOG_BLOCK_WEIGHTED ? 4 * rows : 0) +
           (layout & HOG_BLOCK_FIELDS ? 2 * nnz : 0);
}

/* Fills a view of a block whose arrays lie packed at buf in the file layout
 * (etl_hgd_layout.h) (a block of a mapped file, or one the builder keeps in memory). */
static inline void hog_block_view(hog_block *blk, const void *buf, uint32_t rows, uint32_t nnz,
                                  int layout, uint64_t sum)
{
    blk->rows = rows;
    blk->nnz = nnz;
    blk->sum = sum;
    blk->ptr = (const uint32_t *)buf;
    blk->index = blk->ptr + rows + 1;
    blk->value = (const float *)(const void *)(blk->index + nnz);
    blk->label = blk->value + nnz;
    blk->weight = layout & HOG_BLOCK_WEIGHTED ? blk->label + rows : NULL;
    blk->field = layout & HOG_BLOCK_FIELDS
                     ? (const uint16_t *)(const void *)(blk->label + rows + (layout & HOG_BLOCK_WEIGHTED ? rows : 0))
                     : NULL;
}

/* A block's version-2 checksum, chained over its arrays (see above; the
 * field array last, where the block has one). */
uint64_t hog_block_sum(const hog_block *b);

/* Fingerprint of a data set from its blocks' (rows, nnz, sum). */
uint64_t hog_etl_fingerprint(const hog_block *blocks, uint32_t n);

/* ---- the block ring: a mapped .hgd's blocks read again with O_DIRECT (etl_blockring.c) ---- */
typedef struct hog_block_ring hog_block_ring;

/* A ring of buffers, each the size of ds's largest block, reading ds's file
 * (a mapped .hgd) with O_DIRECT io_uring reads: `slots` of them, or as many
 * as `bytes` holds (up to 256, so that small blocks keep the disk busy), at
 * most one per block. Returns 0,
 * -EOPNOTSUPP when ds is not such a file or its file system refuses
 * O_DIRECT (read through the mapping then), -ENOMEM or -errno. */
int hog_block_ring_open(const hog_dataset *ds, unsigned slots, size_t bytes, hog_block_ring **out);
/* A pass: the ring reads the n blocks of order, in that order, as slots come
 * free, and checks each as it lands (hog_dataset_check_view). Blocks must
 * be asked for in that order (see etl_blockring.c). Returns 0 or -errno. */
int hog_block_ring_pass(hog_block_ring *r, const uint32_t *order, uint32_t n);
/* A pass over all of the blocks in file order. Returns 0 or -errno. */
int hog_block_ring_pass_in_order(hog_block_ring *r);
/* Block b of the pass, waiting for it: its view in the ring, or NULL when
 * its read or its checks failed (hog_block_ring_end says why). Thread-safe. */
const hog_block *hog_block_ring_get(hog_block_ring *r, uint32_t b);
/* Done with block b: its slot reads the next block. Thread-safe. */
void hog_block_ring_release(hog_block_ring *r, uint32_t b);
/* Ends the pass: no more reads, those in flight waited for. Returns 0, or
 * the first failed block's error (HOG_EIO, HOG_ECHECKSUM, HOG_ECORRUPT). */
int hog_block_ring_end(hog_block_ring *r, char *err, size_t err_len);
/* Stops the ring's thread and frees it. NULL is accepted. */
void hog_block_ring_close(hog_block_ring *r);
/* A ring reading all of ds's blocks once, in file order (a pass over the
 * whole file: evaluation, predict), opened and started: 0 with *out set,
 * 0 with *out NULL where the file system refuses O_DIRECT (read through
 * the mapping then), -ENOMEM or -errno. */
int hog_block_ring_file_order(const hog_dataset *ds, unsigned slots, size_t bytes, hog_block_ring **out);
/* The read buffers an out-of-core pass under a memory limit takes: a
 * sixteenth of it, up to 64 MiB. */
static inline size_t hog_ring_bytes(uint64_t limit)
{
    return (size_t)HOG_MIN(limit / 16, (uint64_t)64 << 20);
}

/* ---- the block source: how every pass reads a data set's blocks (etl_source.c) ---- */
/*
 * A caller that reads a data set's blocks (a training epoch, an evaluation,
 * predict, the scan) opens a source over it and asks for blocks; the source
 * alone decides where they come from and what happens around each read:
 * the blocks as they are (in memory, or mapped and resident), or out of
 * core, read again with O_DIRECT into a ring of buffers or through the
 * mapping with read-ahead (MADV_WILLNEED) and drop-behind (MADV_DONTNEED,
 * POSIX_FADV_DONTNEED); each block checked at its first read (a file
 * opened with HOG_VERIFY_AT_FIRST_READ); and at a pass's end, whether the
 * file changed under the mapping. The callers never name storage.
 */
typedef struct hog_block_source hog_block_source;

/* What a pass is for: how the source reads ahead and lets blocks go. */
typedef enum hog_pass_purpose {
    HOG_PASS_EPOCH = 0, /* training: the blocks in the pass's order, several readers on one block at once
                           (segments), each block released once when its last reader is done */
    HOG_PASS_EVAL,      /* a pass in file order whose blocks are read again later (evaluation):
                           in core they stay */
    HOG_PASS_ONCE,      /* a pass in file order read once (predict): every block's pages let go behind */
    HOG_PASS_CHECK,     /* the pass that checks the data set (the scan): through the mapping, whose
                           pages it checks; over every block, the header's counts against them at its end */
} hog_pass_purpose;

/* How a source may read: made by hog_source_params_default. */
typedef struct hog_source_params {
    unsigned readers;  /* threads that read a pass at once: the read-ahead and the ring's buffers (1) */
    uint64_t limit;    /* the memory limit the caller runs under; 0: none (all in core) */
    uint64_t resident; /* the most bytes of data kept resident: a larger data set is read out of
                          core; 0: half of limit */
    int out_of_core;   /* HOG_SOURCE_DECIDE, or 0 or 1 to read as a resumed run began */
    int mapped;        /* 1: out of core through the mapping even where the ring could read (a test's,
                          to compare the two) */
} hog_source_params;
#define HOG_SOURCE_DECIDE (-1)

hog_source_params hog_source_params_default(void);

/* A source over ds (borrowed: it outlives the source). Out of core, for a
 * mapped .hgd whose file system takes O_DIRECT, the ring of etl_blockring.c
 * (two buffers per reader and two more, or as many as hog_ring_bytes(limit)
 * holds); else the mapping. Returns 0, -ENOMEM. Not thread-safe. */
int hog_block_source_open(const hog_dataset *ds, const hog_source_params *sp, hog_block_source **out);
/* Whether s reads out of core: a trainer keeps a block's segments together then. */
int hog_block_source_out_of_core(const hog_block_source *s);
/* Starts a pass over the n blocks of order (each once), or with order NULL
 * over every block in file order. Blocks are asked for in that order
 * (hog_block_source_get: the ring reads them so). Returns 0 or -errno. Not
 * thread-safe; one pass at a time. */
int hog_block_source_pass(hog_block_source *s, hog_pass_purpose purpose, const uint32_t *order, uint32_t n);
/* Block b of the pass, checked, its read-ahead started: a view valid until
 * its hog_block_source_release, or NULL when its read or its check failed
 * (hog_block_source_end says why). A block's only reader releases it after
 * a NULL too, so that its buffer reads on; readers that share a block (an
 * epoch's segments) do not, and each of them gets the NULL. Thread-safe. */
const hog_block *hog_block_source_get(hog_block_source *s, uint32_t b);
/* The next block of the pass for one of its readers (claimed atomically): 1
 * with *b and *blk set; 0 at the pass's end, or once a block has failed;
 * HOG_ECORRUPT when block *b failed (hog_block_source_end says why). The
 * reader releases each block it got. Thread-safe. */
int hog_block_source_next(hog_block_source *s, uint32_t *b, const hog_block **blk);
/* Done with block b: once per block of the pass, by its last reader (its
 * buffer reads the next block; out of core its pages go). Thread-safe. */
void hog_block_source_release(hog_block_source *s, uint32_t b);
/* The lowest block that failed in this pass so far, UINT32_MAX: none. */
uint32_t hog_block_source_failed(const hog_block_source *s);
/* Ends the pass (no more reads; those in flight waited for): 0, or the
 * first failed block's error (HOG_EIO, HOG_ECHECKSUM, HOG_ECORRUPT naming
 * file and block), the header's counts against the blocks after a
 * HOG_PASS_CHECK over every block (HOG_ECORRUPT), or HOG_ECORRUPT when the
 * mapped file was truncated or rewritten in place since it was opened. */
int hog_block_source_end(hog_block_source *s, char *err, size_t err_len);
/* Frees s (a pass in flight ended first). NULL is accepted. */
void hog_block_source_close(hog_block_source *s);

/* The alignment O_DIRECT needs on the file open at fd, or 0 when its file
 * system cannot do direct I/O (etl_uring.c). */
size_t hog_dio_alignment(int fd);

/* ---- builder: rows in, blocks out (in memory, or streamed to a file; etl_builder.c) ---- */
typedef struct hog_builder hog_builder;

/* Makes a builder with rows_per_block rows per block (0: the default).
 * If out is not NULL, full blocks are written to it as they fill (it must be
 * freshly opened with hog_atomic_open; the builder leaves room for the header)
 * and memory stays bounded by one block; otherwise blocks are kept in memory.
 * Returns 0 or -ENOMEM. */
int hog_builder_create(uint32_t rows_per_block, hog_atomic_file *out, hog_builder **b);

/* Makes a builder that keeps no block: each, once full, is handed to the
 * on_block callback as a view of the builder's arrays (kept 0, as from a
 * file builder: fn may trade them) and the arrays are then filled again,
 * so memory stays at one block plus what fn holds. Returns 0 or -ENOMEM. */
int hog_builder_create_pass(uint32_t rows_per_block, hog_builder **b);

/* Makes a pass builder eager: its consumer answers rows as they come
 * (predict). The text pipeline then reads a stream eagerly
 * (HOG_READER_EAGER) and calls hog_builder_idle whenever it has parsed
 * all the stream had ready; a file is read as for any builder.
 * hog_builder_eager says whether b is. */
void hog_builder_set_eager(hog_builder *b);
int hog_builder_eager(const hog_builder *b);

/* Gives the reader the text pipeline opens for b a stop fd
 * (hog_reader_set_stop; fd < 0: none, the default): once fd is readable
 * the read ends as if the input had, the rows read before it are added,
 * and a last line it cut short is left out (a warning says so) rather
 * than malformed. The caller owns fd and keeps it open until the read is
 * over; nothing reads from it. hog_builder_stop_fd says which fd b has
 * (-1: none). Call it before the read starts, from the thread that made b. */
void hog_builder_set_stop(hog_builder *b, int fd);
int hog_builder_stop_fd(const hog_builder *b);

/* Records that the read of the rows' input was stopped by the stop fd
 * (the text pipeline calls it, once its reader stopped);
 * hog_builder_stopped says so (1) to whoever reads b after the read, and
 * is 0 until then, and for a read that ended with its input. */
void hog_builder_set_stopped(hog_builder *b);
int hog_builder_stopped(const hog_builder *b);

/* The input has nothing more ready for now: an eager builder hands the
 * rows it holds to the callback at once, as a block shorter than
 * rows_per_block (none when it holds none); any other builder keeps
 * filling its block. Returns 0 or the callback's error. */
int hog_builder_idle(hog_builder *b);

/* Appends one row, without fields. index must be strictly increasing (the
 * caller, a parser, reports violations with their location); values finite.
 * Returns 0, -ENOMEM, -errno (writing), or HOG_EPARAM if nnz or the block's
 * size would overflow 32 bits. */
int hog_builder_add(hog_builder *b, float label, const uint32_t *index,
                    const float *value, uint32_t nnz);

/* Appends every row of r (a parsed chunk), in bulk. With r->weighted set
 * the data set is weighted, with r->fielded it has fields; the first rows
 * added settle both. Returns as hog_builder_add, or HOG_EPARAM when the
 * rows have fields and the builder's data has none, or the other way. */
struct hog_rows;
int hog_builder_add_rows(hog_builder *b, const struct hog_rows *r);

/* A file builder's output becomes a cache of the file src describes
 * (hog_hgd_writer_set_source); an in-memory builder ignores it. */
void hog_builder_set_source(hog_builder *b, const hog_hgd_source *src);

/* Records that the rows came from 1-based libsvm text (the file's flag). */
void hog_builder_set_one_based(hog_builder *b, int one_based);
int hog_builder_one_based(const hog_builder *b);
/* What the text's indices are below, known before its rows
 * (hog_text_plan_index_bound), or 0 (not known: the default). */
void hog_builder_set_index_bound(hog_builder *b, uint64_t bound);
uint64_t hog_builder_index_bound(const hog_builder *b);
/* The hog_read_params.hash_bits the text is read with: its data set and
 * file keep them (hog_dataset.hash_bits, the file's flags bit 7). */
void hog_builder_set_hash_bits(hog_builder *b, unsigned bits);

/* Rows added so far. */
uint64_t hog_builder_rows(const hog_builder *b);

/* The class names numbered so far (rows whose labels were strings: label
 * i is name i), in the order they first appeared; n 0 when the labels are
 * numbers. Valid until the next add. A finished data set takes them
 * (hog_dataset.names). */
const hog_idmap *hog_builder_names(const hog_builder *b);

/* Adds the distinct feature names of set f (a parser thread's) to the
 * builder's; a finished data set or file gets them joined, of the
 * features it has. Returns 0 or -ENOMEM. */
int hog_builder_add_fnames(hog_builder *b, const hog_fnames *f);

/* The file a builder writes to (its final path), or NULL in memory. */
const char *hog_builder_output(const hog_builder *b);

/* The arrays a builder fills a block in: ptr (rows_per_block + 1, ptr[0]
 * = 0), label and weight (rows_per_block; weight NULL until weighted rows
 * come), index and value (nnz_cap each, grown as needed), field (field_cap,
 * grown as needed by a builder of rows with fields; NULL otherwise). */
typedef struct hog_block_buffers {
    uint32_t *ptr;
    float *label;
    float *weight;
    uint32_t *index;
    float *value;
    size_t nnz_cap;
    uint16_t *field;
    size_t field_cap;
} hog_block_buffers;

/* Gives b the arrays a builder needs for a block of rpb rows (those it
 * lacks; a weight array when weighted), for a consumer that takes the
 * builder's arrays in exchange (hog_block_fn). Returns 0 or -ENOMEM (what
 * was made stays, for hog_block_buffers_free). */
int hog_block_buffers_ready(hog_block_buffers *b, uint32_t rpb, int weighted);
/* Frees b's arrays and zeroes it. */
void hog_block_buffers_free(hog_block_buffers *b);

/* Tells fn of every block as it is finished, in order. When kept is 1 (an
 * in-memory builder) blk is the data set's own block, valid until the data
 * set is freed, and bufs is NULL. Otherwise (the block was written to the
 * file) blk is a view of the builder's arrays, valid during the call; fn
 * may keep them instead by swapping *bufs for arrays of its own of the same
 * rows_per_block (a weight array too when blk->weight is set), which the
 * builder then fills and frees. position is the fraction of the input read
 * when the block's last rows were added (see hog_builder_set_position). A
 * non-zero return from fn stops the build: the add that finished the block
 * returns it. */
typedef int (*hog_block_fn)(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs);
void hog_builder_on_block(hog_builder *b, hog_block_fn fn, void *ctx);

/* Where in its input the rows added next come from, as a fraction in [0, 1]
 * (the text pipeline sets it from hog_reader_position). */
void hog_builder_set_position(hog_builder *b, double position);

/* The rows added next come from a piece of text after line line0 (lines
 * counted from 1) with extra lines that hold no row (blank, comment,
 * skipped): row i of it is on line line0 + i + 1 to that + extra. The text
 * pipeline sets it; a builder fed otherwise has every row's line 0. */
void hog_builder_set_lines(hog_builder *b, uint64_t line0, uint64_t extra);

/* The line of the first row of the block being filled or just finished
 * (the one hog_block_fn is told of), as the pieces it came from place it:
 * row r of the block is on the returned line + r to that + *extra (0:
 * exactly there). */
uint64_t hog_builder_block_line(const hog_builder *b, uint64_t *extra);

/* A file builder turns O_DIRECT on (hog_atomic_direct) for the blocks it
 * writes once its output has reached this many bytes (0: never): for an
 * input whose size is not known at the start, a pipe. */
void hog_builder_direct_from(hog_builder *b, uint64_t bytes);

/* An in-memory builder whose finished blocks pass `bytes` writes them, and
 * every block after them, to a scratch file in dir (hog_scratch_open;
 * written buffered, so that the pages stay cached for the epochs when the
 * memory allows), which label names in messages; blocks from then
 * on reach on_block as a file builder's do. hog_builder_finish then maps
 * the file; the blocks held before the spill stay valid, for those
 * on_block handed them to, until hog_dataset_drop_heap. A folder that
 * takes no file leaves the blocks in memory, with a warning logged.
 * Ignored by a file builder. Returns 0 or -ENOMEM. */
int hog_builder_spill(hog_builder *b, uint64_t bytes, const char *dir, const char *label);

/* hog_builder_spill as reading path with p asks: past a quarter of
 * p->mem_limit (0: of half the memory usable), into p->temp_dir (NULL: the
 * folder of path, or the current one when path is not a file). */
int hog_builder_spill_within(hog_builder *b, const char *path, const hog_read_params *p);

/* In-memory builder: hands the blocks to a new data set and frees b. On an
 * error b is still the caller's to free (hog_builder_free), and the blocks
 * it handed out (hog_builder_on_block) stay valid until then.
 * Errors: HOG_EEMPTY (no rows), -ENOMEM. */
int hog_builder_finish(hog_builder *b, hog_format format, hog_dataset **out);

/* File builder: writes the last block, the table and the header. Frees b;
 * the caller then commits or aborts the file. info (if not NULL) is filled.
 * Errors: HOG_EEMPTY, -errno, -ENOMEM. */
int hog_builder_finish_file(hog_builder *b, hog_dataset_info *info);

/* Pass builder: hands the last block to the callback and frees b.
 * Errors: HOG_EEMPTY (no rows), the callback's. */
int hog_builder_finish_pass(hog_builder *b);

/* Frees a builder without finishing it. NULL is accepted. */
void hog_builder_free(hog_builder *b);

/* ---- binary format (etl_hgd.c reads, etl_hgd_write.c writes, etl_hgd_check.c checks) ---- */
/* Opens and validates a binary dataset (memory-mapped). err gets a message
 * naming the file and the first thing wrong. */
int hog_hgd_open(const char *path, hog_dataset **out, char *err, size_t err_len);
/* hog_hgd_open of the file open at fd, which the call takes over (closed on
 * failure, kept by the data set on success); path names it in messages. */
int hog_hgd_open_fd(int fd, const char *path, hog_dataset **out, char *err, size_t err_len);

/* Reads and checks the header of the binary dataset at path (its magic,
 * version, checksum and sizes against the file's length; not the blocks)
 * and its source record: *has 1 and *src filled for a cache, *has 0 for a
 * file without one. Errors: -errno (-ENOENT: no such file), HOG_EMAGIC,
 * HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT; err names
 * the file. */
int hog_hgd_source_read(const char *path, hog_hgd_source *src, int *has, char *err, size_t err_len);

/* Writes a data set's blocks and class names to a freshly opened atomic
 * file, with src (or NULL: none) as its source record. */
int hog_hgd_write(const hog_dataset *ds, const hog_hgd_source *src, hog_atomic_file *f);

/* A file written a block at a time, as the builder fills them: blocks at
 * aligned offsets after the header, then the table, then the header last,
 * so a crash mid-write never leaves a valid header over incomplete data. */
typedef struct hog_hgd_writer hog_hgd_writer;
/* Starts a writer on f, freshly opened with hog_atomic_open. Returns 0 or -ENOMEM. */
int hog_hgd_writer_create(hog_atomic_file *f, hog_hgd_writer **out);
/* Turns O_DIRECT on for the blocks written once the output has reached
 * this many bytes (0: never; see hog_builder_direct_from). */
void hog_hgd_writer_direct_from(hog_hgd_writer *w, uint64_t bytes);
/* Writes one block from its arrays where they lie; blk->sum is its
 * checksum (hog_block_sum). Returns 0, -errno or -ENOMEM. */
int hog_hgd_writer_block(hog_hgd_writer *w, const hog_block *blk);
/* Blocks written so far. */
uint32_t hog_hgd_writer_blocks(const hog_hgd_writer *w);
/* Makes the file a cache of the file src describes (copied; NULL: not a
 * cache): the header gets flags bit 2 and the record. */
void hog_hgd_writer_set_source(hog_hgd_writer *w, const hog_hgd_source *src);
/* The class names the labels number (label i is name i; NULL or none: the
 * labels are numbers): the file gets flags bit 4, version 4 and the names
 * section. The map is read at hog_hgd_writer_finish, and must live until
 * then. */
void hog_hgd_writer_set_names(hog_hgd_writer *w, const hog_idmap *names);
/* The feature names (joined; NULL or none: the file has none): the file
 * gets flags bit 5, version 5 and the feature names section. The names
 * must live until hog_hgd_writer_finish. */
void hog_hgd_writer_set_fnames(hog_hgd_writer *w, const hog_fnames *fnames);
/* The fields of the blocks written (1 to HOG_MAX_FIELDS; 0: the blocks have
 * none): the file gets flags bit 6, version 6 and the count. Every block
 * must then have a field array, and its fields must be below it. */
void hog_hgd_writer_set_fields(hog_hgd_writer *w, uint32_t fields);
/* The hog_read_params.hash_bits the text was read with (0: none, the
 * default): the file gets flags bit 7, version 7 and the bits, so that a
 * model trained on it hashes text to score as it was hashed. */
void hog_hgd_writer_set_hash_bits(hog_hgd_writer *w, unsigned bits);
/* Writes the table and the header (the flags from weighted and one_based);
 * info (if not NULL) is filled. The caller then commits or aborts the file.
 * Returns 0 or -errno. */
int hog_hgd_writer_finish(hog_hgd_writer *w, uint64_t features, uint32_t rows_per_block, int weighted,
                          int one_based, hog_dataset_info *info);
/* Waits for the writes in flight and frees w (not the file). NULL is accepted. */
void hog_hgd_writer_free(hog_hgd_writer *w);

/* hog_dataset_convert writes its output with O_DIRECT (hog_atomic_direct)
 * when the input file is at least this large; from a pipe, once the output
 * passes half of it (about what a file of this size in libsvm text makes). */
#define HOG_DIRECT_OUTPUT_BYTES (1ull << 30)

/* ---- format detection (etl_dataset.c) ---- */
/* Whether a file is a binary dataset (*binary 1) or text (0), from its raw
 * first 4 KiB: the .hgd magic, or what a damaged .hgd header still shows
 * (a NUL eighth byte, then version 1 or 2), means binary, which the binary
 * reader then judges; anything else is text, NUL bytes and all: the plan
 * refuses input that is not text and says what it looks like, and the
 * parsers locate a NUL byte in text (etl_parse.c). A pipe or a
 * socket is text, and is not opened here.
 * Which text format it is, the pipeline's plan settles (hog_text_plan_make).
 * Returns 0 or -errno. */
int hog_detect_binary(const char *path, int *binary);

/* ===================================================================== *
 *  Parsing text in chunks (etl_parse.c, and a file per format beside it:
 *  etl_parse.h lists them)
 *
 *  A text file is cut into chunks of whole lines that any number of threads
 *  parse at once; the pipeline (etl_pipeline.c) puts their rows back in file
 *  order. Line numbers in a chunk's errors are relative to the chunk; the
 *  pipeline adds the lines of the chunks before it.
 * ===================================================================== */

/* How every line of one file is parsed, settled once from hog_read_params and
 * the file's first line(s) by hog_text_plan. */
typedef struct hog_text_plan {
    hog_format format;      /* HOG_FORMAT_LIBSVM, _CSV, _VW or _FFM */
    char delimiter;         /* CSV: the resolved separator (' ' = runs of blanks) */
    uint32_t fields;        /* CSV: fields per line */
    uint32_t label_col;     /* CSV */
    uint8_t *column_kind;   /* CSV: one per field: HOG_COL_* */
    unsigned hash_bits;     /* see hog_read_params (0 = as written; strings use 18) */
    unsigned index_base;    /* libsvm: 0 or 1 */
    uint64_t base_lines;    /* libsvm: index_base was detected from this many lines (0: given) */
    int skip_errors;        /* hog_read_params.on_error == HOG_ON_ERROR_SKIP */
    uint64_t max_line;      /* the longest line allowed (hog_read_params.max_line; 0 in a plan made
                               by hand: HOG_DEFAULT_MAX_LINE) */
    uint64_t max_features;  /* hog_read_params.max_features: the ceiling on features (0: none) */
    uint64_t header_bytes;  /* bytes of the file before the first data line (the CSV header) */
    uint64_t header_lines;  /* lines in those bytes */
    /* CSV, per field, owned by the plan (NULL in a plan made by hand: numeric
     * fields then take their position among numeric fields, names are the
     * 0-based field numbers). */
    uint32_t *column_feature; /* a numeric field's feature index (position, or hashed name) */
    char **column_name;       /* the header's names, or "0", "1", ... without a header */
    int label_names;          /* CSV: the label column holds class names (its first data field is not
                                 a number): each row's name goes to hog_rows.names */
    int fielded;              /* each value keeps its field (hog_rows.field): LIBFFM always, VW and CSV
                                 with hog_read_params.fields */
} hog_text_plan;

/* HOG_COL_LABEL_NAME: the label column of a plan with label_names. */
enum { HOG_COL_NUMBER = 0, HOG_COL_LABEL, HOG_COL_IGNORE, HOG_COL_CATEGORICAL, HOG_COL_LABEL_NAME };

/* Class names (labels that are strings, from CSV): at most this many
 * distinct ones in a data set, each 1 to HOG_LABEL_NAME_MAX bytes, no NUL. */
#define HOG_MAX_LABEL_NAMES 65536u
#define HOG_LABEL_NAME_MAX 1024u

/* Settles the plan from the parameters and the first bytes of the file
 * (head: at least the first line when there is one; the whole file if it is
 * shorter). Refuses a head that is not text (HOG_EFORMAT, saying what it
 * looks like). Detects the format (unless given; the reason is logged when
 * the lines or the file's name disagree), the CSV delimiter, header, label
 * column, ignored and categorical columns, and checks that the features a
 * hashing or the CSV columns can make stay within p->max_features.
 * Errors: HOG_EFORMAT / HOG_EPARAM with "path:line:column: ..." or
 * "path: no column named 'x'" in err, -ENOMEM. */
int hog_text_plan_make(const char *path, const hog_read_params *p, const char *head, size_t head_len,
                       hog_text_plan *plan, char *err, size_t err_len);
void hog_text_plan_free(hog_text_plan *plan);
/* Adds the names a CSV plan gives its numeric columns' features (the
 * header's; none without a header, nor for other formats) to f. Returns 0
 * or -ENOMEM. */
int hog_text_plan_fnames(const hog_text_plan *plan, hog_fnames *f);
/* What every feature index of text read by plan is below, known before
 * its first row: 2^bits when its features are hashed (hash_bits, or
 * Vowpal Wabbit's strings), a CSV file's numeric columns and categorical
 * hashes; 0 when only the text can say (libsvm or LIBFFM indices as
 * written). */
uint64_t hog_text_plan_index_bound(const hog_text_plan *plan);

/* hog_read_params.max_line when it is 0. */
#define HOG_DEFAULT_MAX_LINE (64ull << 20)

/* A located parse error, relative to its chunk. */
typedef struct hog_text_error {
    uint64_t line;     /* 1-based line within the chunk */
    uint32_t column;   /* 1-based byte column; 0: the whole line (one too long) */
    char what[192];    /* "expected a number, found 'abc'" */
} hog_text_error;

/* The most hash bits whose 2^bits features stay within max_features (0:
 * none, which allows 31), at least 1: what a ceiling's message suggests. */
static inline unsigned hog_bits_within(uint64_t max_features)
{
    unsigned bits = 31;
    while (max_features && bits > 1 && (1ull << bits) > max_features)
        bits--;
    return bits;
}

#define HOG_TEXT_ERRORS_KEPT 5

/* Rows parsed from one chunk, in CSR form, growable; reused across chunks. */
typedef struct hog_rows {
    uint64_t rows, nnz;
    size_t cap_rows, cap_nnz; /* capacities (ptr holds cap_rows + 1) */
    uint32_t *ptr;      /* rows + 1 offsets into index/value (ptr[0] = 0) */
    uint32_t *index;
    float *value;
    float *label;
    float *weight;      /* one per row when weighted, else unused (may be NULL) */
    int weighted;       /* the format has weights (VW): set by hog_parse_chunk */
    uint16_t *field;    /* each value's field (cap_nnz of them) when fielded, else unused (may be NULL) */
    int fielded;        /* the format has fields (LIBFFM, VW): set by hog_parse_chunk */
    /* a plan with label_names: each row's class name, NUL-terminated, back
     * to back in row order (label is 0 until the builder numbers them) */
    char *names;
    size_t names_len, names_cap;
    hog_fnames *fnames; /* the parser thread's feature names, which its rows' features' names are added
                           to; NULL: none kept. Not the rows': hog_rows_clear and _free leave it */
    uint64_t lines;     /* lines the chunk held (data, blank, comment, skipped) */
    uint64_t skipped;   /* malformed lines skipped (skip mode) */
    uint32_t kept;      /* errors kept below, at most HOG_TEXT_ERRORS_KEPT */
    hog_text_error errors[HOG_TEXT_ERRORS_KEPT];
} hog_rows;

/* Empties rows for reuse (keeps its memory). */
void hog_rows_clear(hog_rows *r);
void hog_rows_free(hog_rows *r);

/* Parses buf[0..len): whole lines, the last possibly without its newline.
 * Appends one row per data line to out; sets out->lines. In stop mode the
 * first malformed line ends the chunk: HOG_EFORMAT with *err filled. In skip
 * mode malformed lines are counted and the first few kept in out->errors;
 * a line longer than plan->max_line ends the chunk in either mode.
 * Thread-safe (the plan is read-only). Returns 0, HOG_EFORMAT or -ENOMEM. */
int hog_parse_chunk(const hog_text_plan *plan, const char *buf, size_t len, hog_rows *out,
                    hog_text_error *err);

/* Parses a decimal number as strtod does in the C locale, exactly (same
 * double for every input strtod accepts), but at memory speed for the usual
 * short forms (etl_parse_number.c).
 * s..end is the field; returns the end of the number or NULL if the field
 * does not start with one. */
const char *hog_parse_double(const char *s, const char *end, double *out);

/* What a streamed read of a text file met. */
typedef struct hog_text_summary {
    hog_format format;  /* the format it was parsed as */
    unsigned index_base; /* libsvm: the index base applied (0 for other formats) */
    uint64_t lines;     /* lines in the file, header included */
    uint64_t skipped;   /* malformed lines skipped (skip mode) */
    int stopped;        /* the read was stopped by the builder's stop fd (hog_builder_set_stop) */
    uint32_t kept;
    hog_text_error errors[HOG_TEXT_ERRORS_KEPT]; /* the first of them, file line numbers */
} hog_text_summary;

/* Streams a text file into b (etl_pipeline.c): chunked reads, cut at line
 * ends, parsed on p->threads threads (0: one per CPU this process may use), rows added in file
 * order. b's index base is set as soon as the first lines settle it,
 * before any row is added. Memory stays bounded by a few chunks, the
 * longest line (at most p->max_line: a longer one is an error as soon as
 * that many of its bytes are read) plus what b keeps. A stream's last line
 * must end in a newline: one cut short is malformed ("path:line:column:
 * expected a newline, found the end of the stream ..."), skipped in skip
 * mode. For an eager builder (hog_builder_set_eager) a stream's rows are
 * handed on as they come (hog_builder_idle). With a stop fd
 * (hog_builder_set_stop) that becomes readable, the read ends there as if
 * the input had (file or stream; sum->stopped and hog_builder_stopped
 * say so): the rows read before it are added, and the line it cut short
 * is left out, logged once (HOG_LOG_WARN: "path:line: the read was stopped
 * inside this line ..."), neither an error nor a skipped line.
 * Errors: those of hog_reader_open/next, hog_text_plan_make and
 * hog_parse_chunk (HOG_EFORMAT as "path:line:column: expected ...", or
 * "path:line: a line longer than N bytes"), those of b's callback, -ENOMEM. */
int hog_text_stream(const char *path, const hog_read_params *p, hog_builder *b, hog_text_summary *sum,
                    char *err, size_t err_len);

/* The ceiling on features for binary data (etl_dataset.c): 0 when *ds has
 * at most p->max_features (p NULL or 0: no ceiling); else *ds is closed and
 * NULLed and HOG_EPARAM returned, err naming path, the count, the ceiling
 * and the hashing that fits. hog_hgd_open_within opens path as hog_hgd_open
 * does, then checks so, before its rows are used. */
int hog_dataset_within(const char *path, const hog_read_params *p, hog_dataset **ds, char *err, size_t err_len);
int hog_hgd_open_within(const char *path, const hog_read_params *p, hog_dataset **out, char *err, size_t err_len);
/* hog_hgd_open_fd, its blocks checked at open or (lazy) each at its first
 * hog_dataset_check. */
int hog_hgd_open_lazy(int fd, const char *path, int lazy, hog_dataset **out, char *err, size_t err_len);

/* Resolves HOG_FORMAT_AUTO as far as binary (*fmt HOG_FORMAT_BINARY) or
 * text (*fmt stays AUTO: the pipeline's plan settles which text format;
 * etl_dataset.c).
 * Errors: HOG_EPARAM (not a hog_format), -errno; err names the file. */
int hog_resolve_format(const char *path, const hog_read_params *p, hog_format *fmt, char *err, size_t len);

/* Streams text into b (hog_text_stream) as hog_dataset_open and _convert
 * do: refuses an empty file by name (HOG_EEMPTY, also when a stopped read
 * (hog_builder_set_stop) added no row) and describes skipped
 * lines in *report (a new string to hog_free, or NULL when none were).
 * *fmt: the format it was parsed as. */
int hog_text_read(const char *path, const hog_read_params *p, hog_builder *b, hog_format *fmt,
                  uint64_t *skipped, char **report, char *err, size_t len);

/* ===================================================================== *
 *  Feeding blocks to a trainer while the text is read (etl_feed.c)
 *
 *  A feed reads a text file on a thread of its own into a data set (in
 *  memory, or a binary cache file written on the way) and hands every
 *  block, as soon as it is built, to one consumer through a bounded queue:
 *  the first epoch trains while the file is still being read. Memory stays
 *  bounded by the queue (depth blocks) when the data set goes to a file.
 * ===================================================================== */
typedef struct hog_feed hog_feed;

/* Starts reading text path (p as for hog_dataset_open; the caller has
 * checked it is text) into cache_path (NULL: into memory), with at most
 * depth blocks handed out and not yet released; the cache records src as
 * its source (NULL: none, as for a pipe). Errors: -ENOMEM, -errno (the
 * cache cannot be created or the thread started); err says which. */
int hog_feed_start(const char *path, const hog_read_params *p, const char *cache_path,
                   const hog_hgd_source *src, unsigned depth, hog_feed **out, char *err, size_t err_len);

/* hog_feed_start for one pass: no block is kept after it is released (no
 * cache, no spill), so memory stays at depth blocks whatever the length of
 * the text; hog_feed_finish's data set then holds no block, only what was
 * counted (rows, features, non-zeros, class and feature names, skipped
 * lines). stop_fd (-1: none) is a descriptor the caller owns and makes
 * readable to end the read early (hog_builder_set_stop; a signal handler
 * writing to an eventfd, say), even one waiting on a quiet pipe: the
 * blocks of the rows read before it are handed out, then hog_feed_next
 * returns 0 as at the input's end, with no error (a line the stop cut is
 * left out, with a warning); a stop before any row ends in hog_feed_next's
 * HOG_EEMPTY, as for an empty input. The feed never reads from stop_fd,
 * which must stay open until the feed is freed. Errors: those of
 * hog_feed_start. */
int hog_feed_start_pass(const char *path, const hog_read_params *p, unsigned depth, int stop_fd, hog_feed **out,
                        char *err, size_t err_len);

/* 1 when the read ended because its stop fd became readable
 * (hog_feed_start_pass), 0 when the input ended (or failed) of itself or
 * the read is not over yet: valid once hog_feed_next has returned 0 (or
 * an error). Any thread. */
int hog_feed_stopped(hog_feed *f);

/* The line of the first row of the block-th block handed out (0-based),
 * while it is held (else 0): *extra as hog_builder_block_line says. */
uint64_t hog_feed_block_line(hog_feed *f, uint64_t block, uint64_t *extra);

/* The next block in file order: a view valid until it is released, and the
 * fraction of the input read when it was built. Waits for it. Returns 1, 0
 * when every block has been handed out, or the reading's error (a parse
 * error as "path:line:column: expected ...", in err) as soon as it
 * happens. One consumer thread. */
int hog_feed_next(hog_feed *f, hog_block *blk, double *position, char *err, size_t err_len);

/* hog_feed_next waiting at most seconds (negative: for ever): -EAGAIN
 * when no block came meanwhile and the read goes on (nothing is taken, err
 * untouched), so that a consumer of a quiet stream can work on what it
 * holds. */
int hog_feed_next_within(hog_feed *f, hog_block *blk, double *position, double seconds, char *err, size_t err_len);

/* Gives back the oldest block handed out and not yet released. */
void hog_feed_release(hog_feed *f);

/* The libsvm index base the text is read with (1: 1-based, the indices
 * are stored minus one; 0 otherwise, and for other formats), as the data
 * set will record it: known once a block has been handed out. */
int hog_feed_index_base(hog_feed *f);

/* What every index of the text is below, known before its rows
 * (hog_text_plan_index_bound: its features hashed), or 0: known once a
 * block has been handed out. */
uint64_t hog_feed_index_bound(hog_feed *f);

/* Whether the text's labels are class names (hog_dataset.names), as of
 * the blocks handed out: known once one has been. */
int hog_feed_label_names(hog_feed *f);

/* From now on the rest of the file goes only into the data set: no more
 * blocks are handed out (hog_feed_next returns 0 once the read is done). */
void hog_feed_drain(hog_feed *f);

/* Waits for the read to end, commits the cache file and opens the data set
 * (*out: in memory, or the mapped cache, which hog_hgd_open validates).
 * Every block handed out must have been released. Errors: the reading's,
 * those of hog_atomic_commit and hog_hgd_open; err says which. */
int hog_feed_finish(hog_feed *f, hog_dataset **out, char *err, size_t err_len);

/* Stops a feed not finished (the cache file is removed) and frees it. NULL
 * is accepted. */
void hog_feed_free(hog_feed *f);

/* ===================================================================== *
 *  Reading files in large chunks (etl_uring.c)
 * ===================================================================== */
typedef struct hog_reader hog_reader;

/* Opens path for a sequential scan in chunks of chunk_bytes (rounded to the
 * file system's alignment), depth reads in flight, with io_uring and
 * O_DIRECT where the file system allows it (buffered reads otherwise).
 * .gz and .zst files (by their magic bytes) are decompressed on the way, so
 * chunks are always the plain bytes. Errors: -errno, -ENOMEM, HOG_EFORMAT
 * (a corrupt compressed stream; err names the file and the byte offset),
 * -EINVAL (chunk over 1 GiB, depth over 1024), -EISDIR. A pipe, a socket
 * or a terminal (standard input) is read as a stream: in order, with plain
 * reads, to its end; its size is unknown (hog_reader_file_bytes is 0), and
 * its first read is made by the first hog_reader_next (so that a stop fd
 * given meanwhile can end it), its read errors reported there.
 * err must outlive the reader: later errors of hog_reader_next go there. */
int hog_reader_open(const char *path, size_t chunk_bytes, unsigned depth, hog_reader **out,
                    char *err, size_t err_len);

/* hog_reader_open with flags. HOG_READER_EAGER: a stream's chunk (plain or
 * decompressed) is handed over as soon as the stream has nothing more
 * ready, however short, rather than once it fills: for a caller that
 * answers rows as they come. A file is read as without it. */
#define HOG_READER_EAGER 1u
int hog_reader_open_with(const char *path, size_t chunk_bytes, unsigned depth, unsigned flags,
                         hog_reader **out, char *err, size_t err_len);

/* The next chunk in file order: *data points at *len bytes, valid until it is
 * released. Returns 1, 0 at the end of the file, or a negative error (err
 * as above); -EBUSY while all `depth` chunks are held unreleased.
 * hog_reader_next, _file_bytes, _direct and _close belong to one thread at a
 * time; hog_reader_release may be called from any thread. */
int hog_reader_next(hog_reader *r, const char **data, size_t *len);
void hog_reader_release(hog_reader *r, const char *data);

/* Bytes of the underlying file (0 for a stream), and whether reads bypass
 * the page cache. */
uint64_t hog_reader_file_bytes(const hog_reader *r);
/* Bytes of the underlying file (compressed, for .gz and .zst) behind the
 * chunks handed out so far: with hog_reader_file_bytes, how far a scan is. */
uint64_t hog_reader_position(const hog_reader *r);
int hog_reader_direct(const hog_reader *r);
/* Whether the input is a stream (a pipe, a socket, a terminal). */
int hog_reader_stream(const hog_reader *r);

/* Gives r a stop fd (fd < 0: none, the default): once fd is readable the
 * read ends as if the input had ended. hog_reader_next hands out no more
 * chunks and returns 0, with one exception: a stream's chunk being filled
 * when fd became readable is handed out with the bytes the stream had
 * ready, and only then the end (a stream's read that waits on a quiet
 * writer is woken by fd). A file's chunks read ahead, and bytes decoded
 * and not handed out, are dropped. The reader never reads from fd: the
 * caller owns it (an eventfd or a pipe's reading end that a signal
 * handler writes to, say), keeps it open until the reader is closed, and
 * may drain it whenever it likes, as the reader remembers that it stopped.
 * Without a stop fd the reader makes no call for one. Call it before the
 * first hog_reader_next, from the thread that reads. */
void hog_reader_set_stop(hog_reader *r, int fd);

/* 1 once the read ended because the stop fd became readable (the last
 * hog_reader_next returned 0 for it), else 0: an input that ended of
 * itself first was not stopped. Same thread as hog_reader_next. */
int hog_reader_stopped(const hog_reader *r);

void hog_reader_close(hog_reader *r);

/* ===================================================================== *
 *  Ratings for matrix factorisation (etl_idmap.c, etl_ratings.c,
 *  etl_ratings_hgr.c)
 *
 *  A set of ratings is (user, item, rating) triples with the user and item
 *  names mapped to dense ids. Text is read through the chunked reader
 *  above, so plain files, gzip, zstd and pipes alike; a binary ratings file
 *  (.hgr) is memory-mapped and used in place.
 * ===================================================================== */

/* One rating, 12 bytes: the training loop reads a triple and two factor
 * rows, so a triple is one record rather than three arrays (one cache miss,
 * not three, when the order is shuffled). */
typedef struct hog_mf_triple {
    uint32_t user;
    uint32_t item;
    float rating;
} hog_mf_triple;

_Static_assert(sizeof(hog_mf_triple) == 12, "a triple is 12 bytes in memory and on disk");


/* Adds name s[0..len) unless present; *id receives its dense id.
 * Returns 0, -ENOMEM, or HOG_ECORRUPT when the map is full (2^32 - 2 names
 * or 4 GiB of names). */
int hog_idmap_intern(hog_idmap *m, const char *s, size_t len, uint32_t *id);
/* The hash a map files s[0..len) under; hog_idmap_intern with it given
 * (h must be hog_idmap_hash(s, len)); and a prefetch of the table slot
 * where its lookup starts, so that a reader can ask for the slots of the
 * names a few lines ahead while it interns the present ones (each lookup
 * in a large map is a cache miss or more). */
uint64_t hog_idmap_hash(const char *s, size_t len);
int hog_idmap_intern_hashed(hog_idmap *m, const char *s, size_t len, uint64_t h, uint32_t *id);
void hog_idmap_prefetch(const hog_idmap *m, uint64_t h);
/* The next step of that lookup, once its slot has come: a prefetch of the
 * offsets of the name the slot holds (its first candidate). */
void hog_idmap_prefetch_name(const hog_idmap *m, uint64_t h);
/* The id of s[0..len), or -1. */
int64_t hog_idmap_find(const hog_idmap *m, const char *s, size_t len);
/* Builds the table over names already in place (a mapped file). Returns 0,
 * -ENOMEM, or HOG_ECORRUPT (a name twice). */
int hog_idmap_index(hog_idmap *m);
/* Checks names and offsets already in place (from a file: offsets
 * increasing from 0 to names_len, every name NUL-terminated with no NUL
 * inside), then indexes them. Returns 0, -ENOMEM or HOG_ECORRUPT. */
int hog_idmap_check(hog_idmap *m);
void hog_idmap_free(hog_idmap *m);
static inline const char *hog_idmap_name(const hog_idmap *m, uint32_t id)
{
    return id < m->n ? m->names + m->off[id] : NULL;
}

struct hog_ratings {
    hog_ratings_info info;
    const hog_mf_triple *t; /* info.ratings triples, in file order */
    hog_mf_triple *own;     /* t when read from text */
    hog_idmap users, items;
    void *map;              /* a mapped .hgr */
    size_t map_len;
};

/* The fingerprint of a set of ratings: the CRC-32 of its triples (high
 * half) and of its user then item names (low half); a .hgr stores it
 * (etl_ratings_hgr.c). */
uint64_t hog_ratings_fingerprint(const hog_ratings *r);

/* hog_ratings_open with the text read in chunks of chunk_bytes, as
 * hog_reader_open takes it (0: its default): small chunks put many chunk
 * boundaries in a small file, for tests. */
int hog_ratings_open_in_chunks(const char *path, int allow_pairs, size_t chunk_bytes, hog_ratings **out,
                               char *err, size_t err_len);

/* How hog_ratings_each_read reads text, and what it skipped. */
#define HOG_RATINGS_KEPT 4u /* the skipped lines whose messages are kept */
typedef struct hog_ratings_read {
    int allow_pairs;     /* as hog_ratings_open's */
    int skip;            /* 1: a malformed line is counted and skipped (hog_read_params.on_error skip) */
    int stop_fd;         /* as hog_reader_set_stop takes it (-1: none): once it is readable the read ends
                            as at the input's end, a line it cut left out with a warning naming it */
    uint64_t skipped;    /* out: the malformed lines skipped */
    char first[1024];    /* out: the first HOG_RATINGS_KEPT of their messages, a line each */
} hog_ratings_read;

/* hog_ratings_each as rr says. */
int hog_ratings_each_read(const char *path, hog_ratings_read *rr, hog_ratings_fn fn, void *ctx, char *err,
                          size_t err_len);

/* The first 8 bytes of a binary ratings file (the layout is in
 * etl_ratings_hgr.c; NUL is the eighth byte); hog_file_probe tells files
 * apart by it. */
#define HOG_HGR_MAGIC "HOGRATE"

/* Maps the binary ratings file open on fd (size bytes, its magic already
 * seen) into r and checks all of it: sets r->t, the name maps, and
 * info.ratings, has_ratings, binary and fingerprint. fd may be closed
 * afterwards; on failure r holds what was mapped, for hog_ratings_close.
 * Errors: HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_EVERSION, HOG_ECORRUPT,
 * HOG_EEMPTY, -errno (mmap), -ENOMEM; err names the file. */
int hog_hgr_open(hog_ratings *r, const char *path, int fd, uint64_t size, char *err, size_t err_len);

/* ===================================================================== *
 *  Choosing how a file to train on is read (etl_input.c)
 *
 *  The data layer decides how hog_trainer_run_file's input is read and
 *  hands the trainer either a data set, whole, or a feed of text blocks to
 *  train on as they are built: a binary data set is opened (copied to the
 *  cache first when one is asked for), a cache of the input as it is now is
 *  opened instead of it, and text goes to a feed (written to the cache on
 *  the way when one is asked for).
 *
 *  A cache is used only when its source record (hog_hgd_source) matches
 *  the input file exactly: size, modification time, inode, device, the
 *  hash of its first and last MiB, and the read options. Anything else (no
 *  record, another file, other options, a cache that does not open or
 *  fails a checksum) rebuilds it from the input, with a warning that says
 *  why; a cache is never trusted on its age alone, and a bad one is never
 *  fatal. The input of a pipe has no record: its cache is always rebuilt.
 * ===================================================================== */
typedef struct hog_input {
    hog_read_params read; /* how it is read: rp or the defaults, rows_per_block settled */
    hog_dataset *ds;      /* the data set opened whole, or NULL when feed is set */
    hog_feed *feed;       /* text being read, or NULL */
    int cache_used;       /* 1: ds is the cache, whose record matches the input */
    int text;             /* 1: the input is text (read now, or through its cache) */
    const char *unsized;  /* text of unknown length (a pipe): why the feed's positions are no fraction of
                             the whole, as a note; NULL otherwise */
} hog_input;

/* Opens path (rp: as for hog_dataset_open, NULL for the defaults) for
 * training, with cache_path (or NULL) as the cache; depth: the most blocks
 * a feed hands out and has not had back. On success the caller owns in->ds
 * or in->feed (hog_dataset_close, hog_feed_free). Errors: those of
 * hog_resolve_format, hog_hgd_open_within, hog_atomic_open and hog_feed_start,
 * -errno reading the input's first and last MiB, HOG_EPARAM when
 * cache_path is the input itself (under any name); err says which. */
int hog_input_open(const char *path, const hog_read_params *rp, const char *cache_path, unsigned depth,
                   hog_input *in, char *err, size_t err_len);

/* hog_input_open without a cache, text going to a feed for one pass
 * (hog_feed_start_pass, which takes stop_fd: -1 for none, else the
 * caller's descriptor that ends the read once readable): no block of it is
 * kept. A binary input is opened whole and has nothing to stop. */
int hog_input_open_pass(const char *path, const hog_read_params *rp, unsigned depth, int stop_fd, hog_input *in,
                        char *err, size_t err_len);

/* 1 when in's feed ended its read because the stop fd became readable
 * (hog_feed_stopped); 0 otherwise, and for a data set opened whole. Valid
 * once the feed's hog_feed_next has returned 0 (or an error). Any thread. */
int hog_input_stopped(hog_input *in);

/* Opens the test set at test_path (NULL: none, *test NULL) as the training
 * data was read: with r, and with train_base, the training data's libsvm
 * index base, when r leaves it to detection. Errors: those of
 * hog_dataset_open. */
int hog_input_open_test(const char *test_path, const hog_read_params *r, int train_base, hog_dataset **test,
                        char *err, size_t err_len);

#endif /* HOG_ETL_H */
