/* race_hogwild.c: a plain-C stress run of the multi-threaded paths (pool, HOGWILD! updates on the sparse and dense kernels, matrix factorisation, evaluation, save, the text pipeline) for ThreadSanitizer, which Criterion's runner cannot host. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Seeded data: label from a fixed linear rule over 8 of 64 features;
 * spread, those features numbered over 2^18 as hashing would. */
static void write_data(const char *path, int rows, int classes, unsigned seed, int spread)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    srand(seed);
    for (int i = 0; i < rows; i++) {
        int idx[8];
        double val[8], s[3] = {0, 0, 0};
        for (int k = 0; k < 8; k++) {
            idx[k] = 1 + 8 * k + rand() % 8;
            val[k] = rand() / (double)RAND_MAX * 2 - 1;
            for (int c = 0; c < 3; c++)
                s[c] += sin(idx[k] * (c + 1.0)) * val[k];
        }
        int label = classes == 2 ? (s[0] > 0 ? 1 : -1) : (s[0] > s[1] && s[0] > s[2] ? 0 : s[1] > s[2] ? 1 : 2);
        fprintf(f, "%d", label);
        if (spread) /* in ascending order: insertion sort of the 8 */
            for (int k = 0; k < 8; k++) {
                idx[k] = 1 + idx[k] * 4099 % 262139;
                for (int q = k; q > 0 && idx[q - 1] > idx[q]; q--) {
                    int ti = idx[q];
                    double tv = val[q];
                    idx[q] = idx[q - 1], val[q] = val[q - 1];
                    idx[q - 1] = ti, val[q - 1] = tv;
                }
            }
        for (int k = 0; k < 8; k++)
            fprintf(f, " %d:%.4f", idx[k], val[k]);
        fputc('\n', f);
    }
    fclose(f);
}

static hog_verify verify = HOG_VERIFY_AT_OPEN; /* how run() opens a .hgd */

static void run(const char *data, hog_loss loss, hog_kernel kernel, hog_replicas replicas, unsigned threads,
                double holdout, double min_acc, const char *model_path)
{
    hog_dataset *ds;
    char err[512] = "";
    hog_read_params rp = hog_read_params_default();
    rp.verify = verify;
    int rc = hog_dataset_open(data, &rp, &ds, err, sizeof(err));
    CHECK(rc == 0, "open %s: %s", data, err);
    if (rc < 0)
        return;
    hog_train_params p = hog_train_params_default();
    p.loss = loss;
    p.threads = threads;
    p.epochs = 5;
    p.step = 0.3;
    p.normalized = 0; /* the plain loop, and the dense kernel takes no other */
    p.holdout = holdout;
    p.kernel = kernel;
    p.replicas = replicas;
    hog_trainer *t;
    hog_model *m = NULL;
    rc = hog_trainer_create(&p, &t, err, sizeof(err));
    if (rc == 0)
        rc = hog_trainer_run(t, ds, NULL, &m, err, sizeof(err));
    CHECK(rc == 0, "train %s with %u threads: %s", hog_loss_name(loss), threads, err);
    if (m) {
        hog_model_info in;
        hog_model_get_info(m, &in);
        CHECK(min_acc < 0 || in.test.accuracy > min_acc, "%s, %u threads: holdout accuracy %g", hog_loss_name(loss),
              threads, in.test.accuracy);
        hog_metrics mt;
        CHECK(hog_model_evaluate(m, ds, threads, &mt) == 0 && mt.rows == in.train_rows + in.test.rows,
              "evaluate all rows");
        CHECK(hog_model_save(m, model_path) == 0, "save %s", model_path);
    }
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

/* The text pipeline: a producer, several parsers and the consumer share the
 * reader's chunks and the reorder ring; several chunks' worth of text. */
static void convert_many_chunks(const char *dir)
{
    char svm[128], hgd[128], err[512] = "";
    snprintf(svm, sizeof(svm), "%s/big.svm", dir);
    snprintf(hgd, sizeof(hgd), "%s/big.hgd", dir);
    write_data(svm, 200000, 2, 3, 0);
    hog_read_params p = hog_read_params_default();
    p.threads = 3;
    hog_dataset_info info;
    int rc = hog_dataset_convert(svm, &p, hgd, &info, err, sizeof(err));
    CHECK(rc == 0 && info.rows == 200000, "convert: %s (%llu rows)", err, (unsigned long long)info.rows);
    hog_dataset *a, *b;
    p.threads = 1;
    CHECK(hog_dataset_open(svm, &p, &a, err, sizeof(err)) == 0, "open: %s", err);
    CHECK(hog_dataset_open(hgd, NULL, &b, err, sizeof(err)) == 0, "open: %s", err);
    hog_dataset_info ia, ib;
    hog_dataset_get_info(a, &ia);
    hog_dataset_get_info(b, &ib);
    CHECK(ia.fingerprint == ib.fingerprint, "one parser thread and three give the same rows");

    /* Out of core: per-block counters, read-ahead and drops from every worker. */
    hog_train_params tp = hog_train_params_default();
    tp.threads = 3;
    tp.epochs = 2;
    tp.step = 0.1;
    tp.normalized = 0;
    tp.holdout = 0.1;
    tp.mem_limit = 1u << 20;
    hog_trainer *t;
    hog_model *m = NULL;
    rc = hog_trainer_create(&tp, &t, err, sizeof(err));
    if (rc == 0)
        rc = hog_trainer_run(t, b, NULL, &m, err, sizeof(err));
    CHECK(rc == 0 && m, "out-of-core training: %s", err);
    if (m) {
        hog_model_info in;
        hog_model_get_info(m, &in);
        CHECK(in.test.accuracy > 0.9, "out-of-core holdout accuracy %g", in.test.accuracy);
    }
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(a);
    hog_dataset_close(b);
    unlink(svm);
    unlink(hgd);
}

/* The first epoch while the text is read: the feed's reader thread, the
 * parsers and the workers share the block queue; to a cache file and in
 * memory, and started over when a class first shows after the head. */
static void stream_text(const char *dir, const char *data, hog_loss loss, int late_class)
{
    char cache[128], late[128], err[512] = "";
    snprintf(cache, sizeof(cache), "%s/s.hgd", dir);
    snprintf(late, sizeof(late), "%s/late.svm", dir);
    if (late_class) { /* class 2 first appears in row 30001 */
        FILE *f = fopen(late, "w");
        for (int i = 0; f && i < 40000; i++) { /* the class is told by feature 1 + class */
            int c = i < 30000 ? i % 2 : i % 3;
            fprintf(f, "%d %d:1 %d:0.5\n", c, 1 + c, 10 + i % 50);
        }
        if (f)
            fclose(f);
        data = late;
    }
    hog_train_params p = hog_train_params_default();
    p.loss = loss;
    p.threads = 3;
    p.epochs = 2;
    p.step = 0.1;
    p.normalized = 0;
    p.holdout = 0.1;
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 512;
    rp.threads = 2;
    for (int cached = 0; cached <= 1; cached++) {
        unlink(cache);
        hog_trainer *t;
        hog_model *m = NULL;
        hog_file_run fr;
        memset(&fr, 0, sizeof(fr));
        int rc = hog_trainer_create(&p, &t, err, sizeof(err));
        if (rc == 0)
            rc = hog_trainer_run_file(t, data, &rp, cached ? cache : NULL, NULL, &m, &fr, err, sizeof(err));
        CHECK(rc == 0 && m, "streamed %s: %s", hog_loss_name(loss), err);
        CHECK(fr.streamed == !late_class, "streamed %d: %s", fr.streamed, fr.note);
        if (m) {
            hog_model_info in;
            hog_model_get_info(m, &in);
            CHECK(in.test.accuracy > 0.8, "streamed %s (cache %d, %s): holdout accuracy %g", hog_loss_name(loss), cached,
                  fr.streamed ? "streamed" : fr.note, in.test.accuracy);
        }
        hog_model_free(m);
        hog_trainer_free(t);
        hog_dataset_close(fr.train);
    }
    unlink(cache);
    unlink(late);
}

static int save_mf(void *ctx, const hog_mf_model *m)
{
    return hog_mf_save(m, ctx);
}

static atomic_int asking = 1;

/* Asks for snapshots while a run in one pass goes on (as SIGUSR1 would). */
static void *ask_snapshots(void *arg)
{
    while (atomic_load(&asking)) {
        hog_mf_snapshot(arg);
        usleep(1000);
    }
    return NULL;
}

/* Copies the file paths[0] into the FIFO paths[1], 4 KiB at a time. */
static void *feed_fifo(void *arg)
{
    const char **paths = arg;
    FILE *in = fopen(paths[0], "r"), *out = fopen(paths[1], "w");
    char buf[4096];
    size_t n;
    while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0) {
        fwrite(buf, 1, n, out);
        fflush(out);
        usleep(200);
    }
    if (in)
        fclose(in);
    if (out)
        fclose(out);
    return NULL;
}

/* Matrix factorisation: rank-2 ratings with no noise, four workers, on the grid and on segments, then in one pass. */
static void factorise(const char *dir)
{
    char path[128], err[512] = "";
    snprintf(path, sizeof(path), "%s/r.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    srand(3);
    for (int n = 0; n < 40000; n++) {
        int u = rand() % 300, i = rand() % 200;
        double r = 3 + sin(u) * cos(i) + 0.5 * cos(u * 0.7) * sin(i * 1.3);
        fprintf(f, "u%d i%d %.4f\n", u, i, r);
    }
    fclose(f);
    hog_ratings *rt;
    int rc = hog_ratings_open(path, 0, &rt, err, sizeof(err));
    CHECK(rc == 0, "ratings: %s", err);
    if (rc < 0)
        return;
    /* Both sharing schemes: the grid (a block's rows held by one worker,
     * handed on under the scheduler's mutex) and HOGWILD!'s segments (any
     * row written by any worker at once, through the relaxed helpers). */
    const int schedules[] = {HOG_MF_GRID, HOG_MF_HOGWILD};
    for (size_t s = 0; s < sizeof(schedules) / sizeof(schedules[0]); s++) {
        hog_mf_params p = hog_mf_params_default();
        p.rank = 8;
        p.threads = 4;
        p.epochs = 10;
        p.holdout = 0.1;
        p.schedule = schedules[s];
        hog_mf_model *m = NULL;
        rc = hog_mf_train(&p, rt, NULL, &m, err, sizeof(err));
        CHECK(rc == 0 && m, "matrix factorisation (schedule %d) with 4 threads: %s", p.schedule, err);
        if (m) {
            hog_mf_info in;
            hog_mf_get_info(m, &in);
            CHECK(in.test_rmse < 0.35, "matrix factorisation (schedule %d) holdout RMSE %g (the mean alone: about 0.56)",
                  p.schedule, in.test_rmse);
        }
        hog_mf_free(m);
    }
    hog_ratings_close(rt);
    /* One pass on four workers, the model grown between batches, with a
     * snapshot on every 2,000 ratings and asked for from another thread:
     * the watcher, the reader and the workers share the model. */
    hog_mf_params p = hog_mf_params_default();
    p.rank = 8;
    p.threads = 4;
    p.epochs = 1;
    hog_mf_control *c = NULL;
    char snap[160];
    snprintf(snap, sizeof(snap), "%s/snap.mf", dir);
    CHECK(hog_mf_control_create(&c) == 0, "a control");
    if (c) {
        CHECK(hog_mf_control_set_snapshots(c, 2000, 0.001, save_mf, snap) == 0, "set the snapshots");
        p.control = c;
        pthread_t th;
        int started = pthread_create(&th, NULL, ask_snapshots, c) == 0;
        /* Through a FIFO in small pieces: many batches, the model grown between them. */
        char fifo[160];
        snprintf(fifo, sizeof(fifo), "%s/r.fifo", dir);
        CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
        pthread_t wr;
        const char *paths[2] = {path, fifo};
        int writing = pthread_create(&wr, NULL, feed_fifo, paths) == 0;
        hog_mf_model *m = NULL;
        rc = hog_mf_train_stream(&p, fifo, NULL, NULL, &m, NULL, err, sizeof(err));
        atomic_store(&asking, 0);
        if (started)
            pthread_join(th, NULL);
        if (writing)
            pthread_join(wr, NULL);
        unlink(fifo);
        CHECK(rc == 0 && m, "matrix factorisation in one pass with 4 threads: %s", err);
        if (m) {
            hog_mf_info in;
            hog_mf_get_info(m, &in);
            CHECK(in.train_ratings == 40000 && in.train_rmse < 0.6, "one pass: %llu ratings, progressive RMSE %g",
                  (unsigned long long)in.train_ratings, in.train_rmse);
        }
        hog_mf_free(m);
        hog_mf_control_free(c);
        unlink(snap);
    }
    unlink(path);
}

/* With the argument two-nodes, the pool sees a synthetic machine of two
 * NUMA nodes and only node replicas run (the topology is set once per
 * process, so this is a run of its own). */
int main(int argc, char **argv)
{
    int two_nodes = argc > 1 && strcmp(argv[1], "two-nodes") == 0;
    char err[512] = "";
    if (two_nodes && hog_topology_set("package:2 numa:1 core:2 pu:1", err, sizeof(err)) < 0) {
        fprintf(stderr, "race_hogwild: %s\n", err);
        return 1;
    }
    char dir[] = "/tmp/hog-race-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char bin[128], multi[128], model[128];
    snprintf(bin, sizeof(bin), "%s/b.svm", dir);
    snprintf(multi, sizeof(multi), "%s/c.svm", dir);
    snprintf(model, sizeof(model), "%s/m.hog", dir);
    write_data(bin, 20000, 2, 1, 0);
    write_data(multi, 20000, 3, 2, 0);
    if (two_nodes) { /* node replicas with the background averaging thread */
        run(bin, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_NODE, 4, 0.2, 0.9, model);
        run(multi, HOG_LOSS_SOFTMAX, HOG_KERNEL_SPARSE, HOG_REPLICAS_NODE, 4, 0.2, 0.8, model);
    } else {
        run(bin, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 4, 0.2, 0.9, model);
        /* Two workers have 8 segments each: whole copies of the model, merged into it (train_hot.c). */
        run(bin, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 2, 0.2, 0.9, model);
        run(bin, HOG_LOSS_HINGE, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 3, 0.2, 0.9, model);
        /* The same features spread over 2^18: a model too large for whole
         * copies, whose features the run renumbers (train_renum.c). */
        char spread[128];
        snprintf(spread, sizeof(spread), "%s/s.svm", dir);
        write_data(spread, 20000, 2, 1, 1);
        run(spread, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 2, 0.2, 0.9, model);
        unlink(spread);
        run(multi, HOG_LOSS_SOFTMAX, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 4, 0.2, 0.8, model);
        run(bin, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_CORE, 3, 0.2, 0.9, model);
        run(bin, HOG_LOSS_LOGISTIC, HOG_KERNEL_DENSE, HOG_REPLICAS_MACHINE, 4, 0.2, 0.9, model);
        run(multi, HOG_LOSS_SOFTMAX, HOG_KERNEL_DENSE, HOG_REPLICAS_MACHINE, 3, 0.2, 0.8, model);
        /* A .hgd checked as it is read: the scan's workers check its blocks
         * side by side (a holdout: no summary serves), or the first epoch's
         * do (the summary stands in for the scan); min_acc -1: without a
         * holdout there is no held-out accuracy to check. */
        char hgd[128];
        snprintf(hgd, sizeof(hgd), "%s/b.hgd", dir);
        CHECK(hog_dataset_convert(bin, NULL, hgd, NULL, err, sizeof(err)) == 0, "convert: %s", err);
        verify = HOG_VERIFY_AT_FIRST_READ;
        run(hgd, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 4, 0.2, 0.9, model);
        run(hgd, HOG_LOSS_LOGISTIC, HOG_KERNEL_SPARSE, HOG_REPLICAS_MACHINE, 4, 0.0, -1.0, model);
        verify = HOG_VERIFY_AT_OPEN;
        unlink(hgd);
        factorise(dir);
        convert_many_chunks(dir);
        stream_text(dir, bin, HOG_LOSS_LOGISTIC, 0);
        stream_text(dir, multi, HOG_LOSS_SOFTMAX, 0);
        stream_text(dir, multi, HOG_LOSS_SOFTMAX, 1);
    }
    unlink(bin);
    unlink(multi);
    unlink(model);
    rmdir(dir);
    printf("race: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
