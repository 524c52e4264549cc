/* test_train_data.h: seeded libsvm files in the scratch folder for the trainer tests: a true model's labels, or any lines the test writes. */
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

static inline hog_dataset *make_data(const char *name, int rows, int d, int nnz, char kind, uint64_t seed)
{
    return open_written(write_data(name, rows, d, nnz, kind, seed));
}

#endif /* HOG_TEST_TRAIN_DATA_H */
