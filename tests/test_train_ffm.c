/* test_train_ffm.c: field-aware factorisation machines: the score is LIBFFM's sum over pairs, the model learns a cross of fields, saves and loads whole, scores only data with fields, and its penalty can follow the rows. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_log.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"
#include "test_xor_data.h"
#include "train/train_run.h"

static void setup(void)
{
    scratch_make("train-ffm");
}

TestSuite(train_ffm, .init = setup, .fini = scratch_remove);

/* write_xor's LIBFFM text: a from base+1..base+10 in field 0, b from
 * base+11..base+20 in field 1, and c from base+21..base+50 in field 2,
 * which carries nothing; the factors a keeps for field 1 and b for field 0
 * learn the parity XOR. base spreads the indices: a large one makes a model
 * too large for whole copies, packed with its AdaGrad sums. */
static hog_dataset *xor_fields(const char *name, int rows, uint64_t seed, uint32_t base)
{
    return open_written(write_xor(name, XOR_LIBFFM, rows, seed, base + 1, 30));
}

/* fm_params, field-aware, for 12 epochs. */
static hog_train_params ffm_params(void)
{
    hog_train_params p = fm_params();
    p.field_aware = 1;
    p.epochs = 12;
    return p;
}

/* A model of 1, 2 and 4 threads, of factors that are and are not a
 * multiple of four (the pairs four factors at a time, or one), unpacked
 * and packed, learns the cross; a linear model cannot. */
Test(train_ffm, learns_a_cross_of_fields_no_linear_model_can)
{
    static const struct {
        uint32_t factors, base;
        unsigned threads;
    } runs[] = {{4, 0, 1}, {4, 0, 2}, {3, 0, 1}, {8, 60000, 1}, {4, 60000, 4}};
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        hog_dataset *tr = xor_fields("tr.ffm", 8000, 3, runs[i].base), *te = xor_fields("te.ffm", 2000, 4, runs[i].base);
        cr_assert_eq(hog_dataset_fields(tr), 3);
        hog_train_params p = ffm_params();
        p.factors = runs[i].factors;
        p.threads = runs[i].threads;
        hog_model *m = train(tr, te, p);
        hog_model_info in;
        hog_model_get_info(m, &in);
        cr_assert_gt(in.test.accuracy, 0.99, "k %u, base %u, %u threads: test accuracy %g", p.factors, runs[i].base,
                     p.threads, in.test.accuracy);
        cr_assert_lt(in.test.logloss, 0.15, "k %u, base %u: test logloss %g", p.factors, runs[i].base,
                     in.test.logloss);
        cr_assert_eq(hog_model_fields(m), 3);
        cr_assert_eq(m->outputs, 3 * p.factors, "a feature's factors for each field, no linear weight");
        cr_assert_eq(in.outputs, 1);
        cr_assert_eq(in.params.field_aware, 1);
        hog_model_free(m);
        if (i == 0) {
            p.factors = 0;
            p.field_aware = 0;
            hog_model *lin = train(tr, te, p);
            hog_model_get_info(lin, &in);
            cr_assert_lt(in.test.accuracy, 0.6, "a linear model's test accuracy %g", in.test.accuracy);
            hog_model_free(lin);
        }
        hog_dataset_close(tr);
        hog_dataset_close(te);
    }
}

/* The score against LIBFFM's written out: the bias and, over |x|^2, the
 * sum over pairs of <v_a,field of b, v_b,field of a> x_a x_b; a field the
 * model does not know leaves its feature out of the pairs; no fields at
 * all, no score. */
Test(train_ffm, the_score_is_libffm_sum_over_pairs)
{
    hog_dataset *tr = xor_fields("tr.ffm", 3000, 5, 0);
    hog_train_params p = ffm_params();
    p.epochs = 2;
    hog_model *m = train(tr, NULL, p);
    const uint32_t F = m->factors;
    for (uint64_t i = 0; i < 3000; i += 41) {
        hog_row row = hog_dataset_row(tr, i);
        const uint16_t field[3] = {0, 1, 2};
        cr_assert_eq(row.nnz, 3);
        double pairs = 0, norm = 0;
        for (uint32_t a = 0; a < row.nnz; a++) {
            norm += (double)row.value[a] * (double)row.value[a];
            for (uint32_t b = a + 1; b < row.nnz; b++) {
                const hog_weight *va = hog_model_wj(m, row.index[a]) + field[b] * F;
                const hog_weight *vb = hog_model_wj(m, row.index[b]) + field[a] * F;
                double dot = 0;
                for (uint32_t f = 0; f < F; f++)
                    dot += (double)hog_w_load(&va[f]) * (double)hog_w_load(&vb[f]);
                pairs += dot * (double)row.value[a] * (double)row.value[b];
            }
        }
        const double want = (double)hog_w_load(&m->bias[0]) + pairs / norm;
        const double got = hog_model_predict_fields(m, &row, field, NULL, NULL);
        cr_assert(fabs(got - 1 / (1 + exp(-want))) < 1e-5, "row %llu: %.9g, LIBFFM's %.9g",
                  (unsigned long long)i, got, 1 / (1 + exp(-want)));
        /* Field 7 is not the model's: c is left out of the pairs, not of |x|^2. */
        const uint16_t unknown[3] = {0, 1, 7};
        const hog_weight *va = hog_model_wj(m, row.index[0]) + 1 * F, *vb = hog_model_wj(m, row.index[1]);
        double dot = 0;
        for (uint32_t f = 0; f < F; f++)
            dot += (double)hog_w_load(&va[f]) * (double)hog_w_load(&vb[f]);
        const double left = (double)hog_w_load(&m->bias[0]) + dot / norm;
        cr_assert(fabs(hog_model_predict_fields(m, &row, unknown, NULL, NULL) - 1 / (1 + exp(-left))) < 1e-5);
        cr_assert(isnan(hog_model_predict(m, &row, NULL, NULL)), "a row without fields has no score");
    }
    hog_model_free(m);
    hog_dataset_close(tr);
}

/* One thread: the same model run to run, bit for bit; saved and loaded,
 * the same factors, fields and predictions, in a version-5 file. */
Test(train_ffm, one_thread_is_reproducible_and_the_file_round_trips)
{
    hog_dataset *tr = xor_fields("tr.ffm", 4000, 6, 0);
    hog_train_params p = ffm_params();
    p.epochs = 3;
    hog_model *a = train(tr, NULL, p), *b = train(tr, NULL, p);
    cr_assert(same_weights(a, b), "two one-thread runs differ");
    char path[256];
    snprintf(path, sizeof(path), "%s/ffm.hog", dir);
    cr_assert_eq(hog_model_save(a, path), 0);
    FILE *f = fopen(path, "rb");
    unsigned char head[12];
    cr_assert_eq(fread(head, 1, 12, f), 12);
    fclose(f);
    cr_assert_eq(head[8], 5, "file version %u", head[8]);
    hog_model *c;
    char err[256];
    cr_assert_eq(hog_model_load(path, &c, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(a, c), "the loaded model's factors differ");
    cr_assert_eq(hog_model_fields(c), 3);
    hog_model_info in;
    hog_model_get_info(c, &in);
    cr_assert_eq(in.params.factors, 4);
    cr_assert_eq(in.params.field_aware, 1);
    hog_metrics ma, mc;
    cr_assert_eq(hog_model_evaluate(a, tr, 1, &ma), 0);
    cr_assert_eq(hog_model_evaluate(c, tr, 2, &mc), 0);
    cr_assert_eq(ma.loss, mc.loss);
    cr_assert_lt(ma.logloss, 0.3, "%g", ma.logloss);
    /* Go on from it (its kind of model), on data of no more fields. */
    hog_trainer *t;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, c), 0);
    hog_model *d;
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &d, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    cr_assert_eq(hog_model_fields(d), 3);
    hog_model_free(a);
    hog_model_free(b);
    hog_model_free(c);
    hog_model_free(d);
    hog_dataset_close(tr);
}

/* Data without fields: no field-aware model trains on it or scores it,
 * each saying what it needs; a warm start keeps its kind of model. */
Test(train_ffm, data_without_fields_and_other_kinds_are_refused_and_named)
{
    char err[512];
    hog_dataset *svm = make_data("tr.svm", 500, 30, 5, 'b', 7);
    cr_assert_eq(hog_dataset_fields(svm), 0);
    train_fails(svm, NULL, ffm_params(), HOG_EPARAM, err, sizeof(err));
    cr_assert(strstr(err, "no fields"), "%s", err);

    hog_dataset *tr = xor_fields("tr.ffm", 2000, 8, 0);
    hog_train_params p = ffm_params();
    p.epochs = 1;
    hog_model *m = train(tr, NULL, p);
    hog_metrics mm;
    cr_assert_eq(hog_model_evaluate(m, svm, 1, &mm), HOG_EPARAM);
    float out[500];
    cr_assert_eq(hog_model_predict_array(m, svm, HOG_PREDICT_SCORE, 1, out, 500, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "has no fields"), "%s", err);
    char path[256];
    snprintf(path, sizeof(path), "%s/tr.svm", dir);
    cr_assert_eq(hog_model_predict_file(m, path, NULL, NULL, NULL, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "tr.svm: the text has no fields"), "%s", err);

    /* A plain factorisation machine goes on from it only as field-aware. */
    hog_train_params q = ffm_params();
    q.field_aware = 0;
    hog_trainer *t;
    hog_model *out_m = NULL;
    cr_assert_eq(hog_trainer_create(&q, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_set_init(t, m), 0);
    cr_assert_eq(hog_trainer_run(t, tr, NULL, &out_m, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "field-aware"), "%s", err);
    cr_assert_null(out_m);
    hog_trainer_free(t);

    q = ffm_params();
    q.factors = 0;
    const char *field;
    cr_assert_eq(hog_train_params_check(&q, &field), HOG_EPARAM);
    cr_assert_str_eq(field, "field_aware");
    hog_model_free(m);
    hog_dataset_close(tr);
    hog_dataset_close(svm);
}

/* l2_rows: the run's penalty is l2_rows over the rows it trains on (less
 * the holdout), kept in the model; the trainer's own setting stays. */
Test(train_ffm, the_penalty_can_follow_the_rows)
{
    hog_dataset *small = xor_fields("s.ffm", 1000, 9, 0), *large = xor_fields("l.ffm", 4000, 10, 0);
    hog_train_params p = ffm_params();
    p.epochs = 1;
    p.l2 = 0.5;
    p.l2_rows = 2;
    hog_trainer *t;
    char err[256];
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    hog_model *a, *b;
    cr_assert_eq(hog_trainer_run(t, small, NULL, &a, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run(t, large, NULL, &b, err, sizeof(err)), 0, "%s", err);
    hog_trainer_free(t);
    hog_model_info ia, ib;
    hog_model_get_info(a, &ia);
    hog_model_get_info(b, &ib);
    cr_assert_eq(ia.params.l2, 2.0 / 1000, "%g", ia.params.l2);
    cr_assert_eq(ib.params.l2, 2.0 / 4000, "%g", ib.params.l2);
    cr_assert_eq(ia.params.l2_rows, 2.0);
    hog_model_free(a);
    hog_model_free(b);
    p.holdout = 0.5;
    hog_model *c = train(large, NULL, p);
    hog_model_get_info(c, &ia);
    cr_assert_eq(ia.params.l2, 2.0 / 2000, "%g", ia.params.l2);
    hog_model_free(c);
    hog_dataset_close(small);
    hog_dataset_close(large);
}

/* Read while it trains: one pass over LIBFFM text (its fields settled by
 * the first blocks) learns the cross as reading it whole does, and several
 * epochs stream their first; a field the first blocks lacked stops one
 * pass naming its line, and starts a streamed run over on the whole file. */
Test(train_ffm, text_trains_in_one_pass_and_while_it_is_read)
{
    char tr[160], te[160];
    snprintf(tr, sizeof(tr), "%s", write_xor("tr.ffm", XOR_LIBFFM, 8000, 3, 1, 30));
    snprintf(te, sizeof(te), "%s", write_xor("te.ffm", XOR_LIBFFM, 2000, 4, 1, 30));
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 500;
    hog_train_params p = ffm_params();
    char err[512] = "";
    double loss[2][2];
    for (int epochs = 1; epochs <= 2; epochs++)
        for (int stream = 0; stream <= 1; stream++) {
            p.epochs = (unsigned)(epochs == 1 ? 1 : 12);
            p.stream = stream;
            hog_trainer *t;
            hog_model *m;
            hog_file_run fr;
            cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
            cr_assert_eq(hog_trainer_run_file(t, tr, &rp, NULL, te, &m, &fr, err, sizeof(err)), 0, "%s", err);
            cr_assert_eq(fr.streamed, stream, "%s", fr.note);
            if (stream && epochs == 1)
                cr_assert_eq(fr.train->info.blocks, 0, "one pass keeps no block");
            hog_model_info in;
            hog_model_get_info(m, &in);
            cr_assert_eq(in.params.field_aware, 1);
            cr_assert_eq(hog_model_fields(m), 3);
            loss[epochs - 1][stream] = in.test.logloss;
            hog_model_free(m);
            hog_dataset_close(fr.train);
            hog_dataset_close(fr.test);
            hog_trainer_free(t);
        }
    cr_log_info("FFM test logloss: one epoch %.4f whole, %.4f one pass; 12 epochs %.4f whole, %.4f streamed",
                loss[0][0], loss[0][1], loss[1][0], loss[1][1]);
    cr_assert_lt(fabs(loss[0][1] - loss[0][0]), 0.03, "one pass %g, whole %g", loss[0][1], loss[0][0]);
    cr_assert_lt(loss[1][1], 0.3, "12 epochs streamed: %g (the cross learned)", loss[1][1]);
    cr_assert_lt(fabs(loss[1][1] - loss[1][0]), 0.03, "streamed %g, whole %g", loss[1][1], loss[1][0]);

    /* Row 3001 has field 7, the first 3,000 rows (6 blocks) fields 0 to 2. */
    char late[160];
    FILE *f = create("late.ffm", late);
    FILE *src = fopen(tr, "r");
    cr_assert_not_null(src);
    char line[512];
    for (int i = 0; i < 6000 && fgets(line, sizeof(line), src); i++) {
        if (i == 3000)
            fprintf(f, "1 0:1:1 7:9:1\n");
        fputs(line, f);
    }
    fclose(src);
    cr_assert_eq(fclose(f), 0);
    p.stream = 1;
    p.epochs = 1;
    hog_trainer *t;
    hog_model *m = NULL;
    hog_file_run fr;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run_file(t, late, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), HOG_EFORMAT, "%s", err);
    cr_assert(strstr(err, "late.ffm:3001: field 7 is not one of the 3 fields the first rows had"), "%s", err);
    cr_assert_null(m);
    hog_trainer_free(t);
    p.epochs = 2;
    cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_trainer_run_file(t, late, &rp, NULL, NULL, &m, &fr, err, sizeof(err)), 0, "%s", err);
    cr_assert(strstr(fr.note, "field 7 first appears in row 3001") && strstr(fr.note, "started over"), "%s",
              fr.note);
    cr_assert_eq(hog_model_fields(m), 8);
    hog_model_free(m);
    hog_dataset_close(fr.train);
    hog_trainer_free(t);
}

/* A hog_progress_fn: the examples trained by the end of each epoch, into
 * ctx (uint64_t per epoch). */
static void examples_by_epoch(void *ctx, const hog_epoch_stats *st, int done)
{
    if (done)
        ((uint64_t *)ctx)[st->epoch - 1] = st->examples;
}

/* Two workers begin a field-aware run sharing its hot factors and keep
 * private copies of them (and of the warm ones, in their tier) only after
 * their first 4 segments each
 * (train_hot.c, "The copies' first segments"): the first epoch of a data
 * set, and the first window of text streamed in its first epoch, run a
 * pass up to there and one over the rest. Every row still trains once an
 * epoch and the cross is learned; one worker, which keeps no copies, says
 * nothing of it. */
Test(train_ffm, two_workers_share_the_hot_factors_before_their_copies)
{
    enum { ROWS = 40000, EPOCHS = 3 };
    char tr[160];
    snprintf(tr, sizeof(tr), "%s", write_xor("tr.ffm", XOR_LIBFFM, ROWS, 3, 60001, 30));
    hog_dataset *te = xor_fields("te.ffm", 2000, 4, 60000);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 8192;
    hog_train_params p = ffm_params();
    p.epochs = EPOCHS;
    p.holdout = 0;
    char err[512] = "";
    for (int stream = 0; stream <= 1; stream++)
        for (unsigned threads = 1; threads <= 2; threads++) {
            uint64_t seen[EPOCHS] = {0};
            p.stream = stream;
            p.threads = threads;
            p.progress = examples_by_epoch;
            p.progress_ctx = seen;
            hog_trainer *t;
            hog_model *m;
            hog_file_run fr;
            cr_assert_eq(hog_trainer_create(&p, &t, err, sizeof(err)), 0, "%s", err);
            log_forget();
            hog_log_set(log_keep, NULL, HOG_LOG_DEBUG);
            int rc = hog_trainer_run_file(t, tr, &rp, NULL, NULL, &m, &fr, err, sizeof(err));
            hog_log_set(NULL, NULL, HOG_LOG_WARN);
            cr_assert_eq(rc, 0, "%s", err);
            cr_assert_eq(fr.streamed, stream, "%s", fr.note);
            const char *said = strstr(logged, "the first 8 segments share the hot factors; the private copies of 50");
            cr_assert_eq(said != NULL, threads == 2, "stream %d, %u threads: %s", stream, threads, logged);
            /* the 30 warm ones of 1 row in 1,000 to 1 in 20 merge every 16 segments */
            cr_assert_eq(strstr(logged, "50 of them hot; 20 merged every segment, the others every 16") != NULL,
                         threads == 2, "stream %d, %u threads: %s", stream, threads, logged);
            cr_assert(!said || !strstr(said + 1, "the first 8 segments"), "said once: %s", logged);
            for (unsigned e = 0; e < EPOCHS; e++)
                cr_assert_eq(seen[e], (uint64_t)ROWS * (e + 1), "stream %d, %u threads: %llu examples by epoch %u",
                             stream, threads, (unsigned long long)seen[e], e + 1);
            hog_metrics mt;
            cr_assert_eq(hog_model_evaluate(m, te, 1, &mt), 0);
            cr_assert_gt(mt.accuracy, 0.99, "stream %d, %u threads: test accuracy %g", stream, threads, mt.accuracy);
            hog_model_free(m);
            hog_dataset_close(fr.train);
            hog_dataset_close(fr.test);
            hog_trainer_free(t);
        }
    hog_dataset_close(te);
}

/* A field-aware machine's warm copies merge every 16 segments, and what
 * one changed since its last merge joins the model at its pass's end.
 * Twenty segments, the first 8 of them shared (the copies' first
 * segments), leave 12 to two workers, fewer than the 16 between warm
 * merges: only the pass's end merges what the warm copies changed. A
 * feature that only the last segment's rows hold (48 rows of 20,480: a
 * warm copy, 1 row in 1,000 and more, fewer than 1 in 20) has moved from
 * its start after one epoch, whichever worker trained it and when; four
 * seeds, four orders of the segments, put its segment among the copies'
 * in all but 1 in 40 of runs (8 of 20 are shared). Where the rows hold
 * another feature in its place, its factors are the start's. */
Test(train_ffm, a_warm_copys_last_steps_join_the_model_at_its_passs_end)
{
    enum { SEGMENTS = 20, XROWS = 48, X = 60101 };
    for (uint64_t seed = 1; seed <= 4; seed++) {
        hog_model *m[2];
        for (int held = 0; held <= 1; held++) {
            const char *path = write_xor("warm.ffm", XOR_LIBFFM, (SEGMENTS - 1) * 1024, 3, 60001, 30);
            FILE *f = fopen(path, "a");
            cr_assert_not_null(f, "%s", path);
            for (int i = 0; i < 1024; i++) /* a = 0, b = 1: y = 1 */
                if (i % 20 == 0 && i / 20 < XROWS)
                    fprintf(f, "1 0:60001:1 1:60012:1 2:%d:1\n", held ? X : X + 1);
                else
                    fprintf(f, "1 0:60001:1 1:60012:1\n");
            cr_assert_eq(fclose(f), 0);
            hog_dataset *tr = open_written(path);
            hog_train_params p = ffm_params();
            p.epochs = 1;
            p.threads = 2;
            p.holdout = 0;
            p.seed = seed;
            log_forget();
            hog_log_set(log_keep, NULL, HOG_LOG_DEBUG);
            m[held] = train(tr, NULL, p);
            hog_log_set(NULL, NULL, HOG_LOG_WARN);
            cr_assert_not_null(strstr(logged, "merged every segment, the others every 16"), "%s", logged);
            cr_assert_not_null(strstr(logged, "the first 8 segments share the hot factors"), "%s", logged);
            hog_dataset_close(tr);
        }
        float moved = 0;
        for (uint32_t k = 0; k < m[0]->outputs; k++)
            moved = fmaxf(moved, fabsf(hog_w_load(&hog_model_wj(m[1], X)[k]) - hog_w_load(&hog_model_wj(m[0], X)[k])));
        cr_assert_gt(moved, 1e-3f, "seed %llu: feature %d's factors moved %g from their start",
                     (unsigned long long)seed, X, (double)moved);
        hog_model_free(m[0]);
        hog_model_free(m[1]);
    }
}

#if defined(__x86_64__) && !defined(HOG_W_C11)
#include <immintrin.h>

/* ffm_pair4's AdaGrad step (train_rows.c) on plain floats, one pair, SSE:
 * what the two-pair AVX2 step must give bit for bit. */
static void pair_sse(float *pa, float *qa, float *pb, float *qb, float t, float l2a, float l2b, float step, float eps)
{
    __m128 va = _mm_load_ps(pa), vb = _mm_load_ps(pb);
    __m128 ga = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(t), vb), _mm_mul_ps(_mm_set1_ps(l2a), va));
    __m128 gb = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(t), va), _mm_mul_ps(_mm_set1_ps(l2b), vb));
    __m128 ua = _mm_add_ps(_mm_load_ps(qa), _mm_mul_ps(ga, ga)), ub = _mm_add_ps(_mm_load_ps(qb), _mm_mul_ps(gb, gb));
    _mm_store_ps(qa, ua);
    _mm_store_ps(qb, ub);
    __m128 s = _mm_set1_ps(step), e = _mm_set1_ps(eps);
    _mm_store_ps(pa, _mm_sub_ps(va, _mm_mul_ps(_mm_mul_ps(s, _mm_rsqrt_ps(_mm_add_ps(ua, e))), ga)));
    _mm_store_ps(pb, _mm_sub_ps(vb, _mm_mul_ps(_mm_mul_ps(s, _mm_rsqrt_ps(_mm_add_ps(ub, e))), gb)));
}

/* The AVX2 step of every pair of a row is the single pairs' in sequence,
 * bit for bit: rows of one feature a field (two pairs a step), with a
 * field twice and with a feature twice (those pairs one at a time), of 4
 * and 8 factors, 2 to 9 features. */
Test(train_ffm, the_two_pair_step_is_the_single_pairs_bit_for_bit)
{
    if (!__builtin_cpu_supports("avx2"))
        cr_skip_test("this CPU has no AVX2: training takes the single pairs' step");
    enum { G = 6, FEAT = 8 };
    uint64_t s = 99;
    for (int trial = 0; trial < 60; trial++) {
        const uint32_t F = trial % 2 ? 8 : 4, n = 2 + (uint32_t)(trial % 8), K = G * F;
        _Alignas(64) static float w[2][FEAT * G * 8], q[2][FEAT * G * 8];
        for (uint32_t i = 0; i < FEAT * K; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            w[0][i] = w[1][i] = (float)((int64_t)(s >> 40) - (1 << 23)) / (float)(1 << 24);
            q[0][i] = q[1][i] = (float)(s >> 44) / (float)(1 << 16);
        }
        uint32_t feat[16];
        uint16_t field[16];
        float val[16], l2c[16];
        for (uint32_t i = 0; i < n; i++) {
            feat[i] = (i + (uint32_t)trial) % FEAT;
            field[i] = (uint16_t)(i % G);
            val[i] = 0.25f + 0.125f * (float)i;
            l2c[i] = 1e-3f * (float)(1 + feat[i]);
        }
        if (trial % 3 == 1 && n > 3)
            field[3] = field[2]; /* a field twice */
        if (trial % 3 == 2 && n > 4)
            feat[4] = feat[1]; /* a feature twice */
        hog_weight *wp[16], *qp[16];
        for (uint32_t i = 0; i < n; i++) {
            wp[i] = (hog_weight *)&w[0][feat[i] * K];
            qp[i] = (hog_weight *)&q[0][feat[i] * K];
        }
        const float rg = -0.37f, step = 0.3f, eps = 1e-12f;
        const ffm_step_row row = {wp, qp, val, l2c, field, n, F, rg, step, eps};
        for (uint32_t a = 0; a < n; a++)
            hog_ffm_step_avx2(&row, a);
        for (uint32_t a = 0; a < n; a++)
            for (uint32_t b = a + 1; b < n; b++)
                for (uint32_t f = 0; f < F; f += 4) {
                    const size_t oa = feat[a] * K + field[b] * F + f, ob = feat[b] * K + field[a] * F + f;
                    pair_sse(&w[1][oa], &q[1][oa], &w[1][ob], &q[1][ob], rg * val[a] * val[b], l2c[a], l2c[b], step,
                             eps);
                }
        cr_assert(memcmp(w[0], w[1], sizeof(w[0])) == 0, "trial %d (k %u, %u features): factors differ", trial, F, n);
        cr_assert(memcmp(q[0], q[1], sizeof(q[0])) == 0, "trial %d: AdaGrad sums differ", trial);
    }
}
#endif
