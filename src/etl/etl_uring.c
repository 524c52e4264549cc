/* etl_uring.c: reads a file front to back in large chunks with io_uring (O_DIRECT where allowed, pread as a fallback), decompressing gzip and zstd on the way. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <liburing.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "etl.h"

/*
 * Design.
 *
 * The reader owns `depth` buffers of `chunk` bytes, allocated once and reused.
 * Each buffer (a slot) carries one chunk of the file: the chunks are numbered
 * in file order (seq) as reads are queued, so every slot in flight or
 * completed holds a seq between `deliver_seq` (the next one handed out) and
 * `next_seq`, and handing them out by seq gives strict file order however the
 * reads complete.
 *
 * Why io_uring and a depth: one synchronous read at a time leaves an NVMe
 * drive mostly idle (its queue is one deep) and the parser waiting on every
 * chunk; with `depth` reads in flight the drive streams while the caller
 * works on the chunk it holds. A chunk the caller holds is not in flight, so
 * depth is also the most chunks a caller may hold.
 *
 * Why O_DIRECT: a training set is scanned once per conversion and is often
 * larger than the page cache; buffered reads would copy every byte twice
 * (disk to cache, cache to us) and evict the working set of the rest of the
 * machine. O_DIRECT DMAs into our buffers. It needs buffers, offsets and
 * lengths aligned to what the file system asks (statx STATX_DIOALIGN, else
 * 4096), and some file systems refuse it: then the same ring does buffered
 * reads. Where io_uring itself is missing (old kernel, seccomp, disabled by
 * sysctl) the same slots are filled with plain pread, one at a time, when the
 * caller asks for them.
 *
 * A pipe, a socket or a terminal (standard input, say) has no offsets and
 * no size: it is a stream, read with plain read() into the same slots, one
 * chunk when the caller asks for it, each filled to the chunk size or the
 * end of the stream. The writer on the other end works meanwhile; the
 * size is known only at the end (hog_reader_file_bytes stays 0). An eager
 * reader (HOG_READER_EAGER) hands a stream's chunk over as soon as the
 * stream has nothing more ready (poll), however short: a caller that
 * answers each row (predict on a pipe) must not wait for a chunk to fill
 * while the writer waits for its answer. One case waits a little: a read
 * that emptied a full pipe found its writer blocked for room, and that
 * writer refills the pipe at once, but not before the poll that follows
 * the read. Handing over a pipe's worth (64 KiB) at a time made 60 times
 * as many pieces for the parsers and nearly 3 times the context switches
 * (`cat FILE |`, where the writer outpaces them), so after such a read the
 * reader waits up to FULL_PIPE_WAIT_MS for more; a row written alone
 * never fills the pipe and is handed over at once.
 *
 * A stop fd (hog_reader_set_stop) ends a read early, as if the input had
 * ended: the owner makes it readable (from a signal handler, say) and the
 * reader watches it, never reading from it. A stream's read() may wait
 * forever on a quiet writer, so with a stop fd every read() of a stream
 * waits in a poll() on both descriptors instead, and once the stop fd is
 * readable the chunk being filled takes only what the stream already has
 * ready (no more waiting) and is the last. A file's reads always complete,
 * so a file (or the decompressed bytes of any input) checks the stop fd
 * with a zero-timeout poll before each chunk is handed out; chunks read
 * ahead are dropped. Without a stop fd none of these calls is made. The
 * first bytes of a stream (which tell a compressed one) are read by the
 * first hog_reader_next rather than by the open, so that this first read
 * can be stopped too.
 *
 * Compressed files (gzip or zstd magic in the first bytes) go through the
 * same raw reads; a second set of `depth` buffers receives the decompressed
 * bytes, filled in the caller's thread by hog_reader_next while the next
 * compressed chunks are already in flight.
 *
 * Threads: hog_reader_open, _next and _close belong to one thread at a time.
 * hog_reader_release may be called from any thread (parser workers release
 * the chunks they were given): it only sets an atomic flag that the next call
 * to hog_reader_next reads, and every other field is touched by the reading
 * thread alone.
 */

#define READER_DEFAULT_CHUNK (4u << 20)
#define READER_DEFAULT_DEPTH 4u
#define READER_MAX_CHUNK (1u << 30) /* below the kernel's per-read limit (0x7ffff000) */
#define READER_MAX_DEPTH 1024u
#define READER_PAGE 4096u
#define FULL_PIPE_WAIT_MS 1 /* eager: how long a read that emptied a full pipe waits for its writer */

enum slot_state {
    SLOT_FREE = 0, /* no chunk assigned */
    SLOT_QUEUED,   /* chunk assigned, pread mode: read when the caller asks for it */
    SLOT_INFLIGHT, /* chunk assigned, a read prepared or submitted on the ring */
    SLOT_DONE,     /* read complete (or failed: err) */
    SLOT_HELD,     /* handed out, not yet recycled */
};

typedef struct read_slot {
    char *buf;
    uint64_t seq;
    uint64_t off;  /* file offset of buf[0] */
    size_t want;   /* bytes of the file this chunk covers */
    size_t got;    /* bytes read so far (with O_DIRECT, always aligned until done) */
    int err;       /* -errno of a failed read */
    bool shrank;   /* err: the file ended before the size it had at open */
    int state;
    atomic_int released; /* set by hog_reader_release, any thread */
} read_slot;

typedef struct out_buf {
    char *buf;
    int held;
    atomic_int released;
} out_buf;

enum codec { CODEC_NONE = 0, CODEC_GZIP, CODEC_ZSTD };

struct hog_reader {
    int fd;
    char *path;
    char *err;          /* the caller's detail buffer from open (may be NULL) */
    size_t err_len;
    uint64_t file_bytes;
    size_t chunk;
    size_t align;       /* O_DIRECT offset and length alignment */
    unsigned depth;
    bool direct;
    bool stream;        /* a pipe, socket or terminal: read in order, size unknown */
    bool eager;         /* HOG_READER_EAGER: a stream's chunk ends where nothing more is ready */
    size_t pipe_size;   /* a pipe's capacity (F_GETPIPE_SZ), or 0: a read that gets it emptied a full pipe */
    bool stream_end;    /* the stream's read returned 0 */
    bool started;       /* the first chunk was read and the codec told (a stream's by the first next) */
    int stop_fd;        /* readable: stop the read (hog_reader_set_stop), or -1 */
    bool stopped;       /* the read ended because stop_fd became readable */
    bool use_ring;
    bool fixed;         /* buffers registered with the ring: read_fixed skips per-read page pinning */
    struct io_uring ring;
    unsigned submitted;   /* reads the kernel owns: their buffers must outlive them */

    read_slot *slots;
    uint64_t next_seq, deliver_seq;
    uint64_t next_off; /* file offset of the next chunk to queue */
    uint64_t position; /* bytes of the file behind the chunks handed out so far */
    int rc;            /* sticky error: once a call failed, every later one does */

    /* decompression */
    enum codec codec;
    out_buf *outs;
    read_slot *in_slot;  /* raw chunk being decompressed, or NULL */
    size_t in_pos;
    bool in_eof;         /* every raw chunk consumed */
    bool out_eof;        /* every decompressed byte handed out */
    z_stream zs;
    bool zs_init;
    bool member_end;     /* gzip: the last inflate call ended a member */
    ZSTD_DCtx *zd;
    size_t zd_hint;      /* last ZSTD_decompressStream result: 0 at a frame end */
    uint64_t zd_in_total;
};

/* ===================================================================== *
 *  Small helpers
 * ===================================================================== */
static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

/* Where the raw input ends: a file's size, or how much of a stream has
 * been read (all of it, once it ended). */
static uint64_t input_end(const hog_reader *r)
{
    return r->stream ? r->next_off : r->file_bytes;
}

static int reader_fail(hog_reader *r, int rc, const char *what, uint64_t off)
{
    r->rc = rc;
    return hog_fail(rc, r->err, r->err_len, "%s: %s at byte offset %llu: %s", r->path, what,
                    (unsigned long long)off, hog_strerror(rc));
}

/* Alignment O_DIRECT needs on this file, or 0 when the kernel says the file
 * system cannot do direct I/O. Kernels before 6.1 (or file systems that do not
 * fill STATX_DIOALIGN) leave us guessing 4096, which covers every common
 * logical block size; the probe read in open_fd settles whether it works. */
size_t hog_dio_alignment(int fd)
{
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
        if (sx.stx_dio_offset_align == 0)
            return 0;
        size_t a = HOG_MAX(sx.stx_dio_offset_align, sx.stx_dio_mem_align);
        return HOG_MAX(a, (size_t)512);
    }
#else
    (void)fd;
#endif
    return READER_PAGE;
}

/* ===================================================================== *
 *  Raw chunks: queueing, submitting, completing
 * ===================================================================== */

/* Prepares the read of the rest of slot s on the ring. With O_DIRECT the
 * length is rounded up to the alignment: at the end of the file the kernel
 * simply returns fewer bytes, and the buffer has room (chunk is aligned). */
static int ring_prep(hog_reader *r, read_slot *s)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) {
        /* The ring has depth entries and at most depth reads: this only
         * happens if earlier SQEs were not submitted yet. */
        int rc = io_uring_submit(&r->ring);
        if (rc > 0)
            r->submitted += (unsigned)rc;
        sqe = io_uring_get_sqe(&r->ring);
        if (!sqe)
            return -EBUSY;
    }
    size_t len = s->want - s->got;
    if (r->direct)
        len = round_up(len, r->align);
    unsigned idx = (unsigned)(s - r->slots);
    if (r->fixed)
        io_uring_prep_read_fixed(sqe, r->fd, s->buf + s->got, (unsigned)len, s->off + s->got,
                                 (int)idx);
    else
        io_uring_prep_read(sqe, r->fd, s->buf + s->got, (unsigned)len, s->off + s->got);
    io_uring_sqe_set_data64(sqe, idx);
    s->state = SLOT_INFLIGHT;
    return 0;
}

/* Folds the result of one read (a CQE's res, or pread's return) into s.
 * Returns 1 when s needs another read for the rest, 0 when it is done. */
static int slot_account(hog_reader *r, read_slot *s, long res)
{
    if (res == -EINTR || res == -EAGAIN)
        return 1; /* nothing read: the same read again */
    if (res < 0) {
        s->err = (int)res;
        return 0;
    }
    if (res == 0) {
        /* End of file before the size fstat gave at open: it shrank. */
        s->err = -EIO;
        s->shrank = true;
        return 0;
    }
    size_t got = s->got + (size_t)res;
    if (got >= s->want) {
        s->got = s->want; /* a file that grew since open is read to its old size */
        return 0;
    }
    /* A short read mid-chunk: read the rest. O_DIRECT offsets must stay
     * aligned, so resume at the last aligned byte (re-reading a partial
     * block); no progress at all means something is wrong underneath. */
    if (r->direct)
        got = got / r->align * r->align;
    if (got <= s->got && r->direct) {
        s->err = -EIO;
        return 0;
    }
    s->got = got;
    return 1;
}

/* Takes one completion: the slot is done, or its read goes out again for the rest. */
static int ring_complete(hog_reader *r, struct io_uring_cqe *cqe)
{
    uint64_t idx = io_uring_cqe_get_data64(cqe);
    long res = cqe->res;
    io_uring_cqe_seen(&r->ring, cqe);
    if (idx >= r->depth)
        return -EIO; /* not ours: cannot happen */
    read_slot *s = &r->slots[idx];
    r->submitted--;
    if (slot_account(r, s, res))
        return ring_prep(r, s);
    s->state = SLOT_DONE;
    return 0;
}

/* Submits what is prepared. Interrupted or busy submits are retried; a ring
 * whose completion queue is full is drained first (EBUSY means the CQ needs
 * room). The SQ ring itself says what is pending, so no count can drift. */
static int ring_flush(hog_reader *r)
{
    while (io_uring_sq_ready(&r->ring) > 0) {
        int rc = io_uring_submit(&r->ring);
        if (rc > 0) {
            r->submitted += (unsigned)rc;
            continue;
        }
        if (rc == -EINTR)
            continue;
        if ((rc == -EAGAIN || rc == -EBUSY) && r->submitted > 0) {
            struct io_uring_cqe *cqe;
            int w = io_uring_wait_cqe(&r->ring, &cqe);
            if (w == 0) {
                int c = ring_complete(r, cqe);
                if (c < 0)
                    return c;
            } else if (w != -EINTR) {
                return w;
            }
            continue;
        }
        return rc < 0 ? rc : -EIO; /* 0 with SQEs pending: the ring is broken */
    }
    return 0;
}

/* Recycles chunks released since the last call, assigns the next chunks of
 * the file to every free slot, and submits their reads. */
static int raw_refill(hog_reader *r)
{
    for (unsigned i = 0; i < r->depth; i++) {
        read_slot *s = &r->slots[i];
        if (s->state == SLOT_HELD &&
            atomic_exchange_explicit(&s->released, 0, memory_order_acquire))
            s->state = SLOT_FREE;
    }
    if (r->stream) {
        /* One chunk queued at a time, read when asked for: its offset is
         * where the previous one ended. */
        for (unsigned i = 0; i < r->depth && !r->stream_end && r->next_seq == r->deliver_seq; i++) {
            read_slot *s = &r->slots[i];
            if (s->state != SLOT_FREE)
                continue;
            s->seq = r->next_seq++;
            s->want = r->chunk;
            s->got = 0;
            s->err = 0;
            s->shrank = false;
            s->state = SLOT_QUEUED;
        }
        return 0;
    }
    for (unsigned i = 0; i < r->depth && r->next_off < r->file_bytes; i++) {
        read_slot *s = &r->slots[i];
        if (s->state != SLOT_FREE)
            continue;
        s->seq = r->next_seq++;
        s->off = r->next_off;
        s->want = (size_t)HOG_MIN((uint64_t)r->chunk, r->file_bytes - r->next_off);
        s->got = 0;
        s->err = 0;
        s->shrank = false;
        r->next_off += s->want;
        if (r->use_ring) {
            int rc = ring_prep(r, s);
            if (rc < 0)
                return rc;
        } else {
            s->state = SLOT_QUEUED;
        }
    }
    return r->use_ring ? ring_flush(r) : 0;
}

/* pread fallback: the whole chunk now, retrying interrupted and short reads. */
static void slot_pread(hog_reader *r, read_slot *s)
{
    for (;;) {
        size_t len = s->want - s->got;
        if (r->direct)
            len = round_up(len, r->align);
        ssize_t n = pread(r->fd, s->buf + s->got, len, (off_t)(s->off + s->got));
        if (!slot_account(r, s, n < 0 ? -(long)errno : (long)n))
            break;
    }
    s->state = SLOT_DONE;
}

/* Whether the stream at fd has bytes (or its end) ready to read within
 * ms milliseconds. */
static bool stream_ready(int fd, int ms)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int n;
    do
        n = poll(&pfd, 1, ms);
    while (n < 0 && errno == EINTR);
    return n != 0; /* an error too: the read says what it is */
}

/* Whether the read is to stop: the stop fd is readable now, or was once
 * (r->stopped). Any event counts, an invalid descriptor's too: a stop fd
 * that can no longer say so must not leave the read running. */
static bool reader_stopping(hog_reader *r)
{
    if (r->stopped || r->stop_fd < 0)
        return r->stopped;
    struct pollfd pfd = {.fd = r->stop_fd, .events = POLLIN};
    int n;
    do
        n = poll(&pfd, 1, 0);
    while (n < 0 && errno == EINTR);
    r->stopped = n > 0;
    return r->stopped;
}

/* Before a stream's read, with a stop fd: waits until the stream has bytes
 * (or its end, or an error) or the stop fd is readable. Returns whether to
 * read: not once the read is stopped and the stream has nothing ready.
 * Stopped, it waits no more, however the owner treats the stop fd since. */
static bool stream_wait(hog_reader *r)
{
    struct pollfd pfd[2] = {{.fd = r->fd, .events = POLLIN}, {.fd = r->stop_fd, .events = POLLIN}};
    int n;
    do
        n = poll(pfd, r->stopped ? 1 : 2, r->stopped ? 0 : -1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return true; /* the read says what is wrong */
    if (!r->stopped && pfd[1].revents)
        r->stopped = true;
    return pfd[0].revents != 0 || !r->stopped;
}

/* Stream mode: fills slot s from the stream, to the chunk size or the end
 * of the stream (eager: or to where nothing more is ready, once it has a
 * byte; stopped: to where nothing more is ready), and sets its offset from
 * what came before. */
static void slot_stream(hog_reader *r, read_slot *s)
{
    s->off = r->next_off;
    while (s->got < s->want) {
        if (r->stop_fd >= 0 && !stream_wait(r))
            break;
        ssize_t n = read(r->fd, s->buf + s->got, s->want - s->got);
        if (n > 0) {
            s->got += (size_t)n;
            const bool emptied_full = r->pipe_size && (size_t)n >= r->pipe_size;
            if (r->eager && s->got < s->want && !stream_ready(r->fd, emptied_full ? FULL_PIPE_WAIT_MS : 0))
                break;
        } else if (n == 0) {
            r->stream_end = true;
            break;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) { /* a non-blocking descriptor */
            if (r->stop_fd < 0) { /* else stream_wait waits, for the stop fd too */
                struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
                (void)poll(&pfd, 1, -1);
            }
        } else if (errno != EINTR) {
            s->err = -errno;
            break;
        }
    }
    s->want = s->got;
    r->next_off += s->got;
    s->state = SLOT_DONE;
}

/* The next raw chunk in file order. Returns 1 and *out, 0 at the end of the
 * file, or a negative error. */
static int raw_next(hog_reader *r, read_slot **out)
{
    if (r->stopped)
        return 0;
    int rc = raw_refill(r);
    if (rc < 0)
        return reader_fail(r, rc, "io_uring submit", r->next_off);
    if (r->deliver_seq == r->next_seq) {
        if (r->stream ? r->stream_end : r->next_off >= r->file_bytes)
            return 0;
        return hog_fail(-EBUSY, r->err, r->err_len,
                        "%s: all %u chunks are held: release one before asking for the next",
                        r->path, r->depth);
    }
    read_slot *s = NULL;
    for (unsigned i = 0; i < r->depth; i++) {
        read_slot *c = &r->slots[i];
        if (c->seq == r->deliver_seq &&
            (c->state == SLOT_QUEUED || c->state == SLOT_INFLIGHT || c->state == SLOT_DONE)) {
            s = c;
            break;
        }
    }
    if (!s)
        return reader_fail(r, -EIO, "lost chunk", r->next_off); /* cannot happen */
    if (s->state == SLOT_QUEUED && r->stream) {
        slot_stream(r, s);
        if (s->want == 0 && !s->err) { /* the stream ended (or was stopped) at a chunk boundary */
            s->state = SLOT_FREE;
            r->deliver_seq++;
            return 0;
        }
    } else if (s->state == SLOT_QUEUED) {
        slot_pread(r, s);
    }
    while (s->state != SLOT_DONE) {
        struct io_uring_cqe *cqe;
        rc = io_uring_wait_cqe(&r->ring, &cqe);
        if (rc == -EINTR)
            continue;
        if (rc < 0)
            return reader_fail(r, rc, "io_uring wait", s->off);
        rc = ring_complete(r, cqe);
        if (rc == 0)
            rc = ring_flush(r);
        if (rc < 0)
            return reader_fail(r, rc, "io_uring submit", s->off);
    }
    if (s->err) {
        if (s->shrank) {
            r->rc = s->err;
            return hog_fail(s->err, r->err, r->err_len,
                            "%s: the file ended at byte %llu, short of the %llu bytes it had "
                            "when opened", r->path, (unsigned long long)(s->off + s->got),
                            (unsigned long long)r->file_bytes);
        }
        return reader_fail(r, s->err, "read", s->off + s->got);
    }
    s->state = SLOT_HELD;
    atomic_store_explicit(&s->released, 0, memory_order_relaxed);
    r->deliver_seq++;
    *out = s;
    return 1;
}

/* Gives a raw chunk back from the reading thread itself. */
static void raw_put(read_slot *s)
{
    atomic_store_explicit(&s->released, 1, memory_order_release);
}

/* ===================================================================== *
 *  Decompression
 * ===================================================================== */
static int codec_fail(hog_reader *r, int rc, uint64_t off, const char *msg)
{
    r->rc = rc;
    return hog_fail(rc, r->err, r->err_len,
                    "%s: corrupt %s stream at compressed byte offset %llu: %s", r->path,
                    r->codec == CODEC_GZIP ? "gzip" : "zstd", (unsigned long long)off, msg);
}

/* Runs the decoder on the current raw chunk into out[*pos..chunk). Returns 0
 * or an error. in_pos advances by what the decoder consumed. */
static int codec_step(hog_reader *r, char *out, size_t *pos)
{
    /* No raw chunk: the input is over and the decoder is asked to flush what
     * it still holds (a previous output buffer filled up before it could). */
    const unsigned char *in = r->in_slot ? (const unsigned char *)r->in_slot->buf : NULL;
    size_t in_len = r->in_slot ? r->in_slot->want : 0;
    uint64_t in_off = r->in_slot ? r->in_slot->off : input_end(r);
    if (r->codec == CODEC_GZIP) {
        if (r->member_end) {
            /* Another gzip member follows (pigz, bgzip and `cat a.gz b.gz`
             * write several): gunzip decodes them all, so do we. */
            if (inflateReset(&r->zs) != Z_OK)
                return codec_fail(r, HOG_EFORMAT, in_off + r->in_pos, "inflateReset failed");
            r->member_end = false;
        }
        /* zlib counts in uInt: feed at most 1 GiB per call (chunks are smaller anyway). */
        r->zs.next_in = in ? (unsigned char *)(uintptr_t)(in + r->in_pos) : NULL;
        r->zs.avail_in = (uInt)HOG_MIN(in_len - r->in_pos, (size_t)READER_MAX_CHUNK);
        r->zs.next_out = (unsigned char *)out + *pos;
        r->zs.avail_out = (uInt)HOG_MIN(r->chunk - *pos, (size_t)READER_MAX_CHUNK);
        uInt in_before = r->zs.avail_in, out_before = r->zs.avail_out;
        int zr = inflate(&r->zs, Z_NO_FLUSH);
        r->in_pos += in_before - r->zs.avail_in;
        *pos += out_before - r->zs.avail_out;
        if (zr == Z_STREAM_END) {
            r->member_end = true;
            return 0;
        }
        if (zr == Z_OK || zr == Z_BUF_ERROR)
            return 0;
        if (zr == Z_MEM_ERROR)
            return reader_fail(r, -ENOMEM, "inflate", in_off + r->in_pos);
        return codec_fail(r, HOG_EFORMAT, in_off + r->in_pos,
                          r->zs.msg ? r->zs.msg : zError(zr));
    }
    ZSTD_inBuffer zin = {in, in_len, r->in_pos};
    ZSTD_outBuffer zout = {out, r->chunk, *pos};
    size_t zr = ZSTD_decompressStream(r->zd, &zout, &zin);
    r->in_pos = zin.pos;
    *pos = zout.pos;
    if (ZSTD_isError(zr)) {
        if (ZSTD_getErrorCode(zr) == ZSTD_error_memory_allocation)
            return reader_fail(r, -ENOMEM, "zstd", in_off + r->in_pos);
        return codec_fail(r, HOG_EFORMAT, in_off + r->in_pos, ZSTD_getErrorName(zr));
    }
    r->zd_hint = zr;
    return 0;
}

/* Fills a free output buffer with the next decompressed bytes. */
static int codec_next(hog_reader *r, const char **data, size_t *len)
{
    if (r->out_eof)
        return 0;
    /* A stop after the last byte was decoded stops nothing. */
    const bool all_decoded = r->in_eof && (r->codec == CODEC_GZIP ? r->member_end : r->zd_hint == 0);
    if (!all_decoded && reader_stopping(r)) { /* what is decoded or read ahead is dropped */
        r->out_eof = true;
        return 0;
    }
    out_buf *o = NULL;
    for (unsigned i = 0; i < r->depth; i++) {
        out_buf *c = &r->outs[i];
        if (c->held && atomic_exchange_explicit(&c->released, 0, memory_order_acquire))
            c->held = 0;
        if (!o && !c->held)
            o = c;
    }
    if (!o) {
        return hog_fail(-EBUSY, r->err, r->err_len,
                        "%s: all %u chunks are held: release one before asking for the next",
                        r->path, r->depth);
    }
    size_t pos = 0;
    while (pos < r->chunk) {
        if (r->in_slot && r->in_pos == r->in_slot->want) {
            raw_put(r->in_slot);
            r->in_slot = NULL;
        }
        /* eager: what is decoded goes now, rather than after a read that waits */
        if (!r->in_slot && !r->in_eof && r->eager && r->stream && pos > 0 && !stream_ready(r->fd, 0))
            break;
        if (!r->in_slot && !r->in_eof) {
            read_slot *s;
            int rc = raw_next(r, &s);
            if (rc < 0)
                return rc;
            if (rc == 0 && r->stopped) /* a stream stopped: no end of frame to wait for */
                break;
            if (rc == 0) {
                r->in_eof = true;
                r->in_pos = 0;
            } else {
                r->in_slot = s;
                r->in_pos = 0;
            }
        }
        if (r->in_eof) {
            bool complete = r->codec == CODEC_GZIP ? r->member_end : r->zd_hint == 0;
            if (complete)
                break;
        }
        size_t before = pos;
        int rc = codec_step(r, o->buf, &pos);
        if (rc < 0)
            return rc;
        if (r->in_eof && pos == before)
            return codec_fail(r, HOG_EFORMAT, input_end(r), "unexpected end of file (truncated?)");
    }
    if (pos == 0) {
        r->out_eof = true;
        return 0;
    }
    r->position = r->in_slot ? r->in_slot->off + r->in_pos : input_end(r);
    o->held = 1;
    atomic_store_explicit(&o->released, 0, memory_order_relaxed);
    *data = o->buf;
    *len = pos;
    return 1;
}

/* ===================================================================== *
 *  Opening
 * ===================================================================== */

/* Whether most of a regular file is already in the page cache: mincore
 * over a mapping (which reads nothing), sampled at up to 64 places. O_DIRECT
 * would read such a file from the disk again, at a fraction of memory speed. */
static bool mostly_cached(int fd, const struct stat *st)
{
    if (!S_ISREG(st->st_mode) || st->st_size <= 0)
        return false;
    size_t size = (size_t)st->st_size, page = (size_t)sysconf(_SC_PAGESIZE);
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return false;
    size_t pages = (size - 1) / page + 1, samples = pages < 64 ? pages : 64, hits = 0;
    for (size_t i = 0; i < samples; i++) {
        unsigned char in = 0;
        size_t pg = pages * i / samples;
        if (mincore((char *)map + pg * page, page, &in) == 0)
            hits += in & 1;
    }
    munmap(map, size);
    return hits * 2 > samples;
}

/* Opens path and says what it is (*st). A regular file or a block device
 * is read with O_DIRECT when the file system takes it, an aligned read
 * succeeds (some accept the flag at open and fail the first read) and the
 * file is not already in the page cache; buffered otherwise. Anything else
 * (a pipe, a socket, a terminal) is opened once, as it is: a second open of
 * a named pipe would wait for a writer. */
static int open_fd(hog_reader *r, const char *path, char *probe, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (fstat(fd, st) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    r->fd = fd;
    r->direct = false;
    r->align = 1;
    if (!(S_ISREG(st->st_mode) || S_ISBLK(st->st_mode)) || mostly_cached(fd, st))
        return 0; /* a stream, a folder (refused by the caller) or a cached file */
    int dfd = open(path, O_RDONLY | O_CLOEXEC | O_DIRECT);
    if (dfd < 0)
        return 0; /* O_DIRECT refused (EINVAL): buffered */
    size_t a = hog_dio_alignment(dfd);
    if (a != 0 && a <= READER_PAGE && r->chunk % a == 0) {
        ssize_t n;
        do
            n = pread(dfd, probe, a, 0);
        while (n < 0 && errno == EINTR);
        if (n >= 0) {
            close(fd);
            r->fd = dfd;
            r->direct = true;
            r->align = a;
            return 0;
        }
    }
    close(dfd);
    return 0;
}

/* Sets up the ring; on any failure the reader stays in pread mode. */
static void ring_setup(hog_reader *r)
{
    /* COOP_TASKRUN (5.19+) spares an interrupt per completion; older kernels
     * reject the flag, so retry without it. */
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_COOP_TASKRUN;
    int rc = io_uring_queue_init_params(r->depth, &r->ring, &p);
    if (rc == -EINVAL) {
        memset(&p, 0, sizeof p);
        rc = io_uring_queue_init_params(r->depth, &r->ring, &p);
    }
    if (rc < 0)
        return; /* ENOSYS, EPERM (seccomp, io_uring_disabled), ENOMEM: pread it is */
    /* Kernels 5.1 to 5.5 have rings but no IORING_OP_READ, and cannot be
     * probed (the probe came with the opcode): no probe, no ring. */
    struct io_uring_probe *probe = io_uring_get_probe_ring(&r->ring);
    bool can_read = probe && io_uring_opcode_supported(probe, IORING_OP_READ) &&
                    io_uring_opcode_supported(probe, IORING_OP_READ_FIXED);
    io_uring_free_probe(probe);
    if (!can_read) {
        io_uring_queue_exit(&r->ring);
        return;
    }
    r->use_ring = true;
    struct iovec *iov = hog_calloc(r->depth, sizeof *iov);
    if (!iov)
        return;
    for (unsigned i = 0; i < r->depth; i++) {
        iov[i].iov_base = r->slots[i].buf;
        iov[i].iov_len = r->chunk;
    }
    /* Registration pins the pages once instead of on every read; it can fail
     * on RLIMIT_MEMLOCK (kernels before 5.12): plain reads work as well. */
    r->fixed = io_uring_register_buffers(&r->ring, iov, r->depth) == 0;
    hog_free(iov);
}

/* Reads the first chunk, which decides the codec and stays queued for
 * whoever reads it, and sets up the decoder. Returns 0 or an error (err
 * written, and sticky). */
static int reader_start(hog_reader *r)
{
    r->started = true;
    read_slot *first = NULL;
    int rc = raw_next(r, &first);
    if (rc < 0) {
        r->rc = rc;
        return rc; /* raw_next wrote err */
    }
    if (rc == 1) {
        const unsigned char *b = (const unsigned char *)first->buf;
        if (first->want >= 2 && b[0] == 0x1f && b[1] == 0x8b)
            r->codec = CODEC_GZIP;
        else if (first->want >= 4 && b[0] == 0x28 && b[1] == 0xb5 && b[2] == 0x2f && b[3] == 0xfd)
            r->codec = CODEC_ZSTD;
        r->in_slot = first;
        r->in_pos = 0;
    } else {
        r->in_eof = true;
    }
    if (r->codec == CODEC_NONE)
        return 0;
    r->outs = hog_calloc(r->depth, sizeof *r->outs);
    if (!r->outs)
        goto nomem;
    for (unsigned i = 0; i < r->depth; i++) {
        r->outs[i].buf = hog_aligned_alloc(HOG_CACHELINE, r->chunk);
        if (!r->outs[i].buf)
            goto nomem;
        atomic_init(&r->outs[i].released, 0);
    }
    if (r->codec == CODEC_GZIP) {
        /* 15 + 32: a 32 KiB window and automatic gzip/zlib header detection. */
        if (inflateInit2(&r->zs, 15 + 32) != Z_OK)
            goto nomem;
        r->zs_init = true;
    } else {
        r->zd = ZSTD_createDCtx();
        if (!r->zd)
            goto nomem;
        r->zd_hint = 1; /* no frame decoded yet: an empty stream is truncated */
    }
    return 0;

nomem:
    r->rc = -ENOMEM;
    return hog_fail(-ENOMEM, r->err, r->err_len, "%s: out of memory", r->path);
}

int hog_reader_open(const char *path, size_t chunk_bytes, unsigned depth, hog_reader **out,
                    char *err, size_t err_len)
{
    return hog_reader_open_with(path, chunk_bytes, depth, 0, out, err, err_len);
}

int hog_reader_open_with(const char *path, size_t chunk_bytes, unsigned depth, unsigned flags,
                         hog_reader **out, char *err, size_t err_len)
{
    *out = NULL;
    if (err && err_len)
        err[0] = '\0';
    if (chunk_bytes == 0)
        chunk_bytes = READER_DEFAULT_CHUNK;
    if (depth == 0)
        depth = READER_DEFAULT_DEPTH;
    if (chunk_bytes > READER_MAX_CHUNK || depth > READER_MAX_DEPTH)
        return hog_fail(-EINVAL, err, err_len, "%s: chunk_bytes %zu or depth %u too large",
                        path, chunk_bytes, depth);

    hog_reader *r = hog_calloc(1, sizeof *r);
    if (!r)
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    r->fd = -1;
    r->stop_fd = -1;
    r->err = err;
    r->err_len = err_len;
    r->depth = depth;
    r->eager = (flags & HOG_READER_EAGER) != 0;
    /* Page multiples: every O_DIRECT alignment seen in practice (512, 4096)
     * divides them; a stranger one is checked in open_fd. */
    r->chunk = round_up(chunk_bytes, READER_PAGE);
    r->path = hog_strdup(path);
    r->slots = hog_calloc(depth, sizeof *r->slots);
    int rc = -ENOMEM;
    if (!r->path || !r->slots)
        goto fail;
    for (unsigned i = 0; i < depth; i++) {
        r->slots[i].buf = hog_aligned_alloc(READER_PAGE, r->chunk);
        if (!r->slots[i].buf)
            goto fail;
        atomic_init(&r->slots[i].released, 0);
    }

    struct stat st;
    rc = open_fd(r, path, r->slots[0].buf, &st);
    if (rc < 0)
        goto fail;
    if (S_ISDIR(st.st_mode)) {
        rc = -EISDIR;
        goto fail;
    }
    if (S_ISREG(st.st_mode)) {
        r->file_bytes = (uint64_t)st.st_size;
    } else if (hog_is_stream(st.st_mode)) {
        r->stream = true;
        int cap = S_ISFIFO(st.st_mode) ? fcntl(r->fd, F_GETPIPE_SZ) : -1;
        r->pipe_size = cap > 0 ? (size_t)cap : 0;
    } else {
        /* A block device tells its size by seeking. */
        off_t end = lseek(r->fd, 0, SEEK_END);
        if (end < 0) {
            rc = -errno;
            goto fail;
        }
        r->file_bytes = (uint64_t)end;
    }

    if (!r->stream)
        ring_setup(r);

    /* A stream's first read waits for its writer: the first next makes it,
     * once the caller has had the chance to give a stop fd. */
    if (!r->stream && (rc = reader_start(r)) < 0) {
        hog_reader_close(r);
        return rc; /* reader_start wrote err */
    }
    *out = r;
    return 0;

fail:
    if (rc == -ENOMEM)
        hog_fail(rc, err, err_len, "%s: out of memory", path);
    else
        hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
    hog_reader_close(r);
    return rc;
}

/* ===================================================================== *
 *  The rest of the API
 * ===================================================================== */
int hog_reader_next(hog_reader *r, const char **data, size_t *len)
{
    if (r->rc < 0)
        return r->rc;
    if (!r->started) {
        int rc = reader_start(r);
        if (rc < 0)
            return rc;
    }
    if (r->codec != CODEC_NONE)
        return codec_next(r, data, len);
    /* A stream's reads watch the stop fd themselves, and what they read
     * before it became readable is handed out. */
    if (!r->stream && r->position < r->file_bytes && reader_stopping(r))
        return 0;
    read_slot *s = r->in_slot; /* the first chunk, read by open (a stream's, by reader_start) */
    if (s) {
        r->in_slot = NULL;
    } else {
        if (r->in_eof)
            return 0;
        int rc = raw_next(r, &s);
        if (rc <= 0) {
            if (rc == 0)
                r->in_eof = true;
            return rc;
        }
    }
    *data = s->buf;
    *len = s->want;
    r->position = s->off + s->want;
    return 1;
}

void hog_reader_release(hog_reader *r, const char *data)
{
    if (!r || !data)
        return;
    if (r->codec != CODEC_NONE) {
        for (unsigned i = 0; i < r->depth; i++)
            if (r->outs[i].buf == data) {
                atomic_store_explicit(&r->outs[i].released, 1, memory_order_release);
                return;
            }
    } else {
        for (unsigned i = 0; i < r->depth; i++)
            if (r->slots[i].buf == data) {
                atomic_store_explicit(&r->slots[i].released, 1, memory_order_release);
                return;
            }
    }
}

uint64_t hog_reader_file_bytes(const hog_reader *r)
{
    return r->file_bytes;
}

int hog_reader_stream(const hog_reader *r)
{
    return r->stream;
}

uint64_t hog_reader_position(const hog_reader *r)
{
    return r->position;
}

int hog_reader_direct(const hog_reader *r)
{
    return r->direct;
}

void hog_reader_set_stop(hog_reader *r, int fd)
{
    r->stop_fd = fd < 0 ? -1 : fd;
}

int hog_reader_stopped(const hog_reader *r)
{
    return r->stopped;
}

void hog_reader_close(hog_reader *r)
{
    if (!r)
        return;
    bool can_free = true;
    if (r->use_ring) {
        /* The kernel writes into our buffers until each read completes, and
         * tearing the ring down does not wait for that: drain first. If the
         * ring fails now, leaking the buffers beats a write after free. */
        (void)ring_flush(r);
        while (r->submitted > 0) {
            struct io_uring_cqe *cqe;
            int rc = io_uring_wait_cqe(&r->ring, &cqe);
            if (rc == -EINTR)
                continue;
            if (rc < 0) {
                can_free = false;
                break;
            }
            io_uring_cqe_seen(&r->ring, cqe);
            r->submitted--;
        }
        io_uring_queue_exit(&r->ring);
    }
    if (r->fd >= 0)
        close(r->fd);
    if (r->zs_init)
        inflateEnd(&r->zs);
    ZSTD_freeDCtx(r->zd);
    if (r->outs)
        for (unsigned i = 0; i < r->depth; i++)
            hog_free(r->outs[i].buf);
    hog_free(r->outs);
    if (r->slots && can_free)
        for (unsigned i = 0; i < r->depth; i++)
            hog_free(r->slots[i].buf);
    if (can_free)
        hog_free(r->slots);
    hog_free(r->path);
    hog_free(r);
}
