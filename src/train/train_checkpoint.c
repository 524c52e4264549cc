/* train_checkpoint.c: a run's checkpoints: when it pauses to write one, the checkpoint file, resuming from it, and interruption. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "train_run.h"

/*
 * Checkpoint file, version 1. Little-endian.
 *
 *   offset  bytes            field
 *   0       8                magic "HOGCHKPT"
 *   8       4                version (1)
 *   12      4                meta_bytes
 *   16      8                dim (features)
 *   24      4                outputs
 *   28      4                classes
 *   32      4                workers (the run's threads)
 *   36      4                sections: which optional arrays follow (CKPT_*)
 *   40      meta_bytes       metadata: "key value\n" lines (train_meta.c): the parameters
 *                            (params.*), the data (data.*), the run's shape (run.*), its
 *                            position (at.*), statistics (stats.*), early stopping (best.*)
 *                            and averaging (average.*)
 *   ...     8 * classes      f64 class labels, ascending
 *   ...     4 * outputs      f32 biases
 *   ...     4 * dim * outputs  f32 weights, feature-major
 *   ...     40 * workers     per worker: f64 training loss, u64 examples, u64 non-zeros,
 *                            f64 and f64 the normalised update's example count and sum
 *   ...     4 * dim * outputs, 4 * outputs   adagrad: the weights' and the biases' sums
 *   ...     4 * dim          normalized: each feature's largest |x|
 *   ...     8 * dim * outputs  l1: each weight's penalty owed and applied, f32 pairs
 *   ...     8 * (dim * outputs + outputs)  average: the f64 sums of the samples
 *   ...     4 * (dim * outputs + outputs)  early stopping: the best epoch's weights, biases
 *   ...     4                CRC-32 of every byte before it
 *
 * The model's weights are those of the run at its position: with replicas,
 * their mean. The derived tables (feature degrees, L2 scales, private
 * copies) are not kept: a resumed run builds them from the same data again.
 */
#define CKPT_VERSION 1u
#define CKPT_HEAD 40u
#define CKPT_MAX_META (1u << 20)
#define CKPT_WORKER_BYTES 40u
#define CKPT_MAX_WORKERS 65536u

/* ===================================================================== *
 *  The trainer's settings
 * ===================================================================== */
int hog_trainer_set_checkpoint(hog_trainer *t, const char *path, double every_seconds, int resume)
{
    return hog_ckpt_settings_set(&t->ckpt_path, &t->ckpt_every, &t->resume, path, every_seconds, resume);
}

void hog_stop_fd_raise(int fd)
{
    if (fd >= 0) {
        const uint64_t one = 1;
        ssize_t n = write(fd, &one, sizeof(one));
        (void)n;
    }
}

void hog_stop_fd_drain(int fd)
{
    uint64_t n;
    if (fd >= 0) {
        ssize_t got = read(fd, &n, sizeof(n));
        (void)got;
    }
}

int hog_trainer_interrupt(hog_trainer *t)
{
    atomic_store_explicit(&t->interrupted, 1, memory_order_relaxed);
    hog_stop_fd_raise(t->stop_fd);
    return atomic_load_explicit(&t->training, memory_order_relaxed);
}

int hog_trainer_stopped(const hog_trainer *t)
{
    return t->stopped;
}

void hog_trainer_stop_settle(hog_trainer *t)
{
    if (!atomic_load_explicit(&t->interrupted, memory_order_relaxed))
        hog_stop_fd_drain(t->stop_fd);
}

/* ===================================================================== *
 *  Metadata: one table of fields, for writing, reading and comparing
 * ===================================================================== */
#define CKPT_FIELDS 80 /* room for the fields ckpt_fields makes */
#define PARAMS_KEY "params."

/* params.interactions: "-" for none (a word cannot be empty). */
static int ckpt_parse_cross(const char *text, void *at)
{
    if (strlen(text) >= HOG_CROSS_SPEC)
        return -1;
    strcpy(at, strcmp(text, "-") == 0 ? "" : text);
    return 0;
}

/* The interactions of p as hog_cross.spec writes them, into spec ("": none). */
static void cross_of(const hog_train_params *p, char *spec)
{
    hog_cross x;
    spec[0] = '\0';
    if (p->interactions && *p->interactions && hog_cross_parse(p->interactions, p->cross_bits, 0, &x, NULL, 0) == 0)
        strcpy(spec, x.spec);
}

/* The metadata of a checkpoint, in the order it is written. The keys
 * params.NAME are hog_train_params.NAME: a resumed run must have the same. */
static size_t ckpt_fields(checkpoint *c, hog_meta_field *f)
{
    static const char *const stats_keys[6] = {"stats.test.rows", "stats.test.loss", "stats.test.logloss",
                                              "stats.test.accuracy", "stats.test.auc", "stats.test.rmse"};
    static const char *const best_keys[6] = {"best.test.rows", "best.test.loss", "best.test.logloss",
                                             "best.test.accuracy", "best.test.auc", "best.test.rmse"};
    hog_train_params *p = &c->p;
    size_t n = 0;
    f[n++] = (hog_meta_field){"hogtrain", HOG_META_NOTE, NULL, hog_version_string(), NULL};
    f[n++] = (hog_meta_field){PARAMS_KEY "loss", HOG_META_WORD, &p->loss, hog_loss_name(p->loss), hog_meta_parse_loss};
    f[n++] = HOG_META_NUM(PARAMS_KEY "epochs", &p->epochs);
    f[n++] = HOG_META_NUM(PARAMS_KEY "step", &p->step);
    f[n++] = HOG_META_NUM(PARAMS_KEY "decay", &p->decay);
    f[n++] = HOG_META_NUM(PARAMS_KEY "power", &p->power);
    f[n++] = (hog_meta_field){PARAMS_KEY "schedule", HOG_META_WORD, &p->schedule, hog_schedule_name(p->schedule),
                              hog_meta_parse_schedule};
    f[n++] = HOG_META_NUM(PARAMS_KEY "l2", &p->l2);
    f[n++] = HOG_META_NUM(PARAMS_KEY "l2_rows", &p->l2_rows);
    f[n++] = HOG_META_NUM(PARAMS_KEY "holdout", &p->holdout);
    f[n++] = HOG_META_NUM(PARAMS_KEY "seed", &p->seed);
    f[n++] = HOG_META_NUM(PARAMS_KEY "bias", &p->bias);
    f[n++] = (hog_meta_field){PARAMS_KEY "kernel", HOG_META_WORD, &p->kernel, hog_kernel_name(p->kernel),
                              hog_meta_parse_kernel};
    f[n++] = HOG_META_NUM(PARAMS_KEY "batch", &p->batch);
    f[n++] = HOG_META_NUM(PARAMS_KEY "normalized", &p->normalized);
    f[n++] = HOG_META_NUM(PARAMS_KEY "l1", &p->l1);
    f[n++] = HOG_META_NUM(PARAMS_KEY "early_stop", &p->early_stop);
    f[n++] = HOG_META_NUM(PARAMS_KEY "average", &p->average);
    f[n++] = HOG_META_NUM(PARAMS_KEY "quantile", &p->quantile);
    f[n++] = (hog_meta_field){PARAMS_KEY "replicas", HOG_META_WORD, &p->replicas, hog_replicas_name(p->replicas),
                              hog_meta_parse_replicas};
    f[n++] = (hog_meta_field){PARAMS_KEY "class_weight", HOG_META_WORD, &p->class_weight, hog_class_weight_name(p->class_weight),
                              hog_meta_parse_class_weight};
    f[n++] = HOG_META_NUM(PARAMS_KEY "factors", &p->factors);
    f[n++] = HOG_META_NUM(PARAMS_KEY "field_aware", &p->field_aware);
    f[n++] = (hog_meta_field){PARAMS_KEY "interactions", HOG_META_WORD, c->cross, c->cross[0] ? c->cross : "-",
                              ckpt_parse_cross};
    f[n++] = HOG_META_NUM(PARAMS_KEY "cross_bits", &p->cross_bits);
    f[n++] = HOG_META_NUM(PARAMS_KEY "l2_crossed", &p->l2_crossed);
    f[n++] = (hog_meta_field){"data.fingerprint", HOG_META_HEX64, &c->fingerprint, NULL, NULL};
    f[n++] = HOG_META_NUM("data.rows", &c->rows);
    f[n++] = HOG_META_NUM("data.features", &c->features);
    f[n++] = HOG_META_NUM("data.blocks", &c->blocks);
    f[n++] = HOG_META_NUM("data.rows_per_block", &c->rows_per_block);
    f[n++] = (hog_meta_field){"data.test_fingerprint", HOG_META_HEX64, &c->test_fingerprint, NULL, NULL};
    f[n++] = (hog_meta_field){"run.kernel", HOG_META_WORD, &c->kernel, hog_kernel_name(c->kernel), hog_meta_parse_kernel};
    f[n++] = HOG_META_NUM("run.ooc", &c->ooc);
    f[n++] = HOG_META_NUM("run.segments", &c->segments);
    f[n++] = HOG_META_NUM("at.epoch", &c->at.epoch);
    f[n++] = HOG_META_NUM("at.segment", &c->at.segment);
    f[n++] = HOG_META_NUM("at.finished", &c->at.finished);
    f[n++] = HOG_META_NUM("at.examples0", &c->at.examples0);
    f[n++] = HOG_META_NUM("at.loss0", &c->at.loss0);
    f[n++] = HOG_META_NUM("stats.epoch", &c->st.epoch);
    f[n++] = HOG_META_NUM("stats.step", &c->st.step);
    f[n++] = HOG_META_NUM("stats.examples", &c->st.examples);
    f[n++] = HOG_META_NUM("stats.nnz", &c->st.nnz);
    f[n++] = HOG_META_NUM("stats.train_loss", &c->st.train_loss);
    n += hog_meta_metrics(f + n, stats_keys, &c->st.test);
    f[n++] = HOG_META_NUM("stats.seconds", &c->seconds);
    f[n++] = HOG_META_NUM("stats.epochs_run", &c->epochs_run);
    f[n++] = HOG_META_NUM("best.loss", &c->best.loss);
    f[n++] = HOG_META_NUM("best.epoch", &c->best.epoch);
    f[n++] = HOG_META_NUM("best.since", &c->best.since);
    n += hog_meta_metrics(f + n, best_keys, &c->best.test);
    f[n++] = HOG_META_NUM("average.count", &c->avg_count);
    return n;
}

/* HOG_EPARAM, naming the first parameter the checkpoint ck was made with
 * that p does not have, or 0. */
static int params_compare(const checkpoint *ck, const hog_train_params *p, char *err, size_t err_len)
{
    checkpoint theirs = *ck, mine = *ck;
    mine.p = *p;
    /* The checkpoint's l2 is the run's: l2_rows resolved for the data, and
     * times the crosses' factor (compared once they are counted:
     * hog_checkpoint_l2). */
    if ((p->l2_rows > 0 && p->l2_rows == ck->p.l2_rows) || (p->l2_crossed && p->l2_crossed == ck->p.l2_crossed))
        mine.p.l2 = ck->p.l2;
    cross_of(p, mine.cross);
    hog_meta_field a[CKPT_FIELDS], b[CKPT_FIELDS];
    size_t n = ckpt_fields(&theirs, a);
    ckpt_fields(&mine, b);
    return hog_meta_differ(a, b, n, PARAMS_KEY, "hog_train_params", ck->path, err, err_len);
}

int hog_checkpoint_l2(const checkpoint *ck, double l2, char *err, size_t err_len)
{
    if (l2 == ck->p.l2)
        return 0;
    return hog_fail(HOG_EPARAM, err, err_len, "%s: the checkpoint was made with l2 %g, this run's penalty is %g: "
                    "resume with the same parameters", ck->path, ck->p.l2, l2);
}

/* ===================================================================== *
 *  Writing
 * ===================================================================== */
/* The sections a run's checkpoint holds. */
static uint32_t run_sections(const hog_train_params *p)
{
    return (p->schedule == HOG_SCHEDULE_ADAGRAD ? CKPT_ADAGRAD : 0) | (p->normalized ? CKPT_NORMALIZED : 0) |
           (p->l1 > 0 ? CKPT_L1 : 0) | (p->average ? CKPT_AVERAGE : 0) | (p->early_stop ? CKPT_BEST : 0);
}

/* The arrays of a checkpoint, both kinds (train.h). */
int hog_ckpt_put_rows(hog_atomic_file *f, uint32_t *crc, const hog_weight *w, uint64_t rows, uint32_t k,
                      uint32_t stride)
{
    float chunk[4096];
    uint64_t used = 0;
    int rc = 0;
    for (uint64_t r = 0; r < rows && rc == 0; r++)
        for (uint32_t c = 0; c < k && rc == 0; c++) {
            chunk[used++] = hog_w_load(&w[r * stride + c]);
            if (used == HOG_ARRAY_LEN(chunk)) {
                rc = hog_atomic_write_crc(f, crc, chunk, sizeof(chunk));
                used = 0;
            }
        }
    return rc == 0 && used ? hog_atomic_write_crc(f, crc, chunk, used * sizeof(float)) : rc;
}

void hog_ckpt_get_rows(hog_weight *w, const unsigned char *from, uint64_t rows, uint32_t k, uint32_t stride)
{
    for (uint64_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < k; c++) {
            float v;
            memcpy(&v, from + 4 * (r * k + c), 4);
            hog_w_store(&w[r * stride + c], v);
        }
}

/* The body after the metadata: every array of rs, in the layout's order. */
static int put_arrays(hog_atomic_file *f, uint32_t *crc, const run_state *rs, uint32_t sections)
{
    const hog_model *m = rs->m;
    const uint64_t nw = rs->dim * rs->outputs;
    int rc = hog_atomic_write_crc(f, crc, m->class_labels, (size_t)rs->classes * sizeof(double));
    if (rc == 0)
        rc = hog_ckpt_put_rows(f, crc, m->bias, rs->outputs, 1, 1);
    if (rc == 0)
        rc = hog_ckpt_put_rows(f, crc, m->w, rs->dim, m->outputs, m->stride);
    for (unsigned i = 0; i < rs->nth && rc == 0; i++) {
        const worker_state *ws = &rs->ws[i];
        unsigned char rec[CKPT_WORKER_BYTES];
        memcpy(rec, &ws->loss, 8);
        hog_put_u64(rec + 8, ws->examples);
        hog_put_u64(rec + 16, ws->nnz);
        memcpy(rec + 24, &ws->norm_t, 8);
        memcpy(rec + 32, &ws->norm_n, 8);
        rc = hog_atomic_write_crc(f, crc, rec, sizeof(rec));
    }
    if (rc == 0 && (sections & CKPT_ADAGRAD) &&
        (rc = hog_ckpt_put_rows(f, crc, rs->optim.acc, rs->dim, rs->outputs, rs->optim.astride)) == 0)
        rc = hog_ckpt_put_rows(f, crc, rs->optim.bias_acc, rs->outputs, 1, 1);
    if (rc == 0 && (sections & CKPT_NORMALIZED))
        rc = hog_ckpt_put_rows(f, crc, rs->optim.xmax, rs->dim, 1, rs->optim.fstride);
    if (rc == 0 && (sections & CKPT_L1))
        rc = hog_ckpt_put_rows(f, crc, rs->optim.l1s, rs->dim, 2 * rs->outputs, rs->optim.lstride);
    if (rc == 0 && (sections & CKPT_AVERAGE))
        rc = hog_atomic_write_crc(f, crc, rs->avg.sum, (nw + rs->outputs) * sizeof(double));
    if (rc == 0 && (sections & CKPT_BEST))
        rc = hog_atomic_write_crc(f, crc, rs->best.weights, (nw + rs->outputs) * sizeof(float));
    return rc;
}

/* Writes rs at position at to path, atomically. Returns 0, -errno or
 * -ENOMEM. */
static int ckpt_write(const run_state *rs, const run_position *at, const char *path)
{
    const uint32_t sections = run_sections(rs->p);
    checkpoint c;
    memset(&c, 0, sizeof(c));
    c.p = *rs->p;
    c.fingerprint = rs->ck.data.fingerprint;
    c.rows = rs->ck.data.rows;
    c.features = rs->ck.data.features;
    c.blocks = rs->ck.data.blocks;
    c.rows_per_block = rs->ck.data.rows_per_block;
    c.test_fingerprint = rs->ck.test_fingerprint;
    c.kernel = rs->kernel;
    c.ooc = rs->ooc;
    c.segments = rs->seg.nsegments;
    c.at = *at;
    c.st = rs->st;
    c.seconds = rs->seconds;
    c.epochs_run = rs->epochs_run;
    c.best = rs->best;
    c.avg_count = rs->avg.count;
    snprintf(c.cross, sizeof(c.cross), "%s", rs->cross.spec);
    hog_meta_field fields[CKPT_FIELDS];
    size_t nfields = ckpt_fields(&c, fields);
    char *meta;
    size_t meta_len;
    if (hog_meta_write(fields, nfields, &meta, &meta_len) < 0)
        return -ENOMEM;
    unsigned char head[CKPT_HEAD] = {0};
    memcpy(head, CKPT_MAGIC, 8);
    hog_put_u32(head + 8, CKPT_VERSION);
    hog_put_u32(head + 12, (uint32_t)meta_len);
    hog_put_u64(head + 16, rs->dim);
    hog_put_u32(head + 24, rs->outputs);
    hog_put_u32(head + 28, rs->classes);
    hog_put_u32(head + 32, rs->nth);
    hog_put_u32(head + 36, sections);
    hog_atomic_file f;
    int rc = hog_atomic_open_file(&f, path);
    if (rc < 0) {
        hog_free(meta);
        return rc;
    }
    uint32_t crc = 0;
    rc = hog_atomic_write_crc(&f, &crc, head, sizeof(head));
    if (rc == 0)
        rc = hog_atomic_write_crc(&f, &crc, meta, meta_len);
    if (rc == 0)
        rc = put_arrays(&f, &crc, rs, sections);
    if (rc == 0)
        rc = hog_atomic_write(&f, &crc, 4);
    hog_free(meta);
    if (rc < 0) {
        hog_atomic_abort(&f);
        return rc;
    }
    return hog_atomic_commit(&f);
}

/* ===================================================================== *
 *  Pausing a run
 * ===================================================================== */
/* Where the run stands, for a message: "in epoch 3 of 10, after 120 of
 * 400 segments", "before epoch 3 of 10", "after its last epoch". */
static void position_text(const run_state *rs, const run_position *at, char *buf, size_t len)
{
    if (at->finished)
        snprintf(buf, len, "after its last epoch (%u)", rs->epochs_run);
    else if (at->segment)
        snprintf(buf, len, "in epoch %u of %u, after %u of %u segments", at->epoch + 1, rs->p->epochs, at->segment,
                 rs->seg.nsegments);
    else
        snprintf(buf, len, "before epoch %u of %u", at->epoch + 1, rs->p->epochs);
}

int hog_ckpt_pause(hog_ckpt_timer *tm, int force, const char *where, int (*write)(void *ctx), void *ctx, char *err,
                   size_t err_len)
{
    const int stop = atomic_load_explicit(tm->interrupted, memory_order_relaxed);
    const int due = tm->path && (stop || force || (tm->every > 0 && tm->now() >= tm->last + tm->every));
    if (!stop && !due)
        return 0;
    int rc = 0;
    if (due) {
        double t0 = hog_now();
        rc = write(ctx);
        tm->last = tm->now();
        if (rc == 0)
            hog_log(HOG_LOG_INFO, "checkpoint %s: the run %s (%.2f s to write)", tm->path, where, hog_now() - t0);
        else if (!stop)
            hog_log(HOG_LOG_WARN, "checkpoint %s could not be written: %s; training goes on", tm->path,
                    hog_strerror(rc));
    }
    if (!stop)
        return 0;
    atomic_store_explicit(tm->interrupted, 0, memory_order_relaxed);
    if (rc < 0)
        return hog_fail(rc, err, err_len, "interrupted %s, and the checkpoint %s could not be written: %s", where,
                        tm->path, hog_strerror(rc));
    if (tm->path)
        return hog_fail(HOG_EINTERRUPTED, err, err_len, "interrupted %s: the checkpoint %s holds the run so far",
                        where, tm->path);
    return hog_fail(HOG_EINTERRUPTED, err, err_len, "interrupted %s: nothing was saved (no checkpoint was set)",
                    where);
}

/* hog_ckpt_pause's write for a linear run. */
typedef struct run_write {
    const run_state *rs;
    const run_position *at;
} run_write;

static int run_write_ckpt(void *ctx)
{
    const run_write *w = ctx;
    return ckpt_write(w->rs, w->at, w->rs->ck.timer.path);
}

int hog_run_pause(run_state *rs, const run_position *at, int force, char *err, size_t err_len)
{
    /* hog_link_interrupt ends a multi-node run on every rank; stopping
     * here would leave the others to find this rank dead. */
    if (rs->link)
        return 0;
    char where[96];
    position_text(rs, at, where, sizeof(where));
    run_write w = {rs, at};
    return hog_ckpt_pause(&rs->ck.timer, force, where, run_write_ckpt, &w, err, err_len);
}

/* ===================================================================== *
 *  Reading
 * ===================================================================== */
int hog_run_checkpoint_open(hog_trainer *t, checkpoint *ck, checkpoint **resume, char *err, size_t err_len)
{
    memset(ck, 0, sizeof(*ck));
    *resume = NULL;
    if (!t->ckpt_path)
        return 0;
    if (t->link)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "a multi-node run takes no checkpoint: set none (hog_trainer_set_checkpoint) with a link");
    if (t->p.fold)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "a cross-validation fold (hog_train_params.fold) takes no checkpoint: set none");
    if (!t->resume)
        return 0;
    int rc = hog_checkpoint_read(t->ckpt_path, &t->p, ck, err, err_len);
    if (rc == 0)
        *resume = ck;
    return rc;
}

void hog_checkpoint_free(checkpoint *ck)
{
    hog_free(ck->buf);
    hog_free(ck->path);
    memset(ck, 0, sizeof(*ck));
}

/* The bytes of the arrays after the metadata, for sizes the header gives
 * (each at most 2^40 weights, so nothing overflows). */
static uint64_t body_bytes(uint64_t dim, uint64_t outputs, uint64_t classes, uint64_t workers, uint32_t sections)
{
    const uint64_t nw = dim * outputs;
    uint64_t n = 8 * classes + 4 * outputs + 4 * nw + CKPT_WORKER_BYTES * workers;
    n += (sections & CKPT_ADAGRAD) ? 4 * nw + 4 * outputs : 0;
    n += (sections & CKPT_NORMALIZED) ? 4 * dim : 0;
    n += (sections & CKPT_L1) ? 8 * nw : 0;
    n += (sections & CKPT_AVERAGE) ? 8 * (nw + outputs) : 0;
    n += (sections & CKPT_BEST) ? 4 * (nw + outputs) : 0;
    return n;
}

/* Checks the header and the checksum of the file in ck->buf and reads its
 * metadata. Returns 0 or HOG_EMAGIC, HOG_ETRUNCATED, HOG_EVERSION,
 * HOG_ECORRUPT, HOG_ECHECKSUM. */
static int ckpt_parse(checkpoint *ck, char *err, size_t err_len)
{
    const unsigned char *buf = ck->buf;
    const size_t len = ck->len;
    const char *path = ck->path;
    if (len < 8 || memcmp(buf, CKPT_MAGIC, 8) != 0)
        return hog_fail(HOG_EMAGIC, err, err_len, "%s: not a hogtrain checkpoint (no " CKPT_MAGIC " magic)", path);
    if (len < CKPT_HEAD + 4)
        return hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %zu bytes, the header alone is %u", path, len,
                        CKPT_HEAD + 4);
    uint32_t version = hog_get_u32(buf + 8), meta_len = hog_get_u32(buf + 12);
    if (version != CKPT_VERSION)
        return hog_fail(HOG_EVERSION, err, err_len, "%s: checkpoint version %u, this build reads version %u", path,
                        version, CKPT_VERSION);
    ck->dim = hog_get_u64(buf + 16);
    ck->outputs = hog_get_u32(buf + 24);
    ck->classes = hog_get_u32(buf + 28);
    ck->workers = hog_get_u32(buf + 32);
    ck->sections = hog_get_u32(buf + 36);
    if (meta_len > CKPT_MAX_META || ck->outputs == 0 || ck->outputs > MAX_CLASSES || ck->classes > MAX_CLASSES ||
        ck->dim == 0 || ck->dim > (1ull << 40) / ck->outputs || ck->workers == 0 || ck->workers > CKPT_MAX_WORKERS ||
        ck->sections >= 2 * CKPT_BEST)
        return hog_fail(HOG_ECORRUPT, err, err_len,
                        "%s: implausible sizes (meta %u bytes, %llu features, %u outputs, %u classes, %u workers, "
                        "sections %#x)", path, meta_len, (unsigned long long)ck->dim, ck->outputs, ck->classes,
                        ck->workers, ck->sections);
    uint64_t want = CKPT_HEAD + (uint64_t)meta_len +
                    body_bytes(ck->dim, ck->outputs, ck->classes, ck->workers, ck->sections) + 4;
    if (len != want)
        return hog_fail(len < want ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                        "%s: %s: the header implies %llu bytes, the file has %zu", path,
                        len < want ? "truncated" : "trailing bytes", (unsigned long long)want, len);
    if (hog_crc32(0, buf, len - 4) != hog_get_u32(buf + len - 4))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the checkpoint is corrupted", path);
    ck->p = hog_train_params_default();
    ck->cross[0] = '\0'; /* checkpoints from before crosses have none */
    ck->st.test = hog_metrics_none();
    ck->best.test = hog_metrics_none();
    hog_meta_field fields[CKPT_FIELDS];
    size_t nfields = ckpt_fields(ck, fields);
    char why[256];
    if (hog_meta_read((char *)ck->buf + CKPT_HEAD, meta_len, fields, nfields, why, sizeof(why)) < 0)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: %s", path, why);
    const uint64_t nw = ck->dim * ck->outputs;
    const unsigned char *q = buf + CKPT_HEAD + meta_len;
    const struct { const unsigned char **at; uint64_t bytes; uint32_t section; } parts[] = {
        {&ck->labels, 8ull * ck->classes, 0}, {&ck->bias, 4ull * ck->outputs, 0}, {&ck->w, 4 * nw, 0},
        {&ck->workers_at, (uint64_t)CKPT_WORKER_BYTES * ck->workers, 0}, {&ck->acc, 4 * nw, CKPT_ADAGRAD},
        {&ck->bias_acc, 4ull * ck->outputs, CKPT_ADAGRAD}, {&ck->xmax, 4 * ck->dim, CKPT_NORMALIZED},
        {&ck->l1s, 8 * nw, CKPT_L1}, {&ck->avg_sum, 8 * (nw + ck->outputs), CKPT_AVERAGE},
        {&ck->best_w, 4 * (nw + ck->outputs), CKPT_BEST},
    };
    for (size_t i = 0; i < HOG_ARRAY_LEN(parts); i++)
        if (!parts[i].section || (ck->sections & parts[i].section)) {
            *parts[i].at = q;
            q += parts[i].bytes;
        }
    return 0;
}

/* The position and the counts of a checksum-valid checkpoint, against its
 * own parameters: what a crafted one could break. */
static int ckpt_position_check(const checkpoint *ck, char *err, size_t err_len)
{
    const run_position *at = &ck->at;
    const char *bad = at->epoch > ck->p.epochs                                  ? "at.epoch"
                      : at->finished != 0 && at->finished != 1                  ? "at.finished"
                      : at->segment && (at->segment >= ck->segments || at->epoch >= ck->p.epochs || at->finished)
                          ? "at.segment"
                      : ck->epochs_run > at->epoch                              ? "stats.epochs_run"
                      : ck->best.epoch > ck->epochs_run                         ? "best.epoch"
                      : ck->sections != run_sections(&ck->p)                    ? "sections"
                                                                                : NULL;
    if (bad)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: inconsistent checkpoint: %s", ck->path, bad);
    return 0;
}

int hog_checkpoint_read(const char *path, const hog_train_params *p, checkpoint *ck, char *err, size_t err_len)
{
    memset(ck, 0, sizeof(*ck));
    if (!(ck->path = hog_strdup(path)))
        return hog_fail(-ENOMEM, err, err_len, "out of memory");
    int rc = hog_read_file(path, &ck->buf, &ck->len);
    if (rc == -ENOENT)
        return hog_fail(rc, err, err_len, "%s: no checkpoint to resume from: %s", path, hog_strerror(rc));
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: cannot read the checkpoint: %s", path, hog_strerror(rc));
    if ((rc = ckpt_parse(ck, err, err_len)) < 0 || (rc = params_compare(ck, p, err, err_len)) < 0)
        return rc;
    return ckpt_position_check(ck, err, err_len);
}

int hog_checkpoint_data(const checkpoint *ck, const hog_dataset *train, const hog_dataset *test, char *err,
                        size_t err_len)
{
    const hog_dataset_info *d = &train->info;
    char a[24], b[24];
    const char *field = NULL;
    if (ck->fingerprint != d->fingerprint) {
        field = "fingerprint";
        snprintf(a, sizeof(a), "%016llx", (unsigned long long)ck->fingerprint);
        snprintf(b, sizeof(b), "%016llx", (unsigned long long)d->fingerprint);
    } else {
        const struct { const char *name; uint64_t ck, run; } v[] = {
            {"rows", ck->rows, d->rows}, {"features", ck->features, d->features}, {"blocks", ck->blocks, d->blocks},
            {"rows_per_block", ck->rows_per_block, d->rows_per_block},
        };
        for (size_t i = 0; i < HOG_ARRAY_LEN(v) && !field; i++)
            if (v[i].ck != v[i].run) {
                field = v[i].name;
                snprintf(a, sizeof(a), "%llu", (unsigned long long)v[i].ck);
                snprintf(b, sizeof(b), "%llu", (unsigned long long)v[i].run);
            }
    }
    if (field)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "%s: the checkpoint was made on other data: its hog_dataset_info.%s is %s, this run's data "
                        "has %s: resume on the same data, read the same way", ck->path, field, a, b);
    /* Early stopping and the statistics follow the test set: the same one, or none again. */
    uint64_t test_fp = test ? test->info.fingerprint : 0;
    if (ck->test_fingerprint != test_fp)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "%s: the checkpoint was made with %s test set, this run has %s: resume with the same test set",
                        ck->path, ck->test_fingerprint ? "a" : "no", !test ? "none" : ck->test_fingerprint ? "another"
                                                                                                          : "one");
    return 0;
}

/* ===================================================================== *
 *  Resuming
 * ===================================================================== */
/* The workers' totals. Resumed on another number of workers, the losses
 * and counts go to worker 0 (only their sums are read) and every worker
 * starts the normalised update's counts from the mean worker's (its
 * ratio is what steps). */
static void get_workers(run_state *rs, const checkpoint *ck)
{
    double sum_t = 0, sum_n = 0;
    for (uint32_t i = 0; i < ck->workers; i++) {
        const unsigned char *rec = ck->workers_at + (size_t)CKPT_WORKER_BYTES * i;
        double loss, t, n;
        memcpy(&loss, rec, 8);
        memcpy(&t, rec + 24, 8);
        memcpy(&n, rec + 32, 8);
        worker_state *ws = &rs->ws[ck->workers == rs->nth ? i : 0];
        ws->loss += loss;
        ws->examples += hog_get_u64(rec + 8);
        ws->nnz += hog_get_u64(rec + 16);
        if (ck->workers == rs->nth) {
            ws->norm_t = t;
            ws->norm_n = n;
        }
        sum_t += t;
        sum_n += n;
    }
    if (ck->workers != rs->nth) {
        hog_log(HOG_LOG_INFO, "resuming %s on %u workers, made on %u: their totals merged", ck->path, rs->nth,
                ck->workers);
        for (unsigned i = 0; i < rs->nth; i++) {
            rs->ws[i].norm_t = sum_t / ck->workers;
            rs->ws[i].norm_n = sum_n / ck->workers;
        }
    }
}

int hog_checkpoint_apply(const checkpoint *ck, run_state *rs, char *err, size_t err_len)
{
    const char *bad = ck->dim != rs->dim                                        ? "its features"
                      : ck->outputs != rs->outputs                               ? "its outputs"
                      : ck->classes != rs->classes                               ? "its classes"
                      : ck->classes && memcmp(ck->labels, rs->classes_of, 8ull * ck->classes)
                          ? "its class labels"
                      : ck->kernel != rs->kernel                                 ? "its kernel"
                      : ck->segments != rs->seg.nsegments                        ? "its segments"
                                                                                 : NULL;
    if (bad)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: the checkpoint does not fit this run: %s differ", ck->path,
                        bad);
    const uint64_t nw = ck->dim * ck->outputs;
    hog_model *m = rs->m;
    hog_ckpt_get_rows(m->bias, ck->bias, ck->outputs, 1, 1);
    hog_ckpt_get_rows(m->w, ck->w, ck->dim, ck->outputs, m->stride);
    /* Replicas start from the model, as at an epoch's start
     * (hog_replicas_load, before the epochs). */
    get_workers(rs, ck);
    if (ck->sections & CKPT_ADAGRAD) {
        hog_ckpt_get_rows(rs->optim.acc, ck->acc, ck->dim, ck->outputs, rs->optim.astride);
        hog_ckpt_get_rows(rs->optim.bias_acc, ck->bias_acc, ck->outputs, 1, 1);
    }
    if (ck->sections & CKPT_NORMALIZED) {
        hog_ckpt_get_rows(rs->optim.xmax, ck->xmax, ck->dim, 1, rs->optim.fstride);
        hog_run_pack_inv(rs);
    }
    if (ck->sections & CKPT_L1)
        hog_ckpt_get_rows(rs->optim.l1s, ck->l1s, ck->dim, 2 * ck->outputs, rs->optim.lstride);
    if (ck->sections & CKPT_AVERAGE) {
        memcpy(rs->avg.sum, ck->avg_sum, 8 * (nw + ck->outputs));
        rs->avg.count = ck->avg_count;
    }
    if (ck->sections & CKPT_BEST)
        memcpy(rs->best.weights, ck->best_w, 4 * (nw + ck->outputs));
    float *best_w = rs->best.weights;
    rs->best = ck->best;
    rs->best.weights = best_w;
    rs->st = ck->st;
    rs->st.epochs = rs->p->epochs;
    rs->st.progress = 0;
    rs->seconds = ck->seconds;
    rs->epochs_run = ck->epochs_run;
    rs->ck.at = ck->at;
    char where[96];
    position_text(rs, &ck->at, where, sizeof(where));
    hog_log(HOG_LOG_INFO, "resuming from %s: the run %s", ck->path, where);
    return 0;
}
