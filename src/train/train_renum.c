/* train_renum.c: hashed features renumbered for a run's epochs, so that the workers' private copies are the first features: the rows' indices rewritten once, the model's records moved in and out around each pass. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <string.h>

#include "train_run.h"

/*
 * Where features are numbered by frequency, the features the workers copy
 * are the first ones, and the tuned loops find a copy by comparing the
 * index (feature_tables.first). Hashed features scatter the hot ones over
 * the whole model, and every non-zero pays a lookup in the copies' map:
 * kept on one thread to see their cost alone, copies through the map took
 * 1.18x to 1.26x the time of no copies at 2^22 hashed features, copies of
 * the first features 1.04x to 1.07x (docs/benchmarks.md, "What holds
 * hashed features").
 *
 * So a run of several epochs over data in memory renumbers its features:
 * the n features chosen for copies (hot first) become features 0..n-1, the
 * features that were there take the numbers the chosen ones leave, every
 * other feature keeps its own. The rows' indices are rewritten once, into
 * an array of the run's (the data set is the caller's and stays as it
 * is). The model and the per-feature tables keep the file's numbering
 * between passes - evaluation, checkpoints, early stopping and the model
 * the run returns see nothing of it - and each pass of the workers moves
 * the records of the 2n features or fewer that change numbers in before it
 * and back after it: a few thousand records, next to an epoch's millions
 * of non-zeros.
 *
 * It is for the copies of hog_hot_choose's first-features form: a linear
 * model of one output on the sparse kernel. Out of core the blocks are
 * read again each epoch, and would be rewritten each epoch too; crosses are
 * made from the rows as they are trained, in the file's numbering; a link,
 * replicas and averaging read or write the model while a pass runs. Those
 * keep the map.
 */

/* The rewrite reads every non-zero once and writes it to fresh pages: at
 * 2^22 hashed features (gen_sparse, 1,000,000 rows, 40,000,000 non-zeros,
 * two threads) 0.04 to 0.20 s (median 0.05) on huge pages, as the kernel
 * has them or compacts memory to make them, 0.09 to 0.11 s on small ones
 * (of that, 0.065 s is the kernel providing 40,000 pages, the lookups
 * 0.03 s). An epoch there is 0.2 to 0.3 s on two threads, and renumbering
 * saves about a tenth of it each epoch: only runs with at least this many
 * epochs left renumber. */
#define RENUM_MIN_EPOCHS 3u

void hog_renum_free(renum_state *r)
{
    hog_free(r->from);
    hog_free(r->low);
    hog_free(r->index);
    hog_free(r->blocks);
    hog_free(r->tmp);
    hog_free(r->tab.map);
    hog_free(r->tab.hot_ids);
    memset(r, 0, sizeof(*r));
}

/* Whether rs's run may renumber its features: see above. */
static int renum_applies(const run_state *rs, unsigned from)
{
    const hog_train_params *p = rs->p;
    const feature_tables *tab = &rs->tab;
    const unsigned at = HOG_MAX(rs->ck.at.epoch, from);
    return rs->kernel == HOG_KERNEL_SPARSE && rs->outputs == 1 && !p->factors && !rs->cross.n && !rs->link &&
           !rs->rep.n && !rs->avg.sum && !rs->ooc && tab->nlocal && !tab->first && !tab->whole_every &&
           p->epochs >= at + RENUM_MIN_EPOCHS;
}

/* The moves: file feature from[q] is run feature to[q]. The chosen ids[i]
 * become i; the features below n that were not chosen take, in order, the
 * numbers of the chosen ones at n and above. *low (n entries) gets each
 * feature below n's run number. Returns the number of moves, or -ENOMEM. */
static int64_t renum_moves(renum_state *r, const uint32_t *ids, uint32_t n)
{
    unsigned char *chosen_low = hog_calloc(n, 1);
    r->from = hog_malloc(4 * (size_t)n * sizeof(uint32_t));
    r->low = hog_malloc((size_t)n * sizeof(uint32_t));
    if (!chosen_low || !r->from || !r->low) {
        hog_free(chosen_low);
        return -ENOMEM;
    }
    r->to = r->from + 2 * (size_t)n;
    r->nlow = n;
    /* Every entry of low is set below: a chosen feature's here, an
     * unchosen one's with the vacated numbers (as many as they are). */
    uint32_t q = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ids[i] < n) {
            chosen_low[ids[i]] = 1;
            r->low[ids[i]] = i;
        }
        if (ids[i] != i) {
            r->from[q] = ids[i];
            r->to[q++] = i;
        }
    }
    /* The vacated numbers (chosen ids at n and above, in slot order) go to
     * the unchosen features below n, in order: as many of one as of the other. */
    uint32_t next = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ids[i] < n)
            continue;
        while (chosen_low[next])
            next++;
        r->low[next] = ids[i];
        r->from[q] = next;
        r->to[q++] = ids[i];
        next++;
    }
    hog_free(chosen_low);
    return q;
}

/* Feature j's run number, without a branch (a third of a row's non-zeros
 * are copies, anywhere among them): a copy's slot from the file's map,
 * else a feature below n's number from low, else j. */
static inline uint32_t renum_of(const renum_state *r, const feature_tables *tab, uint32_t j)
{
    const int below = j < r->nlow;
    const uint32_t other = below ? r->low[below ? j : 0] : j;
    const uint64_t e = tab->map[hog_hot_cell(j, tab->map_bits)];
    return (uint32_t)e == j ? (uint32_t)(e >> 32) : other;
}

typedef struct rewrite_job {
    const run_state *rs;
    const hog_dataset *ds;
    renum_state *r;
    const uint64_t *at; /* per block, where its indices start in r->index */
    atomic_uint bad;    /* a block whose non-zeros differ from the file's table: UINT32_MAX none */
} rewrite_job;

static void rewrite_worker(void *arg, unsigned ith, unsigned nth)
{
    (void)ith;
    (void)nth;
    rewrite_job *job = arg;
    const feature_tables *tab = &job->rs->tab;
    renum_state *r = job->r;
    uint32_t b;
    const hog_block *blk;
    while (hog_block_source_next(job->rs->src, &b, &blk) > 0) {
        if (blk->nnz != job->ds->blocks[b].nnz) {
            hog_atomic_min_u32(&job->bad, b);
        } else {
            uint32_t *out = r->index + job->at[b];
            for (uint32_t t = 0; t < blk->nnz; t++)
                out[t] = renum_of(r, tab, blk->index[t]);
            r->blocks[b] = *blk;
            r->blocks[b].index = out;
        }
        hog_block_source_release(job->rs->src, b);
    }
}

/* The rows' indices in the run's numbering, into r->index and r->blocks:
 * the workers each rewrite whole blocks, read through the run's source.
 * Returns 0, -ENOMEM or the source's error. */
static int renum_rows(run_state *rs, const hog_dataset *ds, renum_state *r, char *err, size_t err_len)
{
    const uint32_t nb = ds->info.blocks;
    uint64_t *at = hog_malloc(((size_t)nb + 1) * sizeof(uint64_t));
    r->blocks = hog_calloc(HOG_MAX(nb, 1u), sizeof(hog_block));
    if (!at || !r->blocks) {
        hog_free(at);
        return -ENOMEM;
    }
    at[0] = 0;
    for (uint32_t b = 0; b < nb; b++)
        at[b + 1] = at[b] + ds->blocks[b].nnz;
    r->index = hog_huge_alloc(HOG_MAX(at[nb], 1u) * sizeof(uint32_t));
    int rc = r->index ? hog_block_source_pass(rs->src, HOG_PASS_EVAL, NULL, 0) : -ENOMEM;
    if (rc < 0) {
        hog_free(at);
        return rc == -ENOMEM ? rc : hog_fail(rc, err, err_len, "starting the pass that renumbers the features: %s",
                                             hog_strerror(rc));
    }
    rewrite_job job = {.rs = rs, .ds = ds, .r = r, .at = at};
    atomic_init(&job.bad, UINT32_MAX);
    hog_pool_run(rs->pool, rewrite_worker, &job);
    rc = hog_block_source_end(rs->src, err, err_len);
    const uint32_t bad = atomic_load(&job.bad);
    if (rc == 0 && bad != UINT32_MAX)
        rc = hog_fail(HOG_ECORRUPT, err, err_len, "block %u of the training set has %u non-zeros in its table, and "
                      "others in its rows", bad, ds->blocks[bad].nnz);
    hog_free(at);
    return rc;
}

int hog_run_renumber(run_state *rs, const hog_dataset *train, unsigned from, char *err, size_t err_len)
{
    renum_state *r = &rs->renum;
    if (!renum_applies(rs, from))
        return 0;
    /* The rewritten indices are more of the data: within the data's half
     * of the limit, beside the data set itself. */
    const uint64_t bytes = train->info.nnz * sizeof(uint32_t);
    if (rs->limit && hog_dataset_bytes(train) + bytes > rs->limit / 2) {
        hog_log(HOG_LOG_DEBUG, "features not renumbered: their %llu bytes of indices and the data set's %llu are "
                "more than the data's half of the memory limit", (unsigned long long)bytes,
                (unsigned long long)hog_dataset_bytes(train));
        return 0;
    }
    const double t0 = hog_now();
    const int64_t moved = renum_moves(r, rs->tab.hot_ids, rs->tab.nlocal);
    int rc = moved < 0 ? (int)moved : 0;
    if (rc == 0) {
        r->moved = (uint32_t)moved;
        /* The largest record: the model's (packed: a feature's whole state). */
        const size_t words = HOG_MAX((size_t)rs->m->stride, 2u);
        r->tmp = hog_malloc(HOG_MAX(r->moved, 1u) * words * sizeof(hog_weight));
        feature_tables tab = rs->tab; /* the l2 scales and the rest as they are */
        rc = r->tmp ? hog_hot_first(&tab, rs->tab.nlocal, rs->tab.nhot) : -ENOMEM;
        if (rc == 0)
            r->tab = tab;
    }
    if (rc == 0)
        rc = renum_rows(rs, train, r, err, err_len);
    if (rc < 0) {
        hog_renum_free(r);
        return rc == -ENOMEM ? hog_fail(rc, err, err_len, "out of memory") : rc;
    }
    /* A worker's table of L2 shrinks follows the numbering of the passes
     * that compute it: all of them renumbered from here on. */
    for (unsigned i = 0; i < rs->nth; i++)
        rs->ws[i].shrink_ok = 0;
    /* The rewrite is part of the training's time (its non-zeros/s). */
    const double took = hog_now() - t0;
    rs->seconds += took;
    hog_log(HOG_LOG_DEBUG, "features renumbered for the epochs: %u move, the %u kept per worker now the first; "
            "%llu indices rewritten in %.3f s", r->moved, r->tab.nlocal, (unsigned long long)train->info.nnz, took);
    return 0;
}

/* The per-feature arrays a pass reads and writes, with each feature's
 * record's stride and width in words: the model (a packed record holds the
 * feature's whole state), and when not packed the optimiser's arrays. */
typedef struct renum_array {
    void *base;
    size_t stride, words, size;
} renum_array;

static unsigned renum_arrays(run_state *rs, renum_array *a)
{
    const optim_state *o = &rs->optim;
    const size_t W = sizeof(hog_weight);
    unsigned n = 0;
    a[n++] = (renum_array){(void *)rs->m->w, rs->m->stride, rs->outputs, W};
    if (o->packed) {
        a[n - 1].words = rs->m->stride;
    } else {
        if (o->acc)
            a[n++] = (renum_array){(void *)o->acc, o->astride, rs->outputs, W};
        if (o->l1s)
            a[n++] = (renum_array){(void *)o->l1s, o->lstride, 2 * (size_t)rs->outputs, W};
        if (o->xmax)
            a[n++] = (renum_array){(void *)o->xmax, o->fstride, 1, W};
    }
    a[n++] = (renum_array){rs->tab.l2_scale, 1, 1, sizeof(float)};
    return n;
}

/* Every array's records of features src[q] to dst[q]. The workers are
 * idle: plain copies. */
static void renum_move(run_state *rs, const uint32_t *src, const uint32_t *dst)
{
    renum_state *r = &rs->renum;
    renum_array a[6];
    const unsigned n = renum_arrays(rs, a);
    for (unsigned k = 0; k < n; k++) {
        char *base = a[k].base, *tmp = (char *)r->tmp;
        const size_t rec = a[k].words * a[k].size, step = a[k].stride * a[k].size;
        for (uint32_t q = 0; q < r->moved; q++)
            memcpy(tmp + q * rec, base + src[q] * step, rec);
        for (uint32_t q = 0; q < r->moved; q++)
            memcpy(base + dst[q] * step, tmp + q * rec, rec);
    }
}

void hog_renum_enter(run_state *rs)
{
    if (rs->renum.blocks)
        renum_move(rs, rs->renum.from, rs->renum.to);
}

void hog_renum_leave(run_state *rs)
{
    if (rs->renum.blocks)
        renum_move(rs, rs->renum.to, rs->renum.from);
}
