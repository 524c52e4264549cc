/* test_train_mf_stream.c: matrix factorisation in one pass: a replay of its steps, a stream cut anywhere, the model grown as names come, an interrupt on a quiet pipe, snapshots and refusals. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "train/train_mf.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("mfs");
}

TestSuite(mf_stream, .init = setup, .fini = scratch_remove);


/* n ratings of a rank-2 matrix with biases, as "uU iI rating" lines: users
 * and items drawn so that new names keep coming to the end. */
static char *low_rank_text(unsigned users, unsigned items, unsigned n, uint64_t seed)
{
    hog_rng r = {seed};
    size_t cap = (size_t)n * 40 + 64, len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (unsigned t = 0; t < n; t++) {
        /* The first ratings see few names; the range opens as the stream goes. */
        unsigned open_u = 1 + (unsigned)((uint64_t)users * (t + 1) / n), open_i = 1 + (unsigned)((uint64_t)items * (t + 1) / n);
        unsigned u = hog_rng_below(&r, open_u < users ? open_u : users);
        unsigned i = hog_rng_below(&r, open_i < items ? open_i : items);
        double v = 3.5 + 0.01 * (u % 7) - 0.02 * (i % 5) + 0.3 * sin(u * 0.7) * cos(i * 1.3) +
                   0.1 * ((double)(hog_rng_next(&r) >> 11) * 0x1p-53 - 0.5);
        len += (size_t)snprintf(text + len, cap - len, "u%u i%u %.5f\n", u, i, v);
    }
    return text;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(scratch_path(name), "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static hog_mf_params stream_params(unsigned threads)
{
    hog_mf_params p = hog_mf_params_default();
    p.rank = 4;
    p.threads = threads;
    p.epochs = 1;
    p.bind = 0;
    return p;
}

static hog_mf_model *stream_ok(const hog_mf_params *p, const char *path)
{
    hog_mf_model *m = NULL;
    char err[512] = "";
    int rc = hog_mf_train_stream(p, path, NULL, NULL, &m, NULL, err, sizeof(err));
    cr_assert_eq(rc, 0, "stream %s: %d %s", path, rc, err);
    return m;
}

/* The same floats, bit for bit: factors, biases, mean and progressive RMSE. */
static void assert_same_model(const hog_mf_model *a, const hog_mf_model *b)
{
    cr_assert_eq(a->info.users, b->info.users);
    cr_assert_eq(a->info.items, b->info.items);
    cr_assert_eq(a->stride, b->stride);
    cr_assert_eq(memcmp((const void *)a->p, (const void *)b->p, (size_t)a->info.users * a->stride * sizeof(float)), 0);
    cr_assert_eq(memcmp((const void *)a->q, (const void *)b->q, (size_t)a->info.items * a->stride * sizeof(float)), 0);
    cr_assert_eq(memcmp((const void *)a->bu, (const void *)b->bu, a->info.users * sizeof(float)), 0);
    cr_assert_eq(memcmp((const void *)a->bi, (const void *)b->bi, a->info.items * sizeof(float)), 0);
    cr_assert_eq(memcmp(&a->info.mean, &b->info.mean, sizeof(double)), 0);
    cr_assert_eq(memcmp(&a->info.train_rmse, &b->info.train_rmse, sizeof(double)), 0);
}

/* One thread's run is the ratings' AdaGrad steps in the order they came,
 * each segment of 1024 against the mean of the ratings before it (the
 * first against its first rating), its progressive RMSE their errors before
 * each step: replayed here from the whole set with the scalar step. */
Test(mf_stream, one_thread_is_the_replay_of_its_steps_bit_for_bit)
{
    char *text = low_rank_text(300, 200, 5000, 3);
    write_file("r.txt", text);
    free(text);
    hog_mf_params p = stream_params(1);
    hog_mf_model *m = stream_ok(&p, scratch_path("r.txt"));

    hog_ratings *r = NULL;
    char err[256];
    cr_assert_eq(hog_ratings_open(scratch_path("r.txt"), 0, &r, err, sizeof(err)), 0);
    const uint32_t U = r->users.n, I = r->items.n;
    hog_mf_model *ref = hog_mf_new(U, I, p.rank);
    cr_assert_not_null(ref);
    const uint32_t k = ref->stride;
    hog_mf_init_rows(ref, 0, 0, U, p.seed, p.init);
    hog_mf_init_rows(ref, 1, 0, I, p.seed, p.init);
    float *gu = malloc(U * sizeof(float)), *gi = malloc(I * sizeof(float));
    for (uint32_t u = 0; u < U; u++)
        gu[u] = 1.0f;
    for (uint32_t i = 0; i < I; i++)
        gi[i] = 1.0f;
    double sum = 0, se = 0;
    float mean = 0;
    for (uint64_t g = 0; g < r->info.ratings; g++) {
        const hog_mf_triple *t = &r->t[g];
        if (g % 1024 == 0)
            mean = g ? (float)(sum / (double)g) : t->rating;
        sum += (double)t->rating;
        float *pu = (float *)(ref->p + (size_t)t->user * k), *qi = (float *)(ref->q + (size_t)t->item * k);
        float e = hog_mf_step_adagrad(k, mean, (float *)&ref->bu[t->user], (float *)&ref->bi[t->item], &gu[t->user],
                                      &gi[t->item], pu, qi, t->rating, (float)p.step, (float)p.l2, (float)p.l2_bias,
                                      1.0f / (float)p.rank);
        se += (double)e * (double)e;
    }
    ref->info.mean = mean;
    ref->info.train_rmse = sqrt(se / (double)r->info.ratings);
    assert_same_model(m, ref);
    /* Names map to the same rows, and the range is the stream's. */
    cr_assert_eq(hog_mf_user_id(m, "u17"), hog_idmap_find(&r->users, "u17", 3));
    cr_assert_eq(hog_mf_item_id(m, "i9"), hog_idmap_find(&r->items, "i9", 2));
    cr_assert_eq(m->info.min, r->info.min);
    cr_assert_eq(m->info.max, r->info.max);
    cr_assert_eq(m->info.train_ratings, 5000);
    cr_assert_null(m->gp, "AdaGrad's sums are training state, freed at the end");
    free(gu);
    free(gi);
    hog_mf_free(ref);
    hog_ratings_close(r);
    hog_mf_free(m);
}

/* A writer that sends text down a FIFO in pieces of random lengths, cut
 * anywhere (inside lines too), pausing between them so that the reader's
 * batches end where the pieces do. */
typedef struct trickle {
    const char *path;
    const char *text;
    size_t piece;  /* at most this many bytes a piece */
    unsigned pause_us;
    int keep_open_ms; /* after the text, hold the FIFO open this long (a quiet stream) */
    const char *tail; /* written after the pause before closing, or NULL */
} trickle;

static void *trickle_main(void *arg)
{
    const trickle *t = arg;
    FILE *f = fopen(t->path, "w");
    if (!f)
        return NULL;
    hog_rng r = {99};
    size_t len = strlen(t->text);
    for (size_t at = 0; at < len;) {
        size_t n = 1 + hog_rng_below(&r, (uint32_t)t->piece);
        n = n < len - at ? n : len - at;
        fwrite(t->text + at, 1, n, f);
        fflush(f);
        at += n;
        usleep(t->pause_us);
    }
    if (t->tail) {
        fputs(t->tail, f);
        fflush(f);
    }
    if (t->keep_open_ms)
        usleep((useconds_t)t->keep_open_ms * 1000);
    fclose(f);
    return NULL;
}

Test(mf_stream, a_stream_cut_anywhere_gives_the_files_model)
{
    char *text = low_rank_text(400, 150, 6000, 5);
    write_file("r.txt", text);
    hog_mf_params p = stream_params(1);
    hog_mf_model *whole = stream_ok(&p, scratch_path("r.txt"));
    const char *fifo = scratch_path("r.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    trickle t = {fifo, text, 9000, 2000, 0, NULL};
    pthread_t th;
    pthread_create(&th, NULL, trickle_main, &t);
    hog_mf_model *cut = stream_ok(&p, fifo);
    pthread_join(th, NULL);
    assert_same_model(cut, whole);
    hog_mf_free(cut);
    hog_mf_free(whole);
    free(text);
}

Test(mf_stream, two_threads_learn_it_too)
{
    char *text = low_rank_text(400, 150, 20000, 6);
    write_file("r.txt", text);
    free(text);
    hog_mf_params p1 = stream_params(1), p2 = stream_params(2);
    hog_mf_model *a = stream_ok(&p1, scratch_path("r.txt")), *b = stream_ok(&p2, scratch_path("r.txt"));
    cr_assert_eq(b->info.params.threads, 2);
    cr_assert_eq(b->info.train_ratings, 20000);
    cr_assert_eq(b->info.users, a->info.users);
    /* The same ratings learned in nearly the same order: nearly the same error. */
    cr_assert_lt(fabs(b->info.train_rmse - a->info.train_rmse), 0.02 * a->info.train_rmse, "%g against %g",
                 b->info.train_rmse, a->info.train_rmse);
    /* And it learned: later ratings are predicted better than a constant. */
    cr_assert_lt(a->info.train_rmse, 0.3);
    hog_mf_free(a);
    hog_mf_free(b);
}

static void *interrupt_later(void *arg)
{
    usleep(300000);
    hog_mf_interrupt(arg);
    return NULL;
}

/* A stream that goes quiet, its last line unfinished: the interrupt ends
 * the read waiting on it, the ratings read are the model, the cut line is
 * left out. */
Test(mf_stream, an_interrupt_ends_a_quiet_streams_read_with_its_model)
{
    char *text = low_rank_text(100, 50, 3000, 7);
    const char *fifo = scratch_path("q.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    trickle t = {fifo, text, 100000, 0, 3000, "u1 i2"};
    pthread_t th, ti;
    pthread_create(&th, NULL, trickle_main, &t);
    hog_mf_params p = stream_params(1);
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    p.control = c;
    pthread_create(&ti, NULL, interrupt_later, c);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    hog_mf_model *m = stream_ok(&p, fifo);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cr_assert_lt(waited, 2.5, "the read waited %.2f s for the quiet stream: the interrupt should end it", waited);
    cr_assert_eq(m->info.train_ratings, 3000);
    cr_assert_eq(hog_mf_interrupt(c), 0, "no run is under way any more");
    pthread_join(ti, NULL);
    pthread_join(th, NULL);
    hog_mf_free(m);
    hog_mf_control_free(c);
    free(text);
}

typedef struct snaps {
    const char *path;
    unsigned n;
    uint64_t ratings[64];
} snaps;

static int save_snapshot(void *ctx, const hog_mf_model *m)
{
    snaps *s = ctx;
    if (s->n < 64)
        s->ratings[s->n] = m->info.train_ratings;
    s->n++;
    return hog_mf_save(m, s->path);
}

Test(mf_stream, snapshots_come_on_the_count_and_when_asked_and_load)
{
    char *text = low_rank_text(200, 80, 8000, 8);
    const char *fifo = scratch_path("s.fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    trickle t = {fifo, text, 40000, 20000, 0, NULL};
    pthread_t th;
    pthread_create(&th, NULL, trickle_main, &t);
    hog_mf_params p = stream_params(1);
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    snaps s = {scratch_path("snap.hog"), 0, {0}};
    cr_assert_eq(hog_mf_control_set_snapshots(c, 0, -1, save_snapshot, &s), HOG_EPARAM);
    cr_assert_eq(hog_mf_control_set_snapshots(c, 2000, 0, NULL, NULL), HOG_EPARAM);
    cr_assert_eq(hog_mf_control_set_snapshots(c, 2000, 0, save_snapshot, &s), 0);
    hog_mf_snapshot(c); /* asked before the first batch: taken after it */
    p.control = c;
    hog_mf_model *m = stream_ok(&p, fifo);
    pthread_join(th, NULL);
    cr_assert_geq(s.n, 3, "one asked for and at least two on the count of 8000 ratings, got %u", s.n);
    cr_assert_lt(s.ratings[0], 2000, "the one asked for comes after the first batch (%llu)",
                 (unsigned long long)s.ratings[0]);
    for (unsigned k = 1; k < s.n && k < 64; k++)
        cr_assert_gt(s.ratings[k], s.ratings[k - 1]);
    hog_mf_model *last = NULL;
    char err[256];
    cr_assert_eq(hog_mf_load(s.path, &last, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(last->info.train_ratings, s.ratings[(s.n < 64 ? s.n : 64) - 1]);
    cr_assert(isfinite(hog_mf_predict(last, "u3", "i4")));
    hog_mf_free(last);
    hog_mf_free(m);
    hog_mf_control_free(c);
    free(text);
}

static int stream_fails(const hog_mf_params *p, const char *path, const char *want)
{
    hog_mf_model *m = (hog_mf_model *)1;
    char err[512] = "";
    int rc = hog_mf_train_stream(p, path, NULL, NULL, &m, NULL, err, sizeof(err));
    cr_assert_lt(rc, 0);
    cr_assert_null(m);
    cr_assert(strstr(err, want), "'%s' should say '%s'", err, want);
    return rc;
}

Test(mf_stream, what_one_pass_cannot_do_is_refused_and_bad_lines_are_named)
{
    write_file("ok.txt", "u1 i1 4\nu2 i1 3\n");
    const char *ok = scratch_path("ok.txt");
    hog_mf_params p = stream_params(1);
    p.epochs = 2;
    cr_assert_eq(stream_fails(&p, ok, "one epoch"), HOG_EPARAM);
    p = stream_params(1);
    p.holdout = 0.1;
    cr_assert_eq(stream_fails(&p, ok, "holdout"), HOG_EPARAM);
    p = stream_params(1);
    p.early_stop = 2;
    cr_assert_eq(stream_fails(&p, ok, "early_stop"), HOG_EPARAM);
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, scratch_path("ck"), 0, 0), 0);
    p = stream_params(1);
    p.control = c;
    cr_assert_eq(stream_fails(&p, ok, "checkpoints"), HOG_EPARAM);
    hog_mf_control_free(c);
    p = stream_params(1);
    write_file("pairs.txt", "u1 i1\nu2 i1\n");
    cr_assert_eq(stream_fails(&p, scratch_path("pairs.txt"), "rating"), HOG_EFORMAT);
    write_file("bad.txt", "u1 i1 4\nu2 i1 3\nu3 i2 x\n");
    char want[320];
    snprintf(want, sizeof(want), "%s:3:7: expected a finite number", scratch_path("bad.txt"));
    cr_assert_eq(stream_fails(&p, scratch_path("bad.txt"), want), HOG_EFORMAT);
    /* A step that overflows the factors while the errors it saw were finite. */
    write_file("big.txt", "u1 i1 4\nu2 i1 3\nu1 i2 5\n");
    p.step = 1e30;
    cr_assert_eq(stream_fails(&p, scratch_path("big.txt"), "diverged in its one pass after 3 ratings: its factors are not "
                              "finite"), HOG_EDIVERGED);
    p = stream_params(1);
    write_file("empty.txt", "# nothing\n");
    cr_assert_eq(stream_fails(&p, scratch_path("empty.txt"), "no ratings"), HOG_EEMPTY);
}

/* A test set is scored at the end; a name the stream never had is
 * predicted from what is known. */
Test(mf_stream, a_test_set_is_scored_at_the_end)
{
    char *text = low_rank_text(200, 60, 6000, 9);
    write_file("r.txt", text);
    free(text);
    write_file("t.txt", "u1 i1 3.5\nu2 i3 3.6\nnobody i2 3.4\n");
    hog_ratings *test = NULL;
    char err[256];
    cr_assert_eq(hog_ratings_open(scratch_path("t.txt"), 0, &test, err, sizeof(err)), 0);
    hog_mf_params p = stream_params(1);
    hog_mf_model *m = NULL;
    cr_assert_eq(hog_mf_train_stream(&p, scratch_path("r.txt"), NULL, test, &m, NULL, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(m->info.test_ratings, 3);
    float pred[3];
    double rmse;
    cr_assert_eq(hog_mf_predict_ratings(m, test, pred, &rmse), 0);
    cr_assert_eq(memcmp(&rmse, &m->info.test_rmse, sizeof(double)), 0);
    cr_assert_lt(rmse, 0.5);
    hog_mf_free(m);
    hog_ratings_close(test);
}

/* hog_read_params.on_error skip: malformed lines are counted, named and
 * left out; the others are learned. */
Test(mf_stream, malformed_lines_are_skipped_and_named_when_asked)
{
    write_file("bad.txt", "u1 i1 4\nu2 i1 x\nu3 i2 5\nbad\nu1 i2 3\nu4,i3\n");
    hog_mf_params p = stream_params(1);
    hog_read_params rp = hog_read_params_default();
    rp.on_error = HOG_ON_ERROR_SKIP;
    hog_mf_model *m = NULL;
    uint64_t skipped = 99;
    char err[1024] = "";
    cr_assert_eq(hog_mf_train_stream(&p, scratch_path("bad.txt"), &rp, NULL, &m, &skipped, err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(skipped, 3);
    cr_assert_eq(m->info.train_ratings, 3);
    char want[3][320];
    snprintf(want[0], sizeof(want[0]), "%s:2:7: expected a finite number (the rating), found 'x'\n",
             scratch_path("bad.txt"));
    snprintf(want[1], sizeof(want[1]), "%s:4:4: expected a separator and an item", scratch_path("bad.txt"));
    snprintf(want[2], sizeof(want[2]), "%s:6:", scratch_path("bad.txt"));
    for (int k = 0; k < 3; k++)
        cr_assert(strstr(err, want[k]), "'%s' should hold '%s'", err, want[k]);
    cr_assert_eq(hog_mf_user_id(m, "u4"), -1, "a skipped line's names are no rows");
    hog_mf_free(m);
    /* The default stops at the first, naming it, and makes no model. */
    rp.on_error = HOG_ON_ERROR_STOP;
    m = (hog_mf_model *)1;
    cr_assert_eq(hog_mf_train_stream(&p, scratch_path("bad.txt"), &rp, NULL, &m, &skipped, err, sizeof(err)),
                 HOG_EFORMAT);
    cr_assert_null(m);
    cr_assert_eq(skipped, 0);
    cr_assert(strstr(err, ":2:7: expected a finite number (the rating), found 'x'"), "%s", err);
}

