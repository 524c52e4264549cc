/* test_util_alloc.c: the large arrays' allocation on huge pages: alignment, zeroing, growth and what it reports. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util/util.h"

#define MIB ((size_t)1 << 20)

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

Test(util_alloc, large_arrays_are_zeroed_on_2mib_boundaries)
{
    const size_t n = 5 * MIB + 12;
    unsigned char *p = hog_huge_calloc(n, 1);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % (2 * MIB), 0, "a large array starts a huge page: %p", (void *)p);
    cr_assert(all_zero(p, n));
    memset(p, 0xab, n); /* all of it is the caller's */
    hog_free(p);
    float *w = hog_huge_alloc(3 * MIB);
    cr_assert_not_null(w);
    cr_assert_eq((uintptr_t)w % (2 * MIB), 0);
    hog_free(w);
}

Test(util_alloc, small_arrays_are_cache_line_aligned)
{
    unsigned char *p = hog_huge_calloc(1000, 4);
    cr_assert_not_null(p);
    cr_assert_eq((uintptr_t)p % 64, 0);
    cr_assert(all_zero(p, 4000));
    hog_free(p);
    void *q = hog_huge_alloc(100);
    cr_assert_not_null(q);
    cr_assert_eq((uintptr_t)q % 64, 0);
    hog_free(q);
}

Test(util_alloc, growth_keeps_the_old_bytes_and_zeroes_the_new)
{
    unsigned char *p = hog_huge_grow(NULL, 0, 1000);
    cr_assert_not_null(p);
    cr_assert(all_zero(p, 1000));
    for (size_t i = 0; i < 1000; i++)
        p[i] = (unsigned char)(i % 251 + 1);
    unsigned char *q = hog_huge_grow(p, 1000, 3 * MIB);
    cr_assert_not_null(q);
    cr_assert_eq((uintptr_t)q % (2 * MIB), 0);
    for (size_t i = 0; i < 1000; i++)
        cr_assert_eq(q[i], (unsigned char)(i % 251 + 1), "byte %zu", i);
    cr_assert(all_zero(q + 1000, 3 * MIB - 1000));
    hog_free(q);
}

Test(util_alloc, sizes_that_overflow_are_refused)
{
    cr_assert_null(hog_huge_calloc(SIZE_MAX / 2, 4));
    cr_assert_null(hog_huge_alloc(SIZE_MAX - MIB));
}

Test(util_alloc, the_description_says_what_the_kernel_gave)
{
    unsigned char *p = hog_huge_calloc(4 * MIB, 1);
    cr_assert_not_null(p);
    char buf[200];
    hog_huge_describe(buf, sizeof(buf));
    cr_assert(strstr(buf, "transparent huge pages ") == buf, "%s", buf);
    cr_assert(strstr(buf, "MiB of large arrays advised"), "%s", buf);
    cr_assert(strstr(buf, "on huge pages"), "%s", buf);
    hog_free(p);
}

Test(util_alloc, a_mapping_made_elsewhere_is_advised_from_its_first_huge_page)
{
    cr_assert_eq(hog_huge_round(MIB), MIB, "below a huge page: as it is");
    cr_assert_eq(hog_huge_round(3 * MIB), 5 * MIB, "room to start at a 2 MiB boundary");
    cr_assert_eq(hog_huge_round(SIZE_MAX - MIB), SIZE_MAX, "too large to round");
    const size_t want = 3 * MIB + 100, len = hog_huge_round(want);
    unsigned char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(base, MAP_FAILED);
    unsigned char *at = hog_huge_advise(base, len);
    cr_assert_eq((uintptr_t)at % (2 * MIB), 0, "%p", (void *)at);
    cr_assert_geq(at, base);
    const size_t skip = (size_t)(at - base);
    cr_assert_lt(skip, 2 * MIB);
    cr_assert_geq(len - skip, want, "the bytes asked for fit after the boundary");
    memset(at, 1, want);
    munmap(base, len);
    unsigned char small[64];
    cr_assert_eq(hog_huge_advise(small, sizeof(small)), small, "below a huge page: p itself");
}
