/* cli_tune.c: `hogtrain train --cv K` (K-fold cross-validated metrics, as liblinear-train -v) and `hogtrain tune` (a successive-halving search over step, schedule, scaling and regularisation, scored on a holdout or K folds), both on one data set read once. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ===================================================================== *
 *  One setting, scored
 * ===================================================================== */

/* One training run to score (a fold of a setting): its parameters, with
 * the fold and holdout set, and what it gave. */
typedef struct fit {
    hog_train_params p;
    hog_metrics m; /* the held-out metrics */
    int rc;        /* 0, HOG_EDIVERGED, or another error (reported) */
} fit;

typedef struct fit_queue {
    fit *f;
    unsigned n;
    const hog_dataset *ds;
    atomic_uint next;
    atomic_int failed;
} fit_queue;

static void fit_one(fit *f, const hog_dataset *ds)
{
    hog_trainer *t;
    hog_model *m = NULL;
    char err[CLI_ERR_LEN] = "";
    int rc = hog_trainer_create(&f->p, &t, err, sizeof(err));
    if (rc == 0) {
        rc = hog_trainer_run(t, ds, NULL, &m, err, sizeof(err));
        hog_trainer_free(t);
    }
    f->rc = rc;
    if (rc == 0) {
        hog_model_info mi;
        hog_model_get_info(m, &mi);
        f->m = mi.test;
        hog_model_free(m);
    } else if (rc != HOG_EDIVERGED) {
        cli_error("%s", err[0] ? err : hog_strerror(rc));
    }
}

static void *fit_lane(void *arg)
{
    fit_queue *q = arg;
    for (unsigned i; !atomic_load(&q->failed) && (i = atomic_fetch_add(&q->next, 1)) < q->n;) {
        fit_one(&q->f[i], q->ds);
        if (q->f[i].rc < 0 && q->f[i].rc != HOG_EDIVERGED)
            atomic_store(&q->failed, 1);
    }
    return NULL;
}

/* The CPUs this process may run on. */
static unsigned cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Runs the n fits side by side: as many at once as the threads they were
 * given (hog_train_params.threads, 0: one per CPU), each with its share of
 * them. On the small data sets a search is for, runs of one thread each
 * beat one run of all threads at a time, whose workers share a small model
 * and meet on every row; and a run of one thread gives the same model every
 * time, so the leaderboard does not change from one search to the next.
 * Side by side, workers are not pinned (each run would pin its first to
 * the same core), and a memory limit is shared. Returns 0, or -1 when a
 * fit failed otherwise than by diverging (reported). */
static int fits_run(fit *f, unsigned n, const hog_dataset *ds)
{
    if (n == 0)
        return 0;
    unsigned threads = f[0].p.threads ? f[0].p.threads : cpus_allowed();
    unsigned lanes = n < threads ? n : threads;
    for (unsigned i = 0; i < n; i++) {
        f[i].p.progress = NULL;
        f[i].p.threads = threads / lanes; /* at least 1: lanes <= threads */
        if (lanes > 1) {
            f[i].p.bind = 0;
            f[i].p.mem_limit /= lanes;
        }
    }
    fit_queue q = {.f = f, .n = n, .ds = ds};
    atomic_init(&q.next, 0);
    atomic_init(&q.failed, 0);
    pthread_t tid[63];
    unsigned started = 0;
    while (started + 1 < lanes && started < 63 && pthread_create(&tid[started], NULL, fit_lane, &q) == 0)
        started++;
    fit_lane(&q); /* this thread is a lane too; with fewer threads started, the lanes take more fits each */
    for (unsigned i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return atomic_load(&q.failed) ? -1 : 0;
}

/* The fold setting k of cv (cv > 1), or p itself on its holdout. */
static void fit_init(fit *f, const hog_train_params *p, unsigned cv, unsigned k)
{
    *f = (fit){.p = *p};
    if (cv > 1) {
        f->p.holdout = 1.0 / cv;
        f->p.fold = k;
    }
}

/* A setting's held-out metrics from its folds (cv > 1) or its one run:
 * the mean of each metric, the rows summed. *diverged is set (and the
 * mean left NaN) when a fold diverged. */
static void fits_mean(const fit *f, unsigned folds, hog_metrics *mean, int *diverged)
{
    hog_metrics sum = {0, 0, 0, 0, 0, 0};
    *diverged = 0;
    for (unsigned k = 0; k < folds; k++) {
        if (f[k].rc == HOG_EDIVERGED) {
            *diverged = 1;
            *mean = (hog_metrics){0, NAN, NAN, NAN, NAN, NAN};
            return;
        }
        sum.rows += f[k].m.rows;
        sum.loss += f[k].m.loss / folds;
        sum.logloss += f[k].m.logloss / folds;
        sum.accuracy += f[k].m.accuracy / folds;
        sum.auc += f[k].m.auc / folds;
        sum.rmse += f[k].m.rmse / folds;
    }
    *mean = sum;
}

/* The standard deviation of one metric over n folds. */
static double spread(const hog_metrics *f, unsigned n, size_t field)
{
    double mean = 0, ss = 0;
    for (unsigned k = 0; k < n; k++)
        mean += *(const double *)((const char *)&f[k] + field) / n;
    for (unsigned k = 0; k < n; k++) {
        double d = *(const double *)((const char *)&f[k] + field) - mean;
        ss += d * d;
    }
    return n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

static const struct metric {
    const char *name;
    size_t field;
} metrics[] = {
    {"loss", offsetof(hog_metrics, loss)},         {"accuracy", offsetof(hog_metrics, accuracy)},
    {"logloss", offsetof(hog_metrics, logloss)},   {"auc", offsetof(hog_metrics, auc)},
    {"rmse", offsetof(hog_metrics, rmse)},
};

static double metric_of(const hog_metrics *m, size_t field)
{
    return *(const double *)((const char *)m + field);
}

/* ===================================================================== *
 *  Cross-validation
 * ===================================================================== */
int cli_cv_run(const hog_train_params *p, const hog_dataset *ds, unsigned cv, const char *input, const char *report)
{
    hog_metrics *folds = calloc(cv, sizeof(hog_metrics)), mean;
    fit *f = calloc(cv, sizeof(fit));
    if (!folds || !f) {
        free(folds);
        free(f);
        cli_error("out of memory");
        return -1;
    }
    for (unsigned k = 0; k < cv; k++)
        fit_init(&f[k], p, cv, k);
    int diverged = 0;
    int rc = fits_run(f, cv, ds);
    if (rc == 0) {
        fits_mean(f, cv, &mean, &diverged);
        for (unsigned k = 0; k < cv; k++)
            folds[k] = f[k].m;
    }
    free(f);
    if (rc == 0 && diverged) {
        cli_error("%s: a fold diverged: lower --step (now %g)", input, p->step);
        rc = -1;
    }
    if (rc == 0) {
        printf("%u-fold cross-validation of %s (%llu rows):\n", cv, input, (unsigned long long)mean.rows);
        for (unsigned k = 0; k < cv; k++) {
            printf("  fold %u: %llu rows", k + 1, (unsigned long long)folds[k].rows);
            for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
                if (isfinite(metric_of(&folds[k], metrics[i].field)))
                    printf("  %s %.4f", metrics[i].name, metric_of(&folds[k], metrics[i].field));
            printf("\n");
        }
        printf("  mean:");
        for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
            if (isfinite(metric_of(&mean, metrics[i].field)))
                printf("  %s %.4f (sd %.4f)", metrics[i].name, metric_of(&mean, metrics[i].field),
                       spread(folds, cv, metrics[i].field));
        printf("\n");
    }
    if (rc == 0 && report) {
        cli_out o;
        rc = cli_out_open(&o, report);
        if (rc == 0) {
            fprintf(o.f, "{\n  \"command\": \"train --cv\",\n  \"input\": ");
            cli_json_string(o.f, input);
            fprintf(o.f, ",\n  \"folds\": %u,\n  \"per_fold\": [", cv);
            for (unsigned k = 0; k < cv; k++) {
                fprintf(o.f, "%s\n    ", k ? "," : "");
                cli_json_metrics(o.f, &folds[k]);
            }
            fprintf(o.f, "\n  ],\n  \"mean\": ");
            cli_json_metrics(o.f, &mean);
            fprintf(o.f, ",\n  \"sd\": {");
            for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
                fprintf(o.f, "%s\"%s\": ", i ? ", " : "", metrics[i].name);
                cli_json_number(o.f, isfinite(metric_of(&mean, metrics[i].field)) ? spread(folds, cv, metrics[i].field)
                                                                                   : (double)NAN);
            }
            fprintf(o.f, "}\n}\n");
            rc = cli_out_close(&o, 1);
        }
    }
    free(folds);
    return rc;
}

/* ===================================================================== *
 *  The search
 *
 *  Each trial draws a step (log-uniform over [1e-3, 1]), an L2 penalty
 *  (log-uniform over [1e-8, 1e-2]), an L1 penalty (none in two trials of
 *  three, else log-uniform over [1e-8, 1e-4]), the schedule (decay or
 *  AdaGrad) and whether updates are normalised. Successive halving: every
 *  trial runs a few epochs, the better half goes on with twice as many,
 *  and so on until one trial runs the full --epochs. A trial is scored by
 *  its held-out loss (the loss the model minimises), a diverged trial is
 *  out.
 * ===================================================================== */
typedef struct trial {
    hog_train_params p;
    hog_metrics m;
    unsigned epochs; /* of its last round */
    int diverged;
} trial;

static uint64_t next_random(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform(uint64_t *s)
{
    return (double)(next_random(s) >> 11) * 0x1p-53;
}

static double log_uniform(uint64_t *s, double lo, double hi)
{
    return exp(log(lo) + uniform(s) * (log(hi) - log(lo)));
}

/* Better first: lower held-out loss; diverged trials last. */
static int by_score(const void *a, const void *b)
{
    const trial *x = a, *y = b;
    double u = x->diverged ? (double)INFINITY : x->m.loss, v = y->diverged ? (double)INFINITY : y->m.loss;
    return (u > v) - (u < v);
}

/* The leaderboard: the trials that ran longest first (a round's losses
 * compare only among its own), then by score. */
static int by_round(const void *a, const void *b)
{
    const trial *x = a, *y = b;
    if (x->epochs != y->epochs)
        return x->epochs > y->epochs ? -1 : 1;
    return by_score(a, b);
}

static void print_trial(unsigned rank, const trial *t)
{
    printf("  %2u  step %-9.3g l2 %-9.3g l1 %-9.3g %-8s %-10s epochs %-3u", rank, t->p.step, t->p.l2, t->p.l1,
           hog_schedule_name(t->p.schedule), t->p.normalized ? "normalized" : "plain", t->epochs);
    if (t->diverged) {
        printf("  diverged\n");
        return;
    }
    for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++)
        if (isfinite(metric_of(&t->m, metrics[i].field)))
            printf("  %s %.4f", metrics[i].name, metric_of(&t->m, metrics[i].field));
    printf("\n");
}

int cli_tune_run(const hog_train_params *base, const hog_dataset *ds, unsigned trials, unsigned cv,
                 const char *input, hog_train_params *best)
{
    const unsigned folds = cv > 1 ? cv : 1;
    trial *t = calloc(trials, sizeof(trial));
    fit *f = calloc((size_t)trials * folds, sizeof(fit));
    if (!t || !f) {
        free(t);
        free(f);
        cli_error("out of memory");
        return -1;
    }
    uint64_t rng = base->seed ^ 0x7475e65ull;
    for (unsigned i = 0; i < trials; i++) {
        hog_train_params p = *base;
        p.step = log_uniform(&rng, 1e-3, 1);
        p.l2 = log_uniform(&rng, 1e-8, 1e-2);
        p.l1 = uniform(&rng) < 2.0 / 3 ? 0 : log_uniform(&rng, 1e-8, 1e-4);
        p.schedule = uniform(&rng) < 0.5 ? HOG_SCHEDULE_DECAY : HOG_SCHEDULE_ADAGRAD;
        p.normalized = uniform(&rng) < 0.5;
        t[i].p = p;
    }
    /* rounds: epochs E / 2^(R-1), ..., E / 2, E, halving the trials each time */
    unsigned rounds = 1;
    while ((1u << rounds) <= trials && (base->epochs >> rounds) >= 1)
        rounds++;
    unsigned alive = trials;
    int rc = 0;
    for (unsigned r = 0; r < rounds && rc == 0; r++) {
        unsigned epochs = base->epochs >> (rounds - 1 - r);
        if (epochs < 1)
            epochs = 1;
        /* every fold of every trial still in, side by side */
        for (unsigned i = 0; i < alive; i++) {
            t[i].p.epochs = epochs;
            t[i].epochs = epochs;
            for (unsigned k = 0; k < folds; k++)
                fit_init(&f[i * folds + k], &t[i].p, cv, k);
        }
        if ((rc = fits_run(f, alive * folds, ds)) < 0)
            break;
        for (unsigned i = 0; i < alive; i++)
            fits_mean(&f[i * folds], folds, &t[i].m, &t[i].diverged);
        qsort(t, alive, sizeof(trial), by_score);
        if (!cli_quiet) {
            fprintf(stderr, "hogtrain: tune: round %u of %u: %u trials of %u epochs; best held-out loss %.4f\n", r + 1,
                    rounds, alive, epochs, t[0].diverged ? (double)NAN : t[0].m.loss);
        }
        if (r + 1 < rounds)
            alive = (alive + 1) / 2;
    }
    if (rc == 0 && t[0].diverged) {
        cli_error("%s: every trial diverged", input);
        rc = -1;
    }
    if (rc == 0) {
        printf("tune: %u trials on %s, scored on %s; the best first:\n", trials, input,
               cv > 1 ? "K folds" : "the holdout");
        qsort(t, trials, sizeof(trial), by_round);
        for (unsigned i = 0; i < trials; i++)
            print_trial(i + 1, &t[i]);
        *best = t[0].p;
        best->epochs = base->epochs;
    }
    free(f);
    free(t);
    return rc;
}
