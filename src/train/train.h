/* train.h: the private interface of training: lock-free weight access, losses, the model object and evaluation. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOG_TRAIN_H
#define HOG_TRAIN_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>

#include "../etl/etl.h"
#include "../pool/pool.h"
#include "../util/util.h"

/*
 * Shared weights and the memory model.
 *
 * HOGWILD! lets every worker read and write the one weight vector with no
 * locks: two workers may update the same coordinate at once and one update
 * may be lost, which SGD tolerates (Niu et al., 2011). In C11 a plain
 * concurrent read and write of a float is a data race, i.e. undefined
 * behaviour, and ThreadSanitizer would rightly report it. So every access to
 * a shared weight goes through the two helpers below, over _Atomic float
 * with memory_order_relaxed: each load and store is indivisible (no torn
 * floats), no ordering with other memory is implied, and on x86-64 and
 * AArch64 they compile to ordinary loads and stores. A read-modify-write is
 * a relaxed load followed by a relaxed store, never a CAS loop: losing an
 * update to a racing worker is the accepted HOGWILD! trade. Nothing else
 * about the weights needs synchronising: the pool's step barrier (a mutex)
 * orders all of an epoch's writes before the evaluation that follows.
 */
typedef _Atomic float hog_weight;

_Static_assert(sizeof(hog_weight) == sizeof(float), "an atomic float must be a plain float in memory");

/* GCC 12 moves a relaxed atomic float through a general register: a 4-byte
 * load and then a movd into the vector register, and the reverse for a
 * store, two extra instructions on the latency path of every weight update
 * (about a fifth of the plain sparse loop's time, bench/bench-rcv1.sh).
 * On x86-64 the helpers are therefore the one instruction the atomic access
 * means there, movss, which is indivisible on an aligned float and has the
 * relaxed ordering of any x86 load or store. The sanitizer builds keep the
 * C11 atomics: ThreadSanitizer and AddressSanitizer do not see inside asm,
 * and the atomics are what they check. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define HOG_W_C11 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || !defined(__x86_64__)
#define HOG_W_C11 1
#endif

#ifdef HOG_W_C11
static inline float hog_w_load(const hog_weight *w)
{
    return atomic_load_explicit((hog_weight *)w, memory_order_relaxed);
}

static inline void hog_w_store(hog_weight *w, float v)
{
    atomic_store_explicit(w, v, memory_order_relaxed);
}
#else
static inline float hog_w_load(const hog_weight *w)
{
    float v;
    __asm__ volatile("movss %1, %0" : "=x"(v) : "m"(*(const float *)w));
    return v;
}

static inline void hog_w_store(hog_weight *w, float v)
{
    __asm__ volatile("movss %1, %0" : "=m"(*(float *)w) : "x"(v));
}
#endif

/* Copies n shared weights (n a multiple of 4, w 16-byte aligned) to plain
 * floats and back, as n relaxed loads or stores would. On x86-64 they go
 * four at a time, one aligned 16-byte movaps each: the architecture makes
 * every aligned float of a vector access indivisible, which is all a
 * relaxed access promises, and a row of factors then costs a quarter of
 * the instructions of the one-float helpers. The sanitizer builds keep
 * the C11 atomics, one weight at a time. */
#ifdef HOG_W_C11
static inline void hog_w_load_row(float *restrict dst, const hog_weight *w, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        dst[i] = hog_w_load(&w[i]);
}

static inline void hog_w_store_row(hog_weight *w, const float *restrict src, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        hog_w_store(&w[i], src[i]);
}
#else
typedef float hog_f4 __attribute__((vector_size(16), aligned(16)));

static inline void hog_w_load_row(float *restrict dst, const hog_weight *w, uint32_t n)
{
#pragma GCC unroll 8
    for (uint32_t i = 0; i < n; i += 4) {
        hog_f4 v;
        __asm__ volatile("movaps %1, %0" : "=x"(v) : "m"(*(const hog_f4 *)(const void *)&w[i]));
        __builtin_memcpy(dst + i, &v, sizeof(v));
    }
}

static inline void hog_w_store_row(hog_weight *w, const float *restrict src, uint32_t n)
{
#pragma GCC unroll 8
    for (uint32_t i = 0; i < n; i += 4) {
        hog_f4 v;
        __builtin_memcpy(&v, src + i, sizeof(v));
        __asm__ volatile("movaps %1, %0" : "=m"(*(hog_f4 *)(void *)&w[i]) : "x"(v));
    }
}
#endif

/* Adds delta to a shared weight without losing a racing writer's change: a
 * compare-and-swap loop, so for the few places that publish many examples'
 * worth of change at once (a worker's private copies, once per segment),
 * never for a single example's update. Returns the weight's new value. */
static inline float hog_w_add(hog_weight *w, float delta)
{
    float old = atomic_load_explicit(w, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(w, &old, old + delta, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    return old + delta;
}

/* A run's stop fd (an eventfd that ends a read waiting on a quiet
 * stream; -1: none): raised by an interrupt (write(2) is
 * async-signal-safe; a full counter is readable already), and drained so
 * that the next run starts clear (non-blocking: nothing to read is
 * EAGAIN). train_checkpoint.c. */
void hog_stop_fd_raise(int fd);
void hog_stop_fd_drain(int fd);

/* Whether snapshot settings hold (hog_trainer_set_snapshots,
 * hog_mf_control_set_snapshots): seconds finite and not negative, and a
 * write function wherever a count or a timer is set. */
static inline int hog_snapshot_settings_ok(uint64_t every, double seconds, int has_write)
{
    return seconds >= 0 && !isinf(seconds) && (has_write || (!every && !(seconds > 0)));
}

/* Whether rows [0, n) of w, k weights each and stride apart, are all
 * finite: a model file never holds NaN or infinity (train_model_file.c,
 * train_mf_file.c). */
static inline int hog_w_finite(const hog_weight *w, uint64_t n, uint32_t k, uint32_t stride)
{
    for (uint64_t r = 0; r < n; r++)
        for (uint32_t c = 0; c < k; c++)
            if (!isfinite(hog_w_load(&w[r * stride + c])))
                return 0;
    return 1;
}

/* ---- the model (train_model.c; its file: train_model_file.c) ---- */
/* ---- feature crosses (train_cross.c) ---- */
/* A model's crosses (hog_train_params.interactions): rule k crosses a
 * feature of field a[k] with one of field b[k] (-1: any field); a cross of
 * features i < j of a row is feature base + (hash(i, j) mod 2^bits), its
 * value x_i x_j. n 0: none. */
#define HOG_CROSS_SPEC 100u
typedef struct hog_cross {
    uint32_t n;
    int32_t a[HOG_MAX_CROSSES], b[HOG_MAX_CROSSES];
    uint32_t bits;
    uint64_t base;              /* the first crossed feature: the training data's features */
    char spec[HOG_CROSS_SPEC];  /* the rules as given, comma-separated: what the model file keeps */
} hog_cross;

/* Reads spec (see hog_train_params.interactions) into *c with bits (0: 22)
 * and base. Returns 0, or HOG_EPARAM saying what is wrong in err. */
int hog_cross_parse(const char *spec, uint32_t bits, uint64_t base, hog_cross *c, char *err, size_t err_len);

/* The most non-zeros a row of nnz has with its crosses. */
static inline uint64_t hog_cross_room(uint32_t nnz)
{
    return (uint64_t)nnz + (uint64_t)nnz * (nnz > 0 ? nnz - 1 : 0) / 2;
}

/* Writes row's own non-zeros (below c->base) then its crosses into idx and
 * val (hog_cross_room(row->nnz) of each); field: the row's fields (NULL:
 * none, crossed by "::" alone). Returns how many. */
uint32_t hog_cross_row(const hog_cross *c, const hog_row *row, const uint16_t *field, uint32_t *idx, float *val);

/* Counts each cross of row once into own (a worker's degrees), or with an
 * atomic add into shared when own is NULL. */
void hog_cross_degrees(const hog_cross *c, const hog_row *row, const uint16_t *field, uint32_t *own,
                       _Atomic uint32_t *shared);

/* Whether a rule names a field (not "::"): the data must then have them. */
int hog_cross_needs_fields(const hog_cross *c);

/* The most weights a feature has (hog_model.outputs), and classes a model. */
#define HOG_MAX_OUTPUTS (1u << 20)

struct hog_model {
    hog_model_info info;
    uint64_t dim;         /* features: weights per output */
    uint32_t outputs;     /* K, the weights a feature: 1 for binary and squared, classes for
                             softmax, and 1 + factors for a factorisation machine (its linear
                             weight, then its factors), which scores one output (info.outputs) */
    uint32_t factors;     /* a factorisation machine's latent factors a feature; 0: linear */
    hog_cross cross;      /* the feature crosses it scores with (cross.n 0: none); its features
                             from cross.base on are the crosses' */
    uint32_t fields;      /* a field-aware one's fields G: outputs is then G factors, a feature's
                             factors for field 0, 1, ... (no linear weight); 0: not one */
    uint32_t stride;      /* words from one feature's weights to the next's: outputs, but for the
                             model a training run packs with its optimiser's state (train_run.c) */
    hog_weight *w;        /* dim * stride, feature-major: w[j * stride + k], k < outputs */
    hog_weight *bias;     /* outputs */
    double *class_labels; /* info.classes original label values, ascending */
    char **class_names;   /* info.classes names (the labels were strings), or NULL (train_labels.c) */
    hog_fnames fnames;    /* feature names, joined (n 0: none; train_model.c) */
    unsigned data_hash_bits; /* the training text's hog_read_params.hash_bits, or its .hgd's (0: not
                                 hashed by a setting, or not known: arrays, an older .hgd) */
    hog_weight *scales;   /* dim: the normalized update's feature scales (each feature's largest
                             |x| seen, optim_state.xmax at the run's end), so a warm start goes on
                             in the units the weights were learned in; NULL when trained without it */
};

/* Gives the model a run made (dim settled) its feature names: the
 * training data's (data, joined), and with a warm start the initial
 * model's too, the names of an index merged (train_model.c). Returns 0 or
 * -ENOMEM. */
int hog_model_fnames_final(hog_model *m, const hog_model *init, const hog_fnames *data);

/* ---- class names (train_labels.c) ---- */
/* Gives m the names of its classes: class k's is names' name number
 * class_labels[k]. Returns 0, -ENOMEM or HOG_ELABEL (a label that is no
 * name's number). */
int hog_model_names_from(hog_model *m, const hog_idmap *names);
/* Puts m's classes in their names' sorted order (strcmp), class k's label
 * becoming k: softmax's outputs permuted, a binary model negated when its
 * positive class changes. Returns 0 or -ENOMEM (m unchanged). */
int hog_model_names_sort(hog_model *m);
void hog_model_names_free(hog_model *m);
/* dst gets copies of src's names (none when src has none; dst has
 * src's classes). Returns 0 or -ENOMEM. */
int hog_model_names_copy(hog_model *dst, const hog_model *src);
/* For names' numbers from `from` on, map[c]: the label of m's class named
 * as name c, so that a data set's labels score against m. Also refuses
 * names against a model of numbers, numbers (names NULL or empty) against
 * one of names, and names against a regression. Returns 0, HOG_ELABEL (err
 * says which name m lacks) or -ENOMEM. */
int hog_labels_map(const hog_model *m, const hog_idmap *names, float *map, uint32_t from, char *err,
                   size_t err_len);
/* hog_labels_map of all of names into a new *map (owned; NULL when names
 * has none). Returns as hog_labels_map. */
int hog_labels_map_new(const hog_model *m, const hog_idmap *names, float **map, char *err, size_t err_len);

/* Metrics with every field NaN and rows 0: what a model has before it is
 * evaluated. */
hog_metrics hog_metrics_none(void);

/* Allocates a zeroed model. Returns NULL on -ENOMEM. */
hog_model *hog_model_new(hog_loss loss, uint64_t dim, uint32_t outputs, uint32_t classes);

/* The same with stride words a feature (at least outputs): the weights of
 * feature j at w[j * stride], the words after them free for a training
 * run's per-feature state. */
hog_model *hog_model_new_stride(hog_loss loss, uint64_t dim, uint32_t outputs, uint32_t classes, uint32_t stride);

/* Makes m's weights packed again (stride = outputs), dropping the words
 * between them. Returns 0, or -ENOMEM (m unchanged). */
int hog_model_compact(hog_model *m);

/* Copies m's weights into w (dim * outputs words) as a file holds them,
 * packed whatever m's stride; returns how many of them are non-zero. */
uint64_t hog_model_weights_to(const hog_model *m, hog_weight *w);

/* How many of m's weights are non-zero. */
uint64_t hog_model_nonzero(const hog_model *m);

/* A factorisation machine's score, a non-zero at a time (Rendle's O(nnz F)
 * form): hog_fm_add takes feature j's row wj (its weight, then its F
 * factors) and value x, returns the weight's share w_j x and adds v_jf x
 * into q[f] and (v_jf x)^2 into *sq; after the row, hog_fm_pairs gives the
 * sum over pairs, 1/2 sum_f (q_f^2 - sq). hog_model_scores and the
 * training loop share them, so they score alike. */
static inline float hog_fm_add(const hog_weight *wj, float x, uint32_t F, float *q, float *sq)
{
    for (uint32_t f = 0; f < F; f++) {
        const float v = hog_w_load(&wj[1 + f]) * x;
        q[f] += v;
        *sq += v * v;
    }
    return hog_w_load(&wj[0]) * x;
}

static inline float hog_fm_pairs(const float *q, uint32_t F, float sq)
{
    float pair = 0.0f;
    for (uint32_t f = 0; f < F; f++)
        pair += q[f] * q[f];
    return 0.5f * (pair - sq);
}

/* A field-aware factorisation machine's pairs (Juan et al. 2016): the sum
 * over pairs a < b of a row's features whose fields are below G of
 * <v_a,field b, v_b,field a> x_a x_b, feature a's F factors for field g
 * being wa[g F ..]. w[i] is the row's i-th feature's weights (NULL: one
 * the model does not know). The score is the bias plus this sum times
 * hog_ffm_norm, LIBFFM's model. hog_model_scores and the training loop
 * share them, so they score alike. With F a multiple of 4 the products go
 * into four lanes of one register, added across the lanes once at the
 * end: a float sum of pairs would wait for each pair's add. */
static inline float hog_ffm_dot(const hog_weight *va, const hog_weight *vb, uint32_t F);

static inline float hog_ffm_pairs(hog_weight *const *w, const float *x, const uint16_t *field, uint32_t n,
                                  uint32_t F, uint32_t G)
{
    typedef float lanes __attribute__((vector_size(16)));
    lanes s = {0.0f, 0.0f, 0.0f, 0.0f};
    float pair = 0.0f;
    for (uint32_t a = 0; a < n; a++) {
        const uint32_t fa = field[a];
        if (!w[a] || fa >= G)
            continue;
        for (uint32_t b = a + 1; b < n; b++) {
            const uint32_t fb = field[b];
            if (!w[b] || fb >= G)
                continue;
            const hog_weight *va = w[a] + (size_t)fb * F, *vb = w[b] + (size_t)fa * F;
            if (F % 4) {
                pair += hog_ffm_dot(va, vb, F) * x[a] * x[b];
                continue;
            }
            const float xab = x[a] * x[b];
            for (uint32_t f = 0; f < F; f += 4) {
                _Alignas(16) float ra[4], rb[4];
                hog_w_load_row(ra, va + f, 4);
                hog_w_load_row(rb, vb + f, 4);
                lanes la, lb;
                memcpy(&la, ra, sizeof(la));
                memcpy(&lb, rb, sizeof(lb));
                s += (la * lb) * xab;
            }
        }
    }
    return F % 4 ? pair : (s[0] + s[2]) + (s[1] + s[3]);
}

/* <va, vb> over F factors: four partial sums, one a lane, when F is a
 * multiple of 4 (the rows then 16-byte aligned, see hog_w_load_row). */
static inline float hog_ffm_dot(const hog_weight *va, const hog_weight *vb, uint32_t F)
{
    if (F % 4 == 0) {
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t f = 0; f < F; f += 4) {
            _Alignas(16) float a[4], b[4];
            hog_w_load_row(a, va + f, 4);
            hog_w_load_row(b, vb + f, 4);
            for (int i = 0; i < 4; i++)
                s[i] += a[i] * b[i];
        }
        return (s[0] + s[2]) + (s[1] + s[3]);
    }
    float d = 0.0f;
    for (uint32_t f = 0; f < F; f++)
        d += hog_w_load(&va[f]) * hog_w_load(&vb[f]);
    return d;
}

/* LIBFFM's instance normalisation: a row's pairs count 1 / |x|^2 (1 / nnz
 * for one-hot rows), so a row's score does not grow with the square of its
 * length; 1 for a row of zeros. */
static inline float hog_ffm_norm(const float *x, uint32_t n)
{
    float s = 0.0f;
    for (uint32_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return s > 0.0f ? 1.0f / s : 1.0f;
}

/* The weights of feature j. */
static inline hog_weight *hog_model_wj(const hog_model *m, uint64_t j)
{
    return m->w + j * m->stride;
}

/* dst gets a copy of src's feature scales (none when src has none; dst
 * has at least src's features, the rest scaled 0). Returns 0 or -ENOMEM
 * (dst unchanged). */
int hog_model_scales_copy(hog_model *dst, const hog_model *src);

/* The class index of a label: binary: 1 if label is above the midpoint of
 * the two classes, else 0; softmax: its index, or -1 if unknown. */
int hog_model_class_of(const hog_model *m, float label);

/* The weight of label's class among class_w (per class index, see
 * hog_class_weight): binary, its side of mid; softmax, its index. */
static inline float hog_class_weight_of(const float *class_w, const hog_model *m, float label, float mid)
{
    if (m->info.loss == HOG_LOSS_SOFTMAX) {
        int c = hog_model_class_of(m, label);
        return c < 0 ? 1.0f : class_w[c];
    }
    return class_w[label > mid];
}

/* ---- losses (the margin is the model's raw output) ---- */
/* Regression losses take the label as the target and need no classes. */
static inline int hog_loss_is_regression(hog_loss loss)
{
    return loss == HOG_LOSS_SQUARED || loss == HOG_LOSS_QUANTILE;
}

/* Binary losses: two label values, y in {-1, +1}, one score per row. */
static inline int hog_loss_is_binary(hog_loss loss)
{
    return loss == HOG_LOSS_LOGISTIC || loss == HOG_LOSS_HINGE || loss == HOG_LOSS_MODIFIED_HUBER;
}

/* Loss and its derivative with respect to the margin, for binary losses
 * with y in {-1, +1} and for regression losses with y the target; tau is
 * the quantile of the quantile loss (ignored by the others). */
/* The logistic loss log(1 + e^-z) at z = y * margin, written so nothing
 * overflows: returns its slope in the margin and sets *e = e^-|z|, so that
 * the loss is log1pf(*e) + max(-z, 0). One expf and no branch on z's sign
 * (the sparse loop waits on this slope before it can update). */
static inline float hog_logistic_slope(float z, float y, float *e)
{
    const float ez = expf(-fabsf(z));
    *e = ez;
    return -y * ((z > 0.0f ? ez : 1.0f) / (1.0f + ez));
}

static inline float hog_loss_grad_tau(hog_loss loss, float margin, float y, float tau, float *value)
{
    switch (loss) {
    case HOG_LOSS_LOGISTIC: {
        float z = y * margin, e;
        float g = hog_logistic_slope(z, y, &e);
        *value = log1pf(e) + fmaxf(-z, 0.0f);
        return g;
    }
    case HOG_LOSS_HINGE: {
        float z = y * margin;
        *value = z < 1.0f ? 1.0f - z : 0.0f;
        return z < 1.0f ? -y : 0.0f;
    }
    case HOG_LOSS_SQUARED: {
        float r = margin - y;
        *value = 0.5f * r * r;
        return r;
    }
    case HOG_LOSS_MODIFIED_HUBER: {
        /* Zhang (2004): max(0, 1 - z)^2 for z >= -1, -4z below: the
         * two pieces meet with the same value and slope at z = -1. */
        float z = y * margin;
        if (z >= 1.0f) {
            *value = 0.0f;
            return 0.0f;
        }
        if (z >= -1.0f) {
            *value = (1.0f - z) * (1.0f - z);
            return -2.0f * y * (1.0f - z);
        }
        *value = -4.0f * z;
        return -4.0f * y;
    }
    case HOG_LOSS_QUANTILE: {
        /* Pinball: tau * r above the prediction, (1 - tau) * -r below. */
        float r = y - margin;
        *value = r >= 0.0f ? tau * r : (tau - 1.0f) * r;
        return r > 0.0f ? -tau : (r < 0.0f ? 1.0f - tau : 0.0f);
    }
    case HOG_LOSS_SOFTMAX:
        break;
    }
    *value = 0.0f;
    return 0.0f;
}

/* hog_loss_grad_tau at the median, tau = 0.5. */
static inline float hog_loss_grad(hog_loss loss, float margin, float y, float *value)
{
    return hog_loss_grad_tau(loss, margin, y, 0.5f, value);
}

/* Turns K scores into probabilities in place (max-shifted, so no overflow)
 * and returns log(sum(exp(scores))) for the cross-entropy. */
float hog_softmax(float *scores, uint32_t k);

/* Asks for the cache line at p to be written: PREFETCHW where the CPU has
 * it, which takes the line in the state a store needs. The compiler's
 * write prefetch is a PREFETCHT0 on x86-64 (PREFETCHW is not in its
 * baseline), which takes a line another core wrote last as a shared copy,
 * and the store then waits a second cache-line round trip for the other
 * copy's invalidation. Where two workers write the same lines, as a
 * field-aware machine's warm features are, that was the difference: on
 * gen_click (2 threads, k 4) epochs of 1.57 s and 1.66 s (medians of 14
 * alternating runs, with and without the whole record below) against 1.92 s
 * (train_rows.c's prefetch_feature); one thread's were the same (2.25 to
 * 2.30 s, 8 runs each). */
static inline void hog_prefetch_write(const void *p)
{
#if defined(__x86_64__)
    if (hog_cpu_prefetchw) {
        __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
        return;
    }
#endif
    __builtin_prefetch(p, 1, 3);
}

/* Asks for the cache lines of the n 4-byte words at a (for writing, or
 * reading only). */
static inline void hog_prefetch_words(const void *a, size_t n, int write)
{
    uintptr_t q = (uintptr_t)a & ~(uintptr_t)(HOG_CACHELINE - 1), e = (uintptr_t)a + n * 4;
    for (; q < e; q += HOG_CACHELINE) {
        if (write)
            hog_prefetch_write((const void *)q);
        else
            __builtin_prefetch((const void *)q, 0, 3);
    }
}

/* Whether the loops that score rows (evaluation, predict) prefetch the
 * model's lines: where its weights pass a core's L2 cache (as the row
 * loops do, train_rows.c's MODEL_PREFETCH_BYTES). */
static inline int hog_model_prefetch_on(const hog_model *m)
{
    return m->dim * m->stride * sizeof(hog_weight) > ((uint64_t)1 << 20);
}

/* The rows ahead whose model lines the scoring loops ask for: they read the
 * rows in order, so the hardware brings the rows themselves. */
#define HOG_SCORE_AHEAD 4u

/* Asks for the weights row r of blk (if it has one) will be scored with. */
static inline void hog_model_prefetch_row(const hog_model *m, const hog_block *blk, uint32_t r)
{
    if (r >= blk->rows)
        return;
    const uint32_t K = m->outputs;
    for (uint32_t i = blk->ptr[r]; i < blk->ptr[r + 1]; i++) {
        const uint64_t j = blk->index[i];
        if (j < m->dim)
            hog_prefetch_words(hog_model_wj(m, j), K, 0);
    }
}

/* Gives dst src's kind of model: its factors, fields and crosses (the
 * params' interactions then name dst's own copy). */
void hog_model_kind_copy(hog_model *dst, const hog_model *src);

/* 0 when data of `fields` fields (hog_dataset_fields) can be scored by
 * m, else HOG_EPARAM saying that `what` (the data's name) needs fields
 * for m, a field-aware model. */
int hog_model_fields_fit(const hog_model *m, uint32_t fields, const char *what, char *err, size_t err_len);

/* Scores of one row: out[k] = bias[k] + sum_i w[index_i * K + k] * value_i,
 * skipping indices >= m->dim; a factorisation machine's one score, a
 * field-aware one's with the row's fields (field[i] the field of index_i;
 * NULL, or no room for the row's pointers: NAN). */
void hog_model_scores(const hog_model *m, const hog_row *row, const uint16_t *field, float *out);

/* ---- the dense kernel (train_dense.c) ---- */
/* One worker's buffers for mini-batches: a batch of rows made dense
 * (row-major, rows 64-byte aligned), a snapshot of the weights, the scores
 * and the weight gradient. Owned by one thread at a time. */
typedef struct hog_dense hog_dense;

/* Sets OpenBLAS to run each call on the calling thread (once per process;
 * see train_dense.c for why). Thread-safe. */
void hog_dense_blas_init(void);

/* Buffers for batches of up to `batch` rows of a model of dim features and
 * `outputs` outputs, zeroed by the calling thread (so first touch puts them
 * on its NUMA node). Returns NULL on -ENOMEM. hog_dense_free accepts NULL. */
hog_dense *hog_dense_new(uint64_t dim, uint32_t outputs, uint32_t batch);
void hog_dense_free(hog_dense *d);

/* The bytes hog_dense_new allocates (and touches) for these sizes. */
uint64_t hog_dense_bytes(uint64_t dim, uint32_t outputs, uint32_t batch);

/* Makes one worker's buffers on each of the pool's workers, each by its own
 * worker, into out[0..threads); calls hog_dense_blas_init. Returns 0 or
 * -ENOMEM (then every out[i] is NULL). */
int hog_dense_create_all(hog_pool *pool, uint64_t dim, uint32_t outputs, uint32_t batch, hog_dense **out);

/* Copies the shared weights and biases of m into d (relaxed loads). */
void hog_dense_snapshot(hog_dense *d, const hog_model *m);

/* Scores rows[0..n), n <= batch, with the last snapshot: n * outputs
 * floats, row-major, valid until the next call on d. Indices at or beyond
 * the model's features are ignored, as by hog_model_scores. */
const float *hog_dense_scores(hog_dense *d, const hog_row *rows, uint32_t n);

/* Makes d one of `members` workers that count their batches in *published
 * (zeroed, shared by them) and divide each batch's step by the number of
 * batches published since its snapshot (see batch_step). Without it, d
 * takes whole steps. */
void hog_dense_share(hog_dense *d, atomic_uint *published, unsigned members);

/* Trains on one segment: rows start + perm[i] (i < n) of blk, in that
 * order, in mini-batches of d's batch rows (the last may be shorter), rows
 * held out by p->holdout skipped (first_row: the data set's row number of
 * blk's row start, for the holdout test). Each batch reads a snapshot of
 * the weights, steps by `step` times its summed gradient (times its share,
 * see hog_dense_share), with L2, and
 * writes the shared model HOGWILD!-style. Binary labels above mid are
 * positive; class_w (NULL: none) weighs each class's rows. Adds the loss,
 * examples and non-zeros seen to the totals. With seen set (the last
 * epoch's progressive metrics), calls it with each row's label, importance
 * weight (no class weight) and scores before its batch's step, in a copy
 * it may change. */
typedef void (*hog_dense_seen_fn)(void *ctx, float label, float weight, float *scores);
void hog_dense_segment(hog_dense *d, hog_model *m, const hog_train_params *p, const hog_block *blk,
                       uint32_t start, const uint32_t *perm, uint32_t n, uint64_t first_row, float step,
                       float mid, const float *class_w, double *loss, uint64_t *examples, uint64_t *nnz,
                       hog_dense_seen_fn seen, void *seen_ctx, float *seen_s);

/* ---- segments side by side (train_overlap.c) ---- */
/*
 * How many segments ran beside a worker's. A worker's changes to the hot
 * weights and the bias are shared out among the segments that overlapped
 * its own (hog_segment_run in train_rows.c); counting those that published
 * during it misses those that end after it, so when all workers start
 * together (every epoch, and all of a small one) the first to finish took
 * its whole change, the next half of its own, and so on: the changes summed
 * to 2.1 times the right one on 4 workers, and a 4,000-row linear fit
 * stalled at a test RMSE of 2.2 on a 16-core machine (0.006 on one core).
 * So the workers of one replica (all of them with the model shared) keep
 * the integral over time of the number of segments in flight; its mean over
 * a segment's span is how many ran beside it, itself included, weighted by
 * how long they overlapped it. Two short critical sections per segment.
 */
typedef struct hog_overlap {
    _Alignas(HOG_CACHELINE) pthread_mutex_t mu;
    double (*now)(void); /* the clock, in seconds */
    unsigned inflight;   /* segments running */
    double last;         /* when inflight last changed (now) */
    double area;         /* the integral of inflight over time until last */
} hog_overlap;

/* now: the clock, read under the lock so that its times come in order; the
 * trainer passes hog_now, a test a clock it moves by hand. */
void hog_overlap_init(hog_overlap *c, double (*now)(void));
void hog_overlap_destroy(hog_overlap *c);

/* A segment starts: returns the clock's area, and the time in *t0. */
double hog_overlap_enter(hog_overlap *c, double *t0);

/* The segment that entered at t0 with area a0 ends: returns the share of
 * its change it publishes, one over the mean number of segments in flight
 * while it ran (itself included), at least 1/members and at most 1. */
float hog_overlap_share(hog_overlap *c, double t0, double a0, unsigned members);

/* ---- checkpoints: when a run pauses to write one (train_checkpoint.c) ---- */
typedef struct hog_ckpt_timer {
    const char *path;        /* NULL: no checkpoints */
    double every;            /* seconds between them; 0: only when interrupted and at the end */
    double (*now)(void);     /* the clock of every: hog_now, or a test's */
    atomic_int *interrupted; /* the flag that stops the run (hog_trainer_interrupt, hog_mf_interrupt) */
    double last;             /* when the last was written, or the run began */
} hog_ckpt_timer;

/* When the workers should pause for the next checkpoint on tm's clock,
 * or 0: never (none is set, or only when interrupted). */
static inline double hog_ckpt_due(const hog_ckpt_timer *tm)
{
    return tm->path && tm->every > 0 ? tm->last + tm->every : 0;
}

/* At a point of a run where its model is consistent, `where` it stands
 * ("in epoch 3 of 10, after 120 of 400 segments"): calls write(ctx) when a
 * checkpoint is set and due on the clock, or force is set (the workers
 * found it due; the run's end), or the run is interrupted. A write the
 * clock asked for that fails is a warning (HOG_LOG_WARN): the run goes on.
 * Returns 0 to go on or, when interrupted (the flag is then cleared),
 * HOG_EINTERRUPTED with err saying where the run stood and what was saved,
 * or the error of writing the checkpoint. */
int hog_ckpt_pause(hog_ckpt_timer *tm, int force, const char *where, int (*write)(void *ctx), void *ctx, char *err,
                   size_t err_len);

/* A checkpoint's arrays (train_checkpoint.c; train_mf_checkpoint.c's
 * too): rows rows of k shared weights, stride apart in w (a packed model's
 * records, MF's factor rows), written through relaxed loads as rows * k
 * floats added to *crc; returns 0 or the write's error. get reads them
 * back from `from` into w. */
int hog_ckpt_put_rows(hog_atomic_file *f, uint32_t *crc, const hog_weight *w, uint64_t rows, uint32_t k,
                      uint32_t stride);
void hog_ckpt_get_rows(hog_weight *w, const unsigned char *from, uint64_t rows, uint32_t k, uint32_t stride);

/* ---- evaluation ---- */
/* Which rows of a data set an evaluation or an epoch uses. */
typedef struct hog_rowsel {
    double holdout;  /* fraction held out; 0: none */
    uint64_t seed;
    int want_holdout;/* 1: only held-out rows; 0: only the others */
    uint64_t fold;   /* which slice of width holdout (hog_train_params.fold) */
} hog_rowsel;

/* Whether row is in slice `fold` of width holdout of the rows' draws. */
static inline int hog_row_in_fold(uint64_t row, double holdout, uint64_t fold, uint64_t seed)
{
    if (holdout <= 0)
        return 0;
    uint64_t h = hog_mix64(row ^ hog_mix64(seed));
    double u = (double)(h >> 11) * 0x1p-53, lo = (double)fold * holdout;
    return u >= lo && u < lo + holdout;
}

static inline int hog_row_held_out(uint64_t row, double holdout, uint64_t seed)
{
    return hog_row_in_fold(row, holdout, 0, seed);
}

static inline int hog_rowsel_keep(const hog_rowsel *s, uint64_t row)
{
    if (!s || s->holdout <= 0)
        return 1;
    return hog_row_in_fold(row, s->holdout, s->fold, s->seed) == s->want_holdout;
}

/* Evaluates m on the selected rows of ds with the pool's workers, block by
 * block, in a pass of file order through src, a block source of ds the
 * caller has open and idle (the training set's), or with src NULL through
 * one of its own under `limit` (0: none; a data set larger than it is read
 * out of core). Returns 0, -ENOMEM, -errno, or the source's error at the
 * pass's end: a bad block's HOG_ECHECKSUM, HOG_ECORRUPT or HOG_EIO, a file
 * changed while it was read (err names it). */
int hog_evaluate(const hog_model *m, const hog_dataset *ds, const hog_rowsel *sel, hog_block_source *src,
                 uint64_t limit,
                 hog_pool *pool, hog_metrics *out, char *err, size_t err_len);

/* The sums an evaluation keeps of one worker's rows (train_eval.c), in
 * memory that does not grow with the rows: AUC comes from a histogram of
 * the scores (HOG_AUC_BINS bins, each a pair of counts: negatives, then
 * positives), exact but for the pairs of a positive and a negative row
 * whose scores share a bin (see train_eval.c for the bins and the bound). */
#define HOG_AUC_BINADES 64   /* powers of two of magnitude binned: 2^-32 .. 2^32 */
#define HOG_AUC_STEP_BITS 9  /* each cut into 2^9 bins */
#define HOG_AUC_STEPS (1u << HOG_AUC_STEP_BITS)
#define HOG_AUC_BINS (2u * HOG_AUC_BINADES * HOG_AUC_STEPS + 1u)

typedef struct hog_eval_sums {
    uint64_t rows;
    double wsum;      /* their importance weights (the rows, when unweighted) */
    double correct;   /* weight of the rows classified right */
    double known;     /* softmax: weight of the rows whose label is one of the model's classes */
    double loss;      /* weighted sum of the model's own loss */
    double sq;        /* weighted sum of squared residuals */
    uint64_t *hist;   /* binary losses: 2 * HOG_AUC_BINS counts; NULL otherwise */
} hog_eval_sums;

/* Zeroes e for rows of m (the histogram too, for a binary loss). Returns
 * 0 or -ENOMEM; hog_eval_sums_free accepts what a failed init left. */
int hog_eval_sums_init(hog_eval_sums *e, const hog_model *m);
void hog_eval_sums_free(hog_eval_sums *e);

/* Adds a row (its label, its importance weight and its m->outputs scores
 * s, which softmax turns into probabilities in place) to e and returns the
 * class predicted, as hog_scores_class does. */
uint32_t hog_eval_add(const hog_model *m, hog_eval_sums *e, float label, float weight, float *s);

/* The histogram bin of a score: bins are ordered as the scores are. */
uint32_t hog_auc_bin(float score);

/* hog_eval_add for a row of a binary or regression loss whose loss v at
 * its score s the caller has computed already (the row loops, scoring the
 * last epoch's rows as they train): the same sums, the loss not computed
 * again. pos: binary, 1 for a row of the positive class. */
static inline void hog_eval_add_scored(const hog_model *m, hog_eval_sums *e, float label, int pos, float weight,
                                       float s, float v)
{
    const double w = (double)weight;
    e->rows++;
    e->wsum += w;
    e->loss += w * (double)v;
    if (hog_loss_is_regression(m->info.loss)) {
        const double r = (double)s - (double)label;
        e->sq += w * r * r;
        return;
    }
    e->correct += (s > 0) == pos ? w : 0;
    e->hist[2 * hog_auc_bin(s) + (pos != 0)]++;
}

/* The class m predicts from its scores s (softmax: turned into
 * probabilities in place, the most probable picked as hog_model_predict
 * picks it): binary 1 for a positive score, regression 0. */
uint32_t hog_scores_class(const hog_model *m, float *s);

/* Adds from's sums into into's. */
void hog_eval_sums_merge(hog_eval_sums *into, const hog_eval_sums *from);

/* The metrics of the rows summed in t (NaN where they do not apply). */
void hog_eval_metrics(const hog_model *m, const hog_eval_sums *t, hog_metrics *out);

/* The AUC of a histogram (NaN without both classes), pairs in one bin
 * counted half; *bound (if not NULL) gets the most it can differ from the
 * exact AUC: half the fraction of positive-negative pairs in one bin. */
double hog_auc_of(const uint64_t *hist, double *bound);

/* The memory limit a run uses: p->mem_limit, or half of what is available. */
uint64_t hog_mem_limit(const hog_train_params *p);

/* The ceiling on features a run of t holds within hog_mem_limit: the model's
 * weights for `outputs` outputs, replicas' copies and the optimiser's
 * per-weight state (train_params.c). */
uint64_t hog_trainer_max_features(const hog_trainer *t, uint32_t outputs);

/* rp (NULL: the defaults) copied to *buf with max_features lowered to what
 * t's memory limit holds, for one output (two with softmax, the fewest it
 * has): the readers then refuse a larger index before the model grows to
 * it. Returns buf. */
const hog_read_params *hog_trainer_read_params(const hog_trainer *t, const hog_read_params *rp,
                                               hog_read_params *buf);

/* 0 when a model of dim features and `outputs` outputs fits in t's memory
 * limit with its optimiser's state; else HOG_EPARAM with the bytes, the
 * limit and the hint to hash in err. */
int hog_trainer_features_fit(const hog_trainer *t, uint64_t dim, uint32_t outputs, char *err, size_t err_len);

/* ===================================================================== *
 *  Model-file metadata (train_meta.c)
 *
 *  Linear and MF model files carry their parameters and metrics as text:
 *  "key value\n" lines, one per field, in the order of a table that names
 *  each field's key, kind and place. The same table writes the lines and
 *  reads them back, so a field saved is a field loaded. Doubles are written
 *  with 17 significant digits in the C locale (hog_number_format), so they
 *  read back to the same value whatever locale the program set.
 * ===================================================================== */
typedef enum hog_meta_kind {
    HOG_META_F64,   /* double: "%.17g", "nan" and "inf" included */
    HOG_META_U64,   /* uint64_t in decimal */
    HOG_META_UINT,  /* unsigned in decimal */
    HOG_META_INT,   /* int in decimal, a '-' when negative */
    HOG_META_HEX64, /* uint64_t as 16 lower-case hexadecimal digits */
    HOG_META_WORD,  /* a word: `word` is written; read by `parse`, or, without one, it must be `word` */
    HOG_META_NOTE,  /* a word written from `word` and skipped when read (the writer's version) */
} hog_meta_kind;

typedef struct hog_meta_field {
    const char *key;
    hog_meta_kind kind;
    void *at;         /* the value, of the kind's type; WORD: what parse fills */
    const char *word; /* WORD, NOTE: the text written */
    int (*parse)(const char *text, void *at); /* WORD: 0, or < 0 for a word it does not know */
} hog_meta_field;

/* A numeric field, its kind chosen by the type of `at` (double *, uint64_t *,
 * unsigned *, int *): another type does not compile. */
#define HOG_META_NUM(key, at)                                                                                 \
    ((hog_meta_field){(key),                                                                                  \
                      _Generic((at), double *: HOG_META_F64, uint64_t *: HOG_META_U64,                        \
                               unsigned *: HOG_META_UINT, int *: HOG_META_INT),                               \
                      (at), NULL, NULL})

/* hog_meta_field.parse for the settings named by words: hog_loss_parse,
 * hog_schedule_parse, hog_kernel_parse, hog_replicas_parse,
 * hog_class_weight_parse and hog_train_metrics_parse. */
int hog_meta_parse_loss(const char *text, void *at);
int hog_meta_parse_schedule(const char *text, void *at);
int hog_meta_parse_kernel(const char *text, void *at);
int hog_meta_parse_replicas(const char *text, void *at);
int hog_meta_parse_class_weight(const char *text, void *at);
int hog_meta_parse_train_metrics(const char *text, void *at);

/* The six fields of a hog_metrics (rows, loss, logloss, accuracy, auc,
 * rmse) under the keys key[0..5], into f. Returns 6. */
size_t hog_meta_metrics(hog_meta_field *f, const char *const key[6], hog_metrics *m);

/* The checkpoint settings a trainer or an MF control keeps (path, its
 * every-seconds and resume), set as hog_trainer_set_checkpoint and
 * hog_mf_control_set_checkpoint document: path is copied (NULL: none, and
 * no resume). Returns 0, HOG_EPARAM or -ENOMEM (nothing changed then). */
int hog_ckpt_settings_set(char **ckpt_path, double *ckpt_every, int *resume_out, const char *path,
                          double every_seconds, int resume);

/* Writes the n fields as lines into a new buffer (*text, hog_free it; *len
 * bytes, no NUL). Returns 0 or -ENOMEM. */
int hog_meta_write(const hog_meta_field *f, size_t n, char **text, size_t *len);

/* Reads text[0..len), "key value\n" lines (overwritten in place), into the
 * fields whose keys they name; keys not in the table are skipped (a newer
 * writer's). Returns 0, or HOG_ECORRUPT with the line, the key and what was
 * wrong in why ("line 9: step: expected a number, found \"x\""). */
int hog_meta_read(char *text, size_t len, const hog_meta_field *f, size_t n, char *why, size_t why_len);

/* Compares tables a and b, made by one function from two structs (a: a
 * checkpoint's, b: this run's). The first field whose key starts with
 * prefix ("params.") and whose values differ is named in err as
 * STRUCT.NAME (strct, and the key after prefix), both values with as few
 * digits as tell them apart and an enum as its constant: "PATH: the
 * checkpoint was made with hog_train_params.step = 0.1, this run has
 * hog_train_params.step = 0.2". Returns 0 or HOG_EPARAM. */
int hog_meta_differ(const hog_meta_field *a, const hog_meta_field *b, size_t n, const char *prefix,
                    const char *strct, const char *path, char *err, size_t err_len);

/* ===================================================================== *
 *  Model files' magics, their first eight bytes (each layout is described
 *  beside the code that writes it; hog_file_probe, train_probe.c, tells
 *  files apart by them)
 * ===================================================================== */
#define MODEL_MAGIC "HOGMODEL"
#define MF_MAGIC "HOGMFMOD"
/* and checkpoints' (train_checkpoint.c, train_mf_checkpoint.c) */
#define CKPT_MAGIC "HOGCHKPT"
#define MF_CKPT_MAGIC "HOGMFCKP"

#endif /* HOG_TRAIN_H */
