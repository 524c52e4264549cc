/* etl_input.c: how a file to train on is read: a binary data set or a fresh cache opened whole, or text handed to a feed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>
#include <sys/stat.h>

#include "etl.h"

/* Whether cache is there and newer than input (or as new). A pipe's text
 * is new every time. */
static int cache_fresh(const char *input, const char *cache)
{
    struct stat in, ca;
    if (stat(input, &in) < 0 || stat(cache, &ca) < 0 || hog_is_stream(in.st_mode))
        return 0;
    return ca.st_mtim.tv_sec > in.st_mtim.tv_sec ||
           (ca.st_mtim.tv_sec == in.st_mtim.tv_sec && ca.st_mtim.tv_nsec >= in.st_mtim.tv_nsec);
}

int hog_input_open(const char *path, const hog_read_params *rp, const char *cache_path, unsigned depth,
                   hog_input *in, char *err, size_t err_len)
{
    memset(in, 0, sizeof(*in));
    in->read = rp ? *rp : hog_read_params_default();
    if (in->read.rows_per_block == 0)
        in->read.rows_per_block = HOG_DEFAULT_ROWS_PER_BLOCK;
    hog_format fmt;
    int rc = hog_resolve_format(path, &in->read, &fmt, err, err_len);
    if (rc < 0)
        return rc;
    struct stat st;
    if (stat(path, &st) == 0 && hog_is_stream(st.st_mode))
        in->unsized = "the input is a pipe, whose length is unknown";
    if (cache_path && cache_fresh(path, cache_path)) {
        hog_log(HOG_LOG_INFO, "reading %s, the cache of %s", cache_path, path);
        in->cache_used = 1;
        return hog_hgd_open(cache_path, &in->ds, err, err_len);
    }
    if (fmt == HOG_FORMAT_BINARY) {
        if (cache_path && (rc = hog_dataset_convert(path, &in->read, cache_path, NULL, err, err_len)) < 0)
            return rc;
        return hog_hgd_open(cache_path ? cache_path : path, &in->ds, err, err_len);
    }
    return hog_feed_start(path, &in->read, cache_path, depth, &in->feed, err, err_len);
}

int hog_input_open_test(const char *test_path, const hog_read_params *r, int train_base, hog_dataset **test,
                        char *err, size_t err_len)
{
    *test = NULL;
    if (!test_path)
        return 0;
    hog_read_params tr = *r;
    if (tr.index_base < 0)
        tr.index_base = train_base;
    return hog_dataset_open(test_path, &tr, test, err, err_len);
}
