/* train_epoch.c: a run's epochs: the workers' pass over shuffled segments of the blocks a source gives, averaging samples, progress, and each epoch's evaluation and early stopping. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train_run.h"

/* Samples per averaged epoch (hog_train_params.average). */
#define AVERAGE_POINTS 64u

/* ===================================================================== *
 *  A pass of the workers
 * ===================================================================== */

/* Averaging: adds the shared weights to the sums, one sample. The workers
 * go on writing meanwhile; the sample is as racy as any HOGWILD! read. */
static void average_sample(const epoch_job *job)
{
    avg_state *a = job->avg;
    const hog_model *m = job->m;
    const replica_set *rp = job->rep;
    const uint32_t K = m->outputs;
    uint64_t n = m->dim * K;
    pthread_mutex_lock(&a->lock);
    if (rp->n == 0) {
        for (uint64_t j = 0; j < m->dim; j++)
            for (uint32_t k = 0; k < K; k++)
                a->sum[j * K + k] += (double)hog_w_load(&hog_model_wj(m, j)[k]);
        for (uint32_t k = 0; k < m->outputs; k++)
            a->sum[n + k] += (double)hog_w_load(&m->bias[k]);
    } else { /* the model is the replicas' mean */
        double inv = 1.0 / rp->n;
        for (unsigned r = 0; r < rp->n; r++) {
            for (uint64_t j = 0; j < m->dim; j++)
                for (uint32_t k = 0; k < K; k++)
                    a->sum[j * K + k] += inv * (double)hog_w_load(&rp->w[r][j * rp->stride + k]);
            for (uint32_t k = 0; k < m->outputs; k++)
                a->sum[n + k] += inv * (double)hog_w_load(&rp->bias[r][k]);
        }
    }
    a->count++;
    pthread_mutex_unlock(&a->lock);
}

/* Whether the segment at pos ends one of the epoch's AVERAGE_POINTS evenly
 * spaced sampling points (all segments when there are fewer). */
static int average_point(const epoch_job *job, uint32_t pos)
{
    uint64_t pts = AVERAGE_POINTS;
    return (uint64_t)(pos + 1) * pts / job->nsegments != (uint64_t)pos * pts / job->nsegments;
}

/* Reports progress from worker 0 at most five times a second. */
static void maybe_report(epoch_job *job, uint32_t pos, double *last)
{
    const hog_train_params *p = job->p;
    double now = hog_now();
    if (!p->progress || now - *last < 0.2)
        return;
    *last = now;
    hog_epoch_stats st = *job->stats;
    st.progress = job->frac0 + (job->frac1 - job->frac0) * (pos + 1) / job->nsegments;
    st.seconds = job->done_seconds + (now - job->t0);
    p->progress(p->progress_ctx, &st, 0);
}

/* Out of core, segments come block by block (see order_segments): when the
 * last segment of a block is done, the block goes back to the source. */
static void ooc_after(const epoch_job *job, uint32_t pos)
{
    uint32_t b = job->segments[pos] / job->per_block;
    if (atomic_fetch_sub_explicit(&job->left[b], 1, memory_order_acq_rel) == 1)
        hog_block_source_release(job->src, b);
}

/* After a segment: whether the pass should pause, for an interrupt or a
 * checkpoint that is due. */
static int pause_wanted(const epoch_job *job)
{
    return (job->interrupted && atomic_load_explicit(job->interrupted, memory_order_relaxed)) ||
           (job->due > 0 && job->now() >= job->due);
}

/* Stops the claims: see epoch_job.next. The worker whose fetch-or finds
 * the bit clear records where claiming stopped; one that raced it finds
 * the bit set. */
static void pause_claims(epoch_job *job)
{
    uint32_t old = atomic_fetch_or_explicit(&job->next, MAX_SEGMENTS, memory_order_relaxed);
    if (!(old & MAX_SEGMENTS))
        job->paused_at = old;
}

static void epoch_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)nth;
    epoch_job *job = arg;
    worker_state *ws = &job->ws[ith];
    double last = hog_now();
    int fresh = 0;
    uint64_t pass = job->link ? hog_link_passes(job->link) : 0;
    unsigned ahead = 0;
    for (;;) {
        /* A paused counter hands out positions at or above MAX_SEGMENTS,
         * beyond every epoch's end. */
        uint32_t pos = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (pos >= job->stop_at || (job->stop && atomic_load_explicit(job->stop, memory_order_relaxed)) ||
            atomic_load_explicit(&job->bad_block, memory_order_relaxed) != UINT32_MAX)
            break;
        /* A block of a file checked as it is read, first read here (the
         * scan reads this rank's blocks first; a dead rank's come later):
         * a bad one stops the pass before any of its rows is trained. */
        uint32_t b = job->segments[pos] / job->per_block;
        const hog_block *blk = hog_block_source_get(job->src, b);
        if (!blk) {
            hog_atomic_min_u32(&job->bad_block, b);
            break;
        }
        if (job->renum)
            blk = &job->renum[b];
        hog_segment_run(job, ws, pos, blk, fresh);
        fresh = 1;
        if (job->avg && average_point(job, pos))
            average_sample(job);
        if (job->ooc)
            ooc_after(job, pos);
        if (ith == 0)
            maybe_report(job, pos, &last);
        if (job->link) /* bounded staleness: see hog_link_wait_pass */
            hog_link_pace(job->link, &pass, &ahead);
        if (pause_wanted(job))
            pause_claims(job);
    }
    /* What a whole copy, or a warm feature's copy, changed since its last
     * merge joins the model before the pass ends (an epoch's end, a pause,
     * a stop). */
    if (fresh && hog_whole_on(job) && ws->own_since)
        hog_whole_sync(job, ws);
    else if (fresh && !hog_whole_on(job))
        hog_hot_flush(job, ws);
}

epoch_job hog_epoch_job(run_state *rs, unsigned e)
{
    const hog_train_params *p = rs->p;
    epoch_job job = {
        .p = p, .m = rs->m, .tab = rs->tab, .optim = rs->optim, .nth = rs->nth, .frac1 = 1.0, .epoch = e,
        .ws = rs->ws, .done_seconds = rs->seconds, .stats = &rs->st,
    };
    job.mid = rs->classes == 2 ? (float)(0.5 * (rs->classes_of[0] + rs->classes_of[1])) : 0.0f;
    job.class_w = rs->class_w;
    job.tau = (float)p->quantile;
    job.avg = rs->avg.sum && e >= rs->avg.from_epoch ? &rs->avg : NULL;
    job.rep = &rs->rep;
    job.stop = rs->link ? hog_link_stop_flag(rs->link) : NULL;
    job.link = rs->link && hog_link_paced(rs->link) ? rs->link : NULL;
    /* A multi-node run stops through its link, which tells the other ranks. */
    job.interrupted = rs->link ? NULL : rs->ck.timer.interrupted;
    job.now = rs->ck.timer.now;
    job.paused_at = UINT32_MAX;
    atomic_init(&job.next, 0);
    atomic_init(&job.bad_block, UINT32_MAX);
    job.prog = rs->prog_on && e + 1 == p->epochs;
    job.clock = &rs->clock;
    return job;
}

void hog_epoch_pass(run_state *rs, epoch_job *job)
{
    if (rs->p->replicas == HOG_REPLICAS_NODE)
        hog_replicas_background_start(&rs->rep);
    hog_pool_run(rs->pool, epoch_worker, job);
    hog_replicas_background_stop(&rs->rep);
}

/* ===================================================================== *
 *  An epoch over the whole data set
 * ===================================================================== */
/* This epoch's order of segments, into seg->order; returns how many. In
 * memory: all segments shuffled. Out of core: blocks shuffled, and each
 * block's segments shuffled and kept together, so that only the few blocks
 * being worked on are resident. A multi-node run takes only the blocks
 * its link deals this rank now (NULL: every block). */
static uint32_t order_segments(segment_plan *seg, int ooc, hog_rng *rng, const hog_link *link)
{
    const uint32_t *first = seg->first;
    uint32_t nb = 0, k = 0;
    for (uint32_t b = 0; b < seg->nblocks; b++)
        if (!link || hog_link_owns_block(link, b))
            seg->blocks[nb++] = b;
    if (!ooc) {
        for (uint32_t i = 0; i < nb; i++) {
            uint32_t b = seg->blocks[i], n = first[b + 1] - first[b];
            memcpy(seg->order + k, seg->base + first[b], n * sizeof(uint32_t));
            k += n;
        }
        hog_shuffle_u32(seg->order, k, rng);
        return k;
    }
    hog_shuffle_u32(seg->blocks, nb, rng);
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t b = seg->blocks[i], n = first[b + 1] - first[b];
        memcpy(seg->order + k, seg->base + first[b], n * sizeof(uint32_t));
        hog_shuffle_u32(seg->order + k, n, rng);
        k += n;
    }
    return k;
}

/* Out of core, before epoch e's pass starts at position from: each
 * block's count of segments left, less those done before from (a resumed
 * epoch). */
static void ooc_start(run_state *rs, uint32_t from)
{
    const uint32_t spb = rs->seg.per_block, *order = rs->seg.order;
    for (uint32_t b = 0; b < rs->seg.nblocks; b++)
        atomic_init(&rs->seg.left[b], rs->seg.first[b + 1] - rs->seg.first[b]);
    for (uint32_t q = 0; q < from; q++)
        atomic_fetch_sub_explicit(&rs->seg.left[order[q] / spb], 1, memory_order_relaxed);
}

/* A pass from position from: out of core, the source gets the blocks in
 * the order their segments come (a block whose segments are partly done
 * is read again); in memory, the segments of all blocks are mixed and the
 * pass has no order of blocks. Returns 0 or -errno. */
static int source_pass(run_state *rs, const epoch_job *job, uint32_t from)
{
    if (!rs->ooc)
        return hog_block_source_pass(rs->src, HOG_PASS_EPOCH, NULL, 0);
    const uint32_t spb = rs->seg.per_block, *order = rs->seg.order;
    uint32_t n = 0;
    for (uint32_t q = from; q < job->nsegments; q++)
        if (q == from || order[q] / spb != order[q - 1] / spb)
            rs->seg.blocks[n++] = order[q] / spb;
    return hog_block_source_pass(rs->src, HOG_PASS_EPOCH, rs->seg.blocks, n);
}

/* Epoch e over the whole of train, from position at->segment of its
 * order: passes of the workers, each paused when a checkpoint is due or
 * the run is interrupted (hog_run_pause writes it). Returns 0, or what
 * hog_run_pause returns to end the run. */
static int run_epoch(run_state *rs, const hog_dataset *train, run_position *at, char *err, size_t err_len)
{
    const unsigned e = at->epoch;
    epoch_job job = hog_epoch_job(rs, e);
    job.ds = train;
    job.segments = rs->seg.order;
    job.nsegments = rs->seg.nsegments;
    job.per_block = rs->seg.per_block;
    job.ooc = rs->ooc;
    job.left = rs->seg.left;
    job.src = rs->src;
    hog_rng rng = {hog_mix64(rs->p->seed ^ 0x5eed0000ull) + e};
    job.nsegments = order_segments(&rs->seg, rs->ooc, &rng, rs->link);
    if (rs->ooc && job.nsegments)
        ooc_start(rs, at->segment);
    if (job.nsegments)
        rs->st.step = hog_segment_step(&job, 0);
    /* Renumbered features: the rows and the copies' tables in the run's
     * numbering, the model's records moved into it for each pass. */
    if (rs->renum.blocks) {
        job.renum = rs->renum.blocks;
        job.tab = rs->renum.tab;
    }
    const feature_tables tab = job.tab;
    const uint32_t warm_end = hog_hot_warm_end(&job, e == 0);
    for (;;) {
        hog_hot_pass(&job, &tab, at->segment, warm_end);
        atomic_store_explicit(&job.next, at->segment, memory_order_relaxed);
        job.paused_at = UINT32_MAX;
        job.due = hog_ckpt_due(&rs->ck.timer);
        job.t0 = hog_now();
        job.done_seconds = rs->seconds;
        int rc = source_pass(rs, &job, at->segment);
        if (rc < 0)
            return hog_fail(rc, err, err_len, "starting the reads of the epoch: %s", hog_strerror(rc));
        hog_renum_enter(rs);
        hog_epoch_pass(rs, &job);
        hog_renum_leave(rs);
        rs->seconds += hog_now() - job.t0;
        /* A block that failed its read or its check, or a file changed
         * under the pass: what the epoch read cannot be trusted, nor the
         * model it made. */
        if ((rc = hog_block_source_end(rs->src, err, err_len)) < 0)
            return rc;
        /* The first segments done, the private copies begin (train_hot.c). */
        if (hog_hot_pass_to_copies(&job)) {
            at->segment = job.stop_at;
            continue;
        }
        if (job.paused_at >= job.nsegments)
            break;
        at->segment = job.paused_at;
        /* The checkpoint holds one model: the replicas' mean. */
        if (rs->rep.n)
            hog_replicas_average(&rs->rep, rs->pool, rs->m);
        if ((rc = hog_run_pause(rs, at, 1, err, err_len)) < 0)
            return rc;
    }
    if (rs->rep.n)
        hog_replicas_average(&rs->rep, rs->pool, rs->m);
    return 0;
}

/* ===================================================================== *
 *  After an epoch
 * ===================================================================== */
/* The weights and then the biases of m, into or out of buf (dim * outputs
 * + outputs floats, packed whatever m's stride). */
static void weights_save(const hog_model *m, float *buf)
{
    const uint32_t K = m->outputs;
    uint64_t n = m->dim * K;
    for (uint64_t j = 0; j < m->dim; j++)
        for (uint32_t k = 0; k < K; k++)
            buf[j * K + k] = hog_w_load(&hog_model_wj(m, j)[k]);
    for (uint32_t k = 0; k < K; k++)
        buf[n + k] = hog_w_load(&m->bias[k]);
}

static void weights_restore(hog_model *m, const float *buf)
{
    const uint32_t K = m->outputs;
    uint64_t n = m->dim * K;
    for (uint64_t j = 0; j < m->dim; j++)
        for (uint32_t k = 0; k < K; k++)
            hog_w_store(&hog_model_wj(m, j)[k], buf[j * K + k]);
    for (uint32_t k = 0; k < K; k++)
        hog_w_store(&m->bias[k], buf[n + k]);
}

/* Sets m's weights to the average of the samples so far. */
static void average_into(hog_model *m, const avg_state *a)
{
    const uint32_t K = m->outputs;
    uint64_t n = m->dim * K;
    double inv = 1.0 / (double)a->count;
    for (uint64_t j = 0; j < m->dim; j++)
        for (uint32_t k = 0; k < K; k++)
            hog_w_store(&hog_model_wj(m, j)[k], (float)(a->sum[j * K + k] * inv));
    for (uint32_t k = 0; k < K; k++)
        hog_w_store(&m->bias[k], (float)(a->sum[n + k] * inv));
}

/* The sum of the workers' training losses so far. */
static double workers_loss(const run_state *rs)
{
    double loss = 0;
    for (unsigned i = 0; i < rs->nth; i++)
        loss += rs->ws[i].loss;
    return loss;
}

/* HOG_EDIVERGED when epoch e's training loss is not finite, or more than
 * ten times the first epoch's (plus one, so that a first epoch that all
 * but fits the data is not held to its own noise): the steps are too large
 * for the data's scale, and the model is worth nothing. */
static int converging(run_state *rs, unsigned e, double loss, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    if (e == 0 || !isfinite(rs->first_loss))
        rs->first_loss = loss;
    const int grew = isfinite(loss) && e > 0 && loss > 10 * rs->first_loss + 1;
    if (isfinite(loss) && !grew)
        return 0;
    char seen[96] = "";
    if (grew)
        snprintf(seen, sizeof(seen), " (%.4g after %.4g in epoch 1)", loss, rs->first_loss);
    return hog_fail(HOG_EDIVERGED, err, err_len,
                    "the training diverged in epoch %u: its loss is %s%s, and no model was made. The steps are too "
                    "large for the data's scale: lower hog_train_params.step (now %g)%s",
                    e + 1, isnan(loss) ? "NaN" : isinf(loss) ? "infinite" : "growing", seen, p->step,
                    p->normalized || p->factors ? "" : ", or set hog_train_params.normalized for features of very different "
                    "ranges");
}

/* hog_evaluate on the selected rows of ds: through the training set's
 * source (idle between epochs) when ds is the training set, else through
 * one of its own under the run's limit. */
static int evaluate(const run_state *rs, const hog_dataset *train, const hog_model *m, const hog_dataset *ds,
                    const hog_rowsel *sel, hog_metrics *out, char *err, size_t err_len)
{
    return hog_evaluate(m, ds, sel, ds == train ? rs->src : NULL, rs->limit, rs->pool, out, err, err_len);
}

/* After epoch e (examples ex0 and loss loss0 before it): the epoch's
 * statistics, evaluation, early stopping and the progress report. Sets
 * *stop when early stopping ends the run. Returns 0, HOG_EDIVERGED
 * (converging) or an evaluation error. */
static int run_epoch_end(run_state *rs, unsigned e, uint64_t ex0, double loss0, const hog_dataset *train,
                         const hog_dataset *eval_ds, const hog_rowsel *eval_sel, int *stop, char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    hog_epoch_stats *st = &rs->st;
    double loss = workers_loss(rs);
    st->examples = st->nnz = 0;
    for (unsigned i = 0; i < rs->nth; i++) {
        st->examples += rs->ws[i].examples;
        st->nnz += rs->ws[i].nnz;
    }
    st->progress = 1;
    st->seconds = rs->seconds;
    st->train_loss = st->examples > ex0 ? (loss - loss0) / (double)(st->examples - ex0) : (double)NAN;
    rs->epochs_run = e + 1;
    /* Within the averaging window the average is the model. */
    const hog_model *now_m = rs->m;
    if (rs->avg.sum && e >= rs->avg.from_epoch && rs->avg.count) {
        average_into(rs->avg.m, &rs->avg);
        now_m = rs->avg.m;
    }
    if (eval_ds) {
        int rc = evaluate(rs, train, now_m, eval_ds, eval_sel, &st->test, err, err_len);
        if (rc < 0)
            return rc;
    }
    *stop = 0;
    if (p->early_stop) {
        if (st->test.loss < rs->best.loss) {
            rs->best.loss = st->test.loss;
            rs->best.test = st->test;
            rs->best.epoch = e + 1;
            rs->best.since = 0;
            weights_save(now_m, rs->best.weights);
        } else {
            *stop = ++rs->best.since >= p->early_stop;
        }
    }
    if (p->progress)
        p->progress(p->progress_ctx, st, 1);
    if (st->examples > ex0) {
        int rc = converging(rs, e, st->train_loss, err, err_len);
        if (rc < 0)
            return rc;
    }
    if (*stop)
        hog_log(HOG_LOG_INFO, "early stop after epoch %u: no lower test loss for %u epochs; keeping epoch %u", e + 1,
                p->early_stop, rs->best.epoch);
    return 0;
}

/* ===================================================================== *
 *  The epochs
 * ===================================================================== */
int hog_epochs_run(run_state *rs, const hog_dataset *train, const hog_dataset *test, unsigned from, hog_model **out,
                   char *err, size_t err_len)
{
    const hog_train_params *p = rs->p;
    const hog_dataset *eval_ds = test ? test : (p->holdout > 0 ? train : NULL);
    const hog_rowsel eval_sel = {test ? 0.0 : p->holdout, p->seed, 1, p->fold};
    const hog_rowsel train_sel = {p->holdout, p->seed, 0, p->fold};
    int rc = 0, stop = rs->ck.at.finished;
    if (from > 0) { /* the first epoch ran while train was read: evaluate it now */
        rc = run_epoch_end(rs, from - 1, 0, 0, train, eval_ds, &eval_sel, &stop, err, err_len);
        if (rc < 0)
            return rc;
    }
    /* From the start, or from where a checkpoint left the run (ck.at). */
    run_position at = rs->ck.at;
    at.epoch = HOG_MAX(at.epoch, from);
    for (; at.epoch < p->epochs && !stop; at.epoch++, at.segment = 0) {
        const unsigned e = at.epoch;
        if (at.segment == 0) {
            at.examples0 = rs->st.examples;
            at.loss0 = workers_loss(rs);
        }
        /* Between epochs the model is consistent: a checkpoint that fell
         * due during the last evaluation, or an interrupt, is taken here. */
        if ((rc = hog_run_pause(rs, &at, 0, err, err_len)) < 0)
            return rc;
        rs->st.epoch = e + 1;
        rs->st.progress = 0;
        if (e + 1 == p->epochs) /* resumed within it, its first rows ran in another run */
            rs->prog_whole = at.segment == 0;
        if ((rc = run_epoch(rs, train, &at, err, err_len)) < 0)
            return rc;
        if (rs->link && (rc = hog_link_failed(rs->link, err, err_len)) < 0)
            return rc;
        rc = run_epoch_end(rs, e, at.examples0, at.loss0, train, eval_ds, &eval_sel, &stop, err, err_len);
        if (rc < 0)
            return rc;
        if (rs->link) {
            hog_link_progress(rs->link, e + 1, rs->st.examples, rs->seconds);
            if ((rc = hog_link_epoch_end(rs->link, e, err, err_len)) < 0)
                return rc;
        }
    }
    at = (run_position){.epoch = at.epoch, .finished = 1};
    if ((rc = hog_run_pause(rs, &at, 1, err, err_len)) < 0)
        return rc;
    if (rs->link) { /* rank 0 gathers the final model; the others keep their view */
        if ((rc = hog_link_finish(rs->link, err, err_len)) < 0)
            return rc;
        if (hog_link_rank(rs->link) == 0 && eval_ds &&
            (rc = evaluate(rs, train, rs->m, eval_ds, &eval_sel, &rs->st.test, err, err_len)) < 0)
            return rc;
    }
    if (rs->st.examples == 0 && !rs->link)
        return hog_fail(HOG_EEMPTY, err, err_len, "every training row is held out: lower hog_train_params.holdout");
    hog_model *m = rs->m;
    m->info.epochs_run = rs->epochs_run;
    m->info.best_epoch = rs->epochs_run;
    if (rs->best.epoch) {
        weights_restore(m, rs->best.weights);
        rs->st.test = rs->best.test;
        m->info.best_epoch = rs->best.epoch;
    } else if (rs->avg.sum && rs->avg.count) {
        average_into(m, &rs->avg);
    }
    /* The normalized update's scales go with the model (a warm start's
     * goes on from them); run_grow keeps xmax as long as the model. The
     * model leaves the run packed (stride = outputs), as a file holds it. */
    if ((rc = hog_run_unpack(rs)) < 0)
        return rc;
    if (rs->optim.xmax) {
        hog_free((void *)m->scales);
        m->scales = rs->optim.xmax;
        rs->optim.xmax = NULL;
    }
    /* The feature names: the data's, a warm start's model's kept. */
    if ((rc = hog_model_fnames_final(m, rs->init, &train->fnames)) < 0)
        return rc;
    m->info.nonzero = hog_model_nonzero(m);
    hog_log(HOG_LOG_DEBUG, "model: %llu of %llu weights non-zero", (unsigned long long)m->info.nonzero,
            (unsigned long long)(rs->dim * rs->outputs));
    /* The training-set metrics: the last epoch's, as it ran, where that
     * epoch's model is the one kept and every row of it was counted here;
     * else a pass of their own. */
    if (rs->prog_on && rs->prog_whole && !rs->best.epoch && !(rs->avg.sum && rs->avg.count)) {
        for (unsigned i = 1; i < rs->nth; i++)
            hog_eval_sums_merge(&rs->ws[0].prog, &rs->ws[i].prog);
        hog_eval_metrics(m, &rs->ws[0].prog, &m->info.train);
        m->info.params.train_metrics = HOG_TRAIN_METRICS_PROGRESSIVE;
    } else {
        rc = evaluate(rs, train, m, train, &train_sel, &m->info.train, err, err_len);
        if (rc < 0)
            return rc;
        m->info.params.train_metrics = HOG_TRAIN_METRICS_EXACT;
    }
    m->info.train_rows = m->info.train.rows;
    m->info.test = rs->st.test;
    m->info.seconds = rs->seconds;
    rs->m = NULL;
    *out = m;
    return 0;
}

