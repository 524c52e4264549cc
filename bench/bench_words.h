/* bench_words.h: the streaming read both bench_membw (the memory bandwidth limit) and bench_scan (a .hgd's warm scan) time, so the scan's ratio to the limit compares one loop with itself. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_BENCH_WORDS_H
#define HOG_BENCH_WORDS_H

#include <stddef.h>
#include <stdint.h>

/* The sum of n 64-bit words, in four independent sums so the adds do not
 * wait on each other. */
static inline uint64_t bench_sum_words(const uint64_t *w, size_t n)
{
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += w[i];
        b += w[i + 1];
        c += w[i + 2];
        d += w[i + 3];
    }
    for (; i < n; i++)
        a += w[i];
    return a + b + c + d;
}

#endif
