/* gen_dense.c: writes seeded synthetic dense classification data (CSV or libsvm text), binary or multiclass, drawn from a known linear model. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: gen_dense -n ROWS -d FEATURES -o OUT [-c CLASSES] [-s SEED]
 *                  [--format csv|libsvm] [--sigma S] [--noise P] [-w WEIGHTS_OUT] [-q]
 *
 * The data, row by row:
 *   features  every one of the d features, x_j ~ N(0, 1), rounded to 4
 *             decimals (so the file says exactly what the margin used).
 *   model     W*, one N(0, 1) weight per (class, feature); binary data
 *             (-c 2, the default) has one weight vector.
 *   margin    m_k = W*_k . x / sqrt(d) + N(0, sigma^2): the scale keeps the
 *             margins near N(0, 1) whatever d is, so sigma (default 0.1)
 *             means the same noise for every shape.
 *   label     binary: 1 if m > 0 else -1; multiclass: argmax_k m_k, written
 *             as 0..c-1. Then, with probability P (--noise), replaced by a
 *             uniformly drawn label (binary: flipped).
 *   output    csv: "LABEL,x1,...,xd", no header (hogtrain's CSV default:
 *             label in column 0); libsvm: "LABEL 1:x1 ... d:xd".
 *   weights   -w writes W* as "CLASS INDEX WEIGHT" lines (INDEX 1..d).
 *
 * Reproducibility: row i draws from its own stream seeded from (SEED, i),
 * the weights from a stream of their own, so the first N rows of a larger
 * set are the set of N rows. Output is written atomically (temporary file,
 * fsync, rename), so OUT is either absent or complete.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/util.h"
#include "tool_args.h"

#define MAX_CLASSES 1024u
#define MAX_FEATURES (1u << 24)
#define OUT_BUFFER (1u << 22)

static const char *prog = "gen_dense";

typedef struct gen {
    uint64_t rows, seed;
    uint32_t d, classes; /* classes: 2 for binary */
    double sigma, noise;
    int libsvm;
    float *w; /* outputs x d, outputs = 1 (binary) or classes */
} gen;

static uint32_t gen_outputs(const gen *g)
{
    return g->classes == 2 ? 1 : g->classes;
}

/* Uniform in [0, 1). */
static double uniform(hog_rng *r)
{
    return (double)(hog_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Standard normal (Box-Muller, one of the pair). */
static double normal(hog_rng *r)
{
    double u1 = 1.0 - uniform(r); /* (0, 1]: log stays finite */
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * uniform(r));
}

/* Buffered output into the atomic file. */
typedef struct out {
    hog_atomic_file f;
    char *buf;
    size_t used;
} out;

static int out_flush(out *o)
{
    int rc = hog_atomic_write(&o->f, o->buf, o->used);
    o->used = 0;
    return rc;
}

/* Room for n more bytes. Returns 0 or -errno. */
static int out_room(out *o, size_t n)
{
    return OUT_BUFFER - o->used < n ? out_flush(o) : 0;
}

/* Appends x (a multiple of 1e-4, |x| < 1e6) with up to 4 decimals and no trailing zeros. */
static void put_value(out *o, long q)
{
    char *p = o->buf + o->used;
    if (q < 0) {
        *p++ = '-';
        q = -q;
    }
    p += sprintf(p, "%ld", q / 10000);
    long frac = q % 10000;
    if (frac) {
        char digits[24];
        snprintf(digits, sizeof(digits), "%04ld", frac);
        int n = 4;
        while (digits[n - 1] == '0')
            n--;
        *p++ = '.';
        memcpy(p, digits, (size_t)n);
        p += n;
    }
    o->used = (size_t)(p - o->buf);
}

/* Writes row `row`: draws x, computes the label, appends the line. Returns
 * the label (0..classes-1, or 0/1 for negative/positive binary) or -errno. */
static int gen_row(const gen *g, uint64_t row, long *q, double *margin, out *o)
{
    hog_rng r = {hog_mix64(g->seed ^ 0x524f5753u /* "ROWS" */) ^ hog_mix64(row)};
    const uint32_t outputs = gen_outputs(g);
    for (uint32_t j = 0; j < g->d; j++)
        q[j] = lround(normal(&r) * 1e4);
    const double scale = 1.0 / sqrt((double)g->d);
    for (uint32_t k = 0; k < outputs; k++) {
        const float *w = g->w + (size_t)k * g->d;
        double m = 0.0;
        for (uint32_t j = 0; j < g->d; j++)
            m += (double)w[j] * ((double)q[j] * 1e-4);
        margin[k] = m * scale + g->sigma * normal(&r);
    }
    /* Both drawn for every row, so --noise changes labels only. */
    const double flip = uniform(&r);
    const uint32_t other = hog_rng_below(&r, g->classes);
    uint32_t label = 0;
    if (outputs == 1) {
        label = margin[0] > 0.0;
    } else {
        for (uint32_t k = 1; k < outputs; k++)
            if (margin[k] > margin[label])
                label = k;
    }
    if (flip < g->noise)
        label = outputs == 1 ? !label : other;

    /* 1 + 12 + 2 bytes per value at most ("-" digits "." 4 digits, the
     * separator and a libsvm index of up to 8 digits and ':'). */
    int rc = out_room(o, 16 + (size_t)g->d * 24);
    if (rc < 0)
        return rc;
    if (outputs == 1)
        o->used += (size_t)sprintf(o->buf + o->used, "%s", label ? "1" : "-1");
    else
        o->used += (size_t)sprintf(o->buf + o->used, "%u", label);
    for (uint32_t j = 0; j < g->d; j++) {
        if (g->libsvm)
            o->used += (size_t)sprintf(o->buf + o->used, " %u:", j + 1);
        else
            o->buf[o->used++] = ',';
        put_value(o, q[j]);
    }
    o->buf[o->used++] = '\n';
    return (int)label;
}

static int write_weights(const gen *g, const char *path)
{
    out o = {.buf = malloc(OUT_BUFFER)};
    if (!o.buf)
        return -ENOMEM;
    int rc = hog_atomic_open(&o.f, path);
    const uint32_t outputs = gen_outputs(g);
    for (uint32_t k = 0; k < outputs && rc == 0; k++)
        for (uint32_t j = 0; j < g->d && rc == 0; j++) {
            rc = out_room(&o, 64);
            if (rc == 0)
                o.used += (size_t)sprintf(o.buf + o.used, "%u %u %.9g\n", k, j + 1,
                                          (double)g->w[(size_t)k * g->d + j]);
        }
    if (rc == 0)
        rc = out_flush(&o);
    rc = rc == 0 ? hog_atomic_commit(&o.f) : (hog_atomic_abort(&o.f), rc);
    free(o.buf);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s -n ROWS -d FEATURES -o OUT [options]\n"
            "Writes seeded synthetic dense classification data from a known linear model.\n"
            "  -n ROWS           rows to write (at least 1)\n"
            "  -d FEATURES       features per row, all non-zero (1..%u)\n"
            "  -o OUT            output, written atomically\n"
            "  -c CLASSES        2 (default): labels 1/-1; more: labels 0..CLASSES-1 (at most %u)\n"
            "  -s SEED           random seed (default 1); same seed, same bytes\n"
            "  --format F        csv (default; label first, no header) or libsvm\n"
            "  --sigma S         std. dev. of Gaussian noise on each margin (default 0.1)\n"
            "  --noise P         replace each label by a random one with probability P (default 0)\n"
            "  -w WEIGHTS_OUT    write the true weights, \"CLASS INDEX WEIGHT\" per line\n"
            "  -q                no summary line on stderr\n",
            prog, MAX_FEATURES, MAX_CLASSES);
}

int main(int argc, char **argv)
{
    gen g = {.seed = 1, .sigma = 0.1};
    uint64_t rows = 0, d = 0, classes = 2;
    const char *out_path = NULL, *w_path = NULL;
    int quiet = 0;
    static const char *const formats[] = {"csv", "libsvm", NULL}; /* libsvm: 1 */
    const tool_opt opts[] = {
        {"-n", TOOL_U64, .to.u64 = &rows, .umin = 1, .umax = UINT64_MAX, .required = 1},
        {"-d", TOOL_U64, .to.u64 = &d, .umin = 1, .umax = MAX_FEATURES, .required = 1},
        {"-c", TOOL_U64, .to.u64 = &classes, .umin = 2, .umax = MAX_CLASSES},
        {"-s", TOOL_U64, .to.u64 = &g.seed, .umax = UINT64_MAX},
        {"-o", TOOL_TEXT, .to.text = &out_path, .required = 1},
        {"-w", TOOL_TEXT, .to.text = &w_path},
        {"-q", TOOL_FLAG, .to.flag = &quiet},
        {"--format", TOOL_CHOICE, .to.choice = &g.libsvm, .choices = formats},
        {"--sigma", TOOL_DOUBLE, .to.real = &g.sigma, .dmax = 1e9},
        {"--noise", TOOL_DOUBLE, .to.real = &g.noise, .dmax = 1.0},
    };
    const int parsed = tool_args_parse(prog, argc, argv, opts, TOOL_NOPTS(opts), usage);
    if (parsed != TOOL_GO_ON)
        return parsed;
    g.classes = (uint32_t)classes;
    g.rows = rows;
    g.d = (uint32_t)d;

    const double t0 = hog_now();
    const uint32_t outputs = gen_outputs(&g);
    g.w = malloc((size_t)outputs * g.d * sizeof(*g.w));
    long *q = malloc((size_t)g.d * sizeof(*q));
    double *margin = malloc(outputs * sizeof(*margin));
    uint64_t *count = calloc(g.classes, sizeof(*count));
    out o = {.buf = malloc(OUT_BUFFER)};
    int status = 1, rc = 0;
    if (!g.w || !q || !margin || !count || !o.buf) {
        fprintf(stderr, "%s: out of memory for %u features x %u classes\n", prog, g.d, g.classes);
        goto done;
    }
    hog_rng wr = {hog_mix64(g.seed ^ 0x57454947u /* "WEIG" */)};
    for (size_t i = 0; i < (size_t)outputs * g.d; i++)
        g.w[i] = (float)normal(&wr);
    if (w_path && (rc = write_weights(&g, w_path)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, w_path, strerror(-rc));
        goto done;
    }
    if ((rc = hog_atomic_open(&o.f, out_path)) < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, out_path,
                strerror(-rc));
        goto done;
    }
    for (uint64_t i = 0; i < g.rows && rc >= 0; i++) {
        rc = gen_row(&g, i, q, margin, &o);
        if (rc >= 0)
            count[rc]++;
    }
    if (rc >= 0)
        rc = out_flush(&o);
    if (rc < 0) {
        fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
        hog_atomic_abort(&o.f);
        goto done;
    }
    uint64_t bytes = o.f.end;
    if ((rc = hog_atomic_commit(&o.f)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    if (!quiet) {
        uint64_t largest = 0;
        for (uint32_t k = 0; k < g.classes; k++)
            largest = count[k] > largest ? count[k] : largest;
        fprintf(stderr, "%s: %s: %llu rows, %u features, %u classes (largest %.1f%%), %.1f MB in %.2f s\n",
                prog, out_path, (unsigned long long)g.rows, g.d, g.classes,
                100.0 * (double)largest / (double)g.rows, (double)bytes / 1e6, hog_now() - t0);
    }
    status = 0;
done:
    free(g.w);
    free(q);
    free(margin);
    free(count);
    free(o.buf);
    return status;
}
