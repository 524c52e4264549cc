/* test_train_overlap.c: the share of a segment's change among the segments that ran beside it (hog_overlap). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "train/train.h"

/* The tests move time by hand: hog_overlap reads the clock it was given. */
static double now_s;

static double test_clock(void)
{
    return now_s;
}

Test(overlap, a_segment_alone_keeps_its_whole_change)
{
    hog_overlap c;
    now_s = 100.0;
    hog_overlap_init(&c, test_clock);
    for (int i = 0; i < 3; i++) {
        double t0, a0 = hog_overlap_enter(&c, &t0);
        cr_assert_eq(t0, now_s, "segment %d entered at %g, the clock read %g", i, t0, now_s);
        now_s += 0.002;
        float share = hog_overlap_share(&c, t0, a0, 8);
        cr_assert_float_eq(share, 1.0f, 1e-6f, "segment %d: share %g", i, (double)share);
        now_s += 0.001; /* a gap with nothing in flight counts for no one */
    }
    cr_assert_eq(c.inflight, 0u);
    hog_overlap_destroy(&c);
}

Test(overlap, a_segment_that_took_no_time_keeps_its_whole_change)
{
    hog_overlap c;
    now_s = 5.0;
    hog_overlap_init(&c, test_clock);
    double t0, a0 = hog_overlap_enter(&c, &t0);
    double t1, a1 = hog_overlap_enter(&c, &t1);
    float share = hog_overlap_share(&c, t0, a0, 8);
    cr_assert_float_eq(share, 1.0f, 1e-6f, "share %g", (double)share);
    now_s += 1.0;
    share = hog_overlap_share(&c, t1, a1, 8);
    cr_assert_float_eq(share, 1.0f, 1e-6f, "share %g after running alone", (double)share);
    hog_overlap_destroy(&c);
}

/* Four segments that start together (an epoch's start, or the whole of a
 * small epoch) and end one after another, 40 ms apart: their shares. */
static void start_together(unsigned members, float share[4])
{
    hog_overlap c;
    now_s = 0.0;
    hog_overlap_init(&c, test_clock);
    double t0[4], a0[4];
    for (unsigned i = 0; i < 4; i++)
        a0[i] = hog_overlap_enter(&c, &t0[i]);
    cr_assert_eq(c.inflight, 4u);
    for (unsigned i = 0; i < 4; i++) {
        now_s = 0.040 * (i + 1);
        share[i] = hog_overlap_share(&c, t0[i], a0[i], members);
    }
    cr_assert_eq(c.inflight, 0u);
    hog_overlap_destroy(&c);
}

Test(overlap, segments_that_start_together_share_their_change)
{
    float share[4];
    start_together(8, share);
    /* In flight while each ran: 4; 4 then 3; 4, 3, 2; 4, 3, 2, 1 (a
     * quarter of its span each): shares 1/4, 1/3.5, 1/3, 1/2.5. Counting
     * only those that published during a segment gave 1, 1/2, 1/3, 1/4:
     * the changes summed to 2.08 times one. */
    const float want[4] = {0.25f, 1.0f / 3.5f, 1.0f / 3.0f, 0.4f};
    float sum = 0;
    for (unsigned i = 0; i < 4; i++) {
        cr_assert(fabsf(share[i] - want[i]) < 1e-5f, "segment %u: share %g, expected %g", i, (double)share[i],
                  (double)want[i]);
        sum += share[i];
    }
    cr_assert(sum > 1.1f && sum < 1.45f, "shares sum to %g", (double)sum);
}

Test(overlap, a_share_is_at_least_one_over_the_members)
{
    float share[4];
    start_together(2, share);
    for (unsigned i = 0; i < 4; i++)
        cr_assert_float_eq(share[i], 0.5f, 1e-6f, "segment %u: share %g with 2 members", i, (double)share[i]);
}

/* Workers of one replica enter and leave from several threads: the clock
 * here ticks once per reading, so only the lock orders the readings. */
static atomic_uint ticks;

static double tick_clock(void)
{
    return (double)atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed);
}

enum { WORKERS = 4, SEGMENTS = 2000 };

typedef struct worker {
    hog_overlap *c;
    pthread_barrier_t *start;
    float lowest, highest;
} worker;

static void *run_segments(void *arg)
{
    worker *w = arg;
    w->lowest = 1.0f;
    w->highest = 0.0f;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < SEGMENTS; i++) {
        double t0, a0 = hog_overlap_enter(w->c, &t0);
        float share = hog_overlap_share(w->c, t0, a0, WORKERS);
        w->lowest = fminf(w->lowest, share);
        w->highest = fmaxf(w->highest, share);
    }
    return NULL;
}

Test(overlap, workers_on_several_threads_leave_the_clock_balanced)
{
    hog_overlap c;
    pthread_barrier_t start;
    worker w[WORKERS];
    pthread_t th[WORKERS];
    atomic_init(&ticks, 0);
    hog_overlap_init(&c, tick_clock);
    pthread_barrier_init(&start, NULL, WORKERS);
    for (unsigned i = 0; i < WORKERS; i++) {
        w[i] = (worker){&c, &start, 0.0f, 0.0f};
        cr_assert_eq(pthread_create(&th[i], NULL, run_segments, &w[i]), 0);
    }
    for (unsigned i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    /* Each segment read the clock twice, and init once. */
    cr_assert_eq(atomic_load(&ticks), 1u + 2u * WORKERS * SEGMENTS);
    cr_assert_eq(c.inflight, 0u);
    cr_assert_eq(c.last, (double)(2u * WORKERS * SEGMENTS), "the last reading was %g", c.last);
    for (unsigned i = 0; i < WORKERS; i++)
        cr_assert(w[i].lowest >= 1.0f / WORKERS - 1e-6f && w[i].highest <= 1.0f,
                  "worker %u: shares from %g to %g", i, (double)w[i].lowest, (double)w[i].highest);
    pthread_barrier_destroy(&start);
    hog_overlap_destroy(&c);
}
