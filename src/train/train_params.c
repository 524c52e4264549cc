/* train_params.c: training parameters: defaults, checking, and the names of losses and schedules. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <math.h>
#include <string.h>

#include "train_run.h"

_Static_assert(HOG_BIND_AUTO == HOG_POOL_BIND_AUTO, "the pool resolves hog_train_params.bind as it is");

/* Why these defaults: data as users have it has features of any range (a
 * column in thousands beside one in thousandths, pixels 0..16) and labels
 * in their own units (a regression's target in the hundreds). Plain SGD's
 * step depends on both: 0.1 diverges on one such set and stops far short
 * on the next. The normalized update (NG, Vowpal Wabbit's default) divides
 * each feature's step by its largest |x| squared and the rate by the rows'
 * mean squared norm in those units, so one step suits every scale, and its
 * squared loss takes the importance-invariant step, which never overshoots
 * a label. Under it step 2, decaying by 0.8 a pass over 20 passes (the last
 * at 2 * 0.8^19 = 0.03), came within a point of LIBLINEAR's test accuracy
 * (5% of its RMSE) on every set of bench/bench-defaults.sh - scikit-learn's
 * bundled sets with raw features, heart_scale, Fashion-MNIST, RCV1-shaped
 * data - for seeds 1 to 4; 10 or 15 passes, step 1 or decay 0.9 each
 * missed on one set or another. AdaGrad with normalized, VW's other
 * default, did as well on the classifiers and missed on regression, where
 * AdaGrad's steps do not grow with the label's scale. The price is speed:
 * the normalized loop runs at a fraction of the plain one, and the dense
 * kernel runs plain SGD only (README, "Defaults"); normalized = 0 with a
 * step for the data's scale gets both back. */
hog_train_params hog_train_params_default(void)
{
    hog_train_params p;
    memset(&p, 0, sizeof(p));
    p.loss = HOG_LOSS_LOGISTIC;
    p.threads = 0;
    p.epochs = 20;
    p.step = 2.0;
    p.decay = 0.8;
    p.power = 0.5;
    p.schedule = HOG_SCHEDULE_DECAY;
    p.l2 = 1e-6;
    p.holdout = 0.0;
    p.seed = 1;
    p.bias = 1;
    p.bind = HOG_BIND_AUTO;
    p.kernel = HOG_KERNEL_AUTO;
    p.batch = 32;
    p.normalized = 1;
    p.l1 = 0.0;
    p.early_stop = 0;
    p.average = 0;
    p.quantile = 0.5;
    p.replicas = HOG_REPLICAS_MACHINE;
    p.stream = 1;
    p.train_metrics = HOG_TRAIN_METRICS_PROGRESSIVE;
    return p;
}

uint64_t hog_mem_limit(const hog_train_params *p)
{
    return p->mem_limit ? p->mem_limit : hog_mem_usable() / 2;
}

/* ===================================================================== *
 *  The ceiling on features
 * ===================================================================== */

/* Copies of the model the replicas hold besides it: one per worker, one
 * per NUMA node of the workers, or none. */
static unsigned replica_copies(const hog_trainer *t)
{
    const unsigned nth = hog_pool_threads(t->pool);
    if (t->p.replicas == HOG_REPLICAS_CORE)
        return nth;
    if (t->p.replicas != HOG_REPLICAS_NODE)
        return 0;
    int nodes[64];
    unsigned n = 0;
    for (unsigned i = 0; i < nth && n < HOG_ARRAY_LEN(nodes); i++) {
        const int node = hog_pool_worker_node(t->pool, i);
        unsigned g = 0;
        while (g < n && nodes[g] != node)
            g++;
        if (g == n)
            nodes[n++] = node;
    }
    return n;
}

/* Bytes a run holds per feature for the model and its optimiser
 * (train_run.c's hog_run_alloc and hog_run_alloc_final, and the replicas):
 * per weight, the model and AdaGrad's sums and L1's two accumulators, and
 * each replica's copy of them, averaging's sums and averaged model, early
 * stopping's best weights; per feature, normalized updates' largest |x|,
 * and each replica's. The trainer's
 * tables (a feature's degree and L2 scale, 8 bytes) are not
 * counted: the ceiling bounds the model, whose weights a crafted index
 * multiplies. packed: as a packed model's (train_run.h, "The model's
 * layout"), where the run packs one (packs_at). */
static uint64_t feature_bytes(const hog_train_params *p, uint32_t outputs, unsigned copies, int packed)
{
    uint64_t weight = sizeof(hog_weight);
    if (p->schedule == HOG_SCHEDULE_ADAGRAD)
        weight += sizeof(hog_weight);
    if (p->l1 > 0)
        weight += 2 * sizeof(hog_weight);
    weight *= 1 + (uint64_t)copies;
    if (p->average)
        weight += sizeof(double) + sizeof(hog_weight);
    if (p->early_stop)
        weight += sizeof(float);
    /* A packed record holds the weights, the scale, its reciprocal and the
     * L2 scale, AdaGrad's and L1's words, in place of those counted above;
     * each replica holds a copy of the records. */
    const uint32_t K = HOG_MAX(outputs, 1u);
    if (packed)
        return (1 + (uint64_t)copies) * hog_pack_layout(hog_opt_flags(p), K).stride * sizeof(hog_weight) +
               K * ((p->average ? sizeof(double) + sizeof(hog_weight) : 0) + (p->early_stop ? sizeof(float) : 0));
    return (p->normalized ? sizeof(hog_weight) * (1 + (uint64_t)copies) : 0) + weight * K;
}

/* Whether a model of `outputs` outputs that t's runs make is packed once it
 * has more than the weights whole copies take (hog_may_pack: the sparse
 * kernel aside, which the ceiling does not know yet). */
static int packs_at(const hog_trainer *t, uint32_t outputs)
{
    return hog_may_pack(&t->p, HOG_MAX(outputs, 1u), t->link != NULL);
}

/* The bytes a model of dim features and `outputs` outputs holds, as the
 * run makes it: packed or not by its size. */
static double model_bytes(const hog_trainer *t, uint64_t dim, uint32_t outputs)
{
    const int packed = packs_at(t, outputs) && (double)dim * HOG_MAX(outputs, 1u) > WHOLE_WEIGHTS;
    return (double)dim * (double)feature_bytes(&t->p, outputs, replica_copies(t), packed);
}

/* The limit is one budget: half of it for the model and its optimiser's
 * state, half for the data (the text's reading a quarter, the blocks built
 * from it a quarter before they go to a scratch file; a .hgd larger than
 * the half trains out of core). */
uint64_t hog_trainer_max_features(const hog_trainer *t, uint32_t outputs)
{
    const uint64_t half = hog_mem_limit(&t->p) / 2;
    const unsigned copies = replica_copies(t);
    uint64_t n = half / feature_bytes(&t->p, outputs, copies, 0);
    if (packs_at(t, outputs)) { /* packed past whole copies' size, unpacked up to it */
        const uint64_t whole = WHOLE_WEIGHTS / HOG_MAX(outputs, 1u);
        n = HOG_MAX(half / feature_bytes(&t->p, outputs, copies, 1), HOG_MIN(n, whole));
    }
    return HOG_MAX(n, 1);
}

const hog_read_params *hog_trainer_read_params(const hog_trainer *t, const hog_read_params *rp,
                                               hog_read_params *buf)
{
    *buf = rp ? *rp : hog_read_params_default();
    const uint64_t cap = hog_trainer_max_features(t, t->p.loss == HOG_LOSS_SOFTMAX ? 2 : 1);
    if (!buf->max_features || buf->max_features > cap)
        buf->max_features = cap;
    /* The reading is held within the run's limit. */
    const uint64_t limit = hog_mem_limit(&t->p);
    if (!buf->mem_limit || buf->mem_limit > limit)
        buf->mem_limit = limit;
    return buf;
}

int hog_trainer_features_fit(const hog_trainer *t, uint64_t dim, uint32_t outputs, char *err, size_t err_len)
{
    const uint64_t cap = hog_trainer_max_features(t, outputs);
    if (dim <= cap)
        return 0;
    const double need = model_bytes(t, dim, outputs);
    return hog_fail(HOG_EPARAM, err, err_len, "%llu features x %u outputs need %.0f bytes with the optimiser's "
                    "state, more than half of hog_train_params.mem_limit (%llu bytes: %llu features): hash them "
                    "(hog_read_params.hash_bits = %u)", (unsigned long long)dim, outputs, need,
                    (unsigned long long)hog_mem_limit(&t->p), (unsigned long long)cap, hog_bits_within(cap));
}

int hog_train_params_check(const hog_train_params *p, const char **field)
{
    const char *bad = NULL;
    if ((unsigned)p->loss > HOG_LOSS_QUANTILE)
        bad = "loss";
    else if (p->threads > 4096)
        bad = "threads";
    else if (p->epochs < 1 || p->epochs > 1000000)
        bad = "epochs";
    else if (!(p->step > 0) || !isfinite(p->step))
        bad = "step";
    else if (!(p->decay > 0 && p->decay <= 1))
        bad = "decay";
    else if (!(p->power >= 0 && p->power <= 2))
        bad = "power";
    else if ((unsigned)p->schedule > HOG_SCHEDULE_ADAGRAD)
        bad = "schedule";
    else if (!(p->l2 >= 0) || !isfinite(p->l2))
        bad = "l2";
    else if (!(p->holdout >= 0 && p->holdout < 1))
        bad = "holdout";
    else if (p->fold && !((double)(p->fold + 1) * p->holdout <= 1 + 1e-9))
        bad = "fold";
    else if ((unsigned)p->train_metrics > HOG_TRAIN_METRICS_PROGRESSIVE)
        bad = "train_metrics";
    else if ((unsigned)p->class_weight > HOG_CLASS_WEIGHT_BALANCED ||
             (p->class_weight && hog_loss_is_regression(p->loss)))
        bad = "class_weight";
    else if (p->bias != 0 && p->bias != 1)
        bad = "bias";
    else if ((unsigned)p->bind > HOG_BIND_AUTO)
        bad = "bind";
    else if ((unsigned)p->kernel > HOG_KERNEL_DENSE)
        bad = "kernel";
    else if (p->batch < 1 || p->batch > 1024)
        bad = "batch";
    else if (p->normalized != 0 && p->normalized != 1)
        bad = "normalized";
    else if (!(p->l1 >= 0) || !isfinite(p->l1))
        bad = "l1";
    else if (p->early_stop > 1000000)
        bad = "early_stop";
    else if (p->average > p->epochs)
        bad = "average";
    else if (!(p->quantile > 0 && p->quantile < 1))
        bad = "quantile";
    else if ((unsigned)p->replicas > HOG_REPLICAS_CORE)
        bad = "replicas";
    else if (p->stream != 0 && p->stream != 1)
        bad = "stream";
    else if (p->factors > HOG_MAX_FACTORS)
        bad = "factors";
    else if (!(p->factor_init >= 0) || !isfinite(p->factor_init))
        bad = "factor_init";
    else if (p->field_aware > 1 || (p->field_aware && !p->factors))
        bad = "field_aware";
    else if (!(p->l2_rows >= 0) || !isfinite(p->l2_rows))
        bad = "l2_rows";
    else if (p->cross_bits > 30)
        bad = "cross_bits";
    if (field)
        *field = bad;
    return bad ? HOG_EPARAM : 0;
}

static const char *const loss_names[] = {"logistic", "hinge", "squared", "softmax", "modified_huber",
                                          "quantile"};
static const char *const schedule_names[] = {"decay", "invscaling", "constant", "adagrad"};
static const char *const kernel_names[] = {"auto", "sparse", "dense"};
static const char *const replicas_names[] = {"machine", "node", "core"};
static const char *const class_weight_names[] = {"none", "balanced"};
static const char *const train_metrics_names[] = {"exact", "progressive"};

/* names[v] for the enum value v, "unknown" past the list. */
static const char *name_of(const char *const *names, unsigned n, unsigned v)
{
    return v < n ? names[v] : "unknown";
}

/* The value named name in names, or -1. */
static int value_of(const char *const *names, unsigned n, const char *name)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return (int)i;
    return -1;
}

/* One enum's name and parse calls: HOG_EPARAM for a name it has not. */
#define NAMED_ENUM(type, what, names)                                                  \
    const char *hog_##what##_name(type v)                                              \
    {                                                                                  \
        return name_of(names, HOG_ARRAY_LEN(names), (unsigned)v);                      \
    }                                                                                  \
    int hog_##what##_parse(const char *name, type *out)                                \
    {                                                                                  \
        int v = value_of(names, HOG_ARRAY_LEN(names), name);                           \
        if (v < 0)                                                                     \
            return HOG_EPARAM;                                                         \
        *out = (type)v;                                                                \
        return 0;                                                                      \
    }

NAMED_ENUM(hog_loss, loss, loss_names)
NAMED_ENUM(hog_schedule, schedule, schedule_names)
NAMED_ENUM(hog_kernel, kernel, kernel_names)
NAMED_ENUM(hog_replicas, replicas, replicas_names)
NAMED_ENUM(hog_class_weight, class_weight, class_weight_names)
NAMED_ENUM(hog_train_metrics, train_metrics, train_metrics_names)

/* Why these thresholds: the dense kernel does features * outputs multiply-adds
 * per row in GEMM (vectorised, cache-blocked) where the sparse kernel does
 * nnz * outputs scalar ones through the shared model, so it wins once a
 * good share of the entries are non-zero. Measured on one thread with 784
 * features, random rows (dense examples/s over sparse): softmax, 10
 * classes: 0.84x at density 0.05, 1.3x at 0.1, 2.9x at 0.2, 3.1x at 0.35;
 * one output (squared loss): 1.3x, 1.5x, 2.3x, 1.7x. The threshold sits
 * at 0.2, above the crossover (about 0.07), because a mini-batch step
 * converges no faster per epoch than as many single-example steps: the
 * dense kernel should be clearly faster before it is chosen. Fashion-MNIST
 * (density 0.5): bench/bench-dense.sh.
 * Its per-worker buffers (a batch of dense rows, a snapshot of the weights
 * and their gradient) grow with features and features * outputs, hence the
 * caps: with the defaults at most 32 MiB of rows and 16 MiB per weight
 * buffer per worker. */
hog_kernel hog_kernel_pick(hog_kernel kernel, uint64_t rows, uint64_t features, uint64_t nnz, uint32_t outputs)
{
    if (kernel != HOG_KERNEL_AUTO)
        return kernel;
    if (rows == 0 || features == 0 || features > HOG_DENSE_MAX_FEATURES ||
        features * outputs > HOG_DENSE_MAX_WEIGHTS)
        return HOG_KERNEL_SPARSE;
    double density = (double)nnz / ((double)rows * (double)features);
    return density >= HOG_DENSE_MIN_DENSITY ? HOG_KERNEL_DENSE : HOG_KERNEL_SPARSE;
}
