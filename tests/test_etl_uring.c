/* test_etl_uring.c: the chunked file reader: byte-exact round trips (io_uring, O_DIRECT, buffered and pread paths, pipes), release order, gzip and zstd, errors, a stop fd that ends a read. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>


#include "etl/etl.h"

#include "deny_io.h"
#include "test_compress.h"

/* Small chunks keep the files small while still crossing every boundary. */
#define CHUNK ((size_t)65536)

/* ---- helpers ---- */

/* Reproducible bytes: text-like, so the compressors have something to find. */
static unsigned char *make_data(size_t n, uint64_t seed)
{
    unsigned char *d = malloc(n ? n : 1);
    cr_assert_not_null(d);
    hog_rng rng = {seed};
    static const char words[][8] = {"1 ", "0.5 ", "3:1 ", "17:0.25 ", "-1 ", "\n", "42:7 ", "x "};
    size_t i = 0;
    while (i < n) {
        const char *w = words[hog_rng_below(&rng, 8)];
        for (size_t k = 0; w[k] && i < n; k++)
            d[i++] = (unsigned char)w[k];
        if (hog_rng_below(&rng, 16) == 0 && i < n)
            d[i++] = (unsigned char)hog_rng_next(&rng); /* some noise */
    }
    return d;
}

/* Writes a file and drops it from the page cache, so the reader takes its
 * O_DIRECT path as it would for a file on disk. */
static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    if (n)
        cr_assert_eq(fwrite(data, 1, n, f), n);
    cr_assert_eq(fflush(f), 0);
    cr_assert_eq(fdatasync(fileno(f)), 0);
    cr_assert_eq(posix_fadvise(fileno(f), 0, 0, POSIX_FADV_DONTNEED), 0);
    cr_assert_eq(fclose(f), 0);
}

static void tmp_path(char *buf, size_t len, const char *dir, const char *name)
{
    snprintf(buf, len, "%s/hog-uring-%ld-%s", dir, (long)getpid(), name);
}

/* Reads path to the end, releasing each chunk before the next call, and
 * checks every chunk but the last is exactly chunk bytes. Returns the bytes. */
static unsigned char *read_all(const char *path, size_t chunk, unsigned depth, size_t *out_len,
                               int *direct)
{
    char err[256] = "";
    hog_reader *r;
    int rc = hog_reader_open(path, chunk, depth, &r, err, sizeof err);
    cr_assert_eq(rc, 0, "open %s: %d %s", path, rc, err);
    if (direct)
        *direct = hog_reader_direct(r);
    size_t cap = 1 << 16, n = 0;
    unsigned char *all = malloc(cap);
    const char *data;
    size_t len, last = 0;
    int first = 1;
    while ((rc = hog_reader_next(r, &data, &len)) == 1) {
        cr_assert(len > 0);
        if (!first && chunk)
            cr_assert_eq(last, chunk, "a chunk before the last one was short: %zu", last);
        first = 0;
        last = len;
        while (n + len > cap)
            cap *= 2;
        all = realloc(all, cap);
        memcpy(all + n, data, len);
        n += len;
        hog_reader_release(r, data);
    }
    cr_assert_eq(rc, 0, "next %s: %d %s", path, rc, err);
    cr_assert_eq(hog_reader_next(r, &data, &len), 0, "the end is sticky");
    hog_reader_close(r);
    *out_len = n;
    return all;
}

static void round_trip(const char *dir, size_t size, size_t chunk, unsigned depth)
{
    char path[256];
    tmp_path(path, sizeof path, dir, "plain");
    unsigned char *d = make_data(size, size * 31 + depth);
    write_file(path, d, size);
    size_t n;
    int direct;
    unsigned char *got = read_all(path, chunk, depth, &n, &direct);
    cr_assert_eq(n, size, "%s: size %zu depth %u: read %zu bytes", dir, size, depth, n);
    cr_assert(size == 0 || memcmp(got, d, size) == 0, "%s: size %zu depth %u: bytes differ", dir,
              size, depth);
    free(got);
    free(d);
    unlink(path);
}

static void round_trip_sizes(const char *dir)
{
    const size_t sizes[] = {0, 1, 4095, 4096, 4097, CHUNK - 1, CHUNK, CHUNK + 1,
                            5 * CHUNK + 12345};
    const unsigned depths[] = {1, 2, 8};
    for (size_t i = 0; i < HOG_ARRAY_LEN(sizes); i++)
        for (size_t k = 0; k < HOG_ARRAY_LEN(depths); k++)
            round_trip(dir, sizes[i], CHUNK, depths[k]);
}

/* Refuses io_uring or O_DIRECT in this test's process (Criterion forks one
 * per test), to reach the reader's fallbacks. */
static void deny(int no_ring, int no_direct)
{
    int rc = deny_io(no_ring, no_direct);
    cr_assert_eq(rc, 0, "seccomp: %s", strerror(-rc));
}

/* ---- plain files ---- */

Test(etl_uring, round_trip_on_tmp)
{
    round_trip_sizes("/tmp");
}

Test(etl_uring, round_trip_on_dev_shm)
{
    if (access("/dev/shm", W_OK) != 0)
        cr_skip_test("/dev/shm is not writable here");
    round_trip_sizes("/dev/shm");
    /* tmpfs refused O_DIRECT until Linux 6.6; either way the bytes match. */
    char path[256];
    tmp_path(path, sizeof path, "/dev/shm", "which");
    write_file(path, "x", 1);
    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, 0, 0, &r, NULL, 0), 0);
    cr_log_info("/dev/shm: O_DIRECT %s", hog_reader_direct(r) ? "used" : "not used");
    hog_reader_close(r);
    unlink(path);
}

Test(etl_uring, round_trip_with_buffered_reads)
{
    deny(0, 1);
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "buffered");
    size_t size = 3 * CHUNK + 4097;
    unsigned char *d = make_data(size, 7);
    write_file(path, d, size);
    size_t n;
    int direct = -1;
    unsigned char *got = read_all(path, CHUNK, 3, &n, &direct);
    cr_assert_eq(direct, 0, "O_DIRECT was refused, yet the reader says direct");
    cr_assert_eq(n, size);
    cr_assert_arr_eq(got, d, size);
    free(got);
    free(d);
    unlink(path);
}

Test(etl_uring, round_trip_without_io_uring_uses_pread)
{
    deny(1, 0);
    round_trip_sizes("/tmp");
}

Test(etl_uring, round_trip_without_io_uring_or_direct)
{
    deny(1, 1);
    round_trip(".", 2 * CHUNK + 1, CHUNK, 2);
    round_trip("/tmp", 4097, CHUNK, 1);
}

Test(etl_uring, defaults_are_4_mib_and_depth_4)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "defaults");
    size_t size = (9u << 20) + 3;
    unsigned char *d = make_data(size, 9);
    write_file(path, d, size);
    size_t n;
    int direct;
    unsigned char *got = read_all(path, 4u << 20, 0, &n, &direct);
    cr_assert_eq(n, size);
    cr_assert_arr_eq(got, d, size);
    free(got);

    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, 0, 0, &r, NULL, 0), 0);
    cr_assert_eq(hog_reader_file_bytes(r), size);
    cr_log_info("/tmp: O_DIRECT %s", hog_reader_direct(r) ? "used" : "not used");
    const char *held[4];
    size_t len;
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(hog_reader_next(r, &held[i], &len), 1);
        cr_assert_eq(len, i < 2 ? 4u << 20 : (1u << 20) + 3);
        cr_assert_eq(memcmp(held[i], d + ((size_t)i << 22), len), 0);
    }
    /* Closing with chunks held and reads in flight frees everything. */
    hog_reader_close(r);
    free(d);
    unlink(path);
}

Test(etl_uring, chunk_size_is_rounded_to_the_alignment)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "round");
    unsigned char *d = make_data(20000, 3);
    write_file(path, d, 20000);
    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, 5000, 2, &r, NULL, 0), 0);
    const char *data;
    size_t len;
    cr_assert_eq(hog_reader_next(r, &data, &len), 1);
    cr_assert_eq(len, 8192u);
    cr_assert_eq((uintptr_t)data % 4096, 0u, "buffers are page-aligned for O_DIRECT");
    hog_reader_release(r, data);
    hog_reader_close(r);
    free(d);
    unlink(path);
}

Test(etl_uring, releasing_out_of_order_keeps_file_order)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "order");
    const size_t chunk = 4096, chunks = 23, size = chunks * chunk - 100;
    unsigned char *d = make_data(size, 11);
    write_file(path, d, size);
    char err[256];
    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, chunk, 4, &r, err, sizeof err), 0, "%s", err);
    const char *held[4] = {0};
    size_t next = 0; /* index of the next chunk expected */
    hog_rng rng = {5};
    const char *data;
    size_t len;
    int rc;
    for (;;) {
        /* Fill the free places, then release a random one. */
        int ended = 0;
        for (int i = 0; i < 4; i++) {
            if (held[i])
                continue;
            rc = hog_reader_next(r, &data, &len);
            cr_assert_geq(rc, 0, "%s", err);
            if (rc == 0) {
                ended = 1;
                break;
            }
            size_t off = next * chunk;
            cr_assert_eq(len, HOG_MIN(chunk, size - off));
            cr_assert_eq(memcmp(data, d + off, len), 0, "chunk %zu out of order or wrong", next);
            held[i] = data;
            next++;
        }
        if (ended)
            break;
        /* All four held: a fifth is refused until one comes back (unless
         * there is no fifth). */
        cr_assert_eq(hog_reader_next(r, &data, &len), next == chunks ? 0 : -EBUSY);
        int k = (int)hog_rng_below(&rng, 4);
        hog_reader_release(r, held[k]);
        held[k] = NULL;
    }
    cr_assert_eq(next, chunks);
    for (int i = 0; i < 4; i++)
        hog_reader_release(r, held[i]);
    hog_reader_close(r);
    free(d);
    unlink(path);
}

/* ---- compressed files ---- */

/* Writes two members (frames) back to back, as pigz or `cat a.gz b.gz` do,
 * and checks the reader returns both parts. */
static void compressed_round_trip(int zstd, size_t size, size_t chunk, unsigned depth)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", zstd ? "c.zst" : "c.gz");
    unsigned char *d = make_data(size, size + 1);
    size_t half = size / 3, l1, l2;
    unsigned char *c1 = zstd ? zstd_bytes(d, half, &l1) : gzip_bytes(d, half, &l1);
    unsigned char *c2 = zstd ? zstd_bytes(d + half, size - half, &l2)
                             : gzip_bytes(d + half, size - half, &l2);
    unsigned char *c = malloc(l1 + l2);
    memcpy(c, c1, l1);
    memcpy(c + l1, c2, l2);
    write_file(path, c, l1 + l2);
    size_t n;
    unsigned char *got = read_all(path, chunk, depth, &n, NULL);
    cr_assert_eq(n, size, "%s size %zu chunk %zu depth %u: %zu bytes", zstd ? "zstd" : "gzip",
                 size, chunk, depth, n);
    cr_assert_arr_eq(got, d, size);

    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, chunk, depth, &r, NULL, 0), 0);
    cr_assert_eq(hog_reader_file_bytes(r), l1 + l2, "file_bytes is the size on disk");
    hog_reader_close(r);
    free(got);
    free(c);
    free(c1);
    free(c2);
    free(d);
    unlink(path);
}

Test(etl_uring, gzip_round_trip)
{
    compressed_round_trip(0, 1000, 4096, 1);
    compressed_round_trip(0, 7 * CHUNK + 999, CHUNK, 2);
    compressed_round_trip(0, 7 * CHUNK + 999, 4096, 8);
    compressed_round_trip(0, 9u << 20, 0, 0);
}

Test(etl_uring, zstd_round_trip)
{
    compressed_round_trip(1, 1000, 4096, 1);
    compressed_round_trip(1, 7 * CHUNK + 999, CHUNK, 2);
    compressed_round_trip(1, 7 * CHUNK + 999, 4096, 8);
    compressed_round_trip(1, 9u << 20, 0, 0);
}

Test(etl_uring, compressed_output_exactly_fills_chunks)
{
    /* Decompressed sizes on chunk boundaries: the decoder must flush what it
     * holds after the input ends instead of calling the stream truncated. */
    compressed_round_trip(0, 3 * 4096, 4096, 2);
    compressed_round_trip(1, 3 * 4096, 4096, 2);
    compressed_round_trip(0, 3 * 4096, 4096, 1);
}

/* Reads path to the end and returns the first error, with err filled. */
static int read_until_error(const char *path, size_t chunk, char *err, size_t err_len)
{
    hog_reader *r;
    int rc = hog_reader_open(path, chunk, 2, &r, err, err_len);
    if (rc < 0)
        return rc;
    const char *data;
    size_t len;
    while ((rc = hog_reader_next(r, &data, &len)) == 1)
        hog_reader_release(r, data);
    if (rc < 0)
        cr_assert_eq(hog_reader_next(r, &data, &len), rc, "errors are sticky");
    hog_reader_close(r);
    return rc;
}

Test(etl_uring, truncated_gzip_is_a_format_error_with_the_offset)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "trunc.gz");
    size_t size = 5 * CHUNK, cl;
    unsigned char *d = make_data(size, 13);
    unsigned char *c = gzip_bytes(d, size, &cl);
    size_t cut = cl / 2;
    write_file(path, c, cut);
    char err[512] = "";
    int rc = read_until_error(path, 4096, err, sizeof err);
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    char want[400];
    snprintf(want, sizeof want, "%s: corrupt gzip stream at compressed byte offset %zu: ", path, cut);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "err: %s\nwant: %s...", err, want);
    free(c);
    free(d);
    unlink(path);
}

Test(etl_uring, corrupt_gzip_names_zlibs_message)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "bad.gz");
    size_t size = 5 * CHUNK, cl;
    unsigned char *d = make_data(size, 17);
    unsigned char *c = gzip_bytes(d, size, &cl);
    memset(c + cl / 2, 0xff, 64);
    write_file(path, c, cl);
    char err[512] = "";
    int rc = read_until_error(path, 4096, err, sizeof err);
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    char want[400];
    snprintf(want, sizeof want, "%s: corrupt gzip stream at compressed byte offset ", path);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "err: %s", err);
    unsigned long long off = strtoull(err + strlen(want), NULL, 10);
    cr_assert(off >= cl / 2 && off <= cl, "offset %llu not at or after the damage (%zu)", off,
              cl / 2);
    cr_log_info("corrupt gzip: %s", err);
    free(c);
    free(d);
    unlink(path);
}

Test(etl_uring, corrupt_zstd_is_a_format_error_with_the_offset)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "bad.zst");
    size_t size = 5 * CHUNK, cl;
    unsigned char *d = make_data(size, 19);
    unsigned char *c = zstd_bytes(d, size, &cl);
    memset(c + cl / 2, 0x5a, 64);
    write_file(path, c, cl);
    char err[512] = "";
    int rc = read_until_error(path, 4096, err, sizeof err);
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    char want[400];
    snprintf(want, sizeof want, "%s: corrupt zstd stream at compressed byte offset ", path);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "err: %s", err);
    cr_log_info("corrupt zstd: %s", err);

    /* Truncated: the offset is the end of the file. */
    free(c);
    c = zstd_bytes(d, size, &cl);
    write_file(path, c, cl - 7);
    rc = read_until_error(path, 4096, err, sizeof err);
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    snprintf(want, sizeof want, "%s: corrupt zstd stream at compressed byte offset %zu: ", path,
             cl - 7);
    cr_assert(strncmp(err, want, strlen(want)) == 0, "err: %s\nwant: %s...", err, want);
    free(c);
    free(d);
    unlink(path);
}

Test(etl_uring, short_files_with_a_partial_magic_are_plain)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "magic");
    const unsigned char zst3[] = {0x28, 0xb5, 0x2f};
    write_file(path, zst3, sizeof zst3);
    size_t n;
    unsigned char *got = read_all(path, 0, 0, &n, NULL);
    cr_assert_eq(n, 3u);
    cr_assert_arr_eq(got, zst3, 3);
    free(got);
    const unsigned char gz1[] = {0x1f};
    write_file(path, gz1, 1);
    got = read_all(path, 0, 0, &n, NULL);
    cr_assert_eq(n, 1u);
    free(got);
    unlink(path);
}

/* ---- errors ---- */

Test(etl_uring, missing_file_is_enoent)
{
    char err[256] = "";
    hog_reader *r = (hog_reader *)1;
    int rc = hog_reader_open("/tmp/hog-uring-no-such-file", 0, 0, &r, err, sizeof err);
    cr_assert_eq(rc, -ENOENT);
    cr_assert_null(r);
    cr_assert(strstr(err, "/tmp/hog-uring-no-such-file") != NULL, "err: %s", err);
}

Test(etl_uring, a_file_that_shrinks_while_read_is_eio)
{
    char path[256];
    tmp_path(path, sizeof path, "/tmp", "shrink");
    unsigned char *d = make_data(10 * 4096, 23);
    write_file(path, d, 10 * 4096);
    char err[256] = "";
    hog_reader *r;
    /* depth 1: nothing past the first chunk is read before the truncate. */
    cr_assert_eq(hog_reader_open(path, 4096, 1, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(truncate(path, 2 * 4096), 0);
    const char *data;
    size_t len;
    int rc, chunks = 0;
    while ((rc = hog_reader_next(r, &data, &len)) == 1) {
        cr_assert_eq(memcmp(data, d + chunks * 4096, len), 0);
        chunks++;
        hog_reader_release(r, data);
    }
    cr_assert_eq(rc, -EIO, "rc %d: %s", rc, err);
    cr_assert_eq(chunks, 2);
    cr_assert(strstr(err, "the file ended at byte 8192") != NULL, "err: %s", err);
    hog_reader_close(r);
    free(d);
    unlink(path);
}

Test(etl_uring, a_directory_is_eisdir)
{
    hog_reader *r;
    cr_assert_eq(hog_reader_open("/tmp", 0, 0, &r, NULL, 0), -EISDIR);
}

/* ---- pipes ---- */

typedef struct pipe_writer {
    int fd;
    const unsigned char *data;
    size_t n;
    uint64_t seed;
} pipe_writer;

/* Writes the bytes in pieces of random sizes (1 byte to 3 chunks), as a
 * program printing its output would, then closes the pipe. */
static void *write_pipe(void *v)
{
    pipe_writer *w = v;
    hog_rng rng = {w->seed};
    for (size_t at = 0; at < w->n;) {
        size_t piece = 1 + hog_rng_below(&rng, (uint32_t)(3 * CHUNK));
        ssize_t k = write(w->fd, w->data + at, HOG_MIN(piece, w->n - at));
        if (k <= 0)
            break; /* the reader went away: the test fails on what it read */
        at += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

/* Reads what a thread writes into a pipe, by the pipe's /proc path (as
 * /dev/stdin is one), and checks the bytes, the full chunks and that the
 * size is unknown until the end. */
static void pipe_round_trip(const unsigned char *bytes, size_t n, const unsigned char *want, size_t want_n,
                            size_t chunk, unsigned depth)
{
    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    pipe_writer w = {fds[1], bytes, n, n + depth};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_pipe, &w), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    hog_reader *r;
    char err[256] = "";
    cr_assert_eq(hog_reader_open(path, chunk, depth, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(hog_reader_file_bytes(r), 0, "a pipe's size is unknown");
    cr_assert_eq(hog_reader_direct(r), 0);
    unsigned char *got = malloc(want_n + 1);
    size_t total = 0, last = chunk;
    const char *data;
    size_t len;
    int rc;
    while ((rc = hog_reader_next(r, &data, &len)) == 1) {
        cr_assert_eq(last, chunk, "a chunk before the last one was short: %zu of %zu", last, chunk);
        cr_assert(len > 0 && total + len <= want_n, "%zu bytes after %zu, of %zu", len, total, want_n);
        memcpy(got + total, data, len);
        total += len;
        last = len;
        hog_reader_release(r, data);
    }
    cr_assert_eq(rc, 0, "%d %s", rc, err);
    cr_assert_eq(hog_reader_next(r, &data, &len), 0, "the end is sticky");
    cr_assert_eq(total, want_n, "read %zu bytes of %zu", total, want_n);
    cr_assert(want_n == 0 || memcmp(got, want, want_n) == 0, "the bytes differ");
    cr_assert_eq(hog_reader_position(r), n, "position: %llu of %zu", (unsigned long long)hog_reader_position(r), n);
    hog_reader_close(r);
    close(fds[0]);
    pthread_join(t, NULL);
    free(got);
}

Test(etl_uring, a_pipe_is_read_as_a_stream, .timeout = 60)
{
    const size_t sizes[] = {0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 12345};
    for (size_t i = 0; i < HOG_ARRAY_LEN(sizes); i++)
        for (unsigned depth = 1; depth <= 2; depth++) {
            unsigned char *d = make_data(sizes[i], sizes[i] + 7);
            pipe_round_trip(d, sizes[i], d, sizes[i], CHUNK, depth);
            free(d);
        }
}

Test(etl_uring, a_compressed_pipe_is_decompressed, .timeout = 60)
{
    const size_t size = 7 * CHUNK + 999;
    unsigned char *d = make_data(size, 99);
    for (int zstd = 0; zstd <= 1; zstd++) {
        size_t cn;
        unsigned char *c = zstd ? zstd_bytes(d, size, &cn) : gzip_bytes(d, size, &cn);
        pipe_round_trip(c, cn, d, size, CHUNK, 2);
        free(c);
    }
    free(d);
}

/* Asks for the next chunk and checks it holds exactly want. */
static void next_is(hog_reader *r, const char *want)
{
    const char *data;
    size_t len;
    cr_assert_eq(hog_reader_next(r, &data, &len), 1);
    cr_assert_eq(len, strlen(want), "%zu bytes, want \"%s\"", len, want);
    cr_assert(memcmp(data, want, len) == 0, "\"%.*s\", want \"%s\"", (int)len, data, want);
    hog_reader_release(r, data);
}

/* An eager reader hands over what the pipe has as soon as nothing more is
 * ready: each write comes back alone while the pipe stays open (a reader
 * that waited for a full chunk would wait forever here). */
Test(etl_uring, an_eager_reader_hands_over_what_a_pipe_has_ready, .timeout = 30)
{
    for (int gz = 0; gz <= 1; gz++) {
        int fds[2];
        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
        const char *parts[] = {"1 1:1\n", "0 2:0.5\n-1 3:1\n", "1 4:"};
        z_stream zs;
        unsigned char buf[256];
        memset(&zs, 0, sizeof zs);
        cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        hog_reader *r = NULL;
        for (size_t i = 0; i < HOG_ARRAY_LEN(parts); i++) {
            size_t n = strlen(parts[i]);
            const void *bytes = parts[i];
            if (gz) { /* a writer that flushes its gzip stream at each piece */
                zs.next_in = (unsigned char *)(uintptr_t)parts[i];
                zs.avail_in = (uInt)n;
                zs.next_out = buf;
                zs.avail_out = sizeof buf;
                cr_assert_eq(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
                n = sizeof buf - zs.avail_out;
                bytes = buf;
            }
            cr_assert_eq(write(fds[1], bytes, n), (ssize_t)n);
            if (!r) /* opened on a pipe that already holds bytes, as a writer that came first leaves it */
                cr_assert_eq(hog_reader_open_with(path, CHUNK, 2, HOG_READER_EAGER, &r, NULL, 0), 0);
            next_is(r, parts[i]);
        }
        if (gz) {
            zs.next_out = buf;
            zs.avail_out = sizeof buf;
            cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
            size_t n = sizeof buf - zs.avail_out;
            cr_assert_eq(write(fds[1], buf, n), (ssize_t)n);
        }
        deflateEnd(&zs);
        close(fds[1]);
        const char *data;
        size_t len;
        cr_assert_eq(hog_reader_next(r, &data, &len), 0, "the end of the stream");
        cr_assert_eq(hog_reader_stream(r), 1);
        hog_reader_close(r);
        close(fds[0]);
    }
}

Test(etl_uring, close_accepts_null)
{
    hog_reader_close(NULL);
}

/* Where the file is already in the page cache, reading it with O_DIRECT
 * would go back to the disk: the reader takes the buffered path then, and
 * O_DIRECT for a file that is not cached. */
Test(etl_uring, direct_reads_only_for_files_not_in_the_page_cache)
{
    char dir[] = "/var/tmp/hog-uring-cache-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    tmp_path(path, sizeof(path), dir, "cache.bin");
    size_t n = 4u << 20;
    unsigned char *data = make_data(n, 11);
    write_file(path, data, n);
    char err[256] = "";
    hog_reader *r;
    struct statfs sf;
    cr_assert_eq(statfs(dir, &sf), 0);
    if (sf.f_type == 0x01021994 /* tmpfs: no O_DIRECT to speak of */)
        cr_skip_test("%s is tmpfs", dir);
    cr_assert_eq(hog_reader_open(path, 0, 0, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_reader_direct(r), 1, "a file out of the page cache: O_DIRECT");
    hog_reader_close(r);

    /* Read it once through the page cache: now it is cached. */
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    unsigned char *copy = malloc(n);
    cr_assert_eq(fread(copy, 1, n, f), n);
    fclose(f);
    free(copy);
    cr_assert_eq(hog_reader_open(path, 0, 0, &r, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_reader_direct(r), 0, "a cached file: buffered reads");
    size_t got = 0, len;
    const char *chunk;
    int rc;
    while ((rc = hog_reader_next(r, &chunk, &len)) == 1) {
        cr_assert(memcmp(chunk, data + got, len) == 0);
        got += len;
        hog_reader_release(r, chunk);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(got, n);
    hog_reader_close(r);
    free(data);
    unlink(path);
    rmdir(dir);
}

/* ---- a stop fd ---- */

/* A stop fd as a signal handler would make one readable. */
static int stop_fd(void)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(fd, 0, "eventfd: %s", strerror(errno));
    return fd;
}

static void stop_now(int fd)
{
    cr_assert_eq(eventfd_write(fd, 1), 0);
}

static void *stop_thread(void *v)
{
    stop_now(*(const int *)v);
    return NULL;
}

/* The reader only watches the stop fd: the one count written is still there. */
static void stop_fd_untouched(int fd)
{
    eventfd_t v = 0;
    cr_assert_eq(eventfd_read(fd, &v), 0, "the reader drained the stop fd");
    cr_assert_eq(v, 1);
}

/* A writer that wrote a row and a half and then says nothing, its end of the
 * pipe open all along: the stop fd, made readable before the call or by
 * another thread while the reader waits, ends the read. What the pipe held
 * comes out first, then the end; nothing written after it is read. Eager,
 * the first call hands the bytes over at once and the second one waits. */
Test(etl_uring, a_stop_fd_ends_a_read_waiting_on_a_quiet_pipe, .timeout = 30)
{
    const char rows[] = "1 1:1\n0 2:", later[] = "0.5\n";
    for (int eager = 0; eager <= 1; eager++)
        for (int from_thread = 0; from_thread <= 1; from_thread++) {
            int fds[2], efd = stop_fd();
            cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
            cr_assert_eq(write(fds[1], rows, strlen(rows)), (ssize_t)strlen(rows));
            char path[64], err[256] = "";
            snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
            hog_reader *r;
            cr_assert_eq(hog_reader_open_with(path, CHUNK, 2, eager ? HOG_READER_EAGER : 0, &r, err, sizeof err), 0,
                         "%s", err);
            hog_reader_set_stop(r, efd);
            pthread_t t;
            if (from_thread)
                cr_assert_eq(pthread_create(&t, NULL, stop_thread, &efd), 0);
            else
                stop_now(efd);
            const char *data;
            size_t len;
            cr_assert_eq(hog_reader_next(r, &data, &len), 1, "eager %d thread %d: %s", eager, from_thread, err);
            cr_assert_eq(len, strlen(rows));
            cr_assert(memcmp(data, rows, len) == 0, "\"%.*s\"", (int)len, data);
            hog_reader_release(r, data);
            cr_assert_eq(hog_reader_next(r, &data, &len), 0, "eager %d thread %d: %s", eager, from_thread, err);
            cr_assert_eq(hog_reader_stopped(r), 1);
            cr_assert_eq(hog_reader_position(r), strlen(rows));
            cr_assert_eq(write(fds[1], later, strlen(later)), (ssize_t)strlen(later));
            cr_assert_eq(hog_reader_next(r, &data, &len), 0, "stopped is the end, and sticky");
            if (from_thread)
                pthread_join(t, NULL);
            hog_reader_close(r);
            stop_fd_untouched(efd);
            close(fds[0]);
            close(fds[1]);
            close(efd);
        }
}

/* Stopped before a byte came: the first read, which tells a compressed
 * stream from a plain one, is woken too, and the read ends with nothing. */
Test(etl_uring, a_stop_fd_ends_a_pipe_that_never_wrote, .timeout = 30)
{
    int fds[2], efd = stop_fd();
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    char path[64], err[256] = "";
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    hog_reader *r;
    cr_assert_eq(hog_reader_open(path, CHUNK, 2, &r, err, sizeof err), 0, "%s", err);
    hog_reader_set_stop(r, efd);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, stop_thread, &efd), 0);
    const char *data;
    size_t len;
    cr_assert_eq(hog_reader_next(r, &data, &len), 0, "%s", err);
    cr_assert_eq(hog_reader_stopped(r), 1);
    pthread_join(t, NULL);
    hog_reader_close(r);
    close(fds[0]);
    close(fds[1]);
    close(efd);
}

/* A compressed stream stopped is not a truncated one: no error, the end. */
Test(etl_uring, a_compressed_pipe_stopped_ends_without_an_error, .timeout = 30)
{
    const size_t size = 3 * CHUNK + 17;
    unsigned char *d = make_data(size, 5);
    for (int zstd = 0; zstd <= 1; zstd++) {
        size_t cn;
        unsigned char *c = zstd ? zstd_bytes(d, size, &cn) : gzip_bytes(d, size, &cn);
        int fds[2], efd = stop_fd();
        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        cr_assert(cn / 2 < 65536, "half of it fits in the pipe");
        cr_assert_eq(write(fds[1], c, cn / 2), (ssize_t)(cn / 2)); /* the stream goes on, later */
        char path[64], err[256] = "";
        snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
        hog_reader *r;
        cr_assert_eq(hog_reader_open(path, CHUNK, 2, &r, err, sizeof err), 0, "%s", err);
        hog_reader_set_stop(r, efd);
        stop_now(efd);
        const char *data;
        size_t len;
        cr_assert_eq(hog_reader_next(r, &data, &len), 0, "zstd %d: %s", zstd, err);
        cr_assert_eq(hog_reader_stopped(r), 1);
        cr_assert_eq(hog_reader_next(r, &data, &len), 0);
        hog_reader_close(r);
        stop_fd_untouched(efd);
        close(fds[0]);
        close(fds[1]);
        close(efd);
        free(c);
    }
    free(d);
}

/* A file's reads always end, so the stop fd is looked at before each chunk
 * is handed out: readable from the start, the read ends at once; readable
 * after some chunks, with the next one (those read ahead are dropped);
 * readable only after the file's end, the file was not stopped. The same
 * for the decompressed chunks of a gzip file. */
Test(etl_uring, a_stop_fd_ends_the_read_of_a_file_at_the_next_chunk)
{
    char path[256];
    tmp_path(path, sizeof path, "/var/tmp", "stop");
    const size_t size = 6 * CHUNK + 321;
    unsigned char *d = make_data(size, 3);
    for (int gz = 0; gz <= 1; gz++) {
        size_t n = size;
        unsigned char *bytes = gz ? gzip_bytes(d, size, &n) : d;
        write_file(path, bytes, n);
        for (int after = 0; after <= 7; after++) { /* chunks read before the stop fd is readable */
            int efd = stop_fd();
            char err[256] = "";
            hog_reader *r;
            cr_assert_eq(hog_reader_open(path, CHUNK, 4, &r, err, sizeof err), 0, "%s", err);
            hog_reader_set_stop(r, efd);
            const char *data;
            size_t len, got = 0;
            int rc = 1, k = 0;
            for (; k < after && (rc = hog_reader_next(r, &data, &len)) == 1; k++) {
                cr_assert(memcmp(data, d + got, len) == 0, "gz %d: chunk %d differs", gz, k);
                got += len;
                hog_reader_release(r, data);
            }
            cr_assert_geq(rc, 0, "%s", err);
            const int ended = got == size;
            stop_now(efd);
            cr_assert_eq(hog_reader_next(r, &data, &len), 0, "gz %d after %d: %s", gz, after, err);
            cr_assert_eq(hog_reader_stopped(r), !ended, "gz %d after %d chunks (%zu of %zu bytes)", gz, after, got,
                         size);
            cr_assert_eq(hog_reader_next(r, &data, &len), 0);
            hog_reader_close(r);
            stop_fd_untouched(efd);
            close(efd);
        }
        if (gz)
            free(bytes);
    }
    free(d);
    unlink(path);
}
