/* etl_hgd.c: the binary dataset format (.hgd): block checksums and the fingerprint, the block-by-block writer, and the validating mmap reader. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>

#include "etl.h"

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
 *  Little helpers
 * ===================================================================== */

static inline uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) / align * align;
}

/* Finite without a libm call: an f32 is non-finite exactly when its exponent bits are all ones. */
static inline int f32_finite(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return (bits & 0x7f800000u) != 0x7f800000u;
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
static uint32_t lanes_max(const uint32_t *a, uint32_t n)
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

/* How many k in 1..n have a[k] < a[k - 1] (or equal, with equal). */
static uint32_t lanes_descents(const uint32_t *a, uint32_t n, int equal)
{
    v4u c = {0, 0, 0, 0};
    uint32_t k = 1, total = 0;
    for (; k + 4 <= n; k += 4) {
        const v4u x = v4u_at(a + k), prev = v4u_at(a + k - 1);
        c -= equal ? (v4u)(x <= prev) : (v4u)(x < prev); /* a true lane is all ones: -1 */
    }
    total = c[0] + c[1] + c[2] + c[3];
    for (; k < n; k++)
        total += equal ? a[k] <= a[k - 1] : a[k] < a[k - 1];
    return total;
}

/* Whether any of the f32 bit patterns a[0..n) is infinite or NaN, or
 * with sign, negative (below -0). */
static uint32_t lanes_nonfinite(const uint32_t *a, uint32_t n, int sign)
{
    const uint32_t above = sign ? 0x7f800000u : 0xffffffffu; /* from 0x7f800000 up: inf, NaN, negative */
    v4u bad = {0, 0, 0, 0};
    uint32_t k = 0, any = 0;
    for (; k + 4 <= n; k += 4) {
        const v4u x = v4u_at(a + k);
        bad |= (v4u)((x & 0x7f800000u) == 0x7f800000u) | ((v4u)(x >= above) & (v4u)(x != 0x80000000u));
    }
    any = v4u_or(bad);
    for (; k < n; k++)
        any |= ((a[k] & 0x7f800000u) == 0x7f800000u) | ((a[k] >= above) & (a[k] != 0x80000000u));
    return any;
}

/* Whether every label[0..n) is y0 or y1 (which may be y0). */
static int lanes_two_labels(const float *label, uint32_t n, float y0, float y1)
{
    v4u bad = {0, 0, 0, 0};
    uint32_t k = 0, any = 0;
    for (; k + 4 <= n; k += 4) {
        v4f x;
        memcpy(&x, label + k, sizeof(x));
        bad |= (v4u)(x != y0) & (v4u)(x != y1);
    }
    any = v4u_or(bad);
    for (; k < n; k++)
        any |= (label[k] != y0) & (label[k] != y1);
    return !any;
}

/* ===================================================================== *
 *  Checksums and fingerprint
 * ===================================================================== */

#define FP_SEED 0x686f676461746131ULL /* "hogdata1" */

/* Folded incrementally, so a streaming writer needs no list of blocks. */
static inline uint64_t fp_step(uint64_t h, uint32_t rows, uint32_t nnz, uint64_t sum)
{
    h = hog_mix64(h ^ (((uint64_t)rows << 32) | nnz));
    return hog_mix64(h ^ sum);
}

uint64_t hog_etl_fingerprint(const hog_block *blocks, uint32_t n)
{
    uint64_t h = FP_SEED;
    for (uint32_t i = 0; i < n; i++)
        h = fp_step(h, blocks[i].rows, blocks[i].nnz, blocks[i].sum);
    return h;
}

/* The arrays of a block in file order, as (pointer, bytes) pairs. */
typedef struct block_arrays {
    const void *p[6];
    size_t len[6];
    unsigned n;
} block_arrays;

static void arrays_of(block_arrays *a, const hog_block *b)
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

uint64_t hog_block_sum(const hog_block *b)
{
    block_arrays a;
    arrays_of(&a, b);
    uint64_t s = 0;
    for (unsigned i = 0; i < a.n; i++)
        s = hog_hash64(a.p[i], a.len[i], s);
    return s;
}

/* ===================================================================== *
 *  Header and table layout (see etl.h for the byte map)
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
    H_FIELDS_END = 300, /* zero from here on */
    H1_HEADER_CRC = 84, /* version 1 */
    H1_END = 88,
};

enum { T_OFFSET = 0, T_BYTES = 8, T_ROWS = 16, T_NNZ = 20, T_SUM = 24, T1_RESERVED = 28 };

_Static_assert(H_SOURCE_END == H_SUMMARY_OFFSET, "the summary's place follows the source record");
_Static_assert(H_SUMMARY_END == H_NAMES_OFFSET, "the class names' place follows the summary's");
_Static_assert(H_NAMES_END == H_FNAMES_OFFSET, "the feature names' place follows the class names'");
_Static_assert(H_FNAMES_END == H_FIELDS, "the field count's place follows the feature names'");
_Static_assert(HOG_MAX_LABEL_NAMES <= HOG_HGD_SUMMARY_LABELS, "a file with class names lists their numbers");

/* The summary's size for its counts (labels read as 0 when MANY). */
static uint64_t summary_size(uint32_t labels, uint32_t degrees)
{
    return 8 + 16 * (uint64_t)(labels == HOG_HGD_MANY_LABELS ? 0 : labels) + 4 * (uint64_t)degrees;
}

/* The summary's sum, chained over its arrays as a block's is. */
static uint64_t summary_sum(const uint8_t *head, const hog_hgd_summary *s)
{
    const uint64_t n = s->labels == HOG_HGD_MANY_LABELS ? 0 : s->labels;
    uint64_t sum = hog_hash64(head, 8, 0);
    sum = hog_hash64(s->label, n * sizeof(double), sum);
    sum = hog_hash64(s->count, n * sizeof(uint64_t), sum);
    return hog_hash64(s->degree, (uint64_t)s->degrees * sizeof(uint32_t), sum);
}

static const uint8_t hgd_magic[8] = HOG_HGD_MAGIC; /* the string's NUL is the eighth byte */

/* The header's own checksum, over its bytes with the checksum field zero. */
static uint64_t header_sum(const uint8_t *h, uint32_t version)
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

static uint64_t table_sum(const uint8_t *table, size_t bytes, uint32_t version)
{
    return version == 1 ? hog_crc32(0, table, bytes) : hog_hash64(table, bytes, 0);
}

/* ===================================================================== *
 *  Writer: blocks at aligned offsets after the header, then the table,
 *  then the header last, so a crash mid-write never leaves a valid header
 *  over incomplete data (and the atomic rename hides it anyway). Buffered,
 *  padding is never written: the file is new, and what lies between blocks
 *  reads as zeros; with O_DIRECT the padding is written, as zeros.
 * ===================================================================== */

#define STAGES 4u

struct hog_hgd_writer {
    hog_atomic_file *f;
    uint64_t offset; /* where the next block goes */
    uint8_t *table;
    size_t table_cap; /* entries */
    uint32_t blocks;
    uint64_t rows, nnz, fingerprint;
    uint64_t direct_from; /* turn O_DIRECT on at this offset (0: never; hog_builder_direct_from) */
    hog_hgd_source src;   /* the source record of a cache */
    int has_src;
    const hog_idmap *names; /* the class names (hog_hgd_writer_set_names), or NULL */
    const hog_fnames *fnames; /* the feature names (hog_hgd_writer_set_fnames), or NULL */
    uint32_t fields;          /* the blocks' fields (hog_hgd_writer_set_fields), 0: none */
    /* The summary, counted as the blocks go by: the label values and
     * their rows (dropped past HOG_HGD_SUMMARY_LABELS: many), each
     * feature's degree (dropped past HOG_HGD_SUMMARY_FEATURES). */
    double *label;
    uint64_t *count;
    uint32_t labels;
    int many_labels;
    uint32_t *degree;
    size_t degree_cap; /* entries, all counted so far (the rest zero) */
    int no_degrees;
    /* With O_DIRECT on, a block is gathered into a stage (page-aligned,
     * zero padded: its arrays lie apart in memory and end at any byte) and
     * written in one piece through the ring, up to STAGES at once, so the
     * caller goes on while the device writes. */
    struct io_uring ring;
    int ring_ok;
    unsigned next; /* the stage the next block goes to */
    struct stage {
        uint8_t *buf;
        size_t cap, len;
        uint64_t off;
        int busy; /* its write is in flight */
    } stage[STAGES];
};

_Static_assert(HOG_HGD_HEADER_BYTES % HOG_DIRECT_ALIGN == 0 && HOG_HGD_ALIGN % HOG_DIRECT_ALIGN == 0,
               "blocks start and end where O_DIRECT can write them");

static void writer_init(hog_hgd_writer *w, hog_atomic_file *f)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
    w->offset = HOG_HGD_HEADER_BYTES;
    w->fingerprint = FP_SEED;
}

/* Waits for one write of the ring and settles it: what a short write left,
 * or all of a write the file system refused with O_DIRECT (EINVAL), goes
 * through hog_atomic_pwrite, which falls back to buffered writes as it
 * does for its own. Returns 0 or -errno. */
static int writer_reap(hog_hgd_writer *w)
{
    struct io_uring_cqe *cqe;
    int rc;
    while ((rc = io_uring_wait_cqe(&w->ring, &cqe)) == -EINTR)
        ;
    if (rc < 0) { /* the ring failed: nothing more comes (its exit waits for the device) */
        for (unsigned i = 0; i < STAGES; i++)
            w->stage[i].busy = 0;
        return rc;
    }
    struct stage *st = &w->stage[io_uring_cqe_get_data64(cqe)];
    const int res = cqe->res;
    io_uring_cqe_seen(&w->ring, cqe);
    st->busy = 0;
    if (res < 0 && res != -EINVAL)
        return res;
    const size_t done = res < 0 ? 0 : (size_t)res;
    return done < st->len ? hog_atomic_pwrite(w->f, st->buf + done, st->len - done, st->off + done) : 0;
}

/* Waits for every write in flight; the first error is returned. */
static int writer_drain(hog_hgd_writer *w)
{
    int rc = 0;
    for (unsigned i = 0; i < STAGES; i++)
        while (w->stage[i].busy) {
            int r = writer_reap(w);
            if (r < 0 && rc == 0)
                rc = r;
        }
    return rc;
}

static void writer_free(hog_hgd_writer *w)
{
    if (w->ring_ok) { /* the device may still read the stages */
        (void)writer_drain(w);
        io_uring_queue_exit(&w->ring);
        w->ring_ok = 0;
    }
    for (unsigned i = 0; i < STAGES; i++) {
        hog_free(w->stage[i].buf);
        w->stage[i] = (struct stage){0};
    }
    hog_free(w->table);
    w->table = NULL;
    hog_free(w->label);
    hog_free(w->count);
    hog_free(w->degree);
    w->label = NULL;
    w->count = NULL;
    w->degree = NULL;
}

/* Writes a block's arrays at w->offset: in place, or with O_DIRECT on,
 * gathered into the next stage with their padding and queued on the ring
 * (made at the first such block). */
static int writer_put(hog_hgd_writer *w, const block_arrays *a, uint64_t padded)
{
    int rc;
    if (w->direct_from && w->offset >= w->direct_from) {
        (void)hog_atomic_direct(w->f, 1); /* refused (tmpfs): buffered, as before */
        w->direct_from = 0;
    }
    if (!w->f->direct) {
        uint64_t at = w->offset;
        for (unsigned i = 0; i < a->n; i++) {
            if ((rc = hog_atomic_pwrite(w->f, a->p[i], a->len[i], at)) < 0)
                return rc;
            at += a->len[i];
        }
        return 0;
    }
    if (!w->ring_ok) {
        if ((rc = io_uring_queue_init(STAGES, &w->ring, 0)) < 0)
            return rc;
        w->ring_ok = 1;
    }
    struct stage *st = &w->stage[w->next];
    while (st->busy)
        if ((rc = writer_reap(w)) < 0)
            return rc;
    if (padded > st->cap) {
        hog_free(st->buf);
        st->cap = 0;
        if (!(st->buf = hog_aligned_alloc(HOG_DIRECT_ALIGN, (size_t)padded)))
            return -ENOMEM;
        st->cap = (size_t)padded;
    }
    uint8_t *p = st->buf;
    for (unsigned i = 0; i < a->n; i++) {
        memcpy(p, a->p[i], a->len[i]);
        p += a->len[i];
    }
    memset(p, 0, (size_t)(st->buf + padded - p));
    struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring); /* STAGES entries, at most STAGES in flight */
    io_uring_prep_write(sqe, w->f->fd, st->buf, (unsigned)padded, w->offset);
    io_uring_sqe_set_data64(sqe, w->next);
    if ((rc = io_uring_submit(&w->ring)) < 0)
        return rc;
    st->len = (size_t)padded;
    st->off = w->offset;
    st->busy = 1;
    if (w->offset + padded > w->f->end)
        w->f->end = w->offset + padded;
    w->next = (w->next + 1) % STAGES;
    return 0;
}

int hog_hgd_writer_create(hog_atomic_file *f, hog_hgd_writer **out)
{
    *out = hog_malloc(sizeof(**out));
    if (!*out)
        return -ENOMEM;
    writer_init(*out, f);
    return 0;
}

void hog_hgd_writer_direct_from(hog_hgd_writer *w, uint64_t bytes)
{
    w->direct_from = bytes;
}

uint32_t hog_hgd_writer_blocks(const hog_hgd_writer *w)
{
    return w->blocks;
}

void hog_hgd_writer_set_source(hog_hgd_writer *w, const hog_hgd_source *src)
{
    w->has_src = src != NULL;
    if (src)
        w->src = *src;
}

void hog_hgd_writer_set_names(hog_hgd_writer *w, const hog_idmap *names)
{
    w->names = names && names->n ? names : NULL;
}

void hog_hgd_writer_set_fnames(hog_hgd_writer *w, const hog_fnames *fnames)
{
    w->fnames = fnames && fnames->n ? fnames : NULL;
}

void hog_hgd_writer_set_fields(hog_hgd_writer *w, uint32_t fields)
{
    w->fields = fields;
}

/* The record in the header's bytes (see etl.h), and back. */
static void put_source(uint8_t *h, const hog_hgd_source *src)
{
    hog_put_u64(h + H_SOURCE_BYTES, src->bytes);
    hog_put_u64(h + H_SOURCE_MTIME, (uint64_t)src->mtime_ns);
    hog_put_u64(h + H_SOURCE_INODE, src->inode);
    hog_put_u64(h + H_SOURCE_DEVICE, src->device);
    hog_put_u64(h + H_SOURCE_SAMPLE, src->sample);
    for (unsigned i = 0; i < HOG_HGD_READ_FIELDS; i++)
        hog_put_u64(h + H_SOURCE_READ + 8 * i, src->read[i]);
}

static void get_source(const uint8_t *h, hog_hgd_source *src)
{
    src->bytes = hog_get_u64(h + H_SOURCE_BYTES);
    src->mtime_ns = (int64_t)hog_get_u64(h + H_SOURCE_MTIME);
    src->inode = hog_get_u64(h + H_SOURCE_INODE);
    src->device = hog_get_u64(h + H_SOURCE_DEVICE);
    src->sample = hog_get_u64(h + H_SOURCE_SAMPLE);
    for (unsigned i = 0; i < HOG_HGD_READ_FIELDS; i++)
        src->read[i] = hog_get_u64(h + H_SOURCE_READ + 8 * i);
}

/* Counts one more row of label y (finite: the builder's and a checked
 * file's blocks are) into the ascending list of labels. Returns 0 with *at
 * its place, 1 once there are more labels than a summary lists (a
 * regression target, say: the list is dropped), or -ENOMEM. */
static int summary_label(hog_hgd_writer *w, double y, uint32_t *at)
{
    if (!w->label) {
        w->label = hog_malloc(HOG_HGD_SUMMARY_LABELS * sizeof(double));
        w->count = hog_malloc(HOG_HGD_SUMMARY_LABELS * sizeof(uint64_t));
        if (!w->label || !w->count)
            return -ENOMEM;
    }
    const uint32_t lo = hog_search_f64(w->label, w->labels, y);
    *at = lo;
    if (lo < w->labels && w->label[lo] == y) {
        w->count[lo]++;
        return 0;
    }
    if (w->labels == HOG_HGD_SUMMARY_LABELS) {
        w->many_labels = 1;
        hog_free(w->label);
        hog_free(w->count);
        w->label = NULL;
        w->count = NULL;
        w->labels = 0;
        return 1;
    }
    memmove(w->label + lo + 1, w->label + lo, (w->labels - lo) * sizeof(double));
    memmove(w->count + lo + 1, w->count + lo, (w->labels - lo) * sizeof(uint64_t));
    w->label[lo] = y;
    w->count[lo] = 1;
    w->labels++;
    return 0;
}

/* The class names' sum: of their count, then of the names, seeded with it. */
static uint64_t names_sum(const uint8_t *count, const void *names, uint64_t names_len)
{
    return hog_hash64(names, names_len, hog_hash64(count, 4, 0));
}

/* Room for the degrees of features 0..need, the new ones zero; past
 * HOG_HGD_SUMMARY_FEATURES the degrees are dropped (no_degrees). */
static int degrees_room(hog_hgd_writer *w, uint64_t need)
{
    if (need > HOG_HGD_SUMMARY_FEATURES) {
        hog_free(w->degree);
        w->degree = NULL;
        w->degree_cap = 0;
        w->no_degrees = 1;
        return 0;
    }
    if (need <= w->degree_cap)
        return 0;
    const size_t had = w->degree_cap;
    void *d = w->degree;
    int rc = hog_array_grow(&d, &w->degree_cap, (size_t)need, sizeof(uint32_t), 1024);
    w->degree = d;
    if (rc == 0)
        memset(w->degree + had, 0, (w->degree_cap - had) * sizeof(uint32_t));
    return rc;
}

/* Adds a block's rows to the summary. A feature's degree is the number of
 * its non-zeros, one per row (indices are strictly increasing in a row). */
static int summary_add(hog_hgd_writer *w, const hog_block *blk)
{
    double last = NAN; /* runs of one label skip the search */
    uint32_t at = 0;
    for (uint32_t r = 0; r < blk->rows && !w->many_labels; r++) {
        const double y = blk->label[r];
        if (y == last) {
            w->count[at]++;
            continue;
        }
        int rc = summary_label(w, y, &at);
        if (rc < 0)
            return rc;
        last = y;
    }
    if (w->no_degrees)
        return 0;
    const uint64_t need = blk->nnz ? (uint64_t)lanes_max(blk->index, blk->nnz) + 1 : 0;
    int rc = degrees_room(w, need);
    if (rc < 0 || w->no_degrees)
        return rc;
    uint32_t *const deg = w->degree;
    for (uint32_t k = 0; k < blk->nnz; k++)
        deg[blk->index[k]]++;
    return 0;
}

int hog_hgd_writer_block(hog_hgd_writer *w, const hog_block *blk)
{
    const uint32_t rows = blk->rows, nnz = blk->nnz;
    block_arrays a;
    arrays_of(&a, blk);
    uint64_t bytes = 0;
    for (unsigned i = 0; i < a.n; i++)
        bytes += a.len[i];
    uint64_t padded = round_up(bytes, HOG_HGD_ALIGN);
    void *table = w->table;
    int rc = hog_array_grow(&table, &w->table_cap, (size_t)w->blocks + 1, HOG_HGD_TABLE_ENTRY, 64);
    w->table = table;
    if (rc < 0)
        return rc;
    if ((rc = writer_put(w, &a, padded)) < 0 || (rc = summary_add(w, blk)) < 0)
        return rc;
    uint8_t *e = w->table + (size_t)w->blocks * HOG_HGD_TABLE_ENTRY;
    hog_put_u64(e + T_OFFSET, w->offset);
    hog_put_u64(e + T_BYTES, padded);
    hog_put_u32(e + T_ROWS, rows);
    hog_put_u32(e + T_NNZ, nnz);
    hog_put_u64(e + T_SUM, blk->sum);
    w->blocks++;
    w->offset += padded;
    w->rows += rows;
    w->nnz += nnz;
    w->fingerprint = fp_step(w->fingerprint, rows, nnz, blk->sum);
    return 0;
}

int hog_hgd_writer_finish(hog_hgd_writer *w, uint64_t features, uint32_t rows_per_block, int weighted,
                          int one_based, hog_dataset_info *info)
{
    /* The summary's degrees cover every feature the header counts, those
     * no row has included (a caller may declare more than it uses). */
    if (!w->no_degrees) {
        int rc = degrees_room(w, features);
        if (rc < 0)
            return rc;
    }
    const hog_hgd_summary sum = {
        .labels = w->many_labels ? HOG_HGD_MANY_LABELS : w->labels,
        .degrees = w->no_degrees ? 0 : (uint32_t)features,
        .label = w->label,
        .count = w->count,
        .degree = w->degree,
    };
    uint8_t head[8];
    hog_put_u32(head, sum.labels);
    hog_put_u32(head + 4, sum.degrees);
    const uint64_t summary_offset = w->offset, summary_bytes = summary_size(sum.labels, sum.degrees);
    const size_t listed = sum.labels == HOG_HGD_MANY_LABELS ? 0 : sum.labels;
    /* The class names: their count, then the map's bytes as they lie (its
     * names back to back, each with its NUL). */
    uint8_t names_head[4];
    const hog_idmap *names = w->names;
    hog_put_u32(names_head, names ? names->n : 0);
    const uint64_t names_offset = round_up(summary_offset + summary_bytes, 8);
    const uint64_t names_bytes = names ? 4 + names->names_len : 0;
    /* The feature names, in their file form (hog_fnames_put). */
    const hog_fnames *fn = w->fnames;
    const uint64_t fnames_offset = round_up(names ? names_offset + names_bytes : summary_offset + summary_bytes, 8);
    const uint64_t fnames_bytes = fn ? hog_fnames_bytes(fn) : 0;
    const uint32_t version = w->fields ? HOG_HGD_VERSION
                             : fn      ? HOG_HGD_VERSION_FNAMES
                             : names   ? HOG_HGD_VERSION_CLASSES
                                       : HOG_HGD_VERSION_NUMBERS;
    size_t table_bytes = (size_t)w->blocks * HOG_HGD_TABLE_ENTRY;
    uint64_t table_offset = round_up(fn ? fnames_offset + fnames_bytes : fnames_offset, 8);
    uint64_t file_bytes = table_offset + table_bytes;
    uint8_t *fbuf = fn ? hog_malloc((size_t)fnames_bytes) : NULL;
    if (fn && !fbuf)
        return -ENOMEM;
    if (fn)
        hog_fnames_put(fn, fbuf);
    /* The blocks are all written (nothing is in flight without a ring);
     * the summary, the table and the header end at any byte: buffered. */
    int rc = writer_drain(w);
    if (rc == 0 && w->f->direct)
        rc = hog_atomic_direct(w->f, 0);
    uint64_t at = summary_offset;
    if (rc == 0)
        rc = hog_atomic_pwrite(w->f, head, sizeof(head), at);
    at += sizeof(head);
    if (rc == 0 && listed)
        rc = hog_atomic_pwrite(w->f, sum.label, listed * sizeof(double), at);
    at += listed * sizeof(double);
    if (rc == 0 && listed)
        rc = hog_atomic_pwrite(w->f, sum.count, listed * sizeof(uint64_t), at);
    at += listed * sizeof(uint64_t);
    if (rc == 0 && sum.degrees)
        rc = hog_atomic_pwrite(w->f, sum.degree, (size_t)sum.degrees * sizeof(uint32_t), at);
    if (rc == 0 && names)
        rc = hog_atomic_pwrite(w->f, names_head, sizeof(names_head), names_offset);
    if (rc == 0 && names)
        rc = hog_atomic_pwrite(w->f, names->names, (size_t)names->names_len, names_offset + sizeof(names_head));
    if (rc == 0 && fn)
        rc = hog_atomic_pwrite(w->f, fbuf, (size_t)fnames_bytes, fnames_offset);
    if (rc == 0)
        rc = hog_atomic_pwrite(w->f, w->table, table_bytes, table_offset);
    const uint64_t fnames_sum = fn ? hog_hash64(fbuf, (size_t)fnames_bytes, 0) : 0;
    hog_free(fbuf);
    if (rc < 0)
        return rc;

    uint8_t h[HOG_HGD_HEADER_BYTES];
    memset(h, 0, sizeof(h));
    memcpy(h + H_MAGIC, hgd_magic, sizeof(hgd_magic));
    hog_put_u32(h + H_VERSION, version);
    hog_put_u32(h + H_HEADER_BYTES, HOG_HGD_HEADER_BYTES);
    hog_put_u64(h + H_ROWS, w->rows);
    hog_put_u64(h + H_FEATURES, features);
    hog_put_u64(h + H_NNZ, w->nnz);
    hog_put_u32(h + H_BLOCKS, w->blocks);
    hog_put_u32(h + H_ROWS_PER_BLOCK, rows_per_block);
    hog_put_u32(h + H_FLAGS, (weighted ? HOG_HGD_WEIGHTED : 0) | (one_based ? HOG_HGD_ONE_BASED : 0) |
                                 (w->has_src ? HOG_HGD_SOURCE : 0) | HOG_HGD_SUMMARY | (names ? HOG_HGD_NAMES : 0) |
                                 (fn ? HOG_HGD_FNAMES : 0) | (w->fields ? HOG_HGD_FIELDS : 0));
    hog_put_u32(h + H_BLOCK_ALIGN, HOG_HGD_ALIGN);
    hog_put_u64(h + H_TABLE_OFFSET, table_offset);
    hog_put_u64(h + H_FILE_BYTES, file_bytes);
    hog_put_u64(h + H_FINGERPRINT, w->fingerprint);
    if (w->has_src)
        put_source(h, &w->src);
    hog_put_u64(h + H_SUMMARY_OFFSET, summary_offset);
    hog_put_u64(h + H_SUMMARY_BYTES, summary_bytes);
    hog_put_u64(h + H_SUMMARY_SUM, summary_sum(head, &sum));
    if (names) {
        hog_put_u64(h + H_NAMES_OFFSET, names_offset);
        hog_put_u64(h + H_NAMES_BYTES, names_bytes);
        hog_put_u64(h + H_NAMES_SUM, names_sum(names_head, names->names, names->names_len));
    }
    if (fn) {
        hog_put_u64(h + H_FNAMES_OFFSET, fnames_offset);
        hog_put_u64(h + H_FNAMES_BYTES, fnames_bytes);
        hog_put_u64(h + H_FNAMES_SUM, fnames_sum);
    }
    if (w->fields)
        hog_put_u32(h + H_FIELDS, w->fields);
    hog_put_u64(h + H_TABLE_SUM, table_sum(w->table, table_bytes, version));
    hog_put_u64(h + H_HEADER_SUM, header_sum(h, version));
    rc = hog_atomic_pwrite(w->f, h, sizeof(h), 0);
    if (rc < 0)
        return rc;

    if (info) {
        memset(info, 0, sizeof(*info));
        info->format = HOG_FORMAT_BINARY;
        info->rows = w->rows;
        info->features = features;
        info->nnz = w->nnz;
        info->blocks = w->blocks;
        info->rows_per_block = rows_per_block;
        info->weighted = weighted;
        info->index_base = one_based;
        info->fingerprint = w->fingerprint;
        info->file_bytes = file_bytes;
    }
    return 0;
}

void hog_hgd_writer_free(hog_hgd_writer *w)
{
    if (!w)
        return;
    writer_free(w);
    hog_free(w);
}

/* Blocks read from a version-1 file carry CRCs: written again, they get sums. */
int hog_hgd_write(const hog_dataset *ds, const hog_hgd_source *src, hog_atomic_file *f)
{
    hog_hgd_writer w;
    writer_init(&w, f);
    hog_hgd_writer_set_source(&w, src);
    hog_hgd_writer_set_names(&w, &ds->names);
    hog_hgd_writer_set_fnames(&w, &ds->fnames);
    hog_hgd_writer_set_fields(&w, ds->fields);
    int rc = 0;
    for (uint32_t i = 0; i < ds->info.blocks && rc == 0; i++) {
        hog_block b = ds->blocks[i];
        if (ds->version == 1)
            b.sum = hog_block_sum(&b);
        rc = hog_hgd_writer_block(&w, &b);
    }
    if (rc == 0)
        rc = hog_hgd_writer_finish(&w, ds->info.features, ds->info.rows_per_block, ds->info.weighted,
                                   ds->info.index_base == 1, NULL);
    writer_free(&w);
    return rc;
}

/* ===================================================================== *
 *  Reader: map, then validate every byte that a trainer will trust
 * ===================================================================== */


/* Where the first byte that is not zero lies in p[0..n), or n: a word at a
 * time, as the header is read two or three times per open. */
static size_t first_nonzero(const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        if (hog_get_u64(p + i) != 0)
            break;
    while (i < n && p[i] == 0)
        i++;
    return i;
}

/* Checks the fixed header fields; h holds the first 4096 bytes (zero-padded
 * past the end of a short file), size the file's length. */
static int check_header(const char *path, const uint8_t *h, uint64_t size, char *err, size_t len)
{
    if (size < sizeof(hgd_magic) || memcmp(h + H_MAGIC, hgd_magic, sizeof(hgd_magic)) != 0)
        return hog_fail(HOG_EMAGIC, err, len, "%s: not a hogtrain dataset (bad magic)", path);
    if (size < H_VERSION + 4)
        return hog_fail(HOG_ETRUNCATED, err, len, "%s: truncated: file has %llu bytes",
                        path, (unsigned long long)size);
    uint32_t version = hog_get_u32(h + H_VERSION);
    if (version < 1 || version > HOG_HGD_VERSION)
        return hog_fail(HOG_EVERSION, err, len, "%s: version %u, this build reads versions 1 to %u",
                        path, version, HOG_HGD_VERSION);
    if (size < HOG_HGD_HEADER_BYTES) {
        if (size >= H_FILE_BYTES + 8)
            return hog_fail(HOG_ETRUNCATED, err, len,
                            "%s: truncated: header says %llu bytes, file has %llu", path,
                            (unsigned long long)hog_get_u64(h + H_FILE_BYTES),
                            (unsigned long long)size);
        return hog_fail(HOG_ETRUNCATED, err, len,
                        "%s: truncated: file has %llu bytes, less than the %u-byte header", path,
                        (unsigned long long)size, HOG_HGD_HEADER_BYTES);
    }
    uint64_t stored = version == 1 ? hog_get_u32(h + H1_HEADER_CRC) : hog_get_u64(h + H_HEADER_SUM);
    uint64_t sum = header_sum(h, version);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: header checksum mismatch (stored 0x%016llx, computed 0x%016llx)", path,
                        (unsigned long long)stored, (unsigned long long)sum);
    uint64_t file_bytes = hog_get_u64(h + H_FILE_BYTES);
    if (file_bytes > size)
        return hog_fail(HOG_ETRUNCATED, err, len,
                        "%s: truncated: header says %llu bytes, file has %llu", path,
                        (unsigned long long)file_bytes, (unsigned long long)size);
    if (file_bytes < size)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header says %llu bytes, file has %llu (trailing bytes)", path,
                        (unsigned long long)file_bytes, (unsigned long long)size);
    uint32_t header_bytes = hog_get_u32(h + H_HEADER_BYTES);
    if (header_bytes != HOG_HGD_HEADER_BYTES)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: header_bytes is %u, expected %u", path,
                        header_bytes, HOG_HGD_HEADER_BYTES);
    uint32_t flags = hog_get_u32(h + H_FLAGS);
    const uint32_t known = version == 1   ? 0u
                           : version == 2 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE
                           : version == 3 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY
                           : version == 4 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES
                           : version == 5 ? HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES | HOG_HGD_FNAMES
                                          : HOG_HGD_WEIGHTED | HOG_HGD_ONE_BASED | HOG_HGD_SOURCE | HOG_HGD_SUMMARY |
                                                HOG_HGD_NAMES | HOG_HGD_FNAMES | HOG_HGD_FIELDS;
    if (flags & ~known)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: unknown flags 0x%x", path, flags);
    uint32_t align = hog_get_u32(h + H_BLOCK_ALIGN);
    if (align != HOG_HGD_ALIGN)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: block_align is %u, expected %u", path,
                        align, HOG_HGD_ALIGN);
    /* Zero but for the records its flags announce. */
    const size_t zero[6][2] = {
        {version == 1 ? H1_END : flags & HOG_HGD_SOURCE ? H_SOURCE_END : H_END, H_SUMMARY_OFFSET},
        {flags & HOG_HGD_SUMMARY ? H_SUMMARY_END : H_SUMMARY_OFFSET, H_SUMMARY_END},
        {flags & HOG_HGD_NAMES ? H_NAMES_END : H_NAMES_OFFSET, H_NAMES_END},
        {flags & HOG_HGD_FNAMES ? H_FNAMES_END : H_FNAMES_OFFSET, H_FNAMES_END},
        {flags & HOG_HGD_FIELDS ? H_FIELDS_END : H_FIELDS, H_FIELDS_END},
        {H_FIELDS_END, HOG_HGD_HEADER_BYTES},
    };
    for (size_t i = 0; i < HOG_ARRAY_LEN(zero); i++) {
        const size_t from = HOG_MIN(zero[i][0], zero[i][1]), n = zero[i][1] - from;
        const size_t nonzero = first_nonzero(h + from, n);
        if (nonzero < n)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: header byte %zu is not zero", path, from + nonzero);
    }

    uint64_t rows = hog_get_u64(h + H_ROWS), features = hog_get_u64(h + H_FEATURES);
    uint32_t blocks = hog_get_u32(h + H_BLOCKS), rpb = hog_get_u32(h + H_ROWS_PER_BLOCK);
    if (rpb == 0 || rpb > HOG_MAX_ROWS_PER_BLOCK)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: rows_per_block is %u, not between 1 and %u", path, rpb,
                        HOG_MAX_ROWS_PER_BLOCK);
    if (rows > (uint64_t)UINT32_MAX * rpb || (rows + rpb - 1) / rpb != blocks)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: %u blocks cannot hold %llu rows of %u per block", path, blocks,
                        (unsigned long long)rows, rpb);
    if (features > (uint64_t)UINT32_MAX + 1)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: features %llu exceeds 2^32", path,
                        (unsigned long long)features);
    uint64_t table_offset = hog_get_u64(h + H_TABLE_OFFSET);
    if (table_offset % 8 != 0 || table_offset < HOG_HGD_HEADER_BYTES ||
        table_offset > file_bytes ||
        (file_bytes - table_offset) != (uint64_t)blocks * HOG_HGD_TABLE_ENTRY)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: table_offset %llu does not place %u table entries at the end of "
                        "%llu bytes",
                        path, (unsigned long long)table_offset, blocks,
                        (unsigned long long)file_bytes);
    const uint32_t fields = hog_get_u32(h + H_FIELDS);
    if ((flags & HOG_HGD_FIELDS) && (fields == 0 || fields > HOG_MAX_FIELDS))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: fields is %u, not between 1 and %u", path, fields,
                        HOG_MAX_FIELDS);
    if (rows == 0)
        return hog_fail(HOG_EEMPTY, err, len, "%s: data set has no rows", path);
    return 0;
}

/* Checks the table entries against the header and each other; fills the block views. */
static int check_table(const char *path, const uint8_t *map, const uint8_t *h, hog_block *out,
                       uint64_t *blocks_end, char *err, size_t len)
{
    uint64_t rows = hog_get_u64(h + H_ROWS), nnz = hog_get_u64(h + H_NNZ);
    uint32_t blocks = hog_get_u32(h + H_BLOCKS), rpb = hog_get_u32(h + H_ROWS_PER_BLOCK);
    uint32_t version = hog_get_u32(h + H_VERSION);
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    const int layout = (flags & HOG_HGD_WEIGHTED ? HOG_BLOCK_WEIGHTED : 0) | (flags & HOG_HGD_FIELDS ? HOG_BLOCK_FIELDS : 0);
    uint64_t table_offset = hog_get_u64(h + H_TABLE_OFFSET);
    const uint8_t *table = map + table_offset;
    size_t table_bytes = (size_t)blocks * HOG_HGD_TABLE_ENTRY;

    uint64_t stored = version == 1 ? hog_get_u32(h + H_TABLE_SUM) : hog_get_u64(h + H_TABLE_SUM);
    uint64_t sum = table_sum(table, table_bytes, version);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: block table checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                        path, (unsigned long long)stored, (unsigned long long)sum);

    uint64_t end = HOG_HGD_HEADER_BYTES, nnz_sum = 0, fp = FP_SEED;
    for (uint32_t i = 0; i < blocks; i++) {
        const uint8_t *e = table + (size_t)i * HOG_HGD_TABLE_ENTRY;
        uint64_t off = hog_get_u64(e + T_OFFSET), bytes = hog_get_u64(e + T_BYTES);
        uint32_t brows = hog_get_u32(e + T_ROWS), bnnz = hog_get_u32(e + T_NNZ);
        uint32_t want = i + 1 < blocks ? rpb : (uint32_t)(rows - (uint64_t)i * rpb);
        if (brows != want)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: %u rows, expected %u", path,
                            i, brows, want);
        if (version == 1 && hog_get_u32(e + T1_RESERVED) != 0)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: reserved field is not zero",
                            path, i);
        if (off % HOG_HGD_ALIGN != 0 || bytes % HOG_HGD_ALIGN != 0 || off < end ||
            bytes > table_offset || off > table_offset - bytes)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: offset %llu, %llu bytes: misaligned, overlapping or "
                            "outside %llu..%llu",
                            path, i, (unsigned long long)off, (unsigned long long)bytes,
                            (unsigned long long)end, (unsigned long long)table_offset);
        if (hog_block_bytes(brows, bnnz, layout) > bytes)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: %u rows and %u non-zeros need %llu bytes, entry has "
                            "%llu",
                            path, i, brows, bnnz,
                            (unsigned long long)hog_block_bytes(brows, bnnz, layout),
                            (unsigned long long)bytes);
        nnz_sum += bnnz;
        end = off + bytes;
        uint64_t bsum = version == 1 ? hog_get_u32(e + T_SUM) : hog_get_u64(e + T_SUM);
        fp = fp_step(fp, brows, bnnz, bsum);
        hog_block_view(&out[i], map + off, brows, bnnz, layout, bsum);
    }
    if (nnz_sum != nnz)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: blocks hold %llu non-zeros, header says %llu", path,
                        (unsigned long long)nnz_sum, (unsigned long long)nnz);
    if (fp != hog_get_u64(h + H_FINGERPRINT))
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: fingerprint does not match the block table", path);
    *blocks_end = end;
    return 0;
}

/* Checks a version-3 file's summary against the header and the layout and
 * points *s into the mapping; a file without one leaves *s zero. What it
 * claims of the rows is checked as far as it bears on memory: each label
 * against the rows as their blocks are checked (check_block). */
static int check_summary(const char *path, const uint8_t *map, const uint8_t *h, uint64_t blocks_end,
                         hog_hgd_summary *s, char *err, size_t len)
{
    memset(s, 0, sizeof(*s));
    if (!(hog_get_u32(h + H_FLAGS) & HOG_HGD_SUMMARY))
        return 0;
    const uint64_t off = hog_get_u64(h + H_SUMMARY_OFFSET), bytes = hog_get_u64(h + H_SUMMARY_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    const uint64_t rows = hog_get_u64(h + H_ROWS), features = hog_get_u64(h + H_FEATURES);
    if (off % 8 != 0 || off < blocks_end || bytes < 8 || off > table || bytes > table - off)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: summary at %llu, %llu bytes: misaligned or outside %llu..%llu (after the blocks, "
                        "before the table)",
                        path, (unsigned long long)off, (unsigned long long)bytes, (unsigned long long)blocks_end,
                        (unsigned long long)table);
    const uint8_t *p = map + off;
    const uint32_t labels = hog_get_u32(p), degrees = hog_get_u32(p + 4);
    if (labels != HOG_HGD_MANY_LABELS && (labels == 0 || labels > HOG_HGD_SUMMARY_LABELS || labels > rows))
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: summary lists %u label values, expected 1 to %u (and no more than the %llu rows)",
                        path, labels, HOG_HGD_SUMMARY_LABELS, (unsigned long long)rows);
    if (degrees != 0 && degrees != features)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: summary has the degrees of %u features, the header says %llu",
                        path, degrees, (unsigned long long)features);
    if (bytes != summary_size(labels, degrees))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: summary is %llu bytes, its counts need %llu", path,
                        (unsigned long long)bytes, (unsigned long long)summary_size(labels, degrees));
    const uint32_t listed = labels == HOG_HGD_MANY_LABELS ? 0 : labels;
    s->labels = labels;
    s->degrees = degrees;
    s->label = (const double *)(const void *)(p + 8);
    s->count = (const uint64_t *)(const void *)(p + 8 + 8 * (uint64_t)listed);
    s->degree = (const uint32_t *)(const void *)(p + 8 + 16 * (uint64_t)listed);
    const uint64_t stored = hog_get_u64(h + H_SUMMARY_SUM), sum = summary_sum(p, s);
    int rc = 0;
    if (stored != sum)
        rc = hog_fail(HOG_ECHECKSUM, err, len, "%s: summary checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                      path, (unsigned long long)stored, (unsigned long long)sum);
    uint64_t total = 0;
    for (uint32_t i = 0; i < listed && rc == 0; i++) {
        if (!isfinite(s->label[i]) || (i > 0 && !(s->label[i] > s->label[i - 1])))
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %u (%g) is not finite or not above the one before",
                          path, i, s->label[i]);
        else if ((double)(float)s->label[i] != s->label[i])
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %u (%.17g) is not a 32-bit float, as labels are",
                          path, i, s->label[i]);
        else if (s->count[i] == 0 || s->count[i] > rows - total)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary label %g has %llu rows, past the %llu of the file",
                          path, s->label[i], (unsigned long long)s->count[i], (unsigned long long)rows);
        else
            total += s->count[i];
    }
    if (rc == 0 && listed && total != rows)
        rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary counts %llu rows, the header %llu", path,
                      (unsigned long long)total, (unsigned long long)rows);
    for (uint32_t f = 0; f < degrees && rc == 0; f++)
        if (s->degree[f] > rows)
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: summary gives feature %u %u rows, past the %llu of the file",
                          path, f, s->degree[f], (unsigned long long)rows);
    if (rc == 0 && degrees && s->degree[degrees - 1] == 0)
        rc = hog_fail(HOG_ECORRUPT, err, len,
                      "%s: summary gives the last feature (%u) no rows: features is the largest index + 1", path,
                      degrees - 1);
    if (rc < 0)
        memset(s, 0, sizeof(*s));
    return rc;
}

/* A section's place in the header (its offset at header byte field): a
 * multiple of 8, after the sections before it (which end at after) and
 * before the table, at least 4 bytes. Returns 0 or HOG_ECORRUPT, naming
 * the header byte. */
static int section_placed(const char *path, unsigned field, const char *what, const char *after_what, uint64_t off,
                          uint64_t bytes, uint64_t after, uint64_t table, char *err, size_t len)
{
    if (off % 8 != 0 || off < after || off > table || bytes < 4 || bytes > table - off)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header byte %u: %s at byte %llu, %llu bytes: misaligned or outside %llu..%llu (after "
                        "%s, before the table)", path, field, what, (unsigned long long)off,
                        (unsigned long long)bytes, (unsigned long long)after, (unsigned long long)table,
                        after_what);
    return 0;
}

/* Checks a version-4 file's class names against the header, the layout
 * and the summary (checked before), and copies them into *names (owned);
 * a file without them leaves *names empty. Every size is bounded by the
 * mapping before it is added to an offset, and every error names the
 * byte where the fault lies. */
static int check_names(const char *path, const uint8_t *map, const uint8_t *h, const hog_hgd_summary *sm,
                       hog_idmap *names, char *err, size_t len)
{
    memset(names, 0, sizeof(*names));
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    if (!(flags & HOG_HGD_NAMES))
        return 0;
    if (!(flags & HOG_HGD_SUMMARY))
        return hog_fail(HOG_ECORRUPT, err, len, "%s: header byte %u: flags 0x%x announce class names (bit 4) "
                        "without the summary (bit 3) that lists their numbers", path, H_FLAGS, flags);
    const uint64_t off = hog_get_u64(h + H_NAMES_OFFSET), bytes = hog_get_u64(h + H_NAMES_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    /* the summary was placed inside the file, before the table */
    const uint64_t after = hog_get_u64(h + H_SUMMARY_OFFSET) + hog_get_u64(h + H_SUMMARY_BYTES);
    int rc = section_placed(path, H_NAMES_OFFSET, "class names", "the summary", off, bytes, after, table, err, len);
    if (rc < 0)
        return rc;
    const uint8_t *p = map + off;
    const uint32_t n = hog_get_u32(p);
    if (n == 0 || n > HOG_MAX_LABEL_NAMES)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %u class names, expected 1 to %u", path,
                        (unsigned long long)off, n, HOG_MAX_LABEL_NAMES);
    const uint64_t least = 4 + 2ull * n, most = 4 + (uint64_t)n * (HOG_LABEL_NAME_MAX + 1);
    if (bytes < least || bytes > most)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: header byte %u: names_bytes is %llu, not between %llu and %llu for %u class names",
                        path, H_NAMES_BYTES, (unsigned long long)bytes, (unsigned long long)least,
                        (unsigned long long)most, n);
    const uint64_t stored = hog_get_u64(h + H_NAMES_SUM), sum = names_sum(p, p + 4, bytes - 4);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len, "%s: byte %llu: class names checksum mismatch (stored 0x%016llx, "
                        "computed 0x%016llx)", path, (unsigned long long)off, (unsigned long long)stored,
                        (unsigned long long)sum);
    /* label i is name i: the summary lists exactly the numbers 0..n-1 */
    if (sm->labels != n)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %u class names, but the summary lists %s%u label "
                        "values: labels that are names are numbered 0 to %u, each on some row", path,
                        (unsigned long long)off, n, sm->labels == HOG_HGD_MANY_LABELS ? "more than " : "",
                        sm->labels == HOG_HGD_MANY_LABELS ? HOG_HGD_SUMMARY_LABELS : sm->labels, n - 1);
    const uint64_t labels_at = hog_get_u64(h + H_SUMMARY_OFFSET) + 8;
    for (uint32_t i = 0; i < n; i++)
        if (sm->label[i] != (double)i)
            return hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: summary label %u is %g: labels that are class "
                            "names are numbered 0 to %u", path, (unsigned long long)(labels_at + 8ull * i), i,
                            sm->label[i], n - 1);
    const char *s = (const char *)p + 4, *end = (const char *)p + bytes;
    for (uint32_t k = 0; k < n && rc == 0; k++) {
        const unsigned long long at = (unsigned long long)((const uint8_t *)s - map);
        const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
        uint32_t id;
        if (!nul) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u runs past the names' end at byte "
                          "%llu (each ends with a NUL)", path, at, k, (unsigned long long)(off + bytes));
        } else if (nul == s || (size_t)(nul - s) > HOG_LABEL_NAME_MAX) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u is %zu bytes, not 1 to %u", path,
                          at, k, (size_t)(nul - s), HOG_LABEL_NAME_MAX);
        } else if (hog_idmap_find(names, s, (size_t)(nul - s)) >= 0) {
            rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: class name %u ('%.64s') repeats class %lld's",
                          path, at, k, s, (long long)hog_idmap_find(names, s, (size_t)(nul - s)));
        } else if ((rc = hog_idmap_intern(names, s, (size_t)(nul - s), &id)) < 0) {
            rc = hog_fail(rc, err, len, "%s: out of memory", path);
        }
        s = nul ? nul + 1 : end;
    }
    if (rc == 0 && s != end)
        rc = hog_fail(HOG_ECORRUPT, err, len, "%s: byte %llu: %llu bytes after the last of %u class names", path,
                      (unsigned long long)((const uint8_t *)s - map), (unsigned long long)(end - s), n);
    if (rc < 0)
        hog_idmap_free(names);
    return rc;
}

/* Checks a version-5 file's feature names against the header and the
 * layout and copies them into *fn (owned); a file without them leaves *fn
 * empty. The place and size are bounded by the sections before it and the
 * table before the bytes are read, and every error names the byte. */
static int check_fnames(const char *path, const uint8_t *map, const uint8_t *h, uint64_t blocks_end,
                        hog_fnames *fn, char *err, size_t len)
{
    memset(fn, 0, sizeof(*fn));
    const uint32_t flags = hog_get_u32(h + H_FLAGS);
    if (!(flags & HOG_HGD_FNAMES))
        return 0;
    const uint64_t off = hog_get_u64(h + H_FNAMES_OFFSET), bytes = hog_get_u64(h + H_FNAMES_BYTES);
    const uint64_t table = hog_get_u64(h + H_TABLE_OFFSET);
    /* the sections before it were placed inside the file, before the table */
    uint64_t after = blocks_end;
    if (flags & HOG_HGD_SUMMARY)
        after = hog_get_u64(h + H_SUMMARY_OFFSET) + hog_get_u64(h + H_SUMMARY_BYTES);
    if (flags & HOG_HGD_NAMES)
        after = hog_get_u64(h + H_NAMES_OFFSET) + hog_get_u64(h + H_NAMES_BYTES);
    int rc = section_placed(path, H_FNAMES_OFFSET, "feature names", "the sections before them", off, bytes, after,
                            table, err, len);
    if (rc < 0)
        return rc;
    const uint64_t stored = hog_get_u64(h + H_FNAMES_SUM), sum = hog_hash64(map + off, (size_t)bytes, 0);
    if (stored != sum)
        return hog_fail(HOG_ECHECKSUM, err, len, "%s: byte %llu: feature names checksum mismatch (stored "
                        "0x%016llx, computed 0x%016llx)", path, (unsigned long long)off, (unsigned long long)stored,
                        (unsigned long long)sum);
    return hog_fnames_read(path, map + off, bytes, off, hog_get_u64(h + H_FEATURES), fn, err, len);
}

/* Whether block b passes every check of check_block but its checksum,
 * each test a reduction over an array (the lanes_ helpers): a block is read
 * at memory speed, and only one that fails is walked again, row by row, for
 * the message. Indices strictly increase within each row when the descents
 * of the whole index array are exactly those at row starts. *top gets
 * the largest index + 1. */
int hog_block_sound(const hog_block *b, uint64_t features, uint32_t fields, const hog_hgd_summary *sm,
                    uint64_t *top)
{
    const uint32_t rows = b->rows, nnz = b->nnz, *ptr = b->ptr, *idx = b->index;
    if (ptr[0] != 0 || ptr[rows] != nnz || lanes_descents(ptr, rows + 1, 0) != 0)
        return 0;
    const uint32_t most = lanes_max(idx, nnz);
    uint32_t descents = lanes_descents(idx, nnz, 1);
    for (uint32_t r = 1; r < rows; r++) /* a non-empty row's first index may be below the last one's */
        if (ptr[r] > 0 && ptr[r] < ptr[r + 1])
            descents -= idx[ptr[r]] <= idx[ptr[r] - 1];
    if (descents || (nnz && most >= features))
        return 0;
    if (lanes_nonfinite((const uint32_t *)(const void *)b->value, nnz, 0) ||
        lanes_nonfinite((const uint32_t *)(const void *)b->label, rows, 0) ||
        (b->weight && lanes_nonfinite((const uint32_t *)(const void *)b->weight, rows, 1)))
        return 0;
    if (b->field) {
        uint32_t top_field = 0;
        for (uint32_t k = 0; k < nnz; k++) /* one pass, a max: a field past the count fails it */
            top_field = b->field[k] > top_field ? b->field[k] : top_field;
        if (nnz && top_field >= fields)
            return 0;
    }
    if ((sm->labels == 1 || sm->labels == 2) &&
        !lanes_two_labels(b->label, rows, (float)sm->label[0], (float)sm->label[sm->labels - 1]))
        return 0;
    if (sm->labels > 2 && sm->labels != HOG_HGD_MANY_LABELS)
        for (uint32_t r = 0; r < rows; r++)
            if (!hog_has_f64(sm->label, sm->labels, b->label[r]))
                return 0;
    *top = nnz ? (uint64_t)most + 1 : 0;
    return 1;
}

/* Checks one block's bytes: its checksum, then every offset, index, value
 * and label; *top gets the largest feature index + 1 (0 without any). */
static int check_block(const char *path, uint32_t version, uint32_t i, const hog_block *b,
                       uint64_t features, uint32_t fields, const hog_hgd_summary *sm, uint64_t *top, char *err,
                       size_t len)
{
    const int listed = sm->labels && sm->labels != HOG_HGD_MANY_LABELS;
    *top = 0;
    uint64_t sum = version == 1 ? hog_crc32(0, b->ptr, (size_t)hog_block_bytes(b->rows, b->nnz, 0))
                                : hog_block_sum(b);
    if (sum != b->sum)
        return hog_fail(HOG_ECHECKSUM, err, len,
                        "%s: block %u: checksum mismatch (stored 0x%016llx, computed 0x%016llx)",
                        path, i, (unsigned long long)b->sum, (unsigned long long)sum);
    if (hog_block_sound(b, features, fields, sm, top))
        return 0;
    if (b->ptr[0] != 0)
        return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: first row offset is %u, not 0",
                        path, i, b->ptr[0]);
    if (b->ptr[b->rows] != b->nnz)
        return hog_fail(HOG_ECORRUPT, err, len,
                        "%s: block %u: last row offset is %u, block has %u non-zeros", path, i,
                        b->ptr[b->rows], b->nnz);
    for (uint32_t r = 0; r < b->rows; r++) {
        uint32_t s = b->ptr[r], e = b->ptr[r + 1];
        if (e < s || e > b->nnz)
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: offsets %u..%u out of order or past %u", path,
                            i, r, s, e, b->nnz);
        for (uint32_t k = s; k < e; k++) {
            if (b->index[k] >= features)
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature index %u >= features %llu", path,
                                i, r, b->index[k], (unsigned long long)features);
            if (k > s && b->index[k] <= b->index[k - 1])
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature index %u after %u (not increasing)",
                                path, i, r, b->index[k], b->index[k - 1]);
            if (!f32_finite(b->value[k]))
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: value of feature %u is not finite", path,
                                i, r, b->index[k]);
            if (b->field && b->field[k] >= fields)
                return hog_fail(HOG_ECORRUPT, err, len,
                                "%s: block %u: row %u: feature %u has field %u, not below the file's %u fields",
                                path, i, r, b->index[k], b->field[k], fields);
        }
        if (e > s)
            *top = HOG_MAX(*top, (uint64_t)b->index[e - 1] + 1);
        if (!f32_finite(b->label[r]))
            return hog_fail(HOG_ECORRUPT, err, len, "%s: block %u: row %u: label is not finite",
                            path, i, r);
        if (listed && !hog_has_f64(sm->label, sm->labels, b->label[r]))
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: label %g is not one of the %u in the file's summary", path, i,
                            r, (double)b->label[r], sm->labels);
        if (b->weight && !(f32_finite(b->weight[r]) && b->weight[r] >= 0))
            return hog_fail(HOG_ECORRUPT, err, len,
                            "%s: block %u: row %u: weight is negative or not finite", path, i, r);
    }
    return 0;
}

/* Records top as a checked block's largest feature index + 1: the record
 * of the checks, which every reader of the data set shares. */
static void top_seen(const hog_dataset *ds, uint64_t top)
{
    hog_atomic_max_u64(&((hog_dataset *)ds)->checked_top, top);
}

/* Checking every block is a CRC and a pass over every index: on a large
 * file, seconds on one core. The blocks are shared out among the CPUs,
 * each thread taking the next unchecked block; the error reported is that
 * of the lowest-numbered bad block, whatever thread found it, so the
 * message does not depend on timing. */
typedef struct check_job {
    const char *path;
    const hog_dataset *ds;
    uint64_t features;
    int drop_cache;
    atomic_uint next;
    atomic_uint first_bad; /* lowest bad block so far, or UINT32_MAX */
    pthread_mutex_t mu;
    int rc;
    char err[512];
    uint64_t top; /* the largest feature index + 1 of the blocks checked */
} check_job;

static void *check_worker(void *v)
{
    check_job *j = v;
    const hog_dataset *ds = j->ds;
    char err[512];
    uint64_t top = 0;
    for (;;) {
        uint32_t i = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        /* Past the first bad block nothing can change the verdict. */
        if (i >= ds->info.blocks || i > atomic_load_explicit(&j->first_bad, memory_order_relaxed))
            break;
        if (ds->checked && atomic_load_explicit(&ds->checked[i], memory_order_acquire))
            continue;
        hog_dataset_willneed(ds, i + 1);
        uint64_t btop;
        int rc = check_block(j->path, ds->version, i, &ds->blocks[i], j->features, ds->fields, &ds->summary, &btop,
                             err, sizeof(err));
        top = HOG_MAX(top, btop);
        if (rc == 0 && ds->checked)
            atomic_store_explicit(&ds->checked[i], 1, memory_order_release);
        hog_dataset_drop(ds, i, j->drop_cache);
        if (rc < 0) {
            pthread_mutex_lock(&j->mu);
            if (i < atomic_load_explicit(&j->first_bad, memory_order_relaxed)) {
                atomic_store_explicit(&j->first_bad, i, memory_order_relaxed);
                j->rc = rc;
                memcpy(j->err, err, sizeof(err));
            }
            pthread_mutex_unlock(&j->mu);
            break;
        }
    }
    pthread_mutex_lock(&j->mu);
    j->top = HOG_MAX(j->top, top);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

static int check_blocks(const char *path, const hog_dataset *ds, uint64_t features, int drop_cache,
                        char *err, size_t err_len)
{
    check_job j = {.path = path, .ds = ds, .features = features, .drop_cache = drop_cache};
    atomic_init(&j.next, 0);
    atomic_init(&j.first_bad, UINT32_MAX);
    pthread_mutex_init(&j.mu, NULL);
    unsigned n = HOG_MIN(hog_cpus(), ds->info.blocks), started = 0;
    pthread_t t[64];
    n = HOG_MIN(n, (unsigned)HOG_ARRAY_LEN(t));
    /* The calling thread is one of the checkers; the others are helpers
     * that may fail to start without harm. */
    for (unsigned k = 1; k < n; k++)
        if (pthread_create(&t[started], NULL, check_worker, &j) == 0)
            started++;
    check_worker(&j);
    for (unsigned k = 0; k < started; k++)
        pthread_join(t[k], NULL);
    pthread_mutex_destroy(&j.mu);
    if (j.rc < 0)
        return hog_fail(j.rc, err, err_len, "%s", j.err);
    if (ds->checked) { /* with the blocks checked one by one before */
        top_seen(ds, j.top);
        j.top = atomic_load_explicit(&ds->checked_top, memory_order_relaxed);
    }
    /* A writer records the largest index + 1 (hog_builder): a larger count
     * would have a trainer allocate weights for features no row has. */
    if (features != j.top)
        return hog_fail(HOG_ECORRUPT, err, err_len,
                        "%s: header field features is %llu, but the blocks' largest feature index + 1 is %llu", path,
                        (unsigned long long)features, (unsigned long long)j.top);
    return 0;
}

int hog_dataset_check_view(const hog_dataset *ds, uint32_t b, const hog_block *view, char *err, size_t err_len)
{
    uint64_t top;
    int rc = check_block(ds->path, ds->version, b, view, ds->info.features, ds->fields, &ds->summary, &top, err,
                         err_len);
    if (rc == 0)
        top_seen(ds, top);
    return rc;
}

int hog_dataset_check_block(const hog_dataset *ds, uint32_t b, char *err, size_t err_len)
{
    int rc = hog_dataset_check_view(ds, b, &ds->blocks[b], err, err_len);
    if (rc < 0)
        return rc;
    atomic_store_explicit(&ds->checked[b], 1, memory_order_release);
    return 0;
}

int hog_dataset_check_failed(const hog_dataset *ds, uint32_t b, char *err, size_t err_len)
{
    int rc = hog_dataset_check_block(ds, b, err, err_len);
    return rc < 0 ? rc : hog_fail(HOG_ECHECKSUM, err, err_len, "%s: block %u failed its check as it was read",
                                  ds->path ? ds->path : "the data set", b);
}

int hog_dataset_verify(const hog_dataset *ds, char *err, size_t err_len)
{
    if (!ds)
        return hog_fail(HOG_EPARAM, err, err_len, "ds must not be NULL");
    if (!ds->checked)
        return 0;
    return check_blocks(ds->path, ds, ds->info.features, ds->map_bytes > hog_mem_usable() / 2, err, err_len);
}

static int read_full(int fd, uint8_t *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, buf + done, len - done, (off_t)done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    return 0;
}

/* The mapped data sets open now, for hog_dataset_changed_path: a signal
 * handler reads the list, so slots are claimed and freed with atomics and
 * never locked. A data set that finds no free slot is simply not listed. */
#define MAPPED_SLOTS 64
static const hog_dataset *_Atomic mapped_sets[MAPPED_SLOTS];

static void mapped_add(const hog_dataset *ds)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *none = NULL;
        if (atomic_compare_exchange_strong(&mapped_sets[i], &none, ds))
            return;
    }
}

void hog_hgd_forget(const hog_dataset *ds)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *was = ds;
        if (atomic_compare_exchange_strong(&mapped_sets[i], &was, NULL))
            return;
    }
}

int hog_dataset_changed(const hog_dataset *ds)
{
    struct stat st;
    if (!ds->map || ds->fd < 0 || fstat(ds->fd, &st) < 0)
        return 0;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return (uint64_t)st.st_size != ds->mapped_size || mtime != ds->mapped_mtime_ns;
}

const char *hog_dataset_changed_path(void)
{
    for (size_t i = 0; i < MAPPED_SLOTS; i++) {
        const hog_dataset *ds = atomic_load(&mapped_sets[i]);
        if (ds && ds->path && hog_dataset_changed(ds))
            return ds->path;
    }
    return NULL;
}

int hog_hgd_open(const char *path, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    return hog_hgd_open_fd(fd, path, out, err, err_len);
}

int hog_hgd_open_fd(int fd, const char *path, hog_dataset **out, char *err, size_t err_len)
{
    return hog_hgd_open_lazy(fd, path, 0, out, err, err_len);
}

int hog_hgd_open_lazy(int fd, const char *path, int lazy, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int rc = -errno;
        close(fd);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    uint64_t size = (uint64_t)st.st_size;

    /* The header is read, not mapped, so a short or empty file is judged
     * before mmap (which refuses a zero length). */
    uint8_t h[HOG_HGD_HEADER_BYTES];
    memset(h, 0, sizeof(h));
    int rc = read_full(fd, h, (size_t)HOG_MIN(size, (uint64_t)sizeof(h)));
    if (rc < 0) {
        close(fd);
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    rc = check_header(path, h, size, err, err_len);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (size > SIZE_MAX) {
        close(fd);
        return hog_fail(-EFBIG, err, err_len, "%s: too large to map", path);
    }

    void *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    rc = map == MAP_FAILED ? -errno : 0;
    if (rc < 0) {
        close(fd);
        return hog_fail(rc, err, err_len, "%s: mmap: %s", path, hog_strerror(rc));
    }
    /* Validation reads the file front to back once; afterwards trainers walk
     * whole blocks in shuffled order, which plain readahead serves well. */
    if (!lazy)
        (void)madvise(map, (size_t)size, MADV_SEQUENTIAL);

    hog_dataset *ds = hog_calloc(1, sizeof(*ds));
    uint32_t blocks = hog_get_u32(h + H_BLOCKS);
    hog_block *views = hog_calloc(blocks, sizeof(hog_block));
    char *name = hog_strdup(path); /* for the message of a change */
    _Atomic unsigned char *checked = lazy ? hog_calloc(HOG_MAX(blocks, 1), 1) : NULL;
    if (!ds || !views || !name || (lazy && !checked)) {
        hog_free(name);
        rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        goto refused;
    }
    ds->fd = fd; /* kept for posix_fadvise on out-of-core scans */
    ds->version = hog_get_u32(h + H_VERSION);
    ds->map = map;
    ds->map_bytes = (size_t)size;
    ds->blocks = views;
    /* Listed from here on: the check of every block below reads the whole
     * mapping, and a file truncated meanwhile is named by the SIGBUS it
     * gives (hog_dataset_changed_path), as during the epochs. */
    ds->mapped_size = size;
    ds->mapped_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    ds->path = name;
    mapped_add(ds);

    /* Re-read the header from the mapping: it is what the views point into,
     * and a file rewritten between pread and mmap must not slip through. */
    rc = check_header(path, map, size, err, err_len);
    if (rc == 0 && memcmp(map, h, sizeof(h)) != 0)
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: file changed while being opened", path);
    uint64_t blocks_end = 0;
    if (rc == 0)
        rc = check_table(path, map, h, views, &blocks_end, err, err_len);
    if (rc == 0)
        rc = check_summary(path, map, h, blocks_end, &ds->summary, err, err_len);
    if (rc == 0)
        rc = check_names(path, map, h, &ds->summary, &ds->names, err, err_len);
    if (rc == 0)
        rc = check_fnames(path, map, h, blocks_end, &ds->fnames, err, err_len);
    uint64_t features = hog_get_u64(h + H_FEATURES);
    /* Validation reads every block once; each is unmapped from the process
     * when checked, so opening a file of any size leaves nothing resident
     * (the pages stay in the page cache for the first epoch unless the file
     * is larger than half the available memory, when they go too). */
    ds->info.blocks = blocks; /* what hog_dataset_willneed/drop look at */
    ds->fields = hog_get_u32(h + H_FLAGS) & HOG_HGD_FIELDS ? hog_get_u32(h + H_FIELDS) : 0; /* and check_block */
    ds->info.features = features; /* what hog_dataset_check checks indices against */
    if (rc == 0 && !lazy)
        rc = check_blocks(path, ds, features, size > hog_mem_usable() / 2, err, err_len);
    if (rc < 0)
        goto refused;
    if (!lazy)
        (void)madvise(map, (size_t)size, MADV_NORMAL);
    ds->checked = checked;

    ds->info.format = HOG_FORMAT_BINARY;
    ds->info.rows = hog_get_u64(h + H_ROWS);
    ds->info.features = features;
    ds->info.nnz = hog_get_u64(h + H_NNZ);
    ds->info.blocks = blocks;
    ds->info.rows_per_block = hog_get_u32(h + H_ROWS_PER_BLOCK);
    ds->info.weighted = (hog_get_u32(h + H_FLAGS) & HOG_HGD_WEIGHTED) != 0;
    ds->info.index_base = (hog_get_u32(h + H_FLAGS) & HOG_HGD_ONE_BASED) != 0;
    ds->info.fingerprint = hog_get_u64(h + H_FINGERPRINT);
    ds->info.file_bytes = size;
    *out = ds;
    return 0;

refused: /* what hog_dataset_close would free, before a data set is handed out */
    if (ds) {
        hog_hgd_forget(ds);
        hog_free(ds->path);
        hog_idmap_free(&ds->names);
        hog_fnames_free(&ds->fnames);
    }
    hog_free((void *)checked);
    hog_free(views);
    hog_free(ds);
    munmap(map, (size_t)size);
    close(fd);
    return rc;
}

int hog_hgd_source_read(const char *path, hog_hgd_source *src, int *has, char *err, size_t err_len)
{
    *has = 0;
    memset(src, 0, sizeof(*src));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    struct stat st;
    uint8_t h[HOG_HGD_HEADER_BYTES];
    memset(h, 0, sizeof(h));
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0)
        rc = read_full(fd, h, (size_t)HOG_MIN((uint64_t)st.st_size, (uint64_t)sizeof(h)));
    close(fd);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    rc = check_header(path, h, (uint64_t)st.st_size, err, err_len);
    if (rc < 0)
        return rc;
    if (hog_get_u32(h + H_VERSION) >= 2 && (hog_get_u32(h + H_FLAGS) & HOG_HGD_SOURCE)) {
        get_source(h, src);
        *has = 1;
    }
    return 0;
}

/* ===================================================================== *
 *  Out-of-core scans of a mapped file
 * ===================================================================== */

/* The page-aligned file range of a block of a mapped data set. */
static int block_range(const hog_dataset *ds, uint32_t block, size_t *off, size_t *len)
{
    if (!ds->map || block >= ds->info.blocks)
        return 0;
    const hog_block *b = &ds->blocks[block];
    size_t start = (size_t)((const char *)b->ptr - (const char *)ds->map);
    size_t end = start + (size_t)hog_block_bytes(b->rows, b->nnz, b->weight != NULL);
    *off = start & ~(size_t)(HOG_HGD_ALIGN - 1); /* blocks start aligned; be safe anyway */
    *len = HOG_MIN(end, ds->map_bytes) - *off;
    return 1;
}

void hog_dataset_willneed(const hog_dataset *ds, uint32_t block)
{
    size_t off, len;
    if (block_range(ds, block, &off, &len))
        (void)madvise((char *)ds->map + off, len, MADV_WILLNEED);
}

void hog_dataset_drop(const hog_dataset *ds, uint32_t block, int cache)
{
    size_t off, len;
    if (!block_range(ds, block, &off, &len))
        return;
    (void)madvise((char *)ds->map + off, len, MADV_DONTNEED);
    if (cache && ds->fd >= 0)
        (void)posix_fadvise(ds->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}
