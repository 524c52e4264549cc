/* test_etl_builder.c: the block builder: rows into blocks in memory, their layout and sums, its limits, and streaming to a file with O_DIRECT turned on part way. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl/etl.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("etl-builder");
}

TestSuite(etl_builder, .init = setup, .fini = scratch_remove);

Test(etl_builder, builder_in_memory_and_limits)
{
    hog_builder *b;
    cr_assert_eq(hog_builder_create(2, NULL, &b), 0);
    hog_dataset *ds;
    cr_assert_eq(hog_builder_finish(b, HOG_FORMAT_LIBSVM, &ds), HOG_EEMPTY);
    cr_assert_null(ds);
    hog_builder_free(b);

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
Test(etl_builder, turning_direct_on_part_way_gives_the_same_bytes)
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

/* A pass builder's consumer that keeps each block by trading its own
 * arrays for the builder's, as predict's reader does: arrays made by
 * hog_block_buffers_ready, which has no field array to give. */
typedef struct field_keeper {
    hog_block_buffers mine[8];
    hog_block blk[8];
    uint32_t n;
} field_keeper;

static int keep_block(void *ctx, const hog_block *blk, int kept, double position, hog_block_buffers *bufs)
{
    (void)position;
    field_keeper *k = ctx;
    cr_assert_not(kept);
    cr_assert_lt(k->n, 8);
    hog_block_buffers *m = &k->mine[k->n];
    cr_assert_eq(hog_block_buffers_ready(m, 2, 0), 0);
    cr_assert_null(m->field);
    hog_block_buffers t = *m;
    *m = *bufs;
    *bufs = t;
    k->blk[k->n++] = *blk;
    return 0;
}

/* Rows with fields: each value's field travels into its block, after the
 * other arrays and in the sum, through memory, a pass that trades arrays,
 * and a file; a data set's rows have fields or none, never both. */
Test(etl_builder, rows_with_fields)
{
    /* three times the rows {1: 1 (field 0), 7: 2 (4)}, {}, {0: 3 (1), 3: 4 (2), 9: 5 (4)} */
    uint32_t ptr[10] = {0}, index[15];
    float value[15], label[9];
    uint16_t field[15];
    static const uint32_t ix[5] = {1, 7, 0, 3, 9}, ends[3] = {2, 2, 5};
    static const uint16_t fx[5] = {0, 4, 1, 2, 4};
    for (uint32_t i = 0; i < 15; i++) {
        index[i] = ix[i % 5];
        value[i] = (float)(i % 5 + 1);
        field[i] = fx[i % 5];
    }
    for (uint32_t i = 0; i < 9; i++) {
        ptr[i + 1] = 5 * (i / 3) + ends[i % 3];
        label[i] = (float)(i % 3 != 1);
    }
    hog_rows r;
    memset(&r, 0, sizeof(r));
    r.rows = 9;
    r.nnz = 15;
    r.ptr = ptr;
    r.index = index;
    r.value = value;
    r.label = label;
    r.field = field;
    r.fielded = 1;

    hog_builder *b;
    cr_assert_eq(hog_builder_create(2, NULL, &b), 0);
    cr_assert_eq(hog_builder_add_rows(b, &r), 0);
    cr_assert_eq(hog_builder_add(b, 0, ix, value, 1), HOG_EPARAM, "a row without fields after rows with");
    hog_dataset *ds;
    cr_assert_eq(hog_builder_finish(b, HOG_FORMAT_FFM, &ds), 0);
    cr_assert_eq(hog_dataset_fields(ds), 5);
    const hog_block *blk = &ds->blocks[1]; /* rows 2 and 3: fields 1 2 4, then 0 4 */
    static const uint16_t want[5] = {1, 2, 4, 0, 4};
    cr_assert_not_null(blk->field);
    cr_assert_eq((const void *)blk->field, (const void *)(blk->label + blk->rows));
    cr_assert_eq(memcmp(blk->field, want, sizeof(want)), 0);
    uint64_t sum = hog_hash64(blk->ptr, 4 * (blk->rows + 1), 0);
    sum = hog_hash64(blk->index, 4 * blk->nnz, sum);
    sum = hog_hash64(blk->value, 4 * blk->nnz, sum);
    sum = hog_hash64(blk->label, 4 * blk->rows, sum);
    cr_assert_eq(blk->sum, hog_hash64(blk->field, 2 * blk->nnz, sum), "the fields close the sum");

    /* the same rows through a pass whose consumer trades arrays */
    field_keeper *k = calloc(1, sizeof(*k));
    cr_assert_not_null(k);
    cr_assert_eq(hog_builder_create_pass(2, &b), 0);
    hog_builder_on_block(b, keep_block, k);
    cr_assert_eq(hog_builder_add_rows(b, &r), 0);
    cr_assert_eq(hog_builder_finish_pass(b), 0);
    cr_assert_eq(k->n, 5);
    for (uint32_t i = 0; i < k->n; i++) {
        cr_assert_eq(k->blk[i].nnz, ds->blocks[i].nnz);
        cr_assert_eq(k->blk[i].sum, ds->blocks[i].sum, "block %u", i);
        cr_assert_not_null(k->blk[i].field, "block %u", i);
        cr_assert_eq(memcmp(k->blk[i].field, ds->blocks[i].field, 2 * (size_t)ds->blocks[i].nnz), 0, "block %u", i);
        hog_block_buffers_free(&k->mine[i]);
    }
    free(k);

    /* and to a file, which opens with them */
    char path[256], err[256] = "";
    hog_atomic_file f;
    cr_assert_eq(hog_atomic_open(&f, path_of(path, "fields.hgd")), 0);
    cr_assert_eq(hog_builder_create(2, &f, &b), 0);
    cr_assert_eq(hog_builder_add_rows(b, &r), 0);
    cr_assert_eq(hog_builder_finish_file(b, NULL), 0);
    cr_assert_eq(hog_atomic_commit(&f), 0);
    hog_dataset *bin;
    cr_assert_eq(hog_dataset_open(path, NULL, &bin, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_fields(bin), 5);
    assert_same_rows(ds, bin);
    for (uint32_t i = 0; i < ds->info.blocks; i++)
        cr_assert_eq(memcmp(bin->blocks[i].field, ds->blocks[i].field, 2 * (size_t)ds->blocks[i].nnz), 0);
    hog_dataset_close(bin);
    hog_dataset_close(ds);
}
