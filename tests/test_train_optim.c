/* test_train_optim.c: schedules, normalized updates, L1/L2/elastic net against full-batch references, early stopping, averaging, the modified Huber and quantile losses. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"

static void setup(void)
{
    scratch_make("optim");
}

TestSuite(optim, .init = setup, .fini = scratch_remove);

/* Writes a seeded libsvm file: rows with nnz of d features, the true model
 * w*_j = sin(j); feature j's values are multiplied by scale[j % 3] (features
 * of very different ranges). kind 'b': a +1/-1 label, flipped with
 * probability flip (noise, so the penalties matter); 'c': the class 1..3
 * whose score (true model sin(j * c)) is largest; 'r': a real target,
 * 2 * score + 0.5 plus uniform noise of half-width noise. */
static hog_dataset *make_data(const char *name, int rows, int d, int nnz, char kind, double flip, double noise,
                              const double scale[3], uint64_t seed)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        int idx[64];
        float val[64];
        int step = d / nnz;
        double s = 0, s2 = 0, s3 = 0;
        for (int k = 0; k < nnz; k++) {
            idx[k] = 1 + k * step + (int)hog_rng_below(&r, (uint32_t)step);
            val[k] = (float)((double)hog_rng_below(&r, 2000) / 1000.0 - 1.0);
            s += sin(idx[k]) * (double)val[k];
            s2 += sin(2.0 * idx[k]) * (double)val[k];
            s3 += sin(3.0 * idx[k]) * (double)val[k];
        }
        double u = (double)hog_rng_below(&r, 1000000) / 1e6;
        if (kind == 'b')
            fprintf(f, "%s", (s > 0) != (u < flip) ? "+1" : "-1");
        else if (kind == 'c')
            fprintf(f, "%d", s > s2 && s > s3 ? 1 : s2 > s3 ? 2 : 3);
        else
            fprintf(f, "%.6f", 2.0 * s + 0.5 + noise * (2.0 * u - 1.0));
        for (int k = 0; k < nnz; k++)
            fprintf(f, " %d:%.6g", idx[k], (double)val[k] * (scale ? scale[idx[k] % 3] : 1.0));
        fprintf(f, "\n");
    }
    fclose(f);
    return open_written(path);
}


/* ===================================================================== *
 *  The reference: slow, simple, full batch
 * ===================================================================== */
/* Full-batch objective: mean logistic loss + l2/2 |w|^2 + l1 |w|_1, the
 * bias unpenalised. */
static double objective(const hog_dataset *ds, const double *w, double b, double l2, double l1, uint64_t d)
{
    double sum = 0;
    for (uint64_t i = 0; i < ds->info.rows; i++) {
        hog_row r = hog_dataset_row(ds, i);
        double m = b;
        for (uint32_t k = 0; k < r.nnz; k++)
            m += w[r.index[k]] * (double)r.value[k];
        double z = (r.label > 0 ? 1 : -1) * m;
        sum += z > 0 ? log1p(exp(-z)) : log1p(exp(z)) - z;
    }
    double reg = 0, abs1 = 0;
    for (uint64_t j = 0; j < d; j++) {
        reg += w[j] * w[j];
        abs1 += fabs(w[j]);
    }
    return sum / (double)ds->info.rows + 0.5 * l2 * reg + l1 * abs1;
}

/* Proximal gradient descent (ISTA) on that objective, from zero, with a
 * fixed step: plain gradient descent when l1 is 0. Fills w (d) and *b. */
static void reference(const hog_dataset *ds, double l2, double l1, double eta, int iters, double *w, double *b)
{
    uint64_t d = ds->info.features;
    double *g = calloc(d, sizeof(double));
    cr_assert_not_null(g);
    memset(w, 0, d * sizeof(double));
    *b = 0;
    double n = (double)ds->info.rows;
    for (int it = 0; it < iters; it++) {
        memset(g, 0, d * sizeof(double));
        double gb = 0;
        for (uint64_t i = 0; i < ds->info.rows; i++) {
            hog_row r = hog_dataset_row(ds, i);
            double m = *b;
            for (uint32_t k = 0; k < r.nnz; k++)
                m += w[r.index[k]] * (double)r.value[k];
            double y = r.label > 0 ? 1 : -1;
            double s = -y / (1 + exp(y * m));
            for (uint32_t k = 0; k < r.nnz; k++)
                g[r.index[k]] += s * (double)r.value[k];
            gb += s;
        }
        for (uint64_t j = 0; j < d; j++) {
            double v = w[j] - eta * (g[j] / n + l2 * w[j]);
            double t = eta * l1;
            w[j] = v > t ? v - t : (v < -t ? v + t : 0.0);
        }
        *b -= eta * gb / n;
    }
    free(g);
}

static double model_objective(const hog_model *m, const hog_dataset *ds, double l2, double l1)
{
    uint64_t d = ds->info.features;
    double *w = calloc(d, sizeof(double));
    cr_assert_not_null(w);
    for (uint64_t j = 0; j < d && j < m->dim; j++)
        w[j] = (double)hog_w_load(&m->w[j]);
    double v = objective(ds, w, (double)hog_w_load(&m->bias[0]), l2, l1, d);
    free(w);
    return v;
}

static uint64_t count_nonzero(const double *w, uint64_t d)
{
    uint64_t n = 0;
    for (uint64_t j = 0; j < d; j++)
        n += w[j] != 0.0;
    return n;
}

static uint64_t count_nonzero_model(const hog_model *m)
{
    uint64_t n = 0;
    for (uint64_t j = 0; j < m->dim * m->outputs; j++)
        n += hog_w_load(&m->w[j]) != 0.0f;
    return n;
}

/* The data every reference test uses: 2000 rows, 60 features, 6 per row,
 * 10% of the labels flipped. */
static hog_dataset *ref_data(void)
{
    return make_data("ref.svm", 2000, 60, 6, 'b', 0.1, 0, NULL, 9);
}

/* Trains p on the reference data and checks the objective it reaches
 * against the full-batch optimum: not below it (beyond rounding), and above
 * it by at most rel of the way from the zero model's objective (log 2) to
 * the optimum. Returns the model. */
static hog_model *reaches_reference(hog_train_params p, double rel, double *ref_w, uint64_t *ref_nnz)
{
    hog_dataset *tr = ref_data();
    uint64_t d = tr->info.features;
    double *w = calloc(d, sizeof(double)), b;
    cr_assert_not_null(w);
    reference(tr, p.l2, p.l1, 2.0, 3000, w, &b);
    double ref = objective(tr, w, b, p.l2, p.l1, d);
    double gap = log(2.0) - ref;
    cr_assert_gt(gap, 0.01, "the optimum %.8g is hardly better than the zero model", ref);
    hog_model *m = train(tr, NULL, p);
    double got = model_objective(m, tr, p.l2, p.l1);
    cr_assert(got >= ref - 1e-6, "SGD beat the optimum? %.8g < %.8g", got, ref);
    if (getenv("HOG_TEST_VERBOSE"))
        fprintf(stderr, "%s%s l2 %g l1 %g: objective %.8g, the optimum %.8g: %.3g%% of the gap\n",
                hog_schedule_name(p.schedule), p.normalized ? " normalized" : "", p.l2, p.l1, got, ref,
                100 * (got - ref) / gap);
    cr_assert_lt(got - ref, rel * gap, "%s%s: objective %.8g, the optimum %.8g (%.3g%% of the gap, allowed %.3g%%)",
                 hog_schedule_name(p.schedule), p.normalized ? " normalized" : "", got, ref,
                 100 * (got - ref) / gap, 100 * rel);
    if (ref_w)
        memcpy(ref_w, w, d * sizeof(double));
    if (ref_nnz)
        *ref_nnz = count_nonzero(w, d);
    free(w);
    hog_dataset_close(tr);
    return m;
}

static hog_train_params base_params(void)
{
    hog_train_params p = plain_params();
    p.threads = 1;
    p.l2 = 0.01;
    p.epochs = 40;
    return p;
}

/* ===================================================================== *
 *  Schedules: each within a stated tolerance of the full-batch optimum
 * ===================================================================== */
/* A constant step stops in a noise ball around the optimum, whose size is
 * proportional to the step: a small step, a looser tolerance. */
Test(optim, constant_schedule_reaches_the_optimum_within_2_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_CONSTANT;
    p.step = 0.02;
    hog_model_free(reaches_reference(p, 0.02, NULL, NULL));
}

Test(optim, decay_schedule_reaches_the_optimum_within_half_a_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_DECAY;
    p.step = 0.2;
    p.decay = 0.93;
    hog_model_free(reaches_reference(p, 0.005, NULL, NULL));
}

Test(optim, invscaling_schedule_reaches_the_optimum_within_2_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_INVSCALING;
    p.step = 0.5;
    p.power = 1.0;
    hog_model_free(reaches_reference(p, 0.02, NULL, NULL));
}

Test(optim, adagrad_reaches_the_optimum_within_half_a_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.1;
    hog_model_free(reaches_reference(p, 0.005, NULL, NULL));
}

Test(optim, normalized_reaches_the_optimum_within_half_a_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.normalized = 1;
    p.schedule = HOG_SCHEDULE_DECAY;
    p.step = 0.5;
    p.decay = 0.93;
    hog_model_free(reaches_reference(p, 0.005, NULL, NULL));
}

Test(optim, adagrad_normalized_reaches_the_optimum_within_half_a_percent_of_the_gap)
{
    hog_train_params p = base_params();
    p.normalized = 1;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.1;
    hog_model_free(reaches_reference(p, 0.005, NULL, NULL));
}

/* The normalized update is invariant to the scale of each feature: the
 * same data with features multiplied by 0.01, 1 or 100 trains to the same
 * predictions (no penalty: L2 is not scale-invariant), where plain SGD at
 * the same step diverges or crawls. */
Test(optim, normalized_is_invariant_to_feature_scales)
{
    const double ones[3] = {1, 1, 1}, wild[3] = {0.01, 1, 100};
    hog_dataset *a = make_data("a.svm", 2000, 60, 6, 'b', 0.05, 0, ones, 5);
    hog_dataset *b = make_data("b.svm", 2000, 60, 6, 'b', 0.05, 0, wild, 5);
    for (int sched = 0; sched < 2; sched++) {
        hog_train_params p = base_params();
        p.l2 = 0;
        p.epochs = 10;
        p.normalized = 1;
        p.schedule = sched ? HOG_SCHEDULE_ADAGRAD : HOG_SCHEDULE_DECAY;
        p.step = sched ? 0.1 : 0.5;
        hog_model *ma = train(a, NULL, p), *mb = train(b, NULL, p);
        double worst = 0;
        for (uint64_t i = 0; i < a->info.rows; i++) {
            hog_row ra = hog_dataset_row(a, i), rb = hog_dataset_row(b, i);
            float sa, sb;
            hog_model_scores(ma, &ra, NULL, &sa);
            hog_model_scores(mb, &rb, NULL, &sb);
            worst = fmax(worst, fabs((double)sa - (double)sb) / (1.0 + fabs((double)sa)));
        }
        cr_assert_lt(worst, 1e-3, "%s: the margins differ by %g with rescaled features",
                     hog_schedule_name(p.schedule), worst);
        hog_model_info ia, ib;
        hog_model_get_info(ma, &ia);
        hog_model_get_info(mb, &ib);
        cr_assert_gt(ib.train.accuracy, 0.85, "accuracy %g", ib.train.accuracy);
        hog_model_free(ma);
        hog_model_free(mb);
        /* Plain SGD at the same step does not cope with the ranges. */
        p.normalized = 0;
        p.schedule = HOG_SCHEDULE_DECAY;
        p.step = 0.5;
        hog_model *plain = train(b, NULL, p);
        hog_model_info ip;
        hog_model_get_info(plain, &ip);
        cr_assert(!(ip.train.accuracy > ib.train.accuracy - 0.02), "plain %g vs normalized %g",
                  ip.train.accuracy, ib.train.accuracy);
        hog_model_free(plain);
    }
    hog_dataset_close(a);
    hog_dataset_close(b);
}

/* ===================================================================== *
 *  Regularisers
 * ===================================================================== */
Test(optim, l2_reaches_the_optimum_within_1_percent_of_the_gap_and_changes_the_model)
{
    hog_train_params p = base_params();
    p.l2 = 0.03;
    p.step = 0.2;
    p.decay = 0.93;
    p.epochs = 60;
    hog_model *m = reaches_reference(p, 0.01, NULL, NULL);
    hog_dataset *tr = ref_data();
    p.l2 = 0;
    hog_model *free_m = train(tr, NULL, p);
    cr_assert_gt(model_objective(free_m, tr, 0.03, 0), model_objective(m, tr, 0.03, 0));
    hog_model_free(free_m);
    hog_model_free(m);
    hog_dataset_close(tr);
}

/* L1: the truncated gradient reaches the ISTA optimum and leaves exact
 * zeros, about as many as the optimum has. */
static void l1_case(double l1, double l2, hog_schedule sched, double step, double rel)
{
    hog_train_params p = base_params();
    p.l1 = l1;
    p.l2 = l2;
    p.schedule = sched;
    p.step = step;
    p.decay = 0.93;
    p.epochs = 60;
    uint64_t ref_nnz;
    hog_model *m = reaches_reference(p, rel, NULL, &ref_nnz);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_lt(ref_nnz, 45, "the penalty is too weak to test sparsity: %llu of 60 non-zero",
                 (unsigned long long)ref_nnz);
    cr_assert_eq(in.nonzero, count_nonzero_model(m), "info.nonzero %llu", (unsigned long long)in.nonzero);
    cr_assert_leq(in.nonzero, ref_nnz + 2, "%llu non-zero weights, the optimum has %llu",
                  (unsigned long long)in.nonzero, (unsigned long long)ref_nnz);
    hog_model_free(m);
}

Test(optim, l1_reaches_the_ista_optimum_within_1_percent_of_the_gap_with_exact_zeros)
{
    l1_case(0.006, 0, HOG_SCHEDULE_DECAY, 0.2, 0.01);
}

Test(optim, l1_with_adagrad_reaches_the_ista_optimum_within_1_percent_of_the_gap_with_exact_zeros)
{
    l1_case(0.006, 0, HOG_SCHEDULE_ADAGRAD, 0.1, 0.01);
}

Test(optim, elastic_net_reaches_the_ista_optimum_within_1_percent_of_the_gap_with_exact_zeros)
{
    l1_case(0.005, 0.01, HOG_SCHEDULE_DECAY, 0.2, 0.01);
}

/* Multiple workers: AdaGrad's sums and the L1 state of hot features (every
 * feature here is touched by 10% of the rows) go through the private
 * copies; the result is racy but must still be near the optimum. */
Test(optim, adagrad_with_l1_on_two_threads_reaches_the_optimum_within_5_percent_of_the_gap)
{
    /* One thread gets within 0.3%; two race on the shared L1 state and the
     * hot copies, and how far depends on how the OS interleaves them (2.02%
     * was seen on a loaded machine), so the bound is looser here. */
    hog_train_params p = base_params();
    p.threads = 2;
    p.l2 = 0;
    p.l1 = 0.006;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.1;
    p.epochs = 60;
    hog_model_free(reaches_reference(p, 0.05, NULL, NULL));
}

/* Softmax through every specialised loop: each combination of adagrad,
 * normalized and L1 learns three classes. */
Test(optim, softmax_learns_with_every_optimiser_combination)
{
    hog_dataset *tr = make_data("c.svm", 6000, 120, 12, 'c', 0, 0, NULL, 17);
    for (unsigned opt = 0; opt < 8; opt++) {
        hog_train_params p = plain_params();
        p.loss = HOG_LOSS_SOFTMAX;
        p.threads = 2;
        p.holdout = 0.25;
        p.epochs = 15;
        p.schedule = opt & 1 ? HOG_SCHEDULE_ADAGRAD : HOG_SCHEDULE_DECAY;
        p.step = opt & 1 ? 0.2 : 0.1;
        p.normalized = (opt & 2) != 0;
        p.l1 = opt & 4 ? 1e-4 : 0;
        hog_model *m = train(tr, NULL, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_gt(in.test.accuracy, 0.85, "%s%s%s: accuracy %g", hog_schedule_name(p.schedule),
                     p.normalized ? " normalized" : "", p.l1 > 0 ? " l1" : "", in.test.accuracy);
        cr_assert_eq(in.nonzero, count_nonzero_model(m));
        hog_model_free(m);
    }
    hog_dataset_close(tr);
}

/* ===================================================================== *
 *  Early stopping
 * ===================================================================== */
typedef struct epoch_log {
    double loss[100];
    unsigned n;
} epoch_log;

static void log_epoch(void *ctx, const hog_epoch_stats *st, int done)
{
    epoch_log *l = ctx;
    if (done && l->n < 100)
        l->loss[l->n++] = st->test.loss;
}

/* Few rows, many features, no penalty and a large step: the model overfits,
 * the test loss turns up, training stops K epochs after its lowest point
 * and the model of that epoch is the one returned. */
Test(optim, early_stopping_stops_and_keeps_the_best_epoch)
{
    hog_dataset *tr = make_data("small.svm", 150, 400, 20, 'b', 0.2, 0, NULL, 21);
    hog_dataset *te = make_data("test.svm", 3000, 400, 20, 'b', 0.2, 0, NULL, 22);
    hog_train_params p = plain_params();
    p.threads = 1;
    p.l2 = 0;
    p.schedule = HOG_SCHEDULE_CONSTANT;
    p.step = 0.5;
    p.epochs = 100;
    p.early_stop = 3;
    epoch_log log = {{0}, 0};
    p.progress = log_epoch;
    p.progress_ctx = &log;
    hog_model *m = train(tr, te, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_lt(in.epochs_run, 100u, "never stopped");
    cr_assert_eq(log.n, in.epochs_run);
    cr_assert_eq(in.best_epoch, in.epochs_run - 3, "best %u of %u", in.best_epoch, in.epochs_run);
    double best = INFINITY;
    for (unsigned e = 0; e < log.n; e++)
        best = fmin(best, log.loss[e]);
    cr_assert_eq(log.loss[in.best_epoch - 1], best);
    cr_assert_gt(log.loss[log.n - 1], best, "the last epoch was no worse: nothing to stop for");
    /* The returned model is that epoch's: its test loss, measured again. */
    hog_metrics mt;
    cr_assert_eq(hog_model_evaluate(m, te, 1, &mt), 0);
    cr_assert_float_eq(mt.loss, best, 1e-9 * best, "kept model's loss %.12g, the best epoch's %.12g", mt.loss, best);
    cr_assert_float_eq(in.test.loss, best, 1e-12 * best);

    /* The file keeps the new parameters and what happened. */
    char path[128];
    snprintf(path, sizeof(path), "%s/es.hog", dir);
    cr_assert_eq(hog_model_save(m, path), 0);
    hog_model *back;
    char err[256] = "";
    cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
    hog_model_info bi;
    hog_model_get_info(back, &bi);
    cr_assert_eq(bi.params.early_stop, 3u);
    cr_assert_eq(bi.params.schedule, HOG_SCHEDULE_CONSTANT);
    cr_assert_eq(bi.epochs_run, in.epochs_run);
    cr_assert_eq(bi.best_epoch, in.best_epoch);
    cr_assert_eq(bi.nonzero, in.nonzero);
    cr_assert_gt(bi.nonzero, 300u);
    hog_model_free(back);
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

Test(optim, early_stopping_without_a_test_set_or_holdout_is_refused)
{
    hog_dataset *tr = make_data("es.svm", 200, 40, 4, 'b', 0, 0, NULL, 3);
    hog_train_params p = plain_params();
    p.threads = 1;
    p.early_stop = 2;
    hog_trainer *t;
    hog_model *m = NULL;
    char err[256] = "";
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &m, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(m);
    cr_assert(strstr(err, "early_stop") && strstr(err, "holdout"), "%s", err);
    hog_trainer_free(t);
    hog_dataset_close(tr);
}

/* ===================================================================== *
 *  Averaging
 * ===================================================================== */
/* With a large constant step the last iterate rattles around the optimum;
 * the average of the last epochs' iterates sits closer to it. The run is
 * the same (averaging only watches), so the difference is the average's. */
Test(optim, averaging_brings_a_noisy_constant_step_closer_to_the_optimum)
{
    hog_dataset *tr = ref_data();
    uint64_t d = tr->info.features;
    double *w = calloc(d, sizeof(double)), b;
    cr_assert_not_null(w);
    reference(tr, 0.01, 0, 2.0, 3000, w, &b);
    double ref = objective(tr, w, b, 0.01, 0, d);
    free(w);
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_CONSTANT;
    p.step = 0.3;
    p.epochs = 10;
    hog_model *last = train(tr, NULL, p);
    p.average = 3;
    hog_model *avg3 = train(tr, NULL, p);
    p.average = 1;
    hog_model *avg1 = train(tr, NULL, p);
    double f_last = model_objective(last, tr, 0.01, 0), f3 = model_objective(avg3, tr, 0.01, 0),
           f1 = model_objective(avg1, tr, 0.01, 0);
    cr_assert_lt(f3 - ref, 0.5 * (f_last - ref), "average of 3 epochs %.8g, last iterate %.8g, optimum %.8g", f3,
                 f_last, ref);
    cr_assert_lt(f1 - ref, 0.5 * (f_last - ref), "average of 1 epoch %.8g, last iterate %.8g, optimum %.8g", f1,
                 f_last, ref);
    /* Three epochs average more iterates than one: different models. */
    int differ = 0;
    for (uint64_t j = 0; j < d; j++)
        differ |= hog_w_load(&avg1->w[j]) != hog_w_load(&avg3->w[j]);
    cr_assert(differ);
    hog_model_info in;
    hog_model_get_info(avg3, &in);
    cr_assert_eq(in.params.average, 3u);
    hog_model_free(last);
    hog_model_free(avg3);
    hog_model_free(avg1);
    hog_dataset_close(tr);
}

/* The evaluation after each averaged epoch is of the average, and early
 * stopping keeps an average. */
Test(optim, averaging_is_what_is_evaluated)
{
    hog_dataset *tr = ref_data();
    hog_dataset *te = make_data("te.svm", 2000, 60, 6, 'b', 0.1, 0, NULL, 10);
    hog_train_params p = base_params();
    p.schedule = HOG_SCHEDULE_CONSTANT;
    p.step = 0.3;
    p.epochs = 6;
    p.average = 2;
    epoch_log log = {{0}, 0};
    p.progress = log_epoch;
    p.progress_ctx = &log;
    hog_model *m = train(tr, te, p);
    hog_metrics mt;
    cr_assert_eq(hog_model_evaluate(m, te, 1, &mt), 0);
    cr_assert_eq(log.n, 6u);
    cr_assert_float_eq(mt.loss, log.loss[5], 1e-9, "saved model %.12g, last evaluation %.12g", mt.loss, log.loss[5]);
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* ===================================================================== *
 *  Modified Huber and quantile losses
 * ===================================================================== */
static double numeric_grad(hog_loss loss, float m, float y, float tau)
{
    const float h = 1e-2f;
    float lp, lm;
    hog_loss_grad_tau(loss, m + h, y, tau, &lp);
    hog_loss_grad_tau(loss, m - h, y, tau, &lm);
    return ((double)lp - (double)lm) / (2.0 * (double)h);
}

Test(optim, modified_huber_gradient_matches_finite_differences)
{
    for (float m = -4.03f; m <= 4.0f; m += 0.17f)
        for (int s = -1; s <= 1; s += 2) {
            float v, y = (float)s, z = y * m;
            if (fabsf(z - 1.0f) < 0.05f || fabsf(z + 1.0f) < 0.05f) /* the second derivative jumps */
                continue;
            double g = hog_loss_grad(HOG_LOSS_MODIFIED_HUBER, m, y, &v);
            cr_assert(fabs(g - numeric_grad(HOG_LOSS_MODIFIED_HUBER, m, y, 0.5f)) < 1e-3, "m=%g y=%g g=%g",
                      (double)m, (double)y, g);
            float want = z >= 1 ? 0.0f : z >= -1 ? (1 - z) * (1 - z) : -4 * z;
            cr_assert(fabsf(v - want) < 1e-5f, "m=%g y=%g loss %g, want %g", (double)m, (double)y, (double)v,
                      (double)want);
        }
}

Test(optim, quantile_gradient_matches_finite_differences)
{
    const float taus[3] = {0.1f, 0.5f, 0.9f};
    for (int t = 0; t < 3; t++)
        for (float m = -3.02f; m <= 3.0f; m += 0.25f) {
            float v, y = 0.7f, tau = taus[t];
            if (fabsf(m - y) < 0.05f) /* the kink */
                continue;
            double g = hog_loss_grad_tau(HOG_LOSS_QUANTILE, m, y, tau, &v);
            cr_assert(fabs(g - numeric_grad(HOG_LOSS_QUANTILE, m, y, tau)) < 1e-3, "m=%g tau=%g g=%g", (double)m,
                      (double)tau, g);
            float r = y - m, want = r >= 0 ? tau * r : (tau - 1) * r;
            cr_assert(fabsf(v - want) < 1e-6f);
        }
}

Test(optim, modified_huber_classifies_and_predicts_probabilities)
{
    hog_dataset *tr = make_data("mh.svm", 4000, 200, 20, 'b', 0, 0, NULL, 31);
    hog_train_params p = plain_params();
    p.loss = HOG_LOSS_MODIFIED_HUBER;
    p.threads = 2;
    p.holdout = 0.25;
    p.step = 0.05;
    hog_model *m = train(tr, NULL, p);
    hog_model_info in;
    hog_model_get_info(m, &in);
    cr_assert_gt(in.test.accuracy, 0.9, "accuracy %g", in.test.accuracy);
    cr_assert_gt(in.test.auc, 0.95, "auc %g", in.test.auc);
    cr_assert(isfinite(in.test.loss) && in.test.loss < 0.5, "loss %g", in.test.loss);
    cr_assert(isnan(in.test.logloss) && isnan(in.test.rmse));
    for (uint64_t i = 0; i < 200; i++) {
        hog_row r = hog_dataset_row(tr, i);
        uint32_t cls;
        double pr = hog_model_predict(m, &r, &cls, NULL);
        cr_assert(pr >= 0 && pr <= 1, "probability %g", pr);
        if (pr != 0.5)
            cr_assert_eq(cls, pr > 0.5 ? 1u : 0u);
    }
    hog_model_free(m);
    hog_dataset_close(tr);
}

/* Quantile regression at tau puts about tau of the targets at or below the
 * prediction; the pinball loss is the metric. */
Test(optim, quantile_regression_covers_tau_of_the_targets)
{
    hog_dataset *tr = make_data("q.svm", 8000, 40, 5, 'r', 0, 2.0, NULL, 41);
    const double taus[2] = {0.5, 0.9};
    double mean_pred[2];
    for (int t = 0; t < 2; t++) {
        hog_train_params p = plain_params();
        p.loss = HOG_LOSS_QUANTILE;
        p.quantile = taus[t];
        p.threads = 1;
        p.epochs = 30;
        p.step = 0.05;
        p.l2 = 0;
        p.train_metrics = HOG_TRAIN_METRICS_EXACT; /* the final model's loss, compared below */
        hog_model *m = train(tr, NULL, p);
        uint64_t below = 0;
        double sum = 0, pinball = 0;
        for (uint64_t i = 0; i < tr->info.rows; i++) {
            hog_row r = hog_dataset_row(tr, i);
            double pr = hog_model_predict(m, &r, NULL, NULL);
            below += (double)r.label <= pr;
            sum += pr;
            double res = (double)r.label - pr;
            pinball += res >= 0 ? taus[t] * res : (taus[t] - 1) * res;
        }
        double cover = (double)below / (double)tr->info.rows;
        cr_assert(fabs(cover - taus[t]) < 0.03, "tau %g: %g of the targets at or below the prediction", taus[t],
                  cover);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_float_eq(in.train.loss, pinball / (double)tr->info.rows, 1e-4, "reported %g, pinball %g",
                           in.train.loss, pinball / (double)tr->info.rows);
        cr_assert(isfinite(in.train.rmse) && isnan(in.train.accuracy));
        cr_assert_eq(in.classes, 0u);
        mean_pred[t] = sum / (double)tr->info.rows;
        hog_model_free(m);
    }
    /* Noise uniform on [-2, 2]: the 0.9 quantile is 1.6 above the median. */
    cr_assert(fabs(mean_pred[1] - mean_pred[0] - 1.6) < 0.2, "0.9 minus 0.5 quantile: %g",
              mean_pred[1] - mean_pred[0]);
    hog_dataset_close(tr);
}

/* ===================================================================== *
 *  Parameters
 * ===================================================================== */
Test(optim, new_parameters_are_checked_and_named)
{
    const char *field = NULL;
    hog_train_params p = hog_train_params_default();
    cr_assert_eq(p.quantile, 0.5);
    cr_assert_eq(p.l1, 0.0);
    p.quantile = 1.0;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "quantile");
    p = hog_train_params_default();
    p.l1 = -1;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "l1");
    p = hog_train_params_default();
    p.average = p.epochs + 1;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "average");
    p = hog_train_params_default();
    p.normalized = 2;
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "normalized");
    p = hog_train_params_default();
    p.schedule = (hog_schedule)(HOG_SCHEDULE_ADAGRAD + 1);
    cr_assert_eq(hog_train_params_check(&p, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "schedule");
    const char *losses[] = {"modified_huber", "quantile"};
    hog_loss l;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(hog_loss_parse(losses[i], &l), 0);
        cr_assert_str_eq(hog_loss_name(l), losses[i]);
    }
    cr_assert_eq(l, HOG_LOSS_QUANTILE);
    const char *scheds[] = {"constant", "adagrad"};
    hog_schedule s;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(hog_schedule_parse(scheds[i], &s), 0);
        cr_assert_str_eq(hog_schedule_name(s), scheds[i]);
    }
    cr_assert_eq(s, HOG_SCHEDULE_ADAGRAD);
}
