/* test_train_stream.c: the first epoch trained while the text is read (hog_trainer_run_file): as good as reading whole, reproducible, what falls back, and a malformed line. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "train/train.h"

#include "test_etl_files.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-stream");
}

TestSuite(train_stream, .init = setup, .fini = scratch_remove);

/* Trains on path with p (blocks of 200 rows: a head of 4, windows of 4 or
 * more), from init's weights (NULL: zeros); the run must succeed. */
static hog_model *train_file_from(const hog_model *init, const char *path, const char *cache, const char *test,
                                  hog_train_params p, hog_file_run *fr)
{
    hog_trainer *t;
    hog_model *m;
    char err[512] = "";
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, init), 0);
    cr_assert_eq(hog_trainer_run_file(t, path, &rp, cache, test, &m, fr, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    return m;
}

static hog_model *train_file(const char *path, const char *cache, const char *test, hog_train_params p,
                             hog_file_run *fr)
{
    return train_file_from(NULL, path, cache, test, p, fr);
}

static void close_run(hog_file_run *fr)
{
    hog_dataset_close(fr->train);
    hog_dataset_close(fr->test);
}

Test(train_stream, streamed_first_epoch_learns_as_well_as_reading_whole)
{
    char tr[160], te[160], cache[160];
    snprintf(tr, sizeof(tr), "%s", write_data("tr.svm", 6000, 300, 20, 'b', 11));
    snprintf(te, sizeof(te), "%s", write_data("te.svm", 1000, 300, 20, 'b', 12));
    snprintf(cache, sizeof(cache), "%s/tr.hgd", dir);
    for (unsigned threads = 1; threads <= 2; threads++) {
        hog_train_params p = plain_params();
        p.threads = threads;
        p.epochs = 6;
        p.step = 0.5;
        hog_file_run a, b;
        p.stream = 1;
        unlink(cache);
        hog_model *ms = train_file(tr, cache, te, p, &a);
        p.stream = 0;
        hog_model *mw = train_file(tr, NULL, te, p, &b);
        cr_assert(a.streamed && !a.cache_used && !b.streamed, "%d %d %d", a.streamed, a.cache_used, b.streamed);
        cr_assert_str_eq(b.note, "streaming is off");
        cr_assert_eq(a.train->info.fingerprint, b.train->info.fingerprint, "the cache holds the same rows");
        hog_model_info is, iw;
        hog_model_get_info(ms, &is);
        hog_model_get_info(mw, &iw);
        cr_assert_eq(is.train_rows, 6000);
        cr_assert_eq(is.test.rows, 1000);
        cr_assert_eq(is.features, iw.features);
        cr_assert_eq(is.data_fingerprint, iw.data_fingerprint);
        cr_assert_gt(is.test.accuracy, 0.93, "threads %u: streamed accuracy %g", threads, is.test.accuracy);
        cr_assert_lt(fabs(is.test.logloss - iw.test.logloss), 0.03, "threads %u: test logloss %g streamed, %g whole",
                     threads, is.test.logloss, iw.test.logloss);
        hog_model_free(ms);
        hog_model_free(mw);
        close_run(&a);
        close_run(&b);
        /* The cache is newer than the text now: the next run reads it. */
        p.stream = 1;
        hog_model *mc = train_file(tr, cache, te, p, &a);
        cr_assert(a.cache_used && !a.streamed);
        hog_model_free(mc);
        close_run(&a);
    }
}

Test(train_stream, streamed_run_on_one_thread_is_reproducible_and_grows_the_model)
{
    /* Rows past the head touch features the head never saw (up to 900). */
    char path[160];
    FILE *f = create("grow.svm", path);
    hog_rng r = {5};
    for (int i = 0; i < 5000; i++) {
        int top = i < 1000 ? 100 : 900, a = 1 + (int)hog_rng_below(&r, (uint32_t)top / 2);
        int b = a + 1 + (int)hog_rng_below(&r, (uint32_t)top / 2);
        fprintf(f, "%d %d:1 %d:1\n", (a + b) % 2 ? 1 : -1, a, b);
    }
    fprintf(f, "1 900:1\n");
    cr_assert_eq(fclose(f), 0);
    hog_train_params p = plain_params();
    p.threads = 1;
    p.epochs = 2;
    p.holdout = 0.2;
    hog_file_run a, b;
    hog_model *m1 = train_file(path, NULL, NULL, p, &a);
    hog_model *m2 = train_file(path, NULL, NULL, p, &b);
    cr_assert(a.streamed && b.streamed);
    cr_assert(same_weights(m1, m2), "one thread replays bit for bit");
    hog_model_info in;
    hog_model_get_info(m1, &in);
    cr_assert_eq(in.features, 900, "1-based indices up to 900");
    cr_assert_neq(hog_w_load(&m1->w[899]), 0.0f, "a feature first seen late is trained");
    /* The holdout is the same rows as when the file is read whole. */
    p.stream = 0;
    hog_file_run c;
    hog_model *m3 = train_file(path, NULL, NULL, p, &c);
    hog_model_info iw;
    hog_model_get_info(m3, &iw);
    cr_assert_eq(in.train_rows, iw.train_rows);
    cr_assert_eq(in.test.rows, iw.test.rows);
    cr_assert_gt(in.test.rows, 800);
    hog_model_free(m1);
    hog_model_free(m2);
    hog_model_free(m3);
    close_run(&a);
    close_run(&b);
    close_run(&c);
    /* The optimisers' per-feature state grows with the model too, on 2
     * threads and with 3 classes (the sanitizer build checks the bounds). */
    p.stream = 1;
    p.threads = 2;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.normalized = 1;
    p.l1 = 1e-5;
    m1 = train_file(path, NULL, NULL, p, &a);
    hog_model_get_info(m1, &in);
    cr_assert(a.streamed);
    cr_assert_eq(in.features, 900);
    cr_assert_neq(hog_w_load(&m1->w[899]), 0.0f);
    hog_model_free(m1);
    close_run(&a);
}

Test(train_stream, what_the_head_cannot_settle_is_read_whole_or_started_over)
{
    hog_train_params p = plain_params();
    p.epochs = 3;
    hog_file_run fr;
    /* Sorted by label: the first blocks have one label value. */
    char path[160];
    FILE *f = create("sorted.svm", path);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d %d:1 %d:0.5\n", i < 2000 ? -1 : 1, 1 + i % 97, 200 + (i < 2000 ? 0 : 1));
    cr_assert_eq(fclose(f), 0);
    hog_model *m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "have 1 label values"), "%s", fr.note);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.train.accuracy, 0.99, "%g", in.train.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Softmax whose third class first shows after the head: started over. */
    f = create("late.svm", path);
    for (int i = 0; i < 3000; i++) {
        int c = i < 1500 ? 1 + i % 2 : 1 + i % 3;
        fprintf(f, "%d %d:1 %d:1\n", c, c, 10 + i % 89);
    }
    cr_assert_eq(fclose(f), 0);
    p.loss = HOG_LOSS_SOFTMAX;
    m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "label 3 first appears in row 1503; started over"), "%s", fr.note);
    hog_model_get_info(m, &in);
    cr_assert_eq(in.classes, 3u);
    cr_assert_gt(in.train.accuracy, 0.99, "%g", in.train.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Dense rows: the dense kernel, which trains on the whole data set. */
    f = create("dense.svm", path);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "%d 1:%d 2:0.5 3:%g\n", i % 2 ? 1 : -1, i % 2, (i % 5) / 5.0);
    cr_assert_eq(fclose(f), 0);
    p.loss = HOG_LOSS_LOGISTIC;
    m = train_file(path, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "dense"), "%s", fr.note);
    hog_model_free(m);
    close_run(&fr);
}

Test(train_stream, a_malformed_line_stops_a_streamed_run_with_no_model_and_no_cache)
{
    char path[160], cache[160], err[512] = "";
    snprintf(path, sizeof(path), "%s", write_data("bad.svm", 3000, 100, 10, 'b', 3));
    snprintf(cache, sizeof(cache), "%s/bad.hgd", dir);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f);
    fprintf(f, "1 5:0.5 3:1\n"); /* indices not increasing */
    cr_assert_eq(fclose(f), 0);
    hog_train_params p = plain_params();
    hog_trainer *t;
    hog_model *m = NULL;
    hog_file_run fr;
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    int rc = hog_trainer_run_file(t, path, &rp, cache, NULL, &m, &fr, err, sizeof(err));
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    cr_assert(strstr(err, "bad.svm:3001:"), "%s", err);
    cr_assert_null(m);
    cr_assert_null(fr.train);
    cr_assert_neq(access(cache, F_OK), 0, "no cache is left");
    hog_trainer_free(t);
}

/* A .hgd checked as training first reads it: a bad block of the training
 * set or of the test set stops the run with the message a check at open
 * gives, and no model; a sound one trains as one checked at open. */
Test(train_stream, a_hgd_checked_at_first_read_trains_alike_and_stops_at_a_bad_block)
{
    char text[160], bin[160], bad[160];
    snprintf(text, sizeof(text), "%s", write_data("d.svm", 3000, 100, 10, 'b', 8));
    snprintf(bin, sizeof(bin), "%s/d.hgd", dir);
    snprintf(bad, sizeof(bad), "%s/bad.hgd", dir);
    char err[512] = "", want[512] = "";
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    cr_assert_eq(hog_dataset_convert(text, &rp, bin, NULL, err, sizeof(err)), 0, "%s", err);
    hgd_bad_block(bin, bad, want, sizeof(want));

    hog_train_params p = plain_params();
    p.threads = 1;
    hog_file_run fr;
    hog_model *at_open = train_file(bin, NULL, NULL, p, &fr);
    close_run(&fr);
    const char *cases[][2] = {{bin, NULL}, {bad, NULL}, {bin, bad}};
    for (size_t i = 0; i < 3; i++) {
        hog_trainer *t;
        hog_model *m = NULL;
        rp.verify = HOG_VERIFY_AT_FIRST_READ;
        cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
        int rc = hog_trainer_run_file(t, cases[i][0], &rp, NULL, cases[i][1], &m, &fr, err, sizeof(err));
        hog_trainer_free(t);
        if (i == 0) {
            cr_assert_eq(rc, 0, "%s", err);
            hog_weights w0, w1;
            hog_model_weights(at_open, &w0);
            hog_model_weights(m, &w1);
            cr_assert_eq(w0.features, w1.features);
            cr_assert_eq(memcmp(w0.w, w1.w, w0.features * w0.outputs * sizeof(float)), 0,
                         "the same model as a check at open gives");
            cr_assert_eq(w0.bias[0], w1.bias[0]);
            hog_model_free(m);
            close_run(&fr);
            continue;
        }
        cr_assert_eq(rc, HOG_ECHECKSUM, "case %zu: rc %d: %s", i, rc, err);
        cr_assert_str_eq(err, want);
        cr_assert_null(m);
    }
    hog_model_free(at_open);
}

/* Progressive points a run in one pass reports to its callback. */
typedef struct prog_points {
    unsigned n;
    uint64_t rows[64];
    double loss[64];
} prog_points;

static void on_points(void *ctx, const hog_epoch_stats *s, int done)
{
    prog_points *pp = ctx;
    if (!done && s->progressive.rows && pp->n < 64) {
        pp->rows[pp->n] = s->examples;
        pp->loss[pp->n++] = s->progressive.loss;
    }
}

Test(train_stream, one_epoch_trains_in_one_pass_keeping_no_block)
{
    char tr[160], te[160];
    snprintf(tr, sizeof(tr), "%s", write_data("tr.svm", 6000, 300, 20, 'b', 11));
    snprintf(te, sizeof(te), "%s", write_data("te.svm", 1000, 300, 20, 'b', 12));
    hog_train_params p = plain_params();
    p.threads = 1;
    p.epochs = 1;
    p.step = 0.5;
    prog_points pp = {0};
    p.progress = on_points;
    p.progress_ctx = &pp;
    hog_file_run fr;
    hog_model *m = train_file(tr, NULL, te, p, &fr);
    cr_assert(fr.streamed);
    /* The data set holds what was counted, and no block. */
    cr_assert_eq(fr.train->info.rows, 6000);
    cr_assert_eq(fr.train->info.blocks, 0);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_eq(in.params.train_metrics, HOG_TRAIN_METRICS_PROGRESSIVE);
    cr_assert_eq(in.train_rows, 6000);
    cr_assert_eq(in.test.rows, 1000);
    cr_assert_gt(in.test.accuracy, 0.85, "%g", in.test.accuracy);
    /* Windows of 4 blocks of 200 rows: a point after the first window and
     * then after those passing 1024, 2048 and 4096 rows, and at the end. */
    const uint64_t at[] = {800, 1600, 2400, 4800, 6000};
    cr_assert_eq(pp.n, 5u);
    for (unsigned i = 0; i < 5; i++)
        cr_assert_eq(pp.rows[i], at[i], "point %u: %llu rows", i, (unsigned long long)pp.rows[i]);
    cr_assert_eq(pp.loss[4], in.train.loss, "the last point is the model's training loss");
    hog_model_free(m);
    close_run(&fr);

    /* A file whose first blocks settle nothing (one label value) trained
     * no row of them: it is read again, whole. */
    char sorted[160];
    FILE *f = create("sorted1.svm", sorted);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "%d %d:1 %d:0.5\n", i < 2000 ? -1 : 1, 1 + i % 97, 200 + (i < 2000 ? 0 : 1));
    cr_assert_eq(fclose(f), 0);
    p.progress = NULL;
    m = train_file(sorted, NULL, NULL, p, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "have 1 label values"), "%s", fr.note);
    cr_assert_eq(fr.train->info.blocks, 15);
    hog_model_free(m);
    close_run(&fr);

    /* The same rows read whole first (stream 0): a model about as good. */
    p.stream = 0;
    p.progress = NULL;
    m = train_file(tr, NULL, te, p, &fr);
    hog_model_info iw;
    hog_model_get_info(m, &iw);
    cr_assert_lt(fabs(iw.test.accuracy - in.test.accuracy), 0.03, "%g whole, %g one pass", iw.test.accuracy,
                 in.test.accuracy);
    hog_model_free(m);
    close_run(&fr);
}

Test(train_stream, one_pass_names_the_line_of_a_label_the_head_lacked)
{
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_SOFTMAX;
    p.epochs = 1;
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    /* Without and with a comment line in the text (one piece of it here):
     * the row's line, then the lines it may be on. */
    for (int comment = 0; comment <= 1; comment++) {
        char path[160], err[512] = "", want[400];
        FILE *f = create("late.svm", path);
        if (comment)
            fprintf(f, "# classes 1 and 2, then 3\n");
        for (int i = 0; i < 3000; i++) {
            int c = i < 1500 ? 1 + i % 2 : 1 + i % 3;
            fprintf(f, "%d %d:1 %d:1\n", c, c, 10 + i % 89);
        }
        cr_assert_eq(fclose(f), 0);
        hog_trainer *t;
        hog_model *m;
        hog_file_run fr;
        cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_trainer_run_file(t, path, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), HOG_ELABEL, "%s",
                     err);
        snprintf(want, sizeof(want), "%s%s: label 3 is not one of the 2 label values the first rows had (1, 2)", path,
                 comment ? ": row 1503 (on line 1503 to 1504)" : ":1503");
        cr_assert(strstr(err, want), "%s", err);
        cr_assert_null(m);
        hog_trainer_free(t);
    }
}

/* What a run's snapshots were: the rows of each, and the last one kept. */
typedef struct snaps {
    unsigned n;
    uint64_t rows[16];
    hog_model *last;
    char path[160];
} snaps;

/* hog_snapshot_fn: counts the snapshot, saves it, loads it back (a whole
 * model file) and keeps that copy. */
static int on_snapshot(void *ctx, const hog_model *m)
{
    snaps *s = ctx;
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_lt(s->n, 16u);
    s->rows[s->n++] = in.train_rows;
    cr_assert_eq(hog_model_save(m, s->path), 0);
    hog_model_free(s->last);
    char err[256];
    cr_assert_eq(hog_model_load(s->path, &s->last, err, sizeof(err)), 0, "%s", err);
    return 0;
}

Test(train_stream, one_pass_hands_out_snapshots_of_the_rows_so_far)
{
    char tr[160], head[160];
    snprintf(tr, sizeof(tr), "%s", write_data("tr.svm", 6000, 300, 20, 'b', 11));
    snprintf(head, sizeof(head), "%s", write_data("head.svm", 4800, 300, 20, 'b', 11)); /* its first rows */
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 1;
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200; /* windows of 4 blocks: 800 rows */
    hog_trainer *t;
    char err[512] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_snapshots(t, 1000, 0, NULL, NULL), HOG_EPARAM);
    snaps s = {0};
    cr_assert_eq(hog_trainer_set_snapshots(t, 1000, -1, on_snapshot, &s), HOG_EPARAM);
    snprintf(s.path, sizeof(s.path), "%s/snap.hog", dir);
    cr_assert_eq(hog_trainer_set_snapshots(t, 1000, 0, on_snapshot, &s), 0);
    hog_model *m;
    hog_file_run fr;
    cr_assert_eq(hog_trainer_run_file(t, tr, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), 0, "%s", err);
    cr_assert(fr.streamed);
    cr_assert_not(hog_trainer_stopped(t));
    /* At the first window's end that is 1000 rows or more past the last
     * snapshot; none after the last window, whose model the run returns. */
    cr_assert_eq(s.n, 3u);
    const uint64_t at[] = {1600, 3200, 4800};
    for (unsigned i = 0; i < 3; i++)
        cr_assert_eq(s.rows[i], at[i], "snapshot %u: %llu rows", i, (unsigned long long)s.rows[i]);
    hog_model_free(m);
    close_run(&fr);

    /* The last is the model of its 4,800 rows: the same weights, bit for
     * bit, as one pass over those rows alone. */
    cr_assert_eq(hog_trainer_set_snapshots(t, 0, 0, NULL, NULL), 0);
    cr_assert_eq(hog_trainer_run_file(t, head, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), 0, "%s", err);
    hog_weights a, b;
    hog_model_weights(s.last, &a);
    hog_model_weights(m, &b);
    cr_assert_eq(a.outputs, 1u);
    const uint64_t both = HOG_MIN(a.features, b.features);
    cr_assert_geq(both, 290u);
    for (uint64_t j = 0; j < both; j++)
        cr_assert_eq(a.w[j], b.w[j], "feature %llu: %g in the snapshot, %g alone", (unsigned long long)j,
                     (double)a.w[j], (double)b.w[j]);
    for (uint64_t j = both; j < a.features; j++)
        cr_assert_eq(a.w[j], 0.0f);
    cr_assert_eq(a.bias[0], b.bias[0]);
    hog_model_free(m);
    close_run(&fr);

    /* Asked for (SIGUSR1's hog_trainer_snapshot), one is taken at the next
     * window's end; a run over several epochs takes none. */
    s.n = 0;
    cr_assert_eq(hog_trainer_set_snapshots(t, 0, 0, on_snapshot, &s), 0);
    hog_trainer_snapshot(t);
    cr_assert_eq(hog_trainer_run_file(t, tr, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(s.n, 1u);
    cr_assert_eq(s.rows[0], 800u);
    hog_model_free(m);
    close_run(&fr);
    hog_trainer_free(t);
    p.epochs = 2;
    p.holdout = 0;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    s.n = 0;
    cr_assert_eq(hog_trainer_set_snapshots(t, 100, 0, on_snapshot, &s), 0);
    cr_assert_eq(hog_trainer_run_file(t, tr, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(s.n, 0u);
    hog_model_free(m);
    close_run(&fr);
    hog_model_free(s.last);
    hog_trainer_free(t);
}

/* A warm start trains in one pass too: the model's classes and weights
 * from the start, about as well as reading the new rows whole. */
Test(train_stream, a_warm_start_trains_in_one_pass)
{
    char a[160], b[160], te[160];
    snprintf(a, sizeof(a), "%s", write_data("a.svm", 4000, 300, 20, 'b', 11));
    snprintf(b, sizeof(b), "%s", write_data("b.svm", 4000, 300, 20, 'b', 13));
    snprintf(te, sizeof(te), "%s", write_data("te.svm", 1000, 300, 20, 'b', 12));
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = 1;
    hog_file_run fr;
    hog_model *init = train_file(a, NULL, te, p, &fr);
    close_run(&fr);
    hog_model_info i0;
    hog_model_get_info(init, &i0);
    double acc[2];
    for (int stream = 0; stream <= 1; stream++) {
        p.stream = stream;
        hog_model *m = train_file_from(init, b, NULL, te, p, &fr);
        cr_assert_eq(fr.streamed, stream, "%s", fr.note);
        if (stream)
            cr_assert_eq(fr.train->info.blocks, 0, "one pass keeps no block");
        hog_model_info in;
        hog_model_get_info(m, &in);
        acc[stream] = in.test.accuracy;
        hog_model_free(m);
        close_run(&fr);
    }
    cr_log_info("warm start: test accuracy %.4f before, %.4f after one pass, %.4f after reading whole", i0.test.accuracy,
                acc[1], acc[0]);
    cr_assert_gt(acc[1], i0.test.accuracy, "the new rows taught the model: %g, %g before", acc[1], i0.test.accuracy);
    cr_assert_lt(fabs(acc[1] - acc[0]), 0.03, "one pass %g, whole %g", acc[1], acc[0]);
    hog_model_free(init);
}

/* Rows whose label is the XOR of two features (1 or 2, and 3 or 4) among
 * noise: no linear model learns it, their crosses do. */
static const char *write_xor(const char *name, int rows, uint64_t seed)
{
    static char path[160];
    FILE *f = create(name, path);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        const int a = 1 + (int)hog_rng_below(&r, 2), b = 3 + (int)hog_rng_below(&r, 2);
        fprintf(f, "%d %d:1 %d:1 %u:0.5\n", (a == 1) == (b == 3) ? 1 : -1, a, b, 10 + hog_rng_below(&r, 200));
    }
    cr_assert_eq(fclose(f), 0);
    return path;
}

static hog_model *train_hashed(const char *path, const char *test, hog_train_params p, unsigned bits,
                               hog_file_run *fr)
{
    hog_trainer *t;
    hog_model *m;
    char err[512] = "";
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 200;
    rp.hash_bits = bits;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run_file(t, path, &rp, NULL, test, &m, fr, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    return m;
}

/* Text hashed into 2^bits has every index below it before its first row:
 * crosses start there, and train in one pass; unhashed text is read whole. */
Test(train_stream, crosses_of_hashed_text_train_in_one_pass)
{
    char tr[160], te[160];
    snprintf(tr, sizeof(tr), "%s", write_xor("x.svm", 6000, 21));
    snprintf(te, sizeof(te), "%s", write_xor("xt.svm", 1000, 22));
    hog_train_params p = plain_params();
    p.threads = 1;
    p.epochs = 1;
    p.step = 0.5;
    p.interactions = "::";
    p.cross_bits = 10;
    hog_file_run fr;
    hog_model *m = train_hashed(tr, te, p, 12, &fr);
    cr_assert(fr.streamed, "%s", fr.note);
    cr_assert_eq(fr.train->info.blocks, 0, "one pass keeps no block");
    cr_assert_eq(m->cross.base, 4096);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_eq(in.features, 4096 + 1024);
    cr_assert_eq(in.train_rows, 6000);
    cr_assert_gt(in.test.accuracy, 0.97, "the crosses learn the XOR: %g", in.test.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Read whole first, the crosses start at the data's features: as good. */
    p.stream = 0;
    m = train_hashed(tr, te, p, 12, &fr);
    cr_assert(!fr.streamed);
    cr_assert_lt(m->cross.base, 4096);
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.97, "%g", in.test.accuracy);
    hog_model_free(m);
    close_run(&fr);

    /* Indices as written: only the whole file says where they end. */
    p.stream = 1;
    m = train_hashed(tr, te, p, 0, &fr);
    cr_assert(!fr.streamed);
    cr_assert(strstr(fr.note, "hash it"), "%s", fr.note);
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.97, "%g", in.test.accuracy);
    hog_model_free(m);
    close_run(&fr);
}
