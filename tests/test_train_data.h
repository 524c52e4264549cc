/* test_train_data.h: seeded data files in the scratch folder for the trainer tests: a true model's labels, an interaction (XOR) of two features or of two fields, or any lines the test writes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_TRAIN_DATA_H
#define HOG_TEST_TRAIN_DATA_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "train/train.h"

#include "test_scratch.h"
#include "test_train.h"

/* Writes a seeded libsvm file: rows with nnz of d features, a true model
 * w*_j = sin(j); label by kind: 'b' sign (+1/-1), 'c' argmax of 3 class
 * scores (labels 1..3), 'r' a real target with small noise. */
static inline const char *write_data(const char *name, int rows, int d, int nnz, char kind, uint64_t seed)
{
    static char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        int idx[64];
        float val[64];
        int n = 0;
        int step = d / nnz;
        for (int k = 0; k < nnz; k++) {
            idx[n] = 1 + k * step + (int)hog_rng_below(&r, (uint32_t)step);
            val[n++] = (float)((double)hog_rng_below(&r, 2000) / 1000.0 - 1.0);
        }
        double s[3] = {0, 0, 0};
        for (int k = 0; k < n; k++)
            for (int c = 0; c < 3; c++)
                s[c] += sin(idx[k] * (c + 1.0)) * (double)val[k];
        if (kind == 'b')
            fprintf(f, "%s", s[0] > 0 ? "+1" : "-1");
        else if (kind == 'c')
            fprintf(f, "%d", s[0] > s[1] && s[0] > s[2] ? 1 : s[1] > s[2] ? 2 : 3);
        else
            fprintf(f, "%.6f", 2.0 * s[0] + 0.5 + 0.01 * ((double)hog_rng_below(&r, 1000) / 500.0 - 1.0));
        for (int k = 0; k < n; k++)
            fprintf(f, " %d:%.4f", idx[k], (double)val[k]);
        fprintf(f, "\n");
    }
    fclose(f);
    return path;
}

/* Creates dir/name for writing; its path goes to path (160 bytes). */
static inline FILE *create(const char *name, char *path)
{
    snprintf(path, 160, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    return f;
}

/* Rows of one feature a from 1..10 and one b from 11..20 (value 1), the
 * label +1 when exactly one of them is odd: parity XOR, which no weight of
 * a or of b alone predicts (every a is positive in half its rows), and
 * which a's and b's factors do, through <v_a, v_b> = s(a) s(b); flip
 * percent of the labels turned round (noise: a model's test logloss then
 * has a floor, -0.9 log 0.9 - 0.1 log 0.1 = 0.325 at 10). Written to
 * dir/name, its path into path (160 bytes). */
static inline void write_xor_rows(const char *name, int rows, uint64_t seed, uint32_t flip, char *path)
{
    FILE *f = create(name, path);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        const int a = 1 + (int)hog_rng_below(&r, 10), b = 11 + (int)hog_rng_below(&r, 10);
        const int y = ((a % 2) != (b % 2)) != (flip && hog_rng_below(&r, 100) < flip);
        fprintf(f, "%d %d:1 %d:1\n", y ? 1 : -1, a, b);
    }
    fclose(f);
}

static inline hog_dataset *xor_rows(const char *name, int rows, uint64_t seed)
{
    char path[160];
    write_xor_rows(name, rows, seed, 0, path);
    return open_written(path);
}

/* LIBFFM text: a feature a from base+1..base+10 in field 0 and b from
 * base+11..base+20 in field 1 (value 1), and a third, c, in field 2 that
 * carries nothing; the label +1 when exactly one of a, b is odd, which no
 * weight of one feature predicts and the factors a keeps for field 1 and b
 * for field 0 do. base spreads the indices: a large one makes a model too
 * large for whole copies, packed with its AdaGrad sums. flip: as
 * write_xor_rows's. Written to dir/name, its path into path (160 bytes). */
static inline void write_xor_fields(const char *name, int rows, uint64_t seed, uint32_t base, uint32_t flip,
                                    char *path)
{
    FILE *f = create(name, path);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        const uint32_t a = 1 + (uint32_t)hog_rng_below(&r, 10), b = 11 + (uint32_t)hog_rng_below(&r, 10);
        const uint32_t c = 21 + (uint32_t)hog_rng_below(&r, 30);
        const int y = ((a % 2) != (b % 2)) != (flip && hog_rng_below(&r, 100) < flip);
        fprintf(f, "%d 0:%u:1 1:%u:1 2:%u:0.5\n", y, base + a, base + b, base + c);
    }
    fclose(f);
}

static inline hog_dataset *xor_fields(const char *name, int rows, uint64_t seed, uint32_t base)
{
    char path[160];
    write_xor_fields(name, rows, seed, base, 0, path);
    return open_written(path);
}

static inline hog_dataset *make_data(const char *name, int rows, int d, int nnz, char kind, uint64_t seed)
{
    return open_written(write_data(name, rows, d, nnz, kind, seed));
}

#endif /* HOG_TEST_TRAIN_DATA_H */
