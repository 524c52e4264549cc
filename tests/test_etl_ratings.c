/* test_etl_ratings.c: ratings: plain, gzip, zstd, piped and chunk-cut text read alike; the .hgr file; located errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "etl/etl.h"

#include "test_compress.h"
#include "test_scratch.h"

static void setup(void)
{
    scratch_make("ratings");
}

TestSuite(etl_ratings, .init = setup, .fini = scratch_remove);

/* The reader's smallest chunk (a page): many boundaries in a small file. */
#define SMALL_CHUNK ((size_t)4096)

/* ---- helpers ---- */

static char *path_of(const char *name)
{
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
    return buf[k];
}

static void write_bytes(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *name, const char *text)
{
    write_bytes(name, text, strlen(text));
}

/* Writes text compressed with gzip (zstd set: zstd) to name. */
static void write_compressed(const char *name, const char *text, size_t n, int zstd)
{
    size_t cn;
    unsigned char *c = zstd ? zstd_bytes(text, n, &cn) : gzip_bytes(text, n, &cn);
    write_bytes(name, c, cn);
    free(c);
}

static hog_ratings *open_chunked(const char *path, int pairs, size_t chunk)
{
    hog_ratings *r = NULL;
    char err[512] = "";
    int rc = hog_ratings_open_in_chunks(path, pairs, chunk, &r, err, sizeof(err));
    cr_assert_eq(rc, 0, "open %s: %d %s", path, rc, err);
    return r;
}

static hog_ratings *open_ok(const char *name, int pairs)
{
    return open_chunked(path_of(name), pairs, 0);
}

/* The same triples in the same order, the same names for the same ids, the
 * same summary and fingerprint. */
static void assert_same(const hog_ratings *a, const hog_ratings *b, const char *what)
{
    hog_ratings_info x, y;
    hog_ratings_get_info(a, &x);
    hog_ratings_get_info(b, &y);
    cr_assert_eq(x.ratings, y.ratings, "%s: %llu ratings, %llu", what, (unsigned long long)x.ratings,
                 (unsigned long long)y.ratings);
    cr_assert_eq(x.users, y.users, "%s", what);
    cr_assert_eq(x.items, y.items, "%s", what);
    cr_assert_eq(x.has_ratings, y.has_ratings, "%s", what);
    cr_assert_eq(x.fingerprint, y.fingerprint, "%s", what);
    cr_assert_eq(memcmp(&x.mean, &y.mean, sizeof(double)), 0, "%s: mean %g, %g", what, x.mean, y.mean);
    cr_assert_eq(memcmp(&x.min, &y.min, sizeof(double)), 0, "%s", what);
    cr_assert_eq(memcmp(&x.max, &y.max, sizeof(double)), 0, "%s", what);
    for (uint64_t k = 0; k < x.ratings; k++) {
        uint32_t u1, i1, u2, i2;
        float r1, r2;
        hog_ratings_get(a, k, &u1, &i1, &r1);
        hog_ratings_get(b, k, &u2, &i2, &r2);
        cr_assert(u1 == u2 && i1 == i2 && memcmp(&r1, &r2, sizeof(float)) == 0,
                  "%s: triple %llu is (%u, %u, %g), not (%u, %u, %g)", what, (unsigned long long)k, u2, i2,
                  (double)r2, u1, i1, (double)r1);
    }
    for (uint32_t u = 0; u < x.users; u++)
        cr_assert_str_eq(hog_ratings_user_name(a, u), hog_ratings_user_name(b, u), "%s", what);
    for (uint32_t i = 0; i < x.items; i++)
        cr_assert_str_eq(hog_ratings_item_name(a, i), hog_ratings_item_name(b, i), "%s", what);
}

/* Ratings text with everything the reader accepts: a header, comments,
 * blank lines, CRLF, spaces, tabs and commas, timestamps, string and
 * numeric names, signs and exponents, and a last line without a newline.
 * Line k (k from 0) rates item k % 13 by user k % 97 with (k % 10) / 2 - 1,
 * and the lines are 15 to 60 bytes long so chunk boundaries fall everywhere
 * in them. Returns a string to free; *lines is the count of triples. */
static char *sample_text(unsigned n, unsigned *lines)
{
    size_t cap = 96 * (size_t)n + 64, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len, "user,item,rating,timestamp\n");
    for (unsigned k = 0; k < n; k++) {
        unsigned u = k % 97, i = k % 13;
        double v = (k % 10) / 2.0 - 1;
        char *at = t + len;
        size_t room = cap - len;
        int w;
        switch (k % 7) {
        case 0: w = snprintf(at, room, "u%u,item-%u,%g,%u\n", u, i, v, 1000000 + k); break;
        case 1: w = snprintf(at, room, "u%u\titem-%u\t%g\r\n", u, i, v); break;
        case 2: w = snprintf(at, room, "  u%u  item-%u   %.3e  \n", u, i, v); break;
        case 3: w = snprintf(at, room, "# a comment, then a blank line\n\nu%u , item-%u , %+g\n", u, i, v); break;
        case 4: w = snprintf(at, room, "u%u item-%u %g 1700000000 and more fields here\n", u, i, v); break;
        case 5: w = snprintf(at, room, "u%u,item-%u,%.17g\r\n", u, i, v); break;
        default: w = snprintf(at, room, "u%u item-%u %g\n", u, i, v); break;
        }
        len += (size_t)w;
    }
    len += (size_t)snprintf(t + len, cap - len, "last-user last-item 4.5");
    *lines = n + 1;
    return t;
}

/* Checks every triple of r against sample_text's rule. */
static void assert_sample(const hog_ratings *r, unsigned lines)
{
    hog_ratings_info in;
    hog_ratings_get_info(r, &in);
    cr_assert_eq(in.ratings, lines);
    char want[64];
    for (unsigned k = 0; k + 1 < lines; k++) {
        uint32_t u, i;
        float v;
        hog_ratings_get(r, k, &u, &i, &v);
        snprintf(want, sizeof(want), "u%u", k % 97);
        cr_assert_str_eq(hog_ratings_user_name(r, u), want, "line %u", k);
        snprintf(want, sizeof(want), "item-%u", k % 13);
        cr_assert_str_eq(hog_ratings_item_name(r, i), want, "line %u", k);
        cr_assert_eq(v, (float)((k % 10) / 2.0 - 1), "line %u: %g", k, (double)v);
    }
    uint32_t u, i;
    float v;
    hog_ratings_get(r, lines - 1, &u, &i, &v);
    cr_assert_str_eq(hog_ratings_user_name(r, u), "last-user");
    cr_assert_eq(v, 4.5f);
}

typedef struct pipe_writer {
    int fd;
    const unsigned char *data;
    size_t n;
} pipe_writer;

/* Writes the bytes in pieces of 1 to 10,000 bytes, then closes the pipe. */
static void *write_pipe(void *v)
{
    pipe_writer *w = v;
    hog_rng rng = {w->n};
    for (size_t at = 0; at < w->n;) {
        size_t piece = 1 + hog_rng_below(&rng, 10000);
        ssize_t k = write(w->fd, w->data + at, HOG_MIN(piece, w->n - at));
        if (k <= 0)
            break; /* the reader went away: the test fails on what it read */
        at += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

/* Opens ratings from a pipe a thread writes bytes[0..n) into, by the pipe's
 * /proc path (as /dev/stdin is one), in chunks of chunk bytes. */
static int open_pipe(const void *bytes, size_t n, size_t chunk, hog_ratings **r, char *err, size_t err_len)
{
    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    pipe_writer w = {fds[1], bytes, n};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_pipe, &w), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    int rc = hog_ratings_open_in_chunks(path, 0, chunk, r, err, err_len);
    close(fds[0]);
    pthread_join(t, NULL);
    return rc;
}

static hog_ratings *open_pipe_ok(const void *bytes, size_t n, size_t chunk)
{
    hog_ratings *r = NULL;
    char err[512] = "";
    int rc = open_pipe(bytes, n, chunk, &r, err, sizeof(err));
    cr_assert_eq(rc, 0, "open a pipe: %d %s", rc, err);
    return r;
}

/* ---- compressed files and pipes ---- */

Test(etl_ratings, gzip_and_zstd_read_as_the_plain_file)
{
    unsigned lines;
    char *text = sample_text(3000, &lines);
    size_t n = strlen(text);
    write_bytes("r.txt", text, n);
    write_compressed("r.txt.gz", text, n, 0);
    write_compressed("r.txt.zst", text, n, 1);
    hog_ratings *plain = open_ok("r.txt", 0), *gz = open_ok("r.txt.gz", 0), *zst = open_ok("r.txt.zst", 0);
    assert_sample(plain, lines);
    assert_same(plain, gz, "gzip");
    assert_same(plain, zst, "zstd");
    /* file_bytes is the size of the file as it is stored. */
    struct stat st;
    hog_ratings_info in;
    cr_assert_eq(stat(path_of("r.txt.gz"), &st), 0);
    hog_ratings_get_info(gz, &in);
    cr_assert_eq(in.file_bytes, (uint64_t)st.st_size);
    cr_assert_eq(in.binary, 0);
    hog_ratings_get_info(plain, &in);
    cr_assert_eq(in.file_bytes, n);
    hog_ratings_close(plain);
    hog_ratings_close(gz);
    hog_ratings_close(zst);
    free(text);
}

Test(etl_ratings, a_pipe_reads_as_the_plain_file, .timeout = 60)
{
    unsigned lines;
    char *text = sample_text(3000, &lines);
    size_t n = strlen(text);
    write_bytes("r.txt", text, n);
    hog_ratings *plain = open_ok("r.txt", 0);
    hog_ratings *piped = open_pipe_ok(text, n, 0);
    assert_same(plain, piped, "pipe");
    hog_ratings_info in;
    hog_ratings_get_info(piped, &in);
    cr_assert_eq(in.file_bytes, n, "what came down the pipe: %llu bytes of %zu", (unsigned long long)in.file_bytes,
                 n);
    hog_ratings_close(piped);
    /* Compressed in a pipe, and in small chunks, so lines cross chunk ends too. */
    size_t cn;
    unsigned char *c = zstd_bytes(text, n, &cn);
    piped = open_pipe_ok(c, cn, SMALL_CHUNK);
    assert_same(plain, piped, "zstd in a pipe");
    hog_ratings_close(piped);
    free(c);
    hog_ratings_close(plain);
    free(text);
}

/* ---- lines cut by chunk boundaries ---- */

/* The same text read in 4096-byte chunks and in one chunk, with the start
 * shifted byte by byte so that every position of a line (inside a name, a
 * separator, the number, between '\r' and '\n') meets a chunk's end. */
Test(etl_ratings, lines_cut_by_chunk_boundaries_read_whole)
{
    unsigned lines;
    char *text = sample_text(700, &lines);
    size_t n = strlen(text);
    cr_assert_gt(n, 4 * SMALL_CHUNK);
    char *shifted = malloc(n + 80);
    for (unsigned shift = 0; shift < 64; shift++) {
        memset(shifted, '#', shift + 1);
        shifted[shift + 1] = '\n';
        memcpy(shifted + shift + 2, text, n);
        write_bytes("s.txt", shifted, n + shift + 2);
        hog_ratings *whole = open_ok("s.txt", 0);
        hog_ratings *cut = open_chunked(path_of("s.txt"), 0, SMALL_CHUNK);
        char what[32];
        snprintf(what, sizeof(what), "shift %u", shift);
        assert_sample(cut, lines);
        assert_same(whole, cut, what);
        hog_ratings_close(whole);
        hog_ratings_close(cut);
    }
    /* And compressed: the decompressed chunks are cut elsewhere. */
    write_compressed("s.txt.gz", text, n, 0);
    hog_ratings *gz = open_chunked(path_of("s.txt.gz"), 0, SMALL_CHUNK);
    assert_sample(gz, lines);
    hog_ratings_close(gz);
    free(shifted);
    free(text);
}

/* A line longer than two chunks (a long ignored field) is carried whole. */
Test(etl_ratings, a_line_longer_than_two_chunks_is_carried_whole)
{
    size_t pad = 3 * SMALL_CHUNK;
    char *text = malloc(pad + 256);
    size_t len = (size_t)sprintf(text, "a b 1\nlong-user long-item 2.5 ");
    memset(text + len, 'x', pad);
    len += pad;
    len += (size_t)sprintf(text + len, "\nc d 3\n");
    write_bytes("long.txt", text, len);
    hog_ratings *cut = open_chunked(path_of("long.txt"), 0, SMALL_CHUNK), *whole = open_ok("long.txt", 0);
    assert_same(whole, cut, "a long line");
    hog_ratings_info in;
    hog_ratings_get_info(cut, &in);
    cr_assert_eq(in.ratings, 3);
    cr_assert_str_eq(hog_ratings_user_name(cut, 1), "long-user");
    hog_ratings_close(cut);
    hog_ratings_close(whole);
    free(text);
}

/* A line that never ends is refused once it passes HOG_DEFAULT_MAX_LINE,
 * not held until memory runs out. */
Test(etl_ratings, a_line_that_never_ends_is_refused_at_the_bound)
{
    hog_ratings *r = (hog_ratings *)1;
    char err[512] = "", want[128];
    cr_assert_eq(hog_ratings_open("/dev/zero", 0, &r, err, sizeof(err)), HOG_EFORMAT);
    cr_assert_null(r);
    snprintf(want, sizeof(want), "/dev/zero:1: a line longer than %llu bytes", HOG_DEFAULT_MAX_LINE);
    cr_assert_str_eq(err, want);
}

/* More than one chunk of the reader's default size, through the public call. */
Test(etl_ratings, a_file_larger_than_a_default_chunk)
{
    unsigned lines;
    char *text = sample_text(200000, &lines);
    size_t n = strlen(text);
    cr_assert_gt(n, (size_t)5 << 20, "%zu bytes", n);
    write_bytes("big.txt", text, n);
    hog_ratings *r = NULL;
    char err[512] = "";
    cr_assert_eq(hog_ratings_open(path_of("big.txt"), 0, &r, err, sizeof(err)), 0, "%s", err);
    assert_sample(r, lines);
    hog_ratings *cut = open_chunked(path_of("big.txt"), 0, SMALL_CHUNK * 3);
    assert_same(r, cut, "big");
    hog_ratings_close(cut);
    hog_ratings_close(r);
    free(text);
}

/* ---- errors ---- */

static void expect_error(const char *text, int pairs, const char *want)
{
    write_text("bad.txt", text);
    hog_ratings *r = NULL;
    char err[512] = "";
    cr_assert_eq(hog_ratings_open(path_of("bad.txt"), pairs, &r, err, sizeof(err)), HOG_EFORMAT, "%s", text);
    cr_assert_null(r);
    char full[600];
    snprintf(full, sizeof(full), "%s:%s", path_of("bad.txt"), want);
    cr_assert_str_eq(err, full);
}

Test(etl_ratings, parse_errors_name_line_and_column)
{
    expect_error("1 2 3\n4 5 x\n", 0, "2:5: expected a finite number (the rating), found 'x'");
    expect_error("1 2 3\n4\n", 0, "2:2: expected a separator and an item, found the end of the line");
    expect_error("1 2 3\n4 5\n", 0, "2:4: expected a separator and a rating, found the end of the line");
    expect_error("1 2 3\n4 5 nan\n", 0, "2:5: expected a finite number (the rating), found 'nan'");
    expect_error("1 2 3\n4,,5\n", 0, "2:3: expected an item, found ','");
    expect_error("1 2\n3 4 5\n", 1, "2:5: expected the end of the line (earlier lines have no rating), found '5'");
    expect_error("1 2 3\n4 5 6x\n", 0, "2:5: expected a finite number (the rating), found '6x'");
    expect_error("1 2 3\n4 5 -1e39\n", 0, "2:5: expected a rating within the float range (|rating| <= 3.4e38), found '-1e39'");
    /* A header is only the first line. */
    expect_error("user item rating\n1 2 3\nuser item rating\n", 0,
                 "3:11: expected a finite number (the rating), found 'rating'");
    write_text("empty.txt", "# nothing\n\n");
    hog_ratings *r = NULL;
    char err[512];
    cr_assert_eq(hog_ratings_open(path_of("empty.txt"), 0, &r, err, sizeof(err)), HOG_EEMPTY);
}

/* A NUL byte inside a name is an error at its place, not a name cut short. */
Test(etl_ratings, a_nul_byte_in_a_name_is_located)
{
    write_bytes("nul.txt", "u i 3\na\0b i 3\n", 14);
    hog_ratings *r = NULL;
    char err[512] = "";
    cr_assert_eq(hog_ratings_open(path_of("nul.txt"), 0, &r, err, sizeof(err)), HOG_EFORMAT);
    cr_assert_null(r);
    char want[600];
    snprintf(want, sizeof(want), "%s:2:2: expected text, found a NUL byte", path_of("nul.txt"));
    cr_assert_str_eq(err, want);
}

/* A compressed file's errors name the file, the line and the column of the
 * text, as a plain file's do, also when the line crosses a chunk's end. */
Test(etl_ratings, errors_in_compressed_text_are_located)
{
    hog_ratings *r = NULL;
    char err[512] = "", want[600];
    const char *bad = "1 2 3\n4 5 x\n";
    for (int zstd = 0; zstd <= 1; zstd++) {
        const char *name = zstd ? "bad.zst" : "bad.gz";
        write_compressed(name, bad, strlen(bad), zstd);
        cr_assert_eq(hog_ratings_open(path_of(name), 0, &r, err, sizeof(err)), HOG_EFORMAT);
        cr_assert_null(r);
        snprintf(want, sizeof(want), "%s:2:5: expected a finite number (the rating), found 'x'", path_of(name));
        cr_assert_str_eq(err, want);
    }
    /* Line 3's rating, "4.5x", crosses the first chunk's end. */
    char text[SMALL_CHUNK + 64];
    size_t len = (size_t)sprintf(text, "a b 1\n");
    memset(text + len, '#', SMALL_CHUNK - 22);
    len += SMALL_CHUNK - 22;
    len += (size_t)sprintf(text + len, "\nuser12 item3 4.5x\n");
    cr_assert_eq(memcmp(text + SMALL_CHUNK - 2, "4.5x", 4), 0);
    write_compressed("cut.gz", text, len, 0);
    cr_assert_eq(hog_ratings_open_in_chunks(path_of("cut.gz"), 0, SMALL_CHUNK, &r, err, sizeof(err)), HOG_EFORMAT);
    snprintf(want, sizeof(want), "%s:3:14: expected a finite number (the rating), found '4.5x'", path_of("cut.gz"));
    cr_assert_str_eq(err, want);
}

Test(etl_ratings, a_damaged_compressed_file_is_refused_by_name)
{
    unsigned lines;
    char *text = sample_text(2000, &lines);
    size_t n = strlen(text), cn;
    unsigned char *c = gzip_bytes(text, n, &cn);
    write_bytes("cut.gz", c, cn / 2);
    hog_ratings *r = NULL;
    char err[512] = "", want[600];
    cr_assert_eq(hog_ratings_open(path_of("cut.gz"), 0, &r, err, sizeof(err)), HOG_EFORMAT, "%s", err);
    cr_assert_null(r);
    snprintf(want, sizeof(want), "%s: corrupt gzip stream at compressed byte offset", path_of("cut.gz"));
    cr_assert_eq(strncmp(err, want, strlen(want)), 0, "%s", err);
    free(c);
    free(text);
}

/* ---- the binary ratings file ---- */

Test(etl_ratings, binary_ratings_round_trip_and_damage_is_refused)
{
    write_text("t.txt", "# a comment\n7 a 1.5\r\n8\tb\t2\n7, b ,3.25, 123456\n\n9 c -0.5\n");
    hog_ratings *r = open_ok("t.txt", 0);
    hog_ratings_info ti;
    hog_ratings_get_info(r, &ti);
    cr_assert_eq(ti.ratings, 4);
    cr_assert_eq(ti.users, 3);
    cr_assert_eq(ti.items, 3);
    cr_assert_float_eq(ti.mean, (1.5 + 2 + 3.25 - 0.5) / 4, 1e-12);
    const char *path = path_of("t.hgr");
    cr_assert_eq(hog_ratings_save(r, path), 0);
    hog_ratings *b = open_ok("t.hgr", 0);
    hog_ratings_info bi;
    hog_ratings_get_info(b, &bi);
    cr_assert_eq(bi.binary, 1);
    cr_assert_eq(bi.ratings, 4);
    cr_assert_eq(bi.fingerprint, ti.fingerprint);
    for (uint64_t k = 0; k < 4; k++) {
        uint32_t u1, i1, u2, i2;
        float r1, r2;
        hog_ratings_get(r, k, &u1, &i1, &r1);
        hog_ratings_get(b, k, &u2, &i2, &r2);
        cr_assert_str_eq(hog_ratings_user_name(r, u1), hog_ratings_user_name(b, u2));
        cr_assert_str_eq(hog_ratings_item_name(r, i1), hog_ratings_item_name(b, i2));
        cr_assert_eq(r1, r2);
    }
    cr_assert_str_eq(hog_ratings_user_name(b, 2), "9");
    cr_assert_null(hog_ratings_user_name(b, 3));
    hog_ratings_close(b);
    char err[512] = "";
    flip_byte(path, 64 + 12 + 8); /* the second triple's rating */
    cr_assert_eq(hog_ratings_open(path, 0, &b, err, sizeof(err)), HOG_ECHECKSUM);
    cr_assert_null(b);
    cr_assert_eq(hog_ratings_save(r, path), 0);
    flip_byte(path, 16); /* the count, in the header */
    cr_assert_eq(hog_ratings_open(path, 0, &b, err, sizeof(err)), HOG_ECHECKSUM);
    cr_assert(strstr(err, "header"), "%s", err);
    cr_assert_eq(hog_ratings_save(r, path), 0);
    cr_assert_eq(truncate(path, 80), 0);
    cr_assert_eq(hog_ratings_open(path, 0, &b, err, sizeof(err)), HOG_ETRUNCATED);
    hog_ratings_close(r);
}

/* A pairs file (no ratings) is written and read back as pairs. */
Test(etl_ratings, a_pairs_file_round_trips_as_pairs)
{
    write_text("p.txt", "u1 i2\nu3,i4\nstranger i2\n");
    hog_ratings *p = open_ok("p.txt", 1);
    cr_assert_eq(hog_ratings_save(p, path_of("p.hgr")), 0);
    hog_ratings *b = open_ok("p.hgr", 1);
    hog_ratings_info in;
    hog_ratings_get_info(b, &in);
    cr_assert_eq(in.binary, 1);
    cr_assert_eq(in.has_ratings, 0);
    assert_same(p, b, "pairs");
    hog_ratings_close(b);
    hog_ratings_close(p);
}

/* A .hgr is mapped in place: compressed or piped, it is refused by name,
 * not parsed as text. */
Test(etl_ratings, a_compressed_or_piped_hgr_is_refused_by_name, .timeout = 60)
{
    write_text("t.txt", "7 a 1.5\n8 b 2\n");
    hog_ratings *r = open_ok("t.txt", 0);
    cr_assert_eq(hog_ratings_save(r, path_of("t.hgr")), 0);
    hog_ratings_close(r);
    FILE *f = fopen(path_of("t.hgr"), "rb");
    cr_assert_not_null(f);
    unsigned char hgr[4096];
    size_t n = fread(hgr, 1, sizeof(hgr), f);
    fclose(f);
    write_compressed("t.hgr.zst", (const char *)hgr, n, 1);
    char err[512] = "";
    cr_assert_eq(hog_ratings_open(path_of("t.hgr.zst"), 0, &r, err, sizeof(err)), -EINVAL);
    cr_assert_null(r);
    cr_assert(strstr(err, "t.hgr.zst: a binary ratings file (.hgr) is mapped"), "%s", err);
    cr_assert_eq(open_pipe(hgr, n, 0, &r, err, sizeof(err)), -EINVAL);
    cr_assert_null(r);
    cr_assert(strstr(err, ": a binary ratings file (.hgr) is mapped"), "%s", err);
}

/* ---- batch by batch ---- */

/* What hog_ratings_each handed on: every triple, by name, in order. */
typedef struct each_seen {
    unsigned batches, stop_at;
    uint64_t n;
    char (*user)[32], (*item)[32];
    float *rating;
    uint32_t max_user;
} each_seen;

static int each_keep(void *ctx, const hog_ratings *b)
{
    each_seen *s = ctx;
    if (++s->batches == s->stop_at)
        return -42;
    hog_ratings_info in;
    hog_ratings_get_info(b, &in);
    cr_assert_gt(in.ratings, 0, "an empty batch");
    cr_assert_geq(in.users, s->max_user, "the ids of earlier batches are kept");
    s->max_user = (uint32_t)in.users;
    for (uint64_t k = 0; k < in.ratings; k++, s->n++) {
        uint32_t u, i;
        hog_ratings_get(b, k, &u, &i, &s->rating[s->n]);
        snprintf(s->user[s->n], 32, "%s", hog_ratings_user_name(b, u));
        snprintf(s->item[s->n], 32, "%s", hog_ratings_item_name(b, i));
    }
    return 0;
}

static void assert_each_is_whole(const each_seen *s, const hog_ratings *r)
{
    hog_ratings_info in;
    hog_ratings_get_info(r, &in);
    cr_assert_eq(s->n, in.ratings);
    for (uint64_t k = 0; k < in.ratings; k++) {
        uint32_t u, i;
        float v;
        hog_ratings_get(r, k, &u, &i, &v);
        cr_assert_str_eq(s->user[k], hog_ratings_user_name(r, u), "triple %llu", (unsigned long long)k);
        cr_assert_str_eq(s->item[k], hog_ratings_item_name(r, i), "triple %llu", (unsigned long long)k);
        cr_assert_eq(s->rating[k], v, "triple %llu", (unsigned long long)k);
    }
}

static void *write_all(void *v)
{
    pipe_writer *w = v;
    for (size_t at = 0; at < w->n;) {
        ssize_t k = write(w->fd, w->data + at, w->n - at);
        if (k <= 0)
            break;
        at += (size_t)k;
    }
    close(w->fd);
    return NULL;
}

/* A file larger than a chunk and the same text down a pipe come batch by
 * batch: the batches together are the whole read, by name and in order,
 * with ids that earlier batches keep; a function that says stop ends the
 * read with its value; one that is missing is refused. */
Test(etl_ratings, batch_by_batch_is_the_whole_read, .timeout = 60)
{
    unsigned lines;
    char *text = sample_text(120000, &lines);
    const size_t n = strlen(text);
    cr_assert_gt(n, (size_t)3 << 20, "%zu bytes: more than one chunk", n);
    write_bytes("each.txt", text, n);
    hog_ratings *r = open_ok("each.txt", 0);
    each_seen s = {.user = malloc(lines * sizeof(*s.user)), .item = malloc(lines * sizeof(*s.item)),
                   .rating = malloc(lines * sizeof(float))};
    char err[512] = "";
    cr_assert_eq(hog_ratings_each(path_of("each.txt"), 0, each_keep, &s, err, sizeof(err)), 0, "%s", err);
    cr_assert_gt(s.batches, 1, "one batch of %zu bytes", n);
    assert_each_is_whole(&s, r);

    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    pipe_writer w = {fds[1], (const unsigned char *)text, n};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, write_all, &w), 0);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
    s.batches = 0, s.n = 0, s.max_user = 0;
    const int rc = hog_ratings_each(path, 0, each_keep, &s, err, sizeof(err));
    close(fds[0]);
    pthread_join(t, NULL);
    cr_assert_eq(rc, 0, "%s", err);
    assert_each_is_whole(&s, r);

    s.batches = 0, s.n = 0, s.max_user = 0, s.stop_at = 2;
    cr_assert_eq(hog_ratings_each(path_of("each.txt"), 0, each_keep, &s, err, sizeof(err)), -42);
    cr_assert_eq(hog_ratings_each(path_of("each.txt"), 0, NULL, NULL, err, sizeof(err)), HOG_EPARAM);
    hog_ratings_close(r);
    free(s.user);
    free(s.item);
    free(s.rating);
    free(text);
}
