/* test_train_link.c: factorisation machines trained on several ranks through the trainer, one thread per rank over loopback: they learn what one node learns, start from the same factors, agree on fields and the rows of l2_rows, and a rank of another kind is refused. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "test_link_run.h"
#include "test_scratch.h"
#include "test_train.h"
#include "test_train_data.h"
#include "test_xor_data.h"

static void setup(void)
{
    scratch_make("train-link");
}

TestSuite(train_link, .init = setup, .fini = scratch_remove, .timeout = 120);

/* One rank: its own data set, link and trainer of one worker, as a
 * process of its own would have. */
typedef struct rank_train {
    hog_link_params lp;
    hog_train_params p;
    char train[160];      /* its training file */
    const char *test;     /* rank 0's test file, or NULL */
    hog_model *m;         /* rank 0: the gathered model; the others: their view */
    int rc;
    char err[512];
} rank_train;

static void *rank_main(void *arg)
{
    rank_train *r = arg;
    hog_dataset *tr = open_written(r->train), *te = r->test ? open_written(r->test) : NULL;
    hog_link *l;
    hog_trainer *t;
    cr_assert_eq(hog_link_create(&r->lp, &l, r->err, sizeof(r->err)), 0, "%s", r->err);
    cr_assert_eq(hog_trainer_create(&r->p, &t, r->err, sizeof(r->err)), 0, "%s", r->err);
    hog_trainer_set_link(t, l);
    r->rc = hog_trainer_run(t, tr, te, &r->m, r->err, sizeof(r->err));
    hog_trainer_free(t);
    hog_link_free(l);
    hog_dataset_close(tr);
    hog_dataset_close(te);
    return NULL;
}

/* Rank i of n trains p on train (rank 0 evaluates test). */
static void rank_init(rank_train *r, int i, int n, hog_train_params p, const char *train, const char *test)
{
    memset(r, 0, sizeof(*r));
    r->lp = hog_link_params_default();
    r->lp.rank = i;
    r->lp.nodes = n;
    r->lp.coordinator = coordinator;
    r->lp.secret = key_path;
    r->lp.bind_host = "127.0.0.1";
    r->lp.join_timeout = 20.0;
    r->p = p;
    snprintf(r->train, sizeof(r->train), "%s", train);
    r->test = i == 0 ? test : NULL;
}

static void run_ranks(rank_train *r, int n)
{
    pthread_t th[4];
    for (int i = 0; i < n; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, rank_main, &r[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static void free_ranks(rank_train *r, int n)
{
    for (int i = 0; i < n; i++)
        hog_model_free(r[i].m);
}

static uint32_t float_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

static hog_model_info info_of(const hog_model *m)
{
    hog_model_info in;
    hog_model_get_info(m, &in);
    return in;
}

/* fm_params with the workers not pinned: two ranks share the machine. */
static hog_train_params link_fm_params(void)
{
    hog_train_params p = fm_params();
    p.bind = 0;
    return p;
}

/* Labels turned round, in percent, in the data two ranks are measured
 * on against one node: the test logloss then has a floor (0.325), and
 * "as one node does" means something. */
#define FLIP 10u
/* Two ranks' test logloss against one node's on the same data and
 * settings: at most this much above it. A linear model stays at chance,
 * 0.69. */
#define TWO_RANKS_SLACK 0.02

static rank_train ranks[3];

/* The interaction of write_xor_flip's libsvm (fields 0) or LIBFFM text
 * (base 1, noise 30), its 4,096-row blocks
 * alternating between rows whose a is in 1..5 and rows whose a is in
 * 6..10: rank 0 trains the first kind (blocks 0, 2, ...), rank 1 the
 * second, so neither learns every a's factors unless the ranks exchange
 * them; one node trains both. flip: as write_xor_flip's. */
static void write_split_xor(const char *name, int rows, uint64_t seed, int fields, uint32_t flip, char *path)
{
    FILE *f = create(name, path);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        const uint32_t half = (uint32_t)(i / 4096) % 2;
        const uint32_t a = 1 + 5 * half + (uint32_t)hog_rng_below(&r, 5), b = 11 + (uint32_t)hog_rng_below(&r, 10);
        const uint32_t c = 21 + (uint32_t)hog_rng_below(&r, 30);
        const int y = ((a % 2) != (b % 2)) != (flip && hog_rng_below(&r, 100) < flip);
        if (fields)
            fprintf(f, "%d 0:%u:1 1:%u:1 2:%u:0.5\n", y, a, b, c);
        else
            fprintf(f, "%d %u:1 %u:1\n", y ? 1 : -1, a, b);
    }
    fclose(f);
}

/* Trains p on two ranks over tr (te their test set): rank 0's model, once
 * both succeeded (free_ranks frees it). */
static const hog_model *two_ranks(hog_train_params p, const char *tr, const char *te)
{
    new_run();
    for (int i = 0; i < 2; i++)
        rank_init(&ranks[i], i, 2, p, tr, te);
    run_ranks(ranks, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(ranks[i].rc, 0, "rank %d: %s", i, ranks[i].err);
    return ranks[0].m;
}

/* Two ranks (i2) learned what one node (i1) did, an interaction no linear
 * model (il) learns. */
static void as_one_node(const char *kind, const hog_model_info *i1, const hog_model_info *i2,
                        const hog_model_info *il)
{
    cr_log_info("%s test logloss: one node %.4f, two ranks %.4f, linear %.4f", kind, i1->test.logloss,
                i2->test.logloss, il->test.logloss);
    cr_assert_lt(i2->test.logloss, i1->test.logloss + TWO_RANKS_SLACK, "%s: two ranks %g, one node %g", kind,
                 i2->test.logloss, i1->test.logloss);
    cr_assert_gt(i2->test.accuracy, 0.85, "%s: two ranks' test accuracy %g", kind, i2->test.accuracy);
    cr_assert_gt(il->test.logloss, 0.6, "%s: a linear model's test logloss %g", kind, il->test.logloss);
}

/* Parity XOR of two features (no weight of one predicts it): two ranks,
 * each training the blocks of half the first feature's values, learn it
 * as one node does, and rank 0's gathered model is a whole factorisation
 * machine. */
Test(train_link, fm_on_two_ranks_learns_an_interaction_as_one_node_does)
{
    char tr_path[160], te_path[160];
    write_split_xor("tr.svm", 16384, 3, 0, FLIP, tr_path); /* 4 blocks: 2 a rank */
    snprintf(te_path, sizeof(te_path), "%s", write_xor_flip("te.svm", XOR_LIBSVM, 4000, 4, 1, 0, FLIP));
    hog_dataset *tr = open_written(tr_path), *te = open_written(te_path);
    hog_train_params p = link_fm_params();
    hog_model *one = train(tr, te, p);
    const hog_model_info i1 = info_of(one);
    p.factors = 0;
    hog_model *lin = train(tr, te, p);
    const hog_model_info il = info_of(lin);
    p.factors = 4;

    const hog_model *m = two_ranks(p, tr_path, te_path);
    const hog_model_info i2 = info_of(m);
    as_one_node("FM", &i1, &i2, &il);
    cr_assert_eq(m->factors, 4);
    cr_assert_eq(m->outputs, 5, "a weight and 4 factors a feature");
    cr_assert_eq(m->dim, one->dim);
    cr_assert_eq(i2.outputs, 1);
    cr_assert_eq(i2.params.factors, 4);
    cr_assert_lt(il.test.accuracy, 0.6, "a linear model's test accuracy %g", il.test.accuracy);
    /* The model file holds it whole: saved and loaded, it scores alike. */
    char path[160];
    snprintf(path, sizeof(path), "%s/two.hog", dir);
    char err[256] = "";
    cr_assert_eq(hog_model_save(m, path), 0);
    hog_model *back;
    cr_assert_eq(hog_model_load(path, &back, err, sizeof(err)), 0, "%s", err);
    cr_assert(same_weights(m, back));
    cr_assert_eq(back->factors, 4);
    hog_model_free(back);
    free_ranks(ranks, 2);
    hog_model_free(one);
    hog_model_free(lin);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* The cross of two fields, with FFM's default penalty, 1/rows: the rows
 * are the one file's, every rank's l2 the one node's, and two ranks (each
 * training half the first field's values) learn the cross as one node
 * does. */
Test(train_link, ffm_on_two_ranks_learns_a_cross_of_fields_as_one_node_does)
{
    char tr_path[160], te_path[160];
    write_split_xor("tr.ffm", 16384, 3, 1, FLIP, tr_path);
    snprintf(te_path, sizeof(te_path), "%s", write_xor_flip("te.ffm", XOR_LIBFFM, 4000, 4, 1, 30, FLIP));
    hog_dataset *tr = open_written(tr_path), *te = open_written(te_path);
    hog_train_params p = link_fm_params();
    p.field_aware = 1;
    p.epochs = 12;
    p.l2_rows = 1;
    hog_model *one = train(tr, te, p);
    const hog_model_info i1 = info_of(one);
    hog_train_params pl = p;
    pl.factors = 0;
    pl.field_aware = 0;
    hog_model *lin = train(tr, te, pl);
    const hog_model_info il = info_of(lin);

    const hog_model *m = two_ranks(p, tr_path, te_path);
    const hog_model_info i2 = info_of(m);
    as_one_node("FFM", &i1, &i2, &il);
    cr_assert_eq(hog_model_fields(m), 3);
    cr_assert_eq(m->outputs, 3 * 4, "a feature's factors for each field");
    cr_assert_eq(i2.params.field_aware, 1);
    cr_assert_eq(i2.params.l2, i1.params.l2, "l2 %g, one node's %g", i2.params.l2, i1.params.l2);
    cr_assert_eq(info_of(ranks[1].m).params.l2, i1.params.l2);
    cr_assert_eq(i1.params.l2, 1.0 / 16384);
    free_ranks(ranks, 2);
    hog_model_free(one);
    hog_model_free(lin);
    hog_dataset_close(tr);
    hog_dataset_close(te);
}

/* Whether a's and b's factors are the same bits (not the linear weights
 * or the bias, which start at 0, where any step shows). */
static int same_factors(const hog_model *a, const hog_model *b)
{
    if (a->dim != b->dim || a->outputs != b->outputs)
        return 0;
    const uint32_t first = a->fields ? 0 : 1;
    for (uint64_t j = 0; j < a->dim; j++)
        for (uint32_t k = first; k < a->outputs; k++)
            if (float_bits(hog_w_load(&hog_model_wj(a, j)[k])) != float_bits(hog_w_load(&hog_model_wj(b, j)[k])))
                return 0;
    return 1;
}

/* Steps too small to move a factor: the factors the ranks end with are
 * those they started from, and rank 0's gathered ones (each chunk its
 * master's) are one node's bit for bit, so every rank drew the same. */
Test(train_link, every_rank_starts_from_the_same_factors)
{
    char tr_path[160];
    snprintf(tr_path, sizeof(tr_path), "%s", write_xor_flip("tr.ffm", XOR_LIBFFM, 9000, 5, 1, 30, 0));
    hog_dataset *tr = open_written(tr_path);
    for (uint32_t aware = 0; aware <= 1; aware++) {
        hog_train_params p = link_fm_params();
        p.field_aware = aware;
        p.schedule = HOG_SCHEDULE_CONSTANT;
        p.step = 1e-30;
        p.epochs = 1;
        hog_model *one = train(tr, NULL, p);
        new_run();
        for (int i = 0; i < 3; i++)
            rank_init(&ranks[i], i, 3, p, tr_path, NULL);
        run_ranks(ranks, 3);
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(ranks[i].rc, 0, "rank %d: %s", i, ranks[i].err);
            cr_assert(same_factors(ranks[i].m, one), "field-aware %u: rank %d's factors are not one node's", aware,
                      i);
        }
        free_ranks(ranks, 3);
        hog_model_free(one);
    }
    hog_dataset_close(tr);
}

/* Files of their own (shards): a field-aware machine takes the most
 * fields any rank's file has, and 1/rows counts every file's rows, so
 * both ranks train the same model with the same penalty. */
Test(train_link, shards_agree_on_the_most_fields_and_every_files_rows)
{
    char a_path[160], b_path[160], te_path[160];
    snprintf(a_path, sizeof(a_path), "%s", write_xor_flip("a.ffm", XOR_LIBFFM, 6000, 3, 1, 30, 0));
    FILE *f = create("b.ffm", b_path); /* the same cross, and a fourth field of noise */
    hog_rng r = {9};
    for (int i = 0; i < 10000; i++) {
        const uint32_t a = 1 + (uint32_t)hog_rng_below(&r, 10), b = 11 + (uint32_t)hog_rng_below(&r, 10);
        fprintf(f, "%d 0:%u:1 1:%u:1 3:%u:0.5\n", (a % 2) != (b % 2), a, b, 51 + (uint32_t)hog_rng_below(&r, 30));
    }
    fclose(f);
    snprintf(te_path, sizeof(te_path), "%s", write_xor_flip("te.ffm", XOR_LIBFFM, 2000, 4, 1, 30, 0));
    hog_train_params p = link_fm_params();
    p.field_aware = 1;
    p.epochs = 12;
    p.l2_rows = 1;
    new_run();
    rank_init(&ranks[0], 0, 2, p, a_path, te_path);
    rank_init(&ranks[1], 1, 2, p, b_path, NULL);
    for (int i = 0; i < 2; i++)
        ranks[i].lp.shards = 1;
    run_ranks(ranks, 2);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(ranks[i].rc, 0, "rank %d: %s", i, ranks[i].err);
        const hog_model *m = ranks[i].m;
        cr_assert_eq(hog_model_fields(m), 4, "rank %d: %u fields", i, hog_model_fields(m));
        cr_assert_eq(m->outputs, 4 * 4);
        cr_assert_eq(m->dim, 81, "rank %d: the most features any rank has", i);
        cr_assert_eq(info_of(m).params.l2, 1.0 / 16000, "rank %d: l2 %g", i, info_of(m).params.l2);
    }
    const hog_model_info in = info_of(ranks[0].m);
    cr_assert_gt(in.test.accuracy, 0.99, "test accuracy %g", in.test.accuracy);
    free_ranks(ranks, 2);
}

/* A rank that trains another kind of model is refused, naming both kinds;
 * crosses are still refused before any rank meets another. */
Test(train_link, a_rank_of_another_kind_is_refused_naming_both_and_crosses_stay_refused)
{
    char tr_path[160];
    snprintf(tr_path, sizeof(tr_path), "%s", write_xor_flip("tr.ffm", XOR_LIBFFM, 5000, 3, 1, 30, 0));
    hog_train_params p = link_fm_params();
    p.epochs = 1;
    new_run();
    rank_init(&ranks[0], 0, 2, p, tr_path, NULL);
    p.field_aware = 1;
    rank_init(&ranks[1], 1, 2, p, tr_path, NULL);
    ranks[0].lp.join_timeout = 2.0;
    run_ranks(ranks, 2);
    cr_assert_eq(ranks[1].rc, HOG_ENET, "%s", ranks[1].err);
    cr_assert_not_null(strstr(ranks[1].err, "refused by rank 0: it trains a field-aware factorisation machine of 4 "
                                            "factors, rank 0 a factorisation machine of 4 factors: every rank must "
                                            "train the same kind of model"),
                       "%s", ranks[1].err);
    cr_assert_eq(ranks[0].rc, HOG_ENET, "%s", ranks[0].err);
    cr_assert_not_null(strstr(ranks[0].err, "rank 1 did not join"), "%s", ranks[0].err);
    cr_assert_null(ranks[0].m);
    cr_assert_null(ranks[1].m);

    new_run();
    hog_train_params q = plain_params();
    q.threads = 1;
    q.bind = 0;
    q.interactions = "::";
    rank_init(&ranks[0], 0, 2, q, tr_path, NULL);
    run_ranks(ranks, 1);
    cr_assert_eq(ranks[0].rc, HOG_EPARAM, "%s", ranks[0].err);
    cr_assert_not_null(strstr(ranks[0].err, "crosses train on one machine"), "%s", ranks[0].err);
}
