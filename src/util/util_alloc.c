/* util_alloc.c: the one allocation wrapper, over the process's own malloc (jemalloc in the hogtrain command, libc's under sanitizers), large arrays on huge pages, and array growth. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

/* The allocator is chosen at link time: normal builds link jemalloc, which
 * provides malloc and friends for the whole process; sanitizer builds do not,
 * so ASan's interceptors see every allocation. Everything in hogtrain
 * allocates through these functions, so changing that policy is one file. */

#ifdef HOG_ALLOC_FAULTS
/* ---- allocation failures on demand: test builds only ----
 *
 * Compiled in only where the Makefile defines HOG_ALLOC_FAULTS (make asan,
 * make alloc-faults: ALLOC_FAULTS=1), never in a release build or library.
 * Those builds link with -Wl,--wrap=malloc,calloc,realloc,posix_memalign, so
 * every allocation of our own objects, the library's (through the functions
 * below) and the command's (which uses libc's directly), comes here first.
 * What the link cannot wrap is not counted: libc's own (stdio buffers,
 * fopencookie, thread stacks) and that of the shared libraries (hwloc,
 * OpenBLAS, liburing, zstd, zlib, ZeroMQ; jemalloc is not linked there).
 *
 * The test harness (tests/alloc-fail-test.sh) sets, in the environment:
 *   HOG_ALLOC_FAIL_AT=N    the Nth allocation (counted from 1) returns NULL;
 *                          N+ fails it and every later one
 *   HOG_ALLOC_REPORT=FILE  FILE gets "allocations N" at exit, and the call
 *                          stack of the allocation made to fail, when it is
 * The constructor reads them: the released library reads no environment,
 * and this code is compiled only into test builds (so are the __wrap_
 * names, which make symbols would refuse in a release). The count is one
 * atomic counter; with several threads allocating, which call is the Nth
 * can vary from run to run. */
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);

static atomic_ulong fault_count;
static unsigned long fault_at;  /* 0: none fails */
static int fault_onward;        /* every allocation from fault_at on fails */
static const char *fault_report;

/* Appends the stack of the failed call to the report: the frames in the
 * program itself (not in libc or the sanitizer's runtime), as offsets into
 * it, which the harness names with addr2line (a symbolizer here would make
 * each run several times slower). */
static void fault_trace(unsigned long n)
{
    int fd = open(fault_report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    void *pc[16];
    int depth = backtrace(pc, 16);
    Dl_info self, in;
    dprintf(fd, "failed %lu\n", n);
    for (int i = 0; i < depth && dladdr((void *)fault_trace, &self); i++)
        if (dladdr(pc[i], &in) && in.dli_fbase == self.dli_fbase)
            dprintf(fd, "  %#lx\n", (unsigned long)((char *)pc[i] - (char *)in.dli_fbase - 1));
    close(fd);
}

/* Counts one allocation; true when it is to fail. */
static int fault_take(void)
{
    unsigned long n = atomic_fetch_add_explicit(&fault_count, 1, memory_order_relaxed) + 1;
    if (!fault_at || n < fault_at || (n > fault_at && !fault_onward))
        return 0;
    if (n == fault_at && fault_report)
        fault_trace(n);
    return 1;
}

__attribute__((constructor)) static void fault_init(void)
{
    const char *at = getenv("HOG_ALLOC_FAIL_AT");
    if (at && *at) {
        char *end;
        fault_at = strtoul(at, &end, 10);
        fault_onward = *end == '+';
    }
    fault_report = getenv("HOG_ALLOC_REPORT");
}

__attribute__((destructor)) static void fault_fini(void)
{
    if (!fault_report)
        return;
    int fd = open(fault_report, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    dprintf(fd, "allocations %lu\n", atomic_load(&fault_count));
    close(fd);
}

void *__wrap_malloc(size_t n)
{
    if (fault_take()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(n);
}

void *__wrap_calloc(size_t count, size_t size)
{
    if (fault_take()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fault_take()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    if (fault_take())
        return ENOMEM;
    return __real_posix_memalign(p, align, n);
}
#endif

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

/*
 * Huge pages. A model of millions of features is read at random, a
 * non-zero at a time: with 4 KiB pages nearly every access also misses the
 * TLB (a 2^22-feature model's weights and state span 12,000 pages; the
 * second-level TLB holds about 2,000), and the page walk comes on top of
 * the cache miss. Backed by 2 MiB pages the same arrays need a few dozen
 * TLB entries. Debian's kernels give them only where asked
 * (transparent_hugepage=madvise), so the large arrays are allocated on a
 * 2 MiB boundary, rounded up to whole huge pages (so that the advice does
 * not reach a neighbour's memory), and advised; they are still the
 * allocator's memory, freed with hog_free. Where the kernel refuses (THP
 * off, no support) the advice fails and the pages are small: only slower.
 */
#define HUGE_PAGE ((size_t)2 << 20)

static atomic_ullong huge_advised; /* bytes the kernel took the advice for */

static void *huge_alloc(size_t n, int zero)
{
    if (n < HUGE_PAGE)
        return zero ? hog_calloc(1, n) : hog_aligned_alloc(64, n);
    if (n > SIZE_MAX - HUGE_PAGE)
        return NULL;
    const size_t bytes = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = hog_aligned_alloc(HUGE_PAGE, bytes);
    if (!p)
        return NULL;
    if (madvise(p, bytes, MADV_HUGEPAGE) == 0)
        atomic_fetch_add_explicit(&huge_advised, bytes, memory_order_relaxed);
    /* The first touch, after the advice, is what faults in huge pages. */
    if (zero)
        memset(p, 0, bytes);
    return p;
}

size_t hog_huge_round(size_t n)
{
    if (n < HUGE_PAGE)
        return n;
    return n > SIZE_MAX - HUGE_PAGE ? SIZE_MAX : n + HUGE_PAGE;
}

void *hog_huge_advise(void *p, size_t n)
{
    if (n < HUGE_PAGE || n == SIZE_MAX)
        return p;
    const uintptr_t at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    const size_t bytes = (n - (at - (uintptr_t)p)) / HUGE_PAGE * HUGE_PAGE;
    if (madvise((void *)at, bytes, MADV_HUGEPAGE) == 0)
        atomic_fetch_add_explicit(&huge_advised, bytes, memory_order_relaxed);
    return (void *)at;
}

void *hog_huge_alloc(size_t n)
{
    return huge_alloc(n, 0);
}

void *hog_huge_calloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size)
        return NULL;
    return huge_alloc(count * size, 1);
}

void *hog_huge_grow(void *p, size_t old, size_t n)
{
    void *q = huge_alloc(n, 1);
    if (!q)
        return NULL;
    if (p)
        memcpy(q, p, old < n ? old : n);
    hog_free(p);
    return q;
}

/* The value of the THP setting file `name` (its word in brackets), or "none". */
static void thp_mode(const char *path, char *out, size_t len)
{
    snprintf(out, len, "none");
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[256];
    if (fgets(line, sizeof(line), f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b)
            snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
    }
    fclose(f);
}

/* The kB of a "Key: N kB" line of /proc/self/smaps_rollup, or -1. */
static long long rollup_kb(const char *key)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "re");
    if (!f)
        return -1;
    char line[256];
    long long kb = -1;
    size_t n = strlen(key);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n) && line[n] == ':') {
            kb = strtoll(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}

void hog_huge_describe(char *buf, size_t len)
{
    char mode[32];
    thp_mode("/sys/kernel/mm/transparent_hugepage/enabled", mode, sizeof(mode));
    const unsigned long long advised = atomic_load_explicit(&huge_advised, memory_order_relaxed);
    const long long kb = rollup_kb("AnonHugePages");
    char held[64] = "unknown";
    if (kb >= 0)
        snprintf(held, sizeof(held), "%.1f MiB", (double)kb / 1024);
    snprintf(buf, len, "transparent huge pages %s; %.1f MiB of large arrays advised; the process holds %s on huge pages",
             mode, (double)advised / 1048576, held);
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
    const uint32_t lo = hog_search_f64(s, *n, y);
    if (lo < *n && s[lo] == y)
        return 0;
    if (*n == cap)
        return -1;
    memmove(s + lo + 1, s + lo, (*n - lo) * sizeof(double));
    s[lo] = y;
    (*n)++;
    return 0;
}
