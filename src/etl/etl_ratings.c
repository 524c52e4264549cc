/* etl_ratings.c: rating triples for matrix factorisation: the ratings object and its text reader, on the shared chunked reader. */
/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etl.h"

#define MAX_NAME 4096u

/* ===================================================================== *
 *  The ratings object
 * ===================================================================== */
void hog_ratings_close(hog_ratings *r)
{
    if (!r)
        return;
    hog_idmap_free(&r->users);
    hog_idmap_free(&r->items);
    hog_free(r->own);
    if (r->map)
        munmap(r->map, r->map_len);
    hog_free(r);
}

void hog_ratings_get_info(const hog_ratings *r, hog_ratings_info *info)
{
    *info = r->info;
}

void hog_ratings_get(const hog_ratings *r, uint64_t i, uint32_t *user, uint32_t *item, float *rating)
{
    const hog_mf_triple *t = &r->t[i];
    if (user)
        *user = t->user;
    if (item)
        *item = t->item;
    if (rating)
        *rating = t->rating;
}

const char *hog_ratings_user_name(const hog_ratings *r, uint32_t u)
{
    return hog_idmap_name(&r->users, u);
}

const char *hog_ratings_item_name(const hog_ratings *r, uint32_t i)
{
    return hog_idmap_name(&r->items, i);
}

/* Mean and range of the ratings, once the triples are in place. */
static void ratings_summary(hog_ratings *r)
{
    hog_ratings_info *in = &r->info;
    in->users = r->users.n;
    in->items = r->items.n;
    in->mean = in->min = in->max = NAN;
    if (!in->has_ratings)
        return;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = 0; i < in->ratings; i++) {
        double v = r->t[i].rating;
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    in->mean = sum / (double)in->ratings;
    in->min = lo;
    in->max = hi;
}

/* ===================================================================== *
 *  Text
 *
 *  The text comes from the chunked reader (etl_uring.c): a plain file, gzip,
 *  zstd or a pipe, in chunks of plain bytes. A line cut by a chunk's end is
 *  carried over: its start is copied out and the rest of it appended from
 *  the next chunk, so every line is parsed whole, from one buffer, and its
 *  columns count from its own start. A line is carried up to
 *  HOG_DEFAULT_MAX_LINE bytes; a longer one is an error.
 * ===================================================================== */
/* A rating line parsed, its names not yet looked up (they point into the
 * chunk being parsed). */
typedef struct rating_line {
    const char *line, *eol; /* for a message */
    const char *name[2];    /* user, item */
    size_t len[2];
    uint64_t hash[2];
    uint64_t lineno;
    float rating;
} rating_line;

/* Lines parsed ahead of their lookups: about the misses a core overlaps. */
#define RATINGS_AHEAD 16u

typedef struct ratings_text {
    hog_ratings *r;
    const char *path;
    char *err;
    size_t err_len;
    hog_ratings_read *rr; /* how to read (a malformed line skipped, and what was), or NULL: the defaults */
    int allow_pairs;
    int shape;        /* 1: triples, 0: pairs; fixed by the first data line (-1 before) */
    int header_open;  /* no data line yet: a first line without a numeric rating is a header */
    uint64_t lineno;  /* 1-based, of the line being parsed */
    uint64_t n;       /* triples so far */
    size_t cap;       /* triples allocated in r->own */
    /* Lines parsed whose names are not looked up yet, in order: their
     * table slots are fetched while the lines before them are interned. */
    rating_line ahead[RATINGS_AHEAD + 1];
    uint32_t first, held;
} ratings_text;

static int is_field_end(char ch)
{
    return ch == ' ' || ch == '\t' || ch == ',' || ch == '\n' || ch == '\r';
}

/* HOG_EFORMAT with "path:line:col: expected WHAT, found 'TOKEN'"; the line
 * starts at `line`, the offending token at `at`. */
static int text_error(const ratings_text *c, const char *line, const char *at, const char *end, const char *what)
{
    /* The offending token: up to the next separator, or the separator alone. */
    const char *tok_end = at;
    if (at < end && (*at == ' ' || *at == '\t' || *at == ','))
        tok_end++;
    else
        while (tok_end < end && tok_end - at < 32 && !is_field_end(*tok_end))
            tok_end++;
    if (at >= end || *at == '\n' || *at == '\r')
        return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%llu: expected %s, found the end of the line",
                        c->path, (unsigned long long)c->lineno, (unsigned long long)(at - line) + 1, what);
    return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%llu: expected %s, found '%.*s'", c->path,
                    (unsigned long long)c->lineno, (unsigned long long)(at - line) + 1, what,
                    (int)(tok_end - at), at);
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* Skips a separator: blanks, at most one comma, blanks. Returns the next
 * field's start, or NULL if there is no separator before it. */
static const char *skip_separator(const char *s, const char *end)
{
    const char *start = s;
    while (s < end && is_blank(*s))
        s++;
    if (s < end && *s == ',') {
        s++;
        while (s < end && is_blank(*s))
            s++;
    }
    return s > start ? s : NULL;
}

/* At a line's end (after trailing blanks): '\n', "\r\n", or the end of the
 * data. */
static int at_line_end(const char *s, const char *end)
{
    return s >= end || *s == '\n' || (*s == '\r' && (s + 1 >= end || s[1] == '\n'));
}

/* Looks up a parsed line's names and appends its triple. */
static int commit_line(ratings_text *c, const rating_line *l)
{
    hog_ratings *r = c->r;
    if (c->n == c->cap) {
        void *own = r->own;
        int rc = hog_array_grow(&own, &c->cap, (size_t)c->n + 1, sizeof(hog_mf_triple), 4096);
        r->own = own;
        if (rc < 0)
            return hog_fail(rc, c->err, c->err_len, "%s: out of memory", c->path);
    }
    hog_mf_triple *t = &r->own[c->n];
    int rc = hog_idmap_intern_hashed(&r->users, l->name[0], l->len[0], l->hash[0], &t->user);
    if (rc == 0)
        rc = hog_idmap_intern_hashed(&r->items, l->name[1], l->len[1], l->hash[1], &t->item);
    if (rc == -ENOMEM)
        return hog_fail(rc, c->err, c->err_len, "%s: out of memory", c->path);
    if (rc < 0) {
        const uint64_t now = c->lineno;
        c->lineno = l->lineno; /* the message names the line's own number */
        rc = text_error(c, l->line, l->name[0], l->eol, "fewer than 2^32 - 2 distinct names");
        c->lineno = now;
        return rc;
    }
    t->rating = l->rating;
    c->n++;
    return 0;
}

/* Commits the lines held, in order. */
static int commit_held(ratings_text *c)
{
    for (; c->held; c->held--, c->first = (c->first + 1) % (RATINGS_AHEAD + 1)) {
        int rc = commit_line(c, &c->ahead[c->first]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Parses one line, line[0..eol) without its '\n'. A rating line is held
 * (its names' table slots fetched) when `hold`, the oldest held one then
 * committed once more than RATINGS_AHEAD are; else it is committed at
 * once. */
static int parse_line(ratings_text *c, const char *line, const char *eol, int hold)
{
    c->lineno++;
    const char *p = line;
    while (p < eol && is_blank(*p))
        p++;
    if (p == eol || *p == '#' || (*p == '\r' && p + 1 == eol))
        return 0;
    /* user SEP item [SEP rating [SEP ignored...]]; the rating may be
     * absent only in a pairs file. */
    const char *f[3];
    size_t flen[3];
    int has = 1;
    const char *q = p;
    for (int k = 0; k < 3; k++) {
        f[k] = q;
        while (q < eol && !is_field_end(*q))
            q++;
        flen[k] = (size_t)(q - f[k]);
        if (flen[k] == 0)
            return text_error(c, line, q, eol, k == 0 ? "a user" : k == 1 ? "an item" : "a rating");
        if (k == 2)
            break;
        const char *after = skip_separator(q, eol);
        if (after && !at_line_end(after, eol)) {
            q = after;
            continue;
        }
        if (k == 1 && c->allow_pairs && c->shape != 1 && at_line_end(after ? after : q, eol)) {
            has = 0;
            break;
        }
        return text_error(c, line, after ? after : q, eol,
                          k == 0 ? "a separator and an item" : "a separator and a rating");
    }
    double v = NAN;
    if (has) {
        const char *num_end = hog_parse_double(f[2], f[2] + flen[2], &v);
        if (!num_end || num_end != f[2] + flen[2] || !isfinite(v)) {
            if (c->header_open) { /* a header line: its third field is not a number */
                c->header_open = 0;
                return 0;
            }
            return text_error(c, line, f[2], eol, "a finite number (the rating)");
        }
        if (fabs(v) > (double)FLT_MAX) /* it would be stored as infinite */
            return text_error(c, line, f[2], eol, "a rating within the float range (|rating| <= 3.4e38)");
        /* Fields after the third (a timestamp) are ignored; a separator must come first. */
        q = f[2] + flen[2];
        if (!at_line_end(q, eol) && !skip_separator(q, eol))
            return text_error(c, line, q, eol, "a separator or the end of the line");
    }
    c->header_open = 0;
    if (c->shape < 0)
        c->shape = has;
    else if (c->shape != has)
        return text_error(c, line, has ? f[2] : q, eol,
                          c->shape ? "a rating (earlier lines have one)"
                                   : "the end of the line (earlier lines have no rating)");
    for (int k = 0; k < 2; k++) {
        if (flen[k] > MAX_NAME)
            return text_error(c, line, f[k], eol, "a name of at most 4096 bytes");
        const char *nul = memchr(f[k], '\0', flen[k]);
        if (nul)
            return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu:%llu: expected text, found a NUL byte",
                            c->path, (unsigned long long)c->lineno, (unsigned long long)(nul - line) + 1);
    }
    rating_line l = {.line = line, .eol = eol, .name = {f[0], f[1]}, .len = {flen[0], flen[1]},
                     .hash = {hog_idmap_hash(f[0], flen[0]), hog_idmap_hash(f[1], flen[1])}, .lineno = c->lineno,
                     .rating = (float)v};
    if (!hold)
        return commit_line(c, &l);
    hog_idmap_prefetch(&c->r->users, l.hash[0]);
    hog_idmap_prefetch(&c->r->items, l.hash[1]);
    c->ahead[(c->first + c->held++) % (RATINGS_AHEAD + 1)] = l;
    /* Halfway to its lookup, a line's slots have come: their names'
     * offsets are asked for next. */
    if (c->held > RATINGS_AHEAD / 2) {
        const rating_line *mid = &c->ahead[(c->first + c->held - 1 - RATINGS_AHEAD / 2) % (RATINGS_AHEAD + 1)];
        hog_idmap_prefetch_name(&c->r->users, mid->hash[0]);
        hog_idmap_prefetch_name(&c->r->items, mid->hash[1]);
    }
    if (c->held <= RATINGS_AHEAD)
        return 0;
    /* The oldest line's error is its own: this one stays held. */
    int rc = commit_line(c, &c->ahead[c->first]);
    c->first = (c->first + 1) % (RATINGS_AHEAD + 1);
    c->held--;
    return rc;
}

/* The start of a line cut by a chunk's end. */
typedef struct carry_line {
    char *p;
    size_t len, cap;
} carry_line;

static int carry_append(const ratings_text *c, carry_line *l, const char *s, size_t n)
{
    /* A line that never ends (/dev/zero) is refused, not held in memory. */
    if (l->len + n > HOG_DEFAULT_MAX_LINE)
        return hog_fail(HOG_EFORMAT, c->err, c->err_len, "%s:%llu: a line longer than %llu bytes", c->path,
                        (unsigned long long)c->lineno + 1, HOG_DEFAULT_MAX_LINE);
    void *p = l->p;
    int rc = hog_array_grow(&p, &l->cap, l->len + n, 1, 4096);
    l->p = p;
    if (rc < 0)
        return hog_fail(rc, c->err, c->err_len, "%s: out of memory", c->path);
    memcpy(l->p + l->len, s, n);
    l->len += n;
    return 0;
}

/* A line's parse: a malformed line is counted and its message kept
 * (the first HOG_RATINGS_KEPT) where the read skips them. */
static int parse_or_skip(ratings_text *c, const char *line, const char *eol, int hold)
{
    int rc = parse_line(c, line, eol, hold);
    hog_ratings_read *rr = c->rr;
    if (rc != HOG_EFORMAT || !rr || !rr->skip)
        return rc;
    if (rr->skipped++ < HOG_RATINGS_KEPT && c->err) {
        const size_t used = strlen(rr->first);
        snprintf(rr->first + used, sizeof(rr->first) - used, "%s\n", c->err);
    }
    if (c->err && c->err_len)
        c->err[0] = '\0';
    return 0;
}

/* Parses the chunk data[0..len): the end of the carried line, the whole
 * lines, and the start of a line the next chunk goes on with. The chunk's
 * lines are held a few at a time (parse_line), and all committed before
 * it returns: they point into it. */
static int parse_chunk(ratings_text *c, carry_line *carry, const char *data, size_t len)
{
    const char *s = data, *end = data + len;
    int rc = 0;
    while (s < end && rc == 0) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) {
            rc = carry_append(c, carry, s, (size_t)(end - s));
            break;
        }
        if (carry->len) { /* the first line: nothing is held before it */
            rc = carry_append(c, carry, s, (size_t)(nl - s));
            if (rc == 0)
                rc = parse_or_skip(c, carry->p, carry->p + carry->len, 0);
            carry->len = 0;
        } else {
            rc = parse_or_skip(c, s, nl, 1);
        }
        s = nl + 1;
    }
    if (rc < 0) { /* the read ends: the lines held are not the model's */
        c->held = 0;
        return rc;
    }
    return commit_held(c);
}

/* Hands fn the ratings parsed since the last batch, as r, and starts the
 * next batch (hog_ratings_each). */
static int hand_batch(hog_ratings *r, ratings_text *c, hog_ratings_fn fn, void *ctx, uint64_t *total)
{
    r->t = r->own;
    r->info.ratings = c->n;
    r->info.has_ratings = c->shape != 0;
    r->info.users = r->users.n;
    r->info.items = r->items.n;
    const int rc = fn(ctx, r);
    *total += c->n;
    c->n = 0;
    return rc;
}

/* Reads the text at path into r, chunk by chunk; with fn, eagerly (a
 * stream's chunk is what it had ready), handing fn each chunk's ratings as
 * they are parsed and keeping none (hog_ratings_each). */
static int read_text(hog_ratings *r, const char *path, int allow_pairs, size_t chunk_bytes, hog_ratings_read *rr,
                     hog_ratings_fn fn, void *ctx, char *err, size_t err_len)
{
    hog_reader *rd;
    int rc = hog_reader_open_with(path, chunk_bytes, 0, fn ? HOG_READER_EAGER : 0, &rd, err, err_len);
    if (rc < 0)
        return rc;
    hog_reader_set_stop(rd, rr ? rr->stop_fd : -1);
    ratings_text c = {.r = r, .path = path, .err = err, .err_len = err_len, .rr = rr, .allow_pairs = allow_pairs,
                      .shape = -1, .header_open = 1};
    carry_line carry = {0};
    const char *data;
    size_t len;
    uint64_t chunks = 0, handed = 0;
    int got;
    while ((got = hog_reader_next(rd, &data, &len)) == 1) {
        if (chunks++ == 0 && len >= 8 && memcmp(data, HOG_HGR_MAGIC, 8) == 0)
            rc = hog_fail(-EINVAL, err, err_len,
                          "%s: a binary ratings file (.hgr) is mapped, so it must be a plain file (not compressed, "
                          "not a pipe)", path);
        else
            rc = parse_chunk(&c, &carry, data, len);
        hog_reader_release(rd, data);
        if (rc == 0 && fn && c.n)
            rc = hand_batch(r, &c, fn, ctx, &handed);
        if (rc < 0)
            break;
    }
    if (got < 0)
        rc = got; /* the reader wrote err: a read error, a corrupt compressed stream */
    if (rc == 0 && carry.len && hog_reader_stopped(rd)) /* cut by the stop, not the input's end */
        hog_log(HOG_LOG_WARN, "%s:%llu: the read was stopped inside this line: its first %llu bytes are left out",
                path, (unsigned long long)c.lineno + 1, (unsigned long long)carry.len);
    else if (rc == 0 && carry.len) /* a last line without a newline */
        rc = parse_or_skip(&c, carry.p, carry.p + carry.len, 0);
    if (rc == 0 && fn && c.n)
        rc = hand_batch(r, &c, fn, ctx, &handed);
    /* What the input held: the file's size, or what came down the pipe. */
    r->info.file_bytes = hog_reader_position(rd);
    hog_free(carry.p);
    hog_reader_close(rd);
    if (rc < 0)
        return rc;
    r->t = r->own;
    r->info.ratings = fn ? handed : c.n;
    r->info.has_ratings = c.shape != 0;
    if (r->info.ratings == 0)
        return hog_fail(HOG_EEMPTY, err, err_len, "%s: no ratings%s", path,
                        rr && rr->skipped ? " (every line was malformed and skipped)" : "");
    return 0;
}

/* ===================================================================== *
 *  Opening
 * ===================================================================== */

/* A descriptor open on path when it is a binary ratings file (a regular
 * file with the .hgr magic), its size in *size; else -1. Anything else is
 * the text reader's to open and to report on (missing, a folder): a stream
 * is not opened here, as a named pipe's writer would see a reader go. */
static int open_binary(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char magic[8];
    if (fstat(fd, &st) == 0 && pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
        memcmp(magic, HOG_HGR_MAGIC, sizeof(magic)) == 0) {
        *size = (uint64_t)st.st_size;
        return fd;
    }
    close(fd);
    return -1;
}

int hog_ratings_open_in_chunks(const char *path, int allow_pairs, size_t chunk_bytes, hog_ratings **out,
                               char *err, size_t err_len)
{
    *out = NULL;
    hog_ratings *r = hog_calloc(1, sizeof(*r));
    if (!r)
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    uint64_t size = 0;
    int fd = open_binary(path, &size), rc;
    if (fd >= 0) {
        r->info.file_bytes = size;
        rc = hog_hgr_open(r, path, fd, size, err, err_len);
        close(fd);
    } else {
        rc = read_text(r, path, allow_pairs, chunk_bytes, NULL, NULL, NULL, err, err_len);
    }
    if (rc < 0) {
        hog_ratings_close(r);
        return rc;
    }
    ratings_summary(r);
    if (!r->info.binary)
        r->info.fingerprint = hog_ratings_fingerprint(r);
    *out = r;
    return 0;
}

int hog_ratings_open(const char *path, int allow_pairs, hog_ratings **out, char *err, size_t err_len)
{
    *out = NULL;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    return hog_ratings_open_in_chunks(path, allow_pairs, 0, out, err, err_len);
}

int hog_ratings_each(const char *path, int allow_pairs, hog_ratings_fn fn, void *ctx, char *err, size_t err_len)
{
    hog_ratings_read rr = {.allow_pairs = allow_pairs, .stop_fd = -1};
    return hog_ratings_each_read(path, &rr, fn, ctx, err, err_len);
}

int hog_ratings_each_read(const char *path, hog_ratings_read *rr, hog_ratings_fn fn, void *ctx, char *err,
                          size_t err_len)
{
    const int allow_pairs = rr->allow_pairs;
    if (hog_cpu_check(err, err_len) < 0)
        return HOG_ECPU;
    if (!fn)
        return hog_fail(HOG_EPARAM, err, err_len, "hog_ratings_each: no function to hand the ratings to");
    hog_ratings *r;
    uint64_t size = 0;
    int fd = open_binary(path, &size), rc;
    if (fd >= 0) { /* a .hgr: mapped whole, one batch */
        close(fd);
        if ((rc = hog_ratings_open_in_chunks(path, allow_pairs, 0, &r, err, err_len)) < 0)
            return rc;
        rc = fn(ctx, r);
        hog_ratings_close(r);
        return rc;
    }
    if (!(r = hog_calloc(1, sizeof(*r))))
        return hog_fail(-ENOMEM, err, err_len, "%s: out of memory", path);
    rc = read_text(r, path, allow_pairs, 0, rr, fn, ctx, err, err_len);
    hog_ratings_close(r);
    return rc;
}
