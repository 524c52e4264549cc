/* train_mf_file.c: the matrix factorisation model's file: versioned, checksummed, its names, parameters and metrics beside the factors. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_mf.h"

/* ===================================================================== *
 *  The model file
 *
 *  Version 1, little-endian:
 *    offset  bytes          field
 *    0       8              magic "HOGMFMOD"
 *    8       4              version (1)
 *    12      4              M, metadata bytes
 *    16      4              users
 *    20      4              items
 *    24      4              rank k
 *    28      4              zero
 *    32      8              U, bytes of user names
 *    40      8              I, bytes of item names
 *    48      M              metadata: "key value\n" lines (parameters, mean, range,
 *                           metrics), numbers in the C locale with 17 digits
 *    ...     4 (users + 1)  u32 user name offsets, then U bytes of names (NUL-terminated)
 *    ...     4 (items + 1)  u32 item name offsets, then I bytes of names
 *    ...     4 users        f32 user biases
 *    ...     4 items        f32 item biases
 *    ...     4 users k      f32 user factors, row by row
 *    ...     4 items k      f32 item factors
 *    ...     4              CRC-32 of every byte before it
 * ===================================================================== */
#define MF_VERSION 1u
#define MF_HEAD 48u
#define MF_MAX_META (1u << 20)
#define MF_MAX_NAMES (UINT32_MAX - 2ull) /* hog_idmap's most names */

#define MF_FIELDS 32 /* room for the fields mf_fields makes */

/* The metadata of a model file, in the order it is written. */
static size_t mf_fields(hog_mf_info *in, unsigned *epochs, hog_meta_field *f)
{
    hog_mf_params *p = &in->params;
    size_t n = 0;
    f[n++] = (hog_meta_field){"hogtrain", HOG_META_NOTE, NULL, hog_version_string(), NULL};
    f[n++] = (hog_meta_field){"model", HOG_META_WORD, NULL, "mf", NULL};
    f[n++] = (hog_meta_field){"data_fingerprint", HOG_META_HEX64, &in->data_fingerprint, NULL, NULL};
    f[n++] = HOG_META_NUM("threads", &p->threads);
    f[n++] = HOG_META_NUM("epochs", &p->epochs);
    f[n++] = HOG_META_NUM("step", &p->step);
    f[n++] = HOG_META_NUM("decay", &p->decay);
    f[n++] = HOG_META_NUM("l2", &p->l2);
    f[n++] = HOG_META_NUM("l2_bias", &p->l2_bias);
    f[n++] = HOG_META_NUM("init", &p->init);
    f[n++] = HOG_META_NUM("holdout", &p->holdout);
    f[n++] = HOG_META_NUM("seed", &p->seed);
    f[n++] = HOG_META_NUM("clamp", &p->clamp);
    f[n++] = HOG_META_NUM("bind", &p->bind);
    f[n++] = HOG_META_NUM("schedule", &p->schedule); /* as run; absent before the grid: 0, segments */
    f[n++] = HOG_META_NUM("grid", &p->grid);
    f[n++] = HOG_META_NUM("step_schedule", &p->step_schedule); /* absent before AdaGrad: 0, decay */
    f[n++] = HOG_META_NUM("early_stop", &p->early_stop); /* absent before early stopping: 0, off */
    /* hog_mf_get_epochs; absent before early stopping: 0, read as params.epochs */
    f[n++] = HOG_META_NUM("epochs_run", &epochs[0]);
    f[n++] = HOG_META_NUM("best_epoch", &epochs[1]);
    f[n++] = HOG_META_NUM("mean", &in->mean);
    f[n++] = HOG_META_NUM("min", &in->min);
    f[n++] = HOG_META_NUM("max", &in->max);
    f[n++] = HOG_META_NUM("train_ratings", &in->train_ratings);
    f[n++] = HOG_META_NUM("updates", &in->updates);
    f[n++] = HOG_META_NUM("seconds", &in->seconds);
    f[n++] = HOG_META_NUM("train.rmse", &in->train_rmse);
    f[n++] = HOG_META_NUM("test.ratings", &in->test_ratings);
    f[n++] = HOG_META_NUM("test.rmse", &in->test_rmse);
    return n;
}

/* Writes n rows of k floats from shared rows of `stride` (or n floats when
 * stride is 0 ... k is 1), through the relaxed loads, in chunks. */
static int write_rows(hog_atomic_file *f, uint32_t *crc, const hog_weight *w, uint64_t n, uint32_t k,
                      uint32_t stride)
{
    float chunk[4096];
    size_t used = 0;
    int rc = 0;
    for (uint64_t r = 0; r < n && rc == 0; r++)
        for (uint32_t c = 0; c < k && rc == 0; c++) {
            chunk[used++] = hog_w_load(&w[r * stride + c]);
            if (used == HOG_ARRAY_LEN(chunk)) {
                rc = hog_atomic_write_crc(f, crc, chunk, used * sizeof(float));
                used = 0;
            }
        }
    if (rc == 0 && used)
        rc = hog_atomic_write_crc(f, crc, chunk, used * sizeof(float));
    return rc;
}

static int write_names(hog_atomic_file *f, uint32_t *crc, const hog_idmap *m)
{
    uint32_t zero = 0;
    int rc = hog_atomic_write_crc(f, crc, m->n ? m->off : &zero, 4ull * (m->n + 1));
    if (rc == 0)
        rc = hog_atomic_write_crc(f, crc, m->names, m->names_len);
    return rc;
}

/* Writes m into f, then commits it (aborts it on failure). */
static int mf_write(const hog_mf_model *m, hog_atomic_file *f)
{
    if (!hog_mf_finite(m)) {
        hog_atomic_abort(f);
        return HOG_ENONFINITE;
    }
    hog_mf_info info = m->info;
    unsigned epochs[2] = {m->epochs_run, m->best_epoch};
    hog_meta_field fields[MF_FIELDS];
    size_t nfields = mf_fields(&info, epochs, fields);
    char *meta;
    size_t meta_len;
    if (hog_meta_write(fields, nfields, &meta, &meta_len) < 0) {
        hog_atomic_abort(f);
        return -ENOMEM;
    }
    unsigned char h[MF_HEAD] = {0};
    memcpy(h, MF_MAGIC, 8);
    hog_put_u32(h + 8, MF_VERSION);
    hog_put_u32(h + 12, (uint32_t)meta_len);
    hog_put_u32(h + 16, m->info.users);
    hog_put_u32(h + 20, m->info.items);
    hog_put_u32(h + 24, m->info.rank);
    hog_put_u64(h + 32, m->users.names_len);
    hog_put_u64(h + 40, m->items.names_len);
    uint32_t crc = 0;
    int rc = hog_atomic_write_crc(f, &crc, h, sizeof(h));
    if (rc == 0)
        rc = hog_atomic_write_crc(f, &crc, meta, meta_len);
    if (rc == 0)
        rc = write_names(f, &crc, &m->users);
    if (rc == 0)
        rc = write_names(f, &crc, &m->items);
    if (rc == 0)
        rc = write_rows(f, &crc, m->bu, m->info.users, 1, 1);
    if (rc == 0)
        rc = write_rows(f, &crc, m->bi, m->info.items, 1, 1);
    if (rc == 0)
        rc = write_rows(f, &crc, m->p, m->info.users, m->info.rank, m->stride);
    if (rc == 0)
        rc = write_rows(f, &crc, m->q, m->info.items, m->info.rank, m->stride);
    if (rc == 0)
        rc = hog_atomic_write(f, &crc, 4);
    hog_free(meta);
    if (rc < 0) {
        hog_atomic_abort(f);
        return rc;
    }
    return hog_atomic_commit(f);
}

int hog_mf_save(const hog_mf_model *m, const char *path)
{
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    return rc < 0 ? rc : mf_write(m, &f);
}

int hog_mf_save_output(const hog_mf_model *m, hog_output *o)
{
    int rc = mf_write(m, hog_output_file(o));
    hog_free(o);
    return rc;
}

/* Copies a name table out of the file at *p into an owned map and checks
 * it. Returns 0, -ENOMEM or HOG_ECORRUPT. */
static int load_names(hog_idmap *m, const unsigned char **p, uint32_t n, uint64_t names_len)
{
    memset(m, 0, sizeof(*m));
    m->owned = 1;
    m->n = n;
    m->off = hog_malloc(((size_t)n + 1) * sizeof(uint32_t));
    m->names = hog_malloc(names_len ? names_len : 1);
    if (!m->off || !m->names)
        return -ENOMEM;
    memcpy(m->off, *p, 4ull * (n + 1));
    memcpy(m->names, *p + 4ull * (n + 1), names_len);
    m->names_len = m->names_cap = names_len;
    m->off_cap = n + 1;
    *p += 4ull * (n + 1) + names_len;
    return hog_idmap_check(m);
}

/* Reads n rows of k floats into w (stride apart). Returns 0, or -1 at the
 * first number that is not finite, which a checksum does not rule out. */
static int load_rows(hog_weight *w, const unsigned char **p, uint64_t n, uint32_t k, uint32_t stride)
{
    for (uint64_t r = 0; r < n; r++)
        for (uint32_t c = 0; c < k; c++) {
            float v;
            memcpy(&v, *p, 4);
            *p += 4;
            if (!isfinite(v))
                return -1;
            hog_w_store(&w[r * stride + c], v);
        }
    return 0;
}

/* Every prediction starts from the mean and, with params.clamp, ends in
 * [min, max], all three as f32: they must be finite there, min <= max, as
 * the ratings trained on make them. */
static int check_range(const char *path, const hog_mf_info *in, char *err, size_t err_len)
{
    const struct {
        const char *key;
        double v;
    } f[] = {{"mean", in->mean}, {"min", in->min}, {"max", in->max}};
    for (size_t i = 0; i < HOG_ARRAY_LEN(f); i++)
        if (!isfinite((float)f[i].v))
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: %s is %g, not a finite 32-bit float",
                            path, f[i].key, f[i].v);
    if (in->min > in->max)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: min %g is above max %g", path, in->min,
                        in->max);
    return 0;
}

int hog_mf_load(const char *path, hog_mf_model **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    unsigned char *buf = NULL;
    size_t len = 0;
    hog_mf_model *m = NULL;
    int rc = hog_read_file(path, &buf, &len);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    if (len < 8 || memcmp(buf, MF_MAGIC, 8) != 0) {
        rc = hog_fail(HOG_EMAGIC, err, err_len, "%s: not a hogtrain matrix factorisation model (no HOGMFMOD magic)",
                      path);
        goto out;
    }
    if (len < MF_HEAD + 4) {
        rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %zu bytes, the header alone is %u", path, len,
                      MF_HEAD + 4);
        goto out;
    }
    uint32_t version = hog_get_u32(buf + 8), meta_len = hog_get_u32(buf + 12);
    uint32_t users = hog_get_u32(buf + 16), items = hog_get_u32(buf + 20), rank = hog_get_u32(buf + 24);
    uint64_t ulen = hog_get_u64(buf + 32), ilen = hog_get_u64(buf + 40);
    if (version != MF_VERSION) {
        rc = hog_fail(HOG_EVERSION, err, err_len, "%s: model version %u, this build reads version %u", path, version,
                      MF_VERSION);
        goto out;
    }
    /* Each size against its limit, before any is multiplied: the length
     * check below then bounds them all by the file's bytes. */
    const struct {
        const char *field;
        uint64_t v, min, max;
    } sizes[] = {{"meta_bytes", meta_len, 0, MF_MAX_META},
                {"users", users, 0, MF_MAX_NAMES},
                {"items", items, 0, MF_MAX_NAMES},
                {"rank", rank, 1, HOG_MF_MAX_RANK},
                {"user_name_bytes", ulen, 0, UINT32_MAX},
                {"item_name_bytes", ilen, 0, UINT32_MAX}};
    for (size_t i = 0; i < HOG_ARRAY_LEN(sizes); i++)
        if (sizes[i].v < sizes[i].min || sizes[i].v > sizes[i].max) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: header field %s is %llu, not between %llu and %llu", path,
                          sizes[i].field, (unsigned long long)sizes[i].v, (unsigned long long)sizes[i].min,
                          (unsigned long long)sizes[i].max);
            goto out;
        }
    uint64_t want = MF_HEAD + (uint64_t)meta_len + 4ull * (users + 1) + ulen + 4ull * (items + 1) + ilen +
                    4ull * (users + items) * (1 + (uint64_t)rank) + 4;
    if (len != want) {
        rc = hog_fail(len < want ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                      "%s: %s: the header implies %llu bytes, the file has %zu", path,
                      len < want ? "truncated" : "trailing bytes", (unsigned long long)want, len);
        goto out;
    }
    if (hog_crc32(0, buf, len - 4) != hog_get_u32(buf + len - 4)) {
        rc = hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the model is corrupted", path);
        goto out;
    }
    if (hog_get_u32(buf + 28) != 0) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: header field at byte 28 is %u, where version %u has zero", path,
                      hog_get_u32(buf + 28), MF_VERSION);
        goto out;
    }
    m = hog_mf_new(users, items, rank);
    if (!m) {
        rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        goto out;
    }
    hog_meta_field fields[MF_FIELDS];
    unsigned epochs[2] = {0, 0};
    size_t nfields = mf_fields(&m->info, epochs, fields);
    char why[256];
    if (hog_meta_read((char *)buf + MF_HEAD, meta_len, fields, nfields, why, sizeof(why)) < 0) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: %s", path, why);
        goto out;
    }
    m->info.params.rank = rank;
    const char *field = NULL;
    if (hog_mf_params_check(&m->info.params, &field) < 0) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: hog_mf_params.%s is out of range", path,
                      field);
        goto out;
    }
    if ((rc = check_range(path, &m->info, err, err_len)) < 0)
        goto out;
    m->epochs_run = epochs[0] ? epochs[0] : m->info.params.epochs;
    m->best_epoch = epochs[1] ? epochs[1] : m->epochs_run;
    if (m->epochs_run > m->info.params.epochs || m->best_epoch > m->epochs_run) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: best_epoch %u, epochs_run %u of %u epochs",
                      path, m->best_epoch, m->epochs_run, m->info.params.epochs);
        goto out;
    }
    const unsigned char *p = buf + MF_HEAD + meta_len;
    rc = load_names(&m->users, &p, users, ulen);
    if (rc == 0)
        rc = load_names(&m->items, &p, items, ilen);
    if (rc < 0) {
        rc = hog_fail(rc == -ENOMEM ? rc : HOG_ECORRUPT, err, err_len, "%s: %s", path,
                      rc == -ENOMEM ? "out of memory" : "a name table is malformed");
        goto out;
    }
    const char *bad = load_rows(m->bu, &p, users, 1, 1) < 0       ? "a user bias"
                      : load_rows(m->bi, &p, items, 1, 1) < 0     ? "an item bias"
                      : load_rows(m->p, &p, users, rank, m->stride) < 0 ? "a user factor"
                      : load_rows(m->q, &p, items, rank, m->stride) < 0 ? "an item factor"
                                                                       : NULL;
    if (bad) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: %s is not finite", path, bad);
        goto out;
    }
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    *out = m;
    m = NULL;
    rc = 0;
out:
    hog_mf_free(m);
    hog_free(buf);
    return rc;
}
