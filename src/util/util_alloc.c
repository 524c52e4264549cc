/* util_alloc.c: the one allocation wrapper, over the process's own malloc (jemalloc in the hogtrain command, libc's under sanitizers), and array growth. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The allocator is chosen at link time: normal builds link jemalloc, which
 * provides malloc and friends for the whole process; sanitizer builds do not,
 * so ASan's interceptors see every allocation. Everything in hogtrain
 * allocates through these functions, so changing that policy is one file. */

void *hog_malloc(size_t n)
{
    return malloc(n ? n : 1);
}

void *hog_calloc(size_t count, size_t size)
{
    return calloc(count ? count : 1, size ? size : 1);
}

void *hog_realloc(void *p, size_t n)
{
    return realloc(p, n ? n : 1);
}

void *hog_aligned_alloc(size_t align, size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, align, n ? n : 1) != 0)
        return NULL;
    return p;
}

void hog_free(void *p)
{
    free(p);
}

char *hog_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = hog_malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

int hog_array_grow(void **p, size_t *cap, size_t need, size_t size, size_t first)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap > first ? *cap : (first ? first : 1);
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -ENOMEM;
        n *= 2;
    }
    if (n > SIZE_MAX / size)
        return -ENOMEM;
    void *q = hog_realloc(*p, n * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = n;
    return 0;
}

int hog_set_insert_f64(double *s, uint32_t *n, uint32_t cap, double y)
{
    uint32_t lo = 0, hi = *n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s[mid] < y)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *n && s[lo] == y)
        return 0;
    if (*n == cap)
        return -1;
    memmove(s + lo + 1, s + lo, (*n - lo) * sizeof(double));
    s[lo] = y;
    (*n)++;
    return 0;
}
