/* race_checkpoint.c: a plain-C stress run of checkpoints for ThreadSanitizer, linear and matrix factorisation: workers paused and restarted after nearly every segment, an interrupt from another thread, and a resume on another number of workers. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hogtrain.h>

static int passed, failed;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (cond) {                                                            \
            passed++;                                                          \
        } else {                                                               \
            failed++;                                                          \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

/* Seeded binary data: the label's sign from a fixed rule over 8 of 64 features. */
static void write_data(const char *path, int rows)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    srand(7);
    for (int i = 0; i < rows; i++) {
        double s = 0;
        char line[256];
        int len = 0;
        for (int k = 0; k < 8; k++) {
            int idx = 1 + 8 * k + rand() % 8;
            double v = rand() / (double)RAND_MAX * 2 - 1;
            s += sin(idx) * v;
            len += snprintf(line + len, sizeof(line) - (size_t)len, " %d:%.4f", idx, v);
        }
        fprintf(f, "%d%s\n", s > 0 ? 1 : -1, line);
    }
    fclose(f);
}

/* Interrupts the trainer from a thread of its own, a moment after the run starts. */
static void *interrupter(void *arg)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hog_trainer_interrupt(arg);
    return NULL;
}

/* Trains ds with threads workers and the checkpoint at ckpt (every
 * seconds, resume). interrupt: from another thread. Returns the run's
 * code; *acc the holdout accuracy when it finished. */
static int train(const hog_dataset *ds, unsigned threads, hog_replicas replicas, const char *ckpt, double every,
                 int resume, int interrupt, double *acc)
{
    hog_train_params p = hog_train_params_default();
    p.threads = threads;
    p.epochs = 4;
    p.step = 0.3;
    p.holdout = 0.2;
    p.replicas = replicas;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.normalized = 1;
    hog_trainer *t;
    hog_model *m = NULL;
    char err[512] = "";
    int rc = hog_trainer_create(&p, &t, err, sizeof(err));
    CHECK(rc == 0, "create: %s", err);
    if (rc < 0)
        return rc;
    CHECK(hog_trainer_set_checkpoint(t, ckpt, every, resume) == 0, "set the checkpoint");
    pthread_t th;
    int started = interrupt && pthread_create(&th, NULL, interrupter, t) == 0;
    rc = hog_trainer_run(t, ds, NULL, &m, err, sizeof(err));
    if (started)
        pthread_join(th, NULL);
    if (m) {
        hog_model_info in;
        hog_model_get_info(m, &in);
        *acc = in.test.accuracy;
    }
    CHECK(rc == 0 || rc == HOG_EINTERRUPTED, "train with %u threads: %s", threads, err);
    hog_model_free(m);
    hog_trainer_free(t);
    return rc;
}

/* Interrupts a factorisation from a thread of its own, a moment after it starts. */
static void *mf_interrupter(void *arg)
{
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hog_mf_interrupt(arg);
    return NULL;
}

/* The same for matrix factorisation: returns the run's code, *rmse the
 * test RMSE when it finished. */
static int factorise(const hog_ratings *rt, unsigned threads, const char *ckpt, double every, int resume,
                     int interrupt, double *rmse)
{
    hog_mf_params p = hog_mf_params_default();
    p.rank = 8;
    p.threads = threads;
    p.epochs = 4;
    p.holdout = 0.1;
    p.bind = 0;
    hog_mf_control *c;
    char err[512] = "";
    if (hog_mf_control_create(&c) < 0)
        return -1;
    CHECK(hog_mf_control_set_checkpoint(c, ckpt, every, resume) == 0, "set the checkpoint");
    p.control = c;
    pthread_t th;
    int started = interrupt && pthread_create(&th, NULL, mf_interrupter, c) == 0;
    hog_mf_model *m = NULL;
    int rc = hog_mf_train(&p, rt, NULL, &m, err, sizeof(err));
    if (started)
        pthread_join(th, NULL);
    if (m) {
        hog_mf_info in;
        hog_mf_get_info(m, &in);
        *rmse = in.test_rmse;
    }
    CHECK(rc == 0 || rc == HOG_EINTERRUPTED, "factorise with %u threads: %s", threads, err);
    hog_mf_free(m);
    hog_mf_control_free(c);
    return rc;
}

/* Ratings of a rank-2 matrix, as "user item rating" lines. */
static void write_ratings(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    srand(11);
    for (int t = 0; t < n; t++) {
        int u = rand() % 500, i = rand() % 300;
        fprintf(f, "%d %d %.3f\n", u, i, 3 + sin(u) * cos(i) + 0.5 * sin(3.0 * u) * sin(2.0 * i));
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    if (hog_init() < 0)
        return 1;
    char dir[] = "/tmp/hog-race-ckpt-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char data[128], ckpt[128], err[512] = "";
    snprintf(data, sizeof(data), "%s/d.svm", dir);
    snprintf(ckpt, sizeof(ckpt), "%s/c.ckpt", dir);
    write_data(data, 30000);
    hog_dataset *ds;
    if (hog_dataset_open(data, NULL, &ds, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double acc = 0;
    /* A checkpoint due after nearly every segment: the workers stop and
     * start again all the time, node replicas averaged at each pause. */
    int rc = train(ds, 4, HOG_REPLICAS_NODE, ckpt, 1e-4, 0, 0, &acc);
    CHECK(rc == 0 && acc > 0.9, "paused all the time: rc %d, accuracy %g", rc, acc);
    rc = train(ds, 4, HOG_REPLICAS_MACHINE, ckpt, 1e-4, 0, 0, &acc);
    CHECK(rc == 0 && acc > 0.9, "paused all the time: rc %d, accuracy %g", rc, acc);
    /* Interrupted from another thread, then resumed on three workers (or
     * finished before the interrupt came: then resumed after the end). */
    rc = train(ds, 4, HOG_REPLICAS_MACHINE, ckpt, 0, 0, 1, &acc);
    CHECK(access(ckpt, F_OK) == 0, "no checkpoint after the run (rc %d)", rc);
    rc = train(ds, 3, HOG_REPLICAS_MACHINE, ckpt, 0, 1, 0, &acc);
    CHECK(rc == 0 && acc > 0.9, "resumed on three workers: rc %d, accuracy %g", rc, acc);
    hog_dataset_close(ds);
    unlink(data);
    unlink(ckpt);

    char ratings[128];
    snprintf(ratings, sizeof(ratings), "%s/r.txt", dir);
    write_ratings(ratings, 60000);
    hog_ratings *rt;
    if (hog_ratings_open(ratings, 0, &rt, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double rmse = INFINITY;
    rc = factorise(rt, 4, ckpt, 1e-4, 0, 0, &rmse);
    CHECK(rc == 0 && rmse < 0.9, "factorisation paused all the time: rc %d, test rmse %g", rc, rmse);
    rc = factorise(rt, 4, ckpt, 0, 0, 1, &rmse);
    CHECK(access(ckpt, F_OK) == 0, "no factorisation checkpoint after the run (rc %d)", rc);
    rc = factorise(rt, 3, ckpt, 0, 1, 0, &rmse);
    CHECK(rc == 0 && rmse < 0.9, "factorisation resumed on three workers: rc %d, test rmse %g", rc, rmse);
    hog_ratings_close(rt);
    unlink(ratings);
    unlink(ckpt);
    rmdir(dir);
    printf("race_checkpoint: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
