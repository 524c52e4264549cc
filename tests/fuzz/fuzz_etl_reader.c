/* fuzz_etl_reader.c: libFuzzer target for text read through the chunked reader: plain, gzip or zstd (one or two members), in 4 KiB chunks; the bytes and the ratings read must be the same as from the plain text. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <zlib.h>
#include <zstd.h>

#include "etl/etl.h"

#include "fuzz_file_common.h"

/* The first byte picks how the text is stored and who reads it:
 *   bits 0-1  0 plain, 1 gzip, 2 zstd, 3 the bytes as they are (a corrupt
 *             compressed stream, when they start with a magic)
 *   bit 2     compressed in two members (gzip) or frames (zstd), cut at the
 *             second byte's share of the text
 *   bit 3     0 the reader alone, 1 ratings
 * The second byte, besides the cut, says for ratings whether pairs are
 * allowed (bit 0).
 * A data set is not read here: the text pipeline's reader pins 32 MiB of
 * buffers at each open (60 ms under the sanitizers, a hundred times the
 * rest of a run), and its chunks are the reader's, which these runs check.
 * The rest is the text. */

static int plain_fd = -1;
static char plain_path[64];

/* Compresses src into dst (cap bytes) as one gzip member. */
static size_t deflate_gzip(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    FUZZ_CHECK(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)cap;
    FUZZ_CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
    size_t got = z.total_out;
    deflateEnd(&z);
    return got;
}

static size_t compress_part(int how, const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
    if (how == 1)
        return deflate_gzip(src, n, dst, cap);
    size_t got = ZSTD_compress(dst, cap, src, n, 1);
    FUZZ_CHECK(!ZSTD_isError(got));
    return got;
}

/* The text as gzip (how 1) or zstd (2), in two members or frames when two
 * is set: a new buffer, *out_len bytes, to free. */
static uint8_t *compress_text(int how, int two, uint8_t cut, const uint8_t *src, size_t n, size_t *out_len)
{
    size_t cap = 2 * (ZSTD_compressBound(n) + compressBound((uLong)n)) + 64;
    uint8_t *dst = malloc(cap);
    FUZZ_CHECK(dst);
    size_t first = two ? n * cut / 255 : n;
    size_t got = compress_part(how, src, first, dst, cap);
    if (two)
        got += compress_part(how, src + first, n - first, dst + got, cap - got);
    *out_len = got;
    return dst;
}

/* The text starts with gzip's, zstd's or the binary ratings file's magic:
 * as a plain file it is not read as text. */
static int starts_with_magic(const uint8_t *t, size_t n)
{
    static const uint8_t gz[2] = {0x1f, 0x8b}, zst[4] = {0x28, 0xb5, 0x2f, 0xfd};
    return (n >= 2 && memcmp(t, gz, 2) == 0) || (n >= 4 && memcmp(t, zst, 4) == 0) ||
           (n >= 8 && memcmp(t, HOG_HGR_MAGIC, 8) == 0);
}

/* Everything hog_reader hands out, in 4 KiB chunks. Returns 0 or its error. */
static int read_all(const char *path, uint8_t **out, size_t *len, char *err, size_t err_len)
{
    hog_reader *rd;
    *out = NULL;
    *len = 0;
    int rc = hog_reader_open(path, 4096, 2, &rd, err, err_len);
    if (rc < 0)
        return rc;
    size_t cap = 0;
    const char *data;
    size_t n;
    while ((rc = hog_reader_next(rd, &data, &n)) == 1) {
        FUZZ_CHECK(n > 0 && n <= 4096);
        void *p = *out;
        FUZZ_CHECK(hog_array_grow(&p, &cap, *len + n, 1, 4096) == 0);
        *out = p;
        memcpy(*out + *len, data, n);
        *len += n;
        hog_reader_release(rd, data);
    }
    hog_reader_close(rd);
    return rc;
}

/* The message after "path" is the same for both files. */
static void check_same_error(const char *a, const char *pa, const char *b, const char *pb)
{
    FUZZ_CHECK(strncmp(a, pa, strlen(pa)) == 0 && strncmp(b, pb, strlen(pb)) == 0);
    FUZZ_CHECK(strcmp(a + strlen(pa), b + strlen(pb)) == 0);
}

static void check_same_ratings(const hog_ratings *a, const hog_ratings *b)
{
    hog_ratings_info x, y;
    hog_ratings_get_info(a, &x);
    hog_ratings_get_info(b, &y);
    FUZZ_CHECK(x.ratings == y.ratings && x.users == y.users && x.items == y.items &&
               x.has_ratings == y.has_ratings && x.fingerprint == y.fingerprint);
    for (uint64_t i = 0; i < x.ratings; i++) {
        uint32_t u1, i1, u2, i2;
        float r1, r2;
        hog_ratings_get(a, i, &u1, &i1, &r1);
        hog_ratings_get(b, i, &u2, &i2, &r2);
        FUZZ_CHECK(u1 == u2 && i1 == i2 && memcmp(&r1, &r2, 4) == 0);
        FUZZ_CHECK(strcmp(hog_ratings_user_name(a, u1), hog_ratings_user_name(b, u2)) == 0);
        FUZZ_CHECK(strcmp(hog_ratings_item_name(a, i1), hog_ratings_item_name(b, i2)) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const uint8_t o = data[0], cut = data[1];
    const uint8_t *text = data + 2;
    const size_t n = size - 2;
    const int how = o & 3, two = (o >> 2) & 1, ratings = (o >> 3) & 1;
    if (plain_fd < 0)
        fuzz_file_at(&plain_fd, plain_path, "", 0);

    size_t stored_len = n;
    uint8_t *stored = how == 1 || how == 2 ? compress_text(how, two, cut, text, n, &stored_len) : NULL;
    const char *path = fuzz_file(stored ? stored : text, stored_len);
    /* what is read must be the text: compressed, or plain text that does
     * not look compressed */
    const int same = how == 1 || how == 2 || (how == 0 && !starts_with_magic(text, n));
    char err[512] = "", err2[512] = "";

    if (!ratings) {
        uint8_t *got;
        size_t len;
        int rc = read_all(path, &got, &len, err, sizeof(err));
        FUZZ_CHECK(rc == 0 || !same);
        if (rc == 0 && same)
            FUZZ_CHECK(len == n && (n == 0 || memcmp(got, text, n) == 0));
        if (rc < 0)
            fuzz_check_message(err, path);
        free(got);
    } else {
        hog_ratings *a = NULL, *b = NULL;
        int ra = hog_ratings_open_in_chunks(path, cut & 1, 4096, &a, err, sizeof(err));
        if (ra < 0)
            fuzz_check_message(err, path);
        /* the plain text in larger chunks: the lines cut elsewhere (unless
         * the text starts as a compressed or binary ratings file would) */
        if (same && !starts_with_magic(text, n)) {
            fuzz_file_at(&plain_fd, plain_path, text, n);
            int rb = hog_ratings_open_in_chunks(plain_path, cut & 1, 65536, &b, err2, sizeof(err2));
            FUZZ_CHECK(ra == rb);
            if (ra == 0)
                check_same_ratings(a, b);
            else
                check_same_error(err, path, err2, plain_path);
        }
        hog_ratings_close(a);
        hog_ratings_close(b);
    }
    free(stored);
    fuzz_check_fds();
    return 0;
}
