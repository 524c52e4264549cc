/* train_link.c: a run on several machines: this rank's share of the blocks, the rendezvous that settles the model's shape, and the arrays the link keeps in step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "train_run.h"

int hog_link_run_check(const hog_train_params *p, char *err, size_t err_len)
{
    if (p->interactions && *p->interactions)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "hog_train_params.interactions: crosses train on one machine (the ranks would each count "
                        "their own crosses' degrees)");
    const char *no = p->early_stop                      ? "hog_train_params.early_stop"
                     : p->average                       ? "hog_train_params.average"
                     : p->replicas != HOG_REPLICAS_MACHINE ? "hog_train_params.replicas other than machine"
                                                          : NULL;
    if (no)
        return hog_fail(HOG_EPARAM, err, err_len, "a multi-node run does not take %s: each rank would keep its own",
                        no);
    return 0;
}

int hog_link_run_share(run_state *rs, const hog_dataset *train)
{
    uint32_t n = train->info.blocks, mine = 0;
    if (!(rs->mine = hog_malloc(HOG_MAX(n, 1))))
        return -ENOMEM;
    for (uint32_t b = 0; b < n; b++)
        mine += rs->mine[b] = (unsigned char)hog_link_owns_block(rs->link, b);
    hog_log(HOG_LOG_INFO, "rank %u of %u: %u of %u blocks are this rank's", hog_link_rank(rs->link),
            hog_link_nodes(rs->link), mine, n);
    if (mine == 0)
        hog_log(HOG_LOG_WARN, "rank %u has no blocks of its own to train: it only keeps the model in step "
                "(more ranks than the data set has blocks)", hog_link_rank(rs->link));
    return 0;
}

int hog_link_run_join(run_state *rs, const hog_dataset *train, uint64_t *rows, char *err, size_t err_len)
{
    hog_link_shape shape = {
        .dim = rs->dim, .params_fp = hog_link_params_fingerprint(rs->p), .data_fp = train->info.fingerprint,
        .factors = rs->p->factors, .fields = rs->fields, .rows = train->info.rows,
        .classes = rs->classes_of, .nclasses = rs->classes,
    };
    int rc = hog_link_join(rs->link, &shape, err, err_len);
    if (rc < 0)
        return rc;
    *rows = shape.rows;
    /* A field-aware machine's record is G K words a feature, and its first
     * factors are drawn by (feature, field, factor): every rank needs the
     * same G before its model is made. With shards, the most fields any
     * rank's file has (a rank's rows leave the others' factors alone). */
    if (shape.fields > rs->fields) {
        if ((uint64_t)shape.fields * rs->p->factors > HOG_MAX_OUTPUTS)
            return hog_fail(HOG_EPARAM, err, err_len, "the ranks' data have %u fields x %u factors: a feature would "
                            "have more than %u weights", shape.fields, rs->p->factors, HOG_MAX_OUTPUTS);
        hog_log(HOG_LOG_INFO, "%u fields, the most any rank's data has (this rank's: %u)", shape.fields, rs->fields);
        rs->fields = shape.fields;
    }
    if (shape.classes != rs->classes_of) { /* the union of every rank's labels */
        if (shape.nclasses > MAX_CLASSES)
            return hog_fail(HOG_ELABEL, err, err_len, "more than %u distinct labels", MAX_CLASSES);
        if (shape.nclasses)
            memcpy(rs->classes_of, shape.classes, shape.nclasses * sizeof(double));
        rs->classes = shape.nclasses;
    }
    if (shape.dim > rs->dim) { /* shards: the most features any rank has */
        uint32_t *deg = hog_realloc(rs->deg, shape.dim * sizeof(uint32_t));
        if (!deg)
            return -ENOMEM;
        memset(deg + rs->dim, 0, (shape.dim - rs->dim) * sizeof(uint32_t));
        rs->deg = deg;
        rs->dim = shape.dim;
    }
    return 0;
}

/* Steps per round from which a feature's changes are averaged across ranks.
 * On RCV1-shaped data with four ranks sharing two cores (bench/run nodes):
 * 1 never diverged but slowed every frequent feature (the one-node loss not
 * reached in 20 epochs); 8 reached it in 7 epochs, then diverged in later
 * epochs in all three repetitions (final logloss 0.66 to 369). Stability
 * first. */
#define LINK_HOT_STEPS 1u

int hog_link_run_start(run_state *rs, char *err, size_t err_len)
{
    static const unsigned char all_hot = 1;
    hog_model *m = rs->m;
    const optim_state *o = &rs->optim;
    uint64_t nw = rs->dim * rs->outputs;
    /* The spans see each array feature-major, rs->outputs words a feature
     * (a factorisation machine's weight and factors, a field-aware one's
     * factors for each field): a run on several machines never packs its
     * model with the optimiser's state between the rows (hog_may_pack). */
    assert(!o->packed && m->stride == rs->outputs);
    if (!(rs->link_hot = hog_malloc(rs->dim)))
        return -ENOMEM;
    /* Hot across ranks: a feature this rank's workers are expected to step
     * LINK_HOT_STEPS times or more in one round (the HOG_LINK_AHEAD
     * segments a worker may train without hearing from the others,
     * hog_link_wait_pass): several ranks' sums of that many steps
     * overshoot. */
    uint64_t round_rows = (uint64_t)HOG_LINK_AHEAD * SEGMENT_ROWS * rs->nth;
    uint32_t nhot = 0;
    for (uint64_t j = 0; j < rs->dim; j++)
        nhot += rs->link_hot[j] =
            rs->deg[j] > 0 && (uint64_t)rs->deg[j] * round_rows >= (uint64_t)LINK_HOT_STEPS * rs->deg_rows;
    hog_log(HOG_LOG_DEBUG, "%u hot features: their changes from several ranks are averaged", nhot);
    /* A hot feature's row is hot whole: a factorisation machine's factors
     * too. A field-aware machine's hot factors are summed across one
     * machine's workers (train_rows.c), but across ranks averaged as any
     * hot element: on 200,000 gen_click rows (k 4, 4 epochs, one thread a
     * rank) four ranks reached test logloss 0.497 and 0.499 averaged,
     * 0.508 and 0.512 summed (one node 0.480); two ranks, within the runs'
     * spread either way. */
    hog_link_span spans[6];
    unsigned n = 0;
    spans[n++] = (hog_link_span){m->w, nw, 0, rs->link_hot, rs->outputs};
    spans[n++] = (hog_link_span){m->bias, rs->outputs, 0, &all_hot, rs->outputs};
    if (o->acc) {
        spans[n++] = (hog_link_span){o->acc, nw, 0, NULL, 1};
        spans[n++] = (hog_link_span){o->bias_acc, rs->outputs, 0, NULL, 1};
    }
    if (o->l1s)
        spans[n++] = (hog_link_span){o->l1s, 2 * nw, 0, NULL, 1};
    if (o->xmax)
        spans[n++] = (hog_link_span){o->xmax, rs->dim, 1, NULL, 1};
    /* A PART (the gather) and a SUM (averaging) carry the whole model in
     * one frame: refused now rather than after the last epoch. */
    uint64_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += spans[i].count;
    if (total > HOG_FRAME_MAX_VALUES)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "a multi-node run keeps at most 2^32 values in step, and this model has %llu (weights, "
                        "biases and the optimiser's state): fewer features (hog_read_params.hash_bits) or outputs",
                        (unsigned long long)total);
    int rc = hog_link_spans(rs->link, spans, n);
    return rc < 0 ? rc : hog_link_start(rs->link);
}
