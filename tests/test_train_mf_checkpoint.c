/* test_train_mf_checkpoint.c: matrix factorisation checkpoints: an interrupted one-thread run resumes to the same model bit for bit; damage, other parameters and other ratings are refused by name. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/train_mf.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("mf-ckpt");
}

TestSuite(mf_checkpoint, .init = setup, .fini = scratch_remove);

/* Seeded ratings of a rank-2 matrix with noise: n of them over 300 users
 * and 200 items, as "user item rating" lines. */
static hog_ratings *make_ratings(const char *name, unsigned n, uint64_t seed)
{
    char path[160];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {seed};
    for (unsigned t = 0; t < n; t++) {
        unsigned u = hog_rng_below(&r, 300), i = hog_rng_below(&r, 200);
        double v = 3 + sin(u) * cos(i) + 0.5 * sin(3.0 * u) * sin(2.0 * i) + 0.1 * (hog_rng_below(&r, 100) / 50.0 - 1);
        fprintf(f, "%u %u %.4f\n", u, i, v);
    }
    fclose(f);
    hog_ratings *rt;
    char err[256] = "";
    cr_assert_eq(hog_ratings_open(path, 0, &rt, err, sizeof(err)), 0, "%s", err);
    return rt;
}

/* The clock of the control's checkpoint interval: one second per read,
 * interrupting the run at read stop_at (see test_train_checkpoint.c). */
static hog_mf_control *clock_control;
static atomic_uint clock_reads;
static unsigned clock_stop_at;

static int clock_training; /* what hog_mf_interrupt answered: 1, epochs under way */

static double counting_clock(void)
{
    unsigned n = atomic_fetch_add(&clock_reads, 1) + 1;
    if (n == clock_stop_at)
        clock_training = hog_mf_interrupt(clock_control);
    return (double)n;
}

static char ckpt[160];

/* A control on the counting clock with its checkpoint at ckpt. */
static hog_mf_control *control(double every, int resume, unsigned stop_at)
{
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, ckpt, every, resume), 0);
    c->now = counting_clock;
    clock_control = c;
    atomic_store(&clock_reads, 0);
    clock_stop_at = stop_at;
    return c;
}

static hog_mf_params params(void)
{
    hog_mf_params p = hog_mf_params_default();
    p.rank = 4;
    p.threads = 1;
    p.epochs = 4;
    p.step = 0.02;
    p.holdout = 0.1;
    p.bind = 0;
    return p;
}

/* The last epoch's statistics of the last run, as its progress callback saw them. */
static hog_mf_epoch_stats last_epoch;

static void on_epoch(void *ctx, const hog_mf_epoch_stats *st)
{
    (void)ctx;
    last_epoch = *st;
}

static hog_mf_model *mf_train(const hog_ratings *rt, hog_mf_params p, hog_mf_control *c, int want)
{
    hog_mf_model *m = NULL;
    char err[512] = "";
    p.control = c;
    p.progress = on_epoch;
    memset(&last_epoch, 0, sizeof(last_epoch));
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), want, "%s", err);
    if (want == HOG_EINTERRUPTED)
        cr_assert(strstr(err, "interrupted") && strstr(err, ckpt), "%s", err);
    return m;
}

/* Biases and factors, bit for bit, and the metrics. */
static void assert_same(const hog_mf_model *a, const hog_mf_model *b)
{
    cr_assert_eq(a->info.users, b->info.users);
    cr_assert_eq(a->info.items, b->info.items);
    size_t np = (size_t)a->info.users * a->stride, nq = (size_t)a->info.items * a->stride;
    cr_assert(memcmp((const void *)a->p, (const void *)b->p, np * 4) == 0, "user factors differ");
    cr_assert(memcmp((const void *)a->q, (const void *)b->q, nq * 4) == 0, "item factors differ");
    cr_assert(memcmp((const void *)a->bu, (const void *)b->bu, a->info.users * 4) == 0, "user biases differ");
    cr_assert(memcmp((const void *)a->bi, (const void *)b->bi, a->info.items * 4) == 0, "item biases differ");
    cr_assert(a->info.test_rmse == b->info.test_rmse, "test rmse %.17g vs %.17g", a->info.test_rmse,
              b->info.test_rmse);
    cr_assert_eq(a->info.updates, b->info.updates);
}

/* 20,000 ratings, 18,000 trained: 18 segments an epoch. Under each step
 * schedule: AdaGrad's checkpoints carry its sums, the decay's none. */
static void resumed_one_thread_run_is_the_same(int step_schedule)
{
    snprintf(ckpt, sizeof(ckpt), "%s/mf.ckpt", dir);
    hog_ratings *rt = make_ratings("r.txt", 20000, 1);
    hog_mf_params p = params();
    p.step_schedule = step_schedule;
    hog_mf_model *whole = mf_train(rt, p, NULL, 0);
    const hog_mf_epoch_stats whole_last = last_epoch;
    const unsigned stops[] = {4, 19, 22, 40, 60};
    int inside = 0;
    for (size_t i = 0; i < HOG_ARRAY_LEN(stops); i++) {
        remove(ckpt);
        hog_mf_control *c = control(1e9, 0, stops[i]);
        clock_training = 0;
        cr_assert_null(mf_train(rt, p, c, HOG_EINTERRUPTED));
        cr_assert_eq(clock_training, 1, "stop %u came while no epoch was under way", stops[i]);
        hog_mf_control_free(c);
        mf_run_shape s = {&p, rt, NULL, 0, 0};
        mf_checkpoint ck;
        char err[256] = "";
        cr_assert_eq(hog_mf_checkpoint_read(ckpt, &s, &ck, err, sizeof(err)), 0, "%s", err);
        inside |= ck.at.segment > 0;
        cr_assert_eq(ck.sums_p != NULL, step_schedule == HOG_SCHEDULE_ADAGRAD, "AdaGrad's sums saved or not");
        hog_mf_checkpoint_free(&ck);
        c = control(1e9, 1, 0);
        hog_mf_model *resumed = mf_train(rt, p, c, 0);
        assert_same(whole, resumed);
        /* The last epoch's training error counts the updates before the stop too. */
        cr_assert_eq(last_epoch.epoch, 4u);
        cr_assert(last_epoch.train_rmse == whole_last.train_rmse, "train rmse %.17g vs %.17g",
                  last_epoch.train_rmse, whole_last.train_rmse);
        cr_assert(last_epoch.seconds > 0);
        hog_mf_free(resumed);
        hog_mf_control_free(c);
    }
    cr_assert(inside, "no stop fell inside an epoch");
    /* Timed checkpoints all along leave the run as it was, the last one of
     * the finished run, which resumes to the same model. */
    hog_mf_control *c = control(3, 0, 0);
    hog_mf_model *timed = mf_train(rt, p, c, 0);
    assert_same(whole, timed);
    hog_mf_control_free(c);
    p.threads = 2; /* nothing left to train, with any number of threads */
    c = control(0, 1, 0);
    hog_mf_model *again = mf_train(rt, p, c, 0);
    assert_same(whole, again);
    hog_mf_control_free(c);
    hog_mf_free(timed);
    hog_mf_free(again);
    hog_mf_free(whole);
    hog_ratings_close(rt);
}

Test(mf_checkpoint, a_resumed_one_thread_run_is_the_same_bit_for_bit)
{
    resumed_one_thread_run_is_the_same(HOG_SCHEDULE_ADAGRAD);
}

Test(mf_checkpoint, a_resumed_one_thread_run_of_the_decay_schedule_is_the_same_bit_for_bit)
{
    resumed_one_thread_run_is_the_same(HOG_SCHEDULE_DECAY);
}

/* With early stopping the checkpoint keeps the best epoch's RMSE, its
 * epoch, the epochs since and its model: a one-thread run interrupted
 * before a best epoch, after one, or after it stopped resumes to the
 * same kept model, bit for bit, stopping after the same epoch. 20,000
 * ratings of 300 users and 200 items, rank 16 and no L2: the holdout's
 * RMSE turns up after 34 epochs (36 run). */
Test(mf_checkpoint, a_resumed_run_that_stops_early_is_the_same_bit_for_bit)
{
    snprintf(ckpt, sizeof(ckpt), "%s/mf.ckpt", dir);
    hog_ratings *rt = make_ratings("r.txt", 20000, 7);
    hog_mf_params p = params();
    p.rank = 16;
    p.epochs = 60;
    p.step = 0.05;
    p.decay = 1;
    p.l2 = 0;
    p.l2_bias = 0;
    p.holdout = 0.2;
    p.early_stop = 2;
    hog_mf_model *whole = mf_train(rt, p, NULL, 0);
    unsigned run, best;
    hog_mf_get_epochs(whole, &run, &best);
    cr_assert(run < p.epochs && best + 2 == run && best > 1, "ran %u epochs, kept %u", run, best);
    cr_assert(whole->info.test_rmse < last_epoch.test_rmse, "kept %g, last epoch %g", whole->info.test_rmse,
              last_epoch.test_rmse);
    /* Interrupts at ever later reads of the clock, until one comes after
     * the run: that run ends as the whole one, its checkpoint finished. */
    unsigned seen_best = 0, seen_finished = 0;
    for (unsigned stop = 2; !seen_finished; stop += 97) {
        cr_assert_lt(stop, 10000u, "the run never ended before the interrupt");
        remove(ckpt);
        hog_mf_control *c = control(1e9, 0, stop);
        hog_mf_params pc = p;
        pc.control = c;
        hog_mf_model *cut = NULL;
        char err[512] = "";
        int rc = hog_mf_train(&pc, rt, NULL, &cut, err, sizeof(err));
        cr_assert(rc == 0 || rc == HOG_EINTERRUPTED, "%s", err);
        hog_mf_control_free(c);
        if (cut) {
            assert_same(whole, cut);
            hog_mf_free(cut);
        }
        mf_run_shape s = {&p, rt, NULL, 0, 0};
        mf_checkpoint ck;
        cr_assert_eq(hog_mf_checkpoint_read(ckpt, &s, &ck, err, sizeof(err)), 0, "%s", err);
        cr_assert_not_null(ck.best_p, "the best epoch's model is in the checkpoint");
        seen_best |= ck.at.best_epoch > 0 && !ck.at.finished;
        seen_finished |= ck.at.finished;
        hog_mf_checkpoint_free(&ck);
        c = control(1e9, 1, 0);
        hog_mf_model *resumed = mf_train(rt, p, c, 0);
        assert_same(whole, resumed);
        unsigned run2, best2;
        hog_mf_get_epochs(resumed, &run2, &best2);
        cr_assert(run2 == run && best2 == best, "stop %u: ran %u, kept %u; whole %u, %u", stop, run2, best2, run,
                  best);
        hog_mf_free(resumed);
        hog_mf_control_free(c);
    }
    cr_assert(seen_best, "no stop fell after a best epoch, inside the run");
    hog_mf_free(whole);
    hog_ratings_close(rt);
}

/* On several workers a grid run paused inside an epoch has trained a
 * prefix of the epoch's blocks: resumed on one worker or on five, every
 * rating is trained once an epoch, and the checkpoint's bands are kept
 * (five workers alone would choose more). */
Test(mf_checkpoint, a_grid_run_paused_on_several_workers_resumes_on_any_number)
{
    snprintf(ckpt, sizeof(ckpt), "%s/mf.ckpt", dir);
    hog_ratings *rt = make_ratings("r.txt", 20000, 1);
    hog_mf_params p = params();
    p.threads = 3;
    hog_mf_model *whole = mf_train(rt, p, NULL, 0);
    cr_assert_eq(whole->info.params.schedule, HOG_MF_GRID);
    const uint32_t bands = whole->info.params.grid;
    const unsigned stops[] = {4, 9, 15, 40, 90};
    int inside = 0;
    for (size_t i = 0; i < HOG_ARRAY_LEN(stops); i++) {
        remove(ckpt);
        hog_mf_control *c = control(1e9, 0, stops[i]);
        cr_assert_null(mf_train(rt, p, c, HOG_EINTERRUPTED));
        hog_mf_control_free(c);
        mf_run_shape s = {&p, rt, NULL, 0, 0};
        mf_checkpoint ck;
        char err[256] = "";
        cr_assert_eq(hog_mf_checkpoint_read(ckpt, &s, &ck, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(ck.segments, bands * bands, "the checkpoint's positions are the grid's blocks");
        inside |= ck.at.segment > 0;
        hog_mf_checkpoint_free(&ck);
        hog_mf_params q = p;
        q.threads = i % 2 ? 1 : 5;
        c = control(1e9, 1, 0);
        hog_mf_model *resumed = mf_train(rt, q, c, 0);
        cr_assert_eq(resumed->info.updates, whole->info.updates, "stop %u: %llu updates, %llu whole", stops[i],
                     (unsigned long long)resumed->info.updates, (unsigned long long)whole->info.updates);
        cr_assert_eq(resumed->info.params.grid, bands);
        cr_assert(fabs(resumed->info.test_rmse - whole->info.test_rmse) < 0.05, "test rmse %g, %g whole",
                  resumed->info.test_rmse, whole->info.test_rmse);
        hog_mf_free(resumed);
        hog_mf_control_free(c);
    }
    cr_assert(inside, "no stop fell inside an epoch");
    hog_mf_free(whole);
    hog_ratings_close(rt);
}

/* Rewrites the checkpoint at path as version v, its CRC-32 made anew. */
static int set_version(const char *path, uint32_t v)
{
    unsigned char *buf;
    size_t len;
    int rc = hog_read_file(path, &buf, &len);
    if (rc < 0)
        return rc;
    hog_put_u32(buf + 8, v);
    hog_put_u32(buf + len - 4, hog_crc32(0, buf, len - 4));
    FILE *f = fopen(path, "wb");
    rc = f && fwrite(buf, 1, len, f) == len ? 0 : -EIO;
    if (f)
        fclose(f);
    hog_free(buf);
    return rc;
}

/* Resumes p from ckpt on rt: it must fail with want, err naming says. */
static void refused(const hog_ratings *rt, hog_mf_params p, int want, const char *says1, const char *says2)
{
    hog_mf_control *c = control(0, 1, 0);
    hog_mf_model *m = NULL;
    char err[512] = "";
    p.control = c;
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), want, "%s", err);
    cr_assert_null(m);
    cr_assert(strstr(err, says1) && (!says2 || strstr(err, says2)), "'%s'", err);
    hog_mf_control_free(c);
}

Test(mf_checkpoint, damage_other_parameters_and_other_ratings_are_refused)
{
    snprintf(ckpt, sizeof(ckpt), "%s/mf.ckpt", dir);
    hog_ratings *rt = make_ratings("r.txt", 8000, 2);
    hog_mf_params p = params();
    hog_mf_control *c = control(1e9, 0, 6);
    cr_assert_null(mf_train(rt, p, c, HOG_EINTERRUPTED));
    hog_mf_control_free(c);
    hog_file_kind kind;
    cr_assert_eq(hog_file_probe(ckpt, &kind, NULL, 0), 0);
    cr_assert_eq(kind, HOG_FILE_MF_CHECKPOINT, "an MF checkpoint is known by its magic");
    hog_mf_params q = p;
    q.l2 = 0.01;
    refused(rt, q, HOG_EPARAM, "hog_mf_params.l2 = 0.1", "hog_mf_params.l2 = 0.01");
    q = p;
    q.step_schedule = HOG_SCHEDULE_DECAY; /* AdaGrad's sums would be lost */
    refused(rt, q, HOG_EPARAM, "hog_mf_params.step_schedule = 3", "hog_mf_params.step_schedule = 0");
    q = p;
    q.rank = 8;
    refused(rt, q, HOG_EPARAM, "hog_mf_params.rank = 4", "hog_mf_params.rank = 8");
    hog_ratings *other = make_ratings("o.txt", 8000, 3);
    refused(other, p, HOG_EPARAM, "other ratings", "hog_ratings_info.fingerprint");
    hog_mf_control *ct = control(0, 1, 0);
    hog_mf_model *m = NULL;
    char err[512] = "";
    hog_mf_params pt = p;
    pt.control = ct;
    cr_assert_eq(hog_mf_train(&pt, rt, other, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "made with no test set, this run has one"), "%s", err);
    hog_mf_control_free(ct);
    hog_ratings_close(other);
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "cp %s %s.good", ckpt, ckpt);
    cr_assert_eq(system(cmd), 0);
    flip_byte(ckpt, 100);
    refused(rt, p, HOG_ECHECKSUM, "checksum", NULL);
    snprintf(cmd, sizeof(cmd), "cp %s.good %s && truncate -s -1 %s", ckpt, ckpt, ckpt);
    cr_assert_eq(system(cmd), 0);
    refused(rt, p, HOG_ETRUNCATED, "truncated", NULL);
    snprintf(cmd, sizeof(cmd), "cp %s.good %s && printf HOGCHKPT | dd of=%s conv=notrunc status=none", ckpt, ckpt,
             ckpt);
    cr_assert_eq(system(cmd), 0);
    refused(rt, p, HOG_EMAGIC, "not a hogtrain matrix factorisation checkpoint", NULL);
    /* Version 1, from before early stopping, is the same bytes without its
     * keys: it resumes. A later version is refused by name. */
    snprintf(cmd, sizeof(cmd), "cp %s.good %s", ckpt, ckpt);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(set_version(ckpt, 1), 0);
    hog_mf_control *cv = control(0, 1, 0);
    hog_mf_model *v1 = mf_train(rt, p, cv, 0);
    hog_mf_free(v1);
    hog_mf_control_free(cv);
    cr_assert_eq(set_version(ckpt, 3), 0);
    refused(rt, p, HOG_EVERSION, "checkpoint version 3, this build reads versions 1 and 2", NULL);
    remove(ckpt);
    refused(rt, p, -ENOENT, "no checkpoint to resume from", NULL);
    hog_ratings_close(rt);
}

Test(mf_checkpoint, an_interrupt_without_a_checkpoint_saves_nothing)
{
    hog_ratings *rt = make_ratings("r.txt", 8000, 4);
    hog_mf_params p = params();
    p.threads = 2;
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    cr_assert_eq(hog_mf_interrupt(c), 0, "no run is under way");
    p.control = c;
    hog_mf_model *m = NULL;
    char err[256] = "";
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), HOG_EINTERRUPTED);
    cr_assert_null(m);
    cr_assert(strstr(err, "before epoch 1 of 4") && strstr(err, "nothing was saved"), "%s", err);
    /* The flag is spent: the next run trains, and its model's parameters
     * hold no control. */
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_mf_info in;
    hog_mf_get_info(m, &in);
    cr_assert_null(in.params.control);
    hog_mf_free(m);
    hog_mf_control_free(c);
    hog_ratings_close(rt);
}

Test(mf_checkpoint, settings_are_checked)
{
    hog_mf_control *c;
    cr_assert_eq(hog_mf_control_create(&c), 0);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, "x", -1, 0), HOG_EPARAM);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, NULL, 1, 1), HOG_EPARAM);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, "x", INFINITY, 0), HOG_EPARAM);
    cr_assert_eq(hog_mf_control_set_checkpoint(c, "x", 0, 1), 0);
    cr_assert_str_eq(c->ckpt_path, "x");
    cr_assert_eq(c->resume, 1);
    hog_mf_control_free(c);
    hog_mf_control_free(NULL);
}

Test(mf_checkpoint, a_multi_node_run_takes_no_checkpoint)
{
    char key[160], err[256] = "";
    snprintf(key, sizeof(key), "%s/key", dir);
    cr_assert_eq(hog_secret_keygen(key, err, sizeof(err)), 0, "%s", err);
    hog_link_params lp = hog_link_params_default();
    lp.rank = 0;
    lp.nodes = 2;
    lp.coordinator = "127.0.0.1:9";
    lp.secret = key;
    hog_link *l;
    cr_assert_eq(hog_link_create(&lp, &l, err, sizeof(err)), 0, "%s", err);
    hog_ratings *rt = make_ratings("r.txt", 4000, 5);
    snprintf(ckpt, sizeof(ckpt), "%s/mf.ckpt", dir);
    hog_mf_control *c = control(300, 0, 0);
    hog_mf_params p = params();
    p.link = l;
    p.control = c;
    hog_mf_model *m = NULL;
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "multi-node run takes no checkpoint"), "%s", err);
    cr_assert_null(m);
    /* Nor early stopping: each rank would keep its own best epoch. */
    p.control = NULL;
    p.early_stop = 2;
    cr_assert_eq(hog_mf_train(&p, rt, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "multi-node run takes no hog_mf_params.early_stop"), "%s", err);
    cr_assert_null(m);
    hog_mf_control_free(c);
    hog_link_free(l);
    hog_ratings_close(rt);
}
