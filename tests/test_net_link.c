/* test_net_link.c: the multi-node link in one process, one thread per rank over loopback: the rendezvous and its refusals, the exact gather, averaging rounds, dead ranks, hostile frames and keys. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include "net/net_link.h"
#include "test_log.h"
#include "test_link_run.h"
#include "test_scratch.h"

#define N_ELEMS 5000u /* five chunks of 1024 */

static void setup(void)
{
    scratch_make("net-link");
}

TestSuite(net_link, .init = setup, .fini = scratch_remove, .timeout = 60);

/* One rank of a test run. */
typedef struct rank_run {
    hog_link_params p;
    hog_link *l;
    _Atomic float w[N_ELEMS];
    float add;              /* added to the rank's elements after the link starts */
    int all;                /* 1: to every element; 0: to the elements i with i mod nodes == rank,
                               so each element has one rank's change, kept whole */
    int hot;                /* 1: every element is hot (changes from several ranks averaged) */
    uint64_t params_fp;     /* what the HELLO says of the parameters */
    uint32_t factors, fields; /* and of the model's kind and the data's fields */
    uint64_t rows;          /* and of the data's rows */
    uint32_t agreed_fields; /* after the join: the run's fields and rows */
    uint64_t agreed_rows;
    int sync_rounds;        /* synchronous: rounds to take part in before finishing */
    int vanish;             /* 1: close the link without finishing, as a killed process would */
    float wait_first, wait_last; /* non-zero: before finishing, wait (5 s at most) until the first
                               and the last element hold these, exchanged while the run goes on */
    int waited;             /* 1: they did */
    int until_dead;         /* 1: before finishing, wait (join_timeout at most) until rank 1 is
                               declared dead or the run fails */
    int join_rc, finish_rc;
    char err[512];
    hog_link_stats st;
    atomic_int finished;    /* 1: rank_main has returned */
    double ended;           /* when it returned (hog_now) */
} rank_run;

static void rank_init(rank_run *r, int rank, int nodes)
{
    memset(r, 0, sizeof(*r));
    r->p = hog_link_params_default();
    r->p.rank = rank;
    r->p.nodes = nodes;
    r->p.coordinator = coordinator;
    r->p.secret = key_path;
    r->p.bind_host = "127.0.0.1";
    r->p.timeout = 1.0;
    r->p.join_timeout = 10.0;
    r->params_fp = 42;
    r->add = (float)(rank + 1);
}

static void rank_body(rank_run *r)
{
    cr_assert_eq(hog_link_create(&r->p, &r->l, r->err, sizeof(r->err)), 0, "%s", r->err);
    double classes[] = {-1.0, 1.0};
    hog_link_shape shape = {.dim = N_ELEMS, .params_fp = r->params_fp, .data_fp = 7, .factors = r->factors,
                            .fields = r->fields, .rows = r->rows, .classes = classes, .nclasses = 2};
    r->join_rc = hog_link_join(r->l, &shape, r->err, sizeof(r->err));
    if (r->join_rc < 0)
        return;
    r->agreed_fields = shape.fields;
    r->agreed_rows = shape.rows;
    static const unsigned char hot = 1;
    hog_link_span span = {r->w, N_ELEMS, 0, r->hot ? &hot : NULL, N_ELEMS};
    cr_assert_eq(hog_link_spans(r->l, &span, 1), 0);
    cr_assert_eq(hog_link_start(r->l), 0);
    for (unsigned i = 0; i < N_ELEMS; i++)
        if (r->add != 0.0f && (r->all || i % (unsigned)r->p.nodes == (unsigned)r->p.rank))
            atomic_store(&r->w[i], atomic_load(&r->w[i]) + r->add);
    for (double until = hog_now() + 5.0; r->wait_first != 0.0f && !r->waited && hog_now() < until;) {
        r->waited = atomic_load(&r->w[0]) == r->wait_first && atomic_load(&r->w[N_ELEMS - 1]) == r->wait_last;
        sched_yield();
    }
    for (double until = hog_now() + r->p.join_timeout;
         r->until_dead && atomic_load(&r->l->live[1]) && !atomic_load(&r->l->stop) && hog_now() < until;)
        sched_yield();
    for (int k = 0; k < r->sync_rounds; k++)
        cr_assert_eq(hog_link_epoch_end(r->l, (unsigned)k, r->err, sizeof(r->err)), 0, "%s", r->err);
    if (r->vanish) {
        hog_link_free(r->l);
        r->l = NULL;
        return;
    }
    r->finish_rc = hog_link_finish(r->l, r->err, sizeof(r->err));
    hog_link_stats_get(r->l, r->p.rank, &r->st);
}

static void *rank_main(void *arg)
{
    rank_run *r = arg;
    rank_body(r);
    r->ended = hog_now();
    atomic_store(&r->finished, 1);
    return NULL;
}

static void run_ranks(rank_run *r, int n)
{
    pthread_t th[8];
    for (int i = 0; i < n; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, rank_main, &r[i]), 0);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
}

static void free_ranks(rank_run *r, int n)
{
    for (int i = 0; i < n; i++)
        hog_link_free(r[i].l);
}

static void assert_all(const rank_run *r, float want)
{
    for (unsigned i = 0; i < N_ELEMS; i++)
        cr_assert_eq(atomic_load(&r->w[i]), want, "element %u: %g, expected %g", i, (double)atomic_load(&r->w[i]),
                     (double)want);
}

/* Each element holds the change of the one rank that made it: rank
 * i mod nodes added rank + 1. */
static void assert_each(const rank_run *r, unsigned nodes)
{
    for (unsigned i = 0; i < N_ELEMS; i++)
        cr_assert_eq(atomic_load(&r->w[i]), (float)(i % nodes + 1), "element %u: %g, expected %u", i,
                     (double)atomic_load(&r->w[i]), i % nodes + 1);
}

static rank_run runs[4];

Test(net_link, two_ranks_gather_every_change_exactly)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    run_ranks(runs, 2);
    cr_assert_eq(runs[0].join_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[1].finish_rc, 0, "%s", runs[1].err);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    assert_each(&runs[0], 2);
    hog_link_stats s1;
    cr_assert_eq(hog_link_stats_get(runs[0].l, 1, &s1), 0);
    cr_assert_eq(s1.rank, 1);
    cr_assert_eq(runs[0].st.live, 2);
    cr_assert_eq(runs[0].st.bad, 0);
    free_ranks(runs, 2);
}

Test(net_link, four_ranks_gather_every_change_even_when_every_chunk_is_dropped)
{
    new_run();
    for (int i = 0; i < 4; i++) {
        rank_init(&runs[i], i, 4);
        runs[i].p.drop = 1.0;
    }
    run_ranks(runs, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(runs[i].finish_rc, 0, "rank %d: %s", i, runs[i].err);
    assert_each(&runs[0], 4);
    cr_assert_eq(runs[0].st.chunks_sent, 0);
    cr_assert_gt(runs[0].st.dropped, 0);
    free_ranks(runs, 4);
}

Test(net_link, each_ranks_change_reaches_the_other_while_both_run)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    /* element 0 is rank 0's (in its chunk 0), the last rank 1's (in its chunk 4) */
    runs[0].wait_first = runs[1].wait_first = 1.0f;
    runs[0].wait_last = runs[1].wait_last = 2.0f;
    run_ranks(runs, 2);
    cr_assert(runs[0].waited, "rank 0 never saw rank 1's change to chunk 4");
    cr_assert(runs[1].waited, "rank 1 never saw rank 0's change to chunk 0");
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    assert_each(&runs[0], 2);
    hog_link_stats s1;
    cr_assert_eq(hog_link_stats_get(runs[0].l, 1, &s1), 0);
    cr_assert_gt(runs[0].st.chunks_sent, 0);
    cr_assert_gt(s1.deltas_sent, 0);
    cr_assert_gt(runs[0].st.deltas_received, 0);
    free_ranks(runs, 2);
}

Test(net_link, changes_of_one_hot_element_by_two_ranks_are_averaged_by_its_master)
{
    new_run();
    for (int i = 0; i < 2; i++) {
        rank_init(&runs[i], i, 2);
        runs[i].all = 1;
        runs[i].hot = 1;
        runs[i].add = i ? 3.0f : 1.0f;
        runs[i].p.rate = 1.0; /* a byte a second: no chunk is sent before the gather, where both
                                 changes meet in one round */
    }
    run_ranks(runs, 2);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[1].finish_rc, 0, "%s", runs[1].err);
    assert_all(&runs[0], 2.0f); /* the mean of 1 and 3, whichever rank masters the chunk */
    free_ranks(runs, 2);
}

Test(net_link, changes_of_one_cold_element_by_two_ranks_are_added_by_its_master)
{
    new_run();
    for (int i = 0; i < 2; i++) {
        rank_init(&runs[i], i, 2);
        runs[i].all = 1;
        runs[i].add = i ? 3.0f : 1.0f;
        runs[i].p.rate = 1.0; /* a byte a second: no chunk is sent before the gather, where both
                                 changes meet in one round */
    }
    run_ranks(runs, 2);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[1].finish_rc, 0, "%s", runs[1].err);
    assert_all(&runs[0], 4.0f); /* the sum of 1 and 3, whichever rank masters the chunk */
    free_ranks(runs, 2);
}

/* Starts rank 0 (runs[0]) in a thread (*th) and brings rank 1 (runs[1])
 * up to its spans by hand: joined, one span of N_ELEMS elements, the link
 * not started, so the caller sets its elements first. */
static rank_run *rank1_by_hand(pthread_t *th)
{
    cr_assert_eq(pthread_create(th, NULL, rank_main, &runs[0]), 0);
    rank_run *r = &runs[1];
    cr_assert_eq(hog_link_create(&r->p, &r->l, r->err, sizeof(r->err)), 0, "%s", r->err);
    double classes[] = {-1.0, 1.0};
    hog_link_shape shape = {.dim = N_ELEMS, .params_fp = 42, .data_fp = 7, .classes = classes, .nclasses = 2};
    cr_assert_eq(hog_link_join(r->l, &shape, r->err, sizeof(r->err)), 0, "%s", r->err);
    hog_link_span span = {r->w, N_ELEMS, 0, NULL, 1};
    cr_assert_eq(hog_link_spans(r->l, &span, 1), 0);
    return r;
}

/* Rank 1 changes the first element of each chunk rank 0 masters once,
 * before its link starts, and watches them while rank 0 keeps sending. Its change
 * is on its way to rank 0 while rank 0 may already send the chunk again
 * without it: adopting those values would take the change back out of
 * rank 1's view until rank 0 folds it in, and a rank that trains goes on
 * stepping the same way meanwhile (on a hot weight with every row: the
 * intercept swung and the model lost accuracy). Rank 1 waits for the
 * values that hold its change instead. */
Test(net_link, a_peer_never_adopts_values_without_its_change_in_flight)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].add = 0.0f;
    pthread_t th;
    rank_run *r = rank1_by_hand(&th);
    const unsigned char live[2] = {1, 1};
    unsigned first[8], nfirst = 0;
    for (uint32_t c = 0; c < r->l->nchunks; c++)
        if (hog_link_master(r->l, live, c) == 0)
            first[nfirst++] = c * r->l->p.chunk;
    cr_assert_gt(nfirst, 0);
    for (unsigned k = 0; k < nfirst; k++)
        atomic_store(&r->w[first[k]], 1.0f); /* after the base is taken: a change to send */
    cr_assert_eq(hog_link_start(r->l), 0);
    unsigned long long watched = 0, below = 0;
    for (double until = hog_now() + 1.0; hog_now() < until; watched++)
        for (unsigned k = 0; k < nfirst; k++)
            below += atomic_load(&r->w[first[k]]) != 1.0f;
    hog_link_stats s;
    hog_link_stats_get(r->l, 1, &s);
    r->finish_rc = hog_link_finish(r->l, r->err, sizeof(r->err));
    pthread_join(th, NULL);
    cr_assert_eq(r->finish_rc, 0, "%s", r->err);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_gt(s.chunks_received, 100, "rank 1 received %llu chunks: too few to test",
                 (unsigned long long)s.chunks_received);
    cr_assert_eq(below, 0, "rank 1 saw an element without its own change %llu times in %llu looks", below,
                 watched);
    for (unsigned k = 0; k < nfirst; k++)
        cr_assert_eq(atomic_load(&runs[0].w[first[k]]), 1.0f, "element %u on rank 0", first[k]);
    free_ranks(runs, 2);
}

Test(net_link, averaging_rounds_give_every_rank_the_mean)
{
    new_run();
    for (int i = 0; i < 2; i++) {
        rank_init(&runs[i], i, 2);
        runs[i].p.sync = HOG_SYNC_AVERAGE;
        runs[i].sync_rounds = 2;
        runs[i].all = 1;
        runs[i].add = i ? 3.0f : 1.0f;
    }
    run_ranks(runs, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(runs[i].finish_rc, 0, "rank %d: %s", i, runs[i].err);
    assert_all(&runs[0], 2.0f);
    assert_all(&runs[1], 2.0f);
    free_ranks(runs, 2);
}

Test(net_link, another_parameter_fingerprint_is_refused_with_the_reason)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].p.join_timeout = 2.0;
    runs[1].params_fp = 43;
    run_ranks(runs, 2);
    cr_assert_eq(runs[1].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "training parameters differ"), "%s", runs[1].err);
    cr_assert_eq(runs[0].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[0].err, "rank 1 did not join"), "%s", runs[0].err);
    free_ranks(runs, 2);
}

/* Another kind of model is named as such, before its parameters'
 * fingerprint (which differs too) could only say that they differ. */
Test(net_link, another_kind_of_model_is_refused_naming_both)
{
    static const struct {
        uint32_t factors0, fields0, factors1, fields1;
        const char *want;
    } cases[] = {
        {4, 0, 0, 0, "it trains a linear model, rank 0 a factorisation machine of 4 factors: every rank must train "
                     "the same kind of model"},
        {4, 3, 4, 0, "it trains a factorisation machine of 4 factors, rank 0 a field-aware factorisation machine of "
                     "4 factors"},
        {4, 3, 8, 3, "it trains a field-aware factorisation machine of 8 factors, rank 0 a field-aware "
                     "factorisation machine of 4 factors"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        new_run();
        rank_init(&runs[0], 0, 2);
        rank_init(&runs[1], 1, 2);
        runs[0].p.join_timeout = 1.0;
        runs[0].factors = cases[i].factors0;
        runs[0].fields = cases[i].fields0;
        runs[1].factors = cases[i].factors1;
        runs[1].fields = cases[i].fields1;
        runs[1].params_fp = 43;
        run_ranks(runs, 2);
        cr_assert_eq(runs[1].join_rc, HOG_ENET);
        cr_assert_not_null(strstr(runs[1].err, cases[i].want), "case %zu: %s", i, runs[1].err);
        cr_assert_eq(runs[0].join_rc, HOG_ENET);
        free_ranks(runs, 2);
    }
}

/* The fields of a field-aware machine: one file's must match; files of
 * their own (shards) give the most any rank has, and the run's rows are
 * every file's. */
Test(net_link, fields_must_match_or_with_shards_take_the_most_and_rows_add_up)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].p.join_timeout = 1.0;
    runs[0].factors = runs[1].factors = 4;
    runs[0].fields = 3;
    runs[1].fields = 5;
    run_ranks(runs, 2);
    cr_assert_eq(runs[1].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "its training data has 5 fields, rank 0's 3"), "%s", runs[1].err);
    free_ranks(runs, 2);

    new_run();
    for (int i = 0; i < 3; i++) {
        rank_init(&runs[i], i, 3);
        runs[i].p.shards = 1;
        runs[i].factors = 4;
        runs[i].fields = (uint32_t)(i == 1 ? 5 : 3);
        runs[i].rows = 1000u * (uint64_t)(i + 1);
    }
    run_ranks(runs, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(runs[i].join_rc, 0, "rank %d: %s", i, runs[i].err);
        cr_assert_eq(runs[i].agreed_fields, 5, "rank %d", i);
        cr_assert_eq(runs[i].agreed_rows, 6000, "rank %d", i);
    }
    free_ranks(runs, 3);

    new_run(); /* one file: its rows, not their sum */
    for (int i = 0; i < 2; i++) {
        rank_init(&runs[i], i, 2);
        runs[i].rows = 4096;
    }
    run_ranks(runs, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(runs[i].agreed_rows, 4096, "rank %d: %s", i, runs[i].err);
    free_ranks(runs, 2);
}

Test(net_link, another_run_id_is_refused_with_the_reason)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].p.join_timeout = 2.0;
    runs[0].p.run_id = "job-1";
    runs[1].p.run_id = "job-2";
    run_ranks(runs, 2);
    cr_assert_eq(runs[1].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "run id differs"), "%s", runs[1].err);
    free_ranks(runs, 2);
}

/* How many times needle is in haystack. */
static int count_of(const char *haystack, const char *needle)
{
    int n = 0;
    for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* A rank with another key never joins, and knows it at once: its CURVE
 * handshakes fail, which it is told well before its join timeout (the
 * bound is loose: a loaded machine must not fail it). Rank 0 warns once,
 * naming the address, and says it again when it gives up. */
Test(net_link, a_rank_without_the_key_is_refused_at_once_and_named)
{
    hog_log_set(log_keep, NULL, HOG_LOG_WARN);
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].p.join_timeout = 5.0;
    runs[1].p.join_timeout = 60.0;
    char other[160];
    snprintf(other, sizeof(other), "%s/other-key", dir);
    char err[256];
    cr_assert_eq(hog_secret_keygen(other, err, sizeof(err)), 0);
    runs[1].p.secret = other;
    const double t0 = hog_now();
    run_ranks(runs, 2);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert_eq(runs[1].join_rc, HOG_ENET);
    char want[256];
    snprintf(want, sizeof(want),
             "rank 1 failed authentication with the coordinator %s: is its hog_link_params.secret the same as rank "
             "0's?", coordinator);
    cr_assert_not_null(strstr(runs[1].err, want), "%s", runs[1].err);
    cr_assert_lt(runs[1].ended - t0, 30.0, "rank 1 was refused after %.1f s, against a join timeout of 60 s",
                 runs[1].ended - t0);
    cr_assert_eq(runs[0].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[0].err, "rank 1 did not join within 5 s"), "%s", runs[0].err);
    cr_assert_not_null(strstr(runs[0].err, "failed the CURVE handshake: is every rank's hog_link_params.secret the "
                                           "same as rank 0's?"), "%s", runs[0].err);
    cr_assert_eq(count_of(logged, "failed the CURVE handshake: is that rank's hog_link_params.secret the same as "
                                  "rank 0's? Still waiting for the ranks to join"), 1, "%s", logged);
    cr_assert_eq(count_of(logged, "rank 0: a connection from 127.0.0.1:"), 1, "the address: %s", logged);
    free_ranks(runs, 2);
}

/* Rank 0 keeps waiting after a rank with another key was refused: the
 * rank started again with the right one joins, and the run completes. */
Test(net_link, a_rank_refused_for_its_key_can_join_with_the_right_one)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    rank_init(&runs[2], 1, 2);
    runs[0].p.join_timeout = 30.0;
    char other[160], err[256];
    snprintf(other, sizeof(other), "%s/other-key", dir);
    cr_assert_eq(hog_secret_keygen(other, err, sizeof(err)), 0);
    runs[1].p.secret = other;
    pthread_t th0, th1;
    cr_assert_eq(pthread_create(&th0, NULL, rank_main, &runs[0]), 0);
    rank_main(&runs[1]);
    cr_assert_eq(runs[1].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "failed authentication with the coordinator"), "%s", runs[1].err);
    cr_assert_eq(pthread_create(&th1, NULL, rank_main, &runs[2]), 0);
    pthread_join(th1, NULL);
    pthread_join(th0, NULL);
    cr_assert_eq(runs[0].join_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[2].finish_rc, 0, "%s", runs[2].err);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    assert_each(&runs[0], 2);
    free_ranks(runs, 3);
}

Test(net_link, a_dead_rank_is_declared_and_the_run_completes_without_it)
{
    new_run();
    for (int i = 0; i < 3; i++)
        rank_init(&runs[i], i, 3);
    runs[2].vanish = 1;
    run_ranks(runs, 3);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[1].finish_rc, 0, "%s", runs[1].err);
    cr_assert_eq(runs[0].st.live, 2);
    cr_assert_eq(runs[0].st.dead_rank, 2);
    /* Rank r added r + 1 to the elements i with i mod 3 == r; rank 2
     * vanished after adding. The chunks ranks 0 and 1 master from the
     * start (0 to 3 of 5) hold their changes, and rank 2's when it got
     * through; chunk 4 was rank 2's, and a change sent to it before it
     * died is lost with it. */
    for (unsigned i = 0; i < N_ELEMS; i++) {
        float v = atomic_load(&runs[0].w[i]), mine = (float)(i % 3 + 1);
        if (i < 4 * 1024 && i % 3 < 2)
            cr_assert_eq(v, mine, "element %u: %g", i, (double)v);
        else
            cr_assert(v == 0.0f || v == mine, "element %u: %g", i, (double)v);
    }
    free_ranks(runs, 3);
}

Test(net_link, rank_0_gone_ends_the_others_within_the_timeout)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].vanish = 1;
    double t0 = hog_now();
    run_ranks(runs, 2);
    cr_assert_eq(runs[1].finish_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "rank 0"), "%s", runs[1].err);
    cr_assert_not_null(strstr(runs[1].err, "sent nothing"), "%s", runs[1].err);
    cr_assert_lt(hog_now() - t0, 5.0);
    free_ranks(runs, 2);
}

/* A raw socket of the run's key (or another), connected to an endpoint;
 * linger: milliseconds zmq_ctx_term waits to deliver what it holds. */
static void *raw_socket(void *ctx, int type, const char *endpoint, const char *secret_file, int linger)
{
    hog_secret s;
    char err[256];
    cr_assert_eq(hog_secret_load(secret_file, &s, err, sizeof(err)), 0, "%s", err);
    void *sock = zmq_socket(ctx, type);
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof(linger));
    cr_assert_eq(hog_secret_client(sock, &s), 0);
    cr_assert_eq(zmq_connect(sock, endpoint), 0);
    return sock;
}

/* A frame of the test's run (no run id), from rank `rank`. */
static hog_frame raw_frame(hog_frame_type type, uint32_t rank)
{
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = type;
    f.version = HOG_NET_VERSION;
    f.rank = rank;
    return f;
}

static void raw_send(void *s, const hog_frame *f)
{
    hog_wire w = {0};
    cr_assert_eq(hog_frame_encode(f, &w), 0);
    cr_assert_geq(zmq_send(s, w.buf, w.len, 0), 0);
    hog_wire_free(&w);
}

/* The next frame on s (decoded into buf's bytes) within its receive
 * timeout: 0, or -1 when none came. */
static int raw_recv(void *s, hog_frame *f, unsigned char *buf, size_t len)
{
    int n = zmq_recv(s, buf, len, 0);
    if (n < 0)
        return -1;
    const char *why;
    cr_assert_leq((size_t)n, len);
    cr_assert_eq(hog_frame_decode(buf, (size_t)n, f, &why), 0, "%s", why);
    return 0;
}

/* A DEALER of the run's key at the coordinator, its receive timeout 10 s. */
static void *raw_dealer(void *ctx)
{
    char ep[96];
    snprintf(ep, sizeof(ep), "tcp://%s", coordinator);
    void *s = raw_socket(ctx, ZMQ_DEALER, ep, key_path, 0);
    int timeout = 10000;
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    return s;
}

/* Greets rank 0 over s as rank `rank` of 2 with dim features and HELLO
 * flags (its inbox reaches nothing). */
static void raw_greet(void *s, uint32_t rank, uint64_t dim, uint32_t flags)
{
    double classes[] = {-1.0, 1.0};
    hog_frame h = raw_frame(HOG_FRAME_HELLO, rank);
    h.nodes = 2;
    h.nclasses = 2;
    h.classes_f64 = classes;
    h.dim = dim;
    h.params_fp = 42;
    h.data_fp = 7;
    h.flags = flags;
    h.endpoint = "tcp://127.0.0.1:1";
    h.endpoint_len = (uint16_t)strlen(h.endpoint);
    raw_send(s, &h);
}

/* A peer joining as rank `rank` of 2 by hand over s: once rank 0 has
 * welcomed it, rank 0's inbox into inbox0 (if not NULL). Returns s. */
static void *raw_join(void *s, uint32_t rank, char *inbox0, size_t len)
{
    raw_greet(s, rank, N_ELEMS, 0);
    unsigned char buf[2048];
    hog_frame f;
    cr_assert_eq(raw_recv(s, &f, buf, sizeof(buf)), 0, "no answer to a HELLO");
    cr_assert_eq(f.type, HOG_FRAME_WELCOME);
    if (inbox0) {
        uint16_t n;
        const char *e = hog_frame_endpoint(&f, 0, &n);
        cr_assert_lt(n, len);
        snprintf(inbox0, len, "%.*s", (int)n, e);
    }
    return s;
}

Test(net_link, averaging_ticks_faster_than_rounds_complete_wait_for_the_open_round)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].p.sync = HOG_SYNC_AVERAGE;
    runs[0].p.sync_seconds = 0.001; /* a tick each millisecond; rank 1 never answers one */
    runs[0].until_dead = 1;
    runs[0].all = 1;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    void *s = raw_join(raw_dealer(ctx), 1, NULL, 0);
    pthread_join(th, NULL);
    zmq_close(s);
    zmq_ctx_term(ctx);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[0].st.live, 1);
    cr_assert_eq(runs[0].st.dead_rank, 1);
    assert_all(&runs[0], 1.0f); /* the rounds rank 1 left open were completed without it */
    free_ranks(runs, 1);
}

Test(net_link, malformed_frames_are_counted_and_dropped_never_applied)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[1].p.timeout = 3.0;
    runs[0].p.timeout = 3.0;
    runs[0].add = 0.0f; /* rank 1 alone changes the model: every element becomes 2 */
    /* rank 0 joins in a thread; rank 1 here, step by step */
    pthread_t th;
    rank_run *r = rank1_by_hand(&th);
    for (unsigned i = 0; i < N_ELEMS; i++)
        atomic_store(&r->w[i], 2.0f);
    cr_assert_eq(hog_link_start(r->l), 0);

    void *ctx = zmq_ctx_new();
    void *s = raw_socket(ctx, ZMQ_PUSH, r->l->endpoints[1], key_path, 3000); /* delivered before zmq_ctx_term returns */
    unsigned char garbage[64];
    memset(garbage, 0xA5, sizeof(garbage));
    hog_wire w = {0};
    float vals[1024];
    for (unsigned i = 0; i < 1024; i++)
        vals[i] = 1e30f;
    hog_frame f;
    memset(&f, 0, sizeof(f));
    f.type = HOG_FRAME_DELTA;
    f.version = HOG_NET_VERSION;
    f.rank = 0;
    f.chunk = 0;
    f.count = 1024;
    f.f32 = vals;
    cr_assert_eq(hog_frame_encode(&f, &w), 0);
    int sent = 0;
    sent += zmq_send(s, garbage, sizeof(garbage), 0) >= 0;           /* no frame at all */
    sent += zmq_send(s, w.buf, w.len - 1, 0) >= 0;                   /* a valid frame, truncated */
    f.run = 99;                                                      /* a frame of another run */
    cr_assert_eq(hog_frame_encode(&f, &w), 0);
    sent += zmq_send(s, w.buf, w.len, 0) >= 0;
    f.run = 0;
    f.rank = 7;                                                      /* a rank the run has not */
    cr_assert_eq(hog_frame_encode(&f, &w), 0);
    sent += zmq_send(s, w.buf, w.len, 0) >= 0;
    f.rank = 0;
    f.chunk = 5000;                                                  /* a chunk the model has not */
    cr_assert_eq(hog_frame_encode(&f, &w), 0);
    sent += zmq_send(s, w.buf, w.len, 0) >= 0;
    cr_assert_eq(sent, 5);
    hog_wire_free(&w);
    zmq_close(s);
    zmq_ctx_term(ctx);

    r->finish_rc = hog_link_finish(r->l, r->err, sizeof(r->err));
    pthread_join(th, NULL);
    cr_assert_eq(r->finish_rc, 0, "%s", r->err);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    hog_link_stats_get(r->l, 1, &r->st);
    cr_assert_eq(r->st.bad, 5, "rank 1 counted %llu bad frames", (unsigned long long)r->st.bad);
    assert_all(&runs[0], 2.0f); /* nothing of the 1e30s was applied */
    free_ranks(runs, 2);
}

Test(net_link, a_peer_with_another_key_never_has_a_frame_delivered)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    rank_init(&runs[1], 1, 2);
    runs[0].p.join_timeout = 3.0;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    /* rank 0 listens at the coordinator: greet it with another key */
    char other[160], err[256];
    snprintf(other, sizeof(other), "%s/other-key", dir);
    cr_assert_eq(hog_secret_keygen(other, err, sizeof(err)), 0);
    void *ctx = zmq_ctx_new();
    char ep[96];
    snprintf(ep, sizeof(ep), "tcp://%s", coordinator);
    void *s = raw_socket(ctx, ZMQ_DEALER, ep, other, 0);
    int timeout = 1500;
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    zmq_send(s, "HOGL", 4, ZMQ_DONTWAIT);
    char buf[64];
    cr_assert_lt(zmq_recv(s, buf, sizeof(buf), 0), 0); /* no REFUSE: nothing ever reached rank 0 */
    zmq_close(s);
    zmq_ctx_term(ctx);
    pthread_join(th, NULL);
    cr_assert_eq(runs[0].join_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[0].err, "rank 1 did not join"), "%s", runs[0].err);
    cr_assert_not_null(strstr(runs[0].err, "failed the CURVE handshake"), "%s", runs[0].err);
    free_ranks(runs, 2);
}

Test(net_link, another_protocol_version_is_refused_at_the_handshake)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].p.join_timeout = 3.0;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    char ep[96];
    snprintf(ep, sizeof(ep), "tcp://%s", coordinator);
    void *s = raw_socket(ctx, ZMQ_DEALER, ep, key_path, 0);
    int timeout = 2500;
    zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout));
    hog_frame h;
    memset(&h, 0, sizeof(h));
    h.type = HOG_FRAME_HELLO;
    h.version = HOG_NET_VERSION + 1;
    h.rank = 1;
    h.nodes = 2;
    h.dim = N_ELEMS;
    h.params_fp = 42;
    h.data_fp = 7;
    h.endpoint = "tcp://127.0.0.1:1";
    h.endpoint_len = (uint16_t)strlen(h.endpoint);
    hog_wire w = {0};
    cr_assert_eq(hog_frame_encode(&h, &w), 0);
    cr_assert_geq(zmq_send(s, w.buf, w.len, 0), 0);
    unsigned char buf[2048];
    int n = zmq_recv(s, buf, sizeof(buf), 0);
    cr_assert_gt(n, 0, "no answer to a HELLO of another version");
    hog_frame f;
    const char *why;
    cr_assert_eq(hog_frame_decode(buf, (size_t)n, &f, &why), 0);
    cr_assert_eq(f.type, HOG_FRAME_REFUSE);
    char text[1100];
    snprintf(text, sizeof(text), "%.*s", (int)f.text_len, f.text);
    char want[64];
    snprintf(want, sizeof(want), "protocol version %u, rank 0 speaks %u", HOG_NET_VERSION + 1, HOG_NET_VERSION);
    cr_assert_not_null(strstr(text, want), "%s", text);
    hog_wire_free(&w);
    zmq_close(s);
    zmq_ctx_term(ctx);
    pthread_join(th, NULL);
    cr_assert_eq(runs[0].join_rc, HOG_ENET);
    free_ranks(runs, 1);
}

Test(net_link, blocks_are_dealt_by_rank_and_a_dead_ranks_among_the_living)
{
    hog_link_params p = hog_link_params_default();
    p.nodes = 1;
    p.rank = 0;
    hog_link *l;
    char err[256];
    cr_assert_eq(hog_link_create(&p, &l, err, sizeof(err)), 0, "%s", err);
    for (uint32_t b = 0; b < 10; b++)
        cr_assert(hog_link_owns_block(l, b));
    hog_link_free(l);
    /* three ranks, without joining: rank 1's view */
    rank_run *r = &runs[0];
    new_run();
    rank_init(r, 1, 3);
    cr_assert_eq(hog_link_create(&r->p, &r->l, err, sizeof(err)), 0, "%s", err);
    for (uint32_t b = 0; b < 12; b++)
        cr_assert_eq(hog_link_owns_block(r->l, b), b % 3 == 1, "block %u", b);
    atomic_store(&r->l->live[2], 0); /* rank 2 dead: its blocks 2, 5, 8, 11 go to 0, 1, 0, 1 */
    for (uint32_t b = 0; b < 12; b++)
        cr_assert_eq(hog_link_owns_block(r->l, b), b % 3 == 1 || b == 5 || b == 11, "block %u", b);
    hog_link_free(r->l);
}

Test(net_link, the_fingerprint_follows_the_step_not_the_threads)
{
    hog_train_params a = hog_train_params_default(), b = a;
    b.threads = 7;
    b.bind = 0;
    cr_assert_eq(hog_link_params_fingerprint(&a), hog_link_params_fingerprint(&b));
    b.step = 0.2;
    cr_assert_neq(hog_link_params_fingerprint(&a), hog_link_params_fingerprint(&b));
    /* and the model's kind */
    hog_train_params fm = a, ffm = a, init = a;
    fm.factors = 4;
    ffm.factors = 4;
    ffm.field_aware = 1;
    init.factors = 4;
    init.factor_init = 0.1f;
    cr_assert_neq(hog_link_params_fingerprint(&a), hog_link_params_fingerprint(&fm));
    cr_assert_neq(hog_link_params_fingerprint(&fm), hog_link_params_fingerprint(&ffm));
    cr_assert_neq(hog_link_params_fingerprint(&fm), hog_link_params_fingerprint(&init));
    /* l2 over the rows: its share, not the l2 a rank's own rows made of it */
    hog_train_params r1 = ffm, r2 = ffm;
    r1.l2_rows = r2.l2_rows = 1.0;
    r1.l2 = 1.0 / 20000;
    r2.l2 = 1.0 / 30000;
    cr_assert_eq(hog_link_params_fingerprint(&r1), hog_link_params_fingerprint(&r2));
    r2.l2_rows = 2.0;
    cr_assert_neq(hog_link_params_fingerprint(&r1), hog_link_params_fingerprint(&r2));
}

/* A rank of a training run through the trainer, over a data file. */
typedef struct train_run {
    hog_link_params p;
    hog_link *l;
    const char *data;
    unsigned interrupt_at;  /* non-zero: interrupt the run after this epoch */
    int rc;
    char err[512];
} train_run;

static void interrupt_after(void *ctx, const hog_epoch_stats *st, int done)
{
    train_run *r = ctx;
    if (done && st->epoch == r->interrupt_at)
        hog_link_interrupt(r->l);
}

static void *train_main(void *arg)
{
    train_run *r = arg;
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(r->data, NULL, &ds, r->err, sizeof(r->err)), 0, "%s", r->err);
    cr_assert_eq(hog_link_create(&r->p, &r->l, r->err, sizeof(r->err)), 0, "%s", r->err);
    hog_train_params p = hog_train_params_default();
    p.threads = 1;
    p.bind = 0;
    p.epochs = 50;
    p.progress = interrupt_after;
    p.progress_ctx = r;
    hog_trainer *t;
    cr_assert_eq(hog_trainer_create(&p, &t, r->err, sizeof(r->err)), 0, "%s", r->err);
    hog_trainer_set_link(t, r->l);
    hog_model *m = NULL;
    r->rc = hog_trainer_run(t, ds, NULL, &m, r->err, sizeof(r->err));
    hog_model_free(m);
    hog_trainer_free(t);
    hog_dataset_close(ds);
    return NULL;
}

Test(net_link, a_failed_run_ends_the_link_thread_before_it_frees_the_model)
{
    new_run();
    char data[160];
    snprintf(data, sizeof(data), "%s/d.svm", dir);
    FILE *f = fopen(data, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 2000; i++)
        fprintf(f, "%d 1:%d %d:1\n", i % 2 ? 1 : -1, i % 2, 2 + i % 7);
    fclose(f);
    train_run tr[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        memset(&tr[i], 0, sizeof(tr[i]));
        rank_init(&runs[i], i, 2);
        tr[i].p = runs[i].p;
        tr[i].data = data;
        tr[i].interrupt_at = i == 1 ? 1 : 0;
        cr_assert_eq(pthread_create(&th[i], NULL, train_main, &tr[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(tr[i].rc, HOG_ENET, "rank %d: %s", i, tr[i].err);
        cr_assert_not_null(strstr(tr[i].err, "interrupted"), "rank %d: %s", i, tr[i].err);
        /* its thread joined: nothing touches the freed model's arrays any more */
        cr_assert_not(tr[i].l->running, "rank %d's link thread still runs after its run returned", i);
        hog_link_free(tr[i].l);
    }
}

Test(net_link, control_frames_of_the_wrong_direction_round_or_connection_are_counted_and_ignored)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].until_dead = 1;
    runs[0].all = 1;
    runs[0].p.timeout = 3.0; /* every frame below arrives before rank 1 is declared dead */
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    void *s = raw_join(raw_dealer(ctx), 1, NULL, 0);
    float vals[N_ELEMS];
    for (unsigned i = 0; i < N_ELEMS; i++)
        vals[i] = 1e30f;
    /* sums for rounds rank 0 never started: key 0 once met a free round slot */
    hog_frame f = raw_frame(HOG_FRAME_SUM, 1);
    f.count = N_ELEMS;
    f.f32 = vals;
    raw_send(s, &f);
    f.seq = (1ull << 32) + 100;
    raw_send(s, &f);
    /* what only rank 0 sends: an END would have ended rank 0's link thread */
    f = raw_frame(HOG_FRAME_END, 1);
    raw_send(s, &f);
    unsigned char live[2] = {1, 1};
    f = raw_frame(HOG_FRAME_GATHER, 1);
    f.nodes = 2;
    f.live = live;
    raw_send(s, &f);
    f = raw_frame(HOG_FRAME_MEAN, 1);
    f.seq = 1;
    f.count = N_ELEMS;
    f.f32 = vals;
    raw_send(s, &f);
    f = raw_frame(HOG_FRAME_TICK, 1);
    f.seq = (1ull << 32) + 1;
    raw_send(s, &f);
    /* rank 1's DONE over another connection than the one it joined with */
    char ep[96];
    snprintf(ep, sizeof(ep), "tcp://%s", coordinator);
    void *other = raw_socket(ctx, ZMQ_DEALER, ep, key_path, 0);
    f = raw_frame(HOG_FRAME_DONE, 1);
    raw_send(other, &f);
    pthread_join(th, NULL);
    zmq_close(other);
    zmq_close(s);
    zmq_ctx_term(ctx);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[0].st.bad, 7, "rank 0 counted %llu bad frames", (unsigned long long)runs[0].st.bad);
    cr_assert_eq(runs[0].st.live, 1);
    assert_all(&runs[0], 1.0f); /* nothing of the 1e30s was taken */
    free_ranks(runs, 1);
}

Test(net_link, a_greeting_that_is_not_a_hello_is_logged_and_ignored)
{
    hog_log_set(log_keep, NULL, HOG_LOG_WARN);
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].until_dead = 1;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    void *s = raw_dealer(ctx);
    hog_frame f = raw_frame(HOG_FRAME_DONE, 1); /* well-formed, but no greeting; then one */
    raw_send(s, &f);
    raw_join(s, 1, NULL, 0);
    pthread_join(th, NULL);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    zmq_close(s);
    zmq_ctx_term(ctx);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[0].st.bad, 1);
    cr_assert_not_null(strstr(logged, "rank 0: a malformed greeting (a well-formed frame, but not a HELLO) ignored"),
                       "%s", logged);
    free_ranks(runs, 1);
}

Test(net_link, a_hello_with_more_features_than_a_data_set_can_have_is_refused)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].p.shards = 1; /* the run takes the most features any rank has */
    runs[0].p.join_timeout = 2.0;
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    void *s = raw_dealer(ctx);
    raw_greet(s, 1, 1ull << 62, HOG_HELLO_SHARDS);
    unsigned char buf[2048];
    hog_frame f;
    cr_assert_eq(raw_recv(s, &f, buf, sizeof(buf)), 0, "no answer to the HELLO");
    cr_assert_eq(f.type, HOG_FRAME_REFUSE);
    char text[HOG_FRAME_TEXT_MAX + 1];
    snprintf(text, sizeof(text), "%.*s", (int)f.text_len, f.text);
    cr_assert_not_null(strstr(text, "4611686018427387904 features: more than a data set can have"), "%s", text);
    zmq_close(s);
    zmq_ctx_term(ctx);
    pthread_join(th, NULL);
    cr_assert_eq(runs[0].join_rc, HOG_ENET, "%s", runs[0].err);
    free_ranks(runs, 1);
}

Test(net_link, the_gather_refuses_a_part_of_the_wrong_size_and_bounds_a_parts_counts)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].p.timeout = 5.0;
    runs[0].add = 0.0f; /* no change of rank 0's to hand rank 1 at the gather */
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[0]), 0);
    void *ctx = zmq_ctx_new();
    char inbox0[HOG_FRAME_ENDPOINT_MAX + 1];
    void *s = raw_join(raw_dealer(ctx), 1, inbox0, sizeof(inbox0));
    void *push = raw_socket(ctx, ZMQ_PUSH, inbox0, key_path, 3000);
    hog_frame f = raw_frame(HOG_FRAME_DONE, 1);
    f.flags = HOG_BEAT_DONE;
    raw_send(s, &f);
    unsigned char buf[2048];
    do /* rank 0 finishes at once: every rank is done */
        cr_assert_eq(raw_recv(s, &f, buf, sizeof(buf)), 0, "no GATHER");
    while (f.type != HOG_FRAME_GATHER);
    f = raw_frame(HOG_FRAME_BEAT, 1); /* rank 1's fence */
    f.flags = HOG_BEAT_DONE | HOG_BEAT_FENCE;
    raw_send(push, &f);
    static float part[N_ELEMS];
    for (unsigned i = 0; i < N_ELEMS; i++)
        part[i] = 2.0f; /* rank 1's values for chunks 3 and 4 (the rest is not its to say) */
    f = raw_frame(HOG_FRAME_PART, 1);
    f.count = N_ELEMS - 1;
    f.f32 = part;
    f.stats[HOG_PART_EXAMPLES] = 1e30; /* past 2^64 */
    f.stats[HOG_PART_CHUNKS_SENT] = -5.0;
    f.stats[HOG_PART_DELTAS_SENT] = 12.0;
    raw_send(s, &f);
    f.count = N_ELEMS;
    raw_send(s, &f);
    do
        cr_assert_eq(raw_recv(s, &f, buf, sizeof(buf)), 0, "no END");
    while (f.type != HOG_FRAME_END);
    cr_assert_eq(f.status, 0);
    pthread_join(th, NULL);
    zmq_close(push);
    zmq_close(s);
    zmq_ctx_term(ctx);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[0].st.bad, 1, "rank 0 counted %llu bad frames", (unsigned long long)runs[0].st.bad);
    for (unsigned i = 0; i < N_ELEMS; i++) /* rank 0's chunks as they were, rank 1's from its part of the right size */
        cr_assert_eq(atomic_load(&runs[0].w[i]), i < 3 * 1024 ? 0.0f : 2.0f, "element %u", i);
    hog_link_stats s1;
    cr_assert_eq(hog_link_stats_get(runs[0].l, 1, &s1), 0);
    cr_assert_eq(s1.examples, UINT64_MAX);
    cr_assert_eq(s1.chunks_sent, 0);
    cr_assert_eq(s1.deltas_sent, 12);
    free_ranks(runs, 1);
}

Test(net_link, a_rank_0_that_beats_but_never_ends_the_run_is_waited_on_for_a_bounded_time)
{
    new_run();
    rank_init(&runs[1], 1, 2);
    runs[1].p.timeout = 0.5;
    runs[1].p.join_timeout = 1.0; /* END is due 2 s after the part */
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[1]), 0);
    /* rank 0 by hand: a ROUTER at the coordinator, behind the key */
    void *ctx = zmq_ctx_new();
    hog_secret key;
    hog_zap *zap;
    char err[256], ep[96];
    cr_assert_eq(hog_secret_load(key_path, &key, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_zap_start(ctx, &key, &zap, err, sizeof(err)), 0, "%s", err);
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof(zero));
    cr_assert_eq(hog_secret_server(router, &key), 0);
    snprintf(ep, sizeof(ep), "tcp://%s", coordinator);
    cr_assert_eq(zmq_bind(router, ep), 0, "%s", zmq_strerror(errno));
    double t0 = hog_now();
    void *push = NULL;
    int gathered = 0, parted = 0;
    double next_beat = 0;
    while (!atomic_load(&runs[1].finished) && hog_now() < t0 + 20.0) {
        if (push && hog_now() >= next_beat) { /* alive all along */
            hog_frame b = raw_frame(HOG_FRAME_BEAT, 0);
            b.flags = gathered ? HOG_BEAT_DONE | HOG_BEAT_FENCE : 0;
            raw_send(push, &b);
            next_beat = hog_now() + 0.05;
        }
        zmq_pollitem_t it = {router, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 20) <= 0)
            continue;
        static unsigned char buf[N_ELEMS * 4 + 256];
        unsigned char id[256];
        int idn = zmq_recv(router, id, sizeof(id), 0);
        int n = zmq_recv(router, buf, sizeof(buf), 0);
        cr_assert(idn > 0 && n > 0);
        hog_frame f;
        const char *why;
        cr_assert_eq(hog_frame_decode(buf, (size_t)n, &f, &why), 0, "%s", why);
        hog_frame a; /* the answer, and what it points at */
        char inbox1[HOG_FRAME_ENDPOINT_MAX + 1];
        const char *eps[] = {"tcp://127.0.0.1:1", inbox1};
        double classes[] = {-1.0, 1.0};
        static const unsigned char live[2] = {1, 1};
        if (f.type == HOG_FRAME_HELLO) {
            snprintf(inbox1, sizeof(inbox1), "%.*s", (int)f.endpoint_len, f.endpoint);
            a = raw_frame(HOG_FRAME_WELCOME, 0);
            a.nodes = 2;
            a.nclasses = 2;
            a.classes_f64 = classes;
            a.dim = N_ELEMS;
            a.endpoints_str = eps;
            push = raw_socket(ctx, ZMQ_PUSH, inbox1, key_path, 0);
        } else if (f.type == HOG_FRAME_DONE) {
            a = raw_frame(HOG_FRAME_GATHER, 0);
            a.nodes = 2;
            a.live = live;
            gathered = 1;
            next_beat = 0; /* the fence at once */
        } else {
            parted |= f.type == HOG_FRAME_PART;
            continue;
        }
        zmq_send(router, id, (size_t)idn, ZMQ_SNDMORE);
        raw_send(router, &a);
    }
    double took = hog_now() - t0;
    pthread_join(th, NULL);
    if (push)
        zmq_close(push);
    zmq_close(router);
    hog_zap_stop(zap);
    zmq_ctx_term(ctx);
    cr_assert(parted, "rank 1 sent no part");
    cr_assert_eq(runs[1].finish_rc, HOG_ENET);
    cr_assert_not_null(strstr(runs[1].err, "rank 0 sent no END within 2 s of rank 1's part"), "%s", runs[1].err);
    cr_assert_lt(took, 10.0);
    free_ranks(runs + 1, 1);
}

Test(net_link, a_failed_join_frees_what_it_opened_and_can_be_tried_again)
{
    new_run();
    rank_init(&runs[0], 0, 2);
    runs[0].p.join_timeout = 0.3;
    rank_run *r = &runs[0];
    char err[512];
    cr_assert_eq(hog_link_create(&r->p, &r->l, err, sizeof(err)), 0, "%s", err);
    double classes[] = {-1.0, 1.0};
    hog_link_shape shape = {.dim = N_ELEMS, .params_fp = 42, .data_fp = 7, .classes = classes, .nclasses = 2};
    cr_assert_eq(hog_link_join(r->l, &shape, err, sizeof(err)), HOG_ENET);
    cr_assert_not_null(strstr(err, "rank 1 did not join"), "%s", err);
    cr_assert_null(r->l->ctx);
    /* the coordinator's port is free: another socket can listen there */
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    a.sin_port = htons((uint16_t)atoi(strchr(coordinator, ':') + 1));
    cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0, "the failed join still holds %s", coordinator);
    cr_assert_eq(listen(fd, 1), 0, "the failed join still listens at %s", coordinator);
    close(fd);
    /* and the same link joins when rank 1 comes */
    rank_init(&runs[1], 1, 2);
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, rank_main, &runs[1]), 0);
    r->p.join_timeout = 10.0;
    r->l->p.join_timeout = 10.0;
    cr_assert_eq(hog_link_join(r->l, &shape, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_link_join(r->l, &shape, err, sizeof(err)), HOG_EPARAM);
    cr_assert_not_null(strstr(err, "rank 0 has joined its run already"), "%s", err);
    hog_link_span span = {r->w, N_ELEMS, 0, NULL, 1};
    cr_assert_eq(hog_link_spans(r->l, &span, 1), 0);
    cr_assert_eq(hog_link_start(r->l), 0);
    for (unsigned i = 0; i < N_ELEMS; i += 2)
        atomic_store(&r->w[i], 1.0f);
    cr_assert_eq(hog_link_finish(r->l, err, sizeof(err)), 0, "%s", err);
    pthread_join(th, NULL);
    cr_assert_eq(runs[1].finish_rc, 0, "%s", runs[1].err);
    assert_each(&runs[0], 2); /* rank 0's 1 on the even elements, rank 1's 2 on the odd */
    free_ranks(runs, 2);
}

Test(net_link, a_timeout_of_a_billion_seconds_is_taken_as_given)
{
    new_run();
    for (int i = 0; i < 2; i++) {
        rank_init(&runs[i], i, 2);
        runs[i].p.timeout = 1e9; /* its heartbeat options, in ms, saturate rather than wrap */
    }
    run_ranks(runs, 2);
    cr_assert_eq(runs[0].join_rc, 0, "%s", runs[0].err);
    cr_assert_eq(runs[1].join_rc, 0, "%s", runs[1].err);
    cr_assert_eq(runs[0].finish_rc, 0, "%s", runs[0].err);
    assert_each(&runs[0], 2);
    free_ranks(runs, 2);
}
