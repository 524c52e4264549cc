/* train_model_file.c: the linear model's file: versioned, checksummed, its parameters and metrics in a text header. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "train.h"

/*
 * Model file, version 6 (or 5, 4, 3, 2, or 1). Little-endian.
 *
 *   offset  bytes          field
 *   0       8              magic "HOGMODEL"
 *   8       4              version (1 to 6)
 *   12      4              meta_bytes
 *   16      8              dim (features)
 *   24      4              outputs
 *   28      4              classes
 *   32      meta_bytes     metadata: "key value\n" lines, numbers in the C locale
 *                          with 17 significant digits so they round-trip
 *   ...     8 * classes    f64 class labels, ascending
 *   version 3 to 6:
 *   ...     4              sections: which of the optional parts below follow
 *                          (bit 0: class names, bit 1: feature scales, bit 2:
 *                          feature names; the other bits are 0)
 *   version 2, or version 3 with sections bit 0 (a model whose classes have
 *   names: the training labels were strings; its labels are then 0, 1, ...,
 *   classes - 1):
 *   ...     4              names_bytes (at most classes * (HOG_LABEL_NAME_MAX + 1))
 *   ...     names_bytes    the classes' names, each 1 to HOG_LABEL_NAME_MAX bytes
 *                          and a NUL, back to back in class order, strictly
 *                          ascending (strcmp)
 *   version 3 with sections bit 2 (the training text named its features):
 *   ...     8              fnames_bytes (at least 10, and no more than the file holds)
 *   ...     fnames_bytes   u32 count (1 to dim), then count entries: u32 feature
 *                          index (< dim, strictly ascending), the name (at least
 *                          1 byte: names that hash to one feature sorted and
 *                          joined by '|') and a NUL
 *   version 3 with sections bit 1 (trained with the normalized update):
 *   ...     4 * dim        f32 feature scales: each feature's largest |x| seen
 *                          (0: none but zeros), finite and >= 0
 *   ...     4 * outputs    f32 bias
 *   ...     4 * dim * outputs  f32 weights, feature-major (w[j * outputs + k])
 *   ...     4              CRC-32 of every byte before it
 *
 * A model without names or scales is written as version 1, one with names
 * alone as version 2, byte for byte as before, so older builds read them;
 * one with scales or feature names as version 3. A factorisation machine
 * is version 4, laid out as version 3: its metadata says `factors F`, and
 * its outputs are 1 + F, a feature's weight then its F factors (one score:
 * hog_model_info.outputs 1), so that a build that knows no factors refuses
 * it by its version rather than score it as a linear model. A field-aware
 * one is version 5, laid out as 4: its metadata also says `fields G`, and
 * its outputs are G F, a feature's F factors for each field (LIBFFM's model:
 * no linear weights). A model with feature crosses is version 6, laid out as
 * version 3: its metadata also says `interactions SPEC`, `cross_bits B` and
 * `cross_base D`, and its features are D + 2^B, the data's then the
 * crosses', which a build without crosses would score as missing.
 */
#define MODEL_VERSION 6u
#define SECTION_NAMES 1u  /* version 3's sections: class names */
#define SECTION_SCALES 2u /* feature scales */
#define SECTION_FNAMES 4u /* feature names */
#define MODEL_HEAD 32u
#define MODEL_MAX_META (1u << 20)
#define MODEL_MAX_OUTPUTS HOG_MAX_OUTPUTS /* outputs and classes */
#define MODEL_MAX_WEIGHTS (1ull << 40) /* features times outputs */

/* ===================================================================== *
 *  Metadata: one table of fields, for writing and for reading
 * ===================================================================== */
#define MODEL_FIELDS 64 /* room for the fields model_fields makes */

/* The metadata of a model file, in the order it is written (writing: a
 * linear model's without the factorisation machine's fields, so that its
 * file stays byte for byte what older builds wrote). */
/* A model's crosses' rules, as their text (the model file keeps them as
 * hog_cross.spec has them: comma-separated pairs, no space). */
static int parse_spec(const char *text, void *at)
{
    if (strlen(text) >= HOG_CROSS_SPEC)
        return -1;
    strcpy(at, text);
    return 0;
}

static size_t model_fields(hog_model_info *in, uint32_t *ffm_fields, hog_cross *cross, unsigned *hash_bits,
                           hog_meta_field *f, int writing)
{
    static const char *const train_keys[6] = {"train.rows", "train.loss", "train.logloss",
                                              "train.accuracy", "train.auc", "train.rmse"};
    static const char *const test_keys[6] = {"test.rows", "test.loss", "test.logloss",
                                             "test.accuracy", "test.auc", "test.rmse"};
    hog_train_params *p = &in->params;
    size_t n = 0;
    f[n++] = (hog_meta_field){"hogtrain", HOG_META_NOTE, NULL, hog_version_string(), NULL};
    f[n++] = (hog_meta_field){"loss", HOG_META_WORD, &in->loss, hog_loss_name(in->loss), hog_meta_parse_loss};
    f[n++] = (hog_meta_field){"data_fingerprint", HOG_META_HEX64, &in->data_fingerprint, NULL, NULL};
    f[n++] = HOG_META_NUM("data_skipped", &in->data_skipped);
    f[n++] = HOG_META_NUM("data_index_base", &in->data_index_base);
    /* Written only when set: the files of other models stay byte for byte
     * what they were, and a reader without the key skips it. */
    if (!writing || *hash_bits)
        f[n++] = HOG_META_NUM("data_hash_bits", hash_bits);
    f[n++] = HOG_META_NUM("train_rows", &in->train_rows);
    f[n++] = HOG_META_NUM("seconds", &in->seconds);
    f[n++] = HOG_META_NUM("threads", &p->threads);
    f[n++] = HOG_META_NUM("epochs", &p->epochs);
    f[n++] = HOG_META_NUM("step", &p->step);
    f[n++] = HOG_META_NUM("decay", &p->decay);
    f[n++] = HOG_META_NUM("power", &p->power);
    f[n++] = (hog_meta_field){"schedule", HOG_META_WORD, &p->schedule, hog_schedule_name(p->schedule),
                              hog_meta_parse_schedule};
    f[n++] = HOG_META_NUM("l2", &p->l2);
    if (!writing || p->l2_rows > 0)
        f[n++] = HOG_META_NUM("l2_rows", &p->l2_rows);
    f[n++] = HOG_META_NUM("holdout", &p->holdout);
    f[n++] = HOG_META_NUM("seed", &p->seed);
    f[n++] = HOG_META_NUM("bias", &p->bias);
    f[n++] = HOG_META_NUM("bind", &p->bind);
    /* hog_train_params.kernel keeps its first name, "path", on disk: model
     * files stay byte-identical across versions and old ones still load. */
    f[n++] = (hog_meta_field){"path", HOG_META_WORD, &p->kernel, hog_kernel_name(p->kernel), hog_meta_parse_kernel};
    f[n++] = HOG_META_NUM("batch", &p->batch);
    f[n++] = HOG_META_NUM("normalized", &p->normalized);
    f[n++] = HOG_META_NUM("l1", &p->l1);
    f[n++] = HOG_META_NUM("early_stop", &p->early_stop);
    f[n++] = HOG_META_NUM("average", &p->average);
    f[n++] = HOG_META_NUM("quantile", &p->quantile);
    f[n++] = (hog_meta_field){"replicas", HOG_META_WORD, &p->replicas, hog_replicas_name(p->replicas),
                              hog_meta_parse_replicas};
    f[n++] = (hog_meta_field){"class_weight", HOG_META_WORD, &p->class_weight, hog_class_weight_name(p->class_weight),
                              hog_meta_parse_class_weight};
    f[n++] = (hog_meta_field){"train_metrics", HOG_META_WORD, &p->train_metrics,
                              hog_train_metrics_name(p->train_metrics), hog_meta_parse_train_metrics};
    if (!writing || p->factors) /* factor_init is not kept: it only set the factors' first values */
        f[n++] = HOG_META_NUM("factors", &p->factors);
    if (!writing || *ffm_fields)
        f[n++] = HOG_META_NUM("fields", ffm_fields);
    if (!writing || cross->n) {
        f[n++] = (hog_meta_field){"interactions", HOG_META_WORD, cross->spec, cross->spec, parse_spec};
        f[n++] = HOG_META_NUM("cross_bits", &cross->bits);
        f[n++] = HOG_META_NUM("cross_base", &cross->base);
    }
    f[n++] = HOG_META_NUM("nonzero", &in->nonzero);
    f[n++] = HOG_META_NUM("epochs_run", &in->epochs_run);
    f[n++] = HOG_META_NUM("best_epoch", &in->best_epoch);
    n += hog_meta_metrics(f + n, train_keys, &in->train);
    n += hog_meta_metrics(f + n, test_keys, &in->test);
    return n;
}

/* ===================================================================== *
 *  Save and load
 * ===================================================================== */

/* Where the first non-finite f32 of n at p is, or n when there is none. */
static uint64_t first_nonfinite_f32(const unsigned char *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        float v;
        memcpy(&v, p + 4 * i, 4);
        if (!isfinite(v))
            return i;
    }
    return n;
}

/* Writes m into f, then commits it (aborts it on failure). */
static int model_write(const hog_model *m, hog_atomic_file *f)
{
    if (!hog_w_finite(m->bias, m->outputs, 1, 1) || !hog_w_finite(m->w, m->dim * m->outputs, 1, 1) ||
        (m->scales && !hog_w_finite(m->scales, m->dim, 1, 1))) {
        hog_atomic_abort(f);
        return HOG_ENONFINITE;
    }
    hog_model_info info = m->info;
    uint32_t ffm_fields = m->fields;
    hog_cross cross = m->cross;
    unsigned hash_bits = m->data_hash_bits;
    hog_meta_field fields[MODEL_FIELDS];
    size_t nfields = model_fields(&info, &ffm_fields, &cross, &hash_bits, fields, 1);
    char *meta;
    size_t meta_len;
    if (hog_meta_write(fields, nfields, &meta, &meta_len) < 0) {
        hog_atomic_abort(f);
        return -ENOMEM;
    }

    unsigned char head[MODEL_HEAD] = {0};
    memcpy(head, MODEL_MAGIC, 8);
    const uint32_t sections = (m->class_names ? SECTION_NAMES : 0) | (m->scales ? SECTION_SCALES : 0) |
                              (m->fnames.n ? SECTION_FNAMES : 0);
    hog_put_u32(head + 8, m->cross.n ? 6u : m->fields ? 5u : m->factors ? 4u : sections & (SECTION_SCALES | SECTION_FNAMES) ? 3u : sections ? 2u : 1u);
    hog_put_u32(head + 12, (uint32_t)meta_len);
    hog_put_u64(head + 16, m->dim);
    hog_put_u32(head + 24, m->outputs);
    hog_put_u32(head + 28, m->info.classes);

    uint32_t crc = 0;
    float chunk[4096];
    int rc = hog_atomic_write_crc(f, &crc, head, sizeof(head));
    if (rc == 0)
        rc = hog_atomic_write_crc(f, &crc, meta, meta_len);
    if (rc == 0)
        rc = hog_atomic_write_crc(f, &crc, m->class_labels, m->info.classes * sizeof(double));
    if (rc == 0 && ((sections & (SECTION_SCALES | SECTION_FNAMES)) || m->factors || m->cross.n)) {
        unsigned char sb[4];
        hog_put_u32(sb, sections);
        rc = hog_atomic_write_crc(f, &crc, sb, 4);
    }
    if (rc == 0 && m->class_names) {
        uint64_t names_bytes = 0;
        for (uint32_t k = 0; k < m->info.classes; k++)
            names_bytes += strlen(m->class_names[k]) + 1;
        unsigned char nb[4];
        hog_put_u32(nb, (uint32_t)names_bytes);
        rc = hog_atomic_write_crc(f, &crc, nb, 4);
        for (uint32_t k = 0; k < m->info.classes && rc == 0; k++)
            rc = hog_atomic_write_crc(f, &crc, m->class_names[k], strlen(m->class_names[k]) + 1);
    }
    if (rc == 0 && m->fnames.n) {
        const uint64_t fb = hog_fnames_bytes(&m->fnames);
        unsigned char *buf = hog_malloc((size_t)fb + 8);
        if (!buf) {
            rc = -ENOMEM;
        } else {
            hog_put_u64(buf, fb);
            hog_fnames_put(&m->fnames, buf + 8);
            rc = hog_atomic_write_crc(f, &crc, buf, (size_t)fb + 8);
            hog_free(buf);
        }
    }
    /* Scales and weights are copied out through the relaxed loads, then
     * written in chunks. */
    const struct { const hog_weight *w; uint64_t n; } parts[] = {
        {m->scales, m->scales ? m->dim : 0}, {m->bias, m->outputs}, {m->w, m->dim * m->outputs},
    };
    for (unsigned part = 0; part < HOG_ARRAY_LEN(parts) && rc == 0; part++)
        for (uint64_t i = 0; i < parts[part].n && rc == 0; i += HOG_ARRAY_LEN(chunk)) {
            uint64_t n = HOG_MIN(HOG_ARRAY_LEN(chunk), parts[part].n - i);
            for (uint64_t k = 0; k < n; k++)
                chunk[k] = hog_w_load(&parts[part].w[i + k]);
            rc = hog_atomic_write_crc(f, &crc, chunk, n * sizeof(float));
        }
    if (rc == 0)
        rc = hog_atomic_write(f, &crc, 4);
    hog_free(meta);
    if (rc < 0) {
        hog_atomic_abort(f);
        return rc;
    }
    return hog_atomic_commit(f);
}

int hog_model_save(const hog_model *m, const char *path)
{
    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    return rc < 0 ? rc : model_write(m, &f);
}

int hog_model_save_output(const hog_model *m, hog_output *o)
{
    int rc = model_write(m, hog_output_file(o));
    hog_free(o);
    return rc;
}

/* The class names of a version-2 file (or 3): names_bytes at `at` + 4, holding
 * exactly `classes` names of 1 to HOG_LABEL_NAME_MAX bytes, each ended by
 * a NUL, strictly ascending; the labels (checked ascending before) must
 * be 0, 1, ..., classes - 1. Errors name the byte offset. */
static int names_check(const char *path, const unsigned char *buf, uint64_t labels_at, uint64_t at,
                       uint64_t names_bytes, uint32_t classes, char *err, size_t err_len)
{
    const unsigned char *labels = buf + labels_at;
    for (uint32_t k = 0; k < classes; k++) {
        double y;
        memcpy(&y, labels + 8ull * k, 8);
        if (y != (double)k)
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: class label %u is %g: a model with class "
                            "names labels its classes 0 to %u", path, (unsigned long long)(labels_at + 8ull * k),
                            k, y, classes - 1);
    }
    const char *s = (const char *)buf + at + 4, *end = s + names_bytes, *prev = NULL;
    for (uint32_t k = 0; k < classes; k++) {
        const uint64_t off = (uint64_t)(s - (const char *)buf);
        const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
        if (!nul)
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: class name %u runs past the names' %llu bytes",
                            path, (unsigned long long)off, k, (unsigned long long)names_bytes);
        const size_t n = (size_t)(nul - s);
        if (n == 0 || n > HOG_LABEL_NAME_MAX)
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: class name %u is %zu bytes, not 1 to %u",
                            path, (unsigned long long)off, k, n, HOG_LABEL_NAME_MAX);
        if (prev && strcmp(prev, s) >= 0)
            return hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: class name %u is not after class %u's: "
                            "names are distinct and ascending", path, (unsigned long long)off, k, k - 1);
        prev = s;
        s = nul + 1;
    }
    if (s != end)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: %llu bytes after the last class name",
                        path, (unsigned long long)(s - (const char *)buf), (unsigned long long)(end - s));
    return 0;
}

int hog_model_load(const char *path, hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    unsigned char *buf = NULL;
    size_t len = 0;
    hog_fnames fn; /* the feature names, checked before the model is made */
    memset(&fn, 0, sizeof(fn));
    int rc = hog_read_file(path, &buf, &len);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));

    if (len < 8 || memcmp(buf, MODEL_MAGIC, 8) != 0) {
        rc = hog_fail(HOG_EMAGIC, err, err_len, "%s: not a hogtrain model (no HOGMODEL magic)", path);
        goto out;
    }
    if (len < MODEL_HEAD + 4) {
        rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %zu bytes, the header alone is %u",
                      path, len, MODEL_HEAD + 4);
        goto out;
    }
    uint32_t version = hog_get_u32(buf + 8), meta_len = hog_get_u32(buf + 12);
    uint64_t dim = hog_get_u64(buf + 16);
    uint32_t outputs = hog_get_u32(buf + 24), classes = hog_get_u32(buf + 28);
    if (version < 1 || version > MODEL_VERSION) {
        rc = hog_fail(HOG_EVERSION, err, err_len, "%s: model version %u, this build reads versions 1 to %u",
                      path, version, MODEL_VERSION);
        goto out;
    }
    /* Each size against its limit, before any is multiplied: the length
     * check below then bounds them all by the file's bytes. */
    const struct {
        const char *field;
        uint64_t v, min, max;
    } sizes[] = {{"meta_bytes", meta_len, 0, MODEL_MAX_META},
                {"outputs", outputs, 1, MODEL_MAX_OUTPUTS},
                {"classes", classes, 0, MODEL_MAX_OUTPUTS},
                {"features", dim, 0, MODEL_MAX_WEIGHTS / (outputs ? outputs : 1)}};
    for (size_t i = 0; i < HOG_ARRAY_LEN(sizes); i++)
        if (sizes[i].v < sizes[i].min || sizes[i].v > sizes[i].max) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: header field %s is %llu, not between %llu and %llu", path,
                          sizes[i].field, (unsigned long long)sizes[i].v, (unsigned long long)sizes[i].min,
                          (unsigned long long)sizes[i].max);
            goto out;
        }
    /* Version 3: which optional parts follow the labels. */
    const uint64_t labels_at = MODEL_HEAD + (uint64_t)meta_len, sections_at = labels_at + 8ull * classes;
    uint32_t sections = version == 2 ? SECTION_NAMES : 0;
    if (version >= 3) {
        if (sections_at + 4 > len) {
            rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: the sections word at byte %llu is past the "
                          "file's %zu bytes", path, (unsigned long long)sections_at, len);
            goto out;
        }
        sections = hog_get_u32(buf + sections_at);
        if (sections & ~(SECTION_NAMES | SECTION_SCALES | SECTION_FNAMES)) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: sections is 0x%x, expected bits 0 (class "
                          "names), 1 (feature scales) and 2 (feature names) only", path,
                          (unsigned long long)sections_at, sections);
            goto out;
        }
    }
    /* The names' size, bounded before it is added. */
    const uint64_t names_at = sections_at + (version >= 3 ? 4 : 0);
    uint64_t names_bytes = 0, names_part = 0;
    if (sections & SECTION_NAMES) {
        if (names_at + 4 > len) {
            rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: the class names' size at byte %llu is past "
                          "the file's %zu bytes", path, (unsigned long long)names_at, len);
            goto out;
        }
        names_bytes = hog_get_u32(buf + names_at);
        const uint64_t most = (uint64_t)classes * (HOG_LABEL_NAME_MAX + 1);
        if (classes < 2 || names_bytes < 2ull * classes || names_bytes > most) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: names_bytes is %llu, not between %llu and "
                          "%llu for %u classes (at least 2)", path, (unsigned long long)names_at,
                          (unsigned long long)names_bytes, 2ull * classes, (unsigned long long)most, classes);
            goto out;
        }
        names_part = 4 + names_bytes;
    }
    /* The feature names' size, bounded by the file before it is added. */
    const uint64_t fnames_at = names_at + names_part;
    uint64_t fnames_bytes = 0, fnames_part = 0;
    if (sections & SECTION_FNAMES) {
        if (fnames_at + 8 > len) {
            rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: the feature names' size at byte %llu is "
                          "past the file's %zu bytes", path, (unsigned long long)fnames_at, len);
            goto out;
        }
        fnames_bytes = hog_get_u64(buf + fnames_at);
        if (fnames_bytes < 10 || fnames_bytes > len - fnames_at - 8) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: fnames_bytes is %llu, not between 10 and the "
                          "%llu bytes the file has after it", path, (unsigned long long)fnames_at,
                          (unsigned long long)fnames_bytes, (unsigned long long)(len - fnames_at - 8));
            goto out;
        }
        fnames_part = 8 + fnames_bytes;
    }
    /* The scales' size is the features' count, bounded above: the length
     * check bounds it by the file's bytes before anything is allocated. */
    const uint64_t scales_at = fnames_at + fnames_part, scales_part = sections & SECTION_SCALES ? 4ull * dim : 0;
    uint64_t want = scales_at + scales_part + 4ull * outputs + 4ull * dim * outputs + 4;
    if (len != want) {
        rc = hog_fail(len < want ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                      "%s: %s: the header implies %llu bytes, the file has %zu", path,
                      len < want ? "truncated" : "trailing bytes", (unsigned long long)want, len);
        goto out;
    }
    uint32_t crc = hog_get_u32(buf + len - 4);
    if (hog_crc32(0, buf, len - 4) != crc) {
        rc = hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the model is corrupted", path);
        goto out;
    }
    hog_model_info info;
    memset(&info, 0, sizeof(info));
    info.params = hog_train_params_default();
    info.params.train_metrics = HOG_TRAIN_METRICS_EXACT; /* what files without the field measured */
    info.train = hog_metrics_none();
    info.test = hog_metrics_none();
    uint32_t ffm_fields = 0;
    hog_cross cross;
    memset(&cross, 0, sizeof(cross));
    unsigned hash_bits = 0;
    hog_meta_field fields[MODEL_FIELDS];
    size_t nfields = model_fields(&info, &ffm_fields, &cross, &hash_bits, fields, 0);
    char why[256];
    if (hog_meta_read((char *)buf + MODEL_HEAD, meta_len, fields, nfields, why, sizeof(why)) < 0) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: %s", path, why);
        goto out;
    }
    if (info.data_index_base != 0 && info.data_index_base != 1) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: data_index_base %d, expected 0 or 1",
                      path, info.data_index_base);
        goto out;
    }
    if (hash_bits > 31) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: data_hash_bits %u, expected 1 to 31",
                      path, hash_bits);
        goto out;
    }
    const uint32_t factors = info.params.factors;
    if ((version == 4 || version == 5) != (factors > 0) || factors > HOG_MAX_FACTORS) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: version %u with factors %u in its metadata: a "
                      "factorisation machine (1 to %u factors) is version 4 or 5, and only it", path, version,
                      factors, HOG_MAX_FACTORS);
        goto out;
    }
    if ((version == 5) != (ffm_fields > 0) || ffm_fields > HOG_MAX_FIELDS) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: version %u with fields %u in its metadata: a field-aware "
                      "factorisation machine (1 to %u fields) is version 5, and only it", path, version,
                      ffm_fields, HOG_MAX_FIELDS);
        goto out;
    }
    info.params.field_aware = ffm_fields > 0;
    char spec[HOG_CROSS_SPEC];
    memcpy(spec, cross.spec, sizeof(spec)); /* hog_cross_parse starts *c afresh */
    if ((version == 6) != (spec[0] != 0) ||
        (spec[0] && (hog_cross_parse(spec, cross.bits, cross.base, &cross, why, sizeof(why)) < 0 ||
                           cross.base + ((uint64_t)1 << cross.bits) != dim))) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: version %u with interactions \"%s\" into 2^%u features after "
                      "%llu in its metadata, and %llu features: a crossed model is version 6, and only it, its "
                      "features the data's and its crosses'", path, version, spec, cross.bits,
                      (unsigned long long)cross.base, (unsigned long long)dim);
        goto out;
    }
    if ((factors && (info.loss == HOG_LOSS_SOFTMAX || outputs != (ffm_fields ? factors * ffm_fields : 1 + factors))) ||
        (!factors && (info.loss == HOG_LOSS_SOFTMAX) != (outputs > 1)) ||
        (hog_loss_is_binary(info.loss) && classes != 2) || (hog_loss_is_regression(info.loss) && classes != 0) ||
        (info.loss == HOG_LOSS_SOFTMAX && classes != outputs)) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: loss %s does not fit %u outputs, %u classes and %u factors",
                      path, hog_loss_name(info.loss), outputs, classes, factors);
        goto out;
    }
    if ((sections & SECTION_SCALES) && !info.params.normalized) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: sections has feature scales (bit 1), the "
                      "metadata says normalized 0: scales are the normalized update's", path,
                      (unsigned long long)sections_at);
        goto out;
    }
    const unsigned char *labels = buf + labels_at, *biases = buf + scales_at + scales_part,
                        *weights = biases + 4ull * outputs;
    for (uint32_t k = 0; k < classes; k++) {
        double y, prev;
        memcpy(&y, labels + 8ull * k, 8);
        if (k > 0)
            memcpy(&prev, labels + 8ull * (k - 1), 8);
        if (!isfinite(y) || (k > 0 && !(y > prev))) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: class label %u is %g: labels are finite and ascending",
                          path, k, y);
            goto out;
        }
    }
    if ((sections & SECTION_NAMES) &&
        (rc = names_check(path, buf, labels_at, names_at, names_bytes, classes, err, err_len)) < 0)
        goto out;
    if ((sections & SECTION_FNAMES) &&
        (rc = hog_fnames_read(path, buf + fnames_at + 8, fnames_bytes, fnames_at + 8, dim, &fn, err, err_len)) < 0)
        goto out;
    for (uint64_t j = 0; j < scales_part / 4; j++) {
        float v;
        memcpy(&v, buf + scales_at + 4 * j, 4);
        if (!(v >= 0.0f) || !isfinite(v)) {
            rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: byte %llu: the scale of feature %llu is %g, expected "
                          "a finite value >= 0", path, (unsigned long long)(scales_at + 4 * j),
                          (unsigned long long)j, (double)v);
            goto out;
        }
    }
    uint64_t bad = first_nonfinite_f32(biases, outputs);
    if (bad < outputs) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: bias %llu is not finite", path, (unsigned long long)bad);
        goto out;
    }
    bad = first_nonfinite_f32(weights, dim * outputs);
    if (bad < dim * outputs) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: the weight of feature %llu, output %llu, is not finite",
                      path, (unsigned long long)(bad / outputs), (unsigned long long)(bad % outputs));
        goto out;
    }
    hog_model *m = hog_model_new(info.loss, dim, outputs, classes);
    if (!m) {
        rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        goto out;
    }
    info.features = dim;
    info.outputs = factors ? 1 : outputs;
    info.classes = classes;
    info.params.progress = NULL;
    info.params.progress_ctx = NULL;
    m->info = info;
    m->factors = factors;
    m->fields = ffm_fields;
    m->data_hash_bits = hash_bits;
    m->cross = cross;
    m->info.params.interactions = cross.n ? m->cross.spec : NULL;
    m->info.params.cross_bits = cross.n ? cross.bits : 0;
    const unsigned char *p = buf + labels_at;
    memcpy(m->class_labels, p, 8ull * classes);
    p = buf + names_at;
    if (sections & SECTION_NAMES) {
        if (!(m->class_names = hog_calloc(classes, sizeof(char *)))) {
            hog_model_free(m);
            rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
            goto out;
        }
        const char *name = (const char *)p + 4;
        for (uint32_t k = 0; k < classes; k++) {
            if (!(m->class_names[k] = hog_strdup(name))) {
                hog_model_free(m);
                rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
                goto out;
            }
            name += strlen(name) + 1;
        }
        p += names_part;
    }
    m->fnames = fn; /* the model's from here on */
    memset(&fn, 0, sizeof(fn));
    p += fnames_part;
    if (sections & SECTION_SCALES) {
        if (!(m->scales = hog_calloc(dim ? dim : 1, sizeof(hog_weight)))) {
            hog_model_free(m);
            rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
            goto out;
        }
        memcpy((void *)m->scales, p, 4ull * dim);
        p += scales_part;
    }
    memcpy((void *)m->bias, p, 4ull * outputs);
    p += 4ull * outputs;
    memcpy((void *)m->w, p, 4ull * dim * outputs);
    *out = m;
    rc = 0;
out:
    hog_fnames_free(&fn);
    hog_free(buf);
    return rc;
}
