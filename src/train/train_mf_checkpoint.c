/* train_mf_checkpoint.c: a matrix factorisation's checkpoint file: written at a pause of the run, read back and checked, and resumed from. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "train_mf.h"

/*
 * MF checkpoint file, version 2. Little-endian.
 *
 *   offset  bytes            field
 *   0       8                magic "HOGMFCKP"
 *   8       4                version (2; 1 is read too: no early stopping)
 *   12      4                meta_bytes
 *   16      4                users
 *   20      4                items
 *   24      4                rank
 *   28      4                workers (the run's threads)
 *   32      meta_bytes       metadata: "key value\n" lines (train_meta.c): the parameters
 *                            (params.*), the ratings (data.*), the run's shape (run.*), its
 *                            position and statistics (at.*)
 *   ...     4 * users        f32 user biases
 *   ...     4 * items        f32 item biases
 *   ...     4 * users * rank f32 user factors, row by row
 *   ...     4 * items * rank f32 item factors
 *   ...     4 * users        params.step_schedule adagrad (3) only: f32 user rows' AdaGrad sums
 *   ...     4 * items        and the item rows' (absent from other checkpoints)
 *   ...     4 * (users + items) * (1 + rank)
 *                            params.early_stop above 0 only (version 2): the best epoch's
 *                            model (at.best_epoch; zeros before the first), as above: f32
 *                            user biases, item biases, user factors, item factors
 *   ...     16 * workers     per worker: f64 squared errors of the epoch so far, u64 updates
 *   ...     4                CRC-32 of every byte before it
 */
#define MF_CKPT_VERSION 2u
#define MF_CKPT_HEAD 32u
#define MF_CKPT_MAX_META (1u << 20)
#define MF_CKPT_WORKER_BYTES 16u
#define MF_CKPT_MAX_WORKERS 65536u
#define MF_CKPT_FIELDS 40
#define PARAMS_KEY "params."

/* ===================================================================== *
 *  The control
 * ===================================================================== */
int hog_mf_control_create(hog_mf_control **out)
{
    hog_mf_control *c = hog_calloc(1, sizeof(*c));
    *out = c;
    if (!c)
        return -ENOMEM;
    atomic_init(&c->interrupted, 0);
    atomic_init(&c->training, 0);
    atomic_init(&c->snap_asked, 0);
    c->now = hog_now;
    /* Without one (no eventfd here), an interrupt ends a run in one pass
     * after its next batch, which a quiet pipe may hold back. */
    c->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return 0;
}

void hog_mf_control_free(hog_mf_control *c)
{
    if (!c)
        return;
    hog_free(c->ckpt_path);
    if (c->stop_fd >= 0)
        close(c->stop_fd);
    hog_free(c);
}

int hog_mf_control_set_checkpoint(hog_mf_control *c, const char *path, double every_seconds, int resume)
{
    return hog_ckpt_settings_set(&c->ckpt_path, &c->ckpt_every, &c->resume, path, every_seconds, resume);
}

int hog_mf_interrupt(hog_mf_control *c)
{
    atomic_store_explicit(&c->interrupted, 1, memory_order_relaxed);
    hog_stop_fd_raise(c->stop_fd);
    return atomic_load_explicit(&c->training, memory_order_relaxed);
}

int hog_mf_control_set_snapshots(hog_mf_control *c, uint64_t every_ratings, double every_seconds,
                                 hog_mf_snapshot_fn write, void *ctx)
{
    if (!hog_snapshot_settings_ok(every_ratings, every_seconds, write != NULL))
        return HOG_EPARAM;
    c->snap_rows = every_ratings;
    c->snap_seconds = every_seconds;
    c->snap_write = write;
    c->snap_ctx = ctx;
    return 0;
}

void hog_mf_snapshot(hog_mf_control *c)
{
    atomic_store_explicit(&c->snap_asked, 1, memory_order_relaxed);
}

/* ===================================================================== *
 *  Metadata
 * ===================================================================== */
/* The metadata of a checkpoint, in the order it is written; the keys
 * params.NAME are hog_mf_params.NAME, which a resumed run must share. */
static size_t mf_ckpt_fields(mf_checkpoint *c, hog_meta_field *f)
{
    hog_mf_params *p = &c->p;
    size_t n = 0;
    f[n++] = (hog_meta_field){"hogtrain", HOG_META_NOTE, NULL, hog_version_string(), NULL};
    f[n++] = HOG_META_NUM(PARAMS_KEY "rank", &p->rank);
    f[n++] = HOG_META_NUM(PARAMS_KEY "epochs", &p->epochs);
    f[n++] = HOG_META_NUM(PARAMS_KEY "step", &p->step);
    f[n++] = HOG_META_NUM(PARAMS_KEY "decay", &p->decay);
    f[n++] = HOG_META_NUM(PARAMS_KEY "l2", &p->l2);
    f[n++] = HOG_META_NUM(PARAMS_KEY "l2_bias", &p->l2_bias);
    f[n++] = HOG_META_NUM(PARAMS_KEY "init", &p->init);
    f[n++] = HOG_META_NUM(PARAMS_KEY "holdout", &p->holdout);
    f[n++] = HOG_META_NUM(PARAMS_KEY "seed", &p->seed);
    f[n++] = HOG_META_NUM(PARAMS_KEY "clamp", &p->clamp);
    /* Absent from a checkpoint older than the grid: 0, the segments it ran. */
    f[n++] = HOG_META_NUM(PARAMS_KEY "schedule", &p->schedule);
    f[n++] = HOG_META_NUM(PARAMS_KEY "grid", &p->grid);
    /* Absent from a checkpoint older than AdaGrad: 0, the decay it ran. */
    f[n++] = HOG_META_NUM(PARAMS_KEY "step_schedule", &p->step_schedule);
    /* Absent from version 1: 0, no early stopping. */
    f[n++] = HOG_META_NUM(PARAMS_KEY "early_stop", &p->early_stop);
    f[n++] = (hog_meta_field){"data.fingerprint", HOG_META_HEX64, &c->fingerprint, NULL, NULL};
    f[n++] = HOG_META_NUM("data.ratings", &c->ratings);
    f[n++] = HOG_META_NUM("data.users", &c->users);
    f[n++] = HOG_META_NUM("data.items", &c->items);
    f[n++] = (hog_meta_field){"data.test_fingerprint", HOG_META_HEX64, &c->test_fingerprint, NULL, NULL};
    f[n++] = HOG_META_NUM("run.train_ratings", &c->train_ratings);
    f[n++] = HOG_META_NUM("run.segments", &c->segments); /* or the grid's blocks */
    f[n++] = HOG_META_NUM("at.epoch", &c->at.epoch);
    f[n++] = HOG_META_NUM("at.segment", &c->at.segment);
    f[n++] = HOG_META_NUM("at.finished", &c->at.finished);
    f[n++] = HOG_META_NUM("at.updates0", &c->at.updates0);
    f[n++] = HOG_META_NUM("at.seconds", &c->at.seconds);
    f[n++] = HOG_META_NUM("at.train_rmse", &c->at.train_rmse);
    f[n++] = HOG_META_NUM("at.test_rmse", &c->at.test_rmse);
    f[n++] = HOG_META_NUM("at.best_rmse", &c->at.best_rmse);
    f[n++] = HOG_META_NUM("at.best_epoch", &c->at.best_epoch);
    f[n++] = HOG_META_NUM("at.since", &c->at.since);
    return n;
}

/* ===================================================================== *
 *  Writing
 * ===================================================================== */
int hog_mf_checkpoint_write(const char *path, const mf_run_shape *s, const hog_mf_model *m, const mf_worker *ws,
                            unsigned nth, const mf_position *at)
{
    mf_checkpoint c;
    memset(&c, 0, sizeof(c));
    c.p = *s->p;
    c.fingerprint = s->train->info.fingerprint;
    c.ratings = s->train->info.ratings;
    c.test_fingerprint = s->test ? s->test->info.fingerprint : 0;
    c.users = m->info.users;
    c.items = m->info.items;
    c.train_ratings = s->train_ratings;
    c.segments = s->segments;
    c.at = *at;
    hog_meta_field fields[MF_CKPT_FIELDS];
    size_t nfields = mf_ckpt_fields(&c, fields);
    char *meta;
    size_t meta_len;
    if (hog_meta_write(fields, nfields, &meta, &meta_len) < 0)
        return -ENOMEM;
    unsigned char head[MF_CKPT_HEAD] = {0};
    memcpy(head, MF_CKPT_MAGIC, 8);
    hog_put_u32(head + 8, MF_CKPT_VERSION);
    hog_put_u32(head + 12, (uint32_t)meta_len);
    hog_put_u32(head + 16, m->info.users);
    hog_put_u32(head + 20, m->info.items);
    hog_put_u32(head + 24, m->info.rank);
    hog_put_u32(head + 28, nth);
    hog_atomic_file f;
    int rc = hog_atomic_open_file(&f, path);
    if (rc < 0) {
        hog_free(meta);
        return rc;
    }
    uint32_t crc = 0, k = m->info.rank;
    rc = hog_atomic_write_crc(&f, &crc, head, sizeof(head));
    if (rc == 0)
        rc = hog_atomic_write_crc(&f, &crc, meta, meta_len);
    if (rc == 0)
        rc = hog_ckpt_put_rows(&f, &crc, m->bu, m->info.users, 1, 1);
    if (rc == 0)
        rc = hog_ckpt_put_rows(&f, &crc, m->bi, m->info.items, 1, 1);
    if (rc == 0)
        rc = hog_ckpt_put_rows(&f, &crc, m->p, m->info.users, k, m->stride);
    if (rc == 0)
        rc = hog_ckpt_put_rows(&f, &crc, m->q, m->info.items, k, m->stride);
    if (rc == 0 && m->gp)
        rc = hog_ckpt_put_rows(&f, &crc, m->gp, m->info.users, 1, 1);
    if (rc == 0 && m->gq)
        rc = hog_ckpt_put_rows(&f, &crc, m->gq, m->info.items, 1, 1);
    if (m->best) { /* params.early_stop: the best epoch's model */
        if (rc == 0)
            rc = hog_ckpt_put_rows(&f, &crc, m->best->bu, m->info.users, 1, 1);
        if (rc == 0)
            rc = hog_ckpt_put_rows(&f, &crc, m->best->bi, m->info.items, 1, 1);
        if (rc == 0)
            rc = hog_ckpt_put_rows(&f, &crc, m->best->p, m->info.users, k, m->best->stride);
        if (rc == 0)
            rc = hog_ckpt_put_rows(&f, &crc, m->best->q, m->info.items, k, m->best->stride);
    }
    for (unsigned i = 0; i < nth && rc == 0; i++) {
        unsigned char rec[MF_CKPT_WORKER_BYTES];
        memcpy(rec, &ws[i].se, 8);
        hog_put_u64(rec + 8, ws[i].updates);
        rc = hog_atomic_write_crc(&f, &crc, rec, sizeof(rec));
    }
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
 *  Reading
 * ===================================================================== */
void hog_mf_checkpoint_free(mf_checkpoint *ck)
{
    hog_free(ck->buf);
    hog_free(ck->path);
    memset(ck, 0, sizeof(*ck));
}

/* Checks the header and the checksum of the file in ck->buf and reads its
 * metadata. */
static int mf_ckpt_parse(mf_checkpoint *ck, char *err, size_t err_len)
{
    const unsigned char *buf = ck->buf;
    const size_t len = ck->len;
    const char *path = ck->path;
    if (len < 8 || memcmp(buf, MF_CKPT_MAGIC, 8) != 0)
        return hog_fail(HOG_EMAGIC, err, err_len,
                        "%s: not a hogtrain matrix factorisation checkpoint (no " MF_CKPT_MAGIC " magic)", path);
    if (len < MF_CKPT_HEAD + 4)
        return hog_fail(HOG_ETRUNCATED, err, err_len, "%s: truncated: %zu bytes, the header alone is %u", path, len,
                        MF_CKPT_HEAD + 4);
    uint32_t version = hog_get_u32(buf + 8), meta_len = hog_get_u32(buf + 12);
    if (version != 1 && version != MF_CKPT_VERSION)
        return hog_fail(HOG_EVERSION, err, err_len, "%s: checkpoint version %u, this build reads versions 1 and %u",
                        path, version, MF_CKPT_VERSION);
    uint64_t users = hog_get_u32(buf + 16), items = hog_get_u32(buf + 20), rank = hog_get_u32(buf + 24);
    ck->workers = hog_get_u32(buf + 28);
    if (meta_len > MF_CKPT_MAX_META || rank < 1 || rank > HOG_MF_MAX_RANK || ck->workers == 0 ||
        ck->workers > MF_CKPT_MAX_WORKERS)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: implausible sizes (meta %u bytes, rank %llu, %u workers)",
                        path, meta_len, (unsigned long long)rank, ck->workers);
    /* With AdaGrad's sums or without, and (version 2) with the best
     * epoch's model or without, as the metadata says (checked once the
     * checksum has vouched for it); a length that fits none is named
     * first: short of the longest, truncated. */
    const uint64_t model = 4 * (users + items) * (1 + rank);
    uint64_t want = MF_CKPT_HEAD + (uint64_t)meta_len + model + (uint64_t)MF_CKPT_WORKER_BYTES * ck->workers + 4;
    const uint64_t sums = 4 * (users + items), best = version >= 2 ? model : 0;
    const int fits = len == want || len == want + sums || len == want + best || len == want + sums + best;
    if (!fits)
        return hog_fail(len < want + sums + best ? HOG_ETRUNCATED : HOG_ECORRUPT, err, err_len,
                        "%s: %s: the header implies %llu bytes, %llu more with AdaGrad's sums%s; the file has %zu",
                        path, len < want + sums + best ? "truncated" : "trailing bytes", (unsigned long long)want,
                        (unsigned long long)sums, best ? " and as many again as the model with early stopping" : "",
                        len);
    if (hog_crc32(0, buf, len - 4) != hog_get_u32(buf + len - 4))
        return hog_fail(HOG_ECHECKSUM, err, err_len, "%s: checksum mismatch: the checkpoint is corrupted", path);
    /* Every parameter compared is in the metadata: ck->p starts zeroed. */
    hog_meta_field fields[MF_CKPT_FIELDS];
    size_t nfields = mf_ckpt_fields(ck, fields);
    char why[256];
    if (hog_meta_read((char *)ck->buf + MF_CKPT_HEAD, meta_len, fields, nfields, why, sizeof(why)) < 0)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: unreadable metadata: %s", path, why);
    const int adagrad = ck->p.step_schedule == HOG_SCHEDULE_ADAGRAD, stopping = ck->p.early_stop > 0;
    if (ck->users != users || ck->items != items || ck->p.rank != rank ||
        len != want + (adagrad ? sums : 0) + (stopping ? best : 0) || (stopping && !best))
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: inconsistent checkpoint: its header and metadata differ",
                        path);
    ck->bu = buf + MF_CKPT_HEAD + meta_len;
    ck->bi = ck->bu + 4 * users;
    ck->rows_p = ck->bi + 4 * items;
    ck->rows_q = ck->rows_p + 4 * users * rank;
    ck->sums_p = adagrad ? ck->rows_q + 4 * items * rank : NULL;
    ck->sums_q = adagrad ? ck->sums_p + 4 * users : NULL;
    const unsigned char *after = ck->rows_q + 4 * items * rank + (adagrad ? sums : 0);
    if (stopping) {
        ck->best_bu = after;
        ck->best_bi = ck->best_bu + 4 * users;
        ck->best_p = ck->best_bi + 4 * items;
        ck->best_q = ck->best_p + 4 * users * rank;
        after += model;
    }
    ck->workers_at = after;
    return 0;
}

/* HOG_EPARAM, naming the first parameter or property of the ratings that
 * differs between ck and run s. */
static int mf_ckpt_compare(const mf_checkpoint *ck, const mf_run_shape *s, char *err, size_t err_len)
{
    mf_checkpoint theirs = *ck, mine = *ck;
    mine.p = *s->p;
    hog_meta_field a[MF_CKPT_FIELDS], b[MF_CKPT_FIELDS];
    size_t n = mf_ckpt_fields(&theirs, a);
    mf_ckpt_fields(&mine, b);
    int rc = hog_meta_differ(a, b, n, PARAMS_KEY, "hog_mf_params", ck->path, err, err_len);
    if (rc < 0)
        return rc;
    const hog_ratings_info *d = &s->train->info;
    const struct { const char *name; uint64_t ck, run; } v[] = {
        {"fingerprint", ck->fingerprint, d->fingerprint}, {"ratings", ck->ratings, d->ratings},
        {"users", ck->users, d->users}, {"items", ck->items, d->items},
    };
    for (size_t i = 0; i < HOG_ARRAY_LEN(v); i++)
        if (v[i].ck != v[i].run)
            return hog_fail(HOG_EPARAM, err, err_len,
                            i == 0 ? "%s: the checkpoint was made on other ratings: its hog_ratings_info.%s is "
                                     "%016llx, this run's ratings have %016llx"
                                   : "%s: the checkpoint was made on other ratings: its hog_ratings_info.%s is "
                                     "%llu, this run's ratings have %llu",
                            ck->path, v[i].name, (unsigned long long)v[i].ck, (unsigned long long)v[i].run);
    uint64_t test_fp = s->test ? s->test->info.fingerprint : 0;
    if (ck->test_fingerprint != test_fp)
        return hog_fail(HOG_EPARAM, err, err_len,
                        "%s: the checkpoint was made with %s test set, this run has %s: resume with the same test set",
                        ck->path, ck->test_fingerprint ? "a" : "no", !s->test ? "none" : ck->test_fingerprint ? "another"
                                                                                                          : "one");
    return 0;
}

int hog_mf_checkpoint_read(const char *path, const mf_run_shape *s, mf_checkpoint *ck, char *err, size_t err_len)
{
    memset(ck, 0, sizeof(*ck));
    if (!(ck->path = hog_strdup(path)))
        return hog_fail(-ENOMEM, err, err_len, "out of memory");
    int rc = hog_read_file(path, &ck->buf, &ck->len);
    if (rc == -ENOENT)
        return hog_fail(rc, err, err_len, "%s: no checkpoint to resume from: %s", path, hog_strerror(rc));
    if (rc < 0)
        return hog_fail(rc, err, err_len, "%s: cannot read the checkpoint: %s", path, hog_strerror(rc));
    if ((rc = mf_ckpt_parse(ck, err, err_len)) < 0 || (rc = mf_ckpt_compare(ck, s, err, err_len)) < 0)
        return rc;
    const mf_position *at = &ck->at;
    const char *bad = at->epoch > ck->p.epochs                 ? "at.epoch"
                      : at->finished != 0 && at->finished != 1 ? "at.finished"
                      : at->best_epoch > at->epoch || at->since > at->epoch ? "at.best_epoch"
                      : at->segment && (at->segment >= ck->segments || at->epoch >= ck->p.epochs || at->finished)
                          ? "at.segment"
                          : NULL;
    if (bad)
        return hog_fail(HOG_ECORRUPT, err, err_len, "%s: inconsistent checkpoint: %s", path, bad);
    return 0;
}

/* ===================================================================== *
 *  Resuming
 * ===================================================================== */
int hog_mf_checkpoint_apply(const mf_checkpoint *ck, const mf_run_shape *s, hog_mf_model *m, mf_worker *ws,
                            unsigned nth, mf_position *at, char *err, size_t err_len)
{
    if (ck->train_ratings != s->train_ratings || ck->segments != s->segments)
        return hog_fail(HOG_ECORRUPT, err, err_len,
                        "%s: the checkpoint does not fit this run: %llu training ratings in %u segments, this run "
                        "has %llu in %u", ck->path, (unsigned long long)ck->train_ratings, ck->segments,
                        (unsigned long long)s->train_ratings, s->segments);
    const uint32_t k = m->info.rank;
    hog_ckpt_get_rows(m->bu, ck->bu, m->info.users, 1, 1);
    hog_ckpt_get_rows(m->bi, ck->bi, m->info.items, 1, 1);
    hog_ckpt_get_rows(m->p, ck->rows_p, m->info.users, k, m->stride);
    hog_ckpt_get_rows(m->q, ck->rows_q, m->info.items, k, m->stride);
    if (m->gp && ck->sums_p) { /* the run's parameters and the checkpoint's agree: both or neither */
        hog_ckpt_get_rows(m->gp, ck->sums_p, m->info.users, 1, 1);
        hog_ckpt_get_rows(m->gq, ck->sums_q, m->info.items, 1, 1);
    }
    if (m->best && ck->best_bu) { /* both or neither, as the sums */
        hog_ckpt_get_rows(m->best->bu, ck->best_bu, m->info.users, 1, 1);
        hog_ckpt_get_rows(m->best->bi, ck->best_bi, m->info.items, 1, 1);
        hog_ckpt_get_rows(m->best->p, ck->best_p, m->info.users, k, m->best->stride);
        hog_ckpt_get_rows(m->best->q, ck->best_q, m->info.items, k, m->best->stride);
    }
    /* On another number of workers, worker 0 takes the totals: only their
     * sums are read. */
    for (uint32_t i = 0; i < ck->workers; i++) {
        const unsigned char *rec = ck->workers_at + (size_t)MF_CKPT_WORKER_BYTES * i;
        double se;
        memcpy(&se, rec, 8);
        mf_worker *w = &ws[ck->workers == nth ? i : 0];
        w->se += se;
        w->updates += hog_get_u64(rec + 8);
    }
    if (ck->workers != nth)
        hog_log(HOG_LOG_INFO, "resuming %s on %u workers, made on %u: their totals merged", ck->path, nth,
                ck->workers);
    *at = ck->at;
    return 0;
}
