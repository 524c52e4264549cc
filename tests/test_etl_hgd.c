/* test_etl_hgd.c: the .hgd format: the round trip through save and convert, its O_DIRECT writer, weights, version 1 files, and detection of every kind of corrupt file. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etl/etl.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("etl-hgd");
}

TestSuite(etl_hgd, .init = setup, .fini = scratch_remove);

/* ===================================================================== *
 *  Round trip
 * ===================================================================== */

Test(etl_hgd, round_trip_text_memory_hgd)
{
    char txt[256], hgd[256], hgd2[256];
    path_of(txt, "data.svm");
    path_of(hgd, "data.hgd");
    path_of(hgd2, "converted.hgd");
    make_libsvm(txt, 1000);

    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 64;
    hog_dataset *text = open_ok(txt, &p);
    hog_dataset_info ti;
    hog_dataset_get_info(text, &ti);
    cr_assert_eq(ti.format, HOG_FORMAT_LIBSVM);
    cr_assert_eq(ti.rows, 1000);
    cr_assert_eq(ti.blocks, 16);
    struct stat st;
    cr_assert_eq(stat(txt, &st), 0);
    cr_assert_eq(ti.file_bytes, (uint64_t)st.st_size);
    cr_assert_eq(ti.fingerprint, hog_etl_fingerprint(text->blocks, ti.blocks));

    cr_assert_eq(hog_dataset_save(text, hgd), 0);
    hog_dataset *bin = open_ok(hgd, NULL);
    hog_dataset_info bi;
    hog_dataset_get_info(bin, &bi);
    cr_assert_eq(bi.format, HOG_FORMAT_BINARY);
    cr_assert_eq(stat(hgd, &st), 0);
    cr_assert_eq(bi.file_bytes, (uint64_t)st.st_size);
    cr_assert_eq(bi.file_bytes % 8, 0);
    assert_same_rows(text, bin);
    for (uint32_t i = 0; i < bi.blocks; i++)
        cr_assert_eq(bin->blocks[i].sum, text->blocks[i].sum, "block %u", i);

    /* Streaming conversion writes the very same bytes as save. */
    hog_dataset_info ci;
    char err[256] = "";
    cr_assert_eq(hog_dataset_convert(txt, &p, hgd2, &ci, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ci.rows, ti.rows);
    cr_assert_eq(ci.nnz, ti.nnz);
    cr_assert_eq(ci.fingerprint, ti.fingerprint);
    cr_assert_eq(ci.file_bytes, bi.file_bytes);
    assert_same_bytes(hgd, hgd2);

    /* Saving what was mapped gives the same bytes again. */
    char hgd3[256];
    cr_assert_eq(hog_dataset_save(bin, path_of(hgd3, "again.hgd")), 0);
    assert_same_bytes(hgd, hgd3);

    hog_dataset_close(text);
    hog_dataset_close(bin);
    cr_assert_eq(count_files(), 4); /* no temporaries left */
}

/* A writer with O_DIRECT on (what a large convert uses) gathers each block
 * with its padding and keeps several writes in flight: the file is the very
 * same bytes. 16 blocks, so every stage is used again. Where the file
 * system has no O_DIRECT the writer writes buffered and the check holds. */
Test(etl_hgd, direct_writes_give_the_same_bytes)
{
    char txt[256], hgd[256], direct[256];
    make_libsvm(path_of(txt, "data.svm"), 1000);
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 64;
    hog_dataset *text = open_ok(txt, &p);
    cr_assert_eq(hog_dataset_save(text, path_of(hgd, "data.hgd")), 0);

    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path_of(direct, "direct.hgd")), 0);
    int rc = hog_atomic_direct(&f, 1);
    cr_assert(rc == 0 || rc == -EINVAL, "%s", hog_strerror(rc));
    cr_assert_eq(hog_hgd_write(text, NULL, &f), 0);
    cr_assert_eq(f.direct, 0, "the table and header are written buffered");
    cr_assert_eq(hog_atomic_commit(&f), 0);

    assert_same_bytes(hgd, direct);
    hog_dataset_close(text);
    cr_assert_eq(count_files(), 3); /* no temporaries left */
}

/* ===================================================================== *
 *  Corruption: every class is caught, with its code and a message
 * ===================================================================== */

static uint8_t *good;
static size_t good_len;
static uint64_t good_features;

/* A valid file of 10 rows in 4 blocks of 3, loaded into `good`. */
static void make_good(void)
{
    char txt[256], hgd[256];
    static const char text[] =
        "1 1:1 5:2\n0 2:3\n1 7:1\n0 1:1 2:2 3:3\n1\n0 4:4\n1 6:1\n0 8:2\n1 9:1\n0 2:5\n";
    write_bytes(path_of(txt, "g.svm"), text, strlen(text));
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 3;
    p.index_base = 0; /* the byte offsets below assume indices as written */
    char err[256];
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "g.hgd"), &info, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert_eq(info.blocks, 4);
    good_features = info.features;
    good = read_bytes(hgd, &good_len);
    /* the summary: 2 labels, 10 features' degrees, between the blocks and the table */
    cr_assert_eq(good_len, 4096 + 4 * 4096 + (8 + 16 * 2 + 4 * 10) + 4 * 32, "%zu bytes", good_len);
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void wr32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}

static void wr64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* The summary's sum, chained over its arrays (etl.h). */
static uint64_t summary_sum_of(const uint8_t *s)
{
    uint32_t labels = rd32(s), degrees = rd32(s + 4);
    uint64_t listed = labels == HOG_HGD_MANY_LABELS ? 0 : labels;
    uint64_t sum = hog_hash64(s, 8, 0);
    sum = hog_hash64(s + 8, 8 * listed, sum);
    sum = hog_hash64(s + 8 + 8 * listed, 8 * listed, sum);
    return hog_hash64(s + 8 + 16 * listed, 4 * (uint64_t)degrees, sum);
}

/* Recomputes every checksum and the fingerprint, so only the structural
 * checks can object: version 3 (XXH3 sums, the summary's too); version 2
 * (the summary dropped from the header: its bytes stay, unused, between
 * the blocks and the table); or version 1, CRC-32s in version 1's places. */
static void reseal_as(uint8_t *f, uint32_t version)
{
    if (version < 3) {
        wr32(f + 48, rd32(f + 48) & ~HOG_HGD_SUMMARY);
        memset(f + 224, 0, 24);
    } else if (rd32(f + 48) & HOG_HGD_SUMMARY) {
        wr64(f + 240, summary_sum_of(f + rd64(f + 224)));
    }
    uint32_t blocks = rd32(f + 40);
    int weighted = rd32(f + 48) & 1;
    int fielded = (rd32(f + 48) & HOG_HGD_FIELDS) != 0;
    uint8_t *table = f + rd64(f + 56);
    hog_block views[16];
    memset(views, 0, sizeof(views)); /* no field arrays */
    cr_assert_leq(blocks, 16);
    for (uint32_t i = 0; i < blocks; i++) {
        uint8_t *e = table + 32 * i;
        hog_block *v = &views[i];
        v->rows = rd32(e + 16);
        v->nnz = rd32(e + 20);
        v->ptr = (const uint32_t *)(const void *)(f + rd64(e));
        v->index = v->ptr + v->rows + 1;
        v->value = (const float *)(const void *)(v->index + v->nnz);
        v->label = v->value + v->nnz;
        v->weight = weighted ? v->label + v->rows : NULL;
        v->field = fielded ? (const uint16_t *)(const void *)(v->label + v->rows * (weighted ? 2 : 1)) : NULL;
        if (version == 1) {
            v->sum = hog_crc32(0, v->ptr, hog_block_bytes(v->rows, v->nnz, 0));
            wr32(e + 24, (uint32_t)v->sum);
            wr32(e + 28, 0);
        } else {
            v->sum = hog_block_sum(v);
            wr64(e + 24, v->sum);
        }
    }
    wr32(f + 8, version);
    wr64(f + 72, hog_etl_fingerprint(views, blocks));
    if (version == 1) {
        wr64(f + 80, 0);
        wr64(f + 88, 0);
        wr32(f + 80, hog_crc32(0, table, 32 * (size_t)blocks));
        wr32(f + 84, hog_crc32(0, f, 4096));
    } else {
        wr64(f + 80, hog_hash64(table, 32 * (size_t)blocks, 0));
        wr64(f + 88, 0);
        wr64(f + 88, hog_hash64(f, 4096, 0));
    }
}

static void reseal(uint8_t *f)
{
    reseal_as(f, rd32(f + 8));
}

/* Writes len bytes of buf as a file, opens it, and checks the code and that
 * the detail is "PATH: " followed by something containing `want`. */
static void expect_open(const uint8_t *buf, size_t len, int code, const char *want)
{
    char path[256], err[512] = "";
    write_bytes(path_of(path, "bad.hgd"), buf, len);
    hog_dataset *ds = (hog_dataset *)1;
    int rc = hog_dataset_open(path, NULL, &ds, err, sizeof(err));
    cr_assert_eq(rc, code, "got %d (%s), want %d; detail: %s", rc, hog_strerror(rc), code, err);
    if (code == 0) {
        hog_dataset_close(ds);
        return;
    }
    cr_assert_null(ds);
    cr_assert_eq(strncmp(err, path, strlen(path)), 0, "detail does not name the file: %s", err);
    cr_assert(strstr(err, want) != NULL, "detail '%s' lacks '%s'", err, want);
}

static uint8_t *copy_good(void)
{
    uint8_t *c = malloc(good_len + 4096);
    cr_assert_not_null(c);
    memcpy(c, good, good_len);
    return c;
}

Test(etl_hgd, corrupt_block_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[4096 + 2 * 4096 + 10] ^= 0x40; /* inside block 2 */
    expect_open(c, good_len, HOG_ECHECKSUM, ": block 2: checksum mismatch");
    free(c);
}

Test(etl_hgd, of_several_bad_blocks_the_first_is_named)
{
    /* Blocks are checked by several threads; the verdict must not depend on
     * which finishes first. */
    make_good();
    for (int rep = 0; rep < 20; rep++) {
        uint8_t *c = copy_good();
        c[4096 + 3 * 4096 + 10] ^= 0x40; /* block 3 */
        c[4096 + 1 * 4096 + 10] ^= 0x40; /* block 1 */
        expect_open(c, good_len, HOG_ECHECKSUM, ": block 1: checksum mismatch");
        free(c);
    }
}

Test(etl_hgd, corrupt_table_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[good_len - 32 + 20] ^= 1; /* nnz of the last entry */
    expect_open(c, good_len, HOG_ECHECKSUM, ": block table checksum mismatch");
    free(c);
}

Test(etl_hgd, corrupt_header_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[16] ^= 1; /* rows */
    expect_open(c, good_len, HOG_ECHECKSUM, ": header checksum mismatch");
    free(c);
}

Test(etl_hgd, truncated)
{
    make_good();
    char msg[128];
    snprintf(msg, sizeof(msg), ": truncated: header says %zu bytes, file has %zu", good_len,
             good_len - 100);
    expect_open(good, good_len - 100, HOG_ETRUNCATED, msg);
    snprintf(msg, sizeof(msg), ": truncated: header says %zu bytes, file has 100", good_len);
    expect_open(good, 100, HOG_ETRUNCATED, msg);
    expect_open(good, 10, HOG_ETRUNCATED, ": truncated: file has 10 bytes");
}

Test(etl_hgd, wrong_magic_and_empty)
{
    make_good();
    uint8_t *c = copy_good();
    c[0] = 'X';
    expect_open(c, good_len, HOG_EMAGIC, ": not a hogtrain dataset");
    free(c);
    /* an empty file is text to detection (no rows); the binary reader calls it no dataset */
    char path[256], err[256];
    hog_dataset *ds;
    write_bytes(path_of(path, "empty.hgd"), "", 0);
    cr_assert_eq(hog_hgd_open(path, &ds, err, sizeof(err)), HOG_EMAGIC);
    cr_assert(strstr(err, "not a hogtrain dataset") != NULL, "%s", err);
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), HOG_EEMPTY);
    /* format forced to binary on a text file */
    write_bytes(path_of(path, "t.svm"), "1 1:1\n", 6);
    hog_read_params p = hog_read_params_default();
    p.format = HOG_FORMAT_BINARY;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), HOG_EMAGIC);
}

Test(etl_hgd, wrong_version)
{
    make_good();
    uint8_t *c = copy_good();
    wr32(c + 8, 8);
    reseal(c);
    expect_open(c, good_len, HOG_EVERSION, ": version 8, this build reads versions 1 to 7");
    wr32(c + 8, 0);
    reseal(c);
    expect_open(c, good_len, HOG_EVERSION, ": version 0, this build reads versions 1 to 7");
    free(c);
}

/* Version 1 files (CRC-32 checksums) still open, with the same rows; a
 * version 1 file cannot claim weights; rewritten, they become version 3. */
Test(etl_hgd, version_1_is_read)
{
    make_good();
    uint8_t *c = copy_good();
    reseal_as(c, 1);
    char path[256], err[512] = "", out[256];
    write_bytes(path_of(path, "v1.hgd"), c, good_len);
    hog_dataset *v1, *v2;
    cr_assert_eq(hog_dataset_open(path, NULL, &v1, err, sizeof(err)), 0, "%s", err);
    char gpath[256];
    write_bytes(path_of(gpath, "v2.hgd"), good, good_len);
    cr_assert_eq(hog_dataset_open(gpath, NULL, &v2, err, sizeof(err)), 0, "%s", err);
    assert_same_content(v1, v2);
    /* a corrupt byte is caught by the CRC */
    c[4096 + 5] ^= 1;
    expect_open(c, good_len, HOG_ECHECKSUM, ": block 0: checksum mismatch");
    c[4096 + 5] ^= 1;
    wr32(c + 48, 1);
    reseal_as(c, 1);
    expect_open(c, good_len, HOG_ECORRUPT, ": unknown flags 0x1");
    /* saving a version 1 data set writes version 3 with sums and a summary */
    cr_assert_eq(hog_dataset_save(v1, path_of(out, "resaved.hgd")), 0);
    size_t n;
    uint8_t *r = read_bytes(out, &n);
    cr_assert_eq(n, good_len);
    cr_assert_eq(memcmp(r, good, n), 0, "a version 1 file saved again is the version 3 file");
    free(r);
    hog_dataset_close(v1);
    hog_dataset_close(v2);
    free(c);
}

/* Vowpal Wabbit importance weights travel into the blocks, through the
 * binary format and back, and a bad weight in a file is caught. */
Test(etl_hgd, weights_round_trip)
{
    char txt[256], hgd[256], err[512] = "";
    static const char text[] = "1 2.5 |a x y\n-1 |a z\n1 0 't|b x:2\n-1 0.25 |a y\n";
    write_bytes(path_of(txt, "w.vw"), text, strlen(text));
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 3;
    hog_dataset *mem, *bin;
    cr_assert_eq(hog_dataset_open(txt, &p, &mem, err, sizeof(err)), 0, "%s", err);
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "w.hgd"), &info, err, sizeof(err)), 0,
                 "%s", err);
    cr_assert(info.weighted);
    cr_assert_eq(hog_dataset_open(hgd, NULL, &bin, err, sizeof(err)), 0, "%s", err);
    hog_dataset_get_info(bin, &info);
    cr_assert(info.weighted);
    static const float want[] = {2.5f, 1.0f, 0.0f, 0.25f};
    for (uint64_t i = 0; i < 4; i++) {
        cr_assert_eq(hog_dataset_row(mem, i).weight, want[i], "row %lu", (unsigned long)i);
        cr_assert_eq(hog_dataset_row(bin, i).weight, want[i], "row %lu", (unsigned long)i);
    }
    assert_same_rows(mem, bin);
    hog_dataset_close(mem);
    hog_dataset_close(bin);

    size_t n;
    uint8_t *f = read_bytes(hgd, &n);
    uint8_t *blk = f + rd64(f + rd64(f + 56)); /* block 0: 3 rows */
    uint32_t nnz = rd32(blk + 12);
    float neg = -1.0f;
    memcpy(blk + 16 + 8 * nnz + 12 + 4, &neg, 4); /* row 1's weight */
    reseal(f);
    expect_open(f, n, HOG_ECORRUPT, ": block 0: row 1: weight is negative or not finite");
    free(f);

    /* in text, a negative weight is an error with its place */
    write_bytes(txt, "1 |a x\n1 -2 |a x\n", 16);
    cr_assert_eq(hog_dataset_open(txt, &p, &mem, err, sizeof(err)), HOG_EFORMAT);
    cr_assert(strstr(err, ":2:3: expected a non-negative importance weight, found '-2'") != NULL, "%s", err);
}

/* Byte offset of block b's arrays in the good file (blocks of 3 rows). */
static uint8_t *block_at(uint8_t *f, uint32_t b)
{
    return f + rd64(f + rd64(f + 56) + 32 * b);
}

Test(etl_hgd, index_out_of_range_caught_by_range_check)
{
    make_good();
    uint8_t *c = copy_good();
    /* block 1 holds rows 3..5: "0 1:1 2:2 3:3", "1", "0 4:4"; its index array
     * follows ptr[4]. Make row 2 (4:4) point past the features. */
    uint8_t *blk = block_at(c, 1);
    uint32_t nnz = rd32(blk + 12); /* ptr[3] */
    cr_assert_eq(nnz, 4);
    wr32(blk + 16 + 4 * 3, 90000);
    reseal(c);
    char msg[128];
    snprintf(msg, sizeof(msg), ": block 1: row 2: feature index 90000 >= features %llu",
             (unsigned long long)good_features);
    expect_open(c, good_len, HOG_ECORRUPT, msg);
    free(c);
}

Test(etl_hgd, structural_corruptions)
{
    make_good();
    uint8_t *c = copy_good();

    /* indices not increasing within a row (row 0 of block 1: 1,2,3 -> 1,1,3) */
    uint8_t *blk = block_at(c, 1);
    wr32(blk + 16 + 4, 1);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 1: row 0: feature index 1 after 1");
    memcpy(c, good, good_len);

    /* a non-finite label (last label of block 0) */
    blk = block_at(c, 0);
    uint32_t n0 = rd32(blk + 12);
    float inf = 1.0f / 0.0f;
    memcpy(blk + 16 + 8 * n0 + 4 * 2, &inf, 4);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 0: row 2: label is not finite");
    memcpy(c, good, good_len);

    /* a NaN value */
    uint32_t nan_bits = 0x7fc00000;
    memcpy(blk + 16 + 4 * n0, &nan_bits, 4);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 0: row 0: value of feature 1 is not finite");
    memcpy(c, good, good_len);

    /* row offsets going backwards: ptr 0,2,3,4 -> 0,2,1,4 */
    wr32(blk + 8, 1);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 0: row 1: offsets 2..1 out of order");
    memcpy(c, good, good_len);

    /* unknown flags; the summary's bit (8) only from version 3 */
    wr32(c + 48, 16 | HOG_HGD_SUMMARY);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": unknown flags 0x18");
    memcpy(c, good, good_len);
    wr32(c + 8, 2);
    reseal(c); /* without the summary: a sound version 2 file */
    expect_open(c, good_len, 0, "");
    memcpy(c, good, good_len);
    wr32(c + 8, 2); /* with it */
    wr64(c + 88, 0);
    wr64(c + 88, hog_hash64(c, 4096, 0));
    expect_open(c, good_len, HOG_ECORRUPT, ": unknown flags 0x8");
    memcpy(c, good, good_len);

    /* a source record (96..223) only in a cache (flags bit 2), the
     * summary's place (224..247) only with flags bit 3, zero after them */
    wr64(c + 96, 1234);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": header byte 96 is not zero");
    wr32(c + 48, HOG_HGD_SOURCE | HOG_HGD_SUMMARY);
    reseal(c);
    expect_open(c, good_len, 0, "");
    c[248] = 1;
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": header byte 248 is not zero");
    memcpy(c, good, good_len);
    wr32(c + 48, 0);
    wr64(c + 88, 0);
    wr64(c + 88, hog_hash64(c, 4096, 0));
    size_t first = 224; /* the summary's offset, its lowest byte perhaps zero */
    while (c[first] == 0)
        first++;
    char where[64];
    snprintf(where, sizeof(where), ": header byte %zu is not zero", first);
    expect_open(c, good_len, HOG_ECORRUPT, where);
    memcpy(c, good, good_len);

    /* rows that do not fit the block count */
    wr64(c + 16, 13);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": 4 blocks cannot hold 13 rows of 3 per block");
    memcpy(c, good, good_len);

    /* a rows_per_block whose segment count would wrap to 0 in the trainer
     * (a division by zero there before it was bounded) */
    wr32(c + 44, 0xffffffffu);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": rows_per_block is 4294967295, not between 1 and 16777216");
    memcpy(c, good, good_len);

    /* a block offset that is not aligned */
    uint8_t *table = c + rd64(c + 56);
    wr64(table + 32, rd64(table + 32) + 8);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 1: offset");
    memcpy(c, good, good_len);

    /* a block entry with the wrong number of rows */
    wr32(table + 32 + 16, 2);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": block 1: 2 rows, expected 3");
    memcpy(c, good, good_len);

    /* sums of non-zeros that disagree with the header */
    wr64(c + 32, rd64(c + 32) + 1);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, "non-zeros, header says");
    memcpy(c, good, good_len);

    /* a fingerprint that does not match the table */
    wr64(c + 72, 12345);
    wr64(c + 88, 0);
    wr64(c + 88, hog_hash64(c, 4096, 0));
    expect_open(c, good_len, HOG_ECHECKSUM, ": fingerprint does not match");
    memcpy(c, good, good_len);

    /* trailing bytes past the table */
    memset(c + good_len, 0, 8);
    expect_open(c, good_len + 8, HOG_ECORRUPT, "(trailing bytes)");

    /* and the untouched copy still opens */
    expect_open(good, good_len, 0, "");
    free(c);
}

/* The header's feature count is the largest index + 1, as the writer
 * records it: a larger one would have a trainer allocate weights for
 * features no row has (2^32 of them, 16 GiB, from a file of 20 KiB), so it
 * is refused with both numbers. */
Test(etl_hgd, a_feature_count_past_the_largest_index_is_refused)
{
    make_good();
    uint8_t *c = copy_good();
    char msg[160];
    reseal_as(c, 2); /* version 3's summary would refuse the count first (summary_refused) */
    wr64(c + 24, 1ull << 32);
    reseal(c);
    snprintf(msg, sizeof(msg), ": header field features is 4294967296, but the blocks' largest feature index + 1 is %llu",
             (unsigned long long)good_features);
    expect_open(c, good_len, HOG_ECORRUPT, msg);
    wr64(c + 24, good_features + 1);
    reseal(c);
    snprintf(msg, sizeof(msg), ": header field features is %llu, but the blocks' largest feature index + 1 is %llu",
             (unsigned long long)good_features + 1, (unsigned long long)good_features);
    expect_open(c, good_len, HOG_ECORRUPT, msg);
    /* past 2^32 the header alone is refused */
    wr64(c + 24, (1ull << 32) + 1);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": features 4294967297 exceeds 2^32");
    free(c);
}

Test(etl_hgd, missing_binary_file)
{
    char path[256], err[512], expect[512];
    hog_dataset *ds;
    cr_assert_eq(hog_hgd_open(path_of(path, "none.hgd"), &ds, err, sizeof(err)), -ENOENT);
    snprintf(expect, sizeof(expect), "%s: %s", path, strerror(ENOENT));
    cr_assert_str_eq(err, expect);
}

/* A mapped file cut short or written in place under its reader is seen as
 * changed, and named for a signal handler; a file replaced by renaming (as
 * hogtrain writes) leaves the mapping, and its data set, as they were. */
Test(etl_hgd, a_file_changed_under_its_mapping_is_seen)
{
    make_good();
    char path[256], other[256], err[512] = "";
    write_bytes(path_of(path, "live.hgd"), good, good_len);
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_changed(ds), 0);
    cr_assert_null(hog_dataset_changed_path());

    write_bytes(path_of(other, "next.hgd"), good, good_len);
    cr_assert_eq(rename(other, path), 0);
    cr_assert_eq(hog_dataset_changed(ds), 0, "a rename over the path leaves the mapped file as it was");
    hog_dataset_close(ds);

    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(truncate(path, 4096), 0);
    cr_assert_eq(hog_dataset_changed(ds), 1);
    cr_assert_str_eq(hog_dataset_changed_path(), path);
    hog_dataset_close(ds);
    cr_assert_null(hog_dataset_changed_path(), "a closed data set is no longer listed");
}

/* ===================================================================== *
 *  Checked at first read (HOG_VERIFY_AT_FIRST_READ)
 * ===================================================================== */

/* Opens buf's bytes with each block checked at its first read. */
static hog_dataset *open_lazy(const uint8_t *buf, size_t len, char *path)
{
    char err[512] = "";
    write_bytes(path_of(path, "lazy.hgd"), buf, len);
    hog_read_params p = hog_read_params_default();
    p.verify = HOG_VERIFY_AT_FIRST_READ;
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), 0, "%s", err);
    return ds;
}

Test(etl_hgd, a_bad_block_opened_to_be_checked_at_first_read_fails_its_first_read)
{
    make_good();
    uint8_t *c = copy_good();
    c[4096 + 2 * 4096 + 10] ^= 0x40; /* inside block 2 */
    char path[256], err[512] = "";
    hog_dataset *ds = open_lazy(c, good_len, path);
    for (uint32_t b = 0; b < 2; b++)
        cr_assert_eq(hog_dataset_check(ds, b, err, sizeof(err)), 0, "block %u: %s", b, err);
    for (int again = 0; again < 2; again++) { /* a bad block stays bad */
        err[0] = 0;
        cr_assert_eq(hog_dataset_check(ds, 2, err, sizeof(err)), HOG_ECHECKSUM);
        cr_assert_eq(strncmp(err, path, strlen(path)), 0, "%s", err);
        cr_assert(strstr(err, ": block 2: checksum mismatch") != NULL, "%s", err);
    }
    err[0] = 0;
    cr_assert_eq(hog_dataset_verify(ds, err, sizeof(err)), HOG_ECHECKSUM);
    cr_assert(strstr(err, ": block 2: checksum mismatch") != NULL, "%s", err);
    hog_dataset_close(ds);
    free(c);
}

Test(etl_hgd, a_sound_file_checked_at_first_read_verifies_once_and_again)
{
    make_good();
    char path[256], err[512] = "";
    hog_dataset *ds = open_lazy(good, good_len, path);
    cr_assert_eq(hog_dataset_check(ds, 3, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_verify(ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_verify(ds, err, sizeof(err)), 0, "%s", err);
    for (uint32_t b = 0; b < 4; b++)
        cr_assert_eq(hog_dataset_check(ds, b, err, sizeof(err)), 0, "%s", err);
    hog_dataset_close(ds);
    /* a data set built in memory is sound as it is */
    hog_dataset *mem = NULL;
    hog_read_params p = hog_read_params_default();
    p.index_base = 0;
    char txt[256];
    cr_assert_eq(hog_dataset_open(path_of(txt, "g.svm"), &p, &mem, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_verify(mem, err, sizeof(err)), 0, "%s", err);
    hog_dataset_close(mem);
}

/* The header's feature count is checked against the blocks once all are:
 * by hog_dataset_verify (which training's scan calls). */
Test(etl_hgd, a_feature_count_past_the_largest_index_is_refused_once_every_block_is_checked)
{
    make_good();
    uint8_t *c = copy_good();
    reseal_as(c, 2); /* no summary to refuse it at open */
    wr64(c + 24, good_features + 5);
    reseal(c);
    char path[256], err[512] = "", msg[160];
    hog_dataset *ds = open_lazy(c, good_len, path);
    for (uint32_t b = 0; b < 4; b++)
        cr_assert_eq(hog_dataset_check(ds, b, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_verify(ds, err, sizeof(err)), HOG_ECORRUPT);
    snprintf(msg, sizeof(msg), ": header field features is %llu, but the blocks' largest feature index + 1 is %llu",
             (unsigned long long)good_features + 5, (unsigned long long)good_features);
    cr_assert(strstr(err, msg) != NULL, "%s", err);
    hog_dataset_close(ds);
    free(c);
}

Test(etl_hgd, a_verify_setting_out_of_range_is_refused_by_name)
{
    make_good();
    char path[256], err[512] = "";
    write_bytes(path_of(path, "g2.hgd"), good, good_len);
    hog_read_params p = hog_read_params_default();
    p.verify = (hog_verify)7;
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(path, &p, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "hog_read_params.verify: 7") != NULL, "%s", err);
    cr_assert_null(ds);
}

/* ===================================================================== *
 *  The summary (version 3)
 * ===================================================================== */

/* What the writer counts is what the rows hold: each label's rows, each
 * feature's rows with a non-zero. */
Test(etl_hgd, the_summary_counts_every_rows_label_and_features)
{
    make_good();
    char path[256], err[512] = "";
    write_bytes(path_of(path, "s.hgd"), good, good_len);
    hog_dataset *ds = NULL;
    cr_assert_eq(hog_dataset_open(path, NULL, &ds, err, sizeof(err)), 0, "%s", err);
    const hog_hgd_summary *s = &ds->summary;
    cr_assert_eq(s->labels, 2);
    cr_assert_eq(s->label[0], 0.0);
    cr_assert_eq(s->label[1], 1.0);
    cr_assert_eq(s->count[0], 5);
    cr_assert_eq(s->count[1], 5);
    cr_assert_eq(s->degrees, good_features);
    uint32_t deg[16] = {0};
    for (uint64_t i = 0; i < ds->info.rows; i++) {
        hog_row r = hog_dataset_row(ds, i);
        for (uint32_t k = 0; k < r.nnz; k++)
            deg[r.index[k]]++;
    }
    cr_assert_eq(memcmp(deg, s->degree, good_features * sizeof(uint32_t)), 0);
    cr_assert_eq(deg[2], 3, "feature 2 is in three rows");
    hog_dataset_close(ds);

    /* past HOG_HGD_SUMMARY_FEATURES no degrees are kept */
    char txt[256], big[256];
    write_bytes(path_of(txt, "wide.svm"), "1 1:1\n-1 16777216:1\n", 20);
    hog_read_params p = hog_read_params_default();
    p.index_base = 0;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(big, "wide.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    ds = open_ok(big, NULL);
    cr_assert_eq(ds->summary.labels, 2);
    cr_assert_eq(ds->summary.degrees, 0);
    cr_assert_eq(ds->info.features, (1u << 24) + 1);
    hog_dataset_close(ds);
}

/* Every claim of the summary is checked against the header and layout at
 * open, with a message that names the field. */
Test(etl_hgd, a_summary_out_of_step_with_its_file_is_refused)
{
    make_good();
    uint8_t *c = copy_good();
    const uint64_t at = rd64(c + 224);
    uint8_t *s = c + at;

    c[at + 20] ^= 1; /* a label's bits, the checksum not redone */
    expect_open(c, good_len, HOG_ECHECKSUM, ": summary checksum mismatch");
    memcpy(c, good, good_len);

    wr64(s + 8 + 16, 6); /* label 0 has 6 rows of 10, label 1 still 5 */
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary label 1 has 5 rows, past the 10 of the file");
    wr64(s + 8 + 16, 4);
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary counts 9 rows, the header 10");
    memcpy(c, good, good_len);

    double between = 1.0 + 1e-12; /* not a label's f32 */
    memcpy(s + 16, &between, 8);
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary label 1 (1.0000000000010001) is not a 32-bit float, as labels are");
    memcpy(c, good, good_len);

    double down = -1.0; /* labels 0, -1: not ascending */
    memcpy(s + 16, &down, 8);
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary label 1 (-1) is not finite or not above the one before");
    memcpy(c, good, good_len);

    wr32(s + 4, 9); /* the degrees of 9 features, the header 10 */
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary has the degrees of 9 features, the header says 10");
    memcpy(c, good, good_len);

    wr32(s + 8 + 32 + 4 * 9, 0); /* the last feature in no row */
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary gives the last feature (9) no rows");
    wr32(s + 8 + 32 + 4 * 9, 11);
    hgd_reseal_summary(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary gives feature 9 11 rows, past the 10 of the file");
    memcpy(c, good, good_len);

    wr64(c + 224, at + 8); /* past its room before the table */
    hgd_reseal_header(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary at ");
    wr64(c + 224, at - 4096); /* inside the last block */
    hgd_reseal_header(c);
    expect_open(c, good_len, HOG_ECORRUPT, "(after the blocks, before the table)");
    memcpy(c, good, good_len);

    wr64(c + 232, rd64(c + 232) - 4);
    hgd_reseal_header(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": summary is 76 bytes, its counts need 80");

    expect_open(good, good_len, 0, "");
    free(c);

    /* one label listed, and the rows hold another (what the fuzzer found:
     * the quick check of a block looked at lists of two labels and more) */
    char txt[256], one[256];
    write_bytes(path_of(txt, "one.svm"), "1 1:1\n1 2:1\n", 12);
    char err[512] = "";
    cr_assert_eq(hog_dataset_convert(txt, NULL, path_of(one, "one.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    size_t n;
    uint8_t *f = read_bytes(one, &n);
    uint8_t *sum = f + rd64(f + 224);
    cr_assert_eq(rd32(sum), 1);
    double other = 2.0;
    memcpy(sum + 8, &other, 8);
    hgd_reseal_summary(f);
    expect_open(f, n, HOG_ECORRUPT, ": block 0: row 0: label 1 is not one of the 1 in the file's summary");
    free(f);
}

/* ===================================================================== *
 *  Class names (version 4)
 * ===================================================================== */

/* Rows whose labels are strings: cat, dog, cat, emus, numbered in that
 * order (the section 4 + 4 + 4 + 5 bytes, padded to 24 before the table). */
/* No header: its columns have no names, so the file has class names alone (version 4). */
static const char named_csv[] = "1,2,cat\n3,4,dog\n5,6,cat\n7,8,emus\n";

static hog_read_params named_params(void)
{
    hog_read_params p = hog_read_params_default();
    p.label_index = 2;
    return p;
}

/* The .hgd of named_csv, its bytes into *len. */
static uint8_t *named_file(size_t *len)
{
    char txt[256], hgd[256], err[512] = "";
    write_bytes(path_of(txt, "named.csv"), named_csv, strlen(named_csv));
    hog_read_params p = named_params();
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "named.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    return read_bytes(hgd, len);
}

/* The names' sum (etl.h): of their count, then of the names seeded with it. */
static void reseal_names(uint8_t *f)
{
    const uint8_t *s = f + rd64(f + 248);
    wr64(f + 264, hog_hash64(s + 4, rd64(f + 256) - 4, hog_hash64(s, 4, 0)));
    hgd_reseal_header(f);
}

/* convert keeps the names, each label their number; the data set opened
 * from the file has them, and saving it (or the text's data set) writes
 * the same bytes. */
Test(etl_hgd, class_names_round_trip)
{
    size_t n;
    uint8_t *f = named_file(&n);
    cr_assert_eq(rd32(f + 8), 4, "a file with names is version 4");
    cr_assert_eq(rd32(f + 48), HOG_HGD_SUMMARY | HOG_HGD_NAMES);
    const uint64_t at = rd64(f + 248);
    cr_assert_eq(at, rd64(f + 224) + rd64(f + 232), "right after the summary");
    cr_assert_eq(rd64(f + 256), 4 + 13);
    cr_assert_eq(rd32(f + at), 3);
    cr_assert_eq(memcmp(f + at + 4, "cat\0dog\0emus\0", 13), 0);
    cr_assert_eq(rd64(f + 56), at + 24, "the table after the names, 8-aligned");
    char hgd[256], again[256], text[256], txt[256];
    path_of(hgd, "named.hgd");
    hog_dataset *ds = open_ok(hgd, NULL);
    cr_assert_eq(ds->names.n, 3);
    cr_assert_str_eq(hog_idmap_name(&ds->names, 0), "cat");
    cr_assert_str_eq(hog_idmap_name(&ds->names, 1), "dog");
    cr_assert_str_eq(hog_idmap_name(&ds->names, 2), "emus");
    cr_assert_eq(hog_idmap_find(&ds->names, "emus", 4), 2);
    const float want[4] = {0, 1, 0, 2};
    for (uint64_t i = 0; i < 4; i++)
        cr_assert_eq(hog_dataset_row(ds, i).label, want[i], "row %llu", (unsigned long long)i);
    cr_assert_eq(hog_dataset_save(ds, path_of(again, "again.hgd")), 0);
    assert_same_bytes(hgd, again);
    hog_dataset_close(ds);
    hog_read_params p = named_params();
    ds = open_ok(path_of(txt, "named.csv"), &p);
    cr_assert_eq(ds->names.n, 3);
    cr_assert_eq(hog_dataset_save(ds, path_of(text, "text.hgd")), 0);
    assert_same_bytes(hgd, text);
    hog_dataset_close(ds);
    free(f);

    /* numeric labels are written as version 3, byte for byte as before */
    make_good();
    cr_assert_eq(rd32(good + 8), 3);
    cr_assert_eq(rd32(good + 48) & HOG_HGD_NAMES, 0);
}

/* Each claim of the names section is checked at open, the message naming
 * the file and the byte where the fault lies. */
Test(etl_hgd, crafted_class_names_are_refused_with_their_byte)
{
    size_t n;
    uint8_t *good_named = named_file(&n);
    uint8_t *c = malloc(n);
    cr_assert_not_null(c);
    memcpy(c, good_named, n);
    const uint64_t at = rd64(c + 248), sum_at = rd64(c + 224);
    char want[160];

    c[at + 5] ^= 1; /* a name's byte, the sum not redone */
    snprintf(want, sizeof(want), ": byte %llu: class names checksum mismatch", (unsigned long long)at);
    expect_open(c, n, HOG_ECHECKSUM, want);
    memcpy(c, good_named, n);

    wr32(c + at, 0);
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: 0 class names, expected 1 to 65536", (unsigned long long)at);
    expect_open(c, n, HOG_ECORRUPT, want);
    wr32(c + at, 2); /* fewer names than the summary's labels */
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: 2 class names, but the summary lists 3 label values",
             (unsigned long long)at);
    expect_open(c, n, HOG_ECORRUPT, want);
    wr32(c + at, 70000);
    reseal_names(c);
    expect_open(c, n, HOG_ECORRUPT, "70000 class names, expected 1 to 65536");
    memcpy(c, good_named, n);

    c[at + 4 + 4] = '\0'; /* "dog" made empty: two NULs */
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: class name 1 is 0 bytes, not 1 to 1024", (unsigned long long)(at + 8));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    memcpy(c + at + 8, "cat", 3); /* "dog" made "cat" */
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: class name 1 ('cat') repeats class 0's", (unsigned long long)(at + 8));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    c[at + 4 + 12] = 's'; /* the last NUL gone: "emuss" runs to the end */
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: class name 2 runs past the names' end at byte %llu",
             (unsigned long long)(at + 12), (unsigned long long)(at + 17));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    wr64(c + 256, 18); /* one byte of padding counted in */
    reseal_names(c);
    snprintf(want, sizeof(want), ": byte %llu: 1 bytes after the last of 3 class names", (unsigned long long)(at + 17));
    expect_open(c, n, HOG_ECORRUPT, want);
    wr64(c + 256, 4 + 5); /* fewer than 2 bytes a name */
    reseal_names(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 256: names_bytes is 9, not between 10 and 3079 for 3 class names");
    wr64(c + 256, UINT64_MAX - 2); /* a size that would wrap an offset (no sum taken of it) */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 248: class names at byte");
    memcpy(c, good_named, n);

    wr64(c + 248, at + 4); /* misaligned */
    reseal_names(c);
    expect_open(c, n, HOG_ECORRUPT, "misaligned or outside");
    wr64(c + 248, sum_at); /* over the summary */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, "(after the summary, before the table)");
    wr64(c + 248, rd64(c + 56) + 8); /* past the table */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, "(after the summary, before the table)");
    memcpy(c, good_named, n);

    double two = 5.0; /* the summary's third label is not 2: no name numbers it */
    memcpy(c + sum_at + 8 + 16, &two, 8);
    hgd_reseal_summary(c);
    snprintf(want, sizeof(want), ": byte %llu: summary label 2 is 5: labels that are class names are numbered 0 to 2",
             (unsigned long long)(sum_at + 8 + 16));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    wr32(c + 48, HOG_HGD_NAMES); /* names without the summary */
    memset(c + 224, 0, 24);
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 48: flags 0x10 announce class names (bit 4) without the summary");
    memcpy(c, good_named, n);

    wr32(c + 8, 3); /* bit 4 is version 4's */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": unknown flags 0x18");
    memcpy(c, good_named, n);

    wr32(c + 48, HOG_HGD_SUMMARY); /* its place is zero without it */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 248 is not zero");
    memcpy(c, good_named, n);
    c[272] = 1; /* and zero after it */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 272 is not zero");

    expect_open(good_named, n, 0, "");
    free(c);
    free(good_named);
}

/* ===================================================================== *
 *  Feature names (version 5, flags bit 5, header bytes 272..295)
 * ===================================================================== */

/* A header names the numeric columns and a categorical one's values; the
 * labels are class names too, so the file has both sections. */
static const char fnamed_csv[] = "y,age,color,\"my height\"\ncat,30,red,1.5\ndog,40,blue,0\ncat,0,red,1.7\n";

static hog_read_params fnamed_params(void)
{
    hog_read_params p = hog_read_params_default();
    p.label_name = "y";
    p.categorical = "color";
    p.feature_names = 1; /* the categorical values' names too */
    return p;
}

static uint8_t *fnamed_file(size_t *len)
{
    char txt[256], hgd[256], err[512] = "";
    write_bytes(path_of(txt, "fnamed.csv"), fnamed_csv, strlen(fnamed_csv));
    hog_read_params p = fnamed_params();
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "fnamed.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    return read_bytes(hgd, len);
}

/* The feature names' sum (etl.h), then the header's. */
static void reseal_fnames(uint8_t *f)
{
    wr64(f + 288, hog_hash64(f + rd64(f + 272), rd64(f + 280), 0));
    hgd_reseal_header(f);
}

/* convert keeps the names after the class names; the data set opened
 * from the file has them, and saving it (or the text's data set) writes
 * the same bytes. */
Test(etl_hgd, feature_names_round_trip)
{
    size_t n;
    uint8_t *f = fnamed_file(&n);
    cr_assert_eq(rd32(f + 8), 5, "a file with feature names is version 5");
    cr_assert_eq(rd32(f + 48), HOG_HGD_SUMMARY | HOG_HGD_NAMES | HOG_HGD_FNAMES);
    const uint64_t at = rd64(f + 272);
    cr_assert_eq(at, (rd64(f + 248) + rd64(f + 256) + 7) / 8 * 8, "after the class names, 8-aligned");
    cr_assert_eq(rd64(f + 56), (at + rd64(f + 280) + 7) / 8 * 8, "the table after them, 8-aligned");
    /* the numeric columns by position, the categorical values hashed past them */
    const uint32_t red = (hog_murmur3_32("color=red", 9, 0) & ((1u << 18) - 1)) + 2;
    const uint32_t blue = (hog_murmur3_32("color=blue", 10, 0) & ((1u << 18) - 1)) + 2;
    cr_assert_eq(rd32(f + at), 4, "age, my height, color=red, color=blue");
    cr_assert_eq(rd32(f + at + 4), 0);
    cr_assert_eq(memcmp(f + at + 8, "age", 4), 0);
    cr_assert_eq(rd32(f + at + 12), 1);
    cr_assert_eq(memcmp(f + at + 16, "my height", 10), 0);
    const uint8_t *e2 = f + at + 26, *e3 = e2 + 4 + (red < blue ? 10 : 11);
    cr_assert_eq(rd32(e2), red < blue ? red : blue);
    cr_assert_eq(rd32(e3), red < blue ? blue : red);
    cr_assert_str_eq((const char *)e2 + 4, red < blue ? "color=red" : "color=blue");
    cr_assert_eq(rd64(f + 280), 26 + 14 + 15, "the count and four (index, name) entries");
    char hgd[256], again[256], text[256], txt[256];
    path_of(hgd, "fnamed.hgd");
    hog_dataset *ds = open_ok(hgd, NULL);
    cr_assert_eq(ds->fnames.n, 4);
    cr_assert_str_eq(hog_fnames_find(&ds->fnames, 1), "my height");
    cr_assert_str_eq(hog_fnames_find(&ds->fnames, blue), "color=blue");
    cr_assert_null(hog_fnames_find(&ds->fnames, 2));
    cr_assert_eq(hog_dataset_save(ds, path_of(again, "again.hgd")), 0);
    assert_same_bytes(hgd, again);
    hog_dataset_close(ds);
    hog_read_params p = fnamed_params();
    ds = open_ok(path_of(txt, "fnamed.csv"), &p);
    cr_assert_eq(ds->fnames.n, 4);
    cr_assert_eq(hog_dataset_save(ds, path_of(text, "text.hgd")), 0);
    assert_same_bytes(hgd, text);
    hog_dataset_close(ds);
    free(f);

    /* without a header: no names, version 3 as before */
    write_bytes(path_of(txt, "plain.csv"), "1,30,1.5\n0,40,0\n", 16);
    p = hog_read_params_default();
    ds = open_ok(txt, &p);
    cr_assert_eq(ds->fnames.n, 0);
    cr_assert_eq(hog_dataset_save(ds, hgd), 0);
    hog_dataset_close(ds);
    f = read_bytes(hgd, &n);
    cr_assert_eq(rd32(f + 8), 3);
    cr_assert_eq(rd32(f + 48) & HOG_HGD_FNAMES, 0);
    free(f);
}

/* Each claim of the feature names section is checked at open, the
 * message naming the file and the byte where the fault lies. */
Test(etl_hgd, crafted_feature_names_are_refused_with_their_byte)
{
    size_t n;
    uint8_t *good_named = fnamed_file(&n);
    uint8_t *c = malloc(n);
    cr_assert_not_null(c);
    memcpy(c, good_named, n);
    const uint64_t at = rd64(c + 272), names_at = rd64(c + 248), table = rd64(c + 56);
    char want[200];

    c[at + 9] ^= 1; /* a name's byte, the sum not redone */
    snprintf(want, sizeof(want), ": byte %llu: feature names checksum mismatch", (unsigned long long)at);
    expect_open(c, n, HOG_ECHECKSUM, want);
    memcpy(c, good_named, n);

    wr32(c + at, 0);
    reseal_fnames(c);
    snprintf(want, sizeof(want), ": byte %llu: 0 feature names, expected 1 to 8", (unsigned long long)at);
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    wr32(c + at + 12, 0); /* "my height" of feature 0 too */
    reseal_fnames(c);
    snprintf(want, sizeof(want), ": byte %llu: feature name 1 is of feature 0, not after 0", (unsigned long long)(at + 12));
    expect_open(c, n, HOG_ECORRUPT, want);
    wr32(c + at + 12, (uint32_t)rd64(c + 24)); /* past the features */
    reseal_fnames(c);
    snprintf(want, sizeof(want), ": byte %llu: feature name 1 is of feature %u, past the %u features",
             (unsigned long long)(at + 12), (unsigned)rd64(c + 24), (unsigned)rd64(c + 24));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    c[at + 8] = '\0'; /* "age" empty */
    reseal_fnames(c);
    snprintf(want, sizeof(want), ": byte %llu: feature name 0 is empty", (unsigned long long)(at + 8));
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);

    const uint64_t end = at + rd64(c + 280);
    c[end - 1] = 'x'; /* the last NUL gone */
    reseal_fnames(c);
    expect_open(c, n, HOG_ECORRUPT, "feature name 3 runs past the names' end");
    memcpy(c, good_named, n);

    wr32(c + at, 3); /* one entry more than announced */
    reseal_fnames(c);
    expect_open(c, n, HOG_ECORRUPT, "bytes after the last of 3 feature names");
    memcpy(c, good_named, n);

    wr64(c + 280, UINT64_MAX - 2); /* a size that would wrap an offset (no sum taken of it) */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 272: feature names at byte");
    memcpy(c, good_named, n);
    wr64(c + 272, at + 4); /* misaligned */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, "misaligned or outside");
    wr64(c + 272, names_at); /* over the class names */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, "(after the sections before them, before the table)");
    wr64(c + 272, table + 8); /* past the table */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, "(after the sections before them, before the table)");
    memcpy(c, good_named, n);

    wr32(c + 8, 4); /* bit 5 is version 5's */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": unknown flags 0x38");
    memcpy(c, good_named, n);
    wr32(c + 48, HOG_HGD_SUMMARY | HOG_HGD_NAMES); /* its place is zero without it */
    hgd_reseal_header(c);
    unsigned first = 272;
    while (c[first] == 0)
        first++;
    snprintf(want, sizeof(want), ": header byte %u is not zero", first);
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, good_named, n);
    c[296] = 1; /* and zero after it */
    hgd_reseal_header(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 296 is not zero");

    expect_open(good_named, n, 0, "");
    free(c);
    free(good_named);
}

/* ===================================================================== *
 *  Fields (version 6, flags bit 6, the count at header byte 296, a u16
 *  per non-zero after each block's other arrays)
 * ===================================================================== */

static const char fielded_ffm[] = "1 0:3:1 1:7:0.5 2:12:-2\n0 2:40:1 0:5:1\n1 1:8:2\n0 0:2:1 2:9:1\n1\n";

/* The .ffm above converted in blocks of two rows. */
static uint8_t *fielded_file(size_t *len, char *hgd)
{
    char txt[256], err[512] = "";
    write_bytes(path_of(txt, "f.ffm"), fielded_ffm, strlen(fielded_ffm));
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 2;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "f.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    return read_bytes(hgd, len);
}

/* convert writes each value's field and the count; the file opens with
 * them, as the text's data set has them, and saving either writes the
 * same bytes. */
Test(etl_hgd, fields_round_trip)
{
    char hgd[256], txt[256], saved[256], err[512] = "";
    size_t n;
    uint8_t *f = fielded_file(&n, hgd);
    cr_assert_eq(rd32(f + 8), 6, "a file with fields is version 6");
    cr_assert_eq(rd32(f + 48), HOG_HGD_SUMMARY | HOG_HGD_FIELDS);
    cr_assert_eq(rd32(f + 296), 3, "fields 0, 1 and 2");
    /* block 0's fields follow its labels: rows 0 and 1, five values */
    const uint8_t *b0 = block_at(f, 0);
    cr_assert_eq(rd32(b0 + 8), 5);
    uint16_t fld[5];
    memcpy(fld, b0 + 4 * 3 + 8 * 5 + 4 * 2, sizeof(fld));
    static const uint16_t want[5] = {0, 1, 2, 0, 2}; /* row 1 sorted: 5 (field 0), 40 (field 2) */
    cr_assert_eq(memcmp(fld, want, sizeof(want)), 0, "fields %u %u %u %u %u", fld[0], fld[1], fld[2], fld[3],
                 fld[4]);

    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 2;
    hog_dataset *text = open_ok(path_of(txt, "f.ffm"), &p), *bin = open_ok(hgd, NULL);
    cr_assert_eq(hog_dataset_fields(text), 3);
    cr_assert_eq(hog_dataset_fields(bin), 3);
    hog_dataset_info ti, bi;
    hog_dataset_get_info(text, &ti);
    hog_dataset_get_info(bin, &bi);
    cr_assert_eq(ti.format, HOG_FORMAT_FFM);
    cr_assert_eq(ti.fingerprint, bi.fingerprint, "the fields are in the checksums of both");
    assert_same_rows(text, bin);
    for (uint32_t b = 0; b < bi.blocks; b++) {
        cr_assert_not_null(bin->blocks[b].field);
        cr_assert_eq(memcmp(bin->blocks[b].field, text->blocks[b].field, 2 * (size_t)bin->blocks[b].nnz), 0,
                     "block %u", b);
    }
    cr_assert_eq(hog_dataset_save(text, path_of(saved, "saved.hgd")), 0);
    size_t m;
    uint8_t *s = read_bytes(saved, &m);
    cr_assert(m == n && memcmp(s, f, n) == 0, "save and convert write the same bytes");
    free(s);
    cr_assert_eq(hog_dataset_save(bin, saved), 0);
    s = read_bytes(saved, &m);
    cr_assert(m == n && memcmp(s, f, n) == 0, "the file saved again is the same file");
    free(s);
    hog_dataset_close(text);
    hog_dataset_close(bin);
    free(f);

    /* libsvm has none, and is written as before (version 3) */
    make_libsvm(path_of(txt, "plain.svm"), 50);
    cr_assert_eq(hog_dataset_convert(txt, NULL, path_of(hgd, "plain.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    f = read_bytes(hgd, &n);
    cr_assert_eq(rd32(f + 8), 3);
    free(f);
    bin = open_ok(hgd, NULL);
    cr_assert_eq(hog_dataset_fields(bin), 0);
    cr_assert_null(bin->blocks[0].field);
    hog_dataset_close(bin);
    cr_assert_eq(hog_dataset_fields(NULL), HOG_EPARAM);
}

/* Vowpal Wabbit text read with fields: a field per namespace (its first
 * byte), through the file and back; read without, none. */
Test(etl_hgd, vw_namespaces_as_fields_round_trip)
{
    char txt[256], hgd[256], err[512] = "";
    static const char text[] = "1 |a x y |c z\n-1 2 |b y\n1 | w\n";
    write_bytes(path_of(txt, "ns.vw"), text, strlen(text));
    hog_read_params p = hog_read_params_default();
    hog_dataset *plain = open_ok(txt, &p);
    cr_assert_eq(hog_dataset_fields(plain), 0);
    hog_dataset_close(plain);
    p.fields = 1;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "ns.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    hog_dataset *mem = open_ok(txt, &p), *bin = open_ok(hgd, NULL);
    cr_assert_eq(hog_dataset_fields(mem), 'c' + 1);
    cr_assert_eq(hog_dataset_fields(bin), 'c' + 1);
    assert_same_rows(mem, bin);
    const hog_block *b = &bin->blocks[0];
    for (uint32_t r = 0; r < b->rows; r++)
        for (uint32_t k = b->ptr[r]; k < b->ptr[r + 1]; k++) {
            const uint16_t f = b->field[k];
            cr_assert(r == 0 ? f == 'a' || f == 'c' : r == 1 ? f == 'b' : f == ' ', "row %u: field %u", r, f);
        }
    hog_dataset_close(mem);
    hog_dataset_close(bin);
}

/* A field past the count, a count out of range, the flag in a version 5
 * file, a count without the flag: each refused, by name. */
Test(etl_hgd, crafted_fields_are_refused)
{
    char hgd[256];
    size_t n;
    uint8_t *f = fielded_file(&n, hgd);
    uint8_t *c = malloc(n);
    cr_assert_not_null(c);

    memcpy(c, f, n);
    uint8_t *b1 = block_at(c, 1); /* rows 2 and 3: 8 (field 1), then 2 (field 0), 9 (field 2) */
    const uint16_t three = 3;
    memcpy(b1 + 4 * 3 + 8 * 3 + 4 * 2 + 2 * 2, &three, 2);
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": block 1: row 1: feature 9 has field 3, not below the file's 3 fields");
    /* the checksum covers the fields */
    memcpy(c, f, n);
    block_at(c, 1)[4 * 3 + 8 * 3 + 4 * 2] ^= 1;
    expect_open(c, n, HOG_ECHECKSUM, ": block 1: checksum mismatch");

    memcpy(c, f, n);
    wr32(c + 296, 0);
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": fields is 0, not between 1 and 65536");
    wr32(c + 296, HOG_MAX_FIELDS + 1);
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": fields is 65537, not between 1 and 65536");

    memcpy(c, f, n);
    wr32(c + 8, 5); /* bit 6 is version 6's */
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": unknown flags 0x48");

    memcpy(c, f, n);
    wr32(c + 48, HOG_HGD_SUMMARY); /* the count without the flag (and blocks that then look short of nothing) */
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 296 is not zero");
    free(c);
    free(f);
}

/* Text read with hash bits: the file keeps them (flags bit 7, version 7),
 * a data set opened from it and the file saved again too; text read
 * without is written as before. A count out of range, the flag in a
 * version 6 file and the bits without the flag are refused, by name. */
Test(etl_hgd, hash_bits_round_trip_and_crafted_ones_are_refused)
{
    char txt[256], hgd[256], saved[256], err[512] = "";
    make_libsvm(path_of(txt, "h.svm"), 50);
    hog_read_params p = hog_read_params_default();
    p.hash_bits = 12;
    cr_assert_eq(hog_dataset_convert(txt, &p, path_of(hgd, "h.hgd"), NULL, err, sizeof(err)), 0, "%s", err);
    size_t n, m;
    uint8_t *f = read_bytes(hgd, &n);
    cr_assert_eq(rd32(f + 8), 7, "a file with hash bits is version 7");
    const uint32_t flags = rd32(f + 48);
    cr_assert_eq(flags & ~HOG_HGD_ONE_BASED, HOG_HGD_SUMMARY | HOG_HGD_HASHED);
    cr_assert_eq(rd32(f + 300), 12);
    hog_dataset *text = open_ok(txt, &p), *bin = open_ok(hgd, NULL);
    cr_assert_eq(text->hash_bits, 12);
    cr_assert_eq(bin->hash_bits, 12);
    assert_same_rows(text, bin);
    cr_assert_eq(hog_dataset_save(bin, path_of(saved, "saved.hgd")), 0);
    uint8_t *s = read_bytes(saved, &m);
    cr_assert(m == n && memcmp(s, f, n) == 0, "the file saved again is the same file");
    free(s);
    hog_dataset_close(text);
    hog_dataset_close(bin);

    uint8_t *c = malloc(n);
    cr_assert_not_null(c);
    const uint32_t bad[] = {0, 32};
    for (size_t i = 0; i < 2; i++) {
        memcpy(c, f, n);
        wr32(c + 300, bad[i]);
        reseal(c);
        char want[64];
        snprintf(want, sizeof(want), ": hash_bits is %u, not between 1 and 31", bad[i]);
        expect_open(c, n, HOG_ECORRUPT, want);
    }
    memcpy(c, f, n);
    wr32(c + 8, 6); /* bit 7 is version 7's */
    reseal(c);
    char want[64];
    snprintf(want, sizeof(want), ": unknown flags 0x%x", flags);
    expect_open(c, n, HOG_ECORRUPT, want);
    memcpy(c, f, n);
    wr32(c + 48, flags & ~HOG_HGD_HASHED);
    reseal(c);
    expect_open(c, n, HOG_ECORRUPT, ": header byte 300 is not zero");
    free(c);
    free(f);

    cr_assert_eq(hog_dataset_convert(txt, NULL, hgd, NULL, err, sizeof(err)), 0, "%s", err);
    f = read_bytes(hgd, &n);
    cr_assert_eq(rd32(f + 8), 3, "without hash bits: written as before");
    cr_assert_eq(rd32(f + 300), 0);
    free(f);
}
