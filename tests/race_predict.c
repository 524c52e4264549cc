/* race_predict.c: predictions of text and a mapped .hgd in one pass on several workers, small blocks, a failing writer, and two calls at once, for ThreadSanitizer. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hogtrain.h>

static hog_model *model;
static char text[64], bin[64];
static char *want;
static size_t want_len;
static int failures;
static pthread_mutex_t failures_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what)
{
    fprintf(stderr, "FAIL race_predict: %s\n", what);
    pthread_mutex_lock(&failures_mu);
    failures++;
    pthread_mutex_unlock(&failures_mu);
}

typedef struct sink {
    char *buf;
    size_t len;
    int calls, fail_at;
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *k = ctx;
    if (++k->calls == k->fail_at)
        return -ENOSPC;
    char *grown = realloc(k->buf, k->len + len);
    if (!grown)
        return -ENOMEM;
    k->buf = grown;
    memcpy(k->buf + k->len, buf, len);
    k->len += len;
    return 0;
}

/* Predicts path on threads workers in blocks of 50 rows; returns the rc. */
static int predict(const char *path, unsigned threads, sink *k)
{
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 50;
    rp.threads = 2;
    hog_predict_params pp = hog_predict_params_default();
    pp.threads = threads;
    pp.write = sink_write;
    pp.write_ctx = k;
    char err[512] = "";
    return hog_model_predict_file(model, path, &rp, &pp, NULL, err, sizeof(err));
}

static void *caller(void *arg)
{
    const char *path = arg;
    for (int i = 0; i < 5; i++) {
        sink k = {0};
        if (predict(path, 3, &k) != 0)
            fail("a prediction beside another failed");
        else if (k.len != want_len || memcmp(k.buf, want, want_len) != 0)
            fail("a prediction beside another wrote other bytes");
        free(k.buf);
    }
    return NULL;
}

int main(void)
{
    char dir[] = "/tmp/hog-race-predict-XXXXXX", err[512] = "";
    if (!mkdtemp(dir))
        return 1;
    snprintf(text, sizeof(text), "%s/d.svm", dir);
    snprintf(bin, sizeof(bin), "%s/d.hgd", dir);
    FILE *f = fopen(text, "w");
    if (!f)
        return 1;
    srand(13);
    for (int i = 0; i < 6000; i++) {
        double x[6], s = 0;
        for (int j = 0; j < 6; j++) {
            x[j] = rand() / (double)RAND_MAX * 2 - 1;
            s += x[j] * (j % 2 ? 1 : -1);
        }
        fprintf(f, "%d", s > 0 ? 1 : -1);
        for (int j = 0; j < 6; j++)
            fprintf(f, " %d:%.4f", j + 1, x[j]);
        fprintf(f, "\n");
    }
    fclose(f);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 50;
    hog_dataset *ds;
    if (hog_dataset_convert(text, &rp, bin, NULL, err, sizeof(err)) != 0 ||
        hog_dataset_open(bin, NULL, &ds, err, sizeof(err)) != 0) {
        fprintf(stderr, "race_predict: %s\n", err);
        return 1;
    }
    hog_train_params p = hog_train_params_default();
    p.threads = 2;
    p.bind = 0;
    p.epochs = 2;
    hog_trainer *t;
    if (hog_trainer_create(&p, &t, err, sizeof(err)) != 0 || hog_trainer_run(t, ds, NULL, &model, err, sizeof(err)) != 0) {
        fprintf(stderr, "race_predict: %s\n", err);
        return 1;
    }
    hog_trainer_free(t);
    hog_dataset_close(ds);

    sink one = {0};
    if (predict(bin, 1, &one) != 0)
        fail("one worker failed");
    want = one.buf;
    want_len = one.len;
    for (unsigned threads = 2; threads <= 4; threads++) {
        const char *paths[2] = {text, bin};
        for (int b = 0; b < 2; b++) {
            sink k = {0};
            if (predict(paths[b], threads, &k) != 0)
                fail("several workers failed");
            else if (k.len != want_len || memcmp(k.buf, want, want_len) != 0)
                fail("several workers wrote other bytes");
            free(k.buf);
            sink bad = {.fail_at = 7};
            if (predict(paths[b], threads, &bad) != -ENOSPC || bad.calls != 7)
                fail("a failed write did not stop the run at once");
            free(bad.buf);
        }
    }
    pthread_t th[2];
    pthread_create(&th[0], NULL, caller, text);
    pthread_create(&th[1], NULL, caller, bin);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);

    free(want);
    hog_model_free(model);
    char cmd[96];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        fail("the scratch folder was not removed");
    if (failures == 0)
        printf("race_predict: ok\n");
    return failures ? 1 : 0;
}
