/* hogtrain.h: the public API of hogtrain, a lock-free (HOGWILD!) multicore SGD trainer. */
#ifndef HOGTRAIN_H
#define HOGTRAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== *
 *  Version
 * ===================================================================== */
#define HOG_VERSION_MAJOR 0
#define HOG_VERSION_MINOR 1
#define HOG_VERSION_PATCH 0
#define HOG_VERSION_NUMBER                                                     \
    (HOG_VERSION_MAJOR * 10000 + HOG_VERSION_MINOR * 100 + HOG_VERSION_PATCH)

/* The version the library was built as: HOG_VERSION_NUMBER of its header. */
unsigned hog_version_number(void);
/* The same as a string, "MAJOR.MINOR.PATCH". */
const char *hog_version_string(void);

/* ===================================================================== *
 *  Errors
 *
 *  Every fallible call returns an int: 0 (or a count) on success and a
 *  negative value on failure. A negative errno (-ENOENT, -ENOMEM, ...) is
 *  passed through unchanged; hogtrain's own codes sit in a reserved range
 *  below -10000. hog_strerror() names both kinds.
 * ===================================================================== */
enum hog_error {
    HOG_OK = 0,
    HOG_EFORMAT = -10001,   /* malformed text input (line and column in the detail) */
    HOG_EMAGIC = -10002,    /* not a hogtrain file */
    HOG_EVERSION = -10003,  /* a hogtrain file of a version this build cannot read */
    HOG_ETRUNCATED = -10004,/* file shorter than its header says */
    HOG_ECHECKSUM = -10005, /* stored checksum does not match the contents */
    HOG_ECORRUPT = -10006,  /* a size, offset or index out of range */
    HOG_EPARAM = -10007,    /* an invalid parameter (its name in the detail) */
    HOG_ELABEL = -10008,    /* labels do not fit the loss (e.g. 3 classes for logistic) */
    HOG_EEMPTY = -10009,    /* a data set with no rows */
    HOG_ETOPOLOGY = -10010, /* hwloc could not describe or bind the machine */
    HOG_EMISMATCH = -10011, /* model and data disagree (e.g. feature count) */
};

/* A static, human-readable name for any return code of this library
 * (negative errno included). Never NULL. Thread-safe. */
const char *hog_strerror(int rc);

/* ===================================================================== *
 *  Logging
 *
 *  The library never prints. Messages go to one process-wide callback;
 *  with none set (the default) they are dropped. The callback may be called
 *  from any thread, and must be thread-safe.
 * ===================================================================== */
typedef enum hog_log_level {
    HOG_LOG_ERROR = 0,
    HOG_LOG_WARN = 1,
    HOG_LOG_INFO = 2,
    HOG_LOG_DEBUG = 3,
} hog_log_level;

typedef void (*hog_log_fn)(void *ctx, hog_log_level level, const char *msg);

/* Sets the log callback and the most verbose level passed to it.
 * fn == NULL silences the library. Not thread-safe against concurrent logging:
 * call it before starting work. */
void hog_log_set(hog_log_fn fn, void *ctx, hog_log_level max_level);

/* ===================================================================== *
 *  Data sets
 *
 *  A hog_dataset is an immutable set of sparse rows (CSR), grouped in blocks
 *  of rows. It is opened from a binary dataset (.hgd, memory-mapped) or
 *  parsed from libsvm/svmlight or CSV text into memory. Once opened it is
 *  read-only and may be shared by any number of threads.
 * ===================================================================== */
typedef struct hog_dataset hog_dataset;

typedef enum hog_format {
    HOG_FORMAT_AUTO = 0, /* detect from the content */
    HOG_FORMAT_BINARY,   /* hogtrain binary dataset (.hgd) */
    HOG_FORMAT_LIBSVM,   /* label idx:val idx:val ... */
    HOG_FORMAT_CSV,      /* delimited numeric columns, one of them the label */
    HOG_FORMAT_VW,       /* Vowpal Wabbit text: label [weight] |ns feature[:value] ... */
} hog_format;

/* What to do with a malformed line of text. */
typedef enum hog_on_error {
    HOG_ON_ERROR_STOP = 0, /* fail with HOG_EFORMAT and the location (the default) */
    HOG_ON_ERROR_SKIP,     /* skip the line, count it, remember the first locations */
} hog_on_error;

/* How to read a file. Make one with hog_read_params_default(). */
typedef struct hog_read_params {
    hog_format format;     /* HOG_FORMAT_AUTO: detect from the first bytes */
    /* CSV only */
    char delimiter;        /* field separator; 0: detect (',', ';', '\t' or ' ') */
    int header;            /* 1: first line is a header; 0: it is data; -1: detect */
    long label_index;      /* label column, 0-based; used when label_name is NULL */
    const char *label_name;/* label column by header name (implies a header) */
    const char *ignore;    /* CSV: comma-separated columns (names or 0-based indices) to drop */
    const char *categorical; /* CSV: comma-separated columns whose values are hashed into features */
    /* text formats */
    uint32_t rows_per_block; /* rows in each block; 0: the default (4096) */
    unsigned hash_bits;    /* 0: numeric indices as written; 1..31: every feature hashed into 2^bits
                              (string features, VW and categorical, are always hashed: 18 bits if 0) */
    unsigned index_base;   /* libsvm: 0 stores indices as written, 1 subtracts one (1-based files) */
    hog_on_error on_error;
    unsigned threads;      /* parser threads; 0: one per core */
} hog_read_params;

hog_read_params hog_read_params_default(void);

/* A read-only view of one row. Pointers stay valid while the data set is open. */
typedef struct hog_row {
    const uint32_t *index; /* feature indices, strictly increasing */
    const float *value;    /* one value per index */
    uint32_t nnz;          /* number of stored features */
    float label;
} hog_row;

/* Summary of a data set. */
typedef struct hog_dataset_info {
    hog_format format;      /* where it came from */
    uint64_t rows;
    uint64_t features;      /* largest feature index + 1 */
    uint64_t nnz;           /* stored features over all rows */
    uint32_t blocks;
    uint32_t rows_per_block;
    uint64_t fingerprint;   /* a hash of the contents, the same for text and .hgd */
    uint64_t file_bytes;    /* size of the file it was read from */
    uint64_t skipped;       /* malformed lines skipped (on_error SKIP); 0 for .hgd */
} hog_dataset_info;

/* Opens a data set. A binary dataset is memory-mapped and every size, offset,
 * index and checksum in it is validated before it is returned; text is parsed
 * strictly into memory.
 * params may be NULL (defaults). On success *out owns the data set (free it
 * with hog_dataset_close) and 0 is returned.
 * Errors: -errno from open/read/mmap, -ENOMEM, HOG_EFORMAT (text: the detail
 * names file:line:column and what was expected), HOG_EMAGIC, HOG_EVERSION,
 * HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT, HOG_EEMPTY, HOG_EPARAM.
 * On failure, if err_detail is not NULL, a message is written there
 * (at most err_len bytes, NUL-terminated). Thread-safe. */
int hog_dataset_open(const char *path, const hog_read_params *params,
                     hog_dataset **out, char *err_detail, size_t err_len);

/* Releases a data set. NULL is accepted. */
void hog_dataset_close(hog_dataset *ds);

/* Where malformed lines were skipped while reading text with on_error SKIP:
 * writes the first few locations, "file:line:column: expected ..., found
 * ...", one per line, into buf (len bytes, NUL-terminated; "" if none) and
 * returns the number of lines skipped in all. */
uint64_t hog_dataset_skipped(const hog_dataset *ds, char *buf, size_t len);

/* Fills *info. Never fails. */
void hog_dataset_get_info(const hog_dataset *ds, hog_dataset_info *info);

/* Row i (0 <= i < rows). The caller checks the bound; thread-safe. */
hog_row hog_dataset_row(const hog_dataset *ds, uint64_t i);

/* Writes ds as a binary dataset at path atomically: a temporary file in the
 * same folder, fsync, rename, fsync of the folder. On failure nothing is left
 * at path (an older file there is untouched).
 * Errors: -errno from the file system, -ENOMEM. */
int hog_dataset_save(const hog_dataset *ds, const char *path);

/* Streams a text file straight into a binary dataset with bounded memory
 * (one block of rows at a time), atomically as hog_dataset_save does.
 * If info is not NULL it receives the summary of what was written; when
 * lines were skipped (on_error SKIP), err_detail receives their first
 * locations as hog_dataset_skipped writes them, and 0 is still returned.
 * Errors: as hog_dataset_open for text, plus those of hog_dataset_save. */
int hog_dataset_convert(const char *in_path, const hog_read_params *params,
                        const char *out_path, hog_dataset_info *info,
                        char *err_detail, size_t err_len);

/* ===================================================================== *
 *  Training parameters
 * ===================================================================== */
typedef enum hog_loss {
    HOG_LOSS_LOGISTIC = 0, /* binary; labels > 0 positive, others negative */
    HOG_LOSS_HINGE,        /* binary linear SVM */
    HOG_LOSS_SQUARED,      /* regression */
    HOG_LOSS_SOFTMAX,      /* multinomial logistic; integer class labels */
    HOG_LOSS_MODIFIED_HUBER, /* binary: quadratically smoothed hinge, linear for margins below -1 */
    HOG_LOSS_QUANTILE,     /* regression: pinball loss at the quantile tau (params.quantile) */
} hog_loss;

typedef enum hog_schedule {
    HOG_SCHEDULE_DECAY = 0, /* step * decay^epoch (HOGWILD!) */
    HOG_SCHEDULE_INVSCALING,/* step / (1 + epochs_done)^power, per example */
    HOG_SCHEDULE_CONSTANT,  /* step, unchanged */
    HOG_SCHEDULE_ADAGRAD,   /* step / sqrt(sum of the coordinate's squared gradients) */
} hog_schedule;

typedef struct hog_epoch_stats hog_epoch_stats;
/* Progress callback: called from the calling thread after every epoch
 * (done == 1) and, on long epochs, from one worker thread during it
 * (done == 0, stats->progress < 1). */
typedef void (*hog_progress_fn)(void *ctx, const hog_epoch_stats *stats, int done);

typedef struct hog_train_params {
    hog_loss loss;
    unsigned threads;    /* workers; 0: one per core */
    unsigned epochs;     /* passes over the training rows */
    double step;         /* initial step size */
    double decay;        /* HOG_SCHEDULE_DECAY: multiply step by this after each epoch */
    double power;        /* HOG_SCHEDULE_INVSCALING: the exponent */
    hog_schedule schedule;
    double l2;           /* objective: mean loss + l2/2 * |w|^2 (bias excluded) */
    double holdout;      /* fraction of rows held out for evaluation when no test set */
    uint64_t seed;       /* shuffling and holdout; one thread is bit-for-bit reproducible */
    int bias;            /* 1: learn an intercept */
    int bind;            /* 1: pin workers to cores with hwloc */
    uint64_t mem_limit;  /* bytes of memory the data may occupy; a mapped data set larger
                            than this is trained out of core: blocks in shuffled order, each
                            read ahead and dropped when done. 0: half of MemAvailable */
    hog_progress_fn progress;
    void *progress_ctx;
    int normalized;      /* 1: normalised, scale-invariant update (Ross, Mineiro, Langford
                            2013, Vowpal Wabbit's default): each feature's step is divided by
                            its largest |x| seen squared (by |x| times sqrt(G) with adagrad) */
    double l1;           /* objective adds l1 * |w|_1 (bias excluded); with l2: elastic net.
                            Truncated gradient: weights that cross zero stop at exactly zero */
    unsigned early_stop; /* 0: off; K: with a test set or holdout, stop after K epochs without
                            a lower test loss and keep the best epoch's model */
    unsigned average;    /* 0: off; E (<= epochs): the model is the average of the weights
                            over the last E epochs (Polyak-Ruppert), sampled at 64 evenly
                            spaced points of each epoch; evaluation uses the average. With
                            early stopping, the kept epoch's average if it was in the window */
    double quantile;     /* HOG_LOSS_QUANTILE: tau in (0, 1) */
} hog_train_params;

/* The defaults: logistic, one thread per core, 10 epochs, step 0.1, decay 0.9,
 * invscaling power 0.5, decay schedule, l2 1e-6, no holdout, seed 1, bias,
 * binding on, memory limit 0 (half of what is available), no progress callback,
 * plain (not normalised) updates, l1 0, no early stopping, no averaging,
 * quantile 0.5. */
hog_train_params hog_train_params_default(void);

/* Checks every field. Returns 0, or HOG_EPARAM with *field (if not NULL) set
 * to the name of the first bad field. */
int hog_train_params_check(const hog_train_params *p, const char **field);

/* Names: "logistic", "hinge", "squared", "softmax", "modified_huber",
 * "quantile"; "decay", "invscaling", "constant", "adagrad".
 * The parsers return 0 or HOG_EPARAM. */
const char *hog_loss_name(hog_loss loss);
int hog_loss_parse(const char *name, hog_loss *out);
const char *hog_schedule_name(hog_schedule s);
int hog_schedule_parse(const char *name, hog_schedule *out);

/* ===================================================================== *
 *  Metrics
 * ===================================================================== */
/* Metrics of a model on a set of rows. Fields that do not apply to the loss
 * are NaN (AUC for multiclass, RMSE for classification, ...). */
typedef struct hog_metrics {
    uint64_t rows;
    double loss;       /* mean loss of the model's own kind (log loss, hinge, squared/2,
                          modified Huber, pinball for quantile) */
    double logloss;    /* logistic and softmax */
    double accuracy;   /* classification */
    double auc;        /* binary */
    double rmse;       /* squared and quantile */
} hog_metrics;

struct hog_epoch_stats {
    unsigned epoch;        /* 1-based */
    unsigned epochs;
    double progress;       /* fraction of this epoch done */
    double step;           /* step size at the start of the epoch */
    double seconds;        /* wall time of training so far, evaluation excluded */
    uint64_t examples;     /* examples processed so far */
    uint64_t nnz;          /* non-zeros processed so far */
    double train_loss;     /* mean training loss over the epoch (as it ran) */
    hog_metrics test;      /* on the test set or holdout; rows == 0 if none */
};

/* ===================================================================== *
 *  Models
 * ===================================================================== */
typedef struct hog_model hog_model;

typedef struct hog_model_info {
    hog_loss loss;
    uint64_t features;   /* weights per output */
    uint32_t outputs;    /* 1, or the number of classes for softmax */
    uint32_t classes;    /* 2 for binary losses, K for softmax, 0 for squared */
    uint64_t data_fingerprint;
    uint64_t data_skipped; /* malformed lines of the training text skipped */
    uint64_t train_rows;
    hog_train_params params; /* progress callback fields are NULL */
    hog_metrics train;   /* final training metrics (mean loss as it ran) */
    hog_metrics test;    /* final test metrics; rows == 0 if none */
    double seconds;      /* training wall time */
    uint64_t nonzero;    /* weights (bias excluded) that are not exactly zero */
    unsigned epochs_run; /* epochs trained: params.epochs unless stopped early */
    unsigned best_epoch; /* the epoch whose model this is (1-based): epochs_run, or with
                            early stopping the one with the lowest test loss */
} hog_model_info;

/* Releases a model. NULL is accepted. */
void hog_model_free(hog_model *m);

/* Fills *info. Never fails. */
void hog_model_get_info(const hog_model *m, hog_model_info *info);

/* The label value of class k (0 <= k < classes): the original label of the
 * training data (e.g. -1 and 1, or 0..9). */
double hog_model_class_label(const hog_model *m, uint32_t k);

/* Scores one row. For logistic: the probability of the positive class;
 * hinge: the margin; modified_huber: a probability estimate,
 * (clip(margin, -1, 1) + 1) / 2; squared: the prediction; quantile: the
 * predicted tau-quantile; softmax: the index of the most
 * probable class is returned in *cls and, if probs is not NULL, the class
 * probabilities are written there (info.classes of them). For binary losses
 * *cls (if cls is not NULL) receives 1 for positive, 0 for negative.
 * Features beyond the model's size are ignored. Thread-safe. */
double hog_model_predict(const hog_model *m, const hog_row *row, uint32_t *cls,
                         float *probs);

/* Evaluates a model on every row of ds (rows with features unknown to the
 * model are scored on the known ones). Uses up to `threads` threads (0: all
 * cores). Errors: -ENOMEM, HOG_ELABEL (softmax labels not among the model's
 * classes are counted as errors, not failures; this is for a binary model on
 * data without two classes: never returned today). */
int hog_model_evaluate(const hog_model *m, const hog_dataset *ds,
                       unsigned threads, hog_metrics *out);

/* Saves a model atomically (temporary file, fsync, rename). The file holds a
 * magic, a version, the training parameters, the data fingerprint, the
 * final metrics and the weights, covered by a CRC-32.
 * Errors: -errno from the file system. */
int hog_model_save(const hog_model *m, const char *path);

/* Loads a model saved by hog_model_save. Errors: -errno, -ENOMEM,
 * HOG_EMAGIC, HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT; a
 * message in err_detail as for hog_dataset_open. */
int hog_model_load(const char *path, hog_model **out, char *err_detail,
                   size_t err_len);

/* ===================================================================== *
 *  Trainer
 *
 *  A trainer owns a pool of worker threads (one per core, bound with hwloc),
 *  made once and reused for every epoch and every run. One run at a time
 *  per trainer.
 * ===================================================================== */
typedef struct hog_trainer hog_trainer;

/* Creates a trainer with the given parameters (checked first).
 * Errors: HOG_EPARAM (field name in err_detail), -ENOMEM, -errno from
 * pthread_create, HOG_ETOPOLOGY. */
int hog_trainer_create(const hog_train_params *p, hog_trainer **out,
                       char *err_detail, size_t err_len);

/* Stops the workers and releases the trainer. NULL is accepted. */
void hog_trainer_free(hog_trainer *t);

/* The number of worker threads. */
unsigned hog_trainer_threads(const hog_trainer *t);

/* Trains a new model on train with HOGWILD! SGD. test may be NULL: then the
 * holdout fraction of train (if any) is used for evaluation. On success
 * *out owns the model.
 * With params.early_stop, the model returned is the best epoch's; with
 * params.average, the average (see hog_train_params).
 * Errors: HOG_EEMPTY, HOG_ELABEL (labels do not fit the loss; detail names
 * the offending label), HOG_EPARAM (early_stop with neither a test set nor
 * a holdout), -ENOMEM. */
int hog_trainer_run(hog_trainer *t, const hog_dataset *train,
                    const hog_dataset *test, hog_model **out,
                    char *err_detail, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif /* HOGTRAIN_H */
