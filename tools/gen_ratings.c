/* gen_ratings.c: writes a seeded synthetic rating matrix drawn from known low-rank factors, as text triples or a binary ratings file (.hgr). */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: gen_ratings -u USERS -i ITEMS -k RANK -n RATINGS -o OUT [-s SEED]
 *                    [--noise S] [--mean M] [--bias-sd B] [--binary]
 *                    [-f FACTORS_OUT] [-j THREADS] [-q]
 *
 * The model:
 *   p_u, q_i  rank-k factor rows, every entry N(0, 1/sqrt(k)), so that
 *             p_u . q_i has variance 1 whatever k
 *   b_u, b_i  biases N(0, B^2) (B = 0.3 by default)
 *   rating    M + b_u + b_i + p_u . q_i + N(0, S^2), with (u, i) uniform over
 *             USERS x ITEMS (M = 3.5 and S = 0.1 by default; S is the RMSE
 *             a perfect model would have, the floor a recovery test aims at)
 * Users and items are named by their numbers, 0-based.
 *
 * Output: text lines "user item rating" (rating with %.6f), or with --binary
 * (or OUT ending in .hgr) hogtrain's binary ratings file, version 1 (the
 * layout is in src/etl/etl_ratings_hgr.c and the README), with the
 * names "0".."USERS-1" and "0".."ITEMS-1" in id order. -f writes the known
 * model: a line "mean M", then "u ID BIAS F1 .. Fk" for every user and
 * "i ID BIAS F1 .. Fk" for every item (%.9g).
 *
 * Reproducibility: the factors come from one stream per row and rating r
 * from its own stream, all seeded from (SEED, what, index) with splitmix64,
 * so the output is the same for any -j. Worker threads fill fixed chunks of
 * ratings in parallel, the main thread writes them in order; the output
 * goes to OUT.tmp.XXXXXX, fsynced and renamed to OUT at the end.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../src/util/util.h"
#include "tool_args.h"
#include "tool_rng.h"

#define MAX_THREADS 64
#define CHUNK 65536u /* ratings per chunk: a worker's unit, fixed so the output ignores -j */
#define TEXT_MAX 64u /* bytes of one text line at most: two 10-digit ids and a rating */

static const char *prog = "gen_ratings";

/* ===================================================================== *
 *  Random numbers: splitmix64 to seed, xoshiro256** to draw
 * ===================================================================== */
static inline uint32_t below(rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Stream keys: a tag per kind of draw, then the index. */
static uint64_t key(uint64_t seed, uint64_t tag, uint64_t index)
{
    return mix64(mix64(seed ^ tag) + index);
}

/* ===================================================================== *
 *  The model and the chunks
 * ===================================================================== */
typedef struct gen {
    uint32_t users, items, k;
    uint64_t n, seed;
    double noise, mean, bias_sd;
    int binary;
    float *p, *q, *bu, *bi; /* the known model */
} gen;

typedef struct triple {
    uint32_t user, item;
    float rating;
} triple;

typedef struct worker {
    pthread_t thread;
    const gen *g;
    uint64_t chunk;  /* which chunk to fill */
    char *buf;       /* CHUNK * TEXT_MAX bytes (text) or CHUNK triples */
    size_t len;
} worker;

static void build_rows(float *rows, float *bias, uint32_t n, uint32_t k, uint64_t seed, uint64_t tag, double bias_sd)
{
    double sd = pow((double)k, -0.25);
    for (uint32_t r = 0; r < n; r++) {
        rng g;
        rng_seed(&g, key(seed, tag, r));
        bias[r] = (float)(bias_sd * rng_normal(&g));
        for (uint32_t f = 0; f < k; f++)
            rows[(size_t)r * k + f] = (float)(sd * rng_normal(&g));
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    const gen *g = w->g;
    uint64_t first = w->chunk * CHUNK, end = first + CHUNK < g->n ? first + CHUNK : g->n;
    size_t len = 0;
    for (uint64_t r = first; r < end; r++) {
        rng s;
        rng_seed(&s, key(g->seed, 0x52415445u /* "RATE" */, r));
        uint32_t u = below(&s, g->users), i = below(&s, g->items);
        const float *p = g->p + (size_t)u * g->k, *q = g->q + (size_t)i * g->k;
        double v = g->mean + (double)g->bu[u] + (double)g->bi[i];
        for (uint32_t f = 0; f < g->k; f++)
            v += (double)p[f] * (double)q[f];
        v += g->noise * rng_normal(&s);
        if (g->binary) {
            triple t = {u, i, (float)v};
            memcpy(w->buf + len, &t, sizeof(t));
            len += sizeof(t);
        } else {
            len += (size_t)snprintf(w->buf + len, TEXT_MAX, "%u %u %.6f\n", u, i, v);
        }
    }
    w->len = len;
    return NULL;
}

/* ===================================================================== *
 *  The binary file: header, triples, then the two name tables
 * ===================================================================== */
typedef struct out_file {
    hog_atomic_file *f;
    uLong crc; /* of everything after the header */
} out_file;

/* Returns 0 or -errno. */
static int put(out_file *o, const void *buf, size_t len)
{
    o->crc = crc32(o->crc, buf, (uInt)len);
    return hog_atomic_write(o->f, buf, len);
}

/* Names "0".."n-1": offsets, names, zero padding to 4 bytes. *names_crc
 * continues over the names alone (for the fingerprint); *bytes gets their
 * size. Returns 0 or -errno. */
static int write_names(out_file *o, uint32_t n, uLong *names_crc, uint64_t *bytes)
{
    char *names = malloc((size_t)n * 11 + 4);
    uint32_t *off = malloc(((size_t)n + 1) * sizeof(uint32_t));
    if (!names || !off) {
        free(names);
        free(off);
        return -ENOMEM;
    }
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        off[i] = (uint32_t)len;
        len += (size_t)sprintf(names + len, "%u", i) + 1; /* with its NUL */
    }
    off[n] = (uint32_t)len;
    *names_crc = crc32(*names_crc, (const Bytef *)names, (uInt)len);
    *bytes = len;
    size_t padded = (len + 3) & ~(size_t)3;
    memset(names + len, 0, padded - len);
    int rc = put(o, off, ((size_t)n + 1) * sizeof(uint32_t));
    if (rc == 0)
        rc = put(o, names, padded);
    free(names);
    free(off);
    return rc;
}

static void put_u32(unsigned char *b, uint32_t v) { memcpy(b, &v, 4); }
static void put_u64(unsigned char *b, uint64_t v) { memcpy(b, &v, 8); }

/* Returns 0 or -errno. */
static int write_factors(const gen *g, hog_atomic_file *out)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "mean %.9g\n", g->mean);
    int rc = hog_atomic_write(out, line, (size_t)n);
    if (rc < 0)
        return rc;
    size_t cap = 64 + (size_t)g->k * 20, used;
    char *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    for (int side = 0; side < 2; side++) {
        uint32_t rows = side ? g->items : g->users;
        const float *f = side ? g->q : g->p, *b = side ? g->bi : g->bu;
        for (uint32_t r = 0; r < rows; r++) {
            used = (size_t)snprintf(buf, cap, "%c %u %.9g", side ? 'i' : 'u', r, (double)b[r]);
            for (uint32_t c = 0; c < g->k; c++)
                used += (size_t)snprintf(buf + used, cap - used, " %.9g", (double)f[(size_t)r * g->k + c]);
            buf[used++] = '\n';
            if ((rc = hog_atomic_write(out, buf, used)) < 0) {
                free(buf);
                return rc;
            }
        }
    }
    free(buf);
    return 0;
}

/* ===================================================================== *
 *  Command line
 * ===================================================================== */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s -u USERS -i ITEMS -k RANK -n RATINGS -o OUT [options]\n"
            "Writes a seeded synthetic rating matrix from known rank-k factors with biases.\n"
            "  -u USERS, -i ITEMS  users and items (named 0..N-1)\n"
            "  -k RANK             factors per row (1..1024)\n"
            "  -n RATINGS          ratings to draw, (user, item) uniform\n"
            "  -o OUT              output, written atomically; text \"user item rating\" lines,\n"
            "                      or a binary ratings file with --binary or a .hgr name\n"
            "  -s SEED             random seed (default 1); same seed, same bytes\n"
            "  --noise S           std. dev. of the Gaussian noise on each rating (default 0.1)\n"
            "  --mean M            global mean (default 3.5)\n"
            "  --bias-sd B         std. dev. of the user and item biases (default 0.3)\n"
            "  --binary            write a .hgr whatever OUT is called\n"
            "  -f FACTORS_OUT      write the known model (mean, biases, factors)\n"
            "  -j THREADS          worker threads (default: online CPUs, at most %d);\n"
            "                      the output does not depend on it\n"
            "  -q                  no summary line on stderr\n",
            prog, MAX_THREADS);
}

int main(int argc, char **argv)
{
    gen g = {.seed = 1, .noise = 0.1, .mean = 3.5, .bias_sd = 0.3};
    uint64_t users = 0, items = 0, k = 0, n = 0, threads = 0;
    const char *out_path = NULL, *f_path = NULL;
    int quiet = 0;
    const tool_opt opts[] = {
        {"-u", TOOL_U64, .to.u64 = &users, .umin = 1, .umax = UINT32_MAX - 2, .required = 1},
        {"-i", TOOL_U64, .to.u64 = &items, .umin = 1, .umax = UINT32_MAX - 2, .required = 1},
        {"-k", TOOL_U64, .to.u64 = &k, .umin = 1, .umax = 1024, .required = 1},
        {"-n", TOOL_U64, .to.u64 = &n, .umin = 1, .umax = 1ull << 40, .required = 1},
        {"-s", TOOL_U64, .to.u64 = &g.seed, .umax = UINT64_MAX},
        {"-j", TOOL_U64, .to.u64 = &threads, .umin = 1, .umax = MAX_THREADS},
        {"-o", TOOL_TEXT, .to.text = &out_path, .required = 1},
        {"-f", TOOL_TEXT, .to.text = &f_path},
        {"-q", TOOL_FLAG, .to.flag = &quiet},
        {"--noise", TOOL_DOUBLE, .to.real = &g.noise, .dmax = 1e6},
        {"--mean", TOOL_DOUBLE, .to.real = &g.mean, .dmin = -1e6, .dmax = 1e6},
        {"--bias-sd", TOOL_DOUBLE, .to.real = &g.bias_sd, .dmax = 1e6},
        {"--binary", TOOL_FLAG, .to.flag = &g.binary},
    };
    const int parsed = tool_args_parse(prog, argc, argv, opts, TOOL_NOPTS(opts), usage);
    if (parsed != TOOL_GO_ON)
        return parsed;
    size_t plen = strlen(out_path);
    if (plen > 4 && strcmp(out_path + plen - 4, ".hgr") == 0)
        g.binary = 1;
    g.users = (uint32_t)users;
    g.items = (uint32_t)items;
    g.k = (uint32_t)k;
    g.n = n;
    if (!threads) {
        long on = sysconf(_SC_NPROCESSORS_ONLN);
        threads = on < 1 ? 1 : on > MAX_THREADS ? MAX_THREADS : (uint64_t)on;
    }
    uint64_t chunks = (n + CHUNK - 1) / CHUNK;
    if (threads > chunks)
        threads = chunks;
    const unsigned nth = (unsigned)threads;

    const double t0 = now_seconds();
    int status = 1, rc;
    hog_atomic_file out = {.fd = -1}, fout = {.fd = -1};
    worker *ws = calloc(nth, sizeof(*ws));
    g.p = malloc((size_t)users * k * sizeof(float));
    g.q = malloc((size_t)items * k * sizeof(float));
    g.bu = malloc((size_t)users * sizeof(float));
    g.bi = malloc((size_t)items * sizeof(float));
    if (!ws || !g.p || !g.q || !g.bu || !g.bi) {
        fprintf(stderr, "%s: out of memory for the factors\n", prog);
        goto done;
    }
    build_rows(g.p, g.bu, g.users, g.k, g.seed, 0x55534552u /* "USER" */, g.bias_sd);
    build_rows(g.q, g.bi, g.items, g.k, g.seed, 0x4954454du /* "ITEM" */, g.bias_sd);
    size_t buf_bytes = g.binary ? CHUNK * sizeof(triple) : (size_t)CHUNK * TEXT_MAX;
    for (unsigned t = 0; t < nth; t++) {
        ws[t].g = &g;
        ws[t].buf = malloc(buf_bytes);
        if (!ws[t].buf) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto done;
        }
    }
    if (f_path) {
        if ((rc = hog_atomic_open(&fout, f_path)) < 0) {
            fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, f_path, strerror(-rc));
            goto done;
        }
        if ((rc = write_factors(&g, &fout)) < 0) {
            fprintf(stderr, "%s: %s: write: %s\n", prog, f_path, strerror(-rc));
            goto done;
        }
    }
    if ((rc = hog_atomic_open(&out, out_path)) < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    out_file o = {&out, crc32(0L, Z_NULL, 0)};
    unsigned char head[64] = {0};
    uLong triples_crc = crc32(0L, Z_NULL, 0);
    if (g.binary && (rc = hog_atomic_write(&out, head, sizeof(head))) < 0)
        goto write_failed;
    for (uint64_t next = 0; next < chunks;) {
        unsigned launched = 0;
        for (unsigned t = 0; t < nth && next < chunks; t++, next++) {
            ws[t].chunk = next;
            rc = pthread_create(&ws[t].thread, NULL, worker_main, &ws[t]);
            if (rc != 0) {
                fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(rc));
                for (unsigned j = 0; j < launched; j++)
                    pthread_join(ws[j].thread, NULL);
                goto done;
            }
            launched++;
        }
        rc = 0;
        for (unsigned t = 0; t < launched; t++) {
            pthread_join(ws[t].thread, NULL);
            if (rc < 0)
                continue;
            if (g.binary) {
                triples_crc = crc32(triples_crc, (const Bytef *)ws[t].buf, (uInt)ws[t].len);
                rc = put(&o, ws[t].buf, ws[t].len);
            } else {
                rc = hog_atomic_write(&out, ws[t].buf, ws[t].len);
            }
        }
        if (rc < 0)
            goto write_failed;
    }
    if (g.binary) {
        uLong names_crc = crc32(0L, Z_NULL, 0);
        uint64_t ubytes, ibytes;
        if ((rc = write_names(&o, g.users, &names_crc, &ubytes)) < 0 ||
            (rc = write_names(&o, g.items, &names_crc, &ibytes)) < 0)
            goto write_failed;
        memcpy(head, "HOGRATE", 8);
        put_u32(head + 8, 1);
        put_u32(head + 12, 1); /* has ratings */
        put_u64(head + 16, n);
        put_u32(head + 24, g.users);
        put_u32(head + 28, g.items);
        put_u64(head + 32, ubytes);
        put_u64(head + 40, ibytes);
        put_u64(head + 48, (uint64_t)triples_crc << 32 | names_crc);
        put_u32(head + 56, (uint32_t)o.crc);
        put_u32(head + 60, (uint32_t)crc32(crc32(0L, Z_NULL, 0), head, 60));
        if ((rc = hog_atomic_pwrite(&out, head, sizeof(head), 0)) < 0)
            goto write_failed;
    }
    uint64_t bytes = out.end;
    if (f_path && (rc = hog_atomic_commit(&fout)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, f_path, strerror(-rc));
        goto done;
    }
    if ((rc = hog_atomic_commit(&out)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    if (!quiet)
        fprintf(stderr, "%s: %s: %llu ratings, %u users, %u items, rank %u, noise %g, %.1f MB in %.2f s\n", prog,
                out_path, (unsigned long long)n, g.users, g.items, g.k, g.noise, (double)bytes / 1e6,
                now_seconds() - t0);
    status = 0;
    goto done;
write_failed:
    fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
done:
    hog_atomic_abort(&out); /* after a commit: nothing left to remove */
    hog_atomic_abort(&fout);
    if (ws)
        for (unsigned t = 0; t < nth; t++)
            free(ws[t].buf);
    free(ws);
    free(g.p);
    free(g.q);
    free(g.bu);
    free(g.bi);
    return status;
}
