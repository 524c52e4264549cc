/* fuzz_file_common.h: what the binary-file fuzz targets share: the input as a file in memory, the values a size field is pushed to, byte-level mutation of one part of a file, and the checks every run ends with. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_FUZZ_FILE_COMMON_H
#define HOG_FUZZ_FILE_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <sched.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size,
                                 uint8_t *out, size_t max_out, unsigned int seed);
/* libFuzzer's own byte-level mutators, for the parts of a file that have no structure. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* A broken invariant is a crash, so libFuzzer keeps the input. */
#define FUZZ_CHECK(x)                                                                              \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

/* ===================================================================== *
 *  The input as a file: readers take a path, so each input is written to
 *  a file in memory (memfd) and read back through /proc/self/fd/N, which
 *  opens, stats, reads and maps like any regular file.
 * ===================================================================== */

static int fuzz_fd = -1;
static int fuzz_free_fd; /* the lowest free descriptor when the run began */
static char fuzz_path[64];

/* The lowest descriptor not in use. */
static int fuzz_lowest_free_fd(void)
{
    int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0);
    close(fd);
    return fd;
}

/* Writes the input to the memory file *fd (made at the first call, its
 * path in path[64]; a target may keep several) and returns its path. */
static const char *fuzz_file_at(int *fd, char *path, const void *data, size_t size)
{
    if (*fd < 0) {
        *fd = memfd_create("fuzz", MFD_CLOEXEC);
        FUZZ_CHECK(*fd >= 0);
        snprintf(path, 64, "/proc/self/fd/%d", *fd);
    }
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(*fd, (const uint8_t *)data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    /* cut after writing, so the pages of the last input are reused */
    FUZZ_CHECK(ftruncate(*fd, (off_t)size) == 0);
    return path;
}

/* The input's file, at the start of a run: the run's descriptors are
 * counted from here. */
static const char *fuzz_file(const void *data, size_t size)
{
    const char *path = fuzz_file_at(&fuzz_fd, fuzz_path, data, size);
    fuzz_free_fd = fuzz_lowest_free_fd();
    return path;
}

/* Every run ends with the reader's descriptors closed: one left open per
 * run would end a long-lived program that opens files. A descriptor kept
 * takes the lowest free number, so that number moves. */
static void fuzz_check_fds(void)
{
    FUZZ_CHECK(fuzz_lowest_free_fd() == fuzz_free_fd);
}

/* A refusal names the file first ("path: ..." or "path:line:column: ...")
 * and says something after it. */
static void fuzz_check_message(const char *err, const char *path)
{
    size_t n = strlen(path);
    FUZZ_CHECK(strncmp(err, path, n) == 0 && err[n] == ':' && err[n + 1] != '\0' && err[n + 2] != '\0');
}

/* One fuzz process uses one CPU: the readers then check on the calling
 * thread alone (they share the checks out among the CPUs they may use),
 * which keeps thread starts out of every run. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int cpu = sched_getcpu();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu >= 0 ? cpu : 0, &one);
    (void)sched_setaffinity(0, sizeof(one), &one);
    return 0;
}

/* ===================================================================== *
 *  Mutation helpers
 * ===================================================================== */

/* A value for a field of `width` bytes (4 or 8) now holding cur, in a file
 * of size bytes: the boundaries where size checks go wrong (0, 1, the
 * largest, 2^31, 2^32 and their neighbours, the file's own length and
 * just past it) more often than anything else. */
static uint64_t fuzz_boundary(hog_rng *r, uint64_t cur, uint64_t size, unsigned width)
{
    const uint64_t max = width >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
    uint64_t v;
    switch (hog_rng_below(r, 24)) {
    case 0: v = 0; break;
    case 1: v = 1; break;
    case 2: v = 2; break;
    case 3: v = max; break;
    case 4: v = max - 1; break;
    case 5: v = UINT64_C(1) << 31; break;
    case 6: v = (UINT64_C(1) << 31) - 1; break;
    case 7: v = UINT32_MAX; break;
    case 8: v = UINT32_MAX - 1; break;
    case 9: v = UINT64_C(1) << 32; break;
    case 10: v = (UINT64_C(1) << 32) + 1; break;
    case 11: v = UINT64_C(1) << 63; break;
    case 12: v = size; break;
    case 13: v = size + 1; break;
    case 14: v = size - 1; break;
    case 15: v = size / 4; break;
    case 16: v = cur + 1; break;
    case 17: v = cur - 1; break;
    case 18: v = cur * 2; break;
    case 19: v = cur / 2; break;
    case 20: v = UINT64_C(1) << hog_rng_below(r, 64); break;
    case 21: v = (uint64_t)hog_rng_below(r, 4096) << (4 * hog_rng_below(r, 16)); break;
    case 22: v = cur + 4096; break;
    default: v = hog_rng_next(r); break;
    }
    return v & max;
}

/* A float that a reader must refuse or survive: NaN, the infinities, the
 * extremes, a denormal, a negative zero, or an ordinary value. */
static float fuzz_float(hog_rng *r)
{
    static const float pick[] = {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 1e-45f, 1e30f, 0.5f};
    uint32_t k = hog_rng_below(r, 13);
    if (k < HOG_ARRAY_LEN(pick))
        return pick[k];
    return k == 10 ? NAN : k == 11 ? INFINITY : -INFINITY;
}

/* A fixed-width field of a header: its offset and width (4 or 8 bytes). */
typedef struct fuzz_field {
    uint16_t off;
    uint8_t width;
} fuzz_field;

static void fuzz_put(uint8_t *p, unsigned width, uint64_t v)
{
    if (width == 8)
        hog_put_u64(p, v);
    else
        hog_put_u32(p, (uint32_t)v);
}

static uint64_t fuzz_get(const uint8_t *p, unsigned width)
{
    return width == 8 ? hog_get_u64(p) : hog_get_u32(p);
}

/* libFuzzer's byte mutators on data[off, off + len) only, its length kept. */
static void fuzz_mutate_part(uint8_t *data, size_t off, size_t len)
{
    if (len == 0)
        return;
    uint8_t *tmp = malloc(len);
    FUZZ_CHECK(tmp);
    memcpy(tmp, data + off, len);
    size_t n = LLVMFuzzerMutate(tmp, len, len);
    memcpy(data + off, tmp, HOG_MIN(n, len));
    free(tmp);
}

/* Inserts (delta > 0) or removes (delta < 0) bytes at `at`, within max_size;
 * inserted bytes are zero. Returns the new size (the old one if it does not fit). */
static size_t fuzz_resize(uint8_t *data, size_t size, size_t max_size, size_t at, long delta)
{
    if (at > size)
        at = size;
    if (delta < 0) {
        size_t cut = HOG_MIN((size_t)-delta, size - at);
        memmove(data + at, data + at + cut, size - at - cut);
        return size - cut;
    }
    if ((size_t)delta > max_size - size)
        return size;
    memmove(data + at + delta, data + at, size - at);
    memset(data + at, 0, (size_t)delta);
    return size + (size_t)delta;
}

#endif /* HOG_FUZZ_FILE_COMMON_H */
