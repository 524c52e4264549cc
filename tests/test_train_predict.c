/* test_train_predict.c: predictions of a whole file in one pass (hog_model_predict_file): byte for byte those of the row-by-row path for text and .hgd and every loss, float32 output, metrics, and errors mid-file. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/train.h"

#include "test_etl_files.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-predict");
}

TestSuite(train_predict, .init = setup, .fini = scratch_remove);

/* Every loss, with data of its kind. */
static const struct {
    hog_loss loss;
    char kind;
} losses[] = {
    {HOG_LOSS_LOGISTIC, 'b'}, {HOG_LOSS_HINGE, 'b'},    {HOG_LOSS_MODIFIED_HUBER, 'b'},
    {HOG_LOSS_SQUARED, 'r'},  {HOG_LOSS_QUANTILE, 'r'}, {HOG_LOSS_SOFTMAX, 'c'},
};

/* A growing buffer the predictions are written into. */
typedef struct sink {
    char *buf;
    size_t len, cap;
    int calls;
    int fail_at; /* > 0: that call fails with -ENOSPC */
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *k = ctx;
    if (++k->calls == k->fail_at)
        return -ENOSPC;
    if (k->len + len > k->cap) {
        k->cap = (k->len + len) * 2;
        k->buf = realloc(k->buf, k->cap);
        cr_assert_not_null(k->buf);
    }
    memcpy(k->buf + k->len, buf, len);
    k->len += len;
    return 0;
}

/* What the command wrote before it predicted in one pass: every row of the
 * data set, hog_model_predict, and printf. */
static char *reference(const hog_model *m, const char *path, size_t *len)
{
    hog_model_info mi;
    hog_model_get_info(m, &mi);
    hog_read_params rp = hog_read_params_default();
    rp.index_base = mi.data_index_base;
    hog_dataset *ds;
    char err[512];
    cr_assert_eq(hog_dataset_open(path, &rp, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_info di;
    hog_dataset_get_info(ds, &di);
    char *buf;
    FILE *f = open_memstream(&buf, len);
    for (uint64_t i = 0; i < di.rows; i++) {
        hog_row row = hog_dataset_row(ds, i);
        uint32_t cls = 0;
        double v = hog_model_predict(m, &row, &cls, NULL);
        switch (mi.loss) {
        case HOG_LOSS_LOGISTIC: fprintf(f, "%.6f\n", v); break;
        case HOG_LOSS_SQUARED:
        case HOG_LOSS_QUANTILE: fprintf(f, "%.9g\n", v); break;
        default: fprintf(f, "%.17g\n", hog_model_class_label(m, cls)); break;
        }
    }
    fclose(f);
    hog_dataset_close(ds);
    return buf;
}

/* Predicts path into k with pp (write set here); must succeed. */
static void predict(const hog_model *m, const char *path, const hog_read_params *rp, hog_predict_params pp, sink *k,
                    hog_predict_stats *st)
{
    char err[512] = "";
    pp.write = sink_write;
    pp.write_ctx = k;
    cr_assert_eq(hog_model_predict_file(m, path, rp, &pp, st, err, sizeof(err)), 0, "%s: %s", path, err);
}

/* A model of the loss trained on a file of its kind; *text and *bin get
 * the file and its .hgd (blocks of 97 rows: many, and a short last one). */
static hog_model *model_and_files(size_t c, int rows, char *text, char *bin)
{
    snprintf(text, 160, "%s", write_data("d.svm", rows, 200, 12, losses[c].kind, 70 + c));
    snprintf(bin, 160, "%s/d.hgd", dir);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 97;
    char err[512];
    cr_assert_eq(hog_dataset_convert(text, &rp, bin, NULL, err, sizeof(err)), 0, "%s", err);
    hog_dataset *ds = open_written(bin);
    hog_train_params p = hog_train_params_default();
    p.loss = losses[c].loss;
    p.threads = 1;
    p.epochs = 2;
    p.step = losses[c].kind == 'r' ? 0.02 : 0.1;
    hog_model *m = train(ds, NULL, p);
    hog_dataset_close(ds);
    return m;
}

Test(train_predict, text_and_hgd_byte_for_byte_as_the_row_by_row_path_for_every_loss)
{
    for (size_t c = 0; c < sizeof(losses) / sizeof(losses[0]); c++) {
        char text[160], bin[160];
        hog_model *m = model_and_files(c, 3000, text, bin);
        size_t want_len;
        char *want = reference(m, bin, &want_len);
        hog_read_params rp = hog_read_params_default();
        rp.rows_per_block = 64; /* text in blocks of its own size: 47 of them */
        for (unsigned threads = 1; threads <= 3; threads += 2) {
            const char *paths[2] = {text, bin};
            for (int b = 0; b < 2; b++) {
                sink k = {0};
                hog_predict_params pp = hog_predict_params_default();
                pp.threads = threads;
                hog_predict_stats st;
                predict(m, paths[b], &rp, pp, &k, &st);
                cr_assert_eq(k.len, want_len, "loss %s, %s, %u threads: %zu bytes, want %zu",
                             hog_loss_name(losses[c].loss), paths[b], threads, k.len, want_len);
                cr_assert(memcmp(k.buf, want, want_len) == 0, "loss %s, %s, %u threads: other bytes",
                          hog_loss_name(losses[c].loss), paths[b], threads);
                cr_assert_eq(st.rows, 3000);
                cr_assert_eq(st.format, b ? HOG_FORMAT_BINARY : HOG_FORMAT_LIBSVM);
                cr_assert_eq(st.features, m->info.features, "the input's features: %llu",
                             (unsigned long long)st.features);
                free(k.buf);
            }
        }
        free(want);
        hog_model_free(m);
    }
}

/* An fd takes the same bytes. */
Test(train_predict, to_a_file_descriptor)
{
    char text[160], bin[160], out[160];
    hog_model *m = model_and_files(0, 1000, text, bin);
    size_t want_len;
    char *want = reference(m, text, &want_len);
    FILE *f = create("p.txt", out);
    hog_predict_params pp = hog_predict_params_default();
    pp.fd = fileno(f);
    char err[512] = "";
    cr_assert_eq(hog_model_predict_file(m, text, NULL, &pp, NULL, err, sizeof(err)), 0, "%s", err);
    fclose(f);
    unsigned char *got;
    size_t got_len;
    cr_assert_eq(hog_read_file(out, &got, &got_len), 0);
    cr_assert_eq(got_len, want_len);
    cr_assert(memcmp(got, want, want_len) == 0);
    hog_free(got);
    free(want);
    hog_model_free(m);
}

/* f32: four little-endian bytes a row, the float of the text's value. */
Test(train_predict, float32_output_holds_the_values_the_text_shows)
{
    for (size_t c = 0; c < sizeof(losses) / sizeof(losses[0]); c++) {
        char text[160], bin[160];
        hog_model *m = model_and_files(c, 1500, text, bin);
        hog_dataset *ds = open_written(bin);
        sink k = {0};
        hog_predict_params pp = hog_predict_params_default();
        pp.format = HOG_PREDICT_F32;
        pp.threads = 2;
        hog_predict_stats st;
        predict(m, bin, NULL, pp, &k, &st);
        cr_assert_eq(k.len, 4 * 1500);
        for (uint64_t i = 0; i < 1500; i++) {
            hog_row row = hog_dataset_row(ds, i);
            uint32_t cls = 0;
            double v = hog_model_predict(m, &row, &cls, NULL);
            float want = hog_loss_is_regression(losses[c].loss) || losses[c].loss == HOG_LOSS_LOGISTIC
                             ? (float)v
                             : (float)hog_model_class_label(m, cls);
            const unsigned char *b = (const unsigned char *)k.buf + 4 * i;
            uint32_t bits = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
            float got;
            memcpy(&got, &bits, sizeof(got));
            cr_assert_eq(got, want, "loss %s, row %llu: %.9g, want %.9g", hog_loss_name(losses[c].loss),
                         (unsigned long long)i, (double)got, (double)want);
        }
        free(k.buf);
        hog_dataset_close(ds);
        hog_model_free(m);
    }
}

/* The metrics of the pass are hog_model_evaluate's: the same counts (so
 * the same accuracy and AUC histogram) and losses summed in another order. */
Test(train_predict, metrics_are_those_of_hog_model_evaluate)
{
    for (size_t c = 0; c < sizeof(losses) / sizeof(losses[0]); c++) {
        char text[160], bin[160];
        hog_model *m = model_and_files(c, 4000, text, bin);
        hog_dataset *ds = open_written(bin);
        hog_metrics want;
        cr_assert_eq(hog_model_evaluate(m, ds, 2, &want), 0);
        for (int b = 0; b < 2; b++) {
            hog_predict_params pp = hog_predict_params_default(); /* no output: only the metrics */
            pp.threads = 3;
            hog_predict_stats st;
            char err[512] = "";
            cr_assert_eq(hog_model_predict_file(m, b ? bin : text, NULL, &pp, &st, err, sizeof(err)), 0, "%s", err);
            const hog_metrics *got = &st.metrics;
            const char *name = hog_loss_name(losses[c].loss);
            cr_assert_eq(got->rows, want.rows, "%s", name);
            cr_assert_float_eq(got->loss, want.loss, 1e-9 * fabs(want.loss) + 1e-12, "%s: loss %.12g, %.12g", name,
                               got->loss, want.loss);
            cr_assert(got->accuracy == want.accuracy || (isnan(got->accuracy) && isnan(want.accuracy)), "%s", name);
            cr_assert(got->auc == want.auc || (isnan(got->auc) && isnan(want.auc)), "%s: auc %.12g, %.12g", name,
                      got->auc, want.auc);
            cr_assert(isnan(want.logloss) ? isnan(got->logloss) : fabs(got->logloss - want.logloss) < 1e-9, "%s",
                      name);
            cr_assert(isnan(want.rmse) ? isnan(got->rmse) : fabs(got->rmse - want.rmse) < 1e-9, "%s", name);
        }
        hog_dataset_close(ds);
        hog_model_free(m);
    }
}

/* Without metrics asked for, they stay NaN; without an output, nothing is
 * written and the rows are still counted. */
Test(train_predict, metrics_and_output_are_each_optional)
{
    char text[160], bin[160];
    hog_model *m = model_and_files(0, 500, text, bin);
    sink k = {0};
    hog_predict_params pp = hog_predict_params_default();
    pp.metrics = 0;
    hog_predict_stats st;
    predict(m, text, NULL, pp, &k, &st);
    cr_assert_eq(st.rows, 500);
    cr_assert_eq(st.metrics.rows, 0);
    cr_assert(isnan(st.metrics.accuracy) && isnan(st.metrics.auc));
    cr_assert_eq(k.len, 500 * strlen("0.123456\n"));
    pp = hog_predict_params_default();
    char err[512] = "";
    cr_assert_eq(hog_model_predict_file(m, bin, NULL, &pp, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(st.rows, 500);
    cr_assert_eq(st.metrics.rows, 500);
    cr_assert_gt(st.metrics.accuracy, 0.6);
    free(k.buf);
    hog_model_free(m);
}

static int output_write(void *ctx, const void *buf, size_t len)
{
    return hog_output_write(ctx, buf, len);
}

/* A malformed line half way stops the run with its file and line, and an
 * output written through hog_output (aborted then) leaves no file. */
/* Predicts path into a new output file on threads workers; the run must
 * fail with rc (err gets its message), with no statistics, and the
 * output, aborted, must leave no file. */
static void predict_fails(const hog_model *m, const char *path, unsigned threads, int rc, char *err, size_t len)
{
    char out[160];
    snprintf(out, sizeof(out), "%s/p.txt", dir);
    hog_output *o;
    cr_assert_eq(hog_output_open(out, &o), 0);
    hog_predict_params pp = hog_predict_params_default();
    pp.threads = threads;
    pp.write = output_write;
    pp.write_ctx = o;
    hog_predict_stats st;
    int got = hog_model_predict_file(m, path, NULL, &pp, &st, err, len);
    cr_assert_eq(got, rc, "%d: %s", got, err);
    cr_assert_eq(st.rows, 0, "no statistics of a failed run");
    hog_output_abort(o);
    cr_assert_neq(access(out, F_OK), 0, "no output file");
}

Test(train_predict, a_bad_line_mid_file_fails_with_its_location_and_leaves_no_output)
{
    char text[160], bin[160], bad[160];
    hog_model *m = model_and_files(0, 500, text, bin);
    FILE *f = create("bad.svm", bad);
    for (int i = 1; i <= 30000; i++) {
        if (i == 20001)
            fprintf(f, "+1 3:0.5 7:zz\n");
        else
            fprintf(f, "%s 3:0.5 %d:0.25\n", i % 2 ? "+1" : "-1", 8 + i % 150);
    }
    fclose(f);
    for (unsigned threads = 1; threads <= 2; threads++) {
        char err[512] = "";
        predict_fails(m, bad, threads, HOG_EFORMAT, err, sizeof(err));
        char want[200];
        snprintf(want, sizeof(want), "%s:20001:", bad);
        cr_assert(strstr(err, want) == err && strstr(err, "expected a number"), "%s", err);
    }
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "test $(ls -A %s | grep -c -e p.txt -e tmp) -eq 0", dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left behind");
    hog_model_free(m);
}

/* Skipped lines are counted and located; the rest is predicted. */
Test(train_predict, skipped_lines_are_counted_and_located)
{
    char text[160], bin[160], bad[160];
    hog_model *m = model_and_files(0, 500, text, bin);
    FILE *f = create("skip.svm", bad);
    for (int i = 1; i <= 100; i++)
        fprintf(f, i == 40 ? "oops\n" : "+1 3:0.5\n");
    fclose(f);
    hog_read_params rp = hog_read_params_default();
    rp.on_error = HOG_ON_ERROR_SKIP;
    sink k = {0};
    hog_predict_params pp = hog_predict_params_default();
    pp.write = sink_write;
    pp.write_ctx = &k;
    hog_predict_stats st;
    char err[512] = "";
    cr_assert_eq(hog_model_predict_file(m, bad, &rp, &pp, &st, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(st.rows, 99);
    cr_assert_eq(st.skipped, 1);
    char want[200];
    snprintf(want, sizeof(want), "%s:40:", bad);
    cr_assert(strstr(err, want), "%s", err);
    cr_assert_eq(k.len, 99 * strlen("0.123456\n"));
    free(k.buf);
    hog_model_free(m);
}

/* A write that fails stops the run with its code; an unknown format and an
 * empty file are refused. */
Test(train_predict, failed_writes_and_bad_parameters)
{
    char text[160], bin[160], empty[160];
    hog_model *m = model_and_files(0, 5000, text, bin);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 97;
    for (int b = 0; b < 2; b++) {
        sink k = {.fail_at = 3};
        hog_predict_params pp = hog_predict_params_default();
        pp.threads = 2;
        pp.write = sink_write;
        pp.write_ctx = &k;
        char err[512] = "";
        cr_assert_eq(hog_model_predict_file(m, b ? bin : text, &rp, &pp, NULL, err, sizeof(err)), -ENOSPC);
        cr_assert(strstr(err, "the predictions could not be written: No space left on device"), "%s", err);
        cr_assert_eq(k.calls, 3, "nothing more is written after a failure");
        free(k.buf);
    }
    hog_predict_params pp = hog_predict_params_default();
    pp.format = (hog_predict_format)7;
    char err[512] = "";
    cr_assert_eq(hog_model_predict_file(m, text, NULL, &pp, NULL, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_predict_params.format"), "%s", err);
    fclose(create("empty.svm", empty));
    cr_assert_eq(hog_model_predict_file(m, empty, NULL, NULL, NULL, err, sizeof(err)), HOG_EEMPTY);
    cr_assert(strstr(err, "empty.svm"), "%s", err);
    cr_assert_eq(hog_model_predict_file(m, "/nonexistent/x.svm", NULL, NULL, NULL, err, sizeof(err)), -ENOENT);
    hog_model_free(m);
}

/* The defaults leave the reserved area zero, and it ends the struct: a
 * later field taken from it keeps the old behaviour at zero. */
Test(train_predict, defaults_and_the_reserved_area)
{
    hog_predict_params pp = hog_predict_params_default();
    cr_assert_eq(pp.threads, 0);
    cr_assert_eq(pp.format, HOG_PREDICT_TEXT);
    cr_assert_null(pp.write);
    cr_assert_eq(pp.fd, -1);
    cr_assert_eq(pp.metrics, 1);
    for (size_t i = 0; i < sizeof(pp.reserved) / sizeof(pp.reserved[0]); i++)
        cr_assert_eq(pp.reserved[i], 0);
    cr_assert_eq(offsetof(hog_predict_params, reserved) + sizeof(pp.reserved), sizeof(pp));
}

/* Raw scores and class probabilities, as f32: hog_model_scores' outputs,
 * and their logistic or softmax link, a column per class; a model with no
 * probabilities is refused. */
Test(train_predict, raw_scores_and_probabilities)
{
    for (size_t c = 0; c < sizeof(losses) / sizeof(losses[0]); c++) {
        char text[160], bin[160];
        hog_model *m = model_and_files(c, 700, text, bin);
        hog_dataset *ds = open_written(bin);
        const hog_loss loss = losses[c].loss;
        for (int w = HOG_PREDICT_RAW; w <= HOG_PREDICT_PROBABILITIES; w++) {
            hog_predict_params pp = hog_predict_params_default();
            pp.format = HOG_PREDICT_F32;
            pp.what = (hog_predict_what)w;
            const uint32_t K = hog_predict_columns(m, pp.what);
            if (K == 0) {
                char err[512] = "";
                sink k = {0};
                pp.write = sink_write;
                pp.write_ctx = &k;
                cr_assert_eq(hog_model_predict_file(m, bin, NULL, &pp, NULL, err, sizeof(err)), HOG_EPARAM);
                cr_assert(strstr(err, "gives no probabilities"), "%s", err);
                cr_assert(loss != HOG_LOSS_LOGISTIC && loss != HOG_LOSS_SOFTMAX);
                continue;
            }
            sink k = {0};
            hog_predict_stats st;
            predict(m, bin, NULL, pp, &k, &st);
            cr_assert_eq(k.len, 4ull * K * 700, "loss %s, what %d: %zu bytes", hog_loss_name(loss), w, k.len);
            float s[16];
            for (uint64_t i = 0; i < 700; i++) {
                hog_row row = hog_dataset_row(ds, i);
                hog_model_scores(m, &row, NULL, s);
                double sum = 0;
                for (uint32_t j = 0; j < K; j++) {
                    float got;
                    memcpy(&got, k.buf + 4 * (i * K + j), 4); /* little-endian host */
                    sum += (double)got;
                    if (w == HOG_PREDICT_RAW)
                        cr_assert_eq(got, s[j], "loss %s, row %llu, score %u", hog_loss_name(loss),
                                     (unsigned long long)i, j);
                }
                if (w == HOG_PREDICT_PROBABILITIES) {
                    cr_assert(fabs(sum - 1) < 1e-5, "loss %s, row %llu: the probabilities sum to %g",
                              hog_loss_name(loss), (unsigned long long)i, sum);
                    /* hog_model_predict's: the positive class's, or each class's */
                    float probs[16], last;
                    double v = hog_model_predict(m, &row, NULL, probs);
                    memcpy(&last, k.buf + 4 * (i * K + K - 1), 4);
                    cr_assert(fabs((double)last - (loss == HOG_LOSS_SOFTMAX ? (double)probs[K - 1] : v)) < 1e-6,
                              "loss %s, row %llu: %g", hog_loss_name(loss), (unsigned long long)i, (double)last);
                }
            }
            free(k.buf);
        }
        hog_dataset_close(ds);
        hog_model_free(m);
    }
}

/* A .hgd is opened without a pass of its own: each block is checked as a
 * worker takes it, and a bad one stops the run with the message a check at
 * open gives, leaving no output. */
Test(train_predict, a_bad_block_of_a_hgd_stops_the_run_naming_it)
{
    char text[160], bin[160], bad[160];
    hog_model *m = model_and_files(0, 3000, text, bin);
    snprintf(bad, sizeof(bad), "%s/bad.hgd", dir);
    char want[512] = "", err[512] = "";
    hgd_bad_block(bin, bad, want, sizeof(want));
    for (unsigned threads = 1; threads <= 2; threads++) {
        predict_fails(m, bad, threads, HOG_ECHECKSUM, err, sizeof(err));
        cr_assert_str_eq(err, want);
    }
    hog_model_free(m);
}

/* Vowpal Wabbit text of rows whose label is the parity of a sum over their
 * words' numbers: words that hash apart at 20 bits and onto each other at
 * 18 are told apart only by the model's own hashing. */
static void vw_text(const char *name, int rows, uint64_t seed, char *path)
{
    snprintf(path, 256, "%s", scratch_path(name));
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int r = 0; r < rows; r++) {
        int words[8], sum = 0;
        for (int i = 0; i < 8; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            words[i] = (int)(seed >> 40) % 3000;
            sum += words[i] % 5 - 2;
        }
        fprintf(f, "%d |w", sum > 0 ? 1 : -1);
        for (int i = 0; i < 8; i++)
            fprintf(f, " x%d", words[i]);
        fputc('\n', f);
    }
    cr_assert_eq(fclose(f), 0);
}

/* A snapshot's hash bits, the last one's (one pass with snapshots). */
static int snapshot_bits(void *ctx, const hog_model *m)
{
    *(unsigned *)ctx = hog_model_data_hash_bits(m) + 100;
    return 0;
}

static hog_model *train_text(const char *path, const hog_read_params *rp, unsigned epochs, const hog_model *init,
                             int want_rc, char *err, size_t len)
{
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.epochs = epochs;
    p.holdout = 0;
    hog_trainer *t;
    cr_assert_eq(hog_trainer_create(&p, &t, err, len), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, init), 0);
    unsigned snapped = 0; /* 100 + the bits of the last snapshot; 0: none taken */
    if (epochs == 1)
        cr_assert_eq(hog_trainer_set_snapshots(t, 500, 0, snapshot_bits, &snapped), 0);
    hog_model *m = NULL;
    hog_file_run fr;
    hog_read_params read = rp ? *rp : hog_read_params_default();
    read.rows_per_block = 128; /* windows of a few blocks: snapshots come in the stream's middle */
    cr_assert_eq(hog_trainer_run_file(t, path, &read, NULL, NULL, &m, &fr, err, len), want_rc, "%s", err);
    hog_trainer_free(t);
    if (want_rc == 0) {
        hog_dataset_close(fr.train);
        hog_dataset_close(fr.test);
        if (epochs == 1 && fr.streamed) /* snapshots in the stream's middle keep the bits too */
            cr_assert_eq(snapped, 100 + hog_model_data_hash_bits(m), "last snapshot: %u", snapped);
    }
    return m;
}

/* A model keeps the hashing of the text it was trained on, in its file
 * too, and predicts new text hashed the same without being told: another
 * hashing is refused, as is a warm start of another. One pass and epochs
 * alike, and from a .hgd converted so, which keeps the bits. */
Test(train_predict, text_hashed_in_training_is_hashed_so_to_predict)
{
    char tr[256], te[256], saved[256], bin[256], err[512] = "";
    vw_text("tr.vw", 3000, 5, tr);
    vw_text("te.vw", 800, 6, te);
    snprintf(saved, sizeof(saved), "%s", scratch_path("m.hog"));
    snprintf(bin, sizeof(bin), "%s", scratch_path("tr.hgd"));
    hog_read_params rp = hog_read_params_default();
    rp.hash_bits = 20;
    for (unsigned epochs = 1; epochs <= 3; epochs += 2) {
        hog_model *m = train_text(tr, &rp, epochs, NULL, 0, err, sizeof(err));
        cr_assert_eq(hog_model_data_hash_bits(m), 20);
        cr_assert_eq(hog_model_save(m, saved), 0);
        hog_model *back = NULL;
        cr_assert_eq(hog_model_load(saved, &back, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_model_data_hash_bits(back), 20);
        hog_predict_stats given, followed;
        hog_predict_params pp = hog_predict_params_default();
        cr_assert_eq(hog_model_predict_file(back, te, &rp, &pp, &given, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_model_predict_file(back, te, NULL, &pp, &followed, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(followed.metrics.logloss, given.metrics.logloss);
        cr_assert_gt(followed.metrics.auc, 0.8, "AUC %g", followed.metrics.auc);
        hog_read_params other = rp;
        other.hash_bits = 18;
        cr_assert_eq(hog_model_predict_file(back, te, &other, &pp, NULL, err, sizeof(err)), HOG_EPARAM);
        cr_assert(strstr(err, "hog_read_params.hash_bits is 18: the model was trained on text hashed into 2^20"),
                  "%s", err);
        /* a warm start hashes as its model did, and refuses another */
        hog_model *warm = train_text(tr, NULL, epochs, back, 0, err, sizeof(err));
        hog_model *told = train_text(tr, &rp, epochs, back, 0, err, sizeof(err));
        cr_assert_eq(hog_model_data_hash_bits(warm), 20);
        hog_predict_stats ws, ts;
        cr_assert_eq(hog_model_predict_file(warm, te, NULL, &pp, &ws, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(hog_model_predict_file(told, te, NULL, &pp, &ts, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(ws.metrics.logloss, ts.metrics.logloss, "one thread: the model of -b 20 given");
        hog_model_free(told);
        cr_assert_null(train_text(tr, &other, epochs, back, HOG_EPARAM, err, sizeof(err)));
        cr_assert(strstr(err, "the initial model was trained on text hashed into 2^20"), "%s", err);
        hog_model_free(warm);
        hog_model_free(back);
        hog_model_free(m);
    }
    cr_assert_eq(hog_dataset_convert(tr, &rp, bin, NULL, err, sizeof(err)), 0, "%s", err);
    hog_model *h = train_text(bin, NULL, 2, NULL, 0, err, sizeof(err));
    cr_assert_eq(hog_model_data_hash_bits(h), 20);
    hog_model_free(h);
    /* Text not hashed by the setting, and its .hgd: nothing kept, and the
     * model file has no such line (other models' files are unchanged). */
    cr_assert_eq(hog_dataset_convert(tr, NULL, bin, NULL, err, sizeof(err)), 0, "%s", err);
    const char *inputs[] = {tr, bin};
    for (int i = 0; i < 2; i++) {
        hog_model *m = train_text(inputs[i], NULL, 2, NULL, 0, err, sizeof(err));
        cr_assert_eq(hog_model_data_hash_bits(m), 0);
        cr_assert_eq(hog_model_save(m, saved), 0);
        static char bytes[1 << 16];
        FILE *f = fopen(saved, "rb");
        cr_assert_not_null(f);
        const size_t len = fread(bytes, 1, sizeof(bytes), f);
        fclose(f);
        cr_assert_gt(len, 0);
        cr_assert_null(memmem(bytes, len, "data_hash_bits", 14));
        hog_model_free(m);
    }
}
