/* etl_hgd_write.c: the .hgd writer: blocks at aligned offsets (buffered, or gathered for O_DIRECT), the summary of labels and degrees, the names, then the table and the header last. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "etl_hgd_layout.h"

static inline uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) / align * align;
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
    unsigned hash_bits;       /* the text's hash bits (hog_hgd_writer_set_hash_bits), 0: none */
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

void hog_hgd_writer_set_hash_bits(hog_hgd_writer *w, unsigned bits)
{
    w->hash_bits = bits;
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
    /* Labels that are class names are numbered 0 to n - 1, each on some
     * row, and the reader holds a file to that: a data set whose names
     * name a label no row has (a file whose summary said otherwise) is
     * refused here, not written unreadable. */
    if (w->names && (w->many_labels || w->labels != w->names->n))
        return HOG_ECORRUPT;
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
    const uint32_t version = w->hash_bits ? HOG_HGD_VERSION
                             : w->fields ? HOG_HGD_VERSION_FIELDS
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
    memcpy(h + H_MAGIC, HGD_MAGIC, HGD_MAGIC_BYTES);
    hog_put_u32(h + H_VERSION, version);
    hog_put_u32(h + H_HEADER_BYTES, HOG_HGD_HEADER_BYTES);
    hog_put_u64(h + H_ROWS, w->rows);
    hog_put_u64(h + H_FEATURES, features);
    hog_put_u64(h + H_NNZ, w->nnz);
    hog_put_u32(h + H_BLOCKS, w->blocks);
    hog_put_u32(h + H_ROWS_PER_BLOCK, rows_per_block);
    hog_put_u32(h + H_FLAGS, (weighted ? HOG_HGD_WEIGHTED : 0) | (one_based ? HOG_HGD_ONE_BASED : 0) |
                                 (w->has_src ? HOG_HGD_SOURCE : 0) | HOG_HGD_SUMMARY | (names ? HOG_HGD_NAMES : 0) |
                                 (fn ? HOG_HGD_FNAMES : 0) | (w->fields ? HOG_HGD_FIELDS : 0) |
                                 (w->hash_bits ? HOG_HGD_HASHED : 0));
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
    if (w->hash_bits)
        hog_put_u32(h + H_HASH_BITS, w->hash_bits);
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
    hog_hgd_writer_set_hash_bits(&w, ds->hash_bits);
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
