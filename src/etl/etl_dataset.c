/* etl_dataset.c: the public data set calls: open and convert (text or binary, told apart here), save, the row views, close. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl.h"

/* ===================================================================== *
 *  Parameters, and binary or text
 * ===================================================================== */

hog_read_params hog_read_params_default(void)
{
    hog_read_params p;
    memset(&p, 0, sizeof(p));
    p.format = HOG_FORMAT_AUTO;
    p.delimiter = 0;
    p.header = -1;
    p.label_index = 0;
    p.label_name = NULL;
    p.rows_per_block = 0;
    p.index_base = -1;
    return p;
}

/* ===================================================================== *
 *  Format detection
 * ===================================================================== */
int hog_detect_binary(const char *path, int *binary)
{
    *binary = 0;
    /* A pipe or a socket cannot be looked at without taking what is read,
     * and a named pipe's writer may die of a reader that opens and closes:
     * its text goes to the pipeline, the only one to open it (a binary
     * dataset is mapped, so it is a file anyway). */
    struct stat st;
    if (stat(path, &st) == 0 && hog_is_stream(st.st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    unsigned char head[4096];
    ssize_t got;
    do
        got = pread(fd, head, sizeof(head), 0);
    while (got < 0 && errno == EINTR);
    int rc = got < 0 ? -errno : 0;
    close(fd);
    if (rc < 0)
        return rc;
    size_t n = (size_t)got;
    static const unsigned char gz[2] = {0x1f, 0x8b}, zst[4] = {0x28, 0xb5, 0x2f, 0xfd};
    int compressed = (n >= 2 && memcmp(head, gz, 2) == 0) || (n >= 4 && memcmp(head, zst, 4) == 0);
    /* A damaged magic still shows as a NUL eighth byte and a version after
     * it, which text never holds; any other NUL is text's to report. */
    *binary = (n >= 8 && memcmp(head, HOG_HGD_MAGIC, 8) == 0) ||
              (!compressed && n >= 12 && head[7] == 0 && head[8] >= 1 && head[8] <= HOG_HGD_VERSION && !head[9] && !head[10] &&
               !head[11]);
    return 0;
}

/* Which text format it is, the pipeline's plan settles from the same first
 * line it reads anyway. */
int hog_resolve_format(const char *path, const hog_read_params *p, hog_format *fmt, char *err, size_t len)
{
    *fmt = p->format;
    if (p->format > HOG_FORMAT_FFM || p->format < HOG_FORMAT_AUTO)
        return hog_fail(HOG_EPARAM, err, len, "format: %d is not a hog_format", (int)p->format);
    if (p->format != HOG_FORMAT_AUTO)
        return 0;
    int binary;
    int rc = hog_detect_binary(path, &binary);
    if (rc < 0)
        return hog_fail(rc, err, len, "%s: %s", path, hog_strerror(rc));
    if (binary)
        *fmt = HOG_FORMAT_BINARY;
    return 0;
}

/* ===================================================================== *
 *  The ceiling on features
 * ===================================================================== */

int hog_dataset_within(const char *path, const hog_read_params *p, hog_dataset **ds, char *err, size_t err_len)
{
    const uint64_t cap = p ? p->max_features : 0;
    if (!cap || (*ds)->info.features <= cap)
        return 0;
    const unsigned long long features = (unsigned long long)(*ds)->info.features;
    hog_dataset_close(*ds);
    *ds = NULL;
    return hog_fail(HOG_EPARAM, err, err_len, "%s: %llu features are past the ceiling of %llu "
                    "(hog_read_params.max_features, hog_train_params.mem_limit): make it from its text again, "
                    "hashed (hog_read_params.hash_bits = %u)", path, features, (unsigned long long)cap,
                    hog_bits_within(cap));
}

int hog_hgd_open_within(const char *path, const hog_read_params *p, hog_dataset **out, char *err, size_t err_len)
{
    *out = NULL;
    const hog_verify verify = p ? p->verify : HOG_VERIFY_AT_OPEN;
    if (verify != HOG_VERIFY_AT_OPEN && verify != HOG_VERIFY_AT_FIRST_READ)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "hog_read_params.verify: %d is not HOG_VERIFY_AT_OPEN or HOG_VERIFY_AT_FIRST_READ", (int)verify);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    }
    int rc = hog_hgd_open_lazy(fd, path, verify == HOG_VERIFY_AT_FIRST_READ, out, err, err_len);
    return rc < 0 ? rc : hog_dataset_within(path, p, out, err, err_len);
}

/* ===================================================================== *
 *  Open, convert, save
 * ===================================================================== */

int hog_dataset_open(const char *path, const hog_read_params *params, hog_dataset **out,
                     char *err_detail, size_t err_len)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "path and out must not be NULL");
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    hog_read_params p = params ? *params : hog_read_params_default();
    hog_format fmt;
    int rc = hog_resolve_format(path, &p, &fmt, err_detail, err_len);
    if (rc < 0)
        return rc;
    if (fmt == HOG_FORMAT_BINARY)
        return hog_hgd_open_within(path, &p, out, err_detail, err_len);

    p.format = fmt;
    hog_builder *b;
    rc = hog_builder_create(p.rows_per_block, NULL, &b);
    if (rc == 0 && (rc = hog_builder_spill_within(b, path, &p)) < 0)
        hog_builder_free(b);
    if (rc < 0)
        return hog_fail(rc, err_detail, err_len, "%s: out of memory", path);
    uint64_t skipped;
    char *report;
    rc = hog_text_read(path, &p, b, &fmt, &skipped, &report, err_detail, err_len);
    if (rc < 0) {
        hog_builder_free(b);
        return rc;
    }
    hog_dataset *ds;
    rc = hog_builder_finish(b, fmt, &ds);
    if (rc < 0) {
        hog_builder_free(b);
        hog_free(report);
        return hog_fail(rc, err_detail, err_len, "%s: %s", path, hog_strerror(rc));
    }
    hog_dataset_drop_heap(ds); /* spilled: nobody was handed its first blocks */
    ds->info.skipped = skipped;
    ds->skip_report = report;
    struct stat st;
    if (stat(path, &st) == 0)
        ds->info.file_bytes = (uint64_t)st.st_size;
    *out = ds;
    return 0;
}

int hog_dataset_convert(const char *in_path, const hog_read_params *params, const char *out_path,
                        hog_dataset_info *info, char *err_detail, size_t err_len)
{
    if (!in_path || !out_path)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "in_path and out_path must not be NULL");
    if (hog_cpu_check(err_detail, err_len) < 0)
        return HOG_ECPU;
    /* Another name for the input (a hard link, a path through a symlinked
     * folder) is the input all the same: replacing it destroys it. */
    struct stat in_id, out_id;
    if (stat(in_path, &in_id) == 0 && stat(out_path, &out_id) == 0 && in_id.st_dev == out_id.st_dev &&
        in_id.st_ino == out_id.st_ino)
        return hog_fail(HOG_EPARAM, err_detail, err_len, "%s is the input %s: it would be written over as it is read",
                        out_path, in_path);
    hog_read_params p = params ? *params : hog_read_params_default();
    hog_format fmt;
    int rc = hog_resolve_format(in_path, &p, &fmt, err_detail, err_len);
    if (rc < 0)
        return rc;

    if (fmt == HOG_FORMAT_BINARY) {
        /* Already binary: validate it by opening, then rewrite (mapped, so still bounded). */
        hog_dataset *ds;
        rc = hog_hgd_open_within(in_path, &p, &ds, err_detail, err_len);
        if (rc < 0)
            return rc;
        rc = hog_dataset_save(ds, out_path);
        if (rc == 0 && info) {
            *info = ds->info;
            struct stat st;
            if (stat(out_path, &st) == 0)
                info->file_bytes = (uint64_t)st.st_size;
        }
        hog_dataset_close(ds);
        if (rc < 0)
            return hog_fail(rc, err_detail, err_len, "%s: %s", out_path, hog_strerror(rc));
        return 0;
    }

    p.format = fmt;
    hog_atomic_file f;
    rc = hog_atomic_open(&f, out_path);
    if (rc < 0)
        return hog_fail(rc, err_detail, err_len, "%s: %s", out_path, hog_strerror(rc));
    /* A large conversion is a streaming job: its output skips the page cache
     * (the kernel's copy into it cost a fifth of the CPU time of a 4.3 GB
     * convert on two cores). On a file system without O_DIRECT it is
     * written buffered. */
    struct stat in_st;
    const int in_known = stat(in_path, &in_st) == 0;
    if (in_known && S_ISREG(in_st.st_mode) && (uint64_t)in_st.st_size >= HOG_DIRECT_OUTPUT_BYTES)
        (void)hog_atomic_direct(&f, 1);
    hog_builder *b;
    rc = hog_builder_create(p.rows_per_block, &f, &b);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return hog_fail(rc, err_detail, err_len, "%s: out of memory", in_path);
    }
    if (in_known && hog_is_stream(in_st.st_mode)) /* a pipe: its size shows as it goes */
        hog_builder_direct_from(b, HOG_DIRECT_OUTPUT_BYTES / 2);
    uint64_t skipped;
    char *report;
    rc = hog_text_read(in_path, &p, b, &fmt, &skipped, &report, err_detail, err_len);
    if (rc < 0) {
        hog_builder_free(b);
        hog_atomic_abort(&f);
        return rc;
    }
    if (report && err_detail && err_len)
        snprintf(err_detail, err_len, "%s", report);
    hog_free(report);
    rc = hog_builder_finish_file(b, info);
    if (rc == 0 && info)
        info->skipped = skipped;
    if (rc == 0)
        rc = hog_atomic_commit(&f);
    else
        hog_atomic_abort(&f);
    if (rc < 0)
        return hog_fail(rc, err_detail, err_len, "%s: %s", out_path, hog_strerror(rc));
    return 0;
}

int hog_dataset_save(const hog_dataset *ds, const char *path)
{
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    if (rc < 0)
        return rc;
    rc = hog_hgd_write(ds, NULL, &f);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}

/* ===================================================================== *
 *  What a data set holds
 * ===================================================================== */

void hog_dataset_get_info(const hog_dataset *ds, hog_dataset_info *info)
{
    *info = ds->info;
}

hog_row hog_dataset_row(const hog_dataset *ds, uint64_t i)
{
    uint32_t rpb = ds->info.rows_per_block;
    return hog_block_row(&ds->blocks[i / rpb], (uint32_t)(i % rpb));
}

int hog_dataset_fields(const hog_dataset *ds)
{
    return ds ? (int)ds->fields : HOG_EPARAM;
}

unsigned hog_dataset_hash_bits(const hog_dataset *ds)
{
    return ds ? ds->hash_bits : 0;
}

uint64_t hog_dataset_skipped(const hog_dataset *ds, char *buf, size_t len)
{
    if (buf && len)
        snprintf(buf, len, "%s", ds->skip_report ? ds->skip_report : "");
    return ds->info.skipped;
}

uint64_t hog_dataset_bytes(const hog_dataset *ds)
{
    if (ds->map)
        return ds->map_bytes;
    return hog_block_bytes(ds->info.rows, ds->info.nnz,
                           (ds->info.weighted ? HOG_BLOCK_WEIGHTED : 0) | (ds->fields ? HOG_BLOCK_FIELDS : 0));
}

void hog_dataset_drop_heap(hog_dataset *ds)
{
    if (!ds->map)
        return;
    for (uint32_t i = 0; i < ds->heap_count; i++)
        hog_free(ds->heap[i]);
    hog_free(ds->heap);
    ds->heap = NULL;
    ds->heap_count = 0;
}

void hog_dataset_close(hog_dataset *ds)
{
    if (!ds)
        return;
    hog_hgd_forget(ds);
    if (ds->map)
        munmap(ds->map, ds->map_bytes);
    if (ds->fd >= 0)
        close(ds->fd);
    for (uint32_t i = 0; i < ds->heap_count; i++)
        hog_free(ds->heap[i]);
    hog_free(ds->heap);
    hog_free(ds->blocks);
    hog_free(ds->skip_report);
    hog_free(ds->path);
    hog_free((void *)ds->checked);
    hog_idmap_free(&ds->names);
    hog_fnames_free(&ds->fnames);
    hog_free(ds);
}
