/* train_mf_stream.c: matrix factorisation in one pass over a stream of ratings, each learned once as it is read, the model grown as users and items first appear. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "train_mf.h"

/* A run of a batch's triples that one worker steps in turn: a segment of
 * the stream (HOG_MF_SEG ratings from a multiple of it), or the part of
 * one that this batch holds. */
typedef struct stream_piece {
    uint32_t first, n; /* the batch's triples [first, first + n) */
    float mean;        /* the mean its segment learns against */
} stream_piece;

typedef struct mf_stream {
    const hog_mf_params *p;
    hog_mf_control *c;     /* or NULL */
    const char *path;
    hog_ratings_read *rr;  /* how the text is read, and what was skipped */
    hog_pool *pool;
    unsigned nth;
    mf_worker *ws;
    hog_mf_model *m;
    uint32_t ucap, icap;   /* rows allocated in m (m->info.users and items are in use) */
    /* The stream so far */
    uint64_t n;            /* ratings learned */
    double sum;            /* of their ratings, added in the order they came */
    float seg_mean;        /* the mean of the segment under way */
    double lo, hi;
    uint64_t next_report;  /* ratings at the next progress call */
    double t0;
    /* The batch under way */
    const hog_mf_triple *t;
    stream_piece *pieces;
    uint32_t npieces, pieces_cap;
    /* Snapshots: on the count after a batch; on the timer or when asked
     * by the watcher too, so a quiet stream's reader waiting holds none
     * back. mu is held while a batch is learned or a snapshot made. */
    uint64_t snap_next;    /* ratings at the next one on the count (0: none) */
    double snap_due;       /* when the next one on the timer is due (0: none) */
    pthread_mutex_t mu;
    pthread_cond_t wake;   /* the run's end, for the watcher */
    int done;
    char *err;
    size_t err_len;
    _Alignas(HOG_CACHELINE) atomic_uint next; /* the next piece to claim */
} mf_stream;

/* Workers claim the batch's pieces in the order they came. */
static void piece_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    mf_stream *s = arg;
    mf_worker *w = &s->ws[ith];
    const float step = (float)s->p->step;
    for (;;) {
        uint32_t k = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
        if (k >= s->npieces)
            break;
        const stream_piece *pc = &s->pieces[k];
        /* Added to the worker's running sum rating by rating: one worker's
         * sum is the same however the stream was cut into batches. */
        w->se = hog_mf_steps(s->m, s->p, pc->mean, step, w, s->t + pc->first, NULL, pc->n, w->se);
        w->updates += pc->n;
    }
}

/* ===================================================================== *
 *  The model, grown
 * ===================================================================== */
/* Moves *arr (old rows of width floats, cache-line aligned) into an array
 * of cap rows. */
static int grow_rows(hog_weight **arr, uint32_t old, uint32_t cap, uint32_t width)
{
    hog_weight *a = hog_aligned_alloc(HOG_CACHELINE, (size_t)cap * width * sizeof(hog_weight));
    if (!a)
        return -ENOMEM;
    if (old)
        memcpy((void *)a, (const void *)*arr, (size_t)old * width * sizeof(hog_weight));
    hog_free((void *)*arr);
    *arr = a;
    return 0;
}

/* Room for users (items) rows on one side of the model: the factors,
 * bias and AdaGrad sum of each new row start as hog_mf_train's would,
 * from the row's own stream of the seed. */
static int grow_side(mf_stream *s, int items, uint32_t want)
{
    hog_mf_model *m = s->m;
    uint32_t *cap = items ? &s->icap : &s->ucap, have = items ? m->info.items : m->info.users;
    hog_weight **rows = items ? &m->q : &m->p, **bias = items ? &m->bi : &m->bu, **sums = items ? &m->gq : &m->gp;
    if (want > *cap) {
        uint32_t c = *cap ? *cap : 1024;
        while (c < want)
            c = c > UINT32_MAX / 2 ? UINT32_MAX : 2 * c;
        if (grow_rows(rows, have, c, m->stride) < 0 || grow_rows(bias, have, c, 1) < 0 ||
            (*sums && grow_rows(sums, have, c, 1) < 0))
            return -ENOMEM;
        *cap = c;
    }
    /* Zero padding: the steps run over whole rows and keep it zero. */
    memset((void *)(*rows + (size_t)have * m->stride), 0, (size_t)(want - have) * m->stride * sizeof(hog_weight));
    hog_mf_init_rows(m, items, have, want, s->p->seed, s->p->init);
    for (uint32_t r = have; r < want; r++) {
        hog_w_store(&(*bias)[r], 0.0f);
        if (*sums)
            hog_w_store(&(*sums)[r], 1.0f);
    }
    if (items)
        m->info.items = want;
    else
        m->info.users = want;
    return 0;
}

/* The names the batch brought, appended to the model's in the batch's
 * order, so the two maps keep the same ids. */
static int grow_names(hog_idmap *to, const hog_idmap *from)
{
    for (uint32_t k = to->n; k < from->n; k++) {
        uint32_t id;
        int rc = hog_idmap_intern(to, hog_idmap_name(from, k), from->off[k + 1] - from->off[k] - 1, &id);
        if (rc < 0 && rc != -ENOMEM)
            rc = HOG_EPARAM; /* the reader refuses more names first: a map cannot outgrow its source */
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ===================================================================== *
 *  Batches
 * ===================================================================== */
/* Cuts the batch's n triples into pieces at the stream's segment
 * boundaries, each with its segment's mean: the mean of the ratings
 * before it, or for the first segment its first rating. Only the stream's
 * position decides both, never where a batch ends. */
static int cut_pieces(mf_stream *s, const hog_mf_triple *t, uint32_t n)
{
    s->npieces = 0;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t g = s->n + i;
        if (g % HOG_MF_SEG == 0)
            s->seg_mean = g ? (float)(s->sum / (double)g) : t[i].rating;
        if (i == 0 || g % HOG_MF_SEG == 0) {
            if (s->npieces == s->pieces_cap) {
                void *pc = s->pieces;
                size_t cap = s->pieces_cap;
                int rc = hog_array_grow(&pc, &cap, (size_t)s->npieces + 1, sizeof(stream_piece), 64);
                s->pieces = pc;
                s->pieces_cap = (uint32_t)cap;
                if (rc < 0)
                    return rc;
            }
            s->pieces[s->npieces++] = (stream_piece){.first = i, .mean = s->seg_mean};
        }
        s->pieces[s->npieces - 1].n++;
        const double v = t[i].rating;
        s->sum += v;
        s->lo = v < s->lo ? v : s->lo;
        s->hi = v > s->hi ? v : s->hi;
    }
    return 0;
}

/* The progressive RMSE of the ratings learned so far (the workers' sums in
 * worker order: one thread's is its sum in the stream's order). */
static double progressive_rmse(const mf_stream *s)
{
    double se = 0;
    for (unsigned i = 0; i < s->nth; i++)
        se += s->ws[i].se;
    return s->n ? sqrt(se / (double)s->n) : (double)NAN;
}

/* The model's fields as a snapshot or the end shows them. */
static void describe(mf_stream *s, double rmse)
{
    hog_mf_model *m = s->m;
    m->info.mean = s->seg_mean;
    m->info.min = s->lo;
    m->info.max = s->hi;
    m->info.train_ratings = m->info.updates = s->n;
    m->info.seconds = hog_now() - s->t0;
    m->info.train_rmse = rmse;
}

static void report(mf_stream *s, double rmse, int done)
{
    const hog_mf_params *p = s->p;
    if (!p->progress)
        return;
    hog_mf_epoch_stats st = {.epoch = done ? 1 : 0, .epochs = 1, .step = p->step, .seconds = hog_now() - s->t0,
                             .updates = s->n, .train_rmse = rmse, .test_rmse = NAN};
    p->progress(p->progress_ctx, &st);
}

/* A snapshot when one is due or asked for (between batches: no worker runs). */
static void maybe_snapshot(mf_stream *s, double rmse)
{
    hog_mf_control *c = s->c;
    if (!c || !c->snap_write)
        return;
    const int asked = atomic_exchange_explicit(&c->snap_asked, 0, memory_order_relaxed);
    const double now = hog_now();
    if (!asked && !(s->snap_next && s->n >= s->snap_next) && !(s->snap_due > 0 && now >= s->snap_due))
        return;
    describe(s, rmse);
    int rc = c->snap_write(c->snap_ctx, s->m);
    if (rc < 0)
        hog_log(HOG_LOG_WARN, "snapshot after %llu ratings not written: %s; training goes on",
                (unsigned long long)s->n, hog_strerror(rc));
    else
        hog_log(HOG_LOG_INFO, "snapshot after %llu ratings, %.2f s into the run (%.3f s to make and write)",
                (unsigned long long)s->n, now - s->t0, hog_now() - now);
    while (s->snap_next && s->snap_next <= s->n)
        s->snap_next += c->snap_rows;
    if (s->snap_due > 0)
        s->snap_due = now + c->snap_seconds;
}

static int diverged(const mf_stream *s, const char *what)
{
    return hog_fail(HOG_EDIVERGED, s->err, s->err_len,
                    "%s: the training diverged in its one pass after %llu ratings: its %s not finite (NaN or "
                    "infinite), and no model was made. The steps are too large for the ratings' scale: lower "
                    "hog_mf_params.step (now %g)", s->path, (unsigned long long)s->n, what, s->p->step);
}

/* A batch's new rows and names, then its steps. */
static int learn_batch(mf_stream *s, const hog_ratings *b)
{
    hog_mf_model *m = s->m;
    hog_ratings_info bi;
    hog_ratings_get_info(b, &bi);
    if (!bi.has_ratings)
        return hog_fail(HOG_ELABEL, s->err, s->err_len, "%s: user-item pairs but no ratings", s->path);
    if (bi.ratings > UINT32_MAX) /* a .hgr is one batch: its segments are counted in 32 bits */
        return hog_fail(HOG_EPARAM, s->err, s->err_len, "%s: a batch of %llu ratings: one pass takes at most 2^32 - 1 "
                        "at once; give the text instead", s->path, (unsigned long long)bi.ratings);
    int rc;
    if ((rc = grow_side(s, 0, bi.users)) < 0 || (rc = grow_side(s, 1, bi.items)) < 0 ||
        (rc = grow_names(&m->users, &b->users)) < 0 || (rc = grow_names(&m->items, &b->items)) < 0)
        return rc == -ENOMEM ? hog_fail(rc, s->err, s->err_len, "out of memory") : rc;
    const uint32_t n = (uint32_t)bi.ratings;
    if ((rc = cut_pieces(s, b->t, n)) < 0)
        return hog_fail(rc, s->err, s->err_len, "out of memory");
    s->t = b->t;
    atomic_store_explicit(&s->next, 0, memory_order_relaxed);
    hog_pool_run(s->pool, piece_worker, s);
    s->n += n;
    const double rmse = progressive_rmse(s);
    if (!isfinite(rmse))
        return diverged(s, "error is");
    if (s->n >= s->next_report) {
        report(s, rmse, 0);
        while (s->next_report <= s->n)
            s->next_report *= 2;
    }
    maybe_snapshot(s, rmse);
    /* Without a stop fd the interrupt is seen here, after the batch. */
    if (s->c && atomic_load_explicit(&s->c->interrupted, memory_order_relaxed))
        return HOG_EINTERRUPTED;
    return 0;
}

/* hog_ratings_each's fn. */
static int on_batch(void *ctx, const hog_ratings *b)
{
    mf_stream *s = ctx;
    pthread_mutex_lock(&s->mu);
    int rc = learn_batch(s, b);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* The watcher: every 20 ms, between batches, a snapshot asked for or due
 * on the timer, while the reader may be waiting on a quiet stream. */
#define WATCH_NS 20000000L

static void *watch_main(void *arg)
{
    mf_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->done) {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        at.tv_nsec += WATCH_NS;
        if (at.tv_nsec >= 1000000000L) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->wake, &s->mu, &at);
        if (!s->done && s->n)
            maybe_snapshot(s, progressive_rmse(s));
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Makes s->wake, and starts the watcher where snapshots are set (*started
 * says whether it runs). Returns 0 or -errno, with nothing made. */
static int watch_start(mf_stream *s, pthread_t *th, int *started)
{
    *started = 0;
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return -ENOMEM;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0)
        return -rc;
    if (!s->c || !s->c->snap_write)
        return 0;
    if ((rc = pthread_create(th, NULL, watch_main, s)) != 0) {
        pthread_cond_destroy(&s->wake);
        return -rc;
    }
    *started = 1;
    return 0;
}

static void watch_stop(mf_stream *s, pthread_t th, int started)
{
    pthread_mutex_lock(&s->mu);
    s->done = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->mu);
    if (started)
        pthread_join(th, NULL);
}

/* ===================================================================== *
 *  The run
 * ===================================================================== */
static int check_stream(const hog_mf_params *p, char *err, size_t err_len)
{
    const char *field;
    if (hog_mf_params_check(p, &field) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "invalid matrix factorisation parameter: hog_mf_params.%s", field);
    if (p->epochs != 1)
        return hog_fail(HOG_EPARAM, err, err_len, "a run in one pass trains one epoch: hog_mf_params.epochs is %u",
                        p->epochs);
    if (p->holdout > 0 || p->early_stop)
        return hog_fail(HOG_EPARAM, err, err_len, "a run in one pass scores each rating before it learns it "
                        "(progressive validation): set hog_mf_params.%s to 0",
                        p->holdout > 0 ? "holdout" : "early_stop");
    if (p->link)
        return hog_fail(HOG_EPARAM, err, err_len, "a run in one pass is one machine's: set no hog_mf_params.link");
    if (p->control && p->control->ckpt_path)
        return hog_fail(HOG_EPARAM, err, err_len, "a run in one pass takes snapshots, not checkpoints: set none "
                        "(hog_mf_control_set_checkpoint) on its control");
    return 0;
}

static void stream_free(mf_stream *s)
{
    if (s->ws)
        for (unsigned i = 0; i < s->nth; i++) {
            hog_pool_free_local(s->pool, s->ws[i].pl);
            hog_pool_free_local(s->pool, s->ws[i].ql);
        }
    hog_free(s->ws);
    hog_free(s->pieces);
    hog_free(s->rr);
    if (s->pool)
        hog_pool_return(s->pool);
}

int hog_mf_train_stream(const hog_mf_params *p, const char *path, const hog_read_params *rp, const hog_ratings *test,
                        hog_mf_model **out, uint64_t *skipped, char *err, size_t err_len)
{
    *out = NULL;
    if (skipped)
        *skipped = 0;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    int rc = check_stream(p, err, err_len);
    if (rc < 0)
        return rc;
    if (test && !test->info.has_ratings)
        return hog_fail(HOG_ELABEL, err, err_len, "the test set has user-item pairs but no ratings");
    mf_stream s = {.p = p, .c = p->control, .path = path, .lo = INFINITY, .hi = -INFINITY, .next_report = HOG_MF_SEG,
                   .err = err, .err_len = err_len, .mu = PTHREAD_MUTEX_INITIALIZER};
    hog_mf_model *m = NULL;
    if ((rc = hog_pool_borrow(p->threads, p->bind, &s.pool, err, err_len)) < 0)
        return rc;
    s.nth = hog_pool_threads(s.pool);
    s.m = m = hog_mf_new(0, 0, p->rank);
    s.ws = hog_aligned_alloc(HOG_CACHELINE, s.nth * sizeof(mf_worker));
    if (s.ws) /* before any failure: stream_free reads every worker's state */
        memset(s.ws, 0, s.nth * sizeof(mf_worker));
    if (!m || !s.ws)
        goto nomem;
    for (unsigned i = 0; i < s.nth; i++) {
        s.ws[i].pl = hog_pool_alloc_local(s.pool, i, m->stride * sizeof(float));
        s.ws[i].ql = hog_pool_alloc_local(s.pool, i, m->stride * sizeof(float));
        if (!s.ws[i].pl || !s.ws[i].ql)
            goto nomem;
    }
    /* hog_mf_new made one row a side for an empty model: rows come as names do. */
    m->info.users = m->info.items = 0;
    if (p->step_schedule == HOG_SCHEDULE_ADAGRAD) {
        m->gp = hog_malloc(sizeof(hog_weight));
        m->gq = hog_malloc(sizeof(hog_weight));
        if (!m->gp || !m->gq)
            goto nomem;
    }
    s.ucap = s.icap = 1;
    m->info.params = *p;
    m->info.params.threads = s.nth;
    m->info.params.bind = hog_pool_bind_for(s.nth, p->bind); /* what auto came to */
    m->info.params.schedule = HOG_MF_ARRIVAL; /* as run */
    m->info.params.grid = 0;
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    m->info.params.control = NULL;
    m->epochs_run = m->best_epoch = 1;
    hog_mf_control *c = s.c;
    /* On the heap: its messages are a kilobyte. */
    hog_ratings_read *rr = s.rr = hog_calloc(1, sizeof(*rr));
    if (!rr)
        goto nomem;
    rr->skip = rp && rp->on_error == HOG_ON_ERROR_SKIP;
    rr->stop_fd = -1;
    if (c) {
        s.snap_next = c->snap_rows;
        s.snap_due = c->snap_seconds > 0 ? hog_now() + c->snap_seconds : 0;
        rr->stop_fd = c->stop_fd;
        atomic_store(&c->training, 1); /* an interrupt now ends the read, not the process */
    }
    s.t0 = hog_now();
    pthread_t watcher;
    int watching;
    if ((rc = watch_start(&s, &watcher, &watching)) < 0) {
        rc = hog_fail(rc, err, err_len, "cannot start the snapshots' watcher: %s", hog_strerror(rc));
        goto fail;
    }
    rc = hog_ratings_each_read(path, rr, on_batch, &s, err, err_len);
    watch_stop(&s, watcher, watching);
    pthread_cond_destroy(&s.wake);
    const int interrupted = c && atomic_load_explicit(&c->interrupted, memory_order_relaxed);
    if (c) {
        atomic_store(&c->training, 0);
        if (interrupted) { /* the control's next run starts clear */
            atomic_store_explicit(&c->interrupted, 0, memory_order_relaxed);
            hog_stop_fd_drain(c->stop_fd);
        }
    }
    if ((rc == HOG_EINTERRUPTED || rc == HOG_EEMPTY || rc == 0) && interrupted)
        rc = s.n ? 0 : hog_fail(HOG_EEMPTY, err, err_len, "%s: interrupted before its first rating", path);
    if (rc < 0)
        goto fail;
    if (interrupted)
        hog_log(HOG_LOG_INFO, "%s: interrupted: the read stopped after %llu ratings, each learned once; the model "
                "is theirs", path, (unsigned long long)s.n);
    const double rmse = progressive_rmse(&s);
    if (!hog_mf_finite(m)) { /* an overflowing step may leave the errors it saw finite */
        rc = diverged(&s, "factors are");
        goto fail;
    }
    describe(&s, rmse);
    report(&s, rmse, 1);
    hog_mf_adagrad_free(m); /* training state: the model predicts without it */
    if (test) {
        float *pred = hog_malloc((test->info.ratings ? test->info.ratings : 1) * sizeof(float));
        if (!pred)
            goto nomem;
        rc = hog_mf_predict_ratings(m, test, pred, &m->info.test_rmse);
        hog_free(pred);
        if (rc < 0)
            goto fail;
        m->info.test_ratings = test->info.ratings;
    }
    if (rr->skipped) { /* as hog_dataset_skipped says it */
        if (skipped)
            *skipped = rr->skipped;
        if (err && err_len)
            snprintf(err, err_len, "%s", rr->first);
    }
    stream_free(&s);
    *out = m;
    return 0;
nomem:
    rc = hog_fail(-ENOMEM, err, err_len, "out of memory");
fail:
    stream_free(&s);
    hog_mf_free(m);
    return rc;
}
