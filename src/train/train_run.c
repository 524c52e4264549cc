/* train_run.c: the trainer's public lifecycle and a run's set-up: labels, fields and crosses, kernel, model, workers' buffers and segments, then hog_trainer_run. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "train_run.h"

int hog_trainer_create(const hog_train_params *p, hog_trainer **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    const char *field;
    if (hog_train_params_check(p, &field) < 0)
        return hog_fail(HOG_EPARAM, err, err_len, "invalid training parameter: hog_train_params.%s", field);
    const char *fm = !p->factors                            ? NULL
                     : p->loss == HOG_LOSS_SOFTMAX           ? "scores one output: a binary or regression loss, not softmax"
                     : p->normalized                         ? "takes the plain or the AdaGrad update: set "
                                                               "hog_train_params.normalized 0 (AdaGrad: hog_train_params.schedule adagrad)"
                     : p->kernel == HOG_KERNEL_DENSE         ? "runs on the sparse kernel"
                                                             : NULL;
    if (fm)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_train_params.factors %u: a factorisation machine %s", p->factors,
                        fm);
    hog_cross cross; /* the rules' syntax, before anything is read */
    if (p->interactions && *p->interactions && hog_cross_parse(p->interactions, p->cross_bits, 0, &cross, err,
                                                               err_len) < 0)
        return HOG_EPARAM;
    hog_trainer *t = hog_calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->p = *p;
    t->now = hog_now;
    atomic_init(&t->interrupted, 0);
    atomic_init(&t->training, 0);
    atomic_init(&t->snap_asked, 0);
    /* Without one (no eventfd here), an interrupt ends a run in one pass
     * at its next window, which a quiet pipe may hold back. */
    t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int rc = hog_pool_create(p->threads, p->bind, &t->pool, err, err_len);
    if (rc < 0) {
        if (t->stop_fd >= 0)
            close(t->stop_fd);
        hog_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void hog_trainer_free(hog_trainer *t)
{
    if (!t)
        return;
    hog_pool_free(t->pool);
    if (t->stop_fd >= 0)
        close(t->stop_fd);
    hog_free(t->ckpt_path);
    hog_model_free(t->init);
    hog_free(t);
}

unsigned hog_trainer_threads(const hog_trainer *t)
{
    return hog_pool_threads(t->pool);
}

int hog_trainer_set_link(hog_trainer *t, hog_link *l)
{
    t->link = l;
    return 0;
}

/* ===================================================================== *
 *  A run's state
 * ===================================================================== */
void hog_run_init(run_state *rs, hog_trainer *t)
{
    memset(rs, 0, sizeof(*rs));
    rs->p = &t->p;
    rs->nth = hog_pool_threads(t->pool);
    hog_overlap_init(&rs->clock, hog_now);
    rs->pool = t->pool;
    rs->link = t->link;
    rs->init = t->init;
    rs->data_hash_bits = t->data_hash_bits ? t->data_hash_bits : t->init ? t->init->data_hash_bits : 0;
    rs->limit = hog_mem_limit(&t->p);
    rs->st.epochs = t->p.epochs;
    rs->st.test = hog_metrics_none();
    rs->best.loss = INFINITY;
    rs->first_loss = NAN;
    rs->best.test = hog_metrics_none();
    rs->ck.timer = (hog_ckpt_timer){t->ckpt_path, t->ckpt_every, t->now, &t->interrupted, t->now()};
    const double now = hog_now();
    rs->snap = (snap_state){t->snap_write, t->snap_ctx, t->snap_rows, t->snap_every, &t->snap_asked, 0, now, now};
}

void hog_run_free(run_state *rs)
{
    if (rs->ws)
        for (unsigned i = 0; i < rs->nth; i++) {
            worker_state *ws = &rs->ws[i];
            void *local[] = {ws->scratch, ws->perm, (void *)ws->hot, ws->hot0, (void *)ws->hotacc, ws->hotacc0,
                             (void *)ws->own, ws->own0};
            for (unsigned k = 0; k < HOG_ARRAY_LEN(local); k++)
                hog_pool_free_local(rs->pool, local[k]);
            hog_dense_free(ws->dense);
            hog_free(ws->shrink);
            hog_free(ws->norm_u);
            hog_free(ws->norm_w);
            hog_free(ws->ffm_w);
            hog_free(ws->ffm_l2);
            hog_free(ws->cross_idx);
            hog_free(ws->cross_val);
            hog_free(ws->xptr);
            hog_free(ws->xidx);
            hog_free(ws->xval);
            hog_eval_sums_free(&ws->prog);
        }
    hog_free(rs->ws);
    hog_block_source_close(rs->src);
    hog_free(rs->seg.order);
    hog_free(rs->seg.base);
    hog_free(rs->seg.first);
    hog_free(rs->seg.blocks);
    hog_free((void *)rs->seg.left);
    hog_free(rs->deg);
    hog_free(rs->tab.l2_scale);
    hog_free(rs->tab.map);
    hog_free(rs->tab.hot_ids);
    hog_renum_free(&rs->renum);
    hog_free(rs->classes_of);
    hog_free(rs->class_w);
    hog_free(rs->mine);
    hog_free(rs->link_hot);
    hog_free((void *)rs->optim.bias_acc);
    if (!rs->optim.packed) { /* packed: in the model's records */
        hog_free((void *)rs->optim.acc);
        hog_free((void *)rs->optim.xmax);
        hog_free((void *)rs->optim.l1s);
    }
    hog_free(rs->avg.sum);
    if (rs->avg.lock_made)
        pthread_mutex_destroy(&rs->avg.lock);
    hog_overlap_destroy(&rs->clock);
    hog_model_free(rs->avg.m);
    hog_free(rs->best.weights);
    hog_replicas_background_stop(&rs->rep);
    if (rs->pool)
        hog_replicas_free(&rs->rep, rs->pool);
    hog_model_free(rs->m);
    memset(rs, 0, sizeof(*rs));
}

/* ===================================================================== *
 *  Setting a run up
 * ===================================================================== */
int hog_run_outputs(run_state *rs, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    uint32_t classes = rs->classes;
    /* A factorisation machine: a feature's weight and its factors (a
     * field-aware one: its factors for each field, no weight), one score. */
    rs->outputs = rs->fields ? p->factors * rs->fields : p->factors ? 1 + p->factors : 1;
    if (hog_loss_is_regression(p->loss))
        return 0;
    if (p->loss != HOG_LOSS_SOFTMAX && classes != 2)
        return hog_fail(HOG_ELABEL, err, err_len, "%s loss needs exactly two label values, the training set has %u%s",
                        hog_loss_name(p->loss), classes, classes > 2 ? " (use hog_train_params.loss softmax for multiclass)" : "");
    if (p->loss == HOG_LOSS_SOFTMAX && classes < 2)
        return hog_fail(HOG_ELABEL, err, err_len, "softmax needs at least two classes, the training set has %u",
                        classes);
    if (p->loss == HOG_LOSS_SOFTMAX)
        rs->outputs = classes;
    return 0;
}

void hog_run_init_factors(run_state *rs, uint64_t from, uint64_t to)
{
    const hog_train_params *p = rs->p;
    const uint32_t F = p->factors, G = HOG_MAX(rs->fields, 1u), at = rs->fields ? 0 : 1; /* after w_j */
    if (!F)
        return;
    /* Uniform in [-a, a], each factor's draw a hash of (seed, feature,
     * factor): the same model start whatever the threads or the order the
     * features are met in (a streamed epoch grows them as they come). */
    const float a = p->factor_init > 0 ? p->factor_init : 0.5f / sqrtf((float)F);
    const uint64_t seed = hog_mix64(p->seed ^ 0xfac7025ull);
    for (uint64_t j = from; j < to; j++) {
        hog_weight *wj = hog_model_wj(rs->m, j);
        for (uint64_t g = 0; g < G; g++)
            for (uint32_t f = 0; f < F; f++) {
                const uint64_t h = hog_mix64(seed ^ hog_mix64((j * G + g) * HOG_MAX_FACTORS + f));
                const float u = (float)(h >> 40) * (1.0f / 16777216.0f); /* [0, 1), 24 bits */
                hog_w_store(&wj[at + g * F + f], a * (2.0f * u - 1.0f));
            }
    }
}

/* The setting that runs on the sparse kernel only, with its value, or NULL:
 * the dense kernel steps plain mini-batch SGD. */
static const char *sparse_only(const hog_train_params *p)
{
    return p->factors                         ? "hog_train_params.factors"
           : p->interactions && *p->interactions ? "hog_train_params.interactions"
           : p->schedule == HOG_SCHEDULE_ADAGRAD ? "hog_train_params.schedule adagrad"
           : p->normalized                    ? "hog_train_params.normalized"
           : p->l1 > 0                        ? "hog_train_params.l1"
           : p->loss == HOG_LOSS_QUANTILE     ? "hog_train_params.loss quantile"
           : p->replicas == HOG_REPLICAS_NODE ? "hog_train_params.replicas node"
           : p->replicas == HOG_REPLICAS_CORE ? "hog_train_params.replicas core"
                                              : NULL;
}

int hog_run_kernel(run_state *rs, uint64_t rows, uint64_t features, uint64_t nnz, const char **forced, char *err,
                   size_t err_len)
{
    const hog_train_params *p = rs->p;
    hog_kernel kernel = hog_kernel_pick(p->kernel, rows, features, nnz, rs->outputs);
    const char *sparse = sparse_only(p);
    *forced = NULL;
    if (kernel == HOG_KERNEL_DENSE && sparse) {
        if (p->kernel == HOG_KERNEL_DENSE)
            return hog_fail(HOG_EPARAM, err, err_len,
                            "hog_train_params.kernel dense does not support %s; use hog_train_params.kernel sparse",
                            sparse);
        *forced = sparse;
        kernel = HOG_KERNEL_SPARSE;
    }
    rs->kernel = kernel;
    return 0;
}

/* The log says "kernel", the word of hog_train_params.kernel. */
void hog_run_log_kernel(const run_state *rs, const char *forced, uint64_t rows, uint64_t features, uint64_t nnz)
{
    const hog_train_params *p = rs->p;
    if (forced)
        hog_log(HOG_LOG_INFO, "sparse kernel: %s runs on the sparse kernel only", forced);
    hog_log(HOG_LOG_INFO, "%s kernel%s: density %.3g, %llu features, %u outputs%s", hog_kernel_name(rs->kernel),
            p->kernel == HOG_KERNEL_AUTO ? " (auto)" : "",
            (double)nnz / ((double)rows * (double)HOG_MAX(features, 1)), (unsigned long long)features, rs->outputs,
            rs->kernel == HOG_KERNEL_DENSE ? ", OpenBLAS mini-batches" : "");
}

/* Private copies per worker: none on the dense kernel (each batch's update
 * is already one write per weight), none for replicas of one worker each. */
static unsigned copy_workers(const run_state *rs)
{
    return rs->kernel == HOG_KERNEL_DENSE || rs->p->replicas == HOG_REPLICAS_CORE ? 1 : rs->nth;
}

int hog_run_tables(run_state *rs)
{
    feature_tables *tab = &rs->tab;
    hog_free(tab->l2_scale);
    hog_free(tab->map);
    hog_free(tab->hot_ids);
    memset(tab, 0, sizeof(*tab));
    if (!(tab->l2_scale = hog_huge_alloc(rs->dim * sizeof(float))))
        return -ENOMEM;
    hog_scan_l2_scales(rs->deg, rs->deg_rows, rs->dim, tab->l2_scale);
    hog_run_pack_l2(rs, 0, rs->dim);
    int rc = hog_hot_choose(rs->deg, rs->deg_rows, rs->dim, rs->outputs, copy_workers(rs),
                            rs->p->factors && rs->p->field_aware, &tab->map, &tab->map_bits, &tab->hot_ids,
                            &tab->nlocal, &tab->nhot, &tab->first);
    if (rc < 0)
        return rc;
    hog_hot_tiers(tab, rs->deg, rs->deg_rows, rs->p->factors && rs->p->field_aware);
    if (rs->kernel != HOG_KERNEL_SPARSE)
        return 0;
    /* Whole copies for a small model (train_hot.c), made where the worker runs. */
    uint64_t nnz = 0, weights = rs->dim * rs->outputs;
    for (uint64_t j = 0; j < rs->dim; j++)
        nnz += rs->deg[j];
    tab->whole_every = hog_whole_every(rs->p, rs->optim.flags, rs->outputs, weights, rs->deg_rows, nnz, rs->nth);
    for (unsigned i = 0; tab->whole_every && i < rs->nth; i++) {
        worker_state *ws = &rs->ws[i];
        if (ws->own_n == weights)
            continue;
        hog_pool_free_local(rs->pool, (void *)ws->own);
        hog_pool_free_local(rs->pool, ws->own0);
        ws->own_n = 0;
        ws->own = hog_pool_alloc_local(rs->pool, i, weights * sizeof(hog_weight));
        ws->own0 = hog_pool_alloc_local(rs->pool, i, weights * sizeof(float));
        if (!ws->own || !ws->own0)
            return -ENOMEM;
        ws->own_n = weights;
    }
    return 0;
}

/* Whether the run packs its model (train_run.h, "The model's layout"):
 * one that may, on the sparse kernel, too large for whole copies (which a
 * packed model never takes: hog_whole_every). */
static int run_packs(const run_state *rs)
{
    return hog_may_pack(rs->p, rs->outputs, rs->link != NULL) && rs->kernel == HOG_KERNEL_SPARSE &&
           rs->dim * rs->outputs > WHOLE_WEIGHTS;
}

int hog_run_alloc(run_state *rs, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const uint64_t dim = rs->dim;
    const uint32_t outputs = rs->outputs;
    const unsigned flags = hog_opt_flags(p);
    rs->optim = (optim_state){.flags = flags, .packed = run_packs(rs), .fstride = 1, .astride = outputs,
                              .lstride = 2 * outputs};
    rs->m = hog_model_new_stride(p->loss, dim, outputs, rs->classes,
                                 rs->optim.packed ? hog_pack_layout(flags, outputs).stride : outputs);
    rs->ws = hog_aligned_alloc(HOG_CACHELINE, rs->nth * sizeof(worker_state));
    if (rs->ws) /* before any return: hog_run_free reads every worker's state */
        memset(rs->ws, 0, rs->nth * sizeof(worker_state));
    if (!rs->m || !rs->ws)
        return -ENOMEM;
    if (rs->classes)
        memcpy(rs->m->class_labels, rs->classes_of, rs->classes * sizeof(double));
    if (p->factors) { /* one score: a weight and its factors a feature */
        rs->m->factors = p->factors;
        rs->m->fields = rs->fields;
        rs->m->info.outputs = 1;
        hog_run_init_factors(rs, 0, dim);
    }
    /* Several machines: rank 0 measures the gathered model on its data,
     * which no rank's last epoch saw whole. */
    rs->prog_on = p->train_metrics == HOG_TRAIN_METRICS_PROGRESSIVE && !rs->link;
    if (rs->kernel == HOG_KERNEL_DENSE) {
        /* The buffers are touched as they are made: a model too large for
         * them would meet the OOM killer, not -ENOMEM, so it is refused
         * here (auto never picks one; a forced dense kernel on a huge
         * model can). */
        uint64_t need = (uint64_t)rs->nth * hog_dense_bytes(dim, outputs, p->batch);
        if (need > rs->limit)
            return hog_fail(HOG_EPARAM, err, err_len,
                            "the dense kernel needs %llu bytes of buffers for %llu features x %u outputs, more than "
                            "the memory limit (%llu): use the sparse kernel", (unsigned long long)need,
                            (unsigned long long)dim, outputs, (unsigned long long)rs->limit);
        hog_dense **dense = hog_calloc(rs->nth, sizeof(hog_dense *));
        int rc = dense ? hog_dense_create_all(rs->pool, dim, outputs, p->batch, dense) : -ENOMEM;
        atomic_init(&rs->dense_published, 0);
        for (unsigned i = 0; dense && i < rs->nth; i++) {
            rs->ws[i].dense = dense[i];
            if (dense[i])
                hog_dense_share(dense[i], &rs->dense_published, rs->nth);
        }
        hog_free(dense);
        if (rc < 0)
            return rc;
    }
    if (rs->cross.n) {
        const uint32_t longest = rs->longest;
        rs->longest = 0;
        int rc = hog_run_cross_room(rs, longest, err, err_len);
        if (rc < 0)
            return rc;
    }
    /* Room for as many private copies as hog_hot_choose can choose, so the
     * tables can be rebuilt between epochs. */
    size_t nhot = (size_t)(copy_workers(rs) > 1 ? hog_hot_max(outputs, p->factors && p->field_aware) : 0) * outputs + 1;
    for (unsigned i = 0; i < rs->nth; i++) {
        worker_state *ws = &rs->ws[i];
        /* In the memory of the worker's NUMA node (zeroed, cache-line aligned). */
        ws->scratch = hog_pool_alloc_local(rs->pool, i, 7 * outputs * sizeof(float));
        ws->perm = hog_pool_alloc_local(rs->pool, i, SEGMENT_ROWS * sizeof(uint32_t));
        ws->hot = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(hog_weight));
        ws->hot0 = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(float));
        if (!ws->scratch || !ws->perm || !ws->hot || !ws->hot0)
            return -ENOMEM;
        if (rs->cross.n && !(ws->xptr = hog_malloc((SEGMENT_ROWS + 1) * sizeof(uint32_t))))
            return -ENOMEM;
        if (rs->prog_on && hog_eval_sums_init(&ws->prog, rs->m) < 0)
            return -ENOMEM;
        if (p->schedule == HOG_SCHEDULE_ADAGRAD) {
            ws->hotacc = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(hog_weight));
            ws->hotacc0 = hog_pool_alloc_local(rs->pool, i, nhot * sizeof(float));
            if (!ws->hotacc || !ws->hotacc0)
                return -ENOMEM;
        }
    }
    int rc = hog_replicas_make(&rs->rep, rs->kernel == HOG_KERNEL_SPARSE ? p->replicas : HOG_REPLICAS_MACHINE,
                               rs->pool, rs->m, &rs->optim, rs->ws, rs->nth);
    if (rc < 0)
        return rc;
    if (rs->rep.n)
        hog_log(HOG_LOG_INFO, "%s replicas: %u, averaged into the model after every epoch%s",
                hog_replicas_name(p->replicas), rs->rep.n,
                p->replicas == HOG_REPLICAS_NODE && rs->rep.n > 1 ? " and by a background thread meanwhile" : "");
    if ((flags & OPT_ADAGRAD) && !(rs->optim.bias_acc = hog_calloc(outputs, sizeof(hog_weight))))
        return -ENOMEM;
    if (rs->optim.packed) {
        hog_run_pack_views(rs);
    } else {
        if ((flags & OPT_ADAGRAD) && !(rs->optim.acc = hog_huge_calloc(dim * outputs, sizeof(hog_weight))))
            return -ENOMEM;
        if ((flags & OPT_L1) && !(rs->optim.l1s = hog_huge_calloc(2 * dim * outputs, sizeof(hog_weight))))
            return -ENOMEM;
        if ((flags & OPT_NORMALIZED) && !(rs->optim.xmax = hog_huge_calloc(dim, sizeof(hog_weight))))
            return -ENOMEM;
    }
    if (dim * outputs * sizeof(hog_weight) >= ((size_t)2 << 20)) {
        char huge[160];
        hog_huge_describe(huge, sizeof(huge));
        char packed[64] = "";
        if (rs->optim.packed)
            snprintf(packed, sizeof(packed), ", each with its feature's state in %u bytes",
                     hog_pack_layout(flags, outputs).stride * (unsigned)sizeof(hog_weight));
        hog_log(HOG_LOG_INFO, "model of %llu weights%s: %s", (unsigned long long)(dim * outputs), packed, huge);
    }
    return 0;
}

int hog_run_alloc_final(run_state *rs)
{
    const hog_train_params *p = rs->p;
    size_t nweights = (size_t)rs->dim * rs->outputs + rs->outputs;
    if (p->average) {
        rs->avg.sum = hog_calloc(nweights, sizeof(double));
        rs->avg.m = hog_model_new(p->loss, rs->dim, rs->outputs, rs->classes);
        if (!rs->avg.sum || !rs->avg.m || hog_model_names_copy(rs->avg.m, rs->m) < 0)
            return -ENOMEM;
        rs->avg.from_epoch = p->epochs - p->average;
        pthread_mutex_init(&rs->avg.lock, NULL);
        rs->avg.lock_made = 1;
    }
    if (p->early_stop && !(rs->best.weights = hog_malloc(nweights * sizeof(float))))
        return -ENOMEM;
    if (rs->tab.whole_every)
        hog_log(HOG_LOG_DEBUG, "each worker trains a copy of the whole model, merged every %u segments, %u hot "
                "features shared out", rs->tab.whole_every, rs->tab.nhot);
    else if (rs->tab.nlocal)
        hog_log(HOG_LOG_DEBUG, "%u features kept per worker, %u of them hot%s; %u merged every segment, the others "
                "every %u", rs->tab.nlocal, rs->tab.nhot, rs->tab.first ? ", the first features" : "", rs->tab.nfast,
                rs->tab.warm_every);
    return 0;
}

int hog_run_segments(run_state *rs, const hog_dataset *train, char *err, size_t err_len)
{
    uint32_t nblocks = train->info.blocks, spb = segments_per_block(train->info.rows_per_block);
    /* A claim's counter keeps its top bit for pausing (epoch_job.next). */
    if ((uint64_t)nblocks * spb >= MAX_SEGMENTS)
        return hog_fail(HOG_EPARAM, err, err_len, "the training set has %u blocks of %u rows: 2^31 segments of %u "
                        "rows or more", nblocks, train->info.rows_per_block, SEGMENT_ROWS);
    rs->seg.order = hog_malloc((size_t)nblocks * spb * sizeof(uint32_t));
    rs->seg.base = hog_malloc((size_t)nblocks * spb * sizeof(uint32_t));
    rs->seg.first = hog_malloc(((size_t)nblocks + 1) * sizeof(uint32_t));
    rs->seg.blocks = hog_malloc(((size_t)nblocks + 1) * sizeof(uint32_t));
    rs->seg.left = hog_malloc(((size_t)nblocks + 1) * sizeof(atomic_uint));
    if (!rs->seg.order || !rs->seg.base || !rs->seg.first || !rs->seg.blocks || !rs->seg.left)
        return -ENOMEM;
    uint32_t nsegments = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        rs->seg.first[b] = nsegments;
        for (uint32_t s = 0; s * SEGMENT_ROWS < train->blocks[b].rows; s++)
            rs->seg.base[nsegments++] = b * spb + s;
    }
    rs->seg.first[nblocks] = nsegments;
    rs->seg.nblocks = nblocks;
    rs->seg.nsegments = nsegments;
    rs->seg.per_block = spb;
    hog_run_model_info(rs, train);
    return 0;
}

void hog_run_model_info(run_state *rs, const hog_dataset *train)
{
    hog_model *m = rs->m;
    m->info.params = *rs->p;
    m->info.params.threads = rs->nth;
    m->info.params.bind = hog_pool_bind_for(rs->nth, rs->p->bind); /* what auto came to */
    m->info.params.kernel = rs->kernel;
    m->info.params.progress = NULL;
    m->info.params.progress_ctx = NULL;
    m->cross = rs->cross;
    m->info.params.interactions = m->cross.n ? m->cross.spec : NULL; /* the model's own copy */
    m->info.params.cross_bits = m->cross.n ? m->cross.bits : 0;
    m->info.data_fingerprint = train->info.fingerprint;
    m->info.data_skipped = train->info.skipped;
    m->info.data_index_base = train->info.index_base;
    m->data_hash_bits = train->hash_bits ? train->hash_bits : rs->data_hash_bits;
    rs->ck.data = train->info;
    if (rs->avg.m) {
        rs->avg.m->info = m->info;
        hog_model_kind_copy(rs->avg.m, m);
        memcpy(rs->avg.m->class_labels, m->class_labels, (rs->classes ? rs->classes : 1) * sizeof(double));
    }
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

int hog_run_cross_room(run_state *rs, uint32_t longest, char *err, size_t err_len)
{
    if (longest <= rs->longest && rs->ws[0].cross_idx)
        return 0;
    const uint64_t room = hog_cross_room(HOG_MAX(longest, 1u));
    if (room > UINT32_MAX)
        return hog_fail(HOG_EPARAM, err, err_len, "a row of %u non-zeros has %llu crosses: too many to form", longest,
                        (unsigned long long)room);
    for (unsigned i = 0; i < rs->nth; i++) {
        worker_state *ws = &rs->ws[i];
        uint32_t *idx = hog_realloc(ws->cross_idx, room * sizeof(uint32_t));
        if (idx)
            ws->cross_idx = idx;
        float *val = idx ? hog_realloc(ws->cross_val, room * sizeof(float)) : NULL;
        if (val)
            ws->cross_val = val;
        if (!idx || !val)
            return -ENOMEM;
    }
    rs->longest = HOG_MAX(longest, 1u);
    return 0;
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

/* ===================================================================== *
 *  Class weights
 * ===================================================================== */
/* HOG_CLASS_WEIGHT_BALANCED: each class's training rows (the held-out
 * ones not counted) weigh n / (K n_c). The counts of a .hgd's summary,
 * else one pass over the labels, of the blocks the scan has read (and so
 * checked) just before. */
static int run_class_weights(run_state *rs, const hog_dataset *ds)
{
    const hog_train_params *p = rs->p;
    const uint32_t K = rs->classes;
    if (p->class_weight != HOG_CLASS_WEIGHT_BALANCED || K < 2)
        return 0;
    uint64_t *count = hog_calloc(K, sizeof(uint64_t));
    rs->class_w = hog_malloc(K * sizeof(float));
    if (!count || !rs->class_w) {
        hog_free(count);
        return -ENOMEM;
    }
    const double mid = 0.5 * (rs->classes_of[0] + rs->classes_of[K - 1]);
    uint64_t n = 0;
    const hog_hgd_summary *sum = hog_scan_summary(ds, p, rs->mine);
    if (sum && sum->labels != K) /* a warm start's model brought classes of its own */
        sum = NULL;
    for (uint32_t c = 0; sum && c < K; c++) { /* the summary's labels are the classes */
        count[c] = sum->count[c];
        n += sum->count[c];
    }
    for (uint32_t b = 0; !sum && b < ds->info.blocks; b++) {
        const hog_block *blk = &ds->blocks[b];
        if (rs->mine && !rs->mine[b])
            continue;
        for (uint32_t r = 0; r < blk->rows; r++) {
            uint64_t i = (uint64_t)b * ds->info.rows_per_block + r;
            if (p->holdout > 0 && hog_row_in_fold(i, p->holdout, p->fold, p->seed))
                continue;
            uint32_t c = 0;
            if (K == 2 && p->loss != HOG_LOSS_SOFTMAX) {
                c = (double)blk->label[r] > mid;
            } else { /* the labels are ascending; every row's is one of them */
                c = hog_search_f64(rs->classes_of, K - 1, (double)blk->label[r]);
            }
            count[c]++;
            n++;
        }
    }
    char line[512] = "";
    for (uint32_t c = 0; c < K; c++) {
        rs->class_w[c] = count[c] ? (float)((double)n / ((double)K * (double)count[c])) : 1.0f;
        if (strlen(line) < 400)
            snprintf(line + strlen(line), sizeof(line) - strlen(line), "%s%g: %.3g", c ? ", " : "",
                     rs->classes_of[c], (double)rs->class_w[c]);
    }
    hog_free(count);
    hog_log(HOG_LOG_INFO, "class weights (balanced): %s", line);
    return 0;
}

/* ===================================================================== *
 *  Training on a data set
 * ===================================================================== */
/* Labels that are class names (train_labels.c): a classifier's alone, and
 * the numbering of one run's data (several machines' files are numbered
 * each on its own; a warm start's model has its own order). */
static int run_names_check(const run_state *rs, const hog_dataset *train, char *err, size_t err_len)
{
    const char *first = hog_idmap_name(&train->names, 0);
    if (hog_loss_is_regression(rs->p->loss))
        return hog_fail(HOG_ELABEL, err, err_len, "the labels are class names ('%s', ...), not numbers: "
                        "hog_train_params.loss = %s is a regression; a classifier (logistic, hinge, "
                        "modified_huber, softmax) takes them", first, hog_loss_name(rs->p->loss));
    if (rs->link)
        return hog_fail(HOG_ELABEL, err, err_len, "the labels are class names ('%s', ...): a run on several "
                        "machines takes numeric labels", first);
    if (rs->init)
        return hog_fail(HOG_ELABEL, err, err_len, "the labels are class names ('%s', ...): a warm start "
                        "(hog_trainer_set_init) takes numeric labels", first);
    return 0;
}

/* The model a run made on data whose labels are names: named, in the
 * names' sorted order. */
static int run_names_final(hog_model *m, const hog_dataset *train)
{
    int rc = m->class_names ? 0 : hog_model_names_from(m, &train->names);
    return rc < 0 ? rc : hog_model_names_sort(m);
}

/* hog_train_params.l2_crossed: the penalty times the mean non-zeros of a
 * crossed row over those of its own, from the degrees the scan counted
 * (the data's features below cross.base, the crosses above). A margin of
 * n terms whose weights each have the prior variance 1/l2 has the
 * variance n/l2, so a crossed model of ten times the terms overfits
 * where the uncrossed one does not: on gen_click data (20 fields, every
 * pair crossed: 10.5 times the non-zeros; 1,000,000 rows, one thread, 5
 * epochs) l2 1e-6 reached test logloss 0.4614 at best, 1e-5 0.4575, 4e-5
 * 0.4530 and 1e-4 0.4582. The factor is taken, not tuned. */
static void run_l2_crossed(hog_trainer *t, const run_state *rs)
{
    double own = 0, all = 0;
    for (uint64_t j = 0; j < rs->dim; j++) {
        all += rs->deg[j];
        if (j < rs->cross.base)
            own += rs->deg[j];
    }
    if (!(own > 0) || !(all > own))
        return;
    const double l2 = t->p.l2;
    t->p.l2 = l2 * (all / own);
    hog_log(HOG_LOG_INFO, "l2 %.3g: %g times the %.3g non-zeros a crossed row has for each of its own", t->p.l2, l2,
            all / own);
}

/* hog_train_params.l2_rows over rows training rows, less the holdout. */
static double l2_of_rows(const hog_train_params *p, uint64_t rows)
{
    return p->l2_rows / fmax(1.0, (double)rows * (1.0 - fmax(p->holdout, 0.0)));
}

static int run_dataset(hog_trainer *t, const hog_dataset *train, const hog_dataset *test, checkpoint *resume,
                       hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    const hog_train_params *p = &t->p;
    if (train->info.rows == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "the training set has no rows");
    if (p->early_stop && !test && p->holdout <= 0)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "hog_train_params.early_stop needs a test set or hog_train_params.holdout to measure "
                        "improvement on");
    if (t->link) {
        int rc = hog_link_run_check(p, err, err_len);
        if (rc < 0)
            return rc;
    }
    if (resume) {
        int rc = hog_checkpoint_data(resume, train, test, err, err_len);
        if (rc < 0)
            return rc;
    }
    run_state rs;
    hog_run_init(&rs, t);
    rs.ck.test_fingerprint = test ? test->info.fingerprint : 0;
    /* The data's half of the limit (hog_trainer_max_features): the source
     * reads a larger training set out of core. */
    hog_source_params sp = hog_source_params_default();
    sp.readers = rs.nth;
    sp.limit = rs.limit;
    sp.mapped = t->ooc_mapped;
    int rr = hog_block_source_open(train, &sp, &rs.src);
    /* A resumed epoch goes on in the order it began in: out of core, its
     * blocks' segments stay together (see order_segments). */
    if (rr == 0 && resume && resume->ooc != hog_block_source_out_of_core(rs.src)) {
        hog_log(HOG_LOG_INFO, "resuming %s: the checkpoint's run trained %s, and so does this one", resume->path,
                resume->ooc ? "out of core" : "in memory");
        hog_block_source_close(rs.src);
        rs.src = NULL;
        sp.out_of_core = resume->ooc;
        rr = hog_block_source_open(train, &sp, &rs.src);
    }
    if (rr < 0) {
        hog_run_free(&rs);
        return hog_fail(rr, err, err_len, "out of memory");
    }
    rs.ooc = hog_block_source_out_of_core(rs.src);
    if (rs.ooc)
        hog_log(HOG_LOG_INFO, "training out of core: %llu bytes of data, more than the data's half of a limit of %llu",
                (unsigned long long)hog_dataset_bytes(train), (unsigned long long)rs.limit);
    rs.dim = hog_warm_dim(&rs, HOG_MAX(train->info.features, 1));
    int rc = hog_run_cross(&rs, HOG_MAX(train->info.features, 1), (uint32_t)hog_dataset_fields(train), err, err_len);
    /* Before the ranks meet: they agree on the fields too. */
    if (rc == 0)
        rc = hog_run_fields(&rs, (uint32_t)hog_dataset_fields(train), err, err_len);
    if (rc == 0 && rs.link)
        rc = hog_link_run_share(&rs, train);
    if (rc == 0)
        rc = hog_scan_training_set(train, p, rs.cross.n ? &rs.cross : NULL, &rs.longest, rs.dim, rs.src, rs.mine, rs.pool, &rs.classes_of, &rs.classes, &rs.deg,
                                   &rs.deg_rows, err, err_len);
    uint64_t rows = train->info.rows;
    if (rc == 0 && rs.link)
        rc = hog_link_run_join(&rs, train, &rows, err, err_len);
    if (rc == 0 && p->l2_rows > 0 && rows != train->info.rows) { /* every rank's rows (hog_run_dataset) */
        t->p.l2 = l2_of_rows(p, rows);
        hog_log(HOG_LOG_INFO, "l2 %g: %g over the %llu training rows of every rank", p->l2, p->l2_rows,
                (unsigned long long)rows);
    }
    if (rc == 0 && p->l2_crossed && rs.cross.n) {
        run_l2_crossed(t, &rs);
        if (resume)
            rc = hog_checkpoint_l2(resume, t->p.l2, err, err_len);
    }
    if (rc == 0 && train->names.n)
        rc = run_names_check(&rs, train, err, err_len);
    if (rc == 0 && train->names.n && p->factors)
        rc = hog_fail(HOG_ELABEL, err, err_len,
                      "a factorisation machine takes numeric labels (0 and 1, or -1 and 1), not names: its score "
                      "cannot be turned round when the classes are put in their names' order");
    if (rc == 0 && rs.init)
        rc = hog_warm_classes(&rs, err, err_len);
    if (rc == 0)
        rc = hog_run_outputs(&rs, err, err_len);
    if (rc == 0)
        rc = run_class_weights(&rs, train);
    const char *forced = NULL;
    if (rc == 0 && (rc = hog_run_kernel(&rs, train->info.rows, train->info.features, train->info.nnz, &forced,
                                        err, err_len)) == 0)
        hog_run_log_kernel(&rs, forced, train->info.rows, train->info.features, train->info.nnz);
    if (rc == 0 && (rc = hog_trainer_features_fit(t, rs.dim, rs.outputs, err, err_len)) == 0)
        rc = hog_run_alloc(&rs, err, err_len);
    if (rc == 0 && train->names.n) /* the test set's names are mapped to these */
        rc = hog_model_names_from(rs.m, &train->names);
    if (rc == 0 && rs.init)
        hog_warm_weights(&rs);
    if (rc == 0)
        rc = hog_run_tables(&rs);
    if (rc == 0)
        rc = hog_run_alloc_final(&rs);
    if (rc == 0)
        rc = hog_run_segments(&rs, train, err, err_len);
    if (rc == 0 && resume)
        rc = hog_checkpoint_apply(resume, &rs, err, err_len);
    if (rc == 0 && rs.link)
        rc = hog_link_run_start(&rs, err, err_len);
    if (rc == 0 && rs.rep.n) /* the model as it starts: new, warm or resumed */
        hog_replicas_load(&rs.rep, rs.m, &rs.optim);
    if (rc == 0)
        rc = hog_run_renumber(&rs, train, 0, err, err_len);
    if (rc == 0) {
        atomic_store(&t->training, 1);
        rc = hog_epochs_run(&rs, train, test, 0, out, err, err_len);
        atomic_store(&t->training, 0);
    }
    if (rc == 0 && train->names.n && (rc = run_names_final(*out, train)) < 0) {
        hog_model_free(*out);
        *out = NULL;
    }
    if (rs.link) /* a failed run: the link thread touches the model's arrays until it ends */
        hog_link_halt(rs.link);
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "out of memory");
    hog_run_free(&rs);
    return rc;
}

int hog_run_dataset(hog_trainer *t, const hog_dataset *train, const hog_dataset *test, checkpoint *resume,
                    hog_model **out, char *err, size_t err_len)
{
    /* l2_rows: the run's l2, for this data (on several machines, for the
     * rows of every rank: run_dataset); the trainer's own is put back. */
    const double l2 = t->p.l2;
    if (t->p.l2_rows > 0)
        t->p.l2 = l2_of_rows(&t->p, train->info.rows);
    int rc = run_dataset(t, train, test, resume, out, err, err_len);
    t->p.l2 = l2;
    return rc;
}

int hog_trainer_run(hog_trainer *t, const hog_dataset *train, const hog_dataset *test,
                    hog_model **out, char *err, size_t err_len)
{
    *out = NULL;
    checkpoint ck, *resume;
    int rc = hog_run_checkpoint_open(t, &ck, &resume, err, err_len);
    if (rc == 0)
        rc = hog_run_dataset(t, train, test, resume, out, err, err_len);
    hog_checkpoint_free(&ck);
    return rc;
}
