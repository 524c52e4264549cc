/* test_train_hot.c: the workers' private copies of hot weights (with more workers than CPUs the intercept and a hot feature still reach the one-thread loss) and their whole copies of a small model (when, how a merge adds up, and that two workers on them train as one does). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"
#include "train/train_run.h"

#include "test_log.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"

static void setup(void)
{
    scratch_make("train-hot");
}

TestSuite(train_hot, .init = setup, .fini = scratch_remove);

Test(train_hot, hot_features_and_intercept_converge_like_one_thread)
{
    /* Every row has one hot feature, whose value tells the label: the
     * intercept and the hot feature are what workers keep private copies of (here
     * only where workers outnumber the CPUs: 5 segments per worker on 4).
     * More workers must reach the one-thread loss, not overshoot it. The
     * model is too large for whole copies (over 2^17 weights), so the
     * tuned loops look the copies up: with the hot feature first (the
     * copies are the first features, found by the index) and last, where
     * the run renumbers the features so that the copies are the first
     * ones again (train_renum.c) - and, averaged, where it does not and
     * the map finds them. */
    for (int place = 0; place < 3; place++) {
        const int last = place > 0;
        char path[160];
        FILE *f = create(last ? "hot-last.svm" : "hot.svm", path);
        hog_rng r = {13};
        const int hot = last ? 200002 : 1;
        for (int i = 0; i < 20000; i++) {
            int a = 2 + (int)hog_rng_below(&r, 5000), b = 5002 + (int)hog_rng_below(&r, 195000);
            /* the hot feature's value tells the label 85 times in 100 */
            int high = (int)hog_rng_below(&r, 2), pos = hog_rng_below(&r, 100) < 85 ? high : !high;
            const char *x = high ? "1.5" : "0.5";
            if (last)
                fprintf(f, "%d %d:1 %d:1 %d:%s\n", pos ? 1 : -1, a, b, hot, x);
            else
                fprintf(f, "%d %d:%s %d:1 %d:1\n", pos ? 1 : -1, hot, x, a, b);
        }
        fclose(f);
        hog_dataset *tr = open_written(path);
        /* The plain loop and the normalized one of the defaults, each with
         * its own copy of the row loop with the private copies, and
         * AdaGrad's general loop (weights_of, acc_of). */
        static const char *const kinds[3] = {"plain", "normalized", "adagrad"};
        for (int kind = 0; kind < 3; kind++) {
            double loss[3];
            const unsigned threads[3] = {1, 2, 4};
            for (int i = 0; i < 3; i++) {
                hog_train_params p = kind ? hog_train_params_default() : plain_params();
                p.threads = threads[i];
                p.epochs = 5;
                p.train_metrics = HOG_TRAIN_METRICS_EXACT; /* the model the copies were merged into */
                if (!kind)
                    p.step = 0.2;
                if (kind == 2)
                    p.schedule = HOG_SCHEDULE_ADAGRAD;
                p.average = place == 2 ? 2 : 0; /* averaging reads the model in a pass: no renumbering */
                log_forget();
                hog_log_set(log_keep, NULL, HOG_LOG_DEBUG);
                hog_model *m = train(tr, NULL, p);
                hog_log_set(NULL, NULL, HOG_LOG_ERROR);
                cr_assert_eq(strstr(logged, "features renumbered") != NULL, place == 1 && threads[i] > 1,
                             "placement %d, %u threads: %s", place, threads[i], logged);
                hog_model_info in;
                hog_model_get_info(m, &in);
                loss[i] = in.train.loss;
                hog_model_free(m);
            }
            for (int i = 1; i < 3; i++)
                cr_assert_lt(loss[i], loss[0] * 1.15, "hot feature %s, %s, %u threads: loss %g, one thread %g",
                             place == 0 ? "first" : place == 1 ? "last" : "last, averaged", kinds[kind], threads[i],
                             loss[i], loss[0]);
        }
        hog_dataset_close(tr);
    }
}

/* Whole copies: for the tuned loops of a small model on several workers
 * with segments enough, merged every WHOLE_COST (16) non-zeros per weight,
 * at least 4 times a worker's epoch, at most 64 segments apart. */
Test(train_hot, whole_copies_are_for_small_models_on_the_tuned_loops)
{
    hog_train_params p = hog_train_params_default();
    p.loss = HOG_LOSS_LOGISTIC;
    /* RCV1's shape: 1,000,000 rows of 75 non-zeros, 47,000 features. */
    const uint64_t rows = 1000000, nnz = 75 * rows;
    cr_assert_eq(hog_whole_every(&p, OPT_NORMALIZED, 1, 47000, rows, nnz, 2), 10);
    cr_assert_eq(hog_whole_every(&p, 0, 1, 47000, rows, nnz, 2), 10);
    cr_assert_eq(hog_whole_every(&p, 0, 1, 47000, rows, nnz, 1), 0, "one worker: no copy");
    cr_assert_eq(hog_whole_every(&p, OPT_ADAGRAD, 1, 47000, rows, nnz, 2), 0, "the general loop");
    cr_assert_eq(hog_whole_every(&p, 0, 1, 200000, rows, nnz, 2), 0, "a model past a core's cache");
    cr_assert_eq(hog_whole_every(&p, 0, 1, 47000, 15 * 1024, 15 * 1024 * 75, 2), 0, "under 8 segments a worker");
    cr_assert_eq(hog_whole_every(&p, 0, 1, 47000, 16 * 1024, 16 * 1024 * 75, 2), 2, "4 merges a worker");
    cr_assert_eq(hog_whole_every(&p, 0, 1, 131072, rows, rows, 2), 64, "at most 64 segments apart");
    p.replicas = HOG_REPLICAS_CORE;
    cr_assert_eq(hog_whole_every(&p, 0, 1, 47000, rows, nnz, 2), 0, "replicas are copies already");
    p = hog_train_params_default();
    p.loss = HOG_LOSS_SOFTMAX;
    cr_assert_eq(hog_whole_every(&p, 0, 3, 3000, rows, nnz, 2), 0, "softmax runs the general loop");
}

/* A job of model m whose private copies are of the features hot_ids
 * names, all else zero: what the merges read. */
static epoch_job copies_job(hog_model *m, uint32_t *hot_ids)
{
    epoch_job job;
    memset(&job, 0, sizeof(job));
    job.m = m;
    job.tab.hot_ids = hot_ids;
    return job;
}

/* A merge adds a cold weight's change to what the model holds now (another
 * worker's merge included), a hot one's scaled by the share, and leaves
 * the copy holding the model. Five weights: a group of four and a tail. */
Test(train_hot, a_merge_sums_changes_and_shares_out_the_hot_ones)
{
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 5, 1, 2);
    cr_assert_not_null(m);
    _Alignas(64) hog_weight own[8];
    _Alignas(64) float own0[8];
    const float start[5] = {1, 2, 3, 4, 5}, mine[5] = {1.5f, 2, 2, 4, 7};
    for (int j = 0; j < 5; j++) {
        hog_w_store(&m->w[j], start[j]);
        hog_w_store(&own[j], mine[j]);
        own0[j] = start[j];
    }
    hog_w_store(&m->w[2], 13.0f); /* another worker merged +10 meanwhile */
    uint32_t hot_ids[1] = {0};
    epoch_job job = copies_job(m, hot_ids);
    job.tab.nhot = 1;
    job.tab.whole_every = 1;
    worker_state ws;
    memset(&ws, 0, sizeof(ws));
    ws.own = own;
    ws.own0 = own0;
    ws.own_n = 5;
    ws.own_share = 0.5f;
    ws.own_since = 3;
    hog_whole_sync(&job, &ws);
    const float want[5] = {1.25f, 2, 12, 4, 7};
    for (int j = 0; j < 5; j++) {
        cr_assert_float_eq(hog_w_load(&m->w[j]), want[j], 1e-6, "weight %d: %g, want %g", j,
                           (double)hog_w_load(&m->w[j]), (double)want[j]);
        cr_assert(hog_w_load(&own[j]) == hog_w_load(&m->w[j]) && own0[j] == hog_w_load(&m->w[j]),
                  "the copy of weight %d holds the model", j);
    }
    cr_assert_eq(ws.own_since, 0u);
    hog_model_free(m);
}

/* A private copy's merge at a segment's end, four words at a time where a
 * feature has a multiple of four (8 outputs) and one at a time where not
 * (3): a summed change (share 1, as a field-aware machine's) adds the
 * copy's change to what the shared word holds now, another worker's merge
 * meanwhile kept; a hot change shared out adds share times it; the copy
 * and its start then hold the shared word. */
Test(train_hot, a_copy_merges_its_change_four_words_at_a_time_or_one)
{
    const uint32_t outs[2] = {8, 3};
    const float shares[2] = {1.0f, 0.5f};
    for (int o = 0; o < 2; o++)
        for (int sh = 0; sh < 2; sh++) {
            const uint32_t K = outs[o];
            hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 4, K, 2);
            cr_assert_not_null(m);
            _Alignas(64) hog_weight mine[8];
            _Alignas(64) float mine0[8];
            float want[8];
            for (uint32_t k = 0; k < K; k++) {
                const float start = 10.0f + (float)k, delta = k == 1 || k == K - 1 ? 0.25f * (float)(k + 1) : 0.0f;
                const float other = k == 2 ? 100.0f : 0.0f; /* another worker's merge meanwhile */
                hog_w_store(&m->w[2 * K + k], start + other);
                hog_w_store(&mine[k], start + delta);
                mine0[k] = start;
                want[k] = start + other + shares[sh] * delta;
            }
            uint32_t hot_ids[1] = {2};
            epoch_job job = copies_job(m, hot_ids);
            job.tab.nlocal = job.tab.nhot = 1;
            worker_state ws;
            memset(&ws, 0, sizeof(ws));
            ws.w = m->w;
            ws.hot = mine;
            ws.hot0 = mine0;
            hog_hot_sync(&job, &ws, shares[sh]);
            for (uint32_t k = 0; k < K; k++) {
                const float got = hog_w_load(&m->w[2 * K + k]);
                cr_assert_float_eq(got, want[k], 1e-6, "%u outputs, share %g, word %u: %g, want %g", K,
                                   (double)shares[sh], k, (double)got, (double)want[k]);
                cr_assert(hog_w_load(&mine[k]) == got && mine0[k] == got, "the copy of word %u holds the model", k);
            }
            for (uint32_t j = 0; j < 4; j++)
                for (uint32_t k = 0; j != 2 && k < K; k++)
                    cr_assert(hog_w_load(&m->w[j * K + k]) == 0.0f, "feature %u untouched", j);
            hog_model_free(m);
        }
}

/* Two workers on whole copies reach the loss of one on the same data (a
 * power law of features: a few hot, most cold), on both tuned loops, and
 * every row is trained once an epoch. */
Test(train_hot, two_workers_on_whole_copies_train_as_one_does)
{
    char path[160];
    FILE *f = create("whole.svm", path);
    hog_rng r = {29};
    for (int i = 0; i < 40000; i++) {
        int used[12], n = 0;
        for (int k = 0; k < 12; k++) {
            /* 1 + floor(2000^u): a power law over features 1..2000 */
            int j = 1 + (int)pow(2000.0, (double)hog_rng_below(&r, 1000000) / 1e6), at = n;
            for (int q = 0; q < n; q++)
                at = used[q] == j ? -1 : at;
            if (at < 0)
                continue;
            while (at > 0 && used[at - 1] > j) { /* ascending, as libsvm wants */
                used[at] = used[at - 1];
                at--;
            }
            used[at] = j;
            n++;
        }
        double s = 0;
        for (int q = 0; q < n; q++)
            s += sin(used[q]);
        fprintf(f, "%s", s > 0 ? "+1" : "-1");
        for (int q = 0; q < n; q++)
            fprintf(f, " %d:1", used[q]);
        fprintf(f, "\n");
    }
    fclose(f);
    hog_dataset *tr = open_written(path);
    for (int normalized = 0; normalized <= 1; normalized++) {
        double loss[2];
        for (unsigned t = 1; t <= 2; t++) {
            hog_train_params p = normalized ? hog_train_params_default() : plain_params();
            p.threads = t;
            p.epochs = 5;
            log_forget();
            hog_log_set(log_keep, NULL, HOG_LOG_DEBUG);
            hog_model *m = train(tr, NULL, p);
            hog_log_set(NULL, NULL, HOG_LOG_WARN);
            hog_model_info in;
            hog_model_get_info(m, &in);
            loss[t - 1] = in.train.loss;
            cr_assert_eq(in.train.rows, 40000u, "every row once in the last epoch");
            cr_assert_eq(strstr(logged, "copy of the whole model") != NULL, t == 2, "%u workers: %s", t, logged);
            hog_model_free(m);
        }
        cr_assert_lt(loss[1], loss[0] * 1.05, "%s: 2 workers' loss %g, one's %g", normalized ? "normalized" : "plain",
                     loss[1], loss[0]);
    }
    hog_dataset_close(tr);
}

Test(train_hot, the_slot_map_finds_every_slot_and_no_other)
{
    /* Hot features hashed over a large model. Every feature must get its
     * own slot back through the map, the copied ones theirs and every
     * other -1, whether or not its cell is one a copied feature holds; the
     * map leaves out a feature whose cell a hotter one holds, never a
     * hotter one, and about 1 in 9 of them. */
    const uint64_t dim = 1ull << 22, rows = 1000000;
    uint32_t *deg = calloc(dim, sizeof(uint32_t));
    cr_assert_not_null(deg);
    uint32_t want = 0;
    for (uint32_t i = 1; i <= 6000; i++) {
        uint32_t x = i; /* a 32-bit mix: features spread as hashed ones are */
        x ^= x >> 16;
        x *= 0x85ebca6bu;
        x ^= x >> 13;
        x *= 0xc2b2ae35u;
        x ^= x >> 16;
        const uint64_t j = x & (dim - 1);
        if (deg[j])
            continue;
        deg[j] = (uint32_t)(rows / 2 - want); /* hot, each less than the one before */
        want++;
    }
    for (uint64_t j = 1; j < dim; j += 97)
        deg[j] += deg[j] ? 0 : 3; /* cold: far below 1 row in 300 */
    uint64_t *map;
    uint32_t bits, *ids, nlocal, nhot, first;
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_leq(nlocal, want);
    cr_assert_geq(nlocal, want - want / 6, "%u of %u hot features placed", nlocal, want);
    cr_assert_eq(nhot, nlocal); /* every one of them 1 row in 100 and up */
    cr_assert_eq(first, 0, "hashed features are not the first ones");
    uint32_t *slot_of = malloc(dim * sizeof(uint32_t));
    cr_assert_not_null(slot_of);
    for (uint64_t j = 0; j < dim; j++)
        slot_of[j] = UINT32_MAX;
    for (uint32_t h = 0; h < nlocal; h++) {
        cr_assert_eq(slot_of[ids[h]], UINT32_MAX, "feature %u placed twice", ids[h]);
        slot_of[ids[h]] = h;
        if (h > 0) /* by degree: hotter first */
            cr_assert_gt(deg[ids[h - 1]], deg[ids[h]]);
    }
    uint64_t held = 0;
    for (uint64_t j = 0; j < dim; j++) {
        const int32_t h = hog_slot_of(map, bits, (uint32_t)j);
        if (slot_of[j] != UINT32_MAX) {
            cr_assert_eq(h, (int32_t)slot_of[j], "feature %llu: slot %d, placed at %u", (unsigned long long)j, h,
                         slot_of[j]);
            continue;
        }
        cr_assert_eq(h, -1, "feature %llu: slot %d, never placed", (unsigned long long)j, h);
        if (!deg[j] || deg[j] * 300ull < rows)
            continue;
        /* A hot feature left out: a hotter one holds its cell. */
        held++;
        const uint32_t other = (uint32_t)map[hog_hot_cell((uint32_t)j, bits)];
        cr_assert_neq(slot_of[other], UINT32_MAX);
        cr_assert_gt(deg[other], deg[j]);
    }
    cr_assert_eq(held, want - nlocal);
    cr_assert_eq(hog_slot_of(map, bits, UINT32_MAX), -1);
    free(slot_of);
    hog_free(map);
    hog_free(ids);
    /* Features numbered by frequency, the hot ones first: each its own
     * cell. */
    memset(deg, 0, dim * sizeof(uint32_t));
    for (uint32_t j = 0; j < 3000; j++)
        deg[j] = (uint32_t)(rows / 2 - j);
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_eq(nlocal, 3000);
    cr_assert_eq(first, 3000, "the copies are the first features");
    for (uint32_t j = 0; j < 3001; j++)
        cr_assert_eq(hog_slot_of(map, bits, j), j < 3000 ? (int32_t)j : -1);
    hog_free(map);
    hog_free(ids);
    memset(deg, 0, dim * sizeof(uint32_t));
    for (uint32_t c = 0; c < 64; c++)
        deg[c << 16] = (uint32_t)(rows / 2 - c);
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    /* Features of the same low bits share a cell: the hottest keeps it. */
    cr_assert_eq(nlocal, 1, "64 features of the same low bits: %u placed", nlocal);
    cr_assert_eq(ids[0], 0);
    cr_assert_eq(hog_slot_of(map, bits, 0), 0);
    cr_assert_eq(hog_slot_of(map, bits, 1u << 16), -1);
    hog_free(map);
    hog_free(ids);
    /* No copies for one worker: an empty map, every feature -1. */
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 1, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_eq(nlocal, 0);
    for (uint64_t j = 0; j < dim; j++)
        cr_assert_eq(hog_slot_of(map, bits, (uint32_t)j), -1, "feature %llu", (unsigned long long)j);
    free(deg);
    hog_free(map);
    hog_free(ids);
}

static void swap_degrees(uint32_t *deg, uint32_t a, uint32_t b)
{
    const uint32_t t = deg[a];
    deg[a] = deg[b];
    deg[b] = t;
}

/* Features numbered nearly by frequency: where those chosen all lie within
 * an eighth more than their number, and the hot ones within an eighth
 * more than theirs, the copies are the first features, each in the slot of
 * its own number, the few unchosen among them included; one chosen feature
 * further out, or a model of several outputs, keeps the map. */
Test(train_hot, features_numbered_by_frequency_are_copied_as_the_first_ones)
{
    const uint64_t dim = 1u << 16, rows = 1000000;
    uint32_t *deg = calloc(dim, sizeof(uint32_t));
    cr_assert_not_null(deg);
    /* 800 features: 0..199 touched by 1 row in 100 and up (hot), 200..799
     * by 1 in 300 and up (warm), with the warm 500 below the threshold and
     * the hot 150 and 190 swapped with warm 210 and 220. */
    for (uint32_t j = 0; j < 800; j++)
        deg[j] = j < 200 ? (uint32_t)(rows / 50 - j) : (uint32_t)(rows / 200 - j);
    deg[500] = 10;
    swap_degrees(deg, 150, 210);
    swap_degrees(deg, 190, 220);
    uint64_t *map;
    uint32_t bits, *ids, nlocal, nhot, first;
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_eq(first, 800, "first %u", first);
    cr_assert_eq(nlocal, 800);
    cr_assert_eq(nhot, 221, "the hot ones and the warm ones below the last of them: %u", nhot);
    for (uint32_t j = 0; j < 801; j++) {
        cr_assert_eq(hog_slot_of(map, bits, j), j < 800 ? (int32_t)j : -1, "feature %u", j);
        if (j < 800)
            cr_assert_eq(ids[j], j);
    }
    hog_free(map);
    hog_free(ids);
    /* The same but for one warm feature past the first 900. */
    swap_degrees(deg, 700, 950);
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 1, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_eq(first, 0, "a chosen feature at 950: the map, first %u", first);
    cr_assert_eq(nlocal, 799);
    cr_assert_eq(nhot, 200);
    cr_assert_geq(hog_slot_of(map, bits, 950), 0);
    cr_assert_lt(hog_slot_of(map, bits, 700), 0);
    hog_free(map);
    hog_free(ids);
    swap_degrees(deg, 700, 950);
    /* Several outputs (softmax) run the general loop: the map. */
    cr_assert_eq(hog_hot_choose(deg, rows, dim, 3, 2, 0, &map, &bits, &ids, &nlocal, &nhot, &first), 0);
    cr_assert_eq(first, 0);
    cr_assert_eq(nlocal, 799);
    hog_free(map);
    hog_free(ids);
    free(deg);
}

/* A field-aware machine copies only the features that 1 row in 20 or more
 * touches; a linear model those of 1 row in 300. */
/* The tables of renumbered copies: features 0..n-1 in slots of their own
 * numbers, found by the index, every other feature by none. */
Test(train_hot, the_first_features_tables_copy_features_0_to_n)
{
    feature_tables tab = {.whole_every = 0, .l2_scale = NULL};
    cr_assert_eq(hog_hot_first(&tab, 837, 319), 0);
    cr_assert_eq(tab.first, 837);
    cr_assert_eq(tab.nlocal, 837);
    cr_assert_eq(tab.nhot, 319);
    cr_assert_geq(1u << tab.map_bits, 4 * 837, "four cells a copy: %u bits", tab.map_bits);
    for (uint32_t j = 0; j < 1u << 20; j++)
        cr_assert_eq(hog_slot_of(tab.map, tab.map_bits, j), j < 837 ? (int32_t)j : -1, "feature %u", j);
    for (uint32_t j = 0; j < 837; j++)
        cr_assert_eq(tab.hot_ids[j], j);
    hog_free(tab.map);
    hog_free(tab.hot_ids);
}

/* One thread's model against two threads' renumbered one, on tr (see
 * below): plain, the plain update, else the default. */
static void renumbered_like_one_thread(const hog_dataset *tr, int hot, int rare, int plain)
{
    float *w[2];
    double loss[2];
    uint64_t features = 0;
    for (int k = 0; k < 2; k++) {
        hog_train_params p = plain ? plain_params() : hog_train_params_default();
        p.threads = k ? 2 : 1;
        p.epochs = 4;
        p.l2 = 1e-3;
        p.train_metrics = HOG_TRAIN_METRICS_EXACT;
        log_forget();
        hog_log_set(log_keep, NULL, HOG_LOG_DEBUG);
        hog_model *m = train(tr, NULL, p);
        hog_log_set(NULL, NULL, HOG_LOG_ERROR);
        cr_assert_eq(strstr(logged, "features renumbered") != NULL, k == 1, "%u threads: %s", p.threads, logged);
        hog_weights hw;
        hog_model_weights(m, &hw);
        features = hw.features;
        w[k] = malloc(features * sizeof(float));
        cr_assert_not_null(w[k]);
        memcpy(w[k], hw.w, features * sizeof(float));
        hog_model_info in;
        hog_model_get_info(m, &in);
        loss[k] = in.train.loss;
        hog_model_free(m);
    }
    for (uint64_t j = 0; j < features; j++)
        cr_assert_eq(w[1][j] != 0.0f, w[0][j] != 0.0f, "%s update, feature %llu: %g on two threads, %g on one",
                     plain ? "plain" : "default", (unsigned long long)j, (double)w[1][j], (double)w[0][j]);
    const int informative[2] = {hot - 1, rare - 1}; /* read 1-based: stored less one */
    for (int i = 0; i < 2; i++) {
        const float one = w[0][informative[i]], two = w[1][informative[i]];
        cr_assert(one > 0.0f && two > one * 0.7f && two < one * 1.4f,
                  "%s update, feature %d: %g on two threads, %g on one", plain ? "plain" : "default", informative[i],
                  (double)two, (double)one);
    }
    cr_assert_lt(loss[1], loss[0] * 1.15, "%s update: loss %g on two threads, %g on one", plain ? "plain" : "default",
                 loss[1], loss[0]);
    free(w[0]);
    free(w[1]);
}

/* Hashed features renumbered for the epochs (train_renum.c): two workers
 * train the rows with the copies as the first features, and the model
 * they leave is in the file's numbering. Features no row touches keep
 * weight 0 and every touched one gets a weight, as with one thread; the
 * two informative ones - a hot feature at a high number, and a rare one
 * below the copies' count, which the renumbering moves out of the way -
 * come out near one thread's weights. A strong L2 makes each feature's
 * own scale matter (rows / rows touching it): a scale left at another
 * feature's number would shrink the hot one as a rare one, or not at all. */
Test(train_hot, renumbered_features_leave_the_model_in_the_files_numbering)
{
    char path[160];
    FILE *f = create("renum.svm", path);
    hog_rng r = {29};
    const int dim = 1 << 18, hot = 200002, rare = 3;
    for (int i = 0; i < 24000; i++) {
        int high = (int)hog_rng_below(&r, 2), pos = hog_rng_below(&r, 100) < 85 ? high : !high;
        int has_rare = i % 400 == 0; /* 60 rows: not a candidate for copies (80) */
        if (has_rare)
            pos = 1;
        /* 60 warm features at scattered high numbers, each in 1 row of 60,
         * a cold one below them and one above; in ascending order */
        const int warm = 1000 + 4099 * (int)hog_rng_below(&r, 60), cold = 10 + (int)hog_rng_below(&r, 890);
        const int above = 250001 + (int)hog_rng_below(&r, 10000);
        fprintf(f, "%d", pos ? 1 : -1);
        if (has_rare)
            fprintf(f, " %d:1", rare);
        fprintf(f, " %d:1", cold);
        if (warm < hot)
            fprintf(f, " %d:1 %d:%s", warm, hot, high ? "1.5" : "0.5");
        else
            fprintf(f, " %d:%s %d:1", hot, high ? "1.5" : "0.5", warm);
        fprintf(f, " %d:1 %d:1\n", above, dim - 1);
    }
    fclose(f);
    hog_dataset *tr = open_written(path);
    /* The default update (its L2 scales in the model's records) and the
     * plain one (in the run's table of them). */
    for (int plain = 0; plain <= 1; plain++)
        renumbered_like_one_thread(tr, hot, rare, plain);
    hog_dataset_close(tr);
}

/* A linear model copies the features 1 row in 300 touches; a field-aware
 * machine down to 1 in 1,000, in two tiers: those 1 row in 20 touches
 * merge every segment, the warm ones every 16. */
Test(train_hot, a_field_aware_machine_copies_warm_features_in_a_second_tier)
{
    const uint64_t dim = 1000, rows = 100000;
    uint32_t deg[1000] = {0};
    /* features below the map's cells: each has a cell of its own */
    deg[1] = rows / 2;       /* both, every segment */
    deg[2] = rows / 10;      /* both, every segment */
    deg[3] = rows / 30;      /* both; the field-aware machine's warm tier */
    deg[4] = rows / 200;     /* both; the field-aware machine's warm tier */
    deg[5] = rows / 1000;    /* the field-aware machine's alone, warm */
    deg[6] = rows / 2000;    /* neither */
    for (int field_aware = 0; field_aware <= 1; field_aware++) {
        feature_tables tab;
        memset(&tab, 0, sizeof(tab));
        cr_assert_eq(hog_hot_choose(deg, rows, dim, 80, 2, field_aware, &tab.map, &tab.map_bits, &tab.hot_ids,
                                    &tab.nlocal, &tab.nhot, &tab.first),
                     0);
        cr_assert_eq(tab.nlocal, field_aware ? 5u : 4u, "field-aware %d: %u copies", field_aware, tab.nlocal);
        for (uint32_t j = 1; j <= 6; j++)
            cr_assert_eq(hog_slot_of(tab.map, tab.map_bits, j) >= 0, j <= 4 || (j == 5 && field_aware),
                         "field-aware %d: feature %u", field_aware, j);
        hog_hot_tiers(&tab, deg, rows, field_aware);
        cr_assert_eq(tab.nfast, field_aware ? 2u : 4u, "field-aware %d: %u merged every segment", field_aware,
                     tab.nfast);
        cr_assert_eq(tab.warm_every, field_aware ? 16u : 1u);
        for (uint32_t h = 0; field_aware && h < tab.nlocal; h++)
            cr_assert_eq((uint64_t)deg[tab.hot_ids[h]] * 20 >= rows, h < tab.nfast,
                         "copy %u (feature %u) in the wrong tier", h, tab.hot_ids[h]);
        hog_free(tab.map);
        hog_free(tab.hot_ids);
    }
}

/* A field-aware machine's warm copies (past nfast) keep their change
 * until every warm_every-th segment's merge, while the fast ones merge
 * every segment; hog_hot_flush merges what they changed since (a pass's
 * end), and nothing when they merged last. The AdaGrad sums alike. */
Test(train_hot, warm_copies_merge_every_warm_every_segments_and_at_a_pass_end)
{
    const uint32_t K = 4, every = 3;
    hog_model *m = hog_model_new(HOG_LOSS_LOGISTIC, 3, K, 2);
    cr_assert_not_null(m);
    _Alignas(64) hog_weight acc[12] = {0}, hot[8], hotacc[8];
    _Alignas(64) float hot0[8], hotacc0[8];
    uint32_t hot_ids[2] = {2, 0}; /* feature 2 fast, feature 0 warm */
    epoch_job job = copies_job(m, hot_ids);
    job.tab.nlocal = 2;
    job.tab.nfast = 1;
    job.tab.warm_every = every;
    worker_state ws;
    memset(&ws, 0, sizeof(ws));
    ws.w = m->w;
    ws.hot = hot;
    ws.hot0 = hot0;
    ws.hotacc = hotacc;
    ws.hotacc0 = hotacc0;
    ws.optim.acc = acc;
    ws.optim.astride = K;
    hog_hot_begin(&job, &ws);
    /* Each segment steps every word of both copies by 1 and their sums by 2. */
    for (uint32_t seg = 1; seg <= 2 * every + 1; seg++) {
        for (uint32_t i = 0; i < 2 * K; i++) {
            hog_w_store(&hot[i], hog_w_load(&hot[i]) + 1.0f);
            hog_w_store(&hotacc[i], hog_w_load(&hotacc[i]) + 2.0f);
        }
        hog_hot_sync(&job, &ws, 1.0f);
        const float warm = (float)(seg / every * every); /* segments merged */
        for (uint32_t k = 0; k < K; k++) {
            cr_assert(hog_w_load(&m->w[2 * K + k]) == (float)seg, "segment %u: the fast copy merged", seg);
            cr_assert(hog_w_load(&acc[2 * K + k]) == 2.0f * (float)seg);
            cr_assert(hog_w_load(&m->w[k]) == warm, "segment %u: the warm copy's word %u: %g, want %g", seg, k,
                      (double)hog_w_load(&m->w[k]), (double)warm);
            cr_assert(hog_w_load(&acc[k]) == 2.0f * warm);
            cr_assert(hog_w_load(&hot[K + k]) == (float)seg, "the warm copy keeps its steps");
            cr_assert(hog_w_load(&m->w[K + k]) == 0.0f, "feature 1 has no copy");
        }
    }
    hog_hot_flush(&job, &ws);
    for (uint32_t k = 0; k < K; k++) {
        cr_assert(hog_w_load(&m->w[k]) == (float)(2 * every + 1), "the pass's end merged the warm copy");
        cr_assert(hog_w_load(&acc[k]) == 2.0f * (float)(2 * every + 1));
        cr_assert(hot0[K + k] == (float)(2 * every + 1) && hotacc0[K + k] == 2.0f * (float)(2 * every + 1));
    }
    cr_assert_eq(ws.warm_since, 0u);
    hog_w_store(&m->w[0], 100.0f); /* another worker's merge: no change of this one's to add */
    hog_hot_flush(&job, &ws);
    cr_assert(hog_w_load(&m->w[0]) == 100.0f, "a flush with nothing to merge writes nothing");
    hog_model_free(m);
}
