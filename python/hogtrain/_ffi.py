# _ffi.py: the shared library, loaded with cffi in ABI mode (no compiler at import), and its errors as Python exceptions.
# SPDX-License-Identifier: BSD-2-Clause
"""Loads libhogtrain.so and declares the part of hogtrain.h the package uses.

cffi's ABI mode reads the declarations below and calls the library through
libffi: nothing is compiled when the package is imported. Every call
releases the GIL while it runs (cffi does so for every call in either
mode), so other Python threads go on while a model trains. The structs are
declared field by field as hogtrain.h has them; python/tests/test_ffi.py
compiles a program against the header and checks every size and offset.
"""

import ctypes.util
import os
import sys

import cffi

from ._version import __version__

# The header this file was written against (HOG_VERSION_NUMBER), the
# package's version: the library must be of its major version and no older.
_major, _minor, _patch = (int(part) for part in __version__.split("."))
HEADER_VERSION = _major * 10000 + _minor * 100 + _patch
MAJOR = _major

CDEF = """
unsigned hog_version_number(void);
const char *hog_version_string(void);
int hog_init(void);
const char *hog_strerror(int rc);

enum { HOG_EFORMAT = -10001, HOG_EMAGIC = -10002, HOG_EVERSION = -10003,
       HOG_ETRUNCATED = -10004, HOG_ECHECKSUM = -10005, HOG_ECORRUPT = -10006,
       HOG_EPARAM = -10007, HOG_ELABEL = -10008, HOG_EEMPTY = -10009,
       HOG_ETOPOLOGY = -10010, HOG_ECPU = -10012, HOG_ENOTFILE = -10013,
       HOG_ENONFINITE = -10014, HOG_ENET = -10015, HOG_EINTERRUPTED = -10016,
       HOG_EDIVERGED = -10017 };

typedef enum { HOG_LOG_ERROR = 0, HOG_LOG_WARN = 1, HOG_LOG_INFO = 2, HOG_LOG_DEBUG = 3 } hog_log_level;
typedef void (*hog_log_fn)(void *ctx, hog_log_level level, const char *msg);
void hog_log_set(hog_log_fn fn, void *ctx, hog_log_level max_level);

typedef struct hog_dataset hog_dataset;
typedef enum { HOG_FORMAT_AUTO = 0, HOG_FORMAT_BINARY, HOG_FORMAT_LIBSVM, HOG_FORMAT_CSV,
               HOG_FORMAT_VW, HOG_FORMAT_FFM } hog_format;
typedef enum { HOG_ON_ERROR_STOP = 0, HOG_ON_ERROR_SKIP } hog_on_error;
typedef enum { HOG_VERIFY_AT_OPEN = 0, HOG_VERIFY_AT_FIRST_READ } hog_verify;
typedef struct hog_read_params {
    hog_format format;
    char delimiter;
    int header;
    long label_index;
    const char *label_name;
    const char *ignore;
    const char *categorical;
    uint32_t rows_per_block;
    unsigned hash_bits;
    int index_base;
    hog_on_error on_error;
    unsigned threads;
    uint64_t max_line;
    uint64_t max_features;
    uint64_t mem_limit;
    const char *temp_dir;
    hog_verify verify;
    uint32_t padding;
    int feature_names;
    int fields;
    uint64_t reserved[1];
} hog_read_params;
hog_read_params hog_read_params_default(void);

typedef struct hog_dataset_info {
    hog_format format;
    uint64_t rows;
    uint64_t features;
    uint64_t nnz;
    uint32_t blocks;
    uint32_t rows_per_block;
    uint64_t fingerprint;
    uint64_t file_bytes;
    uint64_t skipped;
    int weighted;
    int index_base;
} hog_dataset_info;

int hog_dataset_open(const char *path, const hog_read_params *params, hog_dataset **out,
                     char *err_detail, size_t err_len);
void hog_dataset_close(hog_dataset *ds);
void hog_dataset_get_info(const hog_dataset *ds, hog_dataset_info *info);
int hog_dataset_fields(const hog_dataset *ds);

typedef struct hog_csr {
    uint64_t rows;
    uint64_t cols;
    const void *indptr;
    uint32_t indptr_bytes;
    uint32_t rows_per_block;
    const uint32_t *indices;
    const float *values;
    const float *labels;
    const float *weights;
    const uint16_t *fields;
    uint32_t field_count;
    uint32_t reserved32;
    uint64_t reserved[2];
} hog_csr;
#define HOG_ARRAYS_BORROW 1
int hog_dataset_from_csr(const hog_csr *csr, int flags, hog_dataset **out, char *err_detail, size_t err_len);
int hog_dataset_from_dense(const float *x, uint64_t rows, uint64_t cols, const float *labels,
                           const float *weights, uint32_t rows_per_block, hog_dataset **out,
                           char *err_detail, size_t err_len);
void hog_dataset_labels(const hog_dataset *ds, float *out);

typedef enum { HOG_LOSS_LOGISTIC = 0, HOG_LOSS_HINGE, HOG_LOSS_SQUARED, HOG_LOSS_SOFTMAX,
               HOG_LOSS_MODIFIED_HUBER, HOG_LOSS_QUANTILE } hog_loss;
typedef enum { HOG_SCHEDULE_DECAY = 0, HOG_SCHEDULE_INVSCALING, HOG_SCHEDULE_CONSTANT,
               HOG_SCHEDULE_ADAGRAD } hog_schedule;
typedef enum { HOG_KERNEL_AUTO = 0, HOG_KERNEL_SPARSE, HOG_KERNEL_DENSE } hog_kernel;
typedef enum { HOG_REPLICAS_MACHINE = 0, HOG_REPLICAS_NODE, HOG_REPLICAS_CORE } hog_replicas;
typedef enum { HOG_CLASS_WEIGHT_NONE = 0, HOG_CLASS_WEIGHT_BALANCED } hog_class_weight;
typedef enum { HOG_TRAIN_METRICS_EXACT = 0, HOG_TRAIN_METRICS_PROGRESSIVE } hog_train_metrics;
typedef struct hog_epoch_stats hog_epoch_stats;
typedef void (*hog_progress_fn)(void *ctx, const hog_epoch_stats *stats, int done);
typedef struct hog_train_params {
    hog_loss loss;
    unsigned threads;
    unsigned epochs;
    double step;
    double decay;
    double power;
    hog_schedule schedule;
    double l2;
    double holdout;
    uint64_t seed;
    int bias;
    int bind;
    uint64_t mem_limit;
    hog_progress_fn progress;
    void *progress_ctx;
    hog_kernel kernel;
    unsigned batch;
    int normalized;
    double l1;
    unsigned early_stop;
    unsigned average;
    double quantile;
    hog_replicas replicas;
    int stream;
    uint64_t fold;
    hog_class_weight class_weight;
    hog_train_metrics train_metrics;
    uint32_t factors;
    float factor_init;
    uint32_t field_aware;
    uint32_t reserved32;
    double l2_rows;
    const char *interactions;
    uint32_t cross_bits;
    uint32_t l2_crossed;
    uint64_t reserved[6];
} hog_train_params;
#define HOG_BIND_AUTO 2
#define HOG_MAX_FACTORS 256
hog_train_params hog_train_params_default(void);
int hog_train_params_check(const hog_train_params *p, const char **field);
int hog_loss_parse(const char *name, hog_loss *out);
int hog_schedule_parse(const char *name, hog_schedule *out);
int hog_kernel_parse(const char *name, hog_kernel *out);
int hog_replicas_parse(const char *name, hog_replicas *out);
const char *hog_loss_name(hog_loss loss);
const char *hog_schedule_name(hog_schedule s);
const char *hog_kernel_name(hog_kernel kernel);
const char *hog_replicas_name(hog_replicas r);

typedef struct hog_metrics {
    uint64_t rows;
    double loss;
    double logloss;
    double accuracy;
    double auc;
    double rmse;
} hog_metrics;

typedef struct hog_model hog_model;
typedef struct hog_model_info {
    hog_loss loss;
    uint64_t features;
    uint32_t outputs;
    uint32_t classes;
    uint64_t data_fingerprint;
    uint64_t data_skipped;
    int data_index_base;
    uint64_t train_rows;
    hog_train_params params;
    hog_metrics train;
    hog_metrics test;
    double seconds;
    uint64_t nonzero;
    unsigned epochs_run;
    unsigned best_epoch;
} hog_model_info;
void hog_model_free(hog_model *m);
void hog_model_get_info(const hog_model *m, hog_model_info *info);
int hog_model_evaluate(const hog_model *m, const hog_dataset *ds, unsigned threads, hog_metrics *out);
int hog_model_save(const hog_model *m, const char *path);
int hog_model_load(const char *path, hog_model **out, char *err_detail, size_t err_len);

typedef enum { HOG_PREDICT_SCORE = 0, HOG_PREDICT_LABEL, HOG_PREDICT_MARGINS,
               HOG_PREDICT_PROBS } hog_predict_kind;
int hog_model_predict_array(const hog_model *m, const hog_dataset *ds, hog_predict_kind kind,
                            unsigned threads, float *out, uint64_t out_len,
                            char *err_detail, size_t err_len);
typedef struct hog_weights {
    uint64_t features;
    uint32_t outputs;
    uint32_t classes;
    float *w;
    float *bias;
    const double *class_labels;
} hog_weights;
void hog_model_weights(hog_model *m, hog_weights *out);
const char *hog_model_class_name(const hog_model *m, uint32_t k);
uint32_t hog_model_fields(const hog_model *m);
const char *hog_model_feature_name(const hog_model *m, uint64_t f);
uint64_t hog_model_named_features(const hog_model *m);
uint64_t hog_model_named_feature(const hog_model *m, uint64_t k);
int hog_model_from_weights(hog_loss loss, uint64_t features, uint32_t classes,
                           const double *class_labels, const float *w, const float *bias,
                           hog_model **out, char *err_detail, size_t err_len);

typedef struct hog_trainer hog_trainer;
int hog_trainer_create(const hog_train_params *p, hog_trainer **out, char *err_detail, size_t err_len);
void hog_trainer_free(hog_trainer *t);
int hog_trainer_run(hog_trainer *t, const hog_dataset *train, const hog_dataset *test,
                    hog_model **out, char *err_detail, size_t err_len);
int hog_trainer_set_init(hog_trainer *t, const hog_model *init);
typedef struct hog_file_run {
    hog_dataset *train;
    hog_dataset *test;
    int streamed;
    int cache_used;
    double read_seconds;
    char note[160];
} hog_file_run;
int hog_trainer_run_file(hog_trainer *t, const char *path, const hog_read_params *rp,
                         const char *cache_path, const char *test_path, hog_model **out,
                         hog_file_run *run, char *err_detail, size_t err_len);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    """Where the library is looked for, in order, as (what, path) pairs."""
    env = os.environ.get("HOGTRAIN_LIB")
    if env:
        return [("HOGTRAIN_LIB", env)]
    soname = "libhogtrain.so.%d" % MAJOR
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), soname)
    found = [("next to the package", here)] if os.path.exists(here) else []
    found.append(("the system's library path", soname))
    other = ctypes.util.find_library("hogtrain")
    if other and other != soname:
        found.append(("ctypes.util.find_library", other))
    # Where make install puts it when the loader was not told: PREFIX/lib for
    # the default PREFIX (no ldconfig run without root, or with DESTDIR) and
    # for PREFIX the environment's own (make install PREFIX=$VIRTUAL_ENV).
    for prefix in (sys.prefix, "/usr/local"):
        path = os.path.join(prefix, "lib", soname)
        if os.path.exists(path) and all(path != p for _, p in found):
            found.append(("make install's PREFIX/lib", path))
    return found


def _load():
    tried = []
    for what, path in _candidates():
        try:
            lib = ffi.dlopen(path)
        except OSError as e:
            tried.append("%s (%s): %s" % (path, what, e))
            continue
        version = lib.hog_version_number()
        if version // 10000 != MAJOR or version < HEADER_VERSION:
            tried.append("%s (%s): version %s, this package needs %d.x at least %d.%d" % (
                path, what, ffi.string(lib.hog_version_string()).decode(), MAJOR,
                MAJOR, HEADER_VERSION // 100 % 100))
            continue
        rc = lib.hog_init()
        if rc != 0:
            raise ImportError("%s: %s" % (path, ffi.string(lib.hog_strerror(rc)).decode()))
        return lib, path
    raise ImportError("hogtrain: libhogtrain.so.%d not found or not usable; set HOGTRAIN_LIB to its path "
                      "(make install puts it in PREFIX/lib, make in build/). Tried: %s" % (MAJOR, "; ".join(tried)))


lib, LIBRARY_PATH = _load()


class HogtrainError(Exception):
    """An error of the library: code is its return code (hog_error), and the
    message is the library's detail (or hog_strerror's name of the code)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class HogtrainValueError(HogtrainError, ValueError):
    """Bad data or parameters: HOG_EPARAM, HOG_ELABEL, HOG_EFORMAT, HOG_EEMPTY, HOG_ENONFINITE,
    HOG_EDIVERGED (a step too large for the data's scale)."""


_VALUE_CODES = {lib.HOG_EPARAM, lib.HOG_ELABEL, lib.HOG_EFORMAT, lib.HOG_EEMPTY, lib.HOG_ENONFINITE,
                lib.HOG_EDIVERGED}


def error(rc, err=None):
    """The exception for return code rc, with the detail in err (a char[] or None).
    A negative errno becomes an OSError of that errno (FileNotFoundError, ...)."""
    detail = ffi.string(err).decode("utf-8", "replace") if err is not None else ""
    name = ffi.string(lib.hog_strerror(rc)).decode("utf-8", "replace")
    message = detail or name
    if -4096 < rc < 0:
        return OSError(-rc, message)
    if rc in _VALUE_CODES:
        return HogtrainValueError(rc, message)
    return HogtrainError(rc, message)


def check(rc, err=None):
    """Raises error(rc, err) when rc is negative; returns rc."""
    if rc < 0:
        raise error(rc, err)
    return rc


def new_err():
    """A buffer for a call's err_detail."""
    return ffi.new("char[]", 1024)
