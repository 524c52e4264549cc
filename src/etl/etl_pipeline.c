/* etl_pipeline.c: the text pipeline: chunked reads, cut at line ends, parsed on every core, rows handed on in file order to a builder. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "etl.h"

/*
 * Three kinds of thread share one mutex and three queues:
 *
 *   producer   reads chunks (hog_reader), cuts them into pieces of whole
 *              lines and queues them; it alone touches the reader, so it
 *              also gives back the chunks the consumer is done with.
 *   parsers    take pieces, parse them into rows (hog_parse_chunk), and put
 *              the rows in the piece's slot of the reorder ring.
 *   consumer   (the caller) takes the slots in file order, adds their rows
 *              to the builder and turns chunk-relative line numbers into
 *              file line numbers.
 *
 * A piece is either the body of one chunk (from its first line start to its
 * last newline, pointing into the reader's buffer) or a seam: the line cut
 * by a chunk boundary, copied into a buffer of its own. Memory stays bounded:
 * at most `depth` chunks are out of the reader and at most 2 x depth pieces
 * (a body and a seam per chunk) are between the producer and the consumer,
 * each keeping the capacity of its parsed rows. The chunks are smaller and
 * fewer when hog_read_params.mem_limit is small (pipeline_size). Pieces are a few MiB and a file
 * has at most thousands of them, so one mutex costs nothing measurable.
 *
 * A seam grows with its line, so a line is never held past the plan's
 * max_line: once the line being carried passes it, the producer stops and
 * queues a piece that stands for that line (too_long), for the consumer to
 * report at its place in the file; a long line inside one chunk is the
 * parser's to report. A file with no newline at all (/dev/zero) ends there,
 * not in an allocation as large as memory.
 *
 * A file's last line may lack its newline. A stream's may not: a writer
 * that died in the middle of a row would otherwise leave a shorter row
 * that parses (a cut "3:0.25" reads as "3:0.2"), so the producer queues a
 * piece that stands for the cut line (cut), reported or skipped as a
 * malformed line at its place.
 *
 * A stopped read (the builder's stop fd, hog_builder_set_stop) ends as
 * if the input had ended where the reader stopped, a file as well as a
 * stream. Its last line is then most likely cut, but by the stop, not by
 * a writer that failed: the cut piece is left out with a warning, neither
 * an error nor a malformed line skipped, and the rows before it are kept.
 *
 * Rows as they come: for an eager builder (predict, which answers each
 * row) a stream is read eagerly, each chunk what the stream had ready
 * (HOG_READER_EAGER), and whenever the consumer has added every piece
 * queued it tells the builder so (hog_builder_idle), which hands the rows
 * it holds on at once instead of waiting for a full block. The reader is
 * the slowest stage then, so the shorter blocks cost nothing a writer
 * would notice; a file is read as for any builder.
 */

#define DEPTH 8u   /* chunks out of the reader, at most */
#define RING (2u * DEPTH)
#define CHUNK_BYTES (4u << 20) /* at most */
#define HEAD_BYTES (1u << 20) /* what the plan sees of the first chunk: the header and the first lines */

typedef struct piece {
    uint64_t seq;
    const char *data;
    size_t len;
    const char *chunk;  /* the reader's buffer to give back after parsing, or NULL */
    char *owned;        /* a seam's own buffer, or NULL */
    uint64_t position;  /* bytes of the file read when it was queued (hog_reader_position) */
    int too_long;       /* no bytes: the line after the pieces before it is longer than max_line */
    uint64_t cut;       /* no bytes: the stream ended this many bytes into the line after them */
    int done;           /* parsed: rows and rc are ready */
    int rc;
    hog_text_error err;
    hog_rows rows;
} piece;

typedef struct pipeline {
    pthread_mutex_t mu;
    pthread_cond_t changed;
    const hog_text_plan *plan;
    hog_reader *reader;
    uint64_t position;   /* the producer's: hog_reader_position after its last read */

    piece ring[RING];
    unsigned depth, ring_len; /* of the plan: chunks out at most, and pieces queued (2 x depth) */
    uint64_t produced;   /* pieces queued so far */
    uint64_t parsing;    /* next piece a parser takes */
    uint64_t consumed;   /* next piece the consumer takes */
    int eof;             /* the producer is done (all pieces queued) */
    int stop;            /* an error: everyone winds down */
    int read_rc;         /* the producer's error, if any */
    int read_stopped;    /* the producer's: the reader stopped (its stop fd), set before the last piece is queued */
    char read_err[256];

    const char *first;   /* the chunk the plan was made from, for the producer to start with */
    size_t first_len;
    const char *giveback[RING];
    unsigned ngiveback;
    unsigned held;       /* chunks taken from the reader and not yet given back */
} pipeline;

/* ===================================================================== *
 *  Producer
 * ===================================================================== */
/* Waits for a free ring slot and queues a piece. Returns 0, or -1 if the
 * pipeline is stopping. Called with the mutex held. */
static int queue_piece(pipeline *pl, const char *data, size_t len, const char *chunk, char *owned, int too_long,
                       uint64_t cut)
{
    while (pl->produced - pl->consumed >= pl->ring_len && !pl->stop)
        pthread_cond_wait(&pl->changed, &pl->mu);
    if (pl->stop)
        return -1;
    piece *pc = &pl->ring[pl->produced % pl->ring_len];
    pc->seq = pl->produced;
    pc->data = data;
    pc->len = len;
    pc->chunk = chunk;
    pc->owned = owned;
    pc->too_long = too_long;
    pc->cut = cut;
    pc->position = pl->position;
    pc->done = 0;
    pc->rc = 0;
    pl->produced++;
    pthread_cond_broadcast(&pl->changed);
    return 0;
}

static void give_back_chunks(pipeline *pl)
{
    for (unsigned i = 0; i < pl->ngiveback; i++)
        hog_reader_release(pl->reader, pl->giveback[i]);
    pl->held -= pl->ngiveback;
    pl->ngiveback = 0;
}

typedef struct carry_buf {
    char *p;
    size_t len, cap;
} carry_buf;

static int carry_append(carry_buf *c, const char *s, size_t n)
{
    if (n == 0)
        return 0;
    void *p = c->p;
    int rc = hog_array_grow(&p, &c->cap, c->len + n, 1, 4096);
    c->p = p;
    if (rc < 0)
        return rc;
    memcpy(c->p + c->len, s, n);
    c->len += n;
    return 0;
}

/* Whether [s, s + n) holds only blanks (no row). */
static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* Hands the carried bytes over as a seam piece and starts a new carry. */
static int queue_seam(pipeline *pl, carry_buf *c)
{
    char *owned = c->p;
    size_t len = c->len;
    memset(c, 0, sizeof(*c));
    pthread_mutex_lock(&pl->mu);
    int rc = queue_piece(pl, owned, len, NULL, owned, 0, 0);
    pthread_mutex_unlock(&pl->mu);
    if (rc < 0)
        hog_free(owned);
    return rc;
}

/* Gives a chunk back to the reader (through the pipeline's list, which
 * the producer empties). */
static void chunk_done(pipeline *pl, const char *chunk)
{
    pthread_mutex_lock(&pl->mu);
    pl->giveback[pl->ngiveback++] = chunk;
    pthread_mutex_unlock(&pl->mu);
}

static void *producer_main(void *v)
{
    pipeline *pl = v;
    carry_buf carry = {0};
    uint64_t skip = pl->plan->header_bytes;
    const uint64_t max_line = pl->plan->max_line;
    int rc = 0, too_long = 0;
    for (;;) {
        /* The reader lends at most depth chunks: wait for one to come back. */
        pthread_mutex_lock(&pl->mu);
        give_back_chunks(pl);
        while (pl->held >= pl->depth && !pl->stop) {
            pthread_cond_wait(&pl->changed, &pl->mu);
            give_back_chunks(pl);
        }
        int stopping = pl->stop;
        pthread_mutex_unlock(&pl->mu);
        if (stopping)
            break;
        const char *data = pl->first;
        size_t len = pl->first_len;
        if (data) { /* taken from the reader (and counted in held) by the plan */
            pl->first = NULL;
        } else {
            rc = hog_reader_next(pl->reader, &data, &len);
            if (rc <= 0)
                break;
            rc = 0;
            pl->position = hog_reader_position(pl->reader);
            pthread_mutex_lock(&pl->mu);
            pl->held++;
            pthread_mutex_unlock(&pl->mu);
        }
        const char *chunk = data, *end = data + len;
        if (skip) { /* the CSV header, already read by the plan */
            size_t n = HOG_MIN(skip, len);
            data += n;
            skip -= n;
        }
        const char *last_nl = data < end ? memrchr(data, '\n', (size_t)(end - data)) : NULL;
        if (!last_nl) { /* no line ends here: all of it belongs to the line being carried */
            size_t n = (size_t)(end - data);
            too_long = carry.len + n > max_line;
            if (!too_long)
                rc = carry_append(&carry, data, n);
            chunk_done(pl, chunk);
            if (rc < 0 || too_long)
                break;
            continue;
        }
        /* A chunk with a line end takes two ring slots, its seam's and its
         * body's, either one empty when it has none. Each slot keeps the
         * capacity of the rows parsed in it, and a seam is one line: so
         * seams' slots never grow to a body's rows. (A stream's chunks
         * often end at a line end and bring no seam; without the empty one
         * every slot would in turn hold a body's rows, 88 MB where 44 MB
         * do on a 151 MB file.) */
        if (carry.len) { /* finish the line cut by the last boundary */
            const char *first_nl = memchr(data, '\n', (size_t)(end - data));
            too_long = carry.len + (size_t)(first_nl - data) > max_line;
            if (!too_long && (rc = carry_append(&carry, data, (size_t)(first_nl + 1 - data))) == 0)
                rc = queue_seam(pl, &carry);
            if (rc < 0 || too_long) {
                chunk_done(pl, chunk);
                break;
            }
            data = first_nl + 1;
        } else {
            pthread_mutex_lock(&pl->mu);
            rc = queue_piece(pl, NULL, 0, NULL, NULL, 0, 0);
            pthread_mutex_unlock(&pl->mu);
            if (rc < 0) {
                chunk_done(pl, chunk);
                break;
            }
        }
        /* The bytes after the last newline start the next carry; past the
         * bound already, the lines before them are queued, then the mark. */
        too_long = (uint64_t)(end - last_nl - 1) > max_line;
        if (!too_long)
            rc = carry_append(&carry, last_nl + 1, (size_t)(end - last_nl - 1));
        const int body = data <= last_nl;
        pthread_mutex_lock(&pl->mu);
        if (rc == 0)
            rc = queue_piece(pl, body ? data : NULL, body ? (size_t)(last_nl + 1 - data) : 0, body ? chunk : NULL,
                             NULL, 0, 0);
        if (rc < 0 || !body) /* not queued: the chunk goes straight back */
            pl->giveback[pl->ngiveback++] = chunk;
        pthread_mutex_unlock(&pl->mu);
        if (rc < 0 || too_long)
            break;
    }
    if (rc == 0 && too_long) {
        pthread_mutex_lock(&pl->mu);
        rc = queue_piece(pl, NULL, 0, NULL, NULL, 1, 0);
        pthread_mutex_unlock(&pl->mu);
    } else if (rc == 0 && carry.len && (hog_reader_stream(pl->reader) || hog_reader_stopped(pl->reader)) &&
               !blank(carry.p, carry.len)) {
        pthread_mutex_lock(&pl->mu);
        pl->read_stopped = hog_reader_stopped(pl->reader);
        rc = queue_piece(pl, NULL, 0, NULL, NULL, 0, carry.len);
        pthread_mutex_unlock(&pl->mu);
    } else if (rc == 0 && carry.len) { /* a file's last line without a newline */
        rc = queue_seam(pl, &carry);
    }
    hog_free(carry.p);
    pthread_mutex_lock(&pl->mu);
    if (rc < 0 && !pl->stop) {
        pl->read_rc = rc;
        pl->stop = 1;
    }
    pl->eof = 1;
    pthread_cond_broadcast(&pl->changed);
    /* Chunks still held by parsers come back through giveback; wait for
     * them so the reader can be closed with nothing outstanding. */
    while (pl->consumed < pl->produced || pl->ngiveback) {
        give_back_chunks(pl);
        if (pl->consumed < pl->produced)
            pthread_cond_wait(&pl->changed, &pl->mu);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* ===================================================================== *
 *  Parsers
 * ===================================================================== */
/* A parser thread: the pipeline, and the feature names it collects (NULL:
 * the plan names none), merged into the builder's when the text is read. */
typedef struct parser_arg {
    pipeline *pl;
    hog_fnames *fnames;
} parser_arg;

static void *parser_main(void *v)
{
    const parser_arg *a = v;
    pipeline *pl = a->pl;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        while (pl->parsing == pl->produced && !pl->eof && !pl->stop)
            pthread_cond_wait(&pl->changed, &pl->mu);
        if (pl->stop || pl->parsing == pl->produced)
            break;
        piece *pc = &pl->ring[pl->parsing++ % pl->ring_len];
        pthread_mutex_unlock(&pl->mu);

        hog_rows_clear(&pc->rows);
        pc->rows.fnames = a->fnames;
        int rc = hog_parse_chunk(pl->plan, pc->data, pc->len, &pc->rows, &pc->err);

        pthread_mutex_lock(&pl->mu);
        pc->rc = rc;
        pc->done = 1;
        pthread_cond_broadcast(&pl->changed);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* ===================================================================== *
 *  Consumer
 * ===================================================================== */
/* What a stream that ends in the middle of a line lacks there. */
#define CUT_LINE "expected a newline, found the end of the stream (the line is cut short)"

/* What a stopped read (hog_builder_set_stop) left out of its last line,
 * once: the rows before it go on as if the input had ended there. */
static void cut_by_stop(const char *path, uint64_t line, uint64_t bytes)
{
    hog_log(HOG_LOG_WARN, "%s:%llu: the read was stopped inside this line: its first %llu bytes are left out", path,
            (unsigned long long)line, (unsigned long long)bytes);
}

/* Counts the cut last line of a stream as a malformed line skipped. */
static void cut_skipped(hog_text_summary *sum, uint64_t line, uint64_t column)
{
    if (sum->kept < HOG_TEXT_ERRORS_KEPT) {
        hog_text_error *e = &sum->errors[sum->kept++];
        e->line = line;
        e->column = (uint32_t)HOG_MIN(column, (uint64_t)UINT32_MAX);
        snprintf(e->what, sizeof(e->what), "%s", CUT_LINE);
    }
    sum->skipped++;
}

/* The chunks' size and how many are out at once, from the quarter of
 * hog_read_params.mem_limit that reading may hold: each chunk out costs
 * its bytes, and each of its two pieces parsed rows of at most about twice
 * as many (numbers of a few characters become 8 bytes, in arrays grown by
 * doubling). At least HEAD_BYTES, which the first line of CSV must fit. */
static void pipeline_size(const hog_read_params *p, size_t *chunk, unsigned *depth)
{
    const uint64_t budget = (p->mem_limit ? p->mem_limit : hog_mem_usable() / 2) / 4;
    size_t c = CHUNK_BYTES;
    unsigned d = DEPTH;
    while (c > HEAD_BYTES && (uint64_t)d * 5 * c > budget)
        c /= 2;
    while (d > 4 && (uint64_t)d * 5 * c > budget)
        d--;
    *chunk = c;
    *depth = d;
}

int hog_text_stream(const char *path, const hog_read_params *p, hog_builder *b, hog_text_summary *sum,
                    char *err, size_t err_len)
{
    memset(sum, 0, sizeof(*sum));
    /* The reader writes its later errors (a corrupt stream found mid-file)
     * into the buffer it was opened with, from the producer thread: give it
     * one of the pipeline's own, copied out at the end. */
    pipeline *pl = hog_calloc(1, sizeof(*pl));
    if (!pl)
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    hog_reader *reader;
    size_t chunk;
    pipeline_size(p, &chunk, &pl->depth);
    pl->ring_len = 2 * pl->depth;
    const int eager = hog_builder_eager(b);
    int rc = hog_reader_open_with(path, chunk, pl->depth, eager ? HOG_READER_EAGER : 0, &reader, pl->read_err,
                                  sizeof(pl->read_err));
    if (rc < 0) {
        hog_fail(rc, err, err_len, "%s", pl->read_err);
        hog_free(pl);
        return rc;
    }
    hog_reader_set_stop(reader, hog_builder_stop_fd(b)); /* before the first read, which may wait on a stream */

    /* The plan reads the header and the first lines from the first chunk,
     * which then goes to the producer like any other: the input is read
     * once, so standard input or a pipe serves as well as a file. */
    hog_text_plan plan;
    const char *first = NULL;
    size_t first_len = 0;
    int got = hog_reader_next(reader, &first, &first_len);
    rc = got < 0 ? hog_fail(got, err, err_len, "%s", pl->read_err[0] ? pl->read_err : hog_strerror(got))
                 : hog_text_plan_make(path, p, got ? first : "", got ? HOG_MIN(first_len, (size_t)HEAD_BYTES) : 0,
                                      &plan, err, err_len);
    /* A first line that does not end in the head: the plan saw a part of
     * it, which settles a libsvm or VW file's format and base well enough,
     * but not a CSV file's columns or header. */
    if (rc == 0 && got > 0 && first_len > HEAD_BYTES && !memchr(first, '\n', HEAD_BYTES)) {
        if (plan.max_line < HEAD_BYTES)
            rc = hog_fail(HOG_EFORMAT, err, err_len, "%s:1: a line longer than %llu bytes (hog_read_params.max_line)",
                          path, (unsigned long long)plan.max_line);
        else if (plan.format == HOG_FORMAT_CSV)
            rc = hog_fail(HOG_EFORMAT, err, err_len,
                          "%s:1: a line longer than %u bytes, the most the first line of CSV may hold (it settles "
                          "the columns)", path, HEAD_BYTES);
        if (rc < 0)
            hog_text_plan_free(&plan);
    }
    if (rc < 0) {
        hog_reader_close(reader);
        hog_free(pl);
        return rc;
    }
    if (got > 0) {
        pl->first = first;
        pl->first_len = first_len;
        pl->held = 1;
        pl->position = hog_reader_position(reader);
    }
    sum->format = plan.format;
    sum->index_base = plan.format == HOG_FORMAT_LIBSVM ? plan.index_base : 0;
    hog_builder_set_one_based(b, sum->index_base == 1); /* known from the first block on */
    hog_builder_set_index_bound(b, hog_text_plan_index_bound(&plan));
    hog_builder_set_hash_bits(b, plan.hash_bits);

    unsigned nparse = p->threads ? p->threads : hog_cpus();
    pthread_t *parsers = hog_calloc(nparse, sizeof(pthread_t));
    /* Feature names: a CSV header's numeric columns', from the plan, now;
     * asked for, those made of values (Vowpal Wabbit's strings, a CSV
     * header's categorical columns' "name=value") as they are met, one set
     * per parser thread, merged at the end: no lock per name. */
    const int named = p->feature_names && (plan.format == HOG_FORMAT_VW ||
                                           (plan.format == HOG_FORMAT_CSV && plan.header_lines));
    parser_arg *args = hog_calloc(nparse, sizeof(parser_arg));
    hog_fnames *fnames = named ? hog_calloc(nparse, sizeof(hog_fnames)) : NULL, columns;
    memset(&columns, 0, sizeof(columns));
    int crc = hog_text_plan_fnames(&plan, &columns);
    if (crc == 0)
        crc = hog_builder_add_fnames(b, &columns);
    hog_fnames_free(&columns);
    if (!parsers || !args || (named && !fnames) || crc < 0) {
        hog_free(fnames);
        hog_free(args);
        hog_free(pl);
        hog_free(parsers);
        hog_text_plan_free(&plan);
        hog_reader_close(reader);
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    }
    pthread_mutex_init(&pl->mu, NULL);
    pthread_cond_init(&pl->changed, NULL);
    pl->plan = &plan;
    pl->reader = reader;

    pthread_t producer;
    unsigned started = 0;
    int prc = pthread_create(&producer, NULL, producer_main, pl);
    for (; prc == 0 && started < nparse; started++) {
        args[started] = (parser_arg){pl, fnames ? &fnames[started] : NULL};
        if (pthread_create(&parsers[started], NULL, parser_main, &args[started]) != 0)
            break;
    }
    if (prc != 0 || started == 0) {
        pthread_mutex_lock(&pl->mu);
        pl->stop = 1;
        pthread_cond_broadcast(&pl->changed);
        pthread_mutex_unlock(&pl->mu);
        rc = hog_fail(prc ? -prc : -EAGAIN, err, err_len, "%s: cannot start the parser threads", path);
    }

    uint64_t line0 = plan.header_lines; /* lines before the current piece */
    const uint64_t file_bytes = hog_reader_file_bytes(reader);
    const int as_they_come = eager && hog_reader_stream(reader);
    int held = 0; /* as_they_come: rows added that the builder has not handed on */
    pthread_mutex_lock(&pl->mu);
    while (rc == 0) {
        piece *pc = &pl->ring[pl->consumed % pl->ring_len];
        while (!pl->stop && !(pl->consumed < pl->produced && pc->done) &&
               !(pl->eof && pl->consumed == pl->produced)) {
            if (held && pl->consumed == pl->produced) {
                /* All the stream had ready is added: its rows go on now,
                 * not when more come. */
                held = 0;
                pthread_mutex_unlock(&pl->mu);
                rc = hog_builder_idle(b);
                pthread_mutex_lock(&pl->mu);
                if (rc < 0)
                    break;
                continue;
            }
            pthread_cond_wait(&pl->changed, &pl->mu);
        }
        if (rc < 0) { /* the builder's callback */
            if (rc != -ECANCELED)
                hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
            break;
        }
        if (pl->stop) {
            rc = pl->read_rc;
            if (rc < 0 && pl->read_err[0])
                hog_fail(rc, err, err_len, "%s", pl->read_err);
            else if (rc < 0)
                hog_fail(rc, err, err_len, "%s: %s", path, hog_strerror(rc));
            break;
        }
        if (pl->consumed == pl->produced) /* eof: everything consumed */
            break;
        pthread_mutex_unlock(&pl->mu);

        if (pc->too_long)
            rc = hog_fail(HOG_EFORMAT, err, err_len,
                          "%s:%llu: a line longer than %llu bytes (hog_read_params.max_line)", path,
                          (unsigned long long)(line0 + 1), (unsigned long long)plan.max_line);
        else if (pc->cut && pl->read_stopped) /* set before this piece was queued */
            cut_by_stop(path, line0 + 1, pc->cut);
        else if (pc->cut && !plan.skip_errors)
            rc = hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu:%llu: %s", path, (unsigned long long)(line0 + 1),
                          (unsigned long long)pc->cut + 1, CUT_LINE);
        else if (pc->cut)
            cut_skipped(sum, line0 + 1, pc->cut + 1);
        else if (pc->rc == HOG_EFORMAT && pc->err.column == 0) /* the whole line */
            rc = hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu: %s", path, (unsigned long long)(line0 + pc->err.line),
                          pc->err.what);
        else if (pc->rc == HOG_EFORMAT)
            rc = hog_fail(HOG_EFORMAT, err, err_len, "%s:%llu:%u: %s", path,
                          (unsigned long long)(line0 + pc->err.line), pc->err.column, pc->err.what);
        else if (pc->rc < 0)
            rc = hog_fail(pc->rc, err, err_len, "%s: %s", path, hog_strerror(pc->rc));
        else {
            hog_builder_set_position(b, file_bytes ? (double)pc->position / (double)file_bytes : 1.0);
            hog_builder_set_lines(b, line0, pc->rows.lines - pc->rows.rows);
            rc = hog_builder_add_rows(b, &pc->rows);
            held |= as_they_come && pc->rows.rows > 0;
            if (rc == HOG_ELABEL)
                hog_fail(rc, err, err_len, "%s: more than %u distinct class labels before line %llu: a column of "
                         "labels that are not numbers holds class names", path, HOG_MAX_LABEL_NAMES,
                         (unsigned long long)(line0 + pc->rows.lines + 1));
            else if (rc < 0 && rc != -ECANCELED) /* writing the output (a full disk), or memory */
                hog_fail(rc, err, err_len, "%s: %s", hog_builder_output(b) ? hog_builder_output(b) : path,
                         hog_strerror(rc));
        }
        if (rc == 0) {
            for (uint32_t i = 0; i < pc->rows.kept && sum->kept < HOG_TEXT_ERRORS_KEPT; i++) {
                hog_text_error *e = &sum->errors[sum->kept++];
                *e = pc->rows.errors[i];
                e->line += line0;
            }
            sum->skipped += pc->rows.skipped;
            line0 += pc->cut ? 1 : pc->rows.lines;
        }
        hog_free(pc->owned);
        pc->owned = NULL;

        pthread_mutex_lock(&pl->mu);
        if (pc->chunk)
            pl->giveback[pl->ngiveback++] = pc->chunk;
        pl->consumed++;
        if (rc < 0)
            pl->stop = 1;
        pthread_cond_broadcast(&pl->changed);
    }
    if (rc < 0)
        pl->stop = 1;
    pthread_cond_broadcast(&pl->changed);
    pthread_mutex_unlock(&pl->mu);

    for (unsigned i = 0; i < started; i++)
        pthread_join(parsers[i], NULL);
    if (prc == 0) {
        /* Pieces parsed but never consumed still hold chunks: hand them back
         * so the producer can finish. */
        pthread_mutex_lock(&pl->mu);
        while (pl->consumed < pl->produced) {
            piece *pc = &pl->ring[pl->consumed % pl->ring_len];
            if (pc->chunk)
                pl->giveback[pl->ngiveback++] = pc->chunk;
            hog_free(pc->owned);
            pc->owned = NULL;
            pl->consumed++;
        }
        pthread_cond_broadcast(&pl->changed);
        pthread_mutex_unlock(&pl->mu);
        pthread_join(producer, NULL);
    }
    sum->lines = line0;
    sum->stopped = hog_reader_stopped(reader); /* the producer is done with it */
    if (sum->stopped)
        hog_builder_set_stopped(b);
    for (unsigned i = 0; i < nparse && fnames; i++) {
        if (rc == 0 && (rc = hog_builder_add_fnames(b, &fnames[i])) < 0)
            hog_fail(rc, err, err_len, "%s: out of memory", path);
        hog_fnames_free(&fnames[i]);
    }
    hog_free(fnames);
    hog_free(args);
    for (unsigned i = 0; i < RING; i++)
        hog_rows_free(&pl->ring[i].rows);
    pthread_cond_destroy(&pl->changed);
    pthread_mutex_destroy(&pl->mu);
    hog_free(pl);
    hog_free(parsers);
    hog_text_plan_free(&plan);
    hog_reader_close(reader);
    return rc;
}

/* ===================================================================== *
 *  Text into a builder, as the data set calls and the feed read it
 * ===================================================================== */

/* Text reading that open, convert and the feed share. */
int hog_text_read(const char *path, const hog_read_params *p, hog_builder *b, hog_format *fmt,
                  uint64_t *skipped, char **report, char *err, size_t len)
{
    hog_text_summary sum;
    *report = NULL;
    int rc = hog_text_stream(path, p, b, &sum, err, len);
    *fmt = sum.format;
    if (rc == 0 && hog_builder_rows(b) == 0)
        rc = hog_fail(HOG_EEMPTY, err, len, "%s: no data rows%s", path,
                      sum.stopped   ? " before the read was stopped"
                      : sum.skipped ? " (every line was malformed and skipped)"
                                    : "");
    *skipped = sum.skipped;
    if (rc < 0 || sum.kept == 0)
        return rc;
    /* "path:line:column: what\n" per error: numbers and separators take at most 40 bytes */
    size_t cap = sum.kept * (strlen(path) + sizeof(sum.errors[0].what) + 40) + 1, used = 0;
    char *r = hog_malloc(cap);
    if (!r)
        return hog_fail(-ENOMEM, err, len, "%s: out of memory", path);
    r[0] = '\0';
    for (uint32_t i = 0; i < sum.kept; i++)
        used += (size_t)snprintf(r + used, cap - used, "%s:%llu:%u: %s\n", path,
                                 (unsigned long long)sum.errors[i].line, sum.errors[i].column,
                                 sum.errors[i].what);
    *report = r;
    return 0;
}
