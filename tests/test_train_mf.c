/* test_train_mf.c: matrix factorisation: recovery of a known low-rank matrix, the SGD step's gradient, determinism, the model file and predictions. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train/train_mf.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("mf");
}

TestSuite(mf, .init = setup, .fini = scratch_remove);

static char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static double normal(hog_rng *r)
{
    double u1 = 1.0 - (double)(hog_rng_next(r) >> 11) * 0x1p-53;
    double u2 = (double)(hog_rng_next(r) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A rank-k matrix with biases and N(0, noise^2) noise, n ratings of
 * uniform (user, item) pairs, written as "uU,iI,rating" text (string names). */
static void write_low_rank(const char *name, unsigned users, unsigned items, unsigned k, unsigned n, double noise,
                           uint64_t seed)
{
    hog_rng r = {seed};
    double *p = malloc(sizeof(double) * users * k), *q = malloc(sizeof(double) * items * k);
    double *bu = malloc(sizeof(double) * users), *bi = malloc(sizeof(double) * items);
    double sd = pow(k, -0.25);
    for (unsigned i = 0; i < users * k; i++)
        p[i] = sd * normal(&r);
    for (unsigned i = 0; i < items * k; i++)
        q[i] = sd * normal(&r);
    for (unsigned i = 0; i < users; i++)
        bu[i] = 0.3 * normal(&r);
    for (unsigned i = 0; i < items; i++)
        bi[i] = 0.3 * normal(&r);
    FILE *f = fopen(path_of(name), "w");
    cr_assert_not_null(f);
    fprintf(f, "user,item,rating\n");
    for (unsigned t = 0; t < n; t++) {
        unsigned u = hog_rng_below(&r, users), i = hog_rng_below(&r, items);
        double v = 3.5 + bu[u] + bi[i];
        for (unsigned c = 0; c < k; c++)
            v += p[u * k + c] * q[i * k + c];
        fprintf(f, "u%u,i%u,%.6f\n", u, i, v + noise * normal(&r));
    }
    fclose(f);
    free(p);
    free(q);
    free(bu);
    free(bi);
}

/* The settings that recover write_low_rank's rank-4 matrix: threads
 * workers, epochs passes, a tenth held out. */
static hog_mf_params low_rank_params(unsigned threads, unsigned epochs, int step_schedule)
{
    hog_mf_params p = hog_mf_params_default();
    p.rank = 4;
    p.threads = threads;
    p.epochs = epochs;
    p.step_schedule = step_schedule;
    /* AdaGrad's steps shrink as a row's gradients add up: it starts larger. */
    p.step = step_schedule == HOG_SCHEDULE_ADAGRAD ? 0.1 : 0.02;
    p.decay = 0.97;
    p.l2 = 0.002;
    p.l2_bias = 0.001;
    p.holdout = 0.1;
    p.bind = 0;
    return p;
}

static hog_ratings *open_ok(const char *name, int pairs)
{
    hog_ratings *r = NULL;
    char err[512] = "";
    int rc = hog_ratings_open(path_of(name), pairs, &r, err, sizeof(err));
    cr_assert_eq(rc, 0, "open %s: %d %s", name, rc, err);
    return r;
}

static void recovers_a_low_rank_matrix(int step_schedule)
{
    write_low_rank("lr.csv", 400, 300, 4, 60000, 0.1, 11);
    hog_ratings *r = open_ok("lr.csv", 0);
    hog_ratings_info ri;
    hog_ratings_get_info(r, &ri);
    cr_assert_eq(ri.ratings, 60000);
    cr_assert_eq(ri.users, 400);
    cr_assert_eq(ri.items, 300);
    hog_mf_params p = low_rank_params(2, 40, step_schedule);
    hog_mf_model *m = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_train(&p, r, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_mf_info in;
    hog_mf_get_info(m, &in);
    /* Noise 0.1 is the floor; predicting the mean alone would give about 1.1. */
    cr_assert_lt(in.test_rmse, 0.13, "test rmse %g", in.test_rmse);
    cr_assert_gt(in.test_rmse, 0.08, "test rmse %g below the noise: the holdout leaks", in.test_rmse);
    cr_assert_lt(in.train_rmse, 0.12, "train rmse %g", in.train_rmse);
    cr_assert(in.test_ratings > 5000 && in.test_ratings < 7000);
    cr_assert_eq(in.train_ratings + in.test_ratings, 60000);
    cr_assert_eq(in.updates, (uint64_t)in.train_ratings * 40);
    hog_mf_free(m);
    hog_ratings_close(r);
}

Test(mf, recovers_a_low_rank_matrix_to_the_noise_level)
{
    recovers_a_low_rank_matrix(HOG_SCHEDULE_ADAGRAD);
}

Test(mf, the_decay_schedule_recovers_it_too)
{
    recovers_a_low_rank_matrix(HOG_SCHEDULE_DECAY);
}

Test(mf, step_moves_each_parameter_down_its_gradient)
{
    enum { K = 5 };
    float p[K] = {0.3f, -0.2f, 0.5f, 0.1f, -0.4f}, q[K] = {-0.1f, 0.6f, 0.2f, -0.3f, 0.25f};
    const double mean = 3.2, r = 4.5, l2 = 0.05, l2b = 0.02, h = 1e-3;
    float bu = 0.15f, bi = -0.05f;
    /* Numerical gradient of the per-rating loss by central differences, in double. */
    double g[2 * K + 2];
    for (int j = 0; j < 2 * K + 2; j++) {
        float pp[K], qq[K];
        double v[2], a[2];
        for (int s = 0; s < 2; s++) {
            memcpy(pp, p, sizeof(p));
            memcpy(qq, q, sizeof(q));
            double b1 = bu, b2 = bi, d = s ? -h : h;
            float eps = (float)d;
            if (j < K) pp[j] += eps;
            else if (j < 2 * K) qq[j - K] += eps;
            else if (j == 2 * K) b1 += d;
            else b2 += d;
            /* the float perturbation as actually applied */
            a[s] = j < K ? (double)pp[j] - (double)p[j] : j < 2 * K ? (double)qq[j - K] - (double)q[j - K] : d;
            v[s] = hog_mf_rating_loss(K, mean, b1, b2, pp, qq, r, l2, l2b);
        }
        g[j] = (v[0] - v[1]) / (a[0] - a[1]);
    }
    float p1[K], q1[K], bu1 = bu, bi1 = bi;
    memcpy(p1, p, sizeof(p));
    memcpy(q1, q, sizeof(q));
    const float step = 0.01f;
    float e = hog_mf_step(K, (float)mean, &bu1, &bi1, p1, q1, (float)r, step, (float)l2, (float)l2b);
    double dot = 0;
    for (int f = 0; f < K; f++)
        dot += (double)p[f] * (double)q[f];
    cr_assert_float_eq((double)e, r - (mean + (double)bu + (double)bi + dot), 1e-5);
    for (int j = 0; j < 2 * K + 2; j++) {
        double moved = j < K ? (double)p1[j] - (double)p[j] : j < 2 * K ? (double)q1[j - K] - (double)q[j - K]
                     : j == 2 * K ? (double)bu1 - (double)bu : (double)bi1 - (double)bi;
        double want = -(double)step * g[j];
        cr_assert(fabs(moved - want) <= 2e-3 * fabs(want) + 2e-7, "parameter %d moved %.9g, -step*gradient %.9g", j,
                  moved, want);
    }
    /* And a small step lowers the loss. */
    cr_assert_lt(hog_mf_rating_loss(K, mean, bu1, bi1, p1, q1, r, l2, l2b),
                 hog_mf_rating_loss(K, mean, bu, bi, p, q, r, l2, l2b));

    /* AdaGrad's step: the user's parameters move by -step / sqrt(gu) times
     * their gradients, the item's by -step / sqrt(gi), and each sum then
     * adds its row's mean squared factor gradient. */
    const float gu = 2.5f, gi = 7.0f;
    float gu1 = gu, gi1 = gi, pa[8] = {0}, qa[8] = {0}, bua = bu, bia = bi;
    memcpy(pa, p, sizeof(p)); /* k is the stride, a multiple of 4: the padding stays zero */
    memcpy(qa, q, sizeof(q));
    float ea = hog_mf_step_adagrad(8, (float)mean, &bua, &bia, &gu1, &gi1, pa, qa, (float)r, step, (float)l2,
                                   (float)l2b, 1.0f / K);
    cr_assert_float_eq((double)ea, (double)e, 1e-6);
    double sq_p = 0, sq_q = 0;
    for (int j = 0; j < 2 * K + 2; j++) {
        double rate = (double)step / sqrt((double)(j < K || j == 2 * K ? gu : gi));
        double moved = j < K ? (double)pa[j] - (double)p[j] : j < 2 * K ? (double)qa[j - K] - (double)q[j - K]
                     : j == 2 * K ? (double)bua - (double)bu : (double)bia - (double)bi;
        cr_assert(fabs(moved + rate * g[j]) <= 2e-3 * fabs(rate * g[j]) + 2e-7,
                  "parameter %d moved %.9g, -step/sqrt(G)*gradient %.9g", j, moved, -rate * g[j]);
        if (j < K)
            sq_p += g[j] * g[j];
        else if (j < 2 * K)
            sq_q += g[j] * g[j];
    }
    for (int c = K; c < 8; c++)
        cr_assert(pa[c] == 0.0f && qa[c] == 0.0f, "padding moved");
    const double want_gu = (double)gu + sq_p / K, want_gi = (double)gi + sq_q / K;
    cr_assert_float_eq((double)gu1, want_gu, 1e-4 * want_gu);
    cr_assert_float_eq((double)gi1, want_gi, 1e-4 * want_gi);
}

static int small_schedule = HOG_MF_GRID;

static hog_mf_model *train_small(const hog_ratings *r, unsigned threads, uint64_t seed)
{
    hog_mf_params p = hog_mf_params_default();
    p.schedule = small_schedule;
    p.rank = 6;
    p.threads = threads;
    p.epochs = 5;
    p.seed = seed;
    p.holdout = 0.2;
    p.bind = 0;
    hog_mf_model *m = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_train(&p, r, NULL, &m, err, sizeof(err)), 0, "%s", err);
    return m;
}

/* Both schedules recover the matrix on one thread and on three, train
 * every rating once an epoch, and the model says which schedule ran. */
Test(mf, both_schedules_recover_a_low_rank_matrix)
{
    write_low_rank("sched.csv", 400, 300, 4, 60000, 0.1, 12);
    hog_ratings *r = open_ok("sched.csv", 0);
    const int schedules[] = {HOG_MF_GRID, HOG_MF_HOGWILD};
    for (size_t s = 0; s < HOG_ARRAY_LEN(schedules); s++)
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            hog_mf_params p = low_rank_params(threads, 30, HOG_SCHEDULE_ADAGRAD);
            p.schedule = schedules[s];
            hog_mf_model *m = NULL;
            char err[512] = "";
            cr_assert_eq(hog_mf_train(&p, r, NULL, &m, err, sizeof(err)), 0, "%s", err);
            hog_mf_info in;
            hog_mf_get_info(m, &in);
            cr_assert_lt(in.test_rmse, 0.13, "schedule %d, %u threads: test rmse %g", p.schedule, threads,
                         in.test_rmse);
            cr_assert_eq(in.updates, (uint64_t)in.train_ratings * 30);
            cr_assert_eq(in.params.schedule, p.schedule);
            /* The grid's bands as run: 54,000 ratings make blocks of at least 256 on average. */
            if (p.schedule == HOG_MF_GRID)
                cr_assert(in.params.grid >= 2 * threads + 1 && in.params.grid <= 14, "%u bands", in.params.grid);
            else
                cr_assert_eq(in.params.grid, 0u);
            hog_mf_free(m);
        }
    hog_ratings_close(r);
}

/* Compares every prediction of two models bit for bit; returns the count that differ. */
static unsigned differing(const hog_mf_model *a, const hog_mf_model *b)
{
    hog_mf_info ia, ib;
    hog_mf_get_info(a, &ia);
    hog_mf_get_info(b, &ib);
    cr_assert_eq(ia.users, ib.users);
    unsigned diff = 0;
    for (int64_t u = 0; u < ia.users; u++)
        for (int64_t i = 0; i < ia.items; i++) {
            double x = hog_mf_predict_id(a, u, i), y = hog_mf_predict_id(b, u, i);
            diff += memcmp(&x, &y, sizeof(x)) != 0;
        }
    return diff;
}

Test(mf, one_thread_is_deterministic)
{
    write_low_rank("det.csv", 60, 40, 3, 3000, 0.2, 5);
    hog_ratings *r = open_ok("det.csv", 0);
    hog_mf_model *a = train_small(r, 1, 7), *b = train_small(r, 1, 7), *c = train_small(r, 1, 8);
    cr_assert_eq(differing(a, b), 0);
    hog_mf_info ia, ib;
    hog_mf_get_info(a, &ia);
    hog_mf_get_info(b, &ib);
    cr_assert_eq(memcmp(&ia.train_rmse, &ib.train_rmse, sizeof(double)), 0);
    cr_assert_eq(memcmp(&ia.test_rmse, &ib.test_rmse, sizeof(double)), 0);
    cr_assert_gt(differing(a, c), 1000, "another seed should give another model");
    hog_mf_free(a);
    hog_mf_free(b);
    hog_mf_free(c);
    hog_ratings_close(r);
}

Test(mf, one_thread_of_the_segment_schedule_is_deterministic_too)
{
    write_low_rank("det2.csv", 60, 40, 3, 3000, 0.2, 5);
    hog_ratings *r = open_ok("det2.csv", 0);
    small_schedule = HOG_MF_HOGWILD;
    hog_mf_model *a = train_small(r, 1, 7), *b = train_small(r, 1, 7), *grid;
    small_schedule = HOG_MF_GRID;
    grid = train_small(r, 1, 7);
    cr_assert_eq(differing(a, b), 0);
    cr_assert_gt(differing(a, grid), 1000, "the two schedules should train in other orders");
    hog_mf_free(a);
    hog_mf_free(b);
    hog_mf_free(grid);
    hog_ratings_close(r);
}

Test(mf, model_round_trips_and_damage_is_refused)
{
    write_low_rank("rt.csv", 50, 30, 3, 2000, 0.2, 9);
    hog_ratings *r = open_ok("rt.csv", 0);
    hog_mf_model *m = train_small(r, 2, 3);
    const char *path = path_of("m.mf");
    cr_assert_eq(hog_mf_save(m, path), 0);
    hog_mf_model *l = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_load(path, &l, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(differing(m, l), 0);
    hog_mf_info a, b;
    hog_mf_get_info(m, &a);
    hog_mf_get_info(l, &b);
    cr_assert_eq(a.rank, b.rank);
    cr_assert_eq(a.params.epochs, b.params.epochs);
    cr_assert_eq(a.params.step, b.params.step);
    cr_assert_eq(a.params.seed, b.params.seed);
    cr_assert_eq(a.mean, b.mean);
    cr_assert_eq(a.test_rmse, b.test_rmse);
    cr_assert_eq(a.train_ratings, b.train_ratings);
    cr_assert_eq(a.data_fingerprint, b.data_fingerprint);
    /* Names map to the same ids, and unknown names fall back to the biases. */
    cr_assert_eq(hog_mf_user_id(l, "u7"), hog_mf_user_id(m, "u7"));
    cr_assert_geq(hog_mf_user_id(l, "u7"), 0);
    cr_assert_eq(hog_mf_user_id(l, "nobody"), -1);
    int64_t i3 = hog_mf_item_id(l, "i3");
    cr_assert_float_eq(hog_mf_predict(l, "nobody", "i3"), hog_mf_predict_id(l, -1, i3), 1e-12);
    cr_assert_float_eq(hog_mf_predict(l, "nobody", "nothing"), (double)(float)b.mean, 1e-6);
    hog_mf_free(l);

    /* A flipped bit in the factors, a truncation, another magic. */
    flip_byte(path, -9);
    cr_assert_eq(hog_mf_load(path, &l, err, sizeof(err)), HOG_ECHECKSUM);
    cr_assert(strstr(err, "checksum"), "%s", err);
    cr_assert_eq(hog_mf_save(m, path), 0);
    cr_assert_eq(truncate(path, 100), 0);
    cr_assert_eq(hog_mf_load(path, &l, err, sizeof(err)), HOG_ETRUNCATED);
    cr_assert(strstr(err, "truncated"), "%s", err);
    flip_byte(path, 0);
    cr_assert_eq(hog_mf_load(path, &l, err, sizeof(err)), HOG_EMAGIC);
    cr_assert_null(l);
    hog_mf_free(m);
    hog_ratings_close(r);
}

/* A NaN under a valid checksum is refused at load; a model holding one is
 * never saved. */
Test(mf, non_finite_factors_are_never_saved_or_loaded)
{
    write_low_rank("nf.csv", 20, 12, 2, 300, 0.2, 5);
    hog_ratings *r = open_ok("nf.csv", 0);
    hog_mf_model *m = train_small(r, 1, 4);
    const char *path = path_of("nf.mf");
    cr_assert_eq(hog_mf_save(m, path), 0);

    /* the last item factor (4 bytes before the CRC), resealed */
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    unsigned char *buf = malloc((size_t)len);
    fseek(f, 0, SEEK_SET);
    cr_assert_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    float nan_f = NAN;
    memcpy(buf + len - 8, &nan_f, 4);
    hog_put_u32(buf + len - 4, hog_crc32(0, buf, (size_t)len - 4));
    fseek(f, 0, SEEK_SET);
    cr_assert_eq(fwrite(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    free(buf);
    hog_mf_model *l = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_load(path, &l, err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "an item factor is not finite"), "%s", err);
    cr_assert_null(l);

    unlink(path);
    hog_w_store(&m->bu[0], INFINITY);
    cr_assert_eq(hog_mf_save(m, path), HOG_ENONFINITE);
    cr_assert_eq(access(path, F_OK), -1, "a model with an infinite bias was written");
    hog_mf_free(m);
    hog_ratings_close(r);
}

Test(mf, pairs_files_are_predicted_in_order)
{
    write_low_rank("pp.csv", 30, 20, 2, 1000, 0.1, 4);
    hog_ratings *r = open_ok("pp.csv", 0);
    hog_mf_model *m = train_small(r, 1, 1);
    write_text("pairs.txt", "u1 i2\nu3,i4\nstranger i2\n");
    hog_ratings *pr = open_ok("pairs.txt", 1);
    hog_ratings_info pi;
    hog_ratings_get_info(pr, &pi);
    cr_assert_eq(pi.has_ratings, 0);
    cr_assert_eq(pi.ratings, 3);
    float out[3];
    double rmse = 0;
    cr_assert_eq(hog_mf_predict_ratings(m, pr, out, &rmse), 0);
    cr_assert(isnan(rmse));
    cr_assert_eq((double)out[0], hog_mf_predict(m, "u1", "i2"));
    cr_assert_eq((double)out[1], hog_mf_predict(m, "u3", "i4"));
    cr_assert_eq((double)out[2], hog_mf_predict_id(m, -1, hog_mf_item_id(m, "i2")));
    /* A pairs file is no training set. */
    hog_mf_params p = hog_mf_params_default();
    hog_mf_model *x = NULL;
    char err[256];
    cr_assert_eq(hog_mf_train(&p, pr, NULL, &x, err, sizeof(err)), HOG_ELABEL);
    p.rank = 0;
    cr_assert_eq(hog_mf_train(&p, r, NULL, &x, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_mf_params.rank"), "%s", err);
    hog_ratings_close(pr);
    hog_mf_free(m);
    hog_ratings_close(r);
}

/* Every epoch's test RMSE, as the progress callback saw them. */
static double epoch_rmse[200];
static unsigned epochs_seen;

static void record_epoch(void *ctx, const hog_mf_epoch_stats *st)
{
    (void)ctx;
    cr_assert(st->epoch >= 1 && st->epoch <= HOG_ARRAY_LEN(epoch_rmse));
    epoch_rmse[st->epoch - 1] = st->test_rmse;
    epochs_seen = st->epoch;
}

/* Few ratings, a large rank and no L2: the test RMSE falls, then rises as
 * the factors fit the training noise. Early stopping ends the run K epochs
 * after the lowest and keeps that epoch's biases and factors: the model
 * predicts the test set with the RMSE that epoch measured. */
Test(mf, early_stopping_stops_and_keeps_the_best_epochs_model)
{
    /* 2,100 ratings of one matrix: the first 1,500 to train on, the rest to test. */
    write_low_rank("all.csv", 60, 50, 2, 2100, 0.3, 5);
    FILE *src = fopen(path_of("all.csv"), "r"), *tr = fopen(path_of("ov.csv"), "w"), *te = fopen(path_of("ovt.csv"), "w");
    cr_assert(src && tr && te);
    char line[128];
    for (unsigned n = 0; fgets(line, sizeof(line), src); n++) {
        if (n == 0 || n <= 1500)
            fputs(line, tr);
        if (n == 0 || n > 1500)
            fputs(line, te);
    }
    fclose(src);
    fclose(tr);
    fclose(te);
    hog_ratings *r = open_ok("ov.csv", 0), *t = open_ok("ovt.csv", 0);
    hog_mf_params p = hog_mf_params_default();
    p.rank = 32;
    p.threads = 1;
    p.bind = 0;
    p.epochs = 200;
    p.decay = 1;
    p.l2 = 0;
    p.l2_bias = 0;
    p.early_stop = 3;
    p.progress = record_epoch;
    hog_mf_model *m = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_train(&p, r, t, &m, err, sizeof(err)), 0, "%s", err);
    unsigned run, best;
    hog_mf_get_epochs(m, &run, &best);
    cr_assert_eq(run, epochs_seen);
    cr_assert_lt(run, p.epochs, "the test rmse never stopped falling in %u epochs", run);
    cr_assert_eq(best + p.early_stop, run, "stopped %u epochs after the best, %u", run - best, best);
    for (unsigned e = 0; e < run; e++)
        cr_assert(e + 1 == best || epoch_rmse[e] >= epoch_rmse[best - 1], "epoch %u's rmse %.6f is below epoch %u's %.6f",
                  e + 1, epoch_rmse[e], best, epoch_rmse[best - 1]);
    cr_assert_gt(epoch_rmse[run - 1], epoch_rmse[best - 1]);
    hog_mf_info in;
    hog_mf_get_info(m, &in);
    cr_assert(in.test_rmse == epoch_rmse[best - 1], "%.17g vs %.17g", in.test_rmse, epoch_rmse[best - 1]);
    cr_assert_eq(in.params.early_stop, 3u);
    float *pred = malloc(600 * sizeof(float));
    double rmse;
    cr_assert_eq(hog_mf_predict_ratings(m, t, pred, &rmse), 0);
    cr_assert(fabs(rmse - epoch_rmse[best - 1]) < 1e-6, "the kept model's rmse %.9f, the best epoch's %.9f", rmse,
              epoch_rmse[best - 1]);
    free(pred);
    /* The model file keeps the epochs; the same run without early stopping
     * trains every epoch and ends worse. */
    cr_assert_eq(hog_mf_save(m, path_of("ov.mf")), 0);
    hog_mf_model *back = NULL;
    cr_assert_eq(hog_mf_load(path_of("ov.mf"), &back, err, sizeof(err)), 0, "%s", err);
    unsigned run2, best2;
    hog_mf_get_epochs(back, &run2, &best2);
    cr_assert(run2 == run && best2 == best, "loaded %u, %u", run2, best2);
    hog_mf_free(back);
    p.early_stop = 0;
    p.epochs = run;
    hog_mf_model *all = NULL;
    cr_assert_eq(hog_mf_train(&p, r, t, &all, err, sizeof(err)), 0, "%s", err);
    hog_mf_get_epochs(all, &run2, &best2);
    cr_assert(run2 == run && best2 == run, "%u, %u", run2, best2);
    hog_mf_info ia;
    hog_mf_get_info(all, &ia);
    cr_assert(ia.test_rmse == epoch_rmse[run - 1], "%.17g vs %.17g", ia.test_rmse, epoch_rmse[run - 1]);
    hog_mf_free(all);
    hog_mf_free(m);
    hog_ratings_close(t);
    hog_ratings_close(r);
}

/* Early stopping needs something to measure on, and one machine. */
Test(mf, early_stopping_without_a_test_set_is_refused)
{
    write_low_rank("es.csv", 20, 20, 2, 200, 0.1, 3);
    hog_ratings *r = open_ok("es.csv", 0);
    hog_mf_params p = low_rank_params(1, 3, HOG_SCHEDULE_ADAGRAD);
    p.holdout = 0;
    p.early_stop = 2;
    hog_mf_model *m = NULL;
    char err[512] = "";
    cr_assert_eq(hog_mf_train(&p, r, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_mf_params.early_stop needs a test set or hog_mf_params.holdout"), "%s", err);
    cr_assert_null(m);
    const char *field = NULL;
    p.early_stop = 1000001;
    cr_assert_eq(hog_mf_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "early_stop");
    hog_ratings_close(r);
}
