/* train_mf.h: the private interface of matrix factorisation: the model object and the SGD step. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_MF_H
#define HOG_TRAIN_MF_H

#include "../etl/etl.h" /* ratings: triples and name maps */
#include "../net/net.h" /* several machines */
#include "train.h"

#define HOG_MF_MAX_RANK 1024u

struct hog_mf_model {
    hog_mf_info info;
    uint32_t stride;    /* floats between factor rows: rank rounded up to 16 (64 bytes) */
    hog_weight *p;      /* users * stride, user factor rows, cache-line aligned */
    hog_weight *q;      /* items * stride */
    hog_weight *bu;     /* users */
    hog_weight *bi;     /* items */
    hog_weight *gp;     /* HOG_SCHEDULE_ADAGRAD while training: per user row, its G (1 plus its
                           factors' mean squared gradients so far); NULL otherwise */
    hog_weight *gq;     /* the same per item row */
    hog_mf_model *best; /* params.early_stop while training: the best epoch's biases and factors
                           (its p, q, bu and bi only); NULL otherwise */
    unsigned epochs_run, best_epoch; /* hog_mf_get_epochs */
    hog_idmap users, items;
};

/* A zeroed model with the given shape and owned, empty name maps.
 * Returns NULL on -ENOMEM. */
hog_mf_model *hog_mf_new(uint32_t users, uint32_t items, uint32_t rank);

/* Frees AdaGrad's sums (training state: a model predicts without them). */
void hog_mf_adagrad_free(hog_mf_model *m);

/* Whether every bias and factor of m is finite (a model file never holds
 * NaN or infinity). */
int hog_mf_finite(const hog_mf_model *m);

/* The loss of one rating as hog_mf_step minimises it, in double:
 * 1/2 e^2 + l2/2 (|p|^2 + |q|^2) + l2b/2 (bu^2 + bi^2), e = r - prediction. */
double hog_mf_rating_loss(uint32_t k, double mean, double bu, double bi, const float *p,
                          const float *q, double r, double l2, double l2b);

/* One SGD step on one rating, on private copies p[0..k), q[0..k) and the
 * biases (the trainer loads them from and stores them to the shared model):
 * each parameter moves by -step times its gradient of hog_mf_rating_loss.
 * Returns e, the error before the step. Plain floats so the compiler
 * vectorises the dot product and the update. */
static inline float hog_mf_step(uint32_t k, float mean, float *restrict bu, float *restrict bi,
                                float *restrict p, float *restrict q, float r, float step, float l2,
                                float l2b)
{
    /* Four partial sums, so the dot product is one vector of them (a
     * single sum in order is a chain no compiler may reorder). */
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    uint32_t f = 0;
    for (; f + 4 <= k; f += 4)
        for (uint32_t j = 0; j < 4; j++)
            acc[j] += p[f + j] * q[f + j];
    float dot = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (; f < k; f++)
        dot += p[f] * q[f];
    float e = r - (mean + *bu + *bi + dot);
    float se = step * e, sr = 1.0f - step * l2;
    for (uint32_t c = 0; c < k; c++) {
        float pc = p[c], qc = q[c];
        p[c] = sr * pc + se * qc;
        q[c] = sr * qc + se * pc;
    }
    *bu += step * (e - l2b * *bu);
    *bi += step * (e - l2b * *bi);
    return e;
}

/* hog_mf_step under HOG_SCHEDULE_ADAGRAD: the user's factors and bias
 * move by -step / sqrt(*gu) times their gradients, the item's by
 * -step / sqrt(*gi), and then each sum adds its row's mean squared factor
 * gradient (over the rank's inv_rank = 1 / rank factors; a stride's zero
 * padding adds nothing). Returns e, the error before the step. */
static inline float hog_mf_step_adagrad(uint32_t k, float mean, float *restrict bu, float *restrict bi,
                                        float *restrict gu, float *restrict gi, float *restrict p,
                                        float *restrict q, float r, float step, float l2, float l2b,
                                        float inv_rank)
{
    const float su = step / sqrtf(*gu), si = step / sqrtf(*gi);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f}, g2p[4] = {0.0f, 0.0f, 0.0f, 0.0f}, g2q[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (uint32_t c = 0; c < k; c++)
        acc[c % 4] += p[c] * q[c];
    float e = r - (mean + *bu + *bi + ((acc[0] + acc[2]) + (acc[1] + acc[3])));
    for (uint32_t c = 0; c < k; c++) {
        float dp = e * q[c] - l2 * p[c], dq = e * p[c] - l2 * q[c];
        g2p[c % 4] += dp * dp;
        g2q[c % 4] += dq * dq;
        p[c] += su * dp;
        q[c] += si * dq;
    }
    *bu += su * (e - l2b * *bu);
    *bi += si * (e - l2b * *bi);
    *gu += ((g2p[0] + g2p[2]) + (g2p[1] + g2p[3])) * inv_rank;
    *gi += ((g2q[0] + g2q[2]) + (g2q[1] + g2q[3])) * inv_rank;
    return e;
}

/* ===================================================================== *
 *  The grid (train_mf_grid.c): FPSGD's schedule
 * ===================================================================== */
#define HOG_MF_MAX_GRID 4096u

/* The ratings bucketed into b x b blocks of (user band, item band), and
 * the scheduler of an epoch: a sequence of positions in an order of the
 * blocks, each claimed by one worker at a time, never two holding blocks
 * of the same user band or the same item band. So within a block a
 * worker owns every row it touches: the rows need no atomics beyond the
 * relaxed hog_w_load/hog_w_store that every weight access makes, and the
 * mutex, taken once per block (thousands of updates), orders one worker's
 * writes to a band before the next holder's reads. */
typedef struct mf_grid {
    uint32_t b;            /* bands per side */
    uint32_t blocks;       /* b * b */
    uint64_t *start;       /* blocks + 1: block k holds triples [start[k], start[k + 1]) */
    /* The epoch under way: positions in order, guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t freed;  /* a block was given back */
    int sync_made;         /* mu and freed are initialised */
    const uint32_t *order; /* the epoch's blocks, order[0..n) */
    uint32_t n;
    unsigned char *state;  /* per position: 0 unclaimed, 1 held, 2 done */
    unsigned char *busy;   /* 2b: user bands, then item bands, held by some worker */
    uint32_t lo;           /* every position below is claimed */
    uint32_t top;          /* one past the highest position claimed */
    uint32_t end;          /* positions from here on are not handed out: n, or top once paused */
} mf_grid;

/* The bands per side of a grid for nth workers on n ratings when the
 * caller asked for want (0: choose). */
uint32_t hog_mf_grid_bands(uint32_t want, unsigned nth, uint64_t n);

/* Buckets t[0..n) in place into g->b x g->b blocks (g->b set): users and
 * items fall in bands by a random permutation of each drawn from seed, so
 * the blocks hold about equal numbers of ratings whatever the ids' order.
 * Within a block the triples keep a seeded random order. Allocates g's
 * arrays (hog_mf_grid_free). Returns 0 or -ENOMEM. */
int hog_mf_grid_build(mf_grid *g, hog_mf_triple *t, uint64_t n, uint32_t users, uint32_t items, uint64_t seed);
void hog_mf_grid_free(mf_grid *g);

/* Starts an epoch over order[0..n) with positions [0, done) already
 * trained. Not thread-safe: between pool runs. */
void hog_mf_grid_begin(mf_grid *g, const uint32_t *order, uint32_t n, uint32_t done);

/* Claims the first unclaimed position whose block shares no band with a
 * held one, waiting while there is none but some are held; *pos is it.
 * Returns 1, or 0 when there is nothing left to claim. Thread-safe. */
int hog_mf_grid_claim(mf_grid *g, uint32_t *pos);

/* Gives position pos back, trained. pause: stop handing out positions
 * past the highest claimed one, so that once the held ones are done the
 * positions trained are exactly a prefix of the order. Thread-safe. */
void hog_mf_grid_release(mf_grid *g, uint32_t pos, int pause);

/* After the workers are done: the length of the prefix trained when the
 * epoch paused, or g->n when it ran to its end. */
uint32_t hog_mf_grid_paused_at(const mf_grid *g);

/* ===================================================================== *
 *  Stopping a run and its checkpoints (train_mf.c, train_mf_checkpoint.c)
 * ===================================================================== */
struct hog_mf_control {
    atomic_int interrupted; /* hog_mf_interrupt's flag */
    atomic_int training;  /* 1 while a run's epochs are under way (hog_mf_interrupt's answer) */
    char *ckpt_path;      /* where checkpoints go, or NULL */
    double ckpt_every;    /* seconds between them; 0: only when interrupted and at the end */
    int resume;           /* 1: runs go on from ckpt_path */
    double (*now)(void);  /* the clock of ckpt_every: hog_now, or a test's */
    int stop_fd;          /* an eventfd hog_mf_interrupt makes readable: it ends a run in one pass's read, even
                             one waiting on a quiet pipe (-1: none; the run then stops after its next batch) */
    /* Snapshots of a run in one pass (hog_mf_control_set_snapshots) */
    uint64_t snap_rows;   /* every this many ratings (0: not by count) */
    double snap_seconds;  /* every this many seconds (0: not by time) */
    int (*snap_write)(void *ctx, const hog_mf_model *m);
    void *snap_ctx;
    atomic_int snap_asked; /* hog_mf_snapshot's flag */
};

/* Ratings are handed out in segments of this many consecutive triples of
 * the (once shuffled) training copy, or of a stream in the order it came:
 * claiming one costs an atomic add per 1024 updates, and a segment's
 * triples are read sequentially. */
#define HOG_MF_SEG 1024u

/* One worker's state. */
typedef struct mf_worker {
    _Alignas(HOG_CACHELINE) double se; /* squared errors of this epoch's updates, or of an evaluation */
    uint64_t updates;
    float *pl, *ql;    /* stride floats each: private copies of the two rows being stepped */
    uint32_t *perm;    /* HOG_MF_SEG */
} mf_worker;

/* The steps of n triples, t[perm[i]] (perm NULL: t[i]) in turn, on m with
 * p's regularisation, against mean, at step (AdaGrad's when m->gp is
 * set), with w's scratch rows; returns se plus their squared errors, each
 * added in turn (the error before its step). */
double hog_mf_steps(hog_mf_model *m, const hog_mf_params *p, float mean, float step, mf_worker *w,
                    const hog_mf_triple *t, const uint32_t *perm, uint32_t n, double se);

/* The initial factors of rows [lo, hi) of m's users (items 0) or items:
 * N(0, sd^2), each row from its own stream of (seed, side, row), so a row
 * starts alike whatever the run's threads or the rows around it. */
void hog_mf_init_rows(hog_mf_model *m, int items, uint64_t lo, uint64_t hi, uint64_t seed, double sd);

/* For each of data's names, model's id of it or UINT32_MAX, in a new
 * array (*out, hog_free). Returns 0 or -ENOMEM. */
int hog_mf_match_names(const hog_idmap *model, const hog_idmap *data, uint32_t **out);

/* Where a run stands between segments, and what its statistics are. */
typedef struct mf_position {
    unsigned epoch;       /* 0-based: the epoch under way, or the next to run */
    uint32_t segment;     /* positions of its order done (fewer than it has): segments, or the grid's blocks */
    int finished;         /* 1: every epoch ran */
    uint64_t updates0;    /* the workers' updates when the epoch began */
    double seconds;       /* training seconds so far */
    double train_rmse;    /* the last epoch's statistics */
    double test_rmse;
    /* Early stopping (hog_mf_params.early_stop): the lowest test RMSE
     * after an epoch, that epoch (1-based; 0: none yet, best_rmse then
     * NaN), and the epochs since it; its model is hog_mf_model.best. */
    double best_rmse;
    unsigned best_epoch;
    unsigned since;
} mf_position;

/* What a run's checkpoint describes besides its position. */
typedef struct mf_run_shape {
    const hog_mf_params *p;
    const hog_ratings *train;
    const hog_ratings *test;  /* or NULL */
    uint64_t train_ratings; /* after the holdout */
    uint32_t segments;      /* an epoch's positions: segments, or the grid's blocks */
} mf_run_shape;

/* A checkpoint read into memory: its scalars and where its arrays lie in buf. */
typedef struct mf_checkpoint {
    char *path;
    unsigned char *buf;
    size_t len;
    hog_mf_params p;
    uint64_t fingerprint, ratings, train_ratings;
    uint64_t test_fingerprint; /* its test set's, or 0 without one */
    unsigned users, items, segments;
    uint32_t workers;
    mf_position at;
    const unsigned char *bu, *bi, *rows_p, *rows_q, *workers_at;
    const unsigned char *sums_p, *sums_q; /* AdaGrad's sums, or NULL */
    const unsigned char *best_bu, *best_bi, *best_p, *best_q; /* early stopping's best model, or NULL */
} mf_checkpoint;

/* Writes the checkpoint of run s at position at: m's biases and factors
 * (and m->best's, with early stopping) and the nth workers' totals, to path atomically. Returns 0, -errno or
 * -ENOMEM. */
int hog_mf_checkpoint_write(const char *path, const mf_run_shape *s, const hog_mf_model *m, const mf_worker *ws,
                            unsigned nth, const mf_position *at);

/* Reads and checks the checkpoint at path for run s (whose train_ratings
 * and segments are not known yet: checked by hog_mf_checkpoint_apply): its
 * magic, version, sizes, checksum, then its parameters, ratings and test
 * set against s's. Returns 0, -errno, -ENOMEM, HOG_EMAGIC, HOG_EVERSION,
 * HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT or HOG_EPARAM (the field and
 * both values in err). */
int hog_mf_checkpoint_read(const char *path, const mf_run_shape *s, mf_checkpoint *ck, char *err, size_t err_len);
void hog_mf_checkpoint_free(mf_checkpoint *ck);

/* Loads ck into m and the nth workers, its position into *at, after
 * checking it fits run s. Returns 0 or HOG_ECORRUPT. */
int hog_mf_checkpoint_apply(const mf_checkpoint *ck, const mf_run_shape *s, hog_mf_model *m, mf_worker *ws,
                            unsigned nth, mf_position *at, char *err, size_t err_len);

#endif /* HOG_TRAIN_MF_H */
