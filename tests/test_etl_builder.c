/* test_etl_builder.c: the block builder: rows into blocks in memory, their layout and sums, its limits, and streaming to a file with O_DIRECT turned on part way. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <stdint.h>

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
