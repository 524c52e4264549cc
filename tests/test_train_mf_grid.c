/* test_train_mf_grid.c: the grid of matrix factorisation: blocks that partition the ratings by band, a scheduler that never hands two workers a band, one order on one thread, a pause that leaves a prefix. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train/train_mf.h"

/* n seeded triples over users x items. */
static hog_mf_triple *triples(uint64_t n, uint32_t users, uint32_t items, uint64_t seed)
{
    hog_mf_triple *t = malloc(n * sizeof(*t));
    cr_assert_not_null(t);
    hog_rng r = {seed};
    for (uint64_t k = 0; k < n; k++)
        t[k] = (hog_mf_triple){hog_rng_below(&r, users), hog_rng_below(&r, items), (float)k};
    return t;
}

static int by_rating(const void *a, const void *b)
{
    float x = ((const hog_mf_triple *)a)->rating, y = ((const hog_mf_triple *)b)->rating;
    return (x > y) - (x < y);
}

Test(mf_grid, blocks_partition_the_ratings_by_band)
{
    enum { N = 60000, USERS = 700, ITEMS = 300, B = 7 };
    hog_mf_triple *t = triples(N, USERS, ITEMS, 3), *orig = malloc(N * sizeof(*t));
    cr_assert_not_null(orig);
    memcpy(orig, t, N * sizeof(*t));
    mf_grid g = {.b = B};
    cr_assert_eq(hog_mf_grid_build(&g, t, N, USERS, ITEMS, 11), 0);
    cr_assert_eq(g.blocks, (uint32_t)(B * B));
    cr_assert_eq(g.start[0], 0u);
    cr_assert_eq(g.start[g.blocks], (uint64_t)N);
    /* Each user lies in one row of blocks, each item in one column. */
    int urow[USERS], icol[ITEMS];
    memset(urow, -1, sizeof(urow));
    memset(icol, -1, sizeof(icol));
    for (uint32_t k = 0; k < g.blocks; k++) {
        uint64_t size = g.start[k + 1] - g.start[k];
        /* Seeded random bands balance the blocks: about N / B^2 = 1224 each. */
        cr_assert(size > 900 && size < 1600, "block %u holds %llu ratings", k, (unsigned long long)size);
        for (uint64_t j = g.start[k]; j < g.start[k + 1]; j++) {
            int row = (int)(k / B), col = (int)(k % B);
            cr_assert(urow[t[j].user] < 0 || urow[t[j].user] == row, "user %u in two rows", t[j].user);
            cr_assert(icol[t[j].item] < 0 || icol[t[j].item] == col, "item %u in two columns", t[j].item);
            urow[t[j].user] = row;
            icol[t[j].item] = col;
        }
    }
    /* The same triples, moved. */
    qsort(t, N, sizeof(*t), by_rating);
    cr_assert_eq(memcmp(t, orig, N * sizeof(*t)), 0);
    hog_mf_grid_free(&g);
    free(t);
    free(orig);
}

Test(mf_grid, the_bands_follow_threads_and_ratings)
{
    cr_assert_eq(hog_mf_grid_bands(5, 8, 1000000000), 5u); /* asked for */
    uint32_t big = hog_mf_grid_bands(0, 1, 20000000);
    cr_assert_geq(big, 3u);
    cr_assert_geq(hog_mf_grid_bands(0, 40, 20000000), 81u); /* 2 threads + 1 */
    cr_assert_leq(hog_mf_grid_bands(0, 1, 18000), 8u);      /* no tiny blocks */
    cr_assert_eq(hog_mf_grid_bands(0, 1, 10), 3u);
}

/* A scheduler exercised by threads that check, with counters of their
 * own, that no band is ever held twice. */
typedef struct sched_run {
    mf_grid *g;
    uint32_t *order;
    atomic_uint row[16], col[16];
    atomic_uint claims[256];
    atomic_uint steps;
    unsigned pause_at; /* the step whose release pauses, 0: none */
    atomic_int clash;
} sched_run;

static void *sched_thread(void *arg)
{
    sched_run *s = arg;
    uint32_t pos, b = s->g->b;
    while (hog_mf_grid_claim(s->g, &pos)) {
        uint32_t blk = s->order[pos];
        if (atomic_fetch_add(&s->row[blk / b], 1) || atomic_fetch_add(&s->col[blk % b], 1))
            atomic_store(&s->clash, 1);
        atomic_fetch_add(&s->claims[pos], 1);
        for (volatile int spin = 0; spin < 2000; spin++)
            ;
        atomic_fetch_sub(&s->row[blk / b], 1);
        atomic_fetch_sub(&s->col[blk % b], 1);
        unsigned step = atomic_fetch_add(&s->steps, 1) + 1;
        hog_mf_grid_release(s->g, pos, s->pause_at && step >= s->pause_at);
    }
    return NULL;
}

/* One epoch of a 9 x 9 grid (81 blocks, no ratings needed) on nth threads. */
static void schedule(sched_run *s, mf_grid *g, unsigned nth, unsigned pause_at, uint32_t done)
{
    memset(s, 0, sizeof(*s));
    s->g = g;
    s->pause_at = pause_at;
    static uint32_t order[81];
    hog_rng r = {77};
    for (uint32_t k = 0; k < 81; k++)
        order[k] = k;
    hog_shuffle_u32(order, 81, &r);
    s->order = order;
    hog_mf_grid_begin(g, order, 81, done);
    pthread_t th[8];
    for (unsigned i = 0; i < nth; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, sched_thread, s), 0);
    for (unsigned i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
}

static mf_grid empty_grid(uint32_t b)
{
    mf_grid g = {.b = b};
    hog_mf_triple none[1];
    cr_assert_eq(hog_mf_grid_build(&g, none, 0, 1, 1, 1), 0);
    return g;
}

Test(mf_grid, no_two_workers_hold_a_band_and_every_block_runs_once)
{
    mf_grid g = empty_grid(9);
    static sched_run s;
    for (int round = 0; round < 20; round++) {
        schedule(&s, &g, 4, 0, 0);
        cr_assert_eq(atomic_load(&s.clash), 0, "two workers held one band");
        for (uint32_t p = 0; p < 81; p++)
            cr_assert_eq(atomic_load(&s.claims[p]), 1u, "position %u claimed %u times", p, atomic_load(&s.claims[p]));
        cr_assert_eq(hog_mf_grid_paused_at(&g), 81u);
    }
    hog_mf_grid_free(&g);
}

Test(mf_grid, one_worker_follows_the_order_and_resumes_at_its_position)
{
    mf_grid g = empty_grid(9);
    uint32_t order[81], pos;
    for (uint32_t k = 0; k < 81; k++)
        order[k] = (k * 7) % 81;
    hog_mf_grid_begin(&g, order, 81, 30);
    for (uint32_t want = 30; want < 81; want++) {
        cr_assert_eq(hog_mf_grid_claim(&g, &pos), 1);
        cr_assert_eq(pos, want);
        hog_mf_grid_release(&g, pos, 0);
    }
    cr_assert_eq(hog_mf_grid_claim(&g, &pos), 0);
    /* A pause on one worker stops right after the block it was on. */
    hog_mf_grid_begin(&g, order, 81, 0);
    for (uint32_t want = 0; want < 5; want++) {
        cr_assert_eq(hog_mf_grid_claim(&g, &pos), 1);
        hog_mf_grid_release(&g, pos, want == 4);
    }
    cr_assert_eq(hog_mf_grid_claim(&g, &pos), 0);
    cr_assert_eq(hog_mf_grid_paused_at(&g), 5u);
    hog_mf_grid_free(&g);
}

Test(mf_grid, a_pause_on_several_workers_leaves_a_prefix_trained)
{
    mf_grid g = empty_grid(9);
    static sched_run s;
    for (unsigned pause_at = 1; pause_at < 70; pause_at += 3) {
        schedule(&s, &g, 4, pause_at, 0);
        uint32_t at = hog_mf_grid_paused_at(&g);
        cr_assert(at >= pause_at && at <= 81, "paused at %u after step %u", at, pause_at);
        for (uint32_t p = 0; p < 81; p++)
            cr_assert_eq(atomic_load(&s.claims[p]), p < at ? 1u : 0u, "pause %u at %u: position %u claimed %u times",
                         pause_at, at, p, atomic_load(&s.claims[p]));
        /* And the rest of the epoch from there: every position once in all. */
        static sched_run rest;
        schedule(&rest, &g, 4, 0, at);
        for (uint32_t p = 0; p < 81; p++)
            cr_assert_eq(atomic_load(&s.claims[p]) + atomic_load(&rest.claims[p]), 1u);
        cr_assert_eq(atomic_load(&rest.clash), 0);
    }
    hog_mf_grid_free(&g);
}
