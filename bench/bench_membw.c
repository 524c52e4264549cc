/* bench_membw.c: measures memory read bandwidth, a streaming read over a buffer much larger than the last-level cache, on 1..N threads; prints CSV. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: bench_membw [-m MIB] [-r REPS] [-t "1 2 ..."]
 *   -m MIB   buffer size (default: 16 x the last-level cache, at least 512 MiB)
 *   -r REPS  timed passes per thread count, after one warm-up pass (default 5)
 *   -t LIST  thread counts (default "1 N", N the CPUs this process may use)
 *
 * Output: a header, then one line per thread count:
 *   threads,bytes,gbps_median,gbps_min,gbps_max
 * GB/s are 10^9 bytes per second. Each thread first-touches and then reads
 * its own contiguous slice, so on a NUMA machine its pages are on its node:
 * this is the rate a trainer streaming its own blocks could reach. Threads
 * start each pass together at a barrier and the pass ends when the last one
 * finishes. The read sums 64-bit words into four accumulators, which the
 * compiler vectorises; the total is checked against the known contents, so
 * the reads cannot be optimised away.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/util/util.h"
#include "bench_words.h"

#define MAX_THREADS 1024
#define MAX_REPS 64

typedef struct worker {
    pthread_t thread;
    const uint64_t *words;
    size_t n;
    pthread_barrier_t *start, *end;
    int reps;
    uint64_t sum;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    /* First touch: the pages land on this thread's node, and the warm-up
     * pass that follows has no page faults left to take. */
    memset((void *)w->words, 1, w->n * sizeof(uint64_t));
    for (int r = 0; r <= w->reps; r++) { /* pass 0 is the warm-up */
        pthread_barrier_wait(w->start);
        w->sum += bench_sum_words(w->words, w->n);
        pthread_barrier_wait(w->end);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs reps timed passes on nt threads; fills gbps[0..reps) sorted. Returns 0 or -errno. */
static int measure(uint64_t *buf, size_t words, unsigned nt, int reps, double *gbps)
{
    worker *ws = calloc(nt, sizeof(*ws));
    pthread_barrier_t start, end;
    if (!ws)
        return -ENOMEM;
    pthread_barrier_init(&start, NULL, nt + 1);
    pthread_barrier_init(&end, NULL, nt + 1);
    size_t per = words / nt;
    unsigned made = 0;
    int rc = 0;
    for (; made < nt; made++) {
        ws[made] = (worker){.words = buf + per * made, .n = per, .start = &start, .end = &end, .reps = reps};
        if ((rc = pthread_create(&ws[made].thread, NULL, worker_main, &ws[made])) != 0)
            break;
    }
    if (rc != 0) {
        /* The barriers count nt + 1: a partial set of threads would wait
         * forever, so this is the one failure that must stop the program. */
        fprintf(stderr, "bench_membw: pthread_create: %s\n", strerror(rc));
        exit(1);
    }
    for (int r = 0; r <= reps; r++) {
        pthread_barrier_wait(&start);
        double t0 = hog_now();
        pthread_barrier_wait(&end);
        double dt = hog_now() - t0;
        if (r > 0)
            gbps[r - 1] = (double)(per * nt * sizeof(uint64_t)) / dt / 1e9;
    }
    uint64_t sum = 0;
    for (unsigned t = 0; t < nt; t++) {
        pthread_join(ws[t].thread, NULL);
        sum += ws[t].sum;
    }
    /* Every word is 0x0101..01: the sum (mod 2^64) is known in advance. */
    if (sum != (uint64_t)per * nt * (uint64_t)(reps + 1) * 0x0101010101010101ull)
        fprintf(stderr, "bench_membw: impossible sum %llx\n", (unsigned long long)sum);
    pthread_barrier_destroy(&start);
    pthread_barrier_destroy(&end);
    free(ws);
    qsort(gbps, (size_t)reps, sizeof(double), cmp_double);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_membw [-m MIB] [-r REPS] [-t \"1 2 ...\"]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (llc <= 0)
        llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t mib = llc > 0 ? (size_t)llc * 16 >> 20 : 512;
    if (mib < 512)
        mib = 512;
    int reps = 5;
    const char *list = NULL;
    char deflist[32];
    int c;
    while ((c = getopt(argc, argv, "m:r:t:h")) != -1) {
        switch (c) {
        case 'm': mib = (size_t)strtoull(optarg, NULL, 10); break;
        case 'r': reps = atoi(optarg); break;
        case 't': list = optarg; break;
        default: usage();
        }
    }
    if (optind != argc || mib < 1 || reps < 1 || reps > MAX_REPS)
        usage();
    if (!list) {
        snprintf(deflist, sizeof(deflist), "1 %u", hog_cpus());
        list = deflist;
    }
    size_t bytes = mib << 20, words = bytes / sizeof(uint64_t);
    uint64_t *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, bytes) != 0) {
        fprintf(stderr, "bench_membw: cannot allocate %zu MiB\n", mib);
        return 1;
    }
    printf("threads,bytes,gbps_median,gbps_min,gbps_max\n");
    unsigned last = 0;
    for (const char *p = list; *p;) {
        char *end;
        unsigned long nt = strtoul(p, &end, 10);
        if (end == p || nt < 1 || nt > MAX_THREADS) {
            fprintf(stderr, "bench_membw: -t: expected thread counts from 1 to %d, found '%s'\n",
                    MAX_THREADS, p);
            return 2;
        }
        p = end + strspn(end, " ,");
        if (nt == last) /* "1 1" on a one-CPU machine */
            continue;
        last = (unsigned)nt;
        double gbps[MAX_REPS];
        if (measure(buf, words, (unsigned)nt, reps, gbps) < 0) {
            fprintf(stderr, "bench_membw: out of memory\n");
            return 1;
        }
        double med = reps % 2 ? gbps[reps / 2] : (gbps[reps / 2 - 1] + gbps[reps / 2]) / 2;
        printf("%lu,%zu,%.3f,%.3f,%.3f\n", nt, (words / nt) * nt * sizeof(uint64_t), med, gbps[0],
               gbps[reps - 1]);
        fflush(stdout);
    }
    free(buf);
    return 0;
}
