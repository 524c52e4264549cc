/* bench_coherence.c: measures how long two cores take to pass one cache line there and back, the price every line of a shared model pays when the other core wrote it last; prints CSV. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: bench_coherence [-a CPU] [-b CPU] [-n ROUNDS] [-r REPS]
 *   -a, -b   the two CPUs (default: the first two this process may use)
 *   -n       round trips a timed pass (default 100000)
 *   -r       timed passes, after one warm-up pass (default 5)
 *
 * Output: a header, then one line:
 *   cpu_a,cpu_b,rounds,round_trip_ns_median,round_trip_ns_min,round_trip_ns_max
 * A thread pinned to each CPU; the first writes an odd number into a cache
 * line of its own and waits for the second to answer with the next even
 * one: each round trip moves the line from one core's cache to the other's
 * and back. A virtual machine's vCPUs can sit on one core complex of the
 * host or on two, and move between them: the figure then changes from one
 * spell to the next, and so does what threads sharing a model can reach
 * (docs/training.md, "Model replicas"), while independent processes keep
 * their speed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 64

typedef struct line {
    _Alignas(64) atomic_ulong turn;
    char pad[64 - sizeof(atomic_ulong)];
} line;

typedef struct pass {
    line *l;
    int cpu;
    unsigned long rounds;
    int reps;
    const char *pin_error; /* set when the answering thread could not be pinned */
} pass;

static void usage(void)
{
    fprintf(stderr, "usage: bench_coherence [-a CPU] [-b CPU] [-n ROUNDS] [-r REPS]\n");
    exit(2);
}

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof(s), &s) == 0 ? 0 : -errno;
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The second CPU: answers every odd turn with the next even one, for the
 * warm-up pass and every timed one. */
static void *answer(void *arg)
{
    pass *p = arg;
    if (pin(p->cpu) < 0)
        p->pin_error = "the second CPU refused the thread";
    const unsigned long total = p->rounds * (unsigned long)(p->reps + 1);
    for (unsigned long i = 0; i < total; i++) {
        while (atomic_load_explicit(&p->l->turn, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&p->l->turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int a = -1, b = -1, reps = 5, c;
    unsigned long rounds = 100000;
    while ((c = getopt(argc, argv, "a:b:n:r:h")) != -1) {
        switch (c) {
        case 'a': a = atoi(optarg); break;
        case 'b': b = atoi(optarg); break;
        case 'n': rounds = strtoul(optarg, NULL, 10); break;
        case 'r': reps = atoi(optarg); break;
        default: usage();
        }
    }
    if (optind != argc || rounds < 1 || reps < 1 || reps > MAX_REPS)
        usage();
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
        fprintf(stderr, "bench_coherence: sched_getaffinity: %s\n", strerror(errno));
        return 1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE && (a < 0 || b < 0); cpu++) {
        if (!CPU_ISSET(cpu, &allowed) || cpu == a)
            continue;
        if (a < 0)
            a = cpu;
        else if (b < 0)
            b = cpu;
    }
    if (a < 0 || b < 0 || a == b) {
        fprintf(stderr, "bench_coherence: two different CPUs are needed (this process may use %d)\n",
                CPU_COUNT(&allowed));
        return 1;
    }
    line *l = aligned_alloc(64, sizeof(line));
    if (!l) {
        fprintf(stderr, "bench_coherence: out of memory\n");
        return 1;
    }
    atomic_init(&l->turn, 0);
    pass p = {l, b, rounds, reps, NULL};
    int rc = pin(a);
    if (rc < 0) {
        fprintf(stderr, "bench_coherence: cannot run on CPU %d: %s\n", a, strerror(-rc));
        return 1;
    }
    pthread_t t;
    if ((rc = pthread_create(&t, NULL, answer, &p)) != 0) {
        fprintf(stderr, "bench_coherence: pthread_create: %s\n", strerror(rc));
        return 1;
    }
    double ns[MAX_REPS];
    unsigned long i = 0;
    for (int r = -1; r < reps; r++) { /* pass -1 warms up */
        const double t0 = now_ns();
        for (unsigned long k = 0; k < rounds; k++, i++) {
            atomic_store_explicit(&l->turn, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&l->turn, memory_order_acquire) != 2 * i + 2)
                ;
        }
        if (r >= 0)
            ns[r] = (now_ns() - t0) / (double)rounds;
    }
    pthread_join(t, NULL);
    free(l);
    if (p.pin_error) {
        fprintf(stderr, "bench_coherence: cannot run on CPU %d: %s\n", b, p.pin_error);
        return 1;
    }
    qsort(ns, (size_t)reps, sizeof(double), cmp_double);
    const double med = reps % 2 ? ns[reps / 2] : 0.5 * (ns[reps / 2 - 1] + ns[reps / 2]);
    printf("cpu_a,cpu_b,rounds,round_trip_ns_median,round_trip_ns_min,round_trip_ns_max\n");
    printf("%d,%d,%lu,%.1f,%.1f,%.1f\n", a, b, rounds, med, ns[0], ns[reps - 1]);
    return 0;
}
