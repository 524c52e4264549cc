/* gen_sparse.c: writes seeded synthetic sparse binary-classification data (libsvm text) drawn from a known linear model. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: gen_sparse -n ROWS -d FEATURES -k NNZ_PER_ROW -o OUT.svm [-s SEED]
 *                   [--noise P] [--sigma S] [--zipf S] [-w WEIGHTS_OUT] [-j THREADS] [-q]
 *
 * The data, row by row:
 *   features  k distinct indices in [1, d], drawn from a Zipf law
 *             P(j) ~ j^-zipf (default 1.1, like word frequencies in text:
 *             feature 1 is the most common), redrawing repeats; written in
 *             increasing order. (If k is a large share of d and repeats keep
 *             coming, the rest are taken as the next unused indices after a
 *             random one, so a row always has exactly k.)
 *   values    tf-idf-like and positive: idf(j) = 1 + ln(1 / P(j)), scaled so
 *             that the row has unit L2 norm, rounded to 6 decimals.
 *   label     1 if w*.x + N(0, sigma^2) > 0 (sigma 0.1 by default), else -1,
 *             then flipped with probability P (--noise, default 0). The
 *             margin is taken over the values as written.
 *   w*        one N(0, 1) weight per feature, no intercept; -w writes them as
 *             "INDEX WEIGHT" lines, INDEX 1..d, WEIGHT printed with %.9g.
 *
 * Reproducibility: the weights come from one stream and row i from its own
 * xoshiro256** stream, both seeded from (SEED, i) with splitmix64. The output
 * is the same for any -j, and the first N rows of a larger set are the set of
 * N rows. Values depend only on IEEE double arithmetic and glibc's log, pow,
 * sqrt and cos.
 *
 * Speed: alias tables (Walker/Vose) make each Zipf draw O(1); worker
 * threads fill chunks of rows in parallel while the main thread writes the
 * previous batch, in order. Output goes to OUT.tmp.XXXXXX, which is fsync'ed
 * and renamed to OUT at the end, so OUT is either absent or complete.
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

#include "../src/util/util.h"
#include "tool_args.h"
#include "tool_rng.h"

#define MAX_K (1u << 20)
#define MAX_THREADS 64
#define CHUNK_BYTES (4u << 20) /* output per worker per batch */
#define VALUE_SCALE 1000000u   /* values are written with 6 decimals */
#define DRAW_BATCH 4096u       /* most Zipf draws made at once */
#define HEAD_FEATURES (1u << 15) /* features in the cache-resident sampler table */

static const char *prog = "gen_sparse";

/* ===================================================================== *
 *  Random numbers: splitmix64 to seed, xoshiro256** to draw
 * ===================================================================== */
/* Uniform in [0, n) for n <= 2^32 (multiply-shift; bias below n / 2^32). */
static inline uint32_t below32(uint32_t bits, uint64_t n)
{
    return (uint32_t)(((uint64_t)bits * n) >> 32);
}

/* Stream keys: rows use (seed, row); the weights a separate constant. */
static uint64_t row_key(uint64_t seed, uint64_t row)
{
    return mix64(seed ^ 0x524F5753u /* "ROWS" */) ^ row;
}

static uint64_t weight_key(uint64_t seed)
{
    return mix64(mix64(seed ^ 0x57454947u /* "WEIG" */) + 0x9E3779B97F4A7C15u);
}

/* ===================================================================== *
 *  The model: Zipf alias table, idf and true weights per feature
 * ===================================================================== */
typedef struct alias_cell {
    uint32_t threshold; /* keep this column if 32 random bits fall below */
    uint32_t alias;     /* otherwise take this index (0-based) */
} alias_cell;

typedef struct feature {
    float idf;    /* 1 + ln(1 / P(j)) */
    float weight; /* w*_j */
} feature;

typedef struct gen {
    uint64_t rows;
    uint32_t d, k;
    uint64_t seed;
    double noise, sigma, zipf;
    /* Zipf sampler. The head table covers features 1..head_n and, when
     * d > head_n, one more column standing for all the others, which the
     * tail table covers (features head_n + 1..d). The head is small enough
     * to stay in cache and takes most draws; only the rest touch the big
     * table, whose misses are what bound the speed with a large d. */
    uint32_t head_n, head_cols, tail_n;
    alias_cell *head, *tail;
    feature *feat; /* d entries; index 0 is feature 1 */
} gen;

/* Fills cells[0..n) with a Walker alias table (Vose's method) for weights
 * q[0..n) (not necessarily normalised; q is used as scratch). work holds n. */
static void build_alias(double *q, uint32_t n, alias_cell *cells, uint32_t *work)
{
    double sum = 0.0;
    for (uint32_t i = n; i-- > 0;)
        sum += q[i];
    /* Columns below 1 ("small") go to the front of work, the others ("large")
     * to the back; each small column is topped up by a large one. */
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        q[i] = q[i] * (double)n / sum; /* mean 1 */
        if (q[i] < 1.0)
            work[ns++] = i;
        else
            work[n - 1 - nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        uint32_t s = work[--ns];
        uint32_t l = work[n - nl]; /* top of the large stack */
        cells[s].threshold = (uint32_t)(q[s] * 4294967296.0);
        cells[s].alias = l;
        q[l] = (q[l] + q[s]) - 1.0;
        if (q[l] < 1.0) {
            nl--;
            work[ns++] = l;
        }
    }
    /* What is left is 1 up to rounding: always keep the column (the alias is
     * the column itself, so the one 32-bit value above the threshold agrees). */
    while (nl > 0) {
        uint32_t l = work[n - nl--];
        cells[l].threshold = UINT32_MAX;
        cells[l].alias = l;
    }
    while (ns > 0) {
        uint32_t s = work[--ns];
        cells[s].threshold = UINT32_MAX;
        cells[s].alias = s;
    }
}

/* Builds the sampler of a Zipf(s) law over [1, d], the idf of each feature
 * and the true weights. Returns 0 or -1 (out of memory). */
static int build_model(gen *g)
{
    const uint32_t d = g->d;
    g->head_n = d > HEAD_FEATURES ? HEAD_FEATURES : d;
    g->tail_n = d - g->head_n;
    g->head_cols = g->head_n + (g->tail_n > 0);
    const uint32_t scratch_n = g->head_cols > g->tail_n ? g->head_cols : g->tail_n;
    double *q = malloc((size_t)scratch_n * sizeof(*q));
    uint32_t *work = malloc((size_t)scratch_n * sizeof(*work));
    g->head = malloc((size_t)g->head_cols * sizeof(*g->head));
    g->tail = g->tail_n ? malloc((size_t)g->tail_n * sizeof(*g->tail)) : NULL;
    g->feat = malloc((size_t)d * sizeof(*g->feat));
    if (!q || !work || !g->head || (g->tail_n && !g->tail) || !g->feat) {
        free(q);
        free(work);
        return -1;
    }

    /* The tail first, smallest terms first, for an accurate sum. */
    double tail_mass = 0.0;
    for (uint32_t i = g->tail_n; i-- > 0;) {
        q[i] = pow((double)g->head_n + 1.0 + (double)i, -g->zipf);
        tail_mass += q[i];
    }
    if (g->tail_n)
        build_alias(q, g->tail_n, g->tail, work);
    double h = tail_mass;
    for (uint32_t i = g->head_n; i-- > 0;) {
        q[i] = pow((double)i + 1.0, -g->zipf);
        h += q[i];
    }
    if (g->tail_n)
        q[g->head_n] = tail_mass;
    build_alias(q, g->head_cols, g->head, work);
    free(q);
    free(work);

    const double log_h = log(h);
    for (uint32_t i = 0; i < d; i++)
        g->feat[i].idf = (float)(1.0 + log_h + g->zipf * log((double)i + 1.0));
    rng r;
    rng_seed(&r, weight_key(g->seed));
    for (uint32_t i = 0; i < d; i++)
        g->feat[i].weight = (float)rng_normal(&r);
    return 0;
}

/* n Zipf draws into out, each a feature index in [1, d]. The loads of a
 * batch do not depend on each other, so the CPU overlaps their cache misses. */
static void draw_features(const gen *g, rng *r, uint32_t *out, uint32_t *coin, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t bits = rng_next(r);
        out[i] = below32((uint32_t)bits, g->head_cols);
        coin[i] = (uint32_t)(bits >> 32);
    }
    for (uint32_t i = 0; i < n; i++) {
        const alias_cell c = g->head[out[i]];
        out[i] = coin[i] < c.threshold ? out[i] : c.alias;
    }
    /* The draws that fell on the tail column, gathered first so that their
     * table loads (cache misses, most of them) run without branches. coin is
     * free again and holds their positions. */
    uint32_t *pos = coin, nt = 0;
    for (uint32_t i = 0; i < n; i++) {
        pos[nt] = i;
        nt += out[i] == g->head_n; /* never true when tail_n == 0 */
        out[i] += 1;
    }
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t bits = rng_next(r);
        uint32_t col = below32((uint32_t)bits, g->tail_n);
        const alias_cell c = g->tail[col];
        const uint32_t keep = 0u - (uint32_t)((uint32_t)(bits >> 32) < c.threshold);
        out[pos[t]] = g->head_n + 1 + ((col & keep) | (c.alias & ~keep));
    }
}

/* ===================================================================== *
 *  Rows
 * ===================================================================== */
/* Per-worker scratch for one row. The row's indices are kept in two sets: a
 * bitmap over the head features (1..head_n), which also yields them in order,
 * and a hash set for the rest, which are few unless the law is flat. */
typedef struct scratch {
    uint64_t head_bits[HEAD_FEATURES / 64];
    uint64_t head_words[HEAD_FEATURES / 64 / 64]; /* which head_bits words are non-zero */
    uint32_t *set;  /* open-addressing set of tail indices; 0 = empty */
    uint32_t set_bits;
    int set_used;   /* something to clear in set */
    uint32_t *tail; /* the row's tail indices, in draw order */
    uint32_t n_tail;
    uint32_t *idx;  /* the row's indices, k of them, increasing */
    uint32_t *val;  /* the row's values times VALUE_SCALE */
    uint32_t *draw; /* a batch of draws, DRAW_BATCH of them */
    uint32_t *coin;
} scratch;

/* Adds j to the tail set; returns 1 if it was new, 0 if already there. */
static inline int set_add(scratch *sc, uint32_t j)
{
    const uint32_t mask = (1u << sc->set_bits) - 1;
    uint32_t h = (j * 0x9E3779B1u) >> (32 - sc->set_bits);
    sc->set_used = 1;
    for (;;) {
        if (sc->set[h] == 0) {
            sc->set[h] = j;
            return 1;
        }
        if (sc->set[h] == j)
            return 0;
        h = (h + 1) & mask;
    }
}

/* Adds feature j (1-based) to the row; returns 1 if it was new. */
static inline uint32_t row_add(scratch *sc, uint32_t head_n, uint32_t j)
{
    if (j <= head_n) {
        const uint32_t b = j - 1, w = b >> 6;
        const uint64_t bit = (uint64_t)1 << (b & 63);
        const uint32_t fresh = !(sc->head_bits[w] & bit);
        sc->head_bits[w] |= bit;
        sc->head_words[w >> 6] |= (uint64_t)1 << (w & 63);
        return fresh;
    }
    if (!set_add(sc, j))
        return 0;
    sc->tail[sc->n_tail++] = j;
    return 1;
}

static void sort_u32(uint32_t *a, size_t n)
{
    /* Quicksort with a median-of-three pivot; insertion sort for short runs.
     * Recursing into the smaller half bounds the depth by log2(n). */
    while (n > 24) {
        uint32_t x = a[0], y = a[n / 2], z = a[n - 1];
        uint32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i >= j)
                break;
            uint32_t t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        size_t left = j + 1; /* a[0..j] <= pivot <= a[j+1..n) */
        if (left < n - left) {
            sort_u32(a, left);
            a += left;
            n -= left;
        } else {
            sort_u32(a + left, n - left);
            n = left;
        }
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t v = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = v;
    }
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Appends the decimal digits of v at p; returns the new end. */
static inline char *put_u32(char *p, uint32_t v)
{
    uint32_t n = 1;
    for (uint32_t t = v; t >= 10; t /= 10)
        n++;
    char *end = p + n, *q = end;
    while (v >= 100) {
        uint32_t r = v % 100;
        v /= 100;
        q -= 2;
        q[0] = digit_pairs[2 * r];
        q[1] = digit_pairs[2 * r + 1];
    }
    if (v >= 10) {
        q[-2] = digit_pairs[2 * v];
        q[-1] = digit_pairs[2 * v + 1];
    } else {
        q[-1] = (char)('0' + v);
    }
    return end;
}

/* Appends v / VALUE_SCALE (0 < v <= VALUE_SCALE) with up to 6 decimals and no
 * trailing zeros: "1", "0.5", "0.012345". */
static inline char *put_value(char *p, uint32_t v)
{
    if (v >= VALUE_SCALE) {
        *p++ = '1';
        return p;
    }
    /* Written in place (the buffer has room for all six decimals), then the
     * end pulled back over the trailing zeros. */
    p[0] = '0';
    p[1] = '.';
    memcpy(p + 2, digit_pairs + 2 * (v / 10000), 2);
    memcpy(p + 4, digit_pairs + 2 * (v / 100 % 100), 2);
    memcpy(p + 6, digit_pairs + 2 * (v % 100), 2);
    char *end = p + 8;
    while (end[-1] == '0')
        end--;
    return end;
}

/* The most bytes one row can take. */
static size_t row_max_bytes(uint32_t k)
{
    return 3 + (size_t)k * (1 + 10 + 1 + 8) + 1;
}

/* Generates row `row` into out; returns the bytes written. *positive is set
 * to 1 for a positive label. */
static size_t gen_row(const gen *g, uint64_t row, scratch *sc, char *out, int *positive)
{
    rng r;
    rng_seed(&r, row_key(g->seed, row));
    const uint32_t k = g->k;

    if (sc->set_used) {
        memset(sc->set, 0, sizeof(*sc->set) << sc->set_bits);
        sc->set_used = 0;
    }
    sc->n_tail = 0;
    uint32_t n = 0;
    uint64_t tries = 0;
    const uint64_t max_tries = 16 * (uint64_t)k + 64;
    /* Draw in batches of what is still missing plus a half for repeats; the
     * extra draws of the last batch are dropped. */
    while (n < k && tries < max_tries) {
        uint32_t want = k - n + (k - n) / 2 + 4;
        if (want > DRAW_BATCH)
            want = DRAW_BATCH;
        draw_features(g, &r, sc->draw, sc->coin, want);
        tries += want;
        for (uint32_t i = 0; i < want && n < k; i++)
            n += row_add(sc, g->head_n, sc->draw[i]);
    }
    if (n < k) {
        /* k is a large share of d: take the next unused indices. */
        uint32_t j = 1 + below32((uint32_t)rng_next(&r), g->d);
        while (n < k) {
            n += row_add(sc, g->head_n, j);
            j = j == g->d ? 1 : j + 1;
        }
    }
    /* In order: the head from its bitmap (clearing it for the next row), then
     * the tail, whose indices are all larger. */
    uint32_t m = 0;
    for (uint32_t s = 0; s < HEAD_FEATURES / 64 / 64; s++) {
        uint64_t words = sc->head_words[s];
        sc->head_words[s] = 0;
        while (words) {
            const uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(words);
            words &= words - 1;
            uint64_t bits = sc->head_bits[w];
            sc->head_bits[w] = 0;
            while (bits) {
                sc->idx[m++] = w * 64 + (uint32_t)__builtin_ctzll(bits) + 1;
                bits &= bits - 1;
            }
        }
    }
    sort_u32(sc->tail, sc->n_tail);
    memcpy(sc->idx + m, sc->tail, sc->n_tail * sizeof(*sc->tail));

    double sumsq = 0.0;
    for (uint32_t i = 0; i < k; i++) {
        double v = (double)g->feat[sc->idx[i] - 1].idf;
        sumsq += v * v;
    }
    const double scale = (double)VALUE_SCALE / sqrt(sumsq);
    double margin = 0.0;
    for (uint32_t i = 0; i < k; i++) {
        const feature f = g->feat[sc->idx[i] - 1];
        uint32_t q = (uint32_t)((double)f.idf * scale + 0.5);
        if (q < 1)
            q = 1;
        if (q > VALUE_SCALE)
            q = VALUE_SCALE;
        sc->val[i] = q;
        margin += (double)f.weight * ((double)q / (double)VALUE_SCALE);
    }
    /* Always draw both, so --noise and --sigma change labels only. */
    double eps = rng_normal(&r);
    double flip = rng_uniform(&r);
    int pos = margin + g->sigma * eps > 0.0;
    if (flip < g->noise)
        pos = !pos;
    *positive = pos;

    char *p = out;
    if (pos) {
        *p++ = '1';
    } else {
        *p++ = '-';
        *p++ = '1';
    }
    for (uint32_t i = 0; i < k; i++) {
        *p++ = ' ';
        p = put_u32(p, sc->idx[i]);
        *p++ = ':';
        p = put_value(p, sc->val[i]);
    }
    *p++ = '\n';
    return (size_t)(p - out);
}

/* ===================================================================== *
 *  Workers: each fills one chunk of rows per batch
 * ===================================================================== */
typedef struct worker {
    pthread_t thread;
    const gen *g;
    scratch sc;
    char *buf[2]; /* double-buffered: one being filled, one being written */
    size_t len[2];
    uint64_t positives;
    uint64_t first, end; /* this batch's rows */
    int which;           /* which buffer this batch fills */
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    char *p = w->buf[w->which];
    uint64_t pos = 0;
    for (uint64_t row = w->first; row < w->end; row++) {
        int positive;
        p += gen_row(w->g, row, &w->sc, p, &positive);
        pos += (uint64_t)positive;
    }
    w->len[w->which] = (size_t)(p - w->buf[w->which]);
    w->positives += pos;
    return NULL;
}

/* ===================================================================== *
 *  Output files
 * ===================================================================== */

/* Writes "INDEX WEIGHT" lines to f. Returns 0 or -errno. */
static int write_weights(const gen *g, hog_atomic_file *f)
{
    char buf[1 << 16];
    size_t used = 0;
    for (uint32_t i = 0; i < g->d; i++) {
        if (sizeof(buf) - used < 64) {
            int rc = hog_atomic_write(f, buf, used);
            if (rc < 0)
                return rc;
            used = 0;
        }
        used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%u %.9g\n", i + 1,
                                 (double)g->feat[i].weight);
    }
    return hog_atomic_write(f, buf, used);
}

/* ===================================================================== *
 *  Command line
 * ===================================================================== */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s -n ROWS -d FEATURES -k NNZ_PER_ROW -o OUT.svm [options]\n"
            "Writes seeded synthetic sparse binary-classification data in libsvm text,\n"
            "labels 1/-1 from a known linear model.\n"
            "  -n ROWS          rows to write (at least 1)\n"
            "  -d FEATURES      feature indices are 1..FEATURES (at most 4294967295)\n"
            "  -k NNZ           distinct features per row (1..min(FEATURES, %u))\n"
            "  -o OUT.svm       output, written atomically\n"
            "  -s SEED          random seed (default 1); same seed, same bytes\n"
            "  --noise P        flip each label with probability P (default 0)\n"
            "  --sigma S        std. dev. of Gaussian noise added to the margin (default 0.1)\n"
            "  --zipf S         exponent of the power law over features (default 1.1)\n"
            "  -w WEIGHTS_OUT   write the true weights, \"INDEX WEIGHT\" per line\n"
            "  -j THREADS       worker threads (default: online CPUs, at most %d);\n"
            "                   the output does not depend on it\n"
            "  -q               no summary line on stderr\n",
            prog, MAX_K, MAX_THREADS);
}

int main(int argc, char **argv)
{
    gen g = {.seed = 1, .noise = 0.0, .sigma = 0.1, .zipf = 1.1};
    uint64_t rows = 0, d = 0, k = 0, threads = 0;
    const char *out_path = NULL, *w_path = NULL;
    int quiet = 0;
    const tool_opt opts[] = {
        {"-n", TOOL_U64, .to.u64 = &rows, .umin = 1, .umax = UINT64_MAX, .required = 1},
        {"-d", TOOL_U64, .to.u64 = &d, .umin = 1, .umax = UINT32_MAX, .required = 1},
        {"-k", TOOL_U64, .to.u64 = &k, .umin = 1, .umax = MAX_K, .required = 1},
        {"-s", TOOL_U64, .to.u64 = &g.seed, .umax = UINT64_MAX},
        {"-j", TOOL_U64, .to.u64 = &threads, .umin = 1, .umax = MAX_THREADS},
        {"-o", TOOL_TEXT, .to.text = &out_path, .required = 1},
        {"-w", TOOL_TEXT, .to.text = &w_path},
        {"-q", TOOL_FLAG, .to.flag = &quiet},
        {"--noise", TOOL_DOUBLE, .to.real = &g.noise, .dmax = 1.0},
        {"--sigma", TOOL_DOUBLE, .to.real = &g.sigma, .dmax = 1e9},
        {"--zipf", TOOL_DOUBLE, .to.real = &g.zipf, .dmax = 100.0},
    };
    const int parsed = tool_args_parse(prog, argc, argv, opts, TOOL_NOPTS(opts), usage);
    if (parsed != TOOL_GO_ON)
        return parsed;
    if (k > d) {
        fprintf(stderr, "%s: -k %llu is more than -d %llu: a row cannot hold more distinct "
                        "features than there are\n",
                prog, (unsigned long long)k, (unsigned long long)d);
        return 2;
    }
    g.rows = rows;
    g.d = (uint32_t)d;
    g.k = (uint32_t)k;
    if (!threads) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (uint64_t)n;
    }
    const size_t row_max = row_max_bytes(g.k);
    uint64_t chunk_rows = CHUNK_BYTES / row_max;
    if (chunk_rows < 1)
        chunk_rows = 1;
    /* No more workers than chunks: small sets need no threads. */
    const uint64_t chunks = rows / chunk_rows + (rows % chunk_rows != 0);
    if (threads > chunks)
        threads = chunks;
    const unsigned nthreads = (unsigned)threads;

    const double t0 = now_seconds();
    int status = 1;
    int rc;
    hog_atomic_file out = {.fd = -1}, wout = {.fd = -1};
    worker *ws = calloc(nthreads, sizeof(*ws));
    if (!ws || build_model(&g) != 0) {
        fprintf(stderr, "%s: out of memory for %llu features\n", prog, (unsigned long long)d);
        goto done;
    }
    uint32_t set_bits = 4;
    while ((1u << set_bits) < 2 * g.k)
        set_bits++;
    for (unsigned t = 0; t < nthreads; t++) {
        worker *w = &ws[t];
        w->g = &g;
        w->sc.set_bits = set_bits;
        w->sc.set = calloc((size_t)1 << set_bits, sizeof(uint32_t));
        w->sc.tail = malloc((size_t)g.k * sizeof(uint32_t));
        w->sc.idx = malloc((size_t)g.k * sizeof(uint32_t));
        w->sc.val = malloc((size_t)g.k * sizeof(uint32_t));
        w->sc.draw = malloc(DRAW_BATCH * sizeof(uint32_t));
        w->sc.coin = malloc(DRAW_BATCH * sizeof(uint32_t));
        w->buf[0] = malloc(chunk_rows * row_max);
        w->buf[1] = malloc(chunk_rows * row_max);
        if (!w->sc.set || !w->sc.tail || !w->sc.idx || !w->sc.val || !w->sc.draw || !w->sc.coin ||
            !w->buf[0] || !w->buf[1]) {
            fprintf(stderr, "%s: out of memory\n", prog);
            goto done;
        }
    }

    if (w_path) {
        if ((rc = hog_atomic_open(&wout, w_path)) < 0) {
            fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, w_path, strerror(-rc));
            goto done;
        }
        if ((rc = write_weights(&g, &wout)) < 0) {
            fprintf(stderr, "%s: %s: write: %s\n", prog, w_path, strerror(-rc));
            goto done;
        }
    }
    if ((rc = hog_atomic_open(&out, out_path)) < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }

    /* Batch b: worker t fills rows of chunk b * nthreads + t into buf[b % 2]
     * while the main thread writes batch b - 1 from the other buffers. */
    uint64_t next_row = 0;
    int have_prev = 0, which = 0;
    for (;;) {
        unsigned launched = 0;
        int failed = 0;
        for (unsigned t = 0; t < nthreads && next_row < rows; t++) {
            worker *w = &ws[t];
            w->first = next_row;
            w->end = rows - next_row < chunk_rows ? rows : next_row + chunk_rows;
            w->which = which;
            next_row = w->end;
            rc = pthread_create(&w->thread, NULL, worker_main, w);
            if (rc != 0) {
                fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(rc));
                failed = 1;
                break;
            }
            launched++;
        }
        int write_failed = 0;
        if (have_prev && !failed) {
            for (unsigned t = 0; t < nthreads && !write_failed; t++) {
                worker *w = &ws[t];
                if (w->len[!which] && (rc = hog_atomic_write(&out, w->buf[!which], w->len[!which])) < 0) {
                    fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
                    write_failed = 1;
                }
                w->len[!which] = 0;
            }
        }
        for (unsigned t = 0; t < launched; t++)
            pthread_join(ws[t].thread, NULL);
        if (failed || write_failed)
            goto done;
        if (!launched)
            break;
        have_prev = 1;
        which = !which;
    }

    uint64_t positives = 0;
    for (unsigned t = 0; t < nthreads; t++)
        positives += ws[t].positives;
    uint64_t bytes = out.end;
    if (w_path && (rc = hog_atomic_commit(&wout)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, w_path, strerror(-rc));
        goto done;
    }
    if ((rc = hog_atomic_commit(&out)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    if (!quiet)
        fprintf(stderr,
                "%s: %s: %llu rows, %u features, %u per row, %.1f%% positive, %.1f MB in %.2f s\n",
                prog, out_path, (unsigned long long)rows, g.d, g.k,
                100.0 * (double)positives / (double)rows, (double)bytes / 1e6,
                now_seconds() - t0);
    status = 0;

done:
    hog_atomic_abort(&out); /* after a commit: nothing left to remove */
    hog_atomic_abort(&wout);
    if (ws) {
        for (unsigned t = 0; t < nthreads; t++) {
            free(ws[t].sc.set);
            free(ws[t].sc.tail);
            free(ws[t].sc.idx);
            free(ws[t].sc.val);
            free(ws[t].sc.draw);
            free(ws[t].sc.coin);
            free(ws[t].buf[0]);
            free(ws[t].buf[1]);
        }
    }
    free(ws);
    free(g.head);
    free(g.tail);
    free(g.feat);
    return status;
}
