/* test_compress.h: data compressed in memory with gzip and zstd, for the tests of the compressed-input paths. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_COMPRESS_H
#define HOG_TEST_COMPRESS_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* d[0..n) as one gzip member; the caller frees the result. */
static inline unsigned char *gzip_bytes(const void *d, size_t n, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    cr_assert_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = deflateBound(&zs, n) + 64;
    unsigned char *c = malloc(cap);
    zs.next_in = (unsigned char *)(uintptr_t)d;
    zs.avail_in = (uInt)n;
    zs.next_out = c;
    zs.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    *out_len = zs.total_out;
    deflateEnd(&zs);
    return c;
}

/* d[0..n) as one zstd frame; the caller frees the result. */
static inline unsigned char *zstd_bytes(const void *d, size_t n, size_t *out_len)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    /* The checksum makes any corruption detectable, as the zstd command does. */
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t cap = ZSTD_compressBound(n);
    unsigned char *c = malloc(cap);
    size_t z = ZSTD_compress2(cc, c, cap, d, n);
    cr_assert(!ZSTD_isError(z), "%s", ZSTD_getErrorName(z));
    ZSTD_freeCCtx(cc);
    *out_len = z;
    return c;
}

#endif /* HOG_TEST_COMPRESS_H */
