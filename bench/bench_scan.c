/* bench_scan.c: measures a warm scan of a binary dataset (every block's bytes read once, on 1 to N threads) against a read of a heap buffer of the same size. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etl/etl.h"

#include "bench_words.h"

/* usage: bench_scan FILE.hgd [runs (5)] [threads (2)]
 * The file is opened (and so validated and mapped) once, outside the
 * timing, then read through hog_dataset_bytes's worth of mapped blocks:
 * thread t of T takes blocks t, t+T, ... and sums each block's 64-bit
 * words, the least work that still touches every byte a trainer reads.
 * The reference, measured in the same run on as many threads, is the same
 * sum over a heap buffer of the same size (capped at 2 GiB): a scan cannot
 * beat reading memory. Medians of `runs` after one warm-up pass. */

#define MAX_THREADS 64

typedef struct job {
    const hog_dataset *ds;
    const uint8_t *buf; /* the reference: a heap buffer, or NULL */
    size_t buf_bytes;
    unsigned ith, nth;
    uint64_t sum;
} job;

static void *scan_worker(void *v)
{
    job *j = v;
    uint64_t s = 0;
    if (j->buf) {
        size_t per = j->buf_bytes / j->nth / 64 * 64;
        size_t lo = per * j->ith, hi = j->ith + 1 == j->nth ? j->buf_bytes : lo + per;
        s = bench_sum_words((const uint64_t *)(j->buf + lo), (hi - lo) / 8);
    } else {
        for (uint32_t b = j->ith; b < j->ds->info.blocks; b += j->nth) {
            const hog_block *blk = &j->ds->blocks[b];
            s += bench_sum_words((const uint64_t *)blk->ptr, (size_t)hog_block_bytes(blk->rows, blk->nnz, blk->weight != NULL) / 8);
        }
    }
    j->sum = s;
    return NULL;
}

static double run_once(const hog_dataset *ds, const uint8_t *buf, size_t bytes, unsigned nth,
                       uint64_t *sum)
{
    pthread_t t[MAX_THREADS];
    job jobs[MAX_THREADS];
    double t0 = hog_now();
    for (unsigned i = 0; i < nth; i++) {
        jobs[i] = (job){ds, buf, bytes, i, nth, 0};
        if (pthread_create(&t[i], NULL, scan_worker, &jobs[i]) != 0) {
            fprintf(stderr, "bench_scan: cannot start a thread\n");
            exit(1);
        }
    }
    *sum = 0;
    for (unsigned i = 0; i < nth; i++) {
        pthread_join(t[i], NULL);
        *sum += jobs[i].sum;
    }
    return hog_now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_rate(const hog_dataset *ds, const uint8_t *buf, size_t bytes, unsigned nth,
                          unsigned runs, double *lo, double *hi)
{
    double r[64];
    uint64_t sum;
    run_once(ds, buf, bytes, nth, &sum); /* warm-up: faults the pages in */
    for (unsigned i = 0; i < runs; i++)
        r[i] = (double)bytes / run_once(ds, buf, bytes, nth, &sum) / 1e6;
    qsort(r, runs, sizeof(double), cmp_double);
    *lo = r[0];
    *hi = r[runs - 1];
    return runs % 2 ? r[runs / 2] : 0.5 * (r[runs / 2 - 1] + r[runs / 2]);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: bench_scan FILE.hgd [runs (5)] [threads (2)]\n");
        return 2;
    }
    unsigned runs = argc > 2 ? (unsigned)atoi(argv[2]) : 5;
    unsigned maxt = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
    if (runs < 1 || runs > 64 || maxt < 1 || maxt > MAX_THREADS) {
        fprintf(stderr, "bench_scan: runs must be 1..64 and threads 1..%d\n", MAX_THREADS);
        return 2;
    }
    hog_dataset *ds;
    char err[512];
    double t0 = hog_now();
    int rc = hog_dataset_open(argv[1], NULL, &ds, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "bench_scan: %s\n", err);
        return 1;
    }
    double open_s = hog_now() - t0;
    if (ds->info.format != HOG_FORMAT_BINARY) {
        fprintf(stderr, "bench_scan: %s is not a binary dataset\n", argv[1]);
        return 1;
    }
    size_t bytes = 0;
    for (uint32_t b = 0; b < ds->info.blocks; b++)
        bytes += (size_t)hog_block_bytes(ds->blocks[b].rows, ds->blocks[b].nnz, ds->info.weighted);
    size_t ref_bytes = bytes < ((size_t)2 << 30) ? bytes : ((size_t)2 << 30);
    uint8_t *buf = malloc(ref_bytes);
    if (!buf) {
        fprintf(stderr, "bench_scan: out of memory for the reference buffer\n");
        return 1;
    }
    memset(buf, 1, ref_bytes);
    printf("%s: %zu bytes of blocks, opened (validated) in %.3f s (%.0f MB/s)\n", argv[1], bytes,
           open_s, (double)ds->map_bytes / open_s / 1e6);
    for (unsigned t = 1; t <= maxt; t++) {
        double slo, shi, mlo, mhi;
        double scan = median_rate(ds, NULL, bytes, t, runs, &slo, &shi);
        double mem = median_rate(NULL, buf, ref_bytes, t, runs, &mlo, &mhi);
        printf("  %u thread%s: scan %8.0f MB/s (min %.0f, max %.0f)   memory read %8.0f MB/s "
               "(min %.0f, max %.0f)   scan/memory %.2f\n",
               t, t == 1 ? " " : "s", scan, slo, shi, mem, mlo, mhi, scan / mem);
    }
    free(buf);
    hog_dataset_close(ds);
    return 0;
}
