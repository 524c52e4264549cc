/* etl_feed.c: a text file read on a thread of its own into a data set, each block handed to the trainer as it is built. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "etl.h"

/*
 * One reader thread (which runs the whole text pipeline, parsers included)
 * and one consumer share a ring of `depth` slots under one mutex:
 *
 *   pushed     blocks put in the ring by the reader's block callback
 *   taken      blocks handed to the consumer (hog_feed_next)
 *   released   blocks given back (hog_feed_release), in order
 *
 * released <= taken <= pushed <= released + depth. The callback waits for
 * a free slot, so a consumer slower than the parsers holds the read back
 * and memory stays at depth blocks. A block an in-memory builder keeps is
 * handed out as it is; a block written to the cache stays in the arrays the
 * builder filled, which the slot takes in exchange for its own (no copy).
 * Blocks are a few MiB, so one lock per block costs nothing measurable.
 * A feed for one pass (hog_feed_start_pass) has a builder that keeps no
 * block: every block is a trade of arrays, so memory is the ring's depth
 * blocks whatever the length of the text, and the data set it finishes
 * holds only the counts.
 *
 * A one-pass feed may be given a stop fd (hog_feed_start_pass): its
 * builder hands it to the pipeline's reader, so a read stopped from
 * outside (a signal) ends as the input's end would, the blocks built
 * before it handed out and no error.
 */

typedef struct feed_slot {
    hog_block blk;
    double position;
    uint64_t line, line_extra; /* its first row's line (hog_builder_block_line) */
    hog_block_buffers bufs; /* arrays traded with the builder for the blocks it writes */
} feed_slot;

struct hog_feed {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    pthread_t thread;
    int started;

    char *path, *cache_path;
    hog_read_params p;
    hog_builder *b;
    hog_atomic_file file;
    int file_open;

    feed_slot *slots;
    unsigned depth;
    uint32_t rows_per_block;
    uint64_t pushed, taken, released;
    int pass;       /* one pass: the builder keeps no block, the data set is the counts alone */
    int drain;      /* blocks go to the data set only */
    int cancel;     /* the consumer gave up: the callback stops the read */
    int index_base; /* the builder's, as of the last block pushed */
    uint64_t index_bound; /* the builder's (hog_builder_index_bound), as of the last block pushed */
    int label_names; /* the builder has numbered class names, as of the last block pushed */
    int stopped;    /* the read was stopped by the stop fd: set with done */

    /* the reader's outcome, once done is set */
    int done, rc;
    char err[512];
    hog_dataset *ds;       /* in memory: the data set built */
    uint64_t skipped;
    char *report;
};

/* The builder's callback, on the reader thread. */
static int feed_block(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs)
{
    hog_feed *f = ctx;
    pthread_mutex_lock(&f->mu);
    while (!f->drain && !f->cancel && f->pushed - f->released >= f->depth)
        pthread_cond_wait(&f->changed, &f->mu);
    int cancel = f->cancel, drain = f->drain;
    feed_slot *s = &f->slots[f->pushed % f->depth];
    pthread_mutex_unlock(&f->mu);
    if (cancel)
        return -ECANCELED;
    if (drain)
        return 0;
    /* The slot is the reader's until pushed moves past it. */
    if (!kept) { /* keep the builder's arrays, which blk points into */
        int rc = hog_block_buffers_ready(&s->bufs, f->rows_per_block, blk->weight != NULL);
        if (rc < 0)
            return rc;
        hog_block_buffers mine = s->bufs;
        s->bufs = *bufs;
        *bufs = mine;
    }
    s->blk = *blk;
    s->position = position;
    s->line = hog_builder_block_line(f->b, &s->line_extra);
    int one_based = hog_builder_one_based(f->b); /* the builder is this thread's */
    uint64_t bound = hog_builder_index_bound(f->b);
    int named = hog_builder_names(f->b)->n > 0;
    pthread_mutex_lock(&f->mu);
    f->index_base = one_based;
    f->index_bound = bound;
    f->label_names = named;
    f->pushed++;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void *feed_main(void *arg)
{
    hog_feed *f = arg;
    hog_format fmt = HOG_FORMAT_AUTO;
    uint64_t skipped = 0;
    char *report = NULL;
    hog_dataset *ds = NULL;
    char err[sizeof(f->err)] = "";
    int rc = hog_text_read(f->path, &f->p, f->b, &fmt, &skipped, &report, err, sizeof(err));
    const int stopped = hog_builder_stopped(f->b); /* the builder is freed by its finish */
    if (rc == 0 && f->cache_path) {
        rc = hog_builder_finish_file(f->b, NULL);
        f->b = NULL;
        if (rc < 0)
            hog_fail(rc, err, sizeof(err), "%s: %s", f->cache_path, hog_strerror(rc));
    } else if (rc == 0) {
        rc = hog_builder_finish(f->b, fmt, &ds);
        if (rc == 0) /* else the consumer may still hold its blocks: hog_feed_free frees it */
            f->b = NULL;
        if (rc < 0)
            hog_fail(rc, err, sizeof(err), "%s: %s", f->path, hog_strerror(rc));
    }
    pthread_mutex_lock(&f->mu);
    f->done = 1;
    f->rc = rc;
    f->stopped = stopped;
    memcpy(f->err, err, sizeof(err));
    f->ds = ds;
    f->skipped = skipped;
    f->report = report;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* A copy of s (NULL stays NULL); *ok is cleared when it cannot be made. */
static char *dup_or_null(const char *s, int *ok)
{
    if (!s)
        return NULL;
    char *d = hog_malloc(strlen(s) + 1);
    if (!d) {
        *ok = 0;
        return NULL;
    }
    return strcpy(d, s);
}

static int feed_start(const char *path, const hog_read_params *p, const char *cache_path,
                      const hog_hgd_source *src, unsigned depth, int pass, int stop_fd, hog_feed **out, char *err,
                      size_t err_len)
{
    *out = NULL;
    hog_feed *f = hog_calloc(1, sizeof(*f));
    if (!f)
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->changed, NULL);
    /* The caller's strings need not outlive this call. */
    int ok = 1;
    f->p = *p;
    f->p.label_name = dup_or_null(p->label_name, &ok);
    f->p.ignore = dup_or_null(p->ignore, &ok);
    f->p.categorical = dup_or_null(p->categorical, &ok);
    f->path = dup_or_null(path, &ok);
    f->cache_path = dup_or_null(cache_path, &ok);
    f->pass = pass;
    f->depth = depth ? depth : 1;
    f->rows_per_block = p->rows_per_block ? p->rows_per_block : HOG_DEFAULT_ROWS_PER_BLOCK;
    f->slots = hog_calloc(f->depth, sizeof(feed_slot));
    if (!ok || !f->slots) {
        hog_feed_free(f);
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    }
    int rc = 0;
    if (cache_path) {
        rc = hog_atomic_open_file(&f->file, cache_path);
        if (rc < 0) {
            hog_feed_free(f);
            return hog_fail(rc, err, err_len, "%s: %s", cache_path, hog_strerror(rc));
        }
        f->file_open = 1;
    }
    rc = pass ? hog_builder_create_pass(p->rows_per_block, &f->b)
              : hog_builder_create(p->rows_per_block, cache_path ? &f->file : NULL, &f->b);
    if (rc == 0 && !cache_path && !pass)
        rc = hog_builder_spill_within(f->b, path, p);
    if (rc < 0) {
        hog_feed_free(f);
        return hog_fail(rc, err, err_len, "%s: out of memory", path);
    }
    hog_builder_set_source(f->b, src);
    hog_builder_set_stop(f->b, stop_fd);
    hog_builder_on_block(f->b, feed_block, f);
    rc = pthread_create(&f->thread, NULL, feed_main, f);
    if (rc != 0) {
        hog_feed_free(f);
        return hog_fail(-rc, err, err_len, "%s: cannot start the reading thread", path);
    }
    f->started = 1;
    *out = f;
    return 0;
}

int hog_feed_start(const char *path, const hog_read_params *p, const char *cache_path,
                   const hog_hgd_source *src, unsigned depth, hog_feed **out, char *err, size_t err_len)
{
    return feed_start(path, p, cache_path, src, depth, 0, -1, out, err, err_len);
}

int hog_feed_start_pass(const char *path, const hog_read_params *p, unsigned depth, int stop_fd, hog_feed **out,
                        char *err, size_t err_len)
{
    return feed_start(path, p, NULL, NULL, depth, 1, stop_fd, out, err, err_len);
}

int hog_feed_stopped(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    int stopped = f->done && f->stopped;
    pthread_mutex_unlock(&f->mu);
    return stopped;
}

int hog_feed_next(hog_feed *f, hog_block *blk, double *position, char *err, size_t err_len)
{
    return hog_feed_next_within(f, blk, position, -1, err, err_len);
}

int hog_feed_next_within(hog_feed *f, hog_block *blk, double *position, double seconds, char *err, size_t err_len)
{
    struct timespec until;
    if (seconds >= 0) { /* the condition variable's clock: CLOCK_REALTIME */
        clock_gettime(CLOCK_REALTIME, &until);
        const double ns = (double)until.tv_nsec + seconds * 1e9;
        until.tv_sec += (time_t)(ns / 1e9);
        until.tv_nsec = (long)fmod(ns, 1e9);
    }
    pthread_mutex_lock(&f->mu);
    while (!f->done && !f->drain && f->taken == f->pushed) {
        if (seconds < 0) {
            pthread_cond_wait(&f->changed, &f->mu);
        } else if (pthread_cond_timedwait(&f->changed, &f->mu, &until) == ETIMEDOUT) {
            if (!f->done && !f->drain && f->taken == f->pushed) {
                pthread_mutex_unlock(&f->mu);
                return -EAGAIN;
            }
        }
    }
    int rc;
    if (f->done && f->rc < 0) {
        rc = hog_fail(f->rc, err, err_len, "%s", f->err[0] ? f->err : hog_strerror(f->rc));
    } else if (f->taken < f->pushed) {
        const feed_slot *s = &f->slots[f->taken % f->depth];
        *blk = s->blk;
        *position = s->position;
        f->taken++;
        rc = 1;
    } else {
        rc = 0; /* done, or draining */
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

uint64_t hog_feed_block_line(hog_feed *f, uint64_t block, uint64_t *extra)
{
    pthread_mutex_lock(&f->mu);
    uint64_t line = 0;
    *extra = 0;
    if (block >= f->released && block < f->taken) {
        const feed_slot *s = &f->slots[block % f->depth];
        line = s->line;
        *extra = s->line_extra;
    }
    pthread_mutex_unlock(&f->mu);
    return line;
}

void hog_feed_release(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    if (f->released < f->taken)
        f->released++;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
}

int hog_feed_index_base(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    int base = f->index_base;
    pthread_mutex_unlock(&f->mu);
    return base;
}

uint64_t hog_feed_index_bound(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    uint64_t bound = f->index_bound;
    pthread_mutex_unlock(&f->mu);
    return bound;
}

int hog_feed_label_names(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    int named = f->label_names;
    pthread_mutex_unlock(&f->mu);
    return named;
}

void hog_feed_drain(hog_feed *f)
{
    pthread_mutex_lock(&f->mu);
    f->drain = 1;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
}

int hog_feed_finish(hog_feed *f, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    if (f->started) {
        pthread_join(f->thread, NULL);
        f->started = 0;
    }
    if (f->rc < 0)
        return hog_fail(f->rc, err, err_len, "%s", f->err[0] ? f->err : hog_strerror(f->rc));
    hog_dataset *ds = f->ds;
    if (f->cache_path) {
        int rc = hog_atomic_commit(&f->file);
        f->file_open = 0;
        if (rc < 0)
            return hog_fail(rc, err, err_len, "%s: %s", f->cache_path, hog_strerror(rc));
        rc = hog_hgd_open(f->cache_path, &ds, err, err_len);
        if (rc < 0)
            return rc;
    } else {
        /* A spilled data set holds the blocks built before the spill until
         * every block handed out is back. */
        if (f->released == f->taken)
            hog_dataset_drop_heap(ds);
        struct stat st;
        if (stat(f->path, &st) == 0)
            ds->info.file_bytes = (uint64_t)st.st_size;
    }
    f->ds = NULL;
    ds->info.skipped = f->skipped;
    ds->skip_report = f->report;
    f->report = NULL;
    *out = ds;
    return 0;
}

void hog_feed_free(hog_feed *f)
{
    if (!f)
        return;
    if (f->started) {
        pthread_mutex_lock(&f->mu);
        f->cancel = 1;
        pthread_cond_broadcast(&f->changed);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    hog_builder_free(f->b);
    if (f->file_open)
        hog_atomic_abort(&f->file);
    hog_dataset_close(f->ds);
    for (unsigned i = 0; f->slots && i < f->depth; i++)
        hog_block_buffers_free(&f->slots[i].bufs);
    hog_free(f->slots);
    hog_free(f->report);
    hog_free((void *)f->p.label_name);
    hog_free((void *)f->p.ignore);
    hog_free((void *)f->p.categorical);
    hog_free(f->path);
    hog_free(f->cache_path);
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->mu);
    hog_free(f);
}
