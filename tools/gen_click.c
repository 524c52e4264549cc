/* gen_click.c: writes seeded synthetic click-through rows (LIBFFM, libsvm or Vowpal Wabbit text) drawn from a known field-aware factorisation machine. */
/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Usage: gen_click --rows N -o OUT [--format ffm|libsvm|vw] [--seed S] [--first ROW] [-q]
 *
 * The data, row by row:
 *   fields    20 categorical fields; field f has n_f values, n_f rounded
 *             from 4 * 1024^(f / 19): 4 to 4,096, spread geometrically.
 *             Every row has one value in every field, drawn from a Zipf
 *             law P(v) ~ (v + 1)^-1.1 over 0..n_f - 1 (value 0 the most
 *             common). The feature of value v in field f is the global,
 *             0-based index offset_f + v (offset_f: the values of the
 *             fields before f), so indices increase with the field.
 *   truth     a field-aware factorisation machine (Juan et al., 2016) of
 *             rank k = 4: a weight w_j ~ N(0, 0.3^2) per feature and, per
 *             feature j and field g, a latent vector v_{j,g} of k entries
 *             N(0, 0.3^2). A row with features j_0..j_19 has the margin
 *               m = b + sum_f w_{j_f} + sum_{f<g} <v_{j_f,g}, v_{j_g,f}>
 *             The 190 pair terms have a variance of 190 * 4 * 0.3^4 = 6.2
 *             against the weights' 20 * 0.09 = 1.8, so the pairs carry
 *             most of what a label says: a linear model over the same
 *             features sees only their marginal effects and stays well
 *             behind the truth (the summary line prints the truth's log
 *             loss, the floor a fitted model approaches).
 *   bias      b is bisected so that the mean of sigmoid(m) over a fixed
 *             sample of 20,000 rows (a stream of its own, whatever --rows
 *             and --first) is 0.31: 31% of rows are positive.
 *   label     1 with probability sigmoid(m), else 0.
 *   output    ffm:    "LABEL 0:I0:1 1:I1:1 ... 19:I19:1" (LIBFFM: field:index:value)
 *             libsvm: "LABEL I0:1 I1:1 ... I19:1" (the ffm line without its fields)
 *             vw:     "LABEL |a I0 |b I1 ... |t I19" (a namespace per field, named
 *                     by the letters a..t, the feature named by its index)
 *
 * Reproducibility: the model comes from one stream, the bias sample from
 * another, and row i from its own stream seeded from (SEED, i), so the
 * first N rows of a larger set are the set of N rows, and --first ROW
 * writes rows ROW, ROW + 1, ...: the same truth's rows after the ones a
 * training set took, for a test set. Values depend only on IEEE double
 * arithmetic and glibc's exp, log, pow, sqrt and cos. Output is written
 * atomically (temporary file, fsync, rename): OUT is either absent or
 * complete.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/util/util.h"
#include "tool_args.h"
#include "tool_rng.h"

#define FIELDS 20u
#define RANK 4u
#define MIN_VALUES 4.0
#define MAX_VALUES 4096.0
#define ZIPF_S 1.1
#define WEIGHT_SD 0.3
#define LATENT_SD 0.3
#define POSITIVE_RATE 0.31
#define BIAS_SAMPLE 20000u
#define OUT_BUFFER (1u << 22)
#define LINE_MAX_BYTES (16u + FIELDS * 24u) /* "LABEL" and 20 " ff:iiiiiiiiii:1" at most */

static const char *prog = "gen_click";

enum { FORMAT_FFM, FORMAT_LIBSVM, FORMAT_VW };

typedef struct gen {
    uint64_t seed;
    int format;
    uint32_t values[FIELDS], offset[FIELDS]; /* values per field, its first global index */
    uint32_t features;
    double *cdf[FIELDS]; /* per field, the Zipf law's cumulative probabilities */
    float *w;            /* features */
    float *v;            /* features x FIELDS x RANK: v[(j * FIELDS + g) * RANK + r] */
    double bias;
} gen;

/* Stream keys: the model, the bias sample and the rows each have their own. */
static uint64_t model_key(uint64_t seed)
{
    return mix64(seed ^ 0x4d4f44454cu /* "MODEL" */);
}

static uint64_t sample_key(uint64_t seed)
{
    return mix64(seed ^ 0x53414d504cu /* "SAMPL" */);
}

static uint64_t row_key(uint64_t seed, uint64_t row)
{
    return mix64(seed ^ 0x524f5753u /* "ROWS" */) ^ row;
}

/* Draws the fields' sizes, their Zipf tables and the truth. Returns 0 or -ENOMEM. */
static int build_model(gen *g)
{
    uint32_t total = 0;
    for (uint32_t f = 0; f < FIELDS; f++) {
        g->values[f] = (uint32_t)lround(MIN_VALUES * pow(MAX_VALUES / MIN_VALUES, (double)f / (FIELDS - 1)));
        g->offset[f] = total;
        total += g->values[f];
        if (!(g->cdf[f] = malloc(g->values[f] * sizeof(double))))
            return -ENOMEM;
        double sum = 0;
        for (uint32_t k = 0; k < g->values[f]; k++)
            g->cdf[f][k] = sum += pow((double)k + 1.0, -ZIPF_S);
        for (uint32_t k = 0; k < g->values[f]; k++)
            g->cdf[f][k] /= sum;
    }
    g->features = total;
    g->w = malloc((size_t)total * sizeof(float));
    g->v = malloc((size_t)total * FIELDS * RANK * sizeof(float));
    if (!g->w || !g->v)
        return -ENOMEM;
    rng r;
    rng_seed(&r, model_key(g->seed));
    for (uint32_t j = 0; j < total; j++)
        g->w[j] = (float)(WEIGHT_SD * rng_normal(&r));
    for (size_t i = 0; i < (size_t)total * FIELDS * RANK; i++)
        g->v[i] = (float)(LATENT_SD * rng_normal(&r));
    return 0;
}

/* One Zipf draw of field f: the first value whose cumulative probability
 * passes a uniform draw (binary search). */
static uint32_t draw_value(const gen *g, uint32_t f, rng *r)
{
    const double u = rng_uniform(r);
    const double *cdf = g->cdf[f];
    uint32_t lo = 0, hi = g->values[f] - 1;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Draws a row's features (global indices, one per field) from r and
 * returns its margin without the bias. */
static double draw_row(const gen *g, rng *r, uint32_t *feat)
{
    for (uint32_t f = 0; f < FIELDS; f++)
        feat[f] = g->offset[f] + draw_value(g, f, r);
    double m = 0;
    for (uint32_t f = 0; f < FIELDS; f++) {
        m += (double)g->w[feat[f]];
        for (uint32_t h = f + 1; h < FIELDS; h++) {
            const float *a = g->v + ((size_t)feat[f] * FIELDS + h) * RANK;
            const float *b = g->v + ((size_t)feat[h] * FIELDS + f) * RANK;
            for (uint32_t k = 0; k < RANK; k++)
                m += (double)a[k] * (double)b[k];
        }
    }
    return m;
}

static double sigmoid(double x)
{
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

/* The bias that makes the mean probability of the sample POSITIVE_RATE:
 * the mean is increasing in the bias, so bisection finds it. Returns 0 or -ENOMEM. */
static int settle_bias(gen *g)
{
    double *m = malloc(BIAS_SAMPLE * sizeof(double));
    if (!m)
        return -ENOMEM;
    rng r;
    rng_seed(&r, sample_key(g->seed));
    uint32_t feat[FIELDS];
    for (uint32_t i = 0; i < BIAS_SAMPLE; i++)
        m[i] = draw_row(g, &r, feat);
    double lo = -50, hi = 50;
    for (int it = 0; it < 100 && hi - lo > 1e-12; it++) {
        const double b = 0.5 * (lo + hi);
        double p = 0;
        for (uint32_t i = 0; i < BIAS_SAMPLE; i++)
            p += sigmoid(b + m[i]);
        if (p / BIAS_SAMPLE < POSITIVE_RATE)
            lo = b;
        else
            hi = b;
    }
    g->bias = 0.5 * (lo + hi);
    free(m);
    return 0;
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

/* Writes row `row` and adds its label's log loss under the truth to *loss.
 * Returns its label (0 or 1) or -errno. */
static int gen_row(const gen *g, uint64_t row, out *o, double *loss)
{
    rng r;
    rng_seed(&r, row_key(g->seed, row));
    uint32_t feat[FIELDS];
    const double p = sigmoid(g->bias + draw_row(g, &r, feat));
    const int label = rng_uniform(&r) < p;
    *loss -= log(label ? p : 1.0 - p);
    if (OUT_BUFFER - o->used < LINE_MAX_BYTES) {
        int rc = out_flush(o);
        if (rc < 0)
            return rc;
    }
    char *s = o->buf + o->used;
    *s++ = (char)('0' + label);
    for (uint32_t f = 0; f < FIELDS; f++) {
        switch (g->format) {
        case FORMAT_FFM: s += sprintf(s, " %u:%u:1", f, feat[f]); break;
        case FORMAT_LIBSVM: s += sprintf(s, " %u:1", feat[f]); break;
        default: s += sprintf(s, " |%c %u", 'a' + (int)f, feat[f]); break;
        }
    }
    *s++ = '\n';
    o->used = (size_t)(s - o->buf);
    return label;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s --rows N -o OUT [options]\n"
            "Writes seeded synthetic click-through rows (20 categorical fields) drawn from a known\n"
            "field-aware factorisation machine, 31%% of them positive.\n"
            "  --rows N          rows to write (at least 1)\n"
            "  -o OUT            output, written atomically\n"
            "  --format F        ffm (default; LIBFFM's field:index:value), libsvm (index:value)\n"
            "                    or vw (a namespace per field)\n"
            "  --seed S          random seed (default 1); same seed, same bytes\n"
            "  --first ROW       start at row ROW of the stream (default 0): with the same seed,\n"
            "                    the rows that follow a set of ROW rows (a test set)\n"
            "  -q                no summary line on stderr\n",
            prog);
}

int main(int argc, char **argv)
{
    gen g = {.seed = 1, .format = FORMAT_FFM};
    uint64_t rows = 0, first = 0;
    const char *out_path = NULL;
    int quiet = 0;
    static const char *const formats[] = {"ffm", "libsvm", "vw", NULL}; /* in FORMAT_ order */
    const tool_opt opts[] = {
        {"--format", TOOL_CHOICE, .to.choice = &g.format, .choices = formats},
        {"--rows", TOOL_U64, .to.u64 = &rows, .umin = 1, .umax = UINT64_MAX / 2, .required = 1},
        {"-o", TOOL_TEXT, .to.text = &out_path, .required = 1},
        {"--seed", TOOL_U64, .to.u64 = &g.seed, .umax = UINT64_MAX},
        {"--first", TOOL_U64, .to.u64 = &first, .umax = UINT64_MAX / 2},
        {"-q", TOOL_FLAG, .to.flag = &quiet},
    };
    const int parsed = tool_args_parse(prog, argc, argv, opts, TOOL_NOPTS(opts), usage);
    if (parsed != TOOL_GO_ON)
        return parsed;

    const double t0 = hog_now();
    out o = {.buf = malloc(OUT_BUFFER)};
    int status = 1, rc = 0;
    if (!o.buf || build_model(&g) < 0 || settle_bias(&g) < 0) {
        fprintf(stderr, "%s: out of memory for the model\n", prog);
        goto done;
    }
    if ((rc = hog_atomic_open(&o.f, out_path)) < 0) {
        fprintf(stderr, "%s: %s: cannot create a temporary file beside it: %s\n", prog, out_path,
                strerror(-rc));
        goto done;
    }
    uint64_t positive = 0;
    double loss = 0;
    for (uint64_t i = first; i < first + rows && rc >= 0; i++)
        if ((rc = gen_row(&g, i, &o, &loss)) > 0)
            positive++;
    if (rc >= 0)
        rc = out_flush(&o);
    if (rc < 0) {
        fprintf(stderr, "%s: %s: write: %s\n", prog, out_path, strerror(-rc));
        hog_atomic_abort(&o.f);
        goto done;
    }
    const uint64_t bytes = o.f.end;
    if ((rc = hog_atomic_commit(&o.f)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, out_path, strerror(-rc));
        goto done;
    }
    if (!quiet)
        fprintf(stderr,
                "%s: %s: rows %llu..%llu, %u fields, %u features, %.1f%% positive, the truth's log loss "
                "%.4f, bias %.4f, %.1f MB in %.2f s\n",
                prog, out_path, (unsigned long long)first, (unsigned long long)(first + rows - 1), FIELDS,
                g.features, 100.0 * (double)positive / (double)rows, loss / (double)rows, g.bias,
                (double)bytes / 1e6, hog_now() - t0);
    status = 0;
done:
    for (uint32_t f = 0; f < FIELDS; f++)
        free(g.cdf[f]);
    free(g.w);
    free(g.v);
    free(o.buf);
    return status;
}
