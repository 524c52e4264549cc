/* train_model.c: the model object: its making, its accessors, scoring and prediction. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "train.h"

hog_metrics hog_metrics_none(void)
{
    hog_metrics m = {0, NAN, NAN, NAN, NAN, NAN};
    return m;
}

hog_model *hog_model_new(hog_loss loss, uint64_t dim, uint32_t outputs, uint32_t classes)
{
    return hog_model_new_stride(loss, dim, outputs, classes, outputs);
}

hog_model *hog_model_new_stride(hog_loss loss, uint64_t dim, uint32_t outputs, uint32_t classes, uint32_t stride)
{
    hog_model *m = hog_calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->dim = dim;
    m->outputs = outputs;
    m->stride = stride;
    m->info.loss = loss;
    m->info.features = dim;
    m->info.outputs = outputs;
    m->info.classes = classes;
    m->info.train = hog_metrics_none();
    m->info.test = hog_metrics_none();
    m->info.params = hog_train_params_default();
    /* A model keeps what its run's binding came to (hog_run_model_info);
     * one not trained here keeps the 1 that was the default before auto,
     * so its file is what it was. */
    m->info.params.bind = 1;
    /* Weights are cache-line aligned so no two workers' hot lines straddle,
     * and a large model's are on huge pages (hog_huge_alloc). */
    m->w = hog_huge_alloc((size_t)(dim ? dim : 1) * stride * sizeof(hog_weight));
    m->bias = hog_calloc(outputs, sizeof(hog_weight));
    m->class_labels = hog_calloc(classes ? classes : 1, sizeof(double));
    if (!m->w || !m->bias || !m->class_labels) {
        hog_model_free(m);
        return NULL;
    }
    memset((void *)m->w, 0, (size_t)(dim ? dim : 1) * stride * sizeof(hog_weight));
    return m;
}

int hog_model_compact(hog_model *m)
{
    const uint32_t K = m->outputs;
    if (m->stride == K)
        return 0;
    hog_weight *w = hog_huge_alloc((size_t)(m->dim ? m->dim : 1) * K * sizeof(hog_weight));
    if (!w)
        return -ENOMEM;
    hog_model_weights_to(m, w);
    hog_free((void *)m->w);
    m->w = w;
    m->stride = K;
    return 0;
}

uint64_t hog_model_weights_to(const hog_model *m, hog_weight *w)
{
    const uint32_t K = m->outputs;
    uint64_t nonzero = 0;
    for (uint64_t j = 0; j < m->dim; j++) {
        const hog_weight *wj = hog_model_wj(m, j);
        for (uint32_t k = 0; k < K; k++) {
            const float v = hog_w_load(&wj[k]);
            hog_w_store(&w[j * K + k], v);
            nonzero += v != 0.0f;
        }
    }
    return nonzero;
}

uint64_t hog_model_nonzero(const hog_model *m)
{
    uint64_t nz = 0;
    for (uint64_t j = 0; j < m->dim; j++)
        for (uint32_t k = 0; k < m->outputs; k++)
            nz += hog_w_load(&hog_model_wj(m, j)[k]) != 0.0f;
    return nz;
}

void hog_model_free(hog_model *m)
{
    if (!m)
        return;
    hog_free((void *)m->w);
    hog_free((void *)m->bias);
    hog_free(m->class_labels);
    hog_free((void *)m->scales);
    hog_model_names_free(m);
    hog_fnames_free(&m->fnames);
    hog_free(m);
}

int hog_model_fnames_final(hog_model *m, const hog_model *init, const hog_fnames *data)
{
    hog_fnames joined;
    int rc;
    if (!init || !init->fnames.n) {
        rc = hog_fnames_copy(&joined, data);
    } else { /* a warm start: each index's names, the model's and the data's, sorted and joined again */
        hog_fnames set;
        memset(&set, 0, sizeof(set));
        rc = hog_fnames_merge(&set, &init->fnames, 1);
        if (rc == 0)
            rc = hog_fnames_merge(&set, data, 1);
        if (rc == 0)
            rc = hog_fnames_join(&set, m->dim, &joined);
        hog_fnames_free(&set);
    }
    if (rc < 0)
        return rc;
    hog_fnames_free(&m->fnames);
    m->fnames = joined;
    return 0;
}

const char *hog_model_feature_name(const hog_model *m, uint64_t f)
{
    return m && f < m->dim && f <= UINT32_MAX ? hog_fnames_find(&m->fnames, (uint32_t)f) : NULL;
}

uint64_t hog_model_named_features(const hog_model *m)
{
    return m ? m->fnames.n : 0;
}

uint64_t hog_model_named_feature(const hog_model *m, uint64_t k)
{
    return m && k < m->fnames.n ? m->fnames.index[k] : UINT64_MAX;
}

int hog_model_scales_copy(hog_model *dst, const hog_model *src)
{
    if (!src->scales)
        return 0;
    hog_weight *s = hog_calloc(dst->dim ? dst->dim : 1, sizeof(hog_weight));
    if (!s)
        return -ENOMEM;
    memcpy((void *)s, (const void *)src->scales, HOG_MIN(src->dim, dst->dim) * sizeof(hog_weight));
    hog_free((void *)dst->scales);
    dst->scales = s;
    return 0;
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
        const uint32_t lo = hog_search_f64(m->class_labels, m->info.classes, (double)label);
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

/* A factorisation machine's score (Rendle 2010, his O(nnz k) form): the
 * bias, sum_j w_j x_j, and the sum over pairs of features of <v_i, v_j>
 * x_i x_j, which is 1/2 sum_f ((sum_j v_jf x_j)^2 - sum_j (v_jf x_j)^2). */
static float fm_score(const hog_model *m, const hog_row *row)
{
    const uint32_t F = m->factors, n = row->nnz;
    const uint64_t dim = m->dim, S = m->stride;
    const hog_weight *const w = m->w;
    float q[HOG_MAX_FACTORS] = {0};
    float lin = hog_w_load(&m->bias[0]), sq = 0.0f;
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t j = row->index[i];
        if (j < dim)
            lin += hog_fm_add(w + j * S, row->value[i], F, q, &sq);
    }
    return lin + hog_fm_pairs(q, F, sq);
}

/* A field-aware one's: the bias and hog_ffm_pairs times hog_ffm_norm. */
static float ffm_score(const hog_model *m, const hog_row *row, const uint16_t *field)
{
    const uint32_t n = row->nnz;
    hog_weight *stack[256];
    hog_weight **w = n <= HOG_ARRAY_LEN(stack) ? stack : hog_malloc(n * sizeof(*w));
    if (!field || !w)
        return NAN;
    for (uint32_t i = 0; i < n; i++)
        w[i] = row->index[i] < m->dim ? hog_model_wj(m, row->index[i]) : NULL;
    const float s = hog_w_load(&m->bias[0]) + hog_ffm_norm(row->value, n) *
                                                  hog_ffm_pairs(w, row->value, field, n, m->factors, m->fields);
    if (w != stack)
        hog_free(w);
    return s;
}

/* A linear or softmax model's scores of the n non-zeros idx, val: a row's
 * own, or a crossed row's (cross_scores). */
static inline void linear_scores(const hog_model *m, const uint32_t *idx, const float *val, uint32_t n, float *out)
{
    /* In locals: the weights are atomics, so through m the compiler would
     * load m's fields again, and keep out[k] in memory, at every non-zero. */
    const uint32_t K = m->outputs;
    const uint64_t dim = m->dim, S = m->stride;
    const hog_weight *const w = m->w;
    if (K == 1) { /* the same sums in the same order, in a register */
        float s = hog_w_load(&m->bias[0]);
        for (uint32_t i = 0; i < n; i++)
            if (idx[i] < dim)
                s += hog_w_load(&w[idx[i] * S]) * val[i];
        out[0] = s;
        return;
    }
    for (uint32_t k = 0; k < K; k++)
        out[k] = hog_w_load(&m->bias[k]);
    for (uint32_t i = 0; i < n; i++) {
        const uint64_t j = idx[i];
        if (j >= dim)
            continue;
        const hog_weight *wj = w + j * S;
        const float x = val[i];
        for (uint32_t k = 0; k < K; k++)
            out[k] += hog_w_load(&wj[k]) * x;
    }
}

/* A crossed model's scores: the row's non-zeros and its crosses scored as
 * one row of a linear or softmax model, the only kinds that cross (a run
 * refuses crosses with factors, a model file crosses only as version 6). */
static void cross_scores(const hog_model *m, const hog_row *row, const uint16_t *field, float *out)
{
    const uint64_t room = hog_cross_room(row->nnz);
    uint32_t si[512];
    float sv[512];
    uint32_t *idx = si;
    float *val = sv;
    if (room > HOG_ARRAY_LEN(si)) {
        idx = room <= UINT32_MAX ? hog_malloc(room * sizeof(uint32_t)) : NULL;
        val = room <= UINT32_MAX ? hog_malloc(room * sizeof(float)) : NULL;
    }
    if (!idx || !val || (!field && hog_cross_needs_fields(&m->cross))) {
        for (uint32_t k = 0; k < m->outputs; k++)
            out[k] = NAN;
    } else {
        const uint32_t n = hog_cross_row(&m->cross, row, field, idx, val);
        linear_scores(m, idx, val, n, out);
    }
    if (idx != si)
        hog_free(idx);
    if (val != sv)
        hog_free(val);
}

void hog_model_scores(const hog_model *m, const hog_row *row, const uint16_t *field, float *out)
{
    if (m->cross.n) {
        cross_scores(m, row, field, out);
        return;
    }
    if (m->fields) {
        out[0] = ffm_score(m, row, field);
        return;
    }
    if (m->factors) {
        out[0] = fm_score(m, row);
        return;
    }
    linear_scores(m, row->index, row->value, row->nnz, out);
}

void hog_model_kind_copy(hog_model *dst, const hog_model *src)
{
    dst->factors = src->factors;
    dst->fields = src->fields;
    dst->cross = src->cross;
    dst->data_hash_bits = src->data_hash_bits;
    dst->info.params.interactions = dst->cross.n ? dst->cross.spec : NULL;
}

unsigned hog_model_data_hash_bits(const hog_model *m)
{
    return m ? m->data_hash_bits : 0;
}

uint32_t hog_model_fields(const hog_model *m)
{
    return m->fields;
}

int hog_model_fields_fit(const hog_model *m, uint32_t fields, const char *what, char *err, size_t err_len)
{
    if (!fields && m->cross.n && hog_cross_needs_fields(&m->cross))
        return hog_fail(HOG_EPARAM, err, err_len, "%s has no fields: the model crosses the features of fields "
                        "(\"%s\"): read Vowpal Wabbit namespaces or CSV columns with hog_read_params.fields, as "
                        "in training", what, m->cross.spec);
    if (!m->fields || fields)
        return 0;
    return hog_fail(HOG_EPARAM, err, err_len, "%s has no fields: a field-aware factorisation machine pairs features "
                    "by their fields (LIBFFM text, Vowpal Wabbit namespaces or CSV columns read with "
                    "hog_read_params.fields, a CSR matrix with hog_csr.fields, or a .hgd written from them)", what);
}

double hog_model_predict(const hog_model *m, const hog_row *row, uint32_t *cls, float *probs)
{
    return hog_model_predict_fields(m, row, NULL, cls, probs);
}

double hog_model_predict_fields(const hog_model *m, const hog_row *row, const uint16_t *field, uint32_t *cls,
                                float *probs)
{
    if (m->info.loss != HOG_LOSS_SOFTMAX) {
        float s;
        hog_model_scores(m, row, field, &s);
        if (cls)
            *cls = hog_loss_is_regression(m->info.loss) ? 0u : (s > 0);
        if (m->info.loss == HOG_LOSS_LOGISTIC)
            return 1.0 / (1.0 + exp(-(double)s));
        if (m->info.loss == HOG_LOSS_MODIFIED_HUBER) /* Zhang (2004): the loss's own probability estimate */
            return 0.5 * ((double)fmaxf(-1.0f, fminf(1.0f, s)) + 1.0);
        return s;
    }
    float stack[64];
    float *s = m->outputs <= 64 ? stack : hog_malloc(m->outputs * sizeof(float)); /* softmax: outputs scores */
    if (!s)
        return NAN;
    hog_model_scores(m, row, field, s);
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
