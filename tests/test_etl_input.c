/* test_etl_input.c: how a file to train on is read: text to a feed, binary data opened whole and copied to the cache, a fresh cache read instead, a pipe marked unsized, the test set read with the training data's index base. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl/etl.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("input");
}

TestSuite(etl_input, .init = setup, .fini = scratch_remove);

#define ROWS 3000

/* Writes ROWS libsvm lines with 1-based indices to dir/name; returns the path. */
static const char *write_text(const char *name)
{
    static char path[160];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < ROWS; i++)
        fprintf(f, "%d %d:1 %d:0.5\n", i % 2, i % 40 + 1, 50 + i % 9);
    cr_assert_eq(fclose(f), 0);
    return path;
}

/* Reads the rest of in's feed into a data set, which it returns. */
static hog_dataset *finish_feed(hog_input *in)
{
    char err[512] = "";
    hog_dataset *ds;
    hog_feed_drain(in->feed);
    cr_assert_eq(hog_feed_finish(in->feed, &ds, err, sizeof(err)), 0, "%s", err);
    hog_feed_free(in->feed);
    in->feed = NULL;
    return ds;
}

Test(etl_input, text_goes_to_a_feed_with_the_read_parameters_settled)
{
    const char *text = write_text("t.svm");
    hog_input in;
    char err[512] = "";
    cr_assert_eq(hog_input_open(text, NULL, NULL, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(in.feed);
    cr_assert_null(in.ds);
    cr_assert_null(in.unsized);
    cr_assert_eq(in.cache_used, 0);
    cr_assert_eq(in.read.rows_per_block, HOG_DEFAULT_ROWS_PER_BLOCK);
    hog_dataset *ds = finish_feed(&in);
    cr_assert_eq(ds->info.rows, ROWS);
    cr_assert_eq(ds->info.index_base, 1);
    hog_dataset_close(ds);
}

Test(etl_input, binary_data_is_opened_whole_and_copied_to_the_cache)
{
    const char *text = write_text("t.svm");
    char hgd[160], cache[160], err[512] = "";
    snprintf(hgd, sizeof(hgd), "%s/t.hgd", dir);
    snprintf(cache, sizeof(cache), "%s/copy.hgd", dir);
    hog_read_params rp = hog_read_params_default();
    rp.rows_per_block = 1000;
    cr_assert_eq(hog_dataset_convert(text, &rp, hgd, NULL, err, sizeof(err)), 0, "%s", err);
    hog_input in;
    cr_assert_eq(hog_input_open(hgd, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(in.feed);
    cr_assert_not_null(in.ds);
    cr_assert_eq(in.cache_used, 0);
    cr_assert_eq(in.ds->info.rows, ROWS);
    cr_assert_eq(in.ds->info.blocks, 3);
    struct stat st;
    cr_assert_eq(stat(cache, &st), 0, "the binary input is copied to the cache");
    hog_dataset_close(in.ds);
}

Test(etl_input, a_cache_newer_than_the_text_is_read_instead_and_an_older_one_is_not)
{
    const char *text = write_text("t.svm");
    char cache[160], err[512] = "";
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    hog_input in;
    cr_assert_eq(hog_input_open(text, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(in.feed, "no cache yet: the text is read");
    hog_dataset_close(finish_feed(&in));

    cr_assert_eq(hog_input_open(text, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(in.feed);
    cr_assert_not_null(in.ds);
    cr_assert_eq(in.cache_used, 1);
    cr_assert_eq(in.ds->info.rows, ROWS);
    hog_dataset_close(in.ds);

    /* The text changes after the cache was written: the cache is stale. */
    struct stat st;
    cr_assert_eq(stat(cache, &st), 0);
    struct timespec later[2] = {st.st_mtim, st.st_mtim};
    later[0].tv_sec += 10;
    later[1].tv_sec += 10;
    cr_assert_eq(utimensat(AT_FDCWD, text, later, 0), 0);
    cr_assert_eq(hog_input_open(text, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(in.feed);
    cr_assert_eq(in.cache_used, 0);
    hog_dataset_close(finish_feed(&in));
}

Test(etl_input, a_pipe_is_text_of_unknown_length)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    const char rows[] = "1 1:1\n0 2:1\n1 3:1\n";
    cr_assert_eq(write(fds[1], rows, sizeof(rows) - 1), (ssize_t)(sizeof(rows) - 1));
    cr_assert_eq(close(fds[1]), 0);
    char path[64], err[512] = "";
    snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
    hog_input in;
    cr_assert_eq(hog_input_open(path, NULL, NULL, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(in.feed);
    cr_assert_not_null(in.unsized);
    cr_assert(strstr(in.unsized, "pipe"), "%s", in.unsized);
    hog_dataset *ds = finish_feed(&in);
    cr_assert_eq(ds->info.rows, 3);
    hog_dataset_close(ds);
    close(fds[0]);
}

Test(etl_input, the_test_set_is_read_with_the_training_datas_index_base)
{
    char test[160], err[512] = "";
    snprintf(test, sizeof(test), "%s/test.svm", dir);
    FILE *f = fopen(test, "w");
    cr_assert_not_null(f);
    fputs("1 3:1\n0 4:1\n", f); /* no index 0: alone, it would read as 1-based */
    cr_assert_eq(fclose(f), 0);
    hog_read_params rp = hog_read_params_default();
    hog_dataset *ds;
    cr_assert_eq(hog_input_open_test(NULL, &rp, 0, &ds, err, sizeof(err)), 0);
    cr_assert_null(ds, "no test set");

    cr_assert_eq(hog_input_open_test(test, &rp, 0, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ds->info.index_base, 0);
    cr_assert_eq(ds->info.features, 5, "0-based as the training data: index 4 is feature 4");
    hog_dataset_close(ds);

    cr_assert_eq(hog_input_open_test(test, &rp, 1, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ds->info.index_base, 1);
    cr_assert_eq(ds->info.features, 4);
    hog_dataset_close(ds);

    rp.index_base = 1; /* given, not detected: the training data's base does not apply */
    cr_assert_eq(hog_input_open_test(test, &rp, 0, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ds->info.index_base, 1);
    hog_dataset_close(ds);
}
