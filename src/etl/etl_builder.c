/* etl_builder.c: the block builder: rows in, blocks of the .hgd layout out, kept in memory or streamed to a file as they fill. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "etl.h"

/* ===================================================================== *
 *  Builder: rows accumulate in the arrays of the block being filled; a
 *  full block is checksummed and written where it lies (to a file), or
 *  packed into one buffer in the file layout (in memory).
 * ===================================================================== */

struct hog_builder {
    uint32_t rows_per_block;
    int weighted;                 /* rows carry weights (settled by the first rows added) */
    int fielded;                  /* values carry fields (settled by the first rows added) */
    uint32_t fields;              /* the largest field seen + 1 */
    int one_based;                /* from 1-based libsvm text */
    unsigned hash_bits;           /* the text's hash bits (hog_builder_set_hash_bits) */
    uint64_t index_bound;         /* every index is below it (hog_text_plan_index_bound), or 0 */
    uint64_t rows, nnz, features; /* totals over finished and current blocks */

    /* the block being filled: arrays sized for a whole block of rows */
    uint32_t cur_rows, cur_nnz;
    uint32_t *ptr;   /* rows_per_block + 1 entries, ptr[0] = 0 */
    float *label;
    float *weight;   /* when weighted */
    uint32_t *index;
    float *value;
    size_t nnz_cap;
    uint16_t *field; /* when fielded: field_cap entries */
    size_t field_cap;

    /* in memory: finished blocks and their buffers */
    hog_block *blocks;
    void **heap;
    size_t blocks_cap, heap_cap;
    uint32_t nblocks;

    uint64_t heap_bytes;          /* what the finished blocks in memory hold */

    /* streaming to a file */
    hog_atomic_file *out;
    hog_hgd_writer *writer; /* NULL in memory */
    int pass;               /* blocks go to on_block only (hog_builder_create_pass) */
    int eager;              /* a pass whose rows are wanted as they come (hog_builder_set_eager) */
    int stop_fd;            /* the text pipeline's reader stops once it is readable, or -1 (hog_builder_set_stop) */
    int stopped;            /* the read of the rows' input was stopped (hog_builder_set_stopped) */

    /* spilling: an in-memory builder past spill_at bytes goes on in a
     * scratch file; the blocks it held stay (handed out, see on_block)
     * until the data set it makes is told to let them go */
    uint64_t spill_at;            /* 0: never */
    char *spill_dir, *spill_label;
    hog_atomic_file scratch;
    int spilled;

    /* told of every finished block */
    hog_block_fn on_block;
    void *on_block_ctx;
    double position; /* the fraction of the input read (hog_builder_set_position) */
    /* the lines rows come from (hog_builder_set_lines): the piece being
     * added, and the block being filled's first row */
    uint64_t piece_line0, block_line;
    uint64_t piece_extra, block_extra; /* lines that hold no row: in the piece, in the block's pieces */

    /* class names (text whose labels are strings): numbered in the order
     * they first appear, the label of each row its number */
    hog_idmap names;
    float *codes;    /* rows_per_block labels, the numbers of a run of rows */

    /* feature names: the set, and its joined form for the file being finished */
    hog_fnames fnames, joined;
};

int hog_block_buffers_ready(hog_block_buffers *b, uint32_t rpb, int weighted)
{
    if (!b->ptr && !(b->ptr = hog_malloc(((size_t)rpb + 1) * sizeof(uint32_t))))
        return -ENOMEM;
    b->ptr[0] = 0;
    if (!b->label && !(b->label = hog_malloc((size_t)rpb * sizeof(float))))
        return -ENOMEM;
    if (weighted && !b->weight && !(b->weight = hog_malloc((size_t)rpb * sizeof(float))))
        return -ENOMEM;
    return 0;
}

void hog_block_buffers_free(hog_block_buffers *b)
{
    hog_free(b->ptr);
    hog_free(b->label);
    hog_free(b->weight);
    hog_free(b->index);
    hog_free(b->value);
    hog_free(b->field);
    memset(b, 0, sizeof(*b));
}

int hog_builder_create(uint32_t rows_per_block, hog_atomic_file *out, hog_builder **bp)
{
    *bp = NULL;
    hog_builder *b = hog_calloc(1, sizeof(*b));
    if (!b)
        return -ENOMEM;
    b->rows_per_block = rows_per_block ? rows_per_block : HOG_DEFAULT_ROWS_PER_BLOCK;
    b->out = out;
    b->scratch.fd = -1;
    b->stop_fd = -1;
    size_t r = b->rows_per_block;
    b->ptr = hog_malloc((r + 1) * sizeof(uint32_t));
    b->label = hog_malloc(r * sizeof(float));
    if (!b->ptr || !b->label || (out && hog_hgd_writer_create(out, &b->writer) < 0)) {
        hog_builder_free(b);
        return -ENOMEM;
    }
    b->ptr[0] = 0;
    *bp = b;
    return 0;
}

int hog_builder_create_pass(uint32_t rows_per_block, hog_builder **bp)
{
    int rc = hog_builder_create(rows_per_block, NULL, bp);
    if (rc == 0)
        (*bp)->pass = 1;
    return rc;
}

void hog_builder_set_eager(hog_builder *b)
{
    assert(b->pass); /* the blocks of a data set are full but for the last */
    b->eager = 1;
}

int hog_builder_eager(const hog_builder *b)
{
    return b->eager;
}

void hog_builder_set_stop(hog_builder *b, int fd)
{
    b->stop_fd = fd < 0 ? -1 : fd;
}

int hog_builder_stop_fd(const hog_builder *b)
{
    return b->stop_fd;
}

void hog_builder_set_stopped(hog_builder *b)
{
    b->stopped = 1;
}

int hog_builder_stopped(const hog_builder *b)
{
    return b->stopped;
}

void hog_builder_set_one_based(hog_builder *b, int one_based)
{
    b->one_based = one_based;
}

void hog_builder_set_hash_bits(hog_builder *b, unsigned bits)
{
    b->hash_bits = bits;
}

void hog_builder_set_index_bound(hog_builder *b, uint64_t bound)
{
    b->index_bound = bound;
}

uint64_t hog_builder_index_bound(const hog_builder *b)
{
    return b->index_bound;
}

void hog_builder_set_source(hog_builder *b, const hog_hgd_source *src)
{
    if (b->writer)
        hog_hgd_writer_set_source(b->writer, src);
}

int hog_builder_one_based(const hog_builder *b)
{
    return b->one_based;
}

const char *hog_builder_output(const hog_builder *b)
{
    return b->out ? b->out->path : NULL;
}

uint64_t hog_builder_rows(const hog_builder *b)
{
    return b->rows;
}

void hog_builder_on_block(hog_builder *b, hog_block_fn fn, void *ctx)
{
    b->on_block = fn;
    b->on_block_ctx = ctx;
}

void hog_builder_set_position(hog_builder *b, double position)
{
    b->position = position;
}

void hog_builder_set_lines(hog_builder *b, uint64_t line0, uint64_t extra)
{
    b->piece_line0 = line0;
    b->piece_extra = extra;
}

uint64_t hog_builder_block_line(const hog_builder *b, uint64_t *extra)
{
    *extra = b->block_extra;
    return b->block_line;
}

void hog_builder_direct_from(hog_builder *b, uint64_t bytes)
{
    if (b->writer)
        hog_hgd_writer_direct_from(b->writer, bytes);
}

int hog_builder_spill(hog_builder *b, uint64_t bytes, const char *dir, const char *label)
{
    if (b->out)
        return 0;
    hog_free(b->spill_dir);
    hog_free(b->spill_label);
    b->spill_dir = hog_strdup(dir);
    b->spill_label = hog_strdup(label);
    if (!b->spill_dir || !b->spill_label)
        return -ENOMEM;
    b->spill_at = bytes;
    return 0;
}

int hog_builder_spill_within(hog_builder *b, const char *path, const hog_read_params *p)
{
    const uint64_t limit = p->mem_limit ? p->mem_limit : hog_mem_usable() / 2;
    if (p->temp_dir)
        return hog_builder_spill(b, limit / 4, p->temp_dir, path);
    /* The input's folder; the current one for a pipe or a device (standard
     * input's folder is /dev, which is memory). */
    struct stat st;
    const char *slash = strrchr(path, '/');
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode) || !slash)
        return hog_builder_spill(b, limit / 4, ".", path);
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return hog_builder_spill(b, limit / 4, dir, path);
}

/* The blocks held pass spill_at: they, and every block after them, go to
 * a scratch file. A folder that takes no file leaves them in memory. */
static int spill_now(hog_builder *b)
{
    b->spill_at = 0; /* tried once */
    const char *slash = strrchr(b->spill_label, '/');
    char name[NAME_MAX + 1];
    snprintf(name, sizeof(name), "scratch file for %s", slash ? slash + 1 : b->spill_label);
    int rc = hog_scratch_open(&b->scratch, b->spill_dir, name);
    if (rc < 0) {
        hog_log(HOG_LOG_WARN, "%s: the data set stays in memory: no scratch file can be made in %s "
                "(hog_read_params.temp_dir): %s", b->spill_label, b->spill_dir, hog_strerror(rc));
        return 0;
    }
    if ((rc = hog_hgd_writer_create(&b->scratch, &b->writer)) < 0)
        return rc;
    for (uint32_t i = 0; i < b->nblocks && rc == 0; i++)
        rc = hog_hgd_writer_block(b->writer, &b->blocks[i]);
    if (rc < 0)
        return rc;
    b->out = &b->scratch;
    b->spilled = 1;
    hog_log(HOG_LOG_INFO, "%s: %u blocks (%.0f MB) held: they and the rest go to a scratch file in %s", b->spill_label,
            b->nblocks, (double)b->heap_bytes / 1e6, b->spill_dir);
    return 0;
}

/* Copies len bytes of an array to at (none: the array may be NULL); returns the end. */
static uint8_t *pack(uint8_t *at, const void *p, size_t len)
{
    if (len)
        memcpy(at, p, len);
    return at + len;
}

static int builder_flush(hog_builder *b)
{
    if (b->cur_rows == 0)
        return 0;
    hog_block view = {b->cur_rows, b->cur_nnz, 0,        b->ptr,
                      b->index,    b->value,   b->label, b->weighted ? b->weight : NULL,
                      b->fielded ? b->field : NULL};
    view.sum = hog_block_sum(&view);
    int rc;
    if (b->writer || b->pass) {
        if (b->writer && (rc = hog_hgd_writer_block(b->writer, &view)) < 0)
            return rc;
        if (b->on_block) { /* a view of the builder's arrays, which the callback may keep */
            hog_block_buffers bufs = {b->ptr,   b->label,   b->weight, b->index,
                                      b->value, b->nnz_cap, b->field,  b->field_cap};
            rc = b->on_block(b->on_block_ctx, &view, 0, b->position, &bufs);
            b->ptr = bufs.ptr;
            b->label = bufs.label;
            b->weight = bufs.weight;
            b->index = bufs.index;
            b->value = bufs.value;
            b->nnz_cap = bufs.nnz_cap;
            b->field = bufs.field; /* a consumer's arrays may have none: field_room makes it */
            b->field_cap = bufs.field_cap;
            if (rc != 0)
                return rc;
        }
    } else {
        /* Grow both lists first, so a failure leaks nothing. */
        void *blocks = b->blocks, *heap = b->heap;
        rc = hog_array_grow(&blocks, &b->blocks_cap, (size_t)b->nblocks + 1, sizeof(hog_block), 64);
        b->blocks = blocks;
        if (rc == 0) {
            rc = hog_array_grow(&heap, &b->heap_cap, (size_t)b->nblocks + 1, sizeof(void *), 64);
            b->heap = heap;
        }
        if (rc < 0)
            return rc;
        const int layout = hog_block_layout(&view);
        size_t bytes = (size_t)hog_block_bytes(b->cur_rows, b->cur_nnz, layout);
        uint8_t *buf = hog_aligned_alloc(HOG_CACHELINE, bytes);
        if (!buf)
            return -ENOMEM;
        /* index and value are NULL until a row has a feature */
        uint8_t *at = pack(buf, view.ptr, 4 * ((size_t)view.rows + 1));
        at = pack(at, view.index, 4 * (size_t)view.nnz);
        at = pack(at, view.value, 4 * (size_t)view.nnz);
        at = pack(at, view.label, 4 * (size_t)view.rows);
        if (view.weight)
            at = pack(at, view.weight, 4 * (size_t)view.rows);
        if (view.field)
            pack(at, view.field, 2 * (size_t)view.nnz);
        hog_block_view(&b->blocks[b->nblocks], buf, view.rows, view.nnz, layout, view.sum);
        b->heap[b->nblocks] = buf;
        b->nblocks++;
        b->heap_bytes += bytes;
        if (b->on_block && (rc = b->on_block(b->on_block_ctx, &b->blocks[b->nblocks - 1], 1, b->position, NULL)) != 0)
            return rc;
        if (b->spill_at && b->heap_bytes > b->spill_at && (rc = spill_now(b)) < 0)
            return rc;
    }
    b->cur_rows = 0;
    b->cur_nnz = 0;
    return 0;
}

/* Makes room in the current block for `more` values. */
static int reserve_nnz(hog_builder *b, uint64_t more)
{
    uint64_t need = (uint64_t)b->cur_nnz + more;
    if (need <= b->nnz_cap)
        return 0;
    size_t cap = b->nnz_cap, icap = cap;
    void *ix = b->index, *v = b->value;
    int rc = hog_array_grow(&ix, &icap, (size_t)need, sizeof(uint32_t), 64);
    b->index = ix;
    if (rc == 0)
        rc = hog_array_grow(&v, &cap, (size_t)need, sizeof(float), 64);
    b->value = v;
    if (rc == 0)
        b->nnz_cap = cap;
    return rc;
}

/* Makes room in the current block's field array for `more` values, and
 * the array itself (a block's view of fielded rows has one even when it
 * holds no value). */
static int field_room(hog_builder *b, uint64_t more)
{
    uint64_t need = HOG_MAX((uint64_t)b->cur_nnz + more, 1);
    if (need <= b->field_cap && b->field)
        return 0;
    void *f = b->field;
    size_t cap = b->field ? b->field_cap : 0;
    int rc = hog_array_grow(&f, &cap, (size_t)need, sizeof(uint16_t), 64);
    b->field = f;
    if (rc == 0)
        b->field_cap = cap;
    return rc;
}

/* Appends rows [0, n) of a CSR run (ptr relative to its own start, weight
 * NULL for weight 1, field NULL without fields) to the current block,
 * which has room for n rows. */
static int builder_append(hog_builder *b, uint32_t n, const uint32_t *ptr, const uint32_t *index,
                          const float *value, const uint16_t *field, const float *label, const float *weight)
{
    uint64_t nnz = (uint64_t)ptr[n] - ptr[0];
    uint64_t cur_nnz = (uint64_t)b->cur_nnz + nnz;
    const int layout = (b->weighted ? HOG_BLOCK_WEIGHTED : 0) | (b->fielded ? HOG_BLOCK_FIELDS : 0);
    if (cur_nnz > UINT32_MAX || hog_block_bytes((uint64_t)b->cur_rows + n, cur_nnz, layout) > UINT32_MAX)
        return HOG_EPARAM; /* rows_per_block too large for this data */
    uint32_t blocks_done = b->writer ? hog_hgd_writer_blocks(b->writer) : b->nblocks;
    if (b->cur_rows == 0 && blocks_done == UINT32_MAX)
        return HOG_EPARAM; /* the block count is a u32 */
    int rc = reserve_nnz(b, nnz);
    if (rc == 0 && b->fielded)
        rc = field_room(b, nnz);
    if (rc < 0)
        return rc;
    if (nnz) {
        memcpy(b->index + b->cur_nnz, index + ptr[0], (size_t)nnz * sizeof(uint32_t));
        memcpy(b->value + b->cur_nnz, value + ptr[0], (size_t)nnz * sizeof(float));
    }
    if (nnz && b->fielded) {
        const uint16_t *f = field + ptr[0];
        uint16_t most = 0;
        for (uint64_t k = 0; k < nnz; k++)
            most = f[k] > most ? f[k] : most;
        memcpy(b->field + b->cur_nnz, f, (size_t)nnz * sizeof(uint16_t));
        b->fields = HOG_MAX(b->fields, (uint32_t)most + 1);
    }
    uint32_t *dst = b->ptr + b->cur_rows + 1;
    const uint32_t shift = b->cur_nnz - ptr[0]; /* modulo 2^32: the sums land in range */
    uint64_t top = 0;
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = ptr[i + 1] + shift;
        /* Indices are strictly increasing, so a row's last is its largest. */
        if (ptr[i + 1] > ptr[i])
            top = HOG_MAX(top, (uint64_t)index[ptr[i + 1] - 1] + 1);
    }
    b->features = HOG_MAX(b->features, top);
    memcpy(b->label + b->cur_rows, label, (size_t)n * sizeof(float));
    if (b->weighted) {
        if (weight)
            memcpy(b->weight + b->cur_rows, weight, (size_t)n * sizeof(float));
        else
            for (uint32_t i = 0; i < n; i++)
                b->weight[b->cur_rows + i] = 1.0f;
    }
    b->cur_rows += n;
    b->cur_nnz = (uint32_t)cur_nnz;
    b->rows += n;
    b->nnz += nnz;
    if (b->cur_rows == b->rows_per_block)
        return builder_flush(b);
    return 0;
}

/* The first rows settle whether the data set is weighted: a text format
 * either has weights on every line (Vowpal Wabbit's importance) or none. */
static int settle_weighted(hog_builder *b, int weighted)
{
    if (b->rows > 0 || b->weighted == weighted)
        return 0;
    float *w = weighted ? hog_malloc((size_t)b->rows_per_block * sizeof(float)) : NULL;
    if (weighted && !w)
        return -ENOMEM;
    hog_free(b->weight);
    b->weight = w;
    b->weighted = weighted;
    return 0;
}

int hog_builder_add(hog_builder *b, float label, const uint32_t *index, const float *value,
                    uint32_t nnz)
{
    const uint32_t ptr[2] = {0, nnz};
    if (b->fielded)
        return HOG_EPARAM; /* rows with fields came first */
    return builder_append(b, 1, ptr, index, value, NULL, &label, NULL);
}

/* The numbers of the n class names at *at (advanced past them) into
 * b->codes, each name new numbered next. Returns 0, -ENOMEM or HOG_ELABEL
 * (more than HOG_MAX_LABEL_NAMES names). */
static int number_names(hog_builder *b, const char **at, uint32_t n)
{
    if (!b->codes && !(b->codes = hog_malloc((size_t)b->rows_per_block * sizeof(float))))
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        const size_t len = strlen(*at);
        uint32_t id;
        int64_t found = hog_idmap_find(&b->names, *at, len);
        if (found < 0) {
            if (b->names.n >= HOG_MAX_LABEL_NAMES)
                return HOG_ELABEL;
            int rc = hog_idmap_intern(&b->names, *at, len, &id);
            if (rc < 0)
                return rc;
        } else {
            id = (uint32_t)found;
        }
        b->codes[i] = (float)id;
        *at += len + 1;
    }
    return 0;
}

/* The first rows settle whether the values have fields: a text format has
 * them on every value (LIBFFM's, VW's namespaces) or on none. */
static int settle_fielded(hog_builder *b, int fielded)
{
    if (b->rows > 0)
        return b->fielded == fielded ? 0 : HOG_EPARAM;
    b->fielded = fielded;
    return fielded ? field_room(b, 0) : 0;
}

int hog_builder_add_rows(hog_builder *b, const hog_rows *r)
{
    int rc = settle_weighted(b, r->weighted);
    if (rc == 0)
        rc = settle_fielded(b, r->fielded);
    const char *name = r->names_len ? r->names : NULL;
    for (uint64_t i = 0; i < r->rows && rc == 0;) {
        uint32_t n = (uint32_t)HOG_MIN(r->rows - i, (uint64_t)(b->rows_per_block - b->cur_rows));
        const float *label = r->label + i;
        /* Row i of a piece is on line line0 + i + 1, or as many lines later
         * as the piece has lines without a row before it. */
        if (b->cur_rows == 0) {
            b->block_line = b->piece_line0 + i + 1;
            b->block_extra = b->piece_extra;
        } else { /* the block goes on in another piece */
            b->block_extra += b->piece_extra;
        }
        if (name) {
            if ((rc = number_names(b, &name, n)) < 0)
                break;
            label = b->codes;
        }
        rc = builder_append(b, n, r->ptr + i, r->index, r->value, r->fielded ? r->field : NULL, label,
                            r->weighted ? r->weight + i : NULL);
        i += n;
    }
    return rc;
}

const hog_idmap *hog_builder_names(const hog_builder *b)
{
    return &b->names;
}

int hog_builder_add_fnames(hog_builder *b, const hog_fnames *f)
{
    return hog_fnames_merge(&b->fnames, f, 0);
}

/* The feature names joined, of the features the blocks have, for the file
 * or the data set. */
static int join_fnames(hog_builder *b)
{
    hog_fnames_free(&b->joined);
    return hog_fnames_join(&b->fnames, b->features, &b->joined);
}

/* Hands the builder's class names and feature names to ds (a spilled
 * builder's read its feature names from the file). */
static void give_names(hog_builder *b, hog_dataset *ds)
{
    hog_idmap_free(&ds->names);
    ds->names = b->names;
    memset(&b->names, 0, sizeof(b->names));
    if (ds->fnames.n == 0) {
        hog_fnames_free(&ds->fnames);
        ds->fnames = b->joined;
        memset(&b->joined, 0, sizeof(b->joined));
    }
}

void hog_builder_free(hog_builder *b)
{
    if (!b)
        return;
    for (uint32_t i = 0; i < b->nblocks; i++)
        hog_free(b->heap[i]);
    hog_free(b->heap);
    hog_free(b->blocks);
    hog_free(b->ptr);
    hog_free(b->label);
    hog_free(b->weight);
    hog_free(b->index);
    hog_free(b->value);
    hog_free(b->field);
    hog_hgd_writer_free(b->writer);
    hog_atomic_abort(&b->scratch);
    hog_free(b->spill_dir);
    hog_free(b->spill_label);
    hog_idmap_free(&b->names);
    hog_free(b->codes);
    hog_fnames_free(&b->fnames);
    hog_fnames_free(&b->joined);
    hog_free(b);
}

/* A spilled builder's data set: the scratch file, mapped, and the blocks
 * held in memory before the spill, which it keeps until
 * hog_dataset_drop_heap. */
/* The fields a finished data set has: a data set of rows with fields has
 * at least one, though no row had a value. */
static uint32_t builder_fields(const hog_builder *b)
{
    return b->fielded ? HOG_MAX(b->fields, 1) : 0;
}

static int finish_spilled(hog_builder *b, hog_format format, hog_dataset **out)
{
    hog_hgd_writer_set_names(b->writer, &b->names);
    hog_hgd_writer_set_fields(b->writer, builder_fields(b));
    hog_hgd_writer_set_hash_bits(b->writer, b->hash_bits);
    int rc = join_fnames(b);
    hog_hgd_writer_set_fnames(b->writer, &b->joined);
    if (rc == 0)
        rc = hog_hgd_writer_finish(b->writer, b->features, b->rows_per_block, b->weighted, b->one_based, NULL);
    if (rc < 0)
        return rc;
    char name[PATH_MAX], err[256];
    snprintf(name, sizeof(name), "%s", b->scratch.path);
    int fd = hog_scratch_take(&b->scratch);
    if ((rc = hog_hgd_open_fd(fd, name, out, err, sizeof(err))) < 0) {
        hog_log(HOG_LOG_ERROR, "%s", err);
        return rc;
    }
    hog_dataset *ds = *out;
    ds->info.format = format;
    ds->heap = b->heap;
    ds->heap_count = b->nblocks;
    b->heap = NULL;
    b->nblocks = 0;
    give_names(b, ds);
    return 0;
}

int hog_builder_finish(hog_builder *b, hog_format format, hog_dataset **out)
{
    *out = NULL;
    int rc = b->rows == 0 ? HOG_EEMPTY : builder_flush(b);
    if (rc == 0 && !b->spilled)
        rc = join_fnames(b);
    if (rc == 0 && b->spilled) {
        rc = finish_spilled(b, format, out);
        if (rc == 0)
            hog_builder_free(b);
        return rc;
    }
    hog_dataset *ds = rc == 0 ? hog_calloc(1, sizeof(*ds)) : NULL;
    if (rc == 0 && !ds)
        rc = -ENOMEM;
    if (rc < 0)
        return rc;
    ds->fd = -1;
    ds->version = HOG_HGD_VERSION;
    ds->info.format = format;
    ds->info.rows = b->rows;
    ds->info.features = b->features;
    ds->info.nnz = b->nnz;
    ds->info.blocks = b->nblocks;
    ds->info.rows_per_block = b->rows_per_block;
    ds->info.weighted = b->weighted;
    ds->info.index_base = b->one_based;
    ds->info.fingerprint = hog_etl_fingerprint(b->blocks, b->nblocks);
    ds->fields = builder_fields(b);
    ds->hash_bits = b->hash_bits;
    ds->blocks = b->blocks;
    ds->heap = b->heap;
    ds->heap_count = b->nblocks;
    b->blocks = NULL;
    b->heap = NULL;
    b->nblocks = 0;
    give_names(b, ds);
    hog_builder_free(b);
    *out = ds;
    return 0;
}

int hog_builder_idle(hog_builder *b)
{
    return b->eager ? builder_flush(b) : 0;
}

int hog_builder_finish_pass(hog_builder *b)
{
    int rc = b->rows == 0 ? HOG_EEMPTY : builder_flush(b);
    hog_builder_free(b);
    return rc;
}

int hog_builder_finish_file(hog_builder *b, hog_dataset_info *info)
{
    int rc = b->rows == 0 ? HOG_EEMPTY : builder_flush(b);
    hog_hgd_writer_set_names(b->writer, &b->names);
    hog_hgd_writer_set_fields(b->writer, builder_fields(b));
    hog_hgd_writer_set_hash_bits(b->writer, b->hash_bits);
    if (rc == 0)
        rc = join_fnames(b);
    hog_hgd_writer_set_fnames(b->writer, &b->joined);
    if (rc == 0)
        rc = hog_hgd_writer_finish(b->writer, b->features, b->rows_per_block, b->weighted,
                                   b->one_based, info);
    hog_builder_free(b);
    return rc;
}
