/* test_etl_format.c: the builder, the .hgd round trip, detection of every kind of corrupt file, and atomic save/convert. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl/etl.h"

#include "test_scratch.h"

/* ---- a scratch folder per test (Criterion runs each test in its own process) ---- */

static void setup(void)
{
    scratch_make("etl-format");
}

TestSuite(etl_format, .init = setup, .fini = scratch_remove);

static const char *path_of(char *out, const char *name)
{
    snprintf(out, 256, "%s/%s", dir, name);
    return out;
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

static uint8_t *read_bytes(const char *path, size_t *len)
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

/* Files in the scratch folder, to prove no temporary was left behind. */
static int count_files(void)
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
static void make_libsvm(const char *path, uint32_t rows)
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
static void assert_same_content(const hog_dataset *a, const hog_dataset *b)
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
static void assert_same_rows(const hog_dataset *a, const hog_dataset *b)
{
    hog_dataset_info ia, ib;
    hog_dataset_get_info(a, &ia);
    hog_dataset_get_info(b, &ib);
    cr_assert_eq(ia.fingerprint, ib.fingerprint);
    assert_same_content(a, b);
}

/* The two files hold the same bytes. */
static void assert_same_bytes(const char *path_a, const char *path_b)
{
    size_t la, lb;
    uint8_t *a = read_bytes(path_a, &la), *b = read_bytes(path_b, &lb);
    cr_assert_eq(la, lb, "%s: %zu bytes, %s: %zu", path_a, la, path_b, lb);
    cr_assert_eq(memcmp(a, b, la), 0, "%s and %s differ", path_a, path_b);
    free(a);
    free(b);
}

static hog_dataset *open_ok(const char *path, const hog_read_params *p)
{
    char err[512] = "";
    hog_dataset *ds = NULL;
    int rc = hog_dataset_open(path, p, &ds, err, sizeof(err));
    cr_assert_eq(rc, 0, "%s: %s (%s)", path, hog_strerror(rc), err);
    return ds;
}

/* ===================================================================== *
 *  Round trip
 * ===================================================================== */

Test(etl_format, round_trip_text_memory_hgd)
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
Test(etl_format, direct_writes_give_the_same_bytes)
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
    cr_assert_eq(hog_hgd_write(text, &f), 0);
    cr_assert_eq(f.direct, 0, "the table and header are written buffered");
    cr_assert_eq(hog_atomic_commit(&f), 0);

    assert_same_bytes(hgd, direct);
    hog_dataset_close(text);
    cr_assert_eq(count_files(), 3); /* no temporaries left */
}

/* Writes text's rows through a file builder, its blocks 64 rows, turning
 * O_DIRECT on from output offset direct_from (0: never); returns whether
 * O_DIRECT was on after the first block and after the second. */
static void build_rows(const hog_dataset *text, const char *path, uint64_t direct_from, int direct[2])
{
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path), 0);
    hog_builder *b;
    cr_assert_eq(hog_builder_create(64, &f, &b), 0);
    hog_builder_direct_from(b, direct_from);
    hog_dataset_info ti;
    hog_dataset_get_info(text, &ti);
    for (uint64_t i = 0; i < ti.rows; i++) {
        hog_row r = hog_dataset_row(text, i);
        cr_assert_eq(hog_builder_add(b, r.label, r.index, r.value, r.nnz), 0);
        if (i == 63 || i == 127) /* a block was just written */
            direct[i == 127] = f.direct;
    }
    hog_dataset_info mi;
    cr_assert_eq(hog_builder_finish_file(b, &mi), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    cr_assert_eq(mi.rows, ti.rows);
}

/* A pipe's size is unknown at the start: its convert turns O_DIRECT on once
 * the output passes a threshold (hog_builder_direct_from). Blocks written
 * buffered before and direct after make the very same file as all
 * buffered. */
Test(etl_format, turning_direct_on_part_way_gives_the_same_bytes)
{
    char txt[256], plain[256], mixed[256], probe[256];
    make_libsvm(path_of(txt, "data.svm"), 1000);
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 64;
    hog_dataset *text = open_ok(txt, &p);
    hog_atomic_file t; /* whether this file system takes O_DIRECT at all */
    cr_assert_eq(hog_atomic_open(&t, path_of(probe, "probe")), 0);
    const int can = hog_atomic_direct(&t, 1) == 0;
    hog_atomic_abort(&t);

    int d[2];
    build_rows(text, path_of(plain, "plain.hgd"), 0, d);
    cr_assert(d[0] == 0 && d[1] == 0, "never asked for O_DIRECT: %d %d", d[0], d[1]);
    build_rows(text, path_of(mixed, "mixed.hgd"), HOG_HGD_HEADER_BYTES + 1, d);
    cr_assert(d[0] == 0 && d[1] == can, "O_DIRECT from the second block (file system takes it: %d): %d %d", can,
              d[0], d[1]);
    assert_same_bytes(plain, mixed);
    hog_dataset_close(text);
    cr_assert_eq(count_files(), 3); /* no temporaries left */
}

Test(etl_format, csv_and_libsvm_of_same_rows_share_a_fingerprint)
{
    char a[256], b[256];
    write_bytes(path_of(a, "a.svm"), "1 0:2 2:3\n0 1:4\n", 16);
    write_bytes(path_of(b, "b.csv"), "y,p,q,r\n1,2,0,3\n0,0,4,0\n", 24);
    hog_dataset *x = open_ok(a, NULL), *y = open_ok(b, NULL);
    assert_same_rows(x, y);
    hog_dataset_close(x);
    hog_dataset_close(y);
}

Test(etl_format, builder_in_memory_and_limits)
{
    hog_builder *b;
    cr_assert_eq(hog_builder_create(2, NULL, &b), 0);
    hog_dataset *ds;
    cr_assert_eq(hog_builder_finish(b, HOG_FORMAT_LIBSVM, &ds), HOG_EEMPTY);
    cr_assert_null(ds);

    cr_assert_eq(hog_builder_create(2, NULL, &b), 0);
    uint32_t idx[] = {3, 9};
    float val[] = {1.5f, -2};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(hog_builder_add(b, (float)i, idx, val, (uint32_t)(i % 3)), 0);
    cr_assert_eq(hog_builder_rows(b), 5);
    cr_assert_eq(hog_builder_finish(b, HOG_FORMAT_CSV, &ds), 0);
    hog_dataset_info info;
    hog_dataset_get_info(ds, &info);
    cr_assert_eq(info.rows, 5);
    cr_assert_eq(info.blocks, 3);
    cr_assert_eq(info.nnz, 0 + 1 + 2 + 0 + 1);
    cr_assert_eq(info.features, 10);
    cr_assert_eq(info.format, HOG_FORMAT_CSV);
    hog_row r = hog_dataset_row(ds, 4);
    cr_assert_eq(r.nnz, 1);
    cr_assert_eq(r.index[0], 3);
    cr_assert_eq(r.label, 4.0f);
    /* Blocks are contiguous in file order: index follows ptr, label follows value. */
    const hog_block *blk = &ds->blocks[1];
    cr_assert_eq((const void *)blk->index, (const void *)(blk->ptr + blk->rows + 1));
    cr_assert_eq((const void *)blk->label, (const void *)(blk->value + blk->nnz));
    cr_assert_null(blk->weight);
    /* The sum chains XXH3 over the arrays in file order, seeded by the previous one. */
    uint64_t sum = hog_hash64(blk->ptr, 4 * (blk->rows + 1), 0);
    sum = hog_hash64(blk->index, 4 * blk->nnz, sum);
    sum = hog_hash64(blk->value, 4 * blk->nnz, sum);
    sum = hog_hash64(blk->label, 4 * blk->rows, sum);
    cr_assert_eq(blk->sum, sum);
    cr_assert_eq(hog_block_sum(blk), sum);
    hog_dataset_close(ds);
    hog_dataset_close(NULL);
    hog_builder_free(NULL);
}

Test(etl_format, read_params_default)
{
    hog_read_params p = hog_read_params_default();
    cr_assert_eq(p.format, HOG_FORMAT_AUTO);
    cr_assert_eq(p.delimiter, 0);
    cr_assert_eq(p.header, -1);
    cr_assert_eq(p.label_index, 0);
    cr_assert_null(p.label_name);
    cr_assert_eq(p.rows_per_block, 0);
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
    cr_assert_eq(good_len, 4096 + 4 * 4096 + 4 * 32);
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

/* Recomputes every checksum and the fingerprint, so only the structural
 * checks can object: version 2 (XXH3 sums) or, with version 1, CRC-32s in
 * version 1's places. */
static void reseal_as(uint8_t *f, uint32_t version)
{
    uint32_t blocks = rd32(f + 40);
    int weighted = rd32(f + 48) & 1;
    uint8_t *table = f + rd64(f + 56);
    hog_block views[16];
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

Test(etl_format, corrupt_block_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[4096 + 2 * 4096 + 10] ^= 0x40; /* inside block 2 */
    expect_open(c, good_len, HOG_ECHECKSUM, ": block 2: checksum mismatch");
    free(c);
}

Test(etl_format, of_several_bad_blocks_the_first_is_named)
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

Test(etl_format, corrupt_table_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[good_len - 32 + 20] ^= 1; /* nnz of the last entry */
    expect_open(c, good_len, HOG_ECHECKSUM, ": block table checksum mismatch");
    free(c);
}

Test(etl_format, corrupt_header_byte)
{
    make_good();
    uint8_t *c = copy_good();
    c[16] ^= 1; /* rows */
    expect_open(c, good_len, HOG_ECHECKSUM, ": header checksum mismatch");
    free(c);
}

Test(etl_format, truncated)
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

Test(etl_format, wrong_magic_and_empty)
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

Test(etl_format, wrong_version)
{
    make_good();
    uint8_t *c = copy_good();
    wr32(c + 8, 3);
    reseal(c);
    expect_open(c, good_len, HOG_EVERSION, ": version 3, this build reads versions 1 to 2");
    wr32(c + 8, 0);
    reseal(c);
    expect_open(c, good_len, HOG_EVERSION, ": version 0, this build reads versions 1 to 2");
    free(c);
}

/* Version 1 files (CRC-32 checksums) still open, with the same rows; a
 * version 1 file cannot claim weights; rewritten, they become version 2. */
Test(etl_format, version_1_is_read)
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
    /* saving a version 1 data set writes version 2 with sums */
    cr_assert_eq(hog_dataset_save(v1, path_of(out, "resaved.hgd")), 0);
    size_t n;
    uint8_t *r = read_bytes(out, &n);
    cr_assert_eq(n, good_len);
    cr_assert_eq(memcmp(r, good, n), 0, "a version 1 file saved again is the version 2 file");
    free(r);
    hog_dataset_close(v1);
    hog_dataset_close(v2);
    free(c);
}

/* Vowpal Wabbit importance weights travel into the blocks, through the
 * binary format and back, and a bad weight in a file is caught. */
Test(etl_format, weights_round_trip)
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

Test(etl_format, index_out_of_range_caught_by_range_check)
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

Test(etl_format, structural_corruptions)
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

    /* unknown flags */
    wr32(c + 48, 4);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": unknown flags 0x4");
    memcpy(c, good, good_len);

    /* rows that do not fit the block count */
    wr64(c + 16, 13);
    reseal(c);
    expect_open(c, good_len, HOG_ECORRUPT, ": 4 blocks cannot hold 13 rows of 3 per block");
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

/* ===================================================================== *
 *  Atomic output
 * ===================================================================== */

Test(etl_format, convert_leaves_no_file_on_parse_error)
{
    char in[256], out[256], err[512] = "";
    write_bytes(path_of(in, "bad.svm"), "1 1:1\n1 2:x\n", 12);
    path_of(out, "out.hgd");
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(in, NULL, out, &info, err, sizeof(err)), HOG_EFORMAT);
    char expect[512];
    snprintf(expect, sizeof(expect), "%s:2:5: expected a number, found 'x'", in);
    cr_assert_str_eq(err, expect);
    cr_assert_eq(access(out, F_OK), -1);
    cr_assert_eq(count_files(), 1);

    /* an empty input: nothing written either */
    write_bytes(in, "", 0);
    cr_assert_eq(hog_dataset_convert(in, NULL, out, NULL, err, sizeof(err)), HOG_EEMPTY);
    cr_assert_eq(access(out, F_OK), -1);
    cr_assert_eq(count_files(), 1);
}

Test(etl_format, convert_keeps_older_file_on_error)
{
    char in[256], out[256], err[512] = "";
    path_of(out, "out.hgd");
    write_bytes(out, "older contents", 14);
    write_bytes(path_of(in, "bad.csv"), "1,2\n3,4,5\n", 10);
    cr_assert_eq(hog_dataset_convert(in, NULL, out, NULL, err, sizeof(err)), HOG_EFORMAT);
    size_t len;
    uint8_t *got = read_bytes(out, &len);
    cr_assert_eq(len, 14);
    cr_assert_eq(memcmp(got, "older contents", 14), 0);
    free(got);
    cr_assert_eq(count_files(), 2);

    /* a good input replaces it */
    write_bytes(in, "1,2\n3,4\n", 8);
    hog_dataset_info info;
    cr_assert_eq(hog_dataset_convert(in, NULL, out, &info, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.rows, 2);
    hog_dataset *ds = open_ok(out, NULL);
    hog_row r = hog_dataset_row(ds, 1);
    cr_assert_eq(r.label, 3.0f);
    cr_assert_eq(r.nnz, 1);
    cr_assert_eq(r.value[0], 4.0f);
    hog_dataset_close(ds);

    /* binary to binary: validated and rewritten */
    char out2[256];
    cr_assert_eq(hog_dataset_convert(out, NULL, path_of(out2, "copy.hgd"), &info, err,
                                     sizeof(err)), 0, "%s", err);
    cr_assert_eq(info.rows, 2);
    cr_assert_eq(count_files(), 3);
}

Test(etl_format, save_into_missing_folder_fails_cleanly)
{
    char txt[256], out[256];
    write_bytes(path_of(txt, "a.svm"), "1 1:1\n", 6);
    hog_dataset *ds = open_ok(txt, NULL);
    cr_assert_eq(hog_dataset_save(ds, path_of(out, "no/such/dir/a.hgd")), -ENOENT);
    hog_dataset_close(ds);
    cr_assert_eq(count_files(), 1);
}

Test(etl_format, missing_binary_file)
{
    char path[256], err[512], expect[512];
    hog_dataset *ds;
    cr_assert_eq(hog_hgd_open(path_of(path, "none.hgd"), &ds, err, sizeof(err)), -ENOENT);
    snprintf(expect, sizeof(expect), "%s: %s", path, strerror(ENOENT));
    cr_assert_str_eq(err, expect);
}

/* AVX code must not leave the vector registers' upper halves in use: the
 * scalar SSE loops that run afterwards (on this thread, and on the threads
 * it creates) would slow down by almost half. Checked with the CPU's own
 * XINUSE bitmap after hashing an input long enough for XXH3's vector path. */
Test(etl_format, hashing_leaves_the_vector_registers_clean)
{
    hog_vector_state_clear();
    int before = hog_vector_state_dirty();
    if (before < 0)
        cr_skip_test("this CPU cannot report which register state is in use (no XGETBV with ECX=1)");
    cr_assert_eq(before, 0, "vzeroupper left the upper halves in use");
    size_t len = 1 << 20;
    uint8_t *buf = malloc(len);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    uint64_t h = hog_hash64(buf, len, 42);
    cr_assert_eq(hog_vector_state_dirty(), 0, "hog_hash64 returned with the AVX upper halves in use");
    cr_assert_eq(hog_hash64(buf, len, 42), h);
    free(buf);
}
