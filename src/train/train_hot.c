/* train_hot.c: the workers' private copies of the model: of the hot weights (which features, and how a segment's change merges back into the shared weights), or of the whole of a small model (when, and how its change merges back). */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "train_run.h"

/*
 * Hot features and the intercept.
 *
 * HOGWILD! assumes that two examples rarely touch the same weight. Real
 * sparse data has a head of features (frequent words, the intercept) that
 * nearly every example touches; if every worker wrote those to the shared
 * model, their cache lines would bounce between cores on every example and
 * more threads would run slower than one. So each worker keeps a private
 * copy of the hot weights: it reads them from the shared model before its
 * first segment (hog_hot_begin), steps its copy through the segment's examples,
 * and at the end adds its change to the shared model and takes the result
 * as the next segment's start (hog_hot_sync) - a delayed update whose delay is
 * one segment, within HOGWILD!'s bounded-staleness analysis. Workers running
 * side by side correct the same hot weights towards the same targets, so
 * the changes are averaged over the segments that ran beside it (see
 * hog_overlap in train.h), not summed; a hot weight's change is a segment's
 * worth of steps, too much to lose to a racing writer, so it is added with
 * a compare-and-swap (hog_w_add), once per weight per segment. Warm
 * features, touched by 0.33% to 1% of rows, get a few steps per segment:
 * they are kept private only to keep their cache lines still, and their
 * changes are summed with HOGWILD!'s plain racy update (a field-aware
 * machine's warm copies merge every FFM_WARM_EVERY segments instead). Cold weights
 * are read and written in the shared model directly. With one worker there
 * are no hot features: nothing to contend with. AdaGrad's sums of squared
 * gradients get the same private copies, but their changes are always
 * summed: each worker's gradients are gradients the model has seen.
 */

/* ===================================================================== *
 *  Which features
 * ===================================================================== */
/* Features kept in private copies: touched by at least 1 row in LOCAL_SHARE,
 * at most LOCAL_WEIGHTS weights in all (a worker's copy stays within its L2
 * cache). Those touched by at least 1 row in HOT_SHARE are hot: their
 * changes are averaged; the others' are summed. Each copy costs its
 * worker a load and a store or two at every segment's end, a step or two
 * of work for a warm feature: on RCV1-shaped data (47,000 features, 2
 * threads) 1 row in 1,000 kept 6,585 copies, whose merging was 8% of the
 * run, and 1 in 300 reached the target test loss sooner in 3 of 4
 * interleaved rounds (bench/run threads: an efficiency of 0.86 against
 * 0.73). */
#define LOCAL_SHARE 300u
#define HOT_SHARE 100u
/* A field-aware machine's copies are large (the factors for every field:
 * 80 floats a feature at 20 fields and k 4, as many AdaGrad sums, ten
 * cache lines), their changes are summed, not shared out
 * (hog_segment_run), and every row writes all ten lines of each of its
 * features, so a feature both workers write costs a line transfer per
 * line each time the other wrote it last: on a host whose two vCPUs sit
 * on different core complexes, 100 to 400 ns a line. Two tiers of copies:
 * the features at least 1 row in FFM_FAST_SHARE touches merge every
 * segment, as other models' copies do; the warm ones, down to 1 row in
 * FFM_LOCAL_SHARE, every FFM_WARM_EVERY segments (16,384 rows a worker),
 * between which a worker touches each of them 16 times or more and pays
 * for its lines once, at the merge. At most FFM_LOCAL_WEIGHTS weights (1
 * MiB of copies and sums a worker, a core's L2 cache on the machine
 * measured; their starts are read only at merges). On gen_click data
 * (1,000,000 rows, 20 fields, k 4, 2 threads) that is 1,441 features (of
 * the 1,491 that 1 row in 1,000 touches, a hotter one holding the map
 * cell of the others; 75 of them merge every segment), against 51 at 1
 * row in 20 alone. Time to one thread's test loss after
 * 3 epochs against two pinned one-thread runs beside it
 * (bench/bench-ffm-threads.sh), interleaved with the build of the 51
 * copies: 0.833 of the parallel limit against 0.740 (medians of 40
 * rounds in four sets: 0.909, 0.808, 0.875 and 0.795 against 0.611,
 * 0.863, 0.735 and 0.655), 3.00 epochs to the loss against 2.94, within
 * the runs' spread: a build whose warm copies counted the other
 * worker's share of the squared slopes in their sums (nth g^2, merged
 * divided by nth) needed 2.99 epochs where this one needed 2.97 (12
 * interleaved runs each). Once the row loop stopped asking for the
 * copied features' shared lines (prefetch_feature, train_rows.c), 0.908
 * against 0.802 for this build before it (28 rounds in three sets:
 * 0.952, 0.868 and 0.940). Merged every 8 segments
 * the warm tier gave 0.783 where every 16 gave 0.909 (2.97 epochs to the
 * loss against 3.03); under a 512 KiB cap (819 copies) 0.833 where 1 MiB
 * gave 0.875, the 51 copies alone 0.611 and 0.735. Merged every segment
 * the warm tier was slower (0.71 of the limit at 1 in 300), and copies of
 * every feature slower still (0.73 and 0.81 merged every 8 and 32
 * segments): a feature touched once between merges pays for its lines at
 * the merge anyway. On 100,000 rows (49 segments a
 * worker) the delay costs the first epoch a little (test logloss 0.5211
 * to 0.5223 against 0.5192 to 0.5213 with the 51 copies, one thread
 * 0.5192) and the sixth nothing (0.5021 to 0.5023 against 0.5008 to
 * 0.5027, one thread 0.5018). */
#define FFM_LOCAL_SHARE 1000u
#define FFM_FAST_SHARE 20u
#define FFM_WARM_EVERY 16u
#define LOCAL_WEIGHTS 16384u
#define FFM_LOCAL_WEIGHTS (8u * LOCAL_WEIGHTS)
/* Private copies delay the hot weights' updates by a segment and share
 * them out among the segments that ran beside it, so k workers together
 * move a hot weight about as far as one segment would. On a data set of
 * few segments per worker that delay is much of an epoch and the sharing
 * much of its progress, while the contention the copies avoid costs little
 * on a set that small: below COPY_MIN_SEGMENTS segments per worker, no
 * copies - unless there are more workers than CPUs. Then a worker is
 * descheduled for a whole time slice between loading a hot weight and
 * storing its update, and that store throws away every update the others
 * made meanwhile; a private copy's change is merged as a difference, so
 * its delay costs nothing. */
#define COPY_MIN_SEGMENTS 8u

uint32_t hog_hot_max(uint32_t outputs, int field_aware)
{
    return HOG_MAX((field_aware ? FFM_LOCAL_WEIGHTS : LOCAL_WEIGHTS) / outputs, 1u);
}

typedef struct hot_cand {
    uint32_t feature;
    uint32_t degree;
} hot_cand;

static int hot_cmp(const void *a, const void *b)
{
    const hot_cand *x = a, *y = b;
    if (x->degree != y->degree)
        return x->degree < y->degree ? 1 : -1;
    return (x->feature > y->feature) - (x->feature < y->feature);
}

/* A map of cells cells with no feature placed: an empty cell holds a
 * feature of another cell (0's cell is 0, 1's 1), which no lookup of its
 * own features matches. */
static void map_empty(uint64_t *map, uint32_t cells)
{
    for (uint32_t q = 0; q < cells; q++)
        map[q] = q == 0 ? 1 : 0;
}

/* The map and ids of copies of features 0..top-1, each in the slot of its
 * own number (top at most the map's cells). */
static void map_first(uint64_t *map, uint32_t bits, uint32_t *ids, uint32_t top)
{
    map_empty(map, 1u << bits);
    for (uint32_t j = 0; j < top; j++) {
        map[hog_hot_cell(j, bits)] = (uint64_t)j << 32 | j;
        ids[j] = j;
    }
}

/* The bits of a map with four cells for each of n features (train_run.h,
 * hog_slot_of). */
static uint32_t map_bits_for(uint32_t n)
{
    uint32_t bits = HOT_MAP_MIN_BITS;
    while (bits < HOT_MAP_MAX_BITS && (1u << bits) < 4ull * n)
        bits++;
    return bits;
}

/* Features numbered by frequency, the hottest first (gen_sparse's, and the
 * many vocabularies numbered by count): where the n features chosen all lie
 * below n + n / FIRST_SLACK and the hot ones below as many more than
 * theirs, the copies become those first features, each in the slot of its
 * own number - the few in between that were not chosen are copied too, and
 * those below the last hot one are shared out as the hot ones are. The
 * tuned loops then find a copy by comparing the index, without the map's
 * load and compare: two threads at 2^22 features (gen_sparse, 1,000,000
 * rows, 6 epochs) ran at 1.07x the map's non-zeros/s (median of 4
 * interleaved rounds: 0.90 of two pinned one-thread runs beside them,
 * against 0.82), at 2^24 at 1.13x (0.97 to 0.99 against 0.78 to 0.88).
 * Only for one output and a linear model, whose loops those are. */
#define FIRST_SLACK 8u

/* The first-features form of the copies (above) of the *n features chosen
 * (ids, the first *hot of them hot), in a map of 1 << bits cells: ids and
 * map rewritten for features 0..top-1, *n and *hot set to theirs. Returns
 * top, or 0 where it does not apply (nothing changed then). */
static uint32_t choose_first(uint64_t *map, uint32_t bits, uint32_t **ids, uint32_t *n, uint32_t *hot,
                             uint32_t max_hot)
{
    const uint32_t cells = 1u << bits;
    uint32_t top = 0, htop = 0;
    for (uint32_t i = 0; i < *n; i++) {
        top = HOG_MAX(top, (*ids)[i] + 1);
        if (i < *hot)
            htop = HOG_MAX(htop, (*ids)[i] + 1);
    }
    if (!*n || top > *n + *n / FIRST_SLACK || htop > *hot + *hot / FIRST_SLACK || top > max_hot || top > cells)
        return 0;
    uint32_t *first = hog_malloc(top * sizeof(uint32_t));
    if (!first) /* the map serves as well, a little slower */
        return 0;
    map_first(map, bits, first, top);
    hog_free(*ids);
    *ids = first;
    *n = top;
    *hot = htop;
    return top;
}

int hog_hot_choose(const uint32_t *deg, uint64_t rows, uint64_t dim, uint32_t outputs, unsigned nth, int field_aware,
                   uint64_t **map_out, uint32_t *bits_out, uint32_t **hot_ids, uint32_t *nlocal, uint32_t *nhot,
                   uint32_t *first)
{
    const uint64_t share = field_aware ? FFM_LOCAL_SHARE : LOCAL_SHARE;
    uint64_t segments = (rows + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
    int copies = nth > 1 && (segments >= (uint64_t)COPY_MIN_SEGMENTS * nth || nth > hog_cpus());
    uint32_t max_hot = copies ? hog_hot_max(outputs, field_aware) : 0;
    uint32_t ncand = 0;
    for (uint64_t j = 0; max_hot && j < dim; j++)
        ncand += (uint64_t)deg[j] * share >= rows && deg[j] > 0;
    const uint32_t bits = map_bits_for(HOG_MIN(ncand, max_hot));
    const uint32_t cells = 1u << bits;
    /* whole cache lines: 2^11 cells and up */
    uint64_t *map = hog_aligned_alloc(HOG_CACHELINE, (size_t)cells * sizeof(uint64_t));
    hot_cand *cand = hog_malloc((ncand ? ncand : 1) * sizeof(hot_cand));
    uint32_t *ids = hog_malloc((ncand ? ncand : 1) * sizeof(uint32_t));
    if (!map || !cand || !ids) {
        hog_free(cand);
        hog_free(ids);
        hog_free(map);
        return -ENOMEM;
    }
    map_empty(map, cells);
    uint32_t c = 0;
    for (uint64_t j = 0; j < dim && c < ncand; j++)
        if ((uint64_t)deg[j] * share >= rows && deg[j] > 0)
            cand[c++] = (hot_cand){(uint32_t)j, deg[j]};
    qsort(cand, ncand, sizeof(hot_cand), hot_cmp);
    uint32_t n = 0, hot = 0;
    for (uint32_t i = 0; i < ncand && n < max_hot; i++) {
        const uint32_t j = cand[i].feature, q = hog_hot_cell(j, bits);
        if (hog_hot_cell((uint32_t)map[q], bits) == q) /* a hotter feature holds it */
            continue;
        map[q] = (uint64_t)n << 32 | j;
        ids[n++] = j;
        hot += (uint64_t)cand[i].degree * HOT_SHARE >= rows;
    }
    hog_free(cand);
    *first = outputs == 1 && !field_aware ? choose_first(map, bits, &ids, &n, &hot, max_hot) : 0;
    *map_out = map;
    *bits_out = bits;
    *hot_ids = ids;
    *nlocal = n;
    *nhot = hot;
    return 0;
}

void hog_hot_tiers(feature_tables *tab, const uint32_t *deg, uint64_t rows, int field_aware)
{
    tab->nfast = tab->nlocal;
    tab->warm_every = 1;
    if (!field_aware)
        return;
    tab->nfast = 0; /* the copies are the hottest first */
    while (tab->nfast < tab->nlocal && (uint64_t)deg[tab->hot_ids[tab->nfast]] * FFM_FAST_SHARE >= rows)
        tab->nfast++;
    tab->warm_every = FFM_WARM_EVERY;
}

int hog_hot_first(feature_tables *tab, uint32_t n, uint32_t nhot)
{
    const uint32_t bits = map_bits_for(n);
    if (n > (1u << bits))
        return -ENOMEM;
    uint64_t *map = hog_aligned_alloc(HOG_CACHELINE, ((size_t)1 << bits) * sizeof(uint64_t));
    uint32_t *ids = hog_malloc(HOG_MAX(n, 1u) * sizeof(uint32_t));
    if (!map || !ids) {
        hog_free(map);
        hog_free(ids);
        return -ENOMEM;
    }
    map_first(map, bits, ids, n);
    tab->map = map;
    tab->map_bits = bits;
    tab->hot_ids = ids;
    tab->nlocal = tab->first = tab->nfast = n;
    tab->nhot = nhot;
    tab->warm_every = 1;
    return 0;
}

/* ===================================================================== *
 *  A segment's private copies
 * ===================================================================== */
void hog_hot_begin(const epoch_job *job, worker_state *ws)
{
    const uint32_t K = job->m->outputs;
    ws->warm_since = 0;
    for (uint32_t h = 0; h < job->tab.nlocal; h++) {
        const hog_weight *w = ws->w + (size_t)job->tab.hot_ids[h] * job->m->stride;
        for (uint32_t k = 0; k < K; k++) {
            float v = hog_w_load(&w[k]);
            hog_w_store(&ws->hot[h * K + k], v);
            ws->hot0[h * K + k] = v;
        }
    }
    if (ws->optim.acc)
        for (uint32_t h = 0; h < job->tab.nlocal; h++) {
            const hog_weight *a = ws->optim.acc + (size_t)job->tab.hot_ids[h] * ws->optim.astride;
            for (uint32_t k = 0; k < K; k++) {
                float v = hog_w_load(&a[k]);
                hog_w_store(&ws->hotacc[h * K + k], v);
                ws->hotacc0[h * K + k] = v;
            }
        }
}

/* ===================================================================== *
 *  The copies' first segments
 * ===================================================================== */
/* A run begins with its AdaGrad sums at zero, where a weight's first steps
 * are its longest (the gradient over the root of its own square: the step
 * size each). A private copy starts each segment from the shared sums, so
 * at a run's start every worker took those longest first steps on its own
 * copy of a hot feature, and the changes, summed as a field-aware
 * machine's are, moved the hot factors as far as nth first steps. The
 * damage lasted: on gen_click's 1,000,000 rows (k 4, 2 threads) the run
 * needed 3.06 to 3.51 epochs (median 3.24, 15 runs) to one thread's test
 * loss after 3, where shared hot factors need 2.82 to 3.20. So the first
 * COPY_WARM_SEGMENTS segments per worker of a field-aware machine's run
 * share its hot factors, HOGWILD!'s way, and the copies begin once every
 * hot factor's sums hold some 400 steps or more: 2.92 to 3.08
 * epochs (median 2.97, 7 runs; 2.86 to 3.22, median 2.97, in 18 more
 * runs of this build); 1 segment per worker 2.94 to 3.06, 2 2.94 to 3.04,
 * 8 2.90 and 2.91, 16 2.96 and 3.10. It costs those few segments' shared lines, a
 * few milliseconds. Other models share their hot weights' changes out
 * (hog_segment_run), which does not move a weight further than one
 * worker's steps. */
#define COPY_WARM_SEGMENTS 4u

uint32_t hog_hot_warm_end(const epoch_job *job, int first)
{
    if (!first || !job->m->fields || !job->tab.nlocal || job->tab.whole_every)
        return 0;
    return HOG_MIN(COPY_WARM_SEGMENTS * job->nth, job->nsegments);
}

/* A map of no copies (map_empty's form, 2 cells): never written. */
static uint64_t no_copies[2] = {1, 0};

void hog_hot_pass(epoch_job *job, const feature_tables *tab, uint32_t from, uint32_t warm_end)
{
    job->tab = *tab;
    job->stop_at = job->nsegments;
    if (from >= warm_end)
        return;
    hog_log(HOG_LOG_DEBUG, "the first %u segments share the hot factors; the private copies of %u features begin after them",
            warm_end, tab->nlocal);
    job->stop_at = warm_end;
    job->tab.map = no_copies;
    job->tab.map_bits = 1;
    job->tab.nlocal = job->tab.nhot = job->tab.first = job->tab.nfast = 0;
}

int hog_hot_pass_to_copies(const epoch_job *job)
{
    return job->stop_at < job->nsegments && job->paused_at >= job->stop_at;
}

/* One private copy at the end of a segment: publishes its change to the
 * shared weight and starts the next segment from what the shared weight
 * now holds. A change shared out (a hot weight's, scaled by share below 1)
 * is added with a compare-and-swap: it is a segment's worth of steps, too
 * much to lose to a racing merge. A change summed whole (a warm weight's, a
 * step or two; the AdaGrad sums'; a field-aware machine's factors, whose
 * share is 1) is added with HOGWILD!'s racy update, as its steps would have
 * been: two merges racing on one word lose one change, as two racing steps
 * do. A field-aware machine merges 160 words a copied feature (20 fields, k
 * 4, and their AdaGrad sums) every segment: with a compare-and-swap each,
 * two threads took 3.12 to 3.22 s (median 3.18) to one thread's test loss
 * after 3 epochs on gen_click's 1,000,000 rows, racy 3.09 to 3.14 s (3.13),
 * 0.77 to 0.80 of the parallel limit against 0.79 to 0.81 (4 interleaved
 * rounds). */
static inline void sync_weight(hog_weight *shared, hog_weight *mine, float *mine0, int hot, float share)
{
    float delta = hog_w_load(mine) - *mine0, v;
    if (delta == 0.0f)
        v = hog_w_load(shared);
    else if (hot && share != 1.0f)
        v = hog_w_add(shared, share * delta);
    else {
        v = hog_w_load(shared) + delta;
        hog_w_store(shared, v);
    }
    hog_w_store(mine, v);
    *mine0 = v;
}

/* A feature's K words whose changes are all summed (sync_weight's
 * summed case): four at a time where K is a multiple of four and the
 * shared words are 16-byte aligned, as a factorisation machine's are (80
 * factors and 80 sums a feature at 20 fields and k 4). Four words none of
 * which changed are read and not written, as sync_weight's are; where one
 * of four changed, the others are written back as read, and a racing
 * merge's change to them in the few cycles between is lost, as a racing
 * step's would be. On gen_click (2 threads, 51 features copied) the
 * merges took 0.16 to 0.23 s of CPU in two epochs against 0.18 to 0.26 s
 * one word at a time (3 interleaved profiles); at 204 features, 2.3% of
 * the run's samples against 4.9%. */
static void sync_summed(hog_weight *shared, hog_weight *mine, float *mine0, uint32_t K)
{
    uint32_t k = 0;
    if (K % 4 == 0 && (uintptr_t)shared % 16 == 0 && (uintptr_t)mine % 16 == 0)
        for (; k < K; k += 4) {
            float m[4], v[4];
            hog_w_load_row(m, &mine[k], 4);
            hog_w_load_row(v, &shared[k], 4);
            int changed = 0;
            for (int i = 0; i < 4; i++) {
                const float d = m[i] - mine0[k + i];
                changed |= d != 0.0f;
                v[i] += d;
            }
            if (changed)
                hog_w_store_row(&shared[k], v, 4);
            hog_w_store_row(&mine[k], v, 4);
            memcpy(&mine0[k], v, sizeof(v));
        }
    for (; k < K; k++)
        sync_weight(&shared[k], &mine[k], &mine0[k], 0, 1.0f);
}

/* The end of one segment and the hog_hot_begin of the next in one pass,
 * for copies from to to, so that each shared cache line is fetched once
 * per merge, not twice. The AdaGrad sums' changes are summed, not shared
 * out. Every line a merge writes was written last by another worker's
 * merge, so the records MERGE_AHEAD copies on are asked for with write
 * intent (20 lines in flight at 20 fields and k 4): on gen_click (2
 * threads, 2 epochs, 1,441 copies) the merges took 401 and 1,844 of the
 * run's samples against 804 and 2,344 without (perf, two pairs of runs
 * side by side, the second in a slow spell of the host). */
#define MERGE_AHEAD 2u

static void sync_range(const epoch_job *job, worker_state *ws, float share, uint32_t from, uint32_t to)
{
    const uint32_t K = job->m->outputs;
    for (uint32_t h = from; h < to; h++) {
        if (h + MERGE_AHEAD < to) {
            const size_t f = job->tab.hot_ids[h + MERGE_AHEAD];
            hog_prefetch_words(ws->w + f * job->m->stride, K, 1);
            if (ws->optim.acc)
                hog_prefetch_words(ws->optim.acc + f * ws->optim.astride, K, 1);
        }
        hog_weight *w = ws->w + (size_t)job->tab.hot_ids[h] * job->m->stride;
        if (share == 1.0f || h >= job->tab.nhot)
            sync_summed(w, &ws->hot[h * K], &ws->hot0[h * K], K);
        else
            for (uint32_t k = 0; k < K; k++)
                sync_weight(&w[k], &ws->hot[h * K + k], &ws->hot0[h * K + k], 1, share);
        if (ws->optim.acc)
            sync_summed(ws->optim.acc + (size_t)job->tab.hot_ids[h] * ws->optim.astride, &ws->hotacc[h * K],
                        &ws->hotacc0[h * K], K);
    }
}

void hog_hot_sync(const epoch_job *job, worker_state *ws, float share)
{
    const feature_tables *tab = &job->tab;
    int warm = tab->nfast < tab->nlocal && ++ws->warm_since >= tab->warm_every;
    sync_range(job, ws, share, 0, warm ? tab->nlocal : tab->nfast);
    if (warm)
        ws->warm_since = 0;
}

void hog_hot_flush(const epoch_job *job, worker_state *ws)
{
    if (ws->warm_since) /* counted only where warm copies are (a field-aware machine's: share 1) */
        sync_range(job, ws, 1.0f, job->tab.nfast, job->tab.nlocal);
    ws->warm_since = 0;
}

/* ===================================================================== *
 *  Whole copies
 * ===================================================================== */
/*
 * On a small model the private copies of the hot weights are not enough:
 * every cache line of the model is shared, and with its lines written by
 * every worker each row pays for lines that another core wrote last. On
 * RCV1-shaped data (47,000 features, 2 threads) two workers sharing the
 * model ran at 1.4x one thread's non-zeros/s, where two runs that shared
 * nothing ran at 2x. So when the model is small (WHOLE_WEIGHTS: a copy
 * and its start in a core's L2 cache) each worker trains a copy of the
 * whole model, read and written by it alone on the tuned loops (the loop
 * of one thread, without the slot lookups of private copies), and every
 * whole_every segments merges its change into the model: the hot weights'
 * scaled by the segment's share as their private copies' are, the others'
 * summed (as HOGWILD!'s racy updates would have added them, a merge's
 * worth at a time), and reloads the model. A merge touches every weight,
 * so merges come every WHOLE_COST non-zeros trained per weight of the
 * model (on RCV1's shape, every 10 segments: 10,240 rows per worker), at
 * least WHOLE_MERGES times a worker's epoch and at most WHOLE_MAX_EVERY
 * segments apart. Measured there (plain update, 5 epochs, 2 rounds): two
 * threads ran 1.36x one thread's non-zeros/s sharing the model, 1.19x
 * with merges every segment (WHOLE_COST 1), 1.69x every 3 (4), 1.89x every
 * 10 (16) and 1.90x every 40 (64), two runs sharing nothing 2.0x; the test
 * loss after each epoch matched the shared model's to the second digit
 * at 16 and wandered more at 64. A weight that two merges race on may
 * lose one of them, as HOGWILD! may lose a racing step. One worker has no
 * copy: bit for bit as before.
 */
#define WHOLE_COST 16u
#define WHOLE_MERGES 4u
#define WHOLE_MAX_EVERY 64u

uint32_t hog_whole_every(const hog_train_params *p, unsigned flags, uint32_t outputs, uint64_t weights, uint64_t rows,
                         uint64_t nnz, unsigned nth)
{
    uint64_t segments = (rows + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
    /* The tuned loops (one output, the plain or the normalized update),
     * one model (not replicas), several workers with segments enough. */
    if (nth < 2 || outputs != 1 || (flags & ~OPT_NORMALIZED) || p->loss == HOG_LOSS_SOFTMAX ||
        p->replicas != HOG_REPLICAS_MACHINE || weights > WHOLE_WEIGHTS || segments < (uint64_t)COPY_MIN_SEGMENTS * nth ||
        nnz == 0)
        return 0;
    uint64_t per_segment = HOG_MAX(nnz / segments, 1u);
    uint64_t every = (WHOLE_COST * weights + per_segment - 1) / per_segment;
    /* At least WHOLE_MERGES merges per worker and epoch, and a bound on the staleness. */
    every = HOG_MIN(every, segments / ((uint64_t)WHOLE_MERGES * nth));
    return (uint32_t)HOG_MIN(HOG_MAX(every, 1u), WHOLE_MAX_EVERY);
}

void hog_whole_begin(const epoch_job *job, worker_state *ws)
{
    const hog_weight *w = job->m->w;
    for (uint64_t j = 0; j < ws->own_n; j++) {
        float v = hog_w_load(&w[j]);
        hog_w_store(&ws->own[j], v);
        ws->own0[j] = v;
    }
    ws->own_since = 0;
}

void hog_whole_sync(const epoch_job *job, worker_state *ws)
{
    hog_weight *const w = job->m->w, *const own = ws->own;
    float *const own0 = ws->own0;
    const uint64_t n = ws->own_n;
    /* The hot weights first, shared out; their copies then hold what the
     * model holds, so the pass below finds no change in them. */
    for (uint32_t h = 0; h < job->tab.nhot; h++) {
        uint32_t j = job->tab.hot_ids[h];
        float delta = hog_w_load(&own[j]) - own0[j];
        float v = delta != 0.0f ? hog_w_add(&w[j], ws->own_share * delta) : hog_w_load(&w[j]);
        hog_w_store(&own[j], v);
        own0[j] = v;
    }
    /* Four weights at a time (the arrays are cache-line aligned); a group
     * that did not change is only reloaded. */
    uint64_t j = 0;
    for (; j + 4 <= n; j += 4) {
        float mine[4], shared[4], d[4];
        hog_w_load_row(mine, own + j, 4);
        hog_w_load_row(shared, w + j, 4);
        int changed = 0;
        for (int k = 0; k < 4; k++) {
            d[k] = mine[k] - own0[j + k];
            changed |= d[k] != 0.0f;
        }
        if (changed) {
            for (int k = 0; k < 4; k++)
                shared[k] += d[k];
            hog_w_store_row(w + j, shared, 4);
        }
        hog_w_store_row(own + j, shared, 4);
        memcpy(own0 + j, shared, sizeof(shared));
    }
    for (; j < n; j++) {
        float delta = hog_w_load(&own[j]) - own0[j], v = hog_w_load(&w[j]) + delta;
        if (delta != 0.0f)
            hog_w_store(&w[j], v);
        hog_w_store(&own[j], v);
        own0[j] = v;
    }
    ws->own_since = 0;
}
