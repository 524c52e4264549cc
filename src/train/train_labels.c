/* train_labels.c: class names: a model's, taken from its training data and sorted as scikit-learn sorts them, and the map from a data set's names to a model's classes. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train.h"

/*
 * Labels that are strings (a CSV column of "setosa", "versicolor", ...)
 * reach the trainer as numbers: the data layer numbers each name in the
 * order it first appears in the file, and the data set keeps the names
 * (hog_dataset.names). Training works on the numbers, as on any labels,
 * so the run is the one numeric labels in that order would give. The
 * model then gets the names, and its classes are put in the names' sorted
 * order (strcmp: bytes, as scikit-learn's LabelEncoder sorts ASCII), the
 * label of class k becoming k: softmax's outputs are permuted with them, a
 * binary model whose positive class (the larger label) is not the second
 * name in that order is negated, which is the same model with the two
 * classes swapped. A file converted to .hgd keeps the names and their
 * numbers, so training it gives the same model.
 */

const char *hog_model_class_name(const hog_model *m, uint32_t k)
{
    return m && m->class_names && k < m->info.classes ? m->class_names[k] : NULL;
}

void hog_model_names_free(hog_model *m)
{
    if (!m->class_names)
        return;
    for (uint32_t k = 0; k < m->info.classes; k++)
        hog_free(m->class_names[k]);
    hog_free(m->class_names);
    m->class_names = NULL;
}

int hog_model_names_from(hog_model *m, const hog_idmap *names)
{
    const uint32_t K = m->info.classes;
    char **cn = hog_calloc(K ? K : 1, sizeof(char *));
    if (!cn)
        return -ENOMEM;
    for (uint32_t k = 0; k < K; k++) {
        const double y = m->class_labels[k];
        const char *s = y >= 0 && y < (double)names->n ? hog_idmap_name(names, (uint32_t)y) : NULL;
        if (!s || !(cn[k] = hog_strdup(s))) {
            for (uint32_t i = 0; i < k; i++)
                hog_free(cn[i]);
            hog_free(cn);
            return s ? -ENOMEM : HOG_ELABEL;
        }
    }
    hog_model_names_free(m);
    m->class_names = cn;
    return 0;
}

int hog_model_names_copy(hog_model *dst, const hog_model *src)
{
    if (!src->class_names)
        return 0;
    const uint32_t K = src->info.classes;
    char **cn = hog_calloc(K ? K : 1, sizeof(char *));
    if (!cn)
        return -ENOMEM;
    for (uint32_t k = 0; k < K; k++)
        if (!(cn[k] = hog_strdup(src->class_names[k]))) {
            for (uint32_t i = 0; i < k; i++)
                hog_free(cn[i]);
            hog_free(cn);
            return -ENOMEM;
        }
    hog_model_names_free(dst);
    dst->class_names = cn;
    return 0;
}

/* A class to sort: its name beside its number, so that the comparison
 * needs no context (qsort has none; qsort_r's argument order differs
 * between C libraries). */
typedef struct named_class {
    const char *name;
    uint32_t k;
} named_class;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const named_class *)a)->name, ((const named_class *)b)->name);
}

int hog_model_names_sort(hog_model *m)
{
    const uint32_t K = m->info.classes, O = m->outputs;
    named_class *order = hog_malloc((size_t)K * sizeof(named_class));
    char **cn = hog_malloc((size_t)K * sizeof(char *));
    float *row = hog_malloc((size_t)O * sizeof(float));
    if (!order || !cn || !row) {
        hog_free(order);
        hog_free(cn);
        hog_free(row);
        return -ENOMEM;
    }
    for (uint32_t k = 0; k < K; k++)
        order[k] = (named_class){m->class_names[k], k};
    /* Names are distinct: the order is total, so the result does not
     * depend on qsort's method. */
    qsort(order, K, sizeof(named_class), by_name);
    for (uint32_t k = 0; k < K; k++)
        cn[k] = m->class_names[order[k].k];
    if (O == K && O > 1 && !m->factors) { /* softmax: output k is class k's */
        for (uint64_t j = 0; j <= m->dim; j++) {
            hog_weight *w = j < m->dim ? hog_model_wj(m, j) : m->bias;
            for (uint32_t k = 0; k < O; k++)
                row[k] = hog_w_load(&w[order[k].k]);
            for (uint32_t k = 0; k < O; k++)
                hog_w_store(&w[k], row[k]);
        }
    } else if (K == 2 && order[0].k == 1) { /* binary: the positive class is now the other */
        for (uint64_t j = 0; j < m->dim; j++)
            for (uint32_t k = 0; k < O; k++)
                hog_w_store(&hog_model_wj(m, j)[k], -hog_w_load(&hog_model_wj(m, j)[k]));
        for (uint32_t k = 0; k < O; k++)
            hog_w_store(&m->bias[k], -hog_w_load(&m->bias[k]));
    }
    for (uint32_t k = 0; k < K; k++)
        m->class_labels[k] = (double)k;
    hog_free(m->class_names);
    m->class_names = cn;
    hog_free(order);
    hog_free(row);
    return 0;
}

/* "a, b, c" (shortened) for messages. */
static void names_list(const hog_model *m, char *out, size_t len)
{
    size_t at = 0;
    out[0] = '\0';
    for (uint32_t k = 0; k < m->info.classes && at + 8 < len; k++) {
        int n = snprintf(out + at, len - at, "%s%s", k ? ", " : "", m->class_names[k]);
        if (n < 0 || (size_t)n >= len - at) {
            snprintf(out + (len > 4 ? len - 4 : 0), len > 4 ? 4 : len, "...");
            return;
        }
        at += (size_t)n;
    }
}

int hog_labels_map(const hog_model *m, const hog_idmap *names, float *map, uint32_t from, char *err,
                   size_t err_len)
{
    const uint32_t n = names ? names->n : 0;
    if (hog_loss_is_regression(m->info.loss))
        return n ? hog_fail(HOG_ELABEL, err, err_len, "the labels are class names ('%s', ...): a %s model "
                            "predicts numbers", hog_idmap_name(names, 0), hog_loss_name(m->info.loss)) : 0;
    if (!n && !m->class_names)
        return 0;
    if (!n)
        return hog_fail(HOG_ELABEL, err, err_len, "the labels are numbers, and the model's classes are names "
                        "('%s', ...)", m->class_names[0]);
    if (!m->class_names)
        return hog_fail(HOG_ELABEL, err, err_len, "the labels are class names ('%s', ...), and the model's "
                        "classes are numbers", hog_idmap_name(names, 0));
    hog_idmap classes; /* the model's names, class k's id k */
    memset(&classes, 0, sizeof(classes));
    int rc = 0;
    for (uint32_t k = 0; k < m->info.classes && rc == 0; k++) {
        uint32_t id;
        rc = hog_idmap_intern(&classes, m->class_names[k], strlen(m->class_names[k]), &id);
    }
    for (uint32_t c = from; c < n && rc == 0; c++) {
        const char *s = hog_idmap_name(names, c);
        int64_t k = hog_idmap_find(&classes, s, strlen(s));
        if (k < 0) {
            char list[256];
            names_list(m, list, sizeof(list));
            rc = hog_fail(HOG_ELABEL, err, err_len, "label '%s' is not one of the model's %u classes (%s)", s,
                          m->info.classes, list);
        } else {
            map[c] = (float)m->class_labels[k];
        }
    }
    hog_idmap_free(&classes);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    return rc;
}

int hog_labels_map_new(const hog_model *m, const hog_idmap *names, float **map, char *err, size_t err_len)
{
    *map = NULL;
    if (names->n && !(*map = hog_malloc((size_t)names->n * sizeof(float))))
        return -ENOMEM;
    int rc = hog_labels_map(m, names, *map, 0, err, err_len);
    if (rc < 0) {
        hog_free(*map);
        *map = NULL;
    }
    return rc;
}
