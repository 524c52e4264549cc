/* test_train_rows.c: the row loops on a model too large for the caches (prefetched, on huge pages) train, evaluate and score as on a small one, bit for bit. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_train.h"
#include "train/train_run.h"

#define ROWS 6000u
#define NNZ 12u
#define USED 1000u

/* The same rows (indices below USED, power-law-ish, a known model) as a data
 * set of cols features: the model's size is cols, the data the same.
 * kind: 0 labels +1/-1, 1 a real target, 2 three classes 0, 1, 2. */
static hog_dataset *rows_as(uint64_t cols, int kind)
{
    uint32_t *ptr = malloc((ROWS + 1) * sizeof(uint32_t)), *idx = malloc(ROWS * NNZ * sizeof(uint32_t));
    float *val = malloc(ROWS * NNZ * sizeof(float)), *lab = malloc(ROWS * sizeof(float));
    uint64_t s = 12345;
    ptr[0] = 0;
    for (uint32_t r = 0; r < ROWS; r++) {
        uint32_t n = 0, last = 0;
        float margin = 0;
        for (uint32_t t = 0; t < NNZ; t++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t step = 1 + (uint32_t)((s >> 33) % (2 * USED / NNZ - 1));
            uint32_t j = (t == 0 ? 0 : last) + step;
            if (j >= USED)
                break;
            float x = 0.25f + (float)((s >> 20) % 8) * 0.5f;
            idx[ptr[r] + n] = j;
            val[ptr[r] + n] = x;
            margin += (j % 3 == 0 ? 1.0f : -0.5f) * x;
            last = j;
            n++;
        }
        ptr[r + 1] = ptr[r] + n;
        lab[r] = kind == 1 ? margin : kind == 2 ? (margin > 1 ? 2.0f : margin > -1 ? 1.0f : 0.0f)
                                  : (margin > 0 ? 1.0f : -1.0f);
    }
    hog_csr csr = {0};
    csr.rows = ROWS;
    csr.cols = cols;
    csr.indptr = ptr;
    csr.indptr_bytes = 4;
    csr.indices = idx;
    csr.values = val;
    csr.labels = lab;
    hog_dataset *ds;
    char err[256];
    cr_assert_eq(hog_dataset_from_csr(&csr, 0, &ds, err, sizeof(err)), 0, "%s", err);
    free(ptr), free(idx), free(val), free(lab);
    return ds;
}

/* One thread on a model of 2^21 features (its weights and state 24 MiB or
 * more, so prefetched and on huge pages; with the default update packed,
 * a record of 16 bytes a feature, train_run.h) and on one of USED features
 * (unpacked, whole arrays in the caches): the weights the data touches,
 * the bias, the losses and the evaluation are the same bits. */
static void same_as_small(hog_train_params p, int kind)
{
    hog_dataset *small = rows_as(USED, kind), *large = rows_as((uint64_t)1 << 21, kind);
    p.threads = 1;
    p.epochs = 3;
    hog_model *a = train(small, NULL, p), *b = train(large, NULL, p);
    cr_assert_eq(b->dim, (uint64_t)1 << 21);
    const uint32_t K = a->outputs;
    cr_assert_eq(memcmp((const void *)a->w, (const void *)b->w, USED * K * sizeof(float)), 0,
                 "the weights differ");
    cr_assert_eq(memcmp((const void *)a->bias, (const void *)b->bias, K * sizeof(float)), 0);
    for (uint64_t j = USED * K; j < b->dim * K; j++) /* a factorisation machine's factors start at random */
        if (!b->factors || j % K == 0)
            cr_assert_eq(hog_w_load(&b->w[j]), 0.0f, "weight %llu of an unused feature", (unsigned long long)j);
    hog_model_info ia, ib;
    hog_model_get_info(a, &ia);
    hog_model_get_info(b, &ib);
    cr_assert_eq(ia.train.loss, ib.train.loss, "%.17g against %.17g", ia.train.loss, ib.train.loss);
    hog_metrics ma, mb;
    cr_assert_eq(hog_model_evaluate(a, small, 1, &ma), 0);
    cr_assert_eq(hog_model_evaluate(b, large, 1, &mb), 0);
    cr_assert_eq(ma.loss, mb.loss, "%.17g against %.17g", ma.loss, mb.loss);
    cr_assert(isfinite(ma.loss) && ma.rows == ROWS);
    const uint32_t scores = a->factors ? 1 : K; /* a factorisation machine scores one output */
    for (uint64_t i = 0; i < ROWS; i += 97) {
        hog_row row = hog_dataset_row(large, i);
        float sa[8], sb[8];
        cr_assert_leq(scores, 8);
        hog_model_scores(a, &row, NULL, sa);
        hog_model_scores(b, &row, NULL, sb);
        cr_assert_eq(memcmp(sa, sb, scores * sizeof(float)), 0, "row %llu", (unsigned long long)i);
    }
    hog_model_free(a);
    hog_model_free(b);
    hog_dataset_close(small);
    hog_dataset_close(large);
}

Test(train_rows, large_model_default_update_is_the_small_ones)
{
    same_as_small(hog_train_params_default(), 0);
}

Test(train_rows, large_model_plain_update_is_the_small_ones)
{
    same_as_small(plain_params(), 0);
}

Test(train_rows, large_model_adagrad_l1_is_the_small_ones)
{
    hog_train_params p = hog_train_params_default();
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.5;
    p.l1 = 1e-5;
    same_as_small(p, 0);
}

Test(train_rows, large_model_adagrad_alone_is_the_small_ones)
{
    hog_train_params p = plain_params();
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.5;
    same_as_small(p, 0);
}

/* The default update's tuned loop reads its record at fixed places: they
 * are where the layout puts them; the records are a power of two of words,
 * so none straddles a cache line. */
Test(train_rows, the_records_are_laid_out_as_the_loops_read_them)
{
    pack_layout l = hog_pack_layout(OPT_NORMALIZED, 1);
    cr_assert_eq(l.stride, PACK_NORM_STRIDE);
    cr_assert_eq(l.xmax, PACK_NORM_XMAX);
    cr_assert_eq(l.inv, PACK_NORM_INV);
    cr_assert_eq(l.c, PACK_NORM_C);
    l = hog_pack_layout(OPT_NORMALIZED | OPT_ADAGRAD | OPT_L1, 1);
    cr_assert_eq(l.stride, 8);
    cr_assert(l.acc > l.c && l.l1 > l.acc && l.l1 + 2 <= l.stride);
    l = hog_pack_layout(OPT_ADAGRAD, 1);
    cr_assert_eq(l.stride, 4);
    cr_assert_eq(l.xmax, 0);
    cr_assert(l.c && l.acc && l.c != l.acc);
}

/* Softmax's three outputs a feature, packed with the scale in a record of
 * 8 words, and with AdaGrad's sums in one of 16. */
Test(train_rows, large_softmax_model_is_the_small_ones)
{
    hog_train_params p = hog_train_params_default();
    p.loss = HOG_LOSS_SOFTMAX;
    same_as_small(p, 2);
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.5;
    same_as_small(p, 2);
}

/* A factorisation machine's weight and 4 factors a feature, packed with
 * the L2 scale and AdaGrad's 5 sums in a record of 16 words (and plain,
 * unpacked: no optimiser state), and squared loss: the same bits. */
Test(train_rows, large_factorisation_machine_is_the_small_ones)
{
    hog_train_params p = plain_params();
    p.factors = 4;
    p.schedule = HOG_SCHEDULE_ADAGRAD;
    p.step = 0.2;
    p.l2 = 1e-4;
    same_as_small(p, 0);
    p.loss = HOG_LOSS_SQUARED;
    p.step = 0.01;
    same_as_small(p, 1);
    p = plain_params();
    p.factors = 2;
    p.step = 0.01;
    same_as_small(p, 0);
}

Test(train_rows, large_model_squared_loss_is_the_small_ones)
{
    hog_train_params p = hog_train_params_default();
    p.loss = HOG_LOSS_SQUARED;
    same_as_small(p, 1);
}

/* Replicas of a packed model are packed alike (train_run.h, replica_set):
 * with one worker there is one replica, and its records, state and all,
 * train as the small model's shared arrays do: the same bits. */
Test(train_rows, large_model_replicas_are_the_small_ones)
{
    for (hog_replicas r = HOG_REPLICAS_NODE; r <= HOG_REPLICAS_CORE; r++) {
        hog_train_params p = hog_train_params_default();
        p.replicas = r;
        same_as_small(p, 0);
        p.schedule = HOG_SCHEDULE_ADAGRAD;
        p.step = 0.5;
        p.l1 = 1e-5;
        same_as_small(p, 0);
    }
}

/* Several packed replicas, each stepping its own scales and AdaGrad sums,
 * merged after every epoch (on two nodes, by the background thread too):
 * the model learns as the small model with the same replicas does, and
 * each feature's merged scale is the largest |x| any replica saw, which
 * is the largest in the data, since every row is some replica's. */
static void packed_replicas_learn(hog_replicas r, int adagrad)
{
    hog_dataset *small = rows_as(USED, 0), *large = rows_as((uint64_t)1 << 21, 0);
    hog_train_params p = hog_train_params_default();
    p.threads = 4;
    p.epochs = 5;
    p.replicas = r;
    if (adagrad) {
        p.schedule = HOG_SCHEDULE_ADAGRAD;
        p.step = 0.5;
    }
    hog_model *a = train(small, NULL, p), *b = train(large, NULL, p);
    hog_metrics ma, mb;
    cr_assert_eq(hog_model_evaluate(a, small, 1, &ma), 0);
    cr_assert_eq(hog_model_evaluate(b, large, 1, &mb), 0);
    cr_assert_lt(mb.loss, ma.loss * 1.1 + 0.01, "%s replicas: loss %g, small model's %g", hog_replicas_name(r),
                 mb.loss, ma.loss);
    cr_assert_gt(mb.accuracy, 0.9, "%s replicas: accuracy %g", hog_replicas_name(r), mb.accuracy);
    cr_assert_not_null(b->scales);
    float top[USED] = {0};
    for (uint64_t i = 0; i < ROWS; i++) {
        hog_row row = hog_dataset_row(large, i);
        for (uint32_t t = 0; t < row.nnz; t++)
            top[row.index[t]] = fmaxf(top[row.index[t]], fabsf(row.value[t]));
    }
    for (uint32_t j = 0; j < USED; j++)
        cr_assert_eq(hog_w_load(&b->scales[j]), top[j], "feature %u: scale %g, largest |x| %g", j,
                     (double)hog_w_load(&b->scales[j]), (double)top[j]);
    hog_model_free(a);
    hog_model_free(b);
    hog_dataset_close(small);
    hog_dataset_close(large);
}

Test(train_rows, packed_core_replicas_learn)
{
    packed_replicas_learn(HOG_REPLICAS_CORE, 0);
    packed_replicas_learn(HOG_REPLICAS_CORE, 1);
}

Test(train_rows, packed_node_replicas_on_two_nodes_learn)
{
    /* Before the pool loads the topology (once per process). */
    char err[512] = "";
    cr_assert_eq(hog_topology_set("package:2 numa:1 core:2 pu:1", err, sizeof(err)), 0, "%s", err);
    packed_replicas_learn(HOG_REPLICAS_NODE, 0);
    packed_replicas_learn(HOG_REPLICAS_NODE, 1);
}
