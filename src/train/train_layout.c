/* train_layout.c: the model's layout in a run: a large model's feature state packed beside its weight, and unpacked when the run ends. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>

#include "train_run.h"

/* See train_run.h, "The model's layout in a run", for the record and for
 * which runs pack; hog_run_alloc (train_run.c) decides and makes the model
 * so. */

void hog_run_pack_views(run_state *rs)
{
    if (!rs->optim.packed)
        return;
    hog_weight *w = rs->m->w;
    rs->optim.xmax = w + 1;
    rs->optim.inv = w + 2;
    rs->optim.l2c = w + 3;
}

void hog_run_pack_l2(run_state *rs, uint64_t from, uint64_t to)
{
    if (!rs->optim.packed)
        return;
    /* The float the unpacked loop computes, l2 * c_j, so the same bits. */
    const float l2 = (float)rs->p->l2;
    for (uint64_t j = from; j < to; j++)
        hog_w_store(&rs->optim.l2c[j * PACK_STRIDE], l2 * rs->tab.l2_scale[j]);
}

void hog_run_pack_inv(run_state *rs)
{
    if (!rs->optim.packed)
        return;
    for (uint64_t j = 0; j < rs->dim; j++) {
        const float s = hog_w_load(&rs->optim.xmax[j * PACK_STRIDE]);
        hog_w_store(&rs->optim.inv[j * PACK_STRIDE], s > 0.0f ? 1.0f / s : 0.0f);
    }
}

int hog_run_unpack(run_state *rs)
{
    if (!rs->optim.packed)
        return 0;
    hog_weight *xmax = hog_huge_alloc((size_t)HOG_MAX(rs->dim, 1u) * sizeof(hog_weight));
    if (!xmax)
        return -ENOMEM;
    for (uint64_t j = 0; j < rs->dim; j++)
        hog_w_store(&xmax[j], hog_w_load(&rs->optim.xmax[j * PACK_STRIDE]));
    int rc = hog_model_compact(rs->m);
    if (rc < 0) {
        hog_free((void *)xmax);
        return rc;
    }
    for (unsigned i = 0; i < rs->nth; i++)
        rs->ws[i].w = rs->m->w;
    rs->optim = (optim_state){.flags = rs->optim.flags, .fstride = 1, .xmax = xmax};
    return 0;
}
