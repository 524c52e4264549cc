/* train_meta.c: the metadata of model files, "key value" lines written from a table of fields and read back into it, numbers in the C locale. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/* The value of one field as text; buf holds at least HOG_NUMBER_CHARS. */
static const char *field_text(const hog_meta_field *f, char *buf, size_t len)
{
    switch (f->kind) {
    case HOG_META_F64:
        hog_number_format(buf, len, *(const double *)f->at);
        break;
    case HOG_META_U64:
        snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)f->at);
        break;
    case HOG_META_UINT:
        snprintf(buf, len, "%u", *(const unsigned *)f->at);
        break;
    case HOG_META_INT:
        snprintf(buf, len, "%d", *(const int *)f->at);
        break;
    case HOG_META_HEX64:
        snprintf(buf, len, "%016llx", (unsigned long long)*(const uint64_t *)f->at);
        break;
    case HOG_META_WORD:
    case HOG_META_NOTE:
        return f->word;
    }
    return buf;
}

int hog_meta_write(const hog_meta_field *f, size_t n, char **text, size_t *len)
{
    char *b = NULL;
    size_t used = 0, cap = 0;
    for (size_t i = 0; i < n; i++) {
        char num[HOG_NUMBER_CHARS];
        const char *val = field_text(&f[i], num, sizeof(num));
        size_t klen = strlen(f[i].key), vlen = strlen(val);
        if (hog_array_grow((void **)&b, &cap, used + klen + vlen + 2, 1, 1024) < 0) {
            hog_free(b);
            return -ENOMEM;
        }
        memcpy(b + used, f[i].key, klen);
        b[used + klen] = ' ';
        memcpy(b + used + klen + 1, val, vlen);
        b[used + klen + 1 + vlen] = '\n';
        used += klen + vlen + 2;
    }
    *text = b;
    *len = used;
    return 0;
}

/* An unsigned decimal or hexadecimal integer, all of s, at most max. */
static int read_unsigned(const char *s, int base, unsigned long long max, unsigned long long *out)
{
    /* strtoull would take a sign, spaces and "0x": none of them is written. */
    if (base == 10 ? (*s < '0' || *s > '9') : !((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') ||
                                                 (*s >= 'A' && *s <= 'F')))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (*end || errno == ERANGE || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

static int read_int(const char *s, int *out)
{
    if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
        return -EINVAL;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno == ERANGE || v < INT_MIN || v > INT_MAX)
        return -EINVAL;
    *out = (int)v;
    return 0;
}

/* Reads val into field f. Returns 0 or -EINVAL. */
static int field_read(const hog_meta_field *f, const char *val)
{
    unsigned long long u;
    switch (f->kind) {
    case HOG_META_F64:
        return hog_number_parse(val, f->at);
    case HOG_META_U64:
        if (read_unsigned(val, 10, UINT64_MAX, &u) < 0)
            return -EINVAL;
        *(uint64_t *)f->at = u;
        return 0;
    case HOG_META_UINT:
        if (read_unsigned(val, 10, UINT_MAX, &u) < 0)
            return -EINVAL;
        *(unsigned *)f->at = (unsigned)u;
        return 0;
    case HOG_META_INT:
        return read_int(val, f->at);
    case HOG_META_HEX64:
        if (read_unsigned(val, 16, UINT64_MAX, &u) < 0)
            return -EINVAL;
        *(uint64_t *)f->at = u;
        return 0;
    case HOG_META_WORD:
        if (f->parse)
            return f->parse(val, f->at) < 0 ? -EINVAL : 0;
        return strcmp(val, f->word) == 0 ? 0 : -EINVAL;
    case HOG_META_NOTE:
        return 0;
    }
    return -EINVAL;
}

/* What field f takes, for a message. */
static void field_expected(const hog_meta_field *f, char *buf, size_t len)
{
    static const char *const what[] = {
        [HOG_META_F64] = "a number", [HOG_META_U64] = "an unsigned integer", [HOG_META_UINT] = "an unsigned integer",
        [HOG_META_INT] = "an integer", [HOG_META_HEX64] = "a hexadecimal number", [HOG_META_WORD] = "one of its names",
        [HOG_META_NOTE] = "anything",
    };
    if (f->kind == HOG_META_WORD && !f->parse)
        snprintf(buf, len, "\"%s\"", f->word);
    else
        snprintf(buf, len, "%s", what[f->kind]);
}

int hog_meta_read(char *text, size_t len, const hog_meta_field *f, size_t n, char *why, size_t why_len)
{
    char *p = text, *end = text + len;
    for (unsigned line = 1; p < end; line++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            return hog_fail(HOG_ECORRUPT, why, why_len, "line %u: no newline at its end", line);
        *nl = '\0';
        char *sp = strchr(p, ' ');
        if (!sp)
            return hog_fail(HOG_ECORRUPT, why, why_len, "line %u: no space between a key and a value", line);
        *sp = '\0';
        const char *val = sp + 1;
        /* Keys this reader does not know are skipped: they come from a newer
         * writer, whose files this reader still loads. */
        for (size_t i = 0; i < n; i++) {
            if (strcmp(p, f[i].key) != 0)
                continue;
            if (field_read(&f[i], val) < 0) {
                char want[64];
                field_expected(&f[i], want, sizeof(want));
                return hog_fail(HOG_ECORRUPT, why, why_len, "line %u: %s: expected %s, found \"%.40s\"", line,
                                f[i].key, want, val);
            }
            break;
        }
        p = nl + 1;
    }
    return 0;
}

/* ===================================================================== *
 *  Two tables compared
 * ===================================================================== */
/* The value of field f for a message: a number with digits significant
 * digits, a word of an enum as its constant (see hogtrain.h). */
static void field_value(const hog_meta_field *f, const char *name, int digits, char *buf, size_t len)
{
    static const struct { const char *name, *prefix; } enums[] = {
        {"loss", "HOG_LOSS_"}, {"schedule", "HOG_SCHEDULE_"}, {"kernel", "HOG_KERNEL_"},
        {"replicas", "HOG_REPLICAS_"},
    };
    if (f->kind == HOG_META_F64) {
        snprintf(buf, len, "%.*g", digits, *(const double *)f->at);
        return;
    }
    if (f->kind != HOG_META_WORD) {
        field_text(f, buf, len);
        return;
    }
    const char *prefix = "";
    for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++)
        if (strcmp(name, enums[i].name) == 0)
            prefix = enums[i].prefix;
    snprintf(buf, len, "%s%s", prefix, f->word);
    if (*prefix)
        for (char *c = buf + strlen(prefix); *c; c++)
            *c = (char)toupper((unsigned char)*c);
}

/* Whether two fields of one kind hold the same value. */
static int field_same(const hog_meta_field *a, const hog_meta_field *b)
{
    switch (a->kind) {
    case HOG_META_F64:
        return *(const double *)a->at == *(const double *)b->at;
    case HOG_META_U64:
    case HOG_META_HEX64:
        return *(const uint64_t *)a->at == *(const uint64_t *)b->at;
    case HOG_META_UINT:
        return *(const unsigned *)a->at == *(const unsigned *)b->at;
    case HOG_META_INT:
        return *(const int *)a->at == *(const int *)b->at;
    case HOG_META_WORD:
        return strcmp(a->word, b->word) == 0;
    case HOG_META_NOTE:
        break;
    }
    return 1;
}

int hog_meta_differ(const hog_meta_field *a, const hog_meta_field *b, size_t n, const char *prefix,
                    const char *strct, const char *path, char *err, size_t err_len)
{
    const size_t plen = strlen(prefix);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(a[i].key, prefix, plen) != 0 || field_same(&a[i], &b[i]))
            continue;
        const char *name = a[i].key + plen;
        char x[HOG_NUMBER_CHARS + 32], y[HOG_NUMBER_CHARS + 32];
        field_value(&a[i], name, 6, x, sizeof(x));
        field_value(&b[i], name, 6, y, sizeof(y));
        if (strcmp(x, y) == 0) {
            field_value(&a[i], name, 17, x, sizeof(x));
            field_value(&b[i], name, 17, y, sizeof(y));
        }
        return hog_fail(HOG_EPARAM, err, err_len,
                        "%s: the checkpoint was made with %s.%s = %s, this run has %s.%s = %s: resume with the same "
                        "parameters", path, strct, name, x, strct, name, y);
    }
    return 0;
}

int hog_meta_parse_loss(const char *text, void *at)
{
    return hog_loss_parse(text, at);
}

int hog_meta_parse_schedule(const char *text, void *at)
{
    return hog_schedule_parse(text, at);
}

int hog_meta_parse_kernel(const char *text, void *at)
{
    return hog_kernel_parse(text, at);
}

int hog_meta_parse_replicas(const char *text, void *at)
{
    return hog_replicas_parse(text, at);
}

int hog_meta_parse_train_metrics(const char *text, void *at)
{
    return hog_train_metrics_parse(text, at);
}

int hog_meta_parse_class_weight(const char *text, void *at)
{
    return hog_class_weight_parse(text, at);
}

size_t hog_meta_metrics(hog_meta_field *f, const char *const key[6], hog_metrics *m)
{
    f[0] = HOG_META_NUM(key[0], &m->rows);
    f[1] = HOG_META_NUM(key[1], &m->loss);
    f[2] = HOG_META_NUM(key[2], &m->logloss);
    f[3] = HOG_META_NUM(key[3], &m->accuracy);
    f[4] = HOG_META_NUM(key[4], &m->auc);
    f[5] = HOG_META_NUM(key[5], &m->rmse);
    return 6;
}

int hog_ckpt_settings_set(char **ckpt_path, double *ckpt_every, int *resume_out, const char *path,
                          double every_seconds, int resume)
{
    if (!(every_seconds >= 0) || !isfinite(every_seconds) || (resume && !path))
        return HOG_EPARAM;
    char *copy = NULL;
    if (path && !(copy = hog_strdup(path)))
        return -ENOMEM;
    hog_free(*ckpt_path);
    *ckpt_path = copy;
    *ckpt_every = every_seconds;
    *resume_out = path && resume;
    return 0;
}
