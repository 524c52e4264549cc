/* hogtrain.h: the public API of hogtrain, a lock-free (HOGWILD!) multicore SGD trainer. */
/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef HOGTRAIN_H
#define HOGTRAIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with every symbol hidden but those declared here
 * (-fvisibility=hidden and a version script that exports hog_* only):
 * this pragma gives the declarations below default visibility. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ===================================================================== *
 *  Version
 * ===================================================================== */
#define HOG_VERSION_MAJOR 0
#define HOG_VERSION_MINOR 2
#define HOG_VERSION_PATCH 0
#define HOG_VERSION_NUMBER                                                     \
    (HOG_VERSION_MAJOR * 10000 + HOG_VERSION_MINOR * 100 + HOG_VERSION_PATCH)

/* The version the library was built as: HOG_VERSION_NUMBER of its header. */
unsigned hog_version_number(void);
/* The same as a string, "MAJOR.MINOR.PATCH". */
const char *hog_version_string(void);

/* A program linked to the shared library (libhogtrain.so.MAJOR, whose
 * soname carries the major version) may meet a newer library than the
 * header it was built with. It checks at start that the library is of the
 * header's major version and no older than the header:
 *     unsigned v = hog_version_number();
 *     if (v / 10000 != HOG_VERSION_MAJOR || v < HOG_VERSION_NUMBER) refuse;
 * HOG_VERSION_OK() is that test. */
#define HOG_VERSION_OK()                                                       \
    (hog_version_number() / 10000 == HOG_VERSION_MAJOR &&                      \
     hog_version_number() >= HOG_VERSION_NUMBER)

/* ===================================================================== *
 *  What is stable
 *
 *  Everything declared in this header is the public API, kept within a
 *  major version as "Compatibility" below says; the library exports
 *  nothing else (its other hog_ names, in the static library, are
 *  private and change at will). File formats carry their own versions.
 *  The library allocates with the host program's malloc, calloc, realloc,
 *  posix_memalign and free: it brings no allocator of its own (the hogtrain
 *  command links jemalloc for itself; hogtrain.pc never does). A program
 *  calls hog_init() first (see Initialisation); nothing else needs setting
 *  up or tearing down.
 * ===================================================================== */

/* ===================================================================== *
 *  Compatibility
 *
 *  Within one major version, a program built against an older header runs
 *  with a newer library unchanged. The parameter structs a caller holds by
 *  value and passes in (hog_read_params, hog_train_params, hog_mf_params,
 *  hog_link_params, hog_predict_params) have a fixed size (128, 256, 128,
 *  192 and 64 bytes on 64-bit systems, which the library's build checks)
 *  and end in a reserved area (hog_mf_params' last 4 bytes became
 *  early_stop in 0.2: it has no room left, and a further field of its
 *  needs a new major version):
 *  - Make them with their _default() function, which zeroes the reserved
 *    area; a program that fills one in itself zeroes it all first.
 *  - A minor version adds a field only by taking its bytes from the front
 *    of the reserved area (keeping the size), and only with zero meaning
 *    what the library did before the field existed: an older program's
 *    zeroed reserved area keeps the older behaviour. A field is never
 *    moved, removed or given another type or meaning.
 *  - A minor version may append a value to an enum (after its last one,
 *    never between: no value changes its number), as HOG_FORMAT_FFM was in
 *    0.2: a program built before it never passes the new value, and one
 *    that reads an enum from the library (hog_dataset_info.format) treats
 *    a value it does not know as "other". It may add functions.
 *  - Anything else is a new major version: a field of a struct the library
 *    fills in (the _info and _stats structs, hog_metrics, hog_row,
 *    hog_file_run), an enum's existing values, a function's signature. An
 *    error code is never reused for another meaning.
 * ===================================================================== */

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
    /* -10011 is retired: it was never returned */
    HOG_ECPU = -10012,      /* this CPU lacks instructions the library was built for (hog_init) */
    HOG_ENOTFILE = -10013,  /* an output path names a block device or a socket; or a file the library
                               reads back (cache, checkpoint, secret) is a device, FIFO or socket */
    HOG_ENONFINITE = -10014,/* a model holds NaN or infinite weights (the training diverged) */
    HOG_ENET = -10015,      /* a multi-node run failed: a peer refused or gone, the coordinator
                               unreachable, the run aborted (the detail names the peer) */
    HOG_EINTERRUPTED = -10016, /* a run stopped by hog_trainer_interrupt (its checkpoint, if one
                                  was set, written: the detail says where it stands) */
    HOG_EDIVERGED = -10017, /* the training diverged: an epoch's loss was NaN, infinite or more
                               than ten times the first epoch's (plus one); no model is made */
};

/* A static, human-readable name for any return code of this library
 * (negative errno included). Never NULL. Thread-safe. */
const char *hog_strerror(int rc);

/* Error details and log messages name a setting by its struct and field,
 * as "hog_train_params.step" or "hog_read_params.index_base", and a value
 * of an enum by its constant ("hog_train_params.loss = HOG_LOSS_SOFTMAX"),
 * so a program can point its users at its own name for the setting. */

/* ===================================================================== *
 *  Initialisation
 *
 *  On x86-64 the library is built for a CPU level (by default x86-64-v2:
 *  SSSE3, SSE4.2 and POPCNT, which Intel CPUs have since 2008 and AMD's
 *  since 2011); on an older CPU its code would stop the program with
 *  SIGILL. Call hog_init() before any other hog_ function and use the
 *  library only if it returns 0. The calls that read files or create
 *  objects (hog_dataset_open, hog_dataset_convert, hog_model_load,
 *  hog_trainer_create, hog_ratings_open, hog_mf_train, hog_mf_load,
 *  hog_topology_set, hog_topology_describe, hog_file_probe,
 *  hog_output_open, hog_dataset_from_csr, hog_dataset_from_dense,
 *  hog_model_from_weights) check as well
 *  and return HOG_ECPU, with the missing instructions in the detail.
 * ===================================================================== */

/* Checks that this CPU has every instruction set the library was built to
 * use, itself in code any x86-64 CPU runs. Returns 0, or HOG_ECPU. Does
 * the work once; thread-safe. */
int hog_init(void);

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
    HOG_FORMAT_VW,       /* Vowpal Wabbit text: label [weight] |ns feature[:value] ...; read
                            with hog_read_params.fields, each namespace is a field */
    HOG_FORMAT_FFM,      /* LIBFFM text: label field:index:value ..., fields and indices
                            non-negative integers, both kept as written (since 0.2) */
} hog_format;

/* What to do with a malformed line of text (a stream's last line cut
 * short, without its newline, is one: a file's last line may lack it). */
typedef enum hog_on_error {
    HOG_ON_ERROR_STOP = 0, /* fail with HOG_EFORMAT and the location (the default) */
    HOG_ON_ERROR_SKIP,     /* skip the line, count it, remember the first locations */
} hog_on_error;

/* When the blocks of a binary dataset (.hgd) are checked: each block's
 * checksum, then its offsets, indices, values and labels. */
typedef enum hog_verify {
    HOG_VERIFY_AT_OPEN = 0,    /* every block, when the file is opened (the default): an open data set
                                  is sound throughout, for any reader */
    HOG_VERIFY_AT_FIRST_READ,  /* each block the first time hogtrain's own calls read it (training, its
                                  scan, evaluation, prediction): one pass over the file instead of two,
                                  a bad block still stopping the call, with its number, before any of
                                  its rows is used. hog_dataset_row does not check: call
                                  hog_dataset_verify before reading rows of such a data set yourself */
} hog_verify;

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
    uint32_t rows_per_block; /* rows in each block, at most 2^24; 0: the default (4096) */
    unsigned hash_bits;    /* 0: numeric indices as written; 1..31: every feature hashed into 2^bits
                              (string features, VW and categorical, are always hashed: 18 bits if 0) */
    int index_base;        /* libsvm: -1 (default) detects it: 0-based if an index 0 appears in the
                              file's first MiB, else 1-based; 0 stores indices as written; 1
                              subtracts one (1-based files) */
    hog_on_error on_error;
    unsigned threads;      /* parser threads; 0: one per core */
    uint64_t max_line;     /* the longest line of text allowed, in bytes (its newline not counted);
                              0: 64 MiB. A longer line is an error (HOG_EFORMAT, with its line
                              number), whatever on_error says, found before more than about this
                              many bytes of it are held */
    uint64_t max_features; /* the ceiling on features (the largest index + 1): a larger index is
                              an error at its line and column (HOG_EFORMAT) whatever on_error
                              says, and so are CSV columns that could make one; a hashing into
                              more (hash_bits, VW's 18 bits) is HOG_EPARAM, and so is a binary
                              dataset whose header says more. Found before any memory is given
                              to them. 0: no ceiling of its own; hog_trainer_run_file then takes
                              what hog_train_params.mem_limit holds of the model and its
                              optimiser's state, and a lower one given here wins */
    uint64_t mem_limit;    /* bytes that reading text may hold: its read-ahead and parsed rows take
                              up to a quarter (smaller chunks when it is small), and once the blocks
                              built pass half of it they, and all that follow, go to a scratch file
                              in temp_dir, which the data set is then mapped from. 0: half of the
                              memory this process may use (MemAvailable and its cgroup's limit);
                              hog_trainer_run_file passes hog_train_params.mem_limit;
                              hog_model_predict_file reads a .hgd of more than half of it (or of
                              that memory, when 0) past the page cache, with O_DIRECT */
    const char *temp_dir;  /* the folder of that scratch file, which never has a name (O_TMPFILE) and
                              vanishes with the process; NULL: the input's folder. A folder that
                              takes no file leaves the blocks in memory, with a warning logged */
    hog_verify verify;     /* binary datasets: when their blocks are checked (HOG_VERIFY_AT_OPEN) */
    uint32_t padding;      /* unused: the bytes after verify, which were padding */
    int feature_names;     /* 1: keep the names of features made of values, Vowpal Wabbit text's
                              ("namespace^feature") and a CSV header's categorical columns'
                              ("column=value"), for hog_model_feature_name, at a cost to the parse
                              rate (see the README); 0: none. A CSV header's numeric columns are
                              named either way */
    int fields;            /* 1: keep each value's field where text has them, for field-aware
                              models: Vowpal Wabbit's namespaces and CSV's columns (numbered from 0
                              in the file, the label's and ignored ones' included: at most 65536
                              columns), see hog_dataset_fields; 0: none, as before 0.2 (LIBFFM
                              text keeps its fields either way: they are its content). Each value
                              then takes two bytes more in memory and in a .hgd */
    uint64_t reserved[1];  /* zero; the room for new fields (see Compatibility) */
} hog_read_params;

hog_read_params hog_read_params_default(void);

/* A read-only view of one row. Pointers stay valid while the data set is open. */
typedef struct hog_row {
    const uint32_t *index; /* feature indices, strictly increasing */
    const float *value;    /* one value per index */
    uint32_t nnz;          /* number of stored features */
    float label;
    float weight;          /* importance weight (Vowpal Wabbit text); 1 when the data has none */
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
    int weighted;           /* rows carry importance weights */
    int index_base;         /* libsvm: 1 if its indices were 1-based (stored minus one), else 0 */
} hog_dataset_info;

/* Opens a data set. A binary dataset is memory-mapped and every size, offset,
 * index and checksum in it is validated before it is returned; text is parsed
 * strictly into memory.
 * params may be NULL (defaults). On success *out owns the data set (free it
 * with hog_dataset_close) and 0 is returned.
 * Errors: -errno from open/read/mmap, -ENOMEM, HOG_EFORMAT (text: the detail
 * names file:line:column and what was expected), HOG_EMAGIC, HOG_EVERSION,
 * HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT, HOG_EEMPTY, HOG_EPARAM,
 * HOG_ECPU. On failure, if err_detail is not NULL, a message is written there
 * (at most err_len bytes, NUL-terminated). Thread-safe. */
int hog_dataset_open(const char *path, const hog_read_params *params,
                     hog_dataset **out, char *err_detail, size_t err_len);

/* A binary data set is memory-mapped, not copied: a file truncated or
 * rewritten in place while a run reads it cannot be trusted (hogtrain's own
 * outputs replace a file by renaming, which a mapping survives). Returns 1
 * when the file ds was mapped from now has another size or modification
 * time than when it was opened; 0 when it has not, and for data sets held in
 * memory. A run checks its training data after every epoch and stops with
 * HOG_ECORRUPT ("PATH changed while it was read") when it changed.
 * Async-signal-safe (one fstat). */
int hog_dataset_changed(const hog_dataset *ds);

/* For a SIGBUS handler (a page of a truncated file touched): the path of an
 * open mapped data set whose file changed, or NULL. Async-signal-safe. */
const char *hog_dataset_changed_path(void);

/* Releases a data set. NULL is accepted. */
void hog_dataset_close(hog_dataset *ds);

/* Where malformed lines were skipped while reading text with on_error SKIP:
 * writes the first few locations, "file:line:column: expected ..., found
 * ...", one per line, into buf (len bytes, NUL-terminated; "" if none) and
 * returns the number of lines skipped in all. */
uint64_t hog_dataset_skipped(const hog_dataset *ds, char *buf, size_t len);

/* Fills *info. Never fails. */
void hog_dataset_get_info(const hog_dataset *ds, hog_dataset_info *info);

/* How many fields the rows' features belong to (field-aware factorisation
 * machines pair features by field): every field of ds is below it. LIBFFM
 * text has the fields its lines give (the largest + 1); read with
 * hog_read_params.fields, Vowpal Wabbit text has one per namespace,
 * numbered by the byte its name starts with (the default namespace, with
 * no name, is 32, the space: as VW's own -q names them; the largest + 1),
 * and CSV one per column (the columns of a line); a binary dataset has
 * what it was written with, and a data set from a CSR matrix with
 * hog_csr.fields its field_count (or the largest field + 1). libsvm text,
 * text read without hog_read_params.fields (LIBFFM's apart), a CSR matrix
 * without fields and a dense one have no fields: 0. Returns the count (0
 * to 65536) or HOG_EPARAM when ds is NULL. Thread-safe. */
int hog_dataset_fields(const hog_dataset *ds);

/* The hog_read_params.hash_bits its text was read with: text read so, and
 * a binary dataset converted from such text (version 7), keep them, and a
 * model trained on it hashes text to score the same
 * (hog_model_data_hash_bits). 0: not hashed by that setting, or not known
 * (an older .hgd, arrays); and for NULL. Thread-safe. */
unsigned hog_dataset_hash_bits(const hog_dataset *ds);

/* Row i (0 <= i < rows). The caller checks the bound; thread-safe. On a
 * binary dataset opened with HOG_VERIFY_AT_FIRST_READ, call
 * hog_dataset_verify first. */
hog_row hog_dataset_row(const hog_dataset *ds, uint64_t i);

/* Checks every block of ds not checked yet (a binary dataset opened with
 * HOG_VERIFY_AT_FIRST_READ; any other data set is sound already, and this
 * returns 0 at once), on every core. Errors: HOG_ECHECKSUM or HOG_ECORRUPT,
 * err naming the file and the first bad block. Thread-safe. */
int hog_dataset_verify(const hog_dataset *ds, char *err, size_t err_len);

/* Writes ds as a binary dataset at path atomically: a temporary file in the
 * same folder, fsync, rename, fsync of the folder. On failure nothing is left
 * at path (an older file there is untouched; a replaced file keeps its
 * permissions, and a symbolic link at path is replaced, not followed). A
 * device, FIFO or descriptor at path is written into, as hog_output says.
 * Errors: -errno from the file system (-EISDIR: path is a folder),
 * HOG_ENOTFILE (a block device or a socket), -ENOMEM. */
int hog_dataset_save(const hog_dataset *ds, const char *path);

/* Streams a text file straight into a binary dataset with bounded memory
 * (one block of rows at a time), atomically as hog_dataset_save does.
 * If info is not NULL it receives the summary of what was written; when
 * lines were skipped (on_error SKIP), err_detail receives their first
 * locations as hog_dataset_skipped writes them, and 0 is still returned.
 * Errors: as hog_dataset_open for text, plus those of hog_dataset_save;
 * HOG_EPARAM when out_path is the input file itself (under any name). */
int hog_dataset_convert(const char *in_path, const hog_read_params *params,
                        const char *out_path, hog_dataset_info *info,
                        char *err_detail, size_t err_len);

/* ===================================================================== *
 *  Data sets from arrays in memory
 *
 *  A program that holds its data already (NumPy, SciPy, its own vectors)
 *  makes a data set of it without a file. A data set made from arrays is
 *  like any other (train, evaluate, predict, save it); its info.format is
 *  HOG_FORMAT_AUTO (no file), info.file_bytes 0 and info.features the
 *  matrix's columns, whatever the largest index. Every array is checked
 *  before the data set is made; a message names the array, the row and
 *  what was expected ("hog_csr.indices: row 17: index 3 after 9: expected
 *  strictly increasing indices within a row").
 * ===================================================================== */

/* A sparse matrix in compressed sparse row form (SciPy's csr_matrix: data,
 * indices, indptr), with its labels. Zero it (or make it with = {0}) and
 * fill it in: the reserved area stays zero. Its size is fixed (96 bytes on
 * 64-bit systems) as the params structs' are (see Compatibility). */
typedef struct hog_csr {
    uint64_t rows;           /* rows of the matrix, and labels */
    uint64_t cols;           /* columns, 1..2^32: the data set's features; every index is below it */
    const void *indptr;      /* rows + 1 offsets into indices and values: indptr[0] = 0, non-decreasing */
    uint32_t indptr_bytes;   /* 4: indptr is int32_t, 8: int64_t (SciPy uses either) */
    uint32_t rows_per_block; /* rows in each block, at most 2^24; 0: the default (4096) */
    const uint32_t *indices; /* column indices, strictly increasing within each row (SciPy's int32
                                indices, sorted, pass as they are) */
    const float *values;     /* one finite value per index */
    const float *labels;     /* rows finite labels; NULL: every label 0 (data only to predict) */
    const float *weights;    /* rows importance weights, finite and not negative; NULL: every row
                                weighs 1 */
    const uint16_t *fields;  /* each value's field, one per index (field-aware factorisation
                                machines pair features by field; hog_dataset_fields); NULL: the
                                data has no fields */
    uint32_t field_count;    /* with fields: every field is below it, and the data set has that
                                many (1..65536), so that batches of one matrix's rows agree on it
                                whichever fields their values use; 0: the largest field + 1 */
    uint32_t reserved32;     /* zero */
    uint64_t reserved[2];    /* zero; the room for new fields (see Compatibility) */
} hog_csr;

/* hog_dataset_from_csr's flags. */
#define HOG_ARRAYS_BORROW 1 /* use the caller's indices, values, fields, labels and weights in place */

/* Makes a data set of the matrix csr describes. Without flags every array
 * is copied, and the caller may free them as soon as this returns. With
 * HOG_ARRAYS_BORROW nothing is copied but the row offsets (rebased to each
 * block, 4 bytes a row): the data set reads the caller's indices, values,
 * fields, labels and weights where they are, so the caller keeps them
 * alive and unchanged until hog_dataset_close. Both make the same blocks,
 * with the same fingerprint, as the same rows read from a file (LIBFFM
 * text, for rows with fields). On success *out owns the data set
 * (hog_dataset_close) and 0 is returned. Thread-safe. Errors: HOG_EEMPTY
 * (no rows), HOG_EPARAM (csr, an array or a size that does not hold: the
 * message names the field, the row and what was expected, "hog_csr.fields:
 * row 3, index 7: field 5 is not below hog_csr.field_count = 5"; a block
 * too large for the format: lower rows_per_block),
 * -ENOMEM, HOG_ECPU; a message in err_detail (at most err_len bytes, may be
 * NULL). */
int hog_dataset_from_csr(const hog_csr *csr, int flags, hog_dataset **out,
                         char *err_detail, size_t err_len);

/* Makes a data set of a dense matrix: x holds rows * cols floats, row
 * after row (C order), every one finite; zeros are not stored, as the CSV
 * reader stores none. labels and weights as in hog_csr (NULL: all 0, all
 * 1); rows_per_block as there. Always copies (the data set is sparse
 * rows): the caller may free x at once. Returns and fails as
 * hog_dataset_from_csr. */
int hog_dataset_from_dense(const float *x, uint64_t rows, uint64_t cols,
                           const float *labels, const float *weights,
                           uint32_t rows_per_block, hog_dataset **out,
                           char *err_detail, size_t err_len);

/* Copies the label of every row of ds, in order, into out[0..rows). Never
 * fails. Thread-safe. */
void hog_dataset_labels(const hog_dataset *ds, float *out);

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

/* What the training-set metrics (hog_model_info.train) are measured on. */
typedef enum hog_train_metrics {
    HOG_TRAIN_METRICS_EXACT = 0,   /* a pass of its own over the training rows, with the final model */
    HOG_TRAIN_METRICS_PROGRESSIVE, /* the last epoch as it ran (progressive validation, as Vowpal
                                      Wabbit reports its average loss): each row scored just before
                                      the model stepped on it, so no further pass over the data. The
                                      default of hog_train_params_default. Exact instead where the
                                      last epoch's model is not the one kept (early stopping
                                      restored another epoch's, averaging, several machines) or did
                                      not run whole in this call (resumed within it) */
} hog_train_metrics;

/* How much each class's rows count in training. */
typedef enum hog_class_weight {
    HOG_CLASS_WEIGHT_NONE = 0, /* every row as much as its importance weight says (1 without) */
    HOG_CLASS_WEIGHT_BALANCED, /* rows of class c count n / (K n_c) times (n training rows, K
                                  classes, n_c of them in c), scikit-learn's "balanced": every
                                  class weighs the same in total, for imbalanced data */
} hog_class_weight;

/* The training kernel: how the trainer steps through the data. */
typedef enum hog_kernel {
    HOG_KERNEL_AUTO = 0, /* dense when the data is dense enough and small enough (see hog_kernel_pick) */
    HOG_KERNEL_SPARSE,   /* one example at a time over its non-zeros (CSR), HOGWILD! */
    HOG_KERNEL_DENSE,    /* mini-batches made dense, scored and stepped with OpenBLAS GEMM, HOGWILD! */
} hog_kernel;

/* Where the model lives (DimmWitted's design space). */
typedef enum hog_replicas {
    HOG_REPLICAS_MACHINE = 0, /* one model shared by every worker: classic HOGWILD! */
    HOG_REPLICAS_NODE,        /* one replica per NUMA node, in that node's memory, shared by the
                                 node's workers and averaged with the others continuously by a
                                 background thread (with one node: one replica, nothing to average) */
    HOG_REPLICAS_CORE,        /* one replica per worker, averaged into the model after every epoch */
} hog_replicas;

typedef struct hog_epoch_stats hog_epoch_stats;
/* Progress callback: called from the calling thread after every epoch
 * (done == 1) and, on long epochs, from one worker thread during it
 * (done == 0, stats->progress < 1). A run in one pass (one epoch over
 * text, see hog_trainer_run_file) also calls it from the calling thread
 * with its progressive validation (done == 0, stats->progressive.rows set)
 * once the rows trained pass each power of two, and after its last rows. */
typedef void (*hog_progress_fn)(void *ctx, const hog_epoch_stats *stats, int done);

/* hog_train_params.bind and hog_mf_params.bind: pin the workers to cores
 * when they take every core the process may run on (its CPU set: a
 * taskset, a cgroup or mpirun's binding narrow it), else leave them to the
 * OS. Runs side by side (the one-thread fits of a parameter search, two
 * commands at once) are then not all pinned to the first cores, which
 * halved each of two one-thread runs; a run that owns its cores is pinned
 * as with 1. The model keeps what it came to (0 or 1). The default. */
#define HOG_BIND_AUTO 2

typedef struct hog_train_params {
    hog_loss loss;
    unsigned threads;    /* workers; 0: one per core */
    unsigned epochs;     /* passes over the training rows */
    double step;         /* initial step size; with normalized, relative to each feature's
                            scale and the rows' norm, so one value suits data of any units */
    double decay;        /* HOG_SCHEDULE_DECAY: multiply step by this after each epoch */
    double power;        /* HOG_SCHEDULE_INVSCALING: the exponent */
    hog_schedule schedule;
    double l2;           /* objective: mean loss + l2/2 * |w|^2 (bias excluded) */
    double holdout;      /* fraction of rows held out for evaluation when no test set */
    uint64_t seed;       /* shuffling and holdout; one thread is bit-for-bit reproducible */
    int bias;            /* 1: learn an intercept */
    int bind;            /* 1: pin workers to cores with hwloc; 0: the OS places them;
                            HOG_BIND_AUTO: see there */
    uint64_t mem_limit;  /* bytes of memory the data may occupy; a mapped data set larger
                            than this is trained out of core: blocks in shuffled order, each
                            read ahead and dropped when done. 0: half of what is available,
                            the smaller of MemAvailable and what the process's memory cgroup
                            (v1 or v2) still allows: its limit less its usage, not counting the
                            inactive page cache, the lowest from its cgroup up to the root */
    hog_progress_fn progress;
    void *progress_ctx;
    hog_kernel kernel;   /* HOG_KERNEL_AUTO: chosen by the data's density; a trained model's
                            info records the kernel that ran (SPARSE or DENSE), and its
                            evaluations take the same kernel. The dense kernel sets OpenBLAS
                            to one thread per call, process-wide (openblas_set_num_threads),
                            since the trainer's workers already fill the cores */
    unsigned batch;      /* dense kernel: rows per mini-batch, 1..1024 (a batch never spans
                            two of the trainer's 1024-row segments) */
    int normalized;      /* 1 (the default): normalised, scale-invariant update (Ross, Mineiro,
                            Langford 2013, Vowpal Wabbit's default): each feature's step is
                            divided by its largest |x| seen squared (by |x| times sqrt(G) with
                            adagrad), and the squared loss's step is importance-invariant
                            (never past the label); sparse kernel only. 0: the plain update,
                            the fastest loop, whose step must suit the data's scale */
    double l1;           /* objective adds l1 * |w|_1 (bias excluded); with l2: elastic net.
                            Truncated gradient: weights that cross zero stop at exactly zero */
    unsigned early_stop; /* 0: off; K: with a test set or holdout, stop after K epochs without
                            a lower test loss and keep the best epoch's model */
    unsigned average;    /* 0: off; E (<= epochs): the model is the average of the weights
                            over the last E epochs (Polyak-Ruppert), sampled at 64 evenly
                            spaced points of each epoch; evaluation uses the average. With
                            early stopping, the kept epoch's average if it was in the window */
    double quantile;     /* HOG_LOSS_QUANTILE: tau in (0, 1) */
    hog_replicas replicas; /* the model shared by all, per NUMA node, or per worker; every epoch
                              ends with the replicas averaged into the model, which is what is
                              evaluated and saved. A large model's replicas hold their own
                              optimiser state (merged with the weights: scales take the largest),
                              a small one's AdaGrad sums, L1 state and feature scales stay
                              shared. Sparse kernel only (auto picks it) */
    int stream;          /* hog_trainer_run_file on text: 1 trains the first epoch on the blocks
                            as the parsers build them, while the file is still being read; 0
                            reads the whole file first (see hog_trainer_run_file) */
    uint64_t fold;       /* with holdout H: which slice of width H of the rows is held out
                            (each row draws a number in [0, 1) from seed; fold f holds out the
                            rows whose draw is in [f H, (f + 1) H)): K runs with holdout 1/K and
                            folds 0..K-1 hold out every row once, K-fold cross-validation.
                            0: the first slice, as before. (fold + 1) H must be at most 1 */
    hog_class_weight class_weight; /* binary and softmax losses: HOG_CLASS_WEIGHT_BALANCED weighs
                            the classes' rows to equal totals (times any importance weight); the
                            metrics stay unweighted. Counted on the whole data, so text is read
                            whole before the first epoch */
    hog_train_metrics train_metrics; /* how hog_model_info.train is measured (zero: exact) */
    uint32_t factors;    /* 0: a linear model. K (1..HOG_MAX_FACTORS): a factorisation machine
                            (Rendle 2010): the bias, a weight and K latent factors a feature, the
                            score w.x + the sum over pairs of features of <v_i, v_j> x_i x_j,
                            computed in O(nnz K). Binary and regression losses (not softmax),
                            the sparse kernel, and the plain or AdaGrad update (normalized 0):
                            AdaGrad (schedule adagrad) is LIBFFM's and xLearn's choice. The
                            factors start at uniform draws in [-factor_init, factor_init] from
                            the seed, the same whatever the threads or the rank of a run on
                            several machines (whose link keeps them in step with the weights) */
    float factor_init;   /* factors > 0: the scale of the factors' first values; 0: 0.5 / sqrt(K) */
    uint32_t field_aware; /* factors > 0: 1 makes it a field-aware factorisation machine (Juan et al.
                            2016), LIBFFM's model: the bias and, for each field of the data
                            (hog_dataset_fields), K latent factors a feature, no linear weights;
                            a pair of features crossed through the factors each keeps for the
                            other's field, the pairs' sum divided by the row's |x|^2, in
                            O(nnz^2 K). The training data must have fields (LIBFFM text, or
                            hog_read_params.fields); a field the model does not know when it
                            scores is left out of the pairs, as an unknown feature is. 0: plain */
    uint32_t reserved32;  /* zero */
    double l2_rows;       /* > 0: l2 is l2_rows over the rows trained on (the training set's, less
                            any holdout), set when a run starts and kept in the model's
                            parameters: 1 is LIBLINEAR's and scikit-learn's C = 1, a penalty that
                            shrinks as the data grows. Text is then read whole before the first
                            epoch. On several machines, every rank's rows (with shards, the sum
                            of the ranks' files). 0: l2 as given */
    const char *interactions; /* feature crosses for a linear or softmax model, Vowpal Wabbit's -q:
                            pairs of two bytes, comma- or space-separated, each byte a field
                            (the first byte of a Vowpal Wabbit namespace, as read with
                            hog_read_params.fields) or ':' for any field: "ab,ac" crosses every
                            feature of namespace a with every one of b and of c, "aa" a's features
                            with each other, "::" every pair of a row's features; at most
                            HOG_MAX_CROSSES pairs. A
                            cross of features i and j is the feature hash(i, j) among
                            2^cross_bits after the data's own, its value x_i x_j, formed as each
                            row is trained or scored (the data keeps its own features only). The
                            training data must have fields. NULL or "": none. The string is
                            copied: the model keeps its own */
    uint32_t cross_bits;  /* interactions: the crosses hash into 2^cross_bits features (1 to 30);
                            0: 22 */
    uint32_t l2_crossed;  /* interactions: 1 multiplies the penalty (l2, or l2_rows's) by the mean
                            non-zeros of a crossed row over those of the data's own (the sum of
                            the training set's degrees, crosses included, over the sum of its
                            features' own), so that the margin, a sum of that many more terms,
                            keeps the prior an uncrossed model has; set when a run starts and
                            kept in the model's l2. A one-pass run over hashed text, whose
                            crosses are counted as the rows come, keeps l2 as given. 0: as given */
    uint64_t reserved[6]; /* zero; the room for new fields (see Compatibility) */
} hog_train_params;

/* The most pairs hog_train_params.interactions names. */
#define HOG_MAX_CROSSES 32u

/* The most latent factors a factorisation machine has (hog_train_params.factors). */
#define HOG_MAX_FACTORS 256u

/* The defaults: logistic, one thread per core, 20 epochs, step 2, decay 0.8,
 * invscaling power 0.5, decay schedule, l2 1e-6, no holdout, seed 1, bias,
 * binding HOG_BIND_AUTO, memory limit 0 (half of what is available), no progress callback,
 * kernel auto, batches of 32 rows, normalised updates, l1 0, no early
 * stopping, no averaging, quantile 0.5, replicas machine, streaming on.
 * Earlier versions had 10 epochs, step 0.1, decay 0.9 and plain updates,
 * which diverged or stopped short on data whose features or labels were not
 * scaled (README, "Defaults against LIBLINEAR and scikit-learn"). */
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
/* "auto", "sparse", "dense". */
const char *hog_kernel_name(hog_kernel kernel);
int hog_kernel_parse(const char *name, hog_kernel *out);
/* "machine", "node", "core". */
const char *hog_replicas_name(hog_replicas r);
int hog_replicas_parse(const char *name, hog_replicas *out);
/* "none", "balanced". */
const char *hog_class_weight_name(hog_class_weight w);
int hog_class_weight_parse(const char *name, hog_class_weight *out);
/* "exact", "progressive". */
const char *hog_train_metrics_name(hog_train_metrics t);
int hog_train_metrics_parse(const char *name, hog_train_metrics *out);

/* The kernel a run with `kernel` takes on data of `rows` rows, `features`
 * features and `nnz` non-zeros, for a model of `outputs` outputs: SPARSE or
 * DENSE as asked; for AUTO, DENSE when the density nnz / (rows * features)
 * is at least HOG_DENSE_MIN_DENSITY and the model has at most
 * HOG_DENSE_MAX_FEATURES features and HOG_DENSE_MAX_WEIGHTS weights
 * (features * outputs), else SPARSE. Never returns AUTO. */
#define HOG_DENSE_MIN_DENSITY 0.2
#define HOG_DENSE_MAX_FEATURES 65536u
#define HOG_DENSE_MAX_WEIGHTS (1u << 22)
hog_kernel hog_kernel_pick(hog_kernel kernel, uint64_t rows, uint64_t features, uint64_t nnz, uint32_t outputs);

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
    hog_metrics progressive; /* a run in one pass, in the calls that report it: every row so far,
                                each scored before its step (Vowpal Wabbit's progressive
                                validation); rows == 0 in every other call */
    hog_metrics progressive_recent; /* the same over the rows since the previous such call */
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
    int data_index_base;   /* the training data's libsvm index base (hog_dataset_info.index_base):
                              text to score must be read with the same */
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

/* The name of class k when the training data's labels were strings (a CSV
 * column of "setosa", "versicolor", ...), else NULL (numeric labels, a
 * regression, k out of range, m NULL). Such a model's classes are in the
 * names' sorted order (byte order, as scikit-learn's LabelEncoder sorts),
 * class k's label value (hog_model_class_label) being k; a binary model's
 * positive class is the second name. The string belongs to m. Thread-safe. */
const char *hog_model_class_name(const hog_model *m, uint32_t k);

/* The name of feature f when the training text named it, else NULL (no
 * name, f out of range, m NULL). A CSV file with a header names each
 * numeric column's feature by its header field, and with
 * hog_read_params.feature_names each categorical column's features
 * "column=value"; Vowpal Wabbit text read with feature_names names each
 * feature "namespace^feature" ("feature" in the default namespace), as its
 * --invert_hash does. Where several names hash to one feature they are
 * all kept, sorted in byte order and joined by '|' ("a^x|b^y"). A warm
 * start keeps its initial model's names and adds the new data's. The
 * string belongs to m. Thread-safe. */
const char *hog_model_feature_name(const hog_model *m, uint64_t f);

/* How many of the model's features have a name (hog_model_feature_name),
 * and the k-th of them in ascending order (0 <= k < that count), or
 * UINT64_MAX when k is out of range: for listing them without asking
 * every feature. m NULL has none. Thread-safe. */
uint64_t hog_model_named_features(const hog_model *m);
uint64_t hog_model_named_feature(const hog_model *m, uint64_t k);

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

/* hog_model_predict for a row whose values have fields (field[i] is the
 * field of row->index[i]), which a field-aware model needs
 * (hog_model_fields); other models ignore them. field NULL: no fields (a
 * field-aware model then returns NAN). Thread-safe. */
double hog_model_predict_fields(const hog_model *m, const hog_row *row, const uint16_t *field, uint32_t *cls,
                                float *probs);

/* The fields a field-aware factorisation machine has a latent vector a
 * feature for (hog_train_params.field_aware): the training data's; 0 for
 * any other model. Never fails. */
uint32_t hog_model_fields(const hog_model *m);

/* The hog_read_params.hash_bits its training text was read with: text to
 * score must be hashed the same (hog_model_predict_file reads with it when
 * its own hash_bits is 0, and refuses another). 0: the features were not
 * hashed by that setting (numeric indices as written, or Vowpal Wabbit's
 * and categorical strings into their default 2^18), or the model was
 * trained on arrays or a .hgd older than version 7, whose hashing is not
 * known (hog_dataset_hash_bits). NULL gives 0. */
unsigned hog_model_data_hash_bits(const hog_model *m);

/* Evaluates a model on every row of ds (rows with features unknown to the
 * model are scored on the known ones; softmax labels not among the model's
 * classes count as errors, not failures). AUC comes from a histogram of
 * the scores of fixed size (about 1 MiB a thread, whatever the rows): exact
 * but for a positive and a negative row whose scores share one of its bins
 * (0.2% of their magnitude wide), which count as a tie; the README says how
 * far that can move it. Uses up to `threads` threads (0:
 * all cores): the library's shared pool, started by the first call and kept
 * for the next ones (and for hog_mf_train); a call made while another holds
 * it starts threads of its own. Thread-safe. Errors: -ENOMEM, -errno from
 * pthread_create, HOG_ETOPOLOGY. */
int hog_model_evaluate(const hog_model *m, const hog_dataset *ds,
                       unsigned threads, hog_metrics *out);

/* ---- Predicting a file in one pass, in bounded memory ---- */

/* What hog_model_predict_file writes for each row. */
typedef enum hog_predict_format {
    HOG_PREDICT_TEXT = 0, /* a line per row, as `hogtrain predict` writes it: logistic, the
                             probability of the positive class ("%.6f"); squared and quantile,
                             the prediction ("%.9g", which reads back to the same float);
                             hinge, modified_huber and softmax, the predicted class's label
                             as the training data had it ("%.17g") */
    HOG_PREDICT_F32,      /* 4 bytes per row: that value as a little-endian IEEE float */
} hog_predict_format;

/* Which numbers hog_model_predict_file writes for each row. */
typedef enum hog_predict_what {
    HOG_PREDICT_VALUE = 0,     /* one per row, as hog_predict_format says (the default) */
    HOG_PREDICT_RAW,           /* the model's scores before any link: the margin (binary), the
                                  prediction (regression), one score per class (softmax) */
    HOG_PREDICT_PROBABILITIES, /* logistic and softmax: the probability of each class, in the
                                  order of the class labels (ascending; hog_model_class_label) */
} hog_predict_what;

/* Takes the next len bytes of predictions, in row order: a block of rows'
 * at a time. Returns 0, or a negative code that stops the prediction and
 * is returned by it. Called from one thread at a time (any of the
 * workers). On a stream a block ends wherever the input has nothing more
 * ready, so a callback that buffers should flush what it was given, for
 * the rows to be answered as they come. */
typedef int (*hog_predict_write_fn)(void *ctx, const void *buf, size_t len);

/* How to predict. Make one with hog_predict_params_default(). */
typedef struct hog_predict_params {
    unsigned threads;           /* scoring threads; 0: one per core */
    hog_predict_format format;
    hog_predict_write_fn write; /* the predictions go here; NULL: to fd */
    void *write_ctx;
    int fd;                     /* with write NULL: the predictions are written to this file
                                   descriptor; -1: nowhere, and nothing is formatted
                                   (only the metrics are wanted) */
    int metrics;                /* 1: the metrics against the input's labels are computed */
    hog_predict_what what;      /* with RAW or PROBABILITIES, a row has as many numbers as
                                   columns (hog_predict_columns): text writes them on its line
                                   apart by spaces ("%.9g" raw, "%.6f" probabilities), f32 one
                                   float each */
    uint32_t reserved32;        /* zero */
    uint64_t reserved[3];       /* zero; the room for new fields (see Compatibility) */
} hog_predict_params;

/* The numbers hog_model_predict_file writes per row of m with what: 1 for
 * VALUE; the model's outputs for RAW (classes for softmax, else 1); its
 * classes for PROBABILITIES (2 for logistic), or 0 when m has no
 * probabilities (hinge, modified_huber, squared, quantile). */
uint32_t hog_predict_columns(const hog_model *m, hog_predict_what what);

/* The defaults: one thread per core, text, no output (fd -1), metrics on. */
hog_predict_params hog_predict_params_default(void);

/* What hog_model_predict_file read and measured. */
typedef struct hog_predict_stats {
    uint64_t rows;         /* rows scored (and written) */
    uint64_t features;     /* the input's largest feature index + 1: those at or past the
                              model's features were ignored */
    uint64_t skipped;      /* malformed lines skipped (hog_read_params.on_error SKIP) */
    hog_format format;     /* what the input was read as */
    hog_metrics metrics;   /* against the input's labels, as hog_model_evaluate computes
                              them (AUC from the same histogram); rows 0 and NaN without
                              params.metrics */
} hog_predict_stats;

/* Scores every row of the data set at path with m and writes the
 * predictions in row order, reading it once: text through the parsers
 * (rp: how, as for hog_dataset_open; NULL the defaults; a libsvm index
 * base left to detection, index_base -1, takes the model's training data's
 * base, hog_model_info.data_index_base), a block of rows at a time, each
 * scored and formatted on one of pp->threads workers (the library's shared
 * pool, as hog_model_evaluate borrows it) into a buffer of its own, and
 * the buffers written in order; a binary dataset is mapped and walked the
 * same way, each block read ahead and unmapped once scored. At most about
 * 2 * threads + 2 blocks and their predictions are held at any time,
 * whatever the size of the input; nothing of it is kept. The metrics come
 * from the same pass. Rows are scored as hog_model_predict scores them, so
 * the values are those it gives (the text format's digits are written
 * without printf, byte for byte what printf writes in the C locale).
 *
 * A stream (a pipe, a FIFO, a socket, a terminal) is answered as its rows
 * come: its text is read as it arrives, and whenever it has nothing more
 * ready the rows that came are scored and written at once (a block shorter
 * than the others), so a row written alone is answered while the stream
 * stays open; a file is read in large chunks as before, and the output is
 * the same bytes either way.
 *
 * A malformed line (on_error STOP) stops the run at once, after the
 * predictions of the rows before it may have been written: an output that
 * must not be left half written is a hog_output, aborted on failure. When
 * lines were skipped (on_error SKIP), err_detail receives their first
 * locations as hog_dataset_skipped writes them, and 0 is still returned.
 * pp NULL: the defaults; stats may be NULL.
 * Returns 0. Errors: those of hog_dataset_open (HOG_EFORMAT with
 * "file:line:column: expected ...", HOG_EEMPTY, HOG_EMAGIC, HOG_ECHECKSUM,
 * ...), HOG_EPARAM (a format not listed above: the detail names
 * hog_predict_params.format), -ENOMEM, -errno from pthread_create,
 * HOG_ETOPOLOGY, HOG_ECPU, and what pp->write returned (or -errno from
 * writing to pp->fd), the detail saying the predictions could not be
 * written. Thread-safe. */
int hog_model_predict_file(const hog_model *m, const char *path, const hog_read_params *rp,
                           const hog_predict_params *pp, hog_predict_stats *stats, char *err_detail,
                           size_t err_len);

/* Saves a model atomically (temporary file, fsync, rename). The file holds a
 * magic, a version, the training parameters, the data fingerprint, the
 * final metrics and the weights, covered by a CRC-32. A model with a NaN or
 * infinite weight or bias is never written: nothing it predicts would mean
 * anything. Errors: -errno from the file system (-EISDIR), HOG_ENOTFILE,
 * HOG_ENONFINITE (nothing is written). */
int hog_model_save(const hog_model *m, const char *path);

/* Loads a model saved by hog_model_save. Class labels must be finite and
 * ascending, and weights and biases finite, even under a valid checksum.
 * Errors: -errno, -ENOMEM, HOG_EMAGIC, HOG_EVERSION, HOG_ETRUNCATED,
 * HOG_ECHECKSUM, HOG_ECORRUPT, HOG_ECPU; a message in err_detail as for
 * hog_dataset_open. */
int hog_model_load(const char *path, hog_model **out, char *err_detail,
                   size_t err_len);

/* What hog_model_predict_array writes for each row. */
typedef enum hog_predict_kind {
    HOG_PREDICT_SCORE = 0, /* 1 float: what hog_model_predict returns (the probability of the
                              positive class for logistic, the margin for hinge, ...; softmax:
                              the most probable class's probability) */
    HOG_PREDICT_LABEL,     /* 1 float: the predicted label: the class's label value
                              (hog_model_class_label), or the prediction for regression */
    HOG_PREDICT_MARGINS,   /* hog_model_info.outputs floats: the raw scores w.x + b, one per output
                              (a factorisation machine's: one, its pairs' sum included) */
    HOG_PREDICT_PROBS,     /* classes floats: each class's probability (logistic, modified_huber,
                              softmax; HOG_EPARAM for the others) */
} hog_predict_kind;

/* Predicts every row of ds, in order, into out: rows * n floats, row
 * after row, n as kind says (1, the model's outputs or its classes);
 * out_len is the room in out, in floats. Features beyond the model's
 * are ignored, as by hog_model_predict. Runs on up to `threads` threads
 * of the library's shared pool (0: all cores), as hog_model_evaluate does.
 * Thread-safe. Errors: HOG_EPARAM (a kind the model has not, or out_len
 * below what ds needs: the message says how many), HOG_ECHECKSUM and
 * HOG_ECORRUPT (a data set checked as it is read, one of whose blocks, or
 * its counts, fail), -ENOMEM, -errno from pthread_create, HOG_ETOPOLOGY; a
 * message in err_detail. */
int hog_model_predict_array(const hog_model *m, const hog_dataset *ds,
                            hog_predict_kind kind, unsigned threads,
                            float *out, uint64_t out_len,
                            char *err_detail, size_t err_len);

/* A model's weights, where they lie in the model. */
typedef struct hog_weights {
    uint64_t features;   /* rows of w */
    uint32_t outputs;    /* columns of w: 1, or the classes for softmax; a factorisation machine's
                            1 + K (a feature's weight, then its K factors), a field-aware one's
                            G K (its K factors for field 0, then for field 1, ...), whose one
                            score's bias is bias[0] */
    uint32_t classes;    /* as hog_model_info.classes: 2 for binary losses, 0 for regression */
    float *w;            /* features * outputs: w[j * outputs + k] is feature j's weight for
                            output k */
    float *bias;         /* outputs: the intercepts (0 when trained without one) */
    const double *class_labels; /* classes label values, ascending. Softmax: output k scores
                            class k. Binary: the one output scores class 1 (the positive
                            class) against class 0. NULL for regression */
} hog_weights;

/* Points *out at m's weights, biases and class labels, valid until
 * hog_model_free. Writing w or bias changes the model (that is how a
 * program sets weights); it is not thread-safe against anything reading
 * m. Never fails. */
void hog_model_weights(hog_model *m, hog_weights *out);

/* Makes a model of `loss` from weights: features weights per output (w
 * as in hog_weights, NULL: zeros; bias NULL: zeros), with `classes` class
 * labels (class_labels ascending and finite; NULL: 0..classes-1). classes
 * is 2 for binary losses, at least 2 for softmax (one output per class),
 * 0 for regression. The model's parameters are the defaults with loss set;
 * it predicts, evaluates and saves as a trained one does, and starts a
 * trainer's runs with hog_trainer_set_init. On success *out owns it
 * (hog_model_free). Errors: HOG_EPARAM (features 0, classes that do not
 * fit the loss, labels not ascending), HOG_ENONFINITE (a weight or bias
 * that is NaN or infinite: the message names it), -ENOMEM, HOG_ECPU; a
 * message in err_detail. */
int hog_model_from_weights(hog_loss loss, uint64_t features, uint32_t classes,
                           const double *class_labels, const float *w,
                           const float *bias, hog_model **out,
                           char *err_detail, size_t err_len);

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
 * pthread_create, HOG_ETOPOLOGY, HOG_ECPU. */
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
 * a holdout), -ENOMEM; with a checkpoint set (hog_trainer_set_checkpoint),
 * HOG_EINTERRUPTED and the errors of resuming listed there. */
int hog_trainer_run(hog_trainer *t, const hog_dataset *train,
                    const hog_dataset *test, hog_model **out,
                    char *err_detail, size_t err_len);

/* Makes t's next runs start from init's weights and biases instead of
 * zeros (init NULL: from zeros again), to train a model further on new
 * data, as scikit-learn's partial_fit and warm_start do. init is copied:
 * the caller may free it at once. A run with an initial model takes its
 * classes from it (the data's labels must be among them, HOG_ELABEL
 * otherwise: a batch may hold one class only), its loss must be the
 * run's (HOG_EPARAM otherwise), and the model has the larger of its
 * features and the data's; the step schedule and AdaGrad's sums start
 * afresh, as in any run, and the normalised update's feature scales go on
 * from the model's where it has them. hog_trainer_run_file streams text
 * with it as without (the first blocks' labels must be among the model's
 * classes, or the text is read whole and the run refused as above); a
 * multi-node run refuses it (HOG_EPARAM). Not thread-safe against a run of
 * t. Returns 0 or -ENOMEM. */
int hog_trainer_set_init(hog_trainer *t, const hog_model *init);

/*
 * Checkpoints, resume and interruption.
 *
 * With a checkpoint set, a run writes its whole state to path: the model,
 * the epoch and the position within it (the segments of the epoch's
 * shuffled order done), every optimiser array (AdaGrad sums, the
 * normalised update's feature scales and counts, the L1 penalties), each
 * worker's totals, the early-stopping state (best loss, its model, epochs
 * since), the averaging sums, the statistics so far, the training data's
 * fingerprint and the parameters. The order of every epoch follows from
 * (seed, epoch), so that is the random generators' whole state. The file
 * is written atomically (a temporary file beside path, synced, renamed),
 * never while a segment is in flight: the workers stop claiming segments,
 * finish the ones they hold, and the checkpoint is written; then they go
 * on. It is written every every_seconds of the run (0: never on a timer),
 * when the run is interrupted, and when the last epoch is done (so a
 * finished run can be resumed too: nothing is left to train, and the same
 * model comes back). A checkpoint that cannot be written on the timer is
 * logged (HOG_LOG_WARN) and the run goes on.
 *
 * With resume set, the next run continues from the checkpoint at path
 * instead of starting afresh: on the same data (its fingerprint, rows,
 * features, blocks and rows per block), with the same test set or none
 * again (early stopping follows it) and the same parameters, except
 * threads, bind, mem_limit, stream and the progress callback, which may
 * differ. A one-thread run resumed with one thread ends with the same
 * model as a run never interrupted, bit for bit; with more threads, within
 * the run-to-run spread of HOGWILD! (a different number of threads
 * resumes too, the workers' totals merged). Text read by
 * hog_trainer_run_file is read whole before training when a checkpoint is
 * set (the streamed first epoch has no position to save). A multi-node
 * run takes no checkpoint (HOG_EPARAM when one is set).
 *
 * The checkpoint file's layout is written out in the README ("Checkpoint
 * file").
 */

/* Sets where t's runs write their checkpoint (path is copied; NULL: no
 * checkpoints, and no resume), how often (every_seconds of the run; 0:
 * only when interrupted and at the end; the hogtrain command's default is
 * 300), and whether the next runs resume from it (resume 1). Not
 * thread-safe against a run of t. Returns 0, HOG_EPARAM (every_seconds
 * negative or not a number, resume without a path) or -ENOMEM.
 * A run then also returns: HOG_EINTERRUPTED (see hog_trainer_interrupt);
 * resuming, -errno from reading path (-ENOENT: nothing to resume from),
 * HOG_EMAGIC, HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT
 * (not a checkpoint, or a damaged one: the detail says what), and
 * HOG_EPARAM for a checkpoint of other data or other parameters: the
 * detail names the field and both values ("...: the checkpoint was made
 * with hog_train_params.step = 0.1, this run has hog_train_params.step =
 * 0.05"). */
int hog_trainer_set_checkpoint(hog_trainer *t, const char *path, double every_seconds, int resume);

/* Stops t's run at the next point where its model is consistent: the
 * workers finish the segments they hold (a few thousand rows) and claim no
 * more; the checkpoint, if one is set, is written; and the run returns
 * HOG_EINTERRUPTED, its detail saying where the run stood and what was
 * saved. No model is returned. A flag set before the run's epochs start
 * (while hog_trainer_run_file reads its input, say) stops it before its
 * first epoch; it is cleared when a run returns HOG_EINTERRUPTED. Returns
 * 1 when a run's epochs are under way, 0 when none is: then nothing
 * trained would be lost if the program ended at once (a signal handler
 * may do so rather than wait for a slow read to end). Only sets and reads
 * flags: async-signal-safe, for a SIGINT or SIGTERM handler, and callable
 * from any thread. A multi-node run is ended with hog_link_interrupt,
 * which tells every rank; this flag is not looked at then.
 * A run in one pass (hog_trainer_run_file, see there) ends instead as if
 * its input ended there: the read stops at once (a read waiting on a quiet
 * pipe too), the rows already read are learned, a line cut short by the
 * stop is left out (logged), and the run returns 0 and its model, the
 * model of every row learned; hog_trainer_stopped says so. */
int hog_trainer_interrupt(hog_trainer *t);

/* 1 when t's last run was a run in one pass that hog_trainer_interrupt
 * ended before its input did (its model is that of the rows read), else
 * 0. */
int hog_trainer_stopped(const hog_trainer *t);

/*
 * Snapshots: models written while a run in one pass goes on.
 *
 * A run that learns a stream once (hog_trainer_run_file in one pass) can
 * hand out its model while it runs: after every every_rows rows trained
 * (0: not on a count), every every_seconds seconds (0: not on a timer) and
 * when hog_trainer_snapshot asks, write is called with a model of every
 * row learned so far, a whole model as the run would return it (its
 * weights, intercepts, classes and feature scales; no feature names, which
 * the run collects to its end), which write must not keep: it saves it,
 * atomically if readers may be looking (hog_model_save does). A snapshot
 * is taken between two windows of blocks, when no worker runs, so its
 * rows are whole windows: on a stream that trickles it waits for the
 * window to fill (or for the stream to end, or an interrupt). write's
 * error is logged (HOG_LOG_WARN) and training goes on; a snapshot that
 * cannot be made for want of memory too. Other runs take no snapshot and
 * say why in the log. Not thread-safe against a run of t. Returns 0, or
 * HOG_EPARAM (write NULL while a count or timer is set, every_seconds
 * negative or not a number). */
typedef int (*hog_snapshot_fn)(void *ctx, const hog_model *m);
int hog_trainer_set_snapshots(hog_trainer *t, uint64_t every_rows, double every_seconds, hog_snapshot_fn write,
                              void *ctx);

/* Asks t's run in one pass for a snapshot at its next window's end (see
 * hog_trainer_set_snapshots; none is taken where no write is set). Only
 * sets a flag: async-signal-safe, for a SIGUSR1 handler, and callable from
 * any thread. */
void hog_trainer_snapshot(hog_trainer *t);

/* What hog_trainer_run_file did with its input. */
typedef struct hog_file_run {
    hog_dataset *train;  /* the training data set read, and the test set (or NULL): the
                            caller's to close (and to ask hog_dataset_skipped) */
    hog_dataset *test;
    int streamed;        /* 1: the first epoch trained on the blocks as they were read */
    int cache_used;      /* 1: cache_path was a cache of the input as it is and was read instead */
    double read_seconds; /* from the call until the data set was whole (the cache written,
                            synced and validated): overlapped with the first epoch when
                            streamed */
    char note[160];      /* when text was not streamed: why ("streaming is off", "dense
                            data (the dense kernel)", "label 3 first appears in row 70001"...) */
} hog_file_run;

/*
 * Reads the data set at path and trains on it, as hog_dataset_open (rp: how
 * to read text, NULL for the defaults) and hog_trainer_run would, but with
 * text the first epoch trains while the file is read: the parsers hand
 * each block of rows to the workers as soon as it is built, through a
 * bounded queue, and later epochs use the data set built on the way, in
 * memory or, with cache_path, in that binary file (written atomically,
 * then memory-mapped; it bounds memory for data larger than RAM).
 *
 * The first blocks (4 of them) settle the labels, the kernel and the first
 * feature degrees. The first epoch takes the rows in file order, shuffled
 * within windows of 2 * threads blocks (4 to 16); later epochs shuffle all.
 * A file sorted by label trains badly that way: shuffle it, or set
 * params.stream to 0. Text is read whole first (run->note says why) when
 * streaming is off, with node or core replicas, the dense kernel, averaging
 * over every epoch, a checkpoint set, or when the first blocks do not show what the model
 * needs (two label values for a binary loss, dense data); when a later
 * row has a label value the first blocks lacked, the run starts over on the
 * whole data set. When cache_path is already a cache of path as it is now,
 * it is read instead (Vowpal Wabbit's -c); with binary input the input is
 * copied to the cache. A cache records the size, modification time, inode
 * and device of the file it was made from, a hash of its first and last
 * MiB and the read options (rp) that shape the rows; when any of them
 * differs, or the cache lacks the record, does not open or fails a
 * checksum, it is rebuilt from path and a warning (HOG_LOG_WARN) says why,
 * never an error. Text from a pipe is cached afresh every time.
 *
 * One epoch over text (params.epochs 1) trains in one pass: each row once
 * as it is parsed, each block given back once its window is trained, so
 * that memory is bounded by the read-ahead and the model whatever the
 * length of the input (a pipe, a FIFO, a growing file); run->train then
 * holds the counts (rows, features, skipped lines) and no block, the
 * training metrics are progressive, and the progress callback gets them at
 * each power of two of rows (hog_epoch_stats.progressive). No row is kept
 * to start over with: a label value the first blocks lacked is
 * HOG_ELABEL naming its line, and so is a field they lacked for a
 * field-aware model (HOG_EFORMAT; a streamed run of several epochs starts
 * over on the whole data instead); first blocks that settle nothing (no
 * row trained yet) read a file again, whole, and are HOG_EPARAM on a pipe.
 * One epoch keeps the data set as before with cache_path, a
 * holdout, exact training metrics, the invscaling schedule on a pipe, and
 * where the first epoch is not streamed (the cases above, and
 * checkpoints, class weights and crosses, all counted on the whole data
 * set). Several epochs over a pipe read it whole first.
 *
 * test_path (or NULL) is evaluated after every epoch, read with rp and, when
 * rp leaves the libsvm index base to detection, the training data's base.
 *
 * On success *out is the model and *run says what happened and holds the
 * data sets read (the caller closes them). Errors: those of hog_dataset_open, hog_dataset_convert and
 * hog_trainer_run; HOG_EPARAM when cache_path is path itself (under any
 * name); a malformed line (on_error STOP) stops the run at once, and no
 * cache file is left behind.
 */
int hog_trainer_run_file(hog_trainer *t, const char *path,
                         const hog_read_params *rp, const char *cache_path,
                         const char *test_path, hog_model **out,
                         hog_file_run *run, char *err_detail, size_t err_len);

/* ===================================================================== *
 *  Several machines (Dogwild!)
 *
 *  One run can span several processes on one or more machines, "ranks"
 *  0..nodes-1. Each rank runs HOGWILD! with its own workers on its share
 *  of the training data (block b of one shared data set goes to rank
 *  b mod nodes; or each rank reads a file of its own), and a link thread
 *  keeps the ranks' models in step asynchronously: the model is cut into
 *  chunks, each rank masters a contiguous range of them and keeps sending
 *  their values to the others, who answer with the change they made since
 *  they last synced and adopt the master's values plus that change. No rank
 *  waits for another; a lost or late message loses a little progress and
 *  nothing else. Rank 0 is the rendezvous, evaluates, and ends up with the
 *  final model. The sockets are ZeroMQ's, authenticated and encrypted with
 *  CURVE from a shared secret file (hog_secret_keygen). The wire format is
 *  written out in the README ("Several machines").
 *
 *  A rank that stops answering for timeout seconds is declared dead: the
 *  others take over its chunks and, from their next epoch, its data; the
 *  run completes and says so. When rank 0 is gone every other rank stops
 *  with HOG_ENET within the timeout.
 * ===================================================================== */
typedef struct hog_link hog_link;

typedef enum hog_sync {
    HOG_SYNC_ASYNC = 0,   /* Dogwild!: chunks and changes exchanged all the time */
    HOG_SYNC_AVERAGE = 1, /* the ranks' models averaged at every epoch's end (and every
                             sync_seconds), as Vowpal Wabbit's AllReduce does */
} hog_sync;

typedef struct hog_link_params {
    int rank;                /* this process's rank, 0..nodes-1; -1: unknown */
    int nodes;               /* ranks in the run; 0: unknown (1: a run of one) */
    const char *coordinator; /* rank 0's "HOST:PORT": rank 0 listens there (HOST may be * or
                                an address of its own), the others connect */
    const char *secret;      /* path of the secret file every rank shares (mode 0600) */
    const char *bind_host;   /* the address this rank's inbox listens on and is reached at;
                                NULL: the address this machine uses to reach the coordinator */
    const char *run_id;      /* any string every rank of the run shares (a launcher's job
                                id); NULL: none. Ranks of another run are refused */
    double rate;             /* bytes per second of chunks each rank sends, at most */
    double timeout;          /* seconds without a message before a peer is declared dead */
    double join_timeout;     /* seconds rank 0 waits for every rank to join, and a rank for
                                rank 0 to answer */
    uint32_t chunk;          /* floats per chunk, 16..65536 */
    hog_sync sync;
    double sync_seconds;     /* HOG_SYNC_AVERAGE: also average every this many seconds; 0:
                                at epoch ends only */
    int shards;              /* 1: each rank trains on all of a file of its own (ranks may
                                then differ in features; the model takes the most) */
    double drop;             /* for tests: the fraction of chunk and change messages each rank
                                drops instead of sending, 0..1 */
    unsigned char reserved[96]; /* zero; the room for new fields (see Compatibility) */
} hog_link_params;

/* The defaults: rank -1, nodes 0, no coordinator, secret or run id, bind
 * host NULL, rate 64 MiB/s, timeout 10 s, join timeout 120 s, chunks of
 * 1024 floats, asynchronous, no periodic averaging, one shared data set,
 * no drops. */
hog_link_params hog_link_params_default(void);

/* Fills what p leaves unknown from the environment of the launcher that
 * started this process: rank and nodes from Open MPI's mpirun
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), MPICH and Hydra (PMI_RANK,
 * PMI_SIZE) or Slurm's srun (SLURM_PROCID, SLURM_NTASKS); the coordinator
 * from HOGTRAIN_COORDINATOR, else under Slurm the first host of
 * SLURM_STEP_NODELIST (or SLURM_JOB_NODELIST) at port HOGTRAIN_PORT (29517
 * when unset); the run id from HOGTRAIN_RUN_ID, SLURM_JOB_ID and
 * SLURM_STEP_ID, or Open MPI's OMPI_MCA_ess_base_jobid. The strings set
 * point into the environment or into storage of the library's that lives
 * until exit. A field already set is kept. Returns 1 when a launcher was
 * found, 0 when none was, or HOG_EPARAM (a variable that is not a number,
 * a rank outside 0..size-1; err names the variable). Not thread-safe
 * against setenv. */
int hog_link_params_from_env(hog_link_params *p, char *err_detail, size_t err_len);

/* Checks every field (rank and nodes known, a coordinator and a secret
 * when nodes > 1). Returns 0, or HOG_EPARAM with *field (if not NULL) the
 * name of the first bad field. */
int hog_link_params_check(const hog_link_params *p, const char **field);

/* Makes a link: checks p, reads the secret file (hog_secret_load's
 * errors: a file that group or others may read is refused). Opens no
 * socket yet: the trainer does, when a run starts. Errors: HOG_EPARAM,
 * HOG_EFORMAT, -errno, -ENOMEM. */
int hog_link_create(const hog_link_params *p, hog_link **out, char *err_detail, size_t err_len);

/* Closes the sockets and frees the link. NULL is accepted. */
void hog_link_free(hog_link *l);

/* Makes t's runs multi-node over l (NULL: back to one node). The link
 * serves one run: hog_trainer_run or hog_trainer_run_file (which then
 * reads text whole before training, not streamed). Multi-node runs take
 * the sparse or dense kernel, every loss and schedule, and factorisation
 * machines (every rank must train the same kind: another is refused at
 * the rendezvous, HOG_ENET naming both; with shards a field-aware one
 * takes the most fields any rank's data has); they refuse interactions,
 * early_stop, average and replicas other than machine (HOG_EPARAM).
 * On rank 0 the run returns the final model; on the others, their own
 * view of it at the end. Returns 0. */
int hog_trainer_set_link(hog_trainer *t, hog_link *l);

/* Ends the run on every rank, as when rank 0 is gone: this rank tells
 * the others and its run returns HOG_ENET ("interrupted"). Only sets a
 * flag: async-signal-safe, for a SIGINT or SIGTERM handler. */
void hog_link_interrupt(hog_link *l);

/* The link's rank and its run's number of ranks (after
 * hog_link_params_from_env and checking, what p said). */
uint32_t hog_link_rank(const hog_link *l);
uint32_t hog_link_nodes(const hog_link *l);

/* What a rank's link did. */
typedef struct hog_link_stats {
    uint32_t rank, nodes;
    uint32_t live;            /* ranks alive at the end */
    uint32_t dead_rank;       /* the first rank declared dead, if live < nodes */
    uint64_t chunks_sent, chunks_received;
    uint64_t deltas_sent, deltas_received;
    uint64_t dropped;         /* messages not sent: a full queue (a slow or dead peer) or
                                 hog_link_params.drop */
    uint64_t bad;             /* frames received and refused (malformed, another run) */
    uint64_t stale;           /* chunk values older than ones already adopted, dropped */
    uint64_t bytes_sent, bytes_received;
    uint64_t examples;        /* examples this rank trained */
    double seconds;           /* its training seconds */
    double link_cpu;          /* the link thread's CPU seconds */
    double staleness_mean;    /* over applied changes: how many sends of its chunk the master
                                 made between the one answered and the change's arrival */
    double staleness_max;
    uint64_t refused_peers;   /* connections refused by CURVE authentication */
} hog_link_stats;

/* This rank's statistics, or (on rank 0, after a run) rank r's as it
 * reported them at the end. Returns 0, or HOG_EPARAM for a rank without
 * statistics. */
int hog_link_stats_get(const hog_link *l, uint32_t rank, hog_link_stats *out);

/* Writes a new secret file at path (mode 0600, atomically; an existing
 * file is replaced). Errors: -errno, HOG_ENOTFILE. */
int hog_secret_keygen(const char *path, char *err_detail, size_t err_len);

/* ===================================================================== *
 *  Matrix factorisation (HOGWILD!'s Netflix experiment)
 *
 *  Ratings are (user, item, rating) triples. Users and items are named by
 *  any token (a non-negative integer or a string); each set of ratings maps
 *  its names to dense ids 0..users-1 and 0..items-1 in order of first
 *  appearance. A model predicts
 *      r(u, i) = mean + b_u + b_i + p_u . q_i
 *  with rank-k factor rows p_u and q_i, fitted by HOGWILD! SGD to minimise
 *  the mean over training ratings of
 *      1/2 (r - r(u, i))^2 + l2/2 (|p_u|^2 + |q_i|^2) + l2_bias/2 (b_u^2 + b_i^2).
 * ===================================================================== */

/* A set of ratings, read-only once opened (any number of threads may use it). */
typedef struct hog_ratings hog_ratings;

typedef struct hog_ratings_info {
    uint64_t ratings;   /* triples, in file order */
    uint32_t users;     /* distinct user names */
    uint32_t items;     /* distinct item names */
    int has_ratings;    /* 0: a pairs file (user item) opened with allow_pairs */
    int binary;         /* 1: read from a binary ratings file (.hgr) */
    double mean;        /* of the ratings (NaN without ratings) */
    double min, max;
    uint64_t file_bytes;
    uint64_t fingerprint; /* a hash of the triples and the names, the same for text and .hgr */
} hog_ratings_info;

/* Opens ratings from text or from a binary ratings file (.hgr, detected by
 * its magic). Text: one triple per line, "user item rating", fields
 * separated by spaces, tabs or one comma (with optional blanks around it);
 * further fields (a timestamp) are ignored; blank lines and lines starting
 * with '#' are skipped; CRLF is accepted; the first line is a header when
 * its third field is not a number. With allow_pairs set, lines may be
 * "user item" pairs (every line, then: has_ratings is 0) - for prediction.
 * Ratings must be finite numbers. Text is read as hog_dataset_open reads
 * it: plain or compressed with gzip or zstd (detected by their magic), and
 * from a pipe, a socket or a terminal (standard input is "/dev/stdin") in
 * order, once, to its end; file_bytes is then what came down the pipe. A
 * .hgr file is memory-mapped and checked (sizes, CRC-32s, ids in range,
 * finite ratings) before it is returned, so it must be a plain file: one
 * compressed or piped is refused (-EINVAL).
 * On success *out owns the set (hog_ratings_close) and 0 is returned.
 * Errors: -errno, -ENOMEM, HOG_EFORMAT ("file:line:column: expected ...,
 * found '...'", or a corrupt gzip or zstd stream and its byte offset),
 * HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT, HOG_EEMPTY
 * (no triples), HOG_ECPU; a message in err_detail. Thread-safe. */
int hog_ratings_open(const char *path, int allow_pairs, hog_ratings **out, char *err_detail,
                     size_t err_len);

/* Releases a set of ratings. NULL is accepted. */
void hog_ratings_close(hog_ratings *r);

/* Reads ratings as hog_ratings_open does, batch by batch as they come,
 * keeping none: fn(ctx, batch) gets the ratings of the lines each chunk of
 * text completes (a pipe's or FIFO's chunk is what it had ready, so a line
 * written alone is handed on at once; a .hgr file is one batch). A batch's
 * user and item ids number the names of the whole text so far, the same
 * name the same id in every batch (hog_ratings_user_name names them); it
 * is valid during the call. fn returns 0 to go on, or a negative value,
 * which stops the read and is returned. Returns 0 once every rating was
 * handed on; errors as hog_ratings_open's (HOG_EFORMAT names the line: the
 * batches before it were handed on), and HOG_EPARAM when fn is NULL. */
typedef int (*hog_ratings_fn)(void *ctx, const hog_ratings *batch);
int hog_ratings_each(const char *path, int allow_pairs, hog_ratings_fn fn, void *ctx, char *err_detail,
                     size_t err_len);

/* Fills *info. Never fails. */
void hog_ratings_get_info(const hog_ratings *r, hog_ratings_info *info);

/* Triple i (0 <= i < ratings; the caller checks): dense ids and the rating
 * (NaN in a pairs file). Any pointer may be NULL. */
void hog_ratings_get(const hog_ratings *r, uint64_t i, uint32_t *user, uint32_t *item, float *rating);

/* The name of dense user (item) id u, NUL-terminated, valid while r is
 * open; NULL when out of range. */
const char *hog_ratings_user_name(const hog_ratings *r, uint32_t u);
const char *hog_ratings_item_name(const hog_ratings *r, uint32_t i);

/* Writes r as a binary ratings file (.hgr, version 1) atomically (temporary
 * file, fsync, rename); the README gives the layout ("Binary ratings").
 * A pairs file is written as pairs (has_ratings 0). Errors: -errno from the
 * file system. */
int hog_ratings_save(const hog_ratings *r, const char *path);

typedef struct hog_mf_epoch_stats {
    unsigned epoch;      /* 1-based */
    unsigned epochs;
    double step;         /* the epoch's step size */
    double seconds;      /* training wall time so far, evaluation excluded */
    uint64_t updates;    /* SGD updates (training ratings visited) so far */
    double train_rmse;   /* RMSE of the epoch's updates, each measured just before its step */
    uint64_t test_ratings; /* 0 when there is no test set or holdout */
    double test_rmse;    /* after the epoch; NaN without a test set */
} hog_mf_epoch_stats;

/* Called from the calling thread after every epoch. */
typedef void (*hog_mf_progress_fn)(void *ctx, const hog_mf_epoch_stats *stats);

/* What stops a factorisation and where its checkpoints go
 * (hog_mf_params.control; see hog_mf_control_create). */
typedef struct hog_mf_control hog_mf_control;

/* How a factorisation's epoch hands ratings to its workers. */
typedef enum hog_mf_schedule {
    HOG_MF_HOGWILD = 0, /* shuffled segments of 1024 ratings, any worker on any row (HOGWILD!'s
                           Netflix run); what a zeroed field meant before the grid existed */
    HOG_MF_GRID = 1,    /* FPSGD's grid: users and items in seeded random bands, ratings in
                           (user band, item band) blocks; no two workers hold a block of the
                           same band, so no row is shared; the default */
    HOG_MF_ARRIVAL = 2, /* segments of 1024 ratings in the order they came, any worker on any
                           row: how hog_mf_train_stream runs, which its models' params say;
                           hog_mf_train refuses it (HOG_EPARAM) */
} hog_mf_schedule;

typedef struct hog_mf_params {
    unsigned rank;       /* k: factors per user and per item (1..1024) */
    unsigned threads;    /* workers; 0: one per core */
    unsigned epochs;     /* passes over the training ratings */
    double step;         /* initial step size */
    double decay;        /* the step is multiplied by this after every epoch */
    double l2;           /* L2 on the factor rows, per rating (see above) */
    double l2_bias;      /* L2 on the user and item biases, per rating */
    double init;         /* factors start N(0, init^2), seeded per row; biases at 0 */
    double holdout;      /* fraction of the ratings held out for evaluation when no test set */
    uint64_t seed;       /* initial factors, shuffling, holdout; one thread is reproducible */
    int clamp;           /* 1: predictions are clipped to the training ratings' [min, max] */
    int bind;            /* as hog_train_params.bind */
    hog_mf_progress_fn progress;
    void *progress_ctx;
    hog_link *link;      /* NULL: one machine; else a multi-node run over this link (see
                            "Several machines"): every rank reads the same ratings file and
                            trains segment s of 1024 shuffled ratings when s mod nodes is its
                            rank, whatever the schedule; rank 0 gathers the final model */
    hog_mf_control *control; /* NULL: none; else the run stops at hog_mf_interrupt(control) and
                            takes the checkpoints it names (the caller keeps it alive) */
    int schedule;        /* a hog_mf_schedule; a linked run (link) uses HOG_MF_HOGWILD's segments */
    unsigned grid;       /* HOG_MF_GRID: bands per side (2..4096, at least 2 threads + 1 to keep
                            every worker busy); 0: chosen from the threads and the ratings */
    int step_schedule;   /* a hog_schedule: how far each rating moves the two rows it touches.
                            HOG_SCHEDULE_DECAY: step x decay^epoch (what a zeroed field meant
                            before the choice existed). HOG_SCHEDULE_ADAGRAD (LIBMF's rule, the
                            default): a user's or item's factors and bias step by
                            step x decay^epoch / sqrt(G), G being 1 plus the sum, over the
                            row's updates so far, of its factors' mean squared gradient */
    unsigned early_stop; /* 0: off (what a zeroed field meant before it existed); K (up to
                            1000000): with a test set or holdout, stop after K epochs without a
                            lower test RMSE and keep the best epoch's model (its biases and
                            factors; hog_mf_get_epochs says which). Neither: HOG_EPARAM; a
                            multi-node run (link) refuses it (HOG_EPARAM: each rank would keep
                            its own best). Took the bytes of the reserved field in 0.2 */
} hog_mf_params;

/* The defaults: rank 32, one thread per core, 20 epochs, step 0.1 under
 * the AdaGrad step schedule, decay 0.95, l2 0.1, l2_bias 0.01, init 0.1, no
 * holdout and no early stopping (the command's default for several epochs
 * is --holdout 0.1 --early-stop 3), seed 1, clamping on, binding HOG_BIND_AUTO, the grid schedule with its
 * bands chosen by the run, no progress callback (measured on MovieLens and
 * a generated 20M-rating matrix beside LIBMF, see the README). */
hog_mf_params hog_mf_params_default(void);

/* Checks every field. Returns 0, or HOG_EPARAM with *field (if not NULL)
 * set to the name of the first bad field. */
int hog_mf_params_check(const hog_mf_params *p, const char **field);

/* A trained factorisation: read-only, may be shared by threads. */
typedef struct hog_mf_model hog_mf_model;

typedef struct hog_mf_info {
    hog_mf_params params;  /* threads as run; the progress fields are NULL */
    uint32_t users, items, rank;
    double mean;           /* global mean of the training ratings */
    double min, max;       /* their range (the clamp) */
    uint64_t train_ratings;/* ratings trained on (holdout excluded) */
    uint64_t updates;      /* SGD updates made */
    uint64_t data_fingerprint;
    double seconds;        /* training wall time, evaluation excluded */
    double train_rmse;     /* of the final model on the training ratings */
    uint64_t test_ratings; /* 0 if no test set or holdout */
    double test_rmse;      /* NaN if none */
} hog_mf_info;

/* A control for factorisations (hog_mf_params.control): hog_mf_interrupt
 * stops a run, and a checkpoint lets it go on later. On success *out owns
 * it (hog_mf_control_free, NULL accepted) and 0 is returned; -ENOMEM. One
 * run at a time per control. */
int hog_mf_control_create(hog_mf_control **out);
void hog_mf_control_free(hog_mf_control *c);

/* Sets where runs with control c write their checkpoint, as
 * hog_trainer_set_checkpoint does for the linear trainer: every
 * every_seconds (0: only when interrupted and at the end), when
 * interrupted, and after the last epoch; resume 1: the next run goes on
 * from it. The checkpoint holds the biases and factors, the epoch and the
 * position in it, each worker's totals, the statistics so far, the
 * ratings' fingerprint and the parameters; a run resumed with one thread
 * ends with the same model as one never interrupted, bit for bit; other
 * ratings, another test set or other parameters (threads, bind and the
 * callbacks aside) are
 * refused with HOG_EPARAM, the field and both values in the message. A
 * multi-node run takes no checkpoint (HOG_EPARAM). Returns 0, HOG_EPARAM
 * (every_seconds negative or not a number, resume without a path) or
 * -ENOMEM. */
int hog_mf_control_set_checkpoint(hog_mf_control *c, const char *path, double every_seconds, int resume);

/* Stops the run of c as hog_trainer_interrupt stops a linear one: the
 * workers finish their segments, the checkpoint (if set) is written, and
 * hog_mf_train returns HOG_EINTERRUPTED with no model. Returns 1 when the
 * run's epochs are under way, else 0, as hog_trainer_interrupt does. Only
 * sets and reads flags: async-signal-safe; cleared when a run returns
 * HOG_EINTERRUPTED. A multi-node run is ended with hog_link_interrupt
 * instead. */
int hog_mf_interrupt(hog_mf_control *c);

/* Snapshots of a factorisation trained in one pass (hog_mf_train_stream)
 * with control c: after every every_ratings ratings learned (0: not on a
 * count), every every_seconds seconds (0: not on a timer) and when
 * hog_mf_snapshot asks, write is called with the model of every rating
 * learned so far, a whole model as the run would return it (its names
 * too), which write must not keep: it saves it, atomically if readers may
 * be looking (hog_mf_save does). A snapshot is taken between two batches,
 * when no worker runs; on a quiet stream, as soon as the read has handed
 * on what came. write's error is logged (HOG_LOG_WARN) and training goes
 * on. Runs of several epochs take none. Not thread-safe against a run of
 * c. Returns 0, or HOG_EPARAM (write NULL while a count or timer is set,
 * every_seconds negative or not a number). */
typedef int (*hog_mf_snapshot_fn)(void *ctx, const hog_mf_model *m);
int hog_mf_control_set_snapshots(hog_mf_control *c, uint64_t every_ratings, double every_seconds,
                                 hog_mf_snapshot_fn write, void *ctx);

/* Asks c's run in one pass for a snapshot after its batch under way (see
 * hog_mf_control_set_snapshots; none is taken where no write is set).
 * Only sets a flag: async-signal-safe, for a SIGUSR1 handler. */
void hog_mf_snapshot(hog_mf_control *c);

/* Trains a factorisation in one pass over the ratings at path (text as
 * hog_ratings_open reads it: a file, gzip or zstd, a pipe, a FIFO, "-" for
 * standard input; or a .hgr), learning each rating once as it is read and
 * keeping none of them: memory is the read-ahead and the model, which
 * grows as users and items first appear, never the stream. A batch is
 * what the reader completed (a stream's: what it had ready, so a rating
 * written alone is learned at once); its ratings are stepped in segments
 * of 1024 in the order they came, HOGWILD! on p->threads workers. Each
 * rating is scored before its step (progressive validation): p->progress
 * is called as the ratings learned pass each power of two from 1024 and
 * at the end, with epoch 0 of 1 (1 of 1 at the end), the ratings so far as
 * updates and their progressive RMSE as train_rmse. The model's mean is
 * the running mean: each segment learns against the mean of the ratings
 * before it (the first, against its first rating), and the model keeps the
 * last segment's, so it predicts as it learned; min and max are the
 * stream's. One thread gives the same model bit for bit however the
 * stream is cut into batches (a file and a pipe of it alike). test (or
 * NULL) is evaluated at the end (test_rmse); info.train_rmse is the
 * progressive RMSE. With p->control, hog_mf_interrupt stops the read at
 * once, even one waiting on a quiet pipe: the ratings read so far are
 * learned (a line cut by the stop is left out, with a warning) and the
 * call returns their model (0), as at the stream's end; snapshots as
 * hog_mf_control_set_snapshots sets. rp (NULL: the defaults): of it only
 * on_error applies: HOG_ON_ERROR_STOP, a malformed line is HOG_EFORMAT
 * naming its file, line and column, and no model; HOG_ON_ERROR_SKIP, it is
 * counted in *skipped (skipped may be NULL) and left out, and on success
 * err_detail holds the first ones' messages, one per line, as
 * hog_dataset_skipped writes them ("" if none). Refused with HOG_EPARAM:
 * epochs other than 1, a holdout or early stopping (progressive
 * validation scores each rating before it is learned), a link, a
 * checkpoint on the control. Other errors as hog_ratings_each's and
 * hog_mf_train's. */
int hog_mf_train_stream(const hog_mf_params *p, const char *path, const hog_read_params *rp, const hog_ratings *test,
                        hog_mf_model **out, uint64_t *skipped, char *err_detail, size_t err_len);

/* Trains a factorisation of train with HOGWILD! SGD on p->threads workers
 * of the library's shared pool (see hog_model_evaluate). test (may be NULL;
 * its names are matched to train's) or else a holdout fraction of train is
 * evaluated after every epoch; a test user or
 * item unknown to train is predicted from what is known (the mean and the
 * other's bias). On success *out owns the model.
 * Errors: HOG_EPARAM (field in err_detail), HOG_EEMPTY (no training
 * ratings), HOG_ELABEL (a pairs file given as train or test), -ENOMEM,
 * -errno from pthread_create, HOG_ETOPOLOGY, HOG_ECPU; with p->control,
 * HOG_EINTERRUPTED and the errors of resuming, as hog_trainer_set_checkpoint
 * lists them. */
int hog_mf_train(const hog_mf_params *p, const hog_ratings *train, const hog_ratings *test,
                 hog_mf_model **out, char *err_detail, size_t err_len);

/* Releases a model. NULL is accepted. */
void hog_mf_free(hog_mf_model *m);

/* Fills *info. Never fails. */
void hog_mf_get_info(const hog_mf_model *m, hog_mf_info *info);

/* The epochs m's run trained (*epochs_run: params.epochs unless it stopped
 * early) and the epoch whose biases and factors m holds (*best_epoch,
 * 1-based: epochs_run, or with params.early_stop the one with the lowest
 * test RMSE, whose RMSE is info.test_rmse). A model saved before early
 * stopping existed gives params.epochs for both. Either pointer may be
 * NULL. A function of its own, not fields of hog_mf_info: that struct is
 * filled in by the library, so a field added to it would break programs
 * built against an older header (see Compatibility). Never fails. */
void hog_mf_get_epochs(const hog_mf_model *m, unsigned *epochs_run, unsigned *best_epoch);

/* The dense id of a user (item) name, or -1 if the model does not know it. */
int64_t hog_mf_user_id(const hog_mf_model *m, const char *name);
int64_t hog_mf_item_id(const hog_mf_model *m, const char *name);

/* The prediction for dense ids; an id of -1 (unknown) leaves its bias and
 * factors out. Clamped if the model's params.clamp. Thread-safe. */
double hog_mf_predict_id(const hog_mf_model *m, int64_t user, int64_t item);

/* The prediction for a (user, item) pair of names. Thread-safe. */
double hog_mf_predict(const hog_mf_model *m, const char *user, const char *item);

/* Predicts every triple of r, in r's order, into out[0..ratings) (names
 * matched to the model's). If rmse is not NULL and r has ratings, the RMSE
 * against them is stored there (NaN otherwise).
 * Errors: -ENOMEM. */
int hog_mf_predict_ratings(const hog_mf_model *m, const hog_ratings *r, float *out, double *rmse);

/* Saves a model atomically. The file (version 1) holds a magic, the
 * parameters, the mean, the training and test metrics, the user and item
 * names, the biases and the factors, covered by a CRC-32. A model with a
 * NaN or infinite bias or factor is never written. Errors: -errno from the
 * file system, -ENOMEM, HOG_ENOTFILE, HOG_ENONFINITE (nothing is written). */
int hog_mf_save(const hog_mf_model *m, const char *path);

/* Loads a model saved by hog_mf_save; a bias or factor that is not finite
 * is refused even under a valid checksum. Errors: -errno, -ENOMEM,
 * HOG_EMAGIC, HOG_EVERSION, HOG_ETRUNCATED, HOG_ECHECKSUM, HOG_ECORRUPT,
 * HOG_ECPU; a message in err_detail. */
int hog_mf_load(const char *path, hog_mf_model **out, char *err_detail, size_t err_len);

/* ===================================================================== *
 *  Files
 * ===================================================================== */

/* What a file holds, told by its first eight bytes (the magic). */
typedef enum hog_file_kind {
    HOG_FILE_TEXT = 0,  /* anything else: text (plain, gzip or zstd), or not hogtrain's */
    HOG_FILE_DATASET,   /* a binary dataset (.hgd): hog_dataset_open */
    HOG_FILE_MODEL,     /* a linear model: hog_model_load */
    HOG_FILE_MF_MODEL,  /* a matrix factorisation model: hog_mf_load */
    HOG_FILE_RATINGS,   /* a binary ratings file (.hgr): hog_ratings_open */
    HOG_FILE_CHECKPOINT,    /* a linear trainer's checkpoint: hog_trainer_set_checkpoint */
    HOG_FILE_MF_CHECKPOINT, /* a matrix factorisation checkpoint: hog_mf_control_set_checkpoint */
} hog_file_kind;

/* Sets *kind to what the file at path holds, from its magic alone: the
 * rest (version, sizes, checksums) is checked by the call that opens it. A
 * file shorter than a magic is HOG_FILE_TEXT. A pipe, socket or terminal is
 * not read (what was read could not be read again) and is HOG_FILE_TEXT;
 * hog_dataset_open and hog_ratings_open still recognise binary data in a
 * pipe. Returns 0, or -errno from open or read (-ENOENT, -EACCES, -EISDIR,
 * ...) or HOG_ECPU, with "path: reason" in err_detail (at most err_len
 * bytes, NUL-terminated; may be NULL). Thread-safe. */
int hog_file_probe(const char *path, hog_file_kind *kind, char *err_detail, size_t err_len);

/* "text", "dataset", "model", "mf_model", "ratings", "checkpoint",
 * "mf_checkpoint"; "unknown" for any other value. */
const char *hog_file_kind_name(hog_file_kind kind);

/* An output file written whole or not at all, as the library writes its
 * own: the bytes go to a file in path's folder that has no name (O_TMPFILE;
 * where the file system refuses it, a temporary file PATH.hogtmp.XXXXXX),
 * which hog_output_commit syncs to disk and renames over path (then syncs
 * the folder), so a reader of path sees the old file or the whole new one,
 * a failed or abandoned output leaves path as it was, and a process killed
 * at any instant leaves nothing a later output in that folder does not
 * remove. A file that is
 * replaced keeps its permissions (and its owner and group, where the
 * process may set them); a new file gets 0666 less the umask. A symbolic
 * link at path is replaced by the new file; the file it pointed to is left
 * as it was. One thread at a time per output.
 *
 * What exists at path and is not a regular file is written into, never
 * replaced, as cp and cc -o write into it: /dev/null (and any character
 * device that seeks) directly; a FIFO, a terminal, or one of the process's
 * own descriptors named as /dev/fd/N, /proc/self/fd/N, /dev/stdout or
 * /dev/stderr (a pipe, a process substitution, a file the shell opened
 * with >>), through a nameless file in /tmp that hog_output_commit copies
 * in whole, so that a reader gets the whole output or nothing, and a FIFO
 * is opened (waiting for its reader) only by the commit, never by an
 * output that is aborted. What a symbolic link at path leads to counts
 * for these. */
typedef struct hog_output hog_output;

/* Creates the file that will replace path, in its folder (or readies the
 * device, FIFO or descriptor it writes into). On success *out owns the
 * output (end it with hog_output_commit or hog_output_abort) and 0 is
 * returned.
 * Errors: -errno from the file system (-ENOENT: no such folder, -EACCES,
 * -EISDIR: path is a folder), -EBADF (path names a descriptor that is
 * closed or read-only), HOG_ENOTFILE (path is a block device or a
 * socket), -ENOMEM, HOG_ECPU. */
int hog_output_open(const char *path, hog_output **out);

/* Appends all of buf. Errors: -errno from write (-ENOSPC, -EIO, ...); the
 * output stays open, for hog_output_abort. */
int hog_output_write(hog_output *o, const void *buf, size_t len);

/* Syncs the file, renames it over path and syncs the folder, then frees o;
 * or copies the output into what it is written into, opening a FIFO first
 * (which waits for a reader).
 * Errors: -errno from fsync, close or rename (the temporary file is removed
 * and path left as it was), or from syncing the folder (the new file is
 * then in place, but a crash could still lose the rename); -EPIPE (or
 * SIGPIPE) when a pipe's reader went away. */
int hog_output_commit(hog_output *o);

/* Removes the temporary file and frees o. NULL is accepted. */
void hog_output_abort(hog_output *o);

/* hog_model_save and hog_mf_save into an output opened with
 * hog_output_open, which they commit (or abort, on any error) and free: a
 * program opens the output before a long run, so that a path that cannot
 * be written fails at once, not after the last epoch. Errors: those of
 * hog_model_save or hog_mf_save and of hog_output_commit. */
int hog_model_save_output(const hog_model *m, hog_output *o);
int hog_mf_save_output(const hog_mf_model *m, hog_output *o);

/* For a handler of SIGINT or SIGTERM that then ends the process: removes
 * the names of the temporary files that this process's outputs (its
 * hog_output and the library's own: datasets, caches, models) have at this
 * instant, which a file system without O_TMPFILE needs, and the moment
 * between naming a finished file and renaming it over its target. An output
 * still open afterwards fails at its commit. Async-signal-safe; never
 * fails. */
void hog_output_unlink_temps(void);

/* ===================================================================== *
 *  Machine topology
 *
 *  Workers are placed with hwloc: spread over the NUMA nodes as evenly as
 *  their cores allow, one per core (hardware threads only once every core
 *  has one), node 0's workers first; each is pinned to one CPU, its memory
 *  policy bound to its node. The topology is this machine's, or another
 *  machine's that the program sets with hog_topology_set, for planning and
 *  tests (the library reads no environment variable; the hogtrain command
 *  passes HOG_TOPOLOGY's value in). On another machine's topology nothing
 *  is bound, and a run of the default size (threads 0) starts one worker
 *  per core but at most as many as this process has CPUs: the description
 *  of a 1,024-core machine does not start 1,024 threads on two CPUs. A
 *  number of threads asked for is started as asked.
 * ===================================================================== */

/* Sets the topology every later pool, trainer, evaluation, factorisation
 * and hog_topology_describe places its workers on, instead of this
 * machine's: spec is an hwloc synthetic description ("package:2 numa:1
 * core:4 pu:2") or an XML file (a name ending in .xml, as `lstopo
 * FILE.xml` writes it); NULL or "" keeps this machine's. It is loaded
 * here, so a bad spec is reported here, and kept for the life of the
 * process. Call it before anything that places workers: the first of them
 * loads this machine's topology, and then the topology is settled. Returns
 * 0, HOG_ETOPOLOGY (not a synthetic description hwloc accepts, or hwloc
 * failed), -errno (an XML file that cannot be read: -ENOENT, ...),
 * -ENOMEM, -EBUSY (the topology is already loaded: set before, or used),
 * HOG_ECPU; a message in err_detail (at most err_len bytes, may be NULL).
 * Thread-safe. */
int hog_topology_set(const char *spec, char *err_detail, size_t err_len);

/* Describes as text what hogtrain sees and where `threads` workers (0: one
 * per core) go: the topology's source, NUMA nodes, cores, hardware threads
 * (PUs), available memory (MemAvailable, counted as an equal share per
 * node: hwloc's per-node sizes are wrong on machines that initialise memory
 * lazily), each node's cores and CPUs, a table of workers (node, core,
 * CPU), and, on this machine, whether this process may pin threads and bind
 * memory, found by starting the workers briefly. Writes at most len bytes,
 * NUL-terminated, into buf, like snprintf, and returns the length of the
 * whole text: if that is len or more, call again with a larger buffer.
 * Errors (the message in buf): HOG_ETOPOLOGY (hwloc cannot load the
 * topology), -ENOMEM, -errno from pthread_create, HOG_ECPU. Thread-safe. */
int hog_topology_describe(unsigned threads, char *buf, size_t len);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* HOGTRAIN_H */
