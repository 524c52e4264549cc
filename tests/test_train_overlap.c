/* test_train_overlap.c: the share of a segment's change among the segments that ran beside it (hog_overlap). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "train/train.h"

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

Test(overlap, a_segment_alone_keeps_its_whole_change)
{
    hog_overlap c;
    hog_overlap_init(&c);
    for (int i = 0; i < 3; i++) {
        double t0, a0 = hog_overlap_enter(&c, &t0);
        sleep_ms(2);
        float share = hog_overlap_share(&c, t0, a0, 8);
        cr_assert_float_eq(share, 1.0f, 1e-6f, "segment %d: share %g", i, (double)share);
    }
    cr_assert_eq(c.inflight, 0u);
    hog_overlap_destroy(&c);
}

/* Workers that start together (an epoch's start, or the whole of a small
 * epoch) and end one after another. */
typedef struct together {
    hog_overlap *c;
    pthread_barrier_t *start;
    unsigned ms;
    unsigned members;
    float share;
} together;

static void *run_together(void *arg)
{
    together *w = arg;
    pthread_barrier_wait(w->start);
    double t0, a0 = hog_overlap_enter(w->c, &t0);
    sleep_ms(w->ms);
    w->share = hog_overlap_share(w->c, t0, a0, w->members);
    return NULL;
}

static void start_together(unsigned members, together *w)
{
    hog_overlap c;
    pthread_barrier_t start;
    hog_overlap_init(&c);
    pthread_barrier_init(&start, NULL, 4);
    pthread_t th[4];
    for (unsigned i = 0; i < 4; i++) {
        /* Sleeping needs no CPU, so the four overlap on any machine. */
        w[i] = (together){&c, &start, 40 * (i + 1), members, 0.0f};
        cr_assert_eq(pthread_create(&th[i], NULL, run_together, &w[i]), 0);
    }
    for (unsigned i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    cr_assert_eq(c.inflight, 0u);
    pthread_barrier_destroy(&start);
    hog_overlap_destroy(&c);
}

Test(overlap, segments_that_start_together_share_their_change)
{
    together w[4];
    start_together(8, w);
    /* In flight while each ran: 4; 4 then 3; 4, 3, 2; 4, 3, 2, 1 (a
     * quarter of its span each): shares 1/4, 1/3.5, 1/3, 1/2.5. Counting
     * only those that published during a segment gave 1, 1/2, 1/3, 1/4:
     * the changes summed to 2.08 times one. */
    const float want[4] = {0.25f, 1.0f / 3.5f, 1.0f / 3.0f, 0.4f};
    float sum = 0;
    for (unsigned i = 0; i < 4; i++) {
        cr_assert(fabsf(w[i].share - want[i]) < 0.06f, "segment %u: share %g, expected about %g", i,
                  (double)w[i].share, (double)want[i]);
        sum += w[i].share;
    }
    cr_assert(sum > 1.1f && sum < 1.45f, "shares sum to %g", (double)sum);
}

Test(overlap, a_share_is_at_least_one_over_the_members)
{
    together w[4];
    start_together(2, w);
    for (unsigned i = 0; i < 4; i++)
        cr_assert_float_eq(w[i].share, 0.5f, 0.05f, "segment %u: share %g with 2 members", i, (double)w[i].share);
}
