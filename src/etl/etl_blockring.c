/* etl_blockring.c: the blocks of a mapped .hgd read again, in a given order, with O_DIRECT io_uring reads into a ring of buffers, each checked as it lands: an out-of-core epoch without the page cache. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include "etl.h"

/*
 * Why. An epoch over a data set larger than memory reads the whole file.
 * Through the mapping, every byte goes disk -> page cache -> the workers,
 * and every page is then dropped again (hog_dataset_drop): on an 18 GB file
 * a third of the CPU time went to the kernel's page cache, allocating,
 * faulting and reclaiming pages that are used once. Here the blocks are
 * read with O_DIRECT straight into a few buffers of our own.
 *
 * How. hog_block_ring_pass hands the ring a pass's blocks in the order the
 * workers will claim them. An I/O thread keeps every free buffer (a slot)
 * reading the next block of that order. A worker asks for block b
 * (hog_block_ring_get) and waits until its slot holds it; the first to ask
 * checks it (its checksum and hog_block_sound, as the mapping's first read
 * is checked: the bytes on disk may have changed since), on the core that
 * is about to train on it, while its bytes come into that core's caches
 * (checked on the I/O thread, one core checked every block and the workers
 * then read each from memory again: 5 s more CPU on 18 GB). The last
 * worker done with b releases it (hog_block_ring_release), and its slot
 * reads the next block. The workers claim blocks in that same order,
 * and a worker waiting for a block holds none, so the blocks before it are
 * being worked on and their slots come free: with at least one slot the
 * pass always moves on.
 *
 * One lock guards the slots' states; it is taken a few times per block (a
 * block is megabytes of rows), never per row.
 */

/* A slot's block: being read, read (LANDED), being checked by the worker
 * that asked first, checked (READY), or failed. */
enum { SLOT_FREE, SLOT_READING, SLOT_LANDED, SLOT_CHECKING, SLOT_READY, SLOT_FAILED };

#define RING_MOST 256u /* slots at most: reads in flight enough for any disk */

typedef struct ring_slot {
    uint8_t *buf;
    uint32_t block;
    int state;
    size_t skip;    /* where the block starts in buf (its offset less the aligned one) */
    size_t need;    /* the bytes to read: skip + the block's bytes, rounded up to the alignment */
    size_t got;     /* read so far */
    uint64_t off;   /* the aligned file offset of buf[0] */
    hog_block view; /* the block's arrays in buf, once READY */
} ring_slot;

struct hog_block_ring {
    const hog_dataset *ds;
    int fd; /* the data set's file, O_DIRECT */
    size_t align;
    struct io_uring uring;
    unsigned nslots;
    ring_slot *slot;
    uint32_t *at; /* per block: its slot + 1, or 0 */
    uint32_t *order;
    uint32_t norder, next; /* the pass's blocks, and the next one to read */
    unsigned reading;      /* reads in flight */
    pthread_t io;
    int io_started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int stop;
    uint32_t bad; /* the first block that failed, UINT32_MAX: none */
    int bad_rc;   /* and its error */
    char err[512];
};

/* The bytes of block b in the file: [*off, *off + *len). */
static void block_span(const hog_dataset *ds, uint32_t b, uint64_t *off, uint64_t *len)
{
    const hog_block *blk = &ds->blocks[b];
    *off = (uint64_t)((const char *)blk->ptr - (const char *)ds->map);
    *len = hog_block_bytes(blk->rows, blk->nnz, hog_block_layout(blk));
}

/* Queues the rest of slot s's read. Called with the lock held. */
static void queue_read(hog_block_ring *r, unsigned s)
{
    ring_slot *sl = &r->slot[s];
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->uring);
    if (!sqe) { /* nslots entries, a read per slot: only while the last ones wait to be submitted */
        io_uring_submit(&r->uring);
        sqe = io_uring_get_sqe(&r->uring);
    }
    io_uring_prep_read(sqe, r->fd, sl->buf + sl->got, (unsigned)(sl->need - sl->got), sl->off + sl->got);
    io_uring_sqe_set_data64(sqe, s);
    r->reading++;
}

/* Starts reads into every free slot while the order has blocks left.
 * Called with the lock held. */
static void fill_slots(hog_block_ring *r)
{
    for (unsigned s = 0; s < r->nslots && r->next < r->norder && !r->stop; s++) {
        ring_slot *sl = &r->slot[s];
        if (sl->state != SLOT_FREE)
            continue;
        uint32_t b = r->order[r->next++];
        uint64_t off, len;
        block_span(r->ds, b, &off, &len);
        sl->block = b;
        sl->off = off & ~(uint64_t)(r->align - 1);
        sl->skip = (size_t)(off - sl->off);
        sl->need = (sl->skip + (size_t)len + r->align - 1) & ~(r->align - 1);
        sl->got = 0;
        sl->state = SLOT_READING;
        r->at[b] = s + 1;
        queue_read(r, s);
    }
}

/* Block b failed (rc, message err): kept when it is the first of the pass
 * in block order, for hog_block_ring_end. Called with the lock held. */
static void ring_fail(hog_block_ring *r, uint32_t b, int rc, const char *err)
{
    if (r->bad != UINT32_MAX && b >= r->bad)
        return;
    r->bad = b;
    r->bad_rc = rc;
    snprintf(r->err, sizeof(r->err), "%s", err);
}

/* A read of slot s completed with res. Called without the lock; returns 0
 * when the rest is still to read, 2 when the block is whole, 1 when it
 * failed (*rc and err say why). */
static int read_done(hog_block_ring *r, unsigned s, int res, int *rc, char *err, size_t err_len)
{
    ring_slot *sl = &r->slot[s];
    const hog_block *blk = &r->ds->blocks[sl->block];
    const size_t bytes = (size_t)hog_block_bytes(blk->rows, blk->nnz, hog_block_layout(blk));
    if (res < 0) {
        *rc = hog_fail(res, err, err_len, "%s: block %u: read at byte %llu: %s", r->ds->path ? r->ds->path : "data",
                 sl->block, (unsigned long long)(sl->off + sl->got), hog_strerror(res));
        return 1;
    }
    sl->got += (size_t)res;
    if (sl->got < sl->skip + bytes) {
        if (res == 0 || sl->got % r->align) { /* the end of the file, or a short read O_DIRECT cannot go on from */
            *rc = hog_fail(HOG_ETRUNCATED, err, err_len, "%s: block %u: the file ends at byte %llu, within the block",
                     r->ds->path ? r->ds->path : "data", sl->block, (unsigned long long)(sl->off + sl->got));
            return 1;
        }
        return 0;
    }
    hog_block_view(&sl->view, sl->buf + sl->skip, blk->rows, blk->nnz, hog_block_layout(blk), blk->sum);
    return 2;
}

static void *io_main(void *arg)
{
    hog_block_ring *r = arg;
    char err[sizeof(r->err)];
    pthread_mutex_lock(&r->lock);
    for (;;) {
        fill_slots(r);
        if (r->reading == 0) {
            if (r->stop)
                break;
            pthread_cond_wait(&r->cond, &r->lock);
            continue;
        }
        pthread_mutex_unlock(&r->lock);
        io_uring_submit(&r->uring);
        struct io_uring_cqe *cqe;
        int rc = io_uring_wait_cqe(&r->uring, &cqe);
        pthread_mutex_lock(&r->lock);
        if (rc == -EINTR)
            continue;
        if (rc < 0) { /* the ring itself failed: every read in flight is lost */
            snprintf(err, sizeof(err), "%s: waiting for a read: %s", r->ds->path ? r->ds->path : "data",
                     hog_strerror(rc));
            for (unsigned s = 0; s < r->nslots; s++)
                if (r->slot[s].state == SLOT_READING) {
                    r->slot[s].state = SLOT_FAILED;
                    ring_fail(r, r->slot[s].block, rc, err);
                }
            r->reading = 0;
            r->stop = 1;
            pthread_cond_broadcast(&r->cond);
            break;
        }
        unsigned s = (unsigned)io_uring_cqe_get_data64(cqe);
        int res = cqe->res;
        io_uring_cqe_seen(&r->uring, cqe);
        r->reading--;
        pthread_mutex_unlock(&r->lock);
        err[0] = '\0';
        int why = 0, done = read_done(r, s, res, &why, err, sizeof(err));
        pthread_mutex_lock(&r->lock);
        if (!done) {
            queue_read(r, s);
            continue;
        }
        ring_slot *sl = &r->slot[s];
        sl->state = done == 2 ? SLOT_LANDED : SLOT_FAILED;
        if (done == 1)
            ring_fail(r, sl->block, why, err);
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

int hog_block_ring_open(const hog_dataset *ds, unsigned slots, size_t bytes, hog_block_ring **out)
{
    *out = NULL;
    if (!ds->map || ds->fd < 0 || ds->info.blocks == 0 || slots == 0)
        return -EOPNOTSUPP;
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", ds->fd);
    int fd = open(self, O_RDONLY | O_CLOEXEC | O_DIRECT); /* the same file, whatever its name is now */
    if (fd < 0)
        return errno == EINVAL ? -EOPNOTSUPP : -errno;
    size_t align = hog_dio_alignment(fd);
    if (align == 0 || align > HOG_HGD_ALIGN) {
        close(fd);
        return -EOPNOTSUPP;
    }
    uint64_t most = 0;
    for (uint32_t b = 0; b < ds->info.blocks; b++) {
        uint64_t off, len;
        block_span(ds, b, &off, &len);
        most = HOG_MAX(most, (off & (align - 1)) + len);
    }
    const size_t slot_bytes = (size_t)((most + align - 1) & ~(uint64_t)(align - 1));
    /* Small blocks read one at a time leave the disk idle between them:
     * as many slots as the bytes allow, so that reads keep it busy. */
    slots = (unsigned)HOG_MAX((size_t)slots, HOG_MIN(bytes / slot_bytes, (size_t)RING_MOST));
    slots = HOG_MIN(slots, ds->info.blocks);
    hog_block_ring *r = hog_calloc(1, sizeof(*r));
    if (!r) {
        close(fd);
        return -ENOMEM;
    }
    r->ds = ds;
    r->fd = fd;
    r->align = align;
    r->nslots = slots;
    r->bad = UINT32_MAX;
    r->slot = hog_calloc(slots, sizeof(ring_slot));
    r->at = hog_calloc(ds->info.blocks, sizeof(uint32_t));
    r->order = hog_malloc((size_t)ds->info.blocks * sizeof(uint32_t));
    int rc = r->slot && r->at && r->order ? 0 : -ENOMEM;
    for (unsigned s = 0; s < slots && rc == 0; s++)
        if (!(r->slot[s].buf = hog_aligned_alloc(HOG_HGD_ALIGN, slot_bytes)))
            rc = -ENOMEM;
    if (rc == 0)
        rc = io_uring_queue_init(slots, &r->uring, 0);
    if (rc < 0) {
        for (unsigned s = 0; r->slot && s < slots; s++)
            hog_free(r->slot[s].buf);
        hog_free(r->slot);
        hog_free(r->at);
        hog_free(r->order);
        hog_free(r);
        close(fd);
        return rc;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    *out = r;
    return 0;
}

/* Starts a pass over the first n blocks of r->order (set by the caller,
 * with the lock held), which unlocks. */
static int pass_start(hog_block_ring *r, uint32_t n)
{
    r->norder = n;
    r->next = 0;
    r->stop = 0;
    r->bad = UINT32_MAX;
    r->bad_rc = 0;
    r->err[0] = '\0';
    pthread_cond_broadcast(&r->cond); /* the I/O thread waits for work */
    pthread_mutex_unlock(&r->lock);
    if (r->io_started)
        return 0;
    int rc = pthread_create(&r->io, NULL, io_main, r);
    if (rc != 0)
        return -rc;
    r->io_started = 1;
    return 0;
}

int hog_block_ring_pass(hog_block_ring *r, const uint32_t *order, uint32_t n)
{
    pthread_mutex_lock(&r->lock);
    n = HOG_MIN(n, r->ds->info.blocks);
    memcpy(r->order, order, (size_t)n * sizeof(uint32_t));
    return pass_start(r, n);
}

int hog_block_ring_pass_in_order(hog_block_ring *r)
{
    pthread_mutex_lock(&r->lock);
    const uint32_t n = r->ds->info.blocks;
    for (uint32_t b = 0; b < n; b++)
        r->order[b] = b;
    return pass_start(r, n);
}

const hog_block *hog_block_ring_get(hog_block_ring *r, uint32_t b)
{
    const hog_block *v = NULL;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        uint32_t s = r->at[b];
        ring_slot *sl = s ? &r->slot[s - 1] : NULL;
        if (sl && sl->state == SLOT_READY) {
            v = &sl->view;
            break;
        }
        if (sl && sl->state == SLOT_LANDED) { /* the first to ask checks it, without the lock */
            sl->state = SLOT_CHECKING;
            pthread_mutex_unlock(&r->lock);
            char err[sizeof(r->err)] = "";
            int rc = hog_dataset_check_view(r->ds, b, &sl->view, err, sizeof(err));
            pthread_mutex_lock(&r->lock);
            sl->state = rc < 0 ? SLOT_FAILED : SLOT_READY;
            if (rc < 0)
                ring_fail(r, b, rc, err);
            pthread_cond_broadcast(&r->cond);
            continue;
        }
        if ((sl && sl->state == SLOT_FAILED) || r->stop)
            break;
        pthread_cond_wait(&r->cond, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return v;
}

void hog_block_ring_release(hog_block_ring *r, uint32_t b)
{
    pthread_mutex_lock(&r->lock);
    uint32_t s = r->at[b];
    if (s && r->slot[s - 1].state != SLOT_READING) {
        r->slot[s - 1].state = SLOT_FREE;
        r->at[b] = 0;
        pthread_cond_broadcast(&r->cond);
    }
    pthread_mutex_unlock(&r->lock);
}

int hog_block_ring_end(hog_block_ring *r, char *err, size_t err_len)
{
    pthread_mutex_lock(&r->lock);
    r->norder = r->next; /* no more reads; the ones in flight complete */
    while (r->reading)
        pthread_cond_wait(&r->cond, &r->lock);
    for (unsigned s = 0; s < r->nslots; s++) {
        if (r->slot[s].state != SLOT_FREE)
            r->at[r->slot[s].block] = 0;
        r->slot[s].state = SLOT_FREE;
    }
    int rc = 0;
    if (r->bad != UINT32_MAX)
        rc = hog_fail(r->bad_rc < 0 ? r->bad_rc : HOG_ECORRUPT, err, err_len, "%s",
                      r->err[0] ? r->err : "a block failed its check as it was read");
    pthread_mutex_unlock(&r->lock);
    return rc;
}

void hog_block_ring_close(hog_block_ring *r)
{
    if (!r)
        return;
    if (r->io_started) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->io, NULL);
    }
    io_uring_queue_exit(&r->uring);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    for (unsigned s = 0; s < r->nslots; s++)
        hog_free(r->slot[s].buf);
    hog_free(r->slot);
    hog_free(r->at);
    hog_free(r->order);
    close(r->fd);
    hog_free(r);
}

int hog_block_ring_file_order(const hog_dataset *ds, unsigned slots, size_t bytes, hog_block_ring **out)
{
    *out = NULL;
    if (ds->info.blocks == 0)
        return 0;
    hog_block_ring *r;
    int rc = hog_block_ring_open(ds, slots, bytes, &r);
    if (rc == -EOPNOTSUPP)
        return 0;
    if (rc == 0 && (rc = hog_block_ring_pass_in_order(r)) < 0)
        hog_block_ring_close(r);
    if (rc == 0)
        *out = r;
    return rc;
}
