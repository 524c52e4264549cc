/* test_util_hash.c: hog_hash64 (XXH3) and the vector register state it must leave clean. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/util.h"

/* AVX code must not leave the vector registers' upper halves in use: the
 * scalar SSE loops that run afterwards (on this thread, and on the threads
 * it creates) would slow down by almost half. Checked with the CPU's own
 * XINUSE bitmap after hashing an input long enough for XXH3's vector path. */
Test(util_hash, hashing_leaves_the_vector_registers_clean)
{
    hog_vector_state_clear();
    int before = hog_vector_state_dirty();
    if (before < 0)
        cr_skip_test("this CPU cannot report which register state is in use (no XGETBV with ECX=1)");
    cr_assert_eq(before, 0, "vzeroupper left the upper halves in use");
    size_t len = 1 << 20;
    uint8_t *buf = malloc(len);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    uint64_t h = hog_hash64(buf, len, 42);
    cr_assert_eq(hog_vector_state_dirty(), 0, "hog_hash64 returned with the AVX upper halves in use");
    cr_assert_eq(hog_hash64(buf, len, 42), h);
    free(buf);
}
