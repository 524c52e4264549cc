/* test_etl_source.c: the block source: every block once in its pass's order, in core, through the mapping or with O_DIRECT, the same bytes either way; a bad block stops the pass and is named at its end; a file changed under a pass, and a feature count past the blocks', are the check's errors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "etl/etl.h"

#include "test_etl_files.h"

static void setup(void)
{
    scratch_make("etl-source");
}

TestSuite(etl_source, .init = setup, .fini = scratch_remove);

/* 1000 rows in 16 blocks: text in memory (*mem) and the same as a .hgd
 * opened to be checked at first read (*hgd, its path in path). */
static void two_sets(hog_dataset **mem, hog_dataset **hgd, char *path)
{
    char txt[256], err[512] = "";
    make_libsvm(path_of(txt, "data.svm"), 1000);
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 64;
    *mem = open_ok(txt, &p);
    cr_assert_eq(hog_dataset_save(*mem, path_of(path, "data.hgd")), 0);
    hog_read_params lazy = hog_read_params_default();
    lazy.verify = HOG_VERIFY_AT_FIRST_READ;
    cr_assert_eq(hog_dataset_open(path, &lazy, hgd, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq((*hgd)->info.blocks, 16);
}

/* Takes every block of a pass in file order with hog_block_source_next and
 * checks each against want's; returns how many came. */
static uint32_t take_all(hog_block_source *s, const hog_dataset *want)
{
    uint32_t b, n = 0;
    const hog_block *blk;
    int rc;
    while ((rc = hog_block_source_next(s, &b, &blk)) > 0) {
        cr_assert_eq(b, n, "file order: block %u came %uth", b, n);
        cr_assert_eq(blk->rows, want->blocks[b].rows, "block %u", b);
        cr_assert_eq(hog_block_sum(blk), want->blocks[b].sum, "block %u: its bytes", b);
        hog_block_source_release(s, b);
        n++;
    }
    cr_assert_eq(rc, 0);
    return n;
}

Test(etl_source, in_core_without_a_limit_every_block_once_in_file_order)
{
    hog_dataset *mem, *hgd;
    char path[256], err[512] = "";
    two_sets(&mem, &hgd, path);
    const hog_dataset *sets[] = {mem, hgd};
    for (int i = 0; i < 2; i++) {
        hog_source_params sp = hog_source_params_default();
        hog_block_source *s;
        cr_assert_eq(hog_block_source_open(sets[i], &sp, &s), 0);
        cr_assert_eq(hog_block_source_out_of_core(s), 0, "no limit: in core");
        for (hog_pass_purpose pur = HOG_PASS_EPOCH; pur <= HOG_PASS_CHECK; pur++) {
            cr_assert_eq(hog_block_source_pass(s, pur, NULL, 0), 0);
            cr_assert_eq(take_all(s, mem), 16, "set %d, purpose %d", i, (int)pur);
            cr_assert_eq(hog_block_source_failed(s), UINT32_MAX);
            cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), 0, "%s", err);
        }
        hog_block_source_close(s);
    }
    hog_dataset_close(hgd);
    hog_dataset_close(mem);
}

/* Out of core (a limit far below the data), through the ring where this
 * file system takes O_DIRECT and through the mapping: the blocks of a given
 * order come in it with the same bytes, and a second pass reads them again. */
Test(etl_source, out_of_core_a_given_order_gives_the_same_blocks_by_ring_or_mapping)
{
    hog_dataset *mem, *hgd;
    char path[256], err[512] = "";
    two_sets(&mem, &hgd, path);
    uint32_t order[16];
    for (uint32_t i = 0; i < 16; i++)
        order[i] = (i * 7 + 3) % 16;
    for (int mapped = 0; mapped < 2; mapped++) {
        hog_source_params sp = hog_source_params_default();
        sp.readers = 2;
        sp.limit = 4096;
        sp.mapped = mapped;
        hog_block_source *s;
        cr_assert_eq(hog_block_source_open(hgd, &sp, &s), 0);
        cr_assert_eq(hog_block_source_out_of_core(s), 1, "the data is larger than half the limit");
        for (int pass = 0; pass < 2; pass++) {
            cr_assert_eq(hog_block_source_pass(s, HOG_PASS_EPOCH, order + 2, 14), 0);
            for (uint32_t i = 2; i < 16; i++) {
                const hog_block *blk = hog_block_source_get(s, order[i]);
                cr_assert_not_null(blk, "block %u", order[i]);
                cr_assert_eq(hog_block_sum(blk), mem->blocks[order[i]].sum, "block %u", order[i]);
                cr_assert_eq(memcmp(blk->index, mem->blocks[order[i]].index, blk->nnz * sizeof(uint32_t)), 0);
                hog_block_source_release(s, order[i]);
            }
            cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), 0, "%s", err);
        }
        hog_block_source_close(s);
    }
    /* A resumed run keeps the way it began: in core, though the data is large. */
    hog_source_params sp = hog_source_params_default();
    sp.limit = 4096;
    sp.out_of_core = 0;
    hog_block_source *s;
    cr_assert_eq(hog_block_source_open(hgd, &sp, &s), 0);
    cr_assert_eq(hog_block_source_out_of_core(s), 0);
    hog_block_source_close(s);
    hog_dataset_close(hgd);
    hog_dataset_close(mem);
}

/* A block that fails its first check stops the claims, and the pass's end
 * names it; in core or out of core, by ring or mapping. */
Test(etl_source, a_bad_block_stops_the_pass_and_its_end_names_it)
{
    hog_dataset *mem, *hgd;
    char path[256], bad[256], want[512] = "", err[512] = "";
    two_sets(&mem, &hgd, path);
    hog_dataset_close(hgd);
    hgd_bad_block(path, path_of(bad, "bad.hgd"), want, sizeof(want));
    uint32_t named;
    cr_assert_eq(sscanf(strstr(want, ": block ") + 8, "%u", &named), 1, "%s", want);
    for (int way = 0; way < 3; way++) {
        hog_read_params lazy = hog_read_params_default();
        lazy.verify = HOG_VERIFY_AT_FIRST_READ;
        cr_assert_eq(hog_dataset_open(bad, &lazy, &hgd, err, sizeof(err)), 0, "%s", err);
        hog_source_params sp = hog_source_params_default();
        sp.limit = way ? 4096 : 0;
        sp.mapped = way == 2;
        hog_block_source *s;
        cr_assert_eq(hog_block_source_open(hgd, &sp, &s), 0);
        cr_assert_eq(hog_block_source_pass(s, HOG_PASS_EVAL, NULL, 0), 0);
        uint32_t b, got = 0;
        const hog_block *blk;
        int rc;
        while ((rc = hog_block_source_next(s, &b, &blk)) > 0) {
            hog_block_source_release(s, b);
            got++;
        }
        cr_assert_eq(rc, HOG_ECORRUPT, "way %d: the bad block is not given", way);
        cr_assert_eq(b, named);
        cr_assert_eq(got, named, "way %d: the blocks before it came", way);
        cr_assert_eq(hog_block_source_next(s, &b, &blk), 0, "no claim after a failed block");
        cr_assert_eq(hog_block_source_failed(s), named);
        err[0] = 0;
        cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), HOG_ECHECKSUM, "way %d: %s", way, err);
        cr_assert(strstr(err, "checksum mismatch") != NULL, "%s", err);
        cr_assert(strstr(err, want + strlen(bad)) != NULL, "way %d: %s, wanted %s", way, err, want);
        hog_block_source_close(s);
        hog_dataset_close(hgd);
    }
    hog_dataset_close(mem);
}

/* A file rewritten in place under a pass: what the pass read cannot be
 * trusted, and its end says so. */
Test(etl_source, a_file_changed_under_a_pass_is_its_ends_error)
{
    hog_dataset *mem, *hgd;
    char path[256], err[512] = "";
    two_sets(&mem, &hgd, path);
    hog_source_params sp = hog_source_params_default();
    hog_block_source *s;
    cr_assert_eq(hog_block_source_open(hgd, &sp, &s), 0);
    cr_assert_eq(hog_block_source_pass(s, HOG_PASS_ONCE, NULL, 0), 0);
    cr_assert_eq(take_all(s, mem), 16);
    /* In place, as a writer would: the same bytes, a new modification time. */
    struct timespec later[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 1000000000}};
    cr_assert_eq(utimensat(AT_FDCWD, path, later, 0), 0);
    cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "data.hgd changed while it was read") != NULL, "%s", err);
    hog_block_source_close(s);
    hog_dataset_close(hgd);
    hog_dataset_close(mem);
}

/* The check's pass over every block ends with the header's feature count
 * against the blocks' largest index; a pass of another purpose, or over
 * some blocks, does not judge the count. */
Test(etl_source, the_checks_pass_over_every_block_judges_the_feature_count)
{
    hog_dataset *mem, *hgd;
    char path[256], err[512] = "";
    two_sets(&mem, &hgd, path);
    hog_dataset_close(hgd);
    size_t n;
    uint8_t *f = read_bytes(path, &n);
    uint64_t features;
    memcpy(&features, f + 24, 8);
    features += 5;
    memcpy(f + 24, &features, 8);
    /* No summary to refuse the count at open: the flag off, the header resealed. */
    uint32_t flags;
    memcpy(&flags, f + 48, 4);
    flags &= ~HOG_HGD_SUMMARY;
    memcpy(f + 48, &flags, 4);
    memset(f + 224, 0, 24);
    hgd_reseal_header(f);
    write_bytes(path, f, n);
    free(f);
    hog_read_params lazy = hog_read_params_default();
    lazy.verify = HOG_VERIFY_AT_FIRST_READ;
    cr_assert_eq(hog_dataset_open(path, &lazy, &hgd, err, sizeof(err)), 0, "%s", err);
    hog_source_params sp = hog_source_params_default();
    hog_block_source *s;
    cr_assert_eq(hog_block_source_open(hgd, &sp, &s), 0);
    const uint32_t some[] = {0, 1, 2};
    cr_assert_eq(hog_block_source_pass(s, HOG_PASS_CHECK, some, 3), 0);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_not_null(hog_block_source_get(s, some[i]));
        hog_block_source_release(s, some[i]);
    }
    cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), 0, "some blocks: %s", err);
    cr_assert_eq(hog_block_source_pass(s, HOG_PASS_EVAL, NULL, 0), 0);
    cr_assert_eq(take_all(s, mem), 16);
    cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), 0, "evaluation: %s", err);
    cr_assert_eq(hog_block_source_pass(s, HOG_PASS_CHECK, NULL, 0), 0);
    cr_assert_eq(take_all(s, mem), 16);
    cr_assert_eq(hog_block_source_end(s, err, sizeof(err)), HOG_ECORRUPT);
    cr_assert(strstr(err, "header field features is") != NULL, "%s", err);
    hog_block_source_close(s);
    hog_dataset_close(hgd);
    hog_dataset_close(mem);
}
