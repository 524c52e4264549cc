/* train_layout.c: the model's layout in a run: a large model's feature state packed beside its weight, and unpacked when the run ends. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>

#include "train_run.h"

/* See train_run.h, "The model's layout in a run", for the record and for
 * which runs pack; hog_run_alloc (train_run.c) decides and makes the model
 * so. */

void hog_run_pack_views(run_state *rs)
{
    optim_state *o = &rs->optim;
    if (!o->packed)
        return;
    const pack_layout l = hog_pack_layout(o->flags, rs->outputs);
    hog_weight *w = rs->m->w;
    o->fstride = o->astride = o->lstride = l.stride;
    o->xmax = (o->flags & OPT_NORMALIZED) ? w + l.xmax : NULL;
    o->inv = (o->flags & OPT_NORMALIZED) ? w + l.inv : NULL;
    o->cs = w + l.c;
    o->acc = (o->flags & OPT_ADAGRAD) ? w + l.acc : NULL;
    o->l1s = (o->flags & OPT_L1) ? w + l.l1 : NULL;
}

void hog_run_pack_l2(run_state *rs, uint64_t from, uint64_t to)
{
    if (!rs->optim.packed)
        return;
    const uint64_t S = rs->optim.fstride;
    for (uint64_t j = from; j < to; j++)
        hog_w_store(&rs->optim.cs[j * S], rs->tab.l2_scale[j]);
}

void hog_run_pack_inv(run_state *rs)
{
    if (!rs->optim.packed || !rs->optim.inv)
        return;
    const uint64_t S = rs->optim.fstride;
    for (uint64_t j = 0; j < rs->dim; j++) {
        const float s = hog_w_load(&rs->optim.xmax[j * S]);
        hog_w_store(&rs->optim.inv[j * S], s > 0.0f ? 1.0f / s : 0.0f);
    }
}

int hog_run_unpack(run_state *rs)
{
    optim_state *o = &rs->optim;
    if (!o->packed)
        return 0;
    hog_weight *xmax = NULL;
    if (o->xmax) { /* the scales go with the model (hog_epochs_run) */
        if (!(xmax = hog_huge_alloc((size_t)HOG_MAX(rs->dim, 1u) * sizeof(hog_weight))))
            return -ENOMEM;
        for (uint64_t j = 0; j < rs->dim; j++)
            hog_w_store(&xmax[j], hog_w_load(&o->xmax[j * o->fstride]));
    }
    int rc = hog_model_compact(rs->m);
    if (rc < 0) {
        hog_free((void *)xmax);
        return rc;
    }
    for (unsigned i = 0; i < rs->nth; i++)
        rs->ws[i].w = rs->m->w;
    /* The rest of the records' state is the run's alone, and is gone. */
    *o = (optim_state){.flags = o->flags, .fstride = 1, .astride = rs->outputs, .lstride = 2 * rs->outputs,
                       .bias_acc = o->bias_acc, .xmax = xmax};
    return 0;
}
