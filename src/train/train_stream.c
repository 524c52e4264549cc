/* train_stream.c: the first epoch trained on a text file's blocks while the file is read, and hog_trainer_run_file, which runs it or trains on the whole data set. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "train_run.h"

/* ===================================================================== *
 *  The first epoch while the text is read
 *
 *  The first STREAM_HEAD blocks settle what training needs up front: the
 *  label values, the kernel (by density) and first feature degrees. Then
 *  every window of blocks the feed hands over is one pass of the workers,
 *  the window's segments shuffled among themselves, while the feed parses
 *  the next ones. Between windows the degrees (and so the L2 scales) grow
 *  with the rows seen, and the per-feature arrays with the largest index
 *  seen. The rows arrive in file order, shuffled only within a window: a
 *  file sorted by label should be shuffled first, or read whole first
 *  (stream 0). When the rest of the file breaks what the head settled (a
 *  label value the head did not have), the run starts over on the whole
 *  data set, which the feed goes on building meanwhile.
 * ===================================================================== */
#define STREAM_HEAD 4u
/* The memory limit a run in one pass reads its text within (the pipeline
 * takes a quarter: chunks of 1 MiB, a few in flight). */
#define ONE_PASS_READ (128ull << 20)

/* Blocks per window: enough segments that the workers' shares balance
 * (two blocks, eight segments, a worker), at most 16 (the feed holds three
 * windows: 48 blocks, 120 MB of RCV1-shaped rows). */
static uint32_t stream_window(unsigned nth)
{
    return HOG_MIN(HOG_MAX(4u, 2u * nth), 16u);
}

/* Why a run cannot stream the first epoch, or NULL. */
static const char *stream_refusal(const hog_trainer *t)
{
    const hog_train_params *p = &t->p;
    if (t->link)
        return "a multi-node run";
    if (!p->stream)
        return "streaming is off";
    if (p->replicas != HOG_REPLICAS_MACHINE)
        return p->replicas == HOG_REPLICAS_NODE ? "hog_train_params.replicas node" : "hog_train_params.replicas core";
    if (p->kernel == HOG_KERNEL_DENSE)
        return "the dense kernel";
    if (p->average == p->epochs)
        return "averaging over every epoch";
    if (t->ckpt_path)
        return "checkpoints are on";
    if (p->class_weight)
        return "class weights (counted on the whole data)";
    return NULL;
}

/* Why a run that streams its first epoch keeps the data set for more than
 * that epoch, or NULL when it trains in one pass: each row once as it is
 * read, each block given back once trained, so that memory is bounded by
 * the read-ahead and the model whatever the length of the text. */
static const char *one_pass_refusal(const hog_trainer *t, const char *path, const char *cache_path)
{
    const hog_train_params *p = &t->p;
    struct stat st;
    if (p->epochs != 1)
        return "more than one epoch";
    if (cache_path)
        return "a cache is written";
    if (p->holdout > 0)
        return "a holdout (evaluated on the data set kept)";
    if (p->train_metrics == HOG_TRAIN_METRICS_EXACT)
        return "exact training metrics (a pass over the data set kept)";
    if (p->schedule == HOG_SCHEDULE_INVSCALING && (stat(path, &st) < 0 || !S_ISREG(st.st_mode)))
        return "the invscaling schedule follows the position in the input, which a pipe's unknown length leaves "
               "unknown";
    return NULL;
}

/* Sets the model's size: the per-feature arrays hold at least dim features. */
static void run_settle_dim(run_state *rs, uint64_t dim)
{
    rs->dim = dim;
    rs->m->dim = dim;
    rs->m->info.features = dim;
}

/* Grows every per-feature array to dim features, the new ones zero (and
 * out of the private copies' map). Returns 0 or -ENOMEM (the arrays grown
 * so far stay valid). */
static int run_grow(run_state *rs, uint64_t dim)
{
    const uint64_t old = rs->dim, K = rs->outputs;
    if (dim <= old)
        return 0;
    hog_model *m = rs->m;
    const uint64_t S = m->stride; /* packed: the records grow whole */
    hog_weight *w = hog_huge_grow((void *)m->w, old * S * sizeof(hog_weight), dim * S * sizeof(hog_weight));
    if (!w)
        return -ENOMEM;
    m->w = w;
    for (unsigned i = 0; i < rs->nth; i++)
        rs->ws[i].w = w;
    hog_run_pack_views(rs);
    struct { void **p; size_t size; } grow[] = {
        {(void **)&rs->deg, sizeof(uint32_t)}, /* NULL while a window_count owns it */
        {(void **)&rs->tab.l2_scale, sizeof(float)},
        /* packed: in the records, grown with the model */
        {rs->optim.packed ? NULL : (void **)&rs->optim.acc, K * sizeof(hog_weight)},
        {rs->optim.packed ? NULL : (void **)&rs->optim.xmax, sizeof(hog_weight)},
        {rs->optim.packed ? NULL : (void **)&rs->optim.l1s, 2 * K * sizeof(hog_weight)},
    };
    for (unsigned i = 0; i < HOG_ARRAY_LEN(grow); i++) {
        if (!grow[i].p || !*grow[i].p)
            continue;
        char *q = hog_huge_grow(*grow[i].p, old * grow[i].size, dim * grow[i].size);
        if (!q)
            return -ENOMEM;
        *grow[i].p = q;
    }
    run_settle_dim(rs, dim);
    hog_run_init_factors(rs, old, dim);
    return 0;
}

/* The L2 scales of a streamed epoch, rows / degree from the rows counted
 * so far: set again whenever the rows have doubled since the last time, so
 * the estimates follow the data at the cost of one pass over the features
 * per doubling. A feature not counted yet gets the scale of one row in
 * all, which is what it will have when it first shows. */
static void stream_scales(run_state *rs, const window_count *c)
{
    const double rows = (double)c->deg_rows;
    for (uint64_t j = 0; j < rs->dim; j++) {
        uint32_t d = j < c->deg_cap ? c->deg[j] : 0;
        rs->tab.l2_scale[j] = (float)(d ? rows / d : rows);
    }
    hog_run_pack_l2(rs, 0, rs->dim);
}

/* With hog_train_params.l2_rows, a streamed epoch's L2: l2_rows over the
 * training rows the whole text will have, estimated from the rows counted
 * so far and the share of the text they came from (pos; 0 when unknown,
 * as of a pipe: the rows so far). It is set with the scales, between
 * passes, so the penalty a feature gets for a step, l2 rows / degree,
 * follows its degree as the whole data's would. */
static void stream_l2(const run_state *rs, double *l2, uint64_t rows, double pos)
{
    if (rs->p->l2_rows > 0)
        *l2 = rs->p->l2_rows / fmax(1.0, pos > 0 && pos < 1 ? (double)rows / pos : (double)rows);
}

/* Settles the run's shape from the head (n blocks): label values, kernel,
 * features, degrees and tables, and makes the model. Returns 0, -ENOMEM,
 * or 1 when the head cannot settle it (*why says why). */
static int stream_head(run_state *rs, const hog_block *head, uint32_t n, uint32_t rpb, uint64_t bound, char *why,
                       size_t why_len)
{
    const hog_train_params *p = rs->p;
    uint64_t rows = 0, nnz = 0, top = 0;
    int want_classes = !hog_loss_is_regression(p->loss);
    if (want_classes && !(rs->classes_of = hog_malloc(MAX_CLASSES * sizeof(double))))
        return -ENOMEM;
    for (uint32_t b = 0; b < n; b++) {
        const hog_block *blk = &head[b];
        rows += blk->rows;
        nnz += blk->nnz;
        for (uint32_t r = 0; r < blk->rows; r++) {
            double y = blk->label[r];
            if (want_classes && ((p->loss == HOG_LOSS_SOFTMAX && y != floor(y)) ||
                                 hog_class_insert(rs->classes_of, &rs->classes, y) < 0)) {
                snprintf(why, why_len, "the labels do not fit the loss");
                return 1;
            }
            if (blk->ptr[r + 1] > blk->ptr[r])
                top = HOG_MAX(top, (uint64_t)blk->index[blk->ptr[r + 1] - 1] + 1);
        }
    }
    char detail[160];
    /* A field-aware model's fields: the head's, which every later row must
     * keep to (a row with another starts a streamed run over on the whole
     * data, and stops a run in one pass, naming its line). */
    uint32_t fields = 0;
    for (uint32_t b = 0; p->field_aware && b < n; b++)
        for (uint32_t k = 0; head[b].field && k < head[b].nnz; k++)
            fields = HOG_MAX(fields, (uint32_t)head[b].field[k] + 1);
    if (hog_run_fields(rs, fields, detail, sizeof(detail)) < 0) {
        snprintf(why, why_len, "%s", fields ? "too many fields for its factors" : "its first rows have no fields");
        return 1;
    }
    /* A warm start: the model's classes (the head's labels among them) and
     * at least its features; its weights once the model is made. */
    if (rs->init && hog_warm_classes(rs, detail, sizeof(detail)) < 0) {
        snprintf(why, why_len, "%s", detail);
        return 1;
    }
    if (hog_run_outputs(rs, detail, sizeof(detail)) < 0) {
        snprintf(why, why_len, "its first %llu rows have %u label values", (unsigned long long)rows, rs->classes);
        return 1;
    }
    const char *forced;
    if (hog_run_kernel(rs, rows, top, nnz, &forced, detail, sizeof(detail)) < 0 || rs->kernel == HOG_KERNEL_DENSE) {
        snprintf(why, why_len, "dense data (the dense kernel)");
        return 1;
    }
    hog_run_log_kernel(rs, forced, rows, top, nnz);
    rs->dim = hog_warm_dim(rs, HOG_MAX(top, 1));
    /* Crosses in one pass: their features start where the text's hashed
     * ones end, which its plan knows before its rows (bound). */
    const int crossing = p->interactions && *p->interactions;
    if (crossing) {
        uint32_t fielded = 0;
        for (uint32_t b = 0; b < n; b++)
            fielded |= head[b].field != NULL;
        if (!bound || top > bound) {
            snprintf(why, why_len, "feature crosses follow the data's features, which text that is not hashed "
                     "settles only at its end (hash it: hog_read_params.hash_bits)");
            return 1;
        }
        if (hog_run_cross(rs, bound, fielded, detail, sizeof(detail)) < 0) {
            snprintf(why, why_len, "%s", detail);
            return 1;
        }
        for (uint32_t b = 0; b < n; b++)
            for (uint32_t r = 0; r < head[b].rows; r++)
                rs->longest = HOG_MAX(rs->longest, head[b].ptr[r + 1] - head[b].ptr[r]);
    }
    if (!(rs->deg = hog_calloc(rs->dim, sizeof(uint32_t))))
        return -ENOMEM;
    int rc = hog_run_alloc(rs, NULL, 0);
    if (rc < 0)
        return rc;
    rs->m->cross = rs->cross; /* the rows are crossed from the first window on */
    if (rs->init)
        hog_warm_weights(rs);
    /* The head's degrees, as every later window's are counted (its labels
     * are the classes, and deg has room for its indices). */
    window_count c = {.p = rs->p, .classes = rs->classes_of, .nclasses = rs->classes, .blks = head, .n = n,
                      .row0 = 0, .rpb = rpb, .deg = rs->deg, .deg_cap = rs->dim, .fields = rs->fields,
                      .cross = rs->cross.n ? &rs->cross : NULL};
    hog_window_count(&c);
    rs->deg_rows = c.deg_rows;
    return hog_run_tables(rs);
}

/* Trains one window: a pass of the workers over its blocks' segments,
 * read through src, a source over win (the window's blocks are set here).
 * Returns 0, 1 when the run was interrupted before all were done, or the
 * source's error. */
static int stream_pass(run_state *rs, hog_block_source *src, hog_dataset *win, const hog_block *blks, uint32_t n,
                       uint64_t row0, uint32_t rpb, double frac0, double frac1, uint32_t *segments,
                       uint32_t window_index, double t_start, int one_pass, char *err, size_t err_len)
{
    uint32_t spb = segments_per_block(rpb), nsegments = 0;
    for (uint32_t b = 0; b < n; b++)
        for (uint32_t s = 0; s * SEGMENT_ROWS < blks[b].rows; s++)
            segments[nsegments++] = b * spb + s;
    win->blocks = (hog_block *)blks;
    win->info.blocks = n;
    epoch_job job = hog_epoch_job(rs, 0);
    job.ds = win;
    job.src = src;
    job.segments = segments;
    job.nsegments = job.stop_at = nsegments;
    job.per_block = spb;
    job.row0 = row0;
    job.frac0 = frac0;
    job.frac1 = frac1;
    job.window = 1;
    /* A run in one pass learns every row read, interrupted or not: the
     * interrupt ends its read instead (stream_epoch). */
    if (one_pass)
        job.interrupted = NULL;
    /* A segment's rows are shuffled by (seed, epoch, its number in the
     * window): numbers repeat across windows, so the window's index goes
     * into the order of the segments, and the rows differ by block. */
    hog_rng rng = {hog_mix64(rs->p->seed ^ 0x57ea0000ull) + window_index};
    hog_shuffle_u32(segments, nsegments, &rng);
    rs->st.step = hog_segment_step(&job, 0);
    /* The run's first window begins without private copies (train_hot.c):
     * a pass up to where they begin, then one over the rest. */
    const feature_tables tab = job.tab;
    const uint32_t warm_end = hog_hot_warm_end(&job, window_index == 0);
    for (uint32_t from = 0;;) {
        hog_hot_pass(&job, &tab, from, warm_end);
        atomic_store_explicit(&job.next, from, memory_order_relaxed);
        job.paused_at = UINT32_MAX;
        int rc = hog_block_source_pass(src, HOG_PASS_EPOCH, NULL, 0);
        if (rc < 0)
            return hog_fail(rc, err, err_len, "starting the reads of the window: %s", hog_strerror(rc));
        job.t0 = hog_now();
        job.done_seconds = job.t0 - t_start;
        hog_epoch_pass(rs, &job);
        if ((rc = hog_block_source_end(src, err, err_len)) < 0)
            return rc;
        if (hog_hot_pass_to_copies(&job)) {
            from = job.stop_at;
            continue;
        }
        return job.paused_at < job.nsegments;
    }
}

/* Progressive validation of a one-pass run, Vowpal Wabbit's way: after the
 * window in which the rows trained pass a power of two, and after the
 * last, the metrics of every row so far and of the rows since the last
 * report, each row scored before its step, go to the progress callback.
 * The workers' sums are read between windows, when no worker runs. */
typedef struct stream_prog {
    hog_eval_sums now, then, diff; /* every row so far; at the last report; between them */
    uint64_t next;                 /* the rows of the next report: a power of two */
    int on;
} stream_prog;

static int stream_prog_init(stream_prog *sp, const run_state *rs)
{
    memset(sp, 0, sizeof(*sp));
    sp->next = 1;
    sp->on = rs->prog_on && rs->p->epochs == 1 && rs->p->progress;
    if (sp->on && (hog_eval_sums_init(&sp->now, rs->m) < 0 || hog_eval_sums_init(&sp->then, rs->m) < 0 ||
                   hog_eval_sums_init(&sp->diff, rs->m) < 0))
        return -ENOMEM;
    return 0;
}

static void stream_prog_free(stream_prog *sp)
{
    hog_eval_sums_free(&sp->now);
    hog_eval_sums_free(&sp->then);
    hog_eval_sums_free(&sp->diff);
}

/* Copies the sums of from into to, whose histogram (if any) is its own. */
static void prog_copy(hog_eval_sums *to, const hog_eval_sums *from)
{
    uint64_t *hist = to->hist;
    *to = *from;
    to->hist = hist;
    if (hist)
        memcpy(hist, from->hist, 2 * HOG_AUC_BINS * sizeof(uint64_t));
}

static void stream_prog_report(stream_prog *sp, run_state *rs, double seconds, double progress, int last)
{
    if (!sp->on)
        return;
    uint64_t rows = 0;
    for (unsigned i = 0; i < rs->nth; i++)
        rows += rs->ws[i].prog.rows;
    if (rows == sp->then.rows || (rows < sp->next && !last))
        return;
    prog_copy(&sp->now, &rs->ws[0].prog);
    for (unsigned i = 1; i < rs->nth; i++)
        hog_eval_sums_merge(&sp->now, &rs->ws[i].prog);
    hog_eval_sums *d = &sp->diff;
    const hog_eval_sums *a = &sp->now, *b = &sp->then;
    d->rows = a->rows - b->rows;
    d->wsum = a->wsum - b->wsum;
    d->correct = a->correct - b->correct;
    d->known = a->known - b->known;
    d->loss = a->loss - b->loss;
    d->sq = a->sq - b->sq;
    for (uint32_t k = 0; d->hist && k < 2 * HOG_AUC_BINS; k++)
        d->hist[k] = a->hist[k] - b->hist[k];
    hog_epoch_stats st = rs->st;
    st.examples = rows;
    st.seconds = seconds;
    st.progress = progress;
    hog_eval_metrics(rs->m, &sp->now, &st.progressive);
    hog_eval_metrics(rs->m, d, &st.progressive_recent);
    rs->p->progress(rs->p->progress_ctx, &st, 0);
    prog_copy(&sp->then, &sp->now);
    while (sp->next <= rows)
        sp->next *= 2;
}

/* The error of a one-pass run whose counting thread found a label (or a
 * field) the head did not have (c, over the window blks, the blocks handed out from
 * number first, whose first row is row0). */
static int one_pass_label(const run_state *rs, hog_feed *feed, const char *path, const window_count *c,
                          uint64_t first, uint64_t row0, char *err, size_t err_len)
{
    uint64_t extra;
    const uint64_t line = hog_feed_block_line(feed, first + c->bad_block, &extra) + c->bad_row;
    const uint64_t row = row0 + (uint64_t)c->bad_block * c->rpb + c->bad_row + 1;
    char where[80], had[96] = "";
    if (extra == 0)
        snprintf(where, sizeof(where), "%llu", (unsigned long long)line);
    else /* the blank, comment or skipped lines of its piece of text may lie before it */
        snprintf(where, sizeof(where), " row %llu (on line %llu to %llu)", (unsigned long long)row,
                 (unsigned long long)line, (unsigned long long)(line + extra));
    if (c->bad_field >= 0)
        return hog_fail(HOG_EFORMAT, err, err_len, "%s:%s: field %d is not one of the %u fields the first rows had: a "
                        "field-aware run in one pass settles its fields on its first blocks, and keeps no row to "
                        "start over with. Put a row with every field among the first rows, or read the text whole "
                        "first (hog_train_params.stream 0, or more than one epoch)", path, where, c->bad_field,
                        rs->fields);
    for (uint32_t k = 0, n = 0; k < rs->classes && n + 24 < sizeof(had); k++)
        n += (unsigned)snprintf(had + n, sizeof(had) - n, "%s%g", k ? ", " : "", rs->classes_of[k]);
    return hog_fail(HOG_ELABEL, err, err_len, "%s:%s: label %g is not one of the %u label values the first rows "
                    "had (%s): a run in one pass settles its classes on its first blocks, and keeps no row to "
                    "start over with. Put a row of every class among the first rows, or read the text whole "
                    "first (hog_train_params.stream 0, or more than one epoch)", path, where,
                    (double)c->bad_label, rs->classes, had);
}

/* A run in one pass on a quiet stream: how often it looks for a snapshot
 * asked for while no block comes, and how long the stream must have been
 * quiet before the window it holds trains without the next one. A stream
 * that keeps coming never waits that long between blocks (a block is a few
 * milliseconds of parsing, even under a sanitizer), so its windows, and a
 * one-thread run's bits, are a file's. */
#define STREAM_LOOK 0.1
#define STREAM_QUIET 1.0

/* Takes the next window's blocks into nxt (*nnxt of window so far). A run
 * that keeps its data set waits for each; a run in one pass stops early
 * once the stream has been quiet for STREAM_QUIET while it holds blocks to
 * train (ncur), and takes a snapshot asked for while it waits, the workers
 * being idle. Returns 1 (the read goes on), 0 (the feed is done) or the
 * feed's error. */
static int gather(run_state *rs, hog_feed *feed, hog_block *nxt, uint32_t *nnxt, uint32_t window, uint32_t ncur,
                  int one_pass, double *pos, char *err, size_t err_len)
{
    double quiet = 0;
    while (*nnxt < window) {
        int got = hog_feed_next_within(feed, &nxt[*nnxt], pos, one_pass ? STREAM_LOOK : -1, err, err_len);
        if (got == 1) {
            (*nnxt)++;
            quiet = 0;
            continue;
        }
        if (got != -EAGAIN)
            return got;
        hog_run_snapshot(rs);
        quiet += STREAM_LOOK;
        if (quiet >= STREAM_QUIET && (ncur > 0 || *nnxt > 0))
            return 1;
    }
    return 1;
}

/* Trains the first epoch on the feed's blocks as they come, the head (n
 * blocks in held, which has room for two windows) first: each window is
 * one pass of the workers while a counting thread takes the next.
 * Returns 0 (rs->deg holds every training row's degrees, rs->seconds the
 * epoch's time), 1 when a label the head lacked showed (why says which),
 * or a negative error. *held_n: the blocks still held, to give back. */
static int stream_epoch(run_state *rs, hog_feed *feed, const char *path, int one_pass, hog_block *held, uint32_t n,
                        double pos, uint32_t window, uint32_t rpb, uint32_t *segments, uint32_t *held_n, double *l2,
                        char *why, size_t why_len, char *err, size_t err_len)
{
    int rc = 0;
    stream_prog sp;
    if (stream_prog_init(&sp, rs) < 0) {
        stream_prog_free(&sp);
        *held_n = n;
        return hog_fail(-ENOMEM, err, err_len, "out of memory");
    }
    uint64_t taken = n; /* blocks handed out by the feed */
    rs->st.epoch = 1;
    rs->prog_whole = rs->p->epochs == 1; /* the last epoch, from its first row */
    /* The windows' blocks, just parsed, are read through a source as every
     * pass's are (in core: they are sound as built); room for the head. */
    hog_dataset win;
    memset(&win, 0, sizeof(win));
    win.info.blocks = 2 * window;
    win.info.rows_per_block = rpb;
    win.fd = -1;
    hog_source_params spar = hog_source_params_default();
    spar.readers = rs->nth;
    hog_block_source *src;
    if ((rc = hog_block_source_open(&win, &spar, &src)) < 0) {
        stream_prog_free(&sp);
        *held_n = n;
        return hog_fail(rc, err, err_len, "out of memory");
    }
    const double t_start = hog_now();
    /* The window being trained (cur) and the next (nxt), counted meanwhile. */
    window_count sc = {.p = rs->p, .classes = rs->classes_of, .nclasses = rs->classes, .rpb = rpb, .deg = rs->deg,
                       .deg_cap = rs->dim, .deg_rows = rs->deg_rows, .fields = rs->fields,
                       .cross = rs->cross.n ? &rs->cross : NULL, .longest = rs->longest};
    rs->deg = NULL;
    stream_scales(rs, &sc);
    stream_l2(rs, l2, sc.deg_rows, pos);
    hog_block *cur = held, *nxt = held + window;
    uint32_t ncur = n, nnxt = 0;
    uint64_t row0 = 0, scaled = sc.deg_rows;
    double frac0 = 0, pos_cur = pos;
    int ended = 0; /* the feed has handed out its last block */
    for (uint32_t w = 0; (ncur > 0 || !ended) && rc == 0; w++) {
        double pos_nxt = pos_cur;
        rc = gather(rs, feed, nxt, &nnxt, window, ncur, one_pass, &pos_nxt, err, err_len);
        if (rc < 0)
            break;
        ended = rc == 0;
        taken += nnxt;
        const int last = ended && nnxt == 0;
        rc = 0;
        uint64_t row_nxt = row0;
        for (uint32_t b = 0; b < ncur; b++)
            row_nxt += cur[b].rows;
        pthread_t counter;
        int counting = 0;
        sc.rc = 0;
        if (nnxt) {
            sc.blks = nxt;
            sc.n = nnxt;
            sc.row0 = row_nxt;
            counting = pthread_create(&counter, NULL, hog_window_count, &sc) == 0;
            if (!counting) /* no thread to spare: count first */
                hog_window_count(&sc);
        }
        int paused = !one_pass && atomic_load_explicit(rs->ck.timer.interrupted, memory_order_relaxed) ? 1
                     : ncur == 0 ? 0 /* a quiet stream's first block since the last window */
                                 : stream_pass(rs, src, &win, cur, ncur, row0, rpb, frac0, pos_cur, segments, w,
                                               t_start, one_pass, err, err_len);
        if (counting)
            pthread_join(counter, NULL);
        if (paused < 0) {
            rc = paused;
            break;
        }
        if (!paused)
            stream_prog_report(&sp, rs, hog_now() - t_start, pos_cur, last);
        if (!paused && one_pass && !last)
            hog_run_snapshot(rs);
        if (paused) { /* no checkpoint: a streamed run takes none */
            atomic_store_explicit(rs->ck.timer.interrupted, 0, memory_order_relaxed);
            rc = hog_fail(HOG_EINTERRUPTED, err, err_len, "interrupted in epoch 1 of %u, while the training text "
                          "was read: nothing was saved", rs->p->epochs);
            break;
        }
        for (uint32_t b = 0; b < ncur; b++)
            hog_feed_release(feed);
        hog_block *tmp = cur;
        cur = nxt;
        nxt = tmp;
        ncur = nnxt;
        nnxt = 0;
        row0 = row_nxt;
        frac0 = pos_cur;
        pos_cur = pos_nxt;
        if (sc.rc == 1 && one_pass) {
            rc = one_pass_label(rs, feed, path, &sc, taken - ncur, row0, err, err_len);
        } else if (sc.rc != 0) {
            rc = sc.rc < 0 ? hog_fail(sc.rc, err, err_len, "out of memory") : 1;
            if (rc == 1)
                snprintf(why, why_len, "%s", sc.why);
        } else if (rs->cross.n && (sc.top > rs->cross.base || sc.longest > rs->longest)) {
            /* The crosses start at the plan's bound, which no index passes;
             * a longer row needs more room to be crossed. */
            rc = sc.top > rs->cross.base ? hog_fail(HOG_ECORRUPT, err, err_len, "%s: feature %llu is past the %llu "
                                                    "the text's hashing makes", path,
                                                    (unsigned long long)sc.top - 1, (unsigned long long)rs->cross.base)
                                         : hog_run_cross_room(rs, sc.longest, err, err_len);
            if (rc == -ENOMEM)
                hog_fail(rc, err, err_len, "out of memory");
        } else if (sc.top > rs->dim) { /* features the model has no room for yet */
            uint64_t old = rs->dim;
            if ((rc = run_grow(rs, HOG_MAX(sc.top, 2 * rs->dim))) < 0)
                hog_fail(rc, err, err_len, "out of memory");
            for (uint64_t j = old; rc == 0 && j < rs->dim; j++)
                rs->tab.l2_scale[j] = (float)sc.deg_rows;
            if (rc == 0)
                hog_run_pack_l2(rs, old, rs->dim);
        }
        if (rc == 0 && sc.deg_rows >= 2 * scaled) {
            stream_scales(rs, &sc);
            stream_l2(rs, l2, sc.deg_rows, pos_cur);
            scaled = sc.deg_rows;
        }
    }
    hog_block_source_close(src);
    stream_prog_free(&sp);
    rs->seconds = hog_now() - t_start;
    /* The degrees are the run's again, with room for every feature. */
    rs->deg = sc.deg;
    rs->deg_rows = sc.deg_rows;
    *held_n = ncur + nnxt;
    if (rc == 0 && sc.deg_cap < rs->dim) {
        uint32_t *d = hog_realloc(rs->deg, rs->dim * sizeof(uint32_t));
        if (!d)
            return hog_fail(-ENOMEM, err, err_len, "out of memory");
        memset(d + sc.deg_cap, 0, (rs->dim - sc.deg_cap) * sizeof(uint32_t));
        rs->deg = d;
    }
    return rc;
}

/* ===================================================================== *
 *  Training on a file
 * ===================================================================== */
/* Trains on in's feed: the first epoch on its blocks as they come, the
 * rest on the data set it builds meanwhile (*ds). *test: the test set,
 * opened once the head shows the text's index base. Returns 0 (the model
 * in *out), 1 when the text must be read whole first (fr->note says why;
 * every block handed out is back), or a negative error. */
static int stream_file(hog_trainer *t, const char *path, const hog_input *in, int one_pass, uint32_t window,
                       const char *test_path, double t0, hog_dataset **test, hog_dataset **ds, hog_model **out,
                       hog_file_run *fr, char *err, size_t err_len)
{
    const uint32_t rpb = in->read.rows_per_block;
    hog_feed *feed = in->feed;
    run_state rs;
    hog_run_init(&rs, t);
    const double l2 = t->p.l2; /* l2_rows: the run's l2 for this data; the trainer's own is put back */
    hog_block *held = hog_malloc(2 * window * sizeof(hog_block));
    uint32_t *segments = hog_malloc((size_t)window * segments_per_block(rpb) * sizeof(uint32_t));
    uint32_t n = 0;
    double pos = 0;
    int rc = 0;
    if (!held || !segments) {
        rc = hog_fail(-ENOMEM, err, err_len, "out of memory");
        goto out;
    }
    while (n < STREAM_HEAD && (rc = hog_feed_next(feed, &held[n], &pos, err, err_len)) == 1)
        n++;
    if (rc < 0)
        goto out;
    /* The test set now, read as the training text is, so that a bad one
     * fails the run before the first epoch, not after it. */
    if (n && (rc = hog_input_open_test(test_path, &in->read, hog_feed_index_base(feed), test, err, err_len)) < 0)
        goto out;
    /* Class names: the model takes them, and the test set's map to them,
     * from the whole data set. */
    if (n && hog_feed_label_names(feed)) {
        snprintf(fr->note, sizeof(fr->note), "the labels are class names");
        rc = 1;
    } else {
        rc = n ? stream_head(&rs, held, n, rpb, hog_feed_index_bound(feed), fr->note, sizeof(fr->note)) : 1;
    }
    if (rc == 1 && one_pass && n && in->unsized) /* no block is kept to read whole, and a pipe is read once */
        rc = hog_fail(HOG_EPARAM, err, err_len, "%s: %s: a run in one pass settles what it trains on its first "
                      "%u blocks, and keeps no row to read whole. Read the text whole first "
                      "(hog_train_params.stream 0, or more than one epoch)%s", path, fr->note, n,
                      rs.kernel == HOG_KERNEL_DENSE ? ", or set hog_train_params.kernel sparse" : "");
    if (rc == 1)
        hog_log(HOG_LOG_INFO, "reading %s whole before training: %s", path, fr->note);
    if (rc != 0)
        goto out;

    if (one_pass)
        hog_log(HOG_LOG_INFO, "training on %s in one pass: each row once as it is read, in file order shuffled "
                "within windows of %u blocks, scored before its step; at most %u blocks held", path, window,
                3 * window);
    else
        hog_log(HOG_LOG_INFO, "training while reading %s: the first epoch takes its rows in file order, in windows "
                "of %u blocks", path, window);
    atomic_store(&t->training, 1);
    rc = stream_epoch(&rs, feed, path, one_pass, held, n, pos, window, rpb, segments, &n, &t->p.l2, fr->note,
                      sizeof(fr->note), err, err_len);
    if (rc == 1) {
        hog_log(HOG_LOG_INFO, "%s: %s: training again from the start on the whole file", path, fr->note);
        snprintf(fr->note + strlen(fr->note), sizeof(fr->note) - strlen(fr->note), "; started over");
    }
    if (rc != 0)
        goto out;
    /* Interrupted, a run in one pass ended its read (the stop fd) and
     * learned every row read: its model is the answer, not an error. */
    if (one_pass && atomic_exchange_explicit(&t->interrupted, 0, memory_order_relaxed)) {
        uint64_t rows = 0;
        for (unsigned i = 0; i < rs.nth; i++)
            rows += rs.ws[i].examples;
        t->stopped = 1;
        hog_log(HOG_LOG_INFO, "%s: interrupted: the read stopped after %llu rows, each learned once; the model is "
                "theirs", path, (unsigned long long)rows);
    }
    stream_l2(&rs, &t->p.l2, rs.deg_rows, 1); /* every training row counted: the model keeps it */
    fr->streamed = 1;
    rc = hog_feed_finish(feed, ds, err, err_len);
    if (rc < 0)
        goto out;
    fr->read_seconds = hog_now() - t0;
    /* The whole data set: its size, and the tables from every row's degrees. */
    uint64_t dim = rs.cross.n ? rs.dim : hog_warm_dim(&rs, HOG_MAX((*ds)->info.features, 1));
    if (one_pass) { /* no epoch is left: the model is made from the rows counted */
        if ((rc = run_grow(&rs, dim)) == 0)
            run_settle_dim(&rs, dim);
        if (rc == 0)
            rc = hog_run_alloc_final(&rs);
        if (rc == 0) {
            hog_run_model_info(&rs, *ds);
            rc = hog_epochs_run(&rs, *ds, *test, 1, out, err, err_len);
        }
    } else if ((rc = run_grow(&rs, dim)) == 0) {
        run_settle_dim(&rs, dim);
        /* The later epochs read the data set the feed built through a
         * source, out of core when it is larger than the limit. */
        hog_source_params sp = hog_source_params_default();
        sp.readers = rs.nth;
        sp.limit = sp.resident = rs.limit;
        if ((rc = hog_block_source_open(*ds, &sp, &rs.src)) == 0) {
            rs.ooc = hog_block_source_out_of_core(rs.src);
            rc = hog_run_tables(&rs);
        }
    }
    if (rc == 0 && !one_pass)
        rc = hog_run_alloc_final(&rs);
    if (rc == 0 && !one_pass)
        rc = hog_run_segments(&rs, *ds, err, err_len);
    if (rc == 0 && !one_pass)
        rc = hog_run_renumber(&rs, *ds, 1, err, err_len);
    if (rc == 0 && !one_pass)
        rc = hog_epochs_run(&rs, *ds, *test, 1, out, err, err_len);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
out:
    atomic_store(&t->training, 0);
    t->p.l2 = l2;
    for (uint32_t b = 0; b < n; b++)
        hog_feed_release(feed);
    hog_run_free(&rs);
    hog_free(held);
    hog_free(segments);
    return rc;
}

static int file_run(hog_trainer *t, const char *path, const hog_read_params *rp, const char *cache_path,
                    const char *test_path, hog_model **out, hog_file_run *run, char *err, size_t err_len);

/* Says that the snapshots set are not taken, and why. */
static void no_snapshots(const char *path, const char *why)
{
    hog_log(HOG_LOG_WARN, "%s: no snapshots are taken: they are a run in one pass's (one epoch over text), and this "
            "run keeps its data set (%s)", path, why);
}

int hog_trainer_run_file(hog_trainer *t, const char *path, const hog_read_params *rp, const char *cache_path,
                         const char *test_path, hog_model **out, hog_file_run *run, char *err, size_t err_len)
{
    *out = NULL;
    hog_file_run fr;
    memset(&fr, 0, sizeof(fr));
    *run = fr;
    t->stopped = 0;
    hog_trainer_stop_settle(t);
    int rc = file_run(t, path, rp, cache_path, test_path, out, &fr, err, err_len);
    t->data_hash_bits = 0; /* hog_trainer_run's data sets are not text */
    hog_trainer_stop_settle(t);
    if (rc == 0)
        *run = fr;
    return rc;
}

/* hog_trainer_run_file's work, into *fr. */
static int file_run(hog_trainer *t, const char *path, const hog_read_params *rp, const char *cache_path,
                    const char *test_path, hog_model **out, hog_file_run *run, char *err, size_t err_len)
{
    const hog_train_params *p = &t->p;
    hog_file_run fr;
    memset(&fr, 0, sizeof(fr));
    if (p->early_stop && !test_path && p->holdout <= 0)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "hog_train_params.early_stop needs a test set or hog_train_params.holdout to measure "
                        "improvement on");
    const double t0 = hog_now();
    /* The feed may hold a window being trained, the next being counted and
     * one being parsed. */
    const uint32_t window = stream_window(hog_pool_threads(t->pool));
    _Static_assert(STREAM_HEAD <= 4, "the head is a window: stream_window is at least 4");
    /* A checkpoint to resume from is read and checked before the data. */
    checkpoint ck, *resume;
    int rc = hog_run_checkpoint_open(t, &ck, &resume, err, err_len);
    if (rc < 0) {
        hog_checkpoint_free(&ck);
        return rc;
    }
    /* One epoch over text is trained in one pass: no block is kept (see
     * one_pass_refusal). */
    const char *refusal = stream_refusal(t), *kept = refusal ? refusal : one_pass_refusal(t, path, cache_path);
    /* Crosses stream in one pass only: a run that keeps its data set
     * counts them on the whole of it. */
    if (!refusal && kept && t->p.interactions && *t->p.interactions)
        refusal = kept = "feature crosses (they follow the data's features, counted on the whole data)";
    const int one_pass = !kept, snaps = t->snap_rows || t->snap_every > 0;
    if (snaps && !one_pass)
        no_snapshots(path, kept);
    hog_input in;
    hog_read_params within;
    const hog_read_params *read = hog_trainer_read_params(t, rp, &within);
    const uint64_t read_limit = within.mem_limit;
    /* A warm start hashes text as its initial model's was hashed. */
    const unsigned init_bits = t->init ? t->init->data_hash_bits : 0;
    if (init_bits && within.hash_bits && within.hash_bits != init_bits) {
        hog_checkpoint_free(&ck);
        return hog_fail(HOG_EPARAM, err, err_len, "hog_read_params.hash_bits is %u: the initial model was trained on "
                        "text hashed into 2^%u features, and %s hashed otherwise would start from weights of other "
                        "features; leave it 0 to follow the model", within.hash_bits, init_bits, path);
    }
    if (init_bits && !within.hash_bits)
        within.hash_bits = init_bits;
    /* One pass holds no data set: the read-ahead is all its data, and a
     * quarter of ONE_PASS_READ (the pipeline's share) parses at full speed. */
    if (one_pass && (!within.mem_limit || within.mem_limit > ONE_PASS_READ))
        within.mem_limit = ONE_PASS_READ;
    rc = one_pass ? hog_input_open_pass(path, read, 3 * window, t->stop_fd, &in, err, err_len)
                  : hog_input_open(path, read, cache_path, 3 * window, &in, err, err_len);
    if (rc < 0) {
        hog_checkpoint_free(&ck);
        return rc;
    }
    hog_dataset *ds = in.ds, *test = NULL;
    fr.cache_used = in.cache_used;
    /* The model keeps the text's hashing, which predict then follows (a
     * binary data set carries its own: hog_run_model_info takes it). */
    t->data_hash_bits = in.text ? in.read.hash_bits : 0;
    rc = 1; /* 1: train on the whole data set */
    if (in.feed) {
        /* The first epoch's steps follow its position in the file, which a
         * pipe's unknown length leaves unknown: its text is read whole
         * first (into memory or the cache, as a streamed run would keep it
         * anyway). */
        if (refusal || (!one_pass && in.unsized)) {
            if (refusal)
                snprintf(fr.note, sizeof(fr.note), "%s", refusal);
            else
                snprintf(fr.note, sizeof(fr.note), "%s, and the data set is kept for %s", in.unsized, kept);
            if (p->stream)
                hog_log(HOG_LOG_INFO, "reading %s whole before training: %s", path, fr.note);
        } else {
            if (!one_pass)
                hog_log(HOG_LOG_DEBUG, "%s: the data set is kept for %s", path, kept);
            rc = stream_file(t, path, &in, one_pass, window, test_path, t0, &test, &ds, out, &fr, err, err_len);
        }
        if (rc == 1 && one_pass && !in.unsized) {
            /* The first blocks of a file settled nothing (dense data, class
             * names, one label value), and no row was trained: it is read
             * again, whole, as a run that keeps its data set reads it. */
            hog_feed_free(in.feed);
            in.feed = NULL;
            within.mem_limit = read_limit;
            hog_dataset_close(test);
            test = NULL;
            if ((rc = hog_input_open(path, read, cache_path, 3 * window, &in, err, err_len)) == 0)
                rc = 1;
            ds = in.ds;
        }
        if (rc == 1 && in.feed) { /* the feed only builds the data set */
            hog_feed_drain(in.feed);
            if ((rc = hog_feed_finish(in.feed, &ds, err, err_len)) == 0)
                rc = 1;
        }
    }
    if (snaps && one_pass && rc == 1)
        no_snapshots(path, fr.note[0] ? fr.note : "a binary data set");
    if (rc == 1) {
        fr.read_seconds = hog_now() - t0;
        rc = test ? 0 : hog_input_open_test(test_path, &in.read, ds->info.index_base, &test, err, err_len);
        if (rc == 0)
            rc = hog_run_dataset(t, ds, test, resume, out, err, err_len);
    }
    hog_checkpoint_free(&ck);
    hog_feed_free(in.feed);
    if (rc < 0) {
        hog_model_free(*out);
        *out = NULL;
        hog_dataset_close(test);
        hog_dataset_close(ds);
        return rc;
    }
    fr.train = ds;
    fr.test = test;
    *run = fr;
    return 0;
}
