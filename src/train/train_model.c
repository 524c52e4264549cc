/* train_model.c: the model object: scoring, prediction, and the versioned, checksummed model file. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train.h"

/*
 * Model file, version 1. Little-endian.
 *
 *   offset  bytes          field
 *   0       8              magic "HOGMODEL"
 *   8       4              version (1)
 *   12      4              meta_bytes
 *   16      8              dim (features)
 *   24      4              outputs
 *   28      4              classes
 *   32      meta_bytes     metadata: "key value\n" lines, numbers in the C locale
 *                          with 17 significant digits so they round-trip
 *   ...     8 * classes    f64 class labels, ascending
 *   ...     4 * outputs    f32 bias
 *   ...     4 * dim * outputs  f32 weights, feature-major (w[j * outputs + k])
 *   ...     4              CRC-32 of every byte before it
 */
#define MODEL_VERSION 1u
#define MODEL_HEAD 32u
#define MODEL_MAX_META (1u << 20)

hog_model *hog_model_new(hog_loss loss, uint64_t dim, uint32_t outputs, uint32_t classes)
{
    hog_model *m = hog_calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->dim = dim;
    m->outputs = outputs;
    m->info.loss = loss;
    m->info.features = dim;
    m->info.outputs = outputs;
    m->info.classes = classes;
    m->info.train = hog_metrics_none();
    m->info.test = hog_metrics_none();
    m->info.params = hog_train_params_default();
    /* Weights are cache-line aligned so no two workers' hot lines straddle. */
    m->w = hog_aligned_alloc(HOG_CACHELINE, (size_t)(dim ? dim : 1) * outputs * sizeof(hog_weight));
    m->bias = hog_calloc(outputs, sizeof(hog_weight));
    m->class_labels = hog_calloc(classes ? classes : 1, sizeof(double));
    if (!m->w || !m->bias || !m->class_labels) {
        hog_model_free(m);
        return NULL;
    }
    memset((void *)m->w, 0, (size_t)(dim ? dim : 1) * outputs * sizeof(hog_weight));
    return m;
}

void hog_model_free(hog_model *m)
{
    if (!m)
        return;
    hog_free((void *)m->w);
    hog_free((void *)m->bias);
    hog_free(m->class_labels);
    hog_free(m);
}

void hog_model_get_info(const hog_model *m, hog_model_info *info)
{
    *info = m->info;
}

double hog_model_class_label(const hog_model *m, uint32_t k)
{
    return k < m->info.classes ? m->class_labels[k] : (double)NAN;
}

int hog_model_class_of(const hog_model *m, float label)
{
    if (m->info.loss == HOG_LOSS_SOFTMAX) {
        uint32_t lo = 0, hi = m->info.classes;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (m->class_labels[mid] < (double)label)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < m->info.classes && m->class_labels[lo] == (double)label ? (int)lo : -1;
    }
    /* Binary: above the midpoint of the two classes is positive, so a test
     * file labelled -1/+1 scores against a model trained on 0/1 and back. */
    double mid = 0.5 * (m->class_labels[0] + m->class_labels[1]);
    return (double)label > mid;
}

float hog_softmax(float *s, uint32_t k)
{
    float mx = s[0];
    for (uint32_t i = 1; i < k; i++)
        mx = s[i] > mx ? s[i] : mx;
    float sum = 0;
    for (uint32_t i = 0; i < k; i++) {
        s[i] = expf(s[i] - mx);
        sum += s[i];
    }
    float inv = 1.0f / sum;
    for (uint32_t i = 0; i < k; i++)
        s[i] *= inv;
    return mx + logf(sum);
}

void hog_model_scores(const hog_model *m, const hog_row *row, float *out)
{
    const uint32_t K = m->outputs;
    for (uint32_t k = 0; k < K; k++)
        out[k] = hog_w_load(&m->bias[k]);
    for (uint32_t i = 0; i < row->nnz; i++) {
        uint64_t j = row->index[i];
        if (j >= m->dim)
            continue;
        const hog_weight *wj = m->w + j * K;
        float x = row->value[i];
        for (uint32_t k = 0; k < K; k++)
            out[k] += hog_w_load(&wj[k]) * x;
    }
}

double hog_model_predict(const hog_model *m, const hog_row *row, uint32_t *cls, float *probs)
{
    if (m->info.loss != HOG_LOSS_SOFTMAX) {
        float s;
        hog_model_scores(m, row, &s);
        if (cls)
            *cls = hog_loss_is_regression(m->info.loss) ? 0u : (s > 0);
        if (m->info.loss == HOG_LOSS_LOGISTIC)
            return 1.0 / (1.0 + exp(-(double)s));
        if (m->info.loss == HOG_LOSS_MODIFIED_HUBER) /* Zhang (2004): the loss's own probability estimate */
            return 0.5 * ((double)fmaxf(-1.0f, fminf(1.0f, s)) + 1.0);
        return s;
    }
    float stack[64];
    float *s = m->outputs <= 64 ? stack : hog_malloc(m->outputs * sizeof(float));
    if (!s)
        return NAN;
    hog_model_scores(m, row, s);
    hog_softmax(s, m->outputs);
    uint32_t best = 0;
    for (uint32_t k = 1; k < m->outputs; k++)
        best = s[k] > s[best] ? k : best;
    if (probs)
        memcpy(probs, s, m->outputs * sizeof(float));
    if (cls)
        *cls = best;
    double p = s[best];
    if (s != stack)
        hog_free(s);
    return p;
}

/* ===================================================================== *
 *  Metadata: "key value" lines
 * ===================================================================== */
typedef struct meta_buf {
    char *p;
    size_t len, cap;
    int oom;
} meta_buf;

static void meta_add(meta_buf *b, const char *key, const char *fmt, ...) HOG_PRINTF(3, 4);
static void meta_add(meta_buf *b, const char *key, const char *fmt, ...)
{
    char val[128];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    size_t need = strlen(key) + strlen(val) + 3;
    if (b->len + need > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + need)
            cap *= 2;
        char *p = hog_realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    b->len += (size_t)snprintf(b->p + b->len, b->cap - b->len, "%s %s\n", key, val);
}

static void meta_metrics(meta_buf *b, const char *prefix, const hog_metrics *m)
{
    char key[64];
    snprintf(key, sizeof(key), "%s.rows", prefix);
    meta_add(b, key, "%llu", (unsigned long long)m->rows);
    const struct { const char *name; double v; } f[] = {
        {"loss", m->loss}, {"logloss", m->logloss}, {"accuracy", m->accuracy},
        {"auc", m->auc}, {"rmse", m->rmse},
    };
    for (unsigned i = 0; i < HOG_ARRAY_LEN(f); i++) {
        snprintf(key, sizeof(key), "%s.%s", prefix, f[i].name);
        meta_add(b, key, "%.17g", f[i].v);
    }
}

static void meta_write(meta_buf *b, const hog_model_info *in)
{
    const hog_train_params *p = &in->params;
    meta_add(b, "hogtrain", "%s", hog_version_string());
    meta_add(b, "loss", "%s", hog_loss_name(in->loss));
    meta_add(b, "data_fingerprint", "%016llx", (unsigned long long)in->data_fingerprint);
    meta_add(b, "data_skipped", "%llu", (unsigned long long)in->data_skipped);
    meta_add(b, "data_index_base", "%d", in->data_index_base);
    meta_add(b, "train_rows", "%llu", (unsigned long long)in->train_rows);
    meta_add(b, "seconds", "%.17g", in->seconds);
    meta_add(b, "threads", "%u", p->threads);
    meta_add(b, "epochs", "%u", p->epochs);
    meta_add(b, "step", "%.17g", p->step);
    meta_add(b, "decay", "%.17g", p->decay);
    meta_add(b, "power", "%.17g", p->power);
    meta_add(b, "schedule", "%s", hog_schedule_name(p->schedule));
    meta_add(b, "l2", "%.17g", p->l2);
    meta_add(b, "holdout", "%.17g", p->holdout);
    meta_add(b, "seed", "%llu", (unsigned long long)p->seed);
    meta_add(b, "bias", "%d", p->bias);
    meta_add(b, "bind", "%d", p->bind);
    meta_add(b, "path", "%s", hog_path_name(p->path));
    meta_add(b, "batch", "%u", p->batch);
    meta_add(b, "normalized", "%d", p->normalized);
    meta_add(b, "l1", "%.17g", p->l1);
    meta_add(b, "early_stop", "%u", p->early_stop);
    meta_add(b, "average", "%u", p->average);
    meta_add(b, "quantile", "%.17g", p->quantile);
    meta_add(b, "replicas", "%s", hog_replicas_name(p->replicas));
    meta_add(b, "nonzero", "%llu", (unsigned long long)in->nonzero);
    meta_add(b, "epochs_run", "%u", in->epochs_run);
    meta_add(b, "best_epoch", "%u", in->best_epoch);
    meta_metrics(b, "train", &in->train);
    meta_metrics(b, "test", &in->test);
}

/* Reads one metadata value into the info. Unknown keys are ignored so a newer
 * writer's extra fields do not stop an older reader. */
static int meta_read_one(hog_model_info *in, const char *key, const char *val)
{
    hog_train_params *p = &in->params;
    char *end = NULL;
    if (strcmp(key, "loss") == 0)
        return hog_loss_parse(val, &in->loss);
    if (strcmp(key, "schedule") == 0)
        return hog_schedule_parse(val, &p->schedule);
    if (strcmp(key, "hogtrain") == 0)
        return 0;
    if (strcmp(key, "path") == 0)
        return hog_path_parse(val, &p->path);
    if (strcmp(key, "replicas") == 0)
        return hog_replicas_parse(val, &p->replicas);
    if (strcmp(key, "data_fingerprint") == 0) {
        in->data_fingerprint = strtoull(val, &end, 16);
        return *end ? HOG_ECORRUPT : 0;
    }
    struct { const char *key; double *d; } dbl[] = {
        {"seconds", &in->seconds}, {"step", &p->step}, {"decay", &p->decay},
        {"power", &p->power}, {"l2", &p->l2}, {"holdout", &p->holdout},
        {"l1", &p->l1}, {"quantile", &p->quantile},
        {"train.loss", &in->train.loss}, {"train.logloss", &in->train.logloss},
        {"train.accuracy", &in->train.accuracy}, {"train.auc", &in->train.auc},
        {"train.rmse", &in->train.rmse}, {"test.loss", &in->test.loss},
        {"test.logloss", &in->test.logloss}, {"test.accuracy", &in->test.accuracy},
        {"test.auc", &in->test.auc}, {"test.rmse", &in->test.rmse},
    };
    for (unsigned i = 0; i < HOG_ARRAY_LEN(dbl); i++)
        if (strcmp(key, dbl[i].key) == 0) {
            *dbl[i].d = strtod(val, &end);
            return *end ? HOG_ECORRUPT : 0;
        }
    unsigned long long u = strtoull(val, &end, 10);
    if (*end)
        return 0; /* not an integer: a key from a newer writer */
    if (strcmp(key, "train_rows") == 0) in->train_rows = u;
    else if (strcmp(key, "data_skipped") == 0) in->data_skipped = u;
    else if (strcmp(key, "data_index_base") == 0 && u <= 1) in->data_index_base = (int)u;
    else if (strcmp(key, "threads") == 0) p->threads = (unsigned)u;
    else if (strcmp(key, "epochs") == 0) p->epochs = (unsigned)u;
    else if (strcmp(key, "seed") == 0) p->seed = u;
    else if (strcmp(key, "bias") == 0) p->bias = (int)u;
    else if (strcmp(key, "bind") == 0) p->bind = (int)u;
    else if (strcmp(key, "batch") == 0) p->batch = (unsigned)u;
    else if (strcmp(key, "normalized") == 0) p->normalized = (int)u;
    else if (strcmp(key, "early_stop") == 0) p->early_stop = (unsigned)u;
    else if (strcmp(key, "average") == 0) p->average = (unsigned)u;
    else if (strcmp(key, "nonzero") == 0) in->nonzero = u;
    else if (strcmp(key, "epochs_run") == 0) in->epochs_run = (unsigned)u;
    else if (strcmp(key, "best_epoch") == 0) in->best_epoch = (unsigned)u;
    else if (strcmp(key, "train.rows") == 0) in->train.rows = u;
    else if (strcmp(key, "test.rows") == 0) in->test.rows = u;
    return 0;
}

static int meta_read(hog_model_info *in, char *text, size_t len)
{
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return HOG_ECORRUPT;
        *nl = '\0';
        char *sp = strchr(p, ' ');
        if (!sp)
            return HOG_ECORRUPT;
        *sp = '\0';
        int rc = meta_read_one(in, p, sp + 1);
        if (rc < 0)
            return HOG_ECORRUPT;
        p = nl + 1;
    }
    return 0;
}

/* ===================================================================== *
 *  Save and load
 * ===================================================================== */

static int write_crc(hog_atomic_file *f, uint32_t *crc, const void *buf, size_t len)
{
    *crc = hog_crc32(*crc, buf, len);
    return hog_atomic_write(f, buf, len);
}

int hog_model_save(const hog_model *m, const char *path)
{
    meta_buf meta = {0};
    locale_t old, c = hog_c_locale_enter(&old);
    meta_write(&meta, &m->info);
    hog_c_locale_leave(c, old);
    if (meta.oom) {
        hog_free(meta.p);
        return -ENOMEM;
    }

    unsigned char head[MODEL_HEAD] = {0};
    memcpy(head, MODEL_MAGIC, 8);
    hog_put_u32(head + 8, MODEL_VERSION);
    hog_put_u32(head + 12, (uint32_t)meta.len);
    hog_put_u64(head + 16, m->dim);
    hog_put_u32(head + 24, m->outputs);
    hog_put_u32(head + 28, m->info.classes);

    hog_atomic_file f;
    int rc = hog_atomic_open(&f, path);
    if (rc < 0) {
        hog_free(meta.p);
        return rc;
    }
    uint32_t crc = 0;
    float chunk[4096];
    rc = write_crc(&f, &crc, head, sizeof(head));
    if (rc == 0)
        rc = write_crc(&f, &crc, meta.p, meta.len);
    if (rc == 0)
        rc = write_crc(&f, &crc, m->class_labels, m->info.classes * sizeof(double));
    /* Weights are copied out through the relaxed loads, then written in chunks. */
    const struct { const hog_weight *w; uint64_t n; } parts[] = {
        {m->bias, m->outputs}, {m->w, m->dim * m->outputs},
    };
    for (unsigned part = 0; part < 2 && rc == 0; part++)
        for (uint64_t i = 0; i < parts[part].n && rc == 0; i += HOG_ARRAY_LEN(chunk)) {
            uint64_t n = HOG_MIN(HOG_ARRAY_LEN(chunk), parts[part].n - i);
            for (uint64_t k = 0; k < n; k++)
                chunk[k] = hog_w_load(&parts[part].w[i + k]);
            rc = write_crc(&f, &crc, chunk, n * sizeof(float));
        }
    if (rc == 0)
        rc = hog_atomic_write(&f, &crc, 4);
    hog_free(meta.p);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}

int hog_model_load(const char *path, hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    unsigned char *buf = NULL;
    size_t len = 0;
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
    if (version != MODEL_VERSION) {
        rc = hog_fail(HOG_EVERSION, err, err_len, "%s: model version %u, this build reads version %u",
                      path, version, MODEL_VERSION);
        goto out;
    }
    if (meta_len > MODEL_MAX_META || outputs == 0 || outputs > (1u << 20) || classes > (1u << 20) ||
        dim > (1ull << 40) / outputs) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len,
                      "%s: implausible sizes (meta %u bytes, %llu features, %u outputs, %u classes)",
                      path, meta_len, (unsigned long long)dim, outputs, classes);
        goto out;
    }
    uint64_t want = MODEL_HEAD + (uint64_t)meta_len + 8ull * classes + 4ull * outputs +
                    4ull * dim * outputs + 4;
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
    info.train = hog_metrics_none();
    info.test = hog_metrics_none();
    locale_t old, c = hog_c_locale_enter(&old);
    rc = meta_read(&info, (char *)buf + MODEL_HEAD, meta_len);
    hog_c_locale_leave(c, old);
    if (rc < 0) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata", path);
        goto out;
    }
    if ((info.loss == HOG_LOSS_SOFTMAX) != (outputs > 1) ||
        (hog_loss_is_binary(info.loss) && classes != 2) || (hog_loss_is_regression(info.loss) && classes != 0) ||
        (info.loss == HOG_LOSS_SOFTMAX && classes != outputs)) {
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "%s: loss %s does not fit %u outputs and %u classes",
                      path, hog_loss_name(info.loss), outputs, classes);
        goto out;
    }
    hog_model *m = hog_model_new(info.loss, dim, outputs, classes);
    if (!m) {
        rc = hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
        goto out;
    }
    info.features = dim;
    info.outputs = outputs;
    info.classes = classes;
    info.params.progress = NULL;
    info.params.progress_ctx = NULL;
    m->info = info;
    const unsigned char *p = buf + MODEL_HEAD + meta_len;
    memcpy(m->class_labels, p, 8ull * classes);
    p += 8ull * classes;
    memcpy((void *)m->bias, p, 4ull * outputs);
    p += 4ull * outputs;
    memcpy((void *)m->w, p, 4ull * dim * outputs);
    *out = m;
    rc = 0;
out:
    hog_free(buf);
    return rc;
}
