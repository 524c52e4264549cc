/* test_util_murmur.c: the feature hash, MurmurHash3 x86_32, against its published values and masked to a number of bits. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <string.h>

#include "util/util.h"

Test(util_murmur, murmur3_reference_values)
{
    /* MurmurHash3_x86_32's published test values */
    cr_assert_eq(hog_hash_feature("", 0, 0, 0), 0u);
    cr_assert_eq(hog_hash_feature("", 0, 1, 0), 0x514e28b7u);
    cr_assert_eq(hog_hash_feature("", 0, 0xffffffffu, 0), 0x81f16f39u);
    cr_assert_eq(hog_hash_feature("hello", 5, 0, 0), 0x248bfa47u);
    cr_assert_eq(hog_hash_feature("aaaa", 4, 0x9747b28cu, 0), 0x5a97808au);
    cr_assert_eq(hog_hash_feature("abc", 3, 0x9747b28cu, 0), 0xc84a62ddu);
    cr_assert_eq(hog_hash_feature("Hello, world!", 13, 0x9747b28cu, 0), 0x24884cbau);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    cr_assert_eq(hog_hash_feature(fox, strlen(fox), 0, 0), 0x2e4ff723u);
    cr_assert_eq(hog_hash_feature(fox, strlen(fox), 0, 18), 0x2e4ff723u & 0x3ffffu);
    cr_assert_eq(hog_hash_feature("hello", 5, 0, 31), 0x248bfa47u & 0x7fffffffu);
}
