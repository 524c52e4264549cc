/* bench_model_mem.c: the memory limit of a sparse trainer: the random read-and-update of a model's lines that a row loop does, over a model of the same bytes with the same index distribution, laid out and prefetched at its best; prints CSV. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: bench_model_mem FILE.hgd [-f FLOATS] [-s STRIDE] [-e EPOCHS] [-r REPS] [-t "1 2"]
 *                       [-a "0 1 2 4 8"] [--split] [--no-huge]
 *   FILE.hgd   the rows whose indices drive the accesses: those a trainer of
 *              the file reads (its features size the model)
 *   -f FLOATS  4-byte words of state per feature (default 4: train's default
 *              update's packed record: a weight, its feature's largest |x|,
 *              its reciprocal and the L2 term; 2 for the plain loop's
 *              weight and L2 shrink)
 *   -s STRIDE  the packed record's size in words (default: FLOATS rounded up
 *              to a power of two): the same work over records of other
 *              sizes, what a narrower (16-bit) or wider state would cost
 *   -e EPOCHS  passes over the rows per timed run (default 1)
 *   -r REPS    timed runs per configuration, after one warm-up (default 3)
 *   -t LIST    thread counts (default "1"); threads share the model, each
 *              taking blocks t, t + T, ... (HOGWILD!'s racy relaxed stores)
 *   -a LIST    prefetch distances in rows to try (default "0 1 2 3 4 6 8")
 *   --split    one array per word (the layout a trainer had before a
 *              feature's state was packed): to measure what packing gives
 *   --no-huge  no madvise(MADV_HUGEPAGE) on the model
 *
 * Per row it does the least a trainer's row loop must: read each non-zero's
 * weight and the rest of its feature's state (the margin, summed over the
 * row's values), then write each weight (w -= g x, g from the margin) and the
 * feature's second word (its largest |x|). The packed layout rounds a
 * feature's words up to a power of two, so that no feature straddles a
 * cache line. The rows are visited in file order; a prefetch distance A asks
 * for the model lines of the row A rows ahead, either all at once before a
 * row (burst) or one per non-zero as the row's own are read (spread: the
 * requests leave at the pace the misses come back, packed layout only).
 * Output, one line per configuration after a header:
 *   threads,features,bytes_per_feature,layout,huge,ahead,nnz_per_s_median,nnz_per_s_min,nnz_per_s_max,prefetch
 * and last, for each thread count, the best configuration's line again
 * with layout "best": the limit to judge a trainer by.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "etl/etl.h"
#include "train/train.h"

#define MAX_THREADS 256
#define MAX_AHEAD 16
#define HUGE_BYTES ((size_t)2 << 20)

typedef struct model {
    hog_weight *base;   /* packed: features * stride words; split: words arrays one after another */
    size_t bytes;
    uint64_t features;
    uint32_t words, stride; /* packed: stride = words rounded up to a power of two */
    int split;
} model;

typedef struct job {
    const hog_dataset *ds;
    model *m;
    unsigned ith, nth, ahead, epochs;
    int spread; /* 1: row r + ahead's lines asked for one per non-zero of row r's first pass */
    pthread_barrier_t *go;
    uint64_t nnz;
    double seconds;
    float sink;
} job;

/* The address of word `word` of feature j. */
static inline hog_weight *at(const model *m, uint64_t j, uint32_t word)
{
    if (m->split)
        return m->base + (size_t)word * m->features + j;
    return m->base + j * m->stride + word;
}

static inline void prefetch_row(const model *m, const hog_block *blk, uint32_t r)
{
    for (uint32_t i = blk->ptr[r]; i < blk->ptr[r + 1]; i++) {
        uint32_t j = blk->index[i];
        if (m->split)
            for (uint32_t w = 0; w < m->words; w++)
                __builtin_prefetch((const void *)at(m, j, w), 1, 3);
        else
            __builtin_prefetch((const void *)at(m, j, 0), 1, 3);
    }
}

static void *worker(void *v)
{
    job *jb = v;
    const model *m = jb->m;
    const hog_dataset *ds = jb->ds;
    const float step = 1e-3f;
    float sink = 0.0f;
    uint64_t nnz = 0;
    pthread_barrier_wait(jb->go);
    double t0 = hog_now();
    for (unsigned e = 0; e < jb->epochs; e++)
        for (uint32_t b = jb->ith; b < ds->info.blocks; b += jb->nth) {
            const hog_block *blk = &ds->blocks[b];
            for (uint32_t r = 0; r < blk->rows && r < jb->ahead; r++)
                prefetch_row(m, blk, r);
            for (uint32_t r = 0; r < blk->rows; r++) {
                const int pf = jb->ahead && r + jb->ahead < blk->rows;
                if (pf && !jb->spread)
                    prefetch_row(m, blk, r + jb->ahead);
                /* spread: the row ahead's lines asked for as this row's
                 * are read, so that the requests leave at the rate the
                 * misses return instead of in a burst a row long */
                const uint32_t *ahead = pf && jb->spread ? blk->index + blk->ptr[r + jb->ahead] : NULL;
                uint32_t kahead = ahead ? blk->ptr[r + jb->ahead + 1] - blk->ptr[r + jb->ahead] : 0;
                const uint32_t lo = blk->ptr[r], hi = blk->ptr[r + 1];
                float margin = 0.0f;
                for (uint32_t i = lo; i < hi; i++) {
                    uint32_t j = blk->index[i];
                    float x = blk->value[i];
                    if (i - lo < kahead)
                        __builtin_prefetch((const void *)at(m, ahead[i - lo], 0), 1, 3);
                    margin += hog_w_load(at(m, j, 0)) * x;
                    for (uint32_t w = 1; w < m->words; w++)
                        margin += hog_w_load(at(m, j, w)) * 1e-30f;
                }
                for (uint32_t i = hi - lo; i < kahead; i++)
                    __builtin_prefetch((const void *)at(m, ahead[i], 0), 1, 3);
                const float g = step * (blk->label[r] > 0 ? -1.0f : 1.0f) / (1.0f + fabsf(margin));
                for (uint32_t i = lo; i < hi; i++) {
                    uint32_t j = blk->index[i];
                    float x = blk->value[i];
                    hog_weight *wj = at(m, j, 0);
                    hog_w_store(wj, hog_w_load(wj) - g * x);
                    if (m->words > 1) {
                        hog_weight *sj = at(m, j, 1);
                        if (fabsf(x) > hog_w_load(sj))
                            hog_w_store(sj, fabsf(x));
                    }
                }
                sink += margin;
                nnz += hi - lo;
            }
        }
    jb->seconds = hog_now() - t0;
    jb->nnz = nnz;
    jb->sink = sink;
    return NULL;
}

static int model_make(model *m, uint64_t features, uint32_t words, uint32_t stride, int split, int huge)
{
    while (stride < words)
        stride *= 2;
    m->features = features;
    m->words = words;
    m->stride = split ? words : stride;
    m->split = split;
    size_t bytes = (size_t)features * (split ? words : stride) * sizeof(hog_weight);
    m->bytes = (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
    void *p = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    if (huge)
        (void)madvise(p, m->bytes, MADV_HUGEPAGE); /* refused: small pages, as the trainer would get */
    memset(p, 0, m->bytes);
    m->base = p;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed run on nth threads: non-zeros per second over the slowest thread's time. */
static double run_once(const hog_dataset *ds, model *m, unsigned nth, unsigned ahead, int spread, unsigned epochs)
{
    pthread_t t[MAX_THREADS];
    job jobs[MAX_THREADS];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, nth);
    for (unsigned i = 0; i < nth; i++) {
        jobs[i] = (job){ds, m, i, nth, ahead, epochs, spread, &go, 0, 0, 0};
        if (pthread_create(&t[i], NULL, worker, &jobs[i]) != 0) {
            fprintf(stderr, "bench_model_mem: cannot start a thread\n");
            exit(1);
        }
    }
    uint64_t nnz = 0;
    double secs = 0;
    for (unsigned i = 0; i < nth; i++) {
        pthread_join(t[i], NULL);
        nnz += jobs[i].nnz;
        secs = jobs[i].seconds > secs ? jobs[i].seconds : secs;
        if (isnan(jobs[i].sink))
            fprintf(stderr, "bench_model_mem: the model diverged\n");
    }
    pthread_barrier_destroy(&go);
    return (double)nnz / secs;
}

static unsigned parse_list(const char *s, unsigned *out, unsigned cap, unsigned lo, unsigned hi)
{
    unsigned n = 0;
    char *end;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        unsigned long v = strtoul(s, &end, 10);
        if (end == s || v < lo || v > hi || n == cap) {
            fprintf(stderr, "bench_model_mem: bad list entry at \"%s\" (expected %u..%u)\n", s, lo, hi);
            exit(2);
        }
        out[n++] = (unsigned)v;
        s = end;
    }
    return n;
}

int main(int argc, char **argv)
{
    const char *path = NULL, *tlist = "1", *alist = "0 1 2 3 4 6 8";
    unsigned words = 4, stride = 1, epochs = 1, reps = 3;
    int split = 0, huge = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-f") && i + 1 < argc)
            words = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            stride = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-e") && i + 1 < argc)
            epochs = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            tlist = argv[++i];
        else if (!strcmp(argv[i], "-a") && i + 1 < argc)
            alist = argv[++i];
        else if (!strcmp(argv[i], "--split"))
            split = 1;
        else if (!strcmp(argv[i], "--no-huge"))
            huge = 0;
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: bench_model_mem FILE.hgd [-f FLOATS] [-s STRIDE] [-e EPOCHS] [-r REPS] [-t LIST] "
                            "[-a LIST] [--split] [--no-huge]\n");
            return 2;
        }
    }
    if (!path || words < 1 || words > 16 || stride < 1 || stride > 64 || epochs < 1 || reps < 1 || reps > 64) {
        fprintf(stderr, "bench_model_mem: a FILE.hgd, FLOATS 1..16, STRIDE 1..64, EPOCHS and REPS (1..64) from 1\n");
        return 2;
    }
    unsigned threads[64], ahead[32];
    unsigned nt = parse_list(tlist, threads, 64, 1, MAX_THREADS);
    unsigned na = parse_list(alist, ahead, 32, 0, MAX_AHEAD);
    hog_dataset *ds;
    char err[512];
    if (hog_dataset_open(path, NULL, &ds, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench_model_mem: %s\n", err);
        return 1;
    }
    if (ds->info.format != HOG_FORMAT_BINARY) {
        fprintf(stderr, "bench_model_mem: %s: expected a binary dataset (.hgd)\n", path);
        return 1;
    }
    model m;
    int rc = model_make(&m, ds->info.features, words, stride, split, huge);
    if (rc < 0) {
        fprintf(stderr, "bench_model_mem: a model of %llu features: %s\n", (unsigned long long)ds->info.features,
                strerror(-rc));
        return 1;
    }
    const char *layout = split ? "split" : "packed";
    const unsigned bpf = (split ? words : m.stride) * 4u;
    printf("threads,features,bytes_per_feature,layout,huge,ahead,nnz_per_s_median,nnz_per_s_min,nnz_per_s_max,"
           "prefetch\n");
    for (unsigned ti = 0; ti < nt; ti++) {
        double best[3] = {0, 0, 0};
        unsigned best_a = 0;
        int best_s = 0;
        for (int spread = 0; spread <= !split; spread++)
            for (unsigned ai = 0; ai < na; ai++) {
                if (spread && !ahead[ai])
                    continue; /* nothing ahead to spread */
                double r[64];
                run_once(ds, &m, threads[ti], ahead[ai], spread, 1); /* warm-up: the pages faulted in, the caches filled */
                for (unsigned k = 0; k < reps; k++)
                    r[k] = run_once(ds, &m, threads[ti], ahead[ai], spread, epochs);
                qsort(r, reps, sizeof(double), cmp_double);
                double med = reps % 2 ? r[reps / 2] : 0.5 * (r[reps / 2 - 1] + r[reps / 2]);
                printf("%u,%llu,%u,%s,%d,%u,%.0f,%.0f,%.0f,%s\n", threads[ti], (unsigned long long)m.features, bpf,
                       layout, huge, ahead[ai], med, r[0], r[reps - 1], spread ? "spread" : "burst");
                fflush(stdout);
                if (med > best[0]) {
                    best[0] = med, best[1] = r[0], best[2] = r[reps - 1];
                    best_a = ahead[ai];
                    best_s = spread;
                }
            }
        printf("%u,%llu,%u,best,%d,%u,%.0f,%.0f,%.0f,%s\n", threads[ti], (unsigned long long)m.features, bpf, huge,
               best_a, best[0], best[1], best[2], best_s ? "spread" : "burst");
    }
    munmap((void *)m.base, m.bytes);
    hog_dataset_close(ds);
    return 0;
}
