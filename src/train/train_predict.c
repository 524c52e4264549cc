/* train_predict.c: a model's predictions for a whole file in one pass and bounded memory: blocks of rows scored and formatted on every core, written in order. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "train.h"

/*
 * The input comes as a sequence of blocks: the blocks of a mapped .hgd, or
 * those the text parsers build, which a reader thread takes from a builder
 * that keeps none (hog_builder_create_pass). A ring of `depth` slots holds
 * the blocks in flight and their formatted predictions:
 *
 *   pushed    blocks put in slots (text: by the reader; .hgd: all of them,
 *             there from the start)
 *   claimed   blocks taken by a worker to score and format
 *   written   blocks whose predictions have gone out, in order
 *
 * written <= claimed <= pushed, and a block is claimed (.hgd) or pushed
 * (text) only while it is less than `depth` ahead of written: memory stays
 * at depth blocks and their text however large the input. A worker that
 * finishes a block writes out every finished block from `written` on, unless
 * another worker is doing so (then that one picks it up before it stops),
 * so the output is in row order and no thread is set aside for writing.
 * One mutex guards the counters; blocks are thousands of rows, so taking it
 * twice a block costs nothing measurable.
 */

typedef struct pred_slot {
    hog_block blk;          /* text: the block's rows, in bufs */
    hog_block_buffers bufs; /* text: arrays traded with the builder */
    char *out;              /* the block's predictions */
    size_t len, cap;
    int scored;
} pred_slot;

typedef struct pred_part {
    _Alignas(HOG_CACHELINE) hog_eval_sums sums;
    uint64_t rows;
    uint64_t top; /* the largest feature index + 1 seen */
} pred_part;

typedef struct pred_job {
    const hog_model *m;
    const char *path;
    hog_predict_params pp;
    int output;              /* predictions are written (and so formatted) */
    uint32_t columns;        /* numbers per row (hog_predict_columns) */
    const hog_dataset *ds;   /* the mapped input, or NULL for text */
    hog_block_source *src;   /* a .hgd's blocks: read once, checked as they are read */
    uint32_t rows_per_block;
    const char **label;      /* the class labels as "%.17g" writes them, or the classes' names */
    size_t *label_len;
    char (*label_num)[HOG_NUMBER_CHARS];
    size_t label_most;       /* the longest of them */
    /* metrics on labels that are class names: name c of the input scores
     * as the model's label relabel[c] (the reader maps each name as it
     * first comes, before its block is pushed) */
    hog_builder *b;          /* the text's builder, whose names grow as it reads */
    float *relabel;
    uint32_t mapped;         /* names mapped so far */
    int labels_seen;         /* the first block's labels were checked against the model's */
    char label_err[256];  /* why the reader stopped: a label, or rows without the fields the model needs */

    pthread_mutex_t mu;
    pthread_cond_t changed;
    pred_slot *slots;
    unsigned depth;
    uint64_t pushed, claimed, written;
    int reading_done; /* no more blocks will be pushed */
    int writing;      /* a worker is writing out finished blocks */
    int stop;         /* an error: everyone winds down */
    int rc;           /* the first error */
    char err[512];
    pred_part *parts;
} pred_job;

/* Records the first error and stops the run. Called with the mutex held. */
static void job_fail(pred_job *j, int rc, const char *msg)
{
    if (!j->stop) {
        j->stop = 1;
        j->rc = rc;
        snprintf(j->err, sizeof(j->err), "%s", msg);
    }
    pthread_cond_broadcast(&j->changed);
}

/* ===================================================================== *
 *  Scoring and formatting one block
 * ===================================================================== */

uint32_t hog_predict_columns(const hog_model *m, hog_predict_what what)
{
    const hog_loss loss = m->info.loss;
    switch (what) {
    case HOG_PREDICT_VALUE: return 1;
    case HOG_PREDICT_RAW: return m->factors ? 1 : m->outputs;
    case HOG_PREDICT_PROBABILITIES:
        return loss == HOG_LOSS_LOGISTIC ? 2 : loss == HOG_LOSS_SOFTMAX ? m->info.classes : 0;
    }
    return 0;
}

/* Appends one number to the slot: a float (f32), or its text and the
 * separator sep. */
static inline void put_number(const pred_job *j, pred_slot *sl, double v, int six, char sep)
{
    char *p = sl->out + sl->len;
    if (j->pp.format == HOG_PREDICT_F32) {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof(bits));
        for (int i = 0; i < 4; i++)
            p[i] = (char)(bits >> (8 * i)); /* little-endian on any host */
        sl->len += 4;
        return;
    }
    size_t n = six ? hog_format_f6(p, v) : hog_format_g9(p, v);
    p[n] = sep;
    sl->len += n + 1;
}

/* Appends a row's scores s (RAW) or its class probabilities (PROBABILITIES). */
static void put_columns(const pred_job *j, pred_slot *sl, const float *s)
{
    const uint32_t K = j->columns;
    if (j->pp.what == HOG_PREDICT_RAW) {
        for (uint32_t k = 0; k < K; k++)
            put_number(j, sl, (double)s[k], 0, k + 1 < K ? ' ' : '\n');
    } else if (j->m->info.loss == HOG_LOSS_LOGISTIC) {
        double p1 = 1.0 / (1.0 + exp(-(double)s[0]));
        put_number(j, sl, 1.0 - p1, 1, ' ');
        put_number(j, sl, p1, 1, '\n');
    } else { /* softmax */
        double top = (double)s[0], sum = 0;
        for (uint32_t k = 1; k < K; k++)
            top = fmax(top, (double)s[k]);
        for (uint32_t k = 0; k < K; k++)
            sum += exp((double)s[k] - top);
        for (uint32_t k = 0; k < K; k++)
            put_number(j, sl, exp((double)s[k] - top) / sum, 1, k + 1 < K ? ' ' : '\n');
    }
}

/* Appends the prediction of a row whose first score was raw and whose
 * class is cls to the slot, in the output format. */
static inline void put_prediction(const pred_job *j, pred_slot *sl, float raw, uint32_t cls)
{
    const hog_loss loss = j->m->info.loss;
    char *p = sl->out + sl->len;
    if (j->pp.format == HOG_PREDICT_F32) {
        float v = loss == HOG_LOSS_LOGISTIC ? (float)(1.0 / (1.0 + exp(-(double)raw)))
                  : hog_loss_is_regression(loss) ? raw
                                                   : (float)j->m->class_labels[cls];
        uint32_t bits;
        memcpy(&bits, &v, sizeof(bits));
        for (int i = 0; i < 4; i++)
            p[i] = (char)(bits >> (8 * i)); /* little-endian on any host */
        sl->len += 4;
        return;
    }
    size_t n;
    if (loss == HOG_LOSS_LOGISTIC) { /* hog_model_predict's probability, to the digit */
        n = hog_format_f6(p, 1.0 / (1.0 + exp(-(double)raw)));
    } else if (hog_loss_is_regression(loss)) {
        n = hog_format_g9(p, (double)raw);
    } else {
        n = j->label_len[cls];
        memcpy(p, j->label[cls], n);
    }
    p[n] = '\n';
    sl->len += n + 1;
}

/* Scores the rows of blk into sl's predictions and part's sums. s: room
 * for the model's outputs. Returns 0 or -ENOMEM. */
static int score_block(pred_job *j, pred_part *part, const hog_block *blk, pred_slot *sl, float *s)
{
    const hog_model *m = j->m;
    const int metrics = j->pp.metrics;
    sl->len = 0;
    const int pm = hog_model_prefetch_on(m);
    for (uint32_t r = 0; pm && r < HOG_SCORE_AHEAD; r++)
        hog_model_prefetch_row(m, blk, r);
    for (uint32_t r = 0; r < blk->rows; r++) {
        if (pm)
            hog_model_prefetch_row(m, blk, r + HOG_SCORE_AHEAD);
        /* Room for the longest prediction a row can have, checked per row
         * rather than bounded per block: a cheap test, and no bound to get
         * wrong. */
        const size_t row_room = (size_t)j->columns * (HOG_FORMAT_CHARS + 1) + j->label_most;
        if (j->output && sl->cap - sl->len <= row_room) {
            void *out = sl->out;
            size_t need = sl->len + row_room + 1 + (size_t)(blk->rows - r) * 12 * j->columns;
            int rc = hog_array_grow(&out, &sl->cap, need, 1, 4096);
            sl->out = out;
            if (rc < 0)
                return rc;
        }
        hog_row row = hog_block_row(blk, r);
        if (j->mapped)
            row.label = j->relabel[(uint32_t)row.label];
        if (row.nnz)
            part->top = HOG_MAX(part->top, (uint64_t)row.index[row.nnz - 1] + 1);
        hog_model_scores(m, &row, hog_block_fields(blk, r), s);
        const float raw = s[0];
        if (j->output && j->pp.what != HOG_PREDICT_VALUE) /* before hog_eval_add turns s into probabilities */
            put_columns(j, sl, s);
        uint32_t cls = metrics ? hog_eval_add(m, &part->sums, row.label, row.weight, s)
                               : hog_scores_class(m, s);
        if (j->output && j->pp.what == HOG_PREDICT_VALUE)
            put_prediction(j, sl, raw, cls);
    }
    part->rows += blk->rows;
    return 0;
}

/* ===================================================================== *
 *  Writing in order
 * ===================================================================== */
static int write_fd(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int emit(const pred_job *j, const pred_slot *sl)
{
    if (!j->output || sl->len == 0)
        return 0;
    if (j->pp.write)
        return j->pp.write(j->pp.write_ctx, sl->out, sl->len);
    return write_fd(j->pp.fd, sl->out, sl->len);
}

/* Writes out the finished blocks from `written` on, unless another worker
 * is at it. Called with the mutex held; releases it while writing. */
static void write_ready(pred_job *j)
{
    while (!j->writing && !j->stop && j->written < j->claimed && j->slots[j->written % j->depth].scored) {
        uint64_t from = j->written, to = from;
        while (to < j->claimed && j->slots[to % j->depth].scored)
            to++;
        j->writing = 1;
        pthread_mutex_unlock(&j->mu);
        int rc = 0;
        for (uint64_t q = from; q < to && rc == 0; q++)
            rc = emit(j, &j->slots[q % j->depth]);
        pthread_mutex_lock(&j->mu);
        for (uint64_t q = from; q < to; q++)
            j->slots[q % j->depth].scored = 0;
        j->written = to;
        j->writing = 0;
        if (rc < 0) {
            char msg[160];
            snprintf(msg, sizeof(msg), "the predictions could not be written: %s", hog_strerror(rc));
            job_fail(j, rc, msg);
        }
        pthread_cond_broadcast(&j->changed);
    }
}

/* ===================================================================== *
 *  The workers
 * ===================================================================== */
static void pred_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    pred_job *j = arg;
    pred_part *part = &j->parts[ith];
    float *s = hog_malloc(j->m->outputs * sizeof(float));
    int rc = s ? 0 : -ENOMEM;
    if (rc == 0 && j->pp.metrics)
        rc = hog_eval_sums_init(&part->sums, j->m);
    pthread_mutex_lock(&j->mu);
    while (rc == 0) {
        /* A block is there to claim once pushed, and (for a mapped input,
         * where all are pushed) while its slot is free. */
        while (!j->stop && !(j->claimed < j->pushed && j->claimed < j->written + j->depth) &&
               !(j->reading_done && j->claimed == j->pushed))
            pthread_cond_wait(&j->changed, &j->mu);
        if (j->stop || j->claimed == j->pushed)
            break;
        uint64_t q = j->claimed++;
        pthread_mutex_unlock(&j->mu);

        pred_slot *sl = &j->slots[q % j->depth];
        const hog_block *blk = &sl->blk; /* text: the slot's; a .hgd: the source's */
        if (j->src && !(blk = hog_block_source_get(j->src, (uint32_t)q))) {
            hog_block_source_release(j->src, (uint32_t)q); /* its one reader: the buffer reads on */
            pthread_mutex_lock(&j->mu);
            job_fail(j, HOG_ECORRUPT, ""); /* hog_block_source_end says why */
            break;
        }
        rc = score_block(j, part, blk, sl, s);
        if (j->src)
            hog_block_source_release(j->src, (uint32_t)q);

        pthread_mutex_lock(&j->mu);
        sl->scored = 1;
        if (rc == 0)
            write_ready(j);
    }
    if (rc == -ENOMEM) {
        char msg[sizeof(j->err)];
        snprintf(msg, sizeof(msg), "%s: out of memory", j->path);
        job_fail(j, rc, msg);
    }
    pthread_mutex_unlock(&j->mu);
    hog_free(s);
}

/* ===================================================================== *
 *  Text: the reader thread
 * ===================================================================== */
typedef struct pred_reader {
    pred_job *j;
    const char *path;
    hog_read_params p;
    hog_builder *b;
    hog_format format;
    uint64_t skipped;
    char *report;
} pred_reader;

/* The builder's callback, on the reader thread: the block goes into the
 * next slot once that slot's last block has been written, the slot taking
 * the builder's arrays (the block's rows) in exchange for its own. */
static int reader_block(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs)
{
    (void)kept; /* always 0: a pass builder keeps nothing */
    (void)position;
    pred_job *j = ctx;
    pthread_mutex_lock(&j->mu);
    while (!j->stop && j->pushed - j->written >= j->depth)
        pthread_cond_wait(&j->changed, &j->mu);
    int stop = j->stop;
    pthread_mutex_unlock(&j->mu);
    if (stop)
        return -ECANCELED;
    int rc = hog_model_fields_fit(j->m, blk->field != NULL, "the text", j->label_err, sizeof(j->label_err));
    if (rc < 0)
        return rc;
    const hog_idmap *names = hog_builder_names(j->b);
    if (j->pp.metrics && (!j->labels_seen || names->n > j->mapped)) {
        rc = hog_labels_map(j->m, names, j->relabel, j->mapped, j->label_err, sizeof(j->label_err));
        if (rc < 0)
            return rc;
        j->labels_seen = 1;
        j->mapped = names->n;
    }
    /* The slot is the reader's until pushed moves past it. */
    pred_slot *sl = &j->slots[j->pushed % j->depth];
    rc = hog_block_buffers_ready(&sl->bufs, j->rows_per_block, blk->weight != NULL);
    if (rc < 0)
        return rc;
    hog_block_buffers mine = sl->bufs;
    sl->bufs = *bufs;
    *bufs = mine;
    sl->blk = *blk;
    pthread_mutex_lock(&j->mu);
    j->pushed++;
    pthread_cond_broadcast(&j->changed);
    pthread_mutex_unlock(&j->mu);
    return 0;
}

static void *reader_main(void *arg)
{
    pred_reader *r = arg;
    pred_job *j = r->j;
    char err[sizeof(j->err)] = "";
    int rc = hog_text_read(r->path, &r->p, r->b, &r->format, &r->skipped, &r->report, err, sizeof(err));
    if (rc == 0)
        rc = hog_builder_finish_pass(r->b);
    else
        hog_builder_free(r->b);
    r->b = NULL;
    if (rc < 0 && j->label_err[0])
        snprintf(err, sizeof(err), "%s: %s", r->path, j->label_err);
    if (rc < 0 && !err[0])
        snprintf(err, sizeof(err), "%s: %s", r->path, hog_strerror(rc));
    pthread_mutex_lock(&j->mu);
    j->reading_done = 1;
    if (rc < 0 && rc != -ECANCELED) /* ECANCELED: the workers stopped it, for a reason of their own */
        job_fail(j, rc, err);
    pthread_cond_broadcast(&j->changed);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* ===================================================================== *
 *  The call
 * ===================================================================== */
hog_predict_params hog_predict_params_default(void)
{
    hog_predict_params p;
    memset(&p, 0, sizeof(p));
    p.format = HOG_PREDICT_TEXT;
    p.fd = -1;
    p.metrics = 1;
    return p;
}

/* The class labels as "%.17g" writes them, or their names, for the text
 * format. */
static int labels_format(pred_job *j)
{
    uint32_t n = j->m->info.classes;
    j->label = hog_calloc(n ? n : 1, sizeof(*j->label));
    j->label_len = hog_calloc(n ? n : 1, sizeof(size_t));
    j->label_num = hog_calloc(n ? n : 1, sizeof(*j->label_num));
    if (!j->label || !j->label_len || !j->label_num)
        return -ENOMEM;
    for (uint32_t k = 0; k < n; k++) {
        const char *name = hog_model_class_name(j->m, k);
        if (name) {
            j->label[k] = name;
            j->label_len[k] = strlen(name);
        } else {
            int len = hog_number_format(j->label_num[k], sizeof(j->label_num[k]), j->m->class_labels[k]);
            j->label[k] = j->label_num[k];
            j->label_len[k] = len < 0 ? 0 : HOG_MIN((size_t)len, sizeof(j->label_num[k]) - 1);
        }
        j->label_most = HOG_MAX(j->label_most, j->label_len[k]);
    }
    return 0;
}

/* Runs the workers over the blocks: with r, as the reader pushes them;
 * without, the mapped data set's. Returns 0 or the first error (in j->err). */
static int run_blocks(pred_job *j, hog_pool *pool, pred_reader *r)
{
    pthread_t reader;
    if (r) {
        int rc = pthread_create(&reader, NULL, reader_main, r);
        if (rc != 0) {
            hog_builder_free(r->b);
            r->b = NULL;
            snprintf(j->err, sizeof(j->err), "%s: cannot start the reading thread", r->path);
            return -rc;
        }
    }
    hog_pool_run(pool, pred_worker, j);
    if (r) {
        /* The workers are done: stopped, or every block pushed was written
         * and the reading is over. Either way the reader ends (a stop makes
         * its next block cancel the read). */
        pthread_join(reader, NULL);
    }
    return j->stop ? j->rc : 0;
}

int hog_model_predict_file(const hog_model *m, const char *path, const hog_read_params *rp,
                           const hog_predict_params *pp, hog_predict_stats *stats, char *err_detail,
                           size_t err_len)
{
    hog_predict_stats st = {.format = HOG_FORMAT_AUTO, .metrics = hog_metrics_none()};
    if (stats)
        *stats = st;
    if (!m || !path)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "m and path must not be NULL");
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    pred_job j = {.m = m, .path = path, .pp = pp ? *pp : hog_predict_params_default()};
    if (j.pp.format != HOG_PREDICT_TEXT && j.pp.format != HOG_PREDICT_F32)
        return hog_fail(HOG_EPARAM, err_detail, err_len,
                        "hog_predict_params.format is %d: expected HOG_PREDICT_TEXT or HOG_PREDICT_F32",
                        (int)j.pp.format);
    if ((unsigned)j.pp.what > HOG_PREDICT_PROBABILITIES)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "hog_predict_params.what is %d: expected "
                        "HOG_PREDICT_VALUE, HOG_PREDICT_RAW or HOG_PREDICT_PROBABILITIES", (int)j.pp.what);
    j.columns = hog_predict_columns(m, j.pp.what);
    if (!j.columns)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "hog_predict_params.what = HOG_PREDICT_PROBABILITIES: a "
                        "%s model gives no probabilities (logistic and softmax do)", hog_loss_name(m->info.loss));
    j.output = j.pp.write != NULL || j.pp.fd >= 0;
    hog_read_params p = rp ? *rp : hog_read_params_default();
    if (p.index_base < 0) /* libsvm indices mean what they meant in training */
        p.index_base = m->info.data_index_base;
    if (m->data_hash_bits && p.hash_bits && p.hash_bits != m->data_hash_bits)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "hog_read_params.hash_bits is %u: the model was trained "
                        "on text hashed into 2^%u features, and %s hashed otherwise would score features it never "
                        "learned; leave it 0 to follow the model", p.hash_bits, m->data_hash_bits, path);
    if (!p.hash_bits) /* features hash where they hashed in training */
        p.hash_bits = m->data_hash_bits;
    if (m->fields || (m->cross.n && hog_cross_needs_fields(&m->cross))) /* it pairs values by their fields */
        p.fields = 1;

    hog_format fmt;
    int rc = hog_resolve_format(path, &p, &fmt, err_detail, err_len);
    if (rc < 0)
        return rc;
    hog_dataset *ds = NULL;
    pred_reader reader = {.j = &j, .path = path, .p = p};
    const uint64_t limit = p.mem_limit ? p.mem_limit : hog_mem_usable();
    if (fmt == HOG_FORMAT_BINARY) {
        /* The workers check each block as they take it: one pass. */
        if (p.verify == HOG_VERIFY_AT_OPEN)
            p.verify = HOG_VERIFY_AT_FIRST_READ;
        rc = hog_hgd_open_within(path, &p, &ds, err_detail, err_len);
        if (rc < 0)
            return rc;
        if ((rc = hog_model_fields_fit(m, ds->fields, path, err_detail, err_len)) < 0) {
            hog_dataset_close(ds);
            return rc;
        }
        j.ds = ds;
        j.pushed = ds->info.blocks;
        j.reading_done = 1;
        st.format = HOG_FORMAT_BINARY;
        /* class names: the file's numbers, mapped to the model's labels */
        if (j.pp.metrics &&
            (rc = hog_labels_map_new(m, &ds->names, &j.relabel, j.label_err, sizeof(j.label_err))) < 0) {
            hog_fail(rc, err_detail, err_len, "%s: %s", path, rc == -ENOMEM ? "out of memory" : j.label_err);
            hog_dataset_close(ds);
            return rc;
        }
        if (j.pp.metrics)
            j.mapped = ds->names.n;
    } else {
        if (fmt == HOG_FORMAT_LIBSVM && (rc = hog_model_fields_fit(m, 0, path, err_detail, err_len)) < 0)
            return rc;
        reader.p.format = fmt;
        rc = hog_builder_create_pass(p.rows_per_block, &reader.b);
        if (rc < 0)
            return hog_fail(rc, err_detail, err_len, "%s: out of memory", path);
        hog_builder_on_block(reader.b, reader_block, &j);
        hog_builder_set_eager(reader.b); /* a stream's rows are answered as they come */
        j.b = reader.b;
        if (j.pp.metrics && !hog_loss_is_regression(m->info.loss) &&
            !(j.relabel = hog_malloc(HOG_MAX_LABEL_NAMES * sizeof(float)))) {
            hog_builder_free(reader.b);
            return hog_fail(-ENOMEM, err_detail, err_len, "%s: out of memory", path);
        }
        j.rows_per_block = p.rows_per_block ? p.rows_per_block : HOG_DEFAULT_ROWS_PER_BLOCK;
    }

    hog_pool *pool = NULL;
    unsigned nth = 0;
    rc = hog_pool_borrow(j.pp.threads, 0, &pool, err_detail, err_len);
    if (rc < 0)
        goto out;
    nth = hog_pool_threads(pool);
    j.depth = 2 * nth + 2;
    j.slots = hog_calloc(j.depth, sizeof(pred_slot));
    j.parts = hog_aligned_alloc(HOG_CACHELINE, nth * sizeof(pred_part));
    if (j.parts) /* zeroed before anything can fail: the way out frees their sums */
        memset(j.parts, 0, nth * sizeof(pred_part));
    if (!j.slots || !j.parts || (!hog_loss_is_regression(m->info.loss) && labels_format(&j) < 0)) {
        rc = hog_fail(-ENOMEM, err_detail, err_len, "%s: out of memory", path);
        goto out;
    }
    /* A .hgd's blocks come from a source, which reads one of more than
     * half the memory out of core, past the page cache that every byte
     * would cross once. */
    if (ds) {
        hog_source_params sp = hog_source_params_default();
        sp.readers = nth;
        sp.limit = limit;
        if ((rc = hog_block_source_open(ds, &sp, &j.src)) == 0)
            rc = hog_block_source_pass(j.src, HOG_PASS_ONCE, NULL, 0);
        if (rc < 0) {
            hog_fail(rc, err_detail, err_len, "%s: %s", path, rc == -ENOMEM ? "out of memory" : hog_strerror(rc));
            goto out;
        }
    }
    pthread_mutex_init(&j.mu, NULL);
    pthread_cond_init(&j.changed, NULL);
    rc = run_blocks(&j, pool, ds ? NULL : &reader);
    pthread_cond_destroy(&j.changed);
    pthread_mutex_destroy(&j.mu);
    if (j.src) {
        int rr = hog_block_source_end(j.src, err_detail, err_len);
        if (rr < 0) { /* a block that failed its read or its check, or a file changed: its error */
            rc = rr;
            goto out;
        }
    }
    if (rc < 0) {
        hog_fail(rc, err_detail, err_len, "%s", j.err[0] ? j.err : hog_strerror(rc));
        goto out;
    }

    for (unsigned i = 0; i < nth; i++) {
        st.rows += j.parts[i].rows;
        st.features = HOG_MAX(st.features, j.parts[i].top);
        if (i > 0)
            hog_eval_sums_merge(&j.parts[0].sums, &j.parts[i].sums);
    }
    if (j.pp.metrics)
        hog_eval_metrics(m, &j.parts[0].sums, &st.metrics);
    if (ds) {
        st.features = ds->info.features;
    } else {
        st.format = reader.format;
        st.skipped = reader.skipped;
        if (reader.report && err_detail && err_len)
            snprintf(err_detail, err_len, "%s", reader.report);
    }
    if (stats)
        *stats = st;
out:
    hog_pool_return(pool);
    for (unsigned i = 0; j.parts && i < nth; i++)
        hog_eval_sums_free(&j.parts[i].sums);
    for (unsigned i = 0; j.slots && i < j.depth; i++) {
        hog_free(j.slots[i].out);
        hog_block_buffers_free(&j.slots[i].bufs);
    }
    hog_free(j.slots);
    hog_free(j.parts);
    hog_free(j.label);
    hog_free(j.label_len);
    hog_free(j.label_num);
    hog_free(j.relabel);
    hog_free(reader.report);
    hog_builder_free(reader.b);
    hog_block_source_close(j.src);
    hog_dataset_close(ds);
    return rc;
}
