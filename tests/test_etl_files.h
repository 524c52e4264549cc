/* test_etl_files.h: what the data set tests share: files in the scratch folder, a seeded libsvm file, opening one, and comparing two data sets row by row or two files byte by byte. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TEST_ETL_FILES_H
#define HOG_TEST_ETL_FILES_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

#include "test_scratch.h"

static inline const char *path_of(char *out, const char *name)
{
    snprintf(out, 256, "%s/%s", dir, name);
    return out;
}

static inline void write_bytes(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static inline uint8_t *read_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n + 1);
    cr_assert_not_null(buf);
    cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Writes a copy of the .hgd at src to bad with one bit flipped halfway
 * through, in a block's arrays (the block table at the end is small), and
 * puts into want (len bytes) the message a check at open gives of it,
 * which must name a block's checksum. */
static inline void hgd_bad_block(const char *src, const char *bad, char *want, size_t len)
{
    size_t n;
    uint8_t *b = read_bytes(src, &n);
    b[n / 2] ^= 0x40;
    write_bytes(bad, b, n);
    free(b);
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(bad, NULL, &ds, want, len), HOG_ECHECKSUM, "%s", want);
    cr_assert(strstr(want, ": block ") && strstr(want, "checksum mismatch"), "%s", want);
}

/* The header's own checksum, recomputed after a test changed a field. */
static inline void hgd_reseal_header(uint8_t *f)
{
    memset(f + 88, 0, 8);
    uint64_t sum = hog_hash64(f, HOG_HGD_HEADER_BYTES, 0);
    memcpy(f + 88, &sum, 8);
}

/* The summary's checksum, chained over its arrays (etl.h), then the
 * header's: after a test changed the summary at s. */
static inline void hgd_reseal_summary(uint8_t *f)
{
    uint64_t at, sum;
    memcpy(&at, f + 224, 8);
    const uint8_t *s = f + at;
    uint32_t labels, degrees;
    memcpy(&labels, s, 4);
    memcpy(&degrees, s + 4, 4);
    uint64_t listed = labels == HOG_HGD_MANY_LABELS ? 0 : labels;
    sum = hog_hash64(s, 8, 0);
    sum = hog_hash64(s + 8, 8 * listed, sum);
    sum = hog_hash64(s + 8 + 8 * listed, 8 * listed, sum);
    sum = hog_hash64(s + 8 + 16 * listed, 4 * (uint64_t)degrees, sum);
    memcpy(f + 240, &sum, 8);
    hgd_reseal_header(f);
}

/* Writes the version-3 .hgd at src to dst as version 2 would have it,
 * without a summary (its bytes stay between the blocks and the table,
 * where a version 2 reader does not look): a file whose trainer scans. */
static inline void hgd_without_summary(const char *src, const char *dst)
{
    size_t n;
    uint8_t *f = read_bytes(src, &n);
    uint32_t version = 2, flags;
    memcpy(&flags, f + 48, 4);
    cr_assert(flags & HOG_HGD_SUMMARY, "%s has no summary", src);
    flags &= ~HOG_HGD_SUMMARY;
    memcpy(f + 8, &version, 4);
    memcpy(f + 48, &flags, 4);
    memset(f + 224, 0, 24);
    hgd_reseal_header(f);
    write_bytes(dst, f, n);
    free(f);
}

/* Files in the scratch folder, to prove no temporary was left behind. */
static inline int count_files(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* A reproducible libsvm file: rows with 0..12 increasing indices below 500, some empty. */
static inline void make_libsvm(const char *path, uint32_t rows)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    hog_rng rng = {42};
    for (uint32_t r = 0; r < rows; r++) {
        fprintf(f, "%d", (int)hog_rng_below(&rng, 3) - 1);
        uint32_t idx = 0, n = hog_rng_below(&rng, 13);
        for (uint32_t k = 0; k < n; k++) {
            idx += 1 + hog_rng_below(&rng, 40);
            fprintf(f, " %u:%.6g", idx, (double)hog_rng_below(&rng, 2000) / 100.0 - 10.0);
        }
        fputc('\n', f);
    }
    cr_assert_eq(fclose(f), 0);
}

/* Same rows, labels, weights, indices and values, and the same shape. */
static inline void assert_same_content(const hog_dataset *a, const hog_dataset *b)
{
    hog_dataset_info ia, ib;
    hog_dataset_get_info(a, &ia);
    hog_dataset_get_info(b, &ib);
    cr_assert_eq(ia.rows, ib.rows);
    cr_assert_eq(ia.features, ib.features);
    cr_assert_eq(ia.nnz, ib.nnz);
    cr_assert_eq(ia.blocks, ib.blocks);
    cr_assert_eq(ia.rows_per_block, ib.rows_per_block);
    cr_assert_eq(ia.weighted, ib.weighted);
    for (uint64_t i = 0; i < ia.rows; i++) {
        hog_row x = hog_dataset_row(a, i), y = hog_dataset_row(b, i);
        cr_assert_eq(x.nnz, y.nnz, "row %lu", (unsigned long)i);
        cr_assert_eq(memcmp(&x.label, &y.label, sizeof(float)), 0, "row %lu", (unsigned long)i);
        cr_assert_eq(memcmp(&x.weight, &y.weight, sizeof(float)), 0, "row %lu", (unsigned long)i);
        cr_assert_eq(memcmp(x.index, y.index, x.nnz * sizeof(uint32_t)), 0);
        cr_assert_eq(memcmp(x.value, y.value, x.nnz * sizeof(float)), 0);
    }
}

/* ... and the same fingerprint (version 1 files keep their CRC-based one). */
static inline void assert_same_rows(const hog_dataset *a, const hog_dataset *b)
{
    hog_dataset_info ia, ib;
    hog_dataset_get_info(a, &ia);
    hog_dataset_get_info(b, &ib);
    cr_assert_eq(ia.fingerprint, ib.fingerprint);
    assert_same_content(a, b);
}

/* The two files hold the same bytes. */
static inline void assert_same_bytes(const char *path_a, const char *path_b)
{
    size_t la, lb;
    uint8_t *a = read_bytes(path_a, &la), *b = read_bytes(path_b, &lb);
    cr_assert_eq(la, lb, "%s: %zu bytes, %s: %zu", path_a, la, path_b, lb);
    cr_assert_eq(memcmp(a, b, la), 0, "%s and %s differ", path_a, path_b);
    free(a);
    free(b);
}

static inline hog_dataset *open_ok(const char *path, const hog_read_params *p)
{
    char err[512] = "";
    hog_dataset *ds = NULL;
    int rc = hog_dataset_open(path, p, &ds, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s: %s (%s)", path, hog_strerror(rc), err);
    return ds;
}

#endif /* HOG_TEST_ETL_FILES_H */
