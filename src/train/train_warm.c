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
