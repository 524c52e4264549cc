/* test_etl_feed.c: the feed: every block handed out in file order while the text is read, the same data set built, errors located, the cache left whole or not at all, a one-pass read ended by a stop fd. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl/etl.h"

#include "test_scratch.h"

static void setup(void)
{
    scratch_make("feed");
}

TestSuite(etl_feed, .init = setup, .fini = scratch_remove);

/* Writes rows libsvm lines (row i: label i % 3, features i % 50 + 1 and
 * 60 + i % 7 with values i / 1000 and 1); line bad (1-based, 0: none) has a
 * malformed value. Returns the path. */
static const char *write_rows(const char *name, int rows, int bad)
{
    static char path[160];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < rows; i++) {
        if (i + 1 == bad)
            fprintf(f, "%d %d:x%d\n", i % 3, i % 50 + 1, i);
        else
            fprintf(f, "%d %d:%g %d:1\n", i % 3, i % 50 + 1, i / 1000.0, 60 + i % 7);
    }
    cr_assert_eq(fclose(f), 0);
    return path;
}

/* Starts a feed of path into dir/cache_name (NULL: into memory) with blocks
 * of rpb rows and a queue of depth; the cache's path goes to cache. */
static hog_feed *start(const char *path, const char *cache_name, uint32_t rpb, unsigned depth, char *cache)
{
    char err[512] = "";
    if (cache_name)
        snprintf(cache, 160, "%s/%s", dir, cache_name);
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = rpb;
    hog_feed *f;
    cr_assert_eq(hog_feed_start(path, &p, cache_name ? cache : NULL, NULL, depth, &f, err, sizeof(err)), 0, "%s", err);
    return f;
}

static int same_block(const hog_block *a, const hog_block *b)
{
    return a->rows == b->rows && a->nnz == b->nnz && a->sum == b->sum &&
           memcmp(a->ptr, b->ptr, (a->rows + 1) * sizeof(uint32_t)) == 0 &&
           memcmp(a->index, b->index, a->nnz * sizeof(uint32_t)) == 0 &&
           memcmp(a->value, b->value, a->nnz * sizeof(float)) == 0 &&
           memcmp(a->label, b->label, a->rows * sizeof(float)) == 0;
}

/* Takes every block from a feed of path, holding up to hold of them at a
 * time, checks each against the data set read whole, then finishes. With
 * spill, the data set goes to a scratch file in dir/spill past 40 KB. */
static void feed_spill(const char *path, const char *cache, unsigned depth, unsigned hold, int spill)
{
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 700;
    hog_dataset *whole;
    char err[512] = "", spill_dir[160];
    cr_assert_eq(hog_dataset_open(path, &p, &whole, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(whole->map);
    if (spill) {
        snprintf(spill_dir, sizeof(spill_dir), "%s/spill", dir);
        cr_assert(mkdir(spill_dir, 0700) == 0 || errno == EEXIST);
        p.mem_limit = 80000;
        p.temp_dir = spill_dir;
    }
    hog_feed *f;
    cr_assert_eq(hog_feed_start(path, &p, cache, NULL, depth, &f, err, sizeof(err)), 0, "%s", err);
    hog_block blk;
    double pos, last = 0;
    uint32_t n = 0, held = 0;
    int rc;
    while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1) {
        cr_assert_lt(n, whole->info.blocks);
        cr_assert(same_block(&blk, &whole->blocks[n]), "block %u differs", n);
        cr_assert(pos >= last && pos <= 1.0, "position %g after %g", pos, last);
        last = pos;
        n++;
        if (++held == hold) /* hold at most `hold` blocks, then give them back */
            for (; held > 0; held--)
                hog_feed_release(f);
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(n, whole->info.blocks);
    cr_assert_eq(last, 1.0);
    for (; held > 0; held--)
        hog_feed_release(f);
    hog_dataset *ds;
    cr_assert_eq(hog_feed_finish(f, &ds, err, sizeof(err)), 0, "%s", err);
    hog_feed_free(f);
    cr_assert_eq(ds->info.rows, whole->info.rows);
    cr_assert_eq(ds->info.fingerprint, whole->info.fingerprint);
    cr_assert_eq(ds->info.index_base, whole->info.index_base);
    if (cache || spill)
        cr_assert(ds->map != NULL, "the cache or the scratch file is mapped");
    if (spill) { /* a file that has no name: the folder stays empty */
        cr_assert_null(ds->heap, "the blocks held before the spill were let go");
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", spill_dir);
        cr_assert_eq(system(cmd), 0, "%s is not empty", spill_dir);
    }
    hog_dataset_close(ds);
    hog_dataset_close(whole);
}

static void feed_all(const char *path, const char *cache, unsigned depth, unsigned hold)
{
    feed_spill(path, cache, depth, hold, 0);
}

Test(etl_feed, every_block_in_order_into_memory_and_into_a_cache)
{
    const char *path = write_rows("a.svm", 20000, 0);
    char cache[160];
    snprintf(cache, sizeof(cache), "%s/a.hgd", dir);
    feed_all(path, NULL, 3, 2);
    feed_all(path, cache, 3, 3);
    feed_all(path, cache, 1, 1); /* one slot: the reader waits for every release */
    cr_assert_eq(access(cache, F_OK), 0);
}

/* Text past half of hog_read_params.mem_limit goes on in a scratch file:
 * the same blocks in the same order, a mapped data set, no file left. */
Test(etl_feed, text_past_the_limit_spills_to_a_file_without_a_name)
{
    const char *path = write_rows("a.svm", 20000, 0);
    feed_spill(path, NULL, 3, 2, 1);
    feed_spill(path, NULL, 1, 1, 1);
    /* hog_dataset_open spills the same way */
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 700;
    p.mem_limit = 80000;
    p.temp_dir = dir;
    hog_dataset *whole, *spilled;
    char err[512] = "";
    cr_assert_eq(hog_dataset_open(path, &p, &spilled, err, sizeof(err)), 0, "%s", err);
    cr_assert_not_null(spilled->map);
    cr_assert_null(spilled->heap);
    cr_assert_eq(spilled->info.format, HOG_FORMAT_LIBSVM);
    p.mem_limit = 0;
    cr_assert_eq(hog_dataset_open(path, &p, &whole, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(whole->map);
    cr_assert_eq(spilled->info.fingerprint, whole->info.fingerprint);
    cr_assert_eq(spilled->info.features, whole->info.features);
    hog_dataset_close(whole);
    hog_dataset_close(spilled);
    /* A folder that takes no file: the data set stays in memory. */
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/missing", dir);
    p.mem_limit = 80000;
    p.temp_dir = missing;
    cr_assert_eq(hog_dataset_open(path, &p, &spilled, err, sizeof(err)), 0, "%s", err);
    cr_assert_null(spilled->map);
    cr_assert_eq(spilled->info.rows, 20000);
    hog_dataset_close(spilled);
}

Test(etl_feed, a_malformed_line_stops_the_feed_and_leaves_no_cache)
{
    char cache[160], err[512] = "";
    hog_feed *f = start(write_rows("bad.svm", 20000, 15001), "bad.hgd", 700, 4, cache);
    hog_block blk;
    double pos;
    int rc;
    uint64_t rows = 0;
    while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1) {
        rows += blk.rows;
        hog_feed_release(f);
    }
    cr_assert_eq(rc, HOG_EFORMAT, "rc %d: %s", rc, err);
    cr_assert(strstr(err, "bad.svm:15001:"), "%s", err);
    cr_assert_leq(rows, 15000, "no row past the bad line is handed out");
    hog_feed_free(f);
    cr_assert_neq(access(cache, F_OK), 0, "no cache is left");
}

Test(etl_feed, drained_feed_still_builds_the_whole_data_set)
{
    char err[512] = "";
    hog_feed *f = start(write_rows("d.svm", 9000, 0), NULL, 500, 2, NULL);
    hog_block blk;
    double pos;
    cr_assert_eq(hog_feed_next(f, &blk, &pos, err, sizeof(err)), 1, "%s", err);
    hog_feed_drain(f);
    hog_feed_release(f);
    hog_dataset *ds;
    cr_assert_eq(hog_feed_finish(f, &ds, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(ds->info.rows, 9000);
    cr_assert_eq(ds->info.blocks, 18);
    hog_dataset_close(ds);
    hog_feed_free(f);
}

Test(etl_feed, freeing_a_running_feed_stops_it_and_removes_the_cache)
{
    char cache[160], err[512] = "";
    hog_feed *f = start(write_rows("c.svm", 30000, 0), "c.hgd", 300, 2, cache);
    hog_block blk;
    double pos;
    cr_assert_eq(hog_feed_next(f, &blk, &pos, err, sizeof(err)), 1, "%s", err);
    hog_feed_free(f); /* the reader is waiting for a slot: it must stop */
    cr_assert_neq(access(cache, F_OK), 0);
}

Test(etl_feed, a_cache_that_cannot_be_written_is_named_and_removed)
{
    /* Files of this process may not grow past 256 KiB: writes fail with
     * EFBIG (SIGXFSZ ignored), as they would on a full disk. */
    const char *path = write_rows("w.svm", 40000, 0);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {256 << 10, 256 << 10};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char cache[160], err[512] = "";
    hog_feed *f = start(path, "w.hgd", 1000, 2, cache);
    hog_block blk;
    double pos;
    int rc;
    while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1)
        hog_feed_release(f);
    cr_assert_eq(rc, -EFBIG, "rc %d: %s", rc, err);
    cr_assert(strstr(err, cache) && strstr(err, "too large"), "%s", err);
    hog_feed_free(f);
    cr_assert_neq(access(cache, F_OK), 0);
    /* convert says the same */
    hog_read_params p = hog_read_params_default();
    rc = hog_dataset_convert(path, &p, cache, NULL, err, sizeof(err));
    cr_assert_eq(rc, -EFBIG, "rc %d: %s", rc, err);
    cr_assert(strstr(err, cache), "%s", err);
    cr_assert_neq(access(cache, F_OK), 0);
}

/* LIBFFM text through the feed: every block handed out has its fields,
 * into memory, into a cache (the feed's slots trade arrays with the
 * builder, theirs without a field array at first) and spilled to a
 * scratch file; the data set made has the count. */
Test(etl_feed, fields_travel_with_their_blocks)
{
    char path[160], spill_dir[160], err[512] = "";
    snprintf(path, sizeof(path), "%s/c.ffm", dir);
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    for (int i = 0; i < 5000; i++)
        fprintf(out, "%d 0:%d:1 1:%d:0.5 %d:%d:1\n", i % 2, i % 11, 20 + i % 13, 2 + i % 3, 40 + i % 17);
    cr_assert_eq(fclose(out), 0);
    snprintf(spill_dir, sizeof(spill_dir), "%s/spill", dir);
    cr_assert(mkdir(spill_dir, 0700) == 0 || errno == EEXIST);
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 700;
    hog_dataset *whole;
    cr_assert_eq(hog_dataset_open(path, &p, &whole, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(hog_dataset_fields(whole), 5);
    for (int way = 0; way < 3; way++) { /* memory, a cache, a spill */
        char cache[160];
        snprintf(cache, sizeof(cache), "%s/c%d.hgd", dir, way);
        hog_read_params q = p;
        if (way == 2) {
            q.mem_limit = 80000;
            q.temp_dir = spill_dir;
        }
        hog_feed *f;
        cr_assert_eq(hog_feed_start(path, &q, way == 1 ? cache : NULL, NULL, 2, &f, err, sizeof(err)), 0, "%s", err);
        hog_block blk;
        double pos;
        uint32_t n = 0;
        int rc;
        while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1) {
            const hog_block *w = &whole->blocks[n];
            cr_assert(same_block(&blk, w), "way %d: block %u differs", way, n);
            cr_assert_not_null(blk.field, "way %d: block %u has no fields", way, n);
            cr_assert_eq(memcmp(blk.field, w->field, 2 * (size_t)w->nnz), 0, "way %d: block %u's fields", way, n);
            hog_feed_release(f);
            n++;
        }
        cr_assert_eq(rc, 0, "%s", err);
        cr_assert_eq(n, whole->info.blocks);
        hog_dataset *ds;
        cr_assert_eq(hog_feed_finish(f, &ds, err, sizeof(err)), 0, "%s", err);
        hog_feed_free(f);
        cr_assert_eq(hog_dataset_fields(ds), 5, "way %d", way);
        cr_assert(way == 0 || ds->map != NULL, "way %d: the cache or the scratch file is mapped", way);
        cr_assert_eq(ds->info.fingerprint, whole->info.fingerprint, "way %d", way);
        hog_dataset_close(ds);
    }
    hog_dataset_close(whole);
}

/* ---- a one-pass feed ended by a stop fd ---- */

static char warned[1024];
static unsigned warnings;

static void keep_warning(void *ctx, hog_log_level level, const char *msg)
{
    (void)ctx;
    if (level != HOG_LOG_WARN)
        return;
    warnings++;
    snprintf(warned, sizeof(warned), "%s", msg);
}

#define STOP_ROWS 50
/* The row after the last whole one, cut after 6 bytes, as a stop finds it. */
#define HALF_ROW "1 7:0."

/* Writes STOP_ROWS whole libsvm rows (row i: label i % 3, feature i % 9 + 1)
 * and half a row into a new pipe, whose ends go to fds; path names the
 * reading end. */
static void pipe_rows(int fds[2], char *path, size_t len)
{
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    char text[STOP_ROWS * 16 + sizeof(HALF_ROW)];
    size_t n = 0;
    for (int i = 0; i < STOP_ROWS; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%d %d:1\n", i % 3, i % 9 + 1);
    n += (size_t)snprintf(text + n, sizeof(text) - n, "%s", HALF_ROW);
    cr_assert_eq(write(fds[1], text, n), (ssize_t)n, "the pipe holds it all");
    snprintf(path, len, "/proc/self/fd/%d", fds[0]);
}

static int stop_fd(void)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cr_assert_geq(fd, 0, "eventfd: %s", strerror(errno));
    return fd;
}

/* A writer that wrote 50 rows and half a row and then says nothing, its end
 * of the pipe open all along: once the stop fd is readable (the feed's
 * reading thread waits on the pipe by then, or soon), the blocks of the 50
 * rows come out, then the end with no error; the cut row is left out with
 * one warning that names its line and says the read was stopped. */
Test(etl_feed, a_stop_fd_ends_a_one_pass_read_of_a_quiet_pipe, .timeout = 30)
{
    int fds[2], efd = stop_fd();
    char path[64], err[512] = "";
    pipe_rows(fds, path, sizeof(path));
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 16;
    hog_log_set(keep_warning, NULL, HOG_LOG_WARN);
    hog_feed *f;
    cr_assert_eq(hog_feed_start_pass(path, &p, 2, efd, &f, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(eventfd_write(efd, 1), 0);
    hog_block blk;
    double pos;
    uint32_t rows = 0;
    int rc;
    while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1) {
        for (uint32_t i = 0; i < blk.rows; i++, rows++) {
            cr_assert_eq(blk.label[i], (float)(rows % 3), "row %u", rows);
            cr_assert_eq(blk.ptr[i + 1] - blk.ptr[i], 1);
            cr_assert_eq(blk.index[blk.ptr[i]] + (uint32_t)hog_feed_index_base(f), rows % 9 + 1, "row %u: %u", rows,
                         blk.index[blk.ptr[i]]);
        }
        hog_feed_release(f);
    }
    cr_assert_eq(rc, 0, "the end, not an error: %s", err);
    cr_assert_str_empty(err);
    cr_assert_eq(rows, STOP_ROWS, "the whole rows and no more");
    cr_assert_eq(hog_feed_stopped(f), 1);
    hog_dataset *ds;
    cr_assert_eq(hog_feed_finish(f, &ds, err, sizeof(err)), 0, "%s", err);
    hog_log_set(NULL, NULL, HOG_LOG_ERROR);
    cr_assert_eq(ds->info.rows, STOP_ROWS);
    cr_assert_eq(ds->info.skipped, 0, "the cut row is not a malformed one");
    cr_assert_eq(warnings, 1, "%u warnings, the last: %s", warnings, warned);
    char want[256];
    snprintf(want, sizeof(want), "%s:%d: the read was stopped inside this line: its first %zu bytes are left out",
             path, STOP_ROWS + 1, strlen(HALF_ROW));
    cr_assert_str_eq(warned, want);
    hog_dataset_close(ds);
    hog_feed_free(f);
    eventfd_t v = 0;
    cr_assert_eq(eventfd_read(efd, &v), 0, "the feed left the stop fd as it was");
    cr_assert_eq(v, 1);
    close(fds[0]);
    close(fds[1]);
    close(efd);
}

/* Without a stop, or with one that never becomes readable, a stream cut
 * inside a line is what it always was: an error naming the line. */
Test(etl_feed, a_pipe_cut_inside_a_line_without_a_stop_is_still_an_error, .timeout = 30)
{
    for (int with_fd = 0; with_fd <= 1; with_fd++) {
        int fds[2], efd = stop_fd();
        char path[64], err[512] = "", want[256];
        pipe_rows(fds, path, sizeof(path));
        close(fds[1]); /* the writer went away in the middle of a row */
        hog_read_params p = hog_read_params_default();
        hog_feed *f;
        cr_assert_eq(hog_feed_start_pass(path, &p, 2, with_fd ? efd : -1, &f, err, sizeof(err)), 0, "%s", err);
        hog_block blk;
        double pos;
        int rc;
        while ((rc = hog_feed_next(f, &blk, &pos, err, sizeof(err))) == 1)
            hog_feed_release(f);
        cr_assert_eq(rc, HOG_EFORMAT, "with fd %d: %d %s", with_fd, rc, err);
        snprintf(want, sizeof(want), "%s:%d:%zu: expected a newline", path, STOP_ROWS + 1, strlen(HALF_ROW) + 1);
        cr_assert(strstr(err, want), "%s", err);
        cr_assert_eq(hog_feed_stopped(f), 0);
        hog_feed_free(f);
        close(fds[0]);
        close(efd);
    }
}

/* Stopped before a row was read (a file, here): no block, and the read
 * ends as an empty input does, saying why; the feed says it was stopped. */
Test(etl_feed, a_stop_before_the_first_row_is_an_empty_input)
{
    const char *path = write_rows("s.svm", 3000, 0);
    int efd = stop_fd();
    cr_assert_eq(eventfd_write(efd, 1), 0);
    hog_read_params p = hog_read_params_default();
    char err[512] = "";
    hog_feed *f;
    cr_assert_eq(hog_feed_start_pass(path, &p, 2, efd, &f, err, sizeof(err)), 0, "%s", err);
    hog_block blk;
    double pos;
    cr_assert_eq(hog_feed_next(f, &blk, &pos, err, sizeof(err)), HOG_EEMPTY, "%s", err);
    cr_assert(strstr(err, "no data rows before the read was stopped"), "%s", err);
    cr_assert_eq(hog_feed_stopped(f), 1);
    hog_feed_free(f);
    close(efd);
}

/* A quiet pipe: hog_feed_next_within says so (-EAGAIN, nothing taken) when
 * no block comes in time, and hands out the blocks of rows that do come. */
Test(etl_feed, a_wait_for_the_next_block_ends_when_the_stream_is_quiet, .timeout = 30)
{
    int fds[2];
    char path[64], err[512] = "";
    pipe_rows(fds, path, sizeof(path)); /* STOP_ROWS rows and half a row */
    hog_read_params p = hog_read_params_default();
    p.rows_per_block = 16;
    hog_feed *f;
    cr_assert_eq(hog_feed_start_pass(path, &p, 8, -1, &f, err, sizeof(err)), 0, "%s", err);
    hog_block blk;
    double pos;
    uint32_t rows = 0;
    int rc;
    /* The whole blocks of the rows written (or none: a reader that is not
     * eager waits for its chunk to fill), then nothing: the last block
     * waits for rows that do not come. */
    while ((rc = hog_feed_next_within(f, &blk, &pos, 0.2, err, sizeof(err))) == 1) {
        rows += blk.rows;
        hog_feed_release(f);
    }
    cr_assert_eq(rc, -EAGAIN, "%d: %s", rc, err);
    cr_assert_str_empty(err);
    cr_assert(rows % 16 == 0 && rows <= STOP_ROWS, "whole blocks: %u rows", rows);
    /* The rest of the row, and the end: the last block, then the end. */
    cr_assert_eq(write(fds[1], "5\n", 2), 2);
    close(fds[1]);
    while ((rc = hog_feed_next_within(f, &blk, &pos, 10, err, sizeof(err))) == 1) {
        rows += blk.rows;
        hog_feed_release(f);
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(rows, STOP_ROWS + 1);
    hog_dataset *ds;
    cr_assert_eq(hog_feed_finish(f, &ds, err, sizeof(err)), 0, "%s", err);
    hog_dataset_close(ds);
    hog_feed_free(f);
    close(fds[0]);
}
