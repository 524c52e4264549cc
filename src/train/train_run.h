/* train_run.h: the private interface between the pieces of the HOGWILD! trainer: a run, its epochs, its segments and the state they share. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_RUN_H
#define HOG_TRAIN_RUN_H

#include "train.h"
#include "../net/net.h"

/*
 * The trainer in pieces:
 *   train_run.c       the public lifecycle, a run's set-up and hog_trainer_run
 *   train_epoch.c     one epoch: the workers' loop over segments, their
 *                     order, read-ahead out of core, averaging samples, and
 *                     what follows an epoch (evaluation, early stopping)
 *   train_rows.c      one segment: the per-example kernels (binary,
 *                     softmax, factorisation machine) and the row loops
 *                     specialised for each combination of the optimisers
 *   train_kernels.h   the per-coordinate updates those loops inline: the
 *                     optimisers, the regularisers and how they combine
 *   train_scan.c      what training must know of its data first: the label
 *                     values and each feature's degree and L2 scale
 *   train_hot.c       the workers' private copies of the hot weights, or of the
 *                     whole of a small model
 *   train_layout.c    the model's layout: a large model's feature state packed
 *                     beside its weight, unpacked when the run ends
 *   train_replicas.c  model replicas and their background averaging thread
 *   train_stream.c    the first epoch trained while the text is read, and
 *                     hog_trainer_run_file
 *   train_checkpoint.c checkpoints: when a run pauses to write one, the
 *                     file, and resuming from it; interruption
 */

/* Rows are handed out in segments of this many rows of one block: large
 * enough that claiming one (an atomic add) and publishing the private copies
 * of the hot weights (see hog_hot_begin) cost little per row, small enough
 * that the copies are not too stale and the segments balance the workers. */
#define SEGMENT_ROWS 1024u
/* The most distinct label values a run takes. */
#define MAX_CLASSES 65536u

/* Segments per block of rows_per_block rows: segment b * per_block + s is
 * the s-th SEGMENT_ROWS rows of block b. */
static inline uint32_t segments_per_block(uint32_t rows_per_block)
{
    return (rows_per_block + SEGMENT_ROWS - 1) / SEGMENT_ROWS;
}

/* The most segments an epoch has: a claim's counter keeps its top bit
 * for the pause (see epoch_job.next). */
#define MAX_SEGMENTS 0x80000000u

struct hog_trainer {
    hog_train_params p;
    hog_pool *pool;
    hog_link *link;       /* a multi-node run's, or NULL */
    char *ckpt_path;      /* where checkpoints go (hog_trainer_set_checkpoint), or NULL */
    double ckpt_every;    /* seconds between checkpoints; 0: only when interrupted and at the end */
    int resume;           /* 1: runs continue from ckpt_path */
    atomic_int interrupted; /* hog_trainer_interrupt's flag */
    atomic_int training;  /* 1 while a run's epochs are under way (hog_trainer_interrupt's answer) */
    int stop_fd;          /* an eventfd hog_trainer_interrupt makes readable, which ends a run in one
                             pass's read at once, a read waiting on a quiet pipe too (-1: none) */
    int stopped;          /* hog_trainer_stopped */
    hog_snapshot_fn snap_write; /* hog_trainer_set_snapshots: the write, its context, its count and */
    void *snap_ctx;             /* timer (0: none) */
    uint64_t snap_rows;
    double snap_every;
    atomic_int snap_asked; /* hog_trainer_snapshot's flag */
    double (*now)(void);  /* the checkpoint interval's clock: hog_now, or a test's */
    hog_model *init;      /* the weights runs start from (hog_trainer_set_init), or NULL */
    unsigned data_hash_bits; /* the text being trained on: its hash_bits (hog_trainer_run_file; 0
                                otherwise), which the model keeps */
    int ooc_mapped;       /* 1: out-of-core epochs read through the mapping even where the block
                             source could read with O_DIRECT (a test's, to compare the two) */
};

/* The most weights a model trained in whole copies has (train_hot.c). */
#define WHOLE_WEIGHTS (1u << 17)

/* The OPT_* flags: which optimisers and regularisers the segments run (see
 * train_kernels.h for what each does and how they combine). */
#define OPT_ADAGRAD 1u
#define OPT_NORMALIZED 2u
#define OPT_L1 4u
#define OPT_COUNT 8u

/* The OPT_* flags of p's optimisers. */
static inline unsigned hog_opt_flags(const hog_train_params *p)
{
    return (p->schedule == HOG_SCHEDULE_ADAGRAD ? OPT_ADAGRAD : 0) | (p->normalized ? OPT_NORMALIZED : 0) |
           (p->l1 > 0 ? OPT_L1 : 0);
}

/* The optimisers' per-weight state. Unpacked, each is an array of its own,
 * shared by every worker (replicas too); packed, each points at its word in
 * the first record of the model (or of a replica: each replica's records
 * hold its own state, see replica_set), and the strides step from a
 * feature's to the next's. */
typedef struct optim_state {
    unsigned flags;       /* OPT_* */
    int packed;           /* 1: the model is packed (see above) */
    uint32_t fstride;     /* words from one feature's xmax (inv, cs) to the next's: 1, or the record's */
    uint32_t astride;     /* the same for acc (outputs of them): outputs, or the record's */
    uint32_t lstride;     /* the same for l1s (2 * outputs): 2 * outputs, or the record's */
    hog_weight *acc;      /* adagrad: per weight, the sum of squared gradients */
    hog_weight *bias_acc; /* adagrad: outputs */
    hog_weight *xmax;     /* normalized: per feature, the largest |x| seen (xmax[j * fstride]) */
    hog_weight *inv;      /* packed and normalized: per feature, 1 / xmax (0 where xmax is 0); else NULL */
    hog_weight *cs;       /* packed: per feature, its L2 scale (tab.l2_scale's); else NULL */
    hog_weight *l1s;      /* l1: per weight, the penalty owed and applied (u, q) */
} optim_state;

/* A field-aware factorisation machine's row as hog_ffm_step_avx2 steps it
 * (train_ffm_avx2.c; update_ffm, train_rows.c): each feature's factors and
 * AdaGrad sums, F a multiple of 4. */
typedef struct ffm_step_row {
    hog_weight *const *w, *const *acc;
    const float *val, *l2c;  /* each feature's value, and l2 times its L2 scale */
    const uint16_t *field;
    uint32_t n, F;
    float rg, step, eps;     /* the row's norm times the loss's slope; the step; AdaGrad's epsilon */
} ffm_step_row;

/* update_ffm's AdaGrad step of every pair (a, b > a) of r, two pairs at a
 * time, with the same results as ffm_pair4's one at a time; only on CPUs
 * with AVX2, and not in the sanitizer builds (HOG_W_C11). */
void hog_ffm_step_avx2(const ffm_step_row *r, uint32_t a);

/* One worker's state: its totals, its buffers and its private copies. */
typedef struct worker_state {
    _Alignas(HOG_CACHELINE) double loss;
    uint64_t examples;
    uint64_t nnz;
    float *scratch;   /* 7 * outputs floats: scores, gradient, local bias, its start,
                         the bias's AdaGrad sum and its start, scores to evaluate */
    uint32_t *perm;   /* SEGMENT_ROWS */
    hog_weight *hot;  /* nlocal * outputs: this worker's copy of the hot weights */
    float *hot0;      /* their values at the start of the segment (at the last merge) */
    uint32_t warm_since; /* segments trained since the copies past nfast last merged */
    hog_dense *dense; /* the dense kernel's buffers, or NULL on the sparse kernel */
    hog_weight *w;    /* the weights this worker reads and writes: the model's, or its replica's */
    hog_weight *bias; /* the same for the biases */
    unsigned replica; /* which replica (0 when the model is shared) */
    optim_state optim; /* the optimisers' state this worker steps: the run's, or its replica's
                          (packed replicas); set at every segment (hog_segment_run) */
    hog_weight *hotacc; /* adagrad: the same for the hot weights' squared-gradient sums */
    float *hotacc0;
    float *shrink;    /* the plain loop's L2 shrink per feature (see plain_shrink), or NULL */
    float shrink_reg; /* the reg it was computed for, if shrink_ok */
    int shrink_ok;
    double norm_t;    /* normalized: examples this worker has seen, all epochs */
    double norm_n;    /* normalized: their sum of |x / xmax|^2 (NG's N) */
    float *norm_u;    /* the normalized loop's 1 / xmax^2 of a row's non-zeros (see rows_norm) */
    hog_weight **norm_w; /* with private copies: where each of the row's weights is, found in the first pass */
    uint32_t norm_cap; /* their length */
    hog_weight **ffm_w; /* a field-aware factorisation machine's row: its features' weights, then
                           (at ffm_cap) their AdaGrad sums (train_rows.c, update_ffm) */
    uint32_t ffm_cap;  /* the longest row they hold */
    float *ffm_l2;     /* and ffm_cap floats: l2 times each feature's L2 scale */
    uint32_t *cross_idx; /* with crosses: a row's non-zeros and its crosses' (hog_cross_room of the
                            run's longest row), and their values */
    float *cross_val;
    hog_block xblk;    /* with crosses: the segment's rows crossed (train_rows.c, cross_segment) */
    uint32_t *xptr;    /* its row offsets: SEGMENT_ROWS + 1 */
    uint32_t *xidx;    /* its non-zeros and values, xcap of each */
    float *xval;
    uint64_t xcap;
    hog_eval_sums prog; /* progressive metrics: the last epoch's rows, each scored before its
                           step (epoch_job.prog) */
    hog_weight *own;  /* feature_tables.whole_every: this worker's copy of the whole model */
    float *own0;      /* its values at the last merge */
    uint64_t own_n;   /* weights each holds */
    uint32_t own_since; /* segments trained since the last merge */
    float own_share;  /* the hot weights' share of the last of them (hog_overlap_share) */
} worker_state;

/* The per-feature tables the segments step with, made from the features'
 * degrees (hog_scan_l2_scales, hog_hot_choose). */
typedef struct feature_tables {
    float *l2_scale;   /* per feature: rows / rows touching it, for HOGWILD!'s sparse L2 */
    uint64_t *map;     /* the private copies' slots by feature (see hog_slot_of): 1 << map_bits
                          cells */
    uint32_t map_bits;
    uint32_t *hot_ids; /* the features kept in private copies, by slot, hot first */
    uint32_t nlocal;   /* features kept in private copies */
    uint32_t nhot;     /* the first nhot of them are hot */
    uint32_t nfast;    /* the first nfast of them merge every segment, the others every
                          warm_every segments (a field-aware machine's warm features) */
    uint32_t warm_every;
    uint32_t first;    /* > 0: they are features 0..first-1, each in the slot of its own number,
                          so that the tuned loops test the index and read no map (hog_hot_choose) */
    uint32_t whole_every; /* > 0: each worker trains a copy of the whole model instead, its
                             change merged every whole_every segments (see train_hot.c) */
} feature_tables;

/* The private copies' map: feature j's slot is found in one load, at the
 * cell hog_hot_cell gives, which holds (slot << 32) | feature for the
 * feature placed there and, where none is, a feature of another cell. The
 * lookup is a load from a table the L1 cache holds, a compare and a select
 * (plain_w in train_rows.c), with no branch on whether j has a copy. On
 * hashed features a row's hot ones fall anywhere among its non-zeros, a
 * third of them on power-law data, and a branch on each was mispredicted
 * so often that two threads ran no faster than one: at 2^22 hashed
 * features, 140 to 145 M non-zeros/s against one thread's 143 M, and 218
 * to 220 M with the map (4 interleaved rounds). Where the features are
 * numbered by frequency, so that a row's hot ones come first, the branch
 * was cheap, and the map is no slower. It replaced a slot table of two
 * bytes a feature (32 MiB at 2^24 features) behind a 32 KiB filter of one
 * bit a feature modulo 2^18.
 *
 * hog_hot_choose makes four cells for each feature it places, 2^11 to
 * 2^15 of them (HOT_MAP_MIN_BITS, HOT_MAP_MAX_BITS: 16 to 256 KiB; 32 KiB
 * for 1,024 features), and leaves out of the copies a feature whose cell a
 * hotter one holds: about 1 in 9 of hashed features, the least hot mostly
 * (837 of 911 at 2^22). A cell is j's low bits: the features below the
 * map's size, as numbered by frequency, each have a cell of their own.
 * Features whose low bits repeat (a column's values at a power of two
 * apart) share cells and lose copies; a cell of a hash of all of j would
 * spread them, but its multiply or folds on every lookup's path ran at
 * 0.92 to 0.96 on the features numbered by frequency. */
#define HOT_MAP_MIN_BITS 11u
#define HOT_MAP_MAX_BITS 15u

/* Feature j's cell in a map of 1 << bits cells. */
static inline uint32_t hog_hot_cell(uint32_t j, uint32_t bits)
{
    return j & ((1u << bits) - 1);
}

/* Feature j's slot in the private copies, or -1 (map and bits: the run's
 * tables, see feature_tables). */
static inline int32_t hog_slot_of(const uint64_t *map, uint32_t bits, uint32_t j)
{
    const uint64_t e = map[hog_hot_cell(j, bits)];
    return (uint32_t)e == j ? (int32_t)(e >> 32) : -1;
}

/*
 * The model's layout in a run. A large model is memory-bound: each non-zero
 * of a row is a cache miss (prefetched rows ahead, see train_rows.c), and
 * with the default update it reads three words of a feature: its weight,
 * its largest |x| (the scale) and its L2 scale, one array each, three
 * lines in three pages (AdaGrad's sum and L1's pair are two more). Packed,
 * the run's model holds one record a feature, its words side by side in a
 * power of two of them, so that no record straddles a cache line:
 *
 *     the weights, one an output       always, from word 0
 *     the scale (xmax), 1 / the scale  normalized (the reciprocal 0 where
 *                                      the scale is)
 *     the L2 scale c_j                 always (tab.l2_scale's, copied)
 *     the AdaGrad sums, one an output  adagrad
 *     L1's penalty owed and applied    l1, a pair an output
 *
 * (a record of more than 16 words takes whole cache lines). The default
 * update's record is 16 bytes, four to a line; AdaGrad, L1 and the scale
 * together fill 32; softmax's 10 classes with the scale, 64, a line. A
 * non-zero costs one line, and the
 * reciprocal, computed only when the scale grows, spares the default loop
 * a division per non-zero: the values the unpacked loops compute, so the
 * model is the same bits. Packed: at most PACK_MAX_OUTPUTS outputs, the
 * sparse kernel, one machine, too large for whole copies, and an optimiser
 * with state (the plain loop keeps its weights and a table of shrink
 * factors); everything else keeps one array per kind. Replicas copy the
 * records (replica_set), and the private copies hold a record's weights.
 * The model leaves the run unpacked (hog_run_unpack): the file's layout is
 * its own.
 */
typedef struct pack_layout {
    uint32_t stride;                 /* words a record */
    uint32_t xmax, inv, c, acc, l1;  /* each word's place in it (0: none; the weight's is 0) */
} pack_layout;

/* The most outputs a packed model has (a record of at most 4 * 64 + 3
 * words). */
#define PACK_MAX_OUTPUTS 64u

/* The record of a run with the OPT_* flags and `outputs` outputs. */
static inline pack_layout hog_pack_layout(unsigned flags, uint32_t outputs)
{
    pack_layout l = {0};
    uint32_t n = outputs;
    if (flags & OPT_NORMALIZED) {
        l.xmax = n++;
        l.inv = n++;
    }
    l.c = n++;
    if (flags & OPT_ADAGRAD) {
        if (outputs % 4 == 0) /* rows of four weights stay 16-byte aligned (train_rows.c, ffm_pair4) */
            n = (n + 3) / 4 * 4;
        l.acc = n;
        n += outputs;
    }
    if (flags & OPT_L1) {
        l.l1 = n;
        n += 2 * outputs;
    }
    l.stride = 1;
    while (l.stride < n && l.stride < 16)
        l.stride *= 2;
    if (l.stride < n) /* whole cache lines */
        l.stride = (n + 15) / 16 * 16;
    return l;
}

/* Whether a run of p with `outputs` outputs (on several machines: link)
 * packs its model once it is too large for whole copies, on the sparse
 * kernel: an optimiser with state, few outputs or a factorisation
 * machine's, one machine (replicas pack theirs alike). A field-aware
 * machine's feature is G F weights and as many AdaGrad sums, each pair
 * touching F of each: packed, they share the feature's pages and record,
 * whatever G F is. On gen_click (1,000,000 rows, 20 fields, k 4: 80
 * weights a feature, once past 64 and kept in two arrays) two threads
 * reached one thread's test loss after 3 epochs 1.12x as fast (median of
 * 4 interleaved rounds, 1.09x to 1.24x), one thread ran about 4% faster,
 * and the losses epoch by epoch were the same to the third digit. The
 * run's choice (train_run.c) and the feature ceiling's (train_params.c). */
static inline int hog_may_pack(const hog_train_params *p, uint32_t outputs, int link)
{
    return (outputs <= PACK_MAX_OUTPUTS || p->factors) && hog_opt_flags(p) && !link;
}

/* The default update's record (normalized alone), which its tuned loop
 * reads at fixed places: the weight, the scale, its reciprocal, c_j. */
#define PACK_NORM_STRIDE 4u
#define PACK_NORM_XMAX 1u
#define PACK_NORM_INV 2u
#define PACK_NORM_C 3u


/*
 * Model replicas (DimmWitted's design space, hog_train_params.replicas).
 * With `machine` every worker writes the model itself. With `node` the
 * workers of a NUMA node share a replica in that node's memory, and a
 * background thread keeps averaging the replicas into one another while the
 * epoch runs; with `core` each worker has a replica of its own, written by
 * it alone. Either way, after every epoch the replicas are averaged into
 * the model (which is what is evaluated and saved) and start the next epoch
 * from it. Per-worker copies of hot features would divide a change among
 * workers that never wrote the same weights, so they are kept only among
 * the workers of one replica: none with `core`.
 *
 * A packed model's replicas are packed alike: a replica is a copy of the
 * model's records, so a worker's non-zero costs one line of its replica as
 * it costs one line of the shared model, and each replica's records hold
 * its own optimiser state (the scales, AdaGrad's sums, L1's pairs), as
 * DimmWitted's replicas do. Averaging then merges a record word by word
 * by what the word is (hog_pack_merge): weights, AdaGrad's sums and L1's
 * pairs take the mean, a scale takes the largest (the largest |x| any
 * replica has seen) and its reciprocal follows it, and the L2 scale, the
 * same everywhere, is left as it is. Unpacked, a replica is the weights
 * alone and the state stays one shared array, as before there were
 * records. With one replica (node replicas on one NUMA node) both are the
 * same bits.
 */
typedef struct replica_set {
    unsigned n;            /* replicas; 0: the model is shared (machine) */
    hog_weight **w;        /* n arrays of dim records of stride words (unpacked: outputs weights) */
    hog_weight **bias;     /* n arrays of outputs biases */
    optim_state *optim;    /* n, the optimiser's state each replica steps: in its records (packed), or
                              in arrays of its own (acc, xmax, l1s below); NULL: the model's alone */
    hog_weight **acc;      /* unpacked, per replica: its AdaGrad sums, L1 pairs and feature scales */
    hog_weight **l1s;      /* (the run's arrays' shapes), or NULL where the run has none */
    hog_weight **xmax;
    optim_state run;       /* the run's state (hog_replicas_load): the origin of the unpacked arrays */
    unsigned *members;     /* n: workers writing each replica */
    hog_overlap *clocks;   /* n, one per cache line: segments in flight on each replica */
    uint64_t dim;          /* features */
    uint32_t stride;       /* words a feature: the model's (m->stride) */
    pack_layout layout;    /* packed: the record (stride 0: unpacked, every word a weight) */
    uint32_t outputs;
    const hog_weight *origin;      /* the model's records and biases, which hold what every */
    const hog_weight *origin_bias; /* replica started from: each one's change is measured from them */
    pthread_t thread;      /* node replicas, n > 1: the averaging thread of the running epoch */
    int running;
    atomic_int stop;
    atomic_ullong passes;  /* background averaging passes completed (for the log) */
} replica_set;

/* Polyak-Ruppert averaging: sums of the shared weights sampled at evenly
 * spaced points of each averaged epoch. */
typedef struct avg_state {
    double *sum;          /* dim * outputs weights, then outputs biases; NULL when off */
    uint64_t count;       /* samples summed */
    unsigned from_epoch;  /* 0-based: the first epoch averaged */
    pthread_mutex_t lock; /* one sample at a time (a few per epoch, never per example) */
    int lock_made;        /* 1: lock was initialised */
    hog_model *m;         /* the average, for evaluation */
} avg_state;

/* Early stopping: the best epoch so far. */
typedef struct best_state {
    float *weights;       /* its weights, then biases; NULL when off */
    double loss;          /* its test loss */
    hog_metrics test;
    unsigned epoch;       /* 1-based; 0: none yet */
    unsigned since;       /* epochs since it */
} best_state;

/* How a data set is cut into segments, and their order in an epoch. */
typedef struct segment_plan {
    uint32_t *order;      /* this epoch's order of segments */
    uint32_t *base;       /* every segment, in block order */
    uint32_t *first;      /* blocks + 1: where each block's segments start in base */
    uint32_t *blocks;     /* blocks: scratch for the block order */
    atomic_uint *left;    /* blocks: segments of each block not yet done (out of core) */
    uint32_t nblocks, nsegments, per_block;
} segment_plan;

/* Where a run stands between segments: what a checkpoint records. */
typedef struct run_position {
    unsigned epoch;       /* 0-based: the epoch under way, or the next to run */
    uint32_t segment;     /* segments of its order done (fewer than the epoch has) */
    int finished;         /* 1: no epoch is left (all ran, or early stopping ended the run) */
    uint64_t examples0;   /* examples and training loss summed over the workers when the */
    double loss0;         /* epoch began (for its mean training loss) */
} run_position;

/* A run's checkpoints (train_checkpoint.c). */
typedef struct run_ckpt {
    hog_ckpt_timer timer; /* the trainer's settings and its interrupt flag */
    run_position at;      /* where the epochs start: the beginning, or a checkpoint's position */
    hog_dataset_info data; /* the training data's (hog_run_segments) */
    uint64_t test_fingerprint; /* the test set's, or 0 without one */
} run_ckpt;

/* One run of the trainer over one data set: hog_trainer_run, or the
 * streamed first epoch and then the rest (hog_trainer_run_file). */
/* A run's snapshots (train_snapshot.c): the trainer's settings, and when
 * the last was taken. */
typedef struct snap_state {
    hog_snapshot_fn write; /* NULL: none */
    void *ctx;
    uint64_t every_rows;
    double every_seconds;
    atomic_int *asked;     /* the trainer's hog_trainer_snapshot flag */
    uint64_t last_rows;    /* rows trained at the last snapshot (or the run's start) */
    double last_time;      /* and when (hog_now) */
    double start;          /* the run's start (hog_now) */
} snap_state;

/* Hashed features renumbered for a run's epochs (train_renum.c): the
 * features kept in private copies become the first ones. blocks NULL: the
 * run keeps the file's numbering. */
typedef struct renum_state {
    uint32_t moved;     /* features whose number changes */
    uint32_t *from;     /* [moved]: file feature from[q] is run feature to[q] */
    uint32_t *to;       /* (within from's allocation) */
    uint32_t nlow;      /* the copies' count: they become features 0..nlow-1 */
    uint32_t *low;      /* [nlow]: the run number of each feature below nlow */
    uint32_t *index;    /* the training rows' indices in the run's numbering */
    hog_block *blocks;  /* per block of the training set, its rows with those indices */
    hog_weight *tmp;    /* room for every moved feature's record */
    feature_tables tab; /* the copies' tables in the run's numbering: the first features */
} renum_state;

typedef struct run_state {
    const hog_train_params *p;
    hog_pool *pool;       /* the trainer's: the replicas' memory came from it */
    unsigned nth;         /* workers */
    uint64_t limit;       /* hog_mem_limit */
    hog_model *m;
    unsigned data_hash_bits; /* the trainer's: the model keeps it */
    worker_state *ws;     /* nth */
    uint64_t dim;         /* features the per-feature arrays hold: the model's */
    uint32_t outputs;
    uint32_t classes;
    uint32_t fields;      /* a field-aware factorisation machine's fields (run_fields, train_run.c); 0: not one */
    hog_cross cross;      /* the crosses (run_cross, train_run.c); cross.n 0: none */
    uint32_t longest;     /* with crosses: the most non-zeros of a training row (the scan's) */
    double *classes_of;   /* the label values, ascending */
    hog_kernel kernel;    /* the sparse or the dense kernel, settled (hog_run_kernel) */
    hog_link *link;       /* a multi-node run's link, or NULL */
    unsigned char *mine;  /* multi-node: per block, 1 when this rank trains it (the scan's) */
    unsigned char *link_hot; /* multi-node: per feature, 1 when its changes are averaged across ranks */
    int ooc;              /* out of core (the source's choice): a block's segments kept together */
    hog_block_source *src; /* the training set's blocks (etl_source.c) */
    double first_loss;    /* the first epoch's training loss, for the divergence check (NaN: unknown) */
    float *class_w;       /* per class index, HOG_CLASS_WEIGHT_BALANCED's row weights; NULL: none */
    segment_plan seg;
    uint32_t *deg;        /* per feature: training rows that touch it */
    uint64_t deg_rows;    /* training rows (holdout excluded) counted in deg */
    feature_tables tab;
    renum_state renum;    /* features renumbered for the epochs (renum.blocks NULL: not) */
    optim_state optim;
    avg_state avg;
    best_state best;
    replica_set rep;      /* replicas node|core (rep.n == 0: none) */

    run_ckpt ck;          /* checkpoints, interruption and where the epochs start */
    snap_state snap;      /* snapshots (a run in one pass) */
    const hog_model *init; /* the trainer's initial model (train_warm.c), or NULL */
    int prog_on;          /* progressive training metrics: the workers' prog sums are made */
    int prog_whole;       /* the last epoch began at its first segment in this run: its sums
                             hold every training row */

    /* the epochs so far */
    hog_epoch_stats st;
    double seconds;       /* training seconds */
    unsigned epochs_run;
    _Alignas(HOG_CACHELINE) atomic_uint dense_published; /* the dense kernel's batches (hog_dense_share) */
    hog_overlap clock;    /* segments in flight on the shared model (hog_run_init makes it) */
} run_state;

/* One pass of the workers over a list of segments: an epoch, or a window
 * of the streamed first epoch. */
typedef struct epoch_job {
    const hog_train_params *p;
    hog_model *m;
    const hog_dataset *ds;
    feature_tables tab;       /* the run's, as they are for this pass */
    unsigned nth;             /* workers */
    const uint32_t *segments; /* segment ids in this pass's order */
    uint32_t nsegments;
    uint32_t stop_at;         /* the pass ends at this position: nsegments, or where the private
                                 copies begin (hog_hot_pass) */
    uint32_t per_block;       /* segments per block */
    uint64_t row0;            /* the row number of ds's first row (a window of a streamed epoch) */
    double frac0, frac1;      /* the part of the epoch these segments are: 0 and 1, or a window's */
    int window;               /* 1: a window of the streamed first epoch (train_stream.c) */
    int ooc;                  /* out of core: a block's segments together, the block released after its last */
    atomic_uint *left;        /* out of core: segments of each block not yet done */
    hog_block_source *src;    /* where the blocks come from (a window's: over its blocks in memory) */
    const hog_block *renum;   /* per block, its rows renumbered (run_state.renum), or NULL: src's as they are */
    unsigned epoch;           /* 0-based */
    float mid;                /* binary: labels above this are positive */
    const float *class_w;     /* per class index, the weight of its rows (run_state's); NULL: none */
    float tau;                /* quantile loss */
    optim_state optim;
    avg_state *avg;           /* averaging, or NULL */
    const replica_set *rep;   /* replicas (rep->n == 0: none) */
    worker_state *ws;
    double t0;                /* when the pass started, for progress reports */
    double done_seconds;      /* training seconds before this pass */
    hog_epoch_stats *stats;   /* the epoch's stats so far, for progress reports */
    const atomic_int *stop;   /* multi-node: set when the run must stop, or NULL */
    const hog_link *link;     /* multi-node: the link the workers keep pace with, or NULL */
    const atomic_int *interrupted; /* the trainer's flag: pause when set (NULL: none, multi-node) */
    double (*now)(void);      /* the clock of due */
    double due;               /* pause for a checkpoint once now() reaches this; 0: never */
    uint32_t paused_at;       /* after the pass: the segments claimed (and so done) before it
                                 paused, or nsegments or more when it did not */
    atomic_uint bad_block;    /* a block the source could not give (its read or its check
                                 failed): the workers stop; UINT32_MAX: none */
    int prog;                 /* the last epoch, with progressive metrics: each worker adds every
                                 row's scores before its step to its prog */
    /* The next position to claim. A pause sets its top bit (MAX_SEGMENTS)
     * in the same atomic: every claim before it gets a position below and
     * is trained, every claim after it gets one above nsegments and stops
     * its worker, so the positions trained are exactly a prefix. */
    _Alignas(HOG_CACHELINE) atomic_uint next;
    hog_overlap *clock;       /* segments in flight on the shared model (see replica_set's clocks) */
} epoch_job;

/* ===================================================================== *
 *  A run (train_run.c)
 * ===================================================================== */
/* A run's state before its first epoch. */
void hog_run_init(run_state *rs, hog_trainer *t);

/* Frees everything rs holds, the model included, and zeroes it. */
void hog_run_free(run_state *rs);

/* Sets rs->outputs for rs->classes label values: binary losses need
 * exactly two, softmax at least two (one output each). Returns 0 or
 * HOG_ELABEL with a message. */
int hog_run_outputs(run_state *rs, char *err, size_t err_len);

/* A factorisation machine's factors of features [from, to) set to their
 * first values (hog_train_params.factors, factor_init); nothing for a
 * linear model. */
void hog_run_init_factors(run_state *rs, uint64_t from, uint64_t to);

/* Settles rs->kernel for data of rows, features and nnz: by density for
 * auto; options the dense kernel lacks send auto to the sparse one (*forced
 * then names the option, else it is NULL) and refuse a forced dense one
 * (HOG_EPARAM). */
int hog_run_kernel(run_state *rs, uint64_t rows, uint64_t features, uint64_t nnz, const char **forced, char *err,
                   size_t err_len);

/* Logs the kernel hog_run_kernel settled, and why when an option forced it. */
void hog_run_log_kernel(const run_state *rs, const char *forced, uint64_t rows, uint64_t features, uint64_t nnz);

/* Makes the model (rs->dim features, rs->outputs outputs) and everything
 * the epochs share that does not depend on how the data is cut into blocks:
 * the workers' buffers, replicas and the optimisers' per-weight state.
 * rs->deg and the feature tables are the caller's. Returns 0, -ENOMEM or
 * HOG_EPARAM (dense buffers over the memory limit; err says so). */
int hog_run_alloc(run_state *rs, char *err, size_t err_len);

/* (Re)builds the feature tables from rs->deg. Returns 0 or -ENOMEM. */
int hog_run_tables(run_state *rs);

/* ---- the model's layout (train_layout.c) ---- */
/* Packed: points the optimiser's per-feature views into the model's
 * records (after the model is made or grown). */
void hog_run_pack_views(run_state *rs);

/* Packed: the records' L2 scales of features [from, to) from
 * tab.l2_scale (after the scales change). */
void hog_run_pack_l2(run_state *rs, uint64_t from, uint64_t to);

/* Packed: the records' 1 / scale of every feature from its scale (after
 * the scales are set from elsewhere: a checkpoint, an initial model). */
void hog_run_pack_inv(run_state *rs);

/* The end of a run: a packed model's weights compacted (stride = outputs)
 * and its scales taken out into an array of their own (optim.xmax, which
 * then owns it). Returns 0 or -ENOMEM. */
int hog_run_unpack(run_state *rs);

/* What needs the model's final size: averaging and early stopping.
 * Returns 0 or -ENOMEM. */
int hog_run_alloc_final(run_state *rs);

/* The model's record of its run and its data (its parameters, the data's
 * fingerprint, skipped lines and index base); hog_run_segments sets it. */
void hog_run_model_info(run_state *rs, const hog_dataset *train);

/* The segments of train's blocks, and the model's record of its data.
 * Returns 0, -ENOMEM or HOG_EPARAM (MAX_SEGMENTS or more; err says so). */
int hog_run_segments(run_state *rs, const hog_dataset *train, char *err, size_t err_len);

/* Trains on train as hog_trainer_run does; resume: the checkpoint to
 * continue from (hog_checkpoint_read's, checked against t already), or
 * NULL to start afresh. */
typedef struct checkpoint checkpoint;
int hog_run_dataset(hog_trainer *t, const hog_dataset *train, const hog_dataset *test, checkpoint *resume,
                    hog_model **out, char *err, size_t err_len);

/* ===================================================================== *
 *  Hashed features renumbered (train_renum.c)
 * ===================================================================== */
/* Before the epochs from..epochs-1 over train (after the tables, the
 * segments and any checkpoint): renumbers the features into rs->renum
 * where the run applies (train_renum.c says which), else leaves it empty.
 * Returns 0, -ENOMEM or the training set's read error (err says which). */
int hog_run_renumber(run_state *rs, const hog_dataset *train, unsigned from, char *err, size_t err_len);

/* Around a pass of the workers: the model's records and the per-feature
 * tables into the run's numbering, and back to the file's. Nothing when
 * the run keeps the file's numbering. */
void hog_renum_enter(run_state *rs);
void hog_renum_leave(run_state *rs);

/* Frees what r holds and empties it. */
void hog_renum_free(renum_state *r);

/* ===================================================================== *
 *  A run from an initial model (train_warm.c)
 * ===================================================================== */
/* The model's features for data of dim: the larger of dim and the
 * initial model's (dim when there is none). */
uint64_t hog_warm_dim(const run_state *rs, uint64_t dim);

/* After the scan: refuses a multi-node run and another loss (HOG_EPARAM),
 * and labels the initial model lacks (HOG_ELABEL); the run's classes
 * become the initial model's. */
int hog_warm_classes(run_state *rs, char *err, size_t err_len);

/* After hog_run_alloc: the model and its replicas start from the initial
 * model's weights and biases. */
void hog_warm_weights(run_state *rs);

/* ===================================================================== *
 *  Epochs (train_epoch.c)
 * ===================================================================== */
/* A job for epoch e over rs's model and tables; the caller sets the
 * segments. */
epoch_job hog_epoch_job(run_state *rs, unsigned e);

/* Runs the pool over job's segments: one pass of the workers. */
void hog_epoch_pass(run_state *rs, epoch_job *job);

/* Epochs from..epochs-1 over train (from 1: the first ran while train was
 * read, and is evaluated first), then the model kept (the best epoch's,
 * else the average, else the last) and its training metrics: *out, taken
 * from rs. Returns 0, HOG_EEMPTY (every row held out) or an evaluation
 * error. */
int hog_epochs_run(run_state *rs, const hog_dataset *train, const hog_dataset *test, unsigned from, hog_model **out,
                   char *err, size_t err_len);

/* ===================================================================== *
 *  Checkpoints (train_checkpoint.c)
 * ===================================================================== */
/* A checkpoint file read into memory: its scalars and where its arrays
 * lie in buf. */
struct checkpoint {
    char *path;
    unsigned char *buf;       /* the whole file */
    size_t len;
    uint64_t dim;
    uint32_t outputs, classes, workers, sections; /* sections: CKPT_* */
    hog_train_params p;       /* the parameters it was made with */
    char cross[HOG_CROSS_SPEC]; /* their interactions as hog_cross.spec writes them ("": none) */
    uint64_t fingerprint, rows, features;   /* its data */
    unsigned blocks, rows_per_block;
    uint64_t test_fingerprint; /* its test set's, or 0 without one */
    hog_kernel kernel;
    int ooc;
    unsigned segments;        /* of the data: the epoch's order's length */
    run_position at;
    hog_epoch_stats st;
    double seconds;
    unsigned epochs_run;
    best_state best;          /* weights: NULL (see best_w) */
    uint64_t avg_count;
    const unsigned char *labels, *bias, *w, *workers_at, *acc, *bias_acc, *xmax, *l1s, *avg_sum, *best_w;
};

/* What a checkpoint holds beyond the model and the workers' totals. */
#define CKPT_ADAGRAD 1u
#define CKPT_NORMALIZED 2u
#define CKPT_L1 4u
#define CKPT_AVERAGE 8u
#define CKPT_BEST 16u

/* Reads and checks the checkpoint at path into *ck: its magic, version,
 * sizes and checksum, then that it was made with p (every field but those
 * a resumed run may change). Returns 0, -errno, -ENOMEM, HOG_EMAGIC,
 * HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT or HOG_EPARAM
 * (the field and both values in err). hog_checkpoint_free frees it. */
int hog_checkpoint_read(const char *path, const hog_train_params *p, checkpoint *ck, char *err, size_t err_len);
void hog_checkpoint_free(checkpoint *ck);

/* Before a run: refuses what a run with t's checkpoint settings may not
 * do (HOG_EPARAM for a multi-node run) and, when t resumes, reads its
 * checkpoint into *ck (hog_checkpoint_read): *resume is then ck, else
 * NULL. *ck is ready for hog_checkpoint_free whatever happens. */
int hog_run_checkpoint_open(hog_trainer *t, checkpoint *ck, checkpoint **resume, char *err, size_t err_len);

/* Before the scan: HOG_EPARAM unless ck was made on train's data and with
 * test (or none again). */
int hog_checkpoint_data(const checkpoint *ck, const hog_dataset *train, const hog_dataset *test, char *err,
                        size_t err_len);

/* Once a run's crosses are counted (hog_train_params.l2_crossed): HOG_EPARAM
 * unless l2, the run's penalty times its crosses' factor, is the one ck
 * was made with (the comparison of the parameters left it out). */
int hog_checkpoint_l2(const checkpoint *ck, double l2, char *err, size_t err_len);

/* After the run's set-up: checks that ck fits it (kernel, outputs, labels,
 * segments) and loads its state: the model, the workers' totals, the
 * optimisers' arrays, early stopping, averaging, the statistics, and
 * rs->ck.at. Returns 0 or HOG_ECORRUPT. */
int hog_checkpoint_apply(const checkpoint *ck, run_state *rs, char *err, size_t err_len);

/* After a window of a run in one pass, when no worker runs: hands the
 * snapshot write (rs->snap) a model of the rows trained so far if one is
 * due (a count, a timer, hog_trainer_snapshot) and rows were trained since
 * the last; its failure is logged, never returned (train_snapshot.c). */
void hog_run_snapshot(run_state *rs);

/* Empties t's stop_fd unless an interrupt is pending (the flag set): a
 * signal that another kind of run took, or that a run in one pass ended
 * on, must not end the next one's read (train_checkpoint.c). */
void hog_trainer_stop_settle(hog_trainer *t);

/* At a point where the model is consistent (between epochs, with a pass
 * paused after at->segment segments of its epoch, or after the last epoch):
 * writes the checkpoint when one is set and due, or force is set (the
 * workers found it due; the last one), or the run is interrupted. Returns
 * 0 (go on), HOG_EINTERRUPTED (after writing it, if one is set; the flag
 * is cleared) or, interrupted, the error of writing it. A checkpoint the
 * timer asked for that cannot be written is a warning. A multi-node run
 * takes no checkpoint and stops through its link: 0. */
int hog_run_pause(run_state *rs, const run_position *at, int force, char *err, size_t err_len);

/* ===================================================================== *
 *  A segment (train_rows.c)
 * ===================================================================== */
/* The step size of the segment at pos of job's pass. */
float hog_segment_step(const epoch_job *job, uint32_t pos);

/* Trains the segment at pos of job's pass on worker ws; fresh: the private
 * copies hold what the shared weights held at the end of this worker's
 * previous segment of the job (see hog_hot_sync). */
void hog_segment_run(epoch_job *job, worker_state *ws, uint32_t pos, const hog_block *blk, int fresh);

/* ===================================================================== *
 *  Labels and degrees (train_scan.c)
 * ===================================================================== */
/* Adds y to the ascending set c[0..*n) unless it is there.
 * Returns 0, or HOG_ELABEL when the set is full (MAX_CLASSES). */
int hog_class_insert(double *c, uint32_t *n, double y);

/* The summary of labels and degrees a .hgd carries (hog_hgd_summary),
 * when it says all the scan would count for this run: degrees of every
 * feature, the rows without a holdout, on one node, the labels listed (and
 * classes, for softmax). NULL: the scan counts them. */
const hog_hgd_summary *hog_scan_summary(const hog_dataset *ds, const hog_train_params *p, const unsigned char *mine);

/* What training needs to know of its data before the first step, in one
 * pass on the pool's workers (out of core, one read of the file), each
 * block checked as it is read: the distinct label values of
 * every row, ascending (not for regression), and for each feature the
 * number of training rows (holdout excluded) that touch it, the crosses
 * of cross (NULL: none) among them, and where the scan reads the rows,
 * the most non-zeros of one in *longest (which it only raises). On success
 * *classes, *nclasses, *deg and *rows are set; the caller frees the arrays.
 * The blocks come through src, in a pass that checks them (and over every
 * block, the header's counts against them: hog_block_source_end).
 * mine (NULL: all) limits the scan to the blocks it marks (a rank's share).
 * A .hgd whose summary says all of it (hog_scan_summary) is not read: its
 * blocks are checked as the epochs first read them.
 * Errors: HOG_ELABEL (with a message), the source's, -ENOMEM. */
int hog_scan_training_set(const hog_dataset *ds, const hog_train_params *p, const hog_cross *cross, uint32_t *longest,
                          uint64_t dim, hog_block_source *src, const unsigned char *mine, hog_pool *pool,
                          double **classes, uint32_t *nclasses, uint32_t **deg, uint64_t *rows, char *err,
                          size_t err_len);

/* Each feature's L2 scale from the degrees deg[0..dim) of rows training
 * rows, into l2_scale[0..dim): rows / degree, 0 for a feature no row
 * touches (HOGWILD!'s sparse L2, see train_scan.c). */
void hog_scan_l2_scales(const uint32_t *deg, uint64_t rows, uint64_t dim, float *l2_scale);

/* The degrees of a window of the streamed first epoch (train_stream.c),
 * counted one window ahead of training by a thread of its own, which owns
 * deg while it runs. */
typedef struct window_count {
    const hog_train_params *p;
    const double *classes;  /* the label values the run has (classes of them) */
    uint32_t nclasses;
    const hog_block *blks;  /* the window to count */
    uint32_t n;
    uint64_t row0;          /* its first row's number */
    uint32_t rpb;
    uint32_t *deg;          /* per feature, deg_cap of them */
    size_t deg_cap;
    uint64_t deg_rows;      /* training rows counted */
    uint64_t top;           /* the window's largest index + 1 */
    uint32_t fields;        /* a field-aware run's fields (its blocks' must be fewer); 0: not one */
    const hog_cross *cross; /* the crosses whose degrees are counted too (their features fit deg), or NULL */
    uint32_t longest;       /* the most non-zeros of a row counted so far */
    int rc;                 /* 0, -ENOMEM, or 1: a label (or field) the run does not have */
    char why[96];
    uint32_t bad_block, bad_row; /* rc 1: where that label is (blks[bad_block], its row bad_row) */
    float bad_label;
    int bad_field;          /* rc 1: the field that is not the run's, or -1 (the label is) */
} window_count;

/* Before hog_run_outputs: a field-aware run's fields, the training data's
 * (`fields`, hog_dataset_fields, or a streamed run's first blocks') or, on
 * a warm start, the initial model's; 0 for other runs (train_run.c).
 * HOG_EPARAM when the data has none, or fields the initial model lacks. */
int hog_run_fields(run_state *rs, uint32_t fields, char *err, size_t err_len);

/* Before the scan: a run with hog_train_params.interactions reads them
 * into rs->cross, its crosses' features following the data's `features`
 * (a warm start's: the initial model's), and makes rs->dim room for them.
 * HOG_EPARAM for rules it cannot read, a model kind that takes none, rules
 * naming fields the data lacks (fields 0), or more features than indices
 * hold. */
int hog_run_cross(run_state *rs, uint64_t features, uint32_t fields, char *err, size_t err_len);

/* After hog_run_alloc, with crosses: every worker's room to cross a row of
 * longest non-zeros (rs->longest grows to it). Returns 0, -ENOMEM, or
 * HOG_EPARAM (a row with more crosses than 32-bit counts hold). */
int hog_run_cross_room(run_state *rs, uint32_t longest, char *err, size_t err_len);

/* Counts c's window into c->deg (grown to its largest index), c->deg_rows
 * and c->top; sets c->rc. A pthread start routine; returns NULL. */
void *hog_window_count(void *arg);

/* ===================================================================== *
 *  Private copies of the hot weights, whole copies (train_hot.c)
 * ===================================================================== */
/* The most features a worker keeps private copies of, for outputs weights
 * each. */
uint32_t hog_hot_max(uint32_t outputs, int field_aware);

/* The tables of copies of features 0..n-1, the first nhot of them hot, in
 * the first-features form (feature_tables.first = n): map, hot_ids, nlocal,
 * nhot and first of *tab set, its other fields left. Returns 0, or -ENOMEM
 * with *tab unchanged (or n more than HOT_MAP_MAX_BITS' cells). */
int hog_hot_first(feature_tables *tab, uint32_t n, uint32_t nhot);

/* Chooses the features kept in private copies from the training rows'
 * feature degrees, for nth workers sharing copies (a field-aware
 * machine's, of fewer features: train_hot.c): *map (1 << *bits cells, see
 * hog_slot_of) gives features (*hot_ids)[0..*nlocal-1] the slots 0..*nlocal-1
 * and every other feature -1; the first *nhot of them are hot. Where the
 * features are numbered by frequency, so that those chosen are nearly the
 * first ones, the copies become features 0..*first-1 in slots of their own
 * numbers (*first = *nlocal; else *first = 0). Returns 0 or -ENOMEM
 * (nothing allocated then). */
int hog_hot_choose(const uint32_t *deg, uint64_t rows, uint64_t dim, uint32_t outputs, unsigned nth, int field_aware,
                   uint64_t **map, uint32_t *bits, uint32_t **hot_ids, uint32_t *nlocal, uint32_t *nhot,
                   uint32_t *first);

/* Where the private copies begin in job's positions (0: from the first),
 * for the pass that begins the run's training when first is set: see
 * train_hot.c, "The copies' first segments". */
uint32_t hog_hot_warm_end(const epoch_job *job, int first);

/* Sets job's tables to tab, or to no copies where the pass from position
 * from lies before warm_end (hog_hot_warm_end), and where the pass stops:
 * at warm_end then, else at the end of job's segments. */
void hog_hot_pass(epoch_job *job, const feature_tables *tab, uint32_t from, uint32_t warm_end);

/* Whether job's pass ended, unpaused, where the private copies begin: the
 * positions before job->stop_at were trained, claims past it trained
 * nothing, and the next pass starts at job->stop_at. */
int hog_hot_pass_to_copies(const epoch_job *job);

/* Loads the private copies of ws from the shared weights (the first
 * segment of a pass). */
void hog_hot_begin(const epoch_job *job, worker_state *ws);

/* Publishes the change of ws's private copies over a segment, hot weights'
 * scaled by share, and starts the next segment from the result: the first
 * job->tab.nfast copies every segment, the others every warm_every. */
void hog_hot_sync(const epoch_job *job, worker_state *ws, float share);

/* Publishes what the copies past job->tab.nfast changed since their last
 * merge (a pass's end: hog_hot_sync merged the others). */
void hog_hot_flush(const epoch_job *job, worker_state *ws);

/* The warm tier of the copies hog_hot_choose chose for a field-aware
 * machine (ids, n of them, hottest first) from the features' degrees over
 * rows rows: sets tab->nfast and tab->warm_every (all copies merge every
 * segment for other models). */
void hog_hot_tiers(feature_tables *tab, const uint32_t *deg, uint64_t rows, int field_aware);

/* The segments between the merges of whole copies of a model of weights
 * weights trained by nth workers on rows rows holding nnz non-zeros with
 * the given OPT_* flags, or 0 where the workers share the model (and its
 * private copies of hot weights) instead: see train_hot.c. */
uint32_t hog_whole_every(const hog_train_params *p, unsigned flags, uint32_t outputs, uint64_t weights, uint64_t rows,
                         uint64_t nnz, unsigned nth);

/* Whether job's segments train whole copies (not a streamed window's). */
static inline int hog_whole_on(const epoch_job *job)
{
    return job->tab.whole_every && !job->window;
}

/* Loads ws's whole copy from the model (the first segment of a pass). */
void hog_whole_begin(const epoch_job *job, worker_state *ws);

/* Merges ws's whole copy's change into the model: hot weights' scaled by
 * ws->own_share with a compare-and-swap, the others summed; the copy then
 * holds the model as it is. */
void hog_whole_sync(const epoch_job *job, worker_state *ws);

/* ===================================================================== *
 *  Replicas (train_replicas.c)
 * ===================================================================== */
/* Makes the replicas of `kind` for the pool's workers, each in the memory
 * of the node of the first worker writing it, laid out as the model is
 * (o->packed: records), and points every worker at its replica (or at the
 * model); hog_replicas_load fills them. Returns 0 or -ENOMEM (then
 * hog_replicas_free frees what was made). */
int hog_replicas_make(replica_set *r, hog_replicas kind, hog_pool *pool, hog_model *m, const optim_state *o,
                      worker_state *ws, unsigned nth);
void hog_replicas_free(replica_set *r, hog_pool *pool);

/* Before the first epoch: every replica becomes a copy of the model (its
 * records whole when packed: weights, state and L2 scales; o, the run's
 * optimiser state, gives the views into each replica's records). */
void hog_replicas_load(replica_set *r, const hog_model *m, const optim_state *o);

/* After an epoch: the model and every replica become the replicas' mean
 * (packed: their merge, see replica_set). */
void hog_replicas_average(const replica_set *r, hog_pool *pool, hog_model *m);

/* Node replicas: starts and stops the thread that averages the replicas
 * while an epoch runs (nothing with fewer than two). */
void hog_replicas_background_start(replica_set *r);
void hog_replicas_background_stop(replica_set *r);

/* ===================================================================== *
 *  Several machines (train_link.c)
 * ===================================================================== */
/* Refuses the settings a multi-node run does not take (crosses, early
 * stopping, averaging, replicas). Returns 0 or HOG_EPARAM with a message. */
int hog_link_run_check(const hog_train_params *p, char *err, size_t err_len);

/* Before the scan: which blocks of train this rank trains (rs->mine). */
int hog_link_run_share(run_state *rs, const hog_dataset *train);

/* After the scan and run_fields: meets the other ranks and takes the
 * agreed labels, features and (a field-aware machine's) fields; *rows
 * gets the run's training rows, every rank's file counted once (the
 * rows l2_rows divides). Returns 0, -ENOMEM, HOG_ENET, or HOG_EPARAM for
 * fields and factors that make too long a row. */
int hog_link_run_join(run_state *rs, const hog_dataset *train, uint64_t *rows, char *err, size_t err_len);

/* After the model is made: hands the link the arrays kept in step and
 * starts it. Returns 0, -ENOMEM, -errno, or HOG_EPARAM for a model of
 * more values than a frame carries. */
int hog_link_run_start(run_state *rs, char *err, size_t err_len);

#endif /* HOG_TRAIN_RUN_H */
