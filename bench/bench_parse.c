/* bench_parse.c: measures hog_parse_chunk throughput on generated libsvm and CSV text, on 1 to N threads, against memory bandwidth. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etl/etl.h"

/* usage: bench_parse [MB per format (256)] [runs (5)] [threads (2)]
 *        bench_parse --file PATH MB [runs (5)] [threads (2)]: the first MB MiB of a real file
 * Text is generated in memory (no disk in the measurement), cut into 4 MiB
 * chunks at line ends as the pipeline cuts files, and parsed with each
 * thread taking every T-th chunk of the same buffer into its own hog_rows.
 * The reference is a read of the same buffer (a sum of 64-bit words) on as
 * many threads: parsing cannot go faster than reading the bytes once. */

#define CHUNK (4u << 20)
#define MAX_THREADS 64

static unsigned max_threads = 2; /* the third argument */

static uint64_t rng_state = 12345;
static uint32_t rnd(uint32_t n)
{
    return (uint32_t)(((hog_rng_next(&(hog_rng){rng_state++}) >> 32) * n) >> 32);
}

/* Writes v in decimal at p; returns the end. */
static char *put_uint(char *p, uint32_t v)
{
    char tmp[12];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = tmp[--n];
    return p;
}

/* "0.123456": six digits after the point. */
static char *put_value(char *p)
{
    uint32_t v = rnd(1000000);
    *p++ = '0';
    *p++ = '.';
    for (int k = 5; k >= 0; k--) {
        p[k] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + 6;
}

static char *gen_libsvm(size_t bytes, size_t *len)
{
    char *buf = malloc(bytes + 4096), *p = buf;
    if (!buf)
        return NULL;
    while ((size_t)(p - buf) < bytes) {
        p = put_uint(p, rnd(2)); /* 0/1 labels */
        uint32_t idx = 0;
        for (int k = 0; k < 75; k++) {
            idx += 1 + rnd(40);
            *p++ = ' ';
            p = put_uint(p, idx);
            *p++ = ':';
            p = put_value(p);
        }
        *p++ = '\n';
    }
    *len = (size_t)(p - buf);
    return buf;
}

static char *gen_csv(size_t bytes, size_t *len)
{
    char *buf = malloc(bytes + 4096), *p = buf;
    if (!buf)
        return NULL;
    while ((size_t)(p - buf) < bytes) {
        p = put_uint(p, rnd(2));
        for (int k = 1; k < 30; k++) {
            *p++ = ',';
            p = put_value(p);
        }
        *p++ = '\n';
    }
    *len = (size_t)(p - buf);
    return buf;
}

static uint64_t read_sink;

typedef struct chunk {
    const char *p;
    size_t len;
} chunk;

typedef struct job {
    const hog_text_plan *plan;
    const chunk *chunks;
    size_t n_chunks;
    unsigned t, nt;
    const char *buf;
    size_t len;
    uint64_t rows, nnz, sum;
    int rc;
} job;

static void *parse_worker(void *arg)
{
    job *j = arg;
    hog_rows r;
    memset(&r, 0, sizeof(r));
    hog_text_error e;
    for (size_t i = j->t; i < j->n_chunks; i += j->nt) {
        hog_rows_clear(&r);
        int rc = hog_parse_chunk(j->plan, j->chunks[i].p, j->chunks[i].len, &r, &e);
        if (rc < 0) {
            j->rc = rc;
            fprintf(stderr, "chunk %zu: line %llu col %u: %s\n", i, (unsigned long long)e.line,
                    e.column, e.what);
            break;
        }
        j->rows += r.rows;
        j->nnz += r.nnz;
    }
    hog_rows_free(&r);
    return NULL;
}

static void *read_worker(void *arg)
{
    job *j = arg;
    size_t words = j->len / 8, per = words / j->nt;
    const uint64_t *w = (const uint64_t *)(const void *)j->buf + per * j->t;
    uint64_t s = 0;
    for (size_t i = 0; i < per; i++)
        s += w[i];
    j->sum = s;
    return NULL;
}

/* Seconds for one pass on nt threads. */
static double run(void *(*fn)(void *), const hog_text_plan *plan, const chunk *chunks, size_t n,
                  const char *buf, size_t len, unsigned nt, uint64_t *rows)
{
    job jobs[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    double t0 = hog_now();
    for (unsigned t = 0; t < nt; t++) {
        jobs[t] = (job){plan, chunks, n, t, nt, buf, len, 0, 0, 0, 0};
        if (pthread_create(&th[t], NULL, fn, &jobs[t]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    *rows = 0;
    for (unsigned t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        if (jobs[t].rc < 0)
            exit(1);
        *rows += jobs[t].rows;
    }
    double dt = hog_now() - t0;
    for (unsigned t = 0; t < nt; t++)
        read_sink += jobs[t].sum; /* the sums are used, so the reads are not optimised away */
    return dt;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bench(const char *name, hog_format fmt, const char *buf, size_t len, int runs)
{
    /* hog_read_params_default's values, set here so that only the parsers
     * (and util) are linked from the library, not the readers' libraries */
    hog_read_params p;
    memset(&p, 0, sizeof(p));
    p.format = fmt;
    p.header = 0;
    hog_text_plan plan;
    char err[256];
    if (hog_text_plan_make("bench", &p, buf, len < 65536 ? len : 65536, &plan, err,
                           sizeof(err)) < 0) {
        fprintf(stderr, "plan: %s\n", err);
        exit(1);
    }
    size_t cap = len / CHUNK + 2, n = 0;
    chunk *chunks = malloc(cap * sizeof(chunk));
    for (size_t off = 0; off < len;) {
        size_t end = off + CHUNK < len ? off + CHUNK : len;
        if (end < len) {
            const char *nl = memrchr(buf + off, '\n', end - off);
            end = nl ? (size_t)(nl - buf) + 1 : end;
        }
        chunks[n++] = (chunk){buf + off, end - off};
        off = end;
    }
    double mb = (double)len / 1e6;
    uint64_t rows = 0;
    printf("%s: %.0f MB, %zu chunks of 4 MiB\n", name, mb, n);
    for (unsigned nt = 1; nt <= max_threads; nt++) {
        double parse[16], ref[16];
        run(parse_worker, &plan, chunks, n, buf, len, nt, &rows); /* warm up: page faults, allocator */
        for (int r = 0; r < runs; r++) {
            ref[r] = mb / run(read_worker, &plan, chunks, n, buf, len, nt, &rows);
            parse[r] = mb / run(parse_worker, &plan, chunks, n, buf, len, nt, &rows);
        }
        double pm = median(parse, runs), rm = median(ref, runs);
        printf("  %u thread%s: parse %7.0f MB/s (median of %d; min %.0f, max %.0f)   "
               "read %7.0f MB/s   parse/read %.3f   rows %llu\n",
               nt, nt > 1 ? "s" : " ", pm, runs, parse[0], parse[runs - 1], rm, pm / rm,
               (unsigned long long)rows);
    }
    free(chunks);
    hog_text_plan_free(&plan);
}

/* --file PATH MB: the first MB MiB of a real file (whole lines), read into
 * memory before the timing, so the parse-only rate is of the very bytes
 * that `hogtrain convert` reads from disk. */
static int bench_file(const char *path, size_t mbytes, int runs)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = mbytes << 20;
    char *buf = malloc(cap + 64);
    if (!buf) {
        fclose(f);
        fprintf(stderr, "bench_parse: out of memory\n");
        return 1;
    }
    size_t len = fread(buf, 1, cap, f);
    fclose(f);
    const char *nl = len ? memrchr(buf, '\n', len) : NULL;
    if (!nl) {
        fprintf(stderr, "bench_parse: %s: no whole line in the first %zu MiB\n", path, mbytes);
        free(buf);
        return 1;
    }
    len = (size_t)(nl - buf) + 1;
    /* the format is detected as hogtrain detects it */
    char name[512];
    snprintf(name, sizeof(name), "%s (first %zu MiB, format detected)", path, mbytes);
    bench(name, HOG_FORMAT_AUTO, buf, len, runs);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--file") == 0) {
        if (argc < 4) {
            fprintf(stderr, "usage: bench_parse --file PATH MB [runs (5)] [threads (2)]\n");
            return 2;
        }
        int runs = argc > 4 ? atoi(argv[4]) : 5;
        max_threads = argc > 5 ? (unsigned)atoi(argv[5]) : 2;
        if (runs < 1 || runs > 16 || max_threads < 1 || max_threads > MAX_THREADS) {
            fprintf(stderr, "bench_parse: runs must be 1..16 and threads 1..%d\n", MAX_THREADS);
            return 2;
        }
        return bench_file(argv[2], (size_t)atol(argv[3]), runs);
    }
    size_t mbytes = argc > 1 ? (size_t)atol(argv[1]) : 256;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1 || runs > 16)
        runs = 5;
    if (argc > 3)
        max_threads = (unsigned)atoi(argv[3]);
    if (max_threads < 1 || max_threads > MAX_THREADS)
        max_threads = 2;
    size_t len;
    char *svm = gen_libsvm(mbytes << 20, &len);
    if (!svm)
        return 1;
    bench("libsvm (75 features per row, values 0.dddddd)", HOG_FORMAT_LIBSVM, svm, len, runs);
    free(svm);
    char *csv = gen_csv(mbytes << 20, &len);
    if (!csv)
        return 1;
    bench("numeric CSV (30 columns, values 0.dddddd)", HOG_FORMAT_CSV, csv, len, runs);
    free(csv);
    return read_sink == 42 ? 2 : 0;
}
