/* test_etl_input.c: how a file to train on is read: text to a feed, binary data opened whole and copied to the cache, a cache read instead only while it matches its input, a pipe marked unsized, a one-pass read ended by a stop fd, the test set read with the training data's index base, data past the feature ceiling refused. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
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

/* The warnings the library logged, one per line. */
static char logged[4096];

static void keep_log(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    if (level == HOG_LOG_WARN)
        snprintf(logged + strlen(logged), sizeof(logged) - strlen(logged), "%s\n", msg);
}

/* Opens text with cache (rp NULL: the defaults) and says whether the cache
 * was used; a rebuilt cache is finished, as a run would. */
static int opens_cache(const char *text, const char *cache, const hog_read_params *rp)
{
    hog_input in;
    char err[512] = "";
    logged[0] = '\0';
    hog_log_set(keep_log, NULL, HOG_LOG_WARN);
    cr_assert_eq(hog_input_open(text, rp, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    int used = in.cache_used;
    cr_assert(!used || (in.ds && !in.feed), "a used cache is opened whole");
    hog_dataset_close(in.feed ? finish_feed(&in) : in.ds);
    return used;
}

Test(etl_input, a_cache_of_the_text_as_it_is_is_read_instead)
{
    const char *text = write_text("t.svm");
    char cache[160], err[512] = "";
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    cr_assert_eq(opens_cache(text, cache, NULL), 0, "no cache yet: the text is read");
    cr_assert_str_eq(logged, "", "no cache is no warning");
    hog_hgd_source src;
    int has;
    cr_assert_eq(hog_hgd_source_read(cache, &src, &has, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(has, 1, "the cache records its source");
    struct stat st;
    cr_assert_eq(stat(text, &st), 0);
    cr_assert_eq(src.bytes, (uint64_t)st.st_size);
    cr_assert_eq(src.inode, (uint64_t)st.st_ino);

    hog_input in;
    cr_assert_eq(hog_input_open(text, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(in.feed);
    cr_assert_eq(in.cache_used, 1);
    cr_assert_eq(in.ds->info.rows, ROWS);
    hog_dataset_close(in.ds);
    cr_assert_eq(opens_cache(text, cache, NULL), 1);
    cr_assert_str_eq(logged, "");

    /* A cache as new as can be is stale all the same once the text is touched. */
    cr_assert_eq(stat(cache, &st), 0);
    struct timespec later[2] = {st.st_mtim, st.st_mtim};
    later[0].tv_sec += 10;
    later[1].tv_sec += 10;
    cr_assert_eq(utimensat(AT_FDCWD, text, later, 0), 0);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "t.hgd: cache of another ") && strstr(logged, "t.svm (modified ") &&
              strstr(logged, " now, ") && strstr(logged, "): rebuilt\n"), "%s", logged);
    cr_assert_eq(opens_cache(text, cache, NULL), 1, "rebuilt, it is fresh");
}

/* The report: `cp -p older_other.svm a.svm` gave the text an older
 * time than the cache's, and a run trained on the cache's 9,000 rows. */
Test(etl_input, a_file_copied_over_the_text_with_its_old_time_is_not_the_cached_one)
{
    const char *text = write_text("a.svm");
    char other[160], cache[160];
    snprintf(other, sizeof(other), "%s/older_other.svm", dir);
    snprintf(cache, sizeof(cache), "%s/a.hgd", dir);
    FILE *f = fopen(other, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 100; i++)
        fprintf(f, "%d 3:1\n", i % 2);
    cr_assert_eq(fclose(f), 0);
    struct timespec old[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
    cr_assert_eq(utimensat(AT_FDCWD, other, old, 0), 0);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    struct stat then;
    cr_assert_eq(stat(text, &then), 0);

    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cp -p %s %s", other, text);
    cr_assert_eq(system(cmd), 0);
    hog_input in;
    char err[512] = "";
    logged[0] = '\0';
    hog_log_set(keep_log, NULL, HOG_LOG_WARN);
    cr_assert_eq(hog_input_open(text, NULL, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert_eq(in.cache_used, 0);
    char want[512];
    snprintf(want, sizeof(want), "%s: cache of another %s (size 600 now, %lld then): rebuilt\n", cache, text,
             (long long)then.st_size);
    cr_assert_str_eq(logged, want);
    hog_dataset *ds = finish_feed(&in);
    cr_assert_eq(ds->info.rows, 100, "the new text's rows, not the cache's %d", ROWS);
    hog_dataset_close(ds);
}

/* Rewritten in place to the same size, its time put back: only the bytes
 * tell, and they are sampled at both ends. */
Test(etl_input, the_same_size_and_time_with_other_bytes_is_not_the_cached_text)
{
    const char *text = write_text("t.svm");
    char cache[160];
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    struct stat st;
    cr_assert_eq(stat(text, &st), 0);
    int fd = open(text, O_WRONLY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(pwrite(fd, "7", 1, st.st_size - 2), 1); /* the last row's 0.5 becomes 0.7 */
    cr_assert_eq(close(fd), 0);
    struct timespec back[2] = {st.st_atim, st.st_mtim};
    cr_assert_eq(utimensat(AT_FDCWD, text, back, 0), 0);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "t.svm (the same size and time, other bytes in its first or last MiB): rebuilt\n"), "%s",
              logged);
}

Test(etl_input, other_read_options_rebuild_the_cache)
{
    const char *text = write_text("t.svm");
    char cache[160];
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    hog_read_params rp = hog_read_params_default();
    rp.hash_bits = 10;
    cr_assert_eq(opens_cache(text, cache, &rp), 0);
    cr_assert(strstr(logged, "t.svm read with other options (hog_read_params.hash_bits = 10 now, 0 then): rebuilt\n"),
              "%s", logged);
    cr_assert_eq(opens_cache(text, cache, &rp), 1);
    rp.on_error = HOG_ON_ERROR_SKIP;
    cr_assert_eq(opens_cache(text, cache, &rp), 0);
    cr_assert(strstr(logged, "(hog_read_params.on_error = HOG_ON_ERROR_SKIP now, HOG_ON_ERROR_STOP then)"), "%s",
              logged);
    rp.ignore = "3";
    cr_assert_eq(opens_cache(text, cache, &rp), 0);
    cr_assert(strstr(logged, "(hog_read_params.ignore differs)"), "%s", logged);
    rp.threads = 1; /* how many parse it changes nothing in the rows */
    cr_assert_eq(opens_cache(text, cache, &rp), 1);
}

Test(etl_input, a_damaged_cache_or_one_without_a_record_is_rebuilt_never_fatal)
{
    const char *text = write_text("t.svm");
    char cache[160], err[512] = "";
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    flip_byte(cache, 5000); /* in the first block */
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "t.hgd: not a usable cache (block 0: checksum mismatch"), "%s", logged);
    cr_assert_eq(opens_cache(text, cache, NULL), 1, "the rebuilt cache is whole again");
    flip_byte(cache, 100); /* in the source record: the header's checksum covers it */
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "t.hgd: not a usable cache (header checksum mismatch"), "%s", logged);
    cr_assert_eq(truncate(cache, 100), 0);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "not a usable cache (truncated"), "%s", logged);

    /* A data set converted from the text (or a cache written before caches
     * had records) says nothing of its source. */
    cr_assert_eq(hog_dataset_convert(text, NULL, cache, NULL, err, sizeof(err)), 0, "%s", err);
    hog_hgd_source src;
    int has;
    cr_assert_eq(hog_hgd_source_read(cache, &src, &has, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(has, 0);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    cr_assert(strstr(logged, "t.hgd: holds no record of the file it caches"), "%s", logged);
    cr_assert_eq(opens_cache(text, cache, NULL), 1);

    /* The input itself as its cache is refused: it would be replaced. */
    hog_input in;
    cr_assert_eq(hog_input_open(text, NULL, text, 8, &in, err, sizeof(err)), HOG_EPARAM);
    cr_assert(strstr(err, "is the input"), "%s", err);
}

Test(etl_input, a_binary_input_is_cached_with_its_record_too)
{
    const char *text = write_text("t.svm");
    char hgd[160], cache[160], err[512] = "";
    snprintf(hgd, sizeof(hgd), "%s/t.hgd", dir);
    snprintf(cache, sizeof(cache), "%s/copy.hgd", dir);
    cr_assert_eq(hog_dataset_convert(text, NULL, hgd, NULL, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(opens_cache(hgd, cache, NULL), 0, "first the copy is made");
    cr_assert_eq(opens_cache(hgd, cache, NULL), 1);
    hog_read_params rp = hog_read_params_default();
    rp.hash_bits = 12; /* read options do not apply to a binary input */
    cr_assert_eq(opens_cache(hgd, cache, &rp), 1);
    cr_assert_eq(hog_dataset_convert(text, NULL, hgd, NULL, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(opens_cache(hgd, cache, NULL), 0, "the input was replaced");
    cr_assert(strstr(logged, "copy.hgd: cache of another "), "%s", logged);
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

/* One pass over a pipe whose writer stays: the stop fd given to
 * hog_input_open_pass ends it, and hog_input_stopped says so; a file read
 * to its end with no stop fd was not stopped. */
Test(etl_input, a_one_pass_read_ends_with_its_stop_fd, .timeout = 30)
{
    int fds[2], efd = eventfd(0, EFD_CLOEXEC);
    cr_assert_geq(efd, 0);
    cr_assert_eq(pipe(fds), 0);
    const char rows[] = "1 1:1\n0 2:1\n1 3:1\n";
    cr_assert_eq(write(fds[1], rows, sizeof(rows) - 1), (ssize_t)(sizeof(rows) - 1));
    char path[64], err[512] = "";
    snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
    hog_input in;
    cr_assert_eq(hog_input_open_pass(path, NULL, 8, efd, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(in.feed);
    cr_assert_eq(eventfd_write(efd, 1), 0);
    hog_block blk;
    double pos;
    uint32_t n = 0;
    int rc;
    while ((rc = hog_feed_next(in.feed, &blk, &pos, err, sizeof(err))) == 1) {
        n += blk.rows;
        hog_feed_release(in.feed);
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(n, 3);
    cr_assert_eq(hog_input_stopped(&in), 1);
    hog_dataset_close(finish_feed(&in));
    cr_assert_eq(hog_input_stopped(&in), 0, "no feed any more");
    close(fds[0]);
    close(fds[1]);
    close(efd);

    cr_assert_eq(hog_input_open_pass(write_text("p.svm"), NULL, 8, -1, &in, err, sizeof(err)), 0, "%s", err);
    n = 0;
    while ((rc = hog_feed_next(in.feed, &blk, &pos, err, sizeof(err))) == 1) {
        n += blk.rows;
        hog_feed_release(in.feed);
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(n, ROWS);
    cr_assert_eq(hog_input_stopped(&in), 0);
    hog_dataset_close(finish_feed(&in));
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

/* The ceiling on features (what the training's memory holds): a binary
 * input or a cache whose header says more is refused when opened, before
 * its rows are used or copied; text, where the first index past it is. */
Test(etl_input, data_past_the_feature_ceiling_is_refused_before_its_rows_are_used)
{
    const char *text = write_text("t.svm"); /* 1-based, up to index 58: 58 features */
    char hgd[160], cache[160], err[512] = "", want[640];
    snprintf(hgd, sizeof(hgd), "%s/t.hgd", dir);
    snprintf(cache, sizeof(cache), "%s/c.hgd", dir);
    cr_assert_eq(hog_dataset_convert(text, NULL, hgd, NULL, err, sizeof(err)), 0, "%s", err);
    hog_read_params rp = hog_read_params_default();
    rp.max_features = 58;
    hog_input in;
    cr_assert_eq(hog_input_open(hgd, &rp, NULL, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(in.ds->info.features, 58);
    hog_dataset_close(in.ds);

    rp.max_features = 57;
    snprintf(want, sizeof(want), "%s: 58 features are past the ceiling of 57 (hog_read_params.max_features, "
             "hog_train_params.mem_limit): make it from its text again, hashed (hog_read_params.hash_bits = 5)", hgd);
    cr_assert_eq(hog_input_open(hgd, &rp, NULL, 8, &in, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(in.ds);
    cr_assert_str_eq(err, want);
    hog_dataset *ds;
    cr_assert_eq(hog_dataset_open(hgd, &rp, &ds, err, sizeof(err)), HOG_EPARAM);
    cr_assert_null(ds);
    cr_assert_str_eq(err, want);
    cr_assert_eq(hog_input_open(hgd, &rp, cache, 8, &in, err, sizeof(err)), HOG_EPARAM);
    cr_assert_str_eq(err, want);
    cr_assert_neq(access(cache, F_OK), 0, "nothing copied");

    /* a cache of the text made without the ceiling is refused with it */
    rp.max_features = 0;
    cr_assert_eq(hog_input_open(text, &rp, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    hog_dataset_close(finish_feed(&in));
    rp.max_features = 57;
    cr_assert_eq(hog_input_open(text, &rp, cache, 8, &in, err, sizeof(err)), HOG_EPARAM);
    snprintf(want, sizeof(want), "%s: 58 features are past the ceiling of 57 (hog_read_params.max_features, "
             "hog_train_params.mem_limit): make it from its text again, hashed (hog_read_params.hash_bits = 5)",
             cache);
    cr_assert_str_eq(err, want);

    /* the text: at the first index past it, line 9 ("0 9:1 58:0.5") */
    cr_assert_eq(hog_input_open(text, &rp, NULL, 8, &in, err, sizeof(err)), 0, "%s", err);
    hog_feed_drain(in.feed);
    cr_assert_eq(hog_feed_finish(in.feed, &ds, err, sizeof(err)), HOG_EFORMAT);
    hog_feed_free(in.feed);
    snprintf(want, sizeof(want), "%s:9:7: index 58 is past the ceiling of 57 features (hog_read_params.max_features, "
             "hog_train_params.mem_limit): hash them (hog_read_params.hash_bits = 5)", text);
    cr_assert_str_eq(err, want);
}

/* Fields asked for or not make other rows (VW's namespaces, CSV's
 * columns): a cache made one way is rebuilt for a run the other way, and
 * one made with them has them. */
Test(etl_input, the_fields_option_rebuilds_the_cache)
{
    char text[160], cache[160], err[512] = "";
    snprintf(text, sizeof(text), "%s/t.vw", dir);
    FILE *f = fopen(text, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 500; i++)
        fprintf(f, "%d |u u%d |i i%d\n", i % 2, i % 13, i % 7);
    cr_assert_eq(fclose(f), 0);
    snprintf(cache, sizeof(cache), "%s/t.hgd", dir);
    cr_assert_eq(opens_cache(text, cache, NULL), 0);
    hog_read_params rp = hog_read_params_default();
    rp.fields = 1;
    cr_assert_eq(opens_cache(text, cache, &rp), 0);
    cr_assert(strstr(logged, "t.vw read with other options (hog_read_params.fields = 1 now, 0 then): rebuilt\n"),
              "%s", logged);
    hog_input in;
    cr_assert_eq(hog_input_open(text, &rp, cache, 8, &in, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(in.cache_used, 1);
    cr_assert_eq(hog_dataset_fields(in.ds), 'u' + 1, "namespaces i and u");
    hog_dataset_close(in.ds);
    rp.fields = 0;
    cr_assert_eq(opens_cache(text, cache, &rp), 0);
    cr_assert(strstr(logged, "(hog_read_params.fields = 0 now, 1 then)"), "%s", logged);
}
