/* etl_input.c: how a file to train on is read: a binary data set or a cache that matches its input opened whole, or text handed to a feed. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "etl.h"

/* ===================================================================== *
 *  The source record: what the input is now
 * ===================================================================== */

/* The read options in the record's order (etl.h), named for messages. */
static const char *const read_names[HOG_HGD_READ_FIELDS] = {
    "format",         "delimiter", "header",    "label_index", "label_name", "ignore",
    "categorical",    "rows_per_block", "hash_bits", "index_base", "on_error",
};
enum { R_FORMAT, R_DELIMITER, R_HEADER, R_LABEL_INDEX, R_LABEL_NAME, R_IGNORE, R_CATEGORICAL };
enum { R_ROWS_PER_BLOCK = R_CATEGORICAL + 1, R_HASH_BITS, R_INDEX_BASE, R_ON_ERROR };

/* hog_read_params.feature_names rides in the format field's bit 16: zero
 * when it is off, so a record without names reads as it always did. */
#define R_FEATURE_NAMES (1ull << 16)
/* and hog_read_params.fields in bit 17, the same way */
#define R_FIELDS (1ull << 17)

static uint64_t string_field(const char *s)
{
    return s ? hog_hash64(s, strlen(s), 1) | 1 : 0; /* never 0, which is NULL */
}

/* The options that shape the rows of text (threads do not); as given, so
 * an option spelled out where it was detected before counts as other. */
static void read_fields(const hog_read_params *p, uint64_t *r)
{
    r[R_FORMAT] = (uint64_t)p->format | (p->feature_names ? R_FEATURE_NAMES : 0) | (p->fields ? R_FIELDS : 0);
    r[R_DELIMITER] = (uint64_t)(unsigned char)p->delimiter;
    r[R_HEADER] = (uint64_t)(int64_t)p->header;
    r[R_LABEL_INDEX] = (uint64_t)(int64_t)p->label_index;
    r[R_LABEL_NAME] = string_field(p->label_name);
    r[R_IGNORE] = string_field(p->ignore);
    r[R_CATEGORICAL] = string_field(p->categorical);
    r[R_ROWS_PER_BLOCK] = p->rows_per_block;
    r[R_HASH_BITS] = p->hash_bits;
    r[R_INDEX_BASE] = (uint64_t)(int64_t)p->index_base;
    r[R_ON_ERROR] = (uint64_t)p->on_error;
}

/* Reads n bytes at off into buf; a file that got shorter meanwhile reads short. */
static int read_at(int fd, uint8_t *buf, size_t n, off_t off, size_t *got)
{
    *got = 0;
    while (*got < n) {
        ssize_t k = pread(fd, buf + *got, n - *got, off + (off_t)*got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            break;
        *got += (size_t)k;
    }
    return 0;
}

/* The record of the regular file at path as it is now, read with rp
 * (binary: no read options). Taken before the file is read, so a change
 * made while it is read shows in the next run's comparison. */
static int source_now(const char *path, const hog_read_params *rp, int binary, hog_hgd_source *src, char *err,
                      size_t err_len)
{
    memset(src, 0, sizeof(*src));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    struct stat st;
    uint8_t *buf = hog_malloc(HOG_HGD_SAMPLE_BYTES);
    int rc = !buf ? -ENOMEM : fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0) {
        src->bytes = (uint64_t)st.st_size;
        src->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
        src->inode = (uint64_t)st.st_ino;
        src->device = (uint64_t)st.st_dev;
        size_t got;
        rc = read_at(fd, buf, HOG_HGD_SAMPLE_BYTES, 0, &got);
        src->sample = hog_hash64(buf, got, HOG_HGD_SAMPLE_SEED);
        if (rc == 0 && src->bytes > HOG_HGD_SAMPLE_BYTES) {
            /* The last MiB, or what follows the first when the file is shorter than two. */
            uint64_t from = HOG_MAX(src->bytes - HOG_HGD_SAMPLE_BYTES, (uint64_t)HOG_HGD_SAMPLE_BYTES);
            rc = read_at(fd, buf, (size_t)(src->bytes - from), (off_t)from, &got);
            src->sample = hog_hash64(buf, got, src->sample);
        }
    }
    close(fd);
    hog_free(buf);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    if (!binary)
        read_fields(rp, src->read);
    return 0;
}

/* ===================================================================== *
 *  Whether the cache holds the input as it is now
 * ===================================================================== */

/* "2026-11-24 21:12:03.123456789" in local time. */
static void format_time(int64_t ns, char *buf, size_t len)
{
    time_t sec = (time_t)(ns / 1000000000);
    long frac = (long)(ns % 1000000000);
    if (frac < 0) {
        sec--;
        frac += 1000000000;
    }
    struct tm tm;
    char day[32] = "?";
    if (localtime_r(&sec, &tm))
        strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, len, "%s.%09ld", day, frac);
}

/* A value of a read option as the library names it: the enums by their
 * constants, the signed fields signed, a string only as "differs". */
static void format_read(unsigned i, uint64_t v, char *buf, size_t len)
{
    static const char *const formats[] = {"HOG_FORMAT_AUTO", "HOG_FORMAT_BINARY", "HOG_FORMAT_LIBSVM",
                                          "HOG_FORMAT_CSV", "HOG_FORMAT_VW", "HOG_FORMAT_FFM"};
    static const char *const on_error[] = {"HOG_ON_ERROR_STOP", "HOG_ON_ERROR_SKIP"};
    if (i == R_FORMAT && (v & ~(R_FEATURE_NAMES | R_FIELDS)) < HOG_ARRAY_LEN(formats))
        snprintf(buf, len, "%s", formats[v & ~(R_FEATURE_NAMES | R_FIELDS)]);
    else if (i == R_ON_ERROR && v < HOG_ARRAY_LEN(on_error))
        snprintf(buf, len, "%s", on_error[v]);
    else if (i == R_DELIMITER && v >= 0x21 && v < 0x7f)
        snprintf(buf, len, "'%c'", (char)v);
    else if (i == R_HEADER || i == R_LABEL_INDEX || i == R_INDEX_BASE)
        snprintf(buf, len, "%" PRId64, (int64_t)v);
    else
        snprintf(buf, len, "%" PRIu64, v);
}

/* Why the record then does not describe the input now, into why (for
 * "CACHE: WHY: rebuilt"), or 0 when it does. */
static int stale(const char *path, const hog_hgd_source *now, const hog_hgd_source *then, char *why, size_t len)
{
    char a[64], b[64];
    if (now->bytes != then->bytes) {
        snprintf(why, len, "cache of another %s (size %" PRIu64 " now, %" PRIu64 " then)", path, now->bytes,
                 then->bytes);
        return 1;
    }
    if (now->inode != then->inode || now->device != then->device) {
        snprintf(why, len, "cache of another %s (inode %" PRIu64 " on device %" PRIu64 " now, %" PRIu64 " on %" PRIu64
                 " then)", path, now->inode, now->device, then->inode, then->device);
        return 1;
    }
    if (now->mtime_ns != then->mtime_ns) {
        format_time(now->mtime_ns, a, sizeof(a));
        format_time(then->mtime_ns, b, sizeof(b));
        snprintf(why, len, "cache of another %s (modified %s now, %s then)", path, a, b);
        return 1;
    }
    if (now->sample != then->sample) {
        snprintf(why, len, "cache of another %s (the same size and time, other bytes in its first or last MiB)",
                 path);
        return 1;
    }
    for (unsigned i = 0; i < HOG_HGD_READ_FIELDS; i++) {
        if (now->read[i] == then->read[i])
            continue;
        if (i == R_FORMAT && ((now->read[i] ^ then->read[i]) & R_FEATURE_NAMES)) {
            snprintf(why, len, "cache of %s read with other options (hog_read_params.feature_names = %d now, %d then)",
                     path, (now->read[i] & R_FEATURE_NAMES) != 0, (then->read[i] & R_FEATURE_NAMES) != 0);
        } else if (i == R_FORMAT && ((now->read[i] ^ then->read[i]) & R_FIELDS)) {
            snprintf(why, len, "cache of %s read with other options (hog_read_params.fields = %d now, %d then)",
                     path, (now->read[i] & R_FIELDS) != 0, (then->read[i] & R_FIELDS) != 0);
        } else if (i == R_LABEL_NAME || i == R_IGNORE || i == R_CATEGORICAL) {
            snprintf(why, len, "cache of %s read with other options (hog_read_params.%s differs)", path,
                     read_names[i]);
        } else {
            format_read(i, now->read[i], a, sizeof(a));
            format_read(i, then->read[i], b, sizeof(b));
            snprintf(why, len, "cache of %s read with other options (hog_read_params.%s = %s now, %s then)", path,
                     read_names[i], a, b);
        }
        return 1;
    }
    return 0;
}

/* The detail of an error about file, without the "file: " it starts with. */
static const char *detail_of(const char *file, const char *msg)
{
    size_t n = strlen(file);
    return strncmp(msg, file, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' ? msg + n + 2 : msg;
}

/* Opens cache into *ds when it is a whole, valid cache of path as now
 * describes it, and returns 1; otherwise returns 0, having said why it is
 * rebuilt (nothing when there is no cache yet). */
static int cache_open(const char *path, const char *cache, const hog_hgd_source *now, hog_dataset **ds)
{
    hog_hgd_source then;
    int has;
    char msg[512], why[768];
    int rc = hog_hgd_source_read(cache, &then, &has, msg, sizeof(msg));
    if (rc == -ENOENT)
        return 0;
    if (rc < 0)
        snprintf(why, sizeof(why), "not a usable cache (%s)", detail_of(cache, msg));
    else if (!has)
        snprintf(why, sizeof(why), "holds no record of the file it caches (a converted data set, or a cache "
                 "of a pipe or of an older hogtrain)");
    else if (!stale(path, now, &then, why, sizeof(why))) {
        rc = hog_hgd_open(cache, ds, msg, sizeof(msg));
        if (rc == 0) {
            hog_log(HOG_LOG_INFO, "reading %s, the cache of %s", cache, path);
            return 1;
        }
        snprintf(why, sizeof(why), "not a usable cache (%s)", detail_of(cache, msg));
    }
    hog_log(HOG_LOG_WARN, "%s: %s: rebuilt", cache, why);
    return 0;
}

/* A binary input copied to the cache with its record, then the copy opened. */
static int copy_binary(const char *path, const hog_read_params *rp, const char *cache, const hog_hgd_source *src,
                       hog_dataset **out, char *err, size_t err_len)
{
    hog_dataset *ds;
    int rc = hog_hgd_open_within(path, rp, &ds, err, err_len);
    if (rc < 0)
        return rc;
    hog_atomic_file f;
    rc = hog_atomic_open_file(&f, cache);
    if (rc == 0) {
        rc = hog_hgd_write(ds, src, &f);
        rc = rc < 0 ? (hog_atomic_abort(&f), rc) : hog_atomic_commit(&f);
    }
    hog_dataset_close(ds);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", cache, hog_strerror(rc));
    return hog_hgd_open(cache, out, err, err_len);
}

/* ===================================================================== *
 *  Opening
 * ===================================================================== */

static int input_open(const char *path, const hog_read_params *rp, const char *cache_path, unsigned depth, int pass,
                      int stop_fd, hog_input *in, char *err, size_t err_len)
{
    memset(in, 0, sizeof(*in));
    in->read = rp ? *rp : hog_read_params_default();
    if (in->read.rows_per_block == 0)
        in->read.rows_per_block = HOG_DEFAULT_ROWS_PER_BLOCK;
    hog_format fmt;
    int rc = hog_resolve_format(path, &in->read, &fmt, err, err_len);
    if (rc < 0)
        return rc;
    in->text = fmt != HOG_FORMAT_BINARY;
    struct stat st, ca;
    const int known = stat(path, &st) == 0, is_file = known && S_ISREG(st.st_mode);
    if (known && hog_is_stream(st.st_mode))
        in->unsized = "the input is a pipe, whose length is unknown";
    if (cache_path && is_file && stat(cache_path, &ca) == 0 && ca.st_dev == st.st_dev && ca.st_ino == st.st_ino)
        return hog_fail(HOG_EPARAM, err, err_len, "%s is the input %s: it would be written over as it is read",
                        cache_path, path);
    /* A pipe's text is new every time: its cache has no record, and is
     * written afresh. */
    hog_hgd_source src;
    const hog_hgd_source *record = NULL;
    if (cache_path && is_file) {
        if ((rc = source_now(path, &in->read, fmt == HOG_FORMAT_BINARY, &src, err, err_len)) < 0)
            return rc;
        record = &src;
        if (cache_open(path, cache_path, record, &in->ds)) {
            in->cache_used = 1;
            return hog_dataset_within(cache_path, &in->read, &in->ds, err, err_len);
        }
    }
    if (fmt == HOG_FORMAT_BINARY)
        return cache_path ? copy_binary(path, &in->read, cache_path, record, &in->ds, err, err_len)
                          : hog_hgd_open_within(path, &in->read, &in->ds, err, err_len);
    if (pass)
        return hog_feed_start_pass(path, &in->read, depth, stop_fd, &in->feed, err, err_len);
    return hog_feed_start(path, &in->read, cache_path, record, depth, &in->feed, err, err_len);
}

int hog_input_open(const char *path, const hog_read_params *rp, const char *cache_path, unsigned depth,
                   hog_input *in, char *err, size_t err_len)
{
    return input_open(path, rp, cache_path, depth, 0, -1, in, err, err_len);
}

int hog_input_open_pass(const char *path, const hog_read_params *rp, unsigned depth, int stop_fd, hog_input *in,
                        char *err, size_t err_len)
{
    return input_open(path, rp, NULL, depth, 1, stop_fd, in, err, err_len);
}

int hog_input_stopped(hog_input *in)
{
    return in->feed ? hog_feed_stopped(in->feed) : 0;
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
