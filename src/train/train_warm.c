/* train_warm.c: a run that starts from a model's weights instead of zeros (hog_trainer_set_init): its classes, its size and its first weights. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "train_run.h"

int hog_trainer_set_init(hog_trainer *t, const hog_model *init)
{
    hog_model *copy = NULL;
    if (init) {
        copy = hog_model_new(init->info.loss, init->dim, init->outputs, init->info.classes);
        if (!copy)
            return -ENOMEM;
        copy->info = init->info;
        hog_model_kind_copy(copy, init);
        memcpy((void *)copy->w, (const void *)init->w, (size_t)init->dim * init->outputs * sizeof(hog_weight));
        memcpy((void *)copy->bias, (const void *)init->bias, init->outputs * sizeof(hog_weight));
        memcpy(copy->class_labels, init->class_labels, init->info.classes * sizeof(double));
        if (hog_model_scales_copy(copy, init) < 0 || hog_fnames_copy(&copy->fnames, &init->fnames) < 0) {
            hog_model_free(copy);
            return -ENOMEM;
        }
    }
    hog_model_free(t->init);
    t->init = copy;
    return 0;
}

uint64_t hog_warm_dim(const run_state *rs, uint64_t dim)
{
    return rs->init ? HOG_MAX(dim, rs->init->dim) : dim;
}

int hog_warm_classes(run_state *rs, char *err, size_t err_len)
{
    const hog_model *init = rs->init;
    const hog_train_params *p = rs->p;
    if (rs->link)
        return hog_fail(HOG_EPARAM, err, err_len, "a multi-node run cannot start from an initial model "
                        "(hog_trainer_set_init)");
    if (init->info.loss != p->loss)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.loss = %s, the initial model's is %s",
                        hog_loss_name(p->loss), hog_loss_name(init->info.loss));
    if (init->factors != p->factors || (init->fields > 0) != (p->field_aware > 0))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.factors = %u, field_aware = %u; the initial model "
                        "has %u factors and is %sfield-aware: a run goes on with the model's kind", p->factors,
                        p->field_aware, init->factors, init->fields ? "" : "not ");
    if (hog_loss_is_regression(p->loss))
        return 0;
    /* Both lists ascend: every label of the data must be one of init's. */
    uint32_t k = 0;
    for (uint32_t i = 0; i < rs->classes; i++) {
        while (k < init->info.classes && init->class_labels[k] < rs->classes_of[i])
            k++;
        if (k == init->info.classes || init->class_labels[k] != rs->classes_of[i])
            return hog_fail(HOG_ELABEL, err, err_len, "label %g is not one of the initial model's %u classes",
                            rs->classes_of[i], init->info.classes);
    }
    /* classes_of has room for every class a run may have (hog_scan_training_set). */
    memcpy(rs->classes_of, init->class_labels, init->info.classes * sizeof(double));
    rs->classes = init->info.classes;
    return 0;
}

void hog_warm_weights(run_state *rs)
{
    const hog_model *init = rs->init;
    const size_t bias_bytes = init->outputs * sizeof(hog_weight);
    /* All feature-major with the same outputs: init's rows are the first
     * of the model's (the replicas start as the model does,
     * hog_replicas_load), the rest stay zero. */
    for (uint64_t j = 0; j < init->dim; j++)
        for (uint32_t k = 0; k < init->outputs; k++)
            hog_w_store(&hog_model_wj(rs->m, j)[k], hog_w_load(&hog_model_wj(init, j)[k]));
    memcpy((void *)rs->m->bias, (const void *)init->bias, bias_bytes);
    /* The normalized update's scales go on from the model's: starting them
     * at 0 would take a feature's first value seen as its scale, and a
     * larger one later would shrink by (old / new)^2 the weights the model
     * learned against its real scale. Features new to this run start at 0. */
    const int scaled = rs->optim.xmax && init->scales;
    if (scaled) {
        for (uint64_t j = 0; j < init->dim; j++)
            hog_w_store(&rs->optim.xmax[j * rs->optim.fstride], hog_w_load(&init->scales[j]));
        hog_run_pack_inv(rs);
    }
    hog_log(HOG_LOG_INFO, "starting from the weights of the model given (%llu features%s)",
            (unsigned long long)init->dim,
            scaled ? ", its feature scales" : rs->optim.xmax ? ", no feature scales: they start at 0" : "");
}

int hog_run_fields(run_state *rs, uint32_t fields, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const hog_model *init = rs->init;
    rs->fields = 0;
    if (!p->field_aware)
        return 0;
    if (!fields)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.field_aware: the training data has no fields "
                        "(libsvm text, text read without hog_read_params.fields, arrays without hog_csr.fields): a "
                        "field-aware factorisation machine needs LIBFFM text, Vowpal Wabbit namespaces or CSV "
                        "columns as fields, or a CSR matrix's (one that is not field-aware trains on any data)");
    if (init && fields > init->fields)
        return hog_fail(HOG_EPARAM, err, err_len, "the training data has %u fields, the initial model %u: a warm "
                        "start goes on with the model's fields", fields, init->fields);
    rs->fields = init ? init->fields : fields;
    /* A feature's record holds fields * factors words. */
    if ((uint64_t)rs->fields * p->factors > HOG_MAX_OUTPUTS)
        return hog_fail(HOG_EPARAM, err, err_len, "%u fields x %u factors: a feature would have more than %u "
                        "weights; use fewer factors or fewer fields", rs->fields, p->factors, HOG_MAX_OUTPUTS);
    return 0;
}

int hog_run_cross(run_state *rs, uint64_t features, uint32_t fields, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const hog_model *init = rs->init;
    if (!p->interactions || !*p->interactions) {
        if (init && init->cross.n)
            return hog_fail(HOG_EPARAM, err, err_len, "the initial model crosses features (\"%s\"): a warm start "
                            "goes on with them: set hog_train_params.interactions \"%s\"", init->cross.spec,
                            init->cross.spec);
        return 0;
    }
    if (p->factors)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions: a factorisation machine crosses "
                        "every pair through its factors already; crosses are for a linear or softmax model");
    const uint64_t base = init ? init->cross.base : features;
    int rc = hog_cross_parse(p->interactions, p->cross_bits, base, &rs->cross, err, err_len);
    if (rc < 0)
        return rc;
    if (init && (strcmp(init->cross.spec, rs->cross.spec) != 0 || init->cross.bits != rs->cross.bits))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions \"%s\" into 2^%u features; the "
                        "initial model's are \"%s\" into 2^%u: a warm start goes on with them", rs->cross.spec,
                        rs->cross.bits, init->cross.spec, init->cross.bits);
    if (init && features > base)
        return hog_fail(HOG_EPARAM, err, err_len, "the training data has %llu features, the initial model %llu "
                        "before its crosses: a warm start of a crossed model takes no new features",
                        (unsigned long long)features, (unsigned long long)base);
    if (!fields && hog_cross_needs_fields(&rs->cross))
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.interactions \"%s\" names fields, and the "
                        "training data has none: read Vowpal Wabbit namespaces or CSV columns with "
                        "hog_read_params.fields (or cross every pair: \"::\")", rs->cross.spec);
    if (base + ((uint64_t)1 << rs->cross.bits) > ((uint64_t)1 << 32))
        return hog_fail(HOG_EPARAM, err, err_len, "%llu features and 2^%u crosses pass 2^32 features: use fewer "
                        "hog_train_params.cross_bits", (unsigned long long)base, rs->cross.bits);
    rs->dim = base + ((uint64_t)1 << rs->cross.bits);
    return 0;
}
