/* test_train_ooc.c: a binary dataset larger than --mem-limit trains out of core with resident memory bounded and the same result quality. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "train/train_run.h"

#include "test_scratch.h"

static long vm_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, n) == 0)
            kb = atol(line + n + 1);
    fclose(f);
    return kb;
}

/* ~48 MB of rows: 300,000 rows of 20 features over 5,000 (labels from a
 * fixed linear rule), converted to .hgd through the streaming writer. */
static void make_hgd(const char *svm, const char *hgd)
{
    FILE *f = fopen(svm, "w");
    cr_assert_not_null(f);
    hog_rng r = {5};
    for (int i = 0; i < 300000; i++) {
        double m = 0;
        char line[1024];
        int len = 0;
        for (int k = 0; k < 20; k++) {
            int idx = 1 + k * 250 + (int)hog_rng_below(&r, 250);
            double v = (double)hog_rng_below(&r, 1000) / 1000.0;
            m += (idx % 7 < 3 ? 1.0 : -1.0) * v;
            len += snprintf(line + len, sizeof(line) - (size_t)len, " %d:%.3f", idx, v);
        }
        fprintf(f, "%d%s\n", m > 0 ? 1 : -1, line);
    }
    fclose(f);
    char err[256] = "";
    cr_assert_eq(hog_dataset_convert(svm, NULL, hgd, NULL, err, sizeof(err)), 0, "%s", err);
}

static void setup(void)
{
    scratch_make("ooc");
}

Test(ooc, trains_with_resident_memory_under_the_limit, .init = setup, .fini = scratch_remove)
{
    char svm[96], hgd[96];
    snprintf(svm, sizeof(svm), "%s/d.svm", dir);
    snprintf(hgd, sizeof(hgd), "%s/d.hgd", dir);
    make_hgd(svm, hgd);
    remove(svm);

    /* Reset the peak (VmHWM) so the conversion above does not count. */
    FILE *cr = fopen("/proc/self/clear_refs", "w");
    cr_assert_not_null(cr);
    fputs("5", cr);
    fclose(cr);
    long base = vm_kb("VmRSS");
    hog_dataset *ds;
    char err[256] = "";
    cr_assert_eq(hog_dataset_open(hgd, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    uint64_t bytes = hog_dataset_bytes(ds);
    cr_assert_gt(bytes, 40u << 20, "the data set is %llu bytes", (unsigned long long)bytes);
    /* Resident memory is hogtrain's to measure in a normal build only:
     * under AddressSanitizer every load of the mapping also reads its
     * shadow, and the allocator keeps freed memory in quarantine (6 MB at
     * this open, 25 MB of peak below), whatever hogtrain holds. */
#ifdef __SANITIZE_ADDRESS__
    const int rss_counts = 0;
#else
    const int rss_counts = 1;
#endif
    if (rss_counts)
        cr_assert_lt(vm_kb("VmRSS") - base, 4096, "opening left the file resident");

    hog_train_params p = hog_train_params_default();
    p.epochs = 3;
    p.holdout = 0.1;
    p.mem_limit = 8u << 20;
    hog_trainer *t;
    hog_model *m;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    long peak = vm_kb("VmHWM") - base;
    hog_model_info in;
    hog_model_get_info(m, &in);
    /* Model, feature table and a few blocks per worker: far below the data. */
    if (rss_counts)
        cr_assert_lt(peak, 24 * 1024, "peak resident growth %ld kB for %llu bytes of data", peak,
                     (unsigned long long)bytes);
    cr_assert_gt(in.test.accuracy, 0.9, "holdout accuracy %g", in.test.accuracy);
    hog_model_free(m);

    /* The same run in memory reaches the same quality. */
    p.mem_limit = 0;
    hog_trainer_free(t);
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_model_info mem;
    hog_model_get_info(m, &mem);
    cr_assert(mem.test.accuracy - in.test.accuracy < 0.01, "in memory %g, out of core %g", mem.test.accuracy,
              in.test.accuracy);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

/* The model of a one-thread out-of-core run on path (mem_limit 8 MiB),
 * through the mapping when mapped. */
static int train_ooc(const char *path, int mapped, hog_model **m, char *err, size_t len)
{
    hog_dataset *ds;
    int rc = hog_dataset_open(path, NULL, &ds, err, len);
    if (rc < 0)
        return rc;
    hog_train_params p = hog_train_params_default();
    p.epochs = 2;
    p.threads = 1;
    p.mem_limit = 8u << 20;
    hog_trainer *t;
    cr_assert_eq(hog_trainer_create(&p, &t, err, len), 0, "%s", err);
    t->ooc_mapped = mapped;
    rc = hog_trainer_run(t, ds, NULL, m, err, len);
    hog_trainer_free(t);
    hog_dataset_close(ds);
    return rc;
}

/* 1 when the ring reads path's blocks, 0 when its file system refuses. */
static int ring_opens(const char *path)
{
    hog_dataset *ds;
    char err[256] = "";
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    hog_block_ring *r = NULL;
    int rc = hog_block_ring_open(ds, 2, 0, &r);
    hog_block_ring_close(r);
    hog_dataset_close(ds);
    cr_assert(rc == 0 || rc == -EOPNOTSUPP, "rc %d", rc);
    return rc == 0;
}

/* make_hgd's data set into hgd (its text removed): 1 when the ring reads
 * its blocks, 0 when the file system refuses O_DIRECT. */
static int ring_data(char *hgd, size_t len)
{
    char svm[96];
    snprintf(svm, sizeof(svm), "%s/d.svm", dir);
    snprintf(hgd, len, "%s/d.hgd", dir);
    make_hgd(svm, hgd);
    remove(svm);
    return ring_opens(hgd);
}

/* Out of core, the epochs read the blocks with O_DIRECT into a ring of
 * buffers (etl_blockring.c); where the file system refuses O_DIRECT,
 * through the mapping. Both give the same model, bit for bit. */
Test(ooc, the_direct_reads_and_the_mapping_give_the_same_model, .init = setup, .fini = scratch_remove)
{
    char hgd[96], err[256] = "";
    if (!ring_data(hgd, sizeof(hgd)))
        cr_skip_test("%s: no O_DIRECT here: every run reads through the mapping", dir);
    hog_model *a, *b;
    cr_assert_eq(train_ooc(hgd, 0, &a, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(train_ooc(hgd, 1, &b, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(a->dim, b->dim);
    cr_assert_eq(memcmp((const void *)a->w, (const void *)b->w, a->dim * a->outputs * sizeof(hog_weight)), 0);
    cr_assert_eq(memcmp((const void *)a->bias, (const void *)b->bias, a->outputs * sizeof(hog_weight)), 0);
    hog_model_free(a);
    hog_model_free(b);
}

/* A block that changed on disk after the open (its checks passed then) is
 * read again each epoch and checked before its rows are trained: the run
 * stops, naming it. */
Test(ooc, a_block_changed_on_disk_stops_the_run_by_name, .init = setup, .fini = scratch_remove)
{
    char hgd[96], err[256] = "";
    if (!ring_data(hgd, sizeof(hgd)))
        cr_skip_test("%s: no O_DIRECT here: the mapping's blocks are checked once, at the open", dir);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(hgd, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_gt(ds->info.blocks, 2u);
    long off = (long)((const char *)ds->blocks[2].value - (const char *)ds->map) + 100;
    flip_byte(hgd, off);
    hog_train_params p = hog_train_params_default();
    p.epochs = 2;
    p.threads = 2;
    p.mem_limit = 8u << 20;
    hog_trainer *t;
    hog_model *m = NULL;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    int rc = hog_trainer_run(t, ds, NULL, &m, err, sizeof(err));
    cr_assert_eq(rc, HOG_ECHECKSUM, "rc %d: %s", rc, err);
    cr_assert_null(m);
    cr_assert(strstr(err, "block 2: checksum mismatch"), "%s", err);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}

/* The predictions as float32, and the metrics, of m on path read with
 * mem_limit (predict reads a .hgd of more than half of it with O_DIRECT);
 * *direct: whether it said it read so. */
typedef struct sink {
    char *buf;
    size_t len;
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *k = ctx;
    k->buf = realloc(k->buf, k->len + len);
    cr_assert_not_null(k->buf);
    memcpy(k->buf + k->len, buf, len);
    k->len += len;
    return 0;
}

static int direct_said; /* predict or evaluation said it read with O_DIRECT */

static void log_direct(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    (void)level;
    if (strstr(msg, "out of core: reads with O_DIRECT"))
        direct_said = 1;
}

static int predict_ooc(const hog_model *m, const char *path, uint64_t mem_limit, sink *out, hog_predict_stats *st,
                       int *direct, char *err, size_t len)
{
    hog_read_params rp = hog_read_params_default();
    rp.mem_limit = mem_limit;
    hog_predict_params pp = hog_predict_params_default();
    pp.threads = 2;
    pp.format = HOG_PREDICT_F32;
    pp.write = sink_write;
    pp.write_ctx = out;
    direct_said = 0;
    hog_log_set(log_direct, NULL, HOG_LOG_DEBUG);
    int rc = hog_model_predict_file(m, path, &rp, &pp, st, err, len);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    *direct = direct_said;
    return rc;
}

/* predict out of core reads the blocks with O_DIRECT, in order, a few
 * ahead: the same predictions, byte for byte, and the same metrics as
 * with the data set mapped in memory (the log loss to rounding). */
Test(ooc, predict_reads_past_the_page_cache_and_predicts_the_same, .init = setup, .fini = scratch_remove)
{
    char hgd[96], err[256] = "";
    if (!ring_data(hgd, sizeof(hgd)))
        cr_skip_test("%s: no O_DIRECT here: predict reads through the mapping", dir);
    hog_model *m;
    cr_assert_eq(train_ooc(hgd, 0, &m, err, sizeof(err)), 0, "%s", err);
    sink in = {0}, out = {0};
    hog_predict_stats a, b;
    int direct_in, direct_out;
    cr_assert_eq(predict_ooc(m, hgd, 0, &in, &a, &direct_in, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(predict_ooc(m, hgd, 8u << 20, &out, &b, &direct_out, err, sizeof(err)), 0, "%s", err);
    cr_assert_not(direct_in, "a data set that fits was read with O_DIRECT");
    cr_assert(direct_out, "a data set of more than half of mem_limit was read through the mapping");
    cr_assert_eq(a.rows, 300000u);
    cr_assert_eq(b.rows, a.rows);
    cr_assert_eq(out.len, a.rows * sizeof(float));
    cr_assert_eq(in.len, out.len);
    cr_assert_eq(memcmp(in.buf, out.buf, in.len), 0);
    /* the workers' sums meet in another order from run to run */
    cr_assert_float_eq(a.metrics.logloss, b.metrics.logloss, 1e-12 * a.metrics.logloss);
    cr_assert_eq(a.metrics.accuracy, b.metrics.accuracy);
    cr_assert_eq(a.metrics.auc, b.metrics.auc);
    free(in.buf);
    free(out.buf);
    hog_model_free(m);
}

/* A block changed on disk after the model was trained: predict out of core
 * checks each block as it lands and stops, naming it, with nothing of the
 * rows after it scored into the metrics. */
Test(ooc, predict_stops_at_a_block_changed_on_disk, .init = setup, .fini = scratch_remove)
{
    char hgd[96], err[256] = "";
    if (!ring_data(hgd, sizeof(hgd)))
        cr_skip_test("%s: no O_DIRECT here: predict reads through the mapping", dir);
    hog_model *m;
    cr_assert_eq(train_ooc(hgd, 0, &m, err, sizeof(err)), 0, "%s", err);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(hgd, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_gt(ds->info.blocks, 5u);
    long off = (long)((const char *)ds->blocks[5].value - (const char *)ds->map) + 100;
    hog_dataset_close(ds);
    flip_byte(hgd, off);
    sink out = {0};
    hog_predict_stats st;
    int direct;
    int rc = predict_ooc(m, hgd, 8u << 20, &out, &st, &direct, err, sizeof(err));
    cr_assert(direct);
    cr_assert_eq(rc, HOG_ECHECKSUM, "rc %d: %s", rc, err);
    cr_assert(strstr(err, "block 5: checksum mismatch"), "%s", err);
    free(out.buf);
    hog_model_free(m);
}

/* The training-set metrics out of core, measured in a pass of their own
 * (--train-metrics exact), read the blocks with O_DIRECT as predict does:
 * the same figures as evaluating the model on the data set in memory. */
Test(ooc, exact_training_metrics_read_past_the_page_cache, .init = setup, .fini = scratch_remove)
{
    char hgd[96], err[256] = "";
    if (!ring_data(hgd, sizeof(hgd)))
        cr_skip_test("%s: no O_DIRECT here: evaluation reads through the mapping", dir);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(hgd, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    hog_train_params p = hog_train_params_default();
    p.epochs = 1;
    p.threads = 2;
    p.mem_limit = 8u << 20;
    p.train_metrics = HOG_TRAIN_METRICS_EXACT;
    hog_trainer *t;
    hog_model *m;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    direct_said = 0;
    hog_log_set(log_direct, NULL, HOG_LOG_DEBUG);
    cr_assert_eq(hog_trainer_run(t, ds, NULL, &m, err, sizeof(err)), 0, "%s", err);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert(direct_said, "the metrics' pass read through the mapping");
    hog_model_info ooc;
    hog_model_get_info(m, &ooc);
    hog_metrics mem;
    cr_assert_eq(hog_model_evaluate(m, ds, 2, &mem), 0);
    cr_assert_eq(ooc.train.rows, mem.rows);
    cr_assert_eq(ooc.train.accuracy, mem.accuracy);
    cr_assert_float_eq(ooc.train.logloss, mem.logloss, 1e-12 * mem.logloss);
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);
}
