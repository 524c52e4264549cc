/* race_pool_shared.c: application threads evaluating and factorising at once, all borrowing the process's shared pool, for ThreadSanitizer. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <hogtrain.h>

#define EVALUATORS 3
#define ROUNDS 15

static hog_model *model;
static hog_dataset *data;
static hog_ratings *ratings;
static hog_metrics want;
static int failures;
static pthread_mutex_t failures_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what)
{
    fprintf(stderr, "FAIL race_pool_shared: %s\n", what);
    pthread_mutex_lock(&failures_mu);
    failures++;
    pthread_mutex_unlock(&failures_mu);
}

static void *evaluator(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        hog_metrics mt;
        if (hog_model_evaluate(model, data, 2, &mt) != 0)
            fail("hog_model_evaluate failed");
        else if (mt.rows != want.rows || mt.accuracy != want.accuracy || mt.auc != want.auc)
            fail("an evaluation beside others gave other metrics");
    }
    return NULL;
}

static void *factoriser(void *arg)
{
    (void)arg;
    hog_mf_params p = hog_mf_params_default();
    p.threads = 2;
    p.bind = 0;
    p.rank = 4;
    p.epochs = 2;
    for (int i = 0; i < 3; i++) {
        hog_mf_model *m;
        char err[256] = "";
        if (hog_mf_train(&p, ratings, NULL, &m, err, sizeof(err)) != 0) {
            fail(err);
            continue;
        }
        hog_mf_info in;
        hog_mf_get_info(m, &in);
        if (!isfinite(in.train_rmse))
            fail("a factorisation beside evaluations did not converge");
        hog_mf_free(m);
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/hog-race-pool-XXXXXX", path[64], rpath[64], err[512] = "";
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/d.svm", dir);
    snprintf(rpath, sizeof(rpath), "%s/r.csv", dir);
    FILE *f = fopen(path, "w"), *g = fopen(rpath, "w");
    if (!f || !g)
        return 1;
    srand(11);
    for (int i = 0; i < 2000; i++) {
        double x[5], s = 0;
        for (int j = 0; j < 5; j++) {
            x[j] = rand() / (double)RAND_MAX * 2 - 1;
            s += sin(j + 1.0) * x[j];
        }
        fprintf(f, "%d", s > 0 ? 1 : -1);
        for (int j = 0; j < 5; j++)
            fprintf(f, " %d:%.3f", j, x[j]);
        fputc('\n', f);
    }
    fprintf(g, "user,item,rating\n");
    for (int i = 0; i < 2000; i++)
        fprintf(g, "u%d,i%d,%d\n", rand() % 40, rand() % 30, 1 + rand() % 5);
    fclose(f);
    fclose(g);

    hog_train_params p = hog_train_params_default();
    p.threads = 2;
    p.epochs = 2;
    p.step = 0.1;
    p.normalized = 0;
    hog_trainer *t = NULL;
    int rc = hog_dataset_open(path, NULL, &data, err, sizeof(err));
    if (rc == 0)
        rc = hog_ratings_open(rpath, 0, &ratings, err, sizeof(err));
    if (rc == 0)
        rc = hog_trainer_create(&p, &t, err, sizeof(err));
    if (rc == 0)
        rc = hog_trainer_run(t, data, NULL, &model, err, sizeof(err));
    if (rc == 0)
        rc = hog_model_evaluate(model, data, 2, &want);
    if (rc != 0) {
        fprintf(stderr, "FAIL race_pool_shared: setting up: %s\n", err);
        return 1;
    }

    pthread_t th[EVALUATORS + 1];
    for (int i = 0; i < EVALUATORS; i++)
        pthread_create(&th[i], NULL, evaluator, NULL);
    pthread_create(&th[EVALUATORS], NULL, factoriser, NULL);
    for (int i = 0; i <= EVALUATORS; i++)
        pthread_join(th[i], NULL);

    hog_trainer_free(t);
    hog_model_free(model);
    hog_dataset_close(data);
    hog_ratings_close(ratings);
    unlink(path);
    unlink(rpath);
    rmdir(dir);
    printf("race_pool_shared: %d evaluations and 3 factorisations side by side, %d failures\n",
           EVALUATORS * ROUNDS, failures);
    return failures != 0;
}
