/* test_xor_data.h: seeded XOR-shaped training text in the scratch folder, in libsvm, LIBFFM or Vowpal Wabbit text, for the trainer's and the command's tests of what only a pair of features learns. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_XOR_DATA_H
#define HOG_TEST_XOR_DATA_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h" /* hog_rng */

#include "test_scratch.h"

/* The text write_xor writes. */
typedef enum { XOR_LIBSVM, XOR_LIBFFM, XOR_VW } xor_text;

/* Writes dir/name and returns its path (one buffer, the last call's): rows
 * seeded rows, each with a feature a and a feature b, each one of ten
 * (value 1), labelled positive when exactly one of them is odd: parity XOR,
 * which no weight of a or of b alone predicts (every a is positive in half
 * its rows), and which the weight of their pair, or their factors, do. With
 * noise > 0 a third feature c, one of noise, carries nothing. Labels are 1
 * and 0 in LIBFFM text (as LIBFFM's own), +1 and -1 otherwise:
 *   XOR_LIBSVM  y base+a:1 base+10+b:1 [base+20+c:0.5]
 *   XOR_LIBFFM  y 0:base+a:1 1:base+10+b:1 [2:base+20+c:0.5]
 *   XOR_VW      y |a va |b vb [|c nc]          (base unused)
 * The same seed gives the same rows in every text. flip: that percent of
 * the labels turned round, a floor under any model's test logloss
 * (-0.9 log 0.9 - 0.1 log 0.1 = 0.325 at 10). */
static inline const char *write_xor_flip(const char *name, xor_text text, int rows, uint64_t seed, uint32_t base,
                                         uint32_t noise, uint32_t flip)
{
    static char path[256];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    hog_rng r = {seed};
    for (int i = 0; i < rows; i++) {
        const uint32_t a = hog_rng_below(&r, 10), b = hog_rng_below(&r, 10);
        const uint32_t c = noise ? hog_rng_below(&r, noise) : 0;
        const int y = ((a % 2) != (b % 2)) != (flip && hog_rng_below(&r, 100) < flip);
        switch (text) {
        case XOR_LIBSVM:
            fprintf(f, "%d %u:1 %u:1", y ? 1 : -1, base + a, base + 10 + b);
            if (noise)
                fprintf(f, " %u:0.5", base + 20 + c);
            break;
        case XOR_LIBFFM:
            fprintf(f, "%d 0:%u:1 1:%u:1", y, base + a, base + 10 + b);
            if (noise)
                fprintf(f, " 2:%u:0.5", base + 20 + c);
            break;
        case XOR_VW:
            fprintf(f, "%d |a v%u |b v%u", y ? 1 : -1, a, b);
            if (noise)
                fprintf(f, " |c n%u", c);
            break;
        }
        fprintf(f, "\n");
    }
    cr_assert_eq(fclose(f), 0, "%s", path);
    return path;
}

static inline const char *write_xor(const char *name, xor_text text, int rows, uint64_t seed, uint32_t base,
                                    uint32_t noise)
{
    return write_xor_flip(name, text, rows, seed, base, noise, 0);
}

#endif /* HOG_TEST_XOR_DATA_H */
